/* Tests GPU PUs in the integration runtime's team (runtime/team.h) through
 * host twins of a device (a GPU PU of device -1: its thread calls the
 * kinds' cuda_fn, which here is the CPU arithmetic, with the arguments in
 * the PU's memory of the data layer):
 * - placement: under round robin the odd partitions run on the GPU PU,
 *   through cuda_fn, with copies other than the host's (unless the kind
 *   asks for them on the host), and hy_rt_current_device() names the PU's
 *   device there and -1 elsewhere;
 * - valid bits and transfers: after each run every handle is valid on the
 *   host, a handle a GPU task wrote is valid on its memory too, and the
 *   channel carries the bytes the data layer's rules give: the first step
 *   uploads the GPU partitions' states and parameters and brings the states
 *   back, the next steps only bring the states back;
 * - the same results as a CPU-only team and the single-thread executor
 *   under every policy, a kind without cuda_fn never on the GPU PU, a kind
 *   without cpu_fn running on a team that has one, and PU lists parsed;
 * - the engine: a small world of FEM, mass-spring and cloth objects whose
 *   integration has a twin GPU PU ends with the CPU-only state hash and CG
 *   count, with tasks run on the GPU PU; asking for cuda:0 where this
 *   build or machine has no GPU leaves it out with one line saying why;
 * - transfers a host-driven cuda_fn makes itself (hy_rt_count_transfer)
 *   are counted on its PU's channel, per step; a CPU task's are not;
 * - device memories: a memory placed on cuda:0 holds its copies in the
 *   GPU where there is one (a round trip host -> GPU -> host brings the
 *   data back, the channel counting both ways), host buffers where there
 *   is none (the same bits and counts); the host memory cannot be placed;
 * - batches: four small free solids (3 FEM, 1 mass-spring, each vertex
 *   moving its own way) step as one batch task; on the twin GPU PU their CG
 *   runs in lockstep (solvers/batch_step.h) and the world ends with the
 *   CPU-only hash and CG count; with two twins, two batches; on cuda:0
 *   with no GPU the batch's GPU fails, is said once, its objects step on
 *   the CPU with the same hash. */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/hash.h"
#include "engine/integrate.h"
#include "engine/kinds.h"
#include "engine/world.h"
#include "hyphys/hyphys.h"
#include "runtime/data_cuda.h"
#include "runtime/exec.h"
#include "runtime/team.h"
#include "sched/cuda.h"
#include "test.h"
#include "tests/world_step.h"

#define NOBJ 6
#define NV 64
#define STEPS 3

/* One object: its state (read-write) and parameters (read). */
typedef struct obj {
    double x[NV];
    double k[4];
} obj;

typedef struct call_log {
    atomic_int cpu[NOBJ], gpu[NOBJ];
    atomic_int bad_device;  /* cuda_fn saw a device other than its PU's, or a CPU PU saw one */
    atomic_int host_copy;   /* cuda_fn got the host's copy where it should not have */
    atomic_int device_copy; /* ... a device copy where the kind asked for the host's */
} call_log;

static call_log g_log;
static obj g_obj[NOBJ];
static int g_expect_device = -1;

typedef struct targ {
    int32_t p;
} targ;
static targ g_arg[NOBJ];

/* x <- x + k0 sin(k1 x) + neighbour-free damping: arithmetic whose bits
 * show any missed or repeated step. */
static void step_math(double* x, const double* k) {
    for (int i = 0; i < NV; i++) x[i] = x[i] * k[2] + k[0] * sin(k[1] * x[i]) + k[3];
}

static void step_cpu(void* const* b, void* arg) {
    const targ* a = arg;
    atomic_fetch_add(&g_log.cpu[a->p], 1);
    if (hy_rt_current_device() != -1) atomic_fetch_add(&g_log.bad_device, 1);
    step_math(b[0], b[1]);
}

