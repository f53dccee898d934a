/* The scene loader's plan: what phase 1 (check) reads out of a scene and
 * phase 2 (build) turns into a world, with the limits a scene must keep.
 * Shared by engine/scene.c and engine/scene_objects.c; helpers static
 * inline, as in scene_fields.h. */
#ifndef HY_ENGINE_SCENE_PLAN_H
#define HY_ENGINE_SCENE_PLAN_H

#include <stdint.h>
#include <stdlib.h>

#include "core/mesh.h"
#include "core/tetmesh.h"
#include "engine/kinds.h"
#include "engine/scene_fields.h"
#include "hyphys/hyphys.h"

/* Limits that keep a mistyped or hostile scene from exhausting memory. The
 * benchmark scenes are ~250K triangles; these leave ample room above them. */
#define MAX_FILE_BYTES (64 << 20)
#define MAX_MESH_TRIANGLES (4 << 20)   /* one generated or loaded mesh */
#define MAX_SCENE_TRIANGLES (16 << 20) /* all meshes of all instances */
#define MAX_INSTANCES 100000           /* objects after array/fracture expansion */
#define MAX_MESHES_PER_OBJECT 64
#define MAX_MATERIALS 1024
#define MAX_NAME 47 /* leaves room for "_99999" in the world's 64-byte names */

/* ------------------------------------------------------------ the plan */

enum {
    M_DENSITY,
    M_STRETCH,
    M_SHEAR,
    M_BEND,
    M_DAMPING,
    M_AIR_DAMPING,
    M_THICKNESS,
    M_FRICTION,
    M_RESTITUTION,
    M_YOUNG,
    M_POISSON,
    M_SPRING,
    M_MASS_DAMPING,
    M_COUNT
};
static const char* const material_fields[] = {"density",        "stretch_stiffness", "shear_stiffness",
                                              "bend_stiffness", "damping",           "air_damping",
                                              "thickness",      "friction",          "restitution",
                                              "young",          "poisson",           "spring_stiffness",
                                              "mass_damping",   NULL};
static const char* const inline_material_fields[] = {"base",           "density",     "stretch_stiffness",
                                                     "shear_stiffness", "bend_stiffness", "damping",
                                                     "air_damping",     "thickness",   "friction",
                                                     "restitution",     "young",       "poisson",
                                                     "spring_stiffness", "mass_damping", NULL};
static const range material_ranges[M_COUNT] = {R_POS,    R_NONNEG, R_NONNEG, R_NONNEG, R_NONNEG,
                                               R_NONNEG, R_NONNEG, R_NONNEG, R_UNIT,
                                               R_POS,    R_NONNEG, R_POS,    R_NONNEG};

typedef struct material {
    const char* name;
    double v[M_COUNT];
    unsigned has; /* bit i: v[i] was given */
} material;

typedef struct pinset {
    int32_t* idx;
    int32_t n;
} pinset;

typedef struct inst {
    hy_object_kind kind;
    int32_t object; /* index in "objects", for messages */
    int32_t mesh;   /* index in plan.meshes (plan.tetmeshes for FEM and mass-spring) */
    int32_t pins;   /* index in plan.pins, -1 = none */
    char name[64];
    union {
        hy_cloth_def cloth;
        hy_body_def body;
        hy_obstacle_def obstacle;
        hy_solid_def solid;
    } d;
} inst;

typedef struct bondspec {
    int32_t a, b; /* instance indices */
    double anchor[3];
    double strength;
} bondspec;

/* One attachment between two solid instances (engine/scene_links.c). */
typedef struct attachspec {
    int32_t entry;   /* index in "attachments", for messages */
    int32_t a, b;    /* instance indices */
    double stiffness, tolerance;
    int32_t* vertices; /* given vertex pairs (a, b), or NULL: coincident vertices */
    int32_t vertex_count;
} attachspec;

typedef struct plan {
    hy_world_def world;
    material* materials;
    int32_t material_count;
    hy_mesh** meshes;
    int32_t mesh_count, mesh_cap;
    hy_tetmesh** tetmeshes;
    int32_t tetmesh_count, tetmesh_cap;
    int64_t mesh_triangles; /* over distinct meshes */
    pinset* pins;
    int32_t pin_count, pin_cap;
    inst* insts;
    int32_t inst_count, inst_cap;
    bondspec* bonds;
    int32_t bond_count, bond_cap;
    attachspec* attachments;
    int32_t attachment_count, attachment_cap;
    int64_t triangles; /* over instances: what the world will hold */
    const cJSON* objects;
} plan;

