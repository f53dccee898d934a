/* Timing each object's integration on its own, for recordings of real
 * runs (`hyphys bench integrate --record`): the per-object task costs that
 * the integration runtime's experiments replay on modeled machines.
 *
 * Between two steps, every live solid (a kind with HY_KIND_SOLID,
 * engine/kinds.h: FEM and mass-spring) runs its kind's integrate op once
 * more over dt from its current state, timed alone on the world's pool. The op predicts x1, v1 from x, v and the object's model only
 * (the step recomputes them before using them), so probing leaves the
 * run's states, and its hash, as they were (test_integrate_probe).
 *
 * Threads: the caller's, between steps, as hy_world_step. */
#ifndef HY_ENGINE_INTEGRATE_PROBE_H
#define HY_ENGINE_INTEGRATE_PROBE_H

#include "hyphys/hyphys.h"

typedef struct hy_integrate_probe {
    hy_object_id id;
    int32_t particles;     /* its vertices */
    double seconds;        /* wall time of its integration */
    double cpu_seconds;    /* CPU time of the calling thread in it: all of it when the world steps on one
                              thread, and unlike the wall time not stretched by other processes on a
                              shared machine */
    int32_t cg_iterations; /* the solve's */
} hy_integrate_probe;

/* One row per probed object in the world's object order: the first
 * `capacity` into out (may be NULL when capacity is 0), how many there are
 * into *count. HY_ERR_INVALID_ARG for a NULL world or count, dt outside
 * (0, 1]; a solver's failure as the step would report it. */
hy_status hy_world_probe_integration(hy_world* world, double dt, hy_integrate_probe* out, int32_t capacity,
                                     int32_t* count);

/* The pairs of solids joined by attachments now (engine/links.h), each as
 * two indices into hy_world_probe_integration's rows, the lower first, in
 * increasing order: the first `capacity` pairs into pairs[2k], pairs[2k+1]
 * (may be NULL when capacity is 0), how many there are into *count.
 * HY_ERR_INVALID_ARG for a NULL world or count; HY_ERR_NOMEM. */
hy_status hy_world_probe_attachments(const hy_world* world, int32_t* pairs, int32_t capacity, int32_t* count);

#endif
