/* Throughput of the scheduling policies on modeled machines, driven by job
 * streams recorded from real runs (the throughput half of `bench sched`).
 *
 * Streams: per scene, bench/sched_stream.c replays the recording that
 * `hyphys bench ccd` makes (recorded here the same way when missing) and
 * saves per frame and traversal round the TRAVERSE and LEAF job counts in
 * RECORD_DIR/NAME/jobs.csv; later runs read that file once its first two
 * frames are made again from the recording, the same (hy_job_stream_matches).
 *
 * Simulation: the framework itself (sched/proximity.c) on the machine's
 * modeled resources (model:NAME, its profiles), one frame per
 * hy_prox_run_rounds, under its virtual clock: its queues, its event loop,
 * its scheduler calls and their modeled charge (hy_sched_call_time, the
 * policy class's call_time), so what the bench measures is what a run with
 * `--clock virtual` does. The replay below says what each TRAVERSE batch
 * makes. With `measured` the framework's real clock charges each scheduler
 * call its wall time instead (then the output depends on this machine's
 * load and is not repeatable); the batches, all on modeled resources, keep
 * their modeled time. Every policy of the registry runs but the
 * evaluation-only ones (exhaustive).
 *
 * FPS = frames / Σ frame times (the framework's makespans); idle ratio of a
 * resource = 1 - its busy time / Σ frame times; setup share = the time its
 * batches spent in their setups / Σ frame times.
 *
 * lp's time-out compares the modeled solving time (lp_timeout 2), not the
 * wall clock's, with the smallest remaining busy time, so runs repeat
 * exactly; with the time-out off lp's calls grow long enough to leave every
 * resource idle a part of each frame (figures: docs/PERFORMANCE.md). Every
 * call's wall time is measured as well; `--call-cost` compares it with the
 * charge, which is how the call-time constants were fitted. */
#include "bench/sched_throughput.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "bench/recording.h"
#include "bench/sched_stream.h"
#include "cli/cli.h"
#include "core/error.h"
#include "engine/export.h"
#include "sched/policy.h"
#include "sched/proximity.h"


/* The policies of the registry that schedule frames (not the
 * evaluation-only ones), in registry order; returns their count. */
static int frame_policies(const hy_sched_policy_class** out, int cap) {
    int n = 0;
    for (const hy_sched_policy_class* const* c = hy_sched_policy_list(); *c && n < cap; c++)
        if (!(*c)->evaluation_only) out[n++] = *c;
    return n;
}

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

/* ---- the replay: the recorded rounds through the framework
 *
 * Each frame runs under the framework's own event loop and clock
 * (sched/proximity.c, hy_prox_run_rounds): the round-0 node pairs are its
 * initial TRAVERSE jobs, and the work functions compute nothing, they only
 * say what a batch makes. A TRAVERSE batch of k round-r jobs makes its share
 * of round r + 1: of the T(r+1) TRAVERSE and L(r+1) LEAF jobs the whole of
 * round r makes, the jobs of round r run so far make floor(done·T(r+1)/T(r))
 * (and the same for L), counted over all resources, so each round's totals
 * come out exactly as recorded (the recording has counts per round, not
 * which node pair made which). The framework numbers the TRAVERSE jobs a
 * batch makes after every id so far, in the order the batches start: the
 * order these functions see them in, which is how a job's round is known. */

typedef struct replay {
    const hy_job_round* rounds;
    int nrounds;
    int32_t* round_of;     /* round of each TRAVERSE id so far */
    int64_t ids, cap;      /* TRAVERSE ids so far, round_of's room */
    int64_t* done;         /* [r] TRAVERSE jobs of round r run so far (all resources) */
    int64_t* batch;        /* [r] the batch's jobs of round r */
    int64_t traverse_made; /* the framework's count of the batch's TRAVERSE jobs */
} replay;

static hy_status replay_traverse(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    (void)r;
    (void)res; /* b->work stays: one unit a job, the streams count node pairs */
    replay* x = ctx;
    const int64_t* ids = b->ids;
    int64_t n = b->n;
    int lo = x->nrounds, hi = -1;
    for (int64_t q = 0; q < n; q++) {
        if (ids[q] < 0 || ids[q] >= x->ids) return hy_fail(HY_ERR_INTERNAL, "replay: unknown TRAVERSE id %lld", (long long)ids[q]);
        int k = x->round_of[ids[q]];
        x->batch[k]++;
        if (k < lo) lo = k;
        if (k > hi) hi = k;
    }
    int64_t leaf = 0;
    for (int k = lo; k <= hi; k++) {
        int64_t m = x->batch[k], T = x->rounds[k].traverse;
        x->batch[k] = 0;
        if (m == 0) continue;
        int64_t before = x->done[k], after = before + m;
        x->done[k] = after;
        if (k + 1 >= x->nrounds || T <= 0) continue;
        /* products stay far below 2^63: counts per round are < 2^31 */
        int64_t nt = x->rounds[k + 1].traverse, nl = x->rounds[k + 1].leaf;
        int64_t add_t = after * nt / T - before * nt / T;
        leaf += after * nl / T - before * nl / T;
        if (x->ids + add_t > x->cap) {
            int64_t cap = x->cap * 2 > x->ids + add_t ? x->cap * 2 : x->ids + add_t;
            int32_t* v = realloc(x->round_of, sizeof(int32_t) * (size_t)cap);
            if (!v) return hy_fail(HY_ERR_NOMEM, "replay: out of memory");
            x->round_of = v;
            x->cap = cap;
        }
        for (int64_t q = 0; q < add_t; q++) x->round_of[x->ids++] = (int32_t)(k + 1);
        x->traverse_made += add_t;
    }
    b->made = leaf;
    return HY_OK;
}

