/* hyphys bench integrate: the integration runtime (runtime/) on modeled
 * machines with FEM-shaped workloads (experiments "gpus", "bars", "mixed";
 * bench/integrate_scenes.h), one modeled run as a trace (--trace), and the
 * runtime's own cost on this machine ("overhead", alone with --overhead).
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

#include <errno.h>
#include <math.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "bench/integrate_scenes.h"
#include "cli/cli.h"
#include "runtime/exec.h"
#include "runtime/map.h"
#include "runtime/policy.h"
#include "runtime/trace.h"

void hy_bench_integrate_help(void);
int hy_bench_integrate_main(int argc, char** argv);

#define HANDLES 256
/* Steps left out of the means: priority's warm-up (2 steps) and lp's
 * learning (3) map afresh every step; the means are of the steady state. */
#define WARM_STEPS 4
#define DEFAULT_STEPS 24
#define MAX_STEPS 200

static void empty_task(void* const* bufs, void* arg) {
    (void)bufs;
    (void)arg;
}

static const hy_rt_kind k_empty = {"empty", 2, {HY_RT_RW, HY_RT_R}, empty_task, NULL, 0};

void hy_bench_integrate_help(void) {
    printf("usage: hyphys bench integrate [--json] [--out DIR] [--steps N] [--only LIST] [--fem-costs CSV]\n"
           "                              [--recordings DIR] [--no-plot]\n"
           "       hyphys bench integrate --record SCENE [--param LIST] --out FILE [--skip K] [--steps N]\n"
           "       hyphys bench integrate --overhead [--tasks N] [--threads N] [--repeats R] [--json]\n"
           "       hyphys bench integrate --pus LIST [--policy P] [--objects N] [--steps N] [--json]\n"
           "       hyphys bench integrate --trace FILE [--scene S] [--policy P] [--machine M] [--gpus G]\n"
           "                              [--cpus C] [--block B] [--steps N]\n\n"
           "Modeled experiments (virtual clock, the machines of Hermann et al. 2010;\n"
           "workloads synthetic, with FEM step costs measured here, or --recordings):\n"
           "  gpus   fem64 on hermann8 with 1, 2, 4, 8 GPUs: speedup over one GPU\n"
           "  bars   fem_bars on hermann4, 4 GPUs + 4 CPUs: ms per step by block size\n"
           "  mixed  fem_independent on hermann4 with 0-4 GPUs and 0-4 CPUs: speedup\n"
           "         over one CPU\n"
           "and overhead: the real per-task runtime overhead, (wall - critical path) /\n"
           "tasks, and one METIS map of a 64-partition graph in us. Means are over the\n"
           "steps after the first %d. --only picks experiments (comma list, default\n"
           "all four); --steps defaults to %d. CSV, gnuplot script and PNG of each\n"
           "experiment go to --out DIR (default a new integrate-YYYYMMDD-HHMMSS in the\n"
           "current folder); existing files are never overwritten; --no-plot writes\n"
           "the gnuplot scripts without running gnuplot. The FEM costs are\n"
           "measured at the start (fastest of 9 steps per size, one thread) and written\n"
           "there as fem_costs.csv; --fem-costs CSV reads such a file instead, to make\n"
           "the same figures again (docs/integrate/measured_fem_costs.csv holds the\n"
           "documented run's).\n\n"
           "--recordings DIR: replay DIR/fem64.csv, DIR/fem_independent.csv and\n"
           "DIR/fem_bars_B.csv for B = 512, 1000, 2197, 2744 particles a block\n"
           "(recordings of the real scenes; fem_bars with --param cells=7, 9, 12, 13) in\n"
           "place of the synthetic workloads; a missing file leaves that scene or size\n"
           "synthetic, as the output says (docs/integrate/recorded/ holds the documented\n"
           "run's).\n"
           "--record SCENE [--param LIST] --out FILE: run SCENE (LIST: its parameters,\n"
           "name=value,...) on one thread, K steps (default 0)\n"
           "untimed, then N (default %d) with every solid's integration timed alone\n"
           "before each; write each solid's particles, seconds and CG iterations and the\n"
           "pairs of solids attached or touching, per step (the state hash is the plain run's).\n"
           "--overhead: that experiment alone; --tasks defaults to 100000, --threads\n"
           "to 2, --repeats to 5.\n"
           "--pus LIST [--trace FILE]: real FEM steps (one task per block, --objects blocks of 512-1,000\n"
           "particles, default 16) on real CPU PUs, e.g. cpu:1,cpu:1 (each cpu:N a group\n"
           "of N worker threads), placed by --policy (default lp) with real stealing;\n"
           "wall time per step against one thread, and the state hash checked equal.\n"
           "--trace FILE: one modeled run as Chrome/Perfetto trace events, one track\n"
           "per PU (tasks, transfers, steals) and a scheduler track (maps, METIS\n"
           "calls): --scene fem64|fem_bars|fem_independent (default fem_independent),\n"
           "--policy (default lp), --machine hermann4|hermann8|cpu (default hermann4)\n"
           "with --gpus and --cpus (default 4, 4),\n"
           "--block particles for fem_bars (default 2000).\n",
           WARM_STEPS, DEFAULT_STEPS, DEFAULT_STEPS);
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

/* The overhead experiment. nested: inside the experiments' JSON object
 * (key "overhead"), else the whole output. */
static int run_overhead(long tasks, long threads, long repeats, int json, int nested) {
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
    if (json) printf(nested ? "\"overhead\":{\"tasks\":%ld,\"chain\":%d,\"threads\":[" : "{\"tasks\":%ld,\"chain\":%d,\"overhead\":[", tasks, chain);
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
    if (json) printf("],\"metis_map_us\":%.1f}%s", us, nested ? "" : "\n");
    else printf("metis_map_us,%.1f\n", us);
    free(sub);
    free(run);
    hy_rt_graph_destroy(g);
    if (rc) fprintf(stderr, "hyphys bench integrate: %s\n", hy_last_error());
    return rc;
}

/* ---- the modeled experiments */

#define NOTE "modeled; workload from measured FEM costs, not a recorded scene"

/* Recordings of the real scenes (--recordings DIR), per hy_iscene_kind;
 * NULL: that scene is synthetic. */
static hy_irec g_rec[3];
static const hy_irec* g_use[3];
static char g_rec_path[3][4096];

/* fem_bars at each block size of the bars experiment: the scene's
 * parameter cells (elements a side) and the particles it gives, (cells +
 * 1)^3; the recording of each size is DIR/fem_bars_PARTICLES.csv. */
#define NBARS 4
static const int k_bars_cells[NBARS] = {7, 9, 12, 13};
static const int k_bars_block[NBARS] = {512, 1000, 2197, 2744};
static hy_irec g_bars_rec[NBARS];
static const hy_irec* g_bars_use[NBARS];

/* The recording a run of `kind` replays (NULL: synthetic); fem_bars's by
 * block size. */
static const hy_irec* scene_rec(hy_iscene_kind kind, int block) {
    if (kind != HY_ISCENE_BARS) return g_use[kind];
    for (int b = 0; b < NBARS; b++)
        if (k_bars_block[b] == block) return g_bars_use[b];
    return NULL;
}

/* What a scene's times come from, for the outputs. */
static const char* note(hy_iscene_kind k) {
    static char buf[3][4200];
    if (k == HY_ISCENE_BARS) {
        char sizes[64];
        int n = 0, len = 0;
        const hy_irec* any = NULL;
        for (int b = 0; b < NBARS; b++)
            if (g_bars_use[b]) {
                len += snprintf(sizes + len, sizeof sizes - (size_t)len, "%s%d", n++ ? ", " : "", k_bars_block[b]);
                any = g_bars_use[b];
            }
        if (!any) return NOTE;
        snprintf(buf[k], sizeof buf[k],
                 "modeled; replaying the recorded runs %.3000s/fem_bars_BLOCK.csv for blocks of %s particles%s: %d "
                 "steps of %d solids",
                 g_rec_path[k], sizes, n < NBARS ? " (the other sizes synthetic)" : "",
                 any->nsteps, any->nobj);
        return buf[k];
    }
    if (!g_use[k]) return NOTE;
    snprintf(buf[k], sizeof buf[k], "modeled; replaying the recorded run %.4000s: %d steps of %d solids", g_rec_path[k],
             g_use[k]->nsteps, g_use[k]->nobj);
    return buf[k];
}

typedef struct bench_out {
    const char* dir;
    int json, plot;
    int first;  /* JSON: no member printed yet */
} bench_out;

/* A new file in the output folder; never replaces one ("wx"). */
static FILE* out_file(const bench_out* o, const char* name) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s", o->dir, name);
    FILE* f = fopen(path, "wx");
    if (!f)
        fprintf(stderr, "hyphys bench integrate: cannot create '%s': %s\n", path,
                errno == EEXIST ? "it exists (files are never overwritten; choose another --out)" : strerror(errno));
    return f;
}

