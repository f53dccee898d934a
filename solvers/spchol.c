#include "solvers/spchol.h"

#include <cholmod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

struct hy_spchol {
    int32_t n;
    cholmod_common c;
    cholmod_sparse* A; /* upper triangle stored (stype 1); values written by the caller */
    cholmod_factor* L;
    cholmod_dense *B, *X, *Y, *E; /* solve workspace, kept between solves */
    int factored;
    /* a factor of dense blocks (hy_spchol_create_blocks): the factor's
     * order keeps each block's unknowns together; L's blocks are copied
     * out of CHOLMOD's factor after each factorization */
    int32_t bs, nb;
    int32_t* perm;     /* n: the factor's k-th unknown is perm[k] */
    int32_t* lb_start; /* nb + 1: block column J's blocks below the diagonal */
    int32_t* lb_row;   /* their block rows, ascending */
    double* ld;        /* bs^2 per block column: the diagonal block, row-major (lower triangle) */
    double* lo;        /* bs^2 per block below the diagonal, row-major */
    int32_t* slot;     /* nb: scratch, a block row's block in the column being copied */
    double* y;         /* n: the solve's permuted vector */
};

/* perm: NULL for CHOLMOD's own ordering, else the order to keep */
static hy_status create(int32_t n, const int32_t* col_start, const int32_t* row, const int32_t* perm, hy_spchol** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "spchol: out is NULL");
    *out = NULL;
    if (n < 1 || !col_start || !row) return hy_fail(HY_ERR_INVALID_ARG, "spchol: empty pattern (n %d)", n);
    hy_spchol* f = calloc(1, sizeof *f);
    if (!f) return hy_fail(HY_ERR_NOMEM, "spchol: out of memory");
    f->n = n;
    cholmod_start(&f->c);
    /* Errors come back as statuses, not as CHOLMOD's printed messages. */
    f->c.print = 0;
    f->c.error_handler = NULL;
    /* Nested dissection (METIS) only: on a mesh's 2D graph it fills far
     * less than AMD, and trying both at every create would cost a second
     * analysis. Simplicial, not supernodal: Debian's CHOLMOD runs OpenMP
     * regions in the supernodal factorization (libgomp threads beside the
     * pool's, and races ThreadSanitizer cannot see through), and the
     * matrices here are small (the coarsest multigrid level: ~2k unknowns,
     * ~3% of a cloth_ball run). */
    f->c.nmethods = 1;
    f->c.method[0].ordering = CHOLMOD_METIS;
    f->c.postorder = 1;
    f->c.supernodal = CHOLMOD_SIMPLICIAL;
    f->c.final_ll = 1; /* LL^T, as analysed */
    int64_t nnz = col_start[n];
    f->A = cholmod_allocate_sparse((size_t)n, (size_t)n, (size_t)nnz, 1, 1, 1, CHOLMOD_REAL, &f->c);
    if (!f->A) goto fail;
    memcpy(f->A->p, col_start, (size_t)(n + 1) * sizeof(int32_t));
    memcpy(f->A->i, row, (size_t)nnz * sizeof(int32_t));
    memset(f->A->x, 0, (size_t)nnz * sizeof(double));
    if (perm) {
        /* the caller's order as it is: no postordering, which could
         * separate a block's unknowns */
        f->c.method[0].ordering = CHOLMOD_GIVEN;
        f->c.postorder = 0;
        f->L = cholmod_analyze_p(f->A, (int32_t*)perm, NULL, 0, &f->c);
    } else {
        f->L = cholmod_analyze(f->A, &f->c);
    }
    f->B = cholmod_zeros((size_t)n, 1, CHOLMOD_REAL, &f->c);
    if (!f->L || !f->B || f->c.status < CHOLMOD_OK) goto fail;
    *out = f;
    return HY_OK;
fail:;
    int st = f->c.status;
    hy_spchol_destroy(f);
    return hy_fail(st == CHOLMOD_OUT_OF_MEMORY ? HY_ERR_NOMEM : HY_ERR_INVALID_ARG,
                   "spchol: analysis of a %d x %d pattern with %lld entries failed (CHOLMOD status %d)", n, n,
                   (long long)nnz, st);
}

