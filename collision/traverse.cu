/* The TRAVERSE kernel (collision/kernels.h): the host's traversal of a
 * front pair (hy_trav_run_pair, collision/traverse_hd.h), run by one
 * thread per pair after a breadth-first split, so its feature pairs and
 * their order are the host's (collision/traverse.c).
 *
 * Compiled by nvcc as CUDA C++ with --fmad=false, like leaf.cu. The
 * interface is C (extern "C"); errors become hy_status with a message
 * (hy_fail); nothing here aborts.
 *
 * Memory: per device, an arena holding the trees uploaded so far, each
 * sent again only when it changed (hy_bvh.version), the split pairs'
 * buffers, and pinned host staging; kept between calls, grown on demand. */
#include <cub/device/device_scan.cuh>
#include <string.h>

#include "collision/kernels.h"
#include "collision/kernels_cuda.cuh"
#include "collision/leaf_resident.h"
#include "collision/traverse_hd.h"



/* Depth-first stack of the TRAVERSE kernel, per thread (12 bytes a pair,
 * in local memory). A descent pushes at most three pairs more than it pops
 * per level, so this covers trees far deeper than a binned SAH build makes;
 * a deeper one is reported and the batch runs on the host. */
#define TRAV_STACK 256

/* A front pair's traversal is depth first in a fixed order, so its output
 * is the concatenation, in order, of the outputs of the pairs it expands
 * into (hy_trav_run_pair pushes them in reverse to visit them in the
 * listed order). A front of a few thousand pairs is far too few threads
 * for a GPU, and their subtrees differ wildly in size; so before the
 * traversal proper, the batch's pairs are expanded breadth first, in
 * rounds, each pair replaced by its children in order (a leaf pair stays),
 * until there are at least SPLIT_TARGET of them (the last round may make
 * up to four times as many; a batch of that many front pairs is not
 * split) or none expands. Each keeps the
 * index of the front pair it came from; the node pairs the expansion
 * tests are counted as hy_trav_run_pair counts them (one for the visit
 * plus the tests). Then one thread per split pair. */
#define SPLIT_TARGET ((int64_t)1 << 17)
#define SPLIT_ROUNDS 24

/* Expansion round, per pair s: its children (or itself, a leaf pair) in
 * kids[4 s ..], how many in n_kids[s]; expanded pairs counted in k[4]. */
__global__ void __launch_bounds__(BLOCK_THREADS)
    split_kernel(const hy_trav_ctx* __restrict__ ctxs, const hy_trav_pair* __restrict__ cur, int64_t m,
                 hy_trav_pair* __restrict__ kids, int64_t* __restrict__ n_kids, unsigned long long* __restrict__ k) {
    int64_t i = (int64_t)blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (i >= m) return;
    hy_trav_pair p = cur[i];
    int64_t tests = 0;
    int n = hy_trav_expand(ctxs, p, kids + HY_TRAV_EXPAND_MAX * i, &tests);
    if (n < 0) {
        kids[HY_TRAV_EXPAND_MAX * i] = p; /* a leaf pair: its run counts its own visit */
        n_kids[i] = 1;
        return;
    }
    n_kids[i] = n;
    atomicAdd(&k[0], (unsigned long long)(1 + tests));
    atomicAdd(&k[4], 1ull);
}

/* Compaction after the scan: pair s's children at offset[s] (inclusive
 * scan, so offset[s] - n_kids[s]), with s's front pair. */
__global__ void __launch_bounds__(BLOCK_THREADS)
    split_gather(const hy_trav_pair* __restrict__ kids, const int64_t* __restrict__ n_kids,
                 const int64_t* __restrict__ incl, const int32_t* __restrict__ own, int64_t m,
                 hy_trav_pair* __restrict__ next, int32_t* __restrict__ next_own) {
    int64_t i = (int64_t)blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (i >= m) return;
    int64_t n = n_kids[i], at = incl[i] - n;
    for (int64_t q = 0; q < n; q++) {
        next[at + q] = kids[HY_TRAV_EXPAND_MAX * i + q];
        next_own[at + q] = own[i];
    }
}

__global__ void split_init(int32_t* own, int64_t n) {
    int64_t i = (int64_t)blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (i < n) own[i] = (int32_t)i;
}

/* One thread per split pair. Pass 0 counts the pair's feature pairs into
 * counts[s] and its front pair's total (and adds the counters; a stack too
 * small sets k[5]); pass 1 writes them at offsets[s], from the scan of the
 * counts: so the output is in front order, then traversal order, as on
 * the host. */
__global__ void __launch_bounds__(BLOCK_THREADS)
    traverse_kernel(const hy_trav_ctx* __restrict__ ctxs, const hy_trav_pair* __restrict__ starts,
                    const int32_t* __restrict__ own, int64_t n, int pass, int64_t* __restrict__ counts,
                    int64_t* __restrict__ front_counts, const int64_t* __restrict__ offsets,
                    hy_feature_pair* __restrict__ out, unsigned long long* __restrict__ k) {
    int64_t i = (int64_t)blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (i >= n) return;
    hy_trav_pair stack[TRAV_STACK];
    hy_trav_counts c = {0, 0, 0, 0};
    hy_trav_out o;
    o.v = pass ? out + (offsets[i] - counts[i]) : NULL;
    o.n = 0;
    o.cap = pass ? counts[i] : 0;
    int r = hy_trav_run_pair(ctxs, starts[i], stack, TRAV_STACK, &o, &c);
    if (pass) return;
    if (r == HY_TRAV_STACK_FULL) {
        counts[i] = 0;
        atomicAdd(&k[5], 1ull);
        return;
    }
    counts[i] = o.n;
    /* integer sums: the same whatever order the threads add in */
    atomicAdd((unsigned long long*)&front_counts[own[i]], (unsigned long long)o.n);
    atomicAdd(&k[0], (unsigned long long)c.node_pairs);
    atomicAdd(&k[1], (unsigned long long)c.triangle_pairs);
    atomicAdd(&k[2], (unsigned long long)c.vf);
    atomicAdd(&k[3], (unsigned long long)c.ee);
}

