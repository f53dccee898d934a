/* hyphys bench ccd: collision detection replayed over a scene's recorded
 * sequence.
 *
 * A recording (docs/guide/FRAMES.md) of the scene is made on first use with the
 * same code as `hyphys run --export-frames` (collisions on, so the motion is
 * the simulation's), then every consecutive pair of frames goes through the
 * whole-step pipeline of collision/frames.h: BVH refit (rebuilt when it
 * decays), traversal, filters and exact tests, all objects as one mesh.
 * By default the whole sequence is replayed (scene_info.c), at the
 * simulation's contact distance (the scene's thickness: the response keeps
 * objects about that far apart, so at distance 0 a well-resolved run has
 * almost no contacts to find and the replay would measure the easy case).
 * The first pair is run once untimed (it builds the BVH). */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/recording.h"
#include "bench/scene_info.h"
#include "cli/cli.h"
#include "collision/frames.h"
#include "engine/export.h"
#include "hyphys/hyphys.h"
#include "core/pool.h"

#define WHO "hyphys bench ccd"

void hy_bench_ccd_help(void);
int hy_bench_ccd_main(int argc, char** argv);

void hy_bench_ccd_help(void) {
    printf("usage: hyphys bench ccd [--scene NAME] [--threads N] [--frames N] [--record-dir DIR]\n"
           "                       [--thickness M] [--no-cull] [--csv FILE] [--json]\n\n"
           "Replay a scene's recorded sequence through continuous collision detection\n"
           "(BVH refit + traversal + filters + exact tests, all objects as one mesh) and\n"
           "report CCD frames per second over the sequence, the median and p95 frame,\n"
           "the first frame with a contact, and candidates, exact tests and contacts\n"
           "per frame.\n\n"
           "  --scene NAME      cloth_ball (default), nbody, fracture, or any scene file\n"
           "  --threads N       worker threads including the caller (default 2)\n"
           "  --frames N        frame pairs to replay (default: the scene's whole sequence:\n"
           "                    %s; %d for other scenes)\n"
           "  --record-dir DIR  where recordings live (default hyphys-recordings/NAME);\n"
           "                    recorded with `hyphys run --export-frames` code on first use\n"
           "                    (a long sequence takes as long to record as to simulate)\n"
           "  --thickness M     contact distance in metres (default: the simulation's, the\n"
           "                    largest object thickness in the scene)\n"
           "  --no-cull         no self-collision culling\n"
           "  --csv FILE        one row per frame: ms (total, bvh, traverse, exact),\n"
           "                    candidates, exact_tests, contacts, rebuilt\n"
           "  --json            {\"scene\":..,\"threads\":..,\"frames\":..,\"first_contact_frame\":..|null,\n"
           "                     \"fps\":..,\"frame_ms\":{\"median\":..,\"p95\":..},\"thickness\":..,\n"
           "                     \"candidates_per_frame\":..,\"exact_tests_per_frame\":..,\n"
           "                     \"contacts_per_frame\":..}\n\n"
           "Frame k is the pair of recorded frames k-1 and k (the motion of step k).\n\n"
           "exit: 0 ok, 1 runtime failure (the CSV could not be written, say),\n"
           "      2 bad usage or input\n",
           hy_bench_sequences_text(), HY_BENCH_DEFAULT_FRAMES);
}

/* One replayed frame pair. */
typedef struct ccd_row {
    double ms;
    hy_frames_stats st;
} ccd_row;

/* The contact distance the simulation of `scene` uses (hy_bench_contact_distance). */
static int scene_thickness(const char* scene, double* out) {
    hy_scene_options so = hy_scene_options_default();
    so.threads = 1;
    hy_world* w = NULL;
    if (hy_scene_load(hy_cli_resolve_scene(scene), &so, &w)) {
        fprintf(stderr, WHO ": %s\n", hy_last_error());
        return HY_EXIT_USAGE;
    }
    int mixed = 0;
    hy_status st = hy_bench_contact_distance(w, out, &mixed);
    hy_world_destroy(w);
    if (st) {
        fprintf(stderr, WHO ": %s\n", hy_last_error());
        return HY_EXIT_RUNTIME;
    }
    if (mixed)
        fprintf(stderr, WHO ": the objects' thicknesses differ: replaying at the largest, %g m (the simulation "
                        "queries some pairs nearer)\n", *out);
    return HY_EXIT_OK;
}

