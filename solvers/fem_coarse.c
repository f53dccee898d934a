/* The FEM preconditioner's coarse level (see the comment below) and the
 * preconditioner it completes, hy_fem_precondition. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/hd.h"
#include "solvers/amg.h"
#include "solvers/fem_internal.h"

/* ---- the preconditioner's coarse level
 *
 * Block Jacobi alone leaves CG the smooth modes: there the system is
 * nearly the mass matrix, while each vertex's diagonal block also carries
 * its elements' stiffness, so Jacobi under-weights them by about the
 * grid's dt^2 k / m. A coarse level corrects them additively,
 *   z = D^-1 r + Q P A_c^-1 P^T Q^T r.
 * P moves each aggregate of vertices (a vertex and its free neighbours in
 * the tet graph, hy_amg_aggregate; ~24 vertices in a fem64 block) rigidly:
 * vertex v of aggregate K by t_K + w_K x (X_v - c_K), a translation and a
 * small rotation about the aggregate's mass centre at rest, six unknowns
 * an aggregate. Translations alone leave the aggregates' relative turns,
 * bending and twisting at the aggregates' scale, to CG.
 * A_c = P^T A_rest P is the Galerkin product of the system with every
 * element at rest (rotation I); it depends on the model and dt only, so it
 * is assembled once and factored (hy_spchol) once per dt. Q turns each
 * vertex's 3-vector by the object's rotation this step, that of the polar
 * decomposition of sum_v m_v (x_v - x_c)(X_v - X_c)^T (the best rigid fit
 * of x0 to the rest shape): the corotated system is nearly Q A_rest Q^T
 * while its elements turn with the object, so Q P A_c^-1 P^T Q^T is nearly
 * its coarse correction, with no assembly or factorisation per step. The
 * map is SPD (Q orthogonal, A_c SPD) and fixed for a solve, as CG needs. It
 * leaves out the caller's extra diagonal blocks (contacts, attachments),
 * which block Jacobi carries. Set up the first time a prepared step's
 * preconditioner is applied, so a step that CG does not iterate (free
 * flight from the mass-only start) pays nothing; serial passes in vertex
 * and element order, so the same bits for any pool.
 *
 * Replaced: translations only (three unknowns an aggregate) with A_c
 * assembled from the step's rotated elements and factored every step:
 * fem64 from its frame-105 snapshot 946 CG iterations a step against 716
 * now, and a squeezed block 47 against 35 (docs/design/DEFORMABLE.md). */

/* Objects smaller than this keep block Jacobi alone: a few aggregates
 * correct little, and their set-up costs more than the iterations it
 * saves (fem_bars' blocks of 64 vertices: 1,485 -> 1,298 iterations a
 * step, integration 9.7 -> 11.1 ms). */
#define COARSE_MIN_VERTICES 500
/* Larger objects aggregate their aggregates again until they have at
 * most this many (a factor of at most 6 x 300 unknowns: fem_beam's
 * 19,456 vertices make 936 aggregates, then 36). */
#define COARSE_MAX_AGGREGATES 300
/* unknowns an aggregate: translation, rotation */
#define CD 6
#define CD2 (CD * CD)

