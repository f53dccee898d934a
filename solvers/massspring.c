/* Volumetric mass-spring objects with backward Euler (see massspring.h).
 *
 * Design notes.
 * - Matrix-free, as the cloth (solvers/cloth.c): per step one pass over
 *   the springs stores the unit direction d and the two coefficients of
 *   the spring's system block S = a I + b d d^T (a = dt^2 k g, b = dt^2 k
 *   (1 - g) + dt c) and the spring's part of the right-hand side; the
 *   matvec rebuilds each block from those five doubles.
 * - Deterministic: every vertex sums its springs in spring order through
 *   a vertex -> spring incidence built once; no atomics, so a step is
 *   bit-identical for any pool size (CG's reductions are too).
 * - Fixed vertices: rows and columns of the identity, right-hand side 0,
 *   as in the FEM (the matvec reads them as zero).
 * - Preconditioner: each vertex's inverse 3x3 diagonal block,
 *   m (1 + dt alpha) I + sum of its springs' S. The cloth's multigrid is
 *   not needed here: tetrahedral meshes of a few thousand vertices per
 *   object converge in tens of iterations with block Jacobi. */
#include "solvers/massspring.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "core/hd.h"
#include "core/tetmesh.h"
#include "solvers/cg.h"
#include "solvers/massspring_cuda.h"
#include "solvers/massspring_hd.h"

#define SPRING_GRAIN 2048

struct hy_ms_model {
    int32_t nv, ns;
    double k, c, alpha;
    int32_t* spring;   /* 2 * ns: i < j */
    double* rest_len;  /* ns */
    double* mass;      /* nv */
    uint8_t* fixed;    /* nv */
    int32_t* inc_start; /* nv + 1 */
    int32_t* inc;       /* 2 * ns: spring index * 2 + end (0: the spring's i, 1: its j) */
    /* scratch of one step */
    double diag_scale;  /* 1 + dt alpha */
    double* coef;       /* 5 * ns: d, a, b */
    double* sforce;     /* 3 * ns: the spring's right-hand side part on its i (j gets minus) */
    double* rhs;        /* 3 * nv */
    double* dv;         /* 3 * nv */
    double* pinv;       /* 9 * nv */
    int32_t* bad;
    double* guess;      /* hy_implicit_mass_guess's scratch */
    hy_cg_workspace* cg;
    hy_ms_gpu* gpu;     /* the spring pass and product on a GPU (hy_ms_set_device), or NULL */
    int device;
};

void hy_ms_model_destroy(hy_ms_model* m) {
    if (!m) return;
    hy_ms_gpu_destroy(m->gpu);
    free(m->spring);
    free(m->rest_len);
    free(m->mass);
    free(m->fixed);
    free(m->inc_start);
    free(m->inc);
    free(m->coef);
    free(m->sforce);
    free(m->rhs);
    free(m->dv);
    free(m->pinv);
    free(m->bad);
    free(m->guess);
    hy_cg_workspace_destroy(m->cg);
    free(m);
}

static int cmp_key(const void* a, const void* b) {
    int64_t x = *(const int64_t*)a, y = *(const int64_t*)b;
    return (x > y) - (x < y);
}

static hy_status check_params(const hy_ms_params* p) {
    if (!(p->stiffness > 0) || !isfinite(p->stiffness))
        return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: stiffness must be > 0 N/m, got %g", p->stiffness);
    if (!(p->density > 0) || !isfinite(p->density))
        return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: density must be > 0 kg/m^3, got %g", p->density);
    if (!(p->damping >= 0) || !isfinite(p->damping))
        return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: damping must be >= 0 s, got %g", p->damping);
    if (!(p->damping_mass >= 0) || !isfinite(p->damping_mass))
        return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: damping_mass must be >= 0 1/s, got %g", p->damping_mass);
    return HY_OK;
}