/* The resident LEAF steps (collision/leaf_resident.h) over a batch's
 * candidates pairs[0..total) of n front pairs at offsets off (off[0] = 0). */
__global__ void __launch_bounds__(BLOCK_THREADS)
    resident_eval_kernel(const hy_feature_pair* __restrict__ pairs, int64_t total, const int64_t* __restrict__ off,
                         int64_t n, const double* __restrict__ md, const double* __restrict__ X0,
                         const double* __restrict__ X1, hy_ccd_options opts, unsigned char* __restrict__ hit,
                         double* __restrict__ toi) {
    int64_t i = (int64_t)blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (i >= total) return;
    hy_feature_pair p = pairs[i];
    double t = 1.0;
    hit[i] = hy_leaf_resident_eval(&p, md[hy_leaf_segment(off, n, i)], X0, X1, &opts, &t);
    toi[i] = t;
}

__global__ void __launch_bounds__(BLOCK_THREADS)
    resident_count_kernel(const unsigned char* __restrict__ hit, const int64_t* __restrict__ off, int64_t n,
                          int64_t* __restrict__ exact, int64_t* __restrict__ contacts) {
    int64_t s = (int64_t)blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (s >= n) return;
    hy_leaf_front_count(hit, off[s], off[s + 1], &exact[s], &contacts[s]);
}

__global__ void __launch_bounds__(BLOCK_THREADS)
    resident_compact_kernel(const hy_feature_pair* __restrict__ pairs, const unsigned char* __restrict__ hit,
                            const double* __restrict__ toi, const int64_t* __restrict__ off, int64_t n,
                            const int64_t* __restrict__ at, hy_leaf_contact* __restrict__ out) {
    int64_t s = (int64_t)blockIdx.x * BLOCK_THREADS + threadIdx.x;
    if (s >= n) return;
    hy_leaf_front_compact(pairs, hit, toi, off[s], off[s + 1], (int32_t)s, out + at[s]);
}

static_assert(sizeof(hy_leaf_contact) == 32, "hy_leaf_contact layout is shared with the host");

/* A tree kept in a device's arena: which tree, at which version
 * (hy_bvh.version), of which sizes, where. */
typedef struct tree_slot {
    const hy_bvh* b;
    uint64_t version;
    int64_t nodes, slots, features;
    size_t at, bytes;
} tree_slot;

typedef struct device_state {
    kernel_lane lane; /* one batch at a time per device, its stream */
    /* TRAVERSE: trees, contexts and start pairs (arena, arena_cap bytes);
     * per pair counts and offsets (pair_cap); feature pairs (out_cap);
     * the four counters */
    char* arena;
    size_t arena_cap;
    uint64_t arena_gen; /* the staged traversal whose contexts are in ctx (0: none) */
    size_t arena_top;   /* arena bytes given to trees */
    tree_slot* kept;    /* the trees in the arena (nkept, kept_cap) */
    int32_t nkept, kept_cap;
    hy_trav_ctx* ctx; /* device: the contexts (ctx_cap bytes) */
    size_t ctx_cap;
    void* stage; /* pinned host staging of the arena (stage_cap bytes) */
    size_t stage_cap;
    hy_trav_ctx* hctx; /* pinned: the contexts as the device reads them */
    size_t hctx_cap;
    hy_trav_pair* hstart; /* pinned: a batch's start pairs */
    size_t hstart_cap;
    hy_feature_pair* hout; /* pinned: a batch's feature pairs, downloaded */
    size_t hout_cap;
    int64_t* front_counts; /* per front pair of the batch (pair_cap) */
    int64_t pair_cap;
    /* the split pairs: two generations with their front pairs, the
     * children of one round, counts and their inclusive scan (split_cap
     * pairs; kids 4x), the scan's scratch */
    hy_trav_pair* split[2];
    int32_t* split_own[2];
    hy_trav_pair* kids;
    int64_t* counts;
    int64_t* offsets;
    int64_t split_cap;
    void* scan_tmp;
    size_t scan_tmp_cap;
    hy_feature_pair* out;
    int64_t out_cap;
    unsigned long long* k; /* node pairs, triangle pairs, vf, ee, pairs expanded, stack overflows */
    /* resident LEAF jobs (hy_cuda_traverse_leaf): the positions, per front
     * pair its distance, offsets, exact tests, contacts and where they
     * start; per candidate its answer; the contacts (byte capacities) */
    resident_x x;
    int eval_ready; /* the stack for resident_eval_kernel */
    void *r_md, *r_off, *r_exact, *r_count, *r_at, *r_hit, *r_toi, *r_out;
    size_t r_md_cap, r_off_cap, r_exact_cap, r_count_cap, r_at_cap, r_hit_cap, r_toi_cap, r_out_cap;
} device_state;

static pthread_once_t g_once = PTHREAD_ONCE_INIT;
static device_state g_dev[HY_CUDA_MAX_DEVICES];

static void init_locks(void) {
    for (int d = 0; d < HY_CUDA_MAX_DEVICES; d++) pthread_mutex_init(&g_dev[d].lane.lock, NULL);
}


/* Room in the arena for an array, 256-byte aligned. */
static size_t arena_take(size_t* used, size_t bytes) {
    size_t at = (*used + 255) & ~(size_t)255;
    *used = at + bytes;
    return at;
}

