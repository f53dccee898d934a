/* Tests the JSON scene loader: the benchmark and demo scenes load with their
 * stated sizes, every field reaches the world, and bad input of each kind
 * returns the right status with file, line and field path in the message and
 * no world. */
#include <stdint.h>
#include <string.h>

#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/world_step.h"

#define SCENES HY_SOURCE_DIR "/scenes/"
#define FIXTURES HY_SOURCE_DIR "/tests/data/scenes/"

static hy_scene_options one_thread(void) {
    hy_scene_options o = hy_scene_options_default();
    o.threads = 1;
    return o;
}

static hy_world* load_file(const char* path) {
    hy_scene_options o = one_thread();
    hy_world* w = NULL;
    hy_status s = hy_scene_load(path, &o, &w);
    if (s) fprintf(stderr, "loading %s: %s: %s\n", path, hy_status_name(s), hy_last_error());
    return w;
}

static hy_world* load_str(const char* json) {
    hy_scene_options o = one_thread();
    hy_world* w = NULL;
    hy_status s = hy_scene_load_string(json, strlen(json), "inline.json", &o, &w);
    if (s) fprintf(stderr, "loading inline scene: %s: %s\n", hy_status_name(s), hy_last_error());
    return w;
}

/* Loading must fail with `want`, leave *out NULL, and mention every string
 * in `parts` (NULL-ended) in the message. */
static void expect_fail_at(int line, hy_status got, hy_world* w, hy_status want, const char* const* parts) {
    const char* msg = hy_last_error();
    int ok = got == want && w == NULL;
    for (int i = 0; parts[i]; i++) ok = ok && strstr(msg, parts[i]) != NULL;
    hy_test_checks++;
    if (!ok) {
        hy_test_failures++;
        fprintf(stderr, "%s:%d: expected %s, got %s (world %s): \"%s\"; wanted the message to contain:", __FILE__,
                line, hy_status_name(want), hy_status_name(got), w ? "non-NULL" : "NULL", msg);
        for (int i = 0; parts[i]; i++) fprintf(stderr, " \"%s\"", parts[i]);
        fprintf(stderr, "\n");
    }
    if (w) hy_world_destroy(w);
}

#define EXPECT_STRING_FAIL(json, want, ...)                                                          \
    do {                                                                                            \
        const char* parts_[] = {__VA_ARGS__, NULL};                                                 \
        hy_scene_options o_ = one_thread();                                                         \
        hy_world* w_ = (hy_world*)&o_; /* garbage in: the loader must set NULL */                  \
        hy_status s_ = hy_scene_load_string(json, strlen(json), "bad.json", &o_, &w_);              \
        expect_fail_at(__LINE__, s_, w_, want, parts_);                                             \
    } while (0)

#define EXPECT_FILE_FAIL(path, want, ...)                                \
    do {                                                                \
        const char* parts_[] = {__VA_ARGS__, NULL};                     \
        hy_scene_options o_ = one_thread();                             \
        hy_world* w_ = (hy_world*)&o_;                                  \
        hy_status s_ = hy_scene_load(path, &o_, &w_);                   \
        expect_fail_at(__LINE__, s_, w_, want, parts_);                 \
    } while (0)

static hy_object_id object_named(const hy_world* w, const char* name) {
    hy_object_id none = {0, 0};
    for (int32_t i = 0; i < hy_test_object_count(w); i++) {
        hy_object_id id;
        const char* n = NULL;
        if (hy_world_get_object(w, i, &id) == HY_OK && hy_object_get_name(w, id, &n) == HY_OK && n &&
            strcmp(n, name) == 0)
            return id;
    }
    return none;
}

/* The body of that name ({0, 0}, which every call refuses, if none). */
static hy_body_id body_named(const hy_world* w, const char* name) {
    hy_body_id body = {0, 0};
    if (hy_object_as_body(w, object_named(w, name), &body) != HY_OK) body = (hy_body_id){0, 0};
    return body;
}

/* ------------------------------------------------------------ good scenes */

