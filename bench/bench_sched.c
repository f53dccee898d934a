/* hyphys bench sched: scheduling quality of the iterative LP (issue 4,
 * item 8, quality half).
 *
 * For each machine size, --sets random job sets (hy_sched_problem_random:
 * job counts log-uniform in [MIN_JOBS, MAX_JOBS] per type, busy times up to
 * the ideal parallel time, one resource idle) over resources built from the
 * Table 1/3 profiles (hy_sched_model_machine): |R| = 3..6 hierarchical (one
 * CPU resource for all 12 cores, plus GPUs) and 13..16 flat (each core a
 * resource, plus GPUs). Each set is scheduled once by `lp` with its default
 * options (time-out on, as in a run) and reported as:
 *   iterations       mean LP solves per call
 *   us_per_call      median wall time of one call, all iterations, in µs
 *                    (us_per_call_mean: the mean)
 *   lfin_over_linit  mean expected makespan of the final integer assignment
 *                    over the objective of the first LP (every setup counted)
 *   gap_to_exhaustive  |R| = 3 only: mean of lp / exhaustive expected
 *                    makespan - 1 (both integer assignments); null elsewhere
 * The first call of each size runs once untimed (warm caches). */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "hyphys/hyphys.h"
#include "sched/policy.h"

void hy_bench_sched_help(void);
int hy_bench_sched_main(int argc, char** argv);

/* Jobs per type in one scheduling call: from a nearly drained queue to a
 * BVH front's worth of leaf pairs. */
#define MIN_JOBS 64
#define MAX_JOBS 16384

typedef struct row {
    int resources;
    int hierarchical;
    double iterations;
    double us_median, us_mean;
    double lfin_over_linit;
    double gap; /* < 0: not computed */
    double gap_bound;
} row;

void hy_bench_sched_help(void) {
    printf("usage: hyphys bench sched [--sets N] [--seed S] [--lp-timeout 0|1] [--json]\n\n"
           "Scheduling quality of the iterative LP policy (lp) on random job sets built\n"
           "from the Kim et al. 2013 Table 1/3 device constants: |R| = 3..6 hierarchical\n"
           "(one CPU resource + GPUs) and 13..16 flat (each CPU core a resource + GPUs).\n"
           "Reports LP iterations per call, microseconds per scheduling call (median over\n"
           "the sets, all iterations), mean L_fin/L_init, and for |R| = 3 the mean gap\n"
           "to the exhaustive policy.\n\n"
           "  --sets N   random job sets per size (default 500)\n"
           "  --seed S   seed of the job sets (default 1)\n"
           "  --lp-timeout 0|1  lp's time-out (stop refining once solving took longer than\n"
           "             the smallest remaining busy time); 1 as in a run (default), 0 makes\n"
           "             the figures other than us_per_call independent of timing\n"
           "  --json     {\"quality\":[{\"resources\":R,\"iterations\":..,\"us_per_call\":..,\n"
           "              \"lfin_over_linit\":..,\"gap_to_exhaustive\":..|null}, ...]}\n\n"
           "exit: 0 ok, 1 runtime failure, 2 bad usage or input\n");
}

