#include "solvers/cg.h"

#include <cblas.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/cg_hd.h"

/* Vector kernels run per fixed block of HY_CG_GRAIN entries, big enough
 * that the pool's hand-off cost (a few microseconds) is amortised and
 * small enough that a 140k-entry cloth system still splits into ~35 blocks
 * for work stealing. Every operation is solvers/cg_hd.h's, and every
 * reduction core/sum_hd.h's: each block writes the sums of its chunks of
 * 32 entries at their chunk indices (a block is a whole number of chunks),
 * and one halving tree combines them. So the result depends on n only,
 * not on the thread count, the block split or the CPU model, and a device
 * computes the same bits (solvers/cg.cu). */
#define HY_CG_GRAIN 4096

struct hy_cg_workspace {
    int64_t n, blocks;
    double *r, *z, *p, *q;
    double* bs;      /* b rescaled, for right-hand sides out of range (hy_cg_solve) */
    double* partial; /* 2 x chunks: two reductions' chunk sums */
};

static double* alloc_vec(int64_t n) {
    size_t bytes = ((size_t)(n > 0 ? n : 1) * sizeof(double) + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes);
}

hy_cg_workspace* hy_cg_workspace_create(int64_t n) {
    if (n < 0) return NULL;
    /* The pool's workers are the parallelism; OpenBLAS threading inside
     * them (the preconditioners' CHOLMOD factors) would oversubscribe the
     * cores. */
    openblas_set_num_threads(1);
    hy_cg_workspace* w = calloc(1, sizeof *w);
    if (!w) return NULL;
    w->n = n;
    w->blocks = hy_pool_blocks(n, HY_CG_GRAIN);
    w->r = alloc_vec(n);
    w->z = alloc_vec(n);
    w->p = alloc_vec(n);
    w->q = alloc_vec(n);
    w->bs = alloc_vec(n);
    w->partial = alloc_vec(2 * (hy_sum_hd_chunks(n) > 0 ? hy_sum_hd_chunks(n) : 1));
    if (!w->r || !w->z || !w->p || !w->q || !w->bs || !w->partial) {
        hy_cg_workspace_destroy(w);
        return NULL;
    }
    return w;
}

void hy_cg_workspace_destroy(hy_cg_workspace* w) {
    if (!w) return;
    free(w->r);
    free(w->z);
    free(w->p);
    free(w->q);
    free(w->bs);
    free(w->partial);
    free(w);
}

/* ---- block kernels; one context struct shared by all of them */

typedef struct cg_ctx {
    const double* inv_diag;
    int general; /* a preconditioner callback computes z between block passes */
    const double* b;
    double* x;
    hy_cg_workspace* w;
    int64_t chunks; /* of the solve's n: the second reduction's sums start there */
    double alpha, beta;
} cg_ctx;

/* The chunk sums of a . b over [begin, end) into reduction k's list. */
static void chunk_dots(const cg_ctx* c, int k, const double* a, const double* b, int64_t begin, int64_t end) {
    double* part = c->w->partial + k * c->chunks;
    int64_t o = begin;
    for (; o + HY_SUM_CHUNK <= end; o += HY_SUM_CHUNK) part[o / HY_SUM_CHUNK] = hy_sum_hd_dot32(a + o, b + o);
    if (o < end) part[o / HY_SUM_CHUNK] = hy_sum_hd_dot_chunk(a + o, b + o, (int)(end - o));
}

/* The per-entry operations over [begin, end), their vectors distinct
 * (restrict: the loops vectorise without alias checks). */
static void residual_range(int64_t begin, int64_t end, const double* restrict b, const double* restrict q,
                           double* restrict r) {
    for (int64_t i = begin; i < end; i++) hy_cg_hd_residual(i, b, q, r);
}

static void advance_range(int64_t begin, int64_t end, double alpha, const double* restrict p, const double* restrict q,
                          double* restrict x, double* restrict r) {
    for (int64_t i = begin; i < end; i++) hy_cg_hd_advance(i, alpha, p, q, x, r);
}

