/* Shared pieces of the `hyphys` command line. Each command lives in its own
 * cli/cmd_<name>.c and returns the process exit code: 0 ok, 1 runtime
 * failure, 2 bad usage or input. */
#ifndef HY_CLI_CLI_H
#define HY_CLI_CLI_H

#include <stdint.h>
#include <stdio.h>

#include "hyphys/hyphys.h"

#define HY_EXIT_OK 0
#define HY_EXIT_RUNTIME 1
#define HY_EXIT_USAGE 2

typedef struct hy_command {
    const char* name;
    const char* summary;
    int (*main)(int argc, char** argv); /* argv[0] is the command name */
    void (*help)(void);
} hy_command;

/* Parse a whole decimal integer in [lo, hi]; on failure print an error naming
 * the option and return 0. */
int hy_cli_parse_int(const char* option, const char* text, long lo, long hi, long* out);
/* Wall clock, seconds (monotonic). */
double hy_cli_now(void);
/* Percentile (0..100) of v[0..n) by sorting a copy; 0 if n == 0. */
double hy_cli_percentile(const double* v, int64_t n, double pct);
/* Path of a file under the shared data folder (../shared/data beside the
 * checkout, or $HY_DATA_DIR). */
const char* hy_cli_data_dir(void);

/* A scene argument: a path to a .json file, or a bare name (cloth_ball)
 * looked up as scenes/NAME.json in the current folder, then beside the
 * sources, then in the installed share folder. Returns a static buffer. */
const char* hy_cli_resolve_scene(const char* arg);
/* hy_cli_resolve_scene, and when arg is a bare name that is neither a scene
 * nor a file, NULL after a message "hyphys CMD: no scene 'ARG' ..." on
 * stderr that lists the scenes there are (cloth_ball, drop, ...). */
const char* hy_cli_find_scene(const char* cmd, const char* arg);
/* Is stdout a terminal (progress bars, colours)? */
int hy_cli_is_tty(void);
/* 1 when dir is a folder this process can write in; else 0 with errno set
 * (ENOTDIR for anything but a folder). */
int hy_cli_writable_dir(const char* dir);
/* 1 when a file can be written at path: an existing file (not a folder)
 * this process may write, or a folder it may write in to create it; else 0
 * with errno set (ENOENT for a missing folder). Creates nothing. */
int hy_cli_can_write(const char* path);
/* mkdir -p of path, or of the folder holding it when parent_only (a file's
 * path). 1 on success; else 0 with errno set, and when who is not NULL a
 * message "WHO: cannot create 'FOLDER': REASON" on stderr. */
int hy_cli_make_dirs(const char* path, int parent_only, const char* who);
/* s as a JSON string literal (quotes, backslashes and control characters
 * escaped), for names that come from the user (scene paths, profiles). */
void hy_cli_json_string(FILE* f, const char* s);

/* A world's counts and hash as values, for printing: the getters fail only
 * on a NULL world or out pointer, which the commands never pass. */
static inline int32_t hy_cli_triangles(const hy_world* w) {
    int32_t n = 0;
    hy_world_get_triangle_count(w, &n);
    return n;
}
static inline int32_t hy_cli_vertices(const hy_world* w) {
    int32_t n = 0;
    hy_world_get_vertex_count(w, &n);
    return n;
}
static inline int32_t hy_cli_objects(const hy_world* w) {
    int32_t n = 0;
    hy_world_get_object_count(w, &n);
    return n;
}
static inline int32_t hy_cli_bonds(const hy_world* w) {
    int32_t n = 0;
    hy_world_get_bond_count(w, &n);
    return n;
}
static inline int32_t hy_cli_threads(const hy_world* w) {
    int32_t n = 0;
    hy_world_get_thread_count(w, &n);
    return n;
}
static inline uint64_t hy_cli_hash(const hy_world* w) {
    uint64_t h = 0;
    hy_world_hash(w, &h);
    return h;
}

#endif
