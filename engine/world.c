/* The world: object table, defs, state read-back and hash. The step
 * pipeline is engine/step.c. */
#include "engine/world.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collision/collide.h"
#include "collision/response.h"
#include "engine/cloth_contact.h"
#include "core/error.h"
#include "engine/kinds.h"
#include "engine/links.h"
#include "engine/tools.h"
#include "sched/proximity.h"
#include "core/mesh.h"

/* ------------------------------------------------------------ helpers */

static int finite3(const double* p) { return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]); }

static hy_quat quat_load(const double q[4]) {
    hy_quat r = {q[0], q[1], q[2], q[3]};
    return r;
}

/* Check a quaternion field: finite and not zero; normalised copy out. */
static hy_status check_quat(const double q[4], const char* what, hy_quat* out) {
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (!isfinite(n2) || n2 < 1e-20)
        return hy_fail(HY_ERR_INVALID_ARG, "%s.orientation must be a non-zero finite quaternion", what);
    *out = quat_normalize(quat_load(q));
    return HY_OK;
}

static hy_status check_vec(const double* p, const char* what, const char* field) {
    if (!finite3(p)) return hy_fail(HY_ERR_INVALID_ARG, "%s.%s must be finite", what, field);
    return HY_OK;
}

static hy_status check_nonneg(double x, const char* what, const char* field) {
    if (!(x >= 0.0) || !isfinite(x))
        return hy_fail(HY_ERR_INVALID_ARG, "%s.%s must be >= 0 and finite, got %g", what, field, x);
    return HY_OK;
}

void hy_object_free(hy_object* o) {
    if (o->ops) o->ops->destroy(o);
    free(o->tri);
    free(o->local);
    free(o->x);
    free(o->v);
    free(o->x1);
    free(o->v1);
    hy_cloth_model_destroy(o->cloth);
    free(o->rest_face);
    free(o->cons);
    memset(o, 0, sizeof *o);
}

/* Reserve a slot, room for its id and the per-vertex arrays of a new
 * object (hy_world_commit_object then cannot fail). */
hy_status hy_world_new_object(hy_world* w, hy_object_kind kind, hy_mesh_view m, hy_object** out, int32_t* slot) {
    if (w->free_handle < 0 && w->handle_count == w->handle_capacity) {
        int32_t cap = w->handle_capacity ? 2 * w->handle_capacity : 16;
        hy_handle* nh = realloc(w->handles, sizeof *nh * (size_t)cap);
        if (!nh) return hy_fail(HY_ERR_NOMEM, "out of memory growing the id table");
        w->handles = nh;
        w->handle_capacity = cap;
    }
    if (w->object_count == w->object_capacity) {
        int32_t cap = w->object_capacity ? 2 * w->object_capacity : 16;
        hy_object* no = realloc(w->objects, sizeof *no * (size_t)cap);
        if (!no) return hy_fail(HY_ERR_NOMEM, "out of memory growing the object table");
        memset(no + w->object_capacity, 0, sizeof *no * (size_t)(cap - w->object_capacity));
        w->objects = no;
        w->object_capacity = cap;
    }
    hy_object* o = &w->objects[w->object_count];
    memset(o, 0, sizeof *o);
    o->kind = kind;
    o->nv = m.vertex_count;
    o->nt = m.triangle_count;
    size_t n3 = 3 * (size_t)m.vertex_count;
    o->tri = malloc(sizeof(int32_t) * 3 * (size_t)m.triangle_count);
    o->local = malloc(sizeof(double) * n3);
    o->x = calloc(n3, sizeof(double));
    o->v = calloc(n3, sizeof(double));
    o->x1 = calloc(n3, sizeof(double));
    o->v1 = calloc(n3, sizeof(double));
    if (!o->tri || !o->local || !o->x || !o->v || !o->x1 || !o->v1) {
        hy_object_free(o);
        return hy_fail(HY_ERR_NOMEM, "out of memory for an object of %d vertices", m.vertex_count);
    }
    memcpy(o->tri, m.triangles, sizeof(int32_t) * 3 * (size_t)m.triangle_count);
    memcpy(o->local, m.positions, sizeof(double) * n3);
    *out = o;
    *slot = w->object_count;
    return HY_OK;
}

/* Give the new object in `slot` an id: a freed index (whose generation
 * was raised when its object was removed) or a new one, generation 1. The
 * default name counts ids, so names stay unique after removals. */
hy_object_id hy_world_commit_object(hy_world* w, int32_t slot, const char* default_name) {
    hy_object* o = &w->objects[slot];
    int32_t h;
    if (w->free_handle >= 0) {
        h = w->free_handle;
        w->free_handle = w->handles[h].next_free;
    } else {
        h = w->handle_count++;
        w->handles[h].generation = 1;
    }
    w->handles[h].slot = slot;
    w->handles[h].next_free = -1;
    o->alive = 1;
    o->handle = (uint32_t)h;
    o->generation = w->handles[h].generation;
    if (o->generation == 1) snprintf(o->name, sizeof o->name, "%s%d", default_name, h);
    else snprintf(o->name, sizeof o->name, "%s%d.%u", default_name, h, o->generation);
    w->object_count++;
    return hy_world_slot_id(w, slot);
}

