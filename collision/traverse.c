/* BVH self and pair traversal into feature-pair candidates.
 *
 * Work split: a serial breadth-first expansion of the root pair makes a
 * front of FRONT_TARGET independent node pairs (self pairs (n, n) and cross
 * pairs (a, b) with overlapping boxes); hy_pool_for runs it one pair per
 * block. A worker appends to its own buffer and records where each block's
 * output starts; the join copies the blocks in block order. Rejected: one
 * buffer per block (a thousand small reallocations per step) and atomics on a
 * shared output (order would depend on timing).
 *
 * Tests, cheapest first: node pairs and triangle pairs pass a
 * single-precision moving-box gate (hy_fbox, rounded outward: it passes
 * whatever the double test would), and only feature pairs (vertex-face,
 * edge-edge) are decided by hy_mbox_overlap on the double boxes, so the
 * output is what double tests at every level would give. Leaf data is read
 * in leaf order (hy_bvh slots: vertices, ids, ownership; triangle and owned
 * edge boxes made once per step). */
#include "collision/traverse.h"

#include <stdlib.h>
#include <string.h>

#include "engine/error.h"

/* Node pairs in the front: enough for the pool to balance uneven subtrees
 * on a few cores, few enough that expanding it serially is cheap. Fixed so
 * that the output order does not depend on the thread count. */
#define FRONT_TARGET 1024

typedef struct node_pair {
    int32_t a, b; /* self traversal: a == b is the pair of a subtree with itself */
    int32_t job;
} node_pair;

typedef struct worker_buf {
    hy_feature_pair* v;
    int64_t n, cap;
    node_pair* stack;
    int64_t sp_cap;
    int64_t node_pairs, triangle_pairs, vf, ee;
    int oom;
} worker_buf;

typedef struct block_rec {
    int32_t worker;
    int64_t begin, count;
} block_rec;

struct hy_traverser {
    worker_buf* workers;
    int nworkers;
    node_pair* front;
    int64_t front_cap;
    node_pair* next;
    int64_t next_cap;
    block_rec* blocks;
    int64_t blocks_cap;
    int64_t* offset; /* per block: start in the joined output */
    int64_t offset_cap;
    struct trav_ctx* ctx; /* per job */
    int64_t ctx_cap;
    int64_t nfront, front_tests; /* of the last front made */
    int32_t njobs;               /* of the staged traversal */
};

/* ---- canonical order */

static void sort2(int32_t* a, int32_t* b) {
    if (*a > *b) {
        int32_t t = *a;
        *a = *b;
        *b = t;
    }
}

hy_feature_pair hy_feature_pair_canonical(hy_feature_pair p) {
    if (p.kind == HY_FEATURE_EE) {
        sort2(&p.v[0], &p.v[1]);
        sort2(&p.v[2], &p.v[3]);
        if (p.v[2] < p.v[0] || (p.v[2] == p.v[0] && p.v[3] < p.v[1])) {
            int32_t a = p.v[0], b = p.v[1];
            p.v[0] = p.v[2];
            p.v[1] = p.v[3];
            p.v[2] = a;
            p.v[3] = b;
        }
    } else {
        p.kind = HY_FEATURE_VF;
        sort2(&p.v[1], &p.v[2]);
        sort2(&p.v[2], &p.v[3]);
        sort2(&p.v[1], &p.v[2]);
    }
    return p;
}

int hy_feature_pair_cmp(const void* x, const void* y) {
    const hy_feature_pair* a = x;
    const hy_feature_pair* b = y;
    if (a->kind != b->kind) return a->kind < b->kind ? -1 : 1;
    for (int k = 0; k < 4; k++)
        if (a->v[k] != b->v[k]) return a->v[k] < b->v[k] ? -1 : 1;
    return 0;
}

void hy_candidates_free(hy_candidates* c) {
    if (!c) return;
    free(c->pairs);
    memset(c, 0, sizeof *c);
}

/* ---- traverser scratch */

hy_traverser* hy_traverser_create(void) { return calloc(1, sizeof(hy_traverser)); }

void hy_traverser_destroy(hy_traverser* t) {
    if (!t) return;
    for (int i = 0; i < t->nworkers; i++) {
        free(t->workers[i].v);
        free(t->workers[i].stack);
    }
    free(t->workers);
    free(t->front);
    free(t->next);
    free(t->blocks);
    free(t->offset);
    free(t->ctx);
    free(t);
}

