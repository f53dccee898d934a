/* Mesh generators: counts, watertightness, outward orientation, no duplicate vertices, bad arguments. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/mesh.h"
#include "hyphys/hyphys.h"
#include "test.h"

#define PI 3.14159265358979323846

/* Directed edges packed in 64 bits, sorted, to count how often each edge is
 * used in each direction. */
static int cmp_u64(const void* a, const void* b) {
    uint64_t x = *(const uint64_t*)a, y = *(const uint64_t*)b;
    return x < y ? -1 : x > y;
}

/* Returns the number of boundary edges (used once) and sets *bad to the
 * number of edges that violate the manifold rule: a directed edge used twice
 * (inconsistent orientation) or an undirected edge used by more than two
 * triangles. For a closed, consistently oriented mesh both are 0. */
static long edge_stats(hy_mesh_view v, long* bad) {
    size_t ne = 3 * (size_t)v.triangle_count;
    uint64_t* e = malloc(sizeof *e * ne);
    uint64_t* u = malloc(sizeof *u * ne);
    for (int32_t t = 0; t < v.triangle_count; t++)
        for (int k = 0; k < 3; k++) {
            uint64_t a = (uint32_t)v.triangles[3 * t + k], b = (uint32_t)v.triangles[3 * t + (k + 1) % 3];
            e[3 * t + k] = a << 32 | b;
            u[3 * t + k] = a < b ? a << 32 | b : b << 32 | a;
        }
    qsort(e, ne, sizeof *e, cmp_u64);
    qsort(u, ne, sizeof *u, cmp_u64);
    *bad = 0;
    for (size_t i = 1; i < ne; i++)
        if (e[i] == e[i - 1]) (*bad)++;
    long boundary = 0;
    for (size_t i = 0; i < ne;) {
        size_t j = i;
        while (j < ne && u[j] == u[i]) j++;
        if (j - i == 1) boundary++;
        if (j - i > 2) (*bad)++;
        i = j;
    }
    free(e);
    free(u);
    return boundary;
}

static int cmp_pos(const void* a, const void* b) {
    const double *p = a, *q = b;
    for (int k = 0; k < 3; k++)
        if (p[k] != q[k]) return p[k] < q[k] ? -1 : 1;
    return 0;
}

/* Vertices closer than tol to another vertex (after lexicographic sort a
 * duplicate lands next to its twin when they agree exactly; the generators
 * compute shared points once, so exact equality is the failure mode). */
static long duplicate_vertices(hy_mesh_view v) {
    double* p = malloc(sizeof *p * 3 * (size_t)v.vertex_count);
    memcpy(p, v.positions, sizeof *p * 3 * (size_t)v.vertex_count);
    qsort(p, (size_t)v.vertex_count, 3 * sizeof *p, cmp_pos);
    long d = 0;
    for (int32_t i = 1; i < v.vertex_count; i++)
        if (cmp_pos(p + 3 * i, p + 3 * (i - 1)) == 0) d++;
    free(p);
    return d;
}

/* Every vertex referenced by some triangle. */
static int all_used(hy_mesh_view v) {
    char* used = calloc((size_t)v.vertex_count, 1);
    for (int32_t i = 0; i < 3 * v.triangle_count; i++) used[v.triangles[i]] = 1;
    int ok = 1;
    for (int32_t i = 0; i < v.vertex_count; i++) ok &= used[i];
    free(used);
    return ok;
}

/* A closed generator: counts, two triangles per edge in opposite directions,
 * no duplicates, positive volume close to `volume` (relative `vtol`). */
static void check_closed(const char* name, hy_mesh* m, int32_t nv, int32_t nt, double volume, double vtol) {
    hy_mesh_view v = hy_mesh_get_view(m);
    fprintf(stderr, "%s: %d vertices, %d triangles\n", name, v.vertex_count, v.triangle_count);
    CHECK(v.vertex_count == nv);
    CHECK(v.triangle_count == nt);
    CHECK(hy_mesh_view_validate(v, name) == HY_OK);
    long bad;
    long boundary = edge_stats(v, &bad);
    CHECK(boundary == 0);
    CHECK(bad == 0);
    CHECK(duplicate_vertices(v) == 0);
    CHECK(all_used(v));
    hy_mass_properties mp;
    CHECK_OK(hy_mesh_mass_properties(v, 1.0, &mp));
    CHECK(mp.volume > 0.0);
    CHECK_NEAR(mp.volume / volume, 1.0, vtol);
}

