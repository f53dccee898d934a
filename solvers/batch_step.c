/* Small objects stepped together, their CG products batched (batch_step.h). */
#include "solvers/batch_step.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "solvers/batch_hd.h"
#include "solvers/cg_batch.h"
#include "solvers/fem.h"
#include "solvers/fem_cuda.h"
#include "solvers/massspring.h"
#include "solvers/massspring_cuda.h"

/* Items per block of the host twin's passes. */
#define BATCH_GRAIN 256

/* One kind's part of a batch (FEM or mass-spring): its objects' views,
 * item and vertex offsets, and the models its GPU copies were made of. */
typedef struct part {
    int32_t n, cap;
    int32_t* index;     /* into the step's objects */
    void** made_of;     /* the models of the GPU copies, n_made of them */
    int32_t n_made;
    int64_t *i_start, *v_start; /* n + 1 */
    hy_fem_hd_model* fem;
    hy_ms_hd_model* ms;
} part;

struct hy_batch_stepper {
    int device;
    part f, m;
    hy_fem_gpu_batch* gf;
    hy_ms_gpu_batch* gm;
    double *p, *y; /* the batch's concatenated vectors: FEM objects' first */
    size_t cap_vec;
    hy_cg_steps* steps;
    hy_implicit_bound* pre; /* each object's preconditioner's context */
    int32_t cap_obj;
    int64_t batch_products, object_products, bytes;
    /* the CG in the batch's memory (cg_batch.h) */
    int resident; /* allowed (hy_batch_stepper_set_resident) */
    hy_cg_batch* cg;
    uint8_t* live;
    double *scal, *sums;        /* cap_obj, 2 cap_obj */
    int64_t* n_start;           /* cap_obj + 1 */
    double *hb, *hx, *hblocks;  /* the solves' b, x and blocks laid out for a load (cap_vec, 3 cap_vec) */
    int64_t resident_steps;
};

hy_status hy_batch_stepper_create(int device, hy_batch_stepper** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "batch stepper: NULL argument");
    *out = NULL;
    if (device < -1) return hy_fail(HY_ERR_INVALID_ARG, "batch stepper: device %d (-1: the host, else cuda:D)", device);
    hy_batch_stepper* b = calloc(1, sizeof *b);
    if (!b) return hy_fail(HY_ERR_NOMEM, "out of memory for a batch stepper");
    b->device = device;
    b->resident = 1;
    *out = b;
    return HY_OK;
}

static void part_free(part* p) {
    free(p->index);
    free(p->made_of);
    free(p->i_start);
    free(p->v_start);
    free(p->fem);
    free(p->ms);
}

void hy_batch_stepper_destroy(hy_batch_stepper* b) {
    if (!b) return;
    hy_fem_gpu_batch_destroy(b->gf);
    hy_ms_gpu_batch_destroy(b->gm);
    part_free(&b->f);
    part_free(&b->m);
    free(b->p);
    free(b->y);
    free(b->steps);
    free(b->pre);
    hy_cg_batch_destroy(b->cg);
    free(b->live);
    free(b->scal);
    free(b->sums);
    free(b->n_start);
    free(b->hb);
    free(b->hx);
    free(b->hblocks);
    free(b);
}

void hy_batch_stepper_set_resident(hy_batch_stepper* b, int on) {
    if (b) b->resident = on != 0;
}

int64_t hy_batch_stepper_resident_steps(const hy_batch_stepper* b) { return b ? b->resident_steps : 0; }

int hy_batch_stepper_device(const hy_batch_stepper* b) { return b ? b->device : -1; }

void hy_batch_stepper_counts(const hy_batch_stepper* b, int64_t* batch_products, int64_t* object_products,
                             int64_t* bytes) {
    if (batch_products) *batch_products = b ? b->batch_products : 0;
    if (object_products) *object_products = b ? b->object_products : 0;
    if (bytes) *bytes = b ? b->bytes : 0;
}

