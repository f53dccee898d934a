/* Tests the tet mesh loaders (io/tetgen.c, io/gmsh.c) on small files
 * written to a temporary folder: TetGen .node/.ele (comments, attributes,
 * markers, 0- and 1-based, 10-node elements, a file of the opposite
 * orientation, unused nodes dropped), Gmsh 2.2 and 4.1 (other sections and
 * element types skipped, sparse tags, parametric nodes), and malformed
 * files, each refused with its file, line and fault. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/error.h"
#include "core/tetmesh.h"
#include "io/tetmesh_load.h"
#include "test.h"

static char dir[64];

static const char* write_file(const char* name, const char* text) {
    static char path[8][160];
    static int slot;
    char* p = path[slot++ % 8];
    snprintf(p, 160, "%s/%s", dir, name);
    FILE* f = fopen(p, "wb");
    if (!f) {
        perror(p);
        exit(1);
    }
    fputs(text, f);
    fclose(f);
    return p;
}

static int has(const char* needle) {
    if (strstr(hy_last_error(), needle)) return 1;
    fprintf(stderr, "  message '%s' lacks '%s'\n", hy_last_error(), needle);
    return 0;
}

static double volume6(const hy_tetmesh* m, int32_t e) {
    const int32_t* t = m->tets + 4 * e;
    const double* x = m->positions;
    double d[3][3];
    for (int i = 1; i < 4; i++)
        for (int k = 0; k < 3; k++) d[i - 1][k] = x[3 * t[i] + k] - x[3 * t[0] + k];
    return d[0][0] * (d[1][1] * d[2][2] - d[1][2] * d[2][1]) - d[0][1] * (d[1][0] * d[2][2] - d[1][2] * d[2][0]) +
           d[0][2] * (d[1][0] * d[2][1] - d[1][1] * d[2][0]);
}

static int all_positive(const hy_tetmesh* m) {
    for (int32_t e = 0; e < m->tet_count; e++)
        if (!(volume6(m, e) > 0)) return 0;
    return 1;
}

/* five nodes, two tetrahedra sharing face (1 2 3) (1-based), and a sixth
 * node no element uses */
static const char* NODE1 =
    "# a tetgen node file\n"
    "6 3 1 1\n"
    "1  0 0 0   0.5 1\n"
    "2  1 0 0   0.5 1\n"
    "\n"
    "3  0 1 0   0.5 1  # comment after a node\n"
    "4  0 0 1   0.5 1\n"
    "5  0 0 -1  0.5 1\n"
    "6  9 9 9   0.5 0\n";

static void test_tetgen(void) {
    hy_tetmesh* m = NULL;
    const char* node = write_file("a.node", NODE1);
    const char* ele = write_file("a.ele", "2 4 1\n1 1 2 3 4 7\n2 1 3 2 5 7\n");
    CHECK_OK(hy_tetmesh_load_tetgen(node, ele, &m));
    if (m) {
        CHECK(m->vertex_count == 5 && m->tet_count == 2);
        CHECK(m->tets[0] == 0 && m->tets[3] == 3 && m->tets[7] == 4);
        CHECK(m->positions[3 * 4 + 2] == -1.0);
        CHECK(all_positive(m));
        hy_tetmesh_destroy(m);
    }
    /* the opposite convention, 0-based, no attributes: flipped to positive */
    node = write_file("b.node", "5 3\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 0 0 -1\n");
    ele = write_file("b.ele", "2 4\n0 0 2 1 3\n1 0 1 2 4\n");
    CHECK_OK(hy_tetmesh_load_tetgen(node, ele, &m));
    if (m) {
        CHECK(m->tet_count == 2 && all_positive(m));
        CHECK(m->tets[0] == 0 && m->tets[1] == 2 && m->tets[2] == 3 && m->tets[3] == 1);
        hy_tetmesh_destroy(m);
    }
    /* 10-node elements keep their corners (edge nodes are checked, then
     * dropped as unused) */
    node = write_file("c.node", "6 3\n0 0 0 0\n1 1 0 0\n2 0 1 0\n3 0 0 1\n4 0.5 0 0\n5 0 0.5 0\n");
    ele = write_file("c.ele", "1 10\n0 0 1 2 3 4 5 4 5 4 5\n");
    CHECK_OK(hy_tetmesh_load_tetgen(node, ele, &m));
    if (m) {
        CHECK(m->vertex_count == 4 && m->tet_count == 1 && all_positive(m));
        hy_tetmesh_destroy(m);
    }
}

