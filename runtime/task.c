/* The task graph: submission, dependency inference, the partition graph. */
#include "runtime/task.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Grow *p (elements of `size` bytes, capacity *cap) to hold `need`. */
static hy_status grow(void** p, int32_t* cap, int32_t need, size_t size) {
    if (need <= *cap) return HY_OK;
    if (need > (1 << 30)) return hy_fail(HY_ERR_NOMEM, "task graph: more than 2^30 entries");
    int32_t c = *cap ? *cap : 64;
    while (c < need) c *= 2;
    void* q = realloc(*p, (size_t)c * size);
    if (!q) return hy_fail(HY_ERR_NOMEM, "task graph: out of memory growing to %d entries", c);
    *p = q;
    *cap = c;
    return HY_OK;
}

hy_status hy_rt_graph_create(hy_rt_graph** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_graph_create: NULL out");
    *out = calloc(1, sizeof **out);
    if (!*out) return hy_fail(HY_ERR_NOMEM, "out of memory creating a task graph");
    return HY_OK;
}

void hy_rt_graph_destroy(hy_rt_graph* g) {
    if (!g) return;
    for (int32_t h = 0; h < g->nhandles; h++) {
        hy_rt_data_free(&g->handles[h].data);
        free(g->handles[h].readers);
    }
    free(g->handles);
    free(g->tasks);
    free(g->edges);
    free(g->partition_work);
    free(g);
}

hy_status hy_rt_graph_register(hy_rt_graph* g, void* host, size_t bytes, int32_t* out) {
    if (!g || !out || (!host && bytes)) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_graph_register: NULL argument");
    hy_status s = grow((void**)&g->handles, &g->cap_handles, g->nhandles + 1, sizeof *g->handles);
    if (s) return s;
    hy_rt_handle_state* h = &g->handles[g->nhandles];
    memset(h, 0, sizeof *h);
    hy_rt_data_init(&h->data, host, bytes);
    h->last_writer = -1;
    *out = g->nhandles++;
    return HY_OK;
}

void hy_rt_graph_reset(hy_rt_graph* g) {
    g->ntasks = 0;
    g->nedges = 0;
    for (int32_t p = 0; p < g->npartitions; p++) g->partition_work[p] = 0;
    g->npartitions = 0;
    for (int32_t h = 0; h < g->nhandles; h++) {
        g->handles[h].last_writer = -1;
        g->handles[h].nreaders = 0;
    }
}

/* Edge from -> to, once: the edges a task receives are added while its own
 * arguments are scanned, so an edge already there is the head of from's
 * list. */
static hy_status add_edge(hy_rt_graph* g, int32_t from, int32_t to) {
    if (from < 0 || from == to) return HY_OK;
    hy_rt_task* f = &g->tasks[from];
    if (f->succ_head >= 0 && g->edges[f->succ_head].to == to) return HY_OK;
    hy_status s = grow((void**)&g->edges, &g->cap_edges, g->nedges + 1, sizeof *g->edges);
    if (s) return s;
    g->edges[g->nedges].to = to;
    g->edges[g->nedges].next = f->succ_head;
    f->succ_head = g->nedges++;
    g->tasks[to].npred++;
    return HY_OK;
}

