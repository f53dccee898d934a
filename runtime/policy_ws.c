/* ws: round robin when the partition graph changes, then plain random work
 * stealing of any ready partition; stolen partitions stay with the thief. */
#include "runtime/policy.h"

static hy_status map(hy_rt_sim* s, int changed) {
    if (!changed) return HY_OK;
    s->stats.remapped = 1;
    hy_rt_sim_map_round_robin(s, NULL, 3u);
    return HY_OK;
}

static int may_steal(const hy_rt_sim* s, int32_t thief, int32_t p) {
    (void)s;
    (void)thief;
    (void)p;
    return 1;
}

const hy_rt_policy_class hy_rt_policy_ws = {
    .name = "ws",
    .description = "round robin when the graph changes, then random stealing of any ready partition",
    .map = map,
    .may_steal = may_steal,
};
