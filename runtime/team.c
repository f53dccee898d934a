/* The real executor of several PUs, CPUs and GPUs (see team.h). */
#include "runtime/team.h"

#include "runtime/queues.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct worker_arg {
    struct hy_rt_team* team;
    int32_t pu;
} worker_arg;

struct hy_rt_team {
    hy_rt_sim* sim;          /* PUs, owners, measured costs, the policy */
    int nthreads;
    pthread_t tids[HY_RT_TEAM_MAX_THREADS];
    worker_arg args[HY_RT_TEAM_MAX_THREADS];
    pthread_mutex_t lock;
    pthread_cond_t work_cv;  /* workers: a new run, a finished task, quit */
    pthread_cond_t done_cv;  /* the caller: the run is over */
    int quit;
    uint64_t epoch;          /* bumped per run */
    uint64_t rng;            /* victims' order, under lock */
    /* the current run, under lock */
    hy_rt_graph* g;
    int32_t remaining;       /* tasks not finished */
    int32_t inside;          /* workers inside the run */
    hy_rt_queues q;
    int32_t cap_parts;
    uint8_t* ran_on;         /* per partition: kinds it ran on (CPU) */
    double* measured;        /* per partition: seconds its tasks ran */
    uint8_t failed[HY_RT_MAX_PUS]; /* the PU failed to steal since it last ran a task */
    hy_rt_team_pu pu[HY_RT_MAX_PUS];
    hy_status error;         /* the run's first failure to acquire a task's data, under lock */
    char error_msg[256];     /* its message (set on a worker's thread) */
    double t0;               /* the run's start */
    double origin;           /* trace times of the run are from here: its start, the map included */
    hy_rt_trace* trace;
};

/* The CUDA device of the GPU PU whose thread this is, while it runs a task. */
static _Thread_local int current_device = -1;

int hy_rt_current_device(void) { return current_device; }

/* The bytes the running cuda_fn said it moved (counting: on a GPU PU's
 * thread inside cuda_fn). */
static _Thread_local int counting;
static _Thread_local int64_t counted;

void hy_rt_count_transfer(int64_t bytes) {
    if (counting && bytes > 0) counted += bytes;
}

/* One steal round of PU q: a task of the partition taken, or -1. Across
 * kinds, under a policy that asks it, only a partition the thief would
 * finish first (the modeled executor's rule; the owner's current task is
 * not known here and counts as done). Within a kind the rule is left out:
 * the workers measure real time, and a CPU-only team steals as before. */
static int32_t steal(hy_rt_team* t, int32_t q) {
    hy_rt_sim* s = t->sim;
    int32_t npu = s->m.npu;
    if (!s->policy->may_steal || npu < 2) return -1;
    if (s->policy->steal_when_dry && hy_rt_queues_unstarted(&t->q, s->owner, q)) return -1;
    unsigned kind = 1u << s->m.pu[q].kind;
    int32_t first = (int32_t)(hy_rt_random(&t->rng) % (uint64_t)(npu - 1));
    for (int32_t a = 0; a < npu - 1; a++) {
        int32_t v = (first + a) % (npu - 1);
        if (v >= q) v++;
        for (int32_t p = 0; p < s->npart; p++) {
            if (s->owner[p] != v || t->q.pstarted[p] || !(s->eligible[p] & kind)) continue;
            int32_t k = hy_rt_queues_ready(&t->q, p);
            if (k < 0 || !s->policy->may_steal(s, q, p)) continue;
            if (s->policy->steal_only_if_faster && s->m.pu[q].kind != s->m.pu[v].kind &&
                !hy_rt_sim_faster_on_thief(s, &t->q, q, v, p, 0.0, 0.0))
                continue;
            int outside = !hy_rt_sim_in_affinity(s, q, p);
            s->stats.steals_outside_affinity += outside;
            s->stats.steals++;
            s->owner[p] = q;
            if (t->trace) {
                char args[96];
                snprintf(args, sizeof args, "\"partition\":%d,\"victim\":%d,\"outside_affinity\":%d", p, v, outside);
                hy_rt_trace_instant(t->trace, "steal", "steal", q, hy_rt_wall_seconds() - t->origin, args);
            }
            return k;
        }
    }
    s->stats.steal_fails++;
    if (s->policy->steal_failed && !t->failed[q]) s->policy->steal_failed(s, q);
    t->failed[q] = 1;
    return -1;
}

