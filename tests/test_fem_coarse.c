/* Tests the FEM preconditioner's coarse level (solvers/fem.c,
 * hy_fem_coarse): on a turned, deformed block the preconditioner stays a
 * symmetric positive definite map and the coarse level adds a positive
 * term to block Jacobi; a squeezed block's step and a landing solved with
 * it reach the answers of block Jacobi alone in fewer iterations, and
 * the squeezed block takes as many turned by any angle; a free-flying
 * block still takes no iteration; small objects keep block Jacobi alone. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"
#include "core/tetmesh.h"
#include "solvers/fem.h"
#include "test.h"

static uint64_t seed = 0x2545F4914F6CDD1Dull;
static double rnd(void) { return 2.0 * hy_test_uniform(&seed) - 1.0; } /* in [-1, 1) */

static double dot(const double* a, const double* b, int64_t n) {
    double s = 0.0;
    for (int64_t k = 0; k < n; k++) s += a[k] * b[k];
    return s;
}

/* fem64's material */
static const hy_fem_params material = {.young = 1e5, .poisson = 0.3, .density = 1000, .damping_mass = 0.01};

static hy_tetmesh* box(int n) {
    double o[3] = {0, 0, 0}, s[3] = {0.2, 0.2, 0.2};
    hy_tetmesh* m = NULL;
    CHECK_OK(hy_tetmesh_box(o, s, n, n, n, &m));
    return m;
}

/* The FEM model of a mesh in fem64's material (NULL on failure). */
static hy_fem_model* model(const hy_tetmesh* mesh, const int32_t* fixed, int32_t nfixed) {
    hy_fem_model* m = NULL;
    CHECK_OK(hy_fem_model_create(mesh->positions, mesh->vertex_count, mesh->tets, mesh->tet_count, &material, fixed,
                                 nfixed, &m));
    return m;
}

/* The rest shape turned about (1, 2, 3) by angle (deform: 0.7 rad) and squeezed 10% along
 * y, with some noise: every element rotated and strained. */
static void deform_turned(const double* rest, int32_t nv, double angle, double* x) {
    double k[3] = {1, 2, 3}, kn = sqrt(14.0), c = cos(angle), s = sin(angle), R[9];
    for (int a = 0; a < 3; a++) k[a] /= kn;
    double K[9] = {0, -k[2], k[1], k[2], 0, -k[0], -k[1], k[0], 0};
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double kk = 0.0;
            for (int q = 0; q < 3; q++) kk += K[3 * i + q] * K[3 * q + j];
            R[3 * i + j] = (i == j) + s * K[3 * i + j] + (1 - c) * kk;
        }
    for (int32_t v = 0; v < nv; v++) {
        double p[3] = {rest[3 * v], 0.9 * rest[3 * v + 1], rest[3 * v + 2]};
        for (int a = 0; a < 3; a++)
            x[3 * v + a] = R[3 * a] * p[0] + R[3 * a + 1] * p[1] + R[3 * a + 2] * p[2] + 1e-4 * rnd();
    }
}

static void deform(const double* rest, int32_t nv, double* x) { deform_turned(rest, nv, 0.7, x); }

