/* Rigid bodies in the world, one entry of the kinds table
 * (engine/kinds.h): the n-body scenes' bodies and the fracture pieces alike.
 * A body's state is its rigid pose and momentum (solvers/rigid.h), its
 * vertices placed from them; it is integrated with gravity and the applied
 * loads, or moved by its own velocities while kinematic, and may sleep
 * (engine/sleep.c). Collision sees it as rigid: the response moves its pose.
 * Bonds (solvers/bonds.h) join bodies; the step solves them between the
 * bodies' predict and the rest of the integrate phase. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mesh.h"
#include "engine/kinds.h"

/* ------------------------------------------------------------ operations */

/* A kinematic body's pose after dt: moved by its own velocities only. */
static void kinematic_advance(const hy_rigid_state* s0, double dt, hy_rigid_state* s1) {
    *s1 = *s0;
    s1->x = v3_mad(s0->x, s0->v, dt);
    s1->q = quat_normalize(quat_mul(quat_from_rotvec(v3_scale(s0->w, dt)), s0->q));
}

/* A dynamic body over dt: the applied force and torque change its
 * velocities first (held over the step, as gravity is), then it is
 * integrated. Without them the integration is exactly as before. */
static void body_advance(const hy_world* w, hy_object* o, double dt) {
    hy_object_state* st = o->state;
    hy_rigid_state s0 = st->body;
    if (st->force.x != 0.0 || st->force.y != 0.0 || st->force.z != 0.0 || st->torque.x != 0.0 ||
        st->torque.y != 0.0 || st->torque.z != 0.0) {
        double I[9], I_inv[9];
        hy_rigid_world_inertia(&st->inertia, s0.q, I, I_inv);
        s0.v = v3_mad(s0.v, st->force, st->inertia.inv_mass * dt);
        s0.w = v3_add(s0.w, v3_scale(mat_mul_v3(I_inv, st->torque), dt));
    }
    hy_rigid_integrate(&st->inertia, &s0, dt, w->def.gravity, o->model.gravity, &st->body1);
}

/* The end-of-step pose (bonds correct it after this). */
static hy_status body_predict(const hy_world* w, hy_object* o, hy_pool* pool, double dt, hy_step_stats* stats) {
    (void)pool;
    (void)stats;
    hy_object_state* st = o->state;
    if (st->asleep) st->body1 = st->body;
    else if (st->kinematic) kinematic_advance(&st->body, dt, &st->body1);
    else body_advance(w, o, dt);
    return HY_OK;
}

/* The vertices at the (bonded) end-of-step pose. */
static hy_status body_integrate(const hy_world* w, hy_object* o, hy_pool* pool, double dt, hy_step_stats* stats) {
    (void)w;
    (void)pool;
    (void)dt;
    (void)stats;
    hy_body_pose_vertices(o, &o->state->body1, o->state->x1, o->state->v1);
    return HY_OK;
}

/* Kinematic bodies end the substep where their own velocities take them:
 * the response treats them as infinitely heavy, but an impact zone may
 * still have moved them with what they struck. */
static void body_after_response(hy_object* o, double dt) {
    hy_object_state* st = o->state;
    if (!st->kinematic || st->asleep) return;
    kinematic_advance(&st->body, dt, &st->body1);
    hy_body_pose_vertices(o, &st->body1, st->x1, st->v1);
}

static void body_commit(hy_object* o) { o->state->body = o->state->body1; }

static int body_is_static(const hy_object* o) {
    const hy_object_state* st = o->state;
    if (st->kinematic)
        return st->asleep || (st->body.v.x == 0.0 && st->body.v.y == 0.0 && st->body.v.z == 0.0 &&
                              st->body.w.x == 0.0 && st->body.w.y == 0.0 && st->body.w.z == 0.0);
    return st->asleep;
}

static int body_is_driven(const hy_object* o) { return o->state->kinematic; }

static void to_view(const hy_rigid_state* s, hy_view_body* b) {
    b->x = s->x;
    b->q = s->q;
    b->v = s->v;
    b->w = s->w;
}

