/* Exact triangle-triangle intersection (see tritri.h).
 *
 * Rather than the interval construction of Moller or the case analysis of
 * Guigue-Devillers, the test reduces to segment-triangle tests: if two
 * closed triangles meet, any point on the boundary of their (convex)
 * intersection lies on an edge of one of them, so they meet iff one of the
 * six edges meets the other triangle. That costs a few more predicates but
 * has a single code path for the coplanar and non-coplanar cases and reads
 * off the shared-vertex rules directly; with exact predicates every branch
 * is decided correctly. */
#include "collision/tritri.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "collision/closest.h"
#include "collision/scene_view.h"
#include "core/error.h"

/* ------------------------------------------- exact expansion arithmetic */

/* Expansions are arrays of doubles of increasing magnitude whose exact sum
 * is the value (Shewchuk 1997); zero components are dropped, so the sign is
 * that of the last component. Products use fma for the exact low part
 * (an explicit fma call is exact whatever -ffp-contract says). */

static void two_sum(double a, double b, double* x, double* y) {
    double s = a + b, bv = s - a, av = s - bv;
    *x = s;
    *y = (a - av) + (b - bv);
}

static void two_prod(double a, double b, double* x, double* y) {
    double p = a * b;
    *x = p;
    *y = fma(a, b, -p);
}

/* h = e + b (h has room for en + 1). */
static int grow(int en, const double* e, double b, double* h) {
    double q = b;
    int n = 0;
    for (int i = 0; i < en; i++) {
        double s, lo;
        two_sum(q, e[i], &s, &lo);
        q = s;
        if (lo != 0.0) h[n++] = lo;
    }
    if (q != 0.0 || n == 0) h[n++] = q;
    return n;
}

/* h = e + f (h has room for en + fn); tmp the same size. */
static int xp_add(int en, const double* e, int fn, const double* f, double* h, double* tmp) {
    int n = en;
    memcpy(h, e, sizeof(double) * (size_t)en);
    for (int j = 0; j < fn; j++) {
        n = grow(n, h, f[j], tmp);
        memcpy(h, tmp, sizeof(double) * (size_t)n);
    }
    return n;
}

/* h = e * b (room for 2 en). */
static int scale(int en, const double* e, double b, double* h) {
    double q, lo;
    int n = 0;
    two_prod(e[0], b, &q, &lo);
    if (lo != 0.0) h[n++] = lo;
    for (int i = 1; i < en; i++) {
        double p1, p0, s;
        two_prod(e[i], b, &p1, &p0);
        two_sum(q, p0, &s, &lo);
        if (lo != 0.0) h[n++] = lo;
        two_sum(p1, s, &q, &lo);
        if (lo != 0.0) h[n++] = lo;
    }
    if (q != 0.0 || n == 0) h[n++] = q;
    return n;
}

#define XP_MAX 256

/* h = e * f (room for 2 en fn <= XP_MAX). */
static int xp_mul(int en, const double* e, int fn, const double* f, double* h) {
    double part[XP_MAX], acc[XP_MAX], tmp[XP_MAX];
    int n = 1;
    acc[0] = 0.0;
    for (int j = 0; j < fn; j++) {
        int pn = scale(en, e, f[j], part);
        n = xp_add(n, acc, pn, part, h, tmp);
        memcpy(acc, h, sizeof(double) * (size_t)n);
    }
    memcpy(h, acc, sizeof(double) * (size_t)n);
    return n;
}

/* a - b exactly, as an expansion of at most 2 components. */
static int xp_diff(double a, double b, double* h) {
    double x, y;
    two_sum(a, -b, &x, &y);
    int n = 0;
    if (y != 0.0) h[n++] = y;
    if (x != 0.0 || n == 0) h[n++] = x;
    return n;
}

static void xp_negate(int n, double* e) {
    for (int i = 0; i < n; i++) e[i] = -e[i];
}

static int xp_sign(int n, const double* e) { return e[n - 1] > 0.0 ? 1 : (e[n - 1] < 0.0 ? -1 : 0); }

/* (p * q - r * s) for 2-component differences. */
static int minor2(int pn, const double* p, int qn, const double* q, int rn, const double* r, int sn, const double* s,
                  double* h) {
    double a[8], b[8], tmp[16];
    int an = xp_mul(pn, p, qn, q, a);
    int bn = xp_mul(rn, r, sn, s, b);
    xp_negate(bn, b);
    return xp_add(an, a, bn, b, h, tmp);
}

