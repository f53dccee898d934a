/* One contact of the response (see response_internal.h): its frame (the
 * features' weights, normal and gap at the start), whether its motion may
 * still cross, and its impulse; and the positions that follow from the
 * velocities. */
#include <math.h>
#include <string.h>

#include "collision/ccd.h"
#include "collision/closest.h"
#include "collision/response_internal.h"

/* ------------------------------------------------------------ geometry */

/* Weights (summing to zero) and the unit normal pointing from side B to
 * side A at the start of the step. Returns 0 if no direction is defined. */
static int contact_frame(const hy_resolver* r, const hy_contact* c, double w[4], hy_v3* n, double* d0) {
    const double *X0 = r->v->X0, *X1 = r->v->X1;
    hy_v3 p[4], q[4];
    for (int k = 0; k < 4; k++) {
        hy_v3 a = v3_load(X0 + 3 * c->v[k]), b = v3_load(X1 + 3 * c->v[k]);
        q[k] = a;
        p[k] = v3_lerp(a, b, c->toi);
    }
    hy_v3 nn;
    if (c->type == HY_CONTACT_VF) {
        double wa, wb, wc;
        hy_closest_on_triangle(p[0], p[1], p[2], p[3], &wa, &wb, &wc);
        w[0] = 1; w[1] = -wa; w[2] = -wb; w[3] = -wc;
        nn = v3_cross(v3_sub(p[2], p[1]), v3_sub(p[3], p[1]));
    } else {
        double s, u;
        hy_closest_segments(p[0], p[1], p[2], p[3], &s, &u);
        w[0] = 1 - s; w[1] = s; w[2] = -(1 - u); w[3] = -u;
        nn = v3_cross(v3_sub(p[1], p[0]), v3_sub(p[3], p[2]));
    }
    /* separation vector at t0 with these weights (side A minus side B) */
    hy_v3 sep0 = v3(0, 0, 0), sept = v3(0, 0, 0);
    for (int k = 0; k < 4; k++) {
        sep0 = v3_mad(sep0, q[k], w[k]);
        sept = v3_mad(sept, p[k], w[k]);
    }
    double len = v3_len(nn);
    if (!(len > 1e-300)) {
        /* parallel edges or a degenerate face: use the separation itself */
        nn = v3_len(sept) > 1e-300 ? sept : sep0;
        len = v3_len(nn);
        if (!(len > 1e-300)) return 0;
    }
    nn = v3_scale(nn, 1.0 / len);
    double scale = 0.0;
    for (int k = 0; k < 4; k++) scale = fmax(scale, fabs(w[k]) * v3_len(v3_sub(q[k], q[0])));
    if (fabs(v3_dot(nn, sep0)) > 1e-9 * scale) {
        if (v3_dot(nn, sep0) < 0) nn = v3_scale(nn, -1.0);
    } else {
        /* the features touch at the start (faces of a broken solid, bodies
         * placed in contact): the separation has no sign. A vertex over the
         * inside of a closed rigid mesh's face is outside that mesh, so the
         * face normal (outwards) holds; otherwise the side is the one the
         * features are on at the end of the step. */
        int32_t ob = object_of(r, c->v[c->type == HY_CONTACT_VF ? 1 : 2]);
        int inside_face = c->type == HY_CONTACT_VF && motion_of(r, ob) != HY_MOVES_FREE && w[1] < -1e-9 &&
                          w[2] < -1e-9 && w[3] < -1e-9;
        if (!inside_face) {
            hy_v3 sep1 = v3(0, 0, 0);
            for (int k = 0; k < 4; k++) sep1 = v3_mad(sep1, v3_load(X1 + 3 * c->v[k]), w[k]);
            double along = v3_dot(nn, sep1), l1 = v3_len(sep1);
            if (fabs(along) > 1e-9 * (scale + l1)) {
                if (along < 0) nn = v3_scale(nn, -1.0);
            } else if (l1 > 1e-12 * (scale + 1e-300)) {
                nn = v3_scale(sep1, 1.0 / l1);
            } else {
                return 0;
            }
        }
    }
    *n = nn;
    *d0 = v3_dot(nn, sep0);
    return 1;
}

/* Whether the pair may touch over the candidate motion X0 -> X1. The
 * velocity test above is linear in a normal fixed at the start, which a
 * hinge closing about a shared edge or a pair that turns can pass while
 * crossing; a round with no violated contact ends the response, so that
 * round has to be right. Within an impulse round (from_v) the impulses
 * already applied have changed V but not X1 yet, so free cloth vertices
 * are taken at X0 + V dt, where hy_response_update_positions puts them
 * (bodies keep the round's X1: their impulses between two rigid objects
 * wait for the round's end anyway). Cheap bound first: a common translation
 * changes no distance, and beyond it no point of either feature moves
 * further than the largest vertex displacement relative to one vertex's,
 * so a pair more than twice that apart at the start cannot meet.
 * Otherwise the conservative CCD query at zero distance decides. */
