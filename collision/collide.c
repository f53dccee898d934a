#include "collision/collide.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collision/ccd.h"
#include "collision/filter.h"
#include "engine/error.h"
#include "engine/world.h"

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

void hy_collision_state_destroy(hy_collision_state* cs) {
    if (!cs) return;
    for (int32_t i = 0; cs->bvh && i < cs->object_count; i++) hy_bvh_destroy(cs->bvh[i]);
    free(cs->bvh);
    hy_traverser_destroy(cs->traverser);
    hy_candidates_free(&cs->candidates);
    hy_contact_list_free(&cs->contacts);
    free(cs->vertex_object);
    free(cs->object_offset);
    free(cs->X0);
    free(cs->X1);
    free(cs->V);
    free(cs->inv_mass);
    free(cs->mass);
    free(cs->body_inv_inertia);
    free(cs->zone_parent);
    free(cs->zone_member);
    free(cs->zone_acc);
    free(cs->zone_obstacle);
    free(cs->zone_pinned);
    free(cs->order);
    free(cs->hit);
    free(cs->toi);
    free(cs->bonded);
    free(cs);
}

hy_status hy_collision_state_sync(hy_world* w) {
    if (w->collision && w->collision->object_count == w->object_count) return HY_OK;
    hy_collision_state_destroy(w->collision);
    w->collision = NULL;
    hy_collision_state* cs = calloc(1, sizeof *cs);
    if (!cs) return hy_fail(HY_ERR_NOMEM, "out of memory for collision state");
    int32_t no = w->object_count, nv = 0;
    for (int32_t i = 0; i < no; i++) nv += w->objects[i].nv;
    cs->object_count = no;
    cs->vertex_count = nv;
    size_t n = (size_t)nv;
    cs->vertex_object = malloc(sizeof(int32_t) * (n + 1));
    cs->object_offset = malloc(sizeof(int32_t) * ((size_t)no + 1));
    cs->X0 = malloc(sizeof(double) * 3 * (n + 1));
    cs->X1 = malloc(sizeof(double) * 3 * (n + 1));
    cs->V = malloc(sizeof(double) * 3 * (n + 1));
    cs->inv_mass = calloc(n + 1, sizeof(double));
    cs->mass = calloc(n + 1, sizeof(double));
    cs->body_inv_inertia = calloc(9 * ((size_t)no + 1), sizeof(double));
    cs->zone_parent = malloc(sizeof(int32_t) * (n + 1));
    cs->zone_member = malloc(n + 1);
    cs->zone_acc = malloc(sizeof(double) * 4 * (n + 1));
    cs->zone_obstacle = malloc(sizeof(int32_t) * (n + 1));
    cs->zone_pinned = malloc(n + 1);
    cs->bvh = calloc((size_t)no + 1, sizeof(hy_bvh*));
    cs->order = malloc(sizeof(int32_t) * ((size_t)no + 1));
    cs->traverser = hy_traverser_create();
    if (!cs->vertex_object || !cs->object_offset || !cs->X0 || !cs->X1 || !cs->V || !cs->inv_mass || !cs->mass ||
        !cs->body_inv_inertia || !cs->zone_parent || !cs->zone_member || !cs->zone_acc || !cs->zone_obstacle ||
        !cs->zone_pinned || !cs->bvh || !cs->order || !cs->traverser) {
        hy_collision_state_destroy(cs);
        return hy_fail(HY_ERR_NOMEM, "out of memory for collision state of %d vertices", nv);
    }
    int32_t off = 0;
    for (int32_t i = 0; i < no; i++) {
        hy_object* o = &w->objects[i];
        cs->object_offset[i] = off;
        for (int32_t k = 0; k < o->nv; k++) cs->vertex_object[off + k] = i;
        if (o->kind == HY_OBJECT_CLOTH) {
            const double* m = hy_cloth_masses(o->cloth);
            const double* im = hy_cloth_inverse_masses(o->cloth);
            memcpy(cs->mass + off, m, sizeof(double) * (size_t)o->nv);
            memcpy(cs->inv_mass + off, im, sizeof(double) * (size_t)o->nv);
        }
        hy_status s = hy_bvh_create(o->tri, o->nt, o->nv, &cs->bvh[i]);
        if (s) {
            hy_error_prefix("object '%s': ", o->name);
            cs->object_count = i; /* destroy only what exists */
            hy_collision_state_destroy(cs);
            return s;
        }
        off += o->nv;
    }
    cs->object_offset[no] = off;
    w->collision = cs;
    return HY_OK;
}

