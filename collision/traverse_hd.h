/* The traversal of one front pair (collision/traverse.h), shared by the CPU
 * (collision/traverse.c) and the CUDA TRAVERSE kernel (collision/traverse.cu):
 * node-pair expansion, the single-precision gate, the triangle-pair to
 * feature-pair enumeration with ownership, the self skip of shared
 * vertices and the emitted vertex ids. HY_HD, so both sides run the same
 * code; the box tests (collision/bvh.h) take their scalar paths on the
 * device, which give the same answers as the CPU's SSE2 ones, so the
 * feature pairs and their order are identical.
 *
 * The data is read through hy_trav_mesh, a view of the hy_bvh arrays a
 * traversal reads (host pointers on the CPU, device copies on the GPU).
 * Nothing here allocates: the caller passes the depth-first stack and the
 * output room; a pair that needs more says so and is run again with more
 * (the CPU grows its buffers; the GPU counts first, then writes). */
#ifndef HY_COLLISION_TRAVERSE_HD_H
#define HY_COLLISION_TRAVERSE_HD_H

#include <stdint.h>

#include "collision/bvh.h"
#include "collision/traverse.h"
#include "core/hd.h"

/* What traversal reads of one hy_bvh (see there), node_count nodes,
 * triangle_count slots. */
typedef struct hy_trav_mesh {
    const hy_bvh_span* spans;
    const hy_fbox* node_fboxes;
    const double* node_area;
    const uint8_t* self_free;
    const hy_bvh_slot* slots;
    const hy_fbox* leaf_fboxes;
    const hy_fbox* feature_fboxes;
    /* hy_bvh.leaf_soa and its stride: read only by the CPU's eight-wide
     * gate (HY_TRAV_AVX below); NULL on the device. */
    const float* leaf_soa;
    int64_t leaf_soa_stride;
    /* The nodes the tree's last change moved (hy_bvh.node_moved,
     * trav_moved), read only by a context with only_moved: every node when
     * moved_all, else those with node_moved[n] == moved_at (none when
     * moved_at is 0). NULL / 0 on the device. */
    const uint64_t* node_moved;
    uint64_t moved_at;
    int32_t moved_all;
} hy_trav_mesh;

/* One traversal job: self (A and B the same mesh) or pair traversal. */
typedef struct hy_trav_ctx {
    hy_trav_mesh A, B;
    int32_t self;
    int32_t shifted;        /* pair of meshes in different moving frames */
    double e[3];            /* A's shift minus B's: A's boxes are swept by t * e */
    float e_lo[4], e_hi[4]; /* e as a float interval (hy_fbox_shift_range) */
    /* Visit only node pairs with a moved node (hy_traverse_only_moved):
     * the pairs whose features may have moved since the last traversal. */
    int32_t only_moved;
} hy_trav_ctx;

typedef struct hy_trav_pair {
    int32_t a, b; /* self traversal: a == b is the pair of a subtree with itself */
    int32_t job;
} hy_trav_pair;

/* Counters of a traversal (see hy_candidates). */
typedef struct hy_trav_counts {
    int64_t node_pairs, triangle_pairs, vf, ee;
} hy_trav_counts;

/* Room for the most feature pairs one triangle pair makes (6 VF + 9 EE). */
#define HY_TRAV_TRIANGLE_PAIR_MAX 16
/* Most pairs one expansion makes. */
#define HY_TRAV_EXPAND_MAX 4
/* hy_trav_run_pair's answer when the stack was too small. */
#define HY_TRAV_STACK_FULL (-1)

/* Output of one front pair: pairs written while n < cap, all counted. */
typedef struct hy_trav_out {
    hy_feature_pair* v;
    int64_t n, cap;
} hy_trav_out;

/* Pair p appended to o: written while there is room, counted always. */
HY_HD void hy_trav_emit(hy_trav_out* o, const hy_feature_pair* p) {
    if (o->n < o->cap) o->v[o->n] = *p;
    o->n++;
}

HY_HD int hy_trav_has_vertex(const int32_t* f, int32_t v) { return (f[0] == v) | (f[1] == v) | (f[2] == v); }

/* Whether node n of the mesh moved in its tree's last change (see
 * hy_trav_mesh). */
