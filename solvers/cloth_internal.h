/* The implicit cloth's private layout, shared by its two sources:
 * solvers/cloth.c (the model, the step, the contact constraints) and
 * solvers/cloth_precond.c (the matrix-free product and the multigrid
 * preconditioner). Not installed; nothing outside solvers/cloth*.c
 * includes it. */
#ifndef HY_SOLVERS_CLOTH_INTERNAL_H
#define HY_SOLVERS_CLOTH_INTERNAL_H

#include <stdint.h>
#include <stdlib.h>

#include "core/pool.h"
#include "solvers/amg.h"
#include "solvers/cg.h"
#include "solvers/cloth.h"
#include "solvers/cloth_cuda.h"
#include "solvers/cloth_hd.h"

/* Springs per block in the per-spring pass, vertices per block in the
 * per-vertex passes: ~35-70 blocks for a 215x215 cloth, enough to steal
 * from, few enough that the pool hand-off is noise. */
#define SPRING_GRAIN 4096
#define VERTEX_GRAIN 1024
#define AGG_GRAIN 256

enum { SPRING_STRETCH = 0, SPRING_SHEAR = 1, SPRING_BEND = 2 };

struct hy_cloth_model {
    int32_t nv, ns;
    int32_t type_count[3];
    hy_cloth_params params;
    /* springs */
    int32_t* ends;    /* 2 * ns: (i, j) */
    double* rest;     /* ns: rest length L */
    double* stiff;    /* ns: k */
    double* damp;     /* ns: c = damping * k */
    /* vertices */
    double* mass;     /* nv */
    double* inv_mass; /* nv: 0 for fixed */
    uint8_t* fixed;   /* nv: pinned or massless */
    /* vertex -> spring CSR, entries in spring order */
    int32_t* adj_start; /* nv + 1 */
    int32_t* adj_split;  /* nv: entries [start, split) have v as end i, the rest as end j */
    int32_t* adj_spring; /* 2 * ns: spring index */
    int32_t* adj_other;  /* 2 * ns: the spring's other vertex */
    /* The same two, premultiplied for the matvec (4 doubles per spring
     * block, 3 per vertex): its inner loop is instruction-bound. */
    int32_t* adj_spring4;
    int32_t* adj_other3;
    /* per-step scratch (no allocation in hy_cloth_solve) */
    double* block;    /* 4 * ns: u[3] = sqrt(beta) d, alpha (S = alpha I + u u^T) */
    double* rhs_s;    /* 3 * ns: dt (f + dt K (vj - vi)) on end i */
    double* b;        /* 3 * nv */
    double* dinv;     /* 9 * nv: inverse diagonal blocks (the smoother) */
    double* dv;       /* 3 * nv: the solution */
    int32_t* bad;     /* per vertex block: first non-finite vertex or -1 */
    hy_cg_workspace* cg;
    /* the multigrid preconditioner (design notes) */
    int32_t* agg;        /* nv: the vertex's aggregate (level-1 node), -1 for fixed */
    int32_t agg_count;
    int32_t *mem_start, *mem; /* each aggregate's vertices, ascending */
    int32_t* adj_slot;   /* 2 ns: per CSR entry, its block in level 1's pattern, -1 inside an aggregate or fixed */
    hy_amg* amg;         /* levels 1..; NULL when every vertex is fixed */
    double *r1, *z1;     /* 3 agg_count: level-1 residual and correction */
    double* t;           /* 3 nv: A z in the smoother */
    /* contact constraints of the current solve (hy_cloth_solve_constrained) */
    double* ch;          /* 9 nv: the penalties' sum of beta n n^T (kg), for held vertices */
    double* cbeta;       /* nv: a held vertex's beta */
    uint8_t* held;       /* nv: 1 when the vertex has a constraint in this solve */
    double* cbasis;      /* 9 nv: an orthonormal basis of a held vertex's held directions */
    uint8_t* cdim;       /* nv: its size (0-3) */
    double* partial;     /* per chunk of 32 vertices: the convergence norm's sums (core/sum_hd.h) */
    double* bfree;       /* 3 nv: b before the penalties (the convergence reference) */
    int constrained;     /* some vertex is held */
    /* the spring pass and products on a GPU (hy_cloth_set_device), or NULL */
    hy_cloth_gpu* gpu;
    int device;
};

/* What the shared arithmetic (solvers/cloth_hd.h) reads of the model. */
static inline hy_cloth_hd_model hy_cloth_hd_view(const hy_cloth_model* m, double diag_scale) {
    hy_cloth_hd_model v = {m->nv,        m->ns,         m->mass,  m->fixed, m->adj_start,   m->adj_spring4,
                           m->adj_other3, m->block,      m->held,  m->ch,    m->constrained, diag_scale};
    return v;
}

/* A GPU call that failed: the GPU is dropped (said once on stderr) and the
 * caller runs the pass on the CPU, which gives the same bits. */
void hy_cloth_gpu_drop(hy_cloth_model* m);

/* 64-byte aligned: the matvec's loads stay within cache lines. */
static inline double* alloc_doubles(int64_t n) {
    size_t bytes = ((size_t)(n > 0 ? n : 1) * sizeof(double) + 63) & ~(size_t)63;
    return aligned_alloc(64, bytes);
}

/* y = A x for the step's system (the per-spring blocks of the last
 * spring pass). */
typedef struct matvec_ctx {
    const hy_cloth_model* m;
    const double* x;
    double* y;
    double diag_scale; /* 1 + dt air */
} matvec_ctx;

/* What CG hands the product and the preconditioner. */
typedef struct solve_ctx {
    hy_pool* pool;
    matvec_ctx mv;
    int coarse; /* the hierarchy was set up: the V-cycle has its coarse levels */
} solve_ctx;

/* The aggregates and the coarse levels' pattern, once per model. */
hy_status hy_cloth_build_multigrid(hy_cloth_model* m);
/* Per step, after the spring and vertex passes and the constraints: level
 * 1's blocks and the hierarchy below. Returns 1 when the coarse levels are
 * ready, 0 when the smoother alone preconditions this step. */
int hy_cloth_precond_setup(hy_cloth_model* m, hy_pool* pool, double diag_scale);
/* CG's callbacks (ctx: a solve_ctx). */
void hy_cloth_matvec(void* ctx, const double* x, double* y);
void hy_cloth_precond(void* ctx, const double* r, double* z);

#endif
