/* Tetrahedral mesh loaders: TetGen .node/.ele and Gmsh .msh (ASCII 2.2 and
 * 4.1). Only 4-node tetrahedra become elements (10-node ones keep their
 * four corners); other element types in a .msh file (points, lines,
 * triangles, quads, hexahedra, ...) are skipped. Nodes that no tetrahedron
 * uses are dropped, the others keep the file's order.
 *
 * Orientation: elements are accepted in either convention as long as the
 * whole file agrees: the sign of det(b - a, c - a, d - a) held by most
 * elements is the file's, and a negative file has each element's last two
 * vertices swapped, so the mesh is positive (core/tetmesh.h). An element of
 * the other sign is inverted, and one with volume below 1e-12 of its
 * longest edge cubed degenerate: both are refused.
 *
 * Every malformed input is HY_ERR_PARSE with a message "FILE:LINE: what is
 * wrong" (the element or node named where there is one); a file that cannot
 * be read is HY_ERR_IO. *out is NULL on failure. Any bytes give a status,
 * never a crash (fuzz/fuzz_tetmesh.c). */
#ifndef HY_IO_TETMESH_LOAD_H
#define HY_IO_TETMESH_LOAD_H

#include <stddef.h>

#include "core/tetmesh.h"

/* TetGen: node_path (.node) and ele_path (.ele). */
hy_status hy_tetmesh_load_tetgen(const char* node_path, const char* ele_path, hy_tetmesh** out);
/* The same from text in memory (len bytes each; need not end in NUL);
 * node_name and ele_name name them in messages. */
hy_status hy_tetmesh_parse_tetgen(const char* node_text, size_t node_len, const char* node_name,
                                  const char* ele_text, size_t ele_len, const char* ele_name, hy_tetmesh** out);

/* Gmsh .msh, ASCII, format 2.2 or 4.1 (others, and binary files, refused). */
hy_status hy_tetmesh_load_gmsh(const char* path, hy_tetmesh** out);
hy_status hy_tetmesh_parse_gmsh(const char* text, size_t len, const char* name, hy_tetmesh** out);

#endif