static int out_close(FILE* f, const bench_out* o, const char* name) {
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    if (bad) fprintf(stderr, "hyphys bench integrate: %s/%s: write failed\n", o->dir, name);
    return !bad;
}

/* Writes NAME.gp (reads NAME.csv, draws NAME.png) and runs gnuplot on it
 * when there is one. */
static int plot(const bench_out* o, const char* name, const char* script) {
    char gp[64];
    snprintf(gp, sizeof gp, "%s.gp", name);
    FILE* f = out_file(o, gp);
    if (!f) return 0;
    fprintf(f, "# %s: hyphys bench integrate (modeled)\n"
               "set terminal pngcairo noenhanced size %d,460 font 'sans,9'\nset output '%s.png'\n"
               "set datafile separator ','\nset key top left\nset grid\n%s",
            name, strcmp(name, "mixed") ? 720 : 1200, name, script);
    if (!out_close(f, o, gp)) return 0;
    if (!o->plot) return 1;
    if (strchr(o->dir, '\'') || system("command -v gnuplot >/dev/null 2>&1") != 0) {
        fprintf(stderr, "hyphys bench integrate: gnuplot not run; %s/%s is written\n", o->dir, gp);
        return 1;
    }
    FILE* g = popen("gnuplot", "w");
    if (!g) return 1;
    fprintf(g, "cd '%s'\nload '%s'\n", o->dir, gp);
    if (pclose(g) != 0) fprintf(stderr, "hyphys bench integrate: gnuplot failed on %s/%s\n", o->dir, gp);
    return 1;
}

