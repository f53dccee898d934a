/* PLY loader: header into a small schema, then one pass over the data with a
 * reader that is either binary (either byte order) or ASCII tokens.
 *
 * The whole file is read into memory first: meshes of interest are a few MB,
 * and bounds checks against one buffer are simpler than against stdio. Every
 * read is checked against the end of the buffer, so a truncated or lying file
 * gives a status, never a read past the end. */
#include "engine/ply.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mesh.h"

/* As the OBJ loader: well inside int32 indexing. */
#define MAX_VERTICES (INT64_C(1) << 26)
#define MAX_TRIANGLES (INT64_C(1) << 26)
#define MAX_ELEMENTS 16
#define MAX_PROPS 64
#define MAX_NAME 64

typedef enum ptype { T_NONE, T_I8, T_U8, T_I16, T_U16, T_I32, T_U32, T_F32, T_F64 } ptype;

typedef struct prop {
    char name[MAX_NAME];
    ptype type;       /* scalar type, or the item type of a list */
    ptype count_type; /* T_NONE for a scalar */
} prop;

typedef struct element {
    char name[MAX_NAME];
    int64_t count;
    prop props[MAX_PROPS];
    int nprops;
} element;

typedef struct reader {
    const char* name;
    const uint8_t* p;
    const uint8_t* end;
    int ascii;
    int big;
    long line; /* ASCII: line of the current token */
} reader;

static const struct {
    const char* name;
    ptype type;
} type_names[] = {{"char", T_I8},     {"int8", T_I8},      {"uchar", T_U8},    {"uint8", T_U8},
                  {"short", T_I16},   {"int16", T_I16},    {"ushort", T_U16},  {"uint16", T_U16},
                  {"int", T_I32},     {"int32", T_I32},    {"uint", T_U32},    {"uint32", T_U32},
                  {"float", T_F32},   {"float32", T_F32},  {"double", T_F64},  {"float64", T_F64}};

static ptype type_parse(const char* s) {
    for (size_t i = 0; i < sizeof type_names / sizeof type_names[0]; i++)
        if (!strcmp(s, type_names[i].name)) return type_names[i].type;
    return T_NONE;
}

static size_t type_size(ptype t) {
    switch (t) {
    case T_I8:
    case T_U8: return 1;
    case T_I16:
    case T_U16: return 2;
    case T_I32:
    case T_U32:
    case T_F32: return 4;
    case T_F64: return 8;
    default: return 0;
    }
}

static int type_is_int(ptype t) { return t != T_F32 && t != T_F64 && t != T_NONE; }

/* ---- header */

/* Split a header line (NUL-terminated copy) into at most 8 words. */
static int split_words(char* s, char** w, int max) {
    int n = 0;
    for (char* tok = strtok(s, " \t\r"); tok; tok = strtok(NULL, " \t\r")) {
        if (n == max) return max + 1;
        w[n++] = tok;
    }
    return n;
}

