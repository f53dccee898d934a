/* What the proximity framework's files share (sched/proximity.c: queues and
 * the event loop; prox_devices.c: device lists, resources, create;
 * prox_trace.c: the trace; prox_learn.c: online cost learning): the
 * framework's state. Not for use outside sched/prox*.c. */
#ifndef HY_SCHED_PROX_INTERNAL_H
#define HY_SCHED_PROX_INTERNAL_H

#include <pthread.h>
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

/* A resource's batch from its start to its end (one at a time per
 * resource): its type, jobs, start on the run's timeline, and the batch as
 * its backend runs it (ids: TRAVERSE ids it owns, valid until it ends). */
typedef struct flight {
    int j;
    int64_t n;
    double t;      /* start, seconds of the run */
    double w0;     /* start, wall clock */
    int first;     /* the run's first batch on the resource */
    int fault;     /* an injected fault struck it */
    int split;     /* run in parts (hy_job_kind_ops.device) */
    int64_t made_traverse; /* TRAVERSE jobs it made (hy_prox_run_rounds) */
    const hy_job_kind_ops* ops;
    void* ctx; /* the caller's, for the kind's functions */
    hy_batch b;
    queue q; /* its jobs */
    int64_t* ids;
    int64_t ids_cap;
} flight;

/* The host thread that feeds a fed resource (hy_backend.fed) under the
 * real clock. posted, done, quit, status and end_wall are under
 * hy_prox.feed_lock (why with status); the flight is the feeder's from post to done, the
 * caller thread's otherwise. */
typedef struct feeder {
    pthread_t thread;
    int started;
    pthread_cond_t go;
    int posted, done, quit;
    int modeled;
    hy_status status;
    char why[256]; /* the message of a failed device part (set on the feeder's thread) */
    double end_wall;
} feeder;

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
    flight fl[HY_SCHED_MAX_RESOURCES]; /* the batch each resource runs */
    /* Concurrency (real clock, fed resources): their feeding threads, the
     * lock over their hand-offs, and the signal the caller's thread waits
     * for when every batch it can run is out on a feeder */
    feeder feed[HY_SCHED_MAX_RESOURCES];
    pthread_mutex_t feed_lock;
    pthread_cond_t feed_done;
    int feed_ready; /* lock and signal made */
    int pending[HY_SCHED_MAX_RESOURCES]; /* 1: its batch is out on its feeder */
    double run_wall0; /* wall clock at the start of the run (fed runs) */
    /* the running batch per resource */
    int running[HY_SCHED_MAX_RESOURCES];
    double end[HY_SCHED_MAX_RESOURCES], last_end[HY_SCHED_MAX_RESOURCES];
    int64_t made_traverse_first[HY_SCHED_MAX_RESOURCES]; /* TRAVERSE jobs it made (hy_prox_run_rounds), */
    int64_t made_traverse[HY_SCHED_MAX_RESOURCES];       /* likewise */
    int64_t traverse_next; /* the next TRAVERSE id */
    int64_t* traverse_made; /* hy_prox_run_rounds's counter; NULL: TRAVERSE jobs make only LEAF jobs */
    int64_t made_first[HY_SCHED_MAX_RESOURCES]; /* LEAF jobs the batch made: ids [first, first + made), */
    int64_t made[HY_SCHED_MAX_RESOURCES];       /* numbered when it ran, released at its end */
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
/* Sleep until wall-clock time `deadline` (hy_sched_now's clock). */
void hy_prox_sleep_until(double deadline);
/* Stop and join the feeding threads, free the flights (prox_feed.c). */
void hy_prox_feed_stop(hy_prox* p);
/* Whether this run feeds resources from their own threads: the real clock
 * and a live resource of a fed backend (prox_feed.c). */
int hy_prox_fed_run(const hy_prox* p);
/* Hand resource i's prepared flight to its feeder (starting it on first
 * use); HY_ERR_INTERNAL when a thread cannot be made (prox_feed.c). */
hy_status hy_prox_feed_post(hy_prox* p, int i);
/* Wait until a feeder is done (returns at once when one is); fills done[i]
 * with 1 for each finished one, taking its status into p->fl[i].b.status,
 * and returns how many (prox_feed.c). */
int hy_prox_feed_collect(hy_prox* p, int* done, double* end_wall, int wait);

#endif
