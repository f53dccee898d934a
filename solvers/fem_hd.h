/* The corotational FEM's per-element and per-vertex arithmetic
 * (solvers/fem.c), shared by the CPU code and the CUDA kernels
 * (solvers/fem.cu): HY_HD, compiled without floating-point contraction on
 * both sides (-ffp-contract=off, nvcc --fmad=false), so an element's
 * rotation, rotated gradients and corner forces, and a vertex's gathered
 * force and matrix-vector row, have the same bits wherever they run.
 *
 * Layouts are fem.c's: an element's four vertex indices t[4]; its rest
 * shape-function gradients b[12] (b_0..b_3); the rotated gradients c_i =
 * R b_i read and written through a stride (fem.c keeps them by quads of
 * four elements, an element's entry j at rb[4 j]); corner forces 12 per
 * element; per vertex its incident corners (4 element + corner) in
 * element order, from inc[inc_start[v]] to inc[inc_start[v + 1]]. */
#ifndef HY_SOLVERS_FEM_HD_H
#define HY_SOLVERS_FEM_HD_H

#include <math.h>
#include <stdint.h>

#include "core/hd.h"

/* What the kernels read of a model (solvers/fem.c; hy_fem_view): its
 * arrays, and the step's scratch (rgrad by quads of four elements, entry j
 * of element e at rgrad[48 (e / 4) + 4 j + e % 4]; efor 12 per element,
 * 4 nq elements with the padding). */
typedef struct hy_fem_hd_model {
    int32_t nv, nt, nq;
    double mu, lambda;
    const int32_t* tet;                  /* 16 nq */
    const double *rest, *grad, *vol;     /* 3 nv, 12 nt, 4 nq */
    const double* mass;                  /* nv */
    const uint8_t* fixed;                /* nv */
    const int32_t *inc_start, *inc;      /* nv + 1, 4 nt */
    double *rgrad, *efor;                /* 48 nq each */
    double diag_scale, k_scale;          /* of the prepared step */
    double alpha;                        /* Rayleigh mass damping */
    const double* iso;                   /* nv: the preconditioner's constant part */
    double* pinv;                        /* 9 nv: the prepared step's inverse diagonal blocks */
} hy_fem_hd_model;

/* Where entry j of element e's rotated gradients lies in rgrad. */
HY_HD int64_t hy_fem_hd_quad(int64_t e, int j) { return 48 * (e >> 2) + 4 * (int64_t)j + (e & 3); }

/* ---- 3x3 helpers (row-major) */

HY_HD double hy_fem_hd_det3(const double A[9]) {
    return A[0] * (A[4] * A[8] - A[5] * A[7]) - A[1] * (A[3] * A[8] - A[5] * A[6]) +
           A[2] * (A[3] * A[7] - A[4] * A[6]);
}

/* ---- polar decomposition (hy_fem_polar_rotation, solvers/fem.h) */


/* Eigenvectors of a symmetric S (overwritten by its near-diagonal form) into
 * the columns of V, by cyclic Jacobi rotations (Numerical Recipes' form). */
HY_HD void hy_fem_hd_jacobi_eigen(double S[9], double V[9]) {
    for (int a = 0; a < 9; a++) V[a] = (a % 4 == 0) ? 1.0 : 0.0;
    for (int sweep = 0; sweep < 32; sweep++) {
        double off = S[1] * S[1] + S[2] * S[2] + S[5] * S[5];
        double diag = S[0] * S[0] + S[4] * S[4] + S[8] * S[8];
        if (!(off > 1e-34 * diag)) break;
        for (int k = 0; k < 3; k++) {
            int p = k == 2 ? 1 : 0, q = k == 0 ? 1 : 2; /* (0,1), (0,2), (1,2) */
            double apq = S[3 * p + q];
            if (apq == 0.0) continue;
            double theta = (S[3 * q + q] - S[3 * p + p]) / (2.0 * apq);
            double t = (theta >= 0 ? 1.0 : -1.0) / (fabs(theta) + sqrt(theta * theta + 1.0));
            double c = 1.0 / sqrt(t * t + 1.0), s = t * c;
            for (int r = 0; r < 3; r++) {
                double sp = S[3 * r + p], sq = S[3 * r + q];
                S[3 * r + p] = c * sp - s * sq;
                S[3 * r + q] = s * sp + c * sq;
            }
            for (int r = 0; r < 3; r++) {
                double sp = S[3 * p + r], sq = S[3 * q + r];
                S[3 * p + r] = c * sp - s * sq;
                S[3 * q + r] = s * sp + c * sq;
            }
            for (int r = 0; r < 3; r++) {
                double vp = V[3 * r + p], vq = V[3 * r + q];
                V[3 * r + p] = c * vp - s * vq;
                V[3 * r + q] = s * vp + c * vq;
            }
        }
    }
}

