/* The cloth step's matrix-free product and its multigrid preconditioner
 * (cloth.c has the model and the step; cloth_internal.h the layout they
 * share).
 *
 * Design notes
 *
 * Matrix-free. A is never assembled. Per step one pass over the springs
 * stores each spring's block S = alpha I + beta d d^T as four doubles,
 * (u, alpha) with u = sqrt(beta) d (beta > 0 always: see cloth.c), so
 * that S x = alpha x + (u . x) u -- against nine for a general block or a
 * sparse block matrix's row/column bookkeeping -- and the matvec rebuilds
 * the block on the fly: no assembly or index search per step, 32 bytes per
 * spring read per matvec, ~11 flops per spring end. The four-double form
 * took the product on cloth_ball in contact from 1.2-1.35 ms to 0.73-0.78
 * ms on one thread against (d, alpha, beta) in five doubles: a block no
 * longer straddles cache lines and the dot product loses a multiply. A
 * block-CSR matrix would read 72+ bytes per block plus its indices for the
 * same work, and cost an assembly pass each step. Rejected: single-
 * precision blocks for the smoother's products (no faster than the
 * four-double form), and a SELL-8 layout with AVX2 gathers (25% faster in
 * single precision, slower in double: each spring's block is stored once
 * per end). The matvec gathers per vertex over a vertex->spring CSR built
 * once, so every output row is written by one block: no atomics, no
 * colouring, and the sum order is fixed (the vertex's springs in index
 * order), hence bit-identical for any thread count.
 *
 * Preconditioner. With dt^2 k / m in the thousands (cloth_ball: ~7700 for
 * the stretch springs) Jacobi-PCG needs O(sqrt(kappa)) iterations: ~1000
 * for 1e-6 once the cloth is no longer in free fall (where b is uniform and
 * one iteration does). The slow modes are smooth ones, so CG is
 * preconditioned by one symmetric V-cycle of aggregation multigrid
 * (solvers/amg.h): level 1 groups each free vertex with its free stretch
 * and shear neighbours (3x3 vertices on a grid), its 3x3 blocks are the
 * Galerkin product with the piecewise-constant prolongation (summed from
 * the spring blocks each step, no sparse products), coarser levels repeat
 * that down to a few hundred nodes, factored by CHOLMOD. On this level the
 * smoother is damped block-Jacobi (exact 3x3 diagonal blocks), one sweep
 * before and after the coarse correction, with the matrix-free matvec: a
 * preconditioned iteration costs three matvecs. The V-cycle is the same
 * linear SPD map for a whole solve (pre- and post-smoothing mirror each
 * other), as CG needs, and is rebuilt from (x0, v0) alone each step, so a
 * step still depends only on its inputs.
 * Measured on cloth_ball (tolerance 1e-6): 24-50 iterations in the first
 * contact frames, 110-126 once the cloth has draped (frame 45 on), against the
 * 200 cap and ~1000 needed with Jacobi. Rejected: an exact sparse Cholesky
 * of A each step (28M entries in L, 15 GFlop, ~1 s on 215x215; the same
 * factor lagged is too big even to apply per iteration); Gauss-Seidel
 * (multicoloured) smoothing, an exact level-1 solve and an over-corrected
 * coarse step: each at most ~10% fewer iterations for more work. What
 * bounds the count is the coarse space (translations only): rotations of
 * the draped patches or a smoothed prolongation would be the next step.
 *
 * Rotations in the coarse space, measured: on cloth_ball in contact
 * (frames 151-153, 2 threads) a two-level method whose coarse level is
 * level 1 with three rotations per aggregate added (Galerkin, 6x6 blocks,
 * solved exactly) took 73 CG iterations against 127 with translations
 * alone (exact) and 140 with today's V-cycle; with two and three smoothing
 * sweeps, 53 and 44. But level 1's 6x6 blocks make a product there cost as
 * much as the fine level's, and smoothing that level while leaving its
 * coarse correction to the translation hierarchy kept only a third of the
 * gain (108 iterations); rotations on level 2 alone (aggregates of
 * aggregates, exact) did not help a two-level method (177 against 200).
 * The rotations pay only with a hierarchy that keeps them on every level
 * and stores level 1's blocks compactly.
 *
 * Smoothed prolongation (smoothed aggregation), measured the same way in
 * the solver's convergence measure: 123 -> 89-92 iterations with
 * translations, 56 with rotations too (40 with two sweeps); it widens
 * level 1 from 9 to 25 blocks per row, so a product there again costs as
 * much as the cloth's. Holding the contacts' directions out of the
 * prolongation changed nothing (119): the coarse space, not the contacts,
 * bounds the count. Numbers in docs/PERFORMANCE.md. */
