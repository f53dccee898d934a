/* BVH self-collision culling: with moving frames, self-culling keeps every
 * pair the exact CCD test reports (with and without a contact distance),
 * refuses patches with narrow normal cones whose contours overlap in
 * projection (a helical strip, two stacked squares), and culls a flat or
 * gently waving sheet nearly whole. */
#include "bvh_soup.h"

/* Culling on a flat sheet: a grid that only translates and bends gently
 * has no self contact, and culling must remove nearly everything. */
static void test_cull(hy_pool* pool) {
    hy_mesh* g = NULL;
    CHECK_OK(hy_mesh_grid(30, 30, 1.0, 1.0, &g));
    if (!g) return;
    hy_mesh_view v = hy_mesh_get_view(g);
    double* x1 = malloc(sizeof(double) * 3 * (size_t)v.vertex_count);
    for (int32_t i = 0; i < v.vertex_count; i++) {
        x1[3 * i] = v.positions[3 * i] + 0.05;
        x1[3 * i + 1] = v.positions[3 * i + 1] + 0.1 * v.positions[3 * i] * v.positions[3 * i];
        x1[3 * i + 2] = v.positions[3 * i + 2] + 0.05;
    }
    hy_bvh* b = NULL;
    CHECK_OK(hy_bvh_create(v.triangles, v.triangle_count, v.vertex_count, &b));
    hy_traverser* tr = hy_traverser_create();
    hy_candidates off = {0}, on = {0};
    b->self_cull = 0;
    CHECK_OK(hy_bvh_build(b, v.positions, x1, 0.0, pool));
    CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &off));
    b->self_cull = 1;
    CHECK_OK(hy_bvh_build(b, v.positions, x1, 0.0, pool));
    CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &on));
    fprintf(stderr, "grid: %lld candidates without culling, %lld with\n", (long long)off.count, (long long)on.count);
    CHECK(off.count > 1000);
    CHECK(on.count * 10 < off.count);
    CHECK(b->self_free[0] == 1); /* the whole sheet: a narrow cone, a square contour */
    /* With a thickness the sheet still culls while its projected
     * altitudes (0.0236 here) stay above it, and not beyond. */
    CHECK_OK(hy_bvh_build(b, v.positions, x1, 1e-3, pool));
    CHECK(b->self_free[0] == 1);
    CHECK_OK(hy_bvh_build(b, v.positions, x1, 0.03, pool));
    CHECK(b->self_free[0] == 0);
    /* A NaN position: no node holding it is culled (its cone fails), and
     * traversal still runs; the rest of the sheet still culls. */
    double keep = x1[3 * 465 + 2];
    x1[3 * 465 + 2] = NAN;
    CHECK_OK(hy_bvh_build(b, v.positions, x1, 0.0, pool));
    CHECK(b->self_free[0] == 0);
    int64_t culled = 0;
    for (int32_t i = 0; i < b->node_count; i++) culled += b->self_free[i];
    CHECK(culled > 0);
    CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &on));
    int64_t with_nan = 0;
    for (int64_t i = 0; i < on.count; i++)
        for (int k = 0; k < 4; k++) with_nan += on.pairs[i].v[k] == 465;
    CHECK(with_nan > 0);
    x1[3 * 465 + 2] = keep;
    hy_candidates_free(&off);
    hy_candidates_free(&on);
    hy_traverser_destroy(tr);
    hy_bvh_destroy(b);
    free(x1);
    hy_mesh_destroy(g);
}

/* Patches whose normals all lie in a narrow cone but whose contour is not
 * one simple curve in projection must not be culled (the contour test of
 * the theorem; collision/bvh.c contour_star). Two of them, each with real
 * collisions during the step:
 *  - a strip winding 1.5 turns around the z axis whose upper half-turn
 *    passes down through the lower one (at t = 0 it rises with the angle,
 *    at t = 1 it falls, flat halfway): normals within a few degrees of +z,
 *    but its projection overlaps itself;
 *  - two separate flat squares, one passing down through the other: one
 *    mesh, normals all +z, two contours.
 * With culling on, every pair the exact test reports must still be a
 * candidate, the root must not be marked, and its cone must be narrow (so
 * it is the contour that refuses). */
