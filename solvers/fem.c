/* Corotational linear FEM on tetrahedra with backward Euler (see fem.h).
 *
 * Design notes.
 * - Matrix-free. Each element keeps the gradients b_i of its four linear
 *   shape functions (12 doubles) and its volume, and per step the
 *   gradients rotated by its rotation, c_i = R b_i (12). Applying the
 *   element's corotated stiffness R K R^T to a vector p is
 *   G = sum_i p_i c_i^T, sigma = mu (G + G^T) + lambda tr(G) I,
 *   q_i = V sigma c_i (the rotations cancel inside: R^T sigma(G) R is
 *   sigma(R^T G R)): about 130 flops and 13 doubles of the element read,
 *   where an assembled 12x12 block would read 144. The rotations change
 *   every step, so an assembled matrix is rebuilt every step: matrix-free
 *   makes that rebuild the cheap rotation pass, which pays for solves of a
 *   few products. A long solve on the CPU switches to the step's system
 *   assembled by vertex rows (below, "the assembled product"): per product
 *   ~15 3x3 blocks a vertex instead of its ~5 elements' kernels and ~19
 *   corners gathered, 2.5 times as fast on a fem64 block.
 * - Deterministic scatter. An element pass writes each element's four
 *   corner forces into its own slots; a vertex pass then sums the slots of
 *   each vertex's incident corners in element order (a CSR incidence
 *   built once). No atomics, no thread-dependent order: with CG's fixed
 *   block reductions (solvers/cg.c) a step is bit-identical for any pool.
 * - Rotation by polar decomposition: Higham's scaled Newton iteration where
 *   det F is clearly positive (the common case, ~5 iterations, a quarter of
 *   the cost of the eigenvector route on the 101k-element beam); otherwise,
 *   and where Newton does not converge, through the eigenvectors of F^T F
 *   (cyclic Jacobi on the scaled matrix), U from F V by Gram-Schmidt of the
 *   two largest directions and a cross product for the third. The cross
 *   product makes R proper: an inverted element gets the rotation of
 *   Irving et al. 2004 (smallest singular value negated), so its elastic
 *   force pushes it back to positive volume; a flat or collapsed element
 *   still gets a rotation (the missing directions are completed), never
 *   NaN. Rejected: Higham's Newton iteration (needs det F != 0), and
 *   Mueller et al.'s warm-started quaternion iteration (a step would then
 *   depend on the previous step's rotations, not only on its inputs). The
 *   CPU runs the Newton iteration on four elements at once in vector lanes
 *   (polar4), the same bits as the scalar code the GPU runs.
 * - Fixed vertices: their rows and columns of the system are replaced by
 *   the identity (the matvec reads them as zero, returns p there) and their
 *   right-hand side is zero, which keeps the system SPD and dv = 0 there.
 * - Preconditioner: the inverse of each vertex's 3x3 diagonal block,
 *   m (1 + dt alpha) I + (dt beta + dt^2) sum_e V (mu |b|^2 I +
 *   (mu + lambda) (R b)(R b)^T), plus an additive coarse level over
 *   aggregates of vertices for objects of 500 vertices or more (below,
 *   "the preconditioner's coarse level"). */
#include "solvers/fem.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/hd.h"
#include "core/simd.h"
#include "core/tetmesh.h"
#include "solvers/amg.h"
#include "solvers/batch_hd.h"
#include "solvers/spchol.h"
#include "solvers/cg.h"
#include "solvers/fem_cuda.h"
#include "solvers/fem_hd.h"
#include "solvers/fem_internal.h"

#define ELEM_GRAIN 512
#define QUAD_GRAIN (ELEM_GRAIN / 4)

/* The rotated gradients of a step are laid out by quads of four
 * consecutive elements, each entry's four values side by side: entry j
 * (0..11) of element e is at QUAD(e, j). The matvec's element kernel then
 * loads them straight into vector registers and works on four elements at
 * once (GCC's vector types: two SSE2 halves, or one AVX2 register where
 * the CPU has it). Its corner forces go out element by element (12
 * doubles each), which the vertices' gather reads contiguously. */
#define QUAD(e, j) (48 * ((size_t)(e) >> 2) + 4 * (size_t)(j) + ((size_t)(e) & 3))
#define VERTEX_GRAIN 1024


/* ---- polar decomposition (solvers/fem_hd.h) */

void hy_fem_polar_rotation(const double F[9], double R[9]) { hy_fem_hd_polar(F, R); }

/* ---- element kernels */

typedef struct elem_ctx {
    hy_fem_model* m;
    const double* x;   /* positions for the rotation and the force */
    const double* v;   /* NULL, or velocities added to x as x + vscale v */
    double vscale;
    const double* p;   /* APPLY: the vector K' is applied to */
} elem_ctx;

typedef double v4d __attribute__((vector_size(32)));

/* (a macro: a function returning a vector type would change the ABI with
 * the target) */
#define LOAD4(v, ptr) memcpy(&(v), (ptr), sizeof(v4d))

/* hy_fem_hd_polar of four matrices at once, each lane's arithmetic that of
 * the scalar code in its order (no contraction), so the same bits: the
 * scaling and the determinant's test per lane, then Higham's Newton
 * iteration (hy_fem_hd_newton_polar) in vector registers, each lane
 * stopping where the scalar loop would return. A lane that leaves the
 * Newton path (det not clearly positive, a singular iterate, no
 * convergence in 20) is done again by hy_fem_hd_polar alone, which takes
 * the same path to its eigenvector route. The decomposition is most of the
 * rotation pass (~70% of a fem64 block's prepare); its divisions and
 * square roots are latency the lanes overlap. */
