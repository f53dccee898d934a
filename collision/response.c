/* Collision response (see response.h): the driver. Its stages live
 * apart and share the resolver's state and per-vertex helpers through
 * response_internal.h: one contact's impulse (response_contact.c), the
 * rigid pairs' groups (response_groups.c), impact zones
 * (response_zones.c) and the fail-safe (response_failsafe.c).
 *
 * Rounds of detection and impulses: every contact of a round gets an
 * inelastic (or, between rigid bodies and obstacles, restitutive) normal
 * impulse plus Coulomb friction, applied in the canonical contact order
 * (Gauss-Seidel). Positions are then re-derived from the new velocities and
 * the motion is checked again. Contacts that survive the impulse rounds are
 * merged into impact zones (Provot 1997; Bridson et al. 2002): a zone moves
 * as one rigid unit, here by translation at its momentum-weighted velocity,
 * or, when it holds an obstacle, by the obstacle's own rigid map over the
 * step, so nothing inside it can collide; zones grow until the motion is
 * collision free. If even that does not converge, the fail-safe gives
 * every unit a motion that is collision free by construction: it stays
 * where it started, or it follows a moving obstacle it touches (see
 * response_failsafe.c). Translation-only free zones are a choice: they lose the
 * zone's spin for the step, but need no polar decomposition and cannot
 * create new intersections inside the zone.
 *
 * A round ends the response only when no contact is violated, so the
 * violation test must not pass a crossing: the linear velocity test is
 * backed by a zero-distance CCD query on pairs close enough to meet
 * (may_cross, response_contact.c), and pairs inside one zone are exempt
 * (hy_response_in_one_zone) because no common rigid map can make them
 * cross. */
#include "collision/response.h"

#include <stdlib.h>
#include <string.h>

#include "collision/response_internal.h"
#include "core/error.h"

hy_response_params hy_response_params_default(void) {
    hy_response_params p;
    p.impulse_iterations = 6;
    p.sweeps = 4;
    p.zone_iterations = 32;
    p.separation = 0.1;
    p.rolling_resistance = 0.0;
    p.bounce_speed = 0.0;
    return p;
}

hy_status hy_response_detect(hy_resolver* r) {
    hy_contact_list* contacts = &r->cs->contacts;
    /* after the first round the list holds the last round's output, whose
     * unmoved contacts the detection keeps (hy_collide_detect's carry) */
    int carry = r->rounds > 0;
    if (!carry) contacts->count = 0;
    hy_status s = hy_collide_detect(r->cs, r->v, r->prox, r->pool, r->v->X0, r->v->X1, carry, contacts, r->stats);
    if (s) return s;
    hy_contacts_canonicalize(contacts, r->pool);
    if (r->rounds++ == 0 && r->first) {
        hy_contact_list* f = r->first;
        f->count = 0;
        if (contacts->count > f->capacity) {
            hy_contact* items = realloc(f->items, sizeof *items * (size_t)contacts->count);
            if (!items) return hy_fail(HY_ERR_NOMEM, "out of memory for %lld contacts", (long long)contacts->count);
            f->items = items;
            f->capacity = contacts->count;
        }
        if (contacts->count > 0) memcpy(f->items, contacts->items, sizeof *f->items * (size_t)contacts->count);
        f->count = contacts->count;
    }
    return HY_OK;
}

/* ---- the impulse passes, colour by colour */

/* Contacts of one colour share no free vertex. A contact moves only its
 * free vertices' velocities, and reads the velocities of its own four
 * vertices and positions nobody writes during a pass, so the contacts of
 * one colour run at once on the pool and give the bits of any order. A
 * contact with a rigid participant changes a whole body (or joins the
 * round's rigid pair groups): those run one by one, in the list's order,
 * before the colours. Colours are given greedily in the list's order (the
 * lowest not yet taken at any of the contact's free vertices, at most 64;
 * a contact that finds none runs after the colours, one by one). */
#define COLOURS 64
#define SERIAL_TAIL COLOURS
#define PASS_GRAIN 64

static int has_rigid(const hy_resolver* r, const hy_contact* c) {
    for (int k = 0; k < 4; k++)
        if (motion_of(r, object_of(r, c->v[k])) == HY_MOVES_RIGID) return 1;
    return 0;
}

