/* Tests the CUDA kernels (collision/kernels.h, collision/leaf.h): on the CPU,
 * that hy_leaf_eval is exactly hy_filter_sat + hy_ccd_query (the shared
 * header is what the CPU step runs) and that its device path (a fixed local
 * heap) gives the same bits; with no GPU, that the backend says so and
 * refuses batches without crashing (then the GPU comparison is skipped, exit
 * 77); with a GPU, that every job's contact bits and time of impact from
 * hy_cuda_leaf_batch equal the CPU's bit for bit. Jobs: the shared CCD
 * queries at three thicknesses, plus random perturbations of them and
 * random near-contact pairs (fixed seed). The same jobs by reference
 * (hy_leaf_ref, against positions the device holds): on the CPU,
 * hy_leaf_eval_ref gives hy_leaf_eval's bits; with a GPU,
 * hy_cuda_leaf_resident gives them too, the positions going up once for a
 * version and not again.
 * TRAVERSE: on the CPU, that the per-pair traversal the kernel runs
 * (collision/traverse_hd.h), in the kernel's count / scan / write scheme,
 * gives hy_traverse_run's outputs pair by pair, and that outputs handed in
 * with hy_traverse_accept read back the same, and that the GPU's split of
 * the front pairs keeps each pair's output; with a GPU, that
 * hy_cuda_traverse_batch gives them too, also with two traversers taking
 * turns on the device and a tree refitted between them (what the device
 * keeps must be current), and a world stepping on cuda:0 reaches the
 * CPU-only state hash. Scene: the cloth-funnel step against itself and a
 * copy in its own moving frame. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/ccd.h"
#include "collision/filter.h"
#include "collision/leaf.h"
#include "collision/traverse_hd.h"
#include "core/error.h"
#include "core/mesh.h"
#include "engine/ply.h"
#include "hyphys/hyphys.h"
#include "core/pool.h"
#include "collision/kernels.h"
#include "sched/cuda.h"
#include "ccd_query_files.h"
#include "test.h"
#include "tests/world_step.h"
#include "scene_cloth_ball.h"

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
static void read_each(void* ctx, const char* path, int is_vf) { read_file((job_list*)ctx, path, is_vf); }

static int64_t read_queries(job_list* L) {
    int64_t before = L->n;
    hy_test_each_query_file(read_each, L);
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

/* ---- LEAF jobs by reference (hy_leaf_ref), against resident positions */

/* The jobs of L by reference: job i's points are vertices 4i .. 4i + 3 of
 * X0 (t = 0) and X1 (t = 1). */
typedef struct ref_list {
    hy_leaf_ref* refs;
    double *X0, *X1;
    int32_t nv;
} ref_list;

static int refs_make(const job_list* L, ref_list* R) {
    R->nv = (int32_t)(4 * L->n);
    R->refs = malloc(sizeof *R->refs * (size_t)L->n);
    R->X0 = malloc(sizeof(double) * 3 * (size_t)R->nv);
    R->X1 = malloc(sizeof(double) * 3 * (size_t)R->nv);
    if (!R->refs || !R->X0 || !R->X1) return 0;
    for (int64_t i = 0; i < L->n; i++) {
        const hy_leaf_job* j = &L->v[i];
        for (int q = 0; q < 4; q++) {
            R->refs[i].v[q] = (int32_t)(4 * i + q);
            memcpy(&R->X0[3 * (4 * i + q)], j->x[q], sizeof(double) * 3);
            memcpy(&R->X1[3 * (4 * i + q)], j->x[4 + q], sizeof(double) * 3);
        }
        R->refs[i].is_vf = j->is_vf;
        R->refs[i].pad = 0;
        R->refs[i].min_distance = j->min_distance;
    }
    return 1;
}

static void refs_free(ref_list* R) {
    free(R->refs);
    free(R->X0);
    free(R->X1);
}

