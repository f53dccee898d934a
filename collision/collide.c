#include "collision/collide.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collision/ccd.h"
#include "collision/collide_jobs.h"
#include "collision/filter.h"
#include "collision/kernels.h"
#include "collision/leaf.h"
#include "collision/traverse_hd.h"
#include "core/error.h"
#include "sched/cuda.h"
#include "sched/proximity.h"

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
    free(cs->object_deforms);
    free(cs->front_dev_cand);
    free(cs->front_dev_exact);
    free(cs->dev_contacts);
    hy_candidates_free(&cs->candidates);
    hy_contact_list_free(&cs->contacts);
    free(cs->pair_impulse);
    free(cs->zone_parent);
    free(cs->zone_member);
    free(cs->zone_acc);
    free(cs->zone_obstacle);
    free(cs->zone_pinned);
    free(cs->order);
    for (int32_t i = 0; cs->refit_x && i < cs->object_count; i++) free(cs->refit_x[i]);
    free(cs->refit_x);
    free(cs->refit_status);
    free(cs->seen_version);
    free(cs->hit);
    free(cs->toi);
    free(cs->tjobs);
    free(cs->tjob_distance);
    free(cs->leaf);
    free(cs->leaf_tjob);
    free(cs->round_x0);
    free(cs->round_x1);
    free(cs->vertex_round);
    free(cs);
}

/* Can objects a and b collide with each other? Bonded bodies can, like any
 * others: a fractured solid's pieces are cut apart by a gap, so at rest
 * they are out of contact, and when an impact drives one into its
 * neighbour faster than the bonds can follow, contact keeps them from
 * interpenetrating (and apart once the bond breaks). */
static int may_collide(const hy_scene_view* v, int32_t a, int32_t b) {
    unsigned fa = v->flags[a], fb = v->flags[b];
    if (a == b) return (fa & HY_VIEW_SELF) != 0; /* rigid shapes cannot hit themselves */
    if ((fa & fb & HY_VIEW_DRIVEN) != 0) return 0; /* obstacles, kinematic bodies */
    if (v->apart_count > 0 && hy_pair_keys_have(v->apart, v->apart_count, a, b)) return 0; /* attached */
    return (fa & fb & HY_VIEW_STATIC) == 0;        /* sleepers and the floor stay apart */
}

hy_status hy_collision_state_sync(hy_collision_state** out, const hy_scene_view* view) {
    if (*out && (*out)->object_count == view->object_count) return HY_OK;
    hy_collision_state_destroy(*out);
    *out = NULL;
    hy_collision_state* cs = calloc(1, sizeof *cs);
    if (!cs) return hy_fail(HY_ERR_NOMEM, "out of memory for collision state");
    int32_t no = view->object_count, nv = view->vertex_count;
    cs->object_count = no;
    cs->vertex_count = nv;
    size_t n = (size_t)nv;
    cs->object_deforms = calloc((size_t)no + 1, 1);
    cs->zone_parent = malloc(sizeof(int32_t) * (n + 1));
    cs->zone_member = malloc(n + 1);
    cs->zone_acc = malloc(sizeof(double) * 4 * (n + 1));
    cs->zone_obstacle = malloc(sizeof(int32_t) * (n + 1));
    cs->zone_pinned = malloc(n + 1);
    cs->bvh = calloc((size_t)no + 1, sizeof(hy_bvh*));
    cs->order = malloc(sizeof(int32_t) * ((size_t)no + 1));
    cs->refit_status = calloc((size_t)no + 1, sizeof(hy_status));
    cs->refit_x = calloc((size_t)no + 1, sizeof(double*));
    cs->seen_version = calloc((size_t)no + 1, sizeof(uint64_t));
    cs->traverser = hy_traverser_create();
    if (!cs->object_deforms || !cs->zone_parent || !cs->zone_member || !cs->zone_acc ||
        !cs->zone_obstacle || !cs->zone_pinned || !cs->bvh || !cs->order || !cs->refit_status || !cs->refit_x ||
        !cs->seen_version || !cs->traverser) {
        hy_collision_state_destroy(cs);
        return hy_fail(HY_ERR_NOMEM, "out of memory for collision state of %d vertices", nv);
    }
    for (int32_t i = 0; i < no; i++) {
        int32_t off = view->offset[i], ov = view->offset[i + 1] - off;
        cs->object_deforms[i] = view->motion[i] == HY_MOVES_FREE;
        hy_status s = hy_bvh_create(view->tri[i], view->tri_count[i], ov, &cs->bvh[i]);
        /* Only objects that can touch themselves are traversed against
         * themselves: the others need no self-culling marks (cones and
         * contours at every refit). */
        if (!s) cs->bvh[i]->self_cull = may_collide(view, i, i);
        if (!s) {
            /* traversal emits global vertex indices */
            int32_t* ids = malloc(sizeof(int32_t) * ((size_t)ov + 1));
            if (!ids) s = hy_fail(HY_ERR_NOMEM, "out of memory for vertex ids");
            for (int32_t k = 0; ids && k < ov; k++) ids[k] = off + k;
            if (!s) s = hy_bvh_set_vertex_ids(cs->bvh[i], ids);
            free(ids);
        }
        if (s) {
            hy_error_prefix("object '%s': ", view->name[i]);
            cs->object_count = i; /* destroy only what exists */
            hy_collision_state_destroy(cs);
            return s;
        }
    }
    *out = cs;
    return HY_OK;
}

