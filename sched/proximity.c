/* The hybrid proximity framework's run-time loop (see proximity.h).
 *
 * Queues hold ranges of job ids in FIFO order: TRAVERSE ids are front
 * indices, LEAF ids positions in the caller's list. A policy answers counts
 * per (resource, type); the jobs of a type are dealt out from the front of
 * the producer's outgoing queue to resources 0, 1, ... in turn, so the same
 * counts always give the same jobs.
 *
 * Why a discrete-event loop and not one host thread per resource: every
 * resource of this build computes on the same CPU cores (modeled devices by
 * definition; the caller's work functions run a cuda resource's batches as
 * blocking launches: hy_cuda_leaf_batch, hy_cuda_traverse_batch), so
 * threads per resource would only contend for those cores. The loop keeps
 * the framework's logic (queues, a scheduler call when a queue runs dry,
 * busy times, transfers) on one timeline and lets each batch use the whole
 * pool. */
#include "sched/proximity.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/error.h"
#include "sched/cuda.h"

typedef struct range {
    int64_t a, b;
} range;

typedef struct queue {
    range* v;
    int64_t head, n, cap; /* live ranges v[head .. n) */
    int64_t jobs;
} queue;

/* The sums learn_costs fits: batches, units, time, units², units·time,
 * copies, jobs. */
enum { L_N, L_X, L_Y, L_XX, L_XY, L_COPY, L_JOBS, LEARN_SUMS };

struct hy_prox {
    int R;
    hy_resource res[HY_SCHED_MAX_RESOURCES];
    hy_sched_model model;
    hy_sched_policy* policy;
    hy_sched_options options;
    hy_clock clock;
    int host; /* producer of the initial jobs: the first CPU resource, else 0 */
    /* queues */
    queue out[HY_SCHED_MAX_RESOURCES][HY_JOB_KINDS];
    queue in[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES];
    queue fly[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES]; /* assigned by the call in flight */
    int64_t launch[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES]; /* the policy's launch size (0: all) */
    queue batch; /* the jobs of the batch being started */
    /* the running batch per resource */
    int running[HY_SCHED_MAX_RESOURCES];
    double end[HY_SCHED_MAX_RESOURCES], last_end[HY_SCHED_MAX_RESOURCES];
    int64_t made_first[HY_SCHED_MAX_RESOURCES]; /* LEAF jobs the batch made: ids [first, first + made), */
    int64_t made[HY_SCHED_MAX_RESOURCES];       /* numbered when it ran, released at its end */
    int64_t* ids;
    int64_t ids_cap;
    int64_t leaf_next;
    double last_call; /* length of the last scheduler call, seconds */
    /* TRAVERSE jobs and their units of work over every run so far: the
     * model's mean units per TRAVERSE job (hy_sched_model.units) */
    int64_t seen_traverse_jobs, seen_traverse_work;
    /* Real clock: per real resource and job kind, sums over its batches of
     * their time less copies against their units of work, and of their
     * copies and jobs, older runs weighing less (LEARN_DECAY per run); the
     * calibrated profile the learned costs stay near. See learn_costs. */
    double learn[HY_SCHED_MAX_RESOURCES][HY_JOB_KINDS][LEARN_SUMS];
    hy_device_profile calibrated[HY_SCHED_MAX_RESOURCES];
    hy_prox_stats stats;
    hy_sched_problem prob;
    hy_sched_assignment a;
    /* trace */
    FILE* trace;
    char* trace_path; /* for messages */
    int trace_events;
    double trace_base;  /* where the next run starts on the trace's timeline, seconds */
    double trace_open_wall;
    /* what the device list asked for and did not get ("cuda" with no GPU):
     * one line for the caller to show, "" when everything was there */
    char fallback[192];
};

/* ---- queues */

static int queue_push(queue* q, int64_t a, int64_t b) {
    if (b <= a) return 1;
    if (q->n > q->head && q->v[q->n - 1].b == a) {
        q->v[q->n - 1].b = b;
    } else {
        if (q->n == q->cap) {
            if (q->head > 0) {
                memmove(q->v, q->v + q->head, sizeof(range) * (size_t)(q->n - q->head));
                q->n -= q->head;
                q->head = 0;
            }
            if (q->n == q->cap) {
                int64_t cap = q->cap ? 2 * q->cap : 16;
                range* v = realloc(q->v, sizeof(range) * (size_t)cap);
                if (!v) return 0;
                q->v = v;
                q->cap = cap;
            }
        }
        q->v[q->n++] = (range){a, b};
    }
    q->jobs += b - a;
    return 1;
}

