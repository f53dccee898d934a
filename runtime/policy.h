/* Integration scheduling policies: plug-ins of the modeled executor
 * (runtime/sim.h), each a const hy_rt_policy_class in its own file, listed
 * in one NULL-ended registry and chosen by name.
 *
 * Registered: round-robin (partition p on PU p mod |PUs| every step, no
 * stealing), static (METIS once, at the first step, then kept; no stealing), ws (round
 * robin when the graph changes, then plain random stealing), affinity (METIS
 * when the graph changes, stealing only from the affinity list), priority
 * (affinity plus the CPU/GPU time ratio threshold, after warm-up steps that
 * measure each partition on each kind), lp (the learned expected-time
 * model and an LP minimising the makespan place whole partitions, METIS
 * arranges each kind's, affinity stealing corrects). */
#ifndef HY_RUNTIME_POLICY_H
#define HY_RUNTIME_POLICY_H

#include "runtime/sim.h"

/* NULL-ended list of every policy class. */
const hy_rt_policy_class* const* hy_rt_policy_list(void);
/* NULL for an unknown name. */
const hy_rt_policy_class* hy_rt_policy_find(const char* name);
/* Like find, but an unknown name gives HY_ERR_INVALID_ARG listing the known ones. */
hy_status hy_rt_policy_lookup(const char* name, const hy_rt_policy_class** out);

extern const hy_rt_policy_class hy_rt_policy_round_robin;
extern const hy_rt_policy_class hy_rt_policy_static;
extern const hy_rt_policy_class hy_rt_policy_ws;
extern const hy_rt_policy_class hy_rt_policy_affinity;
extern const hy_rt_policy_class hy_rt_policy_priority;
extern const hy_rt_policy_class hy_rt_policy_lp;

#endif
