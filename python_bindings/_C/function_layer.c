/* function_layer.c — __pith_function__, PyTorch's __torch_function__: which arguments
 * override the function layer, the handlers' calls and their order, the slow path that the
 * call sites share, _disabled_pith_function_impl and the has/handle functions of
 * pith.overrides. The mode stack and the disable guards are in function_modes.c, the
 * wrapper of Python functions in function_wrapper.c; the hot checks are inline in
 * function_layer.h and at the call sites (binder.c, tensor_number.c, ...).
 *
 * Note [Function layer]
 * PyTorch's protocol, before any argument is converted: a call of a pith function, a Tensor
 * method, an operator or slot (x + y is pith.Tensor.add, x[i] Tensor.__getitem__, x.shape
 * Tensor.shape.__get__, x.grad = g Tensor.grad.__set__: the names PyTorch passes), a pith.ops
 * overload or a Python function of pith (pith.nn.functional.relu) first looks at its arguments:
 * at every Tensor and Tensor[] parameter of the overload that matched (the binder) or at every
 * argument (the other call sites), one level into lists and tuples. An argument overrides the
 * layer when it is not a pith.Tensor of the exact type and its type has a __pith_function__ (or
 * __torch_function__, its synonym: whichever the nearer class of the MRO defines) other than
 * _disabled_pith_function_impl; an object that is no tensor at all but overrides it binds a
 * Tensor parameter (a tensor-like). When one does, or a function mode is in effect on this
 * thread, the call becomes handler(func, types, args, kwargs): the top mode first (popped while
 * it runs), then one handler per overriding type, a subclass before its bases and otherwise
 * left to right (overloaded_insert), until one returns something other than NotImplemented;
 * when all do, TypeError. `func` is the public callable and `types` the overriding types;
 * `kwargs` is None when the call had no keywords, as PyTorch's C calls give it. pith.Tensor's
 * own __pith_function__ (pith/_tensor.py) runs func with the layer disabled for subclasses and
 * makes Tensor results instances of the subclass, as PyTorch's does; nn.Parameter sets
 * _disabled_pith_function_impl, so ops on parameters give plain tensors; a class that defines
 * __pith_dispatch__ and inherits the default gets the disabled one too (function_class_created,
 * PyTorch's THPVariableMetaType_init). DisablePithFunctionSubclass and DisablePithFunction
 * (function_modes.c) live in the calling thread state, as the modes do.
 *
 * Why it is cheap: the common call has only plain tensors and numbers, and no mode
 * anywhere. The binder checks the slots of Tensor parameters it already bound, each with
 * one compare of its type against pith.Tensor (and None and the number types, which a
 * Tensor parameter may hold); a method compares its receiver's tp_base with object's (only
 * pith.Tensor itself has that base); and every site reads one process-wide counter of the
 * modes pushed (function_modes_pushed), so it never touches a thread-local or the thread
 * state. Anything else takes the slow path: a subclass's handler is found through the type
 * cache (_PyType_Lookup of the two names), and only a type that overrides the layer makes
 * it read the thread state's disabled state. An nn.Parameter (the common subclass) costs
 * the two lookups and no more. */
#include <stdio.h>
#include <string.h>

#include "binder.h"
#include "function_layer.h"

/* ---- which types override the layer ---- */

/* The handler `type` resolves to (borrowed; NULL when it has none): the value of
 * __pith_function__ or __torch_function__ in the nearest class of its MRO that defines
 * either, the pith name first within one class; *name says which name it is. */
static PyObject *handler_of(pith_module_state *st, PyTypeObject *type, PyObject **name)
{
    PyObject *pith_h = _PyType_Lookup(type, st->function.name);
    PyObject *torch_h = _PyType_Lookup(type, st->function.torch_name);
    *name = pith_h || !torch_h ? st->function.name : st->function.torch_name;
    if (!pith_h || !torch_h || pith_h == torch_h)
        return pith_h ? pith_h : torch_h;
    PyObject *mro = type->tp_mro;
    for (Py_ssize_t i = 0; mro && i < PyTuple_GET_SIZE(mro); i++) {
        PyObject *dict = ((PyTypeObject *)PyTuple_GET_ITEM(mro, i))->tp_dict;
        if (!dict)
            continue;
        if (PyDict_GetItemWithError(dict, st->function.name))
            return pith_h;
        if (PyDict_GetItemWithError(dict, st->function.torch_name)) {
            *name = st->function.torch_name;
            return torch_h;
        }
    }
    PyErr_Clear();
    return pith_h;
}

