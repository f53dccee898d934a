/* Frame recordings shared by the benchmarks: `hyphys bench ccd` replays
 * them, `hyphys bench sched` turns them into job streams. Both record on
 * first use with the code of `hyphys run --export-frames`. */
#ifndef HY_BENCH_RECORDING_H
#define HY_BENCH_RECORDING_H

#include <stddef.h>

/* Base name of a scene argument without folders or ".json". */
void hy_bench_scene_name(const char* arg, char* out, size_t cap);

/* Load `scene` (a name or a file) with `threads` workers, step it `frames`
 * times and export the topology, every frame (0..frames) and source.txt
 * into dir, after removing an earlier recording there (its frames and the
 * job stream made from it).
 * Progress on stderr unless quiet; errors prefixed by `who`. Returns a CLI
 * exit code (HY_EXIT_USAGE for a scene that does not load). */
int hy_bench_record(const char* scene, const char* dir, long frames, int threads, int quiet, const char* who);

/* Whether dir holds a recording of `scene` as it is now (its source.txt
 * names the scene file's hash and the loaded world's initial state hash:
 * engine/export.h): *fresh = 1 when it does, 0 when there is none or it
 * is of something else. A recording of something else, or of unknown
 * origin, is an error (HY_EXIT_USAGE) in a folder the user named; in the
 * default cache it is said and *fresh is 0 (record it again). Returns a
 * CLI exit code (HY_EXIT_USAGE for a scene that does not load). */
int hy_bench_recording_check(const char* scene, const char* dir, int named, const char* who, int* fresh);

struct hy_recording;
/* frames + 1 frames of `scene` in *rec: read from dir, or recorded there
 * first (hy_bench_record) when it holds fewer, none, or a recording of
 * something else (hy_bench_recording_check). A recording that is
 * there but does not read is recorded over only when the folder is the
 * default cache (named = 0; it says so); in a folder the user named it is
 * an error (HY_EXIT_USAGE). Returns a CLI exit code; *rec is to be freed
 * on success. */
int hy_bench_recording(const char* scene, const char* dir, int named, long frames, int threads, const char* who,
                       struct hy_recording* rec);
/* The same after hy_bench_recording_check has answered `fresh` (so the
 * scene is not loaded twice to check it). */
int hy_bench_recording_checked(const char* scene, const char* dir, int named, int fresh, long frames, int threads,
                               const char* who, struct hy_recording* rec);

#endif