hy_status hy_spchol_create(int32_t n, const int32_t* col_start, const int32_t* row, hy_spchol** out) {
    return create(n, col_start, row, NULL, out);
}

hy_status hy_spchol_create_blocks(int32_t nb, int32_t bs, const int32_t* block_start, const int32_t* block_row,
                                  hy_spchol** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "spchol: out is NULL");
    *out = NULL;
    if (nb < 1 || bs < 1 || bs > 8 || !block_start || !block_row)
        return hy_fail(HY_ERR_INVALID_ARG, "spchol: bad block pattern (%d blocks of %d)", nb, bs);
    int32_t n = nb * bs, nbe = block_start[nb];
    int32_t* col_start = calloc((size_t)n + 1, sizeof *col_start);
    int32_t* row = malloc((size_t)nbe * (size_t)(bs * bs) * sizeof *row);
    int32_t* perm = malloc((size_t)n * sizeof *perm);
    if (!col_start || !row || !perm) {
        free(col_start), free(row), free(perm);
        return hy_fail(HY_ERR_NOMEM, "spchol: out of memory");
    }
    /* the scalar pattern */
    int64_t k = 0;
    for (int32_t J = 0; J < nb; J++)
        for (int b = 0; b < bs; b++) {
            for (int32_t q = block_start[J]; q < block_start[J + 1]; q++) {
                int32_t I = block_row[q];
                for (int a = 0; a < (I == J ? b + 1 : bs); a++) row[k++] = bs * I + a;
            }
            col_start[bs * J + b + 1] = (int32_t)k;
        }
    /* a fill-reducing order of the blocks (METIS, as below), each block's
     * unknowns kept in a row */
    cholmod_common c;
    cholmod_start(&c);
    c.print = 0;
    c.error_handler = NULL;
    c.nmethods = 1;
    c.method[0].ordering = CHOLMOD_METIS;
    c.postorder = 1;
    c.supernodal = CHOLMOD_SIMPLICIAL;
    cholmod_sparse* P = cholmod_allocate_sparse((size_t)nb, (size_t)nb, (size_t)nbe, 1, 1, 1, CHOLMOD_PATTERN, &c);
    cholmod_factor* Lb = NULL;
    if (P) {
        memcpy(P->p, block_start, (size_t)(nb + 1) * sizeof(int32_t));
        memcpy(P->i, block_row, (size_t)nbe * sizeof(int32_t));
        Lb = cholmod_analyze(P, &c);
    }
    hy_status st = HY_OK;
    if (!Lb) {
        st = hy_fail(c.status == CHOLMOD_OUT_OF_MEMORY ? HY_ERR_NOMEM : HY_ERR_INVALID_ARG,
                     "spchol: ordering of a %d-block pattern failed (CHOLMOD status %d)", nb, c.status);
    } else {
        const int32_t* bp = Lb->Perm;
        for (int32_t K = 0; K < nb; K++)
            for (int a = 0; a < bs; a++) perm[bs * K + a] = bs * bp[K] + a;
        st = create(n, col_start, row, perm, out);
    }
    cholmod_free_factor(&Lb, &c);
    cholmod_free_sparse(&P, &c);
    cholmod_finish(&c);
    free(col_start);
    free(row);
    if (st) {
        free(perm);
        return st;
    }
    hy_spchol* f = *out;
    f->bs = bs, f->nb = nb, f->perm = perm;
    f->lb_start = calloc((size_t)nb + 1, sizeof *f->lb_start);
    f->slot = malloc((size_t)nb * sizeof *f->slot);
    f->y = malloc((size_t)n * sizeof *f->y);
    f->ld = malloc((size_t)nb * (size_t)(bs * bs) * sizeof *f->ld);
    if (!f->lb_start || !f->slot || !f->y || !f->ld) {
        hy_spchol_destroy(f);
        *out = NULL;
        return hy_fail(HY_ERR_NOMEM, "spchol: out of memory");
    }
    return HY_OK;
}

/* The factor's blocks out of CHOLMOD's simplicial LL^T (columns in the
 * factor's order): the block structure once, the values every time. */
