/* The mass-spring objects' per-spring and per-vertex arithmetic
 * (solvers/massspring.c), shared by the CPU code and the CUDA kernels
 * (solvers/massspring.cu): HY_HD, compiled without floating-point
 * contraction on both sides, so a spring's system block and force and a
 * vertex's matrix-vector row have the same bits wherever they run.
 *
 * Layouts are massspring.c's: spring s joins spring[2 s] < spring[2 s + 1]
 * at rest length rest_len[s]; per step its coefficients coef[5 s ..] (unit
 * direction d, then a and b of its block a I + b d d^T) and its right-hand
 * side part on its first end sforce[3 s ..] (the other end gets minus);
 * per vertex its incident spring ends (2 spring + end) in spring order,
 * from inc[inc_start[v]] to inc[inc_start[v + 1]]. */
#ifndef HY_SOLVERS_MASSSPRING_HD_H
#define HY_SOLVERS_MASSSPRING_HD_H

#include <math.h>
#include <stdint.h>

#include "core/hd.h"

/* What the kernels read of a model (hy_ms_view): its arrays, its material,
 * and the step's scratch. */
typedef struct hy_ms_hd_model {
    int32_t nv, ns;
    double k, c;
    const int32_t* spring;           /* 2 ns */
    const double* rest_len;          /* ns */
    const double* mass;              /* nv */
    const uint8_t* fixed;            /* nv */
    const int32_t *inc_start, *inc;  /* nv + 1, 2 ns */
    double *coef, *sforce;           /* 5 ns, 3 ns */
    double diag_scale;               /* of the prepared step */
} hy_ms_hd_model;

/* Direction d, length and the elastic force f on end i of spring (i, j)
 * at x, stiffness k, rest length L. */
HY_HD void hy_ms_hd_spring_state(int32_t i, int32_t j, double k, double L, const double* x, double d[3], double* len,
                                 double f[3]) {
    double l2 = 0.0;
    for (int a = 0; a < 3; a++) {
        d[a] = x[3 * (int64_t)j + a] - x[3 * (int64_t)i + a];
        l2 += d[a] * d[a];
    }
    double l = sqrt(l2);
    /* a collapsed spring has no direction and, by symmetry, no force */
    double inv = l > 0 ? 1.0 / l : 0.0;
    for (int a = 0; a < 3; a++) d[a] *= inv;
    double t = k * (l - L);
    for (int a = 0; a < 3; a++) f[a] = t * d[a];
    *len = l;
}

/* One spring of the step's spring pass at (x0, v0), step dt: its block's
 * d, a, b into q[5] and its right-hand side part on end i,
 * f(x0, v0) - dt K (v0_i - v0_j), into sf[3]. */
HY_HD void hy_ms_hd_spring(int32_t i, int32_t j, double k, double c, double L, const double* x0, const double* v0,
                           double dt, double q[5], double sf[3]) {
    double d[3], l, f[3], w[3];
    hy_ms_hd_spring_state(i, j, k, L, x0, d, &l, f);
    double g = l > L ? 1.0 - L / l : 0.0;
    for (int a = 0; a < 3; a++) w[a] = v0[3 * (int64_t)j + a] - v0[3 * (int64_t)i + a];
    double wd = w[0] * d[0] + w[1] * d[1] + w[2] * d[2];
    /* damping along the spring, then + dt K (v0_j - v0_i) */
    for (int a = 0; a < 3; a++) f[a] += c * wd * d[a] + dt * k * (g * w[a] + (1.0 - g) * wd * d[a]);
    q[0] = d[0], q[1] = d[1], q[2] = d[2];
    q[3] = dt * dt * k * g;
    q[4] = dt * dt * k * (1.0 - g) + dt * c;
    sf[0] = f[0], sf[1] = f[1], sf[2] = f[2];
}

/* Vertex v's row of the system's product y = A p: m (1 + dt alpha) p_v
 * plus, over its springs in spring order, S (p_v - p_o) (fixed vertices
 * read as zero); a fixed vertex's row is the identity. */
HY_HD void hy_ms_hd_matvec_vertex(const hy_ms_hd_model* m, int32_t v, const double* p, double y[3]) {
    const double* pv = p + 3 * (int64_t)v;
    if (m->fixed[v]) {
        y[0] = pv[0], y[1] = pv[1], y[2] = pv[2];
        return;
    }
    double s = m->mass[v] * m->diag_scale;
    double acc[3] = {s * pv[0], s * pv[1], s * pv[2]};
    for (int32_t k = m->inc_start[v]; k < m->inc_start[v + 1]; k++) {
        int32_t sp = m->inc[k] / 2;
        int32_t o = m->spring[2 * sp + 1 - (m->inc[k] & 1)];
        const double* q = m->coef + 5 * (int64_t)sp;
        double u[3];
        for (int a = 0; a < 3; a++) u[a] = pv[a] - (m->fixed[o] ? 0.0 : p[3 * (int64_t)o + a]);
        double ud = u[0] * q[0] + u[1] * q[1] + u[2] * q[2];
        for (int a = 0; a < 3; a++) acc[a] += q[3] * u[a] + q[4] * ud * q[a];
    }
    y[0] = acc[0], y[1] = acc[1], y[2] = acc[2];
}

#endif
