/* hyphys ccd-frames: whole-step CCD (BVH, traversal, filters, exact tests) on
 * a pair of recorded frames, compared with the colliding pairs of the
 * ground truth. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "collision/filter.h"
#include "collision/frames.h"
#include "engine/ply.h"
#include "core/pool.h"

static void help(void) {
    printf("usage: hyphys ccd-frames DIR [--threads N] [--repeats R] [--thickness D] [--refit] [--no-filter]\n"
           "                          [--no-cull] [--no-instance] [--breakdown] [--json]\n\n"
           "Run continuous collision detection over one step, from DIR/frame0.ply to\n"
           "DIR/frame1.ply (the whole file is one mesh: self and inter-object pairs),\n"
           "and compare the colliding vertex-face and edge-edge pairs with\n"
           "DIR/vf_truth.csv and DIR/ee_truth.csv. DIR may also be a scene name under\n"
           "the shared data folder (cloth-ball, n-body, cloth-funnel).\n\n"
           "The step time is the median over R runs of BVH build + traversal +\n"
           "filters + exact tests (file loading excluded); each stage's time is\n"
           "its own median. By default each run builds the BVH from scratch;\n"
           "--refit times a running simulation's step instead: before each timed run\n"
           "the tree is built, untimed, over frame0 alone (the state the step starts\n"
           "from), and the timed run refits it over the step (rebuilding it if the\n"
           "refit decays it too far, as the step does).\n\n"
           "  --threads N    worker threads including the caller (default 1)\n"
           "  --repeats R    timed runs (default 5)\n"
           "  --thickness D  contact distance in metres (default 0): pairs that come\n"
           "                 within D count as found; every touching pair of the\n"
           "                 truth must still be found (false positives then count\n"
           "                 the pairs within D that do not touch)\n"
           "  --refit        time BVH refit of a tree built over frame0, not a build\n"
           "  --no-filter    skip the filters (coplanarity, separating axes): every\n"
           "                 candidate gets the exact test\n"
           "  --no-cull      no self-collision culling (normal cones and contours,\n"
           "                 with a distance altitudes and clearances too; on by\n"
           "                 default)\n"
           "  --no-instance  build every piece's tree from scratch; by default a piece\n"
           "                 with the same triangles as an earlier one and nearly its\n"
           "                 shape up to translation and scale (copies of one body)\n"
           "                 takes that piece's tree, with boxes of its own\n"
           "  --breakdown    after the timed runs, class the candidates by what\n"
           "                 decides them (coplanarity filter, separating axes, exact\n"
           "                 miss, exact hit) and time each stage on one thread over\n"
           "                 what it sees (count, ms, ns each; not part of the step),\n"
           "                 the filters pair by pair and then as the step runs them\n"
           "                 (four pairs at a time where the CPU has AVX2)\n"
           "  --json         machine-readable output\n\n"
           "exit: 0 ok, 1 a false negative (a colliding pair missed), 2 bad usage or input\n");
}

typedef struct pair_set {
    hy_feature_pair* v;
    int64_t n, cap;
} pair_set;

static int set_push(pair_set* s, hy_feature_pair p) {
    if (s->n == s->cap) {
        int64_t cap = s->cap ? 2 * s->cap : 1024;
        hy_feature_pair* nv = realloc(s->v, sizeof *nv * (size_t)cap);
        if (!nv) return 0;
        s->v = nv;
        s->cap = cap;
    }
    s->v[s->n++] = p;
    return 1;
}

static void set_sort(pair_set* s) {
    for (int64_t i = 0; i < s->n; i++) s->v[i] = hy_feature_pair_canonical(s->v[i]);
    if (s->n) qsort(s->v, (size_t)s->n, sizeof *s->v, hy_feature_pair_cmp);
}

/* A truth set lists each pair once; returns 0 after printing the first
 * pair listed twice. */
static int truth_unique(const pair_set* s, const char* path) {
    for (int64_t i = 1; i < s->n; i++)
        if (hy_feature_pair_cmp(&s->v[i - 1], &s->v[i]) == 0) {
            const int32_t* v = s->v[i].v;
            fprintf(stderr, "hyphys ccd-frames: %s: the colliding pair (%d, %d, %d, %d) is listed twice\n", path, v[0],
                    v[1], v[2], v[3]);
            return 0;
        }
    return 1;
}

