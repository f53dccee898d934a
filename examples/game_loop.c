/* hyphys in a game loop: spawn balls, a crate and a cloth over a floor,
 * drive a kinematic paddle, react to contact events, despawn some balls
 * mid-run, make the others jump with impulses, and save / load the game
 * state with a snapshot (the run continued from the load matches the one
 * that went on, to the bit).
 *
 * Build: cc -std=c11 game_loop.c $(pkg-config --cflags --libs hyphys)
 * Prints what happened and "game loop: ok"; exits 1 on any failure. */
#include <hyphys/hyphys.h>
#include <stdio.h>
#include <stdlib.h>

#define BALLS 6
#define FRAMES 120
#define DT (1.0 / 60.0)
#define SUBSTEPS 2

/* The game's own record of a ball: the engine keeps a pointer to it as
 * the body's user data and hands it back with contact events. */
typedef struct entity {
    const char* kind;
    int number;
    hy_body_id body;
    int alive;
    int landings; /* contact begin events with the floor */
} entity;

static int fail(const char* what) {
    fprintf(stderr, "game_loop: %s: %s\n", what, hy_last_error());
    return 1;
}

/* The entity behind an object of a contact pair, or NULL (floor, cloth, paddle). */
static entity* entity_of(const hy_world* world, hy_object_id id) {
    void* data = NULL;
    if (hy_object_get_user_data(world, id, &data) != HY_OK) return NULL;
    return (entity*)data;
}

/* One frame: move the paddle, step, count landings on the floor. */
static int frame(hy_world* world, hy_obstacle_id floor, hy_body_id paddle, int f, long* begins, long* ends) {
    /* the paddle sweeps back and forth along x, 1 m/s, turning every second */
    double v[3] = {(f / 60) % 2 ? -1.0 : 1.0, 0.0, 0.0}, w[3] = {0.0, 0.0, 0.0};
    if (hy_body_set_velocity(world, paddle, v, w) != HY_OK) return fail("paddle");
    if (hy_world_step(world, DT, SUBSTEPS) != HY_OK) return fail("step");
    hy_contact_events ev;
    if (hy_world_get_contact_events(world, &ev) != HY_OK) return fail("events");
    *begins += ev.begin_count;
    *ends += ev.end_count;
    for (int64_t i = 0; i < ev.begin_count; i++) {
        const hy_contact_pair* p = &ev.begin[i];
        hy_object_id other;
        if (hy_object_id_equal(p->a, hy_obstacle_object(floor))) other = p->b;
        else if (hy_object_id_equal(p->b, hy_obstacle_object(floor))) other = p->a;
        else continue;
        entity* e = entity_of(world, other);
        if (e) e->landings++;
    }
    return 0;
}

