/* JSON scene loader (the format is documented in docs/guide/SCENES.md).
 *
 * Loading runs in two phases so that a bad scene never leaves a half-built
 * world behind: check() reads and validates every field into a plan (meshes
 * generated or loaded, pins resolved, array and fracture instances laid out,
 * bonds listed), then build() creates the world from the plan. Only build()
 * touches a world, and on any failure it destroys it before returning.
 *
 * The parts: typed field checks and messages that name the line
 * (engine/scene_fields.h, core/json_text.c), the plan
 * (engine/scene_plan.h), what each object kind needs checked
 * (engine/scene_objects.c); here the top level, the build and the entry
 * points. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "engine/check.h"
#include "core/error.h"
#include "core/hd.h"
#include "core/mesh.h"
#include "hyphys/hyphys.h"
#include "core/json_text.h"
#include "engine/scene_plan.h"

static int inst_name_cmp(const void* a, const void* b) {
    const inst* x = *(const inst* const*)a;
    const inst* y = *(const inst* const*)b;
    int r = strcmp(x->name, y->name);
    return r ? r : (x < y ? -1 : x > y);
}

/* Object names must be unique: tools find objects by name. */
static hy_status check_unique_names(ctx* c, plan* p) {
    if (p->inst_count < 2) return HY_OK;
    const inst** v = malloc(sizeof *v * (size_t)p->inst_count);
    if (!v) return fail(c, NULL, HY_ERR_NOMEM, ": out of memory");
    for (int32_t i = 0; i < p->inst_count; i++) v[i] = &p->insts[i];
    qsort(v, (size_t)p->inst_count, sizeof *v, inst_name_cmp);
    hy_status s = HY_OK;
    for (int32_t i = 1; i < p->inst_count && !s; i++)
        if (strcmp(v[i]->name, v[i - 1]->name) == 0) {
            int a = v[i - 1]->object, b = v[i]->object;
            if (a > b) {
                int t = a;
                a = b;
                b = t;
            }
            size_t m = push(c, "objects[%d].name", b);
            const cJSON* o = cJSON_GetArrayItem(p->objects, b);
            s = fail(c, get(o, "name") ? get(o, "name") : o, HY_ERR_PARSE,
                     ": object name \"%s\" is already used by objects[%d]", v[i]->name, a);
            pop(c, m);
        }
    free(v);
    return s;
}

static hy_status check_solver(ctx* c, plan* p, const cJSON* it) {
    static const char* const fields[] = {"time_step",    "substeps",   "gravity",    "threads",
                                         "cg_max_iterations", "cg_tolerance", "collisions", "sleep_time",
                                         "sleep_velocity", "rolling_resistance", "bounce_speed", "rest_damping", NULL};
    size_t m = push(c, "solver");
    hy_world_def* w = &p->world;
    hy_status s = check_object(c, it);
    if (!s) s = check_fields(c, it, fields);
    if (!s) s = field_num(c, it, "time_step", R_POS, &w->time_step);
    if (!s && w->time_step > 1.0) {
        size_t m1 = push(c, ".time_step");
        s = fail(c, get(it, "time_step"), HY_ERR_PARSE, " must be in (0, 1] s, got %g", w->time_step);
        pop(c, m1);
    }
    int v;
    if (!s) s = field_int(c, it, "substeps", 1, 64, &w->substeps);
    if (!s) s = field_vec(c, it, "gravity", 3, R_ANY, w->gravity);
    if (!s) s = field_int(c, it, "threads", 0, 256, &w->threads);
    if (!s) s = field_int(c, it, "cg_max_iterations", 1, 100000, &w->cg_max_iterations);
    if (!s) s = field_num(c, it, "cg_tolerance", R_POS, &w->cg_tolerance);
    if (!s && !(w->cg_tolerance < 1.0)) {
        size_t m1 = push(c, ".cg_tolerance");
        s = fail(c, get(it, "cg_tolerance"), HY_ERR_PARSE, " must be in (0, 1), got %g", w->cg_tolerance);
        pop(c, m1);
    }
    v = w->collisions;
    if (!s) s = field_bool(c, it, "collisions", &v);
    w->collisions = v;
    if (!s) s = field_num(c, it, "sleep_time", R_NONNEG, &w->sleep_time);
    if (!s) s = field_num(c, it, "sleep_velocity", R_POS, &w->sleep_velocity);
    if (!s) s = field_num(c, it, "rolling_resistance", R_NONNEG, &w->rolling_resistance);
    if (!s) s = field_num(c, it, "bounce_speed", R_NONNEG, &w->bounce_speed);
    if (!s) s = field_num(c, it, "rest_damping", R_NONNEG, &w->rest_damping);
    pop(c, m);
    return s;
}

