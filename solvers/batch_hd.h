/* Small objects batched into one launch: the passes of several FEM or
 * mass-spring objects (solvers/fem_hd.h, solvers/massspring_hd.h) as one
 * pass over their elements (springs, vertices) laid one object after the
 * other, so that a GPU runs each CG operation of all of them in one kernel
 * launch (solvers/fem.cu, solvers/massspring.cu: hy_fem_gpu_batch,
 * hy_ms_gpu_batch) rather than one launch per object, whose fixed cost
 * dominates below a few thousand elements.
 *
 * A batch of nb objects numbers its items (elements, springs or vertices)
 * from 0: object b's are start[b] .. start[b + 1] - 1 (start[0] = 0, nb + 1
 * offsets, never decreasing; an object may have none). Item i belongs to
 * the object hy_batch_hd_find gives, at index i - start[b] there. Vectors
 * over the batch's vertices (x0, v0, p, y, the right-hand side) are the
 * objects' own vectors one after the other: object b's at 3 v_start[b].
 * Each item runs the per-object function on that object's model and its
 * slice, so every output has the bits of the object's own pass (the tests
 * check it against the CPU's, solvers/fem.c and massspring.c).
 *
 * HY_HD: compiled for the host and the device without contraction. */
#ifndef HY_SOLVERS_BATCH_HD_H
#define HY_SOLVERS_BATCH_HD_H

#include <stddef.h>
#include <stdint.h>

#include "core/hd.h"
#include "solvers/cg_hd.h"
#include "solvers/fem_hd.h"
#include "solvers/massspring_hd.h"

/* Objects with fewer elements (FEM) or springs (mass-spring) than this go
 * into a batch; a larger one fills a GPU's launch on its own. */
#define HY_BATCH_MAX_ITEMS 4096

/* The object b that item i (0 <= i < start[nb]) belongs to: the last b with
 * start[b] <= i, which skips the objects that have no items. */
HY_HD int32_t hy_batch_hd_find(const int64_t* start, int32_t nb, int64_t i) { return hy_cg_hd_find(start, nb, i); }

/* ---- FEM (m[b]: object b's model, hy_fem_view; its scratch rgrad, efor
 * and pinv are written) */

/* Element i: the rotation pass at x0 + vscale v0 (hy_fem_hd_rotate). */
HY_HD void hy_fem_hd_batch_rotate(const hy_fem_hd_model* m, const int64_t* e_start, const int64_t* v_start,
                                  int32_t nb, int64_t i, const double* x0, const double* v0, double vscale) {
    int32_t b = hy_batch_hd_find(e_start, nb, i);
    const hy_fem_hd_model* o = &m[b];
    int64_t e = i - e_start[b];
    hy_fem_hd_rotate(o->tet + 4 * e, o->grad + 12 * e, o->vol[e], o->mu, o->lambda, o->rest, x0 + 3 * v_start[b],
                     v0 + 3 * v_start[b], vscale, o->rgrad + hy_fem_hd_quad(e, 0), 4, o->efor + 12 * e);
}

/* Vertex i: the right-hand side (3 at rhs + 3 i) and the inverse diagonal
 * block (into its object's pinv) of the prepared step (hy_fem_hd_rhs_vertex,
 * no external forces, no extra blocks). */
HY_HD void hy_fem_hd_batch_rhs_vertex(const hy_fem_hd_model* m, const int64_t* v_start, int32_t nb, int64_t i,
                                      double dt, const double g[3], const double* v0, double* rhs) {
    int32_t b = hy_batch_hd_find(v_start, nb, i);
    const hy_fem_hd_model* o = &m[b];
    int32_t v = (int32_t)(i - v_start[b]);
    hy_fem_hd_rhs_vertex(o, v, dt, g, v0 + 3 * v_start[b], NULL, NULL, rhs + 3 * i, o->pinv + 9 * (int64_t)v);
}

/* Element i of the product: its corner forces into its object's efor. */
HY_HD void hy_fem_hd_batch_apply_element(const hy_fem_hd_model* m, const int64_t* e_start, const int64_t* v_start,
                                         int32_t nb, int64_t i, const double* p) {
    int32_t b = hy_batch_hd_find(e_start, nb, i);
    const hy_fem_hd_model* o = &m[b];
    int64_t e = i - e_start[b];
    hy_fem_hd_apply_element(o->tet + 4 * e, o->rgrad + hy_fem_hd_quad(e, 0), 4, o->vol[e], o->mu, o->lambda,
                            o->fixed, p + 3 * v_start[b], o->efor + 12 * e);
}

/* Vertex i of the product: its row of y = A p. */
HY_HD void hy_fem_hd_batch_matvec_vertex(const hy_fem_hd_model* m, const int64_t* v_start, int32_t nb, int64_t i,
                                         const double* p, double* y) {
    int32_t b = hy_batch_hd_find(v_start, nb, i);
    const hy_fem_hd_model* o = &m[b];
    int32_t v = (int32_t)(i - v_start[b]);
    double k[3] = {0.0, 0.0, 0.0};
    if (!o->fixed[v]) hy_fem_hd_gather(o->inc_start, o->inc, o->efor, v, k);
    hy_fem_hd_matvec_vertex(o->fixed[v], o->mass[v], o->diag_scale, o->k_scale, k, p + 3 * i, y + 3 * i);
}

/* ---- mass-spring (m[b]: object b's model, hy_ms_view; its coef and
 * sforce are written) */

/* Spring i: the spring pass at (x0, v0), step dt (hy_ms_hd_spring). */
HY_HD void hy_ms_hd_batch_spring(const hy_ms_hd_model* m, const int64_t* s_start, const int64_t* v_start, int32_t nb,
                                 int64_t i, const double* x0, const double* v0, double dt) {
    int32_t b = hy_batch_hd_find(s_start, nb, i);
    const hy_ms_hd_model* o = &m[b];
    int64_t s = i - s_start[b];
    hy_ms_hd_spring(o->spring[2 * s], o->spring[2 * s + 1], o->k, o->c, o->rest_len[s], x0 + 3 * v_start[b],
                    v0 + 3 * v_start[b], dt, o->coef + 5 * s, o->sforce + 3 * s);
}

/* Vertex i of the product: its row of y = A p. */
HY_HD void hy_ms_hd_batch_matvec_vertex(const hy_ms_hd_model* m, const int64_t* v_start, int32_t nb, int64_t i,
                                        const double* p, double* y) {
    int32_t b = hy_batch_hd_find(v_start, nb, i);
    hy_ms_hd_matvec_vertex(&m[b], (int32_t)(i - v_start[b]), p + 3 * v_start[b], y + 3 * i);
}

#endif
