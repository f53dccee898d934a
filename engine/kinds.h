/* The per-kind operations table: what the step, the scene view, the object
 * table and snapshots do with an object of a kind, so that adding a kind is
 * one new file (its operations and its add function) and one entry in the
 * table (engine/kinds.c). Each kind's file holds what is its own: cloth
 * (engine/kind_cloth.c), rigid bodies with the n-body and fracture pieces
 * (engine/kind_body.c), obstacles, static and scripted
 * (engine/kind_obstacle.c), FEM and mass-spring solids
 * (engine/kind_solid.c).
 *
 * An operation reads the object's model (o->model, fixed after add) and
 * reads and writes its state block (o->state) only, unless it says
 * otherwise: that is what lets the step run one object's operation as a
 * task on the state block (engine/integrate.c). */
#ifndef HY_ENGINE_KINDS_H
#define HY_ENGINE_KINDS_H

#include <math.h>
#include <stddef.h>
#include <stdint.h>

#include "engine/world.h"
#include "solvers/implicit.h"

/* What a kind is, for the parts of the engine that only ask. */
enum {
    HY_KIND_SLEEPS = 1u << 0,   /* may fall asleep (engine/sleep.c) */
    HY_KIND_SCRIPTED = 1u << 1, /* moves as scripted: the response never corrects it */
    HY_KIND_SOLID = 1u << 2     /* a tet mesh: its tetrahedra and particles are counted */
};

/* The integrate phase runs in waves (engine/integrate.c): every object's
 * predict, then the bonds between bodies, then the integrates of each
 * order in turn, lower first; within a wave the objects are independent.
 * A cloth reads the end-of-step positions of the surfaces it rests on, so
 * it comes after them. */
enum { HY_ORDER_RIGID = 0, HY_ORDER_CLOTH = 1, HY_ORDER_SOLID = 2, HY_ORDER_COUNT = 3 };

/* A snapshot cursor (engine/snapshot.c): writes when `out` is set (else
 * only counts), reads from `in`. */
typedef struct hy_snap_cursor {
    unsigned char* out;
    const unsigned char* in;
    size_t at, size;
} hy_snap_cursor;

void hy_snap_put(hy_snap_cursor* c, const void* p, size_t n);
/* 0 when fewer than n bytes are left. */
int hy_snap_get(hy_snap_cursor* c, void* p, size_t n);
int hy_snap_skip(hy_snap_cursor* c, size_t n);

typedef struct hy_kind_ops {
    hy_object_kind kind;
    const char* name;      /* for messages: "cloth", "rigid body" */
    hy_view_motion motion; /* how collision sees its vertices move */
    unsigned view_flags;   /* HY_VIEW_* flags it always has */
    unsigned traits;       /* HY_KIND_* */
    int order;             /* its integrate's wave, HY_ORDER_* */
    /* Optional: its part of the step before the bonds (a body's velocities
     * and pose). */
    hy_status (*predict)(const hy_world* w, hy_object* o, hy_pool* pool, double dt, hy_step_stats* st);
    /* x1, v1 from x, v over dt; adds its solver figures to st. Reads the
     * world's settings (w->pool is not its to use: its solvers run on
     * `pool`); a cloth also reads the state of the surfaces it rests on.
     * Failures name the object. */
    hy_status (*integrate)(const hy_world* w, hy_object* o, hy_pool* pool, double dt, hy_step_stats* st);
    /* Optional (none: never on a GPU): run the model's passes of the
     * following integrates on CUDA GPU `device` (-1: on the CPU), the same
     * bits either way; between steps. HY_ERR_UNSUPPORTED when there is no
     * such GPU (the model stays on the CPU). The integration runtime calls
     * it from a GPU PU's task (engine/integrate.c). */
    hy_status (*set_device)(hy_object* o, int device);
    /* Optional, with set_device: bytes the model's GPU context has moved
     * since it was bound (0 on the CPU), for the runtime's channel counts. */
    int64_t (*gpu_bytes)(const hy_object* o);
    /* Optional (none: the response's x1, v1 taken back as they are): after
     * the response, the substep's end as the kind wants it. */
    void (*after_response)(hy_object* o, double dt);
    /* Optional: the step's commit beyond x, v (a body's pose). */
    void (*commit)(hy_object* o);
    /* Optional: 1 when it cannot move this step (two such never meet);
     * none: never static. */
    int (*is_static)(const hy_object* o);
    /* Optional: 1 when moved by the caller, not by contacts; none: never. */
    int (*is_driven)(const hy_object* o);
    /* Optional: per vertex, mass (kg) and inverse mass (0 where held) for
     * the view; none: zero. */
    void (*view_masses)(const hy_object* o, double* mass, double* inv_mass);
    /* Optional: its per-step part of view v (object slot i) at time t over
     * dt beyond the vertices (poses), and what it takes back of the
     * response's beyond x1, v1. */
    void (*view_begin)(const hy_object* o, int32_t i, double t, double dt, hy_scene_view* v);
    void (*view_end)(hy_object* o, int32_t i, const hy_scene_view* v);
    /* Optional: 0 when none. */
    int32_t (*tet_count)(const hy_object* o);
    /* Optional: free what the kind made (model and state beyond the
     * world's arrays). */
    void (*destroy)(hy_object* o);
    /* Optional (none: x and v are its whole state): the kind's state in a
     * snapshot after the vertices. save writes it (or counts it);
     * check skips it, 0 when damaged or short; prepare makes room before a
     * restore changes anything (HY_ERR_NOMEM); load reads it back. */
    void (*snap_save)(const hy_object* o, hy_snap_cursor* c);
    int (*snap_check)(const hy_object* o, hy_snap_cursor* c);
    hy_status (*snap_prepare)(hy_object* o);
    void (*snap_load)(hy_object* o, hy_snap_cursor* c);
} hy_kind_ops;

