/* Under the real clock, GPUs and modeled devices are fed by host threads of
 * their own while the caller's thread schedules and runs the CPU's
 * batches (sched/proximity.h, concurrency; sched/backend.h, batches in
 * parts). This test runs that concurrent path where no GPU is, on modeled
 * devices (and under ThreadSanitizer in `make test-tsan`):
 * - the framework on synthetic jobs, every policy: each job runs exactly
 *   once; a batch's preparation and finish run on the caller's thread and
 *   its device part on another; the makespan is the measured wall time;
 *   a device part answering HY_ERR_UNSUPPORTED has the host run the batch;
 *   a device part failing ends the run with its error, every stage freed;
 *   an injected fault on a fed device retires it and the jobs still run
 *   once;
 * - a colliding scene on modeled devices (and the real cpu beside them),
 *   whose collision batches run in parts (the kernels' C twins on the devices' threads): the state hash
 *   after every step equals the CPU-only run's and the virtual clock's,
 *   with and without a device failing mid-run, and each modeled GPU
 *   reports the bytes a GPU would move (never more than gathered jobs). */
#include <pthread.h>
#include <unistd.h>
#include <stdatomic.h>
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

#define MAX_TRAVERSE 400
#define FAN 5

typedef struct jobs {
    pthread_t caller;
    int traverse_runs[MAX_TRAVERSE];
    int leaf_runs[MAX_TRAVERSE * FAN];
    int64_t leaves;
    /* written by device parts on the feeders: atomics */
    atomic_int device_calls, device_on_caller, stage_count;
    int prepare_off_caller, finish_off_caller;
    int fail_at;        /* the device call that fails (0: none) */
    int unsupported_at; /* the device call that answers HY_ERR_UNSUPPORTED (0: none) */
    int host_batches;
} jobs;

typedef struct stage {
    int64_t n;
    int64_t* made; /* TRAVERSE: per id, LEAF jobs it makes */
} stage;

static int64_t makes(int64_t id) { return id % FAN + 1; }

static hy_status host_traverse(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    jobs* g = ctx;
    (void)r;
    (void)res;
    g->host_batches++;
    for (int64_t k = 0; k < b->n; k++) {
        g->traverse_runs[b->ids[k]]++;
        b->made += makes(b->ids[k]);
    }
    g->leaves += b->made;
    return HY_OK;
}

static hy_status host_leaf(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    jobs* g = ctx;
    (void)r;
    (void)res;
    g->host_batches++;
    for (int64_t k = b->first; k < b->first + b->n; k++) g->leaf_runs[k]++;
    return HY_OK;
}

static hy_status prepare(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    jobs* g = ctx;
    (void)r;
    (void)res;
    g->prepare_off_caller |= !pthread_equal(pthread_self(), g->caller);
    stage* st = calloc(1, sizeof *st);
    if (!st) return hy_fail(HY_ERR_NOMEM, "stage");
    st->n = b->n;
    st->made = calloc((size_t)b->n + 1, sizeof(int64_t));
    b->stage = st;
    atomic_fetch_add(&g->stage_count, 1);
    return HY_OK;
}

/* The device part: TRAVERSE works out what each id makes; LEAF nothing but
 * the call. Touches the stage only. */
static hy_status device(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    jobs* g = ctx;
    (void)r;
    (void)res;
    int call = atomic_fetch_add(&g->device_calls, 1) + 1;
    if (pthread_equal(pthread_self(), g->caller)) atomic_fetch_add(&g->device_on_caller, 1);
    if (call == g->fail_at) return hy_fail(HY_ERR_INTERNAL, "device part %d failed", call);
    if (call == g->unsupported_at) return hy_fail(HY_ERR_UNSUPPORTED, "device part %d declined", call);
    stage* st = b->stage;
    if (b->kind == HY_JOB_TRAVERSE)
        for (int64_t k = 0; k < b->n; k++) st->made[k] = makes(b->ids[k]);
    return HY_OK;
}

static hy_status finish(void* ctx, int r, const hy_resource* res, hy_batch* b) {
    jobs* g = ctx;
    (void)r;
    (void)res;
    g->finish_off_caller |= !pthread_equal(pthread_self(), g->caller);
    stage* st = b->stage;
    if (!b->status) {
        if (b->kind == HY_JOB_TRAVERSE) {
            for (int64_t k = 0; k < b->n; k++) {
                g->traverse_runs[b->ids[k]]++;
                b->made += st->made[k];
            }
            g->leaves += b->made;
        } else {
            for (int64_t k = b->first; k < b->first + b->n; k++) g->leaf_runs[k]++;
        }
    }
    free(st->made);
    free(st);
    b->stage = NULL;
    atomic_fetch_sub(&g->stage_count, 1);
    return b->status;
}

