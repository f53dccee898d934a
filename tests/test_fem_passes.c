/* Tests the FEM's CPU passes that differ from the shared per-element code
 * (solvers/fem.c):
 * - the rotation pass decomposes four elements at once: its rotated
 *   gradients and corner forces are those of hy_fem_hd_rotate per element
 *   (the GPU's arithmetic), bit for bit, on a mesh with sound, inverted,
 *   flat and collapsed elements, with AVX2 or SSE2 lanes;
 * - the assembled product (hy_fem_assembled): a step's first 12 products
 *   are the matrix-free ones, bit for bit; from the 13th the step's system
 *   assembled by vertex rows gives the same product to round-off (fixed
 *   vertices' rows the identity, their columns read as zero), with the same
 *   bits for pools of 1 and 2 threads and with AVX2 or SSE2 lanes; a
 *   squeezed block's step solved with it reaches the matrix-free answer;
 *   objects under 4,096 elements (those a world may batch) never
 *   assemble;
 * - the GPU's twin of the assembled product: the scalar per-row functions
 *   the GPU runs (hy_fem_hd_asm_row, hy_fem_hd_asm_apply_row), looped on
 *   the host, give the CPU's assembled rows and products bit for bit, with
 *   AVX2 or SSE2 lanes; where a GPU is, the model's 14 products on cuda:0
 *   (12 matrix-free, then the rows built and applied there) have the
 *   CPU's bits. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"
#include "core/tetmesh.h"
#include "solvers/fem.h"
#include "solvers/fem_cuda.h"
#include "solvers/fem_hd.h"
#include "test.h"

static uint64_t seed = 0x9E3779B97F4A7C15ull;
static double rnd(void) { return 2.0 * hy_test_uniform(&seed) - 1.0; } /* in [-1, 1) */

/* fem64's material with some stiffness damping (k_scale = dt beta + dt^2) */
static const hy_fem_params material = {
    .young = 1e5, .poisson = 0.3, .density = 1000, .damping_mass = 0.01, .damping_stiffness = 0.01};

static hy_fem_model* model(const hy_tetmesh* mesh, const int32_t* fixed, int32_t nfixed) {
    hy_fem_model* m = NULL;
    CHECK_OK(hy_fem_model_create(mesh->positions, mesh->vertex_count, mesh->tets, mesh->tet_count, &material, fixed,
                                 nfixed, &m));
    return m;
}

/* The rest shape turned 0.6 rad about z, sheared and squeezed, with noise:
 * every element rotated and strained. */
static void deform(const double* rest, int32_t nv, double* x) {
    double c = cos(0.6), s = sin(0.6);
    for (int32_t v = 0; v < nv; v++) {
        const double* X = rest + 3 * v;
        double p[3] = {X[0] + 0.1 * X[1], 0.9 * X[1], X[2]};
        x[3 * v] = c * p[0] - s * p[1] + 1e-4 * rnd();
        x[3 * v + 1] = s * p[0] + c * p[1] + 1e-4 * rnd();
        x[3 * v + 2] = p[2] + 1e-4 * rnd();
    }
}

static double max_abs(const double* a, int64_t n) {
    double r = 0.0;
    for (int64_t k = 0; k < n; k++) r = fmax(r, fabs(a[k]));
    return r;
}

static double max_diff(const double* a, const double* b, int64_t n) {
    double r = 0.0;
    for (int64_t k = 0; k < n; k++) r = fmax(r, fabs(a[k] - b[k]));
    return r;
}

