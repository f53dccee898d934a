/* The real CPU executor: a shared ready stack, continuation passing to the
 * worker that freed a task, persistent threads. */
#include "runtime/exec.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "runtime/sim.h" /* hy_rt_wall_seconds */

struct hy_rt_exec {
    int threads;
    pthread_t* tids;
    pthread_mutex_t lock;
    pthread_cond_t work_cv;
    int quit;
    uint64_t epoch;        /* bumped per run; workers join the run of their epoch */
    /* the current run (written under lock before the epoch moves) */
    hy_rt_graph* g;
    atomic_int* pending;   /* per task: predecessors not done yet */
    int32_t cap;
    int32_t* ready;        /* the shared ready stack, under lock */
    int32_t nready;
    atomic_int remaining;  /* tasks not done */
    int idle;              /* workers waiting for work in this run, under lock */
    hy_rt_trace* trace;    /* NULL: none; written under lock */
    double origin;         /* the run's start: trace times of its tasks are from here */
};

static void run_task(hy_rt_exec* e, const hy_rt_graph* g, int32_t k) {
    const hy_rt_task* t = &g->tasks[k];
    void* bufs[HY_RT_MAX_ARGS];
    for (int i = 0; i < t->kind->nargs; i++) bufs[i] = g->handles[t->handles[i]].data.copy[HY_RT_HOST];
    if (!e->trace) {
        t->kind->cpu_fn(bufs, t->arg);
        return;
    }
    double a = hy_rt_wall_seconds();
    t->kind->cpu_fn(bufs, t->arg);
    double b = hy_rt_wall_seconds();
    char args[64];
    snprintf(args, sizeof args, "\"task\":%d,\"partition\":%d", k, t->partition);
    pthread_mutex_lock(&e->lock);
    hy_rt_trace_span(e->trace, t->kind->name, "task", 0, a - e->origin, b - a, args);
    pthread_mutex_unlock(&e->lock);
}

/* Run tasks of the current run until none is left. Called and returns with
 * the lock held. */
static void work(hy_rt_exec* e) {
    while (atomic_load_explicit(&e->remaining, memory_order_acquire) > 0) {
        if (e->nready == 0) {
            e->idle++;
            pthread_cond_wait(&e->work_cv, &e->lock);
            e->idle--;
            continue;
        }
        /* read under the lock: a worker still here from the previous run
         * may take this run's tasks */
        hy_rt_graph* g = e->g;
        int32_t t = e->ready[--e->nready];
        pthread_mutex_unlock(&e->lock);
        while (t >= 0) {
            run_task(e, g, t);
            int32_t next = -1;
            for (int32_t k = g->tasks[t].succ_head; k >= 0; k = g->edges[k].next) {
                int32_t s = g->edges[k].to;
                if (atomic_fetch_sub_explicit(&e->pending[s], 1, memory_order_acq_rel) != 1) continue;
                if (next < 0) {
                    next = s;
                } else {
                    pthread_mutex_lock(&e->lock);
                    e->ready[e->nready++] = s;
                    if (e->idle) pthread_cond_signal(&e->work_cv);
                    pthread_mutex_unlock(&e->lock);
                }
            }
            if (atomic_fetch_sub_explicit(&e->remaining, 1, memory_order_acq_rel) == 1) {
                /* the last task: wake everyone to leave the run */
                pthread_mutex_lock(&e->lock);
                pthread_cond_broadcast(&e->work_cv);
                pthread_mutex_unlock(&e->lock);
            }
            t = next;
        }
        pthread_mutex_lock(&e->lock);
    }
}

static void* worker(void* arg) {
    hy_rt_exec* e = arg;
    uint64_t seen = 0;
    pthread_mutex_lock(&e->lock);
    for (;;) {
        while (!e->quit && e->epoch == seen) pthread_cond_wait(&e->work_cv, &e->lock);
        if (e->quit) break;
        seen = e->epoch;
        work(e);
    }
    pthread_mutex_unlock(&e->lock);
    return NULL;
}

