/* Interactions: coupling forces between two deformable objects (FEM or
 * mass-spring, solvers/implicit.h), as first-class items.
 *
 * An interaction names its two objects, A and B, and holds pairs: a vertex
 * of A and a point of B, the weighted sum p_B = sum_j w_j x_j of one to
 * four vertices of B (one: a vertex; three: a point of a face, barycentric;
 * four: a point inside a tetrahedron), weights summing to 1, with a
 * stiffness. A pair is either
 *   - an attachment: a spring of rest length 0, f_A = -k (x_A - p_B), for
 *     the blocks of a bar or any two objects glued at coincident points;
 *   - a contact: a one-sided penalty along a unit normal n (from B towards
 *     A) that keeps a gap h, f_A = k (h - n . (x_A - p_B)) n while
 *     n . (x_A - p_B) < h, else 0; whether it acts is decided once per step
 *     at the step's start, so the step's system is one linear map.
 * B's vertices get -w_j f_A: the forces of every pair sum to zero (the
 * coupling keeps the pair's momentum).
 *
 * The pair's stiffness matrix is K = k (c c^T) (x) P over the vertices
 * (a, b_1..b_n), c = (1, -w_1, .., -w_n), P = I (attachment) or n n^T
 * (contact): symmetric, positive semi-definite.
 *
 * Coupled, not staggered. hy_coupled_solve joins the objects' backward
 * Euler systems and their interactions' dt^2 K into one SPD system solved
 * by one CG: every object's step sees its partners' motion in the same
 * step. A block Gauss-Seidel between objects (solve A with B frozen, then
 * B with A's new state) was rejected: the bars' attachments are stiff
 * (dt^2 k well over the vertices' masses) and the outer iteration between
 * two stiffly glued blocks converges slowly, and stopped early it does not
 * keep the momentum the coupling forces exchange. The CG's work splits the
 * same way a partitioned runtime would: each object's prepare, apply and
 * precondition read only that object; an interaction's parts below each
 * add its terms to one side's rows given both sides' vectors, so the
 * runtime can run an interaction in either object's partition. */
#ifndef HY_SOLVERS_INTERACTION_H
#define HY_SOLVERS_INTERACTION_H

#include <stdint.h>

#include "hyphys/hyphys.h"
#include "core/pool.h"
#include "solvers/implicit.h"

typedef enum hy_pair_kind { HY_PAIR_ATTACH = 0, HY_PAIR_CONTACT = 1 } hy_pair_kind;

typedef struct hy_interaction_pair {
    int32_t kind;      /* hy_pair_kind */
    int32_t vertex;    /* of A */
    int32_t count;     /* 1..4 vertices of B */
    int32_t b[4];      /* vertices of B (count used) */
    double w[4];       /* their weights, summing to 1 */
    double stiffness;  /* N/m, > 0 */
    double normal[3];  /* contact: unit, from B towards A */
    double gap;        /* contact: distance kept along the normal, m (>= 0) */
} hy_interaction_pair;

typedef struct hy_interaction hy_interaction;

/* object_a, object_b: the caller's names of the two objects (indices into
 * hy_coupled_solve's list); they may be equal only for a self-interaction
 * of one object, which is refused (use the object's own forces). nv_a,
 * nv_b: their vertex counts, to check the pairs. Pairs are copied (count
 * may be 0). HY_ERR_INVALID_ARG naming the pair at fault: a vertex out of
 * range, a count outside 1..4, weights not summing to 1 (1e-9) or not
 * finite, a stiffness not > 0, a contact normal not of unit length (1e-6),
 * a negative gap. HY_ERR_NOMEM. */
hy_status hy_interaction_create(int32_t object_a, int32_t object_b, int32_t nv_a, int32_t nv_b,
                                const hy_interaction_pair* pairs, int32_t count, hy_interaction** out);
void hy_interaction_destroy(hy_interaction* ia);
/* Replace the pairs (a contact set changes from step to step), checked as
 * at creation; on error the interaction keeps its pairs. */
hy_status hy_interaction_set_pairs(hy_interaction* ia, const hy_interaction_pair* pairs, int32_t count);
void hy_interaction_objects(const hy_interaction* ia, int32_t* object_a, int32_t* object_b);
int32_t hy_interaction_pair_count(const hy_interaction* ia);

