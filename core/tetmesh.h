/* Tetrahedral meshes: an owned vertex + element list, regular-grid
 * generators, and the extraction of the boundary triangles.
 *
 * Orientation: a tetrahedron (a, b, c, d) is positive when
 * det(b - a, c - a, d - a) > 0 (the convention of solvers/fem.h). Its faces,
 * outward for a positive element, are (b, c, d), (a, d, c), (a, b, d) and
 * (a, c, b): face k is opposite vertex k. */
#ifndef HY_CORE_TETMESH_H
#define HY_CORE_TETMESH_H

#include <stdint.h>

#include "hyphys/hyphys.h"

typedef struct hy_tetmesh {
    int32_t vertex_count;
    int32_t tet_count;
    double* positions; /* 3 * vertex_count, m */
    int32_t* tets;     /* 4 * tet_count */
} hy_tetmesh;

/* Allocate a mesh of the given size (contents uninitialised; counts >= 0). */
hy_status hy_tetmesh_alloc(int32_t vertex_count, int32_t tet_count, hy_tetmesh** out);
void hy_tetmesh_destroy(hy_tetmesh* m);

/* A box [origin, origin + size] of nx * ny * nz cubes (cells), each split
 * into 6 positive tetrahedra around its diagonal from the cell's lowest
 * corner to its highest (Kuhn's subdivision). Every cell is split the same
 * way, so the face diagonals of neighbouring cells agree and the mesh is
 * conforming. Vertex (i, j, k) is index i + (nx + 1) * (j + (ny + 1) * k);
 * cell (i, j, k)'s tetrahedra are 6 * (i + nx * (j + ny * k)) + 0..5.
 * (nx+1)(ny+1)(nz+1) vertices, 6 nx ny nz tetrahedra. HY_ERR_INVALID_ARG
 * for a count < 1, a size not > 0 or not finite, or a mesh over 2^31
 * entries. */
hy_status hy_tetmesh_box(const double origin[3], const double size[3], int32_t nx, int32_t ny, int32_t nz,
                         hy_tetmesh** out);

/* Checks element e of tets (4 per element) over the positions x (3 * nv):
 * its indices in [0, nv), and positive, with a volume of at least 1e-12
 * times its longest edge cubed. Dm gets the edge matrix (column i - 1 is
 * x_i - x_0, row-major) and *volume det(Dm) / 6 (both may be NULL).
 * HY_ERR_INVALID_ARG naming `who`, the element and its vertices, and
 * whether it is degenerate or inverted. */
hy_status hy_tet_check(const double* x, int32_t nv, const int32_t* tets, int32_t e, const char* who, double Dm[9],
                       double* volume);

/* The boundary: the faces that belong to one tetrahedron only, oriented
 * outward (for positive elements), in element order then face order (face
 * k opposite vertex k). *tris gets 3 * *count indices (caller frees with
 * hy_mem_free, core/alloc.h; NULL when *count is 0). HY_ERR_INVALID_ARG naming the face when
 * three or more elements share one face (not a manifold mesh) or when an
 * index is out of range; HY_ERR_NOMEM. */
hy_status hy_tetmesh_boundary(const int32_t* tets, int32_t tet_count, int32_t vertex_count, int32_t** tris,
                              int32_t* count);

#endif
