/* Tests the game-facing API: typed ids and removal (stale ids refused by
 * generation), body transform / velocity / forces / impulses, kinematic
 * bodies, user data, the step's dt and substeps, snapshot and restore
 * (same hash as the uninterrupted run), and contact events (begin / end /
 * touching) of a ball dropped onto a plane, and a host task system in place
 * of the world's pool (same hash). */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/world_step.h"

#define DT (1.0 / 60.0)

static hy_world* make_world(int threads, double gravity_y) {
    hy_world_def d = hy_world_def_default();
    d.threads = threads;
    d.gravity[1] = gravity_y;
    hy_world* w = NULL;
    CHECK_OK(hy_world_create(&d, &w));
    return w;
}

/* A body of the given mesh at (x, y, 0). */
static hy_body_id add_body(hy_world* w, const hy_mesh* m, double x, double y) {
    hy_body_def bd = hy_body_def_default();
    bd.mesh = hy_mesh_get_view(m);
    bd.position[0] = x;
    bd.position[1] = y;
    hy_body_id id = {0, 0};
    CHECK_OK(hy_body_add(w, &bd, &id));
    return id;
}

/* A 4 m square plane at y = 0. */
static hy_obstacle_id add_plane(hy_world* w) {
    hy_mesh* plane = NULL;
    CHECK_OK(hy_mesh_grid(5, 5, 4.0, 4.0, &plane));
    hy_obstacle_def od = hy_obstacle_def_default();
    od.mesh = hy_mesh_get_view(plane);
    hy_obstacle_id id = {0, 0};
    CHECK_OK(hy_obstacle_add(w, &od, &id));
    hy_mesh_destroy(plane);
    return id;
}

/* Removal: the id goes stale for every call, a second remove included; the
 * others keep their ids and states; a reused index gets a new generation;
 * typed ids refuse another kind. */
static void test_ids_and_removal(void) {
    hy_world* w = make_world(1, -9.81);
    hy_mesh* box = NULL;
    CHECK_OK(hy_mesh_box(0.1, 0.1, 0.1, 1, &box));
    hy_body_id a = add_body(w, box, -1.0, 1.0);
    hy_body_id b = add_body(w, box, 0.0, 1.0);
    hy_body_id c = add_body(w, box, 1.0, 1.0);
    hy_obstacle_id ground = add_plane(w);
    CHECK(a.index != b.index && b.index != c.index);
    CHECK(hy_test_object_count(w) == 4);
    /* a bond between b and c goes with b */
    hy_bond_def bond = hy_bond_def_default();
    bond.a = b;
    bond.b = c;
    bond.anchor[0] = 0.5;
    bond.anchor[1] = 1.0;
    CHECK_OK(hy_bond_add(w, &bond));
    CHECK(hy_test_bond_count(w) == 1);
    for (int i = 0; i < 5; i++) CHECK_OK(hy_world_step(w, DT, 1));

    double pc[3];
    CHECK_OK(hy_body_get_transform(w, c, pc, NULL));
    CHECK_OK(hy_body_remove(w, b));
    CHECK(hy_test_object_count(w) == 3);
    CHECK(hy_test_bond_count(w) == 0);
    double p[3];
    CHECK(hy_body_get_transform(w, b, p, NULL) == HY_ERR_STALE_ID);
    CHECK(strstr(hy_last_error(), "does not name a live object") != NULL);
    CHECK(hy_body_remove(w, b) == HY_ERR_STALE_ID);
    CHECK(hy_object_remove(w, hy_body_object(b)) == HY_ERR_STALE_ID);
    CHECK(hy_object_set_user_data(w, hy_body_object(b), NULL) == HY_ERR_STALE_ID);
    hy_object_kind kind;
    CHECK(hy_object_get_kind(w, hy_body_object(b), &kind) == HY_ERR_STALE_ID);
    /* the others are untouched and keep their ids */
    CHECK_OK(hy_body_get_transform(w, c, p, NULL));
    CHECK(p[0] == pc[0] && p[1] == pc[1] && p[2] == pc[2]);
    CHECK_OK(hy_body_get_transform(w, a, p, NULL));
    CHECK_OK(hy_object_get_kind(w, hy_obstacle_object(ground), &kind));
    CHECK(kind == HY_OBJECT_OBSTACLE);
    /* order kept: a, c, ground */
    hy_object_id o;
    CHECK_OK(hy_world_get_object(w, 1, &o));
    CHECK(hy_object_id_equal(o, hy_body_object(c)));
    /* the freed index is reused with a higher generation; the old id stays stale */
    hy_body_id d = add_body(w, box, 0.0, 2.0);
    CHECK(d.index == b.index);
    CHECK(d.generation == b.generation + 1);
    CHECK(hy_body_get_transform(w, b, p, NULL) == HY_ERR_STALE_ID);
    CHECK_OK(hy_body_get_transform(w, d, p, NULL));
    CHECK_NEAR(p[1], 2.0, 1e-12);
    /* narrowing checks the kind; a typed call refuses a forged id of another kind */
    hy_body_id as_body;
    hy_obstacle_id as_obstacle;
    CHECK(hy_object_as_body(w, hy_obstacle_object(ground), &as_body) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "is a obstacle, not a rigid body") != NULL ||
          strstr(hy_last_error(), "not a rigid body") != NULL);
    CHECK_OK(hy_object_as_obstacle(w, hy_obstacle_object(ground), &as_obstacle));
    CHECK(as_obstacle.index == ground.index && as_obstacle.generation == ground.generation);
    hy_body_id forged = {ground.index, ground.generation};
    CHECK(hy_body_get_transform(w, forged, p, NULL) == HY_ERR_INVALID_ARG);
    CHECK(hy_body_remove(w, forged) == HY_ERR_INVALID_ARG);
    CHECK(hy_test_object_count(w) == 4);
    for (int i = 0; i < 5; i++) CHECK_OK(hy_world_step(w, DT, 1));
    /* removing every object leaves an empty world that still steps */
    CHECK_OK(hy_body_remove(w, a));
    CHECK_OK(hy_body_remove(w, c));
    CHECK_OK(hy_body_remove(w, d));
    CHECK_OK(hy_obstacle_remove(w, ground));
    CHECK(hy_test_object_count(w) == 0);
    CHECK_OK(hy_world_step(w, DT, 1));
    hy_mesh_destroy(box);
    hy_world_destroy(w);
}

