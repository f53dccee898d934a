/* The implicit cloth's spring pass and matrix-vector product on a CUDA GPU
 * (solvers/cloth_cuda.h): one thread per spring, one per vertex, through
 * the HY_HD functions of solvers/cloth_hd.h that the CPU runs
 * (--fmad=false), so each output has the CPU's bits; each vertex sums its
 * springs in CSR order, as on the CPU. The blocks a spring pass makes stay
 * on the GPU for the step's products; CG itself (its reductions) and the
 * multigrid's coarse levels stay on the host. */
#include <stdlib.h>
#include <string.h>

#include "solvers/cloth_cuda.h"
#include "solvers/cloth_hd.h"
#include "solvers/solvers_cuda.cuh"

static const char* const who = "cloth";

struct hy_cloth_gpu {
    int device;
    cudaStream_t stream;
    hy_cloth_hd_model d; /* the device's arrays */
    int32_t ns;
    int32_t* ends;
    double *rest, *stiff, *damp;
    double* mass;
    uint8_t* fixed;
    int32_t *adj_start, *adj_spring4, *adj_other3;
    double *block, *rhs_s;
    uint8_t* held;
    double* ch;
    double *x, *v, *p, *y;
    int64_t up, down;
};

__global__ void __launch_bounds__(SOLVER_BLOCK)
    cloth_spring_kernel(int32_t ns, const int32_t* __restrict__ ends, const double* __restrict__ stiff,
                        const double* __restrict__ damp, const double* __restrict__ rest,
                        const double* __restrict__ x0, const double* __restrict__ v0, double dt,
                        double* __restrict__ block, double* __restrict__ rhs_s) {
    int64_t s = (int64_t)blockIdx.x * SOLVER_BLOCK + threadIdx.x;
    if (s >= ns) return;
    hy_cloth_hd_spring(ends[2 * s], ends[2 * s + 1], stiff[s], damp[s], rest[s], x0, v0, dt, block + 4 * s,
                       rhs_s + 3 * s);
}

__global__ void __launch_bounds__(SOLVER_BLOCK) cloth_matvec_kernel(hy_cloth_hd_model m, const double* __restrict__ x,
                                                                    double* __restrict__ y) {
    int64_t v = (int64_t)blockIdx.x * SOLVER_BLOCK + threadIdx.x;
    if (v >= m.nv) return;
    hy_cloth_hd_matvec_row(&m, v, x, y + 3 * v);
}

extern "C" void hy_cloth_gpu_destroy(hy_cloth_gpu* g) {
    if (!g) return;
    (void)cudaSetDevice(g->device);
    void* bufs[] = {g->ends,       g->rest,  g->stiff, g->damp, g->mass, g->fixed, g->adj_start,
                    g->adj_spring4, g->adj_other3, g->block, g->rhs_s, g->held, g->ch,
                    g->x,          g->v,     g->p,     g->y};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) cudaFree(bufs[i]);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
}

static hy_status create(int device, hy_cloth_gpu* g, const hy_cloth_hd_model* m, const int32_t* ends,
                        const double* rest, const double* stiff, const double* damp) {
    FCK(cudaSetDevice(device));
    FCK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    size_t nv = (size_t)m->nv, ns = (size_t)m->ns;
    int64_t b = 0;
    hy_status s = HY_OK;
    if (!s) s = solver_up(who, device, g->stream, &g->ends, ends, 2 * ns, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->rest, rest, ns, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->stiff, stiff, ns, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->damp, damp, ns, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->mass, m->mass, nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->fixed, m->fixed, nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->adj_start, m->adj_start, nv + 1, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->adj_spring4, m->adj_spring4, 2 * ns, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->adj_other3, m->adj_other3, 2 * ns, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->block, (const double*)NULL, 4 * ns, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->rhs_s, (const double*)NULL, 3 * ns, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->held, (const uint8_t*)NULL, nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->ch, (const double*)NULL, 9 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->x, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->v, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->p, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->y, (const double*)NULL, 3 * nv, &b);
    if (s) return s;
    FCK(cudaStreamSynchronize(g->stream));
    g->up += b;
    g->ns = m->ns;
    g->d = *m;
    g->d.mass = g->mass, g->d.fixed = g->fixed, g->d.adj_start = g->adj_start;
    g->d.adj_spring4 = g->adj_spring4, g->d.adj_other3 = g->adj_other3, g->d.block = g->block;
    g->d.held = g->held, g->d.ch = g->ch, g->d.constrained = 0;
    return HY_OK;
}

