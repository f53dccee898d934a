/* What every CUDA file of the project shares (collision/kernels_cuda.cuh,
 * solvers/solvers_cuda.cuh): a monotonic clock for timing copies and
 * launches, and a failed CUDA call as a hy_status with a message. CUDA C++
 * only; includes nothing of the project but core/error.h. */
#ifndef HY_CORE_CUDA_UTIL_CUH
#define HY_CORE_CUDA_UTIL_CUH

#include <cuda_runtime.h>
#include <time.h>

extern "C" {
#include "core/error.h"
}

static inline double hy_cuda_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A failed CUDA call: the error cleared, and a status whose message names
 * `who` (may be NULL), the device, the call and the error; out-of-memory
 * is HY_ERR_NOMEM, the rest HY_ERR_INTERNAL. */
static inline hy_status hy_cuda_error(const char* who, int device, const char* call, cudaError_t e) {
    (void)cudaGetLastError();
    hy_status s = e == cudaErrorMemoryAllocation ? HY_ERR_NOMEM : HY_ERR_INTERNAL;
    return hy_fail(s, "%s%scuda:%d: %s failed: %s (%s)", who ? who : "", who ? ": " : "", device, call,
                   cudaGetErrorName(e), cudaGetErrorString(e));
}

#endif
