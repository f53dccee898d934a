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
 * the corners, and the normal of the hull's local plane); it is accepted as a
 * collision when the whole hull is within rounding noise of the origin (or it
 * cannot be split further, or the work cap is hit); otherwise it is bisected.
 * Depth-first, earliest time first, so the first accepted box gives a time of
 * impact and the rest of the search only looks for earlier ones.
 *
 * Error bound: per axis k, with m_k the largest |coordinate| of the 8 inputs
 * on that axis, every computed corner value differs from the exact one by at
 * most eps_k = 48 * 2^-53 * m_k (the derivation, 34 units, is in
 * docs/CCD.md), plus DBL_MIN for underflow. Corner parameters are dyadic
 * rationals (bisection of [0,1] to at most HY_CCD_MAX_LEVEL levels), so they
 * and 1 - u are exact. */
#ifndef HY_COLLISION_CCD_MATH_H
#define HY_COLLISION_CCD_MATH_H

#include <float.h>
#include <math.h>

#include "engine/hd.h"

/* Deepest bisection per parameter: keeps u, 1-u, v exact dyadics. */
#define HY_CCD_MAX_LEVEL 50
/* Default work cap (box evaluations) before answering "collision". */
#define HY_CCD_DEFAULT_MAX_BOXES 1000

/* Finite operands only (inputs are checked): plain compares, no libm call. */
HY_HD double hy_ccd_min(double a, double b) { return a < b ? a : b; }
HY_HD double hy_ccd_max(double a, double b) { return a > b ? a : b; }

/* Unit roundoff of double. */
#define HY_CCD_U (1.0 / 9007199254740992.0)

/* One query in relative form: at time end s (0 or 1),
 * F_s(u, v) = q_s + u e_s - w(u, v) f_s with w = v (1-u) (duffy) or v. */
typedef struct hy_ccd_problem {
    double q[2][3], e[2][3], f[2][3];
    double eps[3]; /* rigorous bound on |computed F_k - exact F_k| */
    double axis_thr[3]; /* eps_k + min_distance, rounded up */
    double accept[3];   /* |F_k| bound under which a box counts as touching */
    double md;          /* min_distance, scaled */
    double twist_tol;   /* nonlinearity under which an unseparated box is a contact */
    int t_level;        /* time bisection depth required before accepting on twist */
    int duffy;
} hy_ccd_problem;

typedef struct hy_ccd_box {
    double lo[3], hi[3];    /* t, u, v */
    unsigned char level[3]; /* bisections so far per parameter */
} hy_ccd_box;

/* Result of a search, for statistics. */
typedef struct hy_ccd_stats {
    int boxes;  /* boxes evaluated */
    int capped; /* 1 if the work cap forced a conservative answer */
} hy_ccd_stats;

/* Exact swept-AABB separation: 1 if on some axis every point of set a is
 * farther than md from every point of set b (so no contact is possible). */
