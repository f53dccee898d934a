/* BVH primitive boxes (per vertex and per triangle, swept over the step and
 * rounded outward) and the triangles' normal cones for self-collision
 * culling. */
#include "collision/bvh.h"

#include <float.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "collision/bvh_internal.h"

/* ---- primitive boxes */


/* ---- normal cones */

/* Cones are kept as the cosine and sine of their half-angle, and merged
 * with the angle-sum and half-angle identities (square roots, no acos or
 * sin). A cosine near 1 gives its angle only to about sqrt(eps) (as acos
 * would): every angle made from a dot product, and every merged cone, is
 * widened by this many radians. */
#define CONE_SLACK 1e-7



static inline double absmax3(const double a[3]) {
    double m = fabs(a[0]) > fabs(a[1]) ? fabs(a[0]) : fabs(a[1]);
    return m > fabs(a[2]) ? m : fabs(a[2]);
}

/* cos and sin of the angle whose cosine is d (clamped to [-1, 1]). */
static inline void cos_sin(double d, double* c, double* s) {
    d = d > 1 ? 1 : d < -1 ? -1 : d;
    *c = d;
    *s = sqrt(1.0 - d * d);
}

/* cos and sin of the sum of the angles (ca, sa) and (cb, sb). */
static inline void angle_sum(double ca, double sa, double cb, double sb, double* c, double* s) {
    *c = ca * cb - sa * sb;
    *s = sa * cb + ca * sb;
}

/* Widen the angle (c, s) by delta in [0, 0.1] radians: 1 - delta^2 / 2 is
 * below cos(delta) and delta above sin(delta), so the new cosine is below
 * the true cos(angle + delta) and the sine above (for angles in [0, pi/2]). */
static inline void widen(double* c, double* s, double delta) {
    angle_sum(*c, *s, 1.0 - 0.5 * delta * delta, delta, c, s);
}


static void cone_fail(hy_bvh_cone* c) {
    c->axis[0] = 0;
    c->axis[1] = 0;
    c->axis[2] = 1;
    c->c = -1.0;
    c->s = 0.0;
}

/* The triangle's normal over the step, n(t) = (1-t)^2 c0 + t(1-t) c1 + t^2 c2,
 * lies in the cone spanned by c0, c1, c2. Each coefficient's direction is
 * known to within delta = (rounding of its cross products) / |c|, which pads
 * the angle; near-degenerate triangles (delta large, or c = 0) fail. Only
 * the directions are kept here: leaf_cone bounds all of a leaf's at once
 * (one square root, instead of a cone and a cone_merge per triangle). */
