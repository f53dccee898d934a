/* BVH build: binned SAH, top-down, with the SIMD box helpers; the top
 * split breadth first, subtrees in parallel (see collision/bvh.c). */
#include "collision/bvh.h"

#include <float.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "collision/bvh_internal.h"

/* ---- build */

typedef struct node_buf {
    hy_bvh_node* v;
    int32_t n, cap;
} node_buf;

static int node_alloc(node_buf* nb, int32_t count) {
    if (nb->n + count > nb->cap) {
        int32_t cap = nb->cap ? nb->cap : 64;
        while (cap < nb->n + count) cap *= 2;
        hy_bvh_node* nv = realloc(nb->v, sizeof *nv * (size_t)cap);
        if (!nv) return -1;
        nb->v = nv;
        nb->cap = cap;
    }
    int32_t i = nb->n;
    nb->n += count;
    return i;
}

/* A triangle as the build sees it: its box in single precision, rounded
 * outward, with its id beside the low corner (32 bytes). Ranges are
 * partitioned in place in an array of these, so each pass over a range
 * reads memory in sequence instead of through `order`, and moves half the
 * bytes a double box would (the partitions and the binning are most of a
 * build's time, and bound by those bytes). The tree is then built on
 * boxes a little larger than the triangles' (by at most an ulp of a float:
 * the SAH's choices barely move); the node boxes it leaves are those
 * rounded boxes' unions, so they still hold every triangle's. Its centre
 * (twice it: lo + hi, prim_c) is computed where it is read. */
typedef struct prim {
    _Alignas(16) float lo[3];
    int32_t id;
    float hi[3];
    float zero; /* 0: a fourth lane that adds nothing */
} prim;

static inline float prim_c(const prim* p, int k) { return p->lo[k] + p->hi[k]; }

/* Boxes of the build as four float lanes (the fourth unused: the low
 * corner's holds an id's bits, never read). */
#if defined(HY_BVH_SSE2) /* (collision/bvh.h includes the intrinsics) */
typedef __m128 v4;
static inline v4 v4_lo(const prim* p) { return _mm_load_ps(p->lo); }
static inline v4 v4_hi(const prim* p) { return _mm_load_ps(p->hi); }
static inline v4 v4_min(v4 a, v4 b) { return _mm_min_ps(a, b); }
static inline v4 v4_max(v4 a, v4 b) { return _mm_max_ps(a, b); }
/* lo + hi with the id's lane cleared first (its bits may be a denormal) */
static inline v4 v4_centre(const prim* p) {
    const __m128 keep3 = _mm_castsi128_ps(_mm_set_epi32(0, -1, -1, -1));
    return _mm_add_ps(_mm_and_ps(v4_lo(p), keep3), v4_hi(p));
}
static inline v4 v4_splat(float x) { return _mm_set1_ps(x); }
static inline void v4_get(v4 a, float out[4]) { _mm_storeu_ps(out, a); }
#else
typedef struct v4 {
    float f[4];
} v4;
static inline v4 v4_lo(const prim* p) {
    v4 r = {{p->lo[0], p->lo[1], p->lo[2], 0.0f}};
    return r;
}
static inline v4 v4_hi(const prim* p) {
    v4 r = {{p->hi[0], p->hi[1], p->hi[2], 0.0f}};
    return r;
}
static inline v4 v4_min(v4 a, v4 b) {
    for (int k = 0; k < 4; k++) a.f[k] = a.f[k] < b.f[k] ? a.f[k] : b.f[k];
    return a;
}
static inline v4 v4_max(v4 a, v4 b) {
    for (int k = 0; k < 4; k++) a.f[k] = a.f[k] > b.f[k] ? a.f[k] : b.f[k];
    return a;
}
static inline v4 v4_centre(const prim* p) {
    v4 r = {{prim_c(p, 0), prim_c(p, 1), prim_c(p, 2), 0.0f}};
    return r;
}
static inline v4 v4_splat(float x) {
    v4 r = {{x, x, x, x}};
    return r;
}
static inline void v4_get(v4 a, float out[4]) { memcpy(out, a.f, sizeof a.f); }
#endif

typedef struct box4 {
    v4 lo, hi;
} box4;

static inline void box4_empty(box4* a) {
    a->lo = v4_splat(FLT_MAX);
    a->hi = v4_splat(-FLT_MAX);
}

