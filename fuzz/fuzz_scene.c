/* libFuzzer target: any bytes given to hy_scene_load_string must give a
 * status or a world, never a crash, leak or sanitizer report.
 *
 * Relative mesh paths resolve against $HY_FUZZ_DATA (scripts/fuzz.sh points
 * it at tests/data/scenes) so the fuzzer can reach the OBJ path too. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "hyphys/hyphys.h"

static char g_name[4096] = "fuzz.json";

int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerInitialize(int* argc, char*** argv) {
    (void)argc;
    (void)argv;
    const char* dir = getenv("HY_FUZZ_DATA");
    if (dir && dir[0]) snprintf(g_name, sizeof g_name, "%s/fuzz.json", dir);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    hy_scene_options opt = hy_scene_options_default();
    opt.threads = 1; /* no worker pool per input */
    hy_world* w = (hy_world*)&opt;
    hy_status s = hy_scene_load_string((const char*)data, size, g_name, &opt, &w);
    if (s != HY_OK) {
        /* Contract: on failure no world and a message. */
        if (w != NULL || hy_last_error()[0] == '\0') __builtin_trap();
        return 0;
    }
    int32_t triangles = -1;
    if (!w || hy_world_get_triangle_count(w, &triangles) != HY_OK || triangles < 0) __builtin_trap();
    hy_world_destroy(w);
    return 0;
}
