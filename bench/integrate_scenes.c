/* Workloads of `hyphys bench integrate` (see integrate_scenes.h). */
#include "bench/integrate_scenes.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "core/hash.h"
#include "core/pool.h"
#include "core/tetmesh.h"
#include "solvers/batch_hd.h"
#include "solvers/fem.h"

/* A pair task's cost as a share of the smaller object's step: the contact
 * or attachment forces and their Jacobian blocks, a few percent of the
 * implicit solve they feed. */
#define CONTACT_SHARE 0.1
/* The share of the setup that updates positions at the end of the step. */
#define UPDATE_SHARE 0.1

/* ---- measured FEM costs */

static double fastest(const double* t, int n) {
    double m = t[0];
    for (int i = 1; i < n; i++) m = fmin(m, t[i]);
    return m;
}

static void fit_line(const int32_t* x, const double* y, double* a, double* b) {
    double sx = 0, sy = 0, sxx = 0, sxy = 0, n = HY_FEM_COST_SIZES;
    for (int k = 0; k < HY_FEM_COST_SIZES; k++) {
        sx += x[k];
        sy += y[k];
        sxx += (double)x[k] * x[k];
        sxy += x[k] * y[k];
    }
    *b = (n * sxy - sx * sy) / (n * sxx - sx * sx);
    *a = (sy - *b * sx) / n;
    if (*a < 0) { /* through the origin */
        *a = 0;
        *b = sxy / sxx;
    }
}

/* Seconds of the fastest of `steps` steps with `iters` CG iterations: the
 * machine may be shared, and the fastest step is the least disturbed. */
static hy_status time_steps(hy_fem_model* m, hy_pool* pool, double* x, double* v, int steps, int iters, double* out) {
    const double grav[3] = {0, -9.81, 0};
    double t[64] = {0};
    hy_status s = HY_OK;
    for (int i = 0; i <= steps && !s; i++) {
        double t0 = hy_cli_now();
        s = hy_fem_solve(m, pool, x, v, 0.01, grav, NULL, iters, 0.0, x, v, NULL);
        if (i) t[i - 1] = hy_cli_now() - t0;
    }
    if (!s) *out = fastest(t, steps);
    return s;
}

hy_status hy_fem_costs_measure(int steps, hy_fem_costs* out) {
    /* cubes of 8^3 ... 15^3 particles: 512 to 3,375 */
    static const int cells[HY_FEM_COST_SIZES] = {7, 9, 11, 13, 14};
    memset(out, 0, sizeof *out);
    if (steps < 1 || steps > 63) return hy_fail(HY_ERR_INVALID_ARG, "fem costs: steps must be in [1, 63]");
    hy_pool* pool = hy_pool_create(1);
    if (!pool) return hy_fail(HY_ERR_NOMEM, "fem costs: no pool");
    hy_status s = HY_OK;
    const hy_fem_params par = {.young = 1e6, .poisson = 0.35, .density = 1000, .damping_mass = 0.1,
                               .damping_stiffness = 0.01};
    for (int k = 0; k < HY_FEM_COST_SIZES && !s; k++) {
        int c = cells[k];
        hy_tetmesh* mesh = NULL;
        s = hy_tetmesh_box((double[3]){0, 0, 0}, (double[3]){0.5, 0.5, 0.5}, c, c, c, &mesh);
        if (s) break;
        int32_t nv = mesh->vertex_count, nfix = 0;
        int32_t* fixed = malloc((size_t)nv * sizeof *fixed);
        double* x = malloc(3 * (size_t)nv * sizeof *x);
        double* v = calloc(3 * (size_t)nv, sizeof *v);
        hy_fem_model* m = NULL;
        if (!fixed || !x || !v) s = hy_fail(HY_ERR_NOMEM, "fem costs: out of memory");
        if (!s) {
            for (int32_t i = 0; i < nv; i++)
                if (mesh->positions[3 * i + 1] == 0.0) fixed[nfix++] = i;
            memcpy(x, mesh->positions, 3 * (size_t)nv * sizeof *x);
            s = hy_fem_model_create(mesh->positions, nv, mesh->tets, mesh->tet_count, &par, fixed, nfix, &m);
        }
        double t5 = 0, tn = 0;
        if (!s) s = time_steps(m, pool, x, v, steps, 5, &t5);
        if (!s) s = time_steps(m, pool, x, v, steps, HY_FEM_CG_ITERATIONS, &tn);
        if (!s) {
            out->particles[k] = nv;
            out->step[k] = tn;
            out->iteration[k] = fmax(tn - t5, 0.0) / (HY_FEM_CG_ITERATIONS - 5);
            out->setup[k] = fmax(tn - HY_FEM_CG_ITERATIONS * out->iteration[k], 0.0);
        }
        hy_fem_model_destroy(m);
        free(fixed);
        free(x);
        free(v);
        hy_tetmesh_destroy(mesh);
    }
    hy_pool_destroy(pool);
    if (s) return s;
    fit_line(out->particles, out->setup, &out->setup_a, &out->setup_b);
    fit_line(out->particles, out->iteration, &out->iter_a, &out->iter_b);
    return HY_OK;
}

