/* The filters over a run of candidate pairs (hy_filter_pairs,
 * collision/filter.h).
 *
 * Per pair, hy_filter_coplanar and hy_filter_sat spend most of their time
 * in scalar arithmetic on few values (the gathers of the eight points are a
 * fifth of the coplanarity test's cost on cloth-ball), so four pairs at a
 * time in AVX2 lanes pay: the points of a run of pairs are gathered into
 * one array per coordinate (from positions packed a vertex per cache line,
 * hy_filter_pack: two loads per point and a transpose of four pairs' rows,
 * instead of six scalar loads from two arrays), the coplanarity test runs
 * on all of them, and
 * its survivors, listed by kind, get the separating-axes directions four
 * at a time (each lane loaded from its pair's place in those arrays).
 *
 * The lanes do the scalar code's operations in its order (no contraction:
 * the target has no FMA), so each pair gets the answer hy_filter_coplanar
 * and hy_filter_sat give it. Two things differ. The scalar code stops at
 * the first direction that separates; the lanes try every direction until
 * all four pairs are separated (the answer is the same: a pair is culled
 * when any direction separates it). And the scalar code's handling of NaN
 * (min and max that drop or keep a NaN depending on the operand order) is
 * not copied: pairs whose coordinates are not finite or exceed 2^200 in
 * magnitude go to the scalar code instead. Below that bound no product or sum of the
 * filters overflows (the largest, an in-plane direction projected on a
 * point difference, is at most a small constant times the fourth power of
 * the largest coordinate: under 2^820), so no lane makes a NaN or an
 * infinity.
 *
 * CPUs without AVX2 (checked once, at run time) and other targets run the
 * pairs one by one through the scalar filters. */
#include "collision/filter.h"

#include <float.h>
#include <math.h>
#include <stdint.h>

#include "collision/traverse.h"
#include "core/simd.h"

/* Pairs gathered at a time: the array stays in L1 (24 coordinates of 64
 * pairs and padding, 13 KB). */
#define CHUNK 64
/* Coordinates at most this large in magnitude go to the lanes. */
#define LANE_MAX 0x1p200

int hy_filter_pack(const double* x0, const double* x1, int64_t begin, int64_t end, double* xx) {
    int in_range = 1;
    for (int64_t v = begin; v < end; v++) {
        double* w = xx + HY_FILTER_PACK * v;
        for (int k = 0; k < 3; k++) {
            double a = x0[3 * v + k], b = x1[3 * v + k];
            w[k] = a;
            w[4 + k] = b;
            in_range &= (fabs(a) <= LANE_MAX) & (fabs(b) <= LANE_MAX); /* false for NaN */
        }
        w[3] = 0.0;
        w[7] = 0.0;
    }
    return in_range;
}

static int keep_one(const hy_feature_pair* p, const double* xx, double min_distance, int* hint) {
    const double *a[4], *b[4];
    for (int k = 0; k < 4; k++) {
        a[k] = xx + HY_FILTER_PACK * (int64_t)p->v[k];
        b[k] = a[k] + 4;
    }
    return hy_filter_coplanar(a, b, min_distance) &&
           hy_filter_sat_hint(p->kind != HY_FEATURE_EE, a, b, min_distance, hint) &&
           hy_filter_slabs(p->kind != HY_FEATURE_EE, a, b, min_distance);
}

static void pairs_scalar(const hy_feature_pair* pairs, int64_t n, const double* xx, double min_distance,
                         uint8_t* keep) {
    int hint = 0;
    for (int64_t i = 0; i < n; i++) keep[i] = (uint8_t)keep_one(&pairs[i], xx, min_distance, &hint);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
#define HY_FILTER_AVX2 1
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2")

typedef __m256d vd;
typedef struct vd3 {
    vd x, y, z;
} vd3;

/* Coordinates of a run of pairs: c[(4 s + i) 3 + k][lane] is coordinate k
 * of point i at time s. */
typedef struct lanes {
    _Alignas(32) double c[24][CHUNK + 4]; /* rows apart by 544 bytes, not a power of two */
} lanes;

static inline vd add(vd a, vd b) { return _mm256_add_pd(a, b); }
static inline vd sub(vd a, vd b) { return _mm256_sub_pd(a, b); }
static inline vd mul(vd a, vd b) { return _mm256_mul_pd(a, b); }
static inline vd vmax(vd a, vd b) { return _mm256_max_pd(a, b); }
static inline vd vmin(vd a, vd b) { return _mm256_min_pd(a, b); }
static inline vd splat(double a) { return _mm256_set1_pd(a); }
static inline vd vabs(vd a) { return _mm256_andnot_pd(_mm256_set1_pd(-0.0), a); }
static inline vd gt(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_GT_OQ); }
static inline vd lt(vd a, vd b) { return _mm256_cmp_pd(a, b, _CMP_LT_OQ); }
static inline vd and_(vd a, vd b) { return _mm256_and_pd(a, b); }
static inline vd or_(vd a, vd b) { return _mm256_or_pd(a, b); }

