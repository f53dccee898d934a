/* The hybrid proximity framework at run time: every job runs exactly once
 * whatever the policy and resources; the contacts and state hash of a
 * colliding scene equal the CPU-only run's for every policy and device set
 * (modeled devices, real and virtual clocks); the virtual clock repeats
 * exactly; the trace is valid JSON with a track per resource; bad device
 * lists and missing profiles are errors that name the culprit; TRAVERSE
 * jobs that make TRAVERSE jobs (rounds) run as the throughput bench needs. */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "engine/world.h"
#include "hyphys/hyphys.h"
#include "sched/cuda.h"
#include "sched/proximity.h"
#include "test.h"
#include "tests/world_step.h"
#include "scene_cloth_ball.h"

/* ---- the loop alone, on a synthetic job graph */

typedef struct fake {
    int64_t traverse_jobs;
    unsigned char* traverse_done; /* per TRAVERSE id: times run */
    int64_t leaves;               /* LEAF jobs made so far */
    unsigned char* leaf_done;     /* per LEAF id: times run */
    int64_t leaf_cap;
    int bad_order; /* a LEAF ran before it was made */
    int64_t max_batch; /* most jobs in one call of the work functions */
    int64_t work;      /* units of work reported by the TRAVERSE batches */
} fake;

static int64_t makes(int64_t id) { return (id * 7) % 11; } /* 0..10 LEAF jobs per TRAVERSE job */
static int64_t units(int64_t id) { return 1 + (id * 5) % 13; } /* node pairs a TRAVERSE job tests */

/* n TRAVERSE jobs, room for the most LEAF jobs they can make */
static void fake_init(fake* f, int64_t n) {
    memset(f, 0, sizeof *f);
    f->traverse_jobs = n;
    f->traverse_done = calloc((size_t)n, 1);
    f->leaf_cap = n * 10;
    f->leaf_done = calloc((size_t)f->leaf_cap, 1);
    CHECK(f->traverse_done && f->leaf_done);
}

static void fake_free(fake* f) {
    free(f->traverse_done);
    free(f->leaf_done);
}

static hy_status fake_traverse(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    fake* f = ctx;
    (void)r;
    (void)res;
    const int64_t* ids = b->ids;
    int64_t n = b->n;
    int64_t m = 0, u = 0;
    if (n > f->max_batch) f->max_batch = n;
    for (int64_t k = 0; k < n; k++) {
        f->traverse_done[ids[k]]++;
        m += makes(ids[k]);
        u += units(ids[k]);
    }
    f->leaves += m;
    f->work += u;
    b->made = m;
    b->work = u;
    return HY_OK;
}

static hy_status fake_leaf(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    fake* f = ctx;
    (void)r;
    (void)res;
    int64_t first = b->first, n = b->n;
    if (first + n > f->leaves) f->bad_order = 1;
    if (n > f->max_batch) f->max_batch = n;
    for (int64_t k = first; k < first + n && k < f->leaf_cap; k++) f->leaf_done[k]++;
    return HY_OK;
}

static const hy_job_kind_ops fake_jobs[HY_JOB_KINDS] = {{.name = "TRAVERSE", .run = {fake_traverse}}, {.name = "LEAF", .run = {fake_leaf}}};

