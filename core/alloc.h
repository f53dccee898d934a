/* The library's allocation calls (core/alloc_redirect.h puts them in place
 * of the C library's): the allocator of hy_set_allocator when one is set,
 * the C library's otherwise, and a count of the blocks live. Same contracts
 * as malloc, calloc, realloc, free, aligned_alloc, strdup and getline. */
#ifndef HY_CORE_ALLOC_H
#define HY_CORE_ALLOC_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

void* hy_mem_alloc(size_t n);
void* hy_mem_calloc(size_t n, size_t size);
void* hy_mem_realloc(void* p, size_t n);
void hy_mem_free(void* p);
void* hy_mem_aligned(size_t alignment, size_t n);
char* hy_mem_strdup(const char* s);
ssize_t hy_mem_getline(char** line, size_t* cap, FILE* f);

#endif
