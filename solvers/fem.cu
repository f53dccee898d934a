/* The corotational FEM's element and vertex passes on a CUDA GPU
 * (solvers/fem_cuda.h): one thread per element for the rotations and the
 * matrix-vector product's corner forces, one per vertex for the gather, all
 * through the HY_HD functions of solvers/fem_hd.h that the CPU runs, built
 * with --fmad=false, so each output has the CPU's bits. The vertex sums run
 * over each vertex's corners in element order, as on the CPU: no atomics,
 * nothing depends on the launch. A long solve's system assembled by
 * vertex rows (fem.c decides when, from the step's product count) is
 * built and applied one thread per row, hy_fem_hd_asm_row and
 * hy_fem_hd_asm_apply_row, the arithmetic of the CPU's lanes. The solve's
 * reductions (CG's dot products) are core/sum_hd.h's fixed-order sums, on
 * the host (solvers/cg.c) or on the GPU (solvers/cg.cu). */
#include <stdlib.h>
#include <string.h>

#include "solvers/batch_hd.h"
#include "solvers/fem_cuda.h"
#include "solvers/fem_hd.h"
#include "solvers/solvers_cuda.cuh"

#define FEM_BLOCK SOLVER_BLOCK
static const char* const who = "fem";

struct hy_fem_gpu {
    int device;
    cudaStream_t stream;
    int32_t nv, nt, nq;
    int32_t *tet, *inc_start, *inc;
    double *rest, *grad, *vol, *mass, *iso;
    uint8_t* fixed;
    double *x, *v, *p, *y, *rgrad, *efor, *fext, *extra, *rhs, *pinv;
    hy_fem_hd_model d; /* the device's arrays */
    /* the assembled system (hy_fem_gpu_asm_apply): the host's pattern, the
     * rows built here; a_val NULL until the first build */
    int32_t *a_start, *a_col, *a_slot, *l_start, *l_slot, *l_row;
    double* a_val;
    hy_fem_hd_asm da;
    double seconds_copy, seconds_kernel;
    int64_t bytes_up, bytes_down;
};

__global__ void __launch_bounds__(FEM_BLOCK)
    fem_rotate_kernel(int32_t nt, const int32_t* __restrict__ tet, const double* __restrict__ grad,
                      const double* __restrict__ vol, double mu, double lambda, const double* __restrict__ rest,
                      const double* __restrict__ x, const double* __restrict__ v, double vscale,
                      double* __restrict__ rgrad, double* __restrict__ efor) {
    int64_t e = (int64_t)blockIdx.x * FEM_BLOCK + threadIdx.x;
    if (e >= nt) return;
    hy_fem_hd_rotate(tet + 4 * e, grad + 12 * e, vol[e], mu, lambda, rest, x, v, vscale,
                     rgrad + hy_fem_hd_quad(e, 0), 4, efor + 12 * e);
}

__global__ void __launch_bounds__(FEM_BLOCK)
    fem_apply_kernel(int32_t nt, const int32_t* __restrict__ tet, const double* __restrict__ rgrad,
                     const double* __restrict__ vol, double mu, double lambda, const uint8_t* __restrict__ fixed,
                     const double* __restrict__ p, double* __restrict__ efor) {
    int64_t e = (int64_t)blockIdx.x * FEM_BLOCK + threadIdx.x;
    if (e >= nt) return;
    hy_fem_hd_apply_element(tet + 4 * e, rgrad + hy_fem_hd_quad(e, 0), 4, vol[e], mu, lambda, fixed, p,
                            efor + 12 * e);
}

