/* Tests the interactions between deformable objects and the coupled step
 * (solvers/interaction.c): the coupling forces of every kind of pair sum to
 * zero and their stiffness is their exact derivative; a mass-spring block
 * attached under a clamped FEM block hangs from it with the gap and the
 * pull its weight gives; a free FEM block and a free mass-spring block
 * glued together keep their joint momentum, and in free flight take no CG
 * iteration (the solve's start is exact there); a block falling onto a fixed
 * slab rests on its contact pairs at their gap; bad pairs are refused
 * with the pair named; the same bits with 1 and 2 threads. */
#include <stdint.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/tetmesh.h"
#include "solvers/fem.h"
#include "solvers/interaction.h"
#include "solvers/massspring.h"
#include "test.h"

static uint64_t rng_state = 0x2545F4914F6CDD1Dull;
static double rnd(void) { /* uniform in [-1, 1), fixed seed */
    rng_state = rng_state * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(rng_state >> 11) * (2.0 / 9007199254740992.0) - 1.0;
}

static int has(const char* needle) { return strstr(hy_last_error(), needle) != NULL; }

static hy_tetmesh* box_at(double x, double y, double z, double size, int n) {
    double o[3] = {x, y, z}, s[3] = {size, size, size};
    hy_tetmesh* m = NULL;
    CHECK_OK(hy_tetmesh_box(o, s, n, n, n, &m));
    return m;
}

/* Random pairs of every kind over random states of two 12-vertex objects. */
static void random_pairs(hy_interaction_pair* p, int count, int nv) {
    for (int k = 0; k < count; k++) {
        memset(p + k, 0, sizeof *p);
        p[k].kind = k % 2 ? HY_PAIR_CONTACT : HY_PAIR_ATTACH;
        p[k].vertex = k % nv;
        p[k].count = 1 + k % 4;
        double sum = 0;
        for (int j = 0; j < p[k].count; j++) {
            p[k].b[j] = (3 * k + 5 * j) % nv;
            p[k].w[j] = 1.5 + rnd();
            sum += p[k].w[j];
        }
        for (int j = 0; j < p[k].count; j++) p[k].w[j] /= sum;
        /* the weights must sum to 1 within 1e-9: rescaling leaves ~1e-16 */
        p[k].stiffness = 100.0 * (2.0 + rnd());
        double n[3] = {rnd(), rnd(), rnd()}, l = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        for (int c = 0; c < 3; c++) p[k].normal[c] = n[c] / l;
        p[k].gap = 0.3 * (1.0 + rnd());
    }
}

/* Forces of A's and B's sides sum to zero per component; K p is minus the
 * change of the forces under a displacement p (exact: the forces are linear
 * in the positions while the acting set stays); a contact acts only closer
 * than its gap, with k (h - n.u) n. */