#include <string.h>

#include "core/error.h"
#include "core/simd.h"
#include "solvers/cloth_internal.h"

/* Damped block-Jacobi sweeps on the cloth's level, before and after the
 * coarse correction. */
#define FINE_SWEEPS 1

/* The preconditioner's hierarchy (see the design notes): aggregates of
 * the free vertices over the stretch and shear springs, level 1's pattern
 * over every spring, and the coarser levels below it. */
hy_status hy_cloth_build_multigrid(hy_cloth_model* m) {
    int32_t nv = m->nv;
    int64_t ne = 2 * (int64_t)m->ns;
    int32_t strong_springs = m->type_count[SPRING_STRETCH] + m->type_count[SPRING_SHEAR];
    int32_t* s_start = calloc((size_t)nv + 1, sizeof *s_start);
    int32_t* s_adj = malloc((size_t)(ne > 0 ? ne : 1) * sizeof *s_adj);
    m->agg = malloc((size_t)nv * sizeof *m->agg);
    m->adj_slot = malloc((size_t)(ne > 0 ? ne : 1) * sizeof *m->adj_slot);
    if (!s_start || !s_adj || !m->agg || !m->adj_slot) {
        free(s_start);
        free(s_adj);
        return hy_fail(HY_ERR_NOMEM, "cloth: out of memory for the preconditioner (%d vertices)", nv);
    }
    for (int32_t v = 0; v < nv; v++) {
        s_start[v + 1] = s_start[v];
        for (int32_t e = m->adj_start[v]; e < m->adj_start[v + 1]; e++)
            if (m->adj_spring[e] < strong_springs) s_adj[s_start[v + 1]++] = m->adj_other[e];
    }
    m->agg_count = hy_amg_aggregate(nv, s_start, s_adj, m->fixed, m->agg);
    free(s_start);
    free(s_adj);
    if (m->agg_count < 0) return hy_fail(HY_ERR_NOMEM, "cloth: out of memory for aggregates (%d vertices)", nv);
    if (m->agg_count == 0) return HY_OK; /* every vertex fixed: nothing to solve */
    int32_t *c_start = NULL, *c_col = NULL;
    hy_status st = hy_amg_coarse_pattern(nv, m->adj_start, m->adj_other, m->agg, m->agg_count, &c_start, &c_col,
                                         m->adj_slot);
    if (st == HY_OK) st = hy_amg_create(m->agg_count, c_start, c_col, &m->amg);
    free(c_start);
    free(c_col);
    if (st != HY_OK) return st;
    int32_t nc = m->agg_count;
    m->mem_start = calloc((size_t)nc + 1, sizeof *m->mem_start);
    m->mem = malloc((size_t)nv * sizeof *m->mem);
    m->r1 = alloc_doubles(3 * (int64_t)nc);
    m->z1 = alloc_doubles(3 * (int64_t)nc);
    m->t = alloc_doubles(3 * (int64_t)nv);
    int32_t* fill = malloc((size_t)nc * sizeof *fill);
    if (!m->mem_start || !m->mem || !m->r1 || !m->z1 || !m->t || !fill) {
        free(fill);
        return hy_fail(HY_ERR_NOMEM, "cloth: out of memory for the preconditioner (%d vertices)", nv);
    }
    for (int32_t v = 0; v < nv; v++)
        if (m->agg[v] >= 0) m->mem_start[m->agg[v] + 1]++;
    for (int32_t k = 0; k < nc; k++) m->mem_start[k + 1] += m->mem_start[k];
    memcpy(fill, m->mem_start, (size_t)nc * sizeof *fill);
    for (int32_t v = 0; v < nv; v++)
        if (m->agg[v] >= 0) m->mem[fill[m->agg[v]]++] = v;
    free(fill);
    return HY_OK;
}

