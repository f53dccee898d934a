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
 *   every step, so an assembled matrix would be rebuilt every step anyway;
 *   matrix-free makes that rebuild the cheap rotation pass.
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
 *   depend on the previous step's rotations, not only on its inputs).
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
#include "solvers/cg.h"
#include "solvers/fem_cuda.h"
#include "solvers/fem_hd.h"

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

struct hy_fem_model {
    int32_t nv, nt, nq; /* nq: quads of four elements, the last padded */
    double lambda, mu, alpha, beta;
    int32_t* tet;      /* 4 * 4 nq: the padding elements' vertices are 0 */
    double* rest;      /* 3 * nv */
    double* grad;      /* 12 * nt: b_0..b_3, the shape-function gradients at rest */
    double* vol;       /* 4 nq: 0 for the padding */
    double* mass;      /* nv */
    double* iso;       /* nv: sum over incident corners of V mu |b_i|^2, the preconditioner's constant part */
    uint8_t* fixed;    /* nv */
    int32_t* inc_start; /* nv + 1: vertex -> incident corners */
    int32_t* inc;       /* 4 * nt: 4 * element + corner, element order per vertex */
    /* scratch of one step */
    double diag_scale, k_scale; /* the prepared system's 1 + dt alpha and dt beta + dt^2 */
    double* rgrad; /* 48 nq by QUAD: R b_i, the gradients rotated by the step's R */
    double* efor;  /* 48 nq: corner forces, 12 per element */
    double* rhs;   /* 3 * nv */
    double* dv;    /* 3 * nv */
    double* pinv;  /* 9 * nv inverse diagonal blocks */
    int32_t* bad;  /* per vertex block: first non-finite vertex or -1 */
    double* guess; /* hy_implicit_mass_guess's scratch */
    hy_cg_workspace* cg;
    /* the preconditioner's coarse level (fem_coarse_*): vertices grouped
     * in aggregates, the Galerkin product of the step's system with the
     * piecewise-constant prolongation solved by hy_amg */
    int32_t nc;          /* aggregates; 0: no coarse level */
    int32_t* agg;        /* nv: a vertex's aggregate, -1 when fixed */
    int32_t* pair_slot;  /* 12 nt: per element pair (i < j, 6) the level-1 slots of (agg i, agg j) and (agg j, agg i) */
    hy_amg* amg;
    double *r1, *z1;     /* 3 nc */
    const double* extra; /* the prepared step's extra diagonal blocks (valid until commit), or NULL */
    int coarse_state;    /* 0: not set up this step, 1: ready, -1: not usable this step */
    int coarse_off;      /* hy_fem_coarse(m, 0): block Jacobi alone */
    hy_fem_gpu* gpu; /* the element and vertex passes on a GPU (hy_fem_set_device), or NULL */
    int device;
    /* the step the GPU prepared, whose rotation pass the host has not run:
     * what a CPU fallback needs to run it (the inputs stay the caller's
     * until commit) */
    const double *gpu_x0, *gpu_v0;
    double gpu_vscale;
};

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

/* Rotations at x and corner forces -R K (R^T (x + vscale v) - X)
 * (solvers/fem_hd.h, the arithmetic the GPU shares). */
static void rotate_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    elem_ctx* c = vctx;
    hy_fem_model* m = c->m;
    for (int64_t e = begin; e < end; e++)
        hy_fem_hd_rotate(m->tet + 4 * e, m->grad + 12 * e, m->vol[e], m->mu, m->lambda, m->rest, c->x, c->v,
                         c->vscale, &m->rgrad[QUAD(e, 0)], 4, m->efor + 12 * e);
}

/* Corner forces +R K R^T p, fixed vertices read as zero, for the quads
 * [q0, q1). With the rotated gradients c_i = R b_i no rotation is left to
 * do: R^T sigma(G) R = sigma(R G R^T) and R G R^T = sum_i p_i c_i^T, so
 * q_i = V sigma(sum_j p_j c_j^T) c_i. Four elements per pass, one per
 * lane; each lane's arithmetic is that of one element in the same order,
 * so either compilation below gives the same bits. */
typedef double v4d __attribute__((vector_size(32)));

