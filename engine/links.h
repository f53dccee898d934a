/* Interactions in the world: coupling items (solvers/interaction.h)
 * between two volumetric solids (FEM or mass-spring): attachments, made
 * once (a scene's "attachments"): zero-length springs between vertices of
 * two objects, the blocks of a bar. Solids joined by interactions step
 * together, one coupled backward-Euler solve per connected group
 * (hy_coupled_solve); a solid that has none steps alone through its
 * kind's operations as before. Attached objects do not collide with each
 * other (hy_links_apart): the attachment holds the faces they share.
 *
 * The links name their objects by id: a link whose object was removed is
 * dropped at the next step. */
#ifndef HY_ENGINE_LINKS_H
#define HY_ENGINE_LINKS_H

#include <stdint.h>

#include "engine/world.h"

typedef struct hy_links hy_links;

void hy_links_free(hy_world* w);

/* Attach solid b to solid a: every vertex of a within `tolerance` (m, >= 0)
 * of a vertex of b is tied to the nearest such one by a spring of
 * `stiffness` N/m (> 0). HY_ERR_INVALID_ARG naming the objects: not two
 * distinct live solids, a bad tolerance or stiffness, or no vertex within
 * the tolerance; HY_ERR_STALE_ID; HY_ERR_NOMEM. *pair_count (may be NULL)
 * gets the number of vertex pairs tied. */
hy_status hy_links_attach_coincident(hy_world* w, hy_object_id a, hy_object_id b, double tolerance, double stiffness,
                                     int32_t* pair_count);
/* The same with the vertex pairs given: pairs[2k] of a, pairs[2k+1] of b,
 * count pairs (> 0), each index in range. */
hy_status hy_links_attach_vertices(hy_world* w, hy_object_id a, hy_object_id b, const int32_t* pairs, int32_t count,
                                   double stiffness);

/* ---- the step's parts (engine/step.c) */

/* The integrate phase's part: every group of solids joined by links steps
 * in one coupled solve, and its solids are marked so their own integrate
 * skips this substep. Adds CG figures to st. */
hy_status hy_links_integrate(hy_world* w, double dt, hy_step_stats* st);
/* The object pairs that never collide, as sorted hy_pair_key keys of
 * their slots (collision/scene_view.h): attached solids, whose shared
 * faces the attachment holds together. The keys as of the last step's
 * start (valid until the next step; NULL when *count is 0), or, with
 * _copy, as of now into *keys (free it). */
const int64_t* hy_links_apart(const hy_world* w, int64_t* count);
hy_status hy_links_apart_copy(const hy_world* w, int64_t** keys, int64_t* count);

/* Vertex pairs held in links now: attachments and contacts. */
void hy_links_pair_counts(const hy_world* w, int64_t* attached, int64_t* contacts);

#endif