/* A world where an object was added and removed steps to the same state
 * as one where it never was: boxes and a cloth falling onto a plane. */
static uint64_t run_removed(int with_extra) {
    hy_world* w = make_world(2, -9.81);
    hy_mesh *box = NULL, *grid = NULL;
    CHECK_OK(hy_mesh_box(0.1, 0.1, 0.1, 1, &box));
    CHECK_OK(hy_mesh_grid(8, 8, 0.6, 0.6, &grid));
    add_plane(w);
    hy_body_id extra = {0, 0};
    if (with_extra) extra = add_body(w, box, 0.0, 0.3);
    add_body(w, box, 0.5, 0.3);
    hy_cloth_def cd = hy_cloth_def_default();
    cd.mesh = hy_mesh_get_view(grid);
    cd.position[0] = -0.8;
    cd.position[1] = 0.2;
    hy_cloth_id cloth;
    CHECK_OK(hy_cloth_add(w, &cd, &cloth));
    if (with_extra) CHECK_OK(hy_body_remove(w, extra));
    for (int i = 0; i < 40; i++) CHECK_OK(hy_world_step(w, DT, 1));
    uint64_t h = hy_test_hash(w);
    hy_mesh_destroy(box);
    hy_mesh_destroy(grid);
    hy_world_destroy(w);
    return h;
}

/* Impulses change momentum by exactly J (up to rounding); forces act over
 * one step only; set_transform / set_velocity read back. */
