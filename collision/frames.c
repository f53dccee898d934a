/* The whole-step CCD pipeline: update BVH, traverse, filter, exact tests.
 *
 * The exact pass runs over the candidate array in fixed blocks and writes
 * one flag per candidate, so the found list (a serial compaction in
 * candidate order) does not depend on which thread tested what. */
#include "collision/frames.h"

#include <math.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "collision/ccd.h"
#include "collision/filter.h"
#include "core/hash.h"
#include "core/error.h"

/* Candidates per block of the exact pass: large enough that the pool's
 * per-block cost vanishes, small enough to balance tests of uneven cost. */
#define EXACT_GRAIN 2048

/* Components (edge- or vertex-connected pieces) below this many triangles
 * are built many at a time, one per pool block; larger ones one at a time
 * with the pool inside the build. */
#define SMALL_COMPONENT 4096

/* Two pieces with the same triangles share a tree when their positions,
 * taken relative to their mean and divided by their RMS radius, differ by
 * at most this much in every coordinate at both ends of the step. It
 * guards the tree's quality only: a shared tree gets boxes from the
 * piece's own positions, so it is exact for any shape. */
#define SHAPE_TOL 1e-3

/* A piece's placement at one end of the step: the mean of its points and
 * the reciprocal of their RMS radius (0 when the radius or its reciprocal
 * is 0 or not finite: such a piece matches nothing). */
typedef struct shape_frame {
    double mean[3], inv_radius;
} shape_frame;

/* One connected piece of the mesh with its own BVH in its own moving frame
 * (hy_bvh.relative): a piece that only translates then has tiny boxes and
 * no self candidates at all, however far it moves. Pieces meet through pair
 * traversal of their BVHs. */
typedef struct component {
    hy_bvh* bvh;
    int32_t vertex_count;
    int32_t* vertices; /* local -> global vertex id */
    int64_t offset;    /* first local vertex in the gathered position arrays */
    int32_t like;      /* an earlier piece with the same triangles (its first), or -1 */
    int rebuilt;       /* the last update built the tree */
    int instanced;     /* the last update built it with the tree of `like` */
    int copied;        /* some later piece has this one as `like` */
    shape_frame shape[2]; /* where copied: its placement at both ends, made by a build for its copies */
    hy_status status;  /* of the last update (written by the block that ran it) */
} component;

struct hy_frames {
    hy_frames_def def;
    int32_t vertex_count;
    component* comps;
    int32_t comp_count;
    int32_t copies; /* pieces with an earlier piece of the same triangles (component.like >= 0) */
    double* lx0; /* positions gathered per component (3 * vertex_count) */
    double* lx1;
    double* xx;   /* both ends packed for the filters and exact tests (hy_filter_pack) */
    hy_aabb* world; /* per component: swept box in the fixed frame */
    hy_traverse_job* jobs;
    int64_t job_cap;
    hy_traverser* trav;
    hy_candidates cand; /* counts after each run; the pairs once joined */
    int joined;         /* cand.pairs holds the last run's candidates */
    const hy_trav_segment* segs; /* the last run's candidates where the traversal left them */
    int64_t nsegs;
    uint8_t* flags; /* per candidate: 1 tested, 2 collides */
    int64_t flags_cap;
    uint16_t* hit_at; /* per exact block, from its first candidate's place: its hits' offsets in it */
    int64_t hit_cap;
    int64_t* block_counts; /* per block: vf_exact, ee_exact, ee found, found (then its first slot in found) */
    int64_t block_cap;
    hy_feature_pair* found;
    int64_t found_count, found_cap;
    int built;
};

hy_frames_def hy_frames_def_default(void) {
    hy_frames_def d;
    d.thickness = 0.0;
    d.max_decay = 2.0;
    d.use_filters = 1;
    d.force_build = 0;
    d.self_cull = 1;
    d.instance = 1;
    return d;
}

static double now_ms(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return 1e3 * (double)ts.tv_sec + 1e-6 * (double)ts.tv_nsec;
}

