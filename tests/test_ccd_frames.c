/* Whole-step CCD on the cloth-funnel frames: `hyphys ccd-frames` finds every colliding pair of the ground truth (0 false negatives); candidates and collisions are identical, in content and order, for 1 and 2 threads and for build vs refit; bad input exits 2; self-culling on and off find the same collisions; and the cloth-ball open fan that a cull on normal cones alone would miss is kept by the contour test. */
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include "collision/bvh.h"
#include "collision/ccd.h"
#include "collision/frames.h"
#include "collision/traverse.h"
#include "engine/ply.h"
#include "hyphys/hyphys.h"
#include "core/pool.h"
#include "test.h"

#define SCENE HY_DATA_DIR "/ccd-frames/cloth-funnel"

/* Run a shell command, capture stdout, return the exit code. */
static int run(const char* cmd, char* out, size_t cap) {
    FILE* p = popen(cmd, "r");
    if (!p) return -1;
    size_t n = fread(out, 1, cap - 1, p);
    out[n] = '\0';
    int st = pclose(p);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* EE pair of edges {a0, a1} and {b0, b1} (either order) among candidates. */
static int has_ee(const hy_candidates* c, int32_t a0, int32_t a1, int32_t b0, int32_t b1) {
    for (int64_t i = 0; i < c->count; i++) {
        const hy_feature_pair* p = &c->pairs[i];
        if (p->kind != HY_FEATURE_EE) continue;
        int e1 = (p->v[0] == a0 && p->v[1] == a1) || (p->v[0] == a1 && p->v[1] == a0);
        int e2 = (p->v[2] == b0 && p->v[3] == b1) || (p->v[2] == b1 && p->v[3] == b0);
        int f1 = (p->v[2] == a0 && p->v[3] == a1) || (p->v[2] == a1 && p->v[3] == a0);
        int f2 = (p->v[0] == b0 && p->v[1] == b1) || (p->v[0] == b1 && p->v[1] == b0);
        if ((e1 && e2) || (f1 && f2)) return 1;
    }
    return 0;
}

/* Why self-collision culling needs its contour test (collision/bvh.c
 * contour_star): in the cloth-ball step, the open fan of four triangles
 * around vertex 34876 has a normal cone under 90 degrees and is
 * edge-connected, yet its end spoke (10439, 34876) crosses its rim edge
 * (10436, 34877), a collision of ee_truth.csv. Without culling the BVH
 * reports the pair and the exact test finds it; with culling (the
 * default) the fan's cone passes, but its contour is not star-shaped
 * around its mean point (one half-edge has that point on its right already
 * at t = 0), so it is not culled and the pair is still reported (a cull on
 * the cone alone, as before, dropped it). */
static void test_open_fan(void) {
    hy_mesh* c0 = NULL;
    hy_mesh* c1 = NULL;
    if (hy_ply_load(HY_DATA_DIR "/ccd-frames/cloth-ball/frame0.ply", &c0) != HY_OK ||
        hy_ply_load(HY_DATA_DIR "/ccd-frames/cloth-ball/frame1.ply", &c1) != HY_OK || !c0 || !c1) {
        fprintf(stderr, "cloth-ball frames not readable: open-fan check skipped\n");
        hy_mesh_destroy(c0);
        hy_mesh_destroy(c1);
        return;
    }
    const int32_t ids[6] = {34877, 34876, 10436, 10439, 34880, 9062};
    const int32_t tris[12] = {0, 1, 2, 3, 1, 4, 5, 1, 0, 1, 5, 4}; /* local */
    double x0[18], x1[18];
    for (int v = 0; v < 6; v++)
        for (int k = 0; k < 3; k++) {
            x0[3 * v + k] = c0->positions[3 * (int64_t)ids[v] + k];
            x1[3 * v + k] = c1->positions[3 * (int64_t)ids[v] + k];
        }
    double toi = 1.0;
    CHECK(hy_ccd_ee(x0 + 6, x0 + 0, x0 + 9, x0 + 3, x1 + 6, x1 + 0, x1 + 9, x1 + 3, 0.0, &toi) == 1);
    hy_bvh* b = NULL;
    hy_traverser* tr = hy_traverser_create();
    hy_candidates cand = {0};
    CHECK_OK(hy_bvh_create(tris, 4, 6, &b));
    if (b && tr) {
        CHECK_OK(hy_bvh_set_vertex_ids(b, ids));
        b->self_cull = 0;
        CHECK_OK(hy_bvh_build(b, x0, x1, 0.0, NULL));
        CHECK_OK(hy_bvh_traverse_self(tr, b, NULL, &cand));
        CHECK(has_ee(&cand, 10436, 34877, 10439, 34876));
        b->self_cull = 1;
        CHECK_OK(hy_bvh_build(b, x0, x1, 0.0, NULL));
        CHECK_OK(hy_bvh_traverse_self(tr, b, NULL, &cand));
        CHECK(b->node_count == 1);   /* one leaf of four */
        CHECK(b->cones[0].c > 0.5);  /* its cone: under 60 degrees */
        CHECK(b->self_free[0] == 0); /* refused by the contour */
        CHECK(has_ee(&cand, 10436, 34877, 10439, 34876));
    }
    hy_candidates_free(&cand);
    hy_traverser_destroy(tr);
    hy_bvh_destroy(b);
    hy_mesh_destroy(c0);
    hy_mesh_destroy(c1);
}

/* Pieces that are copies of one body (hy_frames_def.instance): six
 * icospheres of 320 triangles in a row, moving into each other. Copies 1-3
 * are the first scaled and moved, so they take its tree; copy 4 is turned
 * a quarter turn and copy 5 has its vertices jittered by 5% of the radius:
 * the same triangles, another shape, so both are built on their own. With
 * and without instancing, and at 1 and 2 threads, the same collisions;
 * the shared trees pass hy_bvh_check. */
/* The last run's collisions, canonical and sorted (a set to compare across
 * trees); NULL when out of memory. */
static hy_feature_pair* sorted_found(const hy_frames* f, int64_t* n) {
    const hy_feature_pair* found = hy_frames_found(f, n);
    hy_feature_pair* s = malloc(sizeof *s * (size_t)(*n + 1));
    if (!s) return NULL;
    for (int64_t i = 0; i < *n; i++) s[i] = hy_feature_pair_canonical(found[i]);
    qsort(s, (size_t)*n, sizeof *s, hy_feature_pair_cmp);
    return s;
}

static void test_instances(void) {
    hy_mesh* ball = NULL;
    CHECK_OK(hy_mesh_icosphere(1.0, 2, &ball));
    if (!ball) return;
    hy_mesh_view v = hy_mesh_get_view(ball);
    enum { COPIES = 6 };
    int32_t nv = COPIES * v.vertex_count, nt = COPIES * v.triangle_count;
    int32_t* tri = malloc(sizeof(int32_t) * 3 * (size_t)nt);
    double* x0 = malloc(sizeof(double) * 3 * (size_t)nv);
    double* x1 = malloc(sizeof(double) * 3 * (size_t)nv);
    CHECK(tri && x0 && x1);
    if (!tri || !x0 || !x1) goto out;
    uint64_t seed = 12345;
    for (int c = 0; c < COPIES; c++) {
        double scale = 1.0 + 0.05 * c, cx = 2.0 * c, move = c % 2 ? -0.3 : 0.3;
        for (int32_t t = 0; t < 3 * v.triangle_count; t++)
            tri[3 * c * v.triangle_count + t] = c * v.vertex_count + v.triangles[t];
        for (int32_t i = 0; i < v.vertex_count; i++) {
            double p[3] = {v.positions[3 * i], v.positions[3 * i + 1], v.positions[3 * i + 2]};
            if (c == 4) { /* a quarter turn about z */
                double q = p[0];
                p[0] = -p[1];
                p[1] = q;
            }
            for (int k = 0; k < 3 && c == 5; k++) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                p[k] += 0.05 * ((double)(seed >> 11) / 9007199254740992.0 - 0.5);
            }
            double* a = x0 + 3 * ((int64_t)c * v.vertex_count + i);
            double* b = x1 + 3 * ((int64_t)c * v.vertex_count + i);
            for (int k = 0; k < 3; k++) a[k] = scale * p[k] + (k == 0 ? cx : 0.0);
            for (int k = 0; k < 3; k++) b[k] = a[k] + (k == 0 ? move : 0.01 * k);
        }
    }
    hy_pool* pools[2] = {hy_pool_create(1), hy_pool_create(2)};
    hy_feature_pair* sets[3] = {NULL, NULL, NULL};
    int64_t counts[3] = {0, 0, 0};
    for (int run = 0; run < 3; run++) {
        hy_frames_def def = hy_frames_def_default();
        def.instance = run < 2;
        hy_frames* f = NULL;
        CHECK_OK(hy_frames_create(tri, nt, nv, &def, &f));
        if (!f) continue;
        hy_frames_stats st;
        CHECK_OK(hy_frames_run(f, x0, x1, pools[run == 1], &st));
        CHECK(st.components == COPIES);
        CHECK(st.instanced == (run < 2 ? 3 : 0));
        for (int32_t c = 0; c < COPIES; c++) CHECK(hy_bvh_check(hy_frames_bvh(f, c)));
        sets[run] = sorted_found(f, &counts[run]);
        /* the next run refits every tree, shared or not: the same set */
        CHECK_OK(hy_frames_run(f, x0, x1, pools[1], &st));
        CHECK(st.rebuilt == 0 && st.instanced == 0);
        int64_t n = 0;
        hy_feature_pair* again = sorted_found(f, &n);
        CHECK(again && n == counts[run] && memcmp(again, sets[run], sizeof *again * (size_t)n) == 0);
        free(again);
        hy_frames_destroy(f);
    }
    fprintf(stderr, "six copies of a ball: %lld collisions\n", (long long)counts[0]);
    CHECK(counts[0] > 100);
    for (int run = 1; run < 3; run++)
        CHECK(sets[0] && sets[run] && counts[run] == counts[0] &&
              memcmp(sets[run], sets[0], sizeof *sets[0] * (size_t)counts[0]) == 0);
    for (int run = 0; run < 3; run++) free(sets[run]);
    hy_pool_destroy(pools[0]);
    hy_pool_destroy(pools[1]);

    /* hy_bvh_build_like wants a built tree of the same triangles */
    {
        hy_bvh *a = NULL, *b = NULL, *c = NULL;
        int32_t other[3 * 320];
        memcpy(other, v.triangles, sizeof other);
        int32_t swap = other[0];
        other[0] = other[1];
        other[1] = swap;
        CHECK_OK(hy_bvh_create(v.triangles, v.triangle_count, v.vertex_count, &a));
        CHECK_OK(hy_bvh_create(v.triangles, v.triangle_count, v.vertex_count, &b));
        CHECK_OK(hy_bvh_create(other, v.triangle_count, v.vertex_count, &c));
        if (a && b && c) {
            CHECK(hy_bvh_build_like(b, a, x0, x1, 0.0, NULL) == HY_ERR_INVALID_ARG); /* a not built */
            CHECK_OK(hy_bvh_build(a, x0, x1, 0.0, NULL));
            CHECK_OK(hy_bvh_build_like(b, a, x0 + 3 * v.vertex_count, x1 + 3 * v.vertex_count, 0.0, NULL));
            CHECK(hy_bvh_check(b) && b->node_count == a->node_count && b->builds == 1);
            CHECK(hy_bvh_build_like(c, a, x0, x1, 0.0, NULL) == HY_ERR_INVALID_ARG);
        }
        hy_bvh_destroy(a);
        hy_bvh_destroy(b);
        hy_bvh_destroy(c);
    }
out:
    free(tri);
    free(x0);
    free(x1);
    hy_mesh_destroy(ball);
}

