/* Throughput of the scheduling policies on modeled machines, driven by job
 * streams recorded from real runs (the throughput half of `bench sched`).
 *
 * Streams: per scene, bench/sched_stream.c replays the recording that
 * `hyphys bench ccd` makes (recorded here the same way when missing) and
 * saves per frame and traversal round the TRAVERSE and LEAF job counts in
 * RECORD_DIR/NAME/jobs.csv; later runs read that file once its first two
 * frames are made again from the recording, the same (hy_job_stream_matches).
 *
 * Simulation: a discrete-event loop over a virtual clock, one frame at a
 * time, following the framework loop of Kim et al. 2013:
 *  - every resource has an incoming queue (jobs assigned to it) and an
 *    outgoing queue (jobs it produced, typed by producer: j = 2·k + kind);
 *  - a resource with incoming jobs runs them as batches, one batch per job
 *    type (all its waiting jobs of that type), TRAVERSE types first, and is
 *    busy for the model's T(i, j, n) = setup + (proc + trans)·n;
 *  - when a batch of TRAVERSE jobs of round r ends, the resource's outgoing
 *    queue receives its share of round r + 1: of the T(r+1) traverse and
 *    L(r+1) leaf jobs the whole round r makes, the jobs done so far in round
 *    r make floor(done·T(r+1)/T(r)) (and the same for L), counted over all
 *    resources, so each round's totals come out exactly as recorded (the
 *    recording has counts per round, not which node pair made which);
 *  - when a resource's incoming queue has run dry (its last batch has been
 *    taken out to run, or it is idle) and jobs wait in outgoing queues, the
 *    scheduler (its own thread, one call at a time) gathers every outgoing
 *    queue into a hy_sched_problem — busy_i = the resource's expected
 *    remaining work under the model — and the active policy splits it; the
 *    jobs reach the incoming queues when the call ends. Calling as soon as
 *    the queue is empty, not when the resource has stopped, lets a call
 *    overlap the last batch (waiting for idleness was tried: every policy
 *    then pays its call time on each of the ~50 rounds of a frame with all
 *    resources idle, lp's ~30 µs most: 15% idle on Machine 2). A call is charged its modeled time by default (below), or
 *    with `measured` its real wall time (then the output depends on this
 *    machine's load and is not repeatable);
 *  - the frame starts with the round-0 jobs (the BVH front) in resource 0's
 *    outgoing queue (the host made them) and every resource idle, and ends
 *    when no job is left anywhere; frame time = that makespan.
 * FPS = frames / Σ frame times; idle ratio of a resource = 1 - its busy time
 * / Σ frame times; setup share = the time its batches spent in their setups
 * / Σ frame times.
 *
 * Modeled scheduler call time: hy_sched_call_time (sched/policy.h), the
 * same charge the framework's virtual clock uses. lp's time-out compares
 * that modeled solving time, not the wall clock's, with the smallest
 * remaining busy time (lp_timeout 2), so runs repeat exactly; with the
 * time-out off lp's calls grow long enough to leave every resource idle a
 * part of each frame (figures: docs/PERFORMANCE.md).
 * Every call's wall time is measured as well; `--call-cost` compares it
 * with the charge, which is how the model's constants were fitted. */
#include "bench/sched_throughput.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/recording.h"
#include "bench/sched_stream.h"
#include "cli/cli.h"
#include "engine/error.h"
#include "engine/export.h"
#include "sched/policy.h"


static const char* const g_policies[] = {"lp", "ws", "ws-exp", "lau10", "tan09"};
#define POLICY_COUNT (int)(sizeof g_policies / sizeof g_policies[0])

/* ---- machines (Kim et al. Fig. 4 and Fig. 5 orders) */

typedef struct config {
    const char* machine;
    const char* name;
    const char* label;
    int index;
    hy_sched_model model;
} config;

/* One of Machine 2's two hexa-core CPUs: half of the built-in 12-core
 * "cpu-m2" aggregate (twice the per-job time, same hand-off cost). */
static hy_status hexa(int which, hy_device_profile* d) {
    hy_status s = hy_device_profile_builtin("cpu-m2", d);
    if (s) return s;
    snprintf(d->name, sizeof d->name, "cpu-m2-hexa%d", which);
    d->cores = 6;
    for (int c = 0; c < HY_JOB_KINDS; c++) d->cost[c].proc *= 2.0;
    return HY_OK;
}