static inline __attribute__((always_inline)) void polar4(double F[4][9], double R[4][9]) {
    v4d X[9];
    int live[4], scalar[4], last[4] = {0, 0, 0, 0};
    for (int l = 0; l < 4; l++) {
        double big = 0.0, A[9];
        for (int a = 0; a < 9; a++) big = fmax(big, fabs(F[l][a]));
        int ok = big > 0 && isfinite(big);
        for (int a = 0; a < 9; a++) A[a] = ok ? F[l][a] / big : (a % 4 == 0);
        ok = ok && hy_fem_hd_det3(A) > 1e-6;
        for (int a = 0; a < 9; a++) X[a][l] = ok ? A[a] : (a % 4 == 0);
        live[l] = ok, scalar[l] = !ok;
    }
    for (int it = 0; it < 20 && (live[0] | live[1] | live[2] | live[3]); it++) {
        /* mat_inverse (core/hd.h), its expressions as written there */
        v4d d = X[0] * (X[4] * X[8] - X[5] * X[7]) - X[1] * (X[3] * X[8] - X[5] * X[6]) +
                X[2] * (X[3] * X[7] - X[4] * X[6]);
        for (int l = 0; l < 4; l++)
            if (live[l] && (!(fabs(d[l]) > 0) || !isfinite(d[l]))) live[l] = 0, scalar[l] = 1;
        for (int l = 0; l < 4; l++)
            if (!live[l]) d[l] = 1.0; /* finished lanes ride along on harmless numbers */
        v4d s = 1.0 / d, Xi[9];
        Xi[0] = (X[4] * X[8] - X[5] * X[7]) * s;
        Xi[1] = (X[2] * X[7] - X[1] * X[8]) * s;
        Xi[2] = (X[1] * X[5] - X[2] * X[4]) * s;
        Xi[3] = (X[5] * X[6] - X[3] * X[8]) * s;
        Xi[4] = (X[0] * X[8] - X[2] * X[6]) * s;
        Xi[5] = (X[2] * X[3] - X[0] * X[5]) * s;
        Xi[6] = (X[3] * X[7] - X[4] * X[6]) * s;
        Xi[7] = (X[1] * X[6] - X[0] * X[7]) * s;
        Xi[8] = (X[0] * X[4] - X[1] * X[3]) * s;
        v4d nx = {0, 0, 0, 0}, ni = {0, 0, 0, 0}, diff = {0, 0, 0, 0}, g, Y[9];
        for (int a = 0; a < 9; a++) nx += X[a] * X[a], ni += Xi[a] * Xi[a];
        v4d q = ni / nx;
        for (int l = 0; l < 4; l++) g[l] = live[l] ? sqrt(sqrt(q[l])) : 1.0;
        for (int i = 0; i < 3; i++)
            for (int j = 0; j < 3; j++) {
                v4d y = 0.5 * (g * X[3 * i + j] + Xi[3 * j + i] / g);
                diff += (y - X[3 * i + j]) * (y - X[3 * i + j]);
                Y[3 * i + j] = y;
            }
        for (int l = 0; l < 4; l++) {
            if (!live[l]) continue;
            for (int a = 0; a < 9; a++) R[l][a] = Y[a][l];
            if (last[l] || diff[l] < 1e-30) live[l] = 0;
            else last[l] = diff[l] < 1e-10;
        }
        for (int a = 0; a < 9; a++) X[a] = Y[a];
        if (it == 19)
            for (int l = 0; l < 4; l++) scalar[l] |= live[l];
    }
    for (int l = 0; l < 4; l++)
        if (scalar[l]) hy_fem_hd_polar(F[l], R[l]);
}

/* hy_fem_hd_rotate_by for the four elements of the quad at e (e % 4 == 0),
 * one per lane, each lane's arithmetic that of the scalar code in its
 * order: the rotated gradients go straight into the quad's layout, the
 * corner forces element by element. */
static inline __attribute__((always_inline)) void rotate_by4(const elem_ctx* c, int64_t e, double R[4][9]) {
    const hy_fem_model* m = c->m;
    const int32_t* t = m->tet + 4 * e; /* lane l's corner i at t[4 l + i] */
    const double* b = m->grad + 12 * e;
    /* (the initialisers quiet GCC: every entry is set below) */
    v4d Rv[9] = {0}, B[12] = {0}, Y[4][3] = {{{0}}}, X[4][3] = {{{0}}}, u[9] = {0}, G[9] = {0}, sig[9] = {0};
    for (int a = 0; a < 9; a++) Rv[a] = (v4d){R[0][a], R[1][a], R[2][a], R[3][a]};
    for (int j = 0; j < 12; j++) B[j] = (v4d){b[j], b[12 + j], b[24 + j], b[36 + j]};
    double* rb = m->rgrad + 48 * (size_t)(e >> 2);
    for (int i = 0; i < 4; i++)
        for (int a = 0; a < 3; a++) {
            v4d r = Rv[3 * a] * B[3 * i] + Rv[3 * a + 1] * B[3 * i + 1] + Rv[3 * a + 2] * B[3 * i + 2];
            memcpy(rb + 4 * (3 * i + a), &r, sizeof r);
        }
    const double *x = c->x, *v = c->v;
    v4d vs = {c->vscale, c->vscale, c->vscale, c->vscale};
    for (int i = 0; i < 4; i++)
        for (int a = 0; a < 3; a++) {
            size_t w0 = 3 * (size_t)t[i] + (size_t)a, w1 = 3 * (size_t)t[4 + i] + (size_t)a,
                   w2 = 3 * (size_t)t[8 + i] + (size_t)a, w3 = 3 * (size_t)t[12 + i] + (size_t)a;
            v4d xv = {x[w0], x[w1], x[w2], x[w3]};
            v4d add = {0.0, 0.0, 0.0, 0.0};
            if (v) add = vs * (v4d){v[w0], v[w1], v[w2], v[w3]};
            Y[i][a] = xv + add;
            X[i][a] = (v4d){m->rest[w0], m->rest[w1], m->rest[w2], m->rest[w3]};
        }
    for (int i = 1; i < 4; i++) {
        v4d d[3];
        for (int a = 0; a < 3; a++) d[a] = Y[i][a] - Y[0][a];
        for (int a = 0; a < 3; a++)
            u[3 * (i - 1) + a] = Rv[a] * d[0] + Rv[3 + a] * d[1] + Rv[6 + a] * d[2] - (X[i][a] - X[0][a]);
    }
    /* hy_fem_hd_element_apply with scale -1 */
    for (int i = 1; i < 4; i++)
        for (int a = 0; a < 3; a++)
            for (int k = 0; k < 3; k++) G[3 * a + k] += u[3 * (i - 1) + a] * B[3 * i + k];
    v4d tr = G[0] + G[4] + G[8], mu = {m->mu, m->mu, m->mu, m->mu}, lambda = {m->lambda, m->lambda, m->lambda, m->lambda};
    for (int a = 0; a < 3; a++)
        for (int k = 0; k < 3; k++) sig[3 * a + k] = mu * (G[3 * a + k] + G[3 * k + a]);
    sig[0] += lambda * tr, sig[4] += lambda * tr, sig[8] += lambda * tr;
    v4d sv;
    LOAD4(sv, m->vol + e);
    sv = -1.0 * sv;
    double out[48]; /* entry j of lane l at 4 j + l */
    for (int i = 0; i < 4; i++) {
        v4d w[3];
        for (int a = 0; a < 3; a++)
            w[a] = sv * (sig[3 * a] * B[3 * i] + sig[3 * a + 1] * B[3 * i + 1] + sig[3 * a + 2] * B[3 * i + 2]);
        for (int a = 0; a < 3; a++) {
            v4d q = Rv[3 * a] * w[0] + Rv[3 * a + 1] * w[1] + Rv[3 * a + 2] * w[2];
            memcpy(out + 4 * (3 * i + a), &q, sizeof q);
        }
    }
    double* ef = m->efor + 12 * e;
    for (int l = 0; l < 4; l++)
        for (int j = 0; j < 12; j++) ef[12 * l + j] = out[4 * j + l];
}

