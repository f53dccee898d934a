/* hyphys bench sched: scheduling quality of the iterative LP (the quality
 * half).
 *
 * For each machine size, --sets random job sets (hy_sched_problem_random:
 * job counts log-uniform in [MIN_JOBS, MAX_JOBS] per type, busy times up to
 * the ideal parallel time, one resource idle) over resources built from the
 * Table 1/3 profiles (hy_sched_model_machine): |R| = 3..6 hierarchical (one
 * CPU resource for all 12 cores, plus GPUs) and 13..16 flat (each core a
 * resource, plus GPUs). Each set is scheduled once by `lp` with its default
 * options (time-out on, solving time read from the wall clock) and reported as:
 *   iterations       mean LP solves per call
 *   us_per_call      median wall time of one call, all iterations, in µs
 *                    (us_per_call_mean: the mean)
 *   lfin_over_linit  mean expected makespan of the final integer assignment
 *                    over the objective of the first LP (every setup counted)
 *   gap_to_exhaustive  |R| = 3 only: mean of lp / exhaustive expected
 *                    makespan - 1 (both integer assignments); null elsewhere
 * The first call of each size runs once untimed (warm caches).
 *
 * The throughput half (--part throughput) is bench/sched_throughput.c. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"
#include "hyphys/hyphys.h"
#include "bench/recording.h"
#include "bench/sched_throughput.h"
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
    printf("usage: hyphys bench sched [--part quality|throughput|all] [--json]\n"
           "                         [--sets N] [--seed S] [--lp-timeout 0|1|2]\n"
           "                         [--scenes LIST] [--frames N] [--record-dir DIR] [--out DIR]\n"
           "                         [--sched-time model|measured] [--thickness M] [--threads N]\n\n"
           "Scheduling quality of the iterative LP policy (lp) on random job sets built\n"
           "from the Kim et al. 2013 Table 1/3 device constants: |R| = 3..6 hierarchical\n"
           "(one CPU resource + GPUs) and 13..16 flat (each CPU core a resource + GPUs).\n"
           "Reports LP iterations per call, microseconds per scheduling call (median over\n"
           "the sets, all iterations), mean L_fin/L_init, and for |R| = 3 the mean gap\n"
           "to the exhaustive policy.\n\n"
           "  --sets N   random job sets per size (default 500)\n"
           "  --seed S   seed of the job sets (default 1)\n"
           "  --lp-timeout 0|1|2  lp's time-out (stop refining once solving took longer than\n"
           "             the smallest remaining busy time): 1 solving time from the wall clock\n"
           "             (default), 2 the modeled solving time (as in a run: repeatable),\n"
           "             0 off; 0 and 2 make the figures other than us_per_call\n"
           "             independent of timing\n"
           "  --json     {\"quality\":[{\"resources\":R,\"iterations\":..,\"us_per_call\":..,\n"
           "              \"lfin_over_linit\":..,\"gap_to_exhaustive\":..|null}, ...],\n"
           "              \"throughput\":[{\"scene\":..,\"machine\":..,\"config\":..,\"policy\":..,\n"
           "              \"fps\":..,\"fluid_bound_fps\":..,\"idle\":{RESOURCE:ratio,..},\n"
           "              \"setup\":{RESOURCE:share,..},\"transfer\":{RESOURCE:share,..}}, ...],\n"
           "              \"throughput_targets\":{..}}\n"
           "  --part P   quality, throughput or all (default all)\n\n"
           "Throughput: job streams recorded from real runs of each scene (TRAVERSE and\n"
           "LEAF jobs per traversal round, saved as DIR/NAME/jobs.csv on first use and\n"
           "made again when its first two frames are not what this build makes) run\n"
           "through the framework's own event loop on modeled machines (virtual clock,\n"
           "as `hyphys run --clock virtual`): Machine 1 = quad-core CPU, +GTX285,\n"
           "+GTX480 (Kim et al. Fig. 4); Machine 2 = two hexa-core CPUs, +GTX285, +Tesla\n"
           "C2075, +GTX480, +GTX580 (Fig. 5); every registered policy but the\n"
           "evaluation-only exhaustive (lp, lau10, tan09, ws, ws-exp). Reports FPS, the\n"
           "fluid bound (each frame's jobs spread over the resources at their per-job\n"
           "costs with no setups, transfers or round order: no policy beats it), and per\n"
           "resource the idle ratio and the shares of time in batch setups and in\n"
           "moving jobs another resource made (the model's transfers); writes\n"
           "OUT/sched_throughput.csv and .png (gnuplot).\n"
           "  --scenes LIST     comma-separated scenes (default cloth_ball,nbody,fracture)\n"
           "  --frames N        recorded frame pairs per scene (default 20)\n"
           "  --record-dir DIR  recordings in DIR/NAME (default hyphys-recordings), made on\n"
           "                    first use as by `hyphys bench ccd`\n"
           "  --out DIR         folder the CSV and PNG go to, made if missing (default: a new\n"
           "                    folder bench-sched-YYYYMMDD-HHMMSS here; 'none' = neither;\n"
           "                    --out-dir is the same option)\n"
           "  --sched-time T    charge each scheduler call its modeled time (model, the\n"
           "                    default: repeatable) or its measured wall time (measured)\n"
           "  --call-cost       end the text output with each policy's mean measured call\n"
           "                    time against the time charged, per |R|, and at |R| = 6 per\n"
           "                    number of types with jobs (calibrates the call-time model;\n"
           "                    the measured figures vary run to run)\n"
           "  --thickness M     contact distance of the replay (default 0.001)\n"
           "  --threads N       threads for recording the streams (default 2)\n\n"
           "exit: 0 ok, 1 runtime failure, 2 bad usage or input\n");
}

/* A new folder for the CSV and plot in the current folder, named for the
 * time (bench-sched-YYYYMMDD-HHMMSS, then -2, -3, ... when taken), so a run
 * never writes over earlier results or tracked files. 1 on success. */
