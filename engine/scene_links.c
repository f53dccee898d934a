/* The scene loader's parts for what joins objects and what parameterises
 * a scene: the top-level "parameters" (named numbers a field may give as
 * "$name", overridable from the options) and "attachments" (solids tied
 * together, engine/links.h). */
#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "engine/links.h"
#include "engine/scene_plan.h"

/* ------------------------------------------------------------ parameters */

static int good_name(const char* s) {
    if (!s || !(isalpha((unsigned char)s[0]) || s[0] == '_')) return 0;
    for (; *s; s++)
        if (!isalnum((unsigned char)*s) && *s != '_') return 0;
    return 1;
}

/* "name=value,name=value" onto the parameters' values. */
static hy_status apply_overrides(ctx* c, cJSON* params, const char* overrides) {
    char buf[48];
    const char* s = overrides;
    while (*s) {
        const char* end = strchr(s, ',');
        size_t n = end ? (size_t)(end - s) : strlen(s);
        char item[128];
        if (n >= sizeof item) return hy_fail(HY_ERR_PARSE, "%s: parameter override \"%.40s...\" is too long", c->file, s);
        memcpy(item, s, n);
        item[n] = '\0';
        char* eq = strchr(item, '=');
        char* stop = NULL;
        double v = 0.0;
        if (eq) {
            *eq = '\0';
            v = strtod(eq + 1, &stop);
        }
        if (!eq || !good_name(item) || stop == eq + 1 || *stop != '\0' || !isfinite(v))
            return hy_fail(HY_ERR_PARSE, "%s: parameter override \"%s\" must be NAME=NUMBER", c->file,
                           clip(item, buf, sizeof buf));
        cJSON* it = params ? cJSON_GetObjectItemCaseSensitive(params, item) : NULL;
        if (!it)
            return hy_fail(HY_ERR_PARSE, "%s: parameter override \"%s\": the scene has no parameter of that name",
                           c->file, clip(item, buf, sizeof buf));
        cJSON_SetNumberValue(it, v);
        s += n;
        if (*s == ',') s++;
    }
    return HY_OK;
}

hy_status hy_scene_check_parameters(ctx* c, cJSON* params, const char* overrides) {
    char d[80], buf[48];
    c->params = NULL;
    if (params) {
        size_t m = push(c, "parameters");
        hy_status s = check_object(c, params);
        for (const cJSON* it = s ? NULL : params->child; it && !s; it = it->next) {
            size_t m1 = push_key(c, it->string ? it->string : "");
            if (!good_name(it->string))
                s = fail(c, it, HY_ERR_PARSE, ": a parameter's name is letters, digits and '_', not starting with a digit");
            else if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble))
                s = fail(c, it, HY_ERR_PARSE, " must be a finite number, got %s", describe(it, d, sizeof d));
            else if (cJSON_GetObjectItemCaseSensitive(params, it->string) != it)
                s = fail(c, it, HY_ERR_PARSE, ": parameter \"%s\" given twice", clip(it->string, buf, sizeof buf));
            pop(c, m1);
        }
        pop(c, m);
        if (s) return s;
    }
    if (overrides && overrides[0]) {
        hy_status s = apply_overrides(c, params, overrides);
        if (s) return s;
    }
    c->params = params;
    return HY_OK;
}

/* ------------------------------------------------------------ attachments */

typedef struct named {
    const char* name;
    int32_t inst;
} named;

static int by_name(const void* x, const void* y) { return strcmp(((const named*)x)->name, ((const named*)y)->name); }

/* The instance named `name` through the sorted index, or -1. */
static int32_t find_inst(const plan* p, const named* index, const char* name) {
    int32_t lo = 0, hi = p->inst_count;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        int r = strcmp(index[mid].name, name);
        if (r == 0) return index[mid].inst;
        if (r < 0) lo = mid + 1;
        else hi = mid;
    }
    return -1;
}

/* "vertices": [[a, b], ...], each in range of its object's mesh. */
static hy_status check_vertex_pairs(ctx* c, const plan* p, const cJSON* it, int32_t ia, int32_t ib, attachspec* out) {
    char d[80];
    int n = cJSON_IsArray(it) ? cJSON_GetArraySize(it) : 0;
    if (n < 1) return fail(c, it, HY_ERR_PARSE, " must be a non-empty array of [vertex of the first, vertex of the "
                                                "second] pairs, got %s", describe(it, d, sizeof d));
    out->vertices = malloc(2 * sizeof(int32_t) * (size_t)n);
    if (!out->vertices) return fail(c, it, HY_ERR_NOMEM, ": out of memory");
    int32_t nv[2] = {p->tetmeshes[p->insts[ia].mesh]->vertex_count, p->tetmeshes[p->insts[ib].mesh]->vertex_count};
    int k = 0;
    hy_status s = HY_OK;
    for (const cJSON* e = it->child; e && !s; e = e->next, k++) {
        size_t m = push(c, "[%d]", k);
        int64_t v[2];
        s = check_ivec(c, e, 2, 0, INT32_MAX, v);
        for (int j = 0; j < 2 && !s; j++)
            if (v[j] >= nv[j])
                s = fail(c, e, HY_ERR_PARSE, ": vertex %lld of '%s' out of range (it has %d)", (long long)v[j],
                         p->insts[j ? ib : ia].name, nv[j]);
        if (!s) out->vertices[2 * k] = (int32_t)v[0], out->vertices[2 * k + 1] = (int32_t)v[1];
        pop(c, m);
    }
    out->vertex_count = n;
    return s;
}

