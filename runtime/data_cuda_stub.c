/* The data layer's device memory without CUDA in the build (data_cuda.h):
 * no GPU; the data layer keeps host buffers. */
#include "runtime/data_cuda.h"

int hy_rt_dev_count(void) { return 0; }

hy_status hy_rt_dev_alloc(int device, size_t bytes, void** ptr) {
    (void)bytes;
    *ptr = NULL;
    return hy_fail(HY_ERR_UNSUPPORTED, "data layer: cuda:%d: this build has no CUDA", device);
}

void hy_rt_dev_free(int device, void* ptr) { (void)device, (void)ptr; }

hy_status hy_rt_dev_copy(void* dst, const void* src, size_t bytes) {
    (void)dst, (void)src, (void)bytes;
    return hy_fail(HY_ERR_UNSUPPORTED, "data layer: a device copy in a build without CUDA");
}
