/* python_subclass.c — subclasses that define __pith_dispatch__: Tensor._make_subclass and
 * Tensor._make_wrapper_subclass, and the interpreter table's entries that ask such a
 * tensor's handlers: detach, is_contiguous, device, sizes and strides. The dispatch entry
 * and the handler machinery are in python_dispatch.c. */
#include <string.h>

#include "pydispatch.h"

/* Note [Wrapper subclasses]
 * Tensor._make_wrapper_subclass(cls, size, ...) makes an instance of `cls` whose pith_tensor
 * has the requested sizes, strides and dtype and no data: a Meta tensor (pith_empty_strided
 * on PITH_META allocates nothing, so an 8 TB wrapper costs a tensor header), carrying the
 * Python key, so every op on it reaches cls.__pith_dispatch__, whose job is to compute with
 * the real tensors the instance holds (its `elem`). A wrapper asked for on the CPU (the
 * default) must still report device 'cpu', so it gets the device policy and the WRAPPER_CPU
 * bit in its pith_tensor_object, and pydispatch_device answers 'cpu' without asking Python
 * (unless dispatch_device asked for that, WRAPPER_DISPATCH_DEVICE). Below the Python key
 * (pith.utils.no_dispatch()) a wrapper reaches the Meta kernels, which compute metadata and
 * never touch data: the C-side view of a wrapper is honestly data-less, unlike PyTorch's
 * storage-less CPU tensor, which errors there. Both constructors refuse the metadata
 * policies for a class without __pith_dispatch__, since only its handlers could answer. */
enum { WRAPPER_CPU = 1u, WRAPPER_DISPATCH_DEVICE = 2u };

/* ---- argument binding for METH_FASTCALL | METH_KEYWORDS ---- */

/* Whether the str `key` is `name` (keyword names are compact ASCII: compared in place). */
static bool key_is(PyObject *key, const char *name)
{
    if (!PyUnicode_IS_COMPACT_ASCII(key))
        return PyUnicode_CompareWithASCIIString(key, name) == 0;
    size_t n = (size_t)PyUnicode_GET_LENGTH(key);
    return strlen(name) == n && memcmp(PyUnicode_DATA(key), name, n) == 0;
}

/* Binds `args` to `names` (positional in order, then by keyword); absent ones stay NULL.
 * The first `required` must be given. Returns 0, or -1 with a TypeError. */
static int bind_args(const char *fn, const char *const *names, int count, int required,
                     PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames, PyObject **out)
{
    if (nargs > count) {
        PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional arguments (%zd given)",
                     fn, count, nargs);
        return -1;
    }
    for (int i = 0; i < count; i++)
        out[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int i = 0;
        while (i < count && !key_is(key, names[i]))
            i++;
        if (i == count) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fn,
                         key);
            return -1;
        }
        if (out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%s'", fn,
                         names[i]);
            return -1;
        }
        out[i] = args[nargs + k];
    }
    for (int i = 0; i < required; i++)
        if (!out[i]) {
            PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s'", fn, names[i]);
            return -1;
        }
    return 0;
}

/* `cls` as a subclass of pith.Tensor, with its module state; NULL with a TypeError. */
static pith_module_state *subclass_state(PyObject *cls, const char *fn)
{
    pith_module_state *st = PyType_Check(cls) ? state_of_type((PyTypeObject *)cls) : NULL;
    if (!st || !PyType_IsSubtype((PyTypeObject *)cls, st->tensor_type)) {
        PyErr_Clear();
        PyErr_Format(PyExc_TypeError, "%s(): cls must be a subclass of pith.Tensor, not %.200s",
                     fn, PyType_Check(cls) ? ((PyTypeObject *)cls)->tp_name
                                           : Py_TYPE(cls)->tp_name);
        return NULL;
    }
    return st;
}

static bool defines_dispatch(pith_module_state *st, PyObject *cls)
{
    return st->dispatch.name && _PyType_Lookup((PyTypeObject *)cls, st->dispatch.name);
}

