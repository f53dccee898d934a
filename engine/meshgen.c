/* Procedural meshes: grid, spheres, box, cone, torus, bowl.
 *
 * Closed generators (uv_sphere, icosphere, box, cone, torus) produce
 * watertight, consistently oriented surfaces: every vertex is emitted once, so
 * each edge is shared by exactly two triangles that traverse it in opposite
 * directions, and triangles are counter-clockwise seen from outside (normals
 * point out, the divergence-theorem volume is positive). The grid and bowl are
 * open sheets with the orientation documented at each. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>

#include "core/error.h"
#include "core/mesh.h"

#define PI 3.14159265358979323846

/* Largest mesh a generator will build: 2^25 triangles (~400 MB with
 * positions). Bigger requests are almost surely typos, and the cap keeps every
 * index computation far from int32 overflow. */
#define MAX_TRIANGLES (INT64_C(1) << 25)

/* ------------------------------------------------------------ helpers */

static int positive_finite(double x) { return isfinite(x) && x > 0.0; }

static hy_status alloc_checked(const char* what, int64_t nv, int64_t nt, hy_mesh** out) {
    if (nt > MAX_TRIANGLES || nv > MAX_TRIANGLES)
        return hy_fail(HY_ERR_INVALID_ARG, "%s: %lld triangles requested, the limit is %lld", what, (long long)nt,
                       (long long)MAX_TRIANGLES);
    return hy_mesh_alloc((int32_t)nv, (int32_t)nt, out);
}

static void put_v(hy_mesh* m, int32_t i, double x, double y, double z) {
    m->positions[3 * i + 0] = x;
    m->positions[3 * i + 1] = y;
    m->positions[3 * i + 2] = z;
}

static void put_t(hy_mesh* m, int32_t* t, int32_t a, int32_t b, int32_t c) {
    m->triangles[3 * *t + 0] = a;
    m->triangles[3 * *t + 1] = b;
    m->triangles[3 * *t + 2] = c;
    (*t)++;
}

/* Quad a-b-c-d counter-clockwise seen from the side its normal points to. */
static void put_quad(hy_mesh* m, int32_t* t, int32_t a, int32_t b, int32_t c, int32_t d) {
    put_t(m, t, a, b, c);
    put_t(m, t, a, c, d);
}

/* Open-addressing map from a 64-bit key to a vertex index, used to emit each
 * shared vertex once (icosphere edge midpoints, box lattice points). */
typedef struct vmap {
    int64_t* keys; /* -1 = empty */
    int32_t* vals;
    size_t mask;
} vmap;

static int vmap_init(vmap* m, size_t expected) {
    size_t cap = 16;
    while (cap < 2 * expected) cap <<= 1;
    m->keys = malloc(sizeof *m->keys * cap);
    m->vals = malloc(sizeof *m->vals * cap);
    m->mask = cap - 1;
    if (!m->keys || !m->vals) return 0;
    for (size_t i = 0; i < cap; i++) m->keys[i] = -1;
    return 1;
}

static void vmap_free(vmap* m) {
    free(m->keys);
    free(m->vals);
}

/* Returns the slot for key; *found says whether it already held it. */
static size_t vmap_slot(const vmap* m, int64_t key, int* found) {
    uint64_t h = (uint64_t)key * UINT64_C(0x9E3779B97F4A7C15);
    size_t i = (size_t)(h >> 17) & m->mask;
    while (m->keys[i] != -1 && m->keys[i] != key) i = (i + 1) & m->mask;
    *found = m->keys[i] == key;
    return i;
}

/* ------------------------------------------------------------ grid */

/* Vertex (i, j) sits at x = -size_x/2 + size_x*i/(nx-1), z likewise along j,
 * index j*nx + i. Triangles face +y (counter-clockwise seen from above).
 * Diagonals alternate in a checkerboard: cell (i, j) is split along
 * (i,j)-(i+1,j+1) when i+j is even, along the other diagonal when odd, so the
 * mesh has no preferred shear direction (a cloth made of it drapes
 * symmetrically instead of leaning along one diagonal). */
