#include "engine/cloth_contact.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "collision/closest.h"
#include "collision/collide.h"
#include "collision/response.h"
#include "core/error.h"

/* Per cloth vertex, FEATURES features of 4 int32: the surface's object
 * slot (-1: none) and the touched feature's vertices, local to that object:
 * a face (three), an edge (two, then -1) or a vertex (one, then -1, -1). A
 * vertex on a faceted surface touches the next facet or edge as it slides,
 * so it holds up to FEATURES of them at once. */
enum { FEATURE_INTS = 4, FEATURES = 3, VERTEX_INTS = FEATURE_INTS * FEATURES };

/* A vertex's first slot while its constraint pulled in the last solve. */
#define LIFTING INT32_MIN

/* A held vertex ends its step at the thickness, where detection may or may
 * not report it; it keeps its feature while it ends within KEEP_DISTANCE
 * thicknesses of it and the constraint pushed (did not pull), so that a
 * resting vertex is not let go and caught again on alternate steps. */
#define KEEP_DISTANCE 1.5
/* Features further than this many thicknesses at the start of a step hold
 * nothing: the vertex falls onto them on its own. Holding from further up
 * kept a cloth draped on a static ball from settling (rms speed after 4 s
 * 0.03-0.05 m/s from 1.3 thicknesses up, 0.009 from 1.2, test_response):
 * a held vertex above its rest height is asked to come down, and each
 * time that asks more than it would do (its constraint pulls) it is let
 * go and caught again. */
#define HOLD_DISTANCE 1.2
/* Held vertices aim at (1 + HOLD_MARGIN) thicknesses from their features. */
#define HOLD_MARGIN 0.05

hy_status hy_cloth_contacts_reserve(hy_object* o) {
    if (o->state->rest_face) return HY_OK;
    size_t nv = (size_t)(o->model.nv > 0 ? o->model.nv : 1);
    o->state->rest_face = malloc(sizeof *o->state->rest_face * VERTEX_INTS * nv);
    o->state->cons = malloc(sizeof *o->state->cons * FEATURES * (size_t)(o->model.nv > 0 ? o->model.nv : 1));
    if (!o->state->rest_face || !o->state->cons) {
        free(o->state->rest_face);
        free(o->state->cons);
        o->state->rest_face = NULL;
        o->state->cons = NULL;
        return hy_fail(HY_ERR_NOMEM, "cloth '%s': out of memory for %d contact constraints", o->name, o->model.nv);
    }
    for (int32_t k = 0; k < o->model.nv * FEATURES; k++) o->state->rest_face[FEATURE_INTS * k] = -1;
    o->state->cons_count = 0;
    return HY_OK;
}

/* Weights of the point of feature p[0..n-1] (n = 1, 2, 3) closest to x. */
static void closest_weights(hy_v3 x, const hy_v3* p, int n, double wt[3]) {
    wt[0] = 1.0;
    wt[1] = wt[2] = 0.0;
    if (n == 3) {
        hy_closest_on_triangle(x, p[0], p[1], p[2], &wt[0], &wt[1], &wt[2]);
    } else if (n == 2) {
        hy_v3 e = v3_sub(p[1], p[0]);
        double ee = v3_dot(e, e);
        double t = ee > 0 ? hy_clamp01(v3_dot(v3_sub(x, p[0]), e) / ee) : 0.0;
        wt[0] = 1.0 - t;
        wt[1] = t;
    }
}

/* The feature's surface object if the slot and its vertices still name a
 * rigid object's vertices (objects may have been removed or replaced), and
 * its vertex count in *n. */
static const hy_object* feature_object(const hy_world* w, const int32_t* f, int* n) {
    if (f[0] < 0 || f[0] >= w->object_count) return NULL;
    const hy_object* s = &w->objects[f[0]];
    if (!s->alive || s->model.kind == HY_OBJECT_CLOTH) return NULL;
    *n = 0;
    for (int q = 1; q <= 3 && f[q] >= 0; q++) {
        if (f[q] >= s->model.nv) return NULL;
        (*n)++;
    }
    return *n > 0 ? s : NULL;
}

