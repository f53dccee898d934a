/* Gmsh .msh loader, ASCII formats 2.2 and 4.1 (see io/tetmesh_load.h).
 *
 * Sections: $MeshFormat first ("<version> <file-type 0> <data-size>"), then
 * $Nodes and $Elements (nodes first); any other section ($PhysicalNames,
 * $Entities, $NodeData, ...) is skipped to its $End line.
 * 2.2: "$Nodes" / count / "tag x y z" lines; "$Elements" / count /
 * "tag type ntags tags... nodes..." lines.
 * 4.1: "$Nodes" / "blocks nodes min-tag max-tag" / per block
 * "dim entity parametric count", count tag lines, count coordinate lines
 * ("x y z" and dim parametric coordinates when parametric is 1);
 * "$Elements" / "blocks elements min-tag max-tag" / per block
 * "dim entity type count", count "tag nodes..." lines.
 * Element type 4 (4-node tetrahedron) and 11 (10-node, corners first) are
 * kept; others are skipped after their line's form is checked. Node tags
 * are any positive integers, each once. Binary files and other versions
 * are refused. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "io/tetmesh_load.h"
#include "io/text_lines.h"

#define MAX_ITEMS (INT64_C(1) << 26)
#define TYPE_TET4 4
#define TYPE_TET10 11

typedef struct node_tag {
    int64_t tag;
    int32_t index;
} node_tag;

typedef struct gmsh_read {
    hy_text t;
    int version; /* 22 or 41 */
    double* pos;
    int64_t* tag; /* per node, in file order */
    long* tag_line;
    int32_t nodes, cap_nodes;
    node_tag* sorted; /* tags sorted for lookup */
    int32_t* tets;
    long* line;
    int64_t* id;
    int32_t ntets, cap_tets;
} gmsh_read;

static hy_status grow(void** p, int32_t* cap, int64_t need, size_t elem, const char* name) {
    if (need <= *cap) return HY_OK;
    int64_t n = *cap ? *cap : 256;
    while (n < need) n *= 2;
    void* q = realloc(*p, (size_t)n * elem);
    if (!q) return hy_fail(HY_ERR_NOMEM, "%s: out of memory", name);
    *p = q;
    return HY_OK;
}

static hy_status add_node(gmsh_read* r, int64_t tag, long line) {
    if (r->nodes >= MAX_ITEMS) return hy_text_fail(&r->t, "more than %lld nodes", (long long)MAX_ITEMS);
    int32_t cap = r->cap_nodes;
    hy_status st = grow((void**)&r->pos, &cap, r->nodes + 1, 3 * sizeof(double), r->t.name);
    if (!st) {
        cap = r->cap_nodes;
        st = grow((void**)&r->tag, &cap, r->nodes + 1, sizeof(int64_t), r->t.name);
    }
    if (!st) {
        cap = r->cap_nodes;
        st = grow((void**)&r->tag_line, &cap, r->nodes + 1, sizeof(long), r->t.name);
    }
    if (st) return st;
    r->cap_nodes = cap;
    r->tag[r->nodes] = tag;
    r->tag_line[r->nodes] = line;
    r->nodes++;
    return HY_OK;
}

static hy_status add_tet(gmsh_read* r, int64_t id) {
    if (r->ntets >= MAX_ITEMS) return hy_text_fail(&r->t, "more than %lld tetrahedra", (long long)MAX_ITEMS);
    int32_t cap = r->cap_tets;
    hy_status st = grow((void**)&r->tets, &cap, r->ntets + 1, 4 * sizeof(int32_t), r->t.name);
    if (!st) {
        cap = r->cap_tets;
        st = grow((void**)&r->line, &cap, r->ntets + 1, sizeof(long), r->t.name);
    }
    if (!st) {
        cap = r->cap_tets;
        st = grow((void**)&r->id, &cap, r->ntets + 1, sizeof(int64_t), r->t.name);
    }
    if (st) return st;
    r->cap_tets = cap;
    r->line[r->ntets] = r->t.line;
    r->id[r->ntets] = id;
    r->ntets++;
    return HY_OK;
}