/* Rotations at x and corner forces -R K (R^T (x + vscale v) - X)
 * (solvers/fem_hd.h, the arithmetic the GPU shares) of the elements
 * [e0, e1), four at a time. */
static inline __attribute__((always_inline)) void rotate_elements(const elem_ctx* c, int64_t e0, int64_t e1) {
    hy_fem_model* m = c->m;
    int64_t e = e0;
    for (; e + 4 <= e1; e += 4) {
        double F[4][9], R[4][9];
        for (int l = 0; l < 4; l++) hy_fem_hd_deformation_gradient(m->tet + 4 * (e + l), m->grad + 12 * (e + l), c->x, F[l]);
        polar4(F, R);
        rotate_by4(c, e, R);
    }
    for (; e < e1; e++)
        hy_fem_hd_rotate(m->tet + 4 * e, m->grad + 12 * e, m->vol[e], m->mu, m->lambda, m->rest, c->x, c->v,
                         c->vscale, &m->rgrad[QUAD(e, 0)], 4, m->efor + 12 * e);
}

/* The vector passes are compiled twice, generic (SSE2 pairs) and, on
 * x86-64 GCC, in AVX2 registers (no FMA: the same rounding), the copy the
 * CPU runs picked at run time (hy_fem_simd). FEM_LANES(name, params, args)
 * defines name_lanes(params), which runs the always-inline name(args) in
 * that copy. */
static int simd_state = -1;

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define FEM_LANES(name, params, args)                                                 \
    static void name##_generic params { name args; }                                  \
    __attribute__((target("avx2"))) static void name##_avx2 params { name args; }     \
    static void name##_lanes params {                                                 \
        if (hy_simd_on(&simd_state)) name##_avx2 args;                                \
        else name##_generic args;                                                     \
    }
#else
#define FEM_LANES(name, params, args) \
    static void name##_lanes params { name args; }
#endif

FEM_LANES(rotate_elements, (const elem_ctx* c, int64_t e0, int64_t e1), (c, e0, e1))

static void rotate_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    rotate_elements_lanes(vctx, begin, end);
}

/* Corner forces +R K R^T p, fixed vertices read as zero, for the quads
 * [q0, q1). With the rotated gradients c_i = R b_i no rotation is left to
 * do: R^T sigma(G) R = sigma(R G R^T) and R G R^T = sum_i p_i c_i^T, so
 * q_i = V sigma(sum_j p_j c_j^T) c_i. Four elements per pass, one per
 * lane; each lane's arithmetic is that of one element in the same order,
 * so either compilation below gives the same bits. */

static inline __attribute__((always_inline)) void apply_quads(const hy_fem_model* m, const double* p, int64_t q0,
                                                              int64_t q1) {
    const v4d mu = {m->mu, m->mu, m->mu, m->mu}, lambda = {m->lambda, m->lambda, m->lambda, m->lambda};
    for (int64_t q = q0; q < q1; q++) {
        const int32_t* t = m->tet + 16 * q;
        const double* rb = m->rgrad + 48 * q;
        v4d P[4][3] = {{{0}}}; /* (all set below; the initialiser quiets GCC) */
        #pragma GCC unroll 12
        for (int i = 0; i < 4; i++) {
            double s[4][3]; /* corner i of each lane; built in registers, not through memory */
            #pragma GCC unroll 12
            for (int l = 0; l < 4; l++) {
                int32_t v = t[4 * l + i];
                int free_v = !m->fixed[v];
                #pragma GCC unroll 12
                for (int a = 0; a < 3; a++) s[l][a] = free_v ? p[3 * (size_t)v + (size_t)a] : 0.0;
            }
            #pragma GCC unroll 12
            for (int a = 0; a < 3; a++) P[i][a] = (v4d){s[0][a], s[1][a], s[2][a], s[3][a]};
        }
        /* the constant p0 is a translation, which K ignores (sum_i c_i = 0) */
        v4d G[9] = {0};
        #pragma GCC unroll 12
        for (int i = 1; i < 4; i++)
            #pragma GCC unroll 12
            for (int a = 0; a < 3; a++) {
                v4d d = P[i][a] - P[0][a], c;
                #pragma GCC unroll 12
                for (int k = 0; k < 3; k++) {
                    LOAD4(c, rb + 4 * (3 * i + k));
                    G[3 * a + k] += d * c;
                }
            }
        v4d tr = G[0] + G[4] + G[8], sig[9];
        #pragma GCC unroll 12
        for (int a = 0; a < 3; a++)
            #pragma GCC unroll 12
            for (int k = 0; k < 3; k++) sig[3 * a + k] = mu * (G[3 * a + k] + G[3 * k + a]);
        sig[0] += lambda * tr, sig[4] += lambda * tr, sig[8] += lambda * tr;
        v4d V, c0, c1, c2;
        LOAD4(V, m->vol + 4 * q);
        double out[48]; /* entry j of lane l at 4 j + l */
        #pragma GCC unroll 12
        for (int i = 0; i < 4; i++) {
            LOAD4(c0, rb + 4 * (3 * i));
            LOAD4(c1, rb + 4 * (3 * i + 1));
            LOAD4(c2, rb + 4 * (3 * i + 2));
            #pragma GCC unroll 12
            for (int a = 0; a < 3; a++) {
                v4d y = V * (sig[3 * a] * c0 + sig[3 * a + 1] * c1 + sig[3 * a + 2] * c2);
                memcpy(out + 4 * (3 * i + a), &y, sizeof y);
            }
        }
        /* corner forces element by element, for the vertices' gather */
        double* ef = m->efor + 48 * q;
        #pragma GCC unroll 12
        for (int l = 0; l < 4; l++)
            #pragma GCC unroll 12
            for (int j = 0; j < 12; j++) ef[12 * l + j] = out[4 * j + l];
    }
}

FEM_LANES(apply_quads, (const hy_fem_model* m, const double* p, int64_t q0, int64_t q1), (m, p, q0, q1))

static void apply_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    elem_ctx* c = vctx;
    apply_quads_lanes(c->m, c->p, begin, end);
}

int hy_fem_simd(int on) { return hy_simd_set(&simd_state, on); }

/* Sum of the corner forces at vertex v, in element order. */
static void gather(const hy_fem_model* m, int32_t v, double out[3]) {
    hy_fem_hd_gather(m->inc_start, m->inc, m->efor, v, out);
}

/* ---- vertex passes */

typedef struct step_ctx {
    hy_fem_model* m;
    const double *x0, *v0, *f_ext, *p, *extra;
    double *y, *f, *rhs;
    double dt, g[3];
} step_ctx;

