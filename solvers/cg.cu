/* A lockstep batch of CG solves with their vectors on a CUDA GPU
 * (solvers/cg_cuda.h). Per operation: one thread per vertex for the
 * vector updates (hy_cg_hd_batch_vertex), one warp per chunk of 32
 * entries for the sums (the products in lanes, summed by shuffling down by
 * 16, 8, 4, 2, 1: core/sum_hd.h's chunk tree), one block per solve for its
 * chunk sums' halving tree (hy_sum_hd_tree's levels, a barrier between
 * them), then the sums down. Built with --fmad=false: each value has the
 * host CG's bits. */
#include <stdlib.h>
#include <string.h>

#include "solvers/cg_cuda.h"
#include "solvers/solvers_cuda.cuh"

static const char* const who = "cg";

#define TREE_THREADS 256

struct hy_cg_gpu {
    int device;
    cudaStream_t stream;
    int32_t nb, cap_nb;
    int64_t n, cap_n, chunks, cap_chunks;
    int64_t *n_start, *c_start; /* device, cap_nb + 1 */
    uint8_t* live;              /* device, cap_nb */
    double *scal, *sums;        /* device, cap_nb and 2 cap_nb */
    double *b, *x, *r, *z, *p, *q, *blocks, *part; /* device; part 2 cap_chunks */
};

__global__ void cg_vertex_kernel(int op, const int64_t* __restrict__ n_start, int32_t nb,
                                 const uint8_t* __restrict__ live, const double* __restrict__ scal, int64_t nv,
                                 hy_cg_hd_vecs V) {
    int64_t v = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (v < nv) hy_cg_hd_batch_vertex(op, n_start, nb, live, scal, v, V);
}

/* One warp a chunk: lane j holds term j (+0.0 past the solve's end or for
 * a solve not live); the shuffles give lane 0 the chunk tree's sum. */
__global__ void cg_chunk_kernel(const int64_t* __restrict__ c_start, const int64_t* __restrict__ n_start, int32_t nb,
                                const uint8_t* __restrict__ live, int64_t chunks, int count, const double* u0,
                                const double* w0, const double* u1, const double* w1, double* part) {
    int64_t t = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    int64_t k = t / HY_SUM_CHUNK;
    int lane = (int)(t % HY_SUM_CHUNK);
    double s0 = 0.0, s1 = 0.0;
    if (k < chunks) {
        int64_t o;
        int len;
        int32_t b = hy_cg_hd_chunk(c_start, n_start, nb, k, &o, &len);
        if (live[b] && lane < len) {
            s0 = u0[o + lane] * w0[o + lane];
            if (count > 1) s1 = u1[o + lane] * w1[o + lane];
        }
    }
    for (int h = HY_SUM_CHUNK / 2; h >= 1; h >>= 1) {
        s0 = s0 + __shfl_down_sync(0xffffffffu, s0, h);
        s1 = s1 + __shfl_down_sync(0xffffffffu, s1, h);
    }
    if (k < chunks && lane == 0) {
        part[k] = s0;
        part[chunks + k] = s1;
    }
}

/* Block b: solve b's chunk sums by hy_sum_hd_tree's levels, in place. */
__global__ void cg_tree_kernel(const int64_t* __restrict__ c_start, const uint8_t* __restrict__ live, int64_t chunks,
                               int count, double* part, double* sums) {
    int32_t b = blockIdx.x;
    if (!live[b]) return;
    int64_t m = c_start[b + 1] - c_start[b];
    for (int k = 0; k < count; k++) {
        double* c = part + k * chunks + c_start[b];
        int64_t p = 1;
        while (p < m) p <<= 1;
        int64_t alive = m;
        for (int64_t h = p >> 1; h >= 1; h >>= 1) {
            int64_t top = alive < h ? alive : h;
            for (int64_t j = threadIdx.x; j < top; j += blockDim.x) c[j] = c[j] + (j + h < alive ? c[j + h] : 0.0);
            alive = top;
            __syncthreads();
        }
        if (threadIdx.x == 0) sums[2 * b + k] = m > 0 ? c[0] : 0.0;
    }
}

static void release(hy_cg_gpu* g) {
    void* d[] = {g->n_start, g->c_start, g->live, g->scal, g->sums, g->b, g->x,
                 g->r,       g->z,       g->p,    g->q,    g->blocks, g->part};
    for (size_t k = 0; k < sizeof d / sizeof *d; k++) cudaFree(d[k]);
    g->n_start = g->c_start = NULL;
    g->live = NULL;
    g->scal = g->sums = g->b = g->x = g->r = g->z = g->p = g->q = g->blocks = g->part = NULL;
    g->cap_nb = 0;
    g->cap_n = g->cap_chunks = 0;
}

extern "C" hy_status hy_cg_gpu_create(int device, hy_cg_gpu** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "cg: cuda:%d: NULL output", device);
    *out = NULL;
    int count = solver_gpu_count();
    if (device < 0 || device >= count) return hy_fail(HY_ERR_UNSUPPORTED, "cg: no GPU cuda:%d (%d found)", device, count);
    hy_cg_gpu* g = (hy_cg_gpu*)calloc(1, sizeof *g);
    if (!g) return hy_fail(HY_ERR_NOMEM, "cg: out of memory for a GPU context");
    g->device = device;
    cudaError_t e = cudaSetDevice(device);
    if (e == cudaSuccess) e = cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        free(g);
        return hy_cuda_error(who, device, "cudaStreamCreate", e);
    }
    *out = g;
    return HY_OK;
}

extern "C" void hy_cg_gpu_destroy(hy_cg_gpu* g) {
    if (!g) return;
    (void)cudaSetDevice(g->device);
    release(g);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
}

