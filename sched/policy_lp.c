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
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
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
        if (xi < xp || (xi == xp && hy_sched_setup(prob, i, j) >= hy_sched_setup(prob, pick, j))) pick = i;
    }
    allowed[pick][j] = 0;
    return 1;
}

/* Keep the rounded solution of `lp` if it beats the best so far. */
static void keep(const hy_sched_problem* prob, const hy_sched_lp* lp, hy_sched_assignment* a,
                 hy_sched_assignment* cand) {
    hy_sched_lp_round(prob, lp, cand);
    if (cand->makespan < a->makespan) {
        hy_sched_counts_copy(a, cand, prob->model->resources);
        a->makespan = cand->makespan;
    }
}

/* ---- integer polish
 *
 * A local search on the integer counts, run after the LP refinement (and
 * however early the time-out stopped it): per type j, with every other
 * type's load fixed, redistribute j's jobs over a set of resources by
 * water-filling — its current set, the set less one resource, the set plus
 * one, or one other resource alone — and apply the move that lowers the
 * makespan most; repeat until none does. A move costs O(R log R) with no LP,
 * so a whole polish costs about what one LP solve does. It mends what the
 * LP's continuous view misses: rounding, and setups paid for a handful of
 * jobs when the refinement was cut short.
 *
 * The defaults, and why (their figures, and the options tried and dropped:
 * docs/PERFORMANCE.md, "The lp policy's defaults"):
 *  - No exchange step (lp_exchange 0). The exchange costs up to one LP solve
 *    per (type, resource) pair a pass, and the scheduler is one thread that
 *    answers one call at a time: on a frame of many small rounds its solves
 *    are the resources' waiting time. The polish costs about one LP solve
 *    and is charged as one iteration.
 *  - The producer charge. Where the problem says that the traversal goes on
 *    in rounds (hy_sched_problem.next_round), a move that makes a resource a
 *    new TRAVERSE producer must lower the makespan by more than the setup of
 *    the next round's batch its node pairs make (producer_charge): each
 *    producer types the next round's jobs, each type a setup wherever it
 *    goes. Problems with no next round (isolated sets; the step's framework,
 *    whose TRAVERSE job is a whole subtree and makes only LEAF jobs) are
 *    polished uncharged: their own makespan is all there is.
 *  - Which answers to polish (lp_polish 3). Where rounds follow, only a
 *    cut-short refinement's (as lp_polish 1): polishing an answer the
 *    refinement converged on costs frames even uncharged, and the cut-short
 *    answers need it. An isolated set's answer always (as 2): its gap to
 *    exhaustive needs it. */

#define POLISH_ROUNDS 16

/* Type j's view of the resources for water-filling, made once per type
 * and shared by every mask tried: start level a_i = base_i + setup(i, j),
 * setup and cost per job, and the resources in start order (ties: lower
 * index first). */
typedef struct spread {
    double a[HY_SCHED_MAX_RESOURCES], setup[HY_SCHED_MAX_RESOURCES], cost[HY_SCHED_MAX_RESOURCES];
    double a_per_cost[HY_SCHED_MAX_RESOURCES], inv_cost[HY_SCHED_MAX_RESOURCES]; /* a/c and 1/c (c > 0) */
    double top;                                                                 /* max_i base_i */
    int order[HY_SCHED_MAX_RESOURCES];
} spread;

static void spread_init(const hy_sched_problem* prob, int R, const double* base, int j, spread* sp) {
    const hy_sched_model* M = prob->model;
    for (int i = 0; i < R; i++) {
        sp->setup[i] = hy_sched_setup(prob, i, j);
        sp->cost[i] = M->cost[i][j];
        double ai = base[i] + sp->setup[i];
        sp->a[i] = ai;
        if (sp->cost[i] > 0) {
            sp->a_per_cost[i] = ai / sp->cost[i];
            sp->inv_cost[i] = 1.0 / sp->cost[i];
        }
        if (i == 0 || base[i] > sp->top) sp->top = base[i];
        int p = i; /* insertion by start level */
        while (p > 0 && sp->a[sp->order[p - 1]] > ai) {
            sp->order[p] = sp->order[p - 1];
            p--;
        }
        sp->order[p] = i;
    }
}