/* Right-hand side and the inverse diagonal blocks (solvers/fem_hd.h). */
static void rhs_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    step_ctx* c = vctx;
    hy_fem_hd_model hv;
    hy_fem_view(c->m, &hv);
    for (int64_t v = begin; v < end; v++)
        hy_fem_hd_rhs_vertex(&hv, (int32_t)v, c->dt, c->g, c->v0, c->f_ext, c->extra, c->rhs + 3 * v,
                             c->m->pinv + 9 * v);
}

static void matvec_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    step_ctx* c = vctx;
    hy_fem_model* m = c->m;
    for (int64_t v = begin; v < end; v++) {
        double k[3] = {0, 0, 0};
        if (!m->fixed[v]) gather(m, (int32_t)v, k);
        hy_fem_hd_matvec_vertex(m->fixed[v], m->mass[v], m->diag_scale, m->k_scale, k, c->p + 3 * v, c->y + 3 * v);
    }
}

void hy_fem_view(const hy_fem_model* m, hy_fem_hd_model* out) {
    *out = (hy_fem_hd_model){m->nv,   m->nt,   m->nq,   m->mu,    m->lambda,     m->tet,     m->rest,
                             m->grad, m->vol,  m->mass, m->fixed, m->inc_start,  m->inc,     m->rgrad,
                             m->efor, m->diag_scale, m->k_scale, m->alpha, m->iso, m->pinv};
}

static void asm_build_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker);

/* A GPU call that failed: the GPU is dropped (said once) and the caller
 * runs the pass on the CPU, which gives the same bits; the rotation pass
 * of a step the GPU prepared is run on the host first (pool), for the
 * products that follow, and so are the rows of a system it assembled. */
static void gpu_drop(hy_fem_model* m, hy_pool* pool) {
    fprintf(stderr, "hyphys: fem: GPU cuda:%d dropped, the passes go on on the CPU: %s\n", m->device, hy_last_error());
    hy_fem_gpu_destroy(m->gpu);
    m->gpu = NULL;
    m->device = -1;
    if (m->gpu_x0) {
        elem_ctx ec = {.m = m, .x = m->gpu_x0, .v = m->gpu_v0, .vscale = m->gpu_vscale};
        hy_pool_for(pool, m->nt, ELEM_GRAIN, rotate_block, &ec);
        m->gpu_x0 = m->gpu_v0 = NULL;
    }
    if (m->asm_state > 0) {
        elem_ctx ec = {.m = m};
        hy_pool_for(pool, m->nv, VERTEX_GRAIN, asm_build_block, &ec);
    }
}

hy_status hy_fem_set_device(hy_fem_model* m, int device) {
    if (!m) return hy_fail(HY_ERR_INVALID_ARG, "fem: set device: NULL model");
    if (device == m->device && (device < 0 || m->gpu)) return HY_OK;
    hy_fem_gpu_destroy(m->gpu);
    m->gpu = NULL;
    m->device = -1;
    if (device < 0) return HY_OK;
    hy_fem_hd_model v;
    hy_fem_view(m, &v);
    hy_status s = hy_fem_gpu_create(device, &v, &m->gpu);
    if (!s) m->device = device;
    return s;
}

int hy_fem_device(const hy_fem_model* m) { return m && m->gpu ? m->device : -1; }

int64_t hy_fem_gpu_bytes(const hy_fem_model* m) {
    int64_t up = 0, down = 0;
    if (m && m->gpu) hy_fem_gpu_totals(m->gpu, NULL, NULL, &up, &down);
    return up + down;
}

/* ---- the assembled product
 *
 * The matrix-free product costs an element pass (G, sigma, four corner
 * forces: ~150 flops an element) and a gather of every vertex's incident
 * corners (~19 a vertex in a fem64 block) per CG iteration. Assembled, a
 * vertex's row of the step's system is its ~15 neighbours' 3 x 3 blocks,
 *   A_vv = m_v (1 + dt alpha) I + (dt beta + dt^2) K_vv,
 *   A_vw = (dt beta + dt^2) K_vw, K_vw = sum_e V (mu (c_v . c_w) I +
 *          mu c_w c_v^T + lambda c_v c_w^T)
 * over the elements e holding both (c the rotated gradients of the step,
 * the same expansion of q_i = V sigma(sum_j p_j c_j^T) c_i), and a product
 * is ~15 block products a vertex read straight from memory. A_wv = A_vw^T,
 * so a row keeps its upper blocks (w >= v, the diagonal first) and reads
 * its lower ones from the rows above it, transposed: half the memory, and
 * half the rebuild. Each block is kept by columns padded to four doubles:
 * an upper block's product is three vector multiply-adds of a column by a
 * broadcast entry of p_w; a lower block's entry a is its column a times
 * p_w, summed lane by lane over the row's lower blocks and the lanes added
 * at the row's end. Every lane's order is the same with SSE2 pairs or AVX2
 * (the same bits). The rotations
 * change every step, so the blocks are rebuilt every step; the rebuild
 * costs a few matrix-free products, so a step assembles only after
 * ASM_MF_PRODUCTS of them (CG's start and a short solve stay matrix-free, a
 * long one pays the rebuild back: docs/design/DEFORMABLE.md). Rows are
 * built and applied vertex by vertex, each row summing its incident corners
 * in element order: the same bits for any pool. Fixed vertices keep the
 * matrix-free product's meaning: their rows are the identity and their
 * columns are left out (p read as zero there). A model on a GPU assembles
 * at the same product, its rows built and applied there by the scalar
 * functions of solvers/fem_hd.h (hy_fem_hd_asm_row, hy_fem_hd_asm_apply_row)
 * whose arithmetic each lane below does in the same order: the same bits
 * (tests/test_fem_passes.c runs them on the host against these passes). */

/* Objects a world may step in a batch (under HY_BATCH_MAX_ITEMS elements,
 * solvers/batch_hd.h) keep the matrix-free product, the batch's
 * arithmetic, so their steps have the same bits batched or alone; they
 * are small, and rarely iterate long enough to pay the rebuild. */
#define ASM_MIN_ELEMENTS HY_BATCH_MAX_ITEMS
/* Matrix-free products of a step before its system is assembled. The
 * rebuild costs about four matrix-free products and saves about 0.6 of one
 * on each product after it (a fem64 block, one thread: 0.49 ms against
 * 0.131 and 0.052 a product), so it pays from about the seventh assembled
 * product; a solve capped at 10 iterations (12 products with CG's start)
 * stays matrix-free, a landing's ~60 products a block assemble. */
#define ASM_MF_PRODUCTS 12

/* The rows' pattern and each element corner pair's block, made at the
 * first assembly (0 on success). */