static inline void box4_grow(box4* a, v4 lo, v4 hi) {
    a->lo = v4_min(a->lo, lo);
    a->hi = v4_max(a->hi, hi);
}

static inline void box4_union(box4* r, const box4* a, const box4* b) {
    r->lo = v4_min(a->lo, b->lo);
    r->hi = v4_max(a->hi, b->hi);
}

static inline void box4_get(const box4* a, float lo[4], float hi[4]) {
    v4_get(a->lo, lo);
    v4_get(a->hi, hi);
}

/* Half the surface area, in double (the SAH's sums of products). */
static inline double box4_half_area(const box4* a) {
    float lo[4], hi[4];
    box4_get(a, lo, hi);
    double dx = (double)hi[0] - lo[0], dy = (double)hi[1] - lo[1], dz = (double)hi[2] - lo[2];
    return dx * dy + dy * dz + dz * dx;
}

static inline void box4_aabb(const box4* a, hy_aabb* out) {
    float lo[4], hi[4];
    box4_get(a, lo, hi);
    for (int k = 0; k < 3; k++) {
        out->lo[k] = lo[k];
        out->hi[k] = hi[k];
    }
}

/* Triangle box b as a prim: its bounds rounded outward to floats (as the
 * gate boxes are, hy_float_down and hy_float_up: a few ulps out). */
static inline void prim_make(const hy_aabb* b, int32_t id, prim* q) {
#if defined(HY_BVH_SSE2)
    _mm_store_ps(q->lo, hy_float3(b->lo, 1));
    _mm_store_ps(q->hi, hy_float3(b->hi, 0));
#else
    for (int k = 0; k < 3; k++) {
        q->lo[k] = hy_float_down(b->lo[k]);
        q->hi[k] = hy_float_up(b->hi[k]);
    }
#endif
    q->id = id;
    q->zero = 0.0f;
}

typedef struct build_ctx {
    hy_bvh* b;
    prim* p;
    prim* tmp;     /* as many again: each range partitions through its own part */
    hy_pool* pool; /* for binning the large ranges at the top (NULL = serial) */
} build_ctx;

/* A range of the build with its box and centroid bounds (known from the
 * parent's bins, so no pass of its own computes them). */
typedef struct range_task {
    box4 box, cbox;
    int32_t begin, end;
    int32_t node; /* index in the final array */
} range_task;

static void range_box(const prim* p, int32_t begin, int32_t end, box4* box, box4* cbox) {
    box4_empty(box);
    box4_empty(cbox);
    for (int32_t i = begin; i < end; i++) {
        box4_grow(box, v4_lo(&p[i]), v4_hi(&p[i]));
        v4 c = v4_centre(&p[i]);
        box4_grow(cbox, c, c);
    }
}

static inline int bin_of(float x, float lo, float scale) {
    int i = (int)((x - lo) * scale);
    return i < 0 ? 0 : i >= BINS ? BINS - 1 : i;
}

/* Boxes, centroid bounds and counts of the triangles in each bin. */
typedef struct bins {
    box4 box[BINS], cbox[BINS];
    int32_t cnt[BINS];
} bins;

static void bins_clear(bins* bn) {
    for (int i = 0; i < BINS; i++) {
        box4_empty(&bn->box[i]);
        box4_empty(&bn->cbox[i]);
        bn->cnt[i] = 0;
    }
}

/* Prim q into the bins. */
static inline void bin_add(bins* bn, const prim* q, int axis, float lo, float scale) {
    int bi = bin_of(prim_c(q, axis), lo, scale);
    bn->cnt[bi]++;
    box4_grow(&bn->box[bi], v4_lo(q), v4_hi(q));
    v4 c = v4_centre(q);
    box4_grow(&bn->cbox[bi], c, c);
}

static void bins_merge(bins* into, const bins* from) {
    for (int i = 0; i < BINS; i++) {
        into->cnt[i] += from->cnt[i];
        box4_union(&into->box[i], &into->box[i], &from->box[i]);
        box4_union(&into->cbox[i], &into->cbox[i], &from->cbox[i]);
    }
}

/* Neighbouring prims mostly fall in one bin (ranges are spatially
 * sorted), so each update waited on the last one's stores: large ranges
 * put even and odd prims in two sets of bins, side by side in one loop,
 * merged at the end (min, max and counts merge exactly in any order). */
