/* Sparse Cholesky factorization of a symmetric positive definite matrix
 * with a fixed sparsity pattern, through CHOLMOD (SuiteSparse): the fill-
 * reducing ordering and symbolic analysis are done once at create, each
 * factor is numeric only and reuses the factor's storage. The
 * factorization is simplicial (no OpenMP, no threads of its own), so a
 * factor and a solve give the same bits whatever thread calls them; meant
 * for small systems (a few thousand unknowns). */
#ifndef HY_SOLVERS_SPCHOL_H
#define HY_SOLVERS_SPCHOL_H

#include <stdint.h>

#include "hyphys/hyphys.h"

typedef struct hy_spchol hy_spchol;

/* n: order; col_start (n + 1) and row (col_start[n]): the upper triangle of
 * the pattern (row <= column) in compressed columns, each column's rows
 * ascending and its diagonal present. The arrays are copied. */
hy_status hy_spchol_create(int32_t n, const int32_t* col_start, const int32_t* row, hy_spchol** out);
void hy_spchol_destroy(hy_spchol* f);

/* A pattern of nb x nb dense blocks of bs x bs unknowns (1 <= bs <= 8):
 * block_start (nb + 1) and block_row, the upper triangle by block columns,
 * each column's block rows ascending and its diagonal block last. The
 * scalar pattern is every block full (a diagonal block its upper
 * triangle): column bs J + b holds rows bs I .. bs I + bs - 1 for each
 * block row I < J, then bs J .. bs J + b, the order of hy_spchol_values.
 * The fill-reducing ordering is taken over the blocks and keeps a block's
 * unknowns together, so the factor is made of dense blocks and each
 * hy_spchol_solve runs over them (short dense loops instead of one index
 * per entry). The arrays are copied. */
hy_status hy_spchol_create_blocks(int32_t nb, int32_t bs, const int32_t* block_start, const int32_t* block_row,
                                  hy_spchol** out);

/* The matrix values, col_start[n] of them in the pattern's order; the
 * caller writes them before each hy_spchol_factor. */
double* hy_spchol_values(hy_spchol* f);

/* Numeric factorization of the values written. HY_ERR_NUMERIC when the
 * matrix is not positive definite (the factor is then unusable). */
hy_status hy_spchol_factor(hy_spchol* f);

/* x = A^-1 b (n entries each; may alias). Needs a successful factor. Does
 * not allocate after the first call. */
void hy_spchol_solve(hy_spchol* f, const double* b, double* x);

#endif
