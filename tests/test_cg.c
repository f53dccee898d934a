/* Tests the matrix-free Jacobi-preconditioned CG (solvers/cg.c): accuracy on a 2D Laplacian with a
 * known solution, the zero right-hand side, the iteration cap, and bit-identical results for 1-3 threads. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "solvers/cg.h"
#include "test.h"

/* A = 5-point Laplacian on an N x N grid (Dirichlet) + diag(shift_i). 
 * shift varies 0.01..2 so the diagonal is uneven and Jacobi has work to do. */
#define N 100
#define NN (N * N)

static double shift_of(int64_t i) { return 0.01 + 1.99 * (double)(i % 7) / 6.0; }

static void laplacian(void* ctx, const double* x, double* y) {
    (void)ctx;
    for (int j = 0; j < N; j++)
        for (int i = 0; i < N; i++) {
            int64_t k = (int64_t)j * N + i;
            double s = (4.0 + shift_of(k)) * x[k];
            if (i > 0) s -= x[k - 1];
            if (i < N - 1) s -= x[k + 1];
            if (j > 0) s -= x[k - N];
            if (j < N - 1) s -= x[k + N];
            y[k] = s;
        }
}

static void twice(void* ctx, const double* x, double* y) {
    (void)ctx;
    y[0] = 2.0 * x[0];
}

static uint64_t lcg = 12345;
static double rnd(void) {
    lcg = lcg * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(lcg >> 11) / 9007199254740992.0 * 2.0 - 1.0;
}

static double norm(const double* v, int64_t n) {
    double s = 0;
    for (int64_t i = 0; i < n; i++) s += v[i] * v[i];
    return sqrt(s);
}

static uint64_t hash_bits(const double* v, int64_t n) {
    uint64_t h = 1469598103934665603ull;
    for (int64_t i = 0; i < n; i++) {
        uint64_t u;
        memcpy(&u, &v[i], sizeof u);
        for (int b = 0; b < 8; b++) h = (h ^ ((u >> (8 * b)) & 0xff)) * 1099511628211ull;
    }
    return h;
}

