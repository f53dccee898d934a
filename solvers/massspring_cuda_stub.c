/* The mass-spring GPU passes when the build has no CUDA: refused with
 * HY_ERR_UNSUPPORTED, the model stays on the CPU. solvers/massspring.cu
 * replaces this file when CUDA is built. */
#include "solvers/massspring_cuda.h"

#include "core/error.h"

hy_status hy_ms_gpu_create(int device, const hy_ms_hd_model* m, hy_ms_gpu** out) {
    (void)m;
    if (out) *out = NULL;
    return hy_fail(HY_ERR_UNSUPPORTED,
                   "mass-spring: cuda:%d: this build has no CUDA (configure with nvcc on PATH and -DHY_CUDA=ON)", device);
}

void hy_ms_gpu_destroy(hy_ms_gpu* g) { (void)g; }

hy_status hy_ms_gpu_springs(hy_ms_gpu* g, const hy_ms_hd_model* m, const double* x0, const double* v0, double dt) {
    (void)g, (void)m, (void)x0, (void)v0, (void)dt;
    return hy_fail(HY_ERR_UNSUPPORTED, "mass-spring: this build has no CUDA");
}

hy_status hy_ms_gpu_apply(hy_ms_gpu* g, const hy_ms_hd_model* m, const double* p, double* y) {
    (void)g, (void)m, (void)p, (void)y;
    return hy_fail(HY_ERR_UNSUPPORTED, "mass-spring: this build has no CUDA");
}

int64_t hy_ms_gpu_bytes(const hy_ms_gpu* g) {
    (void)g;
    return 0;
}

hy_status hy_ms_gpu_batch_create(int device, const hy_ms_hd_model* m, int32_t nb, hy_ms_gpu_batch** out) {
    (void)m, (void)nb;
    if (out) *out = NULL;
    return hy_fail(HY_ERR_UNSUPPORTED,
                   "mass-spring: cuda:%d: this build has no CUDA (configure with nvcc on PATH and -DHY_CUDA=ON)", device);
}

void hy_ms_gpu_batch_destroy(hy_ms_gpu_batch* g) { (void)g; }

hy_status hy_ms_gpu_batch_springs(hy_ms_gpu_batch* g, const hy_ms_hd_model* m, const double* x0, const double* v0,
                                  double dt) {
    (void)g, (void)m, (void)x0, (void)v0, (void)dt;
    return hy_fail(HY_ERR_UNSUPPORTED, "mass-spring: this build has no CUDA");
}

hy_status hy_ms_gpu_batch_load(hy_ms_gpu_batch* g, const hy_ms_hd_model* m) {
    (void)g, (void)m;
    return hy_fail(HY_ERR_UNSUPPORTED, "mass-spring: this build has no CUDA");
}

hy_status hy_ms_gpu_batch_apply(hy_ms_gpu_batch* g, const hy_ms_hd_model* m, const double* p, double* y) {
    (void)g, (void)m, (void)p, (void)y;
    return hy_fail(HY_ERR_UNSUPPORTED, "mass-spring: this build has no CUDA");
}

hy_status hy_ms_gpu_batch_apply_resident(hy_ms_gpu_batch* g, const hy_ms_hd_model* m, const double* p, double* y) {
    (void)g, (void)m, (void)p, (void)y;
    return hy_fail(HY_ERR_UNSUPPORTED, "mass-spring: this build has no CUDA");
}

int64_t hy_ms_gpu_batch_bytes(const hy_ms_gpu_batch* g) {
    (void)g;
    return 0;
}
