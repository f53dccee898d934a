/* Snapshots: the world's changing state to and from a block of memory
 * (hy_world_snapshot, hy_world_restore).
 *
 * Layout, native byte order (a snapshot is for this build, not a file
 * format): a header (magic, version, counts, clock), then per live object
 * its id, kind and vertex count, positions and velocities, then what its
 * kind keeps besides (the kinds table's snap_save, engine/kinds.h): for a
 * body its rigid state, rest window, sleep, kinematic flag and pending
 * forces, for a cloth the rigid features its vertices rest on, for a solid
 * the vertices the next step holds on obstacles; then one broken flag per
 * bond and the touching pairs, then the contact pairs between solids
 * that the next step's coupled solve reads (engine/links.h). What objects exist
 * and what they are (meshes, masses, springs) is the world's and is not
 * written: a restore checks the ids, kinds and sizes instead. The cloth
 * solve keeps nothing else from one step to the next (CG starts from
 * zero), nor does collision detection beyond what it makes again from the
 * positions, so these fields are the whole state a step reads. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "collision/collide.h"
#include "core/error.h"
#include "engine/kinds.h"
#include "engine/links.h"

#define SNAP_MAGIC 0x4e535948u /* "HYSN" */
#define SNAP_VERSION 4u

typedef struct snap_header {
    uint32_t magic, version;
    int32_t object_count, bond_count;
    int64_t touching_count;
    double time;
    int64_t step_index;
} snap_header;

typedef struct snap_object {
    uint32_t handle, generation;
    int32_t kind, nv;
} snap_object;

void hy_snap_put(hy_snap_cursor* c, const void* p, size_t n) {
    if (c->out && n > 0) memcpy(c->out + c->at, p, n); /* p may be NULL when n is 0 */
    c->at += n;
}

int hy_snap_get(hy_snap_cursor* c, void* p, size_t n) {
    if (n > c->size - c->at) return 0;
    if (n > 0) memcpy(p, c->in + c->at, n);
    c->at += n;
    return 1;
}

int hy_snap_skip(hy_snap_cursor* c, size_t n) {
    if (n > c->size - c->at) return 0;
    c->at += n;
    return 1;
}

static void write_all(const hy_world* w, hy_snap_cursor* c) {
    snap_header h;
    memset(&h, 0, sizeof h);
    h.magic = SNAP_MAGIC;
    h.version = SNAP_VERSION;
    h.object_count = w->object_count;
    h.bond_count = w->bonds.count;
    h.touching_count = w->touching_count;
    h.time = w->time;
    h.step_index = w->step_index;
    hy_snap_put(c, &h, sizeof h);
    for (int32_t i = 0; i < w->object_count; i++) {
        const hy_object* o = &w->objects[i];
        snap_object so = {o->handle, o->generation, (int32_t)o->model.kind, o->model.nv};
        hy_snap_put(c, &so, sizeof so);
        hy_snap_put(c, o->state->x, sizeof(double) * 3 * (size_t)o->model.nv);
        hy_snap_put(c, o->state->v, sizeof(double) * 3 * (size_t)o->model.nv);
        if (o->ops->snap_save) o->ops->snap_save(o, c);
    }
    for (int32_t k = 0; k < w->bonds.count; k++) {
        unsigned char broken = (unsigned char)(w->bonds.bonds[k].broken != 0);
        hy_snap_put(c, &broken, 1);
    }
    hy_snap_put(c, w->touching, sizeof *w->touching * (size_t)w->touching_count);
    size_t n = hy_links_snapshot_size(w);
    if (c->out) hy_links_snapshot_write(w, c->out + c->at);
    c->at += n;
}

HY_API hy_status hy_world_snapshot_size(const hy_world* w, size_t* out) {
    if (!w || !out) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_snapshot_size: NULL argument");
    hy_snap_cursor c = {NULL, NULL, 0, 0};
    write_all(w, &c);
    *out = c.at;
    return HY_OK;
}

HY_API hy_status hy_world_snapshot(const hy_world* w, void* buffer, size_t capacity, size_t* written) {
    if (!w || !buffer) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_snapshot: NULL argument");
    size_t need;
    hy_world_snapshot_size(w, &need);
    if (capacity < need)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_world_snapshot: the buffer holds %zu bytes, the snapshot needs %zu",
                       capacity, need);
    hy_snap_cursor c = {buffer, NULL, 0, capacity};
    write_all(w, &c);
    if (written) *written = c.at;
    return HY_OK;
}