/* Level 1 of the preconditioner, per aggregate K (Galerkin product with
 * the piecewise-constant prolongation, see amg.h): its mass block sums its
 * vertices' M (1 + dt air) and the springs that tie them to fixed
 * vertices; each spring to another aggregate L adds -S to W_KL. Springs
 * inside K cancel and are skipped. Members ascending, each vertex's
 * springs in CSR order: a fixed sum order. */
typedef struct level1_ctx {
    hy_cloth_model* m;
    double *mass, *W;
    double diag_scale;
} level1_ctx;

static void level1_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    const level1_ctx* c = vctx;
    const hy_cloth_model* m = c->m;
    const int32_t* c_start = hy_amg_level1_rows(m->amg);
    for (int64_t K = begin; K < end; K++) {
        double* mk = c->mass + 9 * K;
        memset(mk, 0, 9 * sizeof *mk);
        memset(c->W + 9 * (int64_t)c_start[K], 0, 9 * (size_t)(c_start[K + 1] - c_start[K]) * sizeof(double));
        for (int32_t p = m->mem_start[K]; p < m->mem_start[K + 1]; p++) {
            int32_t v = m->mem[p];
            double md = m->mass[v] * c->diag_scale;
            mk[0] += md;
            mk[4] += md;
            mk[8] += md;
            if (m->constrained && m->held[v])
                for (int a = 0; a < 9; a++) mk[a] += m->ch[9 * v + a];
            for (int32_t e = m->adj_start[v]; e < m->adj_start[v + 1]; e++) {
                int32_t slot = m->adj_slot[e];
                int to_fixed = m->fixed[m->adj_other[e]];
                if (slot < 0 && !to_fixed) continue;
                const double* blk = m->block + 4 * m->adj_spring[e];
                double* dst = to_fixed ? mk : c->W + 9 * (int64_t)slot;
                double sign = to_fixed ? 1.0 : -1.0;
                for (int a = 0; a < 3; a++)
                    for (int q = 0; q < 3; q++) dst[3 * a + q] += sign * ((a == q ? blk[3] : 0.0) + blk[a] * blk[q]);
            }
        }
    }
}

int hy_cloth_precond_setup(hy_cloth_model* m, hy_pool* pool, double diag_scale) {
    if (!m->amg) return 0;
    level1_ctx lc = {.m = m, .mass = hy_amg_mass_blocks(m->amg), .W = hy_amg_coupling_blocks(m->amg),
                     .diag_scale = diag_scale};
    hy_pool_for(pool, m->agg_count, AGG_GRAIN, level1_block, &lc);
    /* The coarse matrices are SPD in exact arithmetic (P^T A P, P of
     * full rank); a factor that fails in floating point (masses near the
     * bottom of the double range, under a free cloth's singular
     * Laplacian) leaves the smoother alone as the preconditioner for this
     * step: CG still converges, slower. */
    if (hy_amg_setup(m->amg, pool) == HY_OK) return 1;
    hy_error_clear();
    return 0;
}

