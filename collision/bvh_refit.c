/* BVH refit (whole or of the dirty vertices only), its SAH cost decay, and
 * update: refit, or build again when the tree has decayed too far. */
#include "collision/bvh.h"

#include <float.h>
#include <stdatomic.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "collision/bvh_internal.h"

/* ---- refit */

/* One reverse sweep (children sit after parents, so it is bottom-up):
 * node boxes when `boxes`, cones when culling, and the SAH
 * cost. */
/* One node of the sweep; returns its term of the SAH cost sum. */
static double sweep_node(hy_bvh* b, int boxes, int cull, int32_t i) {
    hy_bvh_node* n = &b->nodes[i];
    hy_bvh_cone* cone = &b->cones[i];
    hy_fbox* fb = &b->node_fboxes[i];
    double term;
    if (n->count) {
        const int32_t* ids = b->order + n->first;
        const hy_fbox* lf = b->leaf_fboxes + n->first;
        *fb = lf[0];
        for (int32_t j = 1; j < n->count; j++) hy_fbox_union(fb, fb, &lf[j]);
        if (boxes) {
            n->box = b->triangle_boxes[ids[0]];
            for (int32_t j = 1; j < n->count; j++) hy_aabb_union(&n->box, &n->box, &b->triangle_boxes[ids[j]]);
        }
        if (cull) hy_bvh_leaf_cone(b->triangle_normals + n->first, n->count, cone);
        term = hy_aabb_half_area(&n->box) * (double)n->count;
    } else {
        if (boxes) hy_aabb_union(&n->box, &b->nodes[n->first].box, &b->nodes[n->first + 1].box);
        hy_fbox_union(fb, &b->node_fboxes[n->first], &b->node_fboxes[n->first + 1]);
        if (cull) {
            hy_bvh_cone_merge(&b->cones[n->first], &b->cones[n->first + 1], cone);
            double ga = b->cones[n->first].g, gb = b->cones[n->first + 1].g;
            cone->g = ga < gb ? ga : gb;
        }
        term = hy_aabb_half_area(&n->box);
    }
    b->node_area[i] = hy_aabb_half_area(&n->box);
    return term;
}

typedef struct sweep_ctx {
    hy_bvh* b;
    int boxes, cull;
} sweep_ctx;

/* Subtree s of the build: its nodes bottom-up, then its root; the cost
 * terms summed per subtree. */
static void sweep_block(void* vctx, int64_t begin, int64_t end, int64_t block, int worker) {
    (void)block;
    (void)worker;
    sweep_ctx* c = vctx;
    hy_bvh* b = c->b;
    for (int64_t s = begin; s < end; s++) {
        const int32_t* sub = b->sub + 3 * s;
        double sum = 0;
        for (int32_t i = sub[2] - 1; i >= sub[1]; i--) sum += sweep_node(b, c->boxes, c->cull, i);
        sum += sweep_node(b, c->boxes, c->cull, sub[0]);
        b->sub_cost[s] = sum;
    }
}

/* Reverse sweep (children sit after parents, so it is bottom-up): node
 * boxes when `boxes`, cones when culling, the gates, and the
 * SAH cost. The subtrees of the build run in parallel, then the nodes
 * above them; the cost adds up per subtree in subtree order, then the top,
 * so it does not depend on the pool either. */
void hy_bvh_sweep_nodes(hy_bvh* b, int boxes, hy_pool* pool) {
    sweep_ctx c = {b, boxes, culling(b)};
    if (pool && b->sub_count > 1)
        hy_pool_for(pool, b->sub_count, 1, sweep_block, &c);
    else
        sweep_block(&c, 0, b->sub_count, 0, 0);
    double sum = 0;
    for (int32_t s = 0; s < b->sub_count; s++) sum += b->sub_cost[s];
    for (int32_t i = b->top_count - 1; i >= 0; i--)
        if (!b->top_root[i]) sum += sweep_node(b, boxes, c.cull, i);
    double root = hy_aabb_half_area(&b->nodes[0].box);
    b->cost = root > 0 ? sum / root : (double)b->node_count;
}

