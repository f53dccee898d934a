/* Impact zones (see response_internal.h): contacts that survive the
 * impulse rounds merge their units into zones, kept as a union-find over
 * units, and each zone moves as one rigid unit. */
#include "collision/response_internal.h"

int32_t hy_zone_find(int32_t* parent, int32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

void hy_zone_unite(int32_t* parent, int32_t a, int32_t b) {
    a = hy_zone_find(parent, a);
    b = hy_zone_find(parent, b);
    if (a == b) return;
    if (a < b) parent[b] = a;
    else parent[a] = b;
}

/* Whether all four vertices of the contact already move with one zone. A
 * zone's motion over the step is one rigid map, and the straight-line
 * motion between x0 and the map's image is an invertible affine map at
 * every time (for rotations under half a turn), which keeps any
 * configuration free of crossings that starts free of them: such a contact
 * needs nothing. The gap along the start normal still looks like it
 * shrinks when the zone rides a rotating obstacle (the normal does not turn
 * with the pair), which kept such zones from ever converging. */
int hy_response_in_one_zone(const hy_resolver* r, const hy_contact* c) {
    int32_t* parent = r->cs->zone_parent;
    int32_t root = -1;
    for (int k = 0; k < 4; k++) {
        int32_t u = unit_of(r, c->v[k]);
        if (!r->cs->zone_member[u]) return 0;
        int32_t q = hy_zone_find(parent, u);
        if (k > 0 && q != root) return 0;
        root = q;
    }
    return 1;
}

/* Move every zone with more than one unit rigidly: with the obstacle it
 * contains (x1 = p1 + R1 R0^T (x0 - p0), the map the obstacle's script
 * applies to its own vertices, so the zone keeps its distances to the
 * obstacle), else fixed if it holds a pinned vertex, else by translation at
 * its momentum-weighted velocity. Velocities become the chord (x1 - x0) / dt
 * so the next step starts with the motion taken. */
void hy_response_move_zones(hy_resolver* r, int32_t* parent, const unsigned char* in_zone) {
    hy_scene_view* v = r->v;
    hy_collision_state* cs = r->cs;
    int32_t n = v->vertex_count;
    /* accumulate per root: momentum, mass, pinned flag, obstacle */
    double* acc = cs->zone_acc; /* 4 per vertex: px, py, pz, mass */
    int32_t* obstacle = cs->zone_obstacle;
    unsigned char* pinned = cs->zone_pinned;
    for (int32_t g = 0; g < n; g++) {
        acc[4 * g] = acc[4 * g + 1] = acc[4 * g + 2] = acc[4 * g + 3] = 0.0;
        obstacle[g] = -1;
        pinned[g] = 0;
    }
    for (int32_t g = 0; g < n; g++) {
        if (!in_zone[g]) continue;
        int32_t u = unit_of(r, g);
        if (u != g) continue; /* a rigid or scripted object counts once, at its first vertex */
        int32_t root = hy_zone_find(parent, g);
        int32_t obj = object_of(r, g);
        double m;
        hy_v3 vel;
        if (motion_of(r, obj) == HY_MOVES_FREE) {
            if (v->inv_mass[g] == 0.0) pinned[root] = 1;
            m = v->mass[g];
            vel = v3_load(v->V + 3 * g);
        } else if (motion_of(r, obj) == HY_MOVES_RIGID) {
            /* a body that takes no impulse and is not driven (asleep) holds its zone */
            if (v->body_inv_mass[obj] == 0.0 && !(v->flags[obj] & HY_VIEW_DRIVEN)) pinned[root] = 1;
            m = v->body_mass[obj];
            vel = v->body1[obj].v;
        } else {
            obstacle[root] = obj;
            continue;
        }
        acc[4 * root] += m * vel.x;
        acc[4 * root + 1] += m * vel.y;
        acc[4 * root + 2] += m * vel.z;
        acc[4 * root + 3] += m;
    }
    /* obstacle motion over the step, for zones that ride on one */
    for (int32_t i = 0; i < v->object_count; i++) {
        int motion = motion_of(r, i);
        if (motion == HY_MOVES_SCRIPTED) continue;
        int32_t off = v->offset[i], nv = vertex_count_of(r, i);
        for (int32_t k = 0; k < nv; k++) {
            int32_t g = off + k;
            if (!in_zone[g]) continue;
            if (motion == HY_MOVES_RIGID && k > 0) continue; /* handled via its first vertex */
            int32_t root = hy_zone_find(parent, g);
            hy_v3 zv = v3(0, 0, 0);
            int ride = obstacle[root] >= 0;
            hy_v3 p0 = v3(0, 0, 0), p1 = v3(0, 0, 0);
            hy_quat q0 = {1, 0, 0, 0}, q1 = {1, 0, 0, 0};
            if (ride) {
                p0 = v->pose_x0[obstacle[root]];
                q0 = v->pose_q0[obstacle[root]];
                p1 = v->pose_x1[obstacle[root]];
                q1 = v->pose_q1[obstacle[root]];
            } else if (!pinned[root] && acc[4 * root + 3] > 0) {
                zv = v3_scale(v3(acc[4 * root], acc[4 * root + 1], acc[4 * root + 2]), 1.0 / acc[4 * root + 3]);
            }
            /* rigid map x -> p1 + R1 R0^T (x - p0) for riders, x + dt*zv otherwise */
            hy_quat q0c = {q0.w, -q0.x, -q0.y, -q0.z};
            hy_quat rel = quat_mul(q1, q0c);
            if (motion == HY_MOVES_FREE) {
                if (v->inv_mass[g] == 0.0) continue;
                hy_v3 x0 = v3_load(v->X0 + 3 * g);
                hy_v3 x1 = ride ? v3_add(p1, quat_rotate(rel, v3_sub(x0, p0))) : v3_mad(x0, zv, r->dt);
                v3_store(v->X1 + 3 * g, x1);
                v3_store(v->V + 3 * g, v3_scale(v3_sub(x1, x0), 1.0 / r->dt));
            } else {
                const hy_view_body* b0 = &v->body0[i];
                hy_view_body* b = &v->body1[i];
                int holds = v->body_inv_mass[i] == 0.0 && !(v->flags[i] & HY_VIEW_DRIVEN);
                int still = p0.x == p1.x && p0.y == p1.y && p0.z == p1.z && q0.w == q1.w && q0.x == q1.x &&
                            q0.y == q1.y && q0.z == q1.z;
                if (ride && holds && still) {
                    /* a body that takes no impulse (a sleeper) riding a
                     * static obstacle stays put bit for bit: the obstacle's
                     * map, through rounding, would give it a velocity of
                     * about 1e-17 m/s, and any velocity of a sleeper wakes
                     * it and its island */
                    b->x = b0->x;
                    b->q = b0->q;
                    b->v = b->w = v3(0, 0, 0);
                } else if (ride) {
                    hy_v3 c1 = v3_add(p1, quat_rotate(rel, v3_sub(b0->x, p0)));
                    b->v = v3_scale(v3_sub(c1, b0->x), 1.0 / r->dt);
                    b->x = c1;
                    b->q = quat_normalize(quat_mul(rel, b0->q));
                    b->w = v3(0, 0, 0);
                } else {
                    b->v = zv;
                    b->w = v3(0, 0, 0);
                    b->x = v3_mad(b0->x, zv, r->dt);
                    b->q = b0->q;
                }
                hy_response_pose_rigid(r, i, b, 0);
            }
        }
    }
}