/* Move the first `count` jobs of src to dst. */
static int queue_move(queue* src, queue* dst, int64_t count) {
    while (count > 0 && src->head < src->n) {
        range* r = &src->v[src->head];
        int64_t take = r->b - r->a < count ? r->b - r->a : count;
        if (!queue_push(dst, r->a, r->a + take)) return 0;
        r->a += take;
        src->jobs -= take;
        count -= take;
        if (r->a == r->b) src->head++;
    }
    if (src->head == src->n) src->head = src->n = 0;
    return 1;
}

static void queue_clear(queue* q) { q->head = q->n = q->jobs = 0; }

/* ---- device lists */

static hy_status parse_int(const char* s, int* out) {
    char* end = NULL;
    long v = strtol(s, &end, 10);
    if (!*s || *end || v < 0 || v > 1023) return HY_ERR_INVALID_ARG;
    *out = (int)v;
    return HY_OK;
}

/* Calls fn for every resource of the list; counts cuda devices once.
 * A plain "cuda" entry stands for every GPU present, so with none it adds
 * nothing: that is the one fallback, said in note[cap] when note is not
 * NULL. A numbered GPU ("cuda:7") names one device: when it is not there
 * the list is refused, as any other entry naming nothing would be. */
typedef hy_status (*entry_fn)(void* ctx, hy_resource_kind kind, int device, const char* arg, const char* token);

static hy_status each_entry(const char* devices, entry_fn fn, void* ctx, char* note, size_t cap) {
    const char* list = devices && *devices ? devices : "cpu";
    char buf[1024];
    if (strlen(list) >= sizeof buf) return hy_fail(HY_ERR_INVALID_ARG, "device list longer than %zu characters", sizeof buf - 1);
    strcpy(buf, list);
    if (note && cap) note[0] = '\0';
    char* save = NULL;
    for (char* tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ') tok++;
        hy_status s;
        if (!strcmp(tok, "cpu")) {
            s = fn(ctx, HY_RESOURCE_CPU, 0, NULL, tok);
        } else if (!strcmp(tok, "cuda")) {
            int n = hy_cuda_device_count();
            if (n == 0 && note && cap) snprintf(note, cap, "%s", hy_cuda_status());
            s = HY_OK;
            for (int d = 0; d < n && !s; d++) s = fn(ctx, HY_RESOURCE_CUDA, d, NULL, tok);
        } else if (!strncmp(tok, "cuda:", 5)) {
            int d = 0;
            if (parse_int(tok + 5, &d))
                return hy_fail(HY_ERR_INVALID_ARG, "device list: '%s': expected cuda:N with N a GPU index", tok);
            int n = hy_cuda_device_count();
            if (d >= n)
                return hy_fail(HY_ERR_INVALID_ARG, "device list: '%s': no such GPU (%d present; %s)", tok, n,
                               hy_cuda_status());
            s = fn(ctx, HY_RESOURCE_CUDA, d, NULL, tok);
        } else if (!strncmp(tok, "model:", 6) && tok[6]) {
            s = fn(ctx, HY_RESOURCE_MODEL, 0, tok + 6, tok);
        } else {
            return hy_fail(HY_ERR_INVALID_ARG,
                           "device list: unknown entry '%s' (expected cpu, cuda, cuda:N or model:NAME)", tok);
        }
        if (s) return s;
    }
    return HY_OK;
}

/* A real resource's name, as profiles and the stats know it: "cpu",
 * "cuda:N". */
static void real_name(hy_resource_kind kind, int device, char* buf, size_t cap) {
    if (kind == HY_RESOURCE_CPU)
        snprintf(buf, cap, "cpu");
    else
        snprintf(buf, cap, "cuda:%d", device);
}

typedef struct needs_ctx {
    hy_clock clock;
    int count, real;
    int real_kind[HY_SCHED_MAX_RESOURCES], real_device[HY_SCHED_MAX_RESOURCES]; /* the first real ones */
} needs_ctx;

