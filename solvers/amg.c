#include "solvers/amg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "solvers/spchol.h"

/* Coarsening stops at this many nodes (three unknowns each): a factor of
 * a few thousand unknowns on a mesh-like graph costs well under a
 * millisecond to apply. It stops earlier when aggregation no longer
 * shrinks the level by a quarter (a graph too dense to coarsen). */
#define COARSEST_NODES 800
#define MAX_LEVELS 12
#define NODE_GRAIN 512

typedef struct level {
    int32_t n, nnz;
    int32_t *row_start, *col; /* off-diagonal blocks, both triangles, columns ascending */
    double *mass, *W;         /* 9 n, 9 nnz */
    double *adiag, *dinv;     /* 9 n: the diagonal blocks and their inverses */
    double *r, *z, *t;        /* 3 n each */
    /* towards the next level (all but the coarsest) */
    int32_t* agg;                 /* n */
    int32_t *mem_start, *mem;     /* the next level's nodes' members, ascending */
    int32_t* slot;                /* nnz: entry's block on the next level, -1 inside an aggregate */
    /* the coarsest level */
    hy_spchol* chol;
    int32_t* chol_pos; /* nnz: where the entry goes in the factor's values, -1 for the lower triangle */
    int32_t* chol_diag; /* n: column 3I's first diagonal entry */
} level;

struct hy_amg {
    int32_t count;
    level lv[MAX_LEVELS];
};

static int cmp_i32(const void* pa, const void* pb) {
    int32_t a = *(const int32_t*)pa, b = *(const int32_t*)pb;
    return (a > b) - (a < b);
}

int32_t hy_amg_aggregate(int32_t n, const int32_t* adj_start, const int32_t* adj, const uint8_t* skip,
                         int32_t* agg) {
    int32_t nc = 0;
    for (int32_t i = 0; i < n; i++) agg[i] = -1;
    /* pass 1: roots whose neighbours are all free take them */
    for (int32_t i = 0; i < n; i++) {
        if ((skip && skip[i]) || agg[i] >= 0) continue;
        int free_all = 1;
        for (int32_t e = adj_start[i]; e < adj_start[i + 1] && free_all; e++) {
            int32_t j = adj[e];
            if (!(skip && skip[j]) && agg[j] >= 0) free_all = 0;
        }
        if (!free_all) continue;
        agg[i] = nc;
        for (int32_t e = adj_start[i]; e < adj_start[i + 1]; e++) {
            int32_t j = adj[e];
            if (!(skip && skip[j])) agg[j] = nc;
        }
        nc++;
    }
    /* pass 2: the rest join a neighbour's aggregate (from pass 1 only, so
     * the order of this pass does not chain), or stay alone */
    int32_t* first = malloc((size_t)(n > 0 ? n : 1) * sizeof *first);
    if (!first) return -1;
    memcpy(first, agg, (size_t)n * sizeof *first);
    for (int32_t i = 0; i < n; i++) {
        if ((skip && skip[i]) || first[i] >= 0) continue;
        for (int32_t e = adj_start[i]; e < adj_start[i + 1]; e++) {
            int32_t j = adj[e];
            if (!(skip && skip[j]) && first[j] >= 0) {
                agg[i] = first[j];
                break;
            }
        }
        if (agg[i] < 0) agg[i] = nc++;
    }
    free(first);
    return nc;
}

