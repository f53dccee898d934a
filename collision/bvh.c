/* BVH over swept triangle boxes: binned-SAH top-down build, bottom-up refit,
 * feature ownership.
 *
 * Build: the top of the tree is split breadth first (the ranges of one
 * round in parallel), until there are SUBTREE_TASKS open ranges (or nothing
 * left to split); the subtrees are
 * then built independently (in parallel on the pool) into private node
 * arrays and spliced in task order. The split rule never looks at the thread
 * count, so the tree is the same for any pool.
 *
 * The build partitions an array of records (a float box rounded outward,
 * and an id: 32 bytes) in place, so every pass reads memory in sequence; a range's box and centroid bounds
 * come from its parent's bins (no pass of their own); the large ranges at
 * the top are binned in fixed chunks on the pool (min, max and counts merge
 * exactly in any order); ranges of up to SMALL_RANGE triangles are sorted
 * and every split tried instead of binned. Refit and build end with one
 * bottom-up sweep run per subtree in parallel (boxes, gates, and the
 * normal cones when culling), then, when culling, the top-down marking of
 * self-free nodes (mark_self_free). */
#include "collision/bvh.h"

#include <float.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/error.h"

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

/* ---- create / destroy, ownership */

typedef struct edge_rec {
    int32_t a, b; /* a < b */
    int32_t tri;
    int32_t k;
} edge_rec;

static int cmp_edge(const void* x, const void* y) {
    const edge_rec* p = x;
    const edge_rec* q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    if (p->tri != q->tri) return p->tri < q->tri ? -1 : 1;
    return (p->k > q->k) - (p->k < q->k);
}

/* hy_bvh.version: every change takes the next number */
static _Atomic uint64_t g_bvh_version;
static void touch(hy_bvh* b) { b->version = atomic_fetch_add(&g_bvh_version, 1) + 1; }

hy_status hy_bvh_create(const int32_t* triangles, int32_t triangle_count, int32_t vertex_count, hy_bvh** out) {
    *out = NULL;
    if (!triangles || triangle_count < 1 || vertex_count < 3)
        return hy_fail(HY_ERR_INVALID_ARG, "bvh: needs >= 1 triangle and >= 3 vertices, got %d and %d",
                       triangle_count, vertex_count);
    for (int32_t t = 0; t < triangle_count; t++) {
        const int32_t* f = triangles + 3 * t;
        for (int k = 0; k < 3; k++)
            if (f[k] < 0 || f[k] >= vertex_count)
                return hy_fail(HY_ERR_INVALID_ARG, "bvh: triangle %d index %d out of range [0, %d)", t, f[k],
                               vertex_count);
        if (f[0] == f[1] || f[1] == f[2] || f[0] == f[2])
            return hy_fail(HY_ERR_INVALID_ARG, "bvh: triangle %d repeats a vertex (%d %d %d)", t, f[0], f[1], f[2]);
    }
    hy_bvh* b = calloc(1, sizeof *b);
    if (!b) return hy_fail(HY_ERR_NOMEM, "bvh: out of memory");
    size_t nt = (size_t)triangle_count, nv = (size_t)vertex_count;
    b->vertex_count = vertex_count;
    b->triangle_count = triangle_count;
    b->leaf_size = LEAF_SIZE;
    b->triangles = malloc(sizeof(int32_t) * 3 * nt);
    b->owned = calloc(nt, 1);
    b->nodes = malloc(sizeof(hy_bvh_node) * (2 * nt));
    b->order = malloc(sizeof(int32_t) * nt);
    b->vertex_boxes = malloc(sizeof(hy_aabb) * nv);
    b->triangle_boxes = malloc(sizeof(hy_aabb) * nt);
    b->twin = malloc(sizeof(int32_t) * 3 * nt);
    b->rank = malloc(sizeof(int32_t) * nt);
    b->range = malloc(sizeof(int32_t) * 4 * nt);
    b->cones = malloc(sizeof(hy_bvh_cone) * 2 * nt);
    b->triangle_normals = malloc(sizeof(hy_bvh_normals) * nt);
    b->self_free = calloc(2 * nt, 1);
    b->self_cull = 1; /* see hy_bvh.self_cull */
    b->vertex_mboxes = malloc(sizeof(hy_mbox) * nv);
    b->slots = malloc(sizeof(hy_bvh_slot) * nt);
    b->slot_twin = malloc(sizeof(int32_t) * 3 * nt);
    b->node_fboxes = malloc(sizeof(hy_fbox) * 2 * nt);
    b->leaf_fboxes = malloc(sizeof(hy_fbox) * nt);
    b->leaf_soa_stride = ((int64_t)nt + 8 + 7) & ~(int64_t)7;
    b->leaf_soa = calloc((size_t)(12 * b->leaf_soa_stride), sizeof(float));
    b->vertex_fboxes = malloc(sizeof(hy_fbox) * nv);
    b->node_area = malloc(sizeof(double) * 2 * nt);
    b->spans = malloc(sizeof *b->spans * 2 * nt);
    b->interpolate = 1;
    edge_rec* edges = malloc(sizeof(edge_rec) * 3 * nt);
    uint8_t* seen = calloc(nv, 1);
    if (!b->triangles || !b->owned || !b->nodes || !b->order || !b->vertex_boxes || !b->triangle_boxes || !edges ||
        !seen || !b->twin || !b->rank || !b->range || !b->cones || !b->triangle_normals ||
        !b->self_free || !b->vertex_mboxes || !b->slots || !b->slot_twin || !b->node_fboxes || !b->leaf_fboxes || !b->leaf_soa || !b->vertex_fboxes || !b->node_area || !b->spans) {
        free(edges);
        free(seen);
        hy_bvh_destroy(b);
        return hy_fail(HY_ERR_NOMEM, "bvh: out of memory for %d triangles", triangle_count);
    }
    memcpy(b->triangles, triangles, sizeof(int32_t) * 3 * nt);

    /* A vertex belongs to the first triangle that uses it; an edge to the
     * first of the triangles sharing it (sort groups them). */
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++) {
            int32_t v = triangles[3 * t + k];
            if (!seen[v]) {
                seen[v] = 1;
                b->owned[t] |= (uint8_t)HY_BVH_OWN_VERTEX(k);
            }
            int32_t a = v, c = triangles[3 * t + (k + 1) % 3];
            edge_rec* e = &edges[3 * t + (size_t)k];
            e->a = a < c ? a : c;
            e->b = a < c ? c : a;
            e->tri = (int32_t)t;
            e->k = k;
        }
    qsort(edges, 3 * nt, sizeof *edges, cmp_edge);
    /* Each edge is owned by the first triangle of its group (the sort
     * groups the triangles sharing it). Twins, for the contour test of
     * self-collision culling: an edge of two triangles that run it in
     * opposite directions links them; a boundary edge has none (-1); an
     * edge of three or more triangles, or of two that run it the same way,
     * is marked -2 (no patch containing it is culled). */
    for (size_t i = 0; i < 3 * nt;) {
        size_t j = i + 1;
        while (j < 3 * nt && edges[j].a == edges[i].a && edges[j].b == edges[i].b) j++;
        b->owned[edges[i].tri] |= (uint8_t)HY_BVH_OWN_EDGE(edges[i].k);
        const edge_rec* e0 = &edges[i];
        size_t s0 = 3 * (size_t)e0->tri + (size_t)e0->k;
        if (j - i == 1) {
            b->twin[s0] = -1;
        } else if (j - i == 2) {
            const edge_rec* e1 = &edges[i + 1];
            size_t s1 = 3 * (size_t)e1->tri + (size_t)e1->k;
            /* opposite directions: the edges start at different vertices */
            int opposite = triangles[s0] != triangles[s1];
            b->twin[s0] = opposite ? e1->tri : -2;
            b->twin[s1] = opposite ? e0->tri : -2;
        } else {
            for (size_t q = i; q < j; q++) b->twin[3 * (size_t)edges[q].tri + (size_t)edges[q].k] = -2;
        }
        i = j;
    }
    free(edges);
    free(seen);
    size_t owned_features = 0;
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++)
            owned_features += ((b->owned[t] & HY_BVH_OWN_EDGE(k)) != 0) + ((b->owned[t] & HY_BVH_OWN_VERTEX(k)) != 0);
    b->feature_count = (int32_t)owned_features;
    b->feature_fboxes = malloc(sizeof(hy_fbox) * (owned_features ? owned_features : 1));
    if (!b->feature_fboxes) {
        hy_bvh_destroy(b);
        return hy_fail(HY_ERR_NOMEM, "bvh: out of memory for %d triangles", triangle_count);
    }
    touch(b);
    *out = b;
    return HY_OK;
}

void hy_bvh_destroy(hy_bvh* b) {
    if (!b) return;
    free(b->triangles);
    free(b->owned);
    free(b->nodes);
    free(b->order);
    free(b->vertex_boxes);
    free(b->triangle_boxes);
    free(b->twin);
    free(b->rank);
    free(b->range);
    free(b->cones);
    free(b->triangle_normals);
    free(b->self_free);
    free(b->vertex_mboxes);
    free(b->slots);
    free(b->slot_twin);
    free(b->feature_fboxes);
    free(b->vertex_fboxes);
    free(b->node_fboxes);
    free(b->leaf_fboxes);
    free(b->leaf_soa);
    free(b->node_area);
    free(b->spans);
    free(b->vertex_ids);
    free(b->vertex_tri_start);
    free(b->vertex_tri);
    free(b->node_parent);
    free(b->slot_leaf);
    free(b->cull_test);
    free(b->node_dirty);
    free(b->tri_dirty);
    free(b->dirty_nodes);
    free(b->dirty_tris);
    free(b);
}

/* ---- primitive boxes */

typedef struct box_ctx {
    hy_bvh* b;
    const double* x0;
    const double* x1;
    double half;
    int cull; /* also compute triangle normal cones */
} box_ctx;

/* ---- normal cones */

/* Cones are kept as the cosine and sine of their half-angle, and merged
 * with the angle-sum and half-angle identities (square roots, no acos or
 * sin). A cosine near 1 gives its angle only to about sqrt(eps) (as acos
 * would): every angle made from a dot product, and every merged cone, is
 * widened by this many radians. */
#define CONE_SLACK 1e-7
/* A cone must stay this far below 90 degrees to cull: cos(pi/2 - 1e-6). */
#define CONE_MIN_COS 1e-6

static inline void cross3(const double a[3], const double b[3], double r[3]) {
    r[0] = a[1] * b[2] - a[2] * b[1];
    r[1] = a[2] * b[0] - a[0] * b[2];
    r[2] = a[0] * b[1] - a[1] * b[0];
}

static inline double norm3(const double a[3]) { return sqrt(a[0] * a[0] + a[1] * a[1] + a[2] * a[2]); }

static inline double absmax3(const double a[3]) {
    double m = fabs(a[0]) > fabs(a[1]) ? fabs(a[0]) : fabs(a[1]);
    return m > fabs(a[2]) ? m : fabs(a[2]);
}

/* cos and sin of the angle whose cosine is d (clamped to [-1, 1]). */
static inline void cos_sin(double d, double* c, double* s) {
    d = d > 1 ? 1 : d < -1 ? -1 : d;
    *c = d;
    *s = sqrt(1.0 - d * d);
}

