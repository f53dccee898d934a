/* The policy registry, options, and the checked assign wrapper. */
#include "sched/policy.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "core/error.h"

static const hy_sched_policy_class* const g_policies[] = {
    &hy_sched_policy_lp, &hy_sched_policy_lau10, &hy_sched_policy_tan09,
    &hy_sched_policy_ws, &hy_sched_policy_ws_exp, &hy_sched_policy_exhaustive, NULL,
};

const hy_sched_policy_class* const* hy_sched_policy_list(void) { return g_policies; }

const hy_sched_policy_class* hy_sched_policy_find(const char* name) {
    if (!name) return NULL;
    for (int i = 0; g_policies[i]; i++)
        if (!strcmp(g_policies[i]->name, name)) return g_policies[i];
    return NULL;
}

double hy_sched_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

double hy_sched_call_time(const hy_sched_policy_class* cls, const hy_sched_problem* problem, int iterations) {
    return HY_SCHED_GATHER_TIME + cls->call_time(problem, iterations);
}

void hy_sched_options_default(hy_sched_options* o) {
    memset(o, 0, sizeof *o);
    o->block = 256;
    o->lau10_threshold = 0.5;
    o->lp_timeout = 1;
    o->lp_max_iterations = 64;
    o->lp_exchange = 0;
    o->lp_polish = 3;
    o->solver = HY_LP_SIMPLEX;
    o->ws_grain = 0;
    o->gpu_guard = 1;
}

static hy_status parse_long(const char* key, const char* v, long lo, long hi, long* out) {
    char* end = NULL;
    errno = 0;
    long x = v ? strtol(v, &end, 10) : 0;
    if (!v || !*v || *end || errno || x < lo || x > hi)
        return hy_fail(HY_ERR_INVALID_ARG, "option %s: expected an integer in [%ld, %ld], got '%s'", key, lo, hi,
                       v ? v : "(none)");
    *out = x;
    return HY_OK;
}

hy_status hy_sched_options_set(hy_sched_options* o, const char* key, const char* value) {
    if (!o || !key) return hy_fail(HY_ERR_INVALID_ARG, "hy_sched_options_set: NULL argument");
    long x = 0;
    hy_status s;
    if (!strcmp(key, "block")) {
        if ((s = parse_long(key, value, 1, 1L << 40, &x))) return s;
        o->block = x > 0x7fffffff ? 0x7fffffff : (int)x;
    } else if (!strcmp(key, "lp-timeout")) {
        if ((s = parse_long(key, value, 0, 2, &x))) return s;
        o->lp_timeout = (int)x;
    } else if (!strcmp(key, "lp-max-iterations")) {
        if ((s = parse_long(key, value, 1, 100000, &x))) return s;
        o->lp_max_iterations = (int)x;
    } else if (!strcmp(key, "lp-exchange")) {
        if ((s = parse_long(key, value, 0, 1, &x))) return s;
        o->lp_exchange = (int)x;
    } else if (!strcmp(key, "lp-polish")) {
        if ((s = parse_long(key, value, 0, 3, &x))) return s;
        o->lp_polish = (int)x;
    } else if (!strcmp(key, "gpu-guard")) {
        if ((s = parse_long(key, value, 0, 1, &x))) return s;
        o->gpu_guard = (int)x;
    } else if (!strcmp(key, "ws-grain")) {
        if ((s = parse_long(key, value, 0, 1L << 30, &x))) return s;
        o->ws_grain = (int)x;
    } else if (!strcmp(key, "lau10-threshold")) {
        char* end = NULL;
        double d = value ? strtod(value, &end) : NAN;
        if (!value || !*value || *end || !isfinite(d) || d < 0)
            return hy_fail(HY_ERR_INVALID_ARG, "option %s: expected a number >= 0, got '%s'", key,
                           value ? value : "(none)");
        o->lau10_threshold = d;
    } else if (!strcmp(key, "solver")) {
        if (value && !strcmp(value, "simplex"))
            o->solver = HY_LP_SIMPLEX;
        else if (value && !strcmp(value, "glpk"))
            o->solver = HY_LP_GLPK;
        else
            return hy_fail(HY_ERR_INVALID_ARG, "option solver: expected simplex or glpk, got '%s'",
                           value ? value : "(none)");
    } else {
        return hy_fail(HY_ERR_INVALID_ARG,
                       "unknown scheduling option '%s' (known: block, gpu-guard, lau10-threshold, lp-exchange, "
                       "lp-polish, lp-timeout, lp-max-iterations, solver, ws-grain)",
                       key);
    }
    return HY_OK;
}

hy_status hy_sched_policy_create(const char* name, const hy_sched_options* options, hy_sched_policy** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_sched_policy_create: NULL out");
    *out = NULL;
    const hy_sched_policy_class* cls = hy_sched_policy_find(name);
    if (!cls) {
        char list[256] = "";
        for (int i = 0; g_policies[i]; i++) {
            strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
            strncat(list, g_policies[i]->name, sizeof list - strlen(list) - 1);
        }
        return hy_fail(HY_ERR_INVALID_ARG, "unknown scheduling policy '%s' (known: %s)", name ? name : "(null)", list);
    }
    if (options && options->solver != HY_LP_SIMPLEX && !hy_sched_lp_have_glpk())
        return hy_fail(HY_ERR_UNSUPPORTED, "policy %s: solver glpk requested but this build has no GLPK", cls->name);
    hy_sched_policy* p = calloc(1, sizeof *p);
    if (!p) return hy_fail(HY_ERR_NOMEM, "out of memory creating policy %s", cls->name);
    p->cls = cls;
    if (options)
        p->options = *options;
    else
        hy_sched_options_default(&p->options);
    if (cls->init) {
        hy_status s = cls->init(p);
        if (s) {
            free(p);
            return s;
        }
    }
    *out = p;
    return HY_OK;
}

void hy_sched_policy_destroy(hy_sched_policy* p) {
    if (!p) return;
    if (p->cls->deinit) p->cls->deinit(p);
    free(p);
}

hy_status hy_sched_policy_assign(hy_sched_policy* p, const hy_sched_problem* problem, hy_sched_assignment* a) {
    if (!p || !a) return hy_fail(HY_ERR_INVALID_ARG, "hy_sched_policy_assign: NULL argument");
    hy_status s = hy_sched_problem_check(problem);
    if (s) return s;
    hy_sched_assignment_clear(a);
    s = p->cls->assign(p, problem, a);
    if (s) return s;
    s = hy_sched_assignment_check(problem, a);
    if (s) {
        hy_error_prefix("policy %s: ", p->cls->name);
        return s;
    }
    if (p->options.gpu_guard) hy_sched_guard_gpus(problem, a);
    a->makespan = hy_sched_makespan(problem, a);
    return HY_OK;
}
