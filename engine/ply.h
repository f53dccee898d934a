/* PLY mesh loader (Stanford polygon format).
 *
 * Accepted: `format binary_little_endian 1.0`, `binary_big_endian 1.0` and
 * `ascii 1.0`; any elements and properties, of which the loader uses the
 * `vertex` element's x, y, z (any scalar type: char .. double, or the
 * int8 .. float64 spellings) and the `face` element's index list
 * (`vertex_indices` or `vertex_index`, else its first list property; count
 * and index of any integer type). Other properties (colours, normals) and
 * other elements are read past and ignored. Polygons are fanned from their
 * first corner into triangles.
 *
 * Errors are statuses (HY_ERR_IO, HY_ERR_PARSE, HY_ERR_NOMEM) with a message
 * "FILE: problem" naming the header line, or the element and item index of
 * bad data: truncated data, an index out of range, a face with fewer than
 * three corners or a repeated vertex, a non-finite coordinate, a header
 * without vertex x/y/z or a face list, trailing garbage after binary data. */
#ifndef HY_ENGINE_PLY_H
#define HY_ENGINE_PLY_H

#include <stddef.h>

#include "core/mesh.h"

/* Load a PLY file into a new mesh (*out, owned by the caller, freed with
 * hy_mesh_destroy). On failure *out is NULL and hy_last_error() says why. */
hy_status hy_ply_load(const char* path, hy_mesh** out);

/* The same from a buffer already in memory; `name` labels messages. */
hy_status hy_ply_parse(const char* name, const void* data, size_t size, hy_mesh** out);

#endif