HY_API hy_status hy_mesh_grid(int nx, int ny, double size_x, double size_z, hy_mesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_grid: out is NULL");
    *out = NULL;
    if (nx < 2 || ny < 2)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_grid: nx and ny must be >= 2, got %d x %d", nx, ny);
    if (!positive_finite(size_x) || !positive_finite(size_z))
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_grid: sizes must be finite and > 0, got %g x %g", size_x,
                       size_z);
    int64_t nv = (int64_t)nx * ny, nt = 2 * (int64_t)(nx - 1) * (ny - 1);
    hy_mesh* m;
    hy_status s = alloc_checked("hy_mesh_grid", nv, nt, &m);
    if (s) return s;
    for (int j = 0; j < ny; j++)
        for (int i = 0; i < nx; i++)
            put_v(m, j * nx + i, -0.5 * size_x + size_x * i / (nx - 1), 0.0, -0.5 * size_z + size_z * j / (ny - 1));
    int32_t t = 0;
    for (int j = 0; j + 1 < ny; j++)
        for (int i = 0; i + 1 < nx; i++) {
            int32_t a = j * nx + i, b = a + 1, c = a + nx + 1, d = a + nx;
            /* a=(i,j) b=(i+1,j) c=(i+1,j+1) d=(i,j+1). Since x cross z = -y,
             * a->d->c->b is the counter-clockwise order seen from +y:
             * (d-a) x (c-a) = z x (x+z) = +y. */
            if (((i + j) & 1) == 0) {
                put_t(m, &t, a, d, c);
                put_t(m, &t, a, c, b);
            } else {
                put_t(m, &t, a, d, b);
                put_t(m, &t, b, d, c);
            }
        }
    HY_ASSERT(t == m->triangle_count);
    *out = m;
    return HY_OK;
}

/* ------------------------------------------------------------ uv sphere */

/* Poles on the y axis, `stacks` bands of latitude, `slices` of longitude. */
HY_API hy_status hy_mesh_uv_sphere(double radius, int slices, int stacks, hy_mesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_uv_sphere: out is NULL");
    *out = NULL;
    if (!positive_finite(radius))
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_uv_sphere: radius must be finite and > 0, got %g", radius);
    if (slices < 3 || stacks < 2)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_uv_sphere: need slices >= 3 and stacks >= 2, got %d and %d",
                       slices, stacks);
    int64_t nv = 2 + (int64_t)(stacks - 1) * slices, nt = 2 * (int64_t)slices * (stacks - 1);
    hy_mesh* m;
    hy_status s = alloc_checked("hy_mesh_uv_sphere", nv, nt, &m);
    if (s) return s;
    /* Vertex 0 = north pole, then rings k = 1..stacks-1 from the top, then the
     * south pole. Longitude runs from +x towards -z, which is counter-clockwise
     * seen from +y. */
    put_v(m, 0, 0.0, radius, 0.0);
    for (int k = 1; k < stacks; k++) {
        double phi = PI * k / stacks, y = radius * cos(phi), rho = radius * sin(phi);
        for (int i = 0; i < slices; i++) {
            double th = 2.0 * PI * i / slices;
            put_v(m, 1 + (k - 1) * slices + i, rho * cos(th), y, -rho * sin(th));
        }
    }
    int32_t south = (int32_t)nv - 1;
    put_v(m, south, 0.0, -radius, 0.0);
    int32_t t = 0;
#define RING(k, i) (1 + ((k) - 1) * slices + ((i) % slices))
    for (int i = 0; i < slices; i++) put_t(m, &t, 0, RING(1, i), RING(1, i + 1));
    for (int k = 1; k + 1 < stacks; k++)
        for (int i = 0; i < slices; i++) put_quad(m, &t, RING(k, i), RING(k + 1, i), RING(k + 1, i + 1), RING(k, i + 1));
    for (int i = 0; i < slices; i++) put_t(m, &t, south, RING(stacks - 1, i + 1), RING(stacks - 1, i));
#undef RING
    HY_ASSERT(t == m->triangle_count);
    *out = m;
    return HY_OK;
}

/* ------------------------------------------------------------ icosphere */