HY_HD int hy_trav_moved(const hy_trav_mesh* m, int32_t n) {
    return m->moved_all || (m->moved_at != 0 && m->node_moved && m->node_moved[n] == m->moved_at);
}

/* Whether context c visits the pair of A's node a and B's node b: always,
 * or with only_moved when one of them moved. */
HY_HD int hy_trav_visits(const hy_trav_ctx* c, int32_t a, int32_t b) {
    return !c->only_moved || hy_trav_moved(&c->A, a) || hy_trav_moved(&c->B, b);
}

/* The single-precision test of node pairs and triangle pairs (in B's
 * frame): it lets through every pair the double test would pass (hy_fbox),
 * so the feature pairs below it are the same. Rejected: the same gate in
 * front of each feature test (vertex-face, edge-edge): no faster than the
 * double test there, and one more box per vertex and edge to make. */
HY_HD int hy_trav_gate(const hy_trav_ctx* c, const hy_fbox* a, const hy_fbox* b) {
    return c->shifted ? hy_fbox_overlap_shift(a, c->e_lo, c->e_hi, b) : hy_fbox_overlap(a, b);
}

/* The A-side triangle of a triangle pair, its boxes in B's frame: read in
 * place, or moved (hy_fbox_shift) into the shifted copies. f: its owned
 * features' boxes as hy_bvh.feature_fboxes holds them (ne edges, then nv
 * vertices). */
typedef struct hy_trav_tri {
    const hy_bvh_slot* s;
    const hy_fbox* box;
    const hy_fbox* f;
    hy_fbox sbox, sf[6];
} hy_trav_tri;

HY_HD void hy_trav_tri_load(const hy_trav_ctx* c, int32_t slot, hy_trav_tri* a) {
    const hy_trav_mesh* A = &c->A;
    const hy_bvh_slot* s = &A->slots[slot];
    a->s = s;
    if (!c->shifted) {
        a->box = &A->leaf_fboxes[slot];
        a->f = &A->feature_fboxes[s->feature];
        return;
    }
    hy_fbox_shift(&A->leaf_fboxes[slot], c->e_lo, c->e_hi, &a->sbox);
    a->box = &a->sbox;
    const hy_fbox* f = &A->feature_fboxes[s->feature];
    for (int m = 0; m < s->ne + s->nv; m++) hy_fbox_shift(&f[m], c->e_lo, c->e_hi, &a->sf[m]);
    a->f = a->sf;
}

/* One feature pair written at w[*m]; it counts (*m advances) only when
 * keep is 1. Writing unconditionally and advancing by the test's outcome
 * spares a hard-to-predict branch per feature test: about a fifth of them
 * pass, scattered. */
HY_HD void hy_trav_put(hy_feature_pair* w, int* m, int keep, int32_t kind, int32_t v0, int32_t v1, int32_t v2,
                       int32_t v3) {
    hy_feature_pair* p = &w[*m];
    p->v[0] = v0;
    p->v[1] = v1;
    p->v[2] = v2;
    p->v[3] = v3;
    p->kind = kind;
    *m += keep;
}

/* Feature pairs of A's triangle `a` and B's triangle in slot sb, boxes
 * overlapping. Only owned features take part, so each pair is emitted by
 * exactly one triangle pair (the owners'). The loops run over the slots'
 * lists of owned features (no branching on ownership bits); in self
 * traversal a pair sharing a vertex is tested and then dropped (again no
 * branch: neighbours and strangers alternate unpredictably). They write
 * straight into the output when it has room for the most one triangle
 * pair makes, else into a scratch array copied out through hy_trav_emit
 * (which counts what does not fit). */
