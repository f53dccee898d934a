/* hyphys bench soak: a long run that watches a scene's health rather than
 * its speed. After every step: the state is finite (the step itself
 * refuses a non-finite state, naming the object and vertex), no triangles
 * intersect (the --check machinery: exact predicates over the whole scene,
 * engine/check.h), and the mechanical energy of the moving objects stays
 * bounded: it may not grow above its initial value by more than a tenth
 * of the scene's energy scale S = K(0) + M |g| H (M their mass, H the
 * largest extent of the box around their vertices at the start). Energy a
 * scene's scripted obstacles put in (a turning ball under cloth) is
 * within that scale; an instability is not. Not part of the test suite:
 * soaks run for thousands of steps, hours for the larger scenes, so a run
 * can keep a checkpoint (its figures so far and the world's snapshot) and
 * be resumed from it in another process, with the same state as a run
 * that was never stopped. */
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "engine/check.h"
#include "hyphys/hyphys.h"

void hy_bench_soak_help(void);
int hy_bench_soak_main(int argc, char** argv);

#define WHO "hyphys bench soak"
#define ENERGY_MARGIN 0.1 /* of the energy scale */

void hy_bench_soak_help(void) {
    printf("usage: hyphys bench soak --scene NAME [--steps N] [--threads N] [--check-every K]\n"
           "                        [--checkpoint FILE [--checkpoint-every K]] [--json] [--quiet]\n"
           "       hyphys bench soak --resume FILE [--steps N] [--checkpoint FILE] ...\n\n"
           "Step a scene for a long run and report its health: every state finite, no step\n"
           "ending with intersecting triangles (exact predicates, whole scene), and the\n"
           "mechanical energy of the moving objects bounded (never above its start by more\n"
           "than %g of the scene's energy scale K(0) + M |g| H, M their mass and H the\n"
           "largest extent of the box around them at the start).\n\n"
           "  --scene NAME     a scene name (fem64, cloth_ball, ...) or file (required)\n"
           "  --steps N        steps (default 10000)\n"
           "  --threads N      worker threads including the caller (default 2)\n"
           "  --check-every K  test for intersections after every K-th step (default 1)\n"
           "  --checkpoint FILE  keep the run in FILE (its figures so far and the world's\n"
           "                   snapshot, this build's format) every K steps, at its end, and\n"
           "                   when it is stopped by SIGINT or SIGTERM (after the step under way)\n"
           "  --checkpoint-every K  steps between checkpoints (default 100)\n"
           "  --resume FILE    go on with the run kept in FILE: its scene, check interval and\n"
           "                   figures, up to --steps in all; it checkpoints to FILE again\n"
           "                   unless --checkpoint names another. The state is the one a run\n"
           "                   never stopped would have (the same hash)\n"
           "  --json           {\"scene\":..,\"steps\":..,\"steps_done\":..,\"finite\":..,\n"
           "                    \"checks\":..,\"intersecting_steps\":..,\"energy\":{\"initial\":..,\n"
           "                    \"max\":..,\"final\":..,\"scale\":..,\"max_rise\":..},\"ok\":..,\"stopped\":..,\n"
           "                    \"seconds\":..,\"hash\":..}\n"
           "  --quiet          no progress lines on stderr\n\n"
           "exit: 0 healthy, 1 a failed step, an intersection, unbounded energy, a run stopped\n"
           "      short of its steps or a checkpoint not written, 2 bad usage or a bad --resume file\n",
           ENERGY_MARGIN);
}

/* The largest extent of the box around the moving objects' vertices
 * (obstacles and kinematic bodies left out): how far they could fall. */