hy_status hy_fem_costs_load(const char* path, hy_fem_costs* out) {
    memset(out, 0, sizeof *out);
    FILE* f = fopen(path, "r");
    if (!f) return hy_fail(HY_ERR_IO, "fem costs '%s': cannot open", path);
    char line[256];
    int k = 0, ln = 0;
    hy_status s = HY_OK;
    while (!s && fgets(line, sizeof line, f)) {
        ln++;
        if (ln == 1) continue; /* header */
        if (line[0] == '\n' || line[0] == 0) continue;
        int32_t n;
        double step, setup, iter;
        if (k >= HY_FEM_COST_SIZES)
            s = hy_fail(HY_ERR_PARSE, "%s:%d: more than %d sizes", path, ln, HY_FEM_COST_SIZES);
        else if (sscanf(line, "%d,%lf,%lf,%lf", &n, &step, &setup, &iter) != 4 || n < 1 || !(step > 0) ||
                 !(setup >= 0) || !(iter > 0))
            s = hy_fail(HY_ERR_PARSE, "%s:%d: expected particles,step_ms,setup_ms,iteration_ms (positive)", path, ln);
        else {
            out->particles[k] = n;
            out->step[k] = 1e-3 * step;
            out->setup[k] = 1e-3 * setup;
            out->iteration[k++] = 1e-3 * iter;
        }
    }
    fclose(f);
    if (!s && k != HY_FEM_COST_SIZES)
        s = hy_fail(HY_ERR_PARSE, "%s: %d sizes, expected %d", path, k, HY_FEM_COST_SIZES);
    if (s) return s;
    fit_line(out->particles, out->setup, &out->setup_a, &out->setup_b);
    fit_line(out->particles, out->iteration, &out->iter_a, &out->iter_b);
    return HY_OK;
}

/* ---- the tasks' CPU implementations (also standing for their CUDA ones:
 * a modeled GPU runs the CPU implementation) */

typedef struct pair_arg {
    int32_t n;
} pair_arg;

/* Pair buffers an assembly task reads besides v, f, x; a gather task
 * reads up to one less than a task's arguments (besides f). */
#define ASM_PAIRS (HY_RT_MAX_ARGS - 3)
#define GATHER_PAIRS (HY_RT_MAX_ARGS - 1)

/* An interaction writes its own buffer (the coupling force on the first
 * object, the second taking its opposite), which the two objects' assembly
 * tasks read: the pairs of a step do not wait for one another, as they
 * would if each added into both objects' force arrays (every pair of a
 * connected scene chained behind the one before by write after write). */
static void pair_fn(void* const* b, void* arg) {
    const int32_t n = ((const pair_arg*)arg)->n;
    double* p = b[0];
    const double* xa = b[1];
    const double* xb = b[2];
    for (int32_t i = 0; i < 3 * n; i += 3) p[i] = 1e-3 * (xb[i] - xa[i]);
}

/* What an assembly or gather task adds from the pair buffers it reads:
 * the sign of each (+1: the object is the pair's first) and the length. */
typedef struct gather_arg {
    int32_t n;
    int32_t npairs;
    int32_t len[GATHER_PAIRS];
    double sign[GATHER_PAIRS];
} gather_arg;

static void add_pairs(void* const* b, const gather_arg* a, double* f) {
    for (int32_t k = 0; k < a->npairs; k++) {
        const double* p = b[k];
        for (int32_t i = 0; i < 3 * a->len[k]; i += 3) f[i] += a->sign[k] * p[i];
    }
}

/* f += the pair buffers (objects with more pairs than the assembly's
 * signature holds) */
static void gather_fn(void* const* b, void* arg) { add_pairs(b + 1, arg, b[0]); }

static void assemble_fn(void* const* b, void* arg) {
    const gather_arg* a = arg;
    double* v = b[0];
    double* f = b[1];
    const double* x = b[2];
    add_pairs(b + 3, a, f);
    for (int32_t i = 0; i < 3 * a->n; i++) {
        v[i] = 0.99 * v[i] + 1e-2 * f[i] - 1e-4 * x[i];
        f[i] = 0;
    }
}