#define BINS_SPLIT_MIN 256
static void bins_fill(bins* bn, const prim* p, int32_t begin, int32_t end, int axis, float lo, float scale) {
    int32_t i = begin;
    if (end - begin >= BINS_SPLIT_MIN) {
        bins odd;
        bins_clear(&odd);
        for (; i + 1 < end; i += 2) {
            bin_add(bn, &p[i], axis, lo, scale);
            bin_add(&odd, &p[i + 1], axis, lo, scale);
        }
        bins_merge(bn, &odd);
    }
    for (; i < end; i++) bin_add(bn, &p[i], axis, lo, scale);
}

/* Binning of a large range in fixed chunks, in parallel: min, max and
 * counts merge exactly in any order, so the bins (and the tree) are the
 * same for any thread count. */
#define BIN_GRAIN 16384

typedef struct bin_job {
    const prim* p;
    int32_t begin, end;
    int axis;
    float lo, scale;
    bins* part; /* per chunk */
} bin_job;

static void bin_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)worker;
    bin_job* j = vctx;
    bins_clear(&j->part[block]);
    bins_fill(&j->part[block], j->p, j->begin + (int32_t)begin, j->begin + (int32_t)end, j->axis, j->lo, j->scale);
}

static void bins_make(const build_ctx* c, bins* bn, int32_t begin, int32_t end, int axis, float lo, float scale) {
    int32_t n = end - begin;
    bins_clear(bn);
    if (c->pool && n >= 2 * BIN_GRAIN) {
        int64_t nb = hy_pool_blocks(n, BIN_GRAIN);
        bins* part = aligned_alloc(_Alignof(bins), sizeof *part * (size_t)nb);
        if (part) {
            bin_job j = {c->p, begin, end, axis, lo, scale, part};
            hy_pool_for(c->pool, n, BIN_GRAIN, bin_block, &j);
            for (int64_t q = 0; q < nb; q++) bins_merge(bn, &part[q]);
            free(part);
            return;
        }
    }
    bins_fill(bn, c->p, begin, end, axis, lo, scale);
}

/* The axis of the longest extent of cbox (the first of equals). */
static int longest_axis(const box4* cbox, float lo[4], float hi[4]) {
    box4_get(cbox, lo, hi);
    int k = 0;
    for (int a = 1; a < 3; a++)
        if (hi[a] - lo[a] > hi[k] - lo[k]) k = a;
    return k;
}

/* Small ranges: sorted along the longest centroid axis and every split
 * position tried (exact SAH). Binning them would cost more in per-bin work
 * (16 bins cleared and swept) than the few triangles themselves. */
#define SMALL_RANGE 32

static int32_t split_small(const build_ctx* c, const range_task* r, range_task kids[2]) {
    int32_t begin = r->begin, end = r->end;
    int32_t n = end - begin;
    prim* p = c->p + begin;
    float clo[4], chi[4];
    int k = longest_axis(&r->cbox, clo, chi);
    /* Insertion sort by centroid (stable, so ties keep their order) of
     * the keys and positions only, then the prims moved once. */
    float key[SMALL_RANGE];
    uint8_t at[SMALL_RANGE];
    for (int32_t i = 0; i < n; i++) {
        key[i] = prim_c(&p[i], k);
        at[i] = (uint8_t)i;
    }
    int moved = 0;
    for (int32_t i = 1; i < n; i++) {
        float x = key[i];
        uint8_t xi = at[i];
        int32_t j = i;
        while (j > 0 && key[j - 1] > x) {
            key[j] = key[j - 1];
            at[j] = at[j - 1];
            j--;
        }
        moved |= j != i;
        key[j] = x;
        at[j] = xi;
    }
    if (moved) {
        prim* t = c->tmp + begin;
        for (int32_t i = 0; i < n; i++) t[i] = p[at[i]];
        memcpy(p, t, sizeof(prim) * (size_t)n);
    }
    /* left[i] = box of [0, i], right[i] = box of [i, n) */
    box4 left[SMALL_RANGE], right[SMALL_RANGE];
    left[0].lo = v4_lo(&p[0]);
    left[0].hi = v4_hi(&p[0]);
    for (int32_t i = 1; i < n; i++) {
        left[i] = left[i - 1];
        box4_grow(&left[i], v4_lo(&p[i]), v4_hi(&p[i]));
    }
    right[n - 1].lo = v4_lo(&p[n - 1]);
    right[n - 1].hi = v4_hi(&p[n - 1]);
    for (int32_t i = n - 2; i > 0; i--) {
        right[i] = right[i + 1];
        box4_grow(&right[i], v4_lo(&p[i]), v4_hi(&p[i]));
    }
    double best = INFINITY;
    int32_t best_i = -1;
    for (int32_t i = 1; i < n; i++) {
        /* left = [0, i), right = [i, n) */
        double cost = box4_half_area(&left[i - 1]) * (double)i + box4_half_area(&right[i]) * (double)(n - i);
        if (cost < best) {
            best = cost;
            best_i = i;
        }
    }
    double area = box4_half_area(&r->box);
    if (n <= c->b->leaf_size && (area <= 0 || NODE_COST + best / area >= (double)n)) return -1;
    if (best_i < 0) best_i = n / 2; /* NaN costs: halve */
    int32_t mid = begin + best_i;
    kids[0].box = left[best_i - 1];
    kids[1].box = right[best_i];
    box4_empty(&kids[0].cbox);
    box4_empty(&kids[1].cbox);
    for (int32_t i = 0; i < n; i++) {
        v4 cc = v4_centre(&p[i]);
        box4_grow(&kids[i >= best_i].cbox, cc, cc);
    }
    kids[0].begin = begin;
    kids[0].end = mid;
    kids[1].begin = mid;
    kids[1].end = end;
    return mid;
}