static double pair_distance(const hy_scene_view* v, int32_t a, int32_t b) {
    return 0.5 * (v->thickness[a] + v->thickness[b]);
}

/* The step's positions get a number unique in the process each time they
 * may have changed (every detection): a device holding that number holds
 * them (hy_cuda_leaf_resident). */
static _Atomic uint64_t g_positions_version;

static hy_status push_tjob(hy_collision_state* cs, int32_t a, int32_t b, double distance) {
    if (cs->tjob_count == cs->tjob_capacity) {
        int32_t cap = cs->tjob_capacity ? 2 * cs->tjob_capacity : 64;
        hy_traverse_job* j = realloc(cs->tjobs, sizeof *j * (size_t)cap);
        if (j) cs->tjobs = j;
        double* d = realloc(cs->tjob_distance, sizeof *d * (size_t)cap);
        if (d) cs->tjob_distance = d;
        if (!j || !d) return hy_fail(HY_ERR_NOMEM, "out of memory for traversal jobs");
        cs->tjob_capacity = cap;
    }
    cs->tjobs[cs->tjob_count] = (hy_traverse_job){cs->bvh[a], cs->bvh[b]};
    cs->tjob_distance[cs->tjob_count] = distance;
    cs->tjob_count++;
    return HY_OK;
}

/* Contact of candidate k (a hit). */
static hy_contact leaf_contact(const hy_collision_state* cs, int64_t k) {
    hy_contact ct;
    ct.type = cs->leaf[k].kind == HY_FEATURE_EE ? HY_CONTACT_EE : HY_CONTACT_VF;
    memcpy(ct.v, cs->leaf[k].v, sizeof ct.v);
    ct.toi = cs->toi[k];
    return ct;
}

/* Contact of a device's contact k (collision/leaf_resident.h). */
static hy_contact dev_contact(const hy_collision_state* cs, int64_t k) {
    const hy_leaf_contact* d = &cs->dev_contacts[k];
    hy_contact ct;
    ct.type = d->pair.kind == HY_FEATURE_EE ? HY_CONTACT_EE : HY_CONTACT_VF;
    memcpy(ct.v, d->pair.v, sizeof ct.v);
    ct.toi = d->toi;
    return ct;
}

static const hy_collision_state* g_sort_cs; /* only used under the world's single-threaded step */
static int compare_lo_x(const void* pa, const void* pb) {
    int32_t a = *(const int32_t*)pa, b = *(const int32_t*)pb;
    double xa = g_sort_cs->bvh[a]->nodes[0].box.lo[0], xb = g_sort_cs->bvh[b]->nodes[0].box.lo[0];
    if (xa != xb) return xa < xb ? -1 : 1;
    return (a > b) - (a < b);
}

/* Objects with fewer triangles are refitted many at a time, each serially. */
#define SMALL_OBJECT 4096