static void test_forces(void) {
    enum { NV = 12, NP = 40 };
    hy_interaction_pair pairs[NP];
    random_pairs(pairs, NP, NV);
    hy_interaction* ia = NULL;
    CHECK_OK(hy_interaction_create(0, 1, NV, NV, pairs, NP, &ia));
    if (!ia) return;
    double xa[3 * NV], xb[3 * NV], fa[3 * NV] = {0}, fb[3 * NV] = {0};
    for (int k = 0; k < 3 * NV; k++) xa[k] = rnd(), xb[k] = rnd();
    hy_interaction_add_forces(ia, 0, xa, xb, fa);
    hy_interaction_add_forces(ia, 1, xa, xb, fb);
    double sum[3] = {0}, scale = 0;
    for (int v = 0; v < NV; v++)
        for (int c = 0; c < 3; c++) sum[c] += fa[3 * v + c] + fb[3 * v + c], scale += fabs(fa[3 * v + c]);
    CHECK(scale > 100.0); /* forces there are */
    for (int c = 0; c < 3; c++) CHECK(fabs(sum[c]) < 1e-13 * scale);

    /* the derivative: a displacement small enough that no contact changes
     * side (checked), forces linear in it */
    double pa[3 * NV], pb[3 * NV], xa2[3 * NV], xb2[3 * NV];
    for (int k = 0; k < 3 * NV; k++) pa[k] = 1e-6 * rnd(), pb[k] = 1e-6 * rnd(), xa2[k] = xa[k] + pa[k],
                                     xb2[k] = xb[k] + pb[k];
    hy_interaction_linearize(ia, xa, xb);
    for (int s = 0; s < 2; s++) {
        double f0[3 * NV] = {0}, f1[3 * NV] = {0}, kp[3 * NV] = {0}, err = 0, mag = 0;
        hy_interaction_add_forces(ia, s, xa, xb, f0);
        hy_interaction_add_forces(ia, s, xa2, xb2, f1);
        hy_interaction_add_product(ia, s, 1.0, NULL, NULL, pa, pb, kp);
        for (int k = 0; k < 3 * NV; k++) err = fmax(err, fabs(kp[k] + (f1[k] - f0[k]))), mag = fmax(mag, fabs(kp[k]));
        CHECK(mag > 1e-5);
        CHECK(err < 1e-9 * mag);
    }

    /* one contact along +z with gap 0.1: apart, no force; 0.04 inside the
     * gap, k 0.04 along +z on A and -w_j of it on B */
    hy_interaction_pair c = {.kind = HY_PAIR_CONTACT, .vertex = 0, .count = 2, .b = {0, 1}, .w = {0.25, 0.75},
                             .stiffness = 50.0, .normal = {0, 0, 1}, .gap = 0.1};
    CHECK_OK(hy_interaction_set_pairs(ia, &c, 1));
    double ya[3] = {0, 0, 0.2}, yb[6] = {0, 0, 0, 0, 0, 0}, ga[3] = {0}, gb[6] = {0};
    hy_interaction_add_forces(ia, 0, ya, yb, ga);
    CHECK(ga[0] == 0 && ga[1] == 0 && ga[2] == 0);
    ya[2] = 0.06;
    hy_interaction_add_forces(ia, 0, ya, yb, ga);
    hy_interaction_add_forces(ia, 1, ya, yb, gb);
    CHECK_NEAR(ga[2], 50.0 * 0.04, 1e-13);
    CHECK_NEAR(gb[2], -0.25 * 50.0 * 0.04, 1e-13);
    CHECK_NEAR(gb[5], -0.75 * 50.0 * 0.04, 1e-13);
    CHECK(ga[0] == 0 && ga[1] == 0 && gb[0] == 0 && gb[3] == 0);
    hy_interaction_destroy(ia);
}

static void test_bad_input(void) {
    hy_interaction_pair p = {.kind = HY_PAIR_ATTACH, .vertex = 0, .count = 2, .b = {0, 1}, .w = {0.5, 0.6},
                             .stiffness = 10.0};
    hy_interaction* ia = NULL;
    CHECK(hy_interaction_create(0, 1, 4, 4, &p, 1, &ia) == HY_ERR_INVALID_ARG && ia == NULL);
    CHECK(has("pair 0 (vertex 0 of A): weights must sum to 1"));
    p.w[1] = 0.5, p.b[1] = 4;
    CHECK(hy_interaction_create(0, 1, 4, 4, &p, 1, &ia) == HY_ERR_INVALID_ARG && has("vertex of B out of range"));
    p.b[1] = 1, p.stiffness = -1;
    CHECK(hy_interaction_create(0, 1, 4, 4, &p, 1, &ia) == HY_ERR_INVALID_ARG && has("stiffness"));
    p.stiffness = 10.0, p.kind = HY_PAIR_CONTACT, p.normal[0] = 2.0;
    CHECK(hy_interaction_create(0, 1, 4, 4, &p, 1, &ia) == HY_ERR_INVALID_ARG && has("unit length"));
    p.kind = HY_PAIR_ATTACH;
    CHECK(hy_interaction_create(2, 2, 4, 4, &p, 1, &ia) == HY_ERR_INVALID_ARG && has("two different objects"));
    CHECK_OK(hy_interaction_create(0, 1, 4, 4, &p, 1, &ia));
    p.vertex = 9;
    CHECK(hy_interaction_set_pairs(ia, &p, 1) == HY_ERR_INVALID_ARG && hy_interaction_pair_count(ia) == 1);
    /* an interaction whose object is not in the list */
    double x[12] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1}, v[12] = {0}, g[3] = {0, 0, 0};
    int32_t tet[4] = {0, 1, 2, 3};
    hy_ms_params mp = {.stiffness = 10, .density = 10};
    hy_ms_model* m = NULL;
    CHECK_OK(hy_ms_model_create(x, 4, tet, 1, &mp, NULL, 0, &m));
    hy_pool* pool = hy_pool_create(1);
    hy_coupled_object o = {&hy_ms_ops, m, x, v, NULL, x, v, NULL, NULL};
    CHECK(hy_coupled_solve(pool, &o, 1, &ia, 1, 0.01, g, 10, 1e-6, NULL) == HY_ERR_INVALID_ARG &&
          has("interaction 0 names an object outside"));
    hy_pool_destroy(pool);
    hy_ms_model_destroy(m);
    hy_interaction_destroy(ia);
}