void hy_bvh_triangle_normals(const double* x0, const double* x1, const int32_t* f, hy_bvh_normals* c) {
    double e[2][2][3];
    for (int s = 0; s < 2; s++) {
        const double* x = s ? x1 : x0;
        for (int k = 0; k < 3; k++) {
            e[s][0][k] = x[3 * f[1] + k] - x[3 * f[0] + k];
            e[s][1][k] = x[3 * f[2] + k] - x[3 * f[0] + k];
        }
    }
    double cv[3][3], t1[3], t2[3], scale[3];
    cross3(e[0][0], e[0][1], cv[0]);
    cross3(e[1][0], e[1][1], cv[2]);
    cross3(e[0][0], e[1][1], t1);
    cross3(e[1][0], e[0][1], t2);
    for (int k = 0; k < 3; k++) cv[1][k] = t1[k] + t2[k];
    /* |a| |b| <= 3 |a|_inf |b|_inf: no square roots for the bound */
    double n00 = absmax3(e[0][0]), n01 = absmax3(e[0][1]), n10 = absmax3(e[1][0]), n11 = absmax3(e[1][1]);
    scale[0] = 3.0 * (n00 * n01);
    scale[1] = 3.0 * (n00 * n11 + n10 * n01);
    scale[2] = 3.0 * (n10 * n11);
    c->delta = 0;
    c->g = 0;
    double nc[3];
    for (int i = 0; i < 3; i++) {
        double n = norm3(cv[i]), inv = 1.0 / n;
        nc[i] = n;
        /* Differences and cross products: a few roundings each, relative
         * to the edge lengths; 16 eps is generous (and covers the few eps
         * of scaling by a rounded reciprocal; CONE_SLACK pads far more). */
        double delta = n > 0 ? 16.0 * DBL_EPSILON * scale[i] * inv : INFINITY;
        if (!(delta < 0.05) || !isfinite(n)) {
            c->delta = INFINITY;
            return;
        }
        if (delta > c->delta) c->delta = delta;
        for (int k = 0; k < 3; k++) c->u[i][k] = cv[i][k] * inv;
    }
    /* The altitude bound (hy_bvh_normals.g): the computed |c_i| are within
     * delta of the exact ones (relative), the edge lengths within a few
     * eps; 1e-6 more covers the rest. */
    double l2 = 0;
    for (int s = 0; s < 2; s++) {
        const double* a = e[s][0];
        const double* b = e[s][1];
        double d[3] = {b[0] - a[0], b[1] - a[1], b[2] - a[2]};
        double la = a[0] * a[0] + a[1] * a[1] + a[2] * a[2];
        double lb = b[0] * b[0] + b[1] * b[1] + b[2] * b[2];
        double ld = d[0] * d[0] + d[1] * d[1] + d[2] * d[2];
        double m = la > lb ? la : lb;
        m = m > ld ? m : ld;
        l2 = l2 > m ? l2 : m;
    }
    double area = nc[0] < 0.5 * nc[1] ? nc[0] : 0.5 * nc[1];
    area = (area < nc[2] ? area : nc[2]) * (1.0 - c->delta);
    double g = area / sqrt(l2) * (1.0 - 1e-6);
    c->g = g > 0 && isfinite(g) ? g : 0.0;
}

/* The cone of a leaf (its triangles' normals tn[0..count), in leaf
 * order), and the smallest g among them: around the sum of its triangles'
 * unit coefficient directions, out to the widest of them (the smallest dot
 * product with the axis) plus the largest direction error. A circular cone under
 * 90 degrees is convex, so holding every coefficient direction it holds
 * every normal they span. Near-degenerate triangles (see hy_bvh_triangle_normals)
 * and sums too short to give an axis fail. */
void hy_bvh_leaf_cone(const hy_bvh_normals* tn, int32_t count, hy_bvh_cone* c) {
    double axis[3] = {0, 0, 0}, dmax = 0, g = INFINITY;
    for (int32_t j = 0; j < count; j++) {
        const hy_bvh_normals* t = &tn[j];
        if (t->g < g) g = t->g;
        if (!(t->delta < 0.05)) {
            cone_fail(c);
            c->g = 0;
            return;
        }
        if (t->delta > dmax) dmax = t->delta;
        for (int i = 0; i < 3; i++)
            for (int k = 0; k < 3; k++) axis[k] += t->u[i][k];
    }
    c->g = g;
    double na = norm3(axis);
    if (!(na > 1e-3 * (double)count)) {
        cone_fail(c);
        return;
    }
    for (int k = 0; k < 3; k++) c->axis[k] = axis[k] / na;
    double dmin = INFINITY;
    for (int32_t j = 0; j < count; j++) {
        const hy_bvh_normals* t = &tn[j];
        for (int i = 0; i < 3; i++) {
            double d = t->u[i][0] * c->axis[0] + t->u[i][1] * c->axis[1] + t->u[i][2] * c->axis[2];
            if (!(d >= dmin)) dmin = d; /* NaN wins: the cone fails */
        }
    }
    if (!(dmin > 0)) {
        cone_fail(c); /* 90 degrees or more (or NaN) */
        return;
    }
    cos_sin(dmin, &c->c, &c->s);
    widen(&c->c, &c->s, CONE_SLACK + dmax);
    if (!cone_ok(c)) cone_fail(c);
}