static inline vd3 pt(const lanes* L, int s, int i, int l) {
    int r = (4 * s + i) * 3;
    vd3 p = {_mm256_load_pd(&L->c[r][l]), _mm256_load_pd(&L->c[r + 1][l]), _mm256_load_pd(&L->c[r + 2][l])};
    return p;
}
static inline vd3 sub3(vd3 a, vd3 b) {
    vd3 r = {sub(a.x, b.x), sub(a.y, b.y), sub(a.z, b.z)};
    return r;
}
static inline vd3 add3(vd3 a, vd3 b) {
    vd3 r = {add(a.x, b.x), add(a.y, b.y), add(a.z, b.z)};
    return r;
}
static inline vd3 scale3(vd3 a, vd s) {
    vd3 r = {mul(s, a.x), mul(s, a.y), mul(s, a.z)};
    return r;
}
/* hy_sat_cross's order (filter_sat.h) */
static inline vd3 cross3(vd3 a, vd3 b) {
    vd3 r = {sub(mul(a.y, b.z), mul(a.z, b.y)), sub(mul(a.z, b.x), mul(a.x, b.z)), sub(mul(a.x, b.y), mul(a.y, b.x))};
    return r;
}
/* (a.x b.x + a.y b.y) + a.z b.z */
static inline vd dot3(vd3 a, vd3 b) { return add(add(mul(a.x, b.x), mul(a.y, b.y)), mul(a.z, b.z)); }
static inline vd absmax3(vd3 a) { return vmax(vmax(vabs(a.x), vabs(a.y)), vabs(a.z)); }

/* hy_filter_coplanar (collision/filter.c) on four lanes: all-ones where the
 * pair is kept. */
static vd coplanar4(const lanes* L, int l, double (*sums)[CHUNK + 4]) {
    vd3 o[2] = {pt(L, 0, 0, l), pt(L, 1, 0, l)};
    vd3 e[2][3];
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 3; i++) e[s][i] = sub3(pt(L, s, i + 1, l), o[s]);
    vd3 cr[2][2];
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 2; k++) cr[j][k] = cross3(e[j][1], e[k][2]);
    /* d_ijk = e[i][0] . cr[j][k]; the groups' sums in the scalar loop's
     * order (m = i + 2 j + 4 k ascending) */
#define D(i, j, k) dot3(e[i][0], cr[j][k])
    vd b0 = D(0, 0, 0);
    vd b1 = add(add(D(1, 0, 0), D(0, 1, 0)), D(0, 0, 1));
    vd b2 = add(add(D(1, 1, 0), D(1, 0, 1)), D(0, 1, 1));
    vd b3 = D(1, 1, 1);
#undef D
    vd A = vmax(absmax3(e[0][0]), absmax3(e[1][0]));
    vd B = vmax(absmax3(e[0][1]), absmax3(e[1][1]));
    vd C = vmax(absmax3(e[0][2]), absmax3(e[1][2]));
    vd scale = mul(splat(6.0), mul(mul(A, B), C));
    /* kept for plan4: hy_ccd_vol_sums's values */
    _mm256_store_pd(&sums[0][l], b0);
    _mm256_store_pd(&sums[1][l], b1);
    _mm256_store_pd(&sums[2][l], b2);
    _mm256_store_pd(&sums[3][l], b3);
    _mm256_store_pd(&sums[4][l], scale);
    vd in_range = and_(gt(scale, splat(1e-250)), lt(scale, splat(1e250)));
    const double eps = DBL_EPSILON / 2;
    vd err1 = mul(splat(32.0 * eps * 1.0), scale), err3 = mul(splat(32.0 * eps * 3.0), scale);
    vd nerr1 = sub(_mm256_setzero_pd(), err1), nerr3 = sub(_mm256_setzero_pd(), err3);
    vd pos = and_(and_(gt(b0, err1), gt(b1, err3)), and_(gt(b2, err3), gt(b3, err1)));
    vd neg = and_(and_(lt(b0, nerr1), lt(b1, nerr3)), and_(lt(b2, nerr3), lt(b3, nerr1)));
    vd cull = and_(in_range, or_(pos, neg));
    return _mm256_xor_pd(cull, _mm256_castsi256_pd(_mm256_set1_epi64x(-1)));
}