bool function_type_overrides(pith_module_state *st, PyTypeObject *type)
{
    PyObject *name, *handler = handler_of(st, type, &name);
    return handler && handler != st->function.disabled_impl;
}

/* Types whose objects never override the layer, whatever they define (PyTorch's
 * is_basic_python_type). */
static bool is_basic_type(PyTypeObject *type)
{
    return type == &PyBool_Type || type == &PyLong_Type || type == &PyFloat_Type ||
           type == &PyComplex_Type || type == &PyUnicode_Type || type == &PyBytes_Type ||
           type == &PyList_Type || type == &PyTuple_Type || type == &PyDict_Type ||
           type == &PySet_Type || type == &PyFrozenSet_Type || type == &PySlice_Type ||
           type == Py_TYPE(Py_None) || type == Py_TYPE(Py_Ellipsis) ||
           type == Py_TYPE(Py_NotImplemented) || type == &PyModule_Type;
}

/* ---- requests ---- */

/* The calling thread state's disabled state, read once per request. */
static int request_disabled(pith_module_state *st, function_request *req)
{
    if (req->disabled < 0)
        req->disabled = function_disabled_state(st);
    return req->disabled;
}

int function_request_begin(pith_module_state *st, function_request *req)
{
    overloaded_init(&req->ov);
    req->modes = NULL;
    req->disabled = -1;
    if (!function_modes_maybe())
        return 0;
    int disabled = request_disabled(st, req);
    if (disabled < 0)
        return -1;
    if (disabled == FUNCTION_ALL_DISABLED)
        return 0;
    PyObject *modes = function_modes_of_thread(st, false);
    if (!modes && PyErr_Occurred())
        return -1;
    if (modes && PyList_GET_SIZE(modes) > 0)
        req->modes = Py_NewRef(modes);
    return 0;
}

/* Adds one argument (no list) that overrides the layer. */
static int request_add_one(pith_module_state *st, function_request *req, PyObject *v)
{
    PyTypeObject *type = Py_TYPE(v);
    if (type == st->tensor_type || is_basic_type(type) || !function_type_overrides(st, type))
        return 0;
    int disabled = request_disabled(st, req);
    if (disabled < 0)
        return -1;
    return disabled == FUNCTION_ENABLED ? overloaded_insert(&req->ov, v) : 0;
}

int function_request_add(pith_module_state *st, function_request *req, PyObject *v)
{
    if (!PyList_Check(v) && !PyTuple_Check(v))
        return request_add_one(st, req, v);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); i++)
        if (request_add_one(st, req, PySequence_Fast_GET_ITEM(v, i)) < 0)
            return -1;
    return 0;
}

void function_request_end(function_request *req)
{
    overloaded_free(&req->ov);
    Py_CLEAR(req->modes);
}

bool function_tensor_like(pith_module_state *st, PyObject *v)
{
    PyTypeObject *type = Py_TYPE(v);
    if (is_basic_type(type) || PyObject_TypeCheck(v, st->tensor_type) ||
        !function_type_overrides(st, type))
        return false;
    int disabled = function_disabled_state(st);
    if (disabled < 0)
        PyErr_Clear();
    return disabled == FUNCTION_ENABLED;
}

/* ---- running the handlers ---- */

/* "pith.add", "pith.Tensor.add", "pith.ops.pith.add.Tensor": what the TypeError names. */
static PyObject *func_display_name(pith_module_state *st, PyObject *func)
{
    PyTypeObject *type = Py_TYPE(func);
    if (type == st->binder.function_type || type == st->binder.method_type) {
        PyObject *name = PyObject_GetAttrString(func, "__name__");
        PyObject *text = name ? PyUnicode_FromFormat(type == st->binder.method_type
                                                         ? "pith.Tensor.%U" : "pith.%U", name)
                              : NULL;
        Py_XDECREF(name);
        return text;
    }
    PyObject *module = PyObject_GetAttrString(func, "__module__");
    PyObject *name = module ? PyObject_GetAttrString(func, "__qualname__") : NULL;
    PyObject *text = name && PyUnicode_Check(module) && PyUnicode_Check(name)
                         ? PyUnicode_FromFormat("%U.%U", module, name)
                         : NULL;
    Py_XDECREF(module);
    Py_XDECREF(name);
    if (text)
        return text;
    PyErr_Clear();
    return PyObject_Repr(func);
}