static void test_body_control(void) {
    hy_world* w = make_world(1, 0.0);
    hy_mesh* box = NULL;
    CHECK_OK(hy_mesh_box(0.2, 0.1, 0.3, 1, &box));
    hy_body_id b = add_body(w, box, 0.0, 0.0);
    hy_mass_properties mp;
    CHECK_OK(hy_body_get_mass_properties(w, b, &mp));
    CHECK_NEAR(mp.mass, 1000.0 * 0.4 * 0.2 * 0.6, 1e-9);
    /* linear impulse at the centre: m dv = J */
    double v0[3], w0[3], L0[3], x0[3];
    CHECK_OK(hy_body_get_velocity(w, b, v0, w0));
    CHECK_OK(hy_body_get_angular_momentum(w, b, L0));
    CHECK_OK(hy_body_get_transform(w, b, x0, NULL));
    const double J[3] = {3.0, -2.0, 0.5};
    CHECK_OK(hy_body_apply_impulse(w, b, J, NULL));
    double v1[3], w1[3], L1[3];
    CHECK_OK(hy_body_get_velocity(w, b, v1, w1));
    CHECK_OK(hy_body_get_angular_momentum(w, b, L1));
    for (int k = 0; k < 3; k++) {
        CHECK_NEAR(mp.mass * (v1[k] - v0[k]), J[k], 1e-12); /* rounding of J / m * m */
        CHECK(w1[k] == w0[k]);
    }
    /* off the centre: angular momentum changes by r x J */
    const double point[3] = {x0[0] + 0.2, x0[1] + 0.1, x0[2]};
    const double r[3] = {0.2, 0.1, 0.0};
    CHECK_OK(hy_body_apply_impulse(w, b, J, point));
    double L2[3], v2[3];
    CHECK_OK(hy_body_get_angular_momentum(w, b, L2));
    CHECK_OK(hy_body_get_velocity(w, b, v2, NULL));
    const double rxJ[3] = {r[1] * J[2] - r[2] * J[1], r[2] * J[0] - r[0] * J[2], r[0] * J[1] - r[1] * J[0]};
    for (int k = 0; k < 3; k++) {
        CHECK_NEAR(L2[k] - L1[k], rxJ[k], 1e-12);
        CHECK_NEAR(mp.mass * (v2[k] - v1[k]), J[k], 1e-12);
    }
    /* set_velocity / set_transform read back exactly (the orientation normalised) */
    const double v_set[3] = {0.0, 1.0, 0.0}, w_set[3] = {0.0, 0.0, 0.0};
    CHECK_OK(hy_body_set_velocity(w, b, v_set, w_set));
    const double x_set[3] = {1.0, 2.0, 3.0}, q_set[4] = {2.0, 0.0, 0.0, 0.0};
    CHECK_OK(hy_body_set_transform(w, b, x_set, q_set));
    double x[3], q[4], v[3];
    CHECK_OK(hy_body_get_transform(w, b, x, q));
    CHECK(x[0] == 1.0 && x[1] == 2.0 && x[2] == 3.0);
    CHECK(q[0] == 1.0 && q[1] == 0.0 && q[2] == 0.0 && q[3] == 0.0);
    const double bad_q[4] = {0, 0, 0, 0};
    CHECK(hy_body_set_transform(w, b, x_set, bad_q) == HY_ERR_INVALID_ARG);
    const double nan3[3] = {NAN, 0, 0};
    CHECK(hy_body_apply_impulse(w, b, nan3, NULL) == HY_ERR_INVALID_ARG);
    /* the vertices follow: the lowest vertex is 0.1 below the centre */
    double verts[3 * 8];
    CHECK_OK(hy_object_get_positions(w, hy_body_object(b), verts, 24));
    double lowest = 1e9;
    for (int i = 0; i < 8; i++) lowest = fmin(lowest, verts[3 * i + 1]);
    CHECK_NEAR(lowest, 1.9, 1e-12);
    /* a force F over one step of h: dv = F/m h, then it is gone */
    const double F[3] = {mp.mass * 6.0, 0.0, 0.0}; /* 6 m/s^2 */
    CHECK_OK(hy_body_apply_force(w, b, F, NULL));
    CHECK_OK(hy_world_step(w, DT, 1));
    CHECK_OK(hy_body_get_velocity(w, b, v, NULL));
    CHECK_NEAR(v[0], 6.0 * DT, 1e-12);
    CHECK_NEAR(v[1], 1.0, 1e-12);
    CHECK_OK(hy_world_step(w, DT, 1));
    CHECK_OK(hy_body_get_velocity(w, b, v, NULL));
    CHECK_NEAR(v[0], 6.0 * DT, 1e-12);
    /* with substeps the force acts in each: the same velocity change */
    CHECK_OK(hy_body_apply_force(w, b, F, NULL));
    CHECK_OK(hy_world_step(w, DT, 4));
    CHECK_OK(hy_body_get_velocity(w, b, v, NULL));
    CHECK_NEAR(v[0], 12.0 * DT, 1e-12);
    /* a torque about y spins it up: dw = I^-1 tau h (world inertia, here diagonal: no rotation yet) */
    CHECK_OK(hy_body_set_velocity(w, b, w_set, w_set));
    const double tau[3] = {0.0, mp.inertia[4], 0.0};
    CHECK_OK(hy_body_apply_torque(w, b, tau));
    CHECK_OK(hy_world_step(w, DT, 1));
    double om[3];
    CHECK_OK(hy_body_get_velocity(w, b, NULL, om));
    CHECK_NEAR(om[1], DT, 1e-12);
    CHECK_NEAR(om[0], 0.0, 1e-12);
    /* user data */
    int tag = 7;
    void* ud = &ud;
    CHECK_OK(hy_object_get_user_data(w, hy_body_object(b), &ud));
    CHECK(ud == NULL);
    CHECK_OK(hy_object_set_user_data(w, hy_body_object(b), &tag));
    CHECK_OK(hy_object_get_user_data(w, hy_body_object(b), &ud));
    CHECK(ud == &tag);
    hy_mesh_destroy(box);
    hy_world_destroy(w);
}

