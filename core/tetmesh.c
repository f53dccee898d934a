#include "core/tetmesh.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

hy_status hy_tetmesh_alloc(int32_t vertex_count, int32_t tet_count, hy_tetmesh** out) {
    *out = NULL;
    if (vertex_count < 0 || tet_count < 0)
        return hy_fail(HY_ERR_INVALID_ARG, "tet mesh size must be >= 0, got %d vertices, %d tetrahedra",
                       vertex_count, tet_count);
    hy_tetmesh* m = calloc(1, sizeof *m);
    if (!m) return hy_fail(HY_ERR_NOMEM, "out of memory allocating a tet mesh");
    m->vertex_count = vertex_count;
    m->tet_count = tet_count;
    m->positions = malloc(sizeof(double) * 3 * (size_t)(vertex_count ? vertex_count : 1));
    m->tets = malloc(sizeof(int32_t) * 4 * (size_t)(tet_count ? tet_count : 1));
    if (!m->positions || !m->tets) {
        hy_tetmesh_destroy(m);
        return hy_fail(HY_ERR_NOMEM, "out of memory allocating a tet mesh of %d vertices, %d tetrahedra",
                       vertex_count, tet_count);
    }
    *out = m;
    return HY_OK;
}

void hy_tetmesh_destroy(hy_tetmesh* m) {
    if (!m) return;
    free(m->positions);
    free(m->tets);
    free(m);
}

hy_status hy_tetmesh_box(const double origin[3], const double size[3], int32_t nx, int32_t ny, int32_t nz,
                         hy_tetmesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "tet box: NULL out");
    *out = NULL;
    if (!origin || !size) return hy_fail(HY_ERR_INVALID_ARG, "tet box: NULL origin or size");
    if (nx < 1 || ny < 1 || nz < 1)
        return hy_fail(HY_ERR_INVALID_ARG, "tet box: cell counts must be >= 1, got %d x %d x %d", nx, ny, nz);
    for (int a = 0; a < 3; a++)
        if (!(size[a] > 0) || !isfinite(size[a]) || !isfinite(origin[a]))
            return hy_fail(HY_ERR_INVALID_ARG, "tet box: size[%d] must be > 0 and finite (got %g, origin %g)", a,
                           size[a], origin[a]);
    int64_t nvert = (int64_t)(nx + 1) * (ny + 1) * (nz + 1), ncell = (int64_t)nx * ny * nz;
    if (nvert > INT32_MAX / 3 || ncell > INT32_MAX / 24)
        return hy_fail(HY_ERR_INVALID_ARG, "tet box: %d x %d x %d cells is too many", nx, ny, nz);
    hy_tetmesh* m;
    hy_status st = hy_tetmesh_alloc((int32_t)nvert, (int32_t)(6 * ncell), &m);
    if (st) return st;
    int32_t n[3] = {nx, ny, nz};
    for (int32_t k = 0; k <= nz; k++)
        for (int32_t j = 0; j <= ny; j++)
            for (int32_t i = 0; i <= nx; i++) {
                int32_t ijk[3] = {i, j, k};
                double* p = m->positions + 3 * (i + (nx + 1) * (j + (ny + 1) * k));
                for (int a = 0; a < 3; a++)
                    p[a] = ijk[a] == n[a] ? origin[a] + size[a] : origin[a] + size[a] * ijk[a] / n[a];
            }
    /* Kuhn: one tetrahedron per order of the axes, walking from corner 000
     * to 111 one axis at a time. det = the permutation's sign, so the odd
     * ones swap their last two vertices. */
    static const int perm[6][3] = {{0, 1, 2}, {1, 2, 0}, {2, 0, 1}, {0, 2, 1}, {2, 1, 0}, {1, 0, 2}};
    int32_t* t = m->tets;
    for (int32_t k = 0; k < nz; k++)
        for (int32_t j = 0; j < ny; j++)
            for (int32_t i = 0; i < nx; i++)
                for (int p = 0; p < 6; p++) {
                    int32_t c[3] = {i, j, k}, v[4];
                    for (int s = 0; s < 4; s++) {
                        if (s > 0) c[perm[p][s - 1]]++;
                        v[s] = c[0] + (nx + 1) * (c[1] + (ny + 1) * c[2]);
                    }
                    if (p >= 3) {
                        int32_t tmp = v[2];
                        v[2] = v[3], v[3] = tmp;
                    }
                    memcpy(t, v, sizeof v);
                    t += 4;
                }
    *out = m;
    return HY_OK;
}

/* Face k of a tetrahedron, outward for a positive one: opposite vertex k. */
static const int FACE[4][3] = {{1, 2, 3}, {0, 3, 2}, {0, 1, 3}, {0, 2, 1}};

typedef struct face_key {
    int32_t v[3]; /* sorted */
    int32_t id;   /* 4 * element + face */
} face_key;

static int face_cmp(const void* pa, const void* pb) {
    const face_key *a = pa, *b = pb;
    for (int i = 0; i < 3; i++)
        if (a->v[i] != b->v[i]) return a->v[i] < b->v[i] ? -1 : 1;
    return (a->id > b->id) - (a->id < b->id);
}

