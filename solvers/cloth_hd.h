/* The implicit cloth's per-spring and per-vertex arithmetic, shared by the
 * CPU passes (solvers/cloth.c, solvers/cloth_precond.c) and the CUDA
 * kernels (solvers/cloth.cu): HY_HD, compiled without floating-point
 * contraction on both sides, so a spring's block and right-hand side part
 * and a vertex's row of the product have the same bits wherever they run.
 *
 * Layouts are cloth_internal.h's: spring s joins ends[2 s] and
 * ends[2 s + 1]; per step its block S = alpha I + u u^T is block[4 s ..]
 * (u[3], alpha) and its right-hand side part on end i rhs_s[3 s ..]; each
 * vertex's CSR entries (adj_start) name the spring's block offset
 * (adj_spring4) and the other end's coordinate offset (adj_other3), in
 * spring order. */
#ifndef HY_SOLVERS_CLOTH_HD_H
#define HY_SOLVERS_CLOTH_HD_H

#include <math.h>
#include <stdint.h>

#include "core/hd.h"

/* What the product reads of a model: the vertex arrays, the CSR, the
 * step's spring blocks and the held vertices' penalty blocks. */
typedef struct hy_cloth_hd_model {
    int32_t nv, ns;
    const double* mass;       /* nv */
    const uint8_t* fixed;     /* nv */
    const int32_t* adj_start; /* nv + 1 */
    const int32_t* adj_spring4;
    const int32_t* adj_other3;
    const double* block; /* 4 ns */
    const uint8_t* held; /* nv, read when constrained */
    const double* ch;    /* 9 nv, read when constrained */
    int constrained;
    double diag_scale; /* 1 + dt air */
} hy_cloth_hd_model;

/* One spring of the step at (x0, v0), step dt: stiffness k, damping cd,
 * rest length L, ends (i, j). Writes its block blk[4] and its right-hand
 * side part on end i, dt (f + dt K (vj - vi)), into r[3]. The Jacobian
 * of a compressed spring is filtered (g clamped at 0) so the block stays
 * positive semi-definite; beta > 0 for a spring of positive rest length. */
HY_HD void hy_cloth_hd_spring(int32_t i, int32_t j, double k, double cd, double L, const double* x0,
                              const double* v0, double dt, double* blk, double* r) {
    const double *xi = x0 + 3 * (int64_t)i, *xj = x0 + 3 * (int64_t)j;
    const double *vi = v0 + 3 * (int64_t)i, *vj = v0 + 3 * (int64_t)j;
    double e[3] = {xj[0] - xi[0], xj[1] - xi[1], xj[2] - xi[2]};
    double dvel[3] = {vj[0] - vi[0], vj[1] - vi[1], vj[2] - vi[2]};
    double l = sqrt(e[0] * e[0] + e[1] * e[1] + e[2] * e[2]);
    if (!(l > 1e-12 * (L + 1e-12))) {
        /* Coincident ends: no direction. Treat as an isotropic spring
         * (its l -> 0 limit when L = 0), force 0, block k I: still PSD. */
        blk[0] = blk[1] = blk[2] = 0.0;
        blk[3] = dt * dt * k;
        for (int a = 0; a < 3; a++) r[a] = dt * dt * k * dvel[a];
        return;
    }
    double d[3] = {e[0] / l, e[1] / l, e[2] / l};
    double g = 1.0 - L / l;
    if (g < 0.0) g = 0.0; /* compressed: filtered, PSD Jacobian */
    double vd = dvel[0] * d[0] + dvel[1] * d[1] + dvel[2] * d[2];
    double fs = k * (l - L) + cd * vd; /* along d, on end i */
    /* K (vj - vi) = k g dvel + k (1 - g) d (d.dvel) */
    double kg = k * g, kd = k * (1.0 - g) * vd;
    double root_beta = sqrt(dt * dt * k * (1.0 - g) + dt * cd);
    for (int a = 0; a < 3; a++) {
        double f = fs * d[a];
        double kv = kg * dvel[a] + kd * d[a];
        r[a] = dt * (f + dt * kv);
        blk[a] = root_beta * d[a];
    }
    blk[3] = dt * dt * kg;
}

/* Row v of y = A x: y_v = M_v (1 + dt air) x_v + sum over v's springs of
 * S_s (x_v - x_other), in the CSR's order, plus a held vertex's penalty
 * block. A fixed vertex's row is 0 (CG's vectors keep fixed entries 0, so
 * the columns need no mask). */
HY_HD void hy_cloth_hd_matvec_row(const hy_cloth_hd_model* m, int64_t v, const double* x, double* y) {
    if (m->fixed[v]) {
        y[0] = y[1] = y[2] = 0.0;
        return;
    }
    const double* xv = x + 3 * v;
    const double x0 = xv[0], x1 = xv[1], x2 = xv[2];
    double md = m->mass[v] * m->diag_scale;
    double y0 = md * x0, y1 = md * x1, y2 = md * x2;
    const int32_t e1 = m->adj_start[v + 1];
    for (int32_t e = m->adj_start[v]; e < e1; e++) {
        const double* blk = m->block + m->adj_spring4[e];
        const double* xo = x + m->adj_other3[e];
        double d0 = x0 - xo[0], d1 = x1 - xo[1], d2 = x2 - xo[2];
        double t = blk[0] * d0 + blk[1] * d1 + blk[2] * d2;
        y0 += blk[3] * d0 + t * blk[0];
        y1 += blk[3] * d1 + t * blk[1];
        y2 += blk[3] * d2 + t * blk[2];
    }
    if (m->constrained && m->held[v]) {
        const double* H = m->ch + 9 * v;
        y0 += H[0] * x0 + H[1] * x1 + H[2] * x2;
        y1 += H[3] * x0 + H[4] * x1 + H[5] * x2;
        y2 += H[6] * x0 + H[7] * x1 + H[8] * x2;
    }
    y[0] = y0;
    y[1] = y1;
    y[2] = y2;
}

#endif