typedef struct bad_case {
    const char* node;
    const char* ele;
    const char* message; /* after "DIR/" */
} bad_case;

static void test_tetgen_bad(void) {
    static const char* ELE_OK = "2 4 1\n1 1 2 3 4 7\n2 1 3 2 5 7\n";
    const bad_case cases[] = {
        {"", ELE_OK, "x.node:0: empty .node file"},
        {"5 2 0 0\n", ELE_OK, "x.node:1: dimension must be in [3, 3], got 2"},
        {"5 3 0 2\n", ELE_OK, "x.node:1: boundary marker flag must be in [0, 1], got 2"},
        {"2 3\n1 0 0\n", ELE_OK, "x.node:2: node line has 3 fields, expected 4"},
        {"2 3\n1 0 0 abc\n", ELE_OK, "x.node:2: z must be a number, got 'abc'"},
        {"2 3\n1 0 nan 0\n", ELE_OK, "x.node:2: y must be finite"},
        {"3 3\n1 0 0 0\n3 1 0 0\n", ELE_OK, "x.node:3: node index must be in [2, 2], got 3"},
        {"3 3\n2 0 0 0\n", ELE_OK, "x.node:2: the first node's index must be in [0, 1], got 2"},
        {"3 3\n1 0 0 0\n2 1 0 0\n", ELE_OK, "x.node:3: the file ends after 2 of its 3 nodes"},
        {"1 3\n1 0 0 0\n2 1 0 0\n", ELE_OK, "x.node:3: a line after the last of the header's 1 nodes"},
        {"9999999 3\n", ELE_OK, "x.node:1: node count 9999999: the file is too short"},
        {"1 3\n1 0 0\0 0\n", ELE_OK, "x.node:2: NUL byte"},
        {NULL, "2 8\n", "x.ele:1: nodes per element must be 4 or 10, got 8"},
        {NULL, "2 4 1\n1 1 2 3 4 7\n2 1 3 2 9 7\n", "x.ele:3: element 2's node 4 must be in [1, 6], got 9"},
        {NULL, "2 4 1\n1 1 2 3 4 7\n", "x.ele:2: the file ends after 1 of its 2 elements"},
        {NULL, "2 4 1\n1 1 2 3 4\n", "x.ele:2: element line has 5 fields, expected 6"},
        {NULL, "2 4\n1 1 2 3 4\n2 1 2 3 3\n", "x.ele:3: tetrahedron 2 is degenerate"},
        {NULL, "3 4\n1 1 2 3 4\n2 1 3 2 5\n3 1 2 6 6\n", "x.ele:4: tetrahedron 3 is degenerate"},
        {NULL, "3 4\n1 1 2 3 4\n2 1 3 2 5\n3 1 2 3 5\n", "x.ele:4: tetrahedron 3 is inverted"},
        {NULL, "0 4\n", "x.ele: no tetrahedra"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char* node = write_file("x.node", "");
        FILE* f = fopen(node, "wb"); /* the node text may hold a NUL */
        const char* text = cases[k].node ? cases[k].node : NODE1;
        size_t len = strlen(text);
        if (k == 11) len = strlen("1 3\n1 0 0") + 1 + strlen(" 0\n");
        fwrite(text, 1, len, f);
        fclose(f);
        const char* ele = write_file("x.ele", cases[k].ele);
        hy_tetmesh* m = (hy_tetmesh*)&len;
        hy_status st = hy_tetmesh_load_tetgen(node, ele, &m);
        CHECK(st == HY_ERR_PARSE);
        CHECK(m == NULL);
        char want[256];
        snprintf(want, sizeof want, "%s/%s", dir, cases[k].message);
        CHECK(has(want));
    }
    hy_tetmesh* m = NULL;
    char missing[128];
    snprintf(missing, sizeof missing, "%s/none.node", dir);
    CHECK(hy_tetmesh_load_tetgen(missing, missing, &m) == HY_ERR_IO && has("none.node: cannot open"));
}

/* Gmsh 2.2: sparse tags, a skipped $PhysicalNames, a point, a line and a
 * triangle skipped, tetrahedra with two tags; node 60 is used by none. */
static const char* MSH22 =
    "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n"
    "$PhysicalNames\n1\n3 1 \"body\"\n$EndPhysicalNames\n"
    "$Nodes\n6\n10 0 0 0\n20 1 0 0\n30 0 1 0\n40 0 0 1\n50 0 0 -1\n60 5 5 5\n$EndNodes\n"
    "$Elements\n5\n1 15 2 0 1 10\n2 1 2 0 1 10 20\n3 2 2 0 1 10 20 30\n4 4 2 1 1 10 20 30 40\n"
    "5 4 2 1 1 10 30 20 50\n$EndElements\n";

/* The same mesh in 4.1: $Entities skipped, nodes in two blocks (the second
 * parametric on a surface: two extra coordinates), a triangle block and a
 * tetrahedron block. */
static const char* MSH41 =
    "$MeshFormat\n4.1 0 8\n$EndMeshFormat\n"
    "$Entities\n0 0 0 1\n1 0 0 0 1 1 1 0 0\n$EndEntities\n"
    "$Nodes\n2 5 10 50\n"
    "3 1 0 3\n10\n20\n30\n0 0 0\n1 0 0\n0 1 0\n"
    "2 1 1 2\n40\n50\n0 0 1 0.1 0.2\n0 0 -1 0.3 0.4\n"
    "$EndNodes\n"
    "$Elements\n2 3 1 3\n2 1 2 1\n1 10 20 30\n3 1 4 2\n2 10 20 30 40\n3 10 30 20 50\n$EndElements\n";

static void test_gmsh(void) {
    const char* msh[2] = {MSH22, MSH41};
    for (int v = 0; v < 2; v++) {
        hy_tetmesh* m = NULL;
        CHECK_OK(hy_tetmesh_load_gmsh(write_file(v ? "a41.msh" : "a22.msh", msh[v]), &m));
        if (!m) continue;
        CHECK(m->vertex_count == 5 && m->tet_count == 2);
        CHECK(m->tets[0] == 0 && m->tets[1] == 1 && m->tets[2] == 2 && m->tets[3] == 3 && m->tets[7] == 4);
        CHECK(m->positions[3 * 4 + 2] == -1.0);
        CHECK(all_positive(m));
        hy_tetmesh_destroy(m);
    }
}

typedef struct gmsh_case {
    const char* text;
    const char* message;
} gmsh_case;

static void test_gmsh_bad(void) {
    const char* F22 = "$MeshFormat\n2.2 0 8\n$EndMeshFormat\n";
    const char* N22 = "$Nodes\n5\n10 0 0 0\n20 1 0 0\n30 0 1 0\n40 0 0 1\n50 0 0 -1\n$EndNodes\n";
    char buf[16][512];
    const gmsh_case cases[] = {
        {"", "x.msh:0: empty file: no $MeshFormat"},
        {"$MeshFormat\n3.0 0 8\n$EndMeshFormat\n", "x.msh:2: unsupported .msh version '3.0'"},
        {"$MeshFormat\n4.1 1 8\n$EndMeshFormat\n", "x.msh:2: binary .msh files are not read"},
        {"$Nodes\n", "x.msh:1: the file must start with $MeshFormat"},
        {"$MeshFormat\n2.2 0 8\n", "x.msh:2: the file ends where $EndMeshFormat was expected"},
        {(snprintf(buf[0], 512, "%s$Nodes\n2\n1 0 0 0\n2 0 0\n$EndNodes\n", F22), buf[0]),
         "x.msh:7: node line has 3 fields, expected 4"},
        {(snprintf(buf[1], 512, "%s$Nodes\n2\n1 0 0 0\n1 1 0 0\n$EndNodes\n$Elements\n0\n$EndElements\n", F22),
          buf[1]),
         "x.msh:7: node tag 1 is given twice"},
        {(snprintf(buf[2], 512, "%s$Nodes\n1\n1 0 0 0\n$Elements\n", F22), buf[2]),
         "x.msh:7: expected $EndNodes, got '$Elements'"},
        {(snprintf(buf[3], 512, "%s%s$Elements\n1\n1 4 0 10 20 30 99\n$EndElements\n", F22, N22), buf[3]),
         "x.msh:14: element refers to node 99, which $Nodes does not define"},
        {(snprintf(buf[4], 512, "%s%s$Elements\n1\n7 4 0 10 20 30\n$EndElements\n", F22, N22), buf[4]),
         "x.msh:14: tetrahedron 7 (type 4) has 3 node tags, expected 4"},
        {(snprintf(buf[5], 512, "%s$Elements\n0\n$EndElements\n", F22), buf[5]), "x.msh:4: $Elements before $Nodes"},
        {(snprintf(buf[6], 512, "%s%s$Elements\n1\n1 2 0 10 20 30\n$EndElements\n", F22, N22), buf[6]),
         "x.msh: no tetrahedra"},
        {(snprintf(buf[7], 512, "%s%s$Elements\n2\n1 4 0 10 20 30 40\n2 4 0 10 20 30 50\n$EndElements\n", F22, N22),
          buf[7]),
         "x.msh:15: tetrahedron 2 is inverted"},
        {(snprintf(buf[8], 512, "%s$Comments\nabc\n", F22), buf[8]), "x.msh:4: section $Comments never ends"},
        {(snprintf(buf[9], 512, "%sjunk\n", F22), buf[9]), "x.msh:4: expected a section such as $Nodes, got 'junk'"},
        {"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 3 1 3\n3 1 0 2\n1\n2\n0 0 0\n1 0 0\n$EndNodes\n",
         "x.msh:5: the $Nodes header says 3 nodes, the blocks hold 2"},
        {"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 1 1 1\n2 1 1 1\n1\n0 0 0\n$EndNodes\n",
         "x.msh:8: coordinate line has 3 fields, expected 5"},
        {"$MeshFormat\n4.1 0 8\n$EndMeshFormat\n$Nodes\n1 1 1 1\n3 1 0 2\n", "x.msh:6: nodes in block must be in [0, 1], got 2"},
        {(snprintf(buf[10], 512, "%s%s$Elements\n1\n1 4 0 10 20 30 40 50\n$EndElements\n", F22, N22), buf[10]),
         "x.msh:14: tetrahedron 1 (type 4) has 5 node tags, expected 4"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        const char* path = write_file("x.msh", cases[k].text);
        int32_t junk;
        hy_tetmesh* m = (hy_tetmesh*)&junk;
        hy_status st = hy_tetmesh_load_gmsh(path, &m);
        CHECK(st == HY_ERR_PARSE);
        CHECK(m == NULL);
        char want[256];
        snprintf(want, sizeof want, "%s/%s", dir, cases[k].message);
        CHECK(has(want));
    }
    hy_tetmesh* m = NULL;
    /* from memory, with a name of the caller's */
    CHECK(hy_tetmesh_parse_gmsh(MSH22, 20, "cut.msh", &m) == HY_ERR_PARSE && has("cut.msh:2:"));
}

int main(void) {
    snprintf(dir, sizeof dir, "/tmp/hy_tetio_XXXXXX");
    if (!mkdtemp(dir)) TEST_SKIP("no temporary folder");
    test_tetgen();
    test_tetgen_bad();
    test_gmsh();
    test_gmsh_bad();
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
    if (system(cmd) != 0) fprintf(stderr, "could not remove %s\n", dir);
    TEST_END();
}
