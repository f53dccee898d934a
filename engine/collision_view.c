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

static hy_view_motion motion_of(const hy_object* o) {
    if (o->ops) return o->ops->motion;
    switch (o->kind) {
    case HY_OBJECT_CLOTH:
        return HY_MOVES_FREE;
    case HY_OBJECT_BODY:
        return HY_MOVES_RIGID;
    default:
        break;
    }
    return HY_MOVES_SCRIPTED;
}

/* The step's flags and names (names point into the object table, which
 * only moves when objects are added or removed). */
static void fill_flags(hy_world* w) {
    hy_scene_view* v = &w->view;
    for (int32_t i = 0; i < w->object_count; i++) {
        const hy_object* o = &w->objects[i];
        unsigned f = o->ops ? o->ops->view_flags : 0;
        if (o->kind == HY_OBJECT_CLOTH) f |= HY_VIEW_SELF;
        if (hy_object_is_driven(o)) f |= HY_VIEW_DRIVEN;
        if (hy_object_is_static(o)) f |= HY_VIEW_STATIC;
        if (o->kind == HY_OBJECT_OBSTACLE && !hy_object_is_static(o)) f |= HY_VIEW_MOVING;
        v->flags[i] = (unsigned char)f;
        v->name[i] = o->name;
    }
    v->apart = hy_links_apart(w, &v->apart_count);
}

/* The model part: layout, motion, geometry, masses, materials. */
static hy_status layout(hy_world* w) {
    int32_t no = w->object_count, nv = 0;
    for (int32_t i = 0; i < no; i++) nv += w->objects[i].nv;
    hy_scene_view* v = &w->view;
    hy_status s = hy_scene_view_layout(v, no, nv);
    if (s) return s;
    int32_t off = 0;
    for (int32_t i = 0; i < no; i++) {
        const hy_object* o = &w->objects[i];
        v->offset[i] = off;
        for (int32_t k = 0; k < o->nv; k++) v->vertex_object[off + k] = i;
        v->motion[i] = (unsigned char)motion_of(o);
        v->tri[i] = o->tri;
        v->tri_count[i] = o->nt;
        v->local[i] = o->local;
        v->thickness[i] = o->thickness;
        v->friction[i] = o->friction;
        v->restitution[i] = o->restitution;
        if (o->kind == HY_OBJECT_CLOTH) {
            memcpy(v->mass + off, hy_cloth_masses(o->cloth), sizeof(double) * (size_t)o->nv);
            memcpy(v->inv_mass + off, hy_cloth_inverse_masses(o->cloth), sizeof(double) * (size_t)o->nv);
        } else if (o->ops) {
            o->ops->view_masses(o, v->mass + off, v->inv_mass + off);
        }
        off += o->nv;
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

static void to_view(const hy_rigid_state* s, hy_view_body* b) {
    b->x = s->x;
    b->q = s->q;
    b->v = s->v;
    b->w = s->w;
}

void hy_world_view_begin(hy_world* w, double dt) {
    hy_scene_view* v = &w->view;
    fill_flags(w);
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        size_t off = 3 * (size_t)v->offset[i], n = 3 * (size_t)o->nv;
        memcpy(v->X0 + off, o->x, n * sizeof(double));
        memcpy(v->X1 + off, o->x1, n * sizeof(double));
        memcpy(v->V + off, o->v1, n * sizeof(double));
        if (o->kind == HY_OBJECT_BODY) {
            double I[9];
            to_view(&o->body, &v->body0[i]);
            to_view(&o->body1, &v->body1[i]);
            v->body_mass[i] = o->inertia.mass;
            v->body_inv_mass[i] = o->inertia.inv_mass;
            hy_rigid_world_inertia(&o->inertia, o->body.q, I, v->body_inv_inertia + 9 * i);
        } else if (o->kind == HY_OBJECT_OBSTACLE) {
            hy_obstacle_pose(o, w->time, &v->pose_x0[i], &v->pose_q0[i]);
            hy_obstacle_pose(o, w->time + dt, &v->pose_x1[i], &v->pose_q1[i]);
        }
    }
}

void hy_world_view_end(hy_world* w) {
    const hy_scene_view* v = &w->view;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (o->kind == HY_OBJECT_OBSTACLE) continue;
        size_t off = 3 * (size_t)v->offset[i], n = 3 * (size_t)o->nv;
        memcpy(o->x1, v->X1 + off, n * sizeof(double));
        memcpy(o->v1, v->V + off, n * sizeof(double));
        if (o->kind == HY_OBJECT_BODY) {
            const hy_view_body* b = &v->body1[i];
            o->body1.x = b->x;
            o->body1.q = b->q;
            o->body1.v = b->v;
            o->body1.w = b->w;
        }
    }
}

hy_status hy_world_detect(hy_world* w, const double* X0, const double* X1, hy_contact_list* out, hy_step_stats* st) {
    hy_status s = hy_world_collision_sync(w);
    if (!s) s = hy_world_ensure_prox(w);
    if (s) return s;
    fill_flags(w);
    return hy_collide_detect(w->collision, &w->view, w->prox, w->pool, X0, X1, out, st);
}

hy_status hy_world_calibrate(hy_world* w, const double* X0, const double* X1, int device, int repeats,
                             struct hy_calibration* out) {
    hy_status s = hy_world_collision_sync(w);
    if (!s) s = hy_world_ensure_prox(w);
    if (s) return s;
    fill_flags(w);
    return hy_collide_calibrate(w->collision, &w->view, w->prox, w->pool, X0, X1, device, repeats, out);
}