static void test_benchmarks(void) {
    /* cloth_ball: 215x215 grid = 2*214*214 = 91,592 + icosphere(3) = 20*4^3 = 1,280. */
    hy_world* w = load_file(SCENES "cloth_ball.json");
    CHECK(w != NULL);
    if (w) {
        CHECK(hy_test_triangle_count(w) == 92872);
        CHECK(hy_test_object_count(w) == 2);
        hy_object_id sheet = object_named(w, "sheet");
        int32_t nv = 0, nt = 0;
        const int32_t* tri = NULL;
        CHECK_OK(hy_object_get_mesh(w, sheet, &nv, &nt, &tri));
        CHECK(nv == 215 * 215 && nt == 91592);
        hy_object_kind k = 0;
        CHECK_OK(hy_object_get_kind(w, object_named(w, "ball"), &k));
        CHECK(k == HY_OBJECT_OBSTACLE);
        hy_world_destroy(w);
    }
    /* nbody: 320 icospheres(2) * 320 + 320 cones(65) * 130 + bowl 64*(2*16-1). */
    w = load_file(SCENES "nbody.json");
    CHECK(w != NULL);
    if (w) {
        CHECK(hy_test_triangle_count(w) == 320 * 320 + 320 * 130 + 64 * 31);
        CHECK(hy_test_triangle_count(w) == 145984);
        CHECK(hy_test_object_count(w) == 641);
        hy_object_kind k = 0;
        CHECK_OK(hy_object_get_kind(w, object_named(w, "piece_639"), &k));
        CHECK(k == HY_OBJECT_BODY);
        hy_world_destroy(w);
    }
    /* fracture: 14*12*5 = 840 boxes of 12*5^2 = 300 triangles + icosphere(2)
     * + the tray's floor and four rims (boxes of 12 triangles);
     * bonds 13*12*5 + 14*11*5 + 14*12*4 = 2,222. */
    w = load_file(SCENES "fracture.json");
    CHECK(w != NULL);
    if (w) {
        CHECK(hy_test_triangle_count(w) == 252320 + 5 * 12);
        CHECK(hy_test_object_count(w) == 846);
        CHECK(hy_test_bond_count(w) == 2222);
        double v[3], om[3];
        CHECK_OK(hy_body_get_velocity(w, body_named(w, "projectile"), v, om));
        CHECK_NEAR(v[2], 20.0, 1e-12); /* copied, not computed */
        hy_world_destroy(w);
    }
}

static void test_small_scenes(void) {
    hy_world* w = load_file(SCENES "cloth_small.json");
    CHECK(w != NULL);
    if (w) {
        CHECK(hy_test_triangle_count(w) == 2 * 31 * 31);
        hy_world_destroy(w);
    }
    w = load_file(SCENES "drop.json");
    CHECK(w != NULL);
    if (w) {
        CHECK(hy_test_triangle_count(w) == 12 + 320);
        CHECK(hy_test_object_count(w) == 2);
        hy_world_destroy(w);
    }
    /* A mesh file resolves against the scene's directory. */
    w = load_file(FIXTURES "scene_file_mesh.json");
    CHECK(w != NULL);
    if (w) {
        CHECK(hy_test_triangle_count(w) == 8);
        /* scale 0.5 on a unit tetrahedron: volume 1/6 * 0.125. */
        hy_mass_properties mp;
        CHECK_OK(hy_body_get_mass_properties(w, body_named(w, "tetra"), &mp));
        CHECK_NEAR(mp.volume, 0.125 / 6.0, 1e-12); /* rounding only */
        hy_world_destroy(w);
    }
}

/* Loading the same scene twice gives bit-identical worlds (seeded jitter). */
static void test_deterministic(void) {
    hy_world* a = load_file(SCENES "nbody.json");
    hy_world* b = load_file(SCENES "nbody.json");
    CHECK(a && b);
    if (a && b) CHECK(hy_test_hash(a) == hy_test_hash(b));
    hy_world_destroy(a);
    hy_world_destroy(b);
}

