/* What the collision kernels' CUDA files (collision/leaf.cu,
 * collision/traverse.cu) share: the block size, a clock and CUDA errors as
 * hy_status (core/cuda_util.cuh), and a per-device lane (lock, stream, stack limit) that each
 * file keeps for its own batches. CUDA C++ only; not for C files. */
#ifndef HY_COLLISION_KERNELS_CUDA_CUH
#define HY_COLLISION_KERNELS_CUDA_CUH

#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>

#include "core/cuda_util.cuh"
#include "sched/cuda.h"

/* Threads per block: small blocks, as threads diverge (most LEAF jobs end
 * at an early-out, a few search hundreds of boxes; TRAVERSE subtrees differ
 * wildly in size). */
#define BLOCK_THREADS 128

static inline double now_s(void) { return hy_cuda_now(); }

/* A failed CUDA call as a status naming the device, the call and the
 * error (core/cuda_util.cuh). */
static inline hy_status cuda_fail(int device, const char* call, cudaError_t e) {
    return hy_cuda_error(NULL, device, call, e);
}

/* Return the failure of a CUDA call (in a function with `device` in scope). */
#define CK(call)                                                      \
    do {                                                              \
        cudaError_t ck_e_ = (call);                                   \
        if (ck_e_ != cudaSuccess) return cuda_fail(device, #call, ck_e_); \
    } while (0)

/* One file's use of one GPU: its batches one at a time (lock), on their
 * own stream. */
typedef struct kernel_lane {
    pthread_mutex_t lock;
    int ready; /* stream created, stack limit checked */
    cudaStream_t stream;
} kernel_lane;

/* Take lane l of `device` (its lock) and make the device current. The lock
 * is held on return, whatever the status: release it with
 * pthread_mutex_unlock(&l->lock). */
static inline hy_status lane_enter(int device, kernel_lane* l) {
    pthread_mutex_lock(&l->lock);
    cudaError_t e = cudaSetDevice(device);
    return e == cudaSuccess ? HY_OK : cuda_fail(device, "cudaSetDevice", e);
}

/* A per-thread stack on the current device large enough for `kernel`'s
 * local frame (raised, never lowered, so the kernels of several files can
 * share a device). */
static inline hy_status stack_for(int device, const void* kernel) {
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, kernel));
    size_t stack = 0;
    CK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
    size_t need = fa.localSizeBytes + 1024;
    if (stack < need) CK(cudaDeviceSetLimit(cudaLimitStackSize, need));
    return HY_OK;
}

/* First use of a lane by a batch (lock held, device current): its stream,
 * and the stack `kernel` needs (stack_for). */
static inline hy_status lane_ready(int device, kernel_lane* l, const void* kernel) {
    if (l->ready) return HY_OK;
    hy_status s = stack_for(device, kernel);
    if (s) return s;
    CK(cudaStreamCreateWithFlags(&l->stream, cudaStreamNonBlocking));
    l->ready = 1;
    return HY_OK;
}

/* The step's positions X0 then X1 (3 nv doubles each) on a device, at
 * `version` (the caller's valid bit, collision/kernels.h; 0: none held). */
typedef struct resident_x {
    double* X;
    int64_t cap; /* doubles */
    uint64_t version;
    int32_t nv;
} resident_x;

/* Bring r up to `version` on `stream` (blocking): sent only when the copy
 * is stale (or version is 0); the bytes sent added to *up. On failure the
 * copy counts as none. */
static inline hy_status resident_x_sync(int device, cudaStream_t stream, resident_x* r, uint64_t version,
                                        const double* X0, const double* X1, int32_t nv, int64_t* up) {
    if (version != 0 && version == r->version && nv == r->nv) return HY_OK;
    r->version = 0; /* stale until the copies are done */
    int64_t doubles = 6 * (int64_t)nv;
    if (r->cap < doubles || !r->X) {
        cudaFree(r->X);
        r->X = NULL;
        r->cap = 0;
        CK(cudaMalloc((void**)&r->X, sizeof(double) * (size_t)(doubles > 0 ? doubles : 1)));
        r->cap = doubles > 0 ? doubles : 1;
    }
    size_t side = sizeof(double) * 3 * (size_t)nv;
    if (nv > 0) {
        CK(cudaMemcpyAsync(r->X, X0, side, cudaMemcpyHostToDevice, stream));
        CK(cudaMemcpyAsync(r->X + 3 * (int64_t)nv, X1, side, cudaMemcpyHostToDevice, stream));
    }
    CK(cudaStreamSynchronize(stream));
    r->version = version;
    r->nv = nv;
    *up += (int64_t)(2 * side);
    return HY_OK;
}

/* Checks shared by the batch entry points: GPU `device` exists (no GPU at
 * all is HY_ERR_UNSUPPORTED: the caller runs the batch on the host). */
static inline hy_status device_check(int device) {
    int count = hy_cuda_device_count();
    if (device < 0 || device >= count)
        return hy_fail(count ? HY_ERR_INVALID_ARG : HY_ERR_UNSUPPORTED, "cuda:%d: no such GPU (%s)", device,
                       hy_cuda_status());
    return HY_OK;
}

#endif
