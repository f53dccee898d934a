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
