/* lp: the iterative LP scheduler of Kim et al. 2013.
 *
 * The real problem counts a setup only for pairs (i, j) that get jobs, which
 * makes it a mixed-integer program. The paper's answer, followed here:
 *  1. Initial assignment: allow every pair with waiting jobs and count every
 *     setup; solve the LP.
 *  2. Refinement: per job type, forbid the resource with the smallest
 *     job-to-resource ratio x_ij / n_j (ties: the larger setup cost, then the
 *     higher index), which drops its setup from the LP; re-solve.
 *     Resources that got no job of a type at all (ratio 0) are all forbidden
 *     in the same step: that can only lower every finishing time, and doing
 *     it one per step would only spend iterations.
 *  3. Stop when the LP becomes infeasible (no type loses its last resource:
 *     that is checked before forbidding), when the makespan rises
 *     (an unchanged makespan continues: forbidding on a resource that is not
 *     critical frees room without showing in L yet), when no pair can be
 *     forbidden, or — with options.lp_timeout — when the solving so far took
 *     longer than the smallest positive remaining busy time of any resource
 *     (past that point a resource would idle waiting for the schedule; a
 *     resource at 0 is the one that asked and does not count).
 * The answer is the rounded solution of the best iterate (by the expected
 * makespan of its integer counts). */
#include <string.h>

#include "engine/error.h"
#include "sched/policy.h"

/* Relative slack when comparing LP makespans: equal within round-off. */
#define L_TOL 1e-12

static hy_lp_result solve(const hy_sched_policy* p, const hy_sched_problem* prob, hy_sched_lp* lp) {
    hy_lp_result r = hy_sched_lp_solve(prob, lp, p->options.solver);
    /* the built-in simplex gives up only on numerical trouble; GLPK is the
     * safety net where it is built in */
    if (r == HY_LP_FAILED && p->options.solver == HY_LP_SIMPLEX && hy_sched_lp_have_glpk())
        r = hy_sched_lp_solve(prob, lp, HY_LP_GLPK);
    return r;
}

/* The move for type j, read from the solution in `from` and applied to
 * `allowed`: every zero-ratio pair, else the smallest-ratio one (largest
 * setup on ties, then the higher index). Never forbids a type's last
 * resource, so the LP stays feasible. Returns the pairs forbidden. */
static int forbid_type(const hy_sched_problem* prob, const hy_sched_lp* from, int j,
                       uint8_t allowed[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES]) {
    const hy_sched_model* M = prob->model;
    int R = M->resources, changed = 0;
    int64_t n = prob->jobs[j];
    if (n <= 0) return 0;
    int count = 0, zeros = 0, pick = -1;
    double zero_tol = 1e-9 * (double)n;
    for (int i = 0; i < R; i++) {
        if (!allowed[i][j]) continue;
        count++;
        if (from->x[i][j] <= zero_tol) zeros++;
    }
    if (count <= 1) return 0;
    if (zeros > 0 && zeros < count) {
        for (int i = 0; i < R; i++)
            if (allowed[i][j] && from->x[i][j] <= zero_tol) {
                allowed[i][j] = 0;
                changed++;
            }
        return changed;
    }
    for (int i = 0; i < R; i++) {
        if (!allowed[i][j]) continue;
        if (pick < 0) {
            pick = i;
            continue;
        }
        double xi = from->x[i][j], xp = from->x[pick][j];
        if (xi < xp || (xi == xp && M->setup[i][j] >= M->setup[pick][j])) pick = i;
    }
    allowed[pick][j] = 0;
    return 1;
}

/* Keep the rounded solution of `lp` if it beats the best so far. */
static void keep(const hy_sched_problem* prob, const hy_sched_lp* lp, hy_sched_assignment* a,
                 hy_sched_assignment* cand) {
    hy_sched_lp_round(prob, lp, cand);
    if (cand->makespan < a->makespan) {
        memcpy(a->count, cand->count, sizeof a->count);
        a->makespan = cand->makespan;
    }
}