static void loop_alone(void) {
    static const char* devs[] = {"model:cpu-m1", "model:cpu-m1,model:gtx285",
                                 "model:cpu-m2,model:gtx580,model:c2075,model:gtx480,model:gtx285"};
    const hy_sched_policy_class* const* pol = hy_sched_policy_list();
    for (int d = 0; d < 3; d++)
        for (int p = 0; pol[p]; p++) {
            if (!strcmp(pol[p]->name, "exhaustive") && d == 2) continue; /* 2^(5·10) patterns */
            hy_prox_config c;
            memset(&c, 0, sizeof c);
            c.policy = pol[p]->name;
            c.devices = devs[d];
            c.clock = HY_CLOCK_VIRTUAL;
            hy_sched_options_default(&c.options);
            c.options.lp_timeout = 0;
            /* work stealing launches in chunks (hy_sched_assignment.launch) */
            int ws = !strncmp(pol[p]->name, "ws", 2);
            if (ws) c.options.ws_grain = 64;
            hy_prox* x = NULL;
            CHECK_OK(hy_prox_create(&c, &x));
            if (!x) continue;
            fake f;
            fake_init(&f, 2000);
            hy_prox_work work = {&f, fake_jobs, 0};
            CHECK_OK(hy_prox_run(x, f.traverse_jobs, &work));
            int64_t expect = 0;
            int once = 1;
            for (int64_t i = 0; i < 2000; i++) {
                expect += makes(i);
                once &= f.traverse_done[i] == 1;
            }
            for (int64_t i = 0; i < expect; i++) once &= f.leaf_done[i] == 1;
            CHECK(once);
            CHECK(f.leaves == expect);
            CHECK(!f.bad_order);
            const hy_prox_stats* st = hy_prox_stats_get(x);
            int64_t tj = 0, lj = 0;
            for (int i = 0; i < hy_prox_resource_count(x); i++) {
                tj += st->jobs[i][HY_JOB_TRAVERSE];
                lj += st->jobs[i][HY_JOB_LEAF];
            }
            CHECK(tj == 2000 && lj == expect);
            CHECK(st->makespan > 0.0 && st->calls >= 2);
            /* TRAVERSE batches are charged per unit of work they report,
             * and the model learns the mean units per job for the next run */
            int64_t tw = 0;
            for (int64_t i = 0; i < 2000; i++) tw += units(i);
            CHECK(f.work == tw && st->traverse_work == tw);
            const hy_sched_model* M = hy_prox_model(x);
            double u = (double)tw / 2000.0;
            CHECK(fabs(M->units[HY_JOB_TRAVERSE] - u) <= 1e-12 * u);
            CHECK(fabs(M->cost[0][0] - M->device[0].cost[HY_JOB_TRAVERSE].proc * u) <=
                  1e-12 * M->cost[0][0]);
            if (d == 0) {
                /* one resource: every batch its setup, then proc per unit */
                const hy_device_costs* ct = &M->device[0].cost[HY_JOB_TRAVERSE];
                const hy_device_costs* cl = &M->device[0].cost[HY_JOB_LEAF];
                CHECK(ct->setup == cl->setup);
                double busy = ct->setup * (double)st->batches + ct->proc * (double)tw + cl->proc * (double)expect;
                CHECK(fabs(st->busy[0] - busy) <= 1e-9 * busy);
            }
            if (ws) {
                /* no batch past the chunk, so at least that many batches
                 * (a queue's last range may hold fewer than 64 jobs) */
                CHECK(f.max_batch <= 64);
                CHECK(st->batches >= (2000 + expect + 63) / 64);
            }
            if (!once) fprintf(stderr, "  policy %s, devices %s\n", pol[p]->name, devs[d]);
            fake_free(&f);
            hy_prox_destroy(x);
        }
}

/* ---- a colliding scene */

static hy_world* scene(void) { return hy_test_cloth_ball_world(1); }

#define STEPS 30

typedef struct run_result {
    uint64_t hash[STEPS];
    uint64_t contacts[STEPS]; /* FNV of the canonical contact list */
    int64_t contact_count;
    double makespan[STEPS];
    double busy[STEPS][4];
} run_result;

static uint64_t fnv(uint64_t h, const void* p, size_t n) {
    const unsigned char* c = p;
    for (size_t i = 0; i < n; i++) h = (h ^ c[i]) * 1099511628211ull;
    return h;
}

