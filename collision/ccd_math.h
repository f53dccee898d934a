/* Conservative continuous collision arithmetic shared by the C code and a
 * future CUDA twin (HY_HD, no FMA contraction: the build passes
 * -ffp-contract=off to both).
 *
 * Method (docs/CCD.md has the full argument). Both elementary tests reduce to
 * "does F(t, u, v) = 0 for some (t, u, v) in [0,1]^3", where F is the vector
 * from a point of one primitive to a point of the other at time t:
 *
 *   vertex-face: F = p - X,  X = (1-u)((1-v) a + v c) + u b   (a Duffy map of
 *                the square onto the triangle: no u+v<=1 constraint, so a box
 *                never straddles the triangle's edge)
 *   edge-edge:   F = (a + u (b-a)) - (c + v (d-c))
 *
 * with every position moving linearly in t. F is affine in each of t, u, v
 * separately (multilinear), so over any box F lies in the convex hull of its
 * 8 corner values. A box is discarded when a direction separates that hull
 * from the origin by more than the rounding bound (3 axes, the centroid of
 * the corners, the 3 face normals of the hull). A box that is not discarded
 * is accepted as a contact when its hull lies within rounding noise of the
 * origin, or when F is affine on it up to a small tolerance and its time span
 * is short; otherwise it is bisected. Boxes are searched earliest time first
 * (a heap), so the first accepted box gives the time of impact.
 *
 * Exclusion is the only step that can cause a false negative, and it uses a
 * rigorous rounding bound: per axis k, with m_k the largest |coordinate| of
 * the 8 inputs on that axis, every computed corner value differs from the
 * exact one by at most eps_k = 48 u m_k + DBL_MIN (u the unit roundoff of
 * the arithmetic type; the derivation, 34 u m_k, is in docs/CCD.md). Corner
 * parameters are dyadic rationals (bisection of [0,1] to at most
 * HY_CCD_MAX_LEVEL levels), so they and 1 - u are exact.
 *
 * The typed part is written once against HY_CCD_REAL and instantiated for
 * double (suffix _d) and, on the host only, x87 long double (suffix _ld,
 * unit roundoff 2^-64): the long double pass re-checks the contacts that the
 * double pass reports, removing most false positives that lie below double
 * resolution. Under nvcc long double is double, so the _ld pass is not
 * compiled there. */
#ifndef HY_CCD_REAL
#ifndef HY_COLLISION_CCD_MATH_H
#define HY_COLLISION_CCD_MATH_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "collision/closest.h"
#include "engine/hd.h"

#if defined(__SSE2__) && !defined(__CUDACC__)
#include <emmintrin.h>
#define HY_CCD_VOL_SSE2 1
#else
#define HY_CCD_VOL_SSE2 0
#endif

/* Deepest bisection per parameter: keeps u, 1-u, v exact dyadics. */
#define HY_CCD_MAX_LEVEL 50
/* Default work cap (box evaluations per pass) before answering
 * "collision". */
#define HY_CCD_DEFAULT_MAX_BOXES 1000
#ifndef HY_CCD_CERTAIN_T_BIAS
#define HY_CCD_CERTAIN_T_BIAS 1000
#endif

typedef struct hy_ccd_box {
    double lo[3], hi[3];    /* t, u, v */
    unsigned char level[3]; /* bisections so far per parameter */
} hy_ccd_box;

/* Result of a search, for statistics. */
typedef struct hy_ccd_stats {
    int boxes;  /* boxes evaluated */
    int capped; /* 1 if the work cap forced a conservative answer */
    int robust; /* 1 if the accepted box certainly holds a contact */
    int pending; /* boxes in the heap: in, to resume; out, left over */
} hy_ccd_stats;

/* Box verdict. */
enum { HY_CCD_EXCLUDED = 0, HY_CCD_ACCEPTED = 1, HY_CCD_SPLIT = 2 };

/* Finite operands only (inputs are checked): plain compares, no libm call. */
HY_HD double hy_ccd_min(double a, double b) { return a < b ? a : b; }
HY_HD double hy_ccd_max(double a, double b) { return a > b ? a : b; }

/* 2^e, exactly ldexp(1.0, e), for -1022 <= e <= 1023 (the slab widths and
 * grids: no library call on the host, a few per query otherwise). */
HY_HD double hy_ccd_exp2i(int e) {
#ifdef __CUDA_ARCH__
    return ldexp(1.0, e);
#else
    uint64_t bits = (uint64_t)(e + 1023) << 52;
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
#endif
}

/* Exact swept-AABB separation: 1 if on some axis every point of set a is
 * farther than md from every point of set b (so no contact is possible). */
HY_HD int hy_ccd_aabb_apart(const double* const* a, int na, const double* const* b, int nb, double md) {
    /* fl(x - y) > md (1 + 2^-50) implies x - y > md; with md = 0 the sign of
     * the rounded difference is exact. */
    double thr = md * (1.0 + 0x1p-50);
    for (int k = 0; k < 3; k++) {
        double amin = a[0][k], amax = a[0][k], bmin = b[0][k], bmax = b[0][k];
        for (int i = 1; i < na; i++) {
            amin = hy_ccd_min(amin, a[i][k]);
            amax = hy_ccd_max(amax, a[i][k]);
        }
        for (int i = 1; i < nb; i++) {
            bmin = hy_ccd_min(bmin, b[i][k]);
            bmax = hy_ccd_max(bmax, b[i][k]);
        }
        if (bmin - amax > thr || amin - bmax > thr) return 1;
    }
    return 0;
}

/* Earliest-first order: smaller t_lo, then the deeper box (depth-first). */
HY_HD int hy_ccd_box_before(const hy_ccd_box* a, const hy_ccd_box* b) {
    if (a->lo[0] != b->lo[0]) return a->lo[0] < b->lo[0];
    return a->level[0] + a->level[1] + a->level[2] > b->level[0] + b->level[1] + b->level[2];
}

HY_HD void hy_ccd_heap_push(hy_ccd_box* h, int* n, const hy_ccd_box* b) {
    int i = (*n)++;
    while (i > 0) {
        int p = (i - 1) / 2;
        if (!hy_ccd_box_before(b, &h[p])) break;
        h[i] = h[p];
        i = p;
    }
    h[i] = *b;
}

HY_HD hy_ccd_box hy_ccd_heap_pop(hy_ccd_box* h, int* n) {
    hy_ccd_box top = h[0];
    hy_ccd_box last = h[--(*n)];
    int i = 0;
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        const hy_ccd_box* mb = &last;
        if (l < *n && hy_ccd_box_before(&h[l], mb)) {
            m = l;
            mb = &h[l];
        }
        if (r < *n && hy_ccd_box_before(&h[r], mb)) m = r;
        if (m == i) break;
        h[i] = h[m];
        i = m;
    }
    if (*n > 0) h[i] = last;
    return top;
}

/* Time restriction for touching queries (min_distance 0). A contact at
 * time t makes the four points coplanar, so the volume
 * V(t) = det(x1 - x0, x2 - x0, x3 - x0) vanishes there. V is a cubic in t;
 * where its Bernstein coefficients on an interval all exceed their error
 * bound with one sign, that interval holds no contact. */
HY_HD double hy_ccd_abs(double a) { return hy_ccd_max(a, -a); } /* branch-free, see hy_ccd_rabs */