static hy_status part_reserve(part* p, int32_t n) {
    if (n <= p->cap) return HY_OK;
    int32_t* index = realloc(p->index, sizeof *index * (size_t)n);
    if (index) p->index = index;
    void** made = index ? realloc(p->made_of, sizeof *made * (size_t)n) : NULL;
    if (made) p->made_of = made;
    int64_t* is = made ? realloc(p->i_start, sizeof *is * ((size_t)n + 1)) : NULL;
    if (is) p->i_start = is;
    int64_t* vs = is ? realloc(p->v_start, sizeof *vs * ((size_t)n + 1)) : NULL;
    if (vs) p->v_start = vs;
    hy_fem_hd_model* f = vs ? realloc(p->fem, sizeof *f * (size_t)n) : NULL;
    if (f) p->fem = f;
    hy_ms_hd_model* m = f ? realloc(p->ms, sizeof *m * (size_t)n) : NULL;
    if (m) p->ms = m;
    if (!m) return hy_fail(HY_ERR_NOMEM, "out of memory for a batch of %d objects", n);
    p->cap = n;
    return HY_OK;
}

static hy_status reserve(hy_batch_stepper* b, int32_t n, size_t n3) {
    if (n > b->cap_obj) {
        hy_cg_steps* s = realloc(b->steps, sizeof *s * (size_t)n);
        if (s) b->steps = s;
        hy_implicit_bound* c = s ? realloc(b->pre, sizeof *c * (size_t)n) : NULL;
        if (c) b->pre = c;
        uint8_t* live = c ? realloc(b->live, (size_t)n) : NULL;
        if (live) b->live = live;
        double* scal = live ? realloc(b->scal, sizeof *scal * (size_t)n) : NULL;
        if (scal) b->scal = scal;
        double* sums = scal ? realloc(b->sums, 2 * sizeof *sums * (size_t)n) : NULL;
        if (sums) b->sums = sums;
        int64_t* ns = sums ? realloc(b->n_start, sizeof *ns * ((size_t)n + 1)) : NULL;
        if (!ns) return hy_fail(HY_ERR_NOMEM, "out of memory for a batch of %d objects", n);
        b->n_start = ns;
        b->cap_obj = n;
    }
    if (n3 > b->cap_vec) {
        double** v[] = {&b->p, &b->y, &b->hb, &b->hx, &b->hblocks};
        for (size_t k = 0; k < sizeof v / sizeof *v; k++) {
            free(*v[k]);
            /* zeroed: an object that converged rides along with what it last had */
            *v[k] = calloc(k == 4 ? 3 * n3 : n3, sizeof(double));
        }
        b->cap_vec = b->p && b->y && b->hb && b->hx && b->hblocks ? n3 : 0;
        if (!b->cap_vec) return hy_fail(HY_ERR_NOMEM, "out of memory for a batch's %zu-entry vectors", n3);
    }
    hy_status s = part_reserve(&b->f, n);
    return s ? s : part_reserve(&b->m, n);
}

/* The GPU's copies of a part's models, made again when they changed. */
static int same_models(const part* p, const hy_batch_object* o) {
    if (p->n_made != p->n) return 0;
    for (int32_t k = 0; k < p->n; k++)
        if (p->made_of[k] != o[p->index[k]].model) return 0;
    return 1;
}