extern "C" hy_status hy_cloth_gpu_create(int device, const hy_cloth_hd_model* m, const int32_t* ends,
                                         const double* rest, const double* stiff, const double* damp,
                                         hy_cloth_gpu** out) {
    if (!out || !m || !ends || !rest || !stiff || !damp)
        return hy_fail(HY_ERR_INVALID_ARG, "cloth: cuda:%d: NULL model or output", device);
    *out = NULL;
    int count = solver_gpu_count();
    if (device < 0 || device >= count)
        return hy_fail(HY_ERR_UNSUPPORTED, "cloth: no GPU cuda:%d (%d found)", device, count);
    hy_cloth_gpu* g = (hy_cloth_gpu*)calloc(1, sizeof *g);
    if (!g) return hy_fail(HY_ERR_NOMEM, "cloth: out of memory for a GPU context");
    g->device = device;
    hy_status s = create(device, g, m, ends, rest, stiff, damp);
    if (s) {
        hy_cloth_gpu_destroy(g);
        return s;
    }
    *out = g;
    return HY_OK;
}

extern "C" hy_status hy_cloth_gpu_springs(hy_cloth_gpu* g, const double* x0, const double* v0, double dt,
                                          double* block, double* rhs_s) {
    if (!g || !x0 || !v0 || !block || !rhs_s)
        return hy_fail(HY_ERR_INVALID_ARG, "cloth: GPU spring pass: NULL argument");
    int device = g->device;
    size_t n3 = 3 * (size_t)g->d.nv, ns = (size_t)g->ns;
    FCK(cudaSetDevice(device));
    FCK(cudaMemcpyAsync(g->x, x0, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaMemcpyAsync(g->v, v0, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    if (ns > 0)
        cloth_spring_kernel<<<solver_blocks((int64_t)ns), SOLVER_BLOCK, 0, g->stream>>>(
            g->ns, g->ends, g->stiff, g->damp, g->rest, g->x, g->v, dt, g->block, g->rhs_s);
    FCK(cudaGetLastError());
    FCK(cudaMemcpyAsync(block, g->block, sizeof(double) * 4 * ns, cudaMemcpyDeviceToHost, g->stream));
    FCK(cudaMemcpyAsync(rhs_s, g->rhs_s, sizeof(double) * 3 * ns, cudaMemcpyDeviceToHost, g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    g->up += (int64_t)(2 * sizeof(double) * n3);
    g->down += (int64_t)(7 * sizeof(double) * ns);
    return HY_OK;
}

extern "C" hy_status hy_cloth_gpu_held(hy_cloth_gpu* g, int constrained, const uint8_t* held, const double* ch) {
    if (!g || (constrained && (!held || !ch)))
        return hy_fail(HY_ERR_INVALID_ARG, "cloth: GPU held vertices: NULL argument");
    int device = g->device;
    size_t nv = (size_t)g->d.nv;
    g->d.constrained = 0;
    if (!constrained) return HY_OK;
    FCK(cudaSetDevice(device));
    FCK(cudaMemcpyAsync(g->held, held, nv, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaMemcpyAsync(g->ch, ch, sizeof(double) * 9 * nv, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    g->up += (int64_t)(nv + sizeof(double) * 9 * nv);
    g->d.constrained = 1;
    return HY_OK;
}

extern "C" hy_status hy_cloth_gpu_apply(hy_cloth_gpu* g, double diag_scale, const double* x, double* y) {
    if (!g || !x || !y) return hy_fail(HY_ERR_INVALID_ARG, "cloth: GPU product: NULL argument");
    int device = g->device;
    size_t n3 = 3 * (size_t)g->d.nv;
    FCK(cudaSetDevice(device));
    FCK(cudaMemcpyAsync(g->p, x, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    hy_cloth_hd_model d = g->d;
    d.diag_scale = diag_scale;
    if (d.nv > 0) cloth_matvec_kernel<<<solver_blocks(d.nv), SOLVER_BLOCK, 0, g->stream>>>(d, g->p, g->y);
    FCK(cudaGetLastError());
    FCK(cudaMemcpyAsync(y, g->y, sizeof(double) * n3, cudaMemcpyDeviceToHost, g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    g->up += (int64_t)(sizeof(double) * n3);
    g->down += (int64_t)(sizeof(double) * n3);
    return HY_OK;
}

extern "C" void hy_cloth_gpu_bytes(const hy_cloth_gpu* g, int64_t* up, int64_t* down) {
    if (up) *up = g ? g->up : 0;
    if (down) *down = g ? g->down : 0;
}