static double steady_mean(const double* ms, int steps) {
    double sum = 0;
    for (int k = WARM_STEPS; k < steps; k++) sum += ms[k];
    return sum / (steps - WARM_STEPS);
}

static void json_key(bench_out* o, const char* key) {
    printf("%s\"%s\":", o->first ? "" : ",", key);
    o->first = 0;
}

/* One run; every run of a scene must give `*want` (0: take it). */
static int run_one(hy_iscene_kind kind, int block, const hy_fem_costs* c, const char* profile, int gpus, int cpus,
                   const char* policy, int steps, double* ms, uint64_t* want, int* same) {
    hy_rt_machine m;
    uint64_t h = 0;
    hy_status s = hy_rt_machine_profile(profile, gpus, cpus, &m);
    if (!s) s = hy_iscene_run(kind, block, c, scene_rec(kind, block), &m, policy, steps, ms, &h, NULL, NULL);
    if (s) {
        fprintf(stderr, "hyphys bench integrate: %s, %s %d+%d, %s: %s\n", hy_iscene_name(kind), profile, gpus, cpus,
                policy, hy_last_error());
        return 0;
    }
    if (!*want) *want = h;
    if (h != *want) *same = 0;
    return 1;
}

static const char* const k_gpus_policies[] = {"round-robin", "static", "ws", "affinity", "priority", "lp"};
static const char* const k_bars_policies[] = {"round-robin", "static", "affinity", "priority", "lp"};
static const char* const k_mixed_policies[] = {"ws", "priority", "lp"};
#define NPOL(a) ((int)(sizeof a / sizeof a[0]))

/* 0 in *lp_ge when lp is slower than priority on some configuration */
static int exp_gpus(bench_out* o, const hy_fem_costs* c, int steps, double* eight_over_one, int* lp_ge) {
    static const int G[4] = {1, 2, 4, 8};
    static double ms[NPOL(k_gpus_policies)][4][MAX_STEPS];
    uint64_t want = 0;
    int same = 1;
    for (int p = 0; p < NPOL(k_gpus_policies); p++)
        for (int g = 0; g < 4; g++)
            if (!run_one(HY_ISCENE_FEM64, 0, c, "hermann8", G[g], 0, k_gpus_policies[p], steps, ms[p][g], &want, &same))
                return 0;
    FILE* f = out_file(o, "gpus.csv");
    FILE* fs = f ? out_file(o, "gpus_steps.csv") : NULL;
    if (!f || !fs) {
        if (f) fclose(f);
        return 0;
    }
    fprintf(f, "gpus,policy,ms,speedup\n");
    fprintf(fs, "gpus,policy,step,ms,speedup\n");
    if (o->json) {
        json_key(o, "gpus");
        printf("[");
    } else {
        printf("gpus: fem64 on hermann8, GPUs only (%s); speedup over one GPU, mean of steps %d-%d\n",
               note(HY_ISCENE_FEM64),
               WARM_STEPS, steps - 1);
    }
    *eight_over_one = INFINITY;
    for (int g = 0; g < 4; g++)
        if (steady_mean(ms[5][g], steps) > steady_mean(ms[4][g], steps) * (1 + 1e-9)) *lp_ge = 0;
    for (int p = 0; p < NPOL(k_gpus_policies); p++)
        for (int g = 0; g < 4; g++) {
            double one = steady_mean(ms[p][0], steps), t = steady_mean(ms[p][g], steps), sp = one / t;
            fprintf(f, "%d,%s,%.4f,%.4f\n", G[g], k_gpus_policies[p], 1e3 * t, sp);
            for (int k = 0; k < steps; k++)
                fprintf(fs, "%d,%s,%d,%.4f,%.4f\n", G[g], k_gpus_policies[p], k, 1e3 * ms[p][g][k],
                        ms[p][0][k] / ms[p][g][k]);
            if (G[g] == 8 && strcmp(k_gpus_policies[p], "round-robin") && strcmp(k_gpus_policies[p], "static") &&
                sp < *eight_over_one)
                *eight_over_one = sp;
            if (o->json)
                printf("%s{\"gpus\":%d,\"policy\":\"%s\",\"speedup\":%.3f,\"ms\":%.4f}", p || g ? "," : "", G[g],
                       k_gpus_policies[p], sp, 1e3 * t);
            else
                printf("  %-12s %d GPUs  %8.3f ms  x%.2f\n", k_gpus_policies[p], G[g], 1e3 * t, sp);
        }
    if (o->json) printf("],\"gpus_same_hash\":%s", same ? "true" : "false");
    else printf("  same state hash for every run: %s\n", same ? "yes" : "NO");
    int ok = out_close(f, o, "gpus.csv") & out_close(fs, o, "gpus_steps.csv");
    ok &= plot(o, "gpus",
               "set title 'fem64 on hermann8 (modeled): speedup over one GPU'\nset xlabel 'GPUs'\n"
               "set ylabel 'speedup'\nset logscale x 2\nset xrange [0.9:9]\nset xtics (1,2,4,8)\nset yrange [0:*]\n"
               "plot for [p in 'round-robin static ws affinity priority lp'] 'gpus.csv' using "
               "(strcol(2) eq p ? $1 : 1/0):4 with linespoints lw 2 title p, x with lines dt 2 lc 'gray' title 'linear'\n");
    return ok && same;
}

