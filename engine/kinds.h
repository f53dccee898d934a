/* The per-kind operations table: what the step, the scene view and the
 * object table do with an object of a kind that sits behind it, so that
 * adding such a kind is one new file (its operations and its add function)
 * and one entry in the table (engine/kinds.c). The volumetric solids (FEM
 * and mass-spring, engine/kind_solid.c) are on it; cloth, bodies and
 * obstacles are still handled by the step and the view directly. */
#ifndef HY_ENGINE_KINDS_H
#define HY_ENGINE_KINDS_H

#include <stdint.h>

#include "engine/world.h"
#include "solvers/implicit.h"

typedef struct hy_kind_ops {
    hy_object_kind kind;
    const char* name;      /* for messages: "fem", "mass-spring" */
    hy_view_motion motion; /* how collision sees its vertices move */
    unsigned view_flags;   /* HY_VIEW_* flags it always has */
    /* x1, v1 from x, v over dt (the integrate phase); adds its solver
     * figures to st. Failures name the object. */
    hy_status (*integrate)(hy_world* w, hy_object* o, double dt, hy_step_stats* st);
    /* per vertex: mass (kg) and inverse mass (0 where held) for the view */
    void (*view_masses)(const hy_object* o, double* mass, double* inv_mass);
    int32_t (*tet_count)(const hy_object* o);
    /* free o->kind_state (the object's arrays are the world's) */
    void (*destroy)(hy_object* o);
} hy_kind_ops;

/* The entry of a kind, or NULL for a kind not on the table. */
const hy_kind_ops* hy_kind_ops_of(hy_object_kind kind);

/* The table's entries. */
extern const hy_kind_ops hy_kind_fem, hy_kind_mass_spring;

/* ------------------------------------------------------ volumetric solids */

/* Volumetric solids: hy_solid_def, hy_solid_add and the rest are public
 * (include/hyphys/hyphys.h), in engine/kind_solid.c. */

/* A solid's implicit operations and model (*model), for the coupled step
 * of solids joined by interactions (engine/links.h). */
const hy_implicit_ops* hy_solid_ops(const hy_object* o, void** model);
/* The coupled step has integrated o in this substep: its own integrate
 * leaves x1, v1 as they are, once. */
void hy_solid_mark_integrated(hy_object* o);

#endif
