/* Whole-step continuous collision detection on one mesh moving linearly from
 * x0 to x1: BVH build or refit over swept boxes, self traversal into
 * vertex-face and edge-edge candidates, conservative filters, and the exact
 * elementary tests (collision/ccd.h). The whole mesh is one object, so
 * collisions between its separate parts and self collisions both count.
 *
 * The mesh is split into its connected components, each with its own BVH in
 * its own moving frame (hy_bvh.relative), so a piece that moves rigidly by
 * translation has no self candidates; pieces meet through pair traversal of
 * the BVHs whose swept boxes overlap. All traversals run as one job list.
 * Pieces with the same triangles (in each piece's own vertex numbering) as an
 * earlier piece, and nearly its shape up to translation and scale at both
 * ends of the step (a pile of copies of one body), are built with that
 * piece's tree (hy_frames_def.instance): a refit's cost instead of a build's,
 * and the same collisions, since the boxes are made from their own
 * positions.
 *
 * A hy_frames keeps the BVHs and every buffer between runs: the first run
 * builds, later ones refit (rebuilding when the tree has decayed) unless a
 * build is forced, and a run in steady state allocates only when a buffer
 * must grow. Results are the same for any pool and thread count, in the
 * same order. */
#ifndef HY_COLLISION_FRAMES_H
#define HY_COLLISION_FRAMES_H

#include <stdint.h>

#include "collision/bvh.h"
#include "collision/traverse.h"
#include "hyphys/hyphys.h"
#include "core/pool.h"

typedef struct hy_frames_def {
    double thickness;  /* contact distance, >= 0 (0 = touching); passed to the CCD tests */
    double max_decay;  /* refit while hy_bvh_quality stays <= this (> 1) */
    int use_filters;   /* 1: coplanarity filter before the exact tests */
    int force_build;   /* 1: build the BVH on every run (no refit) */
    int self_cull;     /* 1: self-collision culling (hy_bvh.self_cull) */
    int instance;      /* 1: a piece that is a copy of an earlier one (same triangles, nearly the same
                          shape up to translation and scale) takes that piece's tree when built
                          (hy_bvh_build_like) instead of a SAH build of its own */
} hy_frames_def;

hy_frames_def hy_frames_def_default(void);

typedef struct hy_frames_stats {
    int64_t candidates, vf_candidates, ee_candidates; /* from the traversal */
    int64_t exact_tests, vf_exact, ee_exact;          /* left after the filters */
    int64_t vf_found, ee_found;                       /* exact tests that report a collision */
    int64_t triangle_pairs, node_pairs, front;        /* traversal work */
    int64_t components, jobs;                         /* connected pieces; traversal jobs (self + pairs) */
    int64_t instanced;                                /* pieces this run built with an earlier piece's tree */
    int rebuilt;                                      /* 1 if this run built the BVH */
    double bvh_quality;                               /* hy_bvh_quality after the update */
    double ms_bvh, ms_traverse, ms_exact, ms_total;   /* wall clock per stage */
} hy_frames_stats;

typedef struct hy_frames hy_frames;

/* Topology: triangle_count triangles indexing [0, vertex_count). */
hy_status hy_frames_create(const int32_t* triangles, int32_t triangle_count, int32_t vertex_count,
                           const hy_frames_def* def, hy_frames** out);
void hy_frames_destroy(hy_frames* f);

/* One step: x0, x1 hold 3 * vertex_count doubles. pool may be NULL. */
hy_status hy_frames_run(hy_frames* f, const double* x0, const double* x1, hy_pool* pool, hy_frames_stats* stats);

/* The next run builds the BVHs from scratch (as force_build does for every
 * run); later runs refit again. */
void hy_frames_invalidate(hy_frames* f);

/* The colliding pairs of the last run, in traversal order (deterministic);
 * live until the next run. */
const hy_feature_pair* hy_frames_found(const hy_frames* f, int64_t* count);
/* The candidates of the last run (before filters), same lifetime: joined
 * into one array by the first call after a run (the run reads them where
 * the traversal left them); NULL when that copy finds no memory. */
const hy_candidates* hy_frames_candidates(hy_frames* f);
/* Where the filter and exact time of the last run's candidates goes:
 * each candidate classed by what decides it (index 0: vertex-face, 1:
 * edge-edge), then each stage timed on one thread, in candidate order,
 * over what it sees in the step: the coplanarity filter over all
 * candidates, the separating axes over its survivors (with the step's
 * running order hint), the separating axes over parts of the step
 * (hy_filter_slabs) over theirs, the exact test over the misses and over
 * the hits.
 * For profiling: the exact test's classes come from the run, the
 * filters' are worked out (with the run's thickness, whatever use_filters
 * says); the timed passes rerun each stage and change none of the run's
 * results. Call it after hy_frames_run, with the same x0 and x1. */
typedef struct hy_frames_breakdown {
    int64_t coplanar_culled[2], sat_culled[2], slab_culled[2], exact_miss[2], exact_hit[2];
    double ms_coplanar, ms_sat, ms_slabs, ms_exact_miss, ms_exact_hit;
    /* the filters over every candidate as the step runs them
     * (hy_filter_pairs: four pairs at a time where the CPU has AVX2); the
     * two stage times above are the pair-by-pair filters' */
    double ms_filters;
} hy_frames_breakdown;

hy_status hy_frames_profile(hy_frames* f, const double* x0, const double* x1, hy_frames_breakdown* out);

/* The BVH of connected component c (0 <= c < hy_frames_components), for
 * inspection; its vertex ids are the mesh's. */
int32_t hy_frames_components(const hy_frames* f);
const hy_bvh* hy_frames_bvh(const hy_frames* f, int32_t c);

#endif