__global__ void __launch_bounds__(FEM_BLOCK)
    fem_matvec_kernel(int32_t nv, const int32_t* __restrict__ inc_start, const int32_t* __restrict__ inc,
                      const double* __restrict__ efor, const uint8_t* __restrict__ fixed,
                      const double* __restrict__ mass, double diag_scale, double k_scale,
                      const double* __restrict__ p, double* __restrict__ y) {
    int32_t v = (int32_t)(blockIdx.x * FEM_BLOCK + threadIdx.x);
    if (v >= nv) return;
    double k[3] = {0, 0, 0};
    if (!fixed[v]) hy_fem_hd_gather(inc_start, inc, efor, v, k);
    hy_fem_hd_matvec_vertex(fixed[v], mass[v], diag_scale, k_scale, k, p + 3 * (int64_t)v, y + 3 * (int64_t)v);
}

__global__ void __launch_bounds__(FEM_BLOCK) fem_asm_row_kernel(hy_fem_hd_model m, hy_fem_hd_asm a) {
    int32_t v = (int32_t)(blockIdx.x * FEM_BLOCK + threadIdx.x);
    if (v < m.nv) hy_fem_hd_asm_row(&m, &a, v);
}

__global__ void __launch_bounds__(FEM_BLOCK)
    fem_asm_apply_kernel(int32_t nv, hy_fem_hd_asm a, const uint8_t* __restrict__ fixed, const double* __restrict__ p,
                         double* __restrict__ y) {
    int32_t v = (int32_t)(blockIdx.x * FEM_BLOCK + threadIdx.x);
    if (v < nv) hy_fem_hd_asm_apply_row(&a, fixed, p, v, y + 3 * (int64_t)v);
}

__global__ void __launch_bounds__(FEM_BLOCK)
    fem_rhs_kernel(hy_fem_hd_model m, double dt, double g0, double g1, double g2, const double* __restrict__ v0,
                   const double* __restrict__ f_ext, const double* __restrict__ extra, double* __restrict__ rhs) {
    int32_t v = (int32_t)(blockIdx.x * FEM_BLOCK + threadIdx.x);
    if (v >= m.nv) return;
    const double g[3] = {g0, g1, g2};
    hy_fem_hd_rhs_vertex(&m, v, dt, g, v0, f_ext, extra, rhs + 3 * (int64_t)v, m.pinv + 9 * (int64_t)v);
}

extern "C" int hy_fem_gpu_count(void) { return solver_gpu_count(); }

extern "C" void hy_fem_gpu_destroy(hy_fem_gpu* g) {
    if (!g) return;
    (void)cudaSetDevice(g->device);
    void* bufs[] = {g->tet, g->inc_start, g->inc,   g->rest,  g->grad, g->vol,  g->mass, g->iso, g->fixed,
                    g->x,   g->v,         g->p,     g->y,     g->rgrad, g->efor, g->fext, g->extra, g->rhs, g->pinv,
                    g->a_start, g->a_col, g->a_slot, g->l_start, g->l_slot, g->l_row, g->a_val};
    for (size_t i = 0; i < sizeof bufs / sizeof bufs[0]; i++) cudaFree(bufs[i]);
    if (g->stream) cudaStreamDestroy(g->stream);
    free(g);
}

/* The rotation's polar decomposition keeps a few 3x3 blocks per thread:
 * a stack for `kernel`'s locals on the current device. */
static hy_status raise_stack(int device, const void* kernel) {
    cudaFuncAttributes fa;
    FCK(cudaFuncGetAttributes(&fa, kernel));
    size_t stack = 0;
    FCK(cudaDeviceGetLimit(&stack, cudaLimitStackSize));
    if (stack < fa.localSizeBytes + 1024) FCK(cudaDeviceSetLimit(cudaLimitStackSize, fa.localSizeBytes + 1024));
    return HY_OK;
}

