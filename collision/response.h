/* Collision response: impulses on the colliding feature pairs, iterated
 * until the motion of the step is collision free, with rigid impact zones
 * as the fail-safe.
 *
 * The response works on the scene view (collision/scene_view.h), whose
 * vertex arrays hold every object's vertices concatenated in object order:
 * X0 where the step starts, X1 the candidate end, V the candidate
 * velocities. Free vertices (cloth) move on their own, rigid objects'
 * vertices follow their rigid state, scripted objects' vertices follow
 * their poses and never take an impulse. */
#ifndef HY_COLLISION_RESPONSE_H
#define HY_COLLISION_RESPONSE_H

#include <stdint.h>

#include "collision/collide.h"
#include "collision/contact.h"
#include "collision/scene_view.h"
#include "core/pool.h"
#include "hyphys/hyphys.h"

struct hy_prox;

typedef struct hy_response_params {
    int32_t impulse_iterations; /* detection + impulse rounds before impact zones, default 6 */
    int32_t zone_iterations;    /* impact-zone rounds before freezing, default 32 */
    int32_t sweeps;             /* Gauss-Seidel sweeps over a round's cloth contacts, default 4 */
    double separation;          /* target separating speed as a fraction of thickness/dt, default 0.1 */
    double rolling_resistance;  /* m: a rigid pair's angular impulse against its relative turning is at
                                   most this times its normal impulse (the lever arm of the contact's
                                   pressure); 0 = none, default 0 */
    double bounce_speed;        /* m/s: rigid contacts approaching slower do not bounce, default 0 */
} hy_response_params;

hy_response_params hy_response_params_default(void);

/* Resolve the collisions of the candidate step of length dt in the view:
 * detection rounds (hy_collide_detect over view X0 -> X1, jobs on prox,
 * the host's share on pool) and the corrections they call for. On return
 * the view's X1, V and RIGID objects' body1 hold a collision-free motion
 * (given a collision-free start and a conservative detector); cs->contacts
 * holds the last round's contacts and cs->pair_impulse the rigid pairs'
 * impulses. The first round's contacts, canonical, are copied into first
 * when it is not NULL. Stats get contacts and iterations. */
hy_status hy_collision_resolve(hy_collision_state* cs, hy_scene_view* view, struct hy_prox* prox, hy_pool* pool,
                               double dt, const hy_response_params* params, hy_contact_list* first,
                               hy_step_stats* stats);

#endif
