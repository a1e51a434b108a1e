/* stats.c — the counters and lists of pith.compiler.stats(), and reset(). */
#include "internal.h"

void list_append_capped(PyObject *list, PyObject *item)
{
    if (list && item && PyList_GET_SIZE(list) < 10000)
        PyList_Append(list, item);
}

PyObject *compile_stats(PyObject *module, PyObject *unused)
{
    (void)unused;
    hook_state *hs = hook_state_of(module);
    if (!hs)
        return NULL;
    PyObject *gf = hs->guard_failures ? PyList_GetSlice(hs->guard_failures, 0, PY_SSIZE_T_MAX)
                                      : PyList_New(0);
    PyObject *sr = hs->skip_reasons ? PyList_GetSlice(hs->skip_reasons, 0, PY_SSIZE_T_MAX)
                                    : PyList_New(0);
    if (!gf || !sr) {
        Py_XDECREF(gf);
        Py_XDECREF(sr);
        return NULL;
    }
    return Py_BuildValue("{s:L,s:L,s:L,s:N,s:L,s:L,s:L,s:N}", "frames_seen", hs->frames_seen,
                         "frames_captured", hs->frames_captured, "frames_skipped",
                         hs->frames_skipped, "skip_reasons", sr, "compiles", hs->compiles,
                         "cache_hits", hs->cache_hits, "evictions", hs->evictions,
                         "guard_failures", gf);
}

PyObject *compile_reset(PyObject *module, PyObject *unused)
{
    (void)unused;
    hook_state *hs = hook_state_of(module);
    if (!hs)
        return NULL;
    for (code_cache *cc = hs->caches; cc; cc = cc->next) {
        code_cache_clear(cc);
        cc->flags &= ~(unsigned)CODE_SKIP;
    }
    hs->frames_seen = hs->frames_captured = hs->frames_skipped = hs->compiles =
        hs->cache_hits = hs->evictions = 0;
    if (hs->guard_failures && PyList_SetSlice(hs->guard_failures, 0, PY_SSIZE_T_MAX, NULL) < 0)
        return NULL;
    if (hs->skip_reasons && PyList_SetSlice(hs->skip_reasons, 0, PY_SSIZE_T_MAX, NULL) < 0)
        return NULL;
    Py_RETURN_NONE;
}

PyObject *compile_cache_size(PyObject *module, PyObject *unused)
{
    (void)unused;
    hook_state *hs = hook_state_of(module);
    if (!hs)
        return NULL;
    long n = 0;
    for (code_cache *cc = hs->caches; cc; cc = cc->next)
        for (int i = 0; i < cc->nbuckets; i++)
            n += cc->buckets[i].n;
    return PyLong_FromLong(n);
}

