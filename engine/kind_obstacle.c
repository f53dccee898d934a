/* Obstacles in the world, one entry of the kinds table (engine/kinds.h):
 * meshes placed by the scene, static or moved by a scripted motion (a
 * constant linear and angular velocity about a pivot), never by contacts.
 * Collision sees a scripted pose at both ends of the step and never
 * corrects it. */
#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/mesh.h"
#include "engine/kinds.h"

/* ------------------------------------------------------------ operations */

static int obstacle_is_static(const hy_object* o) {
    const double *lv = o->model.motion.linear_velocity, *av = o->model.motion.angular_velocity;
    return lv[0] == 0.0 && lv[1] == 0.0 && lv[2] == 0.0 && av[0] == 0.0 && av[1] == 0.0 && av[2] == 0.0;
}

static int obstacle_is_driven(const hy_object* o) {
    (void)o;
    return 1;
}

/* Its vertices where the script puts them at the step's end. */
static hy_status obstacle_integrate(const hy_world* w, hy_object* o, hy_pool* pool, double dt, hy_step_stats* stats) {
    (void)pool;
    (void)stats;
    hy_obstacle_vertices(o, w->time + dt, o->state->x1, o->state->v1);
    return HY_OK;
}

static void obstacle_view_begin(const hy_object* o, int32_t i, double t, double dt, hy_scene_view* v) {
    hy_obstacle_pose(o, t, &v->pose_x0[i], &v->pose_q0[i]);
    hy_obstacle_pose(o, t + dt, &v->pose_x1[i], &v->pose_q1[i]);
}

const hy_kind_ops hy_kind_obstacle = {
    .kind = HY_OBJECT_OBSTACLE,
    .name = "obstacle",
    .motion = HY_MOVES_SCRIPTED,
    .traits = HY_KIND_SCRIPTED,
    .order = HY_ORDER_RIGID,
    .integrate = obstacle_integrate,
    .is_static = obstacle_is_static,
    .is_driven = obstacle_is_driven,
    .view_begin = obstacle_view_begin,
};

/* ------------------------------------------------------------ public API */


HY_API hy_obstacle_def hy_obstacle_def_default(void) {
    hy_obstacle_def d;
    memset(&d, 0, sizeof d);
    d.orientation[0] = 1.0;
    d.friction = 0.5;
    d.thickness = 0.001;
    d.cookie = HY_DEF_COOKIE;
    return d;
}

void hy_obstacle_pose(const hy_object* o, double t, hy_v3* position, hy_quat* orientation) {
    hy_v3 wdt = v3_scale(v3_load(o->model.motion.angular_velocity), t);
    hy_quat r = quat_from_rotvec(wdt);
    hy_v3 lin = v3_scale(v3_load(o->model.motion.linear_velocity), t);
    /* rotate the initial pose about the pivot, then translate */
    *position = v3_add(v3_add(o->model.pivot, quat_rotate(r, v3_sub(o->model.pos0, o->model.pivot))), lin);
    *orientation = quat_normalize(quat_mul(r, o->model.q0));
}

void hy_obstacle_vertices(const hy_object* o, double t, double* x, double* v) {
    hy_v3 p;
    hy_quat q;
    hy_obstacle_pose(o, t, &p, &q);
    double R[9];
    quat_to_mat(q, R);
    hy_v3 w = v3_load(o->model.motion.angular_velocity), lin = v3_load(o->model.motion.linear_velocity);
    hy_v3 centre = v3_add(o->model.pivot, v3_scale(lin, t)); /* the moving pivot */
    for (int32_t i = 0; i < o->model.nv; i++) {
        hy_v3 xi = v3_add(p, mat_mul_v3(R, v3_load(o->model.local + 3 * i)));
        v3_store(x + 3 * i, xi);
        if (v) v3_store(v + 3 * i, v3_add(lin, v3_cross(w, v3_sub(xi, centre))));
    }
}

HY_API hy_status hy_obstacle_add(hy_world* w, const hy_obstacle_def* d, hy_obstacle_id* out) {
    if (!w || !d || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_obstacle_add: NULL argument");
    if (d->cookie != HY_DEF_COOKIE)
        return hy_fail(HY_ERR_BAD_DEF, "obstacle def not initialised with hy_obstacle_def_default()");
    hy_status s = hy_mesh_view_validate(d->mesh, "obstacle");
    hy_quat q;
    if (!s) s = hy_check_quat(d->orientation, "obstacle", &q);
    if (!s) s = hy_check_vec(d->position, "obstacle", "position");
    if (!s) s = hy_check_vec(d->pivot, "obstacle", "pivot");
    if (!s) s = hy_check_vec(d->motion.linear_velocity, "obstacle", "motion.linear_velocity");
    if (!s) s = hy_check_vec(d->motion.angular_velocity, "obstacle", "motion.angular_velocity");
    if (!s) s = hy_check_nonneg(d->friction, "obstacle", "friction");
    if (!s) s = hy_check_nonneg(d->thickness, "obstacle", "thickness");
    if (s) return s;
    hy_object* o = NULL;
    int32_t slot;
    s = hy_world_new_object(w, HY_OBJECT_OBSTACLE, d->mesh, &o, &slot);
    if (s) return s;
    o->model.pos0 = v3_load(d->position);
    o->model.q0 = q;
    o->model.pivot = v3_load(d->pivot);
    o->model.motion = d->motion;
    o->model.friction = d->friction;
    o->model.thickness = d->thickness;
    hy_obstacle_vertices(o, w->time, o->state->x, o->state->v);
    memcpy(o->state->x1, o->state->x, sizeof(double) * 3 * (size_t)o->model.nv);
    hy_object_id id = hy_world_commit_object(w, slot, "obstacle");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}

HY_API hy_status hy_obstacle_remove(hy_world* w, hy_obstacle_id id) {
    hy_object* o = NULL;
    hy_status s = hy_world_resolve_kind(w, hy_obstacle_object(id), HY_OBJECT_OBSTACLE, "hy_obstacle_remove", &o);
    return s ? s : hy_object_remove(w, hy_obstacle_object(id));
}

HY_API hy_status hy_object_as_obstacle(const hy_world* w, hy_object_id id, hy_obstacle_id* out) {
    hy_object* o = NULL;
    hy_status s = hy_world_resolve_kind(w, id, HY_OBJECT_OBSTACLE, "hy_object_as_obstacle", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_as_obstacle: out is NULL");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}