static void step_gpu(void* const* b, void* arg) {
    const targ* a = arg;
    atomic_fetch_add(&g_log.gpu[a->p], 1);
    if (hy_rt_current_device() != g_expect_device) atomic_fetch_add(&g_log.bad_device, 1);
    if (b[0] == g_obj[a->p].x || b[1] == g_obj[a->p].k) atomic_fetch_add(&g_log.host_copy, 1);
    step_math(b[0], b[1]);
}

static void step_gpu_hosted(void* const* b, void* arg) {
    const targ* a = arg;
    atomic_fetch_add(&g_log.gpu[a->p], 1);
    if (b[0] != g_obj[a->p].x || b[1] != g_obj[a->p].k) atomic_fetch_add(&g_log.device_copy, 1);
    step_math(b[0], b[1]);
}

static const hy_rt_kind k_step = {"step", 2, {HY_RT_RW, HY_RT_R}, step_cpu, step_gpu, 0};
static const hy_rt_kind k_cpu_only = {"step-cpu", 2, {HY_RT_RW, HY_RT_R}, step_cpu, NULL, 0};
static const hy_rt_kind k_gpu_only = {"step-gpu", 2, {HY_RT_RW, HY_RT_R}, NULL, step_gpu, 0};
static const hy_rt_kind k_hosted = {"step-hosted", 2, {HY_RT_RW, HY_RT_R}, step_cpu, step_gpu_hosted, 3u};

/* A host-driven implementation that says what it moved itself (1000
 * bytes a task); the CPU's says 777, which nothing counts. */
static void step_cpu_says(void* const* b, void* arg) {
    hy_rt_count_transfer(777);
    step_cpu(b, arg);
}

static void step_gpu_says(void* const* b, void* arg) {
    hy_rt_count_transfer(1000);
    step_gpu_hosted(b, arg);
}

static const hy_rt_kind k_says = {"step-says", 2, {HY_RT_RW, HY_RT_R}, step_cpu_says, step_gpu_says, 3u};

static void reset_objects(void) {
    memset(&g_log, 0, sizeof g_log);
    for (int p = 0; p < NOBJ; p++) {
        for (int i = 0; i < NV; i++) g_obj[p].x[i] = 0.01 * (i + 1) + 0.1 * p;
        g_obj[p].k[0] = 0.3 + 0.01 * p;
        g_obj[p].k[1] = 1.7;
        g_obj[p].k[2] = 0.97;
        g_obj[p].k[3] = 0.001 * p;
        g_arg[p].p = p;
    }
}

static uint64_t objects_hash(void) {
    uint64_t h = HY_FNV1A_INIT;
    for (int p = 0; p < NOBJ; p++) h = hy_fnv1a(h, g_obj[p].x, sizeof g_obj[p].x);
    return h;
}

/* The graph of one step: one task per object, kinds[p] for object p. */
static hy_status submit(hy_rt_graph* g, const int32_t* hs, const hy_rt_kind* const* kinds) {
    hy_rt_graph_reset(g);
    for (int p = 0; p < NOBJ; p++) {
        hy_status s = hy_rt_graph_submit(g, kinds[p], p, 1e-5, &g_arg[p], &hs[2 * p], NULL);
        if (s) return s;
    }
    return HY_OK;
}

/* A run's set-up: the objects reset, their graph and handles, every
 * object of one kind, and a team (or the single-thread executor). */
typedef struct setup {
    hy_rt_graph* g;
    int32_t hs[2 * NOBJ];
    const hy_rt_kind* kinds[NOBJ];
    hy_rt_team* t;
    hy_rt_exec* e;
} setup;