static int grow(void** p, int64_t* cap, int64_t need, size_t elem) {
    if (need <= *cap) return 1;
    int64_t n = *cap ? *cap : 256;
    while (n < need) n *= 2;
    void* q = realloc(*p, (size_t)n * elem);
    if (!q) return 0;
    *p = q;
    *cap = n;
    return 1;
}

/* ---- leaf work */

typedef struct trav_ctx {
    hy_traverser* t;
    const hy_bvh* A;
    const hy_bvh* B; /* == A for self */
    int self;
    int shifted;  /* pair of meshes in different moving frames */
    double e[3];  /* A's shift minus B's: A's boxes are swept by t * e */
    float e_lo[4], e_hi[4]; /* e as a float interval (hy_fbox_shift_range) */
} trav_ctx;

/* Room for the most feature pairs one triangle pair makes (6 VF + 9 EE),
 * so the emits themselves need no check. */
#define TRIANGLE_PAIR_MAX 16

static inline int reserve(worker_buf* w) {
    if (w->n + TRIANGLE_PAIR_MAX <= w->cap) return 1;
    if (grow((void**)&w->v, &w->cap, w->n + TRIANGLE_PAIR_MAX, sizeof *w->v)) return 1;
    w->oom = 1;
    return 0;
}

static inline void emit(worker_buf* w, int32_t kind, int32_t v0, int32_t v1, int32_t v2, int32_t v3) {
    hy_feature_pair* p = &w->v[w->n++];
    p->v[0] = v0;
    p->v[1] = v1;
    p->v[2] = v2;
    p->v[3] = v3;
    p->kind = kind;
}

static inline int has_vertex(const int32_t* f, int32_t v) { return f[0] == v || f[1] == v || f[2] == v; }

/* The A-side triangle of a triangle pair, its boxes in B's frame: read in
 * place, or moved into the shifted copies. Edges: its owned ones in k order
 * (as hy_bvh.edge_mboxes holds them). */
typedef struct a_tri {
    const hy_bvh_slot* s;
    const hy_mbox* box;
    const hy_mbox* v[3];
    const hy_mbox* e[3];
    hy_mbox sbox, sv[3], se[3];
} a_tri;

/* The single-precision test of node pairs and triangle pairs (in B's
 * frame): it lets through every pair the double test would pass (hy_fbox),
 * so the feature pairs below it are the same. Rejected: the same gate in
 * front of each feature test (vertex-face, edge-edge): no faster than the
 * double test there, and one more box per vertex and edge to make. */
static inline int gate(const trav_ctx* c, const hy_fbox* a, const hy_fbox* b) {
    return c->shifted ? hy_fbox_overlap_shift(a, c->e_lo, c->e_hi, b) : hy_fbox_overlap(a, b);
}

static inline void a_load(const trav_ctx* c, int32_t slot, a_tri* a) {
    const hy_bvh* A = c->A;
    const hy_bvh_slot* s = &A->slots[slot];
    a->s = s;
    if (!c->shifted) {
        a->box = &A->leaf_mboxes[slot];
        for (int k = 0; k < 3; k++) a->v[k] = &A->vertex_mboxes[s->v[k]];
        for (int m = 0; m < s->ne; m++) a->e[m] = &A->edge_mboxes[s->edge + m];
        return;
    }
    /* Shifted: the edges are unions of the shifted vertex boxes (the
     * shift's outward rounding depends on the bounds it moves). */
    hy_mbox_shift(&A->leaf_mboxes[slot], c->e, &a->sbox);
    a->box = &a->sbox;
    for (int k = 0; k < 3; k++) {
        hy_mbox_shift(&A->vertex_mboxes[s->v[k]], c->e, &a->sv[k]);
        a->v[k] = &a->sv[k];
    }
    for (int m = 0; m < s->ne; m++) {
        int k = s->ek[m];
        hy_mbox_union(&a->se[m], &a->sv[k], &a->sv[k == 2 ? 0 : k + 1]);
        a->e[m] = &a->se[m];
    }
}

/* Feature pairs of A's triangle `a` and B's triangle in slot sb, boxes
 * overlapping. Only owned features take part, so each pair is emitted by
 * exactly one triangle pair (the owners'). The loops run over the slots'
 * lists of owned features (no branching on ownership bits). */
