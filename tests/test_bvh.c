/* BVH build/refit and traversal: on random triangle soups (fixed seeds) self and pair traversal find exactly the feature pairs whose swept boxes overlap (brute force over all pairs; interpolated boxes a subset), each once, in the same order for any thread count; moving frames and self-culling keep every pair the exact CCD test reports, and culling refuses patches with narrow normal cones whose contours overlap in projection (a helical strip, two stacked squares) while culling a flat sheet; the two-lane moving-box test answers as the plain one and the single-precision gate never rejects what it passes; on a crumpled sheet traversal gives exactly the brute-force moving-box pairs; a large build is the same tree for any pool. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/bvh.h"
#include "collision/ccd.h"
#include "collision/traverse.h"
#include "hyphys/hyphys.h"
#include "sched/pool.h"
#include "test.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static double urand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) / 9007199254740992.0;
}

typedef struct soup {
    int32_t nv, nt;
    double* x0;
    double* x1;
    int32_t* tri;
} soup;

/* nv random points in a cube of side `size`, nt triangles of random distinct
 * vertices (so vertices and edges are shared, as in meshes), each vertex
 * moving by up to `motion` per axis (plus a common drift). */
static soup soup_make(int32_t nv, int32_t nt, double size, double motion, double drift) {
    soup s = {nv, nt, malloc(sizeof(double) * 3 * (size_t)nv), malloc(sizeof(double) * 3 * (size_t)nv),
              malloc(sizeof(int32_t) * 3 * (size_t)nt)};
    for (int32_t i = 0; i < 3 * nv; i++) {
        s.x0[i] = size * urand();
        s.x1[i] = s.x0[i] + motion * (2 * urand() - 1) + drift;
    }
    for (int32_t t = 0; t < nt; t++) {
        int32_t a = (int32_t)(urand() * nv), b, c;
        do b = (int32_t)(urand() * nv);
        while (b == a);
        do c = (int32_t)(urand() * nv);
        while (c == a || c == b);
        /* No two triangles on the same three vertices: such a pair would
         * make the same feature pair twice under two triangle ids. */
        int dup = 0;
        for (int32_t u = 0; u < t && !dup; u++) {
            const int32_t* f = s.tri + 3 * u;
            dup = (f[0] == a || f[1] == a || f[2] == a) && (f[0] == b || f[1] == b || f[2] == b) &&
                  (f[0] == c || f[1] == c || f[2] == c);
        }
        if (dup) {
            t--;
            continue;
        }
        s.tri[3 * t] = a;
        s.tri[3 * t + 1] = b;
        s.tri[3 * t + 2] = c;
    }
    return s;
}

static void soup_free(soup* s) {
    free(s->x0);
    free(s->x1);
    free(s->tri);
}

typedef struct plist {
    hy_feature_pair* v;
    int64_t n, cap;
} plist;

static void push(plist* l, hy_feature_pair p) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->v = realloc(l->v, sizeof *l->v * (size_t)l->cap);
    }
    l->v[l->n++] = p;
}

static void canon_sort(plist* l) {
    for (int64_t i = 0; i < l->n; i++) l->v[i] = hy_feature_pair_canonical(l->v[i]);
    if (l->n) qsort(l->v, (size_t)l->n, sizeof *l->v, hy_feature_pair_cmp); /* v is NULL when empty */
}

static int64_t count_dupes(const plist* l) {
    int64_t d = 0;
    for (int64_t i = 1; i < l->n; i++) d += hy_feature_pair_cmp(&l->v[i - 1], &l->v[i]) == 0;
    return d;
}

static void box_of(const double* x0, const double* x1, const int32_t* v, int n, double off, hy_aabb* b) {
    for (int k = 0; k < 3; k++) {
        b->lo[k] = 1e300;
        b->hi[k] = -1e300;
    }
    for (int i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            double a = x0[3 * v[i] + k], c = x1[3 * v[i] + k];
            if (a < b->lo[k]) b->lo[k] = a;
            if (c < b->lo[k]) b->lo[k] = c;
            if (a > b->hi[k]) b->hi[k] = a;
            if (c > b->hi[k]) b->hi[k] = c;
        }
    for (int k = 0; k < 3; k++) {
        b->lo[k] -= off;
        b->hi[k] += off;
    }
}

/* Unique edges of a triangle list, as (min, max). */
static int32_t edges_of(const soup* s, int32_t* e) {
    int32_t n = 0;
    for (int32_t t = 0; t < s->nt; t++)
        for (int k = 0; k < 3; k++) {
            int32_t a = s->tri[3 * t + k], b = s->tri[3 * t + (k + 1) % 3];
            int32_t lo = a < b ? a : b, hi = a < b ? b : a;
            int dup = 0;
            for (int32_t i = 0; i < n && !dup; i++) dup = e[2 * i] == lo && e[2 * i + 1] == hi;
            if (!dup) {
                e[2 * n] = lo;
                e[2 * n + 1] = hi;
                n++;
            }
        }
    return n;
}

/* Moving boxes of a and of b meet: on the double boxes (hy_mbox_overlap),
 * or (single) as traversal tests them, on their single-precision boxes. */
static int boxes_meet(const hy_mbox* a, const hy_mbox* b, int single) {
    if (!single) return hy_mbox_overlap(a, b);
    hy_fbox fa, fb;
    hy_fbox_from(a, &fa);
    hy_fbox_from(b, &fb);
    return hy_fbox_overlap(&fa, &fb);
}

/* Swept boxes a and b overlap: on the doubles, or (single) as traversal
 * tests them with `interpolate` 0, on their single-precision boxes
 * (hy_fbox_from of a moving box with both ends the swept box). */
static int swept_meet(const hy_aabb* a, const hy_aabb* b, int single) {
    if (!single) return hy_aabb_overlap(a, b);
    hy_mbox ma, mb;
    for (int k = 0; k < 3; k++) {
        ma.lo0[k] = ma.lo1[k] = a->lo[k];
        ma.hi0[k] = ma.hi1[k] = a->hi[k];
        mb.lo0[k] = mb.lo1[k] = b->lo[k];
        mb.hi0[k] = mb.hi1[k] = b->hi[k];
    }
    return boxes_meet(&ma, &mb, 1);
}

/* Brute force: all VF and EE feature pairs (sharing no vertex) of A
 * against B (self when B == A) whose swept boxes overlap (swept_meet).
 * Vertex ids of B are offset by `boff` so the two meshes share one
 * numbering. */
static void brute_boxes(const soup* A, const soup* B, int32_t boff, double thickness, int single, plist* out) {
    int self = A == B;
    double off = 0.5 * thickness;
    int32_t* ea = malloc(sizeof(int32_t) * 6 * (size_t)A->nt);
    int32_t* eb = malloc(sizeof(int32_t) * 6 * (size_t)B->nt);
    int32_t na = edges_of(A, ea), nb = edges_of(B, eb);
    uint8_t* used_a = calloc((size_t)A->nv, 1);
    uint8_t* used_b = calloc((size_t)B->nv, 1);
    for (int32_t i = 0; i < 3 * A->nt; i++) used_a[A->tri[i]] = 1;
    for (int32_t i = 0; i < 3 * B->nt; i++) used_b[B->tri[i]] = 1;
    for (int dir = 0; dir < (self ? 1 : 2); dir++) {
        const soup* P = dir ? B : A;
        const soup* F = dir ? A : B;
        const uint8_t* used = dir ? used_b : used_a;
        int32_t poff = dir ? boff : 0, foff = dir ? 0 : boff;
        if (self) poff = foff = 0;
        for (int32_t v = 0; v < P->nv; v++) {
            if (!used[v]) continue;
            hy_aabb bv;
            box_of(P->x0, P->x1, &v, 1, off, &bv);
            for (int32_t t = 0; t < F->nt; t++) {
                const int32_t* f = F->tri + 3 * t;
                if (self && (f[0] == v || f[1] == v || f[2] == v)) continue;
                hy_aabb bt;
                box_of(F->x0, F->x1, f, 3, off, &bt);
                if (swept_meet(&bv, &bt, single))
                    push(out, (hy_feature_pair){{v + poff, f[0] + foff, f[1] + foff, f[2] + foff}, HY_FEATURE_VF});
            }
        }
    }
    for (int32_t i = 0; i < na; i++) {
        hy_aabb b1;
        box_of(A->x0, A->x1, ea + 2 * i, 2, off, &b1);
        for (int32_t j = self ? i + 1 : 0; j < nb; j++) {
            const int32_t* p = ea + 2 * i;
            const int32_t* q = eb + 2 * j;
            if (self && (p[0] == q[0] || p[0] == q[1] || p[1] == q[0] || p[1] == q[1])) continue;
            hy_aabb b2;
            box_of(B->x0, B->x1, q, 2, off, &b2);
            if (swept_meet(&b1, &b2, single))
                push(out, (hy_feature_pair){{p[0], p[1], q[0] + boff, q[1] + boff}, HY_FEATURE_EE});
        }
    }
    free(ea);
    free(eb);
    free(used_a);
    free(used_b);
}

