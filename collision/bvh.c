/* BVH over swept triangle boxes: binned-SAH top-down build, bottom-up refit,
 * feature ownership.
 *
 * Build: the top of the tree is split breadth first (the ranges of one
 * round in parallel), until there are SUBTREE_TASKS open ranges (or nothing
 * left to split); the subtrees are
 * then built independently (in parallel on the pool) into private node
 * arrays and spliced in task order. The split rule never looks at the thread
 * count, so the tree is the same for any pool.
 *
 * The build partitions an array of records (a float box rounded outward,
 * and an id: 32 bytes) in place, so every pass reads memory in sequence; a range's box and centroid bounds
 * come from its parent's bins (no pass of their own); the large ranges at
 * the top are binned in fixed chunks on the pool (min, max and counts merge
 * exactly in any order); ranges of up to SMALL_RANGE triangles are sorted
 * and every split tried instead of binned. Refit and build end with one
 * bottom-up sweep run per subtree in parallel (boxes, gates, and the
 * normal cones when culling), then, when culling, the top-down marking of
 * self-free nodes (hy_bvh_mark_self_free). */
#include "collision/bvh.h"

#include <float.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "collision/bvh_internal.h"

/* ---- create / destroy, ownership */

typedef struct edge_rec {
    int32_t a, b; /* a < b */
    int32_t tri;
    int32_t k;
} edge_rec;

static int cmp_edge(const void* x, const void* y) {
    const edge_rec* p = x;
    const edge_rec* q = y;
    if (p->a != q->a) return p->a < q->a ? -1 : 1;
    if (p->b != q->b) return p->b < q->b ? -1 : 1;
    if (p->tri != q->tri) return p->tri < q->tri ? -1 : 1;
    return (p->k > q->k) - (p->k < q->k);
}

/* hy_bvh.version: every change takes the next number */
static _Atomic uint64_t g_bvh_version;
void hy_bvh_touch(hy_bvh* b) {
    b->version = atomic_fetch_add(&g_bvh_version, 1) + 1;
    b->all_at = b->version;
}

