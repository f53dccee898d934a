/* Rigid bodies: mesh mass properties against analytic/independent values, torque-free tumbling, free fall. */
#include <stdint.h>
#include <string.h>

#include "core/hd.h"
#include "core/mesh.h"
#include "hyphys/hyphys.h"
#include "solvers/rigid.h"
#include "test.h"

#define PI 3.14159265358979323846

static double max_abs9(const double* a) {
    double m = 0.0;
    for (int i = 0; i < 9; i++) m = fmax(m, fabs(a[i]));
    return m;
}

/* ---------------------------------------------------------- boxes */

/* Box [-hx,hx]x[-hy,hy]x[-hz,hz], density rho: V = 8 hx hy hz,
 * Ixx = m (hy^2 + hz^2) / 3, ... The polyhedron is the box exactly, so the
 * only error is rounding: 1e-12 relative. */
static void test_box_analytic(int subdivisions) {
    double hx = 0.5, hy = 1.0, hz = 1.5, rho = 1000.0;
    hy_mesh* m = NULL;
    CHECK_OK(hy_mesh_box(hx, hy, hz, subdivisions, &m));
    if (!m) return;
    hy_mass_properties mp;
    CHECK_OK(hy_mesh_mass_properties(hy_mesh_get_view(m), rho, &mp));
    double V = 8 * hx * hy * hz, M = rho * V;
    double Iref[9] = {M * (hy * hy + hz * hz) / 3, 0, 0, 0, M * (hx * hx + hz * hz) / 3, 0, 0, 0,
                      M * (hx * hx + hy * hy) / 3};
    CHECK_NEAR(mp.volume, V, 1e-12 * V);
    CHECK_NEAR(mp.mass, M, 1e-12 * M);
    for (int k = 0; k < 3; k++) CHECK_NEAR(mp.center[k], 0.0, 1e-12);
    for (int k = 0; k < 9; k++) CHECK_NEAR(mp.inertia[k], Iref[k], 1e-12 * Iref[0]);
    fprintf(stderr, "box n=%d: V=%.15g m=%.15g I=diag(%.15g %.15g %.15g)\n", subdivisions, mp.volume, mp.mass,
            mp.inertia[0], mp.inertia[4], mp.inertia[8]);
    hy_mesh_destroy(m);
}

/* The same box rotated by q and moved to t: centre t, inertia R I R^T. The
 * translation is large (1e3 x the size) to show the centring keeps precision;
 * the tolerance 1e-10 relative allows for rounding of 1e3-sized coordinates. */
static void test_box_transformed(void) {
    double hx = 0.5, hy = 1.0, hz = 1.5, rho = 7.5;
    hy_mesh* m = NULL;
    CHECK_OK(hy_mesh_box(hx, hy, hz, 3, &m));
    if (!m) return;
    hy_quat q = quat_normalize((hy_quat){0.8, 0.3, -0.5, 0.2});
    hy_v3 t = v3(1000.0, -2000.0, 3000.0);
    double R[9];
    quat_to_mat(q, R);
    for (int32_t i = 0; i < m->vertex_count; i++)
        v3_store(m->positions + 3 * i, v3_add(mat_mul_v3(R, v3_load(m->positions + 3 * i)), t));
    hy_mass_properties mp;
    CHECK_OK(hy_mesh_mass_properties(hy_mesh_get_view(m), rho, &mp));
    double M = rho * 8 * hx * hy * hz;
    double Ib[9] = {M * (hy * hy + hz * hz) / 3, 0, 0, 0, M * (hx * hx + hz * hz) / 3, 0, 0, 0,
                    M * (hx * hx + hy * hy) / 3};
    double Iw[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0.0;
            for (int k = 0; k < 3; k++) s += R[3 * i + k] * Ib[3 * k + k] * R[3 * j + k];
            Iw[3 * i + j] = s;
        }
    CHECK_NEAR(mp.mass, M, 1e-10 * M);
    CHECK_NEAR(mp.center[0], t.x, 1e-10 * 3000);
    CHECK_NEAR(mp.center[1], t.y, 1e-10 * 3000);
    CHECK_NEAR(mp.center[2], t.z, 1e-10 * 3000);
    double err = 0.0;
    for (int k = 0; k < 9; k++) {
        CHECK_NEAR(mp.inertia[k], Iw[k], 1e-10 * Ib[0]);
        err = fmax(err, fabs(mp.inertia[k] - Iw[k]));
    }
    fprintf(stderr, "rotated+translated box: max |I - R I0 R^T| = %.3g (|I| = %.3g)\n", err, Ib[0]);
    hy_mesh_destroy(m);
}