/* cos and sin of the sum of the angles (ca, sa) and (cb, sb). */
static inline void angle_sum(double ca, double sa, double cb, double sb, double* c, double* s) {
    *c = ca * cb - sa * sb;
    *s = sa * cb + ca * sb;
}

/* Widen the angle (c, s) by delta in [0, 0.1] radians: 1 - delta^2 / 2 is
 * below cos(delta) and delta above sin(delta), so the new cosine is below
 * the true cos(angle + delta) and the sine above (for angles in [0, pi/2]). */
static inline void widen(double* c, double* s, double delta) {
    angle_sum(*c, *s, 1.0 - 0.5 * delta * delta, delta, c, s);
}

static inline int cone_ok(const hy_bvh_cone* c) { return c->c > CONE_MIN_COS; }

static void cone_fail(hy_bvh_cone* c) {
    c->axis[0] = 0;
    c->axis[1] = 0;
    c->axis[2] = 1;
    c->c = -1.0;
    c->s = 0.0;
}

/* The triangle's normal over the step, n(t) = (1-t)^2 c0 + t(1-t) c1 + t^2 c2,
 * lies in the cone spanned by c0, c1, c2. Each coefficient's direction is
 * known to within delta = (rounding of its cross products) / |c|, which pads
 * the angle; near-degenerate triangles (delta large, or c = 0) fail. Only
 * the directions are kept here: leaf_cone bounds all of a leaf's at once
 * (one square root, instead of a cone and a cone_merge per triangle). */
static void triangle_normals(const double* x0, const double* x1, const int32_t* f, hy_bvh_normals* c) {
    double e[2][2][3];
    for (int s = 0; s < 2; s++) {
        const double* x = s ? x1 : x0;
        for (int k = 0; k < 3; k++) {
            e[s][0][k] = x[3 * f[1] + k] - x[3 * f[0] + k];
            e[s][1][k] = x[3 * f[2] + k] - x[3 * f[0] + k];
        }
    }
    double cv[3][3], t1[3], t2[3], scale[3];
    cross3(e[0][0], e[0][1], cv[0]);
    cross3(e[1][0], e[1][1], cv[2]);
    cross3(e[0][0], e[1][1], t1);
    cross3(e[1][0], e[0][1], t2);
    for (int k = 0; k < 3; k++) cv[1][k] = t1[k] + t2[k];
    /* |a| |b| <= 3 |a|_inf |b|_inf: no square roots for the bound */
    double n00 = absmax3(e[0][0]), n01 = absmax3(e[0][1]), n10 = absmax3(e[1][0]), n11 = absmax3(e[1][1]);
    scale[0] = 3.0 * (n00 * n01);
    scale[1] = 3.0 * (n00 * n11 + n10 * n01);
    scale[2] = 3.0 * (n10 * n11);
    c->delta = 0;
    c->g = 0;
    double nc[3];
    for (int i = 0; i < 3; i++) {
        double n = norm3(cv[i]), inv = 1.0 / n;
        nc[i] = n;
        /* Differences and cross products: a few roundings each, relative
         * to the edge lengths; 16 eps is generous (and covers the few eps
         * of scaling by a rounded reciprocal; CONE_SLACK pads far more). */
        double delta = n > 0 ? 16.0 * DBL_EPSILON * scale[i] * inv : INFINITY;
        if (!(delta < 0.05) || !isfinite(n)) {
            c->delta = INFINITY;
            return;
        }
        if (delta > c->delta) c->delta = delta;
        for (int k = 0; k < 3; k++) c->u[i][k] = cv[i][k] * inv;
    }
    /* The altitude bound (hy_bvh_normals.g): the computed |c_i| are within
     * delta of the exact ones (relative), the edge lengths within a few
     * eps; 1e-6 more covers the rest. */
    double l2 = 0;
    for (int s = 0; s < 2; s++) {
        const double* a = e[s][0];
        const double* b = e[s][1];
        double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        double la = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
        double lb = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
        double ld = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        double m = la > lb ? la : lb;
        m = m > ld ? m : ld;
        l2 = l2 > m ? l2 : m;
    }
    double area = nc[0] < 0.5 * nc[1] ? nc[0] : 0.5 * nc[1];
    area = (area < nc[2] ? area : nc[2]) * (1.0 - c->delta);
    double g = area / sqrt(l2) * (1.0 - 1e-6);
    c->g = g > 0 && isfinite(g) ? g : 0.0;
}

/* The cone of a leaf (its triangles' normals tn[0..count), in leaf
 * order), and the smallest g among them: around the sum of its triangles'
 * unit coefficient directions, out to the widest of them (the smallest dot
 * product with the axis) plus the largest direction error. A circular cone under
 * 90 degrees is convex, so holding every coefficient direction it holds
 * every normal they span. Near-degenerate triangles (see triangle_normals)
 * and sums too short to give an axis fail. */
static void leaf_cone(const hy_bvh_normals* tn, int32_t count, hy_bvh_cone* c) {
    double axis[3] = {0, 0, 0}, dmax = 0, g = INFINITY;
    for (int32_t j = 0; j < count; j++) {
        const hy_bvh_normals* t = &tn[j];
        if (t->g < g) g = t->g;
        if (!(t->delta < 0.05)) {
            cone_fail(c);
            c->g = 0;
            return;
        }
        if (t->delta > dmax) dmax = t->delta;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) axis[k] += t->u[i][k];
    }
    c->g = g;
    double na = norm3(axis);
    if (!(na > 1e-3 * (double)count)) {
        cone_fail(c);
        return;
    }
    for (int k = 0; k < 3; k++) c->axis[k] = axis[k] / na;
    double dmin = INFINITY;
    for (int32_t j = 0; j < count; j++) {
        const hy_bvh_normals* t = &tn[j];
        for (int i = 0; i < 3; i++) {
            double d = t->u[i][0] * c->axis[0] + t->u[i][1] * c->axis[1] + t->u[i][2] * c->axis[2];
            if (!(d >= dmin)) dmin = d; /* NaN wins: the cone fails */
        }
    }
    if (!(dmin > 0)) {
        cone_fail(c); /* 90 degrees or more (or NaN) */
        return;
    }
    cos_sin(dmin, &c->c, &c->s);
    widen(&c->c, &c->s, CONE_SLACK + dmax);
    if (!cone_ok(c)) cone_fail(c);
}

/* The smallest cone around two cones (both axes unit length, angles in
 * [0, pi/2)). With alpha the angle between the axes: one cone holds the
 * other when alpha + its angle is within the other's; else the merged
 * half-angle is gamma = (alpha + a + b) / 2 (cos and sin from the
 * half-angle identities), around a's axis turned toward b's by gamma - a. */
static void cone_merge(const hy_bvh_cone* a, const hy_bvh_cone* b, hy_bvh_cone* r) {
    if (!cone_ok(a) || !cone_ok(b)) {
        cone_fail(r);
        return;
    }
    double ca, sa;
    cos_sin(a->axis[0] * b->axis[0] + a->axis[1] * b->axis[1] + a->axis[2] * b->axis[2], &ca, &sa);
    widen(&ca, &sa, CONE_SLACK);
    if (sa < 0) sa = -sa; /* alpha near pi: widened past it (cos stays near -1) */
    /* cos(alpha + b) >= cos(a): b inside a (cos falls over [0, pi], and
     * past pi the sum exceeds a anyway while cos(a) > 0) */
    double cab, sab, cbb, sbb;
    angle_sum(ca, sa, b->c, b->s, &cab, &sab);
    if (cab >= a->c) {
        *r = *a;
        return;
    }
    angle_sum(ca, sa, a->c, a->s, &cbb, &sbb);
    if (cbb >= b->c) {
        *r = *b;
        return;
    }
    if (sa < 1e-6) {
        /* axes (nearly) parallel: the wider cone grown by alpha */
        const hy_bvh_cone* w = a->c < b->c ? a : b;
        *r = *a;
        angle_sum(w->c, w->s, ca, sa, &r->c, &r->s);
        if (!cone_ok(r)) cone_fail(r);
        return;
    }
    /* S = alpha + a + b: cos and sin by the sum identities (alpha + a is
     * the second test's sum) */
    double cs, ss;
    angle_sum(cbb, sbb, b->c, b->s, &cs, &ss);
    /* gamma = S / 2 < 90 degrees: S in (0, pi), sin S > 0 */
    if (!(ss > 0)) {
        cone_fail(r);
        return;
    }
    double h = 0.5 * (1.0 + cs), g = 0.5 * (1.0 - cs);
    double cg = sqrt(h > 0 ? h : 0), sg = sqrt(g > 0 ? g : 0);
    if (!(cg > CONE_MIN_COS)) {
        cone_fail(r);
        return;
    }
    /* Turn a's axis toward b's by w = gamma - a in their plane:
     * axis = (sin(alpha - w) a + sin(w) b) / sin(alpha). */
    double sw = sg * a->c - cg * a->s, cw = cg * a->c + sg * a->s;
    double caw = (sa * cw - ca * sw) / sa, cbw = sw / sa;
    double ax[3];
    for (int k = 0; k < 3; k++) ax[k] = caw * a->axis[k] + cbw * b->axis[k];
    double n = norm3(ax);
    if (!(n > 0.5)) {
        cone_fail(r);
        return;
    }
    for (int k = 0; k < 3; k++) r->axis[k] = ax[k] / n;
    /* The computed axis is off by a few ulps: widen. */
    r->c = cg;
    r->s = sg;
    widen(&r->c, &r->s, CONE_SLACK);
    if (!cone_ok(r)) cone_fail(r);
}

/* nextafter(x, +-INFINITY), inline: the neighbouring double in the IEEE
 * order is the neighbouring integer of its bits (sign-magnitude). Same
 * results as the library call, which cost a call per bound. */
static inline double next_toward(double x, int up) {
    if (x != x || x == (up ? INFINITY : -INFINITY)) return x;
    if (x == 0.0) return up ? 0x1p-1074 : -0x1p-1074;
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    if ((x > 0) == (up != 0))
        u++;
    else
        u--;
    memcpy(&x, &u, sizeof x);
    return x;
}

static void vertex_boxes_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    box_ctx* c = vctx;
    const double* d = c->b->shift;
    double h = c->half;
    for (int64_t v = begin; v < end; v++) {
        hy_aabb* box = &c->b->vertex_boxes[v];
        hy_mbox* mb = &c->b->vertex_mboxes[v];
        const double* p = c->x0 + 3 * v;
        const double* q = c->x1 ? c->x1 + 3 * v : p;
        for (int k = 0; k < 3; k++) {
            double lo0 = p[k], hi0 = p[k], lo1 = q[k], hi1 = q[k];
            if (d[k] != 0.0) {
                /* x1 - shift is rounded: widen it by an ulp each way. */
                double r = q[k] - d[k];
                lo1 = next_toward(r, 0);
                hi1 = next_toward(r, 1);
            }
            if (h > 0) {
                /* Rounded outward: the box must contain the exact grown one. */
                lo0 = next_toward(lo0 - h, 0);
                hi0 = next_toward(hi0 + h, 1);
                lo1 = next_toward(lo1 - h, 0);
                hi1 = next_toward(hi1 + h, 1);
            }
            box->lo[k] = lo0 < lo1 ? lo0 : lo1;
            box->hi[k] = hi0 > hi1 ? hi0 : hi1;
            if (!c->b->interpolate) {
                /* Both ends the swept box: the interpolated test is then
                 * the plain swept-box overlap. */
                lo0 = lo1 = box->lo[k];
                hi0 = hi1 = box->hi[k];
            }
            mb->lo0[k] = lo0;
            mb->hi0[k] = hi0;
            mb->lo1[k] = lo1;
            mb->hi1[k] = hi1;
        }
        hy_fbox_from(mb, &c->b->vertex_fboxes[v]);
    }
}