/* a CG iteration: a light touch (every 97th value), order-dependent */
static void cg_fn(void* const* b, void* arg) {
    const int32_t n = *(const int32_t*)arg;
    double* v = b[0];
    for (int32_t i = 0; i < 3 * n; i += 97) v[i] = 0.999 * v[i] + 1e-5 * v[(i + 1) % (3 * n)];
}

static void update_fn(void* const* b, void* arg) {
    const int32_t n = *(const int32_t*)arg;
    double* x = b[0];
    const double* v = b[1];
    for (int32_t i = 0; i < 3 * n; i++) x[i] += 1e-2 * v[i];
}

_Static_assert(HY_RT_MAX_ARGS == 8, "the kind tables below spell out 8 arguments");
#define R_ HY_RT_R
static const hy_rt_kind k_contact = {"contact", 3, {HY_RT_W, R_, R_}, pair_fn, pair_fn, 0};
static const hy_rt_kind k_attach = {"attach", 3, {HY_RT_W, R_, R_}, pair_fn, pair_fn, 0};
/* assembly reading 0 .. ASM_PAIRS pair buffers */
static const hy_rt_kind k_assemble[ASM_PAIRS + 1] = {
    {"fem-assemble", 3, {HY_RT_RW, HY_RT_RW, R_}, assemble_fn, assemble_fn, 0},
    {"fem-assemble", 4, {HY_RT_RW, HY_RT_RW, R_, R_}, assemble_fn, assemble_fn, 0},
    {"fem-assemble", 5, {HY_RT_RW, HY_RT_RW, R_, R_, R_}, assemble_fn, assemble_fn, 0},
    {"fem-assemble", 6, {HY_RT_RW, HY_RT_RW, R_, R_, R_, R_}, assemble_fn, assemble_fn, 0},
    {"fem-assemble", 7, {HY_RT_RW, HY_RT_RW, R_, R_, R_, R_, R_}, assemble_fn, assemble_fn, 0},
    {"fem-assemble", 8, {HY_RT_RW, HY_RT_RW, R_, R_, R_, R_, R_, R_}, assemble_fn, assemble_fn, 0},
};
/* f += 1 .. GATHER_PAIRS pair buffers */
static const hy_rt_kind k_gather[GATHER_PAIRS + 1] = {
    {"fem-gather", 1, {HY_RT_RW}, gather_fn, gather_fn, 0},
    {"fem-gather", 2, {HY_RT_RW, R_}, gather_fn, gather_fn, 0},
    {"fem-gather", 3, {HY_RT_RW, R_, R_}, gather_fn, gather_fn, 0},
    {"fem-gather", 4, {HY_RT_RW, R_, R_, R_}, gather_fn, gather_fn, 0},
    {"fem-gather", 5, {HY_RT_RW, R_, R_, R_, R_}, gather_fn, gather_fn, 0},
    {"fem-gather", 6, {HY_RT_RW, R_, R_, R_, R_, R_}, gather_fn, gather_fn, 0},
    {"fem-gather", 7, {HY_RT_RW, R_, R_, R_, R_, R_, R_}, gather_fn, gather_fn, 0},
    {"fem-gather", 8, {HY_RT_RW, R_, R_, R_, R_, R_, R_, R_}, gather_fn, gather_fn, 0},
};
#undef R_
static const hy_rt_kind k_cg = {"fem-cg", 1, {HY_RT_RW}, cg_fn, cg_fn, 0};
static const hy_rt_kind k_update = {"fem-update", 2, {HY_RT_RW, HY_RT_R}, update_fn, update_fn, 0};

/* ---- scenes */

const char* hy_iscene_name(hy_iscene_kind kind) {
    static const char* names[] = {"fem64", "fem_bars", "fem_independent"};
    return names[kind];
}

static uint64_t lcg(uint64_t* x) {
    *x = *x * 6364136223846793005ull + 1442695040888963407ull;
    return *x >> 33;
}

