/* The proximity framework's feeding threads (sched/proximity.h,
 * concurrency): under the real clock each resource of a fed backend (a
 * GPU, a modeled device) has a host thread that runs the device part of its
 * batches, or waits out a modeled batch's time, while the caller's thread
 * schedules and runs the CPU's batches on the pool. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "sched/prox_internal.h"

int hy_prox_fed_run(const hy_prox* p) {
    if (p->clock != HY_CLOCK_REAL) return 0;
    for (int i = 0; i < p->R; i++)
        if (!p->res[i].retired && hy_backend_get(p->res[i].kind)->fed) return 1;
    return 0;
}

void hy_prox_sleep_until(double deadline) {
    for (;;) {
        double left = deadline - hy_sched_now();
        if (left <= 0.0) return;
        struct timespec ts = {(time_t)left, (long)((left - (double)(time_t)left) * 1e9)};
        if (nanosleep(&ts, NULL) == 0) return;
        if (errno != EINTR) return;
    }
}

typedef struct feed_arg {
    hy_prox* p;
    int i;
} feed_arg;

/* A feeder: wait for a posted flight, run its device part (the kind's
 * device function; none for a batch that ran whole on the caller's
 * thread), wait out a modeled batch's time, say it is done. */
static void* feed_main(void* varg) {
    feed_arg* arg = varg;
    hy_prox* p = arg->p;
    int i = arg->i;
    feeder* f = &p->feed[i];
    pthread_mutex_lock(&p->feed_lock);
    for (;;) {
        while (!f->posted && !f->quit) pthread_cond_wait(&f->go, &p->feed_lock);
        if (f->quit) break;
        flight* fl = &p->fl[i];
        pthread_mutex_unlock(&p->feed_lock);
        hy_status s = HY_OK;
        if (fl->split) s = fl->ops->device[p->res[i].kind](fl->ctx, i, &p->res[i], &fl->b);
        if (f->modeled) {
            /* a modeled batch takes its modeled time, its work included */
            double units = fl->b.work >= 0 ? (double)fl->b.work : (double)fl->n;
            double engage = fl->first ? p->model.device[i].engage : 0.0;
            hy_prox_sleep_until(fl->w0 + engage + hy_sched_time_work(&p->model, i, fl->j, fl->n, units));
        }
        double end = hy_sched_now();
        pthread_mutex_lock(&p->feed_lock);
        /* the message is this thread's: it goes back with the status */
        if (s) snprintf(f->why, sizeof f->why, "%s", hy_last_error());
        f->status = s;
        f->end_wall = end;
        f->posted = 0;
        f->done = 1;
        pthread_cond_signal(&p->feed_done);
    }
    pthread_mutex_unlock(&p->feed_lock);
    free(arg);
    return NULL;
}

static hy_status feed_start(hy_prox* p, int i) {
    if (!p->feed_ready) {
        if (pthread_mutex_init(&p->feed_lock, NULL)) return hy_fail(HY_ERR_INTERNAL, "proximity framework: no lock");
        if (pthread_cond_init(&p->feed_done, NULL)) {
            pthread_mutex_destroy(&p->feed_lock);
            return hy_fail(HY_ERR_INTERNAL, "proximity framework: no condition variable");
        }
        p->feed_ready = 1;
    }
    feeder* f = &p->feed[i];
    feed_arg* arg = malloc(sizeof *arg);
    if (!arg) return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for %s's thread", p->res[i].name);
    *arg = (feed_arg){p, i};
    if (pthread_cond_init(&f->go, NULL)) {
        free(arg);
        return hy_fail(HY_ERR_INTERNAL, "proximity framework: no condition variable for %s", p->res[i].name);
    }
    f->posted = f->done = f->quit = 0;
    int e = pthread_create(&f->thread, NULL, feed_main, arg);
    if (e) {
        pthread_cond_destroy(&f->go);
        free(arg);
        return hy_fail(HY_ERR_INTERNAL, "proximity framework: cannot start %s's feeding thread (%s)", p->res[i].name,
                       strerror(e));
    }
    f->started = 1;
    return HY_OK;
}

hy_status hy_prox_feed_post(hy_prox* p, int i) {
    feeder* f = &p->feed[i];
    if (!f->started) {
        hy_status s = feed_start(p, i);
        if (s) return s;
    }
    pthread_mutex_lock(&p->feed_lock);
    f->modeled = p->res[i].modeled;
    f->done = 0;
    f->posted = 1;
    pthread_cond_signal(&f->go);
    pthread_mutex_unlock(&p->feed_lock);
    p->pending[i] = 1;
    return HY_OK;
}

int hy_prox_feed_collect(hy_prox* p, int* done, double* end_wall, int wait) {
    int n = 0;
    if (!p->feed_ready) return 0;
    pthread_mutex_lock(&p->feed_lock);
    for (;;) {
        for (int i = 0; i < p->R; i++) {
            done[i] = p->pending[i] && p->feed[i].done;
            if (!done[i]) continue;
            p->feed[i].done = 0;
            p->fl[i].b.status = p->feed[i].status;
            if (p->feed[i].status) hy_fail(p->feed[i].status, "%s", p->feed[i].why);
            end_wall[i] = p->feed[i].end_wall;
            n++;
        }
        if (n || !wait) break;
        pthread_cond_wait(&p->feed_done, &p->feed_lock);
    }
    pthread_mutex_unlock(&p->feed_lock);
    for (int i = 0; i < p->R; i++)
        if (done[i]) p->pending[i] = 0;
    return n;
}

void hy_prox_feed_stop(hy_prox* p) {
    for (int i = 0; i < HY_SCHED_MAX_RESOURCES; i++) {
        feeder* f = &p->feed[i];
        if (!f->started) continue;
        pthread_mutex_lock(&p->feed_lock);
        f->quit = 1;
        pthread_cond_signal(&f->go);
        pthread_mutex_unlock(&p->feed_lock);
        pthread_join(f->thread, NULL);
        pthread_cond_destroy(&f->go);
        f->started = 0;
    }
    if (p->feed_ready) {
        pthread_cond_destroy(&p->feed_done);
        pthread_mutex_destroy(&p->feed_lock);
        p->feed_ready = 0;
    }
    for (int i = 0; i < HY_SCHED_MAX_RESOURCES; i++) {
        free(p->fl[i].q.v);
        free(p->fl[i].ids);
        p->fl[i].q = (queue){0};
        p->fl[i].ids = NULL;
        p->fl[i].ids_cap = 0;
    }
}
