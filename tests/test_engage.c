/* The model's fixed cost per run (engage, sched/model.h) and the GPU guard
 * every policy's answer goes through:
 * - on random problems, for every policy, no GPU keeps jobs that a CPU
 *   would finish sooner than the GPU does, and the guard never raises the
 *   makespan;
 * - a GPU whose engage cost outweighs a light job set gets none of it from
 *   any policy, and gets jobs from lp when the set is heavy; an engaged
 *   GPU pays nothing more;
 * - on modeled devices under the virtual clock the framework charges the
 *   cost once per run, and a light run leaves the GPU idle;
 * - under the real clock a GPU learns the cost from its runs' first
 *   batches;
 * - engage_us in a profile's JSON: round trip, bad values refused. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "core/error.h"
#include "sched/proximity.h"
#include "test.h"

/* cpu-m1 and two GPUs: gtx480 with a fixed cost of `engage` seconds per
 * run, gtx285 without. */
static void machine(hy_sched_model* m, double engage) {
    hy_sched_model_init(m);
    hy_device_profile d;
    CHECK_OK(hy_device_profile_builtin("cpu-m1", &d));
    CHECK_OK(hy_sched_model_add(m, &d));
    CHECK_OK(hy_device_profile_builtin("gtx480", &d));
    d.engage = engage;
    CHECK_OK(hy_sched_model_add(m, &d));
    CHECK_OK(hy_device_profile_builtin("gtx285", &d));
    CHECK_OK(hy_sched_model_add(m, &d));
}

/* 1 when no GPU of `a` holds jobs (all of them, or one type's) that a CPU
 * resource would finish before the GPU finishes. */
static int guarded(const hy_sched_problem* p, const hy_sched_assignment* a0) {
    static hy_sched_assignment a;
    a = *a0;
    int R = p->model->resources, J = 2 * R;
    for (int g = 0; g < R; g++) {
        if (p->model->device[g].kind != HY_DEVICE_GPU) continue;
        double fg = hy_sched_finish(p, &a, g);
        for (int c = 0; c < R; c++) {
            if (p->model->device[c].kind != HY_DEVICE_CPU) continue;
            for (int only = -1; only < J; only++) {
                int64_t keep[HY_SCHED_MAX_TYPES];
                int any = 0;
                for (int j = 0; j < J; j++) {
                    keep[j] = a.count[c][j];
                    if ((only < 0 || only == j) && a.count[g][j] > 0) {
                        a.count[c][j] += a.count[g][j];
                        any = 1;
                    }
                }
                double fc = hy_sched_finish(p, &a, c);
                for (int j = 0; j < J; j++) a.count[c][j] = keep[j];
                if (any && fc < fg) {
                    fprintf(stderr, "GPU %d (finishing at %.3g s) keeps %s that cpu %d would finish at %.3g s\n", g,
                            fg, only < 0 ? "its jobs" : "a type", c, fc);
                    return 0;
                }
            }
        }
    }
    return 1;
}

static int64_t gpu_jobs(const hy_sched_assignment* a, int g, int J) {
    int64_t n = 0;
    for (int j = 0; j < J; j++) n += a->count[g][j];
    return n;
}

static void random_problems(void) {
    static hy_sched_model m;
    machine(&m, 300e-6);
    const hy_sched_policy_class* const* pol = hy_sched_policy_list();
    for (int q = 0; pol[q]; q++) {
        hy_sched_options o, off;
        hy_sched_options_default(&o);
        o.lp_timeout = 0;
        off = o;
        off.gpu_guard = 0;
        hy_sched_policy *p = NULL, *p0 = NULL;
        CHECK_OK(hy_sched_policy_create(pol[q]->name, &o, &p));
        CHECK_OK(hy_sched_policy_create(pol[q]->name, &off, &p0));
        if (!p || !p0) continue;
        int problems = pol[q]->evaluation_only ? 12 : 150, ok = 1, moved = 0, no_rise = 1;
        for (int k = 0; k < problems; k++) {
            static hy_sched_problem prob;
            static hy_sched_assignment a, a0;
            hy_sched_problem_random(&prob, &m, 1000u + (uint64_t)k, 1, pol[q]->evaluation_only ? 300 : 4000);
            prob.engaged[1] = (uint8_t)(k % 3 == 0);
            CHECK_OK(hy_sched_policy_assign(p, &prob, &a));
            CHECK_OK(hy_sched_policy_assign(p0, &prob, &a0));
            ok &= guarded(&prob, &a);
            no_rise &= a.makespan <= a0.makespan;
            moved += memcmp(a.count, a0.count, sizeof a.count) != 0;
        }
        fprintf(stderr, "%-10s guard changed %d of %d answers\n", pol[q]->name, moved, problems);
        CHECK(ok);
        CHECK(no_rise);
        /* the even split and the round robin know nothing of fixed costs:
         * the guard must have had work to do */
        if (!strcmp(pol[q]->name, "lau10") || !strcmp(pol[q]->name, "tan09")) CHECK(moved > 0);
        hy_sched_policy_destroy(p);
        hy_sched_policy_destroy(p0);
    }
}

