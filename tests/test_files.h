/* Small file helpers the tests share: writing a text file, reading one
 * whole (for the traces they parse back). */
#ifndef HY_TESTS_TEST_FILES_H
#define HY_TESTS_TEST_FILES_H

#include <stdio.h>
#include <stdlib.h>

/* 1 when `text` was written to path. */
static inline int hy_test_write_file(const char* path, const char* text) {
    FILE* f = fopen(path, "w");
    if (!f) return 0;
    fputs(text, f);
    return fclose(f) == 0;
}

/* The whole file, NUL-terminated, to free; NULL when it cannot be read. */
static inline char* hy_test_read_file(const char* path) {
    FILE* f = fopen(path, "rb");
    if (!f) return NULL;
    size_t cap = 1 << 16, n = 0;
    char* text = malloc(cap);
    for (size_t got; text && (got = fread(text + n, 1, cap - 1 - n, f)) > 0;) {
        n += got;
        if (n + 1 == cap) {
            char* t = realloc(text, 2 * cap);
            if (!t) free(text);
            text = t;
            cap *= 2;
        }
    }
    fclose(f);
    if (text) text[n] = 0;
    return text;
}

#endif
