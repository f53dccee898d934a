/* Tests interactions between solids in the world: a bar of three FEM
 * blocks attached face to face stays joined (the attached vertices within
 * a tolerance of each other) and sags as far as one beam of the same
 * mesh; contacts between two stacked blocks become coupling pairs, which
 * leave the impulse response less to do and the stack at rest; scenes'
 * "parameters" and "attachments" are checked naming file, line and
 * object; the fem_bars scene holds its documented counts. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/check.h"
#include "engine/links.h"
#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/world_step.h"

static hy_world* load_opt(const char* json, const char* params) {
    hy_scene_options o = hy_scene_options_default();
    o.threads = 2;
    o.parameters = params;
    hy_world* w = NULL;
    hy_status s = hy_scene_load_string(json, strlen(json), "test_fem_links", &o, &w);
    if (s) fprintf(stderr, "scene: %s\n", hy_last_error());
    return w;
}

static hy_object_id object_named(hy_world* w, const char* name) {
    hy_object_id none = {0, 0};
    for (int32_t i = 0; i < hy_test_object_count(w); i++) {
        hy_object_id id;
        const char* n = NULL;
        if (!hy_world_get_object(w, i, &id) && !hy_object_get_name(w, id, &n) && strcmp(n, name) == 0) return id;
    }
    return none;
}

static int32_t vertex_count(hy_world* w, hy_object_id id) {
    int32_t nv = 0, nt = 0;
    const int32_t* tri = NULL;
    return hy_object_get_mesh(w, id, &nv, &nt, &tri) ? 0 : nv;
}

/* Mean y of an object's vertices whose x was >= x_min (m) at rest
 * (rest: 3 per vertex, its initial positions). */
static double tip_y(hy_world* w, hy_object_id id, const double* rest, double x_min) {
    int32_t nv = vertex_count(w, id);
    double* x = malloc(sizeof(double) * 3 * (size_t)(nv ? nv : 1));
    double sum = 0.0;
    int n = 0;
    if (x && !hy_object_get_positions(w, id, x, 3 * (size_t)nv))
        for (int32_t k = 0; k < nv; k++)
            if (rest[3 * k] >= x_min) sum += x[3 * k + 1], n++;
    free(x);
    return n ? sum / n : NAN;
}

/* A bar of three 0.1 m blocks of 2 x 2 x 2 cells, the first held on its
 * wall face, attached to each other, and beside it (0.5 m away: they
 * never meet) one 0.3 m beam of 6 x 2 x 2 cells: the same nodes and
 * elements, joined by its own elements where the bar has springs. */
static const char* bar_json =
    "{\"parameters\": {\"cells\": 2, \"k\": 1e6},"
    " \"solver\": {\"time_step\": 0.01, \"cg_max_iterations\": 400},"
    " \"materials\": {\"rubber\": {\"young\": 3e5, \"poisson\": 0.3, \"density\": 1000, \"damping\": 0.05}},"
    " \"objects\": ["
    "  {\"type\": \"fem\", \"name\": \"root\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.1, 0.1, 0.1], \"cells\": [\"$cells\", \"$cells\", \"$cells\"]},"
    "   \"pin\": {\"x_below\": -0.0499}},"
    "  {\"type\": \"fem\", \"name\": \"b\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.1, 0.1, 0.1], \"cells\": [\"$cells\", \"$cells\", \"$cells\"]},"
    "   \"transform\": {\"position\": [0.15, 0, 0]}, \"array\": {\"count\": [2, 1, 1], \"spacing\": [0.1, 0, 0]}},"
    "  {\"type\": \"fem\", \"name\": \"beam\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.3, 0.1, 0.1], \"cells\": [6, 2, 2]},"
    "   \"transform\": {\"position\": [0.1, 0, 0.5]}, \"pin\": {\"x_below\": -0.1499}}"
    " ],"
    " \"attachments\": [{\"objects\": [\"root\", \"b_0\", \"b_1\"], \"stiffness\": \"$k\"}]}";

