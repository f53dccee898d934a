/* Tasks over data handles: the integration runtime's task graph.
 *
 * A task kind (hy_rt_kind) names a signature of data arguments with access
 * modes (read, write, read-write) and its implementations: one for CPUs and,
 * optionally, one for CUDA devices. A kind with no implementation for a kind
 * of processing unit (PU) never runs there.
 *
 * Data is registered once as a handle (hy_rt_graph_register); tasks are then
 * submitted in program order and their dependencies follow from the order of
 * their accesses (sequential consistency): a reader waits for the last
 * writer of each handle it reads (read after write), a writer waits for the
 * last writer (write after write) and for every reader since (write after
 * read). Whatever order the tasks then run in, every task sees the data that
 * the program order would have shown it, so results do not depend on the
 * executor, the PUs or their number.
 *
 * Every task belongs to a partition (one per object); a task that couples two
 * objects (an interaction) joins one of their partitions
 * (hy_rt_graph_submit_pair). Partitions are what the modeled executor places
 * on PUs (runtime/sim.h); the handles they share give the partition graph's
 * edges and weights (hy_rt_graph_partition_edges).
 *
 * Threads: a graph is built and read from one thread at a time; executors
 * (runtime/exec.h, runtime/sim.h) run it. */
#ifndef HY_RUNTIME_TASK_H
#define HY_RUNTIME_TASK_H

#include <stddef.h>
#include <stdint.h>

#include "core/error.h"
#include "runtime/data.h"

#define HY_RT_MAX_ARGS 8

typedef enum hy_rt_mode { HY_RT_R = 1, HY_RT_W = 2, HY_RT_RW = 3 } hy_rt_mode;

/* The kinds of processing unit. */
typedef enum hy_rt_pu_kind { HY_RT_CPU = 0, HY_RT_GPU = 1, HY_RT_PU_KINDS = 2 } hy_rt_pu_kind;

/* An implementation: buffers[i] is argument i's copy in the memory of the PU
 * that runs the task, arg the pointer given at submission. */
typedef void (*hy_rt_fn)(void* const* buffers, void* arg);

typedef struct hy_rt_kind {
    const char* name;                 /* required: for messages and traces */
    int nargs;                        /* 0..HY_RT_MAX_ARGS */
    hy_rt_mode modes[HY_RT_MAX_ARGS]; /* access mode of each argument */
    hy_rt_fn cpu_fn;                  /* optional: NULL = never on a CPU */
    /* Optional: NULL = never on a GPU. A modeled GPU (runtime/sim.h) runs
     * cpu_fn in its place on the modeled memory's host buffers, so results
     * are the CPU's; a real team's GPU PU (runtime/team.h) calls it. */
    hy_rt_fn cuda_fn;
    /* Bit i: cuda_fn takes argument i in host memory, not in its GPU's: a
     * host-driven implementation (its solver's loop on the host, its passes
     * on the device) that moves what it needs itself. */
    unsigned cuda_host_args;
} hy_rt_kind;

/* 1 when kind k has an implementation for PUs of kind pk. */
static inline int hy_rt_kind_runs_on(const hy_rt_kind* k, hy_rt_pu_kind pk) {
    return pk == HY_RT_CPU ? k->cpu_fn != NULL : k->cuda_fn != NULL;
}

typedef struct hy_rt_task {
    const hy_rt_kind* kind;
    void* arg;
    int32_t partition;
    int32_t handles[HY_RT_MAX_ARGS];
    double work;        /* modeled cost: seconds on the reference CPU core (runtime/machine.h) */
    int32_t npred;      /* distinct tasks this one waits for */
    int32_t succ_head;  /* first edge of its successor list (-1: none) */
} hy_rt_task;

typedef struct hy_rt_edge {
    int32_t to, next;
} hy_rt_edge;

/* A partition graph edge: partitions a < b share `bytes` bytes of handles. */
typedef struct hy_rt_pedge {
    int32_t a, b;
    int64_t bytes;
} hy_rt_pedge;

typedef struct hy_rt_handle_state {
    hy_rt_data data;
    int32_t last_writer;              /* -1: none this step */
    int32_t nreaders, cap_readers;    /* readers since the last writer */
    int32_t* readers;
} hy_rt_handle_state;

typedef struct hy_rt_graph {
    hy_rt_task* tasks;
    int32_t ntasks, cap_tasks;
    hy_rt_edge* edges;
    int32_t nedges, cap_edges;
    hy_rt_handle_state* handles;
    int32_t nhandles, cap_handles;
    int32_t npartitions;              /* 1 + the largest partition used */
    double* partition_work;           /* summed work per partition (cap_partitions) */
    int32_t cap_partitions;
} hy_rt_graph;

hy_status hy_rt_graph_create(hy_rt_graph** out);
/* Frees the graph and every copy it allocated (not the registered host buffers). */
void hy_rt_graph_destroy(hy_rt_graph* g);

/* Register `bytes` bytes at `host` (the caller's buffer, which must outlive
 * the graph) as a handle, valid on the host. *out: its index. */
hy_status hy_rt_graph_register(hy_rt_graph* g, void* host, size_t bytes, int32_t* out);

/* Submit one task of `kind` on `handles` (kind->nargs of them) into
 * `partition` (>= 0), with modeled cost `work` (>= 0, seconds on the
 * reference core) and `arg` handed to the implementation. *out (may be NULL):
 * the task's index. HY_ERR_INVALID_ARG for a bad handle, partition, kind or
 * work, naming them. */
hy_status hy_rt_graph_submit(hy_rt_graph* g, const hy_rt_kind* kind, int32_t partition, double work, void* arg,
                             const int32_t* handles, int32_t* out);
/* An interaction between partitions a and b: it joins the one with less
 * work submitted so far (the lower index on a tie), which keeps the
 * partitions' costs even. */
hy_status hy_rt_graph_submit_pair(hy_rt_graph* g, const hy_rt_kind* kind, int32_t a, int32_t b, double work,
                                  void* arg, const int32_t* handles, int32_t* out);

/* Start a new step: forget the tasks and the access history, keep the
 * handles and their copies. */
void hy_rt_graph_reset(hy_rt_graph* g);

/* Tasks that task t waits for, by walking every successor list (for tests and
 * traces; O(edges)). Writes up to `cap` indices in increasing order, returns
 * how many there are. */
int32_t hy_rt_graph_preds(const hy_rt_graph* g, int32_t t, int32_t* out, int32_t cap);

/* The partition graph: one edge per pair of partitions that touch a common
 * handle, weighted by the bytes of the handles they share; sorted by (a, b).
 * *out is allocated (free it), *count its length. */
hy_status hy_rt_graph_partition_edges(const hy_rt_graph* g, hy_rt_pedge** out, int32_t* count);

#endif