static int id_live(const hy_world* w, hy_object_id id) {
    return id.generation != 0 && id.index < (uint32_t)w->handle_count && w->handles[id.index].slot >= 0 &&
           w->handles[id.index].generation == id.generation;
}

hy_object* hy_world_resolve(const hy_world* w, hy_object_id id) {
    if (!w) {
        hy_fail(HY_ERR_INVALID_ARG, "world is NULL");
        return NULL;
    }
    if (!id_live(w, id)) {
        hy_fail(HY_ERR_STALE_ID, "object id {%u, %u} does not name a live object", id.index, id.generation);
        return NULL;
    }
    return &w->objects[w->handles[id.index].slot];
}

static const char* kind_name(hy_object_kind k) {
    const hy_kind_ops* ops = hy_kind_ops_of(k);
    if (ops) return ops->name;
    return k == HY_OBJECT_CLOTH ? "cloth" : k == HY_OBJECT_BODY ? "rigid body" : "obstacle";
}

/* Resolve an id that must name an object of `kind`; `what` names the
 * call in messages. */
static hy_status resolve_kind(const hy_world* w, hy_object_id id, hy_object_kind kind, const char* what,
                              hy_object** out) {
    if (!w) return hy_fail(HY_ERR_INVALID_ARG, "%s: world is NULL", what);
    hy_object* o = hy_world_resolve(w, id);
    if (!o) {
        hy_error_prefix("%s: ", what);
        return HY_ERR_STALE_ID;
    }
    if (o->kind != kind)
        return hy_fail(HY_ERR_INVALID_ARG, "%s: object '%s' is a %s, not a %s", what, o->name, kind_name(o->kind),
                       kind_name(kind));
    *out = o;
    return HY_OK;
}

/* ------------------------------------------------------------- world */

HY_API hy_world_def hy_world_def_default(void) {
    hy_world_def d;
    memset(&d, 0, sizeof d);
    d.gravity[1] = -9.81;
    d.time_step = 1.0 / 60.0;
    d.substeps = 1;
    d.threads = 0;
    d.cg_max_iterations = 200;
    d.cg_tolerance = 1e-6;
    d.collisions = 1;
    d.sleep_time = 0.5;
    d.sleep_velocity = 0.05;
    d.cookie = HY_DEF_COOKIE;
    return d;
}

static hy_status check_world_def(const hy_world_def* d) {
    if (d->cookie != HY_DEF_COOKIE)
        return hy_fail(HY_ERR_BAD_DEF, "world def not initialised with hy_world_def_default()");
    if (!finite3(d->gravity)) return hy_fail(HY_ERR_INVALID_ARG, "world.gravity must be finite");
    if (!(d->time_step > 0.0) || !isfinite(d->time_step) || d->time_step > 1.0)
        return hy_fail(HY_ERR_INVALID_ARG, "world.time_step must be in (0, 1] s, got %g", d->time_step);
    if (d->substeps < 1 || d->substeps > 64)
        return hy_fail(HY_ERR_INVALID_ARG, "world.substeps must be in [1, 64], got %d", d->substeps);
    if (d->threads < 0 || d->threads > 256)
        return hy_fail(HY_ERR_INVALID_ARG, "world.threads must be in [0, 256], got %d", d->threads);
    if (d->cg_max_iterations < 1 || d->cg_max_iterations > 100000)
        return hy_fail(HY_ERR_INVALID_ARG, "world.cg_max_iterations must be in [1, 100000], got %d",
                       d->cg_max_iterations);
    if (!(d->cg_tolerance > 0.0) || !(d->cg_tolerance < 1.0))
        return hy_fail(HY_ERR_INVALID_ARG, "world.cg_tolerance must be in (0, 1), got %g", d->cg_tolerance);
    if (!(d->sleep_time >= 0.0) || !isfinite(d->sleep_time))
        return hy_fail(HY_ERR_INVALID_ARG, "world.sleep_time must be >= 0 s, got %g", d->sleep_time);
    if (!(d->sleep_velocity > 0.0) || !isfinite(d->sleep_velocity))
        return hy_fail(HY_ERR_INVALID_ARG, "world.sleep_velocity must be > 0 m/s, got %g", d->sleep_velocity);
    if (!d->enqueue_task != !d->finish_task)
        return hy_fail(HY_ERR_INVALID_ARG, "world.enqueue_task and world.finish_task go together: %s is NULL",
                       d->enqueue_task ? "finish_task" : "enqueue_task");
    if (d->enqueue_task && d->threads < 1)
        return hy_fail(HY_ERR_INVALID_ARG,
                       "world.threads must be the host's worker count (>= 1) with a task system, got %d", d->threads);
    return HY_OK;
}

