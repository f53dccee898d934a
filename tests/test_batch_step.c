/* Small objects stepped together (solvers/batch_step.h): CG in lockstep,
 * one batch product per round over every object's elements, gives each
 * object the bits of its own hy_implicit_step:
 * - hy_cg_steps (the solve with its products left to the caller) equals
 *   hy_cg_solve_precond bit for bit;
 * - three FEM boxes (different sizes and damping, one partly fixed) and
 *   two mass-spring boxes, stepped twice by the host twin of the batch
 *   (device -1) on pools of 1 and 2 threads: positions, velocities, CG
 *   iterations and residuals bit-equal to each object's own step; the
 *   objects converge after different numbers of iterations, and the batch
 *   makes one product per round (the most iterations plus the start);
 *   both with the CG's vectors in the batch's memory (resident: the
 *   operations of solvers/cg_hd.h over the batch, scalars per object) and
 *   with each object's CG on its own (hy_cg_steps);
 * - a CG batch refuses a solve whose length is not 3 a vertex;
 * - on cuda:0: with no GPU refused (HY_ERR_UNSUPPORTED) with no object's
 *   state written; on a GPU the same bits, resident or not, the resident
 *   CG moving fewer bytes. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/pool.h"
#include "core/tetmesh.h"
#include "solvers/batch_step.h"
#include "solvers/cg_batch.h"
#include "solvers/fem.h"
#include "solvers/fem_cuda.h"
#include "solvers/massspring.h"
#include "test.h"

#define NOBJ 5
#define NFEM 3
#define DT 0.01
#define TOL 1e-8
#define MAXIT 200

static uint64_t g_rng = 0x9E3779B97F4A7C15ull;
static double rnd(void) { return hy_test_uniform(&g_rng); }

typedef struct obj {
    hy_tetmesh* mesh;
    void* model;
    const hy_implicit_ops* ops;
    int64_t n3;
    double *x0, *v0, *x1, *v1, *rhs, *dv;
    hy_cg_workspace* cg;
} obj;

static int same(const double* a, const double* b, int64_t n) { return memcmp(a, b, sizeof(double) * (size_t)n) == 0; }

static double* vec(int64_t n) { return calloc((size_t)n, sizeof(double)); }

/* Object k: a box of cells[k] cells, vertices at x == its left face fixed
 * when `fix`; FEM for k < NFEM, else mass-spring. Its start state perturbed. */
static int make(obj* o, int k) {
    static const int cells[NOBJ][3] = {{3, 1, 2}, {2, 2, 2}, {4, 1, 3}, {2, 1, 2}, {3, 2, 1}};
    double origin[3] = {0.5 * k, 0, 0}, size[3] = {0.3, 0.1, 0.2};
    memset(o, 0, sizeof *o);
    if (hy_tetmesh_box(origin, size, cells[k][0], cells[k][1], cells[k][2], &o->mesh)) return 0;
    int32_t nv = o->mesh->vertex_count, nfix = 0;
    int32_t* fixed = malloc(sizeof(int32_t) * (size_t)nv);
    for (int32_t v = 0; (k == 0 || k == 3) && v < nv; v++)
        if (o->mesh->positions[3 * v] == origin[0]) fixed[nfix++] = v;
    hy_status s;
    if (k < NFEM) {
        hy_fem_params par = {1e6 * (1 + k), 0.3, 1000, 0.1 * k, 0.01 * (k + 1)};
        s = hy_fem_model_create(o->mesh->positions, nv, o->mesh->tets, o->mesh->tet_count, &par, fixed, nfix,
                                (hy_fem_model**)&o->model);
        o->ops = &hy_fem_ops;
    } else {
        hy_ms_params par = {.stiffness = 5e3 * k, .damping = 0.02, .density = 1000, .damping_mass = 0.1};
        s = hy_ms_model_create(o->mesh->positions, nv, o->mesh->tets, o->mesh->tet_count, &par, fixed, nfix,
                               (hy_ms_model**)&o->model);
        o->ops = &hy_ms_ops;
    }
    free(fixed);
    CHECK_OK(s);
    if (s) return 0;
    o->n3 = 3 * (int64_t)nv;
    o->x0 = vec(o->n3), o->v0 = vec(o->n3), o->x1 = vec(o->n3), o->v1 = vec(o->n3);
    o->rhs = vec(o->n3), o->dv = vec(o->n3);
    o->cg = hy_cg_workspace_create(o->n3);
    for (int64_t i = 0; i < o->n3; i++) {
        o->x0[i] = o->mesh->positions[i] + (0.005 + 0.01 * k) * (rnd() - 0.5);
        o->v0[i] = (0.2 + k) * (rnd() - 0.5);
    }
    return o->cg != NULL;
}