/* Split range r by binned SAH; returns the split index, or -1 to make a
 * leaf. kids[0], kids[1] get the children's boxes and centroid bounds. */
static int32_t split_range(const build_ctx* c, const range_task* r, range_task kids[2]) {
    int32_t begin = r->begin, end = r->end;
    int32_t n = end - begin;
    prim* p = c->p;
    if (n <= 1) return -1;
    if (n <= SMALL_RANGE) return split_small(c, r, kids);
    double best = INFINITY;
    int best_axis = -1, best_bin = 0;
    /* Bin along the longest centroid axis only: a third of the work of
     * trying all three, for trees nearly as good (the usual trade). */
    float clo[4], chi[4];
    int k = longest_axis(&r->cbox, clo, chi);
    float ext = chi[k] - clo[k];
    float scale = ext > 0 ? (float)BINS / ext : 0.0f;
    bins bn;
    if (ext > 0) {
        bins_make(c, &bn, begin, end, k, clo[k], scale);
        /* Sweep from the right, then from the left. */
        double right_area[BINS];
        int32_t right_cnt[BINS];
        box4 acc = bn.box[BINS - 1];
        int32_t nacc = 0;
        for (int i = BINS - 1; i > 0; i--) {
            if (i < BINS - 1) box4_union(&acc, &acc, &bn.box[i]);
            nacc += bn.cnt[i];
            right_area[i] = nacc ? box4_half_area(&acc) : 0;
            right_cnt[i] = nacc;
        }
        acc = bn.box[0];
        nacc = 0;
        for (int i = 0; i < BINS - 1; i++) {
            if (i > 0) box4_union(&acc, &acc, &bn.box[i]);
            nacc += bn.cnt[i];
            if (nacc == 0 || right_cnt[i + 1] == 0) continue;
            double cost = box4_half_area(&acc) * nacc + right_area[i + 1] * right_cnt[i + 1];
            if (cost < best) {
                best = cost;
                best_axis = k;
                best_bin = i;
            }
        }
    }
    double area = box4_half_area(&r->box);
    /* Leaf when small and splitting does not pay (NODE_COST per node visit
     * against 1 per triangle test). */
    if (n <= c->b->leaf_size && (best_axis < 0 || area <= 0 || NODE_COST + best / area >= (double)n)) return -1;
    int32_t mid = -1;
    if (best_axis >= 0) {
        /* Stable and branch-free (which side a triangle goes is as good as
         * random, so a branch on it would be mispredicted half the time):
         * each prim is written to the left part in place and to the right
         * part in the range's scratch, and only its side's count moves on. */
        prim* t = c->tmp + begin;
        int32_t nl = 0, nr = 0;
        float lo = clo[best_axis];
        for (int32_t i = begin; i < end; i++) {
            prim x = p[i];
            int right = bin_of(prim_c(&x, best_axis), lo, scale) > best_bin;
            p[begin + nl] = x;
            t[nr] = x;
            nl += !right;
            nr += right;
        }
        memcpy(p + begin + nl, t, sizeof(prim) * (size_t)nr);
        if (nl != 0 && nr != 0) mid = begin + nl;
    }
    if (mid < 0) {
        /* all centroids equal (or one side empty): halve */
        mid = begin + n / 2;
        range_box(p, begin, mid, &kids[0].box, &kids[0].cbox);
        range_box(p, mid, end, &kids[1].box, &kids[1].cbox);
    } else {
        /* The children's bounds are the unions of their bins' (exact). */
        for (int s = 0; s < 2; s++) {
            box4_empty(&kids[s].box);
            box4_empty(&kids[s].cbox);
        }
        for (int i = 0; i < BINS; i++) {
            range_task* kd = &kids[i <= best_bin ? 0 : 1];
            if (!bn.cnt[i]) continue;
            box4_union(&kd->box, &kd->box, &bn.box[i]);
            box4_union(&kd->cbox, &kd->cbox, &bn.cbox[i]);
        }
    }
    kids[0].begin = begin;
    kids[0].end = mid;
    kids[1].begin = mid;
    kids[1].end = end;
    return mid;
}

