/* The CPU worker pool: the `cpu` resource of the hybrid framework.
 *
 * hy_pool_for splits [0, n) into fixed blocks of `grain` items (the split
 * does not depend on the thread count) and runs fn once per block. Each
 * worker starts with a contiguous run of blocks and, when it runs dry,
 * steals the upper half of the largest remaining run of another worker.
 * Because blocks are fixed, a caller that writes per-block partial results
 * and combines them in block order gets bit-identical output for any
 * number of threads.
 *
 * Threads: one hy_pool_for at a time per pool, called from one thread; the
 * calling thread works as worker 0. */
#ifndef HY_CORE_POOL_H
#define HY_CORE_POOL_H

#include <stdint.h>

typedef struct hy_pool hy_pool;

/* fn(ctx, begin, end, block, worker): items [begin, end) of block `block`. */
typedef void (*hy_block_fn)(void* ctx, int64_t begin, int64_t end, int64_t block, int worker);

/* threads >= 1: the total including the caller; 0 = one per online core. */
hy_pool* hy_pool_create(int threads);
/* A pool whose loops run on the host's task system (hy_world_def's
 * enqueue_task / finish_task; types in hyphys/hyphys.h): `workers` is the
 * host's worker count, the range of the worker index a block is given.
 * Blocks are the host's items, so results do not depend on its split. */
struct hy_pool_tasks {
    void* (*enqueue)(void (*task)(int64_t, int64_t, int32_t, void*), int64_t item_count, int64_t min_range,
                     void* task_context, void* user_context);
    void (*finish)(void* user_task, void* user_context);
    void* user_context;
};
hy_pool* hy_pool_create_tasks(int workers, const struct hy_pool_tasks* tasks);
void hy_pool_destroy(hy_pool* pool);
int hy_pool_size(const hy_pool* pool);
/* Number of blocks hy_pool_for(pool, n, grain, ...) will run. */
static inline int64_t hy_pool_blocks(int64_t n, int64_t grain) { return n <= 0 ? 0 : (n + grain - 1) / grain; }
void hy_pool_for(hy_pool* pool, int64_t n, int64_t grain, hy_block_fn fn, void* ctx);
/* Blocks stolen since creation (for stats). */
int64_t hy_pool_steals(const hy_pool* pool);

#endif
