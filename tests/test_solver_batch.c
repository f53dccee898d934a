/* Small objects batched into one launch (solvers/batch_hd.h): the batched
 * passes over several objects' items laid one object after the other give,
 * bit for bit, each object's own CPU results:
 * - hy_batch_hd_find over offsets with empty objects between;
 * - FEM, three boxes of different sizes (one partly fixed, padded last
 *   quads): the rotation pass and right-hand side pass of a prepared step
 *   (rotated gradients, right-hand side, inverse diagonal blocks) against
 *   hy_fem_prepare, and the product against hy_fem_apply;
 * - mass-spring, two boxes: the spring pass (coefficients, spring forces)
 *   against hy_ms_prepare, the product against hy_ms_apply;
 * - the CUDA batches (solvers/fem_cuda.h, massspring_cuda.h): with no GPU
 *   refused with HY_ERR_UNSUPPORTED; on a GPU the same bits as the CPU. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"
#include "core/tetmesh.h"
#include "solvers/batch_hd.h"
#include "solvers/fem.h"
#include "solvers/fem_cuda.h"
#include "solvers/massspring.h"
#include "solvers/massspring_cuda.h"
#include "test.h"

#define NFEM 3
#define NMS 2
#define DT 0.01

static uint64_t g_rng = 0x2545F4914F6CDD1Dull;
static double rnd(void) { return hy_test_uniform(&g_rng); }

static int same(const double* a, const double* b, size_t n) { return memcmp(a, b, sizeof(double) * n) == 0; }

static void test_find(void) {
    const int64_t start[7] = {0, 5, 5, 9, 9, 9, 12};
    int ok = 1;
    for (int64_t i = 0; i < 12; i++) {
        int32_t b = hy_batch_hd_find(start, 6, i);
        ok &= start[b] <= i && i < start[b + 1];
    }
    CHECK(ok);
    CHECK(hy_batch_hd_find(start, 6, 5) == 2 && hy_batch_hd_find(start, 6, 9) == 5);
    const int64_t one[2] = {0, 3};
    CHECK(hy_batch_hd_find(one, 1, 2) == 0);
}

/* A deformed box of nx x ny x nz cells, its vertices at x == 0 fixed when
 * `fix`: the mesh and fixed list (caller frees), positions and velocities
 * of a step appended at x + 3 off, v + 3 off. */
static hy_tetmesh* box(int nx, int ny, int nz, double shift, int fix, int32_t** fixed, int32_t* nfix) {
    double o[3] = {shift, 0, 0}, sz[3] = {0.3, 0.1, 0.2};
    hy_tetmesh* mesh = NULL;
    if (hy_tetmesh_box(o, sz, nx, ny, nz, &mesh)) return NULL;
    *fixed = malloc(sizeof(int32_t) * (size_t)mesh->vertex_count);
    *nfix = 0;
    for (int32_t v = 0; fix && *fixed && v < mesh->vertex_count; v++)
        if (mesh->positions[3 * v] == shift) (*fixed)[(*nfix)++] = v;
    return mesh;
}

static void fill_state(const hy_tetmesh* mesh, double* x, double* v, double* p) {
    for (int32_t i = 0; i < 3 * mesh->vertex_count; i++) {
        x[i] = mesh->positions[i] + 0.02 * (rnd() - 0.5);
        v[i] = rnd() - 0.5;
        p[i] = rnd() - 0.5;
    }
}