static int32_t find(int32_t* parent, int32_t x) {
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

/* Pieces that are copies of earlier ones: the same vertex and triangle
 * counts and the same local triangles. Pieces sorted by a hash of those,
 * then within a run of equal hashes each takes the first earlier piece
 * whose triangles match (like = -1: none). */
typedef struct piece_key {
    uint64_t hash;
    int32_t c;
} piece_key;

static int cmp_piece(const void* x, const void* y) {
    const piece_key *a = x, *b = y;
    if (a->hash != b->hash) return a->hash < b->hash ? -1 : 1;
    return (a->c > b->c) - (a->c < b->c);
}

static hy_status find_copies(hy_frames* f, const int32_t* local, const int64_t* tri_start) {
    int32_t nc = f->comp_count;
    piece_key* k = malloc(sizeof *k * (size_t)(nc > 0 ? nc : 1));
    if (!k) return hy_fail(HY_ERR_NOMEM, "frames: out of memory");
    for (int32_t c = 0; c < nc; c++) {
        int32_t counts[2] = {f->comps[c].vertex_count, (int32_t)(tri_start[c + 1] - tri_start[c])};
        uint64_t h = hy_fnv1a(HY_FNV1A_INIT, counts, sizeof counts);
        k[c].hash = hy_fnv1a(h, local + 3 * tri_start[c], sizeof(int32_t) * 3 * (size_t)counts[1]);
        k[c].c = c;
        f->comps[c].like = -1;
    }
    qsort(k, (size_t)nc, sizeof *k, cmp_piece);
    for (int32_t i = 0, run = 0; i < nc; i++) {
        if (k[i].hash != k[run].hash) run = i;
        /* the originals of this hash come first in piece order */
        for (int32_t j = run; j < i; j++) {
            int32_t a = k[j].c, b = k[i].c; /* a < b: same hash, sorted by piece */
            int64_t n = tri_start[a + 1] - tri_start[a];
            if (f->comps[a].like >= 0 || f->comps[a].vertex_count != f->comps[b].vertex_count ||
                tri_start[b + 1] - tri_start[b] != n ||
                memcmp(local + 3 * tri_start[a], local + 3 * tri_start[b], sizeof(int32_t) * 3 * (size_t)n) != 0)
                continue;
            f->comps[b].like = a;
            f->comps[a].copied = 1;
            f->copies++;
            break;
        }
    }
    free(k);
    return HY_OK;
}

hy_status hy_frames_create(const int32_t* triangles, int32_t triangle_count, int32_t vertex_count,
                           const hy_frames_def* def, hy_frames** out) {
    *out = NULL;
    hy_frames_def d = def ? *def : hy_frames_def_default();
    if (!(d.thickness >= 0 && d.thickness < 1e300))
        return hy_fail(HY_ERR_INVALID_ARG, "frames: thickness must be finite and >= 0, got %g", d.thickness);
    if (!(d.max_decay > 1)) return hy_fail(HY_ERR_INVALID_ARG, "frames: max_decay must be > 1, got %g", d.max_decay);
    if (!triangles || triangle_count < 1 || vertex_count < 3)
        return hy_fail(HY_ERR_INVALID_ARG, "frames: needs >= 1 triangle and >= 3 vertices, got %d and %d",
                       triangle_count, vertex_count);
    for (int64_t i = 0; i < 3 * (int64_t)triangle_count; i++)
        if (triangles[i] < 0 || triangles[i] >= vertex_count)
            return hy_fail(HY_ERR_INVALID_ARG, "frames: triangle %lld index %d out of range [0, %d)",
                           (long long)(i / 3), triangles[i], vertex_count);
    hy_frames* f = calloc(1, sizeof *f);
    if (!f) return hy_fail(HY_ERR_NOMEM, "frames: out of memory");
    f->def = d;
    f->vertex_count = vertex_count;
    size_t nv = (size_t)vertex_count, nt = (size_t)triangle_count;
    int32_t* parent = malloc(sizeof(int32_t) * nv);
    int32_t* comp_of = malloc(sizeof(int32_t) * nv); /* root -> component, then vertex -> local index */
    int32_t* tri_count = NULL;
    int32_t* local = NULL;
    hy_status st = HY_OK;
    f->lx0 = malloc(sizeof(double) * 3 * nv);
    f->xx = aligned_alloc(64, sizeof(double) * HY_FILTER_PACK * nv);
    f->lx1 = malloc(sizeof(double) * 3 * nv);
    f->trav = hy_traverser_create();
    if (!parent || !comp_of || !f->lx0 || !f->lx1 || !f->xx || !f->trav) {
        st = hy_fail(HY_ERR_NOMEM, "frames: out of memory");
        goto done;
    }
    /* Components: union-find over the triangles' vertices, numbered in
     * order of their first triangle. */
    for (size_t i = 0; i < nv; i++) {
        parent[i] = (int32_t)i;
        comp_of[i] = -1;
    }
    for (size_t t = 0; t < nt; t++)
        for (int k = 1; k < 3; k++) {
            int32_t a = find(parent, triangles[3 * t]), b = find(parent, triangles[3 * t + k]);
            if (a != b) parent[a < b ? b : a] = a < b ? a : b;
        }
    int32_t nc = 0;
    for (size_t t = 0; t < nt; t++) {
        int32_t r = find(parent, triangles[3 * t]);
        if (comp_of[r] < 0) comp_of[r] = nc++;
    }
    f->comps = calloc((size_t)nc, sizeof *f->comps);
    f->world = malloc(sizeof(hy_aabb) * (size_t)nc);
    tri_count = calloc((size_t)nc, sizeof(int32_t));
    local = malloc(sizeof(int32_t) * 3 * nt);
    if (!f->comps || !f->world || !tri_count || !local) {
        st = hy_fail(HY_ERR_NOMEM, "frames: out of memory");
        goto done;
    }
    f->comp_count = nc;
    /* Vertices of each component in global order; a vertex used by no
     * triangle belongs to none (it has no owner, so it meets no face). */
    int32_t* vcomp = malloc(sizeof(int32_t) * nv);
    int32_t* lidx = malloc(sizeof(int32_t) * nv);
    int64_t* tri_start = calloc((size_t)nc + 1, sizeof(int64_t));
    if (!vcomp || !lidx || !tri_start) {
        free(vcomp);
        free(lidx);
        free(tri_start);
        st = hy_fail(HY_ERR_NOMEM, "frames: out of memory");
        goto done;
    }
    for (size_t v = 0; v < nv; v++) vcomp[v] = comp_of[find(parent, (int32_t)v)];
    for (size_t v = 0; v < nv; v++) {
        int32_t c = vcomp[v];
        lidx[v] = c >= 0 ? f->comps[c].vertex_count++ : -1;
    }
    int64_t off = 0;
    for (int32_t c = 0; c < nc && st == HY_OK; c++) {
        component* cp = &f->comps[c];
        cp->offset = off;
        off += cp->vertex_count;
        cp->vertices = malloc(sizeof(int32_t) * (size_t)cp->vertex_count);
        if (!cp->vertices) st = hy_fail(HY_ERR_NOMEM, "frames: out of memory");
        cp->vertex_count = 0;
    }
    if (st == HY_OK) {
        for (size_t v = 0; v < nv; v++)
            if (vcomp[v] >= 0) {
                component* cp = &f->comps[vcomp[v]];
                cp->vertices[cp->vertex_count++] = (int32_t)v;
            }
        /* Triangles of each component, in triangle order, local indices. */
        for (size_t t = 0; t < nt; t++) tri_count[vcomp[triangles[3 * t]]]++;
        for (int32_t c = 0; c < nc; c++) tri_start[c + 1] = tri_start[c] + tri_count[c];
        for (int32_t c = 0; c < nc; c++) tri_count[c] = 0;
        for (size_t t = 0; t < nt; t++) {
            int32_t c = vcomp[triangles[3 * t]];
            int64_t at = 3 * (tri_start[c] + tri_count[c]++);
            for (int k = 0; k < 3; k++) local[at + k] = lidx[triangles[3 * t + k]];
        }
        for (int32_t c = 0; c < nc && st == HY_OK; c++) {
            component* cp = &f->comps[c];
            /* A component is a triangle's worth of vertices at least, but
             * hy_bvh wants 3: a lone degenerate pair cannot occur (triangles
             * have three distinct vertices, validated by hy_bvh_create). */
            st = hy_bvh_create(local + 3 * tri_start[c], tri_count[c], cp->vertex_count, &cp->bvh);
            if (st == HY_OK) {
                cp->bvh->relative = 1;
                cp->bvh->self_cull = f->def.self_cull != 0;
                st = hy_bvh_set_vertex_ids(cp->bvh, cp->vertices);
            }
            if (st != HY_OK) hy_error_prefix("component %d: ", c);
        }
    }
    if (st == HY_OK) st = find_copies(f, local, tri_start);
    free(vcomp);
    free(lidx);
    free(tri_start);
    if (st != HY_OK) goto done;
    st = HY_OK;
done:
    free(parent);
    free(comp_of);
    free(tri_count);
    free(local);
    if (st != HY_OK) {
        hy_frames_destroy(f);
        return st;
    }
    *out = f;
    return HY_OK;
}

void hy_frames_destroy(hy_frames* f) {
    if (!f) return;
    for (int32_t i = 0; f->comps && i < f->comp_count; i++) {
        hy_bvh_destroy(f->comps[i].bvh);
        free(f->comps[i].vertices);
    }
    free(f->comps);
    free(f->lx0);
    free(f->lx1);
    free(f->xx);
    free(f->world);
    free(f->jobs);
    hy_traverser_destroy(f->trav);
    hy_candidates_free(&f->cand);
    free(f->flags);
    free(f->hit_at);
    free(f->block_counts);
    free(f->found);
    free(f);
}

static int grow(void** p, int64_t* cap, int64_t need, size_t elem) {
    if (need <= *cap) return 1;
    int64_t n = *cap ? *cap : 1024;
    while (n < need) n *= 2;
    void* q = realloc(*p, (size_t)n * elem);
    if (!q) return 0;
    *p = q;
    *cap = n;
    return 1;
}

/* The four points of candidate p at both ends in packed positions xx
 * (hy_filter_pack), as the exact pass gathers them. */
static void gather(const hy_feature_pair* p, const double* xx, const double* a[4], const double* b[4]) {
    for (int k = 0; k < 4; k++) {
        a[k] = xx + HY_FILTER_PACK * (int64_t)p->v[k];
        b[k] = a[k] + 4;
    }
}

/* The exact test of hy_ccd_vf / hy_ccd_ee (default options) without its
 * time of impact, which the found sets do not keep (hy_ccd_options
 * need_toi: with a distance, a contact certain at a sampled time needs no
 * refining; the same answers). */
static int exact_one(const hy_feature_pair* p, const double* const a[4], const double* const b[4], double md) {
    hy_ccd_options o = hy_ccd_options_default();
    o.need_toi = 0;
    double x[8][3], toi;
    for (int j = 0; j < 4; j++) {
        memcpy(x[j], a[j], sizeof x[j]);
        memcpy(x[4 + j], b[j], sizeof x[j]);
    }
    return hy_ccd_query(p->kind != HY_FEATURE_EE, (const double(*)[3])x, md, &o, &toi, NULL);
}

typedef struct exact_ctx {
    hy_frames* f;
    const double* x0;
    const double* x1;
    _Atomic int in_range; /* every packed coordinate in the filter lanes' range */
} exact_ctx;

#define PACK_GRAIN 8192

static void pack_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    exact_ctx* c = vctx;
    if (!hy_filter_pack(c->x0, c->x1, begin, end, c->f->xx)) atomic_store(&c->in_range, 0);
}