void hy_bvh_refit(hy_bvh* b, const double* x0, const double* x1, double thickness, hy_pool* pool) {
    if (!b || !x0 || b->node_count == 0) return;
    hy_bvh_touch(b);
    hy_bvh_primitive_boxes(b, x0, x1, thickness, pool);
    hy_bvh_leaf_data(b, x0, x1, pool);
    hy_bvh_sweep_nodes(b, 1, pool);
    hy_bvh_mark_self_free(b, x0, x1, pool);
    b->refits++;
    b->refitted = 1;
}

/* What hy_bvh_refit_vertices needs beyond the tree: the vertices'
 * triangles (topology: made once), each node's parent and each slot's leaf
 * (made again after a build), the per-node test memo and the scratch.
 * 0 when out of memory. */
static int partial_ready(hy_bvh* b) {
    size_t nt = (size_t)b->triangle_count, nv = (size_t)b->vertex_count, nn = 2 * nt + 1;
    if (!b->vertex_tri) {
        int32_t* start = calloc(nv + 2, sizeof(int32_t));
        int32_t* tri = malloc(sizeof(int32_t) * (3 * nt + 1));
        if (!start || !tri) {
            free(start);
            free(tri);
            return 0;
        }
        for (size_t i = 0; i < 3 * nt; i++) start[b->triangles[i] + 2]++;
        for (size_t v = 0; v < nv; v++) start[v + 2] += start[v + 1];
        for (size_t t = 0; t < nt; t++)
            for (int k = 0; k < 3; k++) tri[start[b->triangles[3 * t + k] + 1]++] = (int32_t)t;
        b->vertex_tri_start = start;
        b->vertex_tri = tri;
    }
    if (!b->node_parent) {
        b->node_parent = malloc(sizeof(int32_t) * nn);
        b->slot_leaf = malloc(sizeof(int32_t) * (nt + 1));
        b->node_dirty = calloc(nn, 1);
        b->tri_dirty = calloc(nt + 1, 1);
        b->dirty_nodes = malloc(sizeof(int32_t) * nn);
        b->dirty_tris = malloc(sizeof(int32_t) * (nt + 1));
        b->node_moved = calloc(nn, sizeof *b->node_moved);
        if (!b->node_parent || !b->slot_leaf || !b->node_dirty || !b->tri_dirty || !b->dirty_nodes ||
            !b->dirty_tris || !b->node_moved) {
            free(b->node_parent);
            free(b->slot_leaf);
            free(b->node_dirty);
            free(b->tri_dirty);
            free(b->dirty_nodes);
            free(b->dirty_tris);
            free(b->node_moved);
            b->node_parent = b->slot_leaf = b->dirty_nodes = b->dirty_tris = NULL;
            b->node_dirty = b->tri_dirty = NULL;
            b->node_moved = NULL;
            return 0;
        }
        b->partial_builds = -1;
    }
    if (b->partial_builds != b->builds) {
        b->node_parent[0] = -1;
        for (int32_t i = 0; i < b->node_count; i++) {
            const hy_bvh_node* n = &b->nodes[i];
            if (n->count)
                for (int32_t j = 0; j < n->count; j++) b->slot_leaf[n->first + j] = i;
            else
                b->node_parent[n->first] = b->node_parent[n->first + 1] = i;
        }
        b->partial_builds = b->builds;
    }
    return 1;
}