hy_status hy_amg_coarse_pattern(int32_t n, const int32_t* adj_start, const int32_t* adj, const int32_t* agg,
                                int32_t nc, int32_t** c_start, int32_t** c_col, int32_t* slot) {
    *c_start = NULL;
    *c_col = NULL;
    int64_t ne = adj_start[n];
    /* members of each coarse node */
    int32_t* mstart = calloc((size_t)nc + 1, sizeof *mstart);
    int32_t* mem = malloc((size_t)(n > 0 ? n : 1) * sizeof *mem);
    int32_t* cs = calloc((size_t)nc + 1, sizeof *cs);
    int32_t* list = malloc((size_t)(ne > 0 ? ne : 1) * sizeof *list);
    if (!mstart || !mem || !cs || !list) goto nomem;
    for (int32_t i = 0; i < n; i++)
        if (agg[i] >= 0) mstart[agg[i] + 1]++;
    for (int32_t k = 0; k < nc; k++) mstart[k + 1] += mstart[k];
    {
        int32_t* fill = malloc((size_t)(nc > 0 ? nc : 1) * sizeof *fill);
        if (!fill) goto nomem;
        memcpy(fill, mstart, (size_t)nc * sizeof *fill);
        for (int32_t i = 0; i < n; i++)
            if (agg[i] >= 0) mem[fill[agg[i]]++] = i;
        free(fill);
    }
    /* each coarse row: the distinct other aggregates its members touch */
    int64_t nnz = 0;
    for (int32_t k = 0; k < nc; k++) {
        int32_t cnt = 0;
        for (int32_t m = mstart[k]; m < mstart[k + 1]; m++) {
            int32_t i = mem[m];
            for (int32_t e = adj_start[i]; e < adj_start[i + 1]; e++) {
                int32_t l = agg[adj[e]];
                if (l >= 0 && l != k) list[nnz + cnt++] = l;
            }
        }
        qsort(list + nnz, (size_t)cnt, sizeof *list, cmp_i32);
        int32_t u = 0;
        for (int32_t q = 0; q < cnt; q++)
            if (u == 0 || list[nnz + u - 1] != list[nnz + q]) list[nnz + u++] = list[nnz + q];
        cs[k + 1] = (int32_t)(nnz + u);
        nnz += u;
    }
    for (int32_t i = 0; i < n; i++) {
        int32_t k = agg[i];
        for (int32_t e = adj_start[i]; e < adj_start[i + 1]; e++) {
            int32_t l = agg[adj[e]];
            slot[e] = -1;
            if (k < 0 || l < 0 || l == k) continue;
            int32_t* hit = bsearch(&l, list + cs[k], (size_t)(cs[k + 1] - cs[k]), sizeof *list, cmp_i32);
            slot[e] = (int32_t)(hit - list);
        }
    }
    free(mstart);
    free(mem);
    int32_t* col = realloc(list, (size_t)(nnz > 0 ? nnz : 1) * sizeof *col);
    *c_start = cs;
    *c_col = col ? col : list;
    return HY_OK;
nomem:
    free(mstart);
    free(mem);
    free(cs);
    free(list);
    return hy_fail(HY_ERR_NOMEM, "amg: out of memory for a coarse level of %d nodes", nc);
}

static double* alloc_d(int64_t n) { return calloc((size_t)(n > 0 ? n : 1), sizeof(double)); }

static void level_free(level* L) {
    free(L->row_start);
    free(L->col);
    free(L->mass);
    free(L->W);
    free(L->adiag);
    free(L->dinv);
    free(L->r);
    free(L->z);
    free(L->t);
    free(L->agg);
    free(L->mem_start);
    free(L->mem);
    free(L->slot);
    hy_spchol_destroy(L->chol);
    free(L->chol_pos);
    free(L->chol_diag);
}

static hy_status level_alloc(level* L) {
    L->mass = alloc_d(9 * (int64_t)L->n);
    L->W = alloc_d(9 * (int64_t)L->nnz);
    L->adiag = alloc_d(9 * (int64_t)L->n);
    L->dinv = alloc_d(9 * (int64_t)L->n);
    L->r = alloc_d(3 * (int64_t)L->n);
    L->z = alloc_d(3 * (int64_t)L->n);
    L->t = alloc_d(3 * (int64_t)L->n);
    if (!L->mass || !L->W || !L->adiag || !L->dinv || !L->r || !L->z || !L->t)
        return hy_fail(HY_ERR_NOMEM, "amg: out of memory for a level of %d nodes", L->n);
    return HY_OK;
}

/* The coarsest level's factor: upper triangle in 3x3 blocks, column 3J+a
 * holding J's lower neighbours (rows ascending), then the diagonal block's
 * rows 3J..3J+a. */
