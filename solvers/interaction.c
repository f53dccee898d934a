/* Interactions between implicit objects and the coupled step (see
 * interaction.h). */
#include "solvers/interaction.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/error.h"
#include "solvers/cg.h"

struct hy_interaction {
    int32_t object[2], nv[2];
    int32_t count, cap;
    hy_interaction_pair* pair;
    uint8_t* active; /* per pair, set by hy_interaction_linearize */
};

/* ---- the item */

static hy_status check_pairs(const hy_interaction* ia, const hy_interaction_pair* pairs, int32_t count) {
    if (count < 0 || (count > 0 && !pairs))
        return hy_fail(HY_ERR_INVALID_ARG, "interaction %d-%d: bad pair list (%d pairs)", ia->object[0],
                       ia->object[1], count);
    for (int32_t k = 0; k < count; k++) {
        const hy_interaction_pair* p = pairs + k;
        const char* why = NULL;
        double sum = 0.0;
        if (p->kind != HY_PAIR_ATTACH && p->kind != HY_PAIR_CONTACT) why = "kind must be attach or contact";
        else if (p->vertex < 0 || p->vertex >= ia->nv[0]) why = "vertex of A out of range";
        else if (p->count < 1 || p->count > 4) why = "count of B's vertices must be 1 to 4";
        else if (!(p->stiffness > 0) || !isfinite(p->stiffness)) why = "stiffness must be > 0 N/m";
        for (int j = 0; !why && j < p->count; j++) {
            if (p->b[j] < 0 || p->b[j] >= ia->nv[1]) why = "vertex of B out of range";
            else if (!isfinite(p->w[j])) why = "weight not finite";
            sum += p->w[j];
        }
        if (!why && !(fabs(sum - 1.0) <= 1e-9)) why = "weights must sum to 1";
        if (!why && p->kind == HY_PAIR_CONTACT) {
            double n2 = p->normal[0] * p->normal[0] + p->normal[1] * p->normal[1] + p->normal[2] * p->normal[2];
            if (!(fabs(n2 - 1.0) <= 1e-6)) why = "contact normal must be of unit length";
            else if (!(p->gap >= 0) || !isfinite(p->gap)) why = "contact gap must be >= 0 m";
        }
        if (why)
            return hy_fail(HY_ERR_INVALID_ARG, "interaction %d-%d: pair %d (vertex %d of A): %s", ia->object[0],
                           ia->object[1], k, p->vertex, why);
    }
    return HY_OK;
}

hy_status hy_interaction_set_pairs(hy_interaction* ia, const hy_interaction_pair* pairs, int32_t count) {
    if (!ia) return hy_fail(HY_ERR_INVALID_ARG, "interaction: NULL item");
    hy_status st = check_pairs(ia, pairs, count);
    if (st) return st;
    if (count > ia->cap) {
        hy_interaction_pair* np = malloc((size_t)count * sizeof *np);
        uint8_t* na = malloc((size_t)count);
        if (!np || !na) {
            free(np);
            free(na);
            return hy_fail(HY_ERR_NOMEM, "interaction %d-%d: out of memory for %d pairs", ia->object[0],
                           ia->object[1], count);
        }
        free(ia->pair);
        free(ia->active);
        ia->pair = np, ia->active = na, ia->cap = count;
    }
    if (count > 0) memcpy(ia->pair, pairs, (size_t)count * sizeof *pairs);
    for (int32_t k = 0; k < count; k++) ia->active[k] = pairs[k].kind == HY_PAIR_ATTACH;
    ia->count = count;
    return HY_OK;
}

hy_status hy_interaction_create(int32_t object_a, int32_t object_b, int32_t nv_a, int32_t nv_b,
                                const hy_interaction_pair* pairs, int32_t count, hy_interaction** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "interaction: NULL out");
    *out = NULL;
    if (object_a < 0 || object_b < 0 || object_a == object_b || nv_a <= 0 || nv_b <= 0)
        return hy_fail(HY_ERR_INVALID_ARG,
                       "interaction: needs two different objects with vertices (objects %d and %d, %d and %d "
                       "vertices)",
                       object_a, object_b, nv_a, nv_b);
    hy_interaction* ia = calloc(1, sizeof *ia);
    if (!ia) return hy_fail(HY_ERR_NOMEM, "interaction: out of memory");
    ia->object[0] = object_a, ia->object[1] = object_b;
    ia->nv[0] = nv_a, ia->nv[1] = nv_b;
    hy_status st = hy_interaction_set_pairs(ia, pairs, count);
    if (st) {
        hy_interaction_destroy(ia);
        return st;
    }
    *out = ia;
    return HY_OK;
}

