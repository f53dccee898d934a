/* The scheduling LP: a dense revised simplex made for its shape, GLPK as the
 * reference, and deterministic rounding to integer job counts. */
#include "sched/lp.h"

#include <math.h>
#include <string.h>

#if defined(__has_include)
#if __has_include(<glpk.h>)
#include <glpk.h>
#define HY_HAVE_GLPK 1
#endif
#endif

#define MAX_ROWS (HY_SCHED_MAX_RESOURCES + HY_SCHED_MAX_TYPES)
#define MAX_COLS (HY_SCHED_MAX_RESOURCES * HY_SCHED_MAX_TYPES + 1 + HY_SCHED_MAX_RESOURCES)

/* Tolerances on the normalised LP (every time divided by `scale`, so the
 * data are O(1)). A reduced cost above -DJ_TOL counts as optimal; a pivot
 * element must exceed PIVOT_TOL. */
#define DJ_TOL 1e-11
#define PIVOT_TOL 1e-9

/* The LP in normalised form, shared by both solvers.
 * Columns: y for each allowed (i, t) pair, then L, then one slack per
 * resource row. Rows: R resource rows (Σ w y − L + s = −b), then one row per
 * active type (Σ_i y = 1). */
typedef struct form {
    int R, T;  /* resources, active types */
    int ny;    /* y columns */
    int m, n;  /* rows, columns */
    int type_of[HY_SCHED_MAX_TYPES]; /* active type t -> problem type j */
    int yi[MAX_COLS], yt[MAX_COLS];  /* y column -> (resource, active type) */
    double w[MAX_COLS];              /* y column -> cost(i, j)·n_j / scale */
    double b[HY_SCHED_MAX_RESOURCES]; /* (busy_i + Σ allowed setups) / scale */
    double scale;
} form;

static hy_lp_result build(const hy_sched_problem* p, const hy_sched_lp* lp, form* f) {
    const hy_sched_model* M = p->model;
    int R = M->resources, J = 2 * R;
    f->R = R;
    f->T = 0;
    f->ny = 0;
    double scale = 0;
    for (int i = 0; i < R; i++) {
        f->b[i] = p->busy[i];
        if (p->busy[i] > scale) scale = p->busy[i];
    }
    for (int j = 0; j < J; j++) {
        if (p->jobs[j] <= 0) continue;
        int t = f->T++, any = 0;
        f->type_of[t] = j;
        for (int i = 0; i < R; i++) {
            if (!lp->allowed[i][j]) continue;
            any = 1;
            if (lp->allowed[i][j] == 1) f->b[i] += hy_sched_setup(p, i, j);
            double w = M->cost[i][j] * (double)p->jobs[j];
            if (w > scale) scale = w;
            f->yi[f->ny] = i;
            f->yt[f->ny] = t;
            f->w[f->ny] = w;
            f->ny++;
        }
        if (!any) return HY_LP_INFEASIBLE;
    }
    for (int i = 0; i < R; i++)
        if (f->b[i] > scale) scale = f->b[i];
    if (!(scale > 0)) scale = 1.0;
    f->scale = scale;
    for (int k = 0; k < f->ny; k++) f->w[k] /= scale;
    for (int i = 0; i < R; i++) f->b[i] /= scale;
    f->m = R + f->T;
    f->n = f->ny + 1 + R;
    return HY_LP_OPTIMAL;
}

/* Write the solution of the normalised LP back in jobs and seconds. */
static void unpack(const hy_sched_problem* p, const form* f, const double* y, double L, hy_sched_lp* lp) {
    for (int i = 0; i < f->R; i++) memset(lp->x[i], 0, sizeof(double) * (size_t)(2 * f->R));
    for (int k = 0; k < f->ny; k++) {
        int j = f->type_of[f->yt[k]];
        double v = y[k] < 0 ? 0 : y[k] > 1 ? 1 : y[k];
        lp->x[f->yi[k]][j] = v * (double)p->jobs[j];
    }
    lp->makespan = L * f->scale;
}

