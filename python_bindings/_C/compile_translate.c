/* compile_translate.c — pith.compile's translator: evaluates a frame's 3.11 bytecode
 * symbolically, over stand-in tensors, and builds a cache entry (a compiled graph, the
 * guards under which it answers the frame, and how its outputs make the frame's result).
 * The hook (compile_hook.c) calls translate_frame on a cache miss. */
#include <string.h>

#include <opcode.h>

#include "binder.h"
#include "compile_internal.h"

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

/* How deep inlined calls may nest. */
#define TRANSLATE_MAX_DEPTH 24
/* The most instructions one translation evaluates (loops unroll). */
#define TRANSLATE_MAX_STEPS 200000

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
typedef struct {
    const void *key; /* NULL: an empty slot */
    int kind;
    int index; /* into tx.guards */
} guard_slot;

typedef struct {
    const translate_request *req;
    pith_module_state *st;
    pith_graph *g;
    translate_failure *why;
    guard *guards;
    int nguards, cap_guards;
    guard_slot *guard_index; /* See Note [Guard index] */
    int index_cap, index_used;
    /* The interned names type_lookup has used, by the address of their C literal */
    struct {
        const char *literal;
        PyObject *name; /* strong */
    } names[8];
    int nnames;
    arg_path *inputs; /* of the graph's inputs, in order */
    int ninputs, cap_inputs;
    PyObject *param_standins; /* id(parameter) -> its stand-in */
    PyObject *input_standins; /* id(stand-in) -> the frame slot it came from */
    PyObject *standin_types;  /* id(stand-in) -> the type of what it stands for, when that
                                 is not pith.Tensor (an nn.Parameter) */
    PyObject *standin_params; /* id(stand-in) -> the parameter (or tensor) it stands for */
    PyObject *output_ids;     /* id(stand-in) -> its graph output */
    int noutputs;
    PyObject *fresh;          /* ids of the containers the translation built */
    PyObject *shadow_cells;   /* ids of the cells that shadow a closure's cells */
    PyObject *keep;           /* what the translation made, kept alive */
    int64_t work;
    bool mutates; /* a recorded call writes a tensor in place (or out=) */
    bool absent_ok; /* getattr/hasattr: a missing attribute sets `absent`, not a failure */
    bool absent;
    int depth;
    long steps;
    PyCodeObject *code; /* where the evaluation is, for messages */
    int pc;
} tx;

static bool container_method(tx *x, PyObject *obj, PyObject *name);
static PyObject *iterate(tx *x, PyObject *v);

/* ---- failure ---- */

static int fail(tx *x, bool permanent, const char *fmt, ...)
{
    translate_failure *why = x->why;
    if (why->reason[0])
        return -1;
    /* PyUnicode_FromFormatV: the reasons quote Python objects (%U, %R) */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    va_list ap;
    va_start(ap, fmt);
    PyObject *text = PyUnicode_FromFormatV(fmt, ap);
    va_end(ap);
    const char *utf8 = text ? PyUnicode_AsUTF8(text) : NULL;
    snprintf(why->reason, sizeof why->reason, "%s", utf8 ? utf8 : fmt);
    Py_XDECREF(text);
    PyErr_Clear();
    PyErr_Restore(type, value, tb);
    why->permanent = permanent;
    if (x->code) {
        Py_XSETREF(why->filename, Py_NewRef(x->code->co_filename));
        why->line = PyCode_Addr2Line(x->code, x->pc * (int)sizeof(_Py_CODEUNIT));
    }
    return -1;
}

/* An attribute that is not there (its absence guarded by the reads that found nothing):
 * the failure, or for getattr(o, name, default) and hasattr, the answer. */
static int attribute_missing(tx *x, PyObject *label)
{
    if (x->absent_ok) {
        x->absent = true;
        return -1;
    }
    return fail(x, false, "%U is missing (AttributeError)", label);
}

/* A Python exception raised while translating (a Meta kernel's shape error, a TypeError of
 * the binder) becomes the reason, and the frame runs eagerly, where it raises again. Not
 * permanent: other arguments may translate. */
static int fail_exception(tx *x, const char *what)
{
    if (PyErr_ExceptionMatches(PyExc_MemoryError))
        return -1; /* the process's problem: it propagates */
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyObject *s = value ? PyObject_Str(value) : NULL;
    const char *msg = s ? PyUnicode_AsUTF8(s) : NULL;
    if (!msg)
        PyErr_Clear();
    fail(x, false, "%s raised %s: %s", what,
         type ? ((PyTypeObject *)type)->tp_name : "an exception", msg ? msg : "");
    Py_XDECREF(s);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return -1;
}

/* ---- guards ---- */

static guard *guard_add(tx *x, guard_kind kind)
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
static guard *guard_find(const tx *x, guard_kind kind, const void *key)
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
static guard *guard_add_keyed(tx *x, guard_kind kind, const void *key)
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

static void guard_clear(guard *gd)
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

static void tensor_meta_record(guard *gd, const pith_tensor *t)
{
    gd->dtype = pith_tensor_dtype(t);
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
static PyObject *dict_read(tx *x, PyObject *dict, PyObject *key, PyObject *what, int *err)
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

static bool is_fresh(tx *x, PyObject *obj)
{
    PyObject *id = PyLong_FromVoidPtr(obj);
    if (!id)
        return false;
    int rc = PySet_Contains(x->fresh, id);
    Py_DECREF(id);
    return rc == 1;
}

/* Marks `obj`, which the translation made, as its own: its content needs no guard. */
static PyObject *make_fresh(tx *x, PyObject *obj)
{
    if (!obj)
        return NULL;
    PyObject *id = PyLong_FromVoidPtr(obj);
    if (!id || PySet_Add(x->fresh, id) < 0 || PyList_Append(x->keep, obj) < 0) {
        Py_XDECREF(id);
        Py_DECREF(obj);
        return NULL;
    }
    Py_DECREF(id);
    return obj;
}

/* The whole content of a dict that the translation does not own is read: it must not
 * change (GUARD_DICT_EXACT). */
static int dict_read_all(tx *x, PyObject *dict, PyObject *what)
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

static void guard_subject(tx *x, guard *gd, PyObject *obj);
static PyObject *type_lookup(tx *x, PyTypeObject *tp, const char *name);
static PyObject *tx_name(tx *x, const char *literal);

/* The type of `obj` and its version tag (GUARD_TYPE); -1 with the failure when the type
 * has no valid tag. */
static int type_guard(tx *x, PyObject *obj, PyObject *what)
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
static int list_read_all(tx *x, PyObject *list)
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

/* Whether a tensor object has instance attributes (x.foo = 1), which would shadow what the
 * translator reads from the type. */
static bool tensor_has_attributes(PyObject *v)
{
    PyObject *d = ((pith_tensor_object *)v)->dict;
    return d && PyDict_GET_SIZE(d) != 0;
}

static bool is_scalar(PyObject *v)
{
    return v == Py_None || PyBool_Check(v) || PyLong_CheckExact(v) || PyFloat_CheckExact(v) ||
           PyUnicode_CheckExact(v);
}

/* Values that evaluating builtins on cannot run user code: scalars, pith dtypes, and
 * tuples, lists and pith.Size of them. */
static bool is_plain(tx *x, PyObject *v, int depth)
{
    if (is_scalar(v) || Py_IS_TYPE(v, x->st->dtype_type) || v == Py_Ellipsis ||
        PySlice_Check(v))
        return true;
    if (PyList_CheckExact(v) && list_read_all(x, v) < 0) {
        PyErr_Clear(); /* not plain: the caller refuses it */
        return false;
    }
    if (depth < 4 && (PyTuple_Check(v) || PyList_CheckExact(v)) &&
        (PyTuple_CheckExact(v) || PyList_CheckExact(v) ||
         Py_IS_TYPE(v, x->st->size_type))) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        for (Py_ssize_t i = 0; i < n; i++)
            if (!is_plain(x, PySequence_Fast_GET_ITEM(v, i), depth + 1))
                return false;
        return true;
    }
    return false;
}

static bool is_tensor(tx *x, PyObject *v)
{
    return tensor_check(x->st, v);
}

/* By the type alone: PyObject_IsInstance could read a user's __class__ property. */
static bool is_tensor(tx *x, PyObject *v);

/* The type of what `v` stands for: a parameter's stand-in is a plain Tensor, and
 * type(p) and isinstance(p, nn.Parameter) must see the parameter's type. */
static PyTypeObject *value_type(tx *x, PyObject *v)
{
    if (!is_tensor(x, v))
        return Py_TYPE(v);
    PyObject *id = PyLong_FromVoidPtr(v);
    PyObject *tp = id ? PyDict_GetItemWithError(x->standin_types, id) : NULL;
    Py_XDECREF(id);
    PyErr_Clear();
    return tp ? (PyTypeObject *)tp : Py_TYPE(v);
}

static bool is_module(tx *x, PyObject *v)
{
    return PyObject_TypeCheck(v, (PyTypeObject *)x->req->module_class);
}

/* ---- arguments of the frame ---- */

/* The symbolic value of the argument at `at` of the frame being compiled, with its guard:
 * a new reference, or NULL with the failure. A tuple, list or dict argument (*args,
 * **kwargs) is guarded on its type and length, and its items one by one. */
static PyObject *argument_value(tx *x, arg_path at, PyObject *v, PyObject *name, int depth)
{
    pith_module_state *st = x->st;
    guard *gd;
    if (tensor_check(st, v)) {
        if (!Py_IS_TYPE(v, st->tensor_type))
            return fail(x, false, "argument '%U' is a subclass of Tensor (%s)", name,
                        Py_TYPE(v)->tp_name),
                   NULL;
        const pith_tensor *t = tensor_of(v);
        if (pith_tensor_device(t) != PITH_CPU)
            return fail(x, false, "argument '%U' is not on the CPU", name), NULL;
        if (tensor_has_attributes(v))
            return fail(x, false, "argument '%U' has instance attributes", name), NULL;
        if (!(gd = guard_add(x, GUARD_TENSOR)))
            return NULL;
        gd->at = at;
        Py_XINCREF(at.key);
        gd->aux = Py_NewRef((PyObject *)Py_TYPE(v));
        gd->type = Py_TYPE(v);
        gd->name = Py_NewRef(name);
        tensor_meta_record(gd, t);
        pith_tensor *s = pith_graph_input(x->g, gd->dtype, gd->ndim, gd->sizes, gd->strides);
        if (!s)
            return error_raise(st);
        PyObject *obj = tensor_wrap(st, s);
        if (!obj)
            return NULL;
        if (x->ninputs == x->cap_inputs) {
            int cap = x->cap_inputs ? 2 * x->cap_inputs : 8;
            arg_path *v2 = PyMem_Realloc(x->inputs, (size_t)cap * sizeof *v2);
            if (!v2) {
                Py_DECREF(obj);
                return PyErr_NoMemory();
            }
            x->inputs = v2;
            x->cap_inputs = cap;
        }
        x->inputs[x->ninputs++] = at;
        Py_XINCREF(at.key);
        x->work += pith_numel(t);
        PyObject *id = PyLong_FromVoidPtr(obj), *where = PyLong_FromLong(x->ninputs - 1);
        int rc = id && where ? PyDict_SetItem(x->input_standins, id, where) : -1;
        Py_XDECREF(id);
        Py_XDECREF(where);
        if (rc < 0 || PyList_Append(x->keep, obj) < 0) {
            Py_DECREF(obj);
            return NULL;
        }
        return obj;
    }
    if (is_scalar(v) || is_module(x, v)) {
        bool module = !is_scalar(v);
        if (!(gd = guard_add(x, module ? GUARD_WEAK : GUARD_VALUE)))
            return NULL;
        gd->at = at;
        Py_XINCREF(at.key);
        gd->name = Py_NewRef(name);
        if (module && !(gd->weak = PyWeakref_NewRef(v, NULL)))
            return NULL;
        if (!module)
            gd->aux = Py_NewRef(v);
        return Py_NewRef(v);
    }
    if ((PyTuple_CheckExact(v) || PyList_CheckExact(v) || PyDict_CheckExact(v)) &&
        depth == 0) {
        Py_ssize_t n = PyDict_CheckExact(v) ? PyDict_GET_SIZE(v) : Py_SIZE(v);
        if (n > 64)
            return fail(x, false, "argument '%U' has more than 64 items", name), NULL;
        if (!(gd = guard_add(x, GUARD_SEQUENCE)))
            return NULL;
        gd->at = at;
        gd->aux = Py_NewRef((PyObject *)Py_TYPE(v));
        gd->name = Py_NewRef(name);
        gd->ndim = (int)n;
        if (PyDict_CheckExact(v)) {
            PyObject *keys = PyDict_Keys(v);
            gd->keys = keys ? PyList_AsTuple(keys) : NULL;
            Py_XDECREF(keys);
            if (!gd->keys)
                return NULL;
        }
        PyObject *r = PyDict_CheckExact(v) ? PyDict_New()
                      : PyTuple_CheckExact(v) ? PyTuple_New(n) : PyList_New(n);
        if (!r)
            return NULL;
        Py_ssize_t pos = 0, i = 0;
        PyObject *key, *item;
        while (PyDict_CheckExact(v) ? PyDict_Next(v, &pos, &key, &item)
                                    : (i < n && (item = PySequence_Fast_GET_ITEM(v, i)))) {
            if (PyDict_CheckExact(v) && !PyUnicode_CheckExact(key)) {
                Py_DECREF(r);
                return fail(x, false, "argument '%U' has a key that is not a str", name), NULL;
            }
            arg_path sub = {at.local, PyDict_CheckExact(v) ? -1 : (int)i,
                          PyDict_CheckExact(v) ? key : NULL};
            PyObject *label = PyDict_CheckExact(v) ? PyUnicode_FromFormat("%U[%R]", name, key)
                                                   : PyUnicode_FromFormat("%U[%zd]", name, i);
            PyObject *sv = label ? argument_value(x, sub, item, label, depth + 1) : NULL;
            Py_XDECREF(label);
            if (!sv) {
                Py_DECREF(r);
                return NULL;
            }
            if (PyDict_CheckExact(v)) {
                int rc = PyDict_SetItem(r, key, sv);
                Py_DECREF(sv);
                if (rc < 0) {
                    Py_DECREF(r);
                    return NULL;
                }
            } else if (PyTuple_CheckExact(v)) {
                PyTuple_SET_ITEM(r, i, sv);
            } else {
                PyList_SET_ITEM(r, i, sv);
            }
            i++;
        }
        return PyTuple_CheckExact(v) ? r : make_fresh(x, r);
    }
    if (PyTuple_Check(v) || PyList_Check(v) || PyDict_Check(v))
        return fail(x, false, "argument '%U' is a %s (compiled arguments are tensors, "
                    "scalars, modules and one level of tuples, lists and dicts of them)",
                    name, Py_TYPE(v)->tp_name), NULL;
    if (!(gd = guard_add(x, GUARD_IDENTITY)))
        return NULL;
    gd->at = at;
    Py_XINCREF(at.key);
    gd->aux = Py_NewRef(v);
    gd->name = Py_NewRef(name);
    return Py_NewRef(v);
}