void hy_bvh_refit_vertices(hy_bvh* b, const double* x0, const double* x1, double thickness, const int32_t* moved,
                           int32_t count, hy_pool* pool) {
    if (!b || !x0 || b->node_count == 0) return;
    double th = thickness > 0 ? thickness : 0.0;
    int cull = culling(b);
    /* the tests' memo (all 0, "not made", until a marking fills it) */
    if (cull && !b->cull_test) b->cull_test = calloc(2 * (size_t)b->triangle_count + 1, 1);
    /* (a build's node boxes are its own, not a refit's: the first update
     * after it refits them all) */
    if (!b->refitted || b->relative || !x1 || th != b->thickness || !partial_ready(b)) {
        hy_bvh_refit(b, x0, x1, thickness, pool);
        return;
    }
    uint64_t all_at = b->all_at;
    hy_bvh_touch(b);
    b->all_at = all_at; /* only the nodes above the moved vertices move */
    box_ctx c = {b, x0, x1, th > 0 ? 0.5 * th : 0.0, cull};
    box_ctx lc = {b, x0, x1, 0.0, cull};
    int32_t ntri = 0, nnode = 0;
    for (int32_t q = 0; q < count; q++) {
        int32_t v = moved[q];
        if (v < 0 || v >= b->vertex_count) continue;
        hy_bvh_vertex_boxes_block(&c, v, v + 1, 0, 0);
        for (int32_t k = b->vertex_tri_start[v]; k < b->vertex_tri_start[v + 1]; k++) {
            int32_t t = b->vertex_tri[k];
            if (b->tri_dirty[t]) continue;
            b->tri_dirty[t] = 1;
            b->dirty_tris[ntri++] = t;
        }
    }
    for (int32_t q = 0; q < ntri; q++) {
        int32_t t = b->dirty_tris[q], i = b->rank[t];
        hy_bvh_triangle_boxes_block(&c, t, t + 1, 0, 0);
        hy_bvh_leaf_block(&lc, i, i + 1, 0, 0);
        for (int32_t n = b->slot_leaf[i]; n >= 0 && !b->node_dirty[n]; n = b->node_parent[n]) {
            b->node_dirty[n] = 1;
            b->node_moved[n] = b->version;
            b->dirty_nodes[nnode++] = n;
            if (b->cull_test) b->cull_test[n] = 0;
        }
    }
    /* bottom-up: children sit after their parents */
    for (int32_t i = b->node_count - 1, q = 0; q < nnode && i >= 0; i--)
        if (b->node_dirty[i]) {
            sweep_node(b, 1, cull, i);
            q++;
        }
    /* the cost, summed as sweep_nodes sums it (per subtree, then the top)
     * from every node's half area: a subtree none of whose nodes moved
     * keeps its sum */
    double sum = 0;
    for (int32_t s = 0; s < b->sub_count; s++) {
        const int32_t* sub = b->sub + 3 * s;
        if (b->node_dirty[sub[0]]) {
            double ss = 0;
            for (int32_t i = sub[2] - 1; i >= sub[1]; i--)
                ss += b->node_area[i] * (b->nodes[i].count ? (double)b->nodes[i].count : 1.0);
            const hy_bvh_node* r = &b->nodes[sub[0]];
            ss += b->node_area[sub[0]] * (r->count ? (double)r->count : 1.0);
            b->sub_cost[s] = ss;
        }
        sum += b->sub_cost[s];
    }
    for (int32_t i = b->top_count - 1; i >= 0; i--)
        if (!b->top_root[i]) sum += b->node_area[i] * (b->nodes[i].count ? (double)b->nodes[i].count : 1.0);
    double root = hy_aabb_half_area(&b->nodes[0].box);
    b->cost = root > 0 ? sum / root : (double)b->node_count;
    if (cull) {
        memset(b->self_free, 0, (size_t)b->node_count);
        contour_buf cb = {NULL, 0, 0, NULL, 0};
        hy_bvh_mark_below(b, 0, x0, x1, &cb, 0, NULL, NULL, 1);
        free(cb.v);
        free(cb.p);
    }
    for (int32_t q = 0; q < ntri; q++) b->tri_dirty[b->dirty_tris[q]] = 0;
    for (int32_t q = 0; q < nnode; q++) b->node_dirty[b->dirty_nodes[q]] = 0;
    b->refits++;
}

void hy_bvh_world_box(const hy_bvh* b, hy_aabb* out) {
    if (!b->relative) {
        *out = b->nodes[0].box;
        return;
    }
    hy_aabb_sweep(&b->nodes[0].box, b->shift, out);
}

double hy_bvh_quality(const hy_bvh* b) {
    if (!b || b->node_count == 0 || !(b->built_cost > 0)) return INFINITY;
    return b->cost / b->built_cost;
}

hy_status hy_bvh_update(hy_bvh* b, const double* x0, const double* x1, double thickness, double max_decay,
                        hy_pool* pool, int* rebuilt) {
    if (rebuilt) *rebuilt = 0;
    if (!b || !x0) return hy_fail(HY_ERR_INVALID_ARG, "bvh update: NULL argument");
    if (b->node_count > 0) {
        hy_bvh_refit(b, x0, x1, thickness, pool);
        if (hy_bvh_quality(b) <= max_decay) return HY_OK;
    }
    if (rebuilt) *rebuilt = 1;
    return hy_bvh_build(b, x0, x1, thickness, pool);
}
