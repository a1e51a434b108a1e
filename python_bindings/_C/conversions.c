/* conversions.c — Tensor.to and the dtype conversion methods (x.float(), x.long() ...).
 *
 * They are no operators (to.dtype is; these are PyTorch's Python conveniences around it),
 * so they are not made by the binder (See Note [One binder]): x.float() and x.to(dtype) take
 * this short path to pith_to_dtype, and every other form of to() (a device, another
 * tensor, copy=, non_blocking=) goes to pith/_api.py's to, registered with _set_generic.
 * A conversion to the tensor's own dtype returns the tensor itself, as in PyTorch. */
#include <string.h>

#include "function_layer.h"

static char fallback_marker;
/* Never dereferenced: the "take the generic path" answer of an impl. */
#define FALLBACK ((PyObject *)&fallback_marker)

typedef PyObject *(*impl_fn)(pith_module_state *st, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames);

/* Puts the positional arguments and the keywords named in `names` into slot[0..n), NULL
 * for absent ones. Returns 0, or 1 (FALLBACK) for too many positionals, an unknown or a
 * repeated keyword: the generic path reports those. */
static int args_bind(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                     const char *const *names, int n, PyObject **slot)
{
    if (nargs > n)
        return 1;
    for (int i = 0; i < n; i++)
        slot[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int j = 0;
        while (j < n && PyUnicode_CompareWithASCIIString(key, names[j]) != 0)
            j++;
        if (j == n || slot[j])
            return 1;
        slot[j] = args[nargs + k];
    }
    return 0;
}

static bool is_large(const pith_tensor *t)
{
    return pith_numel(t) >= PITH_GIL_RELEASE_NUMEL && !pydispatch_python_reachable(t);
}

/* Runs `stmt` without the GIL when `large`. See Note [GIL release] (state.h). */
#define RUN_KERNEL(large, stmt)                                                             \
    do {                                                                                    \
        if (large) {                                                                        \
            Py_BEGIN_ALLOW_THREADS stmt;                                                    \
            Py_END_ALLOW_THREADS                                                            \
        } else {                                                                            \
            stmt;                                                                           \
        }                                                                                   \
    } while (0)

/* ---- dtype conversions ---- */

/* x.to(dtype) and x.float() & co.: the tensor itself when the dtype already matches, as in
 * PyTorch. */
static PyObject *convert_to(pith_module_state *st, PyObject *self, pith_dtype dtype)
{
    pith_tensor *a = tensor_of(self), *out;
    if (pith_tensor_dtype(a) == dtype)
        return Py_NewRef(self);
    RUN_KERNEL(is_large(a), out = pith_to_dtype(a, dtype));
    return tensor_wrap(st, out);
}

static PyObject *impl_to(pith_module_state *st, PyObject *self, PyObject *const *args,
                         Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dtype"};
    PyObject *slot[1];
    if (args_bind(args, nargs, kwnames, names, 1, slot) || !slot[0] ||
        !PyObject_TypeCheck(slot[0], st->dtype_type))
        return FALLBACK;
    return convert_to(st, self, ((pith_dtype_object *)slot[0])->dtype);
}

#define IMPL_CONVERSION_(name, dtype)                                                       \
    static PyObject *impl_##name(pith_module_state *st, PyObject *self,                     \
                                 PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                       \
        if (nargs || kwnames)                                                               \
            return FALLBACK;                                                                \
        return convert_to(st, self, dtype);                                                 \
    }
PITH_FORALL_DTYPE_CONVERSIONS(IMPL_CONVERSION_)
#undef IMPL_CONVERSION_

