/* The collision jobs on a GPU: the LEAF kernel (collision/leaf.cu, the twin
 * of hy_leaf_eval in collision/leaf.h) and the TRAVERSE kernel
 * (collision/traverse.cu, the twin of the host traversal in
 * collision/traverse.c, sharing collision/traverse_hd.h). The framework
 * (sched/) runs them through the jobs collision registers for its cuda
 * backend (collision/collide.c).
 *
 * Two implementations behind this header: the .cu files (built by nvcc when
 * CMake finds a CUDA compiler and HY_CUDA is on) and
 * collision/kernels_stub.c (otherwise, and in sanitizer builds), whose
 * batches are refused with HY_ERR_UNSUPPORTED so the caller keeps the work
 * on the CPU. Which GPUs exist is the cuda backend's (sched/cuda.h).
 *
 * Exactness: the LEAF kernel evaluates hy_leaf_eval, the function the CPU
 * step uses, compiled without floating-point contraction (--fmad=false), so
 * a job's contact bit and time of impact are bit-identical to the CPU's.
 * The TRAVERSE kernel runs hy_trav_run_pair, the CPU's traversal of a
 * front pair, so its feature pairs and their order are the CPU's.
 *
 * Threads: every function may be called from any thread; the batches of
 * one kind on one device are serialised (one lock per device and file). */
#ifndef HY_COLLISION_KERNELS_H
#define HY_COLLISION_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#include "collision/ccd.h"
#include "collision/leaf.h"
#include "collision/leaf_resident.h"
#include "collision/traverse.h"
#include "collision/traverse_hd.h"
#include "hyphys/hyphys.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One LEAF job: x[0..3] at t = 0 and x[4..7] at t = 1 in collision/ccd.h
 * order (is_vf: p, a, b, c; else a, b, c, d), thickness min_distance.
 * 208 bytes, the layout the device reads. */
typedef struct hy_leaf_job {
    double x[8][3];
    double min_distance;
    int32_t is_vf;
    int32_t pad; /* keeps the size a multiple of 8; ignored */
} hy_leaf_job;

/* Evaluate n LEAF jobs on GPU `device` (upload, kernel launches, download;
 * blocking). hit[i] gets hy_leaf_eval's bits (bit 0: contact, bit 1: the
 * exact test ran) and toi[i] its time of impact, exactly as hy_leaf_eval
 * gives them on the CPU. opts: the CCD options (not NULL); the device
 * requires refine_boxes == 0 and max_boxes <= HY_LEAF_MAX_BOXES
 * (collision/leaf.h; hy_ccd_options_step() qualifies), otherwise
 * HY_ERR_UNSUPPORTED. seconds_transfer (host<->device copies) and
 * seconds_kernel (the launches) may be NULL; they are set, not added to.
 * Device buffers are kept between calls and grow as needed.
 * Statuses: HY_ERR_INVALID_ARG (bad device, NULL arrays with n > 0,
 * n < 0), HY_ERR_UNSUPPORTED (no CUDA in this build, or the options above),
 * HY_ERR_NOMEM (device memory), HY_ERR_INTERNAL (any other CUDA error; the
 * message names the call and the CUDA error). n == 0 is HY_OK. */
hy_status hy_cuda_leaf_batch(int device, const hy_leaf_job* jobs, int64_t n, const hy_ccd_options* opts,
                             unsigned char* hit, double* toi, double* seconds_transfer, double* seconds_kernel);

/* Run TRAVERSE jobs on GPU `device`: front pairs ids[0..n) of the staged
 * traversal t (after hy_traverse_begin; collision/traverse.h), as
 * hy_traverse_run would on the host: afterwards hy_traverse_output and
 * hy_traverse_counts read the same feature pairs, in the same order, and
 * the same counters. Blocking: uploads the trees the traversal's jobs read
 * (nodes, gate boxes, per-slot leaf data, vertex and edge boxes) that
 * changed since they last went up (hy_bvh.version; the device keeps them
 * between calls, and the batches of one staged traversal after the first
 * send nothing but their pairs; counted as transfer time), splits the pairs breadth first into some 10^5
 * smaller pairs (collision/traverse.cu), counts each one's output, scans the
 * counts, writes the pairs, downloads them. seconds_transfer and
 * seconds_kernel as for hy_cuda_leaf_batch. Device buffers are kept
 * between calls and grow as needed.
 * Statuses: HY_ERR_INVALID_ARG (bad device, NULL t or ids with n > 0, ids
 * out of range), HY_ERR_UNSUPPORTED (no CUDA in this build, or a pair
 * whose descent is deeper than the kernel's fixed stack: run it on the
 * host), HY_ERR_NOMEM, HY_ERR_INTERNAL (other CUDA errors, named). On any
 * error t's outputs for ids are unchanged (not accepted). n == 0 is
 * HY_OK. */
