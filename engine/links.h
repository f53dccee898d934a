/* Interactions in the world: coupling items (solvers/interaction.h)
 * between two volumetric solids (FEM or mass-spring). Two sources make
 * them:
 *   - attachments, made once (a scene's "attachments"): zero-length
 *     springs between vertices of two objects, the blocks of a bar;
 *     attached objects do not collide with each other (hy_links_apart):
 *     the attachment holds the faces they share;
 *   - contacts: each vertex-face contact that a step's collision finds
 *     between two solids becomes a one-sided penalty pair between them in
 *     the next step's implicit solve (replacing the previous step's).
 * Solids joined by interactions step together, one coupled backward-Euler
 * solve per connected group (hy_coupled_solve); a solid that has none
 * steps alone through its kind's operations as before. The impulse
 * response still runs after the solve as the fail-safe: the coupling only
 * leaves it less to do, and it counts what it did (hy_links_response_work).
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

/* Contact coupling on (1, the default) or off (0: contacts between solids
 * are left to the impulse response alone, as for the other kinds). Turning
 * it off drops the contact pairs held. */
hy_status hy_links_set_contact_coupling(hy_world* w, int on);

/* ---- the step's parts (engine/step.c) */

/* The integrate phase's part, before its tasks: the links whose objects
 * went are dropped, and the solids joined by links with pairs are found
 * in groups, which step in one coupled solve each (hy_links_solve_group:
 * one runtime task per group, engine/integrate.c) instead of their own
 * integrates. The groups stay valid until the object table changes. */
hy_status hy_links_prepare(hy_world* w);
/* Groups found by the last hy_links_prepare. */
int32_t hy_links_group_count(const hy_world* w);
/* The group of the object in `slot`, -1 when it steps alone. */
int32_t hy_links_group_of(const hy_world* w, int32_t slot);
/* Group g's lowest slot (where its task goes), its solids and their
 * vertices summed (each may be NULL). */
void hy_links_group_info(const hy_world* w, int32_t g, int32_t* first_slot, int32_t* solids, int64_t* vertices);
/* Group g's coupled solve over dt with `pool` (x1, v1 of its solids);
 * adds its CG figures to st. Solves of distinct groups may run at once on
 * different threads, each with its own pool: they read the links and
 * write only their own solids. */
hy_status hy_links_solve_group(hy_world* w, int32_t g, hy_pool* pool, double dt, hy_step_stats* st);
/* Before the response: the solids' candidate velocities, to measure what
 * the response changes. */
hy_status hy_links_before_response(hy_world* w);
/* After the response (the state not yet committed): the response's work
 * on the solids measured; the first detection round's vertex-face
 * contacts between two solids become the contact pairs of the next step,
 * laid out at the step's start positions. */
hy_status hy_links_after_response(hy_world* w, double dt);

/* Point p against the triangle (a, b, c): the unit normal n on p's side,
 * p's distance from the plane and its barycentric coordinates u, v along
 * b - a and c - a. 0 for a degenerate triangle (n and the rest unset). */
int hy_face_frame(const double* a, const double* b, const double* c, const double* p, double n[3], double* dist,
                  double* u, double* v);

/* The object pairs that never collide, as sorted hy_pair_key keys of
 * their slots (collision/scene_view.h): attached solids, whose shared
 * faces the attachment holds together. The keys as of the last step's
 * start (valid until the next step; NULL when *count is 0), or, with
 * _copy, as of now into *keys (free it). */
const int64_t* hy_links_apart(const hy_world* w, int64_t* count);
hy_status hy_links_apart_copy(const hy_world* w, int64_t** keys, int64_t* count);

/* Snapshots (engine/snapshot.c): the contact pairs a step hands to the
 * next are state. The bytes they take; written to out (that many); a
 * snapshot's part checked against the world (ids live solids, pairs in
 * range; *used gets its size) and then read, replacing the pairs held
 * (on a memory failure none are held: the next step goes without). */
size_t hy_links_snapshot_size(const hy_world* w);
void hy_links_snapshot_write(const hy_world* w, unsigned char* out);
hy_status hy_links_snapshot_check(const hy_world* w, const unsigned char* in, size_t size, size_t* used);
hy_status hy_links_snapshot_read(hy_world* w, const unsigned char* in);

/* What the impulse response did to the solids over the last substep:
 * the sum over their vertices of mass times the change of velocity (N s)
 * and the number of vertices it changed. */
void hy_links_response_work(const hy_world* w, double* impulse, int64_t* vertices);
/* Vertex pairs held in links now: attachments and contacts. */
void hy_links_pair_counts(const hy_world* w, int64_t* attached, int64_t* contacts);

#endif
