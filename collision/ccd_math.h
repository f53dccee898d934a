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
/* Pending boxes: a depth-first search pushes one sibling per level. */
#define HY_CCD_STACK (3 * HY_CCD_MAX_LEVEL + 8)
/* Default work cap (box evaluations) before answering "collision". */
#define HY_CCD_DEFAULT_MAX_BOXES 1200

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
    int duffy;
} hy_ccd_problem;

typedef struct hy_ccd_box {
    double lo[3], hi[3]; /* t, u, v */
    int level[3];
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
            amin = fmin(amin, a[i][k]);
            amax = fmax(amax, a[i][k]);
        }
        for (int i = 1; i < nb; i++) {
            bmin = fmin(bmin, b[i][k]);
            bmax = fmax(bmax, b[i][k]);
        }
        if (bmin - amax > thr || amin - bmax > thr) return 1;
    }
    return 0;
}

/* Largest |x| over n points of 3 coordinates, on axis k. */
HY_HD double hy_ccd_absmax(const double* const* x, int n, int k) {
    double m = 0.0;
    for (int i = 0; i < n; i++) m = fmax(m, fabs(x[i][k]));
    return m;
}

/* Fill the relative form. x[0..3] are the 4 positions at t=0, x[4..7] at
 * t=1, already scaled. For vertex-face x = (p, a, b, c); for edge-edge
 * x = (a, b, c, d). acc_factor scales the acceptance tolerance in units of
 * eps (>= 1). */
HY_HD void hy_ccd_problem_init(hy_ccd_problem* pr, const double* const* x, int is_vf, double md, double acc_factor) {
    pr->duffy = is_vf;
    pr->md = md;
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
    }
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
        mn = fmin(mn, dot);
        mx = fmax(mx, dot);
        if (mn <= bound && mx >= -bound) return 0;
    }
    return mn > bound || mx < -bound;
}

/* Box verdict. */
enum { HY_CCD_EXCLUDED = 0, HY_CCD_ACCEPTED = 1, HY_CCD_SPLIT = 2 };

/* Evaluate one box; on HY_CCD_SPLIT, *split_dim is the parameter to bisect
 * and *lower_first says which half to search first. */
HY_HD int hy_ccd_box_eval(const hy_ccd_problem* pr, const hy_ccd_box* b, int* split_dim, int* lower_first) {
    double F[2][2][2][3];
    hy_ccd_corners(pr, b, F);
    const double* Fc = &F[0][0][0][0];

    /* Axis test: the hull's bounding box misses the origin. */
    double lo[3], hi[3], fmx[3];
    int inside = 1;
    for (int k = 0; k < 3; k++) {
        lo[k] = hi[k] = Fc[k];
        for (int i = 1; i < 8; i++) {
            lo[k] = fmin(lo[k], Fc[3 * i + k]);
            hi[k] = fmax(hi[k], Fc[3 * i + k]);
        }
        if (lo[k] > pr->axis_thr[k] || hi[k] < -pr->axis_thr[k]) return HY_CCD_EXCLUDED;
        fmx[k] = fmax(fabs(lo[k]), fabs(hi[k]));
        if (fmx[k] + pr->eps[k] > pr->accept[k]) inside = 0;
    }
    if (inside) return HY_CCD_ACCEPTED;

    /* Centroid direction: separates a hull that is small compared with its
     * distance to the origin (the usual near miss). */
    double c[3] = {0.0, 0.0, 0.0};
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++) c[k] += Fc[3 * i + k];
    if (hy_ccd_dir_separates(pr, c, Fc, fmx)) return HY_CCD_EXCLUDED;

    /* Local plane normal: average edge vectors of the box along t, u, v; the
     * cross product of the two that span the most area is normal to a nearly
     * flat hull (a triangle's normal, two edges' common normal, or the plane
     * of parallel edges sliding), which separates thin near misses that the
     * centroid cannot. */
    double D[3][3], spread[3];
    for (int k = 0; k < 3; k++) {
        D[0][k] = (F[1][0][0][k] - F[0][0][0][k]) + (F[1][0][1][k] - F[0][0][1][k]) + (F[1][1][0][k] - F[0][1][0][k]) +
                  (F[1][1][1][k] - F[0][1][1][k]);
        D[1][k] = (F[0][1][0][k] - F[0][0][0][k]) + (F[0][1][1][k] - F[0][0][1][k]) + (F[1][1][0][k] - F[1][0][0][k]) +
                  (F[1][1][1][k] - F[1][0][1][k]);
        D[2][k] = (F[0][0][1][k] - F[0][0][0][k]) + (F[0][1][1][k] - F[0][1][0][k]) + (F[1][0][1][k] - F[1][0][0][k]) +
                  (F[1][1][1][k] - F[1][1][0][k]);
    }
    double best_n[3] = {0.0, 0.0, 0.0}, best_len = 0.0;
    for (int i = 0; i < 3; i++) {
        for (int j = i + 1; j < 3; j++) {
            hy_v3 n = v3_cross(v3_load(D[i]), v3_load(D[j]));
            double l = v3_len2(n);
            if (l > best_len) {
                best_len = l;
                v3_store(best_n, n);
            }
        }
    }
    if (best_len > 0.0 && hy_ccd_dir_separates(pr, best_n, Fc, fmx)) return HY_CCD_EXCLUDED;

    /* Split the parameter along which F varies most (sum of |edge change|),
     * skipping parameters already at the deepest level. */
    for (int d = 0; d < 3; d++) {
        double s = 0.0;
        for (int e = 0; e < 4; e++) {
            int a0 = e & 1, a1 = (e >> 1) & 1;
            const double *x0, *x1;
            if (d == 0) {
                x0 = F[0][a0][a1];
                x1 = F[1][a0][a1];
            } else if (d == 1) {
                x0 = F[a0][0][a1];
                x1 = F[a0][1][a1];
            } else {
                x0 = F[a0][a1][0];
                x1 = F[a0][a1][1];
            }
            s += (fabs(x1[0] - x0[0]) + fabs(x1[1] - x0[1])) + fabs(x1[2] - x0[2]);
        }
        spread[d] = b->level[d] >= HY_CCD_MAX_LEVEL ? -1.0 : s;
    }
    int dim = 0;
    if (spread[1] > spread[dim]) dim = 1;
    if (spread[2] > spread[dim]) dim = 2;
    if (spread[dim] < 0.0) return HY_CCD_ACCEPTED; /* cannot split: conservative */
    *split_dim = dim;
    if (dim == 0) {
        *lower_first = 1; /* earliest time first */
    } else {
        /* Search first the half holding the corner nearest the origin. */
        double near_lo = INFINITY, near_hi = INFINITY;
        for (int ti = 0; ti < 2; ti++)
            for (int a = 0; a < 2; a++)
                for (int h = 0; h < 2; h++) {
                    const double* x = dim == 1 ? F[ti][h][a] : F[ti][a][h];
                    double n1 = (fabs(x[0]) + fabs(x[1])) + fabs(x[2]);
                    if (h)
                        near_hi = fmin(near_hi, n1);
                    else
                        near_lo = fmin(near_lo, n1);
                }
        *lower_first = near_lo <= near_hi;
    }
    return HY_CCD_SPLIT;
}

