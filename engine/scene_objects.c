/* The scene loader's phase 1 for what a scene holds (engine/scene.c runs
 * it): materials, meshes (generated or loaded), transforms, arrays, pins,
 * and the object kinds cloth, body, obstacle and fracture, each checked
 * into the plan (engine/scene_plan.h); the volumetric solids are in
 * engine/scene_solids.c. */
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
#include "core/alloc.h"
#include "core/error.h"
#include "core/hd.h"
#include "core/mesh.h"
#include "hyphys/hyphys.h"
#include "engine/scene_plan.h"
#include "engine/scene_shared.h"

/* ------------------------------------------------------------ materials */

/* Read material fields of `obj` into m (keys already checked). */
static hy_status read_material(ctx* c, const cJSON* obj, material* m) {
    for (int i = 0; i < M_COUNT; i++) {
        if (!get(obj, material_fields[i])) continue;
        hy_status s = field_num(c, obj, material_fields[i], material_ranges[i], &m->v[i]);
        if (s) return s;
        m->has |= 1u << i;
    }
    return HY_OK;
}

static int name_cmp(const void* a, const void* b) {
    return strcmp(((const material*)a)->name, ((const material*)b)->name);
}

hy_status hy_scene_check_materials(ctx* c, plan* p, const cJSON* mats) {
    size_t m0 = push(c, "materials");
    hy_status s = check_object(c, mats);
    int n = s ? 0 : cJSON_GetArraySize(mats);
    if (!s && n > MAX_MATERIALS) s = fail(c, mats, HY_ERR_PARSE, " has %d entries, at most %d allowed", n, MAX_MATERIALS);
    if (!s && n > 0 && !(p->materials = calloc((size_t)n, sizeof *p->materials)))
        s = fail(c, mats, HY_ERR_NOMEM, ": out of memory");
    for (const cJSON* it = s ? NULL : mats->child; it; it = it->next) {
        material* m = &p->materials[p->material_count++];
        m->name = it->string ? it->string : "";
        size_t m1 = push_key(c, m->name);
        s = check_object(c, it);
        if (!s) s = check_fields(c, it, material_fields);
        if (!s) s = read_material(c, it, m);
        pop(c, m1);
        if (s) break;
    }
    /* Names must be unique: sort a copy and compare neighbours (n log n, as
     * a file may hold many). */
    if (!s && p->material_count > 1) {
        material* sorted = malloc(sizeof *sorted * (size_t)p->material_count);
        if (!sorted) {
            s = fail(c, mats, HY_ERR_NOMEM, ": out of memory");
        } else {
            memcpy(sorted, p->materials, sizeof *sorted * (size_t)p->material_count);
            qsort(sorted, (size_t)p->material_count, sizeof *sorted, name_cmp);
            for (int32_t i = 1; i < p->material_count && !s; i++)
                if (strcmp(sorted[i].name, sorted[i - 1].name) == 0) {
                    const cJSON* dup = NULL;
                    for (const cJSON* it = mats->child; it; it = it->next)
                        if (it->string && strcmp(it->string, sorted[i].name) == 0) dup = it;
                    size_t m1 = push_key(c, sorted[i].name);
                    s = fail(c, dup, HY_ERR_PARSE, ": material defined twice");
                    pop(c, m1);
                }
            free(sorted);
        }
    }
    pop(c, m0);
    return s;
}

static const material* find_material(const plan* p, const char* name) {
    for (int32_t i = 0; i < p->material_count; i++)
        if (strcmp(p->materials[i].name, name) == 0) return &p->materials[i];
    return NULL;
}

static hy_status unknown_material(ctx* c, const plan* p, const cJSON* at, const char* name) {
    char list[256], buf[48];
    size_t n = 0;
    list[0] = '\0';
    for (int32_t i = 0; i < p->material_count && n < sizeof list; i++)
        n += (size_t)snprintf(list + n, sizeof list - n, "%s%s", i ? ", " : "", clip(p->materials[i].name, buf, sizeof buf));
    return fail(c, at, HY_ERR_PARSE, ": unknown material \"%s\" (defined: %s)", clip(name, buf, sizeof buf),
                p->material_count ? list : "none");
}

/* "material": "name" | {inline fields, optional "base": "name"}. */
hy_status scene_resolve_material(ctx* c, const plan* p, const cJSON* obj, material* out) {
    memset(out, 0, sizeof *out);
    const cJSON* it = get(obj, "material");
    if (!it) return HY_OK;
    size_t m = push(c, ".material");
    hy_status s = HY_OK;
    const char* base = NULL;
    if (cJSON_IsString(it)) {
        base = it->valuestring;
        if (!find_material(p, base)) s = unknown_material(c, p, it, base);
    } else {
        char d[80];
        if (!cJSON_IsObject(it))
            s = fail(c, it, HY_ERR_PARSE, " must be a material name or an object, got %s", describe(it, d, sizeof d));
        if (!s) s = check_fields(c, it, inline_material_fields);
        if (!s) s = field_string(c, it, "base", &base);
        if (!s && base && !find_material(p, base)) {
            size_t m1 = push(c, ".base");
            s = unknown_material(c, p, get(it, "base"), base);
            pop(c, m1);
        }
    }
    if (!s && base) *out = *find_material(p, base);
    if (!s && cJSON_IsObject(it)) s = read_material(c, it, out);
    pop(c, m);
    return s;
}

/* ------------------------------------------------------------ meshes */

static const char* const generator_names[] = {"grid",  "uv_sphere", "icosphere", "box",
                                              "cone",  "torus",     "bowl",      NULL};
