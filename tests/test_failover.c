/* A resource that fails during a run (hy_prox_config.fault, the injected
 * fault that stands for a device's error) is retired and the run goes on:
 * - the framework alone, on synthetic jobs, for every policy: the fault
 *   strikes the resource's next batch after it has run one (jobs it made,
 *   jobs waiting for it), yet every TRAVERSE and LEAF job runs exactly once,
 *   the resource gets no job afterwards, in this run or the next, and one
 *   line names it; a fault on the host moves the initial jobs elsewhere;
 * - bad fault specifications, and a fault on the only resource, are
 *   refused, naming what is wrong;
 * - a colliding scene on modeled devices: the state hash after every step
 *   and the contacts equal those of the run without the fault, for every
 *   policy, whichever resource fails. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "hyphys/hyphys.h"
#include "sched/proximity.h"
#include "test.h"
#include "tests/world_step.h"
#include "scene_cloth_ball.h"

/* ---- the framework alone */

typedef struct jobs {
    hy_prox* x;
    int target;             /* the resource the fault is armed for */
    int64_t traverse_count; /* initial TRAVERSE jobs */
    int traverse_runs[512]; /* per TRAVERSE id: times run */
    int64_t leaves;         /* LEAF jobs made */
    int leaf_runs[512 * 6]; /* per LEAF id: times run */
    int64_t after[HY_SCHED_MAX_RESOURCES]; /* jobs run per resource after the failure */
} jobs;

static int64_t makes(int64_t id) { return id % 6; } /* LEAF jobs a TRAVERSE job makes */

static void note(jobs* g, int r, int64_t n) {
    if (hy_prox_failures(g->x) > 0) g->after[r] += n;
}

static hy_status traverse(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    jobs* g = ctx;
    (void)res;
    for (int64_t k = 0; k < b->n; k++) {
        g->traverse_runs[b->ids[k]]++;
        b->made += makes(b->ids[k]);
    }
    g->leaves += b->made;
    note(g, r, b->n);
    /* the next step begins for the target once it has run a batch: its
     * next batch fails, with what it made not yet run */
    if (r == g->target) hy_prox_begin_step(g->x, 2);
    return HY_OK;
}

static hy_status leaf(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    jobs* g = ctx;
    (void)res;
    for (int64_t k = b->first; k < b->first + b->n; k++) g->leaf_runs[k]++;
    note(g, r, b->n);
    if (r == g->target) hy_prox_begin_step(g->x, 2);
    return HY_OK;
}

static const hy_job_kind_ops kinds[HY_JOB_KINDS] = {{.name = "TRAVERSE", .run = {traverse}}, {.name = "LEAF", .run = {leaf}}};

/* One run of n TRAVERSE jobs; 1 when every job ran exactly once. */
static int run_once(jobs* g, int64_t n) {
    memset(g->traverse_runs, 0, sizeof g->traverse_runs);
    memset(g->leaf_runs, 0, sizeof g->leaf_runs);
    g->leaves = 0;
    g->traverse_count = n;
    hy_prox_work w = {g, kinds, 0};
    hy_status s = hy_prox_run(g->x, n, &w);
    CHECK_OK(s);
    if (s) return 0;
    int64_t expect = 0;
    int once = 1;
    for (int64_t i = 0; i < n; i++) {
        expect += makes(i);
        once &= g->traverse_runs[i] == 1;
    }
    CHECK(g->leaves == expect);
    for (int64_t i = 0; i < g->leaves; i++) once &= g->leaf_runs[i] == 1;
    return once && g->leaves == expect;
}

static void framework(void) {
    static const char* devices = "model:cpu-m1,model:gtx285,model:gtx480";
    static const char* names[3] = {"model:cpu-m1", "model:gtx285", "model:gtx480"};
    const hy_sched_policy_class* const* pol = hy_sched_policy_list();
    int cases = 0;
    for (int p = 0; pol[p]; p++)
        for (int target = 0; target < 3; target++) {
            hy_prox_config c;
            memset(&c, 0, sizeof c);
            c.policy = pol[p]->name;
            c.devices = devices;
            c.clock = HY_CLOCK_VIRTUAL;
            hy_sched_options_default(&c.options);
            c.options.lp_timeout = 0;
            if (!strncmp(pol[p]->name, "ws", 2)) c.options.ws_grain = 16; /* several batches each */
            char fault[64];
            snprintf(fault, sizeof fault, "%s@2", names[target]);
            c.fault = fault;
            static jobs g;
            memset(&g, 0, sizeof g);
            g.target = target;
            CHECK_OK(hy_prox_create(&c, &g.x));
            if (!g.x) continue;
            hy_prox_begin_step(g.x, 1);
            int64_t n = !strcmp(pol[p]->name, "exhaustive") ? 60 : 500;
            int once = run_once(&g, n);
            int failed = hy_prox_failures(g.x) == 1 && hy_prox_resource(g.x, target)->retired;
            /* the policy may give the target nothing: then nothing fails */
            if (!failed) {
                CHECK(once);
                CHECK(hy_prox_failures(g.x) == 0 && hy_prox_failure(g.x)[0] == '\0');
                hy_prox_destroy(g.x);
                continue;
            }
            cases++;
            if (!once) fprintf(stderr, "  a job ran other than once: policy %s, %s failing\n", pol[p]->name, fault);
            CHECK(once);
            CHECK(strstr(hy_prox_failure(g.x), names[target]) != NULL);
            CHECK(strstr(hy_prox_failure(g.x), "step 2") != NULL);
            CHECK(g.after[target] == 0);
            /* the next run: the others only */
            CHECK(run_once(&g, n));
            CHECK(g.after[target] == 0);
            int64_t others = 0;
            for (int r = 0; r < 3; r++) others += r == target ? 0 : g.after[r];
            CHECK(others > 0);
            CHECK(hy_prox_failures(g.x) == 1);
            char desc[256];
            hy_prox_describe(g.x, desc, sizeof desc);
            CHECK(strstr(desc, "(failed)") != NULL);
            hy_prox_destroy(g.x);
        }
    fprintf(stderr, "framework: %d runs with a resource failing mid-run\n", cases);
    CHECK(cases >= 10); /* most policies give every resource work here */
}

