/* BVH build/refit and traversal (self-collision culling: test_bvh_cull.c): on random triangle soups (fixed seeds) self and pair traversal find exactly the feature pairs whose swept boxes overlap (brute force over all pairs; interpolated boxes a subset), each once, in the same order for any thread count; the two-lane moving-box test answers as the plain one and the single-precision gate never rejects what it passes; on a crumpled sheet traversal gives exactly the brute-force moving-box pairs; a large build is the same tree for any pool. */
#include "bvh_soup.h"

static void test_self(hy_pool* pool1, hy_pool* pool2) {
    for (int trial = 0; trial < 12; trial++) {
        int32_t nv = 40 + 10 * trial, nt = 50 + 20 * trial;
        double thickness = trial % 3 == 2 ? 0.01 : 0.0;
        soup s = soup_make(nv, nt, 1.0, 0.05 * (1 + trial % 4), 0.0);
        hy_bvh* b = NULL;
        CHECK_OK(hy_bvh_create(s.tri, nt, nv, &b));
        if (!b) continue;
        b->self_cull = 0;   /* exact equality with the brute force */
        b->interpolate = 0; /* swept boxes, as the brute force */
        CHECK_OK(hy_bvh_build(b, s.x0, s.x1, thickness, pool2));
        CHECK(hy_bvh_check(b));
        CHECK_NEAR(hy_bvh_quality(b), 1.0, 1e-12); /* the same tree measured twice */
        hy_traverser* tr = hy_traverser_create();
        hy_candidates c0 = {0}, c1 = {0}, c2 = {0};
        CHECK_OK(hy_bvh_traverse_self(tr, b, NULL, &c0));
        CHECK_OK(hy_bvh_traverse_self(tr, b, pool1, &c1));
        CHECK_OK(hy_bvh_traverse_self(tr, b, pool2, &c2));
        CHECK(same_list(&c0, &c1));
        CHECK(same_list(&c0, &c2));
        CHECK(same_without_simd(tr, b, NULL, pool2, &c0));
        /* exactly the pairs whose single-precision boxes meet, which
         * include every pair whose double boxes do */
        plist got = {0}, want = {0}, dbl = {0};
        to_plist(&c0, &got);
        brute_boxes(&s, &s, 0, thickness, 1, &want);
        canon_sort(&want);
        brute(&s, &s, 0, thickness, &dbl);
        canon_sort(&dbl);
        CHECK(count_dupes(&got) == 0);
        CHECK(count_dupes(&want) == 0);
        CHECK(got.n == want.n);
        CHECK(missing(&want, &got) == 0);
        CHECK(missing(&got, &want) == 0);
        CHECK(missing(&dbl, &got) == 0);
        if (trial == 0)
            fprintf(stderr, "self soup: %lld candidates (brute force %lld, on the double boxes %lld)\n",
                    (long long)got.n, (long long)want.n, (long long)dbl.n);
        free(dbl.v);

        /* Refit after more motion: still exact; quality reflects decay. */
        for (int32_t i = 0; i < 3 * nv; i++) s.x1[i] = s.x0[i] + 0.3 * (2 * urand() - 1);
        hy_bvh_refit(b, s.x0, s.x1, thickness, pool1);
        CHECK(hy_bvh_check(b));
        double q = hy_bvh_quality(b); /* a built tree reports a finite, positive ratio (INFINITY: no tree) */
        CHECK(isfinite(q) && q > 0.0);
        CHECK_OK(hy_bvh_traverse_self(tr, b, pool2, &c2));
        to_plist(&c2, &got);
        want.n = 0;
        brute_boxes(&s, &s, 0, thickness, 1, &want);
        canon_sort(&want);
        CHECK(got.n == want.n && missing(&want, &got) == 0);
        int rebuilt = 0;
        CHECK_OK(hy_bvh_update(b, s.x0, s.x1, thickness, 1.0000001, pool2, &rebuilt));
        CHECK(hy_bvh_check(b));

        /* The moving frame: different boxes (not a subset: the frame's
         * shift can make other boxes meet), but every colliding pair kept.
         * Self culling stays off but for the last check. */
        if (thickness == 0.0) {
            plist hits = {0};
            colliding(&want, s.x0, s.x1, &hits);
            /* Interpolated boxes: a subset of the swept-box pairs that
             * still holds every colliding one. */
            b->interpolate = 1;
            CHECK_OK(hy_bvh_build(b, s.x0, s.x1, 0.0, pool2));
            CHECK_OK(hy_bvh_traverse_self(tr, b, pool2, &c2));
            to_plist(&c2, &got);
            CHECK(count_dupes(&got) == 0);
            CHECK(missing(&got, &want) == 0);
            CHECK(missing(&hits, &got) == 0);
            CHECK(got.n <= want.n);
            b->relative = 1;
            CHECK_OK(hy_bvh_build(b, s.x0, s.x1, 0.0, pool2));
            CHECK_OK(hy_bvh_traverse_self(tr, b, pool2, &c2));
            CHECK(same_without_simd(tr, b, NULL, pool1, &c2));
            to_plist(&c2, &got);
            CHECK(count_dupes(&got) == 0);
            CHECK(missing(&hits, &got) == 0);
            /* and with self culling (the default, off above for the exact
             * equality): a soup's pieces rarely pass it, but what it culls
             * holds no collision */
            b->self_cull = 1;
            CHECK_OK(hy_bvh_build(b, s.x0, s.x1, 0.0, pool2));
            CHECK_OK(hy_bvh_traverse_self(tr, b, pool2, &c2));
            to_plist(&c2, &got);
            CHECK(missing(&hits, &got) == 0);
            b->self_cull = 0;
            free(hits.v);
        }
        free(got.v);
        free(want.v);
        hy_candidates_free(&c0);
        hy_candidates_free(&c1);
        hy_candidates_free(&c2);
        hy_traverser_destroy(tr);
        hy_bvh_destroy(b);
        soup_free(&s);
    }
}