static void test_fields_reach_world(void) {
    const char* json =
        "{\"solver\": {\"time_step\": 0.02, \"substeps\": 3, \"gravity\": [0, -1, 0], \"threads\": 2,\n"
        "   \"cg_max_iterations\": 50, \"cg_tolerance\": 1e-4, \"collisions\": false},\n"
        " \"materials\": {\"lead\": {\"density\": 11000, \"friction\": 0.9}},\n"
        " \"objects\": [\n"
        "  {\"type\": \"body\", \"name\": \"cube\", \"material\": {\"base\": \"lead\", \"density\": 2000},\n"
        "   \"mesh\": {\"generator\": \"box\", \"half_extents\": [0.5, 0.5, 0.5], \"subdivisions\": 2},\n"
        "   \"transform\": {\"position\": [1, 2, 3], \"rotation\": {\"axis\": [0, 1, 0], \"degrees\": 90},\n"
        "                 \"scale\": [2, 1, 1]},\n"
        "   \"velocity\": [1, 0, 0], \"angular_velocity\": [0, 0, 3]},\n"
        "  {\"type\": \"obstacle\", \"mesh\": {\"generator\": \"torus\"},\n"
        "   \"transform\": {\"rotation\": {\"quaternion\": [0, 0, 0, 2]}},\n"
        "   \"motion\": {\"translate\": [0, 1, 0], \"rotate\": {\"axis\": [0, 0, 2], \"rate\": 1}}}\n"
        " ]}";
    hy_scene_options o = hy_scene_options_default(); /* threads come from the scene */
    hy_world* w = NULL;
    CHECK_OK(hy_scene_load_string(json, strlen(json), "fields.json", &o, &w));
    if (!w) return;
    hy_world_def d;
    CHECK_OK(hy_world_get_def(w, &d));
    CHECK(d.time_step == 0.02 && d.substeps == 3 && d.threads == 2 && d.cg_max_iterations == 50);
    CHECK(d.gravity[1] == -1.0 && d.cg_tolerance == 1e-4 && d.collisions == 0);
    hy_body_id cube = body_named(w, "cube");
    hy_mass_properties mp;
    CHECK_OK(hy_body_get_mass_properties(w, cube, &mp));
    /* Box 1 x 1 x 1 scaled to 2 x 1 x 1, density overridden to 2000. Tolerance:
     * divergence-theorem rounding. */
    CHECK_NEAR(mp.volume, 2.0, 1e-9);
    CHECK_NEAR(mp.mass, 4000.0, 1e-6);
    double p[3], q[4];
    CHECK_OK(hy_body_get_transform(w, cube, p, q));
    CHECK_NEAR(p[0], 1.0, 1e-12);
    CHECK_NEAR(p[1], 2.0, 1e-12);
    CHECK_NEAR(p[2], 3.0, 1e-12);
    /* 90 degrees about y: (cos 45, 0, sin 45, 0), up to sign. */
    CHECK_NEAR(fabs(q[0]), sqrt(0.5), 1e-12);
    CHECK_NEAR(fabs(q[2]), sqrt(0.5), 1e-12);
    /* The scaled x extent (+-1) now lies along z. */
    int32_t nv = 0, nt = 0;
    const int32_t* tri;
    CHECK_OK(hy_object_get_mesh(w, hy_body_object(cube), &nv, &nt, &tri));
    CHECK(nt == 12 * 4);
    double* x = malloc(sizeof(double) * 3 * (size_t)nv);
    CHECK_OK(hy_object_get_positions(w, hy_body_object(cube), x, 3 * (size_t)nv));
    double zmax = -1e9, xmax = -1e9;
    for (int32_t i = 0; i < nv; i++) zmax = fmax(zmax, x[3 * i + 2]), xmax = fmax(xmax, x[3 * i]);
    CHECK_NEAR(zmax, 4.0, 1e-9);
    CHECK_NEAR(xmax, 1.5, 1e-9);
    free(x);
    double v[3], om[3];
    CHECK_OK(hy_body_get_velocity(w, cube, v, om));
    CHECK(v[0] == 1.0 && om[2] == 3.0);
    /* An unnamed object gets its type and index. */
    hy_object_kind k = 0;
    CHECK_OK(hy_object_get_kind(w, object_named(w, "obstacle1"), &k));
    CHECK(k == HY_OBJECT_OBSTACLE);
    hy_world_destroy(w);

    /* Options override the scene. */
    o.threads = 1;
    o.collisions = 1;
    CHECK_OK(hy_scene_load_string(json, strlen(json), "fields.json", &o, &w));
    if (w) {
        CHECK_OK(hy_world_get_def(w, &d));
        CHECK(d.threads == 1 && d.collisions == 1);
        hy_world_destroy(w);
    }
}

