#include "collision/front_memo.h"

#include <stdlib.h>
#include <string.h>

#include "collision/traverse_hd.h"
#include "core/error.h"

typedef struct entry {
    int32_t lo, hi, a, b;       /* object slots and node indices */
    int64_t build_lo, build_hi; /* the trees' build numbers */
    int32_t round;              /* the round that answered it */
    int32_t job;                /* this round's traversal job (kept pairs) */
    int64_t candidates, exact;
    int64_t first, count;       /* contacts */
} entry;

typedef struct table {
    entry* e;
    int64_t n, cap;
    hy_contact* c;
    int64_t nc, ccap;
} table;

/* Per object slot: each node's latest vertex round below it, for the
 * round it was made in. */
typedef struct node_rounds {
    int32_t* r;
    int32_t cap;
    int32_t made; /* the round, 0 = not made */
} node_rounds;

struct hy_front_memo {
    table t[2];
    int cur;           /* t[cur]: what earlier rounds answered, sorted by key */
    int64_t nrun;      /* pairs left to run this round */
    entry* run;        /* their keys, numbered as after select */
    int64_t run_cap;
    int64_t* kept;     /* indices into t[cur] of this round's kept pairs */
    int64_t kept_n, kept_cap;
    unsigned char* keep;
    int64_t keep_cap;
    node_rounds* nr;
    int32_t nr_count;
    int32_t round;
    int valid; /* t[cur] may be read */
    int oom;   /* a record found no memory: this round's answers are not kept */
};

static int grow(void** p, int64_t* cap, int64_t need, size_t size) {
    if (need <= *cap) return 1;
    int64_t c = *cap ? *cap : 256;
    while (c < need) c *= 2;
    void* q = realloc(*p, (size_t)c * size);
    if (!q) return 0;
    *p = q;
    *cap = c;
    return 1;
}

hy_front_memo* hy_front_memo_create(void) { return calloc(1, sizeof(hy_front_memo)); }

void hy_front_memo_destroy(hy_front_memo* m) {
    if (!m) return;
    for (int k = 0; k < 2; k++) {
        free(m->t[k].e);
        free(m->t[k].c);
    }
    free(m->run);
    free(m->kept);
    free(m->keep);
    for (int32_t i = 0; i < m->nr_count; i++) free(m->nr[i].r);
    free(m->nr);
    free(m);
}

void hy_front_memo_clear(hy_front_memo* m) {
    for (int k = 0; k < 2; k++) m->t[k].n = m->t[k].nc = 0;
    m->valid = 0;
    for (int32_t i = 0; i < m->nr_count; i++) m->nr[i].made = 0;
}

static int key_cmp(const entry* x, const entry* y) {
    if (x->lo != y->lo) return x->lo < y->lo ? -1 : 1;
    if (x->hi != y->hi) return x->hi < y->hi ? -1 : 1;
    if (x->a != y->a) return x->a < y->a ? -1 : 1;
    if (x->b != y->b) return x->b < y->b ? -1 : 1;
    return 0;
}

static int entry_cmp(const void* x, const void* y) { return key_cmp(x, y); }

/* Node rounds of one tree: a leaf's is the latest round of its triangles'
 * vertices, an inner node's the later of its children's (children follow
 * their parent in the node array). */
static const int32_t* rounds_of(hy_front_memo* m, int32_t slot, const hy_bvh* b, const int32_t* vertex_round) {
    if (slot >= m->nr_count) {
        node_rounds* p = realloc(m->nr, sizeof *p * (size_t)(slot + 1));
        if (!p) return NULL;
        memset(p + m->nr_count, 0, sizeof *p * (size_t)(slot + 1 - m->nr_count));
        m->nr = p;
        m->nr_count = slot + 1;
    }
    node_rounds* n = &m->nr[slot];
    if (n->made == m->round) return n->r;
    if (n->cap < b->node_count) {
        int32_t* r = realloc(n->r, sizeof *r * (size_t)b->node_count);
        if (!r) return NULL;
        n->r = r;
        n->cap = b->node_count;
    }
    for (int32_t i = b->node_count - 1; i >= 0; i--) {
        const hy_bvh_node* node = &b->nodes[i];
        int32_t r = 0;
        if (node->count) {
            for (int32_t k = node->first; k < node->first + node->count; k++) {
                const int32_t* t = b->triangles + 3 * b->order[k];
                for (int q = 0; q < 3; q++) {
                    int32_t g = b->vertex_ids ? b->vertex_ids[t[q]] : t[q];
                    if (vertex_round[g] > r) r = vertex_round[g];
                }
            }
        } else {
            int32_t x = n->r[node->first], y = n->r[node->first + 1];
            r = x > y ? x : y;
        }
        n->r[i] = r;
    }
    n->made = m->round;
    return n->r;
}

