/* Tests deformable solids through the public header alone: a FEM and a
 * mass-spring cube added with hy_solid_add fall under gravity, named by
 * typed ids that widen and narrow; a cube held on one face and a second
 * attached to it with hy_solid_attach hang together; bad defs and meshes
 * are refused with a status and a message naming the element or field;
 * a removed solid's id goes stale. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "hyphys/hyphys.h"
#include "test.h"

/* A 0.1 m cube of 8 vertices and 5 tetrahedra (four corners and the
 * middle one), each element turned to positive volume. */
static double cube_x[8 * 3];
static int32_t cube_t[5 * 4] = {0, 1, 2, 4, 3, 1, 2, 7, 5, 1, 4, 7, 6, 2, 4, 7, 1, 2, 4, 7};

static void make_cube(void) {
    for (int v = 0; v < 8; v++) {
        cube_x[3 * v] = 0.1 * (v & 1);
        cube_x[3 * v + 1] = 0.1 * ((v >> 1) & 1);
        cube_x[3 * v + 2] = 0.1 * ((v >> 2) & 1);
    }
    for (int t = 0; t < 5; t++) {
        const double* p[4];
        for (int k = 0; k < 4; k++) p[k] = cube_x + 3 * cube_t[4 * t + k];
        double a[3], b[3], c[3];
        for (int k = 0; k < 3; k++) a[k] = p[1][k] - p[0][k], b[k] = p[2][k] - p[0][k], c[k] = p[3][k] - p[0][k];
        double vol = a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                     a[2] * (b[0] * c[1] - b[1] * c[0]);
        if (vol < 0) {
            int32_t s = cube_t[4 * t + 2];
            cube_t[4 * t + 2] = cube_t[4 * t + 3];
            cube_t[4 * t + 3] = s;
        }
    }
}

static hy_solid_def cube_def(hy_object_kind kind, double x, double y) {
    hy_solid_def d = hy_solid_def_default();
    d.kind = kind;
    d.positions = cube_x;
    d.vertex_count = 8;
    d.tets = cube_t;
    d.tet_count = 5;
    d.position[0] = x;
    d.position[1] = y;
    return d;
}

static double mean_y(const hy_world* w, hy_object_id id) {
    double x[24];
    if (hy_object_get_positions(w, id, x, 24)) return NAN;
    double s = 0.0;
    for (int v = 0; v < 8; v++) s += x[3 * v + 1] / 8;
    return s;
}

/* Two free cubes, one of each kind, fall as far as gravity takes them. */
static void test_add_and_fall(void) {
    hy_world_def wd = hy_world_def_default();
    wd.threads = 1;
    hy_world* w = NULL;
    CHECK_OK(hy_world_create(&wd, &w));
    if (!w) return;
    hy_solid_def f = cube_def(HY_OBJECT_FEM, 0, 1), m = cube_def(HY_OBJECT_MASS_SPRING, 1, 1);
    m.spring_stiffness = 5e3;
    hy_solid_id a = {0, 0}, b = {0, 0};
    CHECK_OK(hy_solid_add(w, &f, &a));
    CHECK_OK(hy_solid_add(w, &m, &b));
    CHECK(a.generation != 0 && b.generation != 0);
    hy_object_kind kind;
    CHECK_OK(hy_object_get_kind(w, hy_solid_object(a), &kind));
    CHECK(kind == HY_OBJECT_FEM);
    CHECK_OK(hy_object_get_kind(w, hy_solid_object(b), &kind));
    CHECK(kind == HY_OBJECT_MASS_SPRING);
    hy_solid_id back = {0, 0};
    CHECK_OK(hy_object_as_solid(w, hy_solid_object(b), &back));
    CHECK(back.index == b.index && back.generation == b.generation);
    hy_body_id not_body;
    CHECK(hy_object_as_body(w, hy_solid_object(a), &not_body) == HY_ERR_INVALID_ARG);
    int32_t tets = 0, particles = 0;
    CHECK_OK(hy_world_get_tet_counts(w, &tets, &particles));
    CHECK(tets == 10 && particles == 16);
    double y0 = mean_y(w, hy_solid_object(a));
    CHECK_NEAR(y0, 1.05, 1e-12);
    int steps = 30;
    for (int i = 0; i < steps; i++) CHECK_OK(hy_world_step(w, 1.0 / 60, 1));
    /* free fall, undeformed: backward Euler's v_k = k g dt and x moved by
     * v_k dt each step, g dt^2 n (n + 1) / 2 in all; both kinds alike */
    double dt = 1.0 / 60, want = 9.81 * dt * dt * steps * (steps + 1) / 2;
    CHECK_NEAR(y0 - mean_y(w, hy_solid_object(a)), want, 1e-9);
    CHECK_NEAR(1.05 - mean_y(w, hy_solid_object(b)), want, 1e-9);
    CHECK_OK(hy_solid_remove(w, a));
    CHECK(hy_object_as_solid(w, hy_solid_object(a), &back) == HY_ERR_STALE_ID);
    CHECK(hy_solid_remove(w, a) == HY_ERR_STALE_ID);
    CHECK_OK(hy_world_step(w, 1.0 / 60, 1));
    hy_world_destroy(w);
}

