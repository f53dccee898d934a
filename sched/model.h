/* The expected-time model of the hybrid proximity framework (Kim et al.
 * 2013): resources, job types, per-(resource, job type) cost constants, the
 * scheduling problem handed to a policy and the assignment it returns.
 *
 * Job types. A job is TRAVERSE (a BVH node pair) or LEAF (a primitive pair).
 * As in Kim et al., a type is also keyed by the resource k that produced the
 * job, because where its data lives decides the transfer cost: type
 * j = 2·k + kind, so a model of R resources has J = 2R types.
 *
 * Expected running time of n jobs of type j (producer k, kind c) on
 * resource i:
 *     T(i, j, n) = setup(i, c) + (proc(i, c)·u(c) + trans(k→i, c))·n   for n > 0
 *     T(i, j, 0) = 0
 *     trans(k→i, c) = 0 when k == i (unless i is staged, see
 *                     hy_device_profile), else download(k, c) + upload(i, c)
 * (a GPU-to-GPU move goes through host memory; a CPU's upload/download are 0,
 * so moving between CPU resources sharing host memory is free).
 * proc is per unit of work: a node pair tested for TRAVERSE (the unit of
 * Kim et al.'s Table 1 constants and of `hyphys calibrate`), an elementary
 * test for LEAF; u(c) is the mean number of units in a job of kind c, 1
 * where a job is one node pair (the throughput bench's streams), the mean
 * node pairs under a front pair in the step's framework (which learns it
 * from the runs before; sched/proximity.c). A job's data moves once, so
 * trans stays per job.
 * A resource may also have a fixed cost per run, engage(i): what the first
 * batch a run gives it costs whatever its jobs (a GPU's synchronisation
 * and the upload of the trees its jobs read), charged once in a run to a
 * resource that gets any job and has not paid it yet
 * (hy_sched_problem.engaged).
 * The makespan of an assignment is
 *     max_i (busy_i + [i gets jobs, not engaged]·engage(i) + Σ_j T(i, j, n_ij)).
 *
 * Units: seconds in memory, microseconds in profile JSON files.
 * Threads: everything here is plain data; no function keeps state. */
#ifndef HY_SCHED_MODEL_H
#define HY_SCHED_MODEL_H

#include <stdint.h>

#include "hyphys/hyphys.h"

#define HY_SCHED_MAX_RESOURCES 32
#define HY_SCHED_MAX_TYPES (2 * HY_SCHED_MAX_RESOURCES)

typedef enum hy_job_kind { HY_JOB_TRAVERSE = 0, HY_JOB_LEAF = 1 } hy_job_kind;
#define HY_JOB_KINDS 2

typedef enum hy_device_kind { HY_DEVICE_CPU = 0, HY_DEVICE_GPU = 1 } hy_device_kind;

static inline int hy_job_type(int producer, hy_job_kind kind) { return 2 * producer + (int)kind; }
static inline int hy_job_type_producer(int type) { return type / 2; }
static inline hy_job_kind hy_job_type_kind(int type) { return (hy_job_kind)(type % 2); }

/* Costs of one job kind on one device, seconds. */
typedef struct hy_device_costs {
    double setup;    /* per batch (kernel launch, queue hand-off), counted once per (resource, type) used */
    double proc;     /* per job */
    double upload;   /* per job: bring a job's data produced elsewhere into this device's memory */
    double download; /* per job: send a job produced here to host memory for another resource */
} hy_device_costs;

/* One device (or one modeled device). */
typedef struct hy_device_profile {
    char name[48];
    hy_device_kind kind;
    int cores; /* CPU: cores this resource stands for (hierarchical: all); GPU: CUDA cores, informative */
    /* 1: the device keeps no job data between batches (a real GPU of this
     * build: every batch uploads its jobs from host memory and leaves its
     * outputs there; it keeps only the trees, sent when they change, whose
     * copies the fitted upload spreads over the jobs), so a job pays upload
     * on it even when it made the job itself; its download is then part of
     * its batches' measured time. 0
     * (Kim et al.'s model, the built-in profiles): a job made on a device
     * stays there, free to run on it. JSON "staged": true|false, default
     * false. */
    int staged;
    /* Per run, seconds: the fixed cost of being given any job in a run
     * (sched/model.h, engage(i)); under the real clock a GPU's is learned
     * from its runs' first batches (sched/prox_learn.c). JSON "engage_us",
     * default 0 (the built-in profiles: Kim et al.'s model has none). */
    double engage;
    hy_device_costs cost[HY_JOB_KINDS];
} hy_device_profile;