static int make_configs(config* out) {
    static const char* m1[] = {"cpu-m1", "gtx285", "gtx480"};
    static const char* m1_names[] = {"CPU", "CPU+GTX285", "CPU+GTX285+GTX480"};
    static const char* m1_labels[] = {"C", "C+285", "C+285+480"};
    static const char* m2[] = {"hexa0", "hexa1", "gtx285", "c2075", "gtx480", "gtx580"};
    static const char* m2_names[] = {"CPU", "2CPU", "2CPU+GTX285", "2CPU+GTX285+C2075", "2CPU+GTX285+C2075+GTX480",
                                     "2CPU+GTX285+C2075+GTX480+GTX580"};
    static const char* m2_labels[] = {"1C", "2C", "+285", "+2075", "+480", "+580"};
    int n = 0;
    for (int k = 1; k <= 3; k++, n++) {
        config* c = &out[n];
        c->machine = "machine1";
        c->name = m1_names[k - 1];
        c->label = m1_labels[k - 1];
        c->index = k - 1;
        hy_sched_model_init(&c->model);
        for (int i = 0; i < k; i++) {
            hy_device_profile d;
            if (hy_device_profile_builtin(m1[i], &d) || hy_sched_model_add(&c->model, &d)) return -1;
        }
    }
    for (int k = 1; k <= 6; k++, n++) {
        config* c = &out[n];
        c->machine = "machine2";
        c->name = m2_names[k - 1];
        c->label = m2_labels[k - 1];
        c->index = k - 1;
        hy_sched_model_init(&c->model);
        for (int i = 0; i < k; i++) {
            hy_device_profile d;
            hy_status s = i < 2 ? hexa(i, &d) : hy_device_profile_builtin(m2[i], &d);
            if (s || hy_sched_model_add(&c->model, &d)) return -1;
        }
    }
    return n;
}
#define CONFIG_COUNT 9

/* ---- recordings and streams */

/* The stream of `frames` frames of a scene: from jobs.csv when it holds
 * enough frames at this thickness, else recorded (and the file rewritten). */