/* ------------------------------------------------------------- predicates */

static const double EPS = 1.1102230246251565e-16; /* 2^-53 */

static int orient3d_exact(const double* a, const double* b, const double* c, const double* d) {
    double ad[3][2], bd[3][2], cd[3][2];
    int an[3], bn[3], cn[3];
    for (int k = 0; k < 3; k++) {
        an[k] = xp_diff(a[k], d[k], ad[k]);
        bn[k] = xp_diff(b[k], d[k], bd[k]);
        cn[k] = xp_diff(c[k], d[k], cd[k]);
    }
    /* det = adx (bdy cdz - bdz cdy) + bdx (cdy adz - cdz ady) + cdx (ady bdz - adz bdy) */
    double m[16], t0[64], t1[64], t2[64], s01[128], all[192], tmp[192];
    int mn = minor2(bn[1], bd[1], cn[2], cd[2], bn[2], bd[2], cn[1], cd[1], m);
    int n0 = xp_mul(an[0], ad[0], mn, m, t0);
    mn = minor2(cn[1], cd[1], an[2], ad[2], cn[2], cd[2], an[1], ad[1], m);
    int n1 = xp_mul(bn[0], bd[0], mn, m, t1);
    mn = minor2(an[1], ad[1], bn[2], bd[2], an[2], ad[2], bn[1], bd[1], m);
    int n2 = xp_mul(cn[0], cd[0], mn, m, t2);
    int sn = xp_add(n0, t0, n1, t1, s01, tmp);
    int n = xp_add(sn, s01, n2, t2, all, tmp);
    return xp_sign(n, all);
}

int hy_orient3d_sign(const double a[3], const double b[3], const double c[3], const double d[3]) {
    double adx = a[0] - d[0], bdx = b[0] - d[0], cdx = c[0] - d[0];
    double ady = a[1] - d[1], bdy = b[1] - d[1], cdy = c[1] - d[1];
    double adz = a[2] - d[2], bdz = b[2] - d[2], cdz = c[2] - d[2];
    double bdxcdy = bdx * cdy, cdxbdy = cdx * bdy;
    double cdxady = cdx * ady, adxcdy = adx * cdy;
    double adxbdy = adx * bdy, bdxady = bdx * ady;
    double det = adz * (bdxcdy - cdxbdy) + bdz * (cdxady - adxcdy) + cdz * (adxbdy - bdxady);
    double perm = (fabs(bdxcdy) + fabs(cdxbdy)) * fabs(adz) + (fabs(cdxady) + fabs(adxcdy)) * fabs(bdz) +
                  (fabs(adxbdy) + fabs(bdxady)) * fabs(cdz);
    /* Shewchuk's o3derrboundA: |det - exact| <= this whenever it is used */
    double bound = (7.0 + 56.0 * EPS) * EPS * perm;
    if (det > bound) return 1;
    if (-det > bound) return -1;
    if (perm == 0.0) return 0;
    return orient3d_exact(a, b, c, d);
}

static int orient2d_exact(const double* a, const double* b, const double* c) {
    double acx[2], bcy[2], acy[2], bcx[2], h[16];
    int n1 = xp_diff(a[0], c[0], acx), n2 = xp_diff(b[1], c[1], bcy);
    int n3 = xp_diff(a[1], c[1], acy), n4 = xp_diff(b[0], c[0], bcx);
    int n = minor2(n1, acx, n2, bcy, n3, acy, n4, bcx, h);
    return xp_sign(n, h);
}

int hy_orient2d_sign(const double a[2], const double b[2], const double c[2]) {
    double l = (a[0] - c[0]) * (b[1] - c[1]), r = (a[1] - c[1]) * (b[0] - c[0]);
    double det = l - r;
    double bound = (3.0 + 16.0 * EPS) * EPS * (fabs(l) + fabs(r)); /* Shewchuk's ccwerrboundA */
    if (det > bound) return 1;
    if (-det > bound) return -1;
    if (l == 0.0 && r == 0.0) return 0;
    return orient2d_exact(a, b, c);
}

/* ------------------------------------------------------ 2-D (coplanar) */

/* Projection dropping coordinate `drop`. */
static void project(const double* p, int drop, double out[2]) {
    int i = drop == 0 ? 1 : 0, j = drop == 2 ? 1 : 2;
    out[0] = p[i];
    out[1] = p[j];
}