/* Read a truth CSV: lines of 5 integers, the last 0 or 1; '#' lines are
 * comments. Keeps the pairs marked 1, canonical and sorted, each once.
 * Returns 0 after printing an error. */
static int read_truth(const char* path, int is_vf, int32_t vertex_count, pair_set* out, int64_t* listed) {
    FILE* f = fopen(path, "r");
    if (!f) {
        fprintf(stderr, "hyphys ccd-frames: %s: %s\n", path, strerror(errno));
        return 0;
    }
    char line[512];
    long ln = 0;
    *listed = 0;
    while (fgets(line, sizeof line, f)) {
        ln++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            fprintf(stderr, "hyphys ccd-frames: %s:%ld: line too long\n", path, ln);
            fclose(f);
            return 0;
        }
        char* s = line;
        while (*s == ' ' || *s == '\t') s++;
        if (*s == '#' || *s == '\n' || *s == '\r' || *s == '\0') continue;
        long long v[5];
        int k = 0;
        for (; k < 5; k++) {
            char* end = NULL;
            errno = 0;
            v[k] = strtoll(s, &end, 10);
            if (end == s || errno) break;
            s = end;
            while (*s == ' ' || *s == '\t') s++;
            if (k < 4) {
                if (*s != ',') {
                    k++;
                    break;
                }
                s++;
            }
        }
        while (*s == ' ' || *s == '\t' || *s == '\r' || *s == '\n') s++;
        if (k != 5 || *s != '\0') {
            fprintf(stderr, "hyphys ccd-frames: %s:%ld: expected 5 comma-separated integers\n", path, ln);
            fclose(f);
            return 0;
        }
        for (int i = 0; i < 4; i++)
            if (v[i] < 0 || v[i] >= vertex_count) {
                fprintf(stderr, "hyphys ccd-frames: %s:%ld: vertex index %lld out of range [0, %d)\n", path, ln, v[i],
                        vertex_count);
                fclose(f);
                return 0;
            }
        if (v[4] != 0 && v[4] != 1) {
            fprintf(stderr, "hyphys ccd-frames: %s:%ld: collides must be 0 or 1, got %lld\n", path, ln, v[4]);
            fclose(f);
            return 0;
        }
        (*listed)++;
        if (v[4] != 1) continue;
        /* a colliding pair with any vertex twice (shared by its features,
         * or repeated in one) is one no CCD reports: it would read as a
         * false negative */
        if (v[0] == v[1] || v[0] == v[2] || v[0] == v[3] || v[1] == v[2] || v[1] == v[3] || v[2] == v[3]) {
            fprintf(stderr, "hyphys ccd-frames: %s:%ld: a colliding %s pair with a shared or repeated vertex (%lld, %lld, %lld, %lld)\n",
                    path, ln, is_vf ? "vertex-face" : "edge-edge", v[0], v[1], v[2], v[3]);
            fclose(f);
            return 0;
        }
        hy_feature_pair p = {{(int32_t)v[0], (int32_t)v[1], (int32_t)v[2], (int32_t)v[3]},
                             is_vf ? HY_FEATURE_VF : HY_FEATURE_EE};
        if (!set_push(out, p)) {
            fprintf(stderr, "hyphys ccd-frames: out of memory\n");
            fclose(f);
            return 0;
        }
    }
    int err = ferror(f);
    fclose(f);
    if (err) {
        fprintf(stderr, "hyphys ccd-frames: %s: read error\n", path);
        return 0;
    }
    set_sort(out);
    return truth_unique(out, path);
}

/* Both sorted canonical: count a-only (missed) and b-only (extra). */
static void compare(const pair_set* truth, const pair_set* found, int64_t* fn, int64_t* fp) {
    int64_t i = 0, j = 0;
    *fn = *fp = 0;
    while (i < truth->n || j < found->n) {
        int c = i == truth->n ? 1 : j == found->n ? -1 : hy_feature_pair_cmp(&truth->v[i], &found->v[j]);
        if (c == 0) {
            i++;
            j++;
        } else if (c < 0) {
            (*fn)++;
            i++;
        } else {
            /* Duplicates in found would count here too: each report is one. */
            (*fp)++;
            j++;
        }
    }
}