/* Phase 1: everything the world will need, checked. */
static hy_status check(ctx* c, plan* p, const hy_scene_options* opt) {
    static const char* const fields[] = {"name",    "description", "parameters", "solver",
                                         "materials", "objects",   "attachments", NULL};
    const cJSON* root = c->root;
    char d[80];
    if (!cJSON_IsObject(root))
        return fail(c, root, HY_ERR_PARSE, "the top-level value must be an object, got %s", describe(root, d, sizeof d));
    hy_status s = check_fields(c, root, fields);
    const char* str = NULL;
    if (!s) s = field_string(c, root, "name", &str);
    if (!s) s = field_string(c, root, "description", &str);
    p->world = hy_world_def_default();
    if (!s) s = hy_scene_check_parameters(c, cJSON_GetObjectItemCaseSensitive(root, "parameters"), opt->parameters);
    if (!s && get(root, "solver")) s = check_solver(c, p, get(root, "solver"));
    if (!s && get(root, "materials")) s = hy_scene_check_materials(c, p, get(root, "materials"));
    if (!s) s = require(c, root, "objects");
    const cJSON* objects = s ? NULL : get(root, "objects");
    p->objects = objects;
    if (objects) {
        size_t m = push(c, "objects");
        if (!cJSON_IsArray(objects))
            s = fail(c, objects, HY_ERR_PARSE, " must be an array, got %s", describe(objects, d, sizeof d));
        pop(c, m);
        int i = 0;
        for (const cJSON* o = s ? NULL : objects->child; o; o = o->next, i++) {
            size_t m1 = push(c, "objects[%d]", i);
            s = hy_scene_check_object(c, p, o, i);
            pop(c, m1);
            if (s) return s;
        }
    }
    if (!s) s = check_unique_names(c, p);
    if (!s) s = hy_scene_check_attachments(c, p, get(root, "attachments"));
    if (!s && opt->threads > 0) p->world.threads = opt->threads;
    if (!s && opt->collisions >= 0) p->world.collisions = opt->collisions;
    return s;
}

/* Phase 2: the world, from a checked plan. Failures here are refusals by the
 * world (a body mesh enclosing no volume, say); the world is destroyed. */
static hy_status build(ctx* c, const plan* p, hy_world** out) {
    hy_world* w = NULL;
    hy_status s = hy_world_create(&p->world, &w);
    if (s) {
        c->path[0] = '\0';
        hy_error_prefix("%s: solver: ", c->file);
        return s == HY_ERR_INVALID_ARG ? HY_ERR_PARSE : s;
    }
    hy_object_id* ids = malloc(sizeof *ids * (size_t)(p->inst_count ? p->inst_count : 1));
    if (!ids) s = hy_fail(HY_ERR_NOMEM, "%s: out of memory", c->file);
    for (int32_t i = 0; !s && i < p->inst_count; i++) {
        inst in = p->insts[i];
        if (in.kind == HY_OBJECT_FEM || in.kind == HY_OBJECT_MASS_SPRING) {
            const hy_tetmesh* tm = p->tetmeshes[in.mesh];
            in.d.solid.positions = tm->positions;
            in.d.solid.vertex_count = tm->vertex_count;
            in.d.solid.tets = tm->tets;
            in.d.solid.tet_count = tm->tet_count;
            if (in.pins >= 0) {
                in.d.solid.fixed = p->pins[in.pins].idx;
                in.d.solid.fixed_count = p->pins[in.pins].n;
            }
            hy_solid_id id = {0, 0};
            s = hy_solid_add(w, &in.d.solid, &id);
            ids[i] = hy_solid_object(id);
        } else if (in.kind == HY_OBJECT_CLOTH) {
            hy_mesh_view view = hy_mesh_get_view(p->meshes[in.mesh]);
            in.d.cloth.mesh = view;
            if (in.pins >= 0) {
                in.d.cloth.pinned = p->pins[in.pins].idx;
                in.d.cloth.pinned_count = p->pins[in.pins].n;
            }
            hy_cloth_id id = {0, 0};
            s = hy_cloth_add(w, &in.d.cloth, &id);
            ids[i] = hy_cloth_object(id);
        } else if (in.kind == HY_OBJECT_BODY) {
            in.d.body.mesh = hy_mesh_get_view(p->meshes[in.mesh]);
            hy_body_id id = {0, 0};
            s = hy_body_add(w, &in.d.body, &id);
            ids[i] = hy_body_object(id);
        } else {
            in.d.obstacle.mesh = hy_mesh_get_view(p->meshes[in.mesh]);
            hy_obstacle_id id = {0, 0};
            s = hy_obstacle_add(w, &in.d.obstacle, &id);
            ids[i] = hy_obstacle_object(id);
        }
        if (!s) s = hy_object_set_name(w, ids[i], in.name);
        if (s) {
            c->path_len = 0;
            c->path[0] = '\0';
            push(c, "objects[%d] (%s)", in.object, in.name);
            s = wrap(c, cJSON_GetArrayItem(p->objects, in.object), s == HY_ERR_INVALID_ARG ? HY_ERR_PARSE : s);
        }
    }
    for (int32_t i = 0; !s && i < p->bond_count; i++) {
        hy_bond_def b = hy_bond_def_default();
        memcpy(b.anchor, p->bonds[i].anchor, sizeof b.anchor);
        b.strength = p->bonds[i].strength;
        s = hy_object_as_body(w, ids[p->bonds[i].a], &b.a);
        if (!s) s = hy_object_as_body(w, ids[p->bonds[i].b], &b.b);
        if (!s) s = hy_bond_add(w, &b);
        if (s) {
            const inst* in = &p->insts[p->bonds[i].a];
            c->path_len = 0;
            c->path[0] = '\0';
            push(c, "objects[%d] (%s)", in->object, in->name);
            s = wrap(c, cJSON_GetArrayItem(p->objects, in->object), s == HY_ERR_INVALID_ARG ? HY_ERR_PARSE : s);
        }
    }
    if (!s) s = hy_scene_build_attachments(c, p, w, ids);
    free(ids);
    if (s) {
        hy_world_destroy(w);
        return s;
    }
    *out = w;
    return HY_OK;
}

