/* BVH self-collision culling: normal cones and star contours mark the
 * nodes whose patch cannot touch itself over the step (hy_bvh.self_free). */
#include "collision/bvh.h"

#include <float.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "collision/bvh_internal.h"

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
void hy_bvh_mark_below(hy_bvh* b, int32_t root, const double* x0, const double* x1, contour_buf* cb, int top,
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
    for (int64_t q = begin; q < end; q++) hy_bvh_mark_below(c->b, c->subs[q], c->x0, c->x1, &cb, 0, NULL, NULL, 0);
    free(cb.v);
    free(cb.p);
}

/* self_free for the whole tree: the top serially, then the subtrees it
 * did not settle in parallel (each node's mark depends on its own data
 * and its ancestors' only, so the marks do not depend on the pool).
 * Without culling every mark is 0. */
void hy_bvh_mark_self_free(hy_bvh* b, const double* x0, const double* x1, hy_pool* pool) {
    memset(b->self_free, 0, (size_t)b->node_count);
    /* every test made afresh (hy_bvh_refit_vertices reuses them); the
     * nodes not reached keep none */
    if (b->cull_test) memset(b->cull_test, 0, (size_t)b->node_count);
    if (!culling(b)) return;
    int32_t subs[HY_BVH_TOP_MAX];
    int32_t nsubs = 0;
    contour_buf cb = {NULL, 0, 0, NULL, 0};
    hy_bvh_mark_below(b, 0, x0, x1, &cb, 1, subs, &nsubs, 0);
    free(cb.v);
    free(cb.p);
    mark_ctx c = {b, x0, x1, subs};
    if (pool && nsubs > 1)
        hy_pool_for(pool, nsubs, 1, mark_block, &c);
    else
        mark_block(&c, 0, nsubs, 0, 0);
}
