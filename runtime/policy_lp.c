/* lp: the proximity framework's way of placing work (an expected-time model
 * and a linear program minimising the makespan) applied to partitions, then
 * corrected by affinity stealing.
 *
 * When the partition graph changes, and in the first steps while the model
 * learns, the policy
 *   1. takes each partition's expected time on each PU from the sim's
 *      learned model (hy_rt_sim_expected: setup per task + unit cost per
 *      unit of work, per kind of PU, refitted from measured steps);
 *   2. solves, with GLPK, the LP
 *          minimise L  subject to  Σ_q x_pq = 1            for every partition p
 *                                  Σ_p t(p,q) x_pq <= L    for every PU q
 *                                  x_pq >= 0, x_pq = 0 where p cannot run on q
 *      (x_pq: the share of p's work PU q runs);
 *   3. rounds to whole partitions: a partition the LP gives wholly to one PU
 *      stays there; the split ones go, largest first, to the PU where they
 *      would end soonest; then a local search moves or swaps partitions
 *      off the most loaded PU while that lowers the expected makespan;
 *   4. rearranges each kind's partitions over that kind's PUs with METIS
 *      (fewer shared handles across PUs, so fewer transfers and steals
 *      outside the affinity lists), kept only when its expected makespan is
 *      within METIS_SLACK of the rounded LP's.
 * Otherwise each PU starts from the partitions it ran last step, unless a
 * fresh plan or that plan repaired for this step's costs (the local search
 * of step 3 started from it, moves paying their data's trips) is expected
 * faster, the trips of the partitions it moves counted. A PU then
 * steals within the affinity list, only once every task of its own
 * partitions has started (a PU waiting on another's results is not short
 * of work: stealing then takes the partitions the plan gave to others, who
 * steal back later, larger ones), and only a partition it would finish
 * before its owner would. Without GLPK in the build, step 2
 * is skipped and step 3 places every partition greedily. */
#include "runtime/policy.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<glpk.h>)
#include <glpk.h>
#define HY_HAVE_GLPK 1
#endif
#endif

/* Steps re-planned whatever the graph does, while the model learns. */
#define LEARN_STEPS 3

typedef struct plan {
    int32_t np, nq;
    double* t;     /* t[p * nq + q]: expected time, < 0 where p cannot run on q */
    double* x;     /* LP shares, same layout */
    int32_t* pu;   /* rounded: the PU of each partition */
} plan;

