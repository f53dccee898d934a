/* What the solvers' CUDA files (solvers/fem.cu, solvers/massspring.cu)
 * share: a clock and CUDA errors as hy_status (core/cuda_util.cuh), the
 * GPU count, device copies of model arrays. CUDA C++ only. */
#ifndef HY_SOLVERS_SOLVERS_CUDA_CUH
#define HY_SOLVERS_SOLVERS_CUDA_CUH

#include <cuda_runtime.h>

#include "core/cuda_util.cuh"

/* Threads per block of the element, spring and vertex kernels. */
#define SOLVER_BLOCK 128

static inline double solver_now(void) { return hy_cuda_now(); }

static inline unsigned int solver_blocks(int64_t n) { return (unsigned int)((n + SOLVER_BLOCK - 1) / SOLVER_BLOCK); }

/* Return the failure of a CUDA call (with `who` and `device` in scope). */
#define FCK(call)                                                                 \
    do {                                                                          \
        cudaError_t fck_e_ = (call);                                              \
        if (fck_e_ != cudaSuccess) return hy_cuda_error(who, device, #call, fck_e_); \
    } while (0)

/* GPUs present (0 when the runtime finds none or fails). */
static inline int solver_gpu_count(void) {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
        (void)cudaGetLastError();
        return 0;
    }
    return n;
}

/* *d = a device array of n elements, h's contents sent when h is not NULL
 * (on stream st; the bytes sent added to *bytes). */
template <typename T>
static hy_status solver_up(const char* who, int device, cudaStream_t st, T** d, const T* h, size_t n, int64_t* bytes) {
    FCK(cudaMalloc((void**)d, sizeof(T) * (n ? n : 1)));
    if (h && n) {
        FCK(cudaMemcpyAsync(*d, h, sizeof(T) * n, cudaMemcpyHostToDevice, st));
        *bytes += (int64_t)(sizeof(T) * n);
    }
    return HY_OK;
}

/* What a batch of small objects (solvers/batch_hd.h) keeps on the device
 * besides each object's own context G (its arrays): the objects' device
 * views M (their step's scalars mirrored on the host), the item and vertex
 * offsets, and vectors over the batch's vertices (3 nv doubles each). */
template <typename M, typename G>
struct solver_batch {
    int device;
    int32_t nb;
    cudaStream_t stream;
    G** obj;                      /* each object's context (its stream idle) */
    M* host;                      /* the views on the host */
    M* models;                    /* ... on the device */
    int64_t *hi_start, *hv_start; /* item and vertex offsets (nb + 1), host */
    int64_t *i_start, *v_start;   /* ... device */
    double* vec[5];
};

/* Batch b of the nb models m on GPU `device`: each object's context made
 * by `create` (its view G::d), `items(m)` items each, then the views, the
 * offsets and `nvec` (<= 5) vectors up. */
template <typename M, typename G>
static hy_status solver_batch_make(const char* who, solver_batch<M, G>* b, int device, const M* m, int32_t nb,
                                   hy_status (*create)(int, const M*, G**), int64_t (*items)(const M*), int nvec) {
    b->device = device;
    b->nb = nb;
    b->obj = (G**)calloc((size_t)nb, sizeof *b->obj);
    b->host = (M*)calloc((size_t)nb, sizeof *b->host);
    b->hi_start = (int64_t*)calloc((size_t)nb + 1, sizeof(int64_t));
    b->hv_start = (int64_t*)calloc((size_t)nb + 1, sizeof(int64_t));
    if (!b->obj || !b->host || !b->hi_start || !b->hv_start)
        return hy_fail(HY_ERR_NOMEM, "%s: out of memory for a batch of %d objects", who, nb);
    for (int32_t k = 0; k < nb; k++) {
        hy_status s = create(device, &m[k], &b->obj[k]);
        if (s) return s;
        b->host[k] = b->obj[k]->d;
        b->hi_start[k + 1] = b->hi_start[k] + items(&m[k]);
        b->hv_start[k + 1] = b->hv_start[k] + m[k].nv;
    }
    FCK(cudaSetDevice(device));
    FCK(cudaStreamCreateWithFlags(&b->stream, cudaStreamNonBlocking));
    int64_t bytes = 0;
    size_t n3 = 3 * (size_t)b->hv_start[nb];
    hy_status s = solver_up(who, device, b->stream, &b->models, (const M*)b->host, (size_t)nb, &bytes);
    if (!s) s = solver_up(who, device, b->stream, &b->i_start, (const int64_t*)b->hi_start, (size_t)nb + 1, &bytes);
    if (!s) s = solver_up(who, device, b->stream, &b->v_start, (const int64_t*)b->hv_start, (size_t)nb + 1, &bytes);
    for (int k = 0; k < nvec && !s; k++) s = solver_up(who, device, b->stream, &b->vec[k], (const double*)NULL, n3, &bytes);
    if (s) return s;
    FCK(cudaStreamSynchronize(b->stream));
    return HY_OK;
}

/* Frees what solver_batch_make made (each context with `destroy`). */
template <typename M, typename G>
static void solver_batch_free(solver_batch<M, G>* b, void (*destroy)(G*)) {
    (void)cudaSetDevice(b->device);
    for (int32_t k = 0; b->obj && k < b->nb; k++) destroy(b->obj[k]);
    cudaFree(b->models);
    cudaFree(b->i_start);
    cudaFree(b->v_start);
    for (int k = 0; k < 5; k++) cudaFree(b->vec[k]);
    if (b->stream) cudaStreamDestroy(b->stream);
    free(b->obj);
    free(b->host);
    free(b->hi_start);
    free(b->hv_start);
}

/* A batch's product y = A p (`product`: its launches on the batch's
 * stream, not waited for) with p and y on the host: p up into vec[up], y
 * down from vec[down], waited for. */
template <typename M, typename G>
static hy_status solver_batch_apply(const char* who, solver_batch<M, G>* g, const M* m, const double* p, double* y,
                                    int up, int down,
                                    hy_status (*product)(solver_batch<M, G>*, const M*, const double*, double*)) {
    int device = g->device;
    size_t n3 = 3 * (size_t)g->hv_start[g->nb];
    FCK(cudaSetDevice(device));
    FCK(cudaMemcpyAsync(g->vec[up], p, sizeof(double) * n3, cudaMemcpyHostToDevice, g->stream));
    hy_status s = product(g, m, g->vec[up], g->vec[down]);
    if (s) return s;
    FCK(cudaMemcpyAsync(y, g->vec[down], sizeof(double) * n3, cudaMemcpyDeviceToHost, g->stream));
    FCK(cudaStreamSynchronize(g->stream));
    return HY_OK;
}

/* The same with p and y device vectors on the batch's GPU: nothing copied. */
template <typename M, typename G>
static hy_status solver_batch_apply_resident(const char* who, solver_batch<M, G>* g, const M* m, const double* p,
                                             double* y,
                                             hy_status (*product)(solver_batch<M, G>*, const M*, const double*, double*)) {
    int device = g->device;
    FCK(cudaSetDevice(device));
    hy_status s = product(g, m, p, y);
    if (s) return s;
    FCK(cudaStreamSynchronize(g->stream));
    return HY_OK;
}

#endif