static void test_bar(void) {
    hy_world* w = load_opt(bar_json, NULL);
    CHECK(w != NULL);
    if (!w) return;
    int64_t attached = 0, contacts = 0;
    hy_links_pair_counts(w, &attached, &contacts);
    CHECK(attached == 2 * 9); /* 3 x 3 vertices on each shared face */
    hy_object_id ids[3] = {object_named(w, "root"), object_named(w, "b_0"), object_named(w, "b_1")};
    hy_object_id beam = object_named(w, "beam");
    double x0[3][3 * 27];
    for (int b = 0; b < 3; b++) CHECK_OK(hy_object_get_positions(w, ids[b], x0[b], 3 * 27));
    double beam_rest[3 * 7 * 3 * 3];
    CHECK_OK(hy_object_get_positions(w, beam, beam_rest, 3 * 63));
    double bar0 = tip_y(w, ids[2], x0[2], 0.2499), beam0 = tip_y(w, beam, beam_rest, 0.2499);
    int steps = 150;
    double max_gap = 0.0;
    for (int i = 0; i < steps; i++) {
        hy_status s = hy_test_step(w);
        CHECK_OK(s);
        if (s) break;
        /* the vertices that coincided at rest on each shared face */
        for (int b = 0; b < 2; b++) {
            double xa[3 * 27], xb[3 * 27];
            CHECK_OK(hy_object_get_positions(w, ids[b], xa, 3 * 27));
            CHECK_OK(hy_object_get_positions(w, ids[b + 1], xb, 3 * 27));
            for (int p = 0; p < 27; p++)
                for (int q = 0; q < 27; q++) {
                    double d2 = 0.0, g2 = 0.0;
                    for (int c = 0; c < 3; c++) {
                        double r = x0[b][3 * p + c] - x0[b + 1][3 * q + c], g = xa[3 * p + c] - xb[3 * q + c];
                        d2 += r * r, g2 += g * g;
                    }
                    if (d2 < 1e-12 && sqrt(g2) > max_gap) max_gap = sqrt(g2);
                }
        }
    }
    double bar_sag = bar0 - tip_y(w, ids[2], x0[2], 0.2499), beam_sag = beam0 - tip_y(w, beam, beam_rest, 0.2499);
    fprintf(stderr, "bar: tip sag %.5f m (beam of one mesh %.5f m), largest gap at an attachment %.3g m\n", bar_sag,
            beam_sag, max_gap);
    /* joined: the springs (1e6 N/m) carry at most a few newtons per pair */
    CHECK(max_gap < 1e-4);
    /* it flexes: the tip came down by centimetres, as the one-piece beam
     * did (the springs add a little compliance; 5%) */
    CHECK(beam_sag > 0.005);
    CHECK(bar_sag >= 0.99 * beam_sag && bar_sag <= 1.05 * beam_sag);
    hy_world_destroy(w);
}

/* Load json (params: overrides) as "bad.json"; expect a refusal with
 * status want_status whose message holds every `want`. */
static void expect_refused(const char* json, const char* params, hy_status want_status, const char* const* want) {
    hy_scene_options o = hy_scene_options_default();
    o.parameters = params;
    hy_world* w = (hy_world*)&o;
    hy_status s = hy_scene_load_string(json, strlen(json), "bad.json", &o, &w);
    CHECK(s == want_status);
    CHECK(w == NULL);
    CHECK_MESSAGE(hy_last_error(), want);
}

#define BLOCK(NAME, X, CELLS)                                                                                      \
    "  {\"type\": \"fem\", \"name\": \"" NAME "\", \"mesh\": {\"generator\": \"block\", \"size\": [1, 1, 1], " \
    "\"cells\": [" CELLS ", 1, 1]}, \"transform\": {\"position\": [" X ", 0, 0]}},\n"

/* an obstacle, and a solid 3 m above the blocks (apart from them) */
#define WALL "  {\"type\": \"obstacle\", \"name\": \"wall\", \"mesh\": {\"generator\": \"box\"}, \"transform\": {\"position\": [5, 0, 0]}}\n"
#define FAR_C "  {\"type\": \"fem\", \"name\": \"c\", \"mesh\": {\"generator\": \"block\"}, \"transform\": {\"position\": [0, 3, 0]}}\n"

/* Bad parameters and attachments are refused naming file, line and the
 * item; a good override changes the scene. */