static hy_status coarsest_factor_create(level* L) {
    int32_t n = L->n;
    int32_t* cs = malloc(((size_t)3 * n + 1) * sizeof *cs);
    L->chol_pos = malloc((size_t)(L->nnz > 0 ? L->nnz : 1) * sizeof *L->chol_pos);
    L->chol_diag = malloc((size_t)n * sizeof *L->chol_diag);
    if (!cs || !L->chol_pos || !L->chol_diag) {
        free(cs);
        return hy_fail(HY_ERR_NOMEM, "amg: out of memory for the coarsest factor (%d nodes)", n);
    }
    int64_t nnz = 0;
    for (int32_t j = 0; j < n; j++) {
        int32_t low = 0;
        for (int32_t e = L->row_start[j]; e < L->row_start[j + 1]; e++) {
            L->chol_pos[e] = -1;
            if (L->col[e] < j) L->chol_pos[e] = (int32_t)(3 * low++); /* offset in each of j's columns */
        }
        for (int a = 0; a < 3; a++) {
            cs[3 * j + a] = (int32_t)nnz;
            nnz += 3 * (int64_t)low + a + 1;
        }
        L->chol_diag[j] = 3 * low;
    }
    cs[3 * n] = (int32_t)nnz;
    int32_t* row = malloc((size_t)nnz * sizeof *row);
    if (!row) {
        free(cs);
        return hy_fail(HY_ERR_NOMEM, "amg: out of memory for the coarsest factor (%lld entries)", (long long)nnz);
    }
    for (int32_t j = 0; j < n; j++)
        for (int a = 0; a < 3; a++) {
            int32_t* r = row + cs[3 * j + a];
            for (int32_t e = L->row_start[j]; e < L->row_start[j + 1]; e++)
                if (L->col[e] < j)
                    for (int b = 0; b < 3; b++) *r++ = 3 * L->col[e] + b;
            for (int b = 0; b <= a; b++) *r++ = 3 * j + b;
        }
    hy_status st = hy_spchol_create(3 * n, cs, row, &L->chol);
    free(cs);
    free(row);
    return st;
}

hy_status hy_amg_create(int32_t n1, const int32_t* row_start, const int32_t* col, hy_amg** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "amg: out is NULL");
    *out = NULL;
    if (n1 < 1 || !row_start || !col) return hy_fail(HY_ERR_INVALID_ARG, "amg: empty level 1 (%d nodes)", n1);
    hy_amg* a = calloc(1, sizeof *a);
    if (!a) return hy_fail(HY_ERR_NOMEM, "amg: out of memory");
    hy_status st = HY_OK;
    level* L = &a->lv[0];
    a->count = 1;
    L->n = n1;
    L->nnz = row_start[n1];
    L->row_start = malloc(((size_t)n1 + 1) * sizeof *L->row_start);
    L->col = malloc((size_t)(L->nnz > 0 ? L->nnz : 1) * sizeof *L->col);
    if (!L->row_start || !L->col) {
        st = hy_fail(HY_ERR_NOMEM, "amg: out of memory for level 1 (%d nodes)", n1);
        goto fail;
    }
    memcpy(L->row_start, row_start, ((size_t)n1 + 1) * sizeof *L->row_start);
    memcpy(L->col, col, (size_t)L->nnz * sizeof *L->col);
    if ((st = level_alloc(L)) != HY_OK) goto fail;
    for (;;) {
        L = &a->lv[a->count - 1];
        if (L->n <= COARSEST_NODES || a->count == MAX_LEVELS) break;
        L->agg = malloc((size_t)L->n * sizeof *L->agg);
        L->slot = malloc((size_t)(L->nnz > 0 ? L->nnz : 1) * sizeof *L->slot);
        if (!L->agg || !L->slot) {
            st = hy_fail(HY_ERR_NOMEM, "amg: out of memory for aggregates of %d nodes", L->n);
            goto fail;
        }
        int32_t nc = hy_amg_aggregate(L->n, L->row_start, L->col, NULL, L->agg);
        if (nc < 0) {
            st = hy_fail(HY_ERR_NOMEM, "amg: out of memory for aggregates of %d nodes", L->n);
            goto fail;
        }
        if (nc > L->n - L->n / 4) break; /* no longer shrinks: this level is the coarsest */
        level* C = &a->lv[a->count];
        C->n = nc;
        if ((st = hy_amg_coarse_pattern(L->n, L->row_start, L->col, L->agg, nc, &C->row_start, &C->col, L->slot)) !=
            HY_OK)
            goto fail;
        a->count++;
        C->nnz = C->row_start[nc];
        if ((st = level_alloc(C)) != HY_OK) goto fail;
        /* members, for restriction and the mass sums */
        L->mem_start = calloc((size_t)nc + 1, sizeof *L->mem_start);
        L->mem = malloc((size_t)L->n * sizeof *L->mem);
        if (!L->mem_start || !L->mem) {
            st = hy_fail(HY_ERR_NOMEM, "amg: out of memory for aggregates of %d nodes", L->n);
            goto fail;
        }
        for (int32_t i = 0; i < L->n; i++) L->mem_start[L->agg[i] + 1]++;
        for (int32_t k = 0; k < nc; k++) L->mem_start[k + 1] += L->mem_start[k];
        int32_t* fill = malloc((size_t)nc * sizeof *fill);
        if (!fill) {
            st = hy_fail(HY_ERR_NOMEM, "amg: out of memory for aggregates of %d nodes", L->n);
            goto fail;
        }
        memcpy(fill, L->mem_start, (size_t)nc * sizeof *fill);
        for (int32_t i = 0; i < L->n; i++) L->mem[fill[L->agg[i]]++] = i;
        free(fill);
    }
    /* the last level built is the coarsest: it keeps no aggregates */
    L = &a->lv[a->count - 1];
    free(L->agg);
    free(L->slot);
    free(L->mem_start);
    free(L->mem);
    L->agg = L->slot = L->mem_start = L->mem = NULL;
    if ((st = coarsest_factor_create(L)) != HY_OK) goto fail;
    *out = a;
    return HY_OK;
