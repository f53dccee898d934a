/* Volumetric solids in the world: FEM (solvers/fem.h) and mass-spring
 * (solvers/massspring.h) objects on tet meshes, two entries of the kinds
 * table (engine/kinds.h). Both step through their implicit operations
 * (solvers/implicit.h); collision sees the boundary triangles of the mesh,
 * every vertex moving on its own with its lumped mass (held vertices
 * infinitely heavy), so the impulse response keeps them apart from
 * everything else. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "core/tetmesh.h"
#include "engine/kinds.h"
#include "engine/links.h"
#include "solvers/batch_hd.h"
#include "solvers/batch_step.h"
#include "solvers/cg.h"
#include "solvers/fem.h"
#include "solvers/massspring.h"

/* What a solid keeps besides the world's model and state: its solver's
 * model and the step's scratch. */
typedef struct solid_state {
    const hy_implicit_ops* ops;
    void* model;
    int32_t tet_count;
    double* rhs;
    double* dv;
    hy_cg_workspace* cg;
    double* normal;    /* 3 nv: the vertices the next step holds (hy_implicit_held), 0 0 0 for free ones */
    int32_t held_count; /* of them */
    double* held_scratch;
    uint8_t* let_go;    /* nv: holds the step's solve let go (hy_implicit_held), not held again next step */
} solid_state;

/* A vertex within this many contact thicknesses (the two objects'
 * together) of an obstacle's face it touched in the last step is held
 * against it in the next step's solve. */
#define HELD_GAP_SCALE 2.0
/* ... and inside the face up to this margin in barycentric terms. */
#define HELD_OVER 0.05

/* The unit normal of face t of an obstacle (positions xb) towards point p,
 * when p lies over the face (HELD_OVER) within gap of its plane; 0
 * otherwise. */
static int face_normal(const double* xb, const int32_t* t, const double* p, double gap, double n[3]) {
    double m[3], dist = 0.0, u = 0.0, v = 0.0;
    if (!hy_face_frame(xb + 3 * t[0], xb + 3 * t[1], xb + 3 * t[2], p, m, &dist, &u, &v) || !(dist < gap)) return 0;
    if (u < -HELD_OVER || v < -HELD_OVER || 1.0 - u - v < -HELD_OVER) return 0;
    memcpy(n, m, sizeof m);
    return 1;
}

static int is_held(const double* n) { return n[0] != 0.0 || n[1] != 0.0 || n[2] != 0.0; }

/* After the response: each solid's vertices that the step's contacts put
 * on a static obstacle's face (vertex-face contacts, the vertex the
 * solid's), with the face's normal towards them, for the next step's solve
 * to hold (hy_implicit_held); held vertices of the model are left out. One
 * pass over the contacts in their canonical order, the first face of a
 * vertex kept: the same for any thread count. */
void hy_solid_contacts_record(hy_world* w) {
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (!o->alive || !(o->ops->traits & HY_KIND_SOLID) || !o->model.kind_model) continue;
        solid_state* s = o->model.kind_model;
        if (s->held_count) memset(s->normal, 0, 3 * (size_t)o->model.nv * sizeof *s->normal);
        s->held_count = 0;
    }
    const hy_scene_view* v = &w->view;
    for (int64_t c = 0; c < w->last_contact_count && v->vertex_object; c++) {
        const hy_contact* ct = &w->last_contacts[c];
        if (ct->type != HY_CONTACT_VF) continue;
        int32_t sa = v->vertex_object[ct->v[0]], sb = v->vertex_object[ct->v[1]];
        hy_object *o = &w->objects[sa], *ob = &w->objects[sb];
        if (sa == sb || !(o->ops->traits & HY_KIND_SOLID) || ob->model.kind != HY_OBJECT_OBSTACLE ||
            (v->flags && (v->flags[sb] & HY_VIEW_MOVING)))
            continue;
        solid_state* s = o->model.kind_model;
        int32_t i = ct->v[0] - v->offset[sa];
        int32_t t[3] = {ct->v[1] - v->offset[sb], ct->v[2] - v->offset[sb], ct->v[3] - v->offset[sb]};
        double* n = s->normal + 3 * i;
        if (s->ops->fixed(s->model)[i] || s->let_go[i] || is_held(n)) continue;
        double gap = HELD_GAP_SCALE * (o->model.thickness + ob->model.thickness);
        s->held_count += face_normal(ob->state->x1, t, o->state->x1 + 3 * i, gap, n);
    }
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        if (!o->alive || !(o->ops->traits & HY_KIND_SOLID) || !o->model.kind_model) continue;
        solid_state* s = o->model.kind_model;
        memset(s->let_go, 0, (size_t)o->model.nv);
    }
}

