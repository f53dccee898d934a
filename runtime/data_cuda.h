/* The data layer's device memory (runtime/data.h) on CUDA GPUs:
 * allocations and copies through the CUDA runtime (runtime/data_cuda.cu).
 * Without CUDA in the build (and in sanitizer builds)
 * runtime/data_cuda_stub.c counts no GPU and answers HY_ERR_UNSUPPORTED,
 * and the data layer keeps host buffers for every memory. */
#ifndef HY_RUNTIME_DATA_CUDA_H
#define HY_RUNTIME_DATA_CUDA_H

#include <stddef.h>

#include "core/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* GPUs present (0 without CUDA or without a GPU). */
int hy_rt_dev_count(void);
/* *ptr = `bytes` bytes (at least 1) of GPU `device`'s memory. HY_ERR_NOMEM,
 * HY_ERR_UNSUPPORTED (no CUDA), HY_ERR_INTERNAL (a CUDA error, named). */
hy_status hy_rt_dev_alloc(int device, size_t bytes, void** ptr);
void hy_rt_dev_free(int device, void* ptr);
/* Copy `bytes` bytes from src to dst, either of them host memory or any
 * GPU's (unified addressing says which), finished on return. */
hy_status hy_rt_dev_copy(void* dst, const void* src, size_t bytes);

#ifdef __cplusplus
}
#endif

#endif
