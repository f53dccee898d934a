/* Helpers of the implicit objects (solvers/implicit.h). */
#include "solvers/implicit.h"

#include <math.h>

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
