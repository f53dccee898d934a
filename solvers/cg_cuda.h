/* A lockstep batch of CG solves with their vectors on a CUDA GPU
 * (solvers/cg.cu): the operations of solvers/cg_hd.h (hy_cg_hd_batch_*)
 * as kernels, each chunk's sum by one warp's shuffles in core/sum_hd.h's
 * order and each solve's chunk sums by one block's halving tree, so every
 * scalar has the bits of the host's CG. Only the live marks and the
 * solves' scalars go up, and their sums come down, per operation. Driven
 * by solvers/cg_batch.c, which runs the same operations on the host for
 * device -1; without CUDA in the build solvers/cg_cuda_stub.c answers
 * HY_ERR_UNSUPPORTED. Used by one thread at a time. */
#ifndef HY_SOLVERS_CG_CUDA_H
#define HY_SOLVERS_CG_CUDA_H

#include "hyphys/hyphys.h"
#include "solvers/cg_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hy_cg_gpu hy_cg_gpu;

/* A context on GPU `device` (its vectors allocated by hy_cg_gpu_load).
 * HY_ERR_UNSUPPORTED (no CUDA, no such GPU), HY_ERR_NOMEM. */
hy_status hy_cg_gpu_create(int device, hy_cg_gpu** out);
void hy_cg_gpu_destroy(hy_cg_gpu* g);
/* nb solves laid out by n_start and c_start (nb + 1 each, cg_hd.h): the
 * offsets, b, x and the preconditioner's blocks (9 per vertex) up; the
 * bytes sent added to *bytes. */
hy_status hy_cg_gpu_load(hy_cg_gpu* g, int32_t nb, const int64_t* n_start, const int64_t* c_start, const double* b,
                         const double* x, const double* blocks, int64_t* bytes);
/* The device vectors (after a load): x, p and q. */
void hy_cg_gpu_vectors(hy_cg_gpu* g, double** x, double** p, double** q);
/* Operation op (HY_CG_*) for the solves live[b] != 0, scal[b] their alpha
 * or beta (NULL for START and PQ); each live solve's sums into
 * sums[2 b], sums[2 b + 1]. */
hy_status hy_cg_gpu_op(hy_cg_gpu* g, int op, const uint8_t* live, const double* scal, double* sums, int64_t* bytes);
/* x down (every solve's, concatenated). */
hy_status hy_cg_gpu_result(hy_cg_gpu* g, double* x, int64_t* bytes);

#ifdef __cplusplus
}
#endif

#endif