static int run(const char* policy, const char* devices, int virtual_clock, const char* profile, const char* trace,
               run_result* out) {
    hy_world* w = scene();
    if (!w) return 0;
    memset(out, 0, sizeof *out);
    if (policy) {
        hy_sched_def d = hy_sched_def_default();
        d.policy = policy;
        d.devices = devices;
        d.virtual_clock = virtual_clock;
        d.profile = profile;
        d.trace = trace;
        hy_status s = hy_world_set_scheduling(w, &d);
        CHECK_OK(s);
        if (s) {
            hy_world_destroy(w);
            return 0;
        }
    }
    hy_contact_info* ci = malloc(sizeof *ci * 100000);
    for (int k = 0; k < STEPS; k++) {
        hy_status s = hy_test_step(w);
        CHECK_OK(s);
        if (s) break;
        out->hash[k] = hy_test_hash(w);
        int64_t n = 0;
        CHECK_OK(hy_world_get_contacts(w, ci, 100000, &n));
        out->contact_count += n;
        uint64_t h = 1469598103934665603ull;
        for (int64_t i = 0; i < n && i < 100000; i++) {
            h = fnv(h, ci[i].vertex, sizeof ci[i].vertex);
            h = fnv(h, &ci[i].time_of_impact, sizeof(double));
        }
        out->contacts[k] = h;
        hy_sched_stats ss;
        hy_resource_stats rs[4];
        int32_t nr = 0;
        CHECK_OK(hy_world_get_sched_stats(w, &ss, rs, 4, &nr));
        out->makespan[k] = ss.makespan_ms;
        for (int i = 0; i < nr && i < 4; i++) out->busy[k][i] = rs[i].busy_ms;
    }
    free(ci);
    hy_world_destroy(w);
    return 1;
}

static void determinism(const char* profile) {
    run_result ref, r;
    CHECK(run(NULL, NULL, 0, NULL, NULL, &ref));
    fprintf(stderr, "reference: %lld contacts over %d steps, hash %016llx\n", (long long)ref.contact_count, STEPS,
            (unsigned long long)ref.hash[STEPS - 1]);
    CHECK(ref.contact_count > 100); /* the scene must exercise collisions */
    static const struct {
        const char* devices;
        int virtual_clock;
    } sets[] = {
        {"cpu,model:gtx285", 0},
        {"model:cpu-m1,model:gtx285,model:gtx480", 1},
        {"cpu,model:gtx480,model:c2075", 1},
    };
    const hy_sched_policy_class* const* pol = hy_sched_policy_list();
    /* under the sanitizers (slow): every policy on one device set */
    int quick = getenv("HY_TEST_SANITIZER") != NULL;
    for (int d = quick ? 1 : 0; d < (quick ? 2 : 3); d++)
        for (int p = 0; pol[p]; p++) {
            CHECK(run(pol[p]->name, sets[d].devices, sets[d].virtual_clock, profile, NULL, &r));
            int same = memcmp(ref.hash, r.hash, sizeof ref.hash) == 0 &&
                       memcmp(ref.contacts, r.contacts, sizeof ref.contacts) == 0;
            CHECK(same);
            if (!same) fprintf(stderr, "  differs: policy %s, devices %s\n", pol[p]->name, sets[d].devices);
        }
    /* the virtual clock repeats exactly */
    run_result a, b;
    CHECK(run("lp", "model:cpu-m1,model:gtx285,model:gtx480", 1, NULL, NULL, &a));
    CHECK(run("lp", "model:cpu-m1,model:gtx285,model:gtx480", 1, NULL, NULL, &b));
    CHECK(memcmp(a.makespan, b.makespan, sizeof a.makespan) == 0);
    CHECK(memcmp(a.busy, b.busy, sizeof a.busy) == 0);
    CHECK(a.makespan[STEPS - 1] > 0.0);
}

