/* One LEAF job of the proximity pipeline: the exact test of one candidate
 * feature pair, as the simulation step runs it (separating axes first, then
 * the conservative CCD query). HY_HD, so the CPU step and the CUDA LEAF
 * kernel (collision/leaf.cu) evaluate a job with the same arithmetic; with no
 * floating-point contraction on either side (-ffp-contract=off, nvcc
 * --fmad=false) both give bit-identical contacts and times of impact.
 *
 * The device side has no long double and no malloc: it searches with a
 * fixed heap of HY_LEAF_HEAP_BOXES boxes and never runs the long double
 * re-check. It therefore matches the CPU only for options with
 * refine_boxes == 0 and max_boxes <= HY_LEAF_MAX_BOXES (after
 * hy_ccd_options_clamp), which hy_ccd_options_step() satisfies;
 * hy_cuda_leaf_batch (collision/kernels.h) rejects any other options. */
#ifndef HY_COLLISION_LEAF_H
#define HY_COLLISION_LEAF_H

#include "collision/ccd.h"
#include "collision/ccd_math.h"
#include "collision/ccd_query.h"
#include "collision/filter.h"
#include "collision/filter_sat.h"
#include "core/hd.h"

/* Device work cap: the step's 256 boxes. The heap (56 bytes a box) is
 * per-thread local memory, so it is kept no larger than the step needs. */
#define HY_LEAF_MAX_BOXES 256
#define HY_LEAF_HEAP_BOXES (HY_LEAF_MAX_BOXES + 2)

/* 1 when options (as given, before clamping) evaluate on the device exactly
 * as on the CPU: no long double re-check, and a work cap the device heap
 * holds. */
HY_HD int hy_leaf_options_device_ok(const hy_ccd_options* opts) {
    hy_ccd_options o = *opts;
    hy_ccd_options_clamp(&o);
    return o.refine_boxes == 0 && o.max_boxes <= HY_LEAF_MAX_BOXES;
}

/* hy_leaf_eval with the search heap supplied by the caller (heap_cap
 * boxes): what the device runs, callable on the host too so CPU-only tests
 * can check it. opts must not be NULL. With a heap too small for the
 * options (see hy_leaf_options_device_ok) the answer is the conservative
 * "contact at t = 0". */
HY_HD int hy_leaf_eval_heap(int is_vf, const double x[8][3], double min_distance, const hy_ccd_options* opts,
                            double* toi, hy_ccd_box* heap, size_t heap_cap) {
    const double* a[4] = {x[0], x[1], x[2], x[3]};
    const double* b[4] = {x[4], x[5], x[6], x[7]};
    double t = 1.0;
    /* separating axes first (conservative; valid with a thickness) */
    int exact = hy_filter_sat_core(is_vf, a, b, min_distance);
    int hit = 0;
    if (exact) {
        hy_ccd_options o = *opts;
        hy_ccd_options_clamp(&o);
        hy_ccd_info inf;
        hit = hy_ccd_query_core(is_vf, x, min_distance, &o, &t, &inf, heap, heap_cap);
        if (hit == HY_CCD_NEED_HEAP) {
            hit = 1;
            t = 0.0;
        }
    }
    if (toi) *toi = t;
    return hit | exact << 1;
}

/* Evaluate one LEAF job: x[0..3] at t = 0 and x[4..7] at t = 1 in
 * collision/ccd.h order (is_vf: p, a, b, c; else a, b, c, d), thickness
 * min_distance, CCD options opts (not NULL). Returns bit 0: contact, bit 1:
 * the exact test ran (the separating-axes filter did not cull the pair).
 * *toi (may be NULL) gets the time of impact of a contact, 1.0 otherwise.
 * On the host this is hy_filter_sat then hy_ccd_query, exactly; on the
 * device see the header comment for the options it requires. */
HY_HD int hy_leaf_eval(int is_vf, const double x[8][3], double min_distance, const hy_ccd_options* opts,
                       double* toi) {
#ifdef __CUDA_ARCH__
    hy_ccd_box heap[HY_LEAF_HEAP_BOXES];
    return hy_leaf_eval_heap(is_vf, x, min_distance, opts, toi, heap, HY_LEAF_HEAP_BOXES);
#else
    const double* a[4] = {x[0], x[1], x[2], x[3]};
    const double* b[4] = {x[4], x[5], x[6], x[7]};
    double t = 1.0;
    int exact = hy_filter_sat_core(is_vf, a, b, min_distance);
    int hit = exact && hy_ccd_query(is_vf, x, min_distance, opts, &t, NULL);
    if (toi) *toi = t;
    return hit | exact << 1;
#endif
}

/* A LEAF job by reference, for a device that holds the step's positions
 * (collision/kernels.h, hy_cuda_leaf_resident): its four vertices as
 * indices into X0 (t = 0) and X1 (t = 1), three doubles a vertex, in
 * collision/ccd.h order; is_vf and the thickness as hy_leaf_eval takes
 * them. 32 bytes, against a gathered job's 208. */
typedef struct hy_leaf_ref {
    int32_t v[4];
    int32_t is_vf;
    int32_t pad; /* keeps the size a multiple of 8; ignored */
    double min_distance;
} hy_leaf_ref;

/* hy_leaf_eval of the job r refers to, its points read from X0 and X1 as
 * the host gathers them: the same bits as hy_leaf_eval on the gathered
 * job. */
HY_HD int hy_leaf_eval_ref(const hy_leaf_ref* r, const double* X0, const double* X1, const hy_ccd_options* opts,
                           double* toi) {
    double x[8][3];
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 3; k++) {
            x[j][k] = X0[3 * (int64_t)r->v[j] + k];
            x[4 + j][k] = X1[3 * (int64_t)r->v[j] + k];
        }
    return hy_leaf_eval(r->is_vf, (const double(*)[3])x, r->min_distance, opts, toi);
}

#endif