static hy_status iscene_create(hy_iscene_kind kind, int block, const hy_fem_costs* costs, const hy_irec* rec,
                               hy_iscene* out) {
    memset(out, 0, sizeof *out);
    out->kind = kind;
    out->rec = rec;
    uint64_t seed = 0x5eed0000u + (uint64_t)kind;
    if (kind == HY_ISCENE_FEM64) {
        out->nobj = 64;
        for (int i = 0; i < 64; i++) out->n[i] = 2600 + (int32_t)(lcg(&seed) % 801);
    } else if (kind == HY_ISCENE_BARS) {
        if (block < 64 || block > 100000)
            return hy_fail(HY_ERR_INVALID_ARG, "fem_bars: block of %d particles not in [64, 100000]", block);
        out->nobj = 30;
        for (int b = 0, i = 0; b < 12; b++)
            for (int k = 0; k < (b < 6 ? 3 : 2); k++, i++) {
                out->n[i] = block;
                out->bar[i] = b;
            }
    } else {
        out->nobj = 64;
        for (int i = 0; i < 64; i++) out->n[i] = 512 + (int32_t)(lcg(&seed) % 2489);
    }
    if (out->rec) {
        out->nobj = out->rec->nobj;
        for (int i = 0; i < out->nobj; i++) out->n[i] = out->rec->n[i];
    }
    size_t total = 0;
    for (int i = 0; i < out->nobj; i++) {
        out->setup[i] = hy_fem_setup_cost(costs, out->n[i]);
        out->iter[i] = hy_fem_iteration_cost(costs, out->n[i]);
        total += 9 * (size_t)out->n[i];
    }
    out->data = malloc(total * sizeof *out->data);
    if (!out->data) return hy_fail(HY_ERR_NOMEM, "%s: out of memory", hy_iscene_name(kind));
    double* p = out->data;
    for (int i = 0; i < out->nobj; i++) {
        size_t m = 3 * (size_t)out->n[i];
        out->x[i] = p;
        out->v[i] = p + m;
        out->f[i] = p + 2 * m;
        p += 3 * m;
        for (size_t k = 0; k < m; k++) {
            out->x[i][k] = 1e-3 * (double)((k * 37 + (size_t)i * 11) % 1009); /* any spread-out values */
            out->v[i][k] = 0;
            out->f[i][k] = 0;
        }
    }
    return HY_OK;
}

hy_status hy_iscene_create(hy_iscene_kind kind, int block, const hy_fem_costs* costs, hy_iscene* out) {
    return iscene_create(kind, block, costs, NULL, out);
}

void hy_iscene_destroy(hy_iscene* sc) {
    free(sc->data);
    sc->data = NULL;
    for (int32_t k = 0; k < sc->nslots; k++) free(sc->slot_buf[k]);
    free(sc->slot_buf);
    free(sc->slot_ab);
    free(sc->slot_h);
    sc->slot_buf = NULL;
    sc->slot_ab = sc->slot_h = NULL;
    sc->nslots = sc->cap_slots = 0;
}

/* The buffer handle of pair (a, b), a < b: registered with g the first
 * time the pair interacts, kept for later steps (the graph keeps its
 * handles across resets). */
static hy_status pair_handle(hy_iscene* sc, hy_rt_graph* g, int a, int b, int32_t* out) {
    for (int32_t k = 0; k < sc->nslots; k++)
        if (sc->slot_ab[2 * k] == a && sc->slot_ab[2 * k + 1] == b) {
            *out = sc->slot_h[k];
            return HY_OK;
        }
    if (sc->nslots == sc->cap_slots) {
        int32_t c = sc->cap_slots ? 2 * sc->cap_slots : 64;
        double** buf = realloc(sc->slot_buf, (size_t)c * sizeof *buf);
        if (buf) sc->slot_buf = buf;
        int32_t* ab = realloc(sc->slot_ab, 2 * (size_t)c * sizeof *ab);
        if (ab) sc->slot_ab = ab;
        int32_t* h = realloc(sc->slot_h, (size_t)c * sizeof *h);
        if (h) sc->slot_h = h;
        if (!buf || !ab || !h) return hy_fail(HY_ERR_NOMEM, "%s: out of memory for pairs", hy_iscene_name(sc->kind));
        sc->cap_slots = c;
    }
    int32_t n = sc->n[a] < sc->n[b] ? sc->n[a] : sc->n[b];
    double* buf = calloc(3 * (size_t)n, sizeof *buf);
    if (!buf) return hy_fail(HY_ERR_NOMEM, "%s: out of memory for pairs", hy_iscene_name(sc->kind));
    int32_t k = sc->nslots;
    hy_status s = hy_rt_graph_register(g, buf, 3 * (size_t)n * sizeof *buf, &sc->slot_h[k]);
    if (s) {
        free(buf);
        return s;
    }
    sc->slot_buf[k] = buf;
    sc->slot_ab[2 * k] = a;
    sc->slot_ab[2 * k + 1] = b;
    sc->nslots++;
    *out = sc->slot_h[k];
    return HY_OK;
}

