/* The detection's jobs: the step's rounds and the TRAVERSE and LEAF
 * batches (see collision/collide_jobs.h). */
#include "collision/collide_jobs.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collision/filter.h"
#include "collision/kernels.h"
#include "collision/leaf.h"
#include "collision/traverse_hd.h"
#include "core/error.h"
#include "sched/cuda.h"
#include "sched/proximity.h"

/* ---- the rounds of one step
 *
 * The response runs detection several times per step (collision/
 * response.c): every round over the same X0, with X1 changed only where
 * the previous round's impulses moved vertices. Each vertex is stamped
 * with the round its X1 last changed in, which tells a later round what
 * moved (collision/collide.c keeps the rest of the last round's
 * contacts). */

/* Start of a detect call: a new X0 starts the rounds again (round 1);
 * else the round advances and the vertices whose X1 changed are stamped
 * with it. */
hy_status hy_collide_round_begin(hy_collision_state* cs, const double* X0, const double* X1) {
    size_t n = 3 * (size_t)cs->vertex_count;
    if (!cs->round_x0) {
        cs->round_x0 = malloc(sizeof(double) * (n + 1));
        cs->round_x1 = malloc(sizeof(double) * (n + 1));
        cs->vertex_round = calloc((size_t)cs->vertex_count + 1, sizeof(int32_t));
        if (!cs->round_x0 || !cs->round_x1 || !cs->vertex_round)
            return hy_fail(HY_ERR_NOMEM, "out of memory for the detection rounds of %d vertices", cs->vertex_count);
        cs->round = 0;
    }
    if (cs->round == 0 || cs->round == INT32_MAX || memcmp(cs->round_x0, X0, sizeof(double) * n) != 0) {
        memcpy(cs->round_x0, X0, sizeof(double) * n);
        memcpy(cs->round_x1, X1, sizeof(double) * n);
        memset(cs->vertex_round, 0, sizeof(int32_t) * (size_t)cs->vertex_count);
        cs->round = 1;
        return HY_OK;
    }
    cs->round++;
    for (int32_t v = 0; v < cs->vertex_count; v++) {
        double* m = cs->round_x1 + 3 * (size_t)v;
        const double* x = X1 + 3 * (size_t)v;
        if (memcmp(m, x, sizeof(double) * 3) != 0) {
            memcpy(m, x, sizeof(double) * 3);
            cs->vertex_round[v] = cs->round;
        }
    }
    return HY_OK;
}

/* LEAF job i's points, x[0..3] at t = 0 and x[4..7] at t = 1
 * (collision/ccd.h order), from X0 and X1. */
static inline void leaf_points(const hy_detect_ctx* c, int64_t i, double x[8][3]) {
    const int32_t* v = c->cs->leaf[i].v;
    for (int j = 0; j < 4; j++)
        for (int k = 0; k < 3; k++) {
            x[j][k] = c->X0[3 * v[j] + k];
            x[4 + j][k] = c->X1[3 * v[j] + k];
        }
}

static void exact_block(void* p, int64_t begin, int64_t end, int64_t block, int worker) {
    const hy_detect_ctx* c = p;
    const hy_collision_state* cs = c->cs;
    (void)block;
    (void)worker;
    const int32_t* vr = cs->vertex_round;
    const int32_t round = cs->round;
    for (int64_t i = c->first + begin; i < c->first + end; i++) {
        double toi = 1.0, x[8][3];
        const int32_t* v = cs->leaf[i].v;
        if (c->only_moved && vr[v[0]] != round && vr[v[1]] != round && vr[v[2]] != round && vr[v[3]] != round) {
            /* none of its vertices moved: among the kept contacts, or not a contact */
            cs->hit[i] = 0;
            cs->toi[i] = 1.0;
            continue;
        }
        double md = cs->tjob_distance[cs->leaf_tjob[i]];
        leaf_points(c, i, x);
        int is_vf = cs->leaf[i].kind != HY_FEATURE_EE;
        /* separating axes, then the exact test: the arithmetic the GPU kernel shares */
        cs->hit[i] = (unsigned char)hy_leaf_eval(is_vf, (const double(*)[3])x, md, &c->opts, &toi);
        cs->toi[i] = toi;
    }
}

