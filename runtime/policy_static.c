/* static: METIS maps the partitions when the partition graph changes; the
 * map is kept otherwise and nothing is stolen. */
#include "runtime/policy.h"

static hy_status map(hy_rt_sim* s, int changed) {
    if (!changed) return HY_OK;
    s->stats.remapped = 1;
    return hy_rt_sim_map_metis(s, NULL, 3u);
}

const hy_rt_policy_class hy_rt_policy_static = {
    .name = "static",
    .description = "METIS map when the graph changes, no stealing",
    .map = map,
};
