/* Tests the conservative culls before the exact CCD test (collision/filter.h,
 * filter_sat.h): the separating-axes filter never culls a colliding query
 * of the shared ground-truth set, never culls a pair that comes within the
 * contact distance (checked against sampled distances on random near-contact
 * pairs, fixed seed), and does cull the in-plane neighbours of a flat sheet
 * that only a contact distance brings into the candidate list. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/filter.h"
#include "collision/traverse.h"
#include "ccd_query_files.h"
#include "test.h"

/* ---- shared queries: no colliding query culled */

static long q_total, q_pos, q_culled, q_culled_pos, q_slab_culled, q_slab_culled_pos;

static void run_file(const char* path, int is_vf) {
    FILE* f = fopen(path, "r");
    CHECK(f != NULL);
    if (!f) return;
    char line[4096], nb[3][256], db[3][256];
    double x[8][3];
    int r = 0, truth = 0;
    while (fgets(line, sizeof line, f)) {
        if (line[0] == '\n' || line[0] == '\0') continue;
        int t = 0;
        if (sscanf(line, "%255[^,],%255[^,],%255[^,],%255[^,],%255[^,],%255[^,],%d", nb[0], db[0], nb[1], db[1],
                   nb[2], db[2], &t) != 7) {
            CHECK(0 && "malformed row");
            break;
        }
        for (int k = 0; k < 3; k++) x[r][k] = strtod(nb[k], NULL) / strtod(db[k], NULL);
        if (r == 0) truth = t;
        if (++r < 8) continue;
        r = 0;
        const double* a[4] = {x[0], x[1], x[2], x[3]};
        const double* b[4] = {x[4], x[5], x[6], x[7]};
        int keep = hy_filter_sat(is_vf, a, b, 0.0);
        q_total++;
        q_pos += truth;
        q_culled += !keep;
        if (truth && !keep) {
            q_culled_pos++;
            fprintf(stderr, "%s: colliding query %ld culled\n", path, q_total);
        }
        /* the separating axes over parts of the step (coplanarity and the
         * whole-step axes first, as the step runs them) */
        int slabs = hy_filter_coplanar(a, b, 0.0) && keep && !hy_filter_slabs(is_vf, a, b, 0.0);
        q_slab_culled += slabs;
        if (truth && slabs) {
            q_slab_culled_pos++;
            fprintf(stderr, "%s: colliding query %ld culled by the parts' axes\n", path, q_total);
        }
    }
    fclose(f);
}

static void run_each(void* ctx, const char* path, int is_vf) {
    (void)ctx;
    run_file(path, is_vf);
}

static int test_shared_queries(void) {
    if (!hy_test_each_query_file(run_each, NULL)) return 0;
    fprintf(stderr,
            "shared queries: %ld, %ld colliding, separating axes cull %ld, colliding culled %ld; over parts of the "
            "step %ld more, colliding %ld\n",
            q_total, q_pos, q_culled, q_culled_pos, q_slab_culled, q_slab_culled_pos);
    CHECK(q_total > 4000);
    CHECK(q_culled_pos == 0);
    CHECK(q_slab_culled_pos == 0);
    return 1;
}

/* ---- distances for the sampled check */