static int exp_bars(bench_out* o, const hy_fem_costs* c, int steps, int* fast_ok, int* lp_ge) {
    const int* B = k_bars_block;
    static double ms[NBARS][NPOL(k_bars_policies)][MAX_STEPS];
    int same = 1;
    for (int b = 0; b < NBARS; b++) {
        uint64_t want = 0;
        for (int p = 0; p < NPOL(k_bars_policies); p++)
            if (!run_one(HY_ISCENE_BARS, B[b], c, "hermann4", 4, 4, k_bars_policies[p], steps, ms[b][p], &want, &same))
                return 0;
    }
    FILE* f = out_file(o, "bars.csv");
    if (!f) return 0;
    fprintf(f, "block,policy,ms\n");
    if (o->json) {
        json_key(o, "bars");
        printf("[");
    } else {
        printf("bars: fem_bars on hermann4, 4 GPUs + 4 CPUs (%s); ms per step, mean of steps %d-%d\n",
               note(HY_ISCENE_BARS),
               WARM_STEPS, steps - 1);
    }
    *fast_ok = 1;
    /* policy by policy, so that the plot's lines join */
    for (int p = 0; p < NPOL(k_bars_policies); p++)
        for (int b = 0; b < NBARS; b++)
            fprintf(f, "%d,%s,%.4f\n", B[b], k_bars_policies[p], 1e3 * steady_mean(ms[b][p], steps));
    for (int b = 0; b < NBARS; b++) {
        double t[NPOL(k_bars_policies)];
        for (int p = 0; p < NPOL(k_bars_policies); p++) {
            t[p] = 1e3 * steady_mean(ms[b][p], steps);
            if (o->json)
                printf("%s{\"block\":%d,\"policy\":\"%s\",\"ms\":%.4f}", b || p ? "," : "", B[b], k_bars_policies[p],
                       t[p]);
            else
                printf("  block %4d  %-12s %8.3f ms\n", B[b], k_bars_policies[p], t[p]);
        }
        /* affinity (2) and priority (3) under round-robin (0) and static (1) */
        for (int p = 2; p <= 3; p++)
            if (!(t[p] < t[0] && t[p] < t[1])) *fast_ok = 0;
        if (t[4] > t[3] * (1 + 1e-9)) *lp_ge = 0;
    }
    if (o->json) printf("],\"bars_same_hash\":%s", same ? "true" : "false");
    else printf("  same state hash for every run of a block size: %s\n", same ? "yes" : "NO");
    int ok = out_close(f, o, "bars.csv");
    ok &= plot(o, "bars",
               "set title 'fem_bars on hermann4, 4 GPUs + 4 CPUs (modeled)'\nset xlabel 'particles per block'\n"
               "set ylabel 'ms per step'\nset yrange [0:*]\n"
               "plot for [p in 'round-robin static affinity priority lp'] 'bars.csv' using "
               "(strcol(2) eq p ? $1 : 1/0):3 with linespoints lw 2 title p\n");
    return ok && same;
}

typedef struct mixed_result {
    double sp[NPOL(k_mixed_policies)][5][5]; /* [policy][gpus][cpus] */
} mixed_result;

static int exp_mixed(bench_out* o, const hy_fem_costs* c, int steps, mixed_result* res) {
    static double ms[MAX_STEPS], one_ms[MAX_STEPS];
    uint64_t want = 0;
    int same = 1;
    if (!run_one(HY_ISCENE_INDEPENDENT, 0, c, "hermann4", 0, 1, "static", steps, one_ms, &want, &same)) return 0;
    double one = steady_mean(one_ms, steps);
    FILE* f = out_file(o, "mixed.csv");
    if (!f) return 0;
    fprintf(f, "gpus,cpus,policy,ms,speedup\n");
    if (o->json) {
        json_key(o, "mixed");
        printf("[");
    } else {
        printf("mixed: fem_independent on hermann4 (%s); speedup over one CPU (%.3f ms), mean of steps %d-%d\n",
               note(HY_ISCENE_INDEPENDENT),
               1e3 * one, WARM_STEPS, steps - 1);
    }
    int n = 0;
    for (int p = 0; p < NPOL(k_mixed_policies); p++)
        for (int g = 0; g <= 4; g++)
            for (int cp = 0; cp <= 4; cp++) {
                res->sp[p][g][cp] = 0;
                if (!g && !cp) continue;
                if (!run_one(HY_ISCENE_INDEPENDENT, 0, c, "hermann4", g, cp, k_mixed_policies[p], steps, ms, &want,
                             &same)) {
                    fclose(f);
                    return 0;
                }
                double t = steady_mean(ms, steps), sp = one / t;
                res->sp[p][g][cp] = sp;
                fprintf(f, "%d,%d,%s,%.4f,%.4f\n", g, cp, k_mixed_policies[p], 1e3 * t, sp);
                if (o->json)
                    printf("%s{\"gpus\":%d,\"cpus\":%d,\"policy\":\"%s\",\"speedup\":%.3f}", n++ ? "," : "", g, cp,
                           k_mixed_policies[p], sp);
                else
                    printf("  %-9s %d GPUs %d CPUs  x%.2f\n", k_mixed_policies[p], g, cp, sp);
            }
    if (o->json) printf("],\"mixed_same_hash\":%s", same ? "true" : "false");
    else printf("  same state hash for every run: %s\n", same ? "yes" : "NO");
    int ok = out_close(f, o, "mixed.csv");
    ok &= plot(o, "mixed",
               "set multiplot layout 1,3 title 'fem_independent on hermann4 (modeled): speedup over one CPU'\n"
               "set xlabel 'CPUs'\nset ylabel 'speedup'\nset yrange [0:22]\nset xtics 1\n"
               "do for [p in 'ws priority lp'] {\n  set title p\n"
               "  plot for [g=0:4] 'mixed.csv' using ((strcol(3) eq p && $1 == g) ? $2 : 1/0):5 "
               "with linespoints lw 2 title sprintf('%d GPUs', g)\n}\nunset multiplot\n");
    return ok && same;
}

