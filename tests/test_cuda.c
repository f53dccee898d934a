/* Tests the CUDA LEAF backend (sched/cuda.h, collision/leaf.h): on the CPU,
 * that hy_leaf_eval is exactly hy_filter_sat + hy_ccd_query (the shared
 * header is what the CPU step runs) and that its device path (a fixed local
 * heap) gives the same bits; with no GPU, that the backend says so and
 * refuses batches without crashing (then the GPU comparison is skipped, exit
 * 77); with a GPU, that every job's contact bits and time of impact from
 * hy_cuda_leaf_batch equal the CPU's bit for bit. Jobs: the shared CCD
 * queries at three thicknesses, plus random perturbations of them and
 * random near-contact pairs (fixed seed). */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/ccd.h"
#include "collision/filter.h"
#include "collision/leaf.h"
#include "engine/error.h"
#include "sched/cuda.h"
#include "test.h"

typedef struct job_list {
    hy_leaf_job* v;
    int64_t n, cap;
} job_list;

static uint64_t g_rng = 0x9e3779b97f4a7c15ull;
static double urand(void) {
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (double)(g_rng >> 11) * 0x1p-53;
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0; }

static void push(job_list* L, int is_vf, const double x[8][3], double md) {
    if (L->n == L->cap) {
        L->cap = L->cap ? 2 * L->cap : 4096;
        hy_leaf_job* v = realloc(L->v, sizeof *v * (size_t)L->cap);
        if (!v) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        L->v = v;
    }
    hy_leaf_job* j = &L->v[L->n++];
    memset(j, 0, sizeof *j);
    memcpy(j->x, x, sizeof j->x);
    j->min_distance = md;
    j->is_vf = is_vf;
}

/* One query as jobs: touching and two thicknesses (relative to its size,
 * as a cloth thickness is to a scene), and the same after two random
 * perturbations (near-degenerate and clearly moved). */
static void push_query(job_list* L, int is_vf, const double x[8][3]) {
    double m = 0;
    for (int i = 0; i < 8; i++)
        for (int k = 0; k < 3; k++) m = fabs(x[i][k]) > m ? fabs(x[i][k]) : m;
    if (!(m > 0)) m = 1;
    for (int p = 0; p < 3; p++) {
        double y[8][3];
        double s = p == 0 ? 0.0 : p == 1 ? 1e-9 * m : 1e-3 * m;
        for (int i = 0; i < 8; i++)
            for (int k = 0; k < 3; k++) y[i][k] = x[i][k] + (p ? s * (2 * urand() - 1) : 0.0);
        push(L, is_vf, (const double(*)[3])y, 0.0);
        push(L, is_vf, (const double(*)[3])y, 1e-6 * m);
        push(L, is_vf, (const double(*)[3])y, 1e-3 * m);
    }
}

static void read_file(job_list* L, const char* path, int is_vf) {
    FILE* f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) return;
    char line[4096], nb[3][256], db[3][256];
    double x[8][3];
    int r = 0, t = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '\n' || line[0] == '\0') continue;
        int got = sscanf(line, "%255[^,],%255[^,],%255[^,],%255[^,],%255[^,],%255[^,],%d", nb[0], db[0], nb[1], db[1],
                         nb[2], db[2], &t);
        CHECK(got == 7);
        if (got != 7) break;
        /* Every coordinate is exactly a double (data README). */
        for (int k = 0; k < 3; k++) x[r][k] = strtod(nb[k], NULL) / strtod(db[k], NULL);
        if (++r < 8) continue;
        r = 0;
        push_query(L, is_vf, (const double(*)[3])x);
    }
    fclose(f);
}

/* The shared queries, in a fixed order (sorted names), so the random
 * perturbations do not depend on the directory order. */
static int cmp_str(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static int64_t read_queries(job_list* L) {
    char root[4096];
    snprintf(root, sizeof root, "%s/ccd-queries", HY_DATA_DIR);
    DIR* d = opendir(root);
    if (!d) return 0;
    char* sets[64];
    int ns = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL && ns < 64)
        if (e->d_name[0] != '.') sets[ns++] = strdup(e->d_name);
    closedir(d);
    qsort(sets, (size_t)ns, sizeof *sets, cmp_str);
    int64_t before = L->n;
    for (int s = 0; s < ns; s++) {
        for (int is_vf = 0; is_vf < 2; is_vf++) {
            char dir[8192];
            snprintf(dir, sizeof dir, "%s/%s/%s", root, sets[s], is_vf ? "vertex-face" : "edge-edge");
            DIR* sub = opendir(dir);
            if (!sub) continue;
            char* files[4096];
            int nf = 0;
            struct dirent* g;
            while ((g = readdir(sub)) != NULL && nf < 4096) {
                size_t n = strlen(g->d_name);
                if (n >= 4 && strcmp(g->d_name + n - 4, ".csv") == 0) files[nf++] = strdup(g->d_name);
            }
            closedir(sub);
            qsort(files, (size_t)nf, sizeof *files, cmp_str);
            for (int i = 0; i < nf; i++) {
                char path[12288];
                snprintf(path, sizeof path, "%s/%s", dir, files[i]);
                read_file(L, path, is_vf);
                free(files[i]);
            }
        }
        free(sets[s]);
    }
    return L->n - before;
}

