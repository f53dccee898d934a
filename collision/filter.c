/* Conservative culls before the exact CCD test. */
#include "collision/filter.h"

#include <float.h>
#include <math.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "collision/filter_sat.h"

/* fmin/fmax are library calls without -ffast-math; these are inlined (no
 * NaN handling needed: NaN inputs make every comparison false, which keeps
 * the pair). */
static inline double min2(double a, double b) { return a < b ? a : b; }
static inline double max2(double a, double b) { return a > b ? a : b; }

int hy_filter_box(int is_vf, const double* const x0[4], const double* const x1[4], double min_distance) {
    /* Features: VF splits the points 1 | 3, EE 2 | 2. */
    int split = is_vf ? 1 : 2;
    double md = min_distance > 0 ? min_distance : 0.0;
    for (int k = 0; k < 3; k++) {
        double alo = INFINITY, ahi = -INFINITY, blo = INFINITY, bhi = -INFINITY;
        for (int i = 0; i < 4; i++) {
            double lo = fmin(x0[i][k], x1[i][k]), hi = fmax(x0[i][k], x1[i][k]);
            if (i < split) {
                alo = fmin(alo, lo);
                ahi = fmax(ahi, hi);
            } else {
                blo = fmin(blo, lo);
                bhi = fmax(bhi, hi);
            }
        }
        /* The gap is computed with one rounding; compare it to md with that
         * rounding allowed for (a gap of exactly md may still touch). */
        double gap = fmax(blo - ahi, alo - bhi);
        if (gap > md && gap - md > 2.0 * DBL_EPSILON * fmax(fabs(gap), md)) return 0;
    }
    return 1;
}

#if defined(__SSE2__)
/* The two ends of the step side by side in the two lanes of a register:
 * the same products and sums as the scalar version below, so the same
 * coefficients to the bit, with half the instructions. */
typedef struct vec2x3 {
    __m128d x, y, z;
} vec2x3;

static inline __m128d swap2(__m128d a) { return _mm_shuffle_pd(a, a, 1); }

static inline vec2x3 swap3(vec2x3 a) {
    vec2x3 r = {swap2(a.x), swap2(a.y), swap2(a.z)};
    return r;
}

static inline vec2x3 cross2(vec2x3 v, vec2x3 w) {
    vec2x3 r = {_mm_sub_pd(_mm_mul_pd(v.y, w.z), _mm_mul_pd(v.z, w.y)),
                _mm_sub_pd(_mm_mul_pd(v.z, w.x), _mm_mul_pd(v.x, w.z)),
                _mm_sub_pd(_mm_mul_pd(v.x, w.y), _mm_mul_pd(v.y, w.x))};
    return r;
}

static inline __m128d dot2(vec2x3 u, vec2x3 c) {
    return _mm_add_pd(_mm_add_pd(_mm_mul_pd(u.x, c.x), _mm_mul_pd(u.y, c.y)), _mm_mul_pd(u.z, c.z));
}

static inline __m128d absmax2(vec2x3 a) {
    const __m128d sign = _mm_set1_pd(-0.0);
    __m128d m = _mm_max_pd(_mm_andnot_pd(sign, a.x), _mm_andnot_pd(sign, a.y));
    m = _mm_max_pd(m, _mm_andnot_pd(sign, a.z));
    return _mm_max_sd(m, swap2(m));
}

