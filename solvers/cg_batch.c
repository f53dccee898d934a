/* Lockstep CG solves in one memory (cg_batch.h): the host twin's passes,
 * or solvers/cg.cu's kernels. */
#include "solvers/cg_batch.h"

#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "solvers/cg_cuda.h"

/* Vertices and chunks per block of the twin's passes. */
#define TWIN_GRAIN 256

struct hy_cg_batch {
    int device;
    hy_cg_gpu* gpu;
    int32_t nb, cap_nb;
    int64_t *n_start, *c_start; /* nb + 1 */
    int64_t cap_n, cap_chunks;
    /* the twin's vectors (device -1) */
    double *b, *x, *r, *z, *p, *q, *blocks, *part;
    int64_t bytes;
};

hy_status hy_cg_batch_create(int device, hy_cg_batch** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "cg batch: NULL argument");
    *out = NULL;
    if (device < -1) return hy_fail(HY_ERR_INVALID_ARG, "cg batch: device %d (-1: the host, else cuda:D)", device);
    hy_cg_batch* c = calloc(1, sizeof *c);
    if (!c) return hy_fail(HY_ERR_NOMEM, "out of memory for a CG batch");
    c->device = device;
    if (device >= 0) {
        hy_status s = hy_cg_gpu_create(device, &c->gpu);
        if (s) {
            free(c);
            return s;
        }
    }
    *out = c;
    return HY_OK;
}

static void free_twin(hy_cg_batch* c) {
    double* v[] = {c->b, c->x, c->r, c->z, c->p, c->q, c->blocks, c->part};
    for (size_t k = 0; k < sizeof v / sizeof *v; k++) free(v[k]);
    c->b = c->x = c->r = c->z = c->p = c->q = c->blocks = c->part = NULL;
    c->cap_n = c->cap_chunks = 0;
}

void hy_cg_batch_destroy(hy_cg_batch* c) {
    if (!c) return;
    hy_cg_gpu_destroy(c->gpu);
    free_twin(c);
    free(c->n_start);
    free(c->c_start);
    free(c);
}

static hy_status reserve(hy_cg_batch* c, int32_t nb, int64_t n, int64_t chunks) {
    if (nb > c->cap_nb) {
        int64_t* ns = realloc(c->n_start, sizeof *ns * ((size_t)nb + 1));
        if (ns) c->n_start = ns;
        int64_t* cs = ns ? realloc(c->c_start, sizeof *cs * ((size_t)nb + 1)) : NULL;
        if (!cs) return hy_fail(HY_ERR_NOMEM, "out of memory for a CG batch of %d solves", nb);
        c->c_start = cs;
        c->cap_nb = nb;
    }
    if (c->device >= 0 || (n <= c->cap_n && chunks <= c->cap_chunks)) return HY_OK;
    free_twin(c);
    size_t vn = (size_t)(n > 0 ? n : 1);
    double** v[] = {&c->b, &c->x, &c->r, &c->z, &c->p, &c->q};
    int ok = 1;
    for (size_t k = 0; k < sizeof v / sizeof *v; k++) ok &= (*v[k] = calloc(vn, sizeof(double))) != NULL;
    ok &= (c->blocks = calloc(3 * vn, sizeof(double))) != NULL;
    ok &= (c->part = calloc(2 * (size_t)(chunks > 0 ? chunks : 1), sizeof(double))) != NULL;
    if (!ok) {
        free_twin(c);
        return hy_fail(HY_ERR_NOMEM, "out of memory for a CG batch of %lld entries", (long long)n);
    }
    c->cap_n = n, c->cap_chunks = chunks;
    return HY_OK;
}