HY_API hy_status hy_world_create(const hy_world_def* def, hy_world** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_create: out is NULL");
    *out = NULL;
    if (!def) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_create: def is NULL");
    hy_status s = check_world_def(def);
    if (s) return s;
    hy_world* w = calloc(1, sizeof *w);
    if (!w) return hy_fail(HY_ERR_NOMEM, "out of memory creating a world");
    w->def = *def;
    w->free_handle = -1;
    if (def->enqueue_task) {
        struct hy_pool_tasks t = {def->enqueue_task, def->finish_task, def->user_task_context};
        w->pool = hy_pool_create_tasks(def->threads, &t);
    } else {
        w->pool = hy_pool_create(def->threads);
    }
    if (!w->pool) {
        free(w);
        return hy_fail(HY_ERR_NOMEM, "could not create the worker pool");
    }
    *out = w;
    return HY_OK;
}

HY_API void hy_world_destroy(hy_world* w) {
    if (!w) return;
    for (int32_t i = 0; i < w->object_count; i++) hy_object_free(&w->objects[i]);
    free(w->objects);
    free(w->handles);
    hy_events_free(w);
    hy_bond_set_free(&w->bonds);
    hy_links_free(w);
    hy_collision_state_destroy(w->collision);
    hy_scene_view_free(&w->view);
    hy_prox_destroy(w->prox);
    free(w->last_contacts);
    free(w->sleep_parent);
    free(w->sleep_flag);
    hy_pool_destroy(w->pool);
    free(w);
}