/* R resources and the derived per-(resource, type) constants. Fill with
 * hy_sched_model_init + hy_sched_model_add, or hy_sched_model_load. */
typedef struct hy_sched_model {
    int resources;
    hy_device_profile device[HY_SCHED_MAX_RESOURCES];
    /* mean units of work per job of each kind (u(c) above); <= 0 reads as 1 */
    double units[HY_JOB_KINDS];
    /* derived by hy_sched_model_update: setup(i, j), trans(k→i, j) and proc(i, j)·u + trans(k→i, j) */
    double setup[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES];
    double trans[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES];
    double cost[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES];
} hy_sched_model;

/* What a policy is asked: n_j waiting jobs per type, how long each
 * resource stays busy with work it already has, and which of those
 * resources hold a batch that has not started yet.
 *
 * open[i][j] = 1 says: jobs of type j already wait in i's incoming queue
 * and will still be waiting when this call's answer arrives, so jobs of j
 * given to i now join that batch (a resource runs all its waiting jobs of a
 * type as one batch) and pay no setup of their own; busy[i] already counts
 * the batch's setup. Every model-driven cost below (hy_sched_setup,
 * hy_sched_finish, the LP) reads it. 0 everywhere after
 * hy_sched_problem_init, which is the model's plain T(i, j, n). */
typedef struct hy_sched_problem {
    const hy_sched_model* model;
    int64_t jobs[HY_SCHED_MAX_TYPES]; /* >= 0, J = 2·model->resources entries used */
    double busy[HY_SCHED_MAX_RESOURCES]; /* >= 0, seconds */
    uint8_t open[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES]; /* 0 or 1 */
    /* 1: resource i has paid its engage cost in this run already (it ran a
     * batch, or holds jobs), so jobs given to it now do not pay it again; 0
     * (hy_sched_problem_init): the first job given to it pays it. */
    uint8_t engaged[HY_SCHED_MAX_RESOURCES];
    /* 1: TRAVERSE jobs run now make TRAVERSE jobs for a later call (a
     * traversal run in rounds, each round's node pairs making the next
     * round's: the throughput bench's streams). Those are typed by the
     * resource that ran their parents, so a resource that takes up
     * TRAVERSE jobs adds a batch, with its setup, to every round after.
     * 0 (hy_sched_problem_init): nothing follows (an isolated job set) or
     * only LEAF jobs do (the step's framework, whose TRAVERSE job is a
     * whole subtree). lp's polish reads it; the makespan does not. */
    uint8_t next_round;
} hy_sched_problem;

/* What a policy answers: count[i][j] jobs of type j run on resource i, each
 * job exactly once (Σ_i count[i][j] == jobs[j]).
 *
 * launch[i][j] > 0 says resource i runs its jobs of type j in launches of at
 * most that many, each paying its own setup: work stealing runs what it
 * holds a chunk at a time so that idle resources can take the rest, and
 * cannot know in advance what it will steal (ws and ws-exp set it to their
 * chunk size). 0, the default: all waiting jobs of a type in one launch. The
 * executors (the framework, the throughput bench) and hy_sched_finish
 * honour it. */
typedef struct hy_sched_assignment {
    int64_t count[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES];
    int64_t launch[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES];
    double makespan;   /* expected makespan of `count` under the model (hy_sched_makespan) */
    double lp_initial; /* lp: objective of the first LP (every setup counted), or the makespan where the
                          set fit without an LP (iterations 0); exhaustive: the best LP objective over all
                          setup patterns; else 0 */
    int iterations;    /* LP solves (lp, exhaustive), steals (ws, ws-exp), 0 otherwise */
} hy_sched_assignment;

