/* The scene loader's phase 1 for volumetric solids ("fem" and
 * "massspring" objects): their tetrahedral meshes (generated or loaded),
 * pins and instances, checked into the plan (engine/scene_plan.h). */
#include <cjson/cJSON.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "engine/check.h"
#include "engine/scene_plan.h"
#include "engine/scene_shared.h"
#include "hyphys/hyphys.h"
#include "io/tetmesh_load.h"

/* A solid's "mesh": {"generator": "block", "size": [x, y, z], "cells":
 * [nx, ny, nz]} (a box centred on the origin, core/tetmesh.h's split), or
 * {"file": "NAME.node"} (NAME.ele beside it) or {"file": "NAME.msh"};
 * scaled, into a new plan tet mesh; *tris gets its boundary's size. */
static hy_status make_tetmesh(ctx* c, plan* p, const cJSON* spec, const double scale[3], int32_t* out, int32_t* tris) {
    static const char* const gen_fields[] = {"generator", "size", "cells", NULL};
    static const char* const file_fields[] = {"file", NULL};
    hy_status s = check_object(c, spec);
    if (s) return s;
    int has_file = get(spec, "file") != NULL, has_gen = get(spec, "generator") != NULL;
    if (has_file == has_gen) return fail(c, spec, HY_ERR_PARSE, " needs exactly one of \"file\" or \"generator\"");
    hy_tetmesh* m = NULL;
    char buf[48];
    if (has_gen) {
        const char* gen = NULL;
        double size[3] = {1, 1, 1};
        int cells[3] = {4, 4, 4};
        s = check_fields(c, spec, gen_fields);
        if (!s) s = field_string(c, spec, "generator", &gen);
        if (!s && strcmp(gen, "block") != 0) {
            size_t m1 = push(c, ".generator");
            s = fail(c, get(spec, "generator"), HY_ERR_PARSE, ": unknown tet mesh generator \"%s\" (expected: block)",
                     clip(gen, buf, sizeof buf));
            pop(c, m1);
        }
        if (!s) s = field_vec(c, spec, "size", 3, R_POS, size);
        if (!s) s = field_ivec(c, spec, "cells", 3, 1, 4096, cells);
        if (!s && 6 * (int64_t)cells[0] * cells[1] * cells[2] > MAX_MESH_TRIANGLES)
            s = fail(c, spec, HY_ERR_PARSE, " makes %lld tetrahedra, at most %d allowed",
                     6 * (long long)cells[0] * cells[1] * cells[2], MAX_MESH_TRIANGLES);
        if (s) return s;
        double origin[3] = {-0.5 * size[0], -0.5 * size[1], -0.5 * size[2]};
        s = hy_tetmesh_box(origin, size, cells[0], cells[1], cells[2], &m);
        if (s) return wrap(c, spec, s == HY_ERR_INVALID_ARG ? HY_ERR_PARSE : s);
    } else {
        const char* rel = NULL;
        s = check_fields(c, spec, file_fields);
        if (!s) s = field_string(c, spec, "file", &rel);
        if (s) return s;
        size_t mk = push(c, ".file");
        const cJSON* at = get(spec, "file");
        char full[4352], ele[4360];
        size_t n = strlen(rel);
        int node = n > 5 && strcmp(rel + n - 5, ".node") == 0, msh = n > 4 && strcmp(rel + n - 4, ".msh") == 0;
        if (!node && !msh)
            s = fail(c, at, HY_ERR_PARSE, ": \"%s\" is neither a TetGen .node nor a Gmsh .msh file",
                     clip(rel, buf, sizeof buf));
        if (!s) s = scene_resolve_path(c, at, rel, full, sizeof full);
        if (!s && node) {
            snprintf(ele, sizeof ele, "%.*s.ele", (int)(strlen(full) - 5), full);
            s = hy_tetmesh_load_tetgen(full, ele, &m);
        } else if (!s) {
            s = hy_tetmesh_load_gmsh(full, &m);
        }
        if (s && m == NULL && s != HY_ERR_PARSE && s != HY_ERR_IO && s != HY_ERR_NOMEM) s = HY_ERR_PARSE;
        if (s) s = wrap(c, at, s);
        if (!s && m->tet_count > MAX_MESH_TRIANGLES)
            s = fail(c, at, HY_ERR_PARSE, " has %d tetrahedra, at most %d allowed", m->tet_count, MAX_MESH_TRIANGLES);
        pop(c, mk);
        if (s) {
            hy_tetmesh_destroy(m);
            return s;
        }
    }
    for (int32_t i = 0; i < m->vertex_count; i++)
        for (int k = 0; k < 3; k++) m->positions[3 * i + k] *= scale[k];
    int32_t* tri = NULL;
    s = hy_tetmesh_boundary(m->tets, m->tet_count, m->vertex_count, &tri, tris);
    hy_mem_free(tri);
    if (!s && !grow((void**)&p->tetmeshes, &p->tetmesh_cap, p->tetmesh_count + 1, sizeof *p->tetmeshes))
        s = hy_fail(HY_ERR_NOMEM, "out of memory");
    if (s) {
        hy_tetmesh_destroy(m);
        return wrap(c, spec, s == HY_ERR_INVALID_ARG ? HY_ERR_PARSE : s);
    }
    p->tetmeshes[p->tetmesh_count] = m;
    *out = p->tetmesh_count++;
    return HY_OK;
}

