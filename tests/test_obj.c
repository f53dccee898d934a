/* OBJ loader: good files load with the right counts; each malformed file gives a status naming file and line; random bytes never crash. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/mesh.h"
#include "hyphys/hyphys.h"
#include "test.h"

#define DATA HY_SOURCE_DIR "/tests/data/"

static void check_good(const char* name, int32_t nv, int32_t nt, double volume) {
    hy_mesh* m = NULL;
    CHECK_OK(hy_mesh_load_obj(name, &m));
    if (!m) return;
    hy_mesh_view v = hy_mesh_get_view(m);
    fprintf(stderr, "%s: %d vertices, %d triangles\n", name, v.vertex_count, v.triangle_count);
    CHECK(v.vertex_count == nv);
    CHECK(v.triangle_count == nt);
    CHECK(hy_mesh_view_validate(v, name) == HY_OK);
    if (volume > 0) {
        /* closed files: orientation kept through fanning; exact small
         * coordinates, so rounding only */
        hy_mass_properties mp;
        CHECK_OK(hy_mesh_mass_properties(v, 1.0, &mp));
        CHECK_NEAR(mp.volume, volume, 1e-14);
    }
    hy_mesh_destroy(m);
}

/* A malformed file: status, NULL mesh, and "FILE:LINE:" plus a word of the
 * problem in the message. */
static void check_bad(const char* file, hy_status want, long line, const char* words) {
    char path[512], where[600];
    snprintf(path, sizeof path, DATA "%s", file);
    hy_mesh* m = (hy_mesh*)1;
    hy_status s = hy_mesh_load_obj(path, &m);
    const char* msg = hy_last_error();
    fprintf(stderr, "%-26s -> %s: %s\n", file, hy_status_name(s), msg);
    CHECK(s == want);
    CHECK(m == NULL);
    snprintf(where, sizeof where, "%s:%ld: ", path, line);
    CHECK(strstr(msg, where) != NULL);
    CHECK(strstr(msg, words) != NULL);
    if (s == HY_OK) hy_mesh_destroy(m);
}

static void write_file(const char* path, const void* data, size_t n) {
    FILE* f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    fwrite(data, 1, n, f);
    fclose(f);
}

static char* read_file(const char* path, size_t* n) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    char* buf = malloc(1 << 16);
    *n = fread(buf, 1, (1 << 16) - 1, f);
    fclose(f);
    return buf;
}

/* xorshift64*: fixed seed, same bytes every run. */
static uint64_t rng = 0x9E3779B97F4A7C15ull;
static uint64_t next_rand(void) {
    rng ^= rng >> 12;
    rng ^= rng << 25;
    rng ^= rng >> 27;
    return rng * 0x2545F4914F6CDD1Dull;
}

/* Random bytes and random mutations of the good files: the loader must give
 * HY_OK with a valid mesh or HY_ERR_PARSE with a located message. Under
 * ASan/UBSan this also checks memory safety. */
static void fuzz_smoke(const char* tmp) {
    static const char* seeds[] = {DATA "cube_quads.obj", DATA "negative_indices.obj", DATA "slashes.obj"};
    static const char alphabet[] = "vf /-+.0123456789eEnaitNAIF#\n\r\t";
    int ok = 0, parse = 0, other = 0, bad_msg = 0;
    for (int iter = 0; iter < 3000; iter++) {
        size_t n = 0;
        char* buf;
        if (iter % 3 == 0) {
            n = next_rand() % 400;
            buf = malloc(n + 1);
            for (size_t i = 0; i < n; i++)
                buf[i] = (iter % 2) ? (char)(next_rand() & 0xff) : alphabet[next_rand() % (sizeof alphabet - 1)];
        } else {
            buf = read_file(seeds[iter % 3], &n);
            if (!buf) {
                other++;
                continue;
            }
            int edits = 1 + (int)(next_rand() % 6);
            for (int e = 0; e < edits && n > 0; e++) {
                size_t at = next_rand() % n;
                switch (next_rand() % 4) {
                case 0: buf[at] = alphabet[next_rand() % (sizeof alphabet - 1)]; break;
                case 1: buf[at] = (char)(next_rand() & 0xff); break;
                case 2: n = at; break; /* truncate */
                default: memmove(buf + at, buf + at + 1, n - at - 1); n--; break;
                }
            }
        }
        write_file(tmp, buf, n);
        free(buf);
        hy_mesh* m = NULL;
        hy_status s = hy_mesh_load_obj(tmp, &m);
        if (s == HY_OK) {
            ok++;
            if (hy_mesh_view_validate(hy_mesh_get_view(m), "fuzz") != HY_OK) other++;
            hy_mesh_destroy(m);
        } else if (s == HY_ERR_PARSE) {
            parse++;
            if (strncmp(hy_last_error(), tmp, strlen(tmp)) != 0 || hy_last_error()[strlen(tmp)] != ':') bad_msg++;
        } else {
            other++;
        }
    }
    fprintf(stderr, "fuzz smoke: %d ok, %d parse errors, %d other, %d badly located messages\n", ok, parse, other,
            bad_msg);
    CHECK(other == 0);
    CHECK(bad_msg == 0);
    CHECK(ok > 0 && parse > 0);
}

