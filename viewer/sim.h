/* The viewer's simulation thread and the snapshots it hands to the renderer.
 *
 * The world belongs to the simulation thread alone (hyphys worlds are used
 * from one thread at a time). After each step that thread converts every
 * object's positions to floats in a slot of its own and, under a mutex held
 * only for a pointer swap, publishes it. The render thread takes the newest
 * published slot the same way. Three slots (one being written, one published,
 * one being drawn) mean neither thread ever waits for the other's work: the
 * renderer never waits for a step, and a slow frame never stalls the step.
 *
 * No GL here: tests/test_viewer_sim.c runs it without a display.
 * Threads: create/destroy and every other call from the render thread. */
#ifndef HY_VIEWER_SIM_H
#define HY_VIEWER_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "hyphys/hyphys.h"

/* One object of the scene as the renderer sees it. Its vertices are
 * [first_vertex, first_vertex + vertex_count) of every snapshot. */
typedef struct hy_viewer_object {
    hy_object_kind kind;
    char name[64];
    int32_t first_vertex, vertex_count;
    int32_t first_triangle, triangle_count;
} hy_viewer_object;

/* What the scene is: fixed for the life of the viewer (a reset that would
 * change it is refused). */
typedef struct hy_viewer_topology {
    int32_t object_count;
    hy_viewer_object* objects;
    int32_t vertex_count, triangle_count;
    uint32_t* triangles; /* 3 * triangle_count, indices into the whole snapshot */
    int32_t threads;     /* CPU worker threads of the world (resolved, >= 1) */
    double time_step;    /* s */
} hy_viewer_topology;

/* Contact points kept per frame (the first ones in canonical order). */
#define HY_VIEWER_MAX_CONTACTS 65536

/* What changes per step. */
typedef struct hy_viewer_frame {
    float* positions;     /* 3 * vertex_count, metres */
    float* contacts;      /* 3 * contact_count: where the step's contacts are (hy_world_get_contacts) */
    int32_t contact_count; /* at most HY_VIEWER_MAX_CONTACTS of them */
    hy_step_stats stats;  /* of the step that produced this frame (zeros at step 0) */
    int64_t step;         /* steps done since load or reset */
    double sim_time;      /* s */
    uint64_t state_hash;  /* hy_world_hash of the state drawn: that of `hyphys run` after `step` steps */
    int32_t bonds;        /* intact bonds */
    uint64_t serial;      /* grows with every published frame, resets included */
    hy_sched_stats sched; /* the collision jobs of that step: policy, clock, makespan */
    hy_resource_stats resources[8]; /* per resource (the first 8) */
    int32_t resource_count;
    hy_integrate_stats integrate; /* that step's integrate phase: each PU's load, the steals */
} hy_viewer_frame;

typedef struct hy_viewer_sim hy_viewer_sim;

typedef struct hy_viewer_sim_def {
    const char* scene_path;
    hy_scene_options options;
    int64_t max_steps;  /* stop stepping after this many steps; < 0 = never */
    int realtime;       /* 1 = keep simulated time equal to wall time (wait when early,
                           step back to back when late); 0 = as fast as it can */
    int paused;         /* start paused */
    int has_sched;      /* 1: apply `sched` to the world after every load */
    hy_sched_def sched; /* its strings must outlive the sim */
    /* the integrate phase's policy and PUs after every load
     * (hy_world_set_integrate_sched); NULL: the world's default, lp */
    const char* integrate_sched;
    int32_t integrate_pus; /* 0: the world's default */
    /* GPUs as integration PUs too (hy_world_set_integrate_devices, "cuda:0"),
     * after every load; NULL: none. One not present is left out: the
     * world's integrate stats say so in their fallback line */
    const char* integrate_devices;
    /* optional: called once in hy_viewer_sim_create on the loaded world,
     * on the creating thread (the viewer says there that "cuda" found no GPU) */
    void (*loaded)(const hy_world* world, void* ctx);
    void* ctx;
} hy_viewer_sim_def;

/* How fast the simulation goes, measured over the last wall second. */
typedef struct hy_viewer_sim_rates {
    double steps_per_s;     /* steps completed per wall second; at the frame limit, that of
                               the run's last second; 0 when paused or failed */
    double realtime_factor; /* simulated seconds per wall second (steps_per_s * time_step) */
    int stepping;           /* 1 while running (not paused, not stopped) */
    int behind;             /* real time only: more than 0.25 s late, until caught up
                               (within 0.05 s); said once on stderr when it starts */
} hy_viewer_sim_rates;

/* Load the scene and publish its first frame; the thread is not started.
 * On failure hy_last_error() says why. */
hy_status hy_viewer_sim_create(const hy_viewer_sim_def* def, hy_viewer_sim** out);
/* Start stepping on a thread of its own. 0 on failure. */
int hy_viewer_sim_start(hy_viewer_sim* sim);
/* Stop the thread (after the step under way, if any) and free everything.
 * 1 when the trace file (--trace) could not be written (said on stderr),
 * else 0. */
int hy_viewer_sim_destroy(hy_viewer_sim* sim);

const hy_viewer_topology* hy_viewer_sim_get_topology(const hy_viewer_sim* sim);
/* Newest published frame, owned by the caller until the next acquire.
 * Returns 1 if it is newer than the one returned last time. Never waits for
 * a step. */
int hy_viewer_sim_acquire(hy_viewer_sim* sim, const hy_viewer_frame** out);

void hy_viewer_sim_set_paused(hy_viewer_sim* sim, int paused);
int hy_viewer_sim_get_paused(hy_viewer_sim* sim);
/* Ask for one more step (while paused). */
void hy_viewer_sim_request_step(hy_viewer_sim* sim);
/* Reload the scene file and start again from step 0. */
void hy_viewer_sim_request_reset(hy_viewer_sim* sim);
/* Switch the scheduling policy before the next step (a static string). */
void hy_viewer_sim_request_policy(hy_viewer_sim* sim, const char* policy);
/* 1 when the thread has stopped for good at max_steps or on an error. */
int hy_viewer_sim_is_done(hy_viewer_sim* sim);
/* Copy the latest message (a failed step, a refused reset; "" if none) into
 * buf. Returns 1 if it reports an error that stopped the simulation. */
/* The rates now (a step under way lowers them as it runs). Never waits for a step. */
void hy_viewer_sim_get_rates(hy_viewer_sim* sim, hy_viewer_sim_rates* out);
int hy_viewer_sim_get_message(hy_viewer_sim* sim, char* buf, size_t size);

#endif