static int fem_asm_pattern(hy_fem_model* m) {
    int32_t nv = m->nv, nt = m->nt;
    int32_t* mark = malloc((size_t)nv * sizeof *mark);
    m->a_start = calloc((size_t)nv + 1, sizeof *m->a_start);
    m->a_slot = malloc(16 * (size_t)nt * sizeof *m->a_slot);
    if (!mark || !m->a_start || !m->a_slot) goto fail;
    for (int32_t v = 0; v < nv; v++) mark[v] = -1;
    /* count each free row's distinct free neighbours (itself included) */
    for (int pass = 0; pass < 2; pass++) {
        for (int32_t v = 0; v < nv; v++) {
            if (m->fixed[v]) {
                if (!pass) m->a_start[v + 1] = 0;
                continue;
            }
            int32_t n = 0, base = pass ? m->a_start[v] : 0;
            for (int32_t k = m->inc_start[v]; k < m->inc_start[v + 1]; k++) {
                const int32_t* t = m->tet + 4 * (m->inc[k] / 4);
                for (int j = 0; j < 4; j++) {
                    int32_t w = t[j];
                    if (m->fixed[w] || w < v || mark[w] == v) continue;
                    mark[w] = v;
                    if (pass) {
                        /* insertion into the row's ascending columns */
                        int32_t q = base + n;
                        while (q > base && m->a_col[q - 1] > w) m->a_col[q] = m->a_col[q - 1], q--;
                        m->a_col[q] = w;
                    }
                    n++;
                }
            }
            if (!pass) m->a_start[v + 1] = n;
        }
        if (!pass) {
            for (int32_t v = 0; v < nv; v++) m->a_start[v + 1] += m->a_start[v];
            m->a_col = malloc(((size_t)m->a_start[nv] + 1) * sizeof *m->a_col);
            m->a_val = malloc((12 * (size_t)m->a_start[nv] + 1) * sizeof *m->a_val);
            if (!m->a_col || !m->a_val) goto fail;
            for (int32_t v = 0; v < nv; v++) mark[v] = -1;
        }
    }
    for (int32_t e = 0; e < nt; e++)
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                int32_t v = m->tet[4 * e + i], w = m->tet[4 * e + j], s = -1;
                if (!m->fixed[v] && !m->fixed[w] && w >= v) {
                    int32_t lo = m->a_start[v], hi = m->a_start[v + 1];
                    while (lo < hi) {
                        int32_t mid = lo + (hi - lo) / 2;
                        if (m->a_col[mid] < w) lo = mid + 1;
                        else hi = mid;
                    }
                    s = lo;
                }
                m->a_slot[16 * e + 4 * i + j] = s;
            }
    /* each row's lower blocks: the upper blocks with that column, by row */
    m->l_start = calloc((size_t)nv + 1, sizeof *m->l_start);
    m->l_slot = malloc(((size_t)m->a_start[nv] + 1) * sizeof *m->l_slot);
    m->l_row = malloc(((size_t)m->a_start[nv] + 1) * sizeof *m->l_row);
    if (!m->l_start || !m->l_slot || !m->l_row) goto fail;
    for (int32_t v = 0; v < nv; v++)
        for (int32_t q = m->a_start[v] + 1; q < m->a_start[v + 1]; q++) m->l_start[m->a_col[q] + 1]++;
    for (int32_t v = 0; v < nv; v++) m->l_start[v + 1] += m->l_start[v], mark[v] = m->l_start[v];
    for (int32_t v = 0; v < nv; v++)
        for (int32_t q = m->a_start[v] + 1; q < m->a_start[v + 1]; q++) {
            m->l_row[mark[m->a_col[q]]] = v;
            m->l_slot[mark[m->a_col[q]]++] = q;
        }
    free(mark);
    return 0;
fail:
    free(mark);
    free(m->a_start);
    free(m->a_slot);
    free(m->a_col);
    free(m->a_val);
    free(m->l_start);
    free(m->l_slot);
    free(m->l_row);
    m->a_start = m->a_slot = m->a_col = m->l_start = m->l_slot = m->l_row = NULL;
    m->a_val = NULL;
    return -1;
}

/* The free rows [v0, v1) of the prepared step's system. Per incident
 * corner i of row v and corner j of its element, with a = w mu c_i and
 * l = w lambda c_i (w = (dt beta + dt^2) V), the block's column b is
 * a_b c_j + c_j[b] l, plus (a . c_j) on the diagonal: hy_fem_hd_asm_row,
 * a block's column a vector and each lane its entry's arithmetic. */
static inline __attribute__((always_inline)) void asm_build(hy_fem_model* m, int64_t v0, int64_t v1) {
    const double mu = m->mu, lambda = m->lambda;
    for (int64_t v = v0; v < v1; v++) {
        if (m->fixed[v]) continue;
        int32_t s0 = m->a_start[v];
        memset(m->a_val + 12 * (size_t)s0, 0, 12 * (size_t)(m->a_start[v + 1] - s0) * sizeof *m->a_val);
        /* the diagonal block in registers (every corner adds to it) */
        double ms = m->mass[v] * m->diag_scale;
        v4d g0 = {ms, 0.0, 0.0, 0.0}, g1 = {0.0, ms, 0.0, 0.0}, g2 = {0.0, 0.0, ms, 0.0};
        for (int32_t k = m->inc_start[v]; k < m->inc_start[v + 1]; k++) {
            int32_t e = m->inc[k] / 4, i = m->inc[k] % 4;
            const double* rb = m->rgrad + 48 * (size_t)(e >> 2) + (e & 3);
            double w = m->k_scale * m->vol[e];
            double a0 = w * mu * rb[4 * (3 * i)], a1 = w * mu * rb[4 * (3 * i + 1)], a2 = w * mu * rb[4 * (3 * i + 2)];
            v4d l = {w * lambda * rb[4 * (3 * i)], w * lambda * rb[4 * (3 * i + 1)], w * lambda * rb[4 * (3 * i + 2)], 0.0};
            const int32_t* slot = m->a_slot + 16 * (size_t)e + 4 * (size_t)i;
            {
                v4d ci = {rb[4 * (3 * i)], rb[4 * (3 * i + 1)], rb[4 * (3 * i + 2)], 0.0};
                double d = a0 * ci[0] + a1 * ci[1] + a2 * ci[2];
                g0 += a0 * ci + ci[0] * l + (v4d){d, 0.0, 0.0, 0.0};
                g1 += a1 * ci + ci[1] * l + (v4d){0.0, d, 0.0, 0.0};
                g2 += a2 * ci + ci[2] * l + (v4d){0.0, 0.0, d, 0.0};
            }
            #pragma GCC unroll 4
            for (int j = 0; j < 4; j++) {
                if (j == i || slot[j] < 0) continue;
                double c0 = rb[4 * (3 * j)], c1 = rb[4 * (3 * j + 1)], c2 = rb[4 * (3 * j + 2)];
                v4d cj = {c0, c1, c2, 0.0}, b0, b1, b2;
                double d = a0 * c0 + a1 * c1 + a2 * c2;
                double* blk = m->a_val + 12 * (size_t)slot[j];
                LOAD4(b0, blk);
                LOAD4(b1, blk + 4);
                LOAD4(b2, blk + 8);
                b0 += a0 * cj + c0 * l + (v4d){d, 0.0, 0.0, 0.0};
                b1 += a1 * cj + c1 * l + (v4d){0.0, d, 0.0, 0.0};
                b2 += a2 * cj + c2 * l + (v4d){0.0, 0.0, d, 0.0};
                memcpy(blk, &b0, sizeof b0);
                memcpy(blk + 4, &b1, sizeof b1);
                memcpy(blk + 8, &b2, sizeof b2);
            }
        }
        double* dg = m->a_val + 12 * (size_t)s0; /* the row's first block */
        memcpy(dg, &g0, sizeof g0);
        memcpy(dg + 4, &g1, sizeof g1);
        memcpy(dg + 8, &g2, sizeof g2);
    }
}