static hy_status gpu_load(hy_batch_stepper* b, const hy_batch_object* o) {
    hy_status s = HY_OK;
    if (b->f.n && !same_models(&b->f, o)) {
        hy_fem_gpu_batch_destroy(b->gf);
        b->gf = NULL;
        b->f.n_made = 0;
        s = hy_fem_gpu_batch_create(b->device, b->f.fem, b->f.n, &b->gf);
        if (!s) b->bytes += hy_fem_gpu_batch_bytes(b->gf);
        for (int32_t k = 0; !s && k < b->f.n; k++) b->f.made_of[k] = o[b->f.index[k]].model;
        if (!s) b->f.n_made = b->f.n;
    }
    if (!s && b->m.n && !same_models(&b->m, o)) {
        hy_ms_gpu_batch_destroy(b->gm);
        b->gm = NULL;
        b->m.n_made = 0;
        s = hy_ms_gpu_batch_create(b->device, b->m.ms, b->m.n, &b->gm);
        if (!s) b->bytes += hy_ms_gpu_batch_bytes(b->gm);
        for (int32_t k = 0; !s && k < b->m.n; k++) b->m.made_of[k] = o[b->m.index[k]].model;
        if (!s) b->m.n_made = b->m.n;
    }
    if (!s && b->f.n) s = hy_fem_gpu_batch_load(b->gf, b->f.fem);
    if (!s && b->m.n) s = hy_ms_gpu_batch_load(b->gm, b->m.ms);
    for (int32_t j = 0; !s && j < b->f.n; j++) b->bytes += (int64_t)sizeof(double) * 48 * b->f.fem[j].nq;
    for (int32_t j = 0; !s && j < b->m.n; j++) b->bytes += (int64_t)sizeof(double) * 5 * b->m.ms[j].ns;
    return s;
}

/* ---- the host twin's passes: the batched HD functions over the pool */

typedef struct pass_ctx {
    const part* pt;
    const double* p;
    double* y;
} pass_ctx;


static void fem_element_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    const pass_ctx* c = vctx;
    for (int64_t i = begin; i < end; i++)
        hy_fem_hd_batch_apply_element(c->pt->fem, c->pt->i_start, c->pt->v_start, c->pt->n, i, c->p);
}

static void fem_vertex_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    const pass_ctx* c = vctx;
    for (int64_t i = begin; i < end; i++)
        hy_fem_hd_batch_matvec_vertex(c->pt->fem, c->pt->v_start, c->pt->n, i, c->p, c->y);
}

static void ms_vertex_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    const pass_ctx* c = vctx;
    for (int64_t i = begin; i < end; i++)
        hy_ms_hd_batch_matvec_vertex(c->pt->ms, c->pt->v_start, c->pt->n, i, c->p, c->y);
}

/* y = A p over the whole batch: FEM objects' vectors first, mass-spring
 * objects' after them. p and y are the host's (copied to and from the GPU)
 * or, resident, the device CG's vectors on the GPU. */
static hy_status product(hy_batch_stepper* b, hy_pool* pool, const double* p, double* y, int resident) {
    const double* pm = p + 3 * b->f.v_start[b->f.n];
    double* ym = y + 3 * b->f.v_start[b->f.n];
    if (b->device >= 0 && resident) {
        hy_status s = b->f.n ? hy_fem_gpu_batch_apply_resident(b->gf, b->f.fem, p, y) : HY_OK;
        return !s && b->m.n ? hy_ms_gpu_batch_apply_resident(b->gm, b->m.ms, pm, ym) : s;
    }
    if (b->device >= 0) {
        hy_status s = b->f.n ? hy_fem_gpu_batch_apply(b->gf, b->f.fem, p, y) : HY_OK;
        if (!s && b->m.n) s = hy_ms_gpu_batch_apply(b->gm, b->m.ms, pm, ym);
        /* p up, y down */
        if (!s) b->bytes += 2 * (int64_t)sizeof(double) * 3 * (b->f.v_start[b->f.n] + b->m.v_start[b->m.n]);
        return s;
    }
    pass_ctx cf = {&b->f, p, y}, cm = {&b->m, pm, ym};
    if (b->f.n) {
        hy_pool_for(pool, b->f.i_start[b->f.n], BATCH_GRAIN, fem_element_block, &cf);
        hy_pool_for(pool, b->f.v_start[b->f.n], BATCH_GRAIN, fem_vertex_block, &cf);
    }
    if (b->m.n) hy_pool_for(pool, b->m.v_start[b->m.n], BATCH_GRAIN, ms_vertex_block, &cm);
    return HY_OK;
}

