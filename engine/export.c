#include "engine/export.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "engine/world.h"

static hy_status write_all(FILE* f, const void* p, size_t n, const char* path) {
    if (fwrite(p, 1, n, f) != n) return hy_fail(HY_ERR_IO, "%s: write failed: %s", path, strerror(errno));
    return HY_OK;
}

hy_status hy_export_topology(const hy_world* w, const char* dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/topology.bin", dir);
    FILE* f = fopen(path, "wb");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    hy_status s = write_all(f, "HYTOPO1", 8, path);
    uint32_t head[2] = {1u, (uint32_t)w->object_count};
    if (!s) s = write_all(f, head, sizeof head, path);
    for (int32_t i = 0; !s && i < w->object_count; i++) {
        const hy_object* o = &w->objects[i];
        char name[64];
        memset(name, 0, sizeof name);
        snprintf(name, sizeof name, "%s", o->name);
        uint32_t kind = (uint32_t)o->model.kind, nv = (uint32_t)o->model.nv, nt = (uint32_t)o->model.nt;
        s = write_all(f, &kind, 4, path);
        if (!s) s = write_all(f, name, sizeof name, path);
        if (!s) s = write_all(f, &nv, 4, path);
        if (!s) s = write_all(f, &nt, 4, path);
        if (!s) s = write_all(f, o->model.tri, sizeof(int32_t) * 3 * (size_t)o->model.nt, path);
    }
    if (fclose(f) != 0 && !s) s = hy_fail(HY_ERR_IO, "%s: close failed: %s", path, strerror(errno));
    return s;
}

hy_status hy_export_frame(const hy_world* w, const char* dir, int32_t frame) {
    char path[4096];
    snprintf(path, sizeof path, "%s/frame_%06d.bin", dir, frame);
    FILE* f = fopen(path, "wb");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    uint32_t nv = 0;
    for (int32_t i = 0; i < w->object_count; i++) nv += (uint32_t)w->objects[i].model.nv;
    hy_status s = write_all(f, "HYFRAME", 8, path);
    uint32_t head[2] = {1u, (uint32_t)frame};
    double t = w->time;
    uint32_t tail[2] = {nv, 0};
    if (!s) s = write_all(f, head, sizeof head, path);
    if (!s) s = write_all(f, &t, sizeof t, path);
    if (!s) s = write_all(f, tail, sizeof tail, path);
    for (int32_t i = 0; !s && i < w->object_count; i++)
        s = write_all(f, w->objects[i].state->x, sizeof(double) * 3 * (size_t)w->objects[i].model.nv, path);
    if (fclose(f) != 0 && !s) s = hy_fail(HY_ERR_IO, "%s: close failed: %s", path, strerror(errno));
    return s;
}

/* ---- source.txt */

#define SOURCE_MAGIC "hyphys recording source 1"

hy_status hy_export_source_of(const char* scene_path, const hy_world* w, hy_export_source* out) {
    FILE* f = fopen(scene_path, "rb");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot open: %s", scene_path, strerror(errno));
    uint64_t h = HY_FNV1A_INIT;
    unsigned char buf[65536];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, f)) > 0) h = hy_fnv1a(h, buf, n);
    int bad = ferror(f);
    fclose(f);
    if (bad) return hy_fail(HY_ERR_IO, "%s: read failed", scene_path);
    hy_world_def def;
    if (hy_world_get_def(w, &def)) return hy_fail(HY_ERR_INVALID_ARG, "%s: no world", scene_path);
    out->scene_hash = h;
    hy_status hs = hy_world_hash(w, &out->initial_hash);
    if (hs) return hs;
    out->collisions = def.collisions ? 1 : 0;
    return HY_OK;
}

hy_status hy_export_source_write(const char* dir, const char* scene_path, const hy_export_source* src) {
    char path[4096];
    snprintf(path, sizeof path, "%s/source.txt", dir);
    FILE* f = fopen(path, "w");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot create: %s", path, strerror(errno));
    fprintf(f, "%s\nscene_file %s\nscene_hash %016llx\ninitial_hash %016llx\ncollisions %d\n", SOURCE_MAGIC,
            scene_path, (unsigned long long)src->scene_hash, (unsigned long long)src->initial_hash,
            src->collisions ? 1 : 0);
    if (ferror(f)) {
        fclose(f);
        return hy_fail(HY_ERR_IO, "%s: write failed", path);
    }
    if (fclose(f) != 0) return hy_fail(HY_ERR_IO, "%s: close failed: %s", path, strerror(errno));
    return HY_OK;
}