/* Pairs of vertices of far-apart parts of the mesh (group = vertex /
 * div, at least gap apart): the collisions the cases are made of. The
 * exact test also reports some pairs inside one flat moving piece, where
 * the features stay coplanar the whole step (parallel edges a cell apart:
 * conservative answers to a degenerate query, not contacts); culling such
 * a piece is right, so they are left out. */
static int far_apart(const hy_feature_pair* p, int32_t div, int32_t gap) {
    int split = p->kind == HY_FEATURE_EE ? 2 : 1;
    for (int i = 0; i < split; i++)
        for (int j = split; j < 4; j++) {
            int32_t d = p->v[i] / div - p->v[j] / div;
            if (d >= gap || -d >= gap) return 1;
        }
    return 0;
}

static void contour_case(soup* s, hy_pool* pool, const char* name, int32_t div, int32_t gap, int64_t min_hits) {
    plist all = {0}, hits = {0}, want = {0}, got = {0};
    brute(s, s, 0, 0.0, &all);
    colliding(&all, s->x0, s->x1, &hits);
    for (int64_t i = 0; i < hits.n; i++)
        if (far_apart(&hits.v[i], div, gap)) push(&want, hits.v[i]);
    canon_sort(&want);
    hy_bvh* b = NULL;
    hy_traverser* tr = hy_traverser_create();
    hy_candidates c = {0};
    CHECK_OK(hy_bvh_create(s->tri, s->nt, s->nv, &b));
    if (b && tr) {
        CHECK(b->self_cull == 1); /* on by default */
        CHECK_OK(hy_bvh_build(b, s->x0, s->x1, 0.0, pool));
        CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &c));
        to_plist(&c, &got);
        fprintf(stderr, "%s: %lld colliding pairs, %lld candidates with culling\n", name, (long long)want.n,
                (long long)got.n);
        CHECK(want.n >= min_hits);
        CHECK(missing(&want, &got) == 0);
        CHECK(b->self_free[0] == 0);
        CHECK(b->cones[0].c > 0.9); /* within 26 degrees */
    }
    hy_candidates_free(&c);
    hy_traverser_destroy(tr);
    hy_bvh_destroy(b);
    free(all.v);
    free(hits.v);
    free(want.v);
    free(got.v);
}

