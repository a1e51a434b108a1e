/* function_modes.c — the state of the function layer in each thread state: its function
 * modes (pith.overrides.TorchFunctionMode) and whether it is disabled
 * (DisablePithFunctionSubclass, DisablePithFunction), with the module functions that read
 * and change them. See Note [Function layer] (function_layer.c). */
#include "function_layer.h"

_Atomic long function_modes_pushed;

/* ---- the thread state's entries ---- */

/* Note [Function modes live in the thread state]
 * As the dispatch modes (Note [Dispatch modes live in the thread state], python_modes.c),
 * a thread's function modes are a list in its Python thread state's dict, and so is its
 * disabled state (absent: enabled), so that each interpreter and each thread state has its
 * own and a PyThreadState_Swap carries nothing across. The call sites must not read the
 * dict on every call, so function_modes_pushed counts the modes on every stack of the
 * process: it changes with each push and pop here, and while it is zero, which is the
 * common case, no call looks for a mode. A stack left behind by a thread state that died
 * inside a mode keeps the count above zero, which only sends calls to the slow path, where
 * they find their own stack empty. */

int function_disabled_state(pith_module_state *st)
{
    PyObject *dict = PyThreadState_GetDict(); /* borrowed */
    PyObject *v = dict ? PyDict_GetItemWithError(dict, st->function.disabled_key) : NULL;
    if (!v)
        return PyErr_Occurred() ? -1 : FUNCTION_ENABLED;
    long disabled = PyLong_AsLong(v);
    return disabled == -1 && PyErr_Occurred() ? -1 : (int)disabled;
}

int function_disabled_set(pith_module_state *st, int disabled)
{
    PyObject *dict = PyThreadState_GetDict(); /* borrowed */
    if (!dict) {
        PyErr_SetString(PyExc_RuntimeError, "pith: this thread state has no dict");
        return -1;
    }
    if (disabled == FUNCTION_ENABLED) {
        if (PyDict_DelItem(dict, st->function.disabled_key) == 0)
            return 0;
        if (!PyErr_ExceptionMatches(PyExc_KeyError))
            return -1;
        PyErr_Clear();
        return 0;
    }
    PyObject *v = PyLong_FromLong(disabled);
    int rc = v ? PyDict_SetItem(dict, st->function.disabled_key, v) : -1;
    Py_XDECREF(v);
    return rc;
}

PyObject *function_modes_of_thread(pith_module_state *st, bool create)
{
    PyObject *dict = PyThreadState_GetDict(); /* borrowed */
    if (!dict) {
        if (create)
            PyErr_SetString(PyExc_RuntimeError, "pith: this thread state has no dict");
        return NULL;
    }
    PyObject *modes = PyDict_GetItemWithError(dict, st->function.modes_key);
    if (modes || PyErr_Occurred() || !create)
        return modes;
    modes = PyList_New(0);
    if (!modes || PyDict_SetItem(dict, st->function.modes_key, modes) < 0) {
        Py_XDECREF(modes);
        return NULL;
    }
    Py_DECREF(modes); /* the dict keeps it */
    return modes;
}

PyObject *function_mode_pop(PyObject *modes)
{
    Py_ssize_t n = PyList_GET_SIZE(modes);
    if (n == 0) {
        PyErr_SetString(PyExc_RuntimeError, "pith: no function mode to pop");
        return NULL;
    }
    PyObject *mode = Py_NewRef(PyList_GET_ITEM(modes, n - 1));
    if (PyList_SetSlice(modes, n - 1, n, NULL) < 0) {
        Py_DECREF(mode);
        return NULL;
    }
    atomic_fetch_sub_explicit(&function_modes_pushed, 1, memory_order_relaxed);
    return mode;
}

int function_mode_push_back(PyObject *modes, PyObject *mode)
{
    if (PyList_Append(modes, mode) < 0)
        return -1;
    atomic_fetch_add_explicit(&function_modes_pushed, 1, memory_order_relaxed);
    return 0;
}

/* ---- modes from Python ---- */

/* Whether objects of `type` can be modes: they have a handler under either name. */
static bool is_mode_type(pith_module_state *st, PyTypeObject *type)
{
    return _PyType_Lookup(type, st->function.name) ||
           _PyType_Lookup(type, st->function.torch_name);
}

/* _push_function_mode(mode) */
static PyObject *push_mode(PyObject *module, PyObject *mode)
{
    pith_module_state *st = state_of_module(module);
    if (!is_mode_type(st, Py_TYPE(mode)))
        return PyErr_Format(PyExc_TypeError, "a function mode must define __pith_function__ "
                            "or __torch_function__; %.200s does not", Py_TYPE(mode)->tp_name);
    PyObject *modes = function_modes_of_thread(st, true);
    if (!modes || function_mode_push_back(modes, mode) < 0)
        return NULL;
    Py_RETURN_NONE;
}