/* Work in the current run until no task is left. Called and returns with
 * the lock held. */
static void work(hy_rt_team* t, int32_t q) {
    t->inside++;
    while (t->remaining > 0) {
        int32_t k = hy_rt_queues_pick(&t->q, t->sim->owner, q);
        if (k < 0) k = steal(t, q);
        if (k < 0) {
            pthread_cond_wait(&t->work_cv, &t->lock);
            continue;
        }
        hy_rt_graph* g = t->g;
        const hy_rt_task* task = &g->tasks[k];
        hy_rt_queues_start(&t->q, g, k);
        t->failed[q] = 0;
        /* the arguments in the PU's memory (valid bits and channel counts
         * are scheduling state: under the lock) */
        const hy_rt_pu* pu = &t->sim->m.pu[q];
        int gpu = pu->kind == HY_RT_GPU;
        void* bufs[HY_RT_MAX_ARGS];
        hy_status st = HY_OK;
        for (int i = 0; i < task->kind->nargs && !st; i++) {
            int32_t mem = gpu && !(task->kind->cuda_host_args & (1u << i)) ? pu->mem : HY_RT_HOST;
            hy_rt_data* d = &g->handles[task->handles[i]].data;
            if (mem == HY_RT_HOST && (d->valid & (1u << HY_RT_HOST))) {
                /* the host's copy is the caller's buffer: nothing to move */
                bufs[i] = d->copy[HY_RT_HOST];
                if (task->kind->modes[i] & HY_RT_W) d->valid = 1u << HY_RT_HOST;
            } else {
                st = hy_rt_data_acquire(&t->sim->m.net, d, mem, (int)task->kind->modes[i], &bufs[i], NULL);
            }
        }
        if (st && !t->error) {
            t->error = st;
            snprintf(t->error_msg, sizeof t->error_msg, "%s", hy_last_error());
        }
        pthread_mutex_unlock(&t->lock);
        double a = hy_rt_wall_seconds();
        if (st) {
            /* not run: the run reports the failure */
        } else if (gpu) {
            current_device = t->pu[q].device;
            counting = 1;
            counted = 0;
            task->kind->cuda_fn(bufs, task->arg);
            counting = 0;
            current_device = -1;
        } else {
            task->kind->cpu_fn(bufs, task->arg);
        }
        double b = hy_rt_wall_seconds();
        pthread_mutex_lock(&t->lock);
        if (gpu && counted > 0) {
            /* the implementation's own transfers, on the channel to its memory */
            hy_rt_memnet* net = &t->sim->m.net;
            for (int32_t c = 0; c < net->nchannels; c++)
                if ((net->channels[c].a == HY_RT_HOST && net->channels[c].b == pu->mem) ||
                    (net->channels[c].b == HY_RT_HOST && net->channels[c].a == pu->mem)) {
                    net->channels[c].bytes += counted;
                    break;
                }
            counted = 0;
        }
        t->measured[task->partition] += b - a;
        t->ran_on[task->partition] |= (uint8_t)(1u << pu->kind);
        t->sim->stats.busy[q] += b - a;
        t->sim->stats.pu_tasks[q]++;
        if (t->trace) {
            char args[64];
            snprintf(args, sizeof args, "\"task\":%d,\"partition\":%d", k, task->partition);
            hy_rt_trace_span(t->trace, task->kind->name, "task", q, a - t->origin, b - a, args);
        }
        hy_rt_queues_finish(&t->q, g, k);
        t->remaining--;
        /* new ready tasks, or the end: every waiting worker looks again */
        pthread_cond_broadcast(&t->work_cv);
    }
    if (--t->inside == 0) pthread_cond_signal(&t->done_cv);
}

static void* worker(void* arg) {
    worker_arg* w = arg;
    hy_rt_team* t = w->team;
    uint64_t seen = 0;
    pthread_mutex_lock(&t->lock);
    for (;;) {
        while (!t->quit && t->epoch == seen) pthread_cond_wait(&t->work_cv, &t->lock);
        if (t->quit) break;
        seen = t->epoch;
        work(t, w->pu);
    }
    pthread_mutex_unlock(&t->lock);
    return NULL;
}

