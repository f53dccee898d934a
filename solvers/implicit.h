/* The linearised backward-Euler system of one deformable object, as the
 * coupled solve (solvers/interaction.h) drives it: FEM (solvers/fem.h) and
 * mass-spring (solvers/massspring.h) objects both provide these operations.
 *
 * A step of an object is: prepare builds the right-hand side b (3 * nv)
 * and the preconditioner at (x0, v0); the system A dv = b is solved by CG
 * with apply (y = A p) and precondition (z ~ A^-1 r); commit turns dv into
 * v1 = v0 + dv, x1 = x0 + dt v1. A is symmetric positive definite,
 *   A = M (1 + dt alpha) + dt^2 K + (damping terms),
 * with the rows and columns of fixed vertices replaced by the identity
 * (their b is 0, so dv = 0 there). External forces f_ext enter b as
 * dt f_ext; extra_diag (9 per vertex, NULL for none) is added to each free
 * vertex's 3x3 diagonal block of the preconditioner, for coupling terms
 * the caller adds to A outside the object (its apply does not see them).
 * Each call is deterministic for any pool size; one object is driven by one
 * thread at a time (its scratch lives in the model). */
#ifndef HY_SOLVERS_IMPLICIT_H
#define HY_SOLVERS_IMPLICIT_H

#include <stdint.h>

#include "hyphys/hyphys.h"
#include "core/pool.h"

typedef struct hy_implicit_ops {
    const char* kind; /* "fem", "mass-spring": for messages */
    int32_t (*vertex_count)(const void* model);
    const double* (*masses)(const void* model);  /* kg per vertex */
    const uint8_t* (*fixed)(const void* model);  /* 1 per fixed vertex */
    hy_status (*prepare)(void* model, hy_pool* pool, const double* x0, const double* v0, double dt,
                         const double gravity[3], const double* f_ext, const double* extra_diag, double* rhs);
    void (*apply)(void* model, hy_pool* pool, const double* p, double* y);
    void (*precondition)(void* model, hy_pool* pool, const double* r, double* z);
    hy_status (*commit)(void* model, hy_pool* pool, const double* x0, const double* v0, const double* dv, double dt,
                        double* x1, double* v1);
} hy_implicit_ops;

/* Helpers the implicit objects share. */

/* out = A^-1 for a row-major 3x3 A; 0 (out untouched) when det A is 0 or
 * not finite. */
int hy_block3_inverse(const double A[9], double out[9]);

/* Vertices per block of the helpers' loops (and of `bad` below). */
#define HY_IMPLICIT_GRAIN 1024

/* z = blocks r: the inverse diagonal blocks (9 per vertex) applied. */
void hy_implicit_block_precondition(hy_pool* pool, int32_t nv, const double* blocks, const double* r, double* z);

/* v1 = v0 + dv, x1 = x0 + dt v1; fixed vertices keep x1 = x0, v1 = 0.
 * bad: hy_pool_blocks(nv, HY_IMPLICIT_GRAIN) ints of scratch. HY_ERR_NUMERIC
 * naming `who` and the first vertex whose x1 or v1 is not finite. */
hy_status hy_implicit_commit(hy_pool* pool, int32_t nv, const uint8_t* fixed, const double* x0, const double* v0,
                             const double* dv, double dt, double* x1, double* v1, int32_t* bad, const char* who);

#endif