static void not_implemented_error(pith_module_state *st, PyObject *func, PyObject *mode,
                                  PyObject *objs)
{
    PyObject *name = func_display_name(st, func);
    PyObject *text = name ? PyUnicode_FromFormat("Multiple dispatch failed for '%U'; all "
                                                 "__pith_function__ handlers returned "
                                                 "NotImplemented:\n\n", name)
                          : NULL;
    Py_XDECREF(name);
    if (text && mode)
        PyUnicode_AppendAndDel(&text, PyUnicode_FromFormat("  - mode object %R\n", mode));
    for (Py_ssize_t i = 0; text && i < PyTuple_GET_SIZE(objs); i++)
        PyUnicode_AppendAndDel(&text, PyUnicode_FromFormat(
                                          "  - tensor subclass %R\n",
                                          (PyObject *)Py_TYPE(PyTuple_GET_ITEM(objs, i))));
    if (text)
        PyErr_SetObject(PyExc_TypeError, text);
    Py_XDECREF(text);
}

/* handler(func, types, args[, kwargs]) of `obj` (an overriding argument or a mode). */
static PyObject *handler_call(pith_module_state *st, PyObject *obj, PyObject *func,
                              PyObject *types, PyObject *args, PyObject *kwargs)
{
    PyObject *name;
    if (!handler_of(st, Py_TYPE(obj), &name)) {
        PyErr_Format(PyExc_TypeError, "%.200s defines neither __pith_function__ nor "
                     "__torch_function__", Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyObject *handler = PyObject_GetAttr(obj, name);
    if (!handler)
        return NULL;
    PyObject *argv[4] = {func, types, args, kwargs};
    PyObject *ret = PyObject_Vectorcall(handler, argv, kwargs ? 4 : 3, NULL);
    Py_DECREF(handler);
    return ret;
}

/* The top mode's handler, with the mode popped while it runs (*mode_out: the mode). */
static PyObject *mode_call(pith_module_state *st, PyObject *modes, PyObject *func,
                           PyObject *types, PyObject *args, PyObject *kwargs,
                           PyObject **mode_out)
{
    PyObject *mode = function_mode_pop(modes);
    if (!(*mode_out = mode))
        return NULL;
    PyObject *ret = handler_call(st, mode, func, types, args, kwargs);
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (function_mode_push_back(modes, mode) < 0) { /* out of memory: report that instead */
        Py_XDECREF(type);
        Py_XDECREF(value);
        Py_XDECREF(tb);
        Py_XDECREF(ret);
        return NULL;
    }
    PyErr_Restore(type, value, tb);
    return ret;
}

PyObject *function_request_run(pith_module_state *st, function_request *req, PyObject *func,
                               PyObject *args, PyObject *kwargs)
{
    /* The overriding objects and their types, held: a handler may empty a list that held
     * one of them. */
    Py_ssize_t n = req->ov.n;
    PyObject *objs = PyTuple_New(n), *types = PyTuple_New(n);
    if (!objs || !types) {
        Py_XDECREF(objs);
        Py_XDECREF(types);
        return NULL;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyTuple_SET_ITEM(objs, i, Py_NewRef(req->ov.items[i]));
        PyTuple_SET_ITEM(types, i, Py_NewRef((PyObject *)Py_TYPE(req->ov.items[i])));
    }
    PyObject *ret = NULL, *mode = NULL;
    if (req->modes && !(ret = mode_call(st, req->modes, func, types, args, kwargs, &mode)))
        goto done;
    for (Py_ssize_t i = 0; i < n && (!ret || ret == Py_NotImplemented); i++) {
        Py_XDECREF(ret);
        if (!(ret = handler_call(st, PyTuple_GET_ITEM(objs, i), func, types, args, kwargs)))
            goto done;
    }
    if (!ret || ret == Py_NotImplemented) {
        Py_CLEAR(ret);
        not_implemented_error(st, func, mode, objs);
    }
done:
    Py_XDECREF(mode);
    Py_DECREF(objs);
    Py_DECREF(types);
    return ret;
}

/* ---- the slow path of the call sites ---- */

/* (args, kwargs) of a vectorcall: kwargs is NULL when there are no keywords. 0 or -1. */
static int vector_unpack(PyObject *const *items, Py_ssize_t nargs, PyObject *kwnames,
                         PyObject **args, PyObject **kwargs)
{
    *kwargs = NULL;
    if (!(*args = PyTuple_New(nargs)))
        return -1;
    for (Py_ssize_t i = 0; i < nargs; i++)
        PyTuple_SET_ITEM(*args, i, Py_NewRef(items[i]));
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (nkw == 0)
        return 0;
    if (!(*kwargs = PyDict_New()))
        goto fail;
    for (Py_ssize_t k = 0; k < nkw; k++)
        if (PyDict_SetItem(*kwargs, PyTuple_GET_ITEM(kwnames, k), items[nargs + k]) < 0)
            goto fail;
    return 0;
fail:
    Py_CLEAR(*args);
    Py_CLEAR(*kwargs);
    return -1;
}

PyObject *function_request_run_vector(pith_module_state *st, function_request *req,
                                      PyObject *func, PyObject *const *items,
                                      Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *args, *kwargs;
    if (vector_unpack(items, nargs, kwnames, &args, &kwargs) < 0)
        return NULL;
    PyObject *ret = function_request_run(st, req, func, args, kwargs);
    Py_DECREF(args);
    Py_XDECREF(kwargs);
    return ret;
}

/* The public callable named `func_name` on pith.Tensor: "add" is pith.Tensor.add,
 * "shape.__get__" the __get__ of its property. A new reference, or NULL. */
static PyObject *tensor_func(pith_module_state *st, const char *func_name)
{
    const char *dot = strchr(func_name, '.');
    if (!dot)
        return PyObject_GetAttrString((PyObject *)st->tensor_type, func_name);
    PyObject *attr = PyUnicode_FromStringAndSize(func_name, dot - func_name);
    PyObject *descr = attr ? PyDict_GetItemWithError(st->tensor_type->tp_dict, attr) : NULL;
    Py_XDECREF(attr);
    if (!descr)
        return PyErr_Occurred() ? NULL
                                : PyErr_Format(PyExc_AttributeError, "pith.Tensor has no "
                                               "attribute for %s", func_name);
    return PyObject_GetAttrString(descr, dot + 1);
}

int function_layer_call(pith_module_state *st, PyObject *func, const char *func_name,
                        PyObject *const *items, Py_ssize_t nargs, PyObject *kwnames,
                        PyObject **result)
{
    *result = NULL;
    function_request req;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    int rc = function_request_begin(st, &req);
    for (Py_ssize_t i = 0; rc == 0 && i < nargs + nkw; i++)
        rc = function_request_add(st, &req, items[i]);
    if (rc == 0 && !function_request_needed(&req)) {
        function_request_end(&req);
        return 0;
    }
    PyObject *f = rc == 0 ? func ? Py_NewRef(func) : tensor_func(st, func_name) : NULL;
    if (f)
        *result = function_request_run_vector(st, &req, f, items, nargs, kwnames);
    Py_XDECREF(f);
    function_request_end(&req);
    return 1;
}

int function_layer_method(PyObject *self, const char *func_name, PyObject *const *items,
                          Py_ssize_t nargs, PyObject *kwnames, PyObject **result)
{
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st) {
        *result = NULL;
        return 1;
    }
    return function_layer_call(st, NULL, func_name, items, nargs, kwnames, result);
}

int function_layer_method_tuple(PyObject *self, const char *func_name, PyObject *args,
                                PyObject *kwargs, PyObject **result)
{
    Py_ssize_t nargs = args ? PyTuple_GET_SIZE(args) : 0;
    Py_ssize_t nkw = kwargs ? PyDict_GET_SIZE(kwargs) : 0;
    PyObject *small[8], **items = small, *kwnames = NULL;
    if (1 + nargs + nkw > 8 && !(items = PyMem_Malloc((size_t)(1 + nargs + nkw) *
                                                      sizeof *items))) {
        *result = PyErr_NoMemory();
        return 1;
    }
    items[0] = self;
    for (Py_ssize_t i = 0; i < nargs; i++)
        items[1 + i] = PyTuple_GET_ITEM(args, i);
    if (nkw && !(kwnames = PyTuple_New(nkw))) {
        *result = NULL;
        if (items != small)
            PyMem_Free(items);
        return 1;
    }
    PyObject *key, *value;
    Py_ssize_t pos = 0, k = 0;
    while (nkw && PyDict_Next(kwargs, &pos, &key, &value)) {
        PyTuple_SET_ITEM(kwnames, k, Py_NewRef(key));
        items[1 + nargs + k++] = value;
    }
    int rc = function_layer_method(self, func_name, items, 1 + nargs, kwnames, result);
    Py_XDECREF(kwnames);
    if (items != small)
        PyMem_Free(items);
    return rc;
}

int function_layer_method_args(PyObject *self, const char *func_name, PyObject *const *args,
                               Py_ssize_t nargs, PyObject *kwnames, PyObject **result)
{
    Py_ssize_t total = 1 + nargs + (kwnames ? PyTuple_GET_SIZE(kwnames) : 0);
    PyObject *small[8], **items = small;
    if (total > 8 && !(items = PyMem_Malloc((size_t)total * sizeof *items))) {
        *result = PyErr_NoMemory();
        return 1;
    }
    items[0] = self;
    for (Py_ssize_t i = 1; i < total; i++)
        items[i] = args[i - 1];
    int rc = function_layer_method(self, func_name, items, 1 + nargs, kwnames, result);
    if (items != small)
        PyMem_Free(items);
    return rc;
}

int function_layer_setter(PyObject *self, const char *attr, PyObject *value, int *rc)
{
    char func_name[64];
    PyObject *items[2] = {self, value}, *result;
    snprintf(func_name, sizeof func_name, "%s.%s", attr, value ? "__set__" : "__delete__");
    if (!function_layer_method(self, func_name, items, value ? 2 : 1, NULL, &result))
        return 0;
    *rc = result ? 0 : -1;
    Py_XDECREF(result);
    return 1;
}

int function_layer_modes_only(pith_module_state *st, PyObject *module, const char *func_name,
                              PyObject *args, PyObject *kwargs, PyObject **result)
{
    *result = NULL;
    function_request req;
    if (function_request_begin(st, &req) < 0) {
        function_request_end(&req);
        return 1;
    }
    if (!req.modes) {
        function_request_end(&req);
        return 0;
    }
    PyObject *func = PyObject_GetAttrString(module, func_name);
    if (func)
        *result = function_request_run(st, &req, func, args,
                                       kwargs && PyDict_GET_SIZE(kwargs) ? kwargs : NULL);
    Py_XDECREF(func);
    function_request_end(&req);
    return 1;
}

bool function_mode_in_effect(pith_module_state *st)
{
    if (!function_modes_maybe())
        return false;
    function_request req;
    if (function_request_begin(st, &req) < 0)
        PyErr_Clear();
    bool on = req.modes != NULL;
    function_request_end(&req);
    return on;
}

/* ---- the metaclass's rule ---- */

/* The function a handler wraps: a classmethod's or bound method's __func__, or itself (a
 * new reference). */
static PyObject *handler_function(PyObject *handler)
{
    PyObject *fn = PyObject_GetAttrString(handler, "__func__");
    if (!fn)
        PyErr_Clear();
    return fn ? fn : Py_NewRef(handler);
}

int function_class_created(pith_module_state *st, PyTypeObject *type)
{
    if (!_PyType_Lookup(type, st->function.dispatch_name))
        return 0;
    PyObject *name, *handler = handler_of(st, type, &name);
    PyObject *fallback = PyDict_GetItemWithError(st->tensor_type->tp_dict, st->function.name);
    if (!handler || !fallback)
        return PyErr_Occurred() ? -1 : 0;
    PyObject *a = handler_function(handler), *b = handler_function(fallback);
    bool inherited = a == b;
    Py_DECREF(a);
    Py_DECREF(b);
    if (!inherited)
        return 0;
    if (PyObject_SetAttr((PyObject *)type, st->function.name, st->function.disabled_impl) < 0 ||
        PyObject_SetAttr((PyObject *)type, st->function.torch_name,
                         st->function.disabled_impl) < 0)
        return -1;
    return 0;
}

/* ---- Python-facing ---- */

/* _disabled_pith_function_impl(func, types, args=(), kwargs=None): runs func with the layer
 * disabled for subclasses, and returns what it returns. A builtin, so that as a class
 * attribute it stays unbound, and the layer knows it for "does not override". */
static PyObject *disabled_impl(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc < 2 || argc > 4) {
        PyErr_Format(PyExc_TypeError, "_disabled_pith_function_impl() takes 2 to 4 arguments "
                     "(%zd given)", argc);
        return NULL;
    }
    PyObject *func = argv[0], *args = argc > 2 ? argv[2] : NULL;
    PyObject *kwargs = argc > 3 && argv[3] != Py_None ? argv[3] : NULL;
    if (args && !PyTuple_Check(args) && !PyList_Check(args))
        return PyErr_Format(PyExc_TypeError, "expected List or Tuple (got %.200s)",
                            Py_TYPE(args)->tp_name);
    if (kwargs && !PyDict_Check(kwargs))
        return PyErr_Format(PyExc_TypeError, "expected a dict of keyword arguments (got "
                            "%.200s)", Py_TYPE(kwargs)->tp_name);
    PyObject *tuple = !args ? PyTuple_New(0) : PyList_Check(args) ? PyList_AsTuple(args)
                                                                  : Py_NewRef(args);
    if (!tuple)
        return NULL;
    pith_module_state *st = state_of_module(module);
    int saved = function_disabled_state(st);
    PyObject *ret = NULL;
    if (saved >= 0 && function_disabled_set(st, saved == FUNCTION_ENABLED
                                                    ? FUNCTION_SUBCLASSES_DISABLED
                                                    : saved) == 0) {
        ret = PyObject_Call(func, tuple, kwargs);
        PyObject *type, *value, *tb;
        PyErr_Fetch(&type, &value, &tb);
        if (function_disabled_set(st, saved) < 0 && ret) { /* report the failure to restore */
            Py_CLEAR(ret);
            Py_XDECREF(type);
            Py_XDECREF(value);
            Py_XDECREF(tb);
        } else {
            PyErr_Restore(type, value, tb);
        }
    }
    Py_DECREF(tuple);
    return ret;
}