static void triangle_pair(const trav_ctx* c, worker_buf* w, const a_tri* a, int32_t slot_b) {
    const hy_bvh* B = c->B;
    const hy_bvh_slot* sa = a->s;
    const hy_bvh_slot* sb = &B->slots[slot_b];
    const hy_mbox* box_b = &B->leaf_mboxes[slot_b];
    int self = c->self;
    int64_t n0 = w->n;
    w->triangle_pairs++;
    if (!reserve(w)) return;

    /* Vertex-face: A's owned vertices against B's triangle, then B's
     * against A's. */
    for (int i = 0; i < sa->nv; i++) {
        int k = sa->vk[i];
        if (!(self && has_vertex(sb->v, sa->v[k])) && hy_mbox_overlap(a->v[k], box_b))
            emit(w, HY_FEATURE_VF, sa->id[k], sb->id[0], sb->id[1], sb->id[2]);
    }
    for (int i = 0; i < sb->nv; i++) {
        int k = sb->vk[i];
        int32_t v = sb->v[k];
        if (!(self && has_vertex(sa->v, v)) && hy_mbox_overlap(a->box, &B->vertex_mboxes[v]))
            emit(w, self ? HY_FEATURE_VF : HY_FEATURE_FV, sb->id[k], sa->id[0], sa->id[1], sa->id[2]);
    }
    w->vf += w->n - n0;
    n0 = w->n;
    /* Edge-edge between owned edges (no separate edge-against-triangle
     * pre-tests: an edge box lies inside its triangle's, so they are
     * implied by the edge-edge test and rarely pay for themselves). */
    const hy_mbox* eb = &B->edge_mboxes[sb->edge];
    for (int i = 0; i < sa->ne; i++) {
        int ka = sa->ek[i], la = ka == 2 ? 0 : ka + 1;
        int32_t a0 = sa->v[ka], a1 = sa->v[la];
        const hy_mbox* ea = a->e[i];
        for (int j = 0; j < sb->ne; j++) {
            int kb = sb->ek[j], lb = kb == 2 ? 0 : kb + 1;
            int32_t b0 = sb->v[kb], b1 = sb->v[lb];
            if (self && (a0 == b0 || a0 == b1 || a1 == b0 || a1 == b1)) continue;
            if (hy_mbox_overlap(ea, &eb[j])) emit(w, HY_FEATURE_EE, sa->id[ka], sa->id[la], sb->id[kb], sb->id[lb]);
        }
    }
    w->ee += w->n - n0;
}

/* Triangle pairs of two leaves. The gate is the single-precision box test:
 * a pair it lets through only costs the feature tests, which decide. */
static void leaf_pair(const trav_ctx* c, worker_buf* w, const hy_bvh_span* na, const hy_bvh_span* nb) {
    const hy_fbox* fa = c->A->leaf_fboxes;
    const hy_fbox* fb = c->B->leaf_fboxes;
    for (int32_t i = na->first; i < na->first + na->count; i++) {
        a_tri a;
        int loaded = 0;
        for (int32_t j = nb->first; j < nb->first + nb->count; j++) {
            if (!gate(c, &fa[i], &fb[j])) continue;
            if (!loaded) {
                a_load(c, i, &a);
                loaded = 1;
            }
            triangle_pair(c, w, &a, j);
        }
    }
}

static void leaf_self(const trav_ctx* c, worker_buf* w, const hy_bvh_span* n) {
    const hy_fbox* f = c->A->leaf_fboxes;
    for (int32_t i = n->first; i < n->first + n->count; i++) {
        a_tri a;
        int loaded = 0;
        for (int32_t j = i + 1; j < n->first + n->count; j++) {
            if (!hy_fbox_overlap(&f[i], &f[j])) continue;
            if (!loaded) {
                a_load(c, i, &a);
                loaded = 1;
            }
            triangle_pair(c, w, &a, j);
        }
    }
}

/* Overlap of A node ia (moved into B's frame) and B node ib. */
static inline int nodes_overlap(const trav_ctx* c, int32_t ia, int32_t ib) {
    return gate(c, &c->A->node_fboxes[ia], &c->B->node_fboxes[ib]);
}

/* ---- node pairs */

/* Most pairs one expansion makes. */
#define EXPAND_MAX 4

/* Children of pair p to visit, in a fixed order; returns how many were
 * written to out[0..EXPAND_MAX), or -1 when p is a leaf pair (leaf work
 * instead). */