/* A coordinate whose dropping keeps triangle abc non-degenerate (the
 * projection is then an affine bijection of its plane, so it preserves
 * every incidence); -1 if abc has zero area. */
static int projection_axis(const double* a, const double* b, const double* c) {
    double u[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, v[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
    double n[3] = {fabs(u[1] * v[2] - u[2] * v[1]), fabs(u[2] * v[0] - u[0] * v[2]), fabs(u[0] * v[1] - u[1] * v[0])};
    int order[3] = {0, 1, 2};
    /* try the largest approximate normal component first */
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (n[order[j]] > n[order[i]]) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    for (int k = 0; k < 3; k++) {
        double pa[2], pb[2], pc[2];
        project(a, order[k], pa);
        project(b, order[k], pb);
        project(c, order[k], pc);
        if (hy_orient2d_sign(pa, pb, pc) != 0) return order[k];
    }
    return -1;
}

static int within(const double* p, const double* q, const double* r) {
    /* r collinear with pq: is it between them? (exact comparisons) */
    for (int k = 0; k < 2; k++)
        if (r[k] < fmin(p[k], q[k]) || r[k] > fmax(p[k], q[k])) return 0;
    return 1;
}

/* Closed segments pq and rs in the plane. */
static int seg_seg_2d(const double* p, const double* q, const double* r, const double* s) {
    int d1 = hy_orient2d_sign(p, q, r), d2 = hy_orient2d_sign(p, q, s);
    int d3 = hy_orient2d_sign(r, s, p), d4 = hy_orient2d_sign(r, s, q);
    if (d1 * d2 < 0 && d3 * d4 < 0) return 1;
    if (d1 == 0 && within(p, q, r)) return 1;
    if (d2 == 0 && within(p, q, s)) return 1;
    if (d3 == 0 && within(r, s, p)) return 1;
    if (d4 == 0 && within(r, s, q)) return 1;
    return 0;
}

/* Point p in the closed non-degenerate triangle abc. */
static int point_in_tri_2d(const double* p, const double* a, const double* b, const double* c) {
    int o = hy_orient2d_sign(a, b, c);
    int s1 = hy_orient2d_sign(a, b, p), s2 = hy_orient2d_sign(b, c, p), s3 = hy_orient2d_sign(c, a, p);
    return s1 * o >= 0 && s2 * o >= 0 && s3 * o >= 0;
}

/* Segment pq lying in the plane of triangle abc (axis from projection_axis). */
static int seg_tri_coplanar(const double* p, const double* q, const double* a, const double* b, const double* c,
                            int axis) {
    double pp[2], pq[2], pa[2], pb[2], pc[2];
    project(p, axis, pp);
    project(q, axis, pq);
    project(a, axis, pa);
    project(b, axis, pb);
    project(c, axis, pc);
    if (point_in_tri_2d(pp, pa, pb, pc) || point_in_tri_2d(pq, pa, pb, pc)) return 1;
    return seg_seg_2d(pp, pq, pa, pb) || seg_seg_2d(pp, pq, pb, pc) || seg_seg_2d(pp, pq, pc, pa);
}

/* ------------------------------------------------------------ 3-D tests */

/* Closed segment pq against closed triangle abc (axis: its projection axis,
 * so abc is known to be non-degenerate). */
static int seg_tri(const double* p, const double* q, const double* a, const double* b, const double* c, int axis) {
    int sp = hy_orient3d_sign(a, b, c, p), sq = hy_orient3d_sign(a, b, c, q);
    if (sp == sq && sp != 0) return 0; /* strictly on one side */
    if (sp == 0 && sq == 0) return seg_tri_coplanar(p, q, a, b, c, axis);
    /* pq meets the plane in one point; the line pq passes through the
     * closed triangle iff it turns the same way (or not at all) around
     * each of the three edges */
    int s1 = hy_orient3d_sign(p, q, a, b), s2 = hy_orient3d_sign(p, q, b, c), s3 = hy_orient3d_sign(p, q, c, a);
    int pos = s1 > 0 || s2 > 0 || s3 > 0, neg = s1 < 0 || s2 < 0 || s3 < 0;
    return !(pos && neg);
}

static int plane_separates(const double* a, const double* b, const double* c, const double* p, const double* q,
                           const double* r) {
    int s0 = hy_orient3d_sign(a, b, c, p), s1 = hy_orient3d_sign(a, b, c, q), s2 = hy_orient3d_sign(a, b, c, r);
    return (s0 > 0 && s1 > 0 && s2 > 0) || (s0 < 0 && s1 < 0 && s2 < 0);
}

int hy_tritri_intersect(const double a0[3], const double a1[3], const double a2[3], const double b0[3],
                        const double b1[3], const double b2[3]) {
    int axa = projection_axis(a0, a1, a2), axb = projection_axis(b0, b1, b2);
    if (axa < 0 || axb < 0) return 0; /* zero area: nothing to penetrate */
    if (plane_separates(a0, a1, a2, b0, b1, b2) || plane_separates(b0, b1, b2, a0, a1, a2)) return 0;
    /* some point of the intersection's boundary lies on an edge of one of
     * the two triangles */
    return seg_tri(a0, a1, b0, b1, b2, axb) || seg_tri(a1, a2, b0, b1, b2, axb) ||
           seg_tri(a2, a0, b0, b1, b2, axb) || seg_tri(b0, b1, a0, a1, a2, axa) ||
           seg_tri(b1, b2, a0, a1, a2, axa) || seg_tri(b2, b0, a0, a1, a2, axa);
}

int hy_tritri_intersect_ids(const double* x, const int32_t ta[3], const int32_t tb[3]) {
    int shared = 0, ia = -1, ib = -1; /* ia/ib: position of the first shared vertex */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            if (ta[i] == tb[j]) {
                if (shared == 0) {
                    ia = i;
                    ib = j;
                }
                shared++;
            }
    const double *A[3], *B[3];
    for (int k = 0; k < 3; k++) {
        A[k] = x + 3 * (size_t)ta[k];
        B[k] = x + 3 * (size_t)tb[k];
    }
    if (shared == 0) return hy_tritri_intersect(A[0], A[1], A[2], B[0], B[1], B[2]);
    if (shared >= 3) return 0;
    int axa = projection_axis(A[0], A[1], A[2]), axb = projection_axis(B[0], B[1], B[2]);
    if (axa < 0 || axb < 0) return 0;
    if (shared == 1) {
        /* s = A[ia] = B[ib]; they meet elsewhere iff an opposite edge meets
         * the other triangle (that edge cannot contain s) */
        const double *a1 = A[(ia + 1) % 3], *a2 = A[(ia + 2) % 3];
        const double *b1 = B[(ib + 1) % 3], *b2 = B[(ib + 2) % 3];
        return seg_tri(a1, a2, B[0], B[1], B[2], axb) || seg_tri(b1, b2, A[0], A[1], A[2], axa);
    }
    /* shared edge (s, t): only a flat fold onto the same side counts */
    int sa = -1, ta_ = -1, oa = -1, ob = -1;
    for (int i = 0; i < 3; i++) {
        int in_b = ta[i] == tb[0] || ta[i] == tb[1] || ta[i] == tb[2];
        if (!in_b) oa = i;
        else if (sa < 0) sa = i;
        else ta_ = i;
    }
    for (int j = 0; j < 3; j++)
        if (tb[j] != ta[0] && tb[j] != ta[1] && tb[j] != ta[2]) ob = j;
    const double *s = A[sa], *t = A[ta_], *a = A[oa], *b = B[ob];
    if (hy_orient3d_sign(s, t, a, b) != 0) return 0;
    double ps[2], pt[2], pa[2], pb[2];
    project(s, axa, ps);
    project(t, axa, pt);
    project(a, axa, pa);
    project(b, axa, pb);
    return hy_orient2d_sign(ps, pt, pa) * hy_orient2d_sign(ps, pt, pb) > 0;
}

/* ------------------------------------------------------------- distance */

double hy_tritri_distance(const double a0[3], const double a1[3], const double a2[3], const double b0[3],
                          const double b1[3], const double b2[3]) {
    hy_v3 A[3] = {v3_load(a0), v3_load(a1), v3_load(a2)}, B[3] = {v3_load(b0), v3_load(b1), v3_load(b2)};
    double best = INFINITY;
    /* vertices against the other triangle */
    for (int side = 0; side < 2; side++) {
        const hy_v3 *P = side ? B : A, *T = side ? A : B;
        for (int i = 0; i < 3; i++) {
            hy_v3 q[4] = {P[i], T[0], T[1], T[2]};
            best = fmin(best, v3_len2(hy_closest_separation(q, 1)));
        }
    }
    /* edges against edges */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            hy_v3 q[4] = {A[i], A[(i + 1) % 3], B[j], B[(j + 1) % 3]};
            best = fmin(best, v3_len2(hy_closest_separation(q, 0)));
        }
    return sqrt(best);
}

/* ------------------------------------------------------------ broad phase */

typedef struct cell_entry {
    uint64_t key;
    int32_t tri;
} cell_entry;

static int compare_entry(const void* pa, const void* pb) {
    const cell_entry *a = pa, *b = pb;
    if (a->key != b->key) return a->key < b->key ? -1 : 1;
    return (a->tri > b->tri) - (a->tri < b->tri);
}

typedef struct pair_sink {
    const hy_tritri_scene* s;
    int64_t count;
    hy_tritri_hit* hits;
    int64_t cap;
} pair_sink;

static int box_overlap(const double* bi, const double* bj) {
    for (int k = 0; k < 3; k++)
        if (bi[k] > bj[3 + k] || bj[k] > bi[3 + k]) return 0;
    return 1;
}

static void test_pair(pair_sink* ps, int32_t i, int32_t j) {
    const hy_tritri_scene* s = ps->s;
    int32_t oi = s->tri_object[i], oj = s->tri_object[j];
    if (oi == oj && !s->self_check[oi]) return;
    if (oi != oj && s->is_static && s->is_static[oi] && s->is_static[oj]) return;
    if (oi != oj && s->apart_count > 0 && hy_pair_keys_have(s->apart, s->apart_count, oi, oj)) return;
    const int32_t *ti = s->triangles + 3 * (size_t)i, *tj = s->triangles + 3 * (size_t)j;
    double dist = 0.0;
    if (!hy_tritri_intersect_ids(s->x, ti, tj)) {
        /* apart: counts only closer than the margins, between two objects */
        if (!s->margin || oi == oj) return;
        double m = s->margin[oi] + s->margin[oj];
        if (!(m > 0.0)) return;
        const double* x = s->x;
        dist = hy_tritri_distance(x + 3 * (size_t)ti[0], x + 3 * (size_t)ti[1], x + 3 * (size_t)ti[2],
                                  x + 3 * (size_t)tj[0], x + 3 * (size_t)tj[1], x + 3 * (size_t)tj[2]);
        if (!(dist < m)) return;
    }
    if (ps->count < ps->cap && ps->hits) {
        int32_t li = s->tri_local ? s->tri_local[i] : i, lj = s->tri_local ? s->tri_local[j] : j;
        hy_tritri_hit h;
        if (oi < oj || (oi == oj && li < lj)) {
            h.object_a = oi, h.triangle_a = li, h.object_b = oj, h.triangle_b = lj;
        } else {
            h.object_a = oj, h.triangle_a = lj, h.object_b = oi, h.triangle_b = li;
        }
        h.distance = dist;
        ps->hits[ps->count] = h;
    }
    ps->count++;
}

#define GRID_BITS 21
#define BIG_CELLS 32768

hy_status hy_tritri_count(const hy_tritri_scene* s, int64_t* count, hy_tritri_hit* hits, int64_t hits_capacity) {
    if (!s || !count) return hy_fail(HY_ERR_INVALID_ARG, "hy_tritri_count: NULL argument");
    *count = 0;
    int32_t nt = s->triangle_count;
    if (nt < 2) return HY_OK;
    double* box = malloc(sizeof(double) * 6 * (size_t)nt);
    int64_t* first = malloc(sizeof(int64_t) * 3 * (size_t)nt); /* low cell per axis */
    int64_t* last = malloc(sizeof(int64_t) * 3 * (size_t)nt);
    unsigned char* big = calloc((size_t)nt, 1);
    if (!box || !first || !last || !big) {
        free(box), free(first), free(last), free(big);
        return hy_fail(HY_ERR_NOMEM, "out of memory for the triangle check of %d triangles", nt);
    }
    /* triangle boxes grown by their margins, their union and the mean
     * extent (the cell size) */
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY}, extent = 0.0;
    for (int32_t t = 0; t < nt; t++) {
        const int32_t* v = s->triangles + 3 * (size_t)t;
        double* b = box + 6 * (size_t)t;
        double grow = s->margin ? s->margin[s->tri_object[t]] : 0.0;
        for (int k = 0; k < 3; k++) {
            double p0 = s->x[3 * (size_t)v[0] + k], p1 = s->x[3 * (size_t)v[1] + k], p2 = s->x[3 * (size_t)v[2] + k];
            b[k] = fmin(p0, fmin(p1, p2)) - grow;
            b[3 + k] = fmax(p0, fmax(p1, p2)) + grow;
            lo[k] = fmin(lo[k], b[k]);
            hi[k] = fmax(hi[k], b[3 + k]);
        }
        extent += fmax(b[3] - b[0], fmax(b[4] - b[1], b[5] - b[2]));
    }
    double h = 2.0 * extent / nt; /* most triangles then span 1 or 2 cells per axis */
    for (int k = 0; k < 3; k++) h = fmax(h, (hi[k] - lo[k]) / (double)((1 << GRID_BITS) - 2));
    if (!(h > 0.0) || !isfinite(h)) h = 1.0;
    /* cells per triangle; triangles spanning very many cells go to a list
     * tested against everything instead */
    int64_t entries = 0;
    for (int32_t t = 0; t < nt; t++) {
        int64_t cells = 1;
        for (int k = 0; k < 3; k++) {
            first[3 * t + k] = (int64_t)floor((box[6 * t + k] - lo[k]) / h);
            last[3 * t + k] = (int64_t)floor((box[6 * t + 3 + k] - lo[k]) / h);
            cells *= last[3 * t + k] - first[3 * t + k] + 1;
        }
        if (cells > BIG_CELLS) big[t] = 1;
        else entries += cells;
    }
    cell_entry* e = malloc(sizeof(cell_entry) * (size_t)(entries + 1));
    if (!e) {
        free(box), free(first), free(last), free(big);
        return hy_fail(HY_ERR_NOMEM, "out of memory for %lld grid entries", (long long)entries);
    }
    int64_t m = 0;
    for (int32_t t = 0; t < nt; t++) {
        if (big[t]) continue;
        const int64_t *f = first + 3 * t, *l = last + 3 * t;
        for (int64_t x = f[0]; x <= l[0]; x++)
            for (int64_t y = f[1]; y <= l[1]; y++)
                for (int64_t z = f[2]; z <= l[2]; z++) {
                    e[m].key = (uint64_t)x << (2 * GRID_BITS) | (uint64_t)y << GRID_BITS | (uint64_t)z;
                    e[m].tri = t;
                    m++;
                }
    }
    qsort(e, (size_t)m, sizeof *e, compare_entry);
    pair_sink ps = {s, 0, hits, hits_capacity};
    /* pairs sharing a cell; each pair is tested only in the cell holding the
     * low corner of the overlap of their boxes, so once */
    for (int64_t a = 0; a < m;) {
        int64_t b = a;
        while (b < m && e[b].key == e[a].key) b++;
        int64_t cx = (int64_t)(e[a].key >> (2 * GRID_BITS)), cy = (int64_t)(e[a].key >> GRID_BITS & ((1u << GRID_BITS) - 1)),
                cz = (int64_t)(e[a].key & ((1u << GRID_BITS) - 1));
        for (int64_t i = a; i < b; i++)
            for (int64_t j = i + 1; j < b; j++) {
                int32_t ti = e[i].tri, tj = e[j].tri;
                if (!box_overlap(box + 6 * (size_t)ti, box + 6 * (size_t)tj)) continue;
                int64_t ox = first[3 * ti] > first[3 * tj] ? first[3 * ti] : first[3 * tj];
                int64_t oy = first[3 * ti + 1] > first[3 * tj + 1] ? first[3 * ti + 1] : first[3 * tj + 1];
                int64_t oz = first[3 * ti + 2] > first[3 * tj + 2] ? first[3 * ti + 2] : first[3 * tj + 2];
                if (ox != cx || oy != cy || oz != cz) continue;
                test_pair(&ps, ti, tj);
            }
        a = b;
    }
    /* big triangles against every other triangle (big pairs once) */
    for (int32_t i = 0; i < nt; i++) {
        if (!big[i]) continue;
        for (int32_t j = 0; j < nt; j++) {
            if (j == i || (big[j] && j < i)) continue;
            if (box_overlap(box + 6 * (size_t)i, box + 6 * (size_t)j)) test_pair(&ps, i, j);
        }
    }
    *count = ps.count;
    free(e);
    free(box);
    free(first);
    free(last);
    free(big);
    return HY_OK;
}