/* ---- parameters and buffers ---- */

static PyObject *param_value(tx *x, PyObject *param, PyObject *what)
{
    PyObject *id = PyLong_FromVoidPtr(param);
    if (!id)
        return NULL;
    PyObject *known = PyDict_GetItemWithError(x->param_standins, id);
    if (known || PyErr_Occurred()) {
        Py_DECREF(id);
        return Py_XNewRef(known);
    }
    if (!Py_IS_TYPE(param, x->st->tensor_type) &&
        !PyObject_TypeCheck(param, x->st->tensor_type)) {
        Py_DECREF(id);
        return fail(x, false, "%U is not a tensor", what), NULL;
    }
    pith_tensor *t = tensor_of(param);
    if (pith_tensor_device(t) != PITH_CPU || tensor_lacks_data(t)) {
        Py_DECREF(id);
        return fail(x, false, "%U is not a CPU tensor with data", what), NULL;
    }
    if (type_lookup(x, Py_TYPE(param), "__pith_dispatch__")) {
        Py_DECREF(id);
        return fail(x, false, "%U is a __pith_dispatch__ subclass", what), NULL;
    }
    guard *gd = guard_add(x, GUARD_PARAM);
    if (!gd) {
        Py_DECREF(id);
        return NULL;
    }
    gd->obj = Py_NewRef(param);
    gd->name = Py_NewRef(what);
    pith_retain(t);
    gd->t = t;
    tensor_meta_record(gd, t);
    pith_tensor *s = pith_graph_param(x->g, t);
    PyObject *obj = s ? tensor_wrap(x->st, s) : error_raise(x->st);
    if (obj) {
        PyObject *sid = PyLong_FromVoidPtr(obj);
        int rc = sid ? PyDict_SetItem(x->standin_params, sid, param) : -1;
        Py_XDECREF(sid);
        if (rc < 0)
            Py_CLEAR(obj);
    }
    if (obj && !Py_IS_TYPE(param, x->st->tensor_type)) {
        PyObject *sid = PyLong_FromVoidPtr(obj);
        int rc = sid ? PyDict_SetItem(x->standin_types, sid, (PyObject *)Py_TYPE(param)) : -1;
        Py_XDECREF(sid);
        if (rc < 0)
            Py_CLEAR(obj);
    }
    if (!obj || PyDict_SetItem(x->param_standins, id, obj) < 0) {
        Py_DECREF(id);
        Py_XDECREF(obj);
        return NULL;
    }
    Py_DECREF(id);
    x->work += pith_numel(t);
    return obj;
}

/* A value read from outside the frame (a global, an attribute, a closure cell): a tensor
 * there is read at every run, as a parameter is (a new reference). */
static PyObject *outside_value(tx *x, PyObject *v, PyObject *what)
{
    if (tensor_check(x->st, v))
        return param_value(x, v, what);
    return Py_NewRef(v);
}

/* ---- attributes ---- */

/* base + sep + name, for str `base` and `name` and an ASCII `sep` (copied: a recompile
 * makes thousands of these labels, and PyUnicode_FromFormat parsed its format each time). */
static PyObject *name_join(PyObject *base, const char *sep, PyObject *name)
{
    if (!PyUnicode_Check(base) || !PyUnicode_Check(name))
        return PyUnicode_FromFormat("%S%s%S", base, sep, name);
    Py_ssize_t nb = PyUnicode_GET_LENGTH(base), ns = (Py_ssize_t)strlen(sep);
    Py_ssize_t nn = PyUnicode_GET_LENGTH(name);
    Py_UCS4 maxchar = Py_MAX(PyUnicode_MAX_CHAR_VALUE(base), PyUnicode_MAX_CHAR_VALUE(name));
    PyObject *r = PyUnicode_New(nb + ns + nn, Py_MAX(maxchar, 127));
    if (!r)
        return NULL;
    if (PyUnicode_CopyCharacters(r, 0, base, 0, nb) < 0)
        goto fail;
    for (Py_ssize_t i = 0; i < ns; i++)
        if (PyUnicode_WriteChar(r, nb + i, (Py_UCS4)(unsigned char)sep[i]) < 0)
            goto fail;
    if (PyUnicode_CopyCharacters(r, nb + ns, name, 0, nn) < 0)
        goto fail;
    return r;
fail:
    Py_DECREF(r);
    return NULL;
}

/* The instance dict of `obj` (borrowed) with its GUARD_OBJ_DICT, NULL when it has none. */
static PyObject *instance_dict(tx *x, PyObject *obj, PyObject *what, int *err)
{
    *err = 0;
    PyObject **dictptr = _PyObject_GetDictPtr(obj);
    if (!dictptr || !*dictptr)
        return NULL;
    PyObject *dict = *dictptr;
    if (!PyDict_CheckExact(dict)) {
        *err = fail(x, true, "%U has a __dict__ that is not a dict", what);
        return NULL;
    }
    if (guard_find(x, GUARD_OBJ_DICT, obj))
        return dict;
    guard *gd = guard_add_keyed(x, GUARD_OBJ_DICT, obj);
    if (!gd) {
        *err = -1;
        return NULL;
    }
    guard_subject(x, gd, obj);
    gd->aux = Py_NewRef(dict);
    gd->name = Py_NewRef(what);
    return dict;
}

/* Module.__getattr__'s lookup in _parameters, _buffers and _modules, done here. */
static PyObject *module_registered(tx *x, PyObject *obj, PyObject *dict, PyObject *name,
                                   PyObject *what)
{
    static const char *const tables[] = {"_parameters", "_buffers", "_modules"};
    for (int k = 0; k < 3; k++) {
        PyObject *key = tx_name(x, tables[k]);
        if (!key)
            return NULL;
        int err;
        PyObject *table = dict_read(x, dict, key, what, &err);
        if (err < 0)
            return NULL;
        if (!table)
            continue;
        if (!PyDict_CheckExact(table))
            return fail(x, true, "%U.%s is not a dict", what, tables[k]), NULL;
        PyObject *label = name_join(what, ".", name);
        if (!label)
            return NULL;
        PyObject *v = dict_read(x, table, name, label, &err);
        if (err < 0 || !v) {
            Py_DECREF(label);
            if (err < 0)
                return NULL;
            continue;
        }
        PyObject *result;
        if (k < 2 && v != Py_None)
            result = param_value(x, v, label);
        else
            result = Py_NewRef(v);
        Py_DECREF(label);
        return result;
    }
    (void)obj;
    PyObject *label = name_join(what, ".", name);
    if (label)
        attribute_missing(x, label);
    Py_XDECREF(label);
    return NULL;
}

/* _PyType_Lookup by a C name (borrowed, or NULL). */
/* The interned str of the C literal `literal`, borrowed from the translation's cache (made
 * once per translation: interning on every lookup was 8% of a recompile), or NULL with an
 * exception. A literal beyond the cache's room is interned into x->keep. */
static PyObject *tx_name(tx *x, const char *literal)
{
    for (int i = 0; i < x->nnames; i++)
        if (x->names[i].literal == literal)
            return x->names[i].name;
    PyObject *key = PyUnicode_InternFromString(literal);
    if (!key)
        return NULL;
    if (x->nnames < (int)(sizeof x->names / sizeof x->names[0])) {
        x->names[x->nnames].literal = literal;
        x->names[x->nnames++].name = key;
        return key;
    }
    int rc = PyList_Append(x->keep, key);
    Py_DECREF(key);
    return rc < 0 ? NULL : key;
}

/* tp's attribute `name` (a C literal), borrowed, or NULL. */
static PyObject *type_lookup(tx *x, PyTypeObject *tp, const char *name)
{
    PyObject *key = tx_name(x, name);
    if (!key) {
        PyErr_Clear();
        return NULL;
    }
    return _PyType_Lookup(tp, key);
}

/* The frame argument slot that holds `obj`, or -1: guards on an argument read it from the
 * frame rather than holding it (a module argument is held weakly). */
static int argument_slot(tx *x, PyObject *obj)
{
    PyCodeObject *co = x->req->code;
    int nargs = co->co_argcount + co->co_kwonlyargcount;
    for (int i = 0; i < nargs; i++)
        if (x->req->localsplus[i] == obj)
            return i;
    return -1;
}

/* Points a guard at `obj`: the frame slot of an argument, or a strong reference. */
static void guard_subject(tx *x, guard *gd, PyObject *obj)
{
    gd->at.local = argument_slot(x, obj);
    if (gd->at.local < 0)
        gd->obj = Py_NewRef(obj);
}

/* obj.name by the rules of PyObject_GenericGetAttr, with guards, for a module or any
 * object whose type keeps the generic lookup: a new reference, or NULL with the failure. */
static PyObject *generic_getattr(tx *x, PyObject *obj, PyObject *name, PyObject *what)
{
    PyTypeObject *tp = Py_TYPE(obj);
    PyObject *label = name_join(what, ".", name);
    if (!label)
        return NULL;
    PyObject *result = NULL;
    bool module_getattr = false;
    if (tp->tp_getattro != PyObject_GenericGetAttr) {
        /* A class that defines __getattr__ gets slot_tp_getattr_hook: generic lookup, then
         * __getattr__. Only pith.nn.Module's __getattr__, over object.__getattribute__. */
        PyObject *ga = type_lookup(x, tp, "__getattribute__");
        PyObject *gat = type_lookup(x, tp, "__getattr__");
        if (ga != type_lookup(x, &PyBaseObject_Type, "__getattribute__") ||
            gat != x->req->module_getattr) {
            fail(x, true, "%U: the type %s customises attribute lookup", label, tp->tp_name);
            goto done;
        }
        module_getattr = true;
    }
    PyObject *descr = _PyType_Lookup(tp, name); /* first: it sets the version tag */
    if (type_guard(x, obj, what) < 0)
        goto done;
    if (descr && Py_TYPE(descr)->tp_descr_set) {
        if (PyObject_TypeCheck(descr, &PyProperty_Type))
            fail(x, true, "%U is a property", label);
        else
            fail(x, true, "%U is a data descriptor (%s)", label, Py_TYPE(descr)->tp_name);
        goto done;
    }
    int err;
    PyObject *dict = instance_dict(x, obj, what, &err);
    if (err < 0)
        goto done;
    if (dict) {
        PyObject *v = dict_read(x, dict, name, label, &err);
        if (err < 0)
            goto done;
        if (v) {
            result = outside_value(x, v, label);
            goto done;
        }
    }
    if (descr) {
        if (PyFunction_Check(descr))
            result = PyMethod_New(descr, obj);
        else if (!Py_TYPE(descr)->tp_descr_get)
            result = outside_value(x, descr, label);
        else
            fail(x, true, "%U is a %s", label, Py_TYPE(descr)->tp_name);
        goto done;
    }
    if (module_getattr && dict) {
        result = module_registered(x, obj, dict, name, what);
        goto done;
    }
    attribute_missing(x, label);
done:
    Py_DECREF(label);
    return result;
}

/* Queries of a tensor's metadata that read nothing but its sizes, strides and dtype:
 * evaluated on the stand-in, whose metadata the guards fix. */
static const char *const tensor_queries[] = {
    "shape", "dtype", "ndim", "device", "dim", "size", "numel", "stride", "is_contiguous",
    "element_size", "nelement", "ndimension", "is_floating_point", "is_complex", "layout",
    "is_cuda", "is_meta", "is_sparse", "requires_grad", "is_leaf", "grad_fn", NULL,
};

static bool is_tensor_query(PyObject *name)
{
    for (int i = 0; tensor_queries[i]; i++)
        if (PyUnicode_CompareWithASCIIString(name, tensor_queries[i]) == 0)
            return true;
    return false;
}

/* x.float() & co. (conversions.c, no operators themselves): the dtype a conversion method
 * converts to, or -1; `to` answers PITH_NUM_DTYPES (x.to(dtype) only). */
