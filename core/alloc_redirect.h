/* Forced into every library source by the build (-include, CMakeLists.txt):
 * the C library's allocation calls become the hy_mem_* ones of
 * core/alloc.c, so every block hyphys allocates for itself comes from the
 * allocator hy_set_allocator installed (the C library's by default) without
 * each module naming it. The standard headers are included first, so their
 * declarations keep their names. Memory that a third-party library
 * allocates and frees itself (cJSON, CHOLMOD, OpenBLAS, the CUDA runtime)
 * and the CUDA sources (compiled apart) are not routed. */
#ifndef HY_CORE_ALLOC_REDIRECT_H
#define HY_CORE_ALLOC_REDIRECT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#include "core/alloc.h"

#define malloc(n) hy_mem_alloc(n)
#define calloc(n, size) hy_mem_calloc(n, size)
#define realloc(p, n) hy_mem_realloc(p, n)
#define free(p) hy_mem_free(p)
#define aligned_alloc(alignment, n) hy_mem_aligned(alignment, n)
#define strdup(s) hy_mem_strdup(s)
#define getline(line, cap, f) hy_mem_getline(line, cap, f)

#endif