/* pus NULL: the single-thread executor. */
static hy_status setup_make(setup* su, const hy_rt_kind* kind, int npu, const hy_rt_team_pu* pus, const char* policy) {
    memset(su, 0, sizeof *su);
    reset_objects();
    for (int p = 0; p < NOBJ; p++) su->kinds[p] = kind;
    hy_status s = hy_rt_graph_create(&su->g);
    for (int p = 0; p < NOBJ && !s; p++) {
        s = hy_rt_graph_register(su->g, g_obj[p].x, sizeof g_obj[p].x, &su->hs[2 * p]);
        if (!s) s = hy_rt_graph_register(su->g, g_obj[p].k, sizeof g_obj[p].k, &su->hs[2 * p + 1]);
    }
    if (!s) s = pus ? hy_rt_team_create_pus(npu, pus, policy, 11, &su->t) : hy_rt_exec_create(1, &su->e);
    return s;
}

static void setup_free(setup* su) {
    hy_rt_team_destroy(su->t);
    hy_rt_exec_destroy(su->e);
    hy_rt_graph_destroy(su->g);
}

/* STEPS steps of the objects on `pus` (NULL: the single-thread executor)
 * under `policy`, every object of kind `kind`; the hash of the states. */
static uint64_t run_team(int npu, const hy_rt_team_pu* pus, const char* policy, const hy_rt_kind* kind) {
    setup su;
    hy_status s = setup_make(&su, kind, npu, pus, policy);
    for (int k = 0; k < STEPS && !s; k++) {
        s = submit(su.g, su.hs, su.kinds);
        if (!s) s = su.t ? hy_rt_team_run(su.t, su.g, NULL) : hy_rt_exec_run(su.e, su.g);
    }
    CHECK_OK(s);
    setup_free(&su);
    return objects_hash();
}

static const hy_rt_team_pu cpu_twin[2] = {{HY_RT_CPU, 1, -1}, {HY_RT_GPU, 1, -1}};

static void test_placement_bits_bytes(void) {
    setup su;
    CHECK_OK(setup_make(&su, &k_step, 2, cpu_twin, "round-robin"));
    hy_rt_graph* g = su.g;
    hy_rt_team* t = su.t;
    const int32_t* hs = su.hs;
    if (!g || !t) {
        setup_free(&su);
        return;
    }
    const hy_rt_sim* sim = hy_rt_team_sim(t);
    CHECK(sim->m.npu == 2 && sim->m.pu[1].kind == HY_RT_GPU && sim->m.pu[1].mem == 1);
    CHECK(sim->m.net.nchannels == 1);
    const int64_t state = (int64_t)sizeof g_obj[0].x, param = (int64_t)sizeof g_obj[0].k;
    for (int k = 0; k < STEPS; k++) {
        CHECK_OK(submit(g, hs, su.kinds));
        hy_rt_step_stats st;
        CHECK_OK(hy_rt_team_run(t, g, &st));
        /* odd partitions on the GPU PU: three of them */
        CHECK(st.pu_tasks[0] == 3 && st.pu_tasks[1] == 3);
        int64_t want = k == 0 ? 3 * (2 * state + param) : 3 * state;
        if (st.channel_bytes[0] != want)
            fprintf(stderr, "step %d: %lld bytes on the channel, expected %lld\n", k, (long long)st.channel_bytes[0],
                    (long long)want);
        CHECK(st.channel_bytes[0] == want);
        for (int p = 0; p < NOBJ; p++) {
            const hy_rt_data* x = &g->handles[hs[2 * p]].data;
            const hy_rt_data* kp = &g->handles[hs[2 * p + 1]].data;
            CHECK(x->valid & 1u); /* back on the host */
            CHECK(!!(x->valid & 2u) == (p % 2)); /* written there, still valid there */
            CHECK(!!(kp->valid & 2u) == (p % 2)); /* read there, kept */
        }
    }
    for (int p = 0; p < NOBJ; p++) {
        CHECK(atomic_load(&g_log.gpu[p]) == (p % 2 ? STEPS : 0));
        CHECK(atomic_load(&g_log.cpu[p]) == (p % 2 ? 0 : STEPS));
        /* the partition's measured time is its GPU kind's */
        CHECK((sim->kind_time[2 * p + HY_RT_GPU] >= 0) == (p % 2));
    }
    CHECK(atomic_load(&g_log.bad_device) == 0);
    CHECK(atomic_load(&g_log.host_copy) == 0);
    uint64_t h = objects_hash();
    setup_free(&su);
    CHECK(run_team(0, NULL, NULL, &k_step) == h);
}

