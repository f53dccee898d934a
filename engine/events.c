/* Contact events: which pairs of objects began, ended or went on touching
 * in the last step (hy_world_get_contact_events). The step notes the
 * object pairs of the contacts each substep's first detection round finds;
 * at its end they are compared with the pairs of the step before. */
#include <stdlib.h>
#include <string.h>

#include "collision/collide.h"
#include "core/error.h"
#include "engine/kinds.h"

static int64_t pair_key(int32_t a, int32_t b) {
    if (a > b) {
        int32_t t = a;
        a = b;
        b = t;
    }
    return ((int64_t)a << 32) | (int64_t)(uint32_t)b;
}

static int32_t key_a(int64_t k) { return (int32_t)(k >> 32); }
static int32_t key_b(int64_t k) { return (int32_t)(k & 0xffffffff); }

static int cmp_key(const void* x, const void* y) {
    int64_t a = *(const int64_t*)x, b = *(const int64_t*)y;
    return (a > b) - (a < b);
}

/* Grow *p (of *cap elements of `size` bytes) to hold n. */
static int reserve(void** p, int64_t* cap, int64_t n, size_t size) {
    if (n <= *cap) return 1;
    int64_t c = *cap ? 2 * *cap : 64;
    while (c < n) c *= 2;
    void* q = realloc(*p, size * (size_t)c);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

static hy_status push_key(hy_world* w, int64_t k) {
    if (!reserve((void**)&w->pair_keys, &w->pair_capacity, w->pair_count + 1, sizeof *w->pair_keys))
        return hy_fail(HY_ERR_NOMEM, "out of memory for contact events");
    w->pair_keys[w->pair_count++] = k;
    return HY_OK;
}

void hy_events_clear_step(hy_world* w) { w->pair_count = 0; }

hy_status hy_events_note(hy_world* w, const hy_contact* contacts, int64_t count) {
    if (!w->collision) return HY_OK;
    /* contacts come sorted by their first vertex, so runs of one pair are
     * common: skip repeats of the last key noted */
    int64_t last = -1;
    for (int64_t i = 0; i < count; i++) {
        const hy_contact* c = &contacts[i];
        int32_t a = w->view.vertex_object[c->v[0]];
        int32_t b = w->view.vertex_object[c->v[c->type == HY_CONTACT_VF ? 1 : 2]];
        if (a == b) continue; /* self contact is no event */
        int64_t k = pair_key(a, b);
        if (k == last) continue;
        last = k;
        hy_status s = push_key(w, k);
        if (s) return s;
    }
    return HY_OK;
}

hy_status hy_events_finish_step(hy_world* w) {
    /* pairs at rest are not tested but still touch: carry them over */
    for (int64_t i = 0; i < w->touching_count; i++) {
        int32_t a = hy_world_live_slot(w, w->touching[i].a), b = hy_world_live_slot(w, w->touching[i].b);
        if (a < 0 || b < 0) continue;
        if (hy_object_is_static(&w->objects[a]) && hy_object_is_static(&w->objects[b])) {
            hy_status s = push_key(w, pair_key(a, b));
            if (s) return s;
        }
    }
    /* this step's pairs, sorted, once each */
    if (w->pair_count > 1) qsort(w->pair_keys, (size_t)w->pair_count, sizeof *w->pair_keys, cmp_key);
    int64_t n = 0;
    for (int64_t i = 0; i < w->pair_count; i++)
        if (n == 0 || w->pair_keys[n - 1] != w->pair_keys[i]) w->pair_keys[n++] = w->pair_keys[i];
    w->pair_count = n;
    if (!reserve((void**)&w->begin_events, &w->begin_capacity, n, sizeof *w->begin_events) ||
        !reserve((void**)&w->end_events, &w->end_capacity, w->touching_count, sizeof *w->end_events))
        return hy_fail(HY_ERR_NOMEM, "out of memory for contact events");
    /* merge with the last step's pairs (their slots keep their order:
     * removal closes gaps, adds append) */
    w->begin_count = w->end_count = 0;
    int64_t i = 0, j = 0;
    while (i < n || j < w->touching_count) {
        int64_t prev = -1;
        if (j < w->touching_count) {
            int32_t a = hy_world_live_slot(w, w->touching[j].a), b = hy_world_live_slot(w, w->touching[j].b);
            if (a < 0 || b < 0) { /* removed: ends without an event */
                j++;
                continue;
            }
            prev = pair_key(a, b);
        }
        if (prev < 0 || (i < n && w->pair_keys[i] < prev)) {
            int64_t k = w->pair_keys[i++];
            w->begin_events[w->begin_count++] =
                (hy_contact_pair){hy_world_slot_id(w, key_a(k)), hy_world_slot_id(w, key_b(k))};
        } else if (i >= n || w->pair_keys[i] > prev) {
            w->end_events[w->end_count++] = w->touching[j++];
        } else {
            i++;
            j++;
        }
    }
    if (!reserve((void**)&w->touching, &w->touching_capacity, n, sizeof *w->touching))
        return hy_fail(HY_ERR_NOMEM, "out of memory for contact events");
    for (int64_t k = 0; k < n; k++)
        w->touching[k] =
            (hy_contact_pair){hy_world_slot_id(w, key_a(w->pair_keys[k])), hy_world_slot_id(w, key_b(w->pair_keys[k]))};
    w->touching_count = n;
    return HY_OK;
}

void hy_events_free(hy_world* w) {
    free(w->pair_keys);
    free(w->touching);
    free(w->begin_events);
    free(w->end_events);
}

HY_API hy_status hy_world_get_contact_events(const hy_world* w, hy_contact_events* out) {
    if (!w || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_get_contact_events: NULL argument");
    out->begin = w->begin_events;
    out->begin_count = w->begin_count;
    out->end = w->end_events;
    out->end_count = w->end_count;
    out->touching = w->touching;
    out->touching_count = w->touching_count;
    return HY_OK;
}