/* A TRAVERSE batch that ran (on the host or a GPU): what its front pairs
 * found appended, in id order, to the LEAF list. */
static hy_status traverse_collect(hy_detect_ctx* c, hy_batch* b) {
    hy_collision_state* cs = c->cs;
    const int64_t* ids = b->ids;
    int64_t n = b->n;
    b->work = hy_traverse_last_node_pairs(cs->traverser);
    int64_t total = 0;
    for (int64_t k = 0; k < n; k++) {
        const hy_feature_pair* fp;
        int32_t job;
        total += hy_traverse_output(cs->traverser, ids[k], &fp, &job);
    }
    int64_t need = cs->leaf_count + total;
    if (need > cs->leaf_capacity) {
        int64_t cap = cs->leaf_capacity ? cs->leaf_capacity : 4096;
        while (cap < need) cap *= 2;
        hy_feature_pair* l = realloc(cs->leaf, sizeof *l * (size_t)cap);
        if (l) cs->leaf = l;
        int32_t* lj = realloc(cs->leaf_tjob, sizeof *lj * (size_t)cap);
        if (lj) cs->leaf_tjob = lj;
        unsigned char* hit = realloc(cs->hit, (size_t)cap);
        if (hit) cs->hit = hit;
        double* toi = realloc(cs->toi, sizeof *toi * (size_t)cap);
        if (toi) cs->toi = toi;
        if (!l || !lj || !hit || !toi)
            return hy_fail(HY_ERR_NOMEM, "out of memory for %lld candidates", (long long)need);
        cs->leaf_capacity = cap;
    }
    for (int64_t k = 0; k < n; k++) {
        const hy_feature_pair* fp;
        int32_t job;
        int64_t m = hy_traverse_output(cs->traverser, ids[k], &fp, &job);
        if (m == 0) continue;
        memcpy(cs->leaf + cs->leaf_count, fp, sizeof *fp * (size_t)m);
        for (int64_t q = 0; q < m; q++) cs->leaf_tjob[cs->leaf_count + q] = job;
        cs->leaf_count += m;
    }
    b->made = total;
    return HY_OK;
}

/* TRAVERSE jobs on the world's pool. */
static hy_status traverse_host(void* vctx, int r, const hy_resource* res, hy_batch* b) {
    hy_detect_ctx* c = vctx;
    (void)r;
    (void)res;
    hy_status s = hy_traverse_run(c->cs->traverser, b->ids, b->n, c->pool);
    return s ? s : traverse_collect(c, b);
}

typedef struct gather_ctx {
    const hy_detect_ctx* c;
    int64_t first;
    hy_leaf_job* jobs;
} gather_ctx;

/* A block of GPU jobs' points, gathered from X0 and X1. */
static void gather_block(void* p, int64_t begin, int64_t end, int64_t block, int worker) {
    const gather_ctx* g = p;
    const hy_collision_state* cs = g->c->cs;
    (void)block;
    (void)worker;
    for (int64_t i = begin; i < end; i++) {
        hy_leaf_job* j = &g->jobs[i];
        leaf_points(g->c, g->first + i, j->x);
        j->min_distance = cs->tjob_distance[cs->leaf_tjob[g->first + i]];
        j->is_vf = cs->leaf[g->first + i].kind != HY_FEATURE_EE;
        j->pad = 0;
    }
}

/* LEAF jobs [first, first + n) on GPU `device`: their points gathered from
 * X0 and X1 (the jobs live in host memory; by the pool, since the GPU
 * waits for them), one batched launch; the copies' seconds added to
 * c->transfer. */
static hy_status leaf_gpu(hy_detect_ctx* c, int device, int64_t first, int64_t n) {
    hy_collision_state* cs = c->cs;
    hy_leaf_job* jobs = malloc(sizeof *jobs * (size_t)n);
    if (!jobs) return hy_fail(HY_ERR_NOMEM, "out of memory for %lld GPU jobs", (long long)n);
    gather_ctx g = {c, first, jobs};
    if (c->pool)
        hy_pool_for(c->pool, n, 1024, gather_block, &g);
    else
        gather_block(&g, 0, n, 0, 0);
    double copies = 0.0;
    hy_status s = hy_cuda_leaf_batch(device, jobs, n, &c->opts, cs->hit + first, cs->toi + first, &copies, NULL);
    c->transfer += copies;
    free(jobs);
    return s;
}