/* A device index goes to the kinds' cuda_fn as the current device. */
static void test_current_device(void) {
    hy_rt_team_pu pus[2] = {{HY_RT_CPU, 1, -1}, {HY_RT_GPU, 1, 3}};
    g_expect_device = 3;
    uint64_t h = run_team(2, pus, "round-robin", &k_step);
    g_expect_device = -1;
    int gpu = 0;
    for (int p = 0; p < NOBJ; p++) gpu += atomic_load(&g_log.gpu[p]);
    CHECK(gpu == 3 * STEPS);
    CHECK(atomic_load(&g_log.bad_device) == 0);
    CHECK(h == run_team(0, NULL, NULL, &k_step));
    CHECK(hy_rt_current_device() == -1);
}

static void test_same_results(void) {
    uint64_t ref = run_team(0, NULL, NULL, &k_step);
    hy_rt_team_pu cpu2[2] = {{HY_RT_CPU, 1, -1}, {HY_RT_CPU, 1, -1}};
    CHECK(run_team(2, cpu2, "ws", &k_step) == ref);
    hy_rt_team_pu three[3] = {{HY_RT_CPU, 2, -1}, {HY_RT_GPU, 1, -1}, {HY_RT_GPU, 1, -1}};
    static const char* const policies[] = {"round-robin", "static", "ws", "affinity", "priority", "lp"};
    for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
        CHECK(run_team(2, cpu_twin, policies[i], &k_step) == ref);
        CHECK(run_team(3, three, policies[i], &k_step) == ref);
        CHECK(atomic_load(&g_log.bad_device) == 0);
        /* a kind with no CUDA implementation stays on the CPU PUs */
        CHECK(run_team(3, three, policies[i], &k_cpu_only) == ref);
        for (int p = 0; p < NOBJ; p++) CHECK(atomic_load(&g_log.gpu[p]) == 0);
    }
    /* a host-driven CUDA implementation gets the host's copies */
    CHECK(run_team(2, cpu_twin, "round-robin", &k_hosted) == ref);
    CHECK(atomic_load(&g_log.device_copy) == 0);
    CHECK(atomic_load(&g_log.gpu[1]) == STEPS);
    /* CUDA only: refused by CPU PUs alone, run by a team with a GPU PU */
    CHECK(run_team(2, three, "ws", &k_gpu_only) == ref);
    for (int p = 0; p < NOBJ; p++) CHECK(atomic_load(&g_log.cpu[p]) == 0);
    setup su;
    CHECK_OK(setup_make(&su, &k_gpu_only, 2, cpu2, "ws"));
    if (su.g && su.t) {
        CHECK_OK(submit(su.g, su.hs, su.kinds));
        CHECK(hy_rt_team_run(su.t, su.g, NULL) == HY_ERR_UNSUPPORTED);
        CHECK(strstr(hy_last_error(), "step-gpu") != NULL);
    }
    setup_free(&su);
}

/* Bytes a cuda_fn moved itself go on its PU's channel, per step, and
 * nothing else does (the arguments stay on the host). */
static void test_counted_transfers(void) {
    const hy_rt_team_pu pus[2] = {{HY_RT_CPU, 1, -1}, {HY_RT_GPU, 1, -1}};
    setup su;
    CHECK_OK(setup_make(&su, &k_says, 2, pus, "round-robin"));
    hy_rt_count_transfer(5); /* outside a task: nothing */
    for (int k = 0; k < STEPS && su.t; k++) {
        hy_rt_step_stats st;
        CHECK_OK(submit(su.g, su.hs, su.kinds));
        CHECK_OK(hy_rt_team_run(su.t, su.g, &st));
        CHECK(st.pu_tasks[1] == NOBJ / 2);
        CHECK(st.channel_bytes[0] == 1000 * (int64_t)st.pu_tasks[1]);
    }
    setup_free(&su);
}

