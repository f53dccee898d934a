/* Bounding volume hierarchy over the triangles of one mesh, with swept boxes.
 *
 * A hy_bvh keeps what the mesh *is* (its triangles, which triangle owns
 * which vertex and edge) apart from what changes per step (the boxes). Each
 * step either refits the boxes bottom-up over the swept positions [x0, x1]
 * or rebuilds the tree top-down (binned SAH) when refitting has let its
 * quality decay; hy_bvh_update decides.
 *
 * Boxes: a vertex's box bounds its positions at t=0 and t=1 (the segment it
 * sweeps under linear motion), grown by thickness/2 on every side; a
 * triangle's box is the union of its vertices' boxes; a node's the union of
 * its children's. So two primitives whose swept boxes are disjoint stay more
 * than `thickness` apart over the whole step. Box arithmetic is exact (min
 * and max of the inputs) except the thickness growth, which is rounded
 * outward.
 *
 * Feature ownership: every vertex and every edge of the mesh is owned by
 * exactly one of the triangles containing it (the first in triangle order).
 * Traversal (collision/traverse.h) emits a vertex-face or edge-edge pair only
 * from the triangle pair made of the owners, so each feature pair comes out
 * once, not once per triangle pair that contains it.
 *
 * Threads: build, refit and update may use a hy_pool (NULL = serial); the
 * result does not depend on the pool or its size. A hy_bvh may be read by
 * many threads at once (traversal) when no build or refit runs. */
#ifndef HY_COLLISION_BVH_H
#define HY_COLLISION_BVH_H

#include <stdint.h>

#include "hyphys/hyphys.h"
#include "sched/pool.h"

typedef struct hy_aabb {
    double lo[3], hi[3];
} hy_aabb;

static inline int hy_aabb_overlap(const hy_aabb* a, const hy_aabb* b) {
    return a->lo[0] <= b->hi[0] && b->lo[0] <= a->hi[0] && a->lo[1] <= b->hi[1] && b->lo[1] <= a->hi[1] &&
           a->lo[2] <= b->hi[2] && b->lo[2] <= a->hi[2];
}

static inline void hy_aabb_union(hy_aabb* r, const hy_aabb* a, const hy_aabb* b) {
    for (int k = 0; k < 3; k++) {
        r->lo[k] = a->lo[k] < b->lo[k] ? a->lo[k] : b->lo[k];
        r->hi[k] = a->hi[k] > b->hi[k] ? a->hi[k] : b->hi[k];
    }
}

/* A moving box: one box at t=0 and one at t=1. Every point that moves
 * linearly from inside lo0..hi0 to inside lo1..hi1 lies, at time t, inside
 * the box whose bounds interpolate linearly between the two: so two moving
 * boxes can only meet at some t where those interpolated boxes overlap.
 * Unlike the swept box (the union of both ends), this compares the two
 * sides at the same time: features that move together at speed, which have
 * large overlapping swept boxes, stay apart unless they come close. */
typedef struct hy_mbox {
    double lo0[3], hi0[3], lo1[3], hi1[3];
} hy_mbox;

/* 1 when the interpolated boxes of a and b overlap at some t in [0, 1]
 * (conservative: the rounded crossing times are compared with a margin).
 * Per axis and side the gap is linear in t, so each of the 6 overlap
 * conditions holds on a sub-interval of [0, 1]; they meet when the latest
 * start is before the earliest end. The sign of a rounded difference is
 * exact, so the all-or-nothing cases are decided exactly; a crossing time
 * a / (a - b) is within 5 ulps of the exact one, well inside 2^-48. NaN
 * (from overflowing inputs) keeps the pair. */
static inline int hy_mbox_overlap(const hy_mbox* a, const hy_mbox* b) {
    double lo = 0.0, hi = 1.0;
    for (int k = 0; k < 3; k++) {
        double g0 = b->hi0[k] - a->lo0[k], g1 = b->hi1[k] - a->lo1[k];
        double h0 = a->hi0[k] - b->lo0[k], h1 = a->hi1[k] - b->lo1[k];
        if ((g0 < 0 && g1 < 0) || (h0 < 0 && h1 < 0)) return 0;
        if (g0 < 0 || g1 < 0) {
            double t = g0 / (g0 - g1);
            if (g0 < 0) {
                if (t > lo) lo = t;
            } else if (t < hi) {
                hi = t;
            }
        }
        if (h0 < 0 || h1 < 0) {
            double t = h0 / (h0 - h1);
            if (h0 < 0) {
                if (t > lo) lo = t;
            } else if (t < hi) {
                hi = t;
            }
        }
    }
    return lo <= hi + 0x1p-48;
}

