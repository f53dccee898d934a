/* hyphys bench ccd: collision detection replayed over recorded frames.
 *
 * A recording (docs/FRAMES.md) of the scene is made on first use with the
 * same code as `hyphys run --export-frames` (collisions on, so the motion is
 * the simulation's), then every consecutive pair of frames goes through the
 * whole-step pipeline of collision/frames.h: BVH refit (rebuilt when it
 * decays), traversal, filters and exact tests, all objects as one mesh,
 * with a contact distance (--thickness, default 1 mm: the default body
 * thickness; the response keeps objects about that far apart, so at zero
 * distance a well-resolved run has almost no contacts to find). The first
 * pair is run once untimed (it builds the BVH). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/recording.h"
#include "cli/cli.h"
#include "collision/frames.h"
#include "engine/export.h"
#include "hyphys/hyphys.h"
#include "sched/pool.h"

void hy_bench_ccd_help(void);
int hy_bench_ccd_main(int argc, char** argv);

void hy_bench_ccd_help(void) {
    printf("usage: hyphys bench ccd [--scene NAME] [--threads N] [--frames N] [--record-dir DIR]\n"
           "                       [--thickness M] [--no-cull] [--json]\n\n"
           "Replay recorded frames of a scene through continuous collision detection\n"
           "(BVH refit + traversal + filters + exact tests) and report CCD frames per\n"
           "second, candidates, exact tests and contacts per frame.\n\n"
           "  --scene NAME      cloth_ball (default), nbody, fracture, or any scene file\n"
           "  --threads N       worker threads including the caller (default 2)\n"
           "  --frames N        frame pairs to replay (default 20)\n"
           "  --record-dir DIR  where recordings live (default hyphys-recordings/NAME);\n"
           "                    recorded with `hyphys run --export-frames` code on first use\n"
           "  --thickness M     contact distance in metres (default 0.001)\n"
           "  --no-cull         no self-collision culling\n"
           "  --json            {\"scene\":..,\"threads\":..,\"frames\":..,\"fps\":..,\n"
           "                     \"candidates_per_frame\":..,\"exact_tests_per_frame\":..,\n"
           "                     \"contacts_per_frame\":..}\n\n"
           "exit: 0 ok, 1 runtime failure, 2 bad usage or input\n");
}

int hy_bench_ccd_main(int argc, char** argv) {
    const char* scene = "cloth_ball";
    const char* dir_arg = NULL;
    long threads = 2, frames = 20;
    double thickness = 0.001;
    int json = 0, cull = 1;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--no-cull")) {
            cull = 0;
        } else if (!strcmp(a, "--scene") || !strcmp(a, "--threads") || !strcmp(a, "--frames") ||
                   !strcmp(a, "--record-dir") || !strcmp(a, "--thickness")) {
            if (i + 1 >= argc) {
                fprintf(stderr, "hyphys bench ccd: %s needs a value\n", a);
                return HY_EXIT_USAGE;
            }
            const char* v = argv[++i];
            if (!strcmp(a, "--scene")) scene = v;
            else if (!strcmp(a, "--record-dir")) dir_arg = v;
            else if (!strcmp(a, "--thickness")) {
                char* end = NULL;
                thickness = strtod(v, &end);
                if (!end || *end || !(thickness >= 0.0 && thickness < 1e3)) {
                    fprintf(stderr, "hyphys bench ccd: --thickness: '%s' is not a distance in [0, 1000)\n", v);
                    return HY_EXIT_USAGE;
                }
            }
            else if (!strcmp(a, "--threads") && !hy_cli_parse_int(a, v, 1, 256, &threads)) return HY_EXIT_USAGE;
            else if (!strcmp(a, "--frames") && !hy_cli_parse_int(a, v, 1, 100000, &frames)) return HY_EXIT_USAGE;
        } else {
            fprintf(stderr, "hyphys bench ccd: unknown option '%s' (try --help)\n", a);
            return HY_EXIT_USAGE;
        }
    }
    char name[256], dir[4096];
    hy_bench_scene_name(scene, name, sizeof name);
    if (dir_arg) snprintf(dir, sizeof dir, "%s", dir_arg);
    else snprintf(dir, sizeof dir, "hyphys-recordings/%s", name);

    /* frames pairs need frames + 1 recorded frames */
    hy_recording rec;
    int rrc = hy_bench_recording(scene, dir, dir_arg != NULL, frames, (int)threads, "hyphys bench ccd", &rec);
    if (rrc) return rrc;

    hy_pool* pool = hy_pool_create((int)threads);
    hy_frames_def def = hy_frames_def_default();
    def.thickness = thickness;
    def.self_cull = cull;
    hy_frames* fr = NULL;
    if (!pool || hy_frames_create(rec.triangles, rec.triangle_count, rec.vertex_count, &def, &fr) != HY_OK) {
        fprintf(stderr, "hyphys bench ccd: %s\n", pool ? hy_last_error() : "out of memory");
        hy_pool_destroy(pool);
        hy_recording_free(&rec);
        return HY_EXIT_RUNTIME;
    }
    size_t stride = 3 * (size_t)rec.vertex_count;
    hy_frames_stats st;
    int rc = HY_EXIT_OK;
    if (hy_frames_run(fr, rec.frames, rec.frames + stride, pool, &st) != HY_OK) rc = HY_EXIT_RUNTIME;
    int64_t candidates = 0, exact = 0, contacts = 0, tri_pairs = 0;
    double seconds = 0.0, ms_bvh = 0.0, ms_traverse = 0.0, ms_exact = 0.0;
    int rebuilds = 0;
    for (long f = 0; f < frames && rc == HY_EXIT_OK; f++) {
        const double* x0 = rec.frames + (size_t)f * stride;
        double t = hy_cli_now();
        if (hy_frames_run(fr, x0, x0 + stride, pool, &st) != HY_OK) {
            rc = HY_EXIT_RUNTIME;
            break;
        }
        seconds += hy_cli_now() - t;
        candidates += st.candidates;
        tri_pairs += st.triangle_pairs;
        exact += st.exact_tests;
        contacts += st.vf_found + st.ee_found;
        ms_bvh += st.ms_bvh;
        ms_traverse += st.ms_traverse;
        ms_exact += st.ms_exact;
        rebuilds += st.rebuilt;
    }
    if (rc) {
        fprintf(stderr, "hyphys bench ccd: %s\n", hy_last_error());
    } else {
        double fps = seconds > 0 ? (double)frames / seconds : 0.0;
        double n = (double)frames;
        if (json) {
            printf("{\"scene\":");
            hy_cli_json_string(stdout, name);
            printf(",\"threads\":%ld,\"frames\":%ld,\"fps\":%.3f,\"candidates_per_frame\":%.1f,"
                   "\"exact_tests_per_frame\":%.1f,\"contacts_per_frame\":%.1f,\"triangles\":%d,\"thickness\":%g,"
                   "\"self_cull\":%d,\"ms_bvh\":%.3f,\"ms_traverse\":%.3f,\"ms_exact\":%.3f,\"rebuilds\":%d}\n",
                   threads, frames, fps, (double)candidates / n, (double)exact / n, (double)contacts / n,
                   rec.triangle_count, thickness, cull, ms_bvh / n, ms_traverse / n, ms_exact / n, rebuilds);
        } else {
            printf("scene %s: %d triangles, %ld frames, %ld threads, thickness %g%s\n"
                   "  CCD frames per second   %10.3f  (%.2f ms per frame)\n"
                   "  candidates per frame    %10.1f  (from %.1f triangle pairs)\n"
                   "  exact tests per frame   %10.1f\n"
                   "  contacts per frame      %10.1f\n"
                   "  ms per frame: BVH update %.2f (%d rebuilds), traversal %.2f, filters + exact %.2f\n",
                   name, rec.triangle_count, frames, threads, thickness, cull ? "" : ", no self-culling", fps,
                   1000.0 * seconds / n, (double)candidates / n,
                   (double)tri_pairs / n, (double)exact / n, (double)contacts / n, ms_bvh / n, rebuilds, ms_traverse / n, ms_exact / n);
        }
    }
    hy_frames_destroy(fr);
    hy_pool_destroy(pool);
    hy_recording_free(&rec);
    return rc;
}