/* The first segment holding candidate i (segments in order, the first
 * at offset 0). */
static int64_t seg_find(const hy_trav_segment* g, int64_t ns, int64_t i) {
    int64_t lo = 0, hi = ns - 1;
    while (lo < hi) {
        int64_t mid = lo + (hi - lo + 1) / 2;
        if (g[mid].offset <= i)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

/* The candidates from i on in segment *q (which holds i), at most up to
 * end: their pairs, *n of them; *q moves on to the next segment. */
static const hy_feature_pair* seg_run(const hy_trav_segment* g, int64_t* q, int64_t i, int64_t end, int64_t* n) {
    const hy_trav_segment* s = &g[(*q)++];
    int64_t at = i - s->offset;
    *n = s->count - at < end - i ? s->count - at : end - i;
    return s->v + at;
}

static void exact_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)worker;
    exact_ctx* c = vctx;
    hy_frames* f = c->f;
    const hy_trav_segment* segs = f->segs;
    int64_t first_seg = seg_find(segs, f->nsegs, begin);
    double md = f->def.thickness;
    int filters = f->def.use_filters;
    int in_range = atomic_load(&c->in_range);
    int64_t vf = 0, ee = 0, hits = 0, ee_hits = 0;
    uint16_t* hit_at = f->hit_at + begin;
    /* The filters' answers for the whole block first (four pairs at a time
     * where the CPU can), written where the flags go; the block is read
     * where the traversal left it, a run per segment it meets. */
    if (filters)
        for (int64_t i = begin, q = first_seg, n; i < end; i += n) {
            const hy_feature_pair* run = seg_run(segs, &q, i, end, &n);
            hy_filter_pairs(run, n, f->xx, in_range, md, f->flags + i);
        }
    for (int64_t i = begin, q = first_seg, n; i < end;) {
        const hy_feature_pair* run = seg_run(segs, &q, i, end, &n);
        for (int64_t r = 0; r < n; r++, i++) {
            const hy_feature_pair* p = &run[r];
            uint8_t flag = 0;
            int is_vf = p->kind != HY_FEATURE_EE;
            if (!filters || f->flags[i]) {
                const double *a[4], *b[4];
                gather(p, f->xx, a, b);
                vf += is_vf;
                ee += !is_vf;
                flag = (uint8_t)(1 | (exact_one(p, a, b, md) ? 2 : 0));
            }
            f->flags[i] = flag;
            hit_at[hits] = (uint16_t)(i - begin); /* kept when it is a hit */
            hits += flag >> 1;
            ee_hits += (flag >> 1) & (p->kind == HY_FEATURE_EE);
        }
    }
    int64_t* bc = f->block_counts + 4 * block;
    bc[0] = vf;
    bc[1] = ee;
    bc[2] = ee_hits;
    bc[3] = hits;
}

