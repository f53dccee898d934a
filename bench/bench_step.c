/* hyphys bench step: the simulation's own step timed over a scene's whole
 * sequence.
 *
 * The scene is loaded and stepped frame after frame as `hyphys run` does;
 * every figure comes from the step itself (hy_world_get_stats: integrate,
 * refit, traverse, response, commit), so this is the cost a user of the
 * viewer or of the library pays, contacts and all, not a replay. By
 * default the whole sequence runs (scene_info.c: cloth_ball 300 frames
 * through the fall, the drape and the ball turning under the cloth, and so
 * on), so the figures cover the frames in contact, which cost the most.
 *
 * After each step, outside its timing, the step hooks run: the bodies'
 * kinetic energy for the CSV, and with --check the whole-scene test for
 * intersecting triangles. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/recording.h"
#include "bench/scene_info.h"
#include "cli/cli.h"
#include "engine/check.h"
#include "hyphys/hyphys.h"

void hy_bench_step_help(void);
int hy_bench_step_main(int argc, char** argv);

#define WHO "hyphys bench step"

/* One frame's figures: the step's stats and what the hooks add. */
typedef struct step_row {
    hy_step_stats st;
    int capped;            /* a cloth solve of the step ended short of its tolerance (step_capped) */
    int32_t bonds;         /* bonds intact after the step */
    double kinetic_energy; /* of the rigid bodies after the step, J (energy_hook) */
} step_row;

/* The command's options, as parsed. */
typedef struct step_opts {
    const char* scene;
    const char* csv_path; /* NULL: no CSV */
    long threads, frames; /* frames 0: the scene's sequence */
    int json, quiet;
    int check; /* --check: no step may end with intersecting triangles */
} step_opts;

/* A step hook: setup before the first step (it sees the options, so a
 * hook an option turns on leaves *ctx NULL when it is off: it is then not
 * called), a call after each step, outside the timed step, that may fill
 * its part of the row, and a teardown. init and after_step return a CLI
 * exit code. */
typedef struct step_hook {
    const char* name;
    int (*init)(void** ctx, const hy_world* w, const step_opts* o);
    int (*after_step)(void* ctx, const hy_world* w, long frame, step_row* row);
    void (*fini)(void* ctx);
} step_hook;

/* Kinetic energy of the rigid bodies, translation and rotation:
 * m |v|^2 / 2 + w . L / 2. Cloth is left out (its vertex masses are not
 * in the public API); it shows when a scene's bodies come to rest. */
typedef struct energy_ctx {
    int32_t count;
    hy_body_id* ids;
    double* mass;
} energy_ctx;

static int energy_init(void** ctx, const hy_world* w, const step_opts* o) {
    (void)o;
    energy_ctx* e = calloc(1, sizeof *e);
    int32_t n = hy_cli_objects(w);
    if (e) e->ids = malloc(sizeof *e->ids * (size_t)(n > 0 ? n : 1));
    if (e) e->mass = malloc(sizeof *e->mass * (size_t)(n > 0 ? n : 1));
    if (!e || !e->ids || !e->mass) {
        if (e) free(e->ids);
        free(e);
        fprintf(stderr, WHO ": out of memory\n");
        return HY_EXIT_RUNTIME;
    }
    *ctx = e;
    for (int32_t i = 0; i < n; i++) {
        hy_object_id id;
        hy_object_kind kind;
        hy_body_id body;
        hy_mass_properties mp;
        if (hy_world_get_object(w, i, &id) || hy_object_get_kind(w, id, &kind)) continue;
        if (kind != HY_OBJECT_BODY || hy_object_as_body(w, id, &body) || hy_body_get_mass_properties(w, body, &mp))
            continue;
        e->ids[e->count] = body;
        e->mass[e->count++] = mp.mass;
    }
    return HY_EXIT_OK;
}

