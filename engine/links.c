/* Interactions between solids in the world (engine/links.h). */
#include "engine/links.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "engine/kinds.h"
#include "solvers/interaction.h"

enum { LINK_ATTACH = 0, LINK_CONTACT = 1 };

/* One item: the pairs between a vertex side A and a point side B. */
typedef struct link {
    hy_object_id a, b;
    int32_t kind;
    int32_t count, cap;
    hy_interaction_pair* pair;
} link;

struct hy_links {
    link* items;
    int32_t count, cap;
    int contacts_off;
    /* the step's groups (hy_links_prepare), read by their solves: per
     * object slot its group (-1: it steps alone) and its index within the
     * group; per group its member slots (in slot order) and its links (in
     * link order), from member_start[g] and link_start[g] */
    int32_t* parent;
    int32_t* local;
    int32_t* size;
    int32_t* group_of;
    int32_t* member;
    int32_t* member_start; /* slot_cap + 1 */
    int32_t* link_start;   /* slot_cap + 1 */
    int32_t slot_cap;
    int32_t group_count;
    int32_t* group_link;
    int32_t group_link_cap;
    /* the response's work: candidate velocities of the solids, in slot
     * order, and what the last response did */
    double* v_pred;
    int64_t v_cap;
    double impulse;
    int64_t corrected;
    /* attached slot pairs (hy_links_apart) */
    int64_t* apart;
    int64_t apart_count, apart_cap;
};

/* A contact pair's stiffness per unit vertex mass, in units of 1/dt^2
 * (see update_contacts). */
#define CONTACT_STIFFNESS_SCALE 1.0

static int is_solid(const hy_object* o) {
    return o && o->alive && (o->model.kind == HY_OBJECT_FEM || o->model.kind == HY_OBJECT_MASS_SPRING);
}

/* The object an id names, or NULL when it is stale (no message: a link
 * whose object went is dropped quietly). */
static hy_object* live(const hy_world* w, hy_object_id id) {
    if (id.generation == 0 || id.index >= (uint32_t)w->handle_count) return NULL;
    const hy_handle* h = &w->handles[id.index];
    return h->slot >= 0 && h->generation == id.generation ? &w->objects[h->slot] : NULL;
}

static int32_t slot_of(const hy_world* w, hy_object_id id) { return w->handles[id.index].slot; }

static hy_links* links_of(hy_world* w) {
    if (!w->links) w->links = calloc(1, sizeof *w->links);
    return w->links;
}

void hy_links_free(hy_world* w) {
    hy_links* l = w->links;
    if (!l) return;
    for (int32_t i = 0; i < l->count; i++) free(l->items[i].pair);
    free(l->items);
    free(l->parent);
    free(l->local);
    free(l->size);
    free(l->group_of);
    free(l->member);
    free(l->member_start);
    free(l->link_start);
    free(l->group_link);
    free(l->v_pred);
    free(l->apart);
    free(l);
    w->links = NULL;
}

static link* new_link(hy_links* l, hy_object_id a, hy_object_id b, int32_t kind) {
    if (l->count == l->cap) {
        int32_t n = l->cap ? 2 * l->cap : 16;
        link* p = realloc(l->items, (size_t)n * sizeof *p);
        if (!p) return NULL;
        l->items = p, l->cap = n;
    }
    link* k = &l->items[l->count++];
    memset(k, 0, sizeof *k);
    k->a = a, k->b = b, k->kind = kind;
    return k;
}

static int reserve_pairs(link* k, int32_t need) {
    if (need <= k->cap) return 1;
    int32_t n = k->cap ? k->cap : 8;
    while (n < need) n *= 2;
    hy_interaction_pair* p = realloc(k->pair, (size_t)n * sizeof *p);
    if (!p) return 0;
    k->pair = p, k->cap = n;
    return 1;
}

