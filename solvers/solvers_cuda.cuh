/* What the solvers' CUDA files (solvers/fem.cu, solvers/massspring.cu)
 * share: a clock and CUDA errors as hy_status (core/cuda_util.cuh), the
 * GPU count, device copies of model arrays. CUDA C++ only. */
#ifndef HY_SOLVERS_SOLVERS_CUDA_CUH
#define HY_SOLVERS_SOLVERS_CUDA_CUH

#include <cuda_runtime.h>

#include "core/cuda_util.cuh"

/* Threads per block of the element, spring and vertex kernels. */
#define SOLVER_BLOCK 128

static inline double solver_now(void) { return hy_cuda_now(); }

static inline unsigned int solver_blocks(int64_t n) { return (unsigned int)((n + SOLVER_BLOCK - 1) / SOLVER_BLOCK); }

/* Return the failure of a CUDA call (with `who` and `device` in scope). */
#define FCK(call)                                                                 \
    do {                                                                          \
        cudaError_t fck_e_ = (call);                                              \
        if (fck_e_ != cudaSuccess) return hy_cuda_error(who, device, #call, fck_e_); \
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
