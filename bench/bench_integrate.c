/* hyphys bench integrate --overhead: the integration runtime's own cost on
 * this machine (runtime/).
 *
 * Per-task overhead: a graph of --tasks empty tasks over 256 handles (task t
 * reads and writes handle t mod 256 and reads handle 7t+3 mod 256, so every
 * task has dependencies of all three kinds) is submitted and run by the real
 * CPU executor, --repeats times per thread count. Reported per task:
 *   submit_ns  building the graph (reset, every submission, dependency inference)
 *   run_ns     (run wall time - critical path) / tasks, the critical path being
 *              the longest dependency chain times one empty call's time
 *   total_ns   the two together
 * min and median over the repeats.
 *
 * METIS mapping: one hy_rt_map of a 64-partition graph (a 4x4x4 grid of
 * objects, each sharing a 7.2 kB handle with each neighbour, a stand-in of
 * the size of fem64's graph) onto 8 PUs, median of 50 calls, in µs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "runtime/exec.h"
#include "runtime/map.h"

void hy_bench_integrate_help(void);
int hy_bench_integrate_main(int argc, char** argv);

#define HANDLES 256

static void empty_task(void* const* bufs, void* arg) {
    (void)bufs;
    (void)arg;
}

static const hy_rt_kind k_empty = {"empty", 2, {HY_RT_RW, HY_RT_R}, empty_task, NULL};

void hy_bench_integrate_help(void) {
    printf("usage: hyphys bench integrate --overhead [--tasks N] [--threads N] [--repeats R] [--json]\n\n"
           "The integration runtime's own cost on this machine: per-task overhead of\n"
           "empty tasks with dependencies on the real CPU executor, (wall - critical\n"
           "path) / tasks, for 1..N threads (default 2), and the cost of one METIS map\n"
           "of a 64-partition graph in µs. --tasks defaults to 100000, --repeats to 5.\n");
}

static hy_status submit_all(hy_rt_graph* g, const int32_t* h, int32_t n) {
    hy_rt_graph_reset(g);
    for (int32_t t = 0; t < n; t++) {
        int32_t args[2] = {h[t % HANDLES], h[(7 * t + 3) % HANDLES]};
        hy_status s = hy_rt_graph_submit(g, &k_empty, t % 64, 0, NULL, args, NULL);
        if (s) return s;
    }
    return HY_OK;
}

/* Longest chain of tasks (edges go from lower to higher indices). */
static int32_t longest_chain(const hy_rt_graph* g) {
    int32_t* depth = calloc((size_t)g->ntasks, sizeof *depth);
    int32_t best = 0;
    if (!depth) return 0;
    for (int32_t t = 0; t < g->ntasks; t++) {
        depth[t] += 1;
        if (depth[t] > best) best = depth[t];
        for (int32_t e = g->tasks[t].succ_head; e >= 0; e = g->edges[e].next)
            if (depth[g->edges[e].to] < depth[t]) depth[g->edges[e].to] = depth[t];
    }
    free(depth);
    return best;
}

static double metis_map_us(void) {
    enum { S = 4, NV = S * S * S };
    hy_rt_pedge e[3 * NV];
    double cost[NV], speed[8];
    int32_t part[NV], ne = 0;
    for (int v = 0; v < NV; v++) {
        int x = v % S, y = (v / S) % S, z = v / (S * S);
        cost[v] = 1.0 + 0.1 * (v % 5);
        if (x + 1 < S) e[ne++] = (hy_rt_pedge){v, v + 1, 7200};
        if (y + 1 < S) e[ne++] = (hy_rt_pedge){v, v + S, 7200};
        if (z + 1 < S) e[ne++] = (hy_rt_pedge){v, v + S * S, 7200};
    }
    for (int p = 0; p < 8; p++) speed[p] = 6.0;
    double t[50];
    for (int i = 0; i < 50; i++) {
        double t0 = hy_cli_now();
        if (hy_rt_map(NV, cost, ne, e, 8, speed, part, NULL)) return -1;
        t[i] = hy_cli_now() - t0;
    }
    return 1e6 * hy_cli_percentile(t, 50, 50);
}

