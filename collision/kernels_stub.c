/* The collision kernels when the build has no CUDA (no CUDA compiler found,
 * HY_CUDA=OFF, or a sanitizer build): every batch refused with
 * HY_ERR_UNSUPPORTED, so the caller keeps the work on the CPU.
 * collision/leaf.cu and collision/traverse.cu replace this file when CUDA
 * is built. */
#include "collision/kernels.h"

#include <string.h>

#include "core/error.h"

static hy_status refused(int device, double* seconds_transfer, double* seconds_kernel) {
    if (seconds_transfer) *seconds_transfer = 0.0;
    if (seconds_kernel) *seconds_kernel = 0.0;
    return hy_fail(HY_ERR_UNSUPPORTED, "cuda:%d: this build has no CUDA (configure with nvcc on PATH and -DHY_CUDA=ON)",
                   device);
}

hy_status hy_cuda_leaf_batch(int device, const hy_leaf_job* jobs, int64_t n, const hy_ccd_options* opts,
                             unsigned char* hit, double* toi, double* seconds_transfer, double* seconds_kernel) {
    (void)jobs;
    (void)n;
    (void)opts;
    (void)hit;
    (void)toi;
    return refused(device, seconds_transfer, seconds_kernel);
}

hy_status hy_cuda_traverse_batch(int device, hy_traverser* t, const int64_t* ids, int64_t n, double* seconds_transfer,
                                 double* seconds_kernel) {
    (void)t;
    (void)ids;
    (void)n;
    return refused(device, seconds_transfer, seconds_kernel);
}

hy_status hy_cuda_traverse_device(int device, const hy_traverser* t, const int64_t* ids, int64_t n,
                                  hy_cuda_traversed* out, double* seconds_transfer, double* seconds_kernel) {
    (void)t;
    (void)ids;
    (void)n;
    (void)out;
    return refused(device, seconds_transfer, seconds_kernel);
}

hy_status hy_cuda_leaf_resident(int device, uint64_t version, const double* X0, const double* X1, int32_t nv,
                                const hy_leaf_ref* refs, int64_t n, const hy_ccd_options* opts, unsigned char* hit,
                                double* toi, double* seconds_transfer, int64_t* bytes_up, int64_t* bytes_down) {
    (void)version;
    (void)X0;
    (void)X1;
    (void)nv;
    (void)refs;
    (void)n;
    (void)opts;
    (void)hit;
    (void)toi;
    if (bytes_up) *bytes_up = 0;
    if (bytes_down) *bytes_down = 0;
    return refused(device, seconds_transfer, NULL);
}

hy_status hy_cuda_traverse_leaf(int device, const hy_traverser* t, const int64_t* ids, int64_t n, const double* md,
                                uint64_t version, const double* X0, const double* X1, int32_t nv,
                                const hy_ccd_options* opts, hy_leaf_contacts* out, double* seconds_transfer,
                                double* seconds_kernel) {
    (void)t;
    (void)ids;
    (void)n;
    (void)md;
    (void)version;
    (void)X0;
    (void)X1;
    (void)nv;
    (void)opts;
    if (out) memset(out, 0, sizeof *out);
    return refused(device, seconds_transfer, seconds_kernel);
}