/* Both ids live solids and distinct; their objects in *oa, *ob. */
static hy_status two_solids(hy_world* w, hy_object_id a, hy_object_id b, const char* who, hy_object** oa,
                            hy_object** ob) {
    if (!w) return hy_fail(HY_ERR_INVALID_ARG, "%s: world is NULL", who);
    *oa = hy_world_resolve(w, a);
    *ob = *oa ? hy_world_resolve(w, b) : NULL;
    if (!*oa || !*ob) {
        hy_error_prefix("%s: ", who);
        return HY_ERR_STALE_ID;
    }
    if (*oa == *ob) return hy_fail(HY_ERR_INVALID_ARG, "%s: object '%s' cannot be attached to itself", who, (*oa)->name);
    for (int s = 0; s < 2; s++) {
        const hy_object* o = s ? *ob : *oa;
        if (!is_solid(o))
            return hy_fail(HY_ERR_INVALID_ARG, "%s: object '%s' is not a FEM or mass-spring solid", who, o->name);
    }
    return HY_OK;
}

static hy_status keep_attachment(hy_world* w, hy_object_id a, hy_object_id b, const hy_interaction_pair* pairs,
                                 int32_t count, const char* who) {
    hy_links* l = links_of(w);
    link* k = l ? new_link(l, a, b, LINK_ATTACH) : NULL;
    if (!k || !reserve_pairs(k, count)) {
        if (k) l->count--;
        return hy_fail(HY_ERR_NOMEM, "%s: out of memory for %d pairs", who, count);
    }
    memcpy(k->pair, pairs, (size_t)count * sizeof *pairs);
    k->count = count;
    return HY_OK;
}

hy_status hy_links_attach_coincident(hy_world* w, hy_object_id a, hy_object_id b, double tolerance, double stiffness,
                                     int32_t* pair_count) {
    static const char who[] = "attach";
    hy_object *oa, *ob;
    hy_status s = two_solids(w, a, b, who, &oa, &ob);
    if (s) return s;
    if (!(tolerance >= 0.0) || !isfinite(tolerance) || !(stiffness > 0.0) || !isfinite(stiffness))
        return hy_fail(HY_ERR_INVALID_ARG,
                       "attach '%s' to '%s': tolerance must be >= 0 m and stiffness > 0 N/m, got %g and %g", ob->name,
                       oa->name, tolerance, stiffness);
    hy_interaction_pair* pairs = NULL;
    int32_t n = 0;
    s = hy_interaction_attach_coincident(oa->state->x, oa->model.nv, ob->state->x, ob->model.nv, tolerance, stiffness, &pairs, &n);
    if (!s && n == 0)
        s = hy_fail(HY_ERR_INVALID_ARG, "attach '%s' to '%s': no vertices within %g m of each other", ob->name,
                    oa->name, tolerance);
    if (!s) s = keep_attachment(w, a, b, pairs, n, who);
    hy_mem_free(pairs);
    if (!s && pair_count) *pair_count = n;
    return s;
}

HY_API hy_status hy_solid_attach(hy_world* w, hy_solid_id a, hy_solid_id b, double tolerance, double stiffness,
                                 int32_t* pair_count) {
    hy_status s = hy_links_attach_coincident(w, hy_solid_object(a), hy_solid_object(b), tolerance, stiffness,
                                             pair_count);
    if (s) hy_error_prefix("hy_solid_attach: ");
    return s;
}

hy_status hy_links_attach_vertices(hy_world* w, hy_object_id a, hy_object_id b, const int32_t* pairs, int32_t count,
                                   double stiffness) {
    static const char who[] = "attach";
    hy_object *oa, *ob;
    hy_status s = two_solids(w, a, b, who, &oa, &ob);
    if (s) return s;
    if (!pairs || count <= 0 || !(stiffness > 0.0) || !isfinite(stiffness))
        return hy_fail(HY_ERR_INVALID_ARG, "attach '%s' to '%s': need vertex pairs and a stiffness > 0 N/m (%d pairs, %g)",
                       ob->name, oa->name, count, stiffness);
    hy_interaction_pair* p = calloc((size_t)count, sizeof *p);
    if (!p) return hy_fail(HY_ERR_NOMEM, "attach: out of memory");
    for (int32_t k = 0; k < count && !s; k++) {
        int32_t va = pairs[2 * k], vb = pairs[2 * k + 1];
        if (va < 0 || va >= oa->model.nv || vb < 0 || vb >= ob->model.nv)
            s = hy_fail(HY_ERR_INVALID_ARG, "attach '%s' to '%s': pair %d: vertex %d of '%s' or %d of '%s' out of range",
                        ob->name, oa->name, k, va, oa->name, vb, ob->name);
        p[k] = (hy_interaction_pair){.kind = HY_PAIR_ATTACH, .vertex = va, .count = 1, .b = {vb}, .w = {1.0},
                                     .stiffness = stiffness};
    }
    if (!s) s = keep_attachment(w, a, b, p, count, who);
    free(p);
    return s;
}