/* One tree the traversal reads, and where its arrays go in the arena. */
typedef struct tree_up {
    const hy_bvh* b;
    int64_t nodes, slots, features;
    size_t spans, node_fboxes, node_area, self_free, slots_at, leaf_fboxes, feature_fboxes;
    size_t at, bytes; /* its range of the arena (the offsets above are absolute) */
    int dirty;        /* its copy on the device is missing or stale */
    int32_t kept;     /* its entry in the device's kept trees */
} tree_up;

/* The arrays of tree q laid out from offset `at` (256-byte aligned each);
 * returns the end. */
static size_t tree_layout(tree_up* q, size_t at) {
    size_t used = at;
    q->at = at;
    q->spans = arena_take(&used, sizeof(hy_bvh_span) * (size_t)q->nodes);
    q->node_fboxes = arena_take(&used, sizeof(hy_fbox) * (size_t)q->nodes);
    q->node_area = arena_take(&used, sizeof(double) * (size_t)q->nodes);
    q->self_free = arena_take(&used, (size_t)q->nodes);
    q->slots_at = arena_take(&used, sizeof(hy_bvh_slot) * (size_t)q->slots);
    q->leaf_fboxes = arena_take(&used, sizeof(hy_fbox) * (size_t)q->slots);
    q->feature_fboxes = arena_take(&used, sizeof(hy_fbox) * (size_t)q->features);
    used = (used + 255) & ~(size_t)255;
    q->bytes = used - at;
    return used;
}

/* Grow a device buffer (contents not kept). */
static hy_status reserve_bytes(int device, void** p, size_t* cap, size_t want) {
    if (*cap >= want) return HY_OK;
    cudaFree(*p);
    *p = NULL;
    *cap = 0;
    size_t n = want + want / 2;
    CK(cudaMalloc(p, n));
    *cap = n;
    return HY_OK;
}

/* Grow a pinned host buffer (contents not kept). */
static hy_status reserve_pinned(int device, void** p, size_t* cap, size_t want) {
    if (*cap >= want && *p) return HY_OK;
    cudaFreeHost(*p);
    *p = NULL;
    *cap = 0;
    size_t n = want + want / 2;
    CK(cudaHostAlloc(p, n ? n : 1, cudaHostAllocDefault));
    *cap = n;
    return HY_OK;
}

/* ds->offsets[0..m) = inclusive prefix sums of ds->counts[0..m), on the
 * stream (CUB), its scratch grown as needed. */
static hy_status scan(int device, device_state* ds, int64_t m) {
    size_t bytes = 0;
    CK(cub::DeviceScan::InclusiveSum(NULL, bytes, ds->counts, ds->offsets, (int)m, ds->lane.stream));
    hy_status s = reserve_bytes(device, &ds->scan_tmp, &ds->scan_tmp_cap, bytes);
    if (s) return s;
    CK(cub::DeviceScan::InclusiveSum(ds->scan_tmp, bytes, ds->counts, ds->offsets, (int)m, ds->lane.stream));
    return HY_OK;
}

/* The batch with the device's lock held and the device current; host
 * scratch (trees, host offsets, the pairs downloaded) is the caller's. */
/* Run front pairs ids[0..n) of t on the device: their outputs end in
 * ds->hout (pinned, valid until the device's next traversal batch) at
 * h_offsets (n + 1 entries), the counters in *kout; the copies' seconds and
 * bytes added. Reads t's staged traversal only, never its outputs. */