static hy_status reserve(hy_cg_gpu* g, int32_t nb, int64_t n, int64_t chunks) {
    int device = g->device;
    if (nb <= g->cap_nb && n <= g->cap_n && chunks <= g->cap_chunks) return HY_OK;
    release(g);
    size_t vn = sizeof(double) * (size_t)(n > 0 ? n : 1);
    FCK(cudaMalloc((void**)&g->n_start, sizeof(int64_t) * ((size_t)nb + 1)));
    FCK(cudaMalloc((void**)&g->c_start, sizeof(int64_t) * ((size_t)nb + 1)));
    FCK(cudaMalloc((void**)&g->live, (size_t)nb));
    FCK(cudaMalloc((void**)&g->scal, sizeof(double) * (size_t)nb));
    FCK(cudaMalloc((void**)&g->sums, 2 * sizeof(double) * (size_t)nb));
    double** v[] = {&g->b, &g->x, &g->r, &g->z, &g->p, &g->q};
    for (size_t k = 0; k < sizeof v / sizeof *v; k++) FCK(cudaMalloc((void**)v[k], vn));
    FCK(cudaMalloc((void**)&g->blocks, 3 * vn));
    FCK(cudaMalloc((void**)&g->part, 2 * sizeof(double) * (size_t)(chunks > 0 ? chunks : 1)));
    g->cap_nb = nb, g->cap_n = n, g->cap_chunks = chunks;
    return HY_OK;
}

extern "C" hy_status hy_cg_gpu_load(hy_cg_gpu* g, int32_t nb, const int64_t* n_start, const int64_t* c_start,
                                    const double* b, const double* x, const double* blocks, int64_t* bytes) {
    if (!g || nb < 1 || !n_start || !c_start || !b || !x || !blocks || !bytes)
        return hy_fail(HY_ERR_INVALID_ARG, "cg: GPU load: NULL or bad argument");
    int device = g->device;
    FCK(cudaSetDevice(device));
    int64_t n = n_start[nb], chunks = c_start[nb];
    hy_status s = reserve(g, nb, n, chunks);
    if (s) return s;
    g->nb = nb, g->n = n, g->chunks = chunks;
    size_t off = sizeof(int64_t) * ((size_t)nb + 1), vn = sizeof(double) * (size_t)n;
    FCK(cudaMemcpyAsync(g->n_start, n_start, off, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaMemcpyAsync(g->c_start, c_start, off, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaMemcpyAsync(g->b, b, vn, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaMemcpyAsync(g->x, x, vn, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaMemcpyAsync(g->blocks, blocks, 3 * vn, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    *bytes += (int64_t)(2 * off + 5 * vn);
    return HY_OK;
}

extern "C" void hy_cg_gpu_vectors(hy_cg_gpu* g, double** x, double** p, double** q) {
    *x = g ? g->x : NULL;
    *p = g ? g->p : NULL;
    *q = g ? g->q : NULL;
}

extern "C" hy_status hy_cg_gpu_op(hy_cg_gpu* g, int op, const uint8_t* live, const double* scal, double* sums,
                                  int64_t* bytes) {
    if (!g || !live || !sums || !bytes) return hy_fail(HY_ERR_INVALID_ARG, "cg: GPU operation: NULL argument");
    int device = g->device;
    FCK(cudaSetDevice(device));
    size_t nb = (size_t)g->nb;
    FCK(cudaMemcpyAsync(g->live, live, nb, cudaMemcpyHostToDevice, g->stream));
    *bytes += (int64_t)nb;
    if (scal) {
        FCK(cudaMemcpyAsync(g->scal, scal, sizeof(double) * nb, cudaMemcpyHostToDevice, g->stream));
        *bytes += (int64_t)(sizeof(double) * nb);
    }
    hy_cg_hd_vecs V = {g->b, g->blocks, g->x, g->r, g->z, g->p, g->q};
    int64_t nv = g->n / 3;
    if (op != HY_CG_PQ && nv > 0)
        cg_vertex_kernel<<<solver_blocks(nv), SOLVER_BLOCK, 0, g->stream>>>(op, g->n_start, g->nb, g->live, g->scal, nv,
                                                                           V);
    FCK(cudaGetLastError());
    const double *u[2] = {NULL, NULL}, *w[2] = {NULL, NULL};
    int count = hy_cg_hd_batch_sums(op, V, u, w);
    if (count > 0 && g->chunks > 0) {
        cg_chunk_kernel<<<solver_blocks(g->chunks * HY_SUM_CHUNK), SOLVER_BLOCK, 0, g->stream>>>(
            g->c_start, g->n_start, g->nb, g->live, g->chunks, count, u[0], w[0], u[1], w[1], g->part);
        FCK(cudaGetLastError());
        cg_tree_kernel<<<(unsigned int)nb, TREE_THREADS, 0, g->stream>>>(g->c_start, g->live, g->chunks, count, g->part,
                                                                       g->sums);
        FCK(cudaGetLastError());
        FCK(cudaMemcpyAsync(sums, g->sums, 2 * sizeof(double) * nb, cudaMemcpyDeviceToHost, g->stream));
        *bytes += (int64_t)(2 * sizeof(double) * nb);
    }
    FCK(cudaStreamSynchronize(g->stream));
    return HY_OK;
}

extern "C" hy_status hy_cg_gpu_result(hy_cg_gpu* g, double* x, int64_t* bytes) {
    if (!g || !x || !bytes) return hy_fail(HY_ERR_INVALID_ARG, "cg: GPU result: NULL argument");
    int device = g->device;
    FCK(cudaSetDevice(device));
    FCK(cudaMemcpy(x, g->x, sizeof(double) * (size_t)g->n, cudaMemcpyDeviceToHost));
    *bytes += (int64_t)(sizeof(double) * (size_t)g->n);
    return HY_OK;
}