static int may_cross(const hy_resolver* r, const hy_contact* c, int from_v) {
    const hy_scene_view* v = r->v;
    double x[8][3];
    hy_v3 x0[4], d[4];
    for (int k = 0; k < 4; k++) {
        int32_t g = c->v[k];
        memcpy(x[k], v->X0 + 3 * g, sizeof x[k]);
        if (from_v && v->inv_mass[g] > 0)
            v3_store(x[4 + k], v3_mad(v3_load(v->X0 + 3 * g), v3_load(v->V + 3 * g), r->dt));
        else
            memcpy(x[4 + k], v->X1 + 3 * g, sizeof x[k]);
        x0[k] = v3_load(x[k]);
        d[k] = v3_sub(v3_load(x[4 + k]), x0[k]);
    }
    double rel = 0.0;
    for (int k = 0; k < 4; k++) rel = fmax(rel, v3_len(v3_sub(d[k], d[1])));
    int is_vf = c->type == HY_CONTACT_VF;
    hy_v3 sep = hy_closest_separation(x0, is_vf);
    double gap = v3_len(sep), size = 0.0;
    for (int k = 1; k < 4; k++) size = fmax(size, v3_len(v3_sub(x0[k], x0[0])));
    if (gap > 2.0 * rel * (1.0 + 1e-6) + 1e-12) return 0;
    /* features that touch at the start (bodies placed face to face, the
     * pieces of a broken solid) touch at t = 0 whatever they do next: the
     * query cannot tell leaving from crossing, the linear test decides */
    if (gap <= 1e-9 * size) return 0;
    /* the step's options: a capped search answers "contact", which only
     * costs another round */
    hy_ccd_options opts = hy_ccd_options_step();
    double toi = 1.0;
    return hy_ccd_query(is_vf, (const double(*)[3])x, 0.0, &opts, &toi, NULL) != 0;
}

/* ------------------------------------------------------------ impulses */

/* Whether a vertex of the contact moves on its own (cloth). */
int hy_response_touches_free(const hy_resolver* r, const hy_contact* c) {
    for (int k = 0; k < 4; k++)
        if (motion_of(r, object_of(r, c->v[k])) == HY_MOVES_FREE) return 1;
    return 0;
}