/* ---- trace */

static int run_trace(const char* path, const char* scene, const char* profile, const char* policy, int gpus, int cpus,
                     int block, int steps, const hy_fem_costs* c) {
    hy_iscene_kind kind;
    if (!strcmp(scene, "fem64")) kind = HY_ISCENE_FEM64;
    else if (!strcmp(scene, "fem_bars")) kind = HY_ISCENE_BARS;
    else if (!strcmp(scene, "fem_independent")) kind = HY_ISCENE_INDEPENDENT;
    else {
        fprintf(stderr, "hyphys bench integrate: unknown scene '%s' (known: fem64, fem_bars, fem_independent)\n",
                scene);
        return HY_EXIT_USAGE;
    }
    hy_rt_machine m;
    hy_rt_trace* t = NULL;
    static double ms[MAX_STEPS];
    hy_rt_step_stats sum;
    uint64_t h;
    hy_status s = hy_rt_machine_profile(profile, gpus, cpus, &m);
    if (!s) s = hy_rt_trace_open(path, "virtual", &t);
    if (!s) s = hy_iscene_run(kind, block, c, scene_rec(kind, block), &m, policy, steps, ms, &h, &sum, t);
    hy_status s2 = hy_rt_trace_close(t);
    if (!s) s = s2;
    if (s) {
        fprintf(stderr, "hyphys bench integrate: %s\n", hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    printf("trace %s: %s on %s %d GPUs + %d CPUs, %s, %d steps (%s): %.3f ms per step, %d steals, "
           "%d METIS calls, state hash %016llx\n",
           path, scene, profile, gpus, cpus, policy, steps, note(kind), 1e3 * sum.makespan / steps, sum.steals, sum.metis_calls,
           (unsigned long long)h);
    return HY_EXIT_OK;
}

/* ---- real CPU PUs */

static int run_real(const char* pus, const char* policy, int steps, int objects, int json, const char* trace_path) {
    static double wall[MAX_STEPS], ref_wall[MAX_STEPS];
    uint64_t h = 0, ref = 0;
    int steals = 0, ref_steals = 0;
    hy_rt_trace* tr = NULL;
    hy_status s = hy_real_fem_run(objects, "cpu:1", "static", steps, ref_wall, &ref, &ref_steals, NULL);
    if (!s && trace_path) s = hy_rt_trace_open(trace_path, "real", &tr);
    if (!s) s = hy_real_fem_run(objects, pus, policy, steps, wall, &h, &steals, tr);
    hy_status s2 = hy_rt_trace_close(tr);
    if (!s) s = s2;
    if (s) {
        fprintf(stderr, "hyphys bench integrate: %s\n", hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    double one = hy_cli_percentile(ref_wall, steps, 50), got = hy_cli_percentile(wall, steps, 50);
    if (json) {
        printf("{\"real\":{\"pus\":");
        hy_cli_json_string(stdout, pus);
        printf(",\"policy\":\"%s\",\"objects\":%d,\"steps\":%d,\"ms\":%.3f,\"one_thread_ms\":%.3f,"
               "\"speedup\":%.3f,\"steals\":%d,\"hash\":\"%016llx\",\"same_hash\":%s}}\n",
               policy, objects, steps, 1e3 * got, 1e3 * one, one / got, steals, (unsigned long long)h,
               h == ref ? "true" : "false");
    } else {
        printf("real: %d FEM blocks, %d steps, PUs %s under %s: %.3f ms per step (median) against %.3f on one "
               "thread, x%.2f, %d steals, state hash %016llx (%s as one thread)\n",
               objects, steps, pus, policy, 1e3 * got, 1e3 * one, one / got, steals, (unsigned long long)h,
               h == ref ? "same" : "NOT the same");
    }
    return h == ref ? HY_EXIT_OK : HY_EXIT_RUNTIME;
}

/* ---- recording a real run */

static int run_record(const char* scene, const char* params, int skip, int steps, const char* out) {
    const char* path = hy_cli_find_scene("bench integrate --record", scene);
    if (!path) return HY_EXIT_USAGE;
    if (!out) {
        fprintf(stderr, "hyphys bench integrate: --record needs --out FILE\n");
        return HY_EXIT_USAGE;
    }
    uint64_t h = 0;
    double t0 = hy_cli_now();
    if (hy_irec_make(path, params, skip, steps, out, &h)) {
        fprintf(stderr, "hyphys bench integrate: %s\n", hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    hy_irec r;
    if (hy_irec_load(out, &r)) {
        fprintf(stderr, "hyphys bench integrate: %s\n", hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    double sum = 0;
    for (int32_t i = 0; i < r.nobj * r.nsteps; i++) sum += r.seconds[i];
    printf("recorded %s%s%s: steps %d-%d, %d solids, %d interacting pairs in all, integration %.3f ms a step (one "
           "thread, objects timed alone), state hash %016llx, %.1f s -> %s\n",
           path, params ? " " : "", params ? params : "", skip + 1, skip + steps, r.nobj, r.pair_start[r.nsteps], 1e3 * sum / r.nsteps, (unsigned long long)h,
           hy_cli_now() - t0, out);
    hy_irec_free(&r);
    return HY_EXIT_OK;
}

static int want_exp(const char* only, const char* name) {
    if (!only) return 1;
    size_t n = strlen(name);
    for (const char* p = only; (p = strstr(p, name)); p += n)
        if ((p == only || p[-1] == ',') && (p[n] == ',' || !p[n])) return 1;
    return 0;
}

static int bench_main(int argc, char** argv) {
    long tasks = 100000, threads = 2, repeats = 5, steps = DEFAULT_STEPS, gpus = 4, cpus = 4, block = 2000,
         objects = 16, skip = 0;
    int json = 0, overhead = 0, no_plot = 0;
    const char *record = NULL, *recordings = NULL, *params = NULL;
    const char *out = NULL, *only = NULL, *trace = NULL, *scene = "fem_independent", *policy = "lp",
               *machine = "hermann4", *pus = NULL,
               *costs_path = NULL;
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
        } else if (!strcmp(a, "--steps") && i + 1 < argc) {
            if (!hy_cli_parse_int(a, argv[++i], 1, MAX_STEPS, &steps)) return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--gpus") && i + 1 < argc) {
            if (!hy_cli_parse_int(a, argv[++i], 0, 8, &gpus)) return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--cpus") && i + 1 < argc) {
            if (!hy_cli_parse_int(a, argv[++i], 0, 8, &cpus)) return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--block") && i + 1 < argc) {
            if (!hy_cli_parse_int(a, argv[++i], 64, 100000, &block)) return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--out") && i + 1 < argc) {
            out = argv[++i];
        } else if (!strcmp(a, "--only") && i + 1 < argc) {
            only = argv[++i];
        } else if (!strcmp(a, "--trace") && i + 1 < argc) {
            trace = argv[++i];
        } else if (!strcmp(a, "--no-plot")) {
            no_plot = 1;
        } else if (!strcmp(a, "--fem-costs") && i + 1 < argc) {
            costs_path = argv[++i];
        } else if (!strcmp(a, "--pus") && i + 1 < argc) {
            pus = argv[++i];
        } else if (!strcmp(a, "--objects") && i + 1 < argc) {
            if (!hy_cli_parse_int(a, argv[++i], 1, HY_ISCENE_MAX_OBJ, &objects)) return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--machine") && i + 1 < argc) {
            machine = argv[++i];
        } else if (!strcmp(a, "--scene") && i + 1 < argc) {
            scene = argv[++i];
        } else if (!strcmp(a, "--policy") && i + 1 < argc) {
            policy = argv[++i];
        } else if (!strcmp(a, "--record") && i + 1 < argc) {
            record = argv[++i];
        } else if (!strcmp(a, "--param") && i + 1 < argc) {
            params = argv[++i];
        } else if (!strcmp(a, "--skip") && i + 1 < argc) {
            if (!hy_cli_parse_int(a, argv[++i], 0, 100000, &skip)) return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--recordings") && i + 1 < argc) {
            recordings = argv[++i];
        } else {
            fprintf(stderr, "hyphys bench integrate: unknown or incomplete option '%s' (try --help)\n", a);
            return HY_EXIT_USAGE;
        }
    }
    if (overhead) return run_overhead(tasks, threads, repeats, json, 0);
    if (record) return run_record(record, params, (int)skip, (int)steps, out);
    for (int k = 0; recordings && k < 3; k++) {
        if (k == HY_ISCENE_BARS) { /* one recording per block size */
            snprintf(g_rec_path[k], sizeof g_rec_path[k], "%s", recordings);
            for (int b = 0; b < NBARS; b++) {
                char path[4200];
                snprintf(path, sizeof path, "%s/fem_bars_%d.csv", recordings, k_bars_block[b]);
                if (access(path, F_OK) != 0) continue; /* that size stays synthetic, as the outputs say */
                if (hy_irec_load(path, &g_bars_rec[b])) {
                    fprintf(stderr, "hyphys bench integrate: %s\n", hy_last_error());
                    return HY_EXIT_RUNTIME;
                }
                g_bars_use[b] = &g_bars_rec[b];
                for (int i = 0; i < g_bars_rec[b].nobj; i++)
                    if (g_bars_rec[b].n[i] != k_bars_block[b]) {
                        fprintf(stderr,
                                "hyphys bench integrate: %s: solid %d has %d particles, not %d (record it with "
                                "--record fem_bars --param cells=%d)\n",
                                path, i, g_bars_rec[b].n[i], k_bars_block[b], k_bars_cells[b]);
                        return HY_EXIT_RUNTIME;
                    }
            }
            continue;
        }
        snprintf(g_rec_path[k], sizeof g_rec_path[k], "%s/%s.csv", recordings, hy_iscene_name((hy_iscene_kind)k));
        if (access(g_rec_path[k], F_OK) != 0) continue; /* that scene stays synthetic, as the outputs say */
        if (hy_irec_load(g_rec_path[k], &g_rec[k])) {
            fprintf(stderr, "hyphys bench integrate: %s\n", hy_last_error());
            return HY_EXIT_RUNTIME;
        }
        g_use[k] = &g_rec[k];
    }
    if (pus) {
        const hy_rt_policy_class* pc;
        if (hy_rt_policy_lookup(policy, &pc)) {
            fprintf(stderr, "hyphys bench integrate: %s\n", hy_last_error());
            return HY_EXIT_USAGE;
        }
        return run_real(pus, policy, (int)steps, (int)objects, json, trace);
    }
    const hy_rt_policy_class* cls;
    if (hy_rt_policy_lookup(policy, &cls)) {
        fprintf(stderr, "hyphys bench integrate: %s\n", hy_last_error());
        return HY_EXIT_USAGE;
    }
    if (!trace && steps <= WARM_STEPS) {
        fprintf(stderr, "hyphys bench integrate: the experiments need --steps above %d (the means leave out the first %d)\n",
                WARM_STEPS, WARM_STEPS);
        return HY_EXIT_USAGE;
    }
    if (only)
        for (const char* p = only; *p;) {
            size_t n = strcspn(p, ",");
            if (!((n == 4 && !strncmp(p, "gpus", 4)) || (n == 4 && !strncmp(p, "bars", 4)) ||
                  (n == 5 && !strncmp(p, "mixed", 5)) || (n == 8 && !strncmp(p, "overhead", 8)))) {
                fprintf(stderr, "hyphys bench integrate: --only '%s': known experiments are gpus, bars, mixed, overhead\n",
                        only);
                return HY_EXIT_USAGE;
            }
            p += n + (p[n] == ',');
        }
    hy_fem_costs costs;
    if (costs_path ? hy_fem_costs_load(costs_path, &costs) : hy_fem_costs_measure(9, &costs)) {
        fprintf(stderr, "hyphys bench integrate: %s FEM costs: %s\n", costs_path ? "reading" : "measuring",
                hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    if (trace) return run_trace(trace, scene, machine, policy, (int)gpus, (int)cpus, (int)block, (int)steps, &costs);

    char dir[64];
    if (!out) {
        time_t now = time(NULL);
        struct tm tm;
        gmtime_r(&now, &tm);
        strftime(dir, sizeof dir, "integrate-%Y%m%d-%H%M%S", &tm);
        if (mkdir(dir, 0777) != 0) {
            fprintf(stderr, "hyphys bench integrate: cannot create '%s': %s\n", dir, strerror(errno));
            return HY_EXIT_RUNTIME;
        }
        out = dir;
    } else if (!hy_cli_make_dirs(out, 0, "hyphys bench integrate")) {
        return HY_EXIT_RUNTIME;
    }
    bench_out o = {out, json, !no_plot, 1};
    /* the measurement, for --fem-costs later (a file read is its own record) */
    FILE* fc = costs_path ? NULL : out_file(&o, "fem_costs.csv");
    if (!costs_path && !fc) return HY_EXIT_RUNTIME;
    if (fc) {
        fprintf(fc, "particles,step_ms,setup_ms,iteration_ms,cg_iterations\n");
        for (int k = 0; k < HY_FEM_COST_SIZES; k++)
            fprintf(fc, "%d,%.4f,%.4f,%.5f,%d\n", costs.particles[k], 1e3 * costs.step[k], 1e3 * costs.setup[k],
                    1e3 * costs.iteration[k], HY_FEM_CG_ITERATIONS);
        if (!out_close(fc, &o, "fem_costs.csv")) return HY_EXIT_RUNTIME;
    }
    if (json) {
        printf("{\"note\":\"modeled\",\"workloads\":{");
        for (int k = 0; k < 3; k++) {
            printf("%s\"%s\":", k ? "," : "", hy_iscene_name((hy_iscene_kind)k));
            hy_cli_json_string(stdout, note((hy_iscene_kind)k));
        }
        printf("},\"out\":");
        hy_cli_json_string(stdout, out);
        printf(",\"fem_costs_from\":");
        hy_cli_json_string(stdout, costs_path ? costs_path : "measured");
        printf(",\"steps\":%ld,\"warm_steps\":%d,\"cg_iterations\":%d,\"fem_costs\":[", steps, WARM_STEPS,
               HY_FEM_CG_ITERATIONS);
        for (int k = 0; k < HY_FEM_COST_SIZES; k++)
            printf("%s{\"particles\":%d,\"step_ms\":%.3f,\"setup_ms\":%.3f,\"iteration_ms\":%.4f}", k ? "," : "",
                   costs.particles[k], 1e3 * costs.step[k], 1e3 * costs.setup[k], 1e3 * costs.iteration[k]);
        printf("]");
        o.first = 0;
    } else {
        printf("FEM step costs %s (one thread, %d CG iterations):\n", costs_path ? costs_path : "measured here",
               HY_FEM_CG_ITERATIONS);
        for (int k = 0; k < HY_FEM_COST_SIZES; k++)
            printf("  %5d particles: step %.3f ms = setup %.3f + %d x iteration %.4f\n", costs.particles[k],
                   1e3 * costs.step[k], 1e3 * costs.setup[k], HY_FEM_CG_ITERATIONS, 1e3 * costs.iteration[k]);
        printf("  fitted: setup %.1f us + %.4f us per particle, iteration %.1f us + %.4f us per particle\n",
               1e6 * costs.setup_a, 1e6 * costs.setup_b, 1e6 * costs.iter_a, 1e6 * costs.iter_b);
    }
    int ok = 1;
    double eight = 0;
    int bars_ok = 0;
    mixed_result mix;
    int have_gpus = 0, have_bars = 0, have_mixed = 0;
    int lp_ge = 1;
    if (want_exp(only, "gpus")) ok &= have_gpus = exp_gpus(&o, &costs, (int)steps, &eight, &lp_ge);
    if (want_exp(only, "bars")) ok &= have_bars = exp_bars(&o, &costs, (int)steps, &bars_ok, &lp_ge);
    if (want_exp(only, "mixed")) ok &= have_mixed = exp_mixed(&o, &costs, (int)steps, &mix);
    if (want_exp(only, "overhead")) {
        if (json) printf(",");
        ok &= run_overhead(tasks, threads, repeats, json, json) == HY_EXIT_OK;
    }
    /* targets */
    double prio44 = 0, sum44 = 0, ws44 = 0, ws40 = 0;
    if (have_mixed) {
        prio44 = mix.sp[1][4][4];
        sum44 = mix.sp[1][4][0] + mix.sp[1][0][4];
        ws44 = mix.sp[0][4][4];
        ws40 = mix.sp[0][4][0];
        for (int g = 0; g <= 4; g++)
            for (int c = 0; c <= 4; c++)
                if ((g || c) && mix.sp[2][g][c] < mix.sp[1][g][c] * (1 - 1e-9)) lp_ge = 0;
    }
    if (json) {
        printf(",\"targets\":{");
        int n = 0;
        if (have_gpus) printf("%s\"gpus8_min_speedup\":%.3f,\"gpus8_at_least_6\":%s", n++ ? "," : "", eight,
                              eight >= 6 ? "true" : "false");
        if (have_bars) printf("%s\"bars_affinity_priority_beat_rr_static\":%s", n++ ? "," : "", bars_ok ? "true" : "false");
        if (have_mixed)
            printf("%s\"mixed_priority_4_4\":%.3f,\"mixed_priority_4_0_plus_0_4\":%.3f,\"mixed_priority_cooperative\":%s,"
                   "\"mixed_ws_4_4\":%.3f,\"mixed_ws_4_0\":%.3f,\"mixed_ws_speed_down\":%s",
                   n++ ? "," : "", prio44, sum44, prio44 > sum44 ? "true" : "false", ws44, ws40,
                   ws44 < ws40 ? "true" : "false");
        if (have_gpus || have_bars || have_mixed)
            printf("%s\"lp_ge_priority_everywhere\":%s", n++ ? "," : "", lp_ge ? "true" : "false");
        printf("}}\n");
    } else {
        printf("targets:\n");
        if (have_gpus) printf("  8 GPUs >= 6x one GPU on fem64 (stealing policies, least): %.2f  %s\n", eight,
                              eight >= 6 ? "met" : "NOT met");
        if (have_bars) printf("  affinity and priority faster than round-robin and static at every block size: %s\n",
                              bars_ok ? "met" : "NOT met");
        if (have_mixed) {
            printf("  priority 4+4 (%.2f) > priority 4+0 + 0+4 (%.2f): %s\n", prio44, sum44,
                   prio44 > sum44 ? "met" : "NOT met");
            printf("  ws 4+4 (%.2f) < ws 4+0 (%.2f): %s\n", ws44, ws40, ws44 < ws40 ? "met" : "NOT met");
        }
        if (have_gpus || have_bars || have_mixed)
            printf("  lp at least as fast as priority on every configuration run: %s\n", lp_ge ? "met" : "NOT met");
        printf("output: %s\n", out);
    }
    return ok ? HY_EXIT_OK : HY_EXIT_RUNTIME;
}

int hy_bench_integrate_main(int argc, char** argv) {
    int rc = bench_main(argc, argv);
    for (int k = 0; k < 3; k++) hy_irec_free(&g_rec[k]);
    for (int b = 0; b < NBARS; b++) hy_irec_free(&g_bars_rec[b]);
    return rc;
}
