/* guards.c — pith.compile's guards: made while translating (on every Python value that a
 * translation reads: Note [Guard soundness]) and checked by the hook before a cache entry
 * answers a frame, with the words that say which one failed. */
#include <string.h>

#include "translate.h"

/* Note [Guard soundness]
 * An entry answers a frame only when every one of its guards holds, and its guards cover
 * every Python value that the translation read and that could change between calls:
 *  - each argument the frame receives: a tensor by exact type, dtype, device, sizes and
 *    strides (GUARD_TENSOR; its data is the graph's input at every run); a None, bool,
 *    int, float or str by exact type and value, floats bit for bit (GUARD_VALUE, so -0.0
 *    is not 0.0); a pith.nn.Module by identity through a weak reference (GUARD_WEAK), so
 *    that an entry never keeps a module alive; anything else by identity (GUARD_IDENTITY);
 *  - each read of a dict (globals, builtins, a module's or an instance's __dict__, a
 *    module's _parameters, _buffers and _modules): the names read and what they held,
 *    absence included (GUARD_DICT_KEYS). The dict's version tag is the fast path: in 3.11
 *    it changes on every write to the dict, so a mismatch rechecks the names read and
 *    refreshes the tag when they still hold (a script's loop rewrites __main__'s globals on
 *    every iteration). A dict whose whole content was read (iterated, its length or truth
 *    taken) must be unchanged (GUARD_DICT_EXACT);
 *  - each attribute lookup through a type: the object's type and the type's version tag
 *    (GUARD_TYPE), which CPython changes when the type or a base is modified, and that the
 *    object's __dict__ is the dict read (GUARD_OBJ_DICT: `obj.__dict__ = {}` does not
 *    touch the old dict's tag);
 *  - each Python function inlined: its code, defaults, kwdefaults and closure (GUARD_FUNC);
 *    each closure cell read: its content (GUARD_CELL). Functions, cells and containers
 *    that the translation itself made (a nested function, a lambda, a list it built) need
 *    no guard: nothing outside sees them; the frame may not return one (tmpl_build);
 *  - each parameter or buffer: that it still wraps the same C tensor with the same
 *    metadata (GUARD_PARAM). Its data is read at every run (pith_graph_param), so an
 *    in-place update needs no recompile;
 *  - grad mode and the default dtype (GUARD_GRAD_MODE, GUARD_DEFAULT_DTYPE);
 *  - that a tensor argument, and a parameter whose attributes the translation read, has no
 *    instance attributes (x.relu = ... would shadow Tensor.relu); that tensor arguments do
 *    not share memory when the graph writes in place (GUARD_NO_ALIAS);
 *  - pith.Tensor's own version tag (GUARD_TYPE_VERSION), for every method looked up on it.
 * Guards are checked in order, and the objects they hold are strong references (except the
 * weak module arguments), so no check reads freed memory. What the translation cannot
 * guard it refuses: the frame then runs eagerly. Values that eager code computes from
 * guarded ones (x.shape[0], a Python sum of them) need no guard of their own.
 * Reads never run user Python: attribute lookup is done here, by the rules of
 * PyObject_GenericGetAttr, and a property, a custom __getattribute__, a data descriptor
 * other than those of the C types, or a __getattr__ other than pith.nn.Module's is refused.
 * Calls run only C code of pith's binder (recorded into the graph: Note [Recording calls
 * into a graph], binder.c), a short list of pure queries of tensor metadata, and builtins
 * on values of the types above. */

/* Note [Guard index]
 * The guards that exist once per subject (a dict's keys, an object's type, a function, ...)
 * are found again on every read of that subject, and a module of a few layers makes
 * hundreds of guards and thousands of reads: a scan of the guard array per read made
 * translation quadratic in the model's size (on a 4-layer GPT, 15% of a recompile's time
 * went to scans and the label strings around them). So such a guard is also entered in an
 * open-addressing table keyed by (kind, subject identity), and guard_find looks it up
 * there. The subject stays alive for the whole translation (the guard holds it, or it is an
 * argument in the frame), so its address cannot be reused for another subject meanwhile;
 * guards are only ever appended, so an index into the guard array stays valid. */

/* ---- guards ---- */

