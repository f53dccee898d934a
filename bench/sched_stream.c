/* Job streams recorded from real runs (see sched_stream.h). */
#include "bench/sched_stream.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "collision/bvh.h"
#include "collision/frames.h"
#include "core/error.h"
#include "core/pool.h"

/* ---- breadth-first copy of the traversal of collision/traverse_hd.h
 * Kept in step with hy_trav_expand() and hy_trav_leaf_pair/_self() there;
 * only counts come out, no candidates. It tests the same single-precision
 * gates (hy_trav_gate): a child's gate box lies inside its parent's, so
 * every leaf pair whose gates meet is reached whatever the order of
 * descent, and the triangle pairs counted are the pipeline's exactly. */

typedef struct pair {
    int32_t a, b, job;
} pair;

typedef struct tctx {
    const hy_bvh* A;
    const hy_bvh* B;
    int self, shifted;
    double e[3];
    float e_lo[4], e_hi[4];
} tctx;

static void tctx_init(tctx* c, const hy_bvh* a, const hy_bvh* b) {
    c->A = a;
    c->B = b ? b : a;
    c->self = c->B == a;
    c->shifted = 0;
    for (int k = 0; k < 3; k++) {
        c->e[k] = c->self ? 0.0 : a->shift[k] - c->B->shift[k];
        if (c->e[k] != 0.0) c->shifted = 1;
    }
    hy_fbox_shift_range(c->e, c->e_lo, c->e_hi);
}

/* hy_trav_gate: A's box moved into B's frame against B's. */
static int gate(const tctx* c, const hy_fbox* a, const hy_fbox* b) {
    return c->shifted ? hy_fbox_overlap_shift(a, c->e_lo, c->e_hi, b) : hy_fbox_overlap(a, b);
}

static int overlap(const tctx* c, int32_t ia, int32_t ib) {
    return gate(c, &c->A->node_fboxes[ia], &c->B->node_fboxes[ib]);
}

/* Children of p, or -1 for a leaf pair. */
static int expand(const tctx* cs, pair p, pair out[3]) {
    const tctx* c = &cs[p.job];
    const hy_bvh_node* A = c->A->nodes;
    const hy_bvh_node* B = c->B->nodes;
    int n = 0;
    if (c->self && p.a == p.b) {
        const hy_bvh_node* nd = &A[p.a];
        if (c->A->self_free[p.a]) return 0;
        if (nd->count) return -1;
        int32_t l = nd->first, r = nd->first + 1;
        out[n++] = (pair){l, l, p.job};
        out[n++] = (pair){r, r, p.job};
        if (hy_fbox_overlap(&c->A->node_fboxes[l], &c->A->node_fboxes[r])) out[n++] = (pair){l, r, p.job};
        return n;
    }
    const hy_bvh_node* na = &A[p.a];
    const hy_bvh_node* nb = &B[p.b];
    if (na->count && nb->count) return -1;
    int split_a = nb->count || (!na->count && hy_aabb_half_area(&na->box) >= hy_aabb_half_area(&nb->box));
    for (int k = 0; k < 2; k++) {
        if (split_a) {
            int32_t ch = na->first + k;
            if (overlap(c, ch, p.b)) out[n++] = (pair){ch, p.b, p.job};
        } else {
            int32_t ch = nb->first + k;
            if (overlap(c, p.a, ch)) out[n++] = (pair){p.a, ch, p.job};
        }
    }
    return n;
}

/* Triangle pairs of a leaf pair whose gates meet (the pairs that go on to
 * feature tests in hy_trav_triangle_pair()). */
static int64_t leaf_count(const tctx* cs, pair p) {
    const tctx* c = &cs[p.job];
    const hy_fbox* fa = c->A->leaf_fboxes;
    const hy_fbox* fb = c->B->leaf_fboxes;
    int64_t n = 0;
    if (c->self && p.a == p.b) {
        const hy_bvh_node* nd = &c->A->nodes[p.a];
        for (int32_t i = nd->first; i < nd->first + nd->count; i++)
            for (int32_t j = i + 1; j < nd->first + nd->count; j++) n += hy_fbox_overlap(&fa[i], &fa[j]);
        return n;
    }
    const hy_bvh_node* na = &c->A->nodes[p.a];
    const hy_bvh_node* nb = &c->B->nodes[p.b];
    for (int32_t i = na->first; i < na->first + na->count; i++)
        for (int32_t j = nb->first; j < nb->first + nb->count; j++) n += gate(c, &fa[i], &fb[j]);
    return n;
}

