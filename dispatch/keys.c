/* keys.c — key names, this thread's include/exclude sets, and the public push/pop guards
 * over them (pith/dispatch.h). Kernel selection lives in registry.c. */
#include <string.h>

#include "core/error.h"
#include "dispatch/keys.h"
#include "pith/dispatch.h"

/* core/ repeats the bits it sets itself (core/tensor.h); they must agree with the keys. */
_Static_assert(TENSOR_KEY_CPU == PITH_KEYSET(PITH_KEY_CPU), "CPU key bit");
_Static_assert(TENSOR_KEY_META == PITH_KEYSET(PITH_KEY_META), "Meta key bit");
_Static_assert(TENSOR_KEY_PYTHON == PITH_KEYSET(PITH_KEY_PYTHON), "Python key bit");
_Static_assert(TENSOR_KEY_AUTOGRAD == PITH_KEYSET(PITH_KEY_AUTOGRAD), "Autograd key bit");

static const char *const key_names[PITH_NUM_KEYS] = {
    [PITH_KEY_CPU] = "CPU",
    [PITH_KEY_META] = "Meta",
    [PITH_KEY_PYTHON] = "Python",
    [PITH_KEY_PYTHON_MODE] = "PythonMode",
    [PITH_KEY_AUTOGRAD] = "Autograd",
};

const char *key_name(int key)
{
    return key >= 0 && key < PITH_NUM_KEYS ? key_names[key] : NULL;
}

int key_from_name(const char *name)
{
    if (!name)
        return -1;
    for (int k = 0; k < PITH_NUM_KEYS; k++)
        if (strcmp(key_names[k], name) == 0)
            return k;
    return -1;
}

PITH_TLS_HOT pith_tls_keys tls_keys_value;

/* ---- public guards ---- */

static pith_status guard_push(const char *key, pith_keys_guard *saved, bool include)
{
    int k = key_from_name(key);
    if (k < 0)
        return pith_set_error(PITH_ERR_VALUE,
                              "unknown dispatch key '%s' (expected CPU, Meta, Python, "
                              "Autograd or PythonMode)",
                              key ? key : "(null)");
    if (!saved)
        return pith_set_error(PITH_ERR_VALUE, "pith_keys_%s: `saved` is NULL",
                              include ? "include" : "exclude");
    *saved = pith_keys_current();
    pith_tls_keys *tls = tls_keys();
    if (include)
        tls->included |= PITH_KEYSET(k);
    else
        tls->excluded |= PITH_KEYSET(k);
    return PITH_OK;
}

pith_status pith_keys_exclude(const char *key, pith_keys_guard *saved)
{
    return guard_push(key, saved, false);
}

pith_status pith_keys_include(const char *key, pith_keys_guard *saved)
{
    return guard_push(key, saved, true);
}

void pith_keys_restore(const pith_keys_guard *saved)
{
    if (!saved)
        return;
    pith_tls_keys *tls = tls_keys();
    tls->included = saved->included;
    tls->excluded = saved->excluded;
}

pith_keys_guard pith_keys_current(void)
{
    pith_tls_keys *tls = tls_keys();
    pith_keys_guard g = {tls->included, tls->excluded};
    return g;
}

void pith_keys_set_mode_interpreter(const pith_interpreter *interp)
{
    tls_keys()->mode_interp = interp;
}

const pith_interpreter *pith_keys_mode_interpreter(void)
{
    return tls_keys()->mode_interp;
}

