/* hyphys ccd-eval: run the elementary CCD tests over query files with ground
 * truth (the shared Sample-Queries CSV format) and report false negatives,
 * false positives and cost per query. */
#include <cjson/cJSON.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli/cli.h"
#include "collision/ccd.h"

typedef struct query_set {
    double (*x)[8][3];
    int* truth;
    int count;
} query_set;

typedef struct file_result {
    char* path;
    int is_vf;
    long queries, positives, fn, fp;
    double ns_sum, ns_max;
} file_result;

typedef struct path_list {
    char** v;
    int n, cap;
} path_list;

static void help(void) {
    printf("usage: hyphys ccd-eval [--vf | --ee] [--json] [--repeats N] [--max-boxes N] PATH...\n\n"
           "Evaluate the conservative vertex-face / edge-edge CCD tests on query files\n"
           "(CSV: x_num,x_den,y_num,y_den,z_num,z_den,truth; 8 rows per query). A\n"
           "directory is walked recursively for *.csv. The test kind comes from the\n"
           "path (\"vertex-face\" or \"edge-edge\") unless --vf / --ee is given.\n\n"
           "Prints per file and in total: queries, positives (truth = 1), false\n"
           "negatives, false positives, mean ns per query and the slowest query.\n"
           "Each query's time is the minimum over --repeats trials (default 5) of a\n"
           "back-to-back pair of calls, so preemption does not inflate max_ns.\n\n"
           "  --vf, --ee       force the query kind for every file\n"
           "  --json           machine-readable output\n"
           "  --repeats N      timing trials per query (1..1000)\n"
           "  --max-boxes N    work cap of the box search (default 1200)\n\n"
           "exit: 0 ok, 1 a false negative was found, 2 bad usage or input\n");
}

static int path_push(path_list* l, const char* p) {
    if (l->n == l->cap) {
        int cap = l->cap ? 2 * l->cap : 16;
        char** nv = realloc(l->v, sizeof *nv * (size_t)cap);
        if (!nv) return 0;
        l->v = nv;
        l->cap = cap;
    }
    l->v[l->n] = strdup(p);
    if (!l->v[l->n]) return 0;
    l->n++;
    return 1;
}

