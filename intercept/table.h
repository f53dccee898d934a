/* The interceptor's allocation table: every cudaMalloc block the program made,
 * its home device (where the program's pointer lives), a copy per other
 * device made on demand, and one valid bit per device.
 *
 * It is the interceptor's own stand-in for the runtime's data layer (data
 * handles with per-memory copies and valid bits): the interceptor only calls
 * the functions below, so that layer can take its place without the launch
 * code changing. Memory is reached through hy_icpt_mem_ops, so the table
 * knows nothing of CUDA and is tested with any allocator.
 *
 * Not thread-safe: the caller holds one lock around every call. */
#ifndef HY_INTERCEPT_TABLE_H
#define HY_INTERCEPT_TABLE_H

#include <stddef.h>

#define HY_ICPT_MAX_DEVICES 32

/* Device memory primitives. Each returns 0 on success, nonzero (the
 * runtime's error code) on failure. */
typedef struct hy_icpt_mem_ops {
    int (*alloc)(void* ctx, int device, size_t size, void** out);
    int (*free)(void* ctx, int device, void* ptr);
    int (*copy)(void* ctx, void* dst, int dst_device, const void* src, int src_device, size_t size);
    void* ctx;
} hy_icpt_mem_ops;

typedef struct hy_icpt_table hy_icpt_table;

/* Counters, for the interceptor's report. */
typedef struct hy_icpt_table_stats {
    unsigned long long copies; /* device-to-device copies made stale copies valid */
    unsigned long long bytes; /* bytes those copies moved */
    unsigned long long replicas; /* copies allocated on a device other than home */
} hy_icpt_table_stats;

hy_icpt_table* hy_icpt_table_create(const hy_icpt_mem_ops* ops);
/* Frees every replica (never the home blocks: the program owns those). */
void hy_icpt_table_destroy(hy_icpt_table* t);

/* A block of `size` bytes at `base` on `home`, valid there only. 0, or
 * nonzero when out of memory or `home` is out of range. */
int hy_icpt_table_add(hy_icpt_table* t, void* base, size_t size, int home);

/* Forgets the block that starts at `base` and frees its replicas. Returns 1
 * when it was known, 0 otherwise (the program may free what it did not get
 * from cudaMalloc: that is the runtime's business). */
int hy_icpt_table_remove(hy_icpt_table* t, const void* base);

/* The address of `p` on `device` (a negative `device`: the block's home), the
 * block's copy there made valid first
 * (allocated and filled from a valid copy as needed). With `write`, every
 * other copy becomes stale. `p` may point inside a block. Returns NULL when
 * `p` lies in no known block, and sets *err (0 or the failing primitive's
 * code; on failure the block's state is unchanged). */
void* hy_icpt_table_acquire(hy_icpt_table* t, const void* p, int device, int write, int* err);

/* Valid bits of the block holding `p` (bit d: device d), 0 when unknown. */
unsigned hy_icpt_table_valid(const hy_icpt_table* t, const void* p);

void hy_icpt_table_get_stats(const hy_icpt_table* t, hy_icpt_table_stats* out);

#endif