static int load_stream(const hy_tp_options* o, const char* scene, const char* name, hy_job_stream* out) {
    char dir[4096], path[4200];
    snprintf(dir, sizeof dir, "%s/%s", o->record_dir ? o->record_dir : "hyphys-recordings", name);
    snprintf(path, sizeof path, "%s/jobs.csv", dir);
    /* The stream is made from the recording: only one of the scene as it
     * is now is trusted (else the recording is made again, which removes
     * the stream). */
    int named = o->record_dir != NULL, fresh;
    int rc = hy_bench_recording_check(scene, dir, named, "hyphys bench sched", &fresh);
    if (rc) return rc;
    hy_job_stream s;
    hy_status st = fresh ? hy_job_stream_load(path, &s) : HY_ERR_IO;
    if (st == HY_OK && s.frames >= o->frames && s.thickness == o->thickness) {
        /* made by this build's pipeline? its first frames are made again */
        hy_recording two;
        int same = 0;
        hy_status ls = hy_recording_load(dir, 3, &two), cs = ls;
        if (cs == HY_OK) cs = hy_job_stream_matches(&s, &two, o->threads, &same);
        if (ls == HY_OK) hy_recording_free(&two);
        if (cs == HY_OK && same) {
            s.frames = (int32_t)o->frames; /* the first frames */
            *out = s;
            return HY_EXIT_OK;
        }
        if (cs == HY_OK)
            fprintf(stderr,
                    "hyphys bench sched: %s: its first frames differ from what this build's pipeline makes of the "
                    "recording (recording the stream again)\n",
                    path);
        else /* the recording's own check below says what happens to it */
            fprintf(stderr, "hyphys bench sched: %s\n", hy_last_error());
    }
    if (st == HY_OK) hy_job_stream_free(&s);
    else if (st != HY_ERR_IO) fprintf(stderr, "hyphys bench sched: %s (recording it again)\n", hy_last_error());

    hy_recording rec;
    int rrc = hy_bench_recording_checked(scene, dir, named, fresh, o->frames, o->threads, "hyphys bench sched", &rec);
    if (rrc) return rrc;
    fprintf(stderr, "recording the job stream of %s (%ld frames) into %s\n", name, o->frames, path);
    st = hy_job_stream_record(&rec, (int32_t)o->frames, o->thickness, o->threads, out);
    hy_recording_free(&rec);
    if (st) {
        fprintf(stderr, "hyphys bench sched: %s: %s\n", name, hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    if (hy_job_stream_save(out, path)) fprintf(stderr, "hyphys bench sched: warning: %s\n", hy_last_error());
    return HY_EXIT_OK;
}

/* ---- the simulation */

typedef struct sim {
    const hy_sched_model* M;
    hy_sched_policy* policy;
    int measured;
    int R, J, D;     /* resources, types, rounds of this frame (+1 slot) */
    int64_t* in;     /* [i][j][r] jobs assigned to i */
    int64_t* out;    /* [i][j][r] jobs produced by i (only j of producer i) */
    int64_t* fly;    /* [i][j][r] assigned by the call in flight */
    int64_t* run;    /* [i][r] the running batch's jobs by round */
    const hy_job_round* rounds;
    int64_t* done;   /* [r] traverse jobs of round r finished (all resources) */
    int running[HY_SCHED_MAX_RESOURCES];
    int run_type[HY_SCHED_MAX_RESOURCES];
    int64_t launch[HY_SCHED_MAX_RESOURCES][HY_SCHED_MAX_TYPES]; /* the policy's launch size (0: all) */
    double end[HY_SCHED_MAX_RESOURCES];
    double busy[HY_SCHED_MAX_RESOURCES];  /* accumulated over frames */
    double setup[HY_SCHED_MAX_RESOURCES]; /* the part of busy spent in batch setups */
    double transfer[HY_SCHED_MAX_RESOURCES]; /* the part of busy spent moving jobs another resource made */
    double sched_until;
    double last_call; /* duration of the last scheduler call */
    int sched_busy;
    int64_t calls;
    double sched_time;
    double call_wall; /* Σ the policy's measured wall time per call */
    double by_types[HY_SCHED_MAX_TYPES + 1][3]; /* per active-type count: calls, Σ wall, Σ charge (µs) */
    hy_sched_problem prob;
    hy_sched_assignment a;
} sim;

static inline int64_t* at(const sim* s, int64_t* q, int i, int j, int r) {
    return &q[((int64_t)i * s->J + j) * s->D + r];
}

static int64_t type_total(const sim* s, int64_t* q, int i, int j) {
    int64_t n = 0;
    for (int r = 0; r < s->D; r++) n += *at(s, q, i, j, r);
    return n;
}

static int64_t queue_total(const sim* s, int64_t* q, int i) {
    int64_t n = 0;
    for (int j = 0; j < s->J; j++) n += type_total(s, q, i, j);
    return n;
}

/* Start a batch on idle resource i if its incoming queue has jobs: all its
 * jobs of one type, or the policy's launch size of them, earliest rounds
 * first. */
static void start_batch(sim* s, int i, double t) {
    for (int pass = 0; pass < 2; pass++)
        for (int j = pass; j < s->J; j += 2) {
            int64_t n = type_total(s, s->in, i, j);
            if (n == 0) continue;
            if (s->launch[i][j] > 0 && n > s->launch[i][j]) n = s->launch[i][j];
            int64_t left = n;
            for (int r = 0; r < s->D; r++) {
                int64_t* q = at(s, s->in, i, j, r);
                int64_t take = *q < left ? *q : left;
                s->run[(int64_t)i * s->D + r] = take;
                *q -= take;
                left -= take;
            }
            double dt = hy_sched_time(s->M, i, j, n);
            s->running[i] = 1;
            s->run_type[i] = j;
            s->end[i] = t + dt;
            s->busy[i] += dt;
            s->setup[i] += s->M->setup[i][j];
            s->transfer[i] += s->M->trans[i][j] * (double)n;
            return;
        }
}

/* Batch on i ends: traverse jobs make their share of the next round. */
static void end_batch(sim* s, int i) {
    s->running[i] = 0;
    int j = s->run_type[i];
    for (int r = 0; r < s->D; r++) {
        int64_t k = s->run[(int64_t)i * s->D + r];
        s->run[(int64_t)i * s->D + r] = 0;
        if (k == 0 || hy_job_type_kind(j) != HY_JOB_TRAVERSE) continue;
        int64_t T = s->rounds[r].traverse;
        int64_t before = s->done[r], after = before + k;
        s->done[r] = after;
        if (r + 1 >= s->D - 1 || T <= 0) continue;
        /* products stay far below 2^63: counts per round are < 2^31 */
        int64_t nt = s->rounds[r + 1].traverse, nl = s->rounds[r + 1].leaf;
        int64_t add_t = after * nt / T - before * nt / T;
        int64_t add_l = after * nl / T - before * nl / T;
        *at(s, s->out, i, hy_job_type(i, HY_JOB_TRAVERSE), r + 1) += add_t;
        *at(s, s->out, i, hy_job_type(i, HY_JOB_LEAF), 0) += add_l;
    }
}

static double modeled_call(const sim* s) {
    return hy_sched_call_time(s->policy->cls, &s->prob, s->a.iterations);
}

static hy_status call_scheduler(sim* s, double t) {
    hy_sched_problem_init(&s->prob, s->M);
    for (int i = 0; i < s->R; i++) {
        double b = s->running[i] ? s->end[i] - t : 0.0;
        int wait = hy_sched_batches_stay_open(s->running[i], s->end[i] - t, s->last_call);
        for (int j = 0; j < s->J; j++) {
            int64_t n = type_total(s, s->in, i, j);
            b += hy_sched_time_launched(s->M, i, j, n, s->launch[i][j]);
            s->prob.open[i][j] = (uint8_t)(wait && n > 0);
        }
        s->prob.busy[i] = b > 0 ? b : 0.0;
    }
    for (int j = 0; j < s->J; j++) s->prob.jobs[j] = type_total(s, s->out, hy_job_type_producer(j), j);
    s->prob.next_round = 1; /* a round's node pairs make the next round's */
    double t0 = hy_cli_now();
    hy_status st = hy_sched_policy_assign(s->policy, &s->prob, &s->a);
    double wall = hy_cli_now() - t0;
    if (st) return st;
    for (int i = 0; i < s->R; i++)
        for (int j = 0; j < s->J; j++)
            if (s->a.count[i][j] > 0) s->launch[i][j] = s->a.launch[i][j];
    /* hand out each type's jobs, earliest rounds first, resources in order */
    for (int j = 0; j < s->J; j++) {
        int k = hy_job_type_producer(j), r = 0;
        for (int i = 0; i < s->R; i++) {
            int64_t want = s->a.count[i][j];
            while (want > 0) {
                int64_t* src = at(s, s->out, k, j, r);
                if (*src == 0) {
                    r++;
                    continue;
                }
                int64_t take = *src < want ? *src : want;
                *src -= take;
                *at(s, s->fly, i, j, r) += take;
                want -= take;
            }
        }
    }
    double dt = s->measured ? wall : modeled_call(s);
    s->call_wall += wall;
    s->sched_busy = 1;
    s->sched_until = t + dt;
    s->last_call = dt;
    s->calls++;
    s->sched_time += dt;
    int types = hy_sched_problem_types(&s->prob);
    s->by_types[types][0] += 1;
    s->by_types[types][1] += 1e6 * wall;
    s->by_types[types][2] += 1e6 * dt;
    return HY_OK;
}

/* One frame; returns its makespan in *frame. */
static hy_status sim_frame(sim* s, const hy_job_round* rounds, int nrounds, double* frame) {
    s->rounds = rounds;
    s->D = nrounds + 1; /* one spare slot: no round past the last is ever filled */
    size_t q = (size_t)s->R * (size_t)s->J * (size_t)s->D;
    s->in = calloc(q, sizeof(int64_t));
    s->out = calloc(q, sizeof(int64_t));
    s->fly = calloc(q, sizeof(int64_t));
    s->run = calloc((size_t)s->R * (size_t)s->D, sizeof(int64_t));
    s->done = calloc((size_t)s->D, sizeof(int64_t));
    if (!s->in || !s->out || !s->fly || !s->run || !s->done) {
        free(s->in);
        free(s->out);
        free(s->fly);
        free(s->run);
        free(s->done);
        return hy_fail(HY_ERR_NOMEM, "simulation: out of memory");
    }
    for (int i = 0; i < s->R; i++) s->running[i] = 0;
    s->sched_busy = 0;
    if (nrounds > 0) *at(s, s->out, 0, hy_job_type(0, HY_JOB_TRAVERSE), 0) = rounds[0].traverse;
    double t = 0.0;
    hy_status st = HY_OK;
    for (;;) {
        for (int i = 0; i < s->R; i++)
            if (!s->running[i]) start_batch(s, i, t);
        if (!s->sched_busy) {
            int dry = 0;
            int64_t waiting = 0;
            for (int i = 0; i < s->R; i++) {
                dry |= queue_total(s, s->in, i) == 0;
                waiting += queue_total(s, s->out, i);
            }
            if (dry && waiting > 0 && (st = call_scheduler(s, t))) break;
        }
        double next = INFINITY;
        for (int i = 0; i < s->R; i++)
            if (s->running[i] && s->end[i] < next) next = s->end[i];
        if (s->sched_busy && s->sched_until < next) next = s->sched_until;
        if (isinf(next)) break;
        t = next;
        for (int i = 0; i < s->R; i++)
            if (s->running[i] && s->end[i] == t) end_batch(s, i);
        if (s->sched_busy && s->sched_until == t) {
            s->sched_busy = 0;
            for (size_t k = 0; k < q; k++) {
                s->in[k] += s->fly[k];
                s->fly[k] = 0;
            }
        }
    }
    if (!st)
        for (int i = 0; i < s->R; i++)
            if (queue_total(s, s->in, i) || queue_total(s, s->out, i))
                st = hy_fail(HY_ERR_INTERNAL, "simulation: jobs left on resource %d at the end of a frame", i);
    *frame = t;
    free(s->in);
    free(s->out);
    free(s->fly);
    free(s->run);
    free(s->done);
    s->in = s->out = s->fly = s->run = s->done = NULL;
    return st;
}

/* ---- the fluid bound
 *
 * Shortest time T in which the resources could process nt TRAVERSE and nl
 * LEAF jobs at their per-job processing costs, splitting either kind
 * anywhere: T is feasible when, giving TRAVERSE work first to the resources
 * relatively fastest at it (smallest proc_traverse / proc_leaf), all of it
 * fits in T and the time left holds the LEAF jobs (with two kinds that
 * order is optimal). Bisection on T. */
static int fluid_fits(const hy_sched_model* M, const int* order, double T, double nt, double nl) {
    double cap_leaf = 0;
    for (int q = 0; q < M->resources; q++) {
        const hy_device_profile* d = &M->device[order[q]];
        double ct = d->cost[HY_JOB_TRAVERSE].proc, cl = d->cost[HY_JOB_LEAF].proc;
        double t = nt > 0 ? (ct > 0 ? fmin(nt, T / ct) : nt) : 0;
        nt -= t;
        double rest = T - t * ct;
        cap_leaf += cl > 0 ? rest / cl : INFINITY;
    }
    return nt <= 0 && cap_leaf >= nl;
}

static double fluid_bound(const hy_sched_model* M, int64_t nt, int64_t nl) {
    int order[HY_SCHED_MAX_RESOURCES], R = M->resources;
    for (int i = 0; i < R; i++) {
        const hy_device_profile* d = &M->device[i];
        double key = d->cost[HY_JOB_TRAVERSE].proc / d->cost[HY_JOB_LEAF].proc;
        int p = i;
        while (p > 0) {
            const hy_device_profile* e = &M->device[order[p - 1]];
            if (e->cost[HY_JOB_TRAVERSE].proc / e->cost[HY_JOB_LEAF].proc <= key) break;
            order[p] = order[p - 1];
            p--;
        }
        order[p] = i;
    }
    /* an upper end: everything on resource 0 */
    double hi = M->device[0].cost[HY_JOB_TRAVERSE].proc * (double)nt + M->device[0].cost[HY_JOB_LEAF].proc * (double)nl;
    double lo = 0;
    for (int it = 0; it < 100 && hi > 0; it++) {
        double mid = 0.5 * (lo + hi);
        if (fluid_fits(M, order, mid, (double)nt, (double)nl))
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}

/* 0 when a configuration could do a frame in no time (free resources). */
static double fluid_bound_fps(const hy_job_stream* js, const hy_sched_model* M) {
    double total = 0;
    for (int32_t f = 0; f < js->frames; f++) {
        int64_t nt = 0, nl = 0;
        for (int32_t r = js->first[f]; r < js->first[f + 1]; r++) {
            nt += js->rounds[r].traverse;
            nl += js->rounds[r].leaf;
        }
        total += fluid_bound(M, nt, nl);
    }
    return total > 0 ? (double)js->frames / total : 0.0;
}

static hy_status simulate(const hy_job_stream* js, const config* c, const char* policy, int measured, hy_tp_row* row) {
    sim* s = calloc(1, sizeof *s);
    if (!s) return hy_fail(HY_ERR_NOMEM, "simulation: out of memory");
    s->M = &c->model;
    s->R = c->model.resources;
    s->J = 2 * s->R;
    s->measured = measured;
    hy_sched_options o;
    hy_sched_options_default(&o);
    o.lp_timeout = 2; /* modeled solving time: the wall clock must not steer a virtual-clock run */
    hy_status st = hy_sched_policy_create(policy, &o, &s->policy);
    double total = 0.0;
    for (int32_t f = 0; f < js->frames && !st; f++) {
        double ft = 0.0;
        st = sim_frame(s, js->rounds + js->first[f], js->first[f + 1] - js->first[f], &ft);
        total += ft;
    }
    if (!st) {
        double n = (double)js->frames;
        row->fps = total > 0 ? n / total : 0.0;
        row->frame_ms = 1e3 * total / n;
        row->calls = (double)s->calls / n;
        row->sched_ms = 1e3 * s->sched_time / n;
        row->call_us_measured = s->calls ? 1e6 * s->call_wall / (double)s->calls : 0.0;
        memcpy(row->by_types, s->by_types, sizeof row->by_types);
        row->resources = s->R;
        for (int i = 0; i < s->R; i++) {
            snprintf(row->resource[i], sizeof row->resource[i], "%s", c->model.device[i].name);
            row->idle[i] = total > 0 ? 1.0 - s->busy[i] / total : 0.0;
            row->setup[i] = total > 0 ? s->setup[i] / total : 0.0;
            row->transfer[i] = total > 0 ? s->transfer[i] / total : 0.0;
        }
    }
    hy_sched_policy_destroy(s->policy);
    free(s);
    return st;
}

int hy_tp_run(const hy_tp_options* o, hy_tp_row** rows_out, int* count_out) {
    *rows_out = NULL;
    *count_out = 0;
    static config configs[CONFIG_COUNT];
    if (make_configs(configs) != CONFIG_COUNT) {
        fprintf(stderr, "hyphys bench sched: machine models: %s\n", hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    int total = o->scene_count * CONFIG_COUNT * POLICY_COUNT, n = 0;
    hy_tp_row* rows = calloc((size_t)(total > 0 ? total : 1), sizeof *rows);
    if (!rows) return HY_EXIT_RUNTIME;
    for (int sc = 0; sc < o->scene_count; sc++) {
        char name[64];
        hy_bench_scene_name(o->scenes[sc], name, sizeof name);
        hy_job_stream js;
        int rc = load_stream(o, o->scenes[sc], name, &js);
        if (rc) {
            free(rows);
            return rc;
        }
        for (int c = 0; c < CONFIG_COUNT; c++) {
            double bound = fluid_bound_fps(&js, &configs[c].model); /* the same for every policy */
            for (int p = 0; p < POLICY_COUNT; p++) {
                hy_tp_row* r = &rows[n];
                r->bound_fps = bound;
                snprintf(r->scene, sizeof r->scene, "%s", name);
                r->machine = configs[c].machine;
                snprintf(r->config, sizeof r->config, "%s", configs[c].name);
                r->label = configs[c].label;
                r->config_index = configs[c].index;
                r->policy = g_policies[p];
                if (simulate(&js, &configs[c], g_policies[p], o->measured, r)) {
                    fprintf(stderr, "hyphys bench sched: %s, %s %s, %s: %s\n", name, r->machine, r->config,
                            r->policy, hy_last_error());
                    hy_job_stream_free(&js);
                    free(rows);
                    return HY_EXIT_RUNTIME;
                }
                n++;
            }
        }
        hy_job_stream_free(&js);
    }
    *rows_out = rows;
    *count_out = n;
    return HY_EXIT_OK;
}

/* ---- output */

void hy_tp_print_json(FILE* f, const hy_tp_row* rows, int count) {
    for (int k = 0; k < count; k++) {
        const hy_tp_row* r = &rows[k];
        fprintf(f,
                "%s{\"scene\":\"%s\",\"machine\":\"%s\",\"config\":\"%s\",\"policy\":\"%s\",\"fps\":%.6g,"
                "\"frame_ms\":%.6g,\"sched_calls_per_frame\":%.6g,\"sched_ms_per_frame\":%.6g,"
                "\"fluid_bound_fps\":%.6g,\"idle\":{",
                k ? "," : "", r->scene, r->machine, r->config, r->policy, r->fps, r->frame_ms, r->calls,
                r->sched_ms, r->bound_fps);
        for (int i = 0; i < r->resources; i++) fprintf(f, "%s\"%s\":%.4f", i ? "," : "", r->resource[i], r->idle[i]);
        fprintf(f, "},\"setup\":{");
        for (int i = 0; i < r->resources; i++) fprintf(f, "%s\"%s\":%.4f", i ? "," : "", r->resource[i], r->setup[i]);
        fprintf(f, "},\"transfer\":{");
        for (int i = 0; i < r->resources; i++)
            fprintf(f, "%s\"%s\":%.4f", i ? "," : "", r->resource[i], r->transfer[i]);
        fprintf(f, "}}");
    }
}

/* FPS of (scene, machine, config index, policy); 0 when absent. */
static double fps_of(const hy_tp_row* rows, int count, const char* scene, const char* machine, int cfg,
                     const char* policy) {
    for (int k = 0; k < count; k++)
        if (!strcmp(rows[k].scene, scene) && !strcmp(rows[k].machine, machine) && rows[k].config_index == cfg &&
            !strcmp(rows[k].policy, policy))
            return rows[k].fps;
    return 0.0;
}

typedef struct targets {
    int scenes;
    double lp_over[POLICY_COUNT]; /* mean over scenes of lp / policy FPS, Machine 2 all six */
    int lp_monotonic;             /* lp FPS never falls when a resource is added (both machines, all scenes) */
    char first_fall[160];
} targets;

static void compute_targets(const hy_tp_row* rows, int count, targets* t) {
    memset(t, 0, sizeof *t);
    t->lp_monotonic = 1;
    const char* seen[64];
    for (int k = 0; k < count; k++) {
        int dup = 0;
        for (int s = 0; s < t->scenes; s++) dup |= !strcmp(seen[s], rows[k].scene);
        if (!dup && t->scenes < 64) seen[t->scenes++] = rows[k].scene;
    }
    for (int s = 0; s < t->scenes; s++) {
        double lp = fps_of(rows, count, seen[s], "machine2", 5, "lp");
        for (int p = 0; p < POLICY_COUNT; p++) {
            double x = fps_of(rows, count, seen[s], "machine2", 5, g_policies[p]);
            t->lp_over[p] += x > 0 ? lp / x / t->scenes : 0.0;
        }
        static const char* machines[2] = {"machine1", "machine2"};
        static const int sizes[2] = {3, 6};
        for (int m = 0; m < 2; m++)
            for (int c = 1; c < sizes[m]; c++) {
                double a = fps_of(rows, count, seen[s], machines[m], c - 1, "lp");
                double b = fps_of(rows, count, seen[s], machines[m], c, "lp");
                if (b < a && t->lp_monotonic) {
                    t->lp_monotonic = 0;
                    snprintf(t->first_fall, sizeof t->first_fall, "%s %s: config %d -> %d: %.3f -> %.3f fps", seen[s],
                             machines[m], c - 1, c, a, b);
                }
            }
    }
}

void hy_tp_print_targets_json(FILE* f, const hy_tp_row* rows, int count) {
    targets t;
    compute_targets(rows, count, &t);
    fprintf(f, "{\"lp_over_ws\":%.4f,\"lp_over_ws_exp\":%.4f,\"lp_over_lau10\":%.4f,\"lp_over_tan09\":%.4f,"
               "\"lp_monotonic\":%s}",
            t.lp_over[1], t.lp_over[2], t.lp_over[3], t.lp_over[4], t.lp_monotonic ? "true" : "false");
}

/* Per policy and |R|, over every row: the mean wall time of a policy call
 * on this machine against the mean time the simulation charged for it
 * (modeled: hy_sched_call_time, whose 2 µs for gathering the queues and
 * handing the jobs out the bench does not time). How the call-time model
 * is checked and calibrated (docs/PERFORMANCE.md). */
static void print_call_cost(FILE* f, const hy_tp_row* rows, int count) {
    fprintf(f, "\nscheduler call cost per policy and |R|, mean over the rows' calls (calls: per frame, summed over the rows;\nmeasured: the policy's own wall time on this machine; charged: what the simulation charged)\n");
    fprintf(f, "%-7s %4s %9s %12s %12s\n", "policy", "|R|", "calls", "measured_us", "charged_us");
    for (int k = 0; k < count; k++) {
        int seen = 0;
        for (int q = 0; q < k && !seen; q++)
            seen = !strcmp(rows[q].policy, rows[k].policy) && rows[q].resources == rows[k].resources;
        if (seen) continue;
        double n = 0, wall = 0, charged = 0;
        for (int q = k; q < count; q++) {
            if (strcmp(rows[q].policy, rows[k].policy) || rows[q].resources != rows[k].resources) continue;
            n += rows[q].calls;
            wall += rows[q].calls * rows[q].call_us_measured;
            charged += 1e3 * rows[q].sched_ms; /* charged per frame, µs */
        }
        if (n > 0) fprintf(f, "%-7s %4d %9.1f %12.3f %12.3f\n", rows[k].policy, rows[k].resources, n, wall / n, charged / n);
    }
    /* the same calls at |R| = 6 by the number of types with jobs (the
     * model's T): the charge should follow the measurement in both */
    fprintf(f, "\nthe same at |R| = 6 per policy and T, the types with jobs in the call (calls: over the run, summed over the rows)\n");
    fprintf(f, "%-7s %4s %9s %12s %12s\n", "policy", "T", "calls", "measured_us", "charged_us");
    for (int k = 0; k < count; k++) {
        int seen = 0;
        for (int q = 0; q < k && !seen; q++) seen = !strcmp(rows[q].policy, rows[k].policy);
        if (seen) continue;
        for (int t = 0; t <= HY_SCHED_MAX_TYPES; t++) {
            double n = 0, wall = 0, charged = 0;
            for (int q = k; q < count; q++) {
                if (strcmp(rows[q].policy, rows[k].policy) || rows[q].resources != 6) continue;
                n += rows[q].by_types[t][0];
                wall += rows[q].by_types[t][1];
                charged += rows[q].by_types[t][2];
            }
            if (n > 0) fprintf(f, "%-7s %4d %9.0f %12.3f %12.3f\n", rows[k].policy, t, n, wall / n, charged / n);
        }
    }
}

void hy_tp_print_text(FILE* f, const hy_tp_row* rows, int count, const hy_tp_options* o) {
    fprintf(f, "modeled throughput: %ld recorded frames per scene, virtual clock, scheduler calls charged %s\n",
            o->frames, o->measured ? "their measured wall time" : "their modeled time");
    fprintf(f, "%-11s %-8s %-32s %-7s %9s %9s %9s %7s %6s %6s  %s\n", "scene", "machine", "config", "policy", "fps",
            "bound", "frame_ms", "calls", "setup", "trans", "idle per resource");
    for (int k = 0; k < count; k++) {
        const hy_tp_row* r = &rows[k];
        double su = 0, tr = 0;
        for (int i = 0; i < r->resources; i++) {
            su += r->setup[i] / r->resources;
            tr += r->transfer[i] / r->resources;
        }
        fprintf(f, "%-11s %-8s %-32s %-7s %9.3f %9.3f %9.3f %7.1f %6.2f %6.2f ", r->scene, r->machine, r->config,
                r->policy, r->fps, r->bound_fps, r->frame_ms, r->calls, su, tr);
        for (int i = 0; i < r->resources; i++) fprintf(f, " %s=%.2f", r->resource[i], r->idle[i]);
        fprintf(f, "\n");
    }
    targets t;
    compute_targets(rows, count, &t);
    fprintf(f, "\nMachine 2, all six resources, mean over %d scene(s): lp/ws %.3f (target >= 1.2), "
               "lp/ws-exp %.3f, lp/lau10 %.3f, lp/tan09 %.3f (targets >= 1.4)\n",
            t.scenes, t.lp_over[1], t.lp_over[2], t.lp_over[3], t.lp_over[4]);
    if (t.lp_monotonic)
        fprintf(f, "lp FPS never falls when a resource is added: yes\n");
    else
        fprintf(f, "lp FPS never falls when a resource is added: NO (first: %s)\n", t.first_fall);
    if (o->call_cost) print_call_cost(f, rows, count);
}

static void csv_field(FILE* f, const char* s) { fprintf(f, "\"%s\"", s); }

int hy_tp_write_csv(const char* path, const hy_tp_row* rows, int count) {
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char* slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        if (!hy_cli_make_dirs(dir, 0, "hyphys bench sched")) return 0;
    }
    FILE* f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "hyphys bench sched: %s: cannot open for writing\n", path);
        return 0;
    }
    fprintf(f, "scene,machine,config,resources,policy,fps,frame_ms,sched_calls_per_frame,idle,setup,fluid_bound_fps,"
               "transfer\n");
    for (int k = 0; k < count; k++) {
        const hy_tp_row* r = &rows[k];
        fprintf(f, "%s,%s,", r->scene, r->machine);
        csv_field(f, r->config);
        fprintf(f, ",%d,%s,%.6g,%.6g,%.6g,\"", r->resources, r->policy, r->fps, r->frame_ms, r->calls);
        for (int i = 0; i < r->resources; i++) fprintf(f, "%s%s=%.4f", i ? " " : "", r->resource[i], r->idle[i]);
        fprintf(f, "\",\"");
        for (int i = 0; i < r->resources; i++) fprintf(f, "%s%s=%.4f", i ? " " : "", r->resource[i], r->setup[i]);
        fprintf(f, "\",%.6g,\"", r->bound_fps);
        for (int i = 0; i < r->resources; i++) fprintf(f, "%s%s=%.4f", i ? " " : "", r->resource[i], r->transfer[i]);
        fprintf(f, "\"\n");
    }
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad) fprintf(stderr, "hyphys bench sched: %s: write failed\n", path);
    return !bad;
}

int hy_tp_plot(const char* png, const hy_tp_row* rows, int count) {
    if (system("command -v gnuplot >/dev/null 2>&1") != 0) {
        fprintf(stderr, "hyphys bench sched: gnuplot not found; skipping the plot %s (the CSV is written)\n", png);
        return 0;
    }
    const char* scenes[16];
    int ns = 0;
    for (int k = 0; k < count; k++) {
        int dup = 0;
        for (int s = 0; s < ns; s++) dup |= !strcmp(scenes[s], rows[k].scene);
        if (!dup && ns < 16) scenes[ns++] = rows[k].scene;
    }
    FILE* g = popen("gnuplot", "w");
    if (!g) {
        fprintf(stderr, "hyphys bench sched: cannot start gnuplot; skipping the plot\n");
        return 0;
    }
    fprintf(g, "set terminal pngcairo noenhanced size %d,760 font 'sans,9'\nset output '%s'\n", 420 * (ns > 0 ? ns : 1), png);
    fprintf(g, "set multiplot layout 2,%d title 'Modeled collision-detection FPS as resources are added "
               "(virtual clock, recorded job streams)'\n",
            ns > 0 ? ns : 1);
    fprintf(g, "set key top left font ',8'\nset grid ytics\nset ylabel 'FPS'\nset yrange [0:*]\nset xtics rotate by -30\n");
    static const char* machines[2] = {"machine1", "machine2"};
    for (int m = 0; m < 2; m++)
        for (int s = 0; s < ns; s++) {
            fprintf(g, "set title '%s, %s'\nset xrange [-0.3:%f]\n", scenes[s], m ? "Machine 2" : "Machine 1",
                    m ? 5.3 : 2.3);
            fprintf(g, "plot ");
            for (int p = 0; p < POLICY_COUNT; p++)
                fprintf(g, "%s'-' using 1:2:xtic(3) with linespoints lw 2 title '%s'", p ? ", " : "", g_policies[p]);
            fprintf(g, "\n");
            for (int p = 0; p < POLICY_COUNT; p++) {
                for (int k = 0; k < count; k++) {
                    const hy_tp_row* r = &rows[k];
                    if (strcmp(r->scene, scenes[s]) || strcmp(r->machine, machines[m]) || strcmp(r->policy, g_policies[p]))
                        continue;
                    fprintf(g, "%d %.6g \"%s\"\n", r->config_index, r->fps, r->label);
                }
                fprintf(g, "e\n");
            }
        }
    fprintf(g, "unset multiplot\n");
    int rc = pclose(g);
    if (rc != 0) {
        fprintf(stderr, "hyphys bench sched: gnuplot failed (status %d); %s may be missing\n", rc, png);
        return 0;
    }
    return 1;
}
