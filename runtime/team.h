/* The real executor of several PUs: each CPU PU is a group of worker
 * threads, each CUDA PU one host thread feeding its GPU; partitions are
 * placed on PUs by a policy (runtime/policy.h) and moved between them by
 * real work stealing.
 *
 * Each step, the policy maps the partitions onto the PUs as for the modeled
 * executor (a hy_rt_sim of the PUs, speed = threads, keeps the owners, the
 * measured costs and the learned model from step to step). A worker runs
 * the ready tasks of its PU's partitions: first those that another
 * partition waits for, then partition by partition in index order. A worker
 * that finds none in its PU tries the other PUs in a random order (seeded)
 * and takes the first partition of the victim's that has not started, has
 * a ready task and that the policy lets it steal (its may_steal; a policy
 * without one never steals); the partition then belongs to the thief's PU,
 * this step and the next (temporal locality) unless the policy maps again.
 * A steal takes only a partition whose tasks run on the thief's kind, and
 * under a policy with steal_only_if_faster only one the thief is expected
 * to finish before its owner (hy_rt_sim_faster_on_thief, the modeled
 * executor's rule, the owner's busy time unknown and taken as 0). A worker
 * that finds nothing waits for a task to finish.
 *
 * CUDA PUs: each has a memory of its own in the data layer (runtime/data.h,
 * "cuda0" joined to the host by a channel whose modeled latency and
 * bandwidth seed the policies' estimates). Its thread acquires a task's
 * arguments in that memory (the stale ones copied, the channel counting
 * the bytes; written ones leave the other copies stale) and calls the
 * kind's cuda_fn with those copies, except the arguments in the kind's
 * cuda_host_args, which it hands over on the host (a host-driven
 * implementation that moves its own data to the device). A CPU worker
 * acquires on the host. The memory of a GPU PU whose device exists holds
 * its copies in that GPU (cudaMalloc, copies by cudaMemcpy: a cuda_fn
 * gets device pointers for the arguments not in cuda_host_args); with no
 * such GPU in the build or machine, and for a twin, the copies are host
 * buffers (as for modeled devices): the bits, paths and byte counts are
 * the data layer's, the copies memcpys. The thread sets
 * hy_rt_current_device() to the PU's device while it runs a task: the
 * CUDA implementation binds its work to that GPU. After the run every
 * handle is made valid on the host again (the device copies stay valid
 * until written).
 *
 * Scheduling state is under one lock; tasks run outside it. Results are
 * those of the single-thread run whatever the PUs, threads and steals: the
 * dependencies order every conflicting access.
 *
 * Threads: hy_rt_team_run is called from one thread at a time; that thread
 * waits while the workers run the step. */
#ifndef HY_RUNTIME_TEAM_H
#define HY_RUNTIME_TEAM_H

#include "runtime/sim.h"

#define HY_RT_TEAM_MAX_THREADS 256

typedef struct hy_rt_team hy_rt_team;

/* One PU of a team: a CPU of `threads` workers, or a GPU fed by one host
 * thread (threads 1) whose tasks run the kinds' cuda_fn bound to CUDA
 * device `device` (>= 0), or, with device -1, a host twin of a GPU (for
 * tests: the same placement, memory and transfers, the cuda_fn called
 * with hy_rt_current_device() = -1). */
typedef struct hy_rt_team_pu {
    hy_rt_pu_kind kind;
    int threads;
    int device;
} hy_rt_team_pu;

/* Modeled constants of a team's GPU PU, the policies' prior until they
 * have measured it (the learned model, hy_rt_cost_fit, takes over): per
 * task (kernel launches and the host's waits) and throughput against a
 * core; its memory's channel to the host (PCIe). */
#define HY_RT_TEAM_GPU_OVERHEAD 100e-6
#define HY_RT_TEAM_GPU_SPEED 4.0
#define HY_RT_TEAM_GPU_LATENCY 10e-6
#define HY_RT_TEAM_GPU_BANDWIDTH 12e9

/* npu PUs (1..HY_RT_MAX_PUS), PU q with threads[q] >= 1 workers (at most
 * HY_RT_TEAM_MAX_THREADS in all), under the named policy; `seed` drives
 * the victims' order. HY_ERR_INVALID_ARG naming the bad count or policy. */
hy_status hy_rt_team_create(int npu, const int* threads, const char* policy, uint64_t seed, hy_rt_team** out);
/* The same with PUs of both kinds: a GPU PU with threads other than 1 or a
 * device below -1 is HY_ERR_INVALID_ARG naming it. The team does not check
 * that the device exists: its caller does (the kinds' implementations
 * report failures of their own). */
hy_status hy_rt_team_create_pus(int npu, const hy_rt_team_pu* pus, const char* policy, uint64_t seed,
                                hy_rt_team** out);
void hy_rt_team_destroy(hy_rt_team* t);

/* Parse a PU list such as "cpu:1,cpu:2" (kind:threads, comma separated;
 * only cpu here) into threads[0..*npu). HY_ERR_INVALID_ARG naming the bad
 * item. */
hy_status hy_rt_team_parse(const char* text, int* npu, int* threads, int cap);
/* The same with GPU PUs too: "cpu:2,cuda:0" (cuda:D, the CUDA device D,
 * one feeding thread). */
hy_status hy_rt_team_parse_pus(const char* text, int* npu, hy_rt_team_pu* pus, int cap);

/* The CUDA device of the GPU PU whose thread calls this while it runs a
 * task (its cuda_fn); -1 on any other thread, a CPU PU's, or a GPU twin's
 * (device -1). */
int hy_rt_current_device(void);

/* Called by a cuda_fn that moves data between the host and its GPU itself
 * (a host-driven implementation, its arguments in cuda_host_args): the
 * bytes it moved, both ways, counted on its PU's channel with the data
 * layer's (hy_rt_team_run's stats, per step). Elsewhere it does nothing. */
void hy_rt_count_transfer(int64_t bytes);

/* Run every task of g. Every handle must be valid on the host.
 * *stats (may be NULL): makespan (wall seconds), steals, steal rounds that
 * failed, steals outside the affinity lists, METIS calls, tasks and busy
 * seconds per PU, bytes per channel (the channel of GPU PU q's memory is
 * the one listed for it by hy_rt_team_sim(t)->m.net). HY_ERR_UNSUPPORTED
 * naming the kind if a task has no implementation for any of the team's
 * PUs (checked before anything runs). */
hy_status hy_rt_team_run(hy_rt_team* t, hy_rt_graph* g, hy_rt_step_stats* stats);

/* Record the following steps into tr (NULL: stop): one track per PU
 * ("cpu0 (2 threads)", "cuda0 (device 0)") and a scheduler track, tasks as spans on the real
 * clock from tr->clock0 (each run sets tr->base to its start's distance
 * from it, so runs sit where they happened), steals as instants, maps on
 * the scheduler track at the run's start. */
void hy_rt_team_set_trace(hy_rt_team* t, hy_rt_trace* tr);

/* The placement state (owners, measured costs) for tests and reports. */
const hy_rt_sim* hy_rt_team_sim(const hy_rt_team* t);

#endif