guard *guard_add(tx *x, guard_kind kind)
{
    if (x->nguards == x->cap_guards) {
        int cap = x->cap_guards ? 2 * x->cap_guards : 16;
        guard *v = PyMem_Realloc(x->guards, (size_t)cap * sizeof *v);
        if (!v) {
            PyErr_NoMemory();
            return NULL;
        }
        x->guards = v;
        x->cap_guards = cap;
    }
    guard *gd = &x->guards[x->nguards++];
    memset(gd, 0, sizeof *gd);
    gd->kind = kind;
    gd->at.local = -1;
    gd->at.index = -1;
    return gd;
}

static size_t guard_slot_of(const void *key, int kind, int cap)
{
    uint64_t h = ((uint64_t)(uintptr_t)key >> 4) * UINT64_C(0x9E3779B97F4A7C15);
    h ^= (uint64_t)kind * UINT64_C(0xC2B2AE3D27D4EB4F);
    return (size_t)(h >> 32) & (size_t)(cap - 1);
}

/* The guard of `kind` on `key` that guard_add_keyed made, or NULL. See Note [Guard index]. */
guard *guard_find(const tx *x, guard_kind kind, const void *key)
{
    if (!x->index_cap)
        return NULL;
    size_t mask = (size_t)x->index_cap - 1;
    for (size_t i = guard_slot_of(key, kind, x->index_cap);; i = (i + 1) & mask) {
        const guard_slot *s = &x->guard_index[i];
        if (!s->key)
            return NULL;
        if (s->key == key && s->kind == (int)kind)
            return &x->guards[s->index];
    }
}

static void guard_index_put(guard_slot *table, int cap, guard_slot s)
{
    size_t i = guard_slot_of(s.key, s.kind, cap);
    while (table[i].key)
        i = (i + 1) & ((size_t)cap - 1);
    table[i] = s;
}

/* guard_add, and the new guard entered in the index under `key` (which guard_find must not
 * already know). */
guard *guard_add_keyed(tx *x, guard_kind kind, const void *key)
{
    if (2 * (x->index_used + 1) > x->index_cap) {
        int cap = x->index_cap ? 2 * x->index_cap : 64;
        guard_slot *t = PyMem_Calloc((size_t)cap, sizeof *t);
        if (!t) {
            PyErr_NoMemory();
            return NULL;
        }
        for (int i = 0; i < x->index_cap; i++)
            if (x->guard_index[i].key)
                guard_index_put(t, cap, x->guard_index[i]);
        PyMem_Free(x->guard_index);
        x->guard_index = t;
        x->index_cap = cap;
    }
    guard *gd = guard_add(x, kind);
    if (!gd)
        return NULL;
    guard_index_put(x->guard_index, x->index_cap,
                    (guard_slot){.key = key, .kind = (int)kind, .index = x->nguards - 1});
    x->index_used++;
    return gd;
}

void guard_clear(guard *gd)
{
    Py_CLEAR(gd->obj);
    Py_CLEAR(gd->aux);
    Py_CLEAR(gd->weak);
    Py_CLEAR(gd->name);
    Py_CLEAR(gd->keys);
    Py_CLEAR(gd->values);
    Py_CLEAR(gd->at.key);
    if (gd->t) {
        pith_release(gd->t);
        gd->t = NULL;
    }
}

void tensor_meta_record(guard *gd, const pith_tensor *t)
{
    gd->dtype = pith_tensor_dtype(t);
    gd->requires_grad = pith_requires_grad(t);
    gd->device = pith_tensor_device(t);
    gd->ndim = pith_sizes(t, gd->sizes);
    pith_strides(t, gd->strides);
}

/* The GUARD_DICT_KEYS of `dict` (one per dict per translation), found or made. */
static guard *dict_guard_of(tx *x, PyObject *dict, PyObject *name)
{
    guard *gd = guard_find(x, GUARD_DICT_KEYS, dict);
    if (gd)
        return gd;
    gd = guard_add_keyed(x, GUARD_DICT_KEYS, dict);
    if (!gd)
        return NULL;
    gd->obj = Py_NewRef(dict);
    gd->name = Py_NewRef(name);
    gd->version = ((PyDictObject *)dict)->ma_version_tag;
    gd->keys = PyList_New(0);
    gd->values = PyList_New(0);
    if (!gd->keys || !gd->values)
        return NULL;
    return gd;
}

/* d[key] of a dict the frame does not own, guarded (Note [Guard soundness]): a borrowed
 * value, or NULL without an exception when absent (absence is guarded too). -1 in *err on
 * an error of the process. */