/* ---- dense revised simplex
 * B^-1 is kept explicitly (m <= 96) and updated by one Gauss-Jordan step per
 * pivot, O(m^2); pricing is O(n) because every column has at most two
 * nonzeros (a y column: w in its resource row, 1 in its type row). This beat
 * a full tableau (O(m·n) per pivot) by about 3x at R = 6. */

typedef struct simplex {
    const form* f;
    int m;
    double* binv;  /* m x m, row-major, stride m */
    double xb[MAX_ROWS];
    int basis[MAX_ROWS];   /* row position -> column */
    int where[MAX_COLS];   /* column -> row position, -1 when nonbasic */
} simplex;

static inline int col_L(const form* f) { return f->ny; }
static inline int col_s(const form* f, int i) { return f->ny + 1 + i; }

/* alpha = B^-1 a_k */
static void ftran(const simplex* s, int k, double* alpha) {
    const form* f = s->f;
    int m = s->m, R = f->R;
    const double* B = s->binv;
    if (k < f->ny) {
        int i = f->yi[k], r2 = R + f->yt[k];
        double w = f->w[k];
        for (int r = 0; r < m; r++) alpha[r] = w * B[r * m + i] + B[r * m + r2];
    } else if (k == col_L(f)) {
        for (int r = 0; r < m; r++) {
            double acc = 0;
            for (int i = 0; i < R; i++) acc -= B[r * m + i];
            alpha[r] = acc;
        }
    } else {
        int i = k - f->ny - 1;
        for (int r = 0; r < m; r++) alpha[r] = B[r * m + i];
    }
}

/* Crash basis: every type on one resource (greedy: heaviest type first, to
 * the resource that finishes it first), L in the row of the resource that
 * finishes last, slacks elsewhere. It is feasible by construction and B^-1
 * has a closed form, so there is no phase 1. */
static void crash(simplex* s) {
    const form* f = s->f;
    int m = s->m, R = f->R, T = f->T;
    double load[HY_SCHED_MAX_RESOURCES];
    int chosen[HY_SCHED_MAX_TYPES];
    double heavy[HY_SCHED_MAX_TYPES];
    int order[HY_SCHED_MAX_TYPES];
    for (int i = 0; i < R; i++) load[i] = f->b[i];
    for (int t = 0; t < T; t++) {
        heavy[t] = 0;
        chosen[t] = -1;
        order[t] = t;
    }
    for (int k = 0; k < f->ny; k++)
        if (f->w[k] > heavy[f->yt[k]]) heavy[f->yt[k]] = f->w[k];
    /* insertion sort, heaviest first, ties by index: deterministic */
    for (int a = 1; a < T; a++) {
        int v = order[a], b = a;
        while (b > 0 && heavy[order[b - 1]] < heavy[v]) {
            order[b] = order[b - 1];
            b--;
        }
        order[b] = v;
    }
    /* y columns of one type are contiguous; find each type's first column */
    int first[HY_SCHED_MAX_TYPES + 1];
    for (int t = 0, k = 0; t <= T; t++) {
        while (k < f->ny && f->yt[k] < t) k++;
        first[t] = k;
    }
    for (int a = 0; a < T; a++) {
        int t = order[a], best = -1;
        double bt = 0;
        for (int k = first[t]; k < first[t + 1]; k++) {
            double fin = load[f->yi[k]] + f->w[k];
            if (best < 0 || fin < bt) {
                best = k;
                bt = fin;
            }
        }
        chosen[t] = best;
        load[f->yi[best]] = bt;
    }
    int istar = 0;
    for (int i = 1; i < R; i++)
        if (load[i] > load[istar]) istar = i;

    for (int k = 0; k < f->n; k++) s->where[k] = -1;
    double* B = s->binv;
    memset(B, 0, sizeof(double) * (size_t)m * (size_t)m);
    /* type rows: z_{R+t} = a_{R+t} */
    for (int t = 0; t < T; t++) {
        int r = R + t;
        B[r * m + r] = 1.0;
        s->basis[r] = chosen[t];
        s->where[chosen[t]] = r;
    }
    /* row i*: z_L = Σ_{t on i*} w a_{R+t} - a_{i*} */
    B[istar * m + istar] = -1.0;
    for (int t = 0; t < T; t++)
        if (f->yi[chosen[t]] == istar) B[istar * m + R + t] = f->w[chosen[t]];
    s->basis[istar] = col_L(f);
    s->where[col_L(f)] = istar;
    /* rows i != i*: z_si = a_i - Σ_{t on i} w a_{R+t} + z_L */
    for (int i = 0; i < R; i++) {
        if (i == istar) continue;
        double* row = B + i * m;
        for (int c = 0; c < m; c++) row[c] = B[istar * m + c];
        row[i] += 1.0;
        for (int t = 0; t < T; t++)
            if (f->yi[chosen[t]] == i) row[R + t] -= f->w[chosen[t]];
        s->basis[i] = col_s(f, i);
        s->where[col_s(f, i)] = i;
    }
    /* x_B = B^-1 rhs; rhs = (-b, 1) */
    for (int r = 0; r < m; r++) {
        const double* row = B + r * m;
        double acc = 0;
        for (int i = 0; i < R; i++) acc -= row[i] * f->b[i];
        for (int t = 0; t < T; t++) acc += row[R + t];
        s->xb[r] = acc < 0 && acc > -1e-12 ? 0 : acc;
    }
}