/* Arrays: count, spacing, names, cycled meshes. */
static void test_array(void) {
    hy_world* w = load_str("{\"objects\": [{\"type\": \"body\", \"name\": \"b\",\n"
                           " \"meshes\": [{\"generator\": \"icosphere\", \"subdivisions\": 0}, {\"generator\": \"box\"}],\n"
                           " \"transform\": {\"position\": [0, 10, 0]},\n"
                           " \"array\": {\"count\": [3, 1, 2], \"spacing\": [2, 0, 4]}}]}");
    CHECK(w != NULL);
    if (!w) return;
    CHECK(hy_test_object_count(w) == 6);
    CHECK(hy_test_triangle_count(w) == 3 * 20 + 3 * 12);
    /* Instance 5 = (i, j, k) = (2, 0, 1): x = (2 - 1) * 2, z = (1 - 0.5) * 4. A
     * box (odd instance) has its centre of mass at its origin. */
    double p[3], q[4];
    CHECK_OK(hy_body_get_transform(w, body_named(w, "b_5"), p, q));
    CHECK_NEAR(p[0], 2.0, 1e-12);
    CHECK_NEAR(p[1], 10.0, 1e-12);
    CHECK_NEAR(p[2], 2.0, 1e-12);
    int32_t nv, nt;
    const int32_t* tri;
    CHECK_OK(hy_object_get_mesh(w, object_named(w, "b_0"), &nv, &nt, &tri));
    CHECK(nt == 20);
    CHECK_OK(hy_object_get_mesh(w, object_named(w, "b_1"), &nv, &nt, &tri));
    CHECK(nt == 12);
    hy_world_destroy(w);
}

/* Pins: named sets pick the right vertices; pinned vertices hold still. */
static void test_pins(void) {
    const char* sets[] = {"corners", "two_corners", "edge", "none"};
    const int counts[] = {4, 2, 5, 0};
    for (int k = 0; k < 4; k++) {
        char json[512];
        snprintf(json, sizeof json,
                 "{\"objects\": [{\"type\": \"cloth\", \"pin\": \"%s\",\n"
                 " \"mesh\": {\"generator\": \"grid\", \"vertices\": [5, 4], \"size\": [1, 1]}}]}",
                 sets[k]);
        hy_world* w = load_str(json);
        CHECK(w != NULL);
        if (!w) continue;
        hy_object_id id;
        CHECK_OK(hy_world_get_object(w, 0, &id));
        double x0[60], x1[60];
        CHECK_OK(hy_object_get_positions(w, id, x0, 60));
        for (int s = 0; s < 3; s++) CHECK_OK(hy_test_step(w));
        CHECK_OK(hy_object_get_positions(w, id, x1, 60));
        int still = 0;
        for (int i = 0; i < 20; i++) still += x0[3 * i + 1] == x1[3 * i + 1];
        if (still != counts[k]) fprintf(stderr, "pin set %s: %d vertices held, want %d\n", sets[k], still, counts[k]);
        CHECK(still == counts[k]);
        hy_world_destroy(w);
    }
    hy_world* w = load_str("{\"objects\": [{\"type\": \"cloth\", \"pin\": [0, 19],\n"
                           " \"mesh\": {\"generator\": \"grid\", \"vertices\": [5, 4]}}]}");
    CHECK(w != NULL);
    hy_world_destroy(w);
}

