/* Whole-scene overlap checks (see check.h and hy_world_find_overlaps). */
#include "engine/check.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "engine/kinds.h"
#include "engine/links.h"
#include "engine/world.h"

/* Every live object's vertices and triangles as one list, with the world's
 * rules: cloth is tested against itself, two obstacles are not tested
 * against each other; margins are half thicknesses when clearance counts. */
static hy_status count_world(const hy_world* w, int clearance, int64_t* count, hy_tritri_hit* hits, int64_t cap) {
    int32_t no = w->object_count;
    int64_t nv = 0, nt = 0;
    for (int32_t i = 0; i < no; i++) {
        if (!w->objects[i].alive) continue;
        nv += w->objects[i].model.nv;
        nt += w->objects[i].model.nt;
    }
    if (nv > INT32_MAX || nt > INT32_MAX) return hy_fail(HY_ERR_NOMEM, "scene too large for the triangle check");
    double* x = malloc(sizeof(double) * 3 * ((size_t)nv + 1));
    int32_t* tri = malloc(sizeof(int32_t) * 3 * ((size_t)nt + 1));
    int32_t* tobj = malloc(sizeof(int32_t) * ((size_t)nt + 1));
    int32_t* tloc = malloc(sizeof(int32_t) * ((size_t)nt + 1));
    unsigned char* self = calloc((size_t)no + 1, 1);
    unsigned char* stat = calloc((size_t)no + 1, 1);
    double* margin = calloc((size_t)no + 1, sizeof(double));
    hy_status st = HY_OK;
    if (!x || !tri || !tobj || !tloc || !self || !stat || !margin) {
        st = hy_fail(HY_ERR_NOMEM, "out of memory for the triangle check of %lld triangles", (long long)nt);
    } else {
        int32_t voff = 0, toff = 0;
        for (int32_t i = 0; i < no; i++) {
            const hy_object* o = &w->objects[i];
            if (!o->alive) continue;
            memcpy(x + 3 * (size_t)voff, o->state->x, sizeof(double) * 3 * (size_t)o->model.nv);
            for (int32_t t = 0; t < o->model.nt; t++) {
                for (int k = 0; k < 3; k++) tri[3 * (size_t)(toff + t) + k] = o->model.tri[3 * t + k] + voff;
                tobj[toff + t] = i;
                tloc[toff + t] = t;
            }
            self[i] = (o->ops->view_flags & HY_VIEW_SELF) != 0;
            stat[i] = hy_object_has(o, HY_KIND_SCRIPTED);
            margin[i] = 0.5 * o->model.thickness;
            voff += o->model.nv;
            toff += o->model.nt;
        }
        int64_t *apart = NULL, apart_count = 0;
        st = hy_links_apart_copy(w, &apart, &apart_count);
        hy_tritri_scene sc = {x,    voff, tri, toff, tobj, tloc, no, self, stat, clearance ? margin : NULL,
                              apart, apart_count};
        if (!st) st = hy_tritri_count(&sc, count, hits, cap);
        free(apart);
    }
    free(x);
    free(tri);
    free(tobj);
    free(tloc);
    free(self);
    free(stat);
    free(margin);
    return st;
}

hy_status hy_tritri_count_world(const hy_world* w, int64_t* count, hy_tritri_hit* hits, int64_t hits_capacity) {
    if (!w || !count) return hy_fail(HY_ERR_INVALID_ARG, "hy_tritri_count_world: NULL argument");
    return count_world(w, 0, count, hits, hits_capacity);
}

HY_API hy_status hy_world_find_overlaps(const hy_world* w, hy_overlap_mode mode, hy_overlap* pairs, int64_t capacity,
                                        int64_t* count) {
    if (!w || !count || (capacity > 0 && !pairs) || capacity < 0)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_world_find_overlaps: NULL argument or negative capacity");
    if (mode != HY_OVERLAP_INTERSECTING && mode != HY_OVERLAP_CLEARANCE)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_world_find_overlaps: unknown mode %d", (int)mode);
    *count = 0;
    hy_tritri_hit* hits = NULL;
    if (capacity > 0) {
        hits = malloc(sizeof *hits * (size_t)capacity);
        if (!hits) return hy_fail(HY_ERR_NOMEM, "hy_world_find_overlaps: out of memory for %lld pairs",
                                  (long long)capacity);
    }
    hy_status st = count_world(w, mode == HY_OVERLAP_CLEARANCE, count, hits, capacity);
    int64_t n = *count < capacity ? *count : capacity;
    for (int64_t i = 0; !st && i < n; i++) {
        const hy_tritri_hit* h = &hits[i];
        hy_overlap* o = &pairs[i];
        o->a = hy_world_slot_id(w, h->object_a);
        o->b = hy_world_slot_id(w, h->object_b);
        o->triangle_a = h->triangle_a;
        o->triangle_b = h->triangle_b;
        o->distance = h->distance;
    }
    free(hits);
    return st;
}