/* Entering column by Dantzig pricing (the most negative reduced cost, the
 * first on ties) or, under Bland's rule, the first with a negative one;
 * -1 when none (optimal). Columns in order: y, L, slacks. With c = e_L the
 * duals pi are B^-1's row at L's position; a y column's reduced cost is
 * -(pi_i·w + pi_{R+t}), L's 1 + Σ pi_i, a slack's -pi_i. */
static int price(const simplex* s, const double* pi, int bland) {
    const form* f = s->f;
    const int* where = s->where;
    int R = f->R, ny = f->ny, enter = -1;
    double best = -DJ_TOL;
    for (int k = 0; k < ny; k++) {
        if (where[k] >= 0) continue;
        double d = -(pi[f->yi[k]] * f->w[k] + pi[R + f->yt[k]]);
        if (d < best) {
            best = d;
            enter = k;
            if (bland) return enter;
        }
    }
    if (where[ny] < 0) {
        double d = 1.0;
        for (int i = 0; i < R; i++) d += pi[i];
        if (d < best) {
            best = d;
            enter = ny;
            if (bland) return enter;
        }
    }
    for (int i = 0; i < R; i++) {
        if (where[ny + 1 + i] >= 0) continue;
        double d = -pi[i];
        if (d < best) {
            best = d;
            enter = ny + 1 + i;
            if (bland) return enter;
        }
    }
    return enter;
}

/* One Gauss-Jordan step on B^-1 (stride m): the pivot row scaled by 1/ap,
 * then eliminated from every other row where alpha is nonzero. */
static void eliminate(double* restrict binv, int m, int leave, const double* restrict alpha) {
    double* restrict prow = binv + leave * m;
    double inv = 1.0 / alpha[leave];
    for (int c = 0; c < m; c++) prow[c] *= inv;
    for (int r = 0; r < m; r++) {
        if (r == leave || alpha[r] == 0.0) continue;
        double* restrict row = binv + r * m;
        double a = alpha[r];
        for (int c = 0; c < m; c++) row[c] -= a * prow[c];
    }
}