static void test_bad_scenes(void) {
    const char* unknown_name =
        "{\"objects\": [\n" BLOCK("a", "0", "1") BLOCK("b", "1", "1")
        WALL
        "],\n"
        "\"attachments\": [\n"
        "  {\"objects\": [\"a\", \"b\"], \"stiffness\": 1e4},\n"
        "  {\"objects\": [\"b\",\n"
        "     \"c\"], \"stiffness\": 1e4}\n"
        "]}\n";
    const char* want1[] = {"bad.json:9: attachments[1].objects[1]", "no object is named \"c\"", NULL};
    expect_refused(unknown_name, NULL, HY_ERR_PARSE, want1);

    const char* obstacle =
        "{\"objects\": [\n" BLOCK("a", "0", "1")
        WALL
        "],\n"
        "\"attachments\": [{\"objects\": [\"a\", \"wall\"], \"stiffness\": 1e4}]}\n";
    const char* want2[] = {"bad.json:5: attachments[0].objects[1]", "\"wall\" is not a fem or massspring", NULL};
    expect_refused(obstacle, NULL, HY_ERR_PARSE, want2);

    /* blocks 1.5 m apart share no vertex: found when the world is built */
    const char* apart =
        "{\"objects\": [\n" BLOCK("a", "0", "1") BLOCK("b", "1.5", "1")
        FAR_C
        "],\n"
        "\"attachments\": [\n"
        "  {\"objects\": [\"a\", \"b\"], \"stiffness\": 1e4, \"tolerance\": 0.01}\n"
        "]}\n";
    const char* want3[] = {"bad.json:7: attachments[0]", "'a'", "'b'", "no vertices within 0.01 m", NULL};
    expect_refused(apart, NULL, HY_ERR_PARSE, want3);

    const char* vertices =
        "{\"objects\": [\n" BLOCK("a", "0", "1") BLOCK("b", "1", "1")
        FAR_C
        "],\n"
        "\"attachments\": [\n"
        "  {\"objects\": [\"a\", \"b\"], \"stiffness\": 1e4,\n"
        "   \"vertices\": [[1, 0], [3, 8]]}\n"
        "]}\n";
    const char* want4[] = {"bad.json:8: attachments[0].vertices[1]", "vertex 8 of 'b' out of range (it has 8)", NULL};
    expect_refused(vertices, NULL, HY_ERR_PARSE, want4);

    const char* param =
        "{\"parameters\": {\"cells\": 2},\n"
        " \"objects\": [\n" BLOCK("a", "0", "\"$cels\"") FAR_C
        "]}\n";
    const char* want5[] = {"bad.json:3: objects[0].mesh.cells[0]", "unknown parameter \"$cels\"", "cells", NULL};
    expect_refused(param, NULL, HY_ERR_PARSE, want5);
    const char* want6[] = {"bad.json", "parameter override \"size\"", "no parameter of that name", NULL};
    expect_refused(param, "size=3", HY_ERR_PARSE, want6);
    const char* want7[] = {"bad.json", "\"cells\" must be NAME=NUMBER", NULL};
    expect_refused(param, "cells", HY_ERR_PARSE, want7);

    /* a parameter's value is checked as the field's own, at the field */
    const char* good =
        "{\"parameters\": {\"cells\": 2},\n"
        " \"objects\": [\n" BLOCK("a", "0", "\"$cells\"") BLOCK("b", "1", "\"$cells\"")
        FAR_C
        "],\n"
        " \"attachments\": [{\"objects\": [\"a\", \"b\"], \"stiffness\": 1e4}]}\n";
    const char* want8[] = {"bad.json:3: objects[0].mesh.cells[0] must be in [1, 4096], got 0", NULL};
    expect_refused(good, "cells=0", HY_ERR_PARSE, want8);
    hy_world* w = load_opt(good, "cells=3");
    CHECK(w != NULL);
    int32_t tets = 0, particles = 0;
    if (w) CHECK_OK(hy_world_get_tet_counts(w, &tets, &particles));
    CHECK(tets == 2 * 6 * 3 + 6 * 4 * 4 * 4);
    int64_t attached = 0;
    hy_links_pair_counts(w, &attached, NULL);
    CHECK(attached == 4); /* the shared face x = 0.5 has 2 x 2 vertices at one cell across y and z */
    hy_world_destroy(w);
}

/* A 0.15 m block dropped 5 mm onto a 0.2 m block held at its bottom. */
static const char* stack_json =
    "{\"solver\": {\"time_step\": 0.01},"
    " \"materials\": {\"rubber\": {\"young\": 5e4, \"poisson\": 0.3, \"density\": 1000, \"damping\": 0.01,"
    "   \"friction\": 0.4}},"
    " \"objects\": ["
    "  {\"type\": \"fem\", \"name\": \"base\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.2, 0.2, 0.2], \"cells\": [3, 3, 3]},"
    "   \"transform\": {\"position\": [0, 0.1, 0]}, \"pin\": {\"y_below\": -0.099}},"
    "  {\"type\": \"fem\", \"name\": \"top\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.15, 0.15, 0.15], \"cells\": [3, 3, 3]},"
    "   \"transform\": {\"position\": [0.01, 0.28, 0]}}"
    " ]}";

typedef struct stack_run {
    double impulse;     /* summed over the steps: what the response did to the solids, N s */
    int64_t intersecting; /* triangle pairs, summed over the steps' end states */
    int64_t max_pairs;  /* most contact pairs held */
    double top_y, top_vy; /* the top block's mean height and vertical velocity at the end */
    uint64_t hash;
} stack_run;

static hy_world* load_stack(int coupling, int threads) {
    hy_scene_options o = hy_scene_options_default();
    o.threads = threads;
    hy_world* w = NULL;
    CHECK_OK(hy_scene_load_string(stack_json, strlen(stack_json), "stack", &o, &w));
    if (w) CHECK_OK(hy_links_set_contact_coupling(w, coupling));
    return w;
}