static void sub(const double* a, const double* b, double* r) {
    for (int k = 0; k < 3; k++) r[k] = a[k] - b[k];
}
static double dot(const double* a, const double* b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

static double point_segment(const double* p, const double* a, const double* b) {
    double ab[3], ap[3];
    sub(b, a, ab);
    sub(p, a, ap);
    double l = dot(ab, ab), s = l > 0 ? dot(ap, ab) / l : 0;
    s = s < 0 ? 0 : s > 1 ? 1 : s;
    double d[3];
    for (int k = 0; k < 3; k++) d[k] = a[k] + s * ab[k] - p[k];
    return sqrt(dot(d, d));
}

static double point_triangle(const double* p, const double* a, const double* b, const double* c) {
    double ab[3], ac[3], ap[3], n[3];
    sub(b, a, ab);
    sub(c, a, ac);
    sub(p, a, ap);
    n[0] = ab[1] * ac[2] - ab[2] * ac[1];
    n[1] = ab[2] * ac[0] - ab[0] * ac[2];
    n[2] = ab[0] * ac[1] - ab[1] * ac[0];
    double nn = dot(n, n);
    double best = point_segment(p, a, b);
    double d2 = point_segment(p, b, c), d3 = point_segment(p, c, a);
    if (d2 < best) best = d2;
    if (d3 < best) best = d3;
    if (nn > 0) {
        /* projection inside: barycentric coordinates of p's foot */
        double h = dot(ap, n) / nn, f[3];
        for (int k = 0; k < 3; k++) f[k] = ap[k] - h * n[k];
        double d00 = dot(ab, ab), d01 = dot(ab, ac), d11 = dot(ac, ac), d20 = dot(f, ab), d21 = dot(f, ac);
        double den = d00 * d11 - d01 * d01;
        if (den > 0) {
            double v = (d11 * d20 - d01 * d21) / den, w = (d00 * d21 - d01 * d20) / den;
            if (v >= 0 && w >= 0 && v + w <= 1) {
                double dp = fabs(h) * sqrt(nn);
                if (dp < best) best = dp;
            }
        }
    }
    return best;
}

static double segment_segment(const double* p0, const double* p1, const double* q0, const double* q1) {
    double best = point_segment(p0, q0, q1);
    double d;
    if ((d = point_segment(p1, q0, q1)) < best) best = d;
    if ((d = point_segment(q0, p0, p1)) < best) best = d;
    if ((d = point_segment(q1, p0, p1)) < best) best = d;
    double u[3], v[3], w[3];
    sub(p1, p0, u);
    sub(q1, q0, v);
    sub(p0, q0, w);
    double a = dot(u, u), b = dot(u, v), c = dot(v, v), dd = dot(u, w), e = dot(v, w);
    double den = a * c - b * b;
    if (den > 1e-12 * a * c) {
        double s = (b * e - c * dd) / den, t = (a * e - b * dd) / den;
        if (s >= 0 && s <= 1 && t >= 0 && t <= 1) {
            double r[3];
            for (int k = 0; k < 3; k++) r[k] = w[k] + s * u[k] - t * v[k];
            double x = sqrt(dot(r, r));
            if (x < best) best = x;
        }
    }
    return best;
}

/* Smallest distance over 257 sampled times (an upper bound of the true
 * minimum over the step). */
static double sampled_min(int is_vf, double x[8][3]) {
    double best = INFINITY;
    for (int s = 0; s <= 256; s++) {
        double t = s / 256.0, p[4][3];
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) p[i][k] = (1 - t) * x[i][k] + t * x[4 + i][k];
        double d = is_vf ? point_triangle(p[0], p[1], p[2], p[3]) : segment_segment(p[0], p[1], p[2], p[3]);
        if (d < best) best = d;
    }
    return best;
}

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static double urand(void) {
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return (double)(rng >> 11) * (1.0 / 9007199254740992.0);
}

/* Random pairs near a flat sheet (spacing 1, points jittered off the plane
 * by up to `lift`, small motions): whenever the filter culls, the sampled
 * distance exceeds the contact distance. */
