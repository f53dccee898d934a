/* What the benchmarks need to know about a scene beyond what it simulates:
 * how many frames make its whole sequence, and the distance at which its
 * simulation looks for contacts. */
#ifndef HY_BENCH_SCENE_INFO_H
#define HY_BENCH_SCENE_INFO_H

#include "hyphys/hyphys.h"

/* Frames a benchmark runs of a scene by default when no --frames is given:
 * the whole sequence for the benchmark scenes (table in scene_info.c, keyed
 * by the scene's base name, as hy_bench_scene_name gives it), else
 * HY_BENCH_DEFAULT_FRAMES. *what (may be NULL) says what those frames
 * cover, for the report. */
#define HY_BENCH_DEFAULT_FRAMES 100
long hy_bench_default_frames(const char* name, const char** what);
/* The table for help texts: "cloth_ball 300, nbody 600, ..." (static). */
const char* hy_bench_sequences_text(void);

/* The simulation's contact distance for the whole world as one mesh: two
 * objects collide within the mean of their thicknesses
 * (hy_object_get_thickness), so the largest pair distance is the largest
 * thickness. *mixed is set to 1 when the objects' thicknesses differ (the
 * simulation then queries some pairs at a smaller distance than this one).
 * HY_OK, or the status of a failed query. */
hy_status hy_bench_contact_distance(const hy_world* w, double* out, int* mixed);

#endif
