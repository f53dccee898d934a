/* Rigid bodies: mass properties of closed meshes and integration with
 * quaternions including the gyroscopic term. */
#ifndef HY_SOLVERS_RIGID_H
#define HY_SOLVERS_RIGID_H

#include "core/hd.h"
#include "hyphys/hyphys.h"

typedef struct hy_rigid_inertia {
    double mass, inv_mass;
    double inertia_body[9];     /* about the centre of mass, body frame */
    double inv_inertia_body[9];
} hy_rigid_inertia;

typedef struct hy_rigid_state {
    hy_v3 x;     /* centre of mass, world */
    hy_quat q;   /* body -> world */
    hy_v3 v;     /* linear velocity */
    hy_v3 w;     /* angular velocity, world frame */
} hy_rigid_state;

/* Inertia from mass properties (body frame = mesh frame, centred on COM). */
hy_status hy_rigid_inertia_from(const hy_mass_properties* mp, hy_rigid_inertia* out);

/* Advance one step of dt: v += g*dt (if use_gravity); x += v*dt; the
 * rotation is advanced with the gyroscopic term treated so that, with no
 * torque, world angular momentum is conserved to rounding. */
void hy_rigid_integrate(const hy_rigid_inertia* in, const hy_rigid_state* s0, double dt, const double gravity[3],
                        int use_gravity, hy_rigid_state* s1);

/* Inverse of the row-major 3x3 matrix m by cofactors, into out. Returns 0
 * (out untouched) when m counts as singular: its determinant is NaN,
 * infinite, or at most HY_MAT3_MIN_DET in magnitude (1/det would carry no
 * trustworthy digits). Used for inertia tensors, the gyroscopic Newton step
 * and the bonds' effective masses. */
#define HY_MAT3_MIN_DET 1e-300
int hy_mat3_inverse(const double m[9], double out[9]);

/* World-frame inertia tensor R I R^T and its inverse. */
void hy_rigid_world_inertia(const hy_rigid_inertia* in, hy_quat q, double I[9], double I_inv[9]);
/* L = R I R^T w. */
hy_v3 hy_rigid_angular_momentum(const hy_rigid_inertia* in, const hy_rigid_state* s);

#endif