/* y = A x, gathered per vertex: y_v = M_v x_v + sum over v's springs of
 * S_s (x_v - x_other), in the CSR's fixed order. Rejected: a spring pass
 * computing t_s = S_s (x_i - x_j) once, then a vertex pass adding +-t_s. It
 * halves the flops but writes and re-reads 24 bytes per spring, and
 * measured ~15% slower on a 215x215 cloth; this loop is load-bound, not
 * flop-bound. Fixed rows are 0; fixed entries of x are 0 by construction
 * (CG's vectors stay filtered), so columns need no mask. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
/* The same rows with a vertex's three coordinates in one AVX2 register
 * (the fourth lane masked to 0): per entry d = x_v - x_o, t = u.d summed
 * as ((u0 d0 + u1 d1) + u2 d2), y += alpha d + t u, each lane the scalar
 * row's operations in its order (no FMA), and a held vertex's penalty
 * added after them as there, so the bits are hy_cloth_hd_matvec_row's. A row reads four doubles from a vertex's
 * offset: the last vertex, whose fourth would lie past the vector, is
 * read as three. */
typedef double v4d __attribute__((vector_size(32)));
typedef int64_t v4i __attribute__((vector_size(32)));

__attribute__((target("avx2"))) static inline v4d load_vertex(const double* x, int64_t off, int64_t last) {
    v4d r = {0, 0, 0, 0};
    if (off != last) {
        memcpy(&r, x + off, sizeof r);
        r = (v4d)((v4i)r & (v4i){-1, -1, -1, 0});
    } else {
        memcpy(&r, x + off, 3 * sizeof(double));
    }
    return r;
}

__attribute__((target("avx2"))) static void matvec_rows_avx2(const hy_cloth_hd_model* m, int64_t begin, int64_t end,
                                                             const double* x, double* y) {
    const int64_t last = 3 * ((int64_t)m->nv - 1);
    for (int64_t v = begin; v < end; v++) {
        if (m->fixed[v]) {
            y[3 * v] = y[3 * v + 1] = y[3 * v + 2] = 0.0;
            continue;
        }
        v4d xv = load_vertex(x, 3 * v, last);
        double md = m->mass[v] * m->diag_scale;
        v4d acc = xv * (v4d){md, md, md, md};
        const int32_t e1 = m->adj_start[v + 1];
        for (int32_t e = m->adj_start[v]; e < e1; e++) {
            v4d blk;
            memcpy(&blk, m->block + m->adj_spring4[e], sizeof blk);
            v4d d = xv - load_vertex(x, m->adj_other3[e], last);
            v4d p = blk * d;
            double t = (p[0] + p[1]) + p[2];
            acc += (v4d){blk[3], blk[3], blk[3], blk[3]} * d + (v4d){t, t, t, t} * blk;
        }
        if (m->constrained && m->held[v]) {
            const double* H = m->ch + 9 * v;
            const double x0 = xv[0], x1 = xv[1], x2 = xv[2];
            acc[0] += H[0] * x0 + H[1] * x1 + H[2] * x2;
            acc[1] += H[3] * x0 + H[4] * x1 + H[5] * x2;
            acc[2] += H[6] * x0 + H[7] * x1 + H[8] * x2;
        }
        memcpy(y + 3 * v, &acc, 3 * sizeof(double));
    }
}
#define HY_CLOTH_AVX2 1
#endif

static int simd_state = -1;

int hy_cloth_simd(int on) { return hy_simd_set(&simd_state, on); }

static void matvec_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    const matvec_ctx* c = vctx;
    hy_cloth_hd_model v = hy_cloth_hd_view(c->m, c->diag_scale);
#ifdef HY_CLOTH_AVX2
    if (hy_simd_on(&simd_state)) {
        matvec_rows_avx2(&v, begin, end, c->x, c->y);
        return;
    }
#endif
    for (int64_t k = begin; k < end; k++) hy_cloth_hd_matvec_row(&v, k, c->x, c->y + 3 * k);
}

void hy_cloth_matvec(void* vctx, const double* x, double* y) {
    solve_ctx* c = vctx;
    hy_cloth_model* m = (hy_cloth_model*)c->mv.m;
    if (m->gpu) {
        if (!hy_cloth_gpu_apply(m->gpu, c->mv.diag_scale, x, y)) return;
        hy_cloth_gpu_drop(m);
    }
    c->mv.x = x;
    c->mv.y = y;
    hy_pool_for(c->pool, c->mv.m->nv, VERTEX_GRAIN, matvec_block, &c->mv);
}
/* The preconditioner: one symmetric V-cycle (design notes). The finest
 * level is the cloth's own, matrix-free: damped block-Jacobi sweeps with
 * the exact matvec, restriction and prolongation by aggregate. */