/* An object's tree over its swept boxes, updated unless its positions at
 * both ends are bit for bit those of its last update: the detection rounds
 * of one step share X0, and the response moves only the objects it
 * touches, so most objects' trees would be refitted to the same boxes
 * (the same tree and boxes either way: a refit is a function of the
 * positions and the thickness). Where X0 is the same and only some
 * vertices' X1 moved (the response's later rounds move a few hundred of a
 * cloth's vertices), only those are refitted (hy_bvh_refit_vertices, the
 * same tree, boxes and marks); past an eighth of the vertices the whole
 * tree is, on the pool. Either way the tree is rebuilt when the refit
 * decays it past the same bound. */
#define MAX_DECAY 2.0
static hy_status refit_one(const hy_scene_view* view, hy_collision_state* cs, int32_t i, const double* X0,
                           const double* X1, hy_pool* pool) {
    int32_t nv = view->offset[i + 1] - view->offset[i];
    double thickness = view->thickness[i];
    size_t off = 3 * (size_t)view->offset[i], n = 3 * (size_t)nv;
    double* last = cs->refit_x[i];
    double th = thickness > 0 ? thickness : 0.0;
    hy_bvh* b = cs->bvh[i];
    int32_t* moved = NULL;
    int32_t count = -1; /* -1: refit it all */
    if (last && cs->refit_status[i] == HY_OK && b->thickness == th && memcmp(last, X0 + off, sizeof(double) * n) == 0) {
        int32_t most = nv / 8;
        moved = malloc(sizeof(int32_t) * ((size_t)most + 1));
        count = moved ? 0 : -1;
        const double* l1 = last + n;
        const double* x1 = X1 + off;
        for (int32_t v = 0; moved && v < nv; v++) {
            if (memcmp(l1 + 3 * (size_t)v, x1 + 3 * (size_t)v, sizeof(double) * 3) == 0) continue;
            if (count == most) {
                count = -1;
                break;
            }
            moved[count++] = v;
        }
        if (count == 0) {
            free(moved);
            return HY_OK;
        }
    }
    if (count > 0) {
        hy_bvh_refit_vertices(b, X0 + off, X1 + off, thickness, moved, count, pool);
        cs->refit_status[i] =
            hy_bvh_quality(b) <= MAX_DECAY ? HY_OK : hy_bvh_build(b, X0 + off, X1 + off, thickness, pool);
    } else {
        cs->refit_status[i] = hy_bvh_update(b, X0 + off, X1 + off, thickness, MAX_DECAY, pool, NULL);
    }
    free(moved);
    if (cs->refit_status[i] != HY_OK) return cs->refit_status[i];
    if (!last) last = cs->refit_x[i] = malloc(sizeof(double) * 2 * n);
    if (last) {
        memcpy(last, X0 + off, sizeof(double) * n);
        memcpy(last + n, X1 + off, sizeof(double) * n);
    }
    return HY_OK;
}

typedef struct refit_ctx {
    const hy_scene_view* view;
    hy_collision_state* cs;
    const double *X0, *X1;
} refit_ctx;

static void refit_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    refit_ctx* r = vctx;
    for (int64_t i = begin; i < end; i++)
        if (r->cs->bvh[i]->triangle_count < SMALL_OBJECT) refit_one(r->view, r->cs, (int32_t)i, r->X0, r->X1, NULL);
}

