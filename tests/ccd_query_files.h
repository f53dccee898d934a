/* The files of the shared CCD query set (HY_DATA_DIR/ccd-queries/SET/
 * {edge-edge,vertex-face}/NAME.csv), for the tests that walk all of them. */
#ifndef HY_TESTS_CCD_QUERY_FILES_H
#define HY_TESTS_CCD_QUERY_FILES_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static inline int hy_test_cmp_name(const void* a, const void* b) {
    return strcmp(*(char* const*)a, *(char* const*)b);
}

/* Names in directory `dir` (not starting with '.'; with suffix, only those
 * ending in it), sorted; *n of them, NULL when the directory cannot be
 * read. Free each and the array. */
static inline char** hy_test_sorted_names(const char* dir, const char* suffix, int* n) {
    *n = 0;
    DIR* d = opendir(dir);
    if (!d) return NULL;
    char** v = NULL;
    int cap = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL) {
        size_t len = strlen(e->d_name), sl = suffix ? strlen(suffix) : 0;
        if (e->d_name[0] == '.' || len < sl || (sl && strcmp(e->d_name + len - sl, suffix) != 0)) continue;
        if (*n == cap) {
            int nc = cap ? 2 * cap : 64;
            char** nv = realloc(v, sizeof *v * (size_t)nc);
            if (!nv) break;
            v = nv;
            cap = nc;
        }
        v[(*n)++] = strdup(e->d_name);
    }
    closedir(d);
    if (*n) qsort(v, (size_t)*n, sizeof *v, hy_test_cmp_name);
    return v ? v : (char**)calloc(1, sizeof(char*));
}

/* fn(ctx, path, is_vf) for every CSV file of the set, sets and files in
 * name order (so the walk does not depend on the file system); returns 0
 * when the set is not there (nothing called). */
static inline int hy_test_each_query_file(void (*fn)(void* ctx, const char* path, int is_vf), void* ctx) {
    char root[4096];
    snprintf(root, sizeof root, "%s/ccd-queries", HY_DATA_DIR);
    int ns = 0;
    char** sets = hy_test_sorted_names(root, NULL, &ns);
    if (!sets) return 0;
    for (int s = 0; s < ns; s++) {
        for (int is_vf = 0; is_vf < 2; is_vf++) {
            char dir[8192];
            snprintf(dir, sizeof dir, "%s/%s/%s", root, sets[s], is_vf ? "vertex-face" : "edge-edge");
            int nf = 0;
            char** files = hy_test_sorted_names(dir, ".csv", &nf);
            for (int i = 0; i < nf; i++) {
                char path[12288];
                snprintf(path, sizeof path, "%s/%s", dir, files[i]);
                fn(ctx, path, is_vf);
                free(files[i]);
            }
            free(files);
        }
        free(sets[s]);
    }
    free(sets);
    return 1;
}

#endif