int main(void) {
    hy_mesh* m = NULL;

    /* Grid: 215 x 215 -> 2 * 214^2 = 91,592 triangles, all facing +y. */
    CHECK_OK(hy_mesh_grid(215, 215, 2.0, 3.0, &m));
    if (m) {
        hy_mesh_view v = hy_mesh_get_view(m);
        CHECK(v.vertex_count == 215 * 215);
        CHECK(v.triangle_count == 91592);
        long bad;
        long boundary = edge_stats(v, &bad);
        CHECK(bad == 0);
        CHECK(boundary == 4 * 214); /* the rim of an open sheet */
        int up = 1;
        double area = 0.0, ymax = 0.0;
        double lo[3] = {1e9, 1e9, 1e9}, hi[3] = {-1e9, -1e9, -1e9};
        for (int32_t i = 0; i < v.vertex_count; i++)
            for (int k = 0; k < 3; k++) {
                lo[k] = fmin(lo[k], v.positions[3 * i + k]);
                hi[k] = fmax(hi[k], v.positions[3 * i + k]);
            }
        for (int32_t t = 0; t < v.triangle_count; t++) {
            const double* a = v.positions + 3 * v.triangles[3 * t];
            const double* b = v.positions + 3 * v.triangles[3 * t + 1];
            const double* c = v.positions + 3 * v.triangles[3 * t + 2];
            double ny = (b[2] - a[2]) * (c[0] - a[0]) - (b[0] - a[0]) * (c[2] - a[2]);
            up &= ny > 0.0;
            area += 0.5 * ny;
            ymax = fmax(ymax, fabs(a[1]));
        }
        CHECK(up);
        CHECK_NEAR(area, 6.0, 1e-9); /* sums of exact-ish products, 1e-9 is rounding slack */
        CHECK(ymax == 0.0);
        CHECK_NEAR(lo[0], -1.0, 1e-15);
        CHECK_NEAR(hi[0], 1.0, 1e-15);
        CHECK_NEAR(lo[2], -1.5, 1e-15);
        CHECK_NEAR(hi[2], 1.5, 1e-15);
        CHECK(lo[1] == 0.0 && hi[1] == 0.0);
        /* vertex (i, j) at index j*nx + i */
        CHECK_NEAR(v.positions[3 * (2 * 215 + 1) + 0], -1.0 + 2.0 / 214, 1e-15);
        CHECK_NEAR(v.positions[3 * (2 * 215 + 1) + 2], -1.5 + 3.0 * 2 / 214, 1e-15);
        hy_mesh_destroy(m);
        m = NULL;
    }

    /* Closed generators. Volumes: polyhedra inscribed in the smooth shape, so
     * the tolerance is the discretisation error, not rounding. */
    CHECK_OK(hy_mesh_box(0.5, 1.0, 1.5, 1, &m));
    if (m) check_closed("box n=1", m, 8, 12, 6.0, 1e-14);
    hy_mesh_destroy(m);
    CHECK_OK(hy_mesh_box(0.5, 1.0, 1.5, 5, &m));
    if (m) check_closed("box n=5", m, 6 * 6 * 6 - 4 * 4 * 4, 12 * 25, 6.0, 1e-14);
    hy_mesh_destroy(m);
    CHECK_OK(hy_mesh_icosphere(2.0, 0, &m));
    if (m) check_closed("icosphere s=0", m, 12, 20, 4.0 / 3.0 * PI * 8.0, 0.4);
    hy_mesh_destroy(m);
    CHECK_OK(hy_mesh_icosphere(2.0, 4, &m));
    if (m) {
        check_closed("icosphere s=4", m, 2562, 5120, 4.0 / 3.0 * PI * 8.0, 0.005);
        double rerr = 0.0; /* every vertex on the sphere, to rounding */
        for (int32_t i = 0; i < m->vertex_count; i++) {
            const double* q = m->positions + 3 * i;
            rerr = fmax(rerr, fabs(sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2]) - 2.0));
        }
        CHECK(rerr < 1e-14);
    }
    hy_mesh_destroy(m);
    CHECK_OK(hy_mesh_uv_sphere(1.0, 64, 32, &m));
    if (m) check_closed("uv_sphere 64x32", m, 2 + 31 * 64, 2 * 64 * 31, 4.0 / 3.0 * PI, 0.01);
    hy_mesh_destroy(m);
    CHECK_OK(hy_mesh_uv_sphere(1.0, 3, 2, &m));
    if (m) check_closed("uv_sphere 3x2", m, 5, 6, sqrt(3.0) / 2.0, 1e-12); /* bipyramid */
    hy_mesh_destroy(m);
    /* cone volume pi r^2 h / 3 times the polygon/circle area ratio */
    {
        int n = 48;
        double poly = 0.5 * n * sin(2.0 * PI / n) / PI;
        CHECK_OK(hy_mesh_cone(0.7, 1.3, n, &m));
        if (m) check_closed("cone 48", m, n + 2, 2 * n, PI * 0.49 * 1.3 / 3.0 * poly, 1e-12);
        hy_mesh_destroy(m);
    }
    /* torus 2 pi^2 R r^2, times (polygon area ratio) for both circles:
     * exact for the polyhedron is not a simple formula, so 1% */
    CHECK_OK(hy_mesh_torus(1.0, 0.25, 64, 32, &m));
    if (m) check_closed("torus 64x32", m, 64 * 32, 2 * 64 * 32, 2.0 * PI * PI * 1.0 * 0.0625, 0.01);
    hy_mesh_destroy(m);

    /* Cone apex and base placement. */
    CHECK_OK(hy_mesh_cone(1.0, 2.0, 8, &m));
    if (m) {
        double ymin = 1e9, ymax = -1e9;
        for (int32_t i = 0; i < m->vertex_count; i++) {
            ymin = fmin(ymin, m->positions[3 * i + 1]);
            ymax = fmax(ymax, m->positions[3 * i + 1]);
        }
        CHECK(ymin == -1.0 && ymax == 1.0);
    }
    hy_mesh_destroy(m);

    /* Bowl: open, rim at y = 0, all below, normals towards the centre. */
    CHECK_OK(hy_mesh_bowl(1.5, 32, 8, &m));
    if (m) {
        hy_mesh_view v = hy_mesh_get_view(m);
        CHECK(v.vertex_count == 1 + 8 * 32);
        CHECK(v.triangle_count == 32 * 15);
        long bad;
        CHECK(edge_stats(v, &bad) == 32); /* the rim */
        CHECK(bad == 0);
        CHECK(duplicate_vertices(v) == 0);
        int inward = 1, below = 1, rim = 0;
        for (int32_t i = 0; i < v.vertex_count; i++) {
            const double* p = v.positions + 3 * i;
            below &= p[1] <= 0.0;
            rim += p[1] == 0.0;
            CHECK_NEAR(sqrt(p[0] * p[0] + p[1] * p[1] + p[2] * p[2]), 1.5, 1e-12);
        }
        for (int32_t t = 0; t < v.triangle_count; t++) {
            const double* a = v.positions + 3 * v.triangles[3 * t];
            const double* b = v.positions + 3 * v.triangles[3 * t + 1];
            const double* c = v.positions + 3 * v.triangles[3 * t + 2];
            double e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]}, e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
            double n[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
            double cen[3] = {(a[0] + b[0] + c[0]) / 3, (a[1] + b[1] + c[1]) / 3, (a[2] + b[2] + c[2]) / 3};
            inward &= n[0] * cen[0] + n[1] * cen[1] + n[2] * cen[2] < 0.0; /* towards the sphere centre */
        }
        CHECK(below);
        CHECK(rim == 32);
        CHECK(inward);
    }
    hy_mesh_destroy(m);

    /* Bad arguments: status, NULL out, and a message naming the generator. */
    struct {
        hy_status s;
        const char* name;
    } bad[] = {
        {hy_mesh_grid(1, 5, 1, 1, &m), "hy_mesh_grid"},
        {hy_mesh_grid(5, 5, 0, 1, &m), "hy_mesh_grid"},
        {hy_mesh_grid(5, 5, 1, NAN, &m), "hy_mesh_grid"},
        {hy_mesh_grid(100000, 100000, 1, 1, &m), "hy_mesh_grid"},
        {hy_mesh_uv_sphere(-1, 8, 8, &m), "hy_mesh_uv_sphere"},
        {hy_mesh_uv_sphere(1, 2, 8, &m), "hy_mesh_uv_sphere"},
        {hy_mesh_uv_sphere(1, 8, 1, &m), "hy_mesh_uv_sphere"},
        {hy_mesh_icosphere(INFINITY, 2, &m), "hy_mesh_icosphere"},
        {hy_mesh_icosphere(1, -1, &m), "hy_mesh_icosphere"},
        {hy_mesh_icosphere(1, 11, &m), "hy_mesh_icosphere"},
        {hy_mesh_box(1, 0, 1, 1, &m), "hy_mesh_box"},
        {hy_mesh_box(1, 1, 1, 0, &m), "hy_mesh_box"},
        {hy_mesh_cone(1, -2, 8, &m), "hy_mesh_cone"},
        {hy_mesh_cone(1, 2, 2, &m), "hy_mesh_cone"},
        {hy_mesh_torus(1, 1, 8, 8, &m), "hy_mesh_torus"},
        {hy_mesh_torus(1, 0.5, 2, 8, &m), "hy_mesh_torus"},
        {hy_mesh_bowl(0, 8, 8, &m), "hy_mesh_bowl"},
        {hy_mesh_bowl(1, 8, 0, &m), "hy_mesh_bowl"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        CHECK(bad[i].s == HY_ERR_INVALID_ARG);
    }
    /* The message of each: re-run one by one to read it. */
    CHECK(hy_mesh_box(1, 1, 1, 0, &m) == HY_ERR_INVALID_ARG && m == NULL);
    CHECK(strstr(hy_last_error(), "hy_mesh_box") && strstr(hy_last_error(), "subdivisions"));
    CHECK(hy_mesh_torus(1, 2, 8, 8, &m) == HY_ERR_INVALID_ARG && m == NULL);
    CHECK(strstr(hy_last_error(), "minor_radius") != NULL);
    CHECK(hy_mesh_grid(0, 5, 1, 1, NULL) == HY_ERR_INVALID_ARG);
    CHECK(hy_mesh_grid(100000, 100000, 1, 1, &m) == HY_ERR_INVALID_ARG && m == NULL);
    CHECK(strstr(hy_last_error(), "limit") != NULL);

    /* Repeated polygon corners (the PLY and OBJ readers' check): short
     * lists pairwise, long ones sorted; the smallest repeated vertex. */
    const int32_t quad[4] = {7, 3, 9, 3}, tri[3] = {0, 1, 2};
    CHECK(hy_corners_repeat(quad, 4) == 3);
    CHECK(hy_corners_repeat(tri, 3) == -1);
    int32_t* big = malloc(sizeof(int32_t) * 1000000);
    if (big) {
        for (int32_t i = 0; i < 1000000; i++) big[i] = (int32_t)((i * 7919LL) % 1000003);
        CHECK(hy_corners_repeat(big, 1000000) == -1); /* distinct: n log n, not n^2 */
        big[999999] = big[5];
        big[500000] = big[17];
        int64_t want = big[5] < big[17] ? big[5] : big[17];
        CHECK(hy_corners_repeat(big, 1000000) == want);
        free(big);
    }

    TEST_END();
}