/* LEAF jobs [first, first + n): separating-axis filter, then the exact
 * test, on GPU `device`, or (device < 0) on the pool. */
hy_status hy_collide_run_leaf(hy_detect_ctx* c, int device, int64_t first, int64_t n) {
    if (device >= 0) return leaf_gpu(c, device, first, n);
    c->first = first;
    hy_pool_for(c->pool, n, 256, exact_block, c);
    return HY_OK;
}

static hy_status leaf_range(const hy_detect_ctx* c, const hy_batch* b) {
    if (b->first < 0 || b->first + b->n > c->cs->leaf_count)
        return hy_fail(HY_ERR_INTERNAL, "LEAF jobs [%lld, %lld) outside the %lld made", (long long)b->first,
                       (long long)(b->first + b->n), (long long)c->cs->leaf_count);
    return HY_OK;
}

/* LEAF jobs on the world's pool. */
static hy_status leaf_host(void* vctx, int r, const hy_resource* res, hy_batch* b) {
    hy_detect_ctx* c = vctx;
    (void)r;
    (void)res;
    hy_status s = leaf_range(c, b);
    return s ? s : hy_collide_run_leaf(c, -1, b->first, b->n);
}

/* ---- batches in parts, for a device fed by its own thread
 * (sched/backend.h, hy_job_kind_ops.device): prepared on the caller's
 * thread, the device part on the device's thread touching only the stage
 * (and the traversal's staged data, which no one writes during detection),
 * finished on the caller's thread. A GPU runs the kernels there; a modeled
 * device runs their C twins, the same shared arithmetic in the same
 * scheme, so the split path is exercised and checked where no GPU is. */

/* A LEAF batch's stage: its jobs, by reference (collision/leaf.h: the
 * device holds or receives the step's positions) or gathered (their
 * points), and their answers. */
typedef struct leaf_stage {
    hy_leaf_ref* refs; /* NULL: gathered */
    hy_leaf_job* jobs;
    unsigned char* hit;
    double* toi;
    hy_ccd_options opts;
    int send_positions; /* by reference: the device's copy of the positions is stale */
} leaf_stage;

static void leaf_stage_free(hy_batch* b) {
    leaf_stage* st = b->stage;
    if (!st) return;
    free(st->refs);
    free(st->jobs);
    free(st->hit);
    free(st->toi);
    free(st);
    b->stage = NULL;
}

/* LEAF, prepare (the caller's thread). The jobs go by reference where the
 * device holds the step's positions already, or where sending them (48
 * bytes a vertex) costs less than what references save over gathered
 * points (176 bytes a job); else gathered, by the pool. Which copy a
 * resource holds is kept here (hy_collision_state.resident_version): a
 * batch sent with the positions makes the copy current. A GPU that this
 * build cannot drive answers HY_ERR_UNSUPPORTED (the host runs the batch). */
static hy_status leaf_prepare(void* vctx, int r, const hy_resource* res, hy_batch* b) {
    hy_detect_ctx* c = vctx;
    hy_collision_state* cs = c->cs;
    hy_status s = leaf_range(c, b);
    if (s) return s;
    if (res->kind == HY_RESOURCE_CUDA && hy_cuda_device_count() == 0)
        return hy_fail(HY_ERR_UNSUPPORTED, "%s: no GPU in this build", res->name);
    int held = cs->resident_version[r] == cs->positions_version;
    int by_ref = held || (int64_t)(sizeof(hy_leaf_job) - sizeof(hy_leaf_ref)) * b->n >
                             6 * (int64_t)sizeof(double) * cs->vertex_count;
    leaf_stage* st = calloc(1, sizeof *st);
    int64_t n = b->n > 0 ? b->n : 1;
    if (st) {
        if (by_ref)
            st->refs = malloc(sizeof *st->refs * (size_t)n);
        else
            st->jobs = malloc(sizeof *st->jobs * (size_t)n);
        st->hit = malloc((size_t)n);
        st->toi = malloc(sizeof *st->toi * (size_t)n);
    }
    b->stage = st;
    if (!st || (!st->refs && !st->jobs) || !st->hit || !st->toi) {
        leaf_stage_free(b);
        return hy_fail(HY_ERR_NOMEM, "out of memory for %lld LEAF jobs of %s", (long long)b->n, res->name);
    }
    st->opts = c->opts;
    if (!by_ref) {
        gather_ctx g = {c, b->first, st->jobs};
        if (c->pool)
            hy_pool_for(c->pool, b->n, 1024, gather_block, &g);
        else
            gather_block(&g, 0, b->n, 0, 0);
        return HY_OK;
    }
    st->send_positions = !held;
    cs->resident_version[r] = cs->positions_version;
    for (int64_t i = 0; i < b->n; i++) {
        const hy_feature_pair* fp = &cs->leaf[b->first + i];
        hy_leaf_ref* ref = &st->refs[i];
        memcpy(ref->v, fp->v, sizeof ref->v);
        ref->is_vf = fp->kind != HY_FEATURE_EE;
        ref->pad = 0;
        ref->min_distance = cs->tjob_distance[cs->leaf_tjob[b->first + i]];
    }
    return HY_OK;
}