void hy_interaction_destroy(hy_interaction* ia) {
    if (!ia) return;
    free(ia->pair);
    free(ia->active);
    free(ia);
}

void hy_interaction_objects(const hy_interaction* ia, int32_t* object_a, int32_t* object_b) {
    if (object_a) *object_a = ia ? ia->object[0] : -1;
    if (object_b) *object_b = ia ? ia->object[1] : -1;
}

int32_t hy_interaction_pair_count(const hy_interaction* ia) { return ia ? ia->count : 0; }

/* ---- coincident attachments */

typedef struct sorted_vertex {
    double x;
    int32_t v;
} sorted_vertex;

static int cmp_sorted(const void* a, const void* b) {
    const sorted_vertex *p = a, *q = b;
    if (p->x != q->x) return p->x < q->x ? -1 : 1;
    return (p->v > q->v) - (p->v < q->v);
}

hy_status hy_interaction_attach_coincident(const double* xa, int32_t nv_a, const double* xb, int32_t nv_b, double tol,
                                           double stiffness, hy_interaction_pair** pairs, int32_t* count) {
    if (!pairs || !count) return hy_fail(HY_ERR_INVALID_ARG, "attach coincident: NULL out");
    *pairs = NULL, *count = 0;
    if (!xa || !xb || nv_a <= 0 || nv_b <= 0 || !(tol >= 0) || !isfinite(tol) || !(stiffness > 0) ||
        !isfinite(stiffness))
        return hy_fail(HY_ERR_INVALID_ARG,
                       "attach coincident: need two vertex lists, a tolerance >= 0 m and a stiffness > 0 N/m "
                       "(got %d and %d vertices, tolerance %g, stiffness %g)",
                       nv_a, nv_b, tol, stiffness);
    /* B's vertices sorted by x; each vertex of A scans the window
     * [x - tol, x + tol] for the nearest within tol */
    sorted_vertex* s = malloc((size_t)nv_b * sizeof *s);
    hy_interaction_pair* out = hy_mem_alloc((size_t)nv_a * sizeof *out);
    if (!s || !out) {
        free(s);
        hy_mem_free(out);
        return hy_fail(HY_ERR_NOMEM, "attach coincident: out of memory");
    }
    for (int32_t v = 0; v < nv_b; v++) s[v].x = xb[3 * v], s[v].v = v;
    qsort(s, (size_t)nv_b, sizeof *s, cmp_sorted);
    int32_t n = 0;
    for (int32_t a = 0; a < nv_a; a++) {
        const double* p = xa + 3 * a;
        int32_t lo = 0, hi = nv_b;
        while (lo < hi) {
            int32_t mid = lo + (hi - lo) / 2;
            if (s[mid].x < p[0] - tol) lo = mid + 1;
            else hi = mid;
        }
        int32_t best = -1;
        double best2 = tol * tol;
        for (int32_t k = lo; k < nv_b && s[k].x <= p[0] + tol; k++) {
            const double* q = xb + 3 * s[k].v;
            double d2 = 0.0;
            for (int c = 0; c < 3; c++) d2 += (q[c] - p[c]) * (q[c] - p[c]);
            if (d2 <= best2 && (best < 0 || d2 < best2 || s[k].v < best)) best = s[k].v, best2 = d2;
        }
        if (best < 0) continue;
        hy_interaction_pair* pr = out + n++;
        memset(pr, 0, sizeof *pr);
        pr->kind = HY_PAIR_ATTACH;
        pr->vertex = a;
        pr->count = 1;
        pr->b[0] = best;
        pr->w[0] = 1.0;
        pr->stiffness = stiffness;
    }
    free(s);
    if (n == 0) {
        hy_mem_free(out);
        out = NULL;
    }
    *pairs = out, *count = n;
    return HY_OK;
}

/* ---- one side's terms */

/* x_A - p_B for pair p, over the two sides' vectors; a fixed vertex reads
 * as zero where fixed_a / fixed_b say so (NULL: none). */