/* End of exact block b of n candidates. */
static int64_t block_end(int64_t b, int64_t n) { return (b + 1) * EXACT_GRAIN < n ? (b + 1) * EXACT_GRAIN : n; }

/* The found pairs of exact blocks [begin, end), in candidate order, from
 * each block's first slot (block_counts[4 b + 3] after the prefix sum):
 * the hits exact_block listed, not a scan of every flag. */
static void found_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    hy_frames* f = ((exact_ctx*)vctx)->f;
    int64_t blocks = hy_pool_blocks(f->cand.count, EXACT_GRAIN);
    for (int64_t b = begin; b < end; b++) {
        int64_t at = f->block_counts[4 * b + 3];
        int64_t first = b * EXACT_GRAIN, count = (b + 1 < blocks ? f->block_counts[4 * b + 7] : f->found_count) - at;
        const uint16_t* h = f->hit_at + first;
        const hy_trav_segment* g = f->segs;
        int64_t sq = count ? seg_find(g, f->nsegs, first) : 0;
        for (int64_t q = 0; q < count; q++) {
            int64_t i = first + h[q];
            while (g[sq].offset + g[sq].count <= i) sq++;
            f->found[at + q] = g[sq].v[i - g[sq].offset];
        }
    }
}

/* The piece whose tree piece c may take when built (hy_frames_def.instance),
 * or NULL. Such pieces are built after every other (a second pass), so the
 * original's tree and gathered positions are there. */