/* Icosahedron subdivided `subdivisions` times (each triangle into four), new
 * vertices projected onto the sphere: 20 * 4^s triangles, 10 * 4^s + 2
 * vertices. Edge midpoints are shared through a map keyed by the edge. */
/* Vertex i at `radius` along the direction of (x, y, z): the plain
 * expression where its squares and products stay in range (so ordinary
 * spheres keep their bits), else the direction scaled to unit size first
 * (radii past about 1e135 or below 1e-135, where x * x over- or
 * underflows and the vertex became NaN). */
static void put_on_sphere(hy_mesh* m, int32_t i, double radius, double x, double y, double z) {
    double a = fmax(fabs(x), fmax(fabs(y), fabs(z)));
    if (a > 0x1p-450 && a < 0x1p450 && radius > 0x1p-450 && radius < 0x1p450) {
        double n = sqrt(x * x + y * y + z * z);
        put_v(m, i, radius * x / n, radius * y / n, radius * z / n);
        return;
    }
    x /= a;
    y /= a;
    z /= a;
    double n = sqrt(x * x + y * y + z * z);
    put_v(m, i, radius * (x / n), radius * (y / n), radius * (z / n));
}

HY_API hy_status hy_mesh_icosphere(double radius, int subdivisions, hy_mesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_icosphere: out is NULL");
    *out = NULL;
    if (!positive_finite(radius))
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_icosphere: radius must be finite and > 0, got %g", radius);
    if (subdivisions < 0 || subdivisions > 10)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_icosphere: subdivisions must be in 0..10, got %d", subdivisions);
    int64_t nt = 20 * ((int64_t)1 << (2 * subdivisions)), nv = nt / 2 + 2;
    hy_mesh* m;
    hy_status s = alloc_checked("hy_mesh_icosphere", nv, nt, &m);
    if (s) return s;

    /* The 12 vertices (±1, ±p, 0), (0, ±1, ±p), (±p, 0, ±1) with the golden
     * ratio p, and 20 faces listed counter-clockwise from outside. base_v
     * holds the signs with 1 in place of p; the loop below puts p back in the
     * right axis for each group of four. */
    const double p = 0.5 * (1.0 + sqrt(5.0));
    static const double base_v[12][3] = {{-1, 1, 0}, {1, 1, 0}, {-1, -1, 0}, {1, -1, 0},
                                         {0, -1, 1}, {0, 1, 1}, {0, -1, -1}, {0, 1, -1},
                                         {1, 0, -1}, {1, 0, 1}, {-1, 0, -1}, {-1, 0, 1}};
    static const int32_t base_t[20][3] = {{0, 11, 5}, {0, 5, 1},  {0, 1, 7},   {0, 7, 10}, {0, 10, 11},
                                          {1, 5, 9},  {5, 11, 4}, {11, 10, 2}, {10, 7, 6}, {7, 1, 8},
                                          {3, 9, 4},  {3, 4, 2},  {3, 2, 6},   {3, 6, 8},  {3, 8, 9},
                                          {4, 9, 5},  {2, 4, 11}, {6, 2, 10},  {8, 6, 7},  {9, 8, 1}};
    for (int i = 0; i < 12; i++) {
        double x = base_v[i][0], y = base_v[i][1], z = base_v[i][2];
        if (i < 4) y *= p;       /* (±1, ±p, 0) */
        else if (i < 8) z *= p;  /* (0, ±1, ±p) */
        else x *= p;             /* (±p, 0, ±1) */
        put_on_sphere(m, i, radius, x, y, z);
    }
    int32_t vcount = 12, tcount = 20;
    for (int i = 0; i < 20; i++)
        for (int k = 0; k < 3; k++) m->triangles[3 * i + k] = base_t[i][k];

    /* Subdivide in place from the back: triangle i's four children land at
     * 4i..4i+3, never overwriting a parent not yet read. */
    vmap map = {0};
    if (!vmap_init(&map, (size_t)(nt * 3 / 2))) {
        vmap_free(&map);
        hy_mesh_destroy(m);
        return hy_fail(HY_ERR_NOMEM, "hy_mesh_icosphere: out of memory");
    }
    for (int level = 0; level < subdivisions; level++) {
        for (size_t i = 0; i <= map.mask; i++) map.keys[i] = -1;
        for (int32_t ti = tcount - 1; ti >= 0; ti--) {
            int32_t v[3] = {m->triangles[3 * ti], m->triangles[3 * ti + 1], m->triangles[3 * ti + 2]};
            int32_t mid[3];
            for (int e = 0; e < 3; e++) {
                int32_t a = v[e], b = v[(e + 1) % 3];
                int64_t key = a < b ? (int64_t)a * nv + b : (int64_t)b * nv + a;
                int found;
                size_t slot = vmap_slot(&map, key, &found);
                if (!found) {
                    const double* pa = m->positions + 3 * a;
                    const double* pb = m->positions + 3 * b;
                    /* halves: the sum of two coordinates near the
                     * largest double would overflow (the direction is
                     * the same) */
                    double x = 0.5 * pa[0] + 0.5 * pb[0], y = 0.5 * pa[1] + 0.5 * pb[1], z = 0.5 * pa[2] + 0.5 * pb[2];
                    put_on_sphere(m, vcount, radius, x, y, z);
                    map.keys[slot] = key;
                    map.vals[slot] = vcount++;
                }
                mid[e] = map.vals[slot];
            }
            int32_t t = 4 * ti;
            put_t(m, &t, v[0], mid[0], mid[2]);
            put_t(m, &t, v[1], mid[1], mid[0]);
            put_t(m, &t, v[2], mid[2], mid[1]);
            put_t(m, &t, mid[0], mid[1], mid[2]);
        }
        tcount *= 4;
    }
    vmap_free(&map);
    HY_ASSERT(vcount == m->vertex_count && tcount == m->triangle_count);
    *out = m;
    return HY_OK;
}