static void test_contour(hy_pool* pool) {
    /* helical strip: 40 segments over 3 pi (stations at odd angles, so
     * the overlapping turns do not put vertices above one another) */
    enum { SEG = 40 };
    soup h = {2 * (SEG + 1), 2 * SEG, malloc(sizeof(double) * 6 * (SEG + 1)), malloc(sizeof(double) * 6 * (SEG + 1)),
              malloc(sizeof(int32_t) * 6 * SEG)};
    const double pi = 3.14159265358979323846;
    for (int i = 0; i <= SEG; i++) {
        double th = 3.0 * pi * i / SEG;
        for (int r = 0; r < 2; r++) {
            double* p0 = h.x0 + 3 * (2 * i + r);
            double* p1 = h.x1 + 3 * (2 * i + r);
            double rad = 1.0 + r;
            p0[0] = p1[0] = rad * cos(th);
            p0[1] = p1[1] = rad * sin(th);
            p0[2] = 0.05 * th;
            p1[2] = 0.05 * (3.0 * pi - th);
        }
    }
    for (int i = 0; i < SEG; i++) {
        int32_t in0 = 2 * i, out0 = 2 * i + 1, in1 = 2 * i + 2, out1 = 2 * i + 3;
        int32_t* t = h.tri + 6 * i;
        t[0] = in0, t[1] = out0, t[2] = out1;
        t[3] = in0, t[4] = out1, t[5] = in1;
    }
    contour_case(&h, pool, "helical strip", 2, SEG / 3, 10); /* turns: stations 2 pi apart */
    soup_free(&h);

    /* two 6 x 6 squares of 2 triangles a cell, the upper one moving down
     * through the lower one, shifted by a third of a cell */
    enum { N = 6 };
    int32_t nv1 = (N + 1) * (N + 1);
    soup q = {2 * nv1, 4 * N * N, malloc(sizeof(double) * 6 * (size_t)nv1), malloc(sizeof(double) * 6 * (size_t)nv1),
              malloc(sizeof(int32_t) * 12 * N * N)};
    for (int m = 0; m < 2; m++)
        for (int j = 0; j <= N; j++)
            for (int i = 0; i <= N; i++) {
                int32_t v = m * nv1 + j * (N + 1) + i;
                double sh = m ? 1.0 / 3.0 : 0.0;
                q.x0[3 * v] = q.x1[3 * v] = i + sh;
                q.x0[3 * v + 1] = q.x1[3 * v + 1] = j + sh;
                q.x0[3 * v + 2] = m ? 0.5 : 0.0;
                q.x1[3 * v + 2] = m ? -0.5 : 0.0;
            }
    int32_t nt = 0;
    for (int m = 0; m < 2; m++)
        for (int j = 0; j < N; j++)
            for (int i = 0; i < N; i++) {
                int32_t a = m * nv1 + j * (N + 1) + i, b = a + 1, c = a + N + 1, d = c + 1;
                int32_t* t = q.tri + 3 * nt;
                t[0] = a, t[1] = b, t[2] = d;
                t[3] = a, t[4] = d, t[5] = c;
                nt += 2;
            }
    contour_case(&q, pool, "two squares", nv1, 1, 10);

    /* An open fan of six triangles around vertex 0, rim vertex j (1..7)
     * at 50 (j - 1) degrees, rising by 0.02 a step; all static but the
     * last rim vertex, which swings round under the first triangle: the
     * contour is star-shaped at t = 0 and stops being so during the step,
     * when that vertex passes through the first triangle (only the test
     * over the whole step refuses it; one at t = 0 alone would cull it). */
    soup fan = {8, 6, malloc(sizeof(double) * 24), malloc(sizeof(double) * 24), malloc(sizeof(int32_t) * 18)};
    const double deg = pi / 180.0;
    for (int k = 0; k < 3; k++) fan.x0[k] = fan.x1[k] = 0.0;
    for (int j = 1; j <= 7; j++) {
        double a = 50.0 * (j - 1) * deg;
        fan.x0[3 * j] = fan.x1[3 * j] = cos(a);
        fan.x0[3 * j + 1] = fan.x1[3 * j + 1] = sin(a);
        fan.x0[3 * j + 2] = fan.x1[3 * j + 2] = 0.02 * (j - 1);
    }
    fan.x1[21] = 0.8 * cos(370.0 * deg);
    fan.x1[22] = 0.8 * sin(370.0 * deg);
    fan.x1[23] = -0.01;
    for (int j = 0; j < 6; j++) {
        fan.tri[3 * j] = 0;
        fan.tri[3 * j + 1] = j + 1;
        fan.tri[3 * j + 2] = j + 2;
    }
    contour_case(&fan, pool, "swinging fan", 1, 3, 1);
    soup_free(&fan);
    soup_free(&q);
}

/* Culling on folded, noisy sheets moving into themselves (fixed seeds,
 * three noise levels, so that both narrow and wide cones occur; 300 with
 * HY_TEST_FULL=1): every
 * pair the exact test reports among the brute-force box pairs is still a
 * candidate; some nodes are culled, and some whose cones pass are refused
 * by their contours. */
static void test_cull_sheets(hy_pool* pool) {
    hy_mesh* g = NULL;
    hy_mesh_view v;
    soup s;
    if (!grid_soup(&g, &v, &s)) return;
    hy_traverser* tr = hy_traverser_create();
    int64_t hits_total = 0, culled_total = 0, refused_total = 0;
    /* HY_TEST_FULL=1: 300 sheets, wave numbers and amplitudes drawn */
    int full = getenv("HY_TEST_FULL") && atoi(getenv("HY_TEST_FULL"));
    int trials = full ? 300 : 9;
    for (int trial = 0; trial < trials; trial++) {
        double noise = trial % 3 == 0 ? 0.001 : trial % 3 == 1 ? 0.005 : 0.02;
        double k = trial < 9 ? 8.0 + trial : 4.0 + 14.0 * urand();
        double amp = trial < 9 ? 0.25 + 0.02 * trial : 0.05 + 0.4 * urand();
        wave_sheet(&v, &s, k, amp, noise, 1.0);
        plist all = {0}, hits = {0}, got = {0};
        brute(&s, &s, 0, 0.0, &all);
        colliding(&all, s.x0, s.x1, &hits);
        canon_sort(&hits);
        hy_bvh* b = NULL;
        hy_candidates c = {0};
        CHECK_OK(hy_bvh_create(s.tri, s.nt, s.nv, &b));
        if (b && tr) {
            CHECK_OK(hy_bvh_build(b, s.x0, s.x1, 0.0, pool));
            CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &c));
            to_plist(&c, &got);
            CHECK(missing(&hits, &got) == 0);
            hits_total += hits.n;
            /* nodes the marking reached (none below a culled one) whose
             * cone passed but which were not culled: refused by the
             * contour */
            int32_t stack[128];
            int sp = 0;
            stack[sp++] = 0;
            while (sp > 0) {
                int32_t i = stack[--sp];
                if (b->self_free[i]) {
                    culled_total++;
                    continue;
                }
                refused_total += b->cones[i].c > 1e-6;
                if (b->nodes[i].count == 0 && sp + 2 <= 128) {
                    stack[sp++] = b->nodes[i].first;
                    stack[sp++] = b->nodes[i].first + 1;
                }
            }
        }
        hy_candidates_free(&c);
        hy_bvh_destroy(b);
        free(all.v);
        free(hits.v);
        free(got.v);
    }
    fprintf(stderr, "folded sheets (%d): %lld colliding pairs, %lld nodes culled, %lld refused by the contour\n",
            trials, (long long)hits_total, (long long)culled_total, (long long)refused_total);
    CHECK(hits_total > 100);
    CHECK(culled_total > 10);
    CHECK(refused_total > 10);
    hy_traverser_destroy(tr);
    free(s.x0);
    free(s.x1);
    hy_mesh_destroy(g);
}