int hy_response_contact(hy_resolver* r, const hy_contact* c, double separation, int apply, int push) {
    double w[4];
    hy_v3 n;
    double d0;
    if (!contact_frame(r, c, w, &n, &d0)) return 0;
    /* group vertices that move together */
    hy_participant parts[4];
    int np = 0;
    double thickness = 0.0, friction = 0.0, restitution = 0.0;
    int rigid_only = 1;
    for (int k = 0; k < 4; k++) {
        if (w[k] == 0.0) continue;
        int32_t g = c->v[k], obj = object_of(r, g), unit = unit_of(r, g);
        thickness = fmax(thickness, r->v->thickness[obj]);
        friction = fmax(friction, r->v->friction[obj]);
        if (motion_of(r, obj) == HY_MOVES_FREE) rigid_only = 0;
        if (motion_of(r, obj) == HY_MOVES_RIGID) restitution = fmax(restitution, r->v->restitution[obj]);
        int found = -1;
        for (int q = 0; q < np; q++)
            if (parts[q].unit == unit) found = q;
        hy_v3 x = v3_load(r->v->X0 + 3 * g), v = vertex_velocity(r, g);
        if (found < 0) {
            parts[np].unit = unit;
            parts[np].object = obj;
            parts[np].weight = w[k];
            parts[np].point = v3_scale(x, w[k]);
            parts[np].vel = v3_scale(v, w[k]);
            np++;
        } else {
            parts[found].weight += w[k];
            parts[found].point = v3_mad(parts[found].point, x, w[k]);
            parts[found].vel = v3_mad(parts[found].vel, v, w[k]);
        }
    }
    for (int q = 0; q < np; q++)
        if (fabs(parts[q].weight) > 1e-12) {
            parts[q].point = v3_scale(parts[q].point, 1.0 / parts[q].weight);
            parts[q].vel = v3_scale(parts[q].vel, 1.0 / parts[q].weight);
        } else {
            parts[q].point = v3_load(r->v->X0 + 3 * parts[q].unit);
            parts[q].vel = vertex_velocity(r, parts[q].unit);
        }
    /* relative velocity (side A minus side B) */
    hy_v3 vr = v3(0, 0, 0);
    for (int k = 0; k < 4; k++)
        if (w[k] != 0.0) vr = v3_mad(vr, vertex_velocity(r, c->v[k]), w[k]);
    double vn = v3_dot(vr, n);
    /* end the step no closer than the thickness; rigid pairs bounce */
    double target = (thickness - d0) / r->dt;
    if (target > 0) target *= separation > 0 ? fmin(1.0, separation) : 1.0;
    if (rigid_only && vn < -r->bounce_speed) target = fmax(target, -restitution * vn);
    /* zones: the gap may shrink, by at most half of itself (a zone riding
     * a rotating obstacle follows it on chords, not arcs) */
    if (!push) target = fmin(target, -0.5 * fmax(fmin(d0, thickness), 0.0) / r->dt);
    /* a contact within 1% of the thickness per step of its target is met:
     * without this slack, resting contacts would never count as resolved.
     * Zones allow no more than a quarter of the gap on top of their half:
     * a flat 1% let pairs that start closer than 2% of the thickness cross */
    double slack = 0.01 * thickness;
    if (!push) slack = fmin(slack, 0.25 * fmax(d0, 0.0));
    int met = vn >= target - slack / r->dt;
    if (met && !may_cross(r, c, apply)) return 0;
    if (!apply) return 1;
    /* a crossing the linear test cannot see: stop any approach; if there
     * is none, the pair is left to the impact zones */
    if (met) {
        target = fmax(target, 0.0);
        if (vn >= target) return 1;
    }
    if (rigid_only && np == 2 && !r->group_failed &&
        hy_response_group_add(r, parts, n, d0, thickness, friction, restitution))
        return 1;
    double K = 0.0;
    for (int q = 0; q < np; q++) K += parts[q].weight * parts[q].weight * inv_mass_along(r, &parts[q], n);
    if (!(K > 1e-300)) return 0;
    double jn = (target - vn) / K;
    /* friction: oppose the tangential slip, bounded by the Coulomb cone */
    hy_v3 vt = v3_mad(vr, n, -vn);
    double vt_len = v3_len(vt);
    hy_v3 jt_vec = v3(0, 0, 0);
    if (vt_len > 1e-12 && friction > 0) {
        hy_v3 t = v3_scale(vt, 1.0 / vt_len);
        double Kt = 0.0;
        for (int q = 0; q < np; q++) Kt += parts[q].weight * parts[q].weight * inv_mass_along(r, &parts[q], t);
        if (Kt > 1e-300) {
            double jt = fmin(friction * jn, vt_len / Kt);
            jt_vec = v3_scale(t, -jt);
        }
    }
    hy_v3 J = v3_add(v3_scale(n, jn), jt_vec);
    for (int q = 0; q < np; q++) apply_impulse(r, &parts[q], v3_scale(J, parts[q].weight));
    return 1;
}

/* ------------------------------------------------------ state updates */

/* Re-derive X1 (and rigid vertices' velocities) from the current velocities. */
void hy_response_update_positions(hy_resolver* r) {
    hy_scene_view* v = r->v;
    for (int32_t i = 0; i < v->object_count; i++) {
        int32_t off = v->offset[i], nv = vertex_count_of(r, i);
        if (motion_of(r, i) == HY_MOVES_FREE) {
            for (int32_t k = 0; k < nv; k++) {
                int32_t g = off + k;
                if (v->inv_mass[g] > 0)
                    v3_store(v->X1 + 3 * g, v3_mad(v3_load(v->X0 + 3 * g), v3_load(v->V + 3 * g), r->dt));
            }
        } else if (motion_of(r, i) == HY_MOVES_RIGID) {
            hy_view_body* b = &v->body1[i];
            const hy_view_body* b0 = &v->body0[i];
            b->x = v3_mad(b0->x, b->v, r->dt);
            b->q = quat_normalize(quat_mul(quat_from_rotvec(v3_scale(b->w, r->dt)), b0->q));
            hy_response_pose_rigid(r, i, b, 1);
        }
    }
}

void hy_response_pose_rigid(hy_resolver* r, int32_t i, const hy_view_body* b, int spin) {
    hy_scene_view* v = r->v;
    int32_t off = v->offset[i], nv = vertex_count_of(r, i);
    const double* local = v->local[i];
    double R[9];
    quat_to_mat(b->q, R);
    for (int32_t k = 0; k < nv; k++) {
        hy_v3 rr = mat_mul_v3(R, v3_load(local + 3 * k));
        v3_store(v->X1 + 3 * (off + k), v3_add(b->x, rr));
        v3_store(v->V + 3 * (off + k), spin ? v3_add(b->v, v3_cross(b->w, rr)) : b->v);
    }
}
