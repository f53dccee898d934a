/* exhaustive: every setup pattern solved as an LP, the best kept (the
 * evaluation reference of Kim et al. 2013; only for small |R|).
 *
 * A setup pattern says which (resource, type) pairs may run jobs, each with
 * its setup counted. The smallest LP objective over all patterns, L*, is a
 * lower bound on the makespan of any integer assignment (its own pattern of
 * used pairs is one of them), so it is what `lp` is measured against.
 *
 * Enumeration. Types with no jobs take no part, and a pattern that leaves a
 * type with no resource is infeasible, so the patterns are the choices of a
 * non-empty resource subset per active type: (2^R - 1)^T of the 2^(R·T).
 * By default they are visited depth-first (one type at a time) and a branch
 * is cut when its lower bound already reaches the best L: the LP in which
 * the types still undecided may use every resource without paying setup.
 * That bound is below every pattern in the branch (fewer setups, more
 * freedom), so pruning never changes L*; with prune = 0 every one of the
 * 2^(R·T) patterns is solved, which tests use to check exactly that.
 *
 * The answer: the best rounded assignment among the patterns solved, and
 * lp's own answer (lp without its time-out, so deterministic), so the
 * integer makespan of exhaustive never exceeds lp's. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "sched/policy.h"

/* 2^(R·T) grows fast: R = 3 with all 6 types is 262,144 patterns (117,649
 * feasible); past this many pair variables we refuse rather than hang. */
#define MAX_PAIRS 24

typedef struct search {
    const hy_sched_problem* p;
    hy_lp_solver solver;
    int R, T;
    int type_of[HY_SCHED_MAX_TYPES];
    hy_sched_lp lp;
    double best_lp;            /* L* so far */
    hy_sched_assignment* best; /* best integer assignment so far */
    hy_sched_assignment cand;
    long solves;
    hy_status status;
} search;

static hy_lp_result solve(search* s) {
    hy_lp_result r = hy_sched_lp_solve(s->p, &s->lp, s->solver);
    if (r == HY_LP_FAILED && s->solver == HY_LP_SIMPLEX && hy_sched_lp_have_glpk())
        r = hy_sched_lp_solve(s->p, &s->lp, HY_LP_GLPK);
    s->solves++;
    return r;
}

/* A complete pattern: solve, and keep it if it beats the best. */
static void leaf(search* s) {
    hy_lp_result r = solve(s);
    if (r == HY_LP_INFEASIBLE) return;
    if (r != HY_LP_OPTIMAL) {
        s->status = hy_fail(HY_ERR_NUMERIC, "policy exhaustive: an LP could not be solved");
        return;
    }
    if (s->lp.makespan < s->best_lp) s->best_lp = s->lp.makespan;
    hy_sched_lp_round(s->p, &s->lp, &s->cand);
    if (s->cand.makespan < s->best->makespan) {
        hy_sched_counts_copy(s->best, &s->cand, s->R);
        s->best->makespan = s->cand.makespan;
    }
}

/* Depth-first over active types d.. with branch bounds. */
static void branch(search* s, int d) {
    if (s->status) return;
    if (d == s->T) {
        leaf(s);
        return;
    }
    int j = s->type_of[d], R = s->R;
    if (d > 0) {
        /* bound: types d.. free on every resource, no setup */
        for (int t = d; t < s->T; t++)
            for (int i = 0; i < R; i++) s->lp.allowed[i][s->type_of[t]] = 2;
        hy_lp_result r = solve(s);
        if (r == HY_LP_FAILED) {
            s->status = hy_fail(HY_ERR_NUMERIC, "policy exhaustive: a bounding LP could not be solved");
            return;
        }
        if (r == HY_LP_OPTIMAL && s->lp.makespan >= s->best_lp) return;
    }
    for (unsigned mask = (1u << R) - 1; mask >= 1; mask--) {
        for (int t = d + 1; t < s->T; t++)
            for (int i = 0; i < R; i++) s->lp.allowed[i][s->type_of[t]] = 2;
        for (int i = 0; i < R; i++) s->lp.allowed[i][j] = (mask >> i) & 1u;
        branch(s, d + 1);
        if (s->status) return;
    }
}

/* Every one of the 2^(R·T) patterns, infeasible ones included. */
static void brute(search* s) {
    int R = s->R, n = R * s->T;
    for (uint64_t pat = 0; pat < (1ull << n) && !s->status; pat++) {
        memset(s->lp.allowed, 0, sizeof s->lp.allowed);
        for (int b = 0; b < n; b++)
            if ((pat >> b) & 1ull) s->lp.allowed[b % R][s->type_of[b / R]] = 1;
        leaf(s);
    }
}

hy_status hy_sched_exhaustive_run(const hy_sched_problem* p, hy_lp_solver solver, int prune, hy_sched_assignment* a) {
    hy_status st = hy_sched_problem_check(p);
    if (st) return st;
    search st_;
    search* s = &st_;
    memset(s, 0, sizeof *s);
    s->p = p;
    s->solver = solver;
    s->R = p->model->resources;
    s->best = a;
    for (int j = 0; j < 2 * s->R; j++)
        if (p->jobs[j] > 0) s->type_of[s->T++] = j;
    if (s->R * s->T > MAX_PAIRS)
        return hy_fail(HY_ERR_UNSUPPORTED,
                       "policy exhaustive: 2^(%d resources x %d job types) setup patterns are too many "
                       "(at most 2^%d); use it only for small |R|",
                       s->R, s->T, MAX_PAIRS);

    /* start from lp's answer: an upper bound on L* and the integer incumbent */
    hy_sched_options o;
    hy_sched_options_default(&o);
    o.lp_timeout = 0;
    o.solver = solver;
    hy_sched_policy lp = {&hy_sched_policy_lp, o, NULL};
    if ((st = hy_sched_policy_lp.init(&lp))) return st; /* its scratch */
    hy_sched_assignment_clear(a);
    st = hy_sched_policy_lp.assign(&lp, p, a);
    hy_sched_policy_lp.deinit(&lp);
    if (st) return st;
    a->makespan = hy_sched_makespan(p, a);
    s->best_lp = INFINITY;
    if (s->T == 0) {
        s->best_lp = a->makespan;
    } else if (prune) {
        memset(s->lp.allowed, 0, sizeof s->lp.allowed);
        branch(s, 0);
    } else {
        brute(s);
    }
    if (s->status) return s->status;
    a->lp_initial = s->best_lp;
    a->iterations = (int)(s->solves > 0x7fffffff ? 0x7fffffff : s->solves);
    return HY_OK;
}

static hy_status exhaustive_assign(hy_sched_policy* p, const hy_sched_problem* prob, hy_sched_assignment* a) {
    return hy_sched_exhaustive_run(prob, p->options.solver, 1, a);
}

const hy_sched_policy_class hy_sched_policy_exhaustive = {
    .name = "exhaustive",
    .description = "every setup pattern solved as an LP, the best kept (evaluation only; small |R|)",
    .assign = exhaustive_assign,
    .call_time = hy_sched_lp_call_time, /* LP solves, as lp's */
    .evaluation_only = 1,
};
