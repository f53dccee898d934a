/* The integration runtime's trace: tasks, transfers, steals and METIS calls
 * as Chrome trace events (JSON, opened by Perfetto and chrome://tracing),
 * one track (tid) per PU and one for the scheduler, in the format of the
 * proximity framework's trace (sched/prox_trace.c): complete events ("X")
 * with microsecond times, instants ("i") for steals, thread names as
 * metadata.
 *
 * Times are seconds on the clock the run uses (the modeled executor's
 * virtual clock, or the real one): the writer adds `base`, which the
 * executors move on by each step's length so that steps follow each other
 * on one timeline.
 *
 * Threads: a trace is written from one thread at a time (the real
 * executor records under its lock). */
#ifndef HY_RUNTIME_TRACE_H
#define HY_RUNTIME_TRACE_H

#include <stdint.h>
#include <stdio.h>

#include "core/error.h"

typedef struct hy_rt_trace {
    FILE* f;
    char* path;      /* for messages */
    int64_t events;
    double base;     /* seconds added to every time given */
} hy_rt_trace;

/* Opens `path` for writing and starts the JSON; `clock` ("virtual" or
 * "real") goes into otherData. HY_ERR_IO naming the file. */
hy_status hy_rt_trace_open(const char* path, const char* clock, hy_rt_trace** out);
/* Finishes the JSON and closes; HY_ERR_IO naming the file when a write
 * failed. Frees t (NULL: nothing). */
hy_status hy_rt_trace_close(hy_rt_trace* t);
/* Names track `tid`. */
void hy_rt_trace_track(hy_rt_trace* t, int tid, const char* name);
/* A complete event from `start` for `dur` seconds; args: JSON members
 * without braces, or NULL. */
void hy_rt_trace_span(hy_rt_trace* t, const char* name, const char* cat, int tid, double start, double dur,
                      const char* args);
/* An instant event at `ts`. */
void hy_rt_trace_instant(hy_rt_trace* t, const char* name, const char* cat, int tid, double ts, const char* args);

#endif
