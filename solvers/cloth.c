/* The implicit mass-spring cloth (see cloth.h and the design notes below):
 * the model's construction, the step and its contact constraints. The
 * step's matrix-free product and multigrid preconditioner are in
 * cloth_precond.c. */
#include "solvers/cloth.h"

#include <cblas.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/hd.h"
#include "core/sum_hd.h"
#include "solvers/cloth_internal.h"

/* Design notes
 *
 * Springs. Every mesh edge is a stretch spring. For every interior edge
 * shared by exactly two triangles we join the two far vertices (the ones
 * not on the edge). That far-vertex spring is a *shear* spring when both
 * angles opposite the shared edge exceed 75 degrees, i.e. the two triangles
 * form a quad whose diagonal is the shared edge, so the new spring is the
 * quad's other diagonal (the classic grid shear spring); otherwise it is a
 * *bending* spring: it spans the edge, so folding about the edge stretches
 * it. On a regular grid this gives one shear spring per quad and a
 * "knight's move" bending spring across every interior axis edge; on an
 * equilateral mesh (all angles near 60) every far-vertex spring bends and
 * the triangle edges alone resist shear, which is what they do there. A
 * far-vertex pair that is already a mesh edge or an earlier spring is not
 * added twice. Non-manifold edges (3+ triangles) get no far-vertex spring.
 *
 * Integration. Backward Euler linearised once per step (Baraff & Witkin
 * 1998): (M - dt dF/dv - dt^2 dF/dx) dv = dt (f0 + dt dF/dx v0). A spring's
 * stiffness block is K = k[d d^T + g (I - d d^T)], g = 1 - L/l. For a
 * compressed spring g < 0 makes K indefinite and CG can break down, so g is
 * clamped at 0 (the filtered Jacobian of Choi & Ko): K stays PSD and the
 * system matrix SPD, at the price of slower convergence in compression only.
 * Spring damping acts along the spring, c((vj - vi).d)d with c = damping*k,
 * so dF/dv = c d d^T. Each spring's system block is therefore
 *     S = alpha I + beta d d^T,  alpha = dt^2 k g,  beta = dt^2 k (1-g) + dt c,
 * and A = M(1 + dt air) + sum over springs of S placed as a graph Laplacian.
 *
 * Pinned vertices are handled by filtering (Baraff-Witkin): their rows of
 * b, of the preconditioner and of A x are zero, so CG never moves them, and
 * their inverse mass is 0. Vertices that no triangle with area touches have
 * no mass and are treated the same way (held in place).
 *
 * Contact constraints (hy_cloth_solve_constrained) hold one direction of a
 * vertex instead: its velocity along a contact normal. Filtering them the
 * same way (S A S with S = I - n n^T per held vertex, the V-cycle wrapped in
 * S) doubled the iterations on cloth_ball and hit the cap: the coarse
 * levels, built from the unfiltered matrix, kept correcting along held
 * directions. They are stiff penalties instead: beta n n^T joins the
 * vertex's diagonal block and beta n dn its right-hand side, so the system
 * stays one SPD matrix that the Galerkin levels see whole (the level-1
 * mass blocks gain the same terms), at the price of a normal velocity that
 * misses its target by (the springs' pull) / beta; beta is HOLD_GAIN times
 * the largest diagonal entry of the block. The impulse each constraint
 * took, beta (dn - n . dv), decides friction after the solve and tells
 * the caller where the cloth pulls away. CG's stopping test then measures
 * the residual in a norm where a held direction counts 1/HOLD_GAIN of
 * itself (held_norm2), against b without the penalties: in the plain
 * 2-norm the penalty rows (beta times a small velocity miss) dwarfed the
 * rest, and on cloth_ball CG stopped after about 60 iterations with the
 * free directions' residual at 3-6% of their forces. Converged honestly,
 * the draped cloth takes about 115-130, as it did before the constraints.
 *
 * The matrix-free product and the multigrid preconditioner are in
 * solvers/cloth_precond.c (their design notes there). */

/* A held vertex's penalty over its largest diagonal entry: its normal
 * velocity misses the target by about 1/HOLD_GAIN of what its springs ask. */
#define HOLD_GAIN 1e3

/* cos(75 deg): the far-vertex spring of an edge is a quad's other diagonal
 * (shear) when both opposite angles are larger than this. */
#define SHEAR_COS 0.25881904510252074

/* ---- model construction */

typedef struct edge_rec {
    int32_t a, b; /* a < b */
    int32_t far;  /* the triangle's third vertex */
} edge_rec;

static int cmp_edge(const void* pa, const void* pb) {
    const edge_rec *x = pa, *y = pb;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    if (x->b != y->b) return x->b < y->b ? -1 : 1;
    return (x->far > y->far) - (x->far < y->far);
}

typedef struct pair_rec {
    int32_t a, b, type;
} pair_rec;

static int cmp_pair(const void* pa, const void* pb) {
    const pair_rec *x = pa, *y = pb;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    if (x->b != y->b) return x->b < y->b ? -1 : 1;
    return (x->type > y->type) - (x->type < y->type);
}