/* On the double swept boxes: a superset of every pair that comes within
 * the thickness. */
static void brute(const soup* A, const soup* B, int32_t boff, double thickness, plist* out) {
    brute_boxes(A, B, boff, thickness, 0, out);
}

/* Pairs of `all` (positions of the combined numbering in x0/x1) that
 * come within distance d during the step, by the exact test. */
static void within(const plist* all, const double* x0, const double* x1, double d, plist* out) {
    for (int64_t i = 0; i < all->n; i++) {
        const int32_t* v = all->v[i].v;
        double toi;
        const double* a = x0;
        const double* b = x1;
        int hit = all->v[i].kind == HY_FEATURE_EE
                      ? hy_ccd_ee(a + 3 * v[0], a + 3 * v[1], a + 3 * v[2], a + 3 * v[3], b + 3 * v[0], b + 3 * v[1],
                                  b + 3 * v[2], b + 3 * v[3], d, &toi)
                      : hy_ccd_vf(a + 3 * v[0], a + 3 * v[1], a + 3 * v[2], a + 3 * v[3], b + 3 * v[0], b + 3 * v[1],
                                  b + 3 * v[2], b + 3 * v[3], d, &toi);
        if (hit) push(out, all->v[i]);
    }
    canon_sort(out);
}

/* Pairs of `all` that the exact test reports colliding (touching). */
static void colliding(const plist* all, const double* x0, const double* x1, plist* out) {
    within(all, x0, x1, 0.0, out);
}

/* Every element of sorted `sub` is in sorted `sup`. */
static int64_t missing(const plist* sub, const plist* sup) {
    int64_t miss = 0, j = 0;
    for (int64_t i = 0; i < sub->n; i++) {
        while (j < sup->n && hy_feature_pair_cmp(&sup->v[j], &sub->v[i]) < 0) j++;
        if (j == sup->n || hy_feature_pair_cmp(&sup->v[j], &sub->v[i]) != 0) miss++;
    }
    return miss;
}

static int same_list(const hy_candidates* a, const hy_candidates* b) {
    return a->count == b->count && memcmp(a->pairs, b->pairs, sizeof *a->pairs * (size_t)a->count) == 0;
}

static void to_plist(const hy_candidates* c, plist* l) {
    l->n = 0;
    for (int64_t i = 0; i < c->count; i++) push(l, c->pairs[i]);
    canon_sort(l);
}

/* c again with the one-pair gate (hy_traverse_simd(0)) where the CPU
 * gates eight pairs at a time: the same list, pair for pair. b NULL: self
 * traversal of a. Counts the comparisons that ran both paths. */
static int64_t simd_compared;
static int same_without_simd(hy_traverser* tr, hy_bvh* a, hy_bvh* b, hy_pool* pool, const hy_candidates* c) {
    int was = hy_traverse_simd(0);
    hy_candidates s = {0};
    hy_status st = b ? hy_bvh_traverse_pair(tr, a, b, pool, &s) : hy_bvh_traverse_self(tr, a, pool, &s);
    hy_traverse_simd(was);
    int same = st == HY_OK && same_list(c, &s) && s.triangle_pairs == c->triangle_pairs && s.vf == c->vf &&
               s.ee == c->ee && s.node_pairs == c->node_pairs;
    simd_compared += was;
    hy_candidates_free(&s);
    return same;
}

static void test_self(hy_pool* pool1, hy_pool* pool2) {
    for (int trial = 0; trial < 12; trial++) {
        int32_t nv = 40 + 10 * trial, nt = 50 + 20 * trial;
        double thickness = trial % 3 == 2 ? 0.01 : 0.0;
        soup s = soup_make(nv, nt, 1.0, 0.05 * (1 + trial % 4), 0.0);
        hy_bvh* b = NULL;
        CHECK_OK(hy_bvh_create(s.tri, nt, nv, &b));
        if (!b) continue;
        b->self_cull = 0;   /* exact equality with the brute force */
        b->interpolate = 0; /* swept boxes, as the brute force */
        CHECK_OK(hy_bvh_build(b, s.x0, s.x1, thickness, pool2));
        CHECK(hy_bvh_check(b));
        CHECK_NEAR(hy_bvh_quality(b), 1.0, 1e-12); /* the same tree measured twice */
        hy_traverser* tr = hy_traverser_create();
        hy_candidates c0 = {0}, c1 = {0}, c2 = {0};
        CHECK_OK(hy_bvh_traverse_self(tr, b, NULL, &c0));
        CHECK_OK(hy_bvh_traverse_self(tr, b, pool1, &c1));
        CHECK_OK(hy_bvh_traverse_self(tr, b, pool2, &c2));
        CHECK(same_list(&c0, &c1));
        CHECK(same_list(&c0, &c2));
        CHECK(same_without_simd(tr, b, NULL, pool2, &c0));
        /* exactly the pairs whose single-precision boxes meet, which
         * include every pair whose double boxes do */
        plist got = {0}, want = {0}, dbl = {0};
        to_plist(&c0, &got);
        brute_boxes(&s, &s, 0, thickness, 1, &want);
        canon_sort(&want);
        brute(&s, &s, 0, thickness, &dbl);
        canon_sort(&dbl);
        CHECK(count_dupes(&got) == 0);
        CHECK(count_dupes(&want) == 0);
        CHECK(got.n == want.n);
        CHECK(missing(&want, &got) == 0);
        CHECK(missing(&got, &want) == 0);
        CHECK(missing(&dbl, &got) == 0);
        if (trial == 0)
            fprintf(stderr, "self soup: %lld candidates (brute force %lld, on the double boxes %lld)\n",
                    (long long)got.n, (long long)want.n, (long long)dbl.n);
        free(dbl.v);

        /* Refit after more motion: still exact; quality reflects decay. */
        for (int32_t i = 0; i < 3 * nv; i++) s.x1[i] = s.x0[i] + 0.3 * (2 * urand() - 1);
        hy_bvh_refit(b, s.x0, s.x1, thickness, pool1);
        CHECK(hy_bvh_check(b));
        double q = hy_bvh_quality(b); /* a built tree reports a finite, positive ratio (INFINITY: no tree) */
        CHECK(isfinite(q) && q > 0.0);
        CHECK_OK(hy_bvh_traverse_self(tr, b, pool2, &c2));
        to_plist(&c2, &got);
        want.n = 0;
        brute_boxes(&s, &s, 0, thickness, 1, &want);
        canon_sort(&want);
        CHECK(got.n == want.n && missing(&want, &got) == 0);
        int rebuilt = 0;
        CHECK_OK(hy_bvh_update(b, s.x0, s.x1, thickness, 1.0000001, pool2, &rebuilt));
        CHECK(hy_bvh_check(b));

        /* The moving frame: different boxes (not a subset: the frame's
         * shift can make other boxes meet), but every colliding pair kept.
         * Self culling stays off but for the last check. */
        if (thickness == 0.0) {
            plist hits = {0};
            colliding(&want, s.x0, s.x1, &hits);
            /* Interpolated boxes: a subset of the swept-box pairs that
             * still holds every colliding one. */
            b->interpolate = 1;
            CHECK_OK(hy_bvh_build(b, s.x0, s.x1, 0.0, pool2));
            CHECK_OK(hy_bvh_traverse_self(tr, b, pool2, &c2));
            to_plist(&c2, &got);
            CHECK(count_dupes(&got) == 0);
            CHECK(missing(&got, &want) == 0);
            CHECK(missing(&hits, &got) == 0);
            CHECK(got.n <= want.n);
            b->relative = 1;
            CHECK_OK(hy_bvh_build(b, s.x0, s.x1, 0.0, pool2));
            CHECK_OK(hy_bvh_traverse_self(tr, b, pool2, &c2));
            CHECK(same_without_simd(tr, b, NULL, pool1, &c2));
            to_plist(&c2, &got);
            CHECK(count_dupes(&got) == 0);
            CHECK(missing(&hits, &got) == 0);
            /* and with self culling (the default, off above for the exact
             * equality): a soup's pieces rarely pass it, but what it culls
             * holds no collision */
            b->self_cull = 1;
            CHECK_OK(hy_bvh_build(b, s.x0, s.x1, 0.0, pool2));
            CHECK_OK(hy_bvh_traverse_self(tr, b, pool2, &c2));
            to_plist(&c2, &got);
            CHECK(missing(&hits, &got) == 0);
            b->self_cull = 0;
            free(hits.v);
        }
        free(got.v);
        free(want.v);
        hy_candidates_free(&c0);
        hy_candidates_free(&c1);
        hy_candidates_free(&c2);
        hy_traverser_destroy(tr);
        hy_bvh_destroy(b);
        soup_free(&s);
    }
}