/* Random pairs in the unit cube moving a little, as a step's candidates
 * are: many near contacts among the clear ones. */
static void push_random(job_list* L, int count) {
    for (int q = 0; q < count; q++) {
        double x[8][3];
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) x[i][k] = 0.5 * urand();
        for (int i = 4; i < 8; i++)
            for (int k = 0; k < 3; k++) x[i][k] = x[i - 4][k] + 0.2 * (urand() - 0.5);
        push(L, q & 1, (const double(*)[3])x, (q % 3) ? 1e-3 : 0.0);
    }
}

/* CPU: hy_leaf_eval against its definition, and its device path. */
static void check_cpu(const job_list* L) {
    hy_ccd_options step = hy_ccd_options_step(), def = hy_ccd_options_default();
    CHECK(hy_leaf_options_device_ok(&step));
    CHECK(!hy_leaf_options_device_ok(&def)); /* the long double re-check */
    hy_ccd_options big = step;
    big.max_boxes = HY_LEAF_MAX_BOXES + 1;
    CHECK(!hy_leaf_options_device_ok(&big));
    static hy_ccd_box heap[HY_LEAF_HEAP_BOXES];
    int64_t bad_def = 0, bad_heap = 0, exact = 0, hits = 0, bad_default_opts = 0;
    for (int64_t i = 0; i < L->n; i++) {
        const hy_leaf_job* j = &L->v[i];
        double x[8][3]; /* a local copy, as the step makes */
        memcpy(x, j->x, sizeof x);
        const double* a[4] = {x[0], x[1], x[2], x[3]};
        const double* b[4] = {x[4], x[5], x[6], x[7]};
        /* the definition: what collision/collide.c's exact step did */
        double t_ref = 1.0;
        int ex = hy_filter_sat(j->is_vf, a, b, j->min_distance);
        int h = ex && hy_ccd_query(j->is_vf, (const double(*)[3])x, j->min_distance, &step, &t_ref, NULL);
        int ref = h | ex << 1;
        double t_leaf = -1.0, t_heap = -1.0;
        int r = hy_leaf_eval(j->is_vf, (const double(*)[3])x, j->min_distance, &step, &t_leaf);
        int rh = hy_leaf_eval_heap(j->is_vf, (const double(*)[3])x, j->min_distance, &step, &t_heap, heap,
                                   HY_LEAF_HEAP_BOXES);
        if (r != ref || !same_bits(t_leaf, t_ref)) bad_def++;
        if (rh != ref || !same_bits(t_heap, t_ref)) bad_heap++;
        exact += ex;
        hits += h;
        /* default options (long double re-check) on the host path too, on
         * a sample: the host path must stay the exported functions */
        if (i % 7 == 0) {
            double td = 1.0, tl = -1.0;
            int exd = hy_filter_sat(j->is_vf, a, b, j->min_distance);
            int hd = exd && hy_ccd_query(j->is_vf, (const double(*)[3])x, j->min_distance, &def, &td, NULL);
            int rd = hy_leaf_eval(j->is_vf, (const double(*)[3])x, j->min_distance, &def, &tl);
            if (rd != (hd | exd << 1) || !same_bits(td, tl)) bad_default_opts++;
        }
    }
    fprintf(stderr,
            "cpu: %lld jobs, %lld exact tests, %lld contacts; mismatches: hy_leaf_eval %lld, device path %lld, "
            "default options %lld\n",
            (long long)L->n, (long long)exact, (long long)hits, (long long)bad_def, (long long)bad_heap,
            (long long)bad_default_opts);
    CHECK(bad_def == 0);
    CHECK(bad_heap == 0);
    CHECK(bad_default_opts == 0);
    CHECK(hits > 0 && exact > hits); /* the set exercises both outcomes */
}