hy_status hy_export_source_read(const char* dir, hy_export_source* out) {
    char path[4096], line[4200];
    snprintf(path, sizeof path, "%s/source.txt", dir);
    FILE* f = fopen(path, "r");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    int have_scene = 0, have_initial = 0, have_collisions = 0, lineno = 0;
    hy_status s = HY_OK;
    while (!s && fgets(line, sizeof line, f)) {
        lineno++;
        unsigned long long v;
        char tail;
        if (lineno == 1) {
            if (strncmp(line, SOURCE_MAGIC, strlen(SOURCE_MAGIC)) != 0)
                s = hy_fail(HY_ERR_PARSE, "%s:1: not a hyphys recording source (expected '%s')", path, SOURCE_MAGIC);
        } else if (!strncmp(line, "scene_hash ", 11)) {
            if (sscanf(line + 11, "%16llx%c", &v, &tail) != 2 || tail != '\n')
                s = hy_fail(HY_ERR_PARSE, "%s:%d: scene_hash wants 16 hex digits", path, lineno);
            out->scene_hash = v;
            have_scene = 1;
        } else if (!strncmp(line, "initial_hash ", 13)) {
            if (sscanf(line + 13, "%16llx%c", &v, &tail) != 2 || tail != '\n')
                s = hy_fail(HY_ERR_PARSE, "%s:%d: initial_hash wants 16 hex digits", path, lineno);
            out->initial_hash = v;
            have_initial = 1;
        } else if (!strncmp(line, "collisions ", 11)) {
            if (strcmp(line + 11, "0\n") && strcmp(line + 11, "1\n"))
                s = hy_fail(HY_ERR_PARSE, "%s:%d: collisions wants 0 or 1", path, lineno);
            out->collisions = line[11] == '1';
            have_collisions = 1;
        }
    }
    fclose(f);
    if (!s && lineno == 0) s = hy_fail(HY_ERR_PARSE, "%s: empty", path);
    if (!s && (!have_scene || !have_initial || !have_collisions))
        s = hy_fail(HY_ERR_PARSE, "%s: no %s line", path,
                    !have_scene ? "scene_hash" : !have_initial ? "initial_hash" : "collisions");
    return s;
}

static hy_status remove_if_there(const char* path) {
    if (remove(path) != 0 && errno != ENOENT) return hy_fail(HY_ERR_IO, "%s: cannot remove: %s", path, strerror(errno));
    return HY_OK;
}

hy_status hy_export_clear(const char* dir) {
    char path[4096];
    snprintf(path, sizeof path, "%s/source.txt", dir);
    hy_status s = remove_if_there(path);
    snprintf(path, sizeof path, "%s/topology.bin", dir);
    if (!s) s = remove_if_there(path);
    for (int32_t i = 0; !s; i++) {
        snprintf(path, sizeof path, "%s/frame_%06d.bin", dir, i);
        if (remove(path) == 0) continue;
        if (errno != ENOENT) s = hy_fail(HY_ERR_IO, "%s: cannot remove: %s", path, strerror(errno));
        break;
    }
    return s;
}

static hy_status read_all(FILE* f, void* p, size_t n, const char* path) {
    if (fread(p, 1, n, f) != n) return hy_fail(HY_ERR_PARSE, "%s: truncated file", path);
    return HY_OK;
}

void hy_recording_free(hy_recording* r) {
    if (!r) return;
    free(r->kinds);
    free(r->vertex_offset);
    free(r->triangle_offset);
    free(r->triangles);
    free(r->tri_object);
    free(r->frames);
    memset(r, 0, sizeof *r);
}

