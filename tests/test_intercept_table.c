/* Tests the CUDA interceptor's allocation table (intercept/table.c) over a
 * fake device memory (host blocks, counted): a copy is made on a device only
 * when it is stale there, from a valid copy; a write leaves one valid copy;
 * pointers inside a block map to the same offset; a failing allocation or
 * copy leaves the block as it was; removal frees every replica and never the
 * program's own block. */
#include <stdlib.h>
#include <string.h>

#include "intercept/table.h"
#include "test.h"

typedef struct fake {
    int allocs, frees, copies;
    int fail_alloc, fail_copy; /* the next call fails with this code */
    int last_src, last_dst;
} fake;

/* the failure armed in *slot, disarmed */
static int take(int* slot) {
    int e = *slot;
    *slot = 0;
    return e;
}

static int fake_alloc(void* ctx, int device, size_t size, void** out) {
    fake* f = ctx;
    int e = take(&f->fail_alloc);
    if (e) return e;
    f->allocs++;
    *out = malloc(size);
    return 0;
}

static int fake_free(void* ctx, int device, void* p) {
    ((fake*)ctx)->frees++;
    free(p);
    return 0;
}

static int fake_copy(void* ctx, void* dst, int dst_device, const void* src, int src_device, size_t size) {
    fake* f = ctx;
    int e = take(&f->fail_copy);
    if (e) return e;
    f->copies++;
    f->last_src = src_device;
    f->last_dst = dst_device;
    memcpy(dst, src, size);
    return 0;
}

int main(void) {
    fake f = {0};
    hy_icpt_mem_ops ops = {fake_alloc, fake_free, fake_copy, &f};
    hy_icpt_table* t = hy_icpt_table_create(&ops);
    CHECK(t != NULL);
    if (!t) TEST_END();
    enum { N = 64 };
    static int mem[2 * N]; /* two adjacent blocks: a's end is b's start */
    int *a = mem, *b = mem + N;
    for (int i = 0; i < N; i++) a[i] = i, b[i] = -i;
    CHECK(hy_icpt_table_add(t, a, N * sizeof(int), 0) == 0);
    CHECK(hy_icpt_table_add(t, b, N * sizeof(int), 1) == 0);
    CHECK(hy_icpt_table_add(t, a + N, 4, HY_ICPT_MAX_DEVICES) != 0); /* no such device */
    CHECK(hy_icpt_table_valid(t, a) == 1u);
    CHECK(hy_icpt_table_valid(t, b + 5) == 2u);
    CHECK(hy_icpt_table_valid(t, a + N - 1) == 1u && hy_icpt_table_valid(t, a + N) == 2u);
    CHECK(hy_icpt_table_valid(t, b + N) == 0u);

    /* unknown pointer: NULL, no error, nothing done */
    int err = -1, other = 0;
    CHECK(hy_icpt_table_acquire(t, &other, 1, 1, &err) == NULL && err == 0);
    CHECK(f.allocs == 0 && f.copies == 0);

    /* read a on device 2: a replica with a's data; both valid */
    int* a2 = hy_icpt_table_acquire(t, a + 3, 2, 0, &err);
    CHECK(err == 0 && a2 != NULL && a2 != a + 3);
    CHECK(f.allocs == 1 && f.copies == 1 && f.last_src == 0 && f.last_dst == 2);
    CHECK(a2 && a2[0] == 3 && a2[-3] == 0 && a2[N - 4] == N - 1); /* same offset inside the block */
    CHECK(hy_icpt_table_valid(t, a) == 5u);
    /* again: valid there, no copy */
    CHECK(hy_icpt_table_acquire(t, a, 2, 0, &err) == a2 - 3 && f.copies == 1);

    /* write on device 2: only that copy valid; home read brings it back */
    int* w = hy_icpt_table_acquire(t, a, 2, 1, &err);
    CHECK(hy_icpt_table_valid(t, a) == 4u && f.copies == 1);
    if (w) w[7] = 700;
    CHECK(hy_icpt_table_acquire(t, a + 7, -1, 0, &err) == a + 7);
    CHECK(a[7] == 700 && f.copies == 2 && f.last_src == 2 && f.last_dst == 0);
    CHECK(hy_icpt_table_valid(t, a) == 5u);

    /* write on home: device 2 stale; its next use copies from home, no new replica */
    CHECK(hy_icpt_table_acquire(t, a, -1, 1, &err) == a);
    a[8] = 800;
    CHECK(hy_icpt_table_valid(t, a) == 1u);
    int* again = hy_icpt_table_acquire(t, a, 2, 0, &err);
    CHECK(again == a2 - 3 && again && again[8] == 800 && f.allocs == 1 && f.copies == 3);

    /* a stale home is filled from the valid copy when the block moves on:
     * b written on device 3, then read on device 0 comes from device 3 */
    CHECK(hy_icpt_table_acquire(t, b, 3, 1, &err) != NULL && hy_icpt_table_valid(t, b) == 8u);
    CHECK(hy_icpt_table_acquire(t, b, 0, 0, &err) != NULL && f.last_src == 3 && f.last_dst == 0);

    /* failures: the block's state does not change */
    f.fail_alloc = 2;
    CHECK(hy_icpt_table_acquire(t, a, 4, 1, &err) == NULL && err == 2);
    CHECK(hy_icpt_table_valid(t, a) == 5u);
    f.fail_copy = 9;
    CHECK(hy_icpt_table_acquire(t, a, 4, 1, &err) == NULL && err == 9);
    CHECK(hy_icpt_table_valid(t, a) == 5u);
    CHECK(hy_icpt_table_acquire(t, a, 4, 0, &err) != NULL && err == 0 && hy_icpt_table_valid(t, a) == 21u);

    hy_icpt_table_stats s;
    hy_icpt_table_get_stats(t, &s);
    CHECK(s.replicas == 4 && s.copies == (unsigned long long)f.copies &&
          s.bytes == (unsigned long long)f.copies * N * sizeof(int));

    /* removal: only the base removes, replicas are freed, the home block is not */
    CHECK(hy_icpt_table_remove(t, a + 1) == 0);
    CHECK(hy_icpt_table_remove(t, a) == 1 && f.frees == 2);
    CHECK(hy_icpt_table_valid(t, a) == 0u && hy_icpt_table_acquire(t, a, 2, 0, &err) == NULL);
    CHECK(a[7] == 700 && b[5] == -5);
    hy_icpt_table_destroy(t); /* b's replicas on 0 and 3 */
    CHECK(f.frees == 4 && f.allocs == 4);
    TEST_END();
}