static void jacobi_range(int64_t begin, int64_t end, const double* restrict d, const double* restrict r,
                         double* restrict z) {
    for (int64_t i = begin; i < end; i++) z[i] = d[i] * r[i];
}

static void direction_range(int64_t begin, int64_t end, double beta, const double* restrict z, double* restrict p) {
    for (int64_t i = begin; i < end; i++) hy_cg_hd_direction(i, beta, z, p);
}

/* Reduction k's sum: the tree over its chunk sums (overwritten). */
static double reduce(const cg_ctx* c, int k) { return hy_sum_hd_tree(c->w->partial + k * c->chunks, c->chunks); }

/* Start: r = b - q (q = A x), z = M^-1 r, p = z; sums r.z (0) and r.r (1). */
static void start_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    cg_ctx* c = vctx;
    hy_cg_workspace* w = c->w;
    residual_range(begin, end, c->b, w->q, w->r);
    chunk_dots(c, 1, w->r, w->r, begin, end);
    if (c->general) return;
    const double* z = w->r;
    if (c->inv_diag) {
        jacobi_range(begin, end, c->inv_diag, w->r, w->z);
        z = w->z;
        chunk_dots(c, 0, w->r, z, begin, end);
    }
    memcpy(w->p + begin, z + begin, (size_t)(end - begin) * sizeof *z);
}

static void bnorm_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    cg_ctx* c = vctx;
    chunk_dots(c, 0, c->b, c->b, begin, end);
}

/* With a general preconditioner, after z = P^-1 r: sum r.z, and p = z at
 * the start. */
static void rz_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    cg_ctx* c = vctx;
    chunk_dots(c, 0, c->w->r, c->w->z, begin, end);
}

static void rz_start_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    cg_ctx* c = vctx;
    hy_cg_workspace* w = c->w;
    memcpy(w->p + begin, w->z + begin, (size_t)(end - begin) * sizeof *w->p);
    chunk_dots(c, 0, w->r, w->z, begin, end);
}

/* p.q for the step length. */
static void pq_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    cg_ctx* c = vctx;
    chunk_dots(c, 0, c->w->p, c->w->q, begin, end);
}

/* x += a p, r -= a q, z = M^-1 r; sums r.z (0, with a Jacobi scaling) and
 * r.r (1). Fused so each vector is streamed once per iteration. */
static void update_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    cg_ctx* c = vctx;
    hy_cg_workspace* w = c->w;
    advance_range(begin, end, c->alpha, w->p, w->q, c->x, w->r);
    chunk_dots(c, 1, w->r, w->r, begin, end);
    if (c->general || !c->inv_diag) return;
    jacobi_range(begin, end, c->inv_diag, w->r, w->z);
    chunk_dots(c, 0, w->r, w->z, begin, end);
}

/* p = z + beta p. */
static void direction_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    cg_ctx* c = vctx;
    hy_cg_workspace* w = c->w;
    const double* z = c->inv_diag || c->general ? w->z : w->r;
    direction_range(begin, end, c->beta, z, w->p);
}

/* The solve as a loop that hands each product to its caller
 * (hy_cg_steps, cg.h): start, then one product per iteration. */