static void test_fracture_object(void) {
    hy_world* w = load_str("{\"solver\": {\"gravity\": [0, 0, 0]}, \"objects\": [{\"type\": \"fracture\",\n"
                           " \"name\": \"f\", \"size\": [2, 1, 1], \"pieces\": [2, 1, 1], \"gap\": 0.01,\n"
                           " \"bond_strength\": 5, \"transform\": {\"position\": [0, 1, 0]},\n"
                           " \"velocity\": [1, 0, 0], \"angular_velocity\": [0, 2, 0]}]}");
    CHECK(w != NULL);
    if (!w) return;
    CHECK(hy_test_object_count(w) == 2);
    CHECK(hy_test_bond_count(w) == 1);
    double p[3], q[4], v[3], om[3];
    CHECK_OK(hy_body_get_transform(w, body_named(w, "f_1"), p, q));
    CHECK_NEAR(p[0], 0.5, 1e-12);
    CHECK_NEAR(p[1], 1.0, 1e-12);
    /* The pieces move as one body: v + w x r with r = (0.5, 0, 0). */
    CHECK_OK(hy_body_get_velocity(w, body_named(w, "f_1"), v, om));
    CHECK_NEAR(v[0], 1.0, 1e-12);
    CHECK_NEAR(v[2], -1.0, 1e-12);
    CHECK_NEAR(om[1], 2.0, 1e-12);
    hy_world_destroy(w);
}

/* load_string: a name with a directory resolves mesh files there; without
 * one, against the working directory; NULL name is allowed. */
static void test_load_string(void) {
    const char* json = "{\"objects\": [{\"type\": \"body\", \"mesh\": {\"file\": \"scene_tetra.obj\"}}]}";
    hy_world* w = NULL;
    CHECK_OK(hy_scene_load_string(json, strlen(json), FIXTURES "virtual.json", NULL, &w));
    CHECK(w && hy_test_triangle_count(w) == 4);
    hy_world_destroy(w);
    /* Length, not NUL, ends the text. */
    const char* two = "{\"objects\": []}{garbage";
    w = NULL;
    CHECK_OK(hy_scene_load_string(two, 15, NULL, NULL, &w));
    CHECK(w && hy_test_object_count(w) == 0);
    hy_world_destroy(w);
    EXPECT_STRING_FAIL(json, HY_ERR_IO, "bad.json:1: objects[0].mesh.file", "scene_tetra.obj");
}

/* ------------------------------------------------------------ bad input */

static void test_bad_json(void) {
    /* Malformed: a doubled comma on line 3. */
    EXPECT_STRING_FAIL("{\n  \"objects\": [\n    {\"type\": \"body\",, \"mesh\": {}}\n  ]\n}", HY_ERR_PARSE,
                       "bad.json:3:", "malformed JSON");
    EXPECT_STRING_FAIL("{\"objects\": [}", HY_ERR_PARSE, "bad.json:1:", "malformed JSON");
    /* Truncated anywhere: inside a string, after a colon, mid-array. */
    EXPECT_STRING_FAIL("{\n\"objects\": [{\"type\": \"bo", HY_ERR_PARSE, "bad.json:2:", "end of input");
    EXPECT_STRING_FAIL("{\n\"objects\":", HY_ERR_PARSE, "bad.json:2:", "end of input");
    EXPECT_STRING_FAIL("{\"objects\": [1, 2", HY_ERR_PARSE, "end of input");
    EXPECT_STRING_FAIL("", HY_ERR_PARSE, "bad.json:1:1:", "end of input");
    EXPECT_STRING_FAIL("   \n ", HY_ERR_PARSE, "bad.json:2:", "end of input");
    EXPECT_STRING_FAIL("{\"objects\": []}\n  x", HY_ERR_PARSE, "bad.json:2:3:", "after the top-level value");
    EXPECT_STRING_FAIL("[1, 2]", HY_ERR_PARSE, "bad.json:1: the top-level value must be an object, got an array");
    EXPECT_STRING_FAIL("{\"name\": \"x\"}", HY_ERR_PARSE, "bad.json:1: objects is required");
    EXPECT_FILE_FAIL(FIXTURES "scene_bad_truncated.json", HY_ERR_PARSE, "scene_bad_truncated.json:4:",
                     "end of input");
    /* A trailing comma is reported at the comma's line and column, not as
     * a truncated file (cJSON stops lines later, at the end here) */
    EXPECT_STRING_FAIL("{\n  \"objects\": [\n    {\"type\": \"body\"},\n  ]\n}", HY_ERR_PARSE, "bad.json:3:21:",
                       "comma before ']'", "trailing comma");
    EXPECT_STRING_FAIL("{\n  \"objects\": [],\n  \"solver\": {\"time_step\": 0.01,\n  }\n}", HY_ERR_PARSE,
                       "bad.json:3:31:", "comma before '}'");
    /* a comma before a brace inside a string is text, not a trailing comma */
    EXPECT_STRING_FAIL("{\"name\": \"a,}\", \"objects\": [1 2]}", HY_ERR_PARSE, "bad.json:1:", "malformed JSON near");
    EXPECT_FILE_FAIL(FIXTURES "scene_no_such_file.json", HY_ERR_IO, "scene_no_such_file.json", "cannot open");
    EXPECT_FILE_FAIL(FIXTURES, HY_ERR_IO, "not a regular file");
}