/* The volume's Bernstein sums (collision/filter.c's coplanarity filter and
 * hy_ccd_vol_cubic below): with e_i = x_{i+1} - x_0 (points x0[0..3] at
 * t = 0, x1[0..3] at t = 1), V(t) = det(e_0, e_1, e_2) is a cubic whose
 * Bernstein coefficients, times 1, 3, 3, 1, group the 8 corner
 * determinants det(e_0 at end i, e_1 at end j, e_2 at end k) =
 * e_0 . (e_1 x e_2) by i + j + k; the 4 cross products are shared. b[g]
 * gets group g's sum, abc[i] the largest |component| of e_i over both
 * ends (for the error bounds). On the host, SSE2 puts the two ends in the
 * two lanes of a register; it forms the same products and sums in the same
 * order as the scalar code, so both give the same bits. */
#if HY_CCD_VOL_SSE2
typedef struct hy_ccd_v2x3 {
    __m128d x, y, z;
} hy_ccd_v2x3;

static inline __m128d hy_ccd_swap2(__m128d a) { return _mm_shuffle_pd(a, a, 1); }

static inline hy_ccd_v2x3 hy_ccd_swap3(hy_ccd_v2x3 a) {
    hy_ccd_v2x3 r = {hy_ccd_swap2(a.x), hy_ccd_swap2(a.y), hy_ccd_swap2(a.z)};
    return r;
}

static inline hy_ccd_v2x3 hy_ccd_cross2(hy_ccd_v2x3 v, hy_ccd_v2x3 w) {
    hy_ccd_v2x3 r = {_mm_sub_pd(_mm_mul_pd(v.y, w.z), _mm_mul_pd(v.z, w.y)),
                     _mm_sub_pd(_mm_mul_pd(v.z, w.x), _mm_mul_pd(v.x, w.z)),
                     _mm_sub_pd(_mm_mul_pd(v.x, w.y), _mm_mul_pd(v.y, w.x))};
    return r;
}

static inline __m128d hy_ccd_dot2(hy_ccd_v2x3 u, hy_ccd_v2x3 c) {
    return _mm_add_pd(_mm_add_pd(_mm_mul_pd(u.x, c.x), _mm_mul_pd(u.y, c.y)), _mm_mul_pd(u.z, c.z));
}

/* The largest |component| over both lanes (exact, as the scalar maxima). */
static inline double hy_ccd_absmax2(hy_ccd_v2x3 a) {
    const __m128d sign = _mm_set1_pd(-0.0);
    __m128d m = _mm_max_pd(_mm_andnot_pd(sign, a.x), _mm_andnot_pd(sign, a.y));
    m = _mm_max_pd(m, _mm_andnot_pd(sign, a.z));
    return _mm_cvtsd_f64(_mm_max_sd(m, hy_ccd_swap2(m)));
}

static inline void hy_ccd_vol_sums(const double* const* x0, const double* const* x1, double b[4], double abc[3]) {
    /* lane 0 at t = 0, lane 1 at t = 1 */
    hy_ccd_v2x3 e[3];
    __m128d ox = _mm_set_pd(x1[0][0], x0[0][0]), oy = _mm_set_pd(x1[0][1], x0[0][1]),
            oz = _mm_set_pd(x1[0][2], x0[0][2]);
    for (int i = 0; i < 3; i++) {
        e[i].x = _mm_sub_pd(_mm_set_pd(x1[i + 1][0], x0[i + 1][0]), ox);
        e[i].y = _mm_sub_pd(_mm_set_pd(x1[i + 1][1], x0[i + 1][1]), oy);
        e[i].z = _mm_sub_pd(_mm_set_pd(x1[i + 1][2], x0[i + 1][2]), oz);
    }
    /* e_1 x e_2 at ends (j, k): lanes (00, 11) and (01, 10) */
    hy_ccd_v2x3 same = hy_ccd_cross2(e[1], e[2]);
    hy_ccd_v2x3 mixed = hy_ccd_cross2(e[1], hy_ccd_swap3(e[2]));
    hy_ccd_v2x3 u = e[0], us = hy_ccd_swap3(e[0]);
    double ds[2], dss[2], dm[2], dms[2];
    _mm_storeu_pd(ds, hy_ccd_dot2(u, same));     /* (d000, d111) */
    _mm_storeu_pd(dss, hy_ccd_dot2(us, same));   /* (d100, d011) */
    _mm_storeu_pd(dm, hy_ccd_dot2(u, mixed));    /* (d001, d110) */
    _mm_storeu_pd(dms, hy_ccd_dot2(us, mixed));  /* (d101, d010) */
    /* the scalar order: m = 0..7 adds d_ijk (i = m & 1, j, k the next bits) */
    b[0] = ds[0];
    b[1] = (dss[0] + dms[1]) + dm[0];
    b[2] = (dm[1] + dms[0]) + dss[1];
    b[3] = ds[1];
    for (int i = 0; i < 3; i++) abc[i] = hy_ccd_absmax2(e[i]);
}
#endif

/* The scalar form (what CUDA runs, and the reference the SSE2 form must
 * match bit for bit: tests/test_ccd.c). */
HY_HD void hy_ccd_vol_sums_scalar(const double* const* x0, const double* const* x1, double b[4], double abc[3]) {
    double e[2][3][3];
    for (int s = 0; s < 2; s++) {
        const double* const* x = s ? x1 : x0;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) e[s][i][k] = x[i + 1][k] - x[0][k];
    }
    double cr[2][2][3];
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 2; k++) {
            const double* v = e[j][1];
            const double* w = e[k][2];
            cr[j][k][0] = v[1] * w[2] - v[2] * w[1];
            cr[j][k][1] = v[2] * w[0] - v[0] * w[2];
            cr[j][k][2] = v[0] * w[1] - v[1] * w[0];
        }
    for (int g = 0; g < 4; g++) b[g] = 0;
    for (int m = 0; m < 8; m++) {
        int i = m & 1, j = (m >> 1) & 1, k = (m >> 2) & 1;
        const double* u = e[i][0];
        b[i + j + k] += (u[0] * cr[j][k][0] + u[1] * cr[j][k][1]) + u[2] * cr[j][k][2];
    }
    for (int i = 0; i < 3; i++) {
        double m = 0;
        for (int s = 0; s < 2; s++)
            for (int k = 0; k < 3; k++) m = hy_ccd_max(m, hy_ccd_abs(e[s][i][k]));
        abc[i] = m;
    }
}

#if !HY_CCD_VOL_SSE2
HY_HD void hy_ccd_vol_sums(const double* const* x0, const double* const* x1, double b[4], double abc[3]) {
    hy_ccd_vol_sums_scalar(x0, x1, b, abc);
}
#endif

/* Bernstein coefficients c[0..3] of V on [0, 1] and a rigorous bound *err on
 * |computed - exact| for each. x[0..3] at t=0, x[4..7] at t=1. Returns 0
 * when the magnitudes are outside the range where the bound holds
 * (underflow, overflow): then nothing may be concluded. The batch
 * filters' lanes repeat its last steps from their own sums
 * (collision/filter_pairs.c, plan4): change both together. */
HY_HD int hy_ccd_vol_cubic(const double* const* x, double c[4], double* err) {
    double b[4], abc[3];
    hy_ccd_vol_sums(x, x + 4, b, abc);
    /* Error: with A, B, C the largest |component| of the three edge
     * vectors (both ends), each determinant's terms sum to at most
     * 6 A B C in magnitude, and the differences (1 rounding each, 3 per
     * monomial), the determinant (5 roundings deep) and the grouping sum (2)
     * stay under 11 u of that per determinant (the argument of
     * collision/filter.c); after dividing group g by its C(3, g)
     * determinants, 32 u 6 A B C bounds each coefficient's error with room
     * for the rounding of the bound itself, plus 2 u |c| for the division
     * by 3 and 1e-300 for underflow. */
    double scale = 6.0 * (abc[0] * abc[1] * abc[2]);
    if (!(scale < 1e250)) return 0;
    const double u = DBL_EPSILON / 2;
    c[0] = b[0];
    c[1] = b[1] / 3.0;
    c[2] = b[2] / 3.0;
    c[3] = b[3];
    double cm = 0;
    for (int g = 0; g < 4; g++) cm = hy_ccd_max(cm, hy_ccd_abs(c[g]));
    *err = 32.0 * u * scale + 2.0 * u * cm + 1e-300;
    return 1;
}