static void trace(void) {
    const char* path = "test_prox_trace.json";
    run_result r;
    CHECK(run("ws", "model:cpu-m1,model:gtx285", 1, NULL, path, &r));
    FILE* f = fopen(path, "rb");
    CHECK(f != NULL);
    if (!f) return;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    char* text = malloc((size_t)n + 1);
    CHECK(fread(text, 1, (size_t)n, f) == (size_t)n);
    text[n] = '\0';
    fclose(f);
    cJSON* root = cJSON_Parse(text);
    free(text);
    CHECK(root != NULL);
    const cJSON* ev = cJSON_GetObjectItemCaseSensitive(root, "traceEvents");
    CHECK(cJSON_IsArray(ev));
    int batches[3] = {0, 0, 0}, calls = 0, names = 0, fronts = 0;
    double busy[2] = {0, 0};
    const cJSON* e;
    cJSON_ArrayForEach(e, ev) {
        const char* name = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(e, "name"));
        int tid = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "tid"));
        int pid = (int)cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "pid"));
        /* process 1: the collision jobs (the world's integrate phase is process 2) */
        if (!name || pid != 1 || tid < 0 || tid > 2) continue;
        double dur = cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(e, "dur"));
        if (!strcmp(name, "thread_name")) names++;
        if (!strcmp(name, "schedule")) calls++;
        if (!strcmp(name, "front")) fronts += tid == 0;
        if (!strcmp(name, "TRAVERSE") || !strcmp(name, "LEAF") || !strcmp(name, "transfer") || !strcmp(name, "front")) {
            batches[tid]++;
            if (tid < 2) busy[tid] += dur;
        }
    }
    cJSON_Delete(root);
    CHECK(names == 3); /* two resources and the scheduler */
    CHECK(batches[0] > 0 && batches[1] > 0 && calls > 0);
    CHECK(fronts > 0); /* the host's front (cpu-m1 is modeled), on the host's track */
    /* the trace's busy time is the stats' (µs vs ms; %.3f µs printing) */
    double total[2] = {0, 0};
    for (int k = 0; k < STEPS; k++)
        for (int i = 0; i < 2; i++) total[i] += r.busy[k][i];
    for (int i = 0; i < 2; i++) CHECK_NEAR(busy[i] * 1e-3, total[i], 1e-6 * total[i] + 1e-3);
    remove(path);
}

/* A real resource's copies, as its work functions report them: counted
 * as its transfer time, per batch. */
static void spin(double seconds) {
    double t0 = hy_sched_now();
    while (hy_sched_now() - t0 < seconds) {
    }
}
static hy_status copy_traverse(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    spin(20e-6);
    b->transfer = 3e-6;
    return fake_traverse(ctx, r, res, b);
}
static hy_status copy_leaf(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    spin(20e-6);
    b->transfer = 3e-6;
    return fake_leaf(ctx, r, res, b);
}
static const hy_job_kind_ops copy_jobs[HY_JOB_KINDS] = {{.name = "TRAVERSE", .run = {copy_traverse}}, {.name = "LEAF", .run = {copy_leaf}}};

static void reported_transfers(void) {
    hy_prox_config c;
    memset(&c, 0, sizeof c);
    c.devices = "cpu";
    hy_sched_options_default(&c.options);
    hy_prox* x = NULL;
    CHECK_OK(hy_prox_create(&c, &x));
    if (!x) return;
    fake f;
    fake_init(&f, 50);
    hy_prox_work work = {&f, copy_jobs, 0};
    CHECK_OK(hy_prox_run(x, f.traverse_jobs, &work));
    const hy_prox_stats* st = hy_prox_stats_get(x);
    /* zeroed before each batch: each batch counts its own 3 us (one call of
     * the work functions a batch here: one range per LEAF batch) */
    CHECK(st->batches >= 2);
    CHECK_NEAR(st->transfer[0], 3e-6 * (double)st->batches, 1e-12);
    CHECK(st->busy[0] >= st->transfer[0]);
    fake_free(&f);
    hy_prox_destroy(x);
}

/* Under the real clock the real resources' costs follow what their
 * batches took (the fake work is far faster than the profile says); a
 * modeled resource's, and every cost under the virtual clock, stay as
 * profiled. */
/* A profile of the real cpu alone: setup 5 us for both kinds, proc as
 * given (seconds per unit). */
static void cpu_profile(hy_sched_model* prof, double traverse_proc, double leaf_proc) {
    hy_sched_model_init(prof);
    hy_device_profile cpu;
    memset(&cpu, 0, sizeof cpu);
    snprintf(cpu.name, sizeof cpu.name, "cpu");
    cpu.kind = HY_DEVICE_CPU;
    cpu.cores = 2;
    cpu.cost[HY_JOB_TRAVERSE] = (hy_device_costs){5e-6, traverse_proc, 0.0, 0.0};
    cpu.cost[HY_JOB_LEAF] = (hy_device_costs){5e-6, leaf_proc, 0.0, 0.0};
    CHECK_OK(hy_sched_model_add(prof, &cpu));
}