/* One entry: "objects" [names, 2 or more: each tied to the next],
 * "stiffness", "tolerance", "vertices". */
static hy_status check_attachment(ctx* c, plan* p, const named* index, const cJSON* e, int entry) {
    static const char* const fields[] = {"objects", "stiffness", "tolerance", "vertices", NULL};
    char d[80], buf[48];
    hy_status s = check_object(c, e);
    if (!s) s = check_fields(c, e, fields);
    if (!s) s = require(c, e, "objects");
    if (!s) s = require(c, e, "stiffness");
    double stiffness = 0.0, tol = 1e-6;
    if (!s) s = field_num(c, e, "stiffness", R_POS, &stiffness);
    if (!s) s = field_num(c, e, "tolerance", R_NONNEG, &tol);
    if (s) return s;
    const cJSON* names = get(e, "objects");
    const cJSON* verts = get(e, "vertices");
    size_t m = push(c, ".objects");
    int n = cJSON_IsArray(names) ? cJSON_GetArraySize(names) : 0;
    if (n < 2)
        s = fail(c, names, HY_ERR_PARSE, " must be an array of two or more object names, got %s",
                 cJSON_IsArray(names) ? (snprintf(d, sizeof d, "%d", n), d) : describe(names, d, sizeof d));
    else if (verts && n != 2)
        s = fail(c, names, HY_ERR_PARSE, " must name exactly two objects with \"vertices\", got %d", n);
    int32_t prev = -1;
    int k = 0;
    for (const cJSON* it = s ? NULL : names->child; it && !s; it = it->next, k++) {
        size_t m1 = push(c, "[%d]", k);
        const char* name = NULL;
        s = check_string(c, it, &name);
        int32_t cur = s ? -1 : find_inst(p, index, name);
        if (!s && cur < 0) s = fail(c, it, HY_ERR_PARSE, ": no object is named \"%s\"", clip(name, buf, sizeof buf));
        if (!s && p->insts[cur].kind != HY_OBJECT_FEM && p->insts[cur].kind != HY_OBJECT_MASS_SPRING)
            s = fail(c, it, HY_ERR_PARSE, ": object \"%s\" is not a fem or massspring object", p->insts[cur].name);
        if (!s && cur == prev) s = fail(c, it, HY_ERR_PARSE, ": object \"%s\" cannot be attached to itself", name);
        if (!s && prev >= 0) {
            if (!grow((void**)&p->attachments, &p->attachment_cap, p->attachment_count + 1, sizeof *p->attachments))
                s = fail(c, it, HY_ERR_NOMEM, ": out of memory");
            attachspec* a = s ? NULL : &p->attachments[p->attachment_count++];
            if (a) *a = (attachspec){entry, prev, cur, stiffness, tol, NULL, 0};
            if (a && verts) {
                pop(c, m1);
                pop(c, m);
                m = push(c, ".vertices");
                m1 = c->path_len;
                s = check_vertex_pairs(c, p, verts, prev, cur, a);
            }
        }
        prev = cur;
        pop(c, m1);
    }
    pop(c, m);
    return s;
}

hy_status hy_scene_check_attachments(ctx* c, plan* p, const cJSON* list) {
    char d[80];
    if (!list) return HY_OK;
    size_t m = push(c, "attachments");
    hy_status s = HY_OK;
    if (!cJSON_IsArray(list)) s = fail(c, list, HY_ERR_PARSE, " must be an array, got %s", describe(list, d, sizeof d));
    pop(c, m);
    if (s) return s;
    named* index = malloc(sizeof *index * (size_t)(p->inst_count ? p->inst_count : 1));
    if (!index) return fail(c, list, HY_ERR_NOMEM, ": out of memory");
    for (int32_t i = 0; i < p->inst_count; i++) index[i] = (named){p->insts[i].name, i};
    qsort(index, (size_t)p->inst_count, sizeof *index, by_name);
    int k = 0;
    for (const cJSON* e = list->child; e && !s; e = e->next, k++) {
        size_t m1 = push(c, "attachments[%d]", k);
        s = check_attachment(c, p, index, e, k);
        pop(c, m1);
    }
    free(index);
    return s;
}

hy_status hy_scene_build_attachments(ctx* c, const plan* p, hy_world* w, const hy_object_id* ids) {
    const cJSON* list = get(c->root, "attachments");
    for (int32_t i = 0; i < p->attachment_count; i++) {
        const attachspec* a = &p->attachments[i];
        hy_status s = a->vertices ? hy_links_attach_vertices(w, ids[a->a], ids[a->b], a->vertices, a->vertex_count,
                                                             a->stiffness)
                                  : hy_links_attach_coincident(w, ids[a->a], ids[a->b], a->tolerance, a->stiffness,
                                                               NULL);
        if (s) {
            c->path_len = 0;
            c->path[0] = '\0';
            push(c, "attachments[%d]", a->entry);
            return wrap(c, cJSON_GetArrayItem(list, a->entry), s == HY_ERR_INVALID_ARG ? HY_ERR_PARSE : s);
        }
    }
    return HY_OK;
}