static void triangle_boxes_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    box_ctx* c = vctx;
    const hy_aabb* vb = c->b->vertex_boxes;
    for (int64_t t = begin; t < end; t++) {
        const int32_t* f = c->b->triangles + 3 * t;
        hy_aabb* box = &c->b->triangle_boxes[t];
        hy_aabb_union(box, &vb[f[0]], &vb[f[1]]);
        hy_aabb_union(box, box, &vb[f[2]]);
    }
}

static int culling(const hy_bvh* b) { return b->self_cull != 0; }

static void primitive_boxes(hy_bvh* b, const double* x0, const double* x1, double thickness, hy_pool* pool) {
    b->thickness = thickness > 0 ? thickness : 0.0;
    for (int k = 0; k < 3; k++) b->shift[k] = 0.0;
    if (b->relative && x1) {
        /* Mid-range of the displacements: the shift that makes the largest
         * remaining motion smallest. Only vertices used by triangles count. */
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int32_t i = 0; i < 3 * b->triangle_count; i++) {
            int32_t v = b->triangles[i];
            for (int k = 0; k < 3; k++) {
                double dk = x1[3 * v + k] - x0[3 * v + k];
                if (dk < lo[k]) lo[k] = dk;
                if (dk > hi[k]) hi[k] = dk;
            }
        }
        for (int k = 0; k < 3; k++) {
            double m = 0.5 * lo[k] + 0.5 * hi[k];
            b->shift[k] = isfinite(m) ? m : 0.0;
        }
    }
    box_ctx c = {b, x0, x1, thickness > 0 ? 0.5 * thickness : 0.0, culling(b)};
    if (pool) {
        hy_pool_for(pool, b->vertex_count, 8192, vertex_boxes_block, &c);
        hy_pool_for(pool, b->triangle_count, 8192, triangle_boxes_block, &c);
    } else {
        vertex_boxes_block(&c, 0, b->vertex_count, 0, 0);
        triangle_boxes_block(&c, 0, b->triangle_count, 0, 0);
    }
}

/* ---- build */

typedef struct node_buf {
    hy_bvh_node* v;
    int32_t n, cap;
} node_buf;

static int node_alloc(node_buf* nb, int32_t count) {
    if (nb->n + count > nb->cap) {
        int32_t cap = nb->cap ? nb->cap : 64;
        while (cap < nb->n + count) cap *= 2;
        hy_bvh_node* nv = realloc(nb->v, sizeof *nv * (size_t)cap);
        if (!nv) return -1;
        nb->v = nv;
        nb->cap = cap;
    }
    int32_t i = nb->n;
    nb->n += count;
    return i;
}

/* A triangle as the build sees it: its box in single precision, rounded
 * outward, with its id beside the low corner (32 bytes). Ranges are
 * partitioned in place in an array of these, so each pass over a range
 * reads memory in sequence instead of through `order`, and moves half the
 * bytes a double box would (the partitions and the binning are most of a
 * build's time, and bound by those bytes). The tree is then built on
 * boxes a little larger than the triangles' (by at most an ulp of a float:
 * the SAH's choices barely move); the node boxes it leaves are those
 * rounded boxes' unions, so they still hold every triangle's. Its centre
 * (twice it: lo + hi, prim_c) is computed where it is read. */
typedef struct prim {
    _Alignas(16) float lo[3];
    int32_t id;
    float hi[3];
    float zero; /* 0: a fourth lane that adds nothing */
} prim;

static inline float prim_c(const prim* p, int k) { return p->lo[k] + p->hi[k]; }

/* Boxes of the build as four float lanes (the fourth unused: the low
 * corner's holds an id's bits, never read). */
#if defined(HY_BVH_SSE2) /* (collision/bvh.h includes the intrinsics) */
typedef __m128 v4;
static inline v4 v4_lo(const prim* p) { return _mm_load_ps(p->lo); }
static inline v4 v4_hi(const prim* p) { return _mm_load_ps(p->hi); }
static inline v4 v4_min(v4 a, v4 b) { return _mm_min_ps(a, b); }
static inline v4 v4_max(v4 a, v4 b) { return _mm_max_ps(a, b); }
/* lo + hi with the id's lane cleared first (its bits may be a denormal) */
static inline v4 v4_centre(const prim* p) {
    const __m128 keep3 = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
    return _mm_add_ps(_mm_and_ps(v4_lo(p), keep3), v4_hi(p));
}
static inline v4 v4_splat(float x) { return _mm_set1_ps(x); }
static inline void v4_get(v4 a, float out[4]) { _mm_storeu_ps(out, a); }
#else
typedef struct v4 {
    float f[4];
} v4;
static inline v4 v4_lo(const prim* p) {
    v4 r = {{p->lo[0], p->lo[1], p->lo[2], 0.0f}};
    return r;
}
static inline v4 v4_hi(const prim* p) {
    v4 r = {{p->hi[0], p->hi[1], p->hi[2], 0.0f}};
    return r;
}
static inline v4 v4_min(v4 a, v4 b) {
    for (int k = 0; k < 4; k++) a.f[k] = a.f[k] < b.f[k] ? a.f[k] : b.f[k];
    return a;
}
static inline v4 v4_max(v4 a, v4 b) {
    for (int k = 0; k < 4; k++) a.f[k] = a.f[k] > b.f[k] ? a.f[k] : b.f[k];
    return a;
}
static inline v4 v4_centre(const prim* p) {
    v4 r = {{prim_c(p, 0), prim_c(p, 1), prim_c(p, 2), 0.0f}};
    return r;
}
static inline v4 v4_splat(float x) {
    v4 r = {{x, x, x, x}};
    return r;
}
static inline void v4_get(v4 a, float out[4]) { memcpy(out, a.f, sizeof a.f); }
#endif

typedef struct box4 {
    v4 lo, hi;
} box4;

static inline void box4_empty(box4* a) {
    a->lo = v4_splat(FLT_MAX);
    a->hi = v4_splat(-FLT_MAX);
}

static inline void box4_grow(box4* a, v4 lo, v4 hi) {
    a->lo = v4_min(a->lo, lo);
    a->hi = v4_max(a->hi, hi);
}

static inline void box4_union(box4* r, const box4* a, const box4* b) {
    r->lo = v4_min(a->lo, b->lo);
    r->hi = v4_max(a->hi, b->hi);
}

static inline void box4_get(const box4* a, float lo[4], float hi[4]) {
    v4_get(a->lo, lo);
    v4_get(a->hi, hi);
}

/* Half the surface area, in double (the SAH's sums of products). */
static inline double box4_half_area(const box4* a) {
    float lo[4], hi[4];
    box4_get(a, lo, hi);
    double dx = (double)hi[0] - lo[0], dy = (double)hi[1] - lo[1], dz = (double)hi[2] - lo[2];
    return dx * dy + dy * dz + dz * dx;
}

static inline void box4_aabb(const box4* a, hy_aabb* out) {
    float lo[4], hi[4];
    box4_get(a, lo, hi);
    for (int k = 0; k < 3; k++) {
        out->lo[k] = lo[k];
        out->hi[k] = hi[k];
    }
}

/* Triangle box b as a prim: its bounds rounded outward to floats (as the
 * gate boxes are, hy_float_down and hy_float_up: a few ulps out). */
static inline void prim_make(const hy_aabb* b, int32_t id, prim* q) {
#if defined(HY_BVH_SSE2)
    _mm_store_ps(q->lo, hy_float3(b->lo, 1));
    _mm_store_ps(q->hi, hy_float3(b->hi, 0));
#else
    for (int k = 0; k < 3; k++) {
        q->lo[k] = hy_float_down(b->lo[k]);
        q->hi[k] = hy_float_up(b->hi[k]);
    }
#endif
    q->id = id;
    q->zero = 0.0f;
}

typedef struct build_ctx {
    hy_bvh* b;
    prim* p;
    prim* tmp;     /* as many again: each range partitions through its own part */
    hy_pool* pool; /* for binning the large ranges at the top (NULL = serial) */
} build_ctx;

/* A range of the build with its box and centroid bounds (known from the
 * parent's bins, so no pass of its own computes them). */
typedef struct range_task {
    box4 box, cbox;
    int32_t begin, end;
    int32_t node; /* index in the final array */
} range_task;

static void range_box(const prim* p, int32_t begin, int32_t end, box4* box, box4* cbox) {
    box4_empty(box);
    box4_empty(cbox);
    for (int32_t i = begin; i < end; i++) {
        box4_grow(box, v4_lo(&p[i]), v4_hi(&p[i]));
        v4 c = v4_centre(&p[i]);
        box4_grow(cbox, c, c);
    }
}

static inline int bin_of(float x, float lo, float scale) {
    int i = (int)((x - lo) * scale);
    return i < 0 ? 0 : i >= BINS ? BINS - 1 : i;
}

/* Boxes, centroid bounds and counts of the triangles in each bin. */
typedef struct bins {
    box4 box[BINS], cbox[BINS];
    int32_t cnt[BINS];
} bins;

static void bins_clear(bins* bn) {
    for (int i = 0; i < BINS; i++) {
        box4_empty(&bn->box[i]);
        box4_empty(&bn->cbox[i]);
        bn->cnt[i] = 0;
    }
}

/* Prim q into the bins. */
static inline void bin_add(bins* bn, const prim* q, int axis, float lo, float scale) {
    int bi = bin_of(prim_c(q, axis), lo, scale);
    bn->cnt[bi]++;
    box4_grow(&bn->box[bi], v4_lo(q), v4_hi(q));
    v4 c = v4_centre(q);
    box4_grow(&bn->cbox[bi], c, c);
}

static void bins_merge(bins* into, const bins* from) {
    for (int i = 0; i < BINS; i++) {
        into->cnt[i] += from->cnt[i];
        box4_union(&into->box[i], &into->box[i], &from->box[i]);
        box4_union(&into->cbox[i], &into->cbox[i], &from->cbox[i]);
    }
}

/* Neighbouring prims mostly fall in one bin (ranges are spatially
 * sorted), so each update waited on the last one's stores: large ranges
 * put even and odd prims in two sets of bins, side by side in one loop,
 * merged at the end (min, max and counts merge exactly in any order). */
#define BINS_SPLIT_MIN 256
static void bins_fill(bins* bn, const prim* p, int32_t begin, int32_t end, int axis, float lo, float scale) {
    int32_t i = begin;
    if (end - begin >= BINS_SPLIT_MIN) {
        bins odd;
        bins_clear(&odd);
        for (; i + 1 < end; i += 2) {
            bin_add(bn, &p[i], axis, lo, scale);
            bin_add(&odd, &p[i + 1], axis, lo, scale);
        }
        bins_merge(bn, &odd);
    }
    for (; i < end; i++) bin_add(bn, &p[i], axis, lo, scale);
}

