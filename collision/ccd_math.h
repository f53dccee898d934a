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

#include "engine/hd.h"

/* Deepest bisection per parameter: keeps u, 1-u, v exact dyadics. */
#define HY_CCD_MAX_LEVEL 50
/* Default work cap (box evaluations per pass) before answering
 * "collision". */
#define HY_CCD_DEFAULT_MAX_BOXES 1000

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
    int duffy;
} HY_CCD_FN(hy_ccd_problem);

HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_rmin)(HY_CCD_REAL a, HY_CCD_REAL b) { return a < b ? a : b; }
HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_rmax)(HY_CCD_REAL a, HY_CCD_REAL b) { return a > b ? a : b; }
HY_HD HY_CCD_REAL HY_CCD_FN(hy_ccd_rabs)(HY_CCD_REAL a) { return a < 0 ? -a : a; }

/* Fill the relative form. x[0..3] are the 4 positions at t=0, x[4..7] at
 * t=1, already scaled. For vertex-face x = (p, a, b, c); for edge-edge
 * x = (a, b, c, d). acc_factor scales the touching tolerance in units of
 * eps (>= 1); twist_rel is the nonlinearity tolerance relative to the
 * largest coordinate; t_level the time bisection depth before a box may be
 * accepted on that tolerance; md_slack (>= 0) lets a box count as touching
 * up to md * (1 + md_slack) away, and adds md_slack * md / 2 to the twist
 * tolerance (only more false positives, never fewer contacts). */
HY_HD void HY_CCD_FN(hy_ccd_problem_init)(HY_CCD_FN(hy_ccd_problem) * pr, const double* const* x, int is_vf,
                                          double md, double acc_factor, double twist_rel, int t_level,
                                          double md_slack) {
    pr->duffy = is_vf;
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

HY_HD int HY_CCD_FN(hy_ccd_dir_separates)(const HY_CCD_FN(hy_ccd_problem) * pr, const HY_CCD_REAL d[3],
                                          const HY_CCD_REAL* Fc, const HY_CCD_REAL fmx[3]) {
    HY_CCD_REAL bound = HY_CCD_FN(hy_ccd_dir_bound)(pr, d, fmx);
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
    /* Split the parameter along which F varies most. */
    int dim = 0;
    if (spread[1] > spread[dim]) dim = 1;
    if (spread[2] > spread[dim]) dim = 2;
    if (spread[dim] < 0) return HY_CCD_ACCEPTED; /* cannot split: conservative */
    *split_dim = dim;
    return HY_CCD_SPLIT;
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
