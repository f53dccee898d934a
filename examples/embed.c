/* Embedding hyphys: drop a ball onto nothing, print where it is after 1 s.
 * Build: cc embed.c $(pkg-config --cflags --libs hyphys) */
#include <hyphys/hyphys.h>
#include <stdio.h>

int main(void) {
    hy_world_def def = hy_world_def_default();
    def.threads = 1;
    hy_world* world = NULL;
    if (hy_world_create(&def, &world) != HY_OK) {
        fprintf(stderr, "world: %s\n", hy_last_error());
        return 1;
    }
    hy_mesh* sphere = NULL;
    hy_mesh_icosphere(0.25, 2, &sphere);

    hy_body_def body = hy_body_def_default();
    body.mesh = hy_mesh_get_view(sphere);
    body.position[1] = 10.0;
    body.angular_velocity[1] = 2.0;
    hy_body_id ball;
    if (hy_body_add(world, &body, &ball) != HY_OK) {
        fprintf(stderr, "body: %s\n", hy_last_error());
        return 1;
    }
    hy_mesh_destroy(sphere); /* the world keeps its own copy */

    for (int i = 0; i < 60; i++)
        if (hy_world_step(world, def.time_step, def.substeps) != HY_OK) {
            fprintf(stderr, "step: %s\n", hy_last_error());
            return 1;
        }
    double p[3], v[3], w[3];
    hy_body_get_transform(world, ball, p, NULL);
    hy_body_get_velocity(world, ball, v, w);
    printf("after 1 s: height %.4f m, speed %.4f m/s, spin %.4f rad/s\n", p[1], -v[1], w[1]);
    uint64_t hash = 0;
    hy_world_hash(world, &hash);
    printf("state hash %016llx\n", (unsigned long long)hash);
    hy_world_destroy(world);
    return 0;
}
