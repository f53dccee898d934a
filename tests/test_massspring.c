/* Tests the volumetric mass-spring objects (solvers/massspring.c) on grid
 * meshes (core/tetmesh.c): the springs are the distinct tet edges; a block
 * at rest stays exactly at rest; the energy of a free undamped block never
 * grows over 1,000 steps; a tetrahedron hanging from three fixed vertices
 * settles at the stretch its stiffness and mass give; momentum of a free
 * block is kept; bad input is refused with the element or parameter named;
 * bit-identical steps with 1 and 2 threads; a vertex held on a floor that
 * the object would pull away is held for the step and let go for the next
 * (hy_implicit_held). */
#include <stdint.h>
#include <string.h>

#include "core/error.h"
#include "core/tetmesh.h"
#include "solvers/cg.h"
#include "solvers/implicit.h"
#include "solvers/massspring.h"
#include "test.h"

static hy_tetmesh* box(double lx, double ly, double lz, int nx, int ny, int nz) {
    double o[3] = {0, 0, 0}, s[3] = {lx, ly, lz};
    hy_tetmesh* m = NULL;
    CHECK_OK(hy_tetmesh_box(o, s, nx, ny, nz, &m));
    return m;
}

static hy_ms_params params(double k, double density) {
    hy_ms_params p = {.stiffness = k, .density = density};
    return p;
}

static int has(const char* needle) { return strstr(hy_last_error(), needle) != NULL; }

/* A Kuhn cell has 19 distinct edges (12 of the cube, 6 face diagonals, the
 * body diagonal); a 2x1x1 box, whose cells share a face, 33 (20 cube edges,
 * 11 face diagonals, 2 body diagonals). Masses sum to density x volume. */
static void test_springs(void) {
    hy_tetmesh* one = box(1, 1, 1, 1, 1, 1), *two = box(2, 1, 1, 2, 1, 1);
    if (!one || !two) return;
    hy_ms_params p = params(100, 10);
    hy_ms_model *a = NULL, *b = NULL;
    CHECK_OK(hy_ms_model_create(one->positions, one->vertex_count, one->tets, one->tet_count, &p, NULL, 0, &a));
    CHECK_OK(hy_ms_model_create(two->positions, two->vertex_count, two->tets, two->tet_count, &p, NULL, 0, &b));
    if (a && b) {
        CHECK(hy_ms_spring_count(a) == 19);
        CHECK(hy_ms_spring_count(b) == 33);
        double total = 0;
        for (int32_t v = 0; v < hy_ms_vertex_count(b); v++) total += hy_ms_masses(b)[v];
        CHECK_NEAR(total, 20.0, 1e-12);
        /* the body diagonal of the unit cell: length sqrt 3 */
        double longest = 0;
        for (int32_t s = 0; s < hy_ms_spring_count(a); s++) longest = fmax(longest, hy_ms_rest_lengths(a)[s]);
        CHECK_NEAR(longest, sqrt(3.0), 1e-15);
        const int32_t* sp = hy_ms_springs(b);
        int ordered = 1;
        for (int32_t s = 0; s < hy_ms_spring_count(b); s++) ordered &= sp[2 * s] < sp[2 * s + 1];
        CHECK(ordered);
    }
    hy_ms_model_destroy(a);
    hy_ms_model_destroy(b);
    hy_tetmesh_destroy(one);
    hy_tetmesh_destroy(two);
}

/* No load, no motion: exactly the rest state after 50 steps, with and
 * without fixed vertices. */
static void test_rest(hy_pool* pool) {
    hy_tetmesh* mesh = box(1.0, 0.5, 0.3, 4, 3, 2);
    if (!mesh) return;
    int32_t nv = mesh->vertex_count, fixed[2] = {0, 5};
    hy_ms_params p = params(500, 300);
    p.damping = 0.01, p.damping_mass = 0.1;
    for (int f = 0; f < 2; f++) {
        hy_ms_model* m = NULL;
        CHECK_OK(hy_ms_model_create(mesh->positions, nv, mesh->tets, mesh->tet_count, &p, fixed, 2 * f, &m));
        if (!m) break;
        double* x = malloc(sizeof(double) * 3 * (size_t)nv);
        double* v = calloc(3 * (size_t)nv, sizeof(double));
        memcpy(x, mesh->positions, sizeof(double) * 3 * (size_t)nv);
        double g[3] = {0, 0, 0};
        for (int s = 0; s < 50; s++) CHECK_OK(hy_ms_solve(m, pool, x, v, 0.01, g, NULL, 100, 1e-10, x, v, NULL));
        double moved = 0, speed = 0;
        for (int32_t k = 0; k < 3 * nv; k++)
            moved = fmax(moved, fabs(x[k] - mesh->positions[k])), speed = fmax(speed, fabs(v[k]));
        CHECK(moved == 0.0 && speed == 0.0);
        free(x);
        free(v);
        hy_ms_model_destroy(m);
    }
    hy_tetmesh_destroy(mesh);
}

