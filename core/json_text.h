/* Where things are in JSON text, for messages that name a line: the line of
 * a parsed item (cJSON keeps no source positions), the line and column of a
 * byte offset, and the two scans that say what is wrong with a malformed
 * text better than the offset where cJSON stopped (a cut-short text, a
 * trailing comma). Shared by the scene loader (engine/scene.c) and the
 * device profiles (sched/model.c). Pure functions of their arguments. */
#ifndef HY_CORE_JSON_TEXT_H
#define HY_CORE_JSON_TEXT_H

#include <cjson/cJSON.h>
#include <stddef.h>

/* Line (1-based) of `item`, a node of the tree `root` that cJSON parsed from
 * src[0, len); a member of an object is reported at its key. 0 when unknown
 * (item or root NULL, item not in the tree, text and tree disagree). */
int hy_json_line_of(const unsigned char* src, size_t len, const cJSON* root, const cJSON* item);

/* Line and column (both 1-based) of byte offset `off` of s[0, n). */
void hy_json_line_col(const unsigned char* s, size_t n, size_t off, int* line, int* col);

/* 1 when s[0, n) ends inside a string or an open object or array, is empty
 * or all whitespace, or ends with ':' or ',': the text was cut short. */
int hy_json_truncated(const unsigned char* s, size_t n);

/* Offset of the first comma that closes nothing but a '}' or ']' (outside
 * strings), n when there is none. */
size_t hy_json_trailing_comma(const unsigned char* s, size_t n);

#endif