PyObject *dict_read(tx *x, PyObject *dict, PyObject *key, PyObject *what, int *err)
{
    *err = 0;
    PyObject *value = PyDict_GetItemWithError(dict, key);
    if (!value && PyErr_Occurred()) {
        *err = -1;
        return NULL;
    }
    guard *gd = dict_guard_of(x, dict, what);
    if (!gd) {
        *err = -1;
        return NULL;
    }
    Py_ssize_t n = PyList_GET_SIZE(gd->keys);
    for (Py_ssize_t i = 0; i < n; i++)
        if (PyList_GET_ITEM(gd->keys, i) == key)
            return value;
    if (PyList_Append(gd->keys, key) < 0 || PyList_Append(gd->values, value ? value : Py_None) < 0) {
        *err = -1;
        return NULL;
    }
    /* None stands for "absent" only when the dict does not hold None itself: record which
     * with a marker object, the dict itself (a dict never contains itself as a value here:
     * if it does, the recheck still compares identities correctly). */
    if (!value && PyList_SetItem(gd->values, n, Py_NewRef(dict)) < 0) {
        *err = -1;
        return NULL;
    }
    return value;
}
/* The whole content of a dict that the translation does not own is read: it must not
 * change (GUARD_DICT_EXACT). */
int dict_read_all(tx *x, PyObject *dict, PyObject *what)
{
    if (is_fresh(x, dict))
        return 0;
    if (guard_find(x, GUARD_DICT_EXACT, dict))
        return 0;
    guard *gd = guard_add_keyed(x, GUARD_DICT_EXACT, dict);
    if (!gd)
        return -1;
    gd->obj = Py_NewRef(dict);
    gd->name = Py_NewRef(what);
    gd->version = ((PyDictObject *)dict)->ma_version_tag;
    return 0;
}

/* The type of `obj` and its version tag (GUARD_TYPE); -1 with the failure when the type
 * has no valid tag. */
int type_guard(tx *x, PyObject *obj, PyObject *what)
{
    PyTypeObject *tp = Py_TYPE(obj);
    if (guard_find(x, GUARD_TYPE, obj))
        return 0;
    if (!PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG) || tp->tp_version_tag == 0)
        return fail(x, false, "the type %s has no version tag", tp->tp_name);
    guard *gd = guard_add_keyed(x, GUARD_TYPE, obj);
    if (!gd)
        return -1;
    guard_subject(x, gd, obj);
    gd->aux = Py_NewRef((PyObject *)tp);
    gd->name = Py_NewRef(what);
    gd->version = tp->tp_version_tag;
    return 0;
}

/* The whole content of a list that the translation does not own is read: its items must
 * stay the same objects (GUARD_LIST_EXACT; a list changes in place with no version tag). */
int list_read_all(tx *x, PyObject *list)
{
    if (!PyList_CheckExact(list) || is_fresh(x, list))
        return 0;
    if (guard_find(x, GUARD_LIST_EXACT, list))
        return 0;
    if (PyList_GET_SIZE(list) > 256)
        return fail(x, false, "a list of more than 256 items");
    guard *gd = guard_add_keyed(x, GUARD_LIST_EXACT, list);
    if (!gd)
        return -1;
    gd->obj = Py_NewRef(list);
    gd->aux = PyList_AsTuple(list);
    gd->name = PyUnicode_FromString("a list's content");
    return gd->aux && gd->name ? 0 : -1;
}

int func_guard(tx *x, PyFunctionObject *fn)
{
    if (is_fresh(x, (PyObject *)fn))
        return 0; /* made by this translation: nothing outside can change it */
    if (guard_find(x, GUARD_FUNC, fn))
        return 0;
    guard *gd = guard_add_keyed(x, GUARD_FUNC, fn);
    if (!gd)
        return -1;
    gd->obj = Py_NewRef((PyObject *)fn);
    gd->name = Py_NewRef(fn->func_qualname);
    gd->code = fn->func_code;
    gd->defaults = fn->func_defaults;
    gd->kwdefaults = fn->func_kwdefaults;
    gd->closure = fn->func_closure;
    /* the objects themselves are kept by the function; hold them too, for the compare */
    gd->aux = PyTuple_Pack(4, fn->func_code, fn->func_defaults ? fn->func_defaults : Py_None,
                           fn->func_kwdefaults ? fn->func_kwdefaults : Py_None,
                           fn->func_closure ? fn->func_closure : Py_None);
    return gd->aux ? 0 : -1;
}