hy_status hy_links_set_contact_coupling(hy_world* w, int on) {
    if (!w || (on != 0 && on != 1))
        return hy_fail(HY_ERR_INVALID_ARG, "contact coupling: need a world and 0 or 1, got %d", on);
    hy_links* l = links_of(w);
    if (!l) return hy_fail(HY_ERR_NOMEM, "contact coupling: out of memory");
    l->contacts_off = !on;
    if (!on)
        for (int32_t i = 0; i < l->count; i++)
            if (l->items[i].kind == LINK_CONTACT) l->items[i].count = 0;
    return HY_OK;
}

/* ---- attached pairs */

static int cmp_key(const void* x, const void* y) {
    int64_t a = *(const int64_t*)x, b = *(const int64_t*)y;
    return (a > b) - (a < b);
}

/* The attached pairs' keys into out (room for every link), sorted and
 * distinct; their count. */
static int64_t fill_apart(const hy_world* w, int64_t* out) {
    const hy_links* l = w->links;
    int64_t n = 0;
    for (int32_t k = 0; l && k < l->count; k++) {
        const link* lk = &l->items[k];
        if (lk->kind != LINK_ATTACH) continue;
        if (!live(w, lk->a) || !live(w, lk->b)) continue;
        out[n++] = hy_pair_key(slot_of(w, lk->a), slot_of(w, lk->b));
    }
    qsort(out, (size_t)n, sizeof *out, cmp_key);
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (m == 0 || out[m - 1] != out[i]) out[m++] = out[i];
    return m;
}

const int64_t* hy_links_apart(const hy_world* w, int64_t* count) {
    const hy_links* l = w->links;
    *count = l ? l->apart_count : 0;
    return *count ? l->apart : NULL;
}

hy_status hy_links_apart_copy(const hy_world* w, int64_t** keys, int64_t* count) {
    *keys = NULL, *count = 0;
    const hy_links* l = w->links;
    if (!l || l->count == 0) return HY_OK;
    *keys = malloc((size_t)l->count * sizeof **keys);
    if (!*keys) return hy_fail(HY_ERR_NOMEM, "out of memory for %d attachments", l->count);
    *count = fill_apart(w, *keys);
    return HY_OK;
}

/* ---- the coupled integration */

static int32_t find(int32_t* parent, int32_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
}

/* Drop the links whose objects are gone. */
static void drop_stale(hy_world* w, hy_links* l) {
    int32_t n = 0;
    for (int32_t i = 0; i < l->count; i++) {
        link* k = &l->items[i];
        if (!is_solid(live(w, k->a)) || !is_solid(live(w, k->b))) {
            free(k->pair);
            continue;
        }
        l->items[n++] = *k;
    }
    l->count = n;
}

/* Group g's coupled solve with `pool`: its solids in slot order and the
 * links among them in link order. Reads the groups and the links, writes
 * only its solids' x1 and v1 (and their models' scratch), so the solves of
 * distinct groups may run at once. */
