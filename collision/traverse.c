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
 * Every test, node pairs, triangle pairs and feature pairs (vertex-face,
 * edge-edge), is the single-precision moving-box test (hy_fbox, rounded
 * outward): it passes whatever the double test (hy_mbox_overlap) would,
 * and a handful more whose boxes come within the rounding (cloth-ball: 50
 * of 1.49 million), which the filters and the exact test then decide.
 * Rejected: deciding feature pairs on the double boxes (the output was
 * exactly the double tests', but the traversal read half again as much
 * memory and spent 10% longer). Leaf data is read in leaf order (hy_bvh
 * slots: vertices, ids, ownership; triangle and owned edge boxes made
 * once per step).
 *
 * The traversal of one front pair is collision/traverse_hd.h (HY_HD), the
 * code the CUDA TRAVERSE kernel runs too; this file makes the front, runs
 * it on the pool and joins the outputs. */
#include "collision/traverse.h"

#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "collision/traverse_hd.h"
#include "core/error.h"
#include "core/simd.h"

/* Node pairs in the front: enough for the pool to balance uneven subtrees
 * on a few cores, few enough that expanding it serially is cheap. Fixed so
 * that the output order does not depend on the thread count. */
#define FRONT_TARGET 1024

typedef hy_trav_pair node_pair;

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
    hy_trav_segment* segs; /* the last traversal's non-empty blocks, in order */
    int64_t nsegs, segs_cap, seg_total;
    hy_trav_ctx* ctx; /* per job */
    int64_t ctx_cap;
    hy_traverse_job* jobs; /* per job, b resolved (== a for self) */
    int64_t jobs_cap;
    int64_t nfront, front_tests; /* of the last front made */
    int64_t last_node_pairs;     /* tested by the last hy_traverse_run or accept */
    int32_t njobs;               /* of the staged traversal */
    uint64_t generation;         /* of the last begin: unique in the process (g_generation) */
    int only_moved;              /* hy_traverse_only_moved */
};

/* Numbers the staged traversals of the whole process, so that no two
 * begins share one, whichever traverser (collision/traverse.cu keys what it
 * uploaded by it). */
static _Atomic uint64_t g_generation;

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
    free(t->segs);
    free(t->ctx);
    free(t->jobs);
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

/* ---- leaf work (collision/traverse_hd.h, shared with the GPU) */

static hy_trav_mesh mesh_view(const hy_bvh* b) {
    hy_trav_mesh m = {b->spans,       b->node_fboxes,    b->node_area, b->self_free,       b->slots,
                      b->leaf_fboxes, b->feature_fboxes, b->leaf_soa,  b->leaf_soa_stride, b->node_moved,
                      b->trav_moved,  b->trav_moved != 0 && b->all_at == b->trav_moved};
    return m;
}

#if defined(HY_TRAV_HAVE_AVX2)
static int simd_state = -1; /* core/simd.h */

static int simd_on(void) { return hy_simd_on(&simd_state); }

int hy_traverse_simd(int on) { return hy_simd_set(&simd_state, on); }
#else
static int simd_on(void) { return 0; }

int hy_traverse_simd(int on) {
    (void)on;
    return 0;
}
#endif

static int run_one(const hy_trav_ctx* c, hy_trav_pair start, hy_trav_pair* stack, int64_t cap, hy_trav_out* o,
                   hy_trav_counts* k, int simd) {
#if defined(HY_TRAV_HAVE_AVX2)
    if (simd) return hy_trav_run_pair_avx2(c, start, stack, cap, o, k);
#endif
    (void)simd;
    return hy_trav_run_pair(c, start, stack, cap, o, k);
}

/* Initial room per worker: enough for a few front pairs' candidates. */
#define STACK_INITIAL 256

/* One front pair into the worker's buffer. The shared function writes
 * while there is room and counts the rest: when it ran out of room (or of
 * stack) the buffer grows and the pair runs again, so the output is the
 * same whatever the starting sizes. */
