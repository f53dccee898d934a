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
 * soaks run for thousands of steps. */
#include <math.h>
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
           "                        [--json] [--quiet]\n\n"
           "Step a scene for a long run and report its health: every state finite, no step\n"
           "ending with intersecting triangles (exact predicates, whole scene), and the\n"
           "mechanical energy of the moving objects bounded (never above its start by more\n"
           "than %g of the scene's energy scale K(0) + M |g| H, M their mass and H the\n"
           "largest extent of the box around them at the start).\n\n"
           "  --scene NAME     a scene name (fem64, cloth_ball, ...) or file (required)\n"
           "  --steps N        steps (default 10000)\n"
           "  --threads N      worker threads including the caller (default 2)\n"
           "  --check-every K  test for intersections after every K-th step (default 1)\n"
           "  --json           {\"scene\":..,\"steps\":..,\"steps_done\":..,\"finite\":..,\n"
           "                    \"checks\":..,\"intersecting_steps\":..,\"energy\":{\"initial\":..,\n"
           "                    \"max\":..,\"final\":..,\"scale\":..,\"max_rise\":..},\"ok\":..,\n"
           "                    \"seconds\":..,\"hash\":..}\n"
           "  --quiet          no progress lines on stderr\n\n"
           "exit: 0 healthy, 1 a failed step, an intersection or unbounded energy, 2 bad usage\n",
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

int hy_bench_soak_main(int argc, char** argv) {
    const char* scene = NULL;
    long steps = 10000, threads = 2, every = 1;
    int json = 0, quiet = 0;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--quiet")) {
            quiet = 1;
        } else if (!strcmp(a, "--scene") || !strcmp(a, "--steps") || !strcmp(a, "--threads") ||
                   !strcmp(a, "--check-every")) {
            if (i + 1 >= argc) {
                fprintf(stderr, WHO ": %s needs a value\n", a);
                return HY_EXIT_USAGE;
            }
            const char* v = argv[++i];
            if (!strcmp(a, "--scene")) scene = v;
            else if (!strcmp(a, "--steps") && !hy_cli_parse_int(a, v, 1, 100000000, &steps)) return HY_EXIT_USAGE;
            else if (!strcmp(a, "--threads") && !hy_cli_parse_int(a, v, 1, 256, &threads)) return HY_EXIT_USAGE;
            else if (!strcmp(a, "--check-every") && !hy_cli_parse_int(a, v, 1, 100000000, &every))
                return HY_EXIT_USAGE;
        } else {
            fprintf(stderr, WHO ": unknown option '%s' (try --help)\n", a);
            return HY_EXIT_USAGE;
        }
    }
    if (!scene) {
        fprintf(stderr, WHO ": --scene is required (try --help)\n");
        return HY_EXIT_USAGE;
    }
    const char* path = hy_cli_find_scene("bench soak", scene);
    if (!path) return HY_EXIT_USAGE;
    hy_scene_options so = hy_scene_options_default();
    so.threads = (int32_t)threads;
    hy_world* w = NULL;
    if (hy_scene_load(path, &so, &w)) {
        fprintf(stderr, WHO ": %s\n", hy_last_error());
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
    double e0 = k0 + u0, emax = e0, efinal = e0;

    if (!quiet)
        fprintf(stderr, "%s: %ld steps of %s, %d triangles, %ld threads, intersections every %ld step(s)\n", WHO,
                steps, scene, hy_cli_triangles(w), threads, every);
    long done = 0, checks = 0, bad_steps = 0;
    int finite = 1, rc = HY_EXIT_OK;
    double t0 = hy_cli_now(), last = t0;
    for (long s = 1; s <= steps; s++) {
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
        if (!quiet && (now - last > 10.0 || s == steps)) {
            fprintf(stderr, "%s: step %ld/%ld, %.1f s, energy %.6g J (start %.6g, max %.6g)\n", WHO, s, steps,
                    now - t0, efinal, e0, emax);
            last = now;
        }
    }
    double seconds = hy_cli_now() - t0;
    double rise = (emax - e0) / scale;
    int bounded = finite && rise <= ENERGY_MARGIN;
    int ok = rc == HY_EXIT_OK && finite && bad_steps == 0 && bounded && done == steps;
    if (!ok) rc = HY_EXIT_RUNTIME;
    uint64_t hash = hy_cli_hash(w);
    if (json) {
        printf("{\"scene\":");
        hy_cli_json_string(stdout, scene);
        printf(",\"steps\":%ld,\"steps_done\":%ld,\"threads\":%ld,\"finite\":%s,\"checks\":%ld,"
               "\"intersecting_steps\":%ld,\"energy\":{\"initial\":%.9g,\"max\":%.9g,\"final\":%.9g,\"scale\":%.9g,"
               "\"max_rise\":%.6g,\"bounded\":%s},\"ok\":%s,\"seconds\":%.3f,\"hash\":\"%016llx\"}\n",
               steps, done, threads, finite ? "true" : "false", checks, bad_steps, e0, emax, efinal, scale, rise,
               bounded ? "true" : "false", ok ? "true" : "false", seconds, (unsigned long long)hash);
    } else {
        printf("soak %s: %ld of %ld steps in %.1f s (%ld threads)\n", scene, done, steps, seconds, threads);
        printf("  finite state:          %s\n", finite ? "yes, every step" : "NO");
        printf("  intersection checks:   %ld, %ld step(s) with intersecting triangles\n", checks, bad_steps);
        printf("  energy (J):            start %.6g, max %.6g, end %.6g; scale %.6g\n", e0, emax, efinal, scale);
        printf("  largest rise:          %.3g of the scale (bound %g): %s\n", rise, ENERGY_MARGIN,
               bounded ? "bounded" : "NOT BOUNDED");
        printf("  verdict:               %s\n", ok ? "healthy" : "FAILED");
        printf("  state hash:            %016llx\n", (unsigned long long)hash);
    }
    hy_world_destroy(w);
    return rc;
}