/* Is (a, b) a mesh edge? `edges` holds the unique edges sorted. */
static int has_edge(const edge_rec* edges, int32_t n, int32_t a, int32_t b) {
    int32_t lo = 0, hi = n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        const edge_rec* e = &edges[mid];
        if (e->a < a || (e->a == a && e->b < b)) lo = mid + 1;
        else hi = mid;
    }
    return lo < n && edges[lo].a == a && edges[lo].b == b;
}

/* Cosine of the angle at f in triangle (a, b, f); 1 for a degenerate one
 * (so it never counts as a quad diagonal). */
static double cos_at(const double* x, int32_t f, int32_t a, int32_t b) {
    double u[3], w[3], uu = 0, ww = 0, uw = 0;
    for (int k = 0; k < 3; k++) {
        u[k] = x[3 * a + k] - x[3 * f + k];
        w[k] = x[3 * b + k] - x[3 * f + k];
        uu += u[k] * u[k];
        ww += w[k] * w[k];
        uw += u[k] * w[k];
    }
    if (!(uu > 0) || !(ww > 0)) return 1.0;
    return uw / sqrt(uu * ww);
}


static hy_status check_param(const char* name, double v, int positive) {
    if (!isfinite(v) || v < 0 || (positive && v == 0))
        return hy_fail(HY_ERR_INVALID_ARG, "cloth: %s must be %s, got %g", name,
                       positive ? "finite and > 0" : "finite and >= 0", v);
    return HY_OK;
}

/* Twice the area of triangle v of `rest` (|(p1 - p0) x (p2 - p0)|); with
 * longest2, its longest edge squared there too. */
static double twice_area(const double* rest, const int32_t* v, double* longest2) {
    const double *p0 = rest + 3 * v[0], *p1 = rest + 3 * v[1], *p2 = rest + 3 * v[2];
    double u[3] = {p1[0] - p0[0], p1[1] - p0[1], p1[2] - p0[2]};
    double w[3] = {p2[0] - p0[0], p2[1] - p0[1], p2[2] - p0[2]};
    double c[3] = {u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0]};
    if (longest2) {
        double d[3] = {w[0] - u[0], w[1] - u[1], w[2] - u[2]};
        double lu = u[0] * u[0] + u[1] * u[1] + u[2] * u[2], lw = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
        double ld = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        double l2 = lu > lw ? lu : lw;
        *longest2 = l2 > ld ? l2 : ld;
    }
    return sqrt(c[0] * c[0] + c[1] * c[1] + c[2] * c[2]);
}