/* A free block, stretched 10% along x and spinning, no damping, no
 * gravity: backward Euler may only lose energy (spring + kinetic). */
static void test_energy(hy_pool* pool) {
    hy_tetmesh* mesh = box(0.5, 0.5, 0.5, 2, 2, 2);
    if (!mesh) return;
    int32_t nv = mesh->vertex_count;
    hy_ms_params p = params(2000, 1000);
    hy_ms_model* m = NULL;
    CHECK_OK(hy_ms_model_create(mesh->positions, nv, mesh->tets, mesh->tet_count, &p, NULL, 0, &m));
    if (!m) return;
    double* x = malloc(sizeof(double) * 3 * (size_t)nv);
    double* v = malloc(sizeof(double) * 3 * (size_t)nv);
    for (int32_t k = 0; k < 3 * nv; k++) {
        x[k] = mesh->positions[k] * (k % 3 == 0 ? 1.1 : 1.0);
        v[k] = (k % 3 == 1) ? 0.5 * mesh->positions[k - 1] : 0.0;
    }
    double zero[3] = {0, 0, 0};
    double e0 = hy_ms_spring_energy(m, x) + hy_ms_kinetic_energy(m, v), prev = e0;
    int gained = 0;
    for (int s = 0; s < 1000; s++) {
        CHECK_OK(hy_ms_solve(m, pool, x, v, 0.002, zero, NULL, 500, 1e-12, x, v, NULL));
        double e = hy_ms_spring_energy(m, x) + hy_ms_kinetic_energy(m, v);
        if (e > prev * (1 + 1e-9)) gained++;
        prev = e;
    }
    fprintf(stderr, "energy: %.6e J -> %.6e J over 1000 steps, %d steps gained\n", e0, prev, gained);
    CHECK(e0 > 0.1); /* the stretch and the spin hold energy to lose */
    CHECK(gained == 0);
    CHECK(prev <= e0);
    free(x);
    free(v);
    hy_ms_model_destroy(m);
    hy_tetmesh_destroy(mesh);
}

/* A tetrahedron hanging from its three top vertices (an equilateral
 * triangle of side s, circumradius r = s / sqrt 3, fixed) with its apex at
 * depth y0 below the centroid. The apex has a quarter of the mass and
 * sinks straight down (symmetry) to the depth y where its three springs
 * carry its weight: 3 k (l - L) y / l = m g, l = sqrt(r^2 + y^2),
 * L = sqrt(r^2 + y0^2). That equation is solved here by bisection; the
 * simulation, heavily damped, must settle within 1% of its stretch y - y0
 * (measured: far nearer; it is the static solution of the same forces). */
static void test_hanging(hy_pool* pool) {
    const double s = 0.3, y0 = 0.2, k = 400.0, rho = 2000.0, g = 9.81;
    const double r = s / sqrt(3.0);
    /* apex first, then the triangle counter-clockwise seen from above: a
     * positive element */
    double x[12] = {0, 0, -y0};
    for (int i = 0; i < 3; i++) {
        double ang = 2.0 * 3.14159265358979323846 * i / 3.0;
        x[3 + 3 * i] = r * cos(ang), x[4 + 3 * i] = r * sin(ang), x[5 + 3 * i] = 0.0;
    }
    int32_t tet[4] = {0, 1, 2, 3}, fixed[3] = {1, 2, 3};
    hy_ms_params p = params(k, rho);
    p.damping = 0.05, p.damping_mass = 2.0;
    hy_ms_model* m = NULL;
    CHECK_OK(hy_ms_model_create(x, 4, tet, 1, &p, fixed, 3, &m));
    if (!m) return;
    double mass = hy_ms_masses(m)[0];
    /* the tetrahedron's volume: base area sqrt(3)/4 s^2, height y0 */
    CHECK_NEAR(mass, 0.25 * rho * (sqrt(3.0) / 4.0 * s * s) * y0 / 3.0, 1e-12);
    const double L = sqrt(r * r + y0 * y0);
    double lo = y0, hi = y0 + 10.0;
    for (int it = 0; it < 200; it++) {
        double y = 0.5 * (lo + hi), l = sqrt(r * r + y * y);
        if (3.0 * k * (l - L) * y / l < mass * g) lo = y;
        else hi = y;
    }
    double expect = 0.5 * (lo + hi) - y0;
    double v[12] = {0}, grav[3] = {0, 0, -g};
    for (int step = 0; step < 400; step++)
        CHECK_OK(hy_ms_solve(m, pool, x, v, 0.02, grav, NULL, 50, 1e-12, x, v, NULL));
    double got = -x[2] - y0;
    fprintf(stderr, "hanging tetrahedron: apex mass %.6g kg, stretch %.9g m, expected %.9g m (%.2e relative)\n",
            mass, got, expect, fabs(got - expect) / expect);
    CHECK(expect > 0.01); /* a stretch worth measuring */
    CHECK(fabs(got - expect) < 0.01 * expect);
    CHECK(fabs(x[0]) < 1e-12 && fabs(x[1]) < 1e-12); /* straight down */
    hy_ms_model_destroy(m);
}