/* A cube held on its x = 0 face and a second attached to its x = 0.1 face
 * hang together: the free cube's outer face stays within a millimetre of
 * where the first cube carries it, instead of falling away. */
static void test_attach(void) {
    hy_world_def wd = hy_world_def_default();
    wd.threads = 2;
    hy_world* w = NULL;
    CHECK_OK(hy_world_create(&wd, &w));
    if (!w) return;
    hy_solid_def held = cube_def(HY_OBJECT_FEM, 0, 1), free_cube = cube_def(HY_OBJECT_FEM, 0.1, 1);
    int32_t face[4] = {0, 2, 4, 6}; /* x = 0 */
    held.young = free_cube.young = 1e6;
    held.fixed = face;
    held.fixed_count = 4;
    hy_solid_id a, b;
    CHECK_OK(hy_solid_add(w, &held, &a));
    CHECK_OK(hy_solid_add(w, &free_cube, &b));
    int32_t pairs = 0;
    CHECK_OK(hy_solid_attach(w, a, b, 1e-9, 1e6, &pairs));
    CHECK(pairs == 4);
    /* no shared vertex within the tolerance, and not solids */
    hy_solid_def far = cube_def(HY_OBJECT_FEM, 0.5, 1);
    hy_solid_id c;
    CHECK_OK(hy_solid_add(w, &far, &c));
    CHECK(hy_solid_attach(w, b, c, 1e-3, 1e6, NULL) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "no vertices within") != NULL);
    CHECK(hy_solid_attach(w, a, a, 1e-3, 1e6, NULL) == HY_ERR_INVALID_ARG);
    CHECK(hy_solid_attach(w, a, b, 1e-3, -1.0, NULL) == HY_ERR_INVALID_ARG);
    CHECK_OK(hy_solid_remove(w, c));
    for (int i = 0; i < 60; i++) CHECK_OK(hy_world_step(w, 1.0 / 60, 1));
    double xa[24], xb[24];
    CHECK_OK(hy_object_get_positions(w, hy_solid_object(a), xa, 24));
    CHECK_OK(hy_object_get_positions(w, hy_solid_object(b), xb, 24));
    double gap = 0.0;
    const int ia[4] = {1, 3, 5, 7}, ib[4] = {0, 2, 4, 6}; /* the shared face */
    for (int k = 0; k < 4; k++)
        for (int d = 0; d < 3; d++) gap = fmax(gap, fabs(xa[3 * ia[k] + d] - xb[3 * ib[k] + d]));
    CHECK(gap < 1e-3);
    CHECK(mean_y(w, hy_solid_object(b)) > 0.95); /* carried: it has not fallen */
    hy_world_destroy(w);
}

static void test_bad(void) {
    hy_world_def wd = hy_world_def_default();
    wd.threads = 1;
    hy_world* w = NULL;
    CHECK_OK(hy_world_create(&wd, &w));
    if (!w) return;
    hy_solid_id id;
    hy_solid_def d = cube_def(HY_OBJECT_FEM, 0, 0);
    d.cookie = 0;
    CHECK(hy_solid_add(w, &d, &id) == HY_ERR_BAD_DEF);
    d = cube_def(HY_OBJECT_FEM, 0, 0);
    int32_t inverted[5 * 4];
    memcpy(inverted, cube_t, sizeof inverted);
    int32_t s = inverted[4 * 3 + 2];
    inverted[4 * 3 + 2] = inverted[4 * 3 + 3];
    inverted[4 * 3 + 3] = s;
    d.tets = inverted;
    CHECK(hy_solid_add(w, &d, &id) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "tetrahedron 3") != NULL); /* names the element */
    d = cube_def(HY_OBJECT_BODY, 0, 0);
    CHECK(hy_solid_add(w, &d, &id) == HY_ERR_INVALID_ARG);
    d = cube_def(HY_OBJECT_FEM, 0, 0);
    d.poisson = 0.5;
    CHECK(hy_solid_add(w, &d, &id) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "oisson") != NULL);
    int32_t n = -1;
    CHECK_OK(hy_world_get_object_count(w, &n));
    CHECK(n == 0); /* every refusal left the world as it was */
    hy_world_destroy(w);
}

int main(void) {
    make_cube();
    test_add_and_fall();
    test_attach();
    test_bad();
    TEST_END();
}