static const char* const generator_fields[][7] = {
    {"generator", "vertices", "size", NULL},
    {"generator", "radius", "slices", "stacks", NULL},
    {"generator", "radius", "subdivisions", NULL},
    {"generator", "half_extents", "subdivisions", NULL},
    {"generator", "radius", "height", "slices", NULL},
    {"generator", "major_radius", "minor_radius", "major_segments", "minor_segments", NULL},
    {"generator", "radius", "slices", "stacks", NULL},
};

static hy_status too_big(ctx* c, const cJSON* at, int64_t nt) {
    return fail(c, at, HY_ERR_PARSE, ": would make %lld triangles, at most %d allowed per mesh", (long long)nt,
                MAX_MESH_TRIANGLES);
}

/* A generator spec: defaults for every parameter, each range checked here so
 * that the message names the field and line. */
static hy_status make_generated(ctx* c, const cJSON* spec, hy_mesh** out) {
    const char* gen = NULL;
    hy_status s = field_string(c, spec, "generator", &gen);
    if (s) return s;
    int g = 0;
    while (generator_names[g] && strcmp(generator_names[g], gen) != 0) g++;
    if (!generator_names[g]) {
        char buf[48];
        size_t m = push(c, ".generator");
        s = fail(c, get(spec, "generator"), HY_ERR_PARSE,
                 ": unknown generator \"%s\" (expected one of: grid, uv_sphere, icosphere, box, cone, torus, bowl)",
                 clip(gen, buf, sizeof buf));
        pop(c, m);
        return s;
    }
    s = check_fields(c, spec, generator_fields[g]);
    if (s) return s;
    const int BIG = 1 << 16;
    double r = 0.5;
    int64_t nt = 0;
    switch (g) {
    case 0: { /* grid */
        int nv[2] = {32, 32};
        double size[2] = {1.0, 1.0};
        if (!s) s = field_ivec(c, spec, "vertices", 2, 2, BIG, nv);
        if (!s) s = field_vec(c, spec, "size", 2, R_POS, size);
        nt = 2 * (int64_t)(nv[0] - 1) * (nv[1] - 1);
        if (!s && nt > MAX_MESH_TRIANGLES) s = too_big(c, spec, nt);
        if (!s) s = hy_mesh_grid(nv[0], nv[1], size[0], size[1], out);
        break;
    }
    case 1:   /* uv_sphere */
    case 6: { /* bowl */
        int slices = 32, stacks = g == 1 ? 16 : 8;
        if (!s) s = field_num(c, spec, "radius", R_POS, &r);
        if (!s) s = field_int(c, spec, "slices", 3, BIG, &slices);
        if (!s) s = field_int(c, spec, "stacks", g == 1 ? 2 : 1, BIG, &stacks);
        nt = 2 * (int64_t)slices * stacks;
        if (!s && nt > MAX_MESH_TRIANGLES) s = too_big(c, spec, nt);
        if (!s) s = g == 1 ? hy_mesh_uv_sphere(r, slices, stacks, out) : hy_mesh_bowl(r, slices, stacks, out);
        break;
    }
    case 2: { /* icosphere: 20 * 4^n triangles */
        int sub = 2;
        if (!s) s = field_num(c, spec, "radius", R_POS, &r);
        if (!s) s = field_int(c, spec, "subdivisions", 0, 9, &sub);
        nt = (int64_t)20 << (2 * sub);
        if (!s && nt > MAX_MESH_TRIANGLES) s = too_big(c, spec, nt);
        if (!s) s = hy_mesh_icosphere(r, sub, out);
        break;
    }
    case 3: { /* box: 12 n^2 triangles */
        double h[3] = {0.5, 0.5, 0.5};
        int sub = 1;
        if (!s) s = field_vec(c, spec, "half_extents", 3, R_POS, h);
        if (!s) s = field_int(c, spec, "subdivisions", 1, 1024, &sub);
        nt = 12 * (int64_t)sub * sub;
        if (!s && nt > MAX_MESH_TRIANGLES) s = too_big(c, spec, nt);
        if (!s) s = hy_mesh_box(h[0], h[1], h[2], sub, out);
        break;
    }
    case 4: { /* cone */
        double height = 1.0;
        int slices = 32;
        if (!s) s = field_num(c, spec, "radius", R_POS, &r);
        if (!s) s = field_num(c, spec, "height", R_POS, &height);
        if (!s) s = field_int(c, spec, "slices", 3, MAX_MESH_TRIANGLES / 2, &slices);
        if (!s) s = hy_mesh_cone(r, height, slices, out);
        break;
    }
    case 5: { /* torus */
        double major = 1.0, minor = 0.25;
        int ms = 48, ns = 16;
        if (!s) s = field_num(c, spec, "major_radius", R_POS, &major);
        if (!s) s = field_num(c, spec, "minor_radius", R_POS, &minor);
        if (!s && !(minor < major)) {
            size_t m = push(c, ".minor_radius");
            s = fail(c, get(spec, "minor_radius") ? get(spec, "minor_radius") : spec, HY_ERR_PARSE,
                     " must be < major_radius (%g), got %g", major, minor);
            pop(c, m);
        }
        if (!s) s = field_int(c, spec, "major_segments", 3, BIG, &ms);
        if (!s) s = field_int(c, spec, "minor_segments", 3, BIG, &ns);
        nt = 2 * (int64_t)ms * ns;
        if (!s && nt > MAX_MESH_TRIANGLES) s = too_big(c, spec, nt);
        if (!s) s = hy_mesh_torus(major, minor, ms, ns, out);
        break;
    }
    }
    /* The generator re-checks its arguments; anything it still refuses is
     * bad input all the same. */
    if (s == HY_ERR_INVALID_ARG) return wrap(c, spec, HY_ERR_PARSE);
    if (s == HY_ERR_NOMEM) return wrap(c, spec, s);
    return s;
}