typedef struct grow_buf {
    void* p;
    int64_t cap;
} grow_buf;

static int grow(grow_buf* g, int64_t need, size_t elem) {
    if (need <= g->cap) return 1;
    int64_t n = g->cap ? g->cap : 1024;
    while (n < need) n *= 2;
    void* q = realloc(g->p, (size_t)n * elem);
    if (!q) return 0;
    g->p = q;
    g->cap = n;
    return 1;
}

/* Append one round to the stream under construction. */
static int push_round(grow_buf* rounds, int64_t* count, hy_job_round r) {
    if (!grow(rounds, *count + 1, sizeof(hy_job_round))) return 0;
    ((hy_job_round*)rounds->p)[(*count)++] = r;
    return 1;
}

/* The rounds of one frame from the BVHs hy_frames_run left in f. */
static hy_status frame_rounds(const hy_frames* f, grow_buf* rounds, int64_t* count, int64_t* tri_total) {
    int32_t nc = hy_frames_components(f);
    hy_status st = HY_OK;
    tctx* cs = NULL;
    hy_aabb* world = malloc(sizeof(hy_aabb) * (size_t)(nc > 0 ? nc : 1));
    grow_buf cur = {0}, next = {0}, ctxs = {0};
    if (!world) return hy_fail(HY_ERR_NOMEM, "job stream: out of memory");
    /* Jobs as collision/frames.c makes them: self, then overlapping pairs. */
    int64_t nj = 0;
    for (int32_t c = 0; c < nc; c++) hy_bvh_world_box(hy_frames_bvh(f, c), &world[c]);
    for (int32_t a = 0; a < nc && !st; a++) {
        if (!grow(&ctxs, nj + 1, sizeof(tctx))) st = hy_fail(HY_ERR_NOMEM, "job stream: out of memory");
        else tctx_init(&((tctx*)ctxs.p)[nj++], hy_frames_bvh(f, a), NULL);
    }
    for (int32_t a = 0; a < nc && !st; a++)
        for (int32_t b = a + 1; b < nc && !st; b++) {
            if (!hy_aabb_overlap(&world[a], &world[b])) continue;
            if (!grow(&ctxs, nj + 1, sizeof(tctx))) st = hy_fail(HY_ERR_NOMEM, "job stream: out of memory");
            else tctx_init(&((tctx*)ctxs.p)[nj++], hy_frames_bvh(f, a), hy_frames_bvh(f, b));
        }
    cs = ctxs.p;
    /* Round 0: root pairs that pass the root test. */
    int64_t ncur = 0;
    if (!st && !grow(&cur, nj + 1, sizeof(pair))) st = hy_fail(HY_ERR_NOMEM, "job stream: out of memory");
    for (int64_t j = 0; j < nj && !st; j++) {
        const tctx* c = &cs[j];
        if (c->self ? !c->A->self_free[0] : overlap(c, 0, 0)) ((pair*)cur.p)[ncur++] = (pair){0, 0, (int32_t)j};
    }
    int64_t tri_prev = 0;
    /* round 0 is kept even when empty, so every frame has a row */
    for (int round = 0; !st && (round == 0 || ncur > 0 || tri_prev > 0); round++) {
        hy_job_round r = {ncur, tri_prev, 0};
        if (!push_round(rounds, count, r)) {
            st = hy_fail(HY_ERR_NOMEM, "job stream: out of memory");
            break;
        }
        if (!grow(&next, 3 * ncur + 3, sizeof(pair))) {
            st = hy_fail(HY_ERR_NOMEM, "job stream: out of memory");
            break;
        }
        int64_t nn = 0, tri = 0;
        const pair* pc = cur.p;
        pair* pn = next.p;
        for (int64_t i = 0; i < ncur; i++) {
            pair kids[3];
            int n = expand(cs, pc[i], kids);
            if (n < 0) {
                tri += leaf_count(cs, pc[i]);
                continue;
            }
            for (int k = 0; k < n; k++) pn[nn++] = kids[k];
        }
        grow_buf t = cur;
        cur = next;
        next = t;
        ncur = nn;
        tri_prev = tri;
        *tri_total += tri;
    }
    free(cur.p);
    free(next.p);
    free(ctxs.p);
    free(world);
    return st;
}

void hy_job_stream_free(hy_job_stream* s) {
    if (!s) return;
    free(s->first);
    free(s->rounds);
    memset(s, 0, sizeof *s);
}