static int expand(const trav_ctx* ctxs, node_pair p, node_pair out[EXPAND_MAX], int64_t* tests) {
    const trav_ctx* c = &ctxs[p.job];
    const hy_bvh_span* A = c->A->spans;
    const hy_bvh_span* B = c->B->spans;
    int n = 0;
    if (c->self && p.a == p.b) {
        const hy_bvh_span* nd = &A[p.a];
        /* A flat connected patch cannot touch itself (hy_bvh self_free). */
        if (c->A->self_free[p.a]) return 0;
        if (nd->count) return -1;
        int32_t l = nd->first, r = nd->first + 1;
        out[n++] = (node_pair){l, l, p.job};
        out[n++] = (node_pair){r, r, p.job};
        (*tests)++;
        if (hy_fbox_overlap(&c->A->node_fboxes[l], &c->A->node_fboxes[r])) out[n++] = (node_pair){l, r, p.job};
        return n;
    }
    const hy_bvh_span* na = &A[p.a];
    const hy_bvh_span* nb = &B[p.b];
    if (na->count && nb->count) return -1;
    /* Both inner and of similar size: descend both at once (four tests,
     * one visit, instead of two visits of two tests and their children's
     * tests). Else descend the larger box (or the only inner one). */
    double aa = c->A->node_area[p.a], ab = c->B->node_area[p.b];
    if (!na->count && !nb->count && aa <= 2.0 * ab && ab <= 2.0 * aa) {
        for (int i = 0; i < 2; i++)
            for (int j = 0; j < 2; j++) {
                int32_t ca = na->first + i, cb = nb->first + j;
                (*tests)++;
                if (nodes_overlap(c, ca, cb)) out[n++] = (node_pair){ca, cb, p.job};
            }
        return n;
    }
    int split_a = nb->count || (!na->count && aa >= ab);
    if (split_a) {
        for (int k = 0; k < 2; k++) {
            int32_t ch = na->first + k;
            (*tests)++;
            if (nodes_overlap(c, ch, p.b)) out[n++] = (node_pair){ch, p.b, p.job};
        }
    } else {
        for (int k = 0; k < 2; k++) {
            int32_t ch = nb->first + k;
            (*tests)++;
            if (nodes_overlap(c, p.a, ch)) out[n++] = (node_pair){p.a, ch, p.job};
        }
    }
    return n;
}

static void leaf_work(const trav_ctx* ctxs, worker_buf* w, node_pair p) {
    const trav_ctx* c = &ctxs[p.job];
    if (c->self && p.a == p.b)
        leaf_self(c, w, &c->A->spans[p.a]);
    else
        leaf_pair(c, w, &c->A->spans[p.a], &c->B->spans[p.b]);
}

static void run_pair(const trav_ctx* c, worker_buf* w, node_pair start) {
    /* c: the per-job contexts */
    int64_t sp = 0;
    if (!grow((void**)&w->stack, &w->sp_cap, 64, sizeof *w->stack)) {
        w->oom = 1;
        return;
    }
    w->stack[sp++] = start;
    while (sp > 0) {
        node_pair p = w->stack[--sp];
        w->node_pairs++;
        node_pair kids[EXPAND_MAX];
        int n = expand(c, p, kids, &w->node_pairs);
        if (n < 0) {
            leaf_work(c, w, p);
            continue;
        }
        if (!grow((void**)&w->stack, &w->sp_cap, sp + EXPAND_MAX, sizeof *w->stack)) {
            w->oom = 1;
            return;
        }
        /* Pushed in reverse so they are visited in the listed order. */
        for (int k = n - 1; k >= 0; k--) w->stack[sp++] = kids[k];
    }
}

typedef struct run_ctx {
    const trav_ctx* c; /* per job */
    const node_pair* front;
    block_rec* blocks;  /* per front pair */
    const int64_t* ids; /* NULL: block b runs front pair b; else front pair ids[b] */
} run_ctx;

static void front_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    run_ctx* r = vctx;
    worker_buf* w = &r->c[0].t->workers[worker];
    int64_t start = w->n;
    (void)block;
    for (int64_t i = begin; i < end; i++) {
        int64_t f = r->ids ? r->ids[i] : i;
        run_pair(r->c, w, r->front[f]);
        r->blocks[f] = (block_rec){worker, start, w->n - start};
        start = w->n;
    }
}

typedef struct join_ctx {
    hy_traverser* t;
    hy_feature_pair* out;
    const int64_t* offset;
} join_ctx;

static void join_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    join_ctx* j = vctx;
    for (int64_t b = begin; b < end; b++) {
        const block_rec* r = &j->t->blocks[b];
        if (r->count)
            memcpy(j->out + j->offset[b], j->t->workers[r->worker].v + r->begin, sizeof(hy_feature_pair) * (size_t)r->count);
    }
}