static inline void hy_mbox_union(hy_mbox* r, const hy_mbox* a, const hy_mbox* b) {
    for (int k = 0; k < 3; k++) {
        r->lo0[k] = a->lo0[k] < b->lo0[k] ? a->lo0[k] : b->lo0[k];
        r->hi0[k] = a->hi0[k] > b->hi0[k] ? a->hi0[k] : b->hi0[k];
        r->lo1[k] = a->lo1[k] < b->lo1[k] ? a->lo1[k] : b->lo1[k];
        r->hi1[k] = a->hi1[k] > b->hi1[k] ? a->hi1[k] : b->hi1[k];
    }
}

/* The swept box of a moving box (the union of its two ends). */
static inline void hy_mbox_swept(const hy_mbox* a, hy_aabb* r) {
    for (int k = 0; k < 3; k++) {
        r->lo[k] = a->lo0[k] < a->lo1[k] ? a->lo0[k] : a->lo1[k];
        r->hi[k] = a->hi0[k] > a->hi1[k] ? a->hi0[k] : a->hi1[k];
    }
}

/* Half the surface area (the SAH only needs ratios). */
static inline double hy_aabb_half_area(const hy_aabb* a) {
    double dx = a->hi[0] - a->lo[0], dy = a->hi[1] - a->lo[1], dz = a->hi[2] - a->lo[2];
    return dx * dy + dy * dz + dz * dx;
}

/* A node: inner nodes have count == 0 and children first, first + 1 (both
 * at larger indices than the parent, so a reverse sweep is bottom-up);
 * leaves have count >= 1 triangles, bvh->order[first .. first + count). */
typedef struct hy_bvh_node {
    hy_aabb box;
    int32_t first;
    int32_t count;
} hy_bvh_node;

/* Ownership bits in hy_bvh.owned[t]: vertex k of triangle t (bit k) and edge
 * k = (t[k], t[(k+1)%3]) (bit 3 + k). */
#define HY_BVH_OWN_VERTEX(k) (1u << (k))
#define HY_BVH_OWN_EDGE(k) (1u << (3 + (k)))

/* Continuous normal cone of a node: every normal its triangles take during
 * the step lies within `angle` radians of the unit `axis` (angle >= pi/2
 * or NaN-free failure are stored as HY_BVH_CONE_FAIL). */
typedef struct hy_bvh_cone {
    double axis[3];
    double angle;
} hy_bvh_cone;
#define HY_BVH_CONE_FAIL 4.0

typedef struct hy_bvh {
    /* topology (fixed after create) */
    int32_t vertex_count;
    int32_t triangle_count;
    int32_t* triangles; /* 3 * triangle_count, copied */
    uint8_t* owned;     /* per triangle, HY_BVH_OWN_* bits */
    int32_t* neighbor;  /* 3 * triangle_count: a triangle across edge k, or -1
                           (enough links to keep edge-connected sets connected) */
    /* tree (rebuilt by hy_bvh_build) */
    hy_bvh_node* nodes;
    int32_t node_count;
    int32_t* order; /* triangle ids in leaf order */
    int leaf_size;  /* most triangles in a leaf */
    int32_t* rank;  /* per triangle: its position in order */
    int32_t* range; /* per node: [range[2n], range[2n+1]) of order */
    uint8_t* connected; /* per node: its triangles form one edge-connected patch */
    /* self-collision culling (per step) */
    hy_bvh_cone* cones;          /* per node */
    hy_bvh_cone* triangle_cones; /* per triangle id */
    uint8_t* self_free; /* per node: 1 = no self collision inside it (see below) */
    int self_cull;      /* 1 (default) = compute self_free; 0 = never cull */
    /* per step */
    hy_aabb* vertex_boxes;   /* per vertex, swept */
    hy_aabb* triangle_boxes; /* per triangle id, swept */
    /* The same as moving boxes (hy_mbox), which traversal tests when
     * `interpolate` is set (the default): per vertex, per triangle id, per
     * node. With `interpolate` 0 traversal tests the swept boxes. */
    hy_mbox* vertex_mboxes;
    hy_mbox* triangle_mboxes;
    hy_mbox* node_mboxes;
    int interpolate;
    double thickness;
    /* Moving frame (off unless `relative` is set before the build): boxes
     * hold x0 and x1 - shift, i.e. the motion seen from a frame that moves
     * by t * shift, where shift is the mid-range of the vertex
     * displacements. Contact within one mesh does not change when every
     * point gets the same extra motion, so self traversal can use these
     * boxes as they are: a mesh that only translates has boxes as small as
     * its deformation, however far it moves. Pair traversal adds the
     * difference of the two shifts back (hy_bvh_traverse_pair);
     * hy_bvh_world_box gives the box in the fixed frame. */
    int relative;
    double shift[3];
    int32_t* vertex_ids; /* NULL, or per vertex the id traversal emits */
    double built_cost; /* SAH cost right after the last build */
    double cost;       /* SAH cost after the last build or refit */
    int64_t builds, refits;
} hy_bvh;

