/* Tests the canonical contact order (collision/contact.c): lists with
 * repeated pairs, ties broken by time of impact, vertex indices across the
 * whole int32 range and both contact types come out as the reference
 * comparison orders them, with the earliest of each repeated pair kept,
 * sorted on one thread or on pools of two and three. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collision/contact.h"
#include "test.h"

/* The order hy_contacts_canonicalize promises: (type, v[0..3], toi). */
static int reference(const void* pa, const void* pb) {
    const hy_contact *a = pa, *b = pb;
    if (a->type != b->type) return a->type < b->type ? -1 : 1;
    for (int k = 0; k < 4; k++)
        if (a->v[k] != b->v[k]) return a->v[k] < b->v[k] ? -1 : 1;
    return (a->toi > b->toi) - (a->toi < b->toi);
}

static uint64_t rng = 88172645463325252ull;
static uint32_t next(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (uint32_t)(rng >> 16);
}

/* A contact already in canonical vertex order, so that the reference sort
 * alone gives the expected list. */
static hy_contact random_contact(int32_t range) {
    hy_contact c;
    c.type = (int32_t)(next() & 1);
    for (int k = 0; k < 4; k++) c.v[k] = (int32_t)(next() % (uint32_t)range);
    if (c.type == HY_CONTACT_VF) {
        /* face vertices ascending */
        for (int i = 1; i < 4; i++)
            for (int j = i + 1; j < 4; j++)
                if (c.v[j] < c.v[i]) {
                    int32_t t = c.v[i];
                    c.v[i] = c.v[j];
                    c.v[j] = t;
                }
    } else {
        if (c.v[1] < c.v[0]) {
            int32_t t = c.v[0];
            c.v[0] = c.v[1];
            c.v[1] = t;
        }
        if (c.v[3] < c.v[2]) {
            int32_t t = c.v[2];
            c.v[2] = c.v[3];
            c.v[3] = t;
        }
        if (c.v[2] < c.v[0] || (c.v[2] == c.v[0] && c.v[3] < c.v[1])) {
            int32_t t0 = c.v[0], t1 = c.v[1];
            c.v[0] = c.v[2];
            c.v[1] = c.v[3];
            c.v[2] = t0;
            c.v[3] = t1;
        }
    }
    c.toi = (double)(next() % 1000) / 999.0;
    return c;
}

/* The list sorted on a pool of `threads` (1: no pool): the sort's blocks
 * run on several threads for lists longer than a block. */
static void check_list_on(int64_t n, int32_t range, int repeats, int threads) {
    hy_contact_list l = {0};
    int pushed = 1;
    for (int64_t i = 0; i < n; i++) {
        hy_contact c = random_contact(range);
        pushed &= hy_contact_push(&l, c);
        /* the same pair again, later or earlier */
        for (int r = 0; r < repeats; r++) {
            c.toi = (double)(next() % 1000) / 999.0;
            pushed &= hy_contact_push(&l, c);
        }
    }
    CHECK(pushed);
    hy_contact* want = malloc(sizeof *want * (size_t)l.count);
    memcpy(want, l.items, sizeof *want * (size_t)l.count);
    qsort(want, (size_t)l.count, sizeof *want, reference);
    int64_t kept = 0;
    for (int64_t i = 0; i < l.count; i++)
    {
        const hy_contact* p = kept ? &want[kept - 1] : NULL;
        if (p && p->type == want[i].type && !memcmp(p->v, want[i].v, sizeof p->v)) continue; /* a later toi */
        want[kept++] = want[i];
    }
    hy_pool* pool = threads > 1 ? hy_pool_create(threads) : NULL;
    hy_contacts_canonicalize(&l, pool);
    hy_pool_destroy(pool);
    CHECK(l.count == kept);
    int64_t same = 0;
    for (int64_t i = 0; i < kept && i < l.count; i++)
        same += l.items[i].type == want[i].type && !memcmp(l.items[i].v, want[i].v, sizeof want[i].v) &&
                l.items[i].toi == want[i].toi;
    CHECK(same == kept);
    free(want);
    hy_contact_list_free(&l);
}

static void check_list(int64_t n, int32_t range, int repeats) {
    for (int threads = 1; threads <= 3; threads++) {
        uint64_t seed = rng;
        check_list_on(n, range, repeats, threads);
        if (threads < 3) rng = seed; /* the same list on each pool */
    }
}

int main(void) {
    check_list(1, 10, 0);
    check_list(2000, 50, 2);          /* many repeated pairs and ties */
    check_list(50000, 1 << 20, 0);    /* few repeats, wide indices */
    check_list(20000, 2147483647, 1); /* the whole int32 range */
    /* vertices in arbitrary order are put in canonical order first */
    hy_contact_list l = {0};
    hy_contact c = {HY_CONTACT_VF, {7, 9, 3, 5}, 0.5};
    CHECK(hy_contact_push(&l, c));
    hy_contact e = {HY_CONTACT_EE, {9, 8, 2, 1}, 0.25};
    CHECK(hy_contact_push(&l, e));
    hy_contacts_canonicalize(&l, NULL);
    CHECK(l.count == 2);
    CHECK(l.items[0].type == HY_CONTACT_VF && l.items[0].v[0] == 7 && l.items[0].v[1] == 3 && l.items[0].v[2] == 5 &&
          l.items[0].v[3] == 9);
    CHECK(l.items[1].type == HY_CONTACT_EE && l.items[1].v[0] == 1 && l.items[1].v[1] == 2 && l.items[1].v[2] == 8 &&
          l.items[1].v[3] == 9);
    hy_contact_list_free(&l);
    TEST_END();
}
