/* Tests FEM and mass-spring objects in the world, loaded from scenes: a
 * reduced fem64 (FEM and mass-spring blocks falling onto a slab and each
 * other) ends every step free of intersecting triangles and has the same
 * state hash with 1 and 2 threads and after a snapshot round trip; a held
 * beam end stays put while the free end bends down; the scenes in scenes/
 * hold the documented counts; bad scenes (a
 * degenerate element in a mesh file, an unknown material key, a material
 * the FEM refuses) are refused naming the file, line and object. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/tritri.h"
#include "engine/check.h"
#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/world_step.h"

static int quick(void) {
    const char* f = getenv("HY_TEST_SANITIZER");
    return f && f[0] == '1';
}

static hy_world* load(const char* json, int threads) {
    hy_scene_options o = hy_scene_options_default();
    o.threads = threads;
    hy_world* w = NULL;
    hy_status s = hy_scene_load_string(json, strlen(json), "test_fem_world", &o, &w);
    if (s) fprintf(stderr, "scene: %s\n", hy_last_error());
    return w;
}

/* 4 FEM and 4 mass-spring blocks of 64 nodes, apart at the start, turned at
 * random, falling 0.3 m onto a slab and onto each other. */
static const char* blocks_json =
    "{\"solver\": {\"time_step\": 0.01},"
    " \"materials\": {\"rubber\": {\"young\": 50000, \"poisson\": 0.3, \"density\": 1000, \"damping\": 0.01,"
    "   \"friction\": 0.4}, \"springy\": {\"spring_stiffness\": 20000, \"density\": 1000, \"damping\": 0.01}},"
    " \"objects\": ["
    "  {\"type\": \"obstacle\", \"name\": \"floor\", \"mesh\": {\"generator\": \"box\","
    "   \"half_extents\": [1, 0.05, 1]}, \"transform\": {\"position\": [0, -0.05, 0]}},"
    "  {\"type\": \"fem\", \"name\": \"f\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.15, 0.15, 0.15], \"cells\": [3, 3, 3]},"
    "   \"transform\": {\"position\": [0, 0.25, 0]},"
    "   \"array\": {\"count\": [2, 1, 2], \"spacing\": [0.3, 0, 0.3], \"random_rotation\": true, \"seed\": 3}},"
    "  {\"type\": \"massspring\", \"name\": \"m\", \"material\": \"springy\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.15, 0.15, 0.15], \"cells\": [3, 3, 3]},"
    "   \"transform\": {\"position\": [0.05, 0.5, 0.05]},"
    "   \"array\": {\"count\": [2, 1, 2], \"spacing\": [0.3, 0, 0.3], \"random_rotation\": true, \"seed\": 5}}"
    " ]}";

static void test_blocks(void) {
    int steps = quick() ? 30 : 70;
    hy_world* w = load(blocks_json, 2);
    CHECK(w != NULL);
    if (!w) return;
    int32_t tets = 0, particles = 0;
    CHECK_OK(hy_world_get_tet_counts(w, &tets, &particles));
    CHECK(tets == 8 * 6 * 27);
    CHECK(particles == 8 * 64);
    int64_t bad = 0, contact_steps = 0;
    for (int i = 0; i < steps; i++) {
        hy_status s = hy_test_step(w);
        CHECK_OK(s);
        if (s) break;
        int64_t n = 0;
        hy_tritri_hit hit[2];
        CHECK_OK(hy_tritri_count_world(w, &n, hit, 2));
        if (n > 0 && bad++ < 3)
            fprintf(stderr, "blocks: step %d: %lld intersecting pairs (object %d / object %d)\n", i + 1, (long long)n,
                    hit[0].object_a, hit[0].object_b);
        hy_step_stats st;
        hy_world_get_stats(w, &st);
        if (st.contacts > 0) contact_steps++;
    }
    CHECK(bad == 0);
    CHECK(contact_steps > 0); /* the blocks reached the floor: the check above had something to check */
    /* every block came down: the lowest vertex of each is within 0.05 m of the floor or resting on another */
    int32_t no = hy_test_object_count(w);
    CHECK(no == 9);
    for (int32_t i = 1; i < no; i++) {
        hy_object_id id;
        CHECK_OK(hy_world_get_object(w, i, &id));
        double x[3 * 64];
        CHECK_OK(hy_object_get_positions(w, id, x, 3 * 64));
        double lo = 1e9;
        for (int k = 0; k < 64; k++) lo = x[3 * k + 1] < lo ? x[3 * k + 1] : lo;
        if (!(lo > -0.01 && lo < 0.35)) fprintf(stderr, "object %d lowest %g\n", i, lo);
        CHECK(lo > -0.01 && lo < 0.35);
    }
    hy_world_destroy(w);
}