/* The host twin: a job by reference evaluates as the gathered job. */
static void check_refs_cpu(const job_list* L, const ref_list* R) {
    hy_ccd_options step = hy_ccd_options_step();
    int64_t bad = 0;
    for (int64_t i = 0; i < L->n; i++) {
        const hy_leaf_job* j = &L->v[i];
        double t0 = -1.0, t1 = -2.0;
        int a = hy_leaf_eval(j->is_vf, (const double(*)[3])j->x, j->min_distance, &step, &t0);
        int b = hy_leaf_eval_ref(&R->refs[i], R->X0, R->X1, &step, &t1);
        bad += a != b || !same_bits(t0, t1);
    }
    fprintf(stderr, "leaf by reference on the host: %lld jobs, %lld mismatches\n", (long long)L->n, (long long)bad);
    CHECK(bad == 0);
}

/* The resident kernel: the same bits as the host; the positions go up once
 * for a version, not again for the same one. */
static void check_refs_gpu(int device, const job_list* L, const ref_list* R) {
    hy_ccd_options step = hy_ccd_options_step();
    unsigned char* hit = malloc((size_t)L->n);
    double* toi = malloc(sizeof(double) * (size_t)L->n);
    CHECK(hit && toi);
    if (!hit || !toi) return;
    uint64_t version = 0x5eed0000u + (uint64_t)device;
    for (int round = 0; round < 2; round++) {
        int64_t up = -1, down = -1;
        double st = -1.0;
        memset(hit, 0xff, (size_t)L->n);
        CHECK_OK(hy_cuda_leaf_resident(device, version, R->X0, R->X1, R->nv, R->refs, L->n, &step, hit, toi, &st, &up,
                                       &down));
        int64_t bad = 0;
        for (int64_t i = 0; i < L->n; i++) {
            double t = -1.0;
            int r = hy_leaf_eval_ref(&R->refs[i], R->X0, R->X1, &step, &t);
            bad += hit[i] != r || !same_bits(toi[i], t);
        }
        int64_t positions = round == 0 ? 48 * (int64_t)R->nv : 0;
        fprintf(stderr, "cuda:%d resident leaf, round %d: %lld jobs, %lld mismatches, %lld bytes up, %lld down\n",
                device, round, (long long)L->n, (long long)bad, (long long)up, (long long)down);
        CHECK(bad == 0);
        CHECK(up == positions + (int64_t)sizeof(hy_leaf_ref) * L->n);
        CHECK(down == 9 * L->n);
    }
    free(hit);
    free(toi);
}

/* ---- TRAVERSE (collision/traverse_hd.h) */

/* A traversal scene: the cloth-funnel step (self job), and against it a
 * copy in its own moving frame (pair jobs both ways: the shifted boxes,
 * vertex ids). Without the shared data, a folded grid. */
typedef struct trav_scene {
    hy_bvh* a;
    hy_bvh* b;
    hy_traverse_job jobs[3];
    int32_t njobs;
    double *y0, *y1; /* the copy's positions (B's tree), 3 * nv */
} trav_scene;

