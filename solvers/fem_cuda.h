/* The corotational FEM's element and vertex passes on a CUDA GPU
 * (solvers/fem.cu), the arithmetic of solvers/fem_hd.h that the CPU runs
 * (solvers/fem.c), so every output has the CPU's bits. Without CUDA in the
 * build (or in sanitizer builds) solvers/fem_cuda_stub.c answers
 * HY_ERR_UNSUPPORTED. One model's GPU context is used by one thread at a
 * time. */
#ifndef HY_SOLVERS_FEM_CUDA_H
#define HY_SOLVERS_FEM_CUDA_H

#include "hyphys/hyphys.h"
#include "solvers/fem_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hy_fem_gpu hy_fem_gpu;

/* GPUs this build can use (0 without CUDA or without a GPU). */
int hy_fem_gpu_count(void);

/* The model's constant arrays (tet, rest, grad, vol, mass, fixed, the
 * incidence) up to GPU `device`, and room for the step's. HY_ERR_UNSUPPORTED
 * (no CUDA, no such GPU), HY_ERR_NOMEM, HY_ERR_INTERNAL (a CUDA error,
 * named). */
hy_status hy_fem_gpu_create(int device, const hy_fem_hd_model* m, hy_fem_gpu** out);
void hy_fem_gpu_destroy(hy_fem_gpu* g);

/* The prepared step's passes (hy_fem_prepare): per element hy_fem_hd_rotate
 * at x0 + vscale v0, per vertex hy_fem_hd_rhs_vertex (dt, gravity g,
 * f_ext and extra as there, each may be NULL). x0, v0 (and f_ext, extra)
 * go up; the right-hand side comes down into rhs (3 nv) and the inverse
 * diagonal blocks into m->pinv. The rotated gradients stay on the GPU for
 * apply: m->rgrad and m->efor on the host are not updated. */
hy_status hy_fem_gpu_prepare(hy_fem_gpu* g, const hy_fem_hd_model* m, const double* x0, const double* v0,
                             double vscale, double dt, const double gravity[3], const double* f_ext,
                             const double* extra, double* rhs);

/* y = A p for the prepared step (m->diag_scale, m->k_scale): per element
 * hy_fem_hd_apply_element, per vertex hy_fem_hd_gather and
 * hy_fem_hd_matvec_vertex; p (3 nv) up, y (3 nv) down. */
hy_status hy_fem_gpu_apply(hy_fem_gpu* g, const hy_fem_hd_model* m, const double* p, double* y);

/* y = A p for the prepared step on its system assembled by vertex rows
 * (solvers/fem_hd.h; a: the host's pattern): per vertex
 * hy_fem_hd_asm_apply_row, after hy_fem_hd_asm_row per vertex when build
 * is set (the step's first assembled product), from the rotated gradients
 * the GPU prepared. The pattern goes up at the context's first build (its
 * bytes counted), the rows stay on the GPU; p up, y down. */
hy_status hy_fem_gpu_asm_apply(hy_fem_gpu* g, const hy_fem_hd_model* m, const hy_fem_hd_asm* a, int build,
                               const double* p, double* y);

/* Small objects in one launch per pass (solvers/batch_hd.h): the models
 * m[0..nb) (hy_fem_view of each, typically those under
 * HY_BATCH_MAX_ITEMS elements) up to GPU `device` once, each object's
 * arrays as hy_fem_gpu_create sends them. Statuses as hy_fem_gpu_create. */
typedef struct hy_fem_gpu_batch hy_fem_gpu_batch;
hy_status hy_fem_gpu_batch_create(int device, const hy_fem_hd_model* m, int32_t nb, hy_fem_gpu_batch** out);
void hy_fem_gpu_batch_destroy(hy_fem_gpu_batch* g);
/* Every object's prepared-step passes, one launch each over the batch's
 * elements and vertices (hy_fem_hd_batch_rotate at x0 + vscale v0,
 * hy_fem_hd_batch_rhs_vertex; no external forces or extra blocks): x0, v0
 * (the objects' vectors one after the other) up, rhs (the same layout) and
 * each object's m[b].pinv down; m[b] gives the step's diag_scale and
 * k_scale. */
hy_status hy_fem_gpu_batch_prepare(hy_fem_gpu_batch* g, const hy_fem_hd_model* m, const double* x0,
                                   const double* v0, double vscale, double dt, const double gravity[3], double* rhs);
/* The step the host prepared (hy_fem_prepare on each object, on the CPU):
 * each object's rotated gradients (m[b].rgrad) and scalars up to the
 * batch's device copies, for hy_fem_gpu_batch_apply. */
hy_status hy_fem_gpu_batch_load(hy_fem_gpu_batch* g, const hy_fem_hd_model* m);
/* y = A p for every object of the prepared step: one launch over the
 * batch's elements, one over its vertices; p up, y down (concatenated). */
hy_status hy_fem_gpu_batch_apply(hy_fem_gpu_batch* g, const hy_fem_hd_model* m, const double* p, double* y);
/* Bytes the objects' contexts sent when the batch was made (their constant
 * arrays). */
int64_t hy_fem_gpu_batch_bytes(const hy_fem_gpu_batch* g);
/* The same with p and y device pointers on the batch's GPU (a device CG's
 * vectors, solvers/cg_cuda.h): nothing copied. */
hy_status hy_fem_gpu_batch_apply_resident(hy_fem_gpu_batch* g, const hy_fem_hd_model* m, const double* p, double* y);

/* Seconds of host<->device copies and of kernels since the context was
 * made, and the bytes moved each way (for benches). */
void hy_fem_gpu_totals(const hy_fem_gpu* g, double* seconds_copy, double* seconds_kernel, int64_t* bytes_up,
                       int64_t* bytes_down);

#ifdef __cplusplus
}
#endif

#endif