int hy_cg_steps_begin(hy_cg_steps* s, hy_pool* pool, int64_t n, const double* inv_diag, hy_precond_fn precond,
                      void* pctx, const hy_cg_norm* norm, const double* b, double* x, double tol,
                      int32_t max_iterations, hy_cg_workspace* w) {
    memset(s, 0, sizeof *s);
    s->pool = pool;
    s->n = n;
    s->precond = precond;
    s->pctx = pctx;
    s->norm = norm;
    s->tol = tol;
    s->max_iterations = max_iterations;
    s->w = w;
    s->scale = 1.0;
    s->bnorm = 1.0; /* the early ends below report res / bnorm = 0 */
    if (!w || n <= 0 || n > w->n || !b || !x) return 0;
    s->chunks = hy_sum_hd_chunks(n);
    s->inv_diag = inv_diag;
    s->b = b;
    s->x = x;
    cg_ctx c = {.inv_diag = inv_diag, .general = precond != NULL, .b = b, .x = x, .w = w, .chunks = s->chunks};

    hy_pool_for(pool, n, HY_CG_GRAIN, bnorm_block, &c);
    double bnorm = sqrt(reduce(&c, 0));
    /* ||b||^2 out of range (a cloth of extreme density or size: forces
     * past 1e135 or below 1e-135), or b zero or not finite: the system is
     * solved for s b with s a power of 2 that brings b's largest entry near
     * 1, and x scaled back (exactly) at the end. Else the dot products
     * overflow or underflow and the solve stops at once with x as it was.
     * Systems in range take none of this and keep their bits. */
    if (!(bnorm > 0x1p-450 && bnorm < 0x1p450)) {
        double bmax = 0.0;
        for (int64_t i = 0; i < n; i++) bmax = fabs(b[i]) > bmax ? fabs(b[i]) : bmax;
        /* A zero right-hand side has the exact solution 0 (the relative
         * test would divide by zero); a non-finite one has none. */
        if (bmax == 0.0) {
            memset(x, 0, (size_t)n * sizeof *x);
            return 0;
        }
        if (!isfinite(bmax)) {
            s->res = NAN;
            return 0;
        }
        int e = ilogb(bmax);
        s->scale = ldexp(1.0, e > 1000 ? -1000 : e < -1000 ? 1000 : -e);
        for (int64_t i = 0; i < n; i++) {
            w->bs[i] = s->scale * b[i];
            double xs = s->scale * x[i];
            x[i] = isfinite(xs) ? xs : 0.0; /* a warm start out of range: start at 0 there */
        }
        s->b = c.b = w->bs;
        hy_pool_for(pool, n, HY_CG_GRAIN, bnorm_block, &c);
        bnorm = sqrt(reduce(&c, 0));
    }
    double b2norm = bnorm;

    /* the caller's measure of convergence: its norm, against its reference
     * vector (scaled with b: the norm is homogeneous) */
    if (norm) bnorm = sqrt(norm->norm2(norm->ctx, norm->reference ? norm->reference : b)) * s->scale;
    if (norm && !(bnorm > 0.0)) bnorm = b2norm;
    s->bnorm = bnorm;
    /* r = b - A x for the caller's starting guess (warm starts pay off) */
    s->in = x;
    s->out = w->q;
    s->phase = 1;
    return 1;
}

