/* cache.c — pith.compile's per-code caches: the code caches in the code objects' extra
 * slots, their buckets of entries per instance or function, and runs of an entry's
 * compiled graph that make the frame's result. */
#include <string.h>

#include "internal.h"

/* Note [Dynamic sizes]
 * Graphs are built over stand-ins of fixed sizes, and every size is guarded, so a frame
 * called with a new size compiles a new entry. Compiling costs under a millisecond (0.75-0.9
 * ms for a 4-layer GPT; benchmarks/compile_results.md, "Generation"), so with dynamic=None
 * (the default) or
 * dynamic=True a (code, key) pair whose 8 entries are full evicts its least recently used
 * one: a generation loop whose sequence grows by one token per call keeps compiling and
 * never runs eagerly for good. The entries are kept in order of use, the most recent last
 * (a hit moves its entry there), and guards are tried from the most recent. With
 * dynamic=False the cache limit is final, as torch's recompile limit is: past it the frame
 * runs eagerly, and a UserWarning says so once. Graphs whose sizes are symbolic, planned for
 * the size each run receives, are not built: a dim that changes is recompiled, so a loop
 * that never repeats a size pays a compile per call (a generation loop runs 1.3x slower
 * compiled than eager: docs/compile.md, Limits). */

/* Note [Compile GIL rules]
 * Everything in pith.compile's files (compile/) runs with the GIL of the frame's
 * interpreter: the counts, the caches, the guard checks and translation. A run of a compiled graph with enough work releases
 * the GIL (Note [GIL release], state.h); the entry is held by a reference meanwhile, so a
 * reset() or a recompile on another thread cannot free it, and the arguments are held by
 * the frame being answered. */

/* ---- the code caches ---- */

static void bucket_clear(bucket *b)
{
    for (int i = 0; i < b->n; i++)
        Py_CLEAR(b->entries[i]);
    b->n = 0;
    Py_CLEAR(b->weak); /* its callback never runs once the weak reference is gone */
}

void code_cache_clear(code_cache *cc)
{
    for (int i = 0; i < cc->nbuckets; i++)
        bucket_clear(&cc->buckets[i]);
    cc->nbuckets = 0;
}

/* The code object died (its extra slot's free function). */
void code_cache_free(void *p)
{
    code_cache *cc = p;
    if (!cc)
        return;
    code_cache_clear(cc);
    PyMem_Free(cc->buckets);
    if (cc->prev)
        cc->prev->next = cc->next;
    else if (cc->hs)
        cc->hs->caches = cc->next;
    if (cc->next)
        cc->next->prev = cc->prev;
    PyMem_Free(cc);
}

code_cache *code_cache_get(hook_state *hs, PyCodeObject *co, bool create)
{
    void *extra = NULL;
    if (_PyCode_GetExtra((PyObject *)co, hs->extra_index, &extra) < 0) {
        PyErr_Clear();
        return NULL;
    }
    code_cache *found = extra;
    if (found && !found->hs) {
        /* detached by compile_disarm, and this interpreter compiles again */
        found->hs = hs;
        found->next = hs->caches;
        if (hs->caches)
            hs->caches->prev = found;
        hs->caches = found;
    }
    if (found || !create)
        return found;
    code_cache *cc = PyMem_Calloc(1, sizeof *cc);
    if (!cc) {
        PyErr_NoMemory();
        return NULL;
    }
    cc->hs = hs;
    if (_PyCode_SetExtra((PyObject *)co, hs->extra_index, cc) < 0) {
        PyMem_Free(cc);
        return NULL;
    }
    cc->next = hs->caches;
    if (hs->caches)
        hs->caches->prev = cc;
    hs->caches = cc;
    return cc;
}

static void bucket_remove(code_cache *cc, void *key)
{
    for (int i = 0; i < cc->nbuckets; i++)
        if (cc->buckets[i].key == key) {
            bucket dead = cc->buckets[i];
            cc->buckets[i] = cc->buckets[--cc->nbuckets];
            bucket_clear(&dead);
            return;
        }
}

/* The weak reference's callback: the instance died, so do its entries. `self` is a
 * capsule holding the code cache; the key is the dead object's address, which the weak
 * reference still names (it is compared, never dereferenced). */
static PyObject *bucket_dead(PyObject *self, PyObject *weak)
{
    code_cache *cc = PyCapsule_GetPointer(self, "pith.compile.code_cache");
    if (!cc)
        return NULL;
    for (int i = 0; i < cc->nbuckets; i++)
        if (cc->buckets[i].weak == weak) {
            bucket_remove(cc, cc->buckets[i].key);
            break;
        }
    Py_RETURN_NONE;
}

static PyMethodDef bucket_dead_def = {"_compile_bucket_dead", bucket_dead, METH_O, NULL};

