/* The mass-spring objects' spring pass and matrix-vector product on a CUDA
 * GPU (solvers/massspring_cuda.h): one thread per spring, one per vertex,
 * through the HY_HD functions of solvers/massspring_hd.h that the CPU runs
 * (--fmad=false), so each output has the CPU's bits; each vertex sums its
 * springs in spring order, as on the CPU. */
#include <stdlib.h>
#include <string.h>

#include "solvers/batch_hd.h"
#include "solvers/massspring_cuda.h"
#include "solvers/massspring_hd.h"
#include "solvers/solvers_cuda.cuh"

static const char* const who = "mass-spring";

struct hy_ms_gpu {
    int device;
    cudaStream_t stream;
    hy_ms_hd_model d; /* the device's arrays */
    int32_t* spring;
    double* rest_len;
    double* mass;
    uint8_t* fixed;
    int32_t *inc_start, *inc;
    double *x, *v, *p, *y, *coef, *sforce;
    int64_t bytes; /* moved between the host and the GPU since made, both ways */
};

__global__ void __launch_bounds__(SOLVER_BLOCK)
    ms_spring_kernel(int32_t ns, const int32_t* __restrict__ spring, const double* __restrict__ rest_len, double k,
                     double c, const double* __restrict__ x0, const double* __restrict__ v0, double dt,
                     double* __restrict__ coef, double* __restrict__ sforce) {
    int64_t s = (int64_t)blockIdx.x * SOLVER_BLOCK + threadIdx.x;
    if (s >= ns) return;
    hy_ms_hd_spring(spring[2 * s], spring[2 * s + 1], k, c, rest_len[s], x0, v0, dt, coef + 5 * s, sforce + 3 * s);
}

__global__ void __launch_bounds__(SOLVER_BLOCK) ms_matvec_kernel(hy_ms_hd_model m, const double* __restrict__ p,
                                                                 double* __restrict__ y) {
    int32_t v = (int32_t)(blockIdx.x * SOLVER_BLOCK + threadIdx.x);
    if (v >= m.nv) return;
    hy_ms_hd_matvec_vertex(&m, v, p, y + 3 * (int64_t)v);
}

extern "C" void hy_ms_gpu_destroy(hy_ms_gpu* g) {
    if (!g) return;
    (void)cudaSetDevice(g->device);
    void* bufs[] = {g->spring, g->rest_len, g->mass, g->fixed, g->inc_start, g->inc,
                    g->x,      g->v,        g->p,    g->y,     g->coef,      g->sforce};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) cudaFree(bufs[i]);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
}

static hy_status create(int device, hy_ms_gpu* g, const hy_ms_hd_model* m) {
    FCK(cudaSetDevice(device));
    FCK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    size_t nv = (size_t)m->nv, ns = (size_t)m->ns;
    int64_t b = 0;
    hy_status s = HY_OK;
    if (!s) s = solver_up(who, device, g->stream, &g->spring, m->spring, 2 * ns, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->rest_len, m->rest_len, ns, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->mass, m->mass, nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->fixed, m->fixed, nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->inc_start, m->inc_start, nv + 1, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->inc, m->inc, 2 * ns, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->x, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->v, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->p, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->y, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->coef, (const double*)NULL, 5 * ns, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->sforce, (const double*)NULL, 3 * ns, &b);
    if (s) return s;
    FCK(cudaStreamSynchronize(g->stream));
    g->bytes += b;
    g->d = *m;
    g->d.spring = g->spring, g->d.rest_len = g->rest_len, g->d.mass = g->mass, g->d.fixed = g->fixed;
    g->d.inc_start = g->inc_start, g->d.inc = g->inc, g->d.coef = g->coef, g->d.sforce = g->sforce;
    return HY_OK;
}

extern "C" hy_status hy_ms_gpu_create(int device, const hy_ms_hd_model* m, hy_ms_gpu** out) {
    if (!out || !m) return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: cuda:%d: NULL model or output", device);
    *out = NULL;
    int count = solver_gpu_count();
    if (device < 0 || device >= count)
        return hy_fail(HY_ERR_UNSUPPORTED, "mass-spring: no GPU cuda:%d (%d found)", device, count);
    hy_ms_gpu* g = (hy_ms_gpu*)calloc(1, sizeof *g);
    if (!g) return hy_fail(HY_ERR_NOMEM, "mass-spring: out of memory for a GPU context");
    g->device = device;
    hy_status s = create(device, g, m);
    if (s) {
        hy_ms_gpu_destroy(g);
        return s;
    }
    *out = g;
    return HY_OK;
}

