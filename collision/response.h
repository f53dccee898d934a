/* Collision response: impulses on the colliding feature pairs, iterated
 * until the motion of the step is collision free, with rigid impact zones
 * as the fail-safe.
 *
 * The response works on the world's global vertex arrays (every object's
 * vertices concatenated in object order): X0 where the step starts, X1 the
 * candidate end, V the candidate velocities. Cloth vertices move freely,
 * rigid-body vertices follow their body, obstacle vertices follow their
 * script and never take an impulse. */
#ifndef HY_COLLISION_RESPONSE_H
#define HY_COLLISION_RESPONSE_H

#include <stdint.h>

#include "collision/contact.h"
#include "hyphys/hyphys.h"

struct hy_world;

/* Find every colliding pair of the motion X0 -> X1 (appends to out, which the
 * caller canonicalises). */
typedef hy_status (*hy_detect_fn)(void* ctx, const double* X0, const double* X1, hy_contact_list* out,
                                  hy_step_stats* stats);

typedef struct hy_response_params {
    int32_t impulse_iterations; /* detection + impulse rounds before impact zones, default 6 */
    int32_t zone_iterations;    /* impact-zone rounds before freezing, default 32 */
    int32_t sweeps;             /* Gauss-Seidel sweeps over a round's cloth contacts, default 4 */
    double separation;          /* target separating speed as a fraction of thickness/dt, default 0.1 */
} hy_response_params;

hy_response_params hy_response_params_default(void);

/* Resolve the collisions of the candidate step of length dt. On return the
 * objects' x1/v1/body1 hold a collision-free motion (given a collision-free
 * start and a conservative detector). Stats get contacts and iterations. */
hy_status hy_collision_resolve(struct hy_world* w, double dt, hy_detect_fn detect, void* detect_ctx,
                               const hy_response_params* params, hy_step_stats* stats);

#endif
