/* Contacts: colliding vertex-face and edge-edge pairs of one step, in one
 * canonical order so that every policy, resource and thread count resolves
 * them identically. */
#ifndef HY_COLLISION_CONTACT_H
#define HY_COLLISION_CONTACT_H

#include <stdint.h>

#include "core/pool.h"

enum { HY_CONTACT_VF = 0, HY_CONTACT_EE = 1 };

typedef struct hy_contact {
    int32_t type; /* HY_CONTACT_VF: v[0] vertex, v[1..3] face; HY_CONTACT_EE: edges (v0,v1), (v2,v3) */
    int32_t v[4]; /* global vertex indices */
    double toi;   /* conservative time of impact in [0, 1] */
} hy_contact;

typedef struct hy_contact_list {
    hy_contact* items;
    int64_t count, capacity;
} hy_contact_list;

int hy_contact_push(hy_contact_list* l, hy_contact c);
void hy_contact_list_free(hy_contact_list* l);
/* Put each contact's vertices in canonical order (face and edges sorted,
 * edges swapped so the smaller comes first) and sort the list by
 * (type, v[0..3]); duplicates are removed (the earliest toi kept). The
 * sort's passes run on the pool (NULL: on the caller), with the same
 * result for any thread count. The list's buffer may be replaced. */
void hy_contacts_canonicalize(hy_contact_list* l, hy_pool* pool);

#endif