HY_HD void hy_fem_hd_normalize3(double v[3]) {
    double n = sqrt(v[0] * v[0] + v[1] * v[1] + v[2] * v[2]);
    v[0] /= n, v[1] /= n, v[2] /= n;
}

HY_HD void hy_fem_hd_cross3(const double a[3], const double b[3], double out[3]) {
    out[0] = a[1] * b[2] - a[2] * b[1];
    out[1] = a[2] * b[0] - a[0] * b[2];
    out[2] = a[0] * b[1] - a[1] * b[0];
}

/* A unit vector orthogonal to the unit vector u. */
HY_HD void hy_fem_hd_orthogonal3(const double u[3], double out[3]) {
    double e[3] = {0, 0, 0};
    int k = 0;
    if (fabs(u[1]) < fabs(u[k])) k = 1;
    if (fabs(u[2]) < fabs(u[k])) k = 2;
    e[k] = 1.0;
    hy_fem_hd_cross3(u, e, out);
    hy_fem_hd_normalize3(out);
}

/* Higham's scaled Newton iteration X <- (g X + X^-T / g) / 2, g =
 * sqrt(|X^-1| / |X|) (Frobenius): quadratic convergence to the polar
 * factor of a non-singular A, about five iterations for the deformations
 * of a step. 0 when it has not converged in 20 (the caller falls back). */
HY_HD int hy_fem_hd_newton_polar(const double A[9], double R[9]) {
    double X[9], Xi[9];
    int last = 0;
    for (int a = 0; a < 9; a++) X[a] = A[a];
    for (int it = 0; it < 20; it++) {
        if (!mat_inverse(X, Xi)) return 0;
        double nx = 0, ni = 0, diff = 0;
        for (int a = 0; a < 9; a++) nx += X[a] * X[a], ni += Xi[a] * Xi[a];
        double g = sqrt(sqrt(ni / nx));
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                double y = 0.5 * (g * X[3 * i + j] + Xi[3 * j + i] / g);
                diff += (y - X[3 * i + j]) * (y - X[3 * i + j]);
                R[3 * i + j] = y;
            }
        for (int a = 0; a < 9; a++) X[a] = R[a];
        /* a step under 1e-5 leaves an error of ~1e-10, which the next
         * (quadratic) step takes to round-off */
        if (last || diff < 1e-30) return 1;
        last = diff < 1e-10;
    }
    return 0;
}

/* The rotation R of the polar decomposition F = R S (see
 * hy_fem_polar_rotation in solvers/fem.h). */