static void test_bad_fields(void) {
    EXPECT_FILE_FAIL(FIXTURES "scene_bad_unknown_field.json", HY_ERR_PARSE,
                     "scene_bad_unknown_field.json:10: objects[0].mesh.subdivisons: unknown field",
                     "radius, subdivisions");
    EXPECT_STRING_FAIL("{\"objects\": [], \"solvr\": {}}", HY_ERR_PARSE, "bad.json:1: solvr: unknown field");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\", \"mesh\": {\"generator\": \"box\"},\n \"pin\": [0]}]}",
                       HY_ERR_PARSE, "bad.json:2: objects[0].pin: unknown field");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\", \"mesh\": {\"generator\": \"box\"},\n"
                       " \"velocity\": [1, 2, 3], \"velocity\": [0, 0, 0]}]}",
                       HY_ERR_PARSE, "bad.json:2: objects[0].velocity: field given twice");
    EXPECT_STRING_FAIL("{\"solver\": {\"substeps\": \"two\"}, \"objects\": []}", HY_ERR_PARSE,
                       "bad.json:1: solver.substeps must be an integer, got the string \"two\"");
    EXPECT_STRING_FAIL("{\"solver\": {\"substeps\": 2.5}, \"objects\": []}", HY_ERR_PARSE,
                       "solver.substeps must be an integer, got 2.5");
    EXPECT_STRING_FAIL("{\"solver\": {\"substeps\": 65}, \"objects\": []}", HY_ERR_PARSE,
                       "solver.substeps must be in [1, 64], got 65");
    EXPECT_STRING_FAIL("{\"solver\": {\"gravity\": [0, -9.81]}, \"objects\": []}", HY_ERR_PARSE,
                       "solver.gravity must be an array of 3 numbers, got 2 elements");
    EXPECT_STRING_FAIL("{\"solver\": {\"collisions\": 1}, \"objects\": []}", HY_ERR_PARSE,
                       "solver.collisions must be true or false, got 1");
    EXPECT_STRING_FAIL("{\"solver\": {\"time_step\": 0}, \"objects\": []}", HY_ERR_PARSE,
                       "solver.time_step must be > 0, got 0");
    EXPECT_STRING_FAIL("{\"objects\": {}}", HY_ERR_PARSE, "objects must be an array, got an object");
    EXPECT_STRING_FAIL("{\"objects\": [3]}", HY_ERR_PARSE, "objects[0] must be an object, got 3");
    /* Unknown object type and generator. */
    EXPECT_STRING_FAIL("{\"objects\": [\n{\"type\": \"softbody\"}]}", HY_ERR_PARSE,
                       "bad.json:2: objects[0].type: unknown object type \"softbody\"", "cloth, body");
    EXPECT_STRING_FAIL("{\"objects\": [{\"name\": \"x\"}]}", HY_ERR_PARSE, "objects[0].type is required");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\",\n \"mesh\": {\"generator\": \"teapot\"}}]}",
                       HY_ERR_PARSE, "bad.json:2: objects[0].mesh.generator: unknown generator \"teapot\"");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\"}]}", HY_ERR_PARSE, "objects[0] needs \"mesh\"");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\", \"mesh\": {}}]}", HY_ERR_PARSE,
                       "objects[0].mesh needs exactly one of \"file\" or \"generator\"");
    /* Bad generator parameters. */
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"obstacle\",\n \"mesh\": {\"generator\": \"uv_sphere\",\n"
                       "  \"slices\": 2}}]}",
                       HY_ERR_PARSE, "bad.json:3: objects[0].mesh.slices must be in [3, 65536], got 2");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"obstacle\", \"mesh\": {\"generator\": \"icosphere\", "
                       "\"radius\": -1}}]}",
                       HY_ERR_PARSE, "objects[0].mesh.radius must be > 0, got -1");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"obstacle\", \"mesh\": {\"generator\": \"torus\", "
                       "\"major_radius\": 1, \"minor_radius\": 2}}]}",
                       HY_ERR_PARSE, "objects[0].mesh.minor_radius must be < major_radius");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"cloth\", \"mesh\": {\"generator\": \"grid\", "
                       "\"vertices\": [5000, 5000]}}]}",
                       HY_ERR_PARSE, "objects[0].mesh: would make", "triangles");
    /* A cloth too small for double (its triangles' areas underflow). */
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"cloth\", \"name\": \"flag\",\n \"mesh\": {\"generator\": \"grid\", "
                       "\"size\": [1e-300, 1]}}]}",
                       HY_ERR_PARSE, "bad.json:1: objects[0] (flag): cloth: triangle 0", "is degenerate");
    /* Names, materials, transforms, arrays. */
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\", \"name\": \"a\", \"mesh\": {\"generator\": \"box\"}},\n"
                       "{\"type\": \"body\", \"name\": \"a\", \"mesh\": {\"generator\": \"box\"}}]}",
                       HY_ERR_PARSE, "bad.json:2: objects[1].name: object name \"a\" is already used by objects[0]");
    EXPECT_STRING_FAIL("{\"materials\": {\"m\": {}}, \"objects\": [{\"type\": \"body\", \"material\": \"n\",\n"
                       " \"mesh\": {\"generator\": \"box\"}}]}",
                       HY_ERR_PARSE, "bad.json:1: objects[0].material: unknown material \"n\" (defined: m)");
    EXPECT_STRING_FAIL("{\"materials\": {\"m\": {\"restitution\": 1.5}}, \"objects\": []}", HY_ERR_PARSE,
                       "materials.m.restitution must be in [0, 1], got 1.5");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\", \"mesh\": {\"generator\": \"box\"},\n"
                       " \"transform\": {\"rotation\": {\"axis\": [0, 0, 0], \"degrees\": 5}}}]}",
                       HY_ERR_PARSE, "bad.json:2: objects[0].transform.rotation.axis must be a non-zero vector");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\", \"mesh\": {\"generator\": \"box\"},\n"
                       " \"transform\": {\"scale\": [1, 0, 1]}}]}",
                       HY_ERR_PARSE, "objects[0].transform.scale[1] must be > 0, got 0");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\", \"mesh\": {\"generator\": \"box\"},\n"
                       " \"array\": {\"count\": [1000, 1000, 1]}}]}",
                       HY_ERR_PARSE, "bad.json:2: objects[0].array.count makes 1000000 objects");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\", \"mesh\": {\"generator\": \"icosphere\",\n"
                       " \"subdivisions\": 5}, \"array\": {\"count\": [100, 100, 1]}}]}",
                       HY_ERR_PARSE, "bad.json:1: objects[0]: the scene would exceed 16777216 triangles");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"fracture\", \"size\": [1, 1, 1], \"pieces\": [2, 2, 2],\n"
                       " \"gap\": 0.6}]}",
                       HY_ERR_PARSE, "bad.json:2: objects[0].gap (0.6) must be smaller than the piece size");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"obstacle\", \"mesh\": {\"generator\": \"box\"},\n"
                       " \"motion\": {\"rotate\": {\"axis\": [0, 1, 0]}}}]}",
                       HY_ERR_PARSE, "objects[0].motion.rotate.rate is required");
}

