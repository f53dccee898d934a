/* What the BVH tests share (tests/test_bvh.c, tests/test_bvh_cull.c):
 * random triangle soups (fixed seeds), pair lists in canonical order, and
 * the brute-force references every traversal is held against (box overlap
 * over all pairs, pairs within a distance, pairs the exact CCD test
 * reports), and the waving sheet. Static inline: each test executable
 * takes what it uses. */
#ifndef HY_TESTS_BVH_SOUP_H
#define HY_TESTS_BVH_SOUP_H

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/bvh.h"
#include "collision/ccd.h"
#include "collision/traverse.h"
#include "hyphys/hyphys.h"
#include "core/pool.h"
#include "test.h"

static uint64_t rng = 0x9E3779B97F4A7C15ull;
static inline double urand(void) {
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
static inline soup soup_make(int32_t nv, int32_t nt, double size, double motion, double drift) {
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

static inline void soup_free(soup* s) {
    free(s->x0);
    free(s->x1);
    free(s->tri);
}

typedef struct plist {
    hy_feature_pair* v;
    int64_t n, cap;
} plist;

static inline void push(plist* l, hy_feature_pair p) {
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->v = realloc(l->v, sizeof *l->v * (size_t)l->cap);
    }
    l->v[l->n++] = p;
}

static inline void canon_sort(plist* l) {
    for (int64_t i = 0; i < l->n; i++) l->v[i] = hy_feature_pair_canonical(l->v[i]);
    if (l->n) qsort(l->v, (size_t)l->n, sizeof *l->v, hy_feature_pair_cmp); /* v is NULL when empty */
}

static inline int64_t count_dupes(const plist* l) {
    int64_t d = 0;
    for (int64_t i = 1; i < l->n; i++) d += hy_feature_pair_cmp(&l->v[i - 1], &l->v[i]) == 0;
    return d;
}

static inline void box_of(const double* x0, const double* x1, const int32_t* v, int n, double off, hy_aabb* b) {
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
static inline int32_t edges_of(const soup* s, int32_t* e) {
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
static inline int boxes_meet(const hy_mbox* a, const hy_mbox* b, int single) {
    if (!single) return hy_mbox_overlap(a, b);
    hy_fbox fa, fb;
    hy_fbox_from(a, &fa);
    hy_fbox_from(b, &fb);
    return hy_fbox_overlap(&fa, &fb);
}

/* Swept boxes a and b overlap: on the doubles, or (single) as traversal
 * tests them with `interpolate` 0, on their single-precision boxes
 * (hy_fbox_from of a moving box with both ends the swept box). */
static inline int swept_meet(const hy_aabb* a, const hy_aabb* b, int single) {
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
static inline void brute_boxes(const soup* A, const soup* B, int32_t boff, double thickness, int single, plist* out) {
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
static inline void brute(const soup* A, const soup* B, int32_t boff, double thickness, plist* out) {
    brute_boxes(A, B, boff, thickness, 0, out);
}

/* Pairs of `all` (positions of the combined numbering in x0/x1) that
 * come within distance d during the step, by the exact test. */
static inline void within(const plist* all, const double* x0, const double* x1, double d, plist* out) {
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
static inline void colliding(const plist* all, const double* x0, const double* x1, plist* out) {
    within(all, x0, x1, 0.0, out);
}

/* Every element of sorted `sub` is in sorted `sup`. */
static inline int64_t missing(const plist* sub, const plist* sup) {
    int64_t miss = 0, j = 0;
    for (int64_t i = 0; i < sub->n; i++) {
        while (j < sup->n && hy_feature_pair_cmp(&sup->v[j], &sub->v[i]) < 0) j++;
        if (j == sup->n || hy_feature_pair_cmp(&sup->v[j], &sub->v[i]) != 0) miss++;
    }
    return miss;
}

static inline int same_list(const hy_candidates* a, const hy_candidates* b) {
    return a->count == b->count && memcmp(a->pairs, b->pairs, sizeof *a->pairs * (size_t)a->count) == 0;
}

static inline void to_plist(const hy_candidates* c, plist* l) {
    l->n = 0;
    for (int64_t i = 0; i < c->count; i++) push(l, c->pairs[i]);
    canon_sort(l);
}

/* c again with the one-pair gate (hy_traverse_simd(0)) where the CPU
 * gates eight pairs at a time: the same list, pair for pair. b NULL: self
 * traversal of a. Counts the comparisons that ran both paths. */
static int64_t simd_compared;
static inline int same_without_simd(hy_traverser* tr, hy_bvh* a, hy_bvh* b, hy_pool* pool, const hy_candidates* c) {
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

/* A grid (in the x-z plane) as a wave along x, height along y, wave
 * number k, amplitude amp, positions jittered by noise; over the step
 * (move = 1) its crests lean over and fall through the next fold, and
 * `move` scales that motion. */
static inline void wave_sheet(const hy_mesh_view* v, soup* s, double k, double amp, double noise, double move) {
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
static inline int grid_soup(hy_mesh** g, hy_mesh_view* v, soup* s) {
    CHECK_OK(hy_mesh_grid(20, 20, 1.0, 1.0, g));
    if (!*g) return 0;
    *v = hy_mesh_get_view(*g);
    int32_t nv = v->vertex_count;
    *s = (soup){nv, v->triangle_count, malloc(sizeof(double) * 3 * (size_t)nv),
                malloc(sizeof(double) * 3 * (size_t)nv), (int32_t*)v->triangles};
    return 1;
}

#endif
