/* Tests the step's integrate phase as runtime tasks (engine/integrate.c): a
 * small mixed scene (a cloth resting on a turning ball, a falling body, a
 * bonded wall of pieces, a FEM and a mass-spring block, a floor) ends with
 * the same state hash and the same solver figures for every integration
 * policy, on one and two integration PUs, with one and two threads, also
 * when objects are removed between steps (the tasks' data handles are made
 * again); bad settings are refused and leave the previous one in place. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/world_step.h"

#define STEPS 12

/* Under the sanitizers (ten times slower) each policy runs once, on two
 * PUs, at one or two threads in turn, besides one PU. */
static int quick(void) {
    const char* f = getenv("HY_TEST_SANITIZER");
    return f && f[0] == '1';
}

static const char* scene_json =
    "{\"solver\": {\"time_step\": 0.01},"
    " \"materials\": {\"rubber\": {\"young\": 50000, \"poisson\": 0.3, \"density\": 1000, \"damping\": 0.01},"
    "   \"springy\": {\"spring_stiffness\": 20000, \"density\": 1000, \"damping\": 0.01},"
    "   \"stone\": {\"density\": 2000, \"restitution\": 0.2, \"friction\": 0.6}},"
    " \"objects\": ["
    "  {\"type\": \"obstacle\", \"name\": \"floor\", \"mesh\": {\"generator\": \"box\","
    "   \"half_extents\": [2, 0.05, 2]}, \"transform\": {\"position\": [0, -0.05, 0]}},"
    "  {\"type\": \"obstacle\", \"name\": \"ball\", \"mesh\": {\"generator\": \"icosphere\", \"radius\": 0.2,"
    "   \"subdivisions\": 1}, \"transform\": {\"position\": [0, 0.3, 0]},"
    "   \"motion\": {\"rotate\": {\"axis\": [0, 1, 0], \"rate\": 2.0, \"pivot\": [0, 0.3, 0]}}},"
    "  {\"type\": \"cloth\", \"name\": \"sheet\", \"mesh\": {\"generator\": \"grid\", \"vertices\": [10, 10],"
    "   \"size\": [0.6, 0.6]}, \"transform\": {\"position\": [0, 0.505, 0]}},"
    "  {\"type\": \"body\", \"name\": \"drop\", \"material\": \"stone\","
    "   \"mesh\": {\"generator\": \"icosphere\", \"radius\": 0.05, \"subdivisions\": 1},"
    "   \"transform\": {\"position\": [0.8, 0.06, 0]}, \"velocity\": [0, -1, 0]},"
    "  {\"type\": \"fracture\", \"name\": \"wall\", \"material\": \"stone\", \"size\": [0.3, 0.2, 0.1],"
    "   \"pieces\": [3, 2, 1], \"subdivisions\": 1, \"gap\": 0.004, \"bond_strength\": 3.0,"
    "   \"transform\": {\"position\": [-0.8, 0.102, 0]}},"
    "  {\"type\": \"fem\", \"name\": \"f\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.1, 0.1, 0.1], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [0, 0.08, 0.8]}},"
    "  {\"type\": \"massspring\", \"name\": \"m\", \"material\": \"springy\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.1, 0.1, 0.1], \"cells\": [2, 2, 2]},"
    "   \"transform\": {\"position\": [0, 0.08, -0.8]}}"
    " ]}";

typedef struct outcome {
    uint64_t hash;
    int64_t cg_iterations, contacts;
    int32_t bonds;
} outcome;

/* STEPS steps of the scene at `threads` threads with the integration on
 * `pus` PUs under `policy` (NULL: the default), removing the object in slot
 * `remove` (-1: none) halfway; 0 when it could not run. */