hy_status hy_ms_model_create(const double* rest, int32_t nv, const int32_t* tets, int32_t nt,
                             const hy_ms_params* params, const int32_t* fixed, int32_t fixed_count, hy_ms_model** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: NULL out");
    *out = NULL;
    hy_status st = hy_implicit_check_input("mass-spring", rest, nv, tets, nt, params, fixed, fixed_count);
    if (!st) st = check_params(params);
    if (st) return st;
    size_t snv = (size_t)nv, snt = (size_t)nt;
    hy_ms_model* m = calloc(1, sizeof *m);
    if (m) m->device = -1;
    int64_t* keys = malloc(6 * snt * sizeof *keys);
    if (!m || !keys) {
        free(m);
        free(keys);
        return hy_fail(HY_ERR_NOMEM, "mass-spring: out of memory");
    }
    m->nv = nv;
    m->k = params->stiffness;
    m->c = params->damping * params->stiffness;
    m->alpha = params->damping_mass;
    m->mass = calloc(snv, sizeof *m->mass);
    m->fixed = calloc(snv, 1);
    m->inc_start = calloc(snv + 1, sizeof *m->inc_start);
    if (!m->mass || !m->fixed || !m->inc_start) goto nomem;

    /* elements: checked, their mass lumped, their edges listed as keys
     * lo * nv + hi, sorted and made unique */
    static const int E[6][2] = {{0, 1}, {0, 2}, {0, 3}, {1, 2}, {1, 3}, {2, 3}};
    for (int32_t e = 0; e < nt; e++) {
        double volume;
        st = hy_tet_check(rest, nv, tets, e, "mass-spring", NULL, &volume);
        if (st) {
            free(keys);
            hy_ms_model_destroy(m);
            return st;
        }
        const int32_t* t = tets + 4 * e;
        for (int i = 0; i < 4; i++) m->mass[t[i]] += 0.25 * params->density * volume;
        for (int k = 0; k < 6; k++) {
            int64_t a = t[E[k][0]], b = t[E[k][1]];
            keys[6 * e + k] = a < b ? a * nv + b : b * nv + a;
        }
    }
    qsort(keys, 6 * snt, sizeof *keys, cmp_key);
    size_t ns = 0;
    for (size_t k = 0; k < 6 * snt; k++)
        if (k == 0 || keys[k] != keys[k - 1]) keys[ns++] = keys[k];
    m->ns = (int32_t)ns;
    m->spring = malloc(2 * ns * sizeof *m->spring);
    m->rest_len = malloc(ns * sizeof *m->rest_len);
    m->inc = malloc(2 * ns * sizeof *m->inc);
    m->coef = malloc(5 * ns * sizeof *m->coef);
    m->sforce = malloc(3 * ns * sizeof *m->sforce);
    m->rhs = malloc(3 * snv * sizeof *m->rhs);
    m->dv = malloc(3 * snv * sizeof *m->dv);
    m->pinv = malloc(9 * snv * sizeof *m->pinv);
    m->bad = malloc((size_t)hy_pool_blocks(nv, HY_IMPLICIT_GRAIN) * sizeof *m->bad);
    m->guess = malloc((size_t)hy_implicit_guess_scratch_size(nv) * sizeof *m->guess);
    m->cg = hy_cg_workspace_create(3 * (int64_t)nv);
    if (!m->spring || !m->rest_len || !m->inc || !m->coef || !m->sforce || !m->rhs || !m->dv || !m->pinv || !m->bad ||
        !m->guess || !m->cg)
        goto nomem;
    for (size_t s = 0; s < ns; s++) {
        int32_t i = (int32_t)(keys[s] / nv), j = (int32_t)(keys[s] % nv);
        m->spring[2 * s] = i, m->spring[2 * s + 1] = j;
        double l2 = 0.0;
        for (int a = 0; a < 3; a++) {
            double d = rest[3 * j + a] - rest[3 * i + a];
            l2 += d * d;
        }
        m->rest_len[s] = sqrt(l2);
        m->inc_start[i + 1]++, m->inc_start[j + 1]++;
    }
    free(keys);
    keys = NULL;
    for (int32_t v = 0; v < nv; v++) {
        if (m->inc_start[v + 1] == 0) {
            hy_ms_model_destroy(m);
            return hy_fail(HY_ERR_INVALID_ARG,
                           "mass-spring: vertex %d belongs to no tetrahedron (it would have no mass)", v);
        }
        m->inc_start[v + 1] += m->inc_start[v];
    }
    int32_t* fill = malloc(snv * sizeof *fill);
    if (!fill) goto nomem;
    memcpy(fill, m->inc_start, snv * sizeof *fill);
    for (size_t s = 0; s < ns; s++)
        for (int end = 0; end < 2; end++) m->inc[fill[m->spring[2 * s + end]]++] = 2 * (int32_t)s + end;
    free(fill);
    for (int32_t k = 0; k < fixed_count; k++) m->fixed[fixed[k]] = 1;
    *out = m;
    return HY_OK;
nomem:
    free(keys);
    hy_ms_model_destroy(m);
    return hy_fail(HY_ERR_NOMEM, "mass-spring: out of memory for %d vertices, %d tetrahedra", nv, nt);
}