static int trav_scene_make(trav_scene* S) {
    memset(S, 0, sizeof *S);
    hy_mesh* m0 = NULL;
    hy_mesh* m1 = NULL;
    if (hy_ply_load(HY_DATA_DIR "/ccd-frames/cloth-funnel/frame0.ply", &m0) == HY_OK &&
        hy_ply_load(HY_DATA_DIR "/ccd-frames/cloth-funnel/frame1.ply", &m1) == HY_OK &&
        m0->vertex_count == m1->vertex_count) {
        fprintf(stderr, "traverse: cloth-funnel (%d triangles)\n", m0->triangle_count);
    } else {
        /* a 40 x 40 grid folded over at x = 0 (one layer 2 mm above the
         * other), moving a little */
        hy_mesh_destroy(m0);
        hy_mesh_destroy(m1);
        m0 = m1 = NULL;
        CHECK_OK(hy_mesh_grid(40, 40, 1.0, 1.0, &m0));
        CHECK_OK(hy_mesh_grid(40, 40, 1.0, 1.0, &m1));
        if (!m0 || !m1) return 0;
        for (int32_t v = 0; v < m0->vertex_count; v++) {
            double* p = &m0->positions[3 * v];
            if (p[0] > 0) {
                p[0] = -p[0];
                p[1] = 0.002;
            }
            for (int k = 0; k < 3; k++) m1->positions[3 * v + k] = p[k] + 0.003 * (urand() - 0.5);
        }
        fprintf(stderr, "traverse: shared data not found; a folded grid (%d triangles)\n", m0->triangle_count);
    }
    int32_t nv = m0->vertex_count;
    double* y0 = malloc(sizeof(double) * 3 * (size_t)nv);
    double* y1 = malloc(sizeof(double) * 3 * (size_t)nv);
    int32_t* ids = malloc(sizeof(int32_t) * (size_t)nv);
    CHECK(y0 && y1 && ids);
    int ok = y0 && y1 && ids;
    /* the copy: moved aside by 2 mm and moving 1 cm further in x */
    for (int32_t v = 0; ok && v < nv; v++) {
        for (int k = 0; k < 3; k++) {
            y0[3 * v + k] = m0->positions[3 * v + k] + (k == 0 ? 0.002 : 0.0);
            y1[3 * v + k] = m1->positions[3 * v + k] + (k == 0 ? 0.012 : 0.0);
        }
        ids[v] = nv + v;
    }
    if (ok) {
        CHECK_OK(hy_bvh_create(m0->triangles, m0->triangle_count, nv, &S->a));
        CHECK_OK(hy_bvh_create(m0->triangles, m0->triangle_count, nv, &S->b));
        ok = S->a && S->b;
    }
    if (ok) {
        S->a->relative = 1;
        S->b->relative = 1;
        CHECK_OK(hy_bvh_build(S->a, m0->positions, m1->positions, 1e-3, NULL));
        CHECK_OK(hy_bvh_build(S->b, y0, y1, 1e-3, NULL));
        CHECK_OK(hy_bvh_set_vertex_ids(S->b, ids));
        S->jobs[0] = (hy_traverse_job){S->a, NULL};
        S->jobs[1] = (hy_traverse_job){S->a, S->b};
        S->jobs[2] = (hy_traverse_job){S->b, S->a};
        S->njobs = 3;
        S->y0 = y0;
        S->y1 = y1;
        y0 = y1 = NULL;
    }
    free(y0);
    free(y1);
    free(ids);
    hy_mesh_destroy(m0);
    hy_mesh_destroy(m1);
    return ok;
}

static void trav_scene_free(trav_scene* S) {
    hy_bvh_destroy(S->a);
    hy_bvh_destroy(S->b);
    free(S->y0);
    free(S->y1);
}

/* The host's staged traversal of every front pair (hy_traverse_run, in
 * two batches, the second in reverse order), as the reference. */
typedef struct trav_ref {
    int64_t front;
    int64_t* offsets; /* front + 1 */
    hy_feature_pair* pairs;
    int32_t* job;
    hy_candidates counts;
} trav_ref;

static void trav_ref_make(hy_traverser* t, const trav_scene* S, hy_pool* pool, trav_ref* R) {
    memset(R, 0, sizeof *R);
    CHECK_OK(hy_traverse_begin(t, S->jobs, S->njobs, pool, &R->front));
    int64_t F = R->front;
    int64_t* ids = malloc(sizeof(int64_t) * (size_t)(F + 1));
    R->offsets = malloc(sizeof(int64_t) * (size_t)(F + 1));
    R->job = malloc(sizeof(int32_t) * (size_t)(F + 1));
    CHECK(ids && R->offsets && R->job);
    if (!ids || !R->offsets || !R->job) return;
    int64_t half = F / 2;
    for (int64_t i = 0; i < half; i++) ids[i] = i;
    for (int64_t i = half; i < F; i++) ids[i] = F - 1 - (i - half);
    CHECK_OK(hy_traverse_run(t, ids, half, pool));
    CHECK_OK(hy_traverse_run(t, ids + half, F - half, pool));
    CHECK_OK(hy_traverse_counts(t, &R->counts));
    R->offsets[0] = 0;
    for (int64_t f = 0; f < F; f++) {
        const hy_feature_pair* p;
        R->offsets[f + 1] = R->offsets[f] + hy_traverse_output(t, f, &p, &R->job[f]);
    }
    R->pairs = malloc(sizeof *R->pairs * (size_t)(R->offsets[F] + 1));
    CHECK(R->pairs != NULL);
    for (int64_t f = 0; R->pairs && f < F; f++) {
        const hy_feature_pair* p;
        int32_t job;
        int64_t m = hy_traverse_output(t, f, &p, &job);
        if (m) memcpy(R->pairs + R->offsets[f], p, sizeof *p * (size_t)m);
    }
    free(ids);
}