hy_status hy_recording_load(const char* dir, int32_t max_frames, hy_recording* out) {
    memset(out, 0, sizeof *out);
    char path[4096];
    snprintf(path, sizeof path, "%s/topology.bin", dir);
    FILE* f = fopen(path, "rb");
    if (!f) return hy_fail(HY_ERR_IO, "%s: cannot open: %s", path, strerror(errno));
    char magic[8];
    uint32_t head[2];
    hy_status s = read_all(f, magic, 8, path);
    if (!s && memcmp(magic, "HYTOPO1", 8) != 0) s = hy_fail(HY_ERR_PARSE, "%s: not a hyphys topology file", path);
    if (!s) s = read_all(f, head, sizeof head, path);
    if (!s && (head[0] != 1u || head[1] > 10000000u))
        s = hy_fail(HY_ERR_PARSE, "%s: unsupported version %u or object count %u", path, head[0], head[1]);
    hy_recording r;
    memset(&r, 0, sizeof r);
    if (!s) {
        r.object_count = (int32_t)head[1];
        r.kinds = calloc((size_t)r.object_count + 1, sizeof *r.kinds);
        r.vertex_offset = calloc((size_t)r.object_count + 1, sizeof *r.vertex_offset);
        r.triangle_offset = calloc((size_t)r.object_count + 1, sizeof *r.triangle_offset);
        if (!r.kinds || !r.vertex_offset || !r.triangle_offset) s = hy_fail(HY_ERR_NOMEM, "out of memory");
    }
    size_t tri_cap = 0;
    for (int32_t i = 0; !s && i < r.object_count; i++) {
        char name[64];
        uint32_t nv, nt;
        s = read_all(f, &r.kinds[i], 4, path);
        if (!s) s = read_all(f, name, sizeof name, path);
        if (!s) s = read_all(f, &nv, 4, path);
        if (!s) s = read_all(f, &nt, 4, path);
        if (!s && (nv > 100000000u || nt > 100000000u))
            s = hy_fail(HY_ERR_PARSE, "%s: object %d has implausible sizes", path, i);
        /* and the totals must stay int32 counts */
        if (!s && ((int64_t)r.vertex_count + nv > 100000000 || (int64_t)r.triangle_count + nt > 100000000))
            s = hy_fail(HY_ERR_PARSE, "%s: object %d takes the recording past 1e8 vertices or triangles", path, i);
        if (s) break;
        r.vertex_offset[i] = r.vertex_count;
        r.triangle_offset[i] = r.triangle_count;
        size_t need = 3 * ((size_t)r.triangle_count + nt);
        if (need > tri_cap) {
            size_t cap = need * 2;
            int32_t* nt2 = realloc(r.triangles, sizeof(int32_t) * cap);
            int32_t* no2 = realloc(r.tri_object, sizeof(int32_t) * cap / 3 + 1);
            if (nt2) r.triangles = nt2;
            if (no2) r.tri_object = no2;
            if (!nt2 || !no2) {
                s = hy_fail(HY_ERR_NOMEM, "out of memory");
                break;
            }
            tri_cap = cap;
        }
        int32_t* t = r.triangles + 3 * (size_t)r.triangle_count;
        s = read_all(f, t, sizeof(int32_t) * 3 * nt, path);
        for (uint32_t k = 0; !s && k < 3 * nt; k++) {
            if (t[k] < 0 || (uint32_t)t[k] >= nv) s = hy_fail(HY_ERR_PARSE, "%s: object %d index out of range", path, i);
            t[k] += r.vertex_count;
        }
        for (uint32_t k = 0; !s && k < nt; k++) r.tri_object[r.triangle_count + (int32_t)k] = i;
        r.vertex_count += (int32_t)nv;
        r.triangle_count += (int32_t)nt;
    }
    if (r.object_count >= 0 && r.vertex_offset) {
        r.vertex_offset[r.object_count] = r.vertex_count;
        r.triangle_offset[r.object_count] = r.triangle_count;
    }
    fclose(f);
    /* frames */
    size_t frame_doubles = 3 * (size_t)r.vertex_count;
    for (int32_t fr = 0; !s && fr < max_frames; fr++) {
        snprintf(path, sizeof path, "%s/frame_%06d.bin", dir, fr);
        f = fopen(path, "rb");
        if (!f) break;
        uint32_t h2[2], tail[2];
        double t;
        s = read_all(f, magic, 8, path);
        if (!s && memcmp(magic, "HYFRAME", 8) != 0) s = hy_fail(HY_ERR_PARSE, "%s: not a hyphys frame", path);
        if (!s) s = read_all(f, h2, sizeof h2, path);
        if (!s) s = read_all(f, &t, sizeof t, path);
        if (!s) s = read_all(f, tail, sizeof tail, path);
        if (!s && tail[0] != (uint32_t)r.vertex_count)
            s = hy_fail(HY_ERR_PARSE, "%s: %u vertices, topology has %d", path, tail[0], r.vertex_count);
        if (!s) {
            /* at least one double: realloc(p, 0) may free p and return NULL */
            double* nf = realloc(r.frames, sizeof(double) * (frame_doubles * (size_t)(fr + 1) + 1));
            if (!nf) s = hy_fail(HY_ERR_NOMEM, "out of memory reading frames");
            else {
                r.frames = nf;
                s = read_all(f, r.frames + frame_doubles * (size_t)fr, sizeof(double) * frame_doubles, path);
            }
        }
        /* A NaN or infinite position would reach the CCD as a "collision
         * at t = 0" (its conservative answer) and skew every count: the
         * recording is bad input, named down to the vertex. */
        for (size_t k = 0; !s && k < frame_doubles; k++) {
            if (isfinite(r.frames[frame_doubles * (size_t)fr + k])) continue;
            int32_t v = (int32_t)(k / 3), obj = 0;
            while (obj + 1 < r.object_count && r.vertex_offset[obj + 1] <= v) obj++;
            s = hy_fail(HY_ERR_PARSE, "%s: vertex %d (object %d, its vertex %d) has a non-finite coordinate", path, v,
                        obj, v - r.vertex_offset[obj]);
        }
        fclose(f);
        if (!s) r.frame_count = fr + 1;
    }
    if (s) {
        hy_recording_free(&r);
        return s;
    }
    *out = r;
    return HY_OK;
}