hy_status hy_rt_team_parse(const char* text, int* npu, int* threads, int cap) {
    if (!text || !npu || !threads) return hy_fail(HY_ERR_INVALID_ARG, "PU list: NULL argument");
    hy_rt_team_pu pus[HY_RT_MAX_PUS];
    int n = 0;
    hy_status s = hy_rt_team_parse_pus(text, &n, pus, cap < HY_RT_MAX_PUS ? cap : HY_RT_MAX_PUS);
    if (s) return s;
    for (int q = 0; q < n; q++) {
        if (pus[q].kind != HY_RT_CPU)
            return hy_fail(HY_ERR_INVALID_ARG, "PU list '%s': item %d is a GPU; only cpu:N here", text, q + 1);
        threads[q] = pus[q].threads;
    }
    *npu = n;
    return HY_OK;
}

hy_status hy_rt_team_parse_pus(const char* text, int* npu, hy_rt_team_pu* pus, int cap) {
    if (!text || !npu || !pus) return hy_fail(HY_ERR_INVALID_ARG, "PU list: NULL argument");
    *npu = 0;
    const char* p = text;
    while (*p) {
        size_t n = strcspn(p, ",");
        char item[32];
        if (n == 0 || n >= sizeof item) return hy_fail(HY_ERR_INVALID_ARG, "PU list '%s': empty or long item", text);
        memcpy(item, p, n);
        item[n] = 0;
        char* end = NULL;
        int cuda = !strncmp(item, "cuda:", 5);
        long k = cuda ? strtol(item + 5, &end, 10) : strncmp(item, "cpu:", 4) ? -1 : strtol(item + 4, &end, 10);
        if (cuda ? k < 0 || k > 1023 || end == item + 5 || *end
                 : k < 1 || k > HY_RT_TEAM_MAX_THREADS || !end || *end)
            return hy_fail(HY_ERR_INVALID_ARG, "PU list '%s': item '%s' is not cpu:N with N in [1, %d] or cuda:D", text,
                           item, HY_RT_TEAM_MAX_THREADS);
        if (*npu >= cap) return hy_fail(HY_ERR_INVALID_ARG, "PU list '%s': more than %d PUs", text, cap);
        pus[*npu].kind = cuda ? HY_RT_GPU : HY_RT_CPU;
        pus[*npu].threads = cuda ? 1 : (int)k;
        pus[*npu].device = cuda ? (int)k : -1;
        (*npu)++;
        p += n + (p[n] == ',');
    }
    if (!*npu) return hy_fail(HY_ERR_INVALID_ARG, "PU list '%s' names no PU", text);
    return HY_OK;
}

