/* The modeled executor: one step of a task graph on a modeled machine,
 * under a virtual clock, with partitions placed by a policy and moved by
 * work stealing.
 *
 * At the start of a step the policy maps partitions onto PUs (owner[]); a PU
 * then runs, in submission order, the ready tasks of the partitions it owns
 * (a task is ready when its predecessors have finished in virtual time). Its
 * arguments are acquired in the PU's memory (transfers along the cheapest
 * path, charged to the task), its implementation runs for real on those
 * copies, and it finishes after the transfers plus
 * overhead + work / speed. A PU with nothing ready tries to steal: up to
 * |PU| - 1 random victims (seeded: the clock and every choice are
 * deterministic), taking the first partition of the victim's queue whose
 * own work has not started (an interaction run first for another
 * partition's sake does not count), has a ready task, runs on the thief's
 * kind and that the policy allows. Stolen partitions stay with the thief the next step
 * (temporal locality) unless the policy maps again. A PU that finds nothing
 * waits for the next task to finish. At the end of the step every handle is
 * made valid on the host (the bytes are counted; the time is not charged).
 *
 * The affinity list of a partition is the set of PUs owning a partition
 * that shares data with it, recomputed from the current owners, plus the
 * PUs that own no partition at all (they have no data to keep together,
 * and would otherwise starve once their partitions were stolen); a
 * partition that shares nothing has every PU in its list.
 *
 * Batched launches (hy_rt_sim.batch): the partitions the caller marks as
 * batchable (small free solids, which the real runtime steps in batches on
 * a GPU: engine/integrate.c, solvers/batch_step.h) share a GPU's per-task
 * cost with the other marked partitions that GPU owns: the r-th task of a
 * kind in each of them is one launch of the batch (its r-th CG round, say),
 * paid once for all and split evenly among them. A batch of m partitions
 * thus pays one overhead per round, the rounds being the largest task
 * count among them, not one per partition and task; the work of each task
 * (the per-object arithmetic) stays its own. Cores pay their per-task cost
 * as before. The policies' estimates follow the same rule, through one
 * function (hy_rt_sim_launches): a batchable partition on a GPU costs its
 * arithmetic plus its share of the launches of the batch it joins there;
 * its measured GPU time has the launches it paid then replaced by those it
 * would pay now (hy_rt_sim_part_time), so that its own estimate does not
 * move with the partitions that happened to share its GPU when it ran.
 *
 * Results are computed by the CPU implementations and are the same for
 * every policy and machine; times are modeled.
 *
 * Threads: a sim is used from one thread at a time. */
#ifndef HY_RUNTIME_SIM_H
#define HY_RUNTIME_SIM_H

#include "runtime/machine.h"
#include "runtime/queues.h"
#include "runtime/task.h"
#include "runtime/trace.h"

typedef struct hy_rt_step_stats {
    double makespan;                  /* modeled seconds from the step's start to its last task's end */
    int32_t tasks;
    int32_t steals;                   /* partitions moved by stealing */
    int32_t steal_fails;              /* steal rounds that found nothing */
    int32_t steals_outside_affinity;  /* steals whose thief was not in the partition's affinity list */
    int32_t metis_calls;
    int32_t remapped;                 /* 1 when the policy mapped from scratch this step */
    double threshold;                 /* priority: the CPU/GPU ratio threshold after the step */
    double transfer_time;             /* modeled seconds spent in transfers, summed over tasks */
    int64_t channel_bytes[HY_RT_MAX_CHANNELS]; /* per channel of the machine's net, this step */
    double busy[HY_RT_MAX_PUS];       /* modeled seconds each PU ran tasks */
    int32_t pu_tasks[HY_RT_MAX_PUS];
    double gpu_launches;              /* per-task costs paid on GPUs, in units of one (batch shares summed) */
} hy_rt_step_stats;

typedef struct hy_rt_sim hy_rt_sim;

