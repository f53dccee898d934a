#include "core/error.h"

#include <stdio.h>
#include <string.h>

static _Thread_local char g_message[1024];

hy_status hy_failv(hy_status status, const char* fmt, va_list ap) {
    vsnprintf(g_message, sizeof g_message, fmt, ap);
    return status;
}

hy_status hy_fail(hy_status status, const char* fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    hy_failv(status, fmt, ap);
    va_end(ap);
    return status;
}

void hy_error_prefix(const char* fmt, ...) {
    char prefix[512], old[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    memcpy(old, g_message, sizeof old);
    size_t n = strlen(prefix);
    if (n >= sizeof g_message) n = sizeof g_message - 1;
    memcpy(g_message, prefix, n);
    size_t rest = strlen(old);
    if (rest > sizeof g_message - 1 - n) rest = sizeof g_message - 1 - n;
    memcpy(g_message + n, old, rest);
    g_message[n + rest] = '\0';
}

void hy_error_clear(void) { g_message[0] = '\0'; }

HY_API const char* hy_last_error(void) { return g_message; }

HY_API const char* hy_status_name(hy_status s) {
    switch (s) {
    case HY_OK: return "HY_OK";
    case HY_ERR_INVALID_ARG: return "HY_ERR_INVALID_ARG";
    case HY_ERR_BAD_DEF: return "HY_ERR_BAD_DEF";
    case HY_ERR_STALE_ID: return "HY_ERR_STALE_ID";
    case HY_ERR_IO: return "HY_ERR_IO";
    case HY_ERR_PARSE: return "HY_ERR_PARSE";
    case HY_ERR_NUMERIC: return "HY_ERR_NUMERIC";
    case HY_ERR_NOMEM: return "HY_ERR_NOMEM";
    case HY_ERR_UNSUPPORTED: return "HY_ERR_UNSUPPORTED";
    case HY_ERR_INTERNAL: return "HY_ERR_INTERNAL";
    case HY_ERR_OVERLAP: return "HY_ERR_OVERLAP";
    }
    return "HY_ERR_UNKNOWN";
}