/* V at t (a dyadic, so 1 - t is exact) from the coefficients on [0, 1]:
 * de Casteljau, a convex combination, adds at most 9 u M to their error;
 * *dv gets V'(t) (an estimate, for Newton). */
HY_HD double hy_ccd_vol_eval(const double c[4], double t, double* dv) {
    double s = 1 - t;
    double a0 = c[0] * s + c[1] * t, a1 = c[1] * s + c[2] * t, a2 = c[2] * s + c[3] * t;
    double p0 = a0 * s + a1 * t, p1 = a1 * s + a2 * t;
    *dv = 3 * (p1 - p0);
    return p0 * s + p1 * t;
}

/* The cell [alpha, alpha + cw] (a multiple of cw, inside [lo, lo + w]) that
 * holds the single root of V in [lo, lo + w], where b[0..3] are V's
 * Bernstein coefficients on that interval, all beyond bound with one sign
 * change (so V has the sign of b[0] at lo and of b[3] at lo + w); -1 when
 * two signs beyond bound do not confirm the estimate. Then V has no root
 * elsewhere in the interval.
 *
 * The estimate is Newton's method kept inside a bracket: it starts where
 * the control polygon crosses zero (closer to the root than the chord of
 * the end values, which left Newton outside the interval on a fifth of
 * cloth-ball's slabs), and a step that leaves the bracket, or is NaN, is
 * replaced by its midpoint. Only the final two signs decide, so the
 * estimate needs no rigour. */
HY_HD double hy_ccd_vol_cell(const double c[4], const double b[4], double lo, double w, double cw, double bound) {
    const double third = 1.0 / 3.0;
    double t;
    if ((b[0] > 0) != (b[1] > 0))
        t = lo + w * ((b[0] / (b[0] - b[1])) * third);
    else if ((b[1] > 0) != (b[2] > 0))
        t = lo + w * ((1.0 + b[1] / (b[1] - b[2])) * third);
    else
        t = lo + w * ((2.0 + b[2] / (b[2] - b[3])) * third);
    double ta = lo, tb = lo + w, dv;
    for (int it = 0; it < 8; it++) {
        double v = hy_ccd_vol_eval(c, t, &dv);
        if ((v > 0) == (b[0] > 0))
            ta = t;
        else
            tb = t;
        double tn = t - v / dv;
        if (!(tn > ta && tn < tb)) tn = 0.5 * (ta + tb);
        double step = tn - t;
        t = tn;
        if (hy_ccd_abs(step) < 0.5 * cw) break; /* inside its cell or next to it */
    }
    /* The cell's index: (t - lo) / cw is exact (dyadics at a level <= 40)
     * and at most 2^40, so truncation is floor for it (floor is a library
     * call on baseline x86-64); t before lo or NaN: no cell. */
    double q = (t - lo) / cw;
    if (!(q >= 0.0 && q <= 0x1p41)) return -1;
    double alpha = (double)(int64_t)q * cw + lo;
    if (!(alpha >= lo && alpha + cw <= lo + w)) return -1;
    double va = hy_ccd_vol_eval(c, alpha, &dv), vb = hy_ccd_vol_eval(c, alpha + cw, &dv);
    int ok_a = b[0] > 0 ? va > bound : va < -bound;
    int ok_b = b[3] > 0 ? vb > bound : vb < -bound;
    return ok_a && ok_b ? alpha : -1;
}

/* The dyadic intervals [lo, lo + 2^-level] of [0, 1] at the given level
 * where V may vanish, earliest first, into slab_lo[0..max_slabs-1]: every
 * t outside them is certainly not a contact time. Returns their number, or
 * -1 when there are more than max_slabs or the subdivision takes more than
 * max_steps splits (V nearly zero over a range: coplanar motion), when the
 * caller must search all of [0, 1]. level <= 40. */
HY_HD int hy_ccd_vol_slabs(const double c[4], double err, int level, int max_slabs, int max_steps,
                           double* slab_lo) {
    /* Each split averages three times (one rounding of at most u M each,
     * the halving is exact above underflow) and values stay within the
     * hull of the coefficients: after at most 40 levels the error is below
     * err + 120 u M, M bounding every |coefficient|; 1e-300 absorbs
     * underflow of the halvings. */
    const double u = DBL_EPSILON / 2;
    double M = 0;
    for (int g = 0; g < 4; g++) M = hy_ccd_max(M, hy_ccd_abs(c[g]));
    M += err;
    double bound = (err + 128.0 * u * M) * (1 + 4 * u) + 1e-300;
    struct {
        double c[4];
        double lo, w;
        int level;
    } stack[48];
    const double cw = hy_ccd_exp2i(-level); /* the slab width (exact) */
    int n = 0, count = 0, steps = 0;
    /* V vanishes within rounding everywhere (coplanar or static motion):
     * nothing to restrict. */
    if (hy_ccd_abs(c[0]) <= bound && hy_ccd_abs(c[1]) <= bound && hy_ccd_abs(c[2]) <= bound &&
        hy_ccd_abs(c[3]) <= bound)
        return -1;
    for (int g = 0; g < 4; g++) stack[0].c[g] = c[g];
    stack[0].lo = 0.0;
    stack[0].w = 1.0;
    stack[0].level = 0;
    n = 1;
    while (n > 0) {
        n--;
        double b0 = stack[n].c[0], b1 = stack[n].c[1], b2 = stack[n].c[2], b3 = stack[n].c[3];
        double lo = stack[n].lo, hw = 0.5 * stack[n].w;
        int lv = stack[n].level;
        if ((b0 > bound && b1 > bound && b2 > bound && b3 > bound) ||
            (b0 < -bound && b1 < -bound && b2 < -bound && b3 < -bound))
            continue; /* no root here */
        if (lv >= level) {
            if (count >= max_slabs) return -1;
            slab_lo[count++] = lo;
            continue;
        }
        if (++steps > max_steps) return -1;
        /* One sign change among coefficients that all exceed the bound:
         * exactly one root in the interval (Descartes' rule in the
         * Bernstein basis). Find its cell at the target level by Newton on
         * the cubic and confirm it with two signs, saving the splits down
         * to that level; if the signs do not confirm it, split as usual. */
        int changes = ((b0 > 0) != (b1 > 0)) + ((b1 > 0) != (b2 > 0)) + ((b2 > 0) != (b3 > 0));
        if (changes == 1 && hy_ccd_abs(b0) > bound && hy_ccd_abs(b1) > bound && hy_ccd_abs(b2) > bound &&
            hy_ccd_abs(b3) > bound && count < max_slabs) {
            double alpha = hy_ccd_vol_cell(c, stack[n].c, lo, 2.0 * hw, cw, bound);
            if (alpha >= 0) {
                slab_lo[count++] = alpha;
                continue;
            }
        }
        /* de Casteljau at the midpoint. */
        double m01 = (b0 + b1) * 0.5, m12 = (b1 + b2) * 0.5, m23 = (b2 + b3) * 0.5;
        double m012 = (m01 + m12) * 0.5, m123 = (m12 + m23) * 0.5;
        double mid = (m012 + m123) * 0.5;
        /* right half below, left half on top: earliest first */
        stack[n].c[0] = mid;
        stack[n].c[1] = m123;
        stack[n].c[2] = m23;
        stack[n].c[3] = b3;
        stack[n].lo = lo + hw;
        stack[n].w = hw;
        stack[n].level = lv + 1;
        n++;
        stack[n].c[0] = b0;
        stack[n].c[1] = m01;
        stack[n].c[2] = m012;
        stack[n].c[3] = mid;
        stack[n].lo = lo;
        stack[n].w = hw;
        stack[n].level = lv + 1;
        n++;
    }
    return count;
}

