/* The real CPU executor: runs a task graph's CPU implementations on threads,
 * each task once its predecessors are done, on the host copies.
 *
 * Workers share one ready stack under a mutex; a worker that finishes a task
 * keeps one newly ready successor for itself (no trip through the stack) and
 * pushes the others. Tasks of one graph write disjoint data or are ordered by
 * their dependencies, so results do not depend on the thread count.
 *
 * Threads: hy_rt_exec_run is called from one thread at a time; the caller
 * works as worker 0. */
#ifndef HY_RUNTIME_EXEC_H
#define HY_RUNTIME_EXEC_H

#include "runtime/task.h"
#include "runtime/trace.h"

typedef struct hy_rt_exec hy_rt_exec;

/* threads >= 1 including the caller. */
hy_status hy_rt_exec_create(int threads, hy_rt_exec** out);
void hy_rt_exec_destroy(hy_rt_exec* e);
int hy_rt_exec_threads(const hy_rt_exec* e);

/* Run every task of g. Every handle must be valid on the host (graphs that
 * only this executor runs always are; after modeled runs, the sim leaves
 * them so). HY_ERR_UNSUPPORTED naming the kind if a task has no CPU
 * implementation (checked before anything runs). */
hy_status hy_rt_exec_run(hy_rt_exec* e, hy_rt_graph* g);

/* Record the following runs into tr (NULL: stop): the executor is one PU,
 * track 0 of tr, named `name` ("cpu0 (2 threads)"); each task a span on
 * the real clock from tr->clock0 (each run sets tr->base to its start's
 * distance from it), with its task index and partition. Workers write
 * under the executor's lock. */
void hy_rt_exec_set_trace(hy_rt_exec* e, hy_rt_trace* tr, const char* name);

#endif