static int conversion_of(const char *name)
{
#define CONVERSION_(method, dtype)                                                          \
    if (strcmp(name, #method) == 0)                                                         \
        return dtype;
    PITH_FORALL_DTYPE_CONVERSIONS(CONVERSION_)
#undef CONVERSION_
    return strcmp(name, "to") == 0 ? PITH_NUM_DTYPES : -1;
}

/* A conversion of the stand-in `self`, as conversions.c does it: the tensor itself when the
 * dtype matches, else the operator to.dtype (recorded). */
static PyObject *record_call(tx *x, PyObject *callable, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames);

static PyObject *conversion_call(tx *x, PyObject *self, int which, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *dtype_obj = NULL;
    if (which == PITH_NUM_DTYPES) {
        Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        if (nargs == 1 && nkw == 0)
            dtype_obj = args[0];
        else if (nargs == 0 && nkw == 1 &&
                 PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, 0), "dtype") == 0)
            dtype_obj = args[0];
        if (!dtype_obj || !Py_IS_TYPE(dtype_obj, x->st->dtype_type))
            return fail(x, true, "Tensor.to() with arguments other than a dtype"), NULL;
        which = ((pith_dtype_object *)dtype_obj)->dtype;
    } else if (nargs || kwnames) {
        return fail(x, false, "a dtype conversion with arguments"), NULL;
    }
    if (pith_tensor_dtype(tensor_of(self)) == (pith_dtype)which)
        return Py_NewRef(self);
    const pith_op *op = pith_op_find("to.dtype");
    PyObject *ov = op ? binder_overload_of(x->st, op) : NULL;
    if (!ov)
        return fail_exception(x, "to.dtype"), NULL;
    PyObject *d = dtype_object(x->st, (pith_dtype)which);
    if (!d)
        return NULL;
    PyObject *call_args[2] = {self, d};
    PyObject *r = record_call(x, ov, call_args, 2, NULL);
    Py_DECREF(d);
    return r;
}

static bool is_binder_callable(tx *x, PyObject *v)
{
    PyTypeObject *tp = Py_TYPE(v);
    return tp == x->st->binder.function_type || tp == x->st->binder.method_type ||
           tp == x->st->binder.overload_type;
}

static PyObject *tensor_getattr(tx *x, PyObject *v, PyObject *name)
{
    PyTypeObject *tp = Py_TYPE(v);
    PyObject *descr = _PyType_Lookup(tp, name);
    /* Tensor's methods can be reassigned (pith.Tensor.relu = ...): its version tag too */
    if (!guard_find(x, GUARD_TYPE_VERSION, tp)) {
        if (!PyType_HasFeature(tp, Py_TPFLAGS_VALID_VERSION_TAG) || tp->tp_version_tag == 0)
            return fail(x, false, "the type %s has no version tag", tp->tp_name), NULL;
        guard *gd = guard_add_keyed(x, GUARD_TYPE_VERSION, tp);
        if (!gd)
            return NULL;
        gd->aux = Py_NewRef((PyObject *)tp);
        gd->name = PyUnicode_FromString(tp->tp_name);
        gd->version = tp->tp_version_tag;
        if (!gd->name)
            return NULL;
    }
    /* What a parameter's stand-in reads from the type, the parameter's own attributes would
     * shadow: it must have none, now and at every call (GUARD_PARAM's flag). Arguments are
     * refused with attributes, and guarded so (GUARD_TENSOR). */
    PyObject *sid = PyLong_FromVoidPtr(v);
    PyObject *param = sid ? PyDict_GetItemWithError(x->standin_params, sid) : NULL;
    Py_XDECREF(sid);
    if (PyErr_Occurred())
        return NULL;
    if (param) {
        if (tensor_has_attributes(param))
            return fail(x, false, "the attribute %U of a tensor with instance attributes",
                        name), NULL;
        for (int i = 0; i < x->nguards; i++)
            if (x->guards[i].kind == GUARD_PARAM && x->guards[i].obj == param)
                x->guards[i].flag = true;
    }
    if (!descr)
        return attribute_missing(x, name), NULL; /* the type's version tag is guarded */
    if (Py_TYPE(descr) == x->st->binder.method_type)
        return PyMethod_New(descr, v);
    if (PyFunction_Check(descr))
        return PyMethod_New(descr, v);
    const char *cname = PyUnicode_AsUTF8(name);
    if (!cname)
        return NULL;
    /* A stand-in is a Meta tensor; what it stands for is on the CPU (arguments and
     * parameters on other devices are refused). */
    if (strcmp(cname, "device") == 0)
        return device_object(x->st, PITH_CPU);
    if (strcmp(cname, "is_meta") == 0 || strcmp(cname, "is_cuda") == 0)
        return Py_NewRef(Py_False);
    if (is_tensor_query(name) || conversion_of(cname) >= 0) {
        PyObject *r = PyObject_GetAttr(v, name);
        if (!r)
            return fail_exception(x, "a tensor query"), NULL;
        if (PyCFunction_Check(r) || PyMethod_Check(r) ||
            Py_TYPE(r) == &PyMethodDescr_Type || is_plain(x, r, 0) ||
            Py_IS_TYPE(r, x->st->device_type) || Py_IS_TYPE(r, x->st->dtype_type))
            return r;
        Py_DECREF(r);
        return fail(x, true, "Tensor.%U gave an unexpected value", name), NULL;
    }
    return fail(x, true, "Tensor.%U (a %s) is not supported by pith.compile", name,
                Py_TYPE(descr)->tp_name),
           NULL;
}

static PyObject *load_attr(tx *x, PyObject *obj, PyObject *name)
{
    if (is_tensor(x, obj))
        return tensor_getattr(x, obj, name);
    if (PyModule_CheckExact(obj)) {
        PyObject *dict = PyModule_GetDict(obj);
        PyObject *modname = PyModule_GetNameObject(obj);
        if (!modname)
            return NULL;
        PyObject *label = name_join(modname, ".", name);
        Py_DECREF(modname);
        if (!label)
            return NULL;
        int err;
        PyObject *v = dict_read(x, dict, name, label, &err);
        if (!v && err == 0)
            attribute_missing(x, label);
        PyObject *r = v ? outside_value(x, v, label) : NULL;
        Py_DECREF(label);
        return r;
    }
    if (is_module(x, obj) || (Py_TYPE(obj)->tp_getattro == PyObject_GenericGetAttr &&
                               !PyType_Check(obj) && _PyObject_GetDictPtr(obj))) {
        /* a module, or an object of a plain class (a config, a dataclass): the generic
         * lookup, done here */
        PyObject *what = PyUnicode_FromString(Py_TYPE(obj)->tp_name);
        if (!what)
            return NULL;
        PyObject *r = generic_getattr(x, obj, name, what);
        Py_DECREF(what);
        return r;
    }
    if ((PyDict_Check(obj) || PyList_CheckExact(obj)) && container_method(x, obj, name))
        return PyObject_GetAttr(obj, name); /* a C method: container_call evaluates it */
    if (PyTuple_CheckExact(obj) || Py_IS_TYPE(obj, x->st->size_type) ||
        Py_IS_TYPE(obj, x->st->dtype_type)) {
        PyObject *r = PyObject_GetAttr(obj, name);
        if (!r)
            return fail_exception(x, "an attribute"), NULL;
        return r;
    }
    return fail(x, true, "attribute '%U' of a %s", name, Py_TYPE(obj)->tp_name), NULL;
}

/* ---- methods of dicts and lists ---- */

/* The methods of dicts and lists evaluated here: reads of any dict (guarded), and every
 * method of the frame's own containers, which no one else can see. */
static const char *const dict_reads[] = {"values", "keys", "items", "get", NULL};
static const char *const own_methods[] = {"pop", "setdefault", "update", "copy", "append",
                                          "extend", "insert", "reverse", "clear", NULL};

static bool name_in(const char *name, const char *const *names)
{
    for (int i = 0; names[i]; i++)
        if (strcmp(name, names[i]) == 0)
            return true;
    return false;
}

static bool container_method(tx *x, PyObject *obj, PyObject *name)
{
    const char *n = PyUnicode_AsUTF8(name);
    if (!n) {
        PyErr_Clear();
        return false;
    }
    if (PyDict_Check(obj) && name_in(n, dict_reads))
        return true;
    return is_fresh(x, obj) && name_in(n, own_methods);
}

/* self.name(*args) for a dict or list `self` (container_method said yes): a new reference,
 * or NULL with the failure. */
static PyObject *container_call(tx *x, PyObject *callable, PyObject *self, const char *name,
                                PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    bool fresh = is_fresh(x, self);
    if (kwnames)
        return fail(x, true, "%s.%s() with keywords", Py_TYPE(self)->tp_name, name), NULL;
    if (PyDict_Check(self) && name_in(name, dict_reads)) {
        if (strcmp(name, "get") == 0) {
            if (nargs < 1 || nargs > 2 || !is_plain(x, args[0], 0))
                return fail(x, true, "dict.get() of a %s",
                            nargs ? Py_TYPE(args[0])->tp_name : "nothing"), NULL;
            PyObject *v;
            if (fresh) {
                v = PyDict_GetItemWithError(self, args[0]);
                if (!v && PyErr_Occurred())
                    return fail_exception(x, "dict.get()"), NULL;
            } else {
                PyObject *what = PyUnicode_FromString("a dict item");
                int err;
                v = what ? dict_read(x, self, args[0], what, &err) : NULL;
                if (what && v) {
                    PyObject *r = outside_value(x, v, what);
                    Py_DECREF(what);
                    return r;
                }
                Py_XDECREF(what);
                if (!what || err < 0)
                    return NULL;
            }
            return Py_NewRef(v ? v : nargs == 2 ? args[1] : Py_None);
        }
        if (nargs)
            return fail(x, true, "dict.%s() with arguments", name), NULL;
        /* d.values() & co.: a snapshot of its content, which must not change */
        PyObject *what = PyUnicode_FromString("a dict's content");
        if (!what || dict_read_all(x, self, what) < 0) {
            Py_XDECREF(what);
            return NULL;
        }
        Py_DECREF(what);
        PyObject *r = strcmp(name, "values") == 0 ? PyDict_Values(self)
                      : strcmp(name, "keys") == 0 ? PyDict_Keys(self)
                                                  : PyDict_Items(self);
        return make_fresh(x, r);
    }
    if (!fresh)
        return fail(x, true, "%s.%s() of a container the frame did not build",
                    Py_TYPE(self)->tp_name, name), NULL;
    /* the frame's own container: update/extend read their argument whole */
    if ((strcmp(name, "update") == 0 || strcmp(name, "extend") == 0) && nargs == 1 &&
        !is_fresh(x, args[0])) {
        PyObject *items = PyDict_Check(args[0]) ? NULL : iterate(x, args[0]);
        if (PyDict_Check(args[0])) {
            PyObject *what = PyUnicode_FromString("an update's argument");
            int rc = what ? dict_read_all(x, args[0], what) : -1;
            Py_XDECREF(what);
            if (rc < 0)
                return NULL;
        } else if (!items) {
            return NULL;
        }
        PyObject *r = PyObject_Vectorcall(callable, items ? &items : args, 1, NULL);
        Py_XDECREF(items);
        if (!r)
            return fail_exception(x, name), NULL;
        return r;
    }
    if (strcmp(name, "pop") == 0 && PyDict_Check(self) && nargs >= 1 && !is_plain(x, args[0], 0))
        return fail(x, true, "dict.pop() of a %s", Py_TYPE(args[0])->tp_name), NULL;
    if (strcmp(name, "setdefault") == 0 && nargs >= 1 && !is_plain(x, args[0], 0))
        return fail(x, true, "dict.setdefault() of a %s", Py_TYPE(args[0])->tp_name), NULL;
    PyObject *r = PyObject_Vectorcall(callable, args, (size_t)nargs, NULL);
    if (!r)
        return fail_exception(x, name), NULL;
    if (strcmp(name, "copy") == 0)
        return make_fresh(x, r);
    return r;
}

/* ---- the evaluator ---- */

typedef struct {
    PyObject **locals; /* co_nlocalsplus slots, strong or NULL */
    int nlocals;
    PyObject **stack;
    int sp, cap;
    PyObject *globals, *builtins;
    PyFunctionObject *func;
    PyCodeObject *code;
} sframe;

static PyObject *eval_frame(tx *x, sframe *f);
static PyObject *call_value(tx *x, PyObject *callable, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames);

static int push(tx *x, sframe *f, PyObject *v)
{
    if (!v)
        return -1;
    if (f->sp >= f->cap) {
        Py_DECREF(v);
        return fail(x, true, "the value stack overflowed");
    }
    f->stack[f->sp++] = v;
    return 0;
}

#define POP() (f->stack[--f->sp])
#define TOP() (f->stack[f->sp - 1])
#define PEEK(n) (f->stack[f->sp - (n)])

static PyObject *global_read(tx *x, sframe *f, PyObject *name)
{
    if (!PyDict_CheckExact(f->globals) || !PyDict_CheckExact(f->builtins))
        return fail(x, true, "globals or builtins are not a dict"), NULL;
    PyObject *what = PyUnicode_FromFormat("global %U", name);
    if (!what)
        return NULL;
    int err;
    PyObject *v = dict_read(x, f->globals, name, what, &err);
    if (!v && err == 0) {
        v = dict_read(x, f->builtins, name, what, &err);
        if (!v && err == 0)
            fail(x, false, "name '%U' is not defined", name);
    }
    PyObject *r = v ? outside_value(x, v, what) : NULL;
    Py_DECREF(what);
    return r;
}