/* A tetrahedron on a floor (z = 0) with its bottom vertex held, the
 * whole moving at 1 m/s along z: lifting off, the held vertex's constraint
 * pulls it down (the springs drag it up): the step still holds it (normal
 * velocity 0) and marks it to be let go in the next; pressing down, it
 * pushes and stays held. */
static void test_let_go(hy_pool* pool) {
    double x[12] = {0, 0, 0, 0.3, 0, 0.2, -0.15, 0.26, 0.2, -0.15, -0.26, 0.2};
    int32_t tet[4] = {0, 1, 2, 3};
    hy_ms_params p = params(400.0, 2000.0);
    hy_ms_model* m = NULL;
    CHECK_OK(hy_ms_model_create(x, 4, tet, 1, &p, NULL, 0, &m));
    if (!m) return;
    double rhs[12], dv[12], x1[12], v1[12], scratch[64], g[3] = {0, 0, 0};
    CHECK(hy_implicit_held_scratch_size(4) <= 64);
    hy_cg_workspace* cg = hy_cg_workspace_create(12);
    for (int dir = 1; dir >= -1; dir -= 2) {
        double v[12] = {0}, normal[12] = {0, 0, 1};
        for (int k = 0; k < 4; k++) v[3 * k + 2] = dir;
        uint8_t let_go[4] = {0};
        hy_implicit_held held = {normal, scratch, 0, let_go};
        int32_t it = 0;
        CHECK_OK(hy_implicit_step(&hy_ms_ops, m, pool, x, v, 0.01, g, NULL, 100, 1e-12, x1, v1, rhs, dv, cg, &held, &it,
                                  NULL, "test"));
        CHECK(it > 0);
        CHECK(fabs(v1[2]) < 1e-12); /* held this step either way */
        CHECK(held.released == (dir > 0));
        CHECK(let_go[0] == (dir > 0) && !let_go[1] && !let_go[2] && !let_go[3]);
        CHECK(dir > 0 ? v1[11] > 0.5 : v1[11] < 0.0); /* the rest keeps going */
    }
    hy_cg_workspace_destroy(cg);
    hy_ms_model_destroy(m);
}

/* A free block with random velocities and spring damping: its momentum
 * changes only by the CG residual (tolerance 1e-12). */
static void test_momentum(hy_pool* pool) {
    hy_tetmesh* mesh = box(0.4, 0.3, 0.3, 4, 3, 3);
    if (!mesh) return;
    int32_t nv = mesh->vertex_count;
    hy_ms_params p = params(1000, 800);
    p.damping = 0.02;
    hy_ms_model* m = NULL;
    CHECK_OK(hy_ms_model_create(mesh->positions, nv, mesh->tets, mesh->tet_count, &p, NULL, 0, &m));
    if (!m) return;
    double* x = malloc(sizeof(double) * 3 * (size_t)nv);
    double* v = malloc(sizeof(double) * 3 * (size_t)nv);
    uint64_t st = 12345;
    for (int32_t k = 0; k < 3 * nv; k++) {
        st = st * 6364136223846793005ull + 1442695040888963407ull;
        x[k] = mesh->positions[k];
        v[k] = (double)(st >> 11) * (2.0 / 9007199254740992.0) - 1.0;
    }
    const double* mass = hy_ms_masses(m);
    double p0[3] = {0}, p1[3] = {0}, scale = 0, zero[3] = {0, 0, 0};
    for (int32_t i = 0; i < nv; i++)
        for (int a = 0; a < 3; a++) p0[a] += mass[i] * v[3 * i + a], scale += mass[i] * fabs(v[3 * i + a]);
    for (int s = 0; s < 50; s++) CHECK_OK(hy_ms_solve(m, pool, x, v, 0.005, zero, NULL, 1000, 1e-12, x, v, NULL));
    for (int32_t i = 0; i < nv; i++)
        for (int a = 0; a < 3; a++) p1[a] += mass[i] * v[3 * i + a];
    for (int a = 0; a < 3; a++) CHECK_NEAR(p1[a], p0[a], 1e-9 * scale);
    free(x);
    free(v);
    hy_ms_model_destroy(m);
    hy_tetmesh_destroy(mesh);
}