/* Whether `obj` calls for the layer (PyTorch's check_has_torch_function): a mode is in
 * effect, or it is no plain pith.Tensor and overrides the layer with subclasses enabled. */
static int has_function(pith_module_state *st, PyObject *obj)
{
    function_request req;
    int rc = function_request_begin(st, &req);
    if (rc == 0 && !req.modes && function_arg_maybe(st, obj))
        rc = request_add_one(st, &req, obj);
    int needed = rc == 0 ? function_request_needed(&req) : -1;
    function_request_end(&req);
    return needed;
}

static PyObject *has_function_in(pith_module_state *st, PyObject *const *items, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        int has = has_function(st, items[i]);
        if (has)
            return has < 0 ? NULL : Py_NewRef(Py_True);
    }
    Py_RETURN_FALSE;
}

/* _has_pith_function(relevant_args): for a list or tuple of arguments. */
static PyObject *module_has_function(PyObject *module, PyObject *relevant)
{
    PyObject *fast = PySequence_Fast(relevant, "expected a sequence");
    if (!fast)
        return NULL;
    PyObject *ret = has_function_in(state_of_module(module), PySequence_Fast_ITEMS(fast),
                                    PySequence_Fast_GET_SIZE(fast));
    Py_DECREF(fast);
    return ret;
}