fail:
    hy_amg_destroy(a);
    return st;
}

void hy_amg_destroy(hy_amg* a) {
    if (!a) return;
    for (int k = 0; k < MAX_LEVELS; k++) level_free(&a->lv[k]);
    free(a);
}

double* hy_amg_mass_blocks(hy_amg* a) { return a ? a->lv[0].mass : NULL; }
double* hy_amg_coupling_blocks(hy_amg* a) { return a ? a->lv[0].W : NULL; }
const int32_t* hy_amg_level1_rows(const hy_amg* a) { return a ? a->lv[0].row_start : NULL; }
int32_t hy_amg_levels(const hy_amg* a) { return a ? a->count : 0; }
int32_t hy_amg_coarsest_nodes(const hy_amg* a) { return a ? a->lv[a->count - 1].n : 0; }

int hy_amg_inverse3(const double a[9], double out[9]) {
    /* Cholesky of the symmetric part, then the inverse from it: fails
     * (returns 0) exactly when the block is not positive definite. */
    double l00 = a[0];
    if (!(l00 > 0)) goto bad;
    l00 = sqrt(l00);
    double l10 = a[3] / l00, l20 = a[6] / l00;
    double d11 = a[4] - l10 * l10;
    if (!(d11 > 0)) goto bad;
    double l11 = sqrt(d11);
    double l21 = (a[7] - l20 * l10) / l11;
    double d22 = a[8] - l20 * l20 - l21 * l21;
    if (!(d22 > 0)) goto bad;
    double l22 = sqrt(d22);
    /* inverse of L (lower triangular) */
    double i00 = 1.0 / l00, i11 = 1.0 / l11, i22 = 1.0 / l22;
    double i10 = -l10 * i00 * i11;
    double i21 = -l21 * i11 * i22;
    double i20 = -(l20 * i00 + l21 * i10) * i22;
    /* A^-1 = L^-T L^-1 */
    out[0] = i00 * i00 + i10 * i10 + i20 * i20;
    out[1] = out[3] = i10 * i11 + i20 * i21;
    out[2] = out[6] = i20 * i22;
    out[4] = i11 * i11 + i21 * i21;
    out[5] = out[7] = i21 * i22;
    out[8] = i22 * i22;
    return 1;
bad:
    memset(out, 0, 9 * sizeof *out);
    return 0;
}

/* ---- setup */

typedef struct setup_ctx {
    hy_amg* a;
    int k;
} setup_ctx;