HY_HD void hy_trav_triangle_pair(const hy_trav_ctx* c, hy_trav_out* o, hy_trav_counts* k_, const hy_trav_tri* a,
                                 int32_t slot_b) {
    const hy_trav_mesh* B = &c->B;
    const hy_bvh_slot* sa = a->s;
    const hy_bvh_slot* sb = &B->slots[slot_b];
    const hy_fbox* box_b = &B->leaf_fboxes[slot_b];
    int self = c->self;
    hy_feature_pair scratch[HY_TRAV_TRIANGLE_PAIR_MAX];
    int room = o->cap - o->n >= HY_TRAV_TRIANGLE_PAIR_MAX;
    hy_feature_pair* w = room ? o->v + o->n : scratch;
    int m = 0;
    k_->triangle_pairs++;

    /* Vertex-face: A's owned vertices against B's triangle, then B's
     * against A's. */
    const hy_fbox* fb = &B->feature_fboxes[sb->feature];
    for (int i = 0; i < sa->nv; i++) {
        int k = sa->vk[i];
        int shared = self & hy_trav_has_vertex(sb->v, sa->v[k]);
        int keep = (shared ^ 1) & hy_fbox_overlap(&a->f[sa->ne + i], box_b);
        hy_trav_put(w, &m, keep, HY_FEATURE_VF, sa->id[k], sb->id[0], sb->id[1], sb->id[2]);
    }
    for (int i = 0; i < sb->nv; i++) {
        int k = sb->vk[i];
        int32_t v = sb->v[k];
        int shared = self & hy_trav_has_vertex(sa->v, v);
        int keep = (shared ^ 1) & hy_fbox_overlap(a->box, &fb[sb->ne + i]);
        hy_trav_put(w, &m, keep, self ? HY_FEATURE_VF : HY_FEATURE_FV, sb->id[k], sa->id[0], sa->id[1], sa->id[2]);
    }
    int nvf = m;
    /* Edge-edge between owned edges (no separate edge-against-triangle
     * pre-tests: an edge box lies inside its triangle's, so they are
     * implied by the edge-edge test and rarely pay for themselves). */
    for (int i = 0; i < sa->ne; i++) {
        int ka = sa->ek[i], la = ka == 2 ? 0 : ka + 1;
        int32_t a0 = sa->v[ka], a1 = sa->v[la];
        const hy_fbox* ea = &a->f[i];
        for (int j = 0; j < sb->ne; j++) {
            int kb = sb->ek[j], lb = kb == 2 ? 0 : kb + 1;
            int32_t b0 = sb->v[kb], b1 = sb->v[lb];
            int shared = self & ((a0 == b0) | (a0 == b1) | (a1 == b0) | (a1 == b1));
            int keep = (shared ^ 1) & hy_fbox_overlap(ea, &fb[j]);
            hy_trav_put(w, &m, keep, HY_FEATURE_EE, sa->id[ka], sa->id[la], sb->id[kb], sb->id[lb]);
        }
    }
    k_->vf += nvf;
    k_->ee += m - nvf;
    if (room) {
        o->n += m;
        return;
    }
    for (int i = 0; i < m; i++)
        hy_trav_emit(o, &scratch[i]);
}

/* Triangle pairs of two leaves. The gate is the single-precision box test:
 * a pair it lets through only costs the feature tests, which decide. A's
 * triangle i is gated against B's in chunks of HY_TRAV_GATE_CHUNK: the
 * slots that pass are listed first (branch-free, as hy_trav_put), then
 * visited, so the scattered outcomes of the gate cost no mispredicted
 * branches. The CPU built for AVX2 gates a whole chunk at once
 * (hy_trav_gate8). */
#define HY_TRAV_GATE_CHUNK 8

#if defined(HY_TRAV_AVX) && !defined(__CUDACC__)
#include <immintrin.h>

/* The gate of box a against B's slots j .. j + n - 1 (n <= 8) at once, in
 * eight float lanes read from hy_bvh.leaf_soa: bit q of the answer is
 * hy_fbox_overlap(a, slot j + q). The lanes compute that test's signs (the
 * same differences compared with zero) and settle the pairs its first
 * branch settles; the few it does not (apart at both ends, on different
 * sides) go to hy_fbox_overlap itself. Only for the CPU translation unit
 * built for AVX2 (collision/traverse_avx.c). */