hy_status hy_cloth_model_create(const double* rest, int32_t nv, const int32_t* tri, int32_t nt,
                                const hy_cloth_params* params, const int32_t* pinned, int32_t pinned_count,
                                hy_cloth_model** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "cloth: out is NULL");
    *out = NULL;
    if (!rest || !tri || !params) return hy_fail(HY_ERR_INVALID_ARG, "cloth: rest, tri and params must not be NULL");
    if (nv < 3 || nt < 1)
        return hy_fail(HY_ERR_INVALID_ARG, "cloth: needs >= 3 vertices and >= 1 triangle, got %d and %d", nv, nt);
    /* 5 * springs (< 4.5 per triangle) must fit the int32 CSR offsets. */
    if (nt > (INT32_MAX / 24)) return hy_fail(HY_ERR_INVALID_ARG, "cloth: too many triangles (%d)", nt);
    if (pinned_count < 0 || (pinned_count > 0 && !pinned))
        return hy_fail(HY_ERR_INVALID_ARG, "cloth: pinned_count %d with pinned %s", pinned_count,
                       pinned ? "set" : "NULL");
    hy_status st;
    if ((st = check_param("density", params->density, 1)) != HY_OK) return st;
    if ((st = check_param("stretch_stiffness", params->stretch_stiffness, 0)) != HY_OK) return st;
    if ((st = check_param("shear_stiffness", params->shear_stiffness, 0)) != HY_OK) return st;
    if ((st = check_param("bend_stiffness", params->bend_stiffness, 0)) != HY_OK) return st;
    if ((st = check_param("damping", params->damping, 0)) != HY_OK) return st;
    if ((st = check_param("air_damping", params->air_damping, 0)) != HY_OK) return st;
    for (int64_t i = 0; i < 3 * (int64_t)nv; i++)
        if (!isfinite(rest[i]))
            return hy_fail(HY_ERR_INVALID_ARG, "cloth: vertex %lld coordinate %lld is not finite (%g)",
                           (long long)(i / 3), (long long)(i % 3), rest[i]);
    for (int32_t t = 0; t < nt; t++) {
        const int32_t* v = tri + 3 * t;
        for (int k = 0; k < 3; k++)
            if (v[k] < 0 || v[k] >= nv)
                return hy_fail(HY_ERR_INVALID_ARG, "cloth: triangle %d index %d out of range [0, %d)", t, v[k], nv);
        if (v[0] == v[1] || v[1] == v[2] || v[0] == v[2])
            return hy_fail(HY_ERR_INVALID_ARG, "cloth: triangle %d repeats a vertex (%d %d %d)", t, v[0], v[1], v[2]);
        /* A triangle without area in double (a sliver, or one whose size
         * under- or overflows) gives its corners no mass and its springs no
         * shape: twice its area against its longest edge squared, which
         * is its height over its length (1e-10: far below any mesh a
         * cloth solver can step). */
        double l2;
        double area2 = twice_area(rest, v, &l2);
        if (!(area2 > 1e-10 * l2) || !isfinite(area2) || !isfinite(l2))
            return hy_fail(HY_ERR_INVALID_ARG,
                           "cloth: triangle %d (vertices %d %d %d) is degenerate: area %g for a longest edge of %g "
                           "(a cloth needs triangles whose height is more than 1e-10 of their length)",
                           t, v[0], v[1], v[2], 0.5 * area2, sqrt(l2));
    }
    for (int32_t p = 0; p < pinned_count; p++)
        if (pinned[p] < 0 || pinned[p] >= nv)
            return hy_fail(HY_ERR_INVALID_ARG, "cloth: pinned[%d] = %d out of range [0, %d)", p, pinned[p], nv);

    openblas_set_num_threads(1); /* hyphys workers are the parallelism */

    hy_cloth_model* m = calloc(1, sizeof *m);
    if (m) m->device = -1;
    edge_rec* er = malloc((size_t)nt * 3 * sizeof *er);
    pair_rec* far = malloc((size_t)nt * 3 * sizeof *far);
    if (!m || !er || !far) goto nomem;
    m->nv = nv;
    m->params = *params;

    /* Edges: sort the 3 nt half-edges; a run of equal (a, b) is one edge. */
    for (int32_t t = 0; t < nt; t++) {
        const int32_t* v = tri + 3 * t;
        for (int k = 0; k < 3; k++) {
            int32_t a = v[k], b = v[(k + 1) % 3], f = v[(k + 2) % 3];
            edge_rec* e = &er[3 * t + k];
            e->a = a < b ? a : b;
            e->b = a < b ? b : a;
            e->far = f;
        }
    }
    int64_t nh = 3 * (int64_t)nt;
    qsort(er, (size_t)nh, sizeof *er, cmp_edge);
    int32_t nfar = 0, nedge = 0;
    for (int64_t i = 0; i < nh;) {
        int64_t j = i;
        while (j < nh && er[j].a == er[i].a && er[j].b == er[i].b) j++;
        if (j - i == 2 && er[i].far != er[i + 1].far) {
            int32_t a = er[i].far, b = er[i + 1].far;
            double c0 = cos_at(rest, a, er[i].a, er[i].b), c1 = cos_at(rest, b, er[i].a, er[i].b);
            far[nfar].a = a < b ? a : b;
            far[nfar].b = a < b ? b : a;
            far[nfar].type = (c0 < SHEAR_COS && c1 < SHEAR_COS) ? SPRING_SHEAR : SPRING_BEND;
            nfar++;
        }
        /* compact the unique edges to the front, in sorted order */
        er[nedge++] = er[i];
        i = j;
    }
    qsort(far, (size_t)nfar, sizeof *far, cmp_pair);

    /* Far-vertex springs that duplicate an edge or an earlier pair go. */
    int32_t nkeep = 0;
    for (int32_t i = 0; i < nfar; i++) {
        if (nkeep > 0 && far[nkeep - 1].a == far[i].a && far[nkeep - 1].b == far[i].b) continue;
        if (has_edge(er, nedge, far[i].a, far[i].b)) continue;
        far[nkeep++] = far[i];
    }
    int32_t ns = nedge + nkeep;
    m->ns = ns;
    m->ends = malloc((size_t)ns * 2 * sizeof *m->ends);
    m->rest = malloc((size_t)ns * sizeof *m->rest);
    m->stiff = malloc((size_t)ns * sizeof *m->stiff);
    m->damp = malloc((size_t)ns * sizeof *m->damp);
    if (!m->ends || !m->rest || !m->stiff || !m->damp) goto nomem;

    /* Spring order: stretch (sorted edges), then shear, then bend. */
    int32_t s = 0;
    for (int32_t i = 0; i < nedge; i++, s++) {
        m->ends[2 * s] = er[i].a;
        m->ends[2 * s + 1] = er[i].b;
        m->stiff[s] = params->stretch_stiffness;
    }
    m->type_count[SPRING_STRETCH] = nedge;
    for (int type = SPRING_SHEAR; type <= SPRING_BEND; type++) {
        for (int32_t i = 0; i < nkeep; i++) {
            if (far[i].type != type) continue;
            m->ends[2 * s] = far[i].a;
            m->ends[2 * s + 1] = far[i].b;
            m->stiff[s] = type == SPRING_SHEAR ? params->shear_stiffness : params->bend_stiffness;
            m->type_count[type]++;
            s++;
        }
    }
    for (s = 0; s < ns; s++) {
        const double *xa = rest + 3 * m->ends[2 * s], *xb = rest + 3 * m->ends[2 * s + 1];
        double dx = xb[0] - xa[0], dy = xb[1] - xa[1], dz = xb[2] - xa[2];
        m->rest[s] = sqrt(dx * dx + dy * dy + dz * dz);
        m->damp[s] = params->damping * m->stiff[s];
    }
    free(er);
    free(far);
    er = NULL;
    far = NULL;

    /* Lumped masses: a third of each triangle's area to each corner. */
    m->mass = calloc((size_t)nv, sizeof *m->mass);
    m->inv_mass = malloc((size_t)nv * sizeof *m->inv_mass);
    m->fixed = calloc((size_t)nv, 1);
    if (!m->mass || !m->inv_mass || !m->fixed) goto nomem;
    for (int32_t t = 0; t < nt; t++) {
        const int32_t* v = tri + 3 * t;
        double share = params->density * 0.5 * twice_area(rest, v, NULL) / 3.0;
        for (int k = 0; k < 3; k++) m->mass[v[k]] += share;
    }
    for (int32_t p = 0; p < pinned_count; p++) m->fixed[pinned[p]] = 1;
    for (int32_t v = 0; v < nv; v++) {
        if (!(m->mass[v] > 0)) m->fixed[v] = 1;
        m->inv_mass[v] = m->fixed[v] ? 0.0 : 1.0 / m->mass[v];
    }

    /* Vertex -> spring CSR, filled in spring order so each vertex sums its
     * springs in a fixed order: first those where it is end i (force +t),
     * then those where it is end j (-t), which keeps the gather free of
     * unpredictable sign branches. */
    m->adj_start = calloc((size_t)nv + 1, sizeof *m->adj_start);
    m->adj_split = malloc((size_t)nv * sizeof *m->adj_split);
    m->adj_spring = malloc((size_t)ns * 2 * sizeof *m->adj_spring);
    m->adj_other = malloc((size_t)ns * 2 * sizeof *m->adj_other);
    if (!m->adj_start || !m->adj_split || !m->adj_spring || !m->adj_other) goto nomem;
    for (s = 0; s < 2 * ns; s++) m->adj_start[m->ends[s] + 1]++;
    for (int32_t v = 0; v < nv; v++) m->adj_start[v + 1] += m->adj_start[v];
    {
        int32_t* fill = malloc((size_t)nv * sizeof *fill);
        if (!fill) goto nomem;
        memcpy(fill, m->adj_start, (size_t)nv * sizeof *fill);
        for (s = 0; s < ns; s++) {
            int32_t i = m->ends[2 * s], j = m->ends[2 * s + 1];
            m->adj_spring[fill[i]] = s;
            m->adj_other[fill[i]++] = j;
        }
        memcpy(m->adj_split, fill, (size_t)nv * sizeof *fill);
        for (s = 0; s < ns; s++) {
            int32_t i = m->ends[2 * s], j = m->ends[2 * s + 1];
            m->adj_spring[fill[j]] = s;
            m->adj_other[fill[j]++] = i;
        }
        free(fill);
    }
    m->adj_spring4 = malloc((size_t)ns * 2 * sizeof *m->adj_spring4);
    m->adj_other3 = malloc((size_t)ns * 2 * sizeof *m->adj_other3);
    if (!m->adj_spring4 || !m->adj_other3) goto nomem;
    for (int64_t e = 0; e < 2 * (int64_t)ns; e++) {
        m->adj_spring4[e] = 4 * m->adj_spring[e];
        m->adj_other3[e] = 3 * m->adj_other[e];
    }

    hy_status ps = hy_cloth_build_multigrid(m);
    if (ps != HY_OK) {
        hy_cloth_model_destroy(m);
        return ps;
    }

    /* Scratch for hy_cloth_solve. */
    m->block = alloc_doubles(4 * (int64_t)ns);
    m->rhs_s = alloc_doubles(3 * (int64_t)ns);
    m->b = alloc_doubles(3 * (int64_t)nv);
    m->dinv = alloc_doubles(9 * (int64_t)nv);
    m->dv = alloc_doubles(3 * (int64_t)nv);
    m->bad = malloc((size_t)hy_pool_blocks(nv, VERTEX_GRAIN) * sizeof *m->bad);
    m->cg = hy_cg_workspace_create(3 * (int64_t)nv);
    m->ch = calloc(9 * (size_t)(nv > 0 ? nv : 1), sizeof *m->ch);
    m->cbeta = calloc((size_t)(nv > 0 ? nv : 1), sizeof *m->cbeta);
    m->held = calloc((size_t)(nv > 0 ? nv : 1), 1);
    m->cbasis = calloc(9 * (size_t)(nv > 0 ? nv : 1), sizeof *m->cbasis);
    m->cdim = calloc((size_t)(nv > 0 ? nv : 1), 1);
    m->partial = malloc((size_t)(hy_sum_hd_chunks(nv) > 0 ? hy_sum_hd_chunks(nv) : 1) * sizeof *m->partial);
    m->bfree = alloc_doubles(3 * (int64_t)nv);
    if (!m->block || !m->rhs_s || !m->b || !m->dinv || !m->dv || !m->bad || !m->cg || !m->ch || !m->cbeta || !m->held ||
        !m->cbasis || !m->cdim || !m->partial || !m->bfree)
        goto nomem;
    memset(m->dv, 0, (size_t)nv * 3 * sizeof *m->dv);
    *out = m;
    return HY_OK;