static void test_pair(hy_pool* pool2) {
    for (int trial = 0; trial < 8; trial++) {
        double drift = trial & 1 ? 0.2 : 0.0;
        soup a = soup_make(50, 70, 1.0, 0.05, drift);
        soup b = soup_make(40, 60, 1.0, 0.05, -drift);
        hy_bvh* ba = NULL;
        hy_bvh* bb = NULL;
        CHECK_OK(hy_bvh_create(a.tri, a.nt, a.nv, &ba));
        CHECK_OK(hy_bvh_create(b.tri, b.nt, b.nv, &bb));
        if (!ba || !bb) continue;
        /* One numbering for both: b's vertices after a's. */
        int32_t* ids = malloc(sizeof(int32_t) * (size_t)b.nv);
        for (int32_t i = 0; i < b.nv; i++) ids[i] = a.nv + i;
        CHECK_OK(hy_bvh_set_vertex_ids(bb, ids));
        free(ids);
        double* x0 = malloc(sizeof(double) * 3 * (size_t)(a.nv + b.nv));
        double* x1 = malloc(sizeof(double) * 3 * (size_t)(a.nv + b.nv));
        memcpy(x0, a.x0, sizeof(double) * 3 * (size_t)a.nv);
        memcpy(x0 + 3 * a.nv, b.x0, sizeof(double) * 3 * (size_t)b.nv);
        memcpy(x1, a.x1, sizeof(double) * 3 * (size_t)a.nv);
        memcpy(x1 + 3 * a.nv, b.x1, sizeof(double) * 3 * (size_t)b.nv);

        hy_traverser* tr = hy_traverser_create();
        hy_candidates c0 = {0}, c2 = {0};
        plist got = {0}, want = {0}, hits = {0};
        brute_boxes(&a, &b, a.nv, 0.0, 1, &want); /* as traversal tests: see test_self */
        canon_sort(&want);
        colliding(&want, x0, x1, &hits);

        /* Fixed frame, swept boxes: exactly the brute force. */
        ba->interpolate = bb->interpolate = 0;
        CHECK_OK(hy_bvh_build(ba, a.x0, a.x1, 0.0, NULL));
        CHECK_OK(hy_bvh_build(bb, b.x0, b.x1, 0.0, NULL));
        CHECK_OK(hy_bvh_traverse_pair(tr, ba, bb, NULL, &c0));
        CHECK_OK(hy_bvh_traverse_pair(tr, ba, bb, pool2, &c2));
        CHECK(same_list(&c0, &c2));
        to_plist(&c0, &got);
        CHECK(count_dupes(&got) == 0);
        CHECK(got.n == want.n && missing(&want, &got) == 0 && missing(&got, &want) == 0);

        /* Interpolated boxes: a subset, no colliding pair lost. */
        ba->interpolate = bb->interpolate = 1;
        CHECK_OK(hy_bvh_build(ba, a.x0, a.x1, 0.0, NULL));
        CHECK_OK(hy_bvh_build(bb, b.x0, b.x1, 0.0, NULL));
        CHECK_OK(hy_bvh_traverse_pair(tr, ba, bb, pool2, &c2));
        to_plist(&c2, &got);
        CHECK(count_dupes(&got) == 0);
        CHECK(missing(&got, &want) == 0);
        CHECK(missing(&hits, &got) == 0);

        /* Moving frames: fewer or as many, never a colliding one lost. */
        ba->relative = bb->relative = 1;
        CHECK_OK(hy_bvh_build(ba, a.x0, a.x1, 0.0, NULL));
        CHECK_OK(hy_bvh_build(bb, b.x0, b.x1, 0.0, NULL));
        CHECK_OK(hy_bvh_traverse_pair(tr, ba, bb, pool2, &c2));
        CHECK(same_without_simd(tr, ba, bb, NULL, &c2));
        to_plist(&c2, &got);
        CHECK(count_dupes(&got) == 0);
        CHECK(missing(&hits, &got) == 0);
        if (trial == 1)
            fprintf(stderr, "pair soups: %lld candidates fixed frame, %lld moving frames, %lld colliding\n",
                    (long long)want.n, (long long)got.n, (long long)hits.n);

        /* The job list gives the same as the calls one by one, in order. */
        hy_traverse_job jobs[3] = {{ba, NULL}, {ba, bb}, {bb, bb}};
        hy_candidates cj = {0}, cs = {0};
        CHECK_OK(hy_bvh_traverse_jobs(tr, jobs, 3, pool2, &cj));
        int64_t at = 0;
        for (int j = 0; j < 3; j++) {
            CHECK_OK(jobs[j].b && jobs[j].b != jobs[j].a ? hy_bvh_traverse_pair(tr, jobs[j].a, jobs[j].b, NULL, &cs)
                                                         : hy_bvh_traverse_self(tr, jobs[j].a, NULL, &cs));
            CHECK(at + cs.count <= cj.count &&
                  memcmp(cj.pairs + at, cs.pairs, sizeof *cs.pairs * (size_t)cs.count) == 0);
            at += cs.count;
        }
        CHECK(at == cj.count);
        hy_candidates_free(&cj);
        hy_candidates_free(&cs);

        free(got.v);
        free(want.v);
        free(hits.v);
        free(x0);
        free(x1);
        hy_candidates_free(&c0);
        hy_candidates_free(&c2);
        hy_traverser_destroy(tr);
        hy_bvh_destroy(ba);
        hy_bvh_destroy(bb);
        soup_free(&a);
        soup_free(&b);
    }
}