static int cmp_str(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int ends_with(const char* s, const char* suffix) {
    size_t a = strlen(s), b = strlen(suffix);
    return a >= b && strcmp(s + a - b, suffix) == 0;
}

/* Collect *.csv under dir, sorted per directory so runs are reproducible. */
static int walk(const char* dir, path_list* out) {
    DIR* d = opendir(dir);
    if (!d) {
        fprintf(stderr, "hyphys ccd-eval: %s: %s\n", dir, strerror(errno));
        return 0;
    }
    path_list names = {0};
    struct dirent* ent;
    int ok = 1;
    while ((ent = readdir(d)) != NULL) {
        if (ent->d_name[0] == '.') continue;
        if (!path_push(&names, ent->d_name)) ok = 0;
    }
    closedir(d);
    if (names.n) qsort(names.v, (size_t)names.n, sizeof *names.v, cmp_str);
    for (int i = 0; i < names.n && ok; i++) {
        size_t len = strlen(dir) + strlen(names.v[i]) + 2;
        char* full = malloc(len);
        if (!full) {
            ok = 0;
            break;
        }
        snprintf(full, len, "%s/%s", dir, names.v[i]);
        struct stat sb;
        if (stat(full, &sb) == 0 && S_ISDIR(sb.st_mode))
            ok = walk(full, out);
        else if (ends_with(full, ".csv"))
            ok = path_push(out, full);
        free(full);
    }
    for (int i = 0; i < names.n; i++) free(names.v[i]);
    free(names.v);
    return ok;
}

/* An integer written in decimal (the numerators and denominators may exceed
 * 64 bits, so they are parsed as doubles: exact here, see the data README). */
static int parse_number(const char* tok, double* out) {
    const char* s = tok;
    while (*s == ' ' || *s == '\t') s++;
    const char* start = s;
    if (*s == '+' || *s == '-') s++;
    if (*s < '0' || *s > '9') return 0;
    while (*s >= '0' && *s <= '9') s++;
    const char* end = s;
    while (*s == ' ' || *s == '\t' || *s == '\r') s++;
    if (*s != '\0') return 0;
    char buf[512];
    size_t n = (size_t)(end - start);
    if (n >= sizeof buf) return 0;
    memcpy(buf, start, n);
    buf[n] = '\0';
    *out = strtod(buf, NULL);
    return 1;
}

/* Read one query file; on error print file:line and return 0. */
static int read_queries(const char* path, query_set* qs) {
    FILE* f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "hyphys ccd-eval: %s: %s\n", path, strerror(errno));
        return 0;
    }
    int cap = 0, rows = 0, ok = 1;
    qs->x = NULL;
    qs->truth = NULL;
    qs->count = 0;
    char line[4096];
    int lineno = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            fprintf(stderr, "hyphys ccd-eval: %s:%d: line too long\n", path, lineno);
            ok = 0;
            break;
        }
        while (len && (line[len - 1] == '\n' || line[len - 1] == '\r')) line[--len] = '\0';
        if (len == 0) continue;
        char* tok[8];
        int nt = 0;
        char* s = line;
        tok[nt++] = s;
        for (; *s; s++)
            if (*s == ',') {
                *s = '\0';
                if (nt < 8) tok[nt] = s + 1;
                nt++;
            }
        if (nt != 7) {
            fprintf(stderr, "hyphys ccd-eval: %s:%d: expected 7 comma-separated columns, got %d\n", path, lineno, nt);
            ok = 0;
            break;
        }
        double v[7];
        int bad = -1;
        for (int i = 0; i < 7; i++)
            if (!parse_number(tok[i], &v[i])) {
                bad = i;
                break;
            }
        if (bad >= 0) {
            fprintf(stderr, "hyphys ccd-eval: %s:%d: column %d is not an integer\n", path, lineno, bad + 1);
            ok = 0;
            break;
        }
        if (v[1] == 0.0 || v[3] == 0.0 || v[5] == 0.0) {
            fprintf(stderr, "hyphys ccd-eval: %s:%d: zero denominator\n", path, lineno);
            ok = 0;
            break;
        }
        if (v[6] != 0.0 && v[6] != 1.0) {
            fprintf(stderr, "hyphys ccd-eval: %s:%d: truth must be 0 or 1, got %g\n", path, lineno, v[6]);
            ok = 0;
            break;
        }
        int q = rows / 8, r = rows % 8;
        if (q >= cap) {
            int ncap = cap ? 2 * cap : 256;
            double(*nx)[8][3] = realloc(qs->x, sizeof *nx * (size_t)ncap);
            int* nt2 = nx ? realloc(qs->truth, sizeof *nt2 * (size_t)ncap) : NULL;
            if (nx) qs->x = nx;
            if (!nx || !nt2) {
                fprintf(stderr, "hyphys ccd-eval: %s: out of memory\n", path);
                ok = 0;
                break;
            }
            qs->truth = nt2;
            cap = ncap;
        }
        double c[3] = {v[0] / v[1], v[2] / v[3], v[4] / v[5]};
        for (int k = 0; k < 3; k++) {
            if (!isfinite(c[k])) {
                fprintf(stderr, "hyphys ccd-eval: %s:%d: coordinate %d is not finite\n", path, lineno, k + 1);
                ok = 0;
            }
            qs->x[q][r][k] = c[k];
        }
        if (!ok) break;
        int truth = v[6] != 0.0;
        if (r == 0)
            qs->truth[q] = truth;
        else if (qs->truth[q] != truth) {
            fprintf(stderr, "hyphys ccd-eval: %s:%d: truth %d differs from the query's first row (%d)\n", path, lineno,
                    truth, qs->truth[q]);
            ok = 0;
            break;
        }
        rows++;
    }
    if (ok && ferror(f)) {
        fprintf(stderr, "hyphys ccd-eval: %s: read error\n", path);
        ok = 0;
    }
    fclose(f);
    if (ok && rows % 8 != 0) {
        fprintf(stderr, "hyphys ccd-eval: %s:%d: %d data rows is not a multiple of 8 (8 rows per query)\n", path, lineno,
                rows);
        ok = 0;
    }
    if (ok && rows == 0) {
        fprintf(stderr, "hyphys ccd-eval: %s: no queries\n", path);
        ok = 0;
    }
    if (!ok) {
        free(qs->x);
        free(qs->truth);
        qs->x = NULL;
        qs->truth = NULL;
        return 0;
    }
    qs->count = rows / 8;
    return 1;
}