hy_status hy_rt_graph_submit(hy_rt_graph* g, const hy_rt_kind* kind, int32_t partition, double work, void* arg,
                             const int32_t* handles, int32_t* out) {
    if (!g || !kind || !kind->name || (kind->nargs && !handles))
        return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_graph_submit: NULL argument");
    if (kind->nargs < 0 || kind->nargs > HY_RT_MAX_ARGS)
        return hy_fail(HY_ERR_INVALID_ARG, "task kind %s: %d arguments, expected 0..%d", kind->name, kind->nargs,
                       HY_RT_MAX_ARGS);
    if (!kind->cpu_fn && !kind->cuda_fn)
        return hy_fail(HY_ERR_INVALID_ARG, "task kind %s has no implementation", kind->name);
    if (partition < 0 || partition >= (1 << 24))
        return hy_fail(HY_ERR_INVALID_ARG, "task kind %s: partition %d out of [0, 2^24)", kind->name, partition);
    if (!(work >= 0) || !isfinite(work))
        return hy_fail(HY_ERR_INVALID_ARG, "task kind %s: work must be finite and >= 0, got %g", kind->name, work);
    for (int i = 0; i < kind->nargs; i++) {
        if (handles[i] < 0 || handles[i] >= g->nhandles)
            return hy_fail(HY_ERR_INVALID_ARG, "task kind %s: argument %d is handle %d, not in [0, %d)", kind->name,
                           i, handles[i], g->nhandles);
        if (kind->modes[i] < HY_RT_R || kind->modes[i] > HY_RT_RW)
            return hy_fail(HY_ERR_INVALID_ARG, "task kind %s: argument %d has access mode %d", kind->name, i,
                           (int)kind->modes[i]);
    }
    hy_status s = grow((void**)&g->tasks, &g->cap_tasks, g->ntasks + 1, sizeof *g->tasks);
    if (!s && partition >= g->npartitions) {
        int32_t old = g->cap_partitions;
        s = grow((void**)&g->partition_work, &g->cap_partitions, partition + 1, sizeof *g->partition_work);
        if (!s)
            for (int32_t p = old; p < g->cap_partitions; p++) g->partition_work[p] = 0;
    }
    if (s) return s;
    /* Readers get pushed below: make room first so that no failure leaves a
     * half-submitted task. */
    for (int i = 0; i < kind->nargs; i++) {
        hy_rt_handle_state* h = &g->handles[handles[i]];
        if ((s = grow((void**)&h->readers, &h->cap_readers, h->nreaders + 1, sizeof *h->readers))) return s;
    }
    int32_t t = g->ntasks;
    hy_rt_task* task = &g->tasks[t];
    memset(task, 0, sizeof *task);
    task->kind = kind;
    task->arg = arg;
    task->partition = partition;
    task->work = work;
    task->succ_head = -1;
    for (int i = 0; i < kind->nargs; i++) task->handles[i] = handles[i];
    g->ntasks++;
    if (partition >= g->npartitions) g->npartitions = partition + 1;
    g->partition_work[partition] += work;

    /* Sequential consistency: RAW on the last writer; WAW on it and WAR on
     * every reader since. An argument read and written counts as both. */
    for (int i = 0; i < kind->nargs; i++) {
        hy_rt_handle_state* h = &g->handles[handles[i]];
        if ((s = add_edge(g, h->last_writer, t))) return s;
        if (kind->modes[i] & HY_RT_W)
            for (int32_t r = 0; r < h->nreaders; r++)
                if ((s = add_edge(g, h->readers[r], t))) return s;
    }
    for (int i = 0; i < kind->nargs; i++) {
        hy_rt_handle_state* h = &g->handles[handles[i]];
        if (kind->modes[i] & HY_RT_W) {
            h->last_writer = t;
            h->nreaders = 0;
        } else if (h->last_writer != t && (h->nreaders == 0 || h->readers[h->nreaders - 1] != t)) {
            h->readers[h->nreaders++] = t;
        }
    }
    if (out) *out = t;
    return HY_OK;
}

hy_status hy_rt_graph_submit_pair(hy_rt_graph* g, const hy_rt_kind* kind, int32_t a, int32_t b, double work,
                                  void* arg, const int32_t* handles, int32_t* out) {
    if (!g) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_graph_submit_pair: NULL graph");
    double wa = a >= 0 && a < g->npartitions ? g->partition_work[a] : 0;
    double wb = b >= 0 && b < g->npartitions ? g->partition_work[b] : 0;
    int32_t p = (wb < wa || (wb == wa && b < a)) ? b : a;
    return hy_rt_graph_submit(g, kind, p, work, arg, handles, out);
}

static int cmp_i32(const void* x, const void* y) {
    int32_t a = *(const int32_t*)x, b = *(const int32_t*)y;
    return (a > b) - (a < b);
}