/* Task kinds a batchable partition may have (an object's step has three:
 * assembly, CG iteration, update). */
#define HY_RT_BATCH_KINDS 4

/* The expected-time model of a kind of PU, in the form of the proximity
 * framework's (sched/model.h): a partition of n launches (its tasks, a
 * batch's shares counted as such: hy_rt_sim_launches) and w seconds of
 * reference work takes setup·n + unit·w / speed on a PU of that kind (unit
 * is 1 where the PU's speed says all, and absorbs what it leaves out: the
 * contention). Starts from the machine's constants (setup
 * the first PU's overhead, unit 1) and is refitted after every step by
 * least squares over the partitions that ran on that kind, their measured
 * times less the transfers they waited for, older steps
 * weighing half as much per step; setup within [0, max(16 prior, 1 ms)],
 * unit within [1/16, 16]; with partitions too alike in their task counts
 * to separate the two (the system nearly singular), setup is kept and unit
 * alone is fitted. */
typedef struct hy_rt_cost_fit {
    double setup, unit;              /* seconds per launch; factor on work / speed */
    double prior_setup;
    double nn, nw, ww, ny, wy;       /* decayed sums of the normal equations */
    int32_t samples;                 /* partitions seen, all steps */
} hy_rt_cost_fit;

typedef struct hy_rt_policy_class {
    const char* name;
    const char* description;
    /* Required. Runs at the start of each step: set s->owner[p] for every
     * partition (entries of -1 are new partitions). `changed`: the partition
     * graph differs from the previous step's (always 1 the first step). An
     * owner whose kind cannot run the partition is moved afterwards to the
     * least loaded PU that can. */
    hy_status (*map)(hy_rt_sim* s, int changed);
    /* Optional (NULL: no stealing). 1 when PU `thief` may steal partition p
     * (which has not started, is ready and runs on the thief's kind). */
    int (*may_steal)(const hy_rt_sim* s, int32_t thief, int32_t p);
    /* Optional. A steal round of PU `thief` found nothing (called once per
     * idle spell of the thief, not per round). */
    void (*steal_failed)(hy_rt_sim* s, int32_t thief);
    /* 1: on a machine with both kinds of PU, steal a partition only when the
     * thief would finish it before the victim would (the victim's queue
     * ahead of it counted), by the per-kind times (measured, else modeled).
     * Keeps a core from taking a large partition at the end of a step that a
     * GPU would have finished sooner. 2: the same check for every steal,
     * between PUs of one kind too. 0: no such check. */
    int steal_only_if_faster;
    /* 1: a PU steals only once every task of the partitions it owns has
     * started; one whose tasks wait on other PUs' results does not. 0: any
     * PU with nothing ready tries. */
    int steal_when_dry;
} hy_rt_policy_class;