/* The typed part, once per arithmetic type. */
#define HY_CCD_REAL double
#define HY_CCD_FN(name) name##_d
#define HY_CCD_UNIT (1.0 / 9007199254740992.0) /* 2^-53 */
#include "collision/ccd_math.h"
#undef HY_CCD_REAL
#undef HY_CCD_FN
#undef HY_CCD_UNIT

#if !defined(__CUDACC__) && LDBL_MANT_DIG >= 64
#define HY_CCD_HAVE_LD 1
#define HY_CCD_REAL long double
#define HY_CCD_FN(name) name##_ld
#define HY_CCD_UNIT (1.0L / 18446744073709551616.0L) /* 2^-64 */
#include "collision/ccd_math.h"
#undef HY_CCD_REAL
#undef HY_CCD_FN
#undef HY_CCD_UNIT
#else
#define HY_CCD_HAVE_LD 0
#endif

#endif /* HY_COLLISION_CCD_MATH_H */

#else /* HY_CCD_REAL defined: the typed body */

/* One query in relative form: at time end s (0 or 1),
 * F_s(u, v) = q_s + u e_s - w(u, v) f_s with w = v (1-u) (duffy) or v. */
typedef struct HY_CCD_FN(hy_ccd_problem) {
    HY_CCD_REAL q[2][3], e[2][3], f[2][3];
    HY_CCD_REAL eps[3];      /* rigorous bound on |computed F_k - exact F_k| */
    HY_CCD_REAL axis_thr[3]; /* eps_k + min_distance, rounded up */
    HY_CCD_REAL accept[3];   /* |F_k| bound under which a box counts as touching */
    HY_CCD_REAL md;          /* min_distance, scaled */
    HY_CCD_REAL twist_tol;   /* nonlinearity under which an unseparated box is a contact */
    int t_level;             /* time bisection depth required before accepting on twist */
    int tight;               /* md > 0 with no slack: Euclidean distance bounds and the extra
                                directions of hy_ccd_box_eval (hy_ccd_problem_init) */
    int certain;             /* a contact is known to exist (a point within md at t = 1): an
                                unexcluded box is accepted once its time span is short */
    int duffy;
    int bounded;             /* eps .. twist_tol and t_level made (hy_ccd_problem_bounds) */
} HY_CCD_FN(hy_ccd_problem);

HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_rmin)(HY_CCD_REAL a, HY_CCD_REAL b) { return a < b ? a : b; }
HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_rmax)(HY_CCD_REAL a, HY_CCD_REAL b) { return a > b ? a : b; }
/* As a max of a and -a: compiles to a branch-free max (a compare-and-
 * branch form cannot, as it must keep the sign of -0). */
HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_rabs)(HY_CCD_REAL a) { return HY_CCD_FN(hy_ccd_rmax)(a, -a); }

/* Fill the relative form (hy_ccd_problem_init below: the frame, then the
 * bounds; the frame alone is all Newton's method reads). x[0..3] are the
 * 4 positions at t=0, x[4..7] at t=1, already scaled. For vertex-face
 * x = (p, a, b, c); for edge-edge x = (a, b, c, d). acc_factor scales the touching tolerance in units of
 * eps (>= 1); twist_rel is the nonlinearity tolerance relative to the
 * largest coordinate; t_level the time bisection depth before a box may be
 * accepted on that tolerance; md_slack (>= 0) lets a box count as touching
 * up to md * (1 + md_slack) away, and adds md_slack * md / 2 to the twist
 * tolerance (only more false positives, never fewer contacts). */
HY_HD void HY_CCD_FN(hy_ccd_problem_frame)(HY_CCD_FN(hy_ccd_problem) * pr, const double* const* x, int is_vf,
                                           double md, int t_level, double md_slack) {
    pr->duffy = is_vf;
    pr->certain = 0;
    pr->bounded = 0;
    /* Callers that allow a slack (the step's tests) keep the L1 bounds
     * and the plain direction set: their contacts, and so the simulated
     * motion, do not depend on these refinements. */
    pr->tight = md > 0 && md_slack == 0;
    pr->md = md;
    pr->t_level = t_level;
    for (int s = 0; s < 2; s++) {
        const double* p0 = x[4 * s + 0];
        const double* p1 = x[4 * s + 1];
        const double* p2 = x[4 * s + 2];
        const double* p3 = x[4 * s + 3];
        for (int k = 0; k < 3; k++) {
            if (is_vf) {
                /* F = (p - a) + u (a - b) - v (1-u) (c - a) */
                pr->q[s][k] = (HY_CCD_REAL)p0[k] - (HY_CCD_REAL)p1[k];
                pr->e[s][k] = (HY_CCD_REAL)p1[k] - (HY_CCD_REAL)p2[k];
                pr->f[s][k] = (HY_CCD_REAL)p3[k] - (HY_CCD_REAL)p1[k];
            } else {
                /* F = (a - c) + u (b - a) - v (d - c) */
                pr->q[s][k] = (HY_CCD_REAL)p0[k] - (HY_CCD_REAL)p2[k];
                pr->e[s][k] = (HY_CCD_REAL)p1[k] - (HY_CCD_REAL)p0[k];
                pr->f[s][k] = (HY_CCD_REAL)p3[k] - (HY_CCD_REAL)p2[k];
            }
        }
    }
}

/* The rest of hy_ccd_problem_init: the rounding bounds, tolerances and
 * time depth that certification and the box search read (Newton needs
 * only the frame), for a problem made by hy_ccd_problem_frame with the
 * same x and md. */
HY_HD void HY_CCD_FN(hy_ccd_problem_bounds)(HY_CCD_FN(hy_ccd_problem) * pr, const double* const* x, double md,
                                            double acc_factor, double twist_rel, double md_slack) {
    HY_CCD_REAL mall = 0;
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL m = 0;
        for (int i = 0; i < 8; i++) m = HY_CCD_FN(hy_ccd_rmax)(m, HY_CCD_FN(hy_ccd_rabs)((HY_CCD_REAL)x[i][k]));
        /* 34 units derived in docs/CCD.md; 48 leaves room for the O(u^2)
         * terms and for rounding in this product. */
        pr->eps[k] = 48 * HY_CCD_UNIT * m + (HY_CCD_REAL)DBL_MIN;
        pr->axis_thr[k] = (pr->eps[k] + (HY_CCD_REAL)md) * (1 + 4 * HY_CCD_UNIT);
        pr->accept[k] = (HY_CCD_REAL)md * (1 + (HY_CCD_REAL)md_slack) + (HY_CCD_REAL)acc_factor * pr->eps[k];
        mall = HY_CCD_FN(hy_ccd_rmax)(mall, m);
    }
    pr->twist_tol = (HY_CCD_REAL)twist_rel * mall + (HY_CCD_REAL)(0.5 * md_slack * md);
    /* Nothing moves relative to anything: F does not depend on t, a contact
     * at any time is one at the start of its box, so time needs no
     * refinement. */
    int moving = 0;
    for (int k = 0; k < 3; k++)
        if (pr->q[0][k] != pr->q[1][k] || pr->e[0][k] != pr->e[1][k] || pr->f[0][k] != pr->f[1][k]) moving = 1;
    if (!moving) pr->t_level = 0;
    pr->bounded = 1;
}

