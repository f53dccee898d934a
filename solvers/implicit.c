/* Helpers of the implicit objects (solvers/implicit.h). */
#include "solvers/implicit.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/hd.h"
#include "solvers/cg_hd.h"

int hy_block3_inverse(const double A[9], double out[9]) { return mat_inverse(A, out); }

hy_status hy_implicit_check_input(const char* who, const double* rest, int32_t nv, const int32_t* tets, int32_t nt,
                                  const void* params, const int32_t* fixed, int32_t fixed_count) {
    if (!rest || !tets || !params || nv <= 0 || nt <= 0 || fixed_count < 0 || (fixed_count > 0 && !fixed))
        return hy_fail(HY_ERR_INVALID_ARG, "%s: need rest positions, tetrahedra and params (nv %d, nt %d, %d fixed)",
                       who, nv, nt, fixed_count);
    if (nt > INT32_MAX / 12 || nv > INT32_MAX / 9)
        return hy_fail(HY_ERR_INVALID_ARG, "%s: mesh too large (%d vertices, %d tetrahedra)", who, nv, nt);
    for (int32_t v = 0; v < nv; v++)
        for (int a = 0; a < 3; a++)
            if (!isfinite(rest[3 * v + a]))
                return hy_fail(HY_ERR_INVALID_ARG, "%s: vertex %d has a non-finite rest position", who, v);
    for (int32_t k = 0; k < fixed_count; k++)
        if (fixed[k] < 0 || fixed[k] >= nv)
            return hy_fail(HY_ERR_INVALID_ARG, "%s: fixed[%d] = %d is not a vertex index in [0, %d)", who, k, fixed[k],
                           nv);
    return HY_OK;
}

typedef struct helper_ctx {
    const double *blocks, *in, *x0, *v0, *dv, *mass;
    double *out, *x1, *v1;
    const uint8_t* fixed;
    double dt, scale, step, t[3]; /* step, t: the guess's s and t */
    int32_t* bad;
    uint8_t* let_go;
    int64_t nv;
} helper_ctx;

static void precond_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    helper_ctx* c = vctx;
    for (int64_t v = begin; v < end; v++) hy_cg_hd_block3(v, c->blocks, c->in, c->out);
}

void hy_implicit_block_precondition(hy_pool* pool, int32_t nv, const double* blocks, const double* r, double* z) {
    helper_ctx c = {.blocks = blocks, .in = r, .out = z};
    hy_pool_for(pool, nv, HY_IMPLICIT_GRAIN, precond_block, &c);
}

/* The guess's sums, each by core/sum_hd.h's fixed order over the
 * vertices: per chunk of 32 vertices its terms' chunk sum, GUESS_SUMS lists
 * of chunk sums one after the other (the pool's blocks are whole numbers
 * of chunks), each list then summed by the tree. */
#define GUESS_SUMS 5

int64_t hy_implicit_guess_scratch_size(int32_t nv) {
    int64_t chunks = hy_sum_hd_chunks(nv);
    return 3 * (int64_t)nv + GUESS_SUMS * (chunks > 0 ? chunks : 1);
}

/* dv = g = (M diag_scale)^-1 rhs (0 where fixed); sums: m' g (3), m' (4th:
 * the free mass), the fixed vertices (5th). */
static void guess_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    helper_ctx* c = vctx;
    int64_t chunks = hy_sum_hd_chunks(c->nv);
    for (int64_t v0 = begin; v0 < end; v0 += HY_SUM_CHUNK) {
        double t[GUESS_SUMS][HY_SUM_CHUNK];
        int len = end - v0 < HY_SUM_CHUNK ? (int)(end - v0) : HY_SUM_CHUNK;
        for (int j = 0; j < len; j++) {
            int64_t v = v0 + j;
            double mv = c->mass[v] * c->scale;
            t[4][j] = c->fixed[v] ? 1.0 : 0.0;
            t[3][j] = c->fixed[v] ? 0.0 : mv;
            for (int a = 0; a < 3; a++) {
                double g = c->fixed[v] ? 0.0 : c->in[3 * v + a] / mv;
                c->v1[3 * v + a] = g;
                t[a][j] = mv * g;
            }
        }
        for (int k = 0; k < GUESS_SUMS; k++) c->out[k * chunks + v0 / HY_SUM_CHUNK] = hy_sum_hd_chunk(t[k], len);
    }
}

/* With d = g - t, y = A g: sums d . (rhs - m' t) and d . (y - m' t), a
 * vertex's three terms added in order. */