static void test_parse(void) {
    hy_rt_team_pu pus[4];
    int n = 0;
    CHECK_OK(hy_rt_team_parse_pus("cpu:2,cuda:1", &n, pus, 4));
    CHECK(n == 2 && pus[0].kind == HY_RT_CPU && pus[0].threads == 2);
    CHECK(pus[1].kind == HY_RT_GPU && pus[1].threads == 1 && pus[1].device == 1);
    CHECK(hy_rt_team_parse_pus("cuda:", &n, pus, 4) == HY_ERR_INVALID_ARG);
    CHECK(hy_rt_team_parse_pus("cuda:-1", &n, pus, 4) == HY_ERR_INVALID_ARG);
    CHECK(hy_rt_team_parse_pus("gpu:1", &n, pus, 4) == HY_ERR_INVALID_ARG);
    int threads[4];
    CHECK(hy_rt_team_parse("cpu:1,cuda:0", &n, threads, 4) == HY_ERR_INVALID_ARG);
    hy_rt_team* t = NULL;
    hy_rt_team_pu two_threads = {HY_RT_GPU, 2, 0};
    CHECK(hy_rt_team_create_pus(1, &two_threads, "ws", 1, &t) == HY_ERR_INVALID_ARG);
    CHECK(t == NULL);
}

/* ---------------------------------------------------------------- engine */

static const char* scene_json =
    "{\"solver\": {\"time_step\": 0.01},"
    " \"materials\": {\"rubber\": {\"young\": 50000, \"poisson\": 0.3, \"density\": 1000, \"damping\": 0.01},"
    "   \"springy\": {\"spring_stiffness\": 20000, \"density\": 1000, \"damping\": 0.01}},"
    " \"objects\": ["
    "  {\"type\": \"obstacle\", \"name\": \"floor\", \"mesh\": {\"generator\": \"box\","
    "   \"half_extents\": [2, 0.05, 2]}, \"transform\": {\"position\": [0, -0.05, 0]}},"
    "  {\"type\": \"cloth\", \"name\": \"sheet\", \"mesh\": {\"generator\": \"grid\", \"vertices\": [8, 8],"
    "   \"size\": [0.4, 0.4]}, \"transform\": {\"position\": [0, 0.3, 0]}},"
    "  {\"type\": \"fem\", \"name\": \"f1\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.1, 0.1, 0.1], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [0, 0.052, 0.8]}},"
    "  {\"type\": \"fem\", \"name\": \"f2\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.1, 0.1, 0.1], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [0.5, 0.3, 0.5]}},"
    "  {\"type\": \"massspring\", \"name\": \"m\", \"material\": \"springy\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.1, 0.1, 0.1], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [0, 0.052, -0.8]}}"
    " ]}";

#define WORLD_STEPS 8

/* What a world's steps gave, summed over the steps. */
typedef struct outcome {
    uint64_t hash;
    int64_t cg_iterations;
    int32_t gpu_tasks;         /* tasks of its one GPU PU, the last PU */
    int32_t batched, products; /* objects stepped in batches, batch products */
    int32_t resident;          /* of the batched objects, those whose CG ran in the batch's memory */
    int64_t gpu_bytes;         /* on the GPU PUs' channels */
    char fallback[192];        /* the last step's */
} outcome;