HY_HD void hy_fem_hd_polar(const double F[9], double R[9]) {
    /* Scaled so the largest entry is 1: F^T F can neither overflow nor
     * underflow, and the thresholds below are relative. */
    double big = 0.0;
    for (int a = 0; a < 9; a++) big = fmax(big, fabs(F[a]));
    if (!(big > 0) || !isfinite(big)) {
        for (int a = 0; a < 9; a++) R[a] = (a % 4 == 0) ? 1.0 : 0.0;
        return;
    }
    double A[9], S[9], V[9];
    for (int a = 0; a < 9; a++) A[a] = F[a] / big;
    if (hy_fem_hd_det3(A) > 1e-6 && hy_fem_hd_newton_polar(A, R)) return;
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) S[3 * i + j] = A[i] * A[j] + A[3 + i] * A[3 + j] + A[6 + i] * A[6 + j];
    hy_fem_hd_jacobi_eigen(S, V);
    /* the two largest eigenvalues' directions v1, v2; v3 completes a
     * right-handed frame */
    int o[3] = {0, 1, 2};
    for (int i = 0; i < 3; i++)
        for (int j = i + 1; j < 3; j++)
            if (S[4 * o[j]] > S[4 * o[i]]) {
                int t = o[i];
                o[i] = o[j], o[j] = t;
            }
    double v[3][3], u[3][3];
    for (int k = 0; k < 2; k++)
        for (int r = 0; r < 3; r++) v[k][r] = V[3 * r + o[k]];
    hy_fem_hd_cross3(v[0], v[1], v[2]);
    hy_fem_hd_normalize3(v[2]);
    /* u1 = F v1 / |F v1| (|F v1| >= 1/3 after scaling: the largest
     * singular value is at least the largest entry over 3) */
    for (int k = 0; k < 2; k++)
        for (int r = 0; r < 3; r++) u[k][r] = A[3 * r] * v[k][0] + A[3 * r + 1] * v[k][1] + A[3 * r + 2] * v[k][2];
    hy_fem_hd_normalize3(u[0]);
    double d = u[0][0] * u[1][0] + u[0][1] * u[1][1] + u[0][2] * u[1][2];
    for (int r = 0; r < 3; r++) u[1][r] -= d * u[0][r];
    if (sqrt(u[1][0] * u[1][0] + u[1][1] * u[1][1] + u[1][2] * u[1][2]) > 1e-12)
        hy_fem_hd_normalize3(u[1]);
    else
        hy_fem_hd_orthogonal3(u[0], u[1]); /* F of rank 1: any completion is a rotation */
    hy_fem_hd_cross3(u[0], u[1], u[2]);
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++) R[3 * i + j] = u[0][i] * v[0][j] + u[1][i] * v[1][j] + u[2][i] * v[2][j];
}

/* ---- element kernels */

/* Deformation gradient F = sum_i x_i b_i^T, from edge vectors off x_0. */
HY_HD void hy_fem_hd_deformation_gradient(const int32_t t[4], const double b[12], const double* x, double F[9]) {
    const double* x0 = x + 3 * (int64_t)t[0];
    for (int a = 0; a < 9; a++) F[a] = 0.0;
    for (int i = 1; i < 4; i++) {
        const double* xi = x + 3 * (int64_t)t[i];
        for (int a = 0; a < 3; a++) {
            double d = xi[a] - x0[a];
            for (int c = 0; c < 3; c++) F[3 * a + c] += d * b[3 * i + c];
        }
    }
}

/* q_i = scale * R V sigma(G) b_i for G = sum_i u_i b_i^T (u_0 = 0). */
HY_HD void hy_fem_hd_element_apply(const double b[12], double vol, double mu, double lambda, const double R[9],
                                   const double u[9], double scale, double q[12]) {
    double G[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 1; i < 4; i++)
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++) G[3 * a + c] += u[3 * (i - 1) + a] * b[3 * i + c];
    double tr = G[0] + G[4] + G[8], sig[9];
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < 3; c++) sig[3 * a + c] = mu * (G[3 * a + c] + G[3 * c + a]);
    sig[0] += lambda * tr, sig[4] += lambda * tr, sig[8] += lambda * tr;
    double s = scale * vol;
    for (int i = 0; i < 4; i++) {
        const double* bi = b + 3 * i;
        double w[3];
        for (int a = 0; a < 3; a++) w[a] = s * (sig[3 * a] * bi[0] + sig[3 * a + 1] * bi[1] + sig[3 * a + 2] * bi[2]);
        for (int a = 0; a < 3; a++) q[3 * i + a] = R[3 * a] * w[0] + R[3 * a + 1] * w[1] + R[3 * a + 2] * w[2];
    }
}

/* hy_fem_hd_rotate (below) after its polar decomposition, R the element's
 * rotation (fem.c decomposes four elements at once, with the same bits). */
HY_HD void hy_fem_hd_rotate_by(const int32_t t[4], const double b[12], double vol, double mu, double lambda,
                               const double* rest, const double* x, const double* v, double vscale, const double R[9],
                               double* rb, int stride, double q[12]) {
    double u[9];
    for (int i = 0; i < 4; i++)
        for (int a = 0; a < 3; a++)
            rb[stride * (3 * i + a)] = R[3 * a] * b[3 * i] + R[3 * a + 1] * b[3 * i + 1] + R[3 * a + 2] * b[3 * i + 2];
    const double* X0 = rest + 3 * (int64_t)t[0];
    double y0[3];
    for (int a = 0; a < 3; a++) y0[a] = x[3 * (int64_t)t[0] + a] + (v ? vscale * v[3 * (int64_t)t[0] + a] : 0.0);
    for (int i = 1; i < 4; i++) {
        double d[3];
        for (int a = 0; a < 3; a++)
            d[a] = x[3 * (int64_t)t[i] + a] + (v ? vscale * v[3 * (int64_t)t[i] + a] : 0.0) - y0[a];
        for (int a = 0; a < 3; a++)
            u[3 * (i - 1) + a] = R[a] * d[0] + R[3 + a] * d[1] + R[6 + a] * d[2] - (rest[3 * (int64_t)t[i] + a] - X0[a]);
    }
    hy_fem_hd_element_apply(b, vol, mu, lambda, R, u, -1.0, q);
}