static void guess_dots_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    helper_ctx* c = vctx;
    int64_t chunks = hy_sum_hd_chunks(c->nv);
    for (int64_t v0 = begin; v0 < end; v0 += HY_SUM_CHUNK) {
        double num[HY_SUM_CHUNK], den[HY_SUM_CHUNK];
        int len = end - v0 < HY_SUM_CHUNK ? (int)(end - v0) : HY_SUM_CHUNK;
        for (int j = 0; j < len; j++) {
            int64_t v = v0 + j;
            num[j] = den[j] = 0.0;
            if (c->fixed[v]) continue;
            double mv = c->mass[v] * c->scale;
            for (int a = 0; a < 3; a++) {
                size_t k = 3 * (size_t)v + (size_t)a;
                double d = c->v1[k] - c->t[a];
                num[j] += d * (c->in[k] - mv * c->t[a]);
                den[j] += d * (c->x1[k] - mv * c->t[a]);
            }
        }
        c->out[v0 / HY_SUM_CHUNK] = hy_sum_hd_chunk(num, len);
        c->out[chunks + v0 / HY_SUM_CHUNK] = hy_sum_hd_chunk(den, len);
    }
}

/* dv = t + s (g - t) on free vertices. */
static void guess_scale_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    helper_ctx* c = vctx;
    for (int64_t v = begin; v < end; v++)
        if (!c->fixed[v])
            for (int a = 0; a < 3; a++) c->v1[3 * v + a] = c->t[a] + c->step * (c->v1[3 * v + a] - c->t[a]);
}

void hy_implicit_mass_guess(const hy_implicit_ops* ops, void* model, hy_pool* pool, double diag_scale,
                            const double* rhs, double* dv, double* scratch) {
    int32_t nv = ops->vertex_count(model);
    int64_t chunks = hy_sum_hd_chunks(nv);
    double* y = scratch;
    double* part = scratch + 3 * (int64_t)nv;
    helper_ctx c = {.mass = ops->masses(model), .fixed = ops->fixed(model), .scale = diag_scale, .in = rhs,
                    .v1 = dv, .out = part, .nv = nv};
    hy_pool_for(pool, nv, HY_IMPLICIT_GRAIN, guess_block, &c);
    double sum[GUESS_SUMS];
    for (int k = 0; k < GUESS_SUMS; k++) sum[k] = hy_sum_hd_tree(part + k * chunks, chunks);
    /* held vertices: no momentum to keep, and a translation is no longer
     * free of stiffness, so the step scales g alone */
    for (int a = 0; a < 3; a++) c.t[a] = sum[4] == 0.0 && sum[3] > 0.0 ? sum[a] / sum[3] : 0.0;
    ops->apply(model, pool, dv, y);
    c.x1 = y;
    hy_pool_for(pool, nv, HY_IMPLICIT_GRAIN, guess_dots_block, &c);
    double num = hy_sum_hd_tree(part, chunks), den = hy_sum_hd_tree(part + chunks, chunks);
    /* A is SPD, so den > 0 unless g = t (a pure translation: s is moot) */
    double s = den > 0.0 && isfinite(num / den) ? num / den : 1.0;
    if (s == 1.0) return;
    c.step = s;
    hy_pool_for(pool, nv, HY_IMPLICIT_GRAIN, guess_scale_block, &c);
}

static void commit_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)worker;
    helper_ctx* c = vctx;
    c->bad[block] = -1;
    for (int64_t v = begin; v < end; v++) {
        for (int a = 0; a < 3; a++) {
            size_t k = 3 * (size_t)v + (size_t)a;
            if (c->fixed[v]) {
                c->x1[k] = c->x0[k];
                c->v1[k] = 0.0;
            } else {
                double w = c->v0[k] + c->dv[k];
                c->v1[k] = w;
                c->x1[k] = c->x0[k] + c->dt * w;
            }
            if ((!isfinite(c->x1[k]) || !isfinite(c->v1[k])) && c->bad[block] < 0) c->bad[block] = (int32_t)v;
        }
    }
}