/* Spread n jobs of type j over the resources in `mask` so that the largest
 * finishing time base_i + setup + cost * x_i is as small as it can be
 * (integer x, Σ x = n); x_i = 0 outside the mask. Returns the makespan of
 * all resources with this type's new counts. */
static double fill_type(int R, const double* base, const spread* sp, int64_t n, uint64_t mask, int64_t* x) {
    int idx[HY_SCHED_MAX_RESOURCES], k = 0;
    for (int i = 0; i < R; i++) x[i] = 0;
    for (int q = 0; q < R; q++)
        if (mask >> sp->order[q] & 1u) idx[k++] = sp->order[q];
    if (k == 0) return HUGE_VAL;
    /* a free resource (cost 0) takes everything at its start level */
    for (int q = 0; q < k; q++)
        if (!(sp->cost[idx[q]] > 0)) {
            x[idx[q]] = n;
            goto done;
        }
    /* continuous level L with Σ max(0, (L - a_i) / c_i) = n over the
     * first `act` resources in start order */
    int act = 0;
    double L = hy_water_level(idx, k, sp->a, sp->a_per_cost, sp->inv_cost, (double)n, &act);
    int64_t left = n;
    for (int q = 0; q < act; q++) {
        int i = idx[q];
        double v = floor((L - sp->a[i]) / sp->cost[i]);
        int64_t xi = v > 0 ? (int64_t)v : 0;
        if (xi > left) xi = left;
        x[i] = xi;
        left -= xi;
    }
    /* the rest one at a time to whichever would finish first with it */
    while (left > 0) {
        int pick = -1;
        double best = HUGE_VAL;
        for (int q = 0; q < k; q++) {
            int i = idx[q];
            double f = sp->a[i] + sp->cost[i] * (double)(x[i] + 1);
            if (f < best) best = f, pick = i;
        }
        x[pick]++;
        left--;
    }
done:;
    /* every resource's finish: base_i where it takes none of j (top covers
     * those, and no finish is below its base) */
    double Lmax = sp->top > 0 ? sp->top : 0;
    for (int q = 0; q < k; q++) {
        int i = idx[q];
        if (x[i] <= 0) continue;
        double f = base[i] + (sp->setup[i] + sp->cost[i] * (double)x[i]);
        if (f > Lmax) Lmax = f;
    }
    return Lmax;
}

/* The resources that run TRAVERSE jobs of any producer in `a` (bit i). */
static uint64_t traverse_producers(int R, const hy_sched_assignment* a) {
    uint64_t on = 0;
    for (int i = 0; i < R; i++)
        for (int t = 0; t < 2 * R; t += 2)
            if (a->count[i][t] > 0) on |= (uint64_t)1 << i;
    return on;
}

/* What a move of TRAVERSE type j onto the resources in `added` costs the
 * rounds that follow (prob->next_round): each resource there that is not
 * among the `producers` yet becomes a producer of the next round's node
 * pairs, a type of their own, so a batch and a setup more wherever they go
 * (charged at its own TRAVERSE setup: where they cost no transfer). 0 for
 * LEAF types and where no round follows. */
static double producer_charge(const hy_sched_problem* prob, uint64_t producers, int j, uint64_t added) {
    const hy_sched_model* M = prob->model;
    if (!prob->next_round || hy_job_type_kind(j) != HY_JOB_TRAVERSE) return 0.0;
    double charge = 0.0;
    for (int i = 0; i < M->resources; i++)
        if ((added & ~producers) >> i & 1u) charge += M->setup[i][hy_job_type(i, HY_JOB_TRAVERSE)];
    return charge;
}