hy_status hy_links_solve_group(hy_world* w, int32_t g, hy_pool* pool, double dt, hy_step_stats* st) {
    const hy_links* l = w->links;
    const int32_t* member = l->member + l->member_start[g];
    const int32_t* links = l->group_link + l->link_start[g];
    int32_t n = l->member_start[g + 1] - l->member_start[g], ni = l->link_start[g + 1] - l->link_start[g];
    hy_coupled_object* obj = calloc((size_t)n, sizeof *obj);
    hy_interaction** ia = calloc((size_t)(ni ? ni : 1), sizeof *ia);
    hy_status s = obj && ia ? HY_OK : hy_fail(HY_ERR_NOMEM, "coupled step: out of memory");
    for (int32_t j = 0; !s && j < n; j++) {
        hy_object* o = &w->objects[member[j]];
        hy_coupled_object* c = &obj[j];
        c->ops = hy_solid_ops(o, &c->model);
        c->x0 = o->state->x, c->v0 = o->state->v, c->x1 = o->state->x1, c->v1 = o->state->v1;
        c->held_normal = hy_solid_held(o, w);
        c->let_go = hy_solid_let_go(o);
    }
    int32_t m = 0;
    for (int32_t k = 0; !s && k < ni; k++) {
        const link* lk = &l->items[links[k]];
        int32_t sa = slot_of(w, lk->a), sb = slot_of(w, lk->b);
        s = hy_interaction_create(l->local[sa], l->local[sb], w->objects[sa].model.nv, w->objects[sb].model.nv,
                                  lk->pair, lk->count, &ia[m]);
        if (s) hy_error_prefix("objects '%s' and '%s': ", w->objects[sa].name, w->objects[sb].name);
        else m++;
    }
    hy_coupled_stats cs = {0, 0.0};
    if (!s)
        s = hy_coupled_solve(pool, obj, n, ia, m, dt, w->def.gravity, w->def.cg_max_iterations, w->def.cg_tolerance,
                             &cs);
    if (s) hy_error_prefix("solids coupled with '%s': ", w->objects[member[0]].name);
    for (int32_t k = 0; k < m; k++) hy_interaction_destroy(ia[k]);
    free(ia);
    free(obj);
    if (s) return s;
    int32_t capped = !(cs.cg_relative_residual <= w->def.cg_tolerance);
    hy_stats_add_solve(st, cs.cg_iterations, cs.cg_relative_residual, capped);
    return HY_OK;
}

int32_t hy_links_group_count(const hy_world* w) { return w->links ? w->links->group_count : 0; }

int32_t hy_links_group_of(const hy_world* w, int32_t slot) {
    const hy_links* l = w->links;
    return l && l->group_count > 0 && slot < l->slot_cap ? l->group_of[slot] : -1;
}

void hy_links_group_info(const hy_world* w, int32_t g, int32_t* first_slot, int32_t* solids, int64_t* vertices) {
    const hy_links* l = w->links;
    int32_t a = l->member_start[g], b = l->member_start[g + 1];
    int64_t nv = 0;
    for (int32_t j = a; j < b; j++) nv += w->objects[l->member[j]].model.nv;
    if (first_slot) *first_slot = l->member[a];
    if (solids) *solids = b - a;
    if (vertices) *vertices = nv;
}

/* Room for the groups of `slots` objects and `links` links. */
static hy_status reserve_groups(hy_links* l, int32_t slots, int32_t links) {
    if (slots > l->slot_cap) {
        int32_t n = slots;
        int32_t** arr[] = {&l->parent, &l->local, &l->size, &l->group_of, &l->member, &l->member_start, &l->link_start};
        for (size_t k = 0; k < sizeof arr / sizeof arr[0]; k++) {
            int32_t* p = realloc(*arr[k], ((size_t)n + 1) * sizeof *p);
            if (!p) return hy_fail(HY_ERR_NOMEM, "coupled step: out of memory for %d objects", n);
            *arr[k] = p;
        }
        l->slot_cap = n;
    }
    if (links > l->group_link_cap) {
        int32_t* p = realloc(l->group_link, (size_t)links * sizeof *p);
        if (!p) return hy_fail(HY_ERR_NOMEM, "coupled step: out of memory for %d links", links);
        l->group_link = p, l->group_link_cap = links;
    }
    return HY_OK;
}