/* Binning of a large range in fixed chunks, in parallel: min, max and
 * counts merge exactly in any order, so the bins (and the tree) are the
 * same for any thread count. */
#define BIN_GRAIN 16384

typedef struct bin_job {
    const prim* p;
    int32_t begin, end;
    int axis;
    float lo, scale;
    bins* part; /* per chunk */
} bin_job;

static void bin_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)worker;
    bin_job* j = vctx;
    bins_clear(&j->part[block]);
    bins_fill(&j->part[block], j->p, j->begin + (int32_t)begin, j->begin + (int32_t)end, j->axis, j->lo, j->scale);
}

static void bins_make(const build_ctx* c, bins* bn, int32_t begin, int32_t end, int axis, float lo, float scale) {
    int32_t n = end - begin;
    bins_clear(bn);
    if (c->pool && n >= 2 * BIN_GRAIN) {
        int64_t nb = hy_pool_blocks(n, BIN_GRAIN);
        bins* part = aligned_alloc(_Alignof(bins), sizeof *part * (size_t)nb);
        if (part) {
            bin_job j = {c->p, begin, end, axis, lo, scale, part};
            hy_pool_for(c->pool, n, BIN_GRAIN, bin_block, &j);
            for (int64_t q = 0; q < nb; q++) bins_merge(bn, &part[q]);
            free(part);
            return;
        }
    }
    bins_fill(bn, c->p, begin, end, axis, lo, scale);
}

/* The axis of the longest extent of cbox (the first of equals). */
static int longest_axis(const box4* cbox, float lo[4], float hi[4]) {
    box4_get(cbox, lo, hi);
    int k = 0;
    for (int a = 1; a < 3; a++)
        if (hi[a] - lo[a] > hi[k] - lo[k]) k = a;
    return k;
}

/* Small ranges: sorted along the longest centroid axis and every split
 * position tried (exact SAH). Binning them would cost more in per-bin work
 * (16 bins cleared and swept) than the few triangles themselves. */
#define SMALL_RANGE 32

static int32_t split_small(const build_ctx* c, const range_task* r, range_task kids[2]) {
    int32_t begin = r->begin, end = r->end;
    int32_t n = end - begin;
    prim* p = c->p + begin;
    float clo[4], chi[4];
    int k = longest_axis(&r->cbox, clo, chi);
    /* Insertion sort by centroid (stable, so ties keep their order) of
     * the keys and positions only, then the prims moved once. */
    float key[SMALL_RANGE];
    uint8_t at[SMALL_RANGE];
    for (int32_t i = 0; i < n; i++) {
        key[i] = prim_c(&p[i], k);
        at[i] = (uint8_t)i;
    }
    int moved = 0;
    for (int32_t i = 1; i < n; i++) {
        float x = key[i];
        uint8_t xi = at[i];
        int32_t j = i;
        while (j > 0 && key[j - 1] > x) {
            key[j] = key[j - 1];
            at[j] = at[j - 1];
            j--;
        }
        moved |= j != i;
        key[j] = x;
        at[j] = xi;
    }
    if (moved) {
        prim* t = c->tmp + begin;
        for (int32_t i = 0; i < n; i++) t[i] = p[at[i]];
        memcpy(p, t, sizeof(prim) * (size_t)n);
    }
    /* left[i] = box of [0, i], right[i] = box of [i, n) */
    box4 left[SMALL_RANGE], right[SMALL_RANGE];
    left[0].lo = v4_lo(&p[0]);
    left[0].hi = v4_hi(&p[0]);
    for (int32_t i = 1; i < n; i++) {
        left[i] = left[i - 1];
        box4_grow(&left[i], v4_lo(&p[i]), v4_hi(&p[i]));
    }
    right[n - 1].lo = v4_lo(&p[n - 1]);
    right[n - 1].hi = v4_hi(&p[n - 1]);
    for (int32_t i = n - 2; i > 0; i--) {
        right[i] = right[i + 1];
        box4_grow(&right[i], v4_lo(&p[i]), v4_hi(&p[i]));
    }
    double best = INFINITY;
    int32_t best_i = -1;
    for (int32_t i = 1; i < n; i++) {
        /* left = [0, i), right = [i, n) */
        double cost = box4_half_area(&left[i - 1]) * (double)i + box4_half_area(&right[i]) * (double)(n - i);
        if (cost < best) {
            best = cost;
            best_i = i;
        }
    }
    double area = box4_half_area(&r->box);
    if (n <= c->b->leaf_size && (area <= 0 || NODE_COST + best / area >= (double)n)) return -1;
    if (best_i < 0) best_i = n / 2; /* NaN costs: halve */
    int32_t mid = begin + best_i;
    kids[0].box = left[best_i - 1];
    kids[1].box = right[best_i];
    box4_empty(&kids[0].cbox);
    box4_empty(&kids[1].cbox);
    for (int32_t i = 0; i < n; i++) {
        v4 cc = v4_centre(&p[i]);
        box4_grow(&kids[i >= best_i].cbox, cc, cc);
    }
    kids[0].begin = begin;
    kids[0].end = mid;
    kids[1].begin = mid;
    kids[1].end = end;
    return mid;
}

/* Split range r by binned SAH; returns the split index, or -1 to make a
 * leaf. kids[0], kids[1] get the children's boxes and centroid bounds. */
static int32_t split_range(const build_ctx* c, const range_task* r, range_task kids[2]) {
    int32_t begin = r->begin, end = r->end;
    int32_t n = end - begin;
    prim* p = c->p;
    if (n <= 1) return -1;
    if (n <= SMALL_RANGE) return split_small(c, r, kids);
    double best = INFINITY;
    int best_axis = -1, best_bin = 0;
    /* Bin along the longest centroid axis only: a third of the work of
     * trying all three, for trees nearly as good (the usual trade). */
    float clo[4], chi[4];
    int k = longest_axis(&r->cbox, clo, chi);
    float ext = chi[k] - clo[k];
    float scale = ext > 0 ? (float)BINS / ext : 0.0f;
    bins bn;
    if (ext > 0) {
        bins_make(c, &bn, begin, end, k, clo[k], scale);
        /* Sweep from the right, then from the left. */
        double right_area[BINS];
        int32_t right_cnt[BINS];
        box4 acc = bn.box[BINS - 1];
        int32_t nacc = 0;
        for (int i = BINS - 1; i > 0; i--) {
            if (i < BINS - 1) box4_union(&acc, &acc, &bn.box[i]);
            nacc += bn.cnt[i];
            right_area[i] = nacc ? box4_half_area(&acc) : 0;
            right_cnt[i] = nacc;
        }
        acc = bn.box[0];
        nacc = 0;
        for (int i = 0; i < BINS - 1; i++) {
            if (i > 0) box4_union(&acc, &acc, &bn.box[i]);
            nacc += bn.cnt[i];
            if (nacc == 0 || right_cnt[i + 1] == 0) continue;
            double cost = box4_half_area(&acc) * nacc + right_area[i + 1] * right_cnt[i + 1];
            if (cost < best) {
                best = cost;
                best_axis = k;
                best_bin = i;
            }
        }
    }
    double area = box4_half_area(&r->box);
    /* Leaf when small and splitting does not pay (NODE_COST per node visit
     * against 1 per triangle test). */
    if (n <= c->b->leaf_size && (best_axis < 0 || area <= 0 || NODE_COST + best / area >= (double)n)) return -1;
    int32_t mid = -1;
    if (best_axis >= 0) {
        /* Stable and branch-free (which side a triangle goes is as good as
         * random, so a branch on it would be mispredicted half the time):
         * each prim is written to the left part in place and to the right
         * part in the range's scratch, and only its side's count moves on. */
        prim* t = c->tmp + begin;
        int32_t nl = 0, nr = 0;
        float lo = clo[best_axis];
        for (int32_t i = begin; i < end; i++) {
            prim x = p[i];
            int right = bin_of(prim_c(&x, best_axis), lo, scale) > best_bin;
            p[begin + nl] = x;
            t[nr] = x;
            nl += !right;
            nr += right;
        }
        memcpy(p + begin + nl, t, sizeof(prim) * (size_t)nr);
        if (nl != 0 && nr != 0) mid = begin + nl;
    }
    if (mid < 0) {
        /* all centroids equal (or one side empty): halve */
        mid = begin + n / 2;
        range_box(p, begin, mid, &kids[0].box, &kids[0].cbox);
        range_box(p, mid, end, &kids[1].box, &kids[1].cbox);
    } else {
        /* The children's bounds are the unions of their bins' (exact). */
        for (int s = 0; s < 2; s++) {
            box4_empty(&kids[s].box);
            box4_empty(&kids[s].cbox);
        }
        for (int i = 0; i < BINS; i++) {
            range_task* kd = &kids[i <= best_bin ? 0 : 1];
            if (!bn.cnt[i]) continue;
            box4_union(&kd->box, &kd->box, &bn.box[i]);
            box4_union(&kd->cbox, &kd->cbox, &bn.cbox[i]);
        }
    }
    kids[0].begin = begin;
    kids[0].end = mid;
    kids[1].begin = mid;
    kids[1].end = end;
    return mid;
}

/* Build range `root` depth first into nb, its root at nb index root.node
 * (already allocated). Returns 0 on allocation failure. */
static int build_subtree(const build_ctx* c, node_buf* nb, const range_task* root) {
    range_task stack[128];
    int sp = 0;
    stack[sp++] = *root;
    while (sp > 0) {
        range_task r = stack[--sp];
        range_task kids[2];
        int32_t mid = split_range(c, &r, kids);
        hy_bvh_node* node = &nb->v[r.node];
        box4_aabb(&r.box, &node->box);
        if (mid < 0) {
            node->first = r.begin;
            node->count = r.end - r.begin;
            continue;
        }
        int32_t first = node_alloc(nb, 2);
        if (first < 0) return 0;
        node = &nb->v[r.node];
        node->first = first;
        node->count = 0;
        kids[0].node = first;
        kids[1].node = first + 1;
        /* The smaller side is taken next and the larger one waits: every
         * waiting range is at least as large as all work above it, so the
         * stack never holds more than log2(n) + 1 ranges, however lopsided
         * the splits (128 covers any int32 count). */
        if (mid - r.begin > r.end - mid) {
            stack[sp++] = kids[0];
            stack[sp++] = kids[1];
        } else {
            stack[sp++] = kids[1];
            stack[sp++] = kids[0];
        }
    }
    return 1;
}

typedef struct sub_ctx {
    const build_ctx* c;
    range_task* tasks;
    node_buf* bufs;
    int* ok;
} sub_ctx;

static void subtree_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    sub_ctx* s = vctx;
    for (int64_t i = begin; i < end; i++) {
        node_buf* nb = &s->bufs[i];
        nb->n = 0;
        range_task r = s->tasks[i];
        r.node = 0;
        if (node_alloc(nb, 1) != 0 || !build_subtree(s->c, nb, &r)) s->ok[i] = 0;
    }
}

/* Ranks and node ranges: topology only, so once per build. */
static void link_nodes(hy_bvh* b) {
    int32_t nt = b->triangle_count;
    for (int32_t i = 0; i < nt; i++) b->rank[b->order[i]] = i;
    for (int32_t i = b->node_count - 1; i >= 0; i--) {
        const hy_bvh_node* n = &b->nodes[i];
        if (n->count) {
            b->range[2 * i] = n->first;
            b->range[2 * i + 1] = n->first + n->count;
        } else {
            b->range[2 * i] = b->range[2 * n->first];
            b->range[2 * i + 1] = b->range[2 * (n->first + 1) + 1];
        }
    }
}