static void drop(obj* o, int k) {
    if (k < NFEM) hy_fem_model_destroy(o->model);
    else hy_ms_model_destroy(o->model);
    hy_tetmesh_destroy(o->mesh);
    free(o->x0), free(o->v0), free(o->x1), free(o->v1), free(o->rhs), free(o->dv);
    hy_cg_workspace_destroy(o->cg);
}

typedef struct mv_ctx {
    const obj* o;
    hy_pool* pool;
} mv_ctx;

static void mv(void* ctx, const double* p, double* y) {
    mv_ctx* c = ctx;
    c->o->ops->apply(c->o->model, c->pool, p, y);
}

static void pc(void* ctx, const double* r, double* z) {
    mv_ctx* c = ctx;
    c->o->ops->precondition(c->o->model, c->pool, r, z);
}

/* hy_cg_steps driven by hand against hy_cg_solve_precond on a prepared
 * FEM object. */
static void test_steps(obj* o, hy_pool* pool) {
    const double g[3] = {0, -9.81, 0};
    CHECK_OK(o->ops->prepare(o->model, pool, o->x0, o->v0, DT, g, NULL, NULL, o->rhs));
    double *a = vec(o->n3), *b = vec(o->n3);
    hy_cg_workspace* w = hy_cg_workspace_create(o->n3);
    mv_ctx c = {o, pool};
    double ra = 0, rb = 0;
    int32_t ia = hy_cg_solve_precond(pool, o->n3, mv, &c, pc, &c, o->rhs, a, TOL, MAXIT, w, &ra);
    hy_cg_steps s;
    int more = hy_cg_steps_begin(&s, pool, o->n3, NULL, pc, &c, NULL, o->rhs, b, TOL, MAXIT, w);
    int32_t products = 0;
    while (more) {
        mv(&c, s.in, s.out);
        products++;
        more = hy_cg_steps_next(&s);
    }
    int32_t ib = hy_cg_steps_end(&s, &rb);
    CHECK(ia == ib && ia > 3 && products == ia + 1);
    CHECK(same(a, b, o->n3));
    CHECK(memcmp(&ra, &rb, sizeof ra) == 0 && rb <= TOL);
    /* a zero right-hand side: no product asked, x = 0 */
    memset(o->dv, 0, sizeof(double) * (size_t)o->n3);
    b[0] = 1.0;
    CHECK(hy_cg_steps_begin(&s, pool, o->n3, NULL, pc, &c, NULL, o->dv, b, TOL, MAXIT, w) == 0);
    CHECK(hy_cg_steps_end(&s, &rb) == 0 && rb == 0.0 && b[0] == 0.0);
    hy_cg_workspace_destroy(w);
    free(a), free(b);
}

/* Each object's own step, twice (the second from the first's end), into
 * x/v refs; iterations and residuals of both steps. */
