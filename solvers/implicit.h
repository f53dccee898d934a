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
#include "solvers/cg.h"

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
    /* CG's starting dv for the prepared step (rhs as prepare wrote it). */
    void (*guess)(void* model, hy_pool* pool, const double* rhs, double* dv);
} hy_implicit_ops;

/* Defines `const hy_implicit_ops NAME` for a solver whose functions are
 * PREFIX_vertex_count, PREFIX_masses, PREFIX_fixed, PREFIX_prepare,
 * PREFIX_apply, PREFIX_precondition, PREFIX_commit and PREFIX_guess on a
 * MODEL*: the wrappers that take the model as void*. */
#define HY_DEFINE_IMPLICIT_OPS(NAME, KIND, MODEL, PREFIX)                                                            \
    static int32_t NAME##_count(const void* m) { return PREFIX##_vertex_count((const MODEL*)m); }                 \
    static const double* NAME##_masses(const void* m) { return PREFIX##_masses((const MODEL*)m); }                \
    static const uint8_t* NAME##_fixed(const void* m) { return PREFIX##_fixed((const MODEL*)m); }                 \
    static hy_status NAME##_prepare(void* m, hy_pool* pool, const double* x0, const double* v0, double dt,        \
                                    const double g[3], const double* f_ext, const double* extra, double* rhs) {   \
        return PREFIX##_prepare((MODEL*)m, pool, x0, v0, dt, g, f_ext, extra, rhs);                               \
    }                                                                                                             \
    static void NAME##_apply(void* m, hy_pool* pool, const double* p, double* y) {                                \
        PREFIX##_apply((MODEL*)m, pool, p, y);                                                                    \
    }                                                                                                             \
    static void NAME##_precondition(void* m, hy_pool* pool, const double* r, double* z) {                         \
        PREFIX##_precondition((MODEL*)m, pool, r, z);                                                             \
    }                                                                                                             \
    static hy_status NAME##_commit(void* m, hy_pool* pool, const double* x0, const double* v0, const double* dv,  \
                                   double dt, double* x1, double* v1) {                                           \
        return PREFIX##_commit((MODEL*)m, pool, x0, v0, dv, dt, x1, v1);                                          \
    }                                                                                                             \
    static void NAME##_guess(void* m, hy_pool* pool, const double* rhs, double* dv) {                             \
        PREFIX##_guess((MODEL*)m, pool, rhs, dv);                                                                 \
    }                                                                                                             \
    const hy_implicit_ops NAME = {KIND,          NAME##_count,        NAME##_masses, NAME##_fixed,               \
                                  NAME##_prepare, NAME##_apply,       NAME##_precondition,                        \
                                  NAME##_commit, NAME##_guess}

/* Helpers the implicit objects share. */

/* out = A^-1 for a row-major 3x3 A; 0 (out untouched) when det A is 0 or
 * not finite. */
int hy_block3_inverse(const double A[9], double out[9]);

/* The checks every tet-mesh object's creation makes of its input: rest
 * (3*nv, finite), tets (4*nt), params present, nv, nt > 0 and not too
 * large, fixed indices (fixed_count, may be 0) in range. HY_ERR_INVALID_ARG
 * naming `who` and what is wrong. */
hy_status hy_implicit_check_input(const char* who, const double* rest, int32_t nv, const int32_t* tets, int32_t nt,
                                  const void* params, const int32_t* fixed, int32_t fixed_count);

/* Vertices per block of the helpers' loops (and of `bad` below). */
#define HY_IMPLICIT_GRAIN 1024

/* z = blocks r: the inverse diagonal blocks (9 per vertex) applied. */
void hy_implicit_block_precondition(hy_pool* pool, int32_t nv, const double* blocks, const double* r, double* z);

/* v1 = v0 + dv, x1 = x0 + dt v1; fixed vertices keep x1 = x0, v1 = 0.
 * bad: hy_pool_blocks(nv, HY_IMPLICIT_GRAIN) ints of scratch. HY_ERR_NUMERIC
 * naming `who` and the first vertex whose x1 or v1 is not finite. */
hy_status hy_implicit_commit(hy_pool* pool, int32_t nv, const uint8_t* fixed, const double* x0, const double* v0,
                             const double* dv, double dt, double* x1, double* v1, int32_t* bad, const char* who);

/* CG's start for a prepared step. g = (M (1 + dt alpha))^-1 rhs on free
 * vertices (0 on fixed ones; diag_scale = 1 + dt alpha), its mass-weighted
 * mean t (a translation; 0 when a vertex is fixed), and dv = t + s (g - t)
 * with s the step along g - t nearest the solution in A's energy norm,
 * taking A t = M (1 + dt alpha) t (the stiffness terms vanish on
 * translations). For an undeformed free object in rigid flight g is the
 * exact solution (s = 1) and CG takes no iteration; dv carries exactly the
 * momentum of rhs whatever s; in a deforming object it is no farther from
 * the solution than dv = 0 in that norm. A function of rhs and the prepared
 * system only, so a step still depends on its inputs alone; deterministic
 * for any pool size. scratch: hy_implicit_guess_scratch_size(nv) doubles. */
int64_t hy_implicit_guess_scratch_size(int32_t nv);
void hy_implicit_mass_guess(const hy_implicit_ops* ops, void* model, hy_pool* pool, double diag_scale,
                            const double* rhs, double* dv, double* scratch);

/* Vertices held against a surface for one step (contacts with a static
 * obstacle): normal (3 per vertex, the caller's) is the unit normal of a
 * held vertex, pointing from the surface to the vertex, and 0 0 0 for a
 * free one; the step sets a held vertex's normal velocity to 0 and leaves
 * its tangential motion to the solve. A hold whose constraint force pulls
 * the vertex towards the surface is let go in the next step, not this one
 * (the active set of Baraff and Witkin 1998, updated between steps): its
 * normal is cleared, let_go[v] set (when let_go is not NULL) and the count
 * kept in released. Solving the step again without those holds restarted
 * CG for a correction that spreads over the whole object: fem64's pile
 * took 45 + 29 + 12 iterations a step in three solves against 45 in one.
 * scratch: hy_implicit_held_scratch_size(nv) doubles. */
typedef struct hy_implicit_held {
    double* normal;
    double* scratch;
    int32_t released;
    uint8_t* let_go; /* nv, or NULL */
} hy_implicit_held;

int64_t hy_implicit_held_scratch_size(int32_t nv);

/* A start for CG: dv from rhs (fn(ctx, rhs, dv)). */
typedef struct hy_implicit_guess {
    void (*fn)(void* ctx, const double* rhs, double* dv);
    void* ctx;
} hy_implicit_guess;

/* The held solve on any SPD system of nv vertices (matvec, precond as for
 * CG; a coupled group's joined vectors too): dv (3 nv) gets the solution
 * with the held vertices' normal velocity (v0 + dv) . n = 0, CG from guess
 * (NULL: zero) on the filtered system; the pulling holds are marked to be
 * let go (see hy_implicit_held). Returns CG's iterations; *rel_residual
 * its final relative residual. */
int32_t hy_implicit_held_solve(hy_pool* pool, int32_t nv, hy_matvec_fn matvec, void* mctx, hy_precond_fn precond,
                               void* pctx, const hy_implicit_guess* guess, hy_implicit_held* held, const double* v0,
                               const double* rhs, double* dv, double tol, int32_t max_iterations, hy_cg_workspace* cg,
                               double* rel_residual);

/* An object's operations bound to its model and the pool they run on:
 * the context of its CG callbacks. hy_implicit_bound_precond is its
 * preconditioner as an hy_precond_fn (ctx: a hy_implicit_bound). */
typedef struct hy_implicit_bound {
    const hy_implicit_ops* ops;
    void* model;
    hy_pool* pool;
} hy_implicit_bound;
void hy_implicit_bound_precond(void* ctx, const double* r, double* z);

/* One object's whole step through its operations: checks the CG settings,
 * prepare, CG from the object's guess on apply and precondition, commit.
 * held: NULL, or vertices held as above. rhs and dv (3 per vertex) and cg
 * are the object's scratch; *iterations (all solves together) and
 * *residual (may be NULL) get CG's count and final relative residual.
 * `who` names the object in messages. */
hy_status hy_implicit_step(const hy_implicit_ops* ops, void* model, hy_pool* pool, const double* x0, const double* v0,
                           double dt, const double gravity[3], const double* f_ext, int32_t cg_max_iterations,
                           double cg_tolerance, double* x1, double* v1, double* rhs, double* dv, hy_cg_workspace* cg,
                           hy_implicit_held* held, int32_t* iterations, double* residual, const char* who);

#endif
