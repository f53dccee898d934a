/* Tests recordings of real runs for the integration bench: probing each
 * solid's integration between steps leaves the run's states as they were
 * (same hash as an unprobed run), gives one row per solid (obstacles left
 * out) with its particles, a time and CG iterations, and the attached
 * pairs as pairs of those rows; a recording of two
 * stacked blocks holds their touching pair and loads back; bad recordings
 * are refused naming the file and line, and an existing file is never
 * overwritten. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/integrate_record.h"
#include "engine/integrate_probe.h"
#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/reduced_scenes.h"
#include "tests/test_files.h"

#define STEPS 4

static hy_world* load(void) {
    hy_scene_options o = hy_scene_options_default();
    o.threads = 1;
    hy_world* w = NULL;
    hy_status s = hy_scene_load_string(hy_test_fem_stack_json, strlen(hy_test_fem_stack_json), "stack", &o, &w);
    if (s) fprintf(stderr, "scene: %s\n", hy_last_error());
    return w;
}

static uint64_t g_plain_hash;

static void test_probe(void) {
    hy_world* w = load();
    CHECK(w != NULL);
    if (!w) return;
    for (int k = 0; k < STEPS; k++) CHECK_OK(hy_world_step(w, 0.01, 1));
    CHECK_OK(hy_world_hash(w, &g_plain_hash));
    hy_world_destroy(w);

    w = load();
    if (!w) return;
    hy_integrate_probe p[4];
    int32_t n = -1;
    for (int k = 0; k < STEPS; k++) {
        CHECK_OK(hy_world_probe_integration(w, 0.01, p, 4, &n));
        CHECK_OK(hy_world_step(w, 0.01, 1));
    }
    uint64_t h = 0;
    CHECK_OK(hy_world_hash(w, &h));
    CHECK(h == g_plain_hash);
    CHECK(n == 2); /* the floor is not a solid */
    for (int i = 0; i < 2 && n == 2; i++) {
        const char* name = NULL;
        CHECK_OK(hy_object_get_name(w, p[i].id, &name));
        CHECK(name && !strcmp(name, i ? "high" : "low"));
        CHECK(p[i].particles == 64 && p[i].seconds > 0 && p[i].cpu_seconds > 0 && p[i].cg_iterations > 0);
    }
    /* counting only */
    CHECK_OK(hy_world_probe_integration(w, 0.01, NULL, 0, &n));
    CHECK(n == 2);
    CHECK(hy_world_probe_integration(w, 0.0, p, 4, &n) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_probe_integration(w, 0.01, NULL, 4, &n) == HY_ERR_INVALID_ARG);
    /* attachments: none, then the two blocks tied across their 2 mm gap,
     * as rows of the probe (the floor is not one) */
    int32_t pairs[4] = {-1, -1, -1, -1}, np = -1;
    CHECK_OK(hy_world_probe_attachments(w, pairs, 2, &np));
    CHECK(np == 0);
    hy_solid_id a = {p[0].id.index, p[0].id.generation}, b = {p[1].id.index, p[1].id.generation};
    CHECK_OK(hy_solid_attach(w, b, a, 0.01, 1e4, NULL));
    CHECK_OK(hy_world_probe_attachments(w, pairs, 2, &np));
    CHECK(np == 1 && pairs[0] == 0 && pairs[1] == 1 && pairs[2] == -1);
    CHECK(hy_world_probe_attachments(w, NULL, 1, &np) == HY_ERR_INVALID_ARG);
    hy_world_destroy(w);
}

static void test_recording(const char* dir) {
    char scene[512], rec[512];
    snprintf(scene, sizeof scene, "%s/stack.json", dir);
    snprintf(rec, sizeof rec, "%s/stack.csv", dir);
    CHECK(hy_test_write_file(scene, hy_test_fem_stack_json));
    uint64_t h = 0;
    CHECK_OK(hy_irec_make(scene, NULL, 0, STEPS, rec, &h));
    CHECK(h == g_plain_hash);
    hy_irec r;
    CHECK_OK(hy_irec_load(rec, &r));
    CHECK(r.nobj == 2 && r.nsteps == STEPS && r.n[0] == 64 && r.n[1] == 64);
    int touching = 0;
    for (int k = 0; k < r.nsteps && r.pair_start; k++)
        for (int32_t q = r.pair_start[k]; q < r.pair_start[k + 1]; q++) {
            CHECK(r.pairs[2 * q] == 0 && r.pairs[2 * q + 1] == 1);
            touching++;
        }
    fprintf(stderr, "recording: %d of %d steps with the pair\n", touching, STEPS);
    /* the first step has no contacts before it; the blocks meet in the second */
    CHECK(r.pair_start && r.pair_start[1] == 0 && touching >= STEPS - 2);
    /* a block in free flight takes no CG iteration (its solver's start is
     * the exact solution there); the touching ones take some */
    int with_cg = 0;
    for (int i = 0; i < r.nobj * r.nsteps && r.seconds; i++) {
        CHECK(r.seconds[i] > 0 && r.cg[i] >= 0);
        with_cg += r.cg[i] > 0;
    }
    CHECK(with_cg >= r.nobj * (r.nsteps - 2));
    hy_irec_free(&r);
    /* never overwritten */
    CHECK(hy_irec_make(scene, NULL, 0, 1, rec, NULL) == HY_ERR_IO);
    CHECK(strstr(hy_last_error(), "stack.csv") != NULL);

    /* bad files name the line */
    static const char* bad[] = {
        "# r\nobject,0,0,64,0.001,5\nobject,0,1,64,0.001,5\npair,0,1,2\n",   /* b past the objects */
        "# r\nobject,0,0,64,0.001,5\nobject,0,1,64,0.001,5\npair,0,1,0\n",   /* a >= b */
        "# r\nobject,0,0,64,0.001,5\nobject,1,0,65,0.001,5\nobject,1,1,1,1,1\n", /* particles change */
        "# r\nobject,0,0,64,0.001,5\nfoo\n",
        "# r\nobject,0,0,64,-1,5\n",
    };
    static const int line[] = {4, 4, 3, 3, 2};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char bad_path[512], want[32];
        snprintf(bad_path, sizeof bad_path, "%s/bad%zu.csv", dir, i);
        CHECK(hy_test_write_file(bad_path, bad[i]));
        CHECK(hy_irec_load(bad_path, &r) == HY_ERR_PARSE);
        snprintf(want, sizeof want, "bad%zu.csv:%d:", i, line[i]);
        CHECK(strstr(hy_last_error(), want) != NULL);
        remove(bad_path);
    }
    /* a step that lacks an object */
    char gap[512];
    snprintf(gap, sizeof gap, "%s/gap.csv", dir);
    CHECK(hy_test_write_file(gap, "# r\nobject,0,0,64,0.001,5\nobject,0,1,64,0.001,5\nobject,1,1,64,0.001,5\n"));
    CHECK(hy_irec_load(gap, &r) == HY_ERR_PARSE && strstr(hy_last_error(), "lacks object 0"));
    CHECK(hy_irec_load("/nonexistent/x.csv", &r) == HY_ERR_IO);
    remove(gap);
    remove(rec);
    remove(scene);
}

int main(void) {
    char dir[] = "/tmp/hy_irec_XXXXXX";
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    test_probe();
    test_recording(dir);
    rmdir(dir);
    TEST_END();
}