static double extent(const hy_world* w) {
    double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (int32_t i = 0; i < hy_cli_objects(w); i++) {
        hy_object_id id;
        hy_object_kind kind;
        int32_t nv = 0, nt = 0, kin = 0;
        const int32_t* tri = NULL;
        if (hy_world_get_object(w, i, &id) || hy_object_get_kind(w, id, &kind) || kind == HY_OBJECT_OBSTACLE) continue;
        hy_body_id b;
        if (kind == HY_OBJECT_BODY && !hy_object_as_body(w, id, &b) && !hy_body_is_kinematic(w, b, &kin) && kin)
            continue;
        if (hy_object_get_mesh(w, id, &nv, &nt, &tri) || nv <= 0) continue;
        double* x = malloc(sizeof(double) * 3 * (size_t)nv);
        if (x && !hy_object_get_positions(w, id, x, 3 * (size_t)nv))
            for (int32_t k = 0; k < 3 * nv; k++) {
                lo[k % 3] = x[k] < lo[k % 3] ? x[k] : lo[k % 3];
                hi[k % 3] = x[k] > hi[k % 3] ? x[k] : hi[k % 3];
            }
        free(x);
    }
    double e = 0.0;
    for (int k = 0; k < 3; k++)
        if (hi[k] - lo[k] > e) e = hi[k] - lo[k];
    return e;
}

/* ---- checkpoints: a fixed header, then the world's snapshot */

#define SOAK_MAGIC "HYSOAK1"

typedef struct soak_state {
    char magic[8];
    uint64_t build; /* soak_build() of the program that wrote it */
    char scene[512];
    int64_t steps_done, checks, bad_steps, every;
    int32_t finite, pad;
    double e0, emax, efinal, scale, seconds;
    uint64_t snapshot_size;
} soak_state;

/* This program's identity: a hash of its executable's bytes (0 where
 * /proc/self/exe cannot be read). A checkpoint is resumed by the build
 * that wrote it only: another build may step the same state differently,
 * and the soak would then vouch for neither. */
static uint64_t soak_build(void) {
    FILE* f = fopen("/proc/self/exe", "rb");
    if (!f) return 0;
    uint64_t h = 1469598103934665603ull, buf[1 << 13];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) {
        if (n % 8) memset((unsigned char*)buf + n, 0, 8 - n % 8); /* the last word's missing bytes */
        for (size_t i = 0; i < (n + 7) / 8; i++) h = (h ^ buf[i]) * 1099511628211ull;
        h ^= n;
    }
    fclose(f);
    return h;
}

static volatile sig_atomic_t stop_requested;
static void request_stop(int sig) {
    (void)sig;
    stop_requested = 1;
}

/* Write the run's state and the world to path (through path.tmp, renamed:
 * a checkpoint is never half written); 0 on failure, said on stderr. */
static int checkpoint_write(const char* path, const soak_state* st, const hy_world* w) {
    size_t size = 0;
    if (hy_world_snapshot_size(w, &size)) {
        fprintf(stderr, WHO ": checkpoint: %s\n", hy_last_error());
        return 0;
    }
    unsigned char* snap = malloc(size ? size : 1);
    char tmp[4096];
    if (!snap || snprintf(tmp, sizeof tmp, "%s.tmp", path) >= (int)sizeof tmp) {
        free(snap);
        fprintf(stderr, WHO ": checkpoint '%s': out of memory or path too long\n", path);
        return 0;
    }
    size_t written = 0;
    soak_state h = *st;
    h.snapshot_size = size;
    int ok = !hy_world_snapshot(w, snap, size, &written);
    FILE* f = ok ? fopen(tmp, "wb") : NULL;
    ok = f && fwrite(&h, sizeof h, 1, f) == 1 && fwrite(snap, 1, written, f) == written;
    if (f && fclose(f) != 0) ok = 0;
    if (ok && rename(tmp, path) != 0) ok = 0;
    if (!ok) {
        fprintf(stderr, WHO ": cannot write the checkpoint '%s'\n", path);
        remove(tmp);
    }
    free(snap);
    return ok;
}

/* Read a checkpoint's header and snapshot (*snap malloc'd); 0 on a bad
 * file, said on stderr. */
