/* Stepping in tests at the rate the world's def (or scene) asks for, and
 * a world's counts and hash as values (0 when the getter fails, which the
 * tests' CHECKs then catch). */
#ifndef HY_TESTS_WORLD_STEP_H
#define HY_TESTS_WORLD_STEP_H

#include "hyphys/hyphys.h"

/* hy_world_step by the def's time_step in its substeps. */
static inline hy_status hy_test_step(hy_world* w) {
    hy_world_def d;
    hy_status s = hy_world_get_def(w, &d);
    return s ? s : hy_world_step(w, d.time_step, d.substeps);
}

/* One step (hy_test_step) and its figures: the solver's and the
 * integrate phase's. */
static inline hy_status hy_test_step_figures(hy_world* w, hy_step_stats* st, hy_integrate_stats* is) {
    hy_status s = hy_test_step(w);
    if (!s) s = hy_world_get_stats(w, st);
    if (!s) s = hy_world_get_integrate_stats(w, is);
    return s;
}

static inline uint64_t hy_test_hash(const hy_world* w) {
    uint64_t h = 0;
    return hy_world_hash(w, &h) ? 0 : h;
}
static inline int32_t hy_test_object_count(const hy_world* w) {
    int32_t n = 0;
    return hy_world_get_object_count(w, &n) ? 0 : n;
}
static inline int32_t hy_test_bond_count(const hy_world* w) {
    int32_t n = 0;
    return hy_world_get_bond_count(w, &n) ? 0 : n;
}
static inline int32_t hy_test_triangle_count(const hy_world* w) {
    int32_t n = 0;
    return hy_world_get_triangle_count(w, &n) ? 0 : n;
}
static inline int32_t hy_test_vertex_count(const hy_world* w) {
    int32_t n = 0;
    return hy_world_get_vertex_count(w, &n) ? 0 : n;
}
static inline int32_t hy_test_thread_count(const hy_world* w) {
    int32_t n = 0;
    return hy_world_get_thread_count(w, &n) ? 0 : n;
}

#endif
