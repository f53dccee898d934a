/* Tests the whole-scene overlap checks (hy_world_find_overlaps, the strict
 * scene load) and that the benchmark scenes' pieces keep apart: the nbody
 * initial state is clear, two overlapping bodies are reported by name, and
 * a small fracture impact leaves no intersecting triangles at any step,
 * nor do its pieces coming to rest in a tray. */
#include <math.h>
#include <string.h>

#include "hyphys/hyphys.h"
#include "test.h"
#include "tests/world_step.h"

static hy_world* load(const char* json, int strict, hy_status* status) {
    hy_scene_options o = hy_scene_options_default();
    o.strict = strict;
    o.threads = 2;
    hy_world* w = NULL;
    *status = hy_scene_load_string(json, strlen(json), "overlap.json", &o, &w);
    return w;
}

static const char* name_of(hy_world* w, hy_object_id id) {
    const char* n = "";
    hy_object_get_name(w, id, &n);
    return n;
}

/* Two unit balls 0.8 m apart (centre to centre) intersect; the default load
 * keeps them and the check names the pair. */
static void test_intersecting_bodies(void) {
    const char* json = "{\"objects\": [\n"
                       " {\"type\": \"body\", \"name\": \"left\", \"mesh\": {\"generator\": \"icosphere\", "
                       "\"radius\": 0.5, \"subdivisions\": 1}},\n"
                       " {\"type\": \"body\", \"name\": \"right\", \"mesh\": {\"generator\": \"icosphere\", "
                       "\"radius\": 0.5, \"subdivisions\": 1}, \"transform\": {\"position\": [0.8, 0, 0]}}]}";
    hy_status s;
    hy_world* w = load(json, 0, &s);
    CHECK(s == HY_OK && w);
    if (!w) return;
    hy_overlap o[8];
    int64_t n = -1;
    CHECK_OK(hy_world_find_overlaps(w, HY_OVERLAP_INTERSECTING, o, 8, &n));
    CHECK(n > 0);
    if (n > 0) {
        CHECK(!strcmp(name_of(w, o[0].a), "left") && !strcmp(name_of(w, o[0].b), "right"));
        CHECK(o[0].distance == 0.0);
        CHECK(o[0].triangle_a >= 0 && o[0].triangle_a < 80 && o[0].triangle_b >= 0 && o[0].triangle_b < 80);
    }
    /* the count does not depend on the capacity */
    int64_t n0 = -1;
    CHECK_OK(hy_world_find_overlaps(w, HY_OVERLAP_CLEARANCE, NULL, 0, &n0));
    CHECK(n0 >= n && n0 > 0);
    CHECK(hy_world_find_overlaps(w, HY_OVERLAP_CLEARANCE, NULL, 4, &n0) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_find_overlaps(NULL, HY_OVERLAP_CLEARANCE, NULL, 0, &n0) == HY_ERR_INVALID_ARG);
    CHECK(hy_world_find_overlaps(w, (hy_overlap_mode)7, NULL, 0, &n0) == HY_ERR_INVALID_ARG);
    hy_world_destroy(w);

    /* strict: refused, the message names the file and both bodies */
    w = load(json, 1, &s);
    CHECK(s == HY_ERR_OVERLAP && w == NULL);
    const char* m = hy_last_error();
    CHECK(strstr(m, "overlap.json") && strstr(m, "'left'") && strstr(m, "'right'") && strstr(m, "intersecting"));
}

/* Two boxes whose faces are 0.6 mm apart do not intersect, but lie closer
 * than their contact distance (half of 1 mm + 2 mm): only the clearance
 * mode reports them, with the distance. */
