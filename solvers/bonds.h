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

#include "engine/hd.h"
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
int32_t hy_bonds_solve(hy_bond_set* s, const hy_bond_bodies* bodies, double dt, int32_t iterations);
/* Move the bonded bodies' poses (x, q; velocities untouched) so that each
 * intact bond's anchors close `fraction` of their separation, over
 * `iterations` sweeps (nonlinear Gauss-Seidel). */
void hy_bonds_project(const hy_bond_set* s, const hy_bond_bodies* bodies, double fraction, int32_t iterations);

#endif
