/* Conservative culls before the exact CCD test. */
#include "collision/filter.h"

#include <float.h>
#include <math.h>

#include "collision/ccd_math.h"
#include "collision/filter_sat.h"

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
    /* V(t) = det(e_0, e_1, e_2), e_i = x_{i+1} - x_0: its Bernstein sums
     * (times 1, 3, 3, 1) and the largest |component| of each e_i. */
    double b[4], abc[3];
    hy_ccd_vol_sums(x0, x1, b, abc);
    /* Error bound: with A, B, C the largest |component| of e_0, e_1, e_2
     * (both ends), one determinant's 6 terms sum to at most 6 A B C in
     * magnitude; the differences (1 rounding each, 3 per monomial), the
     * determinant (5 roundings deep) and the grouping sum (2) stay under
     * 11 u of that per determinant, and group g sums C(3, g) of them; 32 u
     * leaves room for the rounding of the bound itself. Tiny or huge scales
     * (underflow, overflow) decide nothing; NaN keeps the pair (no
     * comparison holds). */
    double scale = 6.0 * (abc[0] * abc[1] * abc[2]);
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

int hy_filter_sat_hint(int is_vf, const double* const x0[4], const double* const x1[4], double min_distance,
                       int* hint) {
    return hy_filter_sat_order(is_vf, x0, x1, min_distance, hint);
}