/* LEAF on a modeled device's thread: the LEAF kernels' C twins
 * (hy_leaf_eval_ref on the step's positions, which no one writes during
 * detection, or hy_leaf_eval on the gathered points), and the bytes a GPU
 * would move: the positions where its copy was stale, the jobs up, the
 * answers down. */
static hy_status leaf_device_model(void* vctx, int r, const hy_resource* res, hy_batch* b) {
    hy_detect_ctx* c = vctx;
    (void)r;
    (void)res;
    leaf_stage* st = b->stage;
    for (int64_t i = 0; i < b->n; i++) {
        double toi = 1.0;
        if (st->refs) {
            st->hit[i] = (unsigned char)hy_leaf_eval_ref(&st->refs[i], c->X0, c->X1, &st->opts, &toi);
        } else {
            const hy_leaf_job* j = &st->jobs[i];
            st->hit[i] = (unsigned char)hy_leaf_eval(j->is_vf, (const double(*)[3])j->x, j->min_distance, &st->opts, &toi);
        }
        st->toi[i] = toi;
    }
    if (st->send_positions) b->bytes_up += 6 * (int64_t)sizeof(double) * c->cs->vertex_count;
    b->bytes_up += (int64_t)(st->refs ? sizeof(hy_leaf_ref) : sizeof(hy_leaf_job)) * b->n;
    b->bytes_down += (int64_t)(1 + sizeof(double)) * b->n;
    return HY_OK;
}

/* LEAF on a GPU's thread: by reference against the positions it holds
 * (sent when stale), or the gathered jobs; one batched launch. */
static hy_status leaf_device_cuda(void* vctx, int r, const hy_resource* res, hy_batch* b) {
    hy_detect_ctx* c = vctx;
    (void)r;
    leaf_stage* st = b->stage;
    if (!st->refs) {
        hy_status s = hy_cuda_leaf_batch(res->device, st->jobs, b->n, &st->opts, st->hit, st->toi, &b->transfer, NULL);
        b->bytes_up = (int64_t)sizeof(hy_leaf_job) * b->n;
        b->bytes_down = (int64_t)(1 + sizeof(double)) * b->n;
        return s;
    }
    return hy_cuda_leaf_resident(res->device, c->cs->positions_version, c->X0, c->X1, c->cs->vertex_count, st->refs,
                                 b->n, &st->opts, st->hit, st->toi, &b->transfer, &b->bytes_up, &b->bytes_down);
}

/* LEAF, finish: the answers into the step's lists. */
static hy_status leaf_finish(void* vctx, int r, const hy_resource* res, hy_batch* b) {
    hy_detect_ctx* c = vctx;
    (void)r;
    (void)res;
    leaf_stage* st = b->stage;
    if (b->status && st->refs) c->cs->resident_version[r] = 0; /* what the device holds is unknown */
    if (!b->status) {
        memcpy(c->cs->hit + b->first, st->hit, (size_t)b->n);
        memcpy(c->cs->toi + b->first, st->toi, sizeof(double) * (size_t)b->n);
    }
    leaf_stage_free(b);
    return b->status;
}