/* The rotation pass against hy_fem_hd_rotate element by element. */
static void test_rotation_pass(void) {
    hy_tetmesh* mesh = NULL;
    double o[3] = {0, 0, 0}, sz[3] = {0.2, 0.2, 0.2};
    CHECK_OK(hy_tetmesh_box(o, sz, 5, 5, 6, &mesh)); /* 900 elements: the last quad full */
    if (!mesh) return;
    int32_t nv = mesh->vertex_count, nt = mesh->tet_count;
    int64_t n = 3 * (int64_t)nv;
    hy_fem_model* m = model(mesh, NULL, 0);
    hy_pool* pool = hy_pool_create(2);
    double* x = malloc(sizeof(double) * (size_t)n);
    double* v = malloc(sizeof(double) * (size_t)n);
    double* rhs = malloc(sizeof(double) * (size_t)n);
    double rb[12], q[12];
    if (!m || !pool || !x || !v || !rhs) {
        CHECK(0);
        return;
    }
    /* large noise inverts elements; vertices sent to one point make flat
     * elements and, four together, a zero deformation gradient */
    for (int32_t k = 0; k < nv; k++) {
        int collapse = hy_test_uniform(&seed) < 0.15;
        for (int a = 0; a < 3; a++) {
            x[3 * k + a] = collapse ? 0.1 : mesh->positions[3 * k + a] + 0.03 * rnd();
            v[3 * k + a] = rnd();
        }
    }
    int sound = 0, inverted = 0, flat = 0;
    hy_fem_hd_model hv;
    hy_fem_view(m, &hv);
    for (int32_t e = 0; e < nt; e++) {
        double F[9];
        hy_fem_hd_deformation_gradient(hv.tet + 4 * e, hv.grad + 12 * e, x, F);
        double d = hy_fem_hd_det3(F);
        sound += d > 0.5, inverted += d < -1e-3, flat += fabs(d) < 1e-12;
    }
    fprintf(stderr, "rotation pass: %d elements, %d sound, %d inverted, %d flat\n", nt, sound, inverted, flat);
    CHECK(sound > 100 && inverted > 20 && flat > 5);
    double g[3] = {0, -9.81, 0};
    for (int lanes = 0; lanes < 2; lanes++) {
        int was = hy_fem_simd(lanes);
        CHECK_OK(hy_fem_prepare(m, pool, x, v, 0.005, g, NULL, NULL, rhs));
        hy_fem_simd(was);
        hy_fem_view(m, &hv);
        int same = 1;
        for (int32_t e = 0; e < nt; e++) {
            hy_fem_hd_rotate(hv.tet + 4 * e, hv.grad + 12 * e, hv.vol[e], hv.mu, hv.lambda, hv.rest, x, v, 0.01 + 0.005,
                             rb, 1, q);
            for (int j = 0; j < 12; j++) same &= rb[j] == hv.rgrad[hy_fem_hd_quad(e, j)];
            same &= !memcmp(q, hv.efor + 12 * e, sizeof q);
        }
        CHECK(same);
    }
    hy_fem_model_destroy(m);
    hy_pool_destroy(pool);
    hy_tetmesh_destroy(mesh);
    free(x), free(v), free(rhs);
}

/* The rows of m's assembled system and its product y of p against the
 * scalar per-row functions run row by row on the host: 1 when both have
 * the same bits (every entry of the rows, their padding included). */
static int host_twin(const hy_fem_model* m, const double* p, const double* y) {
    hy_fem_hd_asm cpu;
    hy_fem_hd_model hv;
    if (!hy_fem_asm_view(m, &cpu)) return 0;
    hy_fem_view(m, &hv);
    size_t nval = 12 * (size_t)cpu.a_start[hv.nv], n = 3 * (size_t)hv.nv;
    double* val = malloc(sizeof(double) * nval);
    double* yt = malloc(sizeof(double) * n);
    if (!val || !yt) return 0;
    memset(val, 0xff, sizeof(double) * nval); /* NaNs where a row writes nothing */
    hy_fem_hd_asm twin = cpu;
    twin.a_val = val;
    for (int32_t v = 0; v < hv.nv; v++) hy_fem_hd_asm_row(&hv, &twin, v);
    int same = !memcmp(val, cpu.a_val, sizeof(double) * nval);
    for (int32_t v = 0; v < hv.nv; v++) hy_fem_hd_asm_apply_row(&twin, hv.fixed, p, v, yt + 3 * v);
    same &= !memcmp(yt, y, sizeof(double) * n);
    free(val), free(yt);
    return same;
}

/* Products 1..20 of a prepared step with the assembled product allowed
 * (model a) and not (model b). */