static void test_spd(hy_pool* pool) {
    hy_tetmesh* mesh = box(9);
    if (!mesh) return;
    int32_t nv = mesh->vertex_count;
    int64_t n = 3 * (int64_t)nv;
    int32_t fixed[2] = {0, 5};
    hy_fem_model* m = model(mesh, fixed, 2);
    double* x = malloc(sizeof(double) * (size_t)n);
    double* v = calloc((size_t)n, sizeof(double));
    double* rhs = malloc(sizeof(double) * (size_t)n);
    double* r = malloc(sizeof(double) * 4 * (size_t)n);
    double *r2 = r + n, *z = r + 2 * n, *z2 = r + 3 * n;
    double* zj = malloc(sizeof(double) * (size_t)n);
    deform(mesh->positions, nv, x);
    double g[3] = {0, -9.81, 0};
    CHECK(hy_fem_coarse(m, -1) == 1); /* 1,000 vertices: the coarse level is in use */
    CHECK_OK(hy_fem_prepare(m, pool, x, v, 0.005, g, NULL, NULL, rhs));
    double worst_sym = 0.0, worst_pos = INFINITY, worst_extra = INFINITY;
    for (int trial = 0; trial < 5; trial++) {
        for (int64_t k = 0; k < n; k++) r[k] = rnd(), r2[k] = rnd();
        for (int f = 0; f < 2; f++) /* fixed rows: CG's vectors are 0 there */
            for (int a = 0; a < 3; a++) r[3 * fixed[f] + a] = r2[3 * fixed[f] + a] = 0.0;
        hy_fem_precondition(m, pool, r, z);
        hy_fem_precondition(m, pool, r2, z2);
        double a = dot(r2, z, n), b = dot(r, z2, n);
        worst_sym = fmax(worst_sym, fabs(a - b) / sqrt(dot(r, z, n) * dot(r2, z2, n)));
        worst_pos = fmin(worst_pos, dot(r, z, n) / dot(r, r, n));
        /* the coarse term alone: r . (z - z_jacobi) >= 0 */
        hy_fem_coarse(m, 0);
        CHECK_OK(hy_fem_prepare(m, pool, x, v, 0.005, g, NULL, NULL, rhs));
        hy_fem_precondition(m, pool, r, zj);
        hy_fem_coarse(m, 1);
        CHECK_OK(hy_fem_prepare(m, pool, x, v, 0.005, g, NULL, NULL, rhs));
        double extra = 0.0;
        for (int64_t k = 0; k < n; k++) extra += r[k] * (z[k] - zj[k]);
        worst_extra = fmin(worst_extra, extra / dot(r, zj, n));
    }
    CHECK(worst_sym < 1e-12);
    CHECK(worst_pos > 0.0);
    CHECK(worst_extra > 0.0); /* strictly: r is not orthogonal to the coarse space */
    free(x), free(v), free(rhs), free(r), free(zj);
    hy_fem_model_destroy(m);
    hy_tetmesh_destroy(mesh);
}

/* One backward-Euler step of the deformed block, released from rest, with
 * and without the coarse level: the same dv to the tolerance, fewer CG
 * iterations; turned by any angle, as many iterations. Then the
 * free-flying rest shape: no iteration. */
static void test_solve(hy_pool* pool) {
    hy_tetmesh* mesh = box(10);
    if (!mesh) return;
    int32_t nv = mesh->vertex_count;
    int64_t n = 3 * (int64_t)nv;
    hy_fem_model* m = model(mesh, NULL, 0);
    double* x0 = malloc(sizeof(double) * (size_t)n);
    double* v0 = calloc((size_t)n, sizeof(double));
    double* x1[2] = {malloc(sizeof(double) * (size_t)n), malloc(sizeof(double) * (size_t)n)};
    double* v1[2] = {malloc(sizeof(double) * (size_t)n), malloc(sizeof(double) * (size_t)n)};
    deform(mesh->positions, nv, x0);
    double g[3] = {0, -9.81, 0};
    hy_fem_solve_stats st[2];
    for (int c = 0; c < 2; c++) {
        hy_fem_coarse(m, c);
        CHECK_OK(hy_fem_solve(m, pool, x0, v0, 0.005, g, NULL, 1000, 1e-8, x1[c], v1[c], &st[c]));
    }
    double diff = 0.0, scale = 0.0;
    for (int64_t k = 0; k < n; k++) diff = fmax(diff, fabs(v1[1][k] - v1[0][k])), scale = fmax(scale, fabs(v1[0][k]));
    CHECK(scale > 0.1);              /* the squeezed block springs back */
    CHECK(diff < 1e-6 * scale);      /* the same step, to the tolerance */
    printf("squeezed block: %d CG iterations with the coarse level, %d with block Jacobi alone\n", st[1].cg_iterations,
           st[0].cg_iterations);
    CHECK(st[0].cg_iterations > 40); /* block Jacobi alone */
    CHECK(st[1].cg_iterations * 3 < st[0].cg_iterations * 2); /* measured 35 against 64 */
    CHECK(st[1].cg_relative_residual <= 1e-8);
    /* The coarse level is the rest system's, turned by the object's
     * rotation each step: the squeezed block's step takes as many CG
     * iterations turned by any angle (the same squeeze and noise, no
     * gravity), where the rest system unturned would fit a turned
     * block's system less well (with the turn left out: 35 unturned,
     * 41-52 turned). */
    static const double angle[4] = {0.0, 0.7, 1.9, 3.0};
    const double g0[3] = {0, 0, 0};
    int32_t turned[4];
    for (int k = 0; k < 4; k++) {
        uint64_t keep = seed;
        deform_turned(mesh->positions, nv, angle[k], x0);
        seed = keep;
        hy_fem_solve_stats ts;
        CHECK_OK(hy_fem_solve(m, pool, x0, v0, 0.005, g0, NULL, 1000, 1e-8, x1[0], v1[0], &ts));
        turned[k] = ts.cg_iterations;
    }
    printf("squeezed block turned by 0, 0.7, 1.9, 3.0 rad: %d, %d, %d, %d CG iterations\n", turned[0], turned[1],
           turned[2], turned[3]);
    for (int k = 1; k < 4; k++) CHECK(abs(turned[k] - turned[0]) <= 1);
    /* free flight from rest: the mass-only start is the answer */
    hy_fem_solve_stats free_st;
    CHECK_OK(hy_fem_solve(m, pool, mesh->positions, v0, 0.005, g, NULL, 1000, 1e-8, x1[0], v1[0], &free_st));
    CHECK(free_st.cg_iterations == 0);
    free(x0), free(v0);
    for (int c = 0; c < 2; c++) free(x1[c]), free(v1[c]);
    hy_fem_model_destroy(m);
    hy_tetmesh_destroy(mesh);
    /* a small object (4 x 4 x 4 cells, 125 vertices) keeps block Jacobi */
    mesh = box(4);
    if (!mesh) return;
    m = model(mesh, NULL, 0);
    CHECK(hy_fem_coarse(m, -1) == 0);
    hy_fem_model_destroy(m);
    hy_tetmesh_destroy(mesh);
}