static void relative(const hy_interaction_pair* p, const double* va, const double* vb, const uint8_t* fixed_a,
                     const uint8_t* fixed_b, double u[3]) {
    for (int c = 0; c < 3; c++) u[c] = (fixed_a && fixed_a[p->vertex]) ? 0.0 : va[3 * p->vertex + c];
    for (int j = 0; j < p->count; j++) {
        if (fixed_b && fixed_b[p->b[j]]) continue;
        for (int c = 0; c < 3; c++) u[c] -= p->w[j] * vb[3 * p->b[j] + c];
    }
}

/* k P q: q for an attachment, its normal part for a contact. */
static void stiffness_times(const hy_interaction_pair* p, const double q[3], double out[3]) {
    if (p->kind == HY_PAIR_ATTACH) {
        for (int c = 0; c < 3; c++) out[c] = p->stiffness * q[c];
    } else {
        double s = p->stiffness * (p->normal[0] * q[0] + p->normal[1] * q[1] + p->normal[2] * q[2]);
        for (int c = 0; c < 3; c++) out[c] = s * p->normal[c];
    }
}

/* The force on A's vertex of an acting pair at relative position u. */
static void pair_force(const hy_interaction_pair* p, const double u[3], double f[3]) {
    if (p->kind == HY_PAIR_ATTACH) {
        for (int c = 0; c < 3; c++) f[c] = -p->stiffness * u[c];
    } else {
        double e = p->normal[0] * u[0] + p->normal[1] * u[1] + p->normal[2] * u[2] - p->gap;
        for (int c = 0; c < 3; c++) f[c] = -p->stiffness * e * p->normal[c];
    }
}

static int contact_acts(const hy_interaction_pair* p, const double u[3]) {
    return p->normal[0] * u[0] + p->normal[1] * u[1] + p->normal[2] * u[2] < p->gap;
}

/* Adds g to A's vertex (side 0) or -w_j g to B's vertices (side 1),
 * scaled by s; fixed rows left alone when fixed is given. */
static void scatter(const hy_interaction_pair* p, int side, double s, const double g[3], const uint8_t* fixed,
                    double* y) {
    if (side == 0) {
        if (fixed && fixed[p->vertex]) return;
        for (int c = 0; c < 3; c++) y[3 * p->vertex + c] += s * g[c];
        return;
    }
    for (int j = 0; j < p->count; j++) {
        if (fixed && fixed[p->b[j]]) continue;
        for (int c = 0; c < 3; c++) y[3 * p->b[j] + c] -= s * p->w[j] * g[c];
    }
}

void hy_interaction_add_forces(const hy_interaction* ia, int side, const double* xa, const double* xb, double* f_side) {
    for (int32_t k = 0; k < ia->count; k++) {
        const hy_interaction_pair* p = ia->pair + k;
        double u[3], f[3];
        relative(p, xa, xb, NULL, NULL, u);
        if (p->kind == HY_PAIR_CONTACT && !contact_acts(p, u)) continue;
        pair_force(p, u, f);
        scatter(p, side, 1.0, f, NULL, f_side);
    }
}

void hy_interaction_linearize(hy_interaction* ia, const double* xa, const double* xb) {
    for (int32_t k = 0; k < ia->count; k++) {
        const hy_interaction_pair* p = ia->pair + k;
        double u[3];
        relative(p, xa, xb, NULL, NULL, u);
        ia->active[k] = p->kind == HY_PAIR_ATTACH || contact_acts(p, u);
    }
}

void hy_interaction_add_rhs(const hy_interaction* ia, int side, const double* xa, const double* xb, const double* va,
                            const double* vb, double dt, double* f_side) {
    for (int32_t k = 0; k < ia->count; k++) {
        if (!ia->active[k]) continue;
        const hy_interaction_pair* p = ia->pair + k;
        double u[3], w[3], f[3], kw[3];
        relative(p, xa, xb, NULL, NULL, u);
        relative(p, va, vb, NULL, NULL, w);
        pair_force(p, u, f);
        stiffness_times(p, w, kw);
        for (int c = 0; c < 3; c++) f[c] -= dt * kw[c];
        scatter(p, side, 1.0, f, NULL, f_side);
    }
}

