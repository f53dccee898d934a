/* Corotational linear finite elements on tetrahedra, with implicit
 * (backward) Euler.
 *
 * The model (rest shape, element gradients, volumes, lumped masses,
 * material, fixed vertices) is built once from a tet mesh and is const
 * during a step apart from its scratch; positions and velocities are passed
 * in and out, as for the cloth (solvers/cloth.h), so the engine can keep
 * x0/v0 and the candidate x1/v1 apart for collision detection.
 *
 * Orientation: a tetrahedron (a, b, c, d) is positive when
 * det(b - a, c - a, d - a) > 0. The model refuses a rest element that is
 * not positive or whose volume is below 1e-12 of its longest edge cubed. */
#ifndef HY_SOLVERS_FEM_H
#define HY_SOLVERS_FEM_H

#include <stdint.h>

#include "hyphys/hyphys.h"
#include "core/pool.h"
#include "solvers/fem_hd.h"
#include "solvers/implicit.h"

typedef struct hy_fem_params {
    double young;             /* Young's modulus, Pa, > 0 */
    double poisson;           /* Poisson ratio, in [0, 0.5) */
    double density;           /* kg/m^3, > 0 */
    double damping_mass;      /* Rayleigh alpha, 1/s, >= 0: damping force -alpha M v */
    double damping_stiffness; /* Rayleigh beta, s, >= 0: damping force -beta K v */
} hy_fem_params;

typedef struct hy_fem_model hy_fem_model;

typedef struct hy_fem_solve_stats {
    int32_t cg_iterations;
    double cg_relative_residual; /* final ||b - A dv|| / ||b|| (0 for b = 0) */
} hy_fem_solve_stats;

/* rest: 3*nv rest positions (m); tets: 4*nt vertex indices, each element
 * positive (see above); fixed: indices of vertices held where they are
 * (may repeat; NULL with fixed_count 0). Every vertex must belong to a
 * tetrahedron (it would have no mass). Inputs are copied. Statuses:
 * HY_ERR_INVALID_ARG naming the parameter, element or vertex at fault
 * (bad index, degenerate or inverted element, non-finite position,
 * material out of range), HY_ERR_NOMEM. */
hy_status hy_fem_model_create(const double* rest, int32_t nv, const int32_t* tets, int32_t nt,
                              const hy_fem_params* params, const int32_t* fixed, int32_t fixed_count,
                              hy_fem_model** out);
void hy_fem_model_destroy(hy_fem_model* m);
int32_t hy_fem_vertex_count(const hy_fem_model* m);
int32_t hy_fem_tet_count(const hy_fem_model* m);
/* Lumped mass per vertex in kg (a quarter of each incident element's);
 * lives as long as the model. */
const double* hy_fem_masses(const hy_fem_model* m);
/* Rest volume of each element in m^3; lives as long as the model. */
const double* hy_fem_volumes(const hy_fem_model* m);

/* One backward-Euler step of length dt from (x0, v0) under gravity (m/s^2)
 * and optional external forces f_ext (3*nv, N; NULL for none). The
 * corotated elastic force f(x) = -R K (R^T x - X) is linearised once per
 * step with each element's rotation R taken at x0, and
 *   (M (1 + dt alpha) + (dt beta + dt^2) K') dv
 *       = dt (f(x0) - (beta + dt) K' v0 - alpha M v0 + M g + f_ext),
 * K' = R K R^T, is solved by CG preconditioned with the inverse 3x3
 * diagonal blocks and a coarse level (hy_fem_coarse below), until ||b - A dv|| <= cg_tolerance ||b|| or
 * cg_max_iterations, starting from the scaled mass-only step of hy_fem_guess;
 * then v1 = v0 + dv, x1 = x0 + dt v1. Fixed vertices
 * keep x1 = x0, v1 = 0. x1/v1 may alias x0/v0. Deterministic for any pool
 * size; allocates nothing (scratch lives in the model, so one model is
 * stepped by one thread at a time). A step depends only on its inputs.
 * HY_ERR_INVALID_ARG for NULL or bad settings; HY_ERR_NUMERIC naming the
 * first non-finite vertex (x1/v1 then unspecified). */
hy_status hy_fem_solve(hy_fem_model* m, hy_pool* pool, const double* x0, const double* v0, double dt,
                       const double gravity[3], const double* f_ext, int32_t cg_max_iterations, double cg_tolerance,
                       double* x1, double* v1, hy_fem_solve_stats* stats);

/* The step's parts (solvers/implicit.h), for a solve coupled with other
 * objects: hy_fem_solve is prepare, CG on apply and precondition from
 * dv = 0, then commit. prepare takes the rotations at x0 and writes rhs
 * (3*nv); extra_diag (9*nv or NULL) joins the preconditioner's diagonal
 * blocks. apply and precondition use the prepared step's dt and
 * rotations. commit fails with HY_ERR_NUMERIC naming the first non-finite
 * vertex. */
hy_status hy_fem_prepare(hy_fem_model* m, hy_pool* pool, const double* x0, const double* v0, double dt,
                         const double gravity[3], const double* f_ext, const double* extra_diag, double* rhs);