static void test_pair(hy_pool* pool2) {
    for (int trial = 0; trial < 8; trial++) {
        double drift = trial & 1 ? 0.2 : 0.0;
        soup a = soup_make(50, 70, 1.0, 0.05, drift);
        soup b = soup_make(40, 60, 1.0, 0.05, -drift);
        hy_bvh* ba = NULL;
        hy_bvh* bb = NULL;
        CHECK_OK(hy_bvh_create(a.tri, a.nt, a.nv, &ba));
        CHECK_OK(hy_bvh_create(b.tri, b.nt, b.nv, &bb));
        if (!ba || !bb) continue;
        /* One numbering for both: b's vertices after a's. */
        int32_t* ids = malloc(sizeof(int32_t) * (size_t)b.nv);
        for (int32_t i = 0; i < b.nv; i++) ids[i] = a.nv + i;
        CHECK_OK(hy_bvh_set_vertex_ids(bb, ids));
        free(ids);
        double* x0 = malloc(sizeof(double) * 3 * (size_t)(a.nv + b.nv));
        double* x1 = malloc(sizeof(double) * 3 * (size_t)(a.nv + b.nv));
        memcpy(x0, a.x0, sizeof(double) * 3 * (size_t)a.nv);
        memcpy(x0 + 3 * a.nv, b.x0, sizeof(double) * 3 * (size_t)b.nv);
        memcpy(x1, a.x1, sizeof(double) * 3 * (size_t)a.nv);
        memcpy(x1 + 3 * a.nv, b.x1, sizeof(double) * 3 * (size_t)b.nv);

        hy_traverser* tr = hy_traverser_create();
        hy_candidates c0 = {0}, c2 = {0};
        plist got = {0}, want = {0}, hits = {0};
        brute_boxes(&a, &b, a.nv, 0.0, 1, &want); /* as traversal tests: see test_self */
        canon_sort(&want);
        colliding(&want, x0, x1, &hits);

        /* Fixed frame, swept boxes: exactly the brute force. */
        ba->interpolate = bb->interpolate = 0;
        CHECK_OK(hy_bvh_build(ba, a.x0, a.x1, 0.0, NULL));
        CHECK_OK(hy_bvh_build(bb, b.x0, b.x1, 0.0, NULL));
        CHECK_OK(hy_bvh_traverse_pair(tr, ba, bb, NULL, &c0));
        CHECK_OK(hy_bvh_traverse_pair(tr, ba, bb, pool2, &c2));
        CHECK(same_list(&c0, &c2));
        to_plist(&c0, &got);
        CHECK(count_dupes(&got) == 0);
        CHECK(got.n == want.n && missing(&want, &got) == 0 && missing(&got, &want) == 0);

        /* Interpolated boxes: a subset, no colliding pair lost. */
        ba->interpolate = bb->interpolate = 1;
        CHECK_OK(hy_bvh_build(ba, a.x0, a.x1, 0.0, NULL));
        CHECK_OK(hy_bvh_build(bb, b.x0, b.x1, 0.0, NULL));
        CHECK_OK(hy_bvh_traverse_pair(tr, ba, bb, pool2, &c2));
        to_plist(&c2, &got);
        CHECK(count_dupes(&got) == 0);
        CHECK(missing(&got, &want) == 0);
        CHECK(missing(&hits, &got) == 0);

        /* Moving frames: fewer or as many, never a colliding one lost. */
        ba->relative = bb->relative = 1;
        CHECK_OK(hy_bvh_build(ba, a.x0, a.x1, 0.0, NULL));
        CHECK_OK(hy_bvh_build(bb, b.x0, b.x1, 0.0, NULL));
        CHECK_OK(hy_bvh_traverse_pair(tr, ba, bb, pool2, &c2));
        CHECK(same_without_simd(tr, ba, bb, NULL, &c2));
        to_plist(&c2, &got);
        CHECK(count_dupes(&got) == 0);
        CHECK(missing(&hits, &got) == 0);
        if (trial == 1)
            fprintf(stderr, "pair soups: %lld candidates fixed frame, %lld moving frames, %lld colliding\n",
                    (long long)want.n, (long long)got.n, (long long)hits.n);

        /* The job list gives the same as the calls one by one, in order. */
        hy_traverse_job jobs[3] = {{ba, NULL}, {ba, bb}, {bb, bb}};
        hy_candidates cj = {0}, cs = {0};
        CHECK_OK(hy_bvh_traverse_jobs(tr, jobs, 3, pool2, &cj));
        int64_t at = 0;
        for (int j = 0; j < 3; j++) {
            CHECK_OK(jobs[j].b && jobs[j].b != jobs[j].a ? hy_bvh_traverse_pair(tr, jobs[j].a, jobs[j].b, NULL, &cs)
                                                         : hy_bvh_traverse_self(tr, jobs[j].a, NULL, &cs));
            CHECK(at + cs.count <= cj.count &&
                  memcmp(cj.pairs + at, cs.pairs, sizeof *cs.pairs * (size_t)cs.count) == 0);
            at += cs.count;
        }
        CHECK(at == cj.count);
        hy_candidates_free(&cj);
        hy_candidates_free(&cs);

        free(got.v);
        free(want.v);
        free(hits.v);
        free(x0);
        free(x1);
        hy_candidates_free(&c0);
        hy_candidates_free(&c2);
        hy_traverser_destroy(tr);
        hy_bvh_destroy(ba);
        hy_bvh_destroy(bb);
        soup_free(&a);
        soup_free(&b);
    }
}

/* Culling on a flat sheet: a grid that only translates and bends gently
 * has no self contact, and culling must remove nearly everything. */
static void test_cull(hy_pool* pool) {
    hy_mesh* g = NULL;
    CHECK_OK(hy_mesh_grid(30, 30, 1.0, 1.0, &g));
    if (!g) return;
    hy_mesh_view v = hy_mesh_get_view(g);
    double* x1 = malloc(sizeof(double) * 3 * (size_t)v.vertex_count);
    for (int32_t i = 0; i < v.vertex_count; i++) {
        x1[3 * i] = v.positions[3 * i] + 0.05;
        x1[3 * i + 1] = v.positions[3 * i + 1] + 0.1 * v.positions[3 * i] * v.positions[3 * i];
        x1[3 * i + 2] = v.positions[3 * i + 2] + 0.05;
    }
    hy_bvh* b = NULL;
    CHECK_OK(hy_bvh_create(v.triangles, v.triangle_count, v.vertex_count, &b));
    hy_traverser* tr = hy_traverser_create();
    hy_candidates off = {0}, on = {0};
    b->self_cull = 0;
    CHECK_OK(hy_bvh_build(b, v.positions, x1, 0.0, pool));
    CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &off));
    b->self_cull = 1;
    CHECK_OK(hy_bvh_build(b, v.positions, x1, 0.0, pool));
    CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &on));
    fprintf(stderr, "grid: %lld candidates without culling, %lld with\n", (long long)off.count, (long long)on.count);
    CHECK(off.count > 1000);
    CHECK(on.count * 10 < off.count);
    CHECK(b->self_free[0] == 1); /* the whole sheet: a narrow cone, a square contour */
    /* With a thickness the sheet still culls while its projected
     * altitudes (0.0236 here) stay above it, and not beyond. */
    CHECK_OK(hy_bvh_build(b, v.positions, x1, 1e-3, pool));
    CHECK(b->self_free[0] == 1);
    CHECK_OK(hy_bvh_build(b, v.positions, x1, 0.03, pool));
    CHECK(b->self_free[0] == 0);
    /* A NaN position: no node holding it is culled (its cone fails), and
     * traversal still runs; the rest of the sheet still culls. */
    double keep = x1[3 * 465 + 2];
    x1[3 * 465 + 2] = NAN;
    CHECK_OK(hy_bvh_build(b, v.positions, x1, 0.0, pool));
    CHECK(b->self_free[0] == 0);
    int64_t culled = 0;
    for (int32_t i = 0; i < b->node_count; i++) culled += b->self_free[i];
    CHECK(culled > 0);
    CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &on));
    int64_t with_nan = 0;
    for (int64_t i = 0; i < on.count; i++)
        for (int k = 0; k < 4; k++) with_nan += on.pairs[i].v[k] == 465;
    CHECK(with_nan > 0);
    x1[3 * 465 + 2] = keep;
    hy_candidates_free(&off);
    hy_candidates_free(&on);
    hy_traverser_destroy(tr);
    hy_bvh_destroy(b);
    free(x1);
    hy_mesh_destroy(g);
}