/* hy_sat_set on four lanes (VF: 6 differences and two repeats). */
typedef struct sat4 {
    vd x[8], y[8], z[8];
    vd aw;
} sat4;

static void sat4_make(sat4* s, const vd3 P[2][4], int is_vf) {
    static const int vf_pairs[3][2] = {{0, 1}, {0, 2}, {0, 3}};
    static const int ee_pairs[4][2] = {{0, 2}, {0, 3}, {1, 2}, {1, 3}};
    int np = is_vf ? 3 : 4, m = 0;
    vd aw = _mm256_setzero_pd();
    for (int t = 0; t < 2; t++)
        for (int q = 0; q < np; q++) {
            int i = is_vf ? vf_pairs[q][0] : ee_pairs[q][0];
            int j = is_vf ? vf_pairs[q][1] : ee_pairs[q][1];
            vd3 w = sub3(P[t][i], P[t][j]);
            s->x[m] = w.x;
            s->y[m] = w.y;
            s->z[m] = w.z;
            aw = vmax(aw, absmax3(w));
            m++;
        }
    if (is_vf) {
        s->x[6] = s->x[0];
        s->y[6] = s->y[0];
        s->z[6] = s->z[0];
        s->x[7] = s->x[3];
        s->y[7] = s->y[3];
        s->z[7] = s->z[3];
    }
    s->aw = aw;
}

/* hy_sat_apart_along on four lanes: all-ones where n separates. No lane
 * holds a NaN (LANE_MAX), so the scalar code's NaN exit never fires. */
static inline vd apart4(const sat4* s, vd3 n, vd md) {
    vd an = add(add(vabs(n.x), vabs(n.y)), vabs(n.z));
    vd ok = and_(gt(an, splat(1e-280)), lt(an, splat(1e280)));
    /* two chains of minima and maxima (even and odd differences), merged:
     * exact in any order, and half the dependent steps */
    vd mn = splat(INFINITY), mx = splat(-INFINITY), mn1 = mn, mx1 = mx;
    for (int i = 0; i < 8; i += 2) {
        vd v = add(add(mul(n.x, s->x[i]), mul(n.y, s->y[i])), mul(n.z, s->z[i]));
        vd w = add(add(mul(n.x, s->x[i + 1]), mul(n.y, s->y[i + 1])), mul(n.z, s->z[i + 1]));
        mn = vmin(mn, v);
        mx = vmax(mx, v);
        mn1 = vmin(mn1, w);
        mx1 = vmax(mx1, w);
    }
    mn = vmin(mn, mn1);
    mx = vmax(mx, mx1);
    vd err = add(add(mul(splat(8.0 * DBL_EPSILON), mul(an, s->aw)), mul(mul(md, an), splat(1.0 + 8.0 * DBL_EPSILON))),
                 splat(1e-290));
    return and_(ok, or_(gt(mn, err), lt(mx, sub(_mm256_setzero_pd(), err))));
}

/* hy_sat_axes on four lanes: all-ones where a coordinate axis separates
 * (the differences themselves are the projections). */
static vd axes4(const sat4* s, vd md) {
    vd err = add(add(mul(splat(8.0 * DBL_EPSILON), s->aw), mul(md, splat(1.0 + 8.0 * DBL_EPSILON))), splat(1e-290));
    vd nerr = sub(_mm256_setzero_pd(), err);
    const vd* w[3] = {s->x, s->y, s->z};
    vd sep = _mm256_setzero_pd();
    for (int k = 0; k < 3; k++) {
        vd mn = w[k][0], mx = w[k][0];
        for (int i = 1; i < 8; i++) {
            mn = vmin(mn, w[k][i]);
            mx = vmax(mx, w[k][i]);
        }
        sep = or_(sep, or_(gt(mn, err), lt(mx, nerr)));
    }
    return sep;
}

/* hy_filter_sat on four lanes of one kind: all-ones where kept. Every
 * direction group of filter_sat.h, until all four lanes are culled. */
