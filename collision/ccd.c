/* Elementary continuous collision tests: input checks, exact scaling and the
 * swept-AABB early-out here; the conservative box search lives in
 * collision/ccd_math.h so a CUDA twin can share it. */
#include "collision/ccd.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "collision/ccd_math.h"

/* Acceptance at 2x the rounding bound: near misses closer than that are
 * beyond what double arithmetic can separate anyway (docs/CCD.md). */
#define ACCEPT_FACTOR 2.0
#define TWIST_REL 1e-9
#define TOI_BITS 16
/* Second pass (long double): work cap and twist tolerance. */
#define REFINE_BOXES 64
#define REFINE_TWIST 1e-10
/* Boxes kept per thread; larger caps allocate. */
#define HEAP_LOCAL 1100

hy_ccd_options hy_ccd_options_default(void) {
    hy_ccd_options o;
    o.max_boxes = HY_CCD_DEFAULT_MAX_BOXES;
    o.accept_factor = ACCEPT_FACTOR;
    o.twist_rel = TWIST_REL;
    o.toi_bits = TOI_BITS;
    o.refine_boxes = REFINE_BOXES;
    o.refine_twist_rel = REFINE_TWIST;
    o.min_distance_slack = 0.0;
    return o;
}

hy_ccd_options hy_ccd_options_step(void) {
    hy_ccd_options o = hy_ccd_options_default();
    o.max_boxes = 256;
    o.toi_bits = 8;
    o.twist_rel = 1e-7;
    o.refine_boxes = 0;
    o.min_distance_slack = 0.5;
    return o;
}

int hy_ccd_query(int is_vf, const double x[8][3], double min_distance, const hy_ccd_options* opts, double* toi,
                 hy_ccd_info* info) {
    hy_ccd_options o = opts ? *opts : hy_ccd_options_default();
    hy_ccd_info local = {0, 0, 0};
    hy_ccd_info* inf = info ? info : &local;
    inf->boxes = 0;
    inf->refine_boxes = 0;
    inf->capped = 0;
    double t_dummy;
    double* t_out = toi ? toi : &t_dummy;
    if (o.accept_factor < 1.0 || !(o.accept_factor == o.accept_factor)) o.accept_factor = 1.0;
    if (o.max_boxes < 1) o.max_boxes = 1;
    if (!(o.twist_rel >= 0.0)) o.twist_rel = 0.0;
    if (o.refine_boxes < 0) o.refine_boxes = 0;
    if (!(o.refine_twist_rel >= 0.0)) o.refine_twist_rel = 0.0;
    if (o.toi_bits < 0) o.toi_bits = 0;
    if (!(o.min_distance_slack >= 0.0) || o.min_distance_slack > 1e6) o.min_distance_slack = 0.0;
    if (o.toi_bits > HY_CCD_MAX_LEVEL) o.toi_bits = HY_CCD_MAX_LEVEL;

    /* Non-finite input cannot be reasoned about: answer "collision" at t=0,
     * the conservative choice. A negative or NaN distance means touching. */
    double md = min_distance > 0.0 ? min_distance : 0.0;
    double m = 0.0;
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++) {
            if (!isfinite(x[i][k])) {
                *t_out = 0.0;
                return 1;
            }
            m = fmax(m, fabs(x[i][k]));
        }
    if (!isfinite(md) || md >= 4.0 * m) {
        /* Every pair of points is within 2 sqrt(3) m < 4 m of each other. */
        *t_out = 0.0;
        return 1;
    }

    /* Scale by a power of two (exact up to underflow of coordinates below
     * 2^-800 of the largest, covered by DBL_MIN in the bound) so that the
     * cubic terms of the separating tests neither overflow nor underflow. */
    double scale = 1.0;
    if (m > 0.0 && (m > 0x1p200 || m < 0x1p-200)) {
        int e;
        frexp(m, &e);
        scale = ldexp(1.0, -e);
    }
    double y[8][3];
    const double* p[8];
    for (int i = 0; i < 8; i++) {
        for (int k = 0; k < 3; k++) y[i][k] = x[i][k] * scale;
        p[i] = y[i];
    }
    md *= scale;

    /* Swept AABB early-out (exact comparisons). Vertex-face: the vertex's
     * two positions against the triangle's six; edge-edge: four against
     * four. */
    const double* sa[4];
    const double* sb[6];
    int na, nb;
    if (is_vf) {
        sa[0] = p[0];
        sa[1] = p[4];
        na = 2;
        sb[0] = p[1];
        sb[1] = p[2];
        sb[2] = p[3];
        sb[3] = p[5];
        sb[4] = p[6];
        sb[5] = p[7];
        nb = 6;
    } else {
        sa[0] = p[0];
        sa[1] = p[1];
        sa[2] = p[4];
        sa[3] = p[5];
        na = 4;
        sb[0] = p[2];
        sb[1] = p[3];
        sb[2] = p[6];
        sb[3] = p[7];
        nb = 4;
    }
    if (hy_ccd_aabb_apart(sa, na, sb, nb, md)) return 0;

    /* The second pass resumes from the first pass's pending boxes. */
    int refine = HY_CCD_HAVE_LD && o.refine_boxes > 0;
    size_t heap_size = (size_t)o.max_boxes + 2 + (refine ? (size_t)o.refine_boxes : 0);
    /* Per-thread scratch: no allocation, and no large stack frame for the
     * many queries the early-out settles. */
    static _Thread_local hy_ccd_box local_heap[HEAP_LOCAL];
    hy_ccd_box* heap = local_heap;
    if (heap_size > HEAP_LOCAL) {
        heap = malloc(sizeof *heap * heap_size);
        if (!heap) { /* no room to search: the conservative answer */
            *t_out = 0.0;
            return 1;
        }
    }
    hy_ccd_problem_d pr;
    hy_ccd_problem_init_d(&pr, p, is_vf, md, o.accept_factor, o.twist_rel, o.toi_bits, o.min_distance_slack);
    hy_ccd_stats st = {0, 0, 0, 0};
    int hit = hy_ccd_search_d(&pr, heap, o.max_boxes, t_out, &st);
    inf->boxes = st.boxes;
    inf->capped = st.capped;
