/* The solvers' shared arithmetic (solvers/fem_hd.h, solvers/massspring_hd.h),
 * the code the CUDA kernels (solvers/fem.cu, solvers/massspring.cu) run,
 * checked on the CPU against
 * the CPU's own passes, bit for bit, on a deformed, partly fixed box with
 * a padded last quad of elements:
 * - the rotation pass: per element hy_fem_hd_rotate (rotated gradients
 *   written at stride 1, as a GPU thread could) gives the model's rotated
 *   gradients and, gathered per vertex, the elastic forces
 *   hy_fem_elastic_forces returns;
 * - the matrix-vector product of a prepared step: per element
 *   hy_fem_hd_apply_element (one lane of the CPU's four-element kernel),
 *   per vertex hy_fem_hd_gather and hy_fem_hd_matvec_vertex, against
 *   hy_fem_apply with its vector kernel in SSE2 and in AVX2 registers, and
 *   on one and two threads;
 * - the mass-spring spring pass per spring (hy_ms_hd_spring) against the
 *   prepared model's coefficients, and its spring forces against
 *   hy_ms_spring_forces;
 * - without CUDA (or a GPU) hy_fem_set_device and hy_ms_set_device refuse
 *   with HY_ERR_UNSUPPORTED and the models stay on the CPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"
#include "core/tetmesh.h"
#include "hyphys/hyphys.h"
#include "solvers/fem.h"
#include "solvers/fem_cuda.h"
#include "solvers/fem_hd.h"
#include "solvers/massspring.h"
#include "test.h"

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static double rnd(void) { return hy_test_uniform(&g_rng); }

static int same(const double* a, const double* b, size_t n) { return memcmp(a, b, sizeof(double) * n) == 0; }

int main(void) {
    double o[3] = {0, 0, 0}, sz[3] = {0.5, 0.1, 0.3};
    hy_tetmesh* mesh = NULL;
    CHECK_OK(hy_tetmesh_box(o, sz, 5, 1, 3, &mesh)); /* 90 elements */
    if (!mesh) TEST_END();
    int32_t nv = mesh->vertex_count, nt = mesh->tet_count, nfix = 0;
    int32_t* fixed = malloc(sizeof(int32_t) * (size_t)nv);
    for (int32_t v = 0; v < nv; v++)
        if (mesh->positions[3 * v] == 0.0) fixed[nfix++] = v;
    hy_fem_params p = {2e6, 0.35, 1000, 0.1, 0.01};
    hy_fem_model* m = NULL;
    CHECK_OK(hy_fem_model_create(mesh->positions, nv, mesh->tets, nt, &p, fixed, nfix, &m));
    hy_pool* pool1 = hy_pool_create(1);
    hy_pool* pool2 = hy_pool_create(2);
    size_t n3 = 3 * (size_t)nv;
    double *x = malloc(sizeof(double) * n3), *v = malloc(sizeof(double) * n3), *f = malloc(sizeof(double) * n3),
           *fr = malloc(sizeof(double) * n3), *pv = malloc(sizeof(double) * n3), *y = malloc(sizeof(double) * n3),
           *yr = malloc(sizeof(double) * n3), *rhs = malloc(sizeof(double) * n3);
    CHECK(m && pool1 && pool2 && x && v && f && fr && pv && y && yr && rhs);
    if (!m || !pool1 || !pool2 || !x || !v || !f || !fr || !pv || !y || !yr || !rhs) TEST_END();
    CHECK(nt % 4 != 0); /* the last quad is padded */
    /* a large deformation (some elements nearly flat) and a velocity */
    for (size_t i = 0; i < n3; i++) {
        x[i] = mesh->positions[i] + 0.03 * (rnd() - 0.5) + (i % 3 == 1 ? 0.2 * mesh->positions[i - 1] * mesh->positions[i - 1] : 0.0);
        v[i] = rnd() - 0.5;
        pv[i] = rnd() - 0.5;
    }
    hy_fem_hd_model hv;
    hy_fem_view(m, &hv);
    CHECK(hv.nv == nv && hv.nt == nt && hv.nq == (nt + 3) / 4);

    /* the rotation pass */
    CHECK_OK(hy_fem_elastic_forces(m, pool2, x, f));
    double* rg = malloc(sizeof(double) * 12 * (size_t)nt);
    double* ef = malloc(sizeof(double) * 48 * (size_t)hv.nq);
    int rot_same = 1;
    for (int32_t e = 0; e < nt; e++) {
        hy_fem_hd_rotate(hv.tet + 4 * e, hv.grad + 12 * e, hv.vol[e], hv.mu, hv.lambda, hv.rest, x, NULL, 0.0,
                         rg + 12 * e, 1, ef + 12 * e);
        for (int j = 0; j < 12; j++) rot_same &= memcmp(&rg[12 * e + j], &hv.rgrad[hy_fem_hd_quad(e, j)], sizeof(double)) == 0;
    }
    for (int32_t k = 0; k < nv; k++) hy_fem_hd_gather(hv.inc_start, hv.inc, ef, k, fr + 3 * k);
    CHECK(rot_same);
    CHECK(same(f, fr, n3));
    double fbig = 0.0;
    for (size_t i = 0; i < n3; i++) fbig = fbig > fabs(f[i]) ? fbig : fabs(f[i]);
    CHECK(fbig > 1.0); /* the forces are not trivially zero */

    /* the matrix-vector product of a prepared step */
    double grav[3] = {0, -9.81, 0};
    CHECK_OK(hy_fem_prepare(m, pool2, x, v, 0.01, grav, NULL, NULL, rhs));
    hy_fem_view(m, &hv);
    CHECK(hv.diag_scale > 1.0 && hv.k_scale > 0.0);
    for (int32_t e = 0; e < nt; e++)
        hy_fem_hd_apply_element(hv.tet + 4 * e, hv.rgrad + hy_fem_hd_quad(e, 0), 4, hv.vol[e], hv.mu, hv.lambda,
                                hv.fixed, pv, ef + 12 * e);
    for (int32_t k = 0; k < nv; k++) {
        double kf[3] = {0, 0, 0};
        if (!hv.fixed[k]) hy_fem_hd_gather(hv.inc_start, hv.inc, ef, k, kf);
        hy_fem_hd_matvec_vertex(hv.fixed[k], hv.mass[k], hv.diag_scale, hv.k_scale, kf, pv + 3 * k, yr + 3 * k);
    }
    int before = hy_fem_simd(-1);
    for (int simd = 0; simd < 2; simd++) {
        hy_fem_simd(simd);
        for (int threads = 1; threads <= 2; threads++) {
            memset(y, 0, sizeof(double) * n3);
            hy_fem_apply(m, threads == 1 ? pool1 : pool2, pv, y);
            CHECK(same(y, yr, n3));
        }
    }
    hy_fem_simd(before);

    /* no GPU here: refused, the model stays on the CPU */
    if (hy_fem_gpu_count() == 0) {
        CHECK(hy_fem_set_device(m, 0) == HY_ERR_UNSUPPORTED);
        CHECK(hy_fem_device(m) == -1);
        memset(y, 0, sizeof(double) * n3);
        hy_fem_apply(m, pool1, pv, y);
        CHECK(same(y, yr, n3));
    } else {
        /* a GPU: the prepared step's right-hand side and the product are the
         * CPU's, bit for bit */
        double* rhs_gpu = malloc(sizeof(double) * n3);
        double* pinv_cpu = malloc(sizeof(double) * 3 * n3);
        memcpy(pinv_cpu, hv.pinv, sizeof(double) * 3 * n3);
        CHECK_OK(hy_fem_set_device(m, 0));
        CHECK(hy_fem_device(m) == 0);
        CHECK_OK(hy_fem_prepare(m, pool2, x, v, 0.01, grav, NULL, NULL, rhs_gpu));
        CHECK(rhs_gpu && same(rhs_gpu, rhs, n3));
        CHECK(same(pinv_cpu, hv.pinv, 3 * n3));
        free(pinv_cpu);
        memset(y, 0, sizeof(double) * n3);
        hy_fem_apply(m, pool2, pv, y);
        CHECK(same(y, yr, n3));
        CHECK(hy_fem_device(m) == 0);
        free(rhs_gpu);
        fprintf(stderr, "fem_hd: on cuda:0 the right-hand side and the product equal the CPU's\n");
    }
    CHECK_OK(hy_fem_set_device(m, -1));

    /* mass-spring on the same mesh */
    hy_ms_params mp = {.stiffness = 5e3, .damping = 0.02, .density = 1000, .damping_mass = 0.1};
    hy_ms_model* ms = NULL;
    CHECK_OK(hy_ms_model_create(mesh->positions, nv, mesh->tets, nt, &mp, fixed, nfix, &ms));
    if (ms) {
        CHECK_OK(hy_ms_prepare(ms, pool2, x, v, 0.01, grav, NULL, NULL, rhs));
        hy_ms_hd_model sv;
        hy_ms_view(ms, &sv);
        CHECK(sv.ns > nt && sv.diag_scale > 1.0);
        int spring_same = 1;
        double* sfr = calloc(n3, sizeof(double));
        for (int32_t k = 0; k < sv.ns; k++) {
            double q[5], sf[3], d[3], l, fs[3];
            int32_t i = sv.spring[2 * k], j = sv.spring[2 * k + 1];
            hy_ms_hd_spring(i, j, sv.k, sv.c, sv.rest_len[k], x, v, 0.01, q, sf);
            spring_same &= same(q, sv.coef + 5 * k, 5) && same(sf, sv.sforce + 3 * k, 3);
            hy_ms_hd_spring_state(i, j, sv.k, sv.rest_len[k], x, d, &l, fs);
            for (int a = 0; a < 3; a++) sfr[3 * i + a] += fs[a], sfr[3 * j + a] -= fs[a];
        }
        CHECK(spring_same);
        CHECK_OK(hy_ms_spring_forces(ms, pool2, x, f));
        double err = 0.0, big = 0.0;
        for (size_t i = 0; i < n3; i++) {
            err = fmax(err, fabs(f[i] - sfr[i]));
            big = fmax(big, fabs(f[i]));
        }
        /* summed per vertex in spring order there, in a different order here */
        CHECK(big > 1.0 && err <= 1e-12 * big);
        free(sfr);
        if (hy_fem_gpu_count() == 0) {
            CHECK(hy_ms_set_device(ms, 0) == HY_ERR_UNSUPPORTED);
            CHECK(hy_ms_device(ms) == -1);
        } else {
            double *r_cpu = malloc(sizeof(double) * n3), *r_gpu = malloc(sizeof(double) * n3),
                   *y_cpu = malloc(sizeof(double) * n3), *y_gpu = malloc(sizeof(double) * n3);
            CHECK_OK(hy_ms_prepare(ms, pool2, x, v, 0.01, grav, NULL, NULL, r_cpu));
            hy_ms_apply(ms, pool2, pv, y_cpu);
            CHECK_OK(hy_ms_set_device(ms, 0));
            CHECK_OK(hy_ms_prepare(ms, pool2, x, v, 0.01, grav, NULL, NULL, r_gpu));
            hy_ms_apply(ms, pool2, pv, y_gpu);
            CHECK(hy_ms_device(ms) == 0);
            CHECK(same(r_cpu, r_gpu, n3) && same(y_cpu, y_gpu, n3));
            free(r_cpu), free(r_gpu), free(y_cpu), free(y_gpu);
            fprintf(stderr, "massspring_hd: on cuda:0 the right-hand side and the product equal the CPU's\n");
        }
        CHECK_OK(hy_ms_set_device(ms, -1));
        hy_ms_model_destroy(ms);
    }
    fprintf(stderr, "fem_hd: %d elements (%d quads), %d vertices (%d fixed): rotation pass and product bit-equal\n", nt,
            hv.nq, nv, nfix);

    free(rg), free(ef), free(x), free(v), free(f), free(fr), free(pv), free(y), free(yr), free(rhs), free(fixed);
    hy_fem_model_destroy(m);
    hy_pool_destroy(pool1);
    hy_pool_destroy(pool2);
    hy_tetmesh_destroy(mesh);
    TEST_END();
}