static hy_status run_traverse(int device, device_state* ds, const hy_traverser* t, const int64_t* ids, int64_t n,
                              tree_up* trees, int32_t ntrees, const int32_t* job_tree, int64_t* h_offsets,
                              hy_trav_counts* kout, double* sec_transfer, double* sec_kernel, int64_t* bytes_up,
                              int64_t* bytes_down, int download) {
    const hy_traverse_job* jobs = NULL;
    const hy_trav_ctx* ctxs = NULL;
    const hy_trav_pair* front = NULL;
    int32_t njobs = hy_traverse_job_list(t, &jobs, &ctxs);
    (void)hy_traverse_front(t, &front);
    hy_status s = lane_ready(device, &ds->lane, (const void*)traverse_kernel);
    if (s) return s;

    /* The trees' copies on the device (the data layer's valid bits, per
     * tree): a tree already in the arena at its current version stays; a
     * changed one (a refit, a rebuild) goes up again in place; a new one
     * gets room at the end. When that room is missing the arena is made
     * again, large enough for these trees with room to spare, and they all
     * go up. The contexts go up once per staged traversal. */
    uint64_t gen = hy_traverse_generation(t);
    int resident = ds->arena_gen == gen;
    /* from here until the copies are done the arena and the contexts may
     * change (or a call fail half way): no traversal's are current */
    if (!resident) ds->arena_gen = 0;
    size_t need_new = 0, need_all = 0;
    for (int32_t u = 0; u < ntrees && !resident; u++) {
        tree_up* q = &trees[u];
        size_t bytes = tree_layout(q, 0);
        need_all += bytes;
        q->dirty = 1;
        int32_t k = 0;
        while (k < ds->nkept && !(ds->kept[k].b == q->b && ds->kept[k].nodes == q->nodes &&
                                  ds->kept[k].slots == q->slots && ds->kept[k].features == q->features))
            k++;
        if (k < ds->nkept) {
            tree_layout(q, ds->kept[k].at);
            q->dirty = ds->kept[k].version != q->b->version;
            q->kept = k;
        } else {
            q->at = (size_t)-1; /* room to find */
            need_new += bytes;
        }
    }
    if (!resident && ds->arena_top + need_new > ds->arena_cap) {
        /* start over: only these trees, all sent */
        ds->nkept = 0;
        ds->arena_top = 0;
        cudaFree(ds->arena);
        ds->arena = NULL;
        ds->arena_cap = 0;
        s = reserve_bytes(device, (void**)&ds->arena, &ds->arena_cap, 2 * need_all);
        if (s) return s;
        for (int32_t u = 0; u < ntrees; u++) {
            trees[u].at = (size_t)-1;
            trees[u].dirty = 1;
        }
    }
    if (!resident) {
        if (ds->kept_cap < ds->nkept + ntrees) {
            int32_t cap = 2 * (ds->nkept + ntrees);
            tree_slot* v = (tree_slot*)realloc(ds->kept, sizeof(tree_slot) * (size_t)cap);
            if (!v) return hy_fail(HY_ERR_NOMEM, "cuda:%d: out of host memory for a traversal batch", device);
            ds->kept = v;
            ds->kept_cap = cap;
        }
        for (int32_t u = 0; u < ntrees; u++) {
            tree_up* q = &trees[u];
            if (q->at != (size_t)-1) continue;
            ds->arena_top = tree_layout(q, ds->arena_top);
            q->kept = ds->nkept;
            tree_slot* k = &ds->kept[ds->nkept++];
            k->b = q->b;
            k->nodes = q->nodes;
            k->slots = q->slots;
            k->features = q->features;
            k->at = q->at;
            k->bytes = q->bytes;
            k->version = 0; /* set once sent */
        }
        s = reserve_pinned(device, &ds->stage, &ds->stage_cap, ds->arena_cap);
        if (!s) s = reserve_bytes(device, (void**)&ds->ctx, &ds->ctx_cap, sizeof(hy_trav_ctx) * (size_t)njobs);
        if (!s) s = reserve_pinned(device, (void**)&ds->hctx, &ds->hctx_cap, sizeof(hy_trav_ctx) * (size_t)njobs);
        if (s) return s;
    }
    s = reserve_pinned(device, (void**)&ds->hstart, &ds->hstart_cap, sizeof(hy_trav_pair) * (size_t)n);
    if (s) return s;
    if (ds->pair_cap < n + 1) {
        cudaFree(ds->front_counts);
        ds->front_counts = NULL;
        ds->pair_cap = 0;
        CK(cudaMalloc((void**)&ds->front_counts, sizeof(int64_t) * (size_t)(n + 1)));
        ds->pair_cap = n + 1;
    }
    int64_t split_need = n > HY_TRAV_EXPAND_MAX * SPLIT_TARGET ? n : HY_TRAV_EXPAND_MAX * SPLIT_TARGET;
    if (ds->split_cap < split_need) {
        for (int g = 0; g < 2; g++) {
            cudaFree(ds->split[g]);
            cudaFree(ds->split_own[g]);
            ds->split[g] = NULL;
            ds->split_own[g] = NULL;
        }
        cudaFree(ds->kids);
        cudaFree(ds->counts);
        cudaFree(ds->offsets);
        ds->kids = NULL;
        ds->counts = ds->offsets = NULL;
        ds->split_cap = 0;
        for (int g = 0; g < 2; g++) {
            CK(cudaMalloc((void**)&ds->split[g], sizeof(hy_trav_pair) * (size_t)split_need));
            CK(cudaMalloc((void**)&ds->split_own[g], sizeof(int32_t) * (size_t)split_need));
        }
        CK(cudaMalloc((void**)&ds->kids, sizeof(hy_trav_pair) * (size_t)(HY_TRAV_EXPAND_MAX * SPLIT_TARGET)));
        CK(cudaMalloc((void**)&ds->counts, sizeof(int64_t) * (size_t)split_need));
        CK(cudaMalloc((void**)&ds->offsets, sizeof(int64_t) * (size_t)split_need));
        ds->split_cap = split_need;
    }
    if (!ds->k) CK(cudaMalloc((void**)&ds->k, 6 * sizeof(unsigned long long)));

    /* Changed trees are staged in pinned host memory at their places in the
     * arena and sent in as few copies as their ranges allow; the contexts
     * as the device reads them (views into the arena). */
    char* A = ds->arena;
    double t0 = now_s();
    cudaError_t e = cudaSuccess;
    if (!resident) {
        char* H = (char*)ds->stage;
        size_t run_at = 0, run_end = 0; /* a range of adjacent changed trees */
        for (int32_t u = 0; u < ntrees; u++) {
            const tree_up* q = &trees[u];
            if (!q->dirty) continue;
            const hy_bvh* b = q->b;
            memcpy(H + q->spans, b->spans, sizeof(hy_bvh_span) * (size_t)q->nodes);
            memcpy(H + q->node_fboxes, b->node_fboxes, sizeof(hy_fbox) * (size_t)q->nodes);
            memcpy(H + q->node_area, b->node_area, sizeof(double) * (size_t)q->nodes);
            memcpy(H + q->self_free, b->self_free, (size_t)q->nodes);
            memcpy(H + q->slots_at, b->slots, sizeof(hy_bvh_slot) * (size_t)q->slots);
            memcpy(H + q->leaf_fboxes, b->leaf_fboxes, sizeof(hy_fbox) * (size_t)q->slots);
            if (q->features)
                memcpy(H + q->feature_fboxes, b->feature_fboxes, sizeof(hy_fbox) * (size_t)q->features);
            if (run_end > run_at && q->at == run_end) {
                run_end = q->at + q->bytes;
                continue;
            }
            if (run_end > run_at && e == cudaSuccess)
                e = cudaMemcpyAsync(A + run_at, H + run_at, run_end - run_at, cudaMemcpyHostToDevice, ds->lane.stream);
            run_at = q->at;
            run_end = q->at + q->bytes;
        }
        if (run_end > run_at && e == cudaSuccess)
            e = cudaMemcpyAsync(A + run_at, H + run_at, run_end - run_at, cudaMemcpyHostToDevice, ds->lane.stream);
        for (int32_t u = 0; u < ntrees; u++)
            if (trees[u].dirty) *bytes_up += (int64_t)trees[u].bytes;
        *bytes_up += (int64_t)(sizeof(hy_trav_ctx) * (size_t)njobs);
        hy_trav_ctx* hctx = ds->hctx;
        for (int32_t j = 0; j < njobs; j++) {
            hctx[j] = ctxs[j];
            hctx[j].only_moved = 0; /* the device runs its front pairs in full */
            for (int side = 0; side < 2; side++) {
                const tree_up* q = &trees[job_tree[2 * j + side]];
                hy_trav_mesh* m = side ? &hctx[j].B : &hctx[j].A;
                m->spans = (const hy_bvh_span*)(A + q->spans);
                m->node_fboxes = (const hy_fbox*)(A + q->node_fboxes);
                m->node_area = (const double*)(A + q->node_area);
                m->self_free = (const uint8_t*)(A + q->self_free);
                m->slots = (const hy_bvh_slot*)(A + q->slots_at);
                m->leaf_fboxes = (const hy_fbox*)(A + q->leaf_fboxes);
                m->feature_fboxes = (const hy_fbox*)(A + q->feature_fboxes);
                m->leaf_soa = NULL; /* the CPU's gate only */
                m->leaf_soa_stride = 0;
                m->node_moved = NULL;
                m->moved_at = 0;
                m->moved_all = 0;
            }
        }
        if (e == cudaSuccess && njobs > 0)
            e = cudaMemcpyAsync(ds->ctx, hctx, sizeof(hy_trav_ctx) * (size_t)njobs, cudaMemcpyHostToDevice,
                                ds->lane.stream);
    }
    for (int64_t i = 0; i < n; i++) ds->hstart[i] = front[ids[i]];
    *bytes_up += (int64_t)(sizeof(hy_trav_pair) * (size_t)n);
    if (e == cudaSuccess)
        e = cudaMemcpyAsync(ds->split[0], ds->hstart, sizeof(hy_trav_pair) * (size_t)n, cudaMemcpyHostToDevice,
                            ds->lane.stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(ds->k, 0, 6 * sizeof(unsigned long long), ds->lane.stream);
    if (e == cudaSuccess) e = cudaMemsetAsync(ds->front_counts, 0, sizeof(int64_t) * (size_t)n, ds->lane.stream);
    if (e == cudaSuccess) e = cudaStreamSynchronize(ds->lane.stream);
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        ds->arena_gen = 0;
        ds->nkept = 0; /* what reached the device is unknown: send everything next time */
        ds->arena_top = 0;
        return cuda_fail(device, "traversal upload", e);
    }
    if (!resident) {
        /* the copies are done: the kept trees are current */
        for (int32_t u = 0; u < ntrees; u++) ds->kept[trees[u].kept].version = trees[u].b->version;
        ds->arena_gen = gen;
    }
    const hy_trav_ctx* dctx = ds->ctx;
    unsigned long long hk[6];

    /* Split the front pairs (see SPLIT_TARGET). */
    double t1 = now_s();
    int g = 0;
    int64_t m = n;
    split_init<<<(unsigned int)((n + BLOCK_THREADS - 1) / BLOCK_THREADS), BLOCK_THREADS, 0, ds->lane.stream>>>(
        ds->split_own[0], n);
    CK(cudaGetLastError());
    unsigned long long expanded = 0;
    for (int round = 0; round < SPLIT_ROUNDS && m > 0 && m < SPLIT_TARGET; round++) {
        unsigned int blocks = (unsigned int)((m + BLOCK_THREADS - 1) / BLOCK_THREADS);
        split_kernel<<<blocks, BLOCK_THREADS, 0, ds->lane.stream>>>(dctx, ds->split[g], m, ds->kids, ds->counts, ds->k);
        CK(cudaGetLastError());
        s = scan(device, ds, m);
        if (s) return s;
        split_gather<<<blocks, BLOCK_THREADS, 0, ds->lane.stream>>>(ds->kids, ds->counts, ds->offsets, ds->split_own[g], m,
                                                               ds->split[1 - g], ds->split_own[1 - g]);
        CK(cudaGetLastError());
        int64_t m2 = 0;
        CK(cudaMemcpyAsync(&m2, ds->offsets + (m - 1), sizeof m2, cudaMemcpyDeviceToHost, ds->lane.stream));
        CK(cudaMemcpyAsync(hk, ds->k, sizeof hk, cudaMemcpyDeviceToHost, ds->lane.stream));
        CK(cudaStreamSynchronize(ds->lane.stream));
        g = 1 - g;
        m = m2;
        if (hk[4] == expanded) break; /* only leaf pairs left: the list is unchanged */
        expanded = hk[4];
    }

    /* Pass 0: count, per split pair and per front pair. */
    if (m > 0) {
        unsigned int blocks = (unsigned int)((m + BLOCK_THREADS - 1) / BLOCK_THREADS);
        traverse_kernel<<<blocks, BLOCK_THREADS, 0, ds->lane.stream>>>(dctx, ds->split[g], ds->split_own[g], m, 0,
                                                                   ds->counts, ds->front_counts, NULL, NULL, ds->k);
        CK(cudaGetLastError());
        s = scan(device, ds, m);
        if (s) return s;
    }
    CK(cudaStreamSynchronize(ds->lane.stream));
    double t2 = now_s();

    /* The front pairs' offsets on the host (a front is a few thousand
     * pairs, and they come back anyway to size the output). */
    CK(cudaMemcpyAsync(h_offsets + 1, ds->front_counts, sizeof(int64_t) * (size_t)n, cudaMemcpyDeviceToHost,
                       ds->lane.stream));
    CK(cudaMemcpyAsync(hk, ds->k, sizeof hk, cudaMemcpyDeviceToHost, ds->lane.stream));
    CK(cudaStreamSynchronize(ds->lane.stream));
    if (hk[5] > 0)
        return hy_fail(HY_ERR_UNSUPPORTED, "cuda:%d: %llu pairs of the batch descend deeper than the kernel's stack (%d)",
                       device, hk[5], TRAV_STACK);
    h_offsets[0] = 0;
    for (int64_t i = 0; i < n; i++) h_offsets[i + 1] += h_offsets[i];
    int64_t total = h_offsets[n];
    if (ds->out_cap < total) {
        cudaFree(ds->out);
        ds->out = NULL;
        ds->out_cap = 0;
        int64_t want = total + total / 2;
        CK(cudaMalloc((void**)&ds->out, sizeof(hy_feature_pair) * (size_t)want));
        ds->out_cap = want;
    }
    double t3 = now_s();

    /* Pass 1: write. */
    if (total > 0 && m > 0) {
        unsigned int blocks = (unsigned int)((m + BLOCK_THREADS - 1) / BLOCK_THREADS);
        traverse_kernel<<<blocks, BLOCK_THREADS, 0, ds->lane.stream>>>(dctx, ds->split[g], ds->split_own[g], m, 1,
                                                                   ds->counts, ds->front_counts, ds->offsets, ds->out,
                                                                   ds->k);
        CK(cudaGetLastError());
        CK(cudaStreamSynchronize(ds->lane.stream));
    }
    double t4 = now_s();
    *kout = (hy_trav_counts){(int64_t)hk[0], (int64_t)hk[1], (int64_t)hk[2], (int64_t)hk[3]};
    if (!download) { /* the pairs stay in ds->out */
        *bytes_down += (int64_t)(sizeof(int64_t) * (size_t)n + sizeof hk);
        *sec_transfer += (t1 - t0) + (t3 - t2);
        *sec_kernel += (t2 - t1) + (t4 - t3);
        return HY_OK;
    }
    s = reserve_pinned(device, (void**)&ds->hout, &ds->hout_cap, sizeof(hy_feature_pair) * (size_t)total);
    if (s) return s;
    e = total ? cudaMemcpyAsync(ds->hout, ds->out, sizeof(hy_feature_pair) * (size_t)total, cudaMemcpyDeviceToHost,
                                ds->lane.stream)
              : cudaSuccess;
    if (e == cudaSuccess) e = cudaStreamSynchronize(ds->lane.stream);
    double t5 = now_s();
    if (e != cudaSuccess) {
        (void)cudaGetLastError();
        return cuda_fail(device, "traversal download", e);
    }
    *bytes_down += (int64_t)(sizeof(int64_t) * (size_t)n + sizeof hk + sizeof(hy_feature_pair) * (size_t)total);
    *sec_transfer += (t1 - t0) + (t3 - t2) + (t5 - t4);
    *sec_kernel += (t2 - t1) + (t4 - t3);
    return HY_OK;
}