static PyObject *module_has_function_unary(PyObject *module, PyObject *obj)
{
    return has_function_in(state_of_module(module), &obj, 1);
}

static PyObject *module_has_function_variadic(PyObject *module, PyObject *const *argv,
                                              Py_ssize_t argc)
{
    return has_function_in(state_of_module(module), argv, argc);
}

/* _handle_pith_function(public_api, relevant_args, args, kwargs): pith.overrides.
 * handle_pith_function's work. */
static PyObject *module_handle_function(PyObject *module, PyObject *const *argv,
                                        Py_ssize_t argc)
{
    if (argc != 4 || !PyTuple_Check(argv[2]) || (argv[3] != Py_None && !PyDict_Check(argv[3])))
        return PyErr_Format(PyExc_TypeError, "_handle_pith_function(public_api, relevant_args, "
                            "args: tuple, kwargs: dict)");
    pith_module_state *st = state_of_module(module);
    PyObject *fast = PySequence_Fast(argv[1], "relevant_args must be a sequence");
    if (!fast)
        return NULL;
    function_request req;
    int rc = function_request_begin(st, &req);
    for (Py_ssize_t i = 0; rc == 0 && i < PySequence_Fast_GET_SIZE(fast); i++)
        rc = request_add_one(st, &req, PySequence_Fast_GET_ITEM(fast, i));
    PyObject *ret = NULL;
    if (rc == 0)
        ret = function_request_run(st, &req, argv[0], argv[2],
                                   argv[3] == Py_None ? NULL : argv[3]);
    function_request_end(&req);
    Py_DECREF(fast);
    return ret;
}