static hy_status parse_header(const char* name, const uint8_t* data, size_t size, element* el, int* nel, int* ascii,
                              int* big, size_t* data_start) {
    size_t pos = 0;
    long line = 0;
    int have_format = 0;
    *nel = 0;
    char buf[512];
    for (;;) {
        /* One line, without its '\n' (and a '\r' before it). */
        size_t s = pos;
        while (pos < size && data[pos] != '\n') pos++;
        line++;
        if (pos >= size) return hy_fail(HY_ERR_PARSE, "%s: header has no end_header line", name);
        size_t len = pos - s;
        pos++;
        if (len >= sizeof buf) return hy_fail(HY_ERR_PARSE, "%s:%ld: header line too long", name, line);
        memcpy(buf, data + s, len);
        buf[len] = '\0';
        if (memchr(buf, '\0', len)) return hy_fail(HY_ERR_PARSE, "%s:%ld: NUL byte in the header", name, line);
        if (line == 1) {
            if (strcmp(buf, "ply") != 0 && strcmp(buf, "ply\r") != 0)
                return hy_fail(HY_ERR_PARSE, "%s:1: not a PLY file (first line must be 'ply')", name);
            continue;
        }
        char* w[9];
        int n = split_words(buf, w, 8);
        if (n == 0) continue;
        if (!strcmp(w[0], "comment") || !strcmp(w[0], "obj_info")) continue;
        if (!strcmp(w[0], "end_header")) break;
        if (!strcmp(w[0], "format")) {
            if (n != 3 || strcmp(w[2], "1.0") != 0)
                return hy_fail(HY_ERR_PARSE, "%s:%ld: expected 'format KIND 1.0'", name, line);
            if (!strcmp(w[1], "ascii")) {
                *ascii = 1;
                *big = 0;
            } else if (!strcmp(w[1], "binary_little_endian")) {
                *ascii = 0;
                *big = 0;
            } else if (!strcmp(w[1], "binary_big_endian")) {
                *ascii = 0;
                *big = 1;
            } else {
                return hy_fail(HY_ERR_PARSE, "%s:%ld: unknown format '%s'", name, line, w[1]);
            }
            have_format = 1;
        } else if (!strcmp(w[0], "element")) {
            if (n != 3) return hy_fail(HY_ERR_PARSE, "%s:%ld: expected 'element NAME COUNT'", name, line);
            if (*nel == MAX_ELEMENTS)
                return hy_fail(HY_ERR_PARSE, "%s:%ld: more than %d elements", name, line, MAX_ELEMENTS);
            char* end = NULL;
            errno = 0;
            long long c = strtoll(w[2], &end, 10);
            if (errno || *end || c < 0 || c > INT32_MAX)
                return hy_fail(HY_ERR_PARSE, "%s:%ld: element count '%s' is not an integer in [0, %d]", name, line,
                               w[2], INT32_MAX);
            element* e = &el[(*nel)++];
            memset(e, 0, sizeof *e);
            snprintf(e->name, sizeof e->name, "%s", w[1]);
            e->count = c;
        } else if (!strcmp(w[0], "property")) {
            if (*nel == 0) return hy_fail(HY_ERR_PARSE, "%s:%ld: property before any element", name, line);
            element* e = &el[*nel - 1];
            if (e->nprops == MAX_PROPS)
                return hy_fail(HY_ERR_PARSE, "%s:%ld: more than %d properties in element '%s'", name, line,
                               MAX_PROPS, e->name);
            prop* pr = &e->props[e->nprops];
            memset(pr, 0, sizeof *pr);
            if (n == 5 && !strcmp(w[1], "list")) {
                pr->count_type = type_parse(w[2]);
                pr->type = type_parse(w[3]);
                if (!type_is_int(pr->count_type))
                    return hy_fail(HY_ERR_PARSE, "%s:%ld: list count type '%s' must be an integer type", name, line,
                                   w[2]);
                if (pr->type == T_NONE)
                    return hy_fail(HY_ERR_PARSE, "%s:%ld: unknown property type '%s'", name, line, w[3]);
                snprintf(pr->name, sizeof pr->name, "%s", w[4]);
            } else if (n == 3) {
                pr->type = type_parse(w[1]);
                if (pr->type == T_NONE)
                    return hy_fail(HY_ERR_PARSE, "%s:%ld: unknown property type '%s'", name, line, w[1]);
                snprintf(pr->name, sizeof pr->name, "%s", w[2]);
            } else {
                return hy_fail(HY_ERR_PARSE, "%s:%ld: expected 'property TYPE NAME' or 'property list CTYPE TYPE NAME'",
                               name, line);
            }
            e->nprops++;
        } else {
            return hy_fail(HY_ERR_PARSE, "%s:%ld: unknown header keyword '%s'", name, line, w[0]);
        }
    }
    if (!have_format) return hy_fail(HY_ERR_PARSE, "%s: header has no format line", name);
    *data_start = pos;
    return HY_OK;
}

/* ---- data readers */

static uint64_t load_be(const uint8_t* p, size_t n) {
    uint64_t v = 0;
    for (size_t i = 0; i < n; i++) v = (v << 8) | p[i];
    return v;
}

static uint64_t load_le(const uint8_t* p, size_t n) {
    uint64_t v = 0;
    for (size_t i = n; i-- > 0;) v = (v << 8) | p[i];
    return v;
}

