/* What of the world the command-line tools reach beyond the public API
 * (cli/, bench/): named here so that they never include engine/world.h. */
#ifndef HY_ENGINE_TOOLS_H
#define HY_ENGINE_TOOLS_H

#include "hyphys/hyphys.h"

struct hy_prox;
struct hy_calibration;

/* The world's proximity framework (sched/proximity.h), made with the
 * defaults if it has none yet; NULL (and a message) on failure. */
struct hy_prox* hy_world_prox(hy_world* w);

/* Lay out the world's collision state (and the scene view it reads) for
 * its objects, unless it is laid out for them already. */
hy_status hy_world_collision_sync(hy_world* w);

/* hy_collide_calibrate (collision/collide.h) over the world's objects and
 * the positions X0 -> X1 (3 per vertex, objects in order), with its
 * framework and pool. */
hy_status hy_world_calibrate(hy_world* w, const double* X0, const double* X1, int device, int repeats,
                             struct hy_calibration* out);

#endif