/* _function_overrides(type) -> bool: whether objects of `type` override the layer (for
 * pith.overrides and the tests). */
static PyObject *module_function_overrides(PyObject *module, PyObject *type)
{
    if (!PyType_Check(type))
        return PyErr_Format(PyExc_TypeError, "_function_overrides(type), not %.200s",
                            Py_TYPE(type)->tp_name);
    pith_module_state *st = state_of_module(module);
    return PyBool_FromLong((PyTypeObject *)type != st->tensor_type &&
                           function_type_overrides(st, (PyTypeObject *)type));
}

#define FASTCALL_(fn) (PyCFunction)(void (*)(void))fn, METH_FASTCALL

static PyMethodDef function_module_methods[] = {
    {"_disabled_pith_function_impl", FASTCALL_(disabled_impl),
     "_disabled_pith_function_impl(func, types, args=(), kwargs=None): func(*args, **kwargs) "
     "with the function layer disabled for subclasses; as a class's __pith_function__, the "
     "class does not override the layer."},
    {"_has_pith_function", module_has_function, METH_O,
     "_has_pith_function(relevant_args): whether any argument calls for the function layer."},
    {"_has_pith_function_unary", module_has_function_unary, METH_O,
     "_has_pith_function_unary(obj): whether obj calls for the function layer."},
    {"_has_pith_function_variadic", FASTCALL_(module_has_function_variadic),
     "_has_pith_function_variadic(*args): whether any argument calls for the function layer."},
    {"_handle_pith_function", FASTCALL_(module_handle_function),
     "_handle_pith_function(public_api, relevant_args, args, kwargs): runs the function "
     "layer's handlers."},
    {"_function_overrides", module_function_overrides, METH_O,
     "_function_overrides(type): whether objects of type override the function layer."},
    {NULL},
};