/* The moving-box test as first written (axis by axis, with branches):
 * hy_mbox_overlap must give the same answer on every input. */
static int mbox_reference(const hy_mbox* a, const hy_mbox* b) {
    double lo = 0.0, hi = 1.0;
    for (int k = 0; k < 3; k++) {
        double g0 = b->hi0[k] - a->lo0[k], g1 = b->hi1[k] - a->lo1[k];
        double h0 = a->hi0[k] - b->lo0[k], h1 = a->hi1[k] - b->lo1[k];
        if ((g0 < 0 && g1 < 0) || (h0 < 0 && h1 < 0)) return 0;
        if (g0 < 0 || g1 < 0) {
            double t = g0 / (g0 - g1);
            if (g0 < 0) {
                if (t > lo) lo = t;
            } else if (t < hi) {
                hi = t;
            }
        }
        if (h0 < 0 || h1 < 0) {
            double t = h0 / (h0 - h1);
            if (h0 < 0) {
                if (t > lo) lo = t;
            } else if (t < hi) {
                hi = t;
            }
        }
    }
    return lo <= hi + 0x1p-48;
}

/* A random moving box near `centre` of size up to `size`, moving by up to
 * `motion`; some bounds snapped to shared values so that touching and equal
 * bounds (the ties) come up often. */