/* Build range `root` depth first into nb, its root at nb index root.node
 * (already allocated). Returns 0 on allocation failure. */
static int build_subtree(const build_ctx* c, node_buf* nb, const range_task* root) {
    range_task stack[128];
    int sp = 0;
    stack[sp++] = *root;
    while (sp > 0) {
        range_task r = stack[--sp];
        range_task kids[2];
        int32_t mid = split_range(c, &r, kids);
        hy_bvh_node* node = &nb->v[r.node];
        box4_aabb(&r.box, &node->box);
        if (mid < 0) {
            node->first = r.begin;
            node->count = r.end - r.begin;
            continue;
        }
        int32_t first = node_alloc(nb, 2);
        if (first < 0) return 0;
        node = &nb->v[r.node];
        node->first = first;
        node->count = 0;
        kids[0].node = first;
        kids[1].node = first + 1;
        /* The smaller side is taken next and the larger one waits: every
         * waiting range is at least as large as all work above it, so the
         * stack never holds more than log2(n) + 1 ranges, however lopsided
         * the splits (128 covers any int32 count). */
        if (mid - r.begin > r.end - mid) {
            stack[sp++] = kids[0];
            stack[sp++] = kids[1];
        } else {
            stack[sp++] = kids[1];
            stack[sp++] = kids[0];
        }
    }
    return 1;
}

typedef struct sub_ctx {
    const build_ctx* c;
    range_task* tasks;
    node_buf* bufs;
    int* ok;
} sub_ctx;

static void subtree_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    sub_ctx* s = vctx;
    for (int64_t i = begin; i < end; i++) {
        node_buf* nb = &s->bufs[i];
        nb->n = 0;
        range_task r = s->tasks[i];
        r.node = 0;
        if (node_alloc(nb, 1) != 0 || !build_subtree(s->c, nb, &r)) s->ok[i] = 0;
    }
}

/* Ranks and node ranges: topology only, so once per build. */
static void link_nodes(hy_bvh* b) {
    int32_t nt = b->triangle_count;
    for (int32_t i = 0; i < nt; i++) b->rank[b->order[i]] = i;
    for (int32_t i = b->node_count - 1; i >= 0; i--) {
        const hy_bvh_node* n = &b->nodes[i];
        if (n->count) {
            b->range[2 * i] = n->first;
            b->range[2 * i + 1] = n->first + n->count;
        } else {
            b->range[2 * i] = b->range[2 * n->first];
            b->range[2 * i + 1] = b->range[2 * (n->first + 1) + 1];
        }
    }
}

/* Slots in leaf order, and their twins' slots (topology and order only,
 * so once per build; after link_nodes, which makes the ranks), in
 * parallel blocks; the owned edges' offsets follow in one serial pass.
 * Slots read triangles in leaf order, all over the mesh: those a few
 * ahead are asked for early (hints only). */