/* The next line; its absence is an error naming what was expected. */
static hy_status need_line(gmsh_read* r, const char* expected) {
    hy_status st = HY_OK;
    int got = hy_text_next(&r->t, &st);
    if (got < 0) return st;
    if (got == 0) return hy_text_fail(&r->t, "the file ends where %s was expected", expected);
    return HY_OK;
}

static hy_status need_end(gmsh_read* r, const char* end) {
    hy_status st = need_line(r, end);
    if (st) return st;
    if (r->t.ntok != 1 || strcmp(r->t.tok[0], end) != 0)
        return hy_text_fail(&r->t, "expected %s, got '%.40s'", end, r->t.tok[0]);
    return HY_OK;
}

static int tag_cmp(const void* pa, const void* pb) {
    const node_tag *a = pa, *b = pb;
    return (a->tag > b->tag) - (a->tag < b->tag);
}

/* Sort the tags for lookup; a tag given twice is an error at its second line. */
static hy_status index_tags(gmsh_read* r) {
    r->sorted = malloc(sizeof(node_tag) * (size_t)(r->nodes ? r->nodes : 1));
    if (!r->sorted) return hy_fail(HY_ERR_NOMEM, "%s: out of memory", r->t.name);
    for (int32_t i = 0; i < r->nodes; i++) r->sorted[i] = (node_tag){r->tag[i], i};
    qsort(r->sorted, (size_t)r->nodes, sizeof *r->sorted, tag_cmp);
    for (int32_t i = 1; i < r->nodes; i++)
        if (r->sorted[i].tag == r->sorted[i - 1].tag) {
            int32_t later = r->sorted[i].index > r->sorted[i - 1].index ? r->sorted[i].index : r->sorted[i - 1].index;
            return hy_fail(HY_ERR_PARSE, "%s:%ld: node tag %lld is given twice", r->t.name, r->tag_line[later],
                           (long long)r->sorted[i].tag);
        }
    return HY_OK;
}

static hy_status node_index(gmsh_read* r, int k, int64_t* out) {
    int64_t tag;
    hy_status st = hy_text_int(&r->t, k, "node tag", 1, INT64_MAX, &tag);
    if (st) return st;
    node_tag key = {tag, 0};
    const node_tag* f = bsearch(&key, r->sorted, (size_t)r->nodes, sizeof key, tag_cmp);
    if (!f) return hy_text_fail(&r->t, "element refers to node %lld, which $Nodes does not define", (long long)tag);
    *out = f->index;
    return HY_OK;
}

/* Element `id` of `type` whose node tags start at token k. */
static hy_status element(gmsh_read* r, int64_t id, int64_t type, int k) {
    int want = type == TYPE_TET4 ? 4 : type == TYPE_TET10 ? 10 : -1;
    if (want < 0) {
        if (r->t.ntok <= k) return hy_text_fail(&r->t, "element %lld (type %lld) has no nodes", (long long)id,
                                                (long long)type);
        return HY_OK; /* not a tetrahedron: skipped */
    }
    if (r->t.ntok != k + want)
        return hy_text_fail(&r->t, "tetrahedron %lld (type %lld) has %d node tags, expected %d", (long long)id,
                            (long long)type, r->t.ntok - k, want);
    hy_status st = add_tet(r, id);
    if (st) return st;
    for (int i = 0; i < want; i++) {
        int64_t v = 0;
        if ((st = node_index(r, k + i, &v))) return st;
        if (i < 4) r->tets[4 * (r->ntets - 1) + i] = (int32_t)v;
    }
    return HY_OK;
}