nomem:
    free(er);
    free(far);
    hy_cloth_model_destroy(m);
    return hy_fail(HY_ERR_NOMEM, "cloth: out of memory for %d vertices, %d triangles", nv, nt);
}

void hy_cloth_model_destroy(hy_cloth_model* m) {
    if (!m) return;
    hy_cloth_gpu_destroy(m->gpu);
    free(m->ends);
    free(m->rest);
    free(m->stiff);
    free(m->damp);
    free(m->mass);
    free(m->inv_mass);
    free(m->fixed);
    free(m->adj_start);
    free(m->adj_split);
    free(m->adj_spring);
    free(m->adj_other);
    free(m->adj_spring4);
    free(m->adj_other3);
    free(m->block);
    free(m->rhs_s);
    free(m->b);
    free(m->dinv);
    free(m->dv);
    free(m->bad);
    hy_cg_workspace_destroy(m->cg);
    free(m->agg);
    free(m->mem_start);
    free(m->mem);
    free(m->adj_slot);
    hy_amg_destroy(m->amg);
    free(m->r1);
    free(m->z1);
    free(m->t);
    free(m->ch);
    free(m->cbeta);
    free(m->held);
    free(m->cbasis);
    free(m->cdim);
    free(m->partial);
    free(m->bfree);
    free(m);
}

