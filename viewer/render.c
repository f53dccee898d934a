/* Scene drawing: all objects share one vertex buffer (positions, normals,
 * colours) and one index buffer, so a frame is a single draw call however
 * many bodies the scene has. */
#include "viewer/render.h"

#include <epoxy/gl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct hy_viewer_render {
    int32_t vertex_count, triangle_count;
    const uint32_t* triangles; /* borrowed from the topology */
    float* normals;            /* 3 * vertex_count, scratch for the normal pass */
    GLuint mesh_prog, line_prog, back_prog;
    GLint mesh_mvp, mesh_view, mesh_flat;
    GLint line_mvp;
    GLuint mesh_vao, pos_vbo, nrm_vbo, col_vbo, ebo;
    GLuint grid_vao, grid_vbo;
    GLsizei grid_vertices;
    GLuint contact_vao, contact_vbo;
    GLsizei contact_count;
    GLuint back_vao;
};

/* sRGB palette, hues spread around the wheel (about 10, 212, 120, 40, 275,
 * 180, 330, 80 degrees) so neighbours differ and none is grey. */
static const unsigned char PALETTE[8][3] = {
    {230, 85, 60}, {60, 140, 230}, {90, 190, 90}, {235, 180, 50},
    {170, 100, 220}, {50, 190, 190}, {230, 110, 170}, {150, 190, 60},
};

void hy_viewer_object_color(int i, unsigned char rgb[3]) {
    const unsigned char* c = PALETTE[(unsigned)i % 8u];
    rgb[0] = c[0], rgb[1] = c[1], rgb[2] = c[2];
}

/* ------------------------------------------------------------ shaders */

static const char* MESH_VS =
    "#version 330 core\n"
    "layout(location = 0) in vec3 a_pos;\n"
    "layout(location = 1) in vec3 a_nrm;\n"
    "layout(location = 2) in vec4 a_col;\n"
    "uniform mat4 u_mvp;\n"
    "uniform mat4 u_view;\n"
    "out vec3 v_pos;\n"
    "out vec3 v_nrm;\n"
    "out vec4 v_col;\n"
    "void main() {\n"
    "  v_pos = (u_view * vec4(a_pos, 1.0)).xyz;\n"
    "  v_nrm = mat3(u_view) * a_nrm;\n" /* the view is rigid: no inverse-transpose needed */
    "  v_col = a_col;\n"
    "  gl_Position = u_mvp * vec4(a_pos, 1.0);\n"
    "}\n";

/* Two-sided lighting: a face seen from behind (cloth, open bowls) turns its
 * normal towards the eye, so both sides of a sheet are lit alike. Lights are
 * fixed to the camera (a key light up-left, a weaker fill from the right),
 * so whatever the orbit, the visible side is lit. u_flat draws wire edges. */
static const char* MESH_FS =
    "#version 330 core\n"
    "in vec3 v_pos;\n"
    "in vec3 v_nrm;\n"
    "in vec4 v_col;\n"
    "uniform int u_flat;\n"
    "out vec4 o_col;\n"
    "void main() {\n"
    "  if (u_flat != 0) { o_col = vec4(v_col.rgb * 0.35, 1.0); return; }\n"
    "  vec3 n = normalize(v_nrm);\n"
    "  if (!gl_FrontFacing) n = -n;\n"
    "  vec3 v = normalize(-v_pos);\n"
    "  vec3 key = normalize(vec3(-0.35, 0.75, 0.55));\n"
    "  vec3 fill = normalize(vec3(0.6, 0.1, 0.4));\n"
    "  float d = max(dot(n, key), 0.0) * 0.70 + max(dot(n, fill), 0.0) * 0.25;\n"
    "  float s = pow(max(dot(n, normalize(key + v)), 0.0), 40.0) * 0.22;\n"
    "  vec3 c = v_col.rgb * (0.25 + d) + vec3(s);\n"
    "  o_col = vec4(pow(min(c, vec3(1.0)), vec3(1.0 / 1.1)), 1.0);\n"
    "}\n";

