/* Tests coupled groups as runtime tasks (engine/integrate.c, engine/links.h):
 * two stacks of two FEM blocks, each top block resting on its pinned base,
 * and a free block. Once the stacks' contacts are coupled, each stack is one
 * group and one task of the integrate phase (the phase's task count drops by
 * one per group), round robin on two PUs puts the two groups on different
 * PUs, and every policy on one and two PUs, with one and two threads, ends
 * with the state hash and CG iterations of the default run. The default
 * PU count follows the world's solids and threads. A stack of four blocks,
 * one group holding the whole wave, runs on all threads outside the PUs
 * (its objects' operations side by side) with the one-thread run's state. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/links.h"
#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/world_step.h"

#define STEPS 8

static int quick(void) {
    const char* f = getenv("HY_TEST_SANITIZER");
    return f && f[0] == '1';
}

/* Slots: stack A (0, 1), the free block (2), stack B (3, 4). Each top
 * block starts 1 mm over its base's top face, within the contact distance. */
static const char* scene_json =
    "{\"solver\": {\"time_step\": 0.01},"
    " \"materials\": {\"rubber\": {\"young\": 5e4, \"poisson\": 0.3, \"density\": 1000, \"damping\": 0.01,"
    "   \"friction\": 0.4}},"
    " \"objects\": ["
    "  {\"type\": \"fem\", \"name\": \"base_a\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.2, 0.2, 0.2], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [0, 0.1, 0]}, \"pin\": {\"y_below\": 0.001}},"
    "  {\"type\": \"fem\", \"name\": \"top_a\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.15, 0.15, 0.15], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [0.01, 0.2755, 0]}},"
    "  {\"type\": \"massspring\", \"name\": \"free\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.1, 0.1, 0.1], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [1, 0.5, 0]}},"
    "  {\"type\": \"fem\", \"name\": \"base_b\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.2, 0.2, 0.2], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [-1, 0.1, 0]}, \"pin\": {\"y_below\": 0.001}},"
    "  {\"type\": \"massspring\", \"name\": \"top_b\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.15, 0.15, 0.15], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [-1.01, 0.2755, 0]}}"
    " ]}";

typedef struct outcome {
    uint64_t hash;
    int64_t cg_iterations;
    int32_t groups;          /* the most groups of a step */
    int32_t tasks_alone;     /* the phase's tasks in the first step (no groups yet) */
    int32_t tasks_grouped;   /* ... in the last step */
    int32_t pu_tasks[2];     /* ... per PU in the last step */
} outcome;

static int run(const char* policy, int32_t pus, int threads, outcome* out) {
    memset(out, 0, sizeof *out);
    hy_scene_options o = hy_scene_options_default();
    o.threads = threads;
    hy_world* w = NULL;
    hy_status s = hy_scene_load_string(scene_json, strlen(scene_json), "test_integrate_groups", &o, &w);
    if (s) {
        fprintf(stderr, "scene: %s\n", hy_last_error());
        return 0;
    }
    if (policy) s = hy_world_set_integrate_sched(w, policy, pus);
    for (int i = 0; i < STEPS && !s; i++) {
        hy_step_stats st;
        hy_integrate_stats is;
        if ((s = hy_test_step_figures(w, &st, &is))) break;
        out->cg_iterations += st.cg_iterations;
        int32_t g = hy_links_group_count(w);
        if (g > out->groups) out->groups = g;
        int32_t tasks = 0;
        for (int32_t q = 0; q < is.pus; q++) tasks += is.tasks[q];
        if (i == 0) out->tasks_alone = tasks;
        out->tasks_grouped = tasks;
        for (int32_t q = 0; q < 2 && q < is.pus; q++) out->pu_tasks[q] = is.tasks[q];
    }
    if (s)
        fprintf(stderr, "%s on %d PUs, %d threads: %s\n", policy ? policy : "default", pus, threads, hy_last_error());
    out->hash = hy_test_hash(w);
    hy_world_destroy(w);
    return s == HY_OK;
}

static void test_groups_as_tasks(void) {
    outcome ref;
    CHECK(run(NULL, 1, 1, &ref));
    fprintf(stderr, "groups: %d at most, tasks %d alone then %d, %lld CG iterations, hash %016llx\n", ref.groups,
            ref.tasks_alone, ref.tasks_grouped, (long long)ref.cg_iterations, (unsigned long long)ref.hash);
    CHECK(ref.groups == 2);
    CHECK(ref.tasks_alone == 5);   /* five solids, each its own task */
    CHECK(ref.tasks_grouped == 3); /* two groups and the free block */
    CHECK(ref.cg_iterations > 0);
    /* round robin places partition p on PU p mod 2: the groups (slots 0
     * and 3) on PUs 0 and 1, the free block (slot 2) on PU 0 */
    outcome rr;
    CHECK(run("round-robin", 2, 2, &rr));
    CHECK(rr.pu_tasks[0] == 2 && rr.pu_tasks[1] == 1);
    CHECK(rr.hash == ref.hash);
    static const char* const policies[] = {"round-robin", "static", "ws", "affinity", "priority", "lp"};
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++)
        for (int32_t pus = 1; pus <= 2; pus++)
            for (int threads = 1; threads <= 2; threads++) {
                if (quick() && threads != 1 + (int)((p + (size_t)pus) % 2)) continue;
                outcome got;
                int ok = run(policies[p], pus, threads, &got);
                CHECK(ok);
                CHECK(got.groups == ref.groups);
                CHECK(got.cg_iterations == ref.cg_iterations);
                if (!ok || got.hash == ref.hash) continue;
                fprintf(stderr, "%s, %d PUs, %d threads: hash %016llx, the default's %016llx\n", policies[p], pus,
                        threads, (unsigned long long)got.hash, (unsigned long long)ref.hash);
                CHECK(got.hash == ref.hash);
            }
}

