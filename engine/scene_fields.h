/* The scene loader's checking context and typed field checks, shared by
 * engine/scene.c and engine/scene_objects.c: the JSON path of the item being
 * checked, messages that name file, line and path, and one checker per
 * field type with its range.
 *
 * Static inline: the loader's files share them without putting short,
 * generic names (fail, get, push) into the library's namespace. */
#ifndef HY_ENGINE_SCENE_FIELDS_H
#define HY_ENGINE_SCENE_FIELDS_H

#include <cjson/cJSON.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"
#include "core/json_text.h"
#include "hyphys/hyphys.h"

/* ------------------------------------------------------------ context */

typedef struct ctx {
    const char* file; /* name used in messages */
    const unsigned char* src;
    size_t len;
    const cJSON* root;
    const cJSON* params; /* the scene's "parameters" (checked numbers), or NULL */
    char base[4096]; /* directory that relative mesh paths resolve against; "" = cwd */
    char path[320];  /* JSON path of the item being checked, "objects[2].mesh" */
    size_t path_len;
} ctx;

static inline size_t push(ctx* c, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
static inline size_t push(ctx* c, const char* fmt, ...) {
    size_t mark = c->path_len;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(c->path + mark, sizeof c->path - mark, fmt, ap);
    va_end(ap);
    c->path_len = strlen(c->path);
    return mark;
}

static inline void pop(ctx* c, size_t mark) {
    c->path_len = mark;
    c->path[mark] = '\0';
}

/* Copy a user string into a message: at most 40 bytes, unprintables as '?'. */
static const char* clip(const char* s, char* buf, size_t n) {
    size_t i = 0;
    for (; s && s[i] && i + 4 < n && i < 40; i++) buf[i] = (s[i] >= 32 && s[i] < 127) ? s[i] : '?';
    if (s && s[i] && i + 4 < n) {
        memcpy(buf + i, "...", 3);
        i += 3;
    }
    buf[i] = '\0';
    return buf;
}

static inline size_t push_key(ctx* c, const char* key) {
    char buf[48];
    return push(c, "%s%s", c->path_len ? "." : "", clip(key, buf, sizeof buf));
}


/* Line of an item in the source, 0 if unknown. */
static inline int locate(const ctx* c, const cJSON* it) { return hy_json_line_of(c->src, c->len, c->root, it); }

/* Record "FILE:LINE: PATH<msg>" and return `st`. */
static inline hy_status fail(ctx* c, const cJSON* at, hy_status st, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;
static inline hy_status fail(ctx* c, const cJSON* at, hy_status st, const char* fmt, ...) {
    char msg[640];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    int line = locate(c, at);
    if (line > 0) return hy_fail(st, "%s:%d: %s%s", c->file, line, c->path, msg);
    return hy_fail(st, "%s: %s%s", c->file, c->path, msg);
}

/* Prefix the message a callee left with our location (file:line: path: ). */
static inline hy_status wrap(ctx* c, const cJSON* at, hy_status st) {
    int line = locate(c, at);
    if (line > 0)
        hy_error_prefix("%s:%d: %s: ", c->file, line, c->path);
    else
        hy_error_prefix("%s: %s: ", c->file, c->path);
    return st;
}

static const char* describe(const cJSON* it, char* buf, size_t n) {
    char tmp[48];
    if (cJSON_IsNumber(it))
        snprintf(buf, n, "%g", it->valuedouble);
    else if (cJSON_IsString(it))
        snprintf(buf, n, "the string \"%s\"", clip(it->valuestring, tmp, sizeof tmp));
    else if (cJSON_IsBool(it))
        snprintf(buf, n, "%s", cJSON_IsTrue(it) ? "true" : "false");
    else if (cJSON_IsNull(it))
        snprintf(buf, n, "null");
    else if (cJSON_IsArray(it))
        snprintf(buf, n, "an array");
    else if (cJSON_IsObject(it))
        snprintf(buf, n, "an object");
    else
        snprintf(buf, n, "an unknown value");
    return buf;
}

/* ------------------------------------------------------------ typed fields */

typedef enum range { R_ANY, R_POS, R_NONNEG, R_UNIT } range;

/* A number field may name a scene parameter instead ("$cells"): the
 * parameter's value, checked as the field's own. *val gets the number
 * item to read; NULL with a failure for an unknown name. */
static inline hy_status param_value(ctx* c, const cJSON* it, const cJSON** val) {
    *val = it;
    if (!cJSON_IsString(it) || !it->valuestring || it->valuestring[0] != '$') return HY_OK;
    const cJSON* p = c->params ? cJSON_GetObjectItemCaseSensitive(c->params, it->valuestring + 1) : NULL;
    if (p) {
        *val = p;
        return HY_OK;
    }
    char buf[48], list[256];
    size_t n = 0;
    list[0] = '\0';
    for (const cJSON* q = c->params ? c->params->child : NULL; q && n < sizeof list; q = q->next)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", n ? ", " : "", clip(q->string, buf, sizeof buf));
    return fail(c, it, HY_ERR_PARSE, ": unknown parameter \"%s\" (the scene's parameters: %s)",
                clip(it->valuestring, buf, sizeof buf), n ? list : "none");
}

static inline hy_status check_num(ctx* c, const cJSON* at, range r, double* out) {
    char d[80];
    const cJSON* it = NULL;
    hy_status s = param_value(c, at, &it);
    if (s) return s;
    if (!cJSON_IsNumber(it)) return fail(c, at, HY_ERR_PARSE, " must be a number, got %s", describe(it, d, sizeof d));
    double v = it->valuedouble;
    if (!isfinite(v)) return fail(c, at, HY_ERR_PARSE, " must be a finite number, got %g", v);
    if (r == R_POS && !(v > 0.0)) return fail(c, at, HY_ERR_PARSE, " must be > 0, got %g", v);
    if (r == R_NONNEG && !(v >= 0.0)) return fail(c, at, HY_ERR_PARSE, " must be >= 0, got %g", v);
    if (r == R_UNIT && !(v >= 0.0 && v <= 1.0)) return fail(c, at, HY_ERR_PARSE, " must be in [0, 1], got %g", v);
    *out = v;
    return HY_OK;
}

static inline hy_status check_int(ctx* c, const cJSON* at, int64_t lo, int64_t hi, int64_t* out) {
    char d[80];
    const cJSON* it = NULL;
    hy_status s = param_value(c, at, &it);
    if (s) return s;
    if (!cJSON_IsNumber(it))
        return fail(c, at, HY_ERR_PARSE, " must be an integer, got %s", describe(it, d, sizeof d));
    double v = it->valuedouble;
    if (!isfinite(v) || v != floor(v)) return fail(c, at, HY_ERR_PARSE, " must be an integer, got %g", v);
    if (v < (double)lo || v > (double)hi)
        return fail(c, at, HY_ERR_PARSE, " must be in [%lld, %lld], got %g", (long long)lo, (long long)hi, v);
    *out = (int64_t)v;
    return HY_OK;
}

/* An array of exactly n numbers. */
static inline hy_status check_vec(ctx* c, const cJSON* it, int n, range r, double* out) {
    char d[80];
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != n)
        return fail(c, it, HY_ERR_PARSE, " must be an array of %d numbers, got %s", n,
                    cJSON_IsArray(it) ? (snprintf(d, sizeof d, "%d elements", cJSON_GetArraySize(it)), d)
                                      : describe(it, d, sizeof d));
    int k = 0;
    for (const cJSON* e = it->child; e; e = e->next, k++) {
        size_t m = push(c, "[%d]", k);
        hy_status s = check_num(c, e, r, out + k);
        pop(c, m);
        if (s) return s;
    }
    return HY_OK;
}

static inline hy_status check_ivec(ctx* c, const cJSON* it, int n, int64_t lo, int64_t hi, int64_t* out) {
    char d[80];
    if (!cJSON_IsArray(it) || cJSON_GetArraySize(it) != n)
        return fail(c, it, HY_ERR_PARSE, " must be an array of %d integers, got %s", n,
                    cJSON_IsArray(it) ? (snprintf(d, sizeof d, "%d elements", cJSON_GetArraySize(it)), d)
                                      : describe(it, d, sizeof d));
    int k = 0;
    for (const cJSON* e = it->child; e; e = e->next, k++) {
        size_t m = push(c, "[%d]", k);
        hy_status s = check_int(c, e, lo, hi, out + k);
        pop(c, m);
        if (s) return s;
    }
    return HY_OK;
}

static inline hy_status check_object(ctx* c, const cJSON* it) {
    char d[80];
    if (!cJSON_IsObject(it)) return fail(c, it, HY_ERR_PARSE, " must be an object, got %s", describe(it, d, sizeof d));
    return HY_OK;
}

static inline hy_status check_string(ctx* c, const cJSON* it, const char** out) {
    char d[80];
    if (!cJSON_IsString(it) || !it->valuestring)
        return fail(c, it, HY_ERR_PARSE, " must be a string, got %s", describe(it, d, sizeof d));
    *out = it->valuestring;
    return HY_OK;
}

static inline hy_status check_bool(ctx* c, const cJSON* it, int* out) {
    char d[80];
    if (!cJSON_IsBool(it))
        return fail(c, it, HY_ERR_PARSE, " must be true or false, got %s", describe(it, d, sizeof d));
    *out = cJSON_IsTrue(it) ? 1 : 0;
    return HY_OK;
}

static const cJSON* get(const cJSON* obj, const char* key) { return cJSON_GetObjectItemCaseSensitive(obj, key); }

/* Optional fields: an absent key leaves *out as it was. */
static inline hy_status field_num(ctx* c, const cJSON* obj, const char* key, range r, double* out) {
    const cJSON* it = get(obj, key);
    if (!it) return HY_OK;
    size_t m = push_key(c, key);
    hy_status s = check_num(c, it, r, out);
    pop(c, m);
    return s;
}

static inline hy_status field_int(ctx* c, const cJSON* obj, const char* key, int64_t lo, int64_t hi, int* out) {
    const cJSON* it = get(obj, key);
    if (!it) return HY_OK;
    size_t m = push_key(c, key);
    int64_t v = 0;
    hy_status s = check_int(c, it, lo, hi, &v);
    pop(c, m);
    if (!s) *out = (int)v;
    return s;
}

static inline hy_status field_vec(ctx* c, const cJSON* obj, const char* key, int n, range r, double* out) {
    const cJSON* it = get(obj, key);
    if (!it) return HY_OK;
    size_t m = push_key(c, key);
    double tmp[4];
    hy_status s = check_vec(c, it, n, r, tmp);
    pop(c, m);
    if (!s) memcpy(out, tmp, sizeof(double) * (size_t)n);
    return s;
}

static inline hy_status field_ivec(ctx* c, const cJSON* obj, const char* key, int n, int64_t lo, int64_t hi, int* out) {
    const cJSON* it = get(obj, key);
    if (!it) return HY_OK;
    size_t m = push_key(c, key);
    int64_t tmp[4];
    hy_status s = check_ivec(c, it, n, lo, hi, tmp);
    pop(c, m);
    if (!s)
        for (int k = 0; k < n; k++) out[k] = (int)tmp[k];
    return s;
}

static inline hy_status field_bool(ctx* c, const cJSON* obj, const char* key, int* out) {
    const cJSON* it = get(obj, key);
    if (!it) return HY_OK;
    size_t m = push_key(c, key);
    hy_status s = check_bool(c, it, out);
    pop(c, m);
    return s;
}

static inline hy_status field_string(ctx* c, const cJSON* obj, const char* key, const char** out) {
    const cJSON* it = get(obj, key);
    if (!it) return HY_OK;
    size_t m = push_key(c, key);
    hy_status s = check_string(c, it, out);
    pop(c, m);
    return s;
}

static inline hy_status require(ctx* c, const cJSON* obj, const char* key) {
    if (get(obj, key)) return HY_OK;
    size_t m = push_key(c, key);
    hy_status s = fail(c, obj, HY_ERR_PARSE, " is required");
    pop(c, m);
    return s;
}

/* Every key of `obj` must be in `allowed` (NULL-ended, at most 64), once.
 * Unknown keys are errors so that a typo never silently becomes a default. */
static inline hy_status check_fields(ctx* c, const cJSON* obj, const char* const* allowed) {
    uint64_t seen = 0;
    for (const cJSON* ch = obj->child; ch; ch = ch->next) {
        const char* key = ch->string ? ch->string : "";
        int k = 0;
        while (allowed[k] && strcmp(allowed[k], key) != 0) k++;
        if (!allowed[k]) {
            char list[512];
            size_t n = 0;
            list[0] = '\0';
            for (int j = 0; allowed[j] && n < sizeof list; j++)
                n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", j ? ", " : "", allowed[j]);
            size_t m = push_key(c, key);
            hy_status s = fail(c, ch, HY_ERR_PARSE, ": unknown field (expected one of: %s)", list);
            pop(c, m);
            return s;
        }
        if (seen & (UINT64_C(1) << k)) {
            size_t m = push_key(c, key);
            hy_status s = fail(c, ch, HY_ERR_PARSE, ": field given twice");
            pop(c, m);
            return s;
        }
        seen |= UINT64_C(1) << k;
    }
    return HY_OK;
}

#endif