static void test_bad_values(void) {
    /* NaN has no JSON literal: a string where a number belongs, and 1e999,
     * which cJSON reads as infinity. */
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\", \"mesh\": {\"generator\": \"box\"},\n"
                       " \"material\": {\"density\": \"nan\"}}]}",
                       HY_ERR_PARSE, "bad.json:2: objects[0].material.density must be a number, got the string \"nan\"");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\", \"mesh\": {\"generator\": \"box\"},\n"
                       " \"velocity\": [0, 1e999, 0]}]}",
                       HY_ERR_PARSE, "bad.json:2: objects[0].velocity[1] must be a finite number, got inf");
    /* Negative density, from a file: path, line and value as documented. */
    EXPECT_FILE_FAIL(FIXTURES "scene_bad_negative_density.json", HY_ERR_PARSE,
                     "scene_bad_negative_density.json:6: objects[1].material.density must be > 0, got -1");
    EXPECT_STRING_FAIL("{\"materials\": {\"x\": {\n\"density\": -2}}, \"objects\": []}", HY_ERR_PARSE,
                       "bad.json:2: materials.x.density must be > 0, got -2");
    /* Bad pin index, and a negative one. */
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"cloth\",\n"
                       " \"mesh\": {\"generator\": \"grid\", \"vertices\": [4, 4]},\n"
                       " \"pin\": [0, 3, 16]}]}",
                       HY_ERR_PARSE, "bad.json:3: objects[0].pin[2] = 16 is not a vertex index in [0, 16)");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"cloth\", \"mesh\": {\"generator\": \"grid\"}, \"pin\": [-1]}]}",
                       HY_ERR_PARSE, "objects[0].pin[0] = -1 is not a vertex index");
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"cloth\", \"mesh\": {\"generator\": \"grid\"}, \"pin\": \"middle\"}]}",
                       HY_ERR_PARSE, "objects[0].pin: unknown vertex set \"middle\"");
}