FEM_LANES(asm_build, (hy_fem_model* m, int64_t v0, int64_t v1), (m, v0, v1))

static void asm_build_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    asm_build_lanes(((elem_ctx*)vctx)->m, begin, end);
}

/* y = A p over the rows [v0, v1) of the assembled system:
 * hy_fem_hd_asm_apply_row, each lane an entry's arithmetic. */
static inline __attribute__((always_inline)) void asm_rows(const hy_fem_model* m, const double* p, double* y,
                                                             int64_t v0, int64_t v1) {
    for (int64_t v = v0; v < v1; v++) {
        double* yv = y + 3 * v;
        if (m->fixed[v]) {
            yv[0] = p[3 * v], yv[1] = p[3 * v + 1], yv[2] = p[3 * v + 2];
            continue;
        }
        v4d acc = {0, 0, 0, 0}, t0 = acc, t1 = acc, t2 = acc, c0, c1, c2;
        /* the upper blocks A_vw: columns times p_w's entries */
        const double* blk = m->a_val + 12 * (size_t)m->a_start[v];
        for (int32_t s = m->a_start[v]; s < m->a_start[v + 1]; s++, blk += 12) {
            const double* pw = p + 3 * (size_t)m->a_col[s];
            v4d P0 = {pw[0], pw[0], pw[0], pw[0]}, P1 = {pw[1], pw[1], pw[1], pw[1]}, P2 = {pw[2], pw[2], pw[2], pw[2]};
            LOAD4(c0, blk);
            LOAD4(c1, blk + 4);
            LOAD4(c2, blk + 8);
            acc += c0 * P0 + c1 * P1 + c2 * P2;
        }
        /* the lower ones, A_vw = A_wv^T: entry a is column a of A_wv dotted
         * with p_w, summed lane by lane and the lanes added at the end */
        for (int32_t k = m->l_start[v]; k < m->l_start[v + 1]; k++) {
            const double *pw = p + 3 * (size_t)m->l_row[k], *lb = m->a_val + 12 * (size_t)m->l_slot[k];
            v4d P = {pw[0], pw[1], pw[2], 0.0};
            LOAD4(c0, lb);
            LOAD4(c1, lb + 4);
            LOAD4(c2, lb + 8);
            t0 += c0 * P, t1 += c1 * P, t2 += c2 * P;
        }
        yv[0] = acc[0] + ((t0[0] + t0[1]) + t0[2]);
        yv[1] = acc[1] + ((t1[0] + t1[1]) + t1[2]);
        yv[2] = acc[2] + ((t2[0] + t2[1]) + t2[2]);
    }
}

FEM_LANES(asm_rows, (const hy_fem_model* m, const double* p, double* y, int64_t v0, int64_t v1), (m, p, y, v0, v1))

static void asm_apply_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    step_ctx* c = vctx;
    asm_rows_lanes(c->m, c->p, c->y, begin, end);
}

/* Counts a product of the prepared step; 1 when it is to be the assembled
 * one (ASM_MF_PRODUCTS above; m->asm_state says whether the rows are built
 * yet). The count and the model alone decide, wherever the product runs. */
static int fem_asm_due(hy_fem_model* m) {
    if (m->asm_state) return m->asm_state > 0;
    if (m->asm_off || m->nt < ASM_MIN_ELEMENTS || m->products++ < ASM_MF_PRODUCTS) return 0;
    if (!m->a_val && fem_asm_pattern(m)) {
        m->asm_state = -1; /* out of memory: matrix-free from now on */
        m->asm_off = 1;
        return 0;
    }
    return 1;
}

static void asm_view(const hy_fem_model* m, hy_fem_hd_asm* a) {
    *a = (hy_fem_hd_asm){m->a_start, m->a_col, m->a_slot, m->l_start, m->l_slot, m->l_row, m->a_val};
}

int hy_fem_asm_view(const hy_fem_model* m, hy_fem_hd_asm* out) {
    if (!m || m->asm_state <= 0 || m->gpu) return 0;
    asm_view(m, out);
    return 1;
}

int hy_fem_assembled(hy_fem_model* m, int on) {
    if (!m) return 0;
    int was = !m->asm_off;
    if (on >= 0) m->asm_off = !on;
    return was;
}

void hy_fem_apply(hy_fem_model* m, hy_pool* pool, const double* p, double* y) {
    int assembled = fem_asm_due(m);
    if (m->gpu) {
        hy_fem_hd_model v;
        hy_fem_view(m, &v);
        hy_status s;
        if (assembled) {
            hy_fem_hd_asm a;
            asm_view(m, &a);
            s = hy_fem_gpu_asm_apply(m->gpu, &v, &a, !m->asm_state, p, y);
            if (!s) m->asm_state = 1;
        } else {
            s = hy_fem_gpu_apply(m->gpu, &v, p, y);
        }
        if (!s) return;
        gpu_drop(m, pool);
    }
    if (assembled) {
        if (!m->asm_state) {
            elem_ctx ec = {.m = m};
            hy_pool_for(pool, m->nv, VERTEX_GRAIN, asm_build_block, &ec);
            m->asm_state = 1;
        }
        step_ctx c = {.m = m, .p = p, .y = y};
        hy_pool_for(pool, m->nv, VERTEX_GRAIN, asm_apply_block, &c);
        return;
    }
    elem_ctx ec = {.m = m, .p = p};
    hy_pool_for(pool, m->nq, QUAD_GRAIN, apply_block, &ec);
    step_ctx c = {.m = m, .p = p, .y = y};
    hy_pool_for(pool, m->nv, VERTEX_GRAIN, matvec_block, &c);
}

static void forces_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    step_ctx* c = vctx;
    for (int64_t v = begin; v < end; v++) gather(c->m, (int32_t)v, c->f + 3 * v);
}

int hy_fem_coarse(hy_fem_model* m, int on) {
    if (!m) return 0;
    int was = m->nc > 0 && !m->coarse_off;
    if (on >= 0) m->coarse_off = !on;
    return was;
}

/* ---- model */

