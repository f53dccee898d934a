/* The cloth's GPU passes when the build has no CUDA: refused with
 * HY_ERR_UNSUPPORTED, the model stays on the CPU. solvers/cloth.cu
 * replaces this file when CUDA is built. */
#include "solvers/cloth_cuda.h"

#include "core/error.h"

hy_status hy_cloth_gpu_create(int device, const hy_cloth_hd_model* m, const int32_t* ends, const double* rest,
                              const double* stiff, const double* damp, hy_cloth_gpu** out) {
    (void)m, (void)ends, (void)rest, (void)stiff, (void)damp;
    if (out) *out = NULL;
    return hy_fail(HY_ERR_UNSUPPORTED,
                   "cloth: cuda:%d: this build has no CUDA (configure with nvcc on PATH and -DHY_CUDA=ON)", device);
}

void hy_cloth_gpu_destroy(hy_cloth_gpu* g) { (void)g; }

hy_status hy_cloth_gpu_springs(hy_cloth_gpu* g, const double* x0, const double* v0, double dt, double* block,
                               double* rhs_s) {
    (void)g, (void)x0, (void)v0, (void)dt, (void)block, (void)rhs_s;
    return hy_fail(HY_ERR_UNSUPPORTED, "cloth: this build has no CUDA");
}

hy_status hy_cloth_gpu_held(hy_cloth_gpu* g, int constrained, const uint8_t* held, const double* ch) {
    (void)g, (void)constrained, (void)held, (void)ch;
    return hy_fail(HY_ERR_UNSUPPORTED, "cloth: this build has no CUDA");
}

hy_status hy_cloth_gpu_apply(hy_cloth_gpu* g, double diag_scale, const double* x, double* y) {
    (void)g, (void)diag_scale, (void)x, (void)y;
    return hy_fail(HY_ERR_UNSUPPORTED, "cloth: this build has no CUDA");
}

void hy_cloth_gpu_bytes(const hy_cloth_gpu* g, int64_t* up, int64_t* down) {
    (void)g;
    if (up) *up = 0;
    if (down) *down = 0;
}
