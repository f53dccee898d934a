/* HUD batches: stb_easy_font turns text into quads; we turn quads into
 * triangles (core profile has no GL_QUADS) and draw them with the
 * rectangles in one call. */
#include "viewer/hud.h"

#include <epoxy/gl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "viewer/render.h"

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunused-function"
#pragma GCC diagnostic ignored "-Wsign-compare"
#pragma GCC diagnostic ignored "-Wshadow"
#include <stb_easy_font.h>
#pragma GCC diagnostic pop

typedef struct hud_vertex {
    float x, y;
    unsigned char c[4];
} hud_vertex;

struct hy_viewer_hud {
    GLuint prog, vao, vbo;
    GLint size_loc;
    hud_vertex* v;
    size_t count, capacity;
    int w, h;
    float scale;
    char quads[64 * 1024]; /* stb_easy_font output for one call: ~270 bytes per character */
};

static const char* HUD_VS =
    "#version 330 core\n"
    "layout(location = 0) in vec2 a_pos;\n"
    "layout(location = 1) in vec4 a_col;\n"
    "uniform vec2 u_size;\n"
    "out vec4 v_col;\n"
    "void main() {\n"
    "  v_col = a_col;\n"
    "  gl_Position = vec4(a_pos.x / u_size.x * 2.0 - 1.0, 1.0 - a_pos.y / u_size.y * 2.0, 0.0, 1.0);\n"
    "}\n";

static const char* HUD_FS =
    "#version 330 core\n"
    "in vec4 v_col;\n"
    "out vec4 o_col;\n"
    "void main() { o_col = v_col; }\n";

hy_viewer_hud* hy_viewer_hud_create(char* err, size_t err_size) {
    hy_viewer_hud* h = calloc(1, sizeof *h);
    if (!h) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    h->prog = hy_viewer_program(HUD_VS, HUD_FS, err, err_size);
    if (!h->prog) {
        free(h);
        return NULL;
    }
    h->size_loc = glGetUniformLocation(h->prog, "u_size");
    glGenVertexArrays(1, &h->vao);
    glGenBuffers(1, &h->vbo);
    glBindVertexArray(h->vao);
    glBindBuffer(GL_ARRAY_BUFFER, h->vbo);
    glVertexAttribPointer(0, 2, GL_FLOAT, GL_FALSE, sizeof(hud_vertex), (void*)0);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof(hud_vertex), (void*)offsetof(hud_vertex, c));
    glEnableVertexAttribArray(1);
    glBindVertexArray(0);
    h->scale = 1.0f;
    return h;
}

void hy_viewer_hud_destroy(hy_viewer_hud* h) {
    if (!h) return;
    glDeleteBuffers(1, &h->vbo);
    glDeleteVertexArrays(1, &h->vao);
    glDeleteProgram(h->prog);
    free(h->v);
    free(h);
}

void hy_viewer_hud_begin(hy_viewer_hud* h, int w, int hh, float scale) {
    h->count = 0;
    h->w = w;
    h->h = hh;
    h->scale = scale > 0.0f ? scale : 1.0f;
}

static hud_vertex* reserve(hy_viewer_hud* h, size_t n) {
    if (h->count + n > h->capacity) {
        size_t cap = h->capacity ? h->capacity : 4096;
        while (cap < h->count + n) cap *= 2;
        hud_vertex* nv = realloc(h->v, sizeof *nv * cap);
        if (!nv) return NULL;
        h->v = nv;
        h->capacity = cap;
    }
    hud_vertex* out = h->v + h->count;
    h->count += n;
    return out;
}

static void quad(hy_viewer_hud* h, const float x[4], const float y[4], const unsigned char c[4]) {
    hud_vertex* v = reserve(h, 6);
    if (!v) return;
    static const int order[6] = {0, 1, 2, 0, 2, 3};
    for (int k = 0; k < 6; k++) {
        v[k].x = x[order[k]];
        v[k].y = y[order[k]];
        memcpy(v[k].c, c, 4);
    }
}

void hy_viewer_hud_rect(hy_viewer_hud* h, float x, float y, float w, float hh, const unsigned char rgba[4]) {
    float xs[4] = {x, x + w, x + w, x};
    float ys[4] = {y, y, y + hh, y + hh};
    quad(h, xs, ys, rgba);
}

float hy_viewer_hud_text(hy_viewer_hud* h, float x, float y, const char* text, const unsigned char rgba[4]) {
    /* stb_easy_font wants a mutable string and a colour it copies per vertex;
     * its quads are 4 vertices of {x, y, z, rgba} = 16 bytes */
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    unsigned char col[4] = {rgba[0], rgba[1], rgba[2], rgba[3]};
    int quads = stb_easy_font_print(0.0f, 0.0f, buf, col, h->quads, (int)sizeof h->quads);
    for (int q = 0; q < quads; q++) {
        const char* base = h->quads + (size_t)q * 64;
        float xs[4], ys[4];
        for (int k = 0; k < 4; k++) {
            float p[2];
            memcpy(p, base + 16 * k, sizeof p);
            xs[k] = x + p[0] * h->scale;
            ys[k] = y + p[1] * h->scale;
        }
        quad(h, xs, ys, rgba);
    }
    return hy_viewer_hud_text_width(h, text);
}

float hy_viewer_hud_text_width(hy_viewer_hud* h, const char* text) {
    char buf[1024];
    snprintf(buf, sizeof buf, "%s", text);
    return (float)stb_easy_font_width(buf) * h->scale;
}

float hy_viewer_hud_line_height(const hy_viewer_hud* h) { return 12.0f * h->scale; }

void hy_viewer_hud_end(hy_viewer_hud* h) {
    if (h->count == 0) return;
    glDisable(GL_DEPTH_TEST);
    glEnable(GL_BLEND);
    glBlendFunc(GL_SRC_ALPHA, GL_ONE_MINUS_SRC_ALPHA);
    glUseProgram(h->prog);
    glUniform2f(h->size_loc, (float)h->w, (float)h->h);
    glBindVertexArray(h->vao);
    glBindBuffer(GL_ARRAY_BUFFER, h->vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(sizeof(hud_vertex) * h->count), h->v, GL_STREAM_DRAW);
    glDrawArrays(GL_TRIANGLES, 0, (GLsizei)h->count);
    glBindVertexArray(0);
    glUseProgram(0);
    glDisable(GL_BLEND);
}
