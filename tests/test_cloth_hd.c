/* The cloth's shared arithmetic (solvers/cloth_hd.h), the code its CUDA
 * kernels (solvers/cloth.cu) run, on a 12 x 12 cloth pinned at two
 * corners, displaced and moving at random (fixed seed):
 * - each spring's block and right-hand side part from the spring pass
 *   against the spring's physics written out here (force k (l - L) + c
 *   d.dv along d; Jacobian k g (I - d d^T) + k d d^T with g = 1 - L/l
 *   clamped at 0) applied to random vectors, to 1e-12;
 * - the product of the step (CG's callback, hy_cloth_hd_matvec_row per
 *   vertex) against the same blocks summed spring by spring, fixed rows
 *   0, to 1e-12; its AVX2 rows equal to the scalar rows bit for bit;
 * - hy_cloth_set_device: without CUDA in the build or without a GPU it
 *   refuses with HY_ERR_UNSUPPORTED and the model stays on the CPU; where
 *   there is a GPU, a step with the spring pass and every product on it
 *   gives the CPU's state bit for bit and counts its bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/pool.h"
#include "hyphys/hyphys.h"
#include "solvers/cloth.h"
#include "solvers/cloth_internal.h"
#include "test.h"

enum { N = 12 };

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static double rnd(void) { return hy_test_uniform(&g_rng); }

static double rel_err(double a, double b, double scale) { return fabs(a - b) / (scale > 0 ? scale : 1.0); }

int main(void) {
    const int32_t nv = N * N, nt = 2 * (N - 1) * (N - 1);
    double* rest = malloc(sizeof(double) * 3 * (size_t)nv);
    int32_t* tri = malloc(sizeof(int32_t) * 3 * (size_t)nt);
    for (int32_t i = 0; i < N; i++)
        for (int32_t j = 0; j < N; j++) {
            double* p = rest + 3 * (i * N + j);
            p[0] = 0.05 * j, p[1] = 0.0, p[2] = 0.05 * i;
        }
    int32_t t = 0;
    for (int32_t i = 0; i + 1 < N; i++)
        for (int32_t j = 0; j + 1 < N; j++) {
            int32_t a = i * N + j, b = a + 1, c = a + N, d = c + 1;
            int32_t q[6] = {a, c, b, b, c, d};
            memcpy(tri + 3 * t, q, sizeof q);
            t += 2;
        }
    int32_t pinned[2] = {0, N - 1};
    hy_cloth_params prm = {0.15, 1000.0, 100.0, 0.5, 0.01, 0.02};
    hy_cloth_model* m = NULL;
    CHECK_OK(hy_cloth_model_create(rest, nv, tri, nt, &prm, pinned, 2, &m));
    if (!m) TEST_END();
    size_t n3 = 3 * (size_t)nv;
    double *x0 = malloc(sizeof(double) * n3), *v0 = malloc(sizeof(double) * n3);
    double *x1 = malloc(sizeof(double) * n3), *v1 = malloc(sizeof(double) * n3);
    double *x1g = malloc(sizeof(double) * n3), *v1g = malloc(sizeof(double) * n3);
    double *p = malloc(sizeof(double) * n3), *y = malloc(sizeof(double) * n3), *yr = malloc(sizeof(double) * n3);
    /* displaced by up to 1 cm (springs stretched and compressed), moving
     * at up to 0.5 m/s */
    for (size_t k = 0; k < n3; k++) {
        x0[k] = rest[k] + 0.01 * (rnd() - 0.5);
        v0[k] = rnd() - 0.5;
    }
    for (int q = 0; q < 2; q++)
        for (int a = 0; a < 3; a++) v0[3 * pinned[q] + a] = 0.0, x0[3 * pinned[q] + a] = rest[3 * pinned[q] + a];
    const double dt = 0.01, g[3] = {0, -9.81, 0};
    hy_pool* pool = hy_pool_create(2);
    hy_cloth_solve_stats st;
    CHECK_OK(hy_cloth_solve(m, pool, x0, v0, dt, g, 500, 1e-10, x1, v1, &st));
    CHECK(st.cg_iterations > 0);

    /* the spring pass: blocks and right-hand sides against the physics */
    double worst_blk = 0.0, worst_rhs = 0.0;
    int compressed = 0;
    for (int32_t s = 0; s < m->ns; s++) {
        int32_t i = m->ends[2 * s], j = m->ends[2 * s + 1];
        double e[3], dv[3], l = 0.0;
        for (int a = 0; a < 3; a++) {
            e[a] = x0[3 * j + a] - x0[3 * i + a];
            dv[a] = v0[3 * j + a] - v0[3 * i + a];
            l += e[a] * e[a];
        }
        l = sqrt(l);
        double d[3] = {e[0] / l, e[1] / l, e[2] / l};
        double k = m->stiff[s], c = m->damp[s], L = m->rest[s];
        double gg = l > L ? 1.0 - L / l : 0.0;
        compressed += l < L;
        double ddv = d[0] * dv[0] + d[1] * dv[1] + d[2] * dv[2];
        const double* blk = m->block + 4 * s;
        const double* r = m->rhs_s + 3 * s;
        double w[3] = {rnd() - 0.5, rnd() - 0.5, rnd() - 0.5};
        double dw = d[0] * w[0] + d[1] * w[1] + d[2] * w[2];
        double uw = blk[0] * w[0] + blk[1] * w[1] + blk[2] * w[2];
        for (int a = 0; a < 3; a++) {
            /* S w = dt^2 k g w + (dt^2 k (1 - g) + dt c) d (d.w) */
            double want = dt * dt * k * gg * w[a] + (dt * dt * k * (1.0 - gg) + dt * c) * d[a] * dw;
            double got = blk[3] * w[a] + uw * blk[a];
            double scale = dt * dt * k + dt * c;
            if (rel_err(got, want, scale) > worst_blk) worst_blk = rel_err(got, want, scale);
            /* dt (f + dt K dv), f = (k (l - L) + c d.dv) d on end i */
            double f = (k * (l - L) + c * ddv) * d[a];
            double kdv = k * gg * dv[a] + k * (1.0 - gg) * d[a] * ddv;
            double rw = dt * (f + dt * kdv);
            double rs = dt * (fabs(k * (l - L)) + fabs(c * ddv) + dt * k * fabs(ddv) + dt * k * fabs(dv[a])) + 1e-300;
            if (rel_err(r[a], rw, rs) > worst_rhs) worst_rhs = rel_err(r[a], rw, rs);
        }
    }
    printf("springs %d (%d compressed): block error %.2e, right-hand side error %.2e\n", m->ns, compressed, worst_blk,
           worst_rhs);
    CHECK(compressed > 0 && compressed < m->ns); /* both branches of the filter */
    CHECK(worst_blk < 1e-12);
    CHECK(worst_rhs < 1e-12);

    /* the product against the same blocks summed spring by spring */
    for (size_t k = 0; k < n3; k++) p[k] = rnd() - 0.5;
    for (int q = 0; q < 2; q++)
        for (int a = 0; a < 3; a++) p[3 * pinned[q] + a] = 0.0;
    double diag_scale = 1.0 + dt * prm.air_damping;
    solve_ctx sc = {.pool = pool, .mv = {.m = m, .diag_scale = diag_scale}};
    hy_cloth_matvec(&sc, p, y);
    for (int32_t v = 0; v < nv; v++)
        for (int a = 0; a < 3; a++) yr[3 * v + a] = m->mass[v] * diag_scale * p[3 * v + a];
    for (int32_t s = 0; s < m->ns; s++) {
        int32_t i = m->ends[2 * s], j = m->ends[2 * s + 1];
        const double* blk = m->block + 4 * s;
        double d[3] = {p[3 * i] - p[3 * j], p[3 * i + 1] - p[3 * j + 1], p[3 * i + 2] - p[3 * j + 2]};
        double ud = blk[0] * d[0] + blk[1] * d[1] + blk[2] * d[2];
        for (int a = 0; a < 3; a++) {
            double sd = blk[3] * d[a] + ud * blk[a];
            yr[3 * i + a] += sd;
            yr[3 * j + a] -= sd;
        }
    }
    double worst_mv = 0.0, ymax = 0.0;
    int fixed_zero = 1;
    for (int32_t v = 0; v < nv; v++)
        for (int a = 0; a < 3; a++) ymax = fmax(ymax, fabs(yr[3 * v + a]));
    for (int32_t v = 0; v < nv; v++)
        for (int a = 0; a < 3; a++) {
            if (m->fixed[v]) {
                fixed_zero &= y[3 * v + a] == 0.0;
                continue;
            }
            worst_mv = fmax(worst_mv, rel_err(y[3 * v + a], yr[3 * v + a], ymax));
        }
    printf("product: error %.2e of its largest entry %.3e\n", worst_mv, ymax);
    CHECK(fixed_zero);
    CHECK(ymax > 0.0 && worst_mv < 1e-12);

    /* the AVX2 rows (where the CPU has AVX2; the last vertex, read as three
     * doubles, is free here) against the scalar rows, bit for bit */
    int simd_was = hy_cloth_simd(0);
    hy_cloth_matvec(&sc, p, yr);
    hy_cloth_simd(1);
    int simd_on = hy_cloth_simd(-1);
    hy_cloth_matvec(&sc, p, y);
    hy_cloth_simd(simd_was);
    printf("product rows %s: %s the scalar rows' bits\n", simd_on ? "in AVX2" : "scalar (no AVX2)",
           memcmp(y, yr, sizeof(double) * n3) ? "differ from" : "equal to");
    CHECK(!m->fixed[nv - 1]);
    CHECK(memcmp(y, yr, sizeof(double) * n3) == 0);
    /* the same with every third vertex held (a penalty block added to its
     * row, as a constrained solve sets them), the last one included */
    for (int32_t v = 0; v < nv; v++) {
        m->held[v] = (uint8_t)(v % 3 == (nv - 1) % 3);
        for (int q = 0; q < 9; q++) m->ch[9 * v + q] = m->held[v] ? rnd() : 0.0;
    }
    m->constrained = 1;
    hy_cloth_simd(0);
    hy_cloth_matvec(&sc, p, yr);
    hy_cloth_simd(1);
    hy_cloth_matvec(&sc, p, y);
    hy_cloth_simd(simd_was);
    m->constrained = 0;
    memset(m->held, 0, (size_t)nv);
    CHECK(memcmp(y, yr, sizeof(double) * n3) == 0);

    /* the GPU: refused here without one; with one, the CPU's bits */
    hy_status s = hy_cloth_set_device(m, 0);
    if (s) {
        CHECK(s == HY_ERR_UNSUPPORTED);
        CHECK(hy_cloth_device(m) == -1);
        printf("no GPU: %s\n", hy_last_error());
        hy_error_clear();
        CHECK_OK(hy_cloth_solve(m, pool, x0, v0, dt, g, 500, 1e-10, x1g, v1g, &st));
    } else {
        CHECK(hy_cloth_device(m) == 0);
        CHECK_OK(hy_cloth_solve(m, pool, x0, v0, dt, g, 500, 1e-10, x1g, v1g, &st));
        int64_t up = 0, down = 0;
        hy_cloth_transfer_bytes(m, &up, &down);
        printf("cuda:0: %lld bytes up, %lld down\n", (long long)up, (long long)down);
        CHECK(hy_cloth_device(m) == 0); /* not dropped */
        CHECK(up > 0 && down > 0);
        CHECK_OK(hy_cloth_set_device(m, -1));
    }
    CHECK(memcmp(x1, x1g, sizeof(double) * n3) == 0);
    CHECK(memcmp(v1, v1g, sizeof(double) * n3) == 0);

    hy_pool_destroy(pool);
    hy_cloth_model_destroy(m);
    free(rest), free(tri), free(x0), free(v0), free(x1), free(v1), free(x1g), free(v1g), free(p), free(y), free(yr);
    TEST_END();
}