struct hy_rt_sim {
    hy_rt_machine m;
    const hy_rt_policy_class* policy;
    uint64_t rng;
    int64_t step;
    int32_t npart, cap_part;
    int32_t* owner;        /* per partition: its PU */
    double* cost;          /* per partition: last measured modeled time (its work before it ran) */
    double* kind_time;     /* [2p + kind]: last measured time on a PU of that kind, < 0 unknown */
    double* est_time;      /* [2p + kind]: this step's modeled time on the first PU of that kind (no transfers) */
    uint8_t* eligible;     /* per partition: bit k = every task runs on kind k */
    hy_rt_pedge* edges;    /* the partition graph of this step */
    int32_t nedges;
    int32_t* adj_start;    /* CSR of partition neighbours (npart + 1) */
    int32_t* adj;
    uint64_t graph_sig;
    double threshold;      /* priority: CPU/GPU time ratio below which a partition belongs on a CPU */
    double threshold_step; /* factor the threshold moves by on a failed steal */
    int warmup;            /* priority: steps spent measuring each kind */
    int32_t* part_tasks;   /* per partition: its tasks this step */
    double* part_work;     /* per partition: its reference work this step */
    double* part_bytes;    /* per partition: bytes of the handles its tasks write this step (what moves
                              with it to another PU's memory) */
    hy_rt_cost_fit fit[HY_RT_PU_KINDS];
    int real_gpus;         /* 1: its GPU PUs run the kinds' cuda_fn (a team's), 0: modeled ones run cpu_fn */
    hy_rt_trace* trace;    /* NULL: none (hy_rt_sim_set_trace) */
    hy_rt_step_stats stats;
    const uint8_t* batch;  /* NULL, or per partition of the next steps: 1 = batchable (header); the caller's */
    int32_t* task_rank;    /* per task: how many tasks of its kind come before it in its partition */
    const hy_rt_kind** bkind; /* [HY_RT_BATCH_KINDS p + i]: partition p's task kinds, NULL past the last */
    int32_t* bcount;       /* [HY_RT_BATCH_KINDS p + i]: its tasks of that kind; a batchable partition
                              with more kinds than that shares no launch */
    int32_t cap_tasks;
    double* paid;          /* per partition: launches (hy_rt_sim_launches' unit) its last measured GPU time paid */
    double* join;          /* per partition: launches it pays on the GPU it joins (hy_rt_sim_join_launches) */
};

/* A sim of machine m (copied) under the policy named `policy`
 * (runtime/policy.h lists them; an unknown name gives HY_ERR_INVALID_ARG
 * with the list). `seed` drives the victims' choice. */
hy_status hy_rt_sim_create(const hy_rt_machine* m, const char* policy, uint64_t seed, hy_rt_sim** out);
void hy_rt_sim_destroy(hy_rt_sim* s);

/* Record the following steps into t (NULL: stop): one track per PU, named
 * "(modeled)", and a scheduler track after them; tasks and their transfers
 * as spans on the virtual clock, steals as instants on the thief's track,
 * each mapping (a step whose policy mapped afresh or called METIS, whether
 * it kept the result or not) as an instant on the scheduler track with its
 * METIS calls and its wall time (not charged to the virtual clock). Steps follow each
 * other: t->base moves on by each makespan. The sim does not own t. */
void hy_rt_sim_set_trace(hy_rt_sim* s, hy_rt_trace* t);

/* Run one step of g. *stats (may be NULL) gets the step's figures.
 * HY_ERR_UNSUPPORTED naming the task or partition when a task has no
 * implementation for any PU of the machine, or a partition's tasks share no
 * PU kind. */
hy_status hy_rt_sim_step(hy_rt_sim* s, hy_rt_graph* g, hy_rt_step_stats* stats);

/* For executors that run a step themselves (runtime/team.h): the first
 * half of hy_rt_sim_step (per-partition costs and kinds, the partition
 * graph, the policy's map into s->owner, the trace's map event), then,
 * after the step ran, the second (measured seconds per partition, ran_on[p]
 * bit k when p ran on kind k; the learned model; the step count). s->stats
 * is the step's figures in between; the executor adds its own. */
hy_status hy_rt_sim_begin_step(hy_rt_sim* s, const hy_rt_graph* g);
void hy_rt_sim_end_step(hy_rt_sim* s, const hy_rt_graph* g, const uint8_t* ran_on, const double* measured);

/* For policies. */
/* Per-task costs partition p pays on PU q, in units of one (the PU's
 * overhead each), the partitions placed as owner[] says (p counted on q
 * whatever owner[p] is): its task count, except for a batchable partition
 * on a GPU, whose tasks pay each 1 / the number of batchable partitions on
 * q sharing its launch (a task of that kind and rank: the sim's rule,
 * header). It and the executor's per-task share count a task's sharers
 * with one function: the estimates cannot drift from what the sim charges. */
double hy_rt_sim_launches(const hy_rt_sim* s, const int32_t* owner, int32_t p, int32_t q);
/* 1 when partition p is batchable this step (hy_rt_sim.batch, and few
 * enough kinds of task). */