/* Counts resources and checks every model: entry loads. */
static hy_status count_entry(void* vctx, hy_resource_kind kind, int device, const char* arg, const char* token) {
    needs_ctx* c = vctx;
    c->count++;
    if (kind != HY_RESOURCE_MODEL) {
        /* a repeated real resource is refused here, the one place it is
         * checked: hy_prox_create reads the list with this first, and a
         * run calls it before anything (a calibration) is done for it */
        for (int i = 0; i < c->real && i < HY_SCHED_MAX_RESOURCES; i++)
            if (c->real_kind[i] == (int)kind && (kind == HY_RESOURCE_CPU || c->real_device[i] == device)) {
                if (kind == HY_RESOURCE_CPU) return hy_fail(HY_ERR_INVALID_ARG, "device list: 'cpu' listed twice");
                return hy_fail(HY_ERR_INVALID_ARG, "device list: 'cuda:%d' listed twice", device);
            }
        if (c->real < HY_SCHED_MAX_RESOURCES) {
            c->real_kind[c->real] = (int)kind;
            c->real_device[c->real] = device;
        }
        c->real++;
        return HY_OK;
    }
    hy_device_profile d;
    size_t n = strlen(arg);
    hy_status s = n > 5 && !strcmp(arg + n - 5, ".json") ? hy_device_profile_load(arg, &d)
                                                           : hy_device_profile_builtin(arg, &d);
    if (s) hy_error_prefix("device list: '%s': ", token);
    return s;
}

int hy_prox_needs_profile(const char* devices, hy_clock clock) {
    needs_ctx c;
    memset(&c, 0, sizeof c);
    c.clock = clock;
    if (each_entry(devices, count_entry, &c, NULL, 0)) return -1;
    if (c.real == 0) return 0;
    return c.count > 1 || clock == HY_CLOCK_VIRTUAL;
}

typedef struct build_ctx {
    hy_prox* p;
    const hy_sched_model* profiles;
    int need_model;
} build_ctx;

/* A resource's profile from the calibrated set, by name. */
static const hy_device_profile* find_profile(const hy_sched_model* m, const char* name) {
    for (int i = 0; m && i < m->resources; i++)
        if (!strcmp(m->device[i].name, name)) return &m->device[i];
    return NULL;
}

int hy_prox_profile_missing(const char* devices, const hy_sched_model* profiles, char* name, size_t cap) {
    needs_ctx c;
    memset(&c, 0, sizeof c);
    if (each_entry(devices, count_entry, &c, NULL, 0)) return -1;
    for (int i = 0; i < c.real && i < HY_SCHED_MAX_RESOURCES; i++) {
        char want[64];
        real_name((hy_resource_kind)c.real_kind[i], c.real_device[i], want, sizeof want);
        if (!find_profile(profiles, want)) {
            if (name && cap) snprintf(name, cap, "%s", want);
            return 1;
        }
    }
    return 0;
}

static hy_status add_entry(void* vctx, hy_resource_kind kind, int device, const char* arg, const char* token) {
    build_ctx* c = vctx;
    hy_prox* p = c->p;
    if (p->R >= HY_SCHED_MAX_RESOURCES)
        return hy_fail(HY_ERR_INVALID_ARG, "device list: more than %d resources", HY_SCHED_MAX_RESOURCES);
    hy_resource* r = &p->res[p->R];
    memset(r, 0, sizeof *r);
    r->kind = kind;
    r->device = device;
    hy_device_profile d;
    memset(&d, 0, sizeof d);
    if (kind == HY_RESOURCE_MODEL) {
        size_t n = strlen(arg);
        hy_status s = n > 5 && !strcmp(arg + n - 5, ".json") ? hy_device_profile_load(arg, &d)
                                                               : hy_device_profile_builtin(arg, &d);
        if (s) {
            hy_error_prefix("device list: '%s': ", token);
            return s;
        }
        snprintf(r->name, sizeof r->name, "model:%s", d.name);
        r->modeled = 1;
    } else {
        real_name(kind, device, r->name, sizeof r->name);
        const hy_device_profile* prof = find_profile(c->profiles, r->name);
        if (prof) {
            d = *prof;
        } else if (c->need_model) {
            return hy_fail(HY_ERR_INVALID_ARG,
                           "resource '%s' has no calibrated profile (run `hyphys calibrate`); needed with more than "
                           "one resource or the virtual clock",
                           r->name);
        } else {
            snprintf(d.name, sizeof d.name, "%.47s", r->name);
            d.kind = kind == HY_RESOURCE_CPU ? HY_DEVICE_CPU : HY_DEVICE_GPU;
            d.cores = 1;
        }
        r->modeled = p->clock == HY_CLOCK_VIRTUAL;
    }
    hy_status s = hy_sched_model_add(&p->model, &d);
    if (s) return s;
    p->calibrated[p->R] = d;
    p->R++;
    return HY_OK;
}