void hy_overlap_describe(const hy_world* w, const hy_overlap* o, char* out, size_t size) {
    const hy_object* oa = hy_world_resolve(w, o->a);
    const hy_object* ob = hy_world_resolve(w, o->b);
    const char* na = oa ? oa->name : "?";
    const char* nb = ob ? ob->name : "?";
    if (o->distance > 0.0)
        snprintf(out, size, "'%s' triangle %d and '%s' triangle %d (%.3g m apart)", na, o->triangle_a, nb,
                 o->triangle_b, o->distance);
    else
        snprintf(out, size, "'%s' triangle %d and '%s' triangle %d (intersecting)", na, o->triangle_a, nb,
                 o->triangle_b);
}

hy_status hy_overlap_report(const hy_world* w, hy_overlap_mode mode, int listed, char* out, size_t size,
                            int64_t* triangle_pairs) {
    enum { KEEP = 4096 };
    if (size) out[0] = '\0';
    hy_overlap* o = malloc(sizeof *o * KEEP);
    if (!o) return hy_fail(HY_ERR_NOMEM, "out of memory for the overlap report");
    int64_t n = 0;
    hy_status st = hy_world_find_overlaps(w, mode, o, KEEP, &n);
    *triangle_pairs = st ? 0 : n;
    if (!st && n > 0) {
        size_t used = (size_t)snprintf(out, size, "%lld triangle pair%s", (long long)n, n == 1 ? "" : "s");
        int64_t kept = n < KEEP ? n : KEEP;
        int shown = 0, distinct = 0;
        for (int64_t i = 0; i < kept; i++) {
            int seen = 0; /* object pair met before (hits are grouped by first triangle, not by pair) */
            for (int64_t j = 0; j < i && !seen; j++)
                seen = o[j].a.index == o[i].a.index && o[j].b.index == o[i].b.index;
            if (seen) continue;
            distinct++;
            if (shown < listed && used < size) {
                char line[256];
                hy_overlap_describe(w, &o[i], line, sizeof line);
                used += (size_t)snprintf(out + used, size - used, "%s%s", shown ? "; " : ": ", line);
                shown++;
            }
        }
        if (distinct > shown && used < size)
            snprintf(out + used, size - used, "; and %d more object pair%s%s", distinct - shown,
                     distinct - shown == 1 ? "" : "s", n > KEEP ? " among the first 4096 triangle pairs" : "");
    }
    free(o);
    return st;
}

void hy_world_energy(const hy_world* w, double* kinetic, double* potential, double* mass) {
    const double* g = w->def.gravity;
    double k = 0.0, u = 0.0, total = 0.0;
    for (int32_t i = 0; i < w->object_count; i++) {
        const hy_object* o = &w->objects[i];
        if (!o->alive) continue;
        const hy_object_state* x = o->state;
        if (o->model.kind == HY_OBJECT_BODY) {
            if (x->kinematic) continue;
            double m = x->inertia.mass, I[9], I_inv[9];
            hy_rigid_world_inertia(&x->inertia, x->body.q, I, I_inv);
            k += 0.5 * m * v3_dot(x->body.v, x->body.v) + 0.5 * v3_dot(x->body.w, mat_mul_v3(I, x->body.w));
            if (o->model.gravity) u -= m * v3_dot(v3_load(g), x->body.x);
            total += m;
            continue;
        }
        const double* m = NULL;
        if (o->model.kind == HY_OBJECT_CLOTH) {
            m = hy_cloth_masses(o->model.cloth);
        } else if (o->model.kind == HY_OBJECT_FEM || o->model.kind == HY_OBJECT_MASS_SPRING) {
            void* model = NULL;
            m = hy_solid_ops(o, &model)->masses(model);
        }
        for (int32_t v = 0; m && v < o->model.nv; v++) {
            const double *p = x->x + 3 * v, *vel = x->v + 3 * v;
            k += 0.5 * m[v] * (vel[0] * vel[0] + vel[1] * vel[1] + vel[2] * vel[2]);
            u -= m[v] * (g[0] * p[0] + g[1] * p[1] + g[2] * p[2]);
            total += m[v];
        }
    }
    *kinetic = k;
    *potential = u;
    if (mass) *mass = total;
}