/* The polish's last step: drop batches that buy no makespan. A type split
 * over several resources may leave one of them a batch (often a handful of
 * jobs from rounding the LP) whose jobs the type's other resources could
 * take with the makespan no higher: the makespan cannot see it, but that
 * resource pays a setup for nothing and is busy that much longer when the
 * next call comes. Drop such a batch, re-spreading its type over the rest
 * by water-filling, when that also lowers the type's time summed over its
 * resources (the setup saved is more than what the jobs cost more where
 * they go), the largest saving first; repeat until none qualifies (each
 * drop removes a pair, so at most R·J drops). The makespan never rises:
 * this only breaks ties among answers of equal makespan in favour of less
 * busy time, which the next call sees as resources free sooner. */
static void prune(const hy_sched_problem* prob, hy_sched_assignment* a) {
    const hy_sched_model* M = prob->model;
    int R = M->resources, J = 2 * R;
    double fin[HY_SCHED_MAX_RESOURCES], base[HY_SCHED_MAX_RESOURCES];
    int64_t x[HY_SCHED_MAX_RESOURCES], bx[HY_SCHED_MAX_RESOURCES];
    double L = a->makespan;
    for (int drops = 0; drops < R * J; drops++) {
        for (int i = 0; i < R; i++) fin[i] = hy_sched_finish(prob, a, i);
        int bj = -1;
        double saved = 0;
        for (int j = 0; j < J; j++) {
            if (prob->jobs[j] < 2) continue; /* on one resource at most */
            uint64_t on = 0;
            int used = 0;
            for (int i = 0; i < R; i++)
                if (a->count[i][j] > 0) on |= (uint64_t)1 << i, used++;
            if (used < 2) continue; /* a type's last resource stays */
            double busy = 0; /* the type's time summed over its resources */
            for (int i = 0; i < R; i++) {
                double ti = hy_sched_problem_time(prob, i, j, a->count[i][j]);
                base[i] = fin[i] - ti;
                busy += ti;
            }
            spread sp;
            int made = 0;
            for (int i = 0; i < R; i++) {
                if (!(on >> i & 1u)) continue;
                /* the whole batch onto one other resource of the type: its
                 * finish is recomputed as the makespan would (the others
                 * only fall) */
                int64_t ci = a->count[i][j];
                double ti = hy_sched_problem_time(prob, i, j, ci);
                for (int k = 0; k < R; k++) {
                    if (k == i || !(on >> k & 1u)) continue;
                    int64_t ck = a->count[k][j];
                    double move =
                        ti + hy_sched_problem_time(prob, k, j, ck) - hy_sched_problem_time(prob, k, j, ck + ci);
                    if (!(move > saved)) continue;
                    a->count[k][j] = ck + ci;
                    double fk = hy_sched_finish(prob, a, k);
                    a->count[k][j] = ck;
                    if (fk > L) continue;
                    saved = move;
                    bj = j;
                    for (int q = 0; q < R; q++) bx[q] = a->count[q][j];
                    bx[k] += ci;
                    bx[i] = 0;
                }
                /* re-spread over the rest: the most it can save is i's setup */
                if (!(hy_sched_setup(prob, i, j) > saved)) continue;
                if (!made) spread_init(prob, R, base, j, &sp), made = 1;
                if (fill_type(R, base, &sp, prob->jobs[j], on & ~((uint64_t)1 << i), x) > L) continue;
                double after = 0;
                for (int k = 0; k < R; k++) after += hy_sched_problem_time(prob, k, j, x[k]);
                if (!(busy - after > saved)) continue;
                saved = busy - after;
                bj = j;
                memcpy(bx, x, sizeof(int64_t) * (size_t)R);
            }
        }
        if (bj < 0) break;
        for (int i = 0; i < R; i++) a->count[i][bj] = bx[i];
    }
    a->makespan = hy_sched_makespan(prob, a);
}