extern "C" hy_status hy_ms_gpu_springs(hy_ms_gpu* g, const hy_ms_hd_model* m, const double* x0, const double* v0,
                                       double dt) {
    if (!g || !m || !x0 || !v0) return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: GPU spring pass: NULL argument");
    int device = g->device;
    size_t n3 = 3 * (size_t)m->nv, ns = (size_t)m->ns;
    FCK(cudaSetDevice(device));
    FCK(cudaMemcpyAsync(g->x, x0, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaMemcpyAsync(g->v, v0, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    if (ns > 0)
        ms_spring_kernel<<<solver_blocks((int64_t)ns), SOLVER_BLOCK, 0, g->stream>>>(
            m->ns, g->spring, g->rest_len, m->k, m->c, g->x, g->v, dt, g->coef, g->sforce);
    FCK(cudaGetLastError());
    FCK(cudaMemcpyAsync(m->coef, g->coef, sizeof(double) * 5 * ns, cudaMemcpyDeviceToHost, g->stream));
    FCK(cudaMemcpyAsync(m->sforce, g->sforce, sizeof(double) * 3 * ns, cudaMemcpyDeviceToHost, g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    g->bytes += (int64_t)(sizeof(double) * (2 * n3 + 8 * ns));
    return HY_OK;
}

extern "C" int64_t hy_ms_gpu_bytes(const hy_ms_gpu* g) { return g ? g->bytes : 0; }

extern "C" hy_status hy_ms_gpu_apply(hy_ms_gpu* g, const hy_ms_hd_model* m, const double* p, double* y) {
    if (!g || !m || !p || !y) return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: GPU apply: NULL argument");
    int device = g->device;
    size_t n3 = 3 * (size_t)m->nv;
    FCK(cudaSetDevice(device));
    FCK(cudaMemcpyAsync(g->p, p, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    hy_ms_hd_model d = g->d;
    d.diag_scale = m->diag_scale;
    if (m->nv > 0) ms_matvec_kernel<<<solver_blocks(m->nv), SOLVER_BLOCK, 0, g->stream>>>(d, g->p, g->y);
    FCK(cudaGetLastError());
    FCK(cudaMemcpyAsync(y, g->y, sizeof(double) * n3, cudaMemcpyDeviceToHost, g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    g->bytes += (int64_t)(sizeof(double) * 2 * n3);
    return HY_OK;
}

/* ---- small objects batched into one launch (solvers/batch_hd.h) */

/* Items: springs; vectors: x, v, p, y. */
enum { BX, BV, BP, BY, BVECS };

struct hy_ms_gpu_batch {
    solver_batch<hy_ms_hd_model, hy_ms_gpu> b;
};

__global__ void __launch_bounds__(SOLVER_BLOCK)
    ms_batch_spring_kernel(const hy_ms_hd_model* __restrict__ m, const int64_t* __restrict__ s_start,
                           const int64_t* __restrict__ v_start, int32_t nb, int64_t ns, const double* __restrict__ x,
                           const double* __restrict__ v, double dt) {
    int64_t i = (int64_t)blockIdx.x * SOLVER_BLOCK + threadIdx.x;
    if (i < ns) hy_ms_hd_batch_spring(m, s_start, v_start, nb, i, x, v, dt);
}

__global__ void __launch_bounds__(SOLVER_BLOCK)
    ms_batch_matvec_kernel(const hy_ms_hd_model* __restrict__ m, const int64_t* __restrict__ v_start, int32_t nb,
                           int64_t nv, const double* __restrict__ p, double* __restrict__ y) {
    int64_t i = (int64_t)blockIdx.x * SOLVER_BLOCK + threadIdx.x;
    if (i < nv) hy_ms_hd_batch_matvec_vertex(m, v_start, nb, i, p, y);
}

extern "C" void hy_ms_gpu_batch_destroy(hy_ms_gpu_batch* g) {
    if (!g) return;
    solver_batch_free(&g->b, hy_ms_gpu_destroy);
    free(g);
}

static int64_t ms_items(const hy_ms_hd_model* m) { return m->ns; }

extern "C" hy_status hy_ms_gpu_batch_create(int device, const hy_ms_hd_model* m, int32_t nb, hy_ms_gpu_batch** out) {
    if (!out || !m || nb < 1) return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: cuda:%d: a batch of %d objects", device, nb);
    *out = NULL;
    hy_ms_gpu_batch* g = (hy_ms_gpu_batch*)calloc(1, sizeof *g);
    if (!g) return hy_fail(HY_ERR_NOMEM, "mass-spring: out of memory for a GPU batch");
    hy_status s = solver_batch_make(who, &g->b, device, m, nb, hy_ms_gpu_create, ms_items, BVECS);
    if (s) {
        hy_ms_gpu_batch_destroy(g);
        return s;
    }
    *out = g;
    return HY_OK;
}

extern "C" hy_status hy_ms_gpu_batch_springs(hy_ms_gpu_batch* gb, const hy_ms_hd_model* m, const double* x0,
                                             const double* v0, double dt) {
    if (!gb || !m || !x0 || !v0) return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: GPU batch spring pass: NULL argument");
    solver_batch<hy_ms_hd_model, hy_ms_gpu>* g = &gb->b;
    int device = g->device;
    int64_t ns = g->hi_start[g->nb];
    size_t n3 = 3 * (size_t)g->hv_start[g->nb];
    FCK(cudaSetDevice(device));
    FCK(cudaMemcpyAsync(g->vec[BX], x0, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaMemcpyAsync(g->vec[BV], v0, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    if (ns > 0)
        ms_batch_spring_kernel<<<solver_blocks(ns), SOLVER_BLOCK, 0, g->stream>>>(g->models, g->i_start, g->v_start,
                                                                                 g->nb, ns, g->vec[BX], g->vec[BV], dt);
    FCK(cudaGetLastError());
    for (int32_t b = 0; b < g->nb; b++) {
        size_t bs = (size_t)m[b].ns;
        FCK(cudaMemcpyAsync(m[b].coef, g->host[b].coef, sizeof(double) * 5 * bs, cudaMemcpyDeviceToHost, g->stream));
        FCK(cudaMemcpyAsync(m[b].sforce, g->host[b].sforce, sizeof(double) * 3 * bs, cudaMemcpyDeviceToHost, g->stream));
    }
    FCK(cudaStreamSynchronize(g->stream));
    return HY_OK;
}

extern "C" hy_status hy_ms_gpu_batch_load(hy_ms_gpu_batch* gb, const hy_ms_hd_model* m) {
    if (!gb || !m) return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: GPU batch load: NULL argument");
    solver_batch<hy_ms_hd_model, hy_ms_gpu>* g = &gb->b;
    int device = g->device;
    FCK(cudaSetDevice(device));
    for (int32_t b = 0; b < g->nb; b++)
        FCK(cudaMemcpyAsync(g->host[b].coef, m[b].coef, sizeof(double) * 5 * (size_t)m[b].ns, cudaMemcpyHostToDevice,
                            g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    return HY_OK;
}

/* y = A p for the batch on its stream (p, y device vectors), not waited
 * for. */
static hy_status batch_product(solver_batch<hy_ms_hd_model, hy_ms_gpu>* g, const hy_ms_hd_model* m, const double* p,
                               double* y) {
    int device = g->device;
    int64_t nv = g->hv_start[g->nb];
    int changed = 0;
    for (int32_t b = 0; b < g->nb; b++) {
        changed |= g->host[b].diag_scale != m[b].diag_scale;
        g->host[b].diag_scale = m[b].diag_scale;
    }
    if (changed)
        FCK(cudaMemcpyAsync(g->models, g->host, sizeof *g->host * (size_t)g->nb, cudaMemcpyHostToDevice, g->stream));
    if (nv > 0)
        ms_batch_matvec_kernel<<<solver_blocks(nv), SOLVER_BLOCK, 0, g->stream>>>(g->models, g->v_start, g->nb, nv, p,
                                                                                 y);
    FCK(cudaGetLastError());
    return HY_OK;
}

extern "C" hy_status hy_ms_gpu_batch_apply(hy_ms_gpu_batch* gb, const hy_ms_hd_model* m, const double* p, double* y) {
    if (!gb || !m || !p || !y) return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: GPU batch apply: NULL argument");
    return solver_batch_apply(who, &gb->b, m, p, y, BP, BY, batch_product);
}

extern "C" int64_t hy_ms_gpu_batch_bytes(const hy_ms_gpu_batch* gb) {
    int64_t sum = 0;
    for (int32_t k = 0; gb && k < gb->b.nb; k++) sum += hy_ms_gpu_bytes(gb->b.obj[k]);
    return sum;
}

extern "C" hy_status hy_ms_gpu_batch_apply_resident(hy_ms_gpu_batch* gb, const hy_ms_hd_model* m, const double* p,
                                                    double* y) {
    if (!gb || !m || !p || !y) return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: GPU batch apply: NULL argument");
    return solver_batch_apply_resident(who, &gb->b, m, p, y, batch_product);
}