/* ---- the CG in the batch's memory (cg_batch.h): every object's vectors
 * there, its scalar logic here, each operation's the one hy_cg_steps_next
 * makes for a general preconditioner that is block Jacobi (z = P r) */

/* Every object's preconditioner is block Jacobi alone (a FEM object
 * without its coarse level; mass-spring always): its blocks, else NULL. */
static const double* jacobi_blocks(const hy_batch_object* o, const hy_fem_hd_model* view) {
    if (o->ops == &hy_ms_ops) return hy_ms_precond_blocks(o->model);
    return hy_fem_coarse(o->model, -1) ? NULL : view->pinv;
}

/* The object of the CG batch's solve j: FEM objects first. */
static int32_t solve_object(const hy_batch_stepper* b, int32_t j) {
    return j < b->f.n ? b->f.index[j] : b->m.index[j - b->f.n];
}

/* After hy_cg_steps_begin of each: phase 1 (start) or 0 (ended early). */
static int keep_going(hy_cg_steps* st) {
    return st->phase = st->iterations < st->max_iterations && st->res > st->tol * st->bnorm ? 2 : 0;
}

/* The start's operations once r = b - A x's product has come back. */
static hy_status resident_start(hy_batch_stepper* b, hy_pool* pool) {
    int32_t n = b->f.n + b->m.n;
    uint8_t* live = b->live;
    const double* sums = b->sums;
    hy_status s = hy_cg_batch_op(b->cg, pool, HY_CG_START, live, NULL, b->sums);
    for (int32_t j = 0; !s && j < n; j++) {
        hy_cg_steps* st = &b->steps[solve_object(b, j)];
        if (!live[j]) continue;
        st->res = sqrt(sums[2 * j]);
        /* r.z where the preconditioner was applied (cg.c's rule) */
        st->rz = st->res > st->tol * st->bnorm && st->max_iterations > 0 ? sums[2 * j + 1] : sums[2 * j];
        live[j] = keep_going(st) != 0;
    }
    return s;
}

/* An iteration's operations once q = A p has come back. */
static hy_status resident_iteration(hy_batch_stepper* b, hy_pool* pool) {
    int32_t n = b->f.n + b->m.n;
    uint8_t* live = b->live;
    double *sums = b->sums, *scal = b->scal;
    hy_status s = hy_cg_batch_op(b->cg, pool, HY_CG_PQ, live, NULL, sums);
    for (int32_t j = 0; !s && j < n; j++) {
        hy_cg_steps* st = &b->steps[solve_object(b, j)];
        if (!live[j]) continue;
        double pq = sums[2 * j];
        /* not SPD along p: stop with the best x so far */
        if (!(pq > 0.0) || !(st->rz > 0.0)) live[j] = (uint8_t)(st->phase = 0);
        else scal[j] = st->rz / pq;
    }
    if (!s) s = hy_cg_batch_op(b->cg, pool, HY_CG_ADVANCE, live, scal, sums);
    for (int32_t j = 0; !s && j < n; j++) {
        hy_cg_steps* st = &b->steps[solve_object(b, j)];
        if (!live[j]) continue;
        st->res = sqrt(sums[2 * j]);
        st->iterations++;
        if (st->res <= st->tol * st->bnorm) {
            live[j] = (uint8_t)(st->phase = 0);
            continue;
        }
        scal[j] = sums[2 * j + 1] / st->rz;
        st->rz = sums[2 * j + 1];
    }
    if (!s) s = hy_cg_batch_op(b->cg, pool, HY_CG_DIRECTION, live, scal, sums);
    for (int32_t j = 0; !s && j < n; j++)
        if (live[j]) live[j] = keep_going(&b->steps[solve_object(b, j)]) != 0;
    return s;
}

