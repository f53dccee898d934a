/* What of the world the command-line tools reach beyond the public API
 * (cli/, bench/): named here so that they never include engine/world.h. */
#ifndef HY_ENGINE_TOOLS_H
#define HY_ENGINE_TOOLS_H

#include "hyphys/hyphys.h"

struct hy_prox;

/* The world's proximity framework (sched/proximity.h), made with the
 * defaults if it has none yet; NULL (and a message) on failure. */
struct hy_prox* hy_world_prox(hy_world* w);

#endif