/* A TRAVERSE batch's stage: its front pairs' outputs as hy_traverse_accept
 * reads them (offsets n + 1 entries, pairs, counters); or, where the
 * device runs the candidates' LEAF jobs itself (resident), the distance
 * of each front pair's job and the contacts that come back. */
typedef struct trav_stage {
    int64_t* offsets;
    hy_feature_pair* own; /* the pairs */
    int64_t own_cap;
    hy_trav_pair* stack;
    int64_t stack_cap;
    hy_trav_counts k;
    int resident;
    int send_positions; /* resident: the device's copy of the positions is stale */
    double* md;         /* resident: per front pair of the batch */
    hy_leaf_contacts dev;
} trav_stage;

static void trav_stage_free(hy_batch* b) {
    trav_stage* st = b->stage;
    if (!st) return;
    free(st->offsets);
    free(st->own);
    free(st->stack);
    free(st->md);
    hy_leaf_contacts_free(&st->dev);
    free(st);
    b->stage = NULL;
}

/* TRAVERSE, prepare: a stage (the ids stay the framework's until the batch
 * ends). A GPU that this build cannot drive answers HY_ERR_UNSUPPORTED. A
 * GPU runs the LEAF jobs of its candidates where they are (the step's
 * options always qualify, hy_leaf_options_device_ok), and so does a
 * modeled GPU when the state asks for it (device_leaf_model). */
static hy_status traverse_prepare(void* vctx, int r, const hy_resource* res, hy_batch* b) {
    hy_detect_ctx* c = vctx;
    hy_collision_state* cs = c->cs;
    if (res->kind == HY_RESOURCE_CUDA && hy_cuda_device_count() == 0)
        return hy_fail(HY_ERR_UNSUPPORTED, "%s: no GPU in this build", res->name);
    trav_stage* st = calloc(1, sizeof(trav_stage));
    b->stage = st;
    if (!st) return hy_fail(HY_ERR_NOMEM, "out of memory for a TRAVERSE batch of %s", res->name);
    int model_gpu = res->kind == HY_RESOURCE_MODEL && cs->device_leaf_model &&
                    hy_prox_model(c->prox)->device[r].kind == HY_DEVICE_GPU;
    st->resident = (res->kind == HY_RESOURCE_CUDA || model_gpu) && hy_leaf_options_device_ok(&c->opts);
    if (!st->resident) return HY_OK;
    st->md = malloc(sizeof(double) * (size_t)(b->n > 0 ? b->n : 1));
    if (!st->md) {
        trav_stage_free(b);
        return hy_fail(HY_ERR_NOMEM, "out of memory for a TRAVERSE batch of %s", res->name);
    }
    const hy_trav_pair* front = NULL;
    (void)hy_traverse_front(cs->traverser, &front);
    for (int64_t i = 0; i < b->n; i++) st->md[i] = cs->tjob_distance[front[b->ids[i]].job];
    st->send_positions = cs->resident_version[r] != cs->positions_version;
    cs->resident_version[r] = cs->positions_version;
    return HY_OK;
}

