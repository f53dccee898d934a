/* The allocator hook (hy_set_allocator) and the library's allocation calls
 * (core/alloc.h), which core/alloc_redirect.h puts in place of the C
 * library's in every library source.
 *
 * With no allocator set, each call is the C library's own, so blocks are
 * exactly what they were. With one, a block is taken from it with room
 * for a small header just before the pointer handed out: the header says
 * where the caller's block starts (to give it back) and how many bytes are
 * in use (realloc copies them). The two kinds of block cannot be mixed, so
 * the allocator may change only while hyphys holds no block: a count of
 * live blocks says when. */
#include "core/alloc.h"

/* this file is the one that calls the C library */
#undef malloc
#undef calloc
#undef realloc
#undef free
#undef aligned_alloc
#undef strdup
#undef getline

#include <errno.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "hyphys/hyphys.h"

static hy_alloc_fn* g_alloc;
static hy_free_fn* g_free;
static void* g_user;
static atomic_llong g_blocks;

typedef struct header {
    size_t size;   /* bytes asked for */
    size_t offset; /* from the caller's block to the pointer handed out */
} header;

enum { MIN_ALIGN = 16 };
_Static_assert(sizeof(header) <= MIN_ALIGN, "the header fits in the smallest alignment");

static void* counted(void* p) {
    if (p) atomic_fetch_add_explicit(&g_blocks, 1, memory_order_relaxed);
    return p;
}

/* A block of n bytes aligned to `alignment` from the caller's allocator. */
static void* hooked(size_t alignment, size_t n) {
    if (alignment < MIN_ALIGN) alignment = MIN_ALIGN;
    if (n > SIZE_MAX - alignment) return NULL;
    unsigned char* raw = g_alloc(n + alignment, alignment, g_user);
    if (!raw) return NULL;
    unsigned char* p = raw + alignment;
    header* h = (header*)(void*)p - 1;
    h->size = n;
    h->offset = alignment;
    return p;
}

static header* header_of(void* p) { return (header*)p - 1; }

void* hy_mem_alloc(size_t n) { return counted(g_alloc ? hooked(MIN_ALIGN, n) : malloc(n)); }

void* hy_mem_calloc(size_t n, size_t size) {
    if (!g_alloc) return counted(calloc(n, size));
    if (size != 0 && n > SIZE_MAX / size) return NULL;
    void* p = hooked(MIN_ALIGN, n * size);
    if (p) memset(p, 0, n * size);
    return counted(p);
}

void* hy_mem_aligned(size_t alignment, size_t n) {
    return counted(g_alloc ? hooked(alignment, n) : aligned_alloc(alignment, n));
}

void hy_mem_free(void* p) {
    if (!p) return;
    atomic_fetch_sub_explicit(&g_blocks, 1, memory_order_relaxed);
    if (!g_alloc) {
        free(p);
        return;
    }
    g_free((unsigned char*)p - header_of(p)->offset, g_user);
}

/* realloc(p, 0) frees p and answers NULL, as glibc's does. */
void* hy_mem_realloc(void* p, size_t n) {
    if (!p) return hy_mem_alloc(n);
    if (n == 0) {
        hy_mem_free(p);
        return NULL;
    }
    if (!g_alloc) return realloc(p, n);
    const header* h = header_of(p);
    void* q = hooked(h->offset, n);
    if (!q) return NULL;
    memcpy(q, p, h->size < n ? h->size : n);
    g_free((unsigned char*)p - h->offset, g_user);
    return q;
}

char* hy_mem_strdup(const char* s) {
    size_t n = strlen(s) + 1;
    char* p = hy_mem_alloc(n);
    if (p) memcpy(p, s, n);
    return p;
}

/* getline's contract, the buffer grown through hy_mem_realloc. */
ssize_t hy_mem_getline(char** line, size_t* cap, FILE* f) {
    if (!line || !cap || !f) {
        errno = EINVAL;
        return -1;
    }
    if (!*line) *cap = 0;
    size_t n = 0;
    int c = EOF;
    flockfile(f);
    for (;;) {
        c = getc_unlocked(f);
        if (c == EOF) break;
        if (n + 2 > *cap) {
            size_t grown = *cap ? 2 * *cap : 128;
            char* p = hy_mem_realloc(*line, grown);
            if (!p) {
                funlockfile(f);
                errno = ENOMEM;
                return -1;
            }
            *line = p;
            *cap = grown;
        }
        (*line)[n++] = (char)c;
        if (c == '\n') break;
    }
    funlockfile(f);
    if (n == 0) return -1; /* end of file (or a read error: ferror says) */
    (*line)[n] = '\0';
    return (ssize_t)n;
}

HY_API hy_status hy_set_allocator(hy_alloc_fn* alloc, hy_free_fn* free_fn, void* user_context) {
    if (!alloc != !free_fn)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_set_allocator: alloc and free go together: %s is NULL",
                       alloc ? "free" : "alloc");
    long long live = atomic_load(&g_blocks);
    if (live != 0)
        return hy_fail(HY_ERR_INVALID_ARG,
                       "hy_set_allocator: hyphys holds %lld blocks: set the allocator before anything is created "
                       "(or once all is destroyed)",
                       live);
    g_alloc = alloc;
    g_free = free_fn;
    g_user = alloc ? user_context : NULL;
    return HY_OK;
}

HY_API hy_status hy_get_allocation_count(int64_t* out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "hy_get_allocation_count: out is NULL");
    *out = atomic_load(&g_blocks);
    return HY_OK;
}
