/* PLY loader: binary (both byte orders) and ASCII, float/double coordinates, list count/index types, extra properties and elements, polygons fanned; malformed input gives a status naming file and problem; the shared frames load. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "engine/ply.h"
#include "hyphys/hyphys.h"
#include "test.h"

/* A byte buffer that PLY data is written into. */
typedef struct buf {
    uint8_t d[4096];
    size_t n;
} buf;

static void put_text(buf* b, const char* s) {
    size_t n = strlen(s);
    memcpy(b->d + b->n, s, n);
    b->n += n;
}

static void put_bytes(buf* b, const void* p, size_t n, int big) {
    const uint8_t* s = p;
    /* Host is little-endian (x86-64, aarch64 Linux): reverse for big. */
    for (size_t i = 0; i < n; i++) b->d[b->n + i] = big ? s[n - 1 - i] : s[i];
    b->n += n;
}

/* The unit square as two triangles... written as one quad, plus an apex:
 * 5 vertices, faces {0 1 2 3} (2 triangles) and {0 1 4}. */
static const double V[5][3] = {{0, 0, 0}, {1, 0, 0}, {1, 1, 0}, {0, 1, 0}, {0.5, 0.5, 1.25}};

static void make_binary(buf* b, int big, int dbl, const char* count_type, const char* index_type) {
    char h[1024];
    snprintf(h, sizeof h,
             "ply\nformat %s 1.0\ncomment test\nelement vertex 5\nproperty %s x\nproperty %s y\nproperty %s z\n"
             "property uchar red\nelement face 2\nproperty list %s %s vertex_indices\nproperty int flags\n"
             "element extra 1\nproperty list uchar float stuff\nend_header\n",
             big ? "binary_big_endian" : "binary_little_endian", dbl ? "double" : "float", dbl ? "double" : "float",
             dbl ? "double" : "float", count_type, index_type);
    b->n = 0;
    put_text(b, h);
    for (int i = 0; i < 5; i++) {
        for (int k = 0; k < 3; k++) {
            if (dbl) {
                put_bytes(b, &V[i][k], 8, big);
            } else {
                float f = (float)V[i][k];
                put_bytes(b, &f, 4, big);
            }
        }
        uint8_t red = 200;
        put_bytes(b, &red, 1, big);
    }
    int faces[2][5] = {{4, 0, 1, 2, 3}, {3, 0, 1, 4, 0}};
    for (int f = 0; f < 2; f++) {
        int n = faces[f][0];
        if (!strcmp(count_type, "uchar")) {
            uint8_t c = (uint8_t)n;
            put_bytes(b, &c, 1, big);
        } else {
            int32_t c = n;
            put_bytes(b, &c, 4, big);
        }
        for (int k = 0; k < n; k++) {
            int32_t idx = faces[f][1 + k];
            put_bytes(b, &idx, 4, big); /* int and uint share the bytes */
        }
        int32_t flags = 7;
        put_bytes(b, &flags, 4, big);
    }
    uint8_t two = 2;
    float st[2] = {1.5f, 2.5f};
    put_bytes(b, &two, 1, big);
    put_bytes(b, &st[0], 4, big);
    put_bytes(b, &st[1], 4, big);
}

static void check_mesh(const hy_mesh* m, const char* what) {
    CHECK(m != NULL);
    if (!m) return;
    hy_mesh_view v = hy_mesh_get_view(m);
    fprintf(stderr, "%s: %d vertices, %d triangles\n", what, v.vertex_count, v.triangle_count);
    CHECK(v.vertex_count == 5);
    CHECK(v.triangle_count == 3);
    /* Every coordinate is a small dyadic: exact in float and double. */
    for (int i = 0; i < 5; i++)
        for (int k = 0; k < 3; k++) CHECK(v.positions[3 * i + k] == V[i][k]);
    const int32_t want[9] = {0, 1, 2, 0, 2, 3, 0, 1, 4}; /* the quad fanned from its first corner */
    for (int i = 0; i < 9; i++) CHECK(v.triangles[i] == want[i]);
}

static void check_bad(const char* text_header, const void* tail, size_t tail_n, const char* words) {
    buf b = {.n = 0};
    put_text(&b, text_header);
    memcpy(b.d + b.n, tail, tail_n);
    b.n += tail_n;
    hy_mesh* m = (hy_mesh*)1;
    hy_status s = hy_ply_parse("bad.ply", b.d, b.n, &m);
    const char* msg = hy_last_error();
    fprintf(stderr, "bad input -> %s: %s\n", hy_status_name(s), msg);
    CHECK(s == HY_ERR_PARSE);
    CHECK(m == NULL);
    CHECK(strstr(msg, "bad.ply") != NULL);
    CHECK(strstr(msg, words) != NULL);
}