/* Two blocks of side 0.2 m (n cells per side): A, FEM, clamped at its top
 * face; B, mass-spring, under it, its top face glued to A's bottom face by
 * attachment pairs of stiffness k_attach. Steps with mass damping until
 * static. out_state (optional) gets both objects' x and v. */
typedef struct hang_result {
    int32_t pairs;
    double max_gap, pull, weight, sag;
} hang_result;

static void hang(hy_pool* pool, int n, int steps, double* out_state, hang_result* r) {
    const double size = 0.2, k_attach = 2e5, g = 9.81;
    memset(r, 0, sizeof *r);
    hy_tetmesh *ma = box_at(0, 0, 0, size, n), *mb = box_at(0, 0, -size, size, n);
    if (!ma || !mb) return;
    int32_t na = ma->vertex_count, nb = mb->vertex_count, nfix = 0;
    int32_t* fixed = malloc(sizeof(int32_t) * (size_t)na);
    for (int32_t v = 0; v < na; v++)
        if (ma->positions[3 * v + 2] == size) fixed[nfix++] = v;
    hy_fem_params fp = {.young = 2e6, .poisson = 0.3, .density = 1000, .damping_mass = 8.0};
    hy_ms_params mp = {.stiffness = 2e4, .density = 1000, .damping_mass = 8.0};
    hy_fem_model* fa = NULL;
    hy_ms_model* fb = NULL;
    CHECK_OK(hy_fem_model_create(ma->positions, na, ma->tets, ma->tet_count, &fp, fixed, nfix, &fa));
    CHECK_OK(hy_ms_model_create(mb->positions, nb, mb->tets, mb->tet_count, &mp, NULL, 0, &fb));
    hy_interaction_pair* pairs = NULL;
    int32_t np = 0;
    CHECK_OK(hy_interaction_attach_coincident(ma->positions, na, mb->positions, nb, 1e-9, k_attach, &pairs, &np));
    hy_interaction* ia = NULL;
    CHECK_OK(hy_interaction_create(0, 1, na, nb, pairs, np, &ia));
    double* xa = malloc(sizeof(double) * 3 * (size_t)na);
    double* va = calloc(3 * (size_t)na, sizeof(double));
    double* xb = malloc(sizeof(double) * 3 * (size_t)nb);
    double* vb = calloc(3 * (size_t)nb, sizeof(double));
    memcpy(xa, ma->positions, sizeof(double) * 3 * (size_t)na);
    memcpy(xb, mb->positions, sizeof(double) * 3 * (size_t)nb);
    if (fa && fb && ia) {
        hy_coupled_object obj[2] = {{&hy_fem_ops, fa, xa, va, NULL, xa, va, NULL, NULL},
                                      {&hy_ms_ops, fb, xb, vb, NULL, xb, vb, NULL, NULL}};
        double grav[3] = {0, 0, -g};
        hy_coupled_stats st = {0};
        for (int s = 0; s < steps; s++) CHECK_OK(hy_coupled_solve(pool, obj, 2, &ia, 1, 0.01, grav, 400, 1e-10, &st));
        r->pairs = np;
        for (int32_t k = 0; k < np; k++) {
            const double *p = xa + 3 * pairs[k].vertex, *q = xb + 3 * pairs[k].b[0];
            double d2 = 0;
            for (int c = 0; c < 3; c++) d2 += (p[c] - q[c]) * (p[c] - q[c]);
            r->max_gap = fmax(r->max_gap, sqrt(d2));
            r->pull += k_attach * (p[2] - q[2]);
        }
        for (int32_t v = 0; v < nb; v++) r->weight += hy_ms_masses(fb)[v] * g;
        r->sag = mb->positions[2] - xb[2]; /* B's lowest corner (vertex 0) */
        fprintf(stderr, "hang (%d cells): %d pairs, max gap %.3e m, pull %.6f N, weight %.6f N, sag %.4e m, "
                "last step %d CG iterations\n", n, np, r->max_gap, r->pull, r->weight, r->sag, st.cg_iterations);
        if (out_state) {
            memcpy(out_state, xa, sizeof(double) * 3 * (size_t)na);
            memcpy(out_state + 3 * na, va, sizeof(double) * 3 * (size_t)na);
            memcpy(out_state + 6 * na, xb, sizeof(double) * 3 * (size_t)nb);
            memcpy(out_state + 6 * na + 3 * nb, vb, sizeof(double) * 3 * (size_t)nb);
        }
    }
    free(xa), free(va), free(xb), free(vb), free(fixed);
    hy_mem_free(pairs);
    hy_interaction_destroy(ia);
    hy_fem_model_destroy(fa);
    hy_ms_model_destroy(fb);
    hy_tetmesh_destroy(ma);
    hy_tetmesh_destroy(mb);
}