/* ---------------------------------------------------------- icosphere */

/* Independent reference: tetrahedra from each triangle to the vertex mean,
 * each integrated with the 4-point Keast rule (exact for quadratics, so exact
 * for x x^T), summed in long double; then the parallel-axis shift. Differs
 * from the library in apex, formula and precision, so agreement checks the
 * closed form and its orientation bookkeeping. */
static void reference_mass(hy_mesh_view v, double rho, double* vol, double c[3], double I[9]) {
    long double ap[3] = {0, 0, 0};
    for (int32_t i = 0; i < v.vertex_count; i++)
        for (int k = 0; k < 3; k++) ap[k] += v.positions[3 * i + k];
    for (int k = 0; k < 3; k++) ap[k] /= v.vertex_count;
    const long double a = 0.5854101966249685L, b = 0.1381966011250105L;
    long double V = 0, m1[3] = {0, 0, 0}, m2[9] = {0};
    for (int32_t t = 0; t < v.triangle_count; t++) {
        long double p[4][3];
        for (int k = 0; k < 3; k++) p[0][k] = ap[k];
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) p[j + 1][k] = v.positions[3 * v.triangles[3 * t + j] + k];
        long double e[3][3];
        for (int j = 0; j < 3; j++)
            for (int k = 0; k < 3; k++) e[j][k] = p[j + 1][k] - p[0][k];
        long double det = e[0][0] * (e[1][1] * e[2][2] - e[1][2] * e[2][1]) -
                          e[0][1] * (e[1][0] * e[2][2] - e[1][2] * e[2][0]) +
                          e[0][2] * (e[1][0] * e[2][1] - e[1][1] * e[2][0]);
        long double tv = det / 6;
        V += tv;
        for (int q = 0; q < 4; q++) {
            long double x[3];
            for (int k = 0; k < 3; k++) {
                x[k] = 0;
                for (int j = 0; j < 4; j++) x[k] += (j == q ? a : b) * p[j][k];
            }
            for (int k = 0; k < 3; k++) m1[k] += tv / 4 * x[k];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++) m2[3 * i + j] += tv / 4 * x[i] * x[j];
        }
    }
    *vol = (double)V;
    long double cc[3];
    for (int k = 0; k < 3; k++) c[k] = (double)(cc[k] = m1[k] / V);
    long double C[9];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) C[3 * i + j] = m2[3 * i + j] - V * cc[i] * cc[j];
    long double tr = C[0] + C[4] + C[8];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) I[3 * i + j] = (double)(rho * ((i == j ? tr : 0) - C[3 * i + j]));
}

static void test_icosphere(void) {
    double r = 0.75, rho = 2500.0;
    hy_mesh* m = NULL;
    CHECK_OK(hy_mesh_icosphere(r, 3, &m));
    if (!m) return;
    /* Move it off the origin so the centre is non-trivial. */
    for (int32_t i = 0; i < m->vertex_count; i++) {
        m->positions[3 * i + 0] += 0.3;
        m->positions[3 * i + 1] -= 1.7;
        m->positions[3 * i + 2] += 4.1;
    }
    hy_mesh_view v = hy_mesh_get_view(m);
    hy_mass_properties mp;
    CHECK_OK(hy_mesh_mass_properties(v, rho, &mp));
    double V, c[3], I[9];
    reference_mass(v, rho, &V, c, I);
    /* Same polyhedron, two exact methods: rounding only, 1e-10 relative. */
    CHECK_NEAR(mp.volume, V, 1e-10 * V);
    CHECK_NEAR(mp.mass, rho * V, 1e-10 * rho * V);
    for (int k = 0; k < 3; k++) CHECK_NEAR(mp.center[k], c[k], 1e-10);
    double Imax = max_abs9(I), err = 0.0;
    for (int k = 0; k < 9; k++) {
        CHECK_NEAR(mp.inertia[k], I[k], 1e-10 * Imax);
        err = fmax(err, fabs(mp.inertia[k] - I[k]));
    }
    fprintf(stderr, "icosphere s=3: V=%.15g (ref %.15g), Ixx=%.15g (ref %.15g), max diff %.3g\n", mp.volume, V,
            mp.inertia[0], I[0], err);
    /* Icosahedral symmetry makes the tensor isotropic: equal diagonal, zero
     * off-diagonal (rounding only). */
    CHECK_NEAR(mp.inertia[4], mp.inertia[0], 1e-10 * Imax);
    CHECK_NEAR(mp.inertia[8], mp.inertia[0], 1e-10 * Imax);
    CHECK_NEAR(mp.inertia[1], 0.0, 1e-10 * Imax);
    CHECK_NEAR(mp.inertia[5], 0.0, 1e-10 * Imax);
    CHECK_NEAR(mp.inertia[2], 0.0, 1e-10 * Imax);
    CHECK_NEAR(mp.center[0], 0.3, 1e-12);
    /* Against the smooth sphere: the inscribed polyhedron is a bit smaller,
     * 1.5% for s=3 (discretisation, not rounding). */
    double Vs = 4.0 / 3.0 * PI * r * r * r;
    CHECK_NEAR(mp.volume / Vs, 1.0, 0.015);
    CHECK_NEAR(mp.inertia[0] / (0.4 * rho * Vs * r * r), 1.0, 0.03);
    hy_mesh_destroy(m);
}

