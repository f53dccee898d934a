/* The cuda backend's probe when the build has no CUDA (no CUDA compiler
 * found, HY_CUDA=OFF, or a sanitizer build): no GPU, one log line.
 * sched/cuda.cu replaces this file when CUDA is built. */
#include "sched/cuda.h"

#include "core/error.h"

int hy_cuda_device_count(void) { return 0; }

const char* hy_cuda_status(void) { return "cuda: built without CUDA: CPU only"; }

hy_status hy_cuda_device_name(int device, char* buf, size_t cap) {
    if (buf && cap > 0) buf[0] = '\0';
    return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: no such GPU (built without CUDA)", device);
}