/* Slots in leaf order, and their twins' slots (topology and order only,
 * so once per build; after link_nodes, which makes the ranks), in
 * parallel blocks; the owned edges' offsets follow in one serial pass.
 * Slots read triangles in leaf order, all over the mesh: those a few
 * ahead are asked for early (hints only). */
#define SLOT_AHEAD 8
static void slots_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    hy_bvh* b = vctx;
    for (int64_t i = begin; i < end; i++) {
        if (i + SLOT_AHEAD < end) {
            int32_t ta = b->order[i + SLOT_AHEAD];
            __builtin_prefetch(b->triangles + 3 * (int64_t)ta);
            __builtin_prefetch(b->twin + 3 * (int64_t)ta);
            __builtin_prefetch(b->owned + ta);
        }
        int32_t t = b->order[i];
        hy_bvh_slot* s = &b->slots[i];
        for (int k = 0; k < 3; k++) {
            s->v[k] = b->triangles[3 * t + k];
            s->id[k] = b->vertex_ids ? b->vertex_ids[s->v[k]] : s->v[k];
            int32_t u = b->twin[3 * t + k];
            b->slot_twin[3 * i + k] = u >= 0 ? b->rank[u] : u;
        }
        s->owned = b->owned[t];
        s->nv = s->ne = 0;
        for (int k = 0; k < 3; k++) {
            s->vk[k] = s->ek[k] = 0;
            if (s->owned & HY_BVH_OWN_VERTEX(k)) s->vk[s->nv++] = (uint8_t)k;
            if (s->owned & HY_BVH_OWN_EDGE(k)) s->ek[s->ne++] = (uint8_t)k;
        }
    }
}

static void make_slots(hy_bvh* b, hy_pool* pool) {
    if (pool)
        hy_pool_for(pool, b->triangle_count, 8192, slots_block, b);
    else
        slots_block(b, 0, b->triangle_count, 0, 0);
    int32_t feature = 0;
    for (int32_t i = 0; i < b->triangle_count; i++) {
        b->slots[i].feature = feature;
        feature += b->slots[i].ne + b->slots[i].nv;
    }
}

/* Per step: triangle and owned-feature gate boxes in leaf order (unions of
 * their vertices', hy_fbox_union; an owned vertex's a copy of its box),
 * and when culling the triangles' normal
 * coefficients (leaf order too: the leaf cones read them in sequence). */
#define LEAF_AHEAD 8
static void leaf_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    box_ctx* c = vctx;
    hy_bvh* b = c->b;
    const hy_fbox* vf = b->vertex_fboxes;
    const double* x1 = c->x1 ? c->x1 : c->x0;
    for (int64_t i = begin; i < end; i++) {
        const hy_bvh_slot* s = &b->slots[i];
        /* Slots are in leaf order, vertices in mesh order: the reads of
         * their boxes and positions miss the cache, so those of a slot a
         * few ahead are asked for now (hints only). */
        if (i + LEAF_AHEAD < end) {
            const int32_t* v = b->slots[i + LEAF_AHEAD].v;
            for (int k = 0; k < 3; k++) {
                __builtin_prefetch(&vf[v[k]]);
                if (c->cull) {
                    __builtin_prefetch(c->x0 + 3 * (int64_t)v[k]);
                    __builtin_prefetch(x1 + 3 * (int64_t)v[k]);
                }
            }
        }
        if (c->cull) triangle_normals(c->x0, x1, s->v, &b->triangle_normals[i]);
        hy_fbox_union(&b->leaf_fboxes[i], &vf[s->v[0]], &vf[s->v[1]]);
        hy_fbox_union(&b->leaf_fboxes[i], &b->leaf_fboxes[i], &vf[s->v[2]]);
        const hy_fbox* lf = &b->leaf_fboxes[i];
        float* soa = b->leaf_soa + i;
        int64_t st = b->leaf_soa_stride;
        for (int k = 0; k < 3; k++) {
            soa[k * st] = lf->lo0[k];
            soa[(3 + k) * st] = lf->hi0[k];
            soa[(6 + k) * st] = lf->lo1[k];
            soa[(9 + k) * st] = lf->hi1[k];
        }
        hy_fbox* f = &b->feature_fboxes[s->feature];
        for (int m = 0; m < s->ne; m++) {
            int k = s->ek[m];
            hy_fbox_union(&f[m], &vf[s->v[k]], &vf[s->v[k == 2 ? 0 : k + 1]]);
        }
        for (int m = 0; m < s->nv; m++) f[s->ne + m] = vf[s->v[s->vk[m]]];
    }
}

static void leaf_data(hy_bvh* b, const double* x0, const double* x1, hy_pool* pool) {
    box_ctx c = {b, x0, x1, 0.0, culling(b)};
    if (pool)
        hy_pool_for(pool, b->triangle_count, 8192, leaf_block, &c);
    else
        leaf_block(&c, 0, b->triangle_count, 0, 0);
}

static void sweep_nodes(hy_bvh* b, int boxes, hy_pool* pool);
static void mark_self_free(hy_bvh* b, const double* x0, const double* x1, hy_pool* pool);
static void finish_tree(hy_bvh* b, const double* x0, const double* x1, int boxes, hy_pool* pool);

/* One split of the build's top round, run on the pool. */
typedef struct top_split {
    range_task r, kids[2];
    int32_t mid;
} top_split;

typedef struct top_job {
    const build_ctx* c;
    top_split* sp;
} top_job;

static void top_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    top_job* j = vctx;
    for (int64_t q = begin; q < end; q++) {
        top_split* t = &j->sp[q];
        t->mid = split_range(j->c, &t->r, t->kids);
    }
}

hy_status hy_bvh_build(hy_bvh* b, const double* x0, const double* x1, double thickness, hy_pool* pool) {
    if (!b || !x0) return hy_fail(HY_ERR_INVALID_ARG, "bvh build: NULL argument");
    touch(b);
    primitive_boxes(b, x0, x1, thickness, pool);
    int32_t nt = b->triangle_count;
    build_ctx c = {b, aligned_alloc(64, sizeof(prim) * 2 * (size_t)nt), NULL, pool};
    if (!c.p) return hy_fail(HY_ERR_NOMEM, "bvh build: out of memory");
    c.tmp = c.p + nt;
    for (int32_t t = 0; t < nt; t++) prim_make(&b->triangle_boxes[t], t, &c.p[t]);

    /* Top: split breadth first until SUBTREE_TASKS open ranges; the root's
     * binning runs on the pool, later rounds split their ranges in
     * parallel. */
    node_buf top = {b->nodes, 0, 2 * nt};
    range_task open[2 * SUBTREE_TASKS + 2];
    int nopen = 0;
    node_alloc(&top, 1);
    open[0].begin = 0;
    open[0].end = nt;
    open[0].node = 0;
    range_box(c.p, 0, nt, &open[0].box, &open[0].cbox);
    nopen = 1;
    range_task tasks[2 * SUBTREE_TASKS + 2];
    int ntasks = 0;
    while (nopen > 0) {
        /* Expand every open range this round (deterministic breadth-first).
         * Which ranges split is known before splitting: a range of at least
         * SUBTREE_MIN triangles makes two children (unless leaf_size is at
         * least that, when it may become a leaf instead). */
        range_task next[2 * SUBTREE_TASKS + 2];
        top_split sp[2 * SUBTREE_TASKS + 2];
        int nnext = 0, nsplit = 0;
        for (int i = 0; i < nopen; i++) {
            const range_task* r = &open[i];
            if (r->end - r->begin < SUBTREE_MIN || nopen + nnext + ntasks >= SUBTREE_TASKS) {
                tasks[ntasks++] = *r;
                continue;
            }
            sp[nsplit++].r = *r;
            nnext += 2;
        }
        /* One range: its binning runs on the pool. Several (disjoint
         * ranges of c.p): one per block, each binned serially. */
        if (nsplit == 1 || !pool) {
            for (int i = 0; i < nsplit; i++) sp[i].mid = split_range(&c, &sp[i].r, sp[i].kids);
        } else {
            build_ctx serial = c;
            serial.pool = NULL;
            top_job tj = {&serial, sp};
            hy_pool_for(pool, nsplit, 1, top_block, &tj);
        }
        nnext = 0;
        for (int i = 0; i < nsplit; i++) {
            const range_task* r = &sp[i].r;
            hy_bvh_node* node = &top.v[r->node];
            box4_aabb(&r->box, &node->box);
            if (sp[i].mid < 0) { /* only with a leaf_size >= SUBTREE_MIN */
                node->first = r->begin;
                node->count = r->end - r->begin;
                continue;
            }
            int32_t first = node_alloc(&top, 2);
            node->first = first;
            node->count = 0;
            sp[i].kids[0].node = first;
            sp[i].kids[1].node = first + 1;
            next[nnext++] = sp[i].kids[0];
            next[nnext++] = sp[i].kids[1];
        }
        memcpy(open, next, sizeof(range_task) * (size_t)nnext);
        nopen = nnext;
    }

    /* Subtrees in parallel, each into its own array. */
    node_buf* bufs = calloc((size_t)(ntasks ? ntasks : 1), sizeof *bufs);
    int* ok = malloc(sizeof(int) * (size_t)(ntasks ? ntasks : 1));
    hy_status st = HY_OK;
    if (!bufs || !ok) st = hy_fail(HY_ERR_NOMEM, "bvh build: out of memory");
    if (st == HY_OK) {
        for (int i = 0; i < ntasks; i++) ok[i] = 1;
        sub_ctx s = {&c, tasks, bufs, ok};
        if (pool)
            hy_pool_for(pool, ntasks, 1, subtree_block, &s);
        else
            subtree_block(&s, 0, ntasks, 0, 0);
        /* Splice in task order: local root -> its placeholder, local node
         * i > 0 -> base + i - 1 (children stay after their parents). */
        int32_t n = top.n;
        HY_ASSERT(top.n <= HY_BVH_TOP_MAX && ntasks <= HY_BVH_TOP_MAX);
        b->top_count = top.n;
        b->sub_count = ntasks;
        memset(b->top_root, 0, sizeof b->top_root);
        for (int i = 0; i < ntasks && st == HY_OK; i++) {
            if (!ok[i]) {
                st = hy_fail(HY_ERR_NOMEM, "bvh build: out of memory");
                break;
            }
            node_buf* nb = &bufs[i];
            int32_t base = n;
            b->sub[3 * i] = tasks[i].node;
            b->sub[3 * i + 1] = base;
            b->sub[3 * i + 2] = base + nb->n - 1;
            b->top_root[tasks[i].node] = 1;
            for (int32_t j = 0; j < nb->n; j++) {
                hy_bvh_node nd = nb->v[j];
                if (nd.count == 0) nd.first = base + nd.first - 1;
                b->nodes[j == 0 ? tasks[i].node : base + j - 1] = nd;
            }
            n += nb->n - 1;
        }
        b->node_count = n;
    }
    if (bufs)
        for (int i = 0; i < ntasks; i++) free(bufs[i].v);
    free(bufs);
    free(ok);
    for (int32_t i = 0; i < nt; i++) b->order[i] = c.p[i].id;
    free(c.p);
    if (st != HY_OK) {
        b->node_count = 0;
        return st;
    }
    HY_ASSERT(b->node_count <= 2 * nt);
    finish_tree(b, x0, x1, 0, pool);
    return HY_OK;
}

