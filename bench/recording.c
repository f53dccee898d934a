/* Frame recordings shared by the benchmarks (see recording.h). */
#include "bench/recording.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "core/error.h"
#include "engine/export.h"
#include "hyphys/hyphys.h"

void hy_bench_scene_name(const char* arg, char* out, size_t cap) {
    const char* b = strrchr(arg, '/');
    b = b ? b + 1 : arg;
    snprintf(out, cap, "%s", b);
    size_t n = strlen(out);
    if (n > 5 && strcmp(out + n - 5, ".json") == 0) out[n - 5] = '\0';
}

/* The scene loaded, for recording or for its source (hy_export_source). */
static int load_scene(const char* scene, int threads, const char* who, const char** path, hy_world** w) {
    *path = hy_cli_resolve_scene(scene);
    hy_scene_options so = hy_scene_options_default();
    so.threads = threads;
    *w = NULL;
    if (hy_scene_load(*path, &so, w)) {
        fprintf(stderr, "%s: %s\n", who, hy_last_error());
        return HY_EXIT_USAGE;
    }
    return HY_EXIT_OK;
}

int hy_bench_record(const char* scene, const char* dir, long frames, int threads, int quiet, const char* who) {
    const char* path;
    hy_world* w;
    int rc = load_scene(scene, threads, who, &path, &w);
    if (rc) return rc;
    if (!hy_cli_make_dirs(dir, 0, who)) {
        hy_world_destroy(w);
        return HY_EXIT_RUNTIME;
    }
    if (!quiet)
        fprintf(stderr, "recording %ld frames of %s into %s (%d triangles)\n", frames, path, dir,
                hy_cli_triangles(w));
    /* What an earlier recording left goes first: its frames past this
     * one's end, and the job stream made from it. */
    char jobs[4200];
    snprintf(jobs, sizeof jobs, "%s/jobs.csv", dir);
    hy_export_source src;
    double t0 = hy_cli_now();
    hy_status st = hy_export_clear(dir);
    if (!st && remove(jobs) != 0 && errno != ENOENT)
        st = hy_fail(HY_ERR_IO, "%s: cannot remove: %s", jobs, strerror(errno));
    if (!st) st = hy_export_source_of(path, w, &src);
    if (!st) st = hy_export_topology(w, dir);
    if (!st) st = hy_export_frame(w, dir, 0);
    if (!st) st = hy_export_source_write(dir, path, &src);
    if (st) rc = HY_EXIT_RUNTIME;
    hy_world_def wd; /* the scene's step */
    hy_world_get_def(w, &wd);
    for (long f = 0; f < frames && rc == HY_EXIT_OK; f++) {
        if (hy_world_step(w, wd.time_step, wd.substeps) || hy_export_frame(w, dir, (int32_t)(f + 1))) rc = HY_EXIT_RUNTIME;
        if (!quiet && rc == HY_EXIT_OK && ((f + 1) % 5 == 0 || f + 1 == frames))
            fprintf(stderr, "  frame %ld/%ld (%.1f s)\n", f + 1, frames, hy_cli_now() - t0);
    }
    if (rc) fprintf(stderr, "%s: recording: %s\n", who, hy_last_error());
    hy_world_destroy(w);
    return rc;
}

int hy_bench_recording_check(const char* scene, const char* dir, int named, const char* who, int* fresh) {
    *fresh = 0;
    hy_export_source had, now;
    hy_status rs = hy_export_source_read(dir, &had);
    char topo[4200];
    snprintf(topo, sizeof topo, "%s/topology.bin", dir);
    struct stat sb;
    if (rs == HY_ERR_IO && stat(topo, &sb) != 0) return HY_EXIT_OK; /* nothing there yet */
    char why[1024];
    if (rs != HY_OK && rs != HY_ERR_IO) snprintf(why, sizeof why, "%s", hy_last_error());
    const char* path;
    hy_world* w;
    int rc = load_scene(scene, 1, who, &path, &w);
    if (rc) return rc;
    hy_status ss = hy_export_source_of(path, w, &now);
    hy_world_destroy(w);
    if (ss) {
        fprintf(stderr, "%s: %s\n", who, hy_last_error());
        return HY_EXIT_USAGE;
    }
    if (rs == HY_OK && had.scene_hash == now.scene_hash && had.initial_hash == now.initial_hash &&
        had.collisions == now.collisions) {
        *fresh = 1;
        return HY_EXIT_OK;
    }
    if (rs == HY_OK)
        snprintf(why, sizeof why, "%s: not a recording of %s as it is now (%s)", dir, path,
                 had.scene_hash != now.scene_hash     ? "the scene file differs from the one it was recorded from"
                 : had.initial_hash != now.initial_hash ? "the scene loads to another initial state"
                 : had.collisions                       ? "it was recorded with collisions on, the scene has them off"
                                                        : "it was recorded with collisions off");
    else if (rs == HY_ERR_IO)
        snprintf(why, sizeof why, "%s: no source.txt says which scene it was recorded from", dir);
    if (named) {
        fprintf(stderr, "%s: %s (not recording over it: remove it or name another --record-dir)\n", who, why);
        return HY_EXIT_USAGE;
    }
    fprintf(stderr, "%s: %s (recording it again)\n", who, why);
    return HY_EXIT_OK;
}

int hy_bench_recording(const char* scene, const char* dir, int named, long frames, int threads, const char* who,
                       hy_recording* rec) {
    memset(rec, 0, sizeof *rec);
    int fresh;
    int rc = hy_bench_recording_check(scene, dir, named, who, &fresh);
    if (rc) return rc;
    return hy_bench_recording_checked(scene, dir, named, fresh, frames, threads, who, rec);
}

int hy_bench_recording_checked(const char* scene, const char* dir, int named, int fresh, long frames, int threads,
                               const char* who, hy_recording* rec) {
    memset(rec, 0, sizeof *rec);
    int rc;
    if (fresh) {
        hy_status ls = hy_recording_load(dir, (int32_t)frames + 1, rec);
        if (ls == HY_OK && rec->frame_count >= frames + 1) return HY_EXIT_OK;
        hy_recording_free(rec);
        if (ls != HY_OK && ls != HY_ERR_IO) { /* there, but does not read */
            if (named) {
                fprintf(stderr, "%s: %s (not recording over it: remove it or name another --record-dir)\n", who,
                        hy_last_error());
                return HY_EXIT_USAGE;
            }
            fprintf(stderr, "%s: %s (recording it again)\n", who, hy_last_error());
        }
    }
    rc = hy_bench_record(scene, dir, frames, threads, 0, who);
    if (rc) return rc;
    if (hy_recording_load(dir, (int32_t)frames + 1, rec) != HY_OK || rec->frame_count < frames + 1) {
        fprintf(stderr, "%s: %s: %s\n", who, dir, hy_last_error());
        hy_recording_free(rec);
        return HY_EXIT_RUNTIME;
    }
    return HY_EXIT_OK;
}
