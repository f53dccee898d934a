/* The integration runtime's trace: tasks, transfers, steals and METIS calls
 * as Chrome trace events (JSON, opened by Perfetto and chrome://tracing),
 * one track (tid) per PU and one for the scheduler, in the format of the
 * proximity framework's trace (sched/prox_trace.c): complete events ("X")
 * with microsecond times, instants ("i") for steals, thread names as
 * metadata.
 *
 * Times are seconds on the clock the run uses (the modeled executor's
 * virtual clock, or the real one): the writer adds `base`. The modeled
 * executor moves `base` on by each step's length so that steps follow each
 * other on one timeline; the real executors (runtime/exec.h,
 * runtime/team.h) set it at each run's start to that start's distance from
 * `clock0`, so that their runs sit on the trace's timeline where they
 * happened.
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
    int pid;         /* the process its tracks belong to: 1, or the one given to hy_rt_trace_attach */
    int owns;        /* 1: opened here, finished and closed by hy_rt_trace_close */
    double clock0;   /* real executors: the time 0 of the trace, seconds on hy_rt_wall_seconds' clock
                        (hy_rt_trace_open: when opened; hy_rt_trace_attach: 0, the caller sets it) */
} hy_rt_trace;

/* Opens `path` for writing and starts the JSON; `clock` ("virtual" or
 * "real") goes into otherData. HY_ERR_IO naming the file. */
hy_status hy_rt_trace_open(const char* path, const char* clock, hy_rt_trace** out);
/* Writes into a trace stream that another writer opened and will finish:
 * the proximity framework's (sched/prox_trace.c writes events of the same
 * form), so that the integration's tasks, transfers, steals and maps sit
 * in one file with the collision jobs. Its tracks belong to process `pid`
 * (not the other writer's), named `process` by a metadata event, so each
 * PU has its own track beside the collision resources'. The stream must
 * already hold an event (the other writer's track names): every event
 * written here follows a comma. `path` names the file in messages. The
 * caller sets `base` to where the integration starts on the other
 * writer's timeline. HY_ERR_INVALID_ARG for a NULL stream or pid < 1. */
hy_status hy_rt_trace_attach(FILE* f, const char* path, int pid, const char* process, hy_rt_trace** out);
/* Finishes the JSON and closes (an attached trace: checks the stream's
 * error flag and leaves it open); HY_ERR_IO naming the file when a write
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
