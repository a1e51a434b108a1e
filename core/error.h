/* error.h — the thread-local error used by every function in libpith.
 *
 * The protocol: a failing function sets the error with pith_set_error (which returns the
 * status, so `return pith_set_error(...)` reads naturally) and returns NULL, a non-OK
 * status or its sentinel. Success leaves the error as it was (like errno). */
#ifndef PITH_CORE_ERROR_H
#define PITH_CORE_ERROR_H

#include "pith/pith.h"

/* Sets the error and returns NULL: for functions returning a pointer. */
#define PITH_FAIL_NULL(status, ...) (pith_set_error((status), __VA_ARGS__), NULL)

/* Keeps the message of an error already set and prefixes context: the formatted prefix,
 * then ": ", then the old message ("add: <old message>"). Returns the (kept) status; with
 * no error set it sets PITH_ERR_RUNTIME. */
pith_status error_prefix(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* PITH_CORE_ERROR_H */
