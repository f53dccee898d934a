/* Where things are in JSON text (see json_text.h).
 *
 * cJSON keeps no source positions. Rather than a second parser that records
 * them, hy_json_line_of finds an item's line by walking the source text in
 * step with the parsed tree until the item is reached: the text is known to
 * be valid JSON by then, so the walk is a few lines, and it runs only when a
 * message is written. */
#include "core/json_text.h"

#include <string.h>

/* ------------------------------------------------------------ locating items */

typedef struct walker {
    const unsigned char* s;
    size_t n, p;
    const cJSON* target;
    size_t found;
    int hit;
} walker;

static void walk_ws(walker* w) {
    while (w->p < w->n && w->s[w->p] <= 32) w->p++; /* cJSON's notion of whitespace */
}

static int walk_string(walker* w) {
    if (w->p >= w->n || w->s[w->p] != '"') return 0;
    for (w->p++; w->p < w->n && w->s[w->p] != '"'; w->p++)
        if (w->s[w->p] == '\\') w->p++;
    if (w->p >= w->n) return 0;
    w->p++;
    return 1;
}

/* Advance over the value `it`; returns 0 when the target was reached (or the
 * text and tree disagree, which leaves the line unknown but is harmless). */
static int walk_value(walker* w, const cJSON* it) {
    walk_ws(w);
    if (it == w->target) {
        w->found = w->p;
        w->hit = 1;
        return 0;
    }
    if (w->p >= w->n) return 0;
    if (cJSON_IsObject(it) || cJSON_IsArray(it)) {
        int obj = cJSON_IsObject(it);
        if (w->s[w->p] != (obj ? '{' : '[')) return 0;
        w->p++;
        for (const cJSON* ch = it->child; ch; ch = ch->next) {
            walk_ws(w);
            if (obj) {
                /* A member is reported at its key, where a reader looks. */
                if (ch == w->target) {
                    w->found = w->p;
                    w->hit = 1;
                    return 0;
                }
                if (!walk_string(w)) return 0;
                walk_ws(w);
                if (w->p >= w->n || w->s[w->p] != ':') return 0;
                w->p++;
            }
            if (!walk_value(w, ch)) return 0;
            walk_ws(w);
            if (w->p < w->n && w->s[w->p] == ',') w->p++;
        }
        walk_ws(w);
        if (w->p >= w->n) return 0;
        w->p++;
        return 1;
    }
    if (cJSON_IsString(it)) return walk_string(w);
    while (w->p < w->n && w->s[w->p] > 32 && w->s[w->p] != ',' && w->s[w->p] != ']' && w->s[w->p] != '}') w->p++;
    return 1;
}

/* Line and column of a byte offset, for parse errors. */
void hy_json_line_col(const unsigned char* s, size_t n, size_t off, int* line, int* col) {
    *line = 1;
    *col = 1;
    for (size_t i = 0; i < off && i < n; i++) {
        if (s[i] == '\n') {
            (*line)++;
            *col = 1;
        } else {
            (*col)++;
        }
    }
}

/* Offset of the quote that closes the string opened at s[open] (escapes
 * skipped), n when the text ends first. */
static size_t string_end(const unsigned char* s, size_t n, size_t open) {
    for (size_t i = open + 1; i < n; i++) {
        if (s[i] == '\\') i++;
        else if (s[i] == '"') return i;
    }
    return n;
}

/* Whether the text ends inside a string or an open object or array: then
 * the file was cut short, which says more than "error at the last byte" (where
 * cJSON reports it). */
int hy_json_truncated(const unsigned char* s, size_t n) {
    long depth = 0;
    size_t last = n;
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = s[i];
        if (ch == '"') {
            i = string_end(s, n, i);
            if (i >= n) return 1; /* ends inside a string */
            last = i;
            continue;
        }
        if (ch == '{' || ch == '[') depth++;
        if (ch == '}' || ch == ']') depth--;
        if (ch > 32) last = i;
    }
    if (last == n) return 1; /* empty or all whitespace */
    return depth > 0 || s[last] == ':' || s[last] == ',';
}

/* Offset of the first comma that closes nothing but a '}' or ']' (outside
 * strings), n when there is none. JSON allows no trailing comma; cJSON
 * stops somewhere after it, on the next line or at the end of the file,
 * and the message should point at the comma itself. */
size_t hy_json_trailing_comma(const unsigned char* s, size_t n) {
    for (size_t i = 0; i < n; i++) {
        unsigned char ch = s[i];
        if (ch == '"') {
            i = string_end(s, n, i);
            continue;
        }
        if (ch != ',') continue;
        size_t k = i + 1;
        while (k < n && (s[k] == ' ' || s[k] == '\t' || s[k] == '\n' || s[k] == '\r')) k++;
        if (k < n && (s[k] == '}' || s[k] == ']')) return i;
    }
    return n;
}

/* Line of an item in the source, 0 if unknown. */
int hy_json_line_of(const unsigned char* src, size_t len, const cJSON* root, const cJSON* it) {
    if (!it || !root) return 0;
    walker w = {src, len, 0, it, 0, 0};
    if (w.n >= 3 && memcmp(w.s, "\xEF\xBB\xBF", 3) == 0) w.p = 3; /* cJSON skips a BOM */
    walk_value(&w, root);
    if (!w.hit) return 0;
    int line, col;
    hy_json_line_col(src, len, w.found, &line, &col);
    return line;
}