/* GPU: every job bit-identical to the CPU, on every device. */
static void check_gpu(int device, const job_list* L) {
    hy_ccd_options step = hy_ccd_options_step(), def = hy_ccd_options_default();
    char name[256];
    CHECK_OK(hy_cuda_device_name(device, name, sizeof name));
    unsigned char* hit = malloc((size_t)L->n);
    double* toi = malloc(sizeof(double) * (size_t)L->n);
    CHECK(hit && toi);
    if (!hit || !toi) return;
    /* options the device cannot match are refused */
    CHECK(hy_cuda_leaf_batch(device, L->v, L->n, &def, hit, toi, NULL, NULL) == HY_ERR_UNSUPPORTED);
    CHECK(hy_cuda_leaf_batch(device, L->v, 0, &step, hit, toi, NULL, NULL) == HY_OK);
    /* twice: a small batch, then all (the buffers grow between them) */
    for (int round = 0; round < 2; round++) {
        int64_t n = round == 0 ? (L->n < 1000 ? L->n : 1000) : L->n;
        double st = -1, sk = -1;
        memset(hit, 0xff, (size_t)n);
        CHECK_OK(hy_cuda_leaf_batch(device, L->v, n, &step, hit, toi, &st, &sk));
        int64_t bad = 0, hits = 0, exact = 0;
        for (int64_t i = 0; i < n; i++) {
            const hy_leaf_job* j = &L->v[i];
            double x[8][3];
            memcpy(x, j->x, sizeof x);
            double t = -1.0;
            int r = hy_leaf_eval(j->is_vf, (const double(*)[3])x, j->min_distance, &step, &t);
            if (hit[i] != r || !same_bits(toi[i], t)) {
                if (bad < 5)
                    fprintf(stderr, "cuda:%d job %lld: gpu %d toi %.17g, cpu %d toi %.17g\n", device, (long long)i,
                            hit[i], toi[i], r, t);
                bad++;
            }
            hits += r & 1;
            exact += r >> 1;
        }
        fprintf(stderr, "cuda:%d (%s): %lld jobs, %lld exact tests, %lld contacts, %lld mismatches; %.3f ms transfer, "
                        "%.3f ms kernel\n",
                device, name, (long long)n, (long long)exact, (long long)hits, (long long)bad, 1e3 * st, 1e3 * sk);
        CHECK(bad == 0);
        CHECK(st >= 0 && sk >= 0);
    }
    /* full run: more jobs than one launch takes (several launches) */
    if (getenv("HY_TEST_FULL")) {
        int64_t n = ((int64_t)1 << 20) + 4097;
        hy_leaf_job* big = malloc(sizeof *big * (size_t)n);
        unsigned char* bh = malloc((size_t)n);
        double* bt = malloc(sizeof(double) * (size_t)n);
        CHECK(big && bh && bt);
        if (big && bh && bt) {
            for (int64_t i = 0; i < n; i++) big[i] = L->v[i % L->n];
            CHECK_OK(hy_cuda_leaf_batch(device, big, n, &step, bh, bt, NULL, NULL));
            int64_t bad = 0;
            for (int64_t i = 0; i < n; i++)
                if (bh[i] != hit[i % L->n] || !same_bits(bt[i], toi[i % L->n])) bad++;
            fprintf(stderr, "cuda:%d: %lld jobs in several launches, %lld mismatches\n", device, (long long)n,
                    (long long)bad);
            CHECK(bad == 0);
        }
        free(big);
        free(bh);
        free(bt);
    }
    free(hit);
    free(toi);
}

int main(void) {
    job_list L = {NULL, 0, 0};
    int64_t from_queries = read_queries(&L);
    if (from_queries == 0)
        fprintf(stderr, "note: shared ccd-queries not found under %s; random jobs only\n", HY_DATA_DIR);
    /* 4884 queries x 9 jobs each */
    CHECK(from_queries == 0 || from_queries == 4884 * 9);
    push_random(&L, 6000);
    check_cpu(&L);

    /* The backend: a one-line status whatever the machine. */
    const char* status = hy_cuda_status();
    int count = hy_cuda_device_count();
    fprintf(stderr, "%s (devices: %d)\n", status, count);
    CHECK(status != NULL && status[0] != '\0' && strchr(status, '\n') == NULL);
    CHECK(strncmp(status, "cuda: ", 6) == 0);
    CHECK(count >= 0);
    CHECK(hy_cuda_device_count() == count); /* probed once */

    /* A device that does not exist: an error with a message, no crash. */
    {
        hy_ccd_options step = hy_ccd_options_step();
        unsigned char h[4];
        double t[4];
        hy_error_clear();
        double st = -1, sk = -1;
        hy_status s = hy_cuda_leaf_batch(count, L.v, 4, &step, h, t, &st, &sk);
        CHECK(s == (count ? HY_ERR_INVALID_ARG : HY_ERR_UNSUPPORTED));
        CHECK(strstr(hy_last_error(), "cuda:") != NULL);
        CHECK(st == 0 && sk == 0);
        CHECK(hy_cuda_leaf_batch(-1, L.v, 4, &step, h, t, NULL, NULL) != HY_OK);
        char name[64];
        CHECK(hy_cuda_device_name(count, name, sizeof name) == HY_ERR_INVALID_ARG);
    }

    for (int d = 0; d < count; d++) check_gpu(d, &L);
    free(L.v);
    if (count == 0 && hy_test_failures == 0) {
        fprintf(stderr, "%d checks passed on the CPU\n", hy_test_checks);
        TEST_SKIP("no GPU here: the GPU-vs-CPU comparison needs one (runs on a GPU machine)");
    }
    TEST_END();
}