static const char* LINE_VS =
    "#version 330 core\n"
    "layout(location = 0) in vec3 a_pos;\n"
    "layout(location = 1) in vec4 a_col;\n"
    "uniform mat4 u_mvp;\n"
    "out vec4 v_col;\n"
    "void main() { v_col = a_col; gl_Position = u_mvp * vec4(a_pos, 1.0); }\n";

static const char* LINE_FS =
    "#version 330 core\n"
    "in vec4 v_col;\n"
    "out vec4 o_col;\n"
    "void main() { o_col = v_col; }\n";

/* Background: one triangle covering the screen, a dark vertical gradient. */
static const char* BACK_VS =
    "#version 330 core\n"
    "out float v_y;\n"
    "void main() {\n"
    "  vec2 p = vec2(float((gl_VertexID << 1) & 2), float(gl_VertexID & 2)) * 2.0 - 1.0;\n"
    "  v_y = p.y * 0.5 + 0.5;\n"
    "  gl_Position = vec4(p, 1.0, 1.0);\n"
    "}\n";

static const char* BACK_FS =
    "#version 330 core\n"
    "in float v_y;\n"
    "out vec4 o_col;\n"
    "void main() { o_col = vec4(mix(vec3(0.07, 0.075, 0.085), vec3(0.20, 0.21, 0.235), v_y), 1.0); }\n";

static GLuint compile(GLenum type, const char* src, char* err, size_t err_size) {
    GLuint s = glCreateShader(type);
    glShaderSource(s, 1, &src, NULL);
    glCompileShader(s);
    GLint ok = 0;
    glGetShaderiv(s, GL_COMPILE_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetShaderInfoLog(s, sizeof log, NULL, log);
        snprintf(err, err_size, "shader compile failed: %s", log);
        glDeleteShader(s);
        return 0;
    }
    return s;
}

unsigned hy_viewer_program(const char* vs, const char* fs, char* err, size_t err_size) {
    GLuint v = compile(GL_VERTEX_SHADER, vs, err, err_size);
    if (!v) return 0;
    GLuint f = compile(GL_FRAGMENT_SHADER, fs, err, err_size);
    if (!f) {
        glDeleteShader(v);
        return 0;
    }
    GLuint p = glCreateProgram();
    glAttachShader(p, v);
    glAttachShader(p, f);
    glLinkProgram(p);
    glDeleteShader(v);
    glDeleteShader(f);
    GLint ok = 0;
    glGetProgramiv(p, GL_LINK_STATUS, &ok);
    if (!ok) {
        char log[1024] = "";
        glGetProgramInfoLog(p, sizeof log, NULL, log);
        snprintf(err, err_size, "shader link failed: %s", log);
        glDeleteProgram(p);
        return 0;
    }
    return p;
}

/* ------------------------------------------------------------ lifetime */

