#include "solvers/spchol.h"

#include <cholmod.h>
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
};

hy_status hy_spchol_create(int32_t n, const int32_t* col_start, const int32_t* row, hy_spchol** out) {
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
    f->L = cholmod_analyze(f->A, &f->c);
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

void hy_spchol_destroy(hy_spchol* f) {
    if (!f) return;
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
    f->factored = 1;
    return HY_OK;
}

void hy_spchol_solve(hy_spchol* f, const double* b, double* x) {
    if (!f || !f->factored) return;
    memcpy(f->B->x, b, (size_t)f->n * sizeof(double));
    cholmod_solve2(CHOLMOD_A, f->L, f->B, NULL, &f->X, NULL, &f->Y, &f->E, &f->c);
    if (f->X) memcpy(x, f->X->x, (size_t)f->n * sizeof(double));
}
