#include "collision/scene_view.h"

#include <stdlib.h>
#include <string.h>

void hy_scene_view_free(hy_scene_view* v) {
    if (!v) return;
    free(v->offset);
    free(v->vertex_object);
    free(v->motion);
    free(v->tri);
    free(v->tri_count);
    free(v->local);
    free(v->thickness);
    free(v->friction);
    free(v->restitution);
    free(v->mass);
    free(v->inv_mass);
    free(v->flags);
    free(v->name);
    free(v->X0);
    free(v->X1);
    free(v->V);
    free(v->body0);
    free(v->body1);
    free(v->body_mass);
    free(v->body_inv_mass);
    free(v->body_inv_inertia);
    free(v->pose_x0);
    free(v->pose_x1);
    free(v->pose_q0);
    free(v->pose_q1);
    memset(v, 0, sizeof *v);
}

hy_status hy_scene_view_layout(hy_scene_view* v, int32_t object_count, int32_t vertex_count) {
    hy_scene_view_free(v);
    if (object_count < 0 || vertex_count < 0)
        return hy_fail(HY_ERR_INVALID_ARG, "scene view: %d objects, %d vertices", object_count, vertex_count);
    /* one spare entry each: no zero-size allocation */
    size_t no = (size_t)object_count + 1, nv = (size_t)vertex_count + 1;
    v->offset = calloc(no, sizeof *v->offset);
    v->vertex_object = calloc(nv, sizeof *v->vertex_object);
    v->motion = calloc(no, 1);
    v->tri = calloc(no, sizeof *v->tri);
    v->tri_count = calloc(no, sizeof *v->tri_count);
    v->local = calloc(no, sizeof *v->local);
    v->thickness = calloc(no, sizeof(double));
    v->friction = calloc(no, sizeof(double));
    v->restitution = calloc(no, sizeof(double));
    v->mass = calloc(nv, sizeof(double));
    v->inv_mass = calloc(nv, sizeof(double));
    v->flags = calloc(no, 1);
    v->name = calloc(no, sizeof *v->name);
    /* filled before every use: not zeroed */
    v->X0 = malloc(sizeof(double) * 3 * nv);
    v->X1 = malloc(sizeof(double) * 3 * nv);
    v->V = malloc(sizeof(double) * 3 * nv);
    v->body0 = calloc(no, sizeof *v->body0);
    v->body1 = calloc(no, sizeof *v->body1);
    v->body_mass = calloc(no, sizeof(double));
    v->body_inv_mass = calloc(no, sizeof(double));
    v->body_inv_inertia = calloc(9 * no, sizeof(double));
    v->pose_x0 = calloc(no, sizeof *v->pose_x0);
    v->pose_x1 = calloc(no, sizeof *v->pose_x1);
    v->pose_q0 = calloc(no, sizeof *v->pose_q0);
    v->pose_q1 = calloc(no, sizeof *v->pose_q1);
    if (!v->offset || !v->vertex_object || !v->motion || !v->tri || !v->tri_count || !v->local || !v->thickness ||
        !v->friction || !v->restitution || !v->mass || !v->inv_mass || !v->flags || !v->name || !v->X0 || !v->X1 ||
        !v->V || !v->body0 || !v->body1 || !v->body_mass || !v->body_inv_mass || !v->body_inv_inertia ||
        !v->pose_x0 || !v->pose_x1 || !v->pose_q0 || !v->pose_q1) {
        hy_scene_view_free(v);
        return hy_fail(HY_ERR_NOMEM, "out of memory for the scene view of %d objects, %d vertices", object_count,
                       vertex_count);
    }
    v->object_count = object_count;
    v->vertex_count = vertex_count;
    return HY_OK;
}
