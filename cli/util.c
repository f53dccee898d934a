#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli/cli.h"

int hy_cli_parse_int(const char* option, const char* text, long lo, long hi, long* out) {
    if (!text) {
        fprintf(stderr, "hyphys: %s needs a value\n", option);
        return 0;
    }
    char* end = NULL;
    errno = 0;
    long v = strtol(text, &end, 10);
    if (errno || end == text || *end != '\0' || v < lo || v > hi) {
        fprintf(stderr, "hyphys: %s must be an integer in [%ld, %ld], got '%s'\n", option, lo, hi, text);
        return 0;
    }
    *out = v;
    return 1;
}

double hy_cli_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cmp_double(const void* a, const void* b) {
    double x = *(const double*)a, y = *(const double*)b;
    return (x > y) - (x < y);
}

double hy_cli_percentile(const double* v, int64_t n, double pct) {
    if (n <= 0) return 0.0;
    double* c = malloc(sizeof(double) * (size_t)n);
    if (!c) return 0.0;
    memcpy(c, v, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(double), cmp_double);
    double pos = pct / 100.0 * (double)(n - 1);
    int64_t i = (int64_t)pos;
    double f = pos - (double)i;
    double r = i + 1 < n ? c[i] * (1.0 - f) + c[i + 1] * f : c[n - 1];
    free(c);
    return r;
}

const char* hy_cli_data_dir(void) {
    const char* env = getenv("HY_DATA_DIR");
    if (env && *env) return env;
#ifdef HY_SOURCE_DIR
    static char path[4096];
    snprintf(path, sizeof path, "%s/../shared/data", HY_SOURCE_DIR);
    if (access(path, R_OK) == 0) return path;
#endif
    return "../shared/data";
}

/* Where bare scene names are looked up, in order: scenes/ under each. */
static void scene_roots(const char* roots[3]) {
    roots[0] = ".";
    roots[1] = roots[2] = NULL;
#ifdef HY_SOURCE_DIR
    roots[1] = HY_SOURCE_DIR;
#endif
#ifdef HY_SHARE_DIR
    roots[2] = HY_SHARE_DIR;
#endif
}

static int is_bare_name(const char* arg) {
    size_t n = strlen(arg);
    return !strchr(arg, '/') && !(n > 5 && strcmp(arg + n - 5, ".json") == 0);
}

const char* hy_cli_resolve_scene(const char* arg) {
    static char path[4096];
    if (!is_bare_name(arg)) return arg;
    const char* roots[3];
    scene_roots(roots);
    for (int i = 0; i < 3; i++) {
        if (!roots[i]) continue;
        snprintf(path, sizeof path, "%s/scenes/%s.json", roots[i], arg);
        if (access(path, R_OK) == 0) return path;
    }
    return arg;
}

static int cmp_str(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

const char* hy_cli_find_scene(const char* cmd, const char* arg) {
    const char* path = hy_cli_resolve_scene(arg);
    if (path != arg || !is_bare_name(arg) || access(arg, F_OK) == 0) return path;
    /* the names of every scenes/NAME.json there is, sorted, once each */
    enum { MAX_NAMES = 256 };
    char* names[MAX_NAMES];
    int count = 0;
    const char* roots[3];
    scene_roots(roots);
    for (int i = 0; i < 3; i++) {
        if (!roots[i]) continue;
        char dir[4096];
        snprintf(dir, sizeof dir, "%s/scenes", roots[i]);
        DIR* d = opendir(dir);
        if (!d) continue;
        for (struct dirent* e; (e = readdir(d)) != NULL && count < MAX_NAMES;) {
            size_t n = strlen(e->d_name);
            if (n <= 5 || strcmp(e->d_name + n - 5, ".json") != 0) continue;
            char* name = strndup(e->d_name, n - 5);
            if (!name) break;
            int seen = 0;
            for (int k = 0; k < count && !seen; k++) seen = !strcmp(names[k], name);
            if (seen) free(name);
            else names[count++] = name;
        }
        closedir(d);
    }
    qsort(names, (size_t)count, sizeof names[0], cmp_str);
    fprintf(stderr, "hyphys %s: no scene '%s': not a file, nor a scene in scenes/", cmd, arg);
    if (count == 0) fprintf(stderr, " (no scenes/ folder found; give the path of a .json file)");
    for (int k = 0; k < count; k++) {
        fprintf(stderr, "%s%s", k ? ", " : "; the scenes are: ", names[k]);
        free(names[k]);
    }
    fputc('\n', stderr);
    return NULL;
}

int hy_cli_writable_dir(const char* dir) {
    struct stat st;
    if (stat(dir, &st) != 0) return 0;
    if (!S_ISDIR(st.st_mode)) {
        errno = ENOTDIR;
        return 0;
    }
    return access(dir, W_OK) == 0;
}

int hy_cli_can_write(const char* path) {
    struct stat st;
    if (stat(path, &st) == 0) {
        if (S_ISDIR(st.st_mode)) {
            errno = EISDIR;
            return 0;
        }
        return access(path, W_OK) == 0;
    }
    if (errno != ENOENT) return 0;
    char dir[4096];
    snprintf(dir, sizeof dir, "%s", path);
    char* slash = strrchr(dir, '/');
    if (!slash) return hy_cli_writable_dir(".");
    if (slash == dir) slash[1] = '\0'; /* the root folder */
    else *slash = '\0';
    return hy_cli_writable_dir(dir);
}

int hy_cli_make_dirs(const char* path, int parent_only, const char* who) {
    char buf[4096];
    size_t n = strlen(path);
    if (n == 0 || n >= sizeof buf) {
        errno = n ? ENAMETOOLONG : ENOENT;
        if (who) fprintf(stderr, "%s: cannot create '%s': %s\n", who, path, strerror(errno));
        return 0;
    }
    memcpy(buf, path, n + 1);
    /* each prefix ending at a '/' (not the root), then the whole path */
    for (size_t i = 1; i <= n; i++) {
        if (buf[i] != '/' && (buf[i] != '\0' || parent_only)) continue;
        char c = buf[i];
        buf[i] = '\0';
        if (mkdir(buf, 0777) != 0 && errno != EEXIST) {
            if (who) {
                int e = errno;
                fprintf(stderr, "%s: cannot create '%s': %s\n", who, buf, strerror(e));
                errno = e;
            }
            return 0;
        }
        buf[i] = c;
    }
    return 1;
}

int hy_cli_is_tty(void) { return isatty(STDOUT_FILENO) || isatty(STDERR_FILENO); }

void hy_cli_json_string(FILE* f, const char* s) {
    fputc('"', f);
    for (const unsigned char* p = (const unsigned char*)(s ? s : ""); *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}
