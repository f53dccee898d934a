/* The detection's job side, shared by collision/collide.c (the state, the
 * refit, the detect and calibrate drivers) and collision/collide_jobs.c
 * (the step's detection rounds, and the
 * TRAVERSE and LEAF batches on the host, on modeled devices and on CUDA,
 * whole or in parts for a device fed by its own thread). Internal to
 * collision/. */
#ifndef HY_COLLISION_COLLIDE_JOBS_H
#define HY_COLLISION_COLLIDE_JOBS_H

#include "collision/ccd.h"
#include "collision/collide.h"
#include "sched/backend.h"
#include "sched/proximity.h"

typedef struct hy_detect_ctx {
    hy_prox* prox;
    hy_pool* pool;
    hy_collision_state* cs;
    const double *X0, *X1;
    hy_ccd_options opts;
    int only_moved;  /* 1: only candidates with a vertex moved in this round are tested (hy_collide_detect's carry) */
    int64_t first;   /* of the LEAF range being run */
    double transfer; /* seconds of host<->device copies of the last GPU batch */
} hy_detect_ctx;

/* Starts the rounds again when X0 changed, else marks the vertices whose
 * X1 moved since the last round (hy_collision_state.vertex_round). */
hy_status hy_collide_round_begin(hy_collision_state* cs, const double* X0, const double* X1);
/* LEAF jobs [first, first + n) on the host (device -1) or CUDA device. */
hy_status hy_collide_run_leaf(hy_detect_ctx* c, int device, int64_t first, int64_t n);
/* The collision job kinds as the framework runs them (sched/backend.h). */
extern const hy_job_kind_ops hy_collision_jobs[HY_JOB_KINDS];

#endif