/* Four runs of 2,000 fake TRAVERSE jobs with the given work functions. */
static void four_runs(hy_prox* x, const hy_job_kind_ops* jobs) {
    for (int run = 0; run < 4; run++) {
        fake f;
        fake_init(&f, 2000);
        hy_prox_work work = {&f, jobs, 0};
        CHECK_OK(hy_prox_run(x, f.traverse_jobs, &work));
        fake_free(&f);
    }
}

static void learned_costs(void) {
    hy_sched_model prof;
    cpu_profile(&prof, 9e-6, 1e-6);
    hy_device_profile gtx;
    CHECK_OK(hy_device_profile_builtin("gtx285", &gtx));
    static const struct {
        const char* devices;
        int vclock;
    } sets[3] = {{"cpu", 0}, {"cpu,model:gtx285", 0}, {"cpu,model:gtx285", 1}};
    for (int q = 0; q < 3; q++) {
        hy_prox_config c;
        memset(&c, 0, sizeof c);
        c.devices = sets[q].devices;
        c.clock = sets[q].vclock ? HY_CLOCK_VIRTUAL : HY_CLOCK_REAL;
        c.profiles = &prof;
        hy_sched_options_default(&c.options);
        hy_prox* x = NULL;
        CHECK_OK(hy_prox_create(&c, &x));
        if (!x) continue;
        four_runs(x, fake_jobs);
        const hy_sched_model* M = hy_prox_model(x);
        double tp = M->device[0].cost[HY_JOB_TRAVERSE].proc, lp = M->device[0].cost[HY_JOB_LEAF].proc;
        fprintf(stderr, "learned (%s, %s clock): cpu traverse %.4g us, leaf %.4g us per unit\n", sets[q].devices,
                sets[q].vclock ? "virtual" : "real", 1e6 * tp, 1e6 * lp);
        if (q == 0) {
            CHECK(tp < 4.5e-6 && tp >= 9e-6 / 16.0);
            CHECK(lp < 0.5e-6 && lp >= 1e-6 / 16.0);
        }
        if (q == 2) CHECK(tp == 9e-6 && lp == 1e-6);
        double ts = M->device[0].cost[HY_JOB_TRAVERSE].setup, ls = M->device[0].cost[HY_JOB_LEAF].setup;
        if (q == 2) CHECK(ts == 5e-6 && ls == 5e-6);
        CHECK(ts >= 0.0 && ts <= 1e-3 && ls >= 0.0 && ls <= 1e-3);
        if (q > 0) CHECK(memcmp(M->device[1].cost, gtx.cost, sizeof gtx.cost) == 0);
        hy_prox_destroy(x);
    }
}

/* Work whose time is a known line: 2 us per TRAVERSE unit and per LEAF
 * job (spun on the clock), on top of the fake's own. */
static hy_status line_traverse(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    hy_status s = fake_traverse(ctx, r, res, b);
    spin(2e-6 * (double)b->work);
    return s;
}
static hy_status line_leaf(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    hy_status s = fake_leaf(ctx, r, res, b);
    spin(2e-6 * (double)b->n);
    return s;
}
static const hy_job_kind_ops line_jobs[HY_JOB_KINDS] = {{.name = "TRAVERSE", .run = {line_traverse}}, {.name = "LEAF", .run = {line_leaf}}};

/* The refit finds that line: one batch per kind and run (lp, the sizes
 * alike: proc under the setup held) and chunks of 256 jobs (ws, sizes
 * spread: setup and proc fitted). */