static double now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e9 * (double)ts.tv_sec + (double)ts.tv_nsec;
}

static void eval_file(const query_set* qs, int is_vf, const hy_ccd_options* opts, int repeats, file_result* r) {
    r->queries = qs->count;
    for (int q = 0; q < qs->count; q++) {
        double toi = 0.0;
        int hit = hy_ccd_query(is_vf, (const double(*)[3])qs->x[q], 0.0, opts, &toi, NULL);
        int truth = qs->truth[q];
        r->positives += truth;
        if (truth && !hit) r->fn++;
        if (!truth && hit) r->fp++;
        /* Min over trials of a back-to-back pair: robust to preemption. */
        double best = INFINITY;
        volatile int sink = 0;
        for (int rep = 0; rep < repeats; rep++) {
            double t0 = now_ns();
            sink += hy_ccd_query(is_vf, (const double(*)[3])qs->x[q], 0.0, opts, &toi, NULL);
            sink += hy_ccd_query(is_vf, (const double(*)[3])qs->x[q], 0.0, opts, &toi, NULL);
            double dt = 0.5 * (now_ns() - t0);
            if (dt < best) best = dt;
        }
        (void)sink;
        r->ns_sum += best;
        if (best > r->ns_max) r->ns_max = best;
    }
}

static cJSON* result_json(const file_result* r, int with_file) {
    cJSON* o = cJSON_CreateObject();
    if (with_file) {
        cJSON_AddStringToObject(o, "file", r->path);
        cJSON_AddStringToObject(o, "type", r->is_vf ? "vf" : "ee");
    }
    cJSON_AddNumberToObject(o, "queries", (double)r->queries);
    cJSON_AddNumberToObject(o, "positives", (double)r->positives);
    cJSON_AddNumberToObject(o, "false_negatives", (double)r->fn);
    cJSON_AddNumberToObject(o, "false_positives", (double)r->fp);
    cJSON_AddNumberToObject(o, "ns_per_query", r->queries ? round(10.0 * r->ns_sum / (double)r->queries) / 10.0 : 0.0);
    cJSON_AddNumberToObject(o, "max_ns", round(r->ns_max));
    return o;
}