/* A kinematic platform moves by its velocity only (gravity, contacts and
 * impulses leave it alone); a box dropped on it rides it. */
static void test_kinematic(void) {
    hy_world* w = make_world(1, -9.81);
    hy_mesh *slab = NULL, *box = NULL;
    CHECK_OK(hy_mesh_box(1.0, 0.05, 1.0, 2, &slab));
    CHECK_OK(hy_mesh_box(0.1, 0.1, 0.1, 1, &box));
    hy_body_id platform = add_body(w, slab, 0.0, 0.03);
    hy_body_id rider = add_body(w, box, 0.0, 0.4);
    add_plane(w); /* through the platform: kinematic bodies pass obstacles by */
    double p0[3];
    CHECK_OK(hy_body_get_transform(w, platform, p0, NULL));
    CHECK_OK(hy_body_set_kinematic(w, platform, 1));
    int32_t k = 0;
    CHECK_OK(hy_body_is_kinematic(w, platform, &k));
    CHECK(k == 1);
    const double up[3] = {0.0, 0.0, 0.0};
    CHECK(hy_body_apply_impulse(w, platform, up, NULL) == HY_ERR_INVALID_ARG);
    const double vp[3] = {0.0, 0.0, 0.5}, zero[3] = {0.0, 0.0, 0.0};
    CHECK_OK(hy_body_set_velocity(w, platform, vp, zero));
    for (int i = 0; i < 120; i++) CHECK_OK(hy_world_step(w, DT, 1));
    double p[3], v[3], r[3];
    CHECK_OK(hy_body_get_transform(w, platform, p, NULL));
    CHECK_OK(hy_body_get_velocity(w, platform, v, NULL));
    CHECK(p[0] == p0[0] && p[1] == p0[1]);
    CHECK_NEAR(p[2], p0[2] + 0.5 * 120 * DT, 1e-12);
    CHECK(v[0] == 0.0 && v[1] == 0.0 && v[2] == 0.5);
    /* the rider rests on the platform (0.05 + 0.1 above its centre, within
     * the contact distance) and was carried along by friction */
    CHECK_OK(hy_body_get_transform(w, rider, r, NULL));
    CHECK(r[1] > p0[1] + 0.15 - 1e-6 && r[1] < p0[1] + 0.16);
    CHECK(r[2] > 0.3);
    /* dynamic again (lifted clear of the plane): gravity takes it */
    CHECK_OK(hy_body_set_kinematic(w, platform, 0));
    const double lift[3] = {p[0], 1.0, p[2]}, q1[4] = {1, 0, 0, 0};
    CHECK_OK(hy_body_set_transform(w, platform, lift, q1));
    CHECK_OK(hy_body_set_velocity(w, platform, zero, zero));
    CHECK_OK(hy_world_step(w, DT, 1));
    CHECK_OK(hy_body_get_velocity(w, platform, v, NULL));
    CHECK(v[1] < 0.0);
    hy_mesh_destroy(slab);
    hy_mesh_destroy(box);
    hy_world_destroy(w);
}

/* dt and substeps are the step's arguments: checked, and free fall over n
 * substeps of h = dt / substeps is y0 - g h^2 n(n+1)/2 (semi-implicit Euler). */