hy_status hy_links_prepare(hy_world* w) {
    hy_links* l = w->links;
    if (!l) return HY_OK;
    l->apart_count = 0;
    l->group_count = 0;
    if (l->count == 0) return HY_OK;
    drop_stale(w, l);
    /* the attached pairs the step's collision skips, by today's slots */
    if (l->count > l->apart_cap) {
        int64_t* p = realloc(l->apart, (size_t)l->count * sizeof *p);
        if (!p) return hy_fail(HY_ERR_NOMEM, "out of memory for %d attachments", l->count);
        l->apart = p, l->apart_cap = l->count;
    }
    l->apart_count = fill_apart(w, l->apart);
    int32_t slots = w->object_count;
    hy_status s = reserve_groups(l, slots, l->count);
    if (s) return s;
    /* groups: the solids joined by links with pairs; a root is its
     * group's lowest slot (a union keeps the lower root) */
    for (int32_t i = 0; i < slots; i++) l->parent[i] = i;
    for (int32_t k = 0; k < l->count; k++) {
        if (l->items[k].count == 0) continue;
        int32_t ra = find(l->parent, slot_of(w, l->items[k].a)), rb = find(l->parent, slot_of(w, l->items[k].b));
        if (ra != rb) l->parent[ra > rb ? ra : rb] = ra < rb ? ra : rb;
    }
    for (int32_t i = 0; i < slots; i++) l->size[i] = 0;
    for (int32_t i = 0; i < slots; i++) l->size[find(l->parent, i)]++;
    /* numbered by their roots' order; members counted per group */
    int32_t ng = 0;
    for (int32_t i = 0; i < slots; i++) {
        int32_t r = find(l->parent, i);
        l->group_of[i] = -1;
        if (!is_solid(&w->objects[i]) || l->size[r] < 2) continue;
        if (r == i) l->member_start[ng + 1] = 0, l->link_start[ng + 1] = 0, l->group_of[i] = ng++;
        else l->group_of[i] = l->group_of[r];
        l->member_start[l->group_of[i] + 1]++;
    }
    for (int32_t k = 0; k < l->count; k++)
        if (l->items[k].count > 0) l->link_start[l->group_of[slot_of(w, l->items[k].a)] + 1]++;
    l->member_start[0] = l->link_start[0] = 0;
    for (int32_t g = 0; g < ng; g++) {
        l->member_start[g + 1] += l->member_start[g];
        l->link_start[g + 1] += l->link_start[g];
    }
    /* filled in slot and link order; size[] is free again: the fill
     * positions */
    for (int32_t g = 0; g < ng; g++) l->size[g] = l->member_start[g];
    for (int32_t i = 0; i < slots; i++) {
        int32_t g = l->group_of[i];
        if (g < 0) continue;
        l->local[i] = l->size[g] - l->member_start[g];
        l->member[l->size[g]++] = i;
    }
    for (int32_t g = 0; g < ng; g++) l->size[g] = l->link_start[g];
    for (int32_t k = 0; k < l->count; k++) {
        if (l->items[k].count == 0) continue;
        int32_t g = l->group_of[slot_of(w, l->items[k].a)];
        l->group_link[l->size[g]++] = k;
    }
    l->group_count = ng;
    return HY_OK;
}

/* ---- the response's work and the contacts */

hy_status hy_links_before_response(hy_world* w) {
    hy_links* l = links_of(w);
    if (!l) return hy_fail(HY_ERR_NOMEM, "out of memory");
    int64_t n = 0;
    for (int32_t i = 0; i < w->object_count; i++)
        if (is_solid(&w->objects[i])) n += 3 * (int64_t)w->objects[i].model.nv;
    if (n > l->v_cap) {
        double* p = realloc(l->v_pred, (size_t)n * sizeof *p);
        if (!p) return hy_fail(HY_ERR_NOMEM, "out of memory for %lld velocities", (long long)n);
        l->v_pred = p, l->v_cap = n;
    }
    n = 0;
    for (int32_t i = 0; i < w->object_count; i++) {
        const hy_object* o = &w->objects[i];
        if (!is_solid(o)) continue;
        memcpy(l->v_pred + n, o->state->v1, 3 * (size_t)o->model.nv * sizeof *l->v_pred);
        n += 3 * (int64_t)o->model.nv;
    }
    return HY_OK;
}

static void measure_response(hy_world* w, hy_links* l) {
    double impulse = 0.0;
    int64_t corrected = 0, n = 0;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (!is_solid(o)) continue;
        void* model = NULL;
        const double* m = hy_solid_ops(o, &model)->masses(model);
        for (int32_t v = 0; v < o->model.nv; v++, n += 3) {
            const double* a = l->v_pred + n;
            const double* b = o->state->v1 + 3 * v;
            double d0 = b[0] - a[0], d1 = b[1] - a[1], d2 = b[2] - a[2];
            if (d0 == 0.0 && d1 == 0.0 && d2 == 0.0) continue;
            impulse += m[v] * sqrt(d0 * d0 + d1 * d1 + d2 * d2);
            corrected++;
        }
    }
    l->impulse = impulse;
    l->corrected = corrected;
}

