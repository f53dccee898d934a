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
#include "solvers/cg.h"
#include "solvers/fem.h"
#include "solvers/massspring.h"

/* What a solid keeps besides the world's model and state: its solver's
 * model and the step's scratch. */
typedef struct solid_state {
    const hy_implicit_ops* ops;
    void* model;
    int32_t tet_count;
    int coupled; /* integrated by the coupled step this substep */
    double* rhs;
    double* dv;
    hy_cg_workspace* cg;
} solid_state;

static hy_status solid_integrate(const hy_world* w, hy_object* o, hy_pool* pool, double dt, hy_step_stats* st) {
    solid_state* s = o->model.kind_model;
    if (s->coupled) {
        s->coupled = 0;
        return HY_OK;
    }
    int32_t it = 0;
    double rel = 0.0;
    hy_object_state* x = o->state;
    hy_status r = hy_implicit_step(s->ops, s->model, pool, x->x, x->v, dt, w->def.gravity, NULL,
                                   w->def.cg_max_iterations, w->def.cg_tolerance, x->x1, x->v1, s->rhs, s->dv, s->cg,
                                   &it, &rel, s->ops->kind);
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

void hy_solid_mark_integrated(hy_object* o) { ((solid_state*)o->model.kind_model)->coupled = 1; }

static int32_t solid_tet_count(const hy_object* o) { return ((const solid_state*)o->model.kind_model)->tet_count; }

static void solid_destroy(hy_object* o) {
    solid_state* s = o->model.kind_model;
    if (!s) return;
    if (o->model.kind == HY_OBJECT_FEM) hy_fem_model_destroy(s->model);
    else hy_ms_model_destroy(s->model);
    free(s->rhs);
    free(s->dv);
    hy_cg_workspace_destroy(s->cg);
    free(s);
    o->model.kind_model = NULL;
}

const hy_kind_ops hy_kind_fem = {.kind = HY_OBJECT_FEM,
                                 .name = "fem",
                                 .motion = HY_MOVES_FREE,
                                 .traits = HY_KIND_SOLID,
                                 .order = HY_ORDER_SOLID,
                                 .integrate = solid_integrate,
                                 .view_masses = solid_view_masses,
                                 .tet_count = solid_tet_count,
                                 .destroy = solid_destroy};
const hy_kind_ops hy_kind_mass_spring = {.kind = HY_OBJECT_MASS_SPRING,
                                         .name = "mass-spring",
                                         .motion = HY_MOVES_FREE,
                                         .traits = HY_KIND_SOLID,
                                         .order = HY_ORDER_SOLID,
                                         .integrate = solid_integrate,
                                         .view_masses = solid_view_masses,
                                         .tet_count = solid_tet_count,
                                         .destroy = solid_destroy};

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
    }
    if (!s || !s->rhs || !s->dv || !s->cg) {
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
