/* Several CG solves in lockstep with their vectors in one memory: on a
 * CUDA GPU (solvers/cg_cuda.h, device >= 0) or in host buffers (device -1,
 * the host twin: the same operations of solvers/cg_hd.h looped on the
 * pool). Each solve keeps its own scalars and its sums are those of its
 * own vectors in core/sum_hd.h's order, so every solve has the bits of its
 * own hy_cg_solve_precond with the block-Jacobi preconditioner
 * (hy_implicit_block_precondition), whatever shares the batch and wherever
 * it runs. The caller (solvers/batch_step.c) runs the products between the
 * operations on the vectors hy_cg_batch_vectors gives and keeps the
 * scalar logic (alpha, beta, the stopping tests) on the host: per
 * operation only the live marks and scalars go up and the sums come down.
 * Used by one thread at a time. */
#ifndef HY_SOLVERS_CG_BATCH_H
#define HY_SOLVERS_CG_BATCH_H

#include "core/pool.h"
#include "hyphys/hyphys.h"
#include "solvers/cg_hd.h"

typedef struct hy_cg_batch hy_cg_batch;

/* HY_ERR_UNSUPPORTED for a GPU this build or machine lacks, HY_ERR_NOMEM. */
hy_status hy_cg_batch_create(int device, hy_cg_batch** out);
void hy_cg_batch_destroy(hy_cg_batch* c);
/* nb solves, solve b of n_start[b + 1] - n_start[b] entries (a multiple of
 * 3), its right-hand side, starting x and 3x3 preconditioner blocks (9 per
 * vertex) at the same offsets of b, x and blocks (host arrays, copied). */
hy_status hy_cg_batch_load(hy_cg_batch* c, int32_t nb, const int64_t* n_start, const double* b, const double* x,
                           const double* blocks);
/* The batch's x (the start's product reads it), p (the iterations'
 * products read it) and q (they write it): device pointers on a GPU. */
void hy_cg_batch_vectors(hy_cg_batch* c, double** x, double** p, double** q);
/* Operation op (HY_CG_*, cg_hd.h) for the solves with live[b] != 0, scal
 * their alpha (ADVANCE) or beta (DIRECTION), else NULL; the live solves'
 * sums into sums[2 b] and sums[2 b + 1] (nb pairs). */
hy_status hy_cg_batch_op(hy_cg_batch* c, hy_pool* pool, int op, const uint8_t* live, const double* scal, double* sums);
/* Every solve's x, concatenated, into x (host). */
hy_status hy_cg_batch_result(hy_cg_batch* c, double* x);
/* Bytes moved between the host and the GPU since the batch was made (0 on
 * the host). */
int64_t hy_cg_batch_bytes(const hy_cg_batch* c);

#endif