static void refused(void) {
    static const struct {
        const char* devices;
        const char* fault;
        const char* says;
    } bad[] = {
        {"model:cpu-m1,model:gtx285", "model:gtx480@2", "no resource 'model:gtx480'"},
        {"model:cpu-m1,model:gtx285", "model:gtx285@0", "DEVICE@STEP"},
        {"model:cpu-m1,model:gtx285", "model:gtx285", "DEVICE@STEP"},
        {"model:cpu-m1,model:gtx285", "@3", "DEVICE@STEP"},
        {"model:cpu-m1,model:gtx285", "model:gtx285@3x", "DEVICE@STEP"},
        {"model:gtx285", "model:gtx285@1", "only resource"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        hy_prox_config c;
        memset(&c, 0, sizeof c);
        c.devices = bad[k].devices;
        c.clock = HY_CLOCK_VIRTUAL;
        c.fault = bad[k].fault;
        hy_sched_options_default(&c.options);
        hy_prox* x = NULL;
        CHECK(hy_prox_create(&c, &x) == HY_ERR_INVALID_ARG);
        CHECK(x == NULL);
        CHECK(strstr(hy_last_error(), bad[k].says) != NULL);
        hy_prox_destroy(x);
    }
}

/* ---- a colliding scene */

#define STEPS 8

typedef struct outcome {
    uint64_t hash[STEPS];
    int64_t contacts;
    int32_t failures;
    int32_t retired[3];
    int64_t jobs_after[3]; /* each resource's jobs in the steps after the failure */
    char failure[320];
} outcome;

static void run_scene(const char* policy, const char* fault, outcome* out) {
    memset(out, 0, sizeof *out);
    hy_world* w = hy_test_cloth_ball_world(1);
    if (!w) return;
    hy_sched_def d = hy_sched_def_default();
    d.policy = policy;
    d.devices = "model:cpu-m1,model:gtx285,model:gtx480";
    d.virtual_clock = 1;
    d.fault = fault;
    CHECK_OK(hy_world_set_scheduling(w, &d));
    hy_contact_info ci[4096];
    for (int k = 0; k < STEPS; k++) {
        CHECK_OK(hy_test_step(w));
        out->hash[k] = hy_test_hash(w);
        int64_t n = 0;
        CHECK_OK(hy_world_get_contacts(w, ci, 4096, &n));
        out->contacts += n;
        hy_sched_info info;
        CHECK_OK(hy_world_get_scheduling(w, &info));
        hy_sched_stats ss;
        hy_resource_stats rs[3];
        int32_t nr = 0;
        CHECK_OK(hy_world_get_sched_stats(w, &ss, rs, 3, &nr));
        for (int i = 0; i < nr && i < 3; i++)
            if (out->failures > 0) out->jobs_after[i] += rs[i].traverse_jobs + rs[i].leaf_jobs;
        out->failures = info.failures;
        for (int i = 0; i < 3; i++) out->retired[i] = info.resource[i].retired;
        snprintf(out->failure, sizeof out->failure, "%s", info.failure);
    }
    hy_world_destroy(w);
}

static void scene(void) {
    static const char* names[3] = {"model:cpu-m1", "model:gtx285", "model:gtx480"};
    const hy_sched_policy_class* const* pol = hy_sched_policy_list();
    int quick = getenv("HY_TEST_SANITIZER") != NULL;
    for (int p = 0; pol[p]; p++) {
        if (pol[p]->evaluation_only || (quick && strcmp(pol[p]->name, "lp"))) continue;
        outcome ref, o;
        run_scene(pol[p]->name, NULL, &ref);
        CHECK(ref.contacts > 100 && ref.failures == 0);
        for (int target = 0; target < 3; target++) {
            char fault[64];
            snprintf(fault, sizeof fault, "%s@3", names[target]);
            run_scene(pol[p]->name, fault, &o);
            int same = memcmp(ref.hash, o.hash, sizeof ref.hash) == 0 && ref.contacts == o.contacts;
            if (!same) fprintf(stderr, "  differs: policy %s, fault %s\n", pol[p]->name, fault);
            CHECK(same);
            CHECK(o.failures == 1);
            CHECK(o.retired[target] == 1 && o.retired[(target + 1) % 3] == 0);
            CHECK(strstr(o.failure, names[target]) != NULL);
            CHECK(o.jobs_after[target] == 0);
            CHECK(o.jobs_after[(target + 1) % 3] + o.jobs_after[(target + 2) % 3] > 0);
        }
        fprintf(stderr, "scene, policy %s: hash %016llx with and without each fault\n", pol[p]->name,
                (unsigned long long)ref.hash[STEPS - 1]);
    }
}

int main(void) {
    framework();
    refused();
    scene();
    TEST_END();
}
