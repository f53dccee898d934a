/* libFuzzer target: any bytes as an OBJ file must give hy_mesh_load_obj a
 * status or a valid mesh (indices in range, finite coordinates), never a
 * crash or sanitizer report.
 *
 * The loader takes a path, so each input is written to an in-memory file
 * (memfd) and opened through /proc/self/fd: no disk traffic, no temp files
 * left behind. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#include "hyphys/hyphys.h"

static int g_fd = -1;
static char g_path[64];

int LLVMFuzzerInitialize(int* argc, char*** argv);
int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int LLVMFuzzerInitialize(int* argc, char*** argv) {
    (void)argc;
    (void)argv;
    g_fd = memfd_create("fuzz.obj", 0);
    if (g_fd < 0) {
        perror("memfd_create");
        abort();
    }
    snprintf(g_path, sizeof g_path, "/proc/self/fd/%d", g_fd);
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (ftruncate(g_fd, 0) != 0) abort();
    size_t done = 0;
    while (done < size) {
        ssize_t k = pwrite(g_fd, data + done, size - done, (off_t)done);
        if (k <= 0) abort();
        done += (size_t)k;
    }
    hy_mesh* m = (hy_mesh*)&done;
    hy_status s = hy_mesh_load_obj(g_path, &m);
    if (s != HY_OK) {
        if (m != NULL || hy_last_error()[0] == '\0') __builtin_trap();
        return 0;
    }
    hy_mesh_view v = hy_mesh_get_view(m);
    if (v.vertex_count < 1 || v.triangle_count < 1) __builtin_trap();
    for (int32_t i = 0; i < 3 * v.triangle_count; i++)
        if (v.triangles[i] < 0 || v.triangles[i] >= v.vertex_count) __builtin_trap();
    for (int32_t i = 0; i < 3 * v.vertex_count; i++)
        if (!(v.positions[i] == v.positions[i]) || v.positions[i] - v.positions[i] != 0.0) __builtin_trap();
    hy_mesh_destroy(m);
    return 0;
}