/* (a macro: a function returning a vector type would change the ABI with
 * the target) */
#define LOAD4(v, ptr) memcpy(&(v), (ptr), sizeof(v4d))

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

static void apply_quads_generic(const hy_fem_model* m, const double* p, int64_t q0, int64_t q1) {
    apply_quads(m, p, q0, q1);
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* The same code in AVX2 registers (no FMA: rounding as above). */
__attribute__((target("avx2"))) static void apply_quads_avx2(const hy_fem_model* m, const double* p, int64_t q0,
                                                             int64_t q1) {
    apply_quads(m, p, q0, q1);
}
#define HY_FEM_AVX2 1
#endif

static int simd_state = -1;

static void apply_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    elem_ctx* c = vctx;
#ifdef HY_FEM_AVX2
    if (hy_simd_on(&simd_state)) {
        apply_quads_avx2(c->m, c->p, begin, end);
        return;
    }
#endif
    apply_quads_generic(c->m, c->p, begin, end);
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

/* A GPU call that failed: the GPU is dropped (said once) and the caller
 * runs the pass on the CPU, which gives the same bits; the rotation pass
 * of a step the GPU prepared is run on the host first (pool), for the
 * products that follow. */
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

void hy_fem_apply(hy_fem_model* m, hy_pool* pool, const double* p, double* y) {
    if (m->gpu) {
        hy_fem_hd_model v;
        hy_fem_view(m, &v);
        if (!hy_fem_gpu_apply(m->gpu, &v, p, y)) return;
        gpu_drop(m, pool);
    }
    elem_ctx ec = {.m = m, .p = p};
    hy_pool_for(pool, m->nq, QUAD_GRAIN, apply_block, &ec);
    step_ctx c = {.m = m, .p = p, .y = y};
    hy_pool_for(pool, m->nv, VERTEX_GRAIN, matvec_block, &c);
}

/* ---- the preconditioner's coarse level
 *
 * Block Jacobi alone leaves CG the smooth modes: there the system is
 * nearly the mass matrix, while each vertex's diagonal block also carries
 * its elements' stiffness, so Jacobi under-weights them by about the
 * grid's dt^2 k / m. A coarse level corrects them additively,
 *   z = D^-1 r + P A_c^-1 P^T r,
 * P the piecewise-constant prolongation from aggregates of vertices (a
 * vertex and its free neighbours, hy_amg_aggregate) and A_c = P^T A P,
 * summed each step from the elements' rotated stiffness blocks. A_c has
 * hy_amg's form (mass blocks plus a Laplacian of coupling blocks: the
 * stiffness rows sum to zero), so hy_amg solves it (directly, by sparse
 * Cholesky, up to 800 aggregates; fem64's blocks have about 200). The map
 * is SPD and the same for a whole solve, as CG needs. It is set up the
 * first time a prepared step's preconditioner is applied, so a step that
 * CG does not iterate (free flight from the mass-only start) pays
 * nothing; one pass over the elements in order, so the same bits for any
 * pool. */

/* Objects smaller than this keep block Jacobi alone: a few aggregates
 * correct little, and their set-up costs more than the iterations it
 * saves (fem_bars' blocks of 64 vertices: 1,485 -> 1,298 iterations a
 * step, integration 9.7 -> 11.1 ms). */
#define COARSE_MIN_VERTICES 500

static hy_status fem_coarse_create(hy_fem_model* m) {
    int32_t nv = m->nv, nt = m->nt;
    if (nv < COARSE_MIN_VERTICES) return HY_OK;
    size_t ne = 12 * (size_t)nt; /* the vertex graph: each corner's three element neighbours, repeats kept */
    int32_t* adj_start = calloc((size_t)nv + 1, sizeof *adj_start);
    int32_t* adj = malloc(ne * sizeof *adj);
    int32_t* fill = malloc((size_t)nv * sizeof *fill);
    int32_t* slot = malloc(ne * sizeof *slot);
    m->agg = malloc((size_t)nv * sizeof *m->agg);
    m->pair_slot = malloc(ne * sizeof *m->pair_slot);
    int32_t *c_start = NULL, *c_col = NULL;
    hy_status st = HY_OK;
    if (!adj_start || !adj || !fill || !slot || !m->agg || !m->pair_slot) st = HY_ERR_NOMEM;
    if (!st) {
        for (int32_t e = 0; e < nt; e++)
            for (int i = 0; i < 4; i++) adj_start[m->tet[4 * e + i] + 1] += 3;
        for (int32_t v = 0; v < nv; v++) adj_start[v + 1] += adj_start[v];
        memcpy(fill, adj_start, (size_t)nv * sizeof *fill);
        for (int32_t e = 0; e < nt; e++)
            for (int i = 0; i < 4; i++)
                for (int j = 0; j < 4; j++)
                    if (j != i) adj[fill[m->tet[4 * e + i]]++] = m->tet[4 * e + j];
        m->nc = hy_amg_aggregate(nv, adj_start, adj, m->fixed, m->agg);
        if (m->nc < 0) st = HY_ERR_NOMEM, m->nc = 0;
    }
    if (!st && m->nc > 0) st = hy_amg_coarse_pattern(nv, adj_start, adj, m->agg, m->nc, &c_start, &c_col, slot);
    if (!st && m->nc > 0) {
        /* each element pair's two level-1 slots, found in the rows' ascending columns */
        static const int pi[6] = {0, 0, 0, 1, 1, 2}, pj[6] = {1, 2, 3, 2, 3, 3};
        for (int32_t e = 0; e < nt; e++)
            for (int k = 0; k < 6; k++) {
                int32_t a = m->agg[m->tet[4 * e + pi[k]]], b = m->agg[m->tet[4 * e + pj[k]]];
                int32_t* out = m->pair_slot + 12 * (size_t)e + 2 * k;
                out[0] = out[1] = -1;
                if (a < 0 || b < 0 || a == b) continue;
                for (int side = 0; side < 2; side++) {
                    int32_t row = side ? b : a, col = side ? a : b;
                    int32_t lo = c_start[row], hi = c_start[row + 1];
                    while (lo < hi) {
                        int32_t mid = lo + (hi - lo) / 2;
                        if (c_col[mid] < col) lo = mid + 1;
                        else hi = mid;
                    }
                    out[side] = lo; /* present: a and b share an element, so they are neighbours */
                }
            }
        st = hy_amg_create(m->nc, c_start, c_col, &m->amg);
        m->r1 = malloc(3 * (size_t)m->nc * sizeof *m->r1);
        m->z1 = malloc(3 * (size_t)m->nc * sizeof *m->z1);
        if (!st && (!m->r1 || !m->z1)) st = HY_ERR_NOMEM;
    }
    free(adj_start);
    free(adj);
    free(fill);
    free(slot);
    free(c_start);
    free(c_col);
    if (st == HY_ERR_NOMEM)
        return hy_fail(HY_ERR_NOMEM, "fem: out of memory for the coarse level (%d vertices, %d tetrahedra)", nv, nt);
    return st;
}

/* A_c for the prepared step: per aggregate K its vertices' m (1 + dt
 * alpha) and extra diagonal blocks, less the stiffness blocks that tie
 * them to fixed vertices; per pair of aggregates the blocks of the
 * element pairs between them, k_scale V (mu (c_i . c_j) I + mu c_j c_i^T +
 * lambda c_i c_j^T) (row i, column j), and its transpose for (L, K). */
static void fem_coarse_setup(hy_fem_model* m, hy_pool* pool) {
    m->coarse_state = -1;
    if (!m->amg || m->coarse_off) return;
    if (m->gpu && m->gpu_x0) {
        /* the rotated gradients stayed on the GPU: the same pass here */
        elem_ctx ec = {.m = m, .x = m->gpu_x0, .v = m->gpu_v0, .vscale = m->gpu_vscale};
        hy_pool_for(pool, m->nt, ELEM_GRAIN, rotate_block, &ec);
        m->gpu_x0 = m->gpu_v0 = NULL;
    }
    double* M = hy_amg_mass_blocks(m->amg);
    double* W = hy_amg_coupling_blocks(m->amg);
    memset(M, 0, 9 * (size_t)m->nc * sizeof *M);
    memset(W, 0, 9 * (size_t)hy_amg_level1_rows(m->amg)[m->nc] * sizeof *W);
    for (int32_t v = 0; v < m->nv; v++) {
        int32_t K = m->agg[v];
        if (K < 0) continue;
        double* mk = M + 9 * (size_t)K;
        double md = m->mass[v] * m->diag_scale;
        mk[0] += md, mk[4] += md, mk[8] += md;
        if (m->extra)
            for (int a = 0; a < 9; a++) mk[a] += m->extra[9 * (size_t)v + a];
    }
    static const int pi[6] = {0, 0, 0, 1, 1, 2}, pj[6] = {1, 2, 3, 2, 3, 3};
    for (int32_t e = 0; e < m->nt; e++) {
        const int32_t* t = m->tet + 4 * e;
        double c[4][3];
        for (int i = 0; i < 4; i++)
            for (int a = 0; a < 3; a++) c[i][a] = m->rgrad[QUAD(e, 3 * i + a)];
        double s = m->k_scale * m->vol[e];
        for (int k = 0; k < 6; k++) {
            int32_t vi = t[pi[k]], vj = t[pj[k]];
            int fi = m->fixed[vi], fj = m->fixed[vj];
            const int32_t* sl = m->pair_slot + 12 * (size_t)e + 2 * k;
            if ((fi && fj) || (!fi && !fj && sl[0] < 0)) continue;
            const double *ci = c[pi[k]], *cj = c[pj[k]];
            double d = ci[0] * cj[0] + ci[1] * cj[1] + ci[2] * cj[2], B[9];
            for (int a = 0; a < 3; a++)
                for (int b = 0; b < 3; b++)
                    B[3 * a + b] = s * ((a == b ? m->mu * d : 0.0) + m->mu * cj[a] * ci[b] + m->lambda * ci[a] * cj[b]);
            if (fj) {
                double* mk = M + 9 * (size_t)m->agg[vi];
                for (int a = 0; a < 9; a++) mk[a] -= B[a];
            } else if (fi) {
                double* mk = M + 9 * (size_t)m->agg[vj];
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) mk[3 * a + b] -= B[3 * b + a];
            } else {
                double *w0 = W + 9 * (size_t)sl[0], *w1 = W + 9 * (size_t)sl[1];
                for (int a = 0; a < 3; a++)
                    for (int b = 0; b < 3; b++) w0[3 * a + b] += B[3 * a + b], w1[3 * a + b] += B[3 * b + a];
            }
        }
    }
    /* SPD in exact arithmetic; a factor that fails in floating point
     * leaves block Jacobi alone for this step (CG converges, slower) */
    if (hy_amg_setup(m->amg, pool) != HY_OK) {
        hy_error_clear();
        return;
    }
    m->coarse_state = 1;
}

