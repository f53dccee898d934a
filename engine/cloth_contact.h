/* Resting contacts of cloth on obstacles and bodies, held in the cloth
 * solve. The response (collision/response.c) finds the cloth vertices that
 * touch a rigid surface; the surface face each one touched at the end of
 * the step is kept with the cloth, and the next step's solve holds that
 * vertex's normal velocity to the surface's (Baraff & Witkin's filtered
 * constraint), with Coulomb friction from the constraint's impulse. The
 * solve then predicts a cloth that already rests on the surface and
 * follows it, so the response has little left to correct. A vertex whose
 * constraint pulled it back (the cloth lifting off) is let go. The contact
 * detection and response still run on every step and decide what is
 * collision free: a stale or missing constraint costs response rounds,
 * never a missed contact. */
#ifndef HY_ENGINE_CLOTH_CONTACT_H
#define HY_ENGINE_CLOTH_CONTACT_H

#include "engine/world.h"

/* The constraints of cloth object o for a step of dt from the committed
 * state, against the surfaces' predicted end-of-step positions (x1 of the
 * other objects must be set). *cons points into the object's scratch. */
hy_status hy_cloth_contacts_build(hy_world* w, hy_object* o, double dt, hy_cloth_constraint** cons, int32_t* count);

/* After the response: keep, per cloth vertex, the rigid face it touches in
 * the last detection round (the closest one at the end of the step), and
 * drop the vertices whose constraint held them back in this step. */
void hy_cloth_contacts_record(hy_world* w);

/* Forget the kept contacts of every cloth object (the object table or the
 * collision layout changed). */
void hy_cloth_contacts_clear(hy_world* w);

#endif