static void test_step_arguments(void) {
    hy_world* w = make_world(1, -9.81);
    hy_mesh* box = NULL;
    CHECK_OK(hy_mesh_box(0.1, 0.1, 0.1, 1, &box));
    hy_body_id b = add_body(w, box, 0.0, 10.0);
    CHECK(hy_world_step(w, 0.0, 1) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "dt") != NULL);
    CHECK(hy_world_step(w, -DT, 1) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_step(w, NAN, 1) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_step(w, 2.0, 1) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_step(w, DT, 0) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "substeps") != NULL);
    CHECK(hy_world_step(w, DT, 65) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_step(NULL, DT, 1) == HY_ERR_INVALID_ARG);
    /* the getters return statuses too */
    uint64_t hash = 0;
    int32_t count = -1;
    CHECK(hy_world_hash(NULL, &hash) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_hash(w, NULL) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_get_object_count(NULL, &count) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_get_object_count(w, NULL) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "hy_world_get_object_count") != NULL);
    CHECK(hy_world_get_bond_count(NULL, &count) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_get_triangle_count(NULL, &count) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_get_vertex_count(NULL, &count) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_get_thread_count(NULL, &count) == HY_ERR_INVALID_ARG);
    CHECK_OK(hy_world_get_object_count(w, &count));
    CHECK(count == 1);
    CHECK_OK(hy_world_get_triangle_count(w, &count));
    CHECK(count == 12);
    CHECK_OK(hy_world_get_vertex_count(w, &count));
    CHECK(count == 8);
    CHECK_OK(hy_world_get_thread_count(w, &count));
    CHECK(count == 1);
    CHECK_OK(hy_world_get_bond_count(w, &count));
    CHECK(count == 0);
    int32_t nres = -1;
    hy_sched_stats ss;
    CHECK(hy_world_get_sched_stats(NULL, &ss, NULL, 0, &nres) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_get_sched_stats(w, &ss, NULL, 2, &nres) == HY_ERR_INVALID_ARG);
    CHECK_OK(hy_world_get_sched_stats(w, &ss, NULL, 0, &nres));
    CHECK(nres == 0); /* no step yet */
    double p[3];
    for (int i = 0; i < 20; i++) CHECK_OK(hy_world_step(w, 0.01, 3));
    CHECK_OK(hy_body_get_transform(w, b, p, NULL));
    double h = 0.01 / 3, n = 60;
    CHECK_NEAR(p[1], 10.0 - 9.81 * h * h * n * (n + 1) / 2, 1e-9);
    hy_step_stats st;
    CHECK_OK(hy_world_get_stats(w, &st));
    CHECK(st.step_index == 20);
    hy_mesh_destroy(box);
    hy_world_destroy(w);
}

/* The scene of the snapshot test: a cloth falling on a spinning ball, a
 * box beside it, and two boxes welded by a bond falling onto a plane
 * (bodies, sleep, bonds, a moving obstacle and cloth: every kind of state). */
static const char* snap_scene =
    "{\"solver\": {\"time_step\": 0.01, \"substeps\": 2, \"threads\": 2, \"sleep_time\": 0.2},\n"
    " \"objects\": [\n"
    "  {\"type\": \"obstacle\", \"name\": \"floor\", \"mesh\": {\"generator\": \"box\", "
    "\"half_extents\": [3, 0.05, 3]}, \"transform\": {\"position\": [0, -0.05, 0]}},\n"
    "  {\"type\": \"obstacle\", \"name\": \"ball\", \"mesh\": {\"generator\": \"icosphere\", \"radius\": 0.2, "
    "\"subdivisions\": 2}, \"transform\": {\"position\": [0, 0.3, 0]},\n"
    "   \"motion\": {\"rotate\": {\"axis\": [0, 1, 0], \"rate\": 1.0}}},\n"
    "  {\"type\": \"cloth\", \"name\": \"sheet\", \"mesh\": {\"generator\": \"grid\", \"vertices\": [16, 16], "
    "\"size\": [0.8, 0.8]}, \"transform\": {\"position\": [0, 0.55, 0]}},\n"
    "  {\"type\": \"fracture\", \"name\": \"wall\", \"size\": [0.2, 0.2, 0.1], \"pieces\": [2, 2, 1], "
    "\"gap\": 0.004, \"bond_strength\": 0.05, \"transform\": {\"position\": [1.0, 0.3, 0]}}]}";

static hy_world* load_snap_scene(void) {
    hy_scene_options o = hy_scene_options_default();
    hy_world* w = NULL;
    CHECK_OK(hy_scene_load_string(snap_scene, strlen(snap_scene), "snap.json", &o, &w));
    return w;
}