static void trav_ref_free(trav_ref* R) {
    free(R->offsets);
    free(R->pairs);
    free(R->job);
}

/* How many front pairs of t's outputs differ from the reference. */
static int64_t trav_compare(const hy_traverser* t, const trav_ref* R) {
    int64_t bad = 0;
    for (int64_t f = 0; f < R->front; f++) {
        const hy_feature_pair* p;
        int32_t job;
        int64_t m = hy_traverse_output(t, f, &p, &job);
        int64_t want = R->offsets[f + 1] - R->offsets[f];
        if (m != want || job != R->job[f] ||
            (m && memcmp(p, R->pairs + R->offsets[f], sizeof *p * (size_t)m) != 0)) {
            if (bad < 5)
                fprintf(stderr, "front pair %lld: %lld feature pairs (job %d), reference %lld (job %d)\n",
                        (long long)f, (long long)m, job, (long long)want, R->job[f]);
            bad++;
        }
    }
    return bad;
}

/* Host: the GPU batch's split (collision/traverse.cu, SPLIT_TARGET): the front
 * pairs expanded breadth first in rounds, each into its children in the
 * listed order (a leaf pair kept), until `target` pairs or none expands;
 * then every split pair run alone. Concatenated in order, their outputs
 * are the front pairs' (off, out), each front pair's starting where it
 * should, and the counters (the expansion's visits and tests counted as
 * hy_trav_run_pair counts them) add up to the whole run's. Returns the
 * split pairs made. */
static int64_t check_split_cpu(const hy_trav_ctx* ctxs, const hy_trav_pair* front, int64_t F, const int64_t* off,
                               const hy_feature_pair* out, const hy_trav_counts* want, int64_t target) {
    /* room for 4x the target or the front (the scene's split, all the way
     * down, is some 10^5 pairs) */
    int64_t bound = target < ((int64_t)1 << 18) ? target : ((int64_t)1 << 18);
    int64_t cap = 4 * (bound > F ? bound : F);
    hy_trav_pair* cur = malloc(sizeof *cur * (size_t)cap);
    hy_trav_pair* nxt = malloc(sizeof *nxt * (size_t)cap);
    int32_t* own = malloc(sizeof *own * (size_t)cap);
    int32_t* nown = malloc(sizeof *nown * (size_t)cap);
    int64_t* got = calloc((size_t)F + 1, sizeof *got);
    hy_feature_pair* buf = malloc(sizeof *buf * (size_t)(off[F] + 16));
    CHECK(cur && nxt && own && nown && got && buf);
    int64_t m = 0;
    if (cur && nxt && own && nown && got && buf) {
        hy_trav_counts k = {0, 0, 0, 0};
        for (int64_t f = 0; f < F; f++) {
            cur[f] = front[f];
            own[f] = (int32_t)f;
        }
        m = F;
        for (int round = 0; round < 24 && m > 0 && m < target; round++) {
            int64_t m2 = 0, expanded = 0;
            for (int64_t i = 0; i < m; i++) {
                hy_trav_pair kids[HY_TRAV_EXPAND_MAX];
                int64_t tests = 0;
                int n = hy_trav_expand(ctxs, cur[i], kids, &tests);
                if (n < 0) {
                    kids[0] = cur[i];
                    n = 1;
                } else {
                    k.node_pairs += 1 + tests;
                    expanded++;
                }
                if (m2 + n > cap) { /* more than the room above: say so, stop */
                    CHECK(m2 + n <= cap);
                    n = 0;
                }
                for (int q = 0; q < n; q++) {
                    nxt[m2] = kids[q];
                    nown[m2++] = own[i];
                }
            }
            hy_trav_pair* tp = cur;
            cur = nxt;
            nxt = tp;
            int32_t* to = own;
            own = nown;
            nown = to;
            m = m2;
            if (expanded == 0) break;
        }
        static hy_trav_pair stack[256];
        int64_t at = 0, full = 0;
        for (int64_t i = 0; i < m; i++) {
            hy_trav_out o = {buf + at, 0, off[F] + 16 - at};
            full += hy_trav_run_pair(ctxs, cur[i], stack, 256, &o, &k) == HY_TRAV_STACK_FULL;
            CHECK(i == 0 || own[i] >= own[i - 1]); /* grouped by front pair, in order */
            got[own[i] + 1] += o.n;
            at += o.n;
        }
        CHECK(full == 0);
        for (int64_t f = 0; f < F; f++) got[f + 1] += got[f];
        CHECK(at == off[F] && memcmp(got, off, sizeof *off * (size_t)(F + 1)) == 0);
        CHECK(at == off[F] && memcmp(buf, out, sizeof *out * (size_t)off[F]) == 0);
        CHECK(k.node_pairs == want->node_pairs && k.triangle_pairs == want->triangle_pairs && k.vf == want->vf &&
              k.ee == want->ee);
    }
    free(cur);
    free(nxt);
    free(own);
    free(nown);
    free(got);
    free(buf);
    return m;
}