/* Truth of a value without running user code. 1, 0, or -1 with the failure. */
static int truth(tx *x, PyObject *v)
{
    if (is_tensor(x, v))
        return fail(x, true, "bool() of a tensor (data-dependent control flow)");
    if (is_scalar(v))
        return PyObject_IsTrue(v);
    if (PyTuple_Check(v) || PyList_CheckExact(v)) {
        if (list_read_all(x, v) < 0)
            return -1;
        return PyTuple_Check(v) ? PyTuple_GET_SIZE(v) != 0 : PyList_GET_SIZE(v) != 0;
    }
    if (PyDict_Check(v)) {
        PyObject *what = PyUnicode_FromString("a dict's truth");
        if (!what || dict_read_all(x, v, what) < 0) {
            Py_XDECREF(what);
            return -1;
        }
        Py_DECREF(what);
        return PyDict_GET_SIZE(v) != 0;
    }
    if (is_module(x, v))
        return 1; /* Module defines neither __bool__ nor __len__ */
    if (PyFunction_Check(v) || PyMethod_Check(v) || PyType_Check(v) || PyModule_Check(v) ||
        Py_IS_TYPE(v, x->st->dtype_type))
        return 1;
    return fail(x, true, "the truth of a %s", Py_TYPE(v)->tp_name);
}

/* A snapshot of what iterating `v` gives, as a tuple (new reference). */
static PyObject *iterate(tx *x, PyObject *v)
{
    if (PyTuple_Check(v))
        return PySequence_Tuple(v);
    if (PyList_CheckExact(v)) {
        if (list_read_all(x, v) < 0)
            return NULL;
        return PySequence_Tuple(v);
    }
    if (PyRange_Check(v))
        return PySequence_Tuple(v);
    if (PyDict_Check(v)) {
        PyObject *what = PyUnicode_FromString("an iterated dict");
        if (!what || dict_read_all(x, v, what) < 0) {
            Py_XDECREF(what);
            return NULL;
        }
        Py_DECREF(what);
        return PySequence_Tuple(v);
    }
    if (is_module(x, v)) {
        /* ModuleList, Sequential: their __iter__, inlined */
        PyObject *it = type_lookup(x, Py_TYPE(v), "__iter__");
        PyObject *what = PyUnicode_FromString("an iterated module");
        int rc = what ? type_guard(x, v, what) : -1;
        Py_XDECREF(what);
        if (rc < 0)
            return NULL;
        if (!it || !PyFunction_Check(it))
            return fail(x, true, "iteration over a %s", Py_TYPE(v)->tp_name), NULL;
        PyObject *r = call_value(x, it, &v, 1, NULL);
        if (!r)
            return NULL;
        PyObject *t = iterate(x, r);
        Py_DECREF(r);
        return t;
    }
    if (is_tensor(x, v))
        return fail(x, true, "iteration over a tensor"), NULL;
    return fail(x, true, "iteration over a %s", Py_TYPE(v)->tp_name), NULL;
}

/* Binary operators on tensors go to the op table's functions of the same names as the
 * number slots (PITH_FORALL_PYTHON_BINARY_OPERATORS), with Python numbers as wrapped
 * numbers, as tensor_number.c does: the same operator, so the same bits. */
static const char *binary_function(int op, bool *inplace)
{
    *inplace = op >= NB_INPLACE_ADD;
    switch (*inplace ? op - NB_INPLACE_ADD : op) {
    case NB_ADD: return "add";
    case NB_SUBTRACT: return "sub";
    case NB_MULTIPLY: return "mul";
    case NB_TRUE_DIVIDE: return "div";
    case NB_FLOOR_DIVIDE: return "floor_divide";
    case NB_REMAINDER: return "remainder";
    case NB_AND: return "bitwise_and";
    case NB_OR: return "bitwise_or";
    case NB_XOR: return "bitwise_xor";
    case NB_MATRIX_MULTIPLY: return "matmul";
    case NB_POWER: return "pow";
    default: return NULL;
    }
}

static PyObject *as_operand(tx *x, PyObject *v)
{
    if (is_tensor(x, v))
        return Py_NewRef(v);
    int ni;
    pith_tensor *t = operand_to_tensor(x->st, v, &ni);
    if (!t) {
        if (ni)
            return fail(x, true, "an operand of type %s", Py_TYPE(v)->tp_name), NULL;
        return fail_exception(x, "a Python number"), NULL;
    }
    return tensor_wrap(x->st, t);
}

static PyObject *pith_function(tx *x, const char *name)
{
    PyObject *pith = PyImport_ImportModule("pith._C");
    if (!pith)
        return NULL;
    PyObject *fn = PyObject_GetAttrString(pith, name);
    Py_DECREF(pith);
    return fn;
}

/* pith.<name>(a, b), Python numbers as wrapped numbers, recorded. */
static PyObject *tensor_operator(tx *x, const char *name, PyObject *a, PyObject *b)
{
    PyObject *fn = pith_function(x, name);
    PyObject *ta = fn ? as_operand(x, a) : NULL;
    PyObject *tb = ta ? as_operand(x, b) : NULL;
    PyObject *r = NULL;
    if (tb) {
        PyObject *args[2] = {ta, tb};
        r = call_value(x, fn, args, 2, NULL);
    }
    Py_XDECREF(fn);
    Py_XDECREF(ta);
    Py_XDECREF(tb);
    return r;
}

static PyObject *tensor_binary(tx *x, int op, PyObject *a, PyObject *b)
{
    bool inplace;
    const char *name = binary_function(op, &inplace);
    if (!name)
        return fail(x, true, "the operator %d on tensors", op), NULL;
    if (op == NB_MATRIX_MULTIPLY && !(is_tensor(x, a) && is_tensor(x, b)))
        return fail(x, true, "@ with a Python number"), NULL;
    if (inplace && is_tensor(x, a)) {
        char method[32];
        snprintf(method, sizeof method, "%s_", name);
        PyObject *mname = PyUnicode_InternFromString(method);
        PyObject *m = mname ? tensor_getattr(x, a, mname) : NULL;
        Py_XDECREF(mname);
        if (!m)
            return NULL;
        PyObject *r = call_value(x, m, &b, 1, NULL);
        Py_DECREF(m);
        return r;
    }
    return tensor_operator(x, name, a, b);
}

static PyObject *binary_op(tx *x, int op, PyObject *a, PyObject *b)
{
    if (is_tensor(x, a) || is_tensor(x, b))
        return tensor_binary(x, op, a, b);
    if (!is_plain(x, a, 0) || !is_plain(x, b, 0))
        return fail(x, true, "an operator on %s and %s", Py_TYPE(a)->tp_name,
                    Py_TYPE(b)->tp_name),
               NULL;
    PyObject *r;
    switch (op >= NB_INPLACE_ADD ? op - NB_INPLACE_ADD : op) {
    case NB_ADD: r = PyNumber_Add(a, b); break;
    case NB_SUBTRACT: r = PyNumber_Subtract(a, b); break;
    case NB_MULTIPLY: r = PyNumber_Multiply(a, b); break;
    case NB_TRUE_DIVIDE: r = PyNumber_TrueDivide(a, b); break;
    case NB_FLOOR_DIVIDE: r = PyNumber_FloorDivide(a, b); break;
    case NB_REMAINDER: r = PyNumber_Remainder(a, b); break;
    case NB_POWER: r = PyNumber_Power(a, b, Py_None); break;
    case NB_AND: r = PyNumber_And(a, b); break;
    case NB_OR: r = PyNumber_Or(a, b); break;
    case NB_XOR: r = PyNumber_Xor(a, b); break;
    case NB_LSHIFT: r = PyNumber_Lshift(a, b); break;
    case NB_RSHIFT: r = PyNumber_Rshift(a, b); break;
    default: return fail(x, true, "the operator %d", op), NULL;
    }
    if (!r)
        return fail_exception(x, "an operator"), NULL;
    if (PyList_CheckExact(r) || PyDict_CheckExact(r))
        return make_fresh(x, r); /* [None] * 3: a new list, the frame's own */
    return r;
}

static PyObject *compare_op(tx *x, int op, PyObject *a, PyObject *b)
{
    static const char *const names[] = {"lt", "le", "eq", "ne", "gt", "ge"};
    if (op < 0 || op > 5)
        return fail(x, true, "the comparison %d", op), NULL;
    if (is_tensor(x, a) || is_tensor(x, b))
        return tensor_operator(x, names[op], a, b);
    if (!is_plain(x, a, 0) || !is_plain(x, b, 0))
        return fail(x, true, "a comparison of %s and %s", Py_TYPE(a)->tp_name,
                    Py_TYPE(b)->tp_name),
               NULL;
    PyObject *r = PyObject_RichCompare(a, b, op);
    if (!r)
        return fail_exception(x, "a comparison"), NULL;
    return r;
}

/* ---- calls ---- */

/* Binds a call to a Python function into a fresh frame's slots, as CPython does. */
static int bind_arguments(tx *x, PyFunctionObject *fn, PyObject *const *args, Py_ssize_t nargs,
                          PyObject *kwnames, PyObject **slots)
{
    PyCodeObject *co = (PyCodeObject *)fn->func_code;
    int argc = co->co_argcount, kwonly = co->co_kwonlyargcount,
        posonly = co->co_posonlyargcount;
    bool varargs = co->co_flags & CO_VARARGS, varkw = co->co_flags & CO_VARKEYWORDS;
    int total = argc + kwonly;
    PyObject *kwdict = NULL;
    if (varkw) {
        kwdict = make_fresh(x, PyDict_New());
        if (!kwdict)
            return -1;
        slots[total + varargs] = Py_NewRef(kwdict);
    }
    Py_ssize_t npos = nargs < argc ? nargs : argc;
    for (Py_ssize_t i = 0; i < npos; i++)
        slots[i] = Py_NewRef(args[i]);
    if (varargs) {
        PyObject *rest = PyTuple_New(nargs > argc ? nargs - argc : 0);
        if (!rest)
            return -1;
        for (Py_ssize_t i = argc; i < nargs; i++)
            PyTuple_SET_ITEM(rest, i - argc, Py_NewRef(args[i]));
        slots[total] = rest;
    } else if (nargs > argc) {
        return fail(x, false, "%U() takes %d positional arguments but %zd were given",
                    co->co_name, argc, nargs);
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k), *value = args[nargs + k];
        int j;
        for (j = posonly; j < total; j++) {
            PyObject *pname = PyTuple_GET_ITEM(co->co_localsplusnames, j);
            if (pname == key || PyUnicode_Compare(pname, key) == 0)
                break;
        }
        if (j < total) {
            if (slots[j])
                return fail(x, false, "%U() got multiple values for argument '%U'",
                            co->co_name, key);
            slots[j] = Py_NewRef(value);
        } else if (kwdict) {
            if (PyDict_SetItem(kwdict, key, value) < 0)
                return -1;
        } else {
            return fail(x, false, "%U() got an unexpected keyword argument '%U'",
                        co->co_name, key);
        }
    }
    PyObject *defaults = fn->func_defaults;
    Py_ssize_t ndef = defaults ? PyTuple_GET_SIZE(defaults) : 0;
    for (int i = 0; i < argc; i++) {
        if (slots[i])
            continue;
        Py_ssize_t d = i - (argc - ndef);
        if (d < 0)
            return fail(x, false, "%U() missing a required argument", co->co_name);
        slots[i] = Py_NewRef(PyTuple_GET_ITEM(defaults, d));
    }
    for (int i = argc; i < total; i++) {
        if (slots[i])
            continue;
        PyObject *pname = PyTuple_GET_ITEM(co->co_localsplusnames, i);
        PyObject *v = fn->func_kwdefaults ? PyDict_GetItemWithError(fn->func_kwdefaults, pname)
                                          : NULL;
        if (!v) {
            if (PyErr_Occurred())
                return -1;
            return fail(x, false, "%U() missing a required keyword-only argument '%U'",
                        co->co_name, pname);
        }
        slots[i] = Py_NewRef(v);
    }
    return 0;
}

static int func_guard(tx *x, PyFunctionObject *fn)
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

static PyObject *inline_function(tx *x, PyFunctionObject *fn, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
    PyCodeObject *co = (PyCodeObject *)fn->func_code;
    if (co->co_flags & (CO_GENERATOR | CO_COROUTINE | CO_ASYNC_GENERATOR | CO_ITERABLE_COROUTINE))
        return fail(x, true, "a call of the generator or coroutine %U", fn->func_qualname),
               NULL;
    if (x->depth >= TRANSLATE_MAX_DEPTH)
        return fail(x, true, "calls nest deeper than %d", TRANSLATE_MAX_DEPTH), NULL;
    if (func_guard(x, fn) < 0)
        return NULL;
    int n = co->co_nlocalsplus;
    sframe f = {0};
    f.nlocals = n;
    f.cap = co->co_stacksize + 4;
    f.locals = PyMem_Calloc((size_t)n + (size_t)f.cap + 1, sizeof(PyObject *));
    if (!f.locals)
        return PyErr_NoMemory();
    f.stack = f.locals + n;
    f.globals = fn->func_globals;
    f.builtins = fn->func_builtins;
    f.func = fn;
    f.code = co;
    PyObject *result = NULL;
    PyCodeObject *saved_code = x->code;
    int saved_pc = x->pc;
    if (bind_arguments(x, fn, args, nargs, kwnames, f.locals) == 0) {
        x->depth++;
        result = eval_frame(x, &f);
        x->depth--;
    }
    x->code = saved_code;
    x->pc = saved_pc;
    for (int i = 0; i < n + f.sp; i++) /* above sp: popped, already released */
        Py_XDECREF(f.locals[i]);
    PyMem_Free(f.locals);
    return result;
}