static void test_products(void) {
    hy_tetmesh* mesh = NULL;
    double o[3] = {0, 0, 0}, sz[3] = {0.2, 0.2, 0.2};
    CHECK_OK(hy_tetmesh_box(o, sz, 9, 9, 9, &mesh));
    if (!mesh) return;
    int32_t nv = mesh->vertex_count, nfix = 0;
    CHECK(mesh->tet_count >= 4096);
    int64_t n = 3 * (int64_t)nv;
    int32_t* fixed = malloc(sizeof(int32_t) * (size_t)nv);
    for (int32_t v = 0; v < nv; v++)
        if (mesh->positions[3 * v] < 1e-9) fixed[nfix++] = v; /* the face x = 0 */
    hy_fem_model* a = model(mesh, fixed, nfix);
    hy_fem_model* b = model(mesh, fixed, nfix);
    hy_pool* pools[2] = {hy_pool_create(1), hy_pool_create(2)};
    double* x = malloc(sizeof(double) * (size_t)n);
    double* v = malloc(sizeof(double) * (size_t)n);
    double* rhs = malloc(sizeof(double) * (size_t)n);
    double* p = malloc(sizeof(double) * (size_t)n);
    double* ya = malloc(sizeof(double) * (size_t)n);
    double* yb = malloc(sizeof(double) * (size_t)n);
    double* y1 = malloc(sizeof(double) * (size_t)n);
    if (!a || !b || !pools[0] || !pools[1] || !x || !v || !rhs || !p || !ya || !yb || !y1) {
        CHECK(0);
        return;
    }
    deform(mesh->positions, nv, x);
    for (int64_t k = 0; k < n; k++) v[k] = 0.05 * rnd(), p[k] = rnd();
    double g[3] = {0, -9.81, 0};
    CHECK(hy_fem_assembled(a, -1) == 1); /* allowed by default */
    hy_fem_assembled(b, 0);
    CHECK(hy_fem_assembled(b, -1) == 0);
    int same_mf = 1, asm_differs = 0, fixed_rows = 1;
    double worst = 0.0;
    CHECK_OK(hy_fem_prepare(a, pools[1], x, v, 0.005, g, NULL, NULL, rhs));
    CHECK_OK(hy_fem_prepare(b, pools[1], x, v, 0.005, g, NULL, NULL, rhs));
    for (int k = 1; k <= 20; k++) {
        hy_fem_apply(a, pools[1], p, ya);
        hy_fem_apply(b, pools[1], p, yb);
        if (k <= 12) {
            same_mf &= !memcmp(ya, yb, sizeof(double) * (size_t)n);
        } else {
            asm_differs |= memcmp(ya, yb, sizeof(double) * (size_t)n) != 0;
            worst = fmax(worst, max_diff(ya, yb, n) / max_abs(yb, n));
        }
        for (int32_t q = 0; q < nfix; q++)
            for (int c = 0; c < 3; c++) fixed_rows &= ya[3 * fixed[q] + c] == p[3 * fixed[q] + c];
    }
    CHECK(same_mf);
    CHECK(asm_differs); /* the assembled product ran: another summation order */
    CHECK(worst < 1e-13);
    CHECK(fixed_rows);
    fprintf(stderr, "assembled against matrix-free: max |diff| / max |y| = %.3g\n", worst);
    /* a later step re-assembles: the same after a new prepare at another x */
    for (int64_t k = 0; k < n; k++) x[k] += 1e-3 * rnd();
    CHECK_OK(hy_fem_prepare(a, pools[0], x, v, 0.005, g, NULL, NULL, rhs));
    CHECK_OK(hy_fem_prepare(b, pools[0], x, v, 0.005, g, NULL, NULL, rhs));
    for (int k = 1; k <= 14; k++) hy_fem_apply(a, pools[0], p, ya), hy_fem_apply(b, pools[0], p, yb);
    CHECK(max_diff(ya, yb, n) / max_abs(yb, n) < 1e-13);
    CHECK(memcmp(ya, yb, sizeof(double) * (size_t)n) != 0);
    CHECK(host_twin(a, p, ya));
    CHECK(!host_twin(b, p, yb)); /* b has no assembled system */
    /* pools of 1 and 2 threads, and both lane widths: the same bits */
    CHECK_OK(hy_fem_prepare(a, pools[1], x, v, 0.005, g, NULL, NULL, rhs));
    for (int k = 1; k <= 14; k++) hy_fem_apply(a, pools[1], p, y1);
    CHECK(!memcmp(ya, y1, sizeof(double) * (size_t)n));
    int was = hy_fem_simd(0);
    CHECK_OK(hy_fem_prepare(a, pools[1], x, v, 0.005, g, NULL, NULL, rhs));
    for (int k = 1; k <= 14; k++) hy_fem_apply(a, pools[1], p, y1);
    hy_fem_simd(was);
    CHECK(!memcmp(ya, y1, sizeof(double) * (size_t)n));
    CHECK(host_twin(a, p, y1));
    if (hy_fem_gpu_count() > 0) {
        /* the same step's products on cuda:0 against the CPU's, one by one */
        double* seq = malloc(sizeof(double) * 14 * (size_t)n);
        int same = seq != NULL;
        int64_t bytes12 = 0;
        CHECK_OK(hy_fem_prepare(a, pools[1], x, v, 0.005, g, NULL, NULL, rhs));
        for (int k = 0; k < 14 && seq; k++) hy_fem_apply(a, pools[1], p, seq + k * n);
        CHECK_OK(hy_fem_set_device(a, 0));
        CHECK_OK(hy_fem_prepare(a, pools[1], x, v, 0.005, g, NULL, NULL, rhs));
        for (int k = 0; k < 14 && seq; k++) {
            if (k == 12) bytes12 = hy_fem_gpu_bytes(a);
            hy_fem_apply(a, pools[1], p, y1);
            same &= !memcmp(y1, seq + k * n, sizeof(double) * (size_t)n);
        }
        fprintf(stderr, "cuda:0: 14 products %s the CPU's, %lld bytes moved\n", same ? "equal to" : "DIFFER from",
                (long long)hy_fem_gpu_bytes(a));
        CHECK(hy_fem_device(a) == 0); /* not dropped: the products ran there */
        CHECK(same);
        /* two products' p and y, and the rows' pattern going up once */
        CHECK(hy_fem_gpu_bytes(a) - bytes12 > 2 * 2 * (int64_t)sizeof(double) * n);
        hy_fem_set_device(a, -1);
        free(seq);
    }
    hy_fem_model_destroy(a);
    hy_fem_model_destroy(b);
    for (int k = 0; k < 2; k++) hy_pool_destroy(pools[k]);
    hy_tetmesh_destroy(mesh);
    free(fixed), free(x), free(v), free(rhs), free(p), free(ya), free(yb), free(y1);
}

