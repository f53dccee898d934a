/* Allocation table with per-device copies and valid bits (see table.h). */
#include "table.h"

#include <stdlib.h>
#include <string.h>

typedef struct block {
    char* base; /* the program's pointer, on `home` */
    size_t size;
    int home;
    unsigned valid; /* bit d: the copy on device d holds the current data */
    void* copy[HY_ICPT_MAX_DEVICES];
} block;

struct hy_icpt_table {
    hy_icpt_mem_ops ops;
    block* blocks; /* sorted by base; blocks never overlap */
    size_t count, cap;
    hy_icpt_table_stats stats;
};

hy_icpt_table* hy_icpt_table_create(const hy_icpt_mem_ops* ops) {
    hy_icpt_table* t = calloc(1, sizeof *t);
    if (t) t->ops = *ops;
    return t;
}

static void free_replicas(hy_icpt_table* t, block* b) {
    for (int d = 0; d < HY_ICPT_MAX_DEVICES; d++)
        if (d != b->home && b->copy[d]) t->ops.free(t->ops.ctx, d, b->copy[d]);
}

void hy_icpt_table_destroy(hy_icpt_table* t) {
    if (!t) return;
    for (size_t i = 0; i < t->count; i++) free_replicas(t, &t->blocks[i]);
    free(t->blocks);
    free(t);
}

/* index of the first block whose base is > p */
static size_t upper(const hy_icpt_table* t, const void* p) {
    size_t lo = 0, hi = t->count;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if ((const char*)t->blocks[mid].base <= (const char*)p)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static block* find(const hy_icpt_table* t, const void* p) {
    size_t i = upper(t, p);
    if (i == 0) return NULL;
    block* b = &t->blocks[i - 1];
    return (const char*)p < b->base + b->size ? b : NULL;
}

int hy_icpt_table_add(hy_icpt_table* t, void* base, size_t size, int home) {
    if (home < 0 || home >= HY_ICPT_MAX_DEVICES || !base) return 1;
    /* a block the runtime handed out again after a free we did not see */
    hy_icpt_table_remove(t, base);
    if (t->count == t->cap) {
        size_t cap = t->cap ? 2 * t->cap : 64;
        block* nb = realloc(t->blocks, cap * sizeof *nb);
        if (!nb) return 1;
        t->blocks = nb;
        t->cap = cap;
    }
    size_t i = upper(t, base);
    memmove(&t->blocks[i + 1], &t->blocks[i], (t->count - i) * sizeof *t->blocks);
    block* b = &t->blocks[i];
    memset(b, 0, sizeof *b);
    b->base = base;
    b->size = size ? size : 1;
    b->home = home;
    b->valid = 1u << home;
    b->copy[home] = base;
    t->count++;
    return 0;
}

int hy_icpt_table_remove(hy_icpt_table* t, const void* base) {
    block* b = find(t, base);
    if (!b || b->base != (const char*)base) return 0;
    free_replicas(t, b);
    size_t i = (size_t)(b - t->blocks);
    memmove(&t->blocks[i], &t->blocks[i + 1], (t->count - i - 1) * sizeof *t->blocks);
    t->count--;
    return 1;
}

void* hy_icpt_table_acquire(hy_icpt_table* t, const void* p, int device, int write, int* err) {
    *err = 0;
    block* b = find(t, p);
    if (!b) return NULL;
    if (device < 0) device = b->home;
    if (device >= HY_ICPT_MAX_DEVICES) {
        *err = 1;
        return NULL;
    }
    unsigned bit = 1u << device;
    if (!(b->valid & bit)) {
        /* allocate the copy on first use, then fill it from a valid copy, the
         * home one when it is valid (a block is never without a valid copy) */
        if (!b->copy[device]) {
            void* c = NULL;
            if ((*err = t->ops.alloc(t->ops.ctx, device, b->size, &c)) != 0) return NULL;
            b->copy[device] = c;
            t->stats.replicas++;
        }
        int src = b->home;
        if (!(b->valid & (1u << src)))
            for (src = 0; !(b->valid & (1u << src)); src++) {
            }
        if ((*err = t->ops.copy(t->ops.ctx, b->copy[device], device, b->copy[src], src, b->size)) != 0) return NULL;
        b->valid |= bit;
        t->stats.copies++;
        t->stats.bytes += b->size;
    }
    if (write) b->valid = bit;
    return (char*)b->copy[device] + ((const char*)p - b->base);
}

unsigned hy_icpt_table_valid(const hy_icpt_table* t, const void* p) {
    const block* b = find(t, p);
    return b ? b->valid : 0;
}

void hy_icpt_table_get_stats(const hy_icpt_table* t, hy_icpt_table_stats* out) { *out = t->stats; }