/* Clear the per-worker buffers and build the front: every job's root pair,
 * then breadth-first expansion, a whole round at a time, until it holds
 * FRONT_TARGET pairs or only leaf pairs remain. */
static hy_status make_front(hy_traverser* t, const trav_ctx* c, int32_t njobs, hy_pool* pool) {
    int nw = pool ? hy_pool_size(pool) : 1;
    if (nw > t->nworkers) {
        worker_buf* nwb = realloc(t->workers, sizeof *nwb * (size_t)nw);
        if (!nwb) return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory");
        memset(nwb + t->nworkers, 0, sizeof *nwb * (size_t)(nw - t->nworkers));
        t->workers = nwb;
        t->nworkers = nw;
    }
    for (int i = 0; i < t->nworkers; i++) {
        worker_buf* w = &t->workers[i];
        w->n = w->node_pairs = w->triangle_pairs = w->vf = w->ee = 0;
        w->oom = 0;
    }
    int64_t nfront = 0, front_tests = 0;
    if (!grow((void**)&t->front, &t->front_cap, njobs + 1, sizeof *t->front))
        return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory");
    for (int32_t j = 0; j < njobs; j++) {
        front_tests++;
        if (c[j].self ? !c[j].A->self_free[0] : nodes_overlap(&c[j], 0, 0))
            t->front[nfront++] = (node_pair){0, 0, j};
    }
    for (;;) {
        if (nfront >= FRONT_TARGET) break;
        if (!grow((void**)&t->next, &t->next_cap, EXPAND_MAX * nfront + EXPAND_MAX, sizeof *t->next))
            return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory");
        int64_t nn = 0;
        int changed = 0;
        for (int64_t i = 0; i < nfront; i++) {
            node_pair kids[EXPAND_MAX];
            int n = expand(c, t->front[i], kids, &front_tests);
            if (n < 0) {
                t->next[nn++] = t->front[i];
                continue;
            }
            changed = 1;
            for (int k = 0; k < n; k++) t->next[nn++] = kids[k];
        }
        if (!changed) break;
        node_pair* tmp = t->front;
        int64_t tcap = t->front_cap;
        t->front = t->next;
        t->front_cap = t->next_cap;
        t->next = tmp;
        t->next_cap = tcap;
        nfront = nn;
    }
    if (!grow((void**)&t->blocks, &t->blocks_cap, nfront + 1, sizeof *t->blocks))
        return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory");
    memset(t->blocks, 0, sizeof *t->blocks * (size_t)(nfront + 1));
    t->nfront = nfront;
    t->front_tests = front_tests;
    return HY_OK;
}

/* Counters of every worker, summed; HY_ERR_NOMEM if a worker ran out. */
static hy_status gather_counts(const hy_traverser* t, hy_candidates* out) {
    out->node_pairs = out->triangle_pairs = out->vf = out->ee = 0;
    for (int i = 0; i < t->nworkers; i++) {
        const worker_buf* w = &t->workers[i];
        if (w->oom) return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory for candidates");
        out->node_pairs += w->node_pairs;
        out->triangle_pairs += w->triangle_pairs;
        out->vf += w->vf;
        out->ee += w->ee;
    }
    out->node_pairs += t->front_tests;
    out->front = t->nfront;
    return HY_OK;
}

static hy_status traverse(hy_traverser* t, const trav_ctx* c, int32_t njobs, hy_pool* pool, hy_candidates* out) {
    out->count = out->vf = out->ee = out->node_pairs = out->triangle_pairs = out->front = 0;
    hy_status s = make_front(t, c, njobs, pool);
    if (s) return s;
    int64_t nfront = t->nfront;

    /* The front, one pair per block. */
    run_ctx r = {c, t->front, t->blocks, NULL};
    if (nfront == 0) {
        /* nothing to run */
    } else if (pool)
        hy_pool_for(pool, nfront, 1, front_block, &r);
    else
        for (int64_t i = 0; i < nfront; i++) front_block(&r, i, i + 1, i, 0);

    /* Join in block order. */
    int64_t total = 0;
    if (!grow((void**)&t->offset, &t->offset_cap, nfront + 1, sizeof *t->offset))
        return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory");
    int64_t* offset = t->offset;
    s = gather_counts(t, out);
    if (s) return s;
    for (int64_t b = 0; b < nfront; b++) {
        offset[b] = total;
        total += t->blocks[b].count;
    }
    if (!grow((void**)&out->pairs, &out->cap, total, sizeof *out->pairs)) {
        return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory for %lld candidates", (long long)total);
    }
    join_ctx j = {t, out->pairs, offset};
    if (pool)
        hy_pool_for(pool, nfront, 16, join_block, &j);
    else
        join_block(&j, 0, nfront, 0, 0);
    out->count = total;
    return HY_OK;
}

