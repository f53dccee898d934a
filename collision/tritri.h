/* Exact triangle-triangle intersection: the ground truth that a collision
 * response left no interpenetration behind.
 *
 * Every decision is the sign of an orientation determinant (orient3d, and
 * orient2d for coplanar configurations) evaluated exactly: a floating-point
 * filter first, exact expansion arithmetic (Shewchuk 1997) when the filter
 * cannot decide. So "intersecting" means intersecting in the real numbers
 * for the given double coordinates, touching included, with no tolerance.
 *
 * Triangles are closed sets. Two triangles of one mesh that share vertices
 * always meet there; that contact is not counted:
 *   - sharing one vertex s, they intersect when they meet anywhere else,
 *     i.e. when the edge opposite s of either one meets the other triangle;
 *   - sharing an edge, they intersect only when they are coplanar and lie
 *     on the same side of that edge (folded flat onto each other).
 * Zero-area triangles have no inside to penetrate and never count. */
#ifndef HY_COLLISION_TRITRI_H
#define HY_COLLISION_TRITRI_H

#include <stdint.h>

#include "hyphys/hyphys.h"

/* Exact signs: > 0, 0, < 0 as the determinant. orient3d(a, b, c, d) is
 * positive when d lies below the plane of a, b, c seen with a, b, c
 * counter-clockwise (Shewchuk's convention). */
int hy_orient3d_sign(const double a[3], const double b[3], const double c[3], const double d[3]);
int hy_orient2d_sign(const double a[2], const double b[2], const double c[2]);

/* Do the closed triangles (a0, a1, a2) and (b0, b1, b2) share any point?
 * (No vertex sharing is assumed; see hy_tritri_intersect_adjacent.) */
int hy_tritri_intersect(const double a0[3], const double a1[3], const double a2[3], const double b0[3],
                        const double b1[3], const double b2[3]);

/* Triangles given by global vertex ids ta[3], tb[3] into positions x: equal
 * ids are shared vertices (same mesh) and are handled as described above. */
int hy_tritri_intersect_ids(const double* x, const int32_t ta[3], const int32_t tb[3]);

/* Distance between the closed triangles (a0, a1, a2) and (b0, b1, b2) when
 * they do not intersect (the least of the six vertex-triangle and nine
 * edge-edge distances), in floating point; not meaningful for triangles
 * that intersect. */
double hy_tritri_distance(const double a0[3], const double a1[3], const double a2[3], const double b0[3],
                          const double b1[3], const double b2[3]);

/* One reported pair: object slots and triangle indices within them
 * (object_a <= object_b; triangle_a < triangle_b when the objects match),
 * and the distance between the triangles (0 when they intersect). */
typedef struct hy_tritri_hit {
    int32_t object_a, triangle_a, object_b, triangle_b;
    double distance;
} hy_tritri_hit;

/* A set of meshes as one vertex and triangle list. Pairs checked: triangles
 * of different objects unless both objects are static obstacles
 * (check_pair == 0), and triangles of one object when self_check[object]
 * (cloth; a rigid mesh cannot change its own shape). */
typedef struct hy_tritri_scene {
    const double* x;           /* 3 * vertex_count positions */
    int32_t vertex_count;
    const int32_t* triangles;  /* 3 * triangle_count global vertex ids */
    int32_t triangle_count;
    const int32_t* tri_object; /* object slot per triangle */
    const int32_t* tri_local;  /* triangle index within its object (NULL: the global index) */
    int32_t object_count;
    const unsigned char* self_check; /* per object */
    const unsigned char* is_static;  /* per object: pairs of two static objects are skipped (NULL: none) */
    const double* margin; /* per object (NULL: intersections only): triangles of two different
                             objects also count when closer than margin[a] + margin[b] */
    const int64_t* apart; /* object pairs not checked (attached solids): sorted hy_pair_key
                             keys (collision/scene_view.h); NULL when apart_count is 0 */
    int64_t apart_count;
} hy_tritri_scene;

/* Count intersecting triangle pairs (and, with margins, pairs of different
 * objects closer than their margins); the first hits_capacity (in a fixed
 * order: by the first triangle, then the second) go to hits (may be NULL).
 * Broad phase: a uniform grid over the triangles' boxes grown by their
 * margins; every pair whose boxes overlap gets the exact test. Serial and
 * deterministic. */
hy_status hy_tritri_count(const hy_tritri_scene* scene, int64_t* count, hy_tritri_hit* hits, int64_t hits_capacity);

#endif