static void run_pair(const hy_trav_ctx* c, worker_buf* w, node_pair start) {
    if (!grow((void**)&w->stack, &w->sp_cap, STACK_INITIAL, sizeof *w->stack) ||
        !grow((void**)&w->v, &w->cap, w->n + 64 * HY_TRAV_TRIANGLE_PAIR_MAX, sizeof *w->v)) {
        w->oom = 1;
        return;
    }
    for (;;) {
        hy_trav_counts k = {0, 0, 0, 0};
        hy_trav_out o = {w->v + w->n, 0, w->cap - w->n};
        int r = run_one(c, start, w->stack, w->sp_cap, &o, &k, simd_on());
        if (r == HY_TRAV_STACK_FULL) {
            if (!grow((void**)&w->stack, &w->sp_cap, 2 * w->sp_cap, sizeof *w->stack)) {
                w->oom = 1;
                return;
            }
            continue;
        }
        if (o.n > o.cap) {
            if (!grow((void**)&w->v, &w->cap, w->n + o.n, sizeof *w->v)) {
                w->oom = 1;
                return;
            }
            continue;
        }
        w->n += o.n;
        w->node_pairs += k.node_pairs;
        w->triangle_pairs += k.triangle_pairs;
        w->vf += k.vf;
        w->ee += k.ee;
        return;
    }
}

typedef struct run_ctx {
    hy_traverser* t;
    const hy_trav_ctx* c; /* per job */
    const node_pair* front;
    block_rec* blocks;  /* per front pair */
    const int64_t* ids; /* NULL: block b runs front pair b; else front pair ids[b] */
} run_ctx;

static void front_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    run_ctx* r = vctx;
    worker_buf* w = &r->t->workers[worker];
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
    const hy_trav_segment* segs;
    hy_feature_pair* out;
} join_ctx;

static void join_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    join_ctx* j = vctx;
    for (int64_t q = begin; q < end; q++) {
        const hy_trav_segment* g = &j->segs[q];
        memcpy(j->out + g->offset, g->v, sizeof(hy_feature_pair) * (size_t)g->count);
    }
}

/* Clear the per-worker buffers and build the front: every job's root pair,
 * then breadth-first expansion, a whole round at a time, until it holds
 * FRONT_TARGET pairs or only leaf pairs remain. */