/* dispatch_sizes_strides_policy=None | "strides" | "sizes" and dispatch_device=bool as
 * PITH_POLICY_* bits; -1 with an exception. */
static int policy_parse(const char *fn, PyObject *sizes_strides, PyObject *device)
{
    unsigned policy = 0;
    if (sizes_strides && sizes_strides != Py_None) {
        const char *text = PyUnicode_Check(sizes_strides) ? PyUnicode_AsUTF8(sizes_strides)
                                                          : NULL;
        if (text && strcmp(text, "strides") == 0)
            policy |= PITH_POLICY_STRIDES;
        else if (text && strcmp(text, "sizes") == 0)
            policy |= PITH_POLICY_SIZES;
        else {
            PyErr_Format(PyExc_ValueError, "%s(): dispatch_sizes_strides_policy must be None, "
                         "'strides' or 'sizes', not %R", fn, sizes_strides);
            return -1;
        }
    }
    int on = device ? PyObject_IsTrue(device) : 0;
    if (on < 0)
        return -1;
    return (int)(policy | (on ? PITH_POLICY_DEVICE : 0u));
}

static int policy_check(pith_module_state *st, PyObject *cls, int policy, const char *fn)
{
    if (policy && !defines_dispatch(st, cls)) {
        PyErr_Format(PyExc_TypeError, "%s(): %.200s must define __pith_dispatch__ to use "
                     "dispatch_sizes_strides_policy or dispatch_device", fn,
                     ((PyTypeObject *)cls)->tp_name);
        return -1;
    }
    return 0;
}

/* Sets the Python key (when cls defines __pith_dispatch__) and the policy on a fresh
 * tensor, then wraps it (stealing `t`). */
static PyObject *subclass_wrap(pith_module_state *st, PyObject *cls, pith_tensor *t,
                               unsigned policy, unsigned wrapper)
{
    if (!t)
        return error_raise(st);
    if (defines_dispatch(st, cls))
        pith_tensor_set_python_key(t, true);
    pith_tensor_set_policy(t, policy);
    PyObject *obj = tensor_wrap_as(st, t, (PyTypeObject *)cls);
    if (obj)
        ((pith_tensor_object *)obj)->wrapper = wrapper;
    return obj;
}

/* Tensor._make_subclass(cls, data, require_grad=False, dispatch_sizes_strides_policy=None,
 * dispatch_device=False): an instance of `cls` over data's storage, as PyTorch's;
 * nn.Parameter is built with it. A new pith_tensor (pith_alias) is needed because a tensor
 * has one wrapper per interpreter (See Note [Tensor wrapper]); like PyTorch's, it is a
 * leaf without data's history, which requires grad when require_grad is true. */
static PyObject *make_subclass(PyObject *unused, PyObject *const *args, Py_ssize_t nargs,
                               PyObject *kwnames)
{
    static const char *const names[] = {"cls", "data", "require_grad",
                                        "dispatch_sizes_strides_policy", "dispatch_device"};
    PyObject *a[5];
    if (bind_args("_make_subclass", names, 5, 2, args, nargs, kwnames, a) < 0)
        return NULL;
    pith_module_state *st = subclass_state(a[0], "_make_subclass");
    if (!st)
        return NULL;
    if (!tensor_check(st, a[1])) {
        PyErr_Format(PyExc_TypeError, "_make_subclass(): data must be a pith.Tensor, not %.200s",
                     Py_TYPE(a[1])->tp_name);
        return NULL;
    }
    int requires_grad = a[2] ? PyObject_IsTrue(a[2]) : 0;
    if (requires_grad < 0)
        return NULL;
    int policy = policy_parse("_make_subclass", a[3], a[4]);
    if (policy < 0 || policy_check(st, a[0], policy, "_make_subclass") < 0)
        return NULL;
    unsigned wrapper = policy & PITH_POLICY_DEVICE ? WRAPPER_DISPATCH_DEVICE : 0u;
    pith_tensor *t = pith_alias(tensor_of(a[1]));
    if (t && requires_grad && pith_set_requires_grad(t, true) != PITH_OK) {
        pith_release(t);
        return error_raise(st);
    }
    return subclass_wrap(st, a[0], t, (unsigned)policy, wrapper);
}