hy_status hy_collide_detect(hy_collision_state* cs, const hy_scene_view* view, hy_prox* prox, hy_pool* pool,
                            const double* X0, const double* X1, int carry, hy_contact_list* out, hy_step_stats* st) {
    if (!cs || !prox || cs->object_count != view->object_count)
        return hy_fail(HY_ERR_INVALID_ARG, "collision detection: no framework, or a state not made for the view");
    double t0 = now_ms();
    /* refit (or rebuild) every object's tree over its swept boxes: large
     * objects one at a time with the pool inside, then the small ones many
     * at a time (a pool dispatch per phase of a 500-triangle refit costs
     * more than the refit; nbody's 305 balls spent ~200 ms a step in
     * wake-ups). The trees are the same either way. */
    for (int32_t i = 0; i < cs->object_count; i++) {
        if (cs->bvh[i]->triangle_count < SMALL_OBJECT) continue;
        hy_status s = refit_one(view, cs, i, X0, X1, pool);
        if (s) return s;
    }
    refit_ctx rc = {view, cs, X0, X1};
    if (pool)
        hy_pool_for(pool, cs->object_count, 8, refit_block, &rc);
    else
        refit_block(&rc, 0, cs->object_count, 0, 0);
    for (int32_t i = 0; i < cs->object_count; i++)
        if (cs->refit_status[i] != HY_OK)
            /* the failing block's message is on its own thread: say it again */
            return hy_fail(cs->refit_status[i], "object '%s': BVH update failed (out of memory)", view->name[i]);
    double t1 = now_ms();
    cs->ms_refit = t1 - t0;
    st->ms[HY_PHASE_REFIT] += t1 - t0;
    /* sweep and prune over root boxes along x: the traversal jobs */
    int32_t n = cs->object_count;
    for (int32_t i = 0; i < n; i++) cs->order[i] = i;
    g_sort_cs = cs;
    qsort(cs->order, (size_t)n, sizeof(int32_t), compare_lo_x);
    hy_status s = HY_OK;
    cs->tjob_count = 0;
    for (int32_t i = 0; i < n && !s; i++) {
        int32_t a = cs->order[i];
        if (may_collide(view, a, a)) s = push_tjob(cs, a, a, pair_distance(view, a, a));
        const hy_aabb* ba = &cs->bvh[a]->nodes[0].box;
        for (int32_t j = i + 1; j < n && !s; j++) {
            int32_t b = cs->order[j];
            const hy_aabb* bb = &cs->bvh[b]->nodes[0].box;
            if (bb->lo[0] > ba->hi[0]) break;
            if (!hy_aabb_overlap(ba, bb) || !may_collide(view, a, b)) continue;
            /* traverse in slot order so the output does not depend on the sort */
            int32_t lo = a < b ? a : b, hi = a < b ? b : a;
            s = push_tjob(cs, lo, hi, pair_distance(view, lo, hi));
        }
    }
    if (!s) s = hy_collide_round_begin(cs, X0, X1);
    /* A later round over the same X0 whose caller kept the last round's
     * output (carry): a pair's answer is a function of its four
     * vertices' positions and its distance, so the contacts none of whose
     * vertices moved since are kept, and only node pairs with a moved node
     * are traversed (a pair with a moved vertex has it in a moved
     * triangle, under moved nodes). */
    int only_moved = !s && carry && cs->round > 1;
    if (carry && !only_moved) out->count = 0; /* a new X0: nothing to keep */
    cs->carried = 0;
    if (only_moved) {
        const int32_t* vr = cs->vertex_round;
        int32_t r = cs->round;
        int64_t kept = 0;
        for (int64_t k = 0; k < out->count; k++) {
            const int32_t* v = out->items[k].v;
            if (vr[v[0]] == r || vr[v[1]] == r || vr[v[2]] == r || vr[v[3]] == r) continue;
            out->items[kept++] = out->items[k];
        }
        out->count = kept;
        cs->carried = kept;
        for (int32_t i = 0; i < cs->object_count; i++)
            cs->bvh[i]->trav_moved = cs->bvh[i]->version != cs->seen_version[i] ? cs->bvh[i]->version : 0;
    }
    for (int32_t i = 0; i < cs->object_count; i++) cs->seen_version[i] = cs->bvh[i]->version;
    hy_traverse_only_moved(cs->traverser, only_moved);
    /* the framework runs the front's TRAVERSE jobs and the LEAF jobs they make */
    int64_t front = 0;
    if (!s) s = hy_traverse_begin(cs->traverser, cs->tjobs, cs->tjob_count, pool, &front);
    hy_traverse_only_moved(cs->traverser, 0);
    if (!s && front > cs->front_cap) {
        int64_t* dc = realloc(cs->front_dev_cand, sizeof *dc * (size_t)front);
        if (dc) cs->front_dev_cand = dc;
        int64_t* de = realloc(cs->front_dev_exact, sizeof *de * (size_t)front);
        if (de) cs->front_dev_exact = de;
        if (!dc || !de)
            s = hy_fail(HY_ERR_NOMEM, "out of memory for %lld traversal front pairs", (long long)front);
        else cs->front_cap = front;
    }
    for (int64_t f = 0; f < front && !s; f++) cs->front_dev_cand[f] = cs->front_dev_exact[f] = -1;
    cs->leaf_count = 0;
    cs->dev_count = 0;
    cs->positions_version = ++g_positions_version;
    hy_detect_ctx dc = {prox, pool, cs, X0, X1, hy_ccd_options_step(), only_moved, 0, 0.0};
    hy_prox_work work = {&dc, hy_collision_jobs, hy_traverse_front_tests(cs->traverser)};
    if (!s) s = hy_prox_run(prox, front, &work);
    if (!s) s = hy_traverse_counts(cs->traverser, &cs->candidates);
    for (int64_t k = 0; k < cs->leaf_count && !s; k++) {
        st->exact_tests += cs->hit[k] >> 1;
        if (!(cs->hit[k] & 1)) continue;
        if (!hy_contact_push(out, leaf_contact(cs, k))) s = hy_fail(HY_ERR_NOMEM, "out of memory for contacts");
    }
    if (!s) st->candidates += cs->leaf_count;
    /* the front pairs a device ran with their LEAF jobs: their counts, and
     * only their contacts came back */
    for (int64_t f = 0; f < front && !s; f++)
        if (cs->front_dev_cand[f] >= 0) {
            st->candidates += cs->front_dev_cand[f];
            st->exact_tests += cs->front_dev_exact[f];
        }
    for (int64_t k = 0; k < cs->dev_count && !s; k++)
        if (!hy_contact_push(out, dev_contact(cs, k))) s = hy_fail(HY_ERR_NOMEM, "out of memory for contacts");
    double t2 = now_ms();
    cs->ms_traverse = t2 - t1;
    st->ms[HY_PHASE_TRAVERSE] += t2 - t1;
    return s;
}