void hy_fem_precondition(hy_fem_model* m, hy_pool* pool, const double* r, double* z) {
    hy_implicit_block_precondition(pool, m->nv, m->pinv, r, z);
    if (m->coarse_state == 0) fem_coarse_setup(m, pool);
    if (m->coarse_state != 1) return;
    memset(m->r1, 0, 3 * (size_t)m->nc * sizeof *m->r1);
    for (int32_t v = 0; v < m->nv; v++)
        if (m->agg[v] >= 0)
            for (int a = 0; a < 3; a++) m->r1[3 * (size_t)m->agg[v] + a] += r[3 * (size_t)v + a];
    hy_amg_vcycle(m->amg, pool, m->r1, m->z1);
    for (int32_t v = 0; v < m->nv; v++)
        if (m->agg[v] >= 0)
            for (int a = 0; a < 3; a++) z[3 * (size_t)v + a] += m->z1[3 * (size_t)m->agg[v] + a];
}

static void forces_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    step_ctx* c = vctx;
    for (int64_t v = begin; v < end; v++) gather(c->m, (int32_t)v, c->f + 3 * v);
}

int hy_fem_coarse(hy_fem_model* m, int on) {
    if (!m) return 0;
    int was = m->amg && !m->coarse_off;
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
    free(m->pair_slot);
    free(m->r1);
    free(m->z1);
    hy_amg_destroy(m->amg);
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
    st = fem_coarse_create(m);
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
    m->extra = extra_diag;
    m->coarse_state = 0;
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