static void body_view_begin(const hy_object* o, int32_t i, double t, double dt, hy_scene_view* v) {
    (void)t;
    (void)dt;
    const hy_object_state* st = o->state;
    double I[9];
    to_view(&st->body, &v->body0[i]);
    to_view(&st->body1, &v->body1[i]);
    v->body_mass[i] = st->inertia.mass;
    v->body_inv_mass[i] = st->inertia.inv_mass;
    hy_rigid_world_inertia(&st->inertia, st->body.q, I, v->body_inv_inertia + 9 * i);
    /* A sleeper takes no impulse: a body awake on it rests as on the floor,
     * and only a body that moves towards it wakes it (engine/sleep.c). The
     * pressure of bodies resting on it would otherwise give it a little
     * speed every step, which woke its island every step, so a pile with
     * one restless member never slept. */
    if (st->asleep) {
        v->body_inv_mass[i] = 0.0;
        memset(v->body_inv_inertia + 9 * i, 0, 9 * sizeof(double));
    }
}

static void body_view_end(hy_object* o, int32_t i, const hy_scene_view* v) {
    const hy_view_body* b = &v->body1[i];
    o->state->body1.x = b->x;
    o->state->body1.q = b->q;
    o->state->body1.v = b->v;
    o->state->body1.w = b->w;
}

/* In a snapshot after the vertices: the rigid state, rest window, sleep,
 * kinematic flag and pending loads. */
typedef struct snap_body {
    hy_rigid_state body;
    hy_v3 rest_x;
    hy_quat rest_q;
    hy_v3 force, torque;
    int32_t rest_steps, asleep, island, kinematic;
} snap_body;

static void body_snap_save(const hy_object* o, hy_snap_cursor* c) {
    const hy_object_state* st = o->state;
    snap_body sb;
    memset(&sb, 0, sizeof sb);
    sb.body = st->body;
    sb.rest_x = st->rest_x;
    sb.rest_q = st->rest_q;
    sb.force = st->force;
    sb.torque = st->torque;
    sb.rest_steps = st->rest_steps;
    sb.asleep = st->asleep;
    sb.island = st->island;
    sb.kinematic = st->kinematic;
    hy_snap_put(c, &sb, sizeof sb);
}

static int body_snap_check(const hy_object* o, hy_snap_cursor* c) {
    (void)o;
    return hy_snap_skip(c, sizeof(snap_body));
}

static void body_snap_load(hy_object* o, hy_snap_cursor* c) {
    hy_object_state* st = o->state;
    snap_body sb;
    hy_snap_get(c, &sb, sizeof sb);
    st->body = st->body1 = sb.body;
    st->rest_x = sb.rest_x;
    st->rest_q = sb.rest_q;
    st->force = sb.force;
    st->torque = sb.torque;
    st->rest_steps = sb.rest_steps;
    st->asleep = sb.asleep;
    st->island = sb.island;
    if (st->kinematic != sb.kinematic) hy_body_kinematic_inertia(o, sb.kinematic);
    st->kinematic = sb.kinematic;
}

const hy_kind_ops hy_kind_body = {
    .kind = HY_OBJECT_BODY,
    .name = "rigid body",
    .motion = HY_MOVES_RIGID,
    .traits = HY_KIND_SLEEPS,
    .order = HY_ORDER_RIGID,
    .predict = body_predict,
    .integrate = body_integrate,
    .after_response = body_after_response,
    .commit = body_commit,
    .is_static = body_is_static,
    .is_driven = body_is_driven,
    .view_begin = body_view_begin,
    .view_end = body_view_end,
    .snap_save = body_snap_save,
    .snap_check = body_snap_check,
    .snap_load = body_snap_load,
};

/* ------------------------------------------------------------ public API */


HY_API hy_body_def hy_body_def_default(void) {
    hy_body_def d;
    memset(&d, 0, sizeof d);
    d.density = 1000.0;
    d.orientation[0] = 1.0;
    d.restitution = 0.5;
    d.friction = 0.4;
    d.thickness = 0.001;
    d.gravity = 1;
    d.cookie = HY_DEF_COOKIE;
    return d;
}

/* Vertex positions and velocities of a body from its rigid state. */
void hy_body_pose_vertices(hy_object* o, const hy_rigid_state* st, double* x, double* v) {
    double R[9];
    quat_to_mat(st->q, R);
    for (int32_t i = 0; i < o->model.nv; i++) {
        hy_v3 r = mat_mul_v3(R, v3_load(o->model.local + 3 * i));
        v3_store(x + 3 * i, v3_add(st->x, r));
        if (v) v3_store(v + 3 * i, v3_add(st->v, v3_cross(st->w, r)));
    }
}