int32_t hy_cloth_vertex_count(const hy_cloth_model* m) { return m ? m->nv : 0; }
const double* hy_cloth_masses(const hy_cloth_model* m) { return m ? m->mass : NULL; }
const double* hy_cloth_inverse_masses(const hy_cloth_model* m) { return m ? m->inv_mass : NULL; }
int32_t hy_cloth_spring_count(const hy_cloth_model* m) { return m ? m->ns : 0; }

void hy_cloth_spring_type_counts(const hy_cloth_model* m, int32_t* stretch, int32_t* shear, int32_t* bend) {
    if (stretch) *stretch = m ? m->type_count[SPRING_STRETCH] : 0;
    if (shear) *shear = m ? m->type_count[SPRING_SHEAR] : 0;
    if (bend) *bend = m ? m->type_count[SPRING_BEND] : 0;
}

const int32_t* hy_cloth_springs(const hy_cloth_model* m) { return m ? m->ends : NULL; }

/* ---- the step */

typedef struct step_ctx {
    hy_cloth_model* m;
    const double *x0, *v0;
    double *x1, *v1;
    double dt;
    double g[3];
} step_ctx;

/* Per spring: direction, system block (alpha, beta) and the right-hand side
 * contribution on end i. Reads x0, v0; writes only spring s's slots. */
static void spring_pass(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    const step_ctx* c = vctx;
    hy_cloth_model* m = c->m;
    for (int64_t s = begin; s < end; s++)
        hy_cloth_hd_spring(m->ends[2 * s], m->ends[2 * s + 1], m->stiff[s], m->damp[s], m->rest[s], c->x0, c->v0,
                           c->dt, m->block + 4 * s, m->rhs_s + 3 * s);
}

/* Per vertex: right-hand side b, Jacobi preconditioner, CG's start dv = 0.
 * Rejected: warm-starting CG from the previous step's dv. With CG capped
 * (as it is in practice on a big stiff cloth) the carried-over acceleration
 * acts like an explicit extrapolation: a 40x40 cloth at 20 iterations per
 * step gained energy without bound, while from dv = 0 truncated CG returns
 * the best A-norm dv in its Krylov space and only adds damping. Converged
 * runs saw no fewer iterations with the warm start either. */
static void vertex_pass(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    const step_ctx* c = vctx;
    hy_cloth_model* m = c->m;
    const double dt = c->dt, air = m->params.air_damping;
    for (int64_t v = begin; v < end; v++) {
        double* b = m->b + 3 * v;
        double* dv = m->dv + 3 * v;
        if (m->fixed[v]) {
            b[0] = b[1] = b[2] = 0.0;
            dv[0] = dv[1] = dv[2] = 0.0;
            memset(m->dinv + 9 * v, 0, 9 * sizeof(double));
            continue;
        }
        double mv = m->mass[v];
        const double* vel = c->v0 + 3 * v;
        double acc[3], D[9] = {0};
        for (int a = 0; a < 3; a++) {
            acc[a] = dt * mv * (c->g[a] - air * vel[a]);
            D[4 * a] = mv * (1.0 + dt * air);
        }
        const int32_t e0 = m->adj_start[v], e1 = m->adj_split[v], e2 = m->adj_start[v + 1];
        for (int32_t e = e0; e < e2; e++) {
            const double* r = m->rhs_s + 3 * m->adj_spring[e];
            const double* blk = m->block + 4 * m->adj_spring[e];
            double sign = e < e1 ? 1.0 : -1.0;
            for (int a = 0; a < 3; a++) {
                acc[a] += sign * r[a];
                D[4 * a] += blk[3];
                for (int q = 0; q < 3; q++) D[3 * a + q] += blk[a] * blk[q];
            }
        }
        for (int a = 0; a < 3; a++) {
            b[a] = acc[a];
            dv[a] = 0.0;
        }
        /* D >= M: positive definite unless the input is not finite, which
         * the commit pass reports */
        hy_amg_inverse3(D, m->dinv + 9 * v);
    }
}