/* Builtins evaluated here, on plain values only. */
static PyObject *call_builtin(tx *x, PyObject *callable, PyObject *const *args, Py_ssize_t nargs,
                              PyObject *kwnames)
{
    const char *name = ((PyCFunctionObject *)callable)->m_ml->ml_name;
    PyObject *self = PyCFunction_GET_SELF(callable);
    bool is_builtin = self && PyModule_Check(self) &&
                      strcmp(PyModule_GetName(self) ? PyModule_GetName(self) : "", "builtins") == 0;
    if (PyErr_Occurred())
        PyErr_Clear();
    if (self && (PyDict_Check(self) || PyList_CheckExact(self))) {
        PyObject *uname = PyUnicode_FromString(name);
        bool ok = uname && container_method(x, self, uname);
        Py_XDECREF(uname);
        if (!ok)
            return fail(x, true, "%s.%s()", Py_TYPE(self)->tp_name, name), NULL;
        return container_call(x, callable, self, name, args, nargs, kwnames);
    }
    bool is_math = self && PyModule_Check(self) && PyModule_GetName(self) &&
                   strcmp(PyModule_GetName(self), "math") == 0;
    if (PyErr_Occurred())
        PyErr_Clear();
    if (is_math && !kwnames) {
        /* math's functions are pure on numbers */
        for (Py_ssize_t i = 0; i < nargs; i++)
            if (!(PyLong_CheckExact(args[i]) || PyFloat_CheckExact(args[i]) ||
                  PyBool_Check(args[i])))
                return fail(x, true, "math.%s of a %s", name, Py_TYPE(args[i])->tp_name), NULL;
        PyObject *r = PyObject_Vectorcall(callable, args, (size_t)nargs, NULL);
        if (!r)
            return fail_exception(x, name), NULL;
        return r;
    }
    if (!is_builtin || kwnames)
        return fail(x, true, "a call of the builtin %s", name), NULL;
    if (strcmp(name, "len") == 0 && nargs == 1) {
        PyObject *v = args[0];
        if (is_tensor(x, v)) {
            int64_t sizes[PITH_MAX_DIMS];
            int nd = pith_sizes(tensor_of(v), sizes);
            if (nd == 0)
                return fail(x, false, "len() of a 0-d tensor"), NULL;
            return PyLong_FromLongLong(sizes[0]);
        }
        if (PyDict_Check(v)) {
            PyObject *what = PyUnicode_FromString("a dict's length");
            if (!what || dict_read_all(x, v, what) < 0) {
                Py_XDECREF(what);
                return NULL;
            }
            Py_DECREF(what);
            return PyLong_FromSsize_t(PyDict_GET_SIZE(v));
        }
        if (is_plain(x, v, 0) && (PyTuple_Check(v) || PyList_CheckExact(v) ||
                                  PyUnicode_CheckExact(v)))
            return PyLong_FromSsize_t(PyObject_Length(v));
        return fail(x, true, "len() of a %s", Py_TYPE(v)->tp_name), NULL;
    }
    if (strcmp(name, "isinstance") == 0 && nargs == 2) {
        /* by the type alone, for classes of the plain metaclass: __instancecheck__ and a
         * __class__ property would be user code (a stand-in's type is the guarded type of
         * its argument, or pith.Tensor for what the graph computes) */
        PyObject *classes = PyTuple_Check(args[1]) ? args[1] : NULL;
        Py_ssize_t n = classes ? PyTuple_GET_SIZE(classes) : 1;
        int rc = 0;
        for (Py_ssize_t i = 0; i < n && !rc; i++) {
            PyObject *c = classes ? PyTuple_GET_ITEM(classes, i) : args[1];
            if (!PyType_Check(c) || (Py_TYPE(c) != &PyType_Type &&
                                     !PyType_IsSubtype(Py_TYPE(c), &PyType_Type)) ||
                type_lookup(x, Py_TYPE(c), "__instancecheck__") !=
                    type_lookup(x, &PyType_Type, "__instancecheck__"))
                return fail(x, true, "isinstance() with a class argument of type %s",
                            Py_TYPE(c)->tp_name), NULL;
            rc = PyType_IsSubtype(value_type(x, args[0]), (PyTypeObject *)c);
        }
        return PyBool_FromLong(rc);
    }
    if (strcmp(name, "iter") == 0 && nargs == 1) {
        PyObject *t = iterate(x, args[0]);
        return t ? make_fresh(x, t) : NULL;
    }
    bool is_getattr = strcmp(name, "getattr") == 0 && (nargs == 2 || nargs == 3);
    if (is_getattr || (strcmp(name, "hasattr") == 0 && nargs == 2)) {
        if (!PyUnicode_CheckExact(args[1]))
            return fail(x, false, "%s() with a name of type %s", name,
                        Py_TYPE(args[1])->tp_name), NULL;
        bool saved = x->absent_ok;
        x->absent_ok = true;
        x->absent = false;
        PyObject *r = load_attr(x, args[0], args[1]);
        bool absent = x->absent;
        x->absent_ok = saved;
        x->absent = false;
        if (!is_getattr) {
            if (r || absent) {
                Py_XDECREF(r);
                return PyBool_FromLong(r != NULL);
            }
            return NULL;
        }
        if (!r && absent && nargs == 3)
            return Py_NewRef(args[2]);
        if (!r && absent)
            return fail(x, false, "getattr(): %U is missing (AttributeError)", args[1]), NULL;
        return r;
    }
    bool all_plain = true;
    for (Py_ssize_t i = 0; i < nargs; i++)
        all_plain = all_plain && is_plain(x, args[i], 0);
    static const char *const pure[] = {"abs", "min", "max", "round", "divmod", NULL};
    for (int i = 0; all_plain && pure[i]; i++)
        if (strcmp(name, pure[i]) == 0) {
            PyObject *r = PyObject_Vectorcall(callable, args, (size_t)nargs, NULL);
            if (!r)
                return fail_exception(x, name), NULL;
            return r;
        }
    return fail(x, true, "a call of the builtin %s", name), NULL;
}

/* Types callable here: tuple, list, range, int, float, bool on plain values. */
static PyObject *call_type(tx *x, PyTypeObject *tp, PyObject *const *args, Py_ssize_t nargs,
                           PyObject *kwnames)
{
    if (kwnames)
        return fail(x, true, "a call of %s with keywords", tp->tp_name), NULL;
    if (tp == &PyType_Type && nargs == 1)
        return Py_NewRef((PyObject *)value_type(x, args[0])); /* type(v) */
    if ((tp == &PyEnum_Type && (nargs == 1 || (nargs == 2 && PyLong_CheckExact(args[1])))) ||
        (tp == &PyReversed_Type && nargs == 1) || (tp == &PyZip_Type && nargs >= 1)) {
        /* over snapshots (iterate): the result is a fresh list of what iterating gives */
        PyObject *snap[8];
        if (nargs > 8)
            return fail(x, true, "zip() of more than 8 iterables"), NULL;
        Py_ssize_t nit = tp == &PyEnum_Type ? 1 : nargs;
        for (Py_ssize_t i = 0; i < nit; i++)
            if (!(snap[i] = iterate(x, args[i]))) {
                for (Py_ssize_t j = 0; j < i; j++)
                    Py_DECREF(snap[j]);
                return NULL;
            }
        PyObject *call_args[8];
        for (Py_ssize_t i = 0; i < nit; i++)
            call_args[i] = snap[i];
        if (tp == &PyEnum_Type && nargs == 2)
            call_args[nit++] = args[1];
        PyObject *it = PyObject_Vectorcall((PyObject *)tp, call_args, (size_t)nit, NULL);
        for (Py_ssize_t i = 0; i < (tp == &PyEnum_Type ? 1 : nargs); i++)
            Py_DECREF(snap[i]);
        PyObject *r = it ? PySequence_List(it) : NULL;
        Py_XDECREF(it);
        if (!r)
            return fail_exception(x, tp->tp_name), NULL;
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(r); i++) {
            if (!PyTuple_CheckExact(PyList_GET_ITEM(r, i)))
                continue;
            PyObject *item = make_fresh(x, Py_NewRef(PyList_GET_ITEM(r, i)));
            if (!item) {
                Py_DECREF(r);
                return NULL;
            }
            Py_DECREF(item); /* `keep` holds it */
        }
        return make_fresh(x, r);
    }
    if (tp == &PyDict_Type && nargs <= 1) {
        PyObject *d = PyDict_New();
        if (!d)
            return NULL;
        if (nargs == 1) {
            PyObject *what = PyUnicode_FromString("dict()'s argument");
            int rc = !PyDict_Check(args[0]) || !what ? -1 : dict_read_all(x, args[0], what);
            Py_XDECREF(what);
            if (rc < 0 || PyDict_Update(d, args[0]) < 0) {
                Py_DECREF(d);
                return PyErr_Occurred() ? NULL : (fail(x, true, "dict() of a %s",
                                                       Py_TYPE(args[0])->tp_name), NULL);
            }
        }
        return make_fresh(x, d);
    }
    if (tp == &PyTuple_Type || tp == &PyList_Type) {
        if (nargs == 0)
            return make_fresh(x, PyObject_CallNoArgs((PyObject *)tp));
        if (nargs == 1) {
            PyObject *t = iterate(x, args[0]);
            if (!t)
                return NULL;
            if (tp == &PyTuple_Type)
                return t;
            PyObject *l = PySequence_List(t);
            Py_DECREF(t);
            return make_fresh(x, l);
        }
    }
    if ((tp == &PyRange_Type || tp == &PyLong_Type || tp == &PyFloat_Type ||
         tp == &PyBool_Type) && nargs >= 1) {
        for (Py_ssize_t i = 0; i < nargs; i++)
            if (!is_scalar(args[i]))
                return fail(x, true, "%s() of a %s", tp->tp_name, Py_TYPE(args[i])->tp_name),
                       NULL;
        PyObject *r = PyObject_Vectorcall((PyObject *)tp, args, (size_t)nargs, NULL);
        if (!r)
            return fail_exception(x, tp->tp_name), NULL;
        return r;
    }
    return fail(x, true, "a call of the type %s", tp->tp_name), NULL;
}

/* A call of a pith operator, recorded into the graph (Note [Recording calls into a graph]):
 * every tensor in the result must be a stand-in of this graph. */
static PyObject *record_call(tx *x, PyObject *callable, PyObject *const *args, Py_ssize_t nargs,
                             PyObject *kwnames)
{
    pith_graph *previous = binder_record_into(x->g);
    PyObject *r = PyObject_Vectorcall(callable, args, (size_t)nargs, kwnames);
    binder_record_into(previous);
    if (!r)
        return fail_exception(x, "an operator"), NULL;
    /* An in-place op returns its argument itself (the binder's return_alias); out= names
     * its target. Either way the graph writes memory that another input may share. */
    for (Py_ssize_t i = 0; i < nargs && !x->mutates; i++)
        x->mutates = args[i] == r && is_tensor(x, r);
    for (Py_ssize_t k = 0; kwnames && k < PyTuple_GET_SIZE(kwnames); k++)
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "out") == 0)
            x->mutates = true;
    if (PyList_Append(x->keep, r) < 0) {
        Py_DECREF(r);
        return NULL;
    }
    return r;
}

static PyObject *call_value(tx *x, PyObject *callable, PyObject *const *args, Py_ssize_t nargs,
                            PyObject *kwnames)
{
    if (PyMethod_Check(callable)) {
        PyObject *func = PyMethod_GET_FUNCTION(callable), *self = PyMethod_GET_SELF(callable);
        Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        PyObject **all = PyMem_Malloc((size_t)(nargs + nkw + 1) * sizeof *all);
        if (!all)
            return PyErr_NoMemory();
        all[0] = self;
        for (Py_ssize_t i = 0; i < nargs + nkw; i++)
            all[i + 1] = args[i];
        PyObject *r = call_value(x, func, all, nargs + 1, kwnames);
        PyMem_Free(all);
        return r;
    }
    if (is_binder_callable(x, callable))
        return record_call(x, callable, args, nargs, kwnames);
    if (PyFunction_Check(callable))
        return inline_function(x, (PyFunctionObject *)callable, args, nargs, kwnames);
    if (PyCFunction_Check(callable) && PyCFunction_GET_SELF(callable) &&
        is_tensor(x, PyCFunction_GET_SELF(callable))) {
        /* a bound C method of a stand-in: the metadata queries and the conversions */
        const char *name = ((PyCFunctionObject *)callable)->m_ml->ml_name;
        int which = conversion_of(name);
        if (which >= 0)
            return conversion_call(x, PyCFunction_GET_SELF(callable), which, args, nargs,
                                   kwnames);
        PyObject *uname = PyUnicode_FromString(name);
        bool query = uname && is_tensor_query(uname);
        Py_XDECREF(uname);
        if (!query)
            return fail(x, true, "Tensor.%s is not supported by pith.compile", name), NULL;
        PyObject *r = PyObject_Vectorcall(callable, args, (size_t)nargs, kwnames);
        if (!r)
            return fail_exception(x, "a tensor query"), NULL;
        return r;
    }
    if (PyCFunction_Check(callable))
        return call_builtin(x, callable, args, nargs, kwnames);
    if (PyType_Check(callable))
        return call_type(x, (PyTypeObject *)callable, args, nargs, kwnames);
    if (Py_TYPE(callable) == &PyMethodDescr_Type && nargs >= 1 && is_tensor(x, args[0])) {
        /* an unbound C method of Tensor, such as a metadata query reached by LOAD_METHOD */
        PyObject *name = PyDescr_NAME(callable);
        if (!is_tensor_query(name))
            return fail(x, true, "Tensor.%U is not supported by pith.compile", name), NULL;
        PyObject *r = PyObject_Vectorcall(callable, args, (size_t)nargs, kwnames);
        if (!r)
            return fail_exception(x, "a tensor query"), NULL;
        return r;
    }
    if (is_module(x, callable)) {
        /* m(x): type(m).__call__, inlined (pith.nn.Module.__call__ checks the hooks) */
        PyObject *call = type_lookup(x, Py_TYPE(callable), "__call__");
        PyObject *what = PyUnicode_FromString("a called module");
        int rc = what ? type_guard(x, callable, what) : -1;
        Py_XDECREF(what);
        if (rc < 0)
            return NULL;
        if (!call || !PyFunction_Check(call))
            return fail(x, true, "%s.__call__ is not a Python function",
                        Py_TYPE(callable)->tp_name),
                   NULL;
        Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
        PyObject **all = PyMem_Malloc((size_t)(nargs + nkw + 1) * sizeof *all);
        if (!all)
            return PyErr_NoMemory();
        all[0] = callable;
        for (Py_ssize_t i = 0; i < nargs + nkw; i++)
            all[i + 1] = args[i];
        PyObject *r = inline_function(x, (PyFunctionObject *)call, all, nargs + 1, kwnames);
        PyMem_Free(all);
        return r;
    }
    return fail(x, true, "a call of a %s", Py_TYPE(callable)->tp_name), NULL;
}