static int ccd_eval_main(int argc, char** argv) {
    int force = -1, json = 0;
    long repeats = 5, max_boxes = 0;
    path_list inputs = {0}, files = {0};
    int rc = HY_EXIT_OK;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (!strcmp(a, "--help") || !strcmp(a, "-h")) {
            help();
            goto done;
        } else if (!strcmp(a, "--vf"))
            force = 1;
        else if (!strcmp(a, "--ee"))
            force = 0;
        else if (!strcmp(a, "--json"))
            json = 1;
        else if (!strcmp(a, "--repeats")) {
            if (!hy_cli_parse_int("--repeats", i + 1 < argc ? argv[++i] : NULL, 1, 1000, &repeats)) {
                rc = HY_EXIT_USAGE;
                goto done;
            }
        } else if (!strcmp(a, "--max-boxes")) {
            if (!hy_cli_parse_int("--max-boxes", i + 1 < argc ? argv[++i] : NULL, 1, 100000000, &max_boxes)) {
                rc = HY_EXIT_USAGE;
                goto done;
            }
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "hyphys ccd-eval: unknown option '%s' (see hyphys ccd-eval --help)\n", a);
            rc = HY_EXIT_USAGE;
            goto done;
        } else if (!path_push(&inputs, a)) {
            rc = HY_EXIT_RUNTIME;
            goto done;
        }
    }
    if (inputs.n == 0) {
        fprintf(stderr, "hyphys ccd-eval: no input files (see hyphys ccd-eval --help)\n");
        rc = HY_EXIT_USAGE;
        goto done;
    }
    for (int i = 0; i < inputs.n; i++) {
        struct stat sb;
        if (stat(inputs.v[i], &sb) != 0) {
            fprintf(stderr, "hyphys ccd-eval: %s: %s\n", inputs.v[i], strerror(errno));
            rc = HY_EXIT_USAGE;
            goto done;
        }
        int ok = S_ISDIR(sb.st_mode) ? walk(inputs.v[i], &files) : path_push(&files, inputs.v[i]);
        if (!ok) {
            rc = HY_EXIT_USAGE;
            goto done;
        }
    }
    if (files.n == 0) {
        fprintf(stderr, "hyphys ccd-eval: no .csv files found\n");
        rc = HY_EXIT_USAGE;
        goto done;
    }

    hy_ccd_options opts = hy_ccd_options_default();
    if (max_boxes > 0) opts.max_boxes = (int)max_boxes;
    file_result* res = calloc((size_t)files.n, sizeof *res);
    if (!res) {
        rc = HY_EXIT_RUNTIME;
        goto done;
    }
    file_result total = {0};
    /* Every file's kind first (a usage error before any work). */
    for (int i = 0; i < files.n && force < 0; i++) {
        const char* p = files.v[i];
        int vf = strstr(p, "vertex-face") != NULL, ee = strstr(p, "edge-edge") != NULL;
        if (vf == ee) {
            fprintf(stderr,
                    "hyphys ccd-eval: %s: cannot tell vertex-face from edge-edge by the path; pass --vf or --ee\n", p);
            rc = HY_EXIT_USAGE;
            break;
        }
    }
    /* A file that does not parse stops the run; the files evaluated before
     * it are still reported (exit 2 all the same). */
    int evaluated = 0;
    for (int i = 0; i < files.n && rc == HY_EXIT_OK; i++) {
        const char* p = files.v[i];
        int is_vf = force >= 0 ? force : strstr(p, "vertex-face") != NULL;
        query_set qs;
        if (!read_queries(p, &qs)) {
            rc = HY_EXIT_USAGE;
            break;
        }
        evaluated = i + 1;
        res[i].path = files.v[i];
        res[i].is_vf = is_vf;
        eval_file(&qs, is_vf, &opts, (int)repeats, &res[i]);
        free(qs.x);
        free(qs.truth);
        total.queries += res[i].queries;
        total.positives += res[i].positives;
        total.fn += res[i].fn;
        total.fp += res[i].fp;
        total.ns_sum += res[i].ns_sum;
        if (res[i].ns_max > total.ns_max) total.ns_max = res[i].ns_max;
    }
    if (evaluated > 0) {
        if (json) {
            cJSON* root = cJSON_CreateObject();
            cJSON* arr = cJSON_AddArrayToObject(root, "files");
            for (int i = 0; i < evaluated; i++) cJSON_AddItemToArray(arr, result_json(&res[i], 1));
            cJSON_AddItemToObject(root, "total", result_json(&total, 0));
            char* text = cJSON_PrintUnformatted(root);
            if (text) printf("%s\n", text);
            free(text);
            cJSON_Delete(root);
        } else {
            printf("%-4s %8s %9s %6s %6s %10s %10s  %s\n", "type", "queries", "positives", "FN", "FP", "ns/query",
                   "max_ns", "file");
            for (int i = 0; i < evaluated; i++) {
                const file_result* r = &res[i];
                printf("%-4s %8ld %9ld %6ld %6ld %10.1f %10.0f  %s\n", r->is_vf ? "vf" : "ee", r->queries, r->positives,
                       r->fn, r->fp, r->ns_sum / (double)r->queries, r->ns_max, r->path);
            }
            printf("%-4s %8ld %9ld %6ld %6ld %10.1f %10.0f  %s\n", "all", total.queries, total.positives, total.fn,
                   total.fp, total.queries ? total.ns_sum / (double)total.queries : 0.0, total.ns_max, "total");
        }
        if (total.fn > 0) {
            fprintf(stderr, "hyphys ccd-eval: %ld false negative(s)\n", total.fn);
            if (rc == HY_EXIT_OK) rc = HY_EXIT_RUNTIME;
        }
    }
    free(res);
done:
    for (int i = 0; i < inputs.n; i++) free(inputs.v[i]);
    free(inputs.v);
    for (int i = 0; i < files.n; i++) free(files.v[i]);
    free(files.v);
    return rc;
}

const hy_command hy_cmd_ccd_eval = {"ccd-eval", "evaluate the CCD tests on query files with ground truth",
                                    ccd_eval_main, help};
