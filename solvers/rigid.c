/* Rigid bodies: mass properties of closed triangle meshes (divergence
 * theorem) and time integration with quaternions and the gyroscopic term. */
#include "solvers/rigid.h"

#include <math.h>
#include <string.h>

#include "core/error.h"
#include "core/mesh.h"

/* ------------------------------------------------------------ mass properties */

/* Each triangle (a, b, c) and a reference point o span a signed tetrahedron;
 * summed over a closed surface the signed tetrahedra tile the enclosed solid
 * exactly (the divergence theorem in discrete form), whatever o is. For a
 * tetrahedron (o, a, b, c) with d = det[a-o, b-o, c-o] (6 x signed volume),
 * relative to o:
 *   volume            d / 6
 *   first moment      d / 24  * (a + b + c)
 *   second moment     d / 120 * (sum_k p_k p_k^T + s s^T),  s = a + b + c
 * (the standard closed form of the integral of x x^T over a tetrahedron with
 * one vertex at the origin). Taking o at the centre of the bounding box keeps
 * coordinates small, so a mesh far from the origin loses no precision to
 * cancellation. Inertia about the centre of mass follows from the covariance
 * C = S - V c c^T as rho * (trace(C) I - C). */
HY_API hy_status hy_mesh_mass_properties(hy_mesh_view mesh, double density, hy_mass_properties* out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_mass_properties: out is NULL");
    memset(out, 0, sizeof *out);
    if (!(isfinite(density) && density > 0.0))
        return hy_fail(HY_ERR_INVALID_ARG, "hy_mesh_mass_properties: density must be finite and > 0, got %g",
                       density);
    hy_status s = hy_mesh_view_validate(mesh, "hy_mesh_mass_properties");
    if (s) return s;

    hy_v3 lo = v3_load(mesh.positions), hi = lo;
    for (int32_t i = 1; i < mesh.vertex_count; i++) {
        hy_v3 p = v3_load(mesh.positions + 3 * i);
        lo = v3_min(lo, p);
        hi = v3_max(hi, p);
    }
    hy_v3 o = v3_scale(v3_add(lo, hi), 0.5);
    /* The second moments grow as size^5: past about 1e60 they overflow,
     * below 1e-60 they underflow, and the volume test below would then
     * blame the mesh's orientation. */
    hy_v3 ext = v3_sub(hi, lo);
    double box = fmax(ext.x, fmax(ext.y, ext.z));
    if (!(box > 1e-60 && box < 1e60))
        return hy_fail(HY_ERR_INVALID_ARG,
                       "hy_mesh_mass_properties: mesh size %g (bounding box %g x %g x %g) is outside [1e-60, 1e60]: "
                       "its volume and inertia do not fit in double precision",
                       box, ext.x, ext.y, ext.z);

    double vol6 = 0.0;      /* sum of d */
    double m1[3] = {0};     /* sum of d * s */
    double m2[6] = {0};     /* sum of d * (sum p p^T + s s^T): xx yy zz xy yz zx */
    for (int32_t t = 0; t < mesh.triangle_count; t++) {
        const int32_t* f = mesh.triangles + 3 * t;
        hy_v3 a = v3_sub(v3_load(mesh.positions + 3 * f[0]), o);
        hy_v3 b = v3_sub(v3_load(mesh.positions + 3 * f[1]), o);
        hy_v3 c = v3_sub(v3_load(mesh.positions + 3 * f[2]), o);
        double d = v3_dot(a, v3_cross(b, c));
        hy_v3 sm = v3_add(v3_add(a, b), c);
        vol6 += d;
        m1[0] += d * sm.x;
        m1[1] += d * sm.y;
        m1[2] += d * sm.z;
        m2[0] += d * (a.x * a.x + b.x * b.x + c.x * c.x + sm.x * sm.x);
        m2[1] += d * (a.y * a.y + b.y * b.y + c.y * c.y + sm.y * sm.y);
        m2[2] += d * (a.z * a.z + b.z * b.z + c.z * c.z + sm.z * sm.z);
        m2[3] += d * (a.x * a.y + b.x * b.y + c.x * c.y + sm.x * sm.y);
        m2[4] += d * (a.y * a.z + b.y * b.z + c.y * c.z + sm.y * sm.z);
        m2[5] += d * (a.z * a.x + b.z * b.x + c.z * c.x + sm.z * sm.x);
    }
    double vol = vol6 / 6.0;
    /* A closed, outward mesh has volume > 0. Zero or negative means open or
     * inside-out; a volume at rounding level of the bounding box is a flat
     * sheet, not a solid. */
    if (!(vol > 1e-12 * box * box * box))
        return hy_fail(HY_ERR_INVALID_ARG,
                       "hy_mesh_mass_properties: mesh encloses volume %g <= 0 (bounding box %g x %g x %g); "
                       "it must be closed with outward-facing (counter-clockwise from outside) triangles",
                       vol, ext.x, ext.y, ext.z);

    /* Centre relative to o, then covariance about the centre. */
    hy_v3 c = v3(m1[0] / (24.0 * vol), m1[1] / (24.0 * vol), m1[2] / (24.0 * vol));
    double cxx = m2[0] / 120.0 - vol * c.x * c.x, cyy = m2[1] / 120.0 - vol * c.y * c.y;
    double czz = m2[2] / 120.0 - vol * c.z * c.z, cxy = m2[3] / 120.0 - vol * c.x * c.y;
    double cyz = m2[4] / 120.0 - vol * c.y * c.z, czx = m2[5] / 120.0 - vol * c.z * c.x;

    out->volume = vol;
    out->mass = density * vol;
    v3_store(out->center, v3_add(o, c));
    double* I = out->inertia;
    I[0] = density * (cyy + czz);
    I[4] = density * (cxx + czz);
    I[8] = density * (cxx + cyy);
    I[1] = I[3] = -density * cxy;
    I[5] = I[7] = -density * cyz;
    I[2] = I[6] = -density * czx;
    int ok = isfinite(out->mass) && out->mass > 0;
    for (int k = 0; k < 9; k++) ok &= isfinite(I[k]);
    ok &= I[0] > 0 && I[4] > 0 && I[8] > 0;
    if (!ok)
        return hy_fail(HY_ERR_INVALID_ARG,
                       "hy_mesh_mass_properties: density %g times volume %g gives mass %g and inertia diagonal "
                       "(%g, %g, %g): outside double precision (density or size too extreme)",
                       density, vol, out->mass, I[0], I[4], I[8]);
    return HY_OK;
}