/* What a resident batch (hy_cuda_traverse_leaf) adds to a traversal. */
typedef struct resident_args {
    const double* md;
    uint64_t version;
    const double *X0, *X1;
    int32_t nv;
    hy_ccd_options opts;
    hy_leaf_contacts* out;
} resident_args;

/* Frees c's arrays and empties it (hy_leaf_contacts_free, whose C
 * declaration the CUDA side does not see). */
static void contacts_free(hy_leaf_contacts* c) {
    free(c->candidates);
    free(c->exact);
    free(c->offsets);
    free(c->contacts);
    memset(c, 0, sizeof *c);
}

/* After run_traverse(..., download 0): the candidates in ds->out at
 * h_offsets become LEAF jobs on the device (collision/leaf_resident.h steps
 * 1 to 4), and the counts and contacts come down into ra->out. Lock held,
 * device current. */
static hy_status run_resident(int device, device_state* ds, const int64_t* h_offsets, int64_t n,
                              const resident_args* ra, double* sec_transfer, double* sec_kernel, int64_t* up,
                              int64_t* down) {
    hy_leaf_contacts* out = ra->out;
    int64_t total = h_offsets[n];
    size_t slots = (size_t)n;
    hy_status s = HY_OK;
    if (!ds->eval_ready) {
        s = stack_for(device, (const void*)resident_eval_kernel);
        if (s) return s;
        ds->eval_ready = 1;
    }
    struct {
        void** p;
        size_t* cap;
        size_t want;
    } bufs[] = {{&ds->r_md, &ds->r_md_cap, sizeof(double) * slots},
                {&ds->r_off, &ds->r_off_cap, sizeof(int64_t) * (slots + 1)},
                {&ds->r_exact, &ds->r_exact_cap, sizeof(int64_t) * slots},
                {&ds->r_count, &ds->r_count_cap, sizeof(int64_t) * slots},
                {&ds->r_at, &ds->r_at_cap, sizeof(int64_t) * slots},
                {&ds->r_hit, &ds->r_hit_cap, (size_t)(total > 0 ? total : 1)},
                {&ds->r_toi, &ds->r_toi_cap, sizeof(double) * (size_t)(total > 0 ? total : 1)},
                {&ds->r_out, &ds->r_out_cap, sizeof(hy_leaf_contact) * (size_t)(total > 0 ? total : 1)}};
    for (size_t b = 0; b < sizeof bufs / sizeof bufs[0] && !s; b++) s = reserve_bytes(device, bufs[b].p, bufs[b].cap, bufs[b].want);
    if (s) return s;
    out->candidates = (int64_t*)malloc(sizeof(int64_t) * slots);
    out->exact = (int64_t*)malloc(sizeof(int64_t) * slots);
    out->offsets = (int64_t*)malloc(sizeof(int64_t) * (slots + 1));
    if (!out->candidates || !out->exact || !out->offsets)
        return hy_fail(HY_ERR_NOMEM, "cuda:%d: out of host memory for a resident batch", device);
    cudaStream_t st = ds->lane.stream;
    double t0 = now_s();
    s = resident_x_sync(device, st, &ds->x, ra->version, ra->X0, ra->X1, ra->nv, up);
    if (s) return s;
    CK(cudaMemcpyAsync(ds->r_md, ra->md, sizeof(double) * slots, cudaMemcpyHostToDevice, st));
    CK(cudaMemcpyAsync(ds->r_off, h_offsets, sizeof(int64_t) * (slots + 1), cudaMemcpyHostToDevice, st));
    CK(cudaStreamSynchronize(st));
    *up += (int64_t)(sizeof(double) * slots + sizeof(int64_t) * (slots + 1));
    double t1 = now_s();
    const int64_t* off = (const int64_t*)ds->r_off;
    if (total > 0)
        resident_eval_kernel<<<(unsigned int)((total + BLOCK_THREADS - 1) / BLOCK_THREADS), BLOCK_THREADS, 0, st>>>(
            ds->out, total, off, n, (const double*)ds->r_md, ds->x.X, ds->x.X + 3 * (int64_t)ra->nv, ra->opts,
            (unsigned char*)ds->r_hit, (double*)ds->r_toi);
    CK(cudaGetLastError());
    unsigned int fb = (unsigned int)((n + BLOCK_THREADS - 1) / BLOCK_THREADS);
    resident_count_kernel<<<fb, BLOCK_THREADS, 0, st>>>((const unsigned char*)ds->r_hit, off, n,
                                                        (int64_t*)ds->r_exact, (int64_t*)ds->r_count);
    CK(cudaGetLastError());
    size_t bytes = 0;
    CK(cub::DeviceScan::ExclusiveSum(NULL, bytes, (const int64_t*)ds->r_count, (int64_t*)ds->r_at, (int)n, st));
    s = reserve_bytes(device, &ds->scan_tmp, &ds->scan_tmp_cap, bytes);
    if (s) return s;
    CK(cub::DeviceScan::ExclusiveSum(ds->scan_tmp, bytes, (const int64_t*)ds->r_count, (int64_t*)ds->r_at, (int)n, st));
    resident_compact_kernel<<<fb, BLOCK_THREADS, 0, st>>>(ds->out, (const unsigned char*)ds->r_hit,
                                                          (const double*)ds->r_toi, off, n, (const int64_t*)ds->r_at,
                                                          (hy_leaf_contact*)ds->r_out);
    CK(cudaGetLastError());
    CK(cudaStreamSynchronize(st));
    double t2 = now_s();
    /* the counts down (the contact counts into candidates until the scan) */
    CK(cudaMemcpyAsync(out->exact, ds->r_exact, sizeof(int64_t) * slots, cudaMemcpyDeviceToHost, st));
    CK(cudaMemcpyAsync(out->candidates, ds->r_count, sizeof(int64_t) * slots, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    out->offsets[0] = 0;
    for (int64_t i = 0; i < n; i++) {
        out->offsets[i + 1] = out->offsets[i] + out->candidates[i];
        out->candidates[i] = h_offsets[i + 1] - h_offsets[i];
    }
    int64_t nc = out->offsets[n];
    out->contacts = (hy_leaf_contact*)malloc(sizeof(hy_leaf_contact) * (size_t)(nc > 0 ? nc : 1));
    if (!out->contacts) return hy_fail(HY_ERR_NOMEM, "cuda:%d: out of host memory for %lld contacts", device, (long long)nc);
    if (nc > 0)
        CK(cudaMemcpyAsync(out->contacts, ds->r_out, sizeof(hy_leaf_contact) * (size_t)nc, cudaMemcpyDeviceToHost, st));
    CK(cudaStreamSynchronize(st));
    double t3 = now_s();
    *down += (int64_t)(2 * sizeof(int64_t) * slots + sizeof(hy_leaf_contact) * (size_t)nc);
    *sec_transfer += (t1 - t0) + (t3 - t2);
    *sec_kernel += t2 - t1;
    return HY_OK;
}

/* The checks and the distinct trees of a traversal batch, then
 * run_traverse under the device's lane; accept != 0 takes the outputs
 * into t there (hy_cuda_traverse_batch), else they go to *out. */
static hy_status traverse_batch(int device, hy_traverser* t, const int64_t* ids, int64_t n, int accept,
                                hy_cuda_traversed* out, const resident_args* ra, double* seconds_transfer,
                                double* seconds_kernel) {
    double st = 0.0, sk = 0.0;
    int64_t up = 0, down = 0;
    if (seconds_transfer) *seconds_transfer = 0.0;
    if (seconds_kernel) *seconds_kernel = 0.0;
    hy_status s = device_check(device);
    if (s) return s;
    if (n < 0 || !t || (n > 0 && !ids))
        return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: traverse batch: NULL argument or n < 0", device);
    if (n == 0) return HY_OK;
    const hy_traverse_job* jobs = NULL;
    int32_t njobs = hy_traverse_job_list(t, &jobs, NULL);
    int64_t nfront = hy_traverse_front(t, NULL);
    for (int64_t i = 0; i < n; i++)
        if (ids[i] < 0 || ids[i] >= nfront)
            return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: front pair %lld out of range [0, %lld)", device,
                           (long long)ids[i], (long long)nfront);

    /* The distinct trees of the jobs (a tree shared by several jobs goes
     * up once), and per job the index of its A and B tree. */
    tree_up* trees = (tree_up*)calloc((size_t)(2 * njobs + 1), sizeof *trees);
    int32_t* job_tree = (int32_t*)malloc(sizeof(int32_t) * (size_t)(2 * njobs + 1));
    int64_t* h_offsets = (int64_t*)malloc(sizeof(int64_t) * (size_t)(n + 1));
    if (!trees || !job_tree || !h_offsets) {
        free(trees);
        free(job_tree);
        free(h_offsets);
        return hy_fail(HY_ERR_NOMEM, "cuda:%d: out of host memory for a traversal batch", device);
    }
    int32_t ntrees = 0;
    for (int32_t j = 0; j < njobs; j++)
        for (int side = 0; side < 2; side++) {
            const hy_bvh* b = side ? jobs[j].b : jobs[j].a;
            int32_t u = ntrees - 1;
            while (u >= 0 && trees[u].b != b) u--;
            if (u < 0) {
                u = ntrees++;
                tree_up* q = &trees[u];
                q->b = b;
                q->nodes = b->node_count;
                q->slots = b->triangle_count;
                q->features = b->feature_count;
            }
            job_tree[2 * j + side] = u;
        }

    pthread_once(&g_once, init_locks);
    device_state* ds = &g_dev[device];
    hy_trav_counts k = {0, 0, 0, 0};
    hy_feature_pair* pairs = NULL;
    s = lane_enter(device, &ds->lane);
    if (!s)
        s = run_traverse(device, ds, t, ids, n, trees, ntrees, job_tree, h_offsets, &k, &st, &sk, &up, &down, !ra);
    if (!s && ra) {
        s = run_resident(device, ds, h_offsets, n, ra, &st, &sk, &up, &down);
        if (s) {
            ds->x.version = 0; /* what reached the device is unknown */
            contacts_free(ra->out);
        } else {
            ra->out->counts = k;
            ra->out->bytes_up = up;
            ra->out->bytes_down = down;
        }
    }
    if (!s && accept) s = hy_traverse_accept(t, ids, n, h_offsets, ds->hout, &k);
    if (!s && !accept && !ra) {
        /* the caller's own copy: the pinned buffer is the next batch's */
        int64_t total = h_offsets[n] - h_offsets[0];
        pairs = (hy_feature_pair*)malloc(sizeof *pairs * (size_t)(total > 0 ? total : 1));
        if (!pairs) s = hy_fail(HY_ERR_NOMEM, "cuda:%d: out of host memory for %lld candidates", device, (long long)total);
        if (pairs && total > 0) memcpy(pairs, ds->hout, sizeof *pairs * (size_t)total);
    }
    pthread_mutex_unlock(&ds->lane.lock);
    free(trees);
    free(job_tree);
    if (!s && !accept && !ra) {
        out->offsets = h_offsets;
        out->pairs = pairs;
        out->counts = k;
        out->bytes_up = up;
        out->bytes_down = down;
    } else {
        free(h_offsets);
    }
    if (seconds_transfer) *seconds_transfer = st;
    if (seconds_kernel) *seconds_kernel = sk;
    return s;
}

extern "C" hy_status hy_cuda_traverse_batch(int device, hy_traverser* t, const int64_t* ids, int64_t n,
                                            double* seconds_transfer, double* seconds_kernel) {
    return traverse_batch(device, t, ids, n, 1, NULL, NULL, seconds_transfer, seconds_kernel);
}

extern "C" hy_status hy_cuda_traverse_device(int device, const hy_traverser* t, const int64_t* ids, int64_t n,
                                             hy_cuda_traversed* out, double* seconds_transfer, double* seconds_kernel) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: traverse batch: NULL out", device);
    memset(out, 0, sizeof *out);
    /* the batch reads t only: the const is cast away for the shared path,
     * which writes t only when it accepts */
    return traverse_batch(device, (hy_traverser*)t, ids, n, 0, out, NULL, seconds_transfer, seconds_kernel);
}

extern "C" hy_status hy_cuda_traverse_leaf(int device, const hy_traverser* t, const int64_t* ids, int64_t n,
                                           const double* md, uint64_t version, const double* X0, const double* X1,
                                           int32_t nv, const hy_ccd_options* opts, hy_leaf_contacts* out,
                                           double* seconds_transfer, double* seconds_kernel) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: resident traverse batch: NULL out", device);
    memset(out, 0, sizeof *out);
    if (seconds_transfer) *seconds_transfer = 0.0;
    if (seconds_kernel) *seconds_kernel = 0.0;
    if (!opts || nv < 0 || (n > 0 && (!md || !X0 || !X1)))
        return hy_fail(HY_ERR_INVALID_ARG, "cuda:%d: resident traverse batch: NULL argument or nv < 0", device);
    if (!hy_leaf_options_device_ok(opts))
        return hy_fail(HY_ERR_UNSUPPORTED, "cuda:%d: CCD options need refine_boxes == 0 and max_boxes <= %d", device,
                       HY_LEAF_MAX_BOXES);
    resident_args ra = {md, version, X0, X1, nv, *opts, out};
    return traverse_batch(device, (hy_traverser*)t, ids, n, 0, NULL, &ra, seconds_transfer, seconds_kernel);
}