/* fem64's contacts at a step: pile neighbours (4x4x4 grid) in a fixed
 * shuffled order, the first `active` of them, active rising to 31 and
 * falling again in epochs of 4 steps (the pile settling, then sliding
 * apart). */
static void fem64_pairs(hy_iscene* sc) {
    int cand[192][2], nc = 0;
    for (int i = 0; i < 64; i++) {
        int x = i % 4, y = (i / 4) % 4, z = i / 16;
        if (x + 1 < 4) cand[nc][0] = i, cand[nc++][1] = i + 1;
        if (y + 1 < 4) cand[nc][0] = i, cand[nc++][1] = i + 4;
        if (z + 1 < 4) cand[nc][0] = i, cand[nc++][1] = i + 16;
    }
    uint64_t seed = 77;
    for (int i = nc - 1; i > 0; i--) {
        int j = (int)(lcg(&seed) % (uint64_t)(i + 1));
        int a = cand[i][0], b = cand[i][1];
        cand[i][0] = cand[j][0], cand[i][1] = cand[j][1];
        cand[j][0] = a, cand[j][1] = b;
    }
    int epoch = sc->step / 4;
    int active = (int)lround(31.0 * sin(3.14159265358979 * (epoch + 0.5) / 6.0));
    if (epoch >= 6) active = 4;
    sc->npairs = 0;
    for (int k = 0; k < active; k++) {
        int a = cand[k][0], b = cand[k][1];
        sc->pa[sc->npairs] = a < b ? a : b;
        sc->pb[sc->npairs++] = a < b ? b : a;
    }
}

/* blocks are numbered bar by bar; the k-th block of bar b neighbours the
 * k-th of bar b + 1 when both bars are that long */
static void bars_pairs(hy_iscene* sc) {
    int first[13] = {0}, len[12] = {0};
    for (int i = 0; i < sc->nobj; i++) len[sc->bar[i]]++;
    for (int b = 0; b < 12; b++) first[b + 1] = first[b] + len[b];
    sc->npairs = 0;
    for (int b = 0; b < 12; b++)
        for (int k = 0; k < len[b]; k++) {
            int i = first[b] + k;
            if (k + 1 < len[b]) sc->pa[sc->npairs] = i, sc->pb[sc->npairs++] = i + 1;
            if (b + 1 < 12 && k < len[b + 1]) sc->pa[sc->npairs] = i, sc->pb[sc->npairs++] = first[b + 1] + k;
        }
}

/* fem_bars: the CG of a bending bar needs more iterations as it swings
 * away from rest; bars are out of phase. */
static double cost_scale(const hy_iscene* sc, int i) {
    if (sc->kind != HY_ISCENE_BARS) return 1.0;
    return 1.0 + 0.35 * sin(0.5 * sc->step + 0.9 * sc->bar[i] + 0.3 * i);
}

/* The state hash: the values' bits word by word (a byte-wise FNV-1a of
 * every run's few MB was most of the bench's time). */
static uint64_t hash_doubles(uint64_t h, const double* v, size_t n) {
    for (size_t i = 0; i < n; i++) {
        uint64_t w;
        memcpy(&w, &v[i], sizeof w);
        h = (h ^ w) * 0x100000001b3ull;
        h ^= h >> 29;
    }
    return h;
}

/* Per step: one task per pair (its own buffer from both positions), then
 * per object its assembly (reading its pairs' buffers; an object with more
 * pairs than the assembly's signature holds gathers the rest into f
 * first), the CG iterations and the update. `args` has room for
 * 2 nobj + HY_ISCENE_MAX_PAIRS gather arguments. */