/* _pop_function_mode(mode=None): pops the innermost mode, which must be `mode` when given;
 * returns it. */
static PyObject *pop_mode(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
    if (argc > 1)
        return PyErr_Format(PyExc_TypeError, "_pop_function_mode(mode=None)");
    pith_module_state *st = state_of_module(module);
    PyObject *modes = function_modes_of_thread(st, true);
    if (!modes)
        return NULL;
    Py_ssize_t n = PyList_GET_SIZE(modes);
    PyObject *expected = argc ? argv[0] : Py_None;
    if (n == 0)
        return PyErr_Format(PyExc_RuntimeError, "no function mode is active on this thread%s",
                            expected == Py_None ? "" : " to exit");
    if (expected != Py_None && PyList_GET_ITEM(modes, n - 1) != expected) {
        Py_ssize_t i = n - 1;
        while (i >= 0 && PyList_GET_ITEM(modes, i) != expected)
            i--;
        return PyErr_Format(PyExc_RuntimeError, i < 0
                                ? "the function mode %R is not active on this thread"
                                : "the function mode %R was exited before the modes "
                                  "entered after it", expected);
    }
    return function_mode_pop(modes);
}

/* _function_mode_stack() -> a copy of this thread's function modes, innermost last. */
static PyObject *mode_stack(PyObject *module, PyObject *unused)
{
    PyObject *modes = function_modes_of_thread(state_of_module(module), true);
    return modes ? PyList_GetSlice(modes, 0, PyList_GET_SIZE(modes)) : NULL;
}

static PyObject *stack_len(PyObject *module, PyObject *unused)
{
    PyObject *modes = function_modes_of_thread(state_of_module(module), false);
    if (!modes && PyErr_Occurred())
        return NULL;
    return PyLong_FromSsize_t(modes ? PyList_GET_SIZE(modes) : 0);
}

/* _is_pith_function_enabled(): neither guard is in effect (PyTorch's
 * _is_torch_function_enabled). */
static PyObject *is_enabled(PyObject *module, PyObject *unused)
{
    int disabled = function_disabled_state(state_of_module(module));
    return disabled < 0 ? NULL : PyBool_FromLong(disabled == FUNCTION_ENABLED);
}

static PyObject *is_all_disabled(PyObject *module, PyObject *unused)
{
    int disabled = function_disabled_state(state_of_module(module));
    return disabled < 0 ? NULL : PyBool_FromLong(disabled == FUNCTION_ALL_DISABLED);
}

/* _is_pith_function_mode_enabled(): a mode would see a call made now. */
static PyObject *is_mode_enabled(PyObject *module, PyObject *unused)
{
    pith_module_state *st = state_of_module(module);
    function_request req;
    int rc = function_request_begin(st, &req);
    bool on = req.modes != NULL;
    function_request_end(&req);
    return rc < 0 ? NULL : PyBool_FromLong(on);
}

/* ---- the guards ---- */

/* DisablePithFunctionSubclass() and DisablePithFunction(): context managers that disable
 * the layer for subclasses (modes still run), or entirely, on this thread state, and put
 * back what was in effect on exit. As PyTorch's, the subclass guard leaves a stronger
 * DisablePithFunction in effect. */
typedef struct {
    PyObject_HEAD
    int level, saved;
} guard_object;

static PyObject *guard_new(PyTypeObject *type, int level)
{
    guard_object *g = (guard_object *)type->tp_alloc(type, 0);
    if (g) {
        g->level = level;
        g->saved = FUNCTION_ENABLED;
    }
    return (PyObject *)g;
}

static bool no_arguments(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    if (PyTuple_GET_SIZE(args) == 0 && (!kwargs || PyDict_GET_SIZE(kwargs) == 0))
        return true;
    PyErr_Format(PyExc_TypeError, "%s() takes no arguments", _PyType_Name(type));
    return false;
}

static PyObject *guard_subclass_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    return no_arguments(type, args, kwargs) ? guard_new(type, FUNCTION_SUBCLASSES_DISABLED)
                                            : NULL;
}

static PyObject *guard_all_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    return no_arguments(type, args, kwargs) ? guard_new(type, FUNCTION_ALL_DISABLED) : NULL;
}