static void polish(const hy_sched_problem* prob, hy_sched_assignment* a) {
    const hy_sched_model* M = prob->model;
    int R = M->resources, J = 2 * R;
    double fin[HY_SCHED_MAX_RESOURCES], base[HY_SCHED_MAX_RESOURCES];
    int64_t x[HY_SCHED_MAX_RESOURCES], bx[HY_SCHED_MAX_RESOURCES];
    for (int round = 0; round < POLISH_ROUNDS; round++) {
        double L = 0;
        for (int i = 0; i < R; i++) {
            fin[i] = hy_sched_finish(prob, a, i);
            if (fin[i] > L) L = fin[i];
        }
        double best = L * (1 - L_TOL);
        int bj = -1;
        uint64_t producers = prob->next_round ? traverse_producers(R, a) : 0;
        for (int j = 0; j < J; j++) {
            int64_t n = prob->jobs[j];
            if (n <= 0) continue;
            /* a move of type j changes only the loads of j's resources, so it
             * can lower the makespan only if j runs on every critical one */
            int helps = 1;
            for (int i = 0; i < R && helps; i++)
                if (fin[i] >= best && a->count[i][j] == 0) helps = 0;
            if (!helps) continue;
            uint64_t on = 0;
            for (int i = 0; i < R; i++) {
                base[i] = fin[i] - hy_sched_problem_time(prob, i, j, a->count[i][j]);
                if (a->count[i][j] > 0) on |= (uint64_t)1 << i;
            }
            spread sp;
            spread_init(prob, R, base, j, &sp);
            /* the current set, then each one-resource change of it */
            for (int m = -1; m < 2 * R; m++) {
                uint64_t mask;
                if (m < 0)
                    mask = on;
                else if (m < R)
                    mask = on ^ ((uint64_t)1 << m); /* drop or add resource m */
                else if (!(on >> (m - R) & 1u))
                    mask = (uint64_t)1 << (m - R); /* move the whole type to m - R */
                else
                    continue;
                if (!mask) continue;
                double l = fill_type(R, base, &sp, n, mask, x) + producer_charge(prob, producers, j, mask & ~on);
                if (l < best) {
                    best = l;
                    bj = j;
                    memcpy(bx, x, sizeof(int64_t) * (size_t)R);
                }
            }
        }
        if (bj < 0) break;
        for (int i = 0; i < R; i++) a->count[i][bj] = bx[i];
    }
    a->makespan = hy_sched_makespan(prob, a);
    prune(prob, a);
}

/* Solving time so far for the time-out: the wall clock (lp_timeout 1) or
 * the modeled call time of the iterations so far (2: deterministic, what a
 * virtual clock charges for the call). */
static double spent(const hy_sched_options* o, const hy_sched_problem* prob, const hy_sched_assignment* a,
                    double t0) {
    if (o->lp_timeout == 1) return hy_sched_now() - t0;
    return hy_sched_call_time(&hy_sched_policy_lp, prob, a->iterations);
}

/* The call's set fits in the time the busiest resource already has: each
 * type whole, largest work first, on the resource where it finishes
 * earliest (its results, and the next round's node pairs, come soonest);
 * when none finishes later than the busiest resource's busy time, that is
 * every answer's makespan, so this answer is optimal and no LP is solved
 * (mostly the short rounds near a frame's end, where a call's solving time
 * sits on the critical path). Returns 1 with *a filled, or 0 (*a as it
 * was). Tried and dropped: the resource where the type costs least among
 * those where it fits (with the producer charge): no gain beyond the
 * streams' noise, and a slower finish for the set. */