static void test_bad_files(void) {
    EXPECT_FILE_FAIL(FIXTURES "scene_bad_missing_mesh.json", HY_ERR_IO,
                     "scene_bad_missing_mesh.json:6: objects[0].mesh.file", "scene_does_not_exist.obj");
    /* A malformed OBJ: our location, then the OBJ loader's file:line. */
    EXPECT_FILE_FAIL(FIXTURES "scene_bad_obj.json", HY_ERR_PARSE, "scene_bad_obj.json:3: objects[0].mesh.file: ",
                     "scene_bad.obj:3");
    /* An open sheet as a rigid body: the world refuses it; no world left. */
    EXPECT_STRING_FAIL("{\"objects\": [{\"type\": \"body\", \"name\": \"plate\",\n"
                       " \"mesh\": {\"generator\": \"grid\"}}]}",
                       HY_ERR_PARSE, "bad.json:1: objects[0] (plate): ");
}

static void test_bad_api_use(void) {
    hy_world* w = (hy_world*)&w;
    CHECK(hy_scene_load_string(NULL, 0, "x", NULL, &w) == HY_ERR_INVALID_ARG && w == NULL);
    CHECK(hy_scene_load_string("{}", 2, "x", NULL, NULL) == HY_ERR_INVALID_ARG);
    CHECK(hy_scene_load(NULL, NULL, &w) == HY_ERR_INVALID_ARG);
    hy_scene_options o = {0, -1, 0, NULL, 0};
    w = (hy_world*)&w;
    CHECK(hy_scene_load_string("{\"objects\": []}", 15, "x", &o, &w) == HY_ERR_BAD_DEF && w == NULL);
    o = hy_scene_options_default();
    o.collisions = 2;
    CHECK(hy_scene_load_string("{\"objects\": []}", 15, "x", &o, &w) == HY_ERR_INVALID_ARG && w == NULL);
}

int main(void) {
    test_benchmarks();
    test_small_scenes();
    test_deterministic();
    test_fields_reach_world();
    test_array();
    test_pins();
    test_fracture_object();
    test_load_string();
    test_bad_json();
    test_bad_fields();
    test_bad_values();
    test_bad_files();
    test_bad_api_use();
    TEST_END();
}
