/* Bounding volume hierarchy over the triangles of one mesh, with swept boxes.
 *
 * A hy_bvh keeps what the mesh *is* (its triangles, which triangle owns
 * which vertex and edge) apart from what changes per step (the boxes). Each
 * step either refits the boxes bottom-up over the swept positions [x0, x1]
 * or rebuilds the tree top-down (binned SAH) when refitting has let its
 * quality decay; hy_bvh_update decides.
 *
 * Boxes: a vertex's box bounds its positions at t=0 and t=1 (the segment it
 * sweeps under linear motion), grown by thickness/2 on every side; a
 * triangle's box is the union of its vertices' boxes; a node's the union of
 * its children's. So two primitives whose swept boxes are disjoint stay more
 * than `thickness` apart over the whole step. Box arithmetic is exact (min
 * and max of the inputs) except the thickness growth, which is rounded
 * outward.
 *
 * Feature ownership: every vertex and every edge of the mesh is owned by
 * exactly one of the triangles containing it (the first in triangle order).
 * Traversal (collision/traverse.h) emits a vertex-face or edge-edge pair only
 * from the triangle pair made of the owners, so each feature pair comes out
 * once, not once per triangle pair that contains it.
 *
 * Threads: build, refit and update may use a hy_pool (NULL = serial); the
 * result does not depend on the pool or its size. A hy_bvh may be read by
 * many threads at once (traversal) when no build or refit runs. */
#ifndef HY_COLLISION_BVH_H
#define HY_COLLISION_BVH_H

#include <stdint.h>

/* The SSE2 box tests on x86 hosts; the scalar ones elsewhere and on a
 * CUDA device (the box tests are HY_HD: the GPU traversal kernel runs
 * them), which give the same answers. */
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
#define HY_BVH_SSE2 1
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

#include "core/hd.h"
#include "hyphys/hyphys.h"
#include "core/pool.h"

typedef struct hy_aabb {
    double lo[3], hi[3];
} hy_aabb;

HY_HD int hy_aabb_overlap(const hy_aabb* a, const hy_aabb* b) {
    return a->lo[0] <= b->hi[0] && b->lo[0] <= a->hi[0] && a->lo[1] <= b->hi[1] && b->lo[1] <= a->hi[1] &&
           a->lo[2] <= b->hi[2] && b->lo[2] <= a->hi[2];
}

HY_HD void hy_aabb_union(hy_aabb* r, const hy_aabb* a, const hy_aabb* b) {
    for (int k = 0; k < 3; k++) {
        r->lo[k] = a->lo[k] < b->lo[k] ? a->lo[k] : b->lo[k];
        r->hi[k] = a->hi[k] > b->hi[k] ? a->hi[k] : b->hi[k];
    }
}

/* A moving box: one box at t=0 and one at t=1. Every point that moves
 * linearly from inside lo0..hi0 to inside lo1..hi1 lies, at time t, inside
 * the box whose bounds interpolate linearly between the two: so two moving
 * boxes can only meet at some t where those interpolated boxes overlap.
 * Unlike the swept box (the union of both ends), this compares the two
 * sides at the same time: features that move together at speed, which have
 * large overlapping swept boxes, stay apart unless they come close. */
typedef struct hy_mbox {
    double lo0[3], hi0[3], lo1[3], hi1[3];
} hy_mbox;

/* 1 when the interpolated boxes of a and b overlap at some t in [0, 1]
 * (conservative: the rounded crossing times are compared with a margin).
 * Per axis and side the gap is linear in t, so each of the 6 overlap
 * conditions holds on a sub-interval of [0, 1]; they meet when the latest
 * start is before the earliest end. The sign of a rounded difference is
 * exact, so the all-or-nothing cases are decided exactly; a crossing time
 * a / (a - b) is within 5 ulps of the exact one, well inside 2^-48. NaN
 * (from overflowing inputs) keeps the pair. */
#if defined(HY_BVH_SSE2)
/* Two lanes at a time, with one branch on the data: the pairs apart at
 * both ends on one side (about half of what a traversal tests) and those
 * overlapping at one end are decided by signs alone; only the rest (a
 * fifth) need crossing times. Same answers as the
 * scalar version below (which other targets use): the same differences and
 * quotients, and NaN never wins a max or min (maxpd/minpd return the
 * second operand when one is NaN; the accumulator goes second). */
