/* TetGen .node/.ele loader (see io/tetmesh_load.h).
 *
 * .node: a header "<nodes> <dimension = 3> [<attributes> [<markers 0|1>]]",
 * then one line per node "<index> <x> <y> <z> <attributes...> [<marker>]".
 * .ele: a header "<elements> <nodes per element 4|10> [<attributes>]",
 * then "<index> <n1> ... <n4|n10> <attributes...>". '#' starts a comment;
 * blank lines are skipped. Indices are consecutive from 0 or 1 (the first
 * node's sets the base, which the elements' node numbers use too); a
 * 10-node element keeps its four corners. Anything else — a wrong field
 * count, a number out of range, a missing or extra line — is an error
 * naming file and line. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/tetmesh_load.h"
#include "io/text_lines.h"

#define MAX_ITEMS (INT64_C(1) << 26)

typedef struct tetgen_read {
    double* pos;
    int32_t* tets;
    long* line;
    int64_t* id;
} tetgen_read;

static void read_free(tetgen_read* r) {
    free(r->pos);
    free(r->tets);
    free(r->line);
    free(r->id);
}

/* A header's count, bounded by what the text could hold (a line is at
 * least two bytes), so a lying header cannot make us allocate much. */
static hy_status header_count(hy_text* t, const char* what, size_t len, int64_t* n) {
    hy_status st = hy_text_int(t, 0, what, 0, MAX_ITEMS, n);
    if (st) return st;
    if ((uint64_t)*n > len / 2 + 1)
        return hy_text_fail(t, "%s %lld: the file is too short to hold them", what, (long long)*n);
    return HY_OK;
}

static hy_status read_nodes(hy_text* t, size_t len, tetgen_read* r, int32_t* count, int64_t* base) {
    hy_status st = HY_OK;
    int got = hy_text_next(t, &st);
    if (got < 0) return st;
    if (got == 0) return hy_text_fail(t, "empty .node file: expected the header '<nodes> 3 [<attributes> [<markers>]]'");
    int64_t n, dim, nattr = 0, nbm = 0;
    if ((st = header_count(t, "node count", len, &n))) return st;
    if ((st = hy_text_int(t, 1, "dimension", 3, 3, &dim))) return st;
    if (t->ntok > 2 && (st = hy_text_int(t, 2, "attribute count", 0, 1000, &nattr))) return st;
    if (t->ntok > 3 && (st = hy_text_int(t, 3, "boundary marker flag", 0, 1, &nbm))) return st;
    if (t->ntok > 4) return hy_text_fail(t, "the header has %d fields, at most 4 expected", t->ntok);
    r->pos = malloc(sizeof(double) * 3 * (size_t)(n ? n : 1));
    if (!r->pos) return hy_fail(HY_ERR_NOMEM, "%s: out of memory for %lld nodes", t->name, (long long)n);
    int fields = 4 + (int)nattr + (int)nbm;
    for (int64_t k = 0; k < n; k++) {
        got = hy_text_next(t, &st);
        if (got < 0) return st;
        if (got == 0) return hy_text_fail(t, "the file ends after %lld of its %lld nodes", (long long)k, (long long)n);
        if (t->ntok != fields)
            return hy_text_fail(t, "node line has %d fields, expected %d (index, x, y, z, %lld attributes, %lld markers)",
                                t->ntok, fields, (long long)nattr, (long long)nbm);
        int64_t index;
        if (k == 0) {
            if ((st = hy_text_int(t, 0, "the first node's index", 0, 1, &index))) return st;
            *base = index;
        } else if ((st = hy_text_int(t, 0, "node index", *base + k, *base + k, &index))) {
            return st;
        }
        static const char* axis[3] = {"x", "y", "z"};
        for (int a = 0; a < 3; a++)
            if ((st = hy_text_double(t, 1 + a, axis[a], r->pos + 3 * k + a))) return st;
    }
    got = hy_text_next(t, &st);
    if (got < 0) return st;
    if (got > 0) return hy_text_fail(t, "a line after the last of the header's %lld nodes", (long long)n);
    if (n == 0) return hy_text_fail(t, "no nodes");
    *count = (int32_t)n;
    return HY_OK;
}