static hy_status read_format(gmsh_read* r) {
    hy_status st = need_line(r, "'<version> <file-type> <data-size>'");
    if (st) return st;
    if (r->t.ntok != 3) return hy_text_fail(&r->t, "$MeshFormat needs '<version> <file-type> <data-size>'");
    const char* v = r->t.tok[0];
    if (strcmp(v, "2.2") == 0)
        r->version = 22;
    else if (strcmp(v, "4.1") == 0)
        r->version = 41;
    else
        return hy_text_fail(&r->t, "unsupported .msh version '%.20s' (2.2 and 4.1 are read)", v);
    int64_t type, size;
    if ((st = hy_text_int(&r->t, 1, "file-type", 0, 1, &type))) return st;
    if (type == 1) return hy_text_fail(&r->t, "binary .msh files are not read: save as ASCII");
    if ((st = hy_text_int(&r->t, 2, "data-size", 1, 16, &size))) return st;
    return need_end(r, "$EndMeshFormat");
}

static hy_status read_nodes22(gmsh_read* r) {
    int64_t n;
    hy_status st = need_line(r, "the node count");
    if (!st) st = hy_text_int(&r->t, 0, "node count", 0, MAX_ITEMS, &n);
    if (st) return st;
    if (r->t.ntok != 1) return hy_text_fail(&r->t, "the node count line has %d fields, expected 1", r->t.ntok);
    for (int64_t k = 0; k < n; k++) {
        if ((st = need_line(r, "a node 'tag x y z'"))) return st;
        if (r->t.ntok != 4) return hy_text_fail(&r->t, "node line has %d fields, expected 4 (tag x y z)", r->t.ntok);
        int64_t tag;
        if ((st = hy_text_int(&r->t, 0, "node tag", 1, INT64_MAX, &tag))) return st;
        if ((st = add_node(r, tag, r->t.line))) return st;
        static const char* axis[3] = {"x", "y", "z"};
        for (int a = 0; a < 3; a++)
            if ((st = hy_text_double(&r->t, 1 + a, axis[a], r->pos + 3 * (r->nodes - 1) + a))) return st;
    }
    return need_end(r, "$EndNodes");
}

static hy_status read_nodes41(gmsh_read* r) {
    int64_t blocks, n, lo, hi;
    hy_status st = need_line(r, "'<blocks> <nodes> <min-tag> <max-tag>'");
    if (st) return st;
    if (r->t.ntok != 4) return hy_text_fail(&r->t, "$Nodes header has %d fields, expected 4", r->t.ntok);
    if ((st = hy_text_int(&r->t, 0, "block count", 0, MAX_ITEMS, &blocks)) ||
        (st = hy_text_int(&r->t, 1, "node count", 0, MAX_ITEMS, &n)) ||
        (st = hy_text_int(&r->t, 2, "min tag", 0, INT64_MAX, &lo)) ||
        (st = hy_text_int(&r->t, 3, "max tag", 0, INT64_MAX, &hi)))
        return st;
    int64_t seen = 0;
    long header = r->t.line;
    for (int64_t b = 0; b < blocks; b++) {
        if ((st = need_line(r, "a node block header"))) return st;
        if (r->t.ntok != 4) return hy_text_fail(&r->t, "node block header has %d fields, expected 4", r->t.ntok);
        int64_t dim, entity, param, count;
        if ((st = hy_text_int(&r->t, 0, "entity dimension", 0, 3, &dim)) ||
            (st = hy_text_int(&r->t, 1, "entity tag", INT64_MIN, INT64_MAX, &entity)) ||
            (st = hy_text_int(&r->t, 2, "parametric flag", 0, 1, &param)) ||
            (st = hy_text_int(&r->t, 3, "nodes in block", 0, n - seen, &count)))
            return st;
        int32_t first = r->nodes;
        for (int64_t k = 0; k < count; k++) {
            if ((st = need_line(r, "a node tag"))) return st;
            if (r->t.ntok != 1) return hy_text_fail(&r->t, "node tag line has %d fields, expected 1", r->t.ntok);
            int64_t tag;
            if ((st = hy_text_int(&r->t, 0, "node tag", 1, INT64_MAX, &tag))) return st;
            if ((st = add_node(r, tag, r->t.line))) return st;
        }
        int fields = 3 + (param ? (int)dim : 0);
        for (int64_t k = 0; k < count; k++) {
            if ((st = need_line(r, "node coordinates"))) return st;
            if (r->t.ntok != fields)
                return hy_text_fail(&r->t, "coordinate line has %d fields, expected %d", r->t.ntok, fields);
            static const char* axis[3] = {"x", "y", "z"};
            for (int a = 0; a < 3; a++)
                if ((st = hy_text_double(&r->t, a, axis[a], r->pos + 3 * (first + k) + a))) return st;
        }
        seen += count;
    }
    if (seen != n)
        return hy_fail(HY_ERR_PARSE, "%s:%ld: the $Nodes header says %lld nodes, the blocks hold %lld", r->t.name,
                       header, (long long)n, (long long)seen);
    return need_end(r, "$EndNodes");
}

