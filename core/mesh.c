#include "core/mesh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

hy_status hy_mesh_alloc(int32_t vertex_count, int32_t triangle_count, hy_mesh** out) {
    *out = NULL;
    if (vertex_count < 0 || triangle_count < 0)
        return hy_fail(HY_ERR_INVALID_ARG, "mesh size must be >= 0, got %d vertices, %d triangles",
                       vertex_count, triangle_count);
    hy_mesh* m = calloc(1, sizeof *m);
    if (!m) return hy_fail(HY_ERR_NOMEM, "out of memory allocating a mesh");
    m->vertex_count = vertex_count;
    m->triangle_count = triangle_count;
    m->positions = malloc(sizeof(double) * 3 * (size_t)(vertex_count ? vertex_count : 1));
    m->triangles = malloc(sizeof(int32_t) * 3 * (size_t)(triangle_count ? triangle_count : 1));
    if (!m->positions || !m->triangles) {
        hy_mesh_destroy(m);
        return hy_fail(HY_ERR_NOMEM, "out of memory allocating a mesh of %d vertices", vertex_count);
    }
    *out = m;
    return HY_OK;
}

HY_API void hy_mesh_destroy(hy_mesh* mesh) {
    if (!mesh) return;
    free(mesh->positions);
    free(mesh->triangles);
    free(mesh);
}

HY_API hy_mesh_view hy_mesh_get_view(const hy_mesh* mesh) {
    hy_mesh_view v = {0};
    if (!mesh) return v;
    v.positions = mesh->positions;
    v.triangles = mesh->triangles;
    v.vertex_count = mesh->vertex_count;
    v.triangle_count = mesh->triangle_count;
    return v;
}

hy_status hy_mesh_view_validate(hy_mesh_view v, const char* what) {
    if (!v.positions || !v.triangles || v.vertex_count < 3 || v.triangle_count < 1)
        return hy_fail(HY_ERR_INVALID_ARG, "%s: mesh needs >= 3 vertices and >= 1 triangle, got %d and %d",
                       what, v.vertex_count, v.triangle_count);
    for (int32_t i = 0; i < 3 * v.vertex_count; i++)
        if (!isfinite(v.positions[i]))
            return hy_fail(HY_ERR_INVALID_ARG, "%s: vertex %d has a non-finite coordinate", what, i / 3);
    for (int32_t t = 0; t < v.triangle_count; t++) {
        const int32_t* f = v.triangles + 3 * t;
        for (int k = 0; k < 3; k++)
            if (f[k] < 0 || f[k] >= v.vertex_count)
                return hy_fail(HY_ERR_INVALID_ARG, "%s: triangle %d index %d out of range [0, %d)", what, t,
                               f[k], v.vertex_count);
        if (f[0] == f[1] || f[1] == f[2] || f[0] == f[2])
            return hy_fail(HY_ERR_INVALID_ARG, "%s: triangle %d repeats a vertex (%d %d %d)", what, t, f[0],
                           f[1], f[2]);
    }
    return HY_OK;
}

static int cmp_i32(const void* a, const void* b) {
    int32_t x = *(const int32_t*)a, y = *(const int32_t*)b;
    return (x > y) - (x < y);
}

int64_t hy_corners_repeat(const int32_t* c, size_t n) {
    if (n <= 32) {
        int64_t rep = -1;
        for (size_t a = 0; a < n; a++)
            for (size_t b = a + 1; b < n; b++)
                if (c[a] == c[b] && (rep < 0 || c[a] < rep)) rep = c[a];
        return rep;
    }
    int32_t* s = malloc(sizeof(int32_t) * n);
    if (!s) return -2;
    memcpy(s, c, sizeof(int32_t) * n);
    qsort(s, n, sizeof(int32_t), cmp_i32);
    int64_t rep = -1;
    for (size_t i = 1; i < n && rep < 0; i++)
        if (s[i] == s[i - 1]) rep = s[i];
    free(s);
    return rep;
}
