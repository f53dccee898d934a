/* Whole-scene checks of a world's committed state: triangles that intersect
 * or lie closer than their contact distance (collision/tritri.h does the
 * geometry; this file lays a world out for it). */
#ifndef HY_ENGINE_CHECK_H
#define HY_ENGINE_CHECK_H

#include <stdint.h>

#include "collision/tritri.h"
#include "hyphys/hyphys.h"

/* hy_world_find_overlaps with the pairs as object slots (tests use it). */
hy_status hy_tritri_count_world(const hy_world* w, int64_t* count, hy_tritri_hit* hits, int64_t hits_capacity);

/* One line naming a pair by object names and triangles, for messages:
 * "'wall_17' triangle 3 and 'wall_185' triangle 40 (intersecting)". */
void hy_overlap_describe(const hy_world* w, const hy_overlap* o, char* out, size_t size);

/* Finds the overlaps of `mode` and, when there are any, writes a report to
 * out: how many triangle pairs, then up to `listed` distinct object pairs,
 * each with its first triangle pair, separated by "; ". *triangle_pairs
 * gets the count (0: out is ""). */
hy_status hy_overlap_report(const hy_world* w, hy_overlap_mode mode, int listed, char* out, size_t size,
                            int64_t* triangle_pairs);

/* The mechanical energy of the moving objects (cloth, dynamic bodies,
 * solids; obstacles and kinematic bodies are the scene's, not theirs):
 * *kinetic the sum of m |v|^2 / 2 over their vertices (bodies: of the
 * centre of mass, plus w . I w / 2), *potential the sum of -m g . x (J;
 * its zero is the world origin); *mass (may be NULL) their mass, kg. For
 * soak runs: energy that grows without bound shows an instability. */
void hy_world_energy(const hy_world* w, double* kinetic, double* potential, double* mass);

#endif