/* Light and heavy job sets on the machine with a 2 ms engage cost. */
static void light_and_heavy(void) {
    static hy_sched_model m;
    machine(&m, 2e-3);
    int J = 2 * m.resources;
    const hy_sched_policy_class* const* pol = hy_sched_policy_list();
    for (int q = 0; pol[q]; q++) {
        hy_sched_options o;
        hy_sched_options_default(&o);
        o.lp_timeout = 0;
        hy_sched_policy* p = NULL;
        CHECK_OK(hy_sched_policy_create(pol[q]->name, &o, &p));
        if (!p) continue;
        static hy_sched_problem prob;
        static hy_sched_assignment a;
        /* 40 node pairs and 200 tests: some 150 us on the CPU, far below
         * the GPU's 2 ms */
        hy_sched_problem_init(&prob, &m);
        prob.jobs[hy_job_type(0, HY_JOB_TRAVERSE)] = 40;
        prob.jobs[hy_job_type(0, HY_JOB_LEAF)] = 200;
        CHECK_OK(hy_sched_policy_assign(p, &prob, &a));
        CHECK(gpu_jobs(&a, 1, J) == 0);
        CHECK(a.makespan < 2e-3);
        if (!strcmp(pol[q]->name, "lp")) {
            /* 400,000 tests: 235 ms on the CPU, the GPU pays its 2 ms */
            prob.jobs[hy_job_type(0, HY_JOB_LEAF)] = 400000;
            CHECK_OK(hy_sched_policy_assign(p, &prob, &a));
            CHECK(gpu_jobs(&a, 1, J) > 0);
            CHECK(hy_sched_finish(&prob, &a, 1) >= 2e-3);
            /* engaged, the same GPU takes a light set's tests: 200 tests
             * cost it 20 + 200·(0.042 + 0.027) us against the CPU's 10 +
             * 200·0.588 */
            prob.jobs[hy_job_type(0, HY_JOB_TRAVERSE)] = 0;
            prob.jobs[hy_job_type(0, HY_JOB_LEAF)] = 200;
            prob.engaged[1] = 1;
            prob.engaged[2] = 1;
            CHECK_OK(hy_sched_policy_assign(p, &prob, &a));
            CHECK(gpu_jobs(&a, 1, J) > 0);
            CHECK(a.makespan < 1e-4);
        }
        hy_sched_policy_destroy(p);
    }
}

/* ---- the framework on synthetic jobs: each TRAVERSE job makes `fan` LEAF
 * jobs */

typedef struct work {
    int64_t fan;
    int64_t leaves;
    double sleep_first; /* seconds the first batch of a run sleeps (real clock) */
    int batches;
} work;