static const char* resolve_dir(const char* arg, char* buf, size_t n) {
    struct stat sb;
    if (stat(arg, &sb) == 0 && S_ISDIR(sb.st_mode)) return arg;
    if (!strchr(arg, '/')) {
        snprintf(buf, n, "%s/ccd-frames/%s", hy_cli_data_dir(), arg);
        if (stat(buf, &sb) == 0 && S_ISDIR(sb.st_mode)) return buf;
    }
    return arg;
}

static const char* base_name(const char* p) {
    size_t n = strlen(p);
    while (n > 1 && p[n - 1] == '/') n--;
    static char b[256];
    size_t s = n;
    while (s > 0 && p[s - 1] != '/') s--;
    snprintf(b, sizeof b, "%.*s", (int)(n - s), p + s);
    return b;
}

static int ccd_frames_main(int argc, char** argv) {
    const char* dir_arg = NULL;
    long threads = 1, repeats = 5;
    int json = 0, refit = 0, filters = 1, cull = 1, instance = 1, breakdown = 0;
    double thickness = 0.0;
    for (int i = 1; i < argc; i++) {
        const char* a = argv[i];
        if (!strcmp(a, "--threads")) {
            if (!hy_cli_parse_int("--threads", i + 1 < argc ? argv[++i] : NULL, 1, 256, &threads))
                return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--repeats")) {
            if (!hy_cli_parse_int("--repeats", i + 1 < argc ? argv[++i] : NULL, 1, 10000, &repeats))
                return HY_EXIT_USAGE;
        } else if (!strcmp(a, "--thickness")) {
            const char* t = i + 1 < argc ? argv[++i] : NULL;
            char* end = NULL;
            errno = 0;
            thickness = t ? strtod(t, &end) : -1.0;
            if (!t || end == t || *end != '\0' || errno || !(thickness >= 0.0 && thickness < 1e6)) {
                fprintf(stderr, "hyphys ccd-frames: --thickness needs a distance in metres >= 0, got '%s'\n",
                        t ? t : "");
                return HY_EXIT_USAGE;
            }
        } else if (!strcmp(a, "--json")) {
            json = 1;
        } else if (!strcmp(a, "--refit")) {
            refit = 1;
        } else if (!strcmp(a, "--no-filter")) {
            filters = 0;
        } else if (!strcmp(a, "--no-cull")) {
            cull = 0;
        } else if (!strcmp(a, "--no-instance")) {
            instance = 0;
        } else if (!strcmp(a, "--breakdown")) {
            breakdown = 1;
        } else if (a[0] == '-' && a[1] != '\0') {
            fprintf(stderr, "hyphys ccd-frames: unknown option '%s' (see hyphys ccd-frames --help)\n", a);
            return HY_EXIT_USAGE;
        } else if (!dir_arg) {
            dir_arg = a;
        } else {
            fprintf(stderr, "hyphys ccd-frames: more than one DIR ('%s', '%s')\n", dir_arg, a);
            return HY_EXIT_USAGE;
        }
    }
    if (!dir_arg) {
        fprintf(stderr, "hyphys ccd-frames: missing DIR (see hyphys ccd-frames --help)\n");
        return HY_EXIT_USAGE;
    }
    char dbuf[4096], path[4200];
    const char* dir = resolve_dir(dir_arg, dbuf, sizeof dbuf);

    /* Load (not timed). */
    hy_mesh* m0 = NULL;
    hy_mesh* m1 = NULL;
    snprintf(path, sizeof path, "%s/frame0.ply", dir);
    if (hy_ply_load(path, &m0) != HY_OK) {
        fprintf(stderr, "hyphys ccd-frames: %s\n", hy_last_error());
        return HY_EXIT_USAGE;
    }
    snprintf(path, sizeof path, "%s/frame1.ply", dir);
    if (hy_ply_load(path, &m1) != HY_OK) {
        fprintf(stderr, "hyphys ccd-frames: %s\n", hy_last_error());
        hy_mesh_destroy(m0);
        return HY_EXIT_USAGE;
    }
    int rc = HY_EXIT_OK;
    pair_set tvf = {0}, tee = {0}, fvf = {0}, fee = {0};
    hy_pool* pool = NULL;
    hy_frames* fr = NULL;
    double* ms = NULL;
    if (m0->vertex_count != m1->vertex_count || m0->triangle_count != m1->triangle_count ||
        memcmp(m0->triangles, m1->triangles, sizeof(int32_t) * 3 * (size_t)m0->triangle_count) != 0) {
        fprintf(stderr, "hyphys ccd-frames: %s: frame0.ply and frame1.ply differ in topology (%d/%d vertices, %d/%d triangles)\n",
                dir, m0->vertex_count, m1->vertex_count, m0->triangle_count, m1->triangle_count);
        rc = HY_EXIT_USAGE;
        goto done;
    }
    int64_t vf_listed = 0, ee_listed = 0;
    snprintf(path, sizeof path, "%s/vf_truth.csv", dir);
    if (!read_truth(path, 1, m0->vertex_count, &tvf, &vf_listed)) {
        rc = HY_EXIT_USAGE;
        goto done;
    }
    snprintf(path, sizeof path, "%s/ee_truth.csv", dir);
    if (!read_truth(path, 0, m0->vertex_count, &tee, &ee_listed)) {
        rc = HY_EXIT_USAGE;
        goto done;
    }

    pool = hy_pool_create((int)threads);
    hy_frames_def def = hy_frames_def_default();
    def.force_build = !refit;
    def.use_filters = filters;
    def.self_cull = cull;
    def.instance = instance;
    def.thickness = thickness;
    ms = malloc(sizeof(double) * 4 * (size_t)repeats); /* total, bvh, traverse, exact */
    if (!pool || !ms || hy_frames_create(m0->triangles, m0->triangle_count, m0->vertex_count, &def, &fr) != HY_OK) {
        fprintf(stderr, "hyphys ccd-frames: %s\n", pool && ms ? hy_last_error() : "out of memory");
        rc = HY_EXIT_RUNTIME;
        goto done;
    }
    hy_frames_stats st;
    for (long r = 0; r < repeats; r++) {
        /* --refit: the tree of the state the step starts from, built
         * untimed (a still frame: x1 = x0), then refit over the step. */
        if (refit) hy_frames_invalidate(fr);
        if ((refit && hy_frames_run(fr, m0->positions, m0->positions, pool, &st) != HY_OK) ||
            hy_frames_run(fr, m0->positions, m1->positions, pool, &st) != HY_OK) {
            fprintf(stderr, "hyphys ccd-frames: %s\n", hy_last_error());
            rc = HY_EXIT_RUNTIME;
            goto done;
        }
        ms[r] = st.ms_total;
        ms[repeats + r] = st.ms_bvh;
        ms[2 * repeats + r] = st.ms_traverse;
        ms[3 * repeats + r] = st.ms_exact;
    }
    /* Each stage's own median (they need not add up to the step's). */
    double med[4];
    for (int q = 0; q < 4; q++) med[q] = hy_cli_percentile(ms + q * repeats, repeats, 50.0);
    double median = med[0], ms_min = hy_cli_percentile(ms, repeats, 0.0);
    const double* bvh_ms = med + 1;

    /* Compare the last run's collisions with the truth. */
    int64_t nfound = 0;
    const hy_feature_pair* found = hy_frames_found(fr, &nfound);
    for (int64_t i = 0; i < nfound; i++)
        if (!set_push(found[i].kind == HY_FEATURE_EE ? &fee : &fvf, found[i])) {
            fprintf(stderr, "hyphys ccd-frames: out of memory\n");
            rc = HY_EXIT_RUNTIME;
            goto done;
        }
    set_sort(&fvf);
    set_sort(&fee);
    int64_t vf_fn, vf_fp, ee_fn, ee_fp;
    compare(&tvf, &fvf, &vf_fn, &vf_fp);
    compare(&tee, &fee, &ee_fn, &ee_fp);
    hy_frames_breakdown bd;
    if (breakdown && hy_frames_profile(fr, m0->positions, m1->positions, &bd) != HY_OK) {
        fprintf(stderr, "hyphys ccd-frames: %s\n", hy_last_error());
        rc = HY_EXIT_RUNTIME;
        goto done;
    }
    const char* scene = base_name(dir);
    double frac = st.candidates ? (double)st.exact_tests / (double)st.candidates : 0.0;

    if (json) {
        cJSON* o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "scene", scene);
        cJSON_AddNumberToObject(o, "threads", (double)threads);
        cJSON_AddNumberToObject(o, "repeats", (double)repeats);
        cJSON_AddNumberToObject(o, "thickness", thickness);
        cJSON_AddNumberToObject(o, "ms", median);
        cJSON_AddNumberToObject(o, "ms_min", ms_min);
        cJSON_AddStringToObject(o, "ms_includes", !refit ? "bvh build" : st.rebuilt ? "bvh refit, rebuilt (decayed)" : "bvh refit");
        cJSON_AddNumberToObject(o, "ms_bvh", bvh_ms[0]);
        cJSON_AddNumberToObject(o, "ms_traverse", bvh_ms[1]);
        cJSON_AddNumberToObject(o, "ms_exact", bvh_ms[2]);
        cJSON_AddNumberToObject(o, "triangles", m0->triangle_count);
        cJSON_AddBoolToObject(o, "self_cull", cull);
        cJSON_AddNumberToObject(o, "pieces", (double)st.components);
        cJSON_AddNumberToObject(o, "pieces_instanced", (double)st.instanced);
        cJSON_AddNumberToObject(o, "triangle_pairs", (double)st.triangle_pairs);
        cJSON_AddNumberToObject(o, "candidates", (double)st.candidates);
        cJSON_AddNumberToObject(o, "exact_tests", (double)st.exact_tests);
        cJSON_AddNumberToObject(o, "exact_fraction", frac);
        cJSON* vf = cJSON_AddObjectToObject(o, "vf");
        cJSON_AddNumberToObject(vf, "truth", (double)tvf.n);
        cJSON_AddNumberToObject(vf, "candidates", (double)st.vf_candidates);
        cJSON_AddNumberToObject(vf, "exact_tests", (double)st.vf_exact);
        cJSON_AddNumberToObject(vf, "found", (double)fvf.n);
        cJSON_AddNumberToObject(vf, "false_negatives", (double)vf_fn);
        cJSON_AddNumberToObject(vf, "false_positives", (double)vf_fp);
        cJSON* ee = cJSON_AddObjectToObject(o, "ee");
        cJSON_AddNumberToObject(ee, "truth", (double)tee.n);
        cJSON_AddNumberToObject(ee, "candidates", (double)st.ee_candidates);
        cJSON_AddNumberToObject(ee, "exact_tests", (double)st.ee_exact);
        cJSON_AddNumberToObject(ee, "found", (double)fee.n);
        cJSON_AddNumberToObject(ee, "false_negatives", (double)ee_fn);
        cJSON_AddNumberToObject(ee, "false_positives", (double)ee_fp);
        if (breakdown) {
            /* per stage: the candidates it sees (both kinds), culled or
             * answered per kind, one-thread ms over all it sees */
            cJSON* b = cJSON_AddObjectToObject(o, "breakdown");
            const int64_t* cnt[5] = {bd.coplanar_culled, bd.sat_culled, bd.slab_culled, bd.exact_miss, bd.exact_hit};
            const double tm[5] = {bd.ms_coplanar, bd.ms_sat, bd.ms_slabs, bd.ms_exact_miss, bd.ms_exact_hit};
            static const char* const names[5] = {"coplanar", "sat", "slabs", "exact_miss", "exact_hit"};
            for (int c = 0; c < 5; c++) {
                cJSON* e = cJSON_AddObjectToObject(b, names[c]);
                cJSON_AddNumberToObject(e, "vf", (double)cnt[c][0]);
                cJSON_AddNumberToObject(e, "ee", (double)cnt[c][1]);
                cJSON_AddNumberToObject(e, "ms", tm[c]);
            }
            cJSON_AddNumberToObject(b, "filters_ms", bd.ms_filters);
        }
        char* text = cJSON_PrintUnformatted(o);
        if (text) printf("%s\n", text);
        free(text);
        cJSON_Delete(o);
    } else {
        printf("scene %s: %d vertices, %d triangles, %d thread%s, %ld repeat%s%s", scene, m0->vertex_count,
               m0->triangle_count, (int)threads, threads == 1 ? "" : "s", repeats, repeats == 1 ? "" : "s",
               cull ? "" : ", no self-culling");
        if (thickness > 0) printf(", thickness %g m (found: within it)", thickness);
        printf("\n");
        printf("step   %.2f ms median (min %.2f; includes BVH %s)  stage medians: bvh %.2f, traverse %.2f, "
               "filter+exact %.2f ms\n",
               median, ms_min, !refit ? "build" : st.rebuilt ? "refit, rebuilt as it decayed" : "refit", bvh_ms[0], bvh_ms[1], bvh_ms[2]);
        printf("pieces %lld connected", (long long)st.components);
        if (st.rebuilt) printf("; %lld built with an earlier piece's tree", (long long)st.instanced);
        printf("\n");
        printf("work   %lld candidates (%lld VF, %lld EE) from %lld triangle pairs; %lld exact tests (%.1f%%)\n",
               (long long)st.candidates, (long long)st.vf_candidates, (long long)st.ee_candidates,
               (long long)st.triangle_pairs, (long long)st.exact_tests, 100.0 * frac);
        printf("VF     truth %lld  found %lld  false negatives %lld  false positives %lld\n", (long long)tvf.n,
               (long long)fvf.n, (long long)vf_fn, (long long)vf_fp);
        printf("EE     truth %lld  found %lld  false negatives %lld  false positives %lld\n", (long long)tee.n,
               (long long)fee.n, (long long)ee_fn, (long long)ee_fp);
        if (breakdown) {
            /* Each stage over what it sees, in candidate order: coplanarity
             * over every candidate, separating axes over its survivors,
             * the parts of the step over theirs, the exact test per
             * answer. */
            int64_t cop = 0, sat = 0, slab = 0;
            for (int k = 0; k < 2; k++) {
                slab += bd.slab_culled[k] + bd.exact_miss[k] + bd.exact_hit[k];
                sat += bd.sat_culled[k];
                cop += bd.coplanar_culled[k];
            }
            sat += slab;
            cop += sat;
            int64_t miss = bd.exact_miss[0] + bd.exact_miss[1], hit = bd.exact_hit[0] + bd.exact_hit[1];
            printf("breakdown (1 thread)  coplanarity | separating axes | axes over parts | exact test: miss | "
                   "exact test: hit\n");
            for (int k = 0; k < 2; k++)
                printf("  decides %s       %9lld culled | %9lld culled | %9lld culled | %9lld | %9lld\n", k ? "EE" : "VF",
                       (long long)bd.coplanar_culled[k], (long long)bd.sat_culled[k], (long long)bd.slab_culled[k],
                       (long long)bd.exact_miss[k], (long long)bd.exact_hit[k]);
            printf("  ms (ns per pair seen) %6.1f (%4.0f) | %6.1f (%4.0f) | %6.1f (%4.0f) | %6.1f (%4.0f) | %6.1f (%4.0f)\n",
                   bd.ms_coplanar, cop ? 1e6 * bd.ms_coplanar / (double)cop : 0.0, bd.ms_sat,
                   sat ? 1e6 * bd.ms_sat / (double)sat : 0.0, bd.ms_slabs, slab ? 1e6 * bd.ms_slabs / (double)slab : 0.0,
                   bd.ms_exact_miss, miss ? 1e6 * bd.ms_exact_miss / (double)miss : 0.0, bd.ms_exact_hit,
                   hit ? 1e6 * bd.ms_exact_hit / (double)hit : 0.0);
            printf("  the filters as the step runs them (%s): %.1f ms (%.0f ns per candidate)\n",
                   hy_filter_pairs_simd(-1) ? "AVX2, four pairs at a time" : "pair by pair", bd.ms_filters,
                   cop ? 1e6 * bd.ms_filters / (double)cop : 0.0);
        }
    }
    if (vf_fn || ee_fn) {
        fprintf(stderr, "hyphys ccd-frames: %s: %lld colliding pairs missed\n", scene, (long long)(vf_fn + ee_fn));
        rc = HY_EXIT_RUNTIME;
    }

done:
    free(ms);
    free(tvf.v);
    free(tee.v);
    free(fvf.v);
    free(fee.v);
    hy_frames_destroy(fr);
    hy_pool_destroy(pool);
    hy_mesh_destroy(m0);
    hy_mesh_destroy(m1);
    return rc;
}

const hy_command hy_cmd_ccd_frames = {"ccd-frames", "whole-step CCD on recorded frames against ground truth",
                                      ccd_frames_main, help};