/* Patches whose normals all lie in a narrow cone but whose contour is not
 * one simple curve in projection must not be culled (the contour test of
 * the theorem; collision/bvh.c contour_star). Two of them, each with real
 * collisions during the step:
 *  - a strip winding 1.5 turns around the z axis whose upper half-turn
 *    passes down through the lower one (at t = 0 it rises with the angle,
 *    at t = 1 it falls, flat halfway): normals within a few degrees of +z,
 *    but its projection overlaps itself;
 *  - two separate flat squares, one passing down through the other: one
 *    mesh, normals all +z, two contours.
 * With culling on, every pair the exact test reports must still be a
 * candidate, the root must not be marked, and its cone must be narrow (so
 * it is the contour that refuses). */
/* Pairs of vertices of far-apart parts of the mesh (group = vertex /
 * div, at least gap apart): the collisions the cases are made of. The
 * exact test also reports some pairs inside one flat moving piece, where
 * the features stay coplanar the whole step (parallel edges a cell apart:
 * conservative answers to a degenerate query, not contacts); culling such
 * a piece is right, so they are left out. */
static int far_apart(const hy_feature_pair* p, int32_t div, int32_t gap) {
    int split = p->kind == HY_FEATURE_EE ? 2 : 1;
    for (int i = 0; i < split; i++)
        for (int j = split; j < 4; j++) {
            int32_t d = p->v[i] / div - p->v[j] / div;
            if (d >= gap || -d >= gap) return 1;
        }
    return 0;
}

static void contour_case(soup* s, hy_pool* pool, const char* name, int32_t div, int32_t gap, int64_t min_hits) {
    plist all = {0}, hits = {0}, want = {0}, got = {0};
    brute(s, s, 0, 0.0, &all);
    colliding(&all, s->x0, s->x1, &hits);
    for (int64_t i = 0; i < hits.n; i++)
        if (far_apart(&hits.v[i], div, gap)) push(&want, hits.v[i]);
    canon_sort(&want);
    hy_bvh* b = NULL;
    hy_traverser* tr = hy_traverser_create();
    hy_candidates c = {0};
    CHECK_OK(hy_bvh_create(s->tri, s->nt, s->nv, &b));
    if (b && tr) {
        CHECK(b->self_cull == 1); /* on by default */
        CHECK_OK(hy_bvh_build(b, s->x0, s->x1, 0.0, pool));
        CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &c));
        to_plist(&c, &got);
        fprintf(stderr, "%s: %lld colliding pairs, %lld candidates with culling\n", name, (long long)want.n,
                (long long)got.n);
        CHECK(want.n >= min_hits);
        CHECK(missing(&want, &got) == 0);
        CHECK(b->self_free[0] == 0);
        CHECK(b->cones[0].c > 0.9); /* within 26 degrees */
    }
    hy_candidates_free(&c);
    hy_traverser_destroy(tr);
    hy_bvh_destroy(b);
    free(all.v);
    free(hits.v);
    free(want.v);
    free(got.v);
}

static void test_contour(hy_pool* pool) {
    /* helical strip: 40 segments over 3 pi (stations at odd angles, so
     * the overlapping turns do not put vertices above one another) */
    enum { SEG = 40 };
    soup h = {2 * (SEG + 1), 2 * SEG, malloc(sizeof(double) * 6 * (SEG + 1)), malloc(sizeof(double) * 6 * (SEG + 1)),
              malloc(sizeof(int32_t) * 6 * SEG)};
    const double pi = 3.14159265358979323846;
    for (int i = 0; i <= SEG; i++) {
        double th = 3.0 * pi * i / SEG;
        for (int r = 0; r < 2; r++) {
            double* p0 = h.x0 + 3 * (2 * i + r);
            double* p1 = h.x1 + 3 * (2 * i + r);
            double rad = 1.0 + r;
            p0[0] = p1[0] = rad * cos(th);
            p0[1] = p1[1] = rad * sin(th);
            p0[2] = 0.05 * th;
            p1[2] = 0.05 * (3.0 * pi - th);
        }
    }
    for (int i = 0; i < SEG; i++) {
        int32_t in0 = 2 * i, out0 = 2 * i + 1, in1 = 2 * i + 2, out1 = 2 * i + 3;
        int32_t* t = h.tri + 6 * i;
        t[0] = in0, t[1] = out0, t[2] = out1;
        t[3] = in0, t[4] = out1, t[5] = in1;
    }
    contour_case(&h, pool, "helical strip", 2, SEG / 3, 10); /* turns: stations 2 pi apart */
    soup_free(&h);

    /* two 6 x 6 squares of 2 triangles a cell, the upper one moving down
     * through the lower one, shifted by a third of a cell */
    enum { N = 6 };
    int32_t nv1 = (N + 1) * (N + 1);
    soup q = {2 * nv1, 4 * N * N, malloc(sizeof(double) * 6 * (size_t)nv1), malloc(sizeof(double) * 6 * (size_t)nv1),
              malloc(sizeof(int32_t) * 12 * N * N)};
    for (int m = 0; m < 2; m++)
        for (int j = 0; j <= N; j++)
            for (int i = 0; i <= N; i++) {
                int32_t v = m * nv1 + j * (N + 1) + i;
                double sh = m ? 1.0 / 3.0 : 0.0;
                q.x0[3 * v] = q.x1[3 * v] = i + sh;
                q.x0[3 * v + 1] = q.x1[3 * v + 1] = j + sh;
                q.x0[3 * v + 2] = m ? 0.5 : 0.0;
                q.x1[3 * v + 2] = m ? -0.5 : 0.0;
            }
    int32_t nt = 0;
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                int32_t a = m * nv1 + j * (N + 1) + i, b = a + 1, c = a + N + 1, d = c + 1;
                int32_t* t = q.tri + 3 * nt;
                t[0] = a, t[1] = b, t[2] = d;
                t[3] = a, t[4] = d, t[5] = c;
                nt += 2;
            }
    contour_case(&q, pool, "two squares", nv1, 1, 10);

    /* An open fan of six triangles around vertex 0, rim vertex j (1..7)
     * at 50 (j - 1) degrees, rising by 0.02 a step; all static but the
     * last rim vertex, which swings round under the first triangle: the
     * contour is star-shaped at t = 0 and stops being so during the step,
     * when that vertex passes through the first triangle (only the test
     * over the whole step refuses it; one at t = 0 alone would cull it). */
    soup fan = {8, 6, malloc(sizeof(double) * 24), malloc(sizeof(double) * 24), malloc(sizeof(int32_t) * 18)};
    const double deg = pi / 180.0;
    for (int k = 0; k < 3; k++) fan.x0[k] = fan.x1[k] = 0.0;
    for (int j = 1; j <= 7; j++) {
        double a = 50.0 * (j - 1) * deg;
        fan.x0[3 * j] = fan.x1[3 * j] = cos(a);
        fan.x0[3 * j + 1] = fan.x1[3 * j + 1] = sin(a);
        fan.x0[3 * j + 2] = fan.x1[3 * j + 2] = 0.02 * (j - 1);
    }
    fan.x1[21] = 0.8 * cos(370.0 * deg);
    fan.x1[22] = 0.8 * sin(370.0 * deg);
    fan.x1[23] = -0.01;
    for (int j = 0; j < 6; j++) {
        fan.tri[3 * j] = 0;
        fan.tri[3 * j + 1] = j + 1;
        fan.tri[3 * j + 2] = j + 2;
    }
    contour_case(&fan, pool, "swinging fan", 1, 3, 1);
    soup_free(&fan);
    soup_free(&q);
}