static inline uint32_t hy_trav_gate8(const hy_fbox* a, const float* soa, int64_t stride, const hy_fbox* fb,
                                     int32_t j, int n) {
    const __m256 zero = _mm256_setzero_ps();
    __m256 both = zero, any0 = zero, any1 = zero;
    for (int k = 0; k < 3; k++) {
        const float* r = soa + j;
        __m256 blo0 = _mm256_loadu_ps(r + k * stride), bhi0 = _mm256_loadu_ps(r + (3 + k) * stride);
        __m256 blo1 = _mm256_loadu_ps(r + (6 + k) * stride), bhi1 = _mm256_loadu_ps(r + (9 + k) * stride);
        __m256 g0 = _mm256_sub_ps(bhi0, _mm256_set1_ps(a->lo0[k]));
        __m256 g1 = _mm256_sub_ps(bhi1, _mm256_set1_ps(a->lo1[k]));
        __m256 h0 = _mm256_sub_ps(_mm256_set1_ps(a->hi0[k]), blo0);
        __m256 h1 = _mm256_sub_ps(_mm256_set1_ps(a->hi1[k]), blo1);
        __m256 ng0 = _mm256_cmp_ps(g0, zero, _CMP_LT_OQ), ng1 = _mm256_cmp_ps(g1, zero, _CMP_LT_OQ);
        __m256 nh0 = _mm256_cmp_ps(h0, zero, _CMP_LT_OQ), nh1 = _mm256_cmp_ps(h1, zero, _CMP_LT_OQ);
        both = _mm256_or_ps(both, _mm256_or_ps(_mm256_and_ps(ng0, ng1), _mm256_and_ps(nh0, nh1)));
        any0 = _mm256_or_ps(any0, _mm256_or_ps(ng0, nh0));
        any1 = _mm256_or_ps(any1, _mm256_or_ps(ng1, nh1));
    }
    uint32_t valid = (1u << n) - 1u;
    uint32_t mb = (uint32_t)_mm256_movemask_ps(both), m0 = (uint32_t)_mm256_movemask_ps(any0),
             m1 = (uint32_t)_mm256_movemask_ps(any1);
    uint32_t pass = ~mb & ~(m0 & m1) & valid;
    uint32_t open = ~mb & m0 & m1 & valid;
    while (open) {
        int q = __builtin_ctz(open);
        open &= open - 1;
        pass |= (uint32_t)hy_fbox_overlap(a, &fb[j + q]) << q;
    }
    return pass;
}
#endif

/* The gate of A's box ai against B's slots j0 .. j0 + n - 1 (n <= 8): the
 * slots that pass, ascending, into pass[]; returns their number. */
HY_HD int hy_trav_gate_row(const hy_trav_ctx* c, const hy_fbox* ai, int32_t j0, int n, int32_t* pass) {
    const hy_fbox* fb = c->B.leaf_fboxes;
    int np = 0;
#if defined(HY_TRAV_AVX) && !defined(__CUDACC__)
    if (c->B.leaf_soa) {
        uint32_t m = hy_trav_gate8(ai, c->B.leaf_soa, c->B.leaf_soa_stride, fb, j0, n);
        while (m) {
            pass[np++] = j0 + __builtin_ctz(m);
            m &= m - 1;
        }
        return np;
    }
#endif
    for (int32_t j = j0; j < j0 + n; j++) {
        pass[np] = j;
        np += hy_fbox_overlap(ai, &fb[j]);
    }
    return np;
}

HY_HD void hy_trav_leaf_row(const hy_trav_ctx* c, hy_trav_out* o, hy_trav_counts* k, int32_t i, const hy_fbox* ai,
                            int32_t first, int32_t end) {
    hy_trav_tri a;
    int loaded = 0;
    for (int32_t j0 = first; j0 < end; j0 += HY_TRAV_GATE_CHUNK) {
        int32_t pass[HY_TRAV_GATE_CHUNK];
        int np = hy_trav_gate_row(c, ai, j0, end - j0 < HY_TRAV_GATE_CHUNK ? (int)(end - j0) : HY_TRAV_GATE_CHUNK,
                                  pass);
        if (np && !loaded) {
            hy_trav_tri_load(c, i, &a);
            loaded = 1;
        }
        for (int q = 0; q < np; q++) hy_trav_triangle_pair(c, o, k, &a, pass[q]);
    }
}

HY_HD void hy_trav_leaf_pair(const hy_trav_ctx* c, hy_trav_out* o, hy_trav_counts* k, const hy_bvh_span* na,
                             const hy_bvh_span* nb) {
    const hy_fbox* fa = c->A.leaf_fboxes;
    for (int32_t i = na->first; i < na->first + na->count; i++) {
        /* A's box in B's frame, moved once for all of B's (the same test
         * as hy_trav_gate) */
        hy_fbox moved;
        const hy_fbox* ai = &fa[i];
        if (c->shifted) {
            hy_fbox_shift(ai, c->e_lo, c->e_hi, &moved);
            ai = &moved;
        }
        hy_trav_leaf_row(c, o, k, i, ai, nb->first, nb->first + nb->count);
    }
}