/* Calls the generic implementation registered for `name`: fn(self, *args, **kwargs). */
static PyObject *call_generic(pith_module_state *st, const char *name, PyObject *self,
                              PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *fn = st->generic ? PyDict_GetItemString(st->generic, name) : NULL; /* borrowed */
    if (!fn) {
        PyErr_Format(PyExc_RuntimeError,
                     "pith: no generic implementation of %s was registered (is the pith "
                     "package imported?)", name);
        return NULL;
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (!self)
        return PyObject_Vectorcall(fn, args, (size_t)nargs, kwnames);
    PyObject *small[8], **all = small;
    if (1 + nargs + nkw > 8) {
        all = PyMem_Malloc((size_t)(1 + nargs + nkw) * sizeof(PyObject *));
        if (!all)
            return PyErr_NoMemory();
    }
    all[0] = self;
    memcpy(all + 1, args, (size_t)(nargs + nkw) * sizeof(PyObject *));
    PyObject *r = PyObject_Vectorcall(fn, all, (size_t)(1 + nargs), kwnames);
    if (all != small)
        PyMem_Free(all);
    return r;
}

/* The method: self is the receiver; the state comes from the defining class. */
static PyObject *method_call(const char *name, impl_fn impl, PyObject *self,
                             PyTypeObject *cls, PyObject *const *args, size_t nargsf,
                             PyObject *kwnames)
{
    pith_module_state *st = PyType_GetModuleState(cls);
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *r;
    if ((function_self_maybe(self) || (nargs && function_arg_maybe(st, args[0]))) &&
        function_layer_method_args(self, name, args, nargs, kwnames, &r))
        return r; /* See Note [Function layer] (function_layer.c) */
    r = impl(st, self, args, nargs, kwnames);
    if (r != FALLBACK)
        return r;
    return call_generic(st, name, self, args, nargs, kwnames);
}


/* The method of each conversion, and of to. `name` is only pasted or stringised, never
 * passed on: an expanded `bool` would be _Bool. */
#define DEFINE_METHOD_(name, dtype)                                                         \
    static PyObject *method_##name(PyObject *self, PyTypeObject *cls, PyObject *const *args, \
                                   size_t nargsf, PyObject *kwnames)                        \
    {                                                                                       \
        return method_call(#name, impl_##name, self, cls, args, nargsf, kwnames);           \
    }
DEFINE_METHOD_(to, PITH_NUM_DTYPES)
PITH_FORALL_DTYPE_CONVERSIONS(DEFINE_METHOD_)
#undef DEFINE_METHOD_

/* _set_generic(name, fn): registers the generic implementation behind a fast entry. */
static PyObject *module_set_generic(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    pith_module_state *st = state_of_module(module);
    if (nargs != 2 || !PyUnicode_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_set_generic(name: str, fn: callable)");
        return NULL;
    }
    if (!st->generic && !(st->generic = PyDict_New()))
        return NULL;
    if (PyDict_SetItem(st->generic, args[0], args[1]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

#define METHOD_ENTRY_(name, dtype)                                                          \
    {#name, (PyCFunction)(void (*)(void))method_##name,                                     \
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS, NULL},

PyMethodDef conversions_tensor_methods[] = {
    METHOD_ENTRY_(to, PITH_NUM_DTYPES)
    PITH_FORALL_DTYPE_CONVERSIONS(METHOD_ENTRY_)
    {NULL},
};

/* _dtype_conversions(): ((name, dtype), ...) of PITH_FORALL_DTYPE_CONVERSIONS, for
 * pith/_api.py's generic forms of the same methods, so the list is written once. */
static PyObject *module_dtype_conversions(PyObject *module, PyObject *unused)
{
    pith_module_state *st = state_of_module(module);
    static const struct {
        const char *name;
        pith_dtype dtype;
    } conversions[] = {
#define CONVERSION_ROW_(name, dtype) {#name, dtype},
        PITH_FORALL_DTYPE_CONVERSIONS(CONVERSION_ROW_)
#undef CONVERSION_ROW_
    };
    size_t n = sizeof conversions / sizeof conversions[0];
    PyObject *result = PyTuple_New((Py_ssize_t)n);
    if (!result)
        return NULL;
    for (size_t i = 0; i < n; i++) {
        PyObject *dtype = dtype_object(st, conversions[i].dtype);
        PyObject *pair = dtype ? Py_BuildValue("(sN)", conversions[i].name, dtype) : NULL;
        if (!pair) {
            Py_DECREF(result);
            return NULL;
        }
        PyTuple_SET_ITEM(result, (Py_ssize_t)i, pair);
    }
    return result;
}

PyMethodDef conversions_module_methods[] = {
    {"_set_generic", (PyCFunction)(void (*)(void))module_set_generic, METH_FASTCALL,
     "_set_generic(name, fn): the Python implementation behind a conversion's short path."},
    {"_dtype_conversions", module_dtype_conversions, METH_NOARGS,
     "_dtype_conversions(): ((name, dtype), ...), the methods x.float() & co. and their dtypes."},
    {NULL},
};