static inline vd lane_get(const lanes* L, int r, const int* li) {
    return _mm256_set_pd(L->c[r][li[3]], L->c[r][li[2]], L->c[r][li[1]], L->c[r][li[0]]);
}

/* The directions for points P (a lane per pair, P[0] at the start of the
 * motion, P[1] at its end) at distance md (per lane); the in-plane ones
 * first when inplane_first (hy_filter_sat_order's hint 4: for nearly
 * coplanar features, where the others cannot separate). The answer is the
 * same in either order. */
static inline vd sat4_keep_points(const vd3 P[2][4], int is_vf, vd md, int inplane_first) {
    sat4 s;
    sat4_make(&s, P, is_vf);
    vd cull = _mm256_setzero_pd();
#define TRY(n)                                                                                                         \
    do {                                                                                                               \
        cull = or_(cull, apart4(&s, (n), md));                                                                         \
        if (_mm256_movemask_pd(cull) == 0xF) return _mm256_setzero_pd();                                               \
    } while (0)
#define TRY_AXES()                                                                                                     \
    do {                                                                                                               \
        cull = or_(cull, axes4(&s, md));                                                                               \
        if (_mm256_movemask_pd(cull) == 0xF) return _mm256_setzero_pd();                                               \
    } while (0)
    const vd half = splat(0.5);
    if (is_vf) {
        vd3 edge_sum[3];
        for (int e = 0; e < 3; e++) {
            int a = 1 + e, b = 1 + (e + 1) % 3;
            edge_sum[e] = add3(sub3(P[0][b], P[0][a]), sub3(P[1][b], P[1][a]));
        }
        /* in-plane edge normals (hy_sat_plane_normal: normal at t = 0 plus
         * at t = 1) */
        vd3 n = add3(cross3(sub3(P[0][2], P[0][1]), sub3(P[0][3], P[0][1])),
                     cross3(sub3(P[1][2], P[1][1]), sub3(P[1][3], P[1][1])));
        if (inplane_first)
            for (int e = 0; e < 3; e++) TRY(cross3(n, edge_sum[e]));
        /* normals at both ends */
        for (int t = 0; t < 2; t++) TRY(cross3(sub3(P[t][2], P[t][1]), sub3(P[t][3], P[t][1])));
        /* relative motion (against the centroid's) crossed with the edges */
        vd3 mv[4];
        for (int i = 0; i < 4; i++) mv[i] = sub3(P[1][i], P[0][i]);
        vd third = splat(3.0);
        vd3 tri = add3(add3(mv[1], mv[2]), mv[3]);
        vd3 d = {sub(mv[0].x, _mm256_div_pd(tri.x, third)), sub(mv[0].y, _mm256_div_pd(tri.y, third)),
                 sub(mv[0].z, _mm256_div_pd(tri.z, third))};
        for (int e = 0; e < 3; e++) TRY(cross3(d, scale3(edge_sum[e], half)));
        TRY_AXES(); /* coordinate axes */
        if (!inplane_first)
            for (int e = 0; e < 3; e++) TRY(cross3(n, edge_sum[e]));
    } else {
        vd3 a1 = add3(sub3(P[0][1], P[0][0]), sub3(P[1][1], P[1][0]));
        vd3 a2 = add3(sub3(P[0][3], P[0][2]), sub3(P[1][3], P[1][2]));
        vd3 n = add3(cross3(sub3(P[0][1], P[0][0]), sub3(P[0][3], P[0][2])),
                     cross3(sub3(P[1][1], P[1][0]), sub3(P[1][3], P[1][2])));
        /* the midpoints' offset normal to the first edge */
        vd3 off = sub3(add3(add3(add3(P[0][2], P[0][3]), P[1][2]), P[1][3]),
                       add3(add3(add3(P[0][0], P[0][1]), P[1][0]), P[1][1]));
        vd aa = dot3(a1, a1), oa = dot3(off, a1);
        vd3 dir = sub3(scale3(off, aa), scale3(a1, oa));
        if (inplane_first) {
            TRY(cross3(n, a1));
            TRY(cross3(n, a2));
            TRY(dir);
        }
        for (int t = 0; t < 2; t++) TRY(cross3(sub3(P[t][1], P[t][0]), sub3(P[t][3], P[t][2])));
        vd3 mv[4];
        for (int i = 0; i < 4; i++) mv[i] = sub3(P[1][i], P[0][i]);
        vd3 d = sub3(scale3(add3(mv[0], mv[1]), half), scale3(add3(mv[2], mv[3]), half));
        TRY(cross3(d, scale3(a1, half)));
        TRY(cross3(d, scale3(a2, half)));
        TRY_AXES();
        if (!inplane_first) {
            TRY(cross3(n, a1));
            TRY(cross3(n, a2));
            TRY(dir);
        }
    }
#undef TRY
#undef TRY_AXES
    return _mm256_xor_pd(cull, _mm256_castsi256_pd(_mm256_set1_epi64x(-1)));
}