HY_HD int hy_mbox_overlap(const hy_mbox* a, const hy_mbox* b) {
    const double* A = a->lo0;
    const double* B = b->lo0;
    /* lanes: (g_x, g_y), (h_x, h_y), (g_z, h_z); g = b.hi - a.lo,
     * h = a.hi - b.lo, at t=0 (offset 0) and t=1 (offset 6) */
    __m128d g0 = _mm_sub_pd(_mm_loadu_pd(B + 3), _mm_loadu_pd(A));
    __m128d h0 = _mm_sub_pd(_mm_loadu_pd(A + 3), _mm_loadu_pd(B));
    __m128d z0 = _mm_sub_pd(_mm_set_pd(A[5], B[5]), _mm_set_pd(B[2], A[2]));
    __m128d g1 = _mm_sub_pd(_mm_loadu_pd(B + 9), _mm_loadu_pd(A + 6));
    __m128d h1 = _mm_sub_pd(_mm_loadu_pd(A + 9), _mm_loadu_pd(B + 6));
    __m128d z1 = _mm_sub_pd(_mm_set_pd(A[11], B[11]), _mm_set_pd(B[8], A[8]));
    __m128d zero = _mm_setzero_pd(), one = _mm_set1_pd(1.0);
    __m128d ng0 = _mm_cmplt_pd(g0, zero), nh0 = _mm_cmplt_pd(h0, zero), nz0 = _mm_cmplt_pd(z0, zero);
    __m128d ng1 = _mm_cmplt_pd(g1, zero), nh1 = _mm_cmplt_pd(h1, zero), nz1 = _mm_cmplt_pd(z1, zero);
    /* apart at both ends on one side */
    int both = _mm_movemask_pd(_mm_or_pd(_mm_or_pd(_mm_and_pd(ng0, ng1), _mm_and_pd(nh0, nh1)),
                                         _mm_and_pd(nz0, nz1)));
    /* Overlapping at t=0 (no gap negative there) or at t=1: no crossing
     * times needed. One branch, taken by most pairs. */
    int any0 = _mm_movemask_pd(_mm_or_pd(_mm_or_pd(ng0, nh0), nz0));
    int any1 = _mm_movemask_pd(_mm_or_pd(_mm_or_pd(ng1, nh1), nz1));
    if (both | !any0 | !any1) return both == 0;
    /* crossing times; lanes that do not cross are masked out below */
    __m128d tg = _mm_div_pd(g0, _mm_sub_pd(g0, g1));
    __m128d th = _mm_div_pd(h0, _mm_sub_pd(h0, h1));
    __m128d tz = _mm_div_pd(z0, _mm_sub_pd(z0, z1));
    /* entering (negative at t=0): the overlap starts no earlier than t */
    __m128d lo = _mm_max_pd(_mm_and_pd(tg, ng0), zero);
    lo = _mm_max_pd(_mm_and_pd(th, nh0), lo);
    lo = _mm_max_pd(_mm_and_pd(tz, nz0), lo);
    /* leaving (negative at t=1, so not at t=0 unless `both`) */
    __m128d hi = _mm_min_pd(_mm_or_pd(_mm_and_pd(ng1, tg), _mm_andnot_pd(ng1, one)), one);
    hi = _mm_min_pd(_mm_or_pd(_mm_and_pd(nh1, th), _mm_andnot_pd(nh1, one)), hi);
    hi = _mm_min_pd(_mm_or_pd(_mm_and_pd(nz1, tz), _mm_andnot_pd(nz1, one)), hi);
    lo = _mm_max_pd(_mm_unpackhi_pd(lo, lo), lo);
    hi = _mm_min_pd(_mm_unpackhi_pd(hi, hi), hi);
    int meet = _mm_comile_sd(lo, _mm_add_sd(hi, _mm_set_sd(0x1p-48)));
    return (both == 0) & meet;
}
#else
HY_HD int hy_mbox_overlap(const hy_mbox* a, const hy_mbox* b) {
    double lo = 0.0, hi = 1.0;
    for (int k = 0; k < 3; k++) {
        double g0 = b->hi0[k] - a->lo0[k], g1 = b->hi1[k] - a->lo1[k];
        double h0 = a->hi0[k] - b->lo0[k], h1 = a->hi1[k] - b->lo1[k];
        if ((g0 < 0 && g1 < 0) || (h0 < 0 && h1 < 0)) return 0;
        if (g0 < 0 || g1 < 0) {
            double t = g0 / (g0 - g1);
            if (g0 < 0) {
                if (t > lo) lo = t;
            } else if (t < hi) {
                hi = t;
            }
        }
        if (h0 < 0 || h1 < 0) {
            double t = h0 / (h0 - h1);
            if (h0 < 0) {
                if (t > lo) lo = t;
            } else if (t < hi) {
                hi = t;
            }
        }
    }
    return lo <= hi + 0x1p-48;
}
#endif

/* A moving box in single precision, rounded outward (each bound moved
 * out by 2^-21 of its size plus 2^-125 before the rounding to float, which
 * errs by at most 2^-24 of it), so it contains the hy_mbox it was made
 * from. Lane 3 is padding (0). Traversal tests only these (hy_fbox_overlap):
 * node pairs, triangle pairs and the feature pairs themselves. A test
 * passes every pair hy_mbox_overlap passes on the double boxes, and at
 * most a few more whose boxes come within the rounding (about 2^-21 of
 * the coordinates); the filters and the exact test after it decide those
 * as any other candidate. Two thirds of the memory of a hy_mbox, four
 * lanes a register. */
typedef struct hy_fbox {
    float lo0[4], hi0[4], lo1[4], hi1[4];
} hy_fbox;

/* Past the float range a lower bound stays at the largest float (not
 * +inf, which would be above it), an upper one at the most negative; NaN
 * stays NaN (and keeps the pair). */
HY_HD float hy_float_down(double d) {
    double y = d - ((d < 0 ? -d : d) * 0x1p-21 + 0x1p-125);
    return (float)(y > 0x1.fffffep127 ? 0x1.fffffep127 : y);
}
HY_HD float hy_float_up(double d) {
    double y = d + ((d < 0 ? -d : d) * 0x1p-21 + 0x1p-125);
    return (float)(y < -0x1.fffffep127 ? -0x1.fffffep127 : y);
}