void hy_fem_apply(hy_fem_model* m, hy_pool* pool, const double* p, double* y);
void hy_fem_precondition(hy_fem_model* m, hy_pool* pool, const double* r, double* z);
hy_status hy_fem_commit(hy_fem_model* m, hy_pool* pool, const double* x0, const double* v0, const double* dv,
                        double dt, double* x1, double* v1);
/* CG's start for the prepared step: hy_implicit_mass_guess (exact for an
 * undeformed object in free flight, which then takes no iteration). */
void hy_fem_guess(hy_fem_model* m, hy_pool* pool, const double* rhs, double* dv);
/* 1 per fixed vertex (nv); lives as long as the model. */
const uint8_t* hy_fem_fixed(const hy_fem_model* m);
/* The operations above as an implicit object (void* model = hy_fem_model*). */
extern const hy_implicit_ops hy_fem_ops;

/* The corotated elastic forces at x: f = -R K (R^T x - X) per element,
 * summed per vertex (3*nv, N), fixed vertices included. Deterministic for
 * any pool size. */
hy_status hy_fem_elastic_forces(hy_fem_model* m, hy_pool* pool, const double* x, double* f);

/* Elastic energy of the corotated strain at x, sum over elements of
 * V/2 (2 mu e:e + lambda tr(e)^2), e = sym(R^T F) - I (J). */
double hy_fem_elastic_energy(const hy_fem_model* m, const double* x);
/* Kinetic energy 0.5 * sum m |v|^2 (J). */
double hy_fem_kinetic_energy(const hy_fem_model* m, const double* v);

/* The preconditioner is block Jacobi plus a coarse level over aggregates
 * of vertices (fem.c) for objects of 500 vertices or more. on = 0 leaves
 * block Jacobi alone, 1 puts the coarse level back, -1 leaves it; returns
 * whether it was in use. Between steps; for tests and comparisons. */
int hy_fem_coarse(hy_fem_model* m, int on);

/* Once a step's CG has taken enough products, the product runs on the
 * step's system assembled by vertex rows of 3 x 3 blocks (fem.c) for
 * objects of HY_BATCH_MAX_ITEMS (4,096) elements or more, on the CPU or on
 * the model's GPU with the same bits; the same system as the matrix-free
 * product's, summed in another order (the last bits differ). on = 0 keeps
 * the matrix-free product alone, 1 allows the assembled one, -1 leaves it;
 * returns whether it was allowed. Between steps; for tests and
 * comparisons. */
int hy_fem_assembled(hy_fem_model* m, int on);

/* The prepared step's assembled system on the host (solvers/fem_hd.h's
 * layout) into out: 1 when the step has assembled it on the CPU, else 0
 * (out untouched). For tests. */
int hy_fem_asm_view(const hy_fem_model* m, hy_fem_hd_asm* out);

/* The matvec's element kernel runs four elements at once in vector
 * registers, in AVX2 ones where the CPU has them (core/simd.h). on = 1
 * asks for AVX2 (granted only with it), 0 turns it off, -1 leaves it;
 * returns the setting before. Both give the same bits; for tests. */
int hy_fem_simd(int on);

/* The model's arrays and step scratch as the shared kernels read them
 * (solvers/fem_hd.h); valid while the model lives (the scalars as of the
 * last prepared step). For the GPU's copy and the tests. */
void hy_fem_view(const hy_fem_model* m, hy_fem_hd_model* out);

/* Run the step's element and vertex passes (the rotations with the
 * corner forces in prepare, and each matrix-vector product of the solve)
 * on CUDA GPU `device` (solvers/fem_cuda.h): the model's arrays go up
 * once; per step the positions and velocities go up and the right-hand
 * side and the preconditioner's blocks come down (the rotated gradients
 * stay there), per product the vector goes up and the product comes down;
 * CG's vector operations and dot products stay on the host. The arithmetic is the CPU's (solvers/fem_hd.h), so
 * the results, and a step's state, have the same bits. device < 0 goes
 * back to the CPU. HY_ERR_UNSUPPORTED when this build has no CUDA or there
 * is no GPU `device`; a GPU that fails later is dropped with one message on
 * stderr and the step goes on on the CPU (the same bits). Between steps
 * only (not between a prepare and its commit). */
hy_status hy_fem_set_device(hy_fem_model* m, int device);
/* The GPU the model's passes run on, or -1. */
int hy_fem_device(const hy_fem_model* m);
/* Bytes its GPU context has moved between the host and the GPU since it
 * was made (hy_fem_set_device), both ways; 0 on the CPU. */
int64_t hy_fem_gpu_bytes(const hy_fem_model* m);

/* The rotation R of the polar decomposition F = R S (R proper, det +1),
 * with the smallest singular value's sign flipped when det F < 0 (Irving
 * et al. 2004), so an inverted element is rotated back towards positive.
 * Total: a flat or zero F gives a rotation too, never NaN for finite F.
 * Row-major 3x3. Exposed for tests. */
void hy_fem_polar_rotation(const double F[9], double R[9]);

#endif
