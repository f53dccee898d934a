/* Error reporting: a thread-local message behind hy_last_error(). */
#ifndef HY_CORE_ERROR_H
#define HY_CORE_ERROR_H

#include <assert.h>
#include <stdarg.h>

#include "hyphys/hyphys.h"

/* Record a printf-style message and return `status`, so a failure reads
 * `return hy_fail(HY_ERR_PARSE, "%s:%d: ...", file, line);`. */
hy_status hy_fail(hy_status status, const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;
hy_status hy_failv(hy_status status, const char* fmt, va_list ap);
/* Prefix the current message: "scene.json: " + old message. */
void hy_error_prefix(const char* fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;
void hy_error_clear(void);

/* Internal invariants only; input must never be able to trigger one. */
#ifndef NDEBUG
#define HY_ASSERT(c) assert(c)
#else
#define HY_ASSERT(c) ((void)0)
#endif

#endif