/* The smallest cone around two cones (both axes unit length, angles in
 * [0, pi/2)). With alpha the angle between the axes: one cone holds the
 * other when alpha + its angle is within the other's; else the merged
 * half-angle is gamma = (alpha + a + b) / 2 (cos and sin from the
 * half-angle identities), around a's axis turned toward b's by gamma - a. */
void hy_bvh_cone_merge(const hy_bvh_cone* a, const hy_bvh_cone* b, hy_bvh_cone* r) {
    if (!cone_ok(a) || !cone_ok(b)) {
        cone_fail(r);
        return;
    }
    double ca, sa;
    cos_sin(a->axis[0] * b->axis[0] + a->axis[1] * b->axis[1] + a->axis[2] * b->axis[2], &ca, &sa);
    widen(&ca, &sa, CONE_SLACK);
    if (sa < 0) sa = -sa; /* alpha near pi: widened past it (cos stays near -1) */
    /* cos(alpha + b) >= cos(a): b inside a (cos falls over [0, pi], and
     * past pi the sum exceeds a anyway while cos(a) > 0) */
    double cab, sab, cbb, sbb;
    angle_sum(ca, sa, b->c, b->s, &cab, &sab);
    if (cab >= a->c) {
        *r = *a;
        return;
    }
    angle_sum(ca, sa, a->c, a->s, &cbb, &sbb);
    if (cbb >= b->c) {
        *r = *b;
        return;
    }
    if (sa < 1e-6) {
        /* axes (nearly) parallel: the wider cone grown by alpha */
        const hy_bvh_cone* w = a->c < b->c ? a : b;
        *r = *a;
        angle_sum(w->c, w->s, ca, sa, &r->c, &r->s);
        if (!cone_ok(r)) cone_fail(r);
        return;
    }
    /* S = alpha + a + b: cos and sin by the sum identities (alpha + a is
     * the second test's sum) */
    double cs, ss;
    angle_sum(cbb, sbb, b->c, b->s, &cs, &ss);
    /* gamma = S / 2 < 90 degrees: S in (0, pi), sin S > 0 */
    if (!(ss > 0)) {
        cone_fail(r);
        return;
    }
    double h = 0.5 * (1.0 + cs), g = 0.5 * (1.0 - cs);
    double cg = sqrt(h > 0 ? h : 0), sg = sqrt(g > 0 ? g : 0);
    if (!(cg > CONE_MIN_COS)) {
        cone_fail(r);
        return;
    }
    /* Turn a's axis toward b's by w = gamma - a in their plane:
     * axis = (sin(alpha - w) a + sin(w) b) / sin(alpha). */
    double sw = sg * a->c - cg * a->s, cw = cg * a->c + sg * a->s;
    double caw = (sa * cw - ca * sw) / sa, cbw = sw / sa;
    double ax[3];
    for (int k = 0; k < 3; k++) ax[k] = caw * a->axis[k] + cbw * b->axis[k];
    double n = norm3(ax);
    if (!(n > 0.5)) {
        cone_fail(r);
        return;
    }
    for (int k = 0; k < 3; k++) r->axis[k] = ax[k] / n;
    /* The computed axis is off by a few ulps: widen. */
    r->c = cg;
    r->s = sg;
    widen(&r->c, &r->s, CONE_SLACK);
    if (!cone_ok(r)) cone_fail(r);
}

/* nextafter(x, +-INFINITY), inline: the neighbouring double in the IEEE
 * order is the neighbouring integer of its bits (sign-magnitude). Same
 * results as the library call, which cost a call per bound. */
static inline double next_toward(double x, int up) {
    if (x != x || x == (up ? INFINITY : -INFINITY)) return x;
    if (x == 0.0) return up ? 0x1p-1074 : -0x1p-1074;
    uint64_t u;
    memcpy(&u, &x, sizeof u);
    if ((x > 0) == (up != 0))
        u++;
    else
        u--;
    memcpy(&x, &u, sizeof x);
    return x;
}

