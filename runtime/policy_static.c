/* static: METIS maps the partitions once, at the first step that has any,
 * and the map is kept whatever happens after: the partition graph changing
 * (contacts appearing or vanishing) and the costs drifting leave it as it
 * is, and nothing is stolen. Partitions that appear later go where the
 * sim's fix-up puts new ones (the least loaded PU that can run them). The
 * baseline the stealing policies are measured against: a good map of the
 * first step's costs, never corrected. */
#include "runtime/policy.h"

static hy_status map(hy_rt_sim* s, int changed) {
    (void)changed;
    for (int32_t p = 0; p < s->npart; p++)
        if (s->owner[p] >= 0) return HY_OK;
    s->stats.remapped = 1;
    return hy_rt_sim_map_metis(s, NULL, 3u);
}

const hy_rt_policy_class hy_rt_policy_static = {
    .name = "static",
    .description = "METIS map once, at the first step, then kept; no stealing",
    .map = map,
};