hy_status hy_rt_exec_create(int threads, hy_rt_exec** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_exec_create: NULL out");
    *out = NULL;
    if (threads < 1 || threads > 1024)
        return hy_fail(HY_ERR_INVALID_ARG, "executor: threads must be in [1, 1024], got %d", threads);
    hy_rt_exec* e = calloc(1, sizeof *e);
    if (!e) return hy_fail(HY_ERR_NOMEM, "out of memory creating an executor");
    e->threads = threads;
    pthread_mutex_init(&e->lock, NULL);
    pthread_cond_init(&e->work_cv, NULL);
    e->tids = calloc((size_t)threads, sizeof *e->tids);
    if (!e->tids) {
        hy_rt_exec_destroy(e);
        return hy_fail(HY_ERR_NOMEM, "out of memory creating an executor");
    }
    for (int i = 1; i < threads; i++)
        if (pthread_create(&e->tids[i], NULL, worker, e)) {
            e->threads = i;
            hy_rt_exec_destroy(e);
            return hy_fail(HY_ERR_NOMEM, "executor: could not start thread %d", i);
        }
    *out = e;
    return HY_OK;
}

void hy_rt_exec_destroy(hy_rt_exec* e) {
    if (!e) return;
    pthread_mutex_lock(&e->lock);
    e->quit = 1;
    pthread_cond_broadcast(&e->work_cv);
    pthread_mutex_unlock(&e->lock);
    for (int i = 1; i < e->threads; i++) pthread_join(e->tids[i], NULL);
    pthread_mutex_destroy(&e->lock);
    pthread_cond_destroy(&e->work_cv);
    free(e->tids);
    free(e->pending);
    free(e->ready);
    free(e);
}

int hy_rt_exec_threads(const hy_rt_exec* e) { return e->threads; }

void hy_rt_exec_set_trace(hy_rt_exec* e, hy_rt_trace* tr, const char* name) {
    pthread_mutex_lock(&e->lock);
    e->trace = tr;
    if (tr) hy_rt_trace_track(tr, 0, name ? name : "cpu0");
    pthread_mutex_unlock(&e->lock);
}

hy_status hy_rt_exec_run(hy_rt_exec* e, hy_rt_graph* g) {
    if (!e || !g) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_exec_run: NULL argument");
    for (int32_t t = 0; t < g->ntasks; t++)
        if (!g->tasks[t].kind->cpu_fn)
            return hy_fail(HY_ERR_UNSUPPORTED, "task %d (kind %s) has no CPU implementation", t,
                           g->tasks[t].kind->name);
    for (int32_t h = 0; h < g->nhandles; h++)
        if (!(g->handles[h].data.valid & (1u << HY_RT_HOST)))
            return hy_fail(HY_ERR_INVALID_ARG, "handle %d is not valid on the host", h);
    if (g->ntasks == 0) return HY_OK;
    if (g->ntasks > e->cap) {
        free(e->pending);
        free(e->ready);
        e->pending = malloc((size_t)g->ntasks * sizeof *e->pending);
        e->ready = malloc((size_t)g->ntasks * sizeof *e->ready);
        if (!e->pending || !e->ready) {
            free(e->pending);
            free(e->ready);
            e->pending = NULL;
            e->ready = NULL;
            e->cap = 0;
            return hy_fail(HY_ERR_NOMEM, "executor: out of memory for %d tasks", g->ntasks);
        }
        e->cap = g->ntasks;
    }
    pthread_mutex_lock(&e->lock);
    if (e->trace) {
        e->origin = hy_rt_wall_seconds();
        e->trace->base = e->origin - e->trace->clock0;
    }
    e->g = g;
    e->nready = 0;
    /* pushed in reverse so that the stack hands out the first tasks first */
    for (int32_t t = g->ntasks - 1; t >= 0; t--) {
        atomic_init(&e->pending[t], g->tasks[t].npred);
        if (g->tasks[t].npred == 0) e->ready[e->nready++] = t;
    }
    atomic_store(&e->remaining, g->ntasks);
    e->epoch++;
    pthread_cond_broadcast(&e->work_cv);
    work(e);
    /* The run is over when every worker has left it: a worker still inside
     * work() may be waiting on the lock to check `remaining`. */
    pthread_mutex_unlock(&e->lock);
    return HY_OK;
}
