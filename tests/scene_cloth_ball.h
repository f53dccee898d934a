/* A small colliding world for the framework tests (include after test.h):
 * a 24 x 24 cloth 0.8 m wide falling on an icosphere of radius 0.2 that
 * spins about y, and with `with_box` a 6 cm box dropped beside the ball.
 * Two threads. NULL (checks failed) when it cannot be made. */
#ifndef HY_TESTS_SCENE_CLOTH_BALL_H
#define HY_TESTS_SCENE_CLOTH_BALL_H

#include "hyphys/hyphys.h"

static inline hy_world* hy_test_cloth_ball_world(int with_box) {
    hy_world_def wd = hy_world_def_default();
    wd.threads = 2;
    hy_world* w = NULL;
    CHECK_OK(hy_world_create(&wd, &w));
    if (!w) return NULL;
    hy_mesh *grid = NULL, *ico = NULL, *box = NULL;
    CHECK_OK(hy_mesh_grid(24, 24, 0.8, 0.8, &grid));
    CHECK_OK(hy_mesh_icosphere(0.2, 2, &ico));
    if (with_box) CHECK_OK(hy_mesh_box(0.06, 0.06, 0.06, 1, &box));
    hy_cloth_id cloth;
    hy_obstacle_id ball;
    hy_body_id body;
    hy_cloth_def cd = hy_cloth_def_default();
    cd.mesh = hy_mesh_get_view(grid);
    cd.position[1] = 0.23;
    CHECK_OK(hy_cloth_add(w, &cd, &cloth));
    hy_obstacle_def od = hy_obstacle_def_default();
    od.mesh = hy_mesh_get_view(ico);
    od.motion.angular_velocity[1] = 1.0;
    CHECK_OK(hy_obstacle_add(w, &od, &ball));
    if (with_box) {
        hy_body_def bd = hy_body_def_default();
        bd.mesh = hy_mesh_get_view(box);
        bd.position[0] = 0.12;
        bd.position[1] = 0.4;
        CHECK_OK(hy_body_add(w, &bd, &body));
    }
    hy_mesh_destroy(grid);
    hy_mesh_destroy(ico);
    hy_mesh_destroy(box);
    return w;
}

#endif