HY_API hy_status hy_world_get_def(const hy_world* w, hy_world_def* out) {
    if (!w || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_get_def: NULL argument");
    *out = w->def;
    return HY_OK;
}

/* ------------------------------------------------------------- cloth */

HY_API hy_cloth_def hy_cloth_def_default(void) {
    hy_cloth_def d;
    memset(&d, 0, sizeof d);
    d.orientation[0] = 1.0;
    d.density = 0.1;
    d.stretch_stiffness = 1000.0;
    d.shear_stiffness = 100.0;
    d.bend_stiffness = 1.0;
    d.damping = 0.01;
    d.air_damping = 0.02;
    d.thickness = 0.002;
    d.friction = 0.3;
    d.cookie = HY_DEF_COOKIE;
    return d;
}

HY_API hy_status hy_cloth_add(hy_world* w, const hy_cloth_def* d, hy_cloth_id* out) {
    if (!w || !d || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_cloth_add: NULL argument");
    if (d->cookie != HY_DEF_COOKIE)
        return hy_fail(HY_ERR_BAD_DEF, "cloth def not initialised with hy_cloth_def_default()");
    /* the arrays first: the mesh check would only say the counts are wrong */
    if (!d->mesh.positions || !d->mesh.triangles)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_cloth_add: def.mesh.%s is NULL (vertex_count %d, triangle_count %d)",
                       !d->mesh.positions ? "positions" : "triangles", d->mesh.vertex_count, d->mesh.triangle_count);
    hy_status s = hy_mesh_view_validate(d->mesh, "cloth");
    hy_quat q;
    if (!s) s = check_quat(d->orientation, "cloth", &q);
    if (!s) s = check_vec(d->position, "cloth", "position");
    if (!s && (!(d->density > 0.0) || !isfinite(d->density)))
        s = hy_fail(HY_ERR_INVALID_ARG, "cloth.density must be > 0, got %g", d->density);
    if (!s) s = check_nonneg(d->stretch_stiffness, "cloth", "stretch_stiffness");
    if (!s) s = check_nonneg(d->shear_stiffness, "cloth", "shear_stiffness");
    if (!s) s = check_nonneg(d->bend_stiffness, "cloth", "bend_stiffness");
    if (!s) s = check_nonneg(d->damping, "cloth", "damping");
    if (!s) s = check_nonneg(d->air_damping, "cloth", "air_damping");
    if (!s) s = check_nonneg(d->thickness, "cloth", "thickness");
    if (!s) s = check_nonneg(d->friction, "cloth", "friction");
    if (!s && d->pinned_count < 0) s = hy_fail(HY_ERR_INVALID_ARG, "cloth.pinned_count must be >= 0");
    if (!s && d->pinned_count > 0 && !d->pinned) s = hy_fail(HY_ERR_INVALID_ARG, "cloth.pinned is NULL");
    for (int32_t i = 0; !s && i < d->pinned_count; i++)
        if (d->pinned[i] < 0 || d->pinned[i] >= d->mesh.vertex_count)
            s = hy_fail(HY_ERR_INVALID_ARG, "cloth.pinned[%d] = %d is not a vertex index in [0, %d)", i,
                        d->pinned[i], d->mesh.vertex_count);
    if (s) return s;

    hy_object* o = NULL;
    int32_t slot;
    s = hy_world_new_object(w, HY_OBJECT_CLOTH, d->mesh, &o, &slot);
    if (s) return s;
    /* The rest shape is the transformed mesh: the cloth starts unstretched. */
    hy_v3 p = v3_load(d->position);
    for (int32_t i = 0; i < o->nv; i++) v3_store(o->x + 3 * i, v3_add(p, quat_rotate(q, v3_load(o->local + 3 * i))));
    hy_cloth_params cp = {d->density, d->stretch_stiffness, d->shear_stiffness, d->bend_stiffness, d->damping,
                          d->air_damping};
    s = hy_cloth_model_create(o->x, o->nv, o->tri, o->nt, &cp, d->pinned, d->pinned_count, &o->cloth);
    if (s) {
        hy_object_free(o);
        return s;
    }
    o->thickness = d->thickness;
    o->friction = d->friction;
    memcpy(o->x1, o->x, sizeof(double) * 3 * (size_t)o->nv);
    hy_object_id id = hy_world_commit_object(w, slot, "cloth");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}

/* -------------------------------------------------------- rigid body */

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
    for (int32_t i = 0; i < o->nv; i++) {
        hy_v3 r = mat_mul_v3(R, v3_load(o->local + 3 * i));
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
    if (!s) s = check_quat(d->orientation, "body", &q);
    if (!s) s = check_vec(d->position, "body", "position");
    if (!s) s = check_vec(d->linear_velocity, "body", "linear_velocity");
    if (!s) s = check_vec(d->angular_velocity, "body", "angular_velocity");
    if (!s && (!(d->restitution >= 0.0) || !(d->restitution <= 1.0)))
        s = hy_fail(HY_ERR_INVALID_ARG, "body.restitution must be in [0, 1], got %g", d->restitution);
    if (!s) s = check_nonneg(d->friction, "body", "friction");
    if (!s) s = check_nonneg(d->thickness, "body", "thickness");
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
    for (int32_t i = 0; i < o->nv; i++) {
        v3_store(o->local + 3 * i, v3_sub(v3_load(o->local + 3 * i), c));
        o->reach = fmax(o->reach, v3_len(v3_load(o->local + 3 * i)));
    }
    o->mass = mp;
    o->inertia = in;
    o->body.q = q;
    o->body.x = v3_add(v3_load(d->position), quat_rotate(q, c));
    o->body.v = v3_load(d->linear_velocity);
    o->body.w = v3_load(d->angular_velocity);
    o->body1 = o->body;
    o->restitution = d->restitution;
    o->friction = d->friction;
    o->thickness = d->thickness;
    o->gravity = d->gravity != 0;
    hy_body_pose_vertices(o, &o->body, o->x, o->v);
    memcpy(o->x1, o->x, sizeof(double) * 3 * (size_t)o->nv);
    hy_object_id id = hy_world_commit_object(w, slot, "body");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}

static hy_status get_body(const hy_world* w, hy_body_id id, const char* what, hy_object** out) {
    return resolve_kind(w, hy_body_object(id), HY_OBJECT_BODY, what, out);
}

/* The status of an id that did not resolve (hy_world_resolve's message
 * is already set). */
static hy_status resolve_status(const hy_world* w, hy_object_id id) {
    if (!w) return HY_ERR_INVALID_ARG;
    return id_live(w, id) ? HY_ERR_INVALID_ARG : HY_ERR_STALE_ID;
}

/* A body moved or pushed by the caller wakes with its island, and its rest
 * window starts again. */
static void wake_body(hy_world* w, hy_object* o) {
    o->rest_steps = 0;
    if (!o->asleep) return;
    int32_t island = o->island;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* b = &w->objects[i];
        if (b->kind == HY_OBJECT_BODY && b->asleep && b->island == island) {
            b->asleep = 0;
            b->rest_steps = 0;
        }
    }
}