/* Statics: B's weight (8 kg) hangs on the attachments: their pull
 * sum k (x_A - x_B)_z matches it within 1%, and no pair opens more than
 * the 16 pairs' share of the weight over k would (about 2.5e-5 m) allows,
 * to a factor of 4 for the uneven share of corners and edges. */
static void test_hang(hy_pool* pool) {
    hang_result r;
    hang(pool, 3, 300, NULL, &r);
    CHECK(r.pairs == 16);
    CHECK(r.weight > 78.0 && r.weight < 79.0);
    CHECK(fabs(r.pull - r.weight) < 0.01 * r.weight);
    CHECK(r.max_gap < 4.0 * r.weight / 16.0 / 2e5);
    CHECK(r.sag > 10.0 * r.max_gap); /* B stretched and A bent under it (6.8e-4 m measured): it did hang */
}

/* A free FEM block (A) and a free mass-spring block (B) of side 0.2 m and
 * 2 cells, glued face to face by 9 attachment pairs of 1e4 N/m, at rest
 * shape; the velocities are left to the caller. ok is 0 when a part could
 * not be made. */
typedef struct glued_pair {
    hy_tetmesh *ma, *mb;
    int32_t na, nb, np;
    hy_fem_model* fa;
    hy_ms_model* fb;
    hy_interaction_pair* pairs;
    hy_interaction* ia;
    double *xa, *va, *xb, *vb;
    int ok;
} glued_pair;