HY_HD void HY_CCD_FN(hy_ccd_problem_init)(HY_CCD_FN(hy_ccd_problem) * pr, const double* const* x, int is_vf,
                                          double md, double acc_factor, double twist_rel, int t_level,
                                          double md_slack) {
    HY_CCD_FN(hy_ccd_problem_frame)(pr, x, is_vf, md, t_level, md_slack);
    HY_CCD_FN(hy_ccd_problem_bounds)(pr, x, md, acc_factor, twist_rel, md_slack);
}

/* Corner values of F over a box: F[ti][ui][vi][k]. */
HY_HD void HY_CCD_FN(hy_ccd_corners)(const HY_CCD_FN(hy_ccd_problem) * pr, const hy_ccd_box* b,
                                     HY_CCD_REAL F[2][2][2][3]) {
    HY_CCD_REAL G[2][2][2][3]; /* [time end][ui][vi][k] */
    for (int ui = 0; ui < 2; ui++) {
        HY_CCD_REAL u = ui ? b->hi[1] : b->lo[1];
        for (int vi = 0; vi < 2; vi++) {
            HY_CCD_REAL v = vi ? b->hi[2] : b->lo[2];
            HY_CCD_REAL w = pr->duffy ? v * (1 - u) : v;
            for (int s = 0; s < 2; s++)
                for (int k = 0; k < 3; k++) G[s][ui][vi][k] = (pr->q[s][k] + u * pr->e[s][k]) - w * pr->f[s][k];
        }
    }
    for (int ti = 0; ti < 2; ti++) {
        HY_CCD_REAL t = ti ? b->hi[0] : b->lo[0];
        HY_CCD_REAL s0 = 1 - t;
        for (int ui = 0; ui < 2; ui++)
            for (int vi = 0; vi < 2; vi++)
                for (int k = 0; k < 3; k++) F[ti][ui][vi][k] = G[0][ui][vi][k] * s0 + G[1][ui][vi][k] * t;
    }
}

/* 1 if direction d separates all 8 corners from the origin by more than the
 * rounding bound (plus min_distance). fmx_k bounds |F_k| at the corners. */
HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_dir_bound)(const HY_CCD_FN(hy_ccd_problem) * pr, const HY_CCD_REAL d[3],
                                              const HY_CCD_REAL fmx[3]) {
    HY_CCD_REAL bound = 0, dl1 = 0;
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL a = HY_CCD_FN(hy_ccd_rabs)(d[k]);
        /* error of F_k, plus gamma_3 rounding of the dot product */
        bound += a * (pr->eps[k] + 4 * HY_CCD_UNIT * fmx[k]);
        dl1 += a;
    }
    return (bound + pr->md * dl1) * (1 + 64 * HY_CCD_UNIT) + (HY_CCD_REAL)DBL_MIN;
}

/* An upper bound on |d|_2, given |d|_1 = dl1 (itself one, the fallback
 * when the squared norm ss under- or overflowed). */
HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_norm2_up)(HY_CCD_REAL dl1, HY_CCD_REAL ss) {
    if (!(ss >= (HY_CCD_REAL)0x1p-1000 && ss <= (HY_CCD_REAL)0x1p1000)) return dl1;
    /* ss carries a few units of rounding, the conversion to double and
     * the square root one more each: 2^-40 covers them */
    HY_CCD_REAL n = (HY_CCD_REAL)(sqrt((double)ss) * (1.0 + 0x1p-40));
    return n < dl1 ? n : dl1;
}

/* Separation along d with min_distance counted along |d|_2: a point of the
 * hull within md of the origin (Euclidean) projects within md |d|_2, so
 * this never excludes it. (hy_ccd_dir_bound counts md along |d|_1, up to
 * sqrt(3) times more: with md > 0 that leaves a shell of distances that a
 * box is neither excluded from nor accepted in, and resting pairs at about
 * md away ran to the work cap in it.) */
HY_HD int HY_CCD_FN(hy_ccd_dir_separates)(const HY_CCD_FN(hy_ccd_problem) * pr, const HY_CCD_REAL d[3],
                                          const HY_CCD_REAL* Fc, const HY_CCD_REAL fmx[3]) {
    HY_CCD_REAL bound;
    if (pr->tight) {
        HY_CCD_REAL rb = 0, dl1 = 0;
        for (int k = 0; k < 3; k++) {
            HY_CCD_REAL a = HY_CCD_FN(hy_ccd_rabs)(d[k]);
            rb += a * (pr->eps[k] + 4 * HY_CCD_UNIT * fmx[k]);
            dl1 += a;
        }
        HY_CCD_REAL dl2 = HY_CCD_FN(hy_ccd_norm2_up)(dl1, (d[0] * d[0] + d[1] * d[1]) + d[2] * d[2]);
        bound = (rb + pr->md * dl2) * (1 + 64 * HY_CCD_UNIT) + (HY_CCD_REAL)DBL_MIN;
    } else {
        bound = HY_CCD_FN(hy_ccd_dir_bound)(pr, d, fmx);
    }
    HY_CCD_REAL mn = Fc[0] * d[0] + Fc[1] * d[1] + Fc[2] * d[2], mx = mn;
    for (int i = 1; i < 8; i++) {
        const HY_CCD_REAL* F = Fc + 3 * i;
        HY_CCD_REAL dot = (d[0] * F[0] + d[1] * F[1]) + d[2] * F[2];
        mn = HY_CCD_FN(hy_ccd_rmin)(mn, dot);
        mx = HY_CCD_FN(hy_ccd_rmax)(mx, dot);
        if (mn <= bound && mx >= -bound) return 0;
    }
    return mn > bound || mx < -bound;
}

/* 1 if the origin lies deep inside the slab of every face normal and axis:
 * with F nearly affine on the box a root is then certain, far beyond what
 * rounding could fake, and no re-check in wider arithmetic is needed. */
HY_HD int HY_CCD_FN(hy_ccd_robust)(const HY_CCD_FN(hy_ccd_problem) * pr, const HY_CCD_REAL* Fc,
                                   const HY_CCD_REAL n[3][3], const HY_CCD_REAL fmx[3], HY_CCD_REAL twist) {
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL lo = Fc[k], hi = Fc[k];
        for (int i = 1; i < 8; i++) {
            lo = HY_CCD_FN(hy_ccd_rmin)(lo, Fc[3 * i + k]);
            hi = HY_CCD_FN(hy_ccd_rmax)(hi, Fc[3 * i + k]);
        }
        HY_CCD_REAL m = 16 * (pr->axis_thr[k] + twist);
        if (!(lo < -m && hi > m)) return 0;
    }
    for (int j = 0; j < 3; j++) {
        const HY_CCD_REAL* d = n[j];
        HY_CCD_REAL dl1 = HY_CCD_FN(hy_ccd_rabs)(d[0]) + HY_CCD_FN(hy_ccd_rabs)(d[1]) + HY_CCD_FN(hy_ccd_rabs)(d[2]);
        if (dl1 == 0) return 0;
        HY_CCD_REAL m = 16 * (HY_CCD_FN(hy_ccd_dir_bound)(pr, d, fmx) + twist * dl1);
        HY_CCD_REAL mn = Fc[0] * d[0] + Fc[1] * d[1] + Fc[2] * d[2], mx = mn;
        for (int i = 1; i < 8; i++) {
            const HY_CCD_REAL* F = Fc + 3 * i;
            HY_CCD_REAL dot = (d[0] * F[0] + d[1] * F[1]) + d[2] * F[2];
            mn = HY_CCD_FN(hy_ccd_rmin)(mn, dot);
            mx = HY_CCD_FN(hy_ccd_rmax)(mx, dot);
        }
        if (!(mn < -m && mx > m)) return 0;
    }
    return 1;
}