int hy_filter_coplanar(const double* const x0[4], const double* const x1[4], double min_distance) {
    if (min_distance > 0) return 1;
    /* e[i] = x[i + 1] - x[0]; lane 0 at t=0, lane 1 at t=1 */
    vec2x3 e[3];
    __m128d ox = _mm_set_pd(x1[0][0], x0[0][0]), oy = _mm_set_pd(x1[0][1], x0[0][1]),
            oz = _mm_set_pd(x1[0][2], x0[0][2]);
    for (int i = 0; i < 3; i++) {
        e[i].x = _mm_sub_pd(_mm_set_pd(x1[i + 1][0], x0[i + 1][0]), ox);
        e[i].y = _mm_sub_pd(_mm_set_pd(x1[i + 1][1], x0[i + 1][1]), oy);
        e[i].z = _mm_sub_pd(_mm_set_pd(x1[i + 1][2], x0[i + 1][2]), oz);
    }
    /* cr[j][k] = e[j][1] x e[k][2]: lanes (cr00, cr11) and (cr01, cr10) */
    vec2x3 same = cross2(e[1], e[2]);
    vec2x3 mixed = cross2(e[1], swap3(e[2]));
    vec2x3 u = e[0], us = swap3(e[0]);
    __m128d d_same = dot2(u, same);    /* (d000, d111) */
    __m128d d_same_s = dot2(us, same); /* (d100, d011) */
    __m128d d_mix = dot2(u, mixed);    /* (d001, d110) */
    __m128d d_mix_s = dot2(us, mixed); /* (d101, d010) */
    double ds[2], dss[2], dm[2], dms[2];
    _mm_storeu_pd(ds, d_same);
    _mm_storeu_pd(dss, d_same_s);
    _mm_storeu_pd(dm, d_mix);
    _mm_storeu_pd(dms, d_mix_s);
    /* the scalar version's order: m = 0..7 adds d_ijk, i = m & 1, j, k the
     * next bits */
    double b[4];
    b[0] = ds[0];
    b[1] = (dss[0] + dms[1]) + dm[0];
    b[2] = (dm[1] + dms[0]) + dss[1];
    b[3] = ds[1];
    double A = _mm_cvtsd_f64(absmax2(e[0])), B = _mm_cvtsd_f64(absmax2(e[1])), C = _mm_cvtsd_f64(absmax2(e[2]));
    double scale = 6.0 * (A * B * C);
    if (!(scale > 1e-250 && scale < 1e250)) return 1;
    const double eps = DBL_EPSILON / 2;
    static const double groups[4] = {1, 3, 3, 1};
    int pos = 0, neg = 0;
    for (int g = 0; g < 4; g++) {
        double err = 32.0 * eps * groups[g] * scale;
        if (b[g] > err)
            pos++;
        else if (b[g] < -err)
            neg++;
    }
    return !(pos == 4 || neg == 4);
}
#else
int hy_filter_coplanar(const double* const x0[4], const double* const x1[4], double min_distance) {
    if (min_distance > 0) return 1;
    /* Edge vectors from point 0 at both ends of the step. */
    double e[2][3][3];
    for (int s = 0; s < 2; s++) {
        const double* const* x = s ? x1 : x0;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) e[s][i][k] = x[i + 1][k] - x[0][k];
    }
    /* V(t) = det(u(t), v(t), w(t)) with each argument linear in t. Its
     * Bernstein coefficients (times 1, 3, 3, 1) group the 8 corner
     * determinants det(u_i, v_j, w_k) = u_i . (v_j x w_k) by i + j + k; the
     * 4 cross products are shared. */
    double cr[2][2][3];
    for (int j = 0; j < 2; j++)
        for (int k = 0; k < 2; k++) {
            const double* v = e[j][1];
            const double* w = e[k][2];
            cr[j][k][0] = v[1] * w[2] - v[2] * w[1];
            cr[j][k][1] = v[2] * w[0] - v[0] * w[2];
            cr[j][k][2] = v[0] * w[1] - v[1] * w[0];
        }
    double b[4] = {0, 0, 0, 0};
    for (int m = 0; m < 8; m++) {
        int i = m & 1, j = (m >> 1) & 1, k = (m >> 2) & 1;
        const double* u = e[i][0];
        b[i + j + k] += (u[0] * cr[j][k][0] + u[1] * cr[j][k][1]) + u[2] * cr[j][k][2];
    }
    /* Error bound: with A, B, C the largest |component| of u, v, w (both
     * ends), one determinant's 6 terms sum to at most 6 A B C in magnitude;
     * the differences (1 rounding each, 3 per monomial), the determinant
     * (5 roundings deep) and the grouping sum (2) stay under 11 u of that
     * per determinant, and group g sums C(3, g) of them; 32 u leaves room
     * for the rounding of the bound itself. Tiny or huge scales
     * (underflow, overflow) decide nothing. */
    double A = 0, B = 0, C = 0;
    for (int s = 0; s < 2; s++)
        for (int k = 0; k < 3; k++) {
            A = max2(A, fabs(e[s][0][k]));
            B = max2(B, fabs(e[s][1][k]));
            C = max2(C, fabs(e[s][2][k]));
        }
    double scale = 6.0 * (A * B * C);
    if (!(scale > 1e-250 && scale < 1e250)) return 1;
    const double u = DBL_EPSILON / 2;
    static const double groups[4] = {1, 3, 3, 1};
    int pos = 0, neg = 0;
    for (int g = 0; g < 4; g++) {
        double err = 32.0 * u * groups[g] * scale;
        if (b[g] > err)
            pos++;
        else if (b[g] < -err)
            neg++;
    }
    return !(pos == 4 || neg == 4);
}
#endif

int hy_filter_sat(int is_vf, const double* const x0[4], const double* const x1[4], double min_distance) {
    return hy_filter_sat_core(is_vf, x0, x1, min_distance);
}

int hy_filter_sat_hint(int is_vf, const double* const x0[4], const double* const x1[4], double min_distance,
                       int* hint) {
    return hy_filter_sat_order(is_vf, x0, x1, min_distance, hint);
}