/* Self culling with a thickness d: every pair of features that share no
 * vertex and come within d during the step (brute force and the exact
 * test) must still be a candidate. Returns the nodes culled; *pairs gets
 * the pairs within d, *kept the candidates with culling, *all without. */
static int64_t cull_within(soup* s, hy_pool* pool, double d, int64_t* pairs, int64_t* kept, int64_t* all_count) {
    plist all = {0}, want = {0}, got = {0};
    brute(s, s, 0, d, &all);
    within(&all, s->x0, s->x1, d, &want);
    hy_bvh* b = NULL;
    hy_traverser* tr = hy_traverser_create();
    hy_candidates c = {0};
    int64_t culled = 0;
    CHECK_OK(hy_bvh_create(s->tri, s->nt, s->nv, &b));
    if (b && tr) {
        CHECK_OK(hy_bvh_build(b, s->x0, s->x1, d, pool));
        CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &c));
        to_plist(&c, &got);
        CHECK(missing(&want, &got) == 0);
        for (int32_t i = 0; i < b->node_count; i++) culled += b->self_free[i];
        *kept = c.count;
        b->self_cull = 0;
        CHECK_OK(hy_bvh_build(b, s->x0, s->x1, d, pool));
        CHECK_OK(hy_bvh_traverse_self(tr, b, pool, &c));
        *all_count = c.count;
    }
    *pairs = want.n;
    hy_candidates_free(&c);
    hy_traverser_destroy(tr);
    hy_bvh_destroy(b);
    free(all.v);
    free(want.v);
    free(got.v);
    return culled;
}

/* Culling with a thickness (hy_bvh.self_cull): the projected altitudes
 * and the contour's clearance must both exceed it.
 *  - A flat fan of eight fat triangles around a centre, open by a notch
 *    of 0.01 between its first and last spokes: one narrow cone, a
 *    star-shaped contour, altitudes near 0.5, yet the last rim vertex is
 *    0.01 from the first spoke (a vertex-face and edge-edge pairs that
 *    share no vertex). At d = 0.02 the root must not be culled and those
 *    pairs must be candidates; at d = 0.005 nothing is within d and the
 *    root is culled.
 *  - The folded sheets of test_cull_sheets at several thicknesses, below
 *    and above the grid's altitudes (0.035): nothing within d missed. */