static int new_out_dir(char* out, size_t cap) {
    char stamp[32];
    time_t now = time(NULL);
    struct tm tm;
    if (!gmtime_r(&now, &tm) || !strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &tm))
        snprintf(stamp, sizeof stamp, "%lld", (long long)now);
    for (int k = 1; k < 1000; k++) {
        if (k == 1) snprintf(out, cap, "bench-sched-%s", stamp);
        else snprintf(out, cap, "bench-sched-%s-%d", stamp, k);
        if (mkdir(out, 0777) == 0) return 1;
        if (errno != EEXIST) break;
    }
    fprintf(stderr, "hyphys bench sched: cannot create an output folder '%s' here: %s (name one with --out)\n", out,
            strerror(errno));
    return 0;
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
    o.gpu_guard = 0; /* lp's own answers against the exhaustive optimum */
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

/* Split a comma-separated list into o->scenes (pointers into `buf`). */
static int parse_scenes(char* buf, hy_tp_options* o) {
    o->scene_count = 0;
    for (char* tok = strtok(buf, ","); tok; tok = strtok(NULL, ",")) {
        if (o->scene_count >= (int)(sizeof o->scenes / sizeof o->scenes[0])) {
            fprintf(stderr, "hyphys bench sched: --scenes: at most %d scenes\n",
                    (int)(sizeof o->scenes / sizeof o->scenes[0]));
            return 0;
        }
        if (*tok) o->scenes[o->scene_count++] = tok;
    }
    if (o->scene_count == 0) {
        fprintf(stderr, "hyphys bench sched: --scenes: expected a comma-separated list of scenes\n");
        return 0;
    }
    return 1;
}