static hy_status replay_leaf(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    (void)ctx;
    (void)r;
    (void)res;
    (void)b;
    return HY_OK;
}

static const hy_job_kind_ops replay_jobs[HY_JOB_KINDS] = {{.name = "TRAVERSE", .run = {replay_traverse}}, {.name = "LEAF", .run = {replay_leaf}}};

/* One frame through the framework; its makespan lands in the stats. */
static hy_status replay_frame(hy_prox* p, replay* x, const hy_job_round* rounds, int nrounds) {
    x->rounds = rounds;
    x->nrounds = nrounds;
    int64_t front = nrounds > 0 ? rounds[0].traverse : 0;
    free(x->done);
    free(x->batch);
    x->done = calloc((size_t)nrounds + 1, sizeof(int64_t));
    x->batch = calloc((size_t)nrounds + 1, sizeof(int64_t));
    if (front > x->cap) {
        int32_t* v = realloc(x->round_of, sizeof(int32_t) * (size_t)front);
        if (v) {
            x->round_of = v;
            x->cap = front;
        }
    }
    if (!x->done || !x->batch || front > x->cap) return hy_fail(HY_ERR_NOMEM, "replay: out of memory");
    for (int64_t q = 0; q < front; q++) x->round_of[q] = 0;
    x->ids = front;
    hy_prox_work work = {x, replay_jobs, 0};
    return hy_prox_run_rounds(p, front, &work, &x->traverse_made);
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

/* Every frame of the stream on configuration c under `policy`, through the
 * framework: its model: resources are c's profiles, its clock the virtual
 * one (scheduler calls charged their modeled time, hy_sched_call_time), or
 * with `measured` the real one (calls charged their wall time; the
 * batches, all on modeled resources, still their modeled time). */
static hy_status simulate(const hy_job_stream* js, const config* c, const char* policy, int measured, hy_tp_row* row) {
    char devices[1024];
    size_t len = 0;
    for (int i = 0; i < c->model.resources && len < sizeof devices; i++)
        len += (size_t)snprintf(devices + len, sizeof devices - len, "%smodel:%s", i ? "," : "", c->model.device[i].name);
    hy_prox_config pc;
    memset(&pc, 0, sizeof pc);
    pc.policy = policy;
    pc.devices = devices;
    pc.clock = measured ? HY_CLOCK_REAL : HY_CLOCK_VIRTUAL;
    pc.profiles = &c->model; /* model:NAME finds c's profiles by name (the hexa-core halves are no built-ins) */
    hy_sched_options_default(&pc.options);
    pc.options.lp_timeout = 2; /* modeled solving time: the wall clock must not steer a virtual-clock run */
    pc.options.gpu_guard = 0;  /* the policies as Kim et al. compared them (the guard: tests/test_engage.c) */
    hy_prox* p = NULL;
    hy_status st = hy_prox_create(&pc, &p);
    replay x;
    memset(&x, 0, sizeof x);
    for (int32_t f = 0; f < js->frames && !st; f++)
        st = replay_frame(p, &x, js->rounds + js->first[f], js->first[f + 1] - js->first[f]);
    if (!st) {
        const hy_prox_stats* ps = hy_prox_stats_get(p);
        double n = (double)js->frames, total = ps->makespan;
        row->fps = total > 0 ? n / total : 0.0;
        row->frame_ms = 1e3 * total / n;
        row->calls = (double)ps->calls / n;
        row->sched_ms = 1e3 * ps->sched_time / n;
        row->call_us_measured = ps->calls ? 1e6 * ps->sched_wall / (double)ps->calls : 0.0;
        for (int t = 0; t <= HY_SCHED_MAX_TYPES; t++) {
            row->by_types[t][0] = ps->call_types[t][0];
            row->by_types[t][1] = 1e6 * ps->call_types[t][1];
            row->by_types[t][2] = 1e6 * ps->call_types[t][2];
        }
        row->resources = c->model.resources;
        for (int i = 0; i < row->resources; i++) {
            snprintf(row->resource[i], sizeof row->resource[i], "%s", c->model.device[i].name);
            row->idle[i] = total > 0 ? 1.0 - ps->busy[i] / total : 0.0;
            row->setup[i] = total > 0 ? ps->setup[i] / total : 0.0;
            row->transfer[i] = total > 0 ? ps->transfer[i] / total : 0.0;
        }
    }
    free(x.round_of);
    free(x.done);
    free(x.batch);
    hy_prox_destroy(p);
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
    const hy_sched_policy_class* policies[16];
    int np = frame_policies(policies, 16);
    int total = o->scene_count * CONFIG_COUNT * np, n = 0;
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
            for (int p = 0; p < np; p++) {
                hy_tp_row* r = &rows[n];
                r->bound_fps = bound;
                snprintf(r->scene, sizeof r->scene, "%s", name);
                r->machine = configs[c].machine;
                snprintf(r->config, sizeof r->config, "%s", configs[c].name);
                r->label = configs[c].label;
                r->config_index = configs[c].index;
                r->policy = policies[p]->name;
                if (simulate(&js, &configs[c], r->policy, o->measured, r)) {
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
    const char* policy[16];        /* the rows' policies but lp, in row order */
    int policies;
    double lp_over[16]; /* mean over scenes of lp / policy FPS, Machine 2 all six */
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
        dup = !strcmp(rows[k].policy, "lp");
        for (int p = 0; p < t->policies; p++) dup |= !strcmp(t->policy[p], rows[k].policy);
        if (!dup && t->policies < 16) t->policy[t->policies++] = rows[k].policy;
    }
    for (int s = 0; s < t->scenes; s++) {
        double lp = fps_of(rows, count, seen[s], "machine2", 5, "lp");
        for (int p = 0; p < t->policies; p++) {
            double x = fps_of(rows, count, seen[s], "machine2", 5, t->policy[p]);
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

/* lp / `policy` FPS from the targets, 0 when the rows lack the policy. */
static double lp_over(const targets* t, const char* policy) {
    for (int p = 0; p < t->policies; p++)
        if (!strcmp(t->policy[p], policy)) return t->lp_over[p];
    return 0.0;
}

void hy_tp_print_targets_json(FILE* f, const hy_tp_row* rows, int count) {
    targets t;
    compute_targets(rows, count, &t);
    fprintf(f, "{\"lp_over_ws\":%.4f,\"lp_over_ws_exp\":%.4f,\"lp_over_lau10\":%.4f,\"lp_over_tan09\":%.4f,"
               "\"lp_monotonic\":%s}",
            lp_over(&t, "ws"), lp_over(&t, "ws-exp"), lp_over(&t, "lau10"), lp_over(&t, "tan09"),
            t.lp_monotonic ? "true" : "false");
}

/* Per policy and |R|, over every row: the mean wall time of a scheduler
 * call on this machine (the framework's: gathering the queues, the policy,
 * handing the jobs out) against the mean time the simulation charged for it
 * (modeled: hy_sched_call_time, the 2 µs gather plus the policy's own). How
 * the call-time model is checked and calibrated (docs/PERFORMANCE.md). */
static void print_call_cost(FILE* f, const hy_tp_row* rows, int count) {
    fprintf(f, "\nscheduler call cost per policy and |R|, mean over the rows' calls (calls: per frame, summed over the rows;\nmeasured: the call's wall time on this machine; charged: what the simulation charged)\n");
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
            t.scenes, lp_over(&t, "ws"), lp_over(&t, "ws-exp"), lp_over(&t, "lau10"), lp_over(&t, "tan09"));
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
    const char *scenes[16], *policies[16];
    int ns = 0, np = 0;
    for (int k = 0; k < count; k++) {
        int dup = 0;
        for (int s = 0; s < ns; s++) dup |= !strcmp(scenes[s], rows[k].scene);
        if (!dup && ns < 16) scenes[ns++] = rows[k].scene;
        dup = 0;
        for (int p = 0; p < np; p++) dup |= !strcmp(policies[p], rows[k].policy);
        if (!dup && np < 16) policies[np++] = rows[k].policy;
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
            for (int p = 0; p < np; p++)
                fprintf(g, "%s'-' using 1:2:xtic(3) with linespoints lw 2 title '%s'", p ? ", " : "", policies[p]);
            fprintf(g, "\n");
            for (int p = 0; p < np; p++) {
                for (int k = 0; k < count; k++) {
                    const hy_tp_row* r = &rows[k];
                    if (strcmp(r->scene, scenes[s]) || strcmp(r->machine, machines[m]) || strcmp(r->policy, policies[p]))
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
