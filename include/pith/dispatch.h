/* dispatch.h — dispatch keys and guards for C code that registers kernels or fallbacks.
 * Included by nothing else; include it next to pith.h when writing kernels. */
#ifndef PITH_DISPATCH_H
#define PITH_DISPATCH_H

#include "pith/pith.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A saved copy of this thread's include/exclude sets; restore with pith_keys_restore. */
typedef struct {
    uint64_t included;
    uint64_t excluded;
} pith_keys_guard;

/* Push-style guards usable from C: each returns the previous state to restore later.
 * `key` is a key name ("Python", "PythonMode", ...); unknown names are PITH_ERR_VALUE. */
PITH_API pith_status pith_keys_exclude(const char *key, pith_keys_guard *saved);
PITH_API pith_status pith_keys_include(const char *key, pith_keys_guard *saved);
PITH_API void pith_keys_restore(const pith_keys_guard *saved);
PITH_API pith_keys_guard pith_keys_current(void);

/* The interpreter of the active dispatch mode, set by the Python bindings when they include
 * the PythonMode key; the PythonMode fallback calls into it. Thread-local. */
PITH_API void pith_keys_set_mode_interpreter(const pith_interpreter *interp);
PITH_API const pith_interpreter *pith_keys_mode_interpreter(void);

/* A boxed fallback for every op at one key (replacing none registered per op). */
PITH_API pith_status pith_fallback_register(const char *dispatch_key, pith_boxed_kernel fn,
                                            void *ctx);
PITH_API pith_status pith_fallback_unregister(const char *dispatch_key);
/* Marks `dispatch_key` as fallthrough for every op that has no kernel there. */
PITH_API pith_status pith_fallthrough_register(const char *dispatch_key);

/* Calls `op` on the stack with every key at or above `dispatch_key` skipped: what a
 * kernel or fallback does to run the implementation below itself. */
PITH_API pith_status pith_call_boxed_below(const pith_op *op, pith_stack *stack,
                                           const char *dispatch_key);

#ifdef __cplusplus
}
#endif

#endif /* PITH_DISPATCH_H */
