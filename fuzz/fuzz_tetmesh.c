/* libFuzzer target: any bytes as a Gmsh .msh file, or as a TetGen .node and
 * .ele pair, must give the loaders (io/tetmesh_load.h) a status with a
 * message and no mesh, or a valid mesh: indices in range, every vertex used,
 * finite coordinates, every element of positive volume. Never a crash or a
 * sanitizer report.
 *
 * The first byte picks the format (even: Gmsh; odd: TetGen, the rest split
 * at the first "@@" into the .node and the .ele text). The loaders' parse
 * functions read memory, so no file is written. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "hyphys/hyphys.h"
#include "io/tetmesh_load.h"

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

static double volume6(const hy_tetmesh* m, int32_t e) {
    const int32_t* t = m->tets + 4 * e;
    const double* x = m->positions;
    double d[3][3];
    for (int i = 1; i < 4; i++)
        for (int k = 0; k < 3; k++) d[i - 1][k] = x[3 * t[i] + k] - x[3 * t[0] + k];
    return d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) - d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
           d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    if (size < 1) return 0;
    const char* text = (const char*)data + 1;
    size_t len = size - 1;
    hy_tetmesh* m = (hy_tetmesh*)&len;
    hy_status s;
    if (data[0] % 2 == 0) {
        s = hy_tetmesh_parse_gmsh(text, len, "fuzz.msh", &m);
    } else {
        size_t cut = len;
        for (size_t i = 0; i + 1 < len; i++)
            if (text[i] == '@' && text[i + 1] == '@') {
                cut = i;
                break;
            }
        size_t rest = cut + 2 <= len ? cut + 2 : len;
        s = hy_tetmesh_parse_tetgen(text, cut, "fuzz.node", text + rest, len - rest, "fuzz.ele", &m);
    }
    if (s != HY_OK) {
        if (m != NULL || hy_last_error()[0] == '\0') __builtin_trap();
        return 0;
    }
    if (m->vertex_count < 4 || m->tet_count < 1) __builtin_trap();
    uint8_t* used = calloc((size_t)m->vertex_count, 1);
    if (!used) abort();
    for (int64_t i = 0; i < 4 * (int64_t)m->tet_count; i++) {
        if (m->tets[i] < 0 || m->tets[i] >= m->vertex_count) __builtin_trap();
        used[m->tets[i]] = 1;
    }
    for (int32_t v = 0; v < m->vertex_count; v++)
        if (!used[v]) __builtin_trap();
    free(used);
    for (int64_t i = 0; i < 3 * (int64_t)m->vertex_count; i++)
        if (!(m->positions[i] == m->positions[i]) || m->positions[i] - m->positions[i] != 0.0) __builtin_trap();
    for (int32_t e = 0; e < m->tet_count; e++)
        if (!(volume6(m, e) > 0)) __builtin_trap();
    hy_tetmesh_destroy(m);
    return 0;
}
