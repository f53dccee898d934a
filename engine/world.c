/* The world: object table, defs, state read-back and hash. The step
 * pipeline is engine/step.c; each kind's add function and its own calls
 * are in its file (engine/kinds.h). */
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
#include "engine/integrate.h"
#include "engine/kinds.h"
#include "engine/links.h"
#include "engine/tools.h"
#include "sched/proximity.h"
#include "core/mesh.h"

/* ------------------------------------------------------------ helpers */

static int finite3(const double* p) { return isfinite(p[0]) && isfinite(p[1]) && isfinite(p[2]); }

hy_status hy_check_quat(const double q[4], const char* what, hy_quat* out) {
    double n2 = q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3];
    if (!isfinite(n2) || n2 < 1e-20)
        return hy_fail(HY_ERR_INVALID_ARG, "%s.orientation must be a non-zero finite quaternion", what);
    *out = quat_normalize((hy_quat){q[0], q[1], q[2], q[3]});
    return HY_OK;
}

hy_status hy_check_vec(const double* p, const char* what, const char* field) {
    if (!finite3(p)) return hy_fail(HY_ERR_INVALID_ARG, "%s.%s must be finite", what, field);
    return HY_OK;
}

hy_status hy_check_nonneg(double x, const char* what, const char* field) {
    if (!(x >= 0.0) || !isfinite(x))
        return hy_fail(HY_ERR_INVALID_ARG, "%s.%s must be >= 0 and finite, got %g", what, field, x);
    return HY_OK;
}

void hy_object_free(hy_object* o) {
    if (o->ops && o->ops->destroy) o->ops->destroy(o);
    free(o->model.tri);
    free(o->model.local);
    free(o->state);
    memset(o, 0, sizeof *o);
}

/* Reserve a slot, room for its id and the per-vertex arrays of a new
 * object (hy_world_commit_object then cannot fail). */
hy_status hy_world_new_object(hy_world* w, hy_object_kind kind, hy_mesh_view m, hy_object** out, int32_t* slot) {
    const hy_kind_ops* ops = hy_kind_ops_of(kind);
    if (!ops) return hy_fail(HY_ERR_INVALID_ARG, "object kind %d has no entry in the kinds table", (int)kind);
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
    o->model.kind = kind;
    o->ops = ops;
    o->model.nv = m.vertex_count;
    o->model.nt = m.triangle_count;
    size_t n3 = 3 * (size_t)m.vertex_count;
    o->model.tri = malloc(sizeof(int32_t) * 3 * (size_t)m.triangle_count);
    o->model.local = malloc(sizeof(double) * n3);
    o->state = calloc(1, hy_object_state_bytes(m.vertex_count));
    if (!o->model.tri || !o->model.local || !o->state) {
        hy_object_free(o);
        return hy_fail(HY_ERR_NOMEM, "out of memory for an object of %d vertices", m.vertex_count);
    }
    double* arrays = (double*)(o->state + 1);
    o->state->x = arrays;
    o->state->v = arrays + n3;
    o->state->x1 = arrays + 2 * n3;
    o->state->v1 = arrays + 3 * n3;
    memcpy(o->model.tri, m.triangles, sizeof(int32_t) * 3 * (size_t)m.triangle_count);
    memcpy(o->model.local, m.positions, sizeof(double) * n3);
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
    return ops ? ops->name : "unknown kind";
}

hy_status hy_world_resolve_kind(const hy_world* w, hy_object_id id, hy_object_kind kind, const char* what,
                              hy_object** out) {
    if (!w) return hy_fail(HY_ERR_INVALID_ARG, "%s: world is NULL", what);
    hy_object* o = hy_world_resolve(w, id);
    if (!o) {
        hy_error_prefix("%s: ", what);
        return HY_ERR_STALE_ID;
    }
    if (o->model.kind != kind)
        return hy_fail(HY_ERR_INVALID_ARG, "%s: object '%s' is a %s, not a %s", what, o->name, kind_name(o->model.kind),
                       kind_name(kind));
    *out = o;
    return HY_OK;
}

hy_status hy_world_resolve_status(const hy_world* w, hy_object_id id) {
    if (!w) return HY_ERR_INVALID_ARG;
    return id_live(w, id) ? HY_ERR_INVALID_ARG : HY_ERR_STALE_ID;
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
    d.bounce_speed = 0.1;
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
    if (!(d->rolling_resistance >= 0.0) || !isfinite(d->rolling_resistance))
        return hy_fail(HY_ERR_INVALID_ARG, "world.rolling_resistance must be >= 0 m, got %g", d->rolling_resistance);
    if (!(d->bounce_speed >= 0.0) || !isfinite(d->bounce_speed))
        return hy_fail(HY_ERR_INVALID_ARG, "world.bounce_speed must be >= 0 m/s, got %g", d->bounce_speed);
    if (!(d->rest_damping >= 0.0) || !isfinite(d->rest_damping))
        return hy_fail(HY_ERR_INVALID_ARG, "world.rest_damping must be >= 0 1/s, got %g", d->rest_damping);
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
    hy_integrator_destroy(w->integrator); /* before the collision trace it may write into */
    hy_prox_destroy(w->prox);
    free(w->last_contacts);
    free(w->sleep_parent);
    free(w->sleep_flag);
    free(w->sleep_box);
    hy_pool_destroy(w->pool);
    free(w);
}