static hy_status create(int device, hy_fem_gpu* g, const hy_fem_hd_model* m) {
    FCK(cudaSetDevice(device));
    hy_status rs = raise_stack(device, (const void*)fem_rotate_kernel);
    if (rs) return rs;
    FCK(cudaStreamCreateWithFlags(&g->stream, cudaStreamNonBlocking));
    size_t nv = (size_t)m->nv, nt = (size_t)m->nt, nq = (size_t)m->nq;
    int64_t b = 0;
    hy_status s = HY_OK;
    if (!s) s = solver_up(who, device, g->stream, &g->tet, m->tet, 16 * nq, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->inc_start, m->inc_start, nv + 1, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->inc, m->inc, 4 * nt, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->rest, m->rest, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->grad, m->grad, 12 * nt, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->vol, m->vol, 4 * nq, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->mass, m->mass, nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->fixed, m->fixed, nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->iso, m->iso, nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->fext, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->extra, (const double*)NULL, 9 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->rhs, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->pinv, (const double*)NULL, 9 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->x, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->v, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->p, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->y, (const double*)NULL, 3 * nv, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->rgrad, (const double*)NULL, 48 * nq, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->efor, (const double*)NULL, 48 * nq, &b);
    if (s) return s;
    /* the last quad's padding lanes are read by the CPU's four-wide kernel:
     * zeros, as the host's scratch starts */
    FCK(cudaMemsetAsync(g->rgrad, 0, sizeof(double) * 48 * nq, g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    g->bytes_up += b;
    g->d = *m;
    g->d.tet = g->tet, g->d.rest = g->rest, g->d.grad = g->grad, g->d.vol = g->vol, g->d.mass = g->mass;
    g->d.fixed = g->fixed, g->d.inc_start = g->inc_start, g->d.inc = g->inc, g->d.rgrad = g->rgrad;
    g->d.efor = g->efor, g->d.iso = g->iso, g->d.pinv = g->pinv;
    return HY_OK;
}

extern "C" hy_status hy_fem_gpu_create(int device, const hy_fem_hd_model* m, hy_fem_gpu** out) {
    if (!out || !m) return hy_fail(HY_ERR_INVALID_ARG, "fem: cuda:%d: NULL model or output", device);
    *out = NULL;
    int count = hy_fem_gpu_count();
    if (device < 0 || device >= count)
        return hy_fail(HY_ERR_UNSUPPORTED, "fem: no GPU cuda:%d (%d found)", device, count);
    hy_fem_gpu* g = (hy_fem_gpu*)calloc(1, sizeof *g);
    if (!g) return hy_fail(HY_ERR_NOMEM, "fem: out of memory for a GPU context");
    g->device = device;
    g->nv = m->nv, g->nt = m->nt, g->nq = m->nq;
    hy_status s = create(device, g, m);
    if (s) {
        hy_fem_gpu_destroy(g);
        return s;
    }
    *out = g;
    return HY_OK;
}


extern "C" hy_status hy_fem_gpu_prepare(hy_fem_gpu* g, const hy_fem_hd_model* m, const double* x0, const double* v0,
                                        double vscale, double dt, const double gravity[3], const double* f_ext,
                                        const double* extra, double* rhs) {
    if (!g || !m || !x0 || !v0 || !gravity || !rhs) return hy_fail(HY_ERR_INVALID_ARG, "fem: GPU prepare: NULL argument");
    int device = g->device;
    size_t n3 = 3 * (size_t)g->nv;
    FCK(cudaSetDevice(device));
    double t0 = solver_now();
    FCK(cudaMemcpyAsync(g->x, x0, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaMemcpyAsync(g->v, v0, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    if (f_ext) FCK(cudaMemcpyAsync(g->fext, f_ext, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    if (extra) FCK(cudaMemcpyAsync(g->extra, extra, sizeof(double) * 3 * n3, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    double t1 = solver_now();
    if (g->nt > 0)
        fem_rotate_kernel<<<solver_blocks(g->nt), FEM_BLOCK, 0, g->stream>>>(g->nt, g->tet, g->grad, g->vol, m->mu,
                                                                            m->lambda, g->rest, g->x, g->v, vscale,
                                                                            g->rgrad, g->efor);
    FCK(cudaGetLastError());
    hy_fem_hd_model d = g->d;
    d.diag_scale = m->diag_scale, d.k_scale = m->k_scale;
    if (g->nv > 0)
        fem_rhs_kernel<<<solver_blocks(g->nv), FEM_BLOCK, 0, g->stream>>>(d, dt, gravity[0], gravity[1], gravity[2],
                                                                         g->v, f_ext ? g->fext : NULL,
                                                                         extra ? g->extra : NULL, g->rhs);
    FCK(cudaGetLastError());
    FCK(cudaStreamSynchronize(g->stream));
    double t2 = solver_now();
    FCK(cudaMemcpyAsync(rhs, g->rhs, sizeof(double) * n3, cudaMemcpyDeviceToHost, g->stream));
    FCK(cudaMemcpyAsync(m->pinv, g->pinv, sizeof(double) * 3 * n3, cudaMemcpyDeviceToHost, g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    double t3 = solver_now();
    g->seconds_copy += (t1 - t0) + (t3 - t2);
    g->seconds_kernel += t2 - t1;
    g->bytes_up += (int64_t)(sizeof(double) * n3 * (2 + (f_ext ? 1 : 0) + (extra ? 3 : 0)));
    g->bytes_down += (int64_t)(sizeof(double) * 4 * n3);
    return HY_OK;
}

/* One product of the prepared step: p up, the product's kernels
 * (launch(), on g's stream), y down; timed and counted. */
template <typename L>
static hy_status product(hy_fem_gpu* g, const double* p, double* y, L launch) {
    int device = g->device;
    size_t n3 = 3 * (size_t)g->nv;
    double t0 = solver_now();
    FCK(cudaMemcpyAsync(g->p, p, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    double t1 = solver_now();
    launch();
    FCK(cudaGetLastError());
    FCK(cudaStreamSynchronize(g->stream));
    double t2 = solver_now();
    FCK(cudaMemcpyAsync(y, g->y, sizeof(double) * n3, cudaMemcpyDeviceToHost, g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    double t3 = solver_now();
    g->seconds_copy += (t1 - t0) + (t3 - t2);
    g->seconds_kernel += t2 - t1;
    g->bytes_up += (int64_t)(sizeof(double) * n3);
    g->bytes_down += (int64_t)(sizeof(double) * n3);
    return HY_OK;
}

extern "C" hy_status hy_fem_gpu_apply(hy_fem_gpu* g, const hy_fem_hd_model* m, const double* p, double* y) {
    if (!g || !m || !p || !y) return hy_fail(HY_ERR_INVALID_ARG, "fem: GPU apply: NULL argument");
    int device = g->device;
    FCK(cudaSetDevice(device));
    return product(g, p, y, [&] {
        if (g->nt > 0)
            fem_apply_kernel<<<solver_blocks(g->nt), FEM_BLOCK, 0, g->stream>>>(g->nt, g->tet, g->rgrad, g->vol, m->mu,
                                                                               m->lambda, g->fixed, g->p, g->efor);
        if (g->nv > 0)
            fem_matvec_kernel<<<solver_blocks(g->nv), FEM_BLOCK, 0, g->stream>>>(
                g->nv, g->inc_start, g->inc, g->efor, g->fixed, g->mass, m->diag_scale, m->k_scale, g->p, g->y);
    });
}

/* The assembled system's pattern up (its bytes counted) and room for its
 * rows. */
static hy_status asm_up(hy_fem_gpu* g, const hy_fem_hd_asm* a) {
    int device = g->device;
    size_t nv = (size_t)g->nv, nt = (size_t)g->nt, nb = (size_t)a->a_start[nv], nl = (size_t)a->l_start[nv];
    int64_t b = 0;
    hy_status s = HY_OK;
    if (!s) s = solver_up(who, device, g->stream, &g->a_start, a->a_start, nv + 1, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->a_col, a->a_col, nb, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->a_slot, a->a_slot, 16 * nt, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->l_start, a->l_start, nv + 1, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->l_slot, a->l_slot, nl, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->l_row, a->l_row, nl, &b);
    if (!s) s = solver_up(who, device, g->stream, &g->a_val, (const double*)NULL, 12 * nb, &b);
    if (s) return s;
    FCK(cudaStreamSynchronize(g->stream));
    g->bytes_up += b;
    g->da = hy_fem_hd_asm{g->a_start, g->a_col, g->a_slot, g->l_start, g->l_slot, g->l_row, g->a_val};
    return HY_OK;
}

extern "C" hy_status hy_fem_gpu_asm_apply(hy_fem_gpu* g, const hy_fem_hd_model* m, const hy_fem_hd_asm* a, int build,
                                          const double* p, double* y) {
    if (!g || !m || !a || !p || !y) return hy_fail(HY_ERR_INVALID_ARG, "fem: GPU assembled apply: NULL argument");
    if (!build && !g->da.a_val)
        return hy_fail(HY_ERR_INVALID_ARG, "fem: cuda:%d: assembled apply before the rows were built", g->device);
    int device = g->device;
    FCK(cudaSetDevice(device));
    if (build && !g->da.a_val) {
        hy_status s = asm_up(g, a);
        if (s) return s;
    }
    hy_fem_hd_model d = g->d;
    d.diag_scale = m->diag_scale, d.k_scale = m->k_scale;
    return product(g, p, y, [&] {
        if (build && g->nv > 0) fem_asm_row_kernel<<<solver_blocks(g->nv), FEM_BLOCK, 0, g->stream>>>(d, g->da);
        if (g->nv > 0)
            fem_asm_apply_kernel<<<solver_blocks(g->nv), FEM_BLOCK, 0, g->stream>>>(g->nv, g->da, g->fixed, g->p, g->y);
    });
}

extern "C" void hy_fem_gpu_totals(const hy_fem_gpu* g, double* seconds_copy, double* seconds_kernel, int64_t* bytes_up,
                                  int64_t* bytes_down) {
    if (seconds_copy) *seconds_copy = g ? g->seconds_copy : 0.0;
    if (seconds_kernel) *seconds_kernel = g ? g->seconds_kernel : 0.0;
    if (bytes_up) *bytes_up = g ? g->bytes_up : 0;
    if (bytes_down) *bytes_down = g ? g->bytes_down : 0;
}

/* ---- small objects batched into one launch (solvers/batch_hd.h) */

/* Items: elements; vectors: x, v, p, y, rhs. */
enum { BX, BV, BP, BY, BRHS, BVECS };

struct hy_fem_gpu_batch {
    solver_batch<hy_fem_hd_model, hy_fem_gpu> b;
};

__global__ void __launch_bounds__(FEM_BLOCK)
    fem_batch_rotate_kernel(const hy_fem_hd_model* __restrict__ m, const int64_t* __restrict__ e_start,
                            const int64_t* __restrict__ v_start, int32_t nb, int64_t ne, const double* __restrict__ x,
                            const double* __restrict__ v, double vscale) {
    int64_t i = (int64_t)blockIdx.x * FEM_BLOCK + threadIdx.x;
    if (i < ne) hy_fem_hd_batch_rotate(m, e_start, v_start, nb, i, x, v, vscale);
}

__global__ void __launch_bounds__(FEM_BLOCK)
    fem_batch_rhs_kernel(const hy_fem_hd_model* __restrict__ m, const int64_t* __restrict__ v_start, int32_t nb,
                         int64_t nv, double dt, double g0, double g1, double g2, const double* __restrict__ v0,
                         double* __restrict__ rhs) {
    int64_t i = (int64_t)blockIdx.x * FEM_BLOCK + threadIdx.x;
    const double g[3] = {g0, g1, g2};
    if (i < nv) hy_fem_hd_batch_rhs_vertex(m, v_start, nb, i, dt, g, v0, rhs);
}

__global__ void __launch_bounds__(FEM_BLOCK)
    fem_batch_apply_kernel(const hy_fem_hd_model* __restrict__ m, const int64_t* __restrict__ e_start,
                           const int64_t* __restrict__ v_start, int32_t nb, int64_t ne, const double* __restrict__ p) {
    int64_t i = (int64_t)blockIdx.x * FEM_BLOCK + threadIdx.x;
    if (i < ne) hy_fem_hd_batch_apply_element(m, e_start, v_start, nb, i, p);
}

__global__ void __launch_bounds__(FEM_BLOCK)
    fem_batch_matvec_kernel(const hy_fem_hd_model* __restrict__ m, const int64_t* __restrict__ v_start, int32_t nb,
                            int64_t nv, const double* __restrict__ p, double* __restrict__ y) {
    int64_t i = (int64_t)blockIdx.x * FEM_BLOCK + threadIdx.x;
    if (i < nv) hy_fem_hd_batch_matvec_vertex(m, v_start, nb, i, p, y);
}

extern "C" void hy_fem_gpu_batch_destroy(hy_fem_gpu_batch* g) {
    if (!g) return;
    solver_batch_free(&g->b, hy_fem_gpu_destroy);
    free(g);
}

static int64_t fem_items(const hy_fem_hd_model* m) { return m->nt; }

extern "C" hy_status hy_fem_gpu_batch_create(int device, const hy_fem_hd_model* m, int32_t nb, hy_fem_gpu_batch** out) {
    if (!out || !m || nb < 1) return hy_fail(HY_ERR_INVALID_ARG, "fem: cuda:%d: a batch of %d objects", device, nb);
    *out = NULL;
    hy_fem_gpu_batch* g = (hy_fem_gpu_batch*)calloc(1, sizeof *g);
    if (!g) return hy_fail(HY_ERR_NOMEM, "fem: out of memory for a GPU batch");
    hy_status s = solver_batch_make(who, &g->b, device, m, nb, hy_fem_gpu_create, fem_items, BVECS);
    if (!s) s = raise_stack(device, (const void*)fem_batch_rotate_kernel);
    if (s) {
        hy_fem_gpu_batch_destroy(g);
        return s;
    }
    *out = g;
    return HY_OK;
}

/* The step's scalars of every object (m[b]) into the device views. */
static hy_status batch_scalars(solver_batch<hy_fem_hd_model, hy_fem_gpu>* g, const hy_fem_hd_model* m) {
    int device = g->device;
    int changed = 0;
    for (int32_t b = 0; b < g->nb; b++) {
        changed |= g->host[b].diag_scale != m[b].diag_scale || g->host[b].k_scale != m[b].k_scale;
        g->host[b].diag_scale = m[b].diag_scale, g->host[b].k_scale = m[b].k_scale;
    }
    if (changed)
        FCK(cudaMemcpyAsync(g->models, g->host, sizeof *g->host * (size_t)g->nb, cudaMemcpyHostToDevice, g->stream));
    return HY_OK;
}

extern "C" hy_status hy_fem_gpu_batch_prepare(hy_fem_gpu_batch* gb, const hy_fem_hd_model* m, const double* x0,
                                              const double* v0, double vscale, double dt, const double gravity[3],
                                              double* rhs) {
    if (!gb || !m || !x0 || !v0 || !gravity || !rhs)
        return hy_fail(HY_ERR_INVALID_ARG, "fem: GPU batch prepare: NULL argument");
    solver_batch<hy_fem_hd_model, hy_fem_gpu>* g = &gb->b;
    int device = g->device;
    int64_t ne = g->hi_start[g->nb], nv = g->hv_start[g->nb];
    size_t n3 = 3 * (size_t)nv;
    FCK(cudaSetDevice(device));
    hy_status s = batch_scalars(g, m);
    if (s) return s;
    FCK(cudaMemcpyAsync(g->vec[BX], x0, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    FCK(cudaMemcpyAsync(g->vec[BV], v0, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    if (ne > 0)
        fem_batch_rotate_kernel<<<solver_blocks(ne), FEM_BLOCK, 0, g->stream>>>(g->models, g->i_start, g->v_start, g->nb,
                                                                               ne, g->vec[BX], g->vec[BV], vscale);
    FCK(cudaGetLastError());
    if (nv > 0)
        fem_batch_rhs_kernel<<<solver_blocks(nv), FEM_BLOCK, 0, g->stream>>>(
            g->models, g->v_start, g->nb, nv, dt, gravity[0], gravity[1], gravity[2], g->vec[BV], g->vec[BRHS]);
    FCK(cudaGetLastError());
    FCK(cudaMemcpyAsync(rhs, g->vec[BRHS], sizeof(double) * n3, cudaMemcpyDeviceToHost, g->stream));
    for (int32_t b = 0; b < g->nb; b++)
        FCK(cudaMemcpyAsync(m[b].pinv, g->host[b].pinv, sizeof(double) * 9 * (size_t)m[b].nv, cudaMemcpyDeviceToHost,
                            g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    return HY_OK;
}

extern "C" hy_status hy_fem_gpu_batch_load(hy_fem_gpu_batch* gb, const hy_fem_hd_model* m) {
    if (!gb || !m) return hy_fail(HY_ERR_INVALID_ARG, "fem: GPU batch load: NULL argument");
    solver_batch<hy_fem_hd_model, hy_fem_gpu>* g = &gb->b;
    int device = g->device;
    FCK(cudaSetDevice(device));
    hy_status s = batch_scalars(g, m);
    if (s) return s;
    for (int32_t b = 0; b < g->nb; b++)
        FCK(cudaMemcpyAsync(g->host[b].rgrad, m[b].rgrad, sizeof(double) * 48 * (size_t)m[b].nq, cudaMemcpyHostToDevice,
                            g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    return HY_OK;
}

/* y = A p for the batch on its stream (p, y device vectors), not waited
 * for. */
static hy_status batch_product(solver_batch<hy_fem_hd_model, hy_fem_gpu>* g, const hy_fem_hd_model* m, const double* p,
                               double* y) {
    int device = g->device;
    int64_t ne = g->hi_start[g->nb], nv = g->hv_start[g->nb];
    hy_status s = batch_scalars(g, m);
    if (s) return s;
    if (ne > 0)
        fem_batch_apply_kernel<<<solver_blocks(ne), FEM_BLOCK, 0, g->stream>>>(g->models, g->i_start, g->v_start, g->nb,
                                                                              ne, p);
    FCK(cudaGetLastError());
    if (nv > 0)
        fem_batch_matvec_kernel<<<solver_blocks(nv), FEM_BLOCK, 0, g->stream>>>(g->models, g->v_start, g->nb, nv, p, y);
    FCK(cudaGetLastError());
    return HY_OK;
}

extern "C" hy_status hy_fem_gpu_batch_apply(hy_fem_gpu_batch* gb, const hy_fem_hd_model* m, const double* p, double* y) {
    if (!gb || !m || !p || !y) return hy_fail(HY_ERR_INVALID_ARG, "fem: GPU batch apply: NULL argument");
    return solver_batch_apply(who, &gb->b, m, p, y, BP, BY, batch_product);
}

extern "C" int64_t hy_fem_gpu_batch_bytes(const hy_fem_gpu_batch* gb) {
    int64_t sum = 0;
    for (int32_t k = 0; gb && k < gb->b.nb; k++) {
        int64_t up = 0, down = 0;
        hy_fem_gpu_totals(gb->b.obj[k], NULL, NULL, &up, &down);
        sum += up + down;
    }
    return sum;
}

extern "C" hy_status hy_fem_gpu_batch_apply_resident(hy_fem_gpu_batch* gb, const hy_fem_hd_model* m, const double* p,
                                                    double* y) {
    if (!gb || !m || !p || !y) return hy_fail(HY_ERR_INVALID_ARG, "fem: GPU batch apply: NULL argument");
    return solver_batch_apply_resident(who, &gb->b, m, p, y, batch_product);
}