/* Evaluate one box; on HY_CCD_SPLIT, *split_dim is the parameter to bisect.
 * On HY_CCD_ACCEPTED, *robust says whether the contact is certain. */
HY_HD int HY_CCD_FN(hy_ccd_box_eval)(const HY_CCD_FN(hy_ccd_problem) * pr, const hy_ccd_box* b, int* split_dim,
                                     int* robust) {
    *robust = 0;
    HY_CCD_REAL F[2][2][2][3];
    HY_CCD_FN(hy_ccd_corners)(pr, b, F);
    const HY_CCD_REAL* Fc = &F[0][0][0][0];

    /* Axis test: the hull's bounding box misses the origin. */
    HY_CCD_REAL fmx[3];
    int inside = 1;
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL lo = Fc[k], hi = Fc[k];
        for (int i = 1; i < 8; i++) {
            lo = HY_CCD_FN(hy_ccd_rmin)(lo, Fc[3 * i + k]);
            hi = HY_CCD_FN(hy_ccd_rmax)(hi, Fc[3 * i + k]);
        }
        if (lo > pr->axis_thr[k] || hi < -pr->axis_thr[k]) return HY_CCD_EXCLUDED;
        fmx[k] = HY_CCD_FN(hy_ccd_rmax)(-lo, hi);
        if (fmx[k] + pr->eps[k] > pr->accept[k]) inside = 0;
    }
    /* Touching within rounding: the earliest such box gives the time. */
    if (inside) return HY_CCD_ACCEPTED;

    /* Centroid direction: separates a hull that is small compared with its
     * distance to the origin (the usual near miss). */
    HY_CCD_REAL c[3] = {0, 0, 0};
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++) c[k] += Fc[3 * i + k];
    if (HY_CCD_FN(hy_ccd_dir_separates)(pr, c, Fc, fmx)) return HY_CCD_EXCLUDED;

    /* Face normals of the hull: for F affine on the box the hull is a
     * parallelepiped spanned by the mean edge vectors D_t, D_u, D_v, and a
     * point outside it is separated by one of the three face normals. They
     * also catch flat hulls (a triangle's normal, two edges' common normal,
     * parallel edges sliding in a plane) that the centroid cannot. */
    HY_CCD_REAL D[3][3];
    for (int k = 0; k < 3; k++) {
        D[0][k] = (F[1][0][0][k] - F[0][0][0][k]) + (F[1][0][1][k] - F[0][0][1][k]) + (F[1][1][0][k] - F[0][1][0][k]) +
                  (F[1][1][1][k] - F[0][1][1][k]);
        D[1][k] = (F[0][1][0][k] - F[0][0][0][k]) + (F[0][1][1][k] - F[0][0][1][k]) + (F[1][1][0][k] - F[1][0][0][k]) +
                  (F[1][1][1][k] - F[1][0][1][k]);
        D[2][k] = (F[0][0][1][k] - F[0][0][0][k]) + (F[0][1][1][k] - F[0][1][0][k]) + (F[1][0][1][k] - F[1][0][0][k]) +
                  (F[1][1][1][k] - F[1][1][0][k]);
    }
    HY_CCD_REAL n[3][3];
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3;
        n[i][0] = D[i][1] * D[j][2] - D[i][2] * D[j][1];
        n[i][1] = D[i][2] * D[j][0] - D[i][0] * D[j][2];
        n[i][2] = D[i][0] * D[j][1] - D[i][1] * D[j][0];
        if ((n[i][0] != 0 || n[i][1] != 0 || n[i][2] != 0) && HY_CCD_FN(hy_ccd_dir_separates)(pr, n[i], Fc, fmx))
            return HY_CCD_EXCLUDED;
    }
    /* With a distance the region to stay clear of is a ball, and a flat
     * hull (short in time) beside it is apart along a direction in its
     * own plane, not along a face normal: try the in-plane normals of the
     * (u, v) face's edges (D_u, D_v, and their sum and difference, which
     * on a whole Duffy square lie along the triangle's sides).
     * Sliding contacts, where a feature moves in the other's plane, were
     * refined to the work cap without these. */
    if (pr->tight) {
        HY_CCD_REAL e[4][3], d[3];
        for (int k = 0; k < 3; k++) {
            e[0][k] = D[1][k];
            e[1][k] = D[2][k];
            e[2][k] = D[1][k] - D[2][k];
            e[3][k] = D[1][k] + D[2][k];
        }
        for (int i = 0; i < 4; i++) {
            d[0] = n[1][1] * e[i][2] - n[1][2] * e[i][1];
            d[1] = n[1][2] * e[i][0] - n[1][0] * e[i][2];
            d[2] = n[1][0] * e[i][1] - n[1][1] * e[i][0];
            if ((d[0] != 0 || d[1] != 0 || d[2] != 0) && HY_CCD_FN(hy_ccd_dir_separates)(pr, d, Fc, fmx))
                return HY_CCD_EXCLUDED;
        }
        /* And the direction to the point of the box's (u, v) patch at
         * mid-time closest to the origin (two triangles of its corners):
         * near the boundary of the ball the separating direction runs
         * from an edge or corner of the patch to the origin, along none of
         * the above. Any direction is a rigorous test; this one is only
         * chosen in double. */
        hy_v3 q[4], o3 = v3(0.0, 0.0, 0.0);
        for (int qc = 0; qc < 4; qc++) {
            const HY_CCD_REAL* f0 = Fc + 3 * qc;      /* t = lo: F[0][ui][vi] */
            const HY_CCD_REAL* f1 = Fc + 12 + 3 * qc; /* t = hi */
            q[qc] = v3((double)(0.5 * (f0[0] + f1[0])), (double)(0.5 * (f0[1] + f1[1])), (double)(0.5 * (f0[2] + f1[2])));
        }
        double best = INFINITY;
        hy_v3 dir = o3;
        for (int tri = 0; tri < 2; tri++) {
            /* corners 0 = (u lo, v lo), 1 = (lo, hi), 2 = (hi, lo), 3 = (hi, hi) */
            hy_v3 qa = q[0], qb = tri ? q[1] : q[2], qd = q[3];
            double wa, wb, wc;
            hy_closest_on_triangle(o3, qa, qb, qd, &wa, &wb, &wc);
            hy_v3 x = v3_add(v3_add(v3_scale(qa, wa), v3_scale(qb, wb)), v3_scale(qd, wc));
            double l2 = v3_len2(x);
            if (l2 < best) {
                best = l2;
                dir = x;
            }
        }
        if (best > 0.0 && best < INFINITY) {
            d[0] = (HY_CCD_REAL)dir.x;
            d[1] = (HY_CCD_REAL)dir.y;
            d[2] = (HY_CCD_REAL)dir.z;
            if (HY_CCD_FN(hy_ccd_dir_separates)(pr, d, Fc, fmx)) return HY_CCD_EXCLUDED;
        }
    }

    /* Not separated. Measure how far F is from affine on this box (twisted
     * edges): the face-normal test is exact for an affine F, so a box whose
     * nonlinear part is below the tolerance and which is still not separated
     * holds a contact (or a near miss closer than about the tolerance).
     * Accepting only decides false positives, never false negatives, and the
     * time of impact stays safe because boxes are searched earliest first. */
    HY_CCD_REAL twist = 0;
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL tu = (F[1][1][0][k] - F[1][0][0][k]) - (F[0][1][0][k] - F[0][0][0][k]);
        HY_CCD_REAL tv = (F[1][0][1][k] - F[1][0][0][k]) - (F[0][0][1][k] - F[0][0][0][k]);
        HY_CCD_REAL uv = (F[0][1][1][k] - F[0][1][0][k]) - (F[0][0][1][k] - F[0][0][0][k]);
        HY_CCD_REAL uv1 = (F[1][1][1][k] - F[1][1][0][k]) - (F[1][0][1][k] - F[1][0][0][k]);
        tu = HY_CCD_FN(hy_ccd_rmax)(HY_CCD_FN(hy_ccd_rabs)(tu), HY_CCD_FN(hy_ccd_rabs)(tv));
        uv = HY_CCD_FN(hy_ccd_rmax)(HY_CCD_FN(hy_ccd_rabs)(uv), HY_CCD_FN(hy_ccd_rabs)(uv1));
        twist = HY_CCD_FN(hy_ccd_rmax)(twist, HY_CCD_FN(hy_ccd_rmax)(tu, uv));
    }
    HY_CCD_REAL spread[3];
    for (int d = 0; d < 3; d++) {
        HY_CCD_REAL s = (HY_CCD_FN(hy_ccd_rabs)(D[d][0]) + HY_CCD_FN(hy_ccd_rabs)(D[d][1])) +
                        HY_CCD_FN(hy_ccd_rabs)(D[d][2]);
        spread[d] = b->level[d] >= HY_CCD_MAX_LEVEL ? -1 : s;
    }
    /* A contact known to exist: what is left is its time, and every
     * earlier time was excluded, so a box short enough in time gives it
     * (precision as for the twist rule; a near miss just before the
     * contact can only make the time earlier, which is safe). */
    if (pr->certain && b->level[0] >= pr->t_level) {
        *robust = 1;
        return HY_CCD_ACCEPTED;
    }
    if (twist <= pr->twist_tol) {
        if (b->level[0] >= pr->t_level) {
            *robust = HY_CCD_FN(hy_ccd_robust)(pr, Fc, (const HY_CCD_REAL(*)[3])n, fmx, twist);
            return HY_CCD_ACCEPTED;
        }
        if (spread[0] >= 0) {
            *split_dim = 0; /* refine the time of impact */
            return HY_CCD_SPLIT;
        }
    }
    /* Split the parameter along which F varies most; a known contact
     * favours time (HY_CCD_CERTAIN_T_BIAS), which is all it needs. */
    int dim = 0;
    HY_CCD_REAL st = spread[0];
    if (pr->certain && st >= 0) st *= HY_CCD_CERTAIN_T_BIAS;
    if (spread[1] > st) dim = 1;
    if (spread[2] > (dim ? spread[1] : st)) dim = 2;
    if (spread[dim] < 0) return HY_CCD_ACCEPTED; /* cannot split: conservative */
    *split_dim = dim;
    return HY_CCD_SPLIT;
}