/* Self-collision culling (Volino & Magnenat-Thalmann 1994, with the
 * continuous normal cones of Tang et al. 2009): an edge-connected patch
 * whose normals, over the whole step, all lie within less than 90 degrees
 * of one direction cannot touch itself, so a node with such a patch needs
 * no self test. A triangle's normal under linear motion is a quadratic in
 * t whose three Bernstein coefficient vectors span a cone containing it;
 * node cones bound their children's. Like most cloth codes (Provot 1997)
 * this omits the boundary-contour test of the theorem: a connected patch
 * that spirals over itself with a narrow normal cone would be missed. It
 * applies to touching contact only: with thickness > 0 nothing is culled.
 * The triangles' winding must be consistent for it to cull anything. */

/* Copy the topology and work out feature ownership. Triangles must index
 * [0, vertex_count) without repeating a vertex (HY_ERR_INVALID_ARG naming
 * the triangle otherwise). The tree is empty until hy_bvh_build. */
hy_status hy_bvh_create(const int32_t* triangles, int32_t triangle_count, int32_t vertex_count, hy_bvh** out);
void hy_bvh_destroy(hy_bvh* bvh);

/* Boxes from positions x0 (t=0) and x1 (t=1; NULL = not moving), each
 * 3 * vertex_count doubles, then a full top-down binned-SAH build.
 * thickness >= 0 (contact distance). */
hy_status hy_bvh_build(hy_bvh* bvh, const double* x0, const double* x1, double thickness, hy_pool* pool);

/* New boxes for the same tree: primitives first, then nodes bottom-up.
 * Requires a previous build. Updates bvh->cost. */
void hy_bvh_refit(hy_bvh* bvh, const double* x0, const double* x1, double thickness, hy_pool* pool);

/* Ids that traversal emits for this mesh's vertices (copied; NULL resets
 * to the local indices). Lets meshes cut from one larger mesh report pairs
 * in its numbering. */
hy_status hy_bvh_set_vertex_ids(hy_bvh* bvh, const int32_t* ids);

/* The root's swept box in the fixed frame (the relative box grown by the
 * shift; rounded outward). */
void hy_bvh_world_box(const hy_bvh* bvh, hy_aabb* out);

/* a with its t=1 box moved by e, rounded outward like hy_aabb_sweep: the
 * moving box seen from a frame that moves by -t * e. */
static inline void hy_mbox_shift(const hy_mbox* a, const double e[3], hy_mbox* r) {
    for (int k = 0; k < 3; k++) {
        double ae = e[k] < 0 ? -e[k] : e[k];
        double al = a->lo1[k] < 0 ? -a->lo1[k] : a->lo1[k];
        double ah = a->hi1[k] < 0 ? -a->hi1[k] : a->hi1[k];
        r->lo0[k] = a->lo0[k];
        r->hi0[k] = a->hi0[k];
        r->lo1[k] = (a->lo1[k] + e[k]) - (4.5e-16 * (al + ae) + 1e-300);
        r->hi1[k] = (a->hi1[k] + e[k]) + (4.5e-16 * (ah + ae) + 1e-300);
    }
}

/* a grown by the motion t * e, t in [0, 1], rounded outward (e is itself a
 * rounded difference of two shifts: the pad covers that as well). */
static inline void hy_aabb_sweep(const hy_aabb* a, const double e[3], hy_aabb* r) {
    for (int k = 0; k < 3; k++) {
        double lo = a->lo[k] + (e[k] < 0 ? e[k] : 0.0);
        double hi = a->hi[k] + (e[k] > 0 ? e[k] : 0.0);
        double ae = e[k] < 0 ? -e[k] : e[k];
        double al = a->lo[k] < 0 ? -a->lo[k] : a->lo[k];
        double ah = a->hi[k] < 0 ? -a->hi[k] : a->hi[k];
        /* two roundings of at most eps/2 (|a| + |e|) each, plus e's own */
        r->lo[k] = lo - (4.5e-16 * (al + ae) + 1e-300);
        r->hi[k] = hi + (4.5e-16 * (ah + ae) + 1e-300);
    }
}

/* Refit-time decay: SAH cost now over SAH cost right after the build (1 for
 * a fresh tree; grows as refitted boxes swell and overlap). */
double hy_bvh_quality(const hy_bvh* bvh);

/* Refit, or build when there is no tree yet or the refitted tree's quality
 * exceeds max_decay (> 1; 1.5 to 3 is typical). *rebuilt (may be NULL) says
 * which happened. */
hy_status hy_bvh_update(hy_bvh* bvh, const double* x0, const double* x1, double thickness, double max_decay,
                        hy_pool* pool, int* rebuilt);

/* Structure check for tests: every triangle in exactly one leaf, children
 * after parents, each box contains its children / triangles. Returns 1 if
 * sound; else 0 with hy_last_error() naming the first bad node. */
int hy_bvh_check(const hy_bvh* bvh);

#endif