static int run_removing(const char* policy, int32_t pus, int threads, int32_t remove, outcome* out) {
    hy_scene_options o = hy_scene_options_default();
    o.threads = threads;
    hy_world* w = NULL;
    hy_status s = hy_scene_load_string(scene_json, strlen(scene_json), "test_integrate_sched", &o, &w);
    if (s) {
        fprintf(stderr, "scene: %s\n", hy_last_error());
        return 0;
    }
    if (policy) s = hy_world_set_integrate_sched(w, policy, pus);
    memset(out, 0, sizeof *out);
    for (int i = 0; i < STEPS && !s; i++) {
        hy_object_id id;
        if (i == STEPS / 2 && remove >= 0 && !(s = hy_world_get_object(w, remove, &id))) s = hy_object_remove(w, id);
        if (!s) s = hy_test_step(w);
        hy_step_stats st;
        if (!s) s = hy_world_get_stats(w, &st);
        if (!s) {
            out->cg_iterations += st.cg_iterations;
            out->contacts += st.contacts;
        }
    }
    if (s) fprintf(stderr, "%s on %d PUs, %d threads: %s\n", policy ? policy : "default", pus, threads,
                   hy_last_error());
    out->hash = hy_test_hash(w);
    out->bonds = hy_test_bond_count(w);
    hy_world_destroy(w);
    return s == HY_OK;
}

static int run(const char* policy, int32_t pus, int threads, outcome* out) {
    return run_removing(policy, pus, threads, -1, out);
}

static void test_same_state(void) {
    outcome ref;
    CHECK(run(NULL, 1, 1, &ref));
    /* the scene exercises what the waves order: solver iterations (cloth,
     * FEM, mass-spring), contacts (the cloth on the turning ball, the body
     * on the floor) and the wall's bonds */
    CHECK(ref.cg_iterations > 0);
    CHECK(ref.contacts > 0);
    CHECK(ref.bonds > 0);
    static const char* const policies[] = {"round-robin", "static", "ws", "affinity", "priority", "lp"};
    for (size_t p = 0; p < sizeof policies / sizeof policies[0]; p++)
        for (int32_t pus = 1; pus <= 2; pus++)
            for (int threads = 1; threads <= 2; threads++) {
                if (quick() && (pus == 1 ? p > 0 || threads == 1 : threads != 1 + (int)(p % 2))) continue;
                outcome got;
                int ok = run(policies[p], pus, threads, &got);
                CHECK(ok);
                if (!ok || got.hash == ref.hash) continue;
                fprintf(stderr, "%s, %d PUs, %d threads: hash %016llx, the default's %016llx\n", policies[p],
                        pus, threads, (unsigned long long)got.hash, (unsigned long long)ref.hash);
                CHECK(got.hash == ref.hash);
            }
    /* the figures the tasks add up separately come out as in one loop */
    outcome two;
    CHECK(run("ws", 2, 2, &two));
    CHECK(two.hash == ref.hash);
    CHECK(two.cg_iterations == ref.cg_iterations);
    CHECK(two.contacts == ref.contacts);
    CHECK(two.bonds == ref.bonds);
}

/* Removing objects moves the others' slots: the graph's handles follow. */
static void test_removal(void) {
    outcome ref, got;
    CHECK(run_removing(NULL, 1, 1, 2, &ref)); /* the cloth */
    CHECK(run_removing("ws", 2, 2, 2, &got));
    CHECK(got.hash == ref.hash);
    CHECK(got.cg_iterations == ref.cg_iterations);
    outcome full;
    CHECK(run(NULL, 1, 1, &full));
    CHECK(full.hash != ref.hash); /* the removal took effect */
}

static void test_bad_settings(void) {
    hy_world_def d = hy_world_def_default();
    d.threads = 1;
    hy_world* w = NULL;
    CHECK_OK(hy_world_create(&d, &w));
    if (!w) return;
    CHECK(hy_world_set_integrate_sched(w, "nonesuch", 1) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "nonesuch") != NULL);
    CHECK(hy_world_set_integrate_sched(w, "ws", -1) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_set_integrate_sched(w, "ws", 33) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_set_integrate_sched(w, NULL, 1) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_set_integrate_sched(NULL, "ws", 1) == HY_ERR_INVALID_ARG);
    CHECK_OK(hy_world_set_integrate_sched(w, "priority", 2));
    /* an empty world steps on the integration PUs too */
    CHECK_OK(hy_world_step(w, 0.01, 1));
    hy_world_destroy(w);
}

int main(void) {
    test_same_state();
    test_removal();
    test_bad_settings();
    TEST_END();
}
