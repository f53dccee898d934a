/* Conservative culls before the exact CCD test. */
#include "collision/filter.h"

#include <float.h>
#include <math.h>

#include "collision/ccd_math.h"
#include "collision/ccd_query.h"
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

/* Bernstein coefficients of a cubic on the eighths of [0, 1] from those on
 * [0, 1]: eighth j's coefficient i is sum_k T[j][i][k] c_k / 512 (the
 * cubic's blossom at j/8 taken 3 - i times and (j + 1)/8 taken i times).
 * Each row is nonnegative and sums to 512, so the result keeps the input
 * coefficients' error bound and adds four roundings of at most u max |c_k|
 * (inside hy_ccd_vol_slabs's bound, which allows 128 u M). */
_Static_assert(HY_FILTER_SLAB_PARTS == 8, "the eighths' table");
const double hy_filter_slab_T[8][4][4] = {
    {{512, 0, 0, 0}, {448, 64, 0, 0}, {392, 112, 8, 0}, {343, 147, 21, 1}},
    {{343, 147, 21, 1}, {294, 182, 34, 2}, {252, 204, 52, 4}, {216, 216, 72, 8}},
    {{216, 216, 72, 8}, {180, 228, 92, 12}, {150, 230, 114, 18}, {125, 225, 135, 27}},
    {{125, 225, 135, 27}, {100, 220, 156, 36}, {80, 208, 176, 48}, {64, 192, 192, 64}},
    {{64, 192, 192, 64}, {48, 176, 208, 80}, {36, 156, 220, 100}, {27, 135, 225, 125}},
    {{27, 135, 225, 125}, {18, 114, 230, 150}, {12, 92, 228, 180}, {8, 72, 216, 216}},
    {{8, 72, 216, 216}, {4, 52, 204, 252}, {2, 34, 182, 294}, {1, 21, 147, 343}},
    {{1, 21, 147, 343}, {0, 8, 112, 392}, {0, 0, 64, 448}, {0, 0, 0, 512}},
};

/* hy_filter_slabs's plan for points p (both ends): -1 when it concludes
 * nothing (the pair is kept: out of range); else the number n of eighths
 * [lo[i], lo[i] + HY_FILTER_SLAB_WIDTH] where V may vanish, whose
 * separating axes must all separate (*pm_out the largest |coordinate|, for
 * hy_ccd_slab_apart) for the pair to be culled. The batch filters' lanes
 * (collision/filter_pairs.c, plan4) repeat these operations in this order:
 * change both together. */
static int slab_plan(const double* const* p, double lo[HY_FILTER_SLAB_PARTS], double* pm_out) {
    double ma = 0, mb = 0; /* two chains: the maximum is exact in any order */
    for (int i = 0; i < 8; i += 2)
        for (int k = 0; k < 3; k++) {
            ma = hy_ccd_max(ma, hy_ccd_abs(p[i][k]));
            mb = hy_ccd_max(mb, hy_ccd_abs(p[i + 1][k]));
        }
    double pm = hy_ccd_max(ma, mb);
    /* the range hy_ccd_slab_apart's rounding argument and the filters'
     * directions take without scaling (false for NaN) */
    if (!(pm > 0x1p-200 && pm < 0x1p200)) return -1;
    double c[4], err;
    if (!hy_ccd_vol_cubic(p, c, &err)) return -1;
    /* hy_ccd_vol_slabs's bound */
    const double u = DBL_EPSILON / 2;
    double M = 0;
    for (int g = 0; g < 4; g++) M = hy_ccd_max(M, hy_ccd_abs(c[g]));
    M += err;
    double bound = (err + 128.0 * u * M) * (1 + 4 * u) + 1e-300;
    /* 2^-9 c: the table's integers then give the eighths' coefficients
     * with one rounding per product (the scaling is exact above
     * underflow, which the bound's 1e-300 covers) */
    const double c9[4] = {c[0] * 0x1p-9, c[1] * 0x1p-9, c[2] * 0x1p-9, c[3] * 0x1p-9};
    int n = 0;
    for (int j = 0; j < HY_FILTER_SLAB_PARTS; j++) {
        int pos = 1, neg = 1;
        for (int i = 0; i < 4; i++) {
            const double* T = hy_filter_slab_T[j][i];
            double v = ((c9[0] * T[0] + c9[1] * T[1]) + c9[2] * T[2]) + c9[3] * T[3];
            pos &= v > bound;
            neg &= v < -bound;
        }
        lo[n] = j * HY_FILTER_SLAB_WIDTH;
        n += !(pos | neg); /* kept where V may vanish */
    }
    *pm_out = pm;
    return n;
}

int hy_filter_slabs(int is_vf, const double* const x0[4], const double* const x1[4], double min_distance) {
    if (min_distance > 0) return 1;
    const double* p[8] = {x0[0], x0[1], x0[2], x0[3], x1[0], x1[1], x1[2], x1[3]};
    double lo[HY_FILTER_SLAB_PARTS], pm;
    int n = slab_plan(p, lo, &pm);
    if (n < 0) return 1;
    for (int i = 0; i < n; i++)
        if (!hy_ccd_slab_apart(p, is_vf, lo[i], lo[i] + HY_FILTER_SLAB_WIDTH, pm)) return 1;
    return 0;
}