#if defined(HY_BVH_SSE2)
/* hy_float_down (down != 0) or hy_float_up of p[0..2], lane 3 zero: the
 * same operations two lanes at a time. min/max take the clamp first so
 * that a NaN bound comes out NaN. */
HY_HD __m128 hy_float3(const double* p, int down) {
    const __m128d sign = _mm_set1_pd(-0.0), rel = _mm_set1_pd(0x1p-21), tiny = _mm_set1_pd(0x1p-125);
    const __m128d big = _mm_set1_pd(down ? 0x1.fffffep127 : -0x1.fffffep127);
    __m128d a = _mm_loadu_pd(p), b = _mm_set_sd(p[2]);
    __m128d pa = _mm_add_pd(_mm_mul_pd(_mm_andnot_pd(sign, a), rel), tiny);
    __m128d pb = _mm_add_pd(_mm_mul_pd(_mm_andnot_pd(sign, b), rel), tiny);
    if (down) {
        a = _mm_min_pd(big, _mm_sub_pd(a, pa));
        b = _mm_min_pd(big, _mm_sub_pd(b, pb));
    } else {
        a = _mm_max_pd(big, _mm_add_pd(a, pa));
        b = _mm_max_pd(big, _mm_add_pd(b, pb));
    }
    __m128 r = _mm_movelh_ps(_mm_cvtpd_ps(a), _mm_cvtpd_ps(b));
    return _mm_and_ps(r, _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1)));
}

HY_HD void hy_fbox_from(const hy_mbox* m, hy_fbox* f) {
    _mm_storeu_ps(f->lo0, hy_float3(m->lo0, 1));
    _mm_storeu_ps(f->hi0, hy_float3(m->hi0, 0));
    _mm_storeu_ps(f->lo1, hy_float3(m->lo1, 1));
    _mm_storeu_ps(f->hi1, hy_float3(m->hi1, 0));
}
#else
HY_HD void hy_fbox_from(const hy_mbox* m, hy_fbox* f) {
    for (int k = 0; k < 3; k++) {
        f->lo0[k] = hy_float_down(m->lo0[k]);
        f->hi0[k] = hy_float_up(m->hi0[k]);
        f->lo1[k] = hy_float_down(m->lo1[k]);
        f->hi1[k] = hy_float_up(m->hi1[k]);
    }
    f->lo0[3] = f->hi0[3] = f->lo1[3] = f->hi1[3] = 0.0f;
}
#endif

/* hy_mbox_overlap's test on single-precision boxes: conservative for the
 * boxes (signs of rounded differences are exact; each crossing time is
 * within 2^-22 of the exact one, inside the 2^-20 margin; NaN keeps the
 * pair), so 0 means the double boxes they contain do not meet either. */
#if defined(HY_BVH_SSE2)
HY_HD int hy_fbox_overlap(const hy_fbox* a, const hy_fbox* b) {
    __m128 alo0 = _mm_loadu_ps(a->lo0), ahi0 = _mm_loadu_ps(a->hi0);
    __m128 alo1 = _mm_loadu_ps(a->lo1), ahi1 = _mm_loadu_ps(a->hi1);
    __m128 blo0 = _mm_loadu_ps(b->lo0), bhi0 = _mm_loadu_ps(b->hi0);
    __m128 blo1 = _mm_loadu_ps(b->lo1), bhi1 = _mm_loadu_ps(b->hi1);
    __m128 g0 = _mm_sub_ps(bhi0, alo0), g1 = _mm_sub_ps(bhi1, alo1);
    __m128 h0 = _mm_sub_ps(ahi0, blo0), h1 = _mm_sub_ps(ahi1, blo1);
    __m128 zero = _mm_setzero_ps(), one = _mm_set1_ps(1.0f);
    __m128 ng0 = _mm_cmplt_ps(g0, zero), ng1 = _mm_cmplt_ps(g1, zero);
    __m128 nh0 = _mm_cmplt_ps(h0, zero), nh1 = _mm_cmplt_ps(h1, zero);
    int both = _mm_movemask_ps(_mm_or_ps(_mm_and_ps(ng0, ng1), _mm_and_ps(nh0, nh1)));
    int any0 = _mm_movemask_ps(_mm_or_ps(ng0, nh0)), any1 = _mm_movemask_ps(_mm_or_ps(ng1, nh1));
    if (both | !any0 | !any1) return both == 0;
    __m128 tg = _mm_div_ps(g0, _mm_sub_ps(g0, g1));
    __m128 th = _mm_div_ps(h0, _mm_sub_ps(h0, h1));
    __m128 lo = _mm_max_ps(_mm_and_ps(tg, ng0), zero);
    lo = _mm_max_ps(_mm_and_ps(th, nh0), lo);
    __m128 hi = _mm_min_ps(_mm_or_ps(_mm_and_ps(ng1, tg), _mm_andnot_ps(ng1, one)), one);
    hi = _mm_min_ps(_mm_or_ps(_mm_and_ps(nh1, th), _mm_andnot_ps(nh1, one)), hi);
    lo = _mm_max_ps(_mm_movehl_ps(lo, lo), lo);
    lo = _mm_max_ss(_mm_shuffle_ps(lo, lo, 1), lo);
    hi = _mm_min_ps(_mm_movehl_ps(hi, hi), hi);
    hi = _mm_min_ss(_mm_shuffle_ps(hi, hi, 1), hi);
    int meet = _mm_comile_ss(lo, _mm_add_ss(hi, _mm_set_ss(0x1p-20f)));
    return (both == 0) & meet;
}
/* hy_fbox_overlap of a moved by t * e against b, e given as a float
 * interval per axis (e_lo <= e <= e_hi, lane 3 zero; see hy_fbox_shift_range).
 * The moved t=1 bounds are rounded sums, padded by 2^-22 of their size (an
 * IEEE sum errs by at most 2^-24 of itself), so they stay outward. */
