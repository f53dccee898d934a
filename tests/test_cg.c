/* Tests the matrix-free Jacobi-preconditioned CG (solvers/cg.c): accuracy on a 2D Laplacian with a
 * known solution, the zero right-hand side, the iteration cap, and bit-identical results for 1-3 threads;
 * the general-preconditioner entry point; and the aggregation multigrid (solvers/amg.c): its aggregates on a
 * path, and its V-cycle as CG's preconditioner on a stiff 3x3-block spring system (few iterations, same bits
 * for any thread count). The fixed-order sum (core/sum_hd.h) against the
 * halving trees written out with their padding stored. */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "core/sum_hd.h"
#include "solvers/amg.h"
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

/* z = inv_diag * r through the general entry point. */
static void diag_precond(void* ctx, const double* r, double* z) {
    const double* d = ctx;
    for (int64_t i = 0; i < NN; i++) z[i] = d[i] * r[i];
}

/* A stiff spring grid in 3x3 blocks, the system an implicit cloth step
 * makes: G x G nodes, mass m I each, one spring per grid edge with block
 * S = k (d d^T + 0.01 I), d the edge's direction tilted out of the plane
 * by a fixed pseudo-random amount. A_ii = m I + sum S, A_ij = -S. */
#define G 40
#define GN (G * G)
typedef struct spring_grid {
    int32_t start[GN + 1], col[4 * GN];
    double W[9 * 4 * GN]; /* per entry: -S */
    double mass;
} spring_grid;