static void glued_make(glued_pair* g) {
    memset(g, 0, sizeof *g);
    g->ma = box_at(0, 0, 0, 0.2, 2);
    g->mb = box_at(0.2, 0, 0, 0.2, 2);
    if (!g->ma || !g->mb) return;
    int32_t na = g->na = g->ma->vertex_count, nb = g->nb = g->mb->vertex_count;
    hy_fem_params fp = {.young = 1e5, .poisson = 0.3, .density = 1000, .damping_stiffness = 0.01};
    hy_ms_params mp = {.stiffness = 5e3, .density = 500, .damping = 0.01};
    CHECK_OK(hy_fem_model_create(g->ma->positions, na, g->ma->tets, g->ma->tet_count, &fp, NULL, 0, &g->fa));
    CHECK_OK(hy_ms_model_create(g->mb->positions, nb, g->mb->tets, g->mb->tet_count, &mp, NULL, 0, &g->fb));
    CHECK_OK(hy_interaction_attach_coincident(g->ma->positions, na, g->mb->positions, nb, 1e-9, 1e4, &g->pairs,
                                              &g->np));
    CHECK(g->np == 9);
    CHECK_OK(hy_interaction_create(0, 1, na, nb, g->pairs, g->np, &g->ia));
    g->xa = malloc(sizeof(double) * 3 * (size_t)na);
    g->va = calloc(3 * (size_t)na, sizeof(double));
    g->xb = malloc(sizeof(double) * 3 * (size_t)nb);
    g->vb = calloc(3 * (size_t)nb, sizeof(double));
    if (!g->xa || !g->va || !g->xb || !g->vb) return;
    memcpy(g->xa, g->ma->positions, sizeof(double) * 3 * (size_t)na);
    memcpy(g->xb, g->mb->positions, sizeof(double) * 3 * (size_t)nb);
    g->ok = g->fa && g->fb && g->ia;
}

static void glued_free(glued_pair* g) {
    free(g->xa), free(g->va), free(g->xb), free(g->vb);
    hy_mem_free(g->pairs);
    hy_interaction_destroy(g->ia);
    hy_fem_model_destroy(g->fa);
    hy_ms_model_destroy(g->fb);
    hy_tetmesh_destroy(g->ma);
    hy_tetmesh_destroy(g->mb);
}

/* The glued pair with random velocities, no gravity, no mass damping: the
 * coupled step keeps their joint momentum (to the CG tolerance), while
 * each block alone changes its own (the coupling exchanged momentum). */
static void test_momentum(hy_pool* pool) {
    glued_pair g;
    glued_make(&g);
    if (g.ok) {
        int32_t na = g.na, nb = g.nb;
        double *va = g.va, *vb = g.vb;
        for (int32_t k = 0; k < 3 * na; k++) va[k] = rnd();
        for (int32_t k = 0; k < 3 * nb; k++) vb[k] = 0.5 + rnd();
        const double *ma_ = hy_fem_masses(g.fa), *mb_ = hy_ms_masses(g.fb);
        double pa0[3] = {0}, pb0[3] = {0}, pa1[3] = {0}, pb1[3] = {0}, scale = 0;
        for (int32_t v = 0; v < na; v++)
            for (int c = 0; c < 3; c++) pa0[c] += ma_[v] * va[3 * v + c], scale += ma_[v] * fabs(va[3 * v + c]);
        for (int32_t v = 0; v < nb; v++)
            for (int c = 0; c < 3; c++) pb0[c] += mb_[v] * vb[3 * v + c], scale += mb_[v] * fabs(vb[3 * v + c]);
        hy_coupled_object obj[2] = {{&hy_fem_ops, g.fa, g.xa, va, NULL, g.xa, va, NULL, NULL},
                                      {&hy_ms_ops, g.fb, g.xb, vb, NULL, g.xb, vb, NULL, NULL}};
        double zero[3] = {0, 0, 0};
        for (int s = 0; s < 50; s++) CHECK_OK(hy_coupled_solve(pool, obj, 2, &g.ia, 1, 0.005, zero, 2000, 1e-13, NULL));
        for (int32_t v = 0; v < na; v++)
            for (int c = 0; c < 3; c++) pa1[c] += ma_[v] * va[3 * v + c];
        for (int32_t v = 0; v < nb; v++)
            for (int c = 0; c < 3; c++) pb1[c] += mb_[v] * vb[3 * v + c];
        double exchanged = 0;
        for (int c = 0; c < 3; c++) {
            CHECK_NEAR(pa1[c] + pb1[c], pa0[c] + pb0[c], 1e-9 * scale);
            exchanged = fmax(exchanged, fabs(pa1[c] - pa0[c]));
        }
        fprintf(stderr, "momentum: %.3e kg m/s exchanged between the blocks, joint change %.2e (scale %.3e)\n",
                exchanged, fabs(pa1[0] + pb1[0] - pa0[0] - pb0[0]), scale);
        CHECK(exchanged > 1e-2 * scale);
    }
    glued_free(&g);
}