/* ---------------------------------------------------------- bad input */

static void test_bad_input(void) {
    hy_mesh* box = NULL;
    CHECK_OK(hy_mesh_box(1, 1, 1, 1, &box));
    if (!box) return;
    hy_mass_properties mp;
    hy_mesh_view v = hy_mesh_get_view(box);
    CHECK(hy_mesh_mass_properties(v, 0.0, &mp) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "density") && strstr(hy_last_error(), "got 0"));
    CHECK(hy_mesh_mass_properties(v, -3.0, &mp) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "-3") != NULL);
    CHECK(hy_mesh_mass_properties(v, NAN, &mp) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "nan") != NULL);
    CHECK(hy_mesh_mass_properties(v, 1.0, NULL) == HY_ERR_INVALID_ARG);

    /* Inside-out: swap two corners of every triangle. */
    for (int32_t t = 0; t < box->triangle_count; t++) {
        int32_t tmp = box->triangles[3 * t + 1];
        box->triangles[3 * t + 1] = box->triangles[3 * t + 2];
        box->triangles[3 * t + 2] = tmp;
    }
    CHECK(hy_mesh_mass_properties(v, 1.0, &mp) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "volume -8") != NULL);
    fprintf(stderr, "inside-out box: %s\n", hy_last_error());
    hy_mesh_destroy(box);

    /* Open flat sheet: zero volume. */
    hy_mesh* grid = NULL;
    CHECK_OK(hy_mesh_grid(4, 4, 1, 1, &grid));
    if (grid) {
        CHECK(hy_mesh_mass_properties(hy_mesh_get_view(grid), 1.0, &mp) == HY_ERR_INVALID_ARG);
        CHECK(strstr(hy_last_error(), "closed") != NULL);
    }
    hy_mesh_destroy(grid);

    /* Extreme sizes and densities are refused as such (before, a sphere
     * of radius 1e200 came out with NaN vertices, and of radius 1e-200 as
     * "volume 0: it must be closed"); a 1e-50 m sphere still works. */
    {
        const double radius[3] = {1e200, 1e-200, 1e-50};
        for (int k = 0; k < 3; k++) {
            hy_mesh* ball = NULL;
            CHECK_OK(hy_mesh_icosphere(radius[k], 2, &ball));
            hy_status st = ball ? hy_mesh_mass_properties(hy_mesh_get_view(ball), 1000.0, &mp) : HY_ERR_INVALID_ARG;
            if (k < 2) {
                CHECK(st == HY_ERR_INVALID_ARG && strstr(hy_last_error(), "outside [1e-60, 1e60]") != NULL);
            } else {
                CHECK_OK(st);
                CHECK(fabs(mp.volume / (4.0 / 3.0 * 3.14159265358979 * 1e-150) - 1.0) < 0.1);
            }
            hy_mesh_destroy(ball);
        }
        hy_mesh* ball = NULL;
        CHECK_OK(hy_mesh_icosphere(1e50, 2, &ball));
        hy_rigid_inertia big;
        CHECK_OK(hy_mesh_mass_properties(hy_mesh_get_view(ball), 1000.0, &mp));
        CHECK(hy_rigid_inertia_from(&mp, &big) == HY_ERR_INVALID_ARG);
        CHECK(strstr(hy_last_error(), "outside [1e-100, 1e100]") != NULL);
        hy_mesh_destroy(ball);
    }

    /* Empty / broken view. */
    hy_mesh_view empty = {0};
    CHECK(hy_mesh_mass_properties(empty, 1.0, &mp) == HY_ERR_INVALID_ARG);

    hy_mass_properties zero = {0};
    hy_rigid_inertia ri;
    CHECK(hy_rigid_inertia_from(&zero, &ri) == HY_ERR_INVALID_ARG);
}