static int fits_in_slack(const hy_sched_problem* prob, hy_sched_assignment* a) {
    const hy_sched_model* M = prob->model;
    int R = M->resources, J = 2 * R;
    double fin[HY_SCHED_MAX_RESOURCES], floor_l = 0;
    for (int i = 0; i < R; i++) {
        fin[i] = prob->busy[i];
        if (fin[i] > floor_l) floor_l = fin[i];
    }
    int order[HY_SCHED_MAX_TYPES], n = 0, on[HY_SCHED_MAX_TYPES];
    double work[HY_SCHED_MAX_TYPES], own[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES];
    for (int j = 0; j < J; j++) {
        if (prob->jobs[j] <= 0) continue;
        work[j] = INFINITY;
        for (int i = 0; i < R; i++) {
            own[i][j] = hy_sched_setup(prob, i, j) + M->cost[i][j] * (double)prob->jobs[j];
            if (own[i][j] < work[j]) work[j] = own[i][j];
        }
        int b = n++; /* insertion sort, largest first, ties by index */
        while (b > 0 && work[order[b - 1]] < work[j]) {
            order[b] = order[b - 1];
            b--;
        }
        order[b] = j;
    }
    for (int k = 0; k < n; k++) {
        int j = order[k], best = -1;
        double best_t = 0;
        for (int i = 0; i < R; i++) {
            double t = fin[i] + own[i][j];
            if (best < 0 || t < best_t) {
                best = i;
                best_t = t;
            }
        }
        if (!(best_t <= floor_l)) return 0;
        fin[best] = best_t;
        on[j] = best;
    }
    for (int k = 0; k < n; k++) a->count[on[order[k]]][order[k]] = prob->jobs[order[k]];
    a->makespan = hy_sched_makespan(prob, a);
    a->lp_initial = a->makespan;
    a->iterations = 0;
    return 1;
}

/* A trial starts from the current pattern: the rows of the R resources. */
static void copy_allowed(hy_sched_lp* to, const hy_sched_lp* from, int R) {
    for (int i = 0; i < R; i++) memcpy(to->allowed[i], from->allowed[i], (size_t)(2 * R));
}

static void swap_lp(hy_sched_lp** x, hy_sched_lp** y) {
    hy_sched_lp* t = *x;
    *x = *y;
    *y = t;
}

/* Per-instance scratch, made once so that a call neither allocates nor
 * sets up a large stack frame: three LPs and the rounded trial (its launch
 * limits stay 0: hy_sched_lp_round writes counts only). */
typedef struct lp_state {
    hy_sched_lp store[3];
    hy_sched_assignment cand;
} lp_state;

static hy_status lp_init(hy_sched_policy* p) {
    p->ctx = calloc(1, sizeof(lp_state));
    return p->ctx ? HY_OK : hy_fail(HY_ERR_NOMEM, "policy lp: out of memory");
}

static void lp_deinit(hy_sched_policy* p) { free(p->ctx); }

