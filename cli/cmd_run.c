/* hyphys run: step a scene headless and report timing per phase. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/progress.h"
#include "cli/sched_opts.h"
#include "engine/check.h"
#include "engine/export.h"
#include "hyphys/hyphys.h"

static void help(void) {
    printf("usage: hyphys run SCENE [options]\n\n"
           "Step SCENE (a .json file, or a name from scenes/: cloth_ball, nbody, fracture, ...)\n"
           "headless and print a summary of milliseconds per step per phase.\n\n"
           "options:\n"
           "  --frames N          steps to run (default 100)\n"
           "  --threads N         worker threads, 0 = one per core (default: the scene's)\n"
           "  --no-collisions     integration only (skip collision detection and response)\n"
           "  --csv FILE          write one row per step (ms per phase, counts)\n"
           "  --export-frames DIR write the topology once and positions per frame (docs/guide/FRAMES.md)\n"
           "  --json              print the summary as JSON instead of a table\n"
           "  --quiet             no progress output\n"
           "  --check             test the initial state and every step's end state for intersecting\n"
           "                      triangles (exact predicates, whole scene); the first offending step\n"
           "                      is reported with its objects and triangles and ends the run (exit 1)\n"
           "  --param NAME=VALUE  give the scene's parameter NAME this value (repeatable; see the\n"
           "                      scene's \"parameters\", docs/guide/SCENES.md)\n"
           "  --strict            refuse a scene whose objects intersect or lie closer than their\n"
           "                      contact distance at the start (exit 2); by default that is a warning\n"
           "  --integrate-sched P integration runtime policy placing the objects' integrate tasks on the\n"
           "                      integration PUs: round-robin, static, ws, affinity, priority, lp (default)\n"
           "  --integrate-pus N   integration PUs, real CPU workers of one thread each (1: the calling\n"
           "                      thread with the pool; the policy places from 2 on; default: one per\n"
           "                      thread when the scene holds 2 solids per thread or more, else 1);\n"
           "                      same state for any P and N\n"
           "  --integrate-devices LIST  GPUs as integration PUs too (cuda:0,cuda:1), one feeding\n"
           "                      thread each: FEM, mass-spring and cloth integrates placed there run\n"
           "                      their model's passes on the GPU (same state); a GPU not present is\n"
           "                      said in one line and left out\n"
           HY_CLI_SCHED_HELP
           HY_CLI_FAULT_HELP
           "\nThe summary names the policy and the resources (modeled ones marked), the median\n"
           "time of a step's collision jobs on the framework's clock and each resource's share.\n\n"
           "exit codes: 0 ok, 1 runtime failure (e.g. the state became NaN), 2 bad usage or input\n");
}

typedef struct run_opts {
    const char* scene;
    long frames, threads;
    int collisions; /* -1 = as the scene says */
    const char* csv;
    const char* export_dir;
    int json, quiet;
    int check, strict;
    const char* integrate_sched; /* NULL = lp */
    long integrate_pus;
    const char* integrate_devices; /* NULL = none */
    char params[1024]; /* --param values, comma-separated */
    hy_cli_sched sched;
} run_opts;

