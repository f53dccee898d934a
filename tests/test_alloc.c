/* Tests the allocator hook (hy_set_allocator): every block the library
 * takes while a world loads a scene, steps with collisions on two threads,
 * snapshots, restores, removes objects, writes a trace and reads an OBJ
 * comes from the host's allocator, aligned as asked, and all of it goes
 * back; the state is the one the C library's allocator gives; the
 * allocator cannot change while hyphys holds memory. */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/world_step.h"

/* The host's allocator: counts calls, checks the alignment asked for and
 * that every block given back is one it gave. */
typedef struct host_heap {
    atomic_llong allocs, frees, misaligned;
} host_heap;

static void* host_alloc(size_t size, size_t alignment, void* user) {
    host_heap* h = user;
    if (alignment < 16 || (alignment & (alignment - 1)) != 0) {
        atomic_fetch_add(&h->misaligned, 1);
        return NULL;
    }
    void* p = aligned_alloc(alignment, (size + alignment - 1) / alignment * alignment);
    if (p) atomic_fetch_add(&h->allocs, 1);
    return p;
}

static void host_free(void* block, void* user) {
    host_heap* h = user;
    atomic_fetch_add(&h->frees, 1);
    free(block);
}

/* The scene: a cloth on a spinning ball, a box, a bonded wall on a floor. */
static const char* scene =
    "{\"solver\": {\"time_step\": 0.01, \"threads\": 2},\n"
    " \"objects\": [\n"
    "  {\"type\": \"obstacle\", \"name\": \"floor\", \"mesh\": {\"generator\": \"box\", "
    "\"half_extents\": [3, 0.05, 3]}, \"transform\": {\"position\": [0, -0.05, 0]}},\n"
    "  {\"type\": \"obstacle\", \"name\": \"ball\", \"mesh\": {\"generator\": \"icosphere\", \"radius\": 0.2, "
    "\"subdivisions\": 2}, \"transform\": {\"position\": [0, 0.3, 0]},\n"
    "   \"motion\": {\"rotate\": {\"axis\": [0, 1, 0], \"rate\": 1.0}}},\n"
    "  {\"type\": \"cloth\", \"name\": \"sheet\", \"mesh\": {\"generator\": \"grid\", \"vertices\": [16, 16], "
    "\"size\": [0.8, 0.8]}, \"transform\": {\"position\": [0, 0.55, 0]}},\n"
    "  {\"type\": \"body\", \"name\": \"box\", \"mesh\": {\"generator\": \"box\", \"half_extents\": [0.05, 0.05, 0.05]}, "
    "\"transform\": {\"position\": [0.6, 0.3, 0]}},\n"
    "  {\"type\": \"fracture\", \"name\": \"wall\", \"size\": [0.2, 0.2, 0.1], \"pieces\": [2, 2, 1], "
    "\"gap\": 0.004, \"bond_strength\": 0.05, \"transform\": {\"position\": [1.0, 0.3, 0]}}]}";

/* Everything the library does that allocates; the final hash. */
static uint64_t exercise(const char* dir) {
    hy_scene_options o = hy_scene_options_default();
    hy_world* w = NULL;
    CHECK_OK(hy_scene_load_string(scene, strlen(scene), "alloc.json", &o, &w));
    if (!w) return 0;
    char trace[512];
    snprintf(trace, sizeof trace, "%s/trace.json", dir);
    hy_sched_def sd = hy_sched_def_default();
    sd.trace = trace;
    CHECK_OK(hy_world_set_scheduling(w, &sd));
    for (int i = 0; i < 10; i++) CHECK_OK(hy_world_step(w, 0.01, 1));
    size_t size = 0;
    CHECK_OK(hy_world_snapshot_size(w, &size));
    void* snap = malloc(size);
    CHECK_OK(hy_world_snapshot(w, snap, size, NULL));
    for (int i = 0; i < 10; i++) CHECK_OK(hy_world_step(w, 0.01, 2));
    CHECK_OK(hy_world_restore(w, snap, size));
    free(snap);
    hy_object_id box;
    CHECK_OK(hy_world_get_object(w, 3, &box));
    CHECK_OK(hy_object_remove(w, box));
    for (int i = 0; i < 10; i++) CHECK_OK(hy_world_step(w, 0.01, 1));
    int64_t count = 0;
    hy_contact_info info[8];
    CHECK_OK(hy_world_get_contacts(w, info, 8, &count));
    CHECK_OK(hy_world_close_trace(w));
    uint64_t h = hy_test_hash(w);
    hy_world_destroy(w);
    /* an OBJ file (read line by line) */
    char path[512];
    snprintf(path, sizeof path, "%s/tri.obj", dir);
    FILE* f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs("v 0 0 0\nv 1 0 0\nv 0 1 0\n# a long comment line, longer than the first buffer of 128 bytes: "
              "..................................................................................\nf 1 2 3\n",
              f);
        fclose(f);
        hy_mesh* m = NULL;
        CHECK_OK(hy_mesh_load_obj(path, &m));
        CHECK(m && hy_mesh_get_view(m).triangle_count == 1);
        hy_mesh_destroy(m);
    }
    return h;
}

int main(void) {
    char dir[] = "/tmp/hy_test_alloc_XXXXXX";
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    int64_t blocks = -1;
    CHECK_OK(hy_get_allocation_count(&blocks));
    CHECK(blocks == 0);
    uint64_t with_libc = exercise(dir);
    CHECK_OK(hy_get_allocation_count(&blocks));
    CHECK(blocks == 0); /* all given back */

    static host_heap heap;
    CHECK(hy_set_allocator(host_alloc, NULL, &heap) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "free is NULL") != NULL);
    CHECK_OK(hy_set_allocator(host_alloc, host_free, &heap));
    /* while a world lives the allocator cannot change */
    hy_world_def d = hy_world_def_default();
    d.threads = 2;
    hy_world* w = NULL;
    CHECK_OK(hy_world_create(&d, &w));
    CHECK(hy_set_allocator(NULL, NULL, NULL) == HY_ERR_INVALID_ARG);
    CHECK(strstr(hy_last_error(), "holds") != NULL);
    hy_world_destroy(w);

    uint64_t with_host = exercise(dir);
    CHECK(with_host == with_libc);
    CHECK_OK(hy_get_allocation_count(&blocks));
    CHECK(blocks == 0);
    CHECK(atomic_load(&heap.allocs) > 100);
    CHECK(atomic_load(&heap.allocs) == atomic_load(&heap.frees));
    CHECK(atomic_load(&heap.misaligned) == 0);
    fprintf(stderr, "host allocator: %lld blocks\n", (long long)atomic_load(&heap.allocs));
    CHECK_OK(hy_set_allocator(NULL, NULL, NULL));
    char path[512];
    snprintf(path, sizeof path, "%s/trace.json", dir);
    unlink(path);
    snprintf(path, sizeof path, "%s/tri.obj", dir);
    unlink(path);
    rmdir(dir);
    TEST_END();
}