hy_status hy_bvh_create(const int32_t* triangles, int32_t triangle_count, int32_t vertex_count, hy_bvh** out) {
    *out = NULL;
    if (!triangles || triangle_count < 1 || vertex_count < 3)
        return hy_fail(HY_ERR_INVALID_ARG, "bvh: needs >= 1 triangle and >= 3 vertices, got %d and %d",
                       triangle_count, vertex_count);
    for (int32_t t = 0; t < triangle_count; t++) {
        const int32_t* f = triangles + 3 * t;
        for (int k = 0; k < 3; k++)
            if (f[k] < 0 || f[k] >= vertex_count)
                return hy_fail(HY_ERR_INVALID_ARG, "bvh: triangle %d index %d out of range [0, %d)", t, f[k],
                               vertex_count);
        if (f[0] == f[1] || f[1] == f[2] || f[0] == f[2])
            return hy_fail(HY_ERR_INVALID_ARG, "bvh: triangle %d repeats a vertex (%d %d %d)", t, f[0], f[1], f[2]);
    }
    hy_bvh* b = calloc(1, sizeof *b);
    if (!b) return hy_fail(HY_ERR_NOMEM, "bvh: out of memory");
    size_t nt = (size_t)triangle_count, nv = (size_t)vertex_count;
    b->vertex_count = vertex_count;
    b->triangle_count = triangle_count;
    b->leaf_size = LEAF_SIZE;
    b->triangles = malloc(sizeof(int32_t) * 3 * nt);
    b->owned = calloc(nt, 1);
    b->nodes = malloc(sizeof(hy_bvh_node) * (2 * nt));
    b->order = malloc(sizeof(int32_t) * nt);
    b->vertex_boxes = malloc(sizeof(hy_aabb) * nv);
    b->triangle_boxes = malloc(sizeof(hy_aabb) * nt);
    b->twin = malloc(sizeof(int32_t) * 3 * nt);
    b->rank = malloc(sizeof(int32_t) * nt);
    b->range = malloc(sizeof(int32_t) * 4 * nt);
    b->cones = malloc(sizeof(hy_bvh_cone) * 2 * nt);
    b->triangle_normals = malloc(sizeof(hy_bvh_normals) * nt);
    b->self_free = calloc(2 * nt, 1);
    b->self_cull = 1; /* see hy_bvh.self_cull */
    b->vertex_mboxes = malloc(sizeof(hy_mbox) * nv);
    b->slots = malloc(sizeof(hy_bvh_slot) * nt);
    b->slot_twin = malloc(sizeof(int32_t) * 3 * nt);
    b->node_fboxes = malloc(sizeof(hy_fbox) * 2 * nt);
    b->leaf_fboxes = malloc(sizeof(hy_fbox) * nt);
    b->leaf_soa_stride = ((int64_t)nt + 8 + 7) & ~(int64_t)7;
    b->leaf_soa = calloc((size_t)(12 * b->leaf_soa_stride), sizeof(float));
    b->vertex_fboxes = malloc(sizeof(hy_fbox) * nv);
    b->node_area = malloc(sizeof(double) * 2 * nt);
    b->spans = malloc(sizeof *b->spans * 2 * nt);
    b->interpolate = 1;
    edge_rec* edges = malloc(sizeof(edge_rec) * 3 * nt);
    uint8_t* seen = calloc(nv, 1);
    if (!b->triangles || !b->owned || !b->nodes || !b->order || !b->vertex_boxes || !b->triangle_boxes || !edges ||
        !seen || !b->twin || !b->rank || !b->range || !b->cones || !b->triangle_normals ||
        !b->self_free || !b->vertex_mboxes || !b->slots || !b->slot_twin || !b->node_fboxes || !b->leaf_fboxes || !b->leaf_soa || !b->vertex_fboxes || !b->node_area || !b->spans) {
        free(edges);
        free(seen);
        hy_bvh_destroy(b);
        return hy_fail(HY_ERR_NOMEM, "bvh: out of memory for %d triangles", triangle_count);
    }
    memcpy(b->triangles, triangles, sizeof(int32_t) * 3 * nt);

    /* A vertex belongs to the first triangle that uses it; an edge to the
     * first of the triangles sharing it (sort groups them). */
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++) {
            int32_t v = triangles[3 * t + k];
            if (!seen[v]) {
                seen[v] = 1;
                b->owned[t] |= (uint8_t)HY_BVH_OWN_VERTEX(k);
            }
            int32_t a = v, c = triangles[3 * t + (k + 1) % 3];
            edge_rec* e = &edges[3 * t + (size_t)k];
            e->a = a < c ? a : c;
            e->b = a < c ? c : a;
            e->tri = (int32_t)t;
            e->k = k;
        }
    qsort(edges, 3 * nt, sizeof *edges, cmp_edge);
    /* Each edge is owned by the first triangle of its group (the sort
     * groups the triangles sharing it). Twins, for the contour test of
     * self-collision culling: an edge of two triangles that run it in
     * opposite directions links them; a boundary edge has none (-1); an
     * edge of three or more triangles, or of two that run it the same way,
     * is marked -2 (no patch containing it is culled). */
    for (size_t i = 0; i < 3 * nt;) {
        size_t j = i + 1;
        while (j < 3 * nt && edges[j].a == edges[i].a && edges[j].b == edges[i].b) j++;
        b->owned[edges[i].tri] |= (uint8_t)HY_BVH_OWN_EDGE(edges[i].k);
        const edge_rec* e0 = &edges[i];
        size_t s0 = 3 * (size_t)e0->tri + (size_t)e0->k;
        if (j - i == 1) {
            b->twin[s0] = -1;
        } else if (j - i == 2) {
            const edge_rec* e1 = &edges[i + 1];
            size_t s1 = 3 * (size_t)e1->tri + (size_t)e1->k;
            /* opposite directions: the edges start at different vertices */
            int opposite = triangles[s0] != triangles[s1];
            b->twin[s0] = opposite ? e1->tri : -2;
            b->twin[s1] = opposite ? e0->tri : -2;
        } else {
            for (size_t q = i; q < j; q++) b->twin[3 * (size_t)edges[q].tri + (size_t)edges[q].k] = -2;
        }
        i = j;
    }
    free(edges);
    free(seen);
    size_t owned_features = 0;
    for (size_t t = 0; t < nt; t++)
        for (int k = 0; k < 3; k++)
            owned_features += ((b->owned[t] & HY_BVH_OWN_EDGE(k)) != 0) + ((b->owned[t] & HY_BVH_OWN_VERTEX(k)) != 0);
    b->feature_count = (int32_t)owned_features;
    b->feature_fboxes = malloc(sizeof(hy_fbox) * (owned_features ? owned_features : 1));
    if (!b->feature_fboxes) {
        hy_bvh_destroy(b);
        return hy_fail(HY_ERR_NOMEM, "bvh: out of memory for %d triangles", triangle_count);
    }
    hy_bvh_touch(b);
    *out = b;
    return HY_OK;
}

void hy_bvh_destroy(hy_bvh* b) {
    if (!b) return;
    free(b->triangles);
    free(b->owned);
    free(b->nodes);
    free(b->order);
    free(b->vertex_boxes);
    free(b->triangle_boxes);
    free(b->twin);
    free(b->rank);
    free(b->range);
    free(b->cones);
    free(b->triangle_normals);
    free(b->self_free);
    free(b->vertex_mboxes);
    free(b->slots);
    free(b->slot_twin);
    free(b->feature_fboxes);
    free(b->vertex_fboxes);
    free(b->node_fboxes);
    free(b->leaf_fboxes);
    free(b->leaf_soa);
    free(b->node_area);
    free(b->spans);
    free(b->vertex_ids);
    free(b->vertex_tri_start);
    free(b->vertex_tri);
    free(b->node_parent);
    free(b->slot_leaf);
    free(b->cull_test);
    free(b->node_dirty);
    free(b->tri_dirty);
    free(b->dirty_nodes);
    free(b->dirty_tris);
    free(b->node_moved);
    free(b);
}

hy_status hy_bvh_set_vertex_ids(hy_bvh* b, const int32_t* ids) {
    if (!b) return hy_fail(HY_ERR_INVALID_ARG, "bvh: NULL");
    hy_bvh_touch(b);
    if (!ids) {
        free(b->vertex_ids);
        b->vertex_ids = NULL;
        if (b->node_count > 0) hy_bvh_make_slots(b, NULL);
        return HY_OK;
    }
    int32_t* c = b->vertex_ids ? b->vertex_ids : malloc(sizeof(int32_t) * (size_t)b->vertex_count);
    if (!c) return hy_fail(HY_ERR_NOMEM, "bvh: out of memory");
    memcpy(c, ids, sizeof(int32_t) * (size_t)b->vertex_count);
    b->vertex_ids = c;
    if (b->node_count > 0) hy_bvh_make_slots(b, NULL);
    return HY_OK;
}
