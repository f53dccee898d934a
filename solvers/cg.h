/* Preconditioned conjugate gradients for symmetric positive definite systems,
 * matrix-free: the caller supplies y = A x. Vector kernels run per fixed
 * block of the pool with solvers/cg_hd.h's arithmetic, and every dot
 * product and norm is core/sum_hd.h's fixed-order sum, so results do not
 * depend on the thread count or the CPU, and a device's CG
 * (solvers/cg_cuda.h) has the same bits. */
#ifndef HY_SOLVERS_CG_H
#define HY_SOLVERS_CG_H

#include <stdint.h>

#include "core/pool.h"

/* y = A x for vectors of length n. */
typedef void (*hy_matvec_fn)(void* ctx, const double* x, double* y);
/* z = P^-1 r for vectors of length n: a preconditioner, symmetric positive
 * definite, the same linear map at every call of one solve. */
typedef void (*hy_precond_fn)(void* ctx, const double* r, double* z);

typedef struct hy_cg_workspace hy_cg_workspace;

hy_cg_workspace* hy_cg_workspace_create(int64_t n);
void hy_cg_workspace_destroy(hy_cg_workspace* w);

/* Solve A x = b starting from x (in/out). inv_diag: Jacobi preconditioner
 * (1/diag(A)), NULL for none. Stops when ||r|| <= tol * ||b|| or after
 * max_iterations. Returns iterations done; *rel_residual gets ||r||/||b||. */
int32_t hy_cg_solve(hy_pool* pool, int64_t n, hy_matvec_fn matvec, void* ctx, const double* inv_diag,
                    const double* b, double* x, double tol, int32_t max_iterations, hy_cg_workspace* w,
                    double* rel_residual);

/* The same with a general preconditioner: z = precond(pctx, r) replaces the
 * Jacobi scaling. */
int32_t hy_cg_solve_precond(hy_pool* pool, int64_t n, hy_matvec_fn matvec, void* ctx, hy_precond_fn precond,
                            void* pctx, const double* b, double* x, double tol, int32_t max_iterations,
                            hy_cg_workspace* w, double* rel_residual);

/* A measure of convergence of the caller's own: CG stops when
 * sqrt(norm2(r)) <= tol * sqrt(norm2(reference)) (reference NULL: b).
 * norm2 must be a squared norm (homogeneous of degree 2), deterministic
 * for any pool size. For systems whose rows differ in scale, such as stiff
 * penalty rows, whose residual would otherwise decide alone. */
typedef struct hy_cg_norm {
    double (*norm2)(void* ctx, const double* v);
    void* ctx;
    const double* reference;
} hy_cg_norm;

int32_t hy_cg_solve_norm(hy_pool* pool, int64_t n, hy_matvec_fn matvec, void* ctx, hy_precond_fn precond, void* pctx,
                         const hy_cg_norm* norm, const double* b, double* x, double tol, int32_t max_iterations,
                         hy_cg_workspace* w, double* rel_residual);

/* The same solve with the products left to the caller, so that several
 * solves can run in lockstep and their products go together (one batch
 * over several objects, solvers/batch_step.h): begin, then while the last
 * call returned nonzero, write A (in) into out and call next; end unscales
 * x and returns the iterations. Every vector operation and reduction is the
 * one hy_cg_solve_norm makes (the same blocks, the same order), so each
 * solve has the bits of its own hy_cg_solve_norm call, whatever the solves
 * beside it. `b`, `x`, `w` and the callbacks' contexts live until end. */
typedef struct hy_cg_steps {
    const double* in; /* the product wanted: out = A in (n entries each) */
    double* out;
    /* the solve's state */
    hy_pool* pool;
    int64_t n, chunks; /* chunks: of 32 entries, the reductions' (core/sum_hd.h) */
    const double* inv_diag;
    hy_precond_fn precond;
    void* pctx;
    const hy_cg_norm* norm;
    const double* b;
    double* x;
    double tol, scale, bnorm, res, rz;
    int32_t max_iterations, iterations;
    hy_cg_workspace* w;
    int phase; /* 0 done, 1 the start's product, 2 an iteration's */
} hy_cg_steps;

int hy_cg_steps_begin(hy_cg_steps* s, hy_pool* pool, int64_t n, const double* inv_diag, hy_precond_fn precond,
                      void* pctx, const hy_cg_norm* norm, const double* b, double* x, double tol,
                      int32_t max_iterations, hy_cg_workspace* w);
int hy_cg_steps_next(hy_cg_steps* s);
int32_t hy_cg_steps_end(hy_cg_steps* s, double* rel_residual);

#endif