static int parse(int argc, char** argv, run_opts* o) {
    memset(o, 0, sizeof *o);
    o->frames = 100;
    o->threads = -1;
    o->collisions = -1;
    o->integrate_pus = 0; /* chosen per step (hy_world_set_integrate_sched) */
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        int so = hy_cli_sched_option(&o->sched, "run", argc, argv, &i);
        if (so < 0) return 0;
        if (so > 0) continue;
        if (!strcmp(a, "--frames")) {
            if (!hy_cli_parse_int("--frames", i + 1 < argc ? argv[++i] : NULL, 1, 100000000, &o->frames)) return 0;
        } else if (!strcmp(a, "--threads")) {
            if (!hy_cli_parse_int("--threads", i + 1 < argc ? argv[++i] : NULL, 0, 256, &o->threads)) return 0;
        } else if (!strcmp(a, "--csv")) {
            if (i + 1 >= argc) return fprintf(stderr, "hyphys run: --csv needs a file\n"), 0;
            o->csv = argv[++i];
        } else if (!strcmp(a, "--export-frames")) {
            if (i + 1 >= argc) return fprintf(stderr, "hyphys run: --export-frames needs a folder\n"), 0;
            o->export_dir = argv[++i];
        } else if (!strcmp(a, "--json")) {
            o->json = 1;
        } else if (!strcmp(a, "--quiet")) {
            o->quiet = 1;
        } else if (!strcmp(a, "--check")) {
            o->check = 1;
        } else if (!strcmp(a, "--param")) {
            const char* v = i + 1 < argc ? argv[++i] : NULL;
            size_t used = strlen(o->params);
            if (!v || !strchr(v, '=') || strchr(v, ','))
                return fprintf(stderr, "hyphys run: --param needs NAME=VALUE\n"), 0;
            if (used + strlen(v) + 2 > sizeof o->params)
                return fprintf(stderr, "hyphys run: --param values too long in all\n"), 0;
            snprintf(o->params + used, sizeof o->params - used, "%s%s", used ? "," : "", v);
        } else if (!strcmp(a, "--strict")) {
            o->strict = 1;
        } else if (!strcmp(a, "--no-collisions")) {
            o->collisions = 0;
        } else if (!strcmp(a, "--integrate-sched")) {
            if (i + 1 >= argc) return fprintf(stderr, "hyphys run: --integrate-sched needs a policy\n"), 0;
            o->integrate_sched = argv[++i];
        } else if (!strcmp(a, "--integrate-pus")) {
            if (!hy_cli_parse_int("--integrate-pus", i + 1 < argc ? argv[++i] : NULL, 1, 32, &o->integrate_pus))
                return 0;
        } else if (!strcmp(a, "--integrate-devices")) {
            if (i + 1 >= argc) return fprintf(stderr, "hyphys run: --integrate-devices needs a list (cuda:0)\n"), 0;
            o->integrate_devices = argv[++i];
        } else if (a[0] == '-') {
            fprintf(stderr, "hyphys run: unknown option '%s' (see hyphys run --help)\n", a);
            return 0;
        } else if (!o->scene) {
            o->scene = a;
        } else {
            fprintf(stderr, "hyphys run: unexpected argument '%s'\n", a);
            return 0;
        }
    }
    if (!o->scene) {
        fprintf(stderr, "hyphys run: missing SCENE (see hyphys run --help)\n");
        return 0;
    }
    return 1;
}

/* The rate and time left are those of the recent steps (cli/progress.h). */
static void progress(const hy_cli_progress* pr, long done, long total, int tty) {
    double sps = hy_cli_progress_rate(pr);
    double eta = hy_cli_progress_eta(pr, total);
    if (eta < 0.0) eta = 0.0;
    if (tty) {
        int width = 30, filled = (int)((double)width * (double)done / (double)total);
        char bar[64];
        for (int i = 0; i < width; i++) bar[i] = i < filled ? '#' : '.';
        bar[width] = '\0';
        fprintf(stderr, "\r[%s] %ld/%ld frames  %.1f steps/s  ETA %.0f s   ", bar, done, total, sps, eta);
        if (done == total) fputc('\n', stderr);
    } else {
        fprintf(stderr, "frame %ld/%ld  %.1f steps/s  ETA %.0f s\n", done, total, sps, eta);
    }
    fflush(stderr);
}

/* Objects that start intersecting or closer than their contact distance:
 * a warning naming the pairs (--strict makes the load refuse them).
 * Returns nonzero only when the check itself failed. */
