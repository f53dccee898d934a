/* The mass-spring objects' spring pass and matrix-vector product on a CUDA
 * GPU (solvers/massspring.cu), the arithmetic of solvers/massspring_hd.h
 * that the CPU runs (solvers/massspring.c), so every output has the CPU's
 * bits. Without CUDA in the build solvers/massspring_cuda_stub.c answers
 * HY_ERR_UNSUPPORTED. One model's GPU context is used by one thread at a
 * time. */
#ifndef HY_SOLVERS_MASSSPRING_CUDA_H
#define HY_SOLVERS_MASSSPRING_CUDA_H

#include "hyphys/hyphys.h"
#include "solvers/massspring_hd.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct hy_ms_gpu hy_ms_gpu;

/* The model's constant arrays (springs, rest lengths, masses, fixed, the
 * incidence) up to GPU `device`. Statuses as hy_fem_gpu_create. */
hy_status hy_ms_gpu_create(int device, const hy_ms_hd_model* m, hy_ms_gpu** out);
void hy_ms_gpu_destroy(hy_ms_gpu* g);

/* The spring pass at (x0, v0), step dt: per spring hy_ms_hd_spring; the
 * coefficients stay on the GPU and come down with the spring forces into
 * m->coef and m->sforce (the CPU's right-hand side reads them). */
hy_status hy_ms_gpu_springs(hy_ms_gpu* g, const hy_ms_hd_model* m, const double* x0, const double* v0, double dt);

/* y = A p for the prepared step (m->diag_scale): per vertex
 * hy_ms_hd_matvec_vertex; p up, y down. */
hy_status hy_ms_gpu_apply(hy_ms_gpu* g, const hy_ms_hd_model* m, const double* p, double* y);

/* Bytes moved between the host and the GPU since the context was made
 * (its constant arrays, each pass's vectors), both ways. */
int64_t hy_ms_gpu_bytes(const hy_ms_gpu* g);

/* Small objects in one launch per pass (solvers/batch_hd.h): the models
 * m[0..nb) (hy_ms_view of each, typically those under HY_BATCH_MAX_ITEMS
 * springs) up to GPU `device` once. Statuses as hy_ms_gpu_create. */
typedef struct hy_ms_gpu_batch hy_ms_gpu_batch;
hy_status hy_ms_gpu_batch_create(int device, const hy_ms_hd_model* m, int32_t nb, hy_ms_gpu_batch** out);
void hy_ms_gpu_batch_destroy(hy_ms_gpu_batch* g);
/* Every object's spring pass in one launch over the batch's springs
 * (hy_ms_hd_batch_spring): x0, v0 (the objects' vectors one after the
 * other) up, each object's m[b].coef and m[b].sforce down. */
hy_status hy_ms_gpu_batch_springs(hy_ms_gpu_batch* g, const hy_ms_hd_model* m, const double* x0, const double* v0,
                                  double dt);
/* The step the host prepared (hy_ms_prepare on each object, on the CPU):
 * each object's spring coefficients (m[b].coef) up to the batch's device
 * copies, for hy_ms_gpu_batch_apply. */
hy_status hy_ms_gpu_batch_load(hy_ms_gpu_batch* g, const hy_ms_hd_model* m);
/* y = A p for every object of the prepared step (m[b].diag_scale): one
 * launch over the batch's vertices; p up, y down (concatenated). */
hy_status hy_ms_gpu_batch_apply(hy_ms_gpu_batch* g, const hy_ms_hd_model* m, const double* p, double* y);
/* Bytes the objects' contexts sent when the batch was made (their constant
 * arrays). */
int64_t hy_ms_gpu_batch_bytes(const hy_ms_gpu_batch* g);
/* The same with p and y device pointers on the batch's GPU (a device CG's
 * vectors, solvers/cg_cuda.h): nothing copied. */
hy_status hy_ms_gpu_batch_apply_resident(hy_ms_gpu_batch* g, const hy_ms_hd_model* m, const double* p, double* y);

#ifdef __cplusplus
}
#endif

#endif
