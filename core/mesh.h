/* Owned triangle mesh behind the public hy_mesh handle. */
#ifndef HY_CORE_MESH_H
#define HY_CORE_MESH_H

#include <stdint.h>

#include "hyphys/hyphys.h"

struct hy_mesh {
    int32_t vertex_count;
    int32_t triangle_count;
    double* positions;  /* 3 * vertex_count */
    int32_t* triangles; /* 3 * triangle_count */
};

/* Allocate an empty mesh of the given size (contents uninitialised). */
hy_status hy_mesh_alloc(int32_t vertex_count, int32_t triangle_count, hy_mesh** out);
/* Check a view: counts > 0, indices in range, no degenerate index triple,
 * finite coordinates. `what` names the object in the message. */
hy_status hy_mesh_view_validate(hy_mesh_view v, const char* what);
/* A vertex that polygon corners c[0..n) list twice (the smallest such
 * index), or -1. O(n log n) for long polygons (it may allocate; -2 when it
 * cannot). */
int64_t hy_corners_repeat(const int32_t* c, size_t n);

#endif