static int warn_overlaps(const char* path, const hy_world* w) {
    char msg[1024];
    int64_t n = 0;
    if (hy_overlap_report(w, HY_OVERLAP_CLEARANCE, 4, msg, sizeof msg, &n)) {
        fprintf(stderr, "hyphys run: %s\n", hy_last_error());
        return 1;
    }
    if (n > 0) fprintf(stderr, "hyphys run: warning: %s: objects overlap in the initial state: %s\n", path, msg);
    return 0;
}

/* --check: the state after `step` steps must hold no intersecting
 * triangles. Returns the exit code (HY_EXIT_RUNTIME on a finding). */
static int check_step(const hy_world* w, long step, int tty) {
    char msg[1024];
    int64_t n = 0;
    if (hy_overlap_report(w, HY_OVERLAP_INTERSECTING, 4, msg, sizeof msg, &n)) {
        fprintf(stderr, "%shyphys run: --check: %s\n", tty ? "\n" : "", hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    if (n == 0) return HY_EXIT_OK;
    fprintf(stderr, "%shyphys run: --check: step %ld ends with intersecting triangles: %s\n", tty ? "\n" : "", step,
            msg);
    return HY_EXIT_RUNTIME;
}

static int run_main(int argc, char** argv) {
    run_opts o;
    if (!parse(argc, argv, &o)) return HY_EXIT_USAGE;
    const char* path = hy_cli_find_scene("run", o.scene);
    if (!path) return HY_EXIT_USAGE;
    hy_scene_options so = hy_scene_options_default();
    if (o.threads >= 0) so.threads = (int32_t)o.threads;
    so.collisions = o.collisions;
    so.strict = o.strict;
    so.parameters = o.params;
    hy_world* w = NULL;
    hy_status s = hy_scene_load(path, &so, &w);
    if (s) {
        fprintf(stderr, "hyphys run: %s\n", hy_last_error());
        return s == HY_ERR_NOMEM ? HY_EXIT_RUNTIME : HY_EXIT_USAGE;
    }
    if (!o.strict && warn_overlaps(path, w)) {
        hy_world_destroy(w);
        return HY_EXIT_RUNTIME;
    }
    int threads = hy_cli_threads(w);
    int32_t bonds_initial = hy_cli_bonds(w);
    if (!o.quiet && !o.json)
        fprintf(stderr, "loaded %s: %d triangles, %d vertices, %d objects\n", path, hy_cli_triangles(w),
                hy_cli_vertices(w), hy_cli_objects(w));
    char sched_desc[1024] = "";
    int rc0 = hy_cli_sched_apply(&o.sched, "run", w, o.quiet || o.json, sched_desc, sizeof sched_desc);
    if (rc0) {
        hy_world_destroy(w);
        return rc0;
    }
    if (!o.quiet && !o.json) fprintf(stderr, "scheduling: %s\n", sched_desc);
    if ((o.integrate_sched || o.integrate_pus != 0) &&
        hy_world_set_integrate_sched(w, o.integrate_sched ? o.integrate_sched : "lp", (int32_t)o.integrate_pus)) {
        fprintf(stderr, "hyphys run: %s\n", hy_last_error());
        hy_world_destroy(w);
        return HY_EXIT_USAGE;
    }
    if (o.integrate_devices) {
        hy_integrate_stats is;
        if (hy_world_set_integrate_devices(w, o.integrate_devices) || hy_world_get_integrate_stats(w, &is)) {
            fprintf(stderr, "hyphys run: %s\n", hy_last_error());
            hy_world_destroy(w);
            return HY_EXIT_USAGE;
        }
        if (is.fallback[0]) fprintf(stderr, "hyphys run: %s\n", is.fallback);
    }

    FILE* csv = NULL;
    if (o.csv) {
        csv = fopen(o.csv, "w");
        if (!csv) {
            fprintf(stderr, "hyphys run: cannot write '%s': %s\n", o.csv, strerror(errno));
            hy_world_destroy(w);
            return HY_EXIT_USAGE;
        }
        fprintf(csv, "step");
        for (int p = 0; p < HY_PHASE_COUNT; p++) fprintf(csv, ",ms_%s", hy_phase_name((hy_phase)p));
        fprintf(csv, ",ms_total,cg_iterations,cg_residual,cg_capped,candidates,exact_tests,contacts,bonds_broken\n");
    }
    if (o.export_dir) {
        /* A folder that cannot be made or written in is the user's path
         * (exit 2); a write that fails after that, a full disk, is a
         * failure at run time (exit 1). */
        int made = hy_cli_make_dirs(o.export_dir, 0, "hyphys run: --export-frames");
        if (!made || !hy_cli_writable_dir(o.export_dir)) {
            if (made) fprintf(stderr, "hyphys run: --export-frames '%s': %s\n", o.export_dir, strerror(errno));
            if (csv) fclose(csv);
            hy_world_destroy(w);
            return HY_EXIT_USAGE;
        }
        /* An earlier export there goes first (its frames past this run's
         * end would otherwise pass for this run's); source.txt says what
         * the frames are of (engine/export.h). */
        hy_export_source src;
        if (hy_export_clear(o.export_dir) || hy_export_source_of(path, w, &src) ||
            hy_export_topology(w, o.export_dir) || hy_export_frame(w, o.export_dir, 0) ||
            hy_export_source_write(o.export_dir, path, &src)) {
            if (*hy_last_error()) fprintf(stderr, "hyphys run: %s\n", hy_last_error());
            if (csv) fclose(csv);
            hy_world_destroy(w);
            return HY_EXIT_RUNTIME;
        }
    }

    double* ms = calloc((size_t)o.frames * (HY_PHASE_COUNT + 3), sizeof(double));
    /* The cloth solve: iterations per step (row HY_PHASE_COUNT + 2 of ms),
     * the largest final residual, and the steps that ended short of the
     * tolerance, named once on stderr. */
    hy_world_def wdef;
    hy_world_get_def(w, &wdef);
    double cg_residual_max = 0.0;
    long cg_capped_steps = 0;
    hy_resource_stats res_total[32], res_step[32];
    memset(res_total, 0, sizeof res_total);
    int64_t bytes_up[32], bytes_down[32], step_up[32], step_down[32]; /* per resource, summed over the steps */
    memset(bytes_up, 0, sizeof bytes_up);
    memset(bytes_down, 0, sizeof bytes_down);
    hy_sched_stats sst;
    memset(&sst, 0, sizeof sst);
    double sched_ms_total = 0.0;
    int64_t sched_calls = 0;
    int32_t nres = 0;
    if (!ms) {
        fprintf(stderr, "hyphys run: out of memory\n");
        hy_world_destroy(w);
        return HY_EXIT_RUNTIME;
    }
    int tty = hy_cli_is_tty();
    int check_failed = o.check && check_step(w, 0, tty && !o.quiet) != HY_EXIT_OK;
    int rc = check_failed ? HY_EXIT_RUNTIME : HY_EXIT_OK;
    long done = 0;
    int exporting = o.export_dir != NULL;
    double t0 = hy_cli_now(), last_report = t0;
    hy_cli_progress pr;
    hy_cli_progress_start(&pr, t0);
    hy_world_def wd; /* the scene's step */
    hy_world_get_def(w, &wd);
    int failures_said = 0;
    for (long f = 0; f < o.frames && !check_failed; f++) {
        s = hy_world_step(w, wd.time_step, wd.substeps);
        hy_cli_sched_failures("run", w, &failures_said);
        if (s) {
            if (tty && !o.quiet) fputc('\n', stderr);
            fprintf(stderr, "hyphys run: frame %ld: %s\n", f + 1, hy_last_error());
            rc = HY_EXIT_RUNTIME;
            break;
        }
        hy_step_stats st;
        hy_world_get_stats(w, &st);
        for (int p = 0; p < HY_PHASE_COUNT; p++) ms[(size_t)p * (size_t)o.frames + (size_t)f] = st.ms[p];
        ms[(size_t)HY_PHASE_COUNT * (size_t)o.frames + (size_t)f] = st.ms_total;
        hy_world_get_sched_stats(w, &sst, res_step, 32, &nres); /* w and the arrays are set: cannot fail */
        ms[(size_t)(HY_PHASE_COUNT + 1) * (size_t)o.frames + (size_t)f] = sst.makespan_ms;
        sched_ms_total += sst.scheduler_ms;
        sched_calls += sst.calls;
        hy_world_get_transfer_bytes(w, step_up, step_down, 32, NULL);
        for (int r = 0; r < nres && r < 32; r++) {
            bytes_up[r] += step_up[r];
            bytes_down[r] += step_down[r];
        }
        for (int r = 0; r < nres && r < 32; r++) {
            if (f == 0) res_total[r] = res_step[r];
            else {
                res_total[r].busy_ms += res_step[r].busy_ms;
                res_total[r].transfer_ms += res_step[r].transfer_ms;
                res_total[r].traverse_jobs += res_step[r].traverse_jobs;
                res_total[r].leaf_jobs += res_step[r].leaf_jobs;
            }
        }
        ms[(size_t)(HY_PHASE_COUNT + 2) * (size_t)o.frames + (size_t)f] = st.cg_iterations;
        if (st.cg_relative_residual > cg_residual_max) cg_residual_max = st.cg_relative_residual;
        if (st.cg_capped > 0 && cg_capped_steps++ == 0) {
            if (tty && !o.quiet && !o.json) fputc('\n', stderr);
            fprintf(stderr,
                    "hyphys run: step %ld: the cloth solve ended short of its tolerance (relative residual %.3g > "
                    "cg_tolerance %.3g after %d CG iterations, cap %d); further such steps are counted in the "
                    "summary\n",
                    f + 1, st.cg_relative_residual, wdef.cg_tolerance, st.cg_iterations, wdef.cg_max_iterations);
        }
        done = f + 1;
        if (csv) {
            fprintf(csv, "%ld", f + 1);
            for (int p = 0; p < HY_PHASE_COUNT; p++) fprintf(csv, ",%.4f", st.ms[p]);
            fprintf(csv, ",%.4f,%d,%.3e,%d,%" PRId64 ",%" PRId64 ",%" PRId64 ",%d\n", st.ms_total, st.cg_iterations,
                    st.cg_relative_residual, st.cg_capped, st.candidates, st.exact_tests, st.contacts,
                    st.bonds_broken);
        }
        /* a frame that cannot be written ends the export, not the run:
         * what is computed still gets its summary (exit 1) */
        if (exporting && hy_export_frame(w, o.export_dir, (int32_t)(f + 1))) {
            if (tty && !o.quiet) fputc('\n', stderr);
            fprintf(stderr, "hyphys run: frame %ld: %s (export stopped; the run goes on)\n", f + 1, hy_last_error());
            exporting = 0;
            rc = HY_EXIT_RUNTIME;
        }
        if (o.check && check_step(w, done, tty && !o.quiet) != HY_EXIT_OK) {
            check_failed = 1;
            rc = HY_EXIT_RUNTIME;
            break;
        }
        double t = hy_cli_now();
        hy_cli_progress_add(&pr, done, t);
        if (!o.quiet && !o.json && (t - last_report > (tty ? 0.2 : 5.0) || done == o.frames)) {
            progress(&pr, done, o.frames, tty);
            last_report = t;
        }
    }
    /* Output files: a buffered write that failed (a full disk) shows at the
     * flush, so fclose's answer counts */
    if (csv) {
        int bad = ferror(csv), closed = fclose(csv), e = errno;
        if (bad || closed != 0) {
            fprintf(stderr, "hyphys run: writing '%s' failed: %s\n", o.csv, closed ? strerror(e) : "write error");
            rc = HY_EXIT_RUNTIME;
        }
    }
    if (hy_world_close_trace(w)) {
        fprintf(stderr, "hyphys run: %s\n", hy_last_error());
        rc = HY_EXIT_RUNTIME;
    }

    /* Summary: what was computed is reported even after a failure. */
    char hash[32];
    snprintf(hash, sizeof hash, "%016" PRIx64, hy_cli_hash(w));
    if (o.json) {
        printf("{\"scene\":");
        hy_cli_json_string(stdout, o.scene);
        printf(",\"triangles\":%d", hy_cli_triangles(w));
        int32_t tets = 0, particles = 0;
        hy_world_get_tet_counts(w, &tets, &particles);
        if (tets > 0) printf(",\"tetrahedra\":%d,\"particles\":%d", tets, particles);
        printf(",\"frames\":%ld,\"threads\":%d,\"ms_per_step\":{", done, threads);
        for (int p = 0; p <= HY_PHASE_COUNT; p++) {
            const double* v = ms + (size_t)p * (size_t)o.frames;
            printf("%s\"%s\":{\"median\":%.4f,\"p95\":%.4f}", p ? "," : "",
                   p == HY_PHASE_COUNT ? "total" : hy_phase_name((hy_phase)p), hy_cli_percentile(v, done, 50),
                   hy_cli_percentile(v, done, 95));
        }
        const double* cm = ms + (size_t)(HY_PHASE_COUNT + 1) * (size_t)o.frames;
        double ccd_sum = 0.0;
        for (long f = 0; f < done; f++) ccd_sum += cm[f];
        printf("},\"sched\":{\"policy\":\"%s\",\"clock\":\"%s\",\"ccd_ms\":{\"median\":%.4f,\"p95\":%.4f},"
               "\"scheduler_ms_per_step\":%.4f,\"calls_per_step\":%.2f,\"resources\":[",
               sst.policy, sst.virtual_clock ? "virtual" : "real", hy_cli_percentile(cm, done, 50),
               hy_cli_percentile(cm, done, 95), done ? sched_ms_total / (double)done : 0.0,
               done ? (double)sched_calls / (double)done : 0.0);
        for (int r = 0; r < nres && r < 32; r++)
            printf("%s{\"name\":\"%s\",\"modeled\":%s,\"busy_ms\":%.4f,\"transfer_ms\":%.4f,\"share\":%.4f,"
                   "\"traverse_jobs\":%lld,\"leaf_jobs\":%lld,\"proc_us\":{\"traverse\":%.6f,\"leaf\":%.6f},"
                   "\"bytes_per_step\":{\"up\":%.1f,\"down\":%.1f}}",
                   r ? "," : "", res_total[r].name, res_total[r].modeled ? "true" : "false", res_total[r].busy_ms,
                   res_total[r].transfer_ms, ccd_sum > 0 ? res_total[r].busy_ms / ccd_sum : 0.0,
                   (long long)res_total[r].traverse_jobs, (long long)res_total[r].leaf_jobs, res_step[r].proc_us[0],
                   res_step[r].proc_us[1], done ? (double)bytes_up[r] / (double)done : 0.0,
                   done ? (double)bytes_down[r] / (double)done : 0.0);
        printf("]},\"bonds\":{\"initial\":%d,\"broken\":%d}", bonds_initial,
               bonds_initial - hy_cli_bonds(w));
        const double* it = ms + (size_t)(HY_PHASE_COUNT + 2) * (size_t)o.frames;
        double it_max = 0.0;
        for (long f = 0; f < done; f++) it_max = it[f] > it_max ? it[f] : it_max;
        printf(",\"cg\":{\"iterations\":{\"median\":%.1f,\"max\":%.0f},\"residual_max\":%.3e,"
               "\"tolerance\":%.3e,\"capped_steps\":%ld}",
               hy_cli_percentile(it, done, 50), it_max, cg_residual_max, wdef.cg_tolerance, cg_capped_steps);
        hy_integrate_stats ist;
        if (!hy_world_get_integrate_stats(w, &ist)) {
            printf(",\"integration\":{\"policy\":");
            hy_cli_json_string(stdout, ist.policy);
            printf(",\"pus\":%d,\"gpus\":%d,\"last_step_tasks\":[", ist.pus, ist.gpus);
            for (int32_t q = 0; q < ist.pus && q < HY_INTEGRATE_MAX_PUS; q++) printf("%s%d", q ? "," : "", ist.tasks[q]);
            printf("],\"last_step_bytes\":[");
            for (int32_t q = 0; q < ist.pus && q < HY_INTEGRATE_MAX_PUS; q++)
                printf("%s%lld", q ? "," : "", (long long)ist.bytes[q]);
            printf("],\"last_step_batched\":%d,\"last_step_batch_products\":%d,\"last_step_resident\":%d,"
                   "\"last_step_wide\":%d,\"fallback\":",
                   ist.batched, ist.batch_products, ist.batch_resident, ist.wide_tasks);
            hy_cli_json_string(stdout, ist.fallback);
            printf("}");
        }
        printf(",\"state_hash\":\"%s\",\"ok\":%s}\n", hash, rc ? "false" : "true");
    } else {
        printf("\nscene %s: %d triangles, %ld frames, %d threads\n", o.scene, hy_cli_triangles(w), done,
               threads);
        printf("%-10s %12s %12s\n", "phase", "median ms", "p95 ms");
        for (int p = 0; p <= HY_PHASE_COUNT; p++) {
            const double* v = ms + (size_t)p * (size_t)o.frames;
            printf("%-10s %12.3f %12.3f\n", p == HY_PHASE_COUNT ? "total" : hy_phase_name((hy_phase)p),
                   hy_cli_percentile(v, done, 50), hy_cli_percentile(v, done, 95));
        }
        const double* cm = ms + (size_t)(HY_PHASE_COUNT + 1) * (size_t)o.frames;
        double ccd_sum = 0.0;
        for (long f = 0; f < done; f++) ccd_sum += cm[f];
        if (nres > 0) {
            printf("collision jobs: %s\n", sched_desc);
            printf("  median %.3f ms per step on the %s clock, %.1f scheduler calls per step (%.3f ms)\n",
                   hy_cli_percentile(cm, done, 50), sst.virtual_clock ? "virtual" : "real",
                   done ? (double)sched_calls / (double)done : 0.0, done ? sched_ms_total / (double)done : 0.0);
            for (int r = 0; r < nres && r < 32; r++)
                printf("  %-22s busy %5.1f%%  %10lld TRAVERSE %12lld LEAF\n", res_total[r].name,
                       ccd_sum > 0 ? 100.0 * res_total[r].busy_ms / ccd_sum : 0.0,
                       (long long)res_total[r].traverse_jobs, (long long)res_total[r].leaf_jobs);
        }
        if (bonds_initial > 0)
            printf("bonds: %d at the start, %d broken\n", bonds_initial, bonds_initial - hy_cli_bonds(w));
        const double* it = ms + (size_t)(HY_PHASE_COUNT + 2) * (size_t)o.frames;
        double it_max = 0.0;
        for (long f = 0; f < done; f++) it_max = it[f] > it_max ? it[f] : it_max;
        if (it_max > 0)
            printf("cloth solve: CG iterations median %.0f, max %.0f; largest relative residual %.3g "
                   "(tolerance %.3g); %ld step%s short of it\n",
                   hy_cli_percentile(it, done, 50), it_max, cg_residual_max, wdef.cg_tolerance, cg_capped_steps,
                   cg_capped_steps == 1 ? "" : "s");
        printf("state hash %s\n", hash);
    }
    free(ms);
    hy_world_destroy(w);
    return rc;
}

const hy_command hy_cmd_run = {"run", "step a scene headless; timing per phase", run_main, help};