/* `steps` steps of w into *out (hash included); HY_OK or the first failure. */
static hy_status run_steps(hy_world* w, int steps, outcome* out) {
    hy_status s = HY_OK;
    for (int i = 0; i < steps && !s; i++) {
        hy_step_stats st;
        hy_integrate_stats is;
        if ((s = hy_test_step_figures(w, &st, &is))) break;
        out->cg_iterations += st.cg_iterations;
        if (is.gpus == 1) out->gpu_tasks += is.tasks[is.pus - 1];
        out->batched += is.batched;
        out->products += is.batch_products;
        out->resident += is.batch_resident;
        for (int32_t q = is.pus - is.gpus; q < is.pus; q++) out->gpu_bytes += is.bytes[q];
        snprintf(out->fallback, sizeof out->fallback, "%s", is.fallback);
    }
    out->hash = hy_test_hash(w);
    return s;
}

/* WORLD_STEPS steps of the scene under `policy` on one CPU PU and, when
 * twin, a twin GPU PU (NULL policy: the default, CPU only). */
static int run_world(const char* policy, int twin, outcome* out) {
    hy_scene_options o = hy_scene_options_default();
    o.threads = 1;
    hy_world* w = NULL;
    hy_status s = hy_scene_load_string(scene_json, strlen(scene_json), "test_runtime_gpu", &o, &w);
    memset(out, 0, sizeof *out);
    if (!s && policy) s = hy_world_set_integrate_sched(w, policy, 1);
    if (!s && twin) s = hy_integrator_set_gpus(w->integrator, 1, (int[]){-1});
    if (!s) s = run_steps(w, WORLD_STEPS, out);
    CHECK(out->fallback[0] == '\0');
    if (s) fprintf(stderr, "world (%s, twin %d): %s\n", policy ? policy : "default", twin, hy_last_error());
    hy_world_destroy(w);
    return s == HY_OK;
}

static void test_world_twin(void) {
    outcome ref, got;
    CHECK(run_world(NULL, 0, &ref));
    CHECK(ref.cg_iterations > 0);
    static const char* const policies[] = {"round-robin", "ws", "priority", "lp"};
    for (size_t i = 0; i < sizeof policies / sizeof *policies; i++) {
        CHECK(run_world(policies[i], 1, &got));
        if (got.hash != ref.hash)
            fprintf(stderr, "%s with a twin GPU: hash %016llx, CPU only %016llx\n", policies[i],
                    (unsigned long long)got.hash, (unsigned long long)ref.hash);
        CHECK(got.hash == ref.hash);
        CHECK(got.cg_iterations == ref.cg_iterations);
        /* round robin puts the odd slots on the GPU PU: the cloth (slot 1)
         * every step, and f2 (slot 3) on the steps where f1 and m rest held
         * on the floor (every other step); on the others the three solids
         * step free as one batch at slot 2, on the CPU PU */
        if (i == 0) CHECK(got.gpu_tasks == WORLD_STEPS + WORLD_STEPS / 2);
    }
}

static void test_device_memory(void) {
    hy_rt_memnet net;
    hy_rt_memnet_init(&net);
    int32_t mem = -1;
    CHECK_OK(hy_rt_memnet_add_memory(&net, "cuda0", &mem));
    CHECK_OK(hy_rt_memnet_add_channel(&net, HY_RT_HOST, mem, 1e-5, 1e10));
    CHECK(hy_rt_memnet_set_device(&net, HY_RT_HOST, 0) == -1);
    int on_gpu = hy_rt_memnet_set_device(&net, mem, 0);
    CHECK(on_gpu == (hy_rt_dev_count() > 0));
    enum { N = 1000 };
    double host[N], want[N];
    for (int i = 0; i < N; i++) want[i] = host[i] = 0.5 * i - 7.0;
    hy_rt_data d;
    hy_rt_data_init(&d, host, sizeof host);
    void* ptr = NULL;
    CHECK_OK(hy_rt_data_acquire(&net, &d, mem, HY_RT_RW, &ptr, NULL)); /* up; only the device's copy valid */
    CHECK(ptr != NULL && ptr != host && d.valid == 1u << mem);
    CHECK(((d.on_device >> mem) & 1u) == (unsigned)on_gpu);
    memset(host, 0, sizeof host); /* the stale host copy */
    CHECK_OK(hy_rt_data_acquire(&net, &d, HY_RT_HOST, HY_RT_R, &ptr, NULL)); /* back */
    CHECK(ptr == host && memcmp(host, want, sizeof host) == 0);
    CHECK(d.valid == ((1u << mem) | 1u));
    CHECK(net.channels[0].bytes == 2 * (int64_t)sizeof host);
    hy_rt_data_free(&d);
    CHECK(d.allocated == 0 && d.on_device == 0);
    fprintf(stderr, "device memory: %s, %zu bytes there and back\n", on_gpu ? "cuda:0" : "host buffers (no GPU)",
            sizeof host);
}