/* Culling on folded, noisy sheets moving into themselves (fixed seeds,
 * three noise levels, so that both narrow and wide cones occur; 300 with
 * HY_TEST_FULL=1): every
 * pair the exact test reports among the brute-force box pairs is still a
 * candidate; some nodes are culled, and some whose cones pass are refused
 * by their contours. */
/* A grid (in the x-z plane) as a wave along x, height along y, wave
 * number k, amplitude amp, positions jittered by noise; over the step
 * (move = 1) its crests lean over and fall through the next fold, and
 * `move` scales that motion. */
static void wave_sheet(const hy_mesh_view* v, soup* s, double k, double amp, double noise, double move) {
    for (int32_t i = 0; i < v->vertex_count; i++) {
        const double* p = v->positions + 3 * i;
        double ph = k * p[0];
        s->x0[3 * i] = p[0] + noise * (2 * urand() - 1);
        s->x0[3 * i + 1] = amp * sin(ph) + noise * (2 * urand() - 1);
        s->x0[3 * i + 2] = p[2] + noise * (2 * urand() - 1);
        s->x1[3 * i] = s->x0[3 * i] + move * 0.6 * amp * cos(ph) / k * 6.0;
        s->x1[3 * i + 1] = s->x0[3 * i + 1] - move * 0.5 * amp * sin(ph);
        s->x1[3 * i + 2] = s->x0[3 * i + 2];
    }
}

/* A 20 x 20 grid (in *g, viewed in *v) as a soup over its triangles, the
 * positions to fill; 0 when the grid cannot be made. */
static int grid_soup(hy_mesh** g, hy_mesh_view* v, soup* s) {
    CHECK_OK(hy_mesh_grid(20, 20, 1.0, 1.0, g));
    if (!*g) return 0;
    *v = hy_mesh_get_view(*g);
    int32_t nv = v->vertex_count;
    *s = (soup){nv, v->triangle_count, malloc(sizeof(double) * 3 * (size_t)nv),
                malloc(sizeof(double) * 3 * (size_t)nv), (int32_t*)v->triangles};
    return 1;
}

static void test_cull_sheets(hy_pool* pool) {
    hy_mesh* g = NULL;
    hy_mesh_view v;
    soup s;
    if (!grid_soup(&g, &v, &s)) return;
    hy_traverser* tr = hy_traverser_create();
    int64_t hits_total = 0, culled_total = 0, refused_total = 0;
    /* HY_TEST_FULL=1: 300 sheets, wave numbers and amplitudes drawn */
    int full = getenv("HY_TEST_FULL") && atoi(getenv("HY_TEST_FULL"));
    int trials = full ? 300 : 9;
    for (int trial = 0; trial < trials; trial++) {
        double noise = trial % 3 == 0 ? 0.001 : trial % 3 == 1 ? 0.005 : 0.02;
        double k = trial < 9 ? 8.0 + trial : 4.0 + 14.0 * urand();
        double amp = trial < 9 ? 0.25 + 0.02 * trial : 0.05 + 0.4 * urand();
        wave_sheet(&v, &s, k, amp, noise, 1.0);
        plist all = {0}, hits = {0}, got = {0};
        brute(&s, &s, 0, 0.0, &all);
        colliding(&all, s.x0, s.x1, &hits);
        canon_sort(&hits);
        hy_bvh* b = NULL;
        hy_candidates c = {0};
        CHECK_OK(hy_bvh_create(s.tri, s.nt, s.nv, &b));
        if (b && tr) {
            CHECK_OK(hy_bvh_build(b, s.x0, s.x1, 0.0, pool));
            CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &c));
            to_plist(&c, &got);
            CHECK(missing(&hits, &got) == 0);
            hits_total += hits.n;
            /* nodes the marking reached (none below a culled one) whose
             * cone passed but which were not culled: refused by the
             * contour */
            int32_t stack[128];
            int sp = 0;
            stack[sp++] = 0;
            while (sp > 0) {
                int32_t i = stack[--sp];
                if (b->self_free[i]) {
                    culled_total++;
                    continue;
                }
                refused_total += b->cones[i].c > 1e-6;
                if (b->nodes[i].count == 0 && sp + 2 <= 128) {
                    stack[sp++] = b->nodes[i].first;
                    stack[sp++] = b->nodes[i].first + 1;
                }
            }
        }
        hy_candidates_free(&c);
        hy_bvh_destroy(b);
        free(all.v);
        free(hits.v);
        free(got.v);
    }
    fprintf(stderr, "folded sheets (%d): %lld colliding pairs, %lld nodes culled, %lld refused by the contour\n",
            trials, (long long)hits_total, (long long)culled_total, (long long)refused_total);
    CHECK(hits_total > 100);
    CHECK(culled_total > 10);
    CHECK(refused_total > 10);
    hy_traverser_destroy(tr);
    free(s.x0);
    free(s.x1);
    hy_mesh_destroy(g);
}

/* Self culling with a thickness d: every pair of features that share no
 * vertex and come within d during the step (brute force and the exact
 * test) must still be a candidate. Returns the nodes culled; *pairs gets
 * the pairs within d, *kept the candidates with culling, *all without. */
static int64_t cull_within(soup* s, hy_pool* pool, double d, int64_t* pairs, int64_t* kept, int64_t* all_count) {
    plist all = {0}, want = {0}, got = {0};
    brute(s, s, 0, d, &all);
    within(&all, s->x0, s->x1, d, &want);
    hy_bvh* b = NULL;
    hy_traverser* tr = hy_traverser_create();
    hy_candidates c = {0};
    int64_t culled = 0;
    CHECK_OK(hy_bvh_create(s->tri, s->nt, s->nv, &b));
    if (b && tr) {
        CHECK_OK(hy_bvh_build(b, s->x0, s->x1, d, pool));
        CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &c));
        to_plist(&c, &got);
        CHECK(missing(&want, &got) == 0);
        for (int32_t i = 0; i < b->node_count; i++) culled += b->self_free[i];
        *kept = c.count;
        b->self_cull = 0;
        CHECK_OK(hy_bvh_build(b, s->x0, s->x1, d, pool));
        CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &c));
        *all_count = c.count;
    }
    *pairs = want.n;
    hy_candidates_free(&c);
    hy_traverser_destroy(tr);
    hy_bvh_destroy(b);
    free(all.v);
    free(want.v);
    free(got.v);
    return culled;
}

/* Culling with a thickness (hy_bvh.self_cull): the projected altitudes
 * and the contour's clearance must both exceed it.
 *  - A flat fan of eight fat triangles around a centre, open by a notch
 *    of 0.01 between its first and last spokes: one narrow cone, a
 *    star-shaped contour, altitudes near 0.5, yet the last rim vertex is
 *    0.01 from the first spoke (a vertex-face and edge-edge pairs that
 *    share no vertex). At d = 0.02 the root must not be culled and those
 *    pairs must be candidates; at d = 0.005 nothing is within d and the
 *    root is culled.
 *  - The folded sheets of test_cull_sheets at several thicknesses, below
 *    and above the grid's altitudes (0.035): nothing within d missed. */