/* PyTorch's names of the same functions, in pith._C: a program written for torch changes
 * only its import. */
static const char *const torch_aliases[][2] = {
    {"_disabled_torch_function_impl", "_disabled_pith_function_impl"},
    {"_has_torch_function", "_has_pith_function"},
    {"_has_torch_function_unary", "_has_pith_function_unary"},
    {"_has_torch_function_variadic", "_has_pith_function_variadic"},
};

int function_layer_init(PyObject *module, pith_module_state *st)
{
    st->function.name = PyUnicode_InternFromString("__pith_function__");
    st->function.torch_name = PyUnicode_InternFromString("__torch_function__");
    st->function.dispatch_name = PyUnicode_InternFromString("__pith_dispatch__");
    st->function.disabled_key = PyUnicode_InternFromString("pith.function_disabled");
    st->function.modes_key = PyUnicode_InternFromString("pith.function_modes");
    if (!st->function.name || !st->function.torch_name || !st->function.dispatch_name ||
        !st->function.disabled_key || !st->function.modes_key ||
        PyModule_AddFunctions(module, function_module_methods) < 0)
        return -1;
    st->function.disabled_impl = PyObject_GetAttrString(module, "_disabled_pith_function_impl");
    if (!st->function.disabled_impl)
        return -1;
    for (size_t i = 0; i < sizeof torch_aliases / sizeof *torch_aliases; i++) {
        PyObject *fn = PyObject_GetAttrString(module, torch_aliases[i][1]);
        int rc = fn ? PyModule_AddObjectRef(module, torch_aliases[i][0], fn) : -1;
        Py_XDECREF(fn);
        if (rc < 0)
            return -1;
    }
    return function_modes_init(module, st) < 0 || function_wrapper_init(module, st) < 0 ? -1
                                                                                         : 0;
}

int function_layer_traverse(pith_module_state *st, visitproc visit, void *arg)
{
    Py_VISIT(st->function.disabled_impl);
    Py_VISIT(st->function.wrapper_type);
    return 0;
}

void function_layer_clear(pith_module_state *st)
{
    Py_CLEAR(st->function.name);
    Py_CLEAR(st->function.torch_name);
    Py_CLEAR(st->function.dispatch_name);
    Py_CLEAR(st->function.disabled_impl);
    Py_CLEAR(st->function.disabled_key);
    Py_CLEAR(st->function.modes_key);
    Py_CLEAR(st->function.wrapper_type);
}
