/* Tests the tetrahedral meshes of core/tetmesh.c: grid boxes (counts,
 * positive elements filling the box's volume, conforming faces) and their
 * boundary triangles (count, closed two-manifold, outward by the
 * divergence theorem and per face), small hand-made meshes and bad input. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/tetmesh.h"
#include "test.h"

static double tet_volume(const double* x, const int32_t* t) {
    const double *a = x + 3 * t[0], *b = x + 3 * t[1], *c = x + 3 * t[2], *d = x + 3 * t[3];
    double u[3], v[3], w[3];
    for (int k = 0; k < 3; k++) u[k] = b[k] - a[k], v[k] = c[k] - a[k], w[k] = d[k] - a[k];
    return (u[0] * (v[1] * w[2] - v[2] * w[1]) - u[1] * (v[0] * w[2] - v[2] * w[0]) +
            u[2] * (v[0] * w[1] - v[1] * w[0])) /
           6.0;
}

/* Every directed edge of the triangles once, and its reverse once: a closed,
 * consistently oriented two-manifold. Returns the number of violations. */
static int manifold_violations(const int32_t* tri, int32_t n, int32_t nv) {
    int64_t* keys = malloc(sizeof(int64_t) * 3 * (size_t)n);
    for (int32_t t = 0; t < n; t++)
        for (int k = 0; k < 3; k++) keys[3 * t + k] = (int64_t)tri[3 * t + k] * nv + tri[3 * t + (k + 1) % 3];
    int bad = 0;
    for (int32_t i = 0; i < 3 * n; i++) {
        int64_t a = keys[i] / nv, b = keys[i] % nv, same = 0, reverse = 0;
        for (int32_t j = 0; j < 3 * n; j++) {
            same += keys[j] == keys[i];
            reverse += keys[j] == b * nv + a;
        }
        bad += same != 1 || reverse != 1;
    }
    free(keys);
    return bad;
}

/* Signed volume enclosed by the triangles (divergence theorem): the
 * solid's volume when they are closed and point outward. */
static double enclosed_volume(const double* x, const int32_t* tri, int32_t n) {
    double vol = 0;
    for (int32_t t = 0; t < n; t++) {
        const double *a = x + 3 * tri[3 * t], *b = x + 3 * tri[3 * t + 1], *c = x + 3 * tri[3 * t + 2];
        vol += (a[0] * (b[1] * c[2] - b[2] * c[1]) - a[1] * (b[0] * c[2] - b[2] * c[0]) +
                a[2] * (b[0] * c[1] - b[1] * c[0])) /
               6.0;
    }
    return vol;
}

static void test_box(int nx, int ny, int nz) {
    double o[3] = {-1.0, 2.0, 0.5}, s[3] = {1.5, 0.7, 2.0};
    hy_tetmesh* m = NULL;
    CHECK_OK(hy_tetmesh_box(o, s, nx, ny, nz, &m));
    if (!m) return;
    CHECK(m->vertex_count == (nx + 1) * (ny + 1) * (nz + 1));
    CHECK(m->tet_count == 6 * nx * ny * nz);
    /* every element positive, together the box's volume */
    double vol = 0, smallest = 1e300;
    for (int32_t e = 0; e < m->tet_count; e++) {
        double v = tet_volume(m->positions, m->tets + 4 * e);
        smallest = fmin(smallest, v);
        vol += v;
    }
    CHECK(smallest > 0);
    CHECK_NEAR(vol, s[0] * s[1] * s[2], 1e-12);
    /* the far corner is exactly origin + size */
    const double* far = m->positions + 3 * (m->vertex_count - 1);
    for (int a = 0; a < 3; a++) CHECK(far[a] == o[a] + s[a]);
    /* conforming: only the outer faces are unshared, two triangles per
     * cell face on the box's sides */
    int32_t *tri = NULL, n = 0;
    CHECK_OK(hy_tetmesh_boundary(m->tets, m->tet_count, m->vertex_count, &tri, &n));
    CHECK(n == 4 * (nx * ny + ny * nz + nz * nx));
    CHECK(manifold_violations(tri, n, m->vertex_count) == 0);
    CHECK_NEAR(enclosed_volume(m->positions, tri, n), s[0] * s[1] * s[2], 1e-12);
    /* each triangle on the box's surface, its normal pointing away from
     * the box's centre */
    int inward = 0, off = 0;
    for (int32_t t = 0; t < n; t++) {
        const double *a = m->positions + 3 * tri[3 * t], *b = m->positions + 3 * tri[3 * t + 1],
                     *c = m->positions + 3 * tri[3 * t + 2];
        double u[3], w[3], nrm[3], cen[3];
        for (int k = 0; k < 3; k++) u[k] = b[k] - a[k], w[k] = c[k] - a[k];
        nrm[0] = u[1] * w[2] - u[2] * w[1], nrm[1] = u[2] * w[0] - u[0] * w[2], nrm[2] = u[0] * w[1] - u[1] * w[0];
        double dot = 0;
        int on_face = 0;
        for (int k = 0; k < 3; k++) {
            cen[k] = (a[k] + b[k] + c[k]) / 3.0;
            dot += nrm[k] * (cen[k] - (o[k] + 0.5 * s[k]));
            on_face |= (a[k] == b[k] && b[k] == c[k] && (a[k] == o[k] || a[k] == o[k] + s[k]));
        }
        inward += !(dot > 0);
        off += !on_face;
    }
    CHECK(inward == 0);
    CHECK(off == 0);
    hy_mem_free(tri);
    hy_tetmesh_destroy(m);
}