static hy_status colour_reserve(hy_resolver* r, int64_t n) {
    if (!r->used) {
        r->used = calloc((size_t)r->cs->vertex_count + 1, sizeof *r->used);
        if (!r->used) return hy_fail(HY_ERR_NOMEM, "out of memory for the response's colours");
    }
    if (n <= r->colour_capacity) return HY_OK;
    int8_t* colour = realloc(r->colour, (size_t)n * sizeof *colour);
    if (colour) r->colour = colour;
    unsigned char* result = realloc(r->result, (size_t)n);
    if (result) r->result = result;
    int64_t* by = realloc(r->by_colour, (size_t)n * sizeof *by);
    if (by) r->by_colour = by;
    if (!colour || !result || !by)
        return hy_fail(HY_ERR_NOMEM, "out of memory for the response's colours (%lld contacts)", (long long)n);
    r->colour_capacity = n;
    return HY_OK;
}

/* Colour of the round's contact k (not rigid), marked at its free vertices. */
static int8_t take_colour(hy_resolver* r, const hy_contact* c) {
    uint64_t taken = 0;
    for (int q = 0; q < 4; q++)
        if (motion_of(r, object_of(r, c->v[q])) == HY_MOVES_FREE) taken |= r->used[c->v[q]];
    if (taken == ~(uint64_t)0) return SERIAL_TAIL;
    int colour = __builtin_ctzll(~taken);
    for (int q = 0; q < 4; q++)
        if (motion_of(r, object_of(r, c->v[q])) == HY_MOVES_FREE) r->used[c->v[q]] |= (uint64_t)1 << colour;
    return (int8_t)colour;
}

typedef struct pass_ctx {
    hy_resolver* r;
    const hy_contact* items;
    const int64_t* list;
    double separation;
} pass_ctx;

static void pass_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    const pass_ctx* c = vctx;
    for (int64_t i = begin; i < end; i++) {
        int64_t k = c->list[i];
        c->r->result[k] = (unsigned char)hy_response_contact(c->r, &c->items[k], c->separation, 1, 1);
    }
}

/* One Gauss-Seidel pass over the contacts `list[0..n)` (ascending): the
 * rigid ones in order, then colour by colour; each one's result in
 * r->result. The contacts' colours are set. */
static void coloured_pass(hy_resolver* r, const int64_t* list, int64_t n, double separation) {
    const hy_contact* items = r->cs->contacts.items;
    int64_t start[COLOURS + 2] = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t k = list ? list[i] : i;
        if (r->colour[k] < 0)
            r->result[k] = (unsigned char)hy_response_contact(r, &items[k], separation, 1, 1);
        else
            start[r->colour[k] + 1]++;
    }
    for (int c = 0; c <= COLOURS; c++) start[c + 1] += start[c];
    int64_t fill[COLOURS + 1];
    memcpy(fill, start, sizeof fill);
    for (int64_t i = 0; i < n; i++) {
        int64_t k = list ? list[i] : i;
        if (r->colour[k] >= 0) r->by_colour[fill[r->colour[k]]++] = k;
    }
    pass_ctx pc = {r, items, r->by_colour, separation};
    for (int c = 0; c < COLOURS; c++)
        if (start[c + 1] > start[c]) {
            pc.list = r->by_colour + start[c];
            hy_pool_for(r->pool, start[c + 1] - start[c], PASS_GRAIN, pass_block, &pc);
        }
    pc.list = r->by_colour + start[SERIAL_TAIL];
    pass_block(&pc, 0, start[SERIAL_TAIL + 1] - start[SERIAL_TAIL], 0, 0);
}

/* The round's colours: rigid contacts -1, the others greedily. */
static void colour_round(hy_resolver* r) {
    const hy_contact_list* contacts = &r->cs->contacts;
    for (int64_t k = 0; k < contacts->count; k++)
        r->colour[k] = has_rigid(r, &contacts->items[k]) ? -1 : take_colour(r, &contacts->items[k]);
    for (int64_t k = 0; k < contacts->count; k++)
        if (r->colour[k] >= 0)
            for (int q = 0; q < 4; q++) r->used[contacts->items[k].v[q]] = 0;
}