/* The points of the pairs in lanes li of L, a lane per pair. */
static void lanes_points(const lanes* L, const int* li, vd3 P[2][4]) {
    for (int s = 0; s < 2; s++)
        for (int i = 0; i < 4; i++) {
            int r = (4 * s + i) * 3;
            P[s][i].x = lane_get(L, r, li);
            P[s][i].y = lane_get(L, r + 1, li);
            P[s][i].z = lane_get(L, r + 2, li);
        }
}

static vd sat4_keep(const lanes* L, const int* li, int is_vf, double md_s) {
    vd3 P[2][4];
    lanes_points(L, li, P);
    return sat4_keep_points(P, is_vf, splat(md_s), 0);
}

/* hy_ccd_slab_apart (collision/ccd_query.h) on four lanes, the parts
 * [lo, lo + HY_FILTER_SLAB_WIDTH] of the pairs li of L: the positions at
 * the part's ends made as it makes them (x0 + lo (x1 - x0), one rounding
 * each), the axes at its distance 32 eps pm, in-plane directions first
 * (as its hint). All-ones where not separated. */
static vd slab4_keep(const lanes* L, const int* li, vd lo, vd pm, int is_vf) {
    vd hi = add(lo, splat(HY_FILTER_SLAB_WIDTH));
    vd3 P[2][4];
    lanes_points(L, li, P);
    for (int i = 0; i < 4; i++) {
        vd3 a = P[0][i], d = sub3(P[1][i], a);
        P[0][i] = add3(a, scale3(d, lo));
        P[1][i] = add3(a, scale3(d, hi));
    }
    return sat4_keep_points(P, is_vf, mul(splat(32.0 * DBL_EPSILON), pm), 1);
}

/* The points of pairs p[0..4) (p[0]'s again for q >= count: padding whose
 * answers are not used) into lanes l .. l + 3 of L: per point and end,
 * four packed rows loaded and turned into an x, a y and a z row. */
static void gather4(lanes* L, const hy_feature_pair* p, int count, int l, const double* xx) {
    for (int i = 0; i < 4; i++) {
        const double* r[4];
        for (int q = 0; q < 4; q++) r[q] = xx + HY_FILTER_PACK * (int64_t)p[q < count ? q : 0].v[i];
        for (int s = 0; s < 2; s++) {
            vd a0 = _mm256_load_pd(r[0] + 4 * s), a1 = _mm256_load_pd(r[1] + 4 * s);
            vd a2 = _mm256_load_pd(r[2] + 4 * s), a3 = _mm256_load_pd(r[3] + 4 * s);
            vd xz01 = _mm256_unpacklo_pd(a0, a1), y_01 = _mm256_unpackhi_pd(a0, a1);
            vd xz23 = _mm256_unpacklo_pd(a2, a3), y_23 = _mm256_unpackhi_pd(a2, a3);
            int row = (4 * s + i) * 3;
            _mm256_store_pd(&L->c[row][l], _mm256_permute2f128_pd(xz01, xz23, 0x20));
            _mm256_store_pd(&L->c[row + 1][l], _mm256_permute2f128_pd(y_01, y_23, 0x20));
            _mm256_store_pd(&L->c[row + 2][l], _mm256_permute2f128_pd(xz01, xz23, 0x31));
        }
    }
}

/* hy_filter_slabs's plan (collision/filter.c, slab_plan) on four lanes,
 * the pairs li of L, from the coplanarity lanes' sums and scale (vsum):
 * per lane, the bitmask of the eighths whose separating axes must separate
 * (bit j: [j/8, (j+1)/8]) and the largest |coordinate| pm_out, or -1 when
 * the plan concludes nothing. The scalar plan's operations in its order,
 * so the same answers. */