void hy_interaction_add_diagonal(const hy_interaction* ia, int side, double scale, double* diag_side) {
    for (int32_t k = 0; k < ia->count; k++) {
        if (!ia->active[k]) continue;
        const hy_interaction_pair* p = ia->pair + k;
        double P[9];
        for (int r = 0; r < 3; r++)
            for (int c = 0; c < 3; c++)
                P[3 * r + c] = p->stiffness * (p->kind == HY_PAIR_ATTACH ? (r == c) : p->normal[r] * p->normal[c]);
        if (side == 0) {
            for (int a = 0; a < 9; a++) diag_side[9 * p->vertex + a] += scale * P[a];
        } else {
            for (int j = 0; j < p->count; j++)
                for (int a = 0; a < 9; a++) diag_side[9 * p->b[j] + a] += scale * p->w[j] * p->w[j] * P[a];
        }
    }
}

void hy_interaction_add_product(const hy_interaction* ia, int side, double scale, const uint8_t* fixed_a,
                                const uint8_t* fixed_b, const double* pa, const double* pb, double* y_side) {
    for (int32_t k = 0; k < ia->count; k++) {
        if (!ia->active[k]) continue;
        const hy_interaction_pair* p = ia->pair + k;
        double q[3], t[3];
        relative(p, pa, pb, fixed_a, fixed_b, q);
        stiffness_times(p, q, t);
        scatter(p, side, scale, t, side == 0 ? fixed_a : fixed_b, y_side);
    }
}

/* ---- the coupled step */

typedef struct coupled_ctx {
    hy_pool* pool;
    const hy_coupled_object* obj;
    int32_t n;
    const int64_t* off; /* 3 * vertex offset of each object in the joined vectors */
    hy_interaction* const* ia;
    int32_t ni;
    double k_scale; /* dt^2 */
    double* y;      /* n: the start's product */
    /* objects side by side (see each_object): a one-thread pool per worker
     * of pool, NULL when the objects share the pool one after the other */
    hy_pool** solo;
    /* the operation each_object runs: 0 apply, 1 precondition, 2 guess */
    int op;
    const double* in;
    double* out;
} coupled_ctx;

/* A group of at least this many objects per thread runs an operation's
 * objects side by side, one object per worker (each on a one-thread
 * pool), instead of one after the other with each spread over the pool:
 * a block of fem64 is too small to keep two threads busy through its
 * product, preconditioner and coarse solve, and the group's iteration
 * spent most of its time in the serial parts and waiting (the 52-block
 * group from fem64's frame 127: 1.75 s of integration a step on one
 * thread, 1.43 s on two). The same bits either way: an object's
 * operations give them on any pool. */
#define SIDE_BY_SIDE_PER_THREAD 2

static void object_op(const coupled_ctx* c, int32_t i, hy_pool* pool) {
    const hy_coupled_object* o = c->obj + i;
    const double* in = c->in + c->off[i];
    double* out = c->out + c->off[i];
    if (c->op == 0) o->ops->apply(o->model, pool, in, out);
    else if (c->op == 1) o->ops->precondition(o->model, pool, in, out);
    else o->ops->guess(o->model, pool, in, out);
}

static void object_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    const coupled_ctx* c = vctx;
    for (int64_t i = begin; i < end; i++) object_op(c, (int32_t)i, c->solo[worker]);
}

/* Operation op of every object, from in into out (joined vectors). */
static void each_object(coupled_ctx* c, int op, const double* in, double* out) {
    c->op = op, c->in = in, c->out = out;
    if (c->solo) {
        hy_pool_for(c->pool, c->n, 1, object_block, c);
        return;
    }
    for (int32_t i = 0; i < c->n; i++) object_op(c, i, c->pool);
}

static void coupled_matvec(void* vctx, const double* p, double* y) {
    coupled_ctx* c = vctx;
    each_object(c, 0, p, y);
    for (int32_t k = 0; k < c->ni; k++) {
        const hy_interaction* ia = c->ia[k];
        const hy_coupled_object *a = c->obj + ia->object[0], *b = c->obj + ia->object[1];
        const uint8_t *fa = a->ops->fixed(a->model), *fb = b->ops->fixed(b->model);
        const double *pa = p + c->off[ia->object[0]], *pb = p + c->off[ia->object[1]];
        hy_interaction_add_product(ia, 0, c->k_scale, fa, fb, pa, pb, y + c->off[ia->object[0]]);
        hy_interaction_add_product(ia, 1, c->k_scale, fa, fb, pa, pb, y + c->off[ia->object[1]]);
    }
}

static void coupled_precond(void* vctx, const double* r, double* z) { each_object(vctx, 1, r, z); }

