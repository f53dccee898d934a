/* The FEM's GPU passes when the build has no CUDA (no CUDA compiler,
 * HY_CUDA=OFF, or a sanitizer build): no GPU, every call refused with
 * HY_ERR_UNSUPPORTED so the model stays on the CPU. solvers/fem.cu
 * replaces this file when CUDA is built. */
#include "solvers/fem_cuda.h"

#include "core/error.h"

int hy_fem_gpu_count(void) { return 0; }

hy_status hy_fem_gpu_create(int device, const hy_fem_hd_model* m, hy_fem_gpu** out) {
    (void)m;
    if (out) *out = NULL;
    return hy_fail(HY_ERR_UNSUPPORTED, "fem: cuda:%d: this build has no CUDA (configure with nvcc on PATH and -DHY_CUDA=ON)",
                   device);
}

void hy_fem_gpu_destroy(hy_fem_gpu* g) { (void)g; }

hy_status hy_fem_gpu_prepare(hy_fem_gpu* g, const hy_fem_hd_model* m, const double* x0, const double* v0,
                             double vscale, double dt, const double gravity[3], const double* f_ext,
                             const double* extra, double* rhs) {
    (void)g, (void)m, (void)x0, (void)v0, (void)vscale, (void)dt, (void)gravity, (void)f_ext, (void)extra, (void)rhs;
    return hy_fail(HY_ERR_UNSUPPORTED, "fem: this build has no CUDA");
}

hy_status hy_fem_gpu_batch_create(int device, const hy_fem_hd_model* m, int32_t nb, hy_fem_gpu_batch** out) {
    (void)m, (void)nb;
    if (out) *out = NULL;
    return hy_fail(HY_ERR_UNSUPPORTED, "fem: cuda:%d: this build has no CUDA (configure with nvcc on PATH and -DHY_CUDA=ON)",
                   device);
}

void hy_fem_gpu_batch_destroy(hy_fem_gpu_batch* g) { (void)g; }

hy_status hy_fem_gpu_batch_prepare(hy_fem_gpu_batch* g, const hy_fem_hd_model* m, const double* x0,
                                   const double* v0, double vscale, double dt, const double gravity[3], double* rhs) {
    (void)g, (void)m, (void)x0, (void)v0, (void)vscale, (void)dt, (void)gravity, (void)rhs;
    return hy_fail(HY_ERR_UNSUPPORTED, "fem: this build has no CUDA");
}

hy_status hy_fem_gpu_batch_load(hy_fem_gpu_batch* g, const hy_fem_hd_model* m) {
    (void)g, (void)m;
    return hy_fail(HY_ERR_UNSUPPORTED, "fem: this build has no CUDA");
}

hy_status hy_fem_gpu_batch_apply(hy_fem_gpu_batch* g, const hy_fem_hd_model* m, const double* p, double* y) {
    (void)g, (void)m, (void)p, (void)y;
    return hy_fail(HY_ERR_UNSUPPORTED, "fem: this build has no CUDA");
}

hy_status hy_fem_gpu_apply(hy_fem_gpu* g, const hy_fem_hd_model* m, const double* p, double* y) {
    (void)g, (void)m, (void)p, (void)y;
    return hy_fail(HY_ERR_UNSUPPORTED, "fem: this build has no CUDA");
}

hy_status hy_fem_gpu_asm_apply(hy_fem_gpu* g, const hy_fem_hd_model* m, const hy_fem_hd_asm* a, int build,
                               const double* p, double* y) {
    (void)g, (void)m, (void)a, (void)build, (void)p, (void)y;
    return hy_fail(HY_ERR_UNSUPPORTED, "fem: this build has no CUDA");
}

void hy_fem_gpu_totals(const hy_fem_gpu* g, double* seconds_copy, double* seconds_kernel, int64_t* bytes_up,
                       int64_t* bytes_down) {
    (void)g;
    if (seconds_copy) *seconds_copy = 0.0;
    if (seconds_kernel) *seconds_kernel = 0.0;
    if (bytes_up) *bytes_up = 0;
    if (bytes_down) *bytes_down = 0;
}

hy_status hy_fem_gpu_batch_apply_resident(hy_fem_gpu_batch* g, const hy_fem_hd_model* m, const double* p, double* y) {
    (void)g, (void)m, (void)p, (void)y;
    return hy_fail(HY_ERR_UNSUPPORTED, "fem: this build has no CUDA");
}

int64_t hy_fem_gpu_batch_bytes(const hy_fem_gpu_batch* g) {
    (void)g;
    return 0;
}