hy_status hy_prox_create(const hy_prox_config* config, hy_prox** out) {
    if (!config || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_prox_create: NULL argument");
    *out = NULL;
    int need = hy_prox_needs_profile(config->devices, config->clock);
    if (need < 0) return HY_ERR_INVALID_ARG; /* the message is set */
    hy_prox* p = calloc(1, sizeof *p);
    if (!p) return hy_fail(HY_ERR_NOMEM, "out of memory for the proximity framework");
    p->clock = config->clock;
    p->options = config->options;
    hy_sched_model_init(&p->model);
    build_ctx c = {p, config->profiles, need};
    hy_status s = each_entry(config->devices, add_entry, &c, p->fallback, sizeof p->fallback);
    if (!s && p->R == 0) s = add_entry(&c, HY_RESOURCE_CPU, 0, NULL, "cpu");
    if (!s) s = hy_sched_policy_create(config->policy ? config->policy : "lp", &config->options, &p->policy);
    if (s) {
        hy_prox_destroy(p);
        return s;
    }
    p->host = 0;
    for (int i = 0; i < p->R; i++)
        if (p->res[i].kind == HY_RESOURCE_CPU || (p->res[i].kind == HY_RESOURCE_MODEL &&
                                                  p->model.device[i].kind == HY_DEVICE_CPU)) {
            p->host = i;
            break;
        }
    *out = p;
    return HY_OK;
}

void hy_prox_destroy(hy_prox* p) {
    if (!p) return;
    hy_prox_trace_close(p);
    hy_sched_policy_destroy(p->policy);
    for (int i = 0; i < HY_SCHED_MAX_RESOURCES; i++) {
        for (int k = 0; k < HY_JOB_KINDS; k++) free(p->out[i][k].v);
        for (int j = 0; j < HY_SCHED_MAX_TYPES; j++) {
            free(p->in[i][j].v);
            free(p->fly[i][j].v);
        }
    }
    free(p->batch.v);
    free(p->ids);
    free(p);
}

int hy_prox_resource_count(const hy_prox* p) { return p->R; }
const hy_resource* hy_prox_resource(const hy_prox* p, int r) { return r >= 0 && r < p->R ? &p->res[r] : NULL; }
const hy_sched_model* hy_prox_model(const hy_prox* p) { return &p->model; }
const char* hy_prox_policy_name(const hy_prox* p) { return p->policy->cls->name; }
hy_clock hy_prox_clock(const hy_prox* p) { return p->clock; }
const char* hy_prox_fallback(const hy_prox* p) { return p->fallback; }

void hy_prox_describe(const hy_prox* p, char* buf, size_t cap) {
    size_t n = (size_t)snprintf(buf, cap, "policy %s, %s clock, resources:", p->policy->cls->name,
                                p->clock == HY_CLOCK_VIRTUAL ? "virtual" : "real");
    for (int i = 0; i < p->R && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s %s%s", i ? "," : "", p->res[i].name,
                              p->res[i].modeled ? " (modeled)" : "");
}

hy_status hy_prox_set_policy(hy_prox* p, const char* name) {
    hy_sched_policy* np = NULL;
    hy_status s = hy_sched_policy_create(name, &p->options, &np);
    if (s) return s;
    hy_sched_policy_destroy(p->policy);
    p->policy = np;
    return HY_OK;
}

void hy_prox_stats_reset(hy_prox* p) { memset(&p->stats, 0, sizeof p->stats); }
const hy_prox_stats* hy_prox_stats_get(const hy_prox* p) { return &p->stats; }

/* ---- trace */

static void trace_event(hy_prox* p, const char* name, const char* cat, int tid, double start, double dur,
                        const char* args) {
    if (!p->trace) return;
    fprintf(p->trace,
            "%s\n{\"name\":\"%s\",\"cat\":\"%s\",\"ph\":\"X\",\"pid\":1,\"tid\":%d,\"ts\":%.3f,\"dur\":%.3f%s%s%s}",
            p->trace_events++ ? "," : "", name, cat, tid, 1e6 * (p->trace_base + start), 1e6 * dur,
            args ? ",\"args\":{" : "", args ? args : "", args ? "}" : "");
}

hy_status hy_prox_trace_open(hy_prox* p, const char* path) {
    hy_prox_trace_close(p);
    if (!path) return HY_OK;
    FILE* f = fopen(path, "w");
    if (!f) return hy_fail(HY_ERR_IO, "trace '%s': cannot open for writing: %s", path, strerror(errno));
    p->trace_path = strdup(path);
    if (!p->trace_path) {
        fclose(f);
        return hy_fail(HY_ERR_NOMEM, "trace '%s': out of memory", path);
    }
    p->trace = f;
    p->trace_events = 0;
    p->trace_base = 0.0;
    p->trace_open_wall = hy_sched_now();
    fprintf(f, "{\"displayTimeUnit\":\"ms\",\"otherData\":{\"clock\":\"%s\"},\"traceEvents\":[",
            p->clock == HY_CLOCK_VIRTUAL ? "virtual" : "real");
    for (int i = 0; i <= p->R; i++) {
        char name[96];
        if (i < p->R)
            snprintf(name, sizeof name, "%s%s", p->res[i].name, p->res[i].modeled ? " (modeled)" : "");
        else
            snprintf(name, sizeof name, "scheduler (%s)", p->policy->cls->name);
        fprintf(f, "%s\n{\"name\":\"thread_name\",\"ph\":\"M\",\"pid\":1,\"tid\":%d,\"args\":{\"name\":\"%s\"}}",
                p->trace_events++ ? "," : "", i, name);
    }
    return HY_OK;
}

hy_status hy_prox_trace_close(hy_prox* p) {
    if (!p->trace) return HY_OK;
    fprintf(p->trace, "\n]}\n");
    /* buffered writes fail at the flush (a full disk): fclose reports them */
    int bad = ferror(p->trace);
    int e = bad ? EIO : 0;
    if (fclose(p->trace) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    p->trace = NULL;
    hy_status s = bad ? hy_fail(HY_ERR_IO, "trace '%s': write failed: %s", p->trace_path, strerror(e)) : HY_OK;
    free(p->trace_path);
    p->trace_path = NULL;
    return s;
}

/* ---- the loop */

/* Expected time of the jobs waiting in i's incoming queue. */
static double queued_time(const hy_prox* p, int i) {
    double t = 0.0;
    for (int j = 0; j < 2 * p->R; j++) t += hy_sched_time_launched(&p->model, i, j, p->in[i][j].jobs, p->launch[i][j]);
    return t;
}

static int incoming_empty(const hy_prox* p, int i) {
    for (int j = 0; j < 2 * p->R; j++)
        if (p->in[i][j].jobs) return 0;
    return 1;
}

static int64_t outgoing_jobs(const hy_prox* p) {
    int64_t n = 0;
    for (int k = 0; k < p->R; k++) n += p->out[k][0].jobs + p->out[k][1].jobs;
    return n;
}

static hy_status call_scheduler(hy_prox* p, double t, double* dt) {
    int R = p->R, J = 2 * R;
    double w0 = hy_sched_now();
    hy_sched_problem_init(&p->prob, &p->model);
    for (int i = 0; i < R; i++) {
        double b = (p->running[i] ? p->end[i] - t : 0.0) + queued_time(p, i);
        p->prob.busy[i] = b > 0.0 ? b : 0.0;
        int wait = hy_sched_batches_stay_open(p->running[i], p->end[i] - t, p->last_call);
        for (int j = 0; j < J; j++) p->prob.open[i][j] = (uint8_t)(wait && p->in[i][j].jobs > 0);
    }
    for (int j = 0; j < J; j++) p->prob.jobs[j] = p->out[hy_job_type_producer(j)][hy_job_type_kind(j)].jobs;
    hy_status s = hy_sched_policy_assign(p->policy, &p->prob, &p->a);
    if (s) return s;
    for (int i = 0; i < R; i++)
        for (int j = 0; j < J; j++)
            if (p->a.count[i][j] > 0) p->launch[i][j] = p->a.launch[i][j];
    for (int j = 0; j < J; j++) {
        queue* src = &p->out[hy_job_type_producer(j)][hy_job_type_kind(j)];
        for (int i = 0; i < R; i++)
            if (!queue_move(src, &p->fly[i][j], p->a.count[i][j]))
                return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
    }
    double wall = hy_sched_now() - w0;
    *dt = p->clock == HY_CLOCK_VIRTUAL ? hy_sched_call_time(p->policy->cls->name, &p->prob, p->a.iterations) : wall;
    p->last_call = *dt;
    p->stats.calls++;
    p->stats.iterations += p->a.iterations;
    p->stats.sched_time += *dt;
    if (p->trace) {
        char args[160];
        snprintf(args, sizeof args, "\"policy\":\"%s\",\"iterations\":%d,\"expected_makespan_us\":%.3f",
                 p->policy->cls->name, p->a.iterations, 1e6 * p->a.makespan);
        trace_event(p, "schedule", "scheduler", R, t, *dt, args);
    }
    return HY_OK;
}

static hy_status deliver(hy_prox* p) {
    for (int i = 0; i < p->R; i++)
        for (int j = 0; j < 2 * p->R; j++) {
            queue* f = &p->fly[i][j];
            if (!queue_move(f, &p->in[i][j], f->jobs))
                return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
        }
    return HY_OK;
}

/* Start a batch on idle resource i: all its incoming jobs of one type (or
 * the first launch[i][j] of them, where the policy launches in chunks),
 * TRAVERSE types first. The work is done now; the timeline sees it end at
 * t + its cost. */
static hy_status start_batch(hy_prox* p, int i, double t, const hy_prox_work* work) {
    int J = 2 * p->R;
    for (int pass = 0; pass < HY_JOB_KINDS; pass++)
        for (int j = pass; j < J; j += 2) {
            int64_t n = p->in[i][j].jobs;
            if (n == 0) continue;
            if (p->launch[i][j] > 0 && n > p->launch[i][j]) n = p->launch[i][j];
            queue* q = &p->batch;
            queue_clear(q);
            if (!queue_move(&p->in[i][j], q, n))
                return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
            hy_job_kind kind = hy_job_type_kind(j);
            double w0 = hy_sched_now();
            hy_status s = HY_OK;
            int64_t made = 0, units = -1;
            if (work->transfer) *work->transfer = 0.0;
            if (kind == HY_JOB_TRAVERSE) {
                if (n > p->ids_cap) {
                    int64_t* ids = realloc(p->ids, sizeof(int64_t) * (size_t)n);
                    if (!ids) return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for %lld ids", (long long)n);
                    p->ids = ids;
                    p->ids_cap = n;
                }
                int64_t k = 0;
                for (int64_t r = q->head; r < q->n; r++)
                    for (int64_t id = q->v[r].a; id < q->v[r].b; id++) p->ids[k++] = id;
                s = work->traverse(work->ctx, i, p->ids, n, &made, &units);
                if (!s && made < 0) s = hy_fail(HY_ERR_INTERNAL, "proximity framework: negative LEAF count");
            } else {
                for (int64_t r = q->head; r < q->n && !s; r++)
                    s = work->leaf(work->ctx, i, q->v[r].a, q->v[r].b - q->v[r].a);
            }
            queue_clear(q);
            if (s) return s;
            double wall = hy_sched_now() - w0;
            if (units < 0) units = n; /* not reported (LEAF: one test a job) */
            double dt = p->res[i].modeled ? hy_sched_time_work(&p->model, i, j, n, (double)units) : wall;
            int k = hy_job_type_producer(j);
            double trans = p->res[i].modeled ? p->model.trans[i][j] * (double)n
                           : work->transfer && *work->transfer > 0.0 ? fmin(*work->transfer, dt)
                                                                     : 0.0;
            if (p->trace) {
                char args[160];
                if (t > p->last_end[i]) trace_event(p, "idle", "idle", i, p->last_end[i], t - p->last_end[i], NULL);
                snprintf(args, sizeof args, "\"jobs\":%lld,\"producer\":\"%s\",\"made\":%lld,\"work\":%lld",
                         (long long)n, p->res[k].name, (long long)made, (long long)units);
                if (trans > 0.0) trace_event(p, "transfer", "transfer", i, t, trans, args);
                trace_event(p, kind == HY_JOB_TRAVERSE ? "TRAVERSE" : "LEAF", "batch", i, t + trans, dt - trans, args);
            }
            p->running[i] = 1;
            p->end[i] = t + dt;
            p->made_first[i] = p->leaf_next;
            p->made[i] = made;
            p->leaf_next += made;
            if (!p->res[i].modeled) {
                double* L = p->learn[i][kind];
                double x = (double)units, y = dt - trans;
                L[L_N] += 1.0;
                L[L_X] += x;
                L[L_Y] += y;
                L[L_XX] += x * x;
                L[L_XY] += x * y;
                L[L_COPY] += trans;
                L[L_JOBS] += (double)n;
            }
            p->stats.busy[i] += dt;
            p->stats.transfer[i] += trans;
            p->stats.jobs[i][kind] += n;
            if (kind == HY_JOB_TRAVERSE) {
                p->stats.traverse_work += units;
                p->seen_traverse_jobs += n;
                p->seen_traverse_work += units;
            }
            p->stats.batches++;
            return HY_OK;
        }
    return HY_OK;
}

/* Under the real clock, the costs of the real resources follow what their
 * batches took. The calibration measures a folded cloth, but a test or a
 * node pair costs what the scene makes it cost (n-body's LEAF jobs are
 * mostly culled by the filters, a fold's reach the exact test), and a
 * batch's fixed cost what the step's batches make it; wrong ratios between
 * resources send the policy's jobs the wrong way. So setup(i, c) and
 * proc(i, c) are refitted, as `hyphys calibrate` fits them, by least
 * squares over i's batches of kind c (time less copies against units of
 * work) once LEARN_MIN_UNITS units are in (with batch sizes too alike for
 * a line, proc alone under the setup held): proc
 * within a factor LEARN_RANGE of the calibrated value, setup at most
 * LEARN_RANGE times it (or LEARN_SETUP_MAX); a staged GPU's upload becomes
 * its copies per job. Older runs weigh less (LEARN_DECAY per run), so the
 * costs follow a scene that changes. Results do not depend on it (a job's
 * outcome does not depend on where it runs); the virtual clock, whose
 * resources are all charged from their profiles, never learns. */
#define LEARN_MIN_UNITS 256.0
#define LEARN_RANGE 16.0
#define LEARN_SETUP_MAX 1e-3
#define LEARN_DECAY 0.5
static void learn_costs(hy_prox* p) {
    if (p->clock != HY_CLOCK_REAL) return;
    for (int i = 0; i < p->R; i++) {
        if (p->res[i].modeled) continue;
        for (int k = 0; k < HY_JOB_KINDS; k++) {
            double* L = p->learn[i][k];
            hy_device_costs* c = &p->model.device[i].cost[k];
            const hy_device_costs* cal = &p->calibrated[i].cost[k];
            double vx = L[L_N] * L[L_XX] - L[L_X] * L[L_X];
            if (L[L_X] >= LEARN_MIN_UNITS && cal->proc > 0.0) {
                double lo = cal->proc / LEARN_RANGE, hi = cal->proc * LEARN_RANGE;
                double cap = fmax(cal->setup * LEARN_RANGE, LEARN_SETUP_MAX);
                if (L[L_N] >= 2.0 && vx > 0.01 * L[L_N] * L[L_XX]) { /* sizes spread enough for a line */
                    double proc = (L[L_N] * L[L_XY] - L[L_X] * L[L_Y]) / vx;
                    double setup = (L[L_Y] - proc * L[L_X]) / L[L_N];
                    if (setup < 0.0) /* through the origin */
                        proc = L[L_XX] > 0.0 ? L[L_XY] / L[L_XX] : proc;
                    /* proc within its range, then the setup that keeps the
                     * line through the batches' mean, within its own */
                    c->proc = fmin(fmax(proc, lo), hi);
                    c->setup = fmin(fmax((L[L_Y] - c->proc * L[L_X]) / L[L_N], 0.0), cap);
                } else { /* batches nearly alike: keep the setup, fit proc */
                    double proc = (L[L_Y] - c->setup * L[L_N]) / L[L_X];
                    c->proc = fmin(fmax(proc, lo), hi);
                }
            }
            if (p->model.device[i].staged && L[L_JOBS] > 0.0) c->upload = L[L_COPY] / L[L_JOBS];
            for (int q = 0; q < LEARN_SUMS; q++) L[q] *= LEARN_DECAY;
        }
    }
}

hy_status hy_prox_run(hy_prox* p, int64_t traverse_jobs, const hy_prox_work* work) {
    if (!p || !work || !work->traverse || !work->leaf || traverse_jobs < 0)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_prox_run: bad argument");
    int R = p->R;
    for (int i = 0; i < R; i++) {
        p->running[i] = 0;
        p->end[i] = p->last_end[i] = 0.0;
        for (int k = 0; k < HY_JOB_KINDS; k++) queue_clear(&p->out[i][k]);
        for (int j = 0; j < 2 * R; j++) {
            queue_clear(&p->in[i][j]);
            queue_clear(&p->fly[i][j]);
        }
    }
    if (p->trace && p->clock == HY_CLOCK_REAL) p->trace_base = hy_sched_now() - p->trace_open_wall;
    p->leaf_next = 0;
    memset(p->launch, 0, sizeof p->launch);
    if (!queue_push(&p->out[p->host][HY_JOB_TRAVERSE], 0, traverse_jobs))
        return hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
    double t = 0.0, sched_end = 0.0;
    /* the front, made by the host before any job exists */
    if (work->front_work > 0 && p->res[p->host].modeled) {
        int j = hy_job_type(p->host, HY_JOB_TRAVERSE);
        t = hy_sched_time_work(&p->model, p->host, j, 1, (double)work->front_work);
        p->stats.busy[p->host] += t;
        p->stats.traverse_work += work->front_work;
        p->last_end[p->host] = t;
        if (p->trace) {
            char args[64];
            snprintf(args, sizeof args, "\"work\":%lld", (long long)work->front_work);
            trace_event(p, "front", "batch", p->host, 0.0, t, args);
        }
    }
    int in_flight = 0;
    hy_status s = HY_OK;
    for (;;) {
        if (in_flight && sched_end <= t) {
            s = deliver(p);
            if (s) break;
            in_flight = 0;
        }
        for (int i = 0; i < R && !s; i++)
            if (!p->running[i]) s = start_batch(p, i, t, work);
        if (s) break;
        if (!in_flight && outgoing_jobs(p) > 0) {
            int dry = 0;
            for (int i = 0; i < R; i++) dry |= incoming_empty(p, i);
            if (dry) {
                double dt = 0.0;
                s = call_scheduler(p, t, &dt);
                if (s) break;
                in_flight = 1;
                sched_end = t + dt;
                continue; /* deliver at once when the call took no time */
            }
        }
        /* next event */
        double next = INFINITY;
        for (int i = 0; i < R; i++)
            if (p->running[i] && p->end[i] < next) next = p->end[i];
        if (in_flight && sched_end < next) next = sched_end;
        if (next == INFINITY) break;
        t = next;
        for (int i = 0; i < R; i++) {
            if (!p->running[i] || p->end[i] > t) continue;
            p->running[i] = 0;
            p->last_end[i] = p->end[i];
            if (p->made[i] &&
                !queue_push(&p->out[i][HY_JOB_LEAF], p->made_first[i], p->made_first[i] + p->made[i])) {
                s = hy_fail(HY_ERR_NOMEM, "proximity framework: out of memory for queues");
                break;
            }
            p->made[i] = 0;
        }
        if (s) break;
    }
    if (!s && outgoing_jobs(p) > 0)
        s = hy_fail(HY_ERR_INTERNAL, "proximity framework: %lld jobs left unassigned", (long long)outgoing_jobs(p));
    if (s) return s;
    if (p->trace)
        for (int i = 0; i < R; i++)
            if (t > p->last_end[i]) trace_event(p, "idle", "idle", i, p->last_end[i], t - p->last_end[i], NULL);
    /* The next run's expected TRAVERSE cost: the mean units per job so
     * far (a pure function of the runs' counts: repeatable). */
    if (p->seen_traverse_jobs > 0)
        p->model.units[HY_JOB_TRAVERSE] = (double)p->seen_traverse_work / (double)p->seen_traverse_jobs;
    learn_costs(p);
    hy_sched_model_update(&p->model);
    p->stats.runs++;
    p->stats.makespan += t;
    if (p->clock == HY_CLOCK_VIRTUAL) p->trace_base += t;
    return HY_OK;
}
