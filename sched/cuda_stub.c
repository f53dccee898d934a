/* The CUDA backend when the build has none (no CUDA compiler found,
 * HY_CUDA=OFF, or a sanitizer build): no GPU, one log line, every batch
 * refused so the caller keeps the work on the CPU. sched/cuda.cu replaces
 * this file when CUDA is built. */
#include "sched/cuda.h"

#include "core/error.h"

int hy_cuda_device_count(void) { return 0; }

const char* hy_cuda_status(void) { return "cuda: built without CUDA: CPU only"; }

hy_status hy_cuda_device_name(int device, char* buf, size_t cap) {
    if (buf && cap > 0) buf[0] = '\0';
    return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: no such GPU (built without CUDA)", device);
}

hy_status hy_cuda_leaf_batch(int device, const hy_leaf_job* jobs, int64_t n, const hy_ccd_options* opts,
                             unsigned char* hit, double* toi, double* seconds_transfer, double* seconds_kernel) {
    (void)jobs;
    (void)n;
    (void)opts;
    (void)hit;
    (void)toi;
    if (seconds_transfer) *seconds_transfer = 0.0;
    if (seconds_kernel) *seconds_kernel = 0.0;
    return hy_fail(HY_ERR_UNSUPPORTED, "cuda:%d: this build has no CUDA (configure with nvcc on PATH and -DHY_CUDA=ON)",
                   device);
}

hy_status hy_cuda_traverse_batch(int device, hy_traverser* t, const int64_t* ids, int64_t n, double* seconds_transfer,
                                 double* seconds_kernel) {
    (void)t;
    (void)ids;
    (void)n;
    if (seconds_transfer) *seconds_transfer = 0.0;
    if (seconds_kernel) *seconds_kernel = 0.0;
    return hy_fail(HY_ERR_UNSUPPORTED, "cuda:%d: this build has no CUDA (configure with nvcc on PATH and -DHY_CUDA=ON)",
                   device);
}