/* ------------------------------------------------------------ entry points */

HY_API hy_scene_options hy_scene_options_default(void) {
    hy_scene_options o;
    memset(&o, 0, sizeof o);
    o.threads = 0;
    o.collisions = -1;
    o.cookie = HY_DEF_COOKIE;
    return o;
}

static hy_status check_options(const hy_scene_options* o) {
    if (o->cookie != HY_DEF_COOKIE)
        return hy_fail(HY_ERR_BAD_DEF, "scene options not initialised with hy_scene_options_default()");
    if (o->threads < 0 || o->threads > 256)
        return hy_fail(HY_ERR_INVALID_ARG, "scene options: threads must be in [0, 256], got %d", o->threads);
    if (o->collisions < -1 || o->collisions > 1)
        return hy_fail(HY_ERR_INVALID_ARG, "scene options: collisions must be -1, 0 or 1, got %d", o->collisions);
    if (o->parameters && strlen(o->parameters) > 4096)
        return hy_fail(HY_ERR_INVALID_ARG, "scene options: parameters longer than 4096 characters");
    if (o->strict < 0 || o->strict > 1)
        return hy_fail(HY_ERR_INVALID_ARG, "scene options: strict must be 0 or 1, got %d", o->strict);
    return HY_OK;
}

/* The strict load: objects that intersect or lie closer than their contact
 * distance in the initial state are refused, and the world goes again. */
static hy_status strict_check(const char* name, hy_world** out) {
    char msg[1024];
    int64_t n = 0;
    hy_status s = hy_overlap_report(*out, HY_OVERLAP_CLEARANCE, 4, msg, sizeof msg, &n);
    if (!s && n > 0) s = hy_fail(HY_ERR_OVERLAP, "%s: objects overlap in the initial state: %s", name, msg);
    if (s) {
        hy_world_destroy(*out);
        *out = NULL;
    }
    return s;
}

