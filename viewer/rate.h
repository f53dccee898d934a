/* Events per second over a recent window of wall time: the viewer's
 * simulation steps per second and drawn frames per second. No GL and no
 * clock of its own: times are given, so tests can feed made-up ones.
 *
 * The rate is measured at a time `now`, not at the last event: while a step
 * that takes seconds runs, its steps/s figure falls instead of showing the
 * rate of the steps before it. Not thread-safe; the caller locks. */
#ifndef HY_VIEWER_RATE_H
#define HY_VIEWER_RATE_H

#include <stdint.h>

/* Event times kept: at 4096 events per second a 1 s window is still whole. */
#define HY_VIEWER_RATE_CAPACITY 4096

typedef struct hy_viewer_rate {
    double times[HY_VIEWER_RATE_CAPACITY]; /* s, a ring of the newest event times */
    int64_t count;                         /* events since the last restart */
    double origin;                         /* s, when counting (re)started */
} hy_viewer_rate;

/* Forget every event; counting starts at `now` (s). */
void hy_viewer_rate_restart(hy_viewer_rate* r, double now);
/* One event at time t (s, not before the previous one). */
void hy_viewer_rate_note(hy_viewer_rate* r, double t);
/* Events per second at `now` over the last `window` seconds: the events
 * after now - window, divided by the time since the newest event before
 * them (or since the restart, when there is none). 0 before any event.
 * An event that happens slower than once per window still counts: with
 * steps of 3 s and a 1 s window, the rate reads about 1/3 after each step
 * and falls until the next. */
double hy_viewer_rate_get(const hy_viewer_rate* r, double now, double window);
/* Time of the newest event (s); the restart time when there is none. */
double hy_viewer_rate_last(const hy_viewer_rate* r);

#endif