/* Join base directory and a relative path. */
hy_status scene_resolve_path(ctx* c, const cJSON* at, const char* rel, char* out, size_t n) {
    int k = (rel[0] == '/' || !c->base[0]) ? snprintf(out, n, "%s", rel) : snprintf(out, n, "%s/%s", c->base, rel);
    if (k < 0 || (size_t)k >= n) return fail(c, at, HY_ERR_PARSE, ": path too long");
    return HY_OK;
}

static hy_status make_from_file(ctx* c, const cJSON* spec, hy_mesh** out) {
    static const char* const fields[] = {"file", NULL};
    hy_status s = check_fields(c, spec, fields);
    const char* rel = NULL;
    if (!s) s = field_string(c, spec, "file", &rel);
    if (s) return s;
    size_t m = push(c, ".file");
    const cJSON* at = get(spec, "file");
    char full[4352], buf[48];
    struct stat st;
    if (!rel[0]) s = fail(c, at, HY_ERR_PARSE, " is empty");
    if (!s) s = scene_resolve_path(c, at, rel, full, sizeof full);
    /* Refuse anything but a regular file: a FIFO or /dev/zero would never end. */
    if (!s && stat(full, &st) != 0)
        s = fail(c, at, HY_ERR_IO, ": cannot open mesh file \"%s\" (%s): %s", clip(rel, buf, sizeof buf), full,
                 strerror(errno));
    if (!s && !S_ISREG(st.st_mode))
        s = fail(c, at, HY_ERR_IO, ": mesh file \"%s\" (%s) is not a regular file", clip(rel, buf, sizeof buf), full);
    if (!s) {
        s = hy_mesh_load_obj(full, out);
        if (s) s = wrap(c, at, s == HY_ERR_INVALID_ARG ? HY_ERR_PARSE : s);
    }
    if (!s && (*out)->triangle_count > MAX_MESH_TRIANGLES) {
        s = too_big(c, at, (*out)->triangle_count);
        hy_mesh_destroy(*out);
        *out = NULL;
    }
    pop(c, m);
    return s;
}

/* One mesh spec -> a new plan mesh, scaled. */
static hy_status make_mesh(ctx* c, plan* p, const cJSON* spec, const double scale[3], int32_t* out) {
    hy_status s = check_object(c, spec);
    if (s) return s;
    int has_file = get(spec, "file") != NULL, has_gen = get(spec, "generator") != NULL;
    if (has_file == has_gen)
        return fail(c, spec, HY_ERR_PARSE, " needs exactly one of \"file\" or \"generator\"");
    hy_mesh* m = NULL;
    s = has_file ? make_from_file(c, spec, &m) : make_generated(c, spec, &m);
    if (s) return s;
    for (int32_t i = 0; i < m->vertex_count; i++)
        for (int k = 0; k < 3; k++) m->positions[3 * i + k] *= scale[k];
    s = hy_mesh_view_validate(hy_mesh_get_view(m), "mesh");
    if (s) {
        hy_mesh_destroy(m);
        return wrap(c, spec, HY_ERR_PARSE);
    }
    return add_mesh(c, p, spec, m, out);
}

/* ------------------------------------------------------------ transforms */

hy_status scene_check_transform(ctx* c, const cJSON* obj, int allow_scale, xform* x) {
    static const char* const fields[] = {"position", "rotation", "scale", NULL};
    static const char* const rot_fields[] = {"axis", "degrees", "quaternion", NULL};
    memset(x, 0, sizeof *x);
    x->q.w = 1.0;
    x->scale[0] = x->scale[1] = x->scale[2] = 1.0;
    const cJSON* t = get(obj, "transform");
    if (!t) return HY_OK;
    size_t m = push(c, ".transform");
    hy_status s = check_object(c, t);
    if (!s) s = check_fields(c, t, fields);
    if (!s) s = field_vec(c, t, "position", 3, R_ANY, x->pos);
    const cJSON* r = s ? NULL : get(t, "rotation");
    if (r) {
        size_t m1 = push(c, ".rotation");
        s = check_object(c, r);
        if (!s) s = check_fields(c, r, rot_fields);
        if (!s && get(r, "quaternion")) {
            double q[4] = {1, 0, 0, 0};
            if (get(r, "axis") || get(r, "degrees"))
                s = fail(c, r, HY_ERR_PARSE, " takes either \"quaternion\" or \"axis\" and \"degrees\", not both");
            if (!s) s = field_vec(c, r, "quaternion", 4, R_ANY, q);
            double n = sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
            if (!s && !(n > 1e-12 && isfinite(n))) {
                size_t m2 = push(c, ".quaternion");
                s = fail(c, get(r, "quaternion"), HY_ERR_PARSE, " must be non-zero (w, x, y, z)");
                pop(c, m2);
            }
            if (!s) {
                hy_quat qq = {q[0] / n, q[1] / n, q[2] / n, q[3] / n};
                x->q = qq;
            }
        } else if (!s) {
            double axis[3] = {0, 1, 0}, deg = 0.0;
            if (!s) s = require(c, r, "axis");
            if (!s) s = require(c, r, "degrees");
            if (!s) s = field_vec(c, r, "axis", 3, R_ANY, axis);
            if (!s) s = field_num(c, r, "degrees", R_ANY, &deg);
            double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
            if (!s && !(n > 1e-12 && isfinite(n))) {
                size_t m2 = push(c, ".axis");
                s = fail(c, get(r, "axis"), HY_ERR_PARSE, " must be a non-zero vector");
                pop(c, m2);
            }
            if (!s) {
                double a = deg * (M_PI / 180.0);
                x->q = quat_from_rotvec(v3(axis[0] / n * a, axis[1] / n * a, axis[2] / n * a));
            }
        }
        pop(c, m1);
    }
    const cJSON* sc = s ? NULL : get(t, "scale");
    if (sc) {
        size_t m1 = push(c, ".scale");
        if (!allow_scale)
            s = fail(c, sc, HY_ERR_PARSE, " is not supported here (give the size instead)");
        else if (cJSON_IsNumber(sc) || cJSON_IsString(sc)) {
            s = check_num(c, sc, R_POS, &x->scale[0]);
            x->scale[1] = x->scale[2] = x->scale[0];
        } else {
            s = check_vec(c, sc, 3, R_POS, x->scale);
        }
        pop(c, m1);
    }
    pop(c, m);
    return s;
}

