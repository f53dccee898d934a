/* The worker pool: every item runs exactly once, blocks are fixed, and a
 * block-ordered reduction is bit-identical for 1..8 threads. */
#include <stdatomic.h>
#include <string.h>

#include "core/pool.h"
#include "test.h"

typedef struct ctx {
    atomic_int* hits;
    double* partial;
    const double* data;
} ctx;

static void visit(void* p, int64_t begin, int64_t end, int64_t block, int worker) {
    ctx* c = p;
    (void)worker;
    double s = 0.0;
    for (int64_t i = begin; i < end; i++) {
        atomic_fetch_add(&c->hits[i], 1);
        s += c->data[i] * c->data[i];
    }
    c->partial[block] = s;
}

int main(void) {
    enum { N = 100003 };
    static atomic_int hits[N];
    static double data[N], partial[N];
    /* fixed-seed LCG data with a wide dynamic range, so summation order matters */
    uint64_t x = 12345;
    for (int i = 0; i < N; i++) {
        x = x * 6364136223846793005ull + 1442695040888963407ull;
        data[i] = (double)(x >> 11) * 0x1.0p-53 * ((i % 7) ? 1.0 : 1e6);
    }
    double reference = 0.0;
    for (int threads = 1; threads <= 8; threads++) {
        hy_pool* pool = hy_pool_create(threads);
        CHECK(pool != NULL);
        CHECK(hy_pool_size(pool) == threads);
        for (int rep = 0; rep < 3; rep++) {
            for (int i = 0; i < N; i++) atomic_store(&hits[i], 0);
            ctx c = {hits, partial, data};
            int64_t grain = 97;
            hy_pool_for(pool, N, grain, visit, &c);
            int once = 1;
            for (int i = 0; i < N; i++) once &= atomic_load(&hits[i]) == 1;
            CHECK(once);
            double sum = 0.0;
            for (int64_t b = 0; b < hy_pool_blocks(N, grain); b++) sum += partial[b];
            if (threads == 1 && rep == 0) reference = sum;
            /* bit-identical, not just close: compare the representations */
            CHECK(memcmp(&sum, &reference, sizeof sum) == 0);
        }
        /* empty and tiny ranges */
        ctx c = {hits, partial, data};
        hy_pool_for(pool, 0, 10, visit, &c);
        for (int i = 0; i < 3; i++) atomic_store(&hits[i], 0);
        hy_pool_for(pool, 3, 1, visit, &c);
        CHECK(atomic_load(&hits[0]) == 1 && atomic_load(&hits[1]) == 1 && atomic_load(&hits[2]) == 1);
        hy_pool_destroy(pool);
    }
    TEST_END();
}