/* Next ASCII token; 0 at end of data. Tracks the line for messages. */
static int next_token(reader* r, const char** tok, size_t* len) {
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n')) {
        if (*r->p == '\n') r->line++;
        r->p++;
    }
    if (r->p >= r->end) return 0;
    *tok = (const char*)r->p;
    while (r->p < r->end && !(*r->p == ' ' || *r->p == '\t' || *r->p == '\r' || *r->p == '\n')) r->p++;
    *len = (size_t)((const char*)r->p - *tok);
    return 1;
}

/* Read one value of type t as a double (integers exactly up to 2^53).
 * Returns 0 on end of data or a malformed token; *why says which. */
static int read_value(reader* r, ptype t, double* out, const char** why) {
    if (r->ascii) {
        const char* tok;
        size_t len;
        if (!next_token(r, &tok, &len)) {
            *why = "data ends early";
            return 0;
        }
        char buf[80];
        if (len >= sizeof buf) {
            *why = "number token too long";
            return 0;
        }
        memcpy(buf, tok, len);
        buf[len] = '\0';
        char* end = NULL;
        errno = 0;
        double v = strtod(buf, &end);
        if (end == buf || *end) {
            *why = "malformed number";
            return 0;
        }
        if (type_is_int(t) && (v != floor(v) || errno)) {
            *why = "expected an integer";
            return 0;
        }
        *out = v;
        return 1;
    }
    size_t n = type_size(t);
    if ((size_t)(r->end - r->p) < n) {
        *why = "data ends early (file truncated?)";
        return 0;
    }
    uint64_t bits = r->big ? load_be(r->p, n) : load_le(r->p, n);
    r->p += n;
    switch (t) {
    case T_I8: *out = (double)(int8_t)(uint8_t)bits; break;
    case T_U8: *out = (double)(uint8_t)bits; break;
    case T_I16: *out = (double)(int16_t)(uint16_t)bits; break;
    case T_U16: *out = (double)(uint16_t)bits; break;
    case T_I32: *out = (double)(int32_t)(uint32_t)bits; break;
    case T_U32: *out = (double)(uint32_t)bits; break;
    case T_F32: {
        uint32_t b32 = (uint32_t)bits;
        float f;
        memcpy(&f, &b32, sizeof f);
        *out = (double)f;
        break;
    }
    case T_F64: memcpy(out, &bits, sizeof *out); break;
    default: *why = "bad type"; return 0;
    }
    return 1;
}

/* ---- the loader */

typedef struct tri_buf {
    int32_t* v;
    size_t n, cap; /* triangles */
} tri_buf;

static int tri_push(tri_buf* b, int32_t a, int32_t c, int32_t d) {
    if (b->n == b->cap) {
        size_t cap = b->cap ? 2 * b->cap : 1024;
        int32_t* nv = realloc(b->v, sizeof(int32_t) * 3 * cap);
        if (!nv) return 0;
        b->v = nv;
        b->cap = cap;
    }
    b->v[3 * b->n] = a;
    b->v[3 * b->n + 1] = c;
    b->v[3 * b->n + 2] = d;
    b->n++;
    return 1;
}

static hy_status read_fail(const reader* r, const element* e, int64_t item, const char* prop_name, const char* why) {
    if (r->ascii)
        return hy_fail(HY_ERR_PARSE, "%s:%ld: %s %lld property '%s': %s", r->name, r->line, e->name, (long long)item,
                       prop_name, why);
    return hy_fail(HY_ERR_PARSE, "%s: %s %lld property '%s': %s", r->name, e->name, (long long)item, prop_name, why);
}