/* The link carrying contact pairs from slot a's vertices to slot b's
 * faces, made when missing; *last caches the previous answer. */
static link* contact_link(hy_world* w, hy_links* l, int32_t a, int32_t b, link** last) {
    hy_object_id ia = hy_world_slot_id(w, a), ib = hy_world_slot_id(w, b);
    if (*last && hy_object_id_equal((*last)->a, ia) && hy_object_id_equal((*last)->b, ib)) return *last;
    for (int32_t k = 0; k < l->count; k++) {
        link* c = &l->items[k];
        if (c->kind == LINK_CONTACT && hy_object_id_equal(c->a, ia) && hy_object_id_equal(c->b, ib)) return *last = c;
    }
    return *last = new_link(l, ia, ib, LINK_CONTACT);
}

/* Lay contact pair p (its vertex and face set) out at positions xa, xb:
 * the face's unit normal on the vertex's side, the face's point nearest
 * the vertex's projection in barycentric weights (clamped into it). 0
 * when the pair no longer holds: a degenerate face, the vertex no longer
 * over it (a weight under -OVER), or farther than its gap along the
 * normal (a pair acts only closer than that). */
#define OVER 0.05
int hy_face_frame(const double* a, const double* b, const double* c, const double* p, double n[3], double* dist,
                  double* u, double* v) {
    hy_v3 t0 = v3_load(a), e1 = v3_sub(v3_load(b), t0), e2 = v3_sub(v3_load(c), t0);
    hy_v3 d = v3_sub(v3_load(p), t0);
    hy_v3 nn = v3_cross(e1, e2);
    double len = v3_len(nn);
    if (!(len > 0.0) || !isfinite(len)) return 0;
    nn = v3_scale(nn, 1.0 / len);
    *dist = v3_dot(nn, d);
    if (*dist < 0.0) nn = v3_scale(nn, -1.0), *dist = -*dist;
    double d11 = v3_dot(e1, e1), d12 = v3_dot(e1, e2), d22 = v3_dot(e2, e2);
    double r1 = v3_dot(d, e1), r2 = v3_dot(d, e2), det = d11 * d22 - d12 * d12;
    if (!(det > 0.0)) return 0;
    *u = (d22 * r1 - d12 * r2) / det, *v = (d11 * r2 - d12 * r1) / det;
    v3_store(n, nn);
    return 1;
}

static int lay_out(hy_interaction_pair* p, const double* xa, const double* xb) {
    double n[3], dist = 0.0, u = 0.0, v = 0.0;
    if (!hy_face_frame(xb + 3 * p->b[0], xb + 3 * p->b[1], xb + 3 * p->b[2], xa + 3 * p->vertex, n, &dist, &u, &v))
        return 0;
    double w[3] = {1.0 - u - v, u, v}, sum = 0.0;
    for (int k = 0; k < 3; k++) {
        if (w[k] < -OVER) return 0;
        sum += w[k] = w[k] > 0.0 ? w[k] : 0.0;
    }
    if (!(dist < p->gap)) return 0;
    p->w[1] = w[1] / sum, p->w[2] = w[2] / sum;
    p->w[0] = 1.0 - p->w[1] - p->w[2];
    memcpy(p->normal, n, sizeof n);
    return 1;
}

static int same_pair(const hy_interaction_pair* p, const hy_interaction_pair* q) {
    return p->vertex == q->vertex && p->b[0] == q->b[0] && p->b[1] == q->b[1] && p->b[2] == q->b[2];
}

/* The contact pairs of the next step, laid out at the end-of-step
 * positions x1 (the next step's start):
 *   - the pairs held now that still hold there (over their face, within
 *     their gap): a resting contact stays coupled although the penalty
 *     keeps it out of the response's reach;
 *   - the first detection round's vertex-face contacts between two solids
 *     not held yet, with the pair's stiffness (the vertex's mass over
 *     dt^2: the penalty takes back about a step's approach in a step, and
 *     backward Euler keeps it stable at any value) and a gap of twice the
 *     contact distance (a resting vertex sits about g dt^2 inside it, out
 *     of the response's distance). */