/* a moved by t * e, as hy_fbox_overlap_shift tests it, into *m: a box
 * moved once can be tested against many. */
HY_HD void hy_fbox_shift(const hy_fbox* a, const float e_lo[4], const float e_hi[4], hy_fbox* m) {
    const __m128 sign = _mm_set1_ps(-0.0f), rel = _mm_set1_ps(0x1p-22f), tiny = _mm_set1_ps(0x1p-125f);
    __m128 lo1 = _mm_add_ps(_mm_loadu_ps(a->lo1), _mm_loadu_ps(e_lo));
    __m128 hi1 = _mm_add_ps(_mm_loadu_ps(a->hi1), _mm_loadu_ps(e_hi));
    lo1 = _mm_sub_ps(lo1, _mm_add_ps(_mm_mul_ps(_mm_andnot_ps(sign, lo1), rel), tiny));
    hi1 = _mm_add_ps(hi1, _mm_add_ps(_mm_mul_ps(_mm_andnot_ps(sign, hi1), rel), tiny));
    _mm_storeu_ps(m->lo0, _mm_loadu_ps(a->lo0));
    _mm_storeu_ps(m->hi0, _mm_loadu_ps(a->hi0));
    _mm_storeu_ps(m->lo1, lo1);
    _mm_storeu_ps(m->hi1, hi1);
}
#else
HY_HD int hy_fbox_overlap(const hy_fbox* a, const hy_fbox* b) {
    float lo = 0.0f, hi = 1.0f;
    for (int k = 0; k < 3; k++) {
        float g[2][2] = {{b->hi0[k] - a->lo0[k], b->hi1[k] - a->lo1[k]}, {a->hi0[k] - b->lo0[k], a->hi1[k] - b->lo1[k]}};
        for (int s = 0; s < 2; s++) {
            float c0 = g[s][0], c1 = g[s][1];
            if (c0 < 0 && c1 < 0) return 0;
            if (c0 < 0 || c1 < 0) {
                float t = c0 / (c0 - c1);
                if (c0 < 0) {
                    if (t > lo) lo = t;
                } else if (t < hi) {
                    hi = t;
                }
            }
        }
    }
    return lo <= hi + 0x1p-20f;
}

HY_HD void hy_fbox_shift(const hy_fbox* a, const float e_lo[4], const float e_hi[4], hy_fbox* m) {
    *m = *a;
    for (int k = 0; k < 3; k++) {
        float l = a->lo1[k] + e_lo[k], h = a->hi1[k] + e_hi[k];
        m->lo1[k] = l - ((l < 0 ? -l : l) * 0x1p-22f + 0x1p-125f);
        m->hi1[k] = h + ((h < 0 ? -h : h) * 0x1p-22f + 0x1p-125f);
    }
}
#endif

HY_HD int hy_fbox_overlap_shift(const hy_fbox* a, const float e_lo[4], const float e_hi[4], const hy_fbox* b) {
    hy_fbox m;
    hy_fbox_shift(a, e_lo, e_hi, &m);
    return hy_fbox_overlap(&m, b);
}

/* The float interval around a shift e (itself a rounded difference of two
 * shifts, hence the 4.5e-16 |e| as in hy_mbox_shift), for
 * hy_fbox_overlap_shift. */
HY_HD void hy_fbox_shift_range(const double e[3], float e_lo[4], float e_hi[4]) {
    for (int k = 0; k < 3; k++) {
        double ae = e[k] < 0 ? -e[k] : e[k];
        e_lo[k] = hy_float_down(e[k] - (4.5e-16 * ae + 1e-300));
        e_hi[k] = hy_float_up(e[k] + (4.5e-16 * ae + 1e-300));
    }
    e_lo[3] = e_hi[3] = 0.0f;
}

HY_HD void hy_mbox_union(hy_mbox* r, const hy_mbox* a, const hy_mbox* b) {
    for (int k = 0; k < 3; k++) {
        r->lo0[k] = a->lo0[k] < b->lo0[k] ? a->lo0[k] : b->lo0[k];
        r->hi0[k] = a->hi0[k] > b->hi0[k] ? a->hi0[k] : b->hi0[k];
        r->lo1[k] = a->lo1[k] < b->lo1[k] ? a->lo1[k] : b->lo1[k];
        r->hi1[k] = a->hi1[k] > b->hi1[k] ? a->hi1[k] : b->hi1[k];
    }
}