static const hy_job_kind_ops kinds[HY_JOB_KINDS] = {
    {.name = "TRAVERSE",
     .run = {[HY_RESOURCE_CPU] = host_traverse, [HY_RESOURCE_MODEL] = prepare},
     .device = {[HY_RESOURCE_MODEL] = device},
     .finish = {[HY_RESOURCE_MODEL] = finish}},
    {.name = "LEAF",
     .run = {[HY_RESOURCE_CPU] = host_leaf, [HY_RESOURCE_MODEL] = prepare},
     .device = {[HY_RESOURCE_MODEL] = device},
     .finish = {[HY_RESOURCE_MODEL] = finish}},
};

static hy_prox* make(const char* policy, const char* fault) {
    hy_prox_config c;
    memset(&c, 0, sizeof c);
    c.policy = policy;
    c.devices = "model:cpu-m1,model:gtx285,model:gtx480";
    c.clock = HY_CLOCK_REAL;
    c.fault = fault;
    hy_sched_options_default(&c.options);
    if (!strncmp(policy, "ws", 2)) c.options.ws_grain = 32; /* several batches each */
    hy_prox* x = NULL;
    CHECK_OK(hy_prox_create(&c, &x));
    return x;
}

/* One run of n TRAVERSE jobs; the status, and in *once whether every job
 * ran exactly once. */
static hy_status run(hy_prox* x, jobs* g, int64_t n, int* once, double* wall) {
    memset(g->traverse_runs, 0, sizeof g->traverse_runs);
    memset(g->leaf_runs, 0, sizeof g->leaf_runs);
    g->leaves = 0;
    g->caller = pthread_self();
    hy_prox_work w = {g, kinds, 0};
    double t0 = hy_sched_now();
    hy_status s = hy_prox_run(x, n, &w);
    *wall = hy_sched_now() - t0;
    int64_t expect = 0;
    int ok = 1;
    for (int64_t i = 0; i < n; i++) {
        expect += makes(i);
        ok &= g->traverse_runs[i] == 1;
    }
    ok &= g->leaves == expect;
    for (int64_t i = 0; i < g->leaves && i < MAX_TRAVERSE * FAN; i++) ok &= g->leaf_runs[i] == 1;
    *once = ok;
    return s;
}

static void framework(void) {
    const hy_sched_policy_class* const* pol = hy_sched_policy_list();
    for (int q = 0; pol[q]; q++) {
        if (pol[q]->evaluation_only) continue;
        static jobs g;
        memset(&g, 0, sizeof g);
        hy_prox* x = make(pol[q]->name, NULL);
        if (!x) continue;
        int once = 0;
        double wall = 0.0, walls = 0.0;
        for (int k = 0; k < 3; k++) {
            CHECK_OK(run(x, &g, MAX_TRAVERSE, &once, &wall));
            CHECK(once);
            walls += wall;
        }
        const hy_prox_stats* st = hy_prox_stats_get(x);
        /* every batch ran in parts: the device part on a feeder */
        CHECK(g.device_calls > 0 && g.device_on_caller == 0);
        CHECK(g.prepare_off_caller == 0 && g.finish_off_caller == 0);
        CHECK(g.host_batches == 0);
        CHECK(g.stage_count == 0);
        CHECK(st->runs == 3);
        /* the makespan is the runs' wall time, measured inside them */
        CHECK(st->makespan > 0.0 && st->makespan <= walls);
        int used = 0;
        for (int i = 0; i < 3; i++) used += st->jobs[i][0] + st->jobs[i][1] > 0;
        fprintf(stderr, "%-6s %d device parts, %d resources used, makespan %.3f ms over 3 runs\n", pol[q]->name,
                (int)g.device_calls, used, 1e3 * st->makespan);
        CHECK(used >= 2);

        /* a device part that declines: the host runs that batch */
        memset(&g, 0, sizeof g);
        g.unsupported_at = 2;
        CHECK_OK(run(x, &g, MAX_TRAVERSE, &once, &wall));
        CHECK(once);
        CHECK(g.host_batches == 1);
        CHECK(g.stage_count == 0);

        /* a device part that fails on a modeled device: the run ends with
         * its error, every batch out on a feeder finished first */
        memset(&g, 0, sizeof g);
        g.fail_at = 3;
        hy_status s = run(x, &g, MAX_TRAVERSE, &once, &wall);
        CHECK(s == HY_ERR_INTERNAL);
        CHECK(strstr(hy_last_error(), "device part 3 failed") != NULL);
        CHECK(g.stage_count == 0);
        hy_prox_destroy(x);

        /* an injected fault on a fed device: retired, the jobs run once */
        memset(&g, 0, sizeof g);
        x = make(pol[q]->name, "model:gtx285@1");
        if (!x) continue;
        hy_prox_begin_step(x, 1);
        CHECK_OK(run(x, &g, MAX_TRAVERSE, &once, &wall));
        CHECK(once);
        if (hy_prox_failures(x) == 1) CHECK(strstr(hy_prox_failure(x), "model:gtx285") != NULL);
        CHECK(g.stage_count == 0);
        hy_prox_destroy(x);
    }
}

/* ---- a colliding scene */

#define STEPS 6