/* ------------------------------------------------------------ box */

/* Box [-hx,hx] x [-hy,hy] x [-hz,hz]; each face split into n x n cells of two
 * triangles (n = subdivisions). Vertices are the surface points of the
 * (n+1)^3 lattice, each emitted once: (n+1)^3 - (n-1)^3 of them. */
HY_API hy_status hy_mesh_box(double hx, double hy, double hz, int subdivisions, hy_mesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_box: out is NULL");
    *out = NULL;
    if (!positive_finite(hx) || !positive_finite(hy) || !positive_finite(hz))
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_box: half extents must be finite and > 0, got %g %g %g", hx, hy,
                       hz);
    if (subdivisions < 1 || subdivisions > 1024)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_box: subdivisions must be in 1..1024, got %d", subdivisions);
    int64_t n = subdivisions;
    int64_t nv = (n + 1) * (n + 1) * (n + 1) - (n - 1) * (n - 1) * (n - 1), nt = 12 * n * n;
    hy_mesh* m;
    hy_status s = alloc_checked("hy_mesh_box", nv, nt, &m);
    if (s) return s;
    vmap map = {0};
    if (!vmap_init(&map, (size_t)nv)) {
        vmap_free(&map);
        hy_mesh_destroy(m);
        return hy_fail(HY_ERR_NOMEM, "hy_mesh_box: out of memory");
    }
    /* Each face: fixed axis `ax` at side `sd` (0 or n), in-plane axes u, v
     * chosen so that u x v is the outward normal; then a cell's corners
     * (a,b), (a+1,b), (a+1,b+1), (a,b+1) run counter-clockwise from outside. */
    static const int faces[6][4] = {
        /* ax, side(1 = +), u, v */
        {0, 1, 1, 2}, {0, 0, 2, 1}, /* +x: y cross z = x;  -x: z cross y = -x */
        {1, 1, 2, 0}, {1, 0, 0, 2}, /* +y: z cross x = y;  -y: x cross z = -y */
        {2, 1, 0, 1}, {2, 0, 1, 0}, /* +z: x cross y = z;  -z: y cross x = -z */
    };
    const double half[3] = {hx, hy, hz};
    int32_t vcount = 0, t = 0;
    for (int f = 0; f < 6; f++) {
        int ax = faces[f][0], u = faces[f][2], w = faces[f][3];
        int64_t side = faces[f][1] ? n : 0;
        int32_t* row = malloc(sizeof *row * (size_t)((n + 1) * (n + 1)));
        if (!row) {
            vmap_free(&map);
            hy_mesh_destroy(m);
            return hy_fail(HY_ERR_NOMEM, "hy_mesh_box: out of memory");
        }
        for (int64_t b = 0; b <= n; b++)
            for (int64_t a = 0; a <= n; a++) {
                int64_t ijk[3];
                ijk[ax] = side;
                ijk[u] = a;
                ijk[w] = b;
                int64_t key = (ijk[0] * (n + 1) + ijk[1]) * (n + 1) + ijk[2];
                int found;
                size_t slot = vmap_slot(&map, key, &found);
                if (!found) {
                    double c[3];
                    /* Lattice coordinate -> position; the ends are exact. */
                    for (int k = 0; k < 3; k++)
                        c[k] = ijk[k] == n ? half[k] : -half[k] + 2.0 * half[k] * (double)ijk[k] / (double)n;
                    put_v(m, vcount, c[0], c[1], c[2]);
                    map.keys[slot] = key;
                    map.vals[slot] = vcount++;
                }
                row[b * (n + 1) + a] = map.vals[slot];
            }
        for (int64_t b = 0; b < n; b++)
            for (int64_t a = 0; a < n; a++) {
                int32_t c00 = row[b * (n + 1) + a], c10 = row[b * (n + 1) + a + 1];
                int32_t c11 = row[(b + 1) * (n + 1) + a + 1], c01 = row[(b + 1) * (n + 1) + a];
                put_quad(m, &t, c00, c10, c11, c01);
            }
        free(row);
    }
    vmap_free(&map);
    HY_ASSERT(vcount == m->vertex_count && t == m->triangle_count);
    *out = m;
    return HY_OK;
}

