#include "io/text_lines.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"

/* Files the loaders accept: the whole text is held in memory. */
#define MAX_FILE_BYTES ((size_t)1 << 31)

void hy_text_init(hy_text* t, const char* text, size_t len, const char* name, char comment) {
    memset(t, 0, sizeof *t);
    t->name = name ? name : "(text)";
    t->p = text ? text : "";
    t->end = t->p + (text ? len : 0);
    t->comment = comment;
}

void hy_text_free(hy_text* t) {
    free(t->buf);
    free(t->tok);
    t->buf = NULL;
    t->tok = NULL;
}

hy_status hy_text_fail(const hy_text* t, const char* fmt, ...) {
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    return hy_fail(HY_ERR_PARSE, "%s:%ld: %s", t->name, t->line, what);
}

static int is_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f'; }

int hy_text_next(hy_text* t, hy_status* st) {
    while (t->p < t->end) {
        const char* nl = memchr(t->p, '\n', (size_t)(t->end - t->p));
        const char* stop = nl ? nl : t->end;
        size_t len = (size_t)(stop - t->p);
        t->line++;
        if (memchr(t->p, '\0', len)) {
            *st = hy_text_fail(t, "NUL byte in a text file (binary data?)");
            return -1;
        }
        if (len + 1 > t->cap) {
            size_t cap = t->cap ? t->cap : 256;
            while (cap < len + 1) cap *= 2;
            char* b = realloc(t->buf, cap);
            if (!b) {
                *st = hy_fail(HY_ERR_NOMEM, "%s:%ld: out of memory for a line of %zu bytes", t->name, t->line, len);
                return -1;
            }
            t->buf = b;
            t->cap = cap;
        }
        memcpy(t->buf, t->p, len);
        t->buf[len] = '\0';
        t->p = nl ? nl + 1 : t->end;
        if (t->comment) {
            char* c = strchr(t->buf, t->comment);
            if (c) *c = '\0';
        }
        /* split in place */
        t->ntok = 0;
        char* s = t->buf;
        for (;;) {
            while (*s && is_space(*s)) s++;
            if (!*s) break;
            if (t->ntok == t->cap_tok) {
                int cap = t->cap_tok ? 2 * t->cap_tok : 16;
                char** k = realloc(t->tok, (size_t)cap * sizeof *k);
                if (!k) {
                    *st = hy_fail(HY_ERR_NOMEM, "%s:%ld: out of memory splitting a line", t->name, t->line);
                    return -1;
                }
                t->tok = k;
                t->cap_tok = cap;
            }
            t->tok[t->ntok++] = s;
            while (*s && !is_space(*s)) s++;
            if (*s) *s++ = '\0';
        }
        if (t->ntok > 0) return 1;
    }
    return 0;
}

hy_status hy_text_int(const hy_text* t, int k, const char* what, int64_t lo, int64_t hi, int64_t* out) {
    if (k >= t->ntok) return hy_text_fail(t, "missing %s (field %d)", what, k + 1);
    const char* s = t->tok[k];
    char* endp;
    errno = 0;
    long long v = strtoll(s, &endp, 10);
    if (endp == s || *endp != '\0' || errno == ERANGE)
        return hy_text_fail(t, "%s must be an integer, got '%.40s'", what, s);
    if (v < lo || v > hi)
        return hy_text_fail(t, "%s must be in [%lld, %lld], got %lld", what, (long long)lo, (long long)hi, v);
    *out = v;
    return HY_OK;
}

hy_status hy_text_double(const hy_text* t, int k, const char* what, double* out) {
    if (k >= t->ntok) return hy_text_fail(t, "missing %s (field %d)", what, k + 1);
    const char* s = t->tok[k];
    char* endp;
    double v = strtod(s, &endp);
    if (endp == s || *endp != '\0') return hy_text_fail(t, "%s must be a number, got '%.40s'", what, s);
    if (!isfinite(v)) return hy_text_fail(t, "%s must be finite, got '%.40s'", what, s);
    *out = v;
    return HY_OK;
}

