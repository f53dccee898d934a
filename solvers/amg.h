/* Aggregation multigrid for symmetric positive definite systems in 3x3
 * blocks (three unknowns per node) of the form
 *     A_II = m_I - sum_J W_IJ,   A_IJ = W_IJ  (I != J),
 * a "mass" block per node plus a graph Laplacian of coupling blocks: what
 * an implicit mass-spring step gives. Coarse levels group nodes into
 * aggregates (a node and its free neighbours, greedily) and take the
 * Galerkin product with the piecewise-constant prolongation, which keeps
 * that form exactly: m_K = sum of m_I over K's nodes, W_KL = sum of W_IJ
 * between them. The coarsest level is factored by sparse Cholesky.
 *
 * The hierarchy here starts at level 1: the caller owns the finest level
 * (it may be matrix-free), writes level 1's blocks each setup, and runs
 * its own smoothing, restriction and prolongation around hy_amg_vcycle.
 * All passes write disjoint rows and sum in a fixed order, so results are
 * bit-identical for any pool size. */
#ifndef HY_SOLVERS_AMG_H
#define HY_SOLVERS_AMG_H

#include <stdint.h>

#include "hyphys/hyphys.h"
#include "core/pool.h"

/* Greedy aggregation of a graph of n nodes (CSR adj_start/adj; entries may
 * repeat; nodes with skip[i] set, skip may be NULL, join nothing). Pass 1
 * makes an aggregate of each node whose neighbours are all still free,
 * with those neighbours; pass 2 puts each remaining node in the aggregate
 * of its first aggregated neighbour, or alone. agg[i] gets the aggregate
 * index (-1 for skipped nodes); returns the aggregate count, -1 when out of
 * memory. Deterministic: nodes are visited in index order. */
int32_t hy_amg_aggregate(int32_t n, const int32_t* adj_start, const int32_t* adj, const uint8_t* skip,
                         int32_t* agg);

/* The coarse level's off-diagonal pattern from a fine graph and its
 * aggregates: for each entry e of the fine CSR, slot[e] = the index of
 * block (agg[i], agg[adj[e]]) in the coarse CSR, or -1 when both ends are
 * in one aggregate or either is skipped (agg -1). *c_start (nc + 1) and
 * *c_col are allocated here (free()); each coarse row's columns ascend. */
hy_status hy_amg_coarse_pattern(int32_t n, const int32_t* adj_start, const int32_t* adj, const int32_t* agg,
                                int32_t nc, int32_t** c_start, int32_t** c_col, int32_t* slot);

typedef struct hy_amg hy_amg;

/* A hierarchy whose level 1 has n1 nodes and the off-diagonal pattern
 * row_start/col (copied; symmetric, no diagonal entries). */
hy_status hy_amg_create(int32_t n1, const int32_t* row_start, const int32_t* col, hy_amg** out);
void hy_amg_destroy(hy_amg* a);

/* Level 1's blocks, row-major 3x3: m (9 n1) and W (9 per pattern entry),
 * written by the caller before hy_amg_setup. */
double* hy_amg_mass_blocks(hy_amg* a);
double* hy_amg_coupling_blocks(hy_amg* a);
/* Level 1's pattern rows (n1 + 1 offsets into the coupling blocks). */
const int32_t* hy_amg_level1_rows(const hy_amg* a);

/* Per step: builds the coarse levels from level 1, the smoothers' inverse
 * diagonal blocks and the coarsest factor. HY_ERR_NUMERIC when a level is
 * not positive definite. */
hy_status hy_amg_setup(hy_amg* a, hy_pool* pool);

/* z = one symmetric V-cycle applied to r on level 1 (3 n1 entries each). */
void hy_amg_vcycle(hy_amg* a, hy_pool* pool, const double* r, double* z);

/* Number of levels below the caller's (>= 1) and nodes on the coarsest. */
int32_t hy_amg_levels(const hy_amg* a);
int32_t hy_amg_coarsest_nodes(const hy_amg* a);

/* Damped block-Jacobi weight and sweeps of the smoother (each level, before
 * and after the coarse correction): the caller's finest level uses the
 * same. */
#define HY_AMG_OMEGA 0.8
#define HY_AMG_SWEEPS 2

/* 3x3 symmetric positive definite inverse; returns 0 when not positive
 * definite (out then holds zeros). */
int hy_amg_inverse3(const double a[9], double out[9]);

#endif