/* ------------------------------------------------------------ arrays */

hy_status scene_check_array(ctx* c, const cJSON* obj, lattice* a) {
    static const char* const fields[] = {"count", "spacing", "jitter", "seed", "random_rotation", NULL};
    memset(a, 0, sizeof *a);
    a->count[0] = a->count[1] = a->count[2] = 1;
    a->seed = 1;
    const cJSON* it = get(obj, "array");
    if (!it) return HY_OK;
    size_t m = push(c, ".array");
    hy_status s = check_object(c, it);
    if (!s) s = check_fields(c, it, fields);
    if (!s) s = require(c, it, "count");
    if (!s) s = field_ivec(c, it, "count", 3, 1, MAX_INSTANCES, a->count);
    if (!s && (int64_t)a->count[0] * a->count[1] * a->count[2] > MAX_INSTANCES) {
        size_t m1 = push(c, ".count");
        s = fail(c, get(it, "count"), HY_ERR_PARSE, " makes %lld objects, at most %d allowed",
                 (long long)a->count[0] * a->count[1] * a->count[2], MAX_INSTANCES);
        pop(c, m1);
    }
    if (!s) s = field_vec(c, it, "spacing", 3, R_NONNEG, a->spacing);
    if (!s) s = field_num(c, it, "jitter", R_NONNEG, &a->jitter);
    if (!s) s = field_int(c, it, "seed", 0, INT32_MAX, &a->seed);
    if (!s) s = field_bool(c, it, "random_rotation", &a->random_rotation);
    pop(c, m);
    return s;
}

/* splitmix64: a fixed, portable sequence, so a seed means the same scene on
 * every machine (rand() would not). */
static uint64_t rng_next(uint64_t* state) {
    uint64_t z = (*state += UINT64_C(0x9E3779B97F4A7C15));
    z = (z ^ (z >> 30)) * UINT64_C(0xBF58476D1CE4E5B9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94D049BB133111EB);
    return z ^ (z >> 31);
}
static double rng_unit(uint64_t* state) { return (double)(rng_next(state) >> 11) * (1.0 / 9007199254740992.0); }

/* Uniformly distributed rotation (Shoemake). */
static hy_quat rng_quat(uint64_t* state) {
    double u1 = rng_unit(state), u2 = 2.0 * M_PI * rng_unit(state), u3 = 2.0 * M_PI * rng_unit(state);
    double a = sqrt(1.0 - u1), b = sqrt(u1);
    hy_quat q = {a * sin(u2), a * cos(u2), b * sin(u3), b * cos(u3)};
    return q;
}

/* ------------------------------------------------------------ pins */

/* Named vertex sets, found by geometry in the object's own frame so they work
 * for any cloth mesh lying in the x-z plane (the grid generator's plane). */
/* Instance i of lattice a around transform x: its position and turn (the
 * jitter and random turns drawn from *rng in instance order). */
hy_quat scene_lattice_place(const lattice* a, const xform* x, int64_t i, uint64_t* rng, double pos[3]) {
    int64_t ijk[3] = {i % a->count[0], (i / a->count[0]) % a->count[1], i / ((int64_t)a->count[0] * a->count[1])};
    for (int k = 0; k < 3; k++) {
        pos[k] = x->pos[k] + ((double)ijk[k] - 0.5 * (a->count[k] - 1)) * a->spacing[k];
        if (a->jitter > 0.0) pos[k] += a->jitter * (2.0 * rng_unit(rng) - 1.0);
    }
    return a->random_rotation ? quat_mul(rng_quat(rng), x->q) : x->q;
}

/* Instance i of `count` laid out from objects[index]: named <name>_<i>
 * (or <name> alone), on `mesh` with `pins`, its `tris` triangles counted
 * against the scene's limit. NULL with *s set on failure. */
inst* scene_lattice_inst(ctx* c, plan* p, const cJSON* obj, int index, const char* name, int64_t i, int64_t count,
                          int32_t mesh, int32_t pins, int64_t tris, hy_status* s) {
    inst* in = add_inst(c, p, obj, s);
    if (!in) return NULL;
    in->object = index;
    in->mesh = mesh;
    in->pins = pins;
    if (count > 1) snprintf(in->name, sizeof in->name, "%.47s_%d", name, (int)i);
    else snprintf(in->name, sizeof in->name, "%.47s", name);
    p->triangles += tris;
    if (p->triangles > MAX_SCENE_TRIANGLES) {
        *s = too_many(c, obj, p->triangles);
        return NULL;
    }
    return in;
}

