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

/* Records per block of the sort's passes. The blocks split the list the
 * same way for any thread count, and a stable pass's output does not
 * depend on the split anyway. */
#define SORT_GRAIN 4096

typedef struct sort_ctx {
    hy_contact* items;
    sort_rec *src, *dst;
    hy_contact* out;
    int64_t* count; /* 256 per block: the digit's count, then where the block's first such record goes */
    int high, shift;
} sort_ctx;

static inline unsigned digit(const sort_rec* r, int high, int shift) {
    return (unsigned)(((high ? r->hi : r->lo) >> shift) & 0xff);
}

static void keys_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    const sort_ctx* c = vctx;
    for (int64_t i = begin; i < end; i++) {
        hy_contact* ct = &c->items[i];
        canonical(ct);
        c->src[i].hi = (uint64_t)ct->type << 62 | (uint64_t)(uint32_t)ct->v[0] << 31 | (uint64_t)(uint32_t)ct->v[1];
        c->src[i].lo = (uint64_t)(uint32_t)ct->v[2] << 31 | (uint64_t)(uint32_t)ct->v[3];
        c->src[i].at = i;
    }
}

static void count_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)worker;
    const sort_ctx* c = vctx;
    int64_t* count = c->count + 256 * block;
    memset(count, 0, 256 * sizeof *count);
    for (int64_t i = begin; i < end; i++) count[digit(&c->src[i], c->high, c->shift)]++;
}

static void scatter_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)worker;
    const sort_ctx* c = vctx;
    int64_t* at = c->count + 256 * block;
    for (int64_t i = begin; i < end; i++) c->dst[at[digit(&c->src[i], c->high, c->shift)]++] = c->src[i];
}

static void gather_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block, (void)worker;
    const sort_ctx* c = vctx;
    for (int64_t i = begin; i < end; i++) c->out[i] = c->items[c->src[i].at];
}

/* One stable counting pass over byte `shift / 8` of the chosen key, from
 * src to dst: per block counts on the pool, the blocks' places in digit
 * then block order, the records moved on the pool. Skipped (0) when every
 * record has the same byte there. */
static int radix_pass(sort_ctx* c, hy_pool* pool, int64_t n) {
    int64_t blocks = hy_pool_blocks(n, SORT_GRAIN);
    hy_pool_for(pool, n, SORT_GRAIN, count_block, c);
    int64_t start = 0;
    for (int d = 0; d < 256; d++) {
        int64_t total = 0;
        for (int64_t b = 0; b < blocks; b++) {
            int64_t k = c->count[256 * b + d];
            c->count[256 * b + d] = start + total;
            total += k;
        }
        if (total == n) return 0;
        start += total;
    }
    hy_pool_for(pool, n, SORT_GRAIN, scatter_block, c);
    return 1;
}

/* Each contact made canonical and the list sorted by (type, v[0..3],
 * toi), as compare() orders them: least significant byte first over lo,
 * then hi (stable passes), then equal keys by toi. Measured against qsort
 * on cloth_ball's rounds (25,000-72,000 contacts): its comparison calls
 * cost several times these passes. Returns 0 when out of memory (the
 * caller sorts with qsort instead). */
static int radix_sort(hy_contact_list* l, hy_pool* pool) {
    int64_t n = l->count;
    sort_rec* a = malloc(sizeof *a * (size_t)n);
    sort_rec* b = malloc(sizeof *b * (size_t)n);
    hy_contact* out = malloc(sizeof *out * (size_t)n);
    int64_t* count = malloc(sizeof *count * 256 * (size_t)hy_pool_blocks(n, SORT_GRAIN));
    if (!a || !b || !out || !count) {
        free(a);
        free(b);
        free(out);
        free(count);
        return 0;
    }
    sort_ctx c = {l->items, a, b, out, count, 0, 0};
    hy_pool_for(pool, n, SORT_GRAIN, keys_block, &c);
    for (c.high = 0; c.high < 2; c.high++)
        for (c.shift = 0; c.shift < 64; c.shift += 8)
            if (radix_pass(&c, pool, n)) {
                sort_rec* t = c.src;
                c.src = c.dst;
                c.dst = t;
            }
    hy_pool_for(pool, n, SORT_GRAIN, gather_block, &c);
    const sort_rec* src = c.src;
    /* equal keys (the same pair found twice) by toi: insertion sort of
     * each run, which holds one or two records */
    for (int64_t i = 1; i < n; i++) {
        if (src[i].hi != src[i - 1].hi || src[i].lo != src[i - 1].lo) continue;
        hy_contact ct = out[i];
        int64_t j = i;
        while (j > 0 && src[j - 1].hi == src[i].hi && src[j - 1].lo == src[i].lo && out[j - 1].toi > ct.toi) {
            out[j] = out[j - 1];
            j--;
        }
        out[j] = ct;
    }
    /* the sorted list replaces the items (the old buffer is freed) */
    free(l->items);
    l->items = out;
    l->capacity = n;
    free(a);
    free(b);
    free(count);
    return 1;
}

void hy_contacts_canonicalize(hy_contact_list* l, hy_pool* pool) {
    if (l->count == 0) return;
    if (!radix_sort(l, pool)) {
        for (int64_t i = 0; i < l->count; i++) canonical(&l->items[i]);
        qsort(l->items, (size_t)l->count, sizeof *l->items, compare);
    }
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