static void ctx_init(trav_ctx* c, hy_traverser* t, const hy_bvh* a, const hy_bvh* b) {
    c->t = t;
    c->A = a;
    c->B = b ? b : a;
    c->self = c->B == a;
    c->shifted = 0;
    for (int k = 0; k < 3; k++) {
        c->e[k] = c->self ? 0.0 : a->shift[k] - c->B->shift[k];
        if (c->e[k] != 0.0) c->shifted = 1;
    }
    hy_fbox_shift_range(c->e, c->e_lo, c->e_hi);
}

/* One context per traversal job, checked. */
static hy_status set_jobs(hy_traverser* t, const hy_traverse_job* jobs, int32_t job_count) {
    if (!grow((void**)&t->ctx, &t->ctx_cap, job_count + 1, sizeof *t->ctx))
        return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory");
    for (int32_t j = 0; j < job_count; j++) {
        const hy_bvh* a = jobs[j].a;
        const hy_bvh* b = jobs[j].b ? jobs[j].b : a;
        if (!a || a->node_count == 0 || b->node_count == 0)
            return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal: job %d: tree not built (call hy_bvh_build first)", j);
        ctx_init(&t->ctx[j], t, a, b);
    }
    return HY_OK;
}

hy_status hy_bvh_traverse_jobs(hy_traverser* t, const hy_traverse_job* jobs, int32_t job_count, hy_pool* pool,
                               hy_candidates* out) {
    if (!t || !out || (job_count > 0 && !jobs)) return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal: NULL argument");
    hy_status cs = set_jobs(t, jobs, job_count);
    if (cs) return cs;
    return traverse(t, t->ctx, job_count, pool, out);
}

hy_status hy_bvh_traverse_self(hy_traverser* t, const hy_bvh* bvh, hy_pool* pool, hy_candidates* out) {
    if (!bvh || !out) return hy_fail(HY_ERR_INVALID_ARG, "bvh self traversal: NULL argument");
    hy_traverse_job j = {bvh, bvh};
    return hy_bvh_traverse_jobs(t, &j, 1, pool, out);
}

hy_status hy_bvh_traverse_pair(hy_traverser* t, const hy_bvh* a, const hy_bvh* b, hy_pool* pool, hy_candidates* out) {
    if (!a || !b || !out) return hy_fail(HY_ERR_INVALID_ARG, "bvh pair traversal: NULL argument");
    hy_traverse_job j = {a, b};
    return hy_bvh_traverse_jobs(t, &j, 1, pool, out);
}

/* ---- staged traversal (the proximity framework's TRAVERSE jobs) */

hy_status hy_traverse_begin(hy_traverser* t, const hy_traverse_job* jobs, int32_t job_count, hy_pool* pool,
                            int64_t* front) {
    if (!t || !front || (job_count > 0 && !jobs))
        return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal: NULL argument");
    hy_status cs = set_jobs(t, jobs, job_count);
    if (cs) return cs;
    t->njobs = job_count;
    hy_status s = make_front(t, t->ctx, job_count, pool);
    if (s) return s;
    *front = t->nfront;
    return HY_OK;
}

hy_status hy_traverse_run(hy_traverser* t, const int64_t* ids, int64_t n, hy_pool* pool) {
    if (!t || (n > 0 && !ids)) return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal: NULL argument");
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= t->nfront)
            return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal: front pair %lld out of range [0, %lld)",
                           (long long)ids[i], (long long)t->nfront);
    run_ctx r = {t->ctx, t->front, t->blocks, ids};
    if (n == 0) return HY_OK;
    if (pool)
        hy_pool_for(pool, n, 1, front_block, &r);
    else
        front_block(&r, 0, n, 0, 0);
    for (int i = 0; i < t->nworkers; i++)
        if (t->workers[i].oom) return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory for candidates");
    return HY_OK;
}

int64_t hy_traverse_output(const hy_traverser* t, int64_t f, const hy_feature_pair** pairs, int32_t* job) {
    const block_rec* r = &t->blocks[f];
    *pairs = r->count ? t->workers[r->worker].v + r->begin : NULL;
    *job = t->front[f].job;
    return r->count;
}

hy_status hy_traverse_counts(const hy_traverser* t, hy_candidates* out) { return gather_counts(t, out); }