/* The end of a "pin" check (path mark mk): the set into the plan (room
 * reserved) when s is HY_OK, else freed. */
hy_status scene_keep_pinset(ctx* c, plan* p, size_t mk, pinset ps, hy_status s, int32_t* out) {
    pop(c, mk);
    if (s) {
        free(ps.idx);
        return s;
    }
    p->pins[p->pin_count] = ps;
    *out = p->pin_count++;
    return HY_OK;
}

/* "pin" given as an array of vertex indices, each in [0, nv), into ps. */
hy_status scene_pin_indices(ctx* c, const cJSON* it, int32_t nv, pinset* ps) {
    int n = cJSON_GetArraySize(it);
    ps->idx = malloc(sizeof(int32_t) * (size_t)(n ? n : 1));
    if (!ps->idx) return fail(c, it, HY_ERR_NOMEM, ": out of memory");
    for (const cJSON* e = it->child; e; e = e->next) {
        size_t m1 = push(c, "[%d]", ps->n);
        int64_t v = 0;
        hy_status s = check_int(c, e, INT32_MIN, INT32_MAX, &v);
        if (!s && (v < 0 || v >= nv)) s = fail(c, e, HY_ERR_PARSE, " = %lld is not a vertex index in [0, %d)", (long long)v, nv);
        pop(c, m1);
        if (s) return s;
        ps->idx[ps->n++] = (int32_t)v;
    }
    return HY_OK;
}

static hy_status named_pins(const hy_mesh* m, const char* set, pinset* out, int* known) {
    *known = 1;
    out->idx = NULL;
    out->n = 0;
    if (strcmp(set, "none") == 0) return HY_OK;
    double lo[2] = {INFINITY, INFINITY}, hi[2] = {-INFINITY, -INFINITY};
    for (int32_t i = 0; i < m->vertex_count; i++) {
        double x = m->positions[3 * i], z = m->positions[3 * i + 2];
        lo[0] = fmin(lo[0], x), hi[0] = fmax(hi[0], x), lo[1] = fmin(lo[1], z), hi[1] = fmax(hi[1], z);
    }
    if (strcmp(set, "corners") == 0 || strcmp(set, "two_corners") == 0) {
        double want[4][2] = {{lo[0], lo[1]}, {hi[0], lo[1]}, {lo[0], hi[1]}, {hi[0], hi[1]}};
        int n = strcmp(set, "corners") == 0 ? 4 : 2;
        out->idx = malloc(sizeof(int32_t) * 4);
        if (!out->idx) return HY_ERR_NOMEM;
        for (int k = 0; k < n; k++) {
            int32_t best = 0;
            double bd = INFINITY;
            for (int32_t i = 0; i < m->vertex_count; i++) {
                double dx = m->positions[3 * i] - want[k][0], dz = m->positions[3 * i + 2] - want[k][1];
                double d = dx * dx + dz * dz;
                if (d < bd) bd = d, best = i;
            }
            int dup = 0;
            for (int j = 0; j < out->n; j++) dup |= out->idx[j] == best;
            if (!dup) out->idx[out->n++] = best;
        }
        return HY_OK;
    }
    if (strcmp(set, "edge") == 0) {
        double eps = 1e-9 * (1.0 + hi[1] - lo[1]);
        out->idx = malloc(sizeof(int32_t) * (size_t)m->vertex_count);
        if (!out->idx) return HY_ERR_NOMEM;
        for (int32_t i = 0; i < m->vertex_count; i++)
            if (m->positions[3 * i + 2] <= lo[1] + eps) out->idx[out->n++] = i;
        return HY_OK;
    }
    *known = 0;
    return HY_OK;
}

/* "pin": [indices] | "corners" | "two_corners" | "edge" | "none", resolved
 * against mesh m into a new plan pin set. */
static hy_status check_pins(ctx* c, plan* p, const cJSON* obj, const hy_mesh* m, int32_t* out) {
    *out = -1;
    const cJSON* it = get(obj, "pin");
    if (!it) return HY_OK;
    if (!grow((void**)&p->pins, &p->pin_cap, p->pin_count + 1, sizeof *p->pins))
        return fail(c, it, HY_ERR_NOMEM, ": out of memory");
    pinset ps = {NULL, 0};
    size_t mk = push(c, ".pin");
    hy_status s = HY_OK;
    char d[80];
    if (cJSON_IsString(it)) {
        int known = 0;
        if (named_pins(m, it->valuestring, &ps, &known) != HY_OK)
            s = fail(c, it, HY_ERR_NOMEM, ": out of memory");
        else if (!known)
            s = fail(c, it, HY_ERR_PARSE,
                     ": unknown vertex set \"%s\" (expected an array of vertex indices or one of: corners, "
                     "two_corners, edge, none)",
                     clip(it->valuestring, d, sizeof d));
    } else if (cJSON_IsArray(it)) {
        s = scene_pin_indices(c, it, m->vertex_count, &ps);
    } else {
        s = fail(c, it, HY_ERR_PARSE, " must be an array of vertex indices or a set name, got %s",
                 describe(it, d, sizeof d));
    }
    return scene_keep_pinset(c, p, mk, ps, s, out);
}

/* ------------------------------------------------------------ objects */

