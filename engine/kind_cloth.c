/* Cloth in the world, one entry of the kinds table (engine/kinds.h): a
 * triangle mesh of springs (solvers/cloth.h) stepped implicitly, every
 * vertex moving on its own, with its own vertices tested against each
 * other (self collision). The solve holds the vertices that rest on rigid
 * surfaces (engine/cloth_contact.c), so a cloth reads the end-of-step
 * positions of those surfaces: its integrate comes after theirs. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mesh.h"
#include "engine/cloth_contact.h"
#include "engine/kinds.h"

/* ------------------------------------------------------------ operations */

static hy_status cloth_integrate(const hy_world* w, hy_object* o, hy_pool* pool, double dt, hy_step_stats* st) {
    hy_cloth_constraint* cons = NULL;
    int32_t count = 0;
    hy_status s = w->def.collisions ? hy_cloth_contacts_build(w, o, dt, &cons, &count) : HY_OK;
    hy_cloth_solve_stats cs = {0, 0.0};
    hy_object_state* x = o->state;
    if (!s)
        s = hy_cloth_solve_constrained(o->model.cloth, pool, x->x, x->v, dt, w->def.gravity,
                                       w->def.cg_max_iterations, w->def.cg_tolerance, cons, count, x->x1, x->v1, &cs);
    if (s) {
        hy_error_prefix("object '%s': ", o->name);
        return s;
    }
    hy_stats_add_solve(st, cs.cg_iterations, cs.cg_relative_residual,
                       !(cs.cg_relative_residual <= w->def.cg_tolerance));
    return HY_OK;
}

static void cloth_view_masses(const hy_object* o, double* mass, double* inv_mass) {
    memcpy(mass, hy_cloth_masses(o->model.cloth), sizeof(double) * (size_t)o->model.nv);
    memcpy(inv_mass, hy_cloth_inverse_masses(o->model.cloth), sizeof(double) * (size_t)o->model.nv);
}

static void cloth_destroy(hy_object* o) {
    hy_cloth_model_destroy(o->model.cloth);
    o->model.cloth = NULL;
    if (!o->state) return;
    free(o->state->rest_face);
    free(o->state->cons);
    o->state->rest_face = NULL;
    o->state->cons = NULL;
}

/* In a snapshot after the vertices: whether it keeps rest features, then
 * those (hy_cloth_contacts_state_ints values). */
static void cloth_snap_save(const hy_object* o, hy_snap_cursor* c) {
    int32_t kept = o->state->rest_face != NULL;
    hy_snap_put(c, &kept, sizeof kept);
    if (kept) hy_snap_put(c, o->state->rest_face, sizeof(int32_t) * (size_t)hy_cloth_contacts_state_ints(o));
}

static int cloth_snap_check(const hy_object* o, hy_snap_cursor* c) {
    int32_t kept = 0;
    return hy_snap_get(c, &kept, sizeof kept) && (kept == 0 || kept == 1) &&
           (!kept || hy_snap_skip(c, sizeof(int32_t) * (size_t)hy_cloth_contacts_state_ints(o)));
}

static void cloth_snap_load(hy_object* o, hy_snap_cursor* c) {
    int32_t kept = 0;
    hy_snap_get(c, &kept, sizeof kept);
    size_t n = sizeof(int32_t) * (size_t)hy_cloth_contacts_state_ints(o);
    if (kept) hy_snap_get(c, o->state->rest_face, n); /* reserved by snap_prepare */
    else hy_cloth_contacts_forget(o);
}

static hy_status cloth_set_device(hy_object* o, int device) { return hy_cloth_set_device(o->model.cloth, device); }

static int64_t cloth_gpu_bytes(const hy_object* o) {
    int64_t up = 0, down = 0;
    hy_cloth_transfer_bytes(o->model.cloth, &up, &down);
    return up + down;
}

const hy_kind_ops hy_kind_cloth = {
    .kind = HY_OBJECT_CLOTH,
    .name = "cloth",
    .motion = HY_MOVES_FREE,
    .view_flags = HY_VIEW_SELF,
    .order = HY_ORDER_CLOTH,
    .integrate = cloth_integrate,
    .set_device = cloth_set_device,
    .gpu_bytes = cloth_gpu_bytes,
    .view_masses = cloth_view_masses,
    .destroy = cloth_destroy,
    .snap_save = cloth_snap_save,
    .snap_check = cloth_snap_check,
    .snap_prepare = hy_cloth_contacts_reserve,
    .snap_load = cloth_snap_load,
};

/* ------------------------------------------------------------ public API */


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
    if (!s) s = hy_check_quat(d->orientation, "cloth", &q);
    if (!s) s = hy_check_vec(d->position, "cloth", "position");
    if (!s && (!(d->density > 0.0) || !isfinite(d->density)))
        s = hy_fail(HY_ERR_INVALID_ARG, "cloth.density must be > 0, got %g", d->density);
    if (!s) s = hy_check_nonneg(d->stretch_stiffness, "cloth", "stretch_stiffness");
    if (!s) s = hy_check_nonneg(d->shear_stiffness, "cloth", "shear_stiffness");
    if (!s) s = hy_check_nonneg(d->bend_stiffness, "cloth", "bend_stiffness");
    if (!s) s = hy_check_nonneg(d->damping, "cloth", "damping");
    if (!s) s = hy_check_nonneg(d->air_damping, "cloth", "air_damping");
    if (!s) s = hy_check_nonneg(d->thickness, "cloth", "thickness");
    if (!s) s = hy_check_nonneg(d->friction, "cloth", "friction");
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
    for (int32_t i = 0; i < o->model.nv; i++) v3_store(o->state->x + 3 * i, v3_add(p, quat_rotate(q, v3_load(o->model.local + 3 * i))));
    hy_cloth_params cp = {d->density, d->stretch_stiffness, d->shear_stiffness, d->bend_stiffness, d->damping,
                          d->air_damping};
    s = hy_cloth_model_create(o->state->x, o->model.nv, o->model.tri, o->model.nt, &cp, d->pinned, d->pinned_count, &o->model.cloth);
    if (s) {
        hy_object_free(o);
        return s;
    }
    o->model.thickness = d->thickness;
    o->model.friction = d->friction;
    memcpy(o->state->x1, o->state->x, sizeof(double) * 3 * (size_t)o->model.nv);
    hy_object_id id = hy_world_commit_object(w, slot, "cloth");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}

HY_API hy_status hy_cloth_remove(hy_world* w, hy_cloth_id id) {
    hy_object* o = NULL;
    hy_status s = hy_world_resolve_kind(w, hy_cloth_object(id), HY_OBJECT_CLOTH, "hy_cloth_remove", &o);
    return s ? s : hy_object_remove(w, hy_cloth_object(id));
}

HY_API hy_status hy_object_as_cloth(const hy_world* w, hy_object_id id, hy_cloth_id* out) {
    hy_object* o = NULL;
    hy_status s = hy_world_resolve_kind(w, id, HY_OBJECT_CLOTH, "hy_object_as_cloth", &o);
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_as_cloth: out is NULL");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}