static void mbox_random(hy_mbox* m, double centre, double size, double motion) {
    for (int k = 0; k < 3; k++) {
        double c0 = centre + size * (2 * urand() - 1), c1 = c0 + motion * (2 * urand() - 1);
        double w0 = size * urand(), w1 = size * urand();
        if (urand() < 0.2) {
            c0 = centre;
            w0 = 0.0;
        }
        if (urand() < 0.2) {
            c1 = centre;
            w1 = 0.0;
        }
        m->lo0[k] = c0 - w0;
        m->hi0[k] = c0 + w0;
        m->lo1[k] = c1 - w1;
        m->hi1[k] = c1 + w1;
    }
}

static void test_box_tests(void) {
    int64_t mismatch = 0, gate_lost = 0, shift_lost = 0, hits = 0, bad_float = 0, n = 200000;
    for (int64_t i = 0; i < n; i++) {
        /* scales from 1e-9 to 1e6 and offsets far from the origin */
        double scale = pow(10.0, -9.0 + 15.0 * urand()), centre = (urand() < 0.5 ? 0.0 : 1e3) * (2 * urand() - 1);
        hy_mbox a, b;
        mbox_random(&a, centre, scale, scale * 4 * urand());
        mbox_random(&b, centre, scale, scale * 4 * urand());
        int r = hy_mbox_overlap(&a, &b);
        hits += r;
        mismatch += r != mbox_reference(&a, &b);
        hy_fbox fa, fb;
        hy_fbox_from(&a, &fa);
        hy_fbox_from(&b, &fb);
        gate_lost += r && !hy_fbox_overlap(&fa, &fb);
        /* the conversion: each bound the scalar rounding, padding zero */
        for (int k = 0; k < 3; k++)
            bad_float += fa.lo0[k] != hy_float_down(a.lo0[k]) || fa.hi0[k] != hy_float_up(a.hi0[k]) ||
                         fa.lo1[k] != hy_float_down(a.lo1[k]) || fa.hi1[k] != hy_float_up(a.hi1[k]) ||
                         !((double)fa.lo0[k] <= a.lo0[k] && (double)fa.hi1[k] >= a.hi1[k]);
        bad_float += fa.lo0[3] != 0.0f || fa.hi0[3] != 0.0f || fa.lo1[3] != 0.0f || fa.hi1[3] != 0.0f;
        /* a moved by e, in doubles and as the float gate sees it */
        double e[3];
        for (int k = 0; k < 3; k++) e[k] = scale * 3 * (2 * urand() - 1) + (urand() < 0.1 ? 1e4 : 0.0);
        hy_mbox as;
        hy_mbox_shift(&a, e, &as);
        float elo[4], ehi[4];
        hy_fbox_shift_range(e, elo, ehi);
        shift_lost += hy_mbox_overlap(&as, &b) && !hy_fbox_overlap_shift(&fa, elo, ehi, &fb);
    }
    /* Beyond the float range: the gate still passes what the double test
     * passes (boxes near 1e39 touching, far from each other's reach). */
    for (int i = 0; i < 1000; i++) {
        hy_mbox a, b;
        mbox_random(&a, 1e39, 1e37, 1e37);
        mbox_random(&b, 1e39, 1e37, 1e37);
        hy_fbox fa, fb;
        hy_fbox_from(&a, &fa);
        hy_fbox_from(&b, &fb);
        gate_lost += hy_mbox_overlap(&a, &b) && !hy_fbox_overlap(&fa, &fb);
    }
    /* NaN bounds keep the pair in both tests. */
    hy_mbox a, b;
    mbox_random(&a, 0.0, 1.0, 1.0);
    b = a;
    b.lo1[1] = NAN;
    CHECK(hy_mbox_overlap(&a, &b) == mbox_reference(&a, &b));
    fprintf(stderr, "box tests: %lld of %lld overlap; %lld mismatches, %lld lost by the gate, %lld shifted\n",
            (long long)hits, (long long)n, (long long)mismatch, (long long)gate_lost, (long long)shift_lost);
    CHECK(hits > n / 10 && hits < n - n / 10); /* both answers well represented */
    CHECK(mismatch == 0);
    CHECK(gate_lost == 0);
    CHECK(shift_lost == 0);
    CHECK(bad_float == 0);
}