static void sleep_s(double s) {
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static hy_status traverse(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    work* w = ctx;
    (void)r;
    (void)res;
    if (w->batches++ == 0 && w->sleep_first > 0.0) sleep_s(w->sleep_first);
    b->made = b->n * w->fan;
    w->leaves += b->made;
    return HY_OK;
}

static hy_status leaf(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    work* w = ctx;
    (void)r;
    (void)res;
    if (w->batches++ == 0 && w->sleep_first > 0.0) sleep_s(w->sleep_first);
    return HY_OK;
}

static const hy_job_kind_ops kinds[HY_JOB_KINDS] = {{.name = "TRAVERSE", .run = {traverse}}, {.name = "LEAF", .run = {leaf}}};

static void framework(void) {
    static hy_sched_model prof;
    hy_sched_model_init(&prof);
    hy_device_profile d;
    CHECK_OK(hy_device_profile_builtin("gtx480", &d));
    snprintf(d.name, sizeof d.name, "gtx480-fixed");
    d.engage = 2e-3;
    CHECK_OK(hy_sched_model_add(&prof, &d));
    const hy_sched_policy_class* const* pol = hy_sched_policy_list();
    for (int q = 0; pol[q]; q++) {
        hy_prox_config c;
        memset(&c, 0, sizeof c);
        c.policy = pol[q]->name;
        c.devices = "model:cpu-m1,model:gtx480-fixed";
        c.clock = HY_CLOCK_VIRTUAL;
        c.profiles = &prof;
        hy_sched_options_default(&c.options);
        c.options.lp_timeout = 0;
        hy_prox* x = NULL;
        CHECK_OK(hy_prox_create(&c, &x));
        if (!x) continue;
        /* light: 30 node pairs making 5 tests each, twice */
        work w = {.fan = 5};
        hy_prox_work pw = {&w, kinds, 0};
        for (int run = 0; run < 2; run++) CHECK_OK(hy_prox_run(x, 30, &pw));
        const hy_prox_stats* st = hy_prox_stats_get(x);
        CHECK(w.leaves == 300);
        CHECK(st->jobs[1][0] + st->jobs[1][1] == 0);
        CHECK(st->busy[1] == 0.0);
        if (!strcmp(pol[q]->name, "lp")) {
            /* heavy: 5,000 node pairs making 80 tests each; the GPU's
             * engage cost charged once in the run, not per batch */
            hy_prox_stats_reset(x);
            w.fan = 80;
            CHECK_OK(hy_prox_run(x, 5000, &pw));
            st = hy_prox_stats_get(x);
            CHECK(st->jobs[1][HY_JOB_LEAF] > 0);
            double setups = st->setup[1] - 2e-3;
            fprintf(stderr, "lp, heavy: gpu busy %.3f ms, setups beyond engage %.1f us\n", 1e3 * st->busy[1],
                    1e6 * setups);
            CHECK(setups >= 0.0 && setups < 1e-3);
            CHECK(st->busy[1] >= 2e-3);
        }
        hy_prox_destroy(x);
    }
}

/* The real cpu resource, profiled as a GPU (kind gpu: the resources that
 * learn an engage cost), whose first batch of every run sleeps 3 ms. */
static void learned(void) {
    for (int kind = 0; kind < 2; kind++) {
        static hy_sched_model prof;
        hy_sched_model_init(&prof);
        hy_device_profile d;
        memset(&d, 0, sizeof d);
        snprintf(d.name, sizeof d.name, "cpu");
        d.kind = kind ? HY_DEVICE_GPU : HY_DEVICE_CPU;
        d.cores = 1;
        d.cost[HY_JOB_TRAVERSE] = (hy_device_costs){5e-6, 1e-6, 0.0, 0.0};
        d.cost[HY_JOB_LEAF] = (hy_device_costs){5e-6, 1e-6, 0.0, 0.0};
        CHECK_OK(hy_sched_model_add(&prof, &d));
        hy_prox_config c;
        memset(&c, 0, sizeof c);
        c.devices = "cpu";
        c.clock = HY_CLOCK_REAL;
        c.profiles = &prof;
        hy_sched_options_default(&c.options);
        hy_prox* x = NULL;
        CHECK_OK(hy_prox_create(&c, &x));
        if (!x) continue;
        for (int run = 0; run < 4; run++) {
            work w = {.fan = 3, .sleep_first = 3e-3};
            hy_prox_work pw = {&w, kinds, 0};
            CHECK_OK(hy_prox_run(x, 100, &pw));
        }
        double e = hy_prox_model(x)->device[0].engage;
        fprintf(stderr, "learned engage (kind %s): %.3f ms\n", kind ? "gpu" : "cpu", 1e3 * e);
        /* the sleep is at least 3 ms; the batches' own work is microseconds */
        if (kind)
            CHECK(e >= 2.5e-3 && e <= 0.05);
        else
            CHECK(e == 0.0);
        hy_prox_destroy(x);
    }
}

static void json(void) {
    hy_device_profile d, back;
    CHECK_OK(hy_device_profile_builtin("gtx285", &d));
    d.engage = 1.5e-3;
    cJSON* j = hy_device_profile_to_json(&d);
    CHECK(j != NULL);
    if (!j) return;
    CHECK(cJSON_GetNumberValue(cJSON_GetObjectItemCaseSensitive(j, "engage_us")) == 1500.0);
    CHECK_OK(hy_device_profile_from_json(j, "round trip", &back));
    CHECK_NEAR(back.engage, 1.5e-3, 1e-15);
    cJSON_SetNumberHelper(cJSON_GetObjectItemCaseSensitive(j, "engage_us"), -4.0);
    CHECK(hy_device_profile_from_json(j, "bad.json", &back) == HY_ERR_PARSE);
    CHECK(strstr(hy_last_error(), "bad.json") && strstr(hy_last_error(), "engage_us"));
    cJSON_Delete(j);
    /* no engage: the field is left out and reads back as 0 */
    d.engage = 0.0;
    j = hy_device_profile_to_json(&d);
    CHECK(j && !cJSON_GetObjectItemCaseSensitive(j, "engage_us"));
    if (j) CHECK_OK(hy_device_profile_from_json(j, "zero", &back));
    CHECK(back.engage == 0.0);
    cJSON_Delete(j);
    hy_sched_model m;
    hy_sched_model_init(&m);
    d.engage = -1.0;
    CHECK(hy_sched_model_add(&m, &d) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "engage_us") != NULL);
}

int main(void) {
    random_problems();
    light_and_heavy();
    framework();
    learned();
    json();
    TEST_END();
}