int32_t hy_ms_vertex_count(const hy_ms_model* m) { return m ? m->nv : 0; }
int32_t hy_ms_spring_count(const hy_ms_model* m) { return m ? m->ns : 0; }
const int32_t* hy_ms_springs(const hy_ms_model* m) { return m ? m->spring : NULL; }
const double* hy_ms_rest_lengths(const hy_ms_model* m) { return m ? m->rest_len : NULL; }
const double* hy_ms_masses(const hy_ms_model* m) { return m ? m->mass : NULL; }
const uint8_t* hy_ms_fixed(const hy_ms_model* m) { return m ? m->fixed : NULL; }

/* ---- step */

typedef struct ms_ctx {
    hy_ms_model* m;
    const double *x0, *v0, *f_ext, *extra, *p;
    double *y, *rhs, *f;
    double dt, g[3];
} ms_ctx;

/* Direction, length and the elastic force on end i of spring s at x. */
static void spring_state(const hy_ms_model* m, int64_t s, const double* x, double d[3], double* len, double f[3]) {
    hy_ms_hd_spring_state(m->spring[2 * s], m->spring[2 * s + 1], m->k, m->rest_len[s], x, d, len, f);
}

/* Per spring: the system block's d, a, b, and its right-hand side part on
 * end i (solvers/massspring_hd.h, the arithmetic the GPU shares). */
static void spring_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    ms_ctx* c = vctx;
    hy_ms_model* m = c->m;
    for (int64_t s = begin; s < end; s++)
        hy_ms_hd_spring(m->spring[2 * s], m->spring[2 * s + 1], m->k, m->c, m->rest_len[s], c->x0, c->v0, c->dt,
                        m->coef + 5 * s, m->sforce + 3 * s);
}

/* Right-hand side and the inverse diagonal blocks. */
static void rhs_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    ms_ctx* c = vctx;
    hy_ms_model* m = c->m;
    for (int64_t v = begin; v < end; v++) {
        double* r = c->rhs + 3 * v;
        double* P = m->pinv + 9 * v;
        if (m->fixed[v]) {
            r[0] = r[1] = r[2] = 0.0;
            for (int a = 0; a < 9; a++) P[a] = (a % 4 == 0) ? 1.0 : 0.0;
            continue;
        }
        double f[3] = {0, 0, 0}, D[9] = {0}, mv = m->mass[v];
        for (int32_t k = m->inc_start[v]; k < m->inc_start[v + 1]; k++) {
            int32_t s = m->inc[k] / 2;
            double sign = (m->inc[k] & 1) ? -1.0 : 1.0;
            const double* sf = m->sforce + 3 * s;
            const double* q = m->coef + 5 * s;
            for (int a = 0; a < 3; a++) {
                f[a] += sign * sf[a];
                D[4 * a] += q[3];
                for (int b = 0; b < 3; b++) D[3 * a + b] += q[4] * q[a] * q[b];
            }
        }
        for (int a = 0; a < 3; a++)
            r[a] = c->dt * (f[a] + mv * c->g[a] - m->alpha * mv * c->v0[3 * v + a] +
                            (c->f_ext ? c->f_ext[3 * v + a] : 0.0));
        for (int a = 0; a < 3; a++) D[4 * a] += mv * m->diag_scale;
        if (c->extra)
            for (int a = 0; a < 9; a++) D[a] += c->extra[9 * v + a];
        if (!hy_block3_inverse(D, P))
            for (int a = 0; a < 9; a++) P[a] = (a % 4 == 0) ? 1.0 / (mv * m->diag_scale) : 0.0;
    }
}