int main(void) {
    /* Binary: both byte orders, float and double, count/index types. */
    const char* counts[2] = {"uchar", "int"};
    const char* indices[2] = {"int", "uint"};
    for (int big = 0; big < 2; big++)
        for (int dbl = 0; dbl < 2; dbl++)
            for (int c = 0; c < 2; c++) {
                buf b;
                make_binary(&b, big, dbl, counts[c], indices[(big + c) & 1]);
                hy_mesh* m = NULL;
                CHECK_OK(hy_ply_parse("mem.ply", b.d, b.n, &m));
                check_mesh(m, big ? "big-endian" : "little-endian");
                hy_mesh_destroy(m);
            }

    /* ASCII with CR-LF line ends and a comment. */
    const char* ascii = "ply\r\nformat ascii 1.0\r\ncomment hi\r\nelement vertex 5\r\nproperty double x\r\n"
                        "property double y\r\nproperty double z\r\nelement face 2\r\n"
                        "property list uchar int vertex_index\r\nend_header\r\n"
                        "0 0 0\r\n1 0 0\r\n1 1 0\r\n0 1 0\r\n0.5 0.5 1.25\r\n4 0 1 2 3\r\n3 0 1 4\r\n";
    hy_mesh* m = NULL;
    CHECK_OK(hy_ply_parse("ascii.ply", ascii, strlen(ascii), &m));
    check_mesh(m, "ascii");
    hy_mesh_destroy(m);

    /* A file on disk round-trips through hy_ply_load. */
    {
        buf b;
        make_binary(&b, 1, 0, "uchar", "int");
        char path[] = "/tmp/hy_test_ply_XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        if (fd >= 0) {
            FILE* f = fdopen(fd, "wb");
            fwrite(b.d, 1, b.n, f);
            fclose(f);
            m = NULL;
            CHECK_OK(hy_ply_load(path, &m));
            check_mesh(m, path);
            hy_mesh_destroy(m);
            remove(path);
        }
        m = (hy_mesh*)1;
        CHECK(hy_ply_load("/nonexistent/x.ply", &m) == HY_ERR_IO);
        CHECK(m == NULL);
        CHECK(strstr(hy_last_error(), "/nonexistent/x.ply") != NULL);
    }

    /* Malformed input: status, no mesh, message naming file and problem. */
    const char* hdr = "ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                      "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n";
    float xyz[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
    uint8_t good[36 + 13];
    memcpy(good, xyz, 36);
    good[36] = 3;
    int32_t idx[3] = {0, 1, 2};
    memcpy(good + 37, idx, 12);
    check_bad(hdr, good, sizeof good - 5, "truncated");
    uint8_t bad_idx[sizeof good];
    memcpy(bad_idx, good, sizeof good);
    int32_t big_idx = 7;
    memcpy(bad_idx + 37 + 8, &big_idx, 4);
    check_bad(hdr, bad_idx, sizeof bad_idx, "out of range");
    uint8_t rep[sizeof good];
    memcpy(rep, good, sizeof good);
    memcpy(rep + 37 + 8, &idx[0], 4);
    check_bad(hdr, rep, sizeof rep, "repeats vertex");
    uint8_t two[sizeof good];
    memcpy(two, good, sizeof good);
    two[36] = 2;
    check_bad(hdr, two, sizeof two - 4, "at least 3");
    uint8_t nan_v[sizeof good];
    memcpy(nan_v, good, sizeof good);
    float nanf_ = NAN;
    memcpy(nan_v + 4, &nanf_, 4);
    check_bad(hdr, nan_v, sizeof nan_v, "non-finite");
    uint8_t extra[sizeof good + 3];
    memcpy(extra, good, sizeof good);
    check_bad(hdr, extra, sizeof extra, "unexpected bytes");
    check_bad("ply\nformat binary_little_endian 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
              "element face 1\nproperty list uchar int vertex_indices\nend_header\n",
              good, sizeof good, "x, y and z");
    check_bad("ply\nformat binary_middle_endian 1.0\nend_header\n", "", 0, "unknown format");
    check_bad("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty quux y\nend_header\n", "", 0,
              "unknown property type");
    check_bad("plyx\n", "", 0, "not a PLY");
    check_bad("ply\nformat ascii 1.0\nelement vertex 3\n", "", 0, "end_header");
    check_bad("ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\nproperty float z\n"
              "element face 1\nproperty list uchar int vertex_indices\nend_header\n",
              "0 0 0\n1 0 0\n0 1 0\n3 0 1 x\n", 26, ":13:");
    /* A header promising far more data than present fails before allocating. */
    check_bad("ply\nformat binary_little_endian 1.0\nelement vertex 60000000\nproperty double x\nproperty double y\n"
              "property double z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n",
              good, sizeof good, "truncated");

    /* Random bytes after a valid header never crash. */
    srand(12345);
    for (int trial = 0; trial < 200; trial++) {
        uint8_t junk[64];
        size_t n = (size_t)(rand() % 64);
        for (size_t i = 0; i < n; i++) junk[i] = (uint8_t)rand();
        buf b = {.n = 0};
        put_text(&b, hdr);
        memcpy(b.d + b.n, junk, n);
        b.n += n;
        hy_mesh* r = NULL;
        if (hy_ply_parse("junk.ply", b.d, b.n, &r) == HY_OK) hy_mesh_destroy(r);
    }

    /* The shared frames: counts from the data set's README. */
    hy_mesh* f0 = NULL;
    hy_status s = hy_ply_load(HY_DATA_DIR "/ccd-frames/cloth-funnel/frame0.ply", &f0);
    if (s == HY_ERR_IO) {
        fprintf(stderr, "shared data not found; skipping the data check\n");
    } else {
        CHECK_OK(s);
        if (f0) {
            CHECK(f0->vertex_count == 9450);
            CHECK(f0->triangle_count == 18484);
            CHECK(hy_mesh_view_validate(hy_mesh_get_view(f0), "cloth-funnel") == HY_OK);
        }
        hy_mesh_destroy(f0);
        hy_mesh* nb = NULL;
        CHECK_OK(hy_ply_load(HY_DATA_DIR "/ccd-frames/n-body/frame1.ply", &nb)); /* big-endian float + colours */
        if (nb) CHECK(nb->vertex_count == 73960 && nb->triangle_count == 146480);
        hy_mesh_destroy(nb);
    }
    TEST_END();
}