static int has(const char* needle) { return strstr(hy_last_error(), needle) != NULL; }

static void test_small(void) {
    double x[15] = {0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, -1};
    /* one positive tetrahedron: its four faces, outward */
    int32_t one[4] = {0, 1, 2, 3}, *tri = NULL, n = 0;
    CHECK_OK(hy_tetmesh_boundary(one, 1, 4, &tri, &n));
    CHECK(n == 4);
    CHECK(manifold_violations(tri, n, 4) == 0);
    CHECK_NEAR(enclosed_volume(x, tri, n), 1.0 / 6.0, 1e-15);
    hy_mem_free(tri);
    /* two sharing face (0 1 2): the shared face is interior, 6 remain */
    int32_t two[8] = {0, 1, 2, 3, 0, 2, 1, 4};
    CHECK_OK(hy_tetmesh_boundary(two, 2, 5, &tri, &n));
    CHECK(n == 6);
    CHECK(manifold_violations(tri, n, 5) == 0);
    CHECK_NEAR(enclosed_volume(x, tri, n), 2.0 / 6.0, 1e-15);
    for (int32_t t = 0; t < n; t++) {
        int shared = 0;
        for (int k = 0; k < 3; k++) shared += tri[3 * t + k] <= 2;
        CHECK(shared < 3);
    }
    hy_mem_free(tri);
    /* no elements: no triangles */
    CHECK_OK(hy_tetmesh_boundary(one, 0, 4, &tri, &n));
    CHECK(n == 0 && tri == NULL);
    /* three elements on one face: not a manifold */
    int32_t three[12] = {0, 1, 2, 3, 0, 2, 1, 4, 0, 1, 2, 4};
    CHECK(hy_tetmesh_boundary(three, 3, 5, &tri, &n) == HY_ERR_INVALID_ARG);
    CHECK(has("face (0 1 2) is shared by 3 tetrahedra (0, 1, 2, ...)"));
    CHECK(tri == NULL && n == 0);
    int32_t range[8] = {0, 1, 2, 3, 0, 2, 1, 5};
    CHECK(hy_tetmesh_boundary(range, 2, 5, &tri, &n) == HY_ERR_INVALID_ARG);
    CHECK(has("tetrahedron 1: vertex index 5 out of range"));
    /* generator arguments */
    hy_tetmesh* m = NULL;
    double o[3] = {0, 0, 0}, s[3] = {1, 1, 1}, flat[3] = {1, 0, 1};
    CHECK(hy_tetmesh_box(o, s, 0, 1, 1, &m) == HY_ERR_INVALID_ARG && has("cell counts must be >= 1"));
    CHECK(hy_tetmesh_box(o, flat, 1, 1, 1, &m) == HY_ERR_INVALID_ARG && has("size[1] must be > 0"));
    CHECK(hy_tetmesh_box(o, s, 2000, 2000, 2000, &m) == HY_ERR_INVALID_ARG && has("too many"));
    CHECK(m == NULL);
}

int main(void) {
    test_box(1, 1, 1);
    test_box(3, 2, 4);
    test_box(5, 1, 2);
    test_small();
    TEST_END();
}
