/* BVH traversal: self (one mesh against itself) and pair (two meshes),
 * producing vertex-face and edge-edge candidate feature pairs whose swept
 * boxes overlap.
 *
 * Each feature pair comes out once (hy_bvh ownership), pairs that share a
 * vertex are skipped in self traversal, and the test is conservative: every
 * feature pair whose swept boxes (grown by the BVH thickness) overlap is
 * emitted.
 *
 * Parallel work: the node-pair recursion is first expanded breadth first into
 * a front of independent node pairs (a fixed target size, independent of the
 * thread count); the front is then run on the hy_pool in fixed blocks, each
 * block writing its own output, and the outputs are joined in block order.
 * So the candidates, and their order, are the same for any number of
 * threads. */
#ifndef HY_COLLISION_TRAVERSE_H
#define HY_COLLISION_TRAVERSE_H

#include <stdint.h>

#include "collision/bvh.h"
#include "hyphys/hyphys.h"
#include "core/pool.h"

typedef enum hy_feature_kind {
    HY_FEATURE_VF = 0, /* vertex of mesh A against triangle of mesh B (self: both the one mesh) */
    HY_FEATURE_FV = 1, /* vertex of mesh B against triangle of mesh A (pair traversal only) */
    HY_FEATURE_EE = 2  /* edge of mesh A against edge of mesh B */
} hy_feature_kind;

/* A candidate: VF/FV: v[0] the vertex, v[1..3] the triangle's vertices in
 * the mesh's order; EE: v[0], v[1] the first edge, v[2], v[3] the second. */
typedef struct hy_feature_pair {
    int32_t v[4];
    int32_t kind;
} hy_feature_pair;

/* Same feature pair regardless of vertex order: VF triangle sorted, EE
 * edges sorted and ordered (kind FV is turned into VF). For comparing with
 * other lists; the traversal order itself is already deterministic. */
hy_feature_pair hy_feature_pair_canonical(hy_feature_pair p);
/* qsort comparator on canonical pairs (kind, then v[0..3]). */
int hy_feature_pair_cmp(const void* a, const void* b);

/* A growable candidate list, reused across steps (memory is kept). */
typedef struct hy_candidates {
    hy_feature_pair* pairs;
    int64_t count, cap;
    int64_t vf, ee;         /* counts by kind (FV counted in vf) */
    int64_t node_pairs;     /* node pairs visited */
    int64_t triangle_pairs; /* leaf triangle pairs with overlapping boxes */
    int64_t front;          /* independent node pairs run in parallel */
} hy_candidates;

void hy_candidates_free(hy_candidates* c);

/* Scratch for traversals (per-block buffers), kept across calls so a
 * steady-state step does not allocate. */
typedef struct hy_traverser hy_traverser;

hy_traverser* hy_traverser_create(void);
void hy_traverser_destroy(hy_traverser* t);

/* Self collisions of one mesh: every unordered pair of triangles with
 * overlapping boxes, and of their owned features every pair that shares no
 * vertex and whose boxes overlap. out is overwritten. pool may be NULL. */
hy_status hy_bvh_traverse_self(hy_traverser* t, const hy_bvh* bvh, hy_pool* pool, hy_candidates* out);

/* Several traversals as one parallel run (one front, one pool dispatch):
 * job i is self traversal of a when b is NULL or a, else pair traversal of
 * a against b. Output in job order, then traversal order. Meshes with
 * vertex ids (hy_bvh_set_vertex_ids) emit those ids. */
typedef struct hy_traverse_job {
    const hy_bvh* a;
    const hy_bvh* b;
} hy_traverse_job;

hy_status hy_bvh_traverse_jobs(hy_traverser* t, const hy_traverse_job* jobs, int32_t job_count, hy_pool* pool,
                               hy_candidates* out);

/* A run of a traversal's output where the workers wrote it: candidates
 * [offset, offset + count) of the whole, in order, at v. */