hy_viewer_render* hy_viewer_render_create(const hy_viewer_topology* t, char* err, size_t err_size) {
    hy_viewer_render* r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    r->vertex_count = t->vertex_count;
    r->triangle_count = t->triangle_count;
    r->triangles = t->triangles;
    r->normals = calloc(3 * (size_t)(t->vertex_count > 0 ? t->vertex_count : 1), sizeof(float));
    unsigned char* colors = malloc(4 * (size_t)(t->vertex_count > 0 ? t->vertex_count : 1));
    if (!r->normals || !colors) {
        free(colors);
        hy_viewer_render_destroy(r);
        snprintf(err, err_size, "out of memory");
        return NULL;
    }
    r->mesh_prog = hy_viewer_program(MESH_VS, MESH_FS, err, err_size);
    if (r->mesh_prog) r->line_prog = hy_viewer_program(LINE_VS, LINE_FS, err, err_size);
    if (r->line_prog) r->back_prog = hy_viewer_program(BACK_VS, BACK_FS, err, err_size);
    if (!r->back_prog) {
        free(colors);
        hy_viewer_render_destroy(r);
        return NULL;
    }
    r->mesh_mvp = glGetUniformLocation(r->mesh_prog, "u_mvp");
    r->mesh_view = glGetUniformLocation(r->mesh_prog, "u_view");
    r->mesh_flat = glGetUniformLocation(r->mesh_prog, "u_flat");
    r->line_mvp = glGetUniformLocation(r->line_prog, "u_mvp");

    /* per-vertex colour: the colour of the object the vertex belongs to */
    for (int32_t i = 0; i < t->object_count; i++) {
        unsigned char c[3];
        hy_viewer_object_color(i, c);
        const hy_viewer_object* o = &t->objects[i];
        for (int32_t v = 0; v < o->vertex_count; v++) {
            unsigned char* d = colors + 4 * (size_t)(o->first_vertex + v);
            d[0] = c[0], d[1] = c[1], d[2] = c[2], d[3] = 255;
        }
    }
    size_t vbytes = sizeof(float) * 3 * (size_t)t->vertex_count;
    glGenVertexArrays(1, &r->mesh_vao);
    glBindVertexArray(r->mesh_vao);
    glGenBuffers(1, &r->pos_vbo);
    glBindBuffer(GL_ARRAY_BUFFER, r->pos_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)vbytes, NULL, GL_STREAM_DRAW);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, 0, (void*)0);
    glEnableVertexAttribArray(0);
    glGenBuffers(1, &r->nrm_vbo);
    glBindBuffer(GL_ARRAY_BUFFER, r->nrm_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)vbytes, NULL, GL_STREAM_DRAW);
    glVertexAttribPointer(1, 3, GL_FLOAT, GL_FALSE, 0, (void*)0);
    glEnableVertexAttribArray(1);
    glGenBuffers(1, &r->col_vbo);
    glBindBuffer(GL_ARRAY_BUFFER, r->col_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(4 * (size_t)t->vertex_count), colors, GL_STATIC_DRAW);
    glVertexAttribPointer(2, 4, GL_UNSIGNED_BYTE, GL_TRUE, 0, (void*)0);
    glEnableVertexAttribArray(2);
    glGenBuffers(1, &r->ebo);
    glBindBuffer(GL_ELEMENT_ARRAY_BUFFER, r->ebo);
    glBufferData(GL_ELEMENT_ARRAY_BUFFER, (GLsizeiptr)(sizeof(uint32_t) * 3 * (size_t)t->triangle_count),
                 t->triangles, GL_STATIC_DRAW);
    glBindVertexArray(0);
    free(colors);

    glGenVertexArrays(1, &r->grid_vao);
    glGenBuffers(1, &r->grid_vbo);
    glGenVertexArrays(1, &r->contact_vao);
    glGenBuffers(1, &r->contact_vbo);
    glGenVertexArrays(1, &r->back_vao);
    GLenum e = glGetError();
    if (e != GL_NO_ERROR) {
        snprintf(err, err_size, "OpenGL error 0x%x creating the scene buffers (%d vertices)", (unsigned)e,
                 (int)t->vertex_count);
        hy_viewer_render_destroy(r);
        return NULL;
    }
    return r;
}

void hy_viewer_render_destroy(hy_viewer_render* r) {
    if (!r) return;
    GLuint bufs[] = {r->pos_vbo, r->nrm_vbo, r->col_vbo, r->ebo, r->grid_vbo, r->contact_vbo};
    glDeleteBuffers(5, bufs);
    GLuint vaos[] = {r->mesh_vao, r->grid_vao, r->back_vao, r->contact_vao};
    glDeleteVertexArrays(3, vaos);
    if (r->mesh_prog) glDeleteProgram(r->mesh_prog);
    if (r->line_prog) glDeleteProgram(r->line_prog);
    if (r->back_prog) glDeleteProgram(r->back_prog);
    free(r->normals);
    free(r);
}

/* ------------------------------------------------------------ per frame */