static void reference(obj* o, hy_pool* pool, double* xr, double* vr, int32_t it[2], double res[2]) {
    const double g[3] = {0, -9.81, 0};
    double *x0 = vec(o->n3), *v0 = vec(o->n3);
    memcpy(x0, o->x0, sizeof(double) * (size_t)o->n3);
    memcpy(v0, o->v0, sizeof(double) * (size_t)o->n3);
    for (int step = 0; step < 2; step++) {
        CHECK_OK(hy_implicit_step(o->ops, o->model, pool, x0, v0, DT, g, NULL, MAXIT, TOL, xr, vr, o->rhs, o->dv,
                                  o->cg, NULL, &it[step], &res[step], o->ops->kind));
        memcpy(x0, xr, sizeof(double) * (size_t)o->n3);
        memcpy(v0, vr, sizeof(double) * (size_t)o->n3);
    }
    free(x0), free(v0);
}

static void batch_objects(obj* o, hy_batch_object* b, double** x0, double** v0) {
    for (int k = 0; k < NOBJ; k++) {
        memcpy(x0[k], o[k].x0, sizeof(double) * (size_t)o[k].n3);
        memcpy(v0[k], o[k].v0, sizeof(double) * (size_t)o[k].n3);
        b[k] = (hy_batch_object){o[k].ops, o[k].model, x0[k],    v0[k], o[k].x1, o[k].v1,
                                 o[k].rhs, o[k].dv,    o[k].cg, 0,     0.0};
    }
}