HY_API hy_status hy_body_get_transform(const hy_world* w, hy_body_id id, double position[3], double orientation[4]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_get_transform", &o);
    if (s) return s;
    if (position) v3_store(position, o->body.x);
    if (orientation) {
        orientation[0] = o->body.q.w;
        orientation[1] = o->body.q.x;
        orientation[2] = o->body.q.y;
        orientation[3] = o->body.q.z;
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
    s = check_vec(position, "hy_body_set_transform", "position");
    if (!s) s = check_quat(orientation, "hy_body_set_transform", &q);
    if (s) return s;
    o->body.x = v3_load(position);
    o->body.q = q;
    o->body1 = o->body;
    hy_body_pose_vertices(o, &o->body, o->x, o->v);
    wake_body(w, o);
    return HY_OK;
}

HY_API hy_status hy_body_get_velocity(const hy_world* w, hy_body_id id, double linear[3], double angular[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_get_velocity", &o);
    if (s) return s;
    if (linear) v3_store(linear, o->body.v);
    if (angular) v3_store(angular, o->body.w);
    return HY_OK;
}

HY_API hy_status hy_body_set_velocity(hy_world* w, hy_body_id id, const double linear[3], const double angular[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_set_velocity", &o);
    if (s) return s;
    if (linear) s = check_vec(linear, "hy_body_set_velocity", "linear");
    if (!s && angular) s = check_vec(angular, "hy_body_set_velocity", "angular");
    if (s) return s;
    if (linear) o->body.v = v3_load(linear);
    if (angular) o->body.w = v3_load(angular);
    o->body1 = o->body;
    hy_body_pose_vertices(o, &o->body, o->x, o->v);
    wake_body(w, o);
    return HY_OK;
}

HY_API hy_status hy_body_apply_force(hy_world* w, hy_body_id id, const double force[3], const double point[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_apply_force", &o);
    if (s) return s;
    if (!force) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_apply_force: force is NULL");
    s = check_vec(force, "hy_body_apply_force", "force");
    if (!s && point) s = check_vec(point, "hy_body_apply_force", "point");
    if (s) return s;
    hy_v3 f = v3_load(force);
    o->force = v3_add(o->force, f);
    if (point) o->torque = v3_add(o->torque, v3_cross(v3_sub(v3_load(point), o->body.x), f));
    wake_body(w, o);
    return HY_OK;
}

HY_API hy_status hy_body_apply_torque(hy_world* w, hy_body_id id, const double torque[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_apply_torque", &o);
    if (s) return s;
    if (!torque) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_apply_torque: torque is NULL");
    s = check_vec(torque, "hy_body_apply_torque", "torque");
    if (s) return s;
    o->torque = v3_add(o->torque, v3_load(torque));
    wake_body(w, o);
    return HY_OK;
}

/* Change the body's momentum by the linear impulse J and the angular one
 * L (world frame), now, and its vertices' velocities with it. */
static void push_body(hy_world* w, hy_object* o, hy_v3 J, hy_v3 L) {
    double I[9], I_inv[9];
    hy_rigid_world_inertia(&o->inertia, o->body.q, I, I_inv);
    o->body.v = v3_mad(o->body.v, J, o->inertia.inv_mass);
    o->body.w = v3_add(o->body.w, mat_mul_v3(I_inv, L));
    o->body1 = o->body;
    hy_body_pose_vertices(o, &o->body, o->x, o->v);
    wake_body(w, o);
}

HY_API hy_status hy_body_apply_impulse(hy_world* w, hy_body_id id, const double impulse[3], const double point[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_apply_impulse", &o);
    if (s) return s;
    if (!impulse) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_apply_impulse: impulse is NULL");
    s = check_vec(impulse, "hy_body_apply_impulse", "impulse");
    if (!s && point) s = check_vec(point, "hy_body_apply_impulse", "point");
    if (s) return s;
    if (o->kinematic)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_body_apply_impulse: body '%s' is kinematic (set its velocity)", o->name);
    hy_v3 J = v3_load(impulse);
    hy_v3 L = point ? v3_cross(v3_sub(v3_load(point), o->body.x), J) : v3(0, 0, 0);
    push_body(w, o, J, L);
    return HY_OK;
}

HY_API hy_status hy_body_apply_angular_impulse(hy_world* w, hy_body_id id, const double impulse[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_apply_angular_impulse", &o);
    if (s) return s;
    if (!impulse) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_apply_angular_impulse: impulse is NULL");
    s = check_vec(impulse, "hy_body_apply_angular_impulse", "impulse");
    if (s) return s;
    if (o->kinematic)
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
        o->inertia.inv_mass = 0.0;
        memset(o->inertia.inv_inertia_body, 0, sizeof o->inertia.inv_inertia_body);
    } else {
        hy_rigid_inertia_from(&o->mass, &o->inertia); /* succeeded when the body was added */
    }
}

HY_API hy_status hy_body_set_kinematic(hy_world* w, hy_body_id id, int32_t kinematic) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_set_kinematic", &o);
    if (s) return s;
    if (kinematic != 0 && kinematic != 1)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_body_set_kinematic: kinematic must be 0 or 1, got %d", kinematic);
    if (o->kinematic == kinematic) return HY_OK;
    o->kinematic = kinematic;
    hy_body_kinematic_inertia(o, kinematic);
    o->force = o->torque = v3(0, 0, 0);
    wake_body(w, o);
    return HY_OK;
}

HY_API hy_status hy_body_is_kinematic(const hy_world* w, hy_body_id id, int32_t* out) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_is_kinematic", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_is_kinematic: out is NULL");
    *out = o->kinematic;
    return HY_OK;
}

HY_API hy_status hy_body_is_asleep(const hy_world* w, hy_body_id id, int32_t* out) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_is_asleep", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_is_asleep: out is NULL");
    *out = o->asleep;
    return HY_OK;
}

HY_API hy_status hy_body_get_angular_momentum(const hy_world* w, hy_body_id id, double out[3]) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_get_angular_momentum", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_get_angular_momentum: out is NULL");
    v3_store(out, hy_rigid_angular_momentum(&o->inertia, &o->body));
    return HY_OK;
}