/* Check the whole snapshot against the world before anything changes. */
static hy_status check(const hy_world* w, const void* buffer, size_t size, snap_header* h, size_t* links_at) {
    hy_snap_cursor c = {NULL, buffer, 0, size};
    if (!hy_snap_get(&c, h, sizeof *h) || h->magic != SNAP_MAGIC)
        return hy_fail(HY_ERR_PARSE, "hy_world_restore: not a hyphys snapshot (%zu bytes)", size);
    if (h->version != SNAP_VERSION)
        return hy_fail(HY_ERR_PARSE, "hy_world_restore: snapshot version %u, this build reads %u", h->version,
                       SNAP_VERSION);
    if (h->object_count != w->object_count)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_world_restore: the snapshot has %d objects, the world %d",
                       h->object_count, w->object_count);
    if (h->bond_count != w->bonds.count)
        return hy_fail(HY_ERR_INVALID_ARG, "hy_world_restore: the snapshot has %d bonds, the world %d", h->bond_count,
                       w->bonds.count);
    for (int32_t i = 0; i < w->object_count; i++) {
        const hy_object* o = &w->objects[i];
        snap_object so;
        if (!hy_snap_get(&c, &so, sizeof so)) return hy_fail(HY_ERR_PARSE, "hy_world_restore: snapshot truncated");
        if (so.handle != o->handle || so.generation != o->generation || so.kind != (int32_t)o->model.kind ||
            so.nv != o->model.nv)
            return hy_fail(HY_ERR_INVALID_ARG,
                           "hy_world_restore: object %d of the snapshot is id {%u, %u} (%d vertices), the world's is "
                           "'%s' id {%u, %u} (%d vertices)",
                           i, so.handle, so.generation, so.nv, o->name, o->handle, o->generation, o->model.nv);
        if (!hy_snap_skip(&c, sizeof(double) * 6 * (size_t)o->model.nv) ||
            (o->ops->snap_check && !o->ops->snap_check(o, &c)))
            return hy_fail(HY_ERR_PARSE, "hy_world_restore: snapshot truncated or damaged at object '%s'", o->name);
    }
    if (h->touching_count < 0 || !hy_snap_skip(&c, (size_t)h->bond_count) ||
        !hy_snap_skip(&c, sizeof(hy_contact_pair) * (size_t)h->touching_count))
        return hy_fail(HY_ERR_PARSE, "hy_world_restore: snapshot truncated");
    size_t links = 0;
    *links_at = c.at;
    hy_status s = hy_links_snapshot_check(w, c.in + c.at, size - c.at, &links);
    if (s) return s;
    c.at += links;
    if (c.at != size)
        return hy_fail(HY_ERR_PARSE, "hy_world_restore: %zu bytes after the snapshot's end", size - c.at);
    return HY_OK;
}

HY_API hy_status hy_world_restore(hy_world* w, const void* buffer, size_t size) {
    if (!w || !buffer) return hy_fail(HY_ERR_INVALID_ARG, "hy_world_restore: NULL argument");
    snap_header h;
    size_t links_at = 0;
    hy_status s = check(w, buffer, size, &h, &links_at);
    if (s) return s;
    if (h.touching_count > w->touching_capacity) {
        hy_contact_pair* t = realloc(w->touching, sizeof *t * (size_t)h.touching_count);
        if (!t) return hy_fail(HY_ERR_NOMEM, "hy_world_restore: out of memory");
        w->touching = t;
        w->touching_capacity = h.touching_count;
    }
    for (int32_t i = 0; i < w->object_count; i++)
        if (w->objects[i].ops->snap_prepare && (s = w->objects[i].ops->snap_prepare(&w->objects[i])) != HY_OK)
            return s;
    hy_snap_cursor c = {NULL, buffer, sizeof h, size};
    s = hy_links_snapshot_read(w, (const unsigned char*)buffer + links_at);
    if (s) return s;
    w->time = h.time;
    w->step_index = h.step_index;
    for (int32_t i = 0; i < w->object_count; i++) {
        hy_object* o = &w->objects[i];
        snap_object so;
        hy_snap_get(&c, &so, sizeof so);
        hy_snap_get(&c, o->state->x, sizeof(double) * 3 * (size_t)o->model.nv);
        hy_snap_get(&c, o->state->v, sizeof(double) * 3 * (size_t)o->model.nv);
        memcpy(o->state->x1, o->state->x, sizeof(double) * 3 * (size_t)o->model.nv);
        memcpy(o->state->v1, o->state->v, sizeof(double) * 3 * (size_t)o->model.nv);
        if (o->ops->snap_load) o->ops->snap_load(o, &c);
    }
    int32_t intact = 0;
    for (int32_t k = 0; k < w->bonds.count; k++) {
        unsigned char broken = 0;
        hy_snap_get(&c, &broken, 1);
        w->bonds.bonds[k].broken = broken;
        intact += !broken;
    }
    w->bonds.intact = intact;
    w->bonds.indexed = -1; /* the bonds' index by object is made again */
    hy_snap_get(&c, w->touching, sizeof *w->touching * (size_t)h.touching_count);
    w->touching_count = h.touching_count;
    w->begin_count = w->end_count = 0;
    w->last_contact_count = 0;
    return HY_OK;
}