/* The union of two single-precision boxes, selected as hy_mbox_union
 * selects (the second operand when a comparison is false, so a NaN bound
 * stays NaN when it is the second). hy_float_down and hy_float_up are
 * monotone, so the union of hy_fbox_from of two boxes is hy_fbox_from of
 * their hy_mbox_union, bound for bound: gates made from vertex boxes by
 * unions are those the double unions would give, at a fraction of the
 * work. */
#if defined(HY_BVH_SSE2)
HY_HD void hy_fbox_union(hy_fbox* r, const hy_fbox* a, const hy_fbox* b) {
    /* minps / maxps return the second operand unless the first compares
     * below (above) it: the selects above */
    _mm_storeu_ps(r->lo0, _mm_min_ps(_mm_loadu_ps(a->lo0), _mm_loadu_ps(b->lo0)));
    _mm_storeu_ps(r->hi0, _mm_max_ps(_mm_loadu_ps(a->hi0), _mm_loadu_ps(b->hi0)));
    _mm_storeu_ps(r->lo1, _mm_min_ps(_mm_loadu_ps(a->lo1), _mm_loadu_ps(b->lo1)));
    _mm_storeu_ps(r->hi1, _mm_max_ps(_mm_loadu_ps(a->hi1), _mm_loadu_ps(b->hi1)));
}
#else
HY_HD void hy_fbox_union(hy_fbox* r, const hy_fbox* a, const hy_fbox* b) {
    for (int k = 0; k < 4; k++) {
        r->lo0[k] = a->lo0[k] < b->lo0[k] ? a->lo0[k] : b->lo0[k];
        r->hi0[k] = a->hi0[k] > b->hi0[k] ? a->hi0[k] : b->hi0[k];
        r->lo1[k] = a->lo1[k] < b->lo1[k] ? a->lo1[k] : b->lo1[k];
        r->hi1[k] = a->hi1[k] > b->hi1[k] ? a->hi1[k] : b->hi1[k];
    }
}
#endif

/* The swept box of a moving box (the union of its two ends). */
HY_HD void hy_mbox_swept(const hy_mbox* a, hy_aabb* r) {
    for (int k = 0; k < 3; k++) {
        r->lo[k] = a->lo0[k] < a->lo1[k] ? a->lo0[k] : a->lo1[k];
        r->hi[k] = a->hi0[k] > a->hi1[k] ? a->hi0[k] : a->hi1[k];
    }
}

/* Half the surface area (the SAH only needs ratios). */
HY_HD double hy_aabb_half_area(const hy_aabb* a) {
    double dx = a->hi[0] - a->lo[0], dy = a->hi[1] - a->lo[1], dz = a->hi[2] - a->lo[2];
    return dx * dy + dy * dz + dz * dx;
}

/* A node: inner nodes have count == 0 and children first, first + 1 (both
 * at larger indices than the parent, so a reverse sweep is bottom-up);
 * leaves have count >= 1 triangles, bvh->order[first .. first + count). */
typedef struct hy_bvh_node {
    hy_aabb box;
    int32_t first;
    int32_t count;
} hy_bvh_node;

/* Ownership bits in hy_bvh.owned[t]: vertex k of triangle t (bit k) and edge
 * k = (t[k], t[(k+1)%3]) (bit 3 + k). */
#define HY_BVH_OWN_VERTEX(k) (1u << (k))
#define HY_BVH_OWN_EDGE(k) (1u << (3 + (k)))

/* Continuous normal cone of a node: every normal its triangles take during
 * the step lies within the half-angle whose cosine is at least c and sine
 * at most s of the unit `axis` (c <= 1e-6, near or past 90 degrees, or a
 * failed bound: the node does not cull). */
typedef struct hy_bvh_cone {
    double axis[3];
    double c, s;
    /* The smallest hy_bvh_normals.g of the node's triangles: with the
     * cone, c g bounds from below every altitude of every triangle below,
     * projected along the axis, over the whole step. */
    double g;
} hy_bvh_cone;

/* A triangle's normal over the step as the nonnegative span of three
 * coefficient directions u (unit), each known to within delta radians
 * (the largest of the three; INFINITY: too degenerate to bound). Leaf
 * cones are made from these directly. */
typedef struct hy_bvh_normals {
    double u[3][3];
    double delta;
    /* min(|c0|, |c1| / 2, |c2|) / (the longest edge at either end), the
     * c_i the normal's coefficients (the 2t(1-t) one is c1 / 2), shrunk
     * for rounding: twice the triangle's area projected on any plane
     * whose normal is within angle a of every u is at least cos(a) times
     * the min over the step, and an edge's length is at most the longest
     * at the two ends, so cos(a) g bounds each altitude from below. 0 when
     * delta is INFINITY. */
    double g;
} hy_bvh_normals;

/* What traversal reads of the triangle in leaf slot i (bvh->order[i]):
 * its vertices, the ids it emits for them, its ownership bits, and where
 * its owned features' boxes start in hy_bvh.feature_fboxes (its ne owned
 * edges in edge order k, then its nv owned vertices in vertex order k).
 * Kept in leaf order so that a leaf's triangles sit side by side. */
typedef struct hy_bvh_slot {
    int32_t v[3];
    int32_t id[3];
    int32_t feature;
    uint8_t owned;
    uint8_t nv, ne; /* owned vertices and edges */
    uint8_t vk[3];  /* their k, in order (vertex k; edge k = (v[k], v[(k+1)%3])) */
    uint8_t ek[3];
} hy_bvh_slot;

