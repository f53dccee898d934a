/* The tasks of one run of a graph in per-partition queues, as both
 * executors that place partitions on PUs use them (the modeled one,
 * runtime/sim.c, and the team of real CPU PUs, runtime/team.c).
 *
 * A partition's queue holds its tasks in submission order; a task is ready
 * when every predecessor has finished (pending 0). A PU picks, among the
 * partitions it owns, first a ready task that another partition waits for
 * (the earliest submitted: interactions, attachments, so that their owners
 * are not held up behind this PU's own chains), then partition by
 * partition in index order, each to its end.
 *
 * Threads: plain data; the team uses it under its lock. */
#ifndef HY_RUNTIME_QUEUES_H
#define HY_RUNTIME_QUEUES_H

#include "runtime/task.h"

typedef struct hy_rt_queues {
    int32_t npart, cap_tasks, cap_parts;
    int32_t* pstart;   /* tasks of partition p: plist[pstart[p] .. pstart[p+1]) */
    int32_t* plist;
    int32_t* cursor;   /* per partition: the tasks before it have started */
    int32_t* pending;  /* per task: predecessors not finished */
    uint8_t* started;  /* per task */
    uint8_t* cross;    /* per task: a successor belongs to another partition */
    uint8_t* pstarted; /* per partition: a task has started that no other partition waits for (its
                          own work began; what the thieves look at) */
} hy_rt_queues;

/* The queues of g's tasks over npart partitions (>= every task's partition
 * + 1), nothing started. Keeps its arrays between calls. */
hy_status hy_rt_queues_fill(hy_rt_queues* q, const hy_rt_graph* g, int32_t npart);
void hy_rt_queues_free(hy_rt_queues* q);
/* First ready task of partition p that has not started; -1 if none. */
int32_t hy_rt_queues_ready(hy_rt_queues* q, int32_t p);
/* The task PU `pu` runs next among the partitions with owner[p] == pu (the
 * order above); -1 if none is ready. */
int32_t hy_rt_queues_pick(hy_rt_queues* q, const int32_t* owner, int32_t pu);
/* 1 when a partition owned by `pu` has a task that has not started. */
int hy_rt_queues_unstarted(hy_rt_queues* q, const int32_t* owner, int32_t pu);
/* Task t of g starts; finishes (its successors lose a pending predecessor). */
void hy_rt_queues_start(hy_rt_queues* q, const hy_rt_graph* g, int32_t t);
void hy_rt_queues_finish(hy_rt_queues* q, const hy_rt_graph* g, int32_t t);

#endif