static const char* const type_names[] = {"cloth", "body", "obstacle", "fracture", "fem", "massspring", NULL};
static const char* const type_fields[][14] = {
    {"type", "name", "material", "mesh", "meshes", "transform", "array", "pin", NULL},
    {"type", "name", "material", "mesh", "meshes", "transform", "array", "velocity", "angular_velocity", "gravity",
     NULL},
    {"type", "name", "material", "mesh", "meshes", "transform", "array", "motion", NULL},
    {"type", "name", "material", "transform", "size", "pieces", "subdivisions", "gap", "bond_strength", "velocity",
     "angular_velocity", "gravity", NULL},
    {"type", "name", "material", "mesh", "transform", "array", "pin", NULL},
    {"type", "name", "material", "mesh", "transform", "array", "pin", NULL},
};

typedef struct bodyvel {
    double v[3], w[3];
    int gravity;
} bodyvel;

static hy_status check_body_motion(ctx* c, const cJSON* obj, bodyvel* bv) {
    memset(bv, 0, sizeof *bv);
    bv->gravity = 1;
    hy_status s = field_vec(c, obj, "velocity", 3, R_ANY, bv->v);
    if (!s) s = field_vec(c, obj, "angular_velocity", 3, R_ANY, bv->w);
    if (!s) s = field_bool(c, obj, "gravity", &bv->gravity);
    return s;
}

static hy_status check_motion(ctx* c, const cJSON* obj, hy_motion* mo, double pivot[3], int* has_pivot) {
    static const char* const fields[] = {"translate", "rotate", NULL};
    static const char* const rot_fields[] = {"axis", "rate", "pivot", NULL};
    memset(mo, 0, sizeof *mo);
    *has_pivot = 0;
    const cJSON* it = get(obj, "motion");
    if (!it) return HY_OK;
    size_t m = push(c, ".motion");
    hy_status s = check_object(c, it);
    if (!s) s = check_fields(c, it, fields);
    if (!s) s = field_vec(c, it, "translate", 3, R_ANY, mo->linear_velocity);
    const cJSON* r = s ? NULL : get(it, "rotate");
    if (r) {
        size_t m1 = push(c, ".rotate");
        double axis[3] = {0, 1, 0}, rate = 0.0;
        s = check_object(c, r);
        if (!s) s = check_fields(c, r, rot_fields);
        if (!s) s = require(c, r, "axis");
        if (!s) s = require(c, r, "rate");
        if (!s) s = field_vec(c, r, "axis", 3, R_ANY, axis);
        if (!s) s = field_num(c, r, "rate", R_ANY, &rate);
        if (!s && get(r, "pivot")) {
            s = field_vec(c, r, "pivot", 3, R_ANY, pivot);
            *has_pivot = 1;
        }
        double n = sqrt(axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]);
        if (!s && !(n > 1e-12 && isfinite(n))) {
            size_t m2 = push(c, ".axis");
            s = fail(c, get(r, "axis"), HY_ERR_PARSE, " must be a non-zero vector");
            pop(c, m2);
        }
        if (!s)
            for (int k = 0; k < 3; k++) mo->angular_velocity[k] = axis[k] / n * rate;
        pop(c, m1);
    }
    pop(c, m);
    return s;
}

hy_status scene_check_name(ctx* c, const cJSON* obj, int index, const char* type, char* out) {
    const char* name = NULL;
    hy_status s = field_string(c, obj, "name", &name);
    if (s) return s;
    if (!name) {
        snprintf(out, 64, "%s%d", type, index);
        return HY_OK;
    }
    size_t n = strlen(name);
    if (n == 0 || n > MAX_NAME) {
        size_t m = push(c, ".name");
        s = fail(c, get(obj, "name"), HY_ERR_PARSE, " must have 1 to %d characters, got %zu", MAX_NAME, n);
        pop(c, m);
        return s;
    }
    snprintf(out, 64, "%s", name);
    return HY_OK;
}

void scene_set_pose(double pos[3], double q[4], const double p[3], hy_quat r) {
    memcpy(pos, p, sizeof(double) * 3);
    q[0] = r.w, q[1] = r.x, q[2] = r.y, q[3] = r.z;
}

