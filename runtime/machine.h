/* Modeled machines: processing units (PUs) with a virtual clock, their
 * memories and the channels between them.
 *
 * A PU is a CPU core or a GPU with a speed (seconds of reference-core work
 * it does per second) and a fixed cost per task (a GPU's kernel launches and
 * synchronisation, which makes small objects poor on a GPU). A task of work
 * w (hy_rt_task.work, seconds on the reference core) takes
 * overhead + w / speed there. Transfers cost what the data layer's channels
 * say (runtime/data.h). All times are modeled; results are computed on the
 * CPU. Profiles (hy_rt_machine_profile) reproduce the machines of Hermann
 * et al. 2010; docs/design/RUNTIME.md derives their constants. */
#ifndef HY_RUNTIME_MACHINE_H
#define HY_RUNTIME_MACHINE_H

#include "runtime/data.h"
#include "runtime/task.h"

#define HY_RT_MAX_PUS 32
/* Modeled cost of one successful steal to the thief: taking the victim's
 * queue lock and moving the partition's descriptor. */
#define HY_RT_STEAL_COST 2e-6

typedef struct hy_rt_pu {
    char name[16];
    hy_rt_pu_kind kind;
    int32_t mem;      /* its memory in the machine's net */
    double speed;     /* reference-core seconds of work per second, > 0 */
    double overhead;  /* seconds per task, >= 0 */
} hy_rt_pu;

typedef struct hy_rt_machine {
    char name[32];
    int32_t npu;
    hy_rt_pu pu[HY_RT_MAX_PUS];
    hy_rt_memnet net;
    double steal_cost;  /* seconds a successful steal costs the thief */
} hy_rt_machine;

/* An empty machine (host memory only, no PU). */
void hy_rt_machine_init(hy_rt_machine* m, const char* name);
hy_status hy_rt_machine_add_pu(hy_rt_machine* m, const char* name, hy_rt_pu_kind kind, int32_t mem, double speed,
                               double overhead, int32_t* out);
/* Modeled seconds of task t on PU `pu` (transfers not included). */
static inline double hy_rt_machine_task_time(const hy_rt_machine* m, int32_t pu, const hy_rt_task* t) {
    return m->pu[pu].overhead + t->work / m->pu[pu].speed;
}

/* A named profile with `gpus` GPUs and `cpus` CPU cores as PUs:
 *   "cpu"      `cpus` reference cores on the host memory (gpus must be 0);
 *   "hermann8" a quad-core Nehalem with four dual-GPU GTX 295 boards:
 *              up to 8 GPUs and 4 cores;
 *   "hermann4" a dual quad-core with two GTX 295 boards: up to 4 GPUs, and
 *              cores up to 8 less one per GPU (each GPU is driven by a core).
 * GPUs have no peer access (GTX 295, CUDA 3.0): GPU to GPU goes through the
 * host. HY_ERR_INVALID_ARG naming the profile and the limits otherwise. */
hy_status hy_rt_machine_profile(const char* name, int gpus, int cpus, hy_rt_machine* out);

#endif