static hy_status lp_assign(hy_sched_policy* p, const hy_sched_problem* prob, hy_sched_assignment* a) {
    const hy_sched_options* o = &p->options;
    int J = 2 * prob->model->resources;
    double t0 = o->lp_timeout ? hy_sched_now() : 0.0;
    double limit = -1; /* seconds; < 0: none */
    if (o->lp_timeout)
        for (int i = 0; i < prob->model->resources; i++)
            if (prob->busy[i] > 0 && (limit < 0 || prob->busy[i] < limit)) limit = prob->busy[i];

    /* ~18 KB each on the stack: a policy call allocates nothing */
    hy_sched_lp lp, trial, best_trial;
    hy_sched_assignment cand;
    hy_sched_lp_allow_all(prob, &lp);
    hy_lp_result r = solve(p, prob, &lp);
    if (r != HY_LP_OPTIMAL)
        return hy_fail(HY_ERR_NUMERIC, "policy lp: the initial LP could not be solved (%s)",
                       r == HY_LP_INFEASIBLE ? "infeasible" : "solver failed");
    a->lp_initial = lp.makespan;
    a->iterations = 1;
    hy_sched_lp_round(prob, &lp, a);
    double prev = lp.makespan;

#define OUT_OF_TIME() (a->iterations >= o->lp_max_iterations || (limit >= 0 && hy_sched_now() - t0 > limit))
    while (!OUT_OF_TIME()) {
        /* the paper's step: every type's move at once */
        memcpy(trial.allowed, lp.allowed, sizeof lp.allowed);
        int moved = 0;
        for (int j = 0; j < J; j++) moved += forbid_type(prob, &lp, j, trial.allowed) > 0;
        if (!moved) break;
        r = solve(p, prob, &trial);
        a->iterations++;
        if (r == HY_LP_OPTIMAL) keep(prob, &trial, a, &cand);
        if (r == HY_LP_OPTIMAL && trial.makespan <= prev * (1 + L_TOL)) {
            prev = trial.makespan;
            lp = trial;
            continue;
        }
        if (moved == 1) break; /* the single move was just tried */
        /* all at once raised the makespan: try each type's move alone and
         * take the best if it lowers the makespan; stop when none does */
        int best = -1;
        double best_l = prev * (1 - L_TOL);
        for (int j = 0; j < J && !OUT_OF_TIME(); j++) {
            memcpy(trial.allowed, lp.allowed, sizeof lp.allowed);
            if (!forbid_type(prob, &lp, j, trial.allowed)) continue;
            r = solve(p, prob, &trial);
            a->iterations++;
            if (r != HY_LP_OPTIMAL) continue;
            keep(prob, &trial, a, &cand);
            if (trial.makespan < best_l) {
                best_l = trial.makespan;
                best = j;
                best_trial = trial;
            }
        }
        if (best < 0) break;
        lp = best_trial;
        prev = lp.makespan;
    }
    /* exchange: a type left on one resource may sit on the wrong one (its
     * other pairs went at ratio 0 in the first LP, where every setup was
     * sunk). Move it to each other resource in turn; take the first move
     * that lowers the makespan, until none does or time runs out. */
    int R = prob->model->resources;
    for (int improved = 1; improved && o->lp_exchange && !OUT_OF_TIME();) {
        improved = 0;
        for (int j = 0; j < J && !improved && !OUT_OF_TIME(); j++) {
            if (prob->jobs[j] <= 0) continue;
            int on = -1, count = 0;
            for (int i = 0; i < R; i++)
                if (lp.allowed[i][j]) on = i, count++;
            for (int i = 0; i < R && !improved && !OUT_OF_TIME(); i++) {
                if (lp.allowed[i][j]) continue;
                /* a lone type moves to i; a split one may also use i */
                memcpy(trial.allowed, lp.allowed, sizeof lp.allowed);
                if (count == 1) trial.allowed[on][j] = 0;
                trial.allowed[i][j] = 1;
                r = solve(p, prob, &trial);
                a->iterations++;
                if (r != HY_LP_OPTIMAL) continue;
                keep(prob, &trial, a, &cand);
                if (trial.makespan < prev * (1 - L_TOL)) {
                    prev = trial.makespan;
                    lp = trial;
                    improved = 1;
                }
            }
        }
    }
#undef OUT_OF_TIME
    return HY_OK;
}

const hy_sched_policy_class hy_sched_policy_lp = {
    "lp", "iterative LP over the expected-time model (Kim et al. 2013)", NULL, NULL, lp_assign,
};