static PyObject *guard_enter(PyObject *self, PyObject *unused)
{
    guard_object *g = (guard_object *)self;
    pith_module_state *st = PyType_GetModuleState(Py_TYPE(self));
    int saved = st ? function_disabled_state(st) : -1;
    if (saved < 0)
        return NULL;
    g->saved = saved;
    if (saved < g->level && function_disabled_set(st, g->level) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *guard_exit(PyObject *self, PyObject *const *argv, Py_ssize_t argc)
{
    guard_object *g = (guard_object *)self;
    pith_module_state *st = PyType_GetModuleState(Py_TYPE(self));
    if (!st || function_disabled_set(st, g->saved) < 0)
        return NULL;
    Py_RETURN_FALSE;
}

static void guard_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    type->tp_free(self);
    Py_DECREF(type);
}

static PyMethodDef guard_methods[] = {
    {"__enter__", guard_enter, METH_NOARGS, NULL},
    {"__exit__", (PyCFunction)(void (*)(void))guard_exit, METH_FASTCALL, NULL},
    {NULL},
};

static PyType_Slot guard_subclass_slots[] = {
    {Py_tp_new, guard_subclass_new},
    {Py_tp_dealloc, guard_dealloc},
    {Py_tp_methods, guard_methods},
    {Py_tp_doc, "with DisablePithFunctionSubclass(): pith calls made inside skip the "
                "__pith_function__ of tensor subclasses (function modes still run)."},
    {0, NULL},
};

static PyType_Slot guard_all_slots[] = {
    {Py_tp_new, guard_all_new},
    {Py_tp_dealloc, guard_dealloc},
    {Py_tp_methods, guard_methods},
    {Py_tp_doc, "with DisablePithFunction(): pith calls made inside skip the function layer "
                "entirely: neither function modes nor __pith_function__ run."},
    {0, NULL},
};

static PyType_Spec guard_subclass_spec = {
    .name = "pith._C.DisablePithFunctionSubclass",
    .basicsize = sizeof(guard_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = guard_subclass_slots,
};

static PyType_Spec guard_all_spec = {
    .name = "pith._C.DisablePithFunction",
    .basicsize = sizeof(guard_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = guard_all_slots,
};

static PyMethodDef modes_module_methods[] = {
    {"_push_function_mode", push_mode, METH_O, "Enters a function mode on this thread."},
    {"_pop_function_mode", (PyCFunction)(void (*)(void))pop_mode, METH_FASTCALL,
     "_pop_function_mode(mode=None): exits the innermost function mode (which must be `mode` "
     "when given) and returns it."},
    {"_function_mode_stack", mode_stack, METH_NOARGS,
     "This thread's function modes, innermost last."},
    {"_len_pith_function_stack", stack_len, METH_NOARGS,
     "The number of function modes in effect on this thread."},
    {"_is_pith_function_enabled", is_enabled, METH_NOARGS,
     "Whether the function layer runs for subclasses on this thread (no Disable guard)."},
    {"_is_pith_function_all_disabled", is_all_disabled, METH_NOARGS,
     "Whether DisablePithFunction is in effect on this thread."},
    {"_is_pith_function_mode_enabled", is_mode_enabled, METH_NOARGS,
     "Whether a function mode would see a call made now on this thread."},
    {NULL},
};

static const char *const torch_aliases[][2] = {
    {"DisableTorchFunctionSubclass", "DisablePithFunctionSubclass"},
    {"DisableTorchFunction", "DisablePithFunction"},
    {"_len_torch_function_stack", "_len_pith_function_stack"},
    {"_is_torch_function_enabled", "_is_pith_function_enabled"},
    {"_is_torch_function_all_disabled", "_is_pith_function_all_disabled"},
    {"_is_torch_function_mode_enabled", "_is_pith_function_mode_enabled"},
};

int function_modes_init(PyObject *module, pith_module_state *st)
{
    PyObject *subclass = PyType_FromModuleAndSpec(module, &guard_subclass_spec, NULL);
    PyObject *all = subclass ? PyType_FromModuleAndSpec(module, &guard_all_spec, NULL) : NULL;
    int rc = all && PyModule_AddObjectRef(module, "DisablePithFunctionSubclass", subclass) == 0 &&
                     PyModule_AddObjectRef(module, "DisablePithFunction", all) == 0 &&
                     PyModule_AddFunctions(module, modes_module_methods) == 0
                 ? 0
                 : -1;
    Py_XDECREF(subclass);
    Py_XDECREF(all);
    for (size_t i = 0; rc == 0 && i < sizeof torch_aliases / sizeof *torch_aliases; i++) {
        PyObject *obj = PyObject_GetAttrString(module, torch_aliases[i][1]);
        rc = obj ? PyModule_AddObjectRef(module, torch_aliases[i][0], obj) : -1;
        Py_XDECREF(obj);
    }
    return rc;
}