/* The rest of a build once nodes, order and the top/subtree split are set
 * and the primitive boxes made: what depends on the order, the per-step
 * leaf data, the bottom-up sweep (node boxes too when `boxes`: a build has
 * made them already), the culling marks, and the cost the tree's decay is
 * measured against. */
static void finish_tree(hy_bvh* b, const double* x0, const double* x1, int boxes, hy_pool* pool) {
    link_nodes(b);
    make_slots(b, pool);
    for (int32_t i = 0; i < b->node_count; i++) {
        b->spans[i].first = b->nodes[i].first;
        b->spans[i].count = b->nodes[i].count;
    }
    leaf_data(b, x0, x1, pool);
    sweep_nodes(b, boxes, pool);
    mark_self_free(b, x0, x1, pool);
    b->built_cost = b->cost;
    b->builds++;
    b->refitted = 0;
}

hy_status hy_bvh_build_like(hy_bvh* b, const hy_bvh* like, const double* x0, const double* x1, double thickness,
                            hy_pool* pool) {
    if (!b || !like || !x0) return hy_fail(HY_ERR_INVALID_ARG, "bvh build like: NULL argument");
    int32_t nt = b->triangle_count;
    if (like->node_count == 0) return hy_fail(HY_ERR_INVALID_ARG, "bvh build like: the model tree is not built");
    if (like->triangle_count != nt || like->vertex_count != b->vertex_count ||
        memcmp(like->triangles, b->triangles, sizeof(int32_t) * 3 * (size_t)nt) != 0)
        return hy_fail(HY_ERR_INVALID_ARG, "bvh build like: the two meshes' triangles differ");
    touch(b);
    primitive_boxes(b, x0, x1, thickness, pool);
    memcpy(b->nodes, like->nodes, sizeof(hy_bvh_node) * (size_t)like->node_count);
    b->node_count = like->node_count;
    b->leaf_size = like->leaf_size; /* the build setting the copied leaves were made under */
    memcpy(b->order, like->order, sizeof(int32_t) * (size_t)nt);
    b->top_count = like->top_count;
    b->sub_count = like->sub_count;
    memcpy(b->sub, like->sub, sizeof b->sub);
    memcpy(b->top_root, like->top_root, sizeof b->top_root);
    finish_tree(b, x0, x1, 1, pool);
    return HY_OK;
}

/* ---- self-collision culling: normal cones and contours */

/* The star-contour test of node i, whose cone passed: 1 when its patch's
 * boundary, projected along the cone axis, stays one simple closed curve
 * through the whole step (see hy_bvh.self_cull). Coordinates: a linear map
 * to the plane whose kernel is the axis, oriented so that a triangle whose
 * normal lies in the cone projects counter-clockwise, applied to x - r at
 * each end of the step (r: a contour vertex at that end; the common
 * translation changes no contact). With p_s the contour's mean at end s,
 * every contour half-edge (a, b) must keep p strictly on its left: the
 * cross product of a(t) - p(t) and b(t) - p(t), a quadratic in t, has
 * three Bernstein coefficients, all above the rounding bound. Then p is
 * never on the contour, so its winding number around p stays what it is at
 * t = 0, and every half-ray from p crosses the contour that many times
 * (every crossing runs the same way): one crossing means one simple
 * star-shaped curve. Interior edges must join two triangles that run them
 * in opposite directions (hy_bvh.twin): a patch with a non-manifold or
 * inconsistently wound edge fails. */
typedef struct contour_buf {
    int32_t* v; /* 2 per half-edge: from, to */
    int64_t n, cap;
    double* p; /* with a thickness: 8 per half-edge (its ends in the map, both times) */
    int64_t pcap;
} contour_buf;

/* With a thickness d > 0, contour_apart's limit on the contour's length:
 * its test is quadratic in it (a longer contour leaves the node to its
 * children). */
#define CONTOUR_APART_MAX 256

static inline double min4(double a, double b, double c, double e) {
    double x = a < b ? a : b, y = c < e ? c : e;
    return x < y ? x : y;
}
static inline double max4(double a, double b, double c, double e) {
    double x = a > b ? a : b, y = c > e ? c : e;
    return x > y ? x : y;
}

/* 1 when the 2D differences w[0..3] (vertex minus the two ends of an
 * edge, at t = 0 and t = 1) are all beyond d along direction (a, b): then
 * along it the vertex stays more than d from every point of the edge over
 * the whole step (both are linear in t and in the point's place on the
 * edge, so the four corners bound them). errw bounds each w's error per
 * unit of |a| + |b|. */
static int apart_2d(const double w[4][2], double a, double b, double d, double errw) {
    double an = fabs(a) + fabs(b);
    if (!(an > 1e-280 && an < 1e280)) return 0;
    double thr = d * sqrt(a * a + b * b) * (1.0 + 1e-9) + an * errw + 1e-300;
    int pos = 0, neg = 0;
    for (int k = 0; k < 4; k++) {
        double f = a * w[k][0] + b * w[k][1];
        pos += f > thr;
        neg += f < -thr;
    }
    return pos == 4 || neg == 4;
}

/* The contour of a star-shaped node (contour_star, which left in cb->p
 * each half-edge's ends in its map's coordinates and gives the bound D),
 * with thickness d > 0: 1 when every contour vertex stays more than d
 * (projected along the cone axis) from every contour edge it is not on,
 * over the whole step. With the projection one to one and every
 * triangle's projected altitudes above d (the cone's g), no two features
 * of the patch that share no vertex then come within d: from a vertex v
 * to the nearest point of a triangle it is not on, the projected segment
 * either leaves v's triangles through an edge opposite v (an altitude), or
 * leaves the patch at v and comes back across a contour edge not on v; two
 * edges' nearest points include an end of one (see hy_bvh.self_cull).
 * Directions tried per pair: the map's two axes (first as a box test),
 * the edge's normal, and from its midpoint to the vertex (in the plane,
 * both ends summed). */
static int contour_apart(const contour_buf* cb, double D, double d) {
    /* Rounding (contour_star's argument): a coordinate, an offset from
     * the contour's mean, is within 28 u D of the exact projection's, a
     * difference of two within 56 u D; the rows are unit and orthogonal to
     * the axis to a few eps, which moves a difference (at most 4 D long) by
     * less than 16 u D. 256 u D per unit of |a| + |b| leaves room for the
     * rest. */
    double errw = 256.0 * (DBL_EPSILON / 2) * D;
    /* Boxes further apart than this along an axis keep every pair of
     * their points apart along it (apart_2d with a unit direction). */
    double gap = d * (1.0 + 1e-9) + errw + 1e-300;
    int64_t n = cb->n;
    for (int64_t qe = 0; qe < n; qe++) {
        int32_t va = cb->v[2 * qe], vb = cb->v[2 * qe + 1];
        const double* A = cb->p + 8 * qe; /* x, y at t = 0, then at t = 1 */
        const double* B = A + 4;
        double exlo = min4(A[0], A[2], B[0], B[2]), exhi = max4(A[0], A[2], B[0], B[2]);
        double eylo = min4(A[1], A[3], B[1], B[3]), eyhi = max4(A[1], A[3], B[1], B[3]);
        double s0 = (B[0] - A[0]) + (B[2] - A[2]), s1 = (B[1] - A[1]) + (B[3] - A[3]);
        for (int64_t qv = 0; qv < n; qv++) {
            const double* V = cb->p + 8 * qv; /* its from-vertex */
            if ((V[0] < V[2] ? V[0] : V[2]) - exhi > gap || exlo - (V[0] > V[2] ? V[0] : V[2]) > gap ||
                (V[1] < V[3] ? V[1] : V[3]) - eyhi > gap || eylo - (V[1] > V[3] ? V[1] : V[3]) > gap)
                continue;
            int32_t v = cb->v[2 * qv];
            if (v == va || v == vb) continue;
            double w[4][2] = {{V[0] - A[0], V[1] - A[1]},
                              {V[0] - B[0], V[1] - B[1]},
                              {V[2] - A[2], V[3] - A[3]},
                              {V[2] - B[2], V[3] - B[3]}};
            if (apart_2d(w, 1.0, 0.0, d, errw) || apart_2d(w, 0.0, 1.0, d, errw) ||
                apart_2d(w, -s1, s0, d, errw))
                continue;
            double m0 = (w[0][0] + w[1][0]) + (w[2][0] + w[3][0]), m1 = (w[0][1] + w[1][1]) + (w[2][1] + w[3][1]);
            if (apart_2d(w, m0, m1, d, errw)) continue;
            return 0;
        }
    }
    return 1;
}