hy_status hy_fem_coarse_create(hy_fem_model* m) {
    int32_t nv = m->nv, nt = m->nt;
    if (nv < COARSE_MIN_VERTICES) return HY_OK;
    size_t ne = 12 * (size_t)nt; /* the vertex graph: each corner's three element neighbours, repeats kept */
    int32_t* adj_start = calloc((size_t)nv + 1, sizeof *adj_start);
    int32_t* adj = malloc(ne * sizeof *adj);
    int32_t* fill = malloc((size_t)nv * sizeof *fill);
    int32_t* slot = malloc(ne * sizeof *slot);
    int32_t* row = NULL;
    m->agg = malloc((size_t)nv * sizeof *m->agg);
    hy_status st = HY_OK;
    if (!adj_start || !adj || !fill || !slot || !m->agg) st = HY_ERR_NOMEM;
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
    if (!st && m->nc > 0) st = hy_amg_coarse_pattern(nv, adj_start, adj, m->agg, m->nc, &m->c_start, &m->c_col, slot);
    /* large objects: aggregates of aggregates until the factor is small */
    while (!st && m->nc > COARSE_MAX_AGGREGATES) {
        int32_t* up = malloc((size_t)m->nc * sizeof *up);
        int32_t nc2 = up ? hy_amg_aggregate(m->nc, m->c_start, m->c_col, NULL, up) : -1;
        if (nc2 < 0) st = HY_ERR_NOMEM;
        for (int32_t v = 0; !st && v < nv; v++)
            if (m->agg[v] >= 0) m->agg[v] = up[m->agg[v]];
        free(up);
        free(m->c_start);
        free(m->c_col);
        m->c_start = m->c_col = NULL;
        if (!st) m->nc = nc2;
        if (!st) st = hy_amg_coarse_pattern(nv, adj_start, adj, m->agg, m->nc, &m->c_start, &m->c_col, slot);
    }
    if (!st && m->nc > 0) {
        int32_t nc = m->nc;
        m->cen = calloc(3 * (size_t)nc, sizeof *m->cen);
        m->rdist = calloc(3 * (size_t)nv, sizeof *m->rdist);
        m->c_blk = calloc((size_t)nc + 1, sizeof *m->c_blk);
        double* msum = calloc((size_t)nc, sizeof *msum);
        if (!m->cen || !m->rdist || !m->c_blk || !msum) st = HY_ERR_NOMEM;
        for (int32_t v = 0; !st && v < nv; v++) {
            int32_t K = m->agg[v];
            if (K < 0) continue;
            msum[K] += m->mass[v];
            for (int a = 0; a < 3; a++) m->cen[3 * (size_t)K + a] += m->mass[v] * m->rest[3 * (size_t)v + a];
        }
        for (int32_t K = 0; !st && K < nc; K++) {
            for (int a = 0; a < 3; a++) m->cen[3 * (size_t)K + a] /= msum[K];
            /* block column K: its neighbours below K, then K itself */
            int32_t below = 0;
            for (int32_t q = m->c_start[K]; q < m->c_start[K + 1]; q++) below += m->c_col[q] < K;
            m->c_blk[K + 1] = m->c_blk[K] + below + 1;
        }
        free(msum);
        /* the factor's pattern: the upper triangle by block columns */
        int32_t n = CD * nc;
        if (!st) {
            row = malloc((size_t)m->c_blk[nc] * sizeof *row);
            if (!row) st = HY_ERR_NOMEM;
        }
        for (int32_t L = 0, k = 0; !st && L < nc; L++) {
            for (int32_t q = m->c_start[L]; q < m->c_start[L + 1] && m->c_col[q] < L; q++) row[k++] = m->c_col[q];
            row[k++] = L;
        }
        if (!st) st = hy_spchol_create_blocks(nc, CD, m->c_blk, row, &m->chol);
        m->r1 = malloc((size_t)n * sizeof *m->r1);
        m->z1 = malloc((size_t)n * sizeof *m->z1);
        if (!st && (!m->r1 || !m->z1)) st = HY_ERR_NOMEM;
    }
    free(adj_start);
    free(adj);
    free(fill);
    free(slot);
    free(row);
    if (st == HY_ERR_NOMEM)
        return hy_fail(HY_ERR_NOMEM, "fem: out of memory for the coarse level (%d vertices, %d tetrahedra)", nv, nt);
    return st;
}

/* The upper block (K, L), K <= L, of a CD2-per-block array. */
static double* coarse_block(const hy_fem_model* m, double* base, int32_t K, int32_t L) {
    int32_t q = m->c_blk[L + 1] - 1; /* K == L: the column's last */
    if (K != L) {
        int32_t lo = m->c_start[L], hi = m->c_start[L + 1];
        while (lo < hi) {
            int32_t mid = lo + (hi - lo) / 2;
            if (m->c_col[mid] < K) lo = mid + 1;
            else hi = mid;
        }
        q = m->c_blk[L] + (lo - m->c_start[L]);
    }
    return base + (size_t)q * CD2;
}

/* out += P_i^T B P_j, P = [I, -S(d)] (3 x CD; S(d) w = d x w). */
static void add_rigid_block(const double B[9], const double di[3], const double dj[3], double* out) {
    double P[2][18];
    const double* d[2] = {di, dj};
    for (int s = 0; s < 2; s++) {
        const double* e = d[s];
        double S[9] = {0.0, -e[2], e[1], e[2], 0.0, -e[0], -e[1], e[0], 0.0};
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++) P[s][6 * a + c] = a == c ? 1.0 : 0.0, P[s][6 * a + 3 + c] = -S[3 * a + c];
    }
    double BP[18]; /* B P_j */
    for (int a = 0; a < 3; a++)
        for (int c = 0; c < CD; c++)
            BP[6 * a + c] = B[3 * a] * P[1][c] + B[3 * a + 1] * P[1][6 + c] + B[3 * a + 2] * P[1][12 + c];
    for (int r = 0; r < CD; r++)
        for (int c = 0; c < CD; c++)
            out[CD * r + c] += P[0][r] * BP[c] + P[0][6 + r] * BP[6 + c] + P[0][12 + r] * BP[12 + c];
}