#define SLOT_AHEAD 8
static void slots_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    hy_bvh* b = vctx;
    for (int64_t i = begin; i < end; i++) {
        if (i + SLOT_AHEAD < end) {
            int32_t ta = b->order[i + SLOT_AHEAD];
            __builtin_prefetch(b->triangles + 3 * (int64_t)ta);
            __builtin_prefetch(b->twin + 3 * (int64_t)ta);
            __builtin_prefetch(b->owned + ta);
        }
        int32_t t = b->order[i];
        hy_bvh_slot* s = &b->slots[i];
        for (int k = 0; k < 3; k++) {
            s->v[k] = b->triangles[3 * t + k];
            s->id[k] = b->vertex_ids ? b->vertex_ids[s->v[k]] : s->v[k];
            int32_t u = b->twin[3 * t + k];
            b->slot_twin[3 * i + k] = u >= 0 ? b->rank[u] : u;
        }
        s->owned = b->owned[t];
        s->nv = s->ne = 0;
        for (int k = 0; k < 3; k++) {
            s->vk[k] = s->ek[k] = 0;
            if (s->owned & HY_BVH_OWN_VERTEX(k)) s->vk[s->nv++] = (uint8_t)k;
            if (s->owned & HY_BVH_OWN_EDGE(k)) s->ek[s->ne++] = (uint8_t)k;
        }
    }
}

void hy_bvh_make_slots(hy_bvh* b, hy_pool* pool) {
    if (pool)
        hy_pool_for(pool, b->triangle_count, 8192, slots_block, b);
    else
        slots_block(b, 0, b->triangle_count, 0, 0);
    int32_t feature = 0;
    for (int32_t i = 0; i < b->triangle_count; i++) {
        b->slots[i].feature = feature;
        feature += b->slots[i].ne + b->slots[i].nv;
    }
}

/* Per step: triangle and owned-feature gate boxes in leaf order (unions of
 * their vertices', hy_fbox_union; an owned vertex's a copy of its box),
 * and when culling the triangles' normal
 * coefficients (leaf order too: the leaf cones read them in sequence). */
#define LEAF_AHEAD 8
void hy_bvh_leaf_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    box_ctx* c = vctx;
    hy_bvh* b = c->b;
    const hy_fbox* vf = b->vertex_fboxes;
    const double* x1 = c->x1 ? c->x1 : c->x0;
    for (int64_t i = begin; i < end; i++) {
        const hy_bvh_slot* s = &b->slots[i];
        /* Slots are in leaf order, vertices in mesh order: the reads of
         * their boxes and positions miss the cache, so those of a slot a
         * few ahead are asked for now (hints only). */
        if (i + LEAF_AHEAD < end) {
            const int32_t* v = b->slots[i + LEAF_AHEAD].v;
            for (int k = 0; k < 3; k++) {
                __builtin_prefetch(&vf[v[k]]);
                if (c->cull) {
                    __builtin_prefetch(c->x0 + 3 * (int64_t)v[k]);
                    __builtin_prefetch(x1 + 3 * (int64_t)v[k]);
                }
            }
        }
        if (c->cull) hy_bvh_triangle_normals(c->x0, x1, s->v, &b->triangle_normals[i]);
        hy_fbox_union(&b->leaf_fboxes[i], &vf[s->v[0]], &vf[s->v[1]]);
        hy_fbox_union(&b->leaf_fboxes[i], &b->leaf_fboxes[i], &vf[s->v[2]]);
        const hy_fbox* lf = &b->leaf_fboxes[i];
        float* soa = b->leaf_soa + i;
        int64_t st = b->leaf_soa_stride;
        for (int k = 0; k < 3; k++) {
            soa[k * st] = lf->lo0[k];
            soa[(3 + k) * st] = lf->hi0[k];
            soa[(6 + k) * st] = lf->lo1[k];
            soa[(9 + k) * st] = lf->hi1[k];
        }
        hy_fbox* f = &b->feature_fboxes[s->feature];
        for (int m = 0; m < s->ne; m++) {
            int k = s->ek[m];
            hy_fbox_union(&f[m], &vf[s->v[k]], &vf[s->v[k == 2 ? 0 : k + 1]]);
        }
        for (int m = 0; m < s->nv; m++) f[s->ne + m] = vf[s->v[s->vk[m]]];
    }
}

void hy_bvh_leaf_data(hy_bvh* b, const double* x0, const double* x1, hy_pool* pool) {
    box_ctx c = {b, x0, x1, 0.0, culling(b)};
    if (pool)
        hy_pool_for(pool, b->triangle_count, 8192, hy_bvh_leaf_block, &c);
    else
        hy_bvh_leaf_block(&c, 0, b->triangle_count, 0, 0);
}

static void finish_tree(hy_bvh* b, const double* x0, const double* x1, int boxes, hy_pool* pool);