/* Host: the kernel's scheme with the shared per-pair function — a fixed
 * stack as on the device, a counting pass, an exclusive scan, a writing
 * pass — equals hy_traverse_run pair by pair, and hy_traverse_accept of
 * those outputs reads back as the host run's (outputs and counters). */
static void check_traverse_cpu(const trav_scene* S, hy_pool* pool) {
    hy_traverser* t = hy_traverser_create();
    CHECK(t != NULL);
    if (!t) return;
    trav_ref R;
    trav_ref_make(t, S, pool, &R);
    int64_t F = R.front;
    CHECK(F > 100 && R.offsets[F] > 1000); /* the scene exercises the traversal */
    const hy_trav_ctx* ctxs = NULL;
    const hy_trav_pair* front = NULL;
    CHECK(hy_traverse_job_list(t, NULL, &ctxs) == 3);
    CHECK(hy_traverse_front(t, &front) == F);
    int64_t* off = malloc(sizeof(int64_t) * (size_t)(F + 1));
    hy_feature_pair* out = malloc(sizeof *out * (size_t)(R.offsets[F] + 1));
    int64_t* ids = malloc(sizeof(int64_t) * (size_t)(F + 1));
    CHECK(off && out && ids);
    if (off && out && ids) {
        static hy_trav_pair stack[256]; /* the kernel's TRAV_STACK */
        hy_trav_counts k = {0, 0, 0, 0};
        int64_t full = 0, kinds[3] = {0, 0, 0};
        off[0] = 0;
        for (int64_t f = 0; f < F; f++) {
            hy_trav_out o = {NULL, 0, 0};
            full += hy_trav_run_pair(ctxs, front[f], stack, 256, &o, &k) == HY_TRAV_STACK_FULL;
            off[f + 1] = off[f] + o.n;
        }
        CHECK(full == 0);
        int64_t bad = 0;
        for (int64_t f = 0; f < F && !full; f++) {
            hy_trav_counts k2 = {0, 0, 0, 0};
            hy_trav_out o = {out + off[f], 0, off[f + 1] - off[f]};
            CHECK(hy_trav_run_pair(ctxs, front[f], stack, 256, &o, &k2) == 0);
            if (o.n != o.cap) bad++;
        }
        CHECK(bad == 0);
        CHECK(off[F] == R.offsets[F]);
        CHECK(memcmp(off, R.offsets, sizeof *off * (size_t)(F + 1)) == 0);
        CHECK(memcmp(out, R.pairs, sizeof *out * (size_t)off[F]) == 0);
        CHECK(k.triangle_pairs == R.counts.triangle_pairs && k.vf == R.counts.vf && k.ee == R.counts.ee);
        for (int64_t i = 0; i < off[F]; i++) kinds[out[i].kind]++;
        fprintf(stderr,
                "traverse (host, shared per-pair code): %lld front pairs, %lld feature pairs (%lld VF, %lld FV, %lld "
                "EE), %lld triangle pairs\n",
                (long long)F, (long long)off[F], (long long)kinds[0], (long long)kinds[1], (long long)kinds[2],
                (long long)k.triangle_pairs);
        CHECK(kinds[0] > 0 && kinds[1] > 0 && kinds[2] > 0); /* self, pair and both kinds */
        /* the GPU's split, at its target and at smaller ones */
        /* all the way down (every split pair a leaf pair), then stopping
         * at targets: a split stops once it reaches its target, and never
         * goes past the whole way */
        int64_t all = check_split_cpu(ctxs, front, F, off, out, &k, (int64_t)1 << 40);
        static const int64_t targets[4] = {1000, 8000, 64000, (int64_t)1 << 17};
        for (int q = 0; q < 4; q++) {
            int64_t target = targets[q];
            int64_t m = check_split_cpu(ctxs, front, F, off, out, &k, target);
            fprintf(stderr, "traverse split (host): target %lld, %lld split pairs (%lld all the way)\n",
                    (long long)target, (long long)m, (long long)all);
            CHECK(m >= F && m <= all && (m >= target || m == all));
            CHECK(target <= F || m < 4 * target); /* one round past the target at most */
        }

        /* accepted in two batches (odd front pairs, then even in reverse) */
        int64_t F2;
        CHECK_OK(hy_traverse_begin(t, S->jobs, 3, pool, &F2));
        CHECK(F2 == F);
        /* (begin remakes the front: the pointers are fetched again) */
        CHECK(hy_traverse_job_list(t, NULL, &ctxs) == 3);
        CHECK(hy_traverse_front(t, &front) == F);
        int64_t n1 = 0;
        for (int64_t f = 1; f < F; f += 2) ids[n1++] = f;
        int64_t n2 = 0;
        for (int64_t f = (F - 1) & ~(int64_t)1; f >= 0; f -= 2) ids[n1 + n2++] = f;
        for (int part = 0; part < 2; part++) {
            const int64_t* pi = part ? ids + n1 : ids;
            int64_t pn = part ? n2 : n1;
            int64_t* po = malloc(sizeof(int64_t) * (size_t)(pn + 1));
            hy_feature_pair* pp = malloc(sizeof *pp * (size_t)(off[F] + 1));
            hy_trav_counts pk = {0, 0, 0, 0};
            CHECK(po && pp);
            if (po && pp) {
                po[0] = 0;
                for (int64_t i = 0; i < pn; i++) {
                    int64_t m = off[pi[i] + 1] - off[pi[i]];
                    memcpy(pp + po[i], out + off[pi[i]], sizeof *pp * (size_t)m);
                    po[i + 1] = po[i] + m;
                    hy_trav_out o = {NULL, 0, 0};
                    hy_trav_run_pair(ctxs, front[pi[i]], stack, 256, &o, &pk);
                }
                CHECK_OK(hy_traverse_accept(t, pi, pn, po, pp, &pk));
            }
            free(po);
            free(pp);
        }
        CHECK(trav_compare(t, &R) == 0);
        hy_candidates c2;
        memset(&c2, 0, sizeof c2);
        CHECK_OK(hy_traverse_counts(t, &c2));
        if (c2.node_pairs != R.counts.node_pairs || c2.triangle_pairs != R.counts.triangle_pairs)
            fprintf(stderr, "counters: accepted %lld node pairs, %lld triangle pairs; host %lld, %lld (k %lld %lld)\n",
                    (long long)c2.node_pairs, (long long)c2.triangle_pairs, (long long)R.counts.node_pairs,
                    (long long)R.counts.triangle_pairs, (long long)k.node_pairs, (long long)k.triangle_pairs);
        CHECK(c2.node_pairs == R.counts.node_pairs && c2.triangle_pairs == R.counts.triangle_pairs &&
              c2.vf == R.counts.vf && c2.ee == R.counts.ee && c2.front == R.counts.front);
        /* bad input to accept is a status */
        int64_t bad_id = F;
        int64_t zo[2] = {0, 0};
        CHECK(hy_traverse_accept(t, &bad_id, 1, zo, NULL, &k) == HY_ERR_INVALID_ARG);
    }
    free(off);
    free(out);
    free(ids);
    trav_ref_free(&R);
    hy_traverser_destroy(t);
}