/* The rest system's Galerkin product, once: the mass part per vertex and
 * the stiffness part per element corner pair, B_ij = V (mu (b_i . b_j) I +
 * mu b_j b_i^T + lambda b_i b_j^T), fixed vertices left out (their rows
 * and columns are the identity). Upper blocks only (agg i <= agg j); the
 * ordered pairs inside one aggregate give its whole diagonal block. */
static hy_status coarse_assemble(hy_fem_model* m) {
    size_t len = (size_t)m->c_blk[m->nc] * CD2;
    m->c_mass = calloc(len, sizeof *m->c_mass);
    m->c_stiff = calloc(len, sizeof *m->c_stiff);
    if (!m->c_mass || !m->c_stiff) return hy_fail(HY_ERR_NOMEM, "fem: out of memory for the coarse level");
    for (int32_t v = 0; v < m->nv; v++) {
        int32_t K = m->agg[v];
        if (K < 0) continue;
        double d[3], B[9] = {m->mass[v], 0, 0, 0, m->mass[v], 0, 0, 0, m->mass[v]};
        for (int a = 0; a < 3; a++) d[a] = m->rest[3 * (size_t)v + a] - m->cen[3 * (size_t)K + a];
        add_rigid_block(B, d, d, coarse_block(m, m->c_mass, K, K));
    }
    for (int32_t e = 0; e < m->nt; e++) {
        const int32_t* t = m->tet + 4 * e;
        const double* g = m->grad + 12 * (size_t)e;
        double d[4][3];
        for (int i = 0; i < 4; i++)
            for (int a = 0; a < 3; a++)
                d[i][a] = m->agg[t[i]] < 0 ? 0.0 : m->rest[3 * (size_t)t[i] + a] - m->cen[3 * (size_t)m->agg[t[i]] + a];
        for (int i = 0; i < 4; i++)
            for (int j = 0; j < 4; j++) {
                int32_t K = m->agg[t[i]], L = m->agg[t[j]];
                if (K < 0 || L < 0 || K > L) continue;
                const double *bi = g + 3 * i, *bj = g + 3 * j;
                double dot = bi[0] * bj[0] + bi[1] * bj[1] + bi[2] * bj[2], B[9];
                for (int a = 0; a < 3; a++)
                    for (int c = 0; c < 3; c++)
                        B[3 * a + c] = m->vol[e] * ((a == c ? m->mu * dot : 0.0) + m->mu * bj[a] * bi[c] +
                                                    m->lambda * bi[a] * bj[c]);
                add_rigid_block(B, d[i], d[j], coarse_block(m, m->c_stiff, K, L));
            }
    }
    return HY_OK;
}

/* For the prepared step: the factor for its dt (kept while the scales stay
 * the same) and the object's rotation at x0. */