static hy_status copy_blocks(hy_spchol* f) {
    const cholmod_factor* L = f->L;
    const int32_t *Lp = L->p, *Li = L->i, *Lnz = L->nz;
    const double* Lx = L->x;
    int32_t bs = f->bs, nb = f->nb, b2 = bs * bs;
    if (!f->lb_row) {
        /* block rows below the diagonal of each block column */
        int32_t total = 0;
        for (int32_t J = 0; J < nb; J++) f->slot[J] = -1;
        for (int pass = 0; pass < 2; pass++) {
            total = 0;
            for (int32_t J = 0; J < nb; J++) {
                int32_t cnt = 0, base = pass ? f->lb_start[J] : 0;
                for (int32_t j = bs * J; j < bs * J + bs; j++)
                    for (int32_t q = Lp[j]; q < Lp[j] + Lnz[j]; q++) {
                        int32_t I = Li[q] / bs;
                        if (I <= J || f->slot[I] == J) continue;
                        f->slot[I] = J;
                        if (pass) f->lb_row[base + cnt] = I;
                        cnt++;
                    }
                /* ascending: a fixed order for the solves' sums */
                for (int32_t u = 1; pass && u < cnt; u++)
                    for (int32_t w = base + u; w > base && f->lb_row[w - 1] > f->lb_row[w]; w--) {
                        int32_t t = f->lb_row[w];
                        f->lb_row[w] = f->lb_row[w - 1], f->lb_row[w - 1] = t;
                    }
                if (!pass) f->lb_start[J + 1] = f->lb_start[J] + cnt;
                total += cnt;
            }
            for (int32_t J = 0; J < nb; J++) f->slot[J] = -1;
            if (!pass) {
                f->lb_row = malloc((size_t)(total > 0 ? total : 1) * sizeof *f->lb_row);
                f->lo = malloc((size_t)(total > 0 ? total : 1) * (size_t)b2 * sizeof *f->lo);
                if (!f->lb_row || !f->lo) {
                    free(f->lb_row), free(f->lo);
                    f->lb_row = NULL, f->lo = NULL;
                    return hy_fail(HY_ERR_NOMEM, "spchol: out of memory");
                }
            }
        }
    }
    memset(f->ld, 0, (size_t)nb * (size_t)b2 * sizeof *f->ld);
    memset(f->lo, 0, (size_t)f->lb_start[nb] * (size_t)b2 * sizeof *f->lo);
    for (int32_t J = 0; J < nb; J++) {
        for (int32_t q = f->lb_start[J]; q < f->lb_start[J + 1]; q++) f->slot[f->lb_row[q]] = q;
        for (int32_t j = bs * J; j < bs * J + bs; j++)
            for (int32_t q = Lp[j]; q < Lp[j] + Lnz[j]; q++) {
                int32_t i = Li[q], I = i / bs;
                double* blk = I == J ? f->ld + (size_t)J * b2 : f->lo + (size_t)f->slot[I] * b2;
                blk[bs * (i - bs * I) + (j - bs * J)] = Lx[q];
            }
    }
    return HY_OK;
}

void hy_spchol_destroy(hy_spchol* f) {
    if (!f) return;
    free(f->perm);
    free(f->lb_start);
    free(f->lb_row);
    free(f->ld);
    free(f->lo);
    free(f->slot);
    free(f->y);
    cholmod_free_sparse(&f->A, &f->c);
    cholmod_free_factor(&f->L, &f->c);
    cholmod_free_dense(&f->B, &f->c);
    cholmod_free_dense(&f->X, &f->c);
    cholmod_free_dense(&f->Y, &f->c);
    cholmod_free_dense(&f->E, &f->c);
    cholmod_finish(&f->c);
    free(f);
}

double* hy_spchol_values(hy_spchol* f) { return f ? f->A->x : NULL; }

hy_status hy_spchol_factor(hy_spchol* f) {
    if (!f) return hy_fail(HY_ERR_INVALID_ARG, "spchol: NULL factor");
    f->factored = 0;
    int ok = cholmod_factorize(f->A, f->L, &f->c);
    if (!ok || f->c.status != CHOLMOD_OK)
        return hy_fail(f->c.status == CHOLMOD_OUT_OF_MEMORY ? HY_ERR_NOMEM : HY_ERR_NUMERIC,
                       "spchol: factorization failed (CHOLMOD status %d: %s at column %lld)", f->c.status,
                       f->c.status == CHOLMOD_NOT_POSDEF ? "not positive definite" : "error",
                       (long long)f->L->minor);
    if (f->bs) {
        hy_status st = copy_blocks(f);
        if (st) return st;
    }
    f->factored = 1;
    return HY_OK;
}