/* ---- bytecode ---- */

static PyObject *opname(int op)
{
    PyObject *mod = PyImport_ImportModule("opcode");
    PyObject *names = mod ? PyObject_GetAttrString(mod, "opname") : NULL;
    Py_XDECREF(mod);
    PyObject *r = names ? PySequence_GetItem(names, op) : NULL;
    Py_XDECREF(names);
    if (!r) {
        PyErr_Clear();
        r = PyUnicode_FromFormat("opcode %d", op);
    }
    return r;
}

static int unsupported_opcode(tx *x, int op)
{
    PyObject *name = opname(op);
    if (!name)
        return -1;
    fail(x, true, "the bytecode %U is not supported by pith.compile", name);
    Py_DECREF(name);
    return -1;
}

/* An operator by its schema name, called with `args` and recorded. */
static PyObject *record_op(tx *x, const char *name, PyObject *const *args, Py_ssize_t nargs)
{
    const pith_op *op = pith_op_find(name);
    PyObject *ov = op ? binder_overload_of(x->st, op) : NULL;
    if (!ov)
        return fail_exception(x, name), NULL;
    return record_call(x, ov, args, nargs, NULL);
}

static PyObject *record_view(tx *x, const char *name, PyObject *t, Py_ssize_t dim,
                             const Py_ssize_t *ints, int nints)
{
    PyObject *args[5] = {t, NULL, NULL, NULL, NULL};
    int n = 1;
    if (strcmp(name, "alias") != 0) {
        args[n++] = PyLong_FromSsize_t(dim);
        for (int i = 0; i < nints; i++)
            args[n++] = PyLong_FromSsize_t(ints[i]);
    }
    PyObject *r = NULL;
    bool ok = true;
    for (int i = 1; i < n; i++)
        ok = ok && args[i];
    if (ok)
        r = record_op(x, name, args, n);
    for (int i = 1; i < n; i++)
        Py_XDECREF(args[i]);
    return r;
}

/* t[key] for a stand-in `t` and a key of ints, slices, None and Ellipsis: the chain of
 * views that indexing.c makes (Note [Basic indexing is a chain of views]), recorded
 * op by op: select.int, slice.Tensor and unsqueeze over an alias, or select.int alone
 * for a lone int in range, as its fast path does. Errors (an int out of range, too many
 * indices, a step <= 0) and advanced indexing run eagerly. */
static PyObject *tensor_subscript(tx *x, PyObject *t, PyObject *key)
{
    int64_t sizes[PITH_MAX_DIMS];
    int ndim = pith_sizes(tensor_of(t), sizes), orig_ndim = ndim;
    bool is_tuple = PyTuple_CheckExact(key);
    Py_ssize_t n = is_tuple ? PyTuple_GET_SIZE(key) : 1;
    int named = 0;
    bool ellipsis = false;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = is_tuple ? PyTuple_GET_ITEM(key, i) : key;
        if (PyLong_CheckExact(item) || PySlice_Check(item))
            named++;
        else if (item == Py_Ellipsis) {
            if (ellipsis)
                return fail(x, false, "an index with two ellipses"), NULL;
            ellipsis = true;
        } else if (item != Py_None)
            return fail(x, true, "indexing a tensor with a %s (advanced indexing)",
                        Py_TYPE(item)->tp_name), NULL;
    }
    if (!is_tuple && PyLong_CheckExact(key) && ndim > 0) {
        Py_ssize_t i = PyLong_AsSsize_t(key);
        if (i == -1 && PyErr_Occurred())
            return fail_exception(x, "an index"), NULL;
        if (i >= -sizes[0] && i < sizes[0])
            return record_view(x, "select.int", t, 0, &i, 1);
    }
    if (named > ndim || (ndim == 0 && !is_tuple && PyLong_CheckExact(key)))
        return fail(x, false, "an index the tensor cannot take"), NULL;
    PyObject *cur = record_view(x, "alias", t, 0, NULL, 0);
    Py_ssize_t dim = 0;
    for (Py_ssize_t i = 0; cur && i < n; i++) {
        PyObject *item = is_tuple ? PyTuple_GET_ITEM(key, i) : key;
        PyObject *next = NULL;
        if (PyLong_CheckExact(item)) {
            Py_ssize_t v = PyLong_AsSsize_t(item);
            if (v == -1 && PyErr_Occurred()) {
                fail_exception(x, "an index");
            } else if (v < -sizes[dim] || v >= sizes[dim]) {
                fail(x, false, "index %zd is out of range", v);
            } else {
                next = record_view(x, "select.int", cur, dim, &v, 1);
                /* a select removes the dim: the next item indexes the one after it */
                for (int d = (int)dim; next && d + 1 < ndim; d++)
                    sizes[d] = sizes[d + 1];
                ndim--;
            }
        } else if (PySlice_Check(item)) {
            Py_ssize_t bounds[3]; /* start, stop, step, as indexing.c reads them */
            PyObject *step = ((PySliceObject *)item)->step;
            bounds[2] = step == Py_None ? 1 : PyNumber_AsSsize_t(step, NULL);
            if (bounds[2] == -1 && PyErr_Occurred())
                fail_exception(x, "a slice");
            else if (bounds[2] <= 0)
                fail(x, false, "a slice step <= 0");
            else if (PySlice_Unpack(item, &bounds[0], &bounds[1], &bounds[2]) < 0)
                fail_exception(x, "a slice");
            else
                next = record_view(x, "slice.Tensor", cur, dim++, bounds, 3);
        } else if (item == Py_None) {
            next = record_view(x, "unsqueeze", cur, dim, NULL, 0);
            for (int d = ndim; next && d > (int)dim; d--)
                sizes[d] = sizes[d - 1];
            sizes[dim++] = 1;
            ndim++;
        } else { /* Ellipsis: the dims that no int or slice names, as indexing.c */
            dim += orig_ndim - named;
            next = Py_NewRef(cur);
        }
        Py_DECREF(cur);
        cur = next;
    }
    return cur;
}

static PyObject *subscript(tx *x, PyObject *c, PyObject *k)
{
    if (is_tensor(x, c))
        return tensor_subscript(x, c, k);
    if ((PyTuple_Check(c) || PyList_CheckExact(c)) && is_plain(x, k, 0)) {
        if (list_read_all(x, c) < 0)
            return NULL;
        PyObject *r = PyObject_GetItem(c, k);
        if (!r)
            return fail_exception(x, "a subscript"), NULL;
        if (PyList_CheckExact(r) || PyTuple_CheckExact(r))
            return make_fresh(x, r);
        return r;
    }
    if (PyDict_CheckExact(c) && is_scalar(k)) {
        if (!is_fresh(x, c)) {
            PyObject *what = PyUnicode_FromString("a dict item");
            if (!what)
                return NULL;
            int err;
            PyObject *v = dict_read(x, c, k, what, &err);
            PyObject *r = v ? outside_value(x, v, what)
                          : err == 0 ? (fail(x, false, "a missing dict key"), NULL) : NULL;
            Py_DECREF(what);
            return r;
        }
        PyObject *r = PyObject_GetItem(c, k);
        if (!r)
            return fail_exception(x, "a subscript"), NULL;
        return r;
    }
    return fail(x, true, "subscript of a %s", Py_TYPE(c)->tp_name), NULL;
}