void hy_bvh_vertex_boxes_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    box_ctx* c = vctx;
    const double* d = c->b->shift;
    double h = c->half;
    for (int64_t v = begin; v < end; v++) {
        hy_aabb* box = &c->b->vertex_boxes[v];
        hy_mbox* mb = &c->b->vertex_mboxes[v];
        const double* p = c->x0 + 3 * v;
        const double* q = c->x1 ? c->x1 + 3 * v : p;
        for (int k = 0; k < 3; k++) {
            double lo0 = p[k], hi0 = p[k], lo1 = q[k], hi1 = q[k];
            if (d[k] != 0.0) {
                /* x1 - shift is rounded: widen it by an ulp each way. */
                double r = q[k] - d[k];
                lo1 = next_toward(r, 0);
                hi1 = next_toward(r, 1);
            }
            if (h > 0) {
                /* Rounded outward: the box must contain the exact grown one. */
                lo0 = next_toward(lo0 - h, 0);
                hi0 = next_toward(hi0 + h, 1);
                lo1 = next_toward(lo1 - h, 0);
                hi1 = next_toward(hi1 + h, 1);
            }
            box->lo[k] = lo0 < lo1 ? lo0 : lo1;
            box->hi[k] = hi0 > hi1 ? hi0 : hi1;
            if (!c->b->interpolate) {
                /* Both ends the swept box: the interpolated test is then
                 * the plain swept-box overlap. */
                lo0 = lo1 = box->lo[k];
                hi0 = hi1 = box->hi[k];
            }
            mb->lo0[k] = lo0;
            mb->hi0[k] = hi0;
            mb->lo1[k] = lo1;
            mb->hi1[k] = hi1;
        }
        hy_fbox_from(mb, &c->b->vertex_fboxes[v]);
    }
}

void hy_bvh_triangle_boxes_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    box_ctx* c = vctx;
    const hy_aabb* vb = c->b->vertex_boxes;
    for (int64_t t = begin; t < end; t++) {
        const int32_t* f = c->b->triangles + 3 * t;
        hy_aabb* box = &c->b->triangle_boxes[t];
        hy_aabb_union(box, &vb[f[0]], &vb[f[1]]);
        hy_aabb_union(box, box, &vb[f[2]]);
    }
}


void hy_bvh_primitive_boxes(hy_bvh* b, const double* x0, const double* x1, double thickness, hy_pool* pool) {
    b->thickness = thickness > 0 ? thickness : 0.0;
    for (int k = 0; k < 3; k++) b->shift[k] = 0.0;
    if (b->relative && x1) {
        /* Mid-range of the displacements: the shift that makes the largest
         * remaining motion smallest. Only vertices used by triangles count. */
        double lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
        for (int32_t i = 0; i < 3 * b->triangle_count; i++) {
            int32_t v = b->triangles[i];
            for (int k = 0; k < 3; k++) {
                double dk = x1[3 * v + k] - x0[3 * v + k];
                if (dk < lo[k]) lo[k] = dk;
                if (dk > hi[k]) hi[k] = dk;
            }
        }
        for (int k = 0; k < 3; k++) {
            double m = 0.5 * lo[k] + 0.5 * hi[k];
            b->shift[k] = isfinite(m) ? m : 0.0;
        }
    }
    box_ctx c = {b, x0, x1, thickness > 0 ? 0.5 * thickness : 0.0, culling(b)};
    if (pool) {
        hy_pool_for(pool, b->vertex_count, 8192, hy_bvh_vertex_boxes_block, &c);
        hy_pool_for(pool, b->triangle_count, 8192, hy_bvh_triangle_boxes_block, &c);
    } else {
        hy_bvh_vertex_boxes_block(&c, 0, b->vertex_count, 0, 0);
        hy_bvh_triangle_boxes_block(&c, 0, b->triangle_count, 0, 0);
    }
}