/* A block landing at 2 m/s on its bottom face (held: fixed vertices), 10
 * steps at the scenes' tolerance (1e-6), with and without the coarse
 * level: the same motion to the tolerance, fewer iterations. */
static void test_impact(hy_pool* pool) {
    hy_tetmesh* mesh = box(10);
    if (!mesh) return;
    int32_t nv = mesh->vertex_count, nf = 0;
    int64_t n = 3 * (int64_t)nv;
    int32_t* fixed = malloc(sizeof(int32_t) * (size_t)nv);
    for (int32_t v = 0; v < nv; v++)
        if (mesh->positions[3 * v + 1] == 0.0) fixed[nf++] = v;
    hy_fem_model* m = model(mesh, fixed, nf);
    double* x[2] = {malloc(sizeof(double) * (size_t)n), malloc(sizeof(double) * (size_t)n)};
    double* v[2] = {malloc(sizeof(double) * (size_t)n), malloc(sizeof(double) * (size_t)n)};
    double g[3] = {0, -9.81, 0};
    int32_t its[2] = {0, 0};
    for (int c = 0; c < 2; c++) {
        hy_fem_coarse(m, c);
        memcpy(x[c], mesh->positions, sizeof(double) * (size_t)n);
        for (int64_t k = 0; k < n; k++) v[c][k] = k % 3 == 1 ? -2.0 : 0.0;
        for (int step = 0; step < 10; step++) {
            hy_fem_solve_stats st;
            CHECK_OK(hy_fem_solve(m, pool, x[c], v[c], 0.005, g, NULL, 1000, 1e-6, x[c], v[c], &st));
            its[c] += st.cg_iterations;
        }
    }
    double diff = 0.0;
    for (int64_t k = 0; k < n; k++) diff = fmax(diff, fabs(v[1][k] - v[0][k]));
    printf("landing block: %d CG iterations over 10 steps with the coarse level, %d with block Jacobi alone\n", its[1],
           its[0]);
    CHECK(diff < 1e-4);                  /* m/s, against velocities of ~2 */
    CHECK(its[1] * 5 < its[0] * 3);      /* measured 264 against 517 */
    for (int c = 0; c < 2; c++) free(x[c]), free(v[c]);
    free(fixed);
    hy_fem_model_destroy(m);
    hy_tetmesh_destroy(mesh);
}

int main(void) {
    hy_pool* pool = hy_pool_create(2);
    test_spd(pool);
    test_solve(pool);
    test_impact(pool);
    hy_pool_destroy(pool);
    TEST_END();
}