#define CONTACT_GAP_SCALE 2.0
static hy_status update_contacts(hy_world* w, hy_links* l, double dt) {
    for (int32_t k = 0; k < l->count; k++) {
        link* lk = &l->items[k];
        if (lk->kind != LINK_CONTACT || lk->count == 0) continue;
        const hy_object *oa = live(w, lk->a), *ob = live(w, lk->b);
        int32_t n = 0;
        for (int32_t j = 0; oa && ob && j < lk->count; j++)
            if (lay_out(&lk->pair[j], oa->state->x1, ob->state->x1)) lk->pair[n++] = lk->pair[j];
        lk->count = n;
    }
    const hy_scene_view* v = &w->view;
    link* last = NULL;
    for (int64_t c = 0; c < w->last_contact_count; c++) {
        const hy_contact* ct = &w->last_contacts[c];
        if (ct->type != HY_CONTACT_VF) continue; /* edge-edge contacts stay with the response alone */
        int32_t sa = v->vertex_object[ct->v[0]], sb = v->vertex_object[ct->v[1]];
        hy_object *oa = &w->objects[sa], *ob = &w->objects[sb];
        if (sa == sb || !is_solid(oa) || !is_solid(ob)) continue;
        hy_interaction_pair p;
        memset(&p, 0, sizeof p);
        p.kind = HY_PAIR_CONTACT;
        p.vertex = ct->v[0] - v->offset[sa];
        p.count = 3;
        for (int j = 0; j < 3; j++) p.b[j] = ct->v[1 + j] - v->offset[sb];
        void* model = NULL;
        const double* m = hy_solid_ops(oa, &model)->masses(model);
        p.stiffness = CONTACT_STIFFNESS_SCALE * m[p.vertex] / (dt * dt);
        p.gap = CONTACT_GAP_SCALE * 0.5 * (oa->model.thickness + ob->model.thickness);
        if (!lay_out(&p, oa->state->x1, ob->state->x1)) continue;
        link* k = contact_link(w, l, sa, sb, &last);
        if (!k) return hy_fail(HY_ERR_NOMEM, "out of memory for the contacts of '%s' and '%s'", oa->name, ob->name);
        int held = 0;
        for (int32_t j = 0; j < k->count && !held; j++) held = same_pair(&k->pair[j], &p);
        if (held) continue;
        if (!reserve_pairs(k, k->count + 1))
            return hy_fail(HY_ERR_NOMEM, "out of memory for the contacts of '%s' and '%s'", oa->name, ob->name);
        k->pair[k->count++] = p;
    }
    return HY_OK;
}

hy_status hy_links_after_response(hy_world* w, double dt) {
    hy_links* l = links_of(w);
    if (!l) return hy_fail(HY_ERR_NOMEM, "out of memory");
    measure_response(w, l);
    return l->contacts_off ? HY_OK : update_contacts(w, l, dt);
}

/* ---- snapshots: int32 link count, then per contact link its header and
 * pairs */

typedef struct snap_link {
    uint32_t ha, ga, hb, gb;
    int32_t count, pad;
} snap_link;

static int held_contact(const link* k) { return k->kind == LINK_CONTACT && k->count > 0; }

size_t hy_links_snapshot_size(const hy_world* w) {
    const hy_links* l = w->links;
    size_t n = sizeof(int32_t);
    for (int32_t k = 0; l && k < l->count; k++)
        if (held_contact(&l->items[k])) n += sizeof(snap_link) + (size_t)l->items[k].count * sizeof(hy_interaction_pair);
    return n;
}

void hy_links_snapshot_write(const hy_world* w, unsigned char* out) {
    const hy_links* l = w->links;
    int32_t n = 0;
    size_t at = sizeof n;
    for (int32_t k = 0; l && k < l->count; k++) {
        const link* lk = &l->items[k];
        if (!held_contact(lk)) continue;
        snap_link h = {lk->a.index, lk->a.generation, lk->b.index, lk->b.generation, lk->count, 0};
        memcpy(out + at, &h, sizeof h);
        at += sizeof h;
        memcpy(out + at, lk->pair, (size_t)lk->count * sizeof *lk->pair);
        at += (size_t)lk->count * sizeof *lk->pair;
        n++;
    }
    memcpy(out, &n, sizeof n);
}

