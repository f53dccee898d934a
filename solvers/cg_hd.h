/* The CG's per-entry arithmetic (solvers/cg.c), shared with the device CG
 * (solvers/cg.cu) and its host twin (solvers/batch_step.c), so that a
 * solve has the same bits wherever its vectors live. Reductions are
 * core/sum_hd.h's (chunks of 32 entries from the vector's start, their sums
 * by one halving tree).
 *
 * A batch of nb solves lays its vectors one after the other: solve b's
 * entries are n_start[b] .. n_start[b + 1] - 1 and its chunks
 * c_start[b] .. c_start[b + 1] - 1 (c_start[b + 1] - c_start[b] =
 * hy_sum_hd_chunks of its length), so a chunk never spans two solves and
 * each solve's sums are those of its own vectors alone.
 *
 * HY_HD: compiled for the host and the device without contraction. */
#ifndef HY_SOLVERS_CG_HD_H
#define HY_SOLVERS_CG_HD_H

#include <stdint.h>

#include "core/hd.h"
#include "core/sum_hd.h"

/* r = b - q (the start's residual, q = A x). */
HY_HD void hy_cg_hd_residual(int64_t i, const double* b, const double* q, double* r) { r[i] = b[i] - q[i]; }

/* x += alpha p, r -= alpha q. */
HY_HD void hy_cg_hd_advance(int64_t i, double alpha, const double* p, const double* q, double* x, double* r) {
    x[i] = x[i] + alpha * p[i];
    r[i] = r[i] - alpha * q[i];
}

/* p = z + beta p. */
HY_HD void hy_cg_hd_direction(int64_t i, double beta, const double* z, double* p) { p[i] = z[i] + beta * p[i]; }

/* Vertex v's z = P r, P its 3x3 block (row-major) of a block-Jacobi
 * preconditioner (solvers/implicit.c's hy_implicit_block_precondition). */
HY_HD void hy_cg_hd_block3(int64_t v, const double* blocks, const double* r, double* z) {
    const double* P = blocks + 9 * v;
    const double* rv = r + 3 * v;
    double* zv = z + 3 * v;
    for (int a = 0; a < 3; a++) zv[a] = P[3 * a] * rv[0] + P[3 * a + 1] * rv[1] + P[3 * a + 2] * rv[2];
}

/* The last b with start[b] <= i (start: nb + 1 offsets, never
 * decreasing), so a solve of no entries is skipped. */
HY_HD int32_t hy_cg_hd_find(const int64_t* start, int32_t nb, int64_t i) {
    int32_t lo = 0, hi = nb - 1;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo + 1) / 2;
        if (start[mid] <= i) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* The solve b of a batch that chunk k (0 <= k < c_start[nb]) belongs to,
 * its first entry *o and its length *len (<= 32). */
HY_HD int32_t hy_cg_hd_chunk(const int64_t* c_start, const int64_t* n_start, int32_t nb, int64_t k, int64_t* o,
                             int* len) {
    int32_t b = hy_cg_hd_find(c_start, nb, k);
    int64_t first = n_start[b] + (k - c_start[b]) * HY_SUM_CHUNK, left = n_start[b + 1] - first;
    *o = first;
    *len = left < HY_SUM_CHUNK ? (int)left : HY_SUM_CHUNK;
    return b;
}

/* ---- a batch of solves in lockstep with a block-Jacobi preconditioner
 * (solvers/cg_batch.h): the operations of a round, for the solves marked
 * live, each with its own scalar (alpha, beta). Every solve's vectors have
 * 3 entries a vertex. */

enum {
    HY_CG_START,     /* r = b - q, z = P r, p = z; sums r.r, r.z */
    HY_CG_PQ,        /* sum p.q */
    HY_CG_ADVANCE,   /* x += alpha p, r -= alpha q, z = P r; sums r.r, r.z */
    HY_CG_DIRECTION, /* p = z + beta p */
};

typedef struct hy_cg_hd_vecs {
    const double *b, *blocks; /* right-hand sides; 9 per vertex: the preconditioner's blocks */
    double *x, *r, *z, *p, *q;
} hy_cg_hd_vecs;

/* Operation op's pass at vertex v (entries 3 v .. 3 v + 2); PQ has none. */
HY_HD void hy_cg_hd_batch_vertex(int op, const int64_t* n_start, int32_t nb, const uint8_t* live, const double* scal,
                                 int64_t v, hy_cg_hd_vecs V) {
    int32_t b = hy_cg_hd_find(n_start, nb, 3 * v);
    if (!live[b]) return;
    int64_t i = 3 * v;
    if (op == HY_CG_START) {
        for (int a = 0; a < 3; a++) hy_cg_hd_residual(i + a, V.b, V.q, V.r);
        hy_cg_hd_block3(v, V.blocks, V.r, V.z);
        for (int a = 0; a < 3; a++) V.p[i + a] = V.z[i + a];
    } else if (op == HY_CG_ADVANCE) {
        for (int a = 0; a < 3; a++) hy_cg_hd_advance(i + a, scal[b], V.p, V.q, V.x, V.r);
        hy_cg_hd_block3(v, V.blocks, V.r, V.z);
    } else if (op == HY_CG_DIRECTION) {
        for (int a = 0; a < 3; a++) hy_cg_hd_direction(i + a, scal[b], V.z, V.p);
    }
}

/* The vectors of operation op's sums: u[k] . w[k] for k < the count
 * returned (0, 1 or 2). */
HY_HD int hy_cg_hd_batch_sums(int op, hy_cg_hd_vecs V, const double* u[2], const double* w[2]) {
    if (op == HY_CG_PQ) {
        u[0] = V.p, w[0] = V.q;
        return 1;
    }
    if (op == HY_CG_DIRECTION) return 0;
    u[0] = V.r, w[0] = V.r;
    u[1] = V.r, w[1] = V.z;
    return 2;
}

#endif