int hy_bench_integrate_main(int argc, char** argv) {
    long tasks = 100000, threads = 2, repeats = 5;
    int json = 0, overhead = 0;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (!strcmp(a, "--overhead")) {
            overhead = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--tasks") && i + 1 < argc) {
            if (!hy_cli_parse_int(a, argv[++i], 1000, 10000000, &tasks)) return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--threads") && i + 1 < argc) {
            if (!hy_cli_parse_int(a, argv[++i], 1, 256, &threads)) return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--repeats") && i + 1 < argc) {
            if (!hy_cli_parse_int(a, argv[++i], 1, 1000, &repeats)) return HY_EXIT_USAGE;
        } else {
            fprintf(stderr, "hyphys bench integrate: unknown or incomplete option '%s' (try --help)\n", a);
            return HY_EXIT_USAGE;
        }
    }
    if (!overhead) {
        fprintf(stderr, "hyphys bench integrate: only --overhead is available (try --help)\n");
        return HY_EXIT_USAGE;
    }
    static double handle_data[HANDLES];
    int32_t h[HANDLES];
    hy_rt_graph* g = NULL;
    hy_status s = hy_rt_graph_create(&g);
    for (int i = 0; i < HANDLES && !s; i++) s = hy_rt_graph_register(g, &handle_data[i], sizeof(double), &h[i]);
    if (!s) s = submit_all(g, h, (int32_t)tasks);
    if (s) {
        fprintf(stderr, "hyphys bench integrate: %s\n", hy_last_error());
        hy_rt_graph_destroy(g);
        return HY_EXIT_RUNTIME;
    }
    /* one empty call, through a pointer the compiler cannot see through */
    void (*volatile fn)(void* const*, void*) = empty_task;
    double c0 = hy_cli_now();
    for (long i = 0; i < tasks; i++) fn(NULL, NULL);
    double call = (hy_cli_now() - c0) / (double)tasks;
    int32_t chain = longest_chain(g);
    double critical = call * chain;
    double* sub = malloc((size_t)repeats * sizeof *sub);
    double* run = malloc((size_t)repeats * sizeof *run);
    if (!sub || !run) {
        free(sub);
        free(run);
        hy_rt_graph_destroy(g);
        return HY_EXIT_RUNTIME;
    }
    if (json) printf("{\"tasks\":%ld,\"chain\":%d,\"overhead\":[", tasks, chain);
    else printf("threads,tasks,chain,submit_ns_min,submit_ns_median,run_ns_min,run_ns_median,total_ns_median\n");
    int rc = HY_EXIT_OK;
    for (long th = 1; th <= threads && rc == HY_EXIT_OK; th++) {
        hy_rt_exec* e;
        if (hy_rt_exec_create((int)th, &e)) {
            rc = HY_EXIT_RUNTIME;
            break;
        }
        hy_rt_exec_run(e, g); /* warm: threads started, buffers sized */
        for (long r = 0; r < repeats; r++) {
            double t0 = hy_cli_now();
            s = submit_all(g, h, (int32_t)tasks);
            double t1 = hy_cli_now();
            if (!s) s = hy_rt_exec_run(e, g);
            double t2 = hy_cli_now();
            if (s) rc = HY_EXIT_RUNTIME;
            sub[r] = 1e9 * (t1 - t0) / (double)tasks;
            run[r] = 1e9 * (t2 - t1 - critical) / (double)tasks;
        }
        hy_rt_exec_destroy(e);
        double sm = hy_cli_percentile(sub, repeats, 50), rm = hy_cli_percentile(run, repeats, 50);
        if (json)
            printf("%s{\"threads\":%ld,\"submit_ns\":%.1f,\"run_ns\":%.1f,\"total_ns\":%.1f}", th > 1 ? "," : "", th,
                   sm, rm, sm + rm);
        else
            printf("%ld,%ld,%d,%.1f,%.1f,%.1f,%.1f,%.1f\n", th, tasks, chain, hy_cli_percentile(sub, repeats, 0), sm,
                   hy_cli_percentile(run, repeats, 0), rm, sm + rm);
    }
    double us = metis_map_us();
    if (json) printf("],\"metis_map_us\":%.1f}\n", us);
    else printf("metis_map_us,%.1f\n", us);
    free(sub);
    free(run);
    hy_rt_graph_destroy(g);
    if (rc) fprintf(stderr, "hyphys bench integrate: %s\n", hy_last_error());
    return rc;
}