/* A node's first and count (hy_bvh_node without the box): what traversal
 * reads to descend, in a seventh of the memory. */
typedef struct hy_bvh_span {
    int32_t first, count;
} hy_bvh_span;

/* Most nodes in the serially split top of a build, and most subtrees (bvh_build.c
 * stops splitting at 64 open ranges, each split making two nodes). */
#define HY_BVH_TOP_MAX 256

typedef struct hy_bvh {
    /* topology (fixed after create) */
    int32_t vertex_count;
    int32_t triangle_count;
    int32_t* triangles; /* 3 * triangle_count, copied */
    uint8_t* owned;     /* per triangle, HY_BVH_OWN_* bits */
    int32_t* twin;      /* 3 * triangle_count: the triangle across edge k when exactly two share
                           it, running it in opposite directions; -1 on the boundary; -2 else */
    /* tree (rebuilt by hy_bvh_build) */
    hy_bvh_node* nodes;
    int32_t node_count;
    int32_t* order; /* triangle ids in leaf order */
    int leaf_size;  /* most triangles in a leaf */
    int32_t* rank;  /* per triangle: its position in order */
    int32_t* range; /* per node: [range[2n], range[2n+1]) of order */
    /* self-collision culling (per step) */
    hy_bvh_cone* cones;          /* per node */
    hy_bvh_normals* triangle_normals; /* per leaf slot (triangle order[i]) */
    uint8_t* self_free; /* per node: 1 = no self collision inside it (see below) */
    int self_cull;      /* 1 (default) = compute self_free (see below); 0 = never cull */
    /* per step */
    hy_aabb* vertex_boxes;   /* per vertex, swept */
    hy_aabb* triangle_boxes; /* per triangle id, swept */
    /* Each vertex's moving box (hy_mbox) when `interpolate` is set (the
     * default); with `interpolate` 0 both its ends are the swept box, so
     * traversal tests the swept boxes. */
    hy_mbox* vertex_mboxes;
    int interpolate;
    /* What traversal tests, per step, in single precision (hy_fbox): each
     * vertex's box (hy_fbox_from of its hy_mbox, in vertex_fboxes; the
     * traversal reads the owned ones' copies in feature_fboxes); in leaf
     * order (slot i = order[i]) each triangle's box and each owned edge's,
     * unions of its vertices' (hy_fbox_union, computed once per step
     * instead of once per triangle pair); each node's, the union of its
     * children's (or of its leaf's triangles'). By the monotone rounding
     * these are hy_fbox_from of the double unions. slots is rebuilt with
     * the tree; node_area is each node's box half area (which side a pair
     * descends). */
    hy_bvh_slot* slots;
    /* Per slot and edge k, made with the tree: the slot of the triangle
     * across the edge (twin's rank), or twin's -1 / -2 (the contour test
     * of self culling reads it in leaf order). */
    int32_t* slot_twin;
    hy_fbox* vertex_fboxes;
    hy_fbox* leaf_fboxes;
    /* leaf_fboxes again by coordinate, for the CPU's eight-wide gate of
     * triangle pairs (collision/traverse_hd.h): row r (0-2 lo0, 3-5 hi0,
     * 6-8 lo1, 9-11 hi1, x y z each) holds that bound of every slot at
     * leaf_soa[r * leaf_soa_stride + slot]; the stride leaves 8 zero
     * floats past the last slot, so eight lanes from any slot can be read. */
    float* leaf_soa;
    int64_t leaf_soa_stride;
    /* Per slot, in leaf order, the gate boxes of its owned features: ne
     * edges (unions of their ends') then nv vertices (copies of
     * vertex_fboxes), from slot.feature on; feature_count in all (every
     * owned edge and vertex, fixed with the topology). A triangle pair
     * reads the features of B's triangle next to each other instead of
     * the vertex boxes scattered in mesh order. */
    hy_fbox* feature_fboxes;
    int32_t feature_count;
    hy_fbox* node_fboxes;
    double* node_area;
    hy_bvh_span* spans; /* per node, made with the tree */
    /* The build's split into a top (nodes [0, top_count)) and subtrees
     * built apart: sub[3s] its root (a top index), [sub[3s+1], sub[3s+2])
     * its other nodes; sweeps run them in parallel. top_root marks the
     * subtree roots among the top nodes. */
    int32_t top_count, sub_count;
    int32_t sub[3 * HY_BVH_TOP_MAX];
    double sub_cost[HY_BVH_TOP_MAX];
    uint8_t top_root[HY_BVH_TOP_MAX];
    double thickness;
    /* Moving frame (off unless `relative` is set before the build): boxes
     * hold x0 and x1 - shift, i.e. the motion seen from a frame that moves
     * by t * shift, where shift is the mid-range of the vertex
     * displacements. Contact within one mesh does not change when every
     * point gets the same extra motion, so self traversal can use these
     * boxes as they are: a mesh that only translates has boxes as small as
     * its deformation, however far it moves. Pair traversal adds the
     * difference of the two shifts back (hy_bvh_traverse_pair);
     * hy_bvh_world_box gives the box in the fixed frame. */
    int relative;
    double shift[3];
    int32_t* vertex_ids; /* NULL, or per vertex the id traversal emits */
    double built_cost; /* SAH cost right after the last build */
    double cost;       /* SAH cost after the last build or refit */
    int64_t builds, refits;
    /* A new number, unique in the process, at every change of the tree's
     * data (create, build, refit, vertex ids): a copy on a device is current
     * while its number matches (collision/traverse.cu keeps uploaded trees so). */
    uint64_t version;
    /* For hy_bvh_refit_vertices (made when first needed; NULL until then):
     * each vertex's triangles (vertex_tri[vertex_tri_start[v] ..
     * vertex_tri_start[v + 1]]), each node's parent and each slot's leaf
     * (for the tree of build number partial_builds), each node's last
     * self-culling test (cull_test: 0 not made since its triangles last
     * moved, 1 passed, 2 failed; written by every marking once it
     * exists), and scratch marks. */
    int32_t *vertex_tri_start, *vertex_tri;
    int32_t *node_parent, *slot_leaf;
    int64_t partial_builds;
    uint8_t* cull_test;
    int refitted; /* 1 when the last update was a refit (not a build) */
    uint8_t *node_dirty, *tri_dirty;
    int32_t *dirty_nodes, *dirty_tris;
    /* Which nodes the last changes moved: every change but a partial
     * refit moves them all (all_at = its version); a partial refit writes
     * its version into node_moved of the nodes above its triangles
     * (node_moved is made with the scratch above). A node moved in change
     * V when all_at == V or node_moved[node] == V. */
    uint64_t all_at;
    uint64_t* node_moved;
    /* Set by the caller before a traversal that visits only node pairs
     * with a moved node (hy_traverse_only_moved): the version whose moved
     * nodes count, 0 when none of this tree's do. */
    uint64_t trav_moved;
} hy_bvh;