static void test_cull_thickness(hy_pool* pool) {
    {
        enum { K = 8 };
        double eps = 0.01;
        soup s = {K + 2, K, malloc(sizeof(double) * 3 * (K + 2)), malloc(sizeof(double) * 3 * (K + 2)),
                  malloc(sizeof(int32_t) * 3 * K)};
        /* vertex 0 the centre; rim 1..K+1 at +eps/2, then 90..270 degrees
         * in 30 degree steps, then -eps/2 (so the contour's mean lies away
         * from the notch and the contour is star-shaped around it) */
        double ang[K + 1];
        ang[0] = eps / 2;
        for (int i = 1; i < K; i++) ang[i] = M_PI / 2 + (i - 1) * M_PI / 6;
        ang[K] = 2 * M_PI - eps / 2;
        s.x0[0] = s.x0[1] = s.x0[2] = 0.0;
        for (int i = 0; i <= K; i++) {
            s.x0[3 * (i + 1)] = cos(ang[i]);
            s.x0[3 * (i + 1) + 1] = sin(ang[i]);
            s.x0[3 * (i + 1) + 2] = 0.0;
        }
        for (int i = 0; i < 3 * (K + 2); i++) s.x1[i] = s.x0[i] + (i % 3 == 2 ? 0.003 : 0.001);
        for (int i = 0; i < K; i++) {
            s.tri[3 * i] = 0;
            s.tri[3 * i + 1] = i + 1;
            s.tri[3 * i + 2] = i + 2;
        }
        hy_bvh* b = NULL;
        CHECK_OK(hy_bvh_create(s.tri, s.nt, s.nv, &b));
        if (b) {
            CHECK_OK(hy_bvh_build(b, s.x0, s.x1, 0.02, pool));
            CHECK(b->cones[0].c > 0.99);
            CHECK(b->cones[0].c * b->cones[0].g > 0.4); /* the altitudes pass */
            CHECK(b->self_free[0] == 0);                  /* the contour refuses */
            CHECK_OK(hy_bvh_build(b, s.x0, s.x1, 0.005, pool));
            CHECK(b->self_free[0] == 1);
        }
        hy_bvh_destroy(b);
        int64_t pairs = 0, kept = 0, all = 0;
        CHECK(cull_within(&s, pool, 0.02, &pairs, &kept, &all) == 0);
        fprintf(stderr, "notched fan: %lld pairs within 0.02\n", (long long)pairs);
        CHECK(pairs >= 2);
        CHECK(cull_within(&s, pool, 0.005, &pairs, &kept, &all) == 1);
        CHECK(pairs == 0 && kept == 0 && all > 0);
        soup_free(&s);
    }
    hy_mesh* g = NULL;
    hy_mesh_view v;
    soup s;
    if (!grid_soup(&g, &v, &s)) return;
    const double ds[4] = {0.002, 0.01, 0.03, 0.05};
    /* kind 0: the folding sheets (crests fall through the next fold, and
     * triangles shear by cells: few nodes can cull); kind 1: the same
     * waves moving a few hundredths of a cell (no contact: most of the
     * sheet culls while d is under its altitudes) */
    for (int kind = 0; kind < 2; kind++) {
        int64_t culled[4] = {0, 0, 0, 0}, pairs[4] = {0, 0, 0, 0}, kept[4] = {0, 0, 0, 0}, all[4] = {0, 0, 0, 0};
        for (int trial = 0; trial < 6; trial++) {
            double k = 8.0 + trial, amp = 0.25 + 0.02 * trial, noise = trial % 2 ? 0.001 : 0.004;
            double move = kind == 0 ? 1.0 : 0.02;
            wave_sheet(&v, &s, k, amp, noise, move);
            for (int q = 0; q < 4; q++) {
                int64_t n = 0, nk = 0, na = 0;
                culled[q] += cull_within(&s, pool, ds[q], &n, &nk, &na);
                pairs[q] += n;
                kept[q] += nk;
                all[q] += na;
            }
        }
        fprintf(stderr, "%s sheets, thickness 0.002/0.01/0.03/0.05:\n", kind == 0 ? "folding" : "waving");
        for (int q = 0; q < 4; q++)
            fprintf(stderr, "  %g: %lld pairs within, %lld nodes culled, %lld candidates (%lld without culling)\n",
                    ds[q], (long long)pairs[q], (long long)culled[q], (long long)kept[q], (long long)all[q]);
        if (kind == 0) {
            CHECK(pairs[0] > 1000 && pairs[3] > pairs[0]);
            CHECK(culled[0] > 0);
        } else {
            /* most of the work goes while d is under the altitudes */
            CHECK(kept[0] * 4 < all[0] && kept[1] * 4 < all[1]);
            CHECK(kept[3] > kept[1]);
        }
    }
    free(s.x0);
    free(s.x1);
    hy_mesh_destroy(g);
}

int main(void) {
    hy_pool* pool2 = hy_pool_create(2);
    test_cull(pool2);
    test_contour(pool2);
    test_cull_sheets(pool2);
    test_cull_thickness(pool2);
    hy_pool_destroy(pool2);
    TEST_END();
}