static hy_lp_result simplex_solve(const form* f, double* y, double* L, int* pivots) {
    simplex s;
    double binv[MAX_ROWS * MAX_ROWS];
    double alpha[MAX_ROWS];
    static const double no_duals[MAX_ROWS]; /* L nonbasic: every dual 0 */
    s.f = f;
    s.m = f->m;
    s.binv = binv;
    int m = f->m, R = f->R, ny = f->ny;
    crash(&s);

    int limit = 50 * (f->m + f->n) + 100, degenerate = 0, bland = 0, it = 0;
    for (;; it++) {
        if (it >= limit) return HY_LP_FAILED;
        int pl = s.where[col_L(f)];
        int enter = price(&s, pl >= 0 ? binv + pl * m : no_duals, bland);
        if (enter < 0) break;
        ftran(&s, enter, alpha);
        /* ratio test; ties: largest pivot (stability) or, under Bland, the
         * smallest basic column index */
        int leave = -1;
        double theta = 0;
        for (int r = 0; r < m; r++) {
            if (alpha[r] <= PIVOT_TOL) continue;
            double q = s.xb[r] / alpha[r];
            if (q < 0) q = 0;
            if (leave < 0 || q < theta - 1e-13) {
                leave = r;
                theta = q;
            } else if (q <= theta + 1e-13) {
                if (bland ? s.basis[r] < s.basis[leave] : alpha[r] > alpha[leave]) {
                    leave = r;
                    if (q < theta) theta = q;
                }
            }
        }
        if (leave < 0) return HY_LP_FAILED; /* unbounded: impossible for this LP, so numerical trouble */
        /* anti-cycling: Bland's rule after a run of degenerate pivots, back to
         * Dantzig after the first step that moves */
        if (theta <= 1e-14) {
            if (++degenerate > m) bland = 1;
        } else {
            degenerate = 0;
            bland = 0;
        }
        /* update x_B and B^-1 */
        for (int r = 0; r < m; r++) {
            if (r == leave) continue;
            s.xb[r] -= theta * alpha[r];
            if (s.xb[r] < 0 && s.xb[r] > -1e-12) s.xb[r] = 0;
        }
        s.xb[leave] = theta;
        eliminate(binv, m, leave, alpha);
        s.where[s.basis[leave]] = -1;
        s.basis[leave] = enter;
        s.where[enter] = leave;
    }
    *pivots = it;
    /* recompute x_B from B^-1 once, so the answer carries no accumulated
     * update error, then read y and L */
    for (int r = 0; r < m; r++) {
        const double* row = binv + r * m;
        double acc = 0;
        for (int i = 0; i < R; i++) acc -= row[i] * f->b[i];
        for (int t = 0; t < f->T; t++) acc += row[R + t];
        s.xb[r] = acc;
    }
    for (int k = 0; k < ny; k++) y[k] = s.where[k] >= 0 ? s.xb[s.where[k]] : 0.0;
    int pl = s.where[col_L(f)];
    double Lv = pl >= 0 ? s.xb[pl] : 0.0;
    /* L is the largest finishing time; recomputing it from y removes the last
     * round-off and any negative slack that survived (each resource's sum in
     * column order, as the rows read) */
    double fin[HY_SCHED_MAX_RESOURCES];
    for (int i = 0; i < R; i++) fin[i] = f->b[i];
    for (int k = 0; k < ny; k++) fin[f->yi[k]] += f->w[k] * (y[k] > 0 ? y[k] : 0);
    for (int i = 0; i < R; i++)
        if (fin[i] > Lv) Lv = fin[i];
    *L = Lv;
    return HY_LP_OPTIMAL;
}

/* ---- one active type: water-filling
 * With a single type the LP is  min L  s.t.  b_i + w_i·y_i <= L for the
 * allowed i, b_i <= L for the rest, Σ y_i = 1: a water level, found in
 * O(R log R) with no basis. Two cases are answered here, and both are
 * what the simplex returns: the type fits whole on the allowed resource
 * where it finishes first without raising max_i b_i (the crash basis, then
 * optimal at once), or it cannot fit under max_i b_i at all, where the
 * level above every start is the unique optimum. The remaining case (the
 * type fits below max_i b_i only when split) has many optima; it is left
 * to the simplex so that its vertex stays the one chosen. Returns 0 then. */
