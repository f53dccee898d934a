/* Tests sleeping rigid bodies (hy_world_def.sleep_time): a box dropped on
 * a floor comes to rest and falls asleep with its velocity zeroed and its
 * pose kept; a ball rolled into it later wakes it; with sleep_time 0 it
 * never sleeps; the state hash does not depend on the thread count. */
#include <math.h>
#include <string.h>

#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/world_step.h"

/* A box 0.2 m above a floor slab and, far off, a ball moving towards it
 * at 3 m/s without gravity, which arrives after about 2 s. */
static const char* scene_json =
    "{\"solver\": {\"time_step\": 0.01, \"sleep_time\": %s},\n"
    " \"objects\": [\n"
    "  {\"type\": \"obstacle\", \"name\": \"floor\", \"mesh\": {\"generator\": \"box\", "
    "\"half_extents\": [3, 0.05, 3]}, \"transform\": {\"position\": [0, -0.05, 0]}},\n"
    "  {\"type\": \"body\", \"name\": \"box\", \"material\": {\"restitution\": 0, \"friction\": 0.8}, "
    "\"mesh\": {\"generator\": \"box\", \"half_extents\": [0.1, 0.1, 0.1]}, "
    "\"transform\": {\"position\": [0, 0.3, 0]}},\n"
    "  {\"type\": \"body\", \"name\": \"ball\", \"gravity\": false, \"mesh\": {\"generator\": \"icosphere\", "
    "\"radius\": 0.08, \"subdivisions\": 1}, \"transform\": {\"position\": [-6.2, 0.1, 0]}, "
    "\"velocity\": [3, 0, 0]}]}";

static hy_world* load(const char* sleep_time, int threads) {
    char json[2048];
    snprintf(json, sizeof json, scene_json, sleep_time);
    hy_scene_options o = hy_scene_options_default();
    o.threads = threads;
    o.strict = 1;
    hy_world* w = NULL;
    CHECK_OK(hy_scene_load_string(json, strlen(json), "sleep.json", &o, &w));
    return w;
}

static hy_body_id named(hy_world* w, const char* name) {
    hy_object_id id = {0, 0};
    hy_body_id body = {0, 0};
    for (int32_t i = 0; i < hy_test_object_count(w); i++) {
        const char* n = NULL;
        hy_world_get_object(w, i, &id);
        if (!hy_object_get_name(w, id, &n) && !strcmp(n, name) && !hy_object_as_body(w, id, &body)) return body;
    }
    return (hy_body_id){0, 0};
}

static void test_sleep_and_wake(void) {
    hy_world* w = load("0.5", 2);
    if (!w) return;
    hy_body_id box = named(w, "box");
    int32_t asleep = -1, fell_asleep_at = -1, woke_at = -1;
    double rest[3] = {0, 0, 0};
    uint64_t hash_at_150 = 0;
    for (int step = 1; step <= 300; step++) {
        CHECK_OK(hy_test_step(w));
        CHECK_OK(hy_body_is_asleep(w, box, &asleep));
        if (asleep && fell_asleep_at < 0) {
            fell_asleep_at = step;
            double v[3], om[3];
            CHECK_OK(hy_body_get_velocity(w, box, v, om));
            CHECK(v[0] == 0 && v[1] == 0 && v[2] == 0 && om[0] == 0 && om[1] == 0 && om[2] == 0);
            CHECK_OK(hy_body_get_transform(w, box, rest, NULL));
            /* resting on the floor: its centre half a box above it, within the contact distance */
            CHECK(rest[1] > 0.1 && rest[1] < 0.1 + 0.003);
        }
        if (step == 150) {
            hash_at_150 = hy_test_hash(w);
            /* asleep, it has not moved since */
            double x[3];
            CHECK_OK(hy_body_get_transform(w, box, x, NULL));
            CHECK(asleep && x[0] == rest[0] && x[1] == rest[1] && x[2] == rest[2]);
        }
        if (fell_asleep_at > 0 && !asleep && woke_at < 0) woke_at = step;
    }
    /* it falls 0.1 m (0.14 s), settles, then rests 0.5 s: asleep within a second */
    CHECK(fell_asleep_at > 50 && fell_asleep_at < 100);
    /* the ball, 6.02 m off at 3 m/s, strikes it after about 2 s */
    CHECK(woke_at > 190 && woke_at < 215);
    double x[3];
    CHECK_OK(hy_body_get_transform(w, box, x, NULL));
    CHECK(x[0] > rest[0] + 0.01); /* pushed along +x */
    hy_world_destroy(w);

    /* the same run on one thread: the same state */
    w = load("0.5", 1);
    if (!w) return;
    for (int step = 1; step <= 150; step++) CHECK_OK(hy_test_step(w));
    CHECK(hy_test_hash(w) == hash_at_150);
    hy_world_destroy(w);
}

static void test_sleep_off(void) {
    hy_world* w = load("0", 2);
    if (!w) return;
    hy_body_id box = named(w, "box");
    int32_t asleep = 0, ever = 0;
    for (int step = 1; step <= 150; step++) {
        CHECK_OK(hy_test_step(w));
        CHECK_OK(hy_body_is_asleep(w, box, &asleep));
        ever |= asleep;
    }
    CHECK(!ever);
    hy_world_destroy(w);
    hy_world_def d = hy_world_def_default();
    d.sleep_time = -1;
    CHECK(hy_world_create(&d, &w) == HY_ERR_INVALID_ARG);
    d = hy_world_def_default();
    d.sleep_velocity = 0;
    CHECK(hy_world_create(&d, &w) == HY_ERR_INVALID_ARG);
}

int main(void) {
    test_sleep_and_wake();
    test_sleep_off();
    TEST_END();
}