/* Brute force over owned features: the sheet's feature pairs whose boxes
 * (unions of the BVH's vertex boxes) meet, as boxes_meet says. */
static void sheet_pairs(const hy_bvh* b, const int32_t* tri, int32_t nt, int32_t nv, const int32_t* e, int32_t ne,
                        int single, plist* out) {
    const hy_mbox* vm = b->vertex_mboxes;
    for (int32_t t = 0; t < nt; t++) {
        const int32_t* f = tri + 3 * t;
        hy_mbox tb;
        hy_mbox_union(&tb, &vm[f[0]], &vm[f[1]]);
        hy_mbox_union(&tb, &tb, &vm[f[2]]);
        for (int32_t p = 0; p < nv; p++)
            if (p != f[0] && p != f[1] && p != f[2] && boxes_meet(&vm[p], &tb, single))
                push(out, (hy_feature_pair){{p, f[0], f[1], f[2]}, HY_FEATURE_VF});
    }
    for (int32_t i = 0; i < ne; i++) {
        hy_mbox ea;
        hy_mbox_union(&ea, &vm[e[2 * i]], &vm[e[2 * i + 1]]);
        for (int32_t j = i + 1; j < ne; j++) {
            const int32_t* p = e + 2 * i;
            const int32_t* q = e + 2 * j;
            if (p[0] == q[0] || p[0] == q[1] || p[1] == q[0] || p[1] == q[1]) continue;
            hy_mbox eb;
            hy_mbox_union(&eb, &vm[q[0]], &vm[q[1]]);
            if (boxes_meet(&ea, &eb, single))
                push(out, (hy_feature_pair){{p[0], p[1], q[0], q[1]}, HY_FEATURE_EE});
        }
    }
    canon_sort(out);
}

/* A crumpled sheet (a grid with random motion, no culling): self traversal
 * gives exactly the feature pairs whose single-precision boxes meet (brute
 * force with hy_fbox_overlap on hy_fbox_from of the unions of the BVH's
 * own double vertex boxes), for any pool; that includes every pair whose
 * double boxes meet (hy_mbox_overlap), and only a few more. The gate boxes
 * the BVH makes by float unions are hy_fbox_from of the double unions, bit
 * for bit. */