/* Newton's method on F = 0 from (t, u, v) (x[3]); 1 when it converges
 * inside [0, 1]^3 (an estimate only: hy_ccd_certify decides). */
HY_HD int HY_CCD_FN(hy_ccd_newton)(const HY_CCD_FN(hy_ccd_problem) * pr, double x[3], int iters) {
    for (int it = 0; it < iters; it++) {
        HY_CCD_REAL t = x[0], u = x[1], v = x[2];
        HY_CCD_REAL w = pr->duffy ? v * (1 - u) : v;
        HY_CCD_REAL wu = pr->duffy ? -v : 0, wv = pr->duffy ? 1 - u : 1;
        HY_CCD_REAL F[3], J[3][3]; /* J[k][j] = dF_k / dx_j */
        for (int k = 0; k < 3; k++) {
            HY_CCD_REAL q = (1 - t) * pr->q[0][k] + t * pr->q[1][k];
            HY_CCD_REAL e = (1 - t) * pr->e[0][k] + t * pr->e[1][k];
            HY_CCD_REAL f = (1 - t) * pr->f[0][k] + t * pr->f[1][k];
            F[k] = (q + u * e) - w * f;
            J[k][0] = ((pr->q[1][k] - pr->q[0][k]) + u * (pr->e[1][k] - pr->e[0][k])) - w * (pr->f[1][k] - pr->f[0][k]);
            J[k][1] = e - wu * f;
            J[k][2] = -wv * f;
        }
        /* Cramer: columns of J. */
        HY_CCD_REAL c12[3] = {J[1][1] * J[2][2] - J[2][1] * J[1][2], J[2][1] * J[0][2] - J[0][1] * J[2][2],
                              J[0][1] * J[1][2] - J[1][1] * J[0][2]};
        HY_CCD_REAL det = J[0][0] * c12[0] + J[1][0] * c12[1] + J[2][0] * c12[2];
        if (!(det != 0)) return 0;
        HY_CCD_REAL c20[3] = {J[1][2] * J[2][0] - J[2][2] * J[1][0], J[2][2] * J[0][0] - J[0][2] * J[2][0],
                              J[0][2] * J[1][0] - J[1][2] * J[0][0]};
        HY_CCD_REAL c01[3] = {J[1][0] * J[2][1] - J[2][0] * J[1][1], J[2][0] * J[0][1] - J[0][0] * J[2][1],
                              J[0][0] * J[1][1] - J[1][0] * J[0][1]};
        /* delta = -J^-1 F; row i of J^-1 is (column cross product)/det. */
        HY_CCD_REAL d0 = -(F[0] * c12[0] + F[1] * c12[1] + F[2] * c12[2]) / det;
        HY_CCD_REAL d1 = -(F[0] * c20[0] + F[1] * c20[1] + F[2] * c20[2]) / det;
        HY_CCD_REAL d2 = -(F[0] * c01[0] + F[1] * c01[1] + F[2] * c01[2]) / det;
        x[0] = (double)(t + d0);
        x[1] = (double)(u + d1);
        x[2] = (double)(v + d2);
        if (!(x[0] > -1 && x[0] < 2 && x[1] > -1 && x[1] < 2 && x[2] > -1 && x[2] < 2)) return 0;
        HY_CCD_REAL dm = HY_CCD_FN(hy_ccd_rmax)(HY_CCD_FN(hy_ccd_rabs)(d0), HY_CCD_FN(hy_ccd_rabs)(d1));
        /* converged far below the certification box (2^-24) */
        if (HY_CCD_FN(hy_ccd_rmax)(dm, HY_CCD_FN(hy_ccd_rabs)(d2)) < (HY_CCD_REAL)0x1p-32) break;
    }
    return x[0] >= 0 && x[0] <= 1 && x[1] >= 0 && x[1] <= 1 && x[2] >= 0 && x[2] <= 1;
}

/* Starting point for hy_ccd_newton at time t: F is affine in (u, w)
 * (w = v (1-u) for vertex-face, v for edge-edge), so solve the 3 x 2 system
 * in the plane of E and W by cross products. 0 when E and W are parallel
 * or the point is far outside [0, 1]^2 (then no contact is likely near t). */
