#include "core/pool.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

/* One worker's run of blocks [lo, hi). The owner takes from the bottom,
 * thieves take the upper half; a small mutex per run keeps this simple and
 * correct (runs are coarse, so the lock is not contended in practice). */
typedef struct run {
    pthread_mutex_t lock;
    int64_t lo, hi;
    char pad[64];
} run;

/* How long a worker that finished a loop, and the caller waiting for the
 * workers, spin before they sleep on a condition variable. A solver's
 * loops follow one another microseconds apart (a CG iteration is some
 * thirty of them); waking a sleeping thread through the kernel costs tens
 * of microseconds each time, more than many of those loops take. Past
 * the window nothing spins: an idle pool costs nothing. Each waiter
 * halves its own window after a wait that had to sleep anyway and
 * doubles it back after one that did not, so code whose loops come far
 * apart, or a machine whose cores are all taken, sees little spinning.
 * HY_POOL_SPIN_US in the environment sets the window (0: never spin),
 * read when a pool is made. */
#define SPIN_US_DEFAULT 50
#define SPIN_US_MAX 100000
#define WAIT_NS_MIN 2000

struct hy_pool {
    int size;
    pthread_t* threads;
    run* runs;
    pthread_mutex_t lock;
    pthread_cond_t start_cv, done_cv;
    atomic_uint_least64_t epoch; /* bumped, under lock, for each hy_pool_for */
    atomic_int active;           /* workers still inside the current job */
    atomic_int quit;
    int64_t spin_ns; /* the spin window */
    int64_t wait_ns; /* the caller's window now (see SPIN_US_DEFAULT) */
    int sleepers; /* workers waiting on start_cv (under lock) */
    int waiting;  /* the caller waits on done_cv (under lock) */
    /* the current job */
    hy_block_fn fn;
    void* ctx;
    int64_t n, grain;
    atomic_llong steals;
    /* the host's task system (hy_pool_create_tasks): no threads of ours */
    int external;
    struct hy_pool_tasks tasks;
};

typedef struct worker_arg {
    hy_pool* pool;
    int id;
} worker_arg;

static int take_own(run* r, int64_t* block) {
    int ok = 0;
    pthread_mutex_lock(&r->lock);
    if (r->lo < r->hi) {
        *block = r->lo++;
        ok = 1;
    }
    pthread_mutex_unlock(&r->lock);
    return ok;
}

/* Steal the upper half of the largest other run into our own run. */
static int steal(hy_pool* p, int self) {
    for (;;) {
        int victim = -1;
        int64_t best = 0;
        for (int i = 0; i < p->size; i++) {
            if (i == self) continue;
            pthread_mutex_lock(&p->runs[i].lock);
            int64_t left = p->runs[i].hi - p->runs[i].lo;
            pthread_mutex_unlock(&p->runs[i].lock);
            if (left > best) {
                best = left;
                victim = i;
            }
        }
        if (victim < 0) return 0;
        run* v = &p->runs[victim];
        int64_t lo = 0, hi = 0;
        pthread_mutex_lock(&v->lock);
        int64_t left = v->hi - v->lo;
        if (left > 0) {
            int64_t take = (left + 1) / 2;
            hi = v->hi;
            lo = v->hi - take;
            v->hi = lo;
        }
        pthread_mutex_unlock(&v->lock);
        if (hi > lo) {
            run* me = &p->runs[self];
            pthread_mutex_lock(&me->lock);
            me->lo = lo;
            me->hi = hi;
            pthread_mutex_unlock(&me->lock);
            atomic_fetch_add(&p->steals, 1);
            return 1;
        }
    }
}

static void work(hy_pool* p, int self) {
    int64_t block;
    for (;;) {
        while (take_own(&p->runs[self], &block)) {
            int64_t begin = block * p->grain;
            int64_t end = begin + p->grain;
            if (end > p->n) end = p->n;
            p->fn(p->ctx, begin, end, block, self);
        }
        if (!steal(p, self)) return;
    }
}

static void cpu_relax(void) {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield");
#endif
}