static void spring_grid_make(spring_grid* g) {
    g->mass = 1e-4; /* k / m = 1e4: Jacobi needs hundreds of iterations */
    int32_t e = 0;
    for (int32_t v = 0; v < GN; v++) {
        g->start[v] = e;
        int32_t i = v % G, j = v / G;
        int32_t nb[4] = {j > 0 ? v - G : -1, i > 0 ? v - 1 : -1, i < G - 1 ? v + 1 : -1, j < G - 1 ? v + G : -1};
        for (int q = 0; q < 4; q++) {
            if (nb[q] < 0) continue;
            int32_t a = v < nb[q] ? v : nb[q], b = v < nb[q] ? nb[q] : v;
            /* direction from the edge's ends (the same from either end) */
            double tilt = 0.3 * sin(0.7 * a + 1.3 * b);
            double d[3] = {b - a == 1 ? 1.0 : 0.0, tilt, b - a == 1 ? 0.0 : 1.0};
            double l = sqrt(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
            for (int p = 0; p < 3; p++) d[p] /= l;
            for (int p = 0; p < 3; p++)
                for (int r = 0; r < 3; r++) g->W[9 * e + 3 * p + r] = -(d[p] * d[r] + (p == r ? 0.01 : 0.0));
            g->col[e++] = nb[q];
        }
    }
    g->start[GN] = e;
}

static void spring_grid_matvec(void* ctx, const double* x, double* y) {
    const spring_grid* g = ctx;
    for (int32_t v = 0; v < GN; v++) {
        double acc[3] = {g->mass * x[3 * v], g->mass * x[3 * v + 1], g->mass * x[3 * v + 2]};
        for (int32_t e = g->start[v]; e < g->start[v + 1]; e++) {
            const double* W = g->W + 9 * e;
            const double* xo = x + 3 * g->col[e];
            for (int p = 0; p < 3; p++)
                for (int r = 0; r < 3; r++) acc[p] += W[3 * p + r] * (xo[r] - x[3 * v + r]);
        }
        for (int p = 0; p < 3; p++) y[3 * v + p] = acc[p];
    }
}

typedef struct amg_pc {
    hy_amg* a;
    hy_pool* pool;
} amg_pc;

static void amg_precond(void* ctx, const double* r, double* z) {
    amg_pc* c = ctx;
    hy_amg_vcycle(c->a, c->pool, r, z);
}

static void test_amg(void) {
    /* A path of 9 nodes: roots 0, 3, 6 take their free neighbours ({0,1},
     * {2,3,4}, {5,6,7}), then 8 joins its aggregated neighbour's. */
    {
        int32_t start[10], adj[16], n = 0, agg[9];
        for (int32_t i = 0; i < 9; i++) {
            start[i] = n;
            if (i > 0) adj[n++] = i - 1;
            if (i < 8) adj[n++] = i + 1;
        }
        start[9] = n;
        CHECK(hy_amg_aggregate(9, start, adj, NULL, agg) == 3);
        int32_t expect[9] = {0, 0, 1, 1, 1, 2, 2, 2, 2};
        CHECK(memcmp(agg, expect, sizeof agg) == 0);
        /* a skipped node joins nothing and cuts the path: {0,1}, {2,3},
         * {5,6}, {7,8} */
        uint8_t skip[9] = {0, 0, 0, 0, 1, 0, 0, 0, 0};
        int32_t expect_skip[9] = {0, 0, 1, 1, -1, 2, 2, 3, 3};
        CHECK(hy_amg_aggregate(9, start, adj, skip, agg) == 4);
        CHECK(memcmp(agg, expect_skip, sizeof agg) == 0);
    }
    static spring_grid g;
    spring_grid_make(&g);
    hy_amg* a = NULL;
    CHECK_OK(hy_amg_create(GN, g.start, g.col, &a));
    if (!a) return;
    CHECK(hy_amg_levels(a) >= 2 && hy_amg_coarsest_nodes(a) <= 800);
    /* level 1's blocks in the form amg.h asks for: mass blocks, and the
     * couplings W_ij = A_ij */
    double* m = hy_amg_mass_blocks(a);
    for (int32_t v = 0; v < GN; v++)
        for (int q = 0; q < 9; q++) m[9 * v + q] = q % 4 == 0 ? g.mass : 0.0;
    memcpy(hy_amg_coupling_blocks(a), g.W, sizeof(double) * 9 * (size_t)g.start[GN]);
    static double xs[3 * GN], b[3 * GN], x[3 * GN], inv_diag[3 * GN];
    for (int64_t i = 0; i < 3 * GN; i++) xs[i] = rnd();
    spring_grid_matvec(&g, xs, b);
    for (int32_t v = 0; v < GN; v++)
        for (int p = 0; p < 3; p++) {
            double d = g.mass;
            for (int32_t e = g.start[v]; e < g.start[v + 1]; e++) d -= g.W[9 * e + 4 * p];
            inv_diag[3 * v + p] = 1.0 / d;
        }
    hy_cg_workspace* w = hy_cg_workspace_create(3 * GN);
    uint64_t h[3];
    int32_t it_mg = 0;
    for (int t = 1; t <= 3; t++) {
        hy_pool* pool = hy_pool_create(t);
        CHECK_OK(hy_amg_setup(a, pool));
        amg_pc pc = {a, pool};
        memset(x, 0, sizeof x);
        double rel = -1;
        it_mg = hy_cg_solve_precond(pool, 3 * GN, spring_grid_matvec, &g, amg_precond, &pc, b, x, 1e-8, 500, w, &rel);
        CHECK(rel <= 1e-8);
        h[t - 1] = hash_bits(x, 3 * GN);
        hy_pool_destroy(pool);
    }
    CHECK(h[0] == h[1] && h[0] == h[2]);
    memset(x, 0, sizeof x);
    double rel_j = -1;
    int32_t it_j = hy_cg_solve(NULL, 3 * GN, spring_grid_matvec, &g, inv_diag, b, x, 1e-8, 5000, w, &rel_j);
    fprintf(stderr, "spring grid %dx%d (k/m 1e4): multigrid-PCG %d iterations, Jacobi-PCG %d\n", G, G, it_mg, it_j);
    /* measured: 67 against 820 */
    CHECK(it_mg <= 90 && it_j > 8 * it_mg);
    hy_cg_workspace_destroy(w);
    hy_amg_destroy(a);
}

/* sum a[i] b[i] with core/sum_hd.h's order written out plainly: the
 * products padded with +0.0 to whole chunks, each chunk halved by 16, 8,
 * 4, 2, 1, the chunk sums padded with +0.0 to a power of two and halved. */
static double sum_reference(const double* a, const double* b, int64_t n, double* t, double* c) {
    int64_t m = (n + 31) / 32, p = 1;
    for (int64_t i = 0; i < 32 * m; i++) t[i] = i < n ? a[i] * b[i] : 0.0;
    for (int64_t k = 0; k < m; k++) {
        double* u = t + 32 * k;
        for (int h = 16; h >= 1; h /= 2)
            for (int j = 0; j < h; j++) u[j] += u[j + h];
        c[k] = u[0];
    }
    while (p < m) p *= 2;
    for (int64_t k = m; k < p; k++) c[k] = 0.0;
    for (int64_t h = p / 2; h >= 1; h /= 2)
        for (int64_t j = 0; j < h; j++) c[j] += c[j + h];
    return m ? c[0] : 0.0;
}

static void test_sum(void) {
    enum { LEN = 3 * 4096 + 17 };
    static double a[LEN], b[LEN], t[LEN + 32], c[2 * LEN], part[LEN];
    /* terms of mixed magnitudes, so that another order rounds otherwise */
    for (int64_t i = 0; i < LEN; i++) {
        a[i] = ldexp(rnd(), (int)(i % 41) - 20);
        b[i] = rnd();
    }
    static const int64_t lens[] = {0, 1, 31, 32, 33, 64, 97, 1000, 4096, LEN};
    int same = 1, differs = 0;
    for (size_t k = 0; k < sizeof lens / sizeof *lens; k++) {
        int64_t n = lens[k];
        double want = sum_reference(a, b, n, t, c), got = hy_sum_hd_dot(a, b, n, part);
        same &= memcmp(&want, &got, sizeof got) == 0;
        double serial = 0.0;
        for (int64_t i = 0; i < n; i++) serial += a[i] * b[i];
        differs += serial != got;
    }
    CHECK(same);
    CHECK(differs > 0); /* the order is not the serial one */
    /* a whole chunk by its vector form against the scalar tree */
    int whole = 1;
    for (int64_t o = 0; o + 32 <= LEN; o += 32) {
        double u[32];
        for (int j = 0; j < 32; j++) u[j] = a[o + j] * b[o + j];
        double want = hy_sum_hd_tree32(u), got = hy_sum_hd_dot32(a + o, b + o);
        whole &= memcmp(&want, &got, sizeof got) == 0;
    }
    CHECK(whole);
    fprintf(stderr, "fixed-order sums: %zu lengths equal to the written-out trees, %d differ from the serial sum\n",
            sizeof lens / sizeof *lens, differs);
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

    /* Same bits for 1, 2 and 3 threads (each block writes its chunks'
     * sums, one tree combines them; NN spans 3 blocks). */
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

    /* The general entry point with z = inv_diag * r is the Jacobi path,
     * bit for bit: the same kernels in the same order. */
    {
        static double xj[NN];
        memset(x, 0, sizeof x);
        memset(xj, 0, sizeof xj);
        double rel = -1, relj = -1;
        int32_t it = hy_cg_solve_precond(pool, NN, laplacian, NULL, diag_precond, inv_diag, b, x, 1e-10, 5000, w, &rel);
        int32_t itj = hy_cg_solve(pool, NN, laplacian, NULL, inv_diag, b, xj, 1e-10, 5000, w, &relj);
        CHECK(it == itj && rel == relj && it > 0);
        CHECK(memcmp(x, xj, sizeof x) == 0);
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
    test_amg();
    test_sum();
    TEST_END();
}