static const component* copy_of(const hy_frames* f, int32_t c) {
    int32_t like = f->comps[c].like;
    return f->def.instance && like >= 0 ? &f->comps[like] : NULL;
}

static shape_frame shape_of(const double* a, int32_t n) {
    shape_frame s = {{0, 0, 0}, 0};
    for (int32_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) s.mean[k] += a[3 * i + k];
    for (int k = 0; k < 3; k++) s.mean[k] /= n;
    double r = 0;
    for (int32_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++) {
            double d = a[3 * i + k] - s.mean[k];
            r += d * d;
        }
    r = sqrt(r / n);
    double inv = 1.0 / r;
    s.inv_radius = r > 0 && isfinite(r) && isfinite(inv) ? inv : 0.0;
    return s;
}

/* Whether n points a and n points b (placements sa, sb) have nearly one
 * shape up to translation and scale: relative to their means, over their
 * RMS radii, every coordinate within SHAPE_TOL. */
static int same_shape(const double* a, const shape_frame* sa, const double* b, const shape_frame* sb, int32_t n) {
    if (!(sa->inv_radius > 0 && sb->inv_radius > 0)) return 0;
    for (int32_t i = 0; i < n; i++)
        for (int k = 0; k < 3; k++)
            if (!(fabs((a[3 * i + k] - sa->mean[k]) * sa->inv_radius - (b[3 * i + k] - sb->mean[k]) * sb->inv_radius) <=
                  SHAPE_TOL))
                return 0;
    return 1;
}

/* Component c's positions gathered into its contiguous local-order slice,
 * then its tree built or refitted. */
static hy_status update_one(hy_frames* f, int32_t c, const double* x0, const double* x1, hy_pool* pool,
                            int* rebuilt) {
    const component* cp = &f->comps[c];
    double* a = f->lx0 + 3 * cp->offset;
    double* b = f->lx1 + 3 * cp->offset;
    for (int32_t i = 0; i < cp->vertex_count; i++) {
        int64_t v = cp->vertices[i];
        for (int k = 0; k < 3; k++) {
            a[3 * i + k] = x0[3 * v + k];
            b[3 * i + k] = x1[3 * v + k];
        }
    }
    int r = 0, copy = 0;
    hy_status st;
    if (f->def.force_build || !f->built) {
        const component* m = copy_of(f, c);
        if (cp->copied && f->def.instance) { /* made once here for all its copies' tests */
            f->comps[c].shape[0] = shape_of(a, cp->vertex_count);
            f->comps[c].shape[1] = shape_of(b, cp->vertex_count);
        }
        int like = 0;
        if (m) {
            shape_frame s0 = shape_of(a, cp->vertex_count);
            if (same_shape(f->lx0 + 3 * m->offset, &m->shape[0], a, &s0, cp->vertex_count)) {
                shape_frame s1 = shape_of(b, cp->vertex_count);
                like = same_shape(f->lx1 + 3 * m->offset, &m->shape[1], b, &s1, cp->vertex_count);
            }
        }
        if (like) {
            st = hy_bvh_build_like(cp->bvh, m->bvh, a, b, f->def.thickness, pool);
            copy = 1;
        } else {
            st = hy_bvh_build(cp->bvh, a, b, f->def.thickness, pool);
        }
        r = 1;
    } else {
        st = hy_bvh_update(cp->bvh, a, b, f->def.thickness, f->def.max_decay, pool, &r);
    }
    f->comps[c].rebuilt = r;
    f->comps[c].instanced = copy;
    f->comps[c].status = st;
    if (r && rebuilt) *rebuilt = 1;
    return st;
}

