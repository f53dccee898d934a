/* The data layer's device memory through the CUDA runtime (data_cuda.h). */
/* core/error.h with C linkage first (core/cuda_util.cuh) */
#include "core/cuda_util.cuh"
#include "runtime/data_cuda.h"

extern "C" int hy_rt_dev_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

extern "C" hy_status hy_rt_dev_alloc(int device, size_t bytes, void** ptr) {
    *ptr = NULL;
    cudaError_t e = cudaSetDevice(device);
    if (e != cudaSuccess) return hy_cuda_error("data layer", device, "cudaSetDevice", e);
    e = cudaMalloc(ptr, bytes ? bytes : 1);
    if (e != cudaSuccess) {
        *ptr = NULL;
        return hy_cuda_error("data layer", device, "cudaMalloc", e);
    }
    return HY_OK;
}

extern "C" void hy_rt_dev_free(int device, void* ptr) {
    if (!ptr || cudaSetDevice(device) != cudaSuccess) {
        (void)cudaGetLastError();
        return;
    }
    (void)cudaFree(ptr);
}

extern "C" hy_status hy_rt_dev_copy(void* dst, const void* src, size_t bytes) {
    /* cudaMemcpyDefault: the direction from the pointers (unified
     * addressing), device to device included; synchronous for the host */
    cudaError_t e = cudaMemcpy(dst, src, bytes, cudaMemcpyDefault);
    if (e != cudaSuccess) {
        int device = -1;
        (void)cudaGetDevice(&device);
        return hy_cuda_error("data layer", device, "cudaMemcpy", e);
    }
    return HY_OK;
}