/* restore_at > 0: after that many steps the state goes through a
 * snapshot into a fresh world, which runs the rest. */
static stack_run run_stack(int coupling, int threads, int steps, int restore_at) {
    stack_run r = {0.0, 0, 0, 0.0, 0.0, 0};
    hy_world* w = load_stack(coupling, threads);
    if (!w) return r;
    for (int i = 0; i < steps; i++) {
        if (i == restore_at && i > 0) {
            size_t size = 0, written = 0;
            CHECK_OK(hy_world_snapshot_size(w, &size));
            void* snap = malloc(size);
            hy_world* fresh = load_stack(coupling, threads);
            CHECK(snap && fresh);
            if (!snap || !fresh) break;
            CHECK_OK(hy_world_snapshot(w, snap, size, &written));
            CHECK_OK(hy_world_restore(fresh, snap, written));
            free(snap);
            hy_world_destroy(w);
            w = fresh;
        }
        hy_status s = hy_test_step(w);
        CHECK_OK(s);
        if (s) break;
        double imp = 0.0;
        int64_t n = 0, pairs = 0;
        hy_links_response_work(w, &imp, NULL);
        r.impulse += imp;
        hy_links_pair_counts(w, NULL, &pairs);
        if (pairs > r.max_pairs) r.max_pairs = pairs;
        CHECK_OK(hy_tritri_count_world(w, &n, NULL, 0));
        r.intersecting += n;
    }
    hy_object_id top = object_named(w, "top");
    double x[3 * 64], v[3 * 64];
    CHECK_OK(hy_object_get_positions(w, top, x, 3 * 64));
    CHECK_OK(hy_object_get_velocities(w, top, v, 3 * 64));
    for (int k = 0; k < 64; k++) r.top_y += x[3 * k + 1] / 64, r.top_vy += v[3 * k + 1] / 64;
    r.hash = hy_test_hash(w);
    hy_world_destroy(w);
    return r;
}

/* Two blocks resting on each other: with contacts coupled into the
 * implicit solve, the penalty carries the top block and the impulse
 * response (still run after every step) does a fraction of the work it
 * does alone; the stack comes to rest, free of intersections, the same
 * with 1 and 2 threads and through a snapshot (the contact pairs a step
 * hands to the next are in it). */
static void test_contact_coupling(void) {
    int steps = 200;
    stack_run off = run_stack(0, 1, steps, 0), on = run_stack(1, 1, steps, 0), on2 = run_stack(1, 2, steps, 100);
    fprintf(stderr,
            "stack: response impulse %.3g N s alone, %.3g coupled (%lld pairs at most); top block at %.4f m "
            "(alone %.4f), vy %.2g m/s\n",
            off.impulse, on.impulse, (long long)on.max_pairs, on.top_y, off.top_y, on.top_vy);
    CHECK(off.max_pairs == 0);
    CHECK(on.max_pairs > 16); /* the top's bottom face (4 x 4 vertices) and the base's face under it */
    /* measured: 134 against 10.2 N s (the top block's weight over the 2 s is 66 N s) */
    CHECK(on.impulse < 0.2 * off.impulse);
    CHECK(off.intersecting == 0 && on.intersecting == 0);
    /* at rest on the base: its centre 0.275 m at rest shape, less the
     * blocks' compression under the load (E 5e4 Pa: about 7 mm) and the gap */
    CHECK(fabs(on.top_vy) < 2e-3);
    CHECK(on.top_y > 0.260 && on.top_y < 0.275);
    CHECK(on.hash != 0 && on.hash == on2.hash);
}

/* fem_bars at 2 cells a block: 18 attachments of 3 x 3 vertex pairs; a
 * few steps leave the bars joined and free of intersections (the
 * attached blocks' shared faces are not collision). */
static void test_bars_scene(void) {
    char path[512];
    snprintf(path, sizeof path, "%s/scenes/fem_bars.json", HY_SOURCE_DIR);
    hy_scene_options o = hy_scene_options_default();
    o.parameters = "cells=2";
    hy_world* w = NULL;
    CHECK_OK(hy_scene_load(path, &o, &w));
    if (!w) return;
    int64_t attached = 0;
    hy_links_pair_counts(w, &attached, NULL);
    CHECK(attached == 18 * 9);
    int32_t tets = 0, particles = 0;
    CHECK_OK(hy_world_get_tet_counts(w, &tets, &particles));
    CHECK(tets == 30 * 6 * 8);
    for (int i = 0; i < 10; i++) CHECK_OK(hy_test_step(w));
    int64_t n = -1;
    CHECK_OK(hy_tritri_count_world(w, &n, NULL, 0));
    CHECK(n == 0);
    hy_world_destroy(w);
}

int main(void) {
    test_bar();
    test_bad_scenes();
    test_bars_scene();
    test_contact_coupling();
    TEST_END();
}