typedef struct hy_trav_segment {
    const hy_feature_pair* v;
    int64_t offset, count;
} hy_trav_segment;

/* hy_bvh_traverse_jobs without its last step, the copy of every candidate
 * into out->pairs (a pass over all of them that a consumer reading them
 * once can spare): out gets the counts (out->count the total), the pairs
 * stay in t, read as segments (hy_traverse_segments: the non-empty ones,
 * in order, valid until t's next traversal), or copied into out->pairs
 * afterwards by hy_traverse_join. */
hy_status hy_bvh_traverse_jobs_segments(hy_traverser* t, const hy_traverse_job* jobs, int32_t job_count,
                                        hy_pool* pool, hy_candidates* out);
int64_t hy_traverse_segments(const hy_traverser* t, const hy_trav_segment** segs);
hy_status hy_traverse_join(hy_traverser* t, hy_pool* pool, hy_candidates* out);

/* Collisions between two meshes (a != b; their vertex indices are separate
 * spaces unless both have vertex ids): VF (vertex of a, triangle of b), FV
 * (vertex of b, triangle of a), EE (edge of a, edge of b). Meshes in a moving
 * frame (hy_bvh.relative) are compared in b's frame, a's boxes swept by the
 * difference of the shifts. */
hy_status hy_bvh_traverse_pair(hy_traverser* t, const hy_bvh* a, const hy_bvh* b, hy_pool* pool, hy_candidates* out);

/* Staged traversal: the same work split into the proximity framework's
 * TRAVERSE jobs, one per front pair.
 * hy_traverse_begin makes the front of `jobs` (as hy_bvh_traverse_jobs
 * does) and returns its size; hy_traverse_run then runs front pairs ids[0..n)
 * (in any grouping and order, each exactly once over the traversal); a
 * pair's feature pairs come out in traversal order and are read with
 * hy_traverse_output (valid until the next run or begin; *job = the
 * hy_traverse_job it belongs to). Since each pair's output depends only on
 * the pair, the union is the same whoever ran which pair.
 * hy_traverse_counts fills the counters of `out` (not its pairs);
 * hy_traverse_last_node_pairs says how many node pairs the last run (or
 * hy_traverse_accept) tested: the work of those TRAVERSE jobs.
 * A GPU runs front pairs with hy_cuda_traverse_batch (collision/kernels.h), the
 * same per-pair code (collision/traverse_hd.h), read back the same way. */
hy_status hy_traverse_begin(hy_traverser* t, const hy_traverse_job* jobs, int32_t job_count, hy_pool* pool,
                            int64_t* front);
hy_status hy_traverse_run(hy_traverser* t, const int64_t* ids, int64_t n, hy_pool* pool);
int64_t hy_traverse_output(const hy_traverser* t, int64_t f, const hy_feature_pair** pairs, int32_t* job);
hy_status hy_traverse_counts(const hy_traverser* t, hy_candidates* out);
int64_t hy_traverse_last_node_pairs(const hy_traverser* t);
/* With on = 1, the traversals begun after it visit only node pairs of
 * which one node moved in its tree's last change (hy_bvh.trav_moved names
 * that change per tree; a tree with trav_moved 0 had none): the feature
 * pairs that may have moved since the traversal before, given the trees
 * changed only by that change, plus others of the same node pairs. 0 (the
 * default) visits every pair. A device runs its front pairs in full. */
void hy_traverse_only_moved(hy_traverser* t, int on);
/* Node pairs hy_traverse_begin tested to make the front. */
int64_t hy_traverse_front_tests(const hy_traverser* t);

/* Whether the CPU traversal gates triangle pairs eight at a time (AVX2,
 * collision/traverse_avx.c; on by default where the CPU has it): on = 1
 * asks for it (granted only with AVX2), 0 turns it off, -1 leaves it.
 * Returns the setting before. Both paths give the same pairs in the same
 * order; the switch is there to compare them. */
int hy_traverse_simd(int on);

#endif