static void test_random_near_contact(void) {
    long n = 0, culled = 0, bad = 0, near_miss = 0, hint_bad = 0, hint_moves = 0;
    const double mds[3] = {0.0, 0.01, 0.1};
    for (int m = 0; m < 3; m++)
        for (int trial = 0; trial < 20000; trial++) {
            int is_vf = trial & 1;
            double md = mds[m], lift = (trial % 3) * 0.05, move = (trial % 5) * 0.1;
            double x[8][3];
            for (int i = 0; i < 4; i++) {
                /* features on a unit grid: the first near the origin, the second a cell or two away */
                double gx = (i == 0 ? 0 : (double)(i % 2) + floor(urand() * 3)), gy = (double)(i / 2) + floor(urand() * 2);
                if (!is_vf && i < 2) gx = i, gy = 0;
                x[i][0] = gx + 0.2 * (urand() - 0.5);
                x[i][1] = gy + 0.2 * (urand() - 0.5);
                x[i][2] = lift * (urand() - 0.5);
                for (int k = 0; k < 3; k++) x[4 + i][k] = x[i][k] + move * (urand() - 0.5);
            }
            const double* a[4] = {x[0], x[1], x[2], x[3]};
            const double* b[4] = {x[4], x[5], x[6], x[7]};
            int keep = hy_filter_sat(is_vf, a, b, md);
            /* The hinted order gives the same answer from every start, and
             * the hint names the group that culled (1..4), else stays. */
            for (int h = 0; h <= 4; h++) {
                int hint = h;
                int kh = hy_filter_sat_hint(is_vf, a, b, md, &hint);
                if (kh != keep || (keep && hint != h) || (!keep && !(hint >= 1 && hint <= 4))) hint_bad++;
                if (!keep && hint != h) hint_moves++;
            }
            n++;
            double d = sampled_min(is_vf, x);
            near_miss += d > md && d < md + 0.1;
            if (keep) continue;
            culled++;
            if (!(d > md)) {
                if (bad < 5)
                    fprintf(stderr, "culled a pair %s at distance %.6g <= %.6g (trial %d)\n", is_vf ? "VF" : "EE", d,
                            md, trial);
                bad++;
            }
        }
    fprintf(stderr, "random near-contact pairs: %ld (%ld pass within 0.1 of the distance), culled %ld, culled within "
                    "the distance %ld\n", n, near_miss, culled, bad);
    CHECK(bad == 0);
    CHECK(hint_bad == 0);
    CHECK(hint_moves > n); /* culled pairs move a hint that started elsewhere */
    CHECK(near_miss > 1000); /* the boundary is exercised */
    /* most of these pairs are a cell or more apart and must go (measured: 98%) */
    CHECK(culled > n / 2);
}

/* The pairs a contact distance adds in a resting flat sheet: a vertex a
 * cell beside a triangle, parallel edges a cell apart, crossing-free
 * coplanar edges. The normals see distance 0; the in-plane directions
 * must separate them. */
static void test_flat_sheet(void) {
    double md = 1e-3;
    /* vertex (2, 0.5, 0) beside triangle (0,0)-(1,0)-(0,1) */
    double vf[8][3] = {{2, 0.5, 0}, {0, 0, 0}, {1, 0, 0}, {0, 1, 0}};
    /* parallel edges y = 0 and y = 1 */
    double ee[8][3] = {{0, 0, 0}, {1, 0, 0}, {0, 1, 0}, {1, 1, 0}};
    /* non-parallel coplanar edges, apart */
    double ex[8][3] = {{0, 0, 0}, {1, 0, 0}, {0.2, 0.5, 0}, {1.3, 1.4, 0}};
    double (*cases[3])[3] = {vf, ee, ex};
    for (int c = 0; c < 3; c++) {
        for (int i = 0; i < 4; i++)
            for (int k = 0; k < 3; k++) cases[c][4 + i][k] = cases[c][i][k] + (k == 2 ? 1e-4 : 0); /* drift up */
        const double* a[4] = {cases[c][0], cases[c][1], cases[c][2], cases[c][3]};
        const double* b[4] = {cases[c][4], cases[c][5], cases[c][6], cases[c][7]};
        CHECK(hy_filter_sat(c == 0, a, b, md) == 0);
        /* and at a distance wider than the gap, kept */
        CHECK(hy_filter_sat(c == 0, a, b, 2.0) == 1);
    }
}

/* hy_filter_pairs gives, pair by pair, what hy_filter_coplanar and
 * hy_filter_sat give, with its lanes on and off: near-contact pairs on a
 * jittered sheet, at scales from tiny to beyond what the lanes take, with
 * non-finite coordinates mixed in, for touching and thick contact, over
 * runs of every length around the lanes' chunk. */