hy_status hy_front_memo_select(hy_front_memo* m, hy_traverser* t, const int32_t* job_lo, const int32_t* job_hi,
                               hy_bvh* const* bvh, const unsigned char* deforms, const int32_t* vertex_round,
                               int32_t round, int64_t* front) {
    const hy_trav_pair* pairs;
    int64_t nf = hy_traverse_front(t, &pairs);
    m->round = round;
    m->kept_n = 0;
    m->nrun = 0;
    m->oom = 0;
    m->t[1 - m->cur].n = m->t[1 - m->cur].nc = 0;
    if (!grow((void**)&m->keep, &m->keep_cap, nf + 1, 1) || !grow((void**)&m->run, &m->run_cap, nf + 1, sizeof *m->run) ||
        !grow((void**)&m->kept, &m->kept_cap, nf + 1, sizeof *m->kept))
        return hy_fail(HY_ERR_NOMEM, "out of memory for the traversal front's memo (%lld pairs)", (long long)nf);
    const table* old = &m->t[m->cur];
    for (int64_t f = 0; f < nf; f++) {
        int32_t j = pairs[f].job;
        int32_t lo = job_lo[j], hi = job_hi[j];
        entry key = {lo, hi, pairs[f].a, pairs[f].b, bvh[lo]->builds, bvh[hi]->builds, round, j, 0, 0, 0, 0};
        int keep = 1;
        if (!(deforms[lo] | deforms[hi])) key.count = -2; /* run, not kept */
        else if (m->valid && old->n > 0) {
            const entry* e = bsearch(&key, old->e, (size_t)old->n, sizeof *old->e, entry_cmp);
            if (e && e->build_lo == key.build_lo && e->build_hi == key.build_hi) {
                const int32_t* ra = rounds_of(m, lo, bvh[lo], vertex_round);
                const int32_t* rb = rounds_of(m, hi, bvh[hi], vertex_round);
                if (ra && rb && ra[key.a] <= e->round && rb[key.b] <= e->round) {
                    keep = 0;
                    m->kept[m->kept_n++] = e - old->e;
                    m->t[m->cur].e[e - old->e].job = j; /* it answers for this round's job j */
                }
            }
        }
        m->keep[f] = (unsigned char)keep;
        if (keep) m->run[m->nrun++] = key;
    }
    *front = m->kept_n ? hy_traverse_keep(t, m->keep) : nf;
    for (int64_t f = 0; f < m->nrun; f++)
        if (m->run[f].count != -2) m->run[f].count = -1; /* to be recorded */
    return HY_OK;
}

hy_status hy_front_memo_record(hy_front_memo* m, int64_t f, int64_t candidates, int64_t exact,
                               const hy_contact* contacts, int64_t count) {
    table* nt = &m->t[1 - m->cur];
    if (f < 0 || f >= m->nrun) return hy_fail(HY_ERR_INTERNAL, "front memo: pair %lld not run", (long long)f);
    if (!grow((void**)&nt->c, &nt->ccap, nt->nc + count + 1, sizeof *nt->c)) {
        m->oom = 1; /* nothing of this round is kept: the next runs every pair */
        return HY_OK;
    }
    entry* e = &m->run[f];
    if (e->count == -2) return HY_OK; /* between rigid objects: not kept */
    e->candidates = candidates;
    e->exact = exact;
    e->first = nt->nc;
    e->count = count;
    if (count > 0) memcpy(nt->c + nt->nc, contacts, sizeof *contacts * (size_t)count);
    nt->nc += count;
    return HY_OK;
}

int64_t hy_front_memo_kept_count(const hy_front_memo* m) { return m->kept_n; }

void hy_front_memo_kept(const hy_front_memo* m, int64_t i, int32_t* job, int64_t* candidates, int64_t* exact,
                        const hy_contact** contacts, int64_t* count) {
    const table* old = &m->t[m->cur];
    const entry* e = &old->e[m->kept[i]];
    *job = e->job;
    *candidates = e->candidates;
    *exact = e->exact;
    *contacts = old->c + e->first;
    *count = e->count;
}

hy_status hy_front_memo_end(hy_front_memo* m) {
    table* old = &m->t[m->cur];
    table* nt = &m->t[1 - m->cur];
    int ok = !m->oom;
    int64_t n = m->nrun + m->kept_n;
    if (ok && !grow((void**)&nt->e, &nt->cap, n + 1, sizeof *nt->e)) ok = 0;
    for (int64_t f = 0; ok && f < m->nrun; f++)
        if (m->run[f].count == -1) ok = 0; /* a run pair was not recorded */
    if (ok) {
        nt->n = 0;
        for (int64_t f = 0; f < m->nrun; f++)
            if (m->run[f].count >= 0) nt->e[nt->n++] = m->run[f];
        for (int64_t i = 0; i < m->kept_n && ok; i++) {
            const entry* e = &old->e[m->kept[i]];
            if (!grow((void**)&nt->c, &nt->ccap, nt->nc + e->count + 1, sizeof *nt->c)) {
                ok = 0;
                break;
            }
            entry d = *e;
            d.first = nt->nc;
            memcpy(nt->c + nt->nc, old->c + e->first, sizeof *nt->c * (size_t)e->count);
            nt->nc += e->count;
            nt->e[nt->n++] = d;
        }
    }
    old->n = old->nc = 0;
    m->cur = 1 - m->cur;
    m->kept_n = 0;
    m->nrun = 0;
    if (!ok) {
        m->t[m->cur].n = m->t[m->cur].nc = 0;
        m->valid = 0;
        return HY_OK;
    }
    qsort(m->t[m->cur].e, (size_t)m->t[m->cur].n, sizeof(entry), entry_cmp);
    m->valid = 1;
    return HY_OK;
}