/* The same steps give the same state with 1 and 2 threads; a snapshot
 * taken midway and restored into a fresh world ends in that state too. */
static void test_threads_snapshot(void) {
    int steps = quick() ? 10 : 40;
    hy_world* a = load(blocks_json, 1);
    hy_world* b = load(blocks_json, 2);
    hy_world* c = load(blocks_json, 2);
    CHECK(a && b && c);
    if (!a || !b || !c) return;
    void* snap = NULL;
    size_t size = 0;
    for (int i = 0; i < steps; i++) {
        CHECK_OK(hy_test_step(a));
        CHECK_OK(hy_test_step(b));
        if (i == steps / 2) {
            CHECK_OK(hy_world_snapshot_size(b, &size));
            snap = malloc(size);
            size_t written = 0;
            CHECK(snap != NULL);
            if (snap) CHECK_OK(hy_world_snapshot(b, snap, size, &written));
            if (snap) CHECK_OK(hy_world_restore(c, snap, written));
        } else if (i > steps / 2) {
            CHECK_OK(hy_test_step(c));
        }
    }
    uint64_t ha = hy_test_hash(a), hb = hy_test_hash(b), hc = hy_test_hash(c);
    CHECK(ha != 0);
    CHECK(ha == hb);
    CHECK(hb == hc);
    free(snap);
    hy_world_destroy(a);
    hy_world_destroy(b);
    hy_world_destroy(c);
}

/* A 0.5 m beam of 11 x 4 x 4 nodes held at x = -0.25: the held nodes keep
 * their place exactly, the free end sags. */
static void test_beam(void) {
    const char* json =
        "{\"solver\": {\"time_step\": 0.01},"
        " \"objects\": [{\"type\": \"fem\", \"name\": \"beam\","
        "  \"material\": {\"young\": 1e7, \"poisson\": 0.3, \"density\": 1000, \"damping\": 0.01},"
        "  \"mesh\": {\"generator\": \"block\", \"size\": [0.5, 0.06, 0.06], \"cells\": [10, 3, 3]},"
        "  \"transform\": {\"position\": [0, 1, 0]}, \"pin\": {\"x_below\": -0.249}}]}";
    hy_world* w = load(json, 2);
    CHECK(w != NULL);
    if (!w) return;
    hy_object_id id;
    CHECK_OK(hy_world_get_object(w, 0, &id));
    enum { NV = 11 * 4 * 4 };
    double x0[3 * NV], x1[3 * NV];
    CHECK_OK(hy_object_get_positions(w, id, x0, 3 * NV));
    int32_t tets = 0;
    CHECK_OK(hy_object_get_tet_count(w, id, &tets));
    CHECK(tets == 6 * 10 * 3 * 3);
    for (int i = 0; i < 30; i++) CHECK_OK(hy_test_step(w));
    CHECK_OK(hy_object_get_positions(w, id, x1, 3 * NV));
    int held = 0;
    double tip = 0.0;
    for (int k = 0; k < NV; k++) {
        if (x0[3 * k] < -0.249) {
            held++;
            CHECK(memcmp(x0 + 3 * k, x1 + 3 * k, sizeof(double) * 3) == 0);
        }
        if (x0[3 * k] > 0.249) tip += (x1[3 * k + 1] - x0[3 * k + 1]) / 16.0;
    }
    CHECK(held == 16);
    /* the tip sags, by less than the beam's length (no blow-up) */
    if (!(tip < -0.002 && tip > -0.2)) fprintf(stderr, "beam tip moved %g m\n", tip);
    CHECK(tip < -0.002);
    CHECK(tip > -0.2);
    /* removing the solid frees it; the world steps on without it */
    CHECK_OK(hy_object_remove(w, id));
    CHECK(hy_test_object_count(w) == 0);
    CHECK_OK(hy_test_step(w));
    hy_world_destroy(w);
}

/* The scenes in scenes/ hold the counts the user guide gives. The large
 * ones are left out of sanitizer runs (building their models is slow there). */