/* ------------------------------------------------------------ cone */

/* Apex at +height/2 on y, base ring at -height/2 closed by a fan around the
 * base centre: slices + 2 vertices, 2 * slices triangles. */
HY_API hy_status hy_mesh_cone(double radius, double height, int slices, hy_mesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_cone: out is NULL");
    *out = NULL;
    if (!positive_finite(radius) || !positive_finite(height))
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_cone: radius and height must be finite and > 0, got %g and %g",
                       radius, height);
    if (slices < 3) return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_cone: slices must be >= 3, got %d", slices);
    int64_t nv = (int64_t)slices + 2, nt = 2 * (int64_t)slices;
    hy_mesh* m;
    hy_status s = alloc_checked("hy_mesh_cone", nv, nt, &m);
    if (s) return s;
    int32_t apex = slices, centre = slices + 1;
    /* Ring counter-clockwise seen from +y (from +x towards -z). */
    for (int i = 0; i < slices; i++) {
        double th = 2.0 * PI * i / slices;
        put_v(m, i, radius * cos(th), -0.5 * height, -radius * sin(th));
    }
    put_v(m, apex, 0.0, 0.5 * height, 0.0);
    put_v(m, centre, 0.0, -0.5 * height, 0.0);
    int32_t t = 0;
    for (int i = 0; i < slices; i++) {
        int32_t a = i, b = (i + 1) % slices;
        put_t(m, &t, a, b, apex);   /* side: counter-clockwise from outside */
        put_t(m, &t, b, a, centre); /* base: seen from below, the ring turns the other way */
    }
    *out = m;
    return HY_OK;
}

/* ------------------------------------------------------------ torus */

/* Torus around the y axis: tube centre circle of radius `major_radius` in the
 * x-z plane, tube radius `minor_radius` (< major_radius so it does not
 * self-intersect). */
