/* What the scene checks of engine/scene_objects.c and
 * engine/scene_solids.c share: transforms, arrays of instances, pins,
 * names, materials and file paths, checked into the plan
 * (engine/scene_plan.h). Internal to the scene loader. */
#ifndef HY_ENGINE_SCENE_SHARED_H
#define HY_ENGINE_SCENE_SHARED_H

#include <stdint.h>

#include "core/hd.h"
#include "engine/scene_plan.h"

/* Object types, in the order of the scene's "type" names. */
enum { T_CLOTH, T_BODY, T_OBSTACLE, T_FRACTURE, T_FEM, T_MASS_SPRING };

typedef struct xform {
    double pos[3];
    hy_quat q;
    double scale[3];
} xform;

typedef struct lattice {
    int count[3];
    double spacing[3];
    double jitter;
    int seed;
    int random_rotation;
} lattice;

hy_status scene_check_array(ctx* c, const cJSON* obj, lattice* a);
hy_status scene_check_name(ctx* c, const cJSON* obj, int index, const char* type, char* out);
hy_status scene_check_transform(ctx* c, const cJSON* obj, int allow_scale, xform* x);
hy_status scene_keep_pinset(ctx* c, plan* p, size_t mk, pinset ps, hy_status s, int32_t* out);
inst* scene_lattice_inst(ctx* c, plan* p, const cJSON* obj, int index, const char* name, int64_t i, int64_t count,
                         int32_t mesh, int32_t pins, int64_t tris, hy_status* s);
hy_quat scene_lattice_place(const lattice* a, const xform* x, int64_t i, uint64_t* rng, double pos[3]);
hy_status scene_pin_indices(ctx* c, const cJSON* it, int32_t nv, pinset* ps);
hy_status scene_resolve_material(ctx* c, const plan* p, const cJSON* obj, material* out);
hy_status scene_resolve_path(ctx* c, const cJSON* at, const char* rel, char* out, size_t n);
void scene_set_pose(double pos[3], double q[4], const double p[3], hy_quat r);

/* A "fem" or "massspring" object (engine/scene_solids.c). */
hy_status hy_scene_check_solid(ctx* c, plan* p, const cJSON* obj, int index, int type, const char* name,
                               const material* mat, const xform* x);

#endif