static double wall_ms(void) { /* the clock collision/frames.c times its passes with */
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static double num(const cJSON* o, const char* a, const char* b) {
    const cJSON* x = cJSON_GetObjectItemCaseSensitive(o, a);
    if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
    return cJSON_IsNumber(x) ? x->valuedouble : -1;
}

int main(void) {
    test_instances(); /* needs no shared data */
    hy_mesh* m0 = NULL;
    hy_mesh* m1 = NULL;
    if (hy_ply_load(SCENE "/frame0.ply", &m0) == HY_ERR_IO) TEST_SKIP("shared data not found: " SCENE);
    CHECK_OK(hy_ply_load(SCENE "/frame1.ply", &m1));
    if (!m0 || !m1) TEST_END();

    /* Determinism: 1 and 2 threads, no pool, build and refit. */
    hy_pool* p1 = hy_pool_create(1);
    hy_pool* p2 = hy_pool_create(2);
    hy_frames* f[3] = {NULL, NULL, NULL};
    hy_pool* pools[3] = {NULL, p1, p2};
    hy_frames_stats st[3];
    for (int i = 0; i < 3; i++) {
        CHECK_OK(hy_frames_create(m0->triangles, m0->triangle_count, m0->vertex_count, NULL, &f[i]));
        CHECK_OK(hy_frames_run(f[i], m0->positions, m1->positions, pools[i], &st[i]));
    }
    fprintf(stderr, "cloth-funnel: %lld components, %lld candidates, %lld exact tests, %lld VF + %lld EE found\n",
            (long long)st[0].components, (long long)st[0].candidates, (long long)st[0].exact_tests,
            (long long)st[0].vf_found, (long long)st[0].ee_found);
    int64_t n0 = 0;
    const hy_feature_pair* found0 = hy_frames_found(f[0], &n0);
    CHECK(n0 > 0);
    for (int i = 1; i < 3; i++) {
        int64_t n = 0;
        const hy_feature_pair* found = hy_frames_found(f[i], &n);
        const hy_candidates* c0 = hy_frames_candidates(f[0]);
        const hy_candidates* c = hy_frames_candidates(f[i]);
        CHECK(n == n0 && memcmp(found, found0, sizeof *found * (size_t)n) == 0);
        CHECK(c->count == c0->count && memcmp(c->pairs, c0->pairs, sizeof *c->pairs * (size_t)c->count) == 0);
        CHECK(st[i].exact_tests == st[0].exact_tests);
    }
    /* A second run refits the trees: same answer. */
    hy_frames_stats again;
    CHECK_OK(hy_frames_run(f[2], m0->positions, m1->positions, p2, &again));
    CHECK(again.rebuilt == 0);
    int64_t n2 = 0;
    const hy_feature_pair* found2 = hy_frames_found(f[2], &n2);
    CHECK(n2 == n0 && memcmp(found2, found0, sizeof *found2 * (size_t)n2) == 0);
    /* The breakdown classes every candidate once, and its exact-test
     * classes are the run's exact tests and collisions, per kind. */
    hy_frames_breakdown bd;
    double wall0 = wall_ms();
    CHECK_OK(hy_frames_profile(f[2], m0->positions, m1->positions, &bd));
    double wall = wall_ms() - wall0;
    int64_t classed = 0;
    for (int k = 0; k < 2; k++)
        classed += bd.coplanar_culled[k] + bd.sat_culled[k] + bd.slab_culled[k] + bd.exact_miss[k] + bd.exact_hit[k];
    CHECK(classed == again.candidates);
    CHECK(bd.exact_miss[0] + bd.exact_hit[0] == again.vf_exact);
    CHECK(bd.exact_miss[1] + bd.exact_hit[1] == again.ee_exact);
    CHECK(bd.exact_hit[0] == again.vf_found && bd.exact_hit[1] == again.ee_found);
    CHECK(bd.coplanar_culled[1] > 0 && bd.sat_culled[1] > 0); /* both filters cull here */
    /* the five passes run one after the other inside the call: their times
     * (same clock) add up to at most its wall time, and none is negative */
    double passes[5] = {bd.ms_coplanar, bd.ms_sat, bd.ms_slabs, bd.ms_exact_miss, bd.ms_exact_hit}, sum_ms = 0.0;
    for (int k = 0; k < 5; k++) {
        CHECK(passes[k] >= 0.0);
        sum_ms += passes[k];
    }
    CHECK(sum_ms <= wall);
    /* ... and leaves the run's results alone */
    int64_t n3 = 0;
    const hy_feature_pair* found3 = hy_frames_found(f[2], &n3);
    CHECK(n3 == n0 && memcmp(found3, found0, sizeof *found3 * (size_t)n3) == 0);
    /* ccd-frames --refit: the tree of frame0 alone (built after
     * hy_frames_invalidate), then refit over the step: the same answer. */
    hy_frames_invalidate(f[2]);
    CHECK_OK(hy_frames_run(f[2], m0->positions, m0->positions, p2, &again));
    CHECK(again.rebuilt == 1);
    CHECK_OK(hy_frames_run(f[2], m0->positions, m1->positions, p2, &again));
    CHECK(again.rebuilt == 0);
    /* (another tree: the same set, in its own traversal order) */
    int64_t n4 = 0, n0s = 0;
    hy_feature_pair* sa = sorted_found(f[0], &n0s);
    hy_feature_pair* sb = sorted_found(f[2], &n4);
    CHECK(n4 == n0 && n0s == n0);
    CHECK(sa && sb && n4 == n0s && memcmp(sa, sb, sizeof *sa * (size_t)n0) == 0);
    free(sa);
    free(sb);
    CHECK(hy_frames_profile(NULL, m0->positions, m1->positions, &bd) == HY_ERR_INVALID_ARG);
    for (int i = 0; i < 3; i++) hy_frames_destroy(f[i]);
    hy_pool_destroy(p1);
    hy_pool_destroy(p2);

    test_open_fan();

    /* With a contact distance, self culling (hy_bvh.self_cull: narrow
     * cones, projected altitudes and contour clearance above it) finds the
     * same pairs within it as no culling, from fewer candidates. */
    {
        hy_frames_def def = hy_frames_def_default();
        def.thickness = 1e-3;
        hy_frames* fc[2] = {NULL, NULL};
        hy_frames_stats sc[2];
        int64_t nc[2] = {0, 0};
        hy_feature_pair* fp[2] = {NULL, NULL};
        hy_pool* pc = hy_pool_create(2);
        for (int i = 0; i < 2; i++) {
            def.self_cull = i == 0;
            CHECK_OK(hy_frames_create(m0->triangles, m0->triangle_count, m0->vertex_count, &def, &fc[i]));
            if (!fc[i]) continue;
            CHECK_OK(hy_frames_run(fc[i], m0->positions, m1->positions, pc, &sc[i]));
            fp[i] = sorted_found(fc[i], &nc[i]);
        }
        fprintf(stderr, "cloth-funnel at 1 mm: %lld pairs within (%lld without culling), %lld candidates (%lld)\n",
                (long long)nc[0], (long long)nc[1], (long long)sc[0].candidates, (long long)sc[1].candidates);
        CHECK(nc[0] > 0);
        CHECK(nc[0] == nc[1] && fp[0] && fp[1] && memcmp(fp[0], fp[1], sizeof *fp[0] * (size_t)nc[0]) == 0);
        CHECK(sc[0].candidates < sc[1].candidates);
        /* The pipeline's answers (filters at the distance, then the exact
         * test without a time of impact) are the plain exact test's
         * (hy_ccd_vf / hy_ccd_ee, default options) on every candidate. */
        const hy_candidates* cc = fc[0] ? hy_frames_candidates(fc[0]) : NULL;
        CHECK(cc != NULL);
        if (cc) {
            hy_feature_pair* pv = malloc(sizeof *pv * (size_t)(cc->count + 1));
            int64_t pn = 0;
            CHECK(pv != NULL);
            for (int64_t k = 0; pv && k < cc->count; k++) {
                const int32_t* v = cc->pairs[k].v;
                const double *a[4], *b[4];
                for (int j = 0; j < 4; j++) {
                    a[j] = m0->positions + 3 * (size_t)v[j];
                    b[j] = m1->positions + 3 * (size_t)v[j];
                }
                double toi;
                int hit = cc->pairs[k].kind == HY_FEATURE_EE
                              ? hy_ccd_ee(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], 1e-3, &toi)
                              : hy_ccd_vf(a[0], a[1], a[2], a[3], b[0], b[1], b[2], b[3], 1e-3, &toi);
                if (hit) pv[pn++] = hy_feature_pair_canonical(cc->pairs[k]);
            }
            if (pn) qsort(pv, (size_t)pn, sizeof *pv, hy_feature_pair_cmp);
            fprintf(stderr, "cloth-funnel at 1 mm: the plain exact test finds %lld of the candidates\n",
                    (long long)pn);
            CHECK(pn == nc[0] && pv && fp[0] && memcmp(pv, fp[0], sizeof *fp[0] * (size_t)nc[0]) == 0);
            free(pv);
        }
        for (int i = 0; i < 2; i++) {
            hy_frames_destroy(fc[i]);
            free(fp[i]);
        }
        hy_pool_destroy(pc);
    }

    /* Bad topology is a status. */
    int32_t bad[3] = {0, 1, 99999};
    hy_frames* fb = NULL;
    CHECK(hy_frames_create(bad, 1, 10, NULL, &fb) == HY_ERR_INVALID_ARG);
    CHECK(fb == NULL);

    /* The command against the ground truth: exit 0, no false negatives. */
    /* Threads 1 and 2 with self-culling (the default), then 2 without:
     * the same collisions found here, culling only removes work. (In
     * general the counts may differ by exact-test false positives inside
     * a culled patch, which culling removes; these frames have none.) */
    static char out[1 << 16];
    double found[3][2] = {{-1, -1}, {-1, -1}, {-1, -1}}, tri_pairs[3] = {-1, -1, -1};
    for (int run_i = 0; run_i < 3; run_i++) {
        int threads = run_i == 0 ? 1 : 2, cull = run_i < 2;
        char cmd[1024];
        snprintf(cmd, sizeof cmd, "'%s' ccd-frames '%s' --threads %d --repeats 1 --json%s", HY_CLI, SCENE, threads,
                 cull ? (run_i == 1 ? " --breakdown" : "") : " --no-cull");
        int rc = run(cmd, out, sizeof out);
        fprintf(stderr, "%s -> %d\n%s", cmd, rc, out);
        CHECK(rc == 0);
        cJSON* j = cJSON_Parse(out);
        CHECK(j != NULL);
        if (j) {
            CHECK(num(j, "vf", "false_negatives") == 0);
            CHECK(num(j, "ee", "false_negatives") == 0);
            CHECK(num(j, "vf", "found") >= 27); /* README: 27 VF, 107 EE collide */
            CHECK(num(j, "ee", "found") >= 107);
            CHECK(num(j, "threads", NULL) == threads);
            CHECK(num(j, "candidates", NULL) >= num(j, "exact_tests", NULL));
            CHECK(num(j, "ms", NULL) > 0);
            CHECK(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(j, "self_cull")) == cull);
            if (run_i == 1) {
                /* --breakdown: the exact test's hits are the pairs found */
                const cJSON* jb = cJSON_GetObjectItemCaseSensitive(j, "breakdown");
                CHECK(jb != NULL);
                if (jb) {
                    CHECK(num(jb, "exact_hit", "vf") == num(j, "vf", "found"));
                    CHECK(num(jb, "exact_hit", "ee") == num(j, "ee", "found"));
                    CHECK(num(jb, "exact_miss", "ee") + num(jb, "exact_hit", "ee") == num(j, "ee", "exact_tests"));
                    /* every class reports its time (num gives -1 for a missing field) */
                    const char* cls[5] = {"coplanar", "sat", "slabs", "exact_miss", "exact_hit"};
                    for (int k = 0; k < 5; k++) CHECK(cJSON_IsNumber(
                        cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(jb, cls[k]), "ms")));
                }
            } else {
                CHECK(cJSON_GetObjectItemCaseSensitive(j, "breakdown") == NULL);
            }
            found[run_i][0] = num(j, "vf", "found");
            found[run_i][1] = num(j, "ee", "found");
            tri_pairs[run_i] = num(j, "triangle_pairs", NULL);
        }
        cJSON_Delete(j);
    }
    for (int k = 0; k < 2; k++) {
        CHECK(found[1][k] == found[0][k]);
        CHECK(found[2][k] == found[0][k]);
    }
    CHECK(tri_pairs[1] == tri_pairs[0]);
    CHECK(tri_pairs[1] < 0.8 * tri_pairs[2]); /* 92,502 against 138,894 triangle pairs */
    /* Bad usage and input: exit 2 with a message. */
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' ccd-frames /nonexistent/dir 2>&1", HY_CLI);
    CHECK(run(cmd, out, sizeof out) == 2);
    CHECK(strstr(out, "/nonexistent/dir/frame0.ply") != NULL);
    snprintf(cmd, sizeof cmd, "'%s' ccd-frames '%s' --bogus 2>&1", HY_CLI, SCENE);
    CHECK(run(cmd, out, sizeof out) == 2);
    CHECK(strstr(out, "--bogus") != NULL);
    snprintf(cmd, sizeof cmd, "'%s' ccd-frames '%s' --threads 0 2>&1", HY_CLI, SCENE);
    CHECK(run(cmd, out, sizeof out) == 2);
    /* Truth files no CCD can match: a colliding pair listed twice, and one
     * whose features share a vertex. Exit 2 naming the file (and line), not
     * exit 1 for "false negatives". */
    snprintf(cmd, sizeof cmd,
             "t=$(mktemp -d) && for f in frame0.ply frame1.ply ee_truth.csv vf_truth.csv; do ln -s '%s'/$f $t/$f; done"
             " && rm $t/vf_truth.csv && cp '%s'/vf_truth.csv $t/ && awk -F, '$5+0==1' '%s'/vf_truth.csv | head -1 >>$t/vf_truth.csv"
             " && '%s' ccd-frames $t 2>&1; rc=$?; rm -rf $t; exit $rc",
             SCENE, SCENE, SCENE, HY_CLI);
    CHECK(run(cmd, out, sizeof out) == 2);
    CHECK(strstr(out, "vf_truth.csv: the colliding pair") != NULL && strstr(out, "listed twice") != NULL);
    snprintf(cmd, sizeof cmd,
             "t=$(mktemp -d) && for f in frame0.ply frame1.ply vf_truth.csv; do ln -s '%s'/$f $t/$f; done"
             " && cp '%s'/ee_truth.csv $t/ && echo '7,8,8,9,1' >>$t/ee_truth.csv"
             " && '%s' ccd-frames $t 2>&1; rc=$?; rm -rf $t; exit $rc",
             SCENE, SCENE, HY_CLI);
    CHECK(run(cmd, out, sizeof out) == 2);
    CHECK(strstr(out, "ee_truth.csv:") != NULL && strstr(out, "shared or repeated vertex") != NULL);

    hy_mesh_destroy(m0);
    hy_mesh_destroy(m1);
    TEST_END();
}