/* Can objects a and b (a <= b) collide with each other? */
static int may_collide(const hy_object* a, const hy_object* b, int same) {
    if (same) return a->kind == HY_OBJECT_CLOTH; /* rigid shapes cannot hit themselves */
    return !(a->kind == HY_OBJECT_OBSTACLE && b->kind == HY_OBJECT_OBSTACLE);
}

static int compare_u64(const void* pa, const void* pb) {
    uint64_t a = *(const uint64_t*)pa, b = *(const uint64_t*)pb;
    return (a > b) - (a < b);
}

static uint64_t pair_key(int32_t lo, int32_t hi) { return (uint64_t)(uint32_t)lo << 32 | (uint32_t)hi; }

/* Bodies held together by an intact bond do not collide with each other:
 * their faces touch by construction (a fractured solid) and the bond, not
 * contact, governs their relative motion. */
static hy_status collect_bonded(const hy_world* w, hy_collision_state* cs) {
    cs->bonded_count = 0;
    if (w->bonds.intact == 0) return HY_OK;
    if (cs->bonded_capacity < w->bonds.count) {
        uint64_t* b = realloc(cs->bonded, sizeof(uint64_t) * (size_t)w->bonds.count);
        if (!b) return hy_fail(HY_ERR_NOMEM, "out of memory for %d bonded pairs", w->bonds.count);
        cs->bonded = b;
        cs->bonded_capacity = w->bonds.count;
    }
    for (int32_t k = 0; k < w->bonds.count; k++) {
        const hy_bond* b = &w->bonds.bonds[k];
        if (b->broken) continue;
        int32_t lo = b->a < b->b ? b->a : b->b, hi = b->a < b->b ? b->b : b->a;
        cs->bonded[cs->bonded_count++] = pair_key(lo, hi);
    }
    qsort(cs->bonded, (size_t)cs->bonded_count, sizeof(uint64_t), compare_u64);
    return HY_OK;
}

static int is_bonded(const hy_collision_state* cs, int32_t lo, int32_t hi) {
    if (cs->bonded_count == 0) return 0;
    uint64_t key = pair_key(lo, hi);
    return bsearch(&key, cs->bonded, (size_t)cs->bonded_count, sizeof(uint64_t), compare_u64) != NULL;
}

static double pair_distance(const hy_object* a, const hy_object* b) { return 0.5 * (a->thickness + b->thickness); }

typedef struct exact_ctx {
    const hy_collision_state* cs;
    const hy_feature_pair* pairs;
    const double *X0, *X1;
    double min_distance;
    unsigned char* hit;
    double* toi;
    hy_ccd_options opts;
} exact_ctx;

static void exact_block(void* p, int64_t begin, int64_t end, int64_t block, int worker) {
    exact_ctx* c = p;
    (void)block;
    (void)worker;
    for (int64_t i = begin; i < end; i++) {
        const int32_t* v = c->pairs[i].v;
        const double *X0 = c->X0, *X1 = c->X1;
        double toi = 1.0, x[8][3];
        for (int j = 0; j < 4; j++)
            for (int k = 0; k < 3; k++) {
                x[j][k] = X0[3 * v[j] + k];
                x[4 + j][k] = X1[3 * v[j] + k];
            }
        int is_vf = c->pairs[i].kind != HY_FEATURE_EE;
        const double* a[4] = {x[0], x[1], x[2], x[3]};
        const double* b[4] = {x[4], x[5], x[6], x[7]};
        /* separating axes first (conservative; valid with a thickness) */
        int exact = hy_filter_sat(is_vf, a, b, c->min_distance);
        int hit = exact && hy_ccd_query(is_vf, (const double(*)[3])x, c->min_distance, &c->opts, &toi, NULL);
        c->hit[i] = (unsigned char)(hit | exact << 1); /* bit 0: contact, bit 1: exact test ran */
        c->toi[i] = toi;
    }
}