/* A GPU call that failed: the GPU is dropped (said once) and the caller
 * runs the pass on the CPU, which gives the same bits. */
static void gpu_drop(hy_ms_model* m) {
    fprintf(stderr, "hyphys: mass-spring: GPU cuda:%d dropped, the passes go on on the CPU: %s\n", m->device,
            hy_last_error());
    hy_ms_gpu_destroy(m->gpu);
    m->gpu = NULL;
    m->device = -1;
}

hy_status hy_ms_set_device(hy_ms_model* m, int device) {
    if (!m) return hy_fail(HY_ERR_INVALID_ARG, "mass-spring: set device: NULL model");
    if (device == m->device && (device < 0 || m->gpu)) return HY_OK;
    hy_ms_gpu_destroy(m->gpu);
    m->gpu = NULL;
    m->device = -1;
    if (device < 0) return HY_OK;
    hy_ms_hd_model v;
    hy_ms_view(m, &v);
    hy_status s = hy_ms_gpu_create(device, &v, &m->gpu);
    if (!s) m->device = device;
    return s;
}

int hy_ms_device(const hy_ms_model* m) { return m && m->gpu ? m->device : -1; }

int64_t hy_ms_gpu_bytes_of(const hy_ms_model* m) { return m && m->gpu ? hy_ms_gpu_bytes(m->gpu) : 0; }

hy_status hy_ms_prepare(hy_ms_model* m, hy_pool* pool, const double* x0, const double* v0, double dt,
                        const double gravity[3], const double* f_ext, const double* extra_diag, double* rhs) {
    if (!m || !pool || !x0 || !v0 || !gravity || !rhs)
        return hy_fail(HY_ERR_INVALID_ARG, "mass-spring solve: NULL model, pool, state, gravity or right-hand side");
    if (!(dt > 0) || !isfinite(dt))
        return hy_fail(HY_ERR_INVALID_ARG, "mass-spring solve: dt must be > 0, got %g", dt);
    ms_ctx c = {.m = m, .x0 = x0, .v0 = v0, .f_ext = f_ext, .extra = extra_diag, .rhs = rhs, .dt = dt};
    for (int a = 0; a < 3; a++) c.g[a] = gravity[a];
    m->diag_scale = 1.0 + dt * m->alpha;
    hy_ms_hd_model hv;
    hy_ms_view(m, &hv);
    if (m->gpu && hy_ms_gpu_springs(m->gpu, &hv, x0, v0, dt)) gpu_drop(m);
    if (!m->gpu) hy_pool_for(pool, m->ns, SPRING_GRAIN, spring_block, &c);
    hy_pool_for(pool, m->nv, HY_IMPLICIT_GRAIN, rhs_block, &c);
    return HY_OK;
}

void hy_ms_view(const hy_ms_model* m, hy_ms_hd_model* out) {
    *out = (hy_ms_hd_model){m->nv,     m->ns,        m->k,     m->c,    m->spring, m->rest_len, m->mass,
                            m->fixed,  m->inc_start, m->inc,   m->coef, m->sforce, m->diag_scale};
}

static void matvec_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    ms_ctx* c = vctx;
    hy_ms_hd_model v;
    hy_ms_view(c->m, &v);
    for (int64_t k = begin; k < end; k++) hy_ms_hd_matvec_vertex(&v, (int32_t)k, c->p, c->y + 3 * k);
}