/* One element of the step's rotation pass: its rotation at x, its rotated
 * gradients c_i = R b_i into rb[stride * (3 i + a)], and its corner forces
 * -R K (R^T (x + vscale v) - X) into q (v may be NULL: x alone). rest: the
 * rest positions. */
HY_HD void hy_fem_hd_rotate(const int32_t t[4], const double b[12], double vol, double mu, double lambda,
                            const double* rest, const double* x, const double* v, double vscale, double* rb,
                            int stride, double q[12]) {
    double F[9], R[9];
    hy_fem_hd_deformation_gradient(t, b, x, F);
    hy_fem_hd_polar(F, R);
    hy_fem_hd_rotate_by(t, b, vol, mu, lambda, rest, x, v, vscale, R, rb, stride, q);
}

/* One element of the matrix-vector product: corner forces +R K R^T p into
 * out[12], fixed vertices read as zero, from its rotated gradients
 * rb[stride * j]. The arithmetic, in its order, of one lane of fem.c's
 * four-element kernel, so both give the same bits:
 * q_i = V sigma(sum_j p_j c_j^T) c_i (p_0 subtracted: K ignores
 * translations). */
HY_HD void hy_fem_hd_apply_element(const int32_t t[4], const double* rb, int stride, double vol, double mu,
                                   double lambda, const uint8_t* fixed, const double* p, double out[12]) {
    double P[4][3];
    for (int i = 0; i < 4; i++) {
        int32_t v = t[i];
        int free_v = !fixed[v];
        for (int a = 0; a < 3; a++) P[i][a] = free_v ? p[3 * (int64_t)v + a] : 0.0;
    }
    double G[9] = {0, 0, 0, 0, 0, 0, 0, 0, 0};
    for (int i = 1; i < 4; i++)
        for (int a = 0; a < 3; a++) {
            double d = P[i][a] - P[0][a];
            for (int k = 0; k < 3; k++) G[3 * a + k] += d * rb[stride * (3 * i + k)];
        }
    double tr = G[0] + G[4] + G[8], sig[9];
    for (int a = 0; a < 3; a++)
        for (int k = 0; k < 3; k++) sig[3 * a + k] = mu * (G[3 * a + k] + G[3 * k + a]);
    sig[0] += lambda * tr, sig[4] += lambda * tr, sig[8] += lambda * tr;
    for (int i = 0; i < 4; i++) {
        double c0 = rb[stride * (3 * i)], c1 = rb[stride * (3 * i + 1)], c2 = rb[stride * (3 * i + 2)];
        for (int a = 0; a < 3; a++) out[3 * i + a] = vol * (sig[3 * a] * c0 + sig[3 * a + 1] * c1 + sig[3 * a + 2] * c2);
    }
}

/* ---- vertex kernels */

/* Sum of the corner forces at vertex v, in element order. */
HY_HD void hy_fem_hd_gather(const int32_t* inc_start, const int32_t* inc, const double* efor, int32_t v,
                            double out[3]) {
    out[0] = out[1] = out[2] = 0.0;
    for (int32_t k = inc_start[v]; k < inc_start[v + 1]; k++) {
        const double* f = efor + 3 * (int64_t)inc[k];
        out[0] += f[0], out[1] += f[1], out[2] += f[2];
    }
}

/* One vertex row of the system's product y = A p: (m (1 + dt alpha)) p +
 * (dt beta + dt^2) k, k its gathered corner forces; a fixed vertex's row is
 * the identity. */