/* Rounds of detection and impulses; 1 when a round found nothing
 * violated (the motion is collision free), 0 when the impact zones must
 * take over, or an error. */
static hy_status impulse_rounds(hy_resolver* r, const hy_response_params* params, int* done) {
    hy_contact_list* contacts = &r->cs->contacts;
    int64_t prev_violated = 0;
    *done = 0;
    for (int32_t it = 0; it < params->impulse_iterations; it++) {
        hy_status s = hy_response_detect(r);
        if (s) return s;
        if (it == 0) r->stats->contacts += contacts->count;
        int64_t violated = 0, violated_rigid = 0, swept = 0;
        if (r->swept_capacity < contacts->count) {
            int64_t* p = realloc(r->swept, sizeof *p * (size_t)contacts->count);
            if (p) {
                r->swept = p;
                r->swept_capacity = contacts->count;
            }
        }
        if ((s = colour_reserve(r, contacts->count))) return s;
        colour_round(r);
        coloured_pass(r, NULL, contacts->count, params->separation);
        for (int64_t k = 0; k < contacts->count; k++) {
            int v = r->result[k];
            violated += v;
            if (!v) continue;
            if (!hy_response_touches_free(r, &contacts->items[k])) violated_rigid++;
            else if (r->swept_capacity >= contacts->count) r->swept[swept++] = k;
        }
        hy_response_apply_groups(r, params->separation);
        /* More Gauss-Seidel sweeps over the round's violated cloth
         * contacts: a vertex in several contacts is pushed by each in
         * turn, and a sweep costs far less than the next round's
         * detection (rigid pairs were swept in their groups; a contact met
         * in the first pass and undone by a later push is the next
         * round's) */
        for (int32_t sweep = 1; swept > 0 && sweep < params->sweeps; sweep++) {
            int64_t again = 0;
            coloured_pass(r, r->swept, swept, params->separation);
            for (int64_t j = 0; j < swept; j++) again += r->result[r->swept[j]];
            if (!again) break;
        }
        if (violated == 0) {
            *done = 1;
            return HY_OK;
        }
        hy_response_update_positions(r);
        /* a few cloth contacts that the rounds no longer reduce (a vertex
         * pinched between two layers the impulses push back and forth) are
         * left to the impact zones at once: each further round costs a
         * detection over the whole scene and resolves little. A round that
         * leaves 70% or more of the last one's violations counts as such
         * (cloth_ball in contact: 4,894, 1,001, 739, 707 violated in rounds
         * 0-3, the zones the same size when they take over after round 2).
         * Rigid contacts keep their rounds: a zone freezes whole bodies */
        if (violated_rigid == 0 && violated >= 2 && prev_violated > 0 && violated * 10 >= prev_violated * 7) break;
        prev_violated = violated;
    }
    return HY_OK;
}

/* Whether a vertex of the contact moves with a zone. */
static int touches_zone(const hy_resolver* r, const hy_contact* c) {
    for (int k = 0; k < 4; k++)
        if (r->cs->zone_member[unit_of(r, c->v[k])]) return 1;
    return 0;
}

typedef struct check_ctx {
    hy_resolver* r;
    double separation;
    int zoned_only;
} check_ctx;

/* The zones' violation test of each contact, which reads positions and
 * velocities only (nothing moves while the list is checked): on the pool,
 * into r->result (2 + the answer; 0 for a contact the serial pass below
 * will test itself). */
static void check_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    const check_ctx* c = vctx;
    const hy_contact* items = c->r->cs->contacts.items;
    for (int64_t k = begin; k < end; k++)
        c->r->result[k] = c->zoned_only && !touches_zone(c->r, &items[k])
                              ? 0
                              : (unsigned char)(2 + hy_response_contact(c->r, &items[k], c->separation, 0, 0));
}

/* Merge the units of every contact of the list that the zones leave
 * violated into one zone; the number of such contacts. With zoned_only,
 * a check of the same list after the zones moved, only contacts that touch
 * a zone are looked at: the others have not moved since they were found
 * met. */
