/* Line-by-line reading of text mesh files held in memory, for the tet mesh
 * loaders: tokens of the current line, numbers checked inside their token,
 * errors as "FILE:LINE: what", and the common finish (orientation, checks,
 * unused nodes dropped). Internal to io/. */
#ifndef HY_IO_TEXT_LINES_H
#define HY_IO_TEXT_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "core/tetmesh.h"

typedef struct hy_text {
    const char* name;
    const char *p, *end;
    long line;      /* the current line's number (1-based) */
    char comment;   /* a character that starts a comment to the end of the line, or 0 */
    char* buf;      /* the current line, tokens NUL-terminated in place */
    size_t cap;
    char** tok;
    int ntok, cap_tok;
} hy_text;

void hy_text_init(hy_text* t, const char* text, size_t len, const char* name, char comment);
void hy_text_free(hy_text* t);
/* Next line with at least one token: 1; end of text: 0 (the line number
 * then is the last line's); an error (NUL byte, out of memory): -1 with the
 * status in *st. */
int hy_text_next(hy_text* t, hy_status* st);
/* HY_ERR_PARSE with "NAME:LINE: " and the formatted message. */
hy_status hy_text_fail(const hy_text* t, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
/* Token k of the current line as an integer in [lo, hi] / a finite double;
 * `what` names it in the message. */
hy_status hy_text_int(const hy_text* t, int k, const char* what, int64_t lo, int64_t hi, int64_t* out);
hy_status hy_text_double(const hy_text* t, int k, const char* what, double* out);
/* A whole file into memory (HY_ERR_IO naming it on failure); free with
 * hy_mem_free. */
hy_status hy_text_read_file(const char* path, char** data, size_t* len);

/* The elements as read: tets index pos (node_count nodes, 3 doubles each);
 * line[e] and id[e] are element e's line and number in its file `name`.
 * Checks and orients the elements (see io/tetmesh_load.h), drops the unused
 * nodes and builds *out. tets is modified. */
hy_status hy_tetio_finish(const char* name, const double* pos, int32_t node_count, int32_t* tets,
                          const long* line, const int64_t* id, int32_t tet_count, hy_tetmesh** out);

#endif