static PyObject *eval_frame(tx *x, sframe *f)
{
    PyCodeObject *co = f->code;
    x->code = co;
    x->pc = 0;
    if (PyBytes_GET_SIZE(co->co_exceptiontable) > 0) {
        /* A handler would catch what the compiled graph raises at run time (an index out
         * of range), which the graph cannot do: the frame runs eagerly. */
        fail(x, true, "%U has try/except or with blocks", co->co_qualname);
        return NULL;
    }
    PyObject *bytes = PyCode_GetCode(co);
    if (!bytes)
        return NULL;
    const _Py_CODEUNIT *code = (const _Py_CODEUNIT *)PyBytes_AS_STRING(bytes);
    int n = (int)(PyBytes_GET_SIZE(bytes) / (Py_ssize_t)sizeof(_Py_CODEUNIT));
    PyObject *kwnames = NULL, *result = NULL;
    int extended = 0;
    x->code = co;
    for (int pc = 0; pc < n;) {
        int op = _Py_OPCODE(code[pc]);
        int arg = _Py_OPARG(code[pc]) | extended;
        extended = 0;
        x->pc = pc;
        x->code = co;
        int next = pc + 1;
        if (++x->steps > TRANSLATE_MAX_STEPS) {
            fail(x, true, "the frame takes more than %d steps to translate",
                 TRANSLATE_MAX_STEPS);
            goto error;
        }
        switch (op) {
        case CACHE:
        case NOP:
        case RESUME:
        case PRECALL:
            break;
        case MAKE_CELL: {
            /* a cell of this frame: the translation's own, which inner functions share */
            PyObject *cell = make_fresh(x, PyCell_New(f->locals[arg]));
            if (!cell)
                goto error;
            Py_XSETREF(f->locals[arg], cell);
            break;
        }
        case EXTENDED_ARG:
            extended = arg << 8;
            break;
        case COPY_FREE_VARS: {
            PyObject *closure = f->func->func_closure;
            if (!closure || PyTuple_GET_SIZE(closure) != arg) {
                fail(x, true, "the closure does not match the code");
                goto error;
            }
            for (int i = 0; i < arg; i++) {
                PyObject *cell = PyTuple_GET_ITEM(closure, i);
                int slot = f->nlocals - arg + i;
                if (is_fresh(x, cell)) {
                    /* a cell of a translated frame, shared with this inner function */
                    Py_XSETREF(f->locals[slot], Py_NewRef(cell));
                    continue;
                }
                PyObject *v = PyCell_GET(cell);
                if (!v) {
                    fail(x, false, "a free variable is unbound");
                    goto error;
                }
                guard *gd = guard_add(x, GUARD_CELL);
                if (!gd)
                    goto error;
                gd->obj = Py_NewRef(cell);
                gd->aux = Py_NewRef(v);
                gd->name = PyUnicode_FromFormat(
                    "free variable %U", PyTuple_GET_ITEM(co->co_localsplusnames,
                                                         f->nlocals - arg + i));
                if (!gd->name)
                    goto error;
                /* a shadow of the outside cell, holding what the translation reads from it;
                 * writing it would be a nonlocal write, which STORE_DEREF refuses */
                PyObject *sv = outside_value(x, v, gd->name);
                PyObject *shadow = sv ? make_fresh(x, PyCell_New(sv)) : NULL;
                Py_XDECREF(sv);
                PyObject *sid = shadow ? PyLong_FromVoidPtr(shadow) : NULL;
                if (!sid || PySet_Add(x->shadow_cells, sid) < 0) {
                    Py_XDECREF(sid);
                    Py_XDECREF(shadow);
                    goto error;
                }
                Py_DECREF(sid);
                Py_XSETREF(f->locals[slot], shadow);
            }
            break;
        }
        case LOAD_DEREF: {
            PyObject *cell = f->locals[arg];
            PyObject *v = cell && PyCell_Check(cell) ? PyCell_GET(cell) : NULL;
            if (!v) {
                fail(x, false, "a free or cell variable is unbound");
                goto error;
            }
            if (push(x, f, Py_NewRef(v)) < 0)
                goto error;
            break;
        }
        case LOAD_CLOSURE:
            if (!f->locals[arg] || !PyCell_Check(f->locals[arg])) {
                fail(x, true, "a closure of a variable without a cell");
                goto error;
            }
            if (push(x, f, Py_NewRef(f->locals[arg])) < 0)
                goto error;
            break;
        case STORE_DEREF: {
            PyObject *cell = f->locals[arg], *v = POP();
            PyObject *sid = cell ? PyLong_FromVoidPtr(cell) : NULL;
            int shadow = sid ? PySet_Contains(x->shadow_cells, sid) : -1;
            Py_XDECREF(sid);
            if (!cell || !PyCell_Check(cell) || shadow != 0) {
                Py_DECREF(v);
                if (shadow > 0 || !cell)
                    fail(x, true, "a write to a variable of an enclosing function (nonlocal)");
                goto error;
            }
            int rc = PyCell_Set(cell, v);
            Py_DECREF(v);
            if (rc < 0)
                goto error;
            break;
        }
        case MAKE_FUNCTION: {
            /* a nested function or lambda: a function of the translation's own, whose
             * calls are inlined like any other */
            PyObject *code = POP();
            PyObject *closure = arg & 0x08 ? POP() : NULL;
            PyObject *annotations = arg & 0x04 ? POP() : NULL;
            PyObject *kwdefaults = arg & 0x02 ? POP() : NULL;
            PyObject *defaults = arg & 0x01 ? POP() : NULL;
            PyObject *fn = PyCode_Check(code) ? PyFunction_New(code, f->globals) : NULL;
            int rc = fn ? 0 : -1;
            if (fn && closure)
                rc = PyFunction_SetClosure(fn, closure);
            if (fn && rc == 0 && defaults)
                rc = PyFunction_SetDefaults(fn, defaults);
            if (fn && rc == 0 && kwdefaults)
                rc = PyFunction_SetKwDefaults(fn, kwdefaults);
            Py_DECREF(code);
            Py_XDECREF(closure);
            Py_XDECREF(annotations);
            Py_XDECREF(kwdefaults);
            Py_XDECREF(defaults);
            if (rc < 0) {
                Py_XDECREF(fn);
                goto error;
            }
            if (push(x, f, make_fresh(x, fn)) < 0)
                goto error;
            break;
        }
        case LOAD_FAST: {
            PyObject *v = f->locals[arg];
            if (!v) {
                fail(x, false, "a local is unbound");
                goto error;
            }
            if (push(x, f, Py_NewRef(v)) < 0)
                goto error;
            break;
        }
        case STORE_FAST:
            Py_XSETREF(f->locals[arg], POP());
            break;
        case DELETE_FAST:
            Py_CLEAR(f->locals[arg]);
            break;
        case LOAD_CONST:
            if (push(x, f, Py_NewRef(PyTuple_GET_ITEM(co->co_consts, arg))) < 0)
                goto error;
            break;
        case LOAD_GLOBAL: {
            PyObject *name = PyTuple_GET_ITEM(co->co_names, arg >> 1);
            PyObject *v = global_read(x, f, name);
            if (!v)
                goto error;
            if (arg & 1) {
                if (f->sp >= f->cap) {
                    Py_DECREF(v);
                    fail(x, true, "the value stack overflowed");
                    goto error;
                }
                f->stack[f->sp++] = NULL;
            }
            if (push(x, f, v) < 0)
                goto error;
            break;
        }
        case PUSH_NULL:
            if (f->sp >= f->cap) {
                fail(x, true, "the value stack overflowed");
                goto error;
            }
            f->stack[f->sp++] = NULL;
            break;
        case LOAD_ATTR: {
            PyObject *obj = POP();
            PyObject *v = load_attr(x, obj, PyTuple_GET_ITEM(co->co_names, arg));
            Py_DECREF(obj);
            if (push(x, f, v) < 0)
                goto error;
            break;
        }
        case LOAD_METHOD: {
            PyObject *obj = POP();
            PyObject *v = load_attr(x, obj, PyTuple_GET_ITEM(co->co_names, arg));
            Py_DECREF(obj);
            if (!v)
                goto error;
            if (PyMethod_Check(v)) {
                PyObject *fn = Py_NewRef(PyMethod_GET_FUNCTION(v));
                PyObject *self = Py_NewRef(PyMethod_GET_SELF(v));
                Py_DECREF(v);
                if (push(x, f, fn) < 0) {
                    Py_DECREF(self);
                    goto error;
                }
                if (push(x, f, self) < 0)
                    goto error;
            } else {
                f->stack[f->sp++] = NULL;
                if (push(x, f, v) < 0)
                    goto error;
            }
            break;
        }
        case KW_NAMES:
            kwnames = PyTuple_GET_ITEM(co->co_consts, arg);
            break;
        case CALL: {
            PyObject **base = &f->stack[f->sp - arg - 2];
            PyObject *callable;
            PyObject *const *args;
            Py_ssize_t nargs;
            if (base[0]) {
                callable = base[0];
                args = base + 1;
                nargs = arg + 1;
            } else {
                callable = base[1];
                args = base + 2;
                nargs = arg;
            }
            Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
            PyObject *r = call_value(x, callable, args, nargs - nkw, kwnames);
            kwnames = NULL;
            for (int i = 0; i < arg + 2; i++)
                Py_XDECREF(POP());
            if (push(x, f, r) < 0)
                goto error;
            break;
        }
        case CALL_FUNCTION_EX: {
            PyObject *kw = (arg & 1) ? POP() : NULL;
            PyObject *pos = POP();
            PyObject *callable = POP();
            PyObject *null = POP();
            Py_XDECREF(null);
            PyObject *r = NULL;
            PyObject *posargs = PyTuple_Check(pos) ? Py_NewRef(pos) : iterate(x, pos);
            if (posargs && kw && !PyDict_Check(kw)) {
                fail(x, true, "** of a %s", Py_TYPE(kw)->tp_name);
            } else if (posargs) {
                Py_ssize_t np = PyTuple_GET_SIZE(posargs), nk = kw ? PyDict_GET_SIZE(kw) : 0;
                PyObject **all = PyMem_Malloc((size_t)(np + nk + 1) * sizeof *all);
                PyObject *names = nk ? PyTuple_New(nk) : NULL;
                if (!all || (nk && !names)) {
                    PyErr_NoMemory();
                } else {
                    for (Py_ssize_t i = 0; i < np; i++)
                        all[i] = PyTuple_GET_ITEM(posargs, i);
                    Py_ssize_t pos_i = 0, k = 0;
                    PyObject *key, *value;
                    while (kw && PyDict_Next(kw, &pos_i, &key, &value)) {
                        PyTuple_SET_ITEM(names, k, Py_NewRef(key));
                        all[np + k++] = value;
                    }
                    r = call_value(x, callable, all, np, names);
                }
                PyMem_Free(all);
                Py_XDECREF(names);
            }
            Py_XDECREF(posargs);
            Py_XDECREF(kw);
            Py_DECREF(pos);
            Py_DECREF(callable);
            if (push(x, f, r) < 0)
                goto error;
            break;
        }
        case POP_TOP:
            Py_XDECREF(POP());
            break;
        case COPY:
            if (push(x, f, Py_XNewRef(PEEK(arg))) < 0)
                goto error;
            break;
        case SWAP: {
            PyObject *t = TOP();
            TOP() = PEEK(arg);
            PEEK(arg) = t;
            break;
        }
        case BUILD_TUPLE:
        case BUILD_LIST: {
            PyObject *t = op == BUILD_TUPLE ? PyTuple_New(arg) : PyList_New(arg);
            if (!t)
                goto error;
            for (int i = arg - 1; i >= 0; i--) {
                PyObject *v = POP();
                if (op == BUILD_TUPLE)
                    PyTuple_SET_ITEM(t, i, v);
                else
                    PyList_SET_ITEM(t, i, v);
            }
            if (push(x, f, make_fresh(x, t)) < 0)
                goto error;
            break;
        }
        case LIST_EXTEND: {
            PyObject *seq = POP();
            PyObject *items = iterate(x, seq);
            Py_DECREF(seq);
            if (!items)
                goto error;
            for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(items); i++)
                if (PyList_Append(PEEK(arg), PyTuple_GET_ITEM(items, i)) < 0) {
                    Py_DECREF(items);
                    goto error;
                }
            Py_DECREF(items);
            break;
        }
        case LIST_APPEND: {
            PyObject *v = POP();
            int rc = PyList_Append(PEEK(arg), v);
            Py_DECREF(v);
            if (rc < 0)
                goto error;
            break;
        }
        case LIST_TO_TUPLE: {
            PyObject *l = POP();
            PyObject *t = PyList_AsTuple(l);
            Py_DECREF(l);
            if (push(x, f, make_fresh(x, t)) < 0)
                goto error;
            break;
        }
        case BUILD_MAP: {
            PyObject *d = PyDict_New();
            if (!d)
                goto error;
            for (int i = arg; i > 0; i--) {
                if (!is_scalar(PEEK(2 * i))) {
                    Py_DECREF(d);
                    fail(x, true, "a dict key of type %s", Py_TYPE(PEEK(2 * i))->tp_name);
                    goto error;
                }
                if (PyDict_SetItem(d, PEEK(2 * i), PEEK(2 * i - 1)) < 0) {
                    Py_DECREF(d);
                    goto error;
                }
            }
            for (int i = 0; i < 2 * arg; i++)
                Py_DECREF(POP());
            if (push(x, f, make_fresh(x, d)) < 0)
                goto error;
            break;
        }
        case BUILD_CONST_KEY_MAP: {
            PyObject *keys = POP();
            PyObject *d = PyDict_New();
            for (int i = 0; d && i < arg; i++)
                if (PyDict_SetItem(d, PyTuple_GET_ITEM(keys, i), PEEK(arg - i)) < 0)
                    Py_CLEAR(d);
            Py_DECREF(keys);
            for (int i = 0; i < arg; i++)
                Py_DECREF(POP());
            if (push(x, f, make_fresh(x, d)) < 0)
                goto error;
            break;
        }
        case DICT_MERGE:
        case DICT_UPDATE: {
            PyObject *other = POP();
            int rc = -1;
            if (!PyDict_Check(other))
                fail(x, true, "** of a %s", Py_TYPE(other)->tp_name);
            else
                rc = PyDict_Update(PEEK(arg), other);
            Py_DECREF(other);
            if (rc < 0)
                goto error;
            break;
        }
        case STORE_SUBSCR: {
            /* container[key] = value, on the frame's own dict or list only */
            PyObject *key = POP(), *container = POP(), *value = POP();
            int rc = -1;
            if (!is_fresh(x, container) ||
                !(PyDict_CheckExact(container) || PyList_CheckExact(container)))
                fail(x, true, "an item assignment to a %s%s", Py_TYPE(container)->tp_name,
                     is_tensor(x, container) ? "" : " the frame did not build");
            else if (!is_plain(x, key, 0))
                fail(x, true, "an item assignment with a key of type %s", Py_TYPE(key)->tp_name);
            else if ((rc = PyObject_SetItem(container, key, value)) < 0)
                fail_exception(x, "an item assignment");
            Py_DECREF(key);
            Py_DECREF(container);
            Py_DECREF(value);
            if (rc < 0)
                goto error;
            break;
        }
        case BUILD_SLICE: {
            PyObject *step = arg == 3 ? POP() : NULL;
            PyObject *stop = POP(), *start = POP();
            PyObject *r = NULL;
            if (!is_scalar(start) || !is_scalar(stop) || (step && !is_scalar(step)))
                fail(x, true, "a slice of a %s", Py_TYPE(is_scalar(start) ? stop : start)->tp_name);
            else
                r = PySlice_New(start, stop, step);
            Py_DECREF(start);
            Py_DECREF(stop);
            Py_XDECREF(step);
            if (push(x, f, r) < 0)
                goto error;
            break;
        }
        case UNPACK_SEQUENCE: {
            PyObject *seq = POP();
            PyObject *items = iterate(x, seq);
            Py_DECREF(seq);
            if (!items)
                goto error;
            if (PyTuple_GET_SIZE(items) != arg) {
                Py_DECREF(items);
                fail(x, false, "unpacking %d values from a sequence of another length", arg);
                goto error;
            }
            for (int i = arg - 1; i >= 0; i--)
                if (push(x, f, Py_NewRef(PyTuple_GET_ITEM(items, i))) < 0) {
                    Py_DECREF(items);
                    goto error;
                }
            Py_DECREF(items);
            break;
        }
        case BINARY_OP:
        case BINARY_SUBSCR:
        case COMPARE_OP:
        case IS_OP: {
            PyObject *b = POP(), *a = POP();
            PyObject *r = op == BINARY_OP       ? binary_op(x, arg, a, b)
                          : op == BINARY_SUBSCR ? subscript(x, a, b)
                          : op == COMPARE_OP    ? compare_op(x, arg, a, b)
                                                : PyBool_FromLong((a == b) ^ arg);
            Py_DECREF(a);
            Py_DECREF(b);
            if (push(x, f, r) < 0)
                goto error;
            break;
        }
        case CONTAINS_OP: {
            PyObject *c = POP(), *v = POP();
            int rc = -1;
            if (!is_plain(x, v, 0))
                fail(x, true, "'in' with a %s", Py_TYPE(v)->tp_name);
            else if (PyDict_Check(c)) {
                PyObject *what = PyUnicode_FromString("a dict membership");
                int err;
                if (is_fresh(x, c))
                    rc = PyDict_Contains(c, v);
                else if (what) {
                    PyObject *item = dict_read(x, c, v, what, &err);
                    rc = err < 0 ? -1 : item != NULL;
                }
                Py_XDECREF(what);
            } else if (is_plain(x, c, 0))
                rc = PySequence_Contains(c, v);
            else
                fail(x, true, "'in' of a %s", Py_TYPE(c)->tp_name);
            Py_DECREF(c);
            Py_DECREF(v);
            if (rc < 0 || push(x, f, PyBool_FromLong(rc ^ arg)) < 0)
                goto error;
            break;
        }
        case UNARY_NEGATIVE:
        case UNARY_POSITIVE:
        case UNARY_INVERT: {
            PyObject *v = POP();
            PyObject *r = NULL;
            if (is_tensor(x, v)) {
                const char *name = op == UNARY_NEGATIVE ? "neg"
                                   : op == UNARY_INVERT ? "bitwise_not"
                                                        : "positive";
                PyObject *fn = pith_function(x, name);
                if (fn)
                    r = call_value(x, fn, &v, 1, NULL);
                Py_XDECREF(fn);
            } else if (is_scalar(v)) {
                r = op == UNARY_NEGATIVE ? PyNumber_Negative(v)
                    : op == UNARY_INVERT ? PyNumber_Invert(v)
                                         : PyNumber_Positive(v);
                if (!r)
                    fail_exception(x, "a unary operator");
            } else {
                fail(x, true, "a unary operator on a %s", Py_TYPE(v)->tp_name);
            }
            Py_DECREF(v);
            if (push(x, f, r) < 0)
                goto error;
            break;
        }
        case UNARY_NOT: {
            PyObject *v = POP();
            int t = truth(x, v);
            Py_DECREF(v);
            if (t < 0 || push(x, f, PyBool_FromLong(!t)) < 0)
                goto error;
            break;
        }
        case GET_ITER: {
            PyObject *v = POP();
            PyObject *items = iterate(x, v);
            Py_DECREF(v);
            PyObject *it = items ? PyObject_GetIter(items) : NULL;
            Py_XDECREF(items);
            if (push(x, f, it) < 0)
                goto error;
            break;
        }
        case FOR_ITER: {
            PyObject *v = PyIter_Next(TOP());
            if (v) {
                if (push(x, f, v) < 0)
                    goto error;
            } else {
                if (PyErr_Occurred())
                    goto error;
                Py_DECREF(POP());
                next = pc + 1 + arg;
            }
            break;
        }
        case JUMP_FORWARD:
            next = pc + 1 + arg;
            break;
        case JUMP_BACKWARD:
        case JUMP_BACKWARD_NO_INTERRUPT:
            next = pc + 1 - arg;
            break;
        case POP_JUMP_FORWARD_IF_FALSE:
        case POP_JUMP_FORWARD_IF_TRUE:
        case POP_JUMP_BACKWARD_IF_FALSE:
        case POP_JUMP_BACKWARD_IF_TRUE: {
            PyObject *v = POP();
            int t = truth(x, v);
            Py_DECREF(v);
            if (t < 0)
                goto error;
            bool want = op == POP_JUMP_FORWARD_IF_TRUE || op == POP_JUMP_BACKWARD_IF_TRUE;
            bool back = op == POP_JUMP_BACKWARD_IF_FALSE || op == POP_JUMP_BACKWARD_IF_TRUE;
            if ((t != 0) == want)
                next = back ? pc + 1 - arg : pc + 1 + arg;
            break;
        }
        case POP_JUMP_FORWARD_IF_NONE:
        case POP_JUMP_FORWARD_IF_NOT_NONE:
        case POP_JUMP_BACKWARD_IF_NONE:
        case POP_JUMP_BACKWARD_IF_NOT_NONE: {
            PyObject *v = POP();
            bool none = v == Py_None;
            Py_DECREF(v);
            bool want = op == POP_JUMP_FORWARD_IF_NONE || op == POP_JUMP_BACKWARD_IF_NONE;
            bool back = op == POP_JUMP_BACKWARD_IF_NONE || op == POP_JUMP_BACKWARD_IF_NOT_NONE;
            if (none == want)
                next = back ? pc + 1 - arg : pc + 1 + arg;
            break;
        }
        case JUMP_IF_FALSE_OR_POP:
        case JUMP_IF_TRUE_OR_POP: {
            int t = truth(x, TOP());
            if (t < 0)
                goto error;
            if ((t != 0) == (op == JUMP_IF_TRUE_OR_POP))
                next = pc + 1 + arg;
            else
                Py_DECREF(POP());
            break;
        }
        case RETURN_VALUE:
            result = POP();
            goto done;
        default:
            unsupported_opcode(x, op);
            goto error;
        }
        pc = next;
    }
    fail(x, true, "the bytecode ended without a return");
