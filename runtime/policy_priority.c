/* priority: affinity stealing plus heterogeneity. The first steps measure
 * each partition on each kind of PU (warm-up: all on CPUs, then all on
 * GPUs); afterwards a partition whose CPU-time / GPU-time ratio is below the
 * threshold belongs on a CPU, otherwise on a GPU. Each group is mapped with
 * METIS onto its kind when the graph changes, and a thief steals only what
 * its kind should run. A CPU that fails to steal raises the threshold (it
 * will accept larger partitions), a GPU that fails lowers it. A steal
 * across kinds also has to finish the partition sooner than its owner
 * would (hy_rt_policy_class.steal_only_if_faster): the threshold alone lets
 * a core that keeps failing take a large partition at the end of a step. On
 * a machine with one kind of PU this is affinity. */
#include "runtime/policy.h"

#include <math.h>
#include <stdlib.h>

#define WARMUP_STEPS 2

static int hetero(const hy_rt_sim* s) {
    return hy_rt_sim_count_kind(s, HY_RT_CPU) > 0 && hy_rt_sim_count_kind(s, HY_RT_GPU) > 0;
}

/* CPU time / GPU time of partition p: measured, else modeled from its
 * tasks; on the GPU, a small free solid's launches are its share of the
 * batch it joins there (hy_rt_sim_rebatch), not what it paid when measured
 * or a launch of its own per task. */
static double ratio(const hy_rt_sim* s, int32_t p) {
    double c = s->kind_time[2 * p + HY_RT_CPU], g = s->kind_time[2 * p + HY_RT_GPU];
    if (c < 0 || g < 0) {
        c = s->est_time[2 * p + HY_RT_CPU];
        g = hy_rt_sim_rebatch(s, p, s->est_time[2 * p + HY_RT_GPU], s->part_tasks[p]);
    } else {
        g = hy_rt_sim_rebatch(s, p, g, s->paid[p]);
    }
    return g > 0 ? c / g : 1.0;
}

/* The kind partition p belongs on under the current threshold. */
static hy_rt_pu_kind wanted_kind(const hy_rt_sim* s, int32_t p) {
    if (!(s->eligible[p] & (1u << HY_RT_GPU))) return HY_RT_CPU;
    if (!(s->eligible[p] & (1u << HY_RT_CPU))) return HY_RT_GPU;
    return ratio(s, p) < s->threshold ? HY_RT_CPU : HY_RT_GPU;
}

static hy_status map(hy_rt_sim* s, int changed) {
    if (!hetero(s)) {
        if (!changed) return HY_OK;
        s->stats.remapped = 1;
        return hy_rt_sim_map_metis(s, NULL, 3u);
    }
    if (s->step < WARMUP_STEPS) {
        /* measure: every partition on one kind (those that cannot run there
         * are moved by the sim's fix-up) */
        s->stats.remapped = 1;
        hy_rt_sim_map_round_robin(s, NULL, s->step == 0 ? 1u << HY_RT_CPU : 1u << HY_RT_GPU);
        return HY_OK;
    }
    if (!changed && s->step > WARMUP_STEPS) return HY_OK;
    s->stats.remapped = 1;
    uint8_t* on_cpu = malloc((size_t)(s->npart ? s->npart : 1));
    uint8_t* on_gpu = malloc((size_t)(s->npart ? s->npart : 1));
    if (!on_cpu || !on_gpu) {
        free(on_cpu);
        free(on_gpu);
        return hy_fail(HY_ERR_NOMEM, "priority: out of memory");
    }
    for (int32_t p = 0; p < s->npart; p++) {
        int cpu = wanted_kind(s, p) == HY_RT_CPU;
        on_cpu[p] = (uint8_t)cpu;
        on_gpu[p] = (uint8_t)!cpu;
    }
    hy_status st = hy_rt_sim_map_metis(s, on_cpu, 1u << HY_RT_CPU);
    if (!st) st = hy_rt_sim_map_metis(s, on_gpu, 1u << HY_RT_GPU);
    free(on_cpu);
    free(on_gpu);
    return st;
}

static int may_steal(const hy_rt_sim* s, int32_t thief, int32_t p) {
    if (!hetero(s)) return hy_rt_sim_in_affinity(s, thief, p);
    if (s->step < WARMUP_STEPS) return 0;
    if (!hy_rt_sim_in_affinity(s, thief, p)) return 0;
    int cpu = ratio(s, p) < s->threshold;
    return s->m.pu[thief].kind == HY_RT_CPU ? cpu : !cpu;
}

/* The threshold moves by one factor per failed round, but stays within one
 * factor of the partitions' ratios: past them it changes nothing but would
 * take as many rounds to come back. */
static void steal_failed(hy_rt_sim* s, int32_t thief) {
    if (!hetero(s) || s->step < WARMUP_STEPS || !s->npart) return;
    double lo = INFINITY, hi = 0;
    for (int32_t p = 0; p < s->npart; p++) {
        double r = ratio(s, p);
        lo = fmin(lo, r);
        hi = fmax(hi, r);
    }
    if (s->m.pu[thief].kind == HY_RT_CPU)
        s->threshold = fmin(s->threshold * s->threshold_step, hi * s->threshold_step);
    else
        s->threshold = fmax(s->threshold / s->threshold_step, lo / s->threshold_step);
}

const hy_rt_policy_class hy_rt_policy_priority = {
    .name = "priority",
    .description = "affinity stealing plus the CPU/GPU time ratio threshold, after warm-up steps",
    .map = map,
    .may_steal = may_steal,
    .steal_failed = steal_failed,
    .steal_only_if_faster = 1,
};
