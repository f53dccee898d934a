/* Host emulation of the sample program's kernels (intercept/sample.cu and its
 * C twin tests/cudart_double/sample_twin.c) for the CUDA runtime double: the
 * same arithmetic, run over the whole grid. */
#include "cudart_double.h"

#define API __attribute__((visibility("default")))

static unsigned threads(hy_dim3 g, hy_dim3 b) { return g.x * g.y * g.z * b.x * b.y * b.z; }

/* y[i] = a * x[i] + y[i] */
static void axpy(void** args, hy_dim3 grid, hy_dim3 block) {
    float a = *(float*)args[0];
    const float* x = *(const float**)args[1];
    float* y = *(float**)args[2];
    int n = *(int*)args[3];
    for (unsigned i = 0; i < threads(grid, block) && (int)i < n; i++) y[i] = a * x[i] + y[i];
}
API const hy_dbl_kernel hy_dbl_kernel_sample_axpy = {
    4, {sizeof(float), sizeof(void*), sizeof(void*), sizeof(int)}, axpy};

/* y[i] *= s */
static void scale(void** args, hy_dim3 grid, hy_dim3 block) {
    float* y = *(float**)args[0];
    float s = *(float*)args[1];
    int n = *(int*)args[2];
    for (unsigned i = 0; i < threads(grid, block) && (int)i < n; i++) y[i] *= s;
}
API const hy_dbl_kernel hy_dbl_kernel_sample_scale = {3, {sizeof(void*), sizeof(float), sizeof(int)}, scale};

/* z[i] = v + i */
static void fill(void** args, hy_dim3 grid, hy_dim3 block) {
    float* z = *(float**)args[0];
    float v = *(float*)args[1];
    int n = *(int*)args[2];
    for (unsigned i = 0; i < threads(grid, block) && (int)i < n; i++) z[i] = v + (float)i;
}
API const hy_dbl_kernel hy_dbl_kernel_sample_fill = {3, {sizeof(void*), sizeof(float), sizeof(int)}, fill};
