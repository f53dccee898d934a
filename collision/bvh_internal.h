/* What the BVH's files share (collision/bvh.c: create, destroy, ownership;
 * bvh_boxes.c: primitive boxes and normal cones; bvh_build.c: the SAH
 * build; bvh_cull.c: self-collision culling; bvh_refit.c: refit and
 * update; bvh_check.c: validation). Not for use outside collision/bvh*.c. */
#ifndef HY_COLLISION_BVH_INTERNAL_H
#define HY_COLLISION_BVH_INTERNAL_H

#include <math.h>
#include <stdint.h>

#include "collision/bvh.h"

#define BINS 16
#define LEAF_SIZE 8
/* The SAH's cost of a node visit, in triangle tests: a range of at most
 * LEAF_SIZE stays a leaf unless NODE_COST + (children's SAH cost) is below
 * its count. In a BVH-pair traversal a node visit costs several triangle
 * tests' worth (box tests of child pairs, pushes), and a leaf's triangle
 * pairs are gated by float boxes in one tight loop. Measured at 1 thread
 * (ccd-frames, whole step), against leaves of 4 and a cost of 1: 8 and 4
 * build n-body 22% and cloth-ball 12% faster and traverse both 5-10%
 * faster; 12 or 16 and a higher cost build faster still but traverse
 * slower. */
#define NODE_COST 4.0
/* Open ranges at which the breadth-first top split hands over to parallel
 * subtree builds; fixed so the tree does not depend on the thread count. */
#define SUBTREE_TASKS 64
_Static_assert(2 * SUBTREE_TASKS + 2 <= HY_BVH_TOP_MAX, "hy_bvh.sub must hold the top of any build");
/* Ranges smaller than this are not worth a parallel task of their own. */
#define SUBTREE_MIN 256

/* ---- bvh.c */

/* hy_bvh.version: every change takes the next number */
void hy_bvh_touch(hy_bvh* b);

/* ---- bvh_boxes.c: primitive boxes and normal cones */

typedef struct box_ctx {
    hy_bvh* b;
    const double* x0;
    const double* x1;
    double half;
    int cull; /* also compute triangle normal cones */
} box_ctx;

/* A cone must stay this far below 90 degrees to cull: cos(pi/2 - 1e-6). */
#define CONE_MIN_COS 1e-6

static inline void cross3(const double a[3], const double b[3], double r[3]) {
    r[0] = a[1] * b[2] - a[2] * b[1];
    r[1] = a[2] * b[0] - a[0] * b[2];
    r[2] = a[0] * b[1] - a[1] * b[0];
}

static inline double norm3(const double a[3]) { return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

static inline int cone_ok(const hy_bvh_cone* c) { return c->c > CONE_MIN_COS; }

static inline int culling(const hy_bvh* b) { return b->self_cull != 0; }

void hy_bvh_triangle_normals(const double* x0, const double* x1, const int32_t* f, hy_bvh_normals* c);
void hy_bvh_leaf_cone(const hy_bvh_normals* tn, int32_t count, hy_bvh_cone* c);
void hy_bvh_cone_merge(const hy_bvh_cone* a, const hy_bvh_cone* b, hy_bvh_cone* r);
void hy_bvh_vertex_boxes_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker);
void hy_bvh_triangle_boxes_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker);
void hy_bvh_primitive_boxes(hy_bvh* b, const double* x0, const double* x1, double thickness, hy_pool* pool);

/* ---- bvh_build.c */

void hy_bvh_leaf_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker);
void hy_bvh_leaf_data(hy_bvh* b, const double* x0, const double* x1, hy_pool* pool);
void hy_bvh_make_slots(hy_bvh* b, hy_pool* pool);

/* ---- bvh_cull.c */

/* The star-contour test's scratch (bvh_cull.c explains the test). */
typedef struct contour_buf {
    int32_t* v; /* 2 per half-edge: from, to */
    int64_t n, cap;
    double* p; /* with a thickness: 8 per half-edge (its ends in the map, both times) */
    int64_t pcap;
} contour_buf;

void hy_bvh_mark_self_free(hy_bvh* b, const double* x0, const double* x1, hy_pool* pool);
void hy_bvh_mark_below(hy_bvh* b, int32_t root, const double* x0, const double* x1, contour_buf* cb, int top,
                       int32_t* subs, int32_t* nsubs, int reuse);

/* ---- bvh_refit.c */

void hy_bvh_sweep_nodes(hy_bvh* b, int boxes, hy_pool* pool);

#endif