static const char* batch_json =
    "{\"solver\": {\"time_step\": 0.01},"
    " \"materials\": {\"rubber\": {\"young\": 50000, \"poisson\": 0.3, \"density\": 1000, \"damping\": 0.01},"
    "   \"stiff\": {\"young\": 200000, \"poisson\": 0.25, \"density\": 800, \"damping\": 0.02},"
    "   \"springy\": {\"spring_stiffness\": 20000, \"density\": 1000, \"damping\": 0.01}},"
    " \"objects\": ["
    "  {\"type\": \"obstacle\", \"name\": \"floor\", \"mesh\": {\"generator\": \"box\","
    "   \"half_extents\": [2, 0.05, 2]}, \"transform\": {\"position\": [0, -5, 0]}},"
    "  {\"type\": \"fem\", \"name\": \"a\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.1, 0.1, 0.1], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [0, 0.3, 0.8]}},"
    "  {\"type\": \"fem\", \"name\": \"b\", \"material\": \"stiff\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.2, 0.1, 0.1], \"cells\": [3, 2, 1]},"
    "   \"transform\": {\"position\": [0.5, 0.3, 0.5]}},"
    "  {\"type\": \"massspring\", \"name\": \"c\", \"material\": \"springy\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.1, 0.1, 0.1], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [0, 0.3, -0.8]}},"
    "  {\"type\": \"fem\", \"name\": \"d\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.1, 0.2, 0.1], \"cells\": [1, 3, 2]},"
    "   \"transform\": {\"position\": [-0.6, 0.3, 0]}}"
    " ]}";

#define BATCH_STEPS 6


/* BATCH_STEPS steps of batch_json, every solid vertex given its own
 * velocity first (so that CG has work), on one CPU PU and `gpus` GPU PUs
 * of `devices` under round robin (gpus 0: the CPU-only default). */
static int run_batches(int gpus, const int* devices, outcome* out) {
    hy_scene_options o = hy_scene_options_default();
    o.threads = 1;
    hy_world* w = NULL;
    hy_status s = hy_scene_load_string(batch_json, strlen(batch_json), "test_runtime_gpu", &o, &w);
    memset(out, 0, sizeof *out);
    uint64_t rng = 0x51ED270B27D4A3C1ull;
    for (int32_t i = 0; !s && i < w->object_count; i++) {
        hy_object* ob = &w->objects[i];
        if (!hy_object_has(ob, HY_KIND_SOLID)) continue;
        for (int64_t k = 0; k < 3 * (int64_t)ob->model.nv; k++) ob->state->v[k] = 0.5 * (hy_test_uniform(&rng) - 0.5);
    }
    if (!s && gpus) s = hy_world_set_integrate_sched(w, "round-robin", 1);
    if (!s && gpus) s = hy_integrator_set_gpus(w->integrator, gpus, devices);
    if (!s) s = run_steps(w, BATCH_STEPS, out);
    if (s) fprintf(stderr, "batch world (%d GPUs): %s\n", gpus, hy_last_error());
    hy_world_destroy(w);
    return s == HY_OK;
}

