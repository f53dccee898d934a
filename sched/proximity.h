/* The hybrid proximity framework (Kim et al. 2013) at run time: the
 * collision jobs of a step handed out to resources by the active policy.
 *
 * Jobs. TRAVERSE jobs are the independent BVH node pairs of the traversal
 * front (ids 0..traverse_jobs-1, made by the host); running one yields the
 * feature pairs under it, which become LEAF jobs (the elementary tests),
 * numbered in the order they are produced and typed by the resource that
 * produced them (type j = 2·producer + kind, so |J| = 2·|R|).
 *
 * Resources, from a device list such as "cpu,model:gtx285,cuda":
 *   cpu         all worker threads of the pool as one resource
 *               (hierarchical: inside it the workers steal from each other);
 *   cuda        every GPU present; with none it adds nothing, and the
 *               framework says so (hy_prox_fallback), not an error;
 *   cuda:N      GPU N; an error when there is no GPU N;
 *   model:NAME  a modeled device: the profile named NAME in the config's
 *               profiles when there is one, else a built-in profile
 *               (hy_device_profile_builtin) or a profile file (NAME ending
 *               in .json). Its jobs are
 *               computed on the CPU, so results are right, and it is charged
 *               the profile's time (under the real clock it takes that time
 *               on its own thread, see concurrency).
 *
 * Loop. Every resource has an incoming queue (jobs assigned to it) and an
 * outgoing queue (jobs it produced). An idle resource runs all its incoming
 * jobs of one type as a batch, TRAVERSE types first. When a resource's
 * incoming queue is empty and jobs wait in outgoing queues, the scheduler
 * gathers them all into a hy_sched_problem (busy_i = the resource's expected
 * remaining work) and the policy splits them; the jobs reach the incoming
 * queues when the call ends. Initial jobs sit in the host's outgoing queue.
 *
 * Clock. With HY_CLOCK_VIRTUAL the loop is a discrete-event simulation
 * over one timeline, and the work itself is done by the resource's backend
 * when a batch starts (on the pool, so a step uses every core whatever the
 * device list); a batch costs the model's T(i, j, n) on every resource (the
 * cpu resource's from its calibrated profile) and a scheduler call its
 * modeled time (hy_sched_call_time): a whole run's timing is exact and
 * repeatable. With HY_CLOCK_REAL and only cpu resources, the same loop with
 * each batch's and call's measured wall time.
 *
 * Concurrency. With HY_CLOCK_REAL and a live resource of a fed backend (a
 * GPU, a modeled device; hy_backend.fed) the timeline is the wall clock:
 * each fed resource has a host thread of its own that runs the device part
 * of its batches (a kind's hy_job_kind_ops.device: the GPU kernels, or on a
 * modeled device their C twins) and waits out a modeled batch's profiled
 * time, while the caller's thread schedules, prepares and finishes every
 * batch and runs the cpu resource's batches on the pool. A fed resource's
 * batch ends when its thread says so; the run's makespan is its measured
 * wall time. Either way the contacts do not depend on the assignment: each
 * job's result depends only on the job.
 *
 * Failures. A batch that fails on a resource whose backend may fail (a
 * GPU's error; sched/backend.h) or on which a fault was injected
 * (hy_prox_config.fault) does not end the run while another resource is
 * live: the resource is retired (hy_resource.retired) and given no more
 * jobs (the policy is asked about the live resources only); the failed
 * batch's jobs, the jobs waiting for it and those it made go to the other
 * resources, and the run goes on. A failed batch has delivered nothing
 * (a GPU batch's outputs are accepted only when it succeeds; a fault
 * strikes before the batch starts), and each job's result depends only on
 * the job, so the contacts are those of the run without the failure.
 * hy_prox_failure says what happened, in one line.
 *
 * Threads: one hy_prox_run at a time per instance; the feeding threads
 * start with the first run that needs them and end with hy_prox_destroy. */
#ifndef HY_SCHED_PROXIMITY_H
#define HY_SCHED_PROXIMITY_H

#include <stdint.h>
#include <stdio.h>

#include "hyphys/hyphys.h"
#include "sched/backend.h"
#include "sched/model.h"
#include "sched/policy.h"

typedef enum hy_clock { HY_CLOCK_REAL = 0, HY_CLOCK_VIRTUAL = 1 } hy_clock;

typedef struct hy_prox_config {
    const char* policy;  /* NULL = "lp" */
    const char* devices; /* NULL = "cpu" */
    hy_clock clock;
    /* Model of the real cpu resource (and cuda ones), from `hyphys calibrate`.
     * Needed when there is more than one resource or the clock is virtual;
     * hy_prox_needs_profile says so before creating. */
    const hy_sched_model* profiles; /* may be NULL; looked up by name "cpu" / "cuda:N", and by NAME for model:NAME */
    hy_sched_options options;
    /* "NAME@STEP" (may be NULL: none): resource NAME (as the device list
     * names it: "model:gtx285", "cuda:0", "cpu") fails at its first batch
     * in step STEP (>= 1; hy_prox_begin_step) or later, as a device
     * failing would. A test of the failover: it needs another resource. */
    const char* fault;
} hy_prox_config;

typedef struct hy_prox hy_prox;