static hy_status read_elements22(gmsh_read* r) {
    int64_t n;
    hy_status st = need_line(r, "the element count");
    if (!st) st = hy_text_int(&r->t, 0, "element count", 0, MAX_ITEMS, &n);
    if (st) return st;
    if (r->t.ntok != 1) return hy_text_fail(&r->t, "the element count line has %d fields, expected 1", r->t.ntok);
    for (int64_t k = 0; k < n; k++) {
        if ((st = need_line(r, "an element 'tag type ntags tags... nodes...'"))) return st;
        int64_t id, type, ntags;
        if ((st = hy_text_int(&r->t, 0, "element tag", 1, INT64_MAX, &id)) ||
            (st = hy_text_int(&r->t, 1, "element type", 1, 1000, &type)) ||
            (st = hy_text_int(&r->t, 2, "tag count", 0, 1000, &ntags)))
            return st;
        if ((st = element(r, id, type, 3 + (int)ntags))) return st;
    }
    return need_end(r, "$EndElements");
}

static hy_status read_elements41(gmsh_read* r) {
    int64_t blocks, n, lo, hi;
    hy_status st = need_line(r, "'<blocks> <elements> <min-tag> <max-tag>'");
    if (st) return st;
    if (r->t.ntok != 4) return hy_text_fail(&r->t, "$Elements header has %d fields, expected 4", r->t.ntok);
    if ((st = hy_text_int(&r->t, 0, "block count", 0, MAX_ITEMS, &blocks)) ||
        (st = hy_text_int(&r->t, 1, "element count", 0, MAX_ITEMS, &n)) ||
        (st = hy_text_int(&r->t, 2, "min tag", 0, INT64_MAX, &lo)) ||
        (st = hy_text_int(&r->t, 3, "max tag", 0, INT64_MAX, &hi)))
        return st;
    int64_t seen = 0;
    long header = r->t.line;
    for (int64_t b = 0; b < blocks; b++) {
        if ((st = need_line(r, "an element block header"))) return st;
        if (r->t.ntok != 4) return hy_text_fail(&r->t, "element block header has %d fields, expected 4", r->t.ntok);
        int64_t dim, entity, type, count;
        if ((st = hy_text_int(&r->t, 0, "entity dimension", 0, 3, &dim)) ||
            (st = hy_text_int(&r->t, 1, "entity tag", INT64_MIN, INT64_MAX, &entity)) ||
            (st = hy_text_int(&r->t, 2, "element type", 1, 1000, &type)) ||
            (st = hy_text_int(&r->t, 3, "elements in block", 0, n - seen, &count)))
            return st;
        for (int64_t k = 0; k < count; k++) {
            if ((st = need_line(r, "an element 'tag nodes...'"))) return st;
            int64_t id;
            if ((st = hy_text_int(&r->t, 0, "element tag", 1, INT64_MAX, &id))) return st;
            if ((st = element(r, id, type, 1))) return st;
        }
        seen += count;
    }
    if (seen != n)
        return hy_fail(HY_ERR_PARSE, "%s:%ld: the $Elements header says %lld elements, the blocks hold %lld",
                       r->t.name, header, (long long)n, (long long)seen);
    return need_end(r, "$EndElements");
}