void hy_ms_apply(hy_ms_model* m, hy_pool* pool, const double* p, double* y) {
    if (m->gpu) {
        hy_ms_hd_model v;
        hy_ms_view(m, &v);
        if (!hy_ms_gpu_apply(m->gpu, &v, p, y)) return;
        gpu_drop(m);
    }
    ms_ctx c = {.m = m, .p = p, .y = y};
    hy_pool_for(pool, m->nv, HY_IMPLICIT_GRAIN, matvec_block, &c);
}

const double* hy_ms_precond_blocks(const hy_ms_model* m) { return m ? m->pinv : NULL; }

void hy_ms_precondition(hy_ms_model* m, hy_pool* pool, const double* r, double* z) {
    hy_implicit_block_precondition(pool, m->nv, m->pinv, r, z);
}

void hy_ms_guess(hy_ms_model* m, hy_pool* pool, const double* rhs, double* dv) {
    hy_implicit_mass_guess(&hy_ms_ops, m, pool, m->diag_scale, rhs, dv, m->guess);
}

hy_status hy_ms_commit(hy_ms_model* m, hy_pool* pool, const double* x0, const double* v0, const double* dv, double dt,
                       double* x1, double* v1) {
    return hy_implicit_commit(pool, m->nv, m->fixed, x0, v0, dv, dt, x1, v1, m->bad, "mass-spring");
}

hy_status hy_ms_solve(hy_ms_model* m, hy_pool* pool, const double* x0, const double* v0, double dt,
                      const double gravity[3], const double* f_ext, int32_t cg_max_iterations, double cg_tolerance,
                      double* x1, double* v1, hy_ms_solve_stats* stats) {
    if (stats) stats->cg_iterations = 0, stats->cg_relative_residual = 0.0;
    if (!m) return hy_fail(HY_ERR_INVALID_ARG, "mass-spring solve: NULL model");
    return hy_implicit_step(&hy_ms_ops, m, pool, x0, v0, dt, gravity, f_ext, cg_max_iterations, cg_tolerance, x1, v1,
                            m->rhs, m->dv, m->cg, NULL, stats ? &stats->cg_iterations : NULL,
                            stats ? &stats->cg_relative_residual : NULL, "mass-spring");
}

/* ---- forces and energy */

static void forces_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    ms_ctx* c = vctx;
    hy_ms_model* m = c->m;
    for (int64_t v = begin; v < end; v++) {
        double f[3] = {0, 0, 0};
        for (int32_t k = m->inc_start[v]; k < m->inc_start[v + 1]; k++) {
            double d[3], l, fs[3], sign = (m->inc[k] & 1) ? -1.0 : 1.0;
            spring_state(m, m->inc[k] / 2, c->x0, d, &l, fs);
            for (int a = 0; a < 3; a++) f[a] += sign * fs[a];
        }
        memcpy(c->f + 3 * v, f, sizeof f);
    }
}

hy_status hy_ms_spring_forces(hy_ms_model* m, hy_pool* pool, const double* x, double* f) {
    if (!m || !pool || !x || !f) return hy_fail(HY_ERR_INVALID_ARG, "mass-spring forces: NULL model, pool or array");
    ms_ctx c = {.m = m, .x0 = x, .f = f};
    hy_pool_for(pool, m->nv, HY_IMPLICIT_GRAIN, forces_block, &c);
    return HY_OK;
}

double hy_ms_spring_energy(const hy_ms_model* m, const double* x) {
    if (!m || !x) return 0.0;
    double e = 0.0;
    for (int32_t s = 0; s < m->ns; s++) {
        double d[3], l, f[3];
        spring_state(m, s, x, d, &l, f);
        double stretch = l - m->rest_len[s];
        e += 0.5 * m->k * stretch * stretch;
    }
    return e;
}

double hy_ms_kinetic_energy(const hy_ms_model* m, const double* v) {
    return m && v ? hy_lumped_kinetic_energy(m->mass, v, m->nv) : 0.0;
}

/* ---- as an implicit object (solvers/implicit.h) */

HY_DEFINE_IMPLICIT_OPS(hy_ms_ops, "mass-spring", hy_ms_model, hy_ms);
