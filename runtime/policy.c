/* The integration policy registry. */
#include "runtime/policy.h"

#include <string.h>

static const hy_rt_policy_class* const g_policies[] = {
    &hy_rt_policy_round_robin, &hy_rt_policy_static, &hy_rt_policy_ws,
    &hy_rt_policy_affinity,    &hy_rt_policy_priority, &hy_rt_policy_lp, NULL,
};

const hy_rt_policy_class* const* hy_rt_policy_list(void) { return g_policies; }

const hy_rt_policy_class* hy_rt_policy_find(const char* name) {
    if (!name) return NULL;
    for (int i = 0; g_policies[i]; i++)
        if (!strcmp(g_policies[i]->name, name)) return g_policies[i];
    return NULL;
}

hy_status hy_rt_policy_lookup(const char* name, const hy_rt_policy_class** out) {
    *out = hy_rt_policy_find(name);
    if (*out) return HY_OK;
    char list[256] = "";
    for (int i = 0; g_policies[i]; i++) {
        strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
        strncat(list, g_policies[i]->name, sizeof list - strlen(list) - 1);
    }
    return hy_fail(HY_ERR_INVALID_ARG, "unknown integration policy '%s' (known: %s)", name ? name : "(null)", list);
}
