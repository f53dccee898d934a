/* Tests one Perfetto trace holding both halves of a step: a world's
 * collision jobs, written by the proximity framework's trace, and the
 * integration runtime's tasks, transfers and maps written into the same
 * stream (hy_rt_trace_attach) under their own process, one track per PU.
 * The file parses as JSON; the collision tracks stay in process 1 with
 * their events; process 3 is named, has a track per PU and the
 * scheduler's, and as many task events as the steps ran, with transfers.
 * Then the world's own integrate phase, traced because the world's trace
 * is open (what `hyphys run S --trace F` writes): on two PUs under round
 * robin, then on the default single PU, every task of every step is an
 * event of process 2 on its PU's track, as many per PU as the world's
 * integrate stats count. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "engine/world.h"
#include "hyphys/hyphys.h"
#include "runtime/sim.h"
#include "sched/prox_internal.h"
#include "test.h"
#include "tests/reduced_scenes.h"
#include "tests/test_files.h"

static void bump(void* const* b, void* arg) {
    double* x = b[0];
    x[0] += arg ? 1.0 : 0.5;
}

static const hy_rt_kind k_step = {"step", 1, {HY_RT_RW}, bump, bump, 0};
static const hy_rt_kind k_pair = {"pair", 2, {HY_RT_RW, HY_RT_RW}, bump, bump, 0};

#define NOBJ 6
#define STEPS 3

static const char* str(const cJSON* o, const char* key) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : "";
}

static int num(const cJSON* o, const char* key) {
    const cJSON* v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valueint : -1;
}

/* The FEM stack on `threads` threads, its trace opened at a new temporary
 * file named in path (room for 21 characters); 77 when none can be made. */
static int traced_world(char* path, int threads, hy_world** w) {
    strcpy(path, "/tmp/hy_trace_XXXXXX");
    *w = NULL;
    int fd = mkstemp(path);
    if (fd < 0) TEST_SKIP("no temporary file");
    close(fd);
    hy_scene_options o = hy_scene_options_default();
    o.threads = threads;
    CHECK_OK(hy_scene_load_string(hy_test_fem_stack_json, strlen(hy_test_fem_stack_json), "stack", &o, w));
    if (!*w) return 0;
    hy_sched_def def = hy_sched_def_default();
    def.trace = path;
    CHECK_OK(hy_world_set_scheduling(*w, &def));
    return 0;
}

static int shared_modeled(void) {
    char path[32];
    hy_world* w = NULL;
    int made = traced_world(path, 1, &w);
    if (made || !w) return made;
    /* the integration of a few objects on a modeled machine, into the
     * collision trace between the world's steps */
    static double x[NOBJ][64];
    hy_rt_graph* g = NULL;
    hy_rt_sim* s = NULL;
    hy_rt_machine m;
    int32_t h[NOBJ];
    CHECK_OK(hy_rt_machine_profile("hermann4", 2, 2, &m));
    CHECK_OK(hy_rt_graph_create(&g));
    for (int i = 0; i < NOBJ && g; i++) CHECK_OK(hy_rt_graph_register(g, x[i], sizeof x[i], &h[i]));
    CHECK_OK(hy_rt_sim_create(&m, "affinity", 3, &s));
    hy_rt_trace* t = NULL;
    int tasks = 0;
    for (int k = 0; k < STEPS && s && g; k++) {
        CHECK_OK(hy_world_step(w, 0.01, 1));
        if (k == 0) {
            CHECK(w->prox && w->prox->trace);
            if (!w->prox || !w->prox->trace) break;
            /* process 3: the world writes its own integrate phase as process 2 */
            CHECK_OK(hy_rt_trace_attach(w->prox->trace, path, 3, "integration (modeled)", &t));
            if (!t) break;
            hy_rt_sim_set_trace(s, t);
        }
        t->base = w->prox->trace_base; /* the integration after this step's collision jobs */
        hy_rt_graph_reset(g);
        for (int i = 0; i + 1 < NOBJ; i += 2) CHECK_OK(hy_rt_graph_submit_pair(g, &k_pair, i, i + 1, 1e-4, NULL,
                                                                                (int32_t[]){h[i], h[i + 1]}, NULL));
        for (int i = 0; i < NOBJ; i++)
            for (int r = 0; r < 3; r++) CHECK_OK(hy_rt_graph_submit(g, &k_step, i, 2e-4 * (1 + i), &x[i], &h[i], NULL));
        hy_rt_step_stats st;
        CHECK_OK(hy_rt_sim_step(s, g, &st));
        tasks += st.tasks;
    }
    CHECK_OK(hy_rt_trace_close(t));
    CHECK_OK(hy_world_close_trace(w));
    const int npu = m.npu;
    hy_rt_sim_destroy(s);
    hy_rt_graph_destroy(g);
    hy_world_destroy(w);

    char* text = hy_test_read_file(path);
    remove(path);
    CHECK(text != NULL);
    if (!text) return 0;
    cJSON* root = cJSON_Parse(text);
    free(text);
    CHECK(root != NULL);
    if (!root) return 0;
    int coll_events = 0, coll_names = 0, names = 0, process = 0, xt = 0, xs = 0, maps = 0, bad_tid = 0;
    const cJSON* e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
        const char *ph = str(e, "ph"), *cat = str(e, "cat");
        int pid = num(e, "pid"), tid = num(e, "tid");
        if (pid == 1) {
            coll_names += !strcmp(ph, "M");
            coll_events += !strcmp(ph, "X");
            continue;
        }
        if (pid == 2) continue;
        CHECK(pid == 3);
        if (!strcmp(ph, "M") && !strcmp(str(e, "name"), "process_name")) {
            process++;
            CHECK(!strcmp(str(cJSON_GetObjectItemCaseSensitive(e, "args"), "name"), "integration (modeled)"));
            continue;
        }
        if (tid < 0 || tid > npu) bad_tid++;
        names += !strcmp(ph, "M");
        xt += !strcmp(ph, "X") && !strcmp(cat, "task");
        xs += !strcmp(ph, "X") && !strcmp(cat, "transfer");
        maps += !strcmp(ph, "i") && !strcmp(cat, "map");
    }
    fprintf(stderr, "shared trace: collision %d tracks, %d events; integration %d tracks, %d tasks, %d transfers, "
            "%d maps\n", coll_names, coll_events, names, xt, xs, maps);
    CHECK(coll_names >= 2 && coll_events > 0);
    CHECK(process == 1 && names == npu + 1 && bad_tid == 0);
    CHECK(xt == tasks && tasks == STEPS * (NOBJ / 2 + 3 * NOBJ) && xs > 0 && maps >= 1);
    cJSON_Delete(root);
    return 0;
}

