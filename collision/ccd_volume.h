/* The volume cubic: the four points' signed volume over the step in
 * Bernstein form, its error bound, and the time slabs where it cannot
 * vanish. It restricts the touching queries' search in time
 * (collision/ccd_query.h) and is the coplanarity filter of
 * collision/filter.c. HY_HD; on the host the sums use SSE2 with the same
 * bits as the scalar code. */
#ifndef HY_COLLISION_CCD_VOLUME_H
#define HY_COLLISION_CCD_VOLUME_H

#include <float.h>
#include <math.h>

#include "collision/ccd_scalar.h"
#include "core/hd.h"

#if defined(__SSE2__) && !defined(__CUDACC__)
#include <emmintrin.h>
#define HY_CCD_VOL_SSE2 1
#else
#define HY_CCD_VOL_SSE2 0
#endif

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

#endif