static void test_cull_thickness(hy_pool* pool) {
    {
        enum { K = 8 };
        double eps = 0.01;
        soup s = {K + 2, K, malloc(sizeof(double) * 3 * (K + 2)), malloc(sizeof(double) * 3 * (K + 2)),
                  malloc(sizeof(int32_t) * 3 * K)};
        /* vertex 0 the centre; rim 1..K+1 at +eps/2, then 90..270 degrees
         * in 30 degree steps, then -eps/2 (so the contour's mean lies away
         * from the notch and the contour is star-shaped around it) */
        double ang[K + 1];
        ang[0] = eps / 2;
        for (int i = 1; i < K; i++) ang[i] = M_PI / 2 + (i - 1) * M_PI / 6;
        ang[K] = 2 * M_PI - eps / 2;
        s.x0[0] = s.x0[1] = s.x0[2] = 0.0;
        for (int i = 0; i <= K; i++) {
            s.x0[3 * (i + 1)] = cos(ang[i]);
            s.x0[3 * (i + 1) + 1] = sin(ang[i]);
            s.x0[3 * (i + 1) + 2] = 0.0;
        }
        for (int i = 0; i < 3 * (K + 2); i++) s.x1[i] = s.x0[i] + (i % 3 == 2 ? 0.003 : 0.001);
        for (int i = 0; i < K; i++) {
            s.tri[3 * i] = 0;
            s.tri[3 * i + 1] = i + 1;
            s.tri[3 * i + 2] = i + 2;
        }
        hy_bvh* b = NULL;
        CHECK_OK(hy_bvh_create(s.tri, s.nt, s.nv, &b));
        if (b) {
            CHECK_OK(hy_bvh_build(b, s.x0, s.x1, 0.02, pool));
            CHECK(b->cones[0].c > 0.99);
            CHECK(b->cones[0].c * b->cones[0].g > 0.4); /* the altitudes pass */
            CHECK(b->self_free[0] == 0);                  /* the contour refuses */
            CHECK_OK(hy_bvh_build(b, s.x0, s.x1, 0.005, pool));
            CHECK(b->self_free[0] == 1);
        }
        hy_bvh_destroy(b);
        int64_t pairs = 0, kept = 0, all = 0;
        CHECK(cull_within(&s, pool, 0.02, &pairs, &kept, &all) == 0);
        fprintf(stderr, "notched fan: %lld pairs within 0.02\n", (long long)pairs);
        CHECK(pairs >= 2);
        CHECK(cull_within(&s, pool, 0.005, &pairs, &kept, &all) == 1);
        CHECK(pairs == 0 && kept == 0 && all > 0);
        soup_free(&s);
    }
    hy_mesh* g = NULL;
    hy_mesh_view v;
    soup s;
    if (!grid_soup(&g, &v, &s)) return;
    const double ds[4] = {0.002, 0.01, 0.03, 0.05};
    /* kind 0: the folding sheets (crests fall through the next fold, and
     * triangles shear by cells: few nodes can cull); kind 1: the same
     * waves moving a few hundredths of a cell (no contact: most of the
     * sheet culls while d is under its altitudes) */
    for (int kind = 0; kind < 2; kind++) {
        int64_t culled[4] = {0, 0, 0, 0}, pairs[4] = {0, 0, 0, 0}, kept[4] = {0, 0, 0, 0}, all[4] = {0, 0, 0, 0};
        for (int trial = 0; trial < 6; trial++) {
            double k = 8.0 + trial, amp = 0.25 + 0.02 * trial, noise = trial % 2 ? 0.001 : 0.004;
            double move = kind == 0 ? 1.0 : 0.02;
            wave_sheet(&v, &s, k, amp, noise, move);
            for (int q = 0; q < 4; q++) {
                int64_t n = 0, nk = 0, na = 0;
                culled[q] += cull_within(&s, pool, ds[q], &n, &nk, &na);
                pairs[q] += n;
                kept[q] += nk;
                all[q] += na;
            }
        }
        fprintf(stderr, "%s sheets, thickness 0.002/0.01/0.03/0.05:\n", kind == 0 ? "folding" : "waving");
        for (int q = 0; q < 4; q++)
            fprintf(stderr, "  %g: %lld pairs within, %lld nodes culled, %lld candidates (%lld without culling)\n",
                    ds[q], (long long)pairs[q], (long long)culled[q], (long long)kept[q], (long long)all[q]);
        if (kind == 0) {
            CHECK(pairs[0] > 1000 && pairs[3] > pairs[0]);
            CHECK(culled[0] > 0);
        } else {
            /* most of the work goes while d is under the altitudes */
            CHECK(kept[0] * 4 < all[0] && kept[1] * 4 < all[1]);
            CHECK(kept[3] > kept[1]);
        }
    }
    free(s.x0);
    free(s.x1);
    hy_mesh_destroy(g);
}

/* The moving-box test as first written (axis by axis, with branches):
 * hy_mbox_overlap must give the same answer on every input. */
static int mbox_reference(const hy_mbox* a, const hy_mbox* b) {
    double lo = 0.0, hi = 1.0;
    for (int k = 0; k < 3; k++) {
        double g0 = b->hi0[k] - a->lo0[k], g1 = b->hi1[k] - a->lo1[k];
        double h0 = a->hi0[k] - b->lo0[k], h1 = a->hi1[k] - b->lo1[k];
        if ((g0 < 0 && g1 < 0) || (h0 < 0 && h1 < 0)) return 0;
        if (g0 < 0 || g1 < 0) {
            double t = g0 / (g0 - g1);
            if (g0 < 0) {
                if (t > lo) lo = t;
            } else if (t < hi) {
                hi = t;
            }
        }
        if (h0 < 0 || h1 < 0) {
            double t = h0 / (h0 - h1);
            if (h0 < 0) {
                if (t > lo) lo = t;
            } else if (t < hi) {
                hi = t;
            }
        }
    }
    return lo <= hi + 0x1p-48;
}

/* A random moving box near `centre` of size up to `size`, moving by up to
 * `motion`; some bounds snapped to shared values so that touching and equal
 * bounds (the ties) come up often. */
static void mbox_random(hy_mbox* m, double centre, double size, double motion) {
    for (int k = 0; k < 3; k++) {
        double c0 = centre + size * (2 * urand() - 1), c1 = c0 + motion * (2 * urand() - 1);
        double w0 = size * urand(), w1 = size * urand();
        if (urand() < 0.2) {
            c0 = centre;
            w0 = 0.0;
        }
        if (urand() < 0.2) {
            c1 = centre;
            w1 = 0.0;
        }
        m->lo0[k] = c0 - w0;
        m->hi0[k] = c0 + w0;
        m->lo1[k] = c1 - w1;
        m->hi1[k] = c1 + w1;
    }
}

static void test_box_tests(void) {
    int64_t mismatch = 0, gate_lost = 0, shift_lost = 0, hits = 0, bad_float = 0, n = 200000;
    for (int64_t i = 0; i < n; i++) {
        /* scales from 1e-9 to 1e6 and offsets far from the origin */
        double scale = pow(10.0, -9.0 + 15.0 * urand()), centre = (urand() < 0.5 ? 0.0 : 1e3) * (2 * urand() - 1);
        hy_mbox a, b;
        mbox_random(&a, centre, scale, scale * 4 * urand());
        mbox_random(&b, centre, scale, scale * 4 * urand());
        int r = hy_mbox_overlap(&a, &b);
        hits += r;
        mismatch += r != mbox_reference(&a, &b);
        hy_fbox fa, fb;
        hy_fbox_from(&a, &fa);
        hy_fbox_from(&b, &fb);
        gate_lost += r && !hy_fbox_overlap(&fa, &fb);
        /* the conversion: each bound the scalar rounding, padding zero */
        for (int k = 0; k < 3; k++)
            bad_float += fa.lo0[k] != hy_float_down(a.lo0[k]) || fa.hi0[k] != hy_float_up(a.hi0[k]) ||
                         fa.lo1[k] != hy_float_down(a.lo1[k]) || fa.hi1[k] != hy_float_up(a.hi1[k]) ||
                         !((double)fa.lo0[k] <= a.lo0[k] && (double)fa.hi1[k] >= a.hi1[k]);
        bad_float += fa.lo0[3] != 0.0f || fa.hi0[3] != 0.0f || fa.lo1[3] != 0.0f || fa.hi1[3] != 0.0f;
        /* a moved by e, in doubles and as the float gate sees it */
        double e[3];
        for (int k = 0; k < 3; k++) e[k] = scale * 3 * (2 * urand() - 1) + (urand() < 0.1 ? 1e4 : 0.0);
        hy_mbox as;
        hy_mbox_shift(&a, e, &as);
        float elo[4], ehi[4];
        hy_fbox_shift_range(e, elo, ehi);
        shift_lost += hy_mbox_overlap(&as, &b) && !hy_fbox_overlap_shift(&fa, elo, ehi, &fb);
    }
    /* Beyond the float range: the gate still passes what the double test
     * passes (boxes near 1e39 touching, far from each other's reach). */
    for (int i = 0; i < 1000; i++) {
        hy_mbox a, b;
        mbox_random(&a, 1e39, 1e37, 1e37);
        mbox_random(&b, 1e39, 1e37, 1e37);
        hy_fbox fa, fb;
        hy_fbox_from(&a, &fa);
        hy_fbox_from(&b, &fb);
        gate_lost += hy_mbox_overlap(&a, &b) && !hy_fbox_overlap(&fa, &fb);
    }
    /* NaN bounds keep the pair in both tests. */
    hy_mbox a, b;
    mbox_random(&a, 0.0, 1.0, 1.0);
    b = a;
    b.lo1[1] = NAN;
    CHECK(hy_mbox_overlap(&a, &b) == mbox_reference(&a, &b));
    fprintf(stderr, "box tests: %lld of %lld overlap; %lld mismatches, %lld lost by the gate, %lld shifted\n",
            (long long)hits, (long long)n, (long long)mismatch, (long long)gate_lost, (long long)shift_lost);
    CHECK(hits > n / 10 && hits < n - n / 10); /* both answers well represented */
    CHECK(mismatch == 0);
    CHECK(gate_lost == 0);
    CHECK(shift_lost == 0);
    CHECK(bad_float == 0);
}

