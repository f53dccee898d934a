/* Frame export and replay (docs/guide/FRAMES.md).
 *
 * DIR/topology.bin, written once:
 *   char magic[8] = "HYTOPO1\0"; uint32 version = 1; uint32 object_count;
 *   per object: uint32 kind (1 cloth, 2 body, 3 obstacle); char name[64];
 *               uint32 vertex_count; uint32 triangle_count;
 *               int32 triangles[3 * triangle_count]
 * DIR/frame_%06d.bin, one per exported frame:
 *   char magic[8] = "HYFRAME\0"; uint32 version = 1; uint32 frame;
 *   double time; uint32 vertex_count (all objects); uint32 reserved = 0;
 *   double positions[3 * vertex_count] (objects in topology order)
 * All little-endian (the host order on every supported machine; the
 * reader checks the magic and sizes). */
#ifndef HY_ENGINE_EXPORT_H
#define HY_ENGINE_EXPORT_H

#include <stdint.h>

#include "hyphys/hyphys.h"

hy_status hy_export_topology(const hy_world* w, const char* dir);
hy_status hy_export_frame(const hy_world* w, const char* dir, int32_t frame);

/* What a recording was made from (DIR/source.txt): the 64-bit FNV-1a hash
 * of the scene file's bytes (its parameters), hy_world_hash of the world
 * as loaded (its meshes and initial state, wherever they came from) and
 * whether collisions were on. A replay compares them with the scene it is
 * asked for. */
typedef struct hy_export_source {
    uint64_t scene_hash;
    uint64_t initial_hash;
    int32_t collisions;
} hy_export_source;

/* The source of `scene_path` loaded as w (w not stepped yet). HY_ERR_IO
 * when the file does not read. */
hy_status hy_export_source_of(const char* scene_path, const hy_world* w, hy_export_source* out);
/* Write DIR/source.txt (scene_path is recorded for people to read). */
hy_status hy_export_source_write(const char* dir, const char* scene_path, const hy_export_source* src);
/* Read DIR/source.txt: HY_ERR_IO when there is none, HY_ERR_PARSE (naming
 * the file and line) when it is not one. */
hy_status hy_export_source_read(const char* dir, hy_export_source* out);
/* Remove what an export leaves in DIR: source.txt, topology.bin and the
 * frames from frame_000000.bin up to the first missing one, so that a new
 * export never sits beside an older one's frames. */
hy_status hy_export_clear(const char* dir);

/* A replayable recording: the topology and the frames as read back. */
typedef struct hy_recording {
    int32_t object_count;
    uint32_t* kinds;
    int32_t* vertex_offset;   /* first vertex of each object in the concatenation */
    int32_t* triangle_offset; /* first triangle of each object */
    int32_t vertex_count, triangle_count;
    int32_t* triangles;       /* 3 * triangle_count, indices into the concatenation */
    int32_t* tri_object;      /* owning object of each triangle */
    int32_t frame_count;
    double* frames;           /* frame_count * 3 * vertex_count */
} hy_recording;

/* Read DIR/topology.bin and frames 0..max_frames-1 (stops at the first missing). */
hy_status hy_recording_load(const char* dir, int32_t max_frames, hy_recording* out);
void hy_recording_free(hy_recording* r);

#endif