static hy_status submit(hy_iscene* sc, hy_rt_graph* g, pair_arg* pargs, gather_arg* args) {
    hy_rt_graph_reset(g);
    const hy_irec* rec = sc->rec;
    const int rk = rec ? sc->step % rec->nsteps : 0;
    if (rec) {
        sc->npairs = 0;
        for (int32_t k = rec->pair_start[rk]; k < rec->pair_start[rk + 1]; k++) {
            sc->pa[sc->npairs] = rec->pairs[2 * k];
            sc->pb[sc->npairs++] = rec->pairs[2 * k + 1];
        }
    } else if (sc->kind == HY_ISCENE_FEM64) fem64_pairs(sc);
    else if (sc->kind == HY_ISCENE_BARS) bars_pairs(sc);
    else sc->npairs = 0;
    hy_status s = HY_OK;
    int32_t ph[HY_ISCENE_MAX_PAIRS];
    for (int k = 0; k < sc->npairs && !s; k++) {
        int a = sc->pa[k], b = sc->pb[k];
        pargs[k].n = sc->n[a] < sc->n[b] ? sc->n[a] : sc->n[b];
        double c = sc->setup[a] < sc->setup[b] ? sc->setup[a] : sc->setup[b];
        s = pair_handle(sc, g, a, b, &ph[k]);
        if (!s)
            s = hy_rt_graph_submit_pair(g, sc->kind == HY_ISCENE_BARS ? &k_attach : &k_contact, a, b,
                                        CONTACT_SHARE * c, &pargs[k], (int32_t[]){ph[k], sc->hx[a], sc->hx[b]}, NULL);
    }
    int nargs = 0;
    for (int i = 0; i < sc->nobj && !s; i++) {
        /* reference seconds outside the CG, per CG iteration, iterations */
        double setup = cost_scale(sc, i) * sc->setup[i], iter = cost_scale(sc, i) * sc->iter[i];
        int iters = HY_FEM_CG_ITERATIONS;
        if (rec) { /* the recorded time, split in the measured proportions */
            iters = rec->cg[rk * rec->nobj + i];
            double total = rec->seconds[rk * rec->nobj + i], model = sc->setup[i] + iters * sc->iter[i];
            setup = model > 0 ? total * sc->setup[i] / model : total;
            iter = model > 0 ? total * sc->iter[i] / model : 0.0;
        }
        int32_t h[HY_RT_MAX_ARGS];
        gather_arg* ga = &args[nargs++];
        memset(ga, 0, sizeof *ga);
        ga->n = sc->n[i];
        for (int k = 0; k < sc->npairs && !s; k++) {
            if (sc->pa[k] != i && sc->pb[k] != i) continue;
            if (ga->npairs == GATHER_PAIRS) { /* more than one task holds: gather these */
                h[0] = sc->hf[i];
                s = hy_rt_graph_submit(g, &k_gather[ga->npairs], i, 0.0, ga, h, NULL);
                ga = &args[nargs++];
                memset(ga, 0, sizeof *ga);
                ga->n = sc->n[i];
            }
            h[1 + ga->npairs] = ph[k];
            ga->len[ga->npairs] = pargs[k].n;
            ga->sign[ga->npairs++] = sc->pa[k] == i ? 1.0 : -1.0;
        }
        if (!s && ga->npairs > ASM_PAIRS) { /* the rest fit a gather but not the assembly */
            h[0] = sc->hf[i];
            s = hy_rt_graph_submit(g, &k_gather[ga->npairs], i, 0.0, ga, h, NULL);
            ga = &args[nargs++];
            memset(ga, 0, sizeof *ga);
            ga->n = sc->n[i];
        }
        /* the assembly's pair buffers follow v, f, x */
        for (int k = ga->npairs - 1; k >= 0 && !s; k--) h[3 + k] = h[1 + k];
        h[0] = sc->hv[i];
        h[1] = sc->hf[i];
        h[2] = sc->hx[i];
        if (!s)
            s = hy_rt_graph_submit(g, &k_assemble[ga->npairs], i, (1 - UPDATE_SHARE) * setup, ga, h, NULL);
        for (int k = 0; k < iters && !s; k++)
            s = hy_rt_graph_submit(g, &k_cg, i, iter, &sc->n[i], &sc->hv[i], NULL);
        if (!s)
            s = hy_rt_graph_submit(g, &k_update, i, UPDATE_SHARE * setup, &sc->n[i], (int32_t[]){sc->hx[i], sc->hv[i]},
                                   NULL);
    }
    sc->step++;
    return s;
}

static void stats_add(hy_rt_step_stats* sum, const hy_rt_step_stats* st) {
    sum->makespan += st->makespan;
    sum->tasks += st->tasks;
    sum->steals += st->steals;
    sum->steal_fails += st->steal_fails;
    sum->steals_outside_affinity += st->steals_outside_affinity;
    sum->metis_calls += st->metis_calls;
    sum->remapped += st->remapped;
    sum->threshold = st->threshold;
    sum->transfer_time += st->transfer_time;
    sum->gpu_launches += st->gpu_launches;
    for (int c = 0; c < HY_RT_MAX_CHANNELS; c++) sum->channel_bytes[c] += st->channel_bytes[c];
    for (int q = 0; q < HY_RT_MAX_PUS; q++) {
        sum->busy[q] += st->busy[q];
        sum->pu_tasks[q] += st->pu_tasks[q];
    }
}

