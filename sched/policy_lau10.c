/* lau10: keep jobs where they were produced unless the load is badly
 * unbalanced, then split every type evenly (the baseline of Kim et al. 2013
 * after Lauterbach et al. 2010, who rebalance GPU work queues evenly when
 * their imbalance passes a threshold). It looks at the model only to measure
 * the imbalance, never to weigh resources against each other. */
#include "core/error.h"
#include "sched/policy.h"

static hy_status lau10_assign(hy_sched_policy* p, const hy_sched_problem* prob, hy_sched_assignment* a) {
    int R = prob->model->resources;
    /* jobs stay on their producer */
    for (int j = 0; j < 2 * R; j++) a->count[hy_job_type_producer(j)][j] = prob->jobs[j];
    double lo = 0, hi = 0;
    for (int i = 0; i < R; i++) {
        double t = hy_sched_finish(prob, a, i);
        if (i == 0 || t < lo) lo = t;
        if (i == 0 || t > hi) hi = t;
    }
    if (!(hi > 0) || (hi - lo) / hi <= p->options.lau10_threshold) return HY_OK;
    /* high imbalance: even split; the remainder of each type starts where the
     * previous type's stopped, so it does not pile up on resource 0 */
    int turn = 0;
    for (int j = 0; j < 2 * R; j++) {
        int64_t n = prob->jobs[j], share = n / R, rest = n % R;
        for (int i = 0; i < R; i++) a->count[i][j] = share;
        for (int64_t r = 0; r < rest; r++) {
            a->count[turn][j]++;
            turn = (turn + 1) % R;
        }
    }
    return HY_OK;
}

/* Modeled call time (sched/policy.h): 0.34 + 0.0081·R² + 0.0035·R·T µs. */
static double lau10_call_time(const hy_sched_problem* problem, int iterations) {
    (void)iterations;
    double R = (double)problem->model->resources, T = (double)hy_sched_problem_types(problem);
    return 1e-6 * (0.34 + 0.0081 * R * R + 0.0035 * R * T);
}

const hy_sched_policy_class hy_sched_policy_lau10 = {
    .name = "lau10",
    .description = "jobs stay on their producer; even split over all resources when the imbalance is high",
    .assign = lau10_assign,
    .call_time = lau10_call_time,
};