/* Level k's diagonal blocks and their inverses. */
static void diag_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    setup_ctx* c = vctx;
    level* L = &c->a->lv[c->k];
    for (int64_t i = begin; i < end; i++) {
        double d[9];
        memcpy(d, L->mass + 9 * i, sizeof d);
        for (int32_t e = L->row_start[i]; e < L->row_start[i + 1]; e++)
            for (int q = 0; q < 9; q++) d[q] -= L->W[9 * (int64_t)e + q];
        memcpy(L->adiag + 9 * i, d, sizeof d);
        hy_amg_inverse3(d, L->dinv + 9 * i); /* zeros when not SPD: checked after the pass */
    }
}

/* Level k+1 from level k, per coarse node: masses and couplings summed
 * over its members in ascending order. */
static void coarsen_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    setup_ctx* c = vctx;
    const level* F = &c->a->lv[c->k];
    level* C = &c->a->lv[c->k + 1];
    for (int64_t K = begin; K < end; K++) {
        double* m = C->mass + 9 * K;
        memset(m, 0, 9 * sizeof *m);
        memset(C->W + 9 * (int64_t)C->row_start[K], 0, 9 * (size_t)(C->row_start[K + 1] - C->row_start[K]) * sizeof(double));
        for (int32_t q = F->mem_start[K]; q < F->mem_start[K + 1]; q++) {
            int32_t i = F->mem[q];
            for (int p = 0; p < 9; p++) m[p] += F->mass[9 * (int64_t)i + p];
            for (int32_t e = F->row_start[i]; e < F->row_start[i + 1]; e++) {
                int32_t s = F->slot[e];
                if (s < 0) continue;
                for (int p = 0; p < 9; p++) C->W[9 * (int64_t)s + p] += F->W[9 * (int64_t)e + p];
            }
        }
    }
}

hy_status hy_amg_setup(hy_amg* a, hy_pool* pool) {
    if (!a) return hy_fail(HY_ERR_INVALID_ARG, "amg: NULL hierarchy");
    setup_ctx c = {.a = a};
    for (int k = 0; k < a->count; k++) {
        c.k = k;
        level* L = &a->lv[k];
        if (k + 1 < a->count) hy_pool_for(pool, a->lv[k + 1].n, NODE_GRAIN, coarsen_block, &c);
        hy_pool_for(pool, L->n, NODE_GRAIN, diag_block, &c);
        for (int32_t i = 0; i < L->n; i++)
            if (!(L->dinv[9 * (int64_t)i] > 0))
                return hy_fail(HY_ERR_NUMERIC, "amg: level %d node %d: diagonal block not positive definite", k + 1, i);
    }
    /* coarsest: values into the factor, then factor */
    level* L = &a->lv[a->count - 1];
    double* val = hy_spchol_values(L->chol);
    int64_t base = 0;
    for (int32_t j = 0; j < L->n; j++) {
        int32_t low = L->chol_diag[j] / 3;
        for (int col = 0; col < 3; col++) {
            double* v = val + base;
            for (int32_t e = L->row_start[j]; e < L->row_start[j + 1]; e++) {
                if (L->chol_pos[e] < 0) continue;
                /* row 3I+b, column 3j+col: A(3I+b, 3j+col) = W_jI[col][b] */
                for (int b = 0; b < 3; b++) v[L->chol_pos[e] + b] = L->W[9 * (int64_t)e + 3 * col + b];
            }
            for (int b = 0; b <= col; b++) v[3 * low + b] = L->adiag[9 * (int64_t)j + 3 * b + col];
            base += 3 * (int64_t)low + col + 1;
        }
    }
    return hy_spchol_factor(L->chol);
}

/* ---- the cycle */

typedef struct cycle_ctx {
    level* L;
    level* C; /* the next level (restriction, prolongation) */
    const double* x;
    double* y;
    const double* r;
    double* z;
    double omega;
} cycle_ctx;

