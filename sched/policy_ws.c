/* ws and ws-exp: work stealing, as a static assignment over a job set.
 *
 * A policy call sees a whole job set at once, so stealing is simulated over
 * the expected-time model rather than run: every job starts in the queue of
 * the resource that produced it; a discrete-event loop lets the resource that
 * is free earliest (busy_i, then its simulated clock) take a chunk from its
 * own queue, or, with its queue empty, steal from the resource whose queue
 * holds the most expected work. The jobs each resource ends up running are
 * the assignment; the counts, not the simulated clock, are then judged by
 * the model like every other policy's.
 *
 *  - ws: the thief takes half of the victim's queued jobs, its preferred kind
 *    first (GPUs prefer LEAF jobs, CPUs TRAVERSE jobs: the kinds each runs
 *    best in Kim et al.'s measurements).
 *  - ws-exp: the thief takes the share of the victim's queue that matches its
 *    relative capacity on that queue, cap_thief / (cap_thief + cap_victim)
 *    with cap = jobs per second under the model, and takes first the types on
 *    which it is relatively fastest against the victim.
 *
 * Each chunk pays its setup in the simulation (a real batch launch does),
 * but for the first chunk of a type that joins a batch already waiting on
 * the resource (hy_sched_problem.open), and the answer says so
 * (hy_sched_assignment.launch = the chunk size): stealing decides as it
 * goes, so the chunks a resource ends up with are separate launches, not
 * one batch merged after the fact;
 * the chunk size is options.ws_grain, or from the model the smallest batch
 * whose setup is at most a twelfth of its time (the best for ws and ws-exp
 * of the ratios tried on the throughput bench's streams, 1/2 to 1/1000:
 * finer chunks pay more setups, coarser ones leave less to steal; see
 * docs/PERFORMANCE.md). Ties go to the lower resource
 * index, so the result is a pure function of the problem. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "sched/policy.h"

typedef struct sim {
    const hy_sched_problem* p;
    int R, J;
    int exp; /* ws-exp */
    int grain_opt;
    int64_t queue[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES];
    int64_t queued[HY_SCHED_MAX_RESOURCES];
    double clock[HY_SCHED_MAX_RESOURCES];
    int done[HY_SCHED_MAX_RESOURCES];
    uint8_t joined[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES]; /* first chunk joined an open batch */
} sim;

/* Preferred kind of resource i: LEAF on GPUs, TRAVERSE on CPUs. */
static hy_job_kind preferred(const sim* s, int i) {
    return s->p->model->device[i].kind == HY_DEVICE_GPU ? HY_JOB_LEAF : HY_JOB_TRAVERSE;
}

static int64_t grain(const sim* s, int i, int j) {
    if (s->grain_opt > 0) return s->grain_opt;
    const hy_sched_model* M = s->p->model;
    double c = M->cost[i][j], su = M->setup[i][j];
    if (!(c > 0)) return INT64_MAX;
    double g = ceil(11.0 * su / c); /* setup <= (setup + c·g) / 12 */
    if (g < 1) g = 1;
    return g > 1e15 ? (int64_t)1e15 : (int64_t)g;
}

/* Run one chunk from i's own queue: the preferred kind first, then the
 * other, types in index order within a kind. */
static void run_chunk(sim* s, int i, hy_sched_assignment* a) {
    const hy_sched_model* M = s->p->model;
    hy_job_kind pref = preferred(s, i);
    for (int pass = 0; pass < 2; pass++) {
        hy_job_kind kind = pass == 0 ? pref : (hy_job_kind)(1 - (int)pref);
        for (int j = (int)kind; j < s->J; j += 2) {
            int64_t q = s->queue[i][j];
            if (q <= 0) continue;
            int64_t g = grain(s, i, j), take = q < g ? q : g;
            s->queue[i][j] -= take;
            s->queued[i] -= take;
            a->count[i][j] += take;
            /* the first chunk of a type with an open batch on i joins it */
            double su = s->p->open[i][j] && !s->joined[i][j] ? 0.0 : M->setup[i][j];
            s->joined[i][j] = 1;
            s->clock[i] += su + M->cost[i][j] * (double)take;
            return;
        }
    }
}

/* Expected time of the jobs queued on v, run on resource x. */
static double queue_time(const sim* s, int v, int x) {
    const hy_sched_model* M = s->p->model;
    double t = 0;
    for (int j = 0; j < s->J; j++) t += M->cost[x][j] * (double)s->queue[v][j];
    return t;
}