static void steps(hy_world* w, int n) {
    for (int i = 0; i < n; i++) CHECK_OK(hy_test_step(w));
}

/* Continuing from a restore gives the hash of the uninterrupted run, in
 * the same world and in one loaded again; bad snapshots change nothing. */
static void test_snapshot(void) {
    hy_world* w = load_snap_scene();
    CHECK(w != NULL);
    if (!w) return;
    steps(w, 30);
    size_t size = 0, written = 0;
    CHECK_OK(hy_world_snapshot_size(w, &size));
    unsigned char* snap = malloc(size);
    CHECK(hy_world_snapshot(w, snap, size - 1, &written) == HY_ERR_INVALID_ARG);
    CHECK_OK(hy_world_snapshot(w, snap, size, &written));
    CHECK(written == size);
    uint64_t at = hy_test_hash(w);
    steps(w, 40);
    uint64_t want = hy_test_hash(w);
    hy_step_stats st;
    CHECK_OK(hy_world_get_stats(w, &st));
    CHECK(st.step_index == 70);
    /* same world */
    CHECK_OK(hy_world_restore(w, snap, size));
    CHECK(hy_test_hash(w) == at);
    steps(w, 40);
    CHECK(hy_test_hash(w) == want);
    CHECK_OK(hy_world_get_stats(w, &st));
    CHECK(st.step_index == 70);
    /* a world loaded again */
    hy_world* w2 = load_snap_scene();
    CHECK(w2 != NULL);
    if (w2) {
        steps(w2, 3);
        CHECK_OK(hy_world_restore(w2, snap, size));
        CHECK(hy_test_hash(w2) == at);
        steps(w2, 40);
        CHECK(hy_test_hash(w2) == want);
        /* a world with other objects is refused, unchanged */
        hy_object_id first;
        CHECK_OK(hy_world_get_object(w2, 3, &first));
        CHECK_OK(hy_object_remove(w2, first));
        uint64_t before = hy_test_hash(w2);
        CHECK(hy_world_restore(w2, snap, size) == HY_ERR_INVALID_ARG);
        CHECK(strstr(hy_last_error(), "objects") != NULL);
        CHECK(hy_test_hash(w2) == before);
        hy_world_destroy(w2);
    }
    /* a truncated or foreign buffer */
    uint64_t before = hy_test_hash(w);
    CHECK(hy_world_restore(w, snap, size - 1) == HY_ERR_PARSE);
    CHECK(strstr(hy_last_error(), "truncated") != NULL);
    unsigned char junk[64] = {0};
    CHECK(hy_world_restore(w, junk, sizeof junk) == HY_ERR_PARSE);
    CHECK(strstr(hy_last_error(), "not a hyphys snapshot") != NULL);
    CHECK(hy_test_hash(w) == before);
    free(snap);
    hy_world_destroy(w);
}

/* Counts of the events over n steps. */
typedef struct event_counts {
    int begin, end, touching_steps;
} event_counts;

static void count_events(hy_world* w, int n, event_counts* c) {
    for (int i = 0; i < n; i++) {
        CHECK_OK(hy_world_step(w, DT, 1));
        hy_contact_events ev;
        CHECK_OK(hy_world_get_contact_events(w, &ev));
        c->begin += (int)ev.begin_count;
        c->end += (int)ev.end_count;
        c->touching_steps += ev.touching_count > 0;
        CHECK(ev.touching_count <= 1);
    }
}

/* A ball (restitution 0) dropped 0.25 m onto a plane begins touching it
 * once and keeps touching, asleep too; thrown up by an impulse it ends
 * touching once and begins again when it lands. */