/* One split of the build's top round, run on the pool. */
typedef struct top_split {
    range_task r, kids[2];
    int32_t mid;
} top_split;

typedef struct top_job {
    const build_ctx* c;
    top_split* sp;
} top_job;

static void top_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    top_job* j = vctx;
    for (int64_t q = begin; q < end; q++) {
        top_split* t = &j->sp[q];
        t->mid = split_range(j->c, &t->r, t->kids);
    }
}

hy_status hy_bvh_build(hy_bvh* b, const double* x0, const double* x1, double thickness, hy_pool* pool) {
    if (!b || !x0) return hy_fail(HY_ERR_INVALID_ARG, "bvh build: NULL argument");
    hy_bvh_touch(b);
    hy_bvh_primitive_boxes(b, x0, x1, thickness, pool);
    int32_t nt = b->triangle_count;
    build_ctx c = {b, aligned_alloc(64, sizeof(prim) * 2 * (size_t)nt), NULL, pool};
    if (!c.p) return hy_fail(HY_ERR_NOMEM, "bvh build: out of memory");
    c.tmp = c.p + nt;
    for (int32_t t = 0; t < nt; t++) prim_make(&b->triangle_boxes[t], t, &c.p[t]);

    /* Top: split breadth first until SUBTREE_TASKS open ranges; the root's
     * binning runs on the pool, later rounds split their ranges in
     * parallel. */
    node_buf top = {b->nodes, 0, 2 * nt};
    range_task open[2 * SUBTREE_TASKS + 2];
    int nopen = 0;
    node_alloc(&top, 1);
    open[0].begin = 0;
    open[0].end = nt;
    open[0].node = 0;
    range_box(c.p, 0, nt, &open[0].box, &open[0].cbox);
    nopen = 1;
    range_task tasks[2 * SUBTREE_TASKS + 2];
    int ntasks = 0;
    while (nopen > 0) {
        /* Expand every open range this round (deterministic breadth-first).
         * Which ranges split is known before splitting: a range of at least
         * SUBTREE_MIN triangles makes two children (unless leaf_size is at
         * least that, when it may become a leaf instead). */
        range_task next[2 * SUBTREE_TASKS + 2];
        top_split sp[2 * SUBTREE_TASKS + 2];
        int nnext = 0, nsplit = 0;
        for (int i = 0; i < nopen; i++) {
            const range_task* r = &open[i];
            if (r->end - r->begin < SUBTREE_MIN || nopen + nnext + ntasks >= SUBTREE_TASKS) {
                tasks[ntasks++] = *r;
                continue;
            }
            sp[nsplit++].r = *r;
            nnext += 2;
        }
        /* One range: its binning runs on the pool. Several (disjoint
         * ranges of c.p): one per block, each binned serially. */
        if (nsplit == 1 || !pool) {
            for (int i = 0; i < nsplit; i++) sp[i].mid = split_range(&c, &sp[i].r, sp[i].kids);
        } else {
            build_ctx serial = c;
            serial.pool = NULL;
            top_job tj = {&serial, sp};
            hy_pool_for(pool, nsplit, 1, top_block, &tj);
        }
        nnext = 0;
        for (int i = 0; i < nsplit; i++) {
            const range_task* r = &sp[i].r;
            hy_bvh_node* node = &top.v[r->node];
            box4_aabb(&r->box, &node->box);
            if (sp[i].mid < 0) { /* only with a leaf_size >= SUBTREE_MIN */
                node->first = r->begin;
                node->count = r->end - r->begin;
                continue;
            }
            int32_t first = node_alloc(&top, 2);
            node->first = first;
            node->count = 0;
            sp[i].kids[0].node = first;
            sp[i].kids[1].node = first + 1;
            next[nnext++] = sp[i].kids[0];
            next[nnext++] = sp[i].kids[1];
        }
        memcpy(open, next, sizeof(range_task) * (size_t)nnext);
        nopen = nnext;
    }

    /* Subtrees in parallel, each into its own array. */
    node_buf* bufs = calloc((size_t)(ntasks ? ntasks : 1), sizeof *bufs);
    int* ok = malloc(sizeof(int) * (size_t)(ntasks ? ntasks : 1));
    hy_status st = HY_OK;
    if (!bufs || !ok) st = hy_fail(HY_ERR_NOMEM, "bvh build: out of memory");
    if (st == HY_OK) {
        for (int i = 0; i < ntasks; i++) ok[i] = 1;
        sub_ctx s = {&c, tasks, bufs, ok};
        if (pool)
            hy_pool_for(pool, ntasks, 1, subtree_block, &s);
        else
            subtree_block(&s, 0, ntasks, 0, 0);
        /* Splice in task order: local root -> its placeholder, local node
         * i > 0 -> base + i - 1 (children stay after their parents). */
        int32_t n = top.n;
        HY_ASSERT(top.n <= HY_BVH_TOP_MAX && ntasks <= HY_BVH_TOP_MAX);
        b->top_count = top.n;
        b->sub_count = ntasks;
        memset(b->top_root, 0, sizeof b->top_root);
        for (int i = 0; i < ntasks && st == HY_OK; i++) {
            if (!ok[i]) {
                st = hy_fail(HY_ERR_NOMEM, "bvh build: out of memory");
                break;
            }
            node_buf* nb = &bufs[i];
            int32_t base = n;
            b->sub[3 * i] = tasks[i].node;
            b->sub[3 * i + 1] = base;
            b->sub[3 * i + 2] = base + nb->n - 1;
            b->top_root[tasks[i].node] = 1;
            for (int32_t j = 0; j < nb->n; j++) {
                hy_bvh_node nd = nb->v[j];
                if (nd.count == 0) nd.first = base + nd.first - 1;
                b->nodes[j == 0 ? tasks[i].node : base + j - 1] = nd;
            }
            n += nb->n - 1;
        }
        b->node_count = n;
    }
    if (bufs)
        for (int i = 0; i < ntasks; i++) free(bufs[i].v);
    free(bufs);
    free(ok);
    for (int32_t i = 0; i < nt; i++) b->order[i] = c.p[i].id;
    free(c.p);
    if (st != HY_OK) {
        b->node_count = 0;
        return st;
    }
    HY_ASSERT(b->node_count <= 2 * nt);
    finish_tree(b, x0, x1, 0, pool);
    return HY_OK;
}