/* Skip a section to its "$End<name>" line. */
static hy_status skip_section(gmsh_read* r, const char* tok) {
    char name[64], end[80]; /* copied: the next line overwrites the token */
    snprintf(name, sizeof name, "%.60s", tok);
    snprintf(end, sizeof end, "$End%.60s", name + 1);
    long start = r->t.line;
    for (;;) {
        hy_status st = HY_OK;
        int got = hy_text_next(&r->t, &st);
        if (got < 0) return st;
        if (got == 0)
            return hy_fail(HY_ERR_PARSE, "%s:%ld: section %.60s never ends (no %s)", r->t.name, start, name, end);
        if (strcmp(r->t.tok[0], end) == 0) return HY_OK;
    }
}

static hy_status parse(gmsh_read* r) {
    int have_nodes = 0, have_elements = 0;
    for (;;) {
        hy_status st = HY_OK;
        int got = hy_text_next(&r->t, &st);
        if (got < 0) return st;
        if (got == 0) break;
        const char* s = r->t.tok[0];
        if (s[0] != '$') return hy_text_fail(&r->t, "expected a section such as $Nodes, got '%.40s'", s);
        if (!r->version && strcmp(s, "$MeshFormat") != 0)
            return hy_text_fail(&r->t, "the file must start with $MeshFormat, got '%.40s'", s);
        if (strcmp(s, "$MeshFormat") == 0) {
            if (r->version) return hy_text_fail(&r->t, "a second $MeshFormat");
            st = read_format(r);
        } else if (strcmp(s, "$Nodes") == 0) {
            if (have_nodes) return hy_text_fail(&r->t, "a second $Nodes section");
            st = r->version == 22 ? read_nodes22(r) : read_nodes41(r);
            if (!st) st = index_tags(r);
            have_nodes = 1;
        } else if (strcmp(s, "$Elements") == 0) {
            if (!have_nodes) return hy_text_fail(&r->t, "$Elements before $Nodes");
            if (have_elements) return hy_text_fail(&r->t, "a second $Elements section");
            st = r->version == 22 ? read_elements22(r) : read_elements41(r);
            have_elements = 1;
        } else {
            st = skip_section(r, s);
        }
        if (st) return st;
    }
    if (!r->version) return hy_text_fail(&r->t, "empty file: no $MeshFormat");
    if (!have_nodes) return hy_text_fail(&r->t, "no $Nodes section");
    if (!have_elements) return hy_text_fail(&r->t, "no $Elements section");
    return HY_OK;
}

hy_status hy_tetmesh_parse_gmsh(const char* text, size_t len, const char* name, hy_tetmesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "gmsh: NULL out");
    *out = NULL;
    gmsh_read r = {0};
    hy_text_init(&r.t, text, len, name ? name : "(msh text)", 0);
    hy_status st = parse(&r);
    if (!st) st = hy_tetio_finish(r.t.name, r.pos, r.nodes, r.tets, r.line, r.id, r.ntets, out);
    hy_text_free(&r.t);
    free(r.pos);
    free(r.tag);
    free(r.tag_line);
    free(r.sorted);
    free(r.tets);
    free(r.line);
    free(r.id);
    return st;
}

hy_status hy_tetmesh_load_gmsh(const char* path, hy_tetmesh** out) {
    if (!out) return hy_fail(HY_ERR_INVALID_ARG, "gmsh: NULL out");
    *out = NULL;
    char* text = NULL;
    size_t len;
    hy_status st = hy_text_read_file(path, &text, &len);
    if (!st) st = hy_tetmesh_parse_gmsh(text, len, path, out);
    free(text);
    return st;
}