int main(void) {
    check_good(DATA "cube_quads.obj", 8, 12, 1.0);
    check_good(DATA "negative_indices.obj", 4, 4, 1.0 / 6.0);
    check_good(DATA "slashes.obj", 5, 5, 0.0);

    check_bad("bad_number.obj", HY_ERR_PARSE, 3, "malformed number '1.0.0'");
    check_bad("bad_index_range.obj", HY_ERR_PARSE, 7, "index 9 out of range");
    check_bad("bad_index_zero.obj", HY_ERR_PARSE, 4, "index 0");
    check_bad("bad_negative_range.obj", HY_ERR_PARSE, 4, "index -4 out of range");
    check_bad("bad_forward_ref.obj", HY_ERR_PARSE, 3, "index 3 out of range");
    check_bad("bad_few_vertices.obj", HY_ERR_PARSE, 5, "at least 3 vertices, got 2");
    check_bad("bad_nan.obj", HY_ERR_PARSE, 2, "non-finite");
    check_bad("bad_inf.obj", HY_ERR_PARSE, 3, "non-finite");
    check_bad("bad_huge.obj", HY_ERR_PARSE, 3, "non-finite");
    check_bad("bad_truncated.obj", HY_ERR_PARSE, 5, "truncated");
    check_bad("bad_truncated_face.obj", HY_ERR_PARSE, 5, "truncated");
    check_bad("bad_no_faces.obj", HY_ERR_PARSE, 4, "no faces");
    check_bad("empty.obj", HY_ERR_PARSE, 1, "empty");
    check_bad("bad_corner.obj", HY_ERR_PARSE, 4, "malformed face corner '1/x/1'");
    check_bad("bad_repeat.obj", HY_ERR_PARSE, 4, "repeats vertex 1");
    check_bad("bad_unknown_record.obj", HY_ERR_PARSE, 4, "unknown record 'foo'");
    check_bad("bad_vertex_short.obj", HY_ERR_PARSE, 2, "3 coordinates, got 2");

    /* Missing file: I/O error naming the file. */
    hy_mesh* m = (hy_mesh*)1;
    CHECK(hy_mesh_load_obj(DATA "does_not_exist.obj", &m) == HY_ERR_IO);
    CHECK(m == NULL);
    CHECK(strstr(hy_last_error(), "does_not_exist.obj") != NULL);
    fprintf(stderr, "missing file -> %s\n", hy_last_error());
    /* A directory opens but cannot be read: I/O error, not a parse error. */
    CHECK(hy_mesh_load_obj(HY_SOURCE_DIR "/tests/data", &m) == HY_ERR_IO);
    CHECK(strstr(hy_last_error(), "tests/data") != NULL);
    CHECK(hy_mesh_load_obj(NULL, &m) == HY_ERR_INVALID_ARG);
    CHECK(hy_mesh_load_obj(DATA "cube_quads.obj", NULL) == HY_ERR_INVALID_ARG);

    /* Generated cases, written to a private temp file. */
    char tmp[] = "/tmp/hy_test_obj_XXXXXX";
    int fd = mkstemp(tmp);
    CHECK(fd >= 0);
    if (fd >= 0) {
        close(fd);
        /* A NUL byte in the middle of a record. */
        static const char nul[] = "v 0 0 0\nv 1 0 0\nv 0 1\0 0\nf 1 2 3\n";
        write_file(tmp, nul, sizeof nul - 1);
        CHECK(hy_mesh_load_obj(tmp, &m) == HY_ERR_PARSE);
        CHECK(strstr(hy_last_error(), ":3: ") && strstr(hy_last_error(), "NUL"));

        /* A 1 MB comment line and a vertex line padded to 200 kB: no line
         * length limit. */
        size_t big = 1 << 20;
        char* text = malloc(big + 400000);
        size_t n = 0;
        text[n++] = '#';
        memset(text + n, 'x', big);
        n += big;
        n += (size_t)sprintf(text + n, "\nv 0 0 0\nv 1 0 0\nv");
        memset(text + n, ' ', 200000);
        n += 200000;
        n += (size_t)sprintf(text + n, "0 1 0\nf 1 2 3\n");
        write_file(tmp, text, n);
        free(text);
        m = NULL;
        CHECK_OK(hy_mesh_load_obj(tmp, &m));
        CHECK(m && m->triangle_count == 1 && m->vertex_count == 3);
        hy_mesh_destroy(m);

        /* An index too large for any integer type. */
        static const char huge_index[] = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 99999999999999999999999\n";
        write_file(tmp, huge_index, sizeof huge_index - 1);
        CHECK(hy_mesh_load_obj(tmp, &m) == HY_ERR_PARSE);
        CHECK(strstr(hy_last_error(), ":4: ") != NULL);

        fuzz_smoke(tmp);
        unlink(tmp);
    }
    TEST_END();
}