static void test_contact_events(void) {
    hy_world* w = make_world(1, -9.81);
    hy_contact_events ev;
    CHECK_OK(hy_world_get_contact_events(w, &ev));
    CHECK(ev.begin_count == 0 && ev.end_count == 0 && ev.touching_count == 0);
    CHECK(hy_world_get_contact_events(w, NULL) == HY_ERR_INVALID_ARG);
    hy_obstacle_id ground = add_plane(w);
    hy_mesh* ico = NULL;
    CHECK_OK(hy_mesh_icosphere(0.1, 2, &ico));
    hy_body_def bd = hy_body_def_default();
    bd.mesh = hy_mesh_get_view(ico);
    bd.position[1] = 0.35;
    bd.restitution = 0.0;
    hy_body_id ball;
    CHECK_OK(hy_body_add(w, &bd, &ball));
    /* it falls 0.25 m in about 0.23 s (14 steps) */
    event_counts c = {0, 0, 0};
    int first = -1;
    for (int i = 0; i < 60; i++) {
        event_counts one = {0, 0, 0};
        count_events(w, 1, &one);
        if (one.begin && first < 0) {
            first = i + 1;
            CHECK_OK(hy_world_get_contact_events(w, &ev));
            CHECK(ev.begin_count == 1);
            CHECK(hy_object_id_equal(ev.begin[0].a, hy_obstacle_object(ground)));
            CHECK(hy_object_id_equal(ev.begin[0].b, hy_body_object(ball)));
        }
        c.begin += one.begin;
        c.end += one.end;
        c.touching_steps += one.touching_steps;
    }
    CHECK(first >= 12 && first <= 15);
    CHECK(c.begin == 1);
    CHECK(c.end == 0);
    CHECK(c.touching_steps == 60 - first + 1);
    /* at rest for 0.5 s it sleeps, and still touches */
    event_counts rest = {0, 0, 0};
    count_events(w, 60, &rest);
    int32_t asleep = 0;
    CHECK_OK(hy_body_is_asleep(w, ball, &asleep));
    CHECK(asleep == 1);
    CHECK(rest.begin == 0 && rest.end == 0 && rest.touching_steps == 60);
    /* thrown up at 2 m/s: airborne for about 0.4 s, then it lands */
    hy_mass_properties mp;
    CHECK_OK(hy_body_get_mass_properties(w, ball, &mp));
    const double J[3] = {0.0, 2.0 * mp.mass, 0.0};
    CHECK_OK(hy_body_apply_impulse(w, ball, J, NULL));
    CHECK_OK(hy_body_is_asleep(w, ball, &asleep));
    CHECK(asleep == 0);
    /* it leaves the plane in the first step, and events alternate: a pair
     * never begins twice without ending between. The response stops a
     * falling body at its time of impact, which may leave it short of the
     * contact distance: it then settles in a few steps, each landing a
     * begin and each drop before the next an end, as detection sees it. */
    int touching = 1, first_end = -1, landed = -1, alternate = 1;
    for (int i = 0; i < 60; i++) {
        CHECK_OK(hy_world_step(w, DT, 1));
        CHECK_OK(hy_world_get_contact_events(w, &ev));
        CHECK(ev.begin_count + ev.end_count <= 1);
        if (ev.end_count) {
            alternate &= touching;
            touching = 0;
            if (first_end < 0) first_end = i;
        }
        if (ev.begin_count) {
            alternate &= !touching;
            touching = 1;
            if (landed < 0) landed = i;
        }
        CHECK(touching == (ev.touching_count == 1));
    }
    CHECK(first_end == 0);
    CHECK(alternate);
    CHECK(touching); /* at rest on the plane again */
    /* airborne 2 v / g = 0.41 s, less the few mm it rose: 24 steps */
    CHECK(landed >= 20 && landed <= 26);
    /* removing the ball ends the pair without an event */
    CHECK_OK(hy_body_remove(w, ball));
    CHECK_OK(hy_world_step(w, DT, 1));
    CHECK_OK(hy_world_get_contact_events(w, &ev));
    CHECK(ev.begin_count == 0 && ev.end_count == 0 && ev.touching_count == 0);
    hy_mesh_destroy(ico);
    hy_world_destroy(w);
}

/* Host task systems for the world def's enqueue_task / finish_task. */
typedef struct host {
    int workers;
    int scrambled;     /* 1: serial, ranges in reverse order, workers taken in turn */
    atomic_long calls; /* enqueue calls */
} host;

/* A threaded host's task: workers 1.. on threads of their own, worker 0
 * on the caller's thread in finish; ranges of 3 x min_range from a counter. */
typedef struct host_task {
    hy_task_fn* fn;
    void* ctx;
    int64_t n, range;
    atomic_llong next;
    pthread_t threads[8];
    int nthreads;
} host_task;

typedef struct host_worker {
    host_task* t;
    int32_t id;
} host_worker;

static void host_work(host_task* t, int32_t worker) {
    for (;;) {
        int64_t b = atomic_fetch_add(&t->next, t->range);
        if (b >= t->n) return;
        t->fn(b, b + t->range < t->n ? b + t->range : t->n, worker, t->ctx);
    }
}

static host_worker host_workers[8];

