/* Breakable bonds between rigid bodies (fracture).
 *
 * A bond welds two bodies at an anchor: it removes their relative linear
 * velocity at the anchor and their relative angular velocity, solved with
 * sequential impulses after the bodies are integrated. A bond whose
 * accumulated linear impulse in one step exceeds its strength breaks for
 * good. The anchors' drift apart is corrected on the poses after they are
 * integrated (hy_bonds_project), not by a velocity bias: a bias would add
 * kinetic energy every step it acts, and a fractured solid at rest would
 * creep. Bonds are solved in insertion order, so results are
 * deterministic. */
#ifndef HY_SOLVERS_BONDS_H
#define HY_SOLVERS_BONDS_H

#include <stdint.h>

#include "core/hd.h"
#include "solvers/rigid.h"

typedef struct hy_bond {
    int32_t a, b;      /* object slots */
    hy_v3 ra, rb;      /* anchor relative to each COM, body frame */
    double strength;   /* N*s */
    int broken;
} hy_bond;

typedef struct hy_bond_set {
    hy_bond* bonds;
    double* impulse; /* per-bond scratch: impulse accumulated this step */
    int32_t count, capacity, intact;
    /* blows (hy_bonds_blow): per object slot, the contact impulse received
     * this step from bodies it is not bonded to; bonds by object (CSR over
     * slots, built when the bonds or the slots change) */
    double* blow;
    int32_t* first; /* object_count + 1 offsets into `of` */
    int32_t* of;    /* bond indices, by object */
    int32_t object_count, indexed; /* slots and bonds the index was built for */
} hy_bond_set;

/* Body access for the solver: state and inertia by object slot. */
typedef struct hy_bond_bodies {
    hy_rigid_state* (*state)(void* ctx, int32_t slot);
    const hy_rigid_inertia* (*inertia)(void* ctx, int32_t slot);
    void* ctx;
} hy_bond_bodies;

int hy_bond_set_push(hy_bond_set* s, hy_bond b);
void hy_bond_set_free(hy_bond_set* s);
/* Run `iterations` sweeps over intact bonds on the bodies' velocities;
 * returns bonds broken. */
int32_t hy_bonds_solve(hy_bond_set* s, const hy_bond_bodies* bodies, int32_t iterations);
/* Blows: a contact impulse (N s) between bodies a and b in this step's
 * collision response. Between two bodies an intact bond joins it is
 * compression the solid carries and is ignored; otherwise each body
 * receives it. Returns 0 when the index cannot be allocated. */
int hy_bonds_blow(hy_bond_set* s, int32_t object_count, int32_t a, int32_t b, double impulse);
/* A body knocked by a blow its bonds cannot pass on breaks loose: when the
 * impulse it received from outside, shared over its intact bonds, exceeds a
 * bond's strength, every bond of it breaks (a bond fails on one step's
 * impulse, as in hy_bonds_solve). Clears the blows; returns bonds broken. */
int32_t hy_bonds_break_struck(hy_bond_set* s);

/* Move the bonded bodies' poses (x, q; velocities untouched) so that each
 * intact bond's anchors close `fraction` of their separation, over
 * `iterations` sweeps (nonlinear Gauss-Seidel). */
void hy_bonds_project(const hy_bond_set* s, const hy_bond_bodies* bodies, double fraction, int32_t iterations);

#endif