static hy_status make_front(hy_traverser* t, const hy_trav_ctx* c, int32_t njobs, hy_pool* pool) {
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
        if (hy_trav_visits(&c[j], 0, 0) && (c[j].self ? !c[j].A.self_free[0] : hy_trav_nodes_overlap(&c[j], 0, 0)))
            t->front[nfront++] = (node_pair){0, 0, j};
    }
    for (;;) {
        if (nfront >= FRONT_TARGET) break;
        if (!grow((void**)&t->next, &t->next_cap, HY_TRAV_EXPAND_MAX * nfront + HY_TRAV_EXPAND_MAX, sizeof *t->next))
            return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory");
        int64_t nn = 0;
        int changed = 0;
        for (int64_t i = 0; i < nfront; i++) {
            node_pair kids[HY_TRAV_EXPAND_MAX];
            int n = hy_trav_expand(c, t->front[i], kids, &front_tests);
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

/* The last traversal's output joined in block order into out->pairs
 * (out->count = the total). */
static hy_status join(hy_traverser* t, hy_pool* pool, hy_candidates* out) {
    int64_t total = t->seg_total, ns = t->nsegs;
    if (!grow((void**)&out->pairs, &out->cap, total, sizeof *out->pairs))
        return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory for %lld candidates", (long long)total);
    join_ctx j = {t->segs, out->pairs};
    if (pool)
        hy_pool_for(pool, ns, 16, join_block, &j);
    else
        join_block(&j, 0, ns, 0, 0);
    out->count = total;
    return HY_OK;
}

/* Runs the front; then the counts, each block's place in the whole
 * (its segment's offset); then the join, when `joined`. */
static hy_status traverse(hy_traverser* t, const hy_trav_ctx* c, int32_t njobs, hy_pool* pool, hy_candidates* out,
                          int joined) {
    out->count = out->vf = out->ee = out->node_pairs = out->triangle_pairs = out->front = 0;
    t->nsegs = t->seg_total = 0;
    hy_status s = make_front(t, c, njobs, pool);
    if (s) return s;
    int64_t nfront = t->nfront;

    /* The front, one pair per block. */
    run_ctx r = {t, c, t->front, t->blocks, NULL};
    if (nfront == 0) {
        /* nothing to run */
    } else if (pool)
        hy_pool_for(pool, nfront, 1, front_block, &r);
    else
        for (int64_t i = 0; i < nfront; i++) front_block(&r, i, i + 1, i, 0);

    /* Places in block order. */
    int64_t total = 0;
    if (!grow((void**)&t->segs, &t->segs_cap, nfront + 1, sizeof *t->segs))
        return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory");
    s = gather_counts(t, out);
    if (s) return s;
    int64_t ns = 0;
    for (int64_t b = 0; b < nfront; b++) {
        const block_rec* br = &t->blocks[b];
        if (br->count) t->segs[ns++] = (hy_trav_segment){t->workers[br->worker].v + br->begin, total, br->count};
        total += br->count;
    }
    t->nsegs = ns;
    t->seg_total = total;
    if (!joined) {
        out->count = total;
        return HY_OK;
    }
    return join(t, pool, out);
}

static void ctx_init(hy_trav_ctx* c, const hy_bvh* a, const hy_bvh* b, int only_moved) {
    c->A = mesh_view(a);
    c->B = mesh_view(b);
    c->self = b == a;
    c->shifted = 0;
    c->only_moved = only_moved;
    for (int k = 0; k < 3; k++) {
        c->e[k] = c->self ? 0.0 : a->shift[k] - b->shift[k];
        if (c->e[k] != 0.0) c->shifted = 1;
    }
    hy_fbox_shift_range(c->e, c->e_lo, c->e_hi);
}

/* One context per traversal job, checked. */
static hy_status set_jobs(hy_traverser* t, const hy_traverse_job* jobs, int32_t job_count) {
    if (!grow((void**)&t->ctx, &t->ctx_cap, job_count + 1, sizeof *t->ctx) ||
        !grow((void**)&t->jobs, &t->jobs_cap, job_count + 1, sizeof *t->jobs))
        return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory");
    for (int32_t j = 0; j < job_count; j++) {
        const hy_bvh* a = jobs[j].a;
        const hy_bvh* b = jobs[j].b ? jobs[j].b : a;
        if (!a || a->node_count == 0 || b->node_count == 0)
            return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal: job %d: tree not built (call hy_bvh_build first)", j);
        ctx_init(&t->ctx[j], a, b, t->only_moved);
        t->jobs[j] = (hy_traverse_job){a, b};
    }
    return HY_OK;
}

hy_status hy_bvh_traverse_jobs(hy_traverser* t, const hy_traverse_job* jobs, int32_t job_count, hy_pool* pool,
                               hy_candidates* out) {
    if (!t || !out || (job_count > 0 && !jobs)) return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal: NULL argument");
    hy_status cs = set_jobs(t, jobs, job_count);
    if (cs) return cs;
    return traverse(t, t->ctx, job_count, pool, out, 1);
}

hy_status hy_bvh_traverse_jobs_segments(hy_traverser* t, const hy_traverse_job* jobs, int32_t job_count,
                                        hy_pool* pool, hy_candidates* out) {
    if (!t || !out || (job_count > 0 && !jobs)) return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal: NULL argument");
    hy_status cs = set_jobs(t, jobs, job_count);
    if (cs) return cs;
    return traverse(t, t->ctx, job_count, pool, out, 0);
}

void hy_traverse_only_moved(hy_traverser* t, int on) { t->only_moved = on != 0; }

int64_t hy_traverse_segments(const hy_traverser* t, const hy_trav_segment** segs) {
    *segs = t->segs;
    return t->nsegs;
}

hy_status hy_traverse_join(hy_traverser* t, hy_pool* pool, hy_candidates* out) {
    if (!t || !out) return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal join: NULL argument");
    return join(t, pool, out);
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
    t->generation = atomic_fetch_add(&g_generation, 1) + 1;
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
    run_ctx r = {t, t->ctx, t->front, t->blocks, ids};
    t->last_node_pairs = 0;
    if (n == 0) return HY_OK;
    int64_t before = 0, after = 0;
    for (int i = 0; i < t->nworkers; i++) before += t->workers[i].node_pairs;
    if (pool)
        hy_pool_for(pool, n, 1, front_block, &r);
    else
        front_block(&r, 0, n, 0, 0);
    for (int i = 0; i < t->nworkers; i++) {
        if (t->workers[i].oom) return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory for candidates");
        after += t->workers[i].node_pairs;
    }
    t->last_node_pairs = after - before;
    return HY_OK;
}

int64_t hy_traverse_output(const hy_traverser* t, int64_t f, const hy_feature_pair** pairs, int32_t* job) {
    const block_rec* r = &t->blocks[f];
    *pairs = r->count ? t->workers[r->worker].v + r->begin : NULL;
    *job = t->front[f].job;
    return r->count;
}

hy_status hy_traverse_counts(const hy_traverser* t, hy_candidates* out) { return gather_counts(t, out); }

int64_t hy_traverse_last_node_pairs(const hy_traverser* t) { return t ? t->last_node_pairs : 0; }

int64_t hy_traverse_front_tests(const hy_traverser* t) { return t ? t->front_tests : 0; }

/* ---- device backends */

int32_t hy_traverse_job_list(const hy_traverser* t, const hy_traverse_job** jobs, const hy_trav_ctx** ctxs) {
    if (jobs) *jobs = t->jobs;
    if (ctxs) *ctxs = t->ctx;
    return t->njobs;
}

uint64_t hy_traverse_generation(const hy_traverser* t) { return t->generation; }

int64_t hy_traverse_front(const hy_traverser* t, const hy_trav_pair** front) {
    if (front) *front = t->front;
    return t->nfront;
}

hy_status hy_traverse_accept(hy_traverser* t, const int64_t* ids, int64_t n, const int64_t* offsets,
                             const hy_feature_pair* pairs, const hy_trav_counts* k) {
    if (!t || (n > 0 && (!ids || !offsets || !k)) || t->nworkers < 1)
        return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal: accept: NULL argument or no traversal begun");
    t->last_node_pairs = 0;
    if (n == 0) return HY_OK;
    int64_t total = offsets[n] - offsets[0];
    if (total < 0 || (total > 0 && !pairs))
        return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal: accept: bad offsets");
    for (int64_t i = 0; i < n; i++) {
        if (ids[i] < 0 || ids[i] >= t->nfront)
            return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal: front pair %lld out of range [0, %lld)",
                           (long long)ids[i], (long long)t->nfront);
        if (offsets[i + 1] < offsets[i]) return hy_fail(HY_ERR_INVALID_ARG, "bvh traversal: accept: bad offsets");
    }
    /* Appended to worker 0's buffer, which the host run appends to as well:
     * earlier outputs stay where they are. */
    worker_buf* w = &t->workers[0];
    if (!grow((void**)&w->v, &w->cap, w->n + total, sizeof *w->v))
        return hy_fail(HY_ERR_NOMEM, "bvh traversal: out of memory for %lld candidates", (long long)total);
    if (total) memcpy(w->v + w->n, pairs + offsets[0], sizeof *w->v * (size_t)total);
    for (int64_t i = 0; i < n; i++)
        t->blocks[ids[i]] = (block_rec){0, w->n + offsets[i] - offsets[0], offsets[i + 1] - offsets[i]};
    w->n += total;
    w->node_pairs += k->node_pairs;
    t->last_node_pairs = k->node_pairs;
    w->triangle_pairs += k->triangle_pairs;
    w->vf += k->vf;
    w->ee += k->ee;
    return HY_OK;
}