#if HY_CCD_HAVE_LD
    /* Re-check a reported contact with 11 more bits and a finer twist
     * tolerance, resuming from the boxes double could not exclude (what it
     * excluded stays excluded). Most near misses below double resolution are
     * separated here; true contacts are accepted again after a few more
     * bisections. Its own cap keeps the cost bounded: past it the answer
     * stays "collision". */
    if (hit && refine && !st.robust && !st.capped) {
        hy_ccd_problem_ld prl;
        hy_ccd_problem_init_ld(&prl, p, is_vf, md, o.accept_factor, o.refine_twist_rel, 0, o.min_distance_slack);
        hy_ccd_stats stl = st;
        double toi_l = *t_out;
        hit = hy_ccd_search_ld(&prl, heap, o.refine_boxes, &toi_l, &stl);
        inf->boxes += stl.boxes;
        inf->refine_boxes = stl.boxes;
        inf->capped = stl.capped;
        /* Every pending box starts no earlier than toi_l, and excluded ones
         * hold no contact, so the later time is still safe. */
        if (hit && toi_l > *t_out) *t_out = toi_l;
    }
#endif
    if (heap != local_heap) free(heap);
    return hit;
}

int hy_ccd_vf(const double p0[3], const double a0[3], const double b0[3], const double c0[3], const double p1[3],
              const double a1[3], const double b1[3], const double c1[3], double min_distance, double* toi) {
    const double* src[8] = {p0, a0, b0, c0, p1, a1, b1, c1};
    double x[8][3];
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++) x[i][k] = src[i][k];
    return hy_ccd_query(1, x, min_distance, NULL, toi, NULL);
}

int hy_ccd_ee(const double a0[3], const double b0[3], const double c0[3], const double d0[3], const double a1[3],
              const double b1[3], const double c1[3], const double d1[3], double min_distance, double* toi) {
    const double* src[8] = {a0, b0, c0, d0, a1, b1, c1, d1};
    double x[8][3];
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++) x[i][k] = src[i][k];
    return hy_ccd_query(0, x, min_distance, NULL, toi, NULL);
}