error:
    result = NULL;
done:
    Py_DECREF(bytes);
    return result;
}

/* ---- the result ---- */

static void tmpl_clear(tmpl *t)
{
    Py_CLEAR(t->value);
    Py_CLEAR(t->at.key);
    for (int i = 0; i < t->n; i++)
        tmpl_clear(&t->items[i]);
    PyMem_Free(t->items);
    t->items = NULL;
    t->n = 0;
}

static int tmpl_build(tx *x, PyObject *v, tmpl *t, int depth)
{
    memset(t, 0, sizeof *t);
    if (is_tensor(x, v)) {
        PyObject *id = PyLong_FromVoidPtr(v);
        if (!id)
            return -1;
        PyObject *which = PyDict_GetItemWithError(x->input_standins, id);
        Py_DECREF(id);
        if (which) {
            /* the frame returns an argument itself: eager returns the same object */
            t->kind = TMPL_LOCAL;
            t->at = x->inputs[PyLong_AsLong(which)];
            Py_XINCREF(t->at.key);
            return 0;
        }
        if (PyErr_Occurred())
            return -1;
        id = PyLong_FromVoidPtr(v);
        PyObject *param = id ? PyDict_GetItemWithError(x->standin_params, id) : NULL;
        PyObject *known = id && !param ? PyDict_GetItemWithError(x->output_ids, id) : NULL;
        if (PyErr_Occurred()) {
            Py_XDECREF(id);
            return -1;
        }
        if (param) {
            /* a parameter, buffer or outside tensor itself: eager returns that object,
             * which the guards fix */
            Py_DECREF(id);
            t->kind = TMPL_CONST;
            t->value = Py_NewRef(param);
            return 0;
        }
        if (known) {
            /* the same value again: the same object, as eager returns */
            Py_DECREF(id);
            t->kind = TMPL_OUTPUT;
            t->index = (int)PyLong_AsLong(known);
            return 0;
        }
        if (pith_graph_output(x->g, tensor_of(v)) != PITH_OK) {
            Py_DECREF(id);
            return fail(x, false, "the result is a tensor the graph cannot return: %s",
                        pith_last_error());
        }
        t->kind = TMPL_OUTPUT;
        t->index = x->noutputs++;
        PyObject *index = PyLong_FromLong(t->index);
        int rc = index ? PyDict_SetItem(x->output_ids, id, index) : -1;
        Py_XDECREF(index);
        Py_DECREF(id);
        return rc;
    }
    if ((PyTuple_CheckExact(v) || PyList_CheckExact(v)) && depth < 8) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(v);
        t->kind = PyTuple_CheckExact(v) ? TMPL_TUPLE : TMPL_LIST;
        t->items = PyMem_Calloc((size_t)n + 1, sizeof *t->items);
        if (!t->items) {
            PyErr_NoMemory();
            return -1;
        }
        for (Py_ssize_t i = 0; i < n; i++) {
            t->n = (int)i + 1;
            if (tmpl_build(x, PySequence_Fast_GET_ITEM(v, i), &t->items[i], depth + 1) < 0)
                return -1;
        }
        return 0;
    }
    if (is_scalar(v) || Py_IS_TYPE(v, x->st->dtype_type) ||
        (PyTuple_CheckExact(v) && is_plain(x, v, 0))) {
        t->kind = TMPL_CONST;
        t->value = Py_NewRef(v);
        return 0;
    }
    if (is_fresh(x, v) && !PyTuple_CheckExact(v) && !PyList_CheckExact(v))
        return fail(x, true, "the frame returns a %s it made", Py_TYPE(v)->tp_name);
    int slot = argument_slot(x, v);
    if (slot >= 0) {
        t->kind = TMPL_LOCAL;
        t->at.local = slot;
        t->at.index = -1;
        return 0;
    }
    if (is_module(x, v) || PyModule_Check(v) || PyFunction_Check(v) || PyType_Check(v)) {
        /* an object the guards fix (an argument, a global, an attribute): returned as is */
        t->kind = TMPL_CONST;
        t->value = Py_NewRef(v);
        return 0;
    }
    return fail(x, true, "the frame returns a %s", Py_TYPE(v)->tp_name);
}


void compile_entry_free(compile_entry *e)
{
    if (!e)
        return;
    for (int i = 0; i < e->nguards; i++)
        guard_clear(&e->guards[i]);
    PyMem_Free(e->guards);
    for (int i = 0; i < e->ninputs; i++)
        Py_XDECREF(e->inputs[i].key);
    PyMem_Free(e->inputs);
    pith_compiled_free(e->compiled);
    tmpl_clear(&e->result);
    Py_XDECREF(e->func);
    PyMem_Free(e);
}

compile_entry *translate_frame(const translate_request *req, translate_failure *why)
{
    pith_module_state *st = req->st;
    tx x = {0};
    x.req = req;
    x.st = st;
    x.why = why;
    x.code = req->code;
    compile_entry *e = NULL;
    x.g = pith_graph_new();
    x.param_standins = PyDict_New();
    x.input_standins = PyDict_New();
    x.standin_types = PyDict_New();
    x.standin_params = PyDict_New();
    x.output_ids = PyDict_New();
    x.fresh = PySet_New(NULL);
    x.shadow_cells = PySet_New(NULL);
    x.keep = PyList_New(0);
    PyCodeObject *co = req->code;
    int n = co->co_nlocalsplus;
    sframe f = {0};
    f.nlocals = n;
    f.cap = co->co_stacksize + 4;
    f.locals = PyMem_Calloc((size_t)n + (size_t)f.cap + 1, sizeof(PyObject *));
    if (!x.g || !x.param_standins || !x.input_standins || !x.standin_types || !x.standin_params || !x.output_ids || !x.shadow_cells || !x.fresh || !x.keep || !f.locals) {
        if (!PyErr_Occurred())
            PyErr_NoMemory();
        goto done;
    }
    f.stack = f.locals + n;
    f.globals = req->func->func_globals;
    f.builtins = req->func->func_builtins;
    f.func = req->func;
    f.code = co;
    {
        guard *gd = guard_add(&x, GUARD_GRAD_MODE);
        if (!gd)
            goto done;
        gd->flag = pith_grad_enabled();
        gd = guard_add(&x, GUARD_DEFAULT_DTYPE);
        if (!gd)
            goto done;
        gd->dtype = pith_get_default_dtype();
    }
    /* The arguments: every slot the call filled (the rest are NULL, or cells not yet made,
     * which hold the argument itself before MAKE_CELL runs: Note [The frame hook]). */
    int nargs = co->co_argcount + co->co_kwonlyargcount + !!(co->co_flags & CO_VARARGS) +
                !!(co->co_flags & CO_VARKEYWORDS);
    for (int i = 0; i < nargs; i++) {
        PyObject *v = req->localsplus[i];
        if (!v)
            continue;
        arg_path at = {i, -1, NULL};
        f.locals[i] = argument_value(&x, at, v, PyTuple_GET_ITEM(co->co_localsplusnames, i), 0);
        if (!f.locals[i])
            goto done;
    }
    PyObject *r = eval_frame(&x, &f);
    x.code = co;
    if (!r)
        goto done;
    e = PyMem_Calloc(1, sizeof *e);
    if (!e) {
        Py_DECREF(r);
        PyErr_NoMemory();
        goto done;
    }
    int rc = tmpl_build(&x, r, &e->result, 0);
    Py_DECREF(r);
    if (rc < 0)
        goto fail_entry;
    e->noutputs = x.noutputs;
    e->compiled = pith_graph_compile(x.g, NULL);
    if (!e->compiled) {
        fail(&x, false, "pith_graph_compile: %s", pith_last_error());
        goto fail_entry;
    }
    if (x.mutates && x.ninputs >= 2) {
        /* Note [Guard soundness]: the graph writes in place, so inputs must not share
         * memory, which the graph assumes; checked now and at every call */
        for (int i = 0; i < x.ninputs; i++)
            for (int j = 0; j < i; j++)
                if (pith_shares_storage(tensor_of(access_get(req->localsplus, &x.inputs[i])),
                                        tensor_of(access_get(req->localsplus, &x.inputs[j])))) {
                    fail(&x, false, "tensor arguments share memory and the frame writes in "
                         "place");
                    goto fail_entry;
                }
        if (!guard_add(&x, GUARD_NO_ALIAS))
            goto fail_entry;
    }
    e->guards = x.guards;
    e->nguards = x.nguards;
    x.guards = NULL;
    x.nguards = 0;
    e->inputs = x.inputs;
    e->ninputs = x.ninputs;
    x.inputs = NULL;
    x.ninputs = 0;
    e->work = x.work;
    e->func = PyWeakref_NewRef((PyObject *)req->func, NULL);
    if (!e->func)
        goto fail_entry;
    goto done;
fail_entry:
    compile_entry_free(e);
    e = NULL;
done:
    if (!e && !PyErr_Occurred() && !why->reason[0])
        fail(&x, true, "the translation failed");
    if (!e && PyErr_Occurred() && !PyErr_ExceptionMatches(PyExc_MemoryError))
        fail_exception(&x, "the translation");
    for (int i = 0; f.locals && i < n + f.sp; i++)
        Py_XDECREF(f.locals[i]);
    PyMem_Free(f.locals);
    for (int i = 0; i < x.nguards; i++)
        guard_clear(&x.guards[i]);
    PyMem_Free(x.guards);
    PyMem_Free(x.guard_index);
    for (int i = 0; i < x.nnames; i++)
        Py_DECREF(x.names[i].name);
    for (int i = 0; i < x.ninputs; i++)
        Py_XDECREF(x.inputs[i].key);
    PyMem_Free(x.inputs);
    Py_XDECREF(x.param_standins);
    Py_XDECREF(x.input_standins);
    Py_XDECREF(x.standin_types);
    Py_XDECREF(x.standin_params);
    Py_XDECREF(x.output_ids);
    Py_XDECREF(x.fresh);
    Py_XDECREF(x.shadow_cells);
    Py_XDECREF(x.keep);
    pith_graph_free(x.g);
    return e;
}