int hy_rt_sim_batchable(const hy_rt_sim* s, int32_t p);
/* s->join[p] for every partition: hy_rt_sim_launches on the GPU that owns
 * it, or, when a core does (or none), on the GPU where it would pay fewest
 * (it joins the largest batch; ties: the first GPU); its task count when
 * it is not batchable or the machine has no GPU. The sim refreshes it
 * before the policy maps (last step's owners) and after. */
void hy_rt_sim_join_launches(hy_rt_sim* s);
/* Modeled time of partition p on a PU of kind k: the last measured one, else
 * the model's estimate for this step; on a GPU, a batchable partition's
 * launches are those it pays joining a batch now (s->join), not those it
 * paid when measured or the full ones the estimate has. */
double hy_rt_sim_part_time(const hy_rt_sim* s, int32_t p, hy_rt_pu_kind k);
/* hy_rt_sim_part_time on PU q: on a GPU, a batchable partition's launches
 * are those it pays in q's batch (hy_rt_sim_launches under s->owner). */
double hy_rt_sim_pu_time(const hy_rt_sim* s, int32_t p, int32_t q);
/* t, a time of partition p on a GPU that paid `paid` launches (in
 * hy_rt_sim_launches' unit), with those replaced by s->join[p]: t itself,
 * to the bit, when p is not batchable. */
double hy_rt_sim_rebatch(const hy_rt_sim* s, int32_t p, double t, double paid);
/* 1 when thief q, free at `now`, would finish partition p before its
 * owner v, free at `victim_free`: v first ends the unstarted part of the
 * partitions ahead of p in its queue (qs), then p; times per PU from
 * hy_rt_sim_pu_time, the thief paying the machine's steal cost. */
int hy_rt_sim_faster_on_thief(const hy_rt_sim* s, const hy_rt_queues* qs, int32_t q, int32_t v, int32_t p,
                              double now, double victim_free);
/* 1 when PU q is in partition p's affinity list. */
int hy_rt_sim_in_affinity(const hy_rt_sim* s, int32_t q, int32_t p);
/* Map the partitions with part_mask[p] != 0 (NULL: all) onto the PUs of
 * kinds in kind_mask (bit k) with METIS (runtime/map.h), costs from
 * s->cost (or kind_time of that kind when known), edges from the partition
 * graph restricted to them. */
hy_status hy_rt_sim_map_metis(hy_rt_sim* s, const uint8_t* part_mask, unsigned kind_mask);
/* Partition p onto PU p mod |PUs of kind_mask| for every p with
 * part_mask[p] != 0 (NULL: all). */
void hy_rt_sim_map_round_robin(hy_rt_sim* s, const uint8_t* part_mask, unsigned kind_mask);
/* Expected seconds of partition p on PU q under the learned model
 * (hy_rt_cost_fit), transfers and waiting not counted separately: setup
 * per launch (hy_rt_sim_launches, the partitions placed as owner[] says;
 * NULL: s->owner) plus unit times its work over the PU's speed. */
double hy_rt_sim_expected(const hy_rt_sim* s, const int32_t* owner, int32_t p, int32_t q);
/* Modeled seconds to move the data of the partitions whose PU differs
 * between `from` and `to` (entries < 0 in from: new, nothing to move) into
 * their new PUs' memories, added per destination PU into load[] (npu
 * entries; the trips to one PU follow each other, trips to different PUs
 * run at once). */
void hy_rt_sim_move_cost(const hy_rt_sim* s, const int32_t* from, const int32_t* to, double* load);
/* splitmix64 step of *state: the victims' choice of the executors. */
uint64_t hy_rt_random(uint64_t* state);
/* Seconds on the monotonic clock. */
double hy_rt_wall_seconds(void);
/* Number of PUs of kind k. */
int32_t hy_rt_sim_count_kind(const hy_rt_sim* s, hy_rt_pu_kind k);

#endif
