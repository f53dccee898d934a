/* Volumetric mass-spring objects on tetrahedral meshes, with implicit
 * (backward) Euler: every edge of the mesh is a spring, the vertices carry
 * the lumped mass of their elements. The interface has the shape of the
 * FEM's (solvers/fem.h) so a caller drives either the same way, and both
 * are implicit objects (solvers/implicit.h) for coupled solves.
 *
 * Springs: f_i = k (l - L) d + c ((v_j - v_i) . d) d on vertex i of spring
 * (i, j), d = (x_j - x_i) / l, L the rest length, c = damping * k;
 * f_j = -f_i. The step linearises once at (x0, v0) (Baraff & Witkin):
 *   (M (1 + dt alpha) - dt df/dv - dt^2 df/dx) dv
 *       = dt (f(x0, v0) + dt df/dx v0 - alpha M v0 + M g + f_ext),
 * with each spring's stiffness block k [d d^T + g (I - d d^T)],
 * g = max(0, 1 - L / l): the transverse term of a compressed spring is
 * dropped, which keeps the system positive definite (the cloth does the
 * same, solvers/cloth.c). CG, preconditioned with the inverse 3x3 diagonal
 * blocks, until ||b - A dv|| <= cg_tolerance ||b|| or cg_max_iterations.
 * Deterministic for any pool size; allocates nothing after creation. */
#ifndef HY_SOLVERS_MASSSPRING_H
#define HY_SOLVERS_MASSSPRING_H

#include <stdint.h>

#include "hyphys/hyphys.h"
#include "core/pool.h"
#include "solvers/implicit.h"
#include "solvers/massspring_hd.h"

typedef struct hy_ms_params {
    double stiffness;    /* k, N/m, of every spring, > 0 */
    double density;      /* kg/m^3, > 0 */
    double damping;      /* s, >= 0: spring damping c = damping * k along the spring */
    double damping_mass; /* 1/s, >= 0: damping force -alpha M v */
} hy_ms_params;

typedef struct hy_ms_model hy_ms_model;

typedef struct hy_ms_solve_stats {
    int32_t cg_iterations;
    double cg_relative_residual; /* final ||b - A dv|| / ||b|| (0 for b = 0) */
} hy_ms_solve_stats;

/* As hy_fem_model_create (solvers/fem.h): rest (3*nv), tets (4*nt, each
 * positive and not degenerate, solvers/fem.h's convention), fixed vertices
 * (may repeat). Springs are the tetrahedra's distinct edges, in order of
 * (lower index, higher index). Every vertex must belong to a tetrahedron.
 * HY_ERR_INVALID_ARG naming the parameter, element or vertex at fault;
 * HY_ERR_NOMEM. */
hy_status hy_ms_model_create(const double* rest, int32_t nv, const int32_t* tets, int32_t nt,
                             const hy_ms_params* params, const int32_t* fixed, int32_t fixed_count, hy_ms_model** out);
void hy_ms_model_destroy(hy_ms_model* m);
int32_t hy_ms_vertex_count(const hy_ms_model* m);
int32_t hy_ms_spring_count(const hy_ms_model* m);
/* 2 * spring_count vertex indices (i < j); lives as long as the model. */
const int32_t* hy_ms_springs(const hy_ms_model* m);
/* Rest length of each spring (m); lives as long as the model. */
const double* hy_ms_rest_lengths(const hy_ms_model* m);
/* Lumped mass per vertex (kg): a quarter of each incident element's. */
const double* hy_ms_masses(const hy_ms_model* m);
/* 1 per fixed vertex (nv). */
const uint8_t* hy_ms_fixed(const hy_ms_model* m);

/* One backward-Euler step (see above); the same contract as hy_fem_solve:
 * fixed vertices keep x1 = x0, v1 = 0; x1/v1 may alias x0/v0; a step
 * depends only on its inputs; HY_ERR_NUMERIC naming the first non-finite
 * vertex. */
hy_status hy_ms_solve(hy_ms_model* m, hy_pool* pool, const double* x0, const double* v0, double dt,
                      const double gravity[3], const double* f_ext, int32_t cg_max_iterations, double cg_tolerance,
                      double* x1, double* v1, hy_ms_solve_stats* stats);

/* The step's parts, as for the FEM (solvers/implicit.h). */
hy_status hy_ms_prepare(hy_ms_model* m, hy_pool* pool, const double* x0, const double* v0, double dt,
                        const double gravity[3], const double* f_ext, const double* extra_diag, double* rhs);
void hy_ms_apply(hy_ms_model* m, hy_pool* pool, const double* p, double* y);
void hy_ms_precondition(hy_ms_model* m, hy_pool* pool, const double* r, double* z);
hy_status hy_ms_commit(hy_ms_model* m, hy_pool* pool, const double* x0, const double* v0, const double* dv, double dt,
                       double* x1, double* v1);
/* CG's start for the prepared step: hy_implicit_mass_guess (exact for an
 * undeformed object in free flight, which then takes no iteration). */
void hy_ms_guess(hy_ms_model* m, hy_pool* pool, const double* rhs, double* dv);
extern const hy_implicit_ops hy_ms_ops;

/* The model's arrays and step scratch as the shared kernels read them
 * (solvers/massspring_hd.h); valid while the model lives. */
void hy_ms_view(const hy_ms_model* m, hy_ms_hd_model* out);
/* The prepared step's preconditioner: its 3x3 inverse diagonal blocks, 9
 * per vertex (hy_ms_precondition is block Jacobi with them alone). */
const double* hy_ms_precond_blocks(const hy_ms_model* m);

/* Run the step's spring pass (in prepare) and each matrix-vector product
 * of the solve on CUDA GPU `device` (solvers/massspring_cuda.h), with the
 * CPU's arithmetic, so the same bits; as hy_fem_set_device (solvers/fem.h)
 * in every other respect. device < 0: back to the CPU. */
hy_status hy_ms_set_device(hy_ms_model* m, int device);
int hy_ms_device(const hy_ms_model* m);
/* Bytes its GPU context has moved between the host and the GPU since it
 * was made (hy_ms_set_device), both ways; 0 on the CPU. */
int64_t hy_ms_gpu_bytes_of(const hy_ms_model* m);

/* Spring forces (damping left out) at x, summed per vertex (3*nv, N). */
hy_status hy_ms_spring_forces(hy_ms_model* m, hy_pool* pool, const double* x, double* f);
/* Spring energy sum k (l - L)^2 / 2 at x (J); kinetic energy (J). */
double hy_ms_spring_energy(const hy_ms_model* m, const double* x);
double hy_ms_kinetic_energy(const hy_ms_model* m, const double* v);

#endif