/* ---- checks ---- */

static bool float_same(PyObject *a, PyObject *b)
{
    double x = PyFloat_AS_DOUBLE(a), y = PyFloat_AS_DOUBLE(b);
    return memcmp(&x, &y, sizeof x) == 0;
}

static bool value_same(PyObject *v, PyObject *expected)
{
    if (v == expected)
        return true;
    if (Py_TYPE(v) != Py_TYPE(expected))
        return false;
    if (PyFloat_CheckExact(v))
        return float_same(v, expected);
    if (PyLong_CheckExact(v) || PyUnicode_CheckExact(v)) {
        int rc = PyObject_RichCompareBool(v, expected, Py_EQ);
        if (rc < 0)
            PyErr_Clear();
        return rc == 1;
    }
    return false; /* None and bools are singletons */
}

static bool tensor_meta_same(const guard *gd, const pith_tensor *t)
{
    if (pith_tensor_dtype(t) != gd->dtype || pith_tensor_device(t) != gd->device ||
        pith_ndim(t) != gd->ndim || pith_requires_grad(t) != gd->requires_grad)
        return false;
    int64_t sizes[PITH_MAX_DIMS], strides[PITH_MAX_DIMS];
    pith_sizes(t, sizes);
    pith_strides(t, strides);
    for (int d = 0; d < gd->ndim; d++)
        if (sizes[d] != gd->sizes[d] || strides[d] != gd->strides[d])
            return false;
    return true;
}

/* A tensor object without instance attributes (See Note [Guard soundness]). */
static bool no_attributes(PyObject *v)
{
    PyObject *d = ((pith_tensor_object *)v)->dict;
    return !d || PyDict_GET_SIZE(d) == 0;
}

static PyObject *subject_of(const guard *gd, PyObject *const *localsplus)
{
    return gd->at.local < 0 ? gd->obj : access_get(localsplus, &gd->at);
}

static bool dict_keys_hold(guard *gd)
{
    PyDictObject *d = (PyDictObject *)gd->obj;
    if (d->ma_version_tag == gd->version)
        return true;
    /* The tag moved: some write happened. Recheck the names read. */
    Py_ssize_t n = PyList_GET_SIZE(gd->keys);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *v = PyDict_GetItemWithError(gd->obj, PyList_GET_ITEM(gd->keys, i));
        if (!v && PyErr_Occurred()) {
            PyErr_Clear();
            return false;
        }
        PyObject *expected = PyList_GET_ITEM(gd->values, i);
        if (expected == gd->obj ? v != NULL : v != expected)
            return false;
    }
    gd->version = d->ma_version_tag;
    return true;
}

/* A sequence argument (GUARD_SEQUENCE): its exact type, its length and, for a dict, its
 * keys. */
static bool sequence_same(const guard *gd, PyObject *v)
{
    if (!v || (PyObject *)Py_TYPE(v) != gd->aux ||
        (PyDict_CheckExact(v) ? PyDict_GET_SIZE(v) : Py_SIZE(v)) != gd->ndim)
        return false;
    if (!gd->keys)
        return true;
    /* a dict's keys, in order: iterating **kwargs follows it */
    Py_ssize_t pos = 0, k = 0;
    PyObject *key, *value;
    while (PyDict_Next(v, &pos, &key, &value)) {
        PyObject *want = PyTuple_GET_ITEM(gd->keys, k++);
        if (key != want && !(PyUnicode_CheckExact(key) && PyUnicode_Compare(key, want) == 0))
            return false;
    }
    return true;
}

static bool list_same(const guard *gd)
{
    Py_ssize_t n = PyTuple_GET_SIZE(gd->aux);
    if (PyList_GET_SIZE(gd->obj) != n)
        return false;
    for (Py_ssize_t k = 0; k < n; k++)
        if (PyList_GET_ITEM(gd->obj, k) != PyTuple_GET_ITEM(gd->aux, k))
            return false;
    return true;
}

/* GUARD_NO_ALIAS: no two tensor inputs of `e` share memory. */
static bool inputs_unaliased(const compile_entry *e, PyObject *const *localsplus)
{
    for (int a = 0; a < e->ninputs; a++)
        for (int b = 0; b < a; b++)
            if (pith_shares_storage(tensor_of(access_get(localsplus, &e->inputs[a])),
                                    tensor_of(access_get(localsplus, &e->inputs[b]))))
                return false;
    return true;
}