/* x = A^-1 b over the dense blocks: y = P b, L y' = y, L^T y'' = y', x = P^T y''. */
static inline __attribute__((always_inline)) void solve_blocks_of(hy_spchol* f, const double* b, double* x,
                                                                   const int bs) {
    int32_t nb = f->nb, b2 = bs * bs, n = f->n;
    double* y = f->y;
    for (int32_t k = 0; k < n; k++) y[k] = b[f->perm[k]];
    /* (a block's values in locals: through y the compiler must assume the
     * blocks alias, and stores and loads of the same entries serialise) */
    double t[8] = {0}, u[8] = {0};
    for (int32_t J = 0; J < nb; J++) {
        const double* D = f->ld + (size_t)J * b2;
        double* yj = y + bs * J;
        #pragma GCC unroll 8
        for (int r = 0; r < bs; r++) {
            double s = yj[r];
            #pragma GCC unroll 8
            for (int c = 0; c < r; c++) s -= D[bs * r + c] * t[c];
            t[r] = s / D[bs * r + r];
        }
        #pragma GCC unroll 8
        for (int r = 0; r < bs; r++) yj[r] = t[r];
        for (int32_t q = f->lb_start[J]; q < f->lb_start[J + 1]; q++) {
            const double* B = f->lo + (size_t)q * b2;
            double* yi = y + bs * f->lb_row[q];
            #pragma GCC unroll 8
            for (int r = 0; r < bs; r++) {
                double s = 0.0;
                #pragma GCC unroll 8
                for (int c = 0; c < bs; c++) s += B[bs * r + c] * t[c];
                yi[r] -= s;
            }
        }
    }
    for (int32_t J = nb - 1; J >= 0; J--) {
        double* yj = y + bs * J;
        #pragma GCC unroll 8
        for (int c = 0; c < bs; c++) t[c] = yj[c];
        for (int32_t q = f->lb_start[J]; q < f->lb_start[J + 1]; q++) {
            const double* B = f->lo + (size_t)q * b2;
            const double* yi = y + bs * f->lb_row[q];
            #pragma GCC unroll 8
            for (int r = 0; r < bs; r++) u[r] = yi[r];
            #pragma GCC unroll 8
            for (int r = 0; r < bs; r++)
                #pragma GCC unroll 8
                for (int c = 0; c < bs; c++) t[c] -= B[bs * r + c] * u[r];
        }
        const double* D = f->ld + (size_t)J * b2;
        #pragma GCC unroll 8
        for (int r = bs - 1; r >= 0; r--) {
            double s = t[r];
            #pragma GCC unroll 8
            for (int c = r + 1; c < bs; c++) s -= D[bs * c + r] * t[c];
            t[r] = s / D[bs * r + r];
        }
        #pragma GCC unroll 8
        for (int r = 0; r < bs; r++) yj[r] = t[r];
    }
    for (int32_t k = 0; k < n; k++) x[f->perm[k]] = y[k];
}

/* the block size as a constant where it is known, so the dense loops unroll */
static void solve_blocks(hy_spchol* f, const double* b, double* x) {
    switch (f->bs) {
    case 3: solve_blocks_of(f, b, x, 3); break;
    case 6: solve_blocks_of(f, b, x, 6); break;
    default: solve_blocks_of(f, b, x, f->bs); break;
    }
}

void hy_spchol_solve(hy_spchol* f, const double* b, double* x) {
    if (!f || !f->factored) return;
    if (f->bs) {
        solve_blocks(f, b, x);
        return;
    }
    memcpy(f->B->x, b, (size_t)f->n * sizeof(double));
    cholmod_solve2(CHOLMOD_A, f->L, f->B, NULL, &f->X, NULL, &f->Y, &f->E, &f->c);
    if (f->X) memcpy(x, f->X->x, (size_t)f->n * sizeof(double));
}