static hy_status resident_solve(hy_batch_stepper* b, hy_batch_object* o, int32_t n, hy_pool* pool) {
    /* the layout and what goes up: each solve's b (rescaled where
     * hy_cg_steps_begin did), x and blocks */
    b->n_start[0] = 0;
    for (int32_t j = 0; j < n; j++) {
        int32_t k = solve_object(b, j);
        const hy_cg_steps* st = &b->steps[k];
        const double* blocks = jacobi_blocks(&o[k], j < b->f.n ? &b->f.fem[j] : NULL);
        int64_t len = 3 * (int64_t)o[k].ops->vertex_count(o[k].model), at = b->n_start[j];
        b->n_start[j + 1] = at + len;
        if (!len) continue;
        memcpy(b->hb + at, st->b ? st->b : o[k].rhs, sizeof(double) * (size_t)len);
        memcpy(b->hx + at, o[k].dv, sizeof(double) * (size_t)len);
        memcpy(b->hblocks + 3 * at, blocks, 3 * sizeof(double) * (size_t)len);
    }
    if (!b->cg) {
        hy_status s = hy_cg_batch_create(b->device, &b->cg);
        if (s) return s;
    }
    int64_t bytes0 = hy_cg_batch_bytes(b->cg);
    hy_status s = hy_cg_batch_load(b->cg, n, b->n_start, b->hb, b->hx, b->hblocks);
    double *x, *p, *q;
    hy_cg_batch_vectors(b->cg, &x, &p, &q);
    uint8_t* live = b->live;
    int32_t want = 0;
    for (int32_t j = 0; j < n; j++) want += live[j] = b->steps[solve_object(b, j)].phase == 1;
    /* the start's product (of x), then one of p an iteration */
    for (int round = 0; !s && want > 0; round++) {
        s = product(b, pool, round ? p : x, q, 1);
        b->batch_products++;
        b->object_products += want;
        if (!s) s = round ? resident_iteration(b, pool) : resident_start(b, pool);
        want = 0;
        for (int32_t j = 0; j < n; j++) want += live[j];
    }
    if (!s) s = hy_cg_batch_result(b->cg, b->hx);
    b->bytes += hy_cg_batch_bytes(b->cg) - bytes0;
    if (s) return s;
    for (int32_t j = 0; j < n; j++) {
        int32_t k = solve_object(b, j);
        int64_t len = b->n_start[j + 1] - b->n_start[j];
        if (len) memcpy(o[k].dv, b->hx + b->n_start[j], sizeof(double) * (size_t)len);
        b->steps[k].phase = 0;
    }
    b->resident_steps++;
    return HY_OK;
}

/* ---- the step */