/* Per run (or summed over the runs since hy_prox_stats_reset). */
typedef struct hy_prox_stats {
    int runs;
    double makespan;   /* seconds on the framework's clock */
    double sched_time; /* seconds charged to scheduler calls */
    double sched_wall; /* wall-clock seconds the scheduler calls took (whatever the clock charged) */
    /* per T, the types with jobs in the call's problem (0..2R): calls, their
     * wall-clock seconds, the seconds charged (how the call-time model is
     * checked against what the policies take) */
    double call_types[HY_SCHED_MAX_TYPES + 1][3];
    int64_t calls, batches, iterations;
    double busy[HY_SCHED_MAX_RESOURCES];     /* seconds */
    double transfer[HY_SCHED_MAX_RESOURCES]; /* seconds of busy spent on transfers (modeled, or a GPU's copies) */
    double setup[HY_SCHED_MAX_RESOURCES];    /* seconds of busy spent in batch setups (modeled resources) */
    int64_t jobs[HY_SCHED_MAX_RESOURCES][HY_JOB_KINDS];
    int64_t traverse_work; /* units the TRAVERSE batches reported (node pairs), or their jobs */
    /* bytes each resource's batches sent to its memory and brought back
     * (a GPU's copies, hy_batch.bytes_up / bytes_down; 0 for the host) */
    int64_t bytes_up[HY_SCHED_MAX_RESOURCES], bytes_down[HY_SCHED_MAX_RESOURCES];
} hy_prox_stats;

/* The caller's work: its job kinds (sched/backend.h), each with its host
 * function and the kernels of the backends it has them for. A function's
 * error ends the run.
 * TRAVERSE batches get ids; they append the LEAF jobs they make, in id
 * order, to the caller's list, say how many in hy_batch.made, and may say
 * in hy_batch.work how many units of work they did (node pairs tested):
 * the model's expected cost of a TRAVERSE job follows the mean units per
 * job of the runs so far. LEAF batches get ranges of that list. */
typedef struct hy_prox_work {
    void* ctx;
    const hy_job_kind_ops* kinds; /* HY_JOB_KINDS entries, indexed by hy_job_kind */
    /* Units of TRAVERSE work (node pairs) the host did to make the initial
     * jobs (the BVH front), 0 if none: where the host is modeled, the run
     * starts with the host busy that long and every other resource
     * waiting, since no job exists before the front does. */
    int64_t front_work;
} hy_prox_work;

/* 1 when `devices` under `clock` needs a calibrated cpu profile; -1 (with a
 * message) when the list does not parse. */
int hy_prox_needs_profile(const char* devices, hy_clock clock);
/* 1 when a real resource of `devices` (cpu, a GPU present) has no entry in
 * `profiles` (its name, "cpu" or "cuda:N", into name[cap]); 0 when all
 * have; -1 (with a message) when the list does not parse. */
int hy_prox_profile_missing(const char* devices, const hy_sched_model* profiles, char* name, size_t cap);

/* Parse the device list, pick the policy, build the model. Errors name the
 * list entry or the policy ("cuda:7" with no GPU 7 is one). A "cuda" entry
 * with no GPU present is left out, silently: hy_prox_fallback says so, for
 * the caller to show. With no resource left, the cpu is used. */
hy_status hy_prox_create(const hy_prox_config* config, hy_prox** out);
void hy_prox_destroy(hy_prox* p);

int hy_prox_resource_count(const hy_prox* p);
const hy_resource* hy_prox_resource(const hy_prox* p, int r);
const hy_sched_model* hy_prox_model(const hy_prox* p);
const char* hy_prox_policy_name(const hy_prox* p);
hy_clock hy_prox_clock(const hy_prox* p);
/* One line on what the device list asked for and did not get (a "cuda"
 * entry with no GPU: hy_cuda_status()'s line), "" when nothing was left out. */
const char* hy_prox_fallback(const hy_prox* p);
/* One line: policy, clock, resources (modeled ones marked). */
void hy_prox_describe(const hy_prox* p, char* buf, size_t cap);

/* The caller's step number (from 1), for hy_prox_config.fault. */
void hy_prox_begin_step(hy_prox* p, int64_t step);
/* Resources retired after a failure so far, and one line on the last one
 * ("" when none): which, in which step, why, where its jobs went. */
int hy_prox_failures(const hy_prox* p);
const char* hy_prox_failure(const hy_prox* p);

/* Switch policy (between runs). */
hy_status hy_prox_set_policy(hy_prox* p, const char* name);

/* Run `traverse_jobs` initial TRAVERSE jobs and everything they make. A
 * TRAVERSE job makes only LEAF jobs (the step's framework, whose TRAVERSE
 * job is a whole subtree). */
hy_status hy_prox_run(hy_prox* p, int64_t traverse_jobs, const hy_prox_work* work);

/* hy_prox_run where the traversal goes on in rounds: work->traverse also
 * adds to *traverse_made the TRAVERSE jobs its batch made (the next round's
 * node pairs), numbered after every TRAVERSE id so far in the order the
 * batches start (the initial jobs are 0..traverse_jobs-1). The framework
 * zeroes *traverse_made before each TRAVERSE batch, releases those jobs
 * into the resource's outgoing queue when the batch ends, as it does the
 * LEAF jobs, and tells the policy that rounds follow
 * (hy_sched_problem.next_round). The throughput bench replays recorded
 * rounds this way. */
hy_status hy_prox_run_rounds(hy_prox* p, int64_t traverse_jobs, const hy_prox_work* work, int64_t* traverse_made);

void hy_prox_stats_reset(hy_prox* p);
/* Summed since the last reset. */
const hy_prox_stats* hy_prox_stats_get(const hy_prox* p);

/* Chrome / Perfetto trace events of every later run (batches, transfers,
 * idle gaps, scheduler calls), one track per resource and one for the
 * scheduler. NULL path closes. The file is complete after close (or
 * destroy). */
hy_status hy_prox_trace_open(hy_prox* p, const char* path);
hy_status hy_prox_trace_close(hy_prox* p);

#endif
