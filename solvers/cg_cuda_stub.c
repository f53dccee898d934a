/* The device CG when the build has no CUDA: refused with
 * HY_ERR_UNSUPPORTED, the solves stay on the host. solvers/cg.cu replaces
 * this file when CUDA is built. */
#include "solvers/cg_cuda.h"

#include "core/error.h"

hy_status hy_cg_gpu_create(int device, hy_cg_gpu** out) {
    if (out) *out = NULL;
    return hy_fail(HY_ERR_UNSUPPORTED, "cg: cuda:%d: this build has no CUDA (configure with nvcc on PATH and -DHY_CUDA=ON)",
                   device);
}

void hy_cg_gpu_destroy(hy_cg_gpu* g) { (void)g; }

hy_status hy_cg_gpu_load(hy_cg_gpu* g, int32_t nb, const int64_t* n_start, const int64_t* c_start, const double* b,
                         const double* x, const double* blocks, int64_t* bytes) {
    (void)g, (void)nb, (void)n_start, (void)c_start, (void)b, (void)x, (void)blocks, (void)bytes;
    return hy_fail(HY_ERR_UNSUPPORTED, "cg: this build has no CUDA");
}

void hy_cg_gpu_vectors(hy_cg_gpu* g, double** x, double** p, double** q) {
    (void)g;
    *x = *p = *q = NULL;
}

hy_status hy_cg_gpu_op(hy_cg_gpu* g, int op, const uint8_t* live, const double* scal, double* sums, int64_t* bytes) {
    (void)g, (void)op, (void)live, (void)scal, (void)sums, (void)bytes;
    return hy_fail(HY_ERR_UNSUPPORTED, "cg: this build has no CUDA");
}

hy_status hy_cg_gpu_result(hy_cg_gpu* g, double* x, int64_t* bytes) {
    (void)g, (void)x, (void)bytes;
    return hy_fail(HY_ERR_UNSUPPORTED, "cg: this build has no CUDA");
}