hy_status hy_cg_batch_load(hy_cg_batch* c, int32_t nb, const int64_t* n_start, const double* b, const double* x,
                           const double* blocks) {
    if (!c || nb < 1 || !n_start || !b || !x || !blocks)
        return hy_fail(HY_ERR_INVALID_ARG, "cg batch: load: NULL or bad argument");
    int64_t chunks = 0;
    for (int32_t k = 0; k < nb; k++) {
        int64_t len = n_start[k + 1] - n_start[k];
        if (len < 0 || len % 3)
            return hy_fail(HY_ERR_INVALID_ARG, "cg batch: solve %d has %lld entries (not 3 a vertex)", k, (long long)len);
        chunks += hy_sum_hd_chunks(len);
    }
    hy_status s = reserve(c, nb, n_start[nb], chunks);
    if (s) return s;
    c->nb = nb;
    memcpy(c->n_start, n_start, sizeof *n_start * ((size_t)nb + 1));
    c->c_start[0] = 0;
    for (int32_t k = 0; k < nb; k++) c->c_start[k + 1] = c->c_start[k] + hy_sum_hd_chunks(n_start[k + 1] - n_start[k]);
    if (c->device >= 0) return hy_cg_gpu_load(c->gpu, nb, c->n_start, c->c_start, b, x, blocks, &c->bytes);
    size_t vn = sizeof(double) * (size_t)n_start[nb];
    memcpy(c->b, b, vn);
    memcpy(c->x, x, vn);
    memcpy(c->blocks, blocks, 3 * vn);
    return HY_OK;
}

void hy_cg_batch_vectors(hy_cg_batch* c, double** x, double** p, double** q) {
    if (c && c->device >= 0) {
        hy_cg_gpu_vectors(c->gpu, x, p, q);
        return;
    }
    *x = c ? c->x : NULL;
    *p = c ? c->p : NULL;
    *q = c ? c->q : NULL;
}

/* ---- the twin's passes: cg_hd.h's functions over the pool, as the
 * kernels run them */

typedef struct twin_ctx {
    const hy_cg_batch* c;
    int op, count;
    const uint8_t* live;
    const double* scal;
    hy_cg_hd_vecs V;
    const double *u[2], *w[2];
} twin_ctx;

static void vertex_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    const twin_ctx* t = vctx;
    for (int64_t v = begin; v < end; v++) hy_cg_hd_batch_vertex(t->op, t->c->n_start, t->c->nb, t->live, t->scal, v, t->V);
}

static void chunk_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    const twin_ctx* t = vctx;
    const hy_cg_batch* c = t->c;
    int64_t chunks = c->c_start[c->nb];
    for (int64_t k = begin; k < end; k++) {
        int64_t o;
        int len;
        int32_t b = hy_cg_hd_chunk(c->c_start, c->n_start, c->nb, k, &o, &len);
        for (int j = 0; j < t->count; j++)
            c->part[j * chunks + k] = t->live[b] ? hy_sum_hd_dot_chunk(t->u[j] + o, t->w[j] + o, len) : 0.0;
    }
}

hy_status hy_cg_batch_op(hy_cg_batch* c, hy_pool* pool, int op, const uint8_t* live, const double* scal, double* sums) {
    if (!c || !live || !sums || op < HY_CG_START || op > HY_CG_DIRECTION)
        return hy_fail(HY_ERR_INVALID_ARG, "cg batch: operation %d: NULL or bad argument", op);
    if (c->device >= 0) return hy_cg_gpu_op(c->gpu, op, live, scal, sums, &c->bytes);
    twin_ctx t = {c, op, 0, live, scal, {c->b, c->blocks, c->x, c->r, c->z, c->p, c->q}, {NULL, NULL}, {NULL, NULL}};
    if (op != HY_CG_PQ) hy_pool_for(pool, c->n_start[c->nb] / 3, TWIN_GRAIN, vertex_block, &t);
    t.count = hy_cg_hd_batch_sums(op, t.V, t.u, t.w);
    if (!t.count) return HY_OK;
    int64_t chunks = c->c_start[c->nb];
    hy_pool_for(pool, chunks, TWIN_GRAIN, chunk_block, &t);
    for (int32_t b = 0; b < c->nb; b++) {
        if (!live[b]) continue;
        for (int j = 0; j < t.count; j++)
            sums[2 * b + j] = hy_sum_hd_tree(c->part + j * chunks + c->c_start[b], c->c_start[b + 1] - c->c_start[b]);
    }
    return HY_OK;
}

hy_status hy_cg_batch_result(hy_cg_batch* c, double* x) {
    if (!c || !x) return hy_fail(HY_ERR_INVALID_ARG, "cg batch: result: NULL argument");
    if (c->device >= 0) return hy_cg_gpu_result(c->gpu, x, &c->bytes);
    memcpy(x, c->x, sizeof(double) * (size_t)c->n_start[c->nb]);
    return HY_OK;
}

int64_t hy_cg_batch_bytes(const hy_cg_batch* c) { return c ? c->bytes : 0; }