/* Self-collision culling (on by default; self_cull = 0 turns it off). The
 * theorem (Volino & Magnenat-Thalmann 1994): a patch whose normals all
 * lie within less than 90 degrees of one direction V, and whose boundary,
 * projected along V, is one simple closed curve, projects one to one, so
 * it cannot touch itself. The highest nodes of the tree whose triangles
 * pass both tests over the whole step get self_free = 1 and no self test
 * (the nodes below them are neither tested nor marked).
 *  - Normals: a triangle's normal under linear motion is a quadratic in t
 *    whose three Bernstein coefficient vectors span a cone containing it
 *    (Tang et al. 2009); a leaf's cone holds all its triangles'
 *    coefficient directions, inner node cones bound their children's.
 *  - Contour: the node's boundary half-edges (an edge is interior when
 *    both its triangles are in the node, which needs them to run it in
 *    opposite directions: see twin) must keep one moving point strictly on
 *    their left over the whole step, in a plane across the cone's axis,
 *    and a half-ray from that point must cross the contour once: a
 *    star-shaped curve (after Schvartzman et al. 2010, "Star-contours for
 *    efficient hierarchical self-collision detection"). Each edge's
 *    orientation is a quadratic in t, judged by its Bernstein coefficients
 *    against a rounding bound.
 *  - With a thickness d > 0 (contacts are pairs that come within d), two
 *    more tests, both in the projection along the cone's axis, where
 *    distances are at most the true ones. Altitudes: every triangle's
 *    projected altitudes stay above d (the cone's c times its g, see
 *    hy_bvh_normals.g). Clearance: every contour vertex stays more than
 *    d from every contour edge it is not on (separated along one of a few
 *    directions in the plane over the whole step; contours longer than
 *    256 edges are left to the children). Then no two features of the
 *    patch that share no vertex come within d: the projection is one to
 *    one, so the projected segment from a vertex v to the nearest point
 *    of a triangle not on v either leaves v's triangles across an edge
 *    opposite v (longer than an altitude) or leaves the patch at v and
 *    re-enters it across a contour edge not on v (longer than the
 *    clearance); two edges' nearest points include an end of one, whose
 *    distance to the other edge is at least its distance to a triangle of
 *    that edge, or an altitude of it. A flat fan of fat triangles with a
 *    narrow notch between its first and last spokes passes the first
 *    three tests and only the clearance keeps its notch's contacts
 *    (tests/test_bvh_cull.c).
 * The contour test is not optional: in the shared cloth-ball frames an open
 * fan of four triangles around vertex 34876 has a 58-degree cone, yet its
 * end spoke (10439, 34876) crosses its rim edge (10436, 34877) during the
 * step; a cull on the cone and edge-connectivity alone (what this library
 * did before, like many cloth codes) drops that collision whenever the
 * tree puts the four in one leaf. Its contour is not star-shaped around
 * its mean point (one half-edge has that point on its right already at
 * t = 0), so it is kept (tests/test_ccd_frames.c; tests/test_bvh_cull.c has a helical strip and
 * two stacked squares with narrow cones that collide). Marks are made top
 * down after each build and refit; they depend on positions and topology
 * only, not on the pool. */

/* Copy the topology and work out feature ownership. Triangles must index
 * [0, vertex_count) without repeating a vertex (HY_ERR_INVALID_ARG naming
 * the triangle otherwise). The tree is empty until hy_bvh_build. */
hy_status hy_bvh_create(const int32_t* triangles, int32_t triangle_count, int32_t vertex_count, hy_bvh** out);
void hy_bvh_destroy(hy_bvh* bvh);

