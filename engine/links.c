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
    /* the integrate phase's scratch, per object slot */
    int32_t* parent;
    int32_t* local;
    int32_t slot_cap;
    /* attached slot pairs (hy_links_apart) */
    int64_t* apart;
    int64_t apart_count, apart_cap;
};

static int is_solid(const hy_object* o) {
    return o && o->alive && (o->kind == HY_OBJECT_FEM || o->kind == HY_OBJECT_MASS_SPRING);
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
    s = hy_interaction_attach_coincident(oa->x, oa->nv, ob->x, ob->nv, tolerance, stiffness, &pairs, &n);
    if (!s && n == 0)
        s = hy_fail(HY_ERR_INVALID_ARG, "attach '%s' to '%s': no vertices within %g m of each other", ob->name,
                    oa->name, tolerance);
    if (!s) s = keep_attachment(w, a, b, pairs, n, who);
    hy_mem_free(pairs);
    if (!s && pair_count) *pair_count = n;
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
        if (va < 0 || va >= oa->nv || vb < 0 || vb >= ob->nv)
            s = hy_fail(HY_ERR_INVALID_ARG, "attach '%s' to '%s': pair %d: vertex %d of '%s' or %d of '%s' out of range",
                        ob->name, oa->name, k, va, oa->name, vb, ob->name);
        p[k] = (hy_interaction_pair){.kind = HY_PAIR_ATTACH, .vertex = va, .count = 1, .b = {vb}, .w = {1.0},
                                     .stiffness = stiffness};
    }
    if (!s) s = keep_attachment(w, a, b, p, count, who);
    free(p);
    return s;
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

/* One group's solve: the solids of slots whose root is `root`, in slot
 * order, and the links among them, in link order. */
static hy_status solve_group(hy_world* w, hy_links* l, int32_t root, double dt, hy_step_stats* st) {
    int32_t n = 0, ni = 0;
    for (int32_t i = 0; i < w->object_count; i++) l->local[i] = -1;
    for (int32_t i = 0; i < w->object_count; i++)
        if (is_solid(&w->objects[i]) && find(l->parent, i) == root) l->local[i] = n++;
    for (int32_t k = 0; k < l->count; k++)
        if (l->items[k].count > 0 && l->local[slot_of(w, l->items[k].a)] >= 0) ni++;
    hy_coupled_object* obj = calloc((size_t)n, sizeof *obj);
    hy_interaction** ia = calloc((size_t)ni, sizeof *ia);
    hy_status s = obj && ia ? HY_OK : hy_fail(HY_ERR_NOMEM, "coupled step: out of memory");
    for (int32_t i = 0; !s && i < w->object_count; i++) {
        if (l->local[i] < 0) continue;
        hy_object* o = &w->objects[i];
        hy_coupled_object* c = &obj[l->local[i]];
        c->ops = hy_solid_ops(o, &c->model);
        c->x0 = o->x, c->v0 = o->v, c->x1 = o->x1, c->v1 = o->v1;
        hy_solid_mark_integrated(o);
    }
    int32_t m = 0;
    for (int32_t k = 0; !s && k < l->count; k++) {
        const link* lk = &l->items[k];
        int32_t sa = slot_of(w, lk->a), sb = slot_of(w, lk->b);
        if (lk->count == 0 || l->local[sa] < 0) continue;
        s = hy_interaction_create(l->local[sa], l->local[sb], w->objects[sa].nv, w->objects[sb].nv, lk->pair,
                                  lk->count, &ia[m]);
        if (s) hy_error_prefix("objects '%s' and '%s': ", w->objects[sa].name, w->objects[sb].name);
        else m++;
    }
    hy_coupled_stats cs = {0, 0.0};
    if (!s)
        s = hy_coupled_solve(w->pool, obj, n, ia, m, dt, w->def.gravity, w->def.cg_max_iterations,
                             w->def.cg_tolerance, &cs);
    if (s) {
        int32_t first = -1;
        for (int32_t i = 0; i < w->object_count && first < 0; i++)
            if (l->local[i] >= 0) first = i;
        hy_error_prefix("solids coupled with '%s': ", w->objects[first].name);
    }
    for (int32_t k = 0; k < m; k++) hy_interaction_destroy(ia[k]);
    free(ia);
    free(obj);
    if (s) return s;
    st->cg_iterations += cs.cg_iterations;
    if (cs.cg_relative_residual > st->cg_relative_residual || isnan(cs.cg_relative_residual))
        st->cg_relative_residual = cs.cg_relative_residual;
    if (!(cs.cg_relative_residual <= w->def.cg_tolerance)) st->cg_capped++;
    return HY_OK;
}

hy_status hy_links_integrate(hy_world* w, double dt, hy_step_stats* st) {
    hy_links* l = w->links;
    if (!l) return HY_OK;
    l->apart_count = 0;
    if (l->count == 0) return HY_OK;
    drop_stale(w, l);
    /* the attached pairs the step's collision skips, by today's slots */
    if (l->count > l->apart_cap) {
        int64_t* p = realloc(l->apart, (size_t)l->count * sizeof *p);
        if (!p) return hy_fail(HY_ERR_NOMEM, "out of memory for %d attachments", l->count);
        l->apart = p, l->apart_cap = l->count;
    }
    l->apart_count = fill_apart(w, l->apart);
    if (w->object_count > l->slot_cap) {
        int32_t n = w->object_count;
        int32_t* p = realloc(l->parent, (size_t)n * sizeof *p);
        if (p) l->parent = p;
        int32_t* q = p ? realloc(l->local, (size_t)n * sizeof *q) : NULL;
        if (q) l->local = q;
        if (!p || !q) return hy_fail(HY_ERR_NOMEM, "coupled step: out of memory for %d objects", n);
        l->slot_cap = n;
    }
    /* groups: the solids joined by links with pairs */
    for (int32_t i = 0; i < w->object_count; i++) l->parent[i] = i;
    for (int32_t k = 0; k < l->count; k++) {
        if (l->items[k].count == 0) continue;
        int32_t ra = find(l->parent, slot_of(w, l->items[k].a)), rb = find(l->parent, slot_of(w, l->items[k].b));
        if (ra != rb) l->parent[ra > rb ? ra : rb] = ra < rb ? ra : rb;
    }
    for (int32_t i = 0; i < w->object_count; i++) {
        if (!is_solid(&w->objects[i]) || find(l->parent, i) != i) continue;
        int joined = 0;
        for (int32_t j = i + 1; j < w->object_count && !joined; j++) joined = find(l->parent, j) == i;
        if (!joined) continue;
        hy_status s = solve_group(w, l, i, dt, st);
        if (s) return s;
    }
    return HY_OK;
}

void hy_links_pair_counts(const hy_world* w, int64_t* attached, int64_t* contacts) {
    int64_t n[2] = {0, 0};
    const hy_links* l = w ? w->links : NULL;
    for (int32_t k = 0; l && k < l->count; k++) n[l->items[k].kind] += l->items[k].count;
    if (attached) *attached = n[LINK_ATTACH];
    if (contacts) *contacts = n[LINK_CONTACT];
}