HY_API hy_status hy_world_get_def(const hy_world* w, hy_world_def* out) {
    if (!w || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_get_def: NULL argument");
    *out = w->def;
    return HY_OK;
}

static hy_status check_get(const hy_world* w, const void* out, const char* what) {
    return w && out ? HY_OK : hy_fail(HY_ERR_INVALID_ARG, "%s: NULL argument", what);
}

HY_API hy_status hy_world_get_bond_count(const hy_world* w, int32_t* out) {
    hy_status s = check_get(w, out, "hy_world_get_bond_count");
    if (!s) *out = w->bonds.intact;
    return s;
}

/* -------------------------------------------------------- any object */

HY_API hy_status hy_object_get_kind(const hy_world* w, hy_object_id id, hy_object_kind* out) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return hy_world_resolve_status(w, id);
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_get_kind: out is NULL");
    *out = o->model.kind;
    return HY_OK;
}

HY_API hy_status hy_object_get_name(const hy_world* w, hy_object_id id, const char** out) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return hy_world_resolve_status(w, id);
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_get_name: out is NULL");
    *out = o->name;
    return HY_OK;
}

HY_API hy_status hy_object_set_name(hy_world* w, hy_object_id id, const char* name) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return hy_world_resolve_status(w, id);
    if (!name) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_set_name: name is NULL");
    snprintf(o->name, sizeof o->name, "%s", name);
    return HY_OK;
}

HY_API hy_status hy_object_get_thickness(const hy_world* w, hy_object_id id, double* out) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return hy_world_resolve_status(w, id);
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_get_thickness: out is NULL");
    *out = o->model.thickness;
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
    if (!o) return hy_world_resolve_status(w, id);
    o->user_data = user_data;
    return HY_OK;
}

HY_API hy_status hy_object_get_user_data(const hy_world* w, hy_object_id id, void** out) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return hy_world_resolve_status(w, id);
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_get_user_data: out is NULL");
    *out = o->user_data;
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
        return hy_world_resolve_status(w, id);
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
        if (w->objects[i].state->asleep) {
            w->objects[i].state->asleep = 0;
            w->objects[i].state->rest_steps = 0;
        }
    /* the collision state is laid out by slot: made again at the next step;
     * the cloth's kept contacts name slots too */
    hy_collision_state_destroy(w->collision);
    w->collision = NULL;
    w->last_contact_count = 0;
    hy_cloth_contacts_clear(w);
    return HY_OK;
}

HY_API hy_status hy_object_get_mesh(const hy_world* w, hy_object_id id, int32_t* vertex_count,
                                    int32_t* triangle_count, const int32_t** triangles) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return hy_world_resolve_status(w, id);
    if (vertex_count) *vertex_count = o->model.nv;
    if (triangle_count) *triangle_count = o->model.nt;
    if (triangles) *triangles = o->model.tri;
    return HY_OK;
}

HY_API hy_status hy_object_get_tet_count(const hy_world* w, hy_object_id id, int32_t* out) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return hy_world_resolve_status(w, id);
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_get_tet_count: out is NULL");
    *out = o->ops->tet_count ? o->ops->tet_count(o) : 0;
    return HY_OK;
}

static hy_status copy_out(const hy_world* w, hy_object_id id, double* out, size_t capacity, int velocities) {
    hy_object* o = hy_world_resolve(w, id);
    if (!o) return hy_world_resolve_status(w, id);
    size_t need = 3 * (size_t)o->model.nv;
    if (!out || capacity < need)
        return hy_fail(HY_ERR_INVALID_ARG, "object '%s' needs room for %zu doubles, got %zu", o->name, need,
                       out ? capacity : 0);
    memcpy(out, velocities ? o->state->v : o->state->x, sizeof(double) * need);
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
    for (int32_t i = 0; i < w->object_count; i++) n += w->objects[i].model.nt;
    *out = n;
    return HY_OK;
}

HY_API hy_status hy_world_get_vertex_count(const hy_world* w, int32_t* out) {
    hy_status s = check_get(w, out, "hy_world_get_vertex_count");
    if (s) return s;
    int32_t n = 0;
    for (int32_t i = 0; i < w->object_count; i++) n += w->objects[i].model.nv;
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
        if (!hy_object_has(o, HY_KIND_SOLID)) continue;
        *tetrahedra += o->ops->tet_count(o);
        *particles += o->model.nv;
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
        h = hy_fnv1a(h, o->state->x, sizeof(double) * 3 * (size_t)o->model.nv);
        h = hy_fnv1a(h, o->state->v, sizeof(double) * 3 * (size_t)o->model.nv);
    }
    *out = h;
    return HY_OK;
}

HY_API hy_status hy_world_get_transfer_bytes(const hy_world* w, int64_t* up, int64_t* down, int32_t capacity,
                                             int32_t* count) {
    if (!w) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_get_transfer_bytes: NULL world");
    int32_t n = w->prox ? hy_prox_resource_count(w->prox) : 0;
    const hy_prox_stats* ps = w->prox ? hy_prox_stats_get(w->prox) : NULL;
    for (int32_t i = 0; i < n && i < capacity; i++) {
        if (up) up[i] = ps->bytes_up[i];
        if (down) down[i] = ps->bytes_down[i];
    }
    if (count) *count = n;
    return HY_OK;
}
