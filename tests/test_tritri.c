/* Tests the exact triangle-triangle intersection checker (collision/tritri.h): known intersecting and separate pairs,
 * touching and coplanar cases, adjacent triangles of one mesh, exactness of the predicates, and the world-wide count. */
#include <string.h>

#include "collision/tritri.h"
#include "engine/check.h"
#include "hyphys/hyphys.h"
#include "test.h"

static int tt(const double* a0, const double* a1, const double* a2, const double* b0, const double* b1,
              const double* b2) {
    /* the answer must not depend on the order of the triangles or of their vertices */
    int r = hy_tritri_intersect(a0, a1, a2, b0, b1, b2);
    CHECK(hy_tritri_intersect(b0, b1, b2, a0, a1, a2) == r);
    CHECK(hy_tritri_intersect(a1, a2, a0, b2, b0, b1) == r);
    CHECK(hy_tritri_intersect(a2, a1, a0, b1, b0, b2) == r);
    return r;
}

static void test_basic(void) {
    double a0[3] = {0, 0, 0}, a1[3] = {1, 0, 0}, a2[3] = {0, 1, 0};
    /* a triangle piercing A's inside */
    double b0[3] = {0.2, 0.2, -1}, b1[3] = {0.2, 0.2, 1}, b2[3] = {0.3, 0.25, 1};
    CHECK(tt(a0, a1, a2, b0, b1, b2) == 1);
    /* the same lifted clear of A */
    double c0[3] = {0.2, 0.2, 0.5}, c1[3] = {0.2, 0.2, 1}, c2[3] = {0.3, 0.25, 1};
    CHECK(tt(a0, a1, a2, c0, c1, c2) == 0);
    /* parallel, 1e-12 above */
    double d0[3] = {0, 0, 1e-12}, d1[3] = {1, 0, 1e-12}, d2[3] = {0, 1, 1e-12};
    CHECK(tt(a0, a1, a2, d0, d1, d2) == 0);
    /* a vertex resting exactly on A's face: closed triangles touch */
    double e0[3] = {0.25, 0.25, 0}, e1[3] = {0.25, 0.25, 1}, e2[3] = {0.5, 0.1, 1};
    CHECK(tt(a0, a1, a2, e0, e1, e2) == 1);
    /* ... and the smallest step above it (one ulp of 2^-1074) */
    double f0[3] = {0.25, 0.25, 4.9406564584124654e-324}, f1[3] = {0.25, 0.25, 1}, f2[3] = {0.5, 0.1, 1};
    CHECK(tt(a0, a1, a2, f0, f1, f2) == 0);
    /* crossing outside A's hypotenuse: the planes meet, the triangles do not */
    double g0[3] = {0.6, 0.6, -1}, g1[3] = {0.6, 0.6, 1}, g2[3] = {0.9, 0.9, 0};
    CHECK(tt(a0, a1, a2, g0, g1, g2) == 0);
    /* an edge touching A's hypotenuse at its middle */
    double h0[3] = {0.5, 0.5, 0}, h1[3] = {0.9, 0.9, 1}, h2[3] = {0.9, 0.9, -1};
    CHECK(tt(a0, a1, a2, h0, h1, h2) == 1);
    /* edge-edge cross (no vertex inside the other triangle) */
    double i0[3] = {0.4, -0.5, 0.5}, i1[3] = {0.4, 0.5, -0.5}, i2[3] = {0.4, -0.5, -0.5};
    CHECK(tt(a0, a1, a2, i0, i1, i2) == 1);
}