static void plan4(const lanes* L, const double (*vsum)[CHUNK + 4], const int* li, int res[4], double pm_out[4]) {
    vd b[4];
    for (int g = 0; g < 4; g++) b[g] = _mm256_set_pd(vsum[g][li[3]], vsum[g][li[2]], vsum[g][li[1]], vsum[g][li[0]]);
    vd scale = _mm256_set_pd(vsum[4][li[3]], vsum[4][li[2]], vsum[4][li[1]], vsum[4][li[0]]);
    vd pm = _mm256_setzero_pd();
    for (int r = 0; r < 24; r++) pm = vmax(pm, vabs(lane_get(L, r, li)));
    vd ok = and_(and_(gt(pm, splat(0x1p-200)), lt(pm, splat(0x1p200))), lt(scale, splat(1e250)));
    const double u = DBL_EPSILON / 2;
    vd c[4] = {b[0], _mm256_div_pd(b[1], splat(3.0)), _mm256_div_pd(b[2], splat(3.0)), b[3]};
    vd cm = _mm256_setzero_pd();
    for (int g = 0; g < 4; g++) cm = vmax(cm, vabs(c[g]));
    vd err = add(add(mul(splat(32.0 * u), scale), mul(splat(2.0 * u), cm)), splat(1e-300));
    vd M = add(cm, err);
    vd bound = add(mul(add(err, mul(splat(128.0 * u), M)), splat(1 + 4 * u)), splat(1e-300));
    vd nbound = sub(_mm256_setzero_pd(), bound);
    vd c9[4];
    for (int g = 0; g < 4; g++) c9[g] = mul(c[g], splat(0x1p-9));
    int bits[4] = {0, 0, 0, 0};
    for (int j = 0; j < HY_FILTER_SLAB_PARTS; j++) {
        vd pos = _mm256_castsi256_pd(_mm256_set1_epi64x(-1)), neg = pos;
        for (int i = 0; i < 4; i++) {
            const double* T = hy_filter_slab_T[j][i];
            vd v = add(add(add(mul(c9[0], splat(T[0])), mul(c9[1], splat(T[1]))), mul(c9[2], splat(T[2]))),
                       mul(c9[3], splat(T[3])));
            pos = and_(pos, gt(v, bound));
            neg = and_(neg, lt(v, nbound));
        }
        int open = ~_mm256_movemask_pd(or_(pos, neg)) & 0xF;
        for (int q = 0; q < 4; q++) bits[q] |= ((open >> q) & 1) << j;
    }
    int okm = _mm256_movemask_pd(ok);
    _mm256_storeu_pd(pm_out, pm);
    for (int q = 0; q < 4; q++) res[q] = (okm >> q) & 1 ? bits[q] : -1;
}

static void store_lanes(vd keep, const int* idx, int count, uint8_t* out) {
    int mask = _mm256_movemask_pd(keep);
    for (int q = 0; q < count; q++) out[idx[q]] = (uint8_t)((mask >> q) & 1);
}