static void learned_line(void) {
    hy_sched_model prof;
    cpu_profile(&prof, 20e-6, 20e-6);
    for (int ws = 0; ws < 2; ws++) {
        /* The jobs spin on the real clock, so a loaded machine can preempt
         * enough of them to pull the fitted line off (seen: 9.5 us with the
         * suite beside, 26 us under ASan): the refit passes when one of
         * three fresh runs finds the line; a refit that is wrong misses it
         * every time. */
        int found = 0;
        for (int attempt = 0; attempt < 3 && !found; attempt++) {
            hy_prox_config c;
            memset(&c, 0, sizeof c);
            c.devices = "cpu";
            c.policy = ws ? "ws" : "lp";
            c.clock = HY_CLOCK_REAL;
            c.profiles = &prof;
            hy_sched_options_default(&c.options);
            if (ws) c.options.ws_grain = 256;
            hy_prox* x = NULL;
            CHECK_OK(hy_prox_create(&c, &x));
            if (!x) break;
            four_runs(x, line_jobs);
            const hy_sched_model* M = hy_prox_model(x);
            const hy_device_costs *t = &M->device[0].cost[HY_JOB_TRAVERSE], *l = &M->device[0].cost[HY_JOB_LEAF];
            fprintf(stderr,
                    "learned line (%s, run %d): traverse setup %.3g us proc %.4g us, leaf setup %.3g us proc %.4g us\n",
                    c.policy, attempt + 1, 1e6 * t->setup, 1e6 * t->proc, 1e6 * l->setup, 1e6 * l->proc);
            /* 2 us: nearer to it than to the profile's 20, and above the
             * clamp (1/16 of 20); the margin is for batches preempted on a
             * loaded machine (seen: 9.5 us with two other builds beside) */
            found = t->proc >= 1.5e-6 && t->proc <= 11e-6 && l->proc >= 1.5e-6 && l->proc <= 11e-6 &&
                    t->setup >= 0.0 && t->setup <= 1e-3 && l->setup >= 0.0 && l->setup <= 1e-3;
            hy_prox_destroy(x);
        }
        CHECK(found);
    }
}

static void errors(void) {
    hy_world* w = scene();
    hy_sched_def d = hy_sched_def_default();
    d.devices = "cpu,gpu0";
    CHECK(hy_world_set_scheduling(w, &d) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "gpu0") != NULL);
    d.devices = "model:cpu-m1,model:gtx999";
    CHECK(hy_world_set_scheduling(w, &d) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "gtx999") != NULL);
    d.devices = "cpu,model:gtx285"; /* two resources and no profile for the real cpu */
    CHECK(hy_world_set_scheduling(w, &d) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "calibrate") != NULL);
    d.devices = "cpu";
    d.policy = "fifo";
    CHECK(hy_world_set_scheduling(w, &d) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "fifo") != NULL);
    d.policy = "lp";
    d.devices = "cpu,cpu";
    CHECK(hy_world_set_scheduling(w, &d) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "listed twice") != NULL);
    d.devices = "cpu";
    d.profile = "/nonexistent/profile.json";
    CHECK(hy_world_set_scheduling(w, &d) != HY_OK);
    d.profile = NULL;
    d.devices = "cpu";
    CHECK_OK(hy_world_set_scheduling(w, &d));
    CHECK_OK(hy_test_step(w));
    hy_world_destroy(w);
}

/* What hy_world_set_scheduling did: the resources in use, and whether a
 * plain "cuda" found no GPU and was left out; a numbered GPU that is not
 * there is an error, the previous framework kept. Right on any machine:
 * with no GPU every cuda:N is missing, with G GPUs cuda:G is. */