/* The world's integrate phase in the world's trace. */
static int world_integration(void) {
    char path[32];
    hy_world* w = NULL;
    int made = traced_world(path, 2, &w);
    if (made || !w) return made;
    CHECK_OK(hy_world_set_integrate_sched(w, "round-robin", 2));
    int per_pu[2] = {0, 0}, wide = 0;
    for (int k = 0; k < 3; k++) {
        if (k == 2) CHECK_OK(hy_world_set_integrate_sched(w, "lp", 1));
        CHECK_OK(hy_world_step(w, 0.01, 1));
        hy_integrate_stats is;
        CHECK_OK(hy_world_get_integrate_stats(w, &is));
        CHECK(is.pus == (k == 2 ? 1 : 2) && is.wall_ms > 0.0);
        /* the two blocks, once coupled, are one group holding the whole
         * wave: on two PUs it runs on all threads, outside the PUs */
        CHECK(is.wide_tasks == (is.pus == 2 && k > 0) && (is.wide_tasks == 0) == (is.wide_ms == 0.0));
        wide += is.wide_tasks;
        for (int q = 0; q < is.pus; q++) {
            CHECK(is.wide_tasks || (is.tasks[q] > 0 && is.busy_ms[q] > 0.0));
            per_pu[q] += is.tasks[q];
        }
    }
    CHECK_OK(hy_world_close_trace(w));
    hy_world_destroy(w);

    char* text = hy_test_read_file(path);
    remove(path);
    cJSON* root = text ? cJSON_Parse(text) : NULL;
    free(text);
    CHECK(root != NULL);
    if (!root) return 0;
    int tasks[4] = {0, 0, 0, 0}, tracks = 0, coll = 0;
    double first_task = -1.0, last_coll = -1.0;
    const cJSON* e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(root, "traceEvents")) {
        const char* ph = str(e, "ph");
        int pid = num(e, "pid"), tid = num(e, "tid");
        const cJSON* ts = cJSON_GetObjectItemCaseSensitive(e, "ts");
        if (pid == 1 && !strcmp(ph, "X")) {
            coll++;
            if (cJSON_IsNumber(ts) && ts->valuedouble > last_coll) last_coll = ts->valuedouble;
        }
        if (pid != 2) continue;
        if (!strcmp(ph, "M") && !strcmp(str(e, "name"), "thread_name")) tracks++;
        if (strcmp(ph, "X") || strcmp(str(e, "cat"), "task")) continue;
        tasks[tid >= 0 && tid < 2 ? tid : tid == 3 ? 3 : 2]++;
        if (cJSON_IsNumber(ts) && (first_task < 0 || ts->valuedouble < first_task)) first_task = ts->valuedouble;
    }
    fprintf(stderr,
            "world trace: collision %d events; integration %d tracks, tasks cpu0 %d (stats %d), cpu1 %d (%d), "
            "on all threads %d (%d)\n",
            coll, tracks, tasks[0], per_pu[0], tasks[1], per_pu[1], tasks[3], wide);
    /* two PUs, the scheduler's and the wide runs', then the single PU's */
    CHECK(tracks == 5 && coll > 0);
    CHECK(tasks[0] == per_pu[0] && tasks[1] == per_pu[1] && tasks[2] == 0 && tasks[1] > 0);
    CHECK(wide == 1 && tasks[3] == wide);
    /* on the real clock both halves share the trace's time 0: the first
     * step's integration comes before its collision jobs end */
    CHECK(first_task >= 0.0 && first_task < last_coll);
    cJSON_Delete(root);
    return 0;
}

int main(void) {
    int r = shared_modeled();
    if (!r) r = world_integration();
    if (r) return r;
    TEST_END();
}