/* Tetrahedra of a block of n particles: the scenes' blocks are grids of
 * cells of 6 tetrahedra, taken here as cubes (512 particles: 7^3 cells,
 * 2,058 tetrahedra, as in fem_independent). */
static int64_t block_tets(int32_t n) {
    int64_t c = (int64_t)lround(cbrt((double)n)) - 1;
    return c > 0 ? 6 * c * c * c : 0;
}

/* The objects the real runtime would step in a batch on a GPU this step
 * (engine/integrate.c): small (fewer elements than the batch's limit,
 * HY_BATCH_MAX_ITEMS) and free (no pair: a solid joined to another is
 * stepped in its coupled group). The modeled GPUs share these objects'
 * launches (runtime/sim.h). */
static void mark_batchable(const hy_iscene* sc, uint8_t* batch) {
    for (int i = 0; i < sc->nobj; i++) batch[i] = block_tets(sc->n[i]) < HY_BATCH_MAX_ITEMS;
    for (int k = 0; k < sc->npairs; k++) batch[sc->pa[k]] = batch[sc->pb[k]] = 0;
}

hy_status hy_iscene_run(hy_iscene_kind kind, int block, const hy_fem_costs* costs, const hy_irec* rec,
                        const hy_rt_machine* m, const char* policy, int steps, double* makespan, uint64_t* hash,
                        hy_rt_step_stats* sum, hy_rt_trace* trace) {
    hy_iscene sc;
    hy_rt_graph* g = NULL;
    hy_rt_sim* sim = NULL;
    pair_arg pargs[HY_ISCENE_MAX_PAIRS];
    /* an assembly argument per object, and a gather per GATHER_PAIRS of a pair's two ends */
    gather_arg* args = malloc((2 * HY_ISCENE_MAX_OBJ + HY_ISCENE_MAX_PAIRS) * sizeof *args);
    memset(&sc, 0, sizeof sc);
    hy_status s = args ? iscene_create(kind, block, costs, rec, &sc) : hy_fail(HY_ERR_NOMEM, "out of memory");
    if (!s) s = hy_rt_graph_create(&g);
    for (int i = 0; i < sc.nobj && !s; i++) {
        size_t bytes = 3 * (size_t)sc.n[i] * sizeof(double);
        s = hy_rt_graph_register(g, sc.x[i], bytes, &sc.hx[i]);
        if (!s) s = hy_rt_graph_register(g, sc.v[i], bytes, &sc.hv[i]);
        if (!s) s = hy_rt_graph_register(g, sc.f[i], bytes, &sc.hf[i]);
    }
    uint8_t batch[HY_ISCENE_MAX_OBJ];
    if (!s) s = hy_rt_sim_create(m, policy, 42, &sim);
    if (!s && trace) hy_rt_sim_set_trace(sim, trace);
    if (!s) sim->batch = batch;
    if (sum) memset(sum, 0, sizeof *sum);
    for (int k = 0; k < steps && !s; k++) {
        hy_rt_step_stats st;
        s = submit(&sc, g, pargs, args);
        if (!s) mark_batchable(&sc, batch);
        if (!s) s = hy_rt_sim_step(sim, g, &st);
        if (!s) {
            makespan[k] = st.makespan;
            if (sum) stats_add(sum, &st);
        }
    }
    if (!s && hash) {
        uint64_t h = HY_FNV1A_INIT;
        for (int i = 0; i < sc.nobj; i++) h = hash_doubles(h, sc.x[i], 6 * (size_t)sc.n[i]);
        *hash = h;
    }
    hy_rt_sim_destroy(sim);
    hy_rt_graph_destroy(g);
    hy_iscene_destroy(&sc);
    free(args);
    return s;
}

/* ---- real FEM steps on real CPU PUs */

typedef struct real_obj {
    hy_fem_model* model;
    hy_pool* pool;
    double *x, *v;
    int32_t nv;
    hy_status status;
} real_obj;

static void fem_step_fn(void* const* b, void* arg) {
    real_obj* o = arg;
    const double grav[3] = {0, -9.81, 0};
    double* x = b[0];
    double* v = b[1];
    hy_status s = hy_fem_solve(o->model, o->pool, x, v, 0.01, grav, NULL, HY_FEM_CG_ITERATIONS, 0.0, x, v, NULL);
    if (s && !o->status) o->status = s;
}

static const hy_rt_kind k_fem_step = {"fem-step", 2, {HY_RT_RW, HY_RT_RW}, fem_step_fn, NULL, 0};