HY_API hy_status hy_body_add(hy_world* w, const hy_body_def* d, hy_body_id* out) {
    if (!w || !d || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_add: NULL argument");
    if (d->cookie != HY_DEF_COOKIE)
        return hy_fail(HY_ERR_BAD_DEF, "body def not initialised with hy_body_def_default()");
    hy_status s = hy_mesh_view_validate(d->mesh, "body");
    hy_quat q;
    if (!s) s = hy_check_quat(d->orientation, "body", &q);
    if (!s) s = hy_check_vec(d->position, "body", "position");
    if (!s) s = hy_check_vec(d->linear_velocity, "body", "linear_velocity");
    if (!s) s = hy_check_vec(d->angular_velocity, "body", "angular_velocity");
    if (!s && (!(d->restitution >= 0.0) || !(d->restitution <= 1.0)))
        s = hy_fail(HY_ERR_INVALID_ARG, "body.restitution must be in [0, 1], got %g", d->restitution);
    if (!s) s = hy_check_nonneg(d->friction, "body", "friction");
    if (!s) s = hy_check_nonneg(d->thickness, "body", "thickness");
    hy_mass_properties mp;
    if (!s) s = hy_mesh_mass_properties(d->mesh, d->density, &mp);
    hy_rigid_inertia in;
    if (!s) s = hy_rigid_inertia_from(&mp, &in);
    if (s) return s;

    hy_object* o = NULL;
    int32_t slot;
    s = hy_world_new_object(w, HY_OBJECT_BODY, d->mesh, &o, &slot);
    if (s) return s;
    /* Body frame: the mesh frame moved to the centre of mass. */
    hy_v3 c = v3_load(mp.center);
    for (int32_t i = 0; i < o->model.nv; i++) {
        v3_store(o->model.local + 3 * i, v3_sub(v3_load(o->model.local + 3 * i), c));
        o->model.reach = fmax(o->model.reach, v3_len(v3_load(o->model.local + 3 * i)));
    }
    o->model.mass = mp;
    o->state->inertia = in;
    o->state->body.q = q;
    o->state->body.x = v3_add(v3_load(d->position), quat_rotate(q, c));
    o->state->body.v = v3_load(d->linear_velocity);
    o->state->body.w = v3_load(d->angular_velocity);
    o->state->body1 = o->state->body;
    o->model.restitution = d->restitution;
    o->model.friction = d->friction;
    o->model.thickness = d->thickness;
    o->model.gravity = d->gravity != 0;
    hy_body_pose_vertices(o, &o->state->body, o->state->x, o->state->v);
    memcpy(o->state->x1, o->state->x, sizeof(double) * 3 * (size_t)o->model.nv);
    hy_object_id id = hy_world_commit_object(w, slot, "body");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}

static hy_status get_body(const hy_world* w, hy_body_id id, const char* what, hy_object** out) {
    return hy_world_resolve_kind(w, hy_body_object(id), HY_OBJECT_BODY, what, out);
}

/* A body moved or pushed by the caller wakes with its island, and its rest
 * window starts again. */
static void wake_body(hy_world* w, hy_object* o) {
    o->state->rest_steps = 0;
    if (!o->state->asleep) return;
    int32_t island = o->state->island;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* b = &w->objects[i];
        if (b->state->asleep && b->state->island == island) {
            b->state->asleep = 0;
            b->state->rest_steps = 0;
        }
    }
}

HY_API hy_status hy_body_get_transform(const hy_world* w, hy_body_id id, double position[3], double orientation[4]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_get_transform", &o);
    if (s) return s;
    if (position) v3_store(position, o->state->body.x);
    if (orientation) {
        orientation[0] = o->state->body.q.w;
        orientation[1] = o->state->body.q.x;
        orientation[2] = o->state->body.q.y;
        orientation[3] = o->state->body.q.z;
    }
    return HY_OK;
}

HY_API hy_status hy_body_set_transform(hy_world* w, hy_body_id id, const double position[3],
                                       const double orientation[4]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_set_transform", &o);
    if (s) return s;
    if (!position || !orientation) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_set_transform: NULL argument");
    hy_quat q;
    s = hy_check_vec(position, "hy_body_set_transform", "position");
    if (!s) s = hy_check_quat(orientation, "hy_body_set_transform", &q);
    if (s) return s;
    o->state->body.x = v3_load(position);
    o->state->body.q = q;
    o->state->body1 = o->state->body;
    hy_body_pose_vertices(o, &o->state->body, o->state->x, o->state->v);
    wake_body(w, o);
    return HY_OK;
}

