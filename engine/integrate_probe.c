/* Timing each object's integration on its own (see integrate_probe.h). */
#include "engine/integrate_probe.h"

#include <time.h>

#include "core/error.h"
#include "engine/kinds.h"
#include "engine/world.h"

static double clock_seconds(clockid_t c) {
    struct timespec ts;
    clock_gettime(c, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

hy_status hy_world_probe_integration(hy_world* w, double dt, hy_integrate_probe* out, int32_t capacity,
                                     int32_t* count) {
    if (!w || !count || (capacity > 0 && !out)) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_probe_integration: NULL argument");
    if (!(dt > 0 && dt <= 1)) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_probe_integration: dt %g not in (0, 1]", dt);
    int32_t n = 0;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (!o->alive || !hy_object_has(o, HY_KIND_SOLID)) continue;
        hy_step_stats st = {0};
        double c0 = clock_seconds(CLOCK_THREAD_CPUTIME_ID), t0 = clock_seconds(CLOCK_MONOTONIC);
        hy_status s = o->ops->integrate(w, o, w->pool, dt, &st);
        double t = clock_seconds(CLOCK_MONOTONIC) - t0, c = clock_seconds(CLOCK_THREAD_CPUTIME_ID) - c0;
        if (s) return s;
        if (n < capacity) {
            out[n].id = hy_world_slot_id(w, i);
            out[n].particles = o->model.nv;
            out[n].seconds = t;
            out[n].cpu_seconds = c;
            out[n].cg_iterations = st.cg_iterations;
        }
        n++;
    }
    *count = n;
    return HY_OK;
}