/* Per step, the bytes each modeled GPU reports moving: a TRAVERSE job's
 * start pair (12 bytes) and each LEAF job up, by reference (32 bytes, and
 * the positions, 48 bytes a vertex, where its copy is stale and a batch
 * saves more than they cost) or gathered (208 bytes): never more than
 * gathering every job, never less than referring to every one; down at
 * least a LEAF job's 9-byte answer. CPUs (the real one, modeled ones) move
 * nothing. 1 when every resource agrees. */
static int bytes_agree(hy_world* w) {
    hy_sched_stats ss;
    hy_resource_stats rs[3];
    int64_t up[3], down[3];
    int32_t n = 0, m = 0;
    CHECK_OK(hy_world_get_sched_stats(w, &ss, rs, 3, &n));
    CHECK_OK(hy_world_get_transfer_bytes(w, up, down, 3, &m));
    int ok = n == m;
    for (int i = 0; i < n && i < 3; i++) {
        int gpu = rs[i].modeled && strcmp(rs[i].name, "model:cpu-m1") != 0;
        int64_t lo = 32 * rs[i].leaf_jobs + 12 * rs[i].traverse_jobs, hi = 208 * rs[i].leaf_jobs + 12 * rs[i].traverse_jobs;
        int fine = gpu ? up[i] >= lo && up[i] <= hi && down[i] >= 9 * rs[i].leaf_jobs : up[i] == 0 && down[i] == 0;
        if (!fine) {
            fprintf(stderr, "%s: %lld bytes up, %lld down for %lld LEAF and %lld TRAVERSE jobs\n", rs[i].name,
                    (long long)up[i], (long long)down[i], (long long)rs[i].leaf_jobs, (long long)rs[i].traverse_jobs);
            ok = 0;
        }
    }
    return ok;
}

/* A profile of the real cpu resource (for device lists that mix it with
 * modeled devices), written to a temporary file; "" when it cannot be. */
static char g_profile[64];
static void write_profile(void) {
    snprintf(g_profile, sizeof g_profile, "/tmp/hyphys-test-feed-XXXXXX");
    int fd = mkstemp(g_profile);
    FILE* f = fd >= 0 ? fdopen(fd, "w") : NULL;
    CHECK(f != NULL);
    if (!f) {
        g_profile[0] = '\0';
        return;
    }
    fprintf(f, "{\"devices\": [{\"name\": \"cpu\", \"kind\": \"cpu\", \"cores\": 2,"
               " \"traverse\": {\"setup_us\": 5, \"proc_us\": 0.2, \"upload_us\": 0, \"download_us\": 0},"
               " \"leaf\": {\"setup_us\": 5, \"proc_us\": 0.5, \"upload_us\": 0, \"download_us\": 0}}]}\n");
    fclose(f);
}

static void run_scene(const char* devices, const char* policy, int virtual_clock, const char* fault,
                      uint64_t hash[STEPS], int* failures) {
    memset(hash, 0, sizeof(uint64_t) * STEPS);
    *failures = 0;
    hy_world* w = hy_test_cloth_ball_world(1);
    if (!w) return;
    if (devices) {
        hy_sched_def d = hy_sched_def_default();
        d.policy = policy;
        d.devices = devices;
        d.virtual_clock = virtual_clock;
        d.fault = fault;
        if (!strncmp(devices, "cpu,", 4)) d.profile = g_profile;
        CHECK_OK(hy_world_set_scheduling(w, &d));
    }
    int agree = 1;
    for (int k = 0; k < STEPS; k++) {
        CHECK_OK(hy_test_step(w));
        hash[k] = hy_test_hash(w);
        if (devices && !fault) agree &= bytes_agree(w);
    }
    CHECK(agree);
    hy_sched_info info;
    CHECK_OK(hy_world_get_scheduling(w, &info));
    *failures = info.failures;
    hy_world_destroy(w);
}

static void scene(void) {
    static const char* devices = "model:cpu-m1,model:gtx285,model:gtx480";
    uint64_t ref[STEPS], h[STEPS];
    int failures = 0;
    run_scene(NULL, NULL, 0, NULL, ref, &failures);
    const char* policies[] = {"lp", "ws"};
    for (int q = 0; q < 2; q++) {
        run_scene(devices, policies[q], 0, NULL, h, &failures);
        CHECK(memcmp(ref, h, sizeof ref) == 0);
        CHECK(failures == 0);
        run_scene(devices, policies[q], 1, NULL, h, &failures);
        CHECK(memcmp(ref, h, sizeof ref) == 0);
        run_scene(devices, policies[q], 0, "model:gtx480@3", h, &failures);
        CHECK(memcmp(ref, h, sizeof ref) == 0);
        fprintf(stderr, "scene, %s: hash %016llx on fed devices, virtual clock and a failure (%d)\n", policies[q],
                (unsigned long long)ref[STEPS - 1], failures);
    }
    /* the cpu's batches on the pool beside the fed devices' threads */
    write_profile();
    if (g_profile[0]) {
        run_scene("cpu,model:gtx285,model:gtx480", "lp", 0, NULL, h, &failures);
        CHECK(memcmp(ref, h, sizeof ref) == 0);
        remove(g_profile);
    }
}

int main(void) {
    framework();
    scene();
    TEST_END();
}
