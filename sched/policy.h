/* Scheduling policies: plug-ins that split waiting jobs over resources.
 *
 * A policy is a const hy_sched_policy_class (name, description, function
 * pointers) listed in one NULL-ended registry (sched/policy.c) and picked by
 * name; nothing else special-cases a policy. An instance (hy_sched_policy)
 * holds the class, its options and private state.
 *
 * Registered: lp (iterative LP, Kim et al. 2013), lau10 (even split when the
 * imbalance is high), tan09 (block round robin, --block N), ws (work
 * stealing, steal half), ws-exp (work stealing with model-derived
 * granularity), exhaustive (every setup pattern as an LP; evaluation only).
 *
 * Threads: one assign at a time per instance; instances are independent. */
#ifndef HY_SCHED_POLICY_H
#define HY_SCHED_POLICY_H

#include "sched/lp.h"
#include "sched/model.h"

typedef struct hy_sched_options {
    int block;              /* tan09: jobs per round-robin block, >= 1 (default 256) */
    double lau10_threshold; /* lau10: split evenly when (max - min) / max finishing time exceeds this (default 0.5) */
    int lp_timeout;         /* lp: stop refining once solving took longer than the smallest positive remaining
                               busy time of any resource: 0 never, 1 solving time read from the wall clock
                               (default), 2 solving time as modeled by hy_sched_call_time (deterministic:
                               lp stays a pure function of its input) */
    int lp_max_iterations;  /* lp: LP solves per call, >= 1 (default 64) */
    int lp_exchange;        /* lp: after the paper's refinement, move single-resource types to other
                               resources, one LP solve a try, while that lowers the makespan (default 0:
                               the solves hold up the scheduler, see policy_lp.c) */
    int lp_polish;          /* lp: finish with an integer local search (per type: re-spread its jobs over its
                               resources, one fewer, one more, or one other): 0 never, 1 when the refinement
                               was cut short by the time-out or the iteration cap, 2 always, 3 always for an
                               isolated set and as 1 where rounds follow (next_round) (default) */
    hy_lp_solver solver;    /* lp, exhaustive: HY_LP_SIMPLEX (default) or HY_LP_GLPK */
    int ws_grain;           /* ws, ws-exp: most jobs a resource takes from its queue at once; 0 = from the model
                               (setup at most a twelfth of a chunk's time) (default 0) */
    int gpu_guard;          /* every policy: 1 (default) passes the answer through hy_sched_guard_gpus
                               (sched/model.h), so no GPU keeps work a CPU would finish sooner; 0 leaves
                               the policy's answer as it is (the published baselines, as their papers ran
                               them) */
} hy_sched_options;

typedef struct hy_sched_policy hy_sched_policy;

typedef struct hy_sched_policy_class {
    const char* name;
    const char* description;
    /* Optional. Runs once in hy_sched_policy_create; may set p->ctx. */
    hy_status (*init)(hy_sched_policy* p);
    /* Optional. Runs once in hy_sched_policy_destroy; frees p->ctx. */
    void (*deinit)(hy_sched_policy* p);
    /* Required. Fill a->count (every job exactly once); may set
     * a->iterations and a->lp_initial. Called with a cleared assignment and
     * a checked problem; the caller computes a->makespan afterwards. */
    hy_status (*assign)(hy_sched_policy* p, const hy_sched_problem* problem, hy_sched_assignment* a);
    /* Required. The modeled time of the policy's own part of one call, in
     * seconds, for virtual clocks (hy_sched_call_time adds the gather): a
     * function of R = |R|, T = the types of `problem` with jobs, and the
     * `iterations` its answer reported. Fitted to what the policy measures
     * on the throughput bench's recorded streams (`hyphys bench sched --part
     * throughput --call-cost`; the fit: docs/PERFORMANCE.md). Any thread;
     * pure. */
    double (*call_time)(const hy_sched_problem* problem, int iterations);
    /* 1: a yardstick for the other policies' answers, too slow past a few
     * resources to run frames (exhaustive); runs that schedule frame after
     * frame (the throughput bench) leave it out. 0 otherwise. */
    int evaluation_only;
} hy_sched_policy_class;

struct hy_sched_policy {
    const hy_sched_policy_class* cls;
    hy_sched_options options;
    void* ctx;
};

void hy_sched_options_default(hy_sched_options* o);
/* Set one option by name ("block", "gpu-guard", "lau10-threshold", "lp-exchange", "lp-polish",
 * "lp-timeout", "lp-max-iterations", "solver" = simplex|glpk, "ws-grain") from text;
 * HY_ERR_INVALID_ARG naming the option and the value otherwise. */
hy_status hy_sched_options_set(hy_sched_options* o, const char* key, const char* value);

/* NULL-ended list of every policy class. */
const hy_sched_policy_class* const* hy_sched_policy_list(void);
/* NULL for an unknown name. */
const hy_sched_policy_class* hy_sched_policy_find(const char* name);

/* Create an instance by name (options NULL = defaults). An unknown name
 * gives HY_ERR_INVALID_ARG with the list of known names. */
hy_status hy_sched_policy_create(const char* name, const hy_sched_options* options, hy_sched_policy** out);
void hy_sched_policy_destroy(hy_sched_policy* p);
/* Check the problem, clear *a, run the policy, pass its answer through the
 * GPU guard (option gpu-guard), compute a->makespan and verify that every
 * job is assigned exactly once (HY_ERR_INTERNAL if not). */
hy_status hy_sched_policy_assign(hy_sched_policy* p, const hy_sched_problem* problem, hy_sched_assignment* a);

/* The classes (for tests that want one directly). */
extern const hy_sched_policy_class hy_sched_policy_lp;
extern const hy_sched_policy_class hy_sched_policy_lau10;
extern const hy_sched_policy_class hy_sched_policy_tan09;
extern const hy_sched_policy_class hy_sched_policy_ws;
extern const hy_sched_policy_class hy_sched_policy_ws_exp;
extern const hy_sched_policy_class hy_sched_policy_exhaustive;

/* exhaustive with a choice: prune = 1 is the policy (branch and bound over
 * the patterns, same optimum), prune = 0 solves all 2^(R·T) patterns. On
 * return a->lp_initial is L*, the best LP objective over all patterns (a
 * lower bound on any assignment's makespan), a->iterations the LPs solved,
 * a->makespan the best integer makespan found (never above lp's).
 * HY_ERR_UNSUPPORTED past 2^24 patterns. */
hy_status hy_sched_exhaustive_run(const hy_sched_problem* problem, hy_lp_solver solver, int prune,
                                  hy_sched_assignment* a);

/* Modeled time of one scheduler call, for virtual clocks: 2 µs to gather the
 * queues and hand the jobs out, plus the policy's own time (its class's
 * call_time). */
#define HY_SCHED_GATHER_TIME 2e-6
double hy_sched_call_time(const hy_sched_policy_class* cls, const hy_sched_problem* problem, int iterations);

/* lp's call time (sched/policy_lp.c), which exhaustive shares: 0.48 µs plus
 * (0.0246·R² + 0.0344·R·T) µs per LP solve (`iterations`; lp's polish
 * counts as one; O(R·2R) bookkeeping and an LP of R·T columns). At |R| = 6
 * an lp solve comes to 1.1 µs with one type and 3.4 µs with all twelve. T
 * counts only the types with jobs: the streams' many one- and two-type
 * calls take about half of what a charge for all 2R types would say. */
double hy_sched_lp_call_time(const hy_sched_problem* problem, int iterations);

/* Monotonic wall clock in seconds (lp's time-out, benches). */
double hy_sched_now(void);

#endif