/* ---- profiles */

/* Built-in profiles of the devices of Kim et al. Tables 1 and 3 (constants
 * in sched/model.c):
 * "gtx285", "gtx480", "gtx580", "c2075", "cpu-m1" (quad-core, Machine 1),
 * "cpu-m2" (two hexa-core CPUs, Machine 2). NULL-terminated name list. */
const char* const* hy_device_profile_builtin_names(void);
/* HY_ERR_INVALID_ARG (listing the names) for an unknown name. */
hy_status hy_device_profile_builtin(const char* name, hy_device_profile* out);
/* A CPU profile of `cores` cores split into one single-core resource (flat
 * scheduling: each core a resource). */
hy_status hy_device_profile_core(const hy_device_profile* cpu, hy_device_profile* out);

/* JSON: {"name": "...", "kind": "cpu"|"gpu", "cores": N,
 *        "traverse": {"setup_us":..,"proc_us":..,"upload_us":..,"download_us":..},
 *        "leaf": {...}, "source": "free text (ignored)"}.
 * Errors name `where` (a file name) and the field. */
struct cJSON;
hy_status hy_device_profile_from_json(const struct cJSON* json, const char* where, hy_device_profile* out);
struct cJSON* hy_device_profile_to_json(const hy_device_profile* profile);
/* A file holds one device object or {"devices": [device, ...]}. */
hy_status hy_device_profile_load(const char* path, hy_device_profile* out);

/* ---- model */

void hy_sched_model_init(hy_sched_model* model);
/* Append a resource; HY_ERR_INVALID_ARG past HY_SCHED_MAX_RESOURCES or for
 * negative / non-finite costs. Recomputes the derived tables. */
hy_status hy_sched_model_add(hy_sched_model* model, const hy_device_profile* device);
/* Recompute setup/cost tables after editing model->device directly. */
void hy_sched_model_update(hy_sched_model* model);
/* Load a model from a file of {"devices": [...]} (or a single device);
 * leaves *model untouched on failure. */
hy_status hy_sched_model_load(const char* path, hy_sched_model* model);
hy_status hy_sched_model_save(const hy_sched_model* model, const char* path);
static inline int hy_sched_model_types(const hy_sched_model* model) { return 2 * model->resources; }

/* T(i, j, n) run in launches of at most g jobs (g <= 0: one launch), a
 * setup each; 0 for n == 0. */
static inline double hy_sched_time_launched(const hy_sched_model* m, int i, int j, int64_t n, int64_t g) {
    if (n <= 0) return 0.0;
    int64_t launches = g > 0 ? (n - 1) / g + 1 : 1;
    return m->setup[i][j] * (double)launches + m->cost[i][j] * (double)n;
}

/* The time n jobs of type j doing `work` units in all take on i in one
 * launch, as a modeled resource is charged once they ran: setup + trans·n
 * + proc·work; 0 for n == 0. */
double hy_sched_time_work(const hy_sched_model* m, int i, int j, int64_t n, double work);

/* T(i, j, n) in one launch: 0 for n == 0. */
static inline double hy_sched_time(const hy_sched_model* m, int i, int j, int64_t n) {
    return hy_sched_time_launched(m, i, j, n, 0);
}

/* ---- problems and assignments */

/* The setup that giving jobs of type j to resource i costs in this problem:
 * 0 where a batch of j is open on i (see hy_sched_problem.open). */
static inline double hy_sched_setup(const hy_sched_problem* p, int i, int j) {
    return p->open[i][j] ? 0.0 : p->model->setup[i][j];
}
/* The fixed cost resource i pays in this problem when it is given any job:
 * its engage cost unless it is engaged already. */
static inline double hy_sched_engage(const hy_sched_problem* p, int i) {
    return p->engaged[i] ? 0.0 : p->model->device[i].engage;
}
/* T(i, j, n) in this problem: hy_sched_setup + cost·n, 0 for n == 0. */
static inline double hy_sched_problem_time(const hy_sched_problem* p, int i, int j, int64_t n) {
    return n > 0 ? hy_sched_setup(p, i, j) + p->model->cost[i][j] * (double)n : 0.0;
}