hy_status hy_batch_step(hy_batch_stepper* b, hy_batch_object* o, int32_t n, hy_pool* pool, double dt,
                        const double gravity[3], int32_t cg_max_iterations, double cg_tolerance, int32_t* failed) {
    if (failed) *failed = -1;
    if (!b || (n > 0 && !o) || n < 0 || !pool || !gravity || !failed)
        return hy_fail(HY_ERR_INVALID_ARG, "batch step: NULL or bad argument");
    if (cg_max_iterations < 0 || !(cg_tolerance >= 0))
        return hy_fail(HY_ERR_INVALID_ARG, "batch step: bad CG settings (%d iterations, tolerance %g)",
                       cg_max_iterations, cg_tolerance);
    /* the parts and the layout of the batch's vectors */
    int64_t nv_all = 0;
    for (int32_t k = 0; k < n; k++) {
        if (o[k].ops != &hy_fem_ops && o[k].ops != &hy_ms_ops) {
            *failed = k;
            return hy_fail(HY_ERR_INVALID_ARG, "batch step: object %d is neither FEM nor mass-spring", k);
        }
        nv_all += o[k].ops->vertex_count(o[k].model);
    }
    hy_status s = reserve(b, n, 3 * (size_t)(nv_all > 0 ? nv_all : 1));
    if (s) return s;
    b->f.n = b->m.n = 0;
    for (int32_t k = 0; k < n; k++) {
        part* p = o[k].ops == &hy_fem_ops ? &b->f : &b->m;
        p->index[p->n++] = k;
    }
    /* each object's own prepare and guess (host) */
    for (int32_t k = 0; k < n; k++) {
        s = o[k].ops->prepare(o[k].model, pool, o[k].x0, o[k].v0, dt, gravity, NULL, NULL, o[k].rhs);
        if (s) {
            *failed = k;
            return s;
        }
        o[k].ops->guess(o[k].model, pool, o[k].rhs, o[k].dv);
    }
    /* views of the prepared models and the offsets */
    b->f.i_start[0] = b->f.v_start[0] = b->m.i_start[0] = b->m.v_start[0] = 0;
    for (int32_t j = 0; j < b->f.n; j++) {
        hy_fem_view(o[b->f.index[j]].model, &b->f.fem[j]);
        b->f.i_start[j + 1] = b->f.i_start[j] + b->f.fem[j].nt;
        b->f.v_start[j + 1] = b->f.v_start[j] + b->f.fem[j].nv;
    }
    for (int32_t j = 0; j < b->m.n; j++) {
        hy_ms_view(o[b->m.index[j]].model, &b->m.ms[j]);
        b->m.i_start[j + 1] = b->m.i_start[j] + b->m.ms[j].ns;
        b->m.v_start[j + 1] = b->m.v_start[j] + b->m.ms[j].nv;
    }
    if (b->device >= 0 && (s = gpu_load(b, o))) return s;
    /* every object's CG, in lockstep: each round one batch product for all
     * that still want one */
    int32_t active = 0;
    for (int32_t k = 0; k < n; k++) {
        b->pre[k] = (hy_implicit_bound){o[k].ops, o[k].model, pool};
        int64_t n3 = 3 * (int64_t)o[k].ops->vertex_count(o[k].model);
        active += hy_cg_steps_begin(&b->steps[k], pool, n3, NULL, hy_implicit_bound_precond, &b->pre[k], NULL,
                                    o[k].rhs, o[k].dv, cg_tolerance, cg_max_iterations, o[k].cg) != 0;
    }
    int resident = b->resident && n > 0;
    for (int32_t j = 0; resident && j < b->f.n; j++) resident = jacobi_blocks(&o[b->f.index[j]], &b->f.fem[j]) != NULL;
    if (resident) {
        if ((s = resident_solve(b, o, n, pool))) return s;
        active = 0;
    }
    while (active > 0) {
        int32_t want = 0;
        for (int part_i = 0; part_i < 2; part_i++) {
            const part* p = part_i ? &b->m : &b->f;
            int64_t base = part_i ? 3 * b->f.v_start[b->f.n] : 0;
            for (int32_t j = 0; j < p->n; j++) {
                const hy_cg_steps* st = &b->steps[p->index[j]];
                if (!st->phase) continue;
                memcpy(b->p + base + 3 * p->v_start[j], st->in, sizeof(double) * (size_t)st->n);
                want++;
            }
        }
        s = product(b, pool, b->p, b->y, 0);
        if (s) return s;
        b->batch_products++;
        b->object_products += want;
        active = 0;
        for (int part_i = 0; part_i < 2; part_i++) {
            const part* p = part_i ? &b->m : &b->f;
            int64_t base = part_i ? 3 * b->f.v_start[b->f.n] : 0;
            for (int32_t j = 0; j < p->n; j++) {
                hy_cg_steps* st = &b->steps[p->index[j]];
                if (!st->phase) continue;
                memcpy(st->out, b->y + base + 3 * p->v_start[j], sizeof(double) * (size_t)st->n);
                active += hy_cg_steps_next(st) != 0;
            }
        }
    }
    for (int32_t k = 0; k < n; k++) {
        o[k].iterations = hy_cg_steps_end(&b->steps[k], &o[k].residual);
        s = o[k].ops->commit(o[k].model, pool, o[k].x0, o[k].v0, o[k].dv, dt, o[k].x1, o[k].v1);
        if (s) {
            *failed = k;
            return s;
        }
    }
    return HY_OK;
}