HY_HD int hy_ccd_aabb_apart(const double* const* a, int na, const double* const* b, int nb, double md) {
    /* fl(x - y) > md (1 + 4u) implies x - y > md; with md = 0 the sign of the
     * rounded difference is exact. */
    double thr = md * (1.0 + 4.0 * HY_CCD_U);
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

/* Largest |x| over n points of 3 coordinates, on axis k. */
HY_HD double hy_ccd_absmax(const double* const* x, int n, int k) {
    double m = 0.0;
    for (int i = 0; i < n; i++) m = hy_ccd_max(m, fabs(x[i][k]));
    return m;
}

/* Fill the relative form. x[0..3] are the 4 positions at t=0, x[4..7] at
 * t=1, already scaled. For vertex-face x = (p, a, b, c); for edge-edge
 * x = (a, b, c, d). acc_factor scales the touching tolerance in units of
 * eps (>= 1); twist_rel is the nonlinearity tolerance relative to the
 * largest coordinate; t_level the time bisection depth before a box may be
 * accepted on that tolerance. */
HY_HD void hy_ccd_problem_init(hy_ccd_problem* pr, const double* const* x, int is_vf, double md, double acc_factor,
                               double twist_rel, int t_level) {
    pr->duffy = is_vf;
    pr->md = md;
    pr->t_level = t_level;
    double mall = 0.0;
    for (int s = 0; s < 2; s++) {
        const double* p0 = x[4 * s + 0];
        const double* p1 = x[4 * s + 1];
        const double* p2 = x[4 * s + 2];
        const double* p3 = x[4 * s + 3];
        for (int k = 0; k < 3; k++) {
            if (is_vf) {
                /* F = (p - a) + u (a - b) - v (1-u) (c - a) */
                pr->q[s][k] = p0[k] - p1[k];
                pr->e[s][k] = p1[k] - p2[k];
                pr->f[s][k] = p3[k] - p1[k];
            } else {
                /* F = (a - c) + u (b - a) - v (d - c) */
                pr->q[s][k] = p0[k] - p2[k];
                pr->e[s][k] = p1[k] - p0[k];
                pr->f[s][k] = p3[k] - p2[k];
            }
        }
    }
    for (int k = 0; k < 3; k++) {
        double m = hy_ccd_absmax(x, 8, k);
        /* 34 units derived in docs/CCD.md; 48 leaves room for the O(u^2)
         * terms and for rounding in this product. */
        pr->eps[k] = 48.0 * HY_CCD_U * m + DBL_MIN;
        pr->axis_thr[k] = (pr->eps[k] + md) * (1.0 + 4.0 * HY_CCD_U);
        pr->accept[k] = md + acc_factor * pr->eps[k];
        mall = hy_ccd_max(mall, m);
    }
    pr->twist_tol = twist_rel * mall;
}

/* Corner values of F over a box: F[ti][ui][vi][k]. */
HY_HD void hy_ccd_corners(const hy_ccd_problem* pr, const hy_ccd_box* b, double F[2][2][2][3]) {
    double G[2][2][2][3]; /* [time end][ui][vi][k] */
    for (int ui = 0; ui < 2; ui++) {
        double u = ui ? b->hi[1] : b->lo[1];
        for (int vi = 0; vi < 2; vi++) {
            double v = vi ? b->hi[2] : b->lo[2];
            double w = pr->duffy ? v * (1.0 - u) : v;
            for (int s = 0; s < 2; s++)
                for (int k = 0; k < 3; k++) G[s][ui][vi][k] = (pr->q[s][k] + u * pr->e[s][k]) - w * pr->f[s][k];
        }
    }
    for (int ti = 0; ti < 2; ti++) {
        double t = ti ? b->hi[0] : b->lo[0];
        double s0 = 1.0 - t;
        for (int ui = 0; ui < 2; ui++)
            for (int vi = 0; vi < 2; vi++)
                for (int k = 0; k < 3; k++) F[ti][ui][vi][k] = G[0][ui][vi][k] * s0 + G[1][ui][vi][k] * t;
    }
}

/* 1 if direction d separates all 8 corners from the origin by more than the
 * rounding bound (plus min_distance). fmax_k bounds |F_k| at the corners. */
HY_HD int hy_ccd_dir_separates(const hy_ccd_problem* pr, const double d[3], const double* Fc, const double fmx[3]) {
    double bound = 0.0, dl1 = 0.0;
    for (int k = 0; k < 3; k++) {
        double a = fabs(d[k]);
        /* error of F_k, plus gamma_3 rounding of the dot product */
        bound += a * (pr->eps[k] + 4.0 * HY_CCD_U * fmx[k]);
        dl1 += a;
    }
    bound = (bound + pr->md * dl1) * (1.0 + 64.0 * HY_CCD_U) + DBL_MIN;
    double mn = INFINITY, mx = -INFINITY;
    for (int i = 0; i < 8; i++) {
        const double* F = Fc + 3 * i;
        double dot = (d[0] * F[0] + d[1] * F[1]) + d[2] * F[2];
        mn = hy_ccd_min(mn, dot);
        mx = hy_ccd_max(mx, dot);
        if (mn <= bound && mx >= -bound) return 0;
    }
    return mn > bound || mx < -bound;
}

/* Box verdict. */
enum { HY_CCD_EXCLUDED = 0, HY_CCD_ACCEPTED = 1, HY_CCD_SPLIT = 2 };

/* Evaluate one box; on HY_CCD_SPLIT, *split_dim is the parameter to bisect. */
HY_HD int hy_ccd_box_eval(const hy_ccd_problem* pr, const hy_ccd_box* b, int* split_dim) {
    double F[2][2][2][3];
    hy_ccd_corners(pr, b, F);
    const double* Fc = &F[0][0][0][0];

    /* Axis test: the hull's bounding box misses the origin. */
    double fmx[3];
    int inside = 1;
    for (int k = 0; k < 3; k++) {
        double lo = Fc[k], hi = Fc[k];
        for (int i = 1; i < 8; i++) {
            lo = hy_ccd_min(lo, Fc[3 * i + k]);
            hi = hy_ccd_max(hi, Fc[3 * i + k]);
        }
        if (lo > pr->axis_thr[k] || hi < -pr->axis_thr[k]) return HY_CCD_EXCLUDED;
        fmx[k] = hy_ccd_max(-lo, hi);
        if (fmx[k] + pr->eps[k] > pr->accept[k]) inside = 0;
    }
    /* Touching within rounding: the earliest such box gives the time. */
    if (inside) return HY_CCD_ACCEPTED;

    /* Centroid direction: separates a hull that is small compared with its
     * distance to the origin (the usual near miss). */
    double c[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++) c[k] += Fc[3 * i + k];
    if (hy_ccd_dir_separates(pr, c, Fc, fmx)) return HY_CCD_EXCLUDED;

    /* Face normals of the hull: for F affine on the box the hull is a
     * parallelepiped spanned by the mean edge vectors D_t, D_u, D_v, and a
     * point outside it is separated by one of the three face normals. They
     * also catch flat hulls (a triangle's normal, two edges' common normal,
     * parallel edges sliding in a plane) that the centroid cannot. */
    double D[3][3];
    for (int k = 0; k < 3; k++) {
        D[0][k] = (F[1][0][0][k] - F[0][0][0][k]) + (F[1][0][1][k] - F[0][0][1][k]) + (F[1][1][0][k] - F[0][1][0][k]) +
                  (F[1][1][1][k] - F[0][1][1][k]);
        D[1][k] = (F[0][1][0][k] - F[0][0][0][k]) + (F[0][1][1][k] - F[0][0][1][k]) + (F[1][1][0][k] - F[1][0][0][k]) +
                  (F[1][1][1][k] - F[1][0][1][k]);
        D[2][k] = (F[0][0][1][k] - F[0][0][0][k]) + (F[0][1][1][k] - F[0][1][0][k]) + (F[1][0][1][k] - F[1][0][0][k]) +
                  (F[1][1][1][k] - F[1][1][0][k]);
    }
    for (int i = 0; i < 3; i++) {
        int j = (i + 1) % 3;
        double n[3];
        v3_store(n, v3_cross(v3_load(D[i]), v3_load(D[j])));
        if ((n[0] != 0.0 || n[1] != 0.0 || n[2] != 0.0) && hy_ccd_dir_separates(pr, n, Fc, fmx))
            return HY_CCD_EXCLUDED;
    }

    /* Not separated. Measure how far F is from affine on this box (twisted
     * edges): the face-normal test is exact for an affine F, so a box whose
     * nonlinear part is below the tolerance and which is still not separated
     * holds a contact (or a near miss closer than the tolerance). Accepting
     * only decides false positives, never false negatives: the time of
     * impact stays safe because boxes are searched earliest first. */
    double spread[3], twist = 0.0;
    for (int k = 0; k < 3; k++) {
        double tu = (F[1][1][0][k] - F[1][0][0][k]) - (F[0][1][0][k] - F[0][0][0][k]);
        double tv = (F[1][0][1][k] - F[1][0][0][k]) - (F[0][0][1][k] - F[0][0][0][k]);
        double uv = (F[0][1][1][k] - F[0][1][0][k]) - (F[0][0][1][k] - F[0][0][0][k]);
        double uv1 = (F[1][1][1][k] - F[1][1][0][k]) - (F[1][0][1][k] - F[1][0][0][k]);
        twist = hy_ccd_max(twist, hy_ccd_max(hy_ccd_max(fabs(tu), fabs(tv)), hy_ccd_max(fabs(uv), fabs(uv1))));
    }
    for (int d = 0; d < 3; d++) {
        double s = (fabs(D[d][0]) + fabs(D[d][1])) + fabs(D[d][2]);
        spread[d] = b->level[d] >= HY_CCD_MAX_LEVEL ? -1.0 : s;
    }
    int t_fine = b->level[0] >= pr->t_level;
    if (twist <= pr->twist_tol) {
        if (t_fine) return HY_CCD_ACCEPTED;
        if (spread[0] >= 0.0) {
            *split_dim = 0; /* refine the time of impact */
            return HY_CCD_SPLIT;
        }
    }
    /* Split the parameter along which F varies most. */
    int dim = 0;
    if (spread[1] > spread[dim]) dim = 1;
    if (spread[2] > spread[dim]) dim = 2;
    if (spread[dim] < 0.0) return HY_CCD_ACCEPTED; /* cannot split: conservative */
    *split_dim = dim;
    return HY_CCD_SPLIT;
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

/* Earliest-first search of [0,1]^3 with a heap of pending boxes (heap must
 * hold max_boxes + 1). Returns 1 and *toi when a box is accepted (or the cap
 * is hit: then *toi is the earliest pending time), 0 when every box was
 * excluded. Every pending box starts no earlier than the accepted one, and
 * excluded boxes hold no contact, so *toi never exceeds the first contact. */
HY_HD int hy_ccd_search(const hy_ccd_problem* pr, hy_ccd_box* heap, int max_boxes, double* toi, hy_ccd_stats* st) {
    int n = 0;
    hy_ccd_box root = {{0.0, 0.0, 0.0}, {1.0, 1.0, 1.0}, {0, 0, 0}};
    hy_ccd_heap_push(heap, &n, &root);
    int boxes = 0;
    st->capped = 0;
    while (n > 0) {
        if (boxes >= max_boxes) {
            /* Conservative give-up: a contact may hide in any pending box. */
            st->boxes = boxes;
            st->capped = 1;
            *toi = heap[0].lo[0];
            return 1;
        }
        hy_ccd_box b = hy_ccd_heap_pop(heap, &n);
        boxes++;
        int dim = 0;
        int r = hy_ccd_box_eval(pr, &b, &dim);
        if (r == HY_CCD_EXCLUDED) continue;
        if (r == HY_CCD_ACCEPTED) {
            st->boxes = boxes;
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
    return 0;
}

#endif