/* Boxes from positions x0 (t=0) and x1 (t=1; NULL = not moving), each
 * 3 * vertex_count doubles, then a full top-down binned-SAH build.
 * thickness >= 0 (contact distance). */
hy_status hy_bvh_build(hy_bvh* bvh, const double* x0, const double* x1, double thickness, hy_pool* pool);

/* New boxes for the same tree: primitives first, then nodes bottom-up.
 * Requires a previous build. Updates bvh->cost. */
void hy_bvh_refit(hy_bvh* bvh, const double* x0, const double* x1, double thickness, hy_pool* pool);
/* hy_bvh_refit for positions that differ from those of the last build or
 * refit only in x1 of the `count` vertices listed in `moved` (the same x0,
 * thickness and every other vertex's x1; a detection round after the
 * response moved a few vertices): only those vertices' boxes, their
 * triangles' leaf data and the nodes above them are made again, and the
 * self-culling tests of the nodes whose triangles did not change are
 * reused. Every box, cone, mark and the cost come out bit for bit as
 * hy_bvh_refit makes them (tests/test_bvh.c). Falls back to
 * hy_bvh_refit right after a build (whose node boxes are not a refit's),
 * in a moving frame (relative) or out of memory. */
void hy_bvh_refit_vertices(hy_bvh* bvh, const double* x0, const double* x1, double thickness, const int32_t* moved,
                           int32_t count, hy_pool* pool);
/* Build `bvh` with the tree of `like`, an instance of the same mesh (the
 * same vertex count and the same triangles, HY_ERR_INVALID_ARG otherwise)
 * that is built: its node hierarchy and leaf order are copied, and
 * everything that depends on positions is made from x0, x1 as a refit
 * would, so the tree is exact for these positions whatever they are; it is
 * as good as a build of its own only where the two meshes have nearly the
 * same shape up to translation and scale (many copies of one body). Costs
 * about a refit. Counts as a build (builds, built_cost). */
hy_status hy_bvh_build_like(hy_bvh* bvh, const hy_bvh* like, const double* x0, const double* x1, double thickness,
                            hy_pool* pool);

/* Ids that traversal emits for this mesh's vertices (copied; NULL resets
 * to the local indices). Lets meshes cut from one larger mesh report pairs
 * in its numbering. */
hy_status hy_bvh_set_vertex_ids(hy_bvh* bvh, const int32_t* ids);

/* The root's swept box in the fixed frame (the relative box grown by the
 * shift; rounded outward). */
void hy_bvh_world_box(const hy_bvh* bvh, hy_aabb* out);

/* a with its t=1 box moved by e, rounded outward like hy_aabb_sweep: the
 * moving box seen from a frame that moves by -t * e. */
HY_HD void hy_mbox_shift(const hy_mbox* a, const double e[3], hy_mbox* r) {
    for (int k = 0; k < 3; k++) {
        double ae = e[k] < 0 ? -e[k] : e[k];
        double al = a->lo1[k] < 0 ? -a->lo1[k] : a->lo1[k];
        double ah = a->hi1[k] < 0 ? -a->hi1[k] : a->hi1[k];
        r->lo0[k] = a->lo0[k];
        r->hi0[k] = a->hi0[k];
        r->lo1[k] = (a->lo1[k] + e[k]) - (4.5e-16 * (al + ae) + 1e-300);
        r->hi1[k] = (a->hi1[k] + e[k]) + (4.5e-16 * (ah + ae) + 1e-300);
    }
}

/* a grown by the motion t * e, t in [0, 1], rounded outward (e is itself a
 * rounded difference of two shifts: the pad covers that as well). */
HY_HD void hy_aabb_sweep(const hy_aabb* a, const double e[3], hy_aabb* r) {
    for (int k = 0; k < 3; k++) {
        double lo = a->lo[k] + (e[k] < 0 ? e[k] : 0.0);
        double hi = a->hi[k] + (e[k] > 0 ? e[k] : 0.0);
        double ae = e[k] < 0 ? -e[k] : e[k];
        double al = a->lo[k] < 0 ? -a->lo[k] : a->lo[k];
        double ah = a->hi[k] < 0 ? -a->hi[k] : a->hi[k];
        /* two roundings of at most eps/2 (|a| + |e|) each, plus e's own */
        r->lo[k] = lo - (4.5e-16 * (al + ae) + 1e-300);
        r->hi[k] = hi + (4.5e-16 * (ah + ae) + 1e-300);
    }
}

/* Refit-time decay: SAH cost now over SAH cost right after the build (1 for
 * a fresh tree; grows as refitted boxes swell and overlap). */
double hy_bvh_quality(const hy_bvh* bvh);

/* Refit, or build when there is no tree yet or the refitted tree's quality
 * exceeds max_decay (> 1; 1.5 to 3 is typical). *rebuilt (may be NULL) says
 * which happened. */
hy_status hy_bvh_update(hy_bvh* bvh, const double* x0, const double* x1, double thickness, double max_decay,
                        hy_pool* pool, int* rebuilt);

/* Structure check for tests: every triangle in exactly one leaf, children
 * after parents, each box contains its children / triangles. Returns 1 if
 * sound; else 0 with hy_last_error() naming the first bad node. */
int hy_bvh_check(const hy_bvh* bvh);

#endif
