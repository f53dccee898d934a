/* round-robin: partition p on PU p mod |PUs| every step; no stealing. The
 * baseline that ignores costs, data and history. */
#include "runtime/policy.h"

static hy_status map(hy_rt_sim* s, int changed) {
    (void)changed;
    hy_rt_sim_map_round_robin(s, NULL, 3u);
    return HY_OK;
}

const hy_rt_policy_class hy_rt_policy_round_robin = {
    .name = "round-robin",
    .description = "partition p on PU p mod |PUs| every step, no stealing",
    .map = map,
};