static void test_scene_files(void) {
    static const struct {
        const char* file;
        int32_t objects, triangles, tetrahedra, particles;
        int large;
    } scenes[] = {
        {"fem_beam.json", 1, 9900, 101250, 19456, 0},
        {"fem64.json", 65, 136460, 64 * 14196, 64 * 2940, 1},
        {"fem_mixed.json", 65, 75404, 32 * 480 + 32 * 14196, 32 * 150 + 32 * 2940, 1},
        {"fem_independent.json", 64, 87040, 32 * 2058 + 32 * 14196, 32 * 512 + 32 * 2940, 1},
        {"fem_bars.json", 31, 30 * 108 + 12, 30 * 6 * 27, 30 * 64, 0},
    };
    for (size_t i = 0; i < sizeof scenes / sizeof scenes[0]; i++) {
        if (scenes[i].large && quick()) continue;
        char path[512];
        snprintf(path, sizeof path, "%s/scenes/%s", HY_SOURCE_DIR, scenes[i].file);
        hy_world* w = NULL;
        CHECK_OK(hy_scene_load(path, NULL, &w));
        if (!w) continue;
        int32_t tets = 0, particles = 0;
        CHECK_OK(hy_world_get_tet_counts(w, &tets, &particles));
        CHECK(hy_test_object_count(w) == scenes[i].objects);
        CHECK(hy_test_triangle_count(w) == scenes[i].triangles);
        CHECK(tets == scenes[i].tetrahedra);
        CHECK(particles == scenes[i].particles);
        if (tets != scenes[i].tetrahedra || particles != scenes[i].particles)
            fprintf(stderr, "%s: %d tetrahedra, %d particles\n", scenes[i].file, tets, particles);
        hy_world_destroy(w);
    }
}

static int write_file(const char* path, const char* text) {
    FILE* f = fopen(path, "w");
    if (!f) return 0;
    fputs(text, f);
    return fclose(f) == 0;
}

/* Load a scene file; expect a refusal whose message holds every `want`. */
static void expect_refused(const char* path, const char* const* want) {
    hy_world* w = NULL;
    hy_status s = hy_scene_load(path, NULL, &w);
    CHECK(s != HY_OK);
    CHECK(w == NULL);
    CHECK_MESSAGE(hy_last_error(), want);
    if (w) hy_world_destroy(w);
}

static void test_bad_scenes(void) {
    /* a flat element (vertex 3 in the plane of the others) in a TetGen file */
    CHECK(write_file("test_fem_world_flat.node", "5 3 0 0\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 1 1 0\n4 0 0 1\n"));
    CHECK(write_file("test_fem_world_flat.ele", "2 4 0\n0 0 1 2 4\n1 0 1 2 3\n"));
    CHECK(write_file("test_fem_world_flat.json",
                     "{\"objects\": [\n"
                     "  {\"type\": \"fem\", \"name\": \"slab\",\n"
                     "   \"mesh\": {\"file\": \"test_fem_world_flat.node\"}}\n"
                     "]}\n"));
    const char* flat[] = {"test_fem_world_flat.json:3", "objects[0]", "test_fem_world_flat.ele", "degenerate", NULL};
    expect_refused("test_fem_world_flat.json", flat);

    /* an unknown material key */
    CHECK(write_file("test_fem_world_key.json",
                     "{\"objects\": [\n"
                     "  {\"type\": \"fem\", \"name\": \"b\",\n"
                     "   \"material\": {\"yung\": 1e5},\n"
                     "   \"mesh\": {\"generator\": \"block\", \"size\": [1, 1, 1], \"cells\": [1, 1, 1]}}\n"
                     "]}\n"));
    const char* key[] = {"test_fem_world_key.json:3", "objects[0]", "yung", NULL};
    expect_refused("test_fem_world_key.json", key);

    /* a material the FEM refuses when the world builds the object */
    CHECK(write_file("test_fem_world_poisson.json",
                     "{\"objects\": [\n"
                     "  {\"type\": \"obstacle\", \"mesh\": {\"generator\": \"box\", \"half_extents\": [1, 1, 1]}},\n"
                     "  {\"type\": \"fem\", \"name\": \"jelly\", \"material\": {\"poisson\": 0.5},\n"
                     "   \"mesh\": {\"generator\": \"block\", \"size\": [1, 1, 1], \"cells\": [1, 1, 1]}}\n"
                     "]}\n"));
    const char* poisson[] = {"test_fem_world_poisson.json:3", "objects[1] (jelly)", "oisson", NULL};
    expect_refused("test_fem_world_poisson.json", poisson);

    /* pin bounds that hold nothing, and a pin index out of range */
    CHECK(write_file("test_fem_world_pin.json",
                     "{\"objects\": [\n"
                     "  {\"type\": \"massspring\", \"name\": \"b\",\n"
                     "   \"mesh\": {\"generator\": \"block\", \"size\": [1, 1, 1], \"cells\": [1, 1, 1]},\n"
                     "   \"pin\": [0, 8]}\n"
                     "]}\n"));
    const char* pin[] = {"test_fem_world_pin.json:4", "objects[0]", "pin[1] = 8", NULL};
    expect_refused("test_fem_world_pin.json", pin);
    remove("test_fem_world_flat.node");
    remove("test_fem_world_flat.ele");
    remove("test_fem_world_flat.json");
    remove("test_fem_world_key.json");
    remove("test_fem_world_poisson.json");
    remove("test_fem_world_pin.json");
}

int main(void) {
    test_blocks();
    test_threads_snapshot();
    test_beam();
    test_bad_scenes();
    test_scene_files();
    TEST_END();
}