/* The rest of a build once nodes, order and the top/subtree split are set
 * and the primitive boxes made: what depends on the order, the per-step
 * leaf data, the bottom-up sweep (node boxes too when `boxes`: a build has
 * made them already), the culling marks, and the cost the tree's decay is
 * measured against. */
static void finish_tree(hy_bvh* b, const double* x0, const double* x1, int boxes, hy_pool* pool) {
    link_nodes(b);
    hy_bvh_make_slots(b, pool);
    for (int32_t i = 0; i < b->node_count; i++) {
        b->spans[i].first = b->nodes[i].first;
        b->spans[i].count = b->nodes[i].count;
    }
    hy_bvh_leaf_data(b, x0, x1, pool);
    hy_bvh_sweep_nodes(b, boxes, pool);
    hy_bvh_mark_self_free(b, x0, x1, pool);
    b->built_cost = b->cost;
    b->builds++;
    b->refitted = 0;
}

hy_status hy_bvh_build_like(hy_bvh* b, const hy_bvh* like, const double* x0, const double* x1, double thickness,
                            hy_pool* pool) {
    if (!b || !like || !x0) return hy_fail(HY_ERR_INVALID_ARG, "bvh build like: NULL argument");
    int32_t nt = b->triangle_count;
    if (like->node_count == 0) return hy_fail(HY_ERR_INVALID_ARG, "bvh build like: the model tree is not built");
    if (like->triangle_count != nt || like->vertex_count != b->vertex_count ||
        memcmp(like->triangles, b->triangles, sizeof(int32_t) * 3 * (size_t)nt) != 0)
        return hy_fail(HY_ERR_INVALID_ARG, "bvh build like: the two meshes' triangles differ");
    hy_bvh_touch(b);
    hy_bvh_primitive_boxes(b, x0, x1, thickness, pool);
    memcpy(b->nodes, like->nodes, sizeof(hy_bvh_node) * (size_t)like->node_count);
    b->node_count = like->node_count;
    b->leaf_size = like->leaf_size; /* the build setting the copied leaves were made under */
    memcpy(b->order, like->order, sizeof(int32_t) * (size_t)nt);
    b->top_count = like->top_count;
    b->sub_count = like->sub_count;
    memcpy(b->sub, like->sub, sizeof b->sub);
    memcpy(b->top_root, like->top_root, sizeof b->top_root);
    finish_tree(b, x0, x1, 1, pool);
    return HY_OK;
}