/* The entry of a kind, or NULL for a kind not on the table. */
const hy_kind_ops* hy_kind_ops_of(hy_object_kind kind);

/* The table's entries. */
extern const hy_kind_ops hy_kind_cloth, hy_kind_body, hy_kind_obstacle, hy_kind_fem, hy_kind_mass_spring;

/* A static obstacle (no scripted motion) or a sleeping body: two of these
 * cannot meet, so collision detection skips such pairs. */
static inline int hy_object_is_static(const hy_object* o) { return o->ops->is_static && o->ops->is_static(o); }

/* An obstacle or a kinematic body: moved by the caller, not by contacts.
 * Two of these never meet (collision detection skips such pairs). */
static inline int hy_object_is_driven(const hy_object* o) { return o->ops->is_driven && o->ops->is_driven(o); }

static inline int hy_object_has(const hy_object* o, unsigned trait) { return (o->ops->traits & trait) != 0; }

/* Add solver figures to st: CG iterations, the worst relative residual
 * (NaN wins), and the solves that ended short of the tolerance. */
static inline void hy_stats_add_solve(hy_step_stats* st, int32_t iterations, double residual, int32_t capped) {
    st->cg_iterations += iterations;
    if (residual > st->cg_relative_residual || isnan(residual)) st->cg_relative_residual = residual;
    st->cg_capped += capped;
}

/* ------------------------------------------------------ volumetric solids */

/* Volumetric solids: hy_solid_def, hy_solid_add and the rest are public
 * (include/hyphys/hyphys.h), in engine/kind_solid.c. */

/* A solid's implicit operations and model (*model), for the coupled step
 * of solids joined by interactions (engine/links.h). */
const hy_implicit_ops* hy_solid_ops(const hy_object* o, void** model);
/* The vertices the step holds on obstacles (hy_implicit_held's normal, 3
 * per vertex), NULL when none. */
const double* hy_solid_held(const hy_object* o, const hy_world* w);
/* Per vertex, set by the step's solve where a hold pulled: that vertex is
 * not held in the next step (hy_implicit_held.let_go); read and cleared by
 * hy_solid_contacts_record. */
uint8_t* hy_solid_let_go(const hy_object* o);
/* A free solid's step as one object of a batch (solvers/batch_step.h):
 * *out names its model and its step's arrays (state x, v to x1, v1) and
 * 1 is returned, when its step is the plain implicit step a batch makes:
 * no vertex held on an obstacle, and fewer elements (FEM) or springs
 * (mass-spring) than HY_BATCH_MAX_ITEMS. 0 otherwise (step it alone). */
struct hy_batch_object;
int hy_solid_batch_object(const hy_world* w, hy_object* o, struct hy_batch_object* out);
/* After the response: each solid's vertices resting on a static obstacle,
 * which the next step's solve holds against it (engine/kind_solid.c). */
void hy_solid_contacts_record(hy_world* w);

#endif
