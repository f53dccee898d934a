/* Cheap conservative culls run on a candidate feature pair before the exact
 * CCD test (collision/ccd.h). Each answers 0 only when the pair provably
 * cannot collide during the step; 1 means "run the exact test".
 *
 * Both take the four points of the pair in ccd.h order (vertex-face: p, a,
 * b, c; edge-edge: a, b, c, d) at t=0 (x0) and t=1 (x1), moving linearly. */
#ifndef HY_COLLISION_FILTER_H
#define HY_COLLISION_FILTER_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct hy_feature_pair;

/* Swept boxes of the two features (VF: the vertex against the triangle; EE:
 * edge against edge), apart by more than min_distance on some axis. The
 * traversal already applies it with the BVH thickness; it is here for
 * callers that have pairs from elsewhere. */
int hy_filter_box(int is_vf, const double* const x0[4], const double* const x1[4], double min_distance);

/* Coplanarity (the "deforming non-penetration" filter of Tang et al. 2010):
 * a vertex can only touch a triangle, and an edge an edge, at a time when
 * all four points are coplanar, i.e. when the volume
 * V(t) = (q1 - q0) x (q2 - q0) . (q3 - q0) is zero. V is a cubic in t; its
 * four Bernstein coefficients bound it on [0, 1]. When all four exceed their
 * rounding-error bound with the same sign, V never vanishes and the pair is
 * culled. Only valid for touching contact: with min_distance > 0 it keeps
 * every pair. */
int hy_filter_coplanar(const double* const x0[4], const double* const x1[4], double min_distance);

/* Separating axes over the step: for a direction n, every point of one
 * feature minus every point of the other, projected on n, is a convex
 * combination of the 8 values n . (x_i(t) - y_j(t)) at t = 0 and t = 1 (the
 * motion is linear, and both features are convex hulls of their points), so
 * when these all exceed min_distance |n| (plus rounding) with one sign the
 * features stay apart for the whole step. The directions tried are the
 * face normal / edge cross product at both ends, the in-plane normals of
 * the triangle's edges (VF) or of each edge in the edges' common plane and
 * the midpoint offset normal to the first edge (EE) — which separate a flat
 * sheet's neighbours once a contact distance makes them candidates — the
 * cross products of the relative motion with the edges (which make the test exact for a vertex
 * or edge translating against a fixed triangle or edge) and the coordinate
 * axes (a swept-box test that, unlike separate boxes, compares positions at
 * the same time). Any direction is valid; only the rounding of the dot
 * products is bounded. */
int hy_filter_sat(int is_vf, const double* const x0[4], const double* const x1[4], double min_distance);
/* The same answer, trying first the direction group that culled the last
 * pair (*hint keeps it: start it at 0 and pass it along a run of pairs in
 * traversal order; collision/filter_sat.h): cheaper where one group does
 * the culling for long runs (in-plane normals in a sheet, relative motion
 * between passing bodies). */
int hy_filter_sat_hint(int is_vf, const double* const x0[4], const double* const x1[4], double min_distance,
                       int* hint);

/* The separating axes over parts of the step, where the whole step's
 * (hy_filter_sat) cannot separate features that pass close and become
 * coplanar once: the step is cut in HY_FILTER_SLAB_PARTS equal parts; a
 * part where the coplanarity filter's volume cubic keeps one sign beyond
 * its rounding bound holds no contact (at distance 0 features touch only
 * when coplanar), and every other part must be separated by the
 * separating axes of the motion over it (hy_ccd_slab_apart, the exact
 * test's own slab test). Returns 0 when every part is clear, else 1 (also
 * at min_distance > 0, where contacts need no coplanarity, and outside the
 * range the rounding argument covers). */
#define HY_FILTER_SLAB_PARTS 8
#define HY_FILTER_SLAB_WIDTH (1.0 / HY_FILTER_SLAB_PARTS)
int hy_filter_slabs(int is_vf, const double* const x0[4], const double* const x1[4], double min_distance);
/* The table it plans with: coefficient i of V on eighth j of the step is
 * sum_k T[j][i][k] c_k / 512, c_k its coefficients on the whole step
 * (collision/filter.c; the batch filters' lanes use it too). */
extern const double hy_filter_slab_T[HY_FILTER_SLAB_PARTS][4][4];

/* Doubles per vertex in the packed positions the batch filters read: its
 * point at the start of the step, a zero, its point at the end, a zero
 * (one 64-byte line, two aligned four-double loads). */
#define HY_FILTER_PACK 8
/* Packs vertices [begin, end) of x0 and x1 (3 doubles per vertex) into xx
 * (HY_FILTER_PACK doubles per vertex, from xx + HY_FILTER_PACK begin; xx
 * 32-byte aligned). Returns 1 when every coordinate packed is finite and at
 * most 2^200 in magnitude (the range hy_filter_pairs's lanes take without a
 * check of their own), else 0. */
int hy_filter_pack(const double* x0, const double* x1, int64_t begin, int64_t end, double* xx);

/* Both filters over a run of candidates (collision/traverse.h), the points
 * of vertex v packed at xx + HY_FILTER_PACK v (hy_filter_pack; in_range:
 * what it returned for every vertex, or 0): keep[i] = 1 when pair i passes
 * hy_filter_coplanar, hy_filter_sat and hy_filter_slabs (needs the exact
 * test), else 0. The same answers as those three pair by pair; on x86-64 CPUs with AVX2 four
 * pairs at a time (collision/filter_pairs.c). */
void hy_filter_pairs(const struct hy_feature_pair* pairs, int64_t n, const double* xx, int in_range,
                     double min_distance, uint8_t* keep);
/* Whether hy_filter_pairs may use its AVX2 lanes (1, where the CPU has
 * them: the default) or must run pair by pair (0), for tests and
 * benchmarks that compare the two; returns the previous setting (on < 0:
 * only that). */
int hy_filter_pairs_simd(int on);

#ifdef __cplusplus
}
#endif

#endif