static void test_closer_than_thickness(void) {
    const char* json = "{\"objects\": [\n"
                       " {\"type\": \"body\", \"name\": \"a\", \"material\": {\"thickness\": 0.001}, "
                       "\"mesh\": {\"generator\": \"box\", \"half_extents\": [0.1, 0.1, 0.1]}},\n"
                       " {\"type\": \"body\", \"name\": \"b\", \"material\": {\"thickness\": 0.002}, "
                       "\"mesh\": {\"generator\": \"box\", \"half_extents\": [0.1, 0.1, 0.1]}, "
                       "\"transform\": {\"position\": [0.2006, 0, 0]}}]}";
    hy_status s;
    hy_world* w = load(json, 0, &s);
    CHECK(s == HY_OK && w);
    if (!w) return;
    int64_t n = -1;
    CHECK_OK(hy_world_find_overlaps(w, HY_OVERLAP_INTERSECTING, NULL, 0, &n));
    CHECK(n == 0);
    hy_overlap o[4];
    CHECK_OK(hy_world_find_overlaps(w, HY_OVERLAP_CLEARANCE, o, 4, &n));
    CHECK(n > 0);
    if (n > 0) CHECK_NEAR(o[0].distance, 0.0006, 1e-12); /* face to face */
    hy_world_destroy(w);
    w = load(json, 1, &s);
    CHECK(s == HY_ERR_OVERLAP && w == NULL);
    CHECK(strstr(hy_last_error(), "apart") != NULL);
}

/* The nbody benchmark starts with every pair of its 640 bodies clear of
 * each other and of the bowl (a strict load passes). */
static void test_nbody_initial_state(void) {
    hy_scene_options o = hy_scene_options_default();
    o.strict = 1;
    hy_world* w = NULL;
    CHECK_OK(hy_scene_load(HY_SOURCE_DIR "/scenes/nbody.json", &o, &w));
    if (!w) return;
    int64_t n = -1;
    CHECK_OK(hy_world_find_overlaps(w, HY_OVERLAP_CLEARANCE, NULL, 0, &n));
    CHECK(n == 0);
    CHECK(hy_test_object_count(w) == 641);
    hy_world_destroy(w);
}

/* A reduced fracture impact: a 4x3x2 wall struck at 20 m/s. Every step ends
 * with no intersecting triangles (bonded pieces collide, so the impact
 * cannot push one into another); without gravity or ground the total
 * linear momentum stays the projectile's to 1%, and the kinetic energy
 * (translation and rotation) never grows from one step to the next (to a
 * billionth of the initial energy, rounding): the impacts are inelastic
 * and the bonds' drift is closed on positions, not by added velocity. */
static void test_fracture_impact(void) {
    const char* json =
        "{\"solver\": {\"time_step\": 0.004, \"gravity\": [0, 0, 0]},\n"
        " \"materials\": {\"concrete\": {\"density\": 2000, \"restitution\": 0.2, \"friction\": 0.6, "
        "\"thickness\": 0.001},\n"
        "   \"steel\": {\"density\": 7800, \"restitution\": 0.3, \"friction\": 0.3, \"thickness\": 0.001}},\n"
        " \"objects\": [\n"
        "  {\"type\": \"fracture\", \"name\": \"wall\", \"material\": \"concrete\", \"size\": [0.4, 0.3, 0.2],\n"
        "   \"pieces\": [4, 3, 2], \"subdivisions\": 1, \"gap\": 0.004, \"bond_strength\": 3.0},\n"
        "  {\"type\": \"body\", \"name\": \"projectile\", \"material\": \"steel\",\n"
        "   \"mesh\": {\"generator\": \"icosphere\", \"radius\": 0.08, \"subdivisions\": 1},\n"
        "   \"transform\": {\"position\": [0.02, 0.01, -0.3]}, \"velocity\": [0, 0, 20]}]}";
    hy_status s;
    hy_world* w = load(json, 1, &s);
    CHECK(s == HY_OK && w);
    if (!w) return;
    int32_t n_obj = hy_test_object_count(w), bonds0 = hy_test_bond_count(w);
    CHECK(n_obj == 25 && bonds0 == 46);
    double p0 = 0.0, ke0 = 0.0, ke_prev = 0.0;
    int64_t contacts = 0, bad_steps = 0, energy_grew = 0;
    for (int step = 0; step <= 30; step++) {
        if (step > 0) {
            CHECK_OK(hy_test_step(w));
            hy_step_stats st;
            hy_world_get_stats(w, &st);
            contacts += st.contacts;
        }
        int64_t n = -1;
        CHECK_OK(hy_world_find_overlaps(w, HY_OVERLAP_INTERSECTING, NULL, 0, &n));
        if (n != 0) bad_steps++;
        double p[3] = {0, 0, 0}, ke = 0.0;
        for (int32_t i = 0; i < n_obj; i++) {
            hy_object_id obj;
            hy_body_id id = {0, 0};
            hy_world_get_object(w, i, &obj);
            hy_object_as_body(w, obj, &id);
            double v[3], om[3], L[3];
            hy_mass_properties mp;
            hy_body_get_velocity(w, id, v, om);
            hy_body_get_angular_momentum(w, id, L);
            hy_body_get_mass_properties(w, id, &mp);
            for (int k = 0; k < 3; k++) {
                p[k] += mp.mass * v[k];
                ke += 0.5 * (mp.mass * v[k] * v[k] + om[k] * L[k]);
            }
        }
        if (step == 0) {
            p0 = p[2];
            ke0 = ke;
        } else {
            CHECK(fabs(p[2] - p0) <= 0.01 * p0 && fabs(p[0]) <= 0.01 * p0 && fabs(p[1]) <= 0.01 * p0);
            if (ke > ke_prev + 1e-9 * ke0) energy_grew++;
        }
        ke_prev = ke;
    }
    CHECK(bad_steps == 0);
    CHECK(energy_grew == 0);
    CHECK(ke_prev < 0.6 * ke0); /* the impact is inelastic */
    CHECK(contacts > 0);                          /* the projectile did hit the wall */
    CHECK(hy_test_bond_count(w) < bonds0); /* and broke bonds */
    hy_world_destroy(w);
}