bucket *bucket_get(code_cache *cc, PyObject *instance)
{
    void *key = instance;
    for (int i = 0; i < cc->nbuckets; i++)
        if (cc->buckets[i].key == key) {
            /* move to the front: one Module.__call__ code serves every instance */
            if (i > 0) {
                bucket hit = cc->buckets[i];
                cc->buckets[i] = cc->buckets[0];
                cc->buckets[0] = hit;
            }
            return &cc->buckets[0];
        }
    if (cc->nbuckets == cc->cap) {
        int cap = cc->cap ? 2 * cc->cap : 4;
        bucket *v = PyMem_Realloc(cc->buckets, (size_t)cap * sizeof *v);
        if (!v) {
            PyErr_NoMemory();
            return NULL;
        }
        cc->buckets = v;
        cc->cap = cap;
    }
    bucket b = {0};
    b.key = key;
    if (instance) {
        PyObject *capsule = PyCapsule_New(cc, "pith.compile.code_cache", NULL);
        PyObject *cb = capsule ? PyCFunction_New(&bucket_dead_def, capsule) : NULL;
        Py_XDECREF(capsule);
        b.weak = cb ? PyWeakref_NewRef(instance, cb) : NULL;
        Py_XDECREF(cb);
        if (!b.weak)
            return NULL;
    }
    cc->buckets[cc->nbuckets] = b;
    return &cc->buckets[cc->nbuckets++];
}

/* The least recently used entry of a full bucket is dropped to make room for a new one:
 * See Note [Dynamic sizes]. */
void bucket_evict_oldest(bucket *b)
{
    PyObject *oldest = b->entries[0];
    for (int j = 0; j + 1 < b->n; j++)
        b->entries[j] = b->entries[j + 1];
    b->n--;
    Py_DECREF(oldest);
}

void entry_capsule_free(PyObject *capsule)
{
    compile_entry_free(PyCapsule_GetPointer(capsule, "pith.compile.entry"));
}

/* ---- running an entry ---- */

/* The frame's result from the template; each output is wrapped once (`wrapped`), so a
 * value returned twice is one object, as in eager. */
static PyObject *tmpl_result(pith_module_state *st, const tmpl *t, pith_tensor **outputs,
                             PyObject **wrapped, PyObject *const *localsplus)
{
    switch (t->kind) {
    case TMPL_OUTPUT: {
        if (!wrapped[t->index]) {
            pith_tensor *o = outputs[t->index];
            outputs[t->index] = NULL;
            if (!(wrapped[t->index] = tensor_wrap(st, o)))
                return NULL;
        }
        return Py_NewRef(wrapped[t->index]);
    }
    case TMPL_LOCAL: {
        PyObject *v = access_get(localsplus, &t->at);
        if (!v)
            PyErr_SetString(PyExc_RuntimeError, "pith.compile: an argument vanished");
        return Py_XNewRef(v);
    }
    case TMPL_CONST:
        return Py_NewRef(t->value);
    case TMPL_TUPLE:
    case TMPL_LIST: {
        PyObject *r = t->kind == TMPL_TUPLE ? PyTuple_New(t->n) : PyList_New(t->n);
        for (int i = 0; r && i < t->n; i++) {
            PyObject *item = tmpl_result(st, &t->items[i], outputs, wrapped, localsplus);
            if (!item) {
                Py_CLEAR(r);
                break;
            }
            if (t->kind == TMPL_TUPLE)
                PyTuple_SET_ITEM(r, i, item);
            else
                PyList_SET_ITEM(r, i, item);
        }
        return r;
    }
    }
    return NULL;
}

#define RUN_SMALL 16

PyObject *entry_run(hook_state *hs, PyObject *capsule, PyObject *const *localsplus)
{
    compile_entry *e = PyCapsule_GetPointer(capsule, "pith.compile.entry");
    pith_module_state *st = hs->st;
    pith_tensor *in_small[RUN_SMALL], *out_small[RUN_SMALL];
    PyObject *wrapped_small[RUN_SMALL] = {NULL};
    pith_tensor **inputs = e->ninputs <= RUN_SMALL ? in_small
                                                   : PyMem_Malloc((size_t)e->ninputs * sizeof *inputs);
    pith_tensor **outputs = e->noutputs <= RUN_SMALL
                                ? out_small
                                : PyMem_Calloc((size_t)e->noutputs, sizeof *outputs);
    PyObject **wrapped = e->noutputs <= RUN_SMALL
                             ? wrapped_small
                             : PyMem_Calloc((size_t)e->noutputs, sizeof *wrapped);
    PyObject *result = NULL;
    if (!inputs || !outputs || !wrapped) {
        PyErr_NoMemory();
        goto done;
    }
    for (int i = 0; i < e->ninputs; i++)
        inputs[i] = tensor_of(access_get(localsplus, &e->inputs[i]));
    for (int i = 0; i < e->noutputs; i++)
        outputs[i] = NULL;
    Py_INCREF(capsule); /* Note [Compile GIL rules] */
    pith_status s;
    if (e->work >= PITH_GIL_RELEASE_NUMEL) {
        Py_BEGIN_ALLOW_THREADS
        s = pith_compiled_run(e->compiled, inputs, e->ninputs, outputs, e->noutputs);
        Py_END_ALLOW_THREADS
    } else {
        s = pith_compiled_run(e->compiled, inputs, e->ninputs, outputs, e->noutputs);
    }
    if (s != PITH_OK)
        error_raise(st);
    else
        result = tmpl_result(st, &e->result, outputs, wrapped, localsplus);
    for (int i = 0; i < e->noutputs; i++) {
        if (outputs[i])
            pith_release(outputs[i]);
        Py_XDECREF(wrapped[i]);
    }
    Py_DECREF(capsule);
done:
    if (inputs != in_small)
        PyMem_Free(inputs);
    if (outputs != out_small)
        PyMem_Free(outputs);
    if (wrapped && wrapped != wrapped_small)
        PyMem_Free(wrapped);
    return result;
}

