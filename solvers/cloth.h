/* Mass-spring cloth with implicit (backward) Euler.
 *
 * The model (topology, rest lengths, masses, stiffness) is built once from a
 * triangle mesh and is const during a step; positions and velocities are
 * passed in and out so the engine can keep x0/v0 and the candidate x1/v1
 * apart for collision detection. */
#ifndef HY_SOLVERS_CLOTH_H
#define HY_SOLVERS_CLOTH_H

#include <stdint.h>

#include "hyphys/hyphys.h"
#include "core/pool.h"

typedef struct hy_cloth_params {
    double density;           /* kg/m^2 */
    double stretch_stiffness; /* N/m: springs along mesh edges */
    double shear_stiffness;   /* N/m: springs across the diagonal of two triangles' quad */
    double bend_stiffness;    /* N/m: springs joining the far vertices of adjacent triangles */
    double damping;           /* spring (Rayleigh-like) damping, s * stiffness */
    double air_damping;       /* 1/s */
} hy_cloth_params;

typedef struct hy_cloth_model hy_cloth_model;

typedef struct hy_cloth_solve_stats {
    int32_t cg_iterations;
    double cg_relative_residual; /* final ||b - A dv|| / ||b|| (0 for b = 0) */
} hy_cloth_solve_stats;

/* rest: 3*nv rest positions (metres); tri: 3*nt indices; pinned: indices of
 * vertices held where they are. */
hy_status hy_cloth_model_create(const double* rest, int32_t nv, const int32_t* tri, int32_t nt,
                                const hy_cloth_params* params, const int32_t* pinned, int32_t pinned_count,
                                hy_cloth_model** out);
void hy_cloth_model_destroy(hy_cloth_model* m);
int32_t hy_cloth_vertex_count(const hy_cloth_model* m);
/* Per-vertex mass in kg (lumped); inverse mass is 0 for pinned vertices. */
const double* hy_cloth_masses(const hy_cloth_model* m);
const double* hy_cloth_inverse_masses(const hy_cloth_model* m);
int32_t hy_cloth_spring_count(const hy_cloth_model* m);

/* One backward-Euler step of length dt from (x0, v0) under gravity:
 * solves (M - dt*dF/dv - dt^2*dF/dx) dv = dt*(f0 + dt*dF/dx*v0) by CG
 * preconditioned with an aggregation-multigrid V-cycle (cloth.c) until
 * ||b - A dv|| <= cg_tolerance ||b|| or cg_max_iterations, then
 * v1 = v0 + dv, x1 = x0 + dt*v1. Pinned vertices keep x1 = x0, v1 = 0.
 * Deterministic for any pool size. Does not allocate after its first call
 * (scratch lives in the model; CHOLMOD keeps the coarsest level's
 * workspace from the first factor and solve on). */
hy_status hy_cloth_solve(hy_cloth_model* m, hy_pool* pool, const double* x0, const double* v0, double dt,
                         const double gravity[3], int32_t cg_max_iterations, double cg_tolerance, double* x1,
                         double* v1, hy_cloth_solve_stats* stats);

/* A contact of one cloth vertex with a surface it rests on (an obstacle or
 * a body), held as a constraint in the solve (Baraff & Witkin's filter):
 * the vertex's velocity along the normal at the end of the step is
 * normal_velocity, exactly; the other two directions stay free. After the
 * solve, the constraint's impulse (the part of the system's residual along
 * the normal) bounds a Coulomb friction change of the vertex's velocity
 * relative to the surface. */
typedef struct hy_cloth_constraint {
    int32_t vertex;              /* local index; a vertex may have several */
    double normal[3];            /* unit, pointing from the surface to the vertex */
    double normal_velocity;      /* m/s along normal */
    double surface_velocity[3];  /* of the surface point touched, for friction */
    double friction;             /* Coulomb coefficient */
    double impulse;              /* out: N s along normal; < 0 when it held the vertex back */
    int32_t tag;                 /* the caller's, untouched */
} hy_cloth_constraint;

/* hy_cloth_solve with constraints (count may be 0; constraints on pinned
 * vertices are ignored, their impulse 0). The filtered system stays SPD on
 * the free directions; CG's vectors, its preconditioner's output and its
 * right-hand side are filtered, so CG never moves a held direction. */
hy_status hy_cloth_solve_constrained(hy_cloth_model* m, hy_pool* pool, const double* x0, const double* v0, double dt,
                                     const double gravity[3], int32_t cg_max_iterations, double cg_tolerance,
                                     hy_cloth_constraint* cons, int32_t count, double* x1, double* v1,
                                     hy_cloth_solve_stats* stats);

/* Kinetic energy 0.5 * sum m |v|^2 (J). */
double hy_cloth_kinetic_energy(const hy_cloth_model* m, const double* v);

/* Run each step's spring pass and every matrix-vector product of the
 * solve (CG's and the smoother's) on CUDA GPU `device`
 * (solvers/cloth_cuda.h), with the CPU's arithmetic (solvers/cloth_hd.h),
 * so the same bits; CG's reductions and the multigrid's coarse levels stay
 * on the host. HY_ERR_UNSUPPORTED without such a GPU or without CUDA in
 * the build (the model stays on the CPU). A GPU call that fails later
 * drops the GPU (one line on stderr) and the step goes on on the CPU with
 * the same bits. device < 0: back to the CPU. */
hy_status hy_cloth_set_device(hy_cloth_model* m, int device);
/* The GPU in use, -1 for the CPU. */
int hy_cloth_device(const hy_cloth_model* m);
/* Bytes sent to and received from the GPU since hy_cloth_set_device. */
void hy_cloth_transfer_bytes(const hy_cloth_model* m, int64_t* up, int64_t* down);

/* The product's rows run with a vertex's coordinates in one AVX2 register
 * where the CPU has AVX2 (core/simd.h), else as solvers/cloth_hd.h's
 * scalar rows; both give the same bits. on = 1 asks for AVX2, 0 turns it
 * off, -1 leaves it; returns the setting before. For tests. */
int hy_cloth_simd(int on);

/* Springs by kind (see the design notes in cloth.c for how shear and bend
 * springs are chosen); any out pointer may be NULL. */
void hy_cloth_spring_type_counts(const hy_cloth_model* m, int32_t* stretch, int32_t* shear, int32_t* bend);
/* 2 * spring_count vertex indices (i, j): stretch springs first, then shear,
 * then bend. Lives as long as the model. */
const int32_t* hy_cloth_springs(const hy_cloth_model* m);
/* Notes on hy_cloth_solve: x1/v1 may alias x0/v0. CG starts from dv = 0
 * every step, so a step depends only on its inputs (not on earlier calls).
 * On HY_ERR_NUMERIC (a non-finite vertex, named in the message) x1/v1 hold
 * unspecified values and x0/v0 are untouched when not aliased. */

#endif