HY_HD int HY_CCD_FN(hy_ccd_newton_start)(const HY_CCD_FN(hy_ccd_problem) * pr, double t, double x[3]) {
    HY_CCD_REAL Q[3], E[3], W[3];
    HY_CCD_REAL tt = t;
    for (int k = 0; k < 3; k++) {
        Q[k] = (1 - tt) * pr->q[0][k] + tt * pr->q[1][k];
        E[k] = (1 - tt) * pr->e[0][k] + tt * pr->e[1][k];
        W[k] = (1 - tt) * pr->f[0][k] + tt * pr->f[1][k];
    }
    HY_CCD_REAL n[3] = {E[1] * W[2] - E[2] * W[1], E[2] * W[0] - E[0] * W[2], E[0] * W[1] - E[1] * W[0]};
    HY_CCD_REAL nn = n[0] * n[0] + n[1] * n[1] + n[2] * n[2];
    if (!(nn > 0)) return 0;
    HY_CCD_REAL qw[3] = {Q[1] * W[2] - Q[2] * W[1], Q[2] * W[0] - Q[0] * W[2], Q[0] * W[1] - Q[1] * W[0]};
    HY_CCD_REAL qe[3] = {Q[1] * E[2] - Q[2] * E[1], Q[2] * E[0] - Q[0] * E[2], Q[0] * E[1] - Q[1] * E[0]};
    HY_CCD_REAL u = -(qw[0] * n[0] + qw[1] * n[1] + qw[2] * n[2]) / nn;
    HY_CCD_REAL w = -(qe[0] * n[0] + qe[1] * n[1] + qe[2] * n[2]) / nn;
    HY_CCD_REAL v = w;
    if (pr->duffy) {
        HY_CCD_REAL r = 1 - u;
        v = r > (HY_CCD_REAL)1e-6 ? w / r : (HY_CCD_REAL)0.5;
    }
    x[0] = t;
    x[1] = (double)u;
    x[2] = (double)v;
    /* Near the contact time the in-plane solution moves by the time
     * error (2^-17 or less) times its rate: beyond 1e-3 outside the
     * square a root inside it is unlikely, and certification would fail. */
    return u > -1e-3 && u < 1 + 1e-3 && v > -1e-3 && v < 1 + 1e-3;
}

/* 1 when the box certainly holds a root of F (hy_ccd_robust: the origin
 * deep inside every face-normal slab and axis of the corner hull, far
 * beyond rounding and nonlinearity). Accepting on it adds no false
 * positive; it is never needed for a negative answer. */
HY_HD int HY_CCD_FN(hy_ccd_certify)(const HY_CCD_FN(hy_ccd_problem) * pr, const hy_ccd_box* b) {
    HY_CCD_REAL F[2][2][2][3];
    HY_CCD_FN(hy_ccd_corners)(pr, b, F);
    const HY_CCD_REAL* Fc = &F[0][0][0][0];
    HY_CCD_REAL fmx[3];
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL lo = Fc[k], hi = Fc[k];
        for (int i = 1; i < 8; i++) {
            lo = HY_CCD_FN(hy_ccd_rmin)(lo, Fc[3 * i + k]);
            hi = HY_CCD_FN(hy_ccd_rmax)(hi, Fc[3 * i + k]);
        }
        fmx[k] = HY_CCD_FN(hy_ccd_rmax)(-lo, hi);
    }
    HY_CCD_REAL D[3][3];
    for (int k = 0; k < 3; k++) {
        D[0][k] = (F[1][0][0][k] - F[0][0][0][k]) + (F[1][0][1][k] - F[0][0][1][k]) + (F[1][1][0][k] - F[0][1][0][k]) +
                  (F[1][1][1][k] - F[0][1][1][k]);
        D[1][k] = (F[0][1][0][k] - F[0][0][0][k]) + (F[0][1][1][k] - F[0][0][1][k]) + (F[1][1][0][k] - F[1][0][0][k]) +
                  (F[1][1][1][k] - F[1][0][1][k]);
        D[2][k] = (F[0][0][1][k] - F[0][0][0][k]) + (F[0][1][1][k] - F[0][1][0][k]) + (F[1][0][1][k] - F[1][0][0][k]) +
                  (F[1][1][1][k] - F[1][1][0][k]);
    }
    HY_CCD_REAL n[3][3];
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3;
        n[i][0] = D[i][1] * D[j][2] - D[i][2] * D[j][1];
        n[i][1] = D[i][2] * D[j][0] - D[i][0] * D[j][2];
        n[i][2] = D[i][0] * D[j][1] - D[i][1] * D[j][0];
    }
    HY_CCD_REAL twist = 0;
    for (int k = 0; k < 3; k++) {
        HY_CCD_REAL tu = (F[1][1][0][k] - F[1][0][0][k]) - (F[0][1][0][k] - F[0][0][0][k]);
        HY_CCD_REAL tv = (F[1][0][1][k] - F[1][0][0][k]) - (F[0][0][1][k] - F[0][0][0][k]);
        HY_CCD_REAL uv = (F[0][1][1][k] - F[0][1][0][k]) - (F[0][0][1][k] - F[0][0][0][k]);
        HY_CCD_REAL uv1 = (F[1][1][1][k] - F[1][1][0][k]) - (F[1][0][1][k] - F[1][0][0][k]);
        tu = HY_CCD_FN(hy_ccd_rmax)(HY_CCD_FN(hy_ccd_rabs)(tu), HY_CCD_FN(hy_ccd_rabs)(tv));
        uv = HY_CCD_FN(hy_ccd_rmax)(HY_CCD_FN(hy_ccd_rabs)(uv), HY_CCD_FN(hy_ccd_rabs)(uv1));
        twist = HY_CCD_FN(hy_ccd_rmax)(twist, HY_CCD_FN(hy_ccd_rmax)(tu, uv));
    }
    return HY_CCD_FN(hy_ccd_robust)(pr, Fc, (const HY_CCD_REAL(*)[3])n, fmx, twist);
}

/* Earliest-first search with a heap of pending boxes (heap must hold
 * st->pending + max_boxes + 1): of [0,1]^3 when st->pending is 0, else
 * resumed from the st->pending boxes left in the heap by an earlier search.
 * Returns 1 and *toi when a box is accepted (it goes back on the heap, so
 * st->pending lets a wider-precision pass resume), or when the cap is hit
 * (then *toi is the earliest pending time); 0 when every box was
 * excluded. Every pending box starts no earlier than the accepted one, and
 * excluded boxes hold no contact, so *toi never exceeds the first contact. */
HY_HD int HY_CCD_FN(hy_ccd_search)(const HY_CCD_FN(hy_ccd_problem) * pr, hy_ccd_box* heap, int max_boxes,
                                   double* toi, hy_ccd_stats* st) {
    st->robust = 0;
    int n = st->pending;
    if (n == 0) {
        hy_ccd_box root = {{0.0, 0.0, 0.0}, {1.0, 1.0, 1.0}, {0, 0, 0}};
        hy_ccd_heap_push(heap, &n, &root);
    }
    int boxes = 0;
    st->capped = 0;
    while (n > 0) {
        if (boxes >= max_boxes) {
            /* Conservative give-up: a contact may hide in any pending box. */
            st->boxes = boxes;
            st->capped = 1;
            st->pending = n;
            *toi = heap[0].lo[0];
            return 1;
        }
        hy_ccd_box b = hy_ccd_heap_pop(heap, &n);
        boxes++;
        int dim = 0, robust = 0;
        int r = HY_CCD_FN(hy_ccd_box_eval)(pr, &b, &dim, &robust);
        if (r == HY_CCD_EXCLUDED) continue;
        if (r == HY_CCD_ACCEPTED) {
            st->boxes = boxes;
            st->robust = robust;
            hy_ccd_heap_push(heap, &n, &b);
            st->pending = n;
            *toi = b.lo[0];
            return 1;
        }
        double mid = 0.5 * (b.lo[dim] + b.hi[dim]);
        hy_ccd_box lo = b, hi = b;
        lo.hi[dim] = mid;
        hi.lo[dim] = mid;
        lo.level[dim]++;
        hi.level[dim]++;
        hy_ccd_heap_push(heap, &n, &hi);
        hy_ccd_heap_push(heap, &n, &lo);
    }
    st->boxes = boxes;
    st->pending = 0;
    return 0;
}

#endif /* HY_CCD_REAL */
