/* Conservative culls before the exact CCD test. */
#include "collision/filter.h"

#include <float.h>
#include <math.h>

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

int hy_filter_sat(int is_vf, const double* const x0[4], const double* const x1[4], double min_distance) {
    return hy_filter_sat_core(is_vf, x0, x1, min_distance);
}
