/* The part of the CUDA runtime's binary interface that the interceptor and
 * its test double use, written out so that both build as plain C without the
 * CUDA toolkit. Layouts and values are the runtime's (driver_types.h,
 * vector_types.h, crt/host_runtime.h of CUDA 12 and 13): dim3 is three
 * unsigned ints passed by value, handles are opaque pointers, errors are
 * ints. */
#ifndef HY_INTERCEPT_CUDA_ABI_H
#define HY_INTERCEPT_CUDA_ABI_H

#include <stddef.h>

typedef int hy_cuda_error; /* cudaError_t */
typedef struct {
    unsigned x, y, z;
} hy_dim3; /* dim3 */
typedef struct hy_cuda_stream_st* hy_cuda_stream; /* cudaStream_t */
typedef struct hy_cuda_kernel_st* hy_cuda_kernel; /* cudaKernel_t */

enum {
    HY_CUDA_SUCCESS = 0,
    HY_CUDA_ERROR_INVALID_VALUE = 1,
    HY_CUDA_ERROR_MEMORY_ALLOCATION = 2,
    HY_CUDA_ERROR_MISSING_CONFIGURATION = 52,
    HY_CUDA_ERROR_INVALID_DEVICE_FUNCTION = 98,
    HY_CUDA_ERROR_INVALID_DEVICE = 101,
    HY_CUDA_ERROR_INVALID_RESOURCE_HANDLE = 400
};

/* cudaMemcpyKind */
enum { HY_CUDA_H2H = 0, HY_CUDA_H2D = 1, HY_CUDA_D2H = 2, HY_CUDA_D2D = 3, HY_CUDA_DEFAULT = 4 };

/* The default-stream handles: 0, cudaStreamLegacy, cudaStreamPerThread. They
 * name the default stream of whichever device is current at the call. */
#define HY_CUDA_STREAM_LEGACY ((hy_cuda_stream)0x1)
#define HY_CUDA_STREAM_PER_THREAD ((hy_cuda_stream)0x2)
#define HY_CUDA_STREAM_IS_DEFAULT(s) ((size_t)(s) <= 2)

#endif
