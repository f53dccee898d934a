/* The world API: defs and cookies, bad arguments, stale ids, read-back,
 * free fall, NaN handling (last good state kept), bonds, and a state hash
 * that does not depend on the thread count. */
#include <string.h>

#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/world_step.h"

static hy_world* make_world(int threads) {
    hy_world_def d = hy_world_def_default();
    d.threads = threads;
    hy_world* w = NULL;
    CHECK_OK(hy_world_create(&d, &w));
    return w;
}

static void test_defs(void) {
    hy_world* w = NULL;
    hy_world_def d;
    memset(&d, 0, sizeof d);
    CHECK(hy_world_create(&d, &w) == HY_ERR_BAD_DEF);
    CHECK(w == NULL);
    CHECK(strstr(hy_last_error(), "hy_world_def_default") != NULL);
    d = hy_world_def_default();
    d.time_step = -1.0;
    CHECK(hy_world_create(&d, &w) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "time_step") != NULL);
    d = hy_world_def_default();
    d.substeps = 0;
    CHECK(hy_world_create(&d, &w) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_create(NULL, &w) == HY_ERR_INVALID_ARG);
}

static void test_body_errors_and_fall(void) {
    hy_world* w = make_world(1);
    hy_mesh* box = NULL;
    CHECK_OK(hy_mesh_box(0.5, 0.5, 0.5, 1, &box));
    hy_body_def bd = hy_body_def_default();
    bd.mesh = hy_mesh_get_view(box);
    hy_body_id body;
    /* negative density is a status that names the value */
    bd.density = -1.0;
    CHECK(hy_body_add(w, &bd, &body) != HY_OK);
    CHECK(strstr(hy_last_error(), "-1") != NULL);
    CHECK(hy_test_object_count(w) == 0);
    bd.density = 1000.0;
    bd.position[1] = 10.0;
    bd.linear_velocity[0] = 2.0;
    CHECK_OK(hy_body_add(w, &bd, &body));
    hy_object_id id = hy_body_object(body);
    hy_object_kind kind;
    CHECK_OK(hy_object_get_kind(w, id, &kind));
    CHECK(kind == HY_OBJECT_BODY);
    /* the thickness reads back as given (the body def's default) */
    double th = -1.0;
    CHECK_OK(hy_object_get_thickness(w, id, &th));
    CHECK(th == hy_body_def_default().thickness);
    CHECK(hy_object_get_thickness(w, id, NULL) == HY_ERR_INVALID_ARG);
    /* free fall over 60 steps of 1/60 s: semi-implicit Euler gives
     * y = y0 - g dt^2 n(n+1)/2, exactly (up to rounding) */
    for (int i = 0; i < 60; i++) CHECK_OK(hy_test_step(w));
    double p[3], q[4];
    CHECK_OK(hy_body_get_transform(w, body, p, q));
    double dt = 1.0 / 60.0, g = 9.81;
    CHECK_NEAR(p[1], 10.0 - g * dt * dt * 60.0 * 61.0 / 2.0, 1e-9);
    CHECK_NEAR(p[0], 2.0, 1e-9);
    /* stale ids are reported, not dereferenced */
    hy_body_id bad = {body.index, body.generation + 7};
    CHECK(hy_body_get_transform(w, bad, p, q) == HY_ERR_STALE_ID);
    hy_object_id none = {99, 1};
    CHECK(hy_object_get_kind(w, none, &kind) == HY_ERR_STALE_ID);
    CHECK(hy_object_get_thickness(w, none, &th) == HY_ERR_STALE_ID);
    /* read-back needs room */
    double small[3];
    CHECK(hy_object_get_positions(w, id, small, 3) == HY_ERR_INVALID_ARG);
    hy_mesh_destroy(box);
    hy_world_destroy(w);
}