/* A squeezed block let go, one step to 1e-10: the same iterations within
 * one and the same state to the tolerance, assembled or not; a block
 * under 4,096 elements gives the matrix-free bits. */
static void test_solve(int cells, int expect_assembled) {
    hy_tetmesh* mesh = NULL;
    double o[3] = {0, 0, 0}, sz[3] = {0.2, 0.2, 0.2};
    CHECK_OK(hy_tetmesh_box(o, sz, cells, cells, cells, &mesh));
    if (!mesh) return;
    int32_t nv = mesh->vertex_count;
    int64_t n = 3 * (int64_t)nv;
    hy_pool* pool = hy_pool_create(2);
    double* x0 = malloc(sizeof(double) * (size_t)n);
    double* v0 = calloc((size_t)n, sizeof(double));
    double* x1 = malloc(sizeof(double) * 2 * (size_t)n);
    double* v1 = malloc(sizeof(double) * 2 * (size_t)n);
    hy_fem_model* m = model(mesh, NULL, 0);
    if (!pool || !x0 || !v0 || !x1 || !v1 || !m) {
        CHECK(0);
        return;
    }
    deform(mesh->positions, nv, x0);
    double g[3] = {0, -9.81, 0};
    hy_fem_solve_stats st[2];
    for (int c = 0; c < 2; c++) {
        hy_fem_assembled(m, c);
        CHECK_OK(hy_fem_solve(m, pool, x0, v0, 0.005, g, NULL, 1000, 1e-10, x1 + c * n, v1 + c * n, &st[c]));
    }
    fprintf(stderr, "%d cells: %d iterations matrix-free, %d assembled\n", cells, st[0].cg_iterations,
            st[1].cg_iterations);
    CHECK(st[0].cg_iterations > 12); /* long enough to assemble */
    CHECK(abs(st[0].cg_iterations - st[1].cg_iterations) <= 1);
    double vs = max_abs(v1, n);
    CHECK(vs > 0.1);
    CHECK(max_diff(v1, v1 + n, n) <= 1e-8 * vs);
    CHECK((memcmp(v1, v1 + n, sizeof(double) * (size_t)n) != 0) == expect_assembled);
    hy_fem_model_destroy(m);
    hy_pool_destroy(pool);
    hy_tetmesh_destroy(mesh);
    free(x0), free(v0), free(x1), free(v1);
}

int main(void) {
    test_rotation_pass();
    test_products();
    test_solve(9, 1); /* 4,374 elements */
    test_solve(8, 0); /* 3,072 elements: matrix-free only */
    TEST_END();
}