void hy_fem_model_destroy(hy_fem_model* m) {
    if (!m) return;
    hy_fem_gpu_destroy(m->gpu);
    free(m->tet);
    free(m->rest);
    free(m->grad);
    free(m->vol);
    free(m->mass);
    free(m->iso);
    free(m->fixed);
    free(m->inc_start);
    free(m->inc);
    free(m->rgrad);
    free(m->efor);
    free(m->rhs);
    free(m->dv);
    free(m->pinv);
    free(m->bad);
    free(m->guess);
    free(m->agg);
    free(m->cen);
    free(m->rdist);
    free(m->c_start);
    free(m->c_col);
    free(m->c_blk);
    free(m->c_mass);
    free(m->c_stiff);
    free(m->r1);
    free(m->z1);
    free(m->a_start);
    free(m->a_col);
    free(m->a_slot);
    free(m->a_val);
    free(m->l_start);
    free(m->l_slot);
    free(m->l_row);
    hy_spchol_destroy(m->chol);
    hy_cg_workspace_destroy(m->cg);
    free(m);
}

static hy_status check_params(const hy_fem_params* p) {
    if (!(p->young > 0) || !isfinite(p->young))
        return hy_fail(HY_ERR_INVALID_ARG, "fem: young must be > 0 Pa, got %g", p->young);
    if (!(p->poisson >= 0 && p->poisson < 0.5))
        return hy_fail(HY_ERR_INVALID_ARG, "fem: poisson must be in [0, 0.5), got %g", p->poisson);
    if (!(p->density > 0) || !isfinite(p->density))
        return hy_fail(HY_ERR_INVALID_ARG, "fem: density must be > 0 kg/m^3, got %g", p->density);
    if (!(p->damping_mass >= 0) || !isfinite(p->damping_mass))
        return hy_fail(HY_ERR_INVALID_ARG, "fem: damping_mass must be >= 0 1/s, got %g", p->damping_mass);
    if (!(p->damping_stiffness >= 0) || !isfinite(p->damping_stiffness))
        return hy_fail(HY_ERR_INVALID_ARG, "fem: damping_stiffness must be >= 0 s, got %g", p->damping_stiffness);
    return HY_OK;
}

hy_status hy_fem_model_create(const double* rest, int32_t nv, const int32_t* tets, int32_t nt,
                              const hy_fem_params* params, const int32_t* fixed, int32_t fixed_count,
                              hy_fem_model** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "fem: NULL out");
    *out = NULL;
    hy_status st = hy_implicit_check_input("fem", rest, nv, tets, nt, params, fixed, fixed_count);
    if (!st) st = check_params(params);
    if (st) return st;

    hy_fem_model* m = calloc(1, sizeof *m);
    if (m) m->device = -1;
    if (!m) return hy_fail(HY_ERR_NOMEM, "fem: out of memory");
    m->nv = nv, m->nt = nt, m->nq = (nt + 3) / 4;
    double E = params->young, nu = params->poisson;
    m->mu = E / (2.0 * (1.0 + nu));
    m->lambda = E * nu / ((1.0 + nu) * (1.0 - 2.0 * nu));
    m->alpha = params->damping_mass;
    m->beta = params->damping_stiffness;
    size_t snv = (size_t)nv, snt = (size_t)nt;
    size_t snp = 4 * (size_t)m->nq; /* elements with the padding */
    m->tet = calloc(4 * snp, sizeof *m->tet);
    m->rest = malloc(3 * snv * sizeof *m->rest);
    m->grad = malloc(12 * snt * sizeof *m->grad);
    m->vol = calloc(snp, sizeof *m->vol);
    m->mass = calloc(snv, sizeof *m->mass);
    m->iso = calloc(snv, sizeof *m->iso);
    m->fixed = calloc(snv, 1);
    m->inc_start = calloc(snv + 1, sizeof *m->inc_start);
    m->inc = malloc(4 * snt * sizeof *m->inc);
    m->rgrad = calloc(12 * snp, sizeof *m->rgrad);
    m->efor = calloc(12 * snp, sizeof *m->efor);
    m->rhs = malloc(3 * snv * sizeof *m->rhs);
    m->dv = malloc(3 * snv * sizeof *m->dv);
    m->pinv = malloc(9 * snv * sizeof *m->pinv);
    m->bad = malloc((size_t)hy_pool_blocks(nv, HY_IMPLICIT_GRAIN) * sizeof *m->bad);
    m->guess = malloc((size_t)hy_implicit_guess_scratch_size(nv) * sizeof *m->guess);
    m->cg = hy_cg_workspace_create(3 * (int64_t)nv);
    if (!m->tet || !m->rest || !m->grad || !m->vol || !m->mass || !m->iso || !m->fixed || !m->inc_start || !m->inc ||
        !m->rgrad || !m->efor || !m->rhs || !m->dv || !m->pinv || !m->bad || !m->guess || !m->cg) {
        hy_fem_model_destroy(m);
        return hy_fail(HY_ERR_NOMEM, "fem: out of memory for %d vertices, %d tetrahedra", nv, nt);
    }
    memcpy(m->tet, tets, 4 * snt * sizeof *m->tet);
    memcpy(m->rest, rest, 3 * snv * sizeof *m->rest);

    /* elements: indices, volume, orientation, gradients, lumped mass */
    for (int32_t e = 0; e < nt; e++) {
        const int32_t* t = tets + 4 * e;
        double Dm[9], volume;
        hy_status bad = hy_tet_check(rest, nv, tets, e, "fem", Dm, &volume);
        if (bad) {
            hy_fem_model_destroy(m);
            return bad;
        }
        double inv[9];
        hy_block3_inverse(Dm, inv);
        /* b_i (i = 1..3) is row i-1 of Dm^-1; b_0 = -(b_1 + b_2 + b_3) */
        double* b = m->grad + 12 * e;
        for (int i = 1; i < 4; i++)
            for (int c = 0; c < 3; c++) b[3 * i + c] = inv[3 * (i - 1) + c];
        for (int c = 0; c < 3; c++) b[c] = -(b[3 + c] + b[6 + c] + b[9 + c]);
        m->vol[e] = volume;
        for (int i = 0; i < 4; i++) {
            m->mass[t[i]] += 0.25 * params->density * m->vol[e];
            m->inc_start[t[i] + 1]++;
        }
    }
    for (int32_t v = 0; v < nv; v++) {
        if (m->inc_start[v + 1] == 0) {
            hy_fem_model_destroy(m);
            return hy_fail(HY_ERR_INVALID_ARG, "fem: vertex %d belongs to no tetrahedron (it would have no mass)",
                           v);
        }
        m->inc_start[v + 1] += m->inc_start[v];
    }
    /* incidence in element order: a counting sort by vertex */
    int32_t* fill = malloc(snv * sizeof *fill);
    if (!fill) {
        hy_fem_model_destroy(m);
        return hy_fail(HY_ERR_NOMEM, "fem: out of memory");
    }
    memcpy(fill, m->inc_start, snv * sizeof *fill);
    for (int32_t e = 0; e < nt; e++)
        for (int i = 0; i < 4; i++) m->inc[fill[tets[4 * e + i]]++] = 4 * e + i;
    free(fill);
    for (int32_t v = 0; v < nv; v++)
        for (int32_t k = m->inc_start[v]; k < m->inc_start[v + 1]; k++) {
            const double* b = m->grad + 12 * (m->inc[k] / 4) + 3 * (m->inc[k] % 4);
            m->iso[v] += m->vol[m->inc[k] / 4] * m->mu * (b[0] * b[0] + b[1] * b[1] + b[2] * b[2]);
        }
    for (int32_t k = 0; k < fixed_count; k++) m->fixed[fixed[k]] = 1;
    st = hy_fem_coarse_create(m);
    if (st) {
        hy_fem_model_destroy(m);
        return st;
    }
    *out = m;
    return HY_OK;
}