static void test_nan_keeps_state(void) {
    hy_world_def d = hy_world_def_default();
    d.threads = 1;
    d.gravity[1] = -1.7e308; /* finite, but the state overflows within a few steps */
    hy_world* w = NULL;
    CHECK_OK(hy_world_create(&d, &w));
    hy_mesh* box = NULL;
    CHECK_OK(hy_mesh_box(0.5, 0.5, 0.5, 1, &box));
    hy_body_def bd = hy_body_def_default();
    bd.mesh = hy_mesh_get_view(box);
    hy_body_id id;
    CHECK_OK(hy_body_add(w, &bd, &id));
    CHECK_OK(hy_object_set_name(w, hy_body_object(id), "falling-box"));
    hy_status s = HY_OK;
    uint64_t before = 0;
    int steps = 0;
    while (s == HY_OK && steps < 1000) {
        before = hy_test_hash(w);
        s = hy_test_step(w);
        steps++;
    }
    CHECK(s == HY_ERR_NUMERIC);
    CHECK(strstr(hy_last_error(), "falling-box") != NULL);
    CHECK(strstr(hy_last_error(), "vertex") != NULL);
    CHECK(hy_test_hash(w) == before); /* the last good state is kept */
    double x[3 * 8];
    CHECK_OK(hy_object_get_positions(w, hy_body_object(id), x, 24));
    int finite = 1;
    for (int i = 0; i < 24; i++) finite &= isfinite(x[i]);
    CHECK(finite);
    hy_mesh_destroy(box);
    hy_world_destroy(w);
}

/* Two boxes welded by a bond fall as one; a weak bond breaks on impact with
 * a fast third body... here: a bond between a fixed-velocity pair that pull
 * apart breaks, a strong one holds. */
static void test_bonds(void) {
    for (int strong = 0; strong <= 1; strong++) {
        hy_world* w = make_world(1);
        hy_mesh* box = NULL;
        CHECK_OK(hy_mesh_box(0.5, 0.5, 0.5, 1, &box));
        hy_body_def bd = hy_body_def_default();
        bd.mesh = hy_mesh_get_view(box);
        bd.gravity = 0;
        hy_body_id a, b;
        /* 4 mm apart, as the fracture generator cuts pieces: bonded bodies
         * collide like any others, so they must not start in contact */
        bd.position[0] = -0.502;
        bd.linear_velocity[0] = -1.0; /* the halves move apart at 2 m/s */
        CHECK_OK(hy_body_add(w, &bd, &a));
        bd.position[0] = 0.502;
        bd.linear_velocity[0] = 1.0;
        CHECK_OK(hy_body_add(w, &bd, &b));
        hy_bond_def bond = hy_bond_def_default();
        bond.a = a;
        bond.b = b;
        /* each box has mass 1000 kg; stopping the separation takes an
         * impulse of 1000 kg * 1 m/s = 1000 N s */
        bond.strength = strong ? 1e6 : 10.0;
        CHECK_OK(hy_bond_add(w, &bond));
        CHECK(hy_test_bond_count(w) == 1);
        for (int i = 0; i < 30; i++) CHECK_OK(hy_test_step(w));
        double pa[3], pb[3];
        CHECK_OK(hy_body_get_transform(w, a, pa, NULL));
        CHECK_OK(hy_body_get_transform(w, b, pb, NULL));
        if (strong) {
            CHECK(hy_test_bond_count(w) == 1);
            CHECK_NEAR(pb[0] - pa[0], 1.004, 1e-3); /* held at the welded distance */
        } else {
            CHECK(hy_test_bond_count(w) == 0);
            CHECK(pb[0] - pa[0] > 1.5); /* flew apart */
        }
        hy_mesh_destroy(box);
        hy_world_destroy(w);
    }
}

/* A pinned cloth and a tumbling body: the state hash is the same for 1, 2
 * and 3 threads. */
static uint64_t run_mixed(int threads) {
    hy_world* w = make_world(threads);
    hy_mesh* grid = NULL;
    CHECK_OK(hy_mesh_grid(24, 24, 1.0, 1.0, &grid));
    hy_cloth_def cd = hy_cloth_def_default();
    cd.mesh = hy_mesh_get_view(grid);
    int32_t pins[2] = {0, 23};
    cd.pinned = pins;
    cd.pinned_count = 2;
    hy_cloth_id cloth;
    CHECK_OK(hy_cloth_add(w, &cd, &cloth));
    hy_mesh* ico = NULL;
    CHECK_OK(hy_mesh_icosphere(0.2, 2, &ico));
    hy_body_def bd = hy_body_def_default();
    bd.mesh = hy_mesh_get_view(ico);
    bd.position[1] = 3.0;
    bd.angular_velocity[0] = 3.0;
    bd.angular_velocity[2] = 1.0;
    hy_body_id body;
    CHECK_OK(hy_body_add(w, &bd, &body));
    for (int i = 0; i < 20; i++) CHECK_OK(hy_test_step(w));
    uint64_t h = hy_test_hash(w);
    hy_mesh_destroy(grid);
    hy_mesh_destroy(ico);
    hy_world_destroy(w);
    return h;
}