/* Thief i steals from the fullest queue; 0 when there is nothing to steal. */
static int steal(sim* s, int i) {
    const hy_sched_model* M = s->p->model;
    int v = -1;
    double most = 0;
    for (int k = 0; k < s->R; k++) {
        if (k == i || s->queued[k] <= 0) continue;
        double w = queue_time(s, k, k);
        if (v < 0 || w > most) {
            v = k;
            most = w;
        }
    }
    if (v < 0) return 0;

    /* how many jobs, and in which order of types */
    int order[HY_SCHED_MAX_TYPES], n = 0;
    int64_t want;
    if (!s->exp) {
        want = (s->queued[v] + 1) / 2;
        hy_job_kind pref = preferred(s, i);
        for (int pass = 0; pass < 2; pass++) {
            hy_job_kind kind = pass == 0 ? pref : (hy_job_kind)(1 - (int)pref);
            for (int j = (int)kind; j < s->J; j += 2)
                if (s->queue[v][j] > 0) order[n++] = j;
        }
    } else {
        /* capacities in jobs per second over the victim's queued mix */
        double ti = queue_time(s, v, i), tv = queue_time(s, v, v);
        double q = (double)s->queued[v];
        double ci = ti > 0 ? q / ti : INFINITY, cv = tv > 0 ? q / tv : INFINITY;
        double share = isinf(ci) ? (isinf(cv) ? 0.5 : 1.0) : isinf(cv) ? 0.0 : ci / (ci + cv);
        want = (int64_t)ceil(share * q);
        if (want < 1) want = 1;
        if (want > s->queued[v]) want = s->queued[v];
        /* types where the thief is relatively fastest first (insertion sort,
         * stable: ties keep index order) */
        double rel[HY_SCHED_MAX_TYPES];
        for (int j = 0; j < s->J; j++) {
            if (s->queue[v][j] <= 0) continue;
            double cvj = M->cost[v][j];
            rel[j] = cvj > 0 ? M->cost[i][j] / cvj : (M->cost[i][j] > 0 ? INFINITY : 1.0);
            int b = n++;
            while (b > 0 && rel[order[b - 1]] > rel[j]) {
                order[b] = order[b - 1];
                b--;
            }
            order[b] = j;
        }
    }
    for (int k = 0; k < n && want > 0; k++) {
        int j = order[k];
        int64_t take = s->queue[v][j] < want ? s->queue[v][j] : want;
        s->queue[v][j] -= take;
        s->queued[v] -= take;
        s->queue[i][j] += take;
        s->queued[i] += take;
        want -= take;
    }
    return 1;
}

static hy_status ws_run(hy_sched_policy* pol, const hy_sched_problem* p, hy_sched_assignment* a, int exp) {
    sim st;
    sim* s = &st;
    memset(s, 0, sizeof *s);
    s->p = p;
    s->R = p->model->resources;
    s->J = 2 * s->R;
    s->exp = exp;
    s->grain_opt = pol->options.ws_grain;
    int64_t left = 0;
    for (int j = 0; j < s->J; j++) {
        int k = hy_job_type_producer(j);
        s->queue[k][j] = p->jobs[j];
        s->queued[k] += p->jobs[j];
        left += p->jobs[j];
    }
    for (int i = 0; i < s->R; i++) s->clock[i] = p->busy[i];
    int steals = 0;
    while (left > 0) {
        int i = -1;
        for (int k = 0; k < s->R; k++)
            if (!s->done[k] && (i < 0 || s->clock[k] < s->clock[i])) i = k;
        if (i < 0) return hy_fail(HY_ERR_INTERNAL, "policy %s: jobs left with no resource", pol->cls->name);
        if (s->queued[i] > 0) {
            int64_t before = s->queued[i];
            run_chunk(s, i, a);
            left -= before - s->queued[i];
        } else if (steal(s, i)) {
            steals++;
        } else {
            /* queues only shrink in a fixed job set: nothing to steal now
             * means nothing ever */
            s->done[i] = 1;
        }
    }
    /* what was planned a chunk at a time runs that way */
    for (int i = 0; i < s->R; i++)
        for (int j = 0; j < s->J; j++) {
            int64_t g = grain(s, i, j);
            if (a->count[i][j] > 0 && g < INT64_MAX) a->launch[i][j] = g;
        }
    a->iterations = steals;
    return HY_OK;
}

static hy_status ws_assign(hy_sched_policy* p, const hy_sched_problem* prob, hy_sched_assignment* a) {
    return ws_run(p, prob, a, 0);
}

static hy_status ws_exp_assign(hy_sched_policy* p, const hy_sched_problem* prob, hy_sched_assignment* a) {
    return ws_run(p, prob, a, 1);
}

/* Modeled call time (sched/policy.h), ws and ws-exp alike, whatever the
 * steals: 0.67 + 0.0048·R² + 0.025·R·T µs. */
static double ws_call_time(const hy_sched_problem* problem, int iterations) {
    (void)iterations;
    double R = (double)problem->model->resources, T = (double)hy_sched_problem_types(problem);
    return 1e-6 * (0.67 + 0.0048 * R * R + 0.025 * R * T);
}

const hy_sched_policy_class hy_sched_policy_ws = {
    .name = "ws",
    .description = "work stealing: an idle resource steals half; GPUs prefer leaf jobs, CPUs traversal",
    .assign = ws_assign,
    .call_time = ws_call_time,
};

const hy_sched_policy_class hy_sched_policy_ws_exp = {
    .name = "ws-exp",
    .description = "work stealing with the stolen share scaled by relative capacity from the model",
    .assign = ws_exp_assign,
    .call_time = ws_call_time,
};