static int contour_star(const hy_bvh* b, int32_t i, const double* x0, const double* x1, contour_buf* cb) {
    int32_t lo = b->range[2 * i], hi = b->range[2 * i + 1];
    cb->n = 0;
    for (int32_t r = lo; r < hi; r++) {
        const int32_t* f = b->slots[r].v;
        for (int k = 0; k < 3; k++) {
            int32_t u = b->slot_twin[3 * r + k]; /* the twin's slot, or -1 / -2 */
            if (u == -2) return 0;
            if (u >= lo && u < hi) continue; /* interior */
            if (cb->n == cb->cap) {
                int64_t cap = cb->cap ? 2 * cb->cap : 1024;
                int32_t* v = realloc(cb->v, sizeof(int32_t) * 2 * (size_t)cap);
                if (!v) return 0; /* no room: no cull */
                cb->v = v;
                cb->cap = cap;
            }
            cb->v[2 * cb->n] = f[k];
            cb->v[2 * cb->n + 1] = f[k == 2 ? 0 : k + 1];
            cb->n++;
        }
    }
    if (cb->n < 3) return 0; /* closed (or nothing): no contour to judge */
    /* The map: rows e1, e2 with e1 x e2 along the axis. */
    const double* ax = b->cones[i].axis;
    int m = 0;
    for (int k = 1; k < 3; k++)
        if (fabs(ax[k]) < fabs(ax[m])) m = k;
    double unit[3] = {0, 0, 0}, e1[3], e2[3];
    unit[m] = 1.0;
    cross3(ax, unit, e1);
    double l1 = norm3(e1);
    for (int k = 0; k < 3; k++) e1[k] /= l1;
    cross3(ax, e1, e2);
    /* e1 x e2 = e1 x (ax x e1) = ax (e1 . e1) - e1 (e1 . ax): along ax */
    const double* xs[2] = {x0, x1 ? x1 : x0};
    double ref[2][3], pm[2][2] = {{0, 0}, {0, 0}}, D = 0;
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 3; k++) ref[s][k] = xs[s][3 * (size_t)cb->v[0] + (size_t)k];
    for (int64_t q = 0; q < 2 * cb->n; q++)
        for (int s = 0; s < 2; s++) {
            const double* x = xs[s] + 3 * (size_t)cb->v[q];
            double d[3] = {x[0] - ref[s][0], x[1] - ref[s][1], x[2] - ref[s][2]};
            for (int k = 0; k < 3; k++) D = fmax(D, fabs(d[k]));
            pm[s][0] += d[0] * e1[0] + d[1] * e1[1] + d[2] * e1[2];
            pm[s][1] += d[0] * e2[0] + d[1] * e2[1] + d[2] * e2[2];
        }
    for (int s = 0; s < 2; s++) {
        pm[s][0] /= (double)(2 * cb->n);
        pm[s][1] /= (double)(2 * cb->n);
    }
    if (!(D > 0 && D < 1e150)) return 0;
    /* Rounding: a projected coordinate (a difference, then a 3-term dot
     * with near-unit rows) is within 8 u |d|_1 <= 24 u D of the map's exact
     * value and at most 1.8 D in size, so a point's offset from p (p is
     * whatever was computed: any point will do) is within 28 u D, at most
     * 3.6 D; a 2 x 2 cross product of such offsets, and the mean of two,
     * errs by less than 500 u D^2. The bound doubles that, for the
     * rounding of the bound itself and of the contour's points, which are
     * vertex positions like the rest. */
    const double bound = 1024.0 * (DBL_EPSILON / 2) * D * D * (1.0 + 1e-6) + 1e-300;
    /* With a thickness the projected ends are kept for contour_apart. */
    int apart = b->thickness > 0;
    if (apart) {
        if (cb->n > CONTOUR_APART_MAX) return 0;
        if (cb->pcap < 8 * cb->n) {
            double* p = realloc(cb->p, sizeof(double) * 8 * (size_t)cb->n);
            if (!p) return 0; /* no room: no cull */
            cb->p = p;
            cb->pcap = 8 * cb->n;
        }
    }
    int64_t crossings = 0;
    for (int64_t q = 0; q < cb->n; q++) {
        double A[2][2], B[2][2];
        for (int s = 0; s < 2; s++) {
            const double* xa = xs[s] + 3 * (size_t)cb->v[2 * q];
            const double* xb = xs[s] + 3 * (size_t)cb->v[2 * q + 1];
            double da[3] = {xa[0] - ref[s][0], xa[1] - ref[s][1], xa[2] - ref[s][2]};
            double db[3] = {xb[0] - ref[s][0], xb[1] - ref[s][1], xb[2] - ref[s][2]};
            A[s][0] = (da[0] * e1[0] + da[1] * e1[1] + da[2] * e1[2]) - pm[s][0];
            A[s][1] = (da[0] * e2[0] + da[1] * e2[1] + da[2] * e2[2]) - pm[s][1];
            B[s][0] = (db[0] * e1[0] + db[1] * e1[1] + db[2] * e1[2]) - pm[s][0];
            B[s][1] = (db[0] * e2[0] + db[1] * e2[1] + db[2] * e2[2]) - pm[s][1];
        }
        if (apart) {
            double* P = cb->p + 8 * q;
            P[0] = A[0][0], P[1] = A[0][1], P[2] = A[1][0], P[3] = A[1][1];
            P[4] = B[0][0], P[5] = B[0][1], P[6] = B[1][0], P[7] = B[1][1];
        }
        double c0 = A[0][0] * B[0][1] - A[0][1] * B[0][0];
        double c2 = A[1][0] * B[1][1] - A[1][1] * B[1][0];
        double c1 = 0.5 * ((A[0][0] * B[1][1] - A[0][1] * B[1][0]) + (A[1][0] * B[0][1] - A[1][1] * B[0][0]));
        if (!(c0 > bound && c1 > bound && c2 > bound)) return 0; /* NaN fails too */
        /* the half-ray from p along +e1 at t = 0: counter-clockwise edges
         * cross it upwards (and every upward crossing is at x > 0) */
        crossings += (A[0][1] <= 0) && (B[0][1] > 0);
    }
    if (crossings != 1) return 0;
    return apart ? contour_apart(cb, D, b->thickness) : 1;
}

/* With a thickness d > 0: every projected altitude of the node's
 * triangles stays above d over the step (hy_bvh_cone.g). */
static int altitudes_ok(const hy_bvh* b, int32_t i) {
    double d = b->thickness;
    if (!(d > 0)) return 1;
    const hy_bvh_cone* c = &b->cones[i];
    return c->c * c->g * (1.0 - 1e-6) > d;
}

/* self_free below node `root`, top down: a node whose cone is under 90
 * degrees and whose contour passes contour_star is marked and its subtree
 * is never looked at (traversal does not go below it); else its children
 * are tried. With `top`, the descent stops at the build's subtree roots
 * and lists them in subs[] (*nsubs) instead. */
static void mark_below(hy_bvh* b, int32_t root, const double* x0, const double* x1, contour_buf* cb, int top,
                       int32_t* subs, int32_t* nsubs, int reuse) {
    int32_t stack[128];
    int sp = 0;
    stack[sp++] = root;
    uint8_t* memo = b->cull_test;
    while (sp > 0) {
        int32_t i = stack[--sp];
        const hy_bvh_node* n = &b->nodes[i];
        if (top && i < b->top_count && b->top_root[i]) {
            subs[(*nsubs)++] = i;
            continue;
        }
        /* a node's test reads its own cone and triangles only: one whose
         * triangles did not move since it was made (its memo is cleared
         * when they do) passes or fails again */
        int pass;
        if (reuse && memo && memo[i]) {
            pass = memo[i] == 1;
        } else {
            pass = cone_ok(&b->cones[i]) && altitudes_ok(b, i) && contour_star(b, i, x0, x1, cb);
            if (memo) memo[i] = pass ? 1 : 2;
        }
        if (pass) {
            b->self_free[i] = 1;
            continue;
        }
        if (n->count == 0 && sp + 2 <= 128) { /* (deeper: nothing culled there) */
            stack[sp++] = n->first + 1;
            stack[sp++] = n->first;
        }
    }
}

typedef struct mark_ctx {
    hy_bvh* b;
    const double* x0;
    const double* x1;
    const int32_t* subs;
} mark_ctx;

static void mark_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    mark_ctx* c = vctx;
    contour_buf cb = {NULL, 0, 0, NULL, 0};
    for (int64_t q = begin; q < end; q++) mark_below(c->b, c->subs[q], c->x0, c->x1, &cb, 0, NULL, NULL, 0);
    free(cb.v);
    free(cb.p);
}

/* self_free for the whole tree: the top serially, then the subtrees it
 * did not settle in parallel (each node's mark depends on its own data
 * and its ancestors' only, so the marks do not depend on the pool).
 * Without culling every mark is 0. */
static void mark_self_free(hy_bvh* b, const double* x0, const double* x1, hy_pool* pool) {
    memset(b->self_free, 0, (size_t)b->node_count);
    /* every test made afresh (hy_bvh_refit_vertices reuses them); the
     * nodes not reached keep none */
    if (b->cull_test) memset(b->cull_test, 0, (size_t)b->node_count);
    if (!culling(b)) return;
    int32_t subs[HY_BVH_TOP_MAX];
    int32_t nsubs = 0;
    contour_buf cb = {NULL, 0, 0, NULL, 0};
    mark_below(b, 0, x0, x1, &cb, 1, subs, &nsubs, 0);
    free(cb.v);
    free(cb.p);
    mark_ctx c = {b, x0, x1, subs};
    if (pool && nsubs > 1)
        hy_pool_for(pool, nsubs, 1, mark_block, &c);
    else
        mark_block(&c, 0, nsubs, 0, 0);
}

/* ---- refit */

/* One reverse sweep (children sit after parents, so it is bottom-up):
 * node boxes when `boxes`, cones when culling, and the SAH
 * cost. */
/* One node of the sweep; returns its term of the SAH cost sum. */
static double sweep_node(hy_bvh* b, int boxes, int cull, int32_t i) {
    hy_bvh_node* n = &b->nodes[i];
    hy_bvh_cone* cone = &b->cones[i];
    hy_fbox* fb = &b->node_fboxes[i];
    double term;
    if (n->count) {
        const int32_t* ids = b->order + n->first;
        const hy_fbox* lf = b->leaf_fboxes + n->first;
        *fb = lf[0];
        for (int32_t j = 1; j < n->count; j++) hy_fbox_union(fb, fb, &lf[j]);
        if (boxes) {
            n->box = b->triangle_boxes[ids[0]];
            for (int32_t j = 1; j < n->count; j++) hy_aabb_union(&n->box, &n->box, &b->triangle_boxes[ids[j]]);
        }
        if (cull) leaf_cone(b->triangle_normals + n->first, n->count, cone);
        term = hy_aabb_half_area(&n->box) * (double)n->count;
    } else {
        if (boxes) hy_aabb_union(&n->box, &b->nodes[n->first].box, &b->nodes[n->first + 1].box);
        hy_fbox_union(fb, &b->node_fboxes[n->first], &b->node_fboxes[n->first + 1]);
        if (cull) {
            cone_merge(&b->cones[n->first], &b->cones[n->first + 1], cone);
            double ga = b->cones[n->first].g, gb = b->cones[n->first + 1].g;
            cone->g = ga < gb ? ga : gb;
        }
        term = hy_aabb_half_area(&n->box);
    }
    b->node_area[i] = hy_aabb_half_area(&n->box);
    return term;
}

typedef struct sweep_ctx {
    hy_bvh* b;
    int boxes, cull;
} sweep_ctx;

/* Subtree s of the build: its nodes bottom-up, then its root; the cost
 * terms summed per subtree. */
static void sweep_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    sweep_ctx* c = vctx;
    hy_bvh* b = c->b;
    for (int64_t s = begin; s < end; s++) {
        const int32_t* sub = b->sub + 3 * s;
        double sum = 0;
        for (int32_t i = sub[2] - 1; i >= sub[1]; i--) sum += sweep_node(b, c->boxes, c->cull, i);
        sum += sweep_node(b, c->boxes, c->cull, sub[0]);
        b->sub_cost[s] = sum;
    }
}

/* Reverse sweep (children sit after parents, so it is bottom-up): node
 * boxes when `boxes`, cones when culling, the gates, and the
 * SAH cost. The subtrees of the build run in parallel, then the nodes
 * above them; the cost adds up per subtree in subtree order, then the top,
 * so it does not depend on the pool either. */
static void sweep_nodes(hy_bvh* b, int boxes, hy_pool* pool) {
    sweep_ctx c = {b, boxes, culling(b)};
    if (pool && b->sub_count > 1)
        hy_pool_for(pool, b->sub_count, 1, sweep_block, &c);
    else
        sweep_block(&c, 0, b->sub_count, 0, 0);
    double sum = 0;
    for (int32_t s = 0; s < b->sub_count; s++) sum += b->sub_cost[s];
    for (int32_t i = b->top_count - 1; i >= 0; i--)
        if (!b->top_root[i]) sum += sweep_node(b, boxes, c.cull, i);
    double root = hy_aabb_half_area(&b->nodes[0].box);
    b->cost = root > 0 ? sum / root : (double)b->node_count;
}

void hy_bvh_refit(hy_bvh* b, const double* x0, const double* x1, double thickness, hy_pool* pool) {
    if (!b || !x0 || b->node_count == 0) return;
    touch(b);
    primitive_boxes(b, x0, x1, thickness, pool);
    leaf_data(b, x0, x1, pool);
    sweep_nodes(b, 1, pool);
    mark_self_free(b, x0, x1, pool);
    b->refits++;
    b->refitted = 1;
}