hy_status hy_tetmesh_boundary(const int32_t* tets, int32_t tet_count, int32_t vertex_count, int32_t** tris,
                              int32_t* count) {
    if (!tris || !count) return hy_fail(HY_ERR_INVALID_ARG, "tet boundary: NULL out");
    *tris = NULL;
    *count = 0;
    if (tet_count < 0 || (tet_count > 0 && !tets) || tet_count > INT32_MAX / 4)
        return hy_fail(HY_ERR_INVALID_ARG, "tet boundary: bad element list (%d tetrahedra)", tet_count);
    if (tet_count == 0) return HY_OK;
    size_t nf = 4 * (size_t)tet_count;
    face_key* f = malloc(nf * sizeof *f);
    uint8_t* boundary = calloc(nf, 1);
    if (!f || !boundary) {
        free(f);
        free(boundary);
        return hy_fail(HY_ERR_NOMEM, "tet boundary: out of memory for %d tetrahedra", tet_count);
    }
    for (int32_t e = 0; e < tet_count; e++) {
        const int32_t* t = tets + 4 * e;
        for (int i = 0; i < 4; i++)
            if (t[i] < 0 || t[i] >= vertex_count) {
                free(f);
                free(boundary);
                return hy_fail(HY_ERR_INVALID_ARG, "tet boundary: tetrahedron %d: vertex index %d out of range [0, %d)",
                               e, t[i], vertex_count);
            }
        for (int k = 0; k < 4; k++) {
            face_key* q = f + 4 * e + k;
            int32_t a = t[FACE[k][0]], b = t[FACE[k][1]], c = t[FACE[k][2]], s;
            if (a > b) s = a, a = b, b = s;
            if (b > c) s = b, b = c, c = s;
            if (a > b) s = a, a = b, b = s;
            q->v[0] = a, q->v[1] = b, q->v[2] = c;
            q->id = 4 * e + k;
        }
    }
    /* equal faces become neighbours; the id breaks ties, so the order is total */
    qsort(f, nf, sizeof *f, face_cmp);
    int32_t n = 0;
    for (size_t s = 0; s < nf;) {
        size_t e = s + 1;
        while (e < nf && memcmp(f[e].v, f[s].v, sizeof f[s].v) == 0) e++;
        if (e - s > 2) {
            hy_status st = hy_fail(HY_ERR_INVALID_ARG,
                                   "tet boundary: face (%d %d %d) is shared by %zu tetrahedra (%d, %d, %d, ...): "
                                   "not a manifold mesh",
                                   f[s].v[0], f[s].v[1], f[s].v[2], e - s, f[s].id / 4, f[s + 1].id / 4,
                                   f[s + 2].id / 4);
            free(f);
            free(boundary);
            return st;
        }
        if (e - s == 1) {
            boundary[f[s].id] = 1;
            n++;
        }
        s = e;
    }
    free(f);
    int32_t* out = n ? malloc(3 * (size_t)n * sizeof *out) : NULL;
    if (n && !out) {
        free(boundary);
        return hy_fail(HY_ERR_NOMEM, "tet boundary: out of memory for %d triangles", n);
    }
    int32_t w = 0;
    for (size_t id = 0; id < nf; id++) {
        if (!boundary[id]) continue;
        const int32_t* t = tets + 4 * (id / 4);
        for (int i = 0; i < 3; i++) out[3 * w + i] = t[FACE[id % 4][i]];
        w++;
    }
    free(boundary);
    *tris = out;
    *count = n;
    return HY_OK;
}

hy_status hy_tet_check(const double* x, int32_t nv, const int32_t* tets, int32_t e, const char* who, double Dm[9],
                       double* volume) {
    const int32_t* t = tets + 4 * (size_t)e;
    for (int i = 0; i < 4; i++)
        if (t[i] < 0 || t[i] >= nv)
            return hy_fail(HY_ERR_INVALID_ARG, "%s: tetrahedron %d: vertex index %d out of range [0, %d)", who, e, t[i],
                           nv);
    double D[9], longest = 0.0;
    for (int i = 1; i < 4; i++)
        for (int a = 0; a < 3; a++) D[3 * a + (i - 1)] = x[3 * t[i] + a] - x[3 * t[0] + a];
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) {
            double l2 = 0.0;
            for (int a = 0; a < 3; a++) {
                double d = x[3 * t[j] + a] - x[3 * t[i] + a];
                l2 += d * d;
            }
            longest = fmax(longest, sqrt(l2));
        }
    double det = D[0] * (D[4] * D[8] - D[5] * D[7]) - D[1] * (D[3] * D[8] - D[5] * D[6]) +
                 D[2] * (D[3] * D[7] - D[4] * D[6]);
    if (!(fabs(det) > 1e-12 * longest * longest * longest) || !isfinite(det))
        return hy_fail(HY_ERR_INVALID_ARG,
                       "%s: tetrahedron %d (vertices %d %d %d %d) is degenerate: volume %g m^3 with longest edge %g m",
                       who, e, t[0], t[1], t[2], t[3], det / 6.0, longest);
    if (det < 0)
        return hy_fail(HY_ERR_INVALID_ARG,
                       "%s: tetrahedron %d (vertices %d %d %d %d) is inverted: volume %g m^3 (swap two vertices to "
                       "make det(b-a, c-a, d-a) > 0)",
                       who, e, t[0], t[1], t[2], t[3], det / 6.0);
    if (Dm) memcpy(Dm, D, sizeof D);
    if (volume) *volume = det / 6.0;
    return HY_OK;
}
