/* Per-partition task queues of a run (see queues.h). */
#include "runtime/queues.h"

#include <stdlib.h>
#include <string.h>

void hy_rt_queues_free(hy_rt_queues* q) {
    free(q->pstart);
    free(q->plist);
    free(q->cursor);
    free(q->pending);
    free(q->started);
    free(q->cross);
    free(q->pstarted);
    memset(q, 0, sizeof *q);
}

hy_status hy_rt_queues_fill(hy_rt_queues* q, const hy_rt_graph* g, int32_t npart) {
    int32_t n = g->ntasks, P = npart;
    if (n > q->cap_tasks) {
        free(q->plist);
        free(q->pending);
        free(q->started);
        free(q->cross);
        q->plist = malloc((size_t)n * sizeof *q->plist);
        q->pending = malloc((size_t)n * sizeof *q->pending);
        q->started = malloc((size_t)n);
        q->cross = malloc((size_t)n);
        q->cap_tasks = q->plist && q->pending && q->started && q->cross ? n : 0;
    }
    if (P > q->cap_parts) {
        free(q->pstart);
        free(q->cursor);
        free(q->pstarted);
        q->pstart = malloc(((size_t)P + 1) * sizeof *q->pstart);
        q->cursor = malloc((size_t)P * sizeof *q->cursor);
        q->pstarted = malloc((size_t)P);
        q->cap_parts = q->pstart && q->cursor && q->pstarted ? P : 0;
    }
    if (q->cap_tasks < n || q->cap_parts < P)
        return hy_fail(HY_ERR_NOMEM, "out of memory for the queues of %d tasks in %d partitions", n, P);
    q->npart = P;
    memset(q->pstart, 0, ((size_t)P + 1) * sizeof *q->pstart);
    if (n) {
        memset(q->started, 0, (size_t)n);
        memset(q->cross, 0, (size_t)n);
    }
    if (P) memset(q->pstarted, 0, (size_t)P);
    for (int32_t t = 0; t < n; t++) {
        q->pstart[g->tasks[t].partition + 1]++;
        q->pending[t] = g->tasks[t].npred;
        for (int32_t e = g->tasks[t].succ_head; e >= 0; e = g->edges[e].next)
            if (g->tasks[g->edges[e].to].partition != g->tasks[t].partition) q->cross[t] = 1;
    }
    for (int32_t p = 0; p < P; p++) {
        q->pstart[p + 1] += q->pstart[p];
        q->cursor[p] = q->pstart[p];
    }
    for (int32_t t = 0; t < n; t++) q->plist[q->cursor[g->tasks[t].partition]++] = t;
    for (int32_t p = 0; p < P; p++) q->cursor[p] = q->pstart[p];
    return HY_OK;
}

/* Move p's cursor past the tasks that have started. */
static void skip_started(hy_rt_queues* q, int32_t p) {
    while (q->cursor[p] < q->pstart[p + 1] && q->started[q->plist[q->cursor[p]]]) q->cursor[p]++;
}

int32_t hy_rt_queues_ready(hy_rt_queues* q, int32_t p) {
    skip_started(q, p);
    for (int32_t i = q->cursor[p]; i < q->pstart[p + 1]; i++) {
        int32_t t = q->plist[i];
        if (!q->started[t] && q->pending[t] == 0) return t;
    }
    return -1;
}

int32_t hy_rt_queues_pick(hy_rt_queues* q, const int32_t* owner, int32_t pu) {
    int32_t best = -1;
    for (int32_t p = 0; p < q->npart; p++) {
        if (owner[p] != pu) continue;
        int32_t c = hy_rt_queues_ready(q, p);
        if (c >= 0 && q->cross[c] && (best < 0 || c < best)) best = c;
    }
    for (int32_t p = 0; p < q->npart && best < 0; p++)
        if (owner[p] == pu) best = hy_rt_queues_ready(q, p);
    return best;
}

int hy_rt_queues_unstarted(hy_rt_queues* q, const int32_t* owner, int32_t pu) {
    for (int32_t p = 0; p < q->npart; p++) {
        if (owner[p] != pu) continue;
        skip_started(q, p);
        for (int32_t i = q->cursor[p]; i < q->pstart[p + 1]; i++)
            if (!q->started[q->plist[i]]) return 1;
    }
    return 0;
}

void hy_rt_queues_start(hy_rt_queues* q, const hy_rt_graph* g, int32_t t) {
    q->started[t] = 1;
    /* an interaction run first for the other partitions' sake leaves its
     * partition's own work where it was: still a whole to steal */
    if (!q->cross[t]) q->pstarted[g->tasks[t].partition] = 1;
}

void hy_rt_queues_finish(hy_rt_queues* q, const hy_rt_graph* g, int32_t t) {
    for (int32_t e = g->tasks[t].succ_head; e >= 0; e = g->edges[e].next) q->pending[g->edges[e].to]--;
}