hy_status hy_cuda_traverse_batch(int device, hy_traverser* t, const int64_t* ids, int64_t n, double* seconds_transfer,
                                 double* seconds_kernel);

/* LEAF jobs by reference (collision/leaf.h, hy_leaf_ref) on GPU `device`,
 * against the step's positions kept on the device: X0 and X1 (3·nv doubles
 * each) go up only when `version` differs from the version the device
 * holds (the caller's valid bit: a number unique in the process for each
 * set of positions; 0 forces the upload), then the n references go up and
 * the answers come down: hit[i], toi[i] exactly as hy_leaf_eval_ref gives
 * them on the CPU. *bytes_up / *bytes_down (may be NULL) get what moved
 * each way; seconds_transfer as for hy_cuda_leaf_batch. Safe on a GPU's
 * feeding thread: it reads its arguments only. Statuses as
 * hy_cuda_leaf_batch (and HY_ERR_INVALID_ARG for nv < 0, NULL positions
 * with n > 0, or a reference outside [0, nv)). */
hy_status hy_cuda_leaf_resident(int device, uint64_t version, const double* X0, const double* X1, int32_t nv,
                                const hy_leaf_ref* refs, int64_t n, const hy_ccd_options* opts, unsigned char* hit,
                                double* toi, double* seconds_transfer, int64_t* bytes_up, int64_t* bytes_down);

/* hy_cuda_traverse_batch without its last step: the outputs are not taken
 * into t but handed back, for the caller to pass to hy_traverse_accept
 * (collision/traverse_hd.h) on its own thread: the batch reads t's staged
 * traversal only (its jobs, contexts, front and trees), so it may run on a
 * GPU's feeding thread while the host runs other front pairs of t
 * (sched/backend.h, hy_job_kind_ops.device). On HY_OK: offsets (n + 1
 * entries) and pairs as hy_traverse_accept reads them (both the caller's
 * to free with free()), the counters, and the bytes the batch
 * copied each way (trees that changed, contexts, start pairs up; offsets,
 * counters and feature pairs down). Statuses as hy_cuda_traverse_batch. */
typedef struct hy_cuda_traversed {
    int64_t* offsets;
    hy_feature_pair* pairs;
    hy_trav_counts counts;
    int64_t bytes_up, bytes_down;
} hy_cuda_traversed;
hy_status hy_cuda_traverse_device(int device, const hy_traverser* t, const int64_t* ids, int64_t n,
                                  hy_cuda_traversed* out, double* seconds_transfer, double* seconds_kernel);

/* TRAVERSE jobs whose LEAF jobs stay on the device
 * (collision/leaf_resident.h): front pairs ids[0..n) of the staged
 * traversal t run as by hy_cuda_traverse_device, but their candidates are
 * not downloaded: each becomes a LEAF job by reference there (distance
 * md[i] for the candidates of ids[i]) against the positions X0, X1 (nv
 * vertices) the device holds, sent only when `version` differs from the
 * device's copy (as hy_cuda_leaf_resident), and only the contacts and the
 * per front pair counts come down into *out (the caller's to free with
 * hy_leaf_contacts_free): the same as hy_leaf_resident_run gives on the
 * host from the same candidates. opts as for hy_cuda_leaf_batch. Safe on
 * a GPU's feeding thread (reads t's staged traversal only). Statuses as
 * hy_cuda_traverse_device and hy_cuda_leaf_resident; on any error *out is
 * empty. */
hy_status hy_cuda_traverse_leaf(int device, const hy_traverser* t, const int64_t* ids, int64_t n, const double* md,
                                uint64_t version, const double* X0, const double* X1, int32_t nv,
                                const hy_ccd_options* opts, hy_leaf_contacts* out, double* seconds_transfer,
                                double* seconds_kernel);

#ifdef __cplusplus
}
#endif

#endif
