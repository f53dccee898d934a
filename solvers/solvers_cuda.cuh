/* What the solvers' CUDA files (solvers/fem.cu, solvers/massspring.cu)
 * share: a clock, CUDA errors as hy_status, device copies of model arrays.
 * CUDA C++ only. */
#ifndef HY_SOLVERS_SOLVERS_CUDA_CUH
#define HY_SOLVERS_SOLVERS_CUDA_CUH

#include <cuda_runtime.h>
#include <time.h>

extern "C" {
#include "core/error.h"
}

/* Threads per block of the element, spring and vertex kernels. */
#define SOLVER_BLOCK 128

static inline double solver_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static inline unsigned int solver_blocks(int64_t n) { return (unsigned int)((n + SOLVER_BLOCK - 1) / SOLVER_BLOCK); }

/* A failed CUDA call as a status naming `who`, the device, the call and the
 * error; out-of-memory is HY_ERR_NOMEM, the rest HY_ERR_INTERNAL. */
static inline hy_status solver_cuda_fail(const char* who, int device, const char* call, cudaError_t e) {
    (void)cudaGetLastError();
    hy_status s = e == cudaErrorMemoryAllocation ? HY_ERR_NOMEM : HY_ERR_INTERNAL;
    return hy_fail(s, "%s: cuda:%d: %s failed: %s (%s)", who, device, call, cudaGetErrorName(e), cudaGetErrorString(e));
}

/* Return the failure of a CUDA call (with `who` and `device` in scope). */
#define FCK(call)                                                                    \
    do {                                                                             \
        cudaError_t fck_e_ = (call);                                                 \
        if (fck_e_ != cudaSuccess) return solver_cuda_fail(who, device, #call, fck_e_); \
    } while (0)

/* GPUs present (0 when the runtime finds none or fails). */
static inline int solver_gpu_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

/* *d = a device array of n elements, h's contents sent when h is not NULL
 * (on stream st; the bytes sent added to *bytes). */
template <typename T>
static hy_status solver_up(const char* who, int device, cudaStream_t st, T** d, const T* h, size_t n, int64_t* bytes) {
    FCK(cudaMalloc((void**)d, sizeof(T) * (n ? n : 1)));
    if (h && n) {
        FCK(cudaMemcpyAsync(*d, h, sizeof(T) * n, cudaMemcpyHostToDevice, st));
        *bytes += (int64_t)(sizeof(T) * n);
    }
    return HY_OK;
}

#endif
