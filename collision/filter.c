/* Conservative culls before the exact CCD test. */
#include "collision/filter.h"

#include <float.h>
#include <math.h>

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

static inline void sub3(const double* a, const double* b, double r[3]) {
    r[0] = a[0] - b[0];
    r[1] = a[1] - b[1];
    r[2] = a[2] - b[2];
}

static inline void cross(const double a[3], const double b[3], double r[3]) {
    r[0] = a[1] * b[2] - a[2] * b[1];
    r[1] = a[2] * b[0] - a[0] * b[2];
    r[2] = a[0] * b[1] - a[1] * b[0];
}

/* Point-pair differences of the two features, at both ends of the step. */
typedef struct sat_set {
    double w[8][3];
    double aw[8]; /* max |w_k| per difference, for the rounding bound */
} sat_set;

static int apart_along(const sat_set* s, const double n[3], double md) {
    /* |n|_1 >= |n|_2: using it for the distance term only widens the
     * margin, and saves a square root. */
    double an = fabs(n[0]) + fabs(n[1]) + fabs(n[2]);
    if (!(an > 1e-280 && an < 1e280)) return 0;
    double nn = an;
    double mn = INFINITY, mx = -INFINITY, scale = 0;
    for (int i = 0; i < 8; i++) {
        double v = n[0] * s->w[i][0] + n[1] * s->w[i][1] + n[2] * s->w[i][2];
        if (v != v) return 0; /* NaN input: decide nothing */
        mn = min2(mn, v);
        mx = max2(mx, v);
        scale = max2(scale, an * s->aw[i]);
    }
    /* Each w has one rounding per component (relative), the dot product
     * three more: 8 eps of |n|_1 |w|_inf covers both with room. */
    double err = 8.0 * DBL_EPSILON * scale + md * nn * (1.0 + 8.0 * DBL_EPSILON) + 1e-290;
    return mn > err || mx < -err;
}

int hy_filter_sat(int is_vf, const double* const x0[4], const double* const x1[4], double min_distance) {
    double md = min_distance > 0 ? min_distance : 0.0;
    sat_set s;
    int m = 0;
    static const int vf_pairs[3][2] = {{0, 1}, {0, 2}, {0, 3}};
    static const int ee_pairs[4][2] = {{0, 2}, {0, 3}, {1, 2}, {1, 3}};
    int np = is_vf ? 3 : 4;
    for (int t = 0; t < 2; t++) {
        const double* const* x = t ? x1 : x0;
        for (int q = 0; q < np; q++) {
            int i = is_vf ? vf_pairs[q][0] : ee_pairs[q][0];
            int j = is_vf ? vf_pairs[q][1] : ee_pairs[q][1];
            sub3(x[i], x[j], s.w[m]);
            s.aw[m] = max2(fabs(s.w[m][0]), max2(fabs(s.w[m][1]), fabs(s.w[m][2])));
            m++;
        }
    }
    if (is_vf) {
        /* VF has 6 differences: repeat two so the loop sees 8 (harmless). */
        for (int k = 0; k < 3; k++) {
            s.w[6][k] = s.w[0][k];
            s.w[7][k] = s.w[3][k];
        }
        s.aw[6] = s.aw[0];
        s.aw[7] = s.aw[3];
    }
    double n[3], e1[3], e2[3], d[3];
    if (is_vf) {
        /* p = x[0] against triangle x[1..3]. */
        for (int t = 0; t < 2; t++) {
            const double* const* x = t ? x1 : x0;
            sub3(x[2], x[1], e1);
            sub3(x[3], x[1], e2);
            cross(e1, e2, n);
            if (apart_along(&s, n, md)) return 0;
        }
        /* Motion of p relative to the triangle's centroid. */
        for (int k = 0; k < 3; k++)
            d[k] = (x1[0][k] - x0[0][k]) -
                   ((x1[1][k] - x0[1][k]) + (x1[2][k] - x0[2][k]) + (x1[3][k] - x0[3][k])) / 3.0;
        for (int e = 0; e < 3; e++) {
            int a = 1 + e, b = 1 + (e + 1) % 3;
            double edge[3];
            for (int k = 0; k < 3; k++) edge[k] = 0.5 * ((x0[b][k] - x0[a][k]) + (x1[b][k] - x1[a][k]));
            cross(d, edge, n);
            if (apart_along(&s, n, md)) return 0;
        }
    } else {
        for (int t = 0; t < 2; t++) {
            const double* const* x = t ? x1 : x0;
            sub3(x[1], x[0], e1);
            sub3(x[3], x[2], e2);
            cross(e1, e2, n);
            if (apart_along(&s, n, md)) return 0;
        }
        for (int k = 0; k < 3; k++)
            d[k] = 0.5 * ((x1[0][k] - x0[0][k]) + (x1[1][k] - x0[1][k])) -
                   0.5 * ((x1[2][k] - x0[2][k]) + (x1[3][k] - x0[3][k]));
        for (int e = 0; e < 2; e++) {
            int a = 2 * e, b = 2 * e + 1;
            double edge[3];
            for (int k = 0; k < 3; k++) edge[k] = 0.5 * ((x0[b][k] - x0[a][k]) + (x1[b][k] - x1[a][k]));
            cross(d, edge, n);
            if (apart_along(&s, n, md)) return 0;
        }
    }
    /* Coordinate axes: apart_along with n = e_k, where the dot products
     * are the components themselves (no rounding) and |n| = 1. */
    double scale = 0;
    for (int i = 0; i < 8; i++) scale = max2(scale, s.aw[i]);
    double err = 8.0 * DBL_EPSILON * scale + md * (1.0 + 8.0 * DBL_EPSILON) + 1e-290;
    for (int k = 0; k < 3; k++) {
        double mn = s.w[0][k], mx = s.w[0][k];
        for (int i = 1; i < 8; i++) {
            mn = min2(mn, s.w[i][k]);
            mx = max2(mx, s.w[i][k]);
        }
        if (mn > err || mx < -err) return 0;
    }
    return 1;
}