/* cloth / body / obstacle, possibly arrayed. */
static hy_status check_meshed(ctx* c, plan* p, const cJSON* obj, int index, int type, const char* name,
                              const material* mat, const xform* x) {
    hy_status s = HY_OK;
    const cJSON* one = get(obj, "mesh");
    const cJSON* many = get(obj, "meshes");
    if (!one && !many) return fail(c, obj, HY_ERR_PARSE, " needs \"mesh\" (or \"meshes\")");
    if (one && many) return fail(c, obj, HY_ERR_PARSE, " takes \"mesh\" or \"meshes\", not both");

    /* Meshes (and, for cloth, pins resolved against each). */
    int32_t mesh_idx[MAX_MESHES_PER_OBJECT], pin_idx[MAX_MESHES_PER_OBJECT];
    int nm = 0;
    if (one) {
        size_t m = push(c, ".mesh");
        s = make_mesh(c, p, one, x->scale, &mesh_idx[nm++]);
        pop(c, m);
    } else {
        size_t m = push(c, ".meshes");
        char d[80];
        int n = cJSON_GetArraySize(many);
        if (!cJSON_IsArray(many) || n < 1 || n > MAX_MESHES_PER_OBJECT)
            s = fail(c, many, HY_ERR_PARSE, " must be an array of 1 to %d meshes, got %s", MAX_MESHES_PER_OBJECT,
                     cJSON_IsArray(many) ? (snprintf(d, sizeof d, "%d", n), d) : describe(many, d, sizeof d));
        for (const cJSON* e = s ? NULL : many->child; e; e = e->next) {
            size_t m1 = push(c, "[%d]", nm);
            s = make_mesh(c, p, e, x->scale, &mesh_idx[nm++]);
            pop(c, m1);
            if (s) break;
        }
        pop(c, m);
    }
    for (int k = 0; !s && k < nm; k++) {
        pin_idx[k] = -1;
        if (type == T_CLOTH) s = check_pins(c, p, obj, p->meshes[mesh_idx[k]], &pin_idx[k]);
    }
    if (s) return s;

    /* Per-type settings shared by every instance. */
    bodyvel bv;
    hy_motion mo;
    double pivot[3] = {0, 0, 0};
    int has_pivot = 0;
    if (type == T_BODY) s = check_body_motion(c, obj, &bv);
    if (type == T_OBSTACLE) s = check_motion(c, obj, &mo, pivot, &has_pivot);
    lattice a;
    if (!s) s = scene_check_array(c, obj, &a);
    if (s) return s;

    int64_t count = (int64_t)a.count[0] * a.count[1] * a.count[2];
    uint64_t rng = (uint64_t)a.seed;
    for (int64_t i = 0; i < count; i++) {
        int32_t mesh = mesh_idx[i % nm];
        inst* in = scene_lattice_inst(c, p, obj, index, name, i, count, mesh, pin_idx[i % nm], p->meshes[mesh]->triangle_count, &s);
        if (!in) return s;
        double pos[3];
        hy_quat q = scene_lattice_place(&a, x, i, &rng, pos);
        if (type == T_CLOTH) {
            in->kind = HY_OBJECT_CLOTH;
            hy_cloth_def* d = &in->d.cloth;
            *d = hy_cloth_def_default();
            scene_set_pose(d->position, d->orientation, pos, q);
            double* dst[M_COUNT] = {&d->density,     &d->stretch_stiffness, &d->shear_stiffness,
                                    &d->bend_stiffness, &d->damping,      &d->air_damping,
                                    &d->thickness,   &d->friction,          NULL};
            for (int k = 0; k < M_COUNT; k++)
                if (dst[k] && (mat->has & (1u << k))) *dst[k] = mat->v[k];
        } else if (type == T_BODY) {
            in->kind = HY_OBJECT_BODY;
            hy_body_def* d = &in->d.body;
            *d = hy_body_def_default();
            scene_set_pose(d->position, d->orientation, pos, q);
            memcpy(d->linear_velocity, bv.v, sizeof bv.v);
            memcpy(d->angular_velocity, bv.w, sizeof bv.w);
            d->gravity = bv.gravity;
            if (mat->has & (1u << M_DENSITY)) d->density = mat->v[M_DENSITY];
            if (mat->has & (1u << M_RESTITUTION)) d->restitution = mat->v[M_RESTITUTION];
            if (mat->has & (1u << M_FRICTION)) d->friction = mat->v[M_FRICTION];
            if (mat->has & (1u << M_THICKNESS)) d->thickness = mat->v[M_THICKNESS];
        } else {
            in->kind = HY_OBJECT_OBSTACLE;
            hy_obstacle_def* d = &in->d.obstacle;
            *d = hy_obstacle_def_default();
            scene_set_pose(d->position, d->orientation, pos, q);
            d->motion = mo;
            memcpy(d->pivot, has_pivot ? pivot : pos, sizeof d->pivot);
            if (mat->has & (1u << M_FRICTION)) d->friction = mat->v[M_FRICTION];
            if (mat->has & (1u << M_THICKNESS)) d->thickness = mat->v[M_THICKNESS];
        }
    }
    return HY_OK;
}

/* A box of size[] cut into pieces[] equal boxes, each a rigid body, with a
 * bond at the centre of every face two pieces share. */