static hy_status load(const char* json, size_t length, const char* name, const char* base,
                      const hy_scene_options* options, hy_world** out) {
    hy_scene_options defaults = hy_scene_options_default();
    const hy_scene_options* opt = options ? options : &defaults;
    hy_status s = check_options(opt);
    if (s) return s;

    ctx* c = calloc(1, sizeof *c);
    if (!c) return hy_fail(HY_ERR_NOMEM, "%s: out of memory", name);
    c->file = name;
    c->src = (const unsigned char*)json;
    c->len = length;
    snprintf(c->base, sizeof c->base, "%s", base);

    /* Parse. cJSON reports where it stopped; trailing text after the value is
     * also an error (cJSON alone would accept "{} junk"). */
    const char* end = NULL;
    cJSON* root = cJSON_ParseWithLengthOpts(json, length, &end, 0);
    size_t stop = end && end >= json && (size_t)(end - json) <= length ? (size_t)(end - json) : length;
    if (root) {
        size_t p = stop;
        while (p < length && (unsigned char)json[p] <= 32) p++;
        if (p < length) {
            int line, col;
            hy_json_line_col(c->src, length, p, &line, &col);
            s = hy_fail(HY_ERR_PARSE, "%s:%d:%d: malformed JSON: unexpected text after the top-level value", name, line,
                        col);
        }
    } else {
        int line, col;
        size_t comma = hy_json_trailing_comma(c->src, length);
        if (comma < length && comma <= stop) {
            size_t k = comma + 1;
            while (json[k] != '}' && json[k] != ']') k++;
            hy_json_line_col(c->src, length, comma, &line, &col);
            s = hy_fail(HY_ERR_PARSE, "%s:%d:%d: malformed JSON: a comma before '%c' (JSON allows no trailing comma)",
                        name, line, col, json[k]);
        } else if (hy_json_truncated(c->src, length)) {
            hy_json_line_col(c->src, length, length, &line, &col);
            s = hy_fail(HY_ERR_PARSE, "%s:%d:%d: malformed JSON: unexpected end of input (truncated file?)", name,
                        line, col);
        } else {
            char near[24];
            size_t k = 0;
            for (; k + 1 < sizeof near && stop + k < length && json[stop + k] != '\n'; k++) {
                unsigned char ch = (unsigned char)json[stop + k];
                near[k] = (ch >= 32 && ch < 127) ? (char)ch : '?';
            }
            near[k] = '\0';
            hy_json_line_col(c->src, length, stop, &line, &col);
            s = hy_fail(HY_ERR_PARSE, "%s:%d:%d: malformed JSON near \"%s\"", name, line, col, near);
        }
    }

    plan p;
    memset(&p, 0, sizeof p);
    if (!s) {
        c->root = root;
        s = check(c, &p, opt);
    }
    if (!s) s = build(c, &p, out);
    if (!s && opt->strict) s = strict_check(name, out);
    plan_free(&p);
    cJSON_Delete(root);
    free(c);
    return s;
}

/* Directory part of a path ("" when it has none). */
static void dir_of(const char* path, char* out, size_t n) {
    const char* slash = strrchr(path, '/');
    if (!slash) {
        out[0] = '\0';
        return;
    }
    size_t k = (size_t)(slash - path);
    if (k == 0) k = 1; /* "/x.json" -> "/" */
    if (k >= n) k = n - 1;
    memcpy(out, path, k);
    out[k] = '\0';
}

HY_API hy_status hy_scene_load_string(const char* json, size_t length, const char* name,
                                      const hy_scene_options* options, hy_world** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_scene_load_string: out is NULL");
    *out = NULL;
    if (!json) return hy_fail(HY_ERR_INVALID_ARG, "hy_scene_load_string: json is NULL");
    if (!name) name = "<string>";
    if (length > MAX_FILE_BYTES)
        return hy_fail(HY_ERR_PARSE, "%s: scene is %zu bytes, at most %d allowed", name, length, MAX_FILE_BYTES);
    char base[4096];
    dir_of(name, base, sizeof base);
    return load(json, length, name, base, options, out);
}

HY_API hy_status hy_scene_load(const char* path, const hy_scene_options* options, hy_world** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_scene_load: out is NULL");
    *out = NULL;
    if (!path) return hy_fail(HY_ERR_INVALID_ARG, "hy_scene_load: path is NULL");
    struct stat st;
    if (stat(path, &st) != 0) return hy_fail(HY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    if (!S_ISREG(st.st_mode)) return hy_fail(HY_ERR_IO, "%s: not a regular file", path);
    if (st.st_size > MAX_FILE_BYTES)
        return hy_fail(HY_ERR_PARSE, "%s: scene is %lld bytes, at most %d allowed", path, (long long)st.st_size,
                       MAX_FILE_BYTES);
    FILE* f = fopen(path, "rb");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    size_t cap = (size_t)st.st_size + 1, n = 0;
    char* buf = malloc(cap);
    if (!buf) {
        fclose(f);
        return hy_fail(HY_ERR_NOMEM, "%s: out of memory reading the scene", path);
    }
    n = fread(buf, 1, cap - 1, f);
    int err = ferror(f);
    fclose(f);
    if (err) {
        free(buf);
        return hy_fail(HY_ERR_IO, "%s: read error", path);
    }
    buf[n] = '\0';
    char base[4096];
    dir_of(path, base, sizeof base);
    hy_status s = load(buf, n, path, base, options, out);
    free(buf);
    return s;
}