HY_API hy_status hy_body_get_velocity(const hy_world* w, hy_body_id id, double linear[3], double angular[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_get_velocity", &o);
    if (s) return s;
    if (linear) v3_store(linear, o->state->body.v);
    if (angular) v3_store(angular, o->state->body.w);
    return HY_OK;
}

HY_API hy_status hy_body_set_velocity(hy_world* w, hy_body_id id, const double linear[3], const double angular[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_set_velocity", &o);
    if (s) return s;
    if (linear) s = hy_check_vec(linear, "hy_body_set_velocity", "linear");
    if (!s && angular) s = hy_check_vec(angular, "hy_body_set_velocity", "angular");
    if (s) return s;
    if (linear) o->state->body.v = v3_load(linear);
    if (angular) o->state->body.w = v3_load(angular);
    o->state->body1 = o->state->body;
    hy_body_pose_vertices(o, &o->state->body, o->state->x, o->state->v);
    wake_body(w, o);
    return HY_OK;
}

HY_API hy_status hy_body_apply_force(hy_world* w, hy_body_id id, const double force[3], const double point[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_apply_force", &o);
    if (s) return s;
    if (!force) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_apply_force: force is NULL");
    s = hy_check_vec(force, "hy_body_apply_force", "force");
    if (!s && point) s = hy_check_vec(point, "hy_body_apply_force", "point");
    if (s) return s;
    hy_v3 f = v3_load(force);
    o->state->force = v3_add(o->state->force, f);
    if (point) o->state->torque = v3_add(o->state->torque, v3_cross(v3_sub(v3_load(point), o->state->body.x), f));
    wake_body(w, o);
    return HY_OK;
}

HY_API hy_status hy_body_apply_torque(hy_world* w, hy_body_id id, const double torque[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_apply_torque", &o);
    if (s) return s;
    if (!torque) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_apply_torque: torque is NULL");
    s = hy_check_vec(torque, "hy_body_apply_torque", "torque");
    if (s) return s;
    o->state->torque = v3_add(o->state->torque, v3_load(torque));
    wake_body(w, o);
    return HY_OK;
}

/* Change the body's momentum by the linear impulse J and the angular one
 * L (world frame), now, and its vertices' velocities with it. */
static void push_body(hy_world* w, hy_object* o, hy_v3 J, hy_v3 L) {
    double I[9], I_inv[9];
    hy_rigid_world_inertia(&o->state->inertia, o->state->body.q, I, I_inv);
    o->state->body.v = v3_mad(o->state->body.v, J, o->state->inertia.inv_mass);
    o->state->body.w = v3_add(o->state->body.w, mat_mul_v3(I_inv, L));
    o->state->body1 = o->state->body;
    hy_body_pose_vertices(o, &o->state->body, o->state->x, o->state->v);
    wake_body(w, o);
}

HY_API hy_status hy_body_apply_impulse(hy_world* w, hy_body_id id, const double impulse[3], const double point[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_apply_impulse", &o);
    if (s) return s;
    if (!impulse) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_apply_impulse: impulse is NULL");
    s = hy_check_vec(impulse, "hy_body_apply_impulse", "impulse");
    if (!s && point) s = hy_check_vec(point, "hy_body_apply_impulse", "point");
    if (s) return s;
    if (o->state->kinematic)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_body_apply_impulse: body '%s' is kinematic (set its velocity)", o->name);
    hy_v3 J = v3_load(impulse);
    hy_v3 L = point ? v3_cross(v3_sub(v3_load(point), o->state->body.x), J) : v3(0, 0, 0);
    push_body(w, o, J, L);
    return HY_OK;
}

HY_API hy_status hy_body_apply_angular_impulse(hy_world* w, hy_body_id id, const double impulse[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_apply_angular_impulse", &o);
    if (s) return s;
    if (!impulse) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_apply_angular_impulse: impulse is NULL");
    s = hy_check_vec(impulse, "hy_body_apply_angular_impulse", "impulse");
    if (s) return s;
    if (o->state->kinematic)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_body_apply_angular_impulse: body '%s' is kinematic (set its velocity)",
                       o->name);
    push_body(w, o, v3(0, 0, 0), v3_load(impulse));
    return HY_OK;
}

/* Kinematic: the inverse mass and inertia are zero, so the response's
 * impulses leave the body as it is (it counts as infinitely heavy); the
 * mass properties stay for reading. */
void hy_body_kinematic_inertia(hy_object* o, int kinematic) {
    if (kinematic) {
        o->state->inertia.inv_mass = 0.0;
        memset(o->state->inertia.inv_inertia_body, 0, sizeof o->state->inertia.inv_inertia_body);
    } else {
        hy_rigid_inertia_from(&o->model.mass, &o->state->inertia); /* succeeded when the body was added */
    }
}

HY_API hy_status hy_body_set_kinematic(hy_world* w, hy_body_id id, int32_t kinematic) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_set_kinematic", &o);
    if (s) return s;
    if (kinematic != 0 && kinematic != 1)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_body_set_kinematic: kinematic must be 0 or 1, got %d", kinematic);
    if (o->state->kinematic == kinematic) return HY_OK;
    o->state->kinematic = kinematic;
    hy_body_kinematic_inertia(o, kinematic);
    o->state->force = o->state->torque = v3(0, 0, 0);
    wake_body(w, o);
    return HY_OK;
}

HY_API hy_status hy_body_is_kinematic(const hy_world* w, hy_body_id id, int32_t* out) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_is_kinematic", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_is_kinematic: out is NULL");
    *out = o->state->kinematic;
    return HY_OK;
}

HY_API hy_status hy_body_is_asleep(const hy_world* w, hy_body_id id, int32_t* out) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_is_asleep", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_is_asleep: out is NULL");
    *out = o->state->asleep;
    return HY_OK;
}