hy_status hy_rt_team_create(int npu, const int* threads, const char* policy, uint64_t seed, hy_rt_team** out) {
    if (!threads || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_team_create: NULL argument");
    if (npu < 1 || npu > HY_RT_MAX_PUS) return hy_fail(HY_ERR_INVALID_ARG, "team: %d PUs not in [1, %d]", npu, HY_RT_MAX_PUS);
    hy_rt_team_pu pus[HY_RT_MAX_PUS];
    for (int q = 0; q < npu; q++) pus[q] = (hy_rt_team_pu){HY_RT_CPU, threads[q], -1};
    return hy_rt_team_create_pus(npu, pus, policy, seed, out);
}

hy_status hy_rt_team_create_pus(int npu, const hy_rt_team_pu* pus, const char* policy, uint64_t seed,
                                hy_rt_team** out) {
    if (!pus || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_team_create_pus: NULL argument");
    *out = NULL;
    if (npu < 1 || npu > HY_RT_MAX_PUS) return hy_fail(HY_ERR_INVALID_ARG, "team: %d PUs not in [1, %d]", npu, HY_RT_MAX_PUS);
    int total = 0;
    for (int q = 0; q < npu; q++) {
        if (pus[q].threads < 1) return hy_fail(HY_ERR_INVALID_ARG, "team: PU %d has %d threads", q, pus[q].threads);
        if (pus[q].kind == HY_RT_GPU && (pus[q].threads != 1 || pus[q].device < -1))
            return hy_fail(HY_ERR_INVALID_ARG, "team: GPU PU %d has %d threads and device %d (one thread, device >= -1)",
                           q, pus[q].threads, pus[q].device);
        if (pus[q].kind != HY_RT_CPU && pus[q].kind != HY_RT_GPU)
            return hy_fail(HY_ERR_INVALID_ARG, "team: PU %d has kind %d", q, (int)pus[q].kind);
        total += pus[q].threads;
    }
    if (total > HY_RT_TEAM_MAX_THREADS)
        return hy_fail(HY_ERR_INVALID_ARG, "team: %d threads in all, at most %d", total, HY_RT_TEAM_MAX_THREADS);
    /* the PUs as the policies see them: host cores of speed = threads; GPUs
     * with a memory of their own behind a channel, their constants a prior */
    hy_rt_machine m;
    hy_rt_machine_init(&m, "team");
    hy_status s = HY_OK;
    for (int q = 0; q < npu && !s; q++) {
        char name[16];
        if (pus[q].kind == HY_RT_CPU) {
            snprintf(name, sizeof name, "cpu%d", q);
            s = hy_rt_machine_add_pu(&m, name, HY_RT_CPU, HY_RT_HOST, (double)pus[q].threads, 1e-6, NULL);
            continue;
        }
        if (pus[q].device >= 0) snprintf(name, sizeof name, "cuda%d", pus[q].device);
        else snprintf(name, sizeof name, "twin%d", q);
        int32_t mem = 0;
        s = hy_rt_memnet_add_memory(&m.net, name, &mem);
        if (!s) s = hy_rt_memnet_add_channel(&m.net, HY_RT_HOST, mem, HY_RT_TEAM_GPU_LATENCY, HY_RT_TEAM_GPU_BANDWIDTH);
        /* its copies in the GPU's memory where it has one, else host buffers */
        if (!s && pus[q].device >= 0) (void)hy_rt_memnet_set_device(&m.net, mem, pus[q].device);
        if (!s) s = hy_rt_machine_add_pu(&m, name, HY_RT_GPU, mem, HY_RT_TEAM_GPU_SPEED, HY_RT_TEAM_GPU_OVERHEAD, NULL);
    }
    hy_rt_team* t = s ? NULL : calloc(1, sizeof *t);
    if (!s && !t) s = hy_fail(HY_ERR_NOMEM, "out of memory creating a team");
    if (!s) s = hy_rt_sim_create(&m, policy, seed, &t->sim);
    if (s) {
        free(t);
        return s;
    }
    t->sim->real_gpus = 1;
    for (int q = 0; q < npu; q++) t->pu[q] = pus[q];
    t->rng = seed;
    pthread_mutex_init(&t->lock, NULL);
    pthread_cond_init(&t->work_cv, NULL);
    pthread_cond_init(&t->done_cv, NULL);
    for (int q = 0, i = 0; q < npu; q++)
        for (int k = 0; k < pus[q].threads; k++, i++) {
            t->args[i].team = t;
            t->args[i].pu = q;
            if (pthread_create(&t->tids[i], NULL, worker, &t->args[i])) {
                hy_rt_team_destroy(t);
                return hy_fail(HY_ERR_NOMEM, "team: could not start thread %d", i);
            }
            t->nthreads = i + 1;
        }
    *out = t;
    return HY_OK;
}

void hy_rt_team_destroy(hy_rt_team* t) {
    if (!t) return;
    pthread_mutex_lock(&t->lock);
    t->quit = 1;
    pthread_cond_broadcast(&t->work_cv);
    pthread_mutex_unlock(&t->lock);
    for (int i = 0; i < t->nthreads; i++) pthread_join(t->tids[i], NULL);
    pthread_mutex_destroy(&t->lock);
    pthread_cond_destroy(&t->work_cv);
    pthread_cond_destroy(&t->done_cv);
    hy_rt_sim_destroy(t->sim);
    hy_rt_queues_free(&t->q);
    free(t->ran_on);
    free(t->measured);
    free(t);
}

void hy_rt_team_set_trace(hy_rt_team* t, hy_rt_trace* tr) {
    t->trace = tr;
    t->sim->trace = tr; /* its map events; the tracks are named here */
    if (!tr) return;
    char name[64];
    for (int32_t q = 0; q < t->sim->m.npu; q++) {
        if (t->pu[q].kind == HY_RT_CPU)
            snprintf(name, sizeof name, "%s (%d threads)", t->sim->m.pu[q].name, t->pu[q].threads);
        else if (t->pu[q].device >= 0)
            snprintf(name, sizeof name, "%s (device %d)", t->sim->m.pu[q].name, t->pu[q].device);
        else
            snprintf(name, sizeof name, "%s (host twin)", t->sim->m.pu[q].name);
        hy_rt_trace_track(tr, q, name);
    }
    snprintf(name, sizeof name, "scheduler (%s)", t->sim->policy->name);
    hy_rt_trace_track(tr, t->sim->m.npu, name);
}

const hy_rt_sim* hy_rt_team_sim(const hy_rt_team* t) { return t->sim; }

/* Per-partition arrays for P partitions. */
static hy_status reserve(hy_rt_team* t, int32_t P) {
    if (P > t->cap_parts) {
        free(t->ran_on);
        free(t->measured);
        t->ran_on = malloc((size_t)P);
        t->measured = malloc((size_t)P * sizeof *t->measured);
        t->cap_parts = t->ran_on && t->measured ? P : 0;
    }
    if (t->cap_parts < P) return hy_fail(HY_ERR_NOMEM, "team: out of memory for %d partitions", P);
    return HY_OK;
}

hy_status hy_rt_team_run(hy_rt_team* t, hy_rt_graph* g, hy_rt_step_stats* stats) {
    if (!t || !g) return hy_fail(HY_ERR_INVALID_ARG, "hy_rt_team_run: NULL argument");
    int has_cpu = hy_rt_sim_count_kind(t->sim, HY_RT_CPU) > 0, has_gpu = hy_rt_sim_count_kind(t->sim, HY_RT_GPU) > 0;
    for (int32_t k = 0; k < g->ntasks; k++) {
        const hy_rt_kind* kind = g->tasks[k].kind;
        if (!(has_cpu && kind->cpu_fn) && !(has_gpu && kind->cuda_fn))
            return hy_fail(HY_ERR_UNSUPPORTED, "task %d (kind %s) has no %s implementation", k, kind->name,
                           has_gpu ? (has_cpu ? "CPU or CUDA" : "CUDA") : "CPU");
    }
    for (int32_t h = 0; h < g->nhandles; h++)
        if (!(g->handles[h].data.valid & (1u << HY_RT_HOST)))
            return hy_fail(HY_ERR_INVALID_ARG, "handle %d is not valid on the host", h);
    hy_rt_sim* s = t->sim;
    if (g->ntasks == 0) {
        memset(&s->stats, 0, sizeof s->stats);
        if (stats) *stats = s->stats;
        return HY_OK;
    }
    /* the workers are all waiting: the state is the caller's until the epoch moves */
    pthread_mutex_lock(&t->lock);
    t->origin = hy_rt_wall_seconds();
    if (t->trace) t->trace->base = t->origin - t->trace->clock0; /* the map's instant at the origin */
    hy_status st = hy_rt_sim_begin_step(s, g);
    int32_t n = g->ntasks, P = s->npart;
    if (!st) st = reserve(t, P);
    if (!st) st = hy_rt_queues_fill(&t->q, g, P);
    if (st) {
        pthread_mutex_unlock(&t->lock);
        return st;
    }
    memset(t->ran_on, 0, (size_t)P);
    memset(t->failed, 0, sizeof t->failed);
    t->error = HY_OK;
    for (int32_t p = 0; p < P; p++) t->measured[p] = 0;
    t->g = g;
    t->remaining = n;
    t->t0 = hy_rt_wall_seconds();
    t->epoch++;
    pthread_cond_broadcast(&t->work_cv);
    /* over when every task ran and every worker has left the run (a worker
     * may still be inside, about to see that nothing is left) */
    while (t->remaining > 0 || t->inside > 0) pthread_cond_wait(&t->done_cv, &t->lock);
    s->stats.makespan = hy_rt_wall_seconds() - t->t0;
    /* results back on the host (counted on the channels); the devices'
     * copies stay valid until written */
    st = t->error ? hy_fail(t->error, "%s", t->error_msg) : HY_OK;
    for (int32_t h = 0; h < g->nhandles && !st; h++) {
        void* ptr;
        st = hy_rt_data_acquire(&s->m.net, &g->handles[h].data, HY_RT_HOST, HY_RT_R, &ptr, NULL);
    }
    hy_rt_sim_end_step(s, g, t->ran_on, t->measured);
    if (stats) *stats = s->stats;
    pthread_mutex_unlock(&t->lock);
    return st;
}