int main(void) {
    static double xs[NN], b[NN], x[NN], ax[NN], inv_diag[NN], r[NN];
    for (int64_t i = 0; i < NN; i++) {
        xs[i] = rnd();
        inv_diag[i] = 1.0 / (4.0 + shift_of(i));
    }
    laplacian(NULL, xs, b);
    hy_cg_workspace* w = hy_cg_workspace_create(NN);
    CHECK(w != NULL);
    hy_pool* pool = hy_pool_create(2);

    /* Eigenvalues lie in [min shift, 8 + max shift] = [0.01, 10] (Gershgorin),
     * so cond(A) <= 1000 and |x - x*| / |x*| <= 1000 * |r| / |b|. */
    const double cond_bound = 10.0 / 0.01;
    for (int pre = 0; pre < 2; pre++) {
        memset(x, 0, sizeof x);
        double rel = -1;
        int32_t it = hy_cg_solve(pool, NN, laplacian, NULL, pre ? inv_diag : NULL, b, x, 1e-8, 5000, w, &rel);
        fprintf(stderr, "%s: %d iterations, relative residual %.3g\n", pre ? "jacobi" : "plain", it, rel);
        CHECK(it > 0 && it < 5000);
        CHECK(rel <= 1e-8);
        /* The recursively updated residual drifts from the true one by about
         * cond * eps * iterations ~ 1e-11: allow 2e-8 for the true one. */
        laplacian(NULL, x, ax);
        for (int64_t i = 0; i < NN; i++) r[i] = b[i] - ax[i];
        double true_rel = norm(r, NN) / norm(b, NN);
        CHECK(true_rel <= 2e-8);
        for (int64_t i = 0; i < NN; i++) r[i] = x[i] - xs[i];
        double err = norm(r, NN) / norm(xs, NN);
        fprintf(stderr, "  true residual %.3g, error %.3g\n", true_rel, err);
        CHECK(err <= cond_bound * 2e-8);
    }

    /* Warm start at the solution: already converged, no iterations. */
    {
        memcpy(x, xs, sizeof x);
        double rel = -1;
        int32_t it = hy_cg_solve(pool, NN, laplacian, NULL, inv_diag, b, x, 1e-8, 100, w, &rel);
        CHECK(it == 0);
        CHECK(rel <= 1e-8);
    }

    /* Zero right-hand side: x = 0 exactly, whatever the start. */
    {
        static double zero[NN];
        for (int64_t i = 0; i < NN; i++) x[i] = rnd();
        double rel = -1;
        int32_t it = hy_cg_solve(pool, NN, laplacian, NULL, inv_diag, zero, x, 1e-8, 100, w, &rel);
        CHECK(it == 0);
        CHECK(rel == 0.0);
        CHECK(norm(x, NN) == 0.0);
    }

    /* The cap is honoured and the residual reported is the reached one. */
    {
        memset(x, 0, sizeof x);
        double rel = -1;
        int32_t it = hy_cg_solve(pool, NN, laplacian, NULL, inv_diag, b, x, 1e-14, 7, w, &rel);
        CHECK(it == 7);
        CHECK(rel > 1e-14 && rel < 1.0);
    }

    /* Same bits for 1, 2 and 3 threads (blocks are fixed, partial sums are
     * combined in block order; NN spans 3 blocks). */
    {
        uint64_t h[3];
        for (int t = 1; t <= 3; t++) {
            hy_pool* p = hy_pool_create(t);
            memset(x, 0, sizeof x);
            double rel;
            hy_cg_solve(p, NN, laplacian, NULL, inv_diag, b, x, 1e-10, 5000, w, &rel);
            h[t - 1] = hash_bits(x, NN);
            hy_pool_destroy(p);
        }
        CHECK(h[0] == h[1]);
        CHECK(h[0] == h[2]);
    }

    /* Scale: b times 2^600 (its squared norm overflows) or 2^-600 (it
     * underflows) solves to x times the same power of 2, bit for bit, in
     * the same iterations: only the norms of the stopping test are taken
     * at another scale. Before, the first returned at once with x = 0. */
    {
        static double bs[NN], xs1[NN];
        memset(xs1, 0, sizeof xs1);
        double rel1 = -1;
        int32_t it1 = hy_cg_solve(pool, NN, laplacian, NULL, inv_diag, b, xs1, 1e-8, 5000, w, &rel1);
        for (int e = -600; e <= 600; e += 1200) {
            for (int64_t i = 0; i < NN; i++) bs[i] = ldexp(b[i], e);
            memset(x, 0, sizeof x);
            double rel = -1;
            int32_t it = hy_cg_solve(pool, NN, laplacian, NULL, inv_diag, bs, x, 1e-8, 5000, w, &rel);
            fprintf(stderr, "b x 2^%d: %d iterations (unscaled %d), relative residual %.3g\n", e, it, it1, rel);
            CHECK(it == it1 && rel <= 1e-8);
            int same = 1;
            for (int64_t i = 0; i < NN; i++) same &= x[i] == ldexp(xs1[i], e);
            CHECK(same);
        }
        /* a non-finite right-hand side: no iterations, x untouched, NaN
         * residual (the caller's finiteness check names the object) */
        bs[5] = INFINITY;
        for (int64_t i = 0; i < NN; i++) x[i] = 1.0;
        double rel = 0;
        CHECK(hy_cg_solve(pool, NN, laplacian, NULL, inv_diag, bs, x, 1e-8, 100, w, &rel) == 0);
        CHECK(isnan(rel) && x[0] == 1.0);
    }

    /* n = 1 and a NULL pool (serial). */
    {
        double one_b = 3.0, one_x = 0.0, rel = -1;
        hy_cg_workspace* w1 = hy_cg_workspace_create(1);
        int32_t it = hy_cg_solve(NULL, 1, twice, NULL, NULL, &one_b, &one_x, 1e-12, 10, w1, &rel);
        CHECK(it == 1);
        CHECK_NEAR(one_x, 1.5, 1e-15); /* 2 x = 3, one exact step */
        hy_cg_workspace_destroy(w1);
    }

    hy_pool_destroy(pool);
    hy_cg_workspace_destroy(w);
    TEST_END();
}