HY_API hy_status hy_body_get_mass_properties(const hy_world* w, hy_body_id id, hy_mass_properties* out) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_get_mass_properties", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_body_get_mass_properties: out is NULL");
    *out = o->mass;
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
    if (!finite3(d->anchor)) return hy_fail(HY_ERR_INVALID_ARG, "bond.anchor must be finite");
    if (!(d->strength > 0.0) || !isfinite(d->strength))
        return hy_fail(HY_ERR_INVALID_ARG, "bond.strength must be > 0, got %g", d->strength);
    hy_bond bond;
    memset(&bond, 0, sizeof bond);
    bond.a = (int32_t)(a - w->objects);
    bond.b = (int32_t)(b - w->objects);
    hy_v3 anchor = v3_load(d->anchor);
    /* Anchor in each body frame, so it follows the bodies. */
    bond.ra = quat_rotate((hy_quat){a->body.q.w, -a->body.q.x, -a->body.q.y, -a->body.q.z}, v3_sub(anchor, a->body.x));
    bond.rb = quat_rotate((hy_quat){b->body.q.w, -b->body.q.x, -b->body.q.y, -b->body.q.z}, v3_sub(anchor, b->body.x));
    bond.strength = d->strength;
    if (!hy_bond_set_push(&w->bonds, bond)) return hy_fail(HY_ERR_NOMEM, "out of memory adding a bond");
    return HY_OK;
}

/* A world and an out pointer, or HY_ERR_INVALID_ARG naming the call. */
static hy_status check_get(const hy_world* w, const void* out, const char* what) {
    return w && out ? HY_OK : hy_fail(HY_ERR_INVALID_ARG, "%s: NULL argument", what);
}

HY_API hy_status hy_world_get_bond_count(const hy_world* w, int32_t* out) {
    hy_status s = check_get(w, out, "hy_world_get_bond_count");
    if (!s) *out = w->bonds.intact;
    return s;
}

/* ---------------------------------------------------------- obstacle */

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
    hy_v3 wdt = v3_scale(v3_load(o->motion.angular_velocity), t);
    hy_quat r = quat_from_rotvec(wdt);
    hy_v3 lin = v3_scale(v3_load(o->motion.linear_velocity), t);
    /* rotate the initial pose about the pivot, then translate */
    *position = v3_add(v3_add(o->pivot, quat_rotate(r, v3_sub(o->pos0, o->pivot))), lin);
    *orientation = quat_normalize(quat_mul(r, o->q0));
}

void hy_obstacle_vertices(const hy_object* o, double t, double* x, double* v) {
    hy_v3 p;
    hy_quat q;
    hy_obstacle_pose(o, t, &p, &q);
    double R[9];
    quat_to_mat(q, R);
    hy_v3 w = v3_load(o->motion.angular_velocity), lin = v3_load(o->motion.linear_velocity);
    hy_v3 centre = v3_add(o->pivot, v3_scale(lin, t)); /* the moving pivot */
    for (int32_t i = 0; i < o->nv; i++) {
        hy_v3 xi = v3_add(p, mat_mul_v3(R, v3_load(o->local + 3 * i)));
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
    if (!s) s = check_quat(d->orientation, "obstacle", &q);
    if (!s) s = check_vec(d->position, "obstacle", "position");
    if (!s) s = check_vec(d->pivot, "obstacle", "pivot");
    if (!s) s = check_vec(d->motion.linear_velocity, "obstacle", "motion.linear_velocity");
    if (!s) s = check_vec(d->motion.angular_velocity, "obstacle", "motion.angular_velocity");
    if (!s) s = check_nonneg(d->friction, "obstacle", "friction");
    if (!s) s = check_nonneg(d->thickness, "obstacle", "thickness");
    if (s) return s;
    hy_object* o = NULL;
    int32_t slot;
    s = hy_world_new_object(w, HY_OBJECT_OBSTACLE, d->mesh, &o, &slot);
    if (s) return s;
    o->pos0 = v3_load(d->position);
    o->q0 = q;
    o->pivot = v3_load(d->pivot);
    o->motion = d->motion;
    o->friction = d->friction;
    o->thickness = d->thickness;
    hy_obstacle_vertices(o, w->time, o->x, o->v);
    memcpy(o->x1, o->x, sizeof(double) * 3 * (size_t)o->nv);
    hy_object_id id = hy_world_commit_object(w, slot, "obstacle");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}

/* -------------------------------------------------------- any object */

HY_API hy_status hy_object_get_kind(const hy_world* w, hy_object_id id, hy_object_kind* out) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return resolve_status(w, id);
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_get_kind: out is NULL");
    *out = o->kind;
    return HY_OK;
}