/* ---- calibration */

/* Least squares y = c0 + c1·x over m points, with the correlation of x
 * and y. A negative intercept (below timer resolution) is clamped to 0 and
 * the slope refitted through the origin; a negative slope is clamped to 0
 * and the intercept made the mean (a profile takes no negative cost). */
static void fit_line(const double* x, const double* y, int m, double* c0, double* c1, double* r) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0, syy = 0;
    for (int i = 0; i < m; i++) {
        sx += x[i];
        sy += y[i];
        sxx += x[i] * x[i];
        sxy += x[i] * y[i];
        syy += y[i] * y[i];
    }
    double vx = m * sxx - sx * sx, vy = m * syy - sy * sy, cov = m * sxy - sx * sy;
    *c1 = vx > 0 ? cov / vx : 0.0;
    *c0 = m > 0 ? (sy - *c1 * sx) / m : 0.0;
    *r = vx > 0 && vy > 0 ? cov / sqrt(vx * vy) : 0.0;
    if (*c0 < 0.0) {
        *c0 = 0.0;
        *c1 = sxx > 0 ? sxy / sxx : 0.0;
    }
    if (*c1 < 0.0) { /* noise on a flat line (a GPU's copies once its trees stay): the mean */
        *c1 = 0.0;
        *c0 = m > 0 ? sy / m : 0.0;
    }
}

/* The kind's model from its points: the copies against the jobs, the rest
 * against the units (on the cpu the copies are 0, and so is that fit). */
static void fit_kind(hy_calib_kind* k) {
    double rest[HY_CALIB_POINTS];
    for (int i = 0; i < k->points; i++) rest[i] = k->t[i] - k->copy[i];
    double s_copy = 0, s_work = 0;
    fit_line(k->jobs, k->copy, k->points, &s_copy, &k->upload, &k->r_copy);
    fit_line(k->n, rest, k->points, &s_work, &k->proc, &k->r);
    k->setup = s_work + s_copy;
}

typedef struct calib_run {
    double t, copy;
} calib_run;

static int compare_run(const void* pa, const void* pb) {
    double a = ((const calib_run*)pa)->t, b = ((const calib_run*)pb)->t;
    return (a > b) - (a < b);
}