int hy_bench_sched_main(int argc, char** argv) {
    long sets = 500, seed = 1, timeout = 1, frames = 20, threads = 2;
    int json = 0, do_quality = 1, do_throughput = 1;
    static char scenes_buf[4096] = "cloth_ball,nbody,fracture";
    const char* out_dir = NULL; /* NULL: a new folder (new_out_dir) */
    char out_buf[256];
    hy_tp_options tp;
    memset(&tp, 0, sizeof tp);
    tp.record_dir = NULL; /* the default cache, hyphys-recordings/NAME (recorded over when stale) */
    tp.thickness = 0.001;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (!strcmp(a, "--sets")) {
            if (!hy_cli_parse_int("--sets", i + 1 < argc ? argv[++i] : NULL, 1, 10000000, &sets))
                return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--seed")) {
            if (!hy_cli_parse_int("--seed", i + 1 < argc ? argv[++i] : NULL, 0, 0x7fffffffL, &seed))
                return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--lp-timeout")) {
            if (!hy_cli_parse_int("--lp-timeout", i + 1 < argc ? argv[++i] : NULL, 0, 2, &timeout))
                return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--frames")) {
            if (!hy_cli_parse_int("--frames", i + 1 < argc ? argv[++i] : NULL, 1, 100000, &frames))
                return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--threads")) {
            if (!hy_cli_parse_int("--threads", i + 1 < argc ? argv[++i] : NULL, 1, 256, &threads))
                return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--call-cost")) {
            tp.call_cost = 1;
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--part") || !strcmp(a, "--scenes") || !strcmp(a, "--record-dir") ||
                   !strcmp(a, "--out") || !strcmp(a, "--out-dir") || !strcmp(a, "--sched-time") || !strcmp(a, "--thickness")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "hyphys bench sched: %s needs a value\n", a);
                return HY_EXIT_USAGE;
            }
            const char* v = argv[++i];
            if (!strcmp(a, "--part")) {
                do_quality = !strcmp(v, "quality") || !strcmp(v, "all");
                do_throughput = !strcmp(v, "throughput") || !strcmp(v, "all");
                if (!do_quality && !do_throughput) {
                    fprintf(stderr, "hyphys bench sched: --part: expected quality, throughput or all, got '%s'\n", v);
                    return HY_EXIT_USAGE;
                }
            } else if (!strcmp(a, "--scenes")) {
                if (strlen(v) >= sizeof scenes_buf) {
                    fprintf(stderr, "hyphys bench sched: --scenes: list too long\n");
                    return HY_EXIT_USAGE;
                }
                snprintf(scenes_buf, sizeof scenes_buf, "%s", v);
            } else if (!strcmp(a, "--record-dir")) {
                tp.record_dir = v;
            } else if (!strcmp(a, "--out") || !strcmp(a, "--out-dir")) {
                out_dir = v;
            } else if (!strcmp(a, "--sched-time")) {
                if (strcmp(v, "model") && strcmp(v, "measured")) {
                    fprintf(stderr, "hyphys bench sched: --sched-time: expected model or measured, got '%s'\n", v);
                    return HY_EXIT_USAGE;
                }
                tp.measured = !strcmp(v, "measured");
            } else {
                char* end = NULL;
                tp.thickness = strtod(v, &end);
                if (!end || *end || !(tp.thickness >= 0.0 && tp.thickness < 1e3)) {
                    fprintf(stderr, "hyphys bench sched: --thickness: '%s' is not a distance in [0, 1000)\n", v);
                    return HY_EXIT_USAGE;
                }
            }
        } else {
            fprintf(stderr, "hyphys bench sched: unknown option '%s' (try 'hyphys bench sched --help')\n", a);
            return HY_EXIT_USAGE;
        }
    }
    if (!parse_scenes(scenes_buf, &tp)) return HY_EXIT_USAGE;
    /* Checked before any measuring: the quality part and a first recording
     * take minutes, and a bad scene or output folder would only show after
     * them. */
    for (int k = 0; do_throughput && k < tp.scene_count; k++) {
        const char* path = hy_cli_resolve_scene(tp.scenes[k]);
        if (access(path, R_OK) != 0) {
            fprintf(stderr, "hyphys bench sched: --scenes: cannot read scene '%s': %s\n", path, strerror(errno));
            return HY_EXIT_USAGE;
        }
    }
    if (do_throughput && !out_dir) {
        if (!new_out_dir(out_buf, sizeof out_buf)) return HY_EXIT_RUNTIME;
        out_dir = out_buf;
    } else if (do_throughput && strcmp(out_dir, "none") != 0) {
        if (!hy_cli_make_dirs(out_dir, 0, "hyphys bench sched")) return HY_EXIT_USAGE;
        if (!hy_cli_writable_dir(out_dir)) {
            fprintf(stderr, "hyphys bench sched: --out: '%s' is not a folder it can write to\n", out_dir);
            return HY_EXIT_USAGE;
        }
    }
    tp.frames = frames;
    tp.threads = (int)threads;

    static const struct {
        int resources, hierarchical;
    } sizes[] = {{3, 1}, {4, 1}, {5, 1}, {6, 1}, {13, 0}, {14, 0}, {15, 0}, {16, 0}};
    enum { NSIZES = sizeof sizes / sizeof sizes[0] };
    row rows[NSIZES];
    for (int k = 0; k < NSIZES && do_quality; k++) {
        int rc = measure(sizes[k].resources, sizes[k].hierarchical, sets, (uint64_t)seed, (int)timeout, &rows[k]);
        if (rc) return rc;
    }
    hy_tp_row* tp_rows = NULL;
    int tp_count = 0;
    if (do_throughput) {
        int rc = hy_tp_run(&tp, &tp_rows, &tp_count);
        if (rc) return rc;
        if (strcmp(out_dir, "none") != 0) {
            char path[4200];
            snprintf(path, sizeof path, "%s/sched_throughput.csv", out_dir);
            int ok = hy_tp_write_csv(path, tp_rows, tp_count);
            snprintf(path, sizeof path, "%s/sched_throughput.png", out_dir);
            if (ok) hy_tp_plot(path, tp_rows, tp_count);
            if (!ok) {
                free(tp_rows);
                return HY_EXIT_RUNTIME;
            }
            fprintf(stderr, "hyphys bench sched: wrote %s/sched_throughput.csv and .png\n", out_dir);
        }
    }

    if (json) {
        printf("{");
        if (do_quality) {
            printf("\"quality\":[");
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
            printf("]");
        }
        if (do_throughput) {
            printf("%s\"throughput\":[", do_quality ? "," : "");
            hy_tp_print_json(stdout, tp_rows, tp_count);
            printf("],\"throughput_targets\":");
            hy_tp_print_targets_json(stdout, tp_rows, tp_count);
        }
        printf("}\n");
        free(tp_rows);
        return HY_EXIT_OK;
    }
    if (do_quality) {
        printf("scheduling quality of lp: %ld random job sets per size, seed %ld, %d..%d jobs per type, "
               "lp time-out %s\n",
               sets, seed, MIN_JOBS, MAX_JOBS, timeout == 1 ? "on (wall clock)" : timeout == 2 ? "on (modeled)" : "off");
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
    }
    if (do_throughput) {
        if (do_quality) printf("\n");
        hy_tp_print_text(stdout, tp_rows, tp_count, &tp);
    }
    free(tp_rows);
    return HY_EXIT_OK;
}