/* The default PU count: one per thread while the world holds two solids
 * per thread or more (five here: two PUs at two threads, one at one
 * thread), followed step by step (two solids left: one PU); a PU count
 * set by hand stays. */
static void test_default_pus(void) {
    for (int threads = 1; threads <= 2; threads++) {
        hy_scene_options o = hy_scene_options_default();
        o.threads = threads;
        hy_world* w = NULL;
        CHECK_OK(hy_scene_load_string(scene_json, strlen(scene_json), "test_integrate_groups", &o, &w));
        if (!w) return;
        hy_integrate_stats is;
        CHECK_OK(hy_world_get_integrate_stats(w, &is)); /* before the first step: what it will make */
        CHECK(is.pus == threads);
        CHECK_OK(hy_test_step(w));
        CHECK_OK(hy_world_get_integrate_stats(w, &is));
        CHECK(is.pus == threads && !strcmp(is.policy, "lp"));
        CHECK(is.tasks[0] + (threads == 2 ? is.tasks[1] : 0) == 5);
        for (int k = 0; k < 3; k++) { /* the free block and stack B */
            hy_object_id id;
            CHECK_OK(hy_world_get_object(w, 2, &id));
            CHECK_OK(hy_object_remove(w, id));
        }
        CHECK_OK(hy_test_step(w));
        CHECK_OK(hy_world_get_integrate_stats(w, &is));
        CHECK(is.pus == 1);
        hy_world_destroy(w);
    }
    hy_scene_options o = hy_scene_options_default();
    o.threads = 2;
    hy_world* w = NULL;
    CHECK_OK(hy_scene_load_string(scene_json, strlen(scene_json), "test_integrate_groups", &o, &w));
    if (!w) return;
    CHECK_OK(hy_world_set_integrate_sched(w, "lp", 1));
    CHECK_OK(hy_test_step(w));
    hy_integrate_stats is;
    CHECK_OK(hy_world_get_integrate_stats(w, &is));
    CHECK(is.pus == 1);
    CHECK_OK(hy_world_set_integrate_sched(w, "ws", 0)); /* back to the default, with ws */
    CHECK_OK(hy_test_step(w));
    CHECK_OK(hy_world_get_integrate_stats(w, &is));
    CHECK(is.pus == 2 && !strcmp(is.policy, "ws"));
    hy_world_destroy(w);
}

/* A pinned base and three blocks on it, each 0.5 mm over the one below. */
static const char* tower_json =
    "{\"solver\": {\"time_step\": 0.01},"
    " \"materials\": {\"rubber\": {\"young\": 5e4, \"poisson\": 0.3, \"density\": 1000, \"damping\": 0.01,"
    "   \"friction\": 0.4}},"
    " \"objects\": ["
    "  {\"type\": \"fem\", \"name\": \"base\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.2, 0.2, 0.2], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [0, 0.1, 0]}, \"pin\": {\"y_below\": 0.001}},"
    "  {\"type\": \"fem\", \"name\": \"one\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.15, 0.15, 0.15], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [0.01, 0.2755, 0]}},"
    "  {\"type\": \"massspring\", \"name\": \"two\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.12, 0.12, 0.12], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [0, 0.4115, 0.01]}},"
    "  {\"type\": \"fem\", \"name\": \"three\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.1, 0.1, 0.1], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [-0.01, 0.522, 0]}}"
    " ]}";

static void test_wide_group(void) {
    uint64_t ref = 0;
    int64_t ref_cg = 0;
    static const char* const policies[] = {NULL, "round-robin", "lp"};
    for (int k = 0; k < 3; k++) {
        hy_scene_options o = hy_scene_options_default();
        o.threads = k ? 2 : 1;
        hy_world* w = NULL;
        CHECK_OK(hy_scene_load_string(tower_json, strlen(tower_json), "tower", &o, &w));
        if (!w) return;
        if (policies[k]) CHECK_OK(hy_world_set_integrate_sched(w, policies[k], 2));
        int64_t cg = 0;
        int32_t wide = 0, group = 0;
        for (int i = 0; i < STEPS; i++) {
            hy_step_stats st;
            hy_integrate_stats is;
            CHECK_OK(hy_test_step_figures(w, &st, &is));
            cg += st.cg_iterations;
            wide += is.wide_tasks;
            if (hy_links_group_count(w) == 1) {
                int32_t first = -1, size = 0;
                int64_t nv = 0;
                hy_links_group_info(w, 0, &first, &size, &nv);
                if (size > group) group = size;
            }
        }
        uint64_t h = hy_test_hash(w);
        fprintf(stderr, "tower, %s: group of %d, %d wide runs, %lld CG iterations, hash %016llx\n",
                policies[k] ? policies[k] : "one PU, one thread", group, wide, (long long)cg, (unsigned long long)h);
        CHECK(group == 4);
        if (!k) {
            ref = h, ref_cg = cg;
            CHECK(wide == 0);
        } else {
            CHECK(wide >= STEPS - 2); /* every step once the contacts couple the stack */
            CHECK(h == ref && cg == ref_cg);
        }
        hy_world_destroy(w);
    }
}

int main(void) {
    test_groups_as_tasks();
    test_default_pus();
    test_wide_group();
    TEST_END();
}