static int64_t merge_violated(hy_resolver* r, double separation, int zoned_only) {
    hy_collision_state* cs = r->cs;
    const hy_contact_list* contacts = &cs->contacts;
    int64_t violated = 0;
    /* the tests first, on the pool; the merging below stays in the list's
     * order (a contact whose vertices joined one zone earlier in the pass is
     * skipped, and a zoned-only pass also looks at contacts that an earlier
     * merge brought into a zone: those it tests itself) */
    int tested = colour_reserve(r, contacts->count) == HY_OK;
    if (tested) {
        check_ctx cc = {r, separation, zoned_only};
        hy_pool_for(r->pool, contacts->count, PASS_GRAIN, check_block, &cc);
    } else {
        hy_error_clear();
    }
    for (int64_t k = 0; k < contacts->count; k++) {
        const hy_contact* c = &contacts->items[k];
        if (zoned_only && !touches_zone(r, c)) continue;
        if (hy_response_in_one_zone(r, c)) continue;
        int v = tested && r->result[k] ? r->result[k] - 2 : hy_response_contact(r, c, separation, 0, 0);
        if (!v) continue;
        violated++;
        int32_t u0 = unit_of(r, c->v[0]);
        for (int q = 0; q < 4; q++) {
            int32_t u = unit_of(r, c->v[q]);
            cs->zone_member[c->v[q]] = 1;
            cs->zone_member[u] = 1;
            hy_zone_unite(cs->zone_parent, u0, u);
        }
    }
    return violated;
}

/* Rounds of impact zones: *done as for impulse_rounds. A moved zone
 * pushes into its neighbours; the pairs it meets are mostly in the round's
 * contact list already (detection reports pairs within the thickness), so
 * the list is checked again against the zones' new motion, and zones grown
 * and moved, up to `sweeps` times before the next detection, which alone
 * decides that the motion is collision free. */
static hy_status zone_rounds(hy_resolver* r, const hy_response_params* params, int* done) {
    hy_collision_state* cs = r->cs;
    *done = 0;
    for (int32_t g = 0; g < cs->vertex_count; g++) {
        cs->zone_parent[g] = g;
        cs->zone_member[g] = 0;
    }
    for (int32_t it = 0; it < params->zone_iterations; it++) {
        hy_status s = hy_response_detect(r);
        if (s) return s;
        if (merge_violated(r, params->separation, 0) == 0) {
            *done = 1;
            return HY_OK;
        }
        hy_response_move_zones(r, cs->zone_parent, cs->zone_member);
        for (int32_t sweep = 1; sweep < params->sweeps; sweep++) {
            if (merge_violated(r, params->separation, 1) == 0) break;
            hy_response_move_zones(r, cs->zone_parent, cs->zone_member);
        }
    }
    return HY_OK;
}

hy_status hy_collision_resolve(hy_collision_state* cs, hy_scene_view* view, struct hy_prox* prox, hy_pool* pool,
                               double dt, const hy_response_params* params, hy_contact_list* first,
                               hy_step_stats* stats) {
    if (!cs || cs->object_count != view->object_count || cs->vertex_count != view->vertex_count)
        return hy_fail(HY_ERR_INVALID_ARG, "collision response: the collision state was not made for the view");
    hy_resolver r;
    memset(&r, 0, sizeof r);
    r.cs = cs;
    r.v = view;
    r.prox = prox;
    r.pool = pool;
    r.stats = stats;
    r.first = first;
    r.dt = dt;
    r.rolling_resistance = params->rolling_resistance;
    r.bounce_speed = params->bounce_speed;
    if (first) first->count = 0;
    cs->pair_impulse_count = 0;
    int done = 0;
    hy_status s = impulse_rounds(&r, params, &done);
    if (!s && !done) s = zone_rounds(&r, params, &done);
    if (!s && !done) s = hy_response_fail_safe(&r, params);
    stats->response_iterations += r.rounds;
    free(r.groups);
    free(r.group_solve);
    free(r.swept);
    free(r.colour);
    free(r.result);
    free(r.by_colour);
    free(r.used);
    free(r.mover);
    return s ? s : hy_response_impulses_kept(&r);
}