/* Depth-first search of [0,1]^3. Returns 1 and *toi when a box is accepted
 * (or the cap is hit: then *toi is the earliest pending time), 0 when every
 * box was excluded. */
HY_HD int hy_ccd_search(const hy_ccd_problem* pr, int max_boxes, double* toi, hy_ccd_stats* st) {
    hy_ccd_box stack[HY_CCD_STACK];
    int top = 0;
    hy_ccd_box root = {{0.0, 0.0, 0.0}, {1.0, 1.0, 1.0}, {0, 0, 0}};
    stack[top++] = root;
    double best = 2.0; /* earliest accepted time so far; > 1 = none */
    int boxes = 0;
    st->capped = 0;
    while (top > 0) {
        hy_ccd_box b = stack[--top];
        /* Only an earlier contact can improve the answer. */
        if (b.lo[0] >= best) continue;
        if (boxes >= max_boxes) {
            /* Conservative give-up: some root may hide in any pending box. */
            double t = fmin(best, b.lo[0]);
            for (int i = 0; i < top; i++) t = fmin(t, stack[i].lo[0]);
            st->boxes = boxes;
            st->capped = 1;
            *toi = t;
            return 1;
        }
        boxes++;
        int dim = 0, lower_first = 1;
        int r = hy_ccd_box_eval(pr, &b, &dim, &lower_first);
        if (r == HY_CCD_EXCLUDED) continue;
        if (r == HY_CCD_ACCEPTED) {
            best = fmin(best, b.lo[0]);
            if (best <= 0.0) break;
            continue;
        }
        double mid = 0.5 * (b.lo[dim] + b.hi[dim]);
        hy_ccd_box lo = b, hi = b;
        lo.hi[dim] = mid;
        hi.lo[dim] = mid;
        lo.level[dim]++;
        hi.level[dim]++;
        if (top + 2 > HY_CCD_STACK) { /* cannot happen: depth is bounded */
            st->boxes = boxes;
            st->capped = 1;
            *toi = 0.0;
            return 1;
        }
        if (lower_first) {
            stack[top++] = hi;
            stack[top++] = lo;
        } else {
            stack[top++] = lo;
            stack[top++] = hi;
        }
    }
    st->boxes = boxes;
    if (best <= 1.0) {
        *toi = best;
        return 1;
    }
    return 0;
}

#endif
