/* The implicit cloth's spring pass and matrix-vector product on a CUDA
 * GPU (solvers/cloth.cu), the arithmetic of solvers/cloth_hd.h that the
 * CPU runs (solvers/cloth.c, cloth_precond.c), so every output has the
 * CPU's bits. Without CUDA in the build solvers/cloth_cuda_stub.c answers
 * HY_ERR_UNSUPPORTED. One model's GPU context is used by one thread at a
 * time. */
#ifndef HY_SOLVERS_CLOTH_CUDA_H
#define HY_SOLVERS_CLOTH_CUDA_H

#include "hyphys/hyphys.h"
#include "solvers/cloth_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hy_cloth_gpu hy_cloth_gpu;

/* The model's constant arrays up to GPU `device`: the springs (ends,
 * rest lengths, stiffness, damping, ns each) and what the product reads
 * (m: masses, fixed flags, the CSR). HY_ERR_UNSUPPORTED when there is no
 * such GPU or no CUDA in the build. */
hy_status hy_cloth_gpu_create(int device, const hy_cloth_hd_model* m, const int32_t* ends, const double* rest,
                              const double* stiff, const double* damp, hy_cloth_gpu** out);
void hy_cloth_gpu_destroy(hy_cloth_gpu* g);

/* The spring pass at (x0, v0), step dt (hy_cloth_hd_spring per spring):
 * the blocks stay on the GPU for the products and come down, with the
 * springs' right-hand side parts, into block (4 ns) and rhs_s (3 ns). */
hy_status hy_cloth_gpu_springs(hy_cloth_gpu* g, const double* x0, const double* v0, double dt, double* block,
                               double* rhs_s);

/* The step's held vertices (held nv, ch 9 nv) up, when constrained. */
hy_status hy_cloth_gpu_held(hy_cloth_gpu* g, int constrained, const uint8_t* held, const double* ch);

/* y = A x for the prepared step (hy_cloth_hd_matvec_row per vertex,
 * diag_scale = 1 + dt air): x up, y down. */
hy_status hy_cloth_gpu_apply(hy_cloth_gpu* g, double diag_scale, const double* x, double* y);

/* Bytes sent and received since the context was made. */
void hy_cloth_gpu_bytes(const hy_cloth_gpu* g, int64_t* up, int64_t* down);

#ifdef __cplusplus
}
#endif

#endif