typedef struct fine_ctx {
    const hy_cloth_model* m;
    const double* r;
    double* z;
    const double* t; /* A z, NULL for the first sweep from z = 0 */
} fine_ctx;

/* z += omega D^-1 (r - t), or z = omega D^-1 r with t NULL: two loops,
 * so neither tests t per entry. */
static void fine_jacobi_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    const fine_ctx* c = vctx;
    const double* dinv = c->m->dinv;
    const double* r = c->r;
    const double* t = c->t;
    double* z = c->z;
    if (!t) {
        for (int64_t v = begin; v < end; v++) {
            const double* Di = dinv + 9 * v;
            const double d0 = r[3 * v], d1 = r[3 * v + 1], d2 = r[3 * v + 2];
            for (int q = 0; q < 3; q++)
                z[3 * v + q] = HY_AMG_OMEGA * (Di[3 * q] * d0 + Di[3 * q + 1] * d1 + Di[3 * q + 2] * d2);
        }
        return;
    }
    for (int64_t v = begin; v < end; v++) {
        const double* Di = dinv + 9 * v;
        const double d0 = r[3 * v] - t[3 * v], d1 = r[3 * v + 1] - t[3 * v + 1], d2 = r[3 * v + 2] - t[3 * v + 2];
        for (int q = 0; q < 3; q++)
            z[3 * v + q] += HY_AMG_OMEGA * (Di[3 * q] * d0 + Di[3 * q + 1] * d1 + Di[3 * q + 2] * d2);
    }
}

static void fine_restrict_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    const fine_ctx* c = vctx;
    const hy_cloth_model* m = c->m;
    for (int64_t K = begin; K < end; K++) {
        double s[3] = {0, 0, 0};
        for (int32_t q = m->mem_start[K]; q < m->mem_start[K + 1]; q++) {
            int64_t v = m->mem[q];
            for (int p = 0; p < 3; p++) s[p] += c->r[3 * v + p] - c->t[3 * v + p];
        }
        for (int p = 0; p < 3; p++) m->r1[3 * K + p] = s[p];
    }
}

static void fine_prolong_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    const fine_ctx* c = vctx;
    const hy_cloth_model* m = c->m;
    for (int64_t v = begin; v < end; v++) {
        if (m->agg[v] < 0) continue;
        const double* zc = m->z1 + 3 * (int64_t)m->agg[v];
        for (int p = 0; p < 3; p++) c->z[3 * v + p] += zc[p];
    }
}

void hy_cloth_precond(void* vctx, const double* r, double* z) {
    solve_ctx* sc = vctx;
    const hy_cloth_model* m = sc->mv.m;
    hy_pool* pool = sc->pool;
    fine_ctx c = {.m = m, .r = r, .z = z, .t = NULL};
    hy_pool_for(pool, m->nv, VERTEX_GRAIN, fine_jacobi_block, &c);
    if (!sc->coarse) return;
    c.t = m->t;
    for (int s = 1; s < FINE_SWEEPS; s++) {
        hy_cloth_matvec(sc, z, m->t);
        hy_pool_for(pool, m->nv, VERTEX_GRAIN, fine_jacobi_block, &c);
    }
    hy_cloth_matvec(sc, z, m->t);
    hy_pool_for(pool, m->agg_count, AGG_GRAIN, fine_restrict_block, &c);
    hy_amg_vcycle(m->amg, pool, m->r1, m->z1);
    hy_pool_for(pool, m->nv, VERTEX_GRAIN, fine_prolong_block, &c);
    for (int s = 0; s < FINE_SWEEPS; s++) {
        hy_cloth_matvec(sc, z, m->t);
        hy_pool_for(pool, m->nv, VERTEX_GRAIN, fine_jacobi_block, &c);
    }
}