typedef struct update_ctx {
    hy_frames* f;
    const double *x0, *x1;
    int building, phase;
} update_ctx;

/* Pass 1 of a build holds the pieces that may take an earlier one's tree;
 * pass 0 every other piece (and every piece when refitting). */
static int in_pass(const update_ctx* u, int32_t c) {
    return (u->building && copy_of(u->f, c) != NULL) == u->phase;
}

static void update_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    update_ctx* u = vctx;
    for (int64_t c = begin; c < end; c++) {
        if (u->f->comps[c].bvh->triangle_count >= SMALL_COMPONENT || !in_pass(u, (int32_t)c)) continue;
        update_one(u->f, (int32_t)c, u->x0, u->x1, NULL, NULL);
    }
}

void hy_frames_invalidate(hy_frames* f) {
    if (f) f->built = 0;
}

hy_status hy_frames_run(hy_frames* f, const double* x0, const double* x1, hy_pool* pool, hy_frames_stats* stats) {
    hy_frames_stats s;
    memset(&s, 0, sizeof s);
    if (stats) *stats = s;
    if (!f || !x0 || !x1) return hy_fail(HY_ERR_INVALID_ARG, "frames run: NULL argument");
    f->found_count = 0;
    double t0 = now_ms();
    s.rebuilt = 0;

    /* BVHs: build, or refit and rebuild when decayed. Large components one
     * at a time with the pool inside; small ones many at a time. */
    update_ctx uc = {f, x0, x1, f->def.force_build || !f->built, 0};
    int passes = uc.building && f->def.instance && f->copies > 0 ? 2 : 1;
    for (uc.phase = 0; uc.phase < passes; uc.phase++) {
        for (int32_t c = 0; c < f->comp_count; c++)
            if (f->comps[c].bvh->triangle_count >= SMALL_COMPONENT && in_pass(&uc, c)) {
                hy_status st = update_one(f, c, x0, x1, pool, &s.rebuilt);
                if (st != HY_OK) return st;
            }
        if (pool)
            hy_pool_for(pool, f->comp_count, 8, update_block, &uc);
        else
            update_block(&uc, 0, f->comp_count, 0, 0);
        /* The failing block's message is on its own thread: say it again. */
        for (int32_t c = 0; c < f->comp_count; c++)
            if (in_pass(&uc, c) && f->comps[c].status != HY_OK)
                return hy_fail(f->comps[c].status, "frames: component %d: BVH build failed (%s)", c,
                               hy_status_name(f->comps[c].status));
    }
    for (int32_t c = 0; c < f->comp_count; c++) {
        if (f->comps[c].rebuilt) s.rebuilt = 1;
        s.instanced += f->comps[c].instanced;
        double q = hy_bvh_quality(f->comps[c].bvh);
        if (q > s.bvh_quality) s.bvh_quality = q;
    }
    f->built = 1;
    double t1 = now_ms();

    /* Jobs: every component against itself, then every pair of components
     * whose swept boxes meet (in index order: deterministic). */
    int64_t nc = f->comp_count, nj = 0;
    for (int32_t c = 0; c < nc; c++) hy_bvh_world_box(f->comps[c].bvh, &f->world[c]);
    for (int32_t a = 0; a < nc; a++) {
        if (!grow((void**)&f->jobs, &f->job_cap, nj + nc + 1, sizeof *f->jobs))
            return hy_fail(HY_ERR_NOMEM, "frames: out of memory");
        f->jobs[nj++] = (hy_traverse_job){f->comps[a].bvh, NULL};
    }
    for (int32_t a = 0; a < nc; a++)
        for (int32_t b = a + 1; b < nc; b++) {
            if (!hy_aabb_overlap(&f->world[a], &f->world[b])) continue;
            if (!grow((void**)&f->jobs, &f->job_cap, nj + 1, sizeof *f->jobs))
                return hy_fail(HY_ERR_NOMEM, "frames: out of memory");
            f->jobs[nj++] = (hy_traverse_job){f->comps[a].bvh, f->comps[b].bvh};
        }
    f->joined = 0;
    f->nsegs = 0;
    hy_status st = hy_bvh_traverse_jobs_segments(f->trav, f->jobs, (int32_t)nj, pool, &f->cand);
    if (st != HY_OK) return st;
    f->nsegs = hy_traverse_segments(f->trav, &f->segs);
    s.jobs = nj;
    double t2 = now_ms();

    /* Filters and exact tests. */
    int64_t n = f->cand.count;
    int64_t blocks = hy_pool_blocks(n, EXACT_GRAIN);
    if (!grow((void**)&f->flags, &f->flags_cap, n, 1) ||
        !grow((void**)&f->hit_at, &f->hit_cap, n, sizeof(uint16_t)) ||
        !grow((void**)&f->block_counts, &f->block_cap, 4 * blocks, sizeof(int64_t)))
        return hy_fail(HY_ERR_NOMEM, "frames: out of memory for %lld candidates", (long long)n);
    exact_ctx ec = {f, x0, x1, 1};
    if (pool)
        hy_pool_for(pool, f->vertex_count, PACK_GRAIN, pack_block, &ec);
    else
        pack_block(&ec, 0, f->vertex_count, 0, 0);
    if (pool)
        hy_pool_for(pool, n, EXACT_GRAIN, exact_block, &ec);
    else
        for (int64_t b = 0; b < blocks; b++)
            exact_block(&ec, b * EXACT_GRAIN, block_end(b, n), b, 0);
    /* Found pairs in candidate order: each block's count becomes its first
     * slot, then the blocks copy theirs in parallel. */
    int64_t found = 0;
    for (int64_t b = 0; b < blocks; b++) {
        int64_t* bc = f->block_counts + 4 * b;
        s.vf_exact += bc[0];
        s.ee_exact += bc[1];
        s.ee_found += bc[2];
        int64_t h = bc[3];
        bc[3] = found;
        found += h;
    }
    s.vf_found = found - s.ee_found;
    if (!grow((void**)&f->found, &f->found_cap, found, sizeof *f->found))
        return hy_fail(HY_ERR_NOMEM, "frames: out of memory for %lld collisions", (long long)found);
    f->found_count = found; /* (found_block reads it) */
    if (pool)
        hy_pool_for(pool, blocks, 8, found_block, &ec);
    else
        found_block(&ec, 0, blocks, 0, 0);
    double t3 = now_ms();

    s.candidates = n;
    s.vf_candidates = f->cand.vf;
    s.ee_candidates = f->cand.ee;
    s.exact_tests = s.vf_exact + s.ee_exact;
    s.triangle_pairs = f->cand.triangle_pairs;
    s.node_pairs = f->cand.node_pairs;
    s.front = f->cand.front;
    s.components = f->comp_count;
    s.ms_bvh = t1 - t0;
    s.ms_traverse = t2 - t1;
    s.ms_exact = t3 - t2;
    s.ms_total = t3 - t0;
    if (stats) *stats = s;
    return HY_OK;
}

