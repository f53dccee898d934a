/* The scheduling LP of Kim et al. 2013 for one setup pattern.
 *
 * Given which (resource i, type j) pairs are allowed, with the setup of
 * every allowed pair counted as if it were used:
 *
 *   minimise L
 *   subject to  busy_i + Σ_{j allowed} setup(i,j) + Σ_j cost(i,j)·x_ij <= L   for every resource i
 *               Σ_i x_ij = n_j                                                 for every type j with n_j > 0
 *               x_ij >= 0, x_ij = 0 where (i,j) is not allowed
 *
 * Types with no waiting jobs take no part (no variables, no setup).
 * The LP is solved in normalised form (y_ij = x_ij / n_j, time divided by
 * a scale) by a small dense revised simplex written for this shape (a
 * crash basis that is feasible by construction, so no phase 1; Dantzig
 * pricing, Bland's rule after a run of degenerate pivots; bounded number of
 * pivots; with one type with jobs, water-filling where that gives the
 * simplex's own answer), or by GLPK as the reference.
 *
 * Threads: reentrant; no global state. */
#ifndef HY_SCHED_LP_H
#define HY_SCHED_LP_H

#include <stdint.h>

#include "sched/model.h"

typedef enum hy_lp_solver {
    HY_LP_SIMPLEX = 0,    /* the built-in dense simplex (fast; the default) */
    HY_LP_GLPK = 1,       /* GLPK glp_simplex */
    HY_LP_GLPK_EXACT = 2  /* GLPK glp_simplex then glp_exact (rational arithmetic): reference for tests */
} hy_lp_solver;

typedef enum hy_lp_result {
    HY_LP_OPTIMAL = 0,
    HY_LP_INFEASIBLE = 1, /* a type with jobs has no allowed resource */
    HY_LP_FAILED = 2,     /* pivot limit, numerical trouble, or solver not built in */
} hy_lp_result;

/* One LP: the pattern in, the solution out. */
typedef struct hy_sched_lp {
    /* in: 0 forbidden, 1 allowed with its setup counted, 2 allowed with no
     * setup counted (a relaxation: exhaustive's lower bounds) */
    uint8_t allowed[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES];
    double x[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES];        /* out: fractional job counts (i < R, j < 2R) */
    double makespan;                                             /* out: optimal L, seconds */
    int pivots;                                                  /* out: simplex pivots (built-in solver) */
} hy_sched_lp;

/* Allow every pair (i, j) with jobs[j] > 0. */
void hy_sched_lp_allow_all(const hy_sched_problem* problem, hy_sched_lp* lp);
/* Solve for lp->allowed. The problem must pass hy_sched_problem_check. */
hy_lp_result hy_sched_lp_solve(const hy_sched_problem* problem, hy_sched_lp* lp, hy_lp_solver solver);
/* Whether this build has GLPK (HY_LP_GLPK* answer HY_LP_FAILED otherwise). */
int hy_sched_lp_have_glpk(void);

/* Integer counts from lp->x: values within 1e-6 of an integer snap to it (so
 * round-off never creates a pair with one job and a setup); the remaining
 * jobs of each type go one each to the largest fractional parts, ties to the
 * lower resource index. Deterministic; every job assigned exactly once.
 * Fills a->count[i][j] for i < R, j < 2R (the part a problem of R
 * resources uses) and a->makespan; leaves the rest. */
void hy_sched_lp_round(const hy_sched_problem* problem, const hy_sched_lp* lp, hy_sched_assignment* a);

/* The water level of `amount` spread over resources filled in order of
 * their start levels (the one-type LP, lp's integer polish): idx[0..k) in
 * start order, a[i] the start, a_per_c[i] = a[i] / c[i] and inv_c[i] =
 * 1 / c[i] for a per-unit cost c[i] > 0. L = (amount + Σ a/c) / Σ 1/c over
 * the shortest prefix whose next start is at or above L; *act is that
 * prefix's length. */
static inline double hy_water_level(const int* idx, int k, const double* a, const double* a_per_c,
                                    const double* inv_c, double amount, int* act) {
    double sa = 0, sc = 0, L = 0;
    *act = 0;
    for (int q = 0; q < k; q++) {
        int i = idx[q];
        sa += a_per_c[i];
        sc += inv_c[i];
        *act = q + 1;
        L = (amount + sa) / sc;
        if (q + 1 == k || L <= a[idx[q + 1]]) break;
    }
    return L;
}

#endif
