/* Events per second over a recent window (see rate.h). */
#include "viewer/rate.h"

void hy_viewer_rate_restart(hy_viewer_rate* r, double now) {
    r->count = 0;
    r->origin = now;
}

void hy_viewer_rate_note(hy_viewer_rate* r, double t) {
    r->times[r->count % HY_VIEWER_RATE_CAPACITY] = t;
    r->count++;
}

double hy_viewer_rate_get(const hy_viewer_rate* r, double now, double window) {
    int64_t kept = r->count < HY_VIEWER_RATE_CAPACITY ? r->count : HY_VIEWER_RATE_CAPACITY;
    /* walk back from the newest event while it lies inside the window */
    int64_t k = 0;
    while (k < kept && r->times[(r->count - 1 - k) % HY_VIEWER_RATE_CAPACITY] > now - window) k++;
    if (k == 0) {
        /* none inside: the newest one (if any) still sets a rate that decays */
        if (kept == 0) return 0.0;
        k = 1;
    }
    /* the start of the measured span: the event before the k counted, else
     * the restart; with a full ring and every kept event inside the window,
     * the oldest kept event starts the span and is not counted */
    double start;
    if (k < kept)
        start = r->times[(r->count - 1 - k) % HY_VIEWER_RATE_CAPACITY];
    else if (r->count <= HY_VIEWER_RATE_CAPACITY)
        start = r->origin;
    else {
        k--;
        start = r->times[(r->count - 1 - k) % HY_VIEWER_RATE_CAPACITY];
    }
    return (k > 0 && now > start) ? (double)k / (now - start) : 0.0;
}

double hy_viewer_rate_last(const hy_viewer_rate* r) {
    return r->count > 0 ? r->times[(r->count - 1) % HY_VIEWER_RATE_CAPACITY] : r->origin;
}
