/* Closest points of two primitives at one instant, as HY_HD code: the
 * response (collision/response.c) builds its contact frames from them and
 * the exact test (collision/ccd_query.h) uses them to settle pairs already
 * within the contact distance at the start of a step. Both results are
 * points of the primitives (weights in [0, 1] that sum to one), so the
 * distance between them never understates the true distance by more than
 * rounding. */
#ifndef HY_COLLISION_CLOSEST_H
#define HY_COLLISION_CLOSEST_H

#include "core/hd.h"

HY_HD double hy_clamp01(double x) { return x < 0.0 ? 0.0 : (x > 1.0 ? 1.0 : x); }

/* Barycentric weights of the point of triangle abc closest to p. */
HY_HD void hy_closest_on_triangle(hy_v3 p, hy_v3 a, hy_v3 b, hy_v3 c, double* wa, double* wb, double* wc) {
    hy_v3 ab = v3_sub(b, a), ac = v3_sub(c, a), ap = v3_sub(p, a);
    double d1 = v3_dot(ab, ap), d2 = v3_dot(ac, ap);
    if (d1 <= 0 && d2 <= 0) { *wa = 1; *wb = 0; *wc = 0; return; }
    hy_v3 bp = v3_sub(p, b);
    double d3 = v3_dot(ab, bp), d4 = v3_dot(ac, bp);
    if (d3 >= 0 && d4 <= d3) { *wa = 0; *wb = 1; *wc = 0; return; }
    double vc = d1 * d4 - d3 * d2;
    if (vc <= 0 && d1 >= 0 && d3 <= 0) {
        double v = d1 / (d1 - d3);
        *wa = 1 - v; *wb = v; *wc = 0;
        return;
    }
    hy_v3 cp = v3_sub(p, c);
    double d5 = v3_dot(ab, cp), d6 = v3_dot(ac, cp);
    if (d6 >= 0 && d5 <= d6) { *wa = 0; *wb = 0; *wc = 1; return; }
    double vb = d5 * d2 - d1 * d6;
    if (vb <= 0 && d2 >= 0 && d6 <= 0) {
        double w = d2 / (d2 - d6);
        *wa = 1 - w; *wb = 0; *wc = w;
        return;
    }
    double va = d3 * d6 - d5 * d4;
    if (va <= 0 && (d4 - d3) >= 0 && (d5 - d6) >= 0) {
        double w = (d4 - d3) / ((d4 - d3) + (d5 - d6));
        *wa = 0; *wb = 1 - w; *wc = w;
        return;
    }
    double den = 1.0 / (va + vb + vc);
    double v = vb * den, w = vc * den;
    *wa = 1 - v - w; *wb = v; *wc = w;
}

/* Parameters s, u of the closest points of segments p0p1 and q0q1. */
HY_HD void hy_closest_segments(hy_v3 p0, hy_v3 p1, hy_v3 q0, hy_v3 q1, double* s, double* u) {
    hy_v3 d1 = v3_sub(p1, p0), d2 = v3_sub(q1, q0), r = v3_sub(p0, q0);
    double a = v3_dot(d1, d1), e = v3_dot(d2, d2), f = v3_dot(d2, r);
    double c = v3_dot(d1, r), b = v3_dot(d1, d2), den = a * e - b * b;
    double ss = 0.0, uu;
    if (a <= 1e-300 && e <= 1e-300) { *s = 0; *u = 0; return; }
    if (a <= 1e-300) { *s = 0; *u = hy_clamp01(f / e); return; }
    if (e <= 1e-300) { *u = 0; *s = hy_clamp01(-c / a); return; }
    if (den > 1e-14 * a * e) ss = hy_clamp01((b * f - c * e) / den);
    uu = (b * ss + f) / e;
    if (uu < 0) { uu = 0; ss = hy_clamp01(-c / a); }
    else if (uu > 1) { uu = 1; ss = hy_clamp01((b - c) / a); }
    *s = ss;
    *u = uu;
}

/* Separation (side A minus side B) between the closest points of a
 * vertex-face pair (q[0] against triangle q[1..3]) or an edge-edge pair
 * (q[0]q[1] against q[2]q[3]). */
HY_HD hy_v3 hy_closest_separation(const hy_v3 q[4], int is_vf) {
    if (is_vf) {
        double wa, wb, wc;
        hy_closest_on_triangle(q[0], q[1], q[2], q[3], &wa, &wb, &wc);
        return v3_sub(q[0], v3_add(v3_add(v3_scale(q[1], wa), v3_scale(q[2], wb)), v3_scale(q[3], wc)));
    }
    double s, u;
    hy_closest_segments(q[0], q[1], q[2], q[3], &s, &u);
    return v3_sub(v3_lerp(q[0], q[1], s), v3_lerp(q[2], q[3], u));
}

#endif
