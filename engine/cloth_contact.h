/* Resting contacts of cloth on obstacles and bodies, held in the cloth
 * solve. The rigid features (faces, edges, vertices) that each cloth vertex
 * touches in the response's last detection round are kept with the cloth
 * (up to three per vertex: on a faceted surface the vertex meets the next
 * facet or edge as it slides), and the next step's solve holds the
 * vertex's normal velocity to the surface's (Baraff & Witkin's constraint,
 * as a stiff penalty: hy_cloth_solve_constrained), with Coulomb friction
 * from the constraint's impulse. The solve then predicts a cloth that
 * already rests on the surface and follows it, so the response has little
 * left to correct. A vertex whose constraints pulled it back in sum (the
 * cloth lifting off) is let go. Detection and response still run on every
 * step and decide what is collision free: a stale or missing constraint
 * costs response rounds, never a missed contact. The kept features are
 * part of the world's state, like the sleep timers. */
#ifndef HY_ENGINE_CLOTH_CONTACT_H
#define HY_ENGINE_CLOTH_CONTACT_H

#include "engine/world.h"

/* The constraints of cloth object o for a step of dt from the committed
 * state, against the surfaces' predicted end-of-step positions (x1 of the
 * other objects must be set). *cons points into the object's scratch. */
hy_status hy_cloth_contacts_build(const hy_world* w, hy_object* o, double dt, hy_cloth_constraint** cons,
                                  int32_t* count);

/* After the response: keep, per cloth vertex, the rigid features of the
 * last detection round's contacts (the closest at the end of the step)
 * and those it was held on that it still ends near; let go the vertices
 * whose constraints held them back in this step. */
void hy_cloth_contacts_record(hy_world* w);

/* Forget the kept contacts of every cloth object (the object table or the
 * collision layout changed: the features name objects by slot). */
void hy_cloth_contacts_clear(hy_world* w);

/* The kept features of cloth object o as state (snapshots): int32 values
 * per cloth, and the arrays made on demand (HY_ERR_NOMEM). */
int64_t hy_cloth_contacts_state_ints(const hy_object* o);
hy_status hy_cloth_contacts_reserve(hy_object* o);
/* Forget cloth object o's kept features (none kept is a valid state). */
void hy_cloth_contacts_forget(hy_object* o);

#endif