/* ---------------------------------------------------------- integration */

static hy_rigid_inertia box_inertia(void) {
    hy_mesh* m = NULL;
    hy_rigid_inertia ri;
    memset(&ri, 0, sizeof ri);
    CHECK_OK(hy_mesh_box(0.5, 1.0, 1.5, 1, &m)); /* 1 x 2 x 3 */
    hy_mass_properties mp;
    CHECK_OK(hy_mesh_mass_properties(hy_mesh_get_view(m), 1000.0, &mp));
    CHECK_OK(hy_rigid_inertia_from(&mp, &ri));
    hy_mesh_destroy(m);
    return ri;
}

static double kinetic_rot(const hy_rigid_inertia* ri, const hy_rigid_state* s) {
    return 0.5 * v3_dot(s->w, hy_rigid_angular_momentum(ri, s));
}

/* Asymmetric box spinning fast about a non-principal axis, no torque:
 * |L - L0| / |L0| <= 1e-9 at every one of 1000 steps (the method conserves it
 * by construction, so the real figure is rounding, ~1e-14). Energy is a
 * quadratic invariant of the implicit midpoint rule: held to the Newton
 * tolerance, checked at 1e-9 and reported. */
static void test_tumbling(void) {
    hy_rigid_inertia ri = box_inertia();
    hy_rigid_state s = {v3(0, 0, 0), quat_normalize((hy_quat){0.9, 0.1, 0.3, -0.2}), v3(0, 0, 0),
                        v3(3.0, -7.0, 11.0)};
    double g[3] = {0, -9.81, 0};
    hy_v3 L0 = hy_rigid_angular_momentum(&ri, &s);
    double E0 = kinetic_rot(&ri, &s), dL = 0.0, dE = 0.0, dq = 0.0, dwb = 0.0;
    double dt = 1.0 / 60.0;
    hy_v3 wb0 = quat_rotate((hy_quat){s.q.w, -s.q.x, -s.q.y, -s.q.z}, s.w); /* body-frame rate */
    for (int n = 0; n < 1000; n++) {
        hy_rigid_state s1;
        hy_rigid_integrate(&ri, &s, dt, g, 0, &s1);
        s = s1;
        hy_v3 wb = quat_rotate((hy_quat){s.q.w, -s.q.x, -s.q.y, -s.q.z}, s.w);
        dwb = fmax(dwb, v3_len(v3_sub(wb, wb0)) / v3_len(wb0));
        dL = fmax(dL, v3_len(v3_sub(hy_rigid_angular_momentum(&ri, &s), L0)) / v3_len(L0));
        dE = fmax(dE, fabs(kinetic_rot(&ri, &s) - E0) / E0);
        dq = fmax(dq, fabs(sqrt(s.q.w * s.q.w + s.q.x * s.q.x + s.q.y * s.q.y + s.q.z * s.q.z) - 1.0));
    }
    fprintf(stderr, "tumbling box 1x2x3, |w|=%.2f rad/s, 1000 steps of 1/60 s: max |dL|/|L| = %.3g, "
            "max |dE|/E = %.3g, max | |q| - 1 | = %.3g\n", sqrt(9.0 + 49.0 + 121.0), dL, dE, dq);
    CHECK(dL <= 1e-9);
    CHECK(dE <= 1e-9);
    CHECK(dq <= 1e-12);
    CHECK(s.x.x == 0.0 && s.x.y == 0.0 && s.x.z == 0.0); /* no gravity asked for */
    /* The motion is a genuine tumble, not a steady spin about a principal
     * axis: the body-frame rate must change a lot over the run. */
    fprintf(stderr, "  body-frame rate varied by up to %.2f of |w|\n", dwb);
    CHECK(dwb > 0.2);
}