static void test_fem(hy_pool* pool) {
    static const int cells[NFEM][3] = {{3, 1, 2}, {2, 2, 2}, {5, 1, 3}};
    hy_tetmesh* mesh[NFEM] = {NULL};
    hy_fem_model* m[NFEM] = {NULL};
    hy_fem_hd_model hv[NFEM];
    int64_t e_start[NFEM + 1] = {0}, v_start[NFEM + 1] = {0};
    hy_fem_params par = {1e6, 0.3, 1000, 0.1, 0.01};
    for (int b = 0; b < NFEM; b++) {
        int32_t *fixed = NULL, nfix = 0;
        mesh[b] = box(cells[b][0], cells[b][1], cells[b][2], 0.5 * b, b != 1, &fixed, &nfix);
        CHECK(mesh[b] && fixed);
        if (!mesh[b] || !fixed) return;
        CHECK_OK(hy_fem_model_create(mesh[b]->positions, mesh[b]->vertex_count, mesh[b]->tets, mesh[b]->tet_count, &par,
                                     fixed, nfix, &m[b]));
        free(fixed);
        if (!m[b]) return;
        e_start[b + 1] = e_start[b] + mesh[b]->tet_count;
        v_start[b + 1] = v_start[b] + mesh[b]->vertex_count;
    }
    CHECK(mesh[0]->tet_count % 4 != 0 || mesh[2]->tet_count % 4 != 0); /* a padded last quad */
    size_t n3 = 3 * (size_t)v_start[NFEM];
    double *x = malloc(sizeof(double) * n3), *v = malloc(sizeof(double) * n3), *p = malloc(sizeof(double) * n3),
           *rhs_ref = malloc(sizeof(double) * n3), *y_ref = malloc(sizeof(double) * n3),
           *rhs = malloc(sizeof(double) * n3), *y = malloc(sizeof(double) * n3);
    double *pinv_ref[NFEM], *rgrad_ref[NFEM];
    double grav[3] = {0, -9.81, 0};
    /* each object on its own (the CPU's passes) */
    for (int b = 0; b < NFEM; b++) {
        size_t o = 3 * (size_t)v_start[b];
        fill_state(mesh[b], x + o, v + o, p + o);
        CHECK_OK(hy_fem_prepare(m[b], pool, x + o, v + o, DT, grav, NULL, NULL, rhs_ref + o));
        hy_fem_apply(m[b], pool, p + o, y_ref + o);
        hy_fem_view(m[b], &hv[b]);
        pinv_ref[b] = malloc(sizeof(double) * 9 * (size_t)hv[b].nv);
        rgrad_ref[b] = malloc(sizeof(double) * 48 * (size_t)hv[b].nq);
        memcpy(pinv_ref[b], hv[b].pinv, sizeof(double) * 9 * (size_t)hv[b].nv);
        memcpy(rgrad_ref[b], hv[b].rgrad, sizeof(double) * 48 * (size_t)hv[b].nq);
        /* the batch must write them again */
        memset(hv[b].pinv, 0, sizeof(double) * 9 * (size_t)hv[b].nv);
        for (int32_t e = 0; e < hv[b].nt; e++)
            for (int j = 0; j < 12; j++) hv[b].rgrad[hy_fem_hd_quad(e, j)] = 0.0;
    }
    /* the batch: the prepare passes, then the product, each one pass over
     * every object's items */
    double vscale = par.damping_stiffness + DT;
    for (int64_t i = 0; i < e_start[NFEM]; i++) hy_fem_hd_batch_rotate(hv, e_start, v_start, NFEM, i, x, v, vscale);
    for (int64_t i = 0; i < v_start[NFEM]; i++) hy_fem_hd_batch_rhs_vertex(hv, v_start, NFEM, i, DT, grav, v, rhs);
    for (int64_t i = 0; i < e_start[NFEM]; i++) hy_fem_hd_batch_apply_element(hv, e_start, v_start, NFEM, i, p);
    for (int64_t i = 0; i < v_start[NFEM]; i++) hy_fem_hd_batch_matvec_vertex(hv, v_start, NFEM, i, p, y);
    CHECK(same(rhs, rhs_ref, n3));
    CHECK(same(y, y_ref, n3));
    double ybig = 0.0;
    for (size_t i = 0; i < n3; i++) ybig = fmax(ybig, fabs(y[i]));
    CHECK(ybig > 1.0); /* not trivially zero */
    for (int b = 0; b < NFEM; b++) {
        CHECK(same(hv[b].pinv, pinv_ref[b], 9 * (size_t)hv[b].nv));
        int rg = 1;
        for (int32_t e = 0; e < hv[b].nt; e++)
            for (int j = 0; j < 12; j++)
                rg &= memcmp(&hv[b].rgrad[hy_fem_hd_quad(e, j)], &rgrad_ref[b][hy_fem_hd_quad(e, j)], sizeof(double)) == 0;
        CHECK(rg);
    }
    /* the CUDA batch: refused without a GPU, the CPU's bits with one */
    hy_fem_gpu_batch* gb = NULL;
    if (hy_fem_gpu_count() == 0) {
        CHECK(hy_fem_gpu_batch_create(0, hv, NFEM, &gb) == HY_ERR_UNSUPPORTED);
        CHECK(gb == NULL);
    } else {
        CHECK_OK(hy_fem_gpu_batch_create(0, hv, NFEM, &gb));
        memset(rhs, 0, sizeof(double) * n3);
        memset(y, 0, sizeof(double) * n3);
        for (int b = 0; b < NFEM; b++) memset(hv[b].pinv, 0, sizeof(double) * 9 * (size_t)hv[b].nv);
        CHECK_OK(hy_fem_gpu_batch_prepare(gb, hv, x, v, vscale, DT, grav, rhs));
        CHECK_OK(hy_fem_gpu_batch_apply(gb, hv, p, y));
        CHECK(same(rhs, rhs_ref, n3) && same(y, y_ref, n3));
        for (int b = 0; b < NFEM; b++) CHECK(same(hv[b].pinv, pinv_ref[b], 9 * (size_t)hv[b].nv));
        hy_fem_gpu_batch_destroy(gb);
        fprintf(stderr, "fem batch: on cuda:0 one launch per pass over %d objects equals the CPU's\n", NFEM);
    }
    fprintf(stderr, "fem batch: %lld elements, %lld vertices in %d objects: bit-equal to each object's passes\n",
            (long long)e_start[NFEM], (long long)v_start[NFEM], NFEM);
    for (int b = 0; b < NFEM; b++) {
        free(pinv_ref[b]);
        free(rgrad_ref[b]);
        hy_fem_model_destroy(m[b]);
        hy_tetmesh_destroy(mesh[b]);
    }
    free(x), free(v), free(p), free(rhs_ref), free(y_ref), free(rhs), free(y);
}

