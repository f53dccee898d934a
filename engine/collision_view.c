/* The world's side of the scene view (collision/scene_view.h): what
 * collision may know of the objects, laid out when they change and filled
 * before each response, and the response's corrected motion taken back.
 * An object's kind reaches collision here only, as the way its vertices
 * move and as data (masses, thickness, flags). */
#include <string.h>

#include "collision/collide.h"
#include "core/error.h"
#include "engine/kinds.h"
#include "engine/links.h"
#include "engine/tools.h"
#include "engine/world.h"

/* The step's flags and names (names point into the object table, which
 * only moves when objects are added or removed). */
static void fill_flags(hy_world* w) {
    hy_scene_view* v = &w->view;
    for (int32_t i = 0; i < w->object_count; i++) {
        const hy_object* o = &w->objects[i];
        unsigned f = o->ops->view_flags;
        int fixed = hy_object_is_static(o);
        if (hy_object_is_driven(o)) f |= HY_VIEW_DRIVEN;
        if (fixed) f |= HY_VIEW_STATIC;
        if (hy_object_has(o, HY_KIND_SCRIPTED) && !fixed) f |= HY_VIEW_MOVING;
        v->flags[i] = (unsigned char)f;
        v->name[i] = o->name;
    }
    v->apart = hy_links_apart(w, &v->apart_count);
}

/* The model part: layout, motion, geometry, masses, materials. */
static hy_status layout(hy_world* w) {
    int32_t no = w->object_count, nv = 0;
    for (int32_t i = 0; i < no; i++) nv += w->objects[i].model.nv;
    hy_scene_view* v = &w->view;
    hy_status s = hy_scene_view_layout(v, no, nv);
    if (s) return s;
    int32_t off = 0;
    for (int32_t i = 0; i < no; i++) {
        const hy_object* o = &w->objects[i];
        v->offset[i] = off;
        for (int32_t k = 0; k < o->model.nv; k++) v->vertex_object[off + k] = i;
        v->motion[i] = (unsigned char)o->ops->motion;
        v->tri[i] = o->model.tri;
        v->tri_count[i] = o->model.nt;
        v->local[i] = o->model.local;
        v->thickness[i] = o->model.thickness;
        v->friction[i] = o->model.friction;
        v->restitution[i] = o->model.restitution;
        if (o->ops->view_masses) o->ops->view_masses(o, v->mass + off, v->inv_mass + off);
        off += o->model.nv;
    }
    v->offset[no] = off;
    fill_flags(w);
    return HY_OK;
}

hy_status hy_world_collision_sync(hy_world* w) {
    if (!w) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_collision_sync: world is NULL");
    if (w->collision && w->collision->object_count == w->object_count && w->view.object_count == w->object_count)
        return HY_OK;
    hy_collision_state_destroy(w->collision);
    w->collision = NULL;
    hy_status s = layout(w);
    return s ? s : hy_collision_state_sync(&w->collision, &w->view);
}

void hy_world_view_begin(hy_world* w, double dt) {
    hy_scene_view* v = &w->view;
    fill_flags(w);
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        size_t off = 3 * (size_t)v->offset[i], n = 3 * (size_t)o->model.nv;
        memcpy(v->X0 + off, o->state->x, n * sizeof(double));
        memcpy(v->X1 + off, o->state->x1, n * sizeof(double));
        memcpy(v->V + off, o->state->v1, n * sizeof(double));
        if (o->ops->view_begin) o->ops->view_begin(o, i, w->time, dt, v);
    }
}

void hy_world_view_end(hy_world* w) {
    const hy_scene_view* v = &w->view;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (hy_object_has(o, HY_KIND_SCRIPTED)) continue;
        size_t off = 3 * (size_t)v->offset[i], n = 3 * (size_t)o->model.nv;
        memcpy(o->state->x1, v->X1 + off, n * sizeof(double));
        memcpy(o->state->v1, v->V + off, n * sizeof(double));
        if (o->ops->view_end) o->ops->view_end(o, i, v);
    }
}

hy_status hy_world_detect(hy_world* w, const double* X0, const double* X1, int carry, hy_contact_list* out,
                          hy_step_stats* st) {
    hy_status s = hy_world_collision_sync(w);
    if (!s) s = hy_world_ensure_prox(w);
    if (s) return s;
    fill_flags(w);
    return hy_collide_detect(w->collision, &w->view, w->prox, w->pool, X0, X1, carry, out, st);
}

hy_status hy_world_calibrate(hy_world* w, const double* X0, const double* X1, int device, int repeats,
                             struct hy_calibration* out) {
    hy_status s = hy_world_collision_sync(w);
    if (!s) s = hy_world_ensure_prox(w);
    if (s) return s;
    fill_flags(w);
    return hy_collide_calibrate(w->collision, &w->view, w->prox, w->pool, X0, X1, device, repeats, out);
}