static void pairs_avx2(const hy_feature_pair* pairs, int64_t n, const double* xx, int in_range,
                       double min_distance, uint8_t* keep) {
    lanes all;
    _Alignas(32) double vsum[5][CHUNK + 4]; /* per pair: V's Bernstein sums and scale (coplanar4) */
    int idx[2][CHUNK];
    struct {
        int at[2][CHUNK * HY_FILTER_SLAB_PARTS];
        double lo[2][CHUNK * HY_FILTER_SLAB_PARTS], pm[2][CHUNK * HY_FILTER_SLAB_PARTS];
    } slabs; /* parts waiting for their separating axes, by kind */
    int coplanar_on = !(min_distance > 0);
    double md = min_distance > 0 ? min_distance : 0.0;
    int hint = 0; /* for the pairs the lanes leave to the scalar code */
    for (int64_t c = 0; c < n; c += CHUNK) {
        int m = n - c < CHUNK ? (int)(n - c) : CHUNK;
        const hy_feature_pair* p = pairs + c;
        uint8_t* out = keep + c;
        uint8_t lane_ok[CHUNK];
        int m4 = (m + 3) & ~3;
        for (int l = 0; l < m4; l += 4) {
            gather4(&all, p + l, m - l, l, xx);
            /* every |coordinate| <= LANE_MAX (false for NaN): known for
             * all points when the packing found them so */
            int okm = 0xF;
            if (!in_range) {
                vd ok = _mm256_castsi256_pd(_mm256_set1_epi64x(-1));
                for (int r = 0; r < 24; r++)
                    ok = and_(ok, _mm256_cmp_pd(vabs(_mm256_load_pd(&all.c[r][l])), splat(LANE_MAX), _CMP_LE_OQ));
                okm = _mm256_movemask_pd(ok);
            }
            int mask = coplanar_on ? _mm256_movemask_pd(coplanar4(&all, l, vsum)) : 0xF;
            for (int q = 0; q < 4 && l + q < m; q++) {
                out[l + q] = (uint8_t)((mask >> q) & 1);
                lane_ok[l + q] = (uint8_t)((okm >> q) & 1);
            }
        }
        /* Survivors by kind, four lanes gathered at a time; the pairs the
         * lanes cannot take, scalar. */
        int count[2] = {0, 0};
        for (int l = 0; l < m; l++) {
            if (!lane_ok[l]) {
                out[l] = (uint8_t)keep_one(&p[l], xx, min_distance, &hint);
                continue;
            }
            if (!out[l]) continue;
            int k = p[l].kind == HY_FEATURE_EE;
            idx[k][count[k]++] = l;
        }
        for (int k = 0; k < 2; k++)
            for (int l = 0; l < count[k]; l += 4) {
                int here = count[k] - l < 4 ? count[k] - l : 4;
                int li[4];
                for (int q = 0; q < 4; q++) li[q] = idx[k][l + (q < here ? q : 0)];
                store_lanes(sat4_keep(&all, li, k == 0, md), li, here, out);
            }
        /* The survivors' parts of the step (hy_filter_slabs): planned one
         * by one, then every part that needs its separating axes, four at
         * a time by kind; a pair is culled when all of its parts are
         * separated. */
        if (coplanar_on) {
            int tn[2] = {0, 0}, sv[CHUNK], ns = 0;
            for (int l = 0; l < m; l++)
                if (lane_ok[l] && out[l]) sv[ns++] = l;
            for (int g = 0; g < ns; g += 4) {
                int here = ns - g < 4 ? ns - g : 4, li[4], res[4];
                double pm[4];
                for (int q = 0; q < 4; q++) li[q] = sv[g + (q < here ? q : 0)];
                plan4(&all, vsum, li, res, pm);
                for (int q = 0; q < here; q++) {
                    int l = li[q];
                    if (res[q] < 0) continue;
                    int k = p[l].kind == HY_FEATURE_EE;
                    out[l] = 0; /* until a part is not separated */
                    for (int j = 0; j < HY_FILTER_SLAB_PARTS; j++)
                        if ((res[q] >> j) & 1) {
                            slabs.at[k][tn[k]] = l;
                            slabs.lo[k][tn[k]] = j * HY_FILTER_SLAB_WIDTH;
                            slabs.pm[k][tn[k]] = pm[q];
                            tn[k]++;
                        }
                }
            }
            for (int k = 0; k < 2; k++)
                for (int t = 0; t < tn[k]; t += 4) {
                    int here = tn[k] - t < 4 ? tn[k] - t : 4;
                    int li[4];
                    double lo[4], pm[4];
                    for (int q = 0; q < 4; q++) {
                        int u = t + (q < here ? q : 0);
                        li[q] = slabs.at[k][u];
                        lo[q] = slabs.lo[k][u];
                        pm[q] = slabs.pm[k][u];
                    }
                    int kept = _mm256_movemask_pd(slab4_keep(&all, li, _mm256_loadu_pd(lo), _mm256_loadu_pd(pm), k == 0));
                    for (int q = 0; q < here; q++)
                        if ((kept >> q) & 1) out[li[q]] = 1;
                }
        }

    }
}

#pragma GCC pop_options

static int simd_state = -1; /* core/simd.h */

static int simd_on(void) { return hy_simd_on(&simd_state); }

int hy_filter_pairs_simd(int on) { return hy_simd_set(&simd_state, on); }
#else
int hy_filter_pairs_simd(int on) {
    (void)on;
    return 0;
}
#endif

void hy_filter_pairs(const hy_feature_pair* pairs, int64_t n, const double* xx, int in_range, double min_distance,
                     uint8_t* keep) {
#if defined(HY_FILTER_AVX2)
    if (simd_on()) {
        pairs_avx2(pairs, n, xx, in_range, min_distance, keep);
        return;
    }
#endif
    pairs_scalar(pairs, n, xx, min_distance, keep);
}