/* Attachment pairs gluing every vertex of A to a vertex of B within tol of
 * it (the nearest), each with the given stiffness: the blocks of a bar
 * sharing a face. *pairs is allocated (hy_mem_free, core/alloc.h; NULL when
 * *count is 0). HY_ERR_INVALID_ARG for a bad tolerance or stiffness,
 * HY_ERR_NOMEM. */
hy_status hy_interaction_attach_coincident(const double* xa, int32_t nv_a, const double* xb, int32_t nv_b, double tol,
                                           double stiffness, hy_interaction_pair** pairs, int32_t* count);

/* ---- one side's terms, given both sides' vectors (side 0: A, 1: B) */

/* The coupling forces at positions (xa, xb) added to f_side (3 per
 * vertex of that side); contacts act where they are closer than their gap
 * at (xa, xb). */
void hy_interaction_add_forces(const hy_interaction* ia, int side, const double* xa, const double* xb, double* f_side);

/* Fixes which contacts act for the step that starts at (xa, xb): the
 * linearisation point of the three calls below. Attachments always act. */
void hy_interaction_linearize(hy_interaction* ia, const double* xa, const double* xb);

/* The step's right-hand side part, as an external force on side's vertices
 * (the objects' prepare multiplies it by dt):
 *   f(x0) - dt K v0, K the linearised stiffness, at (xa, xb, va, vb). */
void hy_interaction_add_rhs(const hy_interaction* ia, int side, const double* xa, const double* xb, const double* va,
                            const double* vb, double dt, double* f_side);
/* diag_side (9 per vertex) += scale * the 3x3 diagonal blocks of K on that
 * side's vertices. */
void hy_interaction_add_diagonal(const hy_interaction* ia, int side, double scale, double* diag_side);
/* y_side += scale * (K p) on that side's rows, the vectors of both sides
 * read with fixed vertices as zero and fixed rows left alone (the objects'
 * systems hold those rows as the identity). fixed_a/fixed_b: 1 per fixed
 * vertex (NULL: none). */
void hy_interaction_add_product(const hy_interaction* ia, int side, double scale, const uint8_t* fixed_a,
                                const uint8_t* fixed_b, const double* pa, const double* pb, double* y_side);

/* ---- the coupled step */

typedef struct hy_coupled_object {
    const hy_implicit_ops* ops;
    void* model;
    const double *x0, *v0;
    const double* f_ext; /* 3 per vertex, N; NULL for none */
    double *x1, *v1;     /* may alias x0 / v0 */
    const double* held_normal; /* NULL, or its vertices held on surfaces this step (hy_implicit_held's normal) */
    uint8_t* let_go;           /* NULL, or per vertex: set where a hold pulled (hy_implicit_held's let_go) */
} hy_coupled_object;

typedef struct hy_coupled_stats {
    int32_t cg_iterations;
    double cg_relative_residual;
} hy_coupled_stats;

/* One backward-Euler step of length dt for all the objects at once, under
 * gravity, with the interactions' forces in the implicit system (see the
 * top). Each interaction's objects are indices into objects[]. CG, from
 * the objects' own starts (hy_implicit_ops guess) scaled as a whole, with the
 * objects' block-Jacobi preconditioners (the interactions' diagonal blocks
 * added) until ||b - A dv|| <= cg_tolerance ||b|| or cg_max_iterations.
 * Deterministic for any pool size (the interactions add their terms in
 * their order, pair by pair). Allocates its vectors per call.
 * HY_ERR_INVALID_ARG for bad arguments or an interaction naming an object
 * outside the list or whose vertex counts differ from the objects';
 * HY_ERR_NUMERIC naming the object and vertex that went non-finite;
 * HY_ERR_NOMEM. */
hy_status hy_coupled_solve(hy_pool* pool, const hy_coupled_object* objects, int32_t object_count,
                           hy_interaction* const* interactions, int32_t interaction_count, double dt,
                           const double gravity[3], int32_t cg_max_iterations, double cg_tolerance,
                           hy_coupled_stats* stats);

#endif