static void test_bad_input(void) {
    /* a sixth vertex (2, 2, 2) that no tetrahedron uses */
    double x[18] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -1, 2, 2, 2};
    int32_t good[8] = {0, 1, 2, 3, 0, 2, 1, 4}, inverted[8] = {0, 1, 2, 3, 0, 1, 2, 4};
    hy_ms_params p = params(100, 10);
    hy_ms_model* m = NULL;
    CHECK(hy_ms_model_create(x, 5, inverted, 2, &p, NULL, 0, &m) == HY_ERR_INVALID_ARG && m == NULL);
    CHECK(has("mass-spring: tetrahedron 1 (vertices 0 1 2 4) is inverted"));
    int32_t flat[8] = {0, 1, 2, 3, 0, 2, 1, 2};
    CHECK(hy_ms_model_create(x, 5, flat, 2, &p, NULL, 0, &m) == HY_ERR_INVALID_ARG && has("tetrahedron 1"));
    CHECK(hy_ms_model_create(x, 6, good, 2, &p, NULL, 0, &m) == HY_ERR_INVALID_ARG && has("vertex 5 belongs to no"));
    int32_t fx[2] = {0, 9};
    CHECK(hy_ms_model_create(x, 5, good, 2, &p, fx, 2, &m) == HY_ERR_INVALID_ARG && has("fixed[1] = 9"));
    hy_ms_params bad = p;
    bad.stiffness = 0;
    CHECK(hy_ms_model_create(x, 5, good, 2, &bad, NULL, 0, &m) == HY_ERR_INVALID_ARG && has("stiffness"));
    bad = p, bad.damping = -1;
    CHECK(hy_ms_model_create(x, 5, good, 2, &bad, NULL, 0, &m) == HY_ERR_INVALID_ARG && has("damping"));
    CHECK_OK(hy_ms_model_create(x, 5, good, 2, &p, NULL, 0, &m));
    hy_pool* pool = hy_pool_create(1);
    double v[15] = {0}, g[3] = {0, 0, 0};
    CHECK(hy_ms_solve(m, pool, x, v, -1.0, g, NULL, 10, 1e-6, x, v, NULL) == HY_ERR_INVALID_ARG && has("dt"));
    hy_pool_destroy(pool);
    hy_ms_model_destroy(m);
}

/* A clamped bar swinging under gravity for 20 steps with a capped CG:
 * the same bits with 1 and 2 threads (several blocks of springs and
 * vertices). */
static void test_threads(void) {
    hy_tetmesh* mesh = box(2.0, 0.4, 0.4, 20, 8, 8);
    if (!mesh) return;
    int32_t nv = mesh->vertex_count, nfix = 0;
    int32_t* fixed = malloc(sizeof(int32_t) * (size_t)nv);
    for (int32_t v = 0; v < nv; v++)
        if (mesh->positions[3 * v] == 0.0) fixed[nfix++] = v;
    hy_ms_params p = params(3000, 600);
    p.damping = 0.01, p.damping_mass = 0.1;
    double* out[2] = {NULL, NULL};
    for (int t = 0; t < 2; t++) {
        hy_ms_model* m = NULL;
        CHECK_OK(hy_ms_model_create(mesh->positions, nv, mesh->tets, mesh->tet_count, &p, fixed, nfix, &m));
        if (!m) break;
        hy_pool* pool = hy_pool_create(t + 1);
        double* x = malloc(sizeof(double) * 3 * (size_t)nv);
        double* v = calloc(6 * (size_t)nv, sizeof(double));
        memcpy(x, mesh->positions, sizeof(double) * 3 * (size_t)nv);
        double grav[3] = {0, -9.81, 1.0};
        for (int s = 0; s < 20; s++) CHECK_OK(hy_ms_solve(m, pool, x, v, 0.01, grav, NULL, 30, 1e-8, x, v, NULL));
        memcpy(v + 3 * nv, x, sizeof(double) * 3 * (size_t)nv);
        out[t] = v;
        free(x);
        hy_pool_destroy(pool);
        hy_ms_model_destroy(m);
    }
    if (out[0] && out[1]) {
        CHECK(memcmp(out[0], out[1], sizeof(double) * 6 * (size_t)nv) == 0);
        CHECK(fabs(out[0][3 * nv + 3 * (nv - 1) + 1] - 0.4) > 1e-3); /* it did move */
    }
    free(out[0]);
    free(out[1]);
    free(fixed);
    hy_tetmesh_destroy(mesh);
}

int main(void) {
    hy_pool* pool = hy_pool_create(2);
    test_springs();
    test_bad_input();
    test_rest(pool);
    test_energy(pool);
    test_hanging(pool);
    test_momentum(pool);
    test_let_go(pool);
    test_threads();
    hy_pool_destroy(pool);
    TEST_END();
}
