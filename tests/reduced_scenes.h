/* Reduced versions of the benchmark scenes that the collision tests run:
 * cloth_ball with its grid's vertex counts left to the test (two %d), and
 * nbody as 2 x 2 x 2 balls and cones (seeded placement) into a bowl; and
 * two stacked FEM blocks for the integration recordings and traces. */
#ifndef HY_TESTS_REDUCED_SCENES_H
#define HY_TESTS_REDUCED_SCENES_H

static const char* const hy_test_cloth_ball_json =
    "{\"solver\": {\"time_step\": 0.01, \"substeps\": 1},"
    " \"materials\": {\"cotton\": {\"density\": 0.15, \"stretch_stiffness\": 1000, \"shear_stiffness\": 100,"
    "   \"bend_stiffness\": 0.5, \"damping\": 0.01, \"air_damping\": 0.02, \"thickness\": 0.002, \"friction\": 0.6},"
    "   \"rubber\": {\"friction\": 0.8, \"thickness\": 0.002}},"
    " \"objects\": ["
    "  {\"type\": \"cloth\", \"name\": \"sheet\", \"material\": \"cotton\","
    "   \"mesh\": {\"generator\": \"grid\", \"vertices\": [%d, %d], \"size\": [2.0, 2.0]},"
    "   \"transform\": {\"position\": [0, 0.65, 0]}},"
    "  {\"type\": \"obstacle\", \"name\": \"ball\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"icosphere\", \"radius\": 0.5, \"subdivisions\": 3},"
    "   \"motion\": {\"rotate\": {\"axis\": [0, 1, 0], \"rate\": 2.0, \"pivot\": [0, 0, 0]}}}]}";

static const char* const hy_test_nbody_json =
    "{\"solver\": {\"time_step\": 0.005, \"substeps\": 1},"
    " \"materials\": {\"wood\": {\"density\": 700, \"restitution\": 0.3, \"friction\": 0.4, \"thickness\": 0.001},"
    "   \"ceramic\": {\"friction\": 0.3, \"thickness\": 0.001}},"
    " \"objects\": ["
    "  {\"type\": \"obstacle\", \"name\": \"bowl\", \"material\": \"ceramic\","
    "   \"mesh\": {\"generator\": \"bowl\", \"radius\": 1.0, \"slices\": 32, \"stacks\": 8}},"
    "  {\"type\": \"body\", \"name\": \"piece\", \"material\": \"wood\","
    "   \"meshes\": [{\"generator\": \"icosphere\", \"radius\": 0.15, \"subdivisions\": 2},"
    "              {\"generator\": \"cone\", \"radius\": 0.15, \"height\": 0.3, \"slices\": 17}],"
    "   \"transform\": {\"position\": [0, 0.9, 0]},"
    "   \"array\": {\"count\": [2, 2, 2], \"spacing\": [0.42, 0.42, 0.42], \"jitter\": 0.04, \"seed\": 7,"
    "             \"random_rotation\": true}}]}";

/* Two FEM blocks of 64 nodes, the upper one 2 mm above the lower, which
 * rests on a floor: they touch from the second step, and collision
 * detection has work from the first. */
static const char* const hy_test_fem_stack_json =
    "{\"solver\": {\"time_step\": 0.01},"
    " \"materials\": {\"rubber\": {\"young\": 50000, \"poisson\": 0.3, \"density\": 1000, \"damping\": 0.01}},"
    " \"objects\": ["
    "  {\"type\": \"obstacle\", \"name\": \"floor\", \"mesh\": {\"generator\": \"box\","
    "   \"half_extents\": [1, 0.05, 1]}, \"transform\": {\"position\": [0, -0.05, 0]}},"
    "  {\"type\": \"fem\", \"name\": \"low\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.15, 0.15, 0.15], \"cells\": [3, 3, 3]},"
    "   \"transform\": {\"position\": [0, 0.077, 0]}},"
    "  {\"type\": \"fem\", \"name\": \"high\", \"material\": \"rubber\","
    "   \"mesh\": {\"generator\": \"block\", \"size\": [0.15, 0.15, 0.15], \"cells\": [3, 3, 3]},"
    "   \"transform\": {\"position\": [0, 0.229, 0]}}"
    " ]}";

#endif