hy_status hy_real_fem_run(int nobj, const char* pus, const char* policy, int steps, double* wall, uint64_t* hash,
                          int* steals, hy_rt_trace* trace) {
    if (nobj < 1 || nobj > HY_ISCENE_MAX_OBJ)
        return hy_fail(HY_ERR_INVALID_ARG, "real run: %d objects not in [1, %d]", nobj, HY_ISCENE_MAX_OBJ);
    int threads[HY_RT_MAX_PUS], npu;
    hy_status s = hy_rt_team_parse(pus, &npu, threads, HY_RT_MAX_PUS);
    if (s) return s;
    real_obj* o = calloc((size_t)nobj, sizeof *o);
    hy_rt_graph* g = NULL;
    hy_rt_team* team = NULL;
    int32_t* hx = malloc((size_t)nobj * 2 * sizeof *hx);
    if (!o || !hx) s = hy_fail(HY_ERR_NOMEM, "real run: out of memory");
    const hy_fem_params par = {.young = 1e6, .poisson = 0.35, .density = 1000, .damping_mass = 0.1,
                               .damping_stiffness = 0.01};
    uint64_t seed = 0x5eed0100u;
    for (int i = 0; i < nobj && !s; i++) {
        /* cubes of 8^3 to 10^3 particles */
        int c = 7 + (int)(lcg(&seed) % 3);
        hy_tetmesh* mesh = NULL;
        s = hy_tetmesh_box((double[3]){0, 0, 0}, (double[3]){0.5, 0.5, 0.5}, c, c, c, &mesh);
        if (s) break;
        int32_t nv = mesh->vertex_count, nfix = 0;
        int32_t* fixed = malloc((size_t)nv * sizeof *fixed);
        o[i].nv = nv;
        o[i].x = malloc(3 * (size_t)nv * sizeof *o[i].x);
        o[i].v = calloc(3 * (size_t)nv, sizeof *o[i].v);
        o[i].pool = hy_pool_create(1);
        if (!fixed || !o[i].x || !o[i].v || !o[i].pool) s = hy_fail(HY_ERR_NOMEM, "real run: out of memory");
        if (!s) {
            for (int32_t k = 0; k < nv; k++)
                if (mesh->positions[3 * k + 1] == 0.0) fixed[nfix++] = k;
            memcpy(o[i].x, mesh->positions, 3 * (size_t)nv * sizeof *o[i].x);
            s = hy_fem_model_create(mesh->positions, nv, mesh->tets, mesh->tet_count, &par, fixed, nfix,
                                    &o[i].model);
        }
        free(fixed);
        hy_tetmesh_destroy(mesh);
    }
    if (!s) s = hy_rt_graph_create(&g);
    for (int i = 0; i < nobj && !s; i++) {
        size_t bytes = 3 * (size_t)o[i].nv * sizeof(double);
        s = hy_rt_graph_register(g, o[i].x, bytes, &hx[2 * i]);
        if (!s) s = hy_rt_graph_register(g, o[i].v, bytes, &hx[2 * i + 1]);
    }
    if (!s) s = hy_rt_team_create(npu, threads, policy, 42, &team);
    if (!s && trace) hy_rt_team_set_trace(team, trace);
    *steals = 0;
    for (int k = 0; k < steps && !s; k++) {
        hy_rt_graph_reset(g);
        for (int i = 0; i < nobj && !s; i++)
            s = hy_rt_graph_submit(g, &k_fem_step, i, 1e-6 * o[i].nv, &o[i], &hx[2 * i], NULL);
        hy_rt_step_stats st;
        if (!s) s = hy_rt_team_run(team, g, &st);
        if (!s) {
            wall[k] = st.makespan;
            *steals += st.steals;
        }
        for (int i = 0; i < nobj && !s; i++) s = o[i].status;
    }
    if (!s) {
        uint64_t h = HY_FNV1A_INIT;
        for (int i = 0; i < nobj; i++) {
            h = hash_doubles(h, o[i].x, 3 * (size_t)o[i].nv);
            h = hash_doubles(h, o[i].v, 3 * (size_t)o[i].nv);
        }
        *hash = h;
    }
    hy_rt_team_destroy(team);
    hy_rt_graph_destroy(g);
    for (int i = 0; o && i < nobj; i++) {
        hy_fem_model_destroy(o[i].model);
        hy_pool_destroy(o[i].pool);
        free(o[i].x);
        free(o[i].v);
    }
    free(o);
    free(hx);
    return s;
}