static void test_sheet(hy_pool* pool2) {
    hy_mesh* g = NULL;
    CHECK_OK(hy_mesh_grid(24, 24, 1.0, 1.0, &g));
    if (!g) return;
    hy_mesh_view v = hy_mesh_get_view(g);
    int32_t nv = v.vertex_count, nt = v.triangle_count;
    double* x0 = malloc(sizeof(double) * 3 * (size_t)nv);
    double* x1 = malloc(sizeof(double) * 3 * (size_t)nv);
    for (int32_t i = 0; i < 3 * nv; i++) {
        /* folded onto itself: y from a sine of x, plus noise; cells ~0.04 */
        x0[i] = v.positions[i] + 0.02 * (2 * urand() - 1);
        if (i % 3 == 1) x0[i] += 0.3 * sin(12.0 * v.positions[i - 1]);
        x1[i] = x0[i] + 0.03 * (2 * urand() - 1);
    }
    hy_bvh* b = NULL;
    CHECK_OK(hy_bvh_create(v.triangles, nt, nv, &b));
    if (!b) return;
    b->self_cull = 0;
    CHECK_OK(hy_bvh_build(b, x0, x1, 0.0, pool2));
    hy_traverser* tr = hy_traverser_create();
    hy_candidates c0 = {0}, c2 = {0};
    CHECK_OK(hy_bvh_traverse_self(tr, b, NULL, &c0));
    CHECK_OK(hy_bvh_traverse_self(tr, b, pool2, &c2));
    CHECK(same_list(&c0, &c2));
    CHECK(same_without_simd(tr, b, NULL, pool2, &c0));
    plist want = {0}, dbl = {0}, got = {0};
    const hy_mbox* vm = b->vertex_mboxes;
    soup s = {nv, nt, x0, x1, (int32_t*)v.triangles};
    int32_t* e = malloc(sizeof(int32_t) * 6 * (size_t)nt);
    int32_t ne = edges_of(&s, e);
    sheet_pairs(b, v.triangles, nt, nv, e, ne, 1, &want);
    sheet_pairs(b, v.triangles, nt, nv, e, ne, 0, &dbl);
    canon_sort(&want);
    to_plist(&c0, &got);
    fprintf(stderr, "sheet: %lld candidates (brute force %lld; on the double boxes %lld)\n", (long long)got.n,
            (long long)want.n, (long long)dbl.n);
    CHECK(want.n > 1000);
    CHECK(count_dupes(&got) == 0);
    CHECK(got.n == want.n && missing(&want, &got) == 0 && missing(&got, &want) == 0);
    CHECK(missing(&dbl, &got) == 0 && got.n - dbl.n <= dbl.n / 1000);
    /* refit after more motion: the same again */
    for (int32_t i = 0; i < 3 * nv; i++) x1[i] = x0[i] + 0.05 * (2 * urand() - 1);
    hy_bvh_refit(b, x0, x1, 0.0, pool2);
    CHECK(hy_bvh_check(b));
    /* every vertex's, triangle's and owned edge's gate box is hy_fbox_from
     * of its double box (a triangle's and an edge's the union of its
     * vertices') */
    int64_t bad_edges = 0, features = 0;
    for (int32_t i = 0; i < nv; i++) {
        hy_fbox f;
        hy_fbox_from(&vm[i], &f);
        bad_edges += memcmp(&f, &b->vertex_fboxes[i], sizeof f) != 0;
    }
    for (int32_t i = 0; i < nt; i++) {
        const hy_bvh_slot* sl = &b->slots[i];
        CHECK(sl->v[0] == b->triangles[3 * b->order[i]]);
        hy_mbox u;
        hy_fbox f;
        hy_mbox_union(&u, &vm[sl->v[0]], &vm[sl->v[1]]);
        hy_mbox_union(&u, &u, &vm[sl->v[2]]);
        hy_fbox_from(&u, &f);
        bad_edges += memcmp(&f, &b->leaf_fboxes[i], sizeof f) != 0;
        int m = 0;
        for (int k = 0; k < 3; k++)
            if (sl->owned & HY_BVH_OWN_EDGE(k)) {
                hy_mbox_union(&u, &vm[sl->v[k]], &vm[sl->v[(k + 1) % 3]]);
                hy_fbox_from(&u, &f);
                bad_edges += memcmp(&f, &b->feature_fboxes[sl->feature + m++], sizeof f) != 0;
            }
        /* then its owned vertices' boxes, copied */
        for (int k = 0; k < 3; k++)
            if (sl->owned & HY_BVH_OWN_VERTEX(k))
                bad_edges += memcmp(&b->vertex_fboxes[sl->v[k]], &b->feature_fboxes[sl->feature + m++], sizeof f) != 0;
        CHECK(m == sl->ne + sl->nv);
        features += m;
    }
    CHECK(features == b->feature_count);
    CHECK(bad_edges == 0);
    free(e);
    free(want.v);
    free(dbl.v);
    free(got.v);
    hy_candidates_free(&c0);
    hy_candidates_free(&c2);
    hy_traverser_destroy(tr);
    hy_bvh_destroy(b);
    free(x0);
    free(x1);
    hy_mesh_destroy(g);
}

/* A build large enough for the parallel binning at the top: the same tree
 * (nodes, order, cost) with no pool, one thread and two. */
