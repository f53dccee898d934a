/* Conservative continuous collision arithmetic shared by the C code and a
 * future CUDA twin (HY_HD, no FMA contraction: the build passes
 * -ffp-contract=off to both).
 *
 * Method (docs/design/CCD.md has the full argument). Both elementary tests reduce to
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
 * the arithmetic type; the derivation, 34 u m_k, is in docs/design/CCD.md). Corner
 * parameters are dyadic rationals (bisection of [0,1] to at most
 * HY_CCD_MAX_LEVEL levels), so they and 1 - u are exact.
 *
 * The parts: the search's boxes and their heap (ccd_heap.h), the volume
 * cubic of the time restriction and the coplanarity filter (ccd_volume.h),
 * the root finder (ccd_root.h). The root finder is written once against
 * HY_CCD_REAL and instantiated below for
 * double (suffix _d) and, on the host only, x87 long double (suffix _ld,
 * unit roundoff 2^-64): the long double pass re-checks the contacts that the
 * double pass reports, removing most false positives that lie below double
 * resolution. Under nvcc long double is double, so the _ld pass is not
 * compiled there. */
#ifndef HY_COLLISION_CCD_MATH_H
#define HY_COLLISION_CCD_MATH_H

#include <float.h>
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "collision/ccd_heap.h"
#include "collision/ccd_scalar.h"
#include "collision/ccd_volume.h"
#include "collision/closest.h"
#include "core/hd.h"

/* Deepest bisection per parameter: keeps u, 1-u, v exact dyadics. */
#define HY_CCD_MAX_LEVEL 50
/* Default work cap (box evaluations per pass) before answering
 * "collision". */
#define HY_CCD_DEFAULT_MAX_BOXES 1000
#ifndef HY_CCD_CERTAIN_T_BIAS
#define HY_CCD_CERTAIN_T_BIAS 1000
#endif

/* Result of a search, for statistics. */
typedef struct hy_ccd_stats {
    int boxes;  /* boxes evaluated */
    int capped; /* 1 if the work cap forced a conservative answer */
    int robust; /* 1 if the accepted box certainly holds a contact */
    int pending; /* boxes in the heap: in, to resume; out, left over */
} hy_ccd_stats;

/* Box verdict. */
enum { HY_CCD_EXCLUDED = 0, HY_CCD_ACCEPTED = 1, HY_CCD_SPLIT = 2 };

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

/* The typed part, once per arithmetic type. */
#define HY_CCD_REAL double
#define HY_CCD_FN(name) name##_d
#define HY_CCD_UNIT (1.0 / 9007199254740992.0) /* 2^-53 */
#include "collision/ccd_root.h"
#undef HY_CCD_REAL
#undef HY_CCD_FN
#undef HY_CCD_UNIT

#if !defined(__CUDACC__) && LDBL_MANT_DIG >= 64
#define HY_CCD_HAVE_LD 1
#define HY_CCD_REAL long double
#define HY_CCD_FN(name) name##_ld
#define HY_CCD_UNIT (1.0L / 18446744073709551616.0L) /* 2^-64 */
#include "collision/ccd_root.h"
#undef HY_CCD_REAL
#undef HY_CCD_FN
#undef HY_CCD_UNIT
#else
#define HY_CCD_HAVE_LD 0
#endif

#endif /* HY_COLLISION_CCD_MATH_H */