hy_status hy_job_stream_record(const hy_recording* rec, int32_t frames, double thickness, int threads,
                               hy_job_stream* out) {
    memset(out, 0, sizeof *out);
    if (frames < 1 || rec->frame_count < frames + 1)
        return hy_fail(HY_ERR_INVALID_ARG, "job stream: %d frame pairs need %d recorded frames, have %d", frames,
                       frames + 1, rec->frame_count);
    hy_frames_def def = hy_frames_def_default();
    def.thickness = thickness;
    hy_frames* f = NULL;
    hy_pool* pool = hy_pool_create(threads);
    if (!pool) return hy_fail(HY_ERR_NOMEM, "job stream: out of memory");
    hy_status st = hy_frames_create(rec->triangles, rec->triangle_count, rec->vertex_count, &def, &f);
    int32_t* first = calloc((size_t)frames + 1, sizeof(int32_t));
    grow_buf rounds = {0};
    int64_t count = 0;
    if (!st && !first) st = hy_fail(HY_ERR_NOMEM, "job stream: out of memory");
    size_t stride = 3 * (size_t)rec->vertex_count;
    for (int32_t fr = 0; fr < frames && !st; fr++) {
        const double* x0 = rec->frames + (size_t)fr * stride;
        hy_frames_stats stats;
        st = hy_frames_run(f, x0, x0 + stride, pool, &stats);
        if (st) break;
        first[fr] = (int32_t)count;
        int64_t tri = 0;
        st = frame_rounds(f, &rounds, &count, &tri);
        if (st) break;
        if (tri != stats.triangle_pairs)
            fprintf(stderr, "job stream: frame %d: breadth-first copy found %lld triangle pairs, the pipeline %lld\n",
                    fr, (long long)tri, (long long)stats.triangle_pairs);
        /* candidates over the rounds in proportion to triangle pairs; both
         * counts are far below 2^31 per frame, so the products fit int64 */
        if (stats.candidates >= ((int64_t)1 << 31) || tri >= ((int64_t)1 << 31)) {
            st = hy_fail(HY_ERR_UNSUPPORTED, "job stream: frame %d: counts past 2^31", fr);
            break;
        }
        hy_job_round* rs = (hy_job_round*)rounds.p + first[fr];
        int64_t nr = count - first[fr], given = 0;
        for (int64_t r = 0; r < nr && tri > 0; r++) {
            rs[r].leaf = stats.candidates * rs[r].triangle_pairs / tri;
            given += rs[r].leaf;
        }
        /* remainders: one each to the rounds with the largest fractional
         * parts, ties to the earlier round */
        while (given < stats.candidates && tri > 0) {
            int64_t best = -1;
            int64_t best_rem = -1;
            for (int64_t r = 0; r < nr; r++) {
                int64_t rem = stats.candidates * rs[r].triangle_pairs - rs[r].leaf * tri;
                if (rem > best_rem) {
                    best_rem = rem;
                    best = r;
                }
            }
            rs[best].leaf++;
            given++;
        }
    }
    if (!st) {
        first[frames] = (int32_t)count;
        out->frames = frames;
        out->first = first;
        out->rounds = rounds.p;
        out->round_count = count;
        out->thickness = thickness;
    } else {
        free(first);
        free(rounds.p);
    }
    hy_frames_destroy(f);
    hy_pool_destroy(pool);
    return st;
}

hy_status hy_job_stream_matches(const hy_job_stream* s, const hy_recording* rec, int threads, int* same) {
    *same = 0;
    int32_t k = s->frames < 2 ? s->frames : 2;
    if (k > rec->frame_count - 1) k = rec->frame_count - 1;
    if (k < 1) return hy_fail(HY_ERR_INVALID_ARG, "job stream: checking it needs 2 recorded frames, have %d",
                              rec->frame_count);
    hy_job_stream now;
    hy_status st = hy_job_stream_record(rec, k, s->thickness, threads, &now);
    if (st) return st;
    int32_t n = s->first[k] - s->first[0];
    *same = 1; /* the same rounds per frame, then the same counts */
    for (int32_t f = 1; f <= k && *same; f++) *same = now.first[f] - now.first[0] == s->first[f] - s->first[0];
    for (int32_t r = 0; r < n && *same; r++) {
        const hy_job_round *a = &s->rounds[s->first[0] + r], *b = &now.rounds[r];
        *same = a->traverse == b->traverse && a->triangle_pairs == b->triangle_pairs && a->leaf == b->leaf;
    }
    hy_job_stream_free(&now);
    return HY_OK;
}