/* GPU: hy_cuda_traverse_batch's outputs equal the host's, pair by pair, in
 * two batches (the buffers grow between them). */
static void check_traverse_gpu(int device, const trav_scene* S, hy_pool* pool) {
    hy_traverser* t = hy_traverser_create();
    CHECK(t != NULL);
    if (!t) return;
    trav_ref R;
    trav_ref_make(t, S, pool, &R);
    int64_t F = R.front, F2 = 0;
    CHECK_OK(hy_traverse_begin(t, S->jobs, 3, pool, &F2));
    int64_t* ids = malloc(sizeof(int64_t) * (size_t)(F + 1));
    CHECK(ids != NULL);
    if (ids) {
        for (int64_t i = 0; i < F; i++) ids[i] = F - 1 - i;
        int64_t small = F < 16 ? F : 16;
        double st = -1, sk = -1;
        CHECK_OK(hy_cuda_traverse_batch(device, t, ids, small, &st, &sk));
        CHECK_OK(hy_cuda_traverse_batch(device, t, ids + small, F - small, &st, &sk));
        CHECK(st >= 0 && sk >= 0);
        int64_t bad = trav_compare(t, &R);
        hy_candidates c2;
        memset(&c2, 0, sizeof c2);
        CHECK_OK(hy_traverse_counts(t, &c2));
        fprintf(stderr, "cuda:%d traverse: %lld front pairs, %lld feature pairs, %lld mismatches; last batch %.3f ms "
                        "transfer, %.3f ms kernel\n",
                device, (long long)F, (long long)R.offsets[F], (long long)bad, 1e3 * st, 1e3 * sk);
        CHECK(bad == 0);
        CHECK(c2.node_pairs == R.counts.node_pairs && c2.triangle_pairs == R.counts.triangle_pairs &&
              c2.vf == R.counts.vf && c2.ee == R.counts.ee);
        int64_t out_of_range = F;
        CHECK(hy_cuda_traverse_batch(device, t, &out_of_range, 1, NULL, NULL) == HY_ERR_INVALID_ARG);
    }
    free(ids);
    trav_ref_free(&R);
    hy_traverser_destroy(t);
}