/* The types with waiting jobs in this problem (T in hy_sched_call_time). */
static inline int hy_sched_problem_types(const hy_sched_problem* p) {
    int T = 0;
    for (int j = 0; j < 2 * p->model->resources; j++) T += p->jobs[j] > 0;
    return T;
}

/* Whether a resource's waiting batches are open to a call's jobs: it is
 * running a batch with `left` seconds to go, which should outlast the call,
 * judged by the last call's length (the waiting batches cannot start before
 * the answer arrives). The framework and the throughput bench both use it. */
static inline int hy_sched_batches_stay_open(int running, double left, double last_call) {
    return running && left > last_call;
}

void hy_sched_problem_init(hy_sched_problem* problem, const hy_sched_model* model);
/* Range checks: jobs >= 0, busy finite and >= 0, open 0 or 1. */
hy_status hy_sched_problem_check(const hy_sched_problem* problem);
void hy_sched_assignment_clear(hy_sched_assignment* a);
/* Copy src's counts of resources i < R and types j < 2R into dst (the part
 * a problem of R resources uses; a whole copy moves 16 KB). */
void hy_sched_counts_copy(hy_sched_assignment* dst, const hy_sched_assignment* src, int R);
/* Expected time of a's count[i][j] jobs on i: hy_sched_problem_time, plus a
 * setup for every launch past the first where launch[i][j] limits them. */
double hy_sched_assigned_time(const hy_sched_problem* problem, const hy_sched_assignment* a, int i, int j);
/* Expected makespan max_i (busy_i + hy_sched_engage(i) where i gets jobs +
 * Σ_j hy_sched_assigned_time(i, j)). */
double hy_sched_makespan(const hy_sched_problem* problem, const hy_sched_assignment* a);
/* Expected finishing time of resource i under `a`. */
double hy_sched_finish(const hy_sched_problem* problem, const hy_sched_assignment* a, int i);
/* The GPU guard every policy's answer goes through (hy_sched_policy_assign,
 * option gpu-guard): no GPU keeps work that a CPU resource would finish
 * sooner than the GPU does. For each GPU resource in index order, all its
 * jobs, then each of its types in turn, move to the CPU resource that
 * would finish them soonest when that CPU would finish before the GPU
 * finishes as assigned (fixed costs included: engage, setups). A move
 * never raises the makespan (the CPU ends before the GPU did, the GPU
 * ends sooner) and only adds work to CPUs, so one pass leaves no GPU
 * with such work. Returns the jobs moved. */
int64_t hy_sched_guard_gpus(const hy_sched_problem* problem, hy_sched_assignment* a);
/* HY_ERR_INTERNAL naming the type unless every job is assigned exactly once
 * and no count is negative. */
hy_status hy_sched_assignment_check(const hy_sched_problem* problem, const hy_sched_assignment* a);

/* A random job set for evaluation (tests, `hyphys bench sched`): each type
 * holds 0 jobs with probability 1/8, else a log-uniform count in
 * [min_jobs, max_jobs]; busy times are uniform in [0, T0) with T0 the ideal
 * parallel time of the jobs (setup ignored), one random resource idle (the one
 * whose queue ran dry and called the scheduler). Deterministic in `seed`. */
void hy_sched_problem_random(hy_sched_problem* problem, const hy_sched_model* model, uint64_t seed,
                             int64_t min_jobs, int64_t max_jobs);

/* The evaluation machines: `resources` resources built from the Table 1/3
 * profiles. hierarchical != 0: one CPU resource ("cpu-m2", 12 cores) plus
 * resources-1 GPUs in the order gtx580, c2075, gtx480, gtx285, gtx580, ...;
 * hierarchical == 0: 12 single-core resources plus resources-12 GPUs (so
 * resources must be 13..16 + ...). HY_ERR_INVALID_ARG when out of range. */
hy_status hy_sched_model_machine(hy_sched_model* model, int resources, int hierarchical);

#endif