/* Brute force over owned features: the sheet's feature pairs whose boxes
 * (unions of the BVH's vertex boxes) meet, as boxes_meet says. */
static void sheet_pairs(const hy_bvh* b, const int32_t* tri, int32_t nt, int32_t nv, const int32_t* e, int32_t ne,
                        int single, plist* out) {
    const hy_mbox* vm = b->vertex_mboxes;
    for (int32_t t = 0; t < nt; t++) {
        const int32_t* f = tri + 3 * t;
        hy_mbox tb;
        hy_mbox_union(&tb, &vm[f[0]], &vm[f[1]]);
        hy_mbox_union(&tb, &tb, &vm[f[2]]);
        for (int32_t p = 0; p < nv; p++)
            if (p != f[0] && p != f[1] && p != f[2] && boxes_meet(&vm[p], &tb, single))
                push(out, (hy_feature_pair){{p, f[0], f[1], f[2]}, HY_FEATURE_VF});
    }
    for (int32_t i = 0; i < ne; i++) {
        hy_mbox ea;
        hy_mbox_union(&ea, &vm[e[2 * i]], &vm[e[2 * i + 1]]);
        for (int32_t j = i + 1; j < ne; j++) {
            const int32_t* p = e + 2 * i;
            const int32_t* q = e + 2 * j;
            if (p[0] == q[0] || p[0] == q[1] || p[1] == q[0] || p[1] == q[1]) continue;
            hy_mbox eb;
            hy_mbox_union(&eb, &vm[q[0]], &vm[q[1]]);
            if (boxes_meet(&ea, &eb, single))
                push(out, (hy_feature_pair){{p[0], p[1], q[0], q[1]}, HY_FEATURE_EE});
        }
    }
    canon_sort(out);
}

/* A crumpled sheet (a grid with random motion, no culling): self traversal
 * gives exactly the feature pairs whose single-precision boxes meet (brute
 * force with hy_fbox_overlap on hy_fbox_from of the unions of the BVH's
 * own double vertex boxes), for any pool; that includes every pair whose
 * double boxes meet (hy_mbox_overlap), and only a few more. The gate boxes
 * the BVH makes by float unions are hy_fbox_from of the double unions, bit
 * for bit. */
static void test_sheet(hy_pool* pool2) {
    hy_mesh* g = NULL;
    CHECK_OK(hy_mesh_grid(24, 24, 1.0, 1.0, &g));
    if (!g) return;
    hy_mesh_view v = hy_mesh_get_view(g);
    int32_t nv = v.vertex_count, nt = v.triangle_count;
    double* x0 = malloc(sizeof(double) * 3 * (size_t)nv);
    double* x1 = malloc(sizeof(double) * 3 * (size_t)nv);
    for (int32_t i = 0; i < 3 * nv; i++) {
        /* folded onto itself: y from a sine of x, plus noise; cells ~0.04 */
        x0[i] = v.positions[i] + 0.02 * (2 * urand() - 1);
        if (i % 3 == 1) x0[i] += 0.3 * sin(12.0 * v.positions[i - 1]);
        x1[i] = x0[i] + 0.03 * (2 * urand() - 1);
    }
    hy_bvh* b = NULL;
    CHECK_OK(hy_bvh_create(v.triangles, nt, nv, &b));
    if (!b) return;
    b->self_cull = 0;
    CHECK_OK(hy_bvh_build(b, x0, x1, 0.0, pool2));
    hy_traverser* tr = hy_traverser_create();
    hy_candidates c0 = {0}, c2 = {0};
    CHECK_OK(hy_bvh_traverse_self(tr, b, NULL, &c0));
    CHECK_OK(hy_bvh_traverse_self(tr, b, pool2, &c2));
    CHECK(same_list(&c0, &c2));
    CHECK(same_without_simd(tr, b, NULL, pool2, &c0));
    plist want = {0}, dbl = {0}, got = {0};
    const hy_mbox* vm = b->vertex_mboxes;
    soup s = {nv, nt, x0, x1, (int32_t*)v.triangles};
    int32_t* e = malloc(sizeof(int32_t) * 6 * (size_t)nt);
    int32_t ne = edges_of(&s, e);
    sheet_pairs(b, v.triangles, nt, nv, e, ne, 1, &want);
    sheet_pairs(b, v.triangles, nt, nv, e, ne, 0, &dbl);
    canon_sort(&want);
    to_plist(&c0, &got);
    fprintf(stderr, "sheet: %lld candidates (brute force %lld; on the double boxes %lld)\n", (long long)got.n,
            (long long)want.n, (long long)dbl.n);
    CHECK(want.n > 1000);
    CHECK(count_dupes(&got) == 0);
    CHECK(got.n == want.n && missing(&want, &got) == 0 && missing(&got, &want) == 0);
    CHECK(missing(&dbl, &got) == 0 && got.n - dbl.n <= dbl.n / 1000);
    /* refit after more motion: the same again */
    for (int32_t i = 0; i < 3 * nv; i++) x1[i] = x0[i] + 0.05 * (2 * urand() - 1);
    hy_bvh_refit(b, x0, x1, 0.0, pool2);
    CHECK(hy_bvh_check(b));
    /* every vertex's, triangle's and owned edge's gate box is hy_fbox_from
     * of its double box (a triangle's and an edge's the union of its
     * vertices') */
    int64_t bad_edges = 0, features = 0;
    for (int32_t i = 0; i < nv; i++) {
        hy_fbox f;
        hy_fbox_from(&vm[i], &f);
        bad_edges += memcmp(&f, &b->vertex_fboxes[i], sizeof f) != 0;
    }
    for (int32_t i = 0; i < nt; i++) {
        const hy_bvh_slot* sl = &b->slots[i];
        CHECK(sl->v[0] == b->triangles[3 * b->order[i]]);
        hy_mbox u;
        hy_fbox f;
        hy_mbox_union(&u, &vm[sl->v[0]], &vm[sl->v[1]]);
        hy_mbox_union(&u, &u, &vm[sl->v[2]]);
        hy_fbox_from(&u, &f);
        bad_edges += memcmp(&f, &b->leaf_fboxes[i], sizeof f) != 0;
        int m = 0;
        for (int k = 0; k < 3; k++)
            if (sl->owned & HY_BVH_OWN_EDGE(k)) {
                hy_mbox_union(&u, &vm[sl->v[k]], &vm[sl->v[(k + 1) % 3]]);
                hy_fbox_from(&u, &f);
                bad_edges += memcmp(&f, &b->feature_fboxes[sl->feature + m++], sizeof f) != 0;
            }
        /* then its owned vertices' boxes, copied */
        for (int k = 0; k < 3; k++)
            if (sl->owned & HY_BVH_OWN_VERTEX(k))
                bad_edges += memcmp(&b->vertex_fboxes[sl->v[k]], &b->feature_fboxes[sl->feature + m++], sizeof f) != 0;
        CHECK(m == sl->ne + sl->nv);
        features += m;
    }
    CHECK(features == b->feature_count);
    CHECK(bad_edges == 0);
    free(e);
    free(want.v);
    free(dbl.v);
    free(got.v);
    hy_candidates_free(&c0);
    hy_candidates_free(&c2);
    hy_traverser_destroy(tr);
    hy_bvh_destroy(b);
    free(x0);
    free(x1);
    hy_mesh_destroy(g);
}

/* A build large enough for the parallel binning at the top: the same tree
 * (nodes, order, cost) with no pool, one thread and two. */