int main(void) {
    hy_world_def def = hy_world_def_default();
    def.threads = 2;
    hy_world* world = NULL;
    if (hy_world_create(&def, &world) != HY_OK) return fail("world");

    /* the floor: a 6 m square */
    hy_mesh *plane = NULL, *ball_mesh = NULL, *crate_mesh = NULL, *paddle_mesh = NULL, *cloth_mesh = NULL;
    if (hy_mesh_grid(7, 7, 6.0, 6.0, &plane) || hy_mesh_icosphere(0.15, 2, &ball_mesh) ||
        hy_mesh_box(0.2, 0.2, 0.2, 1, &crate_mesh) || hy_mesh_box(0.4, 0.05, 0.4, 1, &paddle_mesh) ||
        hy_mesh_grid(12, 12, 0.8, 0.8, &cloth_mesh))
        return fail("meshes");
    hy_obstacle_def od = hy_obstacle_def_default();
    od.mesh = hy_mesh_get_view(plane);
    hy_obstacle_id floor;
    if (hy_obstacle_add(world, &od, &floor) != HY_OK) return fail("floor");

    /* balls in a row, each with its entity as user data */
    static entity balls[BALLS];
    hy_body_def bd = hy_body_def_default();
    bd.mesh = hy_mesh_get_view(ball_mesh);
    bd.restitution = 0.3;
    for (int i = 0; i < BALLS; i++) {
        bd.position[0] = -2.0 + 0.8 * i;
        bd.position[1] = 0.5 + 0.1 * i;
        balls[i] = (entity){"ball", i, {0, 0}, 1, 0};
        if (hy_body_add(world, &bd, &balls[i].body) != HY_OK) return fail("ball");
        if (hy_object_set_user_data(world, hy_body_object(balls[i].body), &balls[i]) != HY_OK)
            return fail("user data");
    }
    /* a crate and a cloth dropped onto it */
    static entity crate = {"crate", 0, {0, 0}, 1, 0};
    hy_body_def cd = hy_body_def_default();
    cd.mesh = hy_mesh_get_view(crate_mesh);
    cd.position[2] = 1.5;
    cd.position[1] = 0.25;
    if (hy_body_add(world, &cd, &crate.body) != HY_OK) return fail("crate");
    hy_object_set_user_data(world, hy_body_object(crate.body), &crate);
    hy_cloth_def cl = hy_cloth_def_default();
    cl.mesh = hy_mesh_get_view(cloth_mesh);
    cl.position[1] = 0.7;
    cl.position[2] = 1.5;
    hy_cloth_id cloth;
    if (hy_cloth_add(world, &cl, &cloth) != HY_OK) return fail("cloth");
    /* a kinematic paddle sliding over the floor at z = -1.5 */
    hy_body_def pd = hy_body_def_default();
    pd.mesh = hy_mesh_get_view(paddle_mesh);
    pd.position[1] = 0.1;
    pd.position[2] = -1.5;
    hy_body_id paddle;
    if (hy_body_add(world, &pd, &paddle) != HY_OK || hy_body_set_kinematic(world, paddle, 1) != HY_OK)
        return fail("paddle");
    /* the world copied the meshes */
    hy_mesh_destroy(plane);
    hy_mesh_destroy(ball_mesh);
    hy_mesh_destroy(crate_mesh);
    hy_mesh_destroy(paddle_mesh);
    hy_mesh_destroy(cloth_mesh);

    long begins = 0, ends = 0;
    void* save = NULL;
    size_t save_size = 0;
    const int save_at = 80;
    int stale_refused = 0;
    for (int f = 0; f < FRAMES; f++) {
        /* frame 40: despawn every other ball; its id is refused from now on */
        if (f == 40)
            for (int i = 0; i < BALLS; i += 2) {
                if (hy_body_remove(world, balls[i].body) != HY_OK) return fail("remove");
                balls[i].alive = 0;
                double p[3];
                if (hy_body_get_transform(world, balls[i].body, p, NULL) == HY_ERR_STALE_ID) stale_refused++;
            }
        /* frame 50: the others jump (an impulse of m * 3 m/s, up) */
        if (f == 50)
            for (int i = 0; i < BALLS; i++) {
                if (!balls[i].alive) continue;
                hy_mass_properties mp;
                if (hy_body_get_mass_properties(world, balls[i].body, &mp) != HY_OK) return fail("mass");
                double j[3] = {0.0, 3.0 * mp.mass, 0.0};
                if (hy_body_apply_impulse(world, balls[i].body, j, NULL) != HY_OK) return fail("impulse");
            }
        /* frame 80: save the game */
        if (f == save_at) {
            if (hy_world_snapshot_size(world, &save_size) != HY_OK) return fail("snapshot size");
            save = malloc(save_size);
            if (!save || hy_world_snapshot(world, save, save_size, NULL) != HY_OK) return fail("snapshot");
        }
        if (frame(world, floor, paddle, f, &begins, &ends)) return 1;
    }
    uint64_t went_on = 0, reloaded = 0;
    if (hy_world_hash(world, &went_on) != HY_OK) return fail("hash");

    /* load the game saved at frame 80 and play the same frames again */
    if (hy_world_restore(world, save, save_size) != HY_OK) return fail("restore");
    long b2 = 0, e2 = 0;
    for (int f = save_at; f < FRAMES; f++)
        if (frame(world, floor, paddle, f, &b2, &e2)) return 1;
    if (hy_world_hash(world, &reloaded) != HY_OK) return fail("hash");
    free(save);

    int landed = 0;
    for (int i = 0; i < BALLS; i++) landed += balls[i].alive && balls[i].landings >= 2; /* fell, jumped, fell */
    printf("contact events: %ld begin, %ld end over %d frames\n", begins, ends, FRAMES);
    printf("despawned %d balls, stale ids refused: %d\n", (BALLS + 1) / 2, stale_refused);
    printf("balls that landed after their jump: %d of %d\n", landed, BALLS / 2);
    printf("restore at frame %d: %s (%016llx)\n", save_at, went_on == reloaded ? "same hash" : "DIFFERENT hash",
           (unsigned long long)reloaded);
    hy_world_destroy(world);
    if (went_on != reloaded || stale_refused != (BALLS + 1) / 2 || landed != BALLS / 2) return 1;
    printf("game loop: ok\n");
    return 0;
}
