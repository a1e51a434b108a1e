/* error.c — the thread-local error: status plus message (see core/error.h).
 *
 * Errors are per thread, so an error set inside an OpenMP worker is lost: validation
 * happens before any parallel region (ARCHITECTURE.md). */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "core/error.h"

#define ERROR_MESSAGE_CAP 1024

static _Thread_local pith_status error_status = PITH_OK;
static _Thread_local char error_message[ERROR_MESSAGE_CAP];

const char *pith_last_error(void)
{
    return error_status == PITH_OK ? "" : error_message;
}

pith_status pith_last_status(void)
{
    return error_status;
}

void pith_clear_error(void)
{
    error_status = PITH_OK;
    error_message[0] = '\0';
}

static pith_status error_set_v(pith_status status, const char *prefix, const char *fmt,
                               va_list ap)
{
    /* Format into a scratch buffer first: the arguments may point into error_message
     * (a caller re-raising pith_last_error()). */
    char scratch[ERROR_MESSAGE_CAP];
    int n = 0;
    if (prefix)
        n = snprintf(scratch, sizeof scratch, "%s", prefix);
    if (n < 0)
        n = 0;
    if ((size_t)n < sizeof scratch)
        vsnprintf(scratch + n, sizeof scratch - (size_t)n, fmt ? fmt : "", ap);
    memcpy(error_message, scratch, sizeof scratch);
    /* OK is not an error: keep the protocol "non-OK status with a message". */
    error_status = status == PITH_OK ? PITH_ERR_RUNTIME : status;
    return error_status;
}

pith_status pith_set_error(pith_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    pith_status s = error_set_v(status, NULL, fmt, ap);
    va_end(ap);
    return s;
}

pith_status error_prefix(const char *fmt, ...)
{
    char prefix[ERROR_MESSAGE_CAP];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(prefix, sizeof prefix, fmt, ap);
    va_end(ap);
    pith_status status = error_status == PITH_OK ? PITH_ERR_RUNTIME : error_status;
    const char *old = error_status == PITH_OK ? "unknown error" : error_message;
    return pith_set_error(status, "%s: %s", prefix, old);
}

const char *pith_status_name(pith_status status)
{
    switch (status) {
    case PITH_OK: return "PITH_OK";
    case PITH_ERR_VALUE: return "PITH_ERR_VALUE";
    case PITH_ERR_TYPE: return "PITH_ERR_TYPE";
    case PITH_ERR_INDEX: return "PITH_ERR_INDEX";
    case PITH_ERR_NOMEM: return "PITH_ERR_NOMEM";
    case PITH_ERR_NOT_IMPLEMENTED: return "PITH_ERR_NOT_IMPLEMENTED";
    case PITH_ERR_RUNTIME: return "PITH_ERR_RUNTIME";
    case PITH_ERR_INTERPRETER: return "PITH_ERR_INTERPRETER";
    }
    return "PITH_ERR_UNKNOWN";
}