static void test_large_build(hy_pool* pool1, hy_pool* pool2) {
    hy_mesh* g = NULL;
    CHECK_OK(hy_mesh_grid(160, 160, 1.0, 1.0, &g));
    if (!g) return;
    hy_mesh_view v = hy_mesh_get_view(g);
    int32_t nv = v.vertex_count;
    double* x1 = malloc(sizeof(double) * 3 * (size_t)nv);
    for (int32_t i = 0; i < 3 * nv; i++) x1[i] = v.positions[i] + 0.01 * (2 * urand() - 1);
    hy_bvh* b[3] = {NULL, NULL, NULL};
    hy_pool* pools[3] = {NULL, pool1, pool2};
    for (int i = 0; i < 3; i++) {
        CHECK_OK(hy_bvh_create(v.triangles, v.triangle_count, nv, &b[i]));
        if (b[i]) CHECK_OK(hy_bvh_build(b[i], v.positions, x1, 0.0, pools[i]));
    }
    if (b[0] && b[1] && b[2]) {
        CHECK(v.triangle_count > 40000);
        CHECK(hy_bvh_check(b[0]));
        for (int i = 1; i < 3; i++) {
            CHECK(b[i]->node_count == b[0]->node_count);
            CHECK(memcmp(b[i]->nodes, b[0]->nodes, sizeof(hy_bvh_node) * (size_t)b[0]->node_count) == 0);
            CHECK(memcmp(b[i]->order, b[0]->order, sizeof(int32_t) * (size_t)v.triangle_count) == 0);
            CHECK(memcmp(b[i]->self_free, b[0]->self_free, (size_t)b[0]->node_count) == 0);
            CHECK(b[i]->cost == b[0]->cost);
        }
    }
    for (int i = 0; i < 3; i++) hy_bvh_destroy(b[i]);
    free(x1);
    hy_mesh_destroy(g);
}

static void test_bad_input(void) {
    hy_bvh* b = (hy_bvh*)1;
    int32_t tri[6] = {0, 1, 2, 0, 1, 7};
    CHECK(hy_bvh_create(tri, 2, 4, &b) == HY_ERR_INVALID_ARG);
    CHECK(b == NULL);
    CHECK(strstr(hy_last_error(), "triangle 1") != NULL);
    int32_t rep[3] = {0, 1, 1};
    CHECK(hy_bvh_create(rep, 1, 3, &b) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "repeats") != NULL);
    /* Traversal before a build is a status, not a crash. */
    int32_t one[3] = {0, 1, 2};
    CHECK_OK(hy_bvh_create(one, 1, 3, &b));
    hy_traverser* tr = hy_traverser_create();
    hy_candidates c = {0};
    CHECK(hy_bvh_traverse_self(tr, b, NULL, &c) == HY_ERR_INVALID_ARG);
    hy_traverser_destroy(tr);
    hy_bvh_destroy(b);
}

/* hy_bvh_refit_vertices against hy_bvh_refit: two trees of one waving
 * 20 x 20 sheet built alike, then over rounds of the same x0 with a few
 * vertices' x1 moved each round (as the response's detection rounds), one
 * refitted whole, the other over the moved vertices only; every box,
 * cone, culling mark, the cost and the traversal's candidates must be the
 * same, at distance 0 and 2 mm, with some nodes culled and some not. */
static int same_bytes(const void* a, const void* b, size_t n) { return memcmp(a, b, n) == 0; }

static int same_trees(const hy_bvh* a, const hy_bvh* b) {
    size_t nn = (size_t)a->node_count, nt = (size_t)a->triangle_count, nv = (size_t)a->vertex_count;
    if (a->node_count != b->node_count || a->cost != b->cost) return 0;
    for (size_t i = 0; i < nn; i++)
        if (!same_bytes(&a->nodes[i].box, &b->nodes[i].box, sizeof a->nodes[i].box)) return 0;
    return same_bytes(a->node_fboxes, b->node_fboxes, sizeof *a->node_fboxes * nn) &&
           same_bytes(a->node_area, b->node_area, sizeof *a->node_area * nn) &&
           same_bytes(a->self_free, b->self_free, nn) && same_bytes(a->cones, b->cones, sizeof *a->cones * nn) &&
           same_bytes(a->leaf_fboxes, b->leaf_fboxes, sizeof *a->leaf_fboxes * nt) &&
           same_bytes(a->triangle_normals, b->triangle_normals, sizeof *a->triangle_normals * nt) &&
           same_bytes(a->triangle_boxes, b->triangle_boxes, sizeof *a->triangle_boxes * nt) &&
           same_bytes(a->leaf_soa, b->leaf_soa, sizeof(float) * 12 * (size_t)a->leaf_soa_stride) &&
           same_bytes(a->feature_fboxes, b->feature_fboxes, sizeof *a->feature_fboxes * (size_t)a->feature_count) &&
           same_bytes(a->vertex_boxes, b->vertex_boxes, sizeof *a->vertex_boxes * nv) &&
           same_bytes(a->vertex_mboxes, b->vertex_mboxes, sizeof *a->vertex_mboxes * nv) &&
           same_bytes(a->vertex_fboxes, b->vertex_fboxes, sizeof *a->vertex_fboxes * nv);
}

