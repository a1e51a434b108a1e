/* function_wrapper.c — pith._C._Overridable: the function layer (See Note [Function
 * layer], function_layer.c) in front of a pith function or Tensor method written in Python
 * (pith/_api.py's, pith.nn.functional's), which no binder call checks for them. PyTorch
 * writes `if has_torch_function(...): return handle_torch_function(...)` at the top of each
 * such function; here one C object does it for any function, with the same cheap check as
 * the binder's, so the Python code stays as it was. */
#include "function_layer.h"

#include <structmember.h> /* after Python.h (state.h) */

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fn;     /* the Python function */
    PyObject *public; /* what handlers get as func when not this object (a property's
                         __get__), or NULL */
} wrapper_object;

/* Whether an argument may call for the layer: function_arg_maybe, one level into lists and
 * tuples. */
static bool argument_maybe(pith_module_state *st, PyObject *v)
{
    if (!PyList_CheckExact(v) && !PyTuple_CheckExact(v))
        return function_arg_maybe(st, v);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); i++)
        if (function_arg_maybe(st, PySequence_Fast_GET_ITEM(v, i)))
            return true;
    return false;
}

static PyObject *wrapper_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                    PyObject *kwnames)
{
    wrapper_object *w = (wrapper_object *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    Py_ssize_t total = nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    pith_module_state *st = PyType_GetModuleState(Py_TYPE(self));
    bool maybe = function_modes_maybe();
    for (Py_ssize_t i = 0; !maybe && i < total; i++)
        maybe = argument_maybe(st, args[i]);
    PyObject *result;
    if (maybe && function_layer_call(st, w->public ? w->public : self, NULL, args, nargs,
                                     kwnames, &result))
        return result;
    return PyObject_Vectorcall(w->fn, args, nargsf, kwnames);
}

/* Bound to an instance as a Python function is; itself when looked up on the class. */
static PyObject *wrapper_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (!obj || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static int wrapper_traverse(PyObject *self, visitproc visit, void *arg)
{
    wrapper_object *w = (wrapper_object *)self;
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(w->fn);
    Py_VISIT(w->public);
    return 0;
}

static int wrapper_clear(PyObject *self)
{
    wrapper_object *w = (wrapper_object *)self;
    Py_CLEAR(w->fn);
    Py_CLEAR(w->public);
    return 0;
}

static void wrapper_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    wrapper_clear(self);
    type->tp_free(self);
    Py_DECREF(type);
}

static PyObject *wrapper_repr(PyObject *self)
{
    return PyObject_Repr(((wrapper_object *)self)->fn);
}

/* __name__, __qualname__, __module__ and __doc__ are the function's. */
static PyObject *wrapper_get_attr(PyObject *self, void *name)
{
    return PyObject_GetAttrString(((wrapper_object *)self)->fn, name);
}

static PyGetSetDef wrapper_getset[] = {
    {"__name__", wrapper_get_attr, NULL, NULL, "__name__"},
    {"__qualname__", wrapper_get_attr, NULL, NULL, "__qualname__"},
    {"__module__", wrapper_get_attr, NULL, NULL, "__module__"},
    {"__doc__", wrapper_get_attr, NULL, NULL, "__doc__"},
    {NULL},
};

static PyMemberDef wrapper_members[] = {
    {"__wrapped__", T_OBJECT, offsetof(wrapper_object, fn), READONLY, NULL},
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(wrapper_object, vectorcall), READONLY, NULL},
    {NULL},
};

static PyType_Slot wrapper_slots[] = {
    {Py_tp_dealloc, wrapper_dealloc},
    {Py_tp_traverse, wrapper_traverse},
    {Py_tp_clear, wrapper_clear},
    {Py_tp_repr, wrapper_repr},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_descr_get, wrapper_descr_get},
    {Py_tp_getset, wrapper_getset},
    {Py_tp_members, wrapper_members},
    {0, NULL},
};

/* Py_TPFLAGS_METHOD_DESCRIPTOR: x.type_as(y) calls it with (x, y), making no bound method,
 * as for a Python function. */
static PyType_Spec wrapper_spec = {
    .name = "pith._C._Overridable",
    .basicsize = sizeof(wrapper_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
             Py_TPFLAGS_METHOD_DESCRIPTOR | Py_TPFLAGS_DISALLOW_INSTANTIATION |
             Py_TPFLAGS_IMMUTABLETYPE,
    .slots = wrapper_slots,
};

/* _overridable(fn, public=None): fn behind the function layer; handlers get `public` as
 * func, or the new object itself. */
static PyObject *module_overridable(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc < 1 || argc > 2 || !PyCallable_Check(argv[0]))
        return PyErr_Format(PyExc_TypeError, "_overridable(fn: callable, public=None)");
    pith_module_state *st = state_of_module(module);
    wrapper_object *w = PyObject_GC_New(wrapper_object, st->function.wrapper_type);
    if (!w)
        return NULL;
    w->vectorcall = wrapper_vectorcall;
    w->fn = Py_NewRef(argv[0]);
    w->public = argc > 1 && argv[1] != Py_None ? Py_NewRef(argv[1]) : NULL;
    PyObject_GC_Track(w);
    return (PyObject *)w;
}

/* _set_overridable_public(wrapper, public): what its handlers get as func from now on (a
 * property's __get__, which exists only once the property holds the wrapper). */
static PyObject *module_set_public(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
    pith_module_state *st = state_of_module(module);
    if (argc != 2 || !Py_IS_TYPE(argv[0], st->function.wrapper_type))
        return PyErr_Format(PyExc_TypeError, "_set_overridable_public(wrapper, public)");
    Py_XSETREF(((wrapper_object *)argv[0])->public, Py_NewRef(argv[1]));
    Py_RETURN_NONE;
}

static PyMethodDef wrapper_module_methods[] = {
    {"_overridable", (PyCFunction)(void (*)(void))module_overridable, METH_FASTCALL,
     "_overridable(fn, public=None): fn behind the function layer (__pith_function__)."},
    {"_set_overridable_public", (PyCFunction)(void (*)(void))module_set_public, METH_FASTCALL,
     "_set_overridable_public(wrapper, public): the func its handlers get."},
    {NULL},
};

int function_wrapper_init(PyObject *module, pith_module_state *st)
{
    st->function.wrapper_type =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &wrapper_spec, NULL);
    if (!st->function.wrapper_type ||
        PyModule_AddObjectRef(module, "_Overridable", (PyObject *)st->function.wrapper_type) < 0)
        return -1;
    return PyModule_AddFunctions(module, wrapper_module_methods);
}