int32_t hy_rt_graph_preds(const hy_rt_graph* g, int32_t t, int32_t* out, int32_t cap) {
    int32_t n = 0;
    for (int32_t u = 0; u < g->ntasks; u++)
        for (int32_t e = g->tasks[u].succ_head; e >= 0; e = g->edges[e].next)
            if (g->edges[e].to == t) {
                if (n < cap) out[n] = u;
                n++;
            }
    qsort(out, (size_t)(n < cap ? n : cap), sizeof *out, cmp_i32);
    return n;
}

static int cmp_pair(const void* x, const void* y) {
    const int32_t* a = x;
    const int32_t* b = y;
    if (a[0] != b[0]) return (a[0] > b[0]) - (a[0] < b[0]);
    return (a[1] > b[1]) - (a[1] < b[1]);
}

static int cmp_pedge(const void* x, const void* y) {
    const hy_rt_pedge* a = x;
    const hy_rt_pedge* b = y;
    if (a->a != b->a) return (a->a > b->a) - (a->a < b->a);
    return (a->b > b->b) - (a->b < b->b);
}

hy_status hy_rt_graph_partition_edges(const hy_rt_graph* g, hy_rt_pedge** out, int32_t* count) {
    *out = NULL;
    *count = 0;
    /* (handle, partition) for every argument, sorted and unique: each
     * handle's run lists the partitions that touch it. */
    int64_t n = 0;
    for (int32_t t = 0; t < g->ntasks; t++) n += g->tasks[t].kind->nargs;
    int32_t* pairs = malloc((size_t)(n ? n : 1) * 2 * sizeof *pairs);
    if (!pairs) return hy_fail(HY_ERR_NOMEM, "out of memory building the partition graph");
    int64_t k = 0;
    for (int32_t t = 0; t < g->ntasks; t++)
        for (int i = 0; i < g->tasks[t].kind->nargs; i++) {
            pairs[2 * k] = g->tasks[t].handles[i];
            pairs[2 * k + 1] = g->tasks[t].partition;
            k++;
        }
    qsort(pairs, (size_t)n, 2 * sizeof *pairs, cmp_pair);
    int64_t u = 0;
    for (int64_t i = 0; i < n; i++)
        if (!u || pairs[2 * i] != pairs[2 * (u - 1)] || pairs[2 * i + 1] != pairs[2 * (u - 1) + 1]) {
            pairs[2 * u] = pairs[2 * i];
            pairs[2 * u + 1] = pairs[2 * i + 1];
            u++;
        }
    /* Every pair of partitions on one handle shares its bytes. */
    int64_t ne = 0, cap = 0;
    hy_rt_pedge* e = NULL;
    for (int64_t i = 0; i < u;) {
        int64_t j = i;
        while (j < u && pairs[2 * j] == pairs[2 * i]) j++;
        int64_t bytes = (int64_t)g->handles[pairs[2 * i]].data.bytes;
        for (int64_t x = i; x < j; x++)
            for (int64_t y = x + 1; y < j; y++) {
                if (ne == cap) {
                    cap = cap ? 2 * cap : 64;
                    hy_rt_pedge* q = realloc(e, (size_t)cap * sizeof *e);
                    if (!q) {
                        free(e);
                        free(pairs);
                        return hy_fail(HY_ERR_NOMEM, "out of memory building the partition graph");
                    }
                    e = q;
                }
                e[ne].a = pairs[2 * x + 1];
                e[ne].b = pairs[2 * y + 1];
                e[ne].bytes = bytes;
                ne++;
            }
        i = j;
    }
    free(pairs);
    if (ne) qsort(e, (size_t)ne, sizeof *e, cmp_pedge);
    int64_t m = 0;
    for (int64_t i = 0; i < ne; i++) {
        if (m && e[m - 1].a == e[i].a && e[m - 1].b == e[i].b)
            e[m - 1].bytes += e[i].bytes;
        else
            e[m++] = e[i];
    }
    *out = e;
    *count = (int32_t)m;
    return HY_OK;
}
