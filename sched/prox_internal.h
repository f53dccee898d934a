/* What the proximity framework's files share (sched/proximity.c: queues and
 * the event loop; prox_devices.c: device lists, resources, create;
 * prox_trace.c: the trace; prox_learn.c: online cost learning): the
 * framework's state. Not for use outside sched/prox*.c. */
#ifndef HY_SCHED_PROX_INTERNAL_H
#define HY_SCHED_PROX_INTERNAL_H

#include <stdint.h>
#include <stdio.h>

#include "sched/proximity.h"

typedef struct range {
    int64_t a, b;
} range;

typedef struct queue {
    range* v;
    int64_t head, n, cap; /* live ranges v[head .. n) */
    int64_t jobs;
} queue;

/* The sums hy_prox_learn_costs fits: batches, units, time, units², units·time,
 * copies, jobs. */
enum { L_N, L_X, L_Y, L_XX, L_XY, L_COPY, L_JOBS, LEARN_SUMS };

struct hy_prox {
    int R;
    hy_resource res[HY_SCHED_MAX_RESOURCES];
    hy_sched_model model;
    hy_sched_policy* policy;
    hy_sched_options options;
    hy_clock clock;
    int host; /* producer of the initial jobs: the first CPU resource, else 0 */
    /* queues */
    queue out[HY_SCHED_MAX_RESOURCES][HY_JOB_KINDS];
    queue in[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES];
    queue fly[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES]; /* assigned by the call in flight */
    int64_t launch[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES]; /* the policy's launch size (0: all) */
    queue batch; /* the jobs of the batch being started */
    /* the running batch per resource */
    int running[HY_SCHED_MAX_RESOURCES];
    double end[HY_SCHED_MAX_RESOURCES], last_end[HY_SCHED_MAX_RESOURCES];
    int64_t made_traverse_first[HY_SCHED_MAX_RESOURCES]; /* TRAVERSE jobs it made (hy_prox_run_rounds), */
    int64_t made_traverse[HY_SCHED_MAX_RESOURCES];       /* likewise */
    int64_t traverse_next; /* the next TRAVERSE id */
    int64_t* traverse_made; /* hy_prox_run_rounds's counter; NULL: TRAVERSE jobs make only LEAF jobs */
    int64_t made_first[HY_SCHED_MAX_RESOURCES]; /* LEAF jobs the batch made: ids [first, first + made), */
    int64_t made[HY_SCHED_MAX_RESOURCES];       /* numbered when it ran, released at its end */
    int64_t* ids;
    int64_t ids_cap;
    int64_t leaf_next;
    double last_call; /* length of the last scheduler call, seconds */
    /* TRAVERSE jobs and their units of work over every run so far: the
     * model's mean units per TRAVERSE job (hy_sched_model.units) */
    int64_t seen_traverse_jobs, seen_traverse_work;
    /* Real clock: per real resource and job kind, sums over its batches of
     * their time less copies against their units of work, and of their
     * copies and jobs, older runs weighing less (LEARN_DECAY per run); the
     * calibrated profile the learned costs stay near. See hy_prox_learn_costs. */
    double learn[HY_SCHED_MAX_RESOURCES][HY_JOB_KINDS][LEARN_SUMS];
    /* Real clock, GPUs: over the first batches of runs, what each took
     * beyond the model's line (the run's fixed cost), and how many; older
     * runs weigh less. See hy_prox_learn_costs. */
    double learn_engage[HY_SCHED_MAX_RESOURCES][2];
    /* batches started on each resource in this run (0: its engage cost is
     * still to pay) */
    int64_t ran[HY_SCHED_MAX_RESOURCES];
    hy_device_profile calibrated[HY_SCHED_MAX_RESOURCES];
    hy_prox_stats stats;
    hy_sched_problem prob;
    hy_sched_assignment a;
    /* trace */
    FILE* trace;
    char* trace_path; /* for messages */
    int trace_events;
    double trace_base;  /* where the next run starts on the trace's timeline, seconds */
    double trace_open_wall;
    /* what the device list asked for and did not get ("cuda" with no GPU):
     * one line for the caller to show, "" when everything was there */
    char fallback[192];
    /* failures (see proximity.h): retired resources, and when there are
     * any, the model of the live ones that the policy is asked about,
     * live[i'] the resource of its i'-th */
    int failures;
    char failure[320];
    hy_sched_model live_model;
    int live[HY_SCHED_MAX_RESOURCES];
    int64_t step;       /* hy_prox_begin_step */
    int fault_resource; /* injected fault: resource (-1: none) and step */
    int64_t fault_step;
};

/* One complete event on the trace's timeline (prox_trace.c): resource
 * `tid`, from `start` for `dur` seconds of the run, args a JSON member list
 * or NULL. Nothing when no trace is open. */
void hy_prox_trace_event(hy_prox* p, const char* name, const char* cat, int tid, double start, double dur,
                         const char* args);
/* The producer of the initial jobs, and of those a retired resource made:
 * the first live CPU (real or modeled), else the first live resource
 * (prox_devices.c). */
int hy_prox_pick_host(const hy_prox* p);
/* Under the real clock, refit the real resources' costs from the run's
 * batches (prox_learn.c); nothing under the virtual clock. */
void hy_prox_learn_costs(hy_prox* p);

#endif
