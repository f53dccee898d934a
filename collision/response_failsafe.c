/* The response's fail-safe (see response_internal.h). */
#include <stdlib.h>

#include "collision/response_internal.h"
#include "core/error.h"

/* The last resort when impact zones do not converge. Every unit (cloth
 * vertex, body) is given a mover: either it stays where it started, or it
 * follows one moving obstacle by the exact rigid map the obstacle's script
 * applies over the step (x1 = p1 + R1 R0^T (x0 - p0), what its own vertices
 * do). Units that follow the same mover keep every mutual distance, and
 * the straight-line motion in between is one invertible affine map for all
 * of them, so pairs within a mover cannot cross; a static obstacle is the
 * same mover as "stays". Pairs between different movers are checked by
 * detection and their units handed to the moving obstacle (a unit caught
 * between a moving obstacle and something that stays must go with the
 * obstacle: the obstacle will not yield). Growth is per unit for a few
 * rounds, then per object, so it ends once every object touching a moving
 * obstacle follows it. Only a unit squeezed between two obstacles that
 * move differently (or a moving and a static one) has no safe motion; it
 * then follows one of them. Freezing everything instead (the former last
 * resort) is only safe with static obstacles: a rotating ball moved into
 * the frozen cloth. */

/* A scripted object that moves this step. */
static int moving_obstacle(const hy_resolver* r, int32_t obj) {
    return motion_of(r, obj) == HY_MOVES_SCRIPTED && (r->v->flags[obj] & HY_VIEW_MOVING) != 0;
}

/* Mover of any vertex: its unit's, or for obstacle vertices the obstacle
 * itself (-1 when it does not move). */
static int32_t mover_of(const hy_resolver* r, int32_t g) {
    int32_t obj = object_of(r, g);
    if (motion_of(r, obj) == HY_MOVES_SCRIPTED) return moving_obstacle(r, obj) ? obj : -1;
    return r->mover[unit_of(r, g)];
}

/* The obstacle's rigid map over the step, as pose at start and end. */
typedef struct rigid_map {
    hy_v3 p0, p1;
    hy_quat rel; /* q1 q0^-1 */
} rigid_map;

static rigid_map obstacle_map(const hy_resolver* r, int32_t obj) {
    rigid_map m;
    hy_quat q0 = r->v->pose_q0[obj], q1 = r->v->pose_q1[obj];
    m.p0 = r->v->pose_x0[obj];
    m.p1 = r->v->pose_x1[obj];
    hy_quat q0c = {q0.w, -q0.x, -q0.y, -q0.z};
    m.rel = quat_mul(q1, q0c);
    return m;
}

static hy_v3 map_point(const rigid_map* m, hy_v3 x) { return v3_add(m->p1, quat_rotate(m->rel, v3_sub(x, m->p0))); }

/* Set X1, V (and body1) of every unit from its mover. Pinned cloth
 * vertices stay, as they did under the former freeze. */
static void apply_movers(hy_resolver* r) {
    hy_scene_view* v = r->v;
    for (int32_t i = 0; i < v->object_count; i++) {
        int motion = motion_of(r, i);
        if (motion == HY_MOVES_SCRIPTED) continue;
        int32_t off = v->offset[i];
        if (motion == HY_MOVES_FREE) {
            for (int32_t k = 0; k < vertex_count_of(r, i); k++) {
                int32_t g = off + k;
                hy_v3 x0 = v3_load(v->X0 + 3 * g), x1 = x0;
                if (r->mover[g] >= 0 && v->inv_mass[g] > 0) {
                    rigid_map m = obstacle_map(r, r->mover[g]);
                    x1 = map_point(&m, x0);
                }
                v3_store(v->X1 + 3 * g, x1);
                v3_store(v->V + 3 * g, v3_scale(v3_sub(x1, x0), 1.0 / r->dt));
            }
        } else {
            const hy_view_body* b0 = &v->body0[i];
            hy_view_body* b = &v->body1[i];
            int32_t mv = r->mover[off];
            if (mv < 0) {
                *b = *b0;
                b->v = v3(0, 0, 0);
                b->w = v3(0, 0, 0);
            } else {
                /* the body follows the map; its angular velocity is left
                 * zero (the spin is the obstacle's, over one step) */
                rigid_map m = obstacle_map(r, mv);
                hy_v3 c1 = map_point(&m, b0->x);
                *b = *b0;
                b->v = v3_scale(v3_sub(c1, b0->x), 1.0 / r->dt);
                b->w = v3(0, 0, 0);
                b->x = c1;
                b->q = quat_normalize(quat_mul(m.rel, b0->q));
            }
            hy_response_pose_rigid(r, i, b, 0);
        }
    }
}