static void test_coplanar(void) {
    double a0[3] = {0, 0, 0}, a1[3] = {1, 0, 0}, a2[3] = {0, 1, 0};
    double b0[3] = {0.5, 0.5, 0}, b1[3] = {1.5, 0.5, 0}, b2[3] = {0.5, 1.5, 0}; /* touches at (0.5, 0.5) */
    CHECK(tt(a0, a1, a2, b0, b1, b2) == 1);
    double c0[3] = {0.6, 0.6, 0}, c1[3] = {1.5, 0.6, 0}, c2[3] = {0.6, 1.5, 0}; /* just outside */
    CHECK(tt(a0, a1, a2, c0, c1, c2) == 0);
    double d0[3] = {0.1, 0.1, 0}, d1[3] = {0.2, 0.1, 0}, d2[3] = {0.1, 0.2, 0}; /* inside A */
    CHECK(tt(a0, a1, a2, d0, d1, d2) == 1);
    double e0[3] = {-1, 0.2, 0}, e1[3] = {2, 0.2, 0}, e2[3] = {-1, 0.3, 0}; /* edges cross, no vertex inside */
    CHECK(tt(a0, a1, a2, e0, e1, e2) == 1);
    /* a tilted plane (z = x + 2y, exact in binary) */
    double ta0[3] = {0, 0, 0}, ta1[3] = {1, 0, 1}, ta2[3] = {0, 1, 2};
    double tb0[3] = {0.25, 0.25, 0.75}, tb1[3] = {2, 0.25, 2.5}, tb2[3] = {0.25, 2, 4.25};
    CHECK(tt(ta0, ta1, ta2, tb0, tb1, tb2) == 1);
    double tc0[3] = {0.75, 0.5, 1.75}, tc1[3] = {2, 0.5, 3}, tc2[3] = {0.75, 2, 4.75};
    CHECK(tt(ta0, ta1, ta2, tc0, tc1, tc2) == 0);
}

static void test_exact_predicates(void) {
    /* exactly coplanar points far from the origin, where the rounded
     * determinant is not reliably 0: z = x + y with x, y multiples of 2^-20
     * near 1e3 (every sum is exact) */
    unsigned s = 12345u; /* fixed LCG seed */
    int zero = 0, total = 0;
    for (int it = 0; it < 2000; it++) {
        double p[4][3];
        for (int k = 0; k < 4; k++) {
            s = s * 1664525u + 1013904223u;
            double x = 1000.0 + (double)(s >> 8) * 0x1p-20;
            s = s * 1664525u + 1013904223u;
            double y = 1000.0 + (double)(s >> 8) * 0x1p-20;
            p[k][0] = x;
            p[k][1] = y;
            p[k][2] = x + y;
        }
        zero += hy_orient3d_sign(p[0], p[1], p[2], p[3]) == 0;
        total++;
    }
    CHECK(zero == total);
    /* Shewchuk's near-collinear example: naive evaluation gets signs wrong */
    double a[2] = {0.5, 0.5}, b[2] = {12, 12}, c[2] = {24, 24};
    CHECK(hy_orient2d_sign(a, b, c) == 0);
    double c2[2] = {24, 0x1.8000000000001p+4};
    CHECK(hy_orient2d_sign(a, b, c2) == 1);
    /* orientation flips sign under an odd permutation */
    double q0[3] = {0, 0, 0}, q1[3] = {1, 0, 0}, q2[3] = {0, 1, 0}, q3[3] = {0, 0, 1};
    CHECK(hy_orient3d_sign(q0, q1, q2, q3) == -hy_orient3d_sign(q1, q0, q2, q3));
    CHECK(hy_orient3d_sign(q0, q1, q2, q3) != 0);
}

static void test_adjacent(void) {
    /* positions: a flat square split along its diagonal, plus a point above */
    double x[] = {0, 0, 0, 1, 0, 0, 1, 1, 0, 0, 1, 0, 0.9, 0.1, 0.5, 0.5, 0.2, 0, 0.2, 0.5, 0, 0.8, 0.5, -0.5};
    int32_t t0[3] = {0, 1, 2}, t1[3] = {0, 2, 3};
    CHECK(hy_tritri_intersect_ids(x, t0, t1) == 0); /* flat neighbours across an edge */
    int32_t t2[3] = {0, 2, 4};
    CHECK(hy_tritri_intersect_ids(x, t0, t2) == 0); /* bent along the shared edge */
    int32_t t3[3] = {0, 2, 5};                      /* folded flat onto t0 (vertex 5 inside t0) */
    CHECK(hy_tritri_intersect_ids(x, t0, t3) == 1);
    int32_t t4[3] = {0, 2, 6}; /* coplanar, other side of the shared edge */
    CHECK(hy_tritri_intersect_ids(x, t0, t4) == 0);
    /* sharing vertex 0: a fan neighbour does not count ... */
    int32_t t5[3] = {0, 3, 4};
    CHECK(hy_tritri_intersect_ids(x, t0, t5) == 0);
    /* ... one whose far edge passes through t0 does (vertex 7 below, 4 above) */
    int32_t t6[3] = {0, 4, 7};
    CHECK(hy_tritri_intersect_ids(x, t0, t6) == 1);
    CHECK(hy_tritri_intersect_ids(x, t6, t0) == 1);
    CHECK(hy_tritri_intersect_ids(x, t0, t0) == 0);
}