HY_HD void hy_fem_hd_matvec_vertex(int fixed, double mass, double diag_scale, double k_scale, const double k[3],
                                   const double p[3], double y[3]) {
    if (fixed) {
        y[0] = p[0], y[1] = p[1], y[2] = p[2];
        return;
    }
    double s = mass * diag_scale;
    for (int a = 0; a < 3; a++) y[a] = s * p[a] + k_scale * k[a];
}

/* One vertex of the prepared step's right-hand side pass: r[3] =
 * dt (f + m g - alpha m v0 + f_ext) from its gathered corner forces (the
 * rotation pass's, at x0 + vscale v0), and P[9] its inverse diagonal block
 * m (1 + dt alpha) I + (dt beta + dt^2) (iso I + sum_corners V (mu +
 * lambda) c c^T) (+ extra, 9 per vertex, when not NULL). A fixed vertex
 * gets r = 0, P = I; a block that cannot be inverted the mass part alone.
 * f_ext: 3 nv or NULL. */
HY_HD void hy_fem_hd_rhs_vertex(const hy_fem_hd_model* m, int32_t v, double dt, const double g[3], const double* v0,
                                const double* f_ext, const double* extra, double r[3], double P[9]) {
    if (m->fixed[v]) {
        r[0] = r[1] = r[2] = 0.0;
        for (int a = 0; a < 9; a++) P[a] = (a % 4 == 0) ? 1.0 : 0.0;
        return;
    }
    double f[3], mv = m->mass[v];
    hy_fem_hd_gather(m->inc_start, m->inc, m->efor, v, f);
    for (int a = 0; a < 3; a++)
        r[a] = dt * (f[a] + mv * g[a] - m->alpha * mv * v0[3 * (int64_t)v + a] + (f_ext ? f_ext[3 * (int64_t)v + a] : 0.0));
    /* the rotated part's upper triangle (xx xy xz yy yz zz), then the
     * isotropic part, the same every step */
    double U[6] = {0, 0, 0, 0, 0, 0}, D[9];
    for (int32_t k = m->inc_start[v]; k < m->inc_start[v + 1]; k++) {
        int32_t e = m->inc[k] / 4, i = m->inc[k] % 4;
        const double rb[3] = {m->rgrad[hy_fem_hd_quad(e, 3 * i)], m->rgrad[hy_fem_hd_quad(e, 3 * i + 1)],
                              m->rgrad[hy_fem_hd_quad(e, 3 * i + 2)]};
        double w = m->vol[e] * (m->mu + m->lambda);
        U[0] += w * rb[0] * rb[0], U[1] += w * rb[0] * rb[1], U[2] += w * rb[0] * rb[2];
        U[3] += w * rb[1] * rb[1], U[4] += w * rb[1] * rb[2], U[5] += w * rb[2] * rb[2];
    }
    D[0] = U[0] + m->iso[v], D[1] = D[3] = U[1], D[2] = D[6] = U[2];
    D[4] = U[3] + m->iso[v], D[5] = D[7] = U[4], D[8] = U[5] + m->iso[v];
    for (int a = 0; a < 9; a++) D[a] *= m->k_scale;
    for (int a = 0; a < 3; a++) D[4 * a] += mv * m->diag_scale;
    if (extra)
        for (int a = 0; a < 9; a++) D[a] += extra[9 * (int64_t)v + a];
    if (!mat_inverse(D, P))
        for (int a = 0; a < 9; a++) P[a] = (a % 4 == 0) ? 1.0 / (mv * m->diag_scale) : 0.0;
}


/* ---- the assembled product (solvers/fem.c)
 *
 * The prepared step's system by vertex rows of 3 x 3 blocks: a free row v
 * keeps its upper blocks (columns w >= v, free, ascending, the diagonal
 * first) at a_val[12 a_start[v] ..], each by its three columns padded to
 * four doubles (column b's entry r at 4 b + r, the padding 0); a lower
 * block A_vw (w < v) is the transpose of row w's block l_slot[k], for k in
 * [l_start[v], l_start[v + 1]) and w = l_row[k], by ascending w. a_slot[16 e
 * + 4 i + j] is the block of element e's corner j in corner i's row, -1
 * when either corner is fixed or t[j] < t[i]. A fixed row has no blocks:
 * its product is p itself, and fixed columns are left out (p read as zero
 * there), as in the matrix-free product. fem.c runs these rows in vector
 * lanes, each lane doing the arithmetic below in its order, so both give
 * the same bits. */