/* CG's measure of convergence with held vertices: a held direction's
 * residual is its penalty's (beta times the velocity it misses), so it
 * counts 1/HOLD_GAIN of itself, as a free row's would for the same miss;
 * without this the penalty rows alone decided, and CG stopped with the free
 * directions' residual at a few per cent of their forces. */
typedef struct norm_ctx {
    const hy_cloth_model* m;
    const double* v;
} norm_ctx;

static void norm_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    const norm_ctx* c = vctx;
    const hy_cloth_model* m = c->m;
    const double keep = 1.0 - 1.0 / (HOLD_GAIN * HOLD_GAIN);
    /* per chunk of 32 vertices (a block is a whole number of them) their
     * terms' fixed-order sum (core/sum_hd.h) */
    for (int64_t v0 = begin; v0 < end; v0 += HY_SUM_CHUNK) {
        double t[HY_SUM_CHUNK];
        int len = end - v0 < HY_SUM_CHUNK ? (int)(end - v0) : HY_SUM_CHUNK;
        for (int j = 0; j < len; j++) {
            int64_t v = v0 + j;
            const double* r = c->v + 3 * v;
            double s = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
            for (int i = 0; i < m->cdim[v]; i++) {
                const double* e = m->cbasis + 9 * v + 3 * i;
                double d = e[0] * r[0] + e[1] * r[1] + e[2] * r[2];
                s -= keep * d * d;
            }
            t[j] = s > 0.0 ? s : 0.0;
        }
        m->partial[v0 / HY_SUM_CHUNK] = hy_sum_hd_chunk(t, len);
    }
}

static double held_norm2(void* vctx, const double* v) {
    solve_ctx* sc = vctx;
    const hy_cloth_model* m = sc->mv.m;
    norm_ctx c = {m, v};
    hy_pool_for(sc->pool, m->nv, VERTEX_GRAIN, norm_block, &c);
    return hy_sum_hd_tree(m->partial, hy_sum_hd_chunks(m->nv));
}

/* Add unit direction n to held vertex v's basis (Gram-Schmidt; a direction
 * within about 6 degrees of the span adds nothing). */
static void add_held_direction(hy_cloth_model* m, int32_t v, const double* n) {
    double u[3] = {n[0], n[1], n[2]};
    for (int i = 0; i < m->cdim[v]; i++) {
        const double* e = m->cbasis + 9 * v + 3 * i;
        double d = e[0] * u[0] + e[1] * u[1] + e[2] * u[2];
        for (int q = 0; q < 3; q++) u[q] -= d * e[q];
    }
    double len = sqrt(u[0] * u[0] + u[1] * u[1] + u[2] * u[2]);
    if (m->cdim[v] >= 3 || !(len > 0.1)) return;
    double* e = m->cbasis + 9 * v + 3 * m->cdim[v]++;
    for (int q = 0; q < 3; q++) e[q] = u[q] / len;
}

/* Commit: v1 = v0 + dv, x1 = x0 + dt v1; fixed vertices stay. Elementwise,
 * so x1/v1 may alias x0/v0. Records the first non-finite vertex. */
static void commit_pass(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    const step_ctx* c = vctx;
    const hy_cloth_model* m = c->m;
    int32_t bad = -1;
    for (int64_t v = begin; v < end; v++) {
        const double *x0 = c->x0 + 3 * v, *v0 = c->v0 + 3 * v, *dv = m->dv + 3 * v;
        double *x1 = c->x1 + 3 * v, *v1 = c->v1 + 3 * v;
        for (int a = 0; a < 3; a++) {
            double nv = m->fixed[v] ? 0.0 : v0[a] + dv[a];
            double nx = m->fixed[v] ? x0[a] : x0[a] + c->dt * nv;
            v1[a] = nv;
            x1[a] = nx;
            if (bad < 0 && !(isfinite(nv) && isfinite(nx))) bad = (int32_t)v;
        }
    }
    m->bad[block] = bad;
}

void hy_cloth_gpu_drop(hy_cloth_model* m) {
    fprintf(stderr, "hyphys: cloth: GPU cuda:%d dropped, the passes go on on the CPU: %s\n", m->device,
            hy_last_error());
    hy_cloth_gpu_destroy(m->gpu);
    m->gpu = NULL;
    m->device = -1;
}