static int measure(int resources, int hierarchical, long sets, uint64_t seed, int timeout, row* out) {
    hy_sched_model model;
    if (hy_sched_model_machine(&model, resources, hierarchical)) {
        fprintf(stderr, "hyphys bench sched: %s\n", hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    hy_sched_policy* lp = NULL;
    hy_sched_options o;
    hy_sched_options_default(&o);
    o.lp_timeout = timeout;
    if (hy_sched_policy_create("lp", &o, &lp)) {
        fprintf(stderr, "hyphys bench sched: %s\n", hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    int with_exhaustive = resources == 3 && hierarchical;
    double* us = malloc(sizeof(double) * (size_t)sets);
    if (!us) {
        hy_sched_policy_destroy(lp);
        fprintf(stderr, "hyphys bench sched: out of memory\n");
        return HY_EXIT_RUNTIME;
    }
    hy_sched_problem prob;
    hy_sched_assignment a, e;
    double iters = 0, ratio = 0, gap = 0, gap_bound = 0;
    int rc = HY_EXIT_OK;
    for (long s = -1; s < sets && rc == HY_EXIT_OK; s++) {
        /* s = -1: the untimed warm-up call on set 0 */
        long k = s < 0 ? 0 : s;
        hy_sched_problem_random(&prob, &model, seed * 1000003u + (uint64_t)k * 7919u + (uint64_t)resources,
                                MIN_JOBS, MAX_JOBS);
        double t0 = hy_cli_now();
        hy_status st = hy_sched_policy_assign(lp, &prob, &a);
        double t1 = hy_cli_now();
        if (st) {
            fprintf(stderr, "hyphys bench sched: |R| = %d, set %ld: %s\n", resources, k, hy_last_error());
            rc = HY_EXIT_RUNTIME;
            break;
        }
        if (s < 0) continue;
        us[s] = (t1 - t0) * 1e6;
        iters += a.iterations;
        ratio += a.lp_initial > 0 ? a.makespan / a.lp_initial : 1.0;
        if (with_exhaustive) {
            st = hy_sched_exhaustive_run(&prob, HY_LP_SIMPLEX, 1, &e);
            if (st) {
                fprintf(stderr, "hyphys bench sched: exhaustive, set %ld: %s\n", k, hy_last_error());
                rc = HY_EXIT_RUNTIME;
                break;
            }
            gap += e.makespan > 0 ? a.makespan / e.makespan - 1.0 : 0.0;
            gap_bound += e.lp_initial > 0 ? a.makespan / e.lp_initial - 1.0 : 0.0;
        }
    }
    if (rc == HY_EXIT_OK) {
        double n = (double)sets, sum = 0;
        for (long s = 0; s < sets; s++) sum += us[s];
        out->resources = resources;
        out->hierarchical = hierarchical;
        out->iterations = iters / n;
        out->us_median = hy_cli_percentile(us, sets, 50.0);
        out->us_mean = sum / n;
        out->lfin_over_linit = ratio / n;
        out->gap = with_exhaustive ? gap / n : -1.0;
        out->gap_bound = with_exhaustive ? gap_bound / n : -1.0;
    }
    free(us);
    hy_sched_policy_destroy(lp);
    return rc;
}

int hy_bench_sched_main(int argc, char** argv) {
    long sets = 500, seed = 1, timeout = 1;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (!strcmp(a, "--sets")) {
            if (!hy_cli_parse_int("--sets", i + 1 < argc ? argv[++i] : NULL, 1, 10000000, &sets))
                return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--seed")) {
            if (!hy_cli_parse_int("--seed", i + 1 < argc ? argv[++i] : NULL, 0, 0x7fffffffL, &seed))
                return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--lp-timeout")) {
            if (!hy_cli_parse_int("--lp-timeout", i + 1 < argc ? argv[++i] : NULL, 0, 1, &timeout))
                return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else {
            fprintf(stderr, "hyphys bench sched: unknown option '%s' (try 'hyphys bench sched --help')\n", a);
            return HY_EXIT_USAGE;
        }
    }

    static const struct {
        int resources, hierarchical;
    } sizes[] = {{3, 1}, {4, 1}, {5, 1}, {6, 1}, {13, 0}, {14, 0}, {15, 0}, {16, 0}};
    enum { NSIZES = sizeof sizes / sizeof sizes[0] };
    row rows[NSIZES];
    for (int k = 0; k < NSIZES; k++) {
        int rc = measure(sizes[k].resources, sizes[k].hierarchical, sets, (uint64_t)seed, (int)timeout, &rows[k]);
        if (rc) return rc;
    }

    if (json) {
        printf("{\"quality\":[");
        for (int k = 0; k < NSIZES; k++) {
            const row* r = &rows[k];
            printf("%s{\"resources\":%d,\"hierarchical\":%s,\"sets\":%ld,\"lp_timeout\":%d,\"iterations\":%.4f,\"us_per_call\":%.3f,"
                   "\"us_per_call_mean\":%.3f,\"lfin_over_linit\":%.6f,\"gap_to_exhaustive\":",
                   k ? "," : "", r->resources, r->hierarchical ? "true" : "false", sets, (int)timeout, r->iterations,
                   r->us_median, r->us_mean, r->lfin_over_linit);
            if (r->gap >= 0)
                printf("%.6f,\"gap_to_lp_bound\":%.6f}", r->gap, r->gap_bound);
            else
                printf("null,\"gap_to_lp_bound\":null}");
        }
        printf("]}\n");
        return HY_EXIT_OK;
    }
    printf("scheduling quality of lp: %ld random job sets per size, seed %ld, %d..%d jobs per type, "
           "lp time-out %s\n",
           sets, seed, MIN_JOBS, MAX_JOBS, timeout ? "on" : "off");
    printf("%4s %-12s %10s %12s %12s %15s %17s\n", "|R|", "kind", "iterations", "us/call(med)", "us/call(mean)",
           "L_fin/L_init", "gap_exhaustive");
    for (int k = 0; k < NSIZES; k++) {
        const row* r = &rows[k];
        char g[32] = "-";
        if (r->gap >= 0) snprintf(g, sizeof g, "%.4f%%", 100.0 * r->gap);
        printf("%4d %-12s %10.2f %12.2f %12.2f %15.4f %17s\n", r->resources,
               r->hierarchical ? "hierarchical" : "flat", r->iterations, r->us_median, r->us_mean,
               r->lfin_over_linit, g);
    }
    return HY_EXIT_OK;
}