static hy_status solid_integrate(const hy_world* w, hy_object* o, hy_pool* pool, double dt, hy_step_stats* st) {
    solid_state* s = o->model.kind_model;
    int32_t it = 0;
    double rel = 0.0;
    hy_object_state* x = o->state;
    hy_implicit_held held = {s->normal, s->held_scratch, 0, s->let_go};
    int hold = hy_solid_held(o, w) != NULL;
    hy_status r = hy_implicit_step(s->ops, s->model, pool, x->x, x->v, dt, w->def.gravity, NULL,
                                   w->def.cg_max_iterations, w->def.cg_tolerance, x->x1, x->v1, s->rhs, s->dv, s->cg,
                                   hold ? &held : NULL, &it, &rel, s->ops->kind);
    if (r) {
        hy_error_prefix("object '%s': ", o->name);
        return r;
    }
    hy_stats_add_solve(st, it, rel, !(rel <= w->def.cg_tolerance));
    return HY_OK;
}

static void solid_view_masses(const hy_object* o, double* mass, double* inv_mass) {
    const solid_state* s = o->model.kind_model;
    const double* m = s->ops->masses(s->model);
    const uint8_t* fixed = s->ops->fixed(s->model);
    for (int32_t i = 0; i < o->model.nv; i++) {
        mass[i] = m[i];
        inv_mass[i] = fixed[i] ? 0.0 : 1.0 / m[i];
    }
}

const hy_implicit_ops* hy_solid_ops(const hy_object* o, void** model) {
    const solid_state* s = o->model.kind_model;
    *model = s->model;
    return s->ops;
}

uint8_t* hy_solid_let_go(const hy_object* o) {
    const solid_state* s = o->model.kind_model;
    return s->let_go;
}

const double* hy_solid_held(const hy_object* o, const hy_world* w) {
    const solid_state* s = o->model.kind_model;
    return s->held_count > 0 && w->def.collisions ? s->normal : NULL;
}

int hy_solid_batch_object(const hy_world* w, hy_object* o, hy_batch_object* out) {
    solid_state* s = o->model.kind_model;
    if (!s || hy_solid_held(o, w)) return 0;
    int32_t items = o->model.kind == HY_OBJECT_FEM ? s->tet_count : hy_ms_spring_count(s->model);
    if (items >= HY_BATCH_MAX_ITEMS) return 0;
    hy_object_state* x = o->state;
    *out = (hy_batch_object){s->ops, s->model, x->x, x->v, x->x1, x->v1, s->rhs, s->dv, s->cg, 0, 0.0};
    return 1;
}

static int32_t solid_tet_count(const hy_object* o) { return ((const solid_state*)o->model.kind_model)->tet_count; }

static void solid_destroy(hy_object* o) {
    solid_state* s = o->model.kind_model;
    if (!s) return;
    if (o->model.kind == HY_OBJECT_FEM) hy_fem_model_destroy(s->model);
    else hy_ms_model_destroy(s->model);
    free(s->rhs);
    free(s->dv);
    free(s->normal);
    free(s->held_scratch);
    free(s->let_go);
    hy_cg_workspace_destroy(s->cg);
    free(s);
    o->model.kind_model = NULL;
}

/* In a snapshot after the vertices: the held vertices of the next step,
 * their count then index and normal each. */
static void solid_snap_save(const hy_object* o, hy_snap_cursor* c) {
    const solid_state* s = o->model.kind_model;
    int32_t count = 0;
    for (int32_t i = 0; i < o->model.nv && s->held_count; i++) count += is_held(s->normal + 3 * i);
    hy_snap_put(c, &count, sizeof count);
    for (int32_t i = 0; i < o->model.nv && count; i++) {
        if (!is_held(s->normal + 3 * i)) continue;
        hy_snap_put(c, &i, sizeof i);
        hy_snap_put(c, s->normal + 3 * i, 3 * sizeof(double));
    }
}

static int solid_snap_check(const hy_object* o, hy_snap_cursor* c) {
    int32_t count = 0;
    if (!hy_snap_get(c, &count, sizeof count) || count < 0 || count > o->model.nv) return 0;
    for (int32_t k = 0; k < count; k++) {
        int32_t i = -1;
        if (!hy_snap_get(c, &i, sizeof i) || i < 0 || i >= o->model.nv || !hy_snap_skip(c, 3 * sizeof(double)))
            return 0;
    }
    return 1;
}