static int64_t now_ns(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* Spin for at most `window` ns until ready(p, arg) holds; returns whether
 * it does. Reads the clock every 64 turns only. */
static int spin_until(hy_pool* p, int64_t window, int (*ready)(hy_pool*, uint64_t), uint64_t arg) {
    if (ready(p, arg)) return 1;
    int64_t t0 = 0;
    for (unsigned i = 1; window > 0; i++) {
        cpu_relax();
        if (ready(p, arg)) return 1;
        if ((i & 63) == 0) {
            int64_t t = now_ns();
            if (!t0)
                t0 = t;
            else if (t - t0 > window)
                break;
        }
    }
    return 0;
}

/* A waiter's next window after a wait that spun to its end (narrow) or
 * did not (widen): halved down to WAIT_NS_MIN, doubled up to spin_ns. */
static int64_t narrow(const hy_pool* p, int64_t window) {
    int64_t floor = p->spin_ns < WAIT_NS_MIN ? p->spin_ns : WAIT_NS_MIN;
    return window / 2 < floor ? floor : window / 2;
}

static int64_t widen(const hy_pool* p, int64_t window) {
    return window * 2 > p->spin_ns ? p->spin_ns : window * 2;
}

/* A new job (the epoch moved past `seen`) or the pool quits. */
static int job_ready(hy_pool* p, uint64_t seen) {
    return atomic_load_explicit(&p->epoch, memory_order_acquire) != seen ||
           atomic_load_explicit(&p->quit, memory_order_acquire);
}

/* Every worker has left the current job. */
static int job_done(hy_pool* p, uint64_t unused) {
    (void)unused;
    return atomic_load_explicit(&p->active, memory_order_acquire) == 0;
}

/* The caller's wait for the workers: spin, then sleep. */
static void wait_done(hy_pool* p) {
    if (spin_until(p, p->wait_ns, job_done, 0)) {
        p->wait_ns = widen(p, p->wait_ns);
        return;
    }
    p->wait_ns = narrow(p, p->wait_ns);
    pthread_mutex_lock(&p->lock);
    p->waiting = 1;
    while (!job_done(p, 0)) pthread_cond_wait(&p->done_cv, &p->lock);
    p->waiting = 0;
    pthread_mutex_unlock(&p->lock);
}

static void* worker_main(void* arg) {
    worker_arg* wa = arg;
    hy_pool* p = wa->pool;
    int id = wa->id;
    free(wa);
    uint64_t seen = 0;
    int64_t window = p->spin_ns;
    for (;;) {
        if (spin_until(p, window, job_ready, seen)) {
            window = widen(p, window);
        } else {
            window = narrow(p, window);
            pthread_mutex_lock(&p->lock);
            p->sleepers++;
            while (!job_ready(p, seen)) pthread_cond_wait(&p->start_cv, &p->lock);
            p->sleepers--;
            pthread_mutex_unlock(&p->lock);
        }
        if (atomic_load_explicit(&p->quit, memory_order_acquire)) return NULL;
        seen = atomic_load_explicit(&p->epoch, memory_order_acquire);
        work(p, id);
        if (atomic_fetch_sub_explicit(&p->active, 1, memory_order_acq_rel) == 1) {
            pthread_mutex_lock(&p->lock);
            if (p->waiting) pthread_cond_signal(&p->done_cv);
            pthread_mutex_unlock(&p->lock);
        }
    }
}

hy_pool* hy_pool_create(int threads) {
    if (threads <= 0) {
        long c = sysconf(_SC_NPROCESSORS_ONLN);
        threads = c > 0 ? (int)c : 1;
    }
    if (threads > 256) threads = 256;
    hy_pool* p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->size = threads;
    p->spin_ns = (int64_t)SPIN_US_DEFAULT * 1000;
    const char* spin = getenv("HY_POOL_SPIN_US");
    if (spin && *spin) {
        long us = strtol(spin, NULL, 10);
        p->spin_ns = (int64_t)(us < 0 ? 0 : us > SPIN_US_MAX ? SPIN_US_MAX : us) * 1000;
    }
    p->wait_ns = p->spin_ns;
    p->runs = calloc((size_t)threads, sizeof *p->runs);
    p->threads = calloc((size_t)threads, sizeof *p->threads);
    if (!p->runs || !p->threads) {
        free(p->runs);
        free(p->threads);
        free(p);
        return NULL;
    }
    pthread_mutex_init(&p->lock, NULL);
    pthread_cond_init(&p->start_cv, NULL);
    pthread_cond_init(&p->done_cv, NULL);
    for (int i = 0; i < threads; i++) pthread_mutex_init(&p->runs[i].lock, NULL);
    atomic_init(&p->steals, 0);
    atomic_init(&p->epoch, 0);
    atomic_init(&p->active, 0);
    atomic_init(&p->quit, 0);
    for (int i = 1; i < threads; i++) {
        worker_arg* wa = malloc(sizeof *wa);
        if (!wa) break;
        wa->pool = p;
        wa->id = i;
        if (pthread_create(&p->threads[i], NULL, worker_main, wa) != 0) {
            /* Fewer threads than asked: still correct, just slower. */
            free(wa);
            p->size = i;
            break;
        }
    }
    return p;
}

hy_pool* hy_pool_create_tasks(int workers, const struct hy_pool_tasks* tasks) {
    if (workers < 1 || workers > 256 || !tasks || !tasks->enqueue || !tasks->finish) return NULL;
    hy_pool* p = calloc(1, sizeof *p);
    if (!p) return NULL;
    p->size = workers;
    p->external = 1;
    p->tasks = *tasks;
    atomic_init(&p->steals, 0);
    return p;
}

void hy_pool_destroy(hy_pool* p) {
    if (!p) return;
    if (p->external) {
        free(p);
        return;
    }
    pthread_mutex_lock(&p->lock);
    atomic_store_explicit(&p->quit, 1, memory_order_release);
    pthread_cond_broadcast(&p->start_cv);
    pthread_mutex_unlock(&p->lock);
    for (int i = 1; i < p->size; i++) pthread_join(p->threads[i], NULL);
    for (int i = 0; i < p->size; i++) pthread_mutex_destroy(&p->runs[i].lock);
    pthread_mutex_destroy(&p->lock);
    pthread_cond_destroy(&p->start_cv);
    pthread_cond_destroy(&p->done_cv);
    free(p->runs);
    free(p->threads);
    free(p);
}

int hy_pool_size(const hy_pool* p) { return p ? p->size : 1; }

int64_t hy_pool_steals(const hy_pool* p) { return p ? atomic_load(&((hy_pool*)p)->steals) : 0; }

/* One loop handed to the host's task system. */
typedef struct hy_pool_job {
    hy_block_fn fn;
    void* ctx;
    int64_t n, grain;
} hy_pool_job;

static void run_blocks(int64_t begin, int64_t end, int32_t worker, void* context) {
    const hy_pool_job* j = context;
    for (int64_t b = begin; b < end; b++) {
        int64_t lo = b * j->grain, hi = lo + j->grain;
        j->fn(j->ctx, lo, hi > j->n ? j->n : hi, b, worker);
    }
}

void hy_pool_for(hy_pool* p, int64_t n, int64_t grain, hy_block_fn fn, void* ctx) {
    if (n <= 0) return;
    if (grain < 1) grain = 1;
    int64_t blocks = hy_pool_blocks(n, grain);
    /* Serial path: no pool, one thread, or a single block. */
    if (!p || p->size == 1 || blocks == 1) {
        for (int64_t b = 0; b < blocks; b++) {
            int64_t begin = b * grain, end = begin + grain;
            fn(ctx, begin, end > n ? n : end, b, 0);
        }
        return;
    }
    if (p->external) {
        /* the host's items are our blocks */
        hy_pool_job job = {fn, ctx, n, grain};
        void* t = p->tasks.enqueue(run_blocks, blocks, 1, &job, p->tasks.user_context);
        if (t) p->tasks.finish(t, p->tasks.user_context);
        return;
    }
    /* Deal contiguous runs of blocks, one per worker. */
    int workers = p->size;
    for (int i = 0; i < workers; i++) {
        p->runs[i].lo = blocks * i / workers;
        p->runs[i].hi = blocks * (i + 1) / workers;
    }
    p->fn = fn;
    p->ctx = ctx;
    p->n = n;
    p->grain = grain;
    atomic_store_explicit(&p->active, workers - 1, memory_order_relaxed);
    /* The job's fields are published by the epoch's release; the bump is
     * under the lock so that a worker going to sleep cannot miss it. */
    pthread_mutex_lock(&p->lock);
    atomic_fetch_add_explicit(&p->epoch, 1, memory_order_release);
    if (p->sleepers) pthread_cond_broadcast(&p->start_cv);
    pthread_mutex_unlock(&p->lock);
    work(p, 0);
    wait_done(p);
}
