/* The progress estimate from the recent steps (cli/progress.h). */
#include "cli/progress.h"

#include <string.h>

void hy_cli_progress_start(hy_cli_progress* p, double t0) {
    memset(p, 0, sizeof *p);
    p->t[0] = t0;
    p->count = 1;
}

void hy_cli_progress_add(hy_cli_progress* p, long done, double t) {
    p->head = (p->head + 1) % HY_PROGRESS_SAMPLES;
    p->done[p->head] = done;
    p->t[p->head] = t;
    if (p->count < HY_PROGRESS_SAMPLES) p->count++;
}

double hy_cli_progress_rate(const hy_cli_progress* p) {
    if (p->count < 2) return 0.0;
    /* back from the newest sample to the first at least HY_PROGRESS_SPAN
     * older, or the oldest kept */
    int now = p->head, from = now;
    for (int k = 1; k < p->count; k++) {
        from = (now - k + HY_PROGRESS_SAMPLES) % HY_PROGRESS_SAMPLES;
        if (p->t[now] - p->t[from] >= HY_PROGRESS_SPAN) break;
    }
    double dt = p->t[now] - p->t[from];
    long steps = p->done[now] - p->done[from];
    return dt > 0.0 && steps > 0 ? (double)steps / dt : 0.0;
}

double hy_cli_progress_eta(const hy_cli_progress* p, long total) {
    double rate = hy_cli_progress_rate(p);
    if (!(rate > 0.0)) return -1.0;
    long left = total - p->done[p->head];
    return left > 0 ? (double)left / rate : 0.0;
}