HY_API hy_status hy_mesh_torus(double major_radius, double minor_radius, int major_segments, int minor_segments,
                               hy_mesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_torus: out is NULL");
    *out = NULL;
    if (!positive_finite(major_radius) || !positive_finite(minor_radius) || !(minor_radius < major_radius))
        return hy_fail(HY_ERR_INVALID_ARG,
                       "hy_mesh_torus: need 0 < minor_radius < major_radius (finite), got major %g, minor %g",
                       major_radius, minor_radius);
    if (major_segments < 3 || minor_segments < 3)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_torus: segments must be >= 3, got major %d, minor %d",
                       major_segments, minor_segments);
    int64_t nv = (int64_t)major_segments * minor_segments, nt = 2 * nv;
    hy_mesh* m;
    hy_status s = alloc_checked("hy_mesh_torus", nv, nt, &m);
    if (s) return s;
    /* Vertex (i, j): i around the major circle (counter-clockwise from +y),
     * j around the tube, starting outward and going up first. */
    for (int i = 0; i < major_segments; i++) {
        double th = 2.0 * PI * i / major_segments, ct = cos(th), st = -sin(th);
        for (int j = 0; j < minor_segments; j++) {
            double ph = 2.0 * PI * j / minor_segments;
            double rho = major_radius + minor_radius * cos(ph);
            put_v(m, i * minor_segments + j, rho * ct, minor_radius * sin(ph), rho * st);
        }
    }
    int32_t t = 0;
    for (int i = 0; i < major_segments; i++)
        for (int j = 0; j < minor_segments; j++) {
            int i1 = (i + 1) % major_segments, j1 = (j + 1) % minor_segments;
            int32_t a = i * minor_segments + j, b = i1 * minor_segments + j;
            int32_t c = i1 * minor_segments + j1, d = i * minor_segments + j1;
            /* At j = 0 (outer equator) the major direction (a->b) crossed with
             * the tube direction (up, a->d) is the outward normal. */
            put_quad(m, &t, a, b, c, d);
        }
    *out = m;
    return HY_OK;
}

/* ------------------------------------------------------------ bowl */

/* Lower hemisphere of a sphere of `radius` centred at the origin: the rim is
 * the circle y = 0, the bottom pole is (0, -radius, 0). Triangles are
 * counter-clockwise seen from inside the bowl, so normals point towards the
 * centre (up at the bottom), the side things falling in meet. 1 + stacks *
 * slices vertices, slices * (2 * stacks - 1) triangles. */
HY_API hy_status hy_mesh_bowl(double radius, int slices, int stacks, hy_mesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_bowl: out is NULL");
    *out = NULL;
    if (!positive_finite(radius))
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_bowl: radius must be finite and > 0, got %g", radius);
    if (slices < 3 || stacks < 1)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_bowl: need slices >= 3 and stacks >= 1, got %d and %d", slices,
                       stacks);
    int64_t nv = 1 + (int64_t)stacks * slices, nt = (int64_t)slices * (2 * (int64_t)stacks - 1);
    hy_mesh* m;
    hy_status s = alloc_checked("hy_mesh_bowl", nv, nt, &m);
    if (s) return s;
    /* Vertex 0 = bottom pole; ring k = 1..stacks at polar angle pi/2 * k/stacks
     * from the bottom (ring `stacks` is the rim, y exactly 0). */
    put_v(m, 0, 0.0, -radius, 0.0);
    for (int k = 1; k <= stacks; k++) {
        double a = 0.5 * PI * k / stacks;
        double y = k == stacks ? 0.0 : -radius * cos(a), rho = k == stacks ? radius : radius * sin(a);
        for (int i = 0; i < slices; i++) {
            double th = 2.0 * PI * i / slices;
            put_v(m, 1 + (k - 1) * slices + i, rho * cos(th), y, -rho * sin(th));
        }
    }
    int32_t t = 0;
#define RING(k, i) (1 + ((k) - 1) * slices + ((i) % slices))
    /* Seen from above (inside), the ring runs counter-clockwise with i. */
    for (int i = 0; i < slices; i++) put_t(m, &t, 0, RING(1, i), RING(1, i + 1));
    for (int k = 1; k < stacks; k++)
        for (int i = 0; i < slices; i++) put_quad(m, &t, RING(k, i), RING(k + 1, i), RING(k + 1, i + 1), RING(k, i + 1));
#undef RING
    HY_ASSERT(t == m->triangle_count);
    *out = m;
    return HY_OK;
}