int hy_cg_steps_next(hy_cg_steps* s) {
    hy_cg_workspace* w = s->w;
    hy_pool* pool = s->pool;
    int64_t n = s->n;
    const hy_cg_norm* norm = s->norm;
    cg_ctx c = {
        .inv_diag = s->inv_diag, .general = s->precond != NULL, .b = s->b, .x = s->x, .w = w, .chunks = s->chunks};
    if (s->phase == 1) {
        hy_pool_for(pool, n, HY_CG_GRAIN, start_block, &c);
        double rr = reduce(&c, 1);
        s->res = norm ? sqrt(norm->norm2(norm->ctx, w->r)) : sqrt(rr);
        /* a start that already meets the tolerance never applies a general
         * preconditioner (whose set-up may be costly and done on first use) */
        if (s->precond && s->res > s->tol * s->bnorm && s->max_iterations > 0) {
            s->precond(s->pctx, w->r, w->z);
            hy_pool_for(pool, n, HY_CG_GRAIN, rz_start_block, &c);
            s->rz = reduce(&c, 0);
        } else {
            /* no preconditioner: z = r; a general one not applied: the
             * solve ends here and rz is not read */
            s->rz = s->inv_diag && !s->precond ? reduce(&c, 0) : rr;
        }
    } else if (s->phase == 2) {
        /* q = A p has come back */
        hy_pool_for(pool, n, HY_CG_GRAIN, pq_block, &c);
        double pq = reduce(&c, 0);
        /* p.Ap <= 0 means A is not SPD along p (or p vanished): stop with
         * the best x so far rather than divide by it. */
        if (!(pq > 0.0) || !(s->rz > 0.0)) return s->phase = 0;
        c.alpha = s->rz / pq;
        hy_pool_for(pool, n, HY_CG_GRAIN, update_block, &c);
        double rr = reduce(&c, 1);
        s->res = norm ? sqrt(norm->norm2(norm->ctx, w->r)) : sqrt(rr);
        s->iterations++;
        if (s->res <= s->tol * s->bnorm) return s->phase = 0;
        if (s->precond) {
            s->precond(s->pctx, w->r, w->z);
            hy_pool_for(pool, n, HY_CG_GRAIN, rz_block, &c);
        }
        double rz_new = s->precond || s->inv_diag ? reduce(&c, 0) : rr;
        c.beta = rz_new / s->rz;
        s->rz = rz_new;
        hy_pool_for(pool, n, HY_CG_GRAIN, direction_block, &c);
    } else {
        return 0;
    }
    if (s->iterations < s->max_iterations && s->res > s->tol * s->bnorm) {
        s->in = w->p;
        s->out = w->q;
        return s->phase = 2;
    }
    return s->phase = 0;
}

int32_t hy_cg_steps_end(hy_cg_steps* s, double* rel_residual) {
    if (s->scale != 1.0) {
        double back = 1.0 / s->scale; /* a power of 2: exact */
        for (int64_t i = 0; i < s->n; i++) s->x[i] *= back;
    }
    if (rel_residual) *rel_residual = s->res / s->bnorm;
    return s->iterations;
}

static int32_t solve(hy_pool* pool, int64_t n, hy_matvec_fn matvec, void* ctx, const double* inv_diag,
                     hy_precond_fn precond, void* pctx, const hy_cg_norm* norm, const double* b, double* x,
                     double tol, int32_t max_iterations, hy_cg_workspace* w, double* rel_residual) {
    if (!matvec) {
        if (rel_residual) *rel_residual = 0.0;
        return 0;
    }
    hy_cg_steps s;
    int more = hy_cg_steps_begin(&s, pool, n, inv_diag, precond, pctx, norm, b, x, tol, max_iterations, w);
    while (more) {
        matvec(ctx, s.in, s.out);
        more = hy_cg_steps_next(&s);
    }
    return hy_cg_steps_end(&s, rel_residual);
}

int32_t hy_cg_solve(hy_pool* pool, int64_t n, hy_matvec_fn matvec, void* ctx, const double* inv_diag,
                    const double* b, double* x, double tol, int32_t max_iterations, hy_cg_workspace* w,
                    double* rel_residual) {
    return solve(pool, n, matvec, ctx, inv_diag, NULL, NULL, NULL, b, x, tol, max_iterations, w, rel_residual);
}

int32_t hy_cg_solve_precond(hy_pool* pool, int64_t n, hy_matvec_fn matvec, void* ctx, hy_precond_fn precond,
                            void* pctx, const double* b, double* x, double tol, int32_t max_iterations,
                            hy_cg_workspace* w, double* rel_residual) {
    return solve(pool, n, matvec, ctx, NULL, precond, pctx, NULL, b, x, tol, max_iterations, w, rel_residual);
}

int32_t hy_cg_solve_norm(hy_pool* pool, int64_t n, hy_matvec_fn matvec, void* ctx, hy_precond_fn precond, void* pctx,
                         const hy_cg_norm* norm, const double* b, double* x, double tol, int32_t max_iterations,
                         hy_cg_workspace* w, double* rel_residual) {
    return solve(pool, n, matvec, ctx, NULL, precond, pctx, norm, b, x, tol, max_iterations, w, rel_residual);
}