static void test_pairs_batch(void) {
    enum { NV = 3000, NP = 20000 };
    double* x0 = malloc(sizeof(double) * 3 * NV);
    double* x1 = malloc(sizeof(double) * 3 * NV);
    double* xx = aligned_alloc(64, sizeof(double) * HY_FILTER_PACK * NV);
    hy_feature_pair* pr = malloc(sizeof *pr * NP);
    uint8_t *k_simd = malloc(NP), *k_scalar = malloc(NP);
    CHECK(x0 && x1 && xx && pr && k_simd && k_scalar);
    if (!x0 || !x1 || !xx || !pr || !k_simd || !k_scalar) return;
    const double scales[5] = {1.0, 1e-120, 1e55, 0x1p205, 1.0};
    const double mds[4] = {0.0, 1e-3, -1.0, NAN};
    long mismatch = 0, kept = 0, total = 0;
    int simd = hy_filter_pairs_simd(1);
    hy_filter_pairs_simd(simd);
    for (int sc = 0; sc < 5; sc++) {
        double S = scales[sc];
        for (int v = 0; v < NV; v++) {
            /* a 60-wide sheet, spacing 1, lifted and moved a little */
            double gx = (double)(v % 60) + 0.3 * (urand() - 0.5), gy = (double)(v / 60) + 0.3 * (urand() - 0.5);
            double gz = 0.2 * (urand() - 0.5);
            x0[3 * v] = S * gx;
            x0[3 * v + 1] = S * gy;
            x0[3 * v + 2] = S * gz;
            for (int k = 0; k < 3; k++) x1[3 * v + k] = x0[3 * v + k] + S * 0.6 * (urand() - 0.5);
        }
        if (sc == 4) /* non-finite points among ordinary ones */
            for (int v = 0; v < NV; v += 97) x1[3 * v + (v % 3)] = v % 2 ? NAN : INFINITY;
        for (int i = 0; i < NP; i++) {
            int base = (int)(urand() * (NV - 130));
            for (int k = 0; k < 4; k++) pr[i].v[k] = base + (int)(urand() * 125); /* neighbours, repeats possible */
            pr[i].kind = (int32_t)(urand() * 3); /* VF, FV, EE */
        }
        for (int m = 0; m < 4; m++) {
            double md = mds[m] * (mds[m] > 0 ? S : 1.0);
            /* uneven runs: the tails of the lanes' chunks; the packing's
             * range answer as the step gives it, and also 0 (lanes that
             * check their own points) */
            int in_range = hy_filter_pack(x0, x1, 0, NV, xx);
            CHECK(in_range == (sc < 3));
            for (int at = 0, len = 1; at < NP; at += len, len = len % 199 + 7) {
                int n = at + len <= NP ? len : NP - at;
                hy_filter_pairs_simd(1);
                hy_filter_pairs(pr + at, n, xx, (at / 7) % 2 ? in_range : 0, md, k_simd + at);
                hy_filter_pairs_simd(0);
                hy_filter_pairs(pr + at, n, xx, in_range, md, k_scalar + at);
            }
            hy_filter_pairs_simd(simd);
            for (int i = 0; i < NP; i++) {
                const double *a[4], *b[4];
                for (int k = 0; k < 4; k++) {
                    a[k] = x0 + 3 * pr[i].v[k];
                    b[k] = x1 + 3 * pr[i].v[k];
                }
                int one = hy_filter_coplanar(a, b, md) && hy_filter_sat(pr[i].kind != HY_FEATURE_EE, a, b, md) &&
                          hy_filter_slabs(pr[i].kind != HY_FEATURE_EE, a, b, md);
                if (k_simd[i] != one || k_scalar[i] != one) {
                    if (mismatch < 5)
                        fprintf(stderr, "pairs batch: scale %g md %g pair %d: lanes %d, scalar %d, one by one %d\n", S,
                                md, i, k_simd[i], k_scalar[i], one);
                    mismatch++;
                }
                kept += one;
                total++;
            }
        }
    }
    fprintf(stderr, "pairs batch (%s): %ld pairs, %ld kept, %ld mismatches\n", simd ? "AVX2 lanes" : "no AVX2: scalar",
            total, kept, mismatch);
    CHECK(mismatch == 0);
    /* both answers are well represented */
    CHECK(kept > total / 20 && kept < total - total / 20);
    free(x0);
    free(x1);
    free(xx);
    free(pr);
    free(k_simd);
    free(k_scalar);
}

int main(void) {
    test_flat_sheet();
    test_random_near_contact();
    test_pairs_batch();
    if (!test_shared_queries()) TEST_SKIP("shared ccd-queries data not found");
    TEST_END();
}