hy_status hy_cloth_contacts_build(const hy_world* w, hy_object* o, double dt, hy_cloth_constraint** cons,
                                  int32_t* count) {
    *cons = NULL;
    *count = 0;
    hy_status s = hy_cloth_contacts_reserve(o);
    if (s) return s;
    const double separation = hy_response_params_default().separation;
    int32_t n = 0;
    for (int32_t slot = 0; slot < o->model.nv * FEATURES; slot++) {
        int32_t k = slot / FEATURES;
        const int32_t* f = o->state->rest_face + FEATURE_INTS * slot;
        int fn = 0;
        const hy_object* s_obj = feature_object(w, f, &fn);
        if (!s_obj) continue;
        hy_v3 x = v3_load(o->state->x + 3 * k), p0[3], p1[3];
        for (int q = 0; q < fn; q++) {
            p0[q] = v3_load(s_obj->state->x + 3 * f[1 + q]);
            p1[q] = v3_load(s_obj->state->x1 + 3 * f[1 + q]);
        }
        double wt[3];
        closest_weights(x, p0, fn, wt);
        hy_v3 on = v3(0, 0, 0), u = v3(0, 0, 0);
        for (int q = 0; q < fn; q++) {
            on = v3_mad(on, p0[q], wt[q]);
            u = v3_mad(u, v3_sub(p1[q], p0[q]), wt[q] / dt);
        }
        hy_v3 sep = v3_sub(x, on);
        double d = v3_len(sep), thickness = fmax(o->model.thickness, s_obj->model.thickness);
        /* too far to rest on it, or on it exactly (no normal) */
        if (!(d > 1e-3 * thickness) || d > HOLD_DISTANCE * thickness) continue;
        hy_v3 nrm = v3_scale(sep, 1.0 / d);
        /* end the step at the thickness and a margin: all the way from
         * above, the response's fraction of the way from below. The margin
         * covers what the constraint cannot see (the penalty's slack, the
         * response's normal taken at the time of impact) so that the
         * response finds the pair met */
        double gap = (1.0 + HOLD_MARGIN) * thickness - d;
        hy_cloth_constraint* c = &o->state->cons[n++];
        c->vertex = k;
        c->normal[0] = nrm.x;
        c->normal[1] = nrm.y;
        c->normal[2] = nrm.z;
        /* from above, never faster than gravity alone would bring it: a
         * constraint that pulls the vertex down is one it should not have */
        double approach = gap / dt;
        if (gap < 0) {
            hy_v3 g = v3(w->def.gravity[0], w->def.gravity[1], w->def.gravity[2]);
            double free_fall = v3_dot(nrm, v3_sub(v3_load(o->state->v + 3 * k), u)) + dt * fmin(v3_dot(nrm, g), 0.0);
            approach = fmax(approach, free_fall);
        }
        c->normal_velocity = v3_dot(nrm, u) + (gap > 0 ? separation * gap / dt : approach);
        c->surface_velocity[0] = u.x;
        c->surface_velocity[1] = u.y;
        c->surface_velocity[2] = u.z;
        c->friction = fmax(o->model.friction, s_obj->model.friction);
        c->impulse = 0.0;
        c->tag = slot;
    }
    o->state->cons_count = n;
    *cons = o->state->cons;
    *count = n;
    return HY_OK;
}

/* Distance at the end of the step from global vertex g to the feature of
 * global vertices v[0..n-1], over the scene view's X1. */
static double end_distance(const hy_scene_view* view, int32_t g, const int32_t* v, int n) {
    hy_v3 x = v3_load(view->X1 + 3 * g), p[3];
    for (int q = 0; q < n; q++) p[q] = v3_load(view->X1 + 3 * v[q]);
    double wt[3];
    closest_weights(x, p, n, wt);
    hy_v3 on = v3(0, 0, 0);
    for (int q = 0; q < n; q++) on = v3_mad(on, p[q], wt[q]);
    return v3_len(v3_sub(x, on));
}

/* Global vertices of a kept feature. */
static int feature_globals(const hy_scene_view* view, const int32_t* f, int32_t* v) {
    int n = 0;
    for (int q = 1; q <= 3 && f[q] >= 0; q++) v[n++] = view->offset[f[0]] + f[q];
    return n;
}

/* Offer feature v[0..n-1] of rigid object si to cloth vertex g (global):
 * taken if it is not held already and a slot is free or holds a farther
 * one (distances at the end of the step). */
static void offer(const hy_world* w, int32_t g, const int32_t* v, int n, int32_t si) {
    const hy_scene_view* view = &w->view;
    int32_t ci = view->vertex_object[g];
    hy_object* o = &w->objects[ci];
    if (!o->state->rest_face) return;
    int32_t* fv = o->state->rest_face + VERTEX_INTS * (g - view->offset[ci]);
    if (fv[0] == LIFTING) return;
    int32_t loc[3] = {-1, -1, -1};
    for (int q = 0; q < n; q++) loc[q] = v[q] - view->offset[si];
    int worst = -1;
    double d = end_distance(view, g, v, n), worst_d = d;
    for (int j = 0; j < FEATURES; j++) {
        int32_t* f = fv + FEATURE_INTS * j;
        if (f[0] < 0) {
            if (worst < 0 || worst_d < INFINITY) worst = j, worst_d = INFINITY;
            continue;
        }
        if (f[0] == si && f[1] == loc[0] && f[2] == loc[1] && f[3] == loc[2]) return;
        int32_t kept[3];
        double kd = end_distance(view, g, kept, feature_globals(view, f, kept));
        if (kd > worst_d) worst = j, worst_d = kd;
    }
    if (worst < 0) return;
    int32_t* f = fv + FEATURE_INTS * worst;
    f[0] = si;
    for (int q = 0; q < 3; q++) f[1 + q] = loc[q];
}