/* A solid's "pin": [vertex indices] or {"x_below": a, "x_above": b, ...}
 * (any of x, y, z with _below / _above, in the mesh's frame after scale:
 * a vertex is held when it meets any of them), into a new plan pin set. */
static hy_status check_solid_pins(ctx* c, plan* p, const cJSON* obj, const hy_tetmesh* m, int32_t* out) {
    static const char* const fields[] = {"x_below", "x_above", "y_below", "y_above", "z_below", "z_above", NULL};
    *out = -1;
    const cJSON* it = get(obj, "pin");
    if (!it) return HY_OK;
    if (!grow((void**)&p->pins, &p->pin_cap, p->pin_count + 1, sizeof *p->pins))
        return fail(c, it, HY_ERR_NOMEM, ": out of memory");
    size_t mk = push(c, ".pin");
    pinset ps = {NULL, 0};
    char d[80];
    hy_status s = HY_OK;
    if (cJSON_IsArray(it)) {
        s = scene_pin_indices(c, it, m->vertex_count, &ps);
    } else if (!cJSON_IsObject(it)) {
        s = fail(c, it, HY_ERR_PARSE, " must be an array of vertex indices or an object of bounds (x_below, ...), got %s",
                 describe(it, d, sizeof d));
    } else {
        s = check_fields(c, it, fields);
        if (!s && !(ps.idx = malloc(sizeof(int32_t) * (size_t)(m->vertex_count ? m->vertex_count : 1))))
            s = fail(c, it, HY_ERR_NOMEM, ": out of memory");
        double bound[6] = {0};
        int has[6] = {0};
        for (int k = 0; k < 6 && !s; k++) {
            has[k] = get(it, fields[k]) != NULL;
            s = field_num(c, it, fields[k], R_ANY, &bound[k]);
        }
        for (int32_t i = 0; !s && i < m->vertex_count; i++) {
            int held = 0;
            for (int k = 0; k < 6; k++) {
                double x = m->positions[3 * i + k / 2];
                if (has[k] && (k % 2 == 0 ? x <= bound[k] : x >= bound[k])) held = 1;
            }
            if (held) ps.idx[ps.n++] = i;
        }
        if (!s && ps.n == 0) s = fail(c, it, HY_ERR_PARSE, " holds no vertex of the mesh");
    }
    return scene_keep_pinset(c, p, mk, ps, s, out);
}

/* fem / massspring, possibly arrayed: every instance shares the mesh. */
hy_status hy_scene_check_solid(ctx* c, plan* p, const cJSON* obj, int index, int type, const char* name,
                             const material* mat, const xform* x) {
    const cJSON* spec = get(obj, "mesh");
    if (!spec) return fail(c, obj, HY_ERR_PARSE, " needs \"mesh\"");
    int32_t mesh = -1, tris = 0, pins = -1;
    size_t m = push(c, ".mesh");
    hy_status s = make_tetmesh(c, p, spec, x->scale, &mesh, &tris);
    pop(c, m);
    if (!s) s = check_solid_pins(c, p, obj, p->tetmeshes[mesh], &pins);
    lattice a;
    if (!s) s = scene_check_array(c, obj, &a);
    if (s) return s;
    int64_t count = (int64_t)a.count[0] * a.count[1] * a.count[2];
    uint64_t rng = (uint64_t)a.seed;
    for (int64_t i = 0; i < count; i++) {
        inst* in = scene_lattice_inst(c, p, obj, index, name, i, count, mesh, pins, tris, &s);
        if (!in) return s;
        double pos[3];
        hy_quat q = scene_lattice_place(&a, x, i, &rng, pos);
        in->kind = type == T_FEM ? HY_OBJECT_FEM : HY_OBJECT_MASS_SPRING;
        hy_solid_def* d = &in->d.solid;
        *d = hy_solid_def_default();
        d->kind = in->kind;
        scene_set_pose(d->position, d->orientation, pos, q);
        double* dst[M_COUNT] = {[M_DENSITY] = &d->density,     [M_DAMPING] = &d->damping_stiffness,
                                [M_THICKNESS] = &d->thickness, [M_FRICTION] = &d->friction,
                                [M_YOUNG] = &d->young,         [M_POISSON] = &d->poisson,
                                [M_SPRING] = &d->spring_stiffness, [M_MASS_DAMPING] = &d->damping_mass};
        for (int k = 0; k < M_COUNT; k++)
            if (dst[k] && (mat->has & (1u << k))) *dst[k] = mat->v[k];
    }
    return HY_OK;
}

