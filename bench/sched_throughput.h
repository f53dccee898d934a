/* Throughput half of `hyphys bench sched`: recorded job streams
 * (bench/sched_stream.h) run through the hybrid proximity framework's own
 * event loop and virtual clock (sched/proximity.c) on modeled machines, per
 * policy of the registry; see sched_throughput.c. */
#ifndef HY_BENCH_SCHED_THROUGHPUT_H
#define HY_BENCH_SCHED_THROUGHPUT_H

#include <stdint.h>
#include <stdio.h>

#include "sched/model.h"

typedef struct hy_tp_options {
    const char* scenes[16];  /* names or scene files */
    int scene_count;
    long frames;             /* frame pairs per scene */
    const char* record_dir;  /* root: recordings in record_dir/NAME; NULL: the default cache, hyphys-recordings/NAME */
    int measured;            /* 1: charge each scheduler call its measured wall time; 0: its modeled time */
    double thickness;        /* contact distance of the replay, metres */
    int threads;             /* threads for recording and replay (not for the simulation) */
    int call_cost;           /* 1: the text output ends with each policy's measured call time against its charge */
} hy_tp_options;

typedef struct hy_tp_row {
    char scene[64];
    const char* machine; /* "machine1", "machine2" */
    char config[96];     /* e.g. "CPU+GTX285" */
    const char* label;   /* short x label for the plot */
    int config_index;
    const char* policy;
    double fps;          /* 1 / mean frame time */
    double frame_ms;     /* mean frame time */
    double calls;        /* scheduler calls per frame */
    double sched_ms;     /* scheduler time charged per frame */
    double bound_fps;    /* no policy can beat it: each frame's jobs spread by a fluid LP over the
                            configuration at their per-job processing costs (no setups, no transfers,
                            no round order; 0 when unbounded) */
    double call_us_measured; /* mean wall time of a scheduler call, µs (this machine; varies) */
    /* by T, the types with jobs in the call's problem (0..2R): calls, their summed measured wall time
     * and summed charge, µs, over all frames */
    double by_types[HY_SCHED_MAX_TYPES + 1][3];
    int resources;
    char resource[HY_SCHED_MAX_RESOURCES][48];
    double idle[HY_SCHED_MAX_RESOURCES]; /* per resource: 1 - busy time / frame time, over all frames */
    double setup[HY_SCHED_MAX_RESOURCES]; /* per resource: time in batch setups / frame time, over all frames */
    double transfer[HY_SCHED_MAX_RESOURCES]; /* per resource: time moving jobs made elsewhere (the model's
                                                download + upload per job) / frame time, over all frames */
} hy_tp_row;

/* Run every scene x machine configuration x policy. Returns an exit code
 * (0, 1 runtime, 2 bad input); *rows (free()) and *count on success.
 * Progress and recording messages go to stderr. */
int hy_tp_run(const hy_tp_options* o, hy_tp_row** rows, int* count);

/* Output: the JSON array body of "throughput" (no brackets), the text table
 * with the target summary, the CSV file (its folder made if missing), and the gnuplot PNG (0 when
 * gnuplot is missing: a message says so and the plot is skipped). */
void hy_tp_print_json(FILE* f, const hy_tp_row* rows, int count);
void hy_tp_print_targets_json(FILE* f, const hy_tp_row* rows, int count);
void hy_tp_print_text(FILE* f, const hy_tp_row* rows, int count, const hy_tp_options* o);
int hy_tp_write_csv(const char* path, const hy_tp_row* rows, int count);
int hy_tp_plot(const char* png, const hy_tp_row* rows, int count);

#endif