/* Classes of hy_frames_profile, per candidate. */
enum { CLASS_COPLANAR = 0, CLASS_SAT = 1, CLASS_SLABS = 2, CLASS_MISS = 3, CLASS_HIT = 4 };

/* The candidates whose class is in [lo, hi], in candidate order; returns
 * how many. */
static int64_t select_classes(const uint8_t* cls, int64_t n, int lo, int hi, int64_t* idx) {
    int64_t m = 0;
    for (int64_t i = 0; i < n; i++)
        if (cls[i] >= lo && cls[i] <= hi) idx[m++] = i;
    return m;
}

/* One timed stage of hy_frames_profile over candidates idx[0..m): the
 * separating axes (CLASS_SAT, with the step's running hint), the parts'
 * axes (CLASS_SLABS) or the exact test (CLASS_MISS, CLASS_HIT); the answers
 * are summed into *sink. Returns the ms. */
static double timed_pass(int stage, const hy_feature_pair* pairs, const int64_t* idx, int64_t m, const double* xx,
                         double md, int64_t* sink) {
    int hint = 0;
    int64_t s = 0;
    double t0 = now_ms();
    for (int64_t q = 0; q < m; q++) {
        const hy_feature_pair* p = &pairs[idx[q]];
        int is_vf = p->kind != HY_FEATURE_EE;
        const double *a[4], *b[4];
        gather(p, xx, a, b);
        s += stage == CLASS_SAT     ? hy_filter_sat_hint(is_vf, a, b, md, &hint)
             : stage == CLASS_SLABS ? hy_filter_slabs(is_vf, a, b, md)
                                    : exact_one(p, a, b, md);
    }
    *sink += s;
    return now_ms() - t0;
}