hy_status hy_ply_parse(const char* name, const void* data, size_t size, hy_mesh** out) {
    *out = NULL;
    if (!name) name = "<ply>";
    if (!data) return hy_fail(HY_ERR_INVALID_ARG, "%s: no data", name);
    const uint8_t* bytes = data;
    element el[MAX_ELEMENTS];
    int nel = 0, ascii = 0, big = 0;
    size_t start = 0;
    hy_status st = parse_header(name, bytes, size, el, &nel, &ascii, &big, &start);
    if (st != HY_OK) return st;

    /* Locate what we use: the vertex element's x, y, z, the face index list. */
    int ve = -1, fe = -1, px = -1, py = -1, pz = -1, pf = -1;
    for (int i = 0; i < nel; i++) {
        if (!strcmp(el[i].name, "vertex") && ve < 0) ve = i;
        if (!strcmp(el[i].name, "face") && fe < 0) fe = i;
    }
    if (ve < 0) return hy_fail(HY_ERR_PARSE, "%s: header has no 'vertex' element", name);
    if (fe < 0) return hy_fail(HY_ERR_PARSE, "%s: header has no 'face' element", name);
    for (int k = 0; k < el[ve].nprops; k++) {
        const prop* pr = &el[ve].props[k];
        if (pr->count_type != T_NONE) continue;
        if (!strcmp(pr->name, "x")) px = k;
        if (!strcmp(pr->name, "y")) py = k;
        if (!strcmp(pr->name, "z")) pz = k;
    }
    if (px < 0 || py < 0 || pz < 0)
        return hy_fail(HY_ERR_PARSE, "%s: vertex element needs scalar properties x, y and z", name);
    for (int k = 0; k < el[fe].nprops; k++) {
        const prop* pr = &el[fe].props[k];
        if (pr->count_type == T_NONE) continue;
        if (!strcmp(pr->name, "vertex_indices") || !strcmp(pr->name, "vertex_index")) {
            pf = k;
            break;
        }
        if (pf < 0) pf = k;
    }
    if (pf < 0) return hy_fail(HY_ERR_PARSE, "%s: face element has no list property of vertex indices", name);
    if (!type_is_int(el[fe].props[pf].type))
        return hy_fail(HY_ERR_PARSE, "%s: face property '%s' must list integers", name, el[fe].props[pf].name);
    if (el[ve].count < 3 || el[ve].count > MAX_VERTICES)
        return hy_fail(HY_ERR_PARSE, "%s: vertex count %lld outside [3, %lld]", name, (long long)el[ve].count,
                       (long long)MAX_VERTICES);
    if (el[fe].count < 1) return hy_fail(HY_ERR_PARSE, "%s: the file has no faces", name);

    /* A binary file must at least hold every fixed-size part of every item:
     * checked before allocating so a lying header cannot ask for gigabytes. */
    if (!ascii) {
        double need = 0;
        for (int i = 0; i < nel; i++) {
            size_t item = 0;
            for (int k = 0; k < el[i].nprops; k++)
                item += el[i].props[k].count_type != T_NONE ? type_size(el[i].props[k].count_type)
                                                            : type_size(el[i].props[k].type);
            need += (double)item * (double)el[i].count;
        }
        if (need > (double)(size - start))
            return hy_fail(HY_ERR_PARSE, "%s: data ends early (file truncated?): header promises >= %.0f bytes, %zu present",
                           name, need, size - start);
    }

    int32_t nv = (int32_t)el[ve].count;
    double* pos = malloc(sizeof(double) * 3 * (size_t)nv);
    tri_buf tris = {0};
    int32_t* corners = NULL;
    size_t cap_corners = 0;
    if (!pos) return hy_fail(HY_ERR_NOMEM, "%s: out of memory for %d vertices", name, nv);

    reader r = {name, bytes + start, bytes + size, ascii, big, 1};
    /* ASCII line numbers continue from the header. */
    for (size_t i = 0; i < start; i++)
        if (bytes[i] == '\n') r.line++;
    const char* why = NULL;
    for (int i = 0; i < nel && st == HY_OK; i++) {
        const element* e = &el[i];
        for (int64_t it = 0; it < e->count && st == HY_OK; it++) {
            for (int k = 0; k < e->nprops && st == HY_OK; k++) {
                const prop* pr = &e->props[k];
                double v;
                if (pr->count_type == T_NONE) {
                    if (!read_value(&r, pr->type, &v, &why)) {
                        st = read_fail(&r, e, it, pr->name, why);
                        break;
                    }
                    if (i == ve && (k == px || k == py || k == pz)) {
                        if (!isfinite(v)) {
                            st = read_fail(&r, e, it, pr->name, "non-finite coordinate");
                            break;
                        }
                        pos[3 * it + (k == px ? 0 : k == py ? 1 : 2)] = v;
                    }
                    continue;
                }
                double cnt;
                if (!read_value(&r, pr->count_type, &cnt, &why)) {
                    st = read_fail(&r, e, it, pr->name, why);
                    break;
                }
                if (cnt < 0 || cnt > 1e6) {
                    st = read_fail(&r, e, it, pr->name, "list length negative or over 1e6");
                    break;
                }
                size_t n = (size_t)cnt;
                int is_faces = i == fe && k == pf;
                if (is_faces && n < 3) {
                    st = read_fail(&r, e, it, pr->name, "a face needs at least 3 corners");
                    break;
                }
                if (is_faces && n > cap_corners) {
                    int32_t* nc = realloc(corners, sizeof *nc * n);
                    if (!nc) {
                        st = hy_fail(HY_ERR_NOMEM, "%s: out of memory", name);
                        break;
                    }
                    corners = nc;
                    cap_corners = n;
                }
                for (size_t c = 0; c < n; c++) {
                    if (!read_value(&r, pr->type, &v, &why)) {
                        st = read_fail(&r, e, it, pr->name, why);
                        break;
                    }
                    if (!is_faces) continue;
                    if (!(v >= 0 && v < (double)nv)) {
                        char msg[96];
                        snprintf(msg, sizeof msg, "vertex index %.0f out of range [0, %d)", v, nv);
                        st = read_fail(&r, e, it, pr->name, msg);
                        break;
                    }
                    corners[c] = (int32_t)v;
                }
                if (st != HY_OK || !is_faces) continue;
                int64_t rep = hy_corners_repeat(corners, n);
                if (rep == -2) {
                    st = hy_fail(HY_ERR_NOMEM, "%s: out of memory", name);
                    break;
                }
                if (rep >= 0) {
                    char msg[96];
                    snprintf(msg, sizeof msg, "repeats vertex %lld", (long long)rep);
                    st = read_fail(&r, e, it, pr->name, msg);
                    break;
                }
                if (tris.n + (n - 2) > (size_t)MAX_TRIANGLES) {
                    st = hy_fail(HY_ERR_PARSE, "%s: more than %lld triangles", name, (long long)MAX_TRIANGLES);
                    break;
                }
                /* Fan from the first corner (convex polygons, as OBJ). */
                for (size_t c = 1; c + 1 < n; c++)
                    if (!tri_push(&tris, corners[0], corners[c], corners[c + 1])) {
                        st = hy_fail(HY_ERR_NOMEM, "%s: out of memory for triangles", name);
                        break;
                    }
            }
        }
    }
    if (st == HY_OK) {
        const char* tok;
        size_t len;
        if (ascii ? next_token(&r, &tok, &len) : r.p != r.end)
            st = ascii ? hy_fail(HY_ERR_PARSE, "%s:%ld: unexpected data after the last element", name, r.line)
                       : hy_fail(HY_ERR_PARSE, "%s: %zu unexpected bytes after the last element", name,
                                 (size_t)(r.end - r.p));
    }
    free(corners);
    if (st != HY_OK) {
        free(pos);
        free(tris.v);
        return st;
    }
    hy_mesh* m = calloc(1, sizeof *m);
    if (!m) {
        free(pos);
        free(tris.v);
        return hy_fail(HY_ERR_NOMEM, "%s: out of memory", name);
    }
    m->vertex_count = nv;
    m->triangle_count = (int32_t)tris.n;
    m->positions = pos;
    m->triangles = tris.v;
    *out = m;
    return HY_OK;
}

hy_status hy_ply_load(const char* path, hy_mesh** out) {
    *out = NULL;
    if (!path) return hy_fail(HY_ERR_INVALID_ARG, "hy_ply_load: path is NULL");
    FILE* f = fopen(path, "rb");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    uint8_t* buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            cap = cap ? 2 * cap : (size_t)1 << 20;
            uint8_t* nb = realloc(buf, cap);
            if (!nb) {
                free(buf);
                fclose(f);
                return hy_fail(HY_ERR_NOMEM, "%s: out of memory reading the file", path);
            }
            buf = nb;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return hy_fail(HY_ERR_IO, "%s: read error", path);
    }
    hy_status st = hy_ply_parse(path, buf, n, out);
    free(buf);
    return st;
}
