/* Frame recordings shared by the benchmarks (see recording.h). */
#include "bench/recording.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "engine/export.h"
#include "hyphys/hyphys.h"

int hy_bench_make_dirs(const char* path, const char* who) {
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) return 0;
    memcpy(buf, path, n + 1);
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && buf[i] != '\0') continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            fprintf(stderr, "%s: cannot create '%s': %s\n", who, buf, strerror(errno));
            return 0;
        }
        buf[i] = c;
    }
    return 1;
}

void hy_bench_scene_name(const char* arg, char* out, size_t cap) {
    const char* b = strrchr(arg, '/');
    b = b ? b + 1 : arg;
    snprintf(out, cap, "%s", b);
    size_t n = strlen(out);
    if (n > 5 && strcmp(out + n - 5, ".json") == 0) out[n - 5] = '\0';
}

int hy_bench_record(const char* scene, const char* dir, long frames, int threads, int quiet, const char* who) {
    const char* path = hy_cli_resolve_scene(scene);
    hy_scene_options so = hy_scene_options_default();
    so.threads = threads;
    hy_world* w = NULL;
    if (hy_scene_load(path, &so, &w)) {
        fprintf(stderr, "%s: %s\n", who, hy_last_error());
        return HY_EXIT_USAGE;
    }
    if (!hy_bench_make_dirs(dir, who)) {
        hy_world_destroy(w);
        return HY_EXIT_RUNTIME;
    }
    if (!quiet)
        fprintf(stderr, "recording %ld frames of %s into %s (first use; %d triangles)\n", frames, path, dir,
                hy_world_get_triangle_count(w));
    int rc = HY_EXIT_OK;
    double t0 = hy_cli_now();
    if (hy_export_topology(w, dir) || hy_export_frame(w, dir, 0)) rc = HY_EXIT_RUNTIME;
    for (long f = 0; f < frames && rc == HY_EXIT_OK; f++) {
        if (hy_world_step(w) || hy_export_frame(w, dir, (int32_t)(f + 1))) rc = HY_EXIT_RUNTIME;
        if (!quiet && rc == HY_EXIT_OK && ((f + 1) % 5 == 0 || f + 1 == frames))
            fprintf(stderr, "  frame %ld/%ld (%.1f s)\n", f + 1, frames, hy_cli_now() - t0);
    }
    if (rc) fprintf(stderr, "%s: recording: %s\n", who, hy_last_error());
    hy_world_destroy(w);
    return rc;
}

int hy_bench_recording(const char* scene, const char* dir, int named, long frames, int threads, const char* who,
                       hy_recording* rec) {
    memset(rec, 0, sizeof *rec);
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
    int rc = hy_bench_record(scene, dir, frames, threads, 0, who);
    if (rc) return rc;
    if (hy_recording_load(dir, (int32_t)frames + 1, rec) != HY_OK || rec->frame_count < frames + 1) {
        fprintf(stderr, "%s: %s: %s\n", who, dir, hy_last_error());
        hy_recording_free(rec);
        return HY_EXIT_RUNTIME;
    }
    return HY_EXIT_OK;
}