HY_HD void hy_trav_leaf_self(const hy_trav_ctx* c, hy_trav_out* o, hy_trav_counts* k, const hy_bvh_span* n) {
    const hy_fbox* f = c->A.leaf_fboxes;
    for (int32_t i = n->first; i < n->first + n->count; i++)
        hy_trav_leaf_row(c, o, k, i, &f[i], i + 1, n->first + n->count);
}

/* Overlap of A node ia (moved into B's frame) and B node ib. */
HY_HD int hy_trav_nodes_overlap(const hy_trav_ctx* c, int32_t ia, int32_t ib) {
    return hy_trav_gate(c, &c->A.node_fboxes[ia], &c->B.node_fboxes[ib]);
}

/* A node ia's gate box in B's frame: in place, or moved into *m (once,
 * for the tests against several of B's). */
HY_HD const hy_fbox* hy_trav_a_box(const hy_trav_ctx* c, int32_t ia, hy_fbox* m) {
    const hy_fbox* f = &c->A.node_fboxes[ia];
    if (!c->shifted) return f;
    hy_fbox_shift(f, c->e_lo, c->e_hi, m);
    return m;
}

HY_HD hy_trav_pair hy_trav_pair_make(int32_t a, int32_t b, int32_t job) {
    hy_trav_pair p;
    p.a = a;
    p.b = b;
    p.job = job;
    return p;
}

/* Children of pair p to visit, in a fixed order; returns how many were
 * written to out[0..HY_TRAV_EXPAND_MAX), or -1 when p is a leaf pair (leaf
 * work instead). *tests counts the node-pair box tests. */
HY_HD int hy_trav_expand(const hy_trav_ctx* ctxs, hy_trav_pair p, hy_trav_pair* out, int64_t* tests) {
    const hy_trav_ctx* c = &ctxs[p.job];
    const hy_bvh_span* A = c->A.spans;
    const hy_bvh_span* B = c->B.spans;
    int n = 0;
    if (c->self && p.a == p.b) {
        const hy_bvh_span* nd = &A[p.a];
        /* A patch that cannot touch itself (hy_bvh self_free: narrow
         * normal cone, star-shaped contour). */
        if (c->A.self_free[p.a]) return 0;
        if (nd->count) return -1;
        int32_t l = nd->first, r = nd->first + 1;
        if (hy_trav_visits(c, l, l)) out[n++] = hy_trav_pair_make(l, l, p.job);
        if (hy_trav_visits(c, r, r)) out[n++] = hy_trav_pair_make(r, r, p.job);
        (*tests)++;
        if (hy_trav_visits(c, l, r) && hy_fbox_overlap(&c->A.node_fboxes[l], &c->A.node_fboxes[r]))
            out[n++] = hy_trav_pair_make(l, r, p.job);
        return n;
    }
    const hy_bvh_span* na = &A[p.a];
    const hy_bvh_span* nb = &B[p.b];
    if (na->count && nb->count) return -1;
    /* Both inner and of similar size: descend both at once (four tests,
     * one visit, instead of two visits of two tests and their children's
     * tests). Else descend the larger box (or the only inner one). */
    double aa = c->A.node_area[p.a], ab = c->B.node_area[p.b];
    const hy_fbox* fb = c->B.node_fboxes;
    hy_fbox moved;
    if (!na->count && !nb->count && aa <= 2.0 * ab && ab <= 2.0 * aa) {
        for (int i = 0; i < 2; i++) {
            int32_t ca = na->first + i;
            const hy_fbox* a = hy_trav_a_box(c, ca, &moved);
            for (int j = 0; j < 2; j++) {
                int32_t cb = nb->first + j;
                (*tests)++;
                if (hy_trav_visits(c, ca, cb) && hy_fbox_overlap(a, &fb[cb])) out[n++] = hy_trav_pair_make(ca, cb, p.job);
            }
        }
        return n;
    }
    int split_a = nb->count || (!na->count && aa >= ab);
    if (split_a) {
        for (int k = 0; k < 2; k++) {
            int32_t ch = na->first + k;
            (*tests)++;
            if (hy_trav_visits(c, ch, p.b) && hy_trav_nodes_overlap(c, ch, p.b))
                out[n++] = hy_trav_pair_make(ch, p.b, p.job);
        }
    } else {
        const hy_fbox* a = hy_trav_a_box(c, p.a, &moved);
        for (int k = 0; k < 2; k++) {
            int32_t ch = nb->first + k;
            (*tests)++;
            if (hy_trav_visits(c, p.a, ch) && hy_fbox_overlap(a, &fb[ch])) out[n++] = hy_trav_pair_make(p.a, ch, p.job);
        }
    }
    return n;
}

