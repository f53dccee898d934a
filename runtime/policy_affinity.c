/* affinity: METIS when the partition graph changes, each PU starting from
 * the partitions it ran last step otherwise; a PU steals a partition only if
 * it owns one that shares data with it (the partition's affinity list), so
 * migrations keep interacting objects together. */
#include "runtime/policy.h"

static hy_status map(hy_rt_sim* s, int changed) {
    if (!changed) return HY_OK;
    s->stats.remapped = 1;
    return hy_rt_sim_map_metis(s, NULL, 3u);
}

static int may_steal(const hy_rt_sim* s, int32_t thief, int32_t p) { return hy_rt_sim_in_affinity(s, thief, p); }

const hy_rt_policy_class hy_rt_policy_affinity = {
    .name = "affinity",
    .description = "METIS map when the graph changes, stealing within the affinity list",
    .map = map,
    .may_steal = may_steal,
};