/* ------------------------------------------------------------ 3x3 helpers */

int hy_mat3_inverse(const double m[9], double out[9]) {
    double c0 = m[4] * m[8] - m[5] * m[7], c1 = m[5] * m[6] - m[3] * m[8], c2 = m[3] * m[7] - m[4] * m[6];
    double det = m[0] * c0 + m[1] * c1 + m[2] * c2;
    if (!(fabs(det) > HY_MAT3_MIN_DET) || !isfinite(det)) return 0;
    double id = 1.0 / det;
    out[0] = c0 * id;
    out[1] = (m[2] * m[7] - m[1] * m[8]) * id;
    out[2] = (m[1] * m[5] - m[2] * m[4]) * id;
    out[3] = c1 * id;
    out[4] = (m[0] * m[8] - m[2] * m[6]) * id;
    out[5] = (m[2] * m[3] - m[0] * m[5]) * id;
    out[6] = c2 * id;
    out[7] = (m[1] * m[6] - m[0] * m[7]) * id;
    out[8] = (m[0] * m[4] - m[1] * m[3]) * id;
    return 1;
}

/* R A R^T for row-major R and symmetric A. */
static void mat3_conjugate(const double R[9], const double A[9], double out[9]) {
    double T[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            T[3 * i + j] = R[3 * i] * A[j] + R[3 * i + 1] * A[3 + j] + R[3 * i + 2] * A[6 + j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            out[3 * i + j] = T[3 * i] * R[3 * j] + T[3 * i + 1] * R[3 * j + 1] + T[3 * i + 2] * R[3 * j + 2];
}

/* ------------------------------------------------------------ inertia */

hy_status hy_rigid_inertia_from(const hy_mass_properties* mp, hy_rigid_inertia* out) {
    if (!mp || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_rigid_inertia_from: NULL argument");
    if (!(isfinite(mp->mass) && mp->mass > 0.0))
        return hy_fail(HY_ERR_INVALID_ARG, "rigid body mass must be finite and > 0, got %g", mp->mass);
    const double* I = mp->inertia;
    /* The test below and the inverse take products of three entries: past
     * 1e100 (or below 1e-100) they leave double's range, and a solid
     * tensor would read as indefinite. */
    double Imax = fmax(fabs(I[0]), fmax(fabs(I[4]), fabs(I[8])));
    if (!(Imax > 1e-100 && Imax < 1e100))
        return hy_fail(HY_ERR_INVALID_ARG,
                       "rigid body inertia %g (mass %g) is outside [1e-100, 1e100]: density or size too extreme for "
                       "double precision",
                       Imax, mp->mass);
    /* Positive definite (Sylvester): a physical solid always is; a failure
     * means a degenerate (flat or needle) mesh. */
    double d1 = I[0], d2 = I[0] * I[4] - I[1] * I[3];
    double d3 = I[0] * (I[4] * I[8] - I[5] * I[7]) - I[1] * (I[3] * I[8] - I[5] * I[6]) +
                I[2] * (I[3] * I[7] - I[4] * I[6]);
    if (!(d1 > 0.0 && d2 > 0.0 && d3 > 0.0))
        return hy_fail(HY_ERR_INVALID_ARG,
                       "rigid body inertia tensor is not positive definite (diagonal %g %g %g): degenerate mesh?",
                       I[0], I[4], I[8]);
    out->mass = mp->mass;
    out->inv_mass = 1.0 / mp->mass;
    /* Symmetrise against rounding so R I R^T stays exactly symmetric. */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) out->inertia_body[3 * i + j] = 0.5 * (I[3 * i + j] + I[3 * j + i]);
    if (!hy_mat3_inverse(out->inertia_body, out->inv_inertia_body))
        return hy_fail(HY_ERR_INVALID_ARG, "rigid body inertia tensor is singular");
    return HY_OK;
}

void hy_rigid_world_inertia(const hy_rigid_inertia* in, hy_quat q, double I[9], double I_inv[9]) {
    double R[9];
    quat_to_mat(quat_normalize(q), R);
    if (I) mat3_conjugate(R, in->inertia_body, I);
    if (I_inv) mat3_conjugate(R, in->inv_inertia_body, I_inv);
}

hy_v3 hy_rigid_angular_momentum(const hy_rigid_inertia* in, const hy_rigid_state* s) {
    double R[9];
    quat_to_mat(quat_normalize(s->q), R);
    hy_v3 wb = mat_tmul_v3(R, s->w);
    return mat_mul_v3(R, mat_mul_v3(in->inertia_body, wb));
}

/* ------------------------------------------------------------ integration */

/* Rotation: implicit midpoint on the body-frame Euler equations plus the
 * matching Cayley rotation (a Lie-Poisson integrator).
 *
 * With no torque the body-frame momentum M = R^T L obeys M' = M x I^-1 M.
 * The implicit midpoint rule, M1 = M0 + dt * Mm x I^-1 Mm with
 * Mm = (M0 + M1)/2, can be rewritten M1 = Q^T M0 where Q = cay(dt * wm^),
 * wm = I^-1 Mm, is the Cayley rotation (I - dt/2 wm^)^-1 (I + dt/2 wm^).
 * Turning the body by the same Q (R1 = R0 Q) gives R1 M1 = R0 M0: world
 * angular momentum is conserved by construction, to rounding, whatever the
 * accuracy of the Newton solve for Mm (we form M1 = Q^T M0 rather than
 * 2 Mm - M0 for exactly that reason). Energy M.I^-1 M/2 is a quadratic
 * invariant, which the midpoint rule also conserves exactly, so with a
 * converged solve energy neither drifts nor oscillates. The method is second
 * order; Q as a quaternion is simply (1, dt/2 wm) normalised.
 *
 * Rejected: explicit gyroscopic update (w += dt I^-1 (L x w)): gains energy
 * and drifts L at fast spin; exponential map with omega from L: conserves L
 * but lets energy wander (only first order in the orientation); the splitting
 * into principal-axis rotations (Dullweber-Reich-Webster) is as good but needs
 * principal axes, which hy_rigid_inertia does not carry. */
static hy_v3 solve_midpoint(const double Ib_inv[9], hy_v3 M0, double dt) {
    /* Newton on F(Mm) = Mm - M0 - dt/2 * Mm x (I^-1 Mm) = 0, from Mm = M0.
     * dF = I - dt/2 * ([Mm]x I^-1 - [I^-1 Mm]x). */
    hy_v3 Mm = M0;
    double scale = v3_len(M0);
    for (int it = 0; it < 30; it++) {
        hy_v3 w = mat_mul_v3(Ib_inv, Mm);
        hy_v3 F = v3_sub(v3_sub(Mm, M0), v3_scale(v3_cross(Mm, w), 0.5 * dt));
        /* J = I - h * (A - B), A = [Mm]x Ib_inv, B = [w]x, h = dt/2. */
        double h = 0.5 * dt, J[9], Ji[9];
        const double* P = Ib_inv;
        double mx[9] = {0, -Mm.z, Mm.y, Mm.z, 0, -Mm.x, -Mm.y, Mm.x, 0};
        double wx[9] = {0, -w.z, w.y, w.z, 0, -w.x, -w.y, w.x, 0};
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double A = mx[3 * i] * P[j] + mx[3 * i + 1] * P[3 + j] + mx[3 * i + 2] * P[6 + j];
                J[3 * i + j] = (i == j ? 1.0 : 0.0) - h * (A - wx[3 * i + j]);
            }
        if (!hy_mat3_inverse(J, Ji)) break;
        hy_v3 step = mat_mul_v3(Ji, F);
        Mm = v3_sub(Mm, step);
        if (!(v3_len(step) > 1e-15 * scale)) break;
    }
    return Mm;
}

void hy_rigid_integrate(const hy_rigid_inertia* in, const hy_rigid_state* s0, double dt, const double gravity[3],
                        int use_gravity, hy_rigid_state* s1) {
    /* Linear: semi-implicit (symplectic) Euler, v first then x. */
    hy_rigid_state r = *s0;
    if (use_gravity && gravity) r.v = v3_mad(s0->v, v3_load(gravity), dt);
    r.x = v3_mad(s0->x, r.v, dt);

    /* Angular: see the comment above solve_midpoint. */
    hy_quat q0 = quat_normalize(s0->q);
    double R0[9];
    quat_to_mat(q0, R0);
    hy_v3 M0 = mat_mul_v3(in->inertia_body, mat_tmul_v3(R0, s0->w)); /* body-frame L */
    if (v3_len2(M0) > 0.0) {
        hy_v3 Mm = solve_midpoint(in->inv_inertia_body, M0, dt);
        hy_v3 wm = mat_mul_v3(in->inv_inertia_body, Mm);
        hy_quat dq = {1.0, 0.5 * dt * wm.x, 0.5 * dt * wm.y, 0.5 * dt * wm.z};
        dq = quat_normalize(dq);
        /* M1 = Q^T M0 with Q the rotation of dq. */
        double Q[9];
        quat_to_mat(dq, Q);
        hy_v3 M1 = mat_tmul_v3(Q, M0);
        r.q = quat_normalize(quat_mul(q0, dq));
        double R1[9];
        quat_to_mat(r.q, R1);
        r.w = mat_mul_v3(R1, mat_mul_v3(in->inv_inertia_body, M1));
    } else {
        r.q = q0;
        r.w = v3(0.0, 0.0, 0.0);
    }
    *s1 = r;
}