int hy_bench_ccd_main(int argc, char** argv) {
    const char* scene = "cloth_ball";
    const char* dir_arg = NULL;
    const char* csv_path = NULL;
    long threads = 2, frames = 0;
    double thickness = -1.0; /* < 0: the scene's */
    int json = 0, cull = 1;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--no-cull")) {
            cull = 0;
        } else if (!strcmp(a, "--scene") || !strcmp(a, "--threads") || !strcmp(a, "--frames") ||
                   !strcmp(a, "--record-dir") || !strcmp(a, "--thickness") || !strcmp(a, "--csv")) {
            if (i + 1 >= argc) {
                fprintf(stderr, WHO ": %s needs a value\n", a);
                return HY_EXIT_USAGE;
            }
            const char* v = argv[++i];
            if (!strcmp(a, "--scene")) scene = v;
            else if (!strcmp(a, "--record-dir")) dir_arg = v;
            else if (!strcmp(a, "--csv")) csv_path = v;
            else if (!strcmp(a, "--thickness")) {
                char* end = NULL;
                thickness = strtod(v, &end);
                if (!end || *end || !(thickness >= 0.0 && thickness < 1e3)) {
                    fprintf(stderr, WHO ": --thickness: '%s' is not a distance in [0, 1000)\n", v);
                    return HY_EXIT_USAGE;
                }
            }
            else if (!strcmp(a, "--threads") && !hy_cli_parse_int(a, v, 1, 256, &threads)) return HY_EXIT_USAGE;
            else if (!strcmp(a, "--frames") && !hy_cli_parse_int(a, v, 1, 100000, &frames)) return HY_EXIT_USAGE;
        } else {
            fprintf(stderr, WHO ": unknown option '%s' (try --help)\n", a);
            return HY_EXIT_USAGE;
        }
    }
    char name[256], dir[4096];
    hy_bench_scene_name(scene, name, sizeof name);
    long sequence = hy_bench_default_frames(name, NULL);
    if (frames == 0) frames = sequence;
    if (dir_arg) snprintf(dir, sizeof dir, "%s", dir_arg);
    else snprintf(dir, sizeof dir, "hyphys-recordings/%s", name);
    if (thickness < 0) {
        int trc = scene_thickness(scene, &thickness);
        if (trc) return trc;
    }
    /* The CSV opens before recording: a path it cannot write fails before
     * minutes of simulation. */
    FILE* csv = NULL;
    if (csv_path) {
        csv = fopen(csv_path, "w");
        if (!csv) {
            fprintf(stderr, WHO ": --csv: cannot write '%s': %s\n", csv_path, strerror(errno));
            return HY_EXIT_USAGE;
        }
    }

    /* frames pairs need frames + 1 recorded frames */
    hy_recording rec;
    int rrc = hy_bench_recording(scene, dir, dir_arg != NULL, frames, (int)threads, WHO, &rec);
    if (rrc) {
        if (csv) fclose(csv);
        return rrc;
    }

    hy_pool* pool = hy_pool_create((int)threads);
    hy_frames_def def = hy_frames_def_default();
    def.thickness = thickness;
    def.self_cull = cull;
    hy_frames* fr = NULL;
    ccd_row* rows = calloc((size_t)frames, sizeof *rows);
    double* scratch = malloc(sizeof(double) * (size_t)frames);
    if (!pool || !rows || !scratch ||
        hy_frames_create(rec.triangles, rec.triangle_count, rec.vertex_count, &def, &fr) != HY_OK) {
        fprintf(stderr, WHO ": %s\n", pool && rows && scratch ? hy_last_error() : "out of memory");
        hy_pool_destroy(pool);
        hy_recording_free(&rec);
        free(rows);
        free(scratch);
        if (csv) fclose(csv);
        return HY_EXIT_RUNTIME;
    }
    size_t stride = 3 * (size_t)rec.vertex_count;
    hy_frames_stats st;
    int rc = HY_EXIT_OK;
    if (hy_frames_run(fr, rec.frames, rec.frames + stride, pool, &st) != HY_OK) rc = HY_EXIT_RUNTIME;
    for (long f = 0; f < frames && rc == HY_EXIT_OK; f++) {
        const double* x0 = rec.frames + (size_t)f * stride;
        double t = hy_cli_now();
        if (hy_frames_run(fr, x0, x0 + stride, pool, &rows[f].st) != HY_OK) {
            rc = HY_EXIT_RUNTIME;
            break;
        }
        rows[f].ms = 1000.0 * (hy_cli_now() - t);
    }
    if (rc) fprintf(stderr, WHO ": %s\n", hy_last_error());
    if (csv) {
        if (rc == HY_EXIT_OK) {
            fprintf(csv, "frame,ms,ms_bvh,ms_traverse,ms_exact,candidates,triangle_pairs,exact_tests,contacts,rebuilt\n");
            for (long f = 0; f < frames; f++) {
                const hy_frames_stats* s = &rows[f].st;
                fprintf(csv, "%ld,%.4f,%.4f,%.4f,%.4f,%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 ",%d\n", f + 1,
                        rows[f].ms, s->ms_bvh, s->ms_traverse, s->ms_exact, s->candidates, s->triangle_pairs,
                        s->exact_tests, s->vf_found + s->ee_found, s->rebuilt);
            }
        }
        int bad = ferror(csv);
        bad |= fclose(csv) != 0;
        if (bad && rc == HY_EXIT_OK) {
            fprintf(stderr, WHO ": --csv: writing '%s' failed: %s\n", csv_path, strerror(errno));
            rc = HY_EXIT_RUNTIME;
        }
    }
    if (rc == HY_EXIT_OK) {
        int64_t candidates = 0, exact = 0, contacts = 0, tri_pairs = 0;
        double seconds = 0.0, ms_bvh = 0.0, ms_traverse = 0.0, ms_exact = 0.0;
        int rebuilds = 0;
        long first_contact = 0;
        for (long f = 0; f < frames; f++) {
            const hy_frames_stats* s = &rows[f].st;
            seconds += rows[f].ms / 1000.0;
            candidates += s->candidates;
            tri_pairs += s->triangle_pairs;
            exact += s->exact_tests;
            contacts += s->vf_found + s->ee_found;
            if (!first_contact && s->vf_found + s->ee_found > 0) first_contact = f + 1;
            ms_bvh += s->ms_bvh;
            ms_traverse += s->ms_traverse;
            ms_exact += s->ms_exact;
            rebuilds += s->rebuilt;
            scratch[f] = rows[f].ms;
        }
        double fps = seconds > 0 ? (double)frames / seconds : 0.0;
        double n = (double)frames;
        double med = hy_cli_percentile(scratch, frames, 50.0), p95 = hy_cli_percentile(scratch, frames, 95.0);
        if (json) {
            printf("{\"scene\":");
            hy_cli_json_string(stdout, name);
            printf(",\"threads\":%ld,\"frames\":%ld,\"sequence_frames\":%ld,\"first_contact_frame\":", threads,
                   frames, sequence);
            if (first_contact) printf("%ld", first_contact);
            else printf("null");
            printf(",\"fps\":%.3f,\"frame_ms\":{\"median\":%.4f,\"p95\":%.4f},\"candidates_per_frame\":%.1f,"
                   "\"exact_tests_per_frame\":%.1f,\"contacts_per_frame\":%.1f,\"triangles\":%d,\"thickness\":%g,"
                   "\"self_cull\":%d,\"ms_bvh\":%.3f,\"ms_traverse\":%.3f,\"ms_exact\":%.3f,\"rebuilds\":%d}\n",
                   fps, med, p95, (double)candidates / n, (double)exact / n, (double)contacts / n,
                   rec.triangle_count, thickness, cull, ms_bvh / n, ms_traverse / n, ms_exact / n, rebuilds);
        } else {
            printf("scene %s: %d triangles, %ld frames (%s), %ld threads, thickness %g%s\n", name,
                   rec.triangle_count, frames, frames == sequence ? "its whole sequence" : "set by --frames",
                   threads, thickness, cull ? "" : ", no self-culling");
            if (first_contact) printf("  first contact           frame %ld\n", first_contact);
            else printf("  first contact           none in these frames\n");
            printf("  CCD frames per second   %10.3f  (%.2f ms per frame; median %.2f, p95 %.2f)\n"
                   "  candidates per frame    %10.1f  (from %.1f triangle pairs)\n"
                   "  exact tests per frame   %10.1f\n"
                   "  contacts per frame      %10.1f\n"
                   "  ms per frame: BVH update %.2f (%d rebuilds), traversal %.2f, filters + exact %.2f\n",
                   fps, 1000.0 * seconds / n, med, p95, (double)candidates / n, (double)tri_pairs / n,
                   (double)exact / n, (double)contacts / n, ms_bvh / n, rebuilds, ms_traverse / n, ms_exact / n);
        }
    }
    free(rows);
    free(scratch);
    hy_frames_destroy(fr);
    hy_pool_destroy(pool);
    hy_recording_free(&rec);
    return rc;
}