hy_status hy_links_snapshot_check(const hy_world* w, const unsigned char* in, size_t size, size_t* used) {
    int32_t n = 0;
    size_t at = sizeof n;
    if (size < at) return hy_fail(HY_ERR_PARSE, "hy_world_restore: snapshot truncated (contact pairs)");
    memcpy(&n, in, sizeof n);
    for (int32_t k = 0; k < n; k++) {
        snap_link h;
        if (n < 0 || size - at < sizeof h) return hy_fail(HY_ERR_PARSE, "hy_world_restore: snapshot truncated (contact pairs)");
        memcpy(&h, in + at, sizeof h);
        at += sizeof h;
        const hy_object* oa = live(w, (hy_object_id){h.ha, h.ga});
        const hy_object* ob = live(w, (hy_object_id){h.hb, h.gb});
        if (!is_solid(oa) || !is_solid(ob) || oa == ob || h.count <= 0 ||
            (size - at) / sizeof(hy_interaction_pair) < (size_t)h.count)
            return hy_fail(HY_ERR_PARSE, "hy_world_restore: contact link %d of the snapshot is damaged or names "
                                         "objects the world lacks", k);
        for (int32_t j = 0; j < h.count; j++) {
            hy_interaction_pair p;
            memcpy(&p, in + at, sizeof p);
            at += sizeof p;
            int bad = p.kind != HY_PAIR_CONTACT || p.vertex < 0 || p.vertex >= oa->model.nv || p.count != 3;
            for (int q = 0; q < 3 && !bad; q++) bad = p.b[q] < 0 || p.b[q] >= ob->model.nv;
            if (bad)
                return hy_fail(HY_ERR_PARSE, "hy_world_restore: contact pair %d of '%s' and '%s' in the snapshot is damaged",
                               j, oa->name, ob->name);
        }
    }
    *used = at;
    return HY_OK;
}

hy_status hy_links_snapshot_read(hy_world* w, const unsigned char* in) {
    hy_links* l = links_of(w);
    if (!l) return hy_fail(HY_ERR_NOMEM, "hy_world_restore: out of memory");
    int32_t n = 0;
    size_t at = sizeof n;
    memcpy(&n, in, sizeof n);
    for (int32_t k = 0; k < l->count; k++)
        if (l->items[k].kind == LINK_CONTACT) l->items[k].count = 0;
    link* last = NULL;
    for (int32_t k = 0; k < n; k++) {
        snap_link h;
        memcpy(&h, in + at, sizeof h);
        at += sizeof h;
        int32_t sa = slot_of(w, (hy_object_id){h.ha, h.ga}), sb = slot_of(w, (hy_object_id){h.hb, h.gb});
        link* lk = contact_link(w, l, sa, sb, &last);
        if (!lk || !reserve_pairs(lk, h.count)) {
            for (int32_t j = 0; j < l->count; j++)
                if (l->items[j].kind == LINK_CONTACT) l->items[j].count = 0;
            return hy_fail(HY_ERR_NOMEM, "hy_world_restore: out of memory for contact pairs");
        }
        memcpy(lk->pair, in + at, (size_t)h.count * sizeof *lk->pair);
        lk->count = h.count;
        at += (size_t)h.count * sizeof *lk->pair;
    }
    return HY_OK;
}

void hy_links_response_work(const hy_world* w, double* impulse, int64_t* vertices) {
    const hy_links* l = w ? w->links : NULL;
    if (impulse) *impulse = l ? l->impulse : 0.0;
    if (vertices) *vertices = l ? l->corrected : 0;
}

void hy_links_pair_counts(const hy_world* w, int64_t* attached, int64_t* contacts) {
    int64_t n[2] = {0, 0};
    const hy_links* l = w ? w->links : NULL;
    for (int32_t k = 0; l && k < l->count; k++) n[l->items[k].kind] += l->items[k].count;
    if (attached) *attached = n[LINK_ATTACH];
    if (contacts) *contacts = n[LINK_CONTACT];
}