/* The whole traversal below one front pair, depth first in the listed
 * order: its feature pairs go to o (written while o->n < o->cap, all
 * counted in o->n, so a first pass with cap 0 counts them), its counters
 * are added to *k. stack: room for stack_cap pairs. Returns 0, or
 * HY_TRAV_STACK_FULL when the stack was too small (o and *k are then
 * partial: run it again with more). */
HY_HD int hy_trav_run_pair(const hy_trav_ctx* ctxs, hy_trav_pair start, hy_trav_pair* stack, int64_t stack_cap,
                           hy_trav_out* o, hy_trav_counts* k) {
    int64_t sp = 0;
    if (stack_cap < HY_TRAV_EXPAND_MAX) return HY_TRAV_STACK_FULL;
    stack[sp++] = start;
    while (sp > 0) {
        hy_trav_pair p = stack[--sp];
        k->node_pairs++;
        hy_trav_pair kids[HY_TRAV_EXPAND_MAX];
        int n = hy_trav_expand(ctxs, p, kids, &k->node_pairs);
        if (n < 0) {
            const hy_trav_ctx* c = &ctxs[p.job];
            if (c->self && p.a == p.b)
                hy_trav_leaf_self(c, o, k, &c->A.spans[p.a]);
            else
                hy_trav_leaf_pair(c, o, k, &c->A.spans[p.a], &c->B.spans[p.b]);
            continue;
        }
        if (sp + n > stack_cap) return HY_TRAV_STACK_FULL;
        /* Pushed in reverse so they are visited in the listed order. */
        for (int q = n - 1; q >= 0; q--) stack[sp++] = kids[q];
    }
    return 0;
}

/* ---- for device backends (collision/traverse.cu); host functions in traverse.c */

#ifdef __cplusplus
extern "C" {
#endif

/* The staged traversal begun last (hy_traverse_begin): its jobs (b
 * resolved: == a for self) and their contexts (host pointers); returns the
 * job count. These pointers, and the front's below, are valid until the
 * next begin. */
int32_t hy_traverse_job_list(const hy_traverser* t, const hy_traverse_job** jobs, const hy_trav_ctx** ctxs);
/* The staged traversal's number, unique in the process (each
 * hy_traverse_begin takes a new one): a device may keep what it uploaded
 * of it (trees, contexts) while it stays the same, since the trees must
 * not change between a begin and the reading of its outputs. */
uint64_t hy_traverse_generation(const hy_traverser* t);
/* Its front (hy_trav_pair per front pair); returns the front size. */
int64_t hy_traverse_front(const hy_traverser* t, const hy_trav_pair** front);
/* Outputs of front pairs ids[0..n) computed elsewhere with
 * hy_trav_run_pair: pair ids[i]'s feature pairs are
 * pairs[offsets[i] .. offsets[i+1]), k the counters summed over them. They
 * are copied and read back with hy_traverse_output and hy_traverse_counts
 * as if hy_traverse_run had made them. HY_ERR_INVALID_ARG (ids out of
 * range, offsets decreasing), HY_ERR_NOMEM. */
hy_status hy_traverse_accept(hy_traverser* t, const int64_t* ids, int64_t n, const int64_t* offsets,
                             const hy_feature_pair* pairs, const hy_trav_counts* k);

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && !defined(__CUDACC__)
/* hy_trav_run_pair built for AVX2 (collision/traverse_avx.c): call only
 * where the CPU has it. */
#define HY_TRAV_HAVE_AVX2 1
int hy_trav_run_pair_avx2(const hy_trav_ctx* ctxs, hy_trav_pair start, hy_trav_pair* stack, int64_t stack_cap,
                          hy_trav_out* o, hy_trav_counts* k);
#endif

#ifdef __cplusplus
}
#endif

#endif