/* Grow *p (elements of elem bytes, *cap of them) to at least need. */
static int grow_to(void** p, int64_t* cap, int64_t need, size_t elem) {
    if (need <= *cap) return 1;
    int64_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    void* q = realloc(*p, elem * (size_t)c);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

/* TRAVERSE on a modeled device's thread: the TRAVERSE kernel's C twin. Each
 * front pair runs hy_trav_run_pair (collision/traverse_hd.h) into the
 * stage, again with more room where it ran out (of output or of stack), so
 * its feature pairs are the host's, in the host's order. */
static hy_status traverse_device_model(void* vctx, int r, const hy_resource* res, hy_batch* b) {
    hy_detect_ctx* c = vctx;
    (void)r;
    trav_stage* st = b->stage;
    const hy_trav_ctx* ctxs = NULL;
    const hy_trav_pair* front = NULL;
    (void)hy_traverse_job_list(c->cs->traverser, NULL, &ctxs);
    (void)hy_traverse_front(c->cs->traverser, &front);
    st->offsets = malloc(sizeof(int64_t) * (size_t)(b->n + 1));
    if (!st->offsets || !grow_to((void**)&st->stack, &st->stack_cap, HY_TRAV_EXPAND_MAX * 4, sizeof *st->stack))
        return hy_fail(HY_ERR_NOMEM, "out of memory for a TRAVERSE batch of %s", res->name);
    int64_t total = 0;
    st->offsets[0] = 0;
    for (int64_t i = 0; i < b->n; i++) {
        for (;;) {
            if (!grow_to((void**)&st->own, &st->own_cap, total + 64, sizeof *st->own))
                return hy_fail(HY_ERR_NOMEM, "out of memory for the candidates of %s", res->name);
            hy_trav_counts k = {0, 0, 0, 0};
            hy_trav_out o = {st->own + total, 0, st->own_cap - total};
            int rc = hy_trav_run_pair(ctxs, front[b->ids[i]], st->stack, st->stack_cap, &o, &k);
            if (rc == HY_TRAV_STACK_FULL) {
                if (!grow_to((void**)&st->stack, &st->stack_cap, 2 * st->stack_cap, sizeof *st->stack))
                    return hy_fail(HY_ERR_NOMEM, "out of memory for a traversal stack of %s", res->name);
                continue;
            }
            if (o.n > o.cap) {
                if (!grow_to((void**)&st->own, &st->own_cap, total + o.n, sizeof *st->own))
                    return hy_fail(HY_ERR_NOMEM, "out of memory for the candidates of %s", res->name);
                continue;
            }
            total += o.n;
            st->k.node_pairs += k.node_pairs;
            st->k.triangle_pairs += k.triangle_pairs;
            st->k.vf += k.vf;
            st->k.ee += k.ee;
            break;
        }
        st->offsets[i + 1] = total;
    }
    /* what the GPU would move besides the trees (those go up only when
     * they changed since the GPU's copy, counted on a real GPU): the start
     * pairs up, the offsets, counters and candidates down */
    b->bytes_up += (int64_t)sizeof(hy_trav_pair) * b->n;
    if (!st->resident) {
        b->bytes_down += (int64_t)sizeof(int64_t) * b->n + 6 * (int64_t)sizeof(uint64_t) +
                         (int64_t)sizeof(hy_feature_pair) * total;
        return HY_OK;
    }
    /* resident: the candidates become LEAF jobs here (the kernels' twin);
     * up go the positions where stale and the distances, down the counts
     * and the contacts */
    hy_status s = hy_leaf_resident_run(st->own, st->offsets, b->n, st->md, c->X0, c->X1, &c->opts, &st->dev);
    if (s) return s;
    if (st->send_positions) b->bytes_up += 6 * (int64_t)sizeof(double) * c->cs->vertex_count;
    b->bytes_up += (int64_t)sizeof(double) * b->n;
    b->bytes_down += 3 * (int64_t)sizeof(int64_t) * b->n + 6 * (int64_t)sizeof(uint64_t) +
                     (int64_t)sizeof(hy_leaf_contact) * st->dev.offsets[b->n];
    return HY_OK;
}

/* TRAVERSE on a GPU's thread: the kernels, the outputs left for finish. */
static hy_status traverse_device_cuda(void* vctx, int r, const hy_resource* res, hy_batch* b) {
    hy_detect_ctx* c = vctx;
    (void)r;
    trav_stage* st = b->stage;
    if (st->resident) {
        hy_status s = hy_cuda_traverse_leaf(res->device, c->cs->traverser, b->ids, b->n, st->md,
                                            c->cs->positions_version, c->X0, c->X1, c->cs->vertex_count, &c->opts,
                                            &st->dev, &b->transfer, NULL);
        if (s) return s;
        st->k = st->dev.counts;
        b->bytes_up = st->dev.bytes_up;
        b->bytes_down = st->dev.bytes_down;
        return HY_OK;
    }
    hy_cuda_traversed out;
    hy_status s = hy_cuda_traverse_device(res->device, c->cs->traverser, b->ids, b->n, &out, &b->transfer, NULL);
    if (s) return s;
    st->offsets = out.offsets;
    st->own = out.pairs;
    st->k = out.counts;
    b->bytes_up = out.bytes_up;
    b->bytes_down = out.bytes_down;
    return HY_OK;
}

/* A resident TRAVERSE batch that ran: the traversal's counters taken
 * (its front pairs output nothing to the LEAF list: the batch makes no
 * LEAF jobs), and per front pair its counts and its contacts, appended to
 * the device contacts in id order. */
static hy_status resident_collect(hy_detect_ctx* c, hy_batch* b, trav_stage* st) {
    hy_collision_state* cs = c->cs;
    int64_t* zero = calloc((size_t)b->n + 1, sizeof(int64_t));
    if (!zero) return hy_fail(HY_ERR_NOMEM, "out of memory for a TRAVERSE batch's offsets");
    hy_status s = hy_traverse_accept(cs->traverser, b->ids, b->n, zero, NULL, &st->k);
    free(zero);
    if (s) return s;
    b->work = hy_traverse_last_node_pairs(cs->traverser);
    b->made = 0;
    if (b->n == 0 || !st->dev.offsets) return HY_OK;
    int64_t nc = st->dev.offsets[b->n];
    if (!grow_to((void**)&cs->dev_contacts, &cs->dev_cap, cs->dev_count + nc, sizeof *cs->dev_contacts))
        return hy_fail(HY_ERR_NOMEM, "out of memory for %lld contacts", (long long)(cs->dev_count + nc));
    for (int64_t i = 0; i < b->n; i++) {
        int64_t f = b->ids[i], first = st->dev.offsets[i], m = st->dev.offsets[i + 1] - first;
        cs->front_dev_cand[f] = st->dev.candidates[i];
        cs->front_dev_exact[f] = st->dev.exact[i];
        for (int64_t q = first; q < first + m; q++) {
            hy_leaf_contact d = st->dev.contacts[q];
            d.front = (int32_t)f;
            cs->dev_contacts[cs->dev_count + q] = d;
        }
    }
    cs->dev_count += nc;
    cs->resident_fronts += b->n;
    cs->resident_contacts += nc;
    return HY_OK;
}

/* TRAVERSE, finish: the outputs accepted into the traversal as if the host
 * had made them, then appended to the LEAF list (traverse_collect). */
static hy_status traverse_finish(void* vctx, int r, const hy_resource* res, hy_batch* b) {
    hy_detect_ctx* c = vctx;
    (void)r;
    (void)res;
    trav_stage* st = b->stage;
    hy_status s = b->status;
    if (s && st->resident) c->cs->resident_version[r] = 0; /* what the device holds is unknown */
    if (!s && st->resident) {
        s = resident_collect(c, b, st);
        trav_stage_free(b);
        return s;
    }
    if (!s) s = hy_traverse_accept(c->cs->traverser, b->ids, b->n, st->offsets, st->own, &st->k);
    trav_stage_free(b);
    return s ? s : traverse_collect(c, b);
}

/* The collision job kinds as the framework runs them (sched/backend.h): the
 * host code, the GPU kernels' entries (collision/kernels.h), and the
 * batches in parts for the devices fed by their own threads. */
const hy_job_kind_ops hy_collision_jobs[HY_JOB_KINDS] = {
    [HY_JOB_TRAVERSE] = {.name = "TRAVERSE",
                         .run = {[HY_RESOURCE_CPU] = traverse_host, [HY_RESOURCE_MODEL] = traverse_prepare,
                                 [HY_RESOURCE_CUDA] = traverse_prepare},
                         .device = {[HY_RESOURCE_MODEL] = traverse_device_model,
                                    [HY_RESOURCE_CUDA] = traverse_device_cuda},
                         .finish = {[HY_RESOURCE_MODEL] = traverse_finish, [HY_RESOURCE_CUDA] = traverse_finish}},
    [HY_JOB_LEAF] = {.name = "LEAF",
                     .run = {[HY_RESOURCE_CPU] = leaf_host, [HY_RESOURCE_MODEL] = leaf_prepare,
                             [HY_RESOURCE_CUDA] = leaf_prepare},
                     .device = {[HY_RESOURCE_MODEL] = leaf_device_model, [HY_RESOURCE_CUDA] = leaf_device_cuda},
                     .finish = {[HY_RESOURCE_MODEL] = leaf_finish, [HY_RESOURCE_CUDA] = leaf_finish}},
};