hy_status hy_implicit_commit(hy_pool* pool, int32_t nv, const uint8_t* fixed, const double* x0, const double* v0,
                             const double* dv, double dt, double* x1, double* v1, int32_t* bad, const char* who) {
    helper_ctx c = {.fixed = fixed, .x0 = x0, .v0 = v0, .dv = dv, .x1 = x1, .v1 = v1, .dt = dt, .bad = bad};
    hy_pool_for(pool, nv, HY_IMPLICIT_GRAIN, commit_block, &c);
    int64_t blocks = hy_pool_blocks(nv, HY_IMPLICIT_GRAIN);
    for (int64_t b = 0; b < blocks; b++)
        if (bad[b] >= 0)
            return hy_fail(HY_ERR_NUMERIC, "%s: vertex %d is not finite after the step (dt %g)", who, bad[b], dt);
    return HY_OK;
}

/* ---- held vertices: CG on a system with some normal directions fixed */

typedef struct held_ops {
    hy_pool* pool;
    int32_t nv;
    const double* normal;
    hy_matvec_fn matvec;
    hy_precond_fn precond;
    void *mctx, *pctx;
} held_ops;

/* v = S v, S = I - n n^T at each held vertex (the normal component out). */
static void filter_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    helper_ctx* c = vctx;
    for (int64_t v = begin; v < end; v++) {
        const double* n = c->blocks + 3 * v;
        double* x = c->out + 3 * v;
        double d = n[0] * x[0] + n[1] * x[1] + n[2] * x[2];
        for (int a = 0; a < 3; a++) x[a] -= d * n[a];
    }
}

static void filter(const held_ops* h, double* v) {
    helper_ctx c = {.blocks = h->normal, .out = v};
    hy_pool_for(h->pool, h->nv, HY_IMPLICIT_GRAIN, filter_block, &c);
}

/* y = S A S p (S p = p: CG's vectors stay filtered) */
static void held_matvec(void* ctx, const double* p, double* y) {
    held_ops* h = ctx;
    h->matvec(h->mctx, p, y);
    filter(h, y);
}

/* z = S P^-1 S r */
static void held_precond(void* ctx, const double* r, double* z) {
    held_ops* h = ctx;
    h->precond(h->pctx, r, z);
    filter(h, z);
}

/* dv_c = -(v0 . n) n at the held vertices, 0 elsewhere: their normal
 * velocity brought to 0. */
static void held_start_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    helper_ctx* c = vctx;
    for (int64_t v = begin; v < end; v++) {
        const double* n = c->blocks + 3 * v;
        const double* u = c->v0 + 3 * v;
        double d = n[0] * u[0] + n[1] * u[1] + n[2] * u[2];
        for (int a = 0; a < 3; a++) c->out[3 * v + a] = -d * n[a];
    }
}

/* out = in - out (the right-hand side less A dv_c). */
static void minus_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    helper_ctx* c = vctx;
    for (int64_t k = 3 * begin; k < 3 * end; k++) c->out[k] = c->in[k] - c->out[k];
}

/* out += in */
static void add_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    helper_ctx* c = vctx;
    for (int64_t k = 3 * begin; k < 3 * end; k++) c->out[k] += c->in[k];
}

/* Held vertices whose constraint pulls them towards the surface, n . (A dv
 * - b) < 0 (in = b, out = A dv): their normal (x1, writable) cleared and
 * their let_go flag set (when there is one); per block the count in bad. */
static void release_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)worker;
    helper_ctx* c = vctx;
    int32_t count = 0;
    for (int64_t v = begin; v < end; v++) {
        double* n = c->x1 + 3 * v;
        if (n[0] == 0.0 && n[1] == 0.0 && n[2] == 0.0) continue;
        double f = 0.0;
        for (int a = 0; a < 3; a++) f += n[a] * (c->out[3 * v + a] - c->in[3 * v + a]);
        if (f < 0.0) {
            n[0] = n[1] = n[2] = 0.0;
            if (c->let_go) c->let_go[v] = 1;
            count++;
        }
    }
    c->bad[block] = count;
}

int64_t hy_implicit_held_scratch_size(int32_t nv) {
    return 6 * (int64_t)nv + hy_pool_blocks(nv, HY_IMPLICIT_GRAIN);
}

