/* keys.h — dispatch keys, key sets, and the thread-local include/exclude sets.
 *
 * A key set is a uint64_t with one bit per key; a higher bit is a higher priority, so the
 * kernel to run is the one for the highest set bit (keyset_highest). See Note [Effective
 * key set] in keys.c for how the per-call set is formed. */
#ifndef PITH_DISPATCH_KEYS_H
#define PITH_DISPATCH_KEYS_H

#include <stdbool.h>
#include <stdint.h>

#include "core/grad_mode.h"
#include "core/tensor.h"

typedef enum {
    PITH_KEY_CPU = 0,
    PITH_KEY_META = 1,
    PITH_KEY_PYTHON = 2,
    PITH_KEY_PYTHON_MODE = 3,
    PITH_KEY_AUTOGRAD = 4,
    PITH_NUM_KEYS = 5
} pith_key;

#define PITH_KEYSET(k) ((pith_keyset)1 << (k))
#define PITH_KEYSET_BACKENDS (PITH_KEYSET(PITH_KEY_CPU) | PITH_KEYSET(PITH_KEY_META))

/* The highest key of a non-empty set; -1 for the empty set. */
static inline int keyset_highest(pith_keyset ks)
{
    return ks ? 63 - __builtin_clzll(ks) : -1;
}
/* All keys strictly below `key`. */
static inline pith_keyset keyset_below(int key)
{
    return (PITH_KEYSET(key)) - 1;
}

/* "CPU", "Meta", "Python", "PythonMode", "Autograd"; NULL / -1 for unknown. */
const char *key_name(int key);
int key_from_name(const char *name);

/* The backend key of a device. */
static inline pith_keyset keyset_for_device(pith_device device)
{
    return device == PITH_META ? PITH_KEYSET(PITH_KEY_META) : PITH_KEYSET(PITH_KEY_CPU);
}

/* ---- thread-local include / exclude sets ---- */

typedef struct {
    pith_keyset included;
    pith_keyset excluded;
    /* The interpreter of the active dispatch mode (the Python bindings set it together
     * with including PythonMode); the PythonMode fallback calls into it. See Note [Python
     * fallback] in python_fallback.c. */
    const pith_interpreter *mode_interp;
} pith_tls_keys;

/* Small, hot thread-locals use the initial-exec TLS model: a direct %fs-relative access
 * instead of a __tls_get_addr call on every op. It needs a few bytes of glibc's static
 * TLS surplus when libpith is loaded with dlopen (by the Python extension), which is why
 * only small variables use it. */
#define PITH_TLS_HOT _Thread_local __attribute__((tls_model("initial-exec")))

extern PITH_TLS_HOT pith_tls_keys tls_keys_value;

/* This thread's sets (never NULL). */
static inline pith_tls_keys *tls_keys(void)
{
    return &tls_keys_value;
}

/* The bindings set mode_interp through pith/dispatch.h (pith_keys_set_mode_interpreter). */

/* Note [Effective key set]
 * The set used to pick a kernel is (union of the arguments' tensor key sets | included)
 * & ~excluded. When no argument contributes a backend key (a call with no tensor, or only
 * tensors without a backend), the CPU key stands in: an op always has a backend to land
 * on. Redispatch (a mask applied to a set already made effective) never adds it back, so
 * a kernel that masks out CPU cannot recurse into itself. The Python bindings recompute
 * `included`/`excluded` from the Python thread state on entry (see ARCHITECTURE.md: the
 * mode stack belongs to the Python thread state), so these thread-locals only carry state
 * within one C call chain. */
static inline pith_keyset keyset_effective(pith_keyset from_args)
{
    pith_tls_keys *tls = tls_keys();
    if (!(from_args & PITH_KEYSET_BACKENDS))
        from_args |= PITH_KEYSET(PITH_KEY_CPU);
    /* Inference mode leaves Autograd out, as PyTorch's InferenceMode excludes the autograd
     * keys: See Note [Inference tensors reach the autograd kernels] (core/grad_mode.c). */
    pith_keyset inference = (pith_keyset)grad_mode_tls.inference << PITH_KEY_AUTOGRAD;
    return (from_args | tls->included) & ~(tls->excluded | inference);
}

#endif /* PITH_DISPATCH_KEYS_H */