hy_status hy_cloth_set_device(hy_cloth_model* m, int device) {
    if (!m) return hy_fail(HY_ERR_INVALID_ARG, "cloth: set device: NULL model");
    if (device == m->device && (device < 0 || m->gpu)) return HY_OK;
    hy_cloth_gpu_destroy(m->gpu);
    m->gpu = NULL;
    m->device = -1;
    if (device < 0) return HY_OK;
    hy_cloth_hd_model v = hy_cloth_hd_view(m, 1.0);
    hy_status s = hy_cloth_gpu_create(device, &v, m->ends, m->rest, m->stiff, m->damp, &m->gpu);
    if (!s) m->device = device;
    return s;
}

int hy_cloth_device(const hy_cloth_model* m) { return m && m->gpu ? m->device : -1; }

void hy_cloth_transfer_bytes(const hy_cloth_model* m, int64_t* up, int64_t* down) {
    hy_cloth_gpu_bytes(m ? m->gpu : NULL, up, down);
}

hy_status hy_cloth_solve(hy_cloth_model* m, hy_pool* pool, const double* x0, const double* v0, double dt,
                         const double gravity[3], int32_t cg_max_iterations, double cg_tolerance, double* x1,
                         double* v1, hy_cloth_solve_stats* stats) {
    return hy_cloth_solve_constrained(m, pool, x0, v0, dt, gravity, cg_max_iterations, cg_tolerance, NULL, 0, x1,
                                      v1, stats);
}

/* Coulomb friction of the held vertices, after the solve: the velocity
 * relative to the surface loses at most friction * impulse / mass of its
 * tangential part (never reversing it); x1 follows v1. */
static void constraint_friction(hy_cloth_model* m, const hy_cloth_constraint* cons, int32_t count,
                                const double* x0, double dt, double* x1, double* v1) {
    for (int32_t k = 0; k < count; k++) {
        const hy_cloth_constraint* c = &cons[k];
        int32_t v = c->vertex;
        if (m->fixed[v] || !(c->impulse > 0) || !(c->friction > 0)) continue;
        double rel[3], t[3];
        for (int q = 0; q < 3; q++) rel[q] = v1[3 * v + q] - c->surface_velocity[q];
        double vn = rel[0] * c->normal[0] + rel[1] * c->normal[1] + rel[2] * c->normal[2];
        for (int q = 0; q < 3; q++) t[q] = rel[q] - vn * c->normal[q];
        double len = sqrt(t[0] * t[0] + t[1] * t[1] + t[2] * t[2]);
        if (!(len > 1e-12)) continue;
        double cut = fmin(len, c->friction * c->impulse * m->inv_mass[v]) / len;
        for (int q = 0; q < 3; q++) {
            v1[3 * v + q] -= cut * t[q];
            x1[3 * v + q] = x0[3 * v + q] + dt * v1[3 * v + q];
        }
    }
}