static void test_refit_vertices(hy_pool* pool) {
    hy_mesh* g = NULL;
    hy_mesh_view v;
    soup s;
    if (!grid_soup(&g, &v, &s)) return;
    hy_traverser* tr = hy_traverser_create();
    int32_t* moved = malloc(sizeof(int32_t) * (size_t)s.nv);
    int64_t rounds = 0, differ = 0, culled = 0, unculled = 0, moved_total = 0;
    for (int trial = 0; trial < 4 && tr && moved; trial++) {
        double d = trial & 1 ? 0.002 : 0.0;
        wave_sheet(&v, &s, 9.0 + trial, 0.3, 0.005, 0.3);
        hy_bvh *a = NULL, *b = NULL;
        CHECK_OK(hy_bvh_create(s.tri, s.nt, s.nv, &a));
        CHECK_OK(hy_bvh_create(s.tri, s.nt, s.nv, &b));
        if (!a || !b) {
            hy_bvh_destroy(a);
            hy_bvh_destroy(b);
            break;
        }
        CHECK_OK(hy_bvh_build(a, s.x0, s.x1, d, pool));
        CHECK_OK(hy_bvh_build(b, s.x0, s.x1, d, pool));
        for (int r = 0; r < 12; r++) {
            /* a patch of vertices (or, every third round, scattered ones)
             * moved at the end of the step */
            int32_t n = 0, c = (int32_t)(urand() * s.nv);
            for (int32_t i = 0; i < s.nv; i++) {
                int near = r % 3 == 2 ? urand() < 0.05 : abs(i % 20 - c % 20) + abs(i / 20 - c / 20) < 3;
                if (!near) continue;
                moved[n++] = i;
                for (int k = 0; k < 3; k++) s.x1[3 * i + k] += 0.02 * (2 * urand() - 1);
            }
            hy_bvh_refit(a, s.x0, s.x1, d, pool);
            hy_bvh_refit_vertices(b, s.x0, s.x1, d, moved, n, pool);
            hy_candidates ca = {0}, cb = {0};
            CHECK_OK(hy_bvh_traverse_self(tr, a, pool, &ca));
            CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &cb));
            differ += !same_trees(a, b) || !same_list(&ca, &cb);
            for (int32_t i = 0; i < a->node_count; i++) {
                culled += a->self_free[i];
                unculled += !a->self_free[i] && a->nodes[i].count == 0;
            }
            moved_total += n;
            rounds++;
            hy_candidates_free(&ca);
            hy_candidates_free(&cb);
        }
        hy_bvh_destroy(a);
        hy_bvh_destroy(b);
    }
    fprintf(stderr, "refit of moved vertices: %lld rounds, %lld vertices moved, %lld nodes culled, %lld inner not, %lld differ\n",
            (long long)rounds, (long long)moved_total, (long long)culled, (long long)unculled, (long long)differ);
    CHECK(rounds == 48);
    CHECK(culled > 10 && unculled > 10);
    CHECK(differ == 0);
    free(moved);
    hy_traverser_destroy(tr);
    free(s.x0);
    free(s.x1);
    hy_mesh_destroy(g);
}

int main(void) {
    hy_pool* pool1 = hy_pool_create(1);
    hy_pool* pool2 = hy_pool_create(2);
    test_self(pool1, pool2);
    test_pair(pool2);
    test_refit_vertices(pool2);
    test_box_tests();
    test_sheet(pool2);
    test_large_build(pool1, pool2);
    test_bad_input();
    /* on a CPU with AVX2 the two gates were compared (else there is one) */
    fprintf(stderr, "eight-wide gate %s: compared with the one-pair gate on %lld traversals\n",
            hy_traverse_simd(-1) ? "on" : "off (no AVX2)", (long long)simd_compared);
    CHECK(!hy_traverse_simd(-1) || simd_compared >= 20);
    hy_pool_destroy(pool1);
    hy_pool_destroy(pool2);
    TEST_END();
}