static bool type_version_same(PyTypeObject *tp, uint64_t version)
{
    return tp->tp_version_tag == version && PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG);
}

/* Whether guard `gd` of `e` holds for a frame's localsplus. Never raises. */
static bool guard_holds(const compile_entry *e, guard *gd, PyObject *const *localsplus)
{
    switch (gd->kind) {
    case GUARD_TENSOR: {
        PyObject *v = access_get(localsplus, &gd->at);
        return v && Py_TYPE(v) == gd->type && tensor_meta_same(gd, tensor_of(v)) &&
               no_attributes(v);
    }
    case GUARD_VALUE: {
        PyObject *v = access_get(localsplus, &gd->at);
        return v && value_same(v, gd->aux);
    }
    case GUARD_IDENTITY:
        return access_get(localsplus, &gd->at) == gd->aux;
    case GUARD_WEAK: {
        PyObject *v = access_get(localsplus, &gd->at);
        return v && PyWeakref_GET_OBJECT(gd->weak) == v;
    }
    case GUARD_SEQUENCE:
        return sequence_same(gd, access_get(localsplus, &gd->at));
    case GUARD_DICT_KEYS:
        return dict_keys_hold(gd);
    case GUARD_DICT_EXACT:
        return ((PyDictObject *)gd->obj)->ma_version_tag == gd->version;
    case GUARD_LIST_EXACT:
        return list_same(gd);
    case GUARD_OBJ_DICT: {
        PyObject **dictptr = _PyObject_GetDictPtr(subject_of(gd, localsplus));
        return dictptr && *dictptr == gd->aux;
    }
    case GUARD_TYPE: {
        PyTypeObject *tp = Py_TYPE(subject_of(gd, localsplus));
        return (PyObject *)tp == gd->aux && type_version_same(tp, gd->version);
    }
    case GUARD_TYPE_VERSION:
        return type_version_same((PyTypeObject *)gd->aux, gd->version);
    case GUARD_FUNC: {
        PyFunctionObject *fn = (PyFunctionObject *)gd->obj;
        return fn->func_code == gd->code && fn->func_defaults == gd->defaults &&
               fn->func_kwdefaults == gd->kwdefaults && fn->func_closure == gd->closure;
    }
    case GUARD_CELL:
        return PyCell_GET(gd->obj) == gd->aux;
    case GUARD_PARAM:
        return tensor_of(gd->obj) == gd->t && tensor_meta_same(gd, gd->t) &&
               (!gd->flag || no_attributes(gd->obj));
    case GUARD_GRAD_MODE:
        return pith_grad_enabled() == gd->flag;
    case GUARD_DEFAULT_DTYPE:
        return pith_get_default_dtype() == gd->dtype;
    case GUARD_NO_ALIAS:
        return inputs_unaliased(e, localsplus);
    }
    return false;
}

/* The first guard that fails, or -1 when all hold. Never raises. */
int guards_fail(compile_entry *e, PyObject *const *localsplus)
{
    for (int i = 0; i < e->nguards; i++)
        if (!guard_holds(e, &e->guards[i], localsplus))
            return i;
    return -1;
}

static PyObject *repr_or_type(PyObject *v)
{
    if (!v)
        return PyUnicode_FromString("<unbound>");
    if (PyLong_CheckExact(v) || PyFloat_CheckExact(v) || PyBool_Check(v) || v == Py_None ||
        PyUnicode_CheckExact(v))
        return PyObject_Repr(v);
    return PyUnicode_FromFormat("a %s", Py_TYPE(v)->tp_name);
}