static void* host_thread(void* arg) {
    host_worker* hw = arg;
    host_work(hw->t, hw->id);
    return NULL;
}

static void* host_enqueue(hy_task_fn* fn, int64_t n, int64_t min_range, void* ctx, void* user) {
    host* h = user;
    atomic_fetch_add(&h->calls, 1);
    if (h->scrambled) {
        int64_t ranges = (n + min_range - 1) / min_range;
        for (int64_t r = ranges - 1; r >= 0; r--) {
            int64_t b = r * min_range, e = b + min_range < n ? b + min_range : n;
            fn(b, e, (int32_t)(r % h->workers), ctx);
        }
        return NULL;
    }
    host_task* t = calloc(1, sizeof *t);
    if (!t) abort();
    t->fn = fn;
    t->ctx = ctx;
    t->n = n;
    t->range = 3 * min_range;
    atomic_init(&t->next, 0);
    for (int i = 1; i < h->workers && i < 8; i++) {
        host_workers[i] = (host_worker){t, i};
        if (pthread_create(&t->threads[t->nthreads], NULL, host_thread, &host_workers[i]) == 0) t->nthreads++;
    }
    return t;
}

static void host_finish(void* task, void* user) {
    (void)user;
    host_task* t = task;
    host_work(t, 0);
    for (int i = 0; i < t->nthreads; i++) pthread_join(t->threads[i], NULL);
    free(t);
}

/* A cloth on a ball and a box beside it, 25 steps: the hash. */
static uint64_t run_tasks(int threads, host* h) {
    hy_world_def d = hy_world_def_default();
    d.threads = threads;
    if (h) {
        d.enqueue_task = host_enqueue;
        d.finish_task = host_finish;
        d.user_task_context = h;
    }
    hy_world* w = NULL;
    CHECK_OK(hy_world_create(&d, &w));
    if (!w) return 0;
    CHECK(hy_test_thread_count(w) == threads);
    hy_mesh *grid = NULL, *ico = NULL, *box = NULL;
    CHECK_OK(hy_mesh_grid(20, 20, 0.8, 0.8, &grid));
    CHECK_OK(hy_mesh_icosphere(0.2, 2, &ico));
    CHECK_OK(hy_mesh_box(0.06, 0.06, 0.06, 1, &box));
    hy_cloth_def cd = hy_cloth_def_default();
    cd.mesh = hy_mesh_get_view(grid);
    cd.position[1] = 0.23;
    hy_cloth_id cloth;
    CHECK_OK(hy_cloth_add(w, &cd, &cloth));
    hy_obstacle_def od = hy_obstacle_def_default();
    od.mesh = hy_mesh_get_view(ico);
    hy_obstacle_id ball;
    CHECK_OK(hy_obstacle_add(w, &od, &ball));
    hy_body_id b = add_body(w, box, 0.12, 0.4);
    (void)b;
    for (int i = 0; i < 25; i++) CHECK_OK(hy_world_step(w, DT, 1));
    uint64_t hash = hy_test_hash(w);
    hy_mesh_destroy(grid);
    hy_mesh_destroy(ico);
    hy_mesh_destroy(box);
    hy_world_destroy(w);
    return hash;
}

/* The host's task system steps the world to the pool's hash; the def is
 * checked. */
static void test_task_system(void) {
    uint64_t pool = run_tasks(3, NULL);
    CHECK(pool == run_tasks(1, NULL));
    host threaded = {3, 0, 0}, scrambled = {4, 1, 0};
    CHECK(run_tasks(3, &threaded) == pool);
    CHECK(atomic_load(&threaded.calls) > 25);
    CHECK(run_tasks(4, &scrambled) == pool);
    CHECK(atomic_load(&scrambled.calls) > 25);
    hy_world_def d = hy_world_def_default();
    d.enqueue_task = host_enqueue;
    hy_world* w = NULL;
    CHECK(hy_world_create(&d, &w) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "finish_task is NULL") != NULL);
    d.finish_task = host_finish;
    d.threads = 0;
    CHECK(hy_world_create(&d, &w) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "worker count") != NULL);
}

int main(void) {
    test_ids_and_removal();
    uint64_t h0 = run_removed(0), h1 = run_removed(1);
    CHECK(h0 == h1);
    test_body_control();
    test_kinematic();
    test_step_arguments();
    test_snapshot();
    test_contact_events();
    test_task_system();
    TEST_END();
}