HY_API hy_status hy_body_get_angular_momentum(const hy_world* w, hy_body_id id, double out[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_get_angular_momentum", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_get_angular_momentum: out is NULL");
    v3_store(out, hy_rigid_angular_momentum(&o->state->inertia, &o->state->body));
    return HY_OK;
}

HY_API hy_status hy_body_get_mass_properties(const hy_world* w, hy_body_id id, hy_mass_properties* out) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_get_mass_properties", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_get_mass_properties: out is NULL");
    *out = o->model.mass;
    return HY_OK;
}

/* ------------------------------------------------------------- bonds */

HY_API hy_bond_def hy_bond_def_default(void) {
    hy_bond_def d;
    memset(&d, 0, sizeof d);
    d.strength = 1.0;
    d.cookie = HY_DEF_COOKIE;
    return d;
}

HY_API hy_status hy_bond_add(hy_world* w, const hy_bond_def* d) {
    if (!w || !d) return hy_fail(HY_ERR_INVALID_ARG, "hy_bond_add: NULL argument");
    if (d->cookie != HY_DEF_COOKIE)
        return hy_fail(HY_ERR_BAD_DEF, "bond def not initialised with hy_bond_def_default()");
    hy_object *a = NULL, *b = NULL;
    hy_status s = get_body(w, d->a, "hy_bond_add: a", &a);
    if (!s) s = get_body(w, d->b, "hy_bond_add: b", &b);
    if (s) return s;
    if (a == b) return hy_fail(HY_ERR_INVALID_ARG, "bond joins body '%s' to itself", a->name);
    if (hy_check_vec(d->anchor, "bond", "anchor")) return HY_ERR_INVALID_ARG;
    if (!(d->strength > 0.0) || !isfinite(d->strength))
        return hy_fail(HY_ERR_INVALID_ARG, "bond.strength must be > 0, got %g", d->strength);
    hy_bond bond;
    memset(&bond, 0, sizeof bond);
    bond.a = (int32_t)(a - w->objects);
    bond.b = (int32_t)(b - w->objects);
    hy_v3 anchor = v3_load(d->anchor);
    /* Anchor in each body frame, so it follows the bodies. */
    bond.ra = quat_rotate((hy_quat){a->state->body.q.w, -a->state->body.q.x, -a->state->body.q.y, -a->state->body.q.z}, v3_sub(anchor, a->state->body.x));
    bond.rb = quat_rotate((hy_quat){b->state->body.q.w, -b->state->body.q.x, -b->state->body.q.y, -b->state->body.q.z}, v3_sub(anchor, b->state->body.x));
    bond.strength = d->strength;
    if (!hy_bond_set_push(&w->bonds, bond)) return hy_fail(HY_ERR_NOMEM, "out of memory adding a bond");
    return HY_OK;
}

/* A world and an out pointer, or HY_ERR_INVALID_ARG naming the call. */
HY_API hy_status hy_body_remove(hy_world* w, hy_body_id id) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_remove", &o);
    return s ? s : hy_object_remove(w, hy_body_object(id));
}

HY_API hy_status hy_object_as_body(const hy_world* w, hy_object_id id, hy_body_id* out) {
    hy_object* o = NULL;
    hy_status s = hy_world_resolve_kind(w, id, HY_OBJECT_BODY, "hy_object_as_body", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_as_body: out is NULL");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}
