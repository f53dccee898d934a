/* Elementary continuous collision tests: options and the exported entry
 * points here; the query itself (input checks, exact scaling, early-outs,
 * time slabs) is HY_HD code in collision/ccd_query.h and the box search in
 * collision/ccd_math.h, shared with the CUDA LEAF kernel
 * (collision/leaf.h). */
#include "collision/ccd.h"

#include <float.h>
#include <math.h>
#include <stddef.h>
#include <stdlib.h>

#include "collision/ccd_math.h"
#include "collision/ccd_query.h"

/* Acceptance at 2x the rounding bound: near misses closer than that are
 * beyond what double arithmetic can separate anyway (docs/design/CCD.md). */
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
    o.need_toi = 1;
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
    hy_ccd_options_clamp(&o);
    hy_ccd_info local = {0, 0, 0};
    hy_ccd_info* inf = info ? info : &local;
    double t_dummy;
    double* t_out = toi ? toi : &t_dummy;
    /* Per-thread scratch: no allocation, and no large stack frame for the
     * many queries the early-outs settle. Larger caps allocate, once the
     * early-outs have not decided (a failed allocation gives the
     * conservative answer: the core is handed no heap). */
    static _Thread_local hy_ccd_box local_heap[HEAP_LOCAL];
    int hit = hy_ccd_query_core(is_vf, x, min_distance, &o, t_out, inf, local_heap, HEAP_LOCAL);
    if (hit == HY_CCD_NEED_HEAP) {
        hy_ccd_box* heap = malloc(sizeof *heap * hy_ccd_heap_boxes(&o));
        hit = hy_ccd_query_core(is_vf, x, min_distance, &o, t_out, inf, heap, heap ? hy_ccd_heap_boxes(&o) : 0);
        free(heap);
    }
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