/* "x: size[0] 4 -> 5": what guard `i` saw change (a new reference). */
PyObject *guard_describe(const compile_entry *e, int i, PyObject *const *localsplus)
{
    const guard *gd = &e->guards[i];
    switch (gd->kind) {
    case GUARD_TENSOR: {
        PyObject *v = access_get(localsplus, &gd->at);
        if (!v || Py_TYPE(v) != gd->type)
            return PyUnicode_FromFormat("%U: type %s -> %s", gd->name, gd->type->tp_name,
                                        v ? Py_TYPE(v)->tp_name : "unbound");
        const pith_tensor *t = tensor_of(v);
        if (pith_tensor_dtype(t) != gd->dtype)
            return PyUnicode_FromFormat("%U: dtype %s -> %s", gd->name,
                                        pith_dtype_name(gd->dtype),
                                        pith_dtype_name(pith_tensor_dtype(t)));
        if (pith_tensor_device(t) != gd->device)
            return PyUnicode_FromFormat("%U: device %s -> %s", gd->name,
                                        pith_device_name(gd->device),
                                        pith_device_name(pith_tensor_device(t)));
        if (pith_ndim(t) != gd->ndim)
            return PyUnicode_FromFormat("%U: ndim %d -> %d", gd->name, gd->ndim, pith_ndim(t));
        int64_t sizes[PITH_MAX_DIMS], strides[PITH_MAX_DIMS];
        pith_sizes(t, sizes);
        pith_strides(t, strides);
        for (int d = 0; d < gd->ndim; d++)
            if (sizes[d] != gd->sizes[d])
                return PyUnicode_FromFormat("%U: size[%d] %lld -> %lld", gd->name, d,
                                            (long long)gd->sizes[d], (long long)sizes[d]);
        for (int d = 0; d < gd->ndim; d++)
            if (strides[d] != gd->strides[d])
                return PyUnicode_FromFormat("%U: stride[%d] %lld -> %lld", gd->name, d,
                                            (long long)gd->strides[d], (long long)strides[d]);
        return PyUnicode_FromFormat("%U: changed", gd->name);
    }
    case GUARD_VALUE:
    case GUARD_IDENTITY: {
        PyObject *a = repr_or_type(gd->aux), *b = repr_or_type(access_get(localsplus, &gd->at));
        PyObject *r = a && b ? PyUnicode_FromFormat("%U: value %U -> %U", gd->name, a, b) : NULL;
        Py_XDECREF(a);
        Py_XDECREF(b);
        return r;
    }
    case GUARD_WEAK:
        return PyUnicode_FromFormat("%U: another object", gd->name);
    case GUARD_SEQUENCE: {
        PyObject *v = access_get(localsplus, &gd->at);
        if (!v || (PyObject *)Py_TYPE(v) != gd->aux)
            return PyUnicode_FromFormat("%U: type %s -> %s", gd->name,
                                        ((PyTypeObject *)gd->aux)->tp_name,
                                        v ? Py_TYPE(v)->tp_name : "missing");
        Py_ssize_t n = PyDict_CheckExact(v) ? PyDict_GET_SIZE(v) : Py_SIZE(v);
        if (n == gd->ndim && gd->keys) {
            PyObject *now = PyDict_Keys(v);
            PyObject *r = now ? PyUnicode_FromFormat("%U: keys %R -> %R", gd->name, gd->keys, now)
                              : NULL;
            Py_XDECREF(now);
            return r;
        }
        return PyUnicode_FromFormat("%U: length %d -> %zd", gd->name, gd->ndim, n);
    }
    case GUARD_DICT_KEYS:
        return PyUnicode_FromFormat("%U: rebound", gd->name);
    case GUARD_DICT_EXACT:
        return PyUnicode_FromFormat("%U: changed", gd->name);
    case GUARD_OBJ_DICT:
        return PyUnicode_FromFormat("%U: __dict__ replaced", gd->name);
    case GUARD_LIST_EXACT:
        return PyUnicode_FromFormat("%U: changed", gd->name);
    case GUARD_TYPE:
        return PyUnicode_FromFormat("%U: type changed", gd->name);
    case GUARD_TYPE_VERSION:
        return PyUnicode_FromFormat("the type %U changed", gd->name);
    case GUARD_FUNC:
        return PyUnicode_FromFormat("function %U: code, defaults or closure changed", gd->name);
    case GUARD_CELL:
        return PyUnicode_FromFormat("%U: rebound", gd->name);
    case GUARD_PARAM:
        return PyUnicode_FromFormat("%U: replaced or resized", gd->name);
    case GUARD_GRAD_MODE:
        return PyUnicode_FromFormat("grad mode %s -> %s", gd->flag ? "on" : "off",
                                    gd->flag ? "off" : "on");
    case GUARD_DEFAULT_DTYPE:
        return PyUnicode_FromFormat("default dtype %s -> %s", pith_dtype_name(gd->dtype),
                                    pith_dtype_name(pith_get_default_dtype()));
    case GUARD_NO_ALIAS:
        return PyUnicode_FromString("tensor arguments share memory");
    }
    return PyUnicode_FromString("a guard failed");
}

