/* Contact lists in the collision tests: equality of two canonical lists,
 * and detection by a collision state made fresh (no memo of any kind), the
 * reference the memos' answers are held against. */
#ifndef HY_TESTS_CONTACT_LISTS_H
#define HY_TESTS_CONTACT_LISTS_H

#include <string.h>

#include "collision/collide.h"
#include "collision/contact.h"
#include "engine/world.h"

/* Same kinds, vertices and times, in the same order. */
static inline int hy_test_same_contacts(const hy_contact_list* a, const hy_contact_list* b) {
    if (a->count != b->count) return 0;
    for (int64_t k = 0; k < a->count; k++) {
        const hy_contact *p = &a->items[k], *q = &b->items[k];
        if (p->type != q->type || p->toi != q->toi || memcmp(p->v, q->v, sizeof p->v) != 0) return 0;
    }
    return 1;
}

/* Every object's positions into X (3 per global vertex of the world's
 * view). */
static inline void hy_test_world_positions(const hy_world* w, double* X) {
    for (int32_t i = 0; i < w->object_count; i++) {
        const hy_object* o = &w->objects[i];
        memcpy(X + 3 * (size_t)w->view.offset[i], o->state->x, sizeof(double) * 3 * (size_t)o->model.nv);
    }
}

/* One detection between X0 and X1 in a new collision state, canonical. */
static inline hy_status hy_test_detect_fresh(hy_world* w, const double* X0, const double* X1, hy_contact_list* out,
                                             hy_step_stats* st) {
    hy_collision_state_destroy(w->collision);
    w->collision = NULL;
    hy_status s = hy_world_detect(w, X0, X1, 0, out, st);
    if (!s) hy_contacts_canonicalize(out, NULL);
    return s;
}

#endif