static void solid_snap_load(hy_object* o, hy_snap_cursor* c) {
    solid_state* s = o->model.kind_model;
    memset(s->normal, 0, 3 * (size_t)o->model.nv * sizeof *s->normal);
    hy_snap_get(c, &s->held_count, sizeof s->held_count);
    for (int32_t k = 0; k < s->held_count; k++) {
        int32_t i = 0;
        hy_snap_get(c, &i, sizeof i);
        hy_snap_get(c, s->normal + 3 * i, 3 * sizeof(double));
    }
}

static hy_status solid_set_device(hy_object* o, int device) {
    solid_state* s = o->model.kind_model;
    return o->model.kind == HY_OBJECT_FEM ? hy_fem_set_device(s->model, device) : hy_ms_set_device(s->model, device);
}

static int64_t solid_gpu_bytes(const hy_object* o) {
    const solid_state* s = o->model.kind_model;
    return o->model.kind == HY_OBJECT_FEM ? hy_fem_gpu_bytes(s->model) : hy_ms_gpu_bytes_of(s->model);
}

/* FEM and mass-spring solids share every operation; only the kind differs. */
#define SOLID_KIND(K, NAME)                                                                                      \
    {.kind = (K),                                                                                                \
     .name = (NAME),                                                                                             \
     .motion = HY_MOVES_FREE,                                                                                    \
     .traits = HY_KIND_SOLID,                                                                                    \
     .order = HY_ORDER_SOLID,                                                                                    \
     .integrate = solid_integrate,                                                                               \
     .set_device = solid_set_device,                                                                             \
     .gpu_bytes = solid_gpu_bytes,                                                                               \
     .view_masses = solid_view_masses,                                                                           \
     .tet_count = solid_tet_count,                                                                               \
     .destroy = solid_destroy,                                                                                   \
     .snap_save = solid_snap_save,                                                                               \
     .snap_check = solid_snap_check,                                                                             \
     .snap_load = solid_snap_load}
const hy_kind_ops hy_kind_fem = SOLID_KIND(HY_OBJECT_FEM, "fem");
const hy_kind_ops hy_kind_mass_spring = SOLID_KIND(HY_OBJECT_MASS_SPRING, "mass-spring");
#undef SOLID_KIND

HY_API hy_solid_def hy_solid_def_default(void) {
    hy_solid_def d;
    memset(&d, 0, sizeof d);
    d.kind = HY_OBJECT_FEM;
    d.orientation[0] = 1.0;
    d.young = 1e5;
    d.poisson = 0.3;
    d.spring_stiffness = 1e3;
    d.density = 1000.0;
    d.damping_stiffness = 0.01;
    d.thickness = 0.002;
    d.friction = 0.3;
    d.cookie = HY_DEF_COOKIE;
    return d;
}

static hy_status check_def(const hy_solid_def* d) {
    if (d->kind != HY_OBJECT_FEM && d->kind != HY_OBJECT_MASS_SPRING)
        return hy_fail(HY_ERR_INVALID_ARG, "solid: kind %d is neither FEM nor mass-spring", (int)d->kind);
    if (!d->positions || !d->tets || d->vertex_count < 1 || d->tet_count < 1)
        return hy_fail(HY_ERR_INVALID_ARG, "solid: empty tet mesh (%d vertices, %d tetrahedra)", d->vertex_count,
                       d->tet_count);
    double q2 = 0.0;
    for (int k = 0; k < 4; k++) q2 += d->orientation[k] * d->orientation[k];
    if (!isfinite(q2) || q2 < 1e-20)
        return hy_fail(HY_ERR_INVALID_ARG, "solid.orientation must be a non-zero finite quaternion");
    for (int k = 0; k < 3; k++)
        if (!isfinite(d->position[k])) return hy_fail(HY_ERR_INVALID_ARG, "solid.position must be finite");
    if (!(d->thickness >= 0.0) || !isfinite(d->thickness) || !(d->friction >= 0.0) || !isfinite(d->friction))
        return hy_fail(HY_ERR_INVALID_ARG, "solid: thickness (%g) and friction (%g) must be >= 0 and finite",
                       d->thickness, d->friction);
    return HY_OK;
}