hy_status hy_text_read_file(const char* path, char** data, size_t* len) {
    *data = NULL;
    *len = 0;
    if (!path) return hy_fail(HY_ERR_INVALID_ARG, "NULL path");
    FILE* f = fopen(path, "rb");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = 1 << 16, n = 0;
    char* buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fclose(f);
            return hy_fail(HY_ERR_NOMEM, "%s: out of memory reading it", path);
        }
        n += fread(buf + n, 1, cap - n, f);
        if (n < cap) break;
        if (cap >= MAX_FILE_BYTES) {
            free(buf);
            fclose(f);
            return hy_fail(HY_ERR_IO, "%s: larger than %zu bytes", path, MAX_FILE_BYTES);
        }
        char* b = realloc(buf, cap * 2);
        if (!b) free(buf);
        buf = b;
        cap *= 2;
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return hy_fail(HY_ERR_IO, "%s: read error", path);
    }
    *data = buf;
    *len = n;
    return HY_OK;
}

/* ---- finish */

static double signed_volume6(const double* pos, const int32_t* t, double* longest) {
    const double* a = pos + 3 * t[0];
    double D[3][3];
    for (int i = 1; i < 4; i++)
        for (int k = 0; k < 3; k++) D[i - 1][k] = pos[3 * t[i] + k] - a[k];
    *longest = 0;
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++) {
            double l2 = 0;
            for (int k = 0; k < 3; k++) {
                double d = pos[3 * t[j] + k] - pos[3 * t[i] + k];
                l2 += d * d;
            }
            *longest = fmax(*longest, sqrt(l2));
        }
    return D[0][0] * (D[1][1] * D[2][2] - D[1][2] * D[2][1]) - D[0][1] * (D[1][0] * D[2][2] - D[1][2] * D[2][0]) +
           D[0][2] * (D[1][0] * D[2][1] - D[1][1] * D[2][0]);
}

hy_status hy_tetio_finish(const char* name, const double* pos, int32_t node_count, int32_t* tets,
                          const long* line, const int64_t* id, int32_t tet_count, hy_tetmesh** out) {
    *out = NULL;
    if (tet_count == 0) return hy_fail(HY_ERR_PARSE, "%s: no tetrahedra in the file", name);
    /* degenerate elements, then the file's orientation by majority */
    int32_t positive = 0;
    for (int32_t e = 0; e < tet_count; e++) {
        double longest, d = signed_volume6(pos, tets + 4 * e, &longest);
        if (!(fabs(d) > 1e-12 * longest * longest * longest) || !isfinite(d))
            return hy_fail(HY_ERR_PARSE, "%s:%ld: tetrahedron %lld is degenerate: volume %g with longest edge %g", name,
                           line[e], (long long)id[e], d / 6.0, longest);
        positive += d > 0;
    }
    int sign = 2 * positive >= tet_count ? 1 : -1;
    for (int32_t e = 0; e < tet_count; e++) {
        double longest, d = signed_volume6(pos, tets + 4 * e, &longest);
        if ((d > 0) != (sign > 0))
            return hy_fail(HY_ERR_PARSE,
                           "%s:%ld: tetrahedron %lld is inverted: its volume is %s where %d of the file's %d "
                           "elements' are %s",
                           name, line[e], (long long)id[e], d > 0 ? "positive" : "negative",
                           sign > 0 ? positive : tet_count - positive, tet_count, sign > 0 ? "positive" : "negative");
        if (sign < 0) {
            int32_t s = tets[4 * e + 2];
            tets[4 * e + 2] = tets[4 * e + 3];
            tets[4 * e + 3] = s;
        }
    }
    /* the used nodes, in file order */
    int32_t* map = malloc(sizeof(int32_t) * (size_t)(node_count ? node_count : 1));
    if (!map) return hy_fail(HY_ERR_NOMEM, "%s: out of memory", name);
    for (int32_t v = 0; v < node_count; v++) map[v] = -1;
    for (int64_t k = 0; k < 4 * (int64_t)tet_count; k++) map[tets[k]] = 0;
    int32_t used = 0;
    for (int32_t v = 0; v < node_count; v++)
        if (map[v] == 0) map[v] = used++;
    hy_tetmesh* m;
    hy_status st = hy_tetmesh_alloc(used, tet_count, &m);
    if (st) {
        free(map);
        return st;
    }
    for (int32_t v = 0; v < node_count; v++)
        if (map[v] >= 0) memcpy(m->positions + 3 * map[v], pos + 3 * v, 3 * sizeof(double));
    for (int64_t k = 0; k < 4 * (int64_t)tet_count; k++) m->tets[k] = map[tets[k]];
    free(map);
    *out = m;
    return HY_OK;
}
