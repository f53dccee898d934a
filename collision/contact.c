#include "collision/contact.h"

#include <stdlib.h>

int hy_contact_push(hy_contact_list* l, hy_contact c) {
    if (l->count == l->capacity) {
        int64_t cap = l->capacity ? 2 * l->capacity : 256;
        hy_contact* n = realloc(l->items, sizeof *n * (size_t)cap);
        if (!n) return 0;
        l->items = n;
        l->capacity = cap;
    }
    l->items[l->count++] = c;
    return 1;
}

void hy_contact_list_free(hy_contact_list* l) {
    free(l->items);
    l->items = NULL;
    l->count = l->capacity = 0;
}

static void swap(int32_t* a, int32_t* b) {
    int32_t t = *a;
    *a = *b;
    *b = t;
}

static void canonical(hy_contact* c) {
    if (c->type == HY_CONTACT_VF) {
        if (c->v[1] > c->v[2]) swap(&c->v[1], &c->v[2]);
        if (c->v[2] > c->v[3]) swap(&c->v[2], &c->v[3]);
        if (c->v[1] > c->v[2]) swap(&c->v[1], &c->v[2]);
    } else {
        if (c->v[0] > c->v[1]) swap(&c->v[0], &c->v[1]);
        if (c->v[2] > c->v[3]) swap(&c->v[2], &c->v[3]);
        if (c->v[0] > c->v[2] || (c->v[0] == c->v[2] && c->v[1] > c->v[3])) {
            swap(&c->v[0], &c->v[2]);
            swap(&c->v[1], &c->v[3]);
        }
    }
}

static int compare(const void* pa, const void* pb) {
    const hy_contact *a = pa, *b = pb;
    if (a->type != b->type) return a->type < b->type ? -1 : 1;
    for (int k = 0; k < 4; k++)
        if (a->v[k] != b->v[k]) return a->v[k] < b->v[k] ? -1 : 1;
    return (a->toi > b->toi) - (a->toi < b->toi);
}

void hy_contacts_canonicalize(hy_contact_list* l) {
    if (l->count == 0) return;
    for (int64_t i = 0; i < l->count; i++) canonical(&l->items[i]);
    qsort(l->items, (size_t)l->count, sizeof *l->items, compare);
    int64_t out = 0;
    for (int64_t i = 0; i < l->count; i++) {
        if (out > 0) {
            hy_contact* p = &l->items[out - 1];
            const hy_contact* c = &l->items[i];
            if (p->type == c->type && p->v[0] == c->v[0] && p->v[1] == c->v[1] && p->v[2] == c->v[2] &&
                p->v[3] == c->v[3])
                continue; /* sorted by toi within equal keys: the first is the earliest */
        }
        l->items[out++] = l->items[i];
    }
    l->count = out;
}