void hy_cloth_contacts_record(hy_world* w) {
    const hy_collision_state* state = w->collision;
    const hy_scene_view* view = &w->view;
    if (!state || state->object_count != w->object_count) {
        hy_cloth_contacts_clear(w);
        return;
    }
    int any = 0;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (!o->alive || o->model.kind != HY_OBJECT_CLOTH) continue;
        if (hy_cloth_contacts_reserve(o)) {
            hy_error_clear(); /* no constraints: the response alone keeps the cloth out */
            continue;
        }
        any = 1;
        /* the old features become pending (slot s -> -2 - s); those whose
         * constraint pushed and that end near their vertex are kept */
        for (int32_t k = 0; k < o->model.nv * FEATURES; k++) {
            int32_t* f = o->state->rest_face + FEATURE_INTS * k;
            f[0] = f[0] >= 0 ? -2 - f[0] : -1;
        }
        int32_t off = view->offset[i];
        for (int32_t j = 0; j < o->state->cons_count; j++) {
            const hy_cloth_constraint* c = &o->state->cons[j];
            int32_t* f = o->state->rest_face + FEATURE_INTS * c->tag;
            if (!(c->impulse > 0) || f[0] > -2) continue;
            f[0] = -2 - f[0];
            int fn = 0;
            const hy_object* s_obj = feature_object(w, f, &fn);
            int32_t v[3];
            if (s_obj && end_distance(view, off + c->vertex, v, feature_globals(view, f, v)) <=
                             KEEP_DISTANCE * fmax(o->model.thickness, s_obj->model.thickness))
                continue;
            f[0] = -2 - f[0];
        }
        for (int32_t k = 0; k < o->model.nv * FEATURES; k++)
            if (o->state->rest_face[FEATURE_INTS * k] < -1) o->state->rest_face[FEATURE_INTS * k] = -1;
        /* a vertex its constraints held back in sum lifts off: nothing is
         * offered to it in this step (one feature of several may pull
         * while the vertex rests: that feature alone is let go above).
         * A vertex's constraints are consecutive (built in slot order). */
        for (int32_t j = 0; j < o->state->cons_count;) {
            int32_t v = o->state->cons[j].vertex;
            double sum = 0.0;
            for (; j < o->state->cons_count && o->state->cons[j].vertex == v; j++) sum += o->state->cons[j].impulse;
            if (sum < 0) o->state->rest_face[VERTEX_INTS * v] = LIFTING;
        }
    }
    if (!any) return;
    /* Every contact between cloth and one rigid object offers the rigid
     * side's feature (face, edge or vertex) to each of its cloth vertices,
     * in the canonical contact order. */
    const hy_contact_list* l = &state->contacts;
    for (int64_t j = 0; j < l->count; j++) {
        const hy_contact* c = &l->items[j];
        int split = c->type == HY_CONTACT_VF ? 1 : 2;
        int32_t side[2] = {view->vertex_object[c->v[0]], view->vertex_object[c->v[split]]};
        int ok = 1;
        for (int q = 0; q < 4; q++) ok &= view->vertex_object[c->v[q]] == side[q >= split];
        if (!ok) continue;
        for (int s = 0; s < 2; s++) {
            const hy_object* cloth = &w->objects[side[s]];
            const hy_object* rigid = &w->objects[side[1 - s]];
            if (cloth->model.kind != HY_OBJECT_CLOTH || rigid->model.kind == HY_OBJECT_CLOTH) continue;
            int32_t rv[3];
            int rn = 0;
            for (int q = 0; q < 4; q++)
                if ((q >= split) != s) rv[rn++] = c->v[q];
            for (int q = 0; q < 4; q++)
                if ((q >= split) == s) offer(w, c->v[q], rv, rn, side[1 - s]);
        }
    }
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (!o->alive || o->model.kind != HY_OBJECT_CLOTH || !o->state->rest_face) continue;
        for (int32_t k = 0; k < o->model.nv; k++)
            if (o->state->rest_face[VERTEX_INTS * k] == LIFTING) o->state->rest_face[VERTEX_INTS * k] = -1;
    }
}

void hy_cloth_contacts_forget(hy_object* o) {
    if (o->state->rest_face)
        for (int32_t k = 0; k < o->model.nv * FEATURES; k++) o->state->rest_face[FEATURE_INTS * k] = -1;
    o->state->cons_count = 0;
}

void hy_cloth_contacts_clear(hy_world* w) {
    for (int32_t i = 0; i < w->object_count; i++) hy_cloth_contacts_forget(&w->objects[i]);
}

int64_t hy_cloth_contacts_state_ints(const hy_object* o) { return (int64_t)VERTEX_INTS * o->model.nv; }
