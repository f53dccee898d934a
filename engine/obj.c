/* Wavefront OBJ loader: v and f records into a triangle mesh.
 *
 * Accepted: `v x y z [w | r g b [a]]`, `f` with `v`, `v/vt`, `v//vn`,
 * `v/vt/vn` corners (texture and normal indices are checked for form and
 * ignored), negative indices relative to the vertices read so far, polygons
 * fanned from their first corner, `#` comments anywhere on a line, blank lines,
 * CR-LF line ends, and the records vn vt vp o g s usemtl mtllib l p, which are
 * ignored.
 *
 * Everything else is an error with a message "FILE:LINE: problem": unknown
 * records, malformed or non-finite numbers, index 0 or out of range (a face may
 * only use vertices defined above it, as the OBJ spec says; a forward
 * reference is reported as out of range), faces with fewer than three corners
 * or a repeated vertex, NUL bytes, and a file with no faces. Input of any
 * length or content must give a status, never a crash: lines are read with
 * getline (any length), numbers are parsed only inside their token, and all
 * counts are checked against int32 before they grow. */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/mesh.h"

/* Sizes the loader accepts: as the generators, well inside int32 indexing. */
#define MAX_VERTICES (INT32_C(1) << 26)
#define MAX_TRIANGLES (INT32_C(1) << 26)

typedef struct obj_reader {
    const char* path;
    long line;
    double* pos; /* 3 * nv */
    size_t nv, cap_v;
    int32_t* tri; /* 3 * nt */
    size_t nt, cap_t;
    int32_t* corners; /* one face's resolved corners */
    size_t cap_c;
    int last_line_unterminated; /* the current line had no '\n' (end of file) */
} obj_reader;

static hy_status grow(void** p, size_t* cap, size_t need, size_t elem) {
    if (need <= *cap) return HY_OK;
    size_t n = *cap ? *cap : 256;
    while (n < need) n *= 2;
    void* q = realloc(*p, n * elem);
    if (!q) return hy_fail(HY_ERR_NOMEM, "out of memory reading an OBJ file");
    *p = q;
    *cap = n;
    return HY_OK;
}

/* Error at the current line; a line cut off at end of file gets a hint, since
 * that is what a truncated download or a half-written file looks like. */