HY_API hy_status hy_object_get_name(const hy_world* w, hy_object_id id, const char** out) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return resolve_status(w, id);
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_get_name: out is NULL");
    *out = o->name;
    return HY_OK;
}

HY_API hy_status hy_object_set_name(hy_world* w, hy_object_id id, const char* name) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return resolve_status(w, id);
    if (!name) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_set_name: name is NULL");
    snprintf(o->name, sizeof o->name, "%s", name);
    return HY_OK;
}

HY_API hy_status hy_object_get_thickness(const hy_world* w, hy_object_id id, double* out) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return resolve_status(w, id);
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_get_thickness: out is NULL");
    *out = o->thickness;
    return HY_OK;
}

HY_API hy_status hy_world_get_object_count(const hy_world* w, int32_t* out) {
    hy_status s = check_get(w, out, "hy_world_get_object_count");
    if (!s) *out = w->object_count;
    return s;
}

HY_API hy_status hy_world_get_object(const hy_world* w, int32_t i, hy_object_id* out) {
    if (!w || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_get_object: NULL argument");
    if (i < 0 || i >= w->object_count)
        return hy_fail(HY_ERR_INVALID_ARG, "object index %d out of range [0, %d)", i, w->object_count);
    *out = hy_world_slot_id(w, i);
    return HY_OK;
}

HY_API hy_status hy_object_set_user_data(hy_world* w, hy_object_id id, void* user_data) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return resolve_status(w, id);
    o->user_data = user_data;
    return HY_OK;
}

HY_API hy_status hy_object_get_user_data(const hy_world* w, hy_object_id id, void** out) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return resolve_status(w, id);
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_get_user_data: out is NULL");
    *out = o->user_data;
    return HY_OK;
}

