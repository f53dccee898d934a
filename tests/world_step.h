/* Stepping in tests: at the rate the world's def (or scene) asks for. */
#ifndef HY_TESTS_WORLD_STEP_H
#define HY_TESTS_WORLD_STEP_H

#include "hyphys/hyphys.h"

/* hy_world_step by the def's time_step in its substeps. */
static inline hy_status hy_test_step(hy_world* w) {
    hy_world_def d;
    hy_status s = hy_world_get_def(w, &d);
    return s ? s : hy_world_step(w, d.time_step, d.substeps);
}

#endif