static void scheduling_info(void) {
    hy_world* w = scene();
    hy_sched_info info;
    int gpus = hy_cuda_device_count();
    /* before any call: the default the first step uses */
    CHECK_OK(hy_world_get_scheduling(w, &info));
    CHECK(!strcmp(info.policy, "lp") && info.resource_count == 1 && !strcmp(info.resource[0].name, "cpu"));
    CHECK(info.fell_back == 0 && info.fallback[0] == '\0');
    CHECK(hy_world_get_scheduling(NULL, &info) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_get_scheduling(w, NULL) == HY_ERR_INVALID_ARG);

    hy_sched_def d = hy_sched_def_default();
    d.policy = "ws";
    d.devices = "model:gtx285";
    CHECK_OK(hy_world_set_scheduling(w, &d));
    CHECK_OK(hy_world_get_scheduling(w, &info));
    CHECK(!strcmp(info.policy, "ws") && info.resource_count == 1 && info.fell_back == 0);
    CHECK(!strcmp(info.resource[0].name, "model:gtx285") && info.resource[0].modeled == 1);

    /* a GPU index past the last GPU: refused, naming the entry */
    char missing[32], list[48];
    snprintf(missing, sizeof missing, "cuda:%d", gpus);
    snprintf(list, sizeof list, "cpu,%s", missing);
    d.policy = "lp";
    d.devices = list;
    CHECK(hy_world_set_scheduling(w, &d) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), missing) != NULL && strstr(hy_last_error(), "no such GPU") != NULL);
    d.devices = "cuda:7";
    if (gpus <= 7) CHECK(hy_world_set_scheduling(w, &d) == HY_ERR_INVALID_ARG);
    /* ... and the world keeps what it had */
    CHECK_OK(hy_world_get_scheduling(w, &info));
    CHECK(!strcmp(info.policy, "ws") && !strcmp(info.resource[0].name, "model:gtx285"));

    /* plain cuda: every GPU present; with none, left out and said */
    d.devices = "cuda";
    CHECK_OK(hy_world_set_scheduling(w, &d));
    CHECK_OK(hy_world_get_scheduling(w, &info));
    if (gpus == 0) {
        CHECK(info.fell_back == 1 && strstr(info.fallback, "cuda") != NULL);
        CHECK(info.resource_count == 1 && !strcmp(info.resource[0].name, "cpu") && info.resource[0].modeled == 0);
    } else {
        CHECK(info.fell_back == 0 && info.fallback[0] == '\0' && info.resource_count == gpus);
        CHECK(!strcmp(info.resource[0].name, "cuda:0"));
    }
    CHECK_OK(hy_test_step(w));
    hy_world_destroy(w);
}

/* A trace that cannot be written (a full device) is an error when it is
 * closed, naming the file; one that was written is complete JSON. */
static void trace_close_errors(void) {
    hy_world* w = scene();
    hy_sched_def d = hy_sched_def_default();
    CHECK(hy_world_close_trace(w) == HY_OK); /* none open */
    d.trace = "/nonexistent-folder/trace.json";
    CHECK(hy_world_set_scheduling(w, &d) == HY_ERR_IO);
    CHECK(strstr(hy_last_error(), "/nonexistent-folder/trace.json") != NULL);
    if (access("/dev/full", W_OK) == 0) {
        d.trace = "/dev/full";
        CHECK_OK(hy_world_set_scheduling(w, &d));
        for (int i = 0; i < 3; i++) CHECK_OK(hy_test_step(w));
        CHECK(hy_world_close_trace(w) == HY_ERR_IO);
        CHECK(strstr(hy_last_error(), "trace '/dev/full': write failed") != NULL);
        CHECK(hy_world_close_trace(w) == HY_OK); /* closed once */
    }
    d.trace = "test_prox_close.json";
    CHECK_OK(hy_world_set_scheduling(w, &d));
    CHECK_OK(hy_test_step(w));
    CHECK_OK(hy_world_close_trace(w));
    FILE* f = fopen("test_prox_close.json", "r");
    CHECK(f != NULL);
    if (f) {
        char buf[65536];
        size_t n = fread(buf, 1, sizeof buf - 1, f);
        buf[n] = '\0';
        fclose(f);
        CHECK(n > 4 && strstr(buf, "traceEvents") != NULL && strcmp(buf + n - 4, "\n]}\n") == 0);
    }
    remove("test_prox_close.json");
    hy_world_destroy(w);
}

/* Rounds (hy_prox_run_rounds, as the throughput bench replays streams):
 * TRAVERSE jobs make TRAVERSE jobs. A tree of node pairs 3 levels deep,
 * each pair making two children and one LEAF job: every job runs once, ids
 * are numbered after the initial ones in the order the batches start, the
 * problems say that rounds follow, and the virtual clock repeats exactly. */