/* A cloth folded through itself and a cloth lying through a box. */
static void test_world(void) {
    hy_world_def wd = hy_world_def_default();
    wd.threads = 1;
    hy_world* w;
    CHECK_OK(hy_world_create(&wd, &w));
    hy_mesh* grid;
    CHECK_OK(hy_mesh_grid(5, 5, 1.0, 1.0, &grid));
    hy_cloth_def cd = hy_cloth_def_default();
    cd.mesh = hy_mesh_get_view(grid);
    hy_cloth_id c;
    CHECK_OK(hy_cloth_add(w, &cd, &c));
    int64_t n = -1;
    CHECK_OK(hy_tritri_count_world(w, &n, NULL, 0));
    CHECK(n == 0); /* a flat grid has only adjacent contacts */
    /* a box through the middle of the sheet */
    hy_mesh* box;
    CHECK_OK(hy_mesh_box(0.1, 0.1, 0.1, 1, &box));
    hy_obstacle_def od = hy_obstacle_def_default();
    od.mesh = hy_mesh_get_view(box);
    hy_obstacle_id b;
    CHECK_OK(hy_obstacle_add(w, &od, &b));
    hy_tritri_hit hits[64];
    CHECK_OK(hy_tritri_count_world(w, &n, hits, 64));
    CHECK(n > 0);
    for (int64_t i = 0; i < n && i < 64; i++) CHECK(hits[i].object_a == 0 && hits[i].object_b == 1);
    /* a second obstacle overlapping the first: obstacle pairs are not checked */
    hy_obstacle_id b2;
    od.position[0] = 0.05;
    CHECK_OK(hy_obstacle_add(w, &od, &b2));
    int64_t n2 = -1;
    CHECK_OK(hy_tritri_count_world(w, &n2, NULL, 0));
    CHECK(n2 > n);
    int64_t k = 0;
    hy_tritri_hit hits2[128];
    CHECK_OK(hy_tritri_count_world(w, &k, hits2, 128));
    for (int64_t i = 0; i < k && i < 128; i++) CHECK(!(hits2[i].object_a == 1 && hits2[i].object_b == 2));
    hy_mesh_destroy(box);
    hy_world_destroy(w);

    /* a sheet folded through itself: two grids as one cloth mesh */
    hy_mesh_view gv = hy_mesh_get_view(grid);
    int32_t nv = gv.vertex_count, nt = gv.triangle_count;
    double* pos = malloc(sizeof(double) * 6 * (size_t)nv);
    int32_t* tri = malloc(sizeof(int32_t) * 6 * (size_t)nt);
    for (int32_t i = 0; i < nv; i++) {
        memcpy(pos + 3 * i, gv.positions + 3 * i, 3 * sizeof(double));
        /* the copy stands upright through the first sheet */
        pos[3 * (nv + i) + 0] = gv.positions[3 * i + 0] + 0.1;
        pos[3 * (nv + i) + 1] = gv.positions[3 * i + 2];
        pos[3 * (nv + i) + 2] = 0.05;
    }
    for (int32_t t = 0; t < 3 * nt; t++) {
        tri[t] = gv.triangles[t];
        tri[3 * nt + t] = gv.triangles[t] + nv;
    }
    CHECK_OK(hy_world_create(&wd, &w));
    hy_cloth_def cd2 = hy_cloth_def_default();
    cd2.mesh.positions = pos;
    cd2.mesh.triangles = tri;
    cd2.mesh.vertex_count = 2 * nv;
    cd2.mesh.triangle_count = 2 * nt;
    CHECK_OK(hy_cloth_add(w, &cd2, &c));
    CHECK_OK(hy_tritri_count_world(w, &n, NULL, 0));
    CHECK(n > 0);
    hy_world_destroy(w);
    free(pos);
    free(tri);
    hy_mesh_destroy(grid);
}

int main(void) {
    test_basic();
    test_coplanar();
    test_exact_predicates();
    test_adjacent();
    test_world();
    TEST_END();
}