static void test_mass_spring(hy_pool* pool) {
    static const int cells[NMS][3] = {{2, 1, 2}, {3, 2, 1}};
    hy_tetmesh* mesh[NMS] = {NULL};
    hy_ms_model* m[NMS] = {NULL};
    hy_ms_hd_model hv[NMS];
    int64_t s_start[NMS + 1] = {0}, v_start[NMS + 1] = {0};
    hy_ms_params par = {.stiffness = 5e3, .damping = 0.02, .density = 1000, .damping_mass = 0.1};
    for (int b = 0; b < NMS; b++) {
        int32_t *fixed = NULL, nfix = 0;
        mesh[b] = box(cells[b][0], cells[b][1], cells[b][2], 0.5 * b, b == 0, &fixed, &nfix);
        CHECK(mesh[b] && fixed);
        if (!mesh[b] || !fixed) return;
        CHECK_OK(hy_ms_model_create(mesh[b]->positions, mesh[b]->vertex_count, mesh[b]->tets, mesh[b]->tet_count, &par,
                                    fixed, nfix, &m[b]));
        free(fixed);
        if (!m[b]) return;
        v_start[b + 1] = v_start[b] + mesh[b]->vertex_count;
    }
    size_t n3 = 3 * (size_t)v_start[NMS];
    double *x = malloc(sizeof(double) * n3), *v = malloc(sizeof(double) * n3), *p = malloc(sizeof(double) * n3),
           *rhs = malloc(sizeof(double) * n3), *y_ref = malloc(sizeof(double) * n3), *y = malloc(sizeof(double) * n3);
    double *coef_ref[NMS], *sf_ref[NMS];
    double grav[3] = {0, -9.81, 0};
    for (int b = 0; b < NMS; b++) {
        size_t o = 3 * (size_t)v_start[b];
        fill_state(mesh[b], x + o, v + o, p + o);
        CHECK_OK(hy_ms_prepare(m[b], pool, x + o, v + o, DT, grav, NULL, NULL, rhs + o));
        hy_ms_apply(m[b], pool, p + o, y_ref + o);
        hy_ms_view(m[b], &hv[b]);
        s_start[b + 1] = s_start[b] + hv[b].ns;
        coef_ref[b] = malloc(sizeof(double) * 5 * (size_t)hv[b].ns);
        sf_ref[b] = malloc(sizeof(double) * 3 * (size_t)hv[b].ns);
        memcpy(coef_ref[b], hv[b].coef, sizeof(double) * 5 * (size_t)hv[b].ns);
        memcpy(sf_ref[b], hv[b].sforce, sizeof(double) * 3 * (size_t)hv[b].ns);
        memset(hv[b].coef, 0, sizeof(double) * 5 * (size_t)hv[b].ns);
        memset(hv[b].sforce, 0, sizeof(double) * 3 * (size_t)hv[b].ns);
    }
    for (int64_t i = 0; i < s_start[NMS]; i++) hy_ms_hd_batch_spring(hv, s_start, v_start, NMS, i, x, v, DT);
    for (int64_t i = 0; i < v_start[NMS]; i++) hy_ms_hd_batch_matvec_vertex(hv, v_start, NMS, i, p, y);
    for (int b = 0; b < NMS; b++) {
        CHECK(same(hv[b].coef, coef_ref[b], 5 * (size_t)hv[b].ns));
        CHECK(same(hv[b].sforce, sf_ref[b], 3 * (size_t)hv[b].ns));
    }
    CHECK(same(y, y_ref, n3));
    hy_ms_gpu_batch* gb = NULL;
    if (hy_fem_gpu_count() == 0) {
        CHECK(hy_ms_gpu_batch_create(0, hv, NMS, &gb) == HY_ERR_UNSUPPORTED);
        CHECK(gb == NULL);
    } else {
        CHECK_OK(hy_ms_gpu_batch_create(0, hv, NMS, &gb));
        memset(y, 0, sizeof(double) * n3);
        for (int b = 0; b < NMS; b++) memset(hv[b].coef, 0, sizeof(double) * 5 * (size_t)hv[b].ns);
        CHECK_OK(hy_ms_gpu_batch_springs(gb, hv, x, v, DT));
        CHECK_OK(hy_ms_gpu_batch_apply(gb, hv, p, y));
        CHECK(same(y, y_ref, n3));
        for (int b = 0; b < NMS; b++) CHECK(same(hv[b].coef, coef_ref[b], 5 * (size_t)hv[b].ns));
        hy_ms_gpu_batch_destroy(gb);
        fprintf(stderr, "mass-spring batch: on cuda:0 one launch per pass over %d objects equals the CPU's\n", NMS);
    }
    fprintf(stderr, "mass-spring batch: %lld springs, %lld vertices in %d objects: bit-equal to each object's passes\n",
            (long long)s_start[NMS], (long long)v_start[NMS], NMS);
    for (int b = 0; b < NMS; b++) {
        free(coef_ref[b]);
        free(sf_ref[b]);
        hy_ms_model_destroy(m[b]);
        hy_tetmesh_destroy(mesh[b]);
    }
    free(x), free(v), free(p), free(rhs), free(y_ref), free(y);
}

int main(void) {
    hy_pool* pool = hy_pool_create(1);
    CHECK(pool != NULL);
    if (!pool) TEST_END();
    test_find();
    test_fem(pool);
    test_mass_spring(pool);
    hy_pool_destroy(pool);
    TEST_END();
}
