/* The framework's resources as backends, and its jobs as kinds with one
 * function per backend.
 *
 * A backend is a kind of processing unit: its table entry says how to find
 * its devices (probe), make one of them a resource (init), run a batch of
 * jobs on it (run_batch) and let it go (deinit). Three exist: cpu (the
 * worker pool as one resource), cuda (one resource per GPU) and model (a
 * modeled device: its jobs computed by the pool, its time charged from a
 * profile). The device list names them by their table name ("cpu",
 * "cuda:0", "model:gtx285"; sched/proximity.h).
 *
 * What a job is, the framework does not know: the layer that makes jobs
 * (collision) hands hy_prox_run a hy_job_kind_ops per job kind, one
 * function per backend (its kernels), and the backend's run_batch calls the
 * one for it. A kind with no function for a backend runs its host function
 * there (the cpu one), which every kind must have. */
#ifndef HY_SCHED_BACKEND_H
#define HY_SCHED_BACKEND_H

#include <stdint.h>

#include "hyphys/hyphys.h"
#include "sched/model.h"

/* The backends, in table order (the index of a resource's backend). */
typedef enum hy_resource_kind {
    HY_RESOURCE_CPU = 0,
    HY_RESOURCE_MODEL = 1,
    HY_RESOURCE_CUDA = 2,
    HY_BACKEND_COUNT = 3
} hy_resource_kind;

typedef struct hy_resource {
    char name[64]; /* "cpu", "model:gtx285", "cuda:0" */
    hy_resource_kind kind;
    int device;  /* cuda: GPU index */
    int modeled; /* charged from its profile (model:, or anything under the virtual clock) */
    int retired; /* failed during a run: given no more jobs (sched/proximity.h, failures) */
} hy_resource;

/* One batch of jobs of one kind, as a backend runs it. */
typedef struct hy_batch {
    hy_job_kind kind;
    const int64_t* ids; /* TRAVERSE: the n job ids; NULL for LEAF */
    int64_t first;      /* LEAF: jobs [first, first + n) of the caller's list */
    int64_t n;
    /* out, TRAVERSE: the LEAF jobs the batch made, appended in id order to
     * the caller's list */
    int64_t made;
    /* out: units of work done (node pairs tested), -1 on entry (one unit a
     * job); a modeled resource is charged proc per unit (sched/model.h) */
    int64_t work;
    /* out: seconds of host<->device copies within the batch (part of its
     * measured time; a real GPU's transfers in the stats and trace) */
    double transfer;
    /* out: bytes the batch sent to the device and brought back (a GPU's
     * copies; 0 on the host) */
    int64_t bytes_up, bytes_down;
    /* A batch run in parts (hy_job_kind_ops.device): what run[] prepared for
     * device[] and finish[] (the kind's; NULL on entry), and in finish[] the
     * status device[] returned. */
    void* stage;
    hy_status status;
} hy_batch;

/* A kind's function for one backend: run batch b on resource r (res). */
typedef hy_status (*hy_job_fn)(void* ctx, int r, const hy_resource* res, hy_batch* b);

/* A job kind as the layer that makes the jobs registers it: run[HY_RESOURCE_CPU]
 * (required) is the host code, which also runs the jobs of modeled
 * resources; run[HY_RESOURCE_CUDA] (may be NULL) the GPU kernels' entry. A
 * backend function that answers HY_ERR_UNSUPPORTED (no CUDA in the build, a
 * job the kernel cannot take) has the batch run by the host function. */
typedef struct hy_job_kind_ops {
    const char* name; /* "TRAVERSE", "LEAF": messages */
    hy_job_fn run[HY_BACKEND_COUNT];
    /* Optional, per backend whose resources are fed by a thread of their own
     * (hy_backend.fed): the batch in three parts, so that the device part
     * runs on that thread while the caller's thread runs other batches.
     * run[] prepares it on the caller's thread (what the device part reads,
     * in memory the batch owns: hy_batch.stage); device[] runs on the
     * resource's thread and touches nothing but the stage and the device;
     * finish[] runs on the caller's thread once device[] returned (its
     * status in hy_batch.status) and takes the outputs into the caller's
     * data, or on failure only frees the stage (a failed batch delivers
     * nothing). TRAVERSE batches say what they made in finish[]. NULL
     * device[]: the whole batch runs in run[] on the caller's thread; the
     * resource's thread only waits out its modeled time. A run[] answering
     * HY_ERR_UNSUPPORTED has the host function run the batch, as for a
     * backend function; a device[] answering it has the host function run
     * it on the caller's thread after finish[] freed the stage. */
    hy_job_fn device[HY_BACKEND_COUNT];
    hy_job_fn finish[HY_BACKEND_COUNT];
} hy_job_kind_ops;

typedef struct hy_backend {
    const char* name; /* the device list's word */
    const char* unit; /* what one device is, for messages: "GPU" */
    /* 1: an entry names a device by index ("cuda:N"; the bare name means
     * every device present); 0: the bare name only ("cpu"); 2: the entry
     * carries an argument ("model:NAME") */
    int entry;
    /* Devices present: cpu 1, cuda the GPUs found (0 with none or without
     * CUDA in the build), model -1 (as many as listed). Cheap after the
     * first call. */
    int (*probe)(void);
    /* One line on what the probe found ("cuda: no GPU present ..."). */
    const char* (*status)(void);
    /* Make device res->device a resource: HY_OK, or why it cannot be. */
    hy_status (*init)(hy_resource* res);
    /* Run batch b of kind k (its functions take ctx). */
    hy_status (*run_batch)(const hy_resource* res, int r, const hy_job_kind_ops* k, void* ctx, hy_batch* b);
    /* 1: under the real clock each of its resources is fed by a host thread
     * of its own, which runs the device part of a batch (k->device[this
     * backend]) or waits out its modeled time, while the caller's thread
     * runs the other resources' batches (sched/proximity.h, concurrency);
     * 0: its batches run on the caller's thread. */
    int fed;
    /* 1: an error from run_batch is the device failing (its jobs go to the
     * other resources and it is retired); 0: an error ends the run (the
     * host's errors are the caller's: out of memory, a bad job). */
    int may_fail;
    /* Let the resource go (may be NULL: nothing to release). */
    void (*deinit)(hy_resource* res);
} hy_backend;

/* The table entry of backend `kind`; NULL outside [0, HY_BACKEND_COUNT). */
const hy_backend* hy_backend_get(hy_resource_kind kind);
/* The backend whose name is the first len characters of `word`; NULL if none. */
const hy_backend* hy_backend_find(const char* word, size_t len);

#endif