/* The same wall under gravity, standing on the floor of a tray walled
 * 0.8 m high, struck at `speed` m/s, then left to come to rest: every step
 * ends with no intersecting triangles; the total energy (kinetic plus
 * potential, m g y) never rises above its lowest value so far by more than
 * the whole mass lifted by one contact thickness (the response puts
 * resting pairs back at the thickness apart, which may lift a piece by
 * up to that: 9 mJ at most here); no piece leaves the tray; and all fall
 * asleep by `asleep_by`, after which no contact is left to find (sleepers
 * are not tested against each other or the floor). */
static void fracture_rests(const char* speed, int32_t asleep_by, int32_t bonds_broken_min) {
    static const char* fmt =
        "{\"solver\": {\"time_step\": 0.004, \"rest_damping\": 5},\n"
        " \"materials\": {\"concrete\": {\"density\": 2000, \"restitution\": 0.2, \"friction\": 0.6, "
        "\"thickness\": 0.001},\n"
        "   \"steel\": {\"density\": 7800, \"restitution\": 0.3, \"friction\": 0.3, \"thickness\": 0.001}},\n"
        " \"objects\": [\n"
        "  {\"type\": \"obstacle\", \"name\": \"floor\", \"material\": \"concrete\", \"mesh\": {\"generator\": "
        "\"box\", \"half_extents\": [1.5, 0.05, 1.5]}, \"transform\": {\"position\": [0, -0.05, 0]}},\n"
        "  {\"type\": \"obstacle\", \"name\": \"front\", \"material\": \"concrete\", \"mesh\": {\"generator\": "
        "\"box\", \"half_extents\": [1.6, 0.4, 0.05]}, \"transform\": {\"position\": [0, 0.4, 1.55]}},\n"
        "  {\"type\": \"obstacle\", \"name\": \"back\", \"material\": \"concrete\", \"mesh\": {\"generator\": "
        "\"box\", \"half_extents\": [1.6, 0.4, 0.05]}, \"transform\": {\"position\": [0, 0.4, -1.55]}},\n"
        "  {\"type\": \"obstacle\", \"name\": \"left\", \"material\": \"concrete\", \"mesh\": {\"generator\": "
        "\"box\", \"half_extents\": [0.05, 0.4, 1.5]}, \"transform\": {\"position\": [-1.55, 0.4, 0]}},\n"
        "  {\"type\": \"obstacle\", \"name\": \"right\", \"material\": \"concrete\", \"mesh\": {\"generator\": "
        "\"box\", \"half_extents\": [0.05, 0.4, 1.5]}, \"transform\": {\"position\": [1.55, 0.4, 0]}},\n"
        "  {\"type\": \"fracture\", \"name\": \"wall\", \"material\": \"concrete\", \"size\": [0.4, 0.3, 0.2],\n"
        "   \"pieces\": [4, 3, 2], \"subdivisions\": 1, \"gap\": 0.004, \"bond_strength\": 3.0,\n"
        "   \"transform\": {\"position\": [0, 0.152, 0]}},\n"
        "  {\"type\": \"body\", \"name\": \"projectile\", \"material\": \"steel\",\n"
        "   \"mesh\": {\"generator\": \"icosphere\", \"radius\": 0.08, \"subdivisions\": 1},\n"
        "   \"transform\": {\"position\": [0.02, 0.16, -0.3]}, \"velocity\": [0, 0, %s]}]}";
    char json[4096];
    snprintf(json, sizeof json, fmt, speed);
    hy_status s;
    hy_world* w = load(json, 1, &s);
    CHECK(s == HY_OK && w);
    if (!w) return;
    int32_t n_obj = hy_test_object_count(w), bonds0 = hy_test_bond_count(w);
    CHECK(n_obj == 30 && bonds0 == 46);
    double mass = 0.0, lowest = INFINITY, worst_rise = -INFINITY;
    int64_t bad_steps = 0, outside = 0, contacts_after = -1;
    int32_t all_asleep_at = -1;
    for (int32_t step = 0; step <= asleep_by + 20; step++) {
        if (step > 0) CHECK_OK(hy_test_step(w));
        int64_t n = -1;
        CHECK_OK(hy_world_find_overlaps(w, HY_OVERLAP_INTERSECTING, NULL, 0, &n));
        if (n != 0) bad_steps++;
        double energy = 0.0;
        int32_t asleep = 0, bodies = 0;
        for (int32_t i = 0; i < n_obj; i++) {
            hy_object_id obj;
            hy_body_id id;
            hy_world_get_object(w, i, &obj);
            if (hy_object_as_body(w, obj, &id)) continue; /* the tray */
            double v[3], om[3], L[3], x[3];
            hy_mass_properties mp;
            int32_t a = 0;
            hy_body_get_velocity(w, id, v, om);
            hy_body_get_angular_momentum(w, id, L);
            hy_body_get_mass_properties(w, id, &mp);
            hy_body_get_transform(w, id, x, NULL);
            hy_body_is_asleep(w, id, &a);
            for (int k = 0; k < 3; k++) energy += 0.5 * (mp.mass * v[k] * v[k] + om[k] * L[k]);
            energy += mp.mass * 9.81 * x[1];
            if (step == 0) mass += mp.mass;
            if (!(x[1] > 0.0 && fabs(x[0]) < 1.5 && fabs(x[2]) < 1.5)) outside++;
            asleep += a;
            bodies++;
        }
        if (step > 0) worst_rise = fmax(worst_rise, energy - lowest);
        lowest = fmin(lowest, energy);
        if (asleep == bodies && all_asleep_at < 0) all_asleep_at = step;
        if (step == asleep_by + 20) {
            hy_step_stats st;
            hy_world_get_stats(w, &st);
            contacts_after = st.contacts;
        }
    }
    CHECK(bad_steps == 0);
    CHECK(worst_rise <= mass * 9.81 * 0.001);
    CHECK(outside == 0);
    CHECK(all_asleep_at > 0 && all_asleep_at <= asleep_by);
    CHECK(contacts_after == 0);
    CHECK(bonds0 - hy_test_bond_count(w) >= bonds_broken_min);
    hy_world_destroy(w);
}

/* At the scene's 20 m/s every bond breaks and the pieces scatter to the
 * tray's walls; at 4 m/s most of the wall stays bonded, and its pieces
 * sleep as each comes to rest, not only once the last of them has. */
static void test_fracture_rests(void) {
    fracture_rests("20", 540, 46);
    fracture_rests("4", 300, 9);
}

int main(void) {
    test_intersecting_bodies();
    test_closer_than_thickness();
    test_nbody_initial_state();
    test_fracture_impact();
    test_fracture_rests();
    TEST_END();
}
