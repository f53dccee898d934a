/* Helpers of the implicit objects (solvers/implicit.h). */
#include "solvers/implicit.h"

#include <math.h>
#include <string.h>

#include "core/error.h"

int hy_block3_inverse(const double A[9], double out[9]) {
    double d = A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
               A[2] * (A[3] * A[7] - A[4] * A[6]);
    if (!(fabs(d) > 0) || !isfinite(d)) return 0;
    double s = 1.0 / d;
    out[0] = (A[4] * A[8] - A[5] * A[7]) * s;
    out[1] = (A[2] * A[7] - A[1] * A[8]) * s;
    out[2] = (A[1] * A[5] - A[2] * A[4]) * s;
    out[3] = (A[5] * A[6] - A[3] * A[8]) * s;
    out[4] = (A[0] * A[8] - A[2] * A[6]) * s;
    out[5] = (A[2] * A[3] - A[0] * A[5]) * s;
    out[6] = (A[3] * A[7] - A[4] * A[6]) * s;
    out[7] = (A[1] * A[6] - A[0] * A[7]) * s;
    out[8] = (A[0] * A[4] - A[1] * A[3]) * s;
    return 1;
}

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
    const double *blocks, *in, *x0, *v0, *dv;
    double *out, *x1, *v1;
    const uint8_t* fixed;
    double dt;
    int32_t* bad;
} helper_ctx;

static void precond_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    helper_ctx* c = vctx;
    for (int64_t v = begin; v < end; v++) {
        const double* P = c->blocks + 9 * v;
        const double* r = c->in + 3 * v;
        double* z = c->out + 3 * v;
        for (int a = 0; a < 3; a++) z[a] = P[3 * a] * r[0] + P[3 * a + 1] * r[1] + P[3 * a + 2] * r[2];
    }
}

void hy_implicit_block_precondition(hy_pool* pool, int32_t nv, const double* blocks, const double* r, double* z) {
    helper_ctx c = {.blocks = blocks, .in = r, .out = z};
    hy_pool_for(pool, nv, HY_IMPLICIT_GRAIN, precond_block, &c);
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

typedef struct step_ops {
    const hy_implicit_ops* ops;
    void* model;
    hy_pool* pool;
} step_ops;

static void step_matvec(void* ctx, const double* p, double* y) {
    step_ops* s = ctx;
    s->ops->apply(s->model, s->pool, p, y);
}

static void step_precond(void* ctx, const double* r, double* z) {
    step_ops* s = ctx;
    s->ops->precondition(s->model, s->pool, r, z);
}

hy_status hy_implicit_step(const hy_implicit_ops* ops, void* model, hy_pool* pool, const double* x0, const double* v0,
                           double dt, const double gravity[3], const double* f_ext, int32_t cg_max_iterations,
                           double cg_tolerance, double* x1, double* v1, double* rhs, double* dv, hy_cg_workspace* cg,
                           int32_t* iterations, double* residual, const char* who) {
    if (iterations) *iterations = 0;
    if (residual) *residual = 0.0;
    if (!model || !pool || !x0 || !v0 || !gravity || !x1 || !v1)
        return hy_fail(HY_ERR_INVALID_ARG, "%s solve: NULL model, pool, state or gravity", who);
    if (cg_max_iterations < 0 || !(cg_tolerance >= 0))
        return hy_fail(HY_ERR_INVALID_ARG, "%s solve: bad CG settings (%d iterations, tolerance %g)", who,
                       cg_max_iterations, cg_tolerance);
    hy_status st = ops->prepare(model, pool, x0, v0, dt, gravity, f_ext, NULL, rhs);
    if (st) return st;
    int64_t n = 3 * (int64_t)ops->vertex_count(model);
    memset(dv, 0, (size_t)n * sizeof *dv);
    step_ops s = {ops, model, pool};
    double rel = 0.0;
    int32_t it = hy_cg_solve_precond(pool, n, step_matvec, &s, step_precond, &s, rhs, dv, cg_tolerance,
                                     cg_max_iterations, cg, &rel);
    if (iterations) *iterations = it;
    if (residual) *residual = rel;
    return ops->commit(model, pool, x0, v0, dv, dt, x1, v1);
}