hy_status hy_job_stream_save(const hy_job_stream* s, const char* path) {
    FILE* f = fopen(path, "w");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot open for writing", path);
    fprintf(f, "# hyphys job stream 3 thickness=%.17g frames=%d\nframe,round,traverse,triangle_pairs,leaf\n",
            s->thickness, s->frames);
    for (int32_t fr = 0; fr < s->frames; fr++)
        for (int32_t r = s->first[fr]; r < s->first[fr + 1]; r++)
            fprintf(f, "%d,%d,%lld,%lld,%lld\n", fr, r - s->first[fr], (long long)s->rounds[r].traverse,
                    (long long)s->rounds[r].triangle_pairs, (long long)s->rounds[r].leaf);
    int bad = ferror(f);
    bad |= fclose(f) != 0;
    return bad ? hy_fail(HY_ERR_IO, "%s: write failed", path) : HY_OK;
}

hy_status hy_job_stream_load(const char* path, hy_job_stream* out) {
    memset(out, 0, sizeof *out);
    FILE* f = fopen(path, "r");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot open", path);
    char line[512];
    int lineno = 0, frames = 0;
    double thickness = 0;
    hy_status st = HY_OK;
    if (!fgets(line, sizeof line, f) || sscanf(line, "# hyphys job stream 3 thickness=%lf frames=%d", &thickness,
                                               &frames) != 2 || frames < 1 || frames > 10000000 ||
        !(thickness >= 0 && thickness < 1e300))
        st = hy_fail(HY_ERR_PARSE, "%s:1: not a job stream (expected '# hyphys job stream 3 thickness=T frames=F')",
                     path);
    lineno = 1;
    if (!st && (!fgets(line, sizeof line, f) || strncmp(line, "frame,round,traverse,triangle_pairs,leaf", 40)))
        st = hy_fail(HY_ERR_PARSE, "%s:2: expected the header 'frame,round,traverse,triangle_pairs,leaf'", path);
    lineno = 2;
    int32_t* first = st ? NULL : calloc((size_t)frames + 1, sizeof(int32_t));
    grow_buf rounds = {0};
    int64_t count = 0;
    int last_frame = -1, last_round = -1;
    if (!st && !first) st = hy_fail(HY_ERR_NOMEM, "%s: out of memory", path);
    while (!st && fgets(line, sizeof line, f)) {
        lineno++;
        int fr, r;
        long long t, tp, l;
        char tail;
        if (sscanf(line, "%d,%d,%lld,%lld,%lld %c", &fr, &r, &t, &tp, &l, &tail) != 5 || t < 0 || tp < 0 || l < 0) {
            st = hy_fail(HY_ERR_PARSE, "%s:%d: expected 'frame,round,traverse,triangle_pairs,leaf' with counts >= 0",
                         path, lineno);
            break;
        }
        /* The simulation's products of two counts must stay in int64_t,
         * and it keeps per-round arrays for every round of a frame. */
        if (t > INT32_MAX || tp > INT32_MAX || l > INT32_MAX) {
            st = hy_fail(HY_ERR_PARSE, "%s:%d: a count above 2^31 - 1", path, lineno);
            break;
        }
        if (r >= HY_JOB_STREAM_MAX_ROUNDS) {
            st = hy_fail(HY_ERR_PARSE, "%s:%d: round %d: more than %d rounds in a frame", path, lineno, r,
                         HY_JOB_STREAM_MAX_ROUNDS);
            break;
        }
        int ok = fr >= 0 && fr < frames &&
                 ((fr == last_frame && r == last_round + 1) || (fr == last_frame + 1 && r == 0));
        if (!ok) {
            st = hy_fail(HY_ERR_PARSE, "%s:%d: frame %d round %d out of order", path, lineno, fr, r);
            break;
        }
        while (last_frame < fr) first[++last_frame] = (int32_t)count;
        last_round = r;
        if (!push_round(&rounds, &count, (hy_job_round){t, tp, l})) st = hy_fail(HY_ERR_NOMEM, "%s: out of memory", path);
    }
    fclose(f);
    if (!st && last_frame != frames - 1)
        st = hy_fail(HY_ERR_PARSE, "%s: %d frames announced, %d found", path, frames, last_frame + 1);
    if (st) {
        free(first);
        free(rounds.p);
        return st;
    }
    first[frames] = (int32_t)count;
    out->frames = frames;
    out->first = first;
    out->rounds = rounds.p;
    out->round_count = count;
    out->thickness = thickness;
    return HY_OK;
}