static hy_status lp_assign(hy_sched_policy* p, const hy_sched_problem* prob, hy_sched_assignment* a) {
    const hy_sched_options* o = &p->options;
    int J = 2 * prob->model->resources;
    if (fits_in_slack(prob, a)) return HY_OK;
    double t0 = o->lp_timeout == 1 ? hy_sched_now() : 0.0;
    double limit = -1; /* seconds; < 0: none */
    if (o->lp_timeout)
        for (int i = 0; i < prob->model->resources; i++)
            if (prob->busy[i] > 0 && (limit < 0 || prob->busy[i] < limit)) limit = prob->busy[i];

    /* The instance's scratch (lp_state): the current, trial and best-trial
     * LPs change roles by pointer (a struct copy moves 18 KB, more than a
     * solve's arithmetic at |R| = 6); only the rows of the problem's R
     * resources are ever read or copied. */
    lp_state* st = p->ctx;
    hy_sched_lp *lp = &st->store[0], *trial = &st->store[1], *best_trial = &st->store[2];
    hy_sched_assignment* cand = &st->cand;
    int R = prob->model->resources;
    hy_sched_lp_allow_all(prob, lp);
    hy_lp_result r = solve(p, prob, lp);
    if (r != HY_LP_OPTIMAL)
        return hy_fail(HY_ERR_NUMERIC, "policy lp: the initial LP could not be solved (%s)",
                       r == HY_LP_INFEASIBLE ? "infeasible" : "solver failed");
    a->lp_initial = lp->makespan;
    a->iterations = 1;
    hy_sched_lp_round(prob, lp, a);
    double prev = lp->makespan;

    int cut = 0; /* the refinement stopped on time or iterations, not by converging */
#define OUT_OF_TIME() \
    (cut || (cut = a->iterations >= o->lp_max_iterations || (limit >= 0 && spent(o, prob, a, t0) > limit)))
    while (!OUT_OF_TIME()) {
        /* the paper's step: every type's move at once */
        copy_allowed(trial, lp, R);
        int moved = 0;
        for (int j = 0; j < J; j++) moved += forbid_type(prob, lp, j, trial->allowed) > 0;
        if (!moved) break;
        r = solve(p, prob, trial);
        a->iterations++;
        if (r == HY_LP_OPTIMAL) keep(prob, trial, a, cand);
        if (r == HY_LP_OPTIMAL && trial->makespan <= prev * (1 + L_TOL)) {
            prev = trial->makespan;
            swap_lp(&lp, &trial);
            continue;
        }
        if (moved == 1) break; /* the single move was just tried */
        /* all at once raised the makespan: try each type's move alone and
         * take the best if it lowers the makespan; stop when none does */
        int best = -1;
        double best_l = prev * (1 - L_TOL);
        for (int j = 0; j < J && !OUT_OF_TIME(); j++) {
            copy_allowed(trial, lp, R);
            if (!forbid_type(prob, lp, j, trial->allowed)) continue;
            r = solve(p, prob, trial);
            a->iterations++;
            if (r != HY_LP_OPTIMAL) continue;
            keep(prob, trial, a, cand);
            if (trial->makespan < best_l) {
                best_l = trial->makespan;
                best = j;
                swap_lp(&best_trial, &trial);
            }
        }
        if (best < 0) break;
        swap_lp(&lp, &best_trial);
        prev = lp->makespan;
    }
    /* exchange: a type left on one resource may sit on the wrong one (its
     * other pairs went at ratio 0 in the first LP, where every setup was
     * sunk). Move it to each other resource in turn; take the first move
     * that lowers the makespan, until none does or time runs out. */
    for (int improved = 1; improved && o->lp_exchange && !OUT_OF_TIME();) {
        improved = 0;
        for (int j = 0; j < J && !improved && !OUT_OF_TIME(); j++) {
            if (prob->jobs[j] <= 0) continue;
            int on = -1, count = 0;
            for (int i = 0; i < R; i++)
                if (lp->allowed[i][j]) on = i, count++;
            for (int i = 0; i < R && !improved && !OUT_OF_TIME(); i++) {
                if (lp->allowed[i][j]) continue;
                /* a lone type moves to i; a split one may also use i */
                copy_allowed(trial, lp, R);
                if (count == 1) trial->allowed[on][j] = 0;
                trial->allowed[i][j] = 1;
                r = solve(p, prob, trial);
                a->iterations++;
                if (r != HY_LP_OPTIMAL) continue;
                keep(prob, trial, a, cand);
                if (trial->makespan < prev * (1 - L_TOL)) {
                    prev = trial->makespan;
                    swap_lp(&lp, &trial);
                    improved = 1;
                }
            }
        }
    }
#undef OUT_OF_TIME
    /* lp_polish 3 (the default): every answer of an isolated set, only a
     * cut-short refinement's where rounds follow (see the polish's note) */
    int mode = o->lp_polish == 3 ? (prob->next_round ? 1 : 2) : o->lp_polish;
    if (mode == 2 || (mode == 1 && cut)) {
        polish(prob, a);
        a->iterations++; /* charged as one LP solve, what it costs */
    } else if (o->lp_polish == 3) {
        /* an unpolished answer still drops the batches that buy nothing (a
         * small part of a polish's time, not charged as an iteration) */
        a->makespan = hy_sched_makespan(prob, a);
        prune(prob, a);
    }
    return HY_OK;
}

double hy_sched_lp_call_time(const hy_sched_problem* problem, int iterations) {
    double R = (double)problem->model->resources, T = (double)hy_sched_problem_types(problem);
    return 1e-6 * (0.48 + (0.0246 * R * R + 0.0344 * R * T) * (double)iterations);
}

const hy_sched_policy_class hy_sched_policy_lp = {
    .name = "lp",
    .description = "iterative LP over the expected-time model (Kim et al. 2013)",
    .init = lp_init,
    .deinit = lp_deinit,
    .assign = lp_assign,
    .call_time = hy_sched_lp_call_time,
};