int main(void) {
    obj o[NOBJ];
    int ok = 1;
    for (int k = 0; k < NOBJ; k++) ok &= make(&o[k], k);
    CHECK(ok);
    if (!ok) TEST_END();
    hy_pool* pools[2] = {hy_pool_create(1), hy_pool_create(2)};
    test_steps(&o[1], pools[0]);

    double *xr[NOBJ], *vr[NOBJ], *x0[NOBJ], *v0[NOBJ], res[NOBJ][2];
    int32_t it[NOBJ][2];
    int32_t most = 0, least = MAXIT;
    for (int k = 0; k < NOBJ; k++) {
        xr[k] = vec(o[k].n3), vr[k] = vec(o[k].n3), x0[k] = vec(o[k].n3), v0[k] = vec(o[k].n3);
        reference(&o[k], pools[0], xr[k], vr[k], it[k], res[k]);
        most = it[k][1] > most ? it[k][1] : most;
        least = it[k][1] < least ? it[k][1] : least;
    }
    CHECK(least > 0 && least < most); /* the objects leave the lockstep at different rounds */
    hy_batch_object b[NOBJ];
    for (int run = 0; run < 4; run++) {
        int pi = run & 1, resident = run < 2;
        hy_batch_stepper* st = NULL;
        CHECK_OK(hy_batch_stepper_create(-1, &st));
        if (!st) break;
        hy_batch_stepper_set_resident(st, resident);
        batch_objects(o, b, x0, v0);
        const double g[3] = {0, -9.81, 0};
        int32_t failed = 0, bits = 1;
        int64_t rounds = 0, products = 0, want_products = 0;
        for (int step = 0; step < 2; step++) {
            CHECK_OK(hy_batch_step(st, b, NOBJ, pools[pi], DT, g, MAXIT, TOL, &failed));
            CHECK(failed == -1);
            for (int k = 0; k < NOBJ; k++) {
                bits &= b[k].iterations == it[k][step] && memcmp(&b[k].residual, &res[k][step], sizeof(double)) == 0;
                want_products += it[k][step] + 1;
                memcpy(x0[k], o[k].x1, sizeof(double) * (size_t)o[k].n3);
                memcpy(v0[k], o[k].v1, sizeof(double) * (size_t)o[k].n3);
            }
        }
        for (int k = 0; k < NOBJ; k++) bits &= same(o[k].x1, xr[k], o[k].n3) && same(o[k].v1, vr[k], o[k].n3);
        CHECK(bits);
        int64_t bytes = -1;
        hy_batch_stepper_counts(st, &rounds, &products, &bytes);
        CHECK(bytes == 0); /* on the host */
        int32_t most0 = 0;
        for (int k = 0; k < NOBJ; k++) most0 = it[k][0] > most0 ? it[k][0] : most0;
        CHECK(rounds == (int64_t)most0 + 1 + most + 1);
        CHECK(products == want_products);
        CHECK(hy_batch_stepper_resident_steps(st) == (resident ? 2 : 0));
        fprintf(stderr, "batch step (host twin, pool of %d, CG %s): %d objects, 2 steps, %lld batch products for %lld "
                        "objects' products, CG %d..%d iterations: bit-equal to each object's own step\n",
                pi + 1, resident ? "resident" : "per object", NOBJ, (long long)rounds, (long long)products, least,
                most);
        hy_batch_stepper_destroy(st);
    }

    /* a solve of 4 entries is not one of vertices */
    {
        hy_cg_batch* cb = NULL;
        CHECK_OK(hy_cg_batch_create(-1, &cb));
        const int64_t n_start[3] = {0, 3, 7};
        double v[7] = {0};
        CHECK(hy_cg_batch_load(cb, 2, n_start, v, v, v) == HY_ERR_INVALID_ARG);
        hy_cg_batch_destroy(cb);
    }

    /* cuda:0: refused with no GPU, the object's state untouched; the CPU's bits on one */
    hy_batch_stepper* st = NULL;
    CHECK_OK(hy_batch_stepper_create(0, &st));
    CHECK(hy_batch_stepper_create(-2, &(hy_batch_stepper*){NULL}) == HY_ERR_INVALID_ARG);
    batch_objects(o, b, x0, v0);
    for (int k = 0; k < NOBJ; k++) memset(o[k].x1, 0, sizeof(double) * (size_t)o[k].n3);
    const double g[3] = {0, -9.81, 0};
    int32_t failed = 0;
    hy_status s = hy_batch_step(st, b, NOBJ, pools[1], DT, g, MAXIT, TOL, &failed);
    if (hy_fem_gpu_count() == 0) {
        CHECK(s == HY_ERR_UNSUPPORTED && failed == -1);
        int zero = 1;
        for (int k = 0; k < NOBJ; k++)
            for (int64_t i = 0; i < o[k].n3; i++) zero &= o[k].x1[i] == 0.0;
        CHECK(zero);
    } else {
        /* resident (the default), then each object's CG on the host */
        int64_t bytes[2] = {0, 0};
        for (int mode = 0; mode < 2; mode++) {
            if (mode) {
                hy_batch_stepper_destroy(st);
                st = NULL;
                CHECK_OK(hy_batch_stepper_create(0, &st));
                hy_batch_stepper_set_resident(st, 0);
                batch_objects(o, b, x0, v0);
                s = hy_batch_step(st, b, NOBJ, pools[1], DT, g, MAXIT, TOL, &failed);
            }
            CHECK_OK(s);
            int bits = 1;
            for (int k = 0; k < NOBJ; k++)
                bits &= b[k].iterations == it[k][0] && memcmp(&b[k].residual, &res[k][0], sizeof(double)) == 0;
            CHECK(bits);
            hy_batch_stepper_counts(st, NULL, NULL, &bytes[mode]);
            CHECK(hy_batch_stepper_resident_steps(st) == (mode ? 0 : 1));
            fprintf(stderr, "batch step on cuda:0 (CG %s): %d objects, the host's iterations and residuals bit for "
                            "bit, %lld bytes moved\n",
                    mode ? "per object" : "resident", NOBJ, (long long)bytes[mode]);
        }
        CHECK(bytes[0] > 0 && bytes[0] < bytes[1]);
    }
    hy_batch_stepper_destroy(st);
    for (int k = 0; k < NOBJ; k++) {
        free(xr[k]), free(vr[k]), free(x0[k]), free(v0[k]);
        drop(&o[k], k);
    }
    hy_pool_destroy(pools[0]);
    hy_pool_destroy(pools[1]);
    TEST_END();
}