static int energy_after(void* ctx, const hy_world* w, long frame, step_row* row) {
    (void)frame;
    const energy_ctx* e = ctx;
    double k = 0.0;
    for (int32_t i = 0; i < e->count; i++) {
        double v[3], om[3], L[3];
        if (hy_body_get_velocity(w, e->ids[i], v, om) || hy_body_get_angular_momentum(w, e->ids[i], L)) {
            fprintf(stderr, WHO ": %s\n", hy_last_error());
            return HY_EXIT_RUNTIME;
        }
        k += 0.5 * e->mass[i] * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
        k += 0.5 * (om[0] * L[0] + om[1] * L[1] + om[2] * L[2]);
    }
    row->kinetic_energy = k;
    return HY_EXIT_OK;
}

static void energy_fini(void* ctx) {
    energy_ctx* e = ctx;
    if (!e) return;
    free(e->ids);
    free(e->mass);
    free(e);
}

/* --check: the initial state and every step's end state are tested for
 * intersecting triangles over the whole scene (exact predicates); the first
 * offending frame ends the run with its objects and triangles named. */
static int check_frame(const hy_world* w, long frame) {
    char msg[1024];
    int64_t n = 0;
    if (hy_overlap_report(w, HY_OVERLAP_INTERSECTING, 4, msg, sizeof msg, &n)) {
        fprintf(stderr, WHO ": --check: %s\n", hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    if (n == 0) return HY_EXIT_OK;
    fprintf(stderr, WHO ": --check: frame %ld ends with intersecting triangles: %s\n", frame, msg);
    return HY_EXIT_RUNTIME;
}

static int check_init(void** ctx, const hy_world* w, const step_opts* o) {
    if (!o->check) return HY_EXIT_OK; /* *ctx stays NULL: off */
    *ctx = (void*)w;
    return check_frame(w, 0);
}

static int check_after(void* ctx, const hy_world* w, long frame, step_row* row) {
    (void)ctx;
    (void)row;
    return check_frame(w, frame);
}

static void check_fini(void* ctx) { (void)ctx; }

static const step_hook hooks[] = {
    {"energy", energy_init, energy_after, energy_fini},
    {"check", check_init, check_after, check_fini},
};
enum { HOOK_COUNT = sizeof hooks / sizeof hooks[0] };

/* Whether a step had a cloth solve that ended short of its tolerance (at
 * the iteration cap or on a breakdown): hy_step_stats.cg_capped. */
static int step_capped(const hy_step_stats* st) { return st->cg_capped > 0; }

void hy_bench_step_help(void) {
    printf("usage: hyphys bench step [--scene NAME] [--threads N] [--frames N] [--csv FILE]\n"
           "                        [--check] [--json] [--quiet]\n\n"
           "Step a scene headless through its whole sequence and time the simulation's\n"
           "own step, every phase (integrate, refit, traverse, response, commit): steps\n"
           "per second over the sequence, median and p95 step, the first frame with a\n"
           "contact, CG iterations and the steps whose solve ended at its iteration cap.\n\n"
           "  --scene NAME  cloth_ball (default), nbody, fracture, or any scene file\n"
           "  --threads N   worker threads including the caller (default 2)\n"
           "  --frames N    steps to run (default: the scene's whole sequence:\n"
           "                %s; %d for other scenes)\n"
           "  --csv FILE    one row per frame: ms per phase, ms_total, cg_iterations, capped,\n"
           "                candidates, exact_tests, contacts, response_iterations,\n"
           "                bonds_broken, bonds, kinetic_energy (rigid bodies, J)\n"
           "  --json        {\"scene\":..,\"threads\":..,\"frames\":..,\"first_contact_frame\":..|null,\n"
           "                 \"fps\":..,\"step_ms\":{\"median\":..,\"p95\":..,\"max\":..},\n"
           "                 \"contact_step_ms\":{\"median\":..,\"p95\":..}|null,\n"
           "                 \"phase_ms\":{PHASE:{\"median\":..,\"p95\":..},..},\n"
           "                 \"cg_iterations\":{\"median\":..,\"max\":..,\"median_in_contact\":..|null},\n"
           "                 \"cg_max_iterations\":..,\"capped_steps\":..,\"hash\":..}\n"
           "  --check       test the initial state and every frame for intersecting triangles\n"
           "                (exact predicates, whole scene, outside the timed step); the first\n"
           "                offending frame is named with its objects and triangles (exit 1)\n"
           "  --quiet       no progress lines on stderr\n\n"
           "Frame k is the state after step k; fps is frames over the summed step times.\n"
           "A step counts as capped when a cloth solve in it ended short of the\n"
           "scene's cg_tolerance (at cg_max_iterations, or on a breakdown).\n\n"
           "exit: 0 ok, 1 runtime failure (a step failed, the CSV could not be written),\n"
           "      2 bad usage or input\n",
           hy_bench_sequences_text(), HY_BENCH_DEFAULT_FRAMES);
}

/* Median and p95 of v[0..n). */
static void spread(const double* v, long n, double* med, double* p95) {
    *med = hy_cli_percentile(v, n, 50.0);
    *p95 = hy_cli_percentile(v, n, 95.0);
}

static void write_csv_header(FILE* f) {
    fprintf(f, "frame");
    for (int p = 0; p < HY_PHASE_COUNT; p++) fprintf(f, ",ms_%s", hy_phase_name((hy_phase)p));
    fprintf(f, ",ms_total,cg_iterations,capped,candidates,exact_tests,contacts,response_iterations,bonds_broken,"
               "bonds,kinetic_energy\n");
}

static void write_csv_row(FILE* f, long frame, const step_row* r) {
    fprintf(f, "%ld", frame);
    for (int p = 0; p < HY_PHASE_COUNT; p++) fprintf(f, ",%.4f", r->st.ms[p]);
    fprintf(f, ",%.4f,%d,%d,%" PRId64 ",%" PRId64 ",%" PRId64 ",%d,%d,%d,%.9g\n", r->st.ms_total,
            r->st.cg_iterations, r->capped, r->st.candidates, r->st.exact_tests, r->st.contacts,
            r->st.response_iterations, r->st.bonds_broken, r->bonds, r->kinetic_energy);
}

int hy_bench_step_main(int argc, char** argv) {
    step_opts o = {.scene = "cloth_ball", .threads = 2};
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (!strcmp(a, "--json")) {
            o.json = 1;
        } else if (!strcmp(a, "--quiet")) {
            o.quiet = 1;
        } else if (!strcmp(a, "--check")) {
            o.check = 1;
        } else if (!strcmp(a, "--scene") || !strcmp(a, "--threads") || !strcmp(a, "--frames") ||
                   !strcmp(a, "--csv")) {
            if (i + 1 >= argc) {
                fprintf(stderr, WHO ": %s needs a value\n", a);
                return HY_EXIT_USAGE;
            }
            const char* v = argv[++i];
            if (!strcmp(a, "--scene")) o.scene = v;
            else if (!strcmp(a, "--csv")) o.csv_path = v;
            else if (!strcmp(a, "--threads") && !hy_cli_parse_int(a, v, 1, 256, &o.threads)) return HY_EXIT_USAGE;
            else if (!strcmp(a, "--frames") && !hy_cli_parse_int(a, v, 1, 1000000, &o.frames)) return HY_EXIT_USAGE;
        } else {
            fprintf(stderr, WHO ": unknown option '%s' (try --help)\n", a);
            return HY_EXIT_USAGE;
        }
    }
    const char* scene = o.scene;
    const char* csv_path = o.csv_path;
    const long threads = o.threads;
    const int json = o.json, quiet = o.quiet;
    char name[256];
    hy_bench_scene_name(scene, name, sizeof name);
    const char* what = NULL;
    long sequence = hy_bench_default_frames(name, &what);
    if (o.frames == 0) o.frames = sequence;
    const long frames = o.frames;

    /* The CSV opens first: a path it cannot write fails before minutes of stepping. */
    FILE* csv = NULL;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            fprintf(stderr, WHO ": --csv: cannot write '%s': %s\n", csv_path, strerror(errno));
            return HY_EXIT_USAGE;
        }
        write_csv_header(csv);
    }
    const char* path = hy_cli_resolve_scene(scene);
    hy_scene_options so = hy_scene_options_default();
    so.threads = (int32_t)threads;
    hy_world* w = NULL;
    if (hy_scene_load(path, &so, &w)) {
        fprintf(stderr, WHO ": %s\n", hy_last_error());
        if (csv) fclose(csv);
        return HY_EXIT_USAGE;
    }
    hy_world_def def;
    hy_world_get_def(w, &def);
    step_row* rows = calloc((size_t)frames, sizeof *rows);
    double* scratch = malloc(sizeof(double) * (size_t)frames);
    void* ctx[HOOK_COUNT] = {0};
    int rc = rows && scratch ? HY_EXIT_OK : HY_EXIT_RUNTIME;
    if (rc) fprintf(stderr, WHO ": out of memory\n");
    int inited = 0; /* hooks set up, to be torn down */
    while (inited < HOOK_COUNT && rc == HY_EXIT_OK)
        if ((rc = hooks[inited].init(&ctx[inited], w, &o)) == HY_EXIT_OK) inited++;
    if (rc == HY_EXIT_OK && !quiet)
        fprintf(stderr, "%s: %ld frames of %s (%s), %d triangles, %ld threads\n", WHO, frames, name,
                frames == sequence ? what : "--frames", hy_cli_triangles(w), threads);
    int32_t bonds_initial = hy_cli_bonds(w);

    /* The sequence: each step timed by the step itself, then the hooks. */
    double t0 = hy_cli_now(), last_report = t0;
    long done = 0;
    hy_world_def wd; /* the scene's step */
    hy_world_get_def(w, &wd);
    for (long f = 0; f < frames && rc == HY_EXIT_OK; f++) {
        step_row* r = &rows[f];
        if (hy_world_step(w, wd.time_step, wd.substeps) != HY_OK) {
            fprintf(stderr, WHO ": frame %ld: %s\n", f + 1, hy_last_error());
            rc = HY_EXIT_RUNTIME;
            break;
        }
        hy_world_get_stats(w, &r->st);
        r->capped = step_capped(&r->st);
        r->bonds = hy_cli_bonds(w);
        for (int h = 0; h < HOOK_COUNT && rc == HY_EXIT_OK; h++)
            if (ctx[h]) rc = hooks[h].after_step(ctx[h], w, f + 1, r);
        if (rc) break;
        if (csv) write_csv_row(csv, f + 1, r);
        done = f + 1;
        double now = hy_cli_now();
        if (!quiet && (now - last_report >= 10.0 || done == frames)) {
            fprintf(stderr, "  frame %ld/%ld (%.1f s, last step %.1f ms)\n", done, frames, now - t0, r->st.ms_total);
            last_report = now;
        }
    }
    for (int h = 0; h < inited; h++)
        if (ctx[h]) hooks[h].fini(ctx[h]);
    if (csv) {
        int bad = ferror(csv);
        bad |= fclose(csv) != 0;
        if (bad && rc == HY_EXIT_OK) {
            fprintf(stderr, WHO ": --csv: writing '%s' failed: %s\n", csv_path, strerror(errno));
            rc = HY_EXIT_RUNTIME;
        }
    }

    if (rc == HY_EXIT_OK) {
        /* The whole sequence's figures, and those of the frames in contact. */
        double seconds = 0.0, contacts = 0.0;
        long first_contact = 0, capped = 0, cg_max = 0;
        for (long f = 0; f < frames; f++) {
            seconds += rows[f].st.ms_total / 1000.0;
            contacts += (double)rows[f].st.contacts;
            capped += rows[f].capped;
            if (rows[f].st.cg_iterations > cg_max) cg_max = rows[f].st.cg_iterations;
            if (!first_contact && rows[f].st.contacts > 0) first_contact = f + 1;
        }
        double fps = seconds > 0 ? (double)frames / seconds : 0.0;
        double step_med, step_p95, step_max, cg_med, unused, c_med = 0, c_p95 = 0, cgc_med = 0;
        long c0 = first_contact ? first_contact - 1 : frames; /* the frames in contact: [c0, frames) */
        for (long f = 0; f < frames; f++) scratch[f] = rows[f].st.ms_total;
        spread(scratch, frames, &step_med, &step_p95);
        step_max = hy_cli_percentile(scratch, frames, 100.0);
        if (first_contact) spread(scratch + c0, frames - c0, &c_med, &c_p95);
        for (long f = 0; f < frames; f++) scratch[f] = (double)rows[f].st.cg_iterations;
        spread(scratch, frames, &cg_med, &unused);
        if (first_contact) spread(scratch + c0, frames - c0, &cgc_med, &unused);
        double ph_med[HY_PHASE_COUNT], ph_p95[HY_PHASE_COUNT];
        for (int p = 0; p < HY_PHASE_COUNT; p++) {
            for (long f = 0; f < frames; f++) scratch[f] = rows[f].st.ms[p];
            spread(scratch, frames, &ph_med[p], &ph_p95[p]);
        }
        uint64_t hash = hy_cli_hash(w);
        if (json) {
            printf("{\"scene\":");
            hy_cli_json_string(stdout, name);
            printf(",\"threads\":%ld,\"frames\":%ld,\"sequence_frames\":%ld,\"triangles\":%d,\"first_contact_frame\":",
                   threads, frames, sequence, hy_cli_triangles(w));
            if (first_contact) printf("%ld", first_contact);
            else printf("null");
            printf(",\"fps\":%.4f,\"seconds\":%.6f,\"step_ms\":{\"median\":%.4f,\"p95\":%.4f,\"max\":%.4f},"
                   "\"contact_step_ms\":",
                   fps, seconds, step_med, step_p95, step_max);
            if (first_contact) printf("{\"median\":%.4f,\"p95\":%.4f}", c_med, c_p95);
            else printf("null");
            printf(",\"phase_ms\":{");
            for (int p = 0; p < HY_PHASE_COUNT; p++)
                printf("%s\"%s\":{\"median\":%.4f,\"p95\":%.4f}", p ? "," : "", hy_phase_name((hy_phase)p),
                       ph_med[p], ph_p95[p]);
            printf("},\"cg_iterations\":{\"median\":%g,\"max\":%ld,\"median_in_contact\":", cg_med, cg_max);
            if (first_contact) printf("%g", cgc_med);
            else printf("null");
            printf("},\"cg_max_iterations\":%d,\"capped_steps\":%ld,\"contacts_per_frame\":%.1f,"
                   "\"bonds\":{\"initial\":%d,\"final\":%d},\"checked\":%s,\"hash\":\"%016" PRIx64 "\"}\n",
                   def.cg_max_iterations, capped, contacts / (double)frames, bonds_initial,
                   hy_cli_bonds(w), o.check ? "true" : "false", hash);
        } else {
            printf("scene %s: %d triangles, %ld frames (%s), %ld threads\n", name, hy_cli_triangles(w),
                   frames, frames == sequence ? "its whole sequence" : "set by --frames", threads);
            if (first_contact) printf("  first contact           frame %ld\n", first_contact);
            else printf("  first contact           none in these frames\n");
            printf("  steps per second        %10.3f  (%.2f s in all)\n"
                   "  step ms                 median %.2f, p95 %.2f, max %.2f\n",
                   fps, seconds, step_med, step_p95, step_max);
            if (first_contact)
                printf("  step ms in contact      median %.2f, p95 %.2f (frames %ld-%ld)\n", c_med, c_p95,
                       first_contact, frames);
            printf("  median ms by phase     ");
            for (int p = 0; p < HY_PHASE_COUNT; p++) printf(" %s %.2f", hy_phase_name((hy_phase)p), ph_med[p]);
            printf("\n  CG iterations           median %g, max %ld (cap %d); %ld capped steps\n", cg_med, cg_max,
                   def.cg_max_iterations, capped);
            printf("  contacts per frame      %10.1f\n", contacts / (double)frames);
            if (bonds_initial > 0)
                printf("  bonds                   %d at the start, %d at the end\n", bonds_initial,
                       hy_cli_bonds(w));
            if (o.check) printf("  --check                 no frame ends with intersecting triangles\n");
            printf("  state hash              %016" PRIx64 "\n", hash);
        }
    }
    free(rows);
    free(scratch);
    hy_world_destroy(w);
    return rc;
}
