/* 64-bit FNV-1a: the state hash's (hy_world_hash) and the recordings'
 * (engine/export.c, collision/frames.c). */
#ifndef HY_CORE_HASH_H
#define HY_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a of n bytes, continuing from h (start from HY_FNV1A_INIT). */
#define HY_FNV1A_INIT 14695981039346656037ull
uint64_t hy_fnv1a(uint64_t h, const void* data, size_t n);

#endif