/* CG's start: each object's own (its scaled mass-only step, the
 * hy_implicit_ops guess) on its part of rhs, as a solid stepping alone
 * starts, then scaled as a whole by the s nearest the solution in the
 * joined system's energy norm (one product with it; the objects' own
 * steps do not see the interactions' stiffness). A group in free flight
 * whose interactions exert no force starts at its solution (s = 1); with
 * s = 0 among the choices, the start is never farther from the solution
 * than dv = 0 in that norm. In the held solve the scale is taken before
 * its filter. */
static void coupled_guess(void* vctx, const double* rhs, double* dv) {
    coupled_ctx* c = vctx;
    each_object(c, 2, rhs, dv);
    int64_t n = c->off[c->n];
    coupled_matvec(c, dv, c->y);
    double num = 0.0, den = 0.0;
    for (int64_t k = 0; k < n; k++) num += dv[k] * rhs[k], den += dv[k] * c->y[k];
    double s = den > 0.0 && isfinite(num / den) ? num / den : 1.0;
    for (int64_t k = 0; k < n && s != 1.0; k++) dv[k] *= s;
}

hy_status hy_coupled_solve(hy_pool* pool, const hy_coupled_object* objects, int32_t object_count,
                           hy_interaction* const* interactions, int32_t interaction_count, double dt,
                           const double gravity[3], int32_t cg_max_iterations, double cg_tolerance,
                           hy_coupled_stats* stats) {
    if (stats) stats->cg_iterations = 0, stats->cg_relative_residual = 0.0;
    if (!pool || !objects || object_count <= 0 || interaction_count < 0 || (interaction_count > 0 && !interactions) ||
        !gravity)
        return hy_fail(HY_ERR_INVALID_ARG, "coupled solve: need a pool, objects and gravity (%d objects, %d "
                                           "interactions)", object_count, interaction_count);
    if (!(dt > 0) || !isfinite(dt)) return hy_fail(HY_ERR_INVALID_ARG, "coupled solve: dt must be > 0, got %g", dt);
    if (cg_max_iterations < 0 || !(cg_tolerance >= 0))
        return hy_fail(HY_ERR_INVALID_ARG, "coupled solve: bad CG settings (%d iterations, tolerance %g)",
                       cg_max_iterations, cg_tolerance);
    int64_t* off = malloc(((size_t)object_count + 1) * sizeof *off);
    if (!off) return hy_fail(HY_ERR_NOMEM, "coupled solve: out of memory");
    off[0] = 0;
    for (int32_t i = 0; i < object_count; i++) {
        const hy_coupled_object* o = objects + i;
        if (!o->ops || !o->model || !o->x0 || !o->v0 || !o->x1 || !o->v1) {
            free(off);
            return hy_fail(HY_ERR_INVALID_ARG, "coupled solve: object %d lacks its operations, model or state", i);
        }
        off[i + 1] = off[i] + 3 * (int64_t)o->ops->vertex_count(o->model);
    }
    for (int32_t k = 0; k < interaction_count; k++) {
        const hy_interaction* ia = interactions[k];
        int bad = !ia;
        for (int s = 0; !bad && s < 2; s++)
            bad = ia->object[s] >= object_count ||
                  objects[ia->object[s]].ops->vertex_count(objects[ia->object[s]].model) != ia->nv[s];
        if (bad) {
            free(off);
            return hy_fail(HY_ERR_INVALID_ARG,
                           "coupled solve: interaction %d names an object outside the %d given or one whose vertex "
                           "count differs from its pairs'",
                           k, object_count);
        }
    }
    int64_t n = off[object_count];
    double* fext = calloc((size_t)n, sizeof *fext);
    double* extra = calloc(3 * (size_t)n, sizeof *extra);
    double* rhs = malloc((size_t)n * sizeof *rhs);
    double* dv = calloc((size_t)n, sizeof *dv);
    double* y = malloc((size_t)n * sizeof *y);
    hy_cg_workspace* cg = hy_cg_workspace_create(n);
    int threads = hy_pool_size(pool);
    hy_pool** solo = NULL;
    if (threads > 1 && object_count >= SIDE_BY_SIDE_PER_THREAD * threads) {
        solo = calloc((size_t)threads, sizeof *solo);
        for (int k = 0; solo && k < threads; k++)
            if (!(solo[k] = hy_pool_create(1))) {
                for (int j = 0; j < k; j++) hy_pool_destroy(solo[j]);
                free(solo);
                solo = NULL;
            }
    }
    hy_status st = HY_OK;
    if (!fext || !extra || !rhs || !dv || !y || !cg) st = hy_fail(HY_ERR_NOMEM, "coupled solve: out of memory");
    for (int32_t i = 0; !st && i < object_count; i++)
        if (objects[i].f_ext) memcpy(fext + off[i], objects[i].f_ext, (size_t)(off[i + 1] - off[i]) * sizeof *fext);
    /* the interactions' forces and stiffness at the step's start, then
     * each object's own system */
    for (int32_t k = 0; !st && k < interaction_count; k++) {
        hy_interaction* ia = interactions[k];
        const hy_coupled_object *a = objects + ia->object[0], *b = objects + ia->object[1];
        hy_interaction_linearize(ia, a->x0, b->x0);
        for (int s = 0; s < 2; s++) {
            hy_interaction_add_rhs(ia, s, a->x0, b->x0, a->v0, b->v0, dt, fext + off[ia->object[s]]);
            hy_interaction_add_diagonal(ia, s, dt * dt, extra + 3 * off[ia->object[s]]);
        }
    }
    for (int32_t i = 0; !st && i < object_count; i++) {
        const hy_coupled_object* o = objects + i;
        st = o->ops->prepare(o->model, pool, o->x0, o->v0, dt, gravity, fext + off[i], extra + 3 * off[i],
                             rhs + off[i]);
    }
    if (!st) {
        coupled_ctx c = {pool, objects, object_count, off, interactions, interaction_count, dt * dt, y, solo, 0, NULL,
                         NULL};
        double rel = 0.0;
        int32_t it = 0;
        int holds = 0;
        for (int32_t i = 0; i < object_count; i++) holds |= objects[i].held_normal != NULL;
        if (!holds) {
            coupled_guess(&c, rhs, dv);
            it = hy_cg_solve_precond(pool, n, coupled_matvec, &c, coupled_precond, &c, rhs, dv, cg_tolerance,
                                     cg_max_iterations, cg, &rel);
        } else {
            /* the objects' held vertices, joined (solvers/implicit.h) */
            int32_t nv = (int32_t)(n / 3);
            double* normal = calloc((size_t)n, sizeof *normal);
            double* v0 = malloc((size_t)n * sizeof *v0);
            double* scratch = malloc((size_t)hy_implicit_held_scratch_size(nv) * sizeof *scratch);
            uint8_t* let_go = calloc((size_t)nv, 1);
            if (!normal || !v0 || !scratch || !let_go) st = hy_fail(HY_ERR_NOMEM, "coupled solve: out of memory");
            for (int32_t i = 0; !st && i < object_count; i++) {
                size_t len = (size_t)(off[i + 1] - off[i]) * sizeof(double);
                memcpy(v0 + off[i], objects[i].v0, len);
                if (objects[i].held_normal) memcpy(normal + off[i], objects[i].held_normal, len);
            }
            hy_implicit_held held = {normal, scratch, 0, let_go};
            hy_implicit_guess guess = {coupled_guess, &c};
            if (!st)
                it = hy_implicit_held_solve(pool, nv, coupled_matvec, &c, coupled_precond, &c, &guess, &held, v0, rhs,
                                            dv, cg_tolerance, cg_max_iterations, cg, &rel);
            for (int32_t i = 0; !st && i < object_count; i++)
                if (objects[i].let_go)
                    for (int64_t v = off[i] / 3; v < off[i + 1] / 3; v++)
                        if (let_go[v]) objects[i].let_go[v - off[i] / 3] = 1;
            free(let_go);
            free(normal);
            free(v0);
            free(scratch);
        }
        if (stats) stats->cg_iterations = it, stats->cg_relative_residual = rel;
        for (int32_t i = 0; !st && i < object_count; i++) {
            const hy_coupled_object* o = objects + i;
            st = o->ops->commit(o->model, pool, o->x0, o->v0, dv + off[i], dt, o->x1, o->v1);
            if (st) hy_error_prefix("coupled solve: object %d (%s): ", i, o->ops->kind);
        }
    }
    for (int k = 0; solo && k < threads; k++) hy_pool_destroy(solo[k]);
    free(solo);
    free(off);
    free(fext);
    free(extra);
    free(rhs);
    free(dv);
    free(y);
    hy_cg_workspace_destroy(cg);
    return st;
}
