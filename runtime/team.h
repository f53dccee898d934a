/* The real executor of several CPU PUs: each PU is a group of worker
 * threads, partitions are placed on PUs by a policy (runtime/policy.h) and
 * moved between them by real work stealing.
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
 * The modeled executor's finish-sooner check across kinds does not apply:
 * every PU here is a CPU. A worker that finds nothing waits for a task to
 * finish.
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

/* npu PUs (1..HY_RT_MAX_PUS), PU q with threads[q] >= 1 workers (at most
 * HY_RT_TEAM_MAX_THREADS in all), under the named policy; `seed` drives
 * the victims' order. HY_ERR_INVALID_ARG naming the bad count or policy. */
hy_status hy_rt_team_create(int npu, const int* threads, const char* policy, uint64_t seed, hy_rt_team** out);
void hy_rt_team_destroy(hy_rt_team* t);

/* Parse a PU list such as "cpu:1,cpu:2" (kind:threads, comma separated;
 * only cpu here) into threads[0..*npu). HY_ERR_INVALID_ARG naming the bad
 * item. */
hy_status hy_rt_team_parse(const char* text, int* npu, int* threads, int cap);

/* Run every task of g. Every handle must be valid on the host.
 * *stats (may be NULL): makespan (wall seconds), steals, steal rounds that
 * failed, steals outside the affinity lists, METIS calls, tasks and busy
 * seconds per PU. HY_ERR_UNSUPPORTED naming the kind if a task has no CPU
 * implementation (checked before anything runs). */
hy_status hy_rt_team_run(hy_rt_team* t, hy_rt_graph* g, hy_rt_step_stats* stats);

/* Record the following steps into tr (NULL: stop): one track per PU
 * ("cpu0 (2 threads)") and a scheduler track, tasks as spans on the real
 * clock from tr->clock0 (each run sets tr->base to its start's distance
 * from it, so runs sit where they happened), steals as instants, maps on
 * the scheduler track at the run's start. */
void hy_rt_team_set_trace(hy_rt_team* t, hy_rt_trace* tr);

/* The placement state (owners, measured costs) for tests and reports. */
const hy_rt_sim* hy_rt_team_sim(const hy_rt_team* t);

#endif