int32_t hy_fem_vertex_count(const hy_fem_model* m) { return m ? m->nv : 0; }
int32_t hy_fem_tet_count(const hy_fem_model* m) { return m ? m->nt : 0; }
const uint8_t* hy_fem_fixed(const hy_fem_model* m) { return m ? m->fixed : NULL; }
const double* hy_fem_masses(const hy_fem_model* m) { return m ? m->mass : NULL; }
const double* hy_fem_volumes(const hy_fem_model* m) { return m ? m->vol : NULL; }

/* ---- step */

hy_status hy_fem_prepare(hy_fem_model* m, hy_pool* pool, const double* x0, const double* v0, double dt,
                         const double gravity[3], const double* f_ext, const double* extra_diag, double* rhs) {
    if (!m || !pool || !x0 || !v0 || !gravity || !rhs)
        return hy_fail(HY_ERR_INVALID_ARG, "fem solve: NULL model, pool, state, gravity or right-hand side");
    if (!(dt > 0) || !isfinite(dt)) return hy_fail(HY_ERR_INVALID_ARG, "fem solve: dt must be > 0, got %g", dt);
    step_ctx c = {.m = m, .x0 = x0, .v0 = v0, .f_ext = f_ext, .extra = extra_diag, .rhs = rhs, .dt = dt};
    for (int a = 0; a < 3; a++) c.g[a] = gravity[a];
    m->diag_scale = 1.0 + dt * m->alpha;
    m->k_scale = dt * m->beta + dt * dt;
    m->coarse_state = 0;
    m->products = 0;
    if (m->asm_state > 0) m->asm_state = 0;
    m->prep_x0 = x0;
    /* rotations at x0; f(x0) - (beta + dt) K' v0 in one pass, K being linear */
    elem_ctx ec = {.m = m, .x = x0, .v = v0, .vscale = m->beta + dt};
    m->gpu_x0 = m->gpu_v0 = NULL;
    if (m->gpu) {
        hy_fem_hd_model hv;
        hy_fem_view(m, &hv);
        if (!hy_fem_gpu_prepare(m->gpu, &hv, x0, v0, ec.vscale, dt, c.g, f_ext, extra_diag, rhs)) {
            m->gpu_x0 = x0, m->gpu_v0 = v0, m->gpu_vscale = ec.vscale;
            return HY_OK;
        }
        gpu_drop(m, pool);
    }
    hy_pool_for(pool, m->nt, ELEM_GRAIN, rotate_block, &ec);
    hy_pool_for(pool, m->nv, VERTEX_GRAIN, rhs_block, &c);
    return HY_OK;
}

void hy_fem_guess(hy_fem_model* m, hy_pool* pool, const double* rhs, double* dv) {
    hy_implicit_mass_guess(&hy_fem_ops, m, pool, m->diag_scale, rhs, dv, m->guess);
}

hy_status hy_fem_commit(hy_fem_model* m, hy_pool* pool, const double* x0, const double* v0, const double* dv,
                        double dt, double* x1, double* v1) {
    return hy_implicit_commit(pool, m->nv, m->fixed, x0, v0, dv, dt, x1, v1, m->bad, "fem");
}

hy_status hy_fem_solve(hy_fem_model* m, hy_pool* pool, const double* x0, const double* v0, double dt,
                       const double gravity[3], const double* f_ext, int32_t cg_max_iterations, double cg_tolerance,
                       double* x1, double* v1, hy_fem_solve_stats* stats) {
    if (stats) stats->cg_iterations = 0, stats->cg_relative_residual = 0.0;
    if (!m) return hy_fail(HY_ERR_INVALID_ARG, "fem solve: NULL model");
    return hy_implicit_step(&hy_fem_ops, m, pool, x0, v0, dt, gravity, f_ext, cg_max_iterations, cg_tolerance, x1, v1,
                            m->rhs, m->dv, m->cg, NULL, stats ? &stats->cg_iterations : NULL,
                            stats ? &stats->cg_relative_residual : NULL, "fem");
}

hy_status hy_fem_elastic_forces(hy_fem_model* m, hy_pool* pool, const double* x, double* f) {
    if (!m || !pool || !x || !f) return hy_fail(HY_ERR_INVALID_ARG, "fem forces: NULL model, pool or array");
    elem_ctx ec = {.m = m, .x = x};
    hy_pool_for(pool, m->nt, ELEM_GRAIN, rotate_block, &ec);
    step_ctx c = {.m = m, .f = f};
    hy_pool_for(pool, m->nv, VERTEX_GRAIN, forces_block, &c);
    return HY_OK;
}

double hy_fem_elastic_energy(const hy_fem_model* m, const double* x) {
    if (!m || !x) return 0.0;
    double total = 0.0;
    for (int32_t e = 0; e < m->nt; e++) {
        double F[9], R[9], G[9];
        hy_fem_hd_deformation_gradient(m->tet + 4 * e, m->grad + 12 * e, x, F);
        hy_fem_hd_polar(F, R);
        /* G = R^T F - I */
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++)
                G[3 * a + c] = R[a] * F[c] + R[3 + a] * F[3 + c] + R[6 + a] * F[6 + c] - (a == c ? 1.0 : 0.0);
        double ee = 0.0, tr = G[0] + G[4] + G[8];
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++) {
                double s = 0.5 * (G[3 * a + c] + G[3 * c + a]);
                ee += s * s;
            }
        total += 0.5 * m->vol[e] * (2.0 * m->mu * ee + m->lambda * tr * tr);
    }
    return total;
}

double hy_fem_kinetic_energy(const hy_fem_model* m, const double* v) {
    return m && v ? hy_lumped_kinetic_energy(m->mass, v, m->nv) : 0.0;
}

/* ---- as an implicit object (solvers/implicit.h) */

HY_DEFINE_IMPLICIT_OPS(hy_fem_ops, "fem", hy_fem_model, hy_fem);