hy_status hy_cloth_solve_constrained(hy_cloth_model* m, hy_pool* pool, const double* x0, const double* v0, double dt,
                                     const double gravity[3], int32_t cg_max_iterations, double cg_tolerance,
                                     hy_cloth_constraint* cons, int32_t count, double* x1, double* v1,
                                     hy_cloth_solve_stats* stats) {
    if (stats) {
        stats->cg_iterations = 0;
        stats->cg_relative_residual = 0.0;
    }
    if (!m || !x0 || !v0 || !gravity || !x1 || !v1)
        return hy_fail(HY_ERR_INVALID_ARG, "cloth solve: NULL model, state or gravity");
    if (!(dt > 0) || !isfinite(dt)) return hy_fail(HY_ERR_INVALID_ARG, "cloth solve: dt must be > 0, got %g", dt);
    if (cg_max_iterations < 0 || !(cg_tolerance >= 0))
        return hy_fail(HY_ERR_INVALID_ARG, "cloth solve: bad CG settings (%d iterations, tolerance %g)",
                       cg_max_iterations, cg_tolerance);
    if (count < 0 || (count > 0 && !cons))
        return hy_fail(HY_ERR_INVALID_ARG, "cloth solve: %d constraints with constraints %s", count,
                       cons ? "set" : "NULL");
    for (int32_t k = 0; k < count; k++) {
        const double* n = cons[k].normal;
        double len = sqrt(n[0] * n[0] + n[1] * n[1] + n[2] * n[2]);
        if (cons[k].vertex < 0 || cons[k].vertex >= m->nv || !(fabs(len - 1.0) <= 1e-6) ||
            !isfinite(cons[k].normal_velocity))
            return hy_fail(HY_ERR_INVALID_ARG,
                           "cloth solve: constraint %d (vertex %d) needs a vertex in [0, %d), a unit normal and a "
                           "finite velocity",
                           k, cons[k].vertex, m->nv);
    }

    step_ctx c = {.m = m, .x0 = x0, .v0 = v0, .x1 = x1, .v1 = v1, .dt = dt};
    for (int a = 0; a < 3; a++) c.g[a] = gravity[a];

    if (m->gpu && hy_cloth_gpu_springs(m->gpu, x0, v0, dt, m->block, m->rhs_s)) hy_cloth_gpu_drop(m);
    if (!m->gpu) hy_pool_for(pool, m->ns, SPRING_GRAIN, spring_pass, &c);
    hy_pool_for(pool, m->nv, VERTEX_GRAIN, vertex_pass, &c);

    solve_ctx sc = {.pool = pool, .mv = {.m = m, .diag_scale = 1.0 + dt * m->params.air_damping}};
    /* Constraints as stiff penalties (the held direction's diagonal gains
     * beta n n^T, b gains beta n dn, dn the normal velocity change asked
     * for): the system stays one SPD matrix, which the V-cycle's Galerkin
     * levels see whole, and the normal velocity misses its target by
     * (off-diagonal forces) / beta. beta = HOLD_GAIN times the largest
     * diagonal entry of the vertex's block; a vertex may have several. */
    m->constrained = 0;
    if (count > 0) memcpy(m->bfree, m->b, 3 * (size_t)m->nv * sizeof *m->b); /* the convergence reference */
    for (int32_t k = 0; k < count; k++) {
        int32_t v = cons[k].vertex;
        cons[k].impulse = 0.0;
        if (m->fixed[v]) continue;
        if (!m->held[v]) {
            double D[9];
            if (!hy_amg_inverse3(m->dinv + 9 * v, D)) continue;
            m->cbeta[v] = HOLD_GAIN * fmax(D[0], fmax(D[4], D[8]));
            memset(m->ch + 9 * v, 0, 9 * sizeof(double));
            m->held[v] = 1;
            m->cdim[v] = 0;
        }
        const double* n = cons[k].normal;
        double dn = cons[k].normal_velocity - (n[0] * v0[3 * v] + n[1] * v0[3 * v + 1] + n[2] * v0[3 * v + 2]);
        double beta = m->cbeta[v];
        add_held_direction(m, v, n);
        for (int a = 0; a < 3; a++) {
            m->b[3 * v + a] += beta * dn * n[a];
            for (int q = 0; q < 3; q++) m->ch[9 * v + 3 * a + q] += beta * n[a] * n[q];
        }
        m->constrained = 1;
    }
    /* the smoother's blocks: (D + H)^-1 */
    for (int32_t k = 0; k < count; k++) {
        int32_t v = cons[k].vertex;
        if (m->held[v] != 1) continue;
        double D[9];
        hy_amg_inverse3(m->dinv + 9 * v, D);
        for (int a = 0; a < 9; a++) D[a] += m->ch[9 * v + a];
        hy_amg_inverse3(D, m->dinv + 9 * v);
        m->held[v] = 2;
    }
    if (m->gpu && hy_cloth_gpu_held(m->gpu, m->constrained, m->held, m->ch)) hy_cloth_gpu_drop(m);
    sc.coarse = hy_cloth_precond_setup(m, pool, sc.mv.diag_scale);
    double rel = 0.0;
    hy_cg_norm held = {held_norm2, &sc, m->bfree};
    int32_t it = hy_cg_solve_norm(pool, 3 * (int64_t)m->nv, hy_cloth_matvec, &sc, hy_cloth_precond, &sc,
                                  m->constrained ? &held : NULL, m->b, m->dv, cg_tolerance, cg_max_iterations, m->cg,
                                  &rel);
    if (stats) {
        stats->cg_iterations = it;
        stats->cg_relative_residual = rel;
    }
    if (m->constrained) {
        /* a penalty's impulse, beta (dn - n . dv), is its constraint's */
        for (int32_t k = 0; k < count; k++) {
            int32_t v = cons[k].vertex;
            if (!m->held[v]) continue;
            const double* n = cons[k].normal;
            double dn = cons[k].normal_velocity - (n[0] * v0[3 * v] + n[1] * v0[3 * v + 1] + n[2] * v0[3 * v + 2]);
            const double* d = m->dv + 3 * v;
            cons[k].impulse = m->cbeta[v] * (dn - (n[0] * d[0] + n[1] * d[1] + n[2] * d[2]));
        }
        for (int32_t k = 0; k < count; k++) m->held[cons[k].vertex] = m->cdim[cons[k].vertex] = 0;
        m->constrained = 0;
    }

    hy_pool_for(pool, m->nv, VERTEX_GRAIN, commit_pass, &c);
    if (count > 0) constraint_friction(m, cons, count, x0, dt, x1, v1);
    int64_t blocks = hy_pool_blocks(m->nv, VERTEX_GRAIN);
    for (int64_t b = 0; b < blocks; b++) {
        if (m->bad[b] >= 0)
            return hy_fail(HY_ERR_NUMERIC, "cloth: vertex %d is not finite after the step (dt %g, %d CG iterations)",
                           m->bad[b], dt, it);
    }
    return HY_OK;
}

double hy_cloth_kinetic_energy(const hy_cloth_model* m, const double* v) {
    return m && v ? hy_lumped_kinetic_energy(m->mass, v, m->nv) : 0.0;
}