hy_status hy_frames_profile(hy_frames* f, const double* x0, const double* x1, hy_frames_breakdown* out) {
    if (!f || !x0 || !x1 || !out) return hy_fail(HY_ERR_INVALID_ARG, "frames profile: NULL argument");
    memset(out, 0, sizeof *out);
    if (!hy_frames_candidates(f)) return hy_fail(HY_ERR_NOMEM, "frames profile: out of memory for the candidates");
    int64_t n = f->cand.count;
    const hy_feature_pair* pairs = f->cand.pairs;
    uint8_t* cls = malloc(n > 0 ? (size_t)n : 1);
    int64_t* idx = calloc((size_t)(n > 0 ? n : 1), sizeof(int64_t)); /* zeroed: GCC cannot see select_classes fill it before timed_pass reads */
    double* xx = aligned_alloc(64, sizeof(double) * HY_FILTER_PACK * (size_t)f->vertex_count);
    if (!cls || !idx || !xx) {
        free(cls);
        free(idx);
        free(xx);
        return hy_fail(HY_ERR_NOMEM, "frames profile: out of memory for %lld candidates", (long long)n);
    }
    /* Classes: the run's flags say which pairs the exact test saw and what
     * it answered; only the filters' share is worked out here (all of it
     * when the run had no filters). */
    int in_range = hy_filter_pack(x0, x1, 0, f->vertex_count, xx);
    double md = f->def.thickness;
    int hint = 0;
    int64_t* counts[5] = {out->coplanar_culled, out->sat_culled, out->slab_culled, out->exact_miss, out->exact_hit};
    for (int64_t i = 0; i < n; i++) {
        int is_vf = pairs[i].kind != HY_FEATURE_EE;
        int c = f->flags[i] & 2 ? CLASS_HIT : CLASS_MISS;
        if (!(f->flags[i] & 1) || !f->def.use_filters) {
            const double *a[4], *b[4];
            gather(&pairs[i], xx, a, b);
            if (!hy_filter_coplanar(a, b, md))
                c = CLASS_COPLANAR;
            else if (!hy_filter_sat_hint(is_vf, a, b, md, &hint))
                c = CLASS_SAT;
            else if (!hy_filter_slabs(is_vf, a, b, md))
                c = CLASS_SLABS;
        }
        cls[i] = (uint8_t)c;
        counts[c][!is_vf]++;
    }
    /* Timed passes, one per stage, in candidate order over what that
     * stage sees (coplanarity: every candidate; separating axes: the
     * coplanarity filter's survivors; the parts' axes: theirs; the exact
     * test: its misses, then its hits), so that each keeps the step's memory order: consecutive
     * candidates share vertices, and grouping them by class instead
     * measured up to twice the time. The index lists are made untimed;
     * the sink keeps the calls from being optimised away. */
    volatile int64_t sink = 0;
    int64_t s = 0;
    double t0 = now_ms();
    for (int64_t i = 0; i < n; i++) {
        const double *a[4], *b[4];
        gather(&pairs[i], xx, a, b);
        s += hy_filter_coplanar(a, b, md);
    }
    out->ms_coplanar = now_ms() - t0;
    int64_t m = select_classes(cls, n, CLASS_SAT, CLASS_HIT, idx);
    out->ms_sat = timed_pass(CLASS_SAT, pairs, idx, m, xx, md, &s);
    m = select_classes(cls, n, CLASS_SLABS, CLASS_HIT, idx);
    out->ms_slabs = timed_pass(CLASS_SLABS, pairs, idx, m, xx, md, &s);
    m = select_classes(cls, n, CLASS_MISS, CLASS_MISS, idx);
    out->ms_exact_miss = timed_pass(CLASS_MISS, pairs, idx, m, xx, md, &s);
    m = select_classes(cls, n, CLASS_HIT, CLASS_HIT, idx);
    out->ms_exact_hit = timed_pass(CLASS_HIT, pairs, idx, m, xx, md, &s);
    /* The filters as the step runs them, into the class array (unused
     * from here on). */
    t0 = now_ms();
    hy_filter_pairs(pairs, n, xx, in_range, md, cls);
    out->ms_filters = now_ms() - t0;
    sink += s;
    (void)sink;
    free(xx);
    free(idx);
    free(cls);
    return HY_OK;
}

const hy_feature_pair* hy_frames_found(const hy_frames* f, int64_t* count) {
    if (count) *count = f ? f->found_count : 0;
    return f ? f->found : NULL;
}

const hy_candidates* hy_frames_candidates(hy_frames* f) {
    if (!f) return NULL;
    if (!f->joined) {
        if (hy_traverse_join(f->trav, NULL, &f->cand) != HY_OK) return NULL;
        f->joined = 1;
    }
    return &f->cand;
}

int32_t hy_frames_components(const hy_frames* f) { return f ? f->comp_count : 0; }

const hy_bvh* hy_frames_bvh(const hy_frames* f, int32_t c) {
    return f && c >= 0 && c < f->comp_count ? f->comps[c].bvh : NULL;
}