/* Candidates of one object pair -> global indices -> exact tests -> contacts. */
static hy_status test_candidates(hy_world* w, hy_collision_state* cs, int32_t ia, int32_t ib, const double* X0,
                                 const double* X1, hy_contact_list* out, hy_step_stats* st) {
    hy_candidates* c = &cs->candidates;
    if (c->count == 0) return HY_OK;
    int32_t oa = cs->object_offset[ia], ob = cs->object_offset[ib];
    for (int64_t k = 0; k < c->count; k++) {
        hy_feature_pair* p = &c->pairs[k];
        if (ia == ib) {
            for (int q = 0; q < 4; q++) p->v[q] += oa;
        } else if (p->kind == HY_FEATURE_VF) {
            p->v[0] += oa;
            p->v[1] += ob;
            p->v[2] += ob;
            p->v[3] += ob;
        } else if (p->kind == HY_FEATURE_FV) {
            p->v[0] += ob;
            p->v[1] += oa;
            p->v[2] += oa;
            p->v[3] += oa;
        } else {
            p->v[0] += oa;
            p->v[1] += oa;
            p->v[2] += ob;
            p->v[3] += ob;
        }
    }
    /* grow the per-candidate result arrays (kept between steps) */
    unsigned char* hit = realloc(cs->hit, (size_t)c->count);
    if (!hit) return hy_fail(HY_ERR_NOMEM, "out of memory for %lld candidates", (long long)c->count);
    cs->hit = hit;
    double* toi = realloc(cs->toi, sizeof(double) * (size_t)c->count);
    if (!toi) return hy_fail(HY_ERR_NOMEM, "out of memory for %lld candidates", (long long)c->count);
    cs->toi = toi;
    exact_ctx ec = {cs, c->pairs, X0, X1, pair_distance(&w->objects[ia], &w->objects[ib]), cs->hit, cs->toi,
                   hy_ccd_options_step()};
    hy_pool_for(w->pool, c->count, 256, exact_block, &ec);
    st->candidates += c->count;
    for (int64_t k = 0; k < c->count; k++) {
        st->exact_tests += cs->hit[k] >> 1;
        if (!(cs->hit[k] & 1)) continue;
        hy_contact ct;
        ct.type = c->pairs[k].kind == HY_FEATURE_EE ? HY_CONTACT_EE : HY_CONTACT_VF;
        memcpy(ct.v, c->pairs[k].v, sizeof ct.v);
        ct.toi = cs->toi[k];
        if (!hy_contact_push(out, ct)) return hy_fail(HY_ERR_NOMEM, "out of memory for contacts");
    }
    return HY_OK;
}

static const hy_collision_state* g_sort_cs; /* only used under the world's single-threaded step */
static int compare_lo_x(const void* pa, const void* pb) {
    int32_t a = *(const int32_t*)pa, b = *(const int32_t*)pb;
    double xa = g_sort_cs->bvh[a]->nodes[0].box.lo[0], xb = g_sort_cs->bvh[b]->nodes[0].box.lo[0];
    if (xa != xb) return xa < xb ? -1 : 1;
    return (a > b) - (a < b);
}

hy_status hy_collide_detect(void* world, const double* X0, const double* X1, hy_contact_list* out,
                            hy_step_stats* st) {
    hy_world* w = world;
    hy_collision_state* cs = w->collision;
    double t0 = now_ms();
    /* refit (or rebuild) every object's tree over its swept boxes */
    for (int32_t i = 0; i < cs->object_count; i++) {
        const hy_object* o = &w->objects[i];
        size_t off = 3 * (size_t)cs->object_offset[i];
        hy_status s = hy_bvh_update(cs->bvh[i], X0 + off, X1 + off, o->thickness, 2.0, w->pool, NULL);
        if (s) return s;
    }
    double t1 = now_ms();
    cs->ms_refit = t1 - t0;
    st->ms[HY_PHASE_REFIT] += t1 - t0;
    /* sweep and prune over root boxes along x */
    int32_t n = cs->object_count;
    for (int32_t i = 0; i < n; i++) cs->order[i] = i;
    g_sort_cs = cs;
    qsort(cs->order, (size_t)n, sizeof(int32_t), compare_lo_x);
    hy_status s = collect_bonded(w, cs);
    for (int32_t i = 0; i < n && !s; i++) {
        int32_t a = cs->order[i];
        const hy_object* oa = &w->objects[a];
        if (may_collide(oa, oa, 1)) {
            s = hy_bvh_traverse_self(cs->traverser, cs->bvh[a], w->pool, &cs->candidates);
            if (!s) s = test_candidates(w, cs, a, a, X0, X1, out, st);
        }
        const hy_aabb* ba = &cs->bvh[a]->nodes[0].box;
        for (int32_t j = i + 1; j < n && !s; j++) {
            int32_t b = cs->order[j];
            const hy_aabb* bb = &cs->bvh[b]->nodes[0].box;
            if (bb->lo[0] > ba->hi[0]) break;
            if (!hy_aabb_overlap(ba, bb) || !may_collide(oa, &w->objects[b], 0)) continue;
            /* traverse in slot order so the output does not depend on the sort */
            int32_t lo = a < b ? a : b, hi = a < b ? b : a;
            if (is_bonded(cs, lo, hi)) continue;
            s = hy_bvh_traverse_pair(cs->traverser, cs->bvh[lo], cs->bvh[hi], w->pool, &cs->candidates);
            if (!s) s = test_candidates(w, cs, lo, hi, X0, X1, out, st);
        }
    }
    double t2 = now_ms();
    cs->ms_traverse = t2 - t1;
    st->ms[HY_PHASE_TRAVERSE] += t2 - t1;
    return s;
}