static inline int grow(void** p, int32_t* cap, int32_t need, size_t elem) {
    if (need <= *cap) return 1;
    int32_t n = *cap ? *cap : 16;
    while (n < need) n = n > INT32_MAX / 2 ? need : 2 * n;
    void* q = realloc(*p, (size_t)n * elem);
    if (!q) return 0;
    *p = q;
    *cap = n;
    return 1;
}

static inline void plan_free(plan* p) {
    free(p->materials);
    for (int32_t i = 0; i < p->mesh_count; i++) hy_mesh_destroy(p->meshes[i]);
    free(p->meshes);
    for (int32_t i = 0; i < p->tetmesh_count; i++) hy_tetmesh_destroy(p->tetmeshes[i]);
    free(p->tetmeshes);
    for (int32_t i = 0; i < p->pin_count; i++) free(p->pins[i].idx);
    free(p->pins);
    free(p->insts);
    free(p->bonds);
    for (int32_t i = 0; i < p->attachment_count; i++) free(p->attachments[i].vertices);
    free(p->attachments);
}

static inline hy_status add_mesh(ctx* c, plan* p, const cJSON* at, hy_mesh* m, int32_t* out) {
    if (!grow((void**)&p->meshes, &p->mesh_cap, p->mesh_count + 1, sizeof *p->meshes)) {
        hy_mesh_destroy(m);
        return fail(c, at, HY_ERR_NOMEM, ": out of memory");
    }
    p->meshes[p->mesh_count] = m;
    *out = p->mesh_count++;
    p->mesh_triangles += m->triangle_count;
    if (p->mesh_triangles > MAX_SCENE_TRIANGLES)
        return fail(c, at, HY_ERR_PARSE, ": the scene's meshes exceed %d triangles", MAX_SCENE_TRIANGLES);
    return HY_OK;
}

/* Checked as instances are laid out, so a huge array fails before it is built. */
static inline hy_status too_many(ctx* c, const cJSON* at, int64_t nt) {
    return fail(c, at, HY_ERR_PARSE, ": the scene would exceed %d triangles (%lld so far)", MAX_SCENE_TRIANGLES,
                (long long)nt);
}

static inline inst* add_inst(ctx* c, plan* p, const cJSON* at, hy_status* s) {
    if (p->inst_count >= MAX_INSTANCES) {
        *s = fail(c, at, HY_ERR_PARSE, ": the scene has more than %d objects", MAX_INSTANCES);
        return NULL;
    }
    if (!grow((void**)&p->insts, &p->inst_cap, p->inst_count + 1, sizeof *p->insts)) {
        *s = fail(c, at, HY_ERR_NOMEM, ": out of memory");
        return NULL;
    }
    inst* in = &p->insts[p->inst_count++];
    memset(in, 0, sizeof *in);
    in->pins = -1;
    *s = HY_OK;
    return in;
}

/* ------------------------------------------------------------ phase 1's parts (engine/scene_objects.c) */

/* The "materials" object into p->materials, sorted by name. */
hy_status hy_scene_check_materials(ctx* c, plan* p, const cJSON* mats);
/* objects[index]: its instances (arrays and fracture pieces laid out),
 * meshes, pins and bonds, into p. */
hy_status hy_scene_check_object(ctx* c, plan* p, const cJSON* obj, int index);

/* ------------------------------------------------------------ engine/scene_links.c */

/* The top-level "parameters": named numbers that number fields may give
 * as "$name"; options (name=value,...) override their values first. */
hy_status hy_scene_check_parameters(ctx* c, cJSON* params, const char* overrides);
/* The top-level "attachments" into p (after the objects: it names them). */
hy_status hy_scene_check_attachments(ctx* c, plan* p, const cJSON* list);
/* Phase 2: the attachments made in w; ids: the instances' objects. */
hy_status hy_scene_build_attachments(ctx* c, const plan* p, hy_world* w, const hy_object_id* ids);

#endif