/* Spin about a principal axis: the Cayley update turns by exactly
 * 2 atan(dt w / 2) per step, in the right-hand sense. */
static void test_principal_spin(void) {
    hy_rigid_inertia ri = box_inertia();
    double w = 5.0, dt = 0.01;
    hy_rigid_state s = {v3(0, 0, 0), (hy_quat){1, 0, 0, 0}, v3(0, 0, 0), v3(0, 0, w)};
    for (int n = 0; n < 100; n++) hy_rigid_integrate(&ri, &s, dt, NULL, 0, &s);
    double angle = 100 * 2.0 * atan(0.5 * dt * w);
    hy_v3 ex = quat_rotate(s.q, v3(1, 0, 0));
    CHECK_NEAR(ex.x, cos(angle), 1e-12);
    CHECK_NEAR(ex.y, sin(angle), 1e-12); /* +z spin turns +x towards +y */
    CHECK_NEAR(s.w.z, w, 1e-12);
    /* Against the exact 5 rad: per step 2 atan(x/2) = x - x^3/12 + ..., x = dt w,
     * so the lag is 100 x^3 / 12 = 1.04e-3 rad (second-order phase error). */
    CHECK_NEAR(angle, 5.0, 1.1e-3);
}

/* Reference rotation by RK4 on M' = M x I^-1 M, q' = q (0, w_body) / 2. */
static hy_quat reference_rotation(const hy_rigid_inertia* ri, hy_quat q, hy_v3 M, double T, int steps) {
    double h = T / steps;
    for (int n = 0; n < steps; n++) {
        hy_v3 kM[4];
        hy_quat kq[4];
        hy_v3 Mi = M;
        hy_quat qi = q;
        for (int st = 0; st < 4; st++) {
            hy_v3 w = mat_mul_v3(ri->inv_inertia_body, Mi);
            kM[st] = v3_cross(Mi, w);
            hy_quat dq = quat_mul(qi, (hy_quat){0, w.x, w.y, w.z});
            kq[st] = (hy_quat){0.5 * dq.w, 0.5 * dq.x, 0.5 * dq.y, 0.5 * dq.z};
            double c = st < 2 ? 0.5 * h : h;
            if (st < 3) {
                Mi = v3_mad(M, kM[st], c);
                qi = (hy_quat){q.w + c * kq[st].w, q.x + c * kq[st].x, q.y + c * kq[st].y, q.z + c * kq[st].z};
            }
        }
        M = v3_add(M, v3_scale(v3_add(v3_add(kM[0], v3_scale(kM[1], 2)), v3_add(v3_scale(kM[2], 2), kM[3])), h / 6));
        q.w += h / 6 * (kq[0].w + 2 * kq[1].w + 2 * kq[2].w + kq[3].w);
        q.x += h / 6 * (kq[0].x + 2 * kq[1].x + 2 * kq[2].x + kq[3].x);
        q.y += h / 6 * (kq[0].y + 2 * kq[1].y + 2 * kq[2].y + kq[3].y);
        q.z += h / 6 * (kq[0].z + 2 * kq[1].z + 2 * kq[2].z + kq[3].z);
        q = quat_normalize(q);
    }
    return q;
}

static double rotation_error(hy_quat a, hy_quat b) {
    double Ra[9], Rb[9], e = 0.0;
    quat_to_mat(a, Ra);
    quat_to_mat(b, Rb);
    for (int k = 0; k < 9; k++) e = fmax(e, fabs(Ra[k] - Rb[k]));
    return e;
}

/* Convergence: orientation after 1 s against an RK4 reference; halving dt
 * must cut the error by ~4 (second order). */