/* y = A x on a level. */
static void matvec_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    const cycle_ctx* c = vctx;
    const level* L = c->L;
    for (int64_t i = begin; i < end; i++) {
        const double* D = L->adiag + 9 * i;
        const double* xi = c->x + 3 * i;
        double y0 = D[0] * xi[0] + D[1] * xi[1] + D[2] * xi[2];
        double y1 = D[3] * xi[0] + D[4] * xi[1] + D[5] * xi[2];
        double y2 = D[6] * xi[0] + D[7] * xi[1] + D[8] * xi[2];
        for (int32_t e = L->row_start[i]; e < L->row_start[i + 1]; e++) {
            const double* W = L->W + 9 * (int64_t)e;
            const double* xj = c->x + 3 * (int64_t)L->col[e];
            y0 += W[0] * xj[0] + W[1] * xj[1] + W[2] * xj[2];
            y1 += W[3] * xj[0] + W[4] * xj[1] + W[5] * xj[2];
            y2 += W[6] * xj[0] + W[7] * xj[1] + W[8] * xj[2];
        }
        double* y = c->y + 3 * i;
        y[0] = y0;
        y[1] = y1;
        y[2] = y2;
    }
}

/* z += omega D^-1 (r - y); with y NULL, z = omega D^-1 r. */
static void jacobi_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    const cycle_ctx* c = vctx;
    const level* L = c->L;
    for (int64_t i = begin; i < end; i++) {
        const double* Di = L->dinv + 9 * i;
        const double* r = c->r + 3 * i;
        double d[3];
        for (int q = 0; q < 3; q++) d[q] = c->y ? r[q] - c->y[3 * i + q] : r[q];
        double* z = c->z + 3 * i;
        for (int q = 0; q < 3; q++) {
            double u = c->omega * (Di[3 * q] * d[0] + Di[3 * q + 1] * d[1] + Di[3 * q + 2] * d[2]);
            z[q] = c->y ? z[q] + u : u;
        }
    }
}

/* Restriction of r - y to the next level: sum over each aggregate's members. */
static void restrict_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    const cycle_ctx* c = vctx;
    const level* L = c->L;
    for (int64_t K = begin; K < end; K++) {
        double s[3] = {0, 0, 0};
        for (int32_t q = L->mem_start[K]; q < L->mem_start[K + 1]; q++) {
            int64_t i = L->mem[q];
            for (int p = 0; p < 3; p++) s[p] += c->r[3 * i + p] - c->y[3 * i + p];
        }
        for (int p = 0; p < 3; p++) c->C->r[3 * K + p] = s[p];
    }
}

/* z += P z_coarse. */
static void prolong_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    const cycle_ctx* c = vctx;
    const level* L = c->L;
    for (int64_t i = begin; i < end; i++) {
        const double* zc = c->C->z + 3 * (int64_t)L->agg[i];
        for (int p = 0; p < 3; p++) c->z[3 * i + p] += zc[p];
    }
}

static void cycle(hy_amg* a, hy_pool* pool, int k, const double* r, double* z) {
    level* L = &a->lv[k];
    if (k == a->count - 1) {
        hy_spchol_solve(L->chol, r, z);
        return;
    }
    cycle_ctx c = {.L = L, .C = &a->lv[k + 1], .r = r, .z = z, .omega = HY_AMG_OMEGA, .x = z, .y = NULL};
    hy_pool_for(pool, L->n, NODE_GRAIN, jacobi_block, &c);
    c.y = L->t;
    for (int s = 1; s < HY_AMG_SWEEPS; s++) {
        hy_pool_for(pool, L->n, NODE_GRAIN, matvec_block, &c);
        hy_pool_for(pool, L->n, NODE_GRAIN, jacobi_block, &c);
    }
    hy_pool_for(pool, L->n, NODE_GRAIN, matvec_block, &c);
    hy_pool_for(pool, c.C->n, NODE_GRAIN, restrict_block, &c);
    cycle(a, pool, k + 1, c.C->r, c.C->z);
    hy_pool_for(pool, L->n, NODE_GRAIN, prolong_block, &c);
    for (int s = 0; s < HY_AMG_SWEEPS; s++) {
        hy_pool_for(pool, L->n, NODE_GRAIN, matvec_block, &c);
        hy_pool_for(pool, L->n, NODE_GRAIN, jacobi_block, &c);
    }
}

void hy_amg_vcycle(hy_amg* a, hy_pool* pool, const double* r, double* z) {
    if (!a) return;
    cycle(a, pool, 0, r, z);
}