static hy_status check_fracture(ctx* c, plan* p, const cJSON* obj, int index, const char* name,
                                const material* mat, const xform* x) {
    double size[3] = {1, 1, 1}, gap = 0.0, strength = hy_bond_def_default().strength;
    int pieces[3] = {2, 2, 2}, sub = 1;
    hy_status s = field_vec(c, obj, "size", 3, R_POS, size);
    if (!s) s = field_ivec(c, obj, "pieces", 3, 1, MAX_INSTANCES, pieces);
    if (!s && (int64_t)pieces[0] * pieces[1] * pieces[2] > MAX_INSTANCES) {
        size_t m = push(c, ".pieces");
        s = fail(c, get(obj, "pieces"), HY_ERR_PARSE, " makes %lld pieces, at most %d allowed",
                 (long long)pieces[0] * pieces[1] * pieces[2], MAX_INSTANCES);
        pop(c, m);
    }
    if (!s) s = field_int(c, obj, "subdivisions", 1, 1024, &sub);
    if (!s && 12 * (int64_t)sub * sub > MAX_MESH_TRIANGLES) s = too_big(c, obj, 12 * (int64_t)sub * sub);
    if (!s) s = field_num(c, obj, "gap", R_NONNEG, &gap);
    if (!s) s = field_num(c, obj, "bond_strength", R_POS, &strength);
    bodyvel bv;
    if (!s) s = check_body_motion(c, obj, &bv);
    if (s) return s;
    double piece[3], half[3];
    for (int k = 0; k < 3; k++) {
        piece[k] = size[k] / pieces[k];
        half[k] = 0.5 * (piece[k] - gap);
        if (!(half[k] > 0.0) || !isfinite(half[k])) {
            size_t m = push(c, ".gap");
            s = fail(c, get(obj, "gap") ? get(obj, "gap") : obj, HY_ERR_PARSE,
                     " (%g) must be smaller than the piece size (%g along axis %d)", gap, piece[k], k);
            pop(c, m);
            return s;
        }
    }
    hy_mesh* box = NULL;
    s = hy_mesh_box(half[0], half[1], half[2], sub, &box);
    if (s) return wrap(c, obj, s == HY_ERR_INVALID_ARG ? HY_ERR_PARSE : s);
    int32_t mesh = -1; /* set by add_mesh (gcc cannot see it through the inlined helper) */
    s = add_mesh(c, p, obj, box, &mesh);
    if (s) return s;

    int32_t first = p->inst_count;
    int64_t n = (int64_t)pieces[0] * pieces[1] * pieces[2];
    hy_v3 w = v3_load(bv.w), origin = v3_load(x->pos);
    for (int64_t i = 0; i < n; i++) {
        inst* in = add_inst(c, p, obj, &s);
        if (!in) return s;
        int64_t ijk[3] = {i % pieces[0], (i / pieces[0]) % pieces[1], i / ((int64_t)pieces[0] * pieces[1])};
        hy_v3 local = v3(-0.5 * size[0] + (ijk[0] + 0.5) * piece[0], -0.5 * size[1] + (ijk[1] + 0.5) * piece[1],
                         -0.5 * size[2] + (ijk[2] + 0.5) * piece[2]);
        hy_v3 r = quat_rotate(x->q, local);
        hy_v3 pos = v3_add(origin, r);
        in->kind = HY_OBJECT_BODY;
        in->object = index;
        in->mesh = mesh;
        snprintf(in->name, sizeof in->name, "%.47s_%d", name, (int)i);
        p->triangles += box->triangle_count;
        if (p->triangles > MAX_SCENE_TRIANGLES) return too_many(c, obj, p->triangles);
        hy_body_def* d = &in->d.body;
        *d = hy_body_def_default();
        double at[3];
        v3_store(at, pos);
        scene_set_pose(d->position, d->orientation, at, x->q);
        /* The pieces start as one rigid object: v + w x r at each centre. */
        v3_store(d->linear_velocity, v3_add(v3_load(bv.v), v3_cross(w, r)));
        v3_store(d->angular_velocity, w);
        d->gravity = bv.gravity;
        if (mat->has & (1u << M_DENSITY)) d->density = mat->v[M_DENSITY];
        if (mat->has & (1u << M_RESTITUTION)) d->restitution = mat->v[M_RESTITUTION];
        if (mat->has & (1u << M_FRICTION)) d->friction = mat->v[M_FRICTION];
        if (mat->has & (1u << M_THICKNESS)) d->thickness = mat->v[M_THICKNESS];
    }
    /* Bonds to the +x, +y, +z neighbour, anchored midway between centres. */
    for (int64_t i = 0; i < n; i++) {
        int64_t ijk[3] = {i % pieces[0], (i / pieces[0]) % pieces[1], i / ((int64_t)pieces[0] * pieces[1])};
        int64_t stride[3] = {1, pieces[0], (int64_t)pieces[0] * pieces[1]};
        for (int k = 0; k < 3; k++) {
            if (ijk[k] + 1 >= pieces[k]) continue;
            if (!grow((void**)&p->bonds, &p->bond_cap, p->bond_count + 1, sizeof *p->bonds))
                return fail(c, obj, HY_ERR_NOMEM, ": out of memory");
            bondspec* b = &p->bonds[p->bond_count++];
            b->a = first + (int32_t)i;
            b->b = first + (int32_t)(i + stride[k]);
            const double* pa = p->insts[b->a].d.body.position;
            const double* pb = p->insts[b->b].d.body.position;
            for (int j = 0; j < 3; j++) b->anchor[j] = 0.5 * (pa[j] + pb[j]);
            b->strength = strength;
        }
    }
    return HY_OK;
}

hy_status hy_scene_check_object(ctx* c, plan* p, const cJSON* obj, int index) {
    hy_status s = check_object(c, obj);
    if (!s) s = require(c, obj, "type");
    const char* type = NULL;
    if (!s) s = field_string(c, obj, "type", &type);
    if (s) return s;
    int t = 0;
    while (type_names[t] && strcmp(type_names[t], type) != 0) t++;
    if (!type_names[t]) {
        char buf[48];
        size_t m = push(c, ".type");
        s = fail(c, get(obj, "type"), HY_ERR_PARSE,
                 ": unknown object type \"%s\" (expected one of: cloth, body, obstacle, fracture, fem, massspring)",
                 clip(type, buf, sizeof buf));
        pop(c, m);
        return s;
    }
    s = check_fields(c, obj, type_fields[t]);
    char name[64];
    material mat;
    xform x;
    if (!s) s = scene_check_name(c, obj, index, type, name);
    if (!s) s = scene_resolve_material(c, p, obj, &mat);
    if (!s) s = scene_check_transform(c, obj, t != T_FRACTURE, &x);
    if (s) return s;
    if (t == T_FRACTURE) return check_fracture(c, p, obj, index, name, &mat, &x);
    if (t == T_FEM || t == T_MASS_SPRING) return hy_scene_check_solid(c, p, obj, index, t, name, &mat, &x);
    return check_meshed(c, p, obj, index, t, name, &mat, &x);
}
