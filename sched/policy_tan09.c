/* tan09: block round robin (the baseline of Kim et al. 2013 after Tang et
 * al. 2009): jobs are dealt out in blocks of options.block to the resources
 * in turn, ignoring the cost model. The turn carries over from one job type
 * to the next, so many small types do not all land on resource 0. */
#include "core/error.h"
#include "sched/policy.h"

static hy_status tan09_assign(hy_sched_policy* p, const hy_sched_problem* prob, hy_sched_assignment* a) {
    int R = prob->model->resources;
    int64_t block = p->options.block > 0 ? p->options.block : 1;
    int turn = 0;
    for (int j = 0; j < 2 * R; j++) {
        int64_t left = prob->jobs[j];
        /* whole rounds at once: with R resources each round hands R blocks */
        int64_t rounds = left / (block * R);
        if (rounds > 0) {
            for (int i = 0; i < R; i++) a->count[i][j] += rounds * block;
            left -= rounds * block * R;
        }
        while (left > 0) {
            int64_t take = left < block ? left : block;
            a->count[turn][j] += take;
            left -= take;
            turn = (turn + 1) % R;
        }
    }
    return HY_OK;
}

/* Modeled call time (sched/policy.h): 0.334 + 0.0037·R² + 0.0045·R·T µs. */
static double tan09_call_time(const hy_sched_problem* problem, int iterations) {
    (void)iterations;
    double R = (double)problem->model->resources, T = (double)hy_sched_problem_types(problem);
    return 1e-6 * (0.334 + 0.0037 * R * R + 0.0045 * R * T);
}

const hy_sched_policy_class hy_sched_policy_tan09 = {
    .name = "tan09",
    .description = "block round robin, --block N jobs per block (after Tang et al. 2009)",
    .assign = tan09_assign,
    .call_time = tan09_call_time,
};