typedef struct tree {
    int64_t ids, leaves, traverse_made, ran;
    int8_t depth[4096];
} tree;

static hy_status tree_traverse(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    (void)r;
    (void)res;
    tree* t = ctx;
    const int64_t* ids = b->ids;
    int64_t n = b->n;
    for (int64_t q = 0; q < n; q++) {
        if (ids[q] < 0 || ids[q] >= t->ids) return hy_fail(HY_ERR_INTERNAL, "tree: id %lld not made", (long long)ids[q]);
        int d = t->depth[ids[q]];
        t->ran++;
        b->made += 1;
        if (d < 3) {
            t->depth[t->ids++] = (int8_t)(d + 1);
            t->depth[t->ids++] = (int8_t)(d + 1);
            t->traverse_made += 2;
        }
    }
    return HY_OK;
}

static hy_status tree_leaf(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    (void)r;
    (void)res;
    ((tree*)ctx)->leaves += b->n;
    return HY_OK;
}
static const hy_job_kind_ops tree_jobs[HY_JOB_KINDS] = {{.name = "TRAVERSE", .run = {tree_traverse}}, {.name = "LEAF", .run = {tree_leaf}}};

static void rounds(void) {
    const hy_sched_policy_class* const* list = hy_sched_policy_list();
    double first_makespan = -1.0;
    for (int k = 0; list[k]; k++) {
        if (list[k]->evaluation_only) continue;
        hy_prox_config c;
        memset(&c, 0, sizeof c);
        c.policy = list[k]->name;
        c.devices = "model:cpu-m1,model:gtx285,model:gtx480";
        c.clock = HY_CLOCK_VIRTUAL;
        hy_sched_options_default(&c.options);
        c.options.lp_timeout = 2;
        hy_prox* x = NULL;
        CHECK_OK(hy_prox_create(&c, &x));
        if (!x) continue;
        double makespan[2];
        for (int again = 0; again < 2; again++) {
            static tree t;
            memset(&t, 0, sizeof t);
            t.ids = 40; /* 40 roots: 40 * (1 + 2 + 4 + 8) node pairs in all */
            hy_prox_stats_reset(x);
            hy_prox_work w = {&t, tree_jobs, 0};
            CHECK_OK(hy_prox_run_rounds(x, 40, &w, &t.traverse_made));
            const hy_prox_stats* st = hy_prox_stats_get(x);
            CHECK(t.ran == 40 * 15 && t.ids == 40 * 15);
            CHECK(t.leaves == 40 * 15);
            int64_t tj = 0, lj = 0;
            for (int i = 0; i < 3; i++) tj += st->jobs[i][HY_JOB_TRAVERSE], lj += st->jobs[i][HY_JOB_LEAF];
            CHECK(tj == 40 * 15 && lj == 40 * 15);
            CHECK(st->calls > 1 && st->call_types[0][0] == 0.0); /* every call had jobs */
            makespan[again] = st->makespan;
        }
        CHECK(makespan[0] > 0.0 && makespan[0] == makespan[1]);
        if (first_makespan < 0) first_makespan = makespan[0];
        hy_prox_destroy(x);
    }
    CHECK(first_makespan > 0.0);
}

int main(void) {
    loop_alone();
    rounds();
    reported_transfers();
    learned_costs();
    learned_line();
    /* a fixed profile for the real cpu resource: tests must not depend on
     * this machine's timing */
    const char* profile = "test_prox_profile.json";
    FILE* f = fopen(profile, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("{\"devices\":[{\"name\":\"cpu\",\"kind\":\"cpu\",\"cores\":2,"
              "\"traverse\":{\"setup_us\":5,\"proc_us\":9,\"upload_us\":0,\"download_us\":0},"
              "\"leaf\":{\"setup_us\":5,\"proc_us\":1,\"upload_us\":0,\"download_us\":0}}]}\n",
              f);
        fclose(f);
    }
    determinism(profile);
    trace();
    errors();
    scheduling_info();
    trace_close_errors();
    remove(profile);
    TEST_END();
}