/* The glued pair in free flight under gravity, undeformed, moving as one:
 * the coupled solve starts from the objects' scaled mass-only steps, which
 * are the solution here (the glue exerts no force), so CG takes no
 * iteration (from dv = 0 it took some on every step) and every vertex
 * gains g dt. */
static void test_free_flight(hy_pool* pool) {
    glued_pair g;
    glued_make(&g);
    const double v0[3] = {1.0, 0.5, 2.0}, grav[3] = {0, 0, -9.81}, dt = 0.005;
    if (g.ok) {
        for (int32_t v = 0; v < g.na; v++) memcpy(g.va + 3 * v, v0, sizeof v0);
        for (int32_t v = 0; v < g.nb; v++) memcpy(g.vb + 3 * v, v0, sizeof v0);
        hy_coupled_object obj[2] = {{&hy_fem_ops, g.fa, g.xa, g.va, NULL, g.xa, g.va, NULL, NULL},
                                      {&hy_ms_ops, g.fb, g.xb, g.vb, NULL, g.xb, g.vb, NULL, NULL}};
        int32_t iterations = 0;
        const int steps = 10;
        for (int s = 0; s < steps; s++) {
            hy_coupled_stats st = {0};
            CHECK_OK(hy_coupled_solve(pool, obj, 2, &g.ia, 1, dt, grav, 500, 1e-10, &st));
            iterations += st.cg_iterations;
        }
        double err = 0.0;
        for (int32_t v = 0; v < g.na + g.nb; v++) {
            const double* u = v < g.na ? g.va + 3 * v : g.vb + 3 * (v - g.na);
            for (int c = 0; c < 3; c++) err = fmax(err, fabs(u[c] - (v0[c] + steps * dt * grav[c])));
        }
        fprintf(stderr, "free flight: %d CG iterations in %d steps, velocity off by %.2e m/s\n", iterations, steps,
                err);
        CHECK(iterations == 0);
        CHECK(err < 1e-12);
    }
    glued_free(&g);
}

/* A mass-spring block (A) dropped from 5 cm onto a fixed FEM slab (B):
 * contact pairs join each of A's bottom vertices to the slab's top vertex
 * under it, normal +z, gap 1 cm. The block comes to rest on them, its
 * bottom at the gap less the contacts' give under its weight (its 9 bottom
 * vertices' share over k), never through the slab. */