HY_API hy_status hy_object_as_body(const hy_world* w, hy_object_id id, hy_body_id* out) {
    hy_object* o = NULL;
    hy_status s = resolve_kind(w, id, HY_OBJECT_BODY, "hy_object_as_body", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_as_body: out is NULL");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}

HY_API hy_status hy_object_as_cloth(const hy_world* w, hy_object_id id, hy_cloth_id* out) {
    hy_object* o = NULL;
    hy_status s = resolve_kind(w, id, HY_OBJECT_CLOTH, "hy_object_as_cloth", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_as_cloth: out is NULL");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}

HY_API hy_status hy_object_as_obstacle(const hy_world* w, hy_object_id id, hy_obstacle_id* out) {
    hy_object* o = NULL;
    hy_status s = resolve_kind(w, id, HY_OBJECT_OBSTACLE, "hy_object_as_obstacle", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_as_obstacle: out is NULL");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}

/* Bonds of a removed slot go; the later slots' move down by one. The
 * bonds' index by object is made again on its next use. */
static void remove_slot_bonds(hy_bond_set* bs, int32_t slot) {
    int32_t kept = 0, intact = 0;
    for (int32_t k = 0; k < bs->count; k++) {
        hy_bond b = bs->bonds[k];
        if (b.a == slot || b.b == slot) continue;
        if (b.a > slot) b.a--;
        if (b.b > slot) b.b--;
        intact += !b.broken;
        bs->bonds[kept++] = b;
    }
    bs->count = kept;
    bs->intact = intact;
    bs->indexed = -1;
}

HY_API hy_status hy_object_remove(hy_world* w, hy_object_id id) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) {
        hy_error_prefix("hy_object_remove: ");
        return resolve_status(w, id);
    }
    int32_t slot = (int32_t)(o - w->objects);
    /* the id goes stale: its index is freed with a higher generation */
    hy_handle* h = &w->handles[id.index];
    h->slot = -1;
    h->generation = id.generation == UINT32_MAX ? 1 : id.generation + 1;
    h->next_free = w->free_handle;
    w->free_handle = (int32_t)id.index;
    remove_slot_bonds(&w->bonds, slot);
    hy_object_free(o);
    /* close the gap: the others keep their order and their ids */
    memmove(o, o + 1, sizeof *o * (size_t)(w->object_count - slot - 1));
    w->object_count--;
    memset(&w->objects[w->object_count], 0, sizeof *o);
    for (int32_t i = slot; i < w->object_count; i++) w->handles[w->objects[i].handle].slot = i;
    /* islands name slots, and what rested on the object may fall: wake all */
    for (int32_t i = 0; i < w->object_count; i++)
        if (w->objects[i].asleep) {
            w->objects[i].asleep = 0;
            w->objects[i].rest_steps = 0;
        }
    /* the collision state is laid out by slot: made again at the next step;
     * the cloth's kept contacts name slots too */
    hy_collision_state_destroy(w->collision);
    w->collision = NULL;
    w->last_contact_count = 0;
    hy_cloth_contacts_clear(w);
    return HY_OK;
}

HY_API hy_status hy_body_remove(hy_world* w, hy_body_id id) {
    hy_object* o = NULL;
    hy_status s = get_body(w, id, "hy_body_remove", &o);
    return s ? s : hy_object_remove(w, hy_body_object(id));
}

HY_API hy_status hy_cloth_remove(hy_world* w, hy_cloth_id id) {
    hy_object* o = NULL;
    hy_status s = resolve_kind(w, hy_cloth_object(id), HY_OBJECT_CLOTH, "hy_cloth_remove", &o);
    return s ? s : hy_object_remove(w, hy_cloth_object(id));
}

HY_API hy_status hy_obstacle_remove(hy_world* w, hy_obstacle_id id) {
    hy_object* o = NULL;
    hy_status s = resolve_kind(w, hy_obstacle_object(id), HY_OBJECT_OBSTACLE, "hy_obstacle_remove", &o);
    return s ? s : hy_object_remove(w, hy_obstacle_object(id));
}

HY_API hy_status hy_object_get_mesh(const hy_world* w, hy_object_id id, int32_t* vertex_count,
                                    int32_t* triangle_count, const int32_t** triangles) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return resolve_status(w, id);
    if (vertex_count) *vertex_count = o->nv;
    if (triangle_count) *triangle_count = o->nt;
    if (triangles) *triangles = o->tri;
    return HY_OK;
}

HY_API hy_status hy_object_get_tet_count(const hy_world* w, hy_object_id id, int32_t* out) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return resolve_status(w, id);
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_get_tet_count: out is NULL");
    *out = o->ops ? o->ops->tet_count(o) : 0;
    return HY_OK;
}

static hy_status copy_out(const hy_world* w, hy_object_id id, double* out, size_t capacity, int velocities) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return resolve_status(w, id);
    size_t need = 3 * (size_t)o->nv;
    if (!out || capacity < need)
        return hy_fail(HY_ERR_INVALID_ARG, "object '%s' needs room for %zu doubles, got %zu", o->name, need,
                       out ? capacity : 0);
    memcpy(out, velocities ? o->v : o->x, sizeof(double) * need);
    return HY_OK;
}

HY_API hy_status hy_object_get_positions(const hy_world* w, hy_object_id id, double* out, size_t capacity) {
    return copy_out(w, id, out, capacity, 0);
}

HY_API hy_status hy_object_get_velocities(const hy_world* w, hy_object_id id, double* out, size_t capacity) {
    return copy_out(w, id, out, capacity, 1);
}

HY_API hy_status hy_world_get_triangle_count(const hy_world* w, int32_t* out) {
    hy_status s = check_get(w, out, "hy_world_get_triangle_count");
    if (s) return s;
    int32_t n = 0;
    for (int32_t i = 0; i < w->object_count; i++) n += w->objects[i].nt;
    *out = n;
    return HY_OK;
}

HY_API hy_status hy_world_get_vertex_count(const hy_world* w, int32_t* out) {
    hy_status s = check_get(w, out, "hy_world_get_vertex_count");
    if (s) return s;
    int32_t n = 0;
    for (int32_t i = 0; i < w->object_count; i++) n += w->objects[i].nv;
    *out = n;
    return HY_OK;
}

HY_API hy_status hy_world_get_tet_counts(const hy_world* w, int32_t* tetrahedra, int32_t* particles) {
    hy_status s = check_get(w, tetrahedra, "hy_world_get_tet_counts");
    if (!s) s = check_get(w, particles, "hy_world_get_tet_counts");
    if (s) return s;
    *tetrahedra = *particles = 0;
    for (int32_t i = 0; i < w->object_count; i++) {
        const hy_object* o = &w->objects[i];
        if (!o->ops) continue;
        *tetrahedra += o->ops->tet_count(o);
        *particles += o->nv;
    }
    return HY_OK;
}

HY_API hy_status hy_world_get_thread_count(const hy_world* w, int32_t* out) {
    hy_status s = check_get(w, out, "hy_world_get_thread_count");
    if (!s) *out = hy_pool_size(w->pool);
    return s;
}

/* -------------------------------------------------------------- hash */

HY_API hy_status hy_world_hash(const hy_world* w, uint64_t* out) {
    hy_status s = check_get(w, out, "hy_world_hash");
    if (s) return s;
    uint64_t h = HY_FNV1A_INIT;
    for (int32_t i = 0; i < w->object_count; i++) {
        const hy_object* o = &w->objects[i];
        if (!o->alive) continue;
        h = hy_fnv1a(h, o->x, sizeof(double) * 3 * (size_t)o->nv);
        h = hy_fnv1a(h, o->v, sizeof(double) * 3 * (size_t)o->nv);
    }
    *out = h;
    return HY_OK;
}