static hy_status fail_at(const obj_reader* r, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static hy_status fail_at(const obj_reader* r, const char* fmt, ...) {
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return hy_fail(HY_ERR_PARSE, "%s:%ld: %s%s", r->path, r->line, what,
                   r->last_line_unterminated ? " (last line has no newline: file truncated?)" : "");
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

/* Next whitespace-separated token in [*p, end); NUL-terminates it in place
 * (the line buffer is ours). Returns NULL at the end of the line. */
static char* next_token(char** p, char* end) {
    char* s = *p;
    while (s < end && is_space(*s)) s++;
    if (s >= end) {
        *p = end;
        return NULL;
    }
    char* e = s;
    while (e < end && !is_space(*e)) e++;
    *e = '\0';
    *p = e < end ? e + 1 : end;
    return s;
}

/* Quote at most 40 characters of a bad token in a message. */
static const char* clip(const char* tok, char buf[48]) {
    size_t n = strlen(tok);
    if (n <= 40) return tok;
    memcpy(buf, tok, 37);
    memcpy(buf + 37, "...", 4);
    return buf;
}

static hy_status parse_vertex(obj_reader* r, char* p, char* end) {
    double c[3];
    int count = 0;
    char buf[48];
    for (char* tok; (tok = next_token(&p, end)) != NULL;) {
        errno = 0;
        char* stop;
        double x = strtod(tok, &stop);
        /* ERANGE on underflow still gives a usable (tiny) value; only reject
         * what is not a number at all or not finite. */
        if (stop == tok || *stop != '\0') return fail_at(r, "malformed number '%s' in vertex", clip(tok, buf));
        if (!isfinite(x)) return fail_at(r, "non-finite vertex coordinate '%s'", clip(tok, buf));
        if (count < 3) c[count] = x;
        count++;
    }
    if (count < 3) return fail_at(r, "vertex needs 3 coordinates, got %d", count);
    if (count > 7) return fail_at(r, "vertex has %d values, at most 7 (x y z w or x y z r g b [a])", count);
    if (r->nv >= (size_t)MAX_VERTICES) return fail_at(r, "more than %d vertices", (int)MAX_VERTICES);
    hy_status s = grow((void**)&r->pos, &r->cap_v, 3 * (r->nv + 1), sizeof(double));
    if (s) return s;
    memcpy(r->pos + 3 * r->nv, c, sizeof c);
    r->nv++;
    return HY_OK;
}

/* An OBJ index: non-zero integer, no sign-only or trailing junk. */
static int parse_index(const char* s, const char* e, long* out) {
    if (s == e) return 0;
    char tmp[24];
    size_t n = (size_t)(e - s);
    if (n >= sizeof tmp) return 0; /* longer than any int64 */
    memcpy(tmp, s, n);
    tmp[n] = '\0';
    /* strtol would skip leading blanks and accept '+'; the token has no
     * blanks, and a sign must be followed by a digit. */
    const char* d = tmp + (tmp[0] == '-' || tmp[0] == '+');
    if (*d < '0' || *d > '9') return 0;
    errno = 0;
    char* stop;
    long v = strtol(tmp, &stop, 10);
    if (*stop != '\0' || errno == ERANGE) return 0;
    *out = v;
    return 1;
}

static hy_status parse_face(obj_reader* r, char* p, char* end) {
    size_t n = 0;
    char buf[48];
    for (char* tok; (tok = next_token(&p, end)) != NULL;) {
        /* Split v[/vt[/vn]]; vt may be empty only when vn follows (v//vn). */
        char* s1 = strchr(tok, '/');
        char* vend = s1 ? s1 : tok + strlen(tok);
        long v, dummy;
        if (!parse_index(tok, vend, &v)) return fail_at(r, "malformed face corner '%s'", clip(tok, buf));
        if (s1) {
            char* s2 = strchr(s1 + 1, '/');
            char* vt_end = s2 ? s2 : s1 + 1 + strlen(s1 + 1);
            int vt_ok = (s2 && vt_end == s1 + 1) || parse_index(s1 + 1, vt_end, &dummy);
            int vn_ok = !s2 || parse_index(s2 + 1, s2 + 1 + strlen(s2 + 1), &dummy);
            if (!vt_ok || !vn_ok) return fail_at(r, "malformed face corner '%s'", clip(tok, buf));
        }
        /* Resolve against the vertices read so far. */
        long nv = (long)r->nv;
        long idx = v > 0 ? v - 1 : nv + v;
        if (v == 0) return fail_at(r, "vertex index 0 in face (OBJ indices start at 1)");
        if (idx < 0 || idx >= nv)
            return fail_at(r, "vertex index %ld out of range (%ld vertices defined so far)", v, nv);
        hy_status s = grow((void**)&r->corners, &r->cap_c, n + 1, sizeof(int32_t));
        if (s) return s;
        r->corners[n++] = (int32_t)idx;
    }
    if (n < 3) return fail_at(r, "face needs at least 3 vertices, got %zu", n);
    int64_t rep = hy_corners_repeat(r->corners, n);
    if (rep == -2) return hy_fail(HY_ERR_NOMEM, "out of memory");
    if (rep >= 0) return fail_at(r, "face repeats vertex %ld", (long)rep + 1);
    /* Fan from the first corner: (0, k, k+1). */
    if (r->nt + (n - 2) > (size_t)MAX_TRIANGLES) return fail_at(r, "more than %d triangles", (int)MAX_TRIANGLES);
    hy_status s = grow((void**)&r->tri, &r->cap_t, 3 * (r->nt + n - 2), sizeof(int32_t));
    if (s) return s;
    for (size_t k = 1; k + 1 < n; k++) {
        int32_t* t = r->tri + 3 * r->nt++;
        t[0] = r->corners[0];
        t[1] = r->corners[k];
        t[2] = r->corners[k + 1];
    }
    return HY_OK;
}

static hy_status parse_line(obj_reader* r, char* line, size_t len) {
    if (memchr(line, '\0', len)) return fail_at(r, "NUL byte in line (binary file?)");
    char* hash = memchr(line, '#', len);
    char* end = hash ? hash : line + len;
    char* p = line;
    char* key = next_token(&p, end);
    if (!key) return HY_OK; /* blank or comment */
    if (strcmp(key, "v") == 0) return parse_vertex(r, p, end);
    if (strcmp(key, "f") == 0) return parse_face(r, p, end);
    static const char* const ignored[] = {"vn", "vt", "vp", "o", "g", "s", "usemtl", "mtllib", "l", "p"};
    for (size_t i = 0; i < sizeof ignored / sizeof ignored[0]; i++)
        if (strcmp(key, ignored[i]) == 0) return HY_OK;
    char buf[48];
    return fail_at(r, "unknown record '%s'", clip(key, buf));
}

HY_API hy_status hy_mesh_load_obj(const char* path, hy_mesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_load_obj: out is NULL");
    *out = NULL;
    if (!path) return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_load_obj: path is NULL");
    FILE* f = fopen(path, "rb");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));

    obj_reader r = {0};
    r.path = path;
    char* line = NULL;
    size_t line_cap = 0;
    hy_status s = HY_OK;
    for (;;) {
        errno = 0;
        ssize_t got = getline(&line, &line_cap, f);
        if (got < 0) {
            if (ferror(f)) s = hy_fail(HY_ERR_IO, "%s:%ld: read error: %s", path, r.line + 1, strerror(errno));
            break;
        }
        r.line++;
        size_t len = (size_t)got;
        r.last_line_unterminated = !(len > 0 && line[len - 1] == '\n');
        if (len > 0 && line[len - 1] == '\n') len--;
        s = parse_line(&r, line, len);
        if (s) break;
    }
    free(line);
    fclose(f);
    if (s == HY_OK && r.nt == 0)
        s = hy_fail(HY_ERR_PARSE, "%s:%ld: no faces (f records) in the file%s", path, r.line ? r.line : 1,
                    r.line ? "" : " (the file is empty)");

    hy_mesh* m = NULL;
    if (s == HY_OK) s = hy_mesh_alloc((int32_t)r.nv, (int32_t)r.nt, &m);
    if (s == HY_OK) {
        memcpy(m->positions, r.pos, sizeof(double) * 3 * r.nv);
        memcpy(m->triangles, r.tri, sizeof(int32_t) * 3 * r.nt);
        *out = m;
    }
    free(r.pos);
    free(r.tri);
    free(r.corners);
    return s;
}