/* GPU: what the device keeps between traversals (the trees, by version;
 * the contexts, by staged traversal) is current. Two traversers take
 * turns on the device, one over the scene's three jobs and one over the
 * self job alone; before the second round B is refitted over a longer
 * motion (new boxes, new version). Every batch must give the host's
 * outputs for the trees as they are then. */
static void check_traverse_cache(int device, trav_scene* S, hy_pool* pool) {
    trav_scene self = *S;
    self.njobs = 1; /* jobs[0]: A against itself */
    int64_t before = -1;
    for (int round = 0; round < 2; round++) {
        if (round == 1) {
            int32_t nv = S->b->vertex_count;
            for (int32_t v = 0; v < nv; v++) S->y1[3 * v] += 0.004;
            hy_bvh_refit(S->b, S->y0, S->y1, 1e-3, NULL);
        }
        hy_traverser* t1 = hy_traverser_create();
        hy_traverser* t2 = hy_traverser_create();
        CHECK(t1 && t2);
        if (!t1 || !t2) {
            hy_traverser_destroy(t1);
            hy_traverser_destroy(t2);
            return;
        }
        trav_ref R1, R2;
        trav_ref_make(t1, S, pool, &R1);
        trav_ref_make(t2, &self, pool, &R2);
        int64_t F1 = 0, F2 = 0;
        CHECK_OK(hy_traverse_begin(t1, S->jobs, S->njobs, pool, &F1));
        CHECK_OK(hy_traverse_begin(t2, self.jobs, self.njobs, pool, &F2));
        int64_t* ids = malloc(sizeof(int64_t) * (size_t)(F1 + F2 + 1));
        CHECK(ids != NULL);
        if (ids) {
            for (int64_t i = 0; i < F1 + F2; i++) ids[i] = i < F1 ? i : i - F1;
            /* t2 first: the device's contexts are then t2's when t1 comes */
            CHECK_OK(hy_cuda_traverse_batch(device, t2, ids + F1, F2, NULL, NULL));
            CHECK_OK(hy_cuda_traverse_batch(device, t1, ids, F1 / 2, NULL, NULL));
            CHECK_OK(hy_cuda_traverse_batch(device, t1, ids + F1 / 2, F1 - F1 / 2, NULL, NULL));
            int64_t bad1 = trav_compare(t1, &R1), bad2 = trav_compare(t2, &R2);
            fprintf(stderr, "cuda:%d cache, round %d: %lld and %lld feature pairs, %lld and %lld mismatches\n", device,
                    round, (long long)R1.offsets[R1.front], (long long)R2.offsets[R2.front], (long long)bad1,
                    (long long)bad2);
            CHECK(bad1 == 0 && bad2 == 0);
            /* the refit changed B's outputs: stale trees would show */
            if (round == 1) CHECK(R1.offsets[R1.front] != before);
            before = R1.offsets[R1.front];
        }
        free(ids);
        trav_ref_free(&R1);
        trav_ref_free(&R2);
        hy_traverser_destroy(t1);
        hy_traverser_destroy(t2);
    }
}

