/* The progress estimate of long commands (`hyphys run`): steps per second
 * and time left from the recent steps, not from the start. The steps of one
 * run differ by far: a cloth in free fall steps some 20 times faster than
 * in contact, so an average from the start promises minutes where hours
 * remain. The rate is taken over the last HY_PROGRESS_SPAN seconds of wall
 * time (at least the last step; at most the last HY_PROGRESS_SAMPLES
 * steps), which follows such a change within a few steps and stays steady
 * while the cost does. */
#ifndef HY_CLI_PROGRESS_H
#define HY_CLI_PROGRESS_H

#define HY_PROGRESS_SAMPLES 256
#define HY_PROGRESS_SPAN 10.0 /* seconds */

typedef struct hy_cli_progress {
    long done[HY_PROGRESS_SAMPLES]; /* ring of (steps done, wall time) samples */
    double t[HY_PROGRESS_SAMPLES];
    int head, count;
} hy_cli_progress;

/* Start: no step done at wall time t0 (seconds, any origin). */
void hy_cli_progress_start(hy_cli_progress* p, double t0);
/* `done` steps are finished at wall time t (done and t never decrease). */
void hy_cli_progress_add(hy_cli_progress* p, long done, double t);
/* Steps per second over the recent window; 0 before the first step. */
double hy_cli_progress_rate(const hy_cli_progress* p);
/* Seconds until `total` steps are done at that rate; -1 when unknown. */
double hy_cli_progress_eta(const hy_cli_progress* p, long total);

#endif