static void test_contact(hy_pool* pool) {
    const double size = 0.1, gap = 0.01, k = 1e5, g = 9.81;
    hy_tetmesh *ma = box_at(0, 0, 0.05, size, 2), *mb = box_at(0, 0, -size, size, 2);
    if (!ma || !mb) return;
    int32_t na = ma->vertex_count, nb = mb->vertex_count, nfix = nb, np = 0;
    int32_t* fixed = malloc(sizeof(int32_t) * (size_t)nb);
    for (int32_t v = 0; v < nb; v++) fixed[v] = v;
    hy_interaction_pair pairs[9];
    for (int32_t a = 0; a < na; a++) {
        if (ma->positions[3 * a + 2] != 0.05) continue;
        for (int32_t b = 0; b < nb; b++)
            if (mb->positions[3 * b + 2] == 0.0 && mb->positions[3 * b] == ma->positions[3 * a] &&
                mb->positions[3 * b + 1] == ma->positions[3 * a + 1] && np < 9)
                pairs[np++] = (hy_interaction_pair){.kind = HY_PAIR_CONTACT, .vertex = a, .count = 1, .b = {b},
                                                    .w = {1.0}, .stiffness = k, .normal = {0, 0, 1}, .gap = gap};
    }
    CHECK(np == 9);
    hy_ms_params mp = {.stiffness = 1e4, .density = 1000, .damping_mass = 5.0};
    hy_fem_params fp = {.young = 1e6, .poisson = 0.3, .density = 1000};
    hy_ms_model* fa = NULL;
    hy_fem_model* fb = NULL;
    hy_interaction* ia = NULL;
    CHECK_OK(hy_ms_model_create(ma->positions, na, ma->tets, ma->tet_count, &mp, NULL, 0, &fa));
    CHECK_OK(hy_fem_model_create(mb->positions, nb, mb->tets, mb->tet_count, &fp, fixed, nfix, &fb));
    CHECK_OK(hy_interaction_create(0, 1, na, nb, pairs, np, &ia));
    double* xa = malloc(sizeof(double) * 3 * (size_t)na);
    double* va = calloc(3 * (size_t)na, sizeof(double));
    double* xb = malloc(sizeof(double) * 3 * (size_t)nb);
    double* vb = calloc(3 * (size_t)nb, sizeof(double));
    memcpy(xa, ma->positions, sizeof(double) * 3 * (size_t)na);
    memcpy(xb, mb->positions, sizeof(double) * 3 * (size_t)nb);
    if (fa && fb && ia) {
        hy_coupled_object obj[2] = {{&hy_ms_ops, fa, xa, va, NULL, xa, va, NULL, NULL},
                                      {&hy_fem_ops, fb, xb, vb, NULL, xb, vb, NULL, NULL}};
        double grav[3] = {0, 0, -g}, lowest = 1.0;
        for (int s = 0; s < 300; s++) {
            CHECK_OK(hy_coupled_solve(pool, obj, 2, &ia, 1, 0.005, grav, 500, 1e-10, NULL));
            for (int32_t v = 0; v < na; v++) lowest = fmin(lowest, xa[3 * v + 2]);
        }
        double mass = 0, bottom = 0, moved = 0;
        for (int32_t v = 0; v < na; v++) mass += hy_ms_masses(fa)[v];
        for (int32_t p = 0; p < np; p++) bottom += xa[3 * pairs[p].vertex + 2] / np;
        for (int32_t k2 = 0; k2 < 3 * nb; k2++) moved = fmax(moved, fabs(xb[k2] - mb->positions[k2]));
        double give = mass * g / (np * k);
        fprintf(stderr, "contact: bottom at %.6e m (gap %.3g, give %.3e), lowest ever %.6e m\n", bottom, gap, give,
                lowest);
        CHECK(fabs(bottom - (gap - give)) < 0.5 * give); /* uneven shares of the weight */
        CHECK(lowest > 0.0);                               /* never through the slab */
        CHECK(moved == 0.0);                               /* the fixed slab stays */
    }
    free(xa), free(va), free(xb), free(vb), free(fixed);
    hy_interaction_destroy(ia);
    hy_ms_model_destroy(fa);
    hy_fem_model_destroy(fb);
    hy_tetmesh_destroy(ma);
    hy_tetmesh_destroy(mb);
}

/* The hanging pair with blocks of 1,331 vertices (two pool blocks each):
 * the same bits with 1 and 2 threads. */
static void test_threads(void) {
    const int n = 10, steps = 5;
    size_t len = 6 * (size_t)((n + 1) * (n + 1) * (n + 1)) * 2;
    double* out[2] = {calloc(len, sizeof(double)), calloc(len, sizeof(double))};
    for (int t = 0; t < 2; t++) {
        hy_pool* pool = hy_pool_create(t + 1);
        hang_result r;
        hang(pool, n, steps, out[t], &r);
        CHECK(r.sag > 0);
        hy_pool_destroy(pool);
    }
    CHECK(memcmp(out[0], out[1], len * sizeof(double)) == 0);
    free(out[0]);
    free(out[1]);
}

int main(void) {
    hy_pool* pool = hy_pool_create(2);
    test_forces();
    test_bad_input();
    test_hang(pool);
    test_momentum(pool);
    test_free_flight(pool);
    test_contact(pool);
    test_threads();
    hy_pool_destroy(pool);
    TEST_END();
}