static void fem_coarse_setup(hy_fem_model* m) {
    m->coarse_state = -1;
    if (!m->nc || m->coarse_off || !m->prep_x0) return;
    if (!m->c_stiff && coarse_assemble(m) != HY_OK) {
        hy_error_clear();
        m->coarse_off = 1; /* out of memory: block Jacobi alone from now on */
        return;
    }
    if (m->chol_diag != m->diag_scale || m->chol_k != m->k_scale) {
        double* val = hy_spchol_values(m->chol);
        size_t k = 0;
        for (int32_t L = 0; L < m->nc; L++)
            for (int b = 0; b < CD; b++)
                for (int32_t q = m->c_blk[L]; q < m->c_blk[L + 1]; q++) {
                    const double* M = m->c_mass + (size_t)q * CD2;
                    const double* K = m->c_stiff + (size_t)q * CD2;
                    for (int a = 0; a < (q == m->c_blk[L + 1] - 1 ? b + 1 : CD); a++)
                        val[k++] = m->diag_scale * M[CD * a + b] + m->k_scale * K[CD * a + b];
                }
        m->chol_diag = m->chol_k = 0.0;
        /* SPD in exact arithmetic; a factor that fails in floating point
         * leaves block Jacobi alone (CG converges, slower) */
        if (hy_spchol_factor(m->chol) != HY_OK) {
            hy_error_clear();
            return;
        }
        m->chol_diag = m->diag_scale, m->chol_k = m->k_scale;
    }
    /* the best rigid fit of x0 to the rest shape over the free vertices */
    double ms = 0.0, xc[3] = {0, 0, 0}, Xc[3] = {0, 0, 0}, A[9] = {0};
    const double* x = m->prep_x0;
    for (int32_t v = 0; v < m->nv; v++) {
        if (m->agg[v] < 0) continue;
        ms += m->mass[v];
        for (int a = 0; a < 3; a++)
            xc[a] += m->mass[v] * x[3 * (size_t)v + a], Xc[a] += m->mass[v] * m->rest[3 * (size_t)v + a];
    }
    for (int a = 0; a < 3; a++) xc[a] /= ms, Xc[a] /= ms;
    for (int32_t v = 0; v < m->nv; v++) {
        if (m->agg[v] < 0) continue;
        double p[3], q[3];
        for (int a = 0; a < 3; a++) p[a] = x[3 * (size_t)v + a] - xc[a], q[a] = m->rest[3 * (size_t)v + a] - Xc[a];
        for (int a = 0; a < 3; a++)
            for (int c = 0; c < 3; c++) A[3 * a + c] += m->mass[v] * p[a] * q[c];
    }
    hy_fem_hd_polar(A, m->rot);
    /* each vertex's offset from its aggregate's centre, turned: R d */
    const double* R = m->rot;
    for (int32_t v = 0; v < m->nv; v++) {
        int32_t K = m->agg[v];
        if (K < 0) continue;
        double d[3];
        for (int a = 0; a < 3; a++) d[a] = m->rest[3 * (size_t)v + a] - m->cen[3 * (size_t)K + a];
        for (int a = 0; a < 3; a++) m->rdist[3 * (size_t)v + a] = R[3 * a] * d[0] + R[3 * a + 1] * d[1] + R[3 * a + 2] * d[2];
    }
    m->coarse_state = 1;
}

void hy_fem_precondition(hy_fem_model* m, hy_pool* pool, const double* r, double* z) {
    hy_implicit_block_precondition(pool, m->nv, m->pinv, r, z);
    if (m->coarse_state == 0) fem_coarse_setup(m);
    if (m->coarse_state != 1) return;
    const double* R = m->rot;
    double *r1 = m->r1, *z1 = m->z1;
    int32_t n3 = CD * m->nc / 3; /* 3-vectors in r1 and z1 */
    memset(r1, 0, (size_t)(CD * m->nc) * sizeof *r1);
    /* restrict, P^T Q^T r: per aggregate the sums of r and of (R d) x r
     * (R^T (a x b) = R^T a x R^T b), each turned by R^T once */
    for (int32_t v = 0; v < m->nv; v++) {
        int32_t K = m->agg[v];
        if (K < 0) continue;
        const double *rv = r + 3 * (size_t)v, *d = m->rdist + 3 * (size_t)v;
        double* o = r1 + (size_t)CD * (size_t)K;
        o[0] += rv[0], o[1] += rv[1], o[2] += rv[2];
        o[3] += d[1] * rv[2] - d[2] * rv[1];
        o[4] += d[2] * rv[0] - d[0] * rv[2];
        o[5] += d[0] * rv[1] - d[1] * rv[0];
    }
    for (int32_t k = 0; k < n3; k++) {
        double *o = r1 + 3 * (size_t)k, u[3];
        for (int a = 0; a < 3; a++) u[a] = R[a] * o[0] + R[3 + a] * o[1] + R[6 + a] * o[2];
        o[0] = u[0], o[1] = u[1], o[2] = u[2];
    }
    hy_spchol_solve(m->chol, r1, z1);
    /* prolong, z += Q P z1: each aggregate's motion turned by R once, then
     * per vertex t + w x (R d) */
    for (int32_t k = 0; k < n3; k++) {
        double *o = z1 + 3 * (size_t)k, u[3];
        for (int a = 0; a < 3; a++) u[a] = R[3 * a] * o[0] + R[3 * a + 1] * o[1] + R[3 * a + 2] * o[2];
        o[0] = u[0], o[1] = u[1], o[2] = u[2];
    }
    for (int32_t v = 0; v < m->nv; v++) {
        int32_t K = m->agg[v];
        if (K < 0) continue;
        const double *c = z1 + (size_t)CD * (size_t)K, *d = m->rdist + 3 * (size_t)v;
        double* zv = z + 3 * (size_t)v;
        zv[0] += c[0] + (c[4] * d[2] - c[5] * d[1]);
        zv[1] += c[1] + (c[5] * d[0] - c[3] * d[2]);
        zv[2] += c[2] + (c[3] * d[1] - c[4] * d[0]);
    }
}