/* Initial movers: units in an impact zone that holds a moving obstacle
 * follow it; everything else stays. */
static void init_movers(hy_resolver* r) {
    hy_collision_state* cs = r->cs;
    const hy_scene_view* v = r->v;
    int32_t n = v->vertex_count;
    int32_t* root_obstacle = cs->zone_obstacle;
    for (int32_t g = 0; g < n; g++) root_obstacle[g] = -1;
    for (int32_t i = 0; i < v->object_count; i++) {
        int32_t u = v->offset[i];
        if (!moving_obstacle(r, i) || vertex_count_of(r, i) == 0 || !cs->zone_member[u]) continue;
        int32_t root = hy_zone_find(cs->zone_parent, u);
        if (root_obstacle[root] < 0) root_obstacle[root] = i;
    }
    for (int32_t g = 0; g < n; g++) {
        r->mover[g] = -1;
        if (unit_of(r, g) != g || !cs->zone_member[g]) continue;
        if (motion_of(r, object_of(r, g)) == HY_MOVES_SCRIPTED) continue;
        r->mover[g] = root_obstacle[hy_zone_find(cs->zone_parent, g)];
    }
}

/* Hand every unit of a violated contact between different movers to a
 * moving obstacle among them (the lowest index, for a canonical choice);
 * with per_object, the whole objects of those units. Returns 1 if a mover
 * changed. */
static int grow_movers(hy_resolver* r, const hy_contact* c, int per_object) {
    int32_t target = -1;
    for (int k = 0; k < 4; k++) {
        int32_t m = mover_of(r, c->v[k]);
        if (m >= 0 && (target < 0 || m < target)) target = m;
    }
    if (target < 0) return 0;
    int changed = 0;
    for (int k = 0; k < 4; k++) {
        int32_t obj = object_of(r, c->v[k]);
        if (motion_of(r, obj) == HY_MOVES_SCRIPTED) continue;
        if (per_object) {
            int32_t off = r->v->offset[obj];
            for (int32_t j = 0; j < vertex_count_of(r, obj); j++)
                if (unit_of(r, off + j) == off + j && r->mover[off + j] != target) {
                    r->mover[off + j] = target;
                    changed = 1;
                }
        } else {
            int32_t u = unit_of(r, c->v[k]);
            if (r->mover[u] != target) {
                r->mover[u] = target;
                changed = 1;
            }
        }
    }
    return changed;
}

hy_status hy_response_fail_safe(hy_resolver* r, const hy_response_params* params) {
    hy_collision_state* cs = r->cs;
    const hy_scene_view* v = r->v;
    hy_contact_list* contacts = &cs->contacts;
    r->mover = malloc(sizeof *r->mover * (size_t)(v->vertex_count > 0 ? v->vertex_count : 1));
    if (!r->mover) return hy_fail(HY_ERR_NOMEM, "collision response: out of memory in the fail-safe");
    init_movers(r);
    /* a few rounds per unit keep the followers local; then whole objects,
     * at most one more round per object */
    enum { UNIT_ROUNDS = 4 };
    int32_t max_rounds = UNIT_ROUNDS + v->object_count + 1;
    int changed = 1;
    for (int32_t it = 0; it < max_rounds && changed; it++) {
        apply_movers(r);
        int any_moving = 0;
        for (int32_t g = 0; g < v->vertex_count && !any_moving; g++) any_moving = r->mover[g] >= 0;
        for (int32_t i = 0; i < v->object_count && !any_moving; i++) any_moving = moving_obstacle(r, i);
        if (!any_moving) break; /* everything stays: the start is collision free */
        hy_status s = hy_response_detect(r);
        if (s) return s;
        changed = 0;
        for (int64_t k = 0; k < contacts->count; k++) {
            const hy_contact* c = &contacts->items[k];
            int32_t m0 = mover_of(r, c->v[0]);
            int same = 1;
            for (int q = 1; q < 4; q++) same &= mover_of(r, c->v[q]) == m0;
            if (same || !hy_response_contact(r, c, params->separation, 0, 0)) continue;
            changed |= grow_movers(r, c, it >= UNIT_ROUNDS);
        }
        /* unchanged: collision free, or nothing left to hand over */
    }
    /* out of rounds: the last hand-over is unverified but closer to safe */
    if (changed) apply_movers(r);
    return HY_OK;
}