void hy_viewer_render_update(hy_viewer_render* r, const float* p) {
    /* area-weighted vertex normals: the sum of the (unnormalised) cross
     * products of the triangles around each vertex */
    float* n = r->normals;
    memset(n, 0, sizeof(float) * 3 * (size_t)r->vertex_count);
    for (int32_t t = 0; t < r->triangle_count; t++) {
        const uint32_t* i = r->triangles + 3 * (size_t)t;
        const float* a = p + 3 * (size_t)i[0];
        const float* b = p + 3 * (size_t)i[1];
        const float* c = p + 3 * (size_t)i[2];
        float e1[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        float e2[3] = {c[0] - a[0], c[1] - a[1], c[2] - a[2]};
        float f[3] = {e1[1] * e2[2] - e1[2] * e2[1], e1[2] * e2[0] - e1[0] * e2[2], e1[0] * e2[1] - e1[1] * e2[0]};
        for (int k = 0; k < 3; k++) {
            float* d = n + 3 * (size_t)i[k];
            d[0] += f[0], d[1] += f[1], d[2] += f[2];
        }
    }
    for (int32_t v = 0; v < r->vertex_count; v++) {
        float* d = n + 3 * (size_t)v;
        float l = sqrtf(d[0] * d[0] + d[1] * d[1] + d[2] * d[2]);
        if (l > 0.0f) d[0] /= l, d[1] /= l, d[2] /= l;
        else d[1] = 1.0f; /* an isolated vertex: any unit normal will do */
    }
    size_t bytes = sizeof(float) * 3 * (size_t)r->vertex_count;
    /* orphan, then fill: the driver need not wait for the previous frame */
    glBindBuffer(GL_ARRAY_BUFFER, r->pos_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)bytes, NULL, GL_STREAM_DRAW);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)bytes, p);
    glBindBuffer(GL_ARRAY_BUFFER, r->nrm_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)bytes, NULL, GL_STREAM_DRAW);
    glBufferSubData(GL_ARRAY_BUFFER, 0, (GLsizeiptr)bytes, n);
    glBindBuffer(GL_ARRAY_BUFFER, 0);
}

typedef struct line_vertex {
    float p[3];
    unsigned char c[4];
} line_vertex;

void hy_viewer_render_set_ground(hy_viewer_render* r, float cx, float cz, float height, float extent) {
    if (!(extent > 0.0f)) extent = 1.0f;
    /* spacing: a power of ten giving 10 to 100 cells across, every 5th line darker-bright */
    float step = powf(10.0f, floorf(log10f(extent / 10.0f)));
    int half = (int)ceilf(0.5f * extent / step);
    if (half < 5) half = 5;
    if (half > 200) half = 200;
    cx = step * floorf(cx / step + 0.5f);
    cz = step * floorf(cz / step + 0.5f);
    int lines = 2 * half + 1;
    line_vertex* v = malloc(sizeof *v * (size_t)(4 * lines));
    if (!v) return;
    int n = 0;
    float L = (float)half * step;
    for (int i = -half; i <= half; i++) {
        float o = (float)i * step;
        unsigned char g = (i % 5 == 0) ? 110 : 70;
        unsigned char a = 255;
        line_vertex l[4] = {{{cx + o, height, cz - L}, {g, g, g, a}}, {{cx + o, height, cz + L}, {g, g, g, a}},
                            {{cx - L, height, cz + o}, {g, g, g, a}}, {{cx + L, height, cz + o}, {g, g, g, a}}};
        memcpy(v + n, l, sizeof l);
        n += 4;
    }
    glBindVertexArray(r->grid_vao);
    glBindBuffer(GL_ARRAY_BUFFER, r->grid_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(sizeof *v * (size_t)n), v, GL_STATIC_DRAW);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, sizeof *v, (void*)0);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof *v, (void*)offsetof(line_vertex, c));
    glEnableVertexAttribArray(1);
    glBindVertexArray(0);
    r->grid_vertices = n;
    free(v);
}