int32_t hy_implicit_held_solve(hy_pool* pool, int32_t nv, hy_matvec_fn matvec, void* mctx, hy_precond_fn precond,
                               void* pctx, const hy_implicit_guess* guess, hy_implicit_held* held, const double* v0,
                               const double* rhs, double* dv, double tol, int32_t max_iterations, hy_cg_workspace* cg,
                               double* rel_residual) {
    /* dv = dv_c + y: dv_c sets the held vertices' normal velocity to 0, y
     * (S y = y) solves S A S y = S (b - A dv_c) (the modified CG of Baraff
     * and Witkin, its filter S on every vector). */
    int64_t n = 3 * (int64_t)nv;
    double* dvc = held->scratch;
    double* b = held->scratch + n;
    int32_t* count = (int32_t*)(held->scratch + 2 * n);
    held_ops h = {pool, nv, held->normal, matvec, precond, mctx, pctx};
    helper_ctx c = {.blocks = held->normal, .v0 = v0, .out = dvc};
    hy_pool_for(pool, nv, HY_IMPLICIT_GRAIN, held_start_block, &c);
    matvec(mctx, dvc, b);
    c.in = rhs, c.out = b;
    hy_pool_for(pool, nv, HY_IMPLICIT_GRAIN, minus_block, &c);
    filter(&h, b);
    if (guess)
        guess->fn(guess->ctx, b, dv);
    else
        memset(dv, 0, (size_t)n * sizeof *dv);
    filter(&h, dv);
    int32_t it = hy_cg_solve_precond(pool, n, held_matvec, &h, held_precond, &h, b, dv, tol, max_iterations, cg,
                                     rel_residual);
    c.in = dvc, c.out = dv;
    hy_pool_for(pool, nv, HY_IMPLICIT_GRAIN, add_block, &c);
    /* the constraints' forces, n . (A dv - b); the holds that pull are let go */
    matvec(mctx, dv, b);
    c.in = rhs, c.out = b, c.x1 = held->normal, c.bad = count, c.let_go = held->let_go;
    hy_pool_for(pool, nv, HY_IMPLICIT_GRAIN, release_block, &c);
    held->released = 0;
    for (int64_t q = 0; q < hy_pool_blocks(nv, HY_IMPLICIT_GRAIN); q++) held->released += count[q];
    return it;
}

/* ---- one object's step */

typedef hy_implicit_bound step_ops;

static void step_matvec(void* ctx, const double* p, double* y) {
    step_ops* s = ctx;
    s->ops->apply(s->model, s->pool, p, y);
}

void hy_implicit_bound_precond(void* ctx, const double* r, double* z) {
    step_ops* s = ctx;
    s->ops->precondition(s->model, s->pool, r, z);
}

static void step_guess(void* ctx, const double* rhs, double* dv) {
    step_ops* s = ctx;
    s->ops->guess(s->model, s->pool, rhs, dv);
}

hy_status hy_implicit_step(const hy_implicit_ops* ops, void* model, hy_pool* pool, const double* x0, const double* v0,
                           double dt, const double gravity[3], const double* f_ext, int32_t cg_max_iterations,
                           double cg_tolerance, double* x1, double* v1, double* rhs, double* dv, hy_cg_workspace* cg,
                           hy_implicit_held* held, int32_t* iterations, double* residual, const char* who) {
    if (iterations) *iterations = 0;
    if (residual) *residual = 0.0;
    if (!model || !pool || !x0 || !v0 || !gravity || !x1 || !v1)
        return hy_fail(HY_ERR_INVALID_ARG, "%s solve: NULL model, pool, state or gravity", who);
    if (cg_max_iterations < 0 || !(cg_tolerance >= 0))
        return hy_fail(HY_ERR_INVALID_ARG, "%s solve: bad CG settings (%d iterations, tolerance %g)", who,
                       cg_max_iterations, cg_tolerance);
    if (held && (!held->normal || !held->scratch))
        return hy_fail(HY_ERR_INVALID_ARG, "%s solve: held vertices without normals or scratch", who);
    hy_status st = ops->prepare(model, pool, x0, v0, dt, gravity, f_ext, NULL, rhs);
    if (st) return st;
    int32_t nv = ops->vertex_count(model);
    step_ops s = {ops, model, pool};
    double rel = 0.0;
    int32_t it = 0;
    if (!held) {
        ops->guess(model, pool, rhs, dv);
        it = hy_cg_solve_precond(pool, 3 * (int64_t)nv, step_matvec, &s, hy_implicit_bound_precond, &s, rhs, dv,
                                 cg_tolerance, cg_max_iterations, cg, &rel);
    } else {
        hy_implicit_guess g = {step_guess, &s};
        it = hy_implicit_held_solve(pool, nv, step_matvec, &s, hy_implicit_bound_precond, &s, &g, held, v0, rhs, dv,
                                    cg_tolerance, cg_max_iterations, cg, &rel);
    }
    if (iterations) *iterations = it;
    if (residual) *residual = rel;
    return ops->commit(model, pool, x0, v0, dv, dt, x1, v1);
}
