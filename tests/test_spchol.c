/* Tests the sparse Cholesky factor of dense blocks (solvers/spchol.c,
 * hy_spchol_create_blocks): on random symmetric positive definite block
 * matrices its solves reach A x = b to round-off and agree with the
 * scalar factor's (hy_spchol_create) on the same values, for block sizes
 * with and without a specialised path; a matrix that is not positive
 * definite is refused. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "solvers/spchol.h"
#include "test.h"

static uint64_t seed = 0x9E3779B97F4A7C15ull;
static double rnd(void) { return 2.0 * hy_test_uniform(&seed) - 1.0; } /* in [-1, 1) */

/* A random block pattern over nb blocks (each block tied to a few others,
 * symmetric) and a dense symmetric matrix on it, diagonally dominant
 * (shift > 0) or with a negative diagonal entry (shift < 0). */
static void random_matrix(int32_t nb, int32_t bs, double shift, uint8_t* tie, double* A) {
    int32_t n = nb * bs;
    memset(tie, 0, (size_t)nb * (size_t)nb);
    memset(A, 0, sizeof(double) * (size_t)n * (size_t)n);
    for (int32_t I = 0; I < nb; I++) {
        tie[I * nb + I] = 1;
        for (int k = 0; k < 3; k++) {
            int32_t J = (int32_t)(hy_test_uniform(&seed) * nb);
            tie[I * nb + J] = tie[J * nb + I] = 1;
        }
    }
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j <= i; j++)
            if (tie[(i / bs) * nb + j / bs]) A[(size_t)i * n + j] = A[(size_t)j * n + i] = rnd();
    for (int32_t i = 0; i < n; i++) {
        double s = 0.0;
        for (int32_t j = 0; j < n; j++) s += fabs(A[(size_t)i * n + j]);
        A[(size_t)i * n + i] = shift > 0 ? s + shift : (i == n / 2 ? -1.0 : s + 1.0);
    }
}

/* The block pattern (upper, by block columns, diagonal last) and both
 * factors' values from A; returns the block factor's status. */
static hy_status factor_both(int32_t nb, int32_t bs, const uint8_t* tie, const double* A, hy_spchol** blk,
                             hy_spchol** scalar) {
    int32_t n = nb * bs;
    int32_t* bstart = calloc((size_t)nb + 1, sizeof(int32_t));
    int32_t* brow = malloc(sizeof(int32_t) * (size_t)nb * (size_t)nb);
    int32_t* cstart = calloc((size_t)n + 1, sizeof(int32_t));
    int32_t* row = malloc(sizeof(int32_t) * (size_t)n * (size_t)n);
    int32_t k = 0;
    for (int32_t J = 0; J < nb; J++) {
        for (int32_t I = 0; I <= J; I++)
            if (tie[I * nb + J]) brow[k++] = I;
        bstart[J + 1] = k;
    }
    k = 0;
    for (int32_t j = 0; j < n; j++) {
        for (int32_t q = bstart[j / bs]; q < bstart[j / bs + 1]; q++)
            for (int32_t a = 0; a < bs; a++)
                if (bs * brow[q] + a <= j) row[k++] = bs * brow[q] + a;
        cstart[j + 1] = k;
    }
    CHECK_OK(hy_spchol_create_blocks(nb, bs, bstart, brow, blk));
    CHECK_OK(hy_spchol_create(n, cstart, row, scalar));
    hy_status st = HY_ERR_INVALID_ARG;
    if (*blk && *scalar) {
        double *vb = hy_spchol_values(*blk), *vs = hy_spchol_values(*scalar);
        for (int32_t q = 0; q < k; q++) {
            int32_t j = 0;
            while (cstart[j + 1] <= q) j++;
            vb[q] = vs[q] = A[(size_t)row[q] * n + j];
        }
        st = hy_spchol_factor(*blk);
        if (st == HY_OK) CHECK_OK(hy_spchol_factor(*scalar));
    }
    free(bstart), free(brow), free(cstart), free(row);
    return st;
}

static void test_solve(int32_t nb, int32_t bs) {
    int32_t n = nb * bs;
    uint8_t* tie = malloc((size_t)nb * (size_t)nb);
    double* A = malloc(sizeof(double) * (size_t)n * (size_t)n);
    double* b = malloc(sizeof(double) * (size_t)n);
    double* x = malloc(sizeof(double) * (size_t)n);
    double* xs = malloc(sizeof(double) * (size_t)n);
    random_matrix(nb, bs, 1.0, tie, A);
    hy_spchol *blk = NULL, *scalar = NULL;
    CHECK_OK(factor_both(nb, bs, tie, A, &blk, &scalar));
    for (int trial = 0; trial < 3; trial++) {
        for (int32_t i = 0; i < n; i++) b[i] = rnd();
        hy_spchol_solve(blk, b, x);
        hy_spchol_solve(scalar, b, xs);
        double res = 0.0, bn = 0.0, diff = 0.0, xn = 0.0;
        for (int32_t i = 0; i < n; i++) {
            double s = -b[i];
            for (int32_t j = 0; j < n; j++) s += A[(size_t)i * n + j] * x[j];
            res = fmax(res, fabs(s)), bn = fmax(bn, fabs(b[i]));
            diff = fmax(diff, fabs(x[i] - xs[i])), xn = fmax(xn, fabs(xs[i]));
        }
        CHECK(res < 1e-12 * bn); /* the solve, to round-off */
        CHECK(diff < 1e-12 * xn); /* the scalar factor's answer */
        /* x may alias b */
        memcpy(x, b, sizeof(double) * (size_t)n);
        hy_spchol_solve(blk, x, x);
        double alias = 0.0;
        for (int32_t i = 0; i < n; i++) alias = fmax(alias, fabs(x[i] - xs[i]));
        CHECK(alias < 1e-12 * xn);
    }
    hy_spchol_destroy(blk);
    hy_spchol_destroy(scalar);
    /* not positive definite: refused */
    random_matrix(nb, bs, -1.0, tie, A);
    blk = scalar = NULL;
    CHECK(factor_both(nb, bs, tie, A, &blk, &scalar) == HY_ERR_NUMERIC);
    hy_spchol_destroy(blk);
    hy_spchol_destroy(scalar);
    free(tie), free(A), free(b), free(x), free(xs);
}

int main(void) {
    test_solve(40, 6); /* the FEM coarse level's size */
    test_solve(30, 3);
    test_solve(25, 5); /* no specialised path */
    test_solve(1, 2);
    hy_spchol* f = NULL;
    int32_t start[2] = {0, 1}, r[1] = {0};
    CHECK(hy_spchol_create_blocks(1, 9, start, r, &f) == HY_ERR_INVALID_ARG); /* blocks up to 8 */
    CHECK(f == NULL);
    TEST_END();
}
