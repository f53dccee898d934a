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

/* A FEM or mass-spring object: a tet mesh in its own frame (positive
 * elements, core/tetmesh.h), placed by position and orientation; its rest
 * shape is the placed mesh. Material in SI units; fixed vertices (may
 * repeat) stay where they are placed. */
typedef struct hy_solid_def {
    hy_object_kind kind; /* HY_OBJECT_FEM or HY_OBJECT_MASS_SPRING */
    const double* positions; /* 3 * vertex_count, m */
    int32_t vertex_count;
    const int32_t* tets; /* 4 * tet_count */
    int32_t tet_count;
    double position[3];
    double orientation[4];     /* w, x, y, z */
    double young;              /* FEM: Pa */
    double poisson;            /* FEM: [0, 0.5) */
    double spring_stiffness;   /* mass-spring: N/m per edge */
    double density;            /* kg/m^3 */
    double damping_mass;       /* 1/s: force -alpha M v */
    double damping_stiffness;  /* s: FEM Rayleigh beta; mass-spring: spring damping */
    double thickness, friction; /* collision */
    const int32_t* fixed;
    int32_t fixed_count;
} hy_solid_def;

/* Defaults: a soft rubber-like FEM object (young 1e5, poisson 0.3,
 * density 1000, damping_stiffness 0.01, spring_stiffness 1e3, thickness
 * 0.002 m, friction 0.3); no mesh. */
hy_solid_def hy_solid_def_default(void);

/* Add a solid: the boundary triangles of its tet mesh become its
 * collision surface. HY_ERR_INVALID_ARG naming the element, vertex or
 * setting at fault (degenerate or inverted element, bad index, material
 * out of range), HY_ERR_NOMEM. */
hy_status hy_solid_add(hy_world* w, const hy_solid_def* d, hy_object_id* out);

/* A solid's implicit operations and model (*model), for the coupled step
 * of solids joined by interactions (engine/links.h). */
const hy_implicit_ops* hy_solid_ops(const hy_object* o, void** model);
/* The coupled step has integrated o in this substep: its own integrate
 * leaves x1, v1 as they are, once. */
void hy_solid_mark_integrated(hy_object* o);

#endif