/* What hy_bvh_refit_vertices needs beyond the tree: the vertices'
 * triangles (topology: made once), each node's parent and each slot's leaf
 * (made again after a build), the per-node test memo and the scratch.
 * 0 when out of memory. */
static int partial_ready(hy_bvh* b) {
    size_t nt = (size_t)b->triangle_count, nv = (size_t)b->vertex_count, nn = 2 * nt + 1;
    if (!b->vertex_tri) {
        int32_t* start = calloc(nv + 2, sizeof(int32_t));
        int32_t* tri = malloc(sizeof(int32_t) * (3 * nt + 1));
        if (!start || !tri) {
            free(start);
            free(tri);
            return 0;
        }
        for (size_t i = 0; i < 3 * nt; i++) start[b->triangles[i] + 2]++;
        for (size_t v = 0; v < nv; v++) start[v + 2] += start[v + 1];
        for (size_t t = 0; t < nt; t++)
            for (int k = 0; k < 3; k++) tri[start[b->triangles[3 * t + k] + 1]++] = (int32_t)t;
        b->vertex_tri_start = start;
        b->vertex_tri = tri;
    }
    if (!b->node_parent) {
        b->node_parent = malloc(sizeof(int32_t) * nn);
        b->slot_leaf = malloc(sizeof(int32_t) * (nt + 1));
        b->node_dirty = calloc(nn, 1);
        b->tri_dirty = calloc(nt + 1, 1);
        b->dirty_nodes = malloc(sizeof(int32_t) * nn);
        b->dirty_tris = malloc(sizeof(int32_t) * (nt + 1));
        if (!b->node_parent || !b->slot_leaf || !b->node_dirty || !b->tri_dirty || !b->dirty_nodes ||
            !b->dirty_tris) {
            free(b->node_parent);
            free(b->slot_leaf);
            free(b->node_dirty);
            free(b->tri_dirty);
            free(b->dirty_nodes);
            free(b->dirty_tris);
            b->node_parent = b->slot_leaf = b->dirty_nodes = b->dirty_tris = NULL;
            b->node_dirty = b->tri_dirty = NULL;
            return 0;
        }
        b->partial_builds = -1;
    }
    if (b->partial_builds != b->builds) {
        b->node_parent[0] = -1;
        for (int32_t i = 0; i < b->node_count; i++) {
            const hy_bvh_node* n = &b->nodes[i];
            if (n->count)
                for (int32_t j = 0; j < n->count; j++) b->slot_leaf[n->first + j] = i;
            else
                b->node_parent[n->first] = b->node_parent[n->first + 1] = i;
        }
        b->partial_builds = b->builds;
    }
    return 1;
}

void hy_bvh_refit_vertices(hy_bvh* b, const double* x0, const double* x1, double thickness, const int32_t* moved,
                           int32_t count, hy_pool* pool) {
    if (!b || !x0 || b->node_count == 0) return;
    double th = thickness > 0 ? thickness : 0.0;
    int cull = culling(b);
    /* the tests' memo (all 0, "not made", until a marking fills it) */
    if (cull && !b->cull_test) b->cull_test = calloc(2 * (size_t)b->triangle_count + 1, 1);
    /* (a build's node boxes are its own, not a refit's: the first update
     * after it refits them all) */
    if (!b->refitted || b->relative || !x1 || th != b->thickness || !partial_ready(b)) {
        hy_bvh_refit(b, x0, x1, thickness, pool);
        return;
    }
    touch(b);
    box_ctx c = {b, x0, x1, th > 0 ? 0.5 * th : 0.0, cull};
    box_ctx lc = {b, x0, x1, 0.0, cull};
    int32_t ntri = 0, nnode = 0;
    for (int32_t q = 0; q < count; q++) {
        int32_t v = moved[q];
        if (v < 0 || v >= b->vertex_count) continue;
        vertex_boxes_block(&c, v, v + 1, 0, 0);
        for (int32_t k = b->vertex_tri_start[v]; k < b->vertex_tri_start[v + 1]; k++) {
            int32_t t = b->vertex_tri[k];
            if (b->tri_dirty[t]) continue;
            b->tri_dirty[t] = 1;
            b->dirty_tris[ntri++] = t;
        }
    }
    for (int32_t q = 0; q < ntri; q++) {
        int32_t t = b->dirty_tris[q], i = b->rank[t];
        triangle_boxes_block(&c, t, t + 1, 0, 0);
        leaf_block(&lc, i, i + 1, 0, 0);
        for (int32_t n = b->slot_leaf[i]; n >= 0 && !b->node_dirty[n]; n = b->node_parent[n]) {
            b->node_dirty[n] = 1;
            b->dirty_nodes[nnode++] = n;
            if (b->cull_test) b->cull_test[n] = 0;
        }
    }
    /* bottom-up: children sit after their parents */
    for (int32_t i = b->node_count - 1, q = 0; q < nnode && i >= 0; i--)
        if (b->node_dirty[i]) {
            sweep_node(b, 1, cull, i);
            q++;
        }
    /* the cost, summed as sweep_nodes sums it (per subtree, then the top)
     * from every node's half area: a subtree none of whose nodes moved
     * keeps its sum */
    double sum = 0;
    for (int32_t s = 0; s < b->sub_count; s++) {
        const int32_t* sub = b->sub + 3 * s;
        if (b->node_dirty[sub[0]]) {
            double ss = 0;
            for (int32_t i = sub[2] - 1; i >= sub[1]; i--)
                ss += b->node_area[i] * (b->nodes[i].count ? (double)b->nodes[i].count : 1.0);
            const hy_bvh_node* r = &b->nodes[sub[0]];
            ss += b->node_area[sub[0]] * (r->count ? (double)r->count : 1.0);
            b->sub_cost[s] = ss;
        }
        sum += b->sub_cost[s];
    }
    for (int32_t i = b->top_count - 1; i >= 0; i--)
        if (!b->top_root[i]) sum += b->node_area[i] * (b->nodes[i].count ? (double)b->nodes[i].count : 1.0);
    double root = hy_aabb_half_area(&b->nodes[0].box);
    b->cost = root > 0 ? sum / root : (double)b->node_count;
    if (cull) {
        memset(b->self_free, 0, (size_t)b->node_count);
        contour_buf cb = {NULL, 0, 0, NULL, 0};
        mark_below(b, 0, x0, x1, &cb, 0, NULL, NULL, 1);
        free(cb.v);
        free(cb.p);
    }
    for (int32_t q = 0; q < ntri; q++) b->tri_dirty[b->dirty_tris[q]] = 0;
    for (int32_t q = 0; q < nnode; q++) b->node_dirty[b->dirty_nodes[q]] = 0;
    b->refits++;
}

hy_status hy_bvh_set_vertex_ids(hy_bvh* b, const int32_t* ids) {
    if (!b) return hy_fail(HY_ERR_INVALID_ARG, "bvh: NULL");
    touch(b);
    if (!ids) {
        free(b->vertex_ids);
        b->vertex_ids = NULL;
        if (b->node_count > 0) make_slots(b, NULL);
        return HY_OK;
    }
    int32_t* c = b->vertex_ids ? b->vertex_ids : malloc(sizeof(int32_t) * (size_t)b->vertex_count);
    if (!c) return hy_fail(HY_ERR_NOMEM, "bvh: out of memory");
    memcpy(c, ids, sizeof(int32_t) * (size_t)b->vertex_count);
    b->vertex_ids = c;
    if (b->node_count > 0) make_slots(b, NULL);
    return HY_OK;
}

void hy_bvh_world_box(const hy_bvh* b, hy_aabb* out) {
    if (!b->relative) {
        *out = b->nodes[0].box;
        return;
    }
    hy_aabb_sweep(&b->nodes[0].box, b->shift, out);
}

double hy_bvh_quality(const hy_bvh* b) {
    if (!b || b->node_count == 0 || !(b->built_cost > 0)) return INFINITY;
    return b->cost / b->built_cost;
}

hy_status hy_bvh_update(hy_bvh* b, const double* x0, const double* x1, double thickness, double max_decay,
                        hy_pool* pool, int* rebuilt) {
    if (rebuilt) *rebuilt = 0;
    if (!b || !x0) return hy_fail(HY_ERR_INVALID_ARG, "bvh update: NULL argument");
    if (b->node_count > 0) {
        hy_bvh_refit(b, x0, x1, thickness, pool);
        if (hy_bvh_quality(b) <= max_decay) return HY_OK;
    }
    if (rebuilt) *rebuilt = 1;
    return hy_bvh_build(b, x0, x1, thickness, pool);
}

/* ---- validation */

static int contains(const hy_aabb* outer, const hy_aabb* inner) {
    for (int k = 0; k < 3; k++)
        if (inner->lo[k] < outer->lo[k] || inner->hi[k] > outer->hi[k]) return 0;
    return 1;
}

int hy_bvh_check(const hy_bvh* b) {
    if (!b || b->node_count < 1) {
        hy_fail(HY_ERR_INTERNAL, "bvh: empty");
        return 0;
    }
    int32_t nt = b->triangle_count;
    uint8_t* hit = calloc((size_t)nt, 1);
    int32_t* parent_of = malloc(sizeof(int32_t) * (size_t)b->node_count);
    if (!hit || !parent_of) {
        free(hit);
        free(parent_of);
        hy_fail(HY_ERR_NOMEM, "bvh check: out of memory");
        return 0;
    }
    for (int32_t i = 0; i < b->node_count; i++) parent_of[i] = -1;
    int good = 1;
    for (int32_t i = 0; i < b->node_count && good; i++) {
        const hy_bvh_node* n = &b->nodes[i];
        if (n->count) {
            if (n->first < 0 || n->count < 0 || n->first + n->count > nt) {
                good = 0;
                hy_fail(HY_ERR_INTERNAL, "bvh: leaf %d range [%d, +%d) out of [0, %d)", i, n->first, n->count, nt);
                break;
            }
            for (int32_t j = 0; j < n->count; j++) {
                int32_t t = b->order[n->first + j];
                if (t < 0 || t >= nt || hit[t]++ || !contains(&n->box, &b->triangle_boxes[t])) {
                    good = 0;
                    hy_fail(HY_ERR_INTERNAL, "bvh: leaf %d: triangle %d out of range, repeated or outside the box", i,
                            t);
                    break;
                }
            }
        } else {
            if (n->first <= i || n->first + 1 >= b->node_count) {
                good = 0;
                hy_fail(HY_ERR_INTERNAL, "bvh: node %d children %d not after it", i, n->first);
                break;
            }
            for (int j = 0; j < 2; j++) {
                int32_t ch = n->first + j;
                if (parent_of[ch] != -1 || !contains(&n->box, &b->nodes[ch].box)) {
                    good = 0;
                    hy_fail(HY_ERR_INTERNAL, "bvh: node %d child %d shared or outside the box", i, ch);
                    break;
                }
                parent_of[ch] = i;
            }
        }
    }
    for (int32_t t = 0; t < nt && good; t++)
        if (!hit[t]) {
            good = 0;
            hy_fail(HY_ERR_INTERNAL, "bvh: triangle %d in no leaf", t);
        }
    for (int32_t i = 1; i < b->node_count && good; i++)
        if (parent_of[i] < 0) {
            good = 0;
            hy_fail(HY_ERR_INTERNAL, "bvh: node %d unreachable", i);
        }
    free(hit);
    free(parent_of);
    return good;
}