#ifdef HY_HAVE_GLPK
/* The LP of step 2 into pl->x; 0 on success. */
static int solve_lp(plan* pl) {
    int32_t np = pl->np, nq = pl->nq, nvar = 0;
    for (int32_t i = 0; i < np * nq; i++) nvar += pl->t[i] >= 0;
    int* col = malloc((size_t)(np * nq) * sizeof *col);
    /* nonzeros: each x twice (its partition row and its PU row), L once per PU row */
    int nz = 2 * nvar + nq;
    int* ia = malloc((size_t)(nz + 1) * sizeof *ia);
    int* ja = malloc((size_t)(nz + 1) * sizeof *ja);
    double* ar = malloc((size_t)(nz + 1) * sizeof *ar);
    int rc = -1;
    if (!col || !ia || !ja || !ar) goto done;
    /* times in units of the largest, so the LP's data are O(1) */
    double scale = 0;
    for (int32_t i = 0; i < np * nq; i++) scale = fmax(scale, pl->t[i]);
    if (!(scale > 0)) scale = 1;
    glp_prob* lp = glp_create_prob();
    glp_set_obj_dir(lp, GLP_MIN);
    glp_add_rows(lp, np + nq);
    for (int32_t p = 0; p < np; p++) glp_set_row_bnds(lp, p + 1, GLP_FX, 1.0, 1.0);
    for (int32_t q = 0; q < nq; q++) glp_set_row_bnds(lp, np + q + 1, GLP_UP, 0.0, 0.0);
    glp_add_cols(lp, nvar + 1);
    int k = 0, c = 0;
    for (int32_t p = 0; p < np; p++)
        for (int32_t q = 0; q < nq; q++) {
            col[p * nq + q] = 0;
            if (pl->t[p * nq + q] < 0) continue;
            col[p * nq + q] = ++c;
            glp_set_col_bnds(lp, c, GLP_LO, 0.0, 0.0);
            ++k, ia[k] = p + 1, ja[k] = c, ar[k] = 1.0;
            ++k, ia[k] = np + q + 1, ja[k] = c, ar[k] = pl->t[p * nq + q] / scale;
        }
    int Lc = nvar + 1;
    glp_set_col_bnds(lp, Lc, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(lp, Lc, 1.0);
    for (int32_t q = 0; q < nq; q++) ++k, ia[k] = np + q + 1, ja[k] = Lc, ar[k] = -1.0;
    glp_load_matrix(lp, k, ia, ja, ar);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    if (glp_simplex(lp, &parm) == 0 && glp_get_status(lp) == GLP_OPT) {
        for (int32_t i = 0; i < np * nq; i++) pl->x[i] = col[i] ? glp_get_col_prim(lp, col[i]) : 0.0;
        rc = 0;
    }
    glp_delete_prob(lp);
done:
    free(col);
    free(ia);
    free(ja);
    free(ar);
    return rc;
}
#endif

/* Local search on a whole-partition plan: move a partition off the most
 * loaded PU, or swap it with one of another PU's, when that lowers the
 * larger of the two PUs' loads below the maximum; the best such change
 * each round, at most POLISH_ROUNDS rounds. Rounding loses most where a
 * few large partitions were split; this takes much of that back. */
#define POLISH_ROUNDS 64

static void polish(plan* pl, double* load) {
    int32_t np = pl->np, nq = pl->nq;
    for (int round = 0; round < POLISH_ROUNDS; round++) {
        int32_t qa = 0;
        for (int32_t q = 1; q < nq; q++)
            if (load[q] > load[qa]) qa = q;
        double M = load[qa], best = M * (1 - 1e-9);
        int32_t bp = -1, bq = -1, bp2 = -1;
        for (int32_t p = 0; p < np; p++) {
            if (pl->pu[p] != qa) continue;
            double tpa = pl->t[p * nq + qa];
            for (int32_t q = 0; q < nq; q++) {
                double tpq = pl->t[p * nq + q];
                if (q == qa || tpq < 0) continue;
                double m = fmax(load[qa] - tpa, load[q] + tpq);
                if (m < best) best = m, bp = p, bq = q, bp2 = -1;
                for (int32_t p2 = 0; p2 < np; p2++) {
                    if (pl->pu[p2] != q || pl->t[p2 * nq + qa] < 0) continue;
                    m = fmax(load[qa] - tpa + pl->t[p2 * nq + qa], load[q] - pl->t[p2 * nq + q] + tpq);
                    if (m < best) best = m, bp = p, bq = q, bp2 = p2;
                }
            }
        }
        if (bp < 0) return;
        load[qa] -= pl->t[bp * nq + qa];
        load[bq] += pl->t[bp * nq + bq];
        pl->pu[bp] = bq;
        if (bp2 >= 0) {
            load[bq] -= pl->t[bp2 * nq + bq];
            load[qa] += pl->t[bp2 * nq + qa];
            pl->pu[bp2] = qa;
        }
    }
}

/* Step 3: whole partitions from the shares (all split when no LP ran). */
static void round_plan(plan* pl, int have_lp) {
    int32_t np = pl->np, nq = pl->nq;
    double load[HY_RT_MAX_PUS] = {0};
    int32_t* split = malloc((size_t)(np ? np : 1) * sizeof *split);
    double* big = malloc((size_t)(np ? np : 1) * sizeof *big);
    int32_t nsplit = 0;
    for (int32_t p = 0; p < np; p++) {
        pl->pu[p] = -1;
        double least = INFINITY;
        for (int32_t q = 0; q < nq; q++) {
            if (pl->t[p * nq + q] < 0) continue;
            least = fmin(least, pl->t[p * nq + q]);
            if (have_lp && pl->x[p * nq + q] > 1.0 - 1e-6) pl->pu[p] = q;
        }
        if (pl->pu[p] >= 0) {
            load[pl->pu[p]] += pl->t[p * nq + pl->pu[p]];
        } else if (split && big) {
            big[p] = least;
            split[nsplit++] = p;
        }
    }
    /* largest first (insertion sort: split partitions are few after an LP;
     * ties keep index order) */
    for (int32_t i = 1; i < nsplit; i++) {
        int32_t p = split[i], j = i;
        while (j > 0 && big[split[j - 1]] < big[p]) {
            split[j] = split[j - 1];
            j--;
        }
        split[j] = p;
    }
    for (int32_t i = 0; i < nsplit; i++) {
        int32_t p = split[i], best = -1;
        for (int32_t q = 0; q < nq; q++) {
            double t = pl->t[p * nq + q];
            if (t >= 0 && (best < 0 || load[q] + t < load[best] + pl->t[p * nq + best])) best = q;
        }
        pl->pu[p] = best;
        load[best] += pl->t[p * nq + best];
    }
    free(split);
    free(big);
    polish(pl, load);
}

/* Expected makespan of an assignment (pu[p] for every partition): each
 * PU's expected times, plus, for every edge of the partition graph cut by
 * the assignment, the shared bytes' trip between each end's memory and the
 * host (the data goes there and back over the step). */
static double plan_makespan_from(const hy_rt_sim* s, const int32_t* pu, const int32_t* from) {
    double load[HY_RT_MAX_PUS] = {0}, L = 0;
    if (from) hy_rt_sim_move_cost(s, from, pu, load);
    for (int32_t p = 0; p < s->npart; p++) load[pu[p]] += hy_rt_sim_expected(s, pu, p, pu[p]);
    for (int32_t i = 0; i < s->nedges; i++) {
        int32_t qa = pu[s->edges[i].a], qb = pu[s->edges[i].b];
        if (qa == qb) continue;
        int32_t path[HY_RT_MAX_MEMS];
        double ta = 0, tb = 0;
        hy_rt_memnet_path(&s->m.net, HY_RT_HOST, s->m.pu[qa].mem, (size_t)s->edges[i].bytes, path, &ta);
        hy_rt_memnet_path(&s->m.net, HY_RT_HOST, s->m.pu[qb].mem, (size_t)s->edges[i].bytes, path, &tb);
        load[qa] += 2 * ta;
        load[qb] += 2 * tb;
    }
    for (int32_t q = 0; q < s->m.npu; q++) L = fmax(L, load[q]);
    return L;
}

static double plan_makespan(const hy_rt_sim* s, const int32_t* pu) { return plan_makespan_from(s, pu, NULL); }

/* Keep the better of the sim's owners and `pu` (ties: the owners). */
static void keep_better(hy_rt_sim* s, int32_t* best, double* best_L) {
    double L = plan_makespan(s, s->owner);
    if (L < *best_L) {
        *best_L = L;
        memcpy(best, s->owner, (size_t)s->npart * sizeof *best);
    }
}

/* Steps 1-3 into pl->pu: the expected times with each partition's
 * launches as it would share them were the partitions placed as by[] says
 * (hy_rt_sim_expected), the LP, its rounding. */
static void lp_round(const hy_rt_sim* s, plan* pl, const int32_t* by) {
    int32_t np = pl->np, nq = pl->nq;
    for (int32_t p = 0; p < np; p++)
        for (int32_t q = 0; q < nq; q++)
            pl->t[p * nq + q] = (s->eligible[p] & (1u << s->m.pu[q].kind)) ? hy_rt_sim_expected(s, by, p, q) : -1.0;
    int have_lp = 0;
#ifdef HY_HAVE_GLPK
    memset(pl->x, 0, (size_t)(np * nq) * sizeof *pl->x);
    have_lp = solve_lp(pl) == 0;
#endif
    round_plan(pl, have_lp);
}

/* Plan afresh: candidates (the rounded LP; its kinds with METIS within
 * each kind; METIS over every PU), each valued by plan_makespan, the
 * cheapest kept in s->owner. The LP is linear in the placements, but a
 * small free solid's launches on a GPU depend on the others there (a
 * batch's, runtime/sim.h): the first LP takes its times as it would join
 * the batches of the PUs' last step. Where some partitions are batchable,
 * four more rounded LPs are candidates, their times as the batchable
 * partitions would share launches if they were all on the GPUs in turn
 * (the LP has then no reason to leave off the GPUs what is cheap there
 * together), all on the first GPU (a batch of a few: two free blocks pay
 * half each only together), on no GPU (each a launch of its own), and as
 * placed by the best plan so far; plan_makespan values each plan with its
 * own batches. */
static hy_status replan(hy_rt_sim* s) {
    int32_t np = s->npart, nq = s->m.npu;
    plan pl = {np, nq, NULL, NULL, NULL};
    pl.t = malloc((size_t)(np * nq) * sizeof *pl.t);
    pl.x = calloc((size_t)(np * nq), sizeof *pl.x);
    pl.pu = malloc((size_t)np * sizeof *pl.pu);
    int32_t* best = malloc((size_t)np * sizeof *best);
    int32_t* by = malloc((size_t)np * sizeof *by);
    uint8_t* mask = malloc((size_t)np);
    hy_status st = HY_OK;
    if (!pl.t || !pl.x || !pl.pu || !best || !by || !mask) {
        st = hy_fail(HY_ERR_NOMEM, "lp: out of memory for %d partitions", np);
        goto done;
    }
    memcpy(by, s->owner, (size_t)np * sizeof *by);
    lp_round(s, &pl, by);
    memcpy(best, pl.pu, (size_t)np * sizeof *best);
    double best_L = plan_makespan(s, pl.pu);
    /* the LP's kinds, METIS within each */
    memcpy(s->owner, pl.pu, (size_t)np * sizeof *pl.pu);
    for (int k = 0; k < HY_RT_PU_KINDS && !st; k++) {
        int any = 0;
        for (int32_t p = 0; p < np; p++) {
            mask[p] = (uint8_t)(s->m.pu[pl.pu[p]].kind == (hy_rt_pu_kind)k);
            any |= mask[p];
        }
        if (any) st = hy_rt_sim_map_metis(s, mask, 1u << k);
    }
    if (!st) keep_better(s, best, &best_L);
    /* METIS over every PU that can run every partition */
    unsigned kinds = 3u;
    for (int32_t p = 0; p < np; p++) kinds &= s->eligible[p];
    if (!st && kinds) {
        st = hy_rt_sim_map_metis(s, NULL, kinds);
        if (!st) keep_better(s, best, &best_L);
    }
    /* the batches' candidates */
    int32_t gpus[HY_RT_MAX_PUS], ng = 0, nb = 0;
    for (int32_t q = 0; q < nq; q++)
        if (s->m.pu[q].kind == HY_RT_GPU) gpus[ng++] = q;
    for (int32_t p = 0; p < np && ng; p++) nb += hy_rt_sim_batchable(s, p) && (s->eligible[p] & (1u << HY_RT_GPU));
    for (int pass = 0; pass < 4 && nb && !st; pass++) {
        if (pass < 3) { /* the batchable partitions over every GPU, on the first alone, on none */
            int32_t k = pass ? 1 : ng, i = 0;
            for (int32_t p = 0; p < np; p++)
                if (hy_rt_sim_batchable(s, p) && (s->eligible[p] & (1u << HY_RT_GPU)))
                    by[p] = pass < 2 ? gpus[i++ % k] : -1;
        }
        lp_round(s, &pl, pass < 3 ? by : best);
        double L = plan_makespan(s, pl.pu);
        if (L < best_L) {
            best_L = L;
            memcpy(best, pl.pu, (size_t)np * sizeof *best);
        }
    }
    if (!st) memcpy(s->owner, best, (size_t)np * sizeof *best);
done:
    free(pl.t);
    free(pl.x);
    free(pl.pu);
    free(best);
    free(by);
    free(mask);
    return st;
}

/* The kept plan repaired for this step's costs: the rounding's local
 * search (polish) started from what the PUs ran last step, a partition's
 * time on a PU other than its own counting its data's trip there (the
 * rule of hy_rt_sim_move_cost), so only moves that pay for their trips
 * within the step are made. A recorded scene's objects take a different
 * time every step: a plan kept from older costs drifts out of balance,
 * and a fresh plan, made without regard to where partitions are, moves
 * many of them at once; a few moves or swaps off the most loaded PU take
 * most of the drift back. Into out[]; 0 on success. */
static int repair(const hy_rt_sim* s, const int32_t* kept, int32_t* out) {
    int32_t np = s->npart, nq = s->m.npu;
    plan pl = {np, nq, malloc((size_t)(np * nq) * sizeof(double)), NULL, out};
    if (!pl.t) return -1;
    double load[HY_RT_MAX_PUS] = {0};
    for (int32_t p = 0; p < np; p++) {
        for (int32_t q = 0; q < nq; q++) {
            double* t = &pl.t[p * nq + q];
            *t = -1.0;
            if (!(s->eligible[p] & (1u << s->m.pu[q].kind))) continue;
            *t = hy_rt_sim_expected(s, NULL, p, q);
            int32_t path[HY_RT_MAX_MEMS];
            double trip = 0;
            if (q != kept[p] && hy_rt_memnet_path(&s->m.net, s->m.pu[kept[p]].mem, s->m.pu[q].mem,
                                                  (size_t)s->part_bytes[p], path, &trip) > 0)
                *t += trip;
        }
        out[p] = kept[p];
        load[kept[p]] += pl.t[p * nq + kept[p]];
    }
    polish(&pl, load);
    free(pl.t);
    return 0;
}

static hy_status map(hy_rt_sim* s, int changed) {
    if (!s->npart) return HY_OK;
    if (!changed && s->step >= LEARN_STEPS) {
        /* keep what the PUs ran last step unless a fresh plan is expected
         * to be faster, the data of the partitions it moves carried to
         * their new PUs counted (steals have drifted, costs have moved):
         * between PUs of one memory a better plan is free to take, and a
         * move across PCIe must pay for its trip within the step */
        for (int32_t p = 0; p < s->npart; p++)
            if (s->owner[p] < 0 || !(s->eligible[p] & (1u << s->m.pu[s->owner[p]].kind))) changed = 1;
        if (!changed) {
            int32_t* kept = malloc((size_t)s->npart * sizeof *kept);
            if (!kept) return hy_fail(HY_ERR_NOMEM, "lp: out of memory for %d partitions", s->npart);
            memcpy(kept, s->owner, (size_t)s->npart * sizeof *kept);
            double L_kept = plan_makespan(s, kept);
            hy_status st = replan(s);
            /* the METIS calls of a plan not taken still count: they were made */
            double L_fresh = st ? INFINITY : plan_makespan_from(s, s->owner, kept);
            int32_t* fixed = st ? NULL : malloc((size_t)s->npart * sizeof *fixed);
            double L_fixed = fixed && !repair(s, kept, fixed) ? plan_makespan_from(s, fixed, kept) : INFINITY;
            if (!st && L_fixed < L_fresh && L_fixed < L_kept) {
                memcpy(s->owner, fixed, (size_t)s->npart * sizeof *fixed);
                s->stats.remapped = 1;
            } else if (!st && !(L_fresh < L_kept)) {
                memcpy(s->owner, kept, (size_t)s->npart * sizeof *kept);
            } else if (!st) {
                s->stats.remapped = 1;
            }
            free(fixed);
            free(kept);
            return st;
        }
    }
    s->stats.remapped = 1;
    return replan(s);
}

static int may_steal(const hy_rt_sim* s, int32_t thief, int32_t p) { return hy_rt_sim_in_affinity(s, thief, p); }

const hy_rt_policy_class hy_rt_policy_lp = {
    .name = "lp",
    .description = "expected-time model and LP placing partitions (METIS within a kind), affinity stealing",
    .map = map,
    .may_steal = may_steal,
    .steal_only_if_faster = 2,
    .steal_when_dry = 1,
};