static int checkpoint_read(const char* path, soak_state* st, unsigned char** snap) {
    FILE* f = fopen(path, "rb");
    *snap = NULL;
    if (!f) {
        fprintf(stderr, WHO ": --resume: cannot open '%s'\n", path);
        return 0;
    }
    int ok = fread(st, sizeof *st, 1, f) == 1 && !memcmp(st->magic, SOAK_MAGIC, sizeof SOAK_MAGIC) &&
             memchr(st->scene, 0, sizeof st->scene) && st->steps_done >= 0 && st->every >= 1 &&
             st->snapshot_size > 0 && st->snapshot_size < ((uint64_t)1 << 40);
    if (ok) {
        *snap = malloc((size_t)st->snapshot_size);
        ok = *snap && fread(*snap, 1, (size_t)st->snapshot_size, f) == (size_t)st->snapshot_size && fgetc(f) == EOF;
    }
    fclose(f);
    if (!ok) {
        free(*snap);
        *snap = NULL;
        fprintf(stderr, WHO ": --resume: '%s' is not a whole soak checkpoint\n", path);
    }
    return ok;
}

int hy_bench_soak_main(int argc, char** argv) {
    const char* scene = NULL;
    const char *checkpoint = NULL, *resume = NULL;
    long steps = 10000, threads = 2, every = 1, checkpoint_every = 100;
    int json = 0, quiet = 0, every_given = 0;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--scene") || !strcmp(a, "--steps") || !strcmp(a, "--threads") ||
                   !strcmp(a, "--check-every") || !strcmp(a, "--checkpoint") || !strcmp(a, "--checkpoint-every") ||
                   !strcmp(a, "--resume")) {
            if (i + 1 >= argc) {
                fprintf(stderr, WHO ": %s needs a value\n", a);
                return HY_EXIT_USAGE;
            }
            const char* v = argv[++i];
            if (!strcmp(a, "--scene")) scene = v;
            else if (!strcmp(a, "--checkpoint")) checkpoint = v;
            else if (!strcmp(a, "--resume")) resume = v;
            else if (!strcmp(a, "--checkpoint-every") && !hy_cli_parse_int(a, v, 1, 100000000, &checkpoint_every))
                return HY_EXIT_USAGE;
            else if (!strcmp(a, "--steps") && !hy_cli_parse_int(a, v, 1, 100000000, &steps)) return HY_EXIT_USAGE;
            else if (!strcmp(a, "--threads") && !hy_cli_parse_int(a, v, 1, 256, &threads)) return HY_EXIT_USAGE;
            else if (!strcmp(a, "--check-every") && !(every_given = hy_cli_parse_int(a, v, 1, 100000000, &every)))
                return HY_EXIT_USAGE;
        } else {
            fprintf(stderr, WHO ": unknown option '%s' (try --help)\n", a);
            return HY_EXIT_USAGE;
        }
    }
    soak_state kept;
    unsigned char* snap = NULL;
    memset(&kept, 0, sizeof kept);
    if (resume) {
        if (!checkpoint_read(resume, &kept, &snap)) return HY_EXIT_USAGE;
        if (scene && strcmp(scene, kept.scene)) {
            fprintf(stderr, WHO ": --resume '%s' is a soak of '%s', not of '%s'\n", resume, kept.scene, scene);
            free(snap);
            return HY_EXIT_USAGE;
        }
        uint64_t build = soak_build();
        if (build && kept.build && build != kept.build) {
            fprintf(stderr, WHO ": --resume '%s' was written by another build of hyphys (resume it with that one)\n",
                    resume);
            free(snap);
            return HY_EXIT_USAGE;
        }
        scene = kept.scene;
        if (!every_given) every = (long)kept.every;
        if (!checkpoint) checkpoint = resume;
    }
    if (!scene) {
        fprintf(stderr, WHO ": --scene is required (try --help)\n");
        return HY_EXIT_USAGE;
    }
    if (strlen(scene) >= sizeof kept.scene) {
        fprintf(stderr, WHO ": the scene's name is too long for a checkpoint\n");
        return HY_EXIT_USAGE;
    }
    const char* path = hy_cli_find_scene("bench soak", scene);
    if (!path) {
        free(snap);
        return HY_EXIT_USAGE;
    }
    hy_scene_options so = hy_scene_options_default();
    so.threads = (int32_t)threads;
    hy_world* w = NULL;
    if (hy_scene_load(path, &so, &w)) {
        fprintf(stderr, WHO ": %s\n", hy_last_error());
        free(snap);
        return HY_EXIT_USAGE;
    }
    hy_world_def def;
    hy_world_get_def(w, &def);

    /* the energy scale: K(0) + M |g| H */
    double k0 = 0.0, u0 = 0.0, mass = 0.0;
    hy_world_energy(w, &k0, &u0, &mass);
    double gl = sqrt(def.gravity[0] * def.gravity[0] + def.gravity[1] * def.gravity[1] +
                     def.gravity[2] * def.gravity[2]);
    double scale = k0 + mass * gl * extent(w);
    if (!(scale > 0.0)) scale = 1.0; /* no gravity and at rest: a rise of 0.1 J fails */
    double e0 = k0 + u0, emax = e0, efinal = e0, before = 0.0;
    long done = 0, checks = 0, bad_steps = 0;
    int finite = 1, rc = HY_EXIT_OK;
    if (resume) {
        if (hy_world_restore(w, snap, (size_t)kept.snapshot_size)) {
            fprintf(stderr, WHO ": --resume '%s': %s\n", resume, hy_last_error());
            free(snap);
            hy_world_destroy(w);
            return HY_EXIT_USAGE;
        }
        done = (long)kept.steps_done;
        checks = (long)kept.checks;
        bad_steps = (long)kept.bad_steps;
        finite = kept.finite;
        e0 = kept.e0, emax = kept.emax, efinal = kept.efinal, scale = kept.scale, before = kept.seconds;
    }
    free(snap);
    memcpy(kept.magic, SOAK_MAGIC, sizeof SOAK_MAGIC);
    if (checkpoint && !resume) kept.build = soak_build(); /* resumed: the file's, checked above */
    if (scene != kept.scene) snprintf(kept.scene, sizeof kept.scene, "%s", scene);
    stop_requested = 0;
    void (*old_int)(int) = checkpoint ? signal(SIGINT, request_stop) : SIG_DFL;
    void (*old_term)(int) = checkpoint ? signal(SIGTERM, request_stop) : SIG_DFL;

    if (!quiet)
        fprintf(stderr, "%s: %ld steps of %s, %d triangles, %ld threads, intersections every %ld step(s)%s\n", WHO,
                steps, scene, hy_cli_triangles(w), threads, every, resume ? ", resumed" : "");
    if (resume && !quiet) fprintf(stderr, "%s: resumed at step %ld of %ld\n", WHO, done, steps);
    double t0 = hy_cli_now() - before, last = hy_cli_now();
    int saved = 1;
    for (long s = done + 1; s <= steps && !stop_requested; s++) {
        hy_status st = hy_world_step(w, def.time_step, def.substeps);
        if (st) {
            finite = st != HY_ERR_NUMERIC;
            fprintf(stderr, WHO ": step %ld: %s\n", s, hy_last_error());
            rc = HY_EXIT_RUNTIME;
            break;
        }
        done = s;
        double k = 0.0, u = 0.0;
        hy_world_energy(w, &k, &u, NULL);
        efinal = k + u;
        if (!isfinite(efinal)) finite = 0;
        if (efinal > emax || !isfinite(efinal)) emax = efinal;
        if (s % every == 0 || s == steps) {
            char msg[512];
            int64_t n = 0;
            if (hy_overlap_report(w, HY_OVERLAP_INTERSECTING, 2, msg, sizeof msg, &n)) {
                fprintf(stderr, WHO ": step %ld: %s\n", s, hy_last_error());
                rc = HY_EXIT_RUNTIME;
                break;
            }
            checks++;
            if (n > 0 && bad_steps++ < 3) fprintf(stderr, WHO ": step %ld ends with intersecting triangles: %s\n", s, msg);
        }
        double now = hy_cli_now();
        kept.steps_done = done, kept.checks = checks, kept.bad_steps = bad_steps, kept.every = every;
        kept.finite = finite, kept.e0 = e0, kept.emax = emax, kept.efinal = efinal, kept.scale = scale;
        kept.seconds = now - t0;
        if (checkpoint && s % checkpoint_every == 0) {
            saved = checkpoint_write(checkpoint, &kept, w);
            if (!saved) {
                rc = HY_EXIT_RUNTIME;
                break;
            }
        }
        if (!quiet && (now - last > 10.0 || s == steps)) {
            fprintf(stderr, "%s: step %ld/%ld, %.1f s, energy %.6g J (start %.6g, max %.6g)\n", WHO, s, steps,
                    now - t0, efinal, e0, emax);
            last = now;
        }
    }
    double seconds = hy_cli_now() - t0;
    if (checkpoint) {
        signal(SIGINT, old_int);
        signal(SIGTERM, old_term);
        /* a failed run keeps its last good checkpoint */
        if (saved && rc == HY_EXIT_OK && (done % checkpoint_every != 0 || done == 0)) {
            kept.seconds = seconds;
            if (!checkpoint_write(checkpoint, &kept, w)) rc = HY_EXIT_RUNTIME;
        }
        if (stop_requested && done < steps && !quiet)
            fprintf(stderr, "%s: stopped at step %ld of %ld; go on with --resume %s\n", WHO, done, steps, checkpoint);
    }
    double rise = (emax - e0) / scale;
    int bounded = finite && rise <= ENERGY_MARGIN;
    int ok = rc == HY_EXIT_OK && finite && bad_steps == 0 && bounded && done == steps;
    /* stopped by a signal with nothing wrong so far: to be resumed */
    int stopped = !ok && stop_requested && rc == HY_EXIT_OK && finite && bad_steps == 0 && bounded;
    if (!ok) rc = HY_EXIT_RUNTIME;
    uint64_t hash = hy_cli_hash(w);
    if (json) {
        printf("{\"scene\":");
        hy_cli_json_string(stdout, scene);
        printf(",\"steps\":%ld,\"steps_done\":%ld,\"threads\":%ld,\"finite\":%s,\"checks\":%ld,"
               "\"intersecting_steps\":%ld,\"energy\":{\"initial\":%.9g,\"max\":%.9g,\"final\":%.9g,\"scale\":%.9g,"
               "\"max_rise\":%.6g,\"bounded\":%s},\"ok\":%s,\"stopped\":%s,\"seconds\":%.3f,\"hash\":\"%016llx\"}\n",
               steps, done, threads, finite ? "true" : "false", checks, bad_steps, e0, emax, efinal, scale, rise,
               bounded ? "true" : "false", ok ? "true" : "false", stopped ? "true" : "false", seconds,
               (unsigned long long)hash);
    } else {
        printf("soak %s: %ld of %ld steps in %.1f s (%ld threads)\n", scene, done, steps, seconds, threads);
        printf("  finite state:          %s\n", finite ? "yes, every step" : "NO");
        printf("  intersection checks:   %ld, %ld step(s) with intersecting triangles\n", checks, bad_steps);
        printf("  energy (J):            start %.6g, max %.6g, end %.6g; scale %.6g\n", e0, emax, efinal, scale);
        printf("  largest rise:          %.3g of the scale (bound %g): %s\n", rise, ENERGY_MARGIN,
               bounded ? "bounded" : "NOT BOUNDED");
        printf("  verdict:               %s\n", ok ? "healthy" : stopped ? "stopped, healthy so far" : "FAILED");
        printf("  state hash:            %016llx\n", (unsigned long long)hash);
    }
    hy_world_destroy(w);
    return rc;
}