typedef struct hy_fem_hd_asm {
    const int32_t *a_start, *a_col, *a_slot; /* nv + 1, blocks, 16 nt */
    const int32_t *l_start, *l_slot, *l_row; /* nv + 1, lower blocks, lower blocks */
    double* a_val;                           /* 12 per block */
} hy_fem_hd_asm;

/* Free row v's blocks from the prepared step's rotated gradients: the
 * diagonal starts at m (1 + dt alpha) I; then per incident corner i (in
 * element order) and corner j of its element, with w = (dt beta + dt^2) V,
 * u = w mu c_i, l = w lambda c_i and d = u . c_j, the block of (i, j) gets
 * column b's entry r += (u_b c_j[r] + c_j[b] l_r) + (d if r == b, else 0). */
HY_HD void hy_fem_hd_asm_row(const hy_fem_hd_model* m, const hy_fem_hd_asm* a, int32_t v) {
    if (m->fixed[v]) return;
    int32_t s0 = a->a_start[v];
    double* row = a->a_val + 12 * (int64_t)s0;
    for (int64_t k = 0; k < 12 * (int64_t)(a->a_start[v + 1] - s0); k++) row[k] = 0.0;
    double ms = m->mass[v] * m->diag_scale;
    double dg[12] = {ms, 0, 0, 0, 0, ms, 0, 0, 0, 0, ms, 0}; /* the diagonal block, written last */
    for (int32_t k = m->inc_start[v]; k < m->inc_start[v + 1]; k++) {
        int32_t e = m->inc[k] / 4, i = m->inc[k] % 4;
        const double* rb = m->rgrad + hy_fem_hd_quad(e, 0);
        double w = m->k_scale * m->vol[e], u[3], l[3];
        for (int b = 0; b < 3; b++) u[b] = w * m->mu * rb[4 * (3 * i + b)], l[b] = w * m->lambda * rb[4 * (3 * i + b)];
        const int32_t* slot = a->a_slot + 16 * (int64_t)e + 4 * i;
        for (int j = 0; j < 4; j++) {
            if (j != i && slot[j] < 0) continue;
            double* blk = j == i ? dg : a->a_val + 12 * (int64_t)slot[j];
            double c[3] = {rb[4 * (3 * j)], rb[4 * (3 * j + 1)], rb[4 * (3 * j + 2)]};
            double d = u[0] * c[0] + u[1] * c[1] + u[2] * c[2];
            for (int b = 0; b < 3; b++)
                for (int r = 0; r < 3; r++) blk[4 * b + r] += (u[b] * c[r] + c[b] * l[r]) + (r == b ? d : 0.0);
        }
    }
    for (int k = 0; k < 12; k++) row[k] = dg[k];
}

/* Row v of y = A p: the upper blocks' columns times p_w's entries, summed
 * block by block; the lower blocks' entries, column b's entry r times
 * p_w[r], summed block by block per (b, r), then over r. */
HY_HD void hy_fem_hd_asm_apply_row(const hy_fem_hd_asm* a, const uint8_t* fixed, const double* p, int32_t v,
                                   double y[3]) {
    const double* pv = p + 3 * (int64_t)v;
    if (fixed[v]) {
        y[0] = pv[0], y[1] = pv[1], y[2] = pv[2];
        return;
    }
    double acc[3] = {0, 0, 0}, t[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (int32_t s = a->a_start[v]; s < a->a_start[v + 1]; s++) {
        const double *blk = a->a_val + 12 * (int64_t)s, *pw = p + 3 * (int64_t)a->a_col[s];
        for (int r = 0; r < 3; r++) acc[r] += (blk[r] * pw[0] + blk[4 + r] * pw[1]) + blk[8 + r] * pw[2];
    }
    for (int32_t k = a->l_start[v]; k < a->l_start[v + 1]; k++) {
        const double *lb = a->a_val + 12 * (int64_t)a->l_slot[k], *pw = p + 3 * (int64_t)a->l_row[k];
        for (int b = 0; b < 3; b++)
            for (int r = 0; r < 3; r++) t[b][r] += lb[4 * b + r] * pw[r];
    }
    for (int b = 0; b < 3; b++) y[b] = acc[b] + ((t[b][0] + t[b][1]) + t[b][2]);
}

#endif