static void test_world_batches(void) {
    outcome ref, one, two, dev;
    CHECK(run_batches(0, NULL, &ref));
    CHECK(ref.cg_iterations > 4 * BATCH_STEPS && ref.batched == 0);
    /* one twin: the batch (slots 1-4) at slot 1, on the twin under round robin */
    CHECK(run_batches(1, (int[]){-1}, &one));
    CHECK(one.hash == ref.hash && one.cg_iterations == ref.cg_iterations);
    CHECK(one.batched == 4 * BATCH_STEPS);
    CHECK(one.resident == one.batched && ref.resident == 0); /* block-Jacobi solids: their CG in the batch's memory */
    /* a round per product: at least the most iterations of a step, at most their sum, plus the start */
    CHECK(one.products > ref.cg_iterations / 4 && one.products <= ref.cg_iterations + 4 * BATCH_STEPS);
    CHECK(one.fallback[0] == '\0');
    CHECK(one.gpu_bytes == 0); /* a twin moves nothing: the products run on the host */
    /* two twins: batches {a, b} at slot 1 (PU 1, a twin) and {c, d} at slot 3 (PU 0, the CPU) */
    CHECK(run_batches(2, (int[]){-1, -1}, &two));
    CHECK(two.hash == ref.hash && two.cg_iterations == ref.cg_iterations);
    CHECK(two.batched == 2 * BATCH_STEPS);
    /* cuda:0 taken as it is: with no GPU its batch fails before any state is
     * written, is said, and the objects step on the CPU */
    CHECK(run_batches(1, (int[]){0}, &dev));
    CHECK(dev.hash == ref.hash && dev.cg_iterations == ref.cg_iterations);
    if (hy_cuda_device_count() == 0) {
        const char* want[] = {"cuda:0 stopped", "CPU", NULL};
        CHECK_MESSAGE(dev.fallback, want);
        CHECK(dev.batched == 0);
    } else {
        CHECK(dev.fallback[0] == '\0' && dev.batched == 4 * BATCH_STEPS && dev.resident == dev.batched);
        CHECK(dev.gpu_bytes > 0); /* the products' vectors, the prepared steps */
    }
    fprintf(stderr, "batches: %d objects in %d steps batched, %d batch products for %lld CG iterations; hash %016llx\n",
            one.batched, BATCH_STEPS, one.products, (long long)ref.cg_iterations, (unsigned long long)ref.hash);
}

/* cuda:N where this build or machine has no such GPU: left out, said once;
 * a list that is not cuda:D refused. */
static void test_world_fallback(void) {
    hy_world_def d = hy_world_def_default();
    d.threads = 1;
    hy_world* w = NULL;
    CHECK_OK(hy_world_create(&d, &w));
    if (!w) return;
    char list[32];
    snprintf(list, sizeof list, "cuda:%d", hy_cuda_device_count());
    CHECK_OK(hy_world_set_integrate_devices(w, list));
    hy_integrate_stats is;
    CHECK_OK(hy_world_get_integrate_stats(w, &is));
    CHECK(is.gpus == 0);
    const char* want[] = {list, "not used", NULL};
    CHECK_MESSAGE(is.fallback, want);
    CHECK(hy_world_set_integrate_devices(w, "cuda:0,gpu") == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "gpu") != NULL);
    CHECK_OK(hy_world_set_integrate_devices(w, ""));
    CHECK_OK(hy_world_get_integrate_stats(w, &is));
    CHECK(is.gpus == 0 && is.fallback[0] == '\0');
    CHECK_OK(hy_world_step(w, 0.01, 1));
    hy_world_destroy(w);
}

int main(void) {
    test_placement_bits_bytes();
    test_current_device();
    test_same_results();
    test_parse();
    test_counted_transfers();
    test_world_twin();
    test_device_memory();
    test_world_batches();
    test_world_fallback();
    TEST_END();
}