hy_status hy_collide_calibrate(hy_collision_state* cs, const hy_scene_view* view, hy_prox* prox, hy_pool* pool,
                               const double* X0, const double* X1, int device, int repeats, hy_calibration* out) {
    if (!cs) return hy_fail(HY_ERR_INVALID_ARG, "calibrate: no collision state (step the world first)");
    if (repeats < 1 || repeats > 99) return hy_fail(HY_ERR_INVALID_ARG, "calibrate: repeats must be in [1, 99]");
    if (device >= hy_cuda_device_count())
        return hy_fail(HY_ERR_INVALID_ARG, "calibrate: no GPU cuda:%d (%s)", device, hy_cuda_status());
    memset(out, 0, sizeof *out);
    /* one whole detection makes the front and every LEAF job (a new
     * round 1, so that every job and test is made afresh) */
    cs->round = 0;
    hy_contact_list contacts = {0};
    hy_step_stats st;
    memset(&st, 0, sizeof st);
    hy_status s = hy_collide_detect(cs, view, prox, pool, X0, X1, 0, &contacts, &st);
    hy_contact_list_free(&contacts);
    if (s) return s;
    int64_t front = 0;
    s = hy_traverse_begin(cs->traverser, cs->tjobs, cs->tjob_count, pool, &front);
    if (s) return s;
    int64_t leaves = cs->leaf_count;
    out->front = front;
    out->leaves = leaves;
    if (front < 2 || leaves < 16)
        return hy_fail(HY_ERR_INVALID_ARG, "calibrate: too little work (%lld TRAVERSE, %lld LEAF jobs)",
                       (long long)front, (long long)leaves);
    int64_t* ids = malloc(sizeof(int64_t) * (size_t)front);
    calib_run* runs = malloc(sizeof(calib_run) * (size_t)repeats);
    if (!ids || !runs) {
        free(ids);
        free(runs);
        return hy_fail(HY_ERR_NOMEM, "calibrate: out of memory");
    }
    cs->positions_version = ++g_positions_version;
    hy_detect_ctx dc = {prox, pool, cs, X0, X1, hy_ccd_options_step(), 0, 0, 0.0};
    /* TRAVERSE: batches of 1, 2, 4, ... front pairs (spread over the front so
     * a batch is a fair sample), each point at the node pairs it tests;
     * LEAF: 1, 4, 16, ... tests. Each size timed `repeats` times, the
     * median kept: robust to a preempted run. */
    for (int kind = 0; kind < 2 && !s; kind++) {
        hy_calib_kind* k = &out->kind[kind];
        int64_t limit = kind == 0 ? front : leaves;
        for (int64_t n = 1; n <= limit && k->points < HY_CALIB_POINTS && !s; n *= kind == 0 ? 2 : 4) {
            int64_t units = n; /* TRAVERSE: the node pairs the batch tests (the model's unit) */
            for (int r = 0; r < repeats && !s; r++) {
                double t0;
                dc.transfer = 0.0;
                if (kind == 0) {
                    int64_t stride = front / n;
                    for (int64_t i = 0; i < n; i++) ids[i] = i * stride;
                    s = hy_traverse_begin(cs->traverser, cs->tjobs, cs->tjob_count, pool, &front);
                    t0 = now_ms();
                    if (!s && device >= 0)
                        s = hy_cuda_traverse_batch(device, cs->traverser, ids, n, &dc.transfer, NULL);
                    else if (!s)
                        s = hy_traverse_run(cs->traverser, ids, n, pool);
                    if (!s) units = hy_traverse_last_node_pairs(cs->traverser);
                } else {
                    int64_t first = (leaves - n) / 2;
                    t0 = now_ms();
                    s = hy_collide_run_leaf(&dc, device, first, n);
                }
                runs[r].t = 1e-3 * (now_ms() - t0);
                runs[r].copy = dc.transfer;
            }
            qsort(runs, (size_t)repeats, sizeof *runs, compare_run);
            k->n[k->points] = (double)units;
            k->jobs[k->points] = (double)n;
            k->t[k->points] = runs[repeats / 2].t;
            k->copy[k->points] = runs[repeats / 2].copy;
            k->points++;
        }
        fit_kind(k);
    }
    free(ids);
    free(runs);
    return s;
}