/* The model of d over the placed rest shape x. */
static hy_status make_model(const hy_solid_def* d, const double* x, solid_state* s) {
    if (d->kind == HY_OBJECT_FEM) {
        hy_fem_params p = {d->young, d->poisson, d->density, d->damping_mass, d->damping_stiffness};
        s->ops = &hy_fem_ops;
        return hy_fem_model_create(x, d->vertex_count, d->tets, d->tet_count, &p, d->fixed, d->fixed_count,
                                   (hy_fem_model**)&s->model);
    }
    hy_ms_params p = {d->spring_stiffness, d->density, d->damping_stiffness, d->damping_mass};
    s->ops = &hy_ms_ops;
    return hy_ms_model_create(x, d->vertex_count, d->tets, d->tet_count, &p, d->fixed, d->fixed_count,
                              (hy_ms_model**)&s->model);
}

HY_API hy_status hy_solid_add(hy_world* w, const hy_solid_def* d, hy_solid_id* out) {
    if (!w || !d || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_solid_add: NULL argument");
    if (d->cookie != HY_DEF_COOKIE)
        return hy_fail(HY_ERR_BAD_DEF, "solid def not initialised with hy_solid_def_default()");
    hy_status st = check_def(d);
    if (st) return st;
    int32_t* tri = NULL;
    int32_t nt = 0;
    st = hy_tetmesh_boundary(d->tets, d->tet_count, d->vertex_count, &tri, &nt);
    if (st) return st;
    hy_mesh_view mv = {d->positions, tri, d->vertex_count, nt};
    hy_object* o = NULL;
    int32_t slot = 0;
    st = hy_world_new_object(w, d->kind, mv, &o, &slot);
    hy_mem_free(tri);
    if (st) return st;
    hy_quat q = quat_normalize((hy_quat){d->orientation[0], d->orientation[1], d->orientation[2], d->orientation[3]});
    hy_v3 p = v3_load(d->position);
    for (int32_t i = 0; i < o->model.nv; i++)
        v3_store(o->state->x + 3 * i, v3_add(p, quat_rotate(q, v3_load(o->model.local + 3 * i))));
    solid_state* s = calloc(1, sizeof *s);
    size_t n3 = 3 * (size_t)o->model.nv;
    if (s) {
        o->model.kind_model = s;
        s->rhs = malloc(sizeof(double) * n3);
        s->dv = malloc(sizeof(double) * n3);
        s->cg = hy_cg_workspace_create((int64_t)n3);
        s->normal = calloc(n3, sizeof(double));
        s->held_scratch = malloc(sizeof(double) * (size_t)hy_implicit_held_scratch_size(o->model.nv));
        s->let_go = calloc((size_t)o->model.nv + 1, 1);
    }
    if (!s || !s->rhs || !s->dv || !s->cg || !s->normal || !s->held_scratch || !s->let_go) {
        hy_object_free(o);
        return hy_fail(HY_ERR_NOMEM, "out of memory for a solid of %d vertices", d->vertex_count);
    }
    s->tet_count = d->tet_count;
    st = make_model(d, o->state->x, s);
    if (st) {
        hy_object_free(o);
        return st;
    }
    o->model.thickness = d->thickness;
    o->model.friction = d->friction;
    o->model.gravity = 1;
    memcpy(o->state->x1, o->state->x, sizeof(double) * n3);
    hy_object_id id = hy_world_commit_object(w, slot, d->kind == HY_OBJECT_FEM ? "fem" : "massspring");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}

/* The solid an id names, or a status naming `what`. */
static hy_status resolve_solid(const hy_world* w, hy_object_id id, const char* what) {
    if (!w) return hy_fail(HY_ERR_INVALID_ARG, "%s: world is NULL", what);
    hy_object* o = hy_world_resolve(w, id);
    if (!o) {
        hy_error_prefix("%s: ", what);
        return HY_ERR_STALE_ID;
    }
    if (o->model.kind != HY_OBJECT_FEM && o->model.kind != HY_OBJECT_MASS_SPRING)
        return hy_fail(HY_ERR_INVALID_ARG, "%s: object '%s' is not a FEM or mass-spring solid", what, o->name);
    return HY_OK;
}

HY_API hy_status hy_object_as_solid(const hy_world* w, hy_object_id id, hy_solid_id* out) {
    hy_status s = resolve_solid(w, id, "hy_object_as_solid");
    if (s) return s;
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_object_as_solid: out is NULL");
    out->index = id.index;
    out->generation = id.generation;
    return HY_OK;
}

HY_API hy_status hy_solid_remove(hy_world* w, hy_solid_id id) {
    hy_status s = resolve_solid(w, hy_solid_object(id), "hy_solid_remove");
    return s ? s : hy_object_remove(w, hy_solid_object(id));
}
