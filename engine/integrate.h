/* The step's integrate phase as tasks of the integration runtime
 * (runtime/task.h): one task per object and wave, on the object's state
 * block (read-write) and its model (read), run by one or several real CPU
 * processing units (internal). */
#ifndef HY_ENGINE_INTEGRATE_H
#define HY_ENGINE_INTEGRATE_H

#include "engine/world.h"

typedef struct hy_integrator hy_integrator;

/* An integrator of `pus` CPU PUs (1..HY_RT_MAX_PUS; 0: as many as
 * hy_integrator_default_pus says at each step) placed by the runtime
 * policy `policy` (runtime/policy.h). HY_ERR_INVALID_ARG naming an
 * unknown policy or a PU count out of range, HY_ERR_NOMEM. */
hy_status hy_integrator_create(const char* policy, int32_t pus, hy_integrator** out);
/* The default PU count for w: one PU per thread of the world's pool when
 * the world holds at least two volumetric solids per thread (each PU then
 * has several solids or coupled groups to balance, and a solid runs on
 * one thread without the pool's wake-ups inside its short loops), else one
 * PU, the calling thread with the world's pool inside each solve (one
 * large solid, cloths, rigid bodies). */
int32_t hy_integrator_default_pus(const hy_world* w);
void hy_integrator_destroy(hy_integrator* it);
const char* hy_integrator_policy(const hy_integrator* it);
int32_t hy_integrator_pus(const hy_integrator* it);

/* GPU PUs after the CPU ones, one per entry of devices[0..count) (a CUDA
 * device, or -1: a host twin of one, for tests), one host thread each
 * (engine/integrate.c says what runs there). The devices are not checked:
 * one that refuses a model is said in hy_integrate_stats.fallback and its
 * tasks step on the CPU. count 0: none. HY_ERR_INVALID_ARG for a count out
 * of range or a device named twice. */
hy_status hy_integrator_set_gpus(hy_integrator* it, int32_t count, const int* devices);
/* The same from a list "cuda:0,cuda:1" ("" or NULL: none), keeping the
 * GPUs this build and machine have (sched/cuda.h) and saying the others in
 * hy_integrate_stats.fallback. HY_ERR_INVALID_ARG naming a bad item. */
hy_status hy_integrator_set_devices(hy_integrator* it, const char* list);
/* GPU PUs and their devices (devices may be NULL; room for HY_RT_MAX_PUS). */
int32_t hy_integrator_gpus(const hy_integrator* it, int* devices);

/* x1, v1 of every object of w over dt from x, v: the kinds' predicts, the
 * bonds, then the integrates order by order (engine/kinds.h), each wave a
 * task graph. The solver figures go into st in object order, whatever ran
 * where; a failure is the first failing object's, in that order. */
hy_status hy_integrator_step(hy_integrator* it, hy_world* w, double dt, hy_step_stats* st);

/* The last call of hy_integrator_step as the runtime ran it. */
void hy_integrator_get_stats(const hy_integrator* it, hy_integrate_stats* out);

/* While the world's collision trace is open (hy_sched_def.trace), each
 * step's integration is written into it as process 2, "integration", one
 * track per PU and one for the scheduler (runtime/trace.h): attached at
 * the first step that finds the trace open. Detach before the collision
 * trace's stream closes (hy_world_close_trace, a new scheduling, the
 * world's end); NULL does nothing. */
void hy_integrator_detach_trace(hy_integrator* it);

#endif