/* A box falls onto a static plane (a grid obstacle, 4 m square centred under
 * it): the step that brings it
 * within the thickness reports vertex-face / edge-edge contacts between the
 * two objects, located at the plane; the box ends above the plane. */
static void test_contacts_query(void) {
    hy_world* w = make_world(1);
    int64_t none = -1;
    CHECK(hy_world_get_contacts(NULL, NULL, 0, &none) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_get_contacts(w, NULL, 0, NULL) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_get_contacts(w, NULL, 5, &none) == HY_ERR_INVALID_ARG);
    CHECK_OK(hy_world_get_contacts(w, NULL, 0, &none));
    CHECK(none == 0);
    hy_mesh *plane = NULL, *box = NULL;
    CHECK_OK(hy_mesh_grid(5, 5, 4.0, 4.0, &plane));
    CHECK_OK(hy_mesh_box(0.25, 0.25, 0.25, 1, &box));
    hy_obstacle_def od = hy_obstacle_def_default();
    od.mesh = hy_mesh_get_view(plane);
    hy_obstacle_id ground;
    hy_body_id cube;
    CHECK_OK(hy_obstacle_add(w, &od, &ground));
    hy_body_def bd = hy_body_def_default();
    bd.mesh = hy_mesh_get_view(box);
    bd.position[1] = 0.3; /* 5 cm above the plane: it lands within a few steps */
    CHECK_OK(hy_body_add(w, &bd, &cube));
    int64_t found = 0;
    hy_contact_info info[256];
    for (int i = 0; i < 60 && found == 0; i++) {
        CHECK_OK(hy_test_step(w));
        CHECK_OK(hy_world_get_contacts(w, info, 256, &found));
    }
    CHECK(found > 0 && found <= 256);
    for (int64_t k = 0; k < found && k < 256; k++) {
        CHECK((info[k].a.index == cube.index && info[k].b.index == ground.index) ||
              (info[k].a.index == ground.index && info[k].b.index == cube.index));
        CHECK(info[k].time_of_impact >= 0.0 && info[k].time_of_impact <= 1.0);
        /* the box's bottom is at most one step's fall (< 5 cm) above the plane */
        CHECK(info[k].point[1] > -1e-6 && info[k].point[1] < 0.05);
    }
    for (int i = 0; i < 60; i++) CHECK_OK(hy_test_step(w));
    double p[3];
    CHECK_OK(hy_body_get_transform(w, cube, p, NULL));
    CHECK(p[1] > 0.25 - 1e-6); /* resting on the plane, not through it */
    CHECK(p[1] < 0.30);
    hy_mesh_destroy(plane);
    hy_mesh_destroy(box);
    hy_world_destroy(w);
}

/* hy_cloth_add names a NULL array of the mesh, whatever the counts say */
static void test_cloth_null_arrays(void) {
    hy_world* w = make_world(1);
    hy_mesh* grid = NULL;
    CHECK_OK(hy_mesh_grid(4, 4, 1.0, 1.0, &grid));
    hy_cloth_def cd = hy_cloth_def_default();
    cd.mesh = hy_mesh_get_view(grid);
    cd.mesh.positions = NULL;
    hy_cloth_id id;
    CHECK(hy_cloth_add(w, &cd, &id) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "hy_cloth_add: def.mesh.positions is NULL") != NULL);
    cd.mesh = hy_mesh_get_view(grid);
    cd.mesh.triangles = NULL;
    CHECK(hy_cloth_add(w, &cd, &id) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "def.mesh.triangles is NULL") != NULL);
    CHECK(hy_test_object_count(w) == 0);
    cd.mesh = hy_mesh_get_view(grid);
    CHECK_OK(hy_cloth_add(w, &cd, &id));
    hy_mesh_destroy(grid);
    hy_world_destroy(w);
}

int main(void) {
    test_cloth_null_arrays();
    test_contacts_query();
    test_defs();
    test_body_errors_and_fall();
    test_nan_keeps_state();
    test_bonds();
    uint64_t h1 = run_mixed(1), h2 = run_mixed(2), h3 = run_mixed(3);
    CHECK(h1 == h2);
    CHECK(h1 == h3);
    TEST_END();
}