static int waterfill_solve(const form* f, double* y, double* L) {
    int R = f->R, ny = f->ny;
    double floor_l = 0;
    for (int i = 0; i < R; i++)
        if (f->b[i] > floor_l) floor_l = f->b[i];
    int first = -1;
    double bt = 0;
    for (int k = 0; k < ny; k++) {
        if (!(f->w[k] > 0)) return 0;
        double fin = f->b[f->yi[k]] + f->w[k];
        if (first < 0 || fin < bt) first = k, bt = fin;
    }
    for (int k = 0; k < ny; k++) y[k] = 0.0;
    if (bt <= floor_l) {
        y[first] = 1.0;
    } else {
        /* capacity under floor_l */
        double cap = 0;
        for (int k = 0; k < ny; k++) {
            double room = floor_l - f->b[f->yi[k]];
            if (room > 0) cap += room / f->w[k];
        }
        if (cap >= 1.0) return 0;
        /* the level over the first columns in start order */
        double a[HY_SCHED_MAX_RESOURCES], a_per_w[HY_SCHED_MAX_RESOURCES], inv_w[HY_SCHED_MAX_RESOURCES];
        int order[HY_SCHED_MAX_RESOURCES];
        for (int k = 0; k < ny; k++) {
            a[k] = f->b[f->yi[k]];
            a_per_w[k] = a[k] / f->w[k];
            inv_w[k] = 1.0 / f->w[k];
            int p = k;
            while (p > 0 && a[order[p - 1]] > a[k]) {
                order[p] = order[p - 1];
                p--;
            }
            order[p] = k;
        }
        int act = 0;
        double lv = hy_water_level(order, ny, a, a_per_w, inv_w, 1.0, &act);
        for (int q = 0; q < act; q++) {
            int k = order[q];
            double v = (lv - a[k]) / f->w[k];
            y[k] = v > 0 ? v : 0.0;
        }
    }
    double Lv = floor_l;
    for (int k = 0; k < ny; k++) {
        double t = f->b[f->yi[k]] + f->w[k] * y[k];
        if (t > Lv) Lv = t;
    }
    *L = Lv;
    return 1;
}

/* ---- GLPK */

int hy_sched_lp_have_glpk(void) {
#ifdef HY_HAVE_GLPK
    return 1;
#else
    return 0;
#endif
}

#ifdef HY_HAVE_GLPK
static hy_lp_result glpk_solve(const form* f, int exact, double* y, double* L) {
    glp_prob* P = glp_create_prob();
    glp_set_obj_dir(P, GLP_MIN);
    int R = f->R, T = f->T;
    glp_add_rows(P, R + T);
    for (int i = 0; i < R; i++) glp_set_row_bnds(P, i + 1, GLP_UP, 0.0, -f->b[i]);
    for (int t = 0; t < T; t++) glp_set_row_bnds(P, R + t + 1, GLP_FX, 1.0, 1.0);
    glp_add_cols(P, f->ny + 1);
    int nz = 2 * f->ny + R;
    int ia[1 + 2 * MAX_COLS], ja[1 + 2 * MAX_COLS];
    double ar[1 + 2 * MAX_COLS];
    int e = 1;
    for (int k = 0; k < f->ny; k++) {
        glp_set_col_bnds(P, k + 1, GLP_LO, 0.0, 0.0);
        ia[e] = f->yi[k] + 1, ja[e] = k + 1, ar[e] = f->w[k], e++;
        ia[e] = R + f->yt[k] + 1, ja[e] = k + 1, ar[e] = 1.0, e++;
    }
    int cl = f->ny + 1;
    glp_set_col_bnds(P, cl, GLP_LO, 0.0, 0.0);
    glp_set_obj_coef(P, cl, 1.0);
    for (int i = 0; i < R; i++) ia[e] = i + 1, ja[e] = cl, ar[e] = -1.0, e++;
    (void)nz;
    glp_load_matrix(P, e - 1, ia, ja, ar);
    glp_smcp parm;
    glp_init_smcp(&parm);
    parm.msg_lev = GLP_MSG_OFF;
    parm.presolve = GLP_OFF;
    int rc = glp_simplex(P, &parm);
    if (rc == 0 && exact) rc = glp_exact(P, &parm);
    hy_lp_result res = HY_LP_FAILED;
    if (rc == 0) {
        int st = glp_get_status(P);
        if (st == GLP_OPT) {
            for (int k = 0; k < f->ny; k++) y[k] = glp_get_col_prim(P, k + 1);
            *L = glp_get_obj_val(P);
            res = HY_LP_OPTIMAL;
        } else if (st == GLP_NOFEAS) {
            res = HY_LP_INFEASIBLE;
        }
    }
    glp_delete_prob(P);
    return res;
}
#endif