static void test_large_build(hy_pool* pool1, hy_pool* pool2) {
    hy_mesh* g = NULL;
    CHECK_OK(hy_mesh_grid(160, 160, 1.0, 1.0, &g));
    if (!g) return;
    hy_mesh_view v = hy_mesh_get_view(g);
    int32_t nv = v.vertex_count;
    double* x1 = malloc(sizeof(double) * 3 * (size_t)nv);
    for (int32_t i = 0; i < 3 * nv; i++) x1[i] = v.positions[i] + 0.01 * (2 * urand() - 1);
    hy_bvh* b[3] = {NULL, NULL, NULL};
    hy_pool* pools[3] = {NULL, pool1, pool2};
    for (int i = 0; i < 3; i++) {
        CHECK_OK(hy_bvh_create(v.triangles, v.triangle_count, nv, &b[i]));
        if (b[i]) CHECK_OK(hy_bvh_build(b[i], v.positions, x1, 0.0, pools[i]));
    }
    if (b[0] && b[1] && b[2]) {
        CHECK(v.triangle_count > 40000);
        CHECK(hy_bvh_check(b[0]));
        for (int i = 1; i < 3; i++) {
            CHECK(b[i]->node_count == b[0]->node_count);
            CHECK(memcmp(b[i]->nodes, b[0]->nodes, sizeof(hy_bvh_node) * (size_t)b[0]->node_count) == 0);
            CHECK(memcmp(b[i]->order, b[0]->order, sizeof(int32_t) * (size_t)v.triangle_count) == 0);
            CHECK(memcmp(b[i]->self_free, b[0]->self_free, (size_t)b[0]->node_count) == 0);
            CHECK(b[i]->cost == b[0]->cost);
        }
    }
    for (int i = 0; i < 3; i++) hy_bvh_destroy(b[i]);
    free(x1);
    hy_mesh_destroy(g);
}

static void test_bad_input(void) {
    hy_bvh* b = (hy_bvh*)1;
    int32_t tri[6] = {0, 1, 2, 0, 1, 7};
    CHECK(hy_bvh_create(tri, 2, 4, &b) == HY_ERR_INVALID_ARG);
    CHECK(b == NULL);
    CHECK(strstr(hy_last_error(), "triangle 1") != NULL);
    int32_t rep[3] = {0, 1, 1};
    CHECK(hy_bvh_create(rep, 1, 3, &b) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "repeats") != NULL);
    /* Traversal before a build is a status, not a crash. */
    int32_t one[3] = {0, 1, 2};
    CHECK_OK(hy_bvh_create(one, 1, 3, &b));
    hy_traverser* tr = hy_traverser_create();
    hy_candidates c = {0};
    CHECK(hy_bvh_traverse_self(tr, b, NULL, &c) == HY_ERR_INVALID_ARG);
    hy_traverser_destroy(tr);
    hy_bvh_destroy(b);
}

/* hy_bvh_refit_vertices against hy_bvh_refit: two trees of one waving
 * 20 x 20 sheet built alike, then over rounds of the same x0 with a few
 * vertices' x1 moved each round (as the response's detection rounds), one
 * refitted whole, the other over the moved vertices only; every box,
 * cone, culling mark, the cost and the traversal's candidates must be the
 * same, at distance 0 and 2 mm, with some nodes culled and some not. */
static int same_bytes(const void* a, const void* b, size_t n) { return memcmp(a, b, n) == 0; }

static int same_trees(const hy_bvh* a, const hy_bvh* b) {
    size_t nn = (size_t)a->node_count, nt = (size_t)a->triangle_count, nv = (size_t)a->vertex_count;
    if (a->node_count != b->node_count || a->cost != b->cost) return 0;
    for (size_t i = 0; i < nn; i++)
        if (!same_bytes(&a->nodes[i].box, &b->nodes[i].box, sizeof a->nodes[i].box)) return 0;
    return same_bytes(a->node_fboxes, b->node_fboxes, sizeof *a->node_fboxes * nn) &&
           same_bytes(a->node_area, b->node_area, sizeof *a->node_area * nn) &&
           same_bytes(a->self_free, b->self_free, nn) && same_bytes(a->cones, b->cones, sizeof *a->cones * nn) &&
           same_bytes(a->leaf_fboxes, b->leaf_fboxes, sizeof *a->leaf_fboxes * nt) &&
           same_bytes(a->triangle_normals, b->triangle_normals, sizeof *a->triangle_normals * nt) &&
           same_bytes(a->triangle_boxes, b->triangle_boxes, sizeof *a->triangle_boxes * nt) &&
           same_bytes(a->leaf_soa, b->leaf_soa, sizeof(float) * 12 * (size_t)a->leaf_soa_stride) &&
           same_bytes(a->feature_fboxes, b->feature_fboxes, sizeof *a->feature_fboxes * (size_t)a->feature_count) &&
           same_bytes(a->vertex_boxes, b->vertex_boxes, sizeof *a->vertex_boxes * nv) &&
           same_bytes(a->vertex_mboxes, b->vertex_mboxes, sizeof *a->vertex_mboxes * nv) &&
           same_bytes(a->vertex_fboxes, b->vertex_fboxes, sizeof *a->vertex_fboxes * nv);
}

static void test_refit_vertices(hy_pool* pool) {
    hy_mesh* g = NULL;
    hy_mesh_view v;
    soup s;
    if (!grid_soup(&g, &v, &s)) return;
    hy_traverser* tr = hy_traverser_create();
    int32_t* moved = malloc(sizeof(int32_t) * (size_t)s.nv);
    int64_t rounds = 0, differ = 0, culled = 0, unculled = 0, moved_total = 0;
    for (int trial = 0; trial < 4 && tr && moved; trial++) {
        double d = trial & 1 ? 0.002 : 0.0;
        wave_sheet(&v, &s, 9.0 + trial, 0.3, 0.005, 0.3);
        hy_bvh *a = NULL, *b = NULL;
        CHECK_OK(hy_bvh_create(s.tri, s.nt, s.nv, &a));
        CHECK_OK(hy_bvh_create(s.tri, s.nt, s.nv, &b));
        if (!a || !b) {
            hy_bvh_destroy(a);
            hy_bvh_destroy(b);
            break;
        }
        CHECK_OK(hy_bvh_build(a, s.x0, s.x1, d, pool));
        CHECK_OK(hy_bvh_build(b, s.x0, s.x1, d, pool));
        for (int r = 0; r < 12; r++) {
            /* a patch of vertices (or, every third round, scattered ones)
             * moved at the end of the step */
            int32_t n = 0, c = (int32_t)(urand() * s.nv);
            for (int32_t i = 0; i < s.nv; i++) {
                int near = r % 3 == 2 ? urand() < 0.05 : abs(i % 20 - c % 20) + abs(i / 20 - c / 20) < 3;
                if (!near) continue;
                moved[n++] = i;
                for (int k = 0; k < 3; k++) s.x1[3 * i + k] += 0.02 * (2 * urand() - 1);
            }
            hy_bvh_refit(a, s.x0, s.x1, d, pool);
            hy_bvh_refit_vertices(b, s.x0, s.x1, d, moved, n, pool);
            hy_candidates ca = {0}, cb = {0};
            CHECK_OK(hy_bvh_traverse_self(tr, a, pool, &ca));
            CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &cb));
            differ += !same_trees(a, b) || !same_list(&ca, &cb);
            for (int32_t i = 0; i < a->node_count; i++) {
                culled += a->self_free[i];
                unculled += !a->self_free[i] && a->nodes[i].count == 0;
            }
            moved_total += n;
            rounds++;
            hy_candidates_free(&ca);
            hy_candidates_free(&cb);
        }
        hy_bvh_destroy(a);
        hy_bvh_destroy(b);
    }
    fprintf(stderr, "refit of moved vertices: %lld rounds, %lld vertices moved, %lld nodes culled, %lld inner not, %lld differ\n",
            (long long)rounds, (long long)moved_total, (long long)culled, (long long)unculled, (long long)differ);
    CHECK(rounds == 48);
    CHECK(culled > 10 && unculled > 10);
    CHECK(differ == 0);
    free(moved);
    hy_traverser_destroy(tr);
    free(s.x0);
    free(s.x1);
    hy_mesh_destroy(g);
}

int main(void) {
    hy_pool* pool1 = hy_pool_create(1);
    hy_pool* pool2 = hy_pool_create(2);
    test_self(pool1, pool2);
    test_pair(pool2);
    test_cull(pool2);
    test_contour(pool2);
    test_cull_sheets(pool2);
    test_cull_thickness(pool2);
    test_refit_vertices(pool2);
    test_box_tests();
    test_sheet(pool2);
    test_large_build(pool1, pool2);
    test_bad_input();
    /* on a CPU with AVX2 the two gates were compared (else there is one) */
    fprintf(stderr, "eight-wide gate %s: compared with the one-pair gate on %lld traversals\n",
            hy_traverse_simd(-1) ? "on" : "off (no AVX2)", (long long)simd_compared);
    CHECK(!hy_traverse_simd(-1) || simd_compared >= 20);
    hy_pool_destroy(pool1);
    hy_pool_destroy(pool2);
    TEST_END();
}