/* A sequence of ints into v[PITH_MAX_DIMS]; returns its length or -1 with an exception. */
static int int_sequence(PyObject *obj, int64_t *v, const char *what)
{
    /* A tuple (pith.Size is one) or a list is read in place; PySequence_Fast would copy a
     * tuple subclass into a list. */
    PyObject *fast = PyTuple_Check(obj) || PyList_Check(obj) ? Py_NewRef(obj)
                                                             : PySequence_Fast(obj, "");
    if (!fast) {
        PyErr_Format(PyExc_TypeError, "_make_wrapper_subclass(): %s must be a sequence of "
                     "ints, not %.200s", what, Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t n = PyTuple_Check(fast) ? PyTuple_GET_SIZE(fast) : PyList_GET_SIZE(fast);
    PyObject **items = PyTuple_Check(fast) ? &PyTuple_GET_ITEM(fast, 0)
                                           : &PyList_GET_ITEM(fast, 0);
    if (n > PITH_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "_make_wrapper_subclass(): %s has %zd dims, more than "
                     "%d", what, n, PITH_MAX_DIMS);
        n = -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = items[i];
        v[i] = PyLong_Check(item) && !PyBool_Check(item) ? PyLong_AsLongLong(item) : -1;
        if (!PyLong_Check(item) || PyBool_Check(item)) {
            PyErr_Format(PyExc_TypeError, "_make_wrapper_subclass(): %s must be a sequence of "
                         "ints, found %.200s", what, Py_TYPE(item)->tp_name);
            n = -1;
        } else if (v[i] == -1 && PyErr_Occurred()) {
            n = -1;
        }
    }
    Py_DECREF(fast);
    return (int)n;
}

/* device=None, a CPU or a Meta device into *meta; -1 with an exception. */
static int device_parse(pith_module_state *st, PyObject *device, bool *meta)
{
    pith_device named;
    if (device_argument(st, device, true, "_make_wrapper_subclass", &named) < 0)
        return -1;
    *meta = named == PITH_META;
    return 0;
}

/* Tensor._make_wrapper_subclass(cls, size, strides=None, storage_offset=None, dtype=None,
 * device=None, layout=None, requires_grad=False, dispatch_sizes_strides_policy=None,
 * dispatch_device=False). See Note [Wrapper subclasses]. */
static PyObject *make_wrapper_subclass(PyObject *unused, PyObject *const *args,
                                       Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {
        "cls",    "size",          "strides",
        "storage_offset", "dtype", "device",
        "layout", "requires_grad", "dispatch_sizes_strides_policy",
        "dispatch_device"};
    const char *fn = "_make_wrapper_subclass";
    PyObject *a[10];
    if (bind_args(fn, names, 10, 2, args, nargs, kwnames, a) < 0)
        return NULL;
    pith_module_state *st = subclass_state(a[0], fn);
    if (!st)
        return NULL;
    if (!defines_dispatch(st, a[0])) {
        PyErr_Format(PyExc_TypeError, "%s(): %.200s must define __pith_dispatch__", fn,
                     ((PyTypeObject *)a[0])->tp_name);
        return NULL;
    }
    int64_t sizes[PITH_MAX_DIMS], strides[PITH_MAX_DIMS];
    int ndim = int_sequence(a[1], sizes, "size");
    if (ndim < 0)
        return NULL;
    bool has_strides = a[2] && a[2] != Py_None;
    if (has_strides) {
        int n = int_sequence(a[2], strides, "strides");
        if (n < 0)
            return NULL;
        if (n != ndim) {
            PyErr_Format(PyExc_ValueError, "%s(): %d strides for %d sizes", fn, n, ndim);
            return NULL;
        }
    }
    if (a[3] && a[3] != Py_None) {
        long long offset = PyLong_AsLongLong(a[3]);
        if (offset == -1 && PyErr_Occurred())
            return NULL;
        if (offset != 0) {
            PyErr_Format(PyExc_NotImplementedError, "%s(): storage_offset=%lld: a wrapper has "
                         "no storage, so only 0 is supported", fn, offset);
            return NULL;
        }
    }
    pith_dtype dtype = pith_get_default_dtype();
    if (a[4] && a[4] != Py_None && dtype_from_object(st, a[4], &dtype) < 0)
        return NULL;
    bool meta;
    if (device_parse(st, a[5], &meta) < 0)
        return NULL;
    int requires_grad = a[7] ? PyObject_IsTrue(a[7]) : 0;
    if (requires_grad < 0)
        return NULL;
    int policy = policy_parse(fn, a[8], a[9]);
    if (policy < 0)
        return NULL;
    unsigned wrapper = (meta ? 0u : WRAPPER_CPU) |
                       (policy & PITH_POLICY_DEVICE ? WRAPPER_DISPATCH_DEVICE : 0u);
    if (wrapper)
        policy |= PITH_POLICY_DEVICE;
    pith_tensor *t =
        pith_empty_strided(ndim, sizes, has_strides ? strides : NULL, dtype, PITH_META);
    if (t && requires_grad && pith_set_requires_grad(t, true) != PITH_OK) {
        pith_release(t);
        return error_raise(st);
    }
    return subclass_wrap(st, a[0], t, (unsigned)policy, wrapper);
}

/* Tensor.as_subclass(cls): a `cls` instance that is a view of self, as PyTorch's: unlike
 * _make_subclass's leaf it keeps self's history (an alias that records, for a tensor with
 * autograd state), so the default __pith_function__, which converts every result with it,
 * leaves the graph whole. Like PyTorch's, it does not ask the function layer. */
static PyObject *tensor_as_subclass(PyObject *self, PyObject *cls)
{
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    if (!PyType_Check(cls) || !PyType_IsSubtype((PyTypeObject *)cls, st->tensor_type)) {
        PyErr_SetString(PyExc_TypeError, "Creating a Tensor subclass from a class that does "
                        "not inherit from Tensor is not possible. Make sure your class "
                        "inherits from Tensor.");
        return NULL;
    }
    pith_tensor *x = tensor_of(self);
    return subclass_wrap(st, cls, pith_autograd_tracked(x) ? alias_recorded(x) : pith_alias(x),
                         0u, 0u);
}

PyMethodDef pydispatch_tensor_methods[] = {
    {"as_subclass", tensor_as_subclass, METH_O,
     "as_subclass(cls): a cls instance that is a view of this tensor, with its history."},
    {"_make_subclass", (PyCFunction)(void (*)(void))make_subclass,
     METH_STATIC | METH_FASTCALL | METH_KEYWORDS,
     "_make_subclass(cls, data, require_grad=False, dispatch_sizes_strides_policy=None, "
     "dispatch_device=False): an instance of cls over data's storage."},
    {"_make_wrapper_subclass", (PyCFunction)(void (*)(void))make_wrapper_subclass,
     METH_STATIC | METH_FASTCALL | METH_KEYWORDS,
     "_make_wrapper_subclass(cls, size, strides=None, storage_offset=None, dtype=None, "
     "device=None, layout=None, requires_grad=False, dispatch_sizes_strides_policy=None, "
     "dispatch_device=False): a data-less instance of cls, a subclass that defines "
     "__pith_dispatch__."},
    {NULL},
};

/* ---- the entries that ask a subclass's handlers ---- */

/* Calls the handlers of `self` (its type's, after the modes in effect) for the operator
 * `op_name` with args (self,). Returns a new reference; *obj_out is self's wrapper (a new
 * reference). NULL with an exception. */
static PyObject *query_call(const pith_tensor *self, const char *op_name,
                            pith_module_state **st_out, PyObject **obj_out)
{
    *obj_out = NULL;
    pith_module_state *st = pydispatch_state_of(self);
    if (!(*st_out = st))
        return NULL;
    const pith_op *op = pith_op_find(op_name);
    PyObject *spec = op ? spec_of(st, op) : error_raise(st);
    if (!spec)
        return NULL;
    PyObject *func = Py_NewRef(PyTuple_GET_ITEM(spec, SPEC_FUNC)); /* as in pydispatch_dispatch */
    pith_retain((pith_tensor *)self);
    PyObject *obj = tensor_wrap(st, (pith_tensor *)self);
    if (!obj) {
        Py_DECREF(func);
        return NULL;
    }
    *obj_out = obj;
    overloaded_args ov;
    overloaded_init(&ov);
    PyObject *ret = NULL, *args = NULL, *kwargs = NULL;
    if (overloaded_add(st, &ov, obj) == 0 && (args = PyTuple_Pack(1, obj)) &&
        (kwargs = PyDict_New())) {
        PyObject *modes = modes_in_effect(st);
        Py_XINCREF(modes);
        ret = handlers_call(st, func, &ov, args, kwargs, modes, 0);
        Py_XDECREF(modes);
    }
    Py_DECREF(func);
    Py_XDECREF(args);
    Py_XDECREF(kwargs);
    overloaded_free(&ov);
    return ret;
}

static pith_status invalid_answer(pith_module_state *st, const char *what, PyObject *ret,
                                  const char *expected)
{
    PyErr_Format(st->type_error, "%s returned invalid type %.200s, expected %s", what,
                 Py_TYPE(ret)->tp_name, expected);
    return error_keep();
}

/* Inside a handler running under pith.utils.no_dispatch(): detach below the Python key. */
static pith_status detach_below(const pith_tensor *self, pith_tensor **out)
{
    const pith_op *op = pith_op_find("pith::detach");
    pith_stack *stack = op ? pith_stack_new() : NULL;
    if (!stack)
        return pith_last_status();
    pith_status s = pith_stack_push_tensor(stack, self);
    if (s == PITH_OK)
        s = pith_call_boxed_below(op, stack, "Python");
    if (s == PITH_OK)
        *out = pith_stack_get_tensor(stack, 0);
    pith_stack_free(stack);
    return s;
}

pith_status pydispatch_detach(const pith_tensor *self, pith_tensor **out)
{
    *out = NULL;
    if (pith_keys_current().excluded & pydispatch_bit_python())
        return detach_below(self, out);
    pith_module_state *st;
    PyObject *obj, *ret = query_call(self, "pith::detach", &st, &obj);
    Py_XDECREF(obj);
    if (!ret)
        return error_keep();
    if (!tensor_check(st, ret)) {
        pith_status s = invalid_answer(st, "detach", ret, "Tensor");
        Py_DECREF(ret);
        return s;
    }
    *out = tensor_of(ret);
    pith_retain(*out);
    Py_DECREF(ret);
    return PITH_OK;
}

/* The metadata a tensor has when nobody overrides it: that of an alias, which carries no
 * policy (See Note [Wrapper subclasses]). */
static pith_tensor *plain_alias(const pith_tensor *self)
{
    return pith_alias(self);
}

pith_status pydispatch_is_contiguous(const pith_tensor *self, bool *out)
{
    pith_module_state *st;
    PyObject *obj, *ret = query_call(self, "pith::is_contiguous", &st, &obj);
    Py_XDECREF(obj);
    if (!ret)
        return error_keep();
    pith_status s = PITH_OK;
    if (ret == Py_None) {
        pith_tensor *alias = plain_alias(self);
        if (alias)
            *out = pith_is_contiguous(alias);
        else
            s = pith_last_status();
        pith_release(alias);
    } else if (PyBool_Check(ret)) {
        *out = ret == Py_True;
    } else {
        s = invalid_answer(st, "is_contiguous", ret, "bool");
    }
    Py_DECREF(ret);
    return s;
}

pith_status pydispatch_device(const pith_tensor *self, pith_device *out)
{
    PyObject *obj = NULL, *ret = NULL;
    pith_module_state *st = pydispatch_state_of(self);
    if (!st)
        return error_keep();
    pith_retain((pith_tensor *)self); /* for tensor_wrap to steal, even when it fails */
    if (!(obj = tensor_wrap(st, (pith_tensor *)self)))
        return error_keep();
    unsigned wrapper = ((pith_tensor_object *)obj)->wrapper;
    Py_DECREF(obj);
    if (wrapper & WRAPPER_DISPATCH_DEVICE) {
        ret = query_call(self, "pith::device", &st, &obj);
        Py_XDECREF(obj);
        if (!ret)
            return error_keep();
    }
    pith_status s = PITH_OK;
    int named = ret && ret != Py_None ? device_of_answer(st, ret, out) : 0;
    if (!ret || ret == Py_None) {
        pith_tensor *alias = wrapper & WRAPPER_CPU ? NULL : plain_alias(self);
        *out = wrapper & WRAPPER_CPU ? PITH_CPU : alias ? pith_tensor_device(alias) : PITH_CPU;
        if (!(wrapper & WRAPPER_CPU) && !alias)
            s = pith_last_status();
        pith_release(alias);
    } else if (named > 0) {
        /* *out is set */
    } else if (PyUnicode_Check(ret) || PyObject_TypeCheck(ret, st->device_type)) {
        PyErr_Format(PyExc_ValueError, "device returned %R; pith has the 'cpu' and 'meta' "
                     "devices", ret);
        s = error_keep();
    } else {
        s = PyErr_Occurred() ? error_keep() : invalid_answer(st, "device", ret,
                                                                 "pith.device or str");
    }
    Py_XDECREF(ret);
    return s;
}

/* sizes or strides: a handler's list or tuple of ints, or None for the default. */
static pith_status geometry(const pith_tensor *self, bool want_sizes, int *ndim, int64_t *v)
{
    const char *what = want_sizes ? "size" : "stride";
    pith_module_state *st;
    PyObject *obj, *ret = query_call(self, want_sizes ? "pith::size" : "pith::stride", &st, &obj);
    Py_XDECREF(obj);
    if (!ret)
        return error_keep();
    pith_status s = PITH_OK;
    if (ret == Py_None) {
        pith_tensor *alias = plain_alias(self);
        int n = !alias ? -1 : want_sizes ? pith_sizes(alias, v) : pith_strides(alias, v);
        pith_release(alias);
        if (n < 0)
            s = pith_last_status();
        else
            *ndim = n;
    } else if (PyList_Check(ret) || PyTuple_Check(ret)) {
        Py_ssize_t n = PySequence_Fast_GET_SIZE(ret);
        if (n > PITH_MAX_DIMS) {
            PyErr_Format(PyExc_ValueError, "%s returned %zd dims, more than %d", what, n,
                         PITH_MAX_DIMS);
            s = error_keep();
        }
        for (Py_ssize_t i = 0; s == PITH_OK && i < n; i++) {
            PyObject *item = PySequence_Fast_GET_ITEM(ret, i);
            v[i] = PyLong_Check(item) ? PyLong_AsLongLong(item) : -1;
            if (!PyLong_Check(item) && !PyErr_Occurred())
                PyErr_Format(st->type_error, "%s returned a sequence holding %.200s, "
                             "expected ints", what, Py_TYPE(item)->tp_name);
            if (PyErr_Occurred())
                s = error_keep();
        }
        if (s == PITH_OK)
            *ndim = (int)n;
    } else {
        PyErr_Format(st->type_error, "%s must be a list or a tuple, not %.200s",
                     want_sizes ? "sizes" : "strides", Py_TYPE(ret)->tp_name);
        s = error_keep();
    }
    Py_DECREF(ret);
    return s;
}

pith_status pydispatch_sizes(const pith_tensor *self, int *ndim, int64_t *sizes)
{
    return geometry(self, true, ndim, sizes);
}

pith_status pydispatch_strides(const pith_tensor *self, int *ndim, int64_t *strides)
{
    return geometry(self, false, ndim, strides);
}