void hy_viewer_render_set_contacts(hy_viewer_render* r, const float* points, int32_t count) {
    if (count < 0 || !points) count = 0;
    line_vertex* v = malloc(sizeof *v * (size_t)(count > 0 ? count : 1));
    if (!v) return;
    for (int32_t i = 0; i < count; i++) {
        line_vertex p = {{points[3 * i], points[3 * i + 1], points[3 * i + 2]}, {255, 240, 40, 255}};
        v[i] = p;
    }
    glBindVertexArray(r->contact_vao);
    glBindBuffer(GL_ARRAY_BUFFER, r->contact_vbo);
    glBufferData(GL_ARRAY_BUFFER, (GLsizeiptr)(sizeof *v * (size_t)count), v, GL_STREAM_DRAW);
    glVertexAttribPointer(0, 3, GL_FLOAT, GL_FALSE, sizeof *v, (void*)0);
    glEnableVertexAttribArray(0);
    glVertexAttribPointer(1, 4, GL_UNSIGNED_BYTE, GL_TRUE, sizeof *v, (void*)offsetof(line_vertex, c));
    glEnableVertexAttribArray(1);
    glBindVertexArray(0);
    r->contact_count = count;
    free(v);
}

void hy_viewer_render_draw(hy_viewer_render* r, const hy_viewer_camera* cam, int w, int h, int wireframe,
                           int contacts) {
    float view[16], proj[16], mvp[16];
    float aspect = h > 0 ? (float)w / (float)h : 1.0f;
    hy_viewer_camera_matrices(cam, aspect, view, proj, NULL);
    hy_viewer_mat4_mul(proj, view, mvp);

    glViewport(0, 0, w, h);
    glClearColor(0.1f, 0.1f, 0.11f, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT | GL_DEPTH_BUFFER_BIT);

    /* background first, without depth */
    glDisable(GL_DEPTH_TEST);
    glDisable(GL_BLEND);
    glUseProgram(r->back_prog);
    glBindVertexArray(r->back_vao);
    glDrawArrays(GL_TRIANGLES, 0, 3);

    glEnable(GL_DEPTH_TEST);
    glDepthFunc(GL_LESS);
    glDisable(GL_CULL_FACE); /* cloth is seen from both sides */

    /* meshes; with wireframe on, the shaded surface is pushed back a little so
     * the edges drawn over it win the depth test */
    glUseProgram(r->mesh_prog);
    glUniformMatrix4fv(r->mesh_mvp, 1, GL_FALSE, mvp);
    glUniformMatrix4fv(r->mesh_view, 1, GL_FALSE, view);
    glUniform1i(r->mesh_flat, 0);
    glBindVertexArray(r->mesh_vao);
    if (wireframe) {
        glEnable(GL_POLYGON_OFFSET_FILL);
        glPolygonOffset(1.0f, 1.0f);
    }
    glDrawElements(GL_TRIANGLES, 3 * r->triangle_count, GL_UNSIGNED_INT, (void*)0);
    if (wireframe) {
        glDisable(GL_POLYGON_OFFSET_FILL);
        glPolygonMode(GL_FRONT_AND_BACK, GL_LINE);
        glUniform1i(r->mesh_flat, 1);
        glDrawElements(GL_TRIANGLES, 3 * r->triangle_count, GL_UNSIGNED_INT, (void*)0);
        glPolygonMode(GL_FRONT_AND_BACK, GL_FILL);
    }

    /* ground grid after the meshes: hidden where an object stands in front */
    if (r->grid_vertices > 0) {
        glUseProgram(r->line_prog);
        glUniformMatrix4fv(r->line_mvp, 1, GL_FALSE, mvp);
        glBindVertexArray(r->grid_vao);
        glDrawArrays(GL_LINES, 0, r->grid_vertices);
    }
    /* contacts on top of everything: most sit between two surfaces */
    if (contacts && r->contact_count > 0) {
        glDisable(GL_DEPTH_TEST);
        glUseProgram(r->line_prog);
        glUniformMatrix4fv(r->line_mvp, 1, GL_FALSE, mvp);
        glPointSize(4.0f);
        glBindVertexArray(r->contact_vao);
        glDrawArrays(GL_POINTS, 0, r->contact_count);
        glEnable(GL_DEPTH_TEST);
    }
    glBindVertexArray(0);
    glUseProgram(0);
}