static void test_convergence(void) {
    hy_rigid_inertia ri = box_inertia();
    hy_rigid_state s0 = {v3(0, 0, 0), quat_normalize((hy_quat){0.9, 0.1, 0.3, -0.2}), v3(0, 0, 0),
                         v3(1.0, -2.0, 3.0)};
    double R0[9];
    quat_to_mat(s0.q, R0);
    hy_v3 M0 = mat_mul_v3(ri.inertia_body, mat_tmul_v3(R0, s0.w));
    hy_quat qref = reference_rotation(&ri, s0.q, M0, 1.0, 20000);
    double err[3];
    for (int k = 0; k < 3; k++) {
        int steps = 60 << k;
        hy_rigid_state s = s0;
        for (int n = 0; n < steps; n++) hy_rigid_integrate(&ri, &s, 1.0 / steps, NULL, 0, &s);
        err[k] = rotation_error(s.q, qref);
    }
    fprintf(stderr, "orientation error after 1 s: dt=1/60 %.3g, 1/120 %.3g, 1/240 %.3g (ratios %.2f %.2f)\n",
            err[0], err[1], err[2], err[0] / err[1], err[1] / err[2]);
    CHECK(err[0] < 1e-2);
    CHECK(err[0] / err[1] > 3.5 && err[0] / err[1] < 4.5);
    CHECK(err[1] / err[2] > 3.5 && err[1] / err[2] < 4.5);
}

/* Free fall with semi-implicit Euler (v += g dt, then x += v dt). After n
 * steps, t = n dt, x_n = x0 + v0 t + g dt^2 n (n+1) / 2 exactly, which is
 * the continuous x0 + v0 t + g t^2/2 plus g t dt / 2: first order in dt.
 * We check both: the discrete formula to rounding (1e-12), and that the gap
 * to the continuous parabola is exactly that O(dt) term. v_n = v0 + g t is
 * exact. */
static void test_free_fall(void) {
    hy_rigid_inertia ri = box_inertia();
    double g[3] = {0.0, -9.81, 0.5};
    hy_v3 x0 = v3(1.0, 10.0, -2.0), v0 = v3(0.5, 3.0, 0.0);
    hy_rigid_state s = {x0, (hy_quat){1, 0, 0, 0}, v0, v3(0, 0, 0)};
    double dt = 1.0 / 60.0;
    int n = 120;
    for (int i = 0; i < n; i++) hy_rigid_integrate(&ri, &s, dt, g, 1, &s);
    double t = n * dt;
    hy_v3 gv = v3_load(g);
    hy_v3 discrete = v3_add(v3_mad(x0, v0, t), v3_scale(gv, dt * dt * n * (n + 1) / 2.0));
    hy_v3 parabola = v3_add(v3_mad(x0, v0, t), v3_scale(gv, 0.5 * t * t));
    CHECK_NEAR(s.x.x, discrete.x, 1e-12);
    CHECK_NEAR(s.x.y, discrete.y, 1e-12);
    CHECK_NEAR(s.x.z, discrete.z, 1e-12);
    CHECK_NEAR(s.x.y - parabola.y, gv.y * t * dt / 2, 1e-12);
    CHECK_NEAR(s.v.y, v0.y + gv.y * t, 1e-12);
    CHECK_NEAR(s.v.z, v0.z + gv.z * t, 1e-12);
    fprintf(stderr, "free fall 2 s at dt=1/60: x.y=%.12g, parabola %.12g, gap %.3g = g t dt/2 = %.3g\n", s.x.y,
            parabola.y, s.x.y - parabola.y, gv.y * t * dt / 2);
    /* No spin in, no spin out. */
    CHECK(s.w.x == 0.0 && s.w.y == 0.0 && s.w.z == 0.0);
    CHECK(s.q.w == 1.0);
}

static void test_world_inertia(void) {
    hy_rigid_inertia ri = box_inertia();
    hy_quat q = quat_normalize((hy_quat){0.5, -0.2, 0.7, 0.1});
    double I[9], Ii[9];
    hy_rigid_world_inertia(&ri, q, I, Ii);
    /* I * I^-1 = identity (rounding: 1e-12). */
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) {
            double s = 0.0;
            for (int k = 0; k < 3; k++) s += I[3 * i + k] * Ii[3 * k + j];
            CHECK_NEAR(s, i == j ? 1.0 : 0.0, 1e-12);
        }
}

int main(void) {
    test_box_analytic(1);
    test_box_analytic(4);
    test_box_transformed();
    test_icosphere();
    test_bad_input();
    test_tumbling();
    test_principal_spin();
    test_convergence();
    test_free_fall();
    test_world_inertia();
    TEST_END();
}
