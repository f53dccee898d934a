#include "collision/contact.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

/* The sort's record: the contact's order as two 64-bit keys (type and
 * v[0..1], then v[2..3]; indices are non-negative int32, so each fits 31
 * bits) and its place in the list. */
typedef struct sort_rec {
    uint64_t hi, lo;
    int64_t at;
} sort_rec;

/* One stable counting pass over byte `shift / 8` of the chosen key, from
 * src to dst; skipped (0) when every record has the same byte there. */
static int radix_pass(const sort_rec* src, sort_rec* dst, int64_t n, int high, int shift) {
    int64_t count[256] = {0};
    for (int64_t i = 0; i < n; i++) count[((high ? src[i].hi : src[i].lo) >> shift) & 0xff]++;
    for (int d = 0; d < 256; d++)
        if (count[d] == n) return 0;
    int64_t start = 0;
    for (int d = 0; d < 256; d++) {
        int64_t c = count[d];
        count[d] = start;
        start += c;
    }
    for (int64_t i = 0; i < n; i++) dst[count[((high ? src[i].hi : src[i].lo) >> shift) & 0xff]++] = src[i];
    return 1;
}

/* Sorted by (type, v[0..3], toi), as compare() orders them: least
 * significant byte first over lo, then hi (stable passes), then equal keys
 * by toi. Measured against qsort on cloth_ball's rounds (25,000-72,000
 * contacts): its comparison calls cost several times these passes. Returns
 * 0 when out of memory (the caller sorts with qsort instead). */
static int radix_sort(hy_contact_list* l) {
    int64_t n = l->count;
    sort_rec* a = malloc(sizeof *a * (size_t)n);
    sort_rec* b = malloc(sizeof *b * (size_t)n);
    hy_contact* out = malloc(sizeof *out * (size_t)n);
    if (!a || !b || !out) {
        free(a);
        free(b);
        free(out);
        return 0;
    }
    for (int64_t i = 0; i < n; i++) {
        const hy_contact* c = &l->items[i];
        a[i].hi = (uint64_t)c->type << 62 | (uint64_t)(uint32_t)c->v[0] << 31 | (uint64_t)(uint32_t)c->v[1];
        a[i].lo = (uint64_t)(uint32_t)c->v[2] << 31 | (uint64_t)(uint32_t)c->v[3];
        a[i].at = i;
    }
    sort_rec *src = a, *dst = b;
    for (int high = 0; high < 2; high++)
        for (int shift = 0; shift < 64; shift += 8)
            if (radix_pass(src, dst, n, high, shift)) {
                sort_rec* t = src;
                src = dst;
                dst = t;
            }
    for (int64_t i = 0; i < n; i++) out[i] = l->items[src[i].at];
    /* equal keys (the same pair found twice) by toi: insertion sort of
     * each run, which holds one or two records */
    for (int64_t i = 1; i < n; i++) {
        if (src[i].hi != src[i - 1].hi || src[i].lo != src[i - 1].lo) continue;
        hy_contact c = out[i];
        int64_t j = i;
        while (j > 0 && src[j - 1].hi == src[i].hi && src[j - 1].lo == src[i].lo && out[j - 1].toi > c.toi) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = c;
    }
    memcpy(l->items, out, sizeof *out * (size_t)n);
    free(a);
    free(b);
    free(out);
    return 1;
}

void hy_contacts_canonicalize(hy_contact_list* l) {
    if (l->count == 0) return;
    for (int64_t i = 0; i < l->count; i++) canonical(&l->items[i]);
    if (!radix_sort(l)) qsort(l->items, (size_t)l->count, sizeof *l->items, compare);
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