/* A world on one GPU resource (TRAVERSE and LEAF batches on the device)
 * steps to the CPU-only state hash. */
static uint64_t world_hash(const char* devices) {
    hy_world* w = hy_test_cloth_ball_world(0);
    if (!w) return 0;
    if (devices) {
        hy_sched_def d = hy_sched_def_default();
        d.devices = devices;
        CHECK_OK(hy_world_set_scheduling(w, &d));
    }
    uint64_t h = 0;
    for (int k = 0; k < 30; k++) {
        hy_status s = hy_test_step(w);
        CHECK_OK(s);
        if (s) break;
        h = h * 1099511628211ull ^ hy_test_hash(w);
    }
    hy_world_destroy(w);
    return h;
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
    /* no usable GPU (count 0) is exactly when the line ends in "CPU only" */
    CHECK((count == 0) == (strstr(status, "CPU only") != NULL));
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

    /* TRAVERSE: the shared per-pair code on the host, always; the kernel
     * with a GPU. */
    hy_pool* pool = hy_pool_create(2);
    trav_scene S;
    if (trav_scene_make(&S)) {
        check_traverse_cpu(&S, pool);
        if (count == 0) {
            int64_t one = 0;
            hy_traverser* t = hy_traverser_create();
            CHECK(hy_cuda_traverse_batch(0, t, &one, 1, NULL, NULL) == HY_ERR_UNSUPPORTED);
            hy_traverser_destroy(t);
        }
        for (int d = 0; d < count; d++) check_traverse_gpu(d, &S, pool);
        for (int d = 0; d < count; d++) check_traverse_cache(d, &S, pool);
    }
    trav_scene_free(&S);
    hy_pool_destroy(pool);

    for (int d = 0; d < count; d++) check_gpu(d, &L);
    ref_list R;
    memset(&R, 0, sizeof R);
    CHECK(refs_make(&L, &R));
    if (R.refs && R.X0 && R.X1) {
        check_refs_cpu(&L, &R);
        if (count == 0) {
            hy_ccd_options step = hy_ccd_options_step();
            unsigned char h[4];
            double t[4];
            CHECK(hy_cuda_leaf_resident(0, 1, R.X0, R.X1, R.nv, R.refs, 4, &step, h, t, NULL, NULL, NULL) ==
                  HY_ERR_UNSUPPORTED);
        }
        for (int d = 0; d < count; d++) check_refs_gpu(d, &L, &R);
    }
    refs_free(&R);
    if (count > 0) {
        uint64_t ref = world_hash(NULL), gpu = world_hash("cuda:0");
        fprintf(stderr, "world on cuda:0: hash %016llx, CPU only %016llx\n", (unsigned long long)gpu,
                (unsigned long long)ref);
        CHECK(gpu == ref);
    }
    free(L.v);
    if (count == 0 && hy_test_failures == 0) {
        fprintf(stderr, "%d checks passed on the CPU\n", hy_test_checks);
        TEST_SKIP("no GPU here: the GPU-vs-CPU comparison needs one (runs on a GPU machine)");
    }
    TEST_END();
}
