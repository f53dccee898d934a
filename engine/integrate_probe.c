/* Timing each object's integration on its own (see integrate_probe.h). */
#include "engine/integrate_probe.h"

#include <stdlib.h>
#include <time.h>

#include "core/error.h"
#include "engine/kinds.h"
#include "engine/links.h"
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

hy_status hy_world_probe_attachments(const hy_world* w, int32_t* pairs, int32_t capacity, int32_t* count) {
    if (!w || !count || (capacity > 0 && !pairs))
        return hy_fail(HY_ERR_INVALID_ARG, "hy_world_probe_attachments: NULL argument");
    *count = 0;
    int64_t* keys = NULL;
    int64_t nkeys = 0;
    hy_status s = hy_links_apart_copy(w, &keys, &nkeys);
    if (s || nkeys == 0) {
        free(keys); /* held links that are all contacts: allocated, none filled */
        return s;
    }
    /* slot -> row of hy_world_probe_integration: the live solids in order */
    int32_t* row = malloc((size_t)w->object_count * sizeof *row);
    if (!row) {
        free(keys);
        return hy_fail(HY_ERR_NOMEM, "out of memory for the attachments of %d objects", w->object_count);
    }
    for (int32_t i = 0, n = 0; i < w->object_count; i++)
        row[i] = w->objects[i].alive && hy_object_has(&w->objects[i], HY_KIND_SOLID) ? n++ : -1;
    int32_t n = 0;
    for (int64_t k = 0; k < nkeys; k++) { /* sorted keys of slots: rows keep the order */
        int32_t a = row[(int32_t)((uint64_t)keys[k] >> 32)], b = row[(int32_t)(uint32_t)keys[k]];
        if (a < 0 || b < 0) continue;
        if (n < capacity) {
            pairs[2 * n] = a;
            pairs[2 * n + 1] = b;
        }
        n++;
    }
    free(row);
    free(keys);
    *count = n;
    return HY_OK;
}