/* ---- public */

void hy_sched_lp_allow_all(const hy_sched_problem* p, hy_sched_lp* lp) {
    memset(lp->allowed, 0, sizeof lp->allowed);
    int R = p->model->resources;
    for (int j = 0; j < 2 * R; j++)
        if (p->jobs[j] > 0)
            for (int i = 0; i < R; i++) lp->allowed[i][j] = 1;
}

hy_lp_result hy_sched_lp_solve(const hy_sched_problem* p, hy_sched_lp* lp, hy_lp_solver solver) {
    form f;
    lp->pivots = 0;
    hy_lp_result res = build(p, lp, &f);
    if (res != HY_LP_OPTIMAL) return res;
    double y[MAX_COLS], L = 0;
    if (solver == HY_LP_SIMPLEX) {
        if (!(f.T == 1 && waterfill_solve(&f, y, &L))) res = simplex_solve(&f, y, &L, &lp->pivots);
    } else {
#ifdef HY_HAVE_GLPK
        res = glpk_solve(&f, solver == HY_LP_GLPK_EXACT, y, &L);
#else
        res = HY_LP_FAILED;
#endif
    }
    if (res == HY_LP_OPTIMAL) unpack(p, &f, y, L, lp);
    return res;
}

void hy_sched_lp_round(const hy_sched_problem* p, const hy_sched_lp* lp, hy_sched_assignment* a) {
    int R = p->model->resources;
    for (int i = 0; i < R; i++) memset(a->count[i], 0, sizeof(int64_t) * (size_t)(2 * R));
    for (int j = 0; j < 2 * R; j++) {
        int64_t n = p->jobs[j];
        if (n <= 0) continue;
        double frac[HY_SCHED_MAX_RESOURCES];
        int64_t sum = 0;
        for (int i = 0; i < R; i++) {
            double x = lp->x[i][j];
            if (!(x > 0)) x = 0;
            if (x > (double)n) x = (double)n;
            double r = floor(x + 0.5);
            if (fabs(x - r) <= 1e-6 * (1.0 + x)) x = r; /* snap round-off */
            double fl = floor(x);
            a->count[i][j] = (int64_t)fl;
            frac[i] = x - fl;
            sum += a->count[i][j];
        }
        /* too many (round-off pushed the sum past n): take from the smallest
         * fractional parts that hold jobs */
        while (sum > n) {
            int pick = -1;
            for (int i = 0; i < R; i++)
                if (a->count[i][j] > 0 && (pick < 0 || frac[i] < frac[pick])) pick = i;
            a->count[pick][j]--;
            frac[pick] = 1.0;
            sum--;
        }
        /* too few: one each to the largest fractional parts, ties to the
         * lower index; a pair with no fractional part gets one only when
         * nothing else is left (never for an LP solution that sums to n) */
        while (sum < n) {
            int pick = -1;
            for (int i = 0; i < R; i++) {
                if (!lp->allowed[i][j]) continue;
                if (pick < 0 || frac[i] > frac[pick]) pick = i;
            }
            if (pick < 0) pick = 0; /* nothing allowed: keep the every-job-once promise */
            a->count[pick][j]++;
            frac[pick] = frac[pick] > 0 ? -1.0 + frac[pick] * 1e-3 : frac[pick] - 1.0;
            sum++;
        }
    }
    a->makespan = hy_sched_makespan(p, a);
}