static hy_status read_elements(hy_text* t, size_t len, tetgen_read* r, int32_t nodes, int64_t base, int32_t* count) {
    hy_status st = HY_OK;
    int got = hy_text_next(t, &st);
    if (got < 0) return st;
    if (got == 0) return hy_text_fail(t, "empty .ele file: expected the header '<elements> 4|10 [<attributes>]'");
    int64_t n, npt, nattr = 0;
    if ((st = header_count(t, "element count", len, &n))) return st;
    if ((st = hy_text_int(t, 1, "nodes per element", 4, 10, &npt))) return st;
    if (npt != 4 && npt != 10) return hy_text_fail(t, "nodes per element must be 4 or 10, got %lld", (long long)npt);
    if (t->ntok > 2 && (st = hy_text_int(t, 2, "attribute count", 0, 1000, &nattr))) return st;
    if (t->ntok > 3) return hy_text_fail(t, "the header has %d fields, at most 3 expected", t->ntok);
    size_t sn = (size_t)(n ? n : 1);
    r->tets = malloc(4 * sn * sizeof *r->tets);
    r->line = malloc(sn * sizeof *r->line);
    r->id = malloc(sn * sizeof *r->id);
    if (!r->tets || !r->line || !r->id)
        return hy_fail(HY_ERR_NOMEM, "%s: out of memory for %lld elements", t->name, (long long)n);
    int fields = 1 + (int)npt + (int)nattr;
    int64_t first = 0;
    for (int64_t k = 0; k < n; k++) {
        got = hy_text_next(t, &st);
        if (got < 0) return st;
        if (got == 0)
            return hy_text_fail(t, "the file ends after %lld of its %lld elements", (long long)k, (long long)n);
        if (t->ntok != fields)
            return hy_text_fail(t, "element line has %d fields, expected %d (index, %lld nodes, %lld attributes)",
                                t->ntok, fields, (long long)npt, (long long)nattr);
        int64_t index;
        if (k == 0) {
            if ((st = hy_text_int(t, 0, "the first element's index", 0, 1, &index))) return st;
            first = index;
        } else if ((st = hy_text_int(t, 0, "element index", first + k, first + k, &index))) {
            return st;
        }
        for (int i = 0; i < 4; i++) {
            int64_t v;
            char what[64];
            snprintf(what, sizeof what, "element %lld's node %d", (long long)index, i + 1);
            if ((st = hy_text_int(t, 1 + i, what, base, base + nodes - 1, &v))) return st;
            r->tets[4 * k + i] = (int32_t)(v - base);
        }
        for (int i = 4; i < npt; i++) { /* the quadratic element's edge nodes: checked, unused */
            int64_t v;
            if ((st = hy_text_int(t, 1 + i, "edge node", base, base + nodes - 1, &v))) return st;
        }
        r->line[k] = t->line;
        r->id[k] = index;
    }
    got = hy_text_next(t, &st);
    if (got < 0) return st;
    if (got > 0) return hy_text_fail(t, "a line after the last of the header's %lld elements", (long long)n);
    *count = (int32_t)n;
    return HY_OK;
}

hy_status hy_tetmesh_parse_tetgen(const char* node_text, size_t node_len, const char* node_name,
                                  const char* ele_text, size_t ele_len, const char* ele_name, hy_tetmesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "tetgen: NULL out");
    *out = NULL;
    if (!node_name) node_name = "(node text)";
    if (!ele_name) ele_name = "(ele text)";
    tetgen_read r = {0};
    hy_text t;
    int32_t nodes = 0, tets = 0;
    int64_t base = 0;
    hy_text_init(&t, node_text, node_len, node_name, '#');
    hy_status st = read_nodes(&t, node_len, &r, &nodes, &base);
    hy_text_free(&t);
    if (!st) {
        hy_text_init(&t, ele_text, ele_len, ele_name, '#');
        st = read_elements(&t, ele_len, &r, nodes, base, &tets);
        hy_text_free(&t);
    }
    if (!st) st = hy_tetio_finish(ele_name, r.pos, nodes, r.tets, r.line, r.id, tets, out);
    read_free(&r);
    return st;
}

hy_status hy_tetmesh_load_tetgen(const char* node_path, const char* ele_path, hy_tetmesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "tetgen: NULL out");
    *out = NULL;
    char *node = NULL, *ele = NULL;
    size_t node_len, ele_len;
    hy_status st = hy_text_read_file(node_path, &node, &node_len);
    if (!st) st = hy_text_read_file(ele_path, &ele, &ele_len);
    if (!st) st = hy_tetmesh_parse_tetgen(node, node_len, node_path, ele, ele_len, ele_path, out);
    free(node);
    free(ele);
    return st;
}
