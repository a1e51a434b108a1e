/* python_modes.c — this thread's dispatch modes (pith.utils.DispatchMode), no_dispatch, the
 * factories seen by modes, and the module functions of __pith_dispatch__ (set up by
 * pith.utils at import). The dispatch itself is in python_dispatch.c. */
#include "pydispatch.h"

/* ---- the mode stack ---- */

/* Note [Dispatch modes live in the thread state]
 * A thread's dispatch modes are a list in its Python thread state's dict (modes_key), never
 * in C data: each interpreter, and each thread state, has its own. The dispatcher only sees
 * libpith's thread-local key sets, so every change of the list recomputes them
 * (modes_sync): PythonMode is included, with this interpreter as the mode interpreter,
 * exactly when the list is not empty. A thread running two interpreters by
 * PyThreadState_Swap keeps one set of thread-locals, so they can be stale for the thread
 * state swapped in: a mode dispatch that finds no mode in this thread state runs the op as if
 * no mode were active (stale_dispatch), never a mode of another interpreter; modes_sync also
 * runs on every pith.utils mode change. A handler must run on the very thread state that
 * called the op, since that is where its modes (and its exception, Note [Handler exceptions
 * cross C]) live: the bindings keep the GIL around a call that may reach Python
 * (pydispatch_python_reachable), so that case 1 of Note [Entering an interpreter from C]
 * applies. */

/* This thread's mode stack: borrowed; NULL (without an exception) when it has none and
 * `create` is false. */
PyObject *modes_of_thread(pith_module_state *st, bool create)
{
    PyObject *dict = PyThreadState_GetDict(); /* borrowed */
    if (!dict) {
        if (create)
            PyErr_SetString(PyExc_RuntimeError, "pith: this thread state has no dict");
        return NULL;
    }
    PyObject *modes = PyDict_GetItemWithError(dict, st->dispatch.modes_key);
    if (modes || PyErr_Occurred() || !create)
        return modes;
    modes = PyList_New(0);
    if (!modes || PyDict_SetItem(dict, st->dispatch.modes_key, modes) < 0) {
        Py_XDECREF(modes);
        return NULL;
    }
    Py_DECREF(modes); /* the dict keeps it */
    return modes;
}

static void modes_sync(pith_module_state *st, PyObject *modes)
{
    bool on = modes && PyList_GET_SIZE(modes) > 0;
    pith_keys_guard g = pith_keys_current();
    uint64_t bit = pydispatch_bit_mode();
    keys_set(on ? g.included | bit : g.included & ~bit, g.excluded);
    pith_keys_set_mode_interpreter(on ? st->interp : NULL);
}

PyObject *modes_in_effect(pith_module_state *st)
{
    if (!pydispatch_mode_active())
        return NULL;
    PyObject *modes = modes_of_thread(st, false);
    PyErr_Clear();
    return modes && PyList_GET_SIZE(modes) > 0 ? modes : NULL;
}

/* ---- Python-facing: setup, modes, no_dispatch ---- */

/* Sets up a module instance with pith.utils' helpers. */
static int setup_with(pith_module_state *st, PyObject *spec_fn, PyObject *no_default)
{
    pydispatch_bits_init();
    if (library_setup() < 0)
        return -1;
    PyObject *specs = PyDict_New();
    PyObject *name = PyUnicode_InternFromString("__pith_dispatch__");
    PyObject *modes_key = PyUnicode_InternFromString("pith.dispatch_modes");
    if (!specs || !name || !modes_key) {
        Py_XDECREF(specs);
        Py_XDECREF(name);
        Py_XDECREF(modes_key);
        return -1;
    }
    pydispatch_clear(st);
    st->dispatch.specs = specs;
    st->dispatch.name = name;
    st->dispatch.modes_key = modes_key;
    st->dispatch.spec_fn = Py_NewRef(spec_fn);
    st->dispatch.no_default = Py_NewRef(no_default);
    return 0;
}

/* _pydispatch_setup(spec_fn, no_default): called by pith.utils at import. */
static PyObject *pydispatch_setup(PyObject *module, PyObject *args)
{
    PyObject *spec_fn, *no_default;
    if (!PyArg_ParseTuple(args, "OO:_pydispatch_setup", &spec_fn, &no_default) ||
        setup_with(state_of_module(module), spec_fn, no_default) < 0)
        return NULL;
    Py_RETURN_NONE;
}

int pydispatch_ensure_setup(pith_module_state *st)
{
    if (st->dispatch.spec_fn)
        return 0;
    /* Another instance of pith._C (a second import) than the one pith.utils set up. */
    PyObject *utils = PyImport_ImportModule("pith.utils");
    PyObject *helpers = utils ? PyObject_GetAttrString(utils, "_setup_args") : NULL;
    Py_XDECREF(utils);
    if (!helpers)
        return -1;
    int rc = 0;
    if (!st->dispatch.spec_fn) {
        if (!PyTuple_Check(helpers) || PyTuple_GET_SIZE(helpers) != 2) {
            PyErr_SetString(PyExc_RuntimeError, "pith.utils._setup_args is not a 2-tuple");
            rc = -1;
        } else {
            rc = setup_with(st, PyTuple_GET_ITEM(helpers, 0), PyTuple_GET_ITEM(helpers, 1));
        }
    }
    Py_DECREF(helpers);
    return rc;
}

int pydispatch_traverse(pith_module_state *st, visitproc visit, void *arg)
{
    Py_VISIT(st->dispatch.specs);
    Py_VISIT(st->dispatch.spec_fn);
    Py_VISIT(st->dispatch.no_default);
    return 0;
}

void pydispatch_clear(pith_module_state *st)
{
    Py_CLEAR(st->dispatch.specs);
    Py_CLEAR(st->dispatch.spec_fn);
    Py_CLEAR(st->dispatch.no_default);
    Py_CLEAR(st->dispatch.name);
    Py_CLEAR(st->dispatch.modes_key);
}

static pith_module_state *setup_state(PyObject *module)
{
    pith_module_state *st = state_of_module(module);
    return pydispatch_ensure_setup(st) < 0 ? NULL : st;
}

/* _push_dispatch_mode(mode) */
static PyObject *push_dispatch_mode(PyObject *module, PyObject *mode)
{
    pith_module_state *st = setup_state(module);
    PyObject *modes = st ? modes_of_thread(st, true) : NULL;
    if (!modes)
        return NULL;
    if (!PyObject_HasAttr(mode, st->dispatch.name)) {
        PyErr_Format(PyExc_TypeError, "a dispatch mode must define __pith_dispatch__; "
                     "%.200s does not", Py_TYPE(mode)->tp_name);
        return NULL;
    }
    if (PyList_Append(modes, mode) < 0)
        return NULL;
    modes_sync(st, modes);
    Py_RETURN_NONE;
}

/* _pop_dispatch_mode(mode): removes the innermost entry of `mode`. */
static PyObject *pop_dispatch_mode(PyObject *module, PyObject *mode)
{
    pith_module_state *st = setup_state(module);
    PyObject *modes = st ? modes_of_thread(st, true) : NULL;
    if (!modes)
        return NULL;
    Py_ssize_t i = PyList_GET_SIZE(modes) - 1;
    while (i >= 0 && PyList_GET_ITEM(modes, i) != mode)
        i--;
    int rc = i >= 0 ? PyList_SetSlice(modes, i, i + 1, NULL) : 0;
    modes_sync(st, modes);
    if (rc < 0)
        return NULL;
    if (i < 0) {
        PyErr_Format(PyExc_RuntimeError, "the dispatch mode %R is not active on this thread",
                     mode);
        return NULL;
    }
    if (i != PyList_GET_SIZE(modes)) {
        PyErr_Format(PyExc_RuntimeError, "the dispatch mode %R was exited before the modes "
                     "entered after it", mode);
        return NULL;
    }
    Py_RETURN_NONE;
}

/* _dispatch_mode_stack() -> a copy of this thread's modes, innermost last. */
static PyObject *dispatch_mode_stack(PyObject *module, PyObject *unused)
{
    pith_module_state *st = setup_state(module);
    PyObject *modes = st ? modes_of_thread(st, true) : NULL;
    return modes ? PyList_GetSlice(modes, 0, PyList_GET_SIZE(modes)) : NULL;
}

/* _exclude_dispatch() -> saved: excludes Python and PythonMode (no_dispatch). */
static PyObject *exclude_dispatch(PyObject *module, PyObject *unused)
{
    if (!setup_state(module))
        return NULL;
    uint64_t bits = pydispatch_bit_python() | pydispatch_bit_mode();
    pith_keys_guard g = pith_keys_current();
    keys_set(g.included, g.excluded | bits);
    return PyLong_FromUnsignedLongLong(g.excluded & bits);
}

/* _restore_dispatch(saved): puts back the two exclusions that _exclude_dispatch saved. */
static PyObject *restore_dispatch(PyObject *module, PyObject *saved)
{
    unsigned long long was = PyLong_AsUnsignedLongLong(saved);
    if (PyErr_Occurred())
        return NULL;
    uint64_t bits = pydispatch_bit_python() | pydispatch_bit_mode();
    pith_keys_guard g = pith_keys_current();
    keys_set(g.included, (g.excluded & ~bits) | (was & bits));
    Py_RETURN_NONE;
}

/* _mode_active() -> bool, for tests of the thread-local keys. */
static PyObject *mode_active(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(pydispatch_mode_active());
}

PyMethodDef pydispatch_module_methods[] = {
    {"_pydispatch_setup", pydispatch_setup, METH_VARARGS,
     "_pydispatch_setup(spec_fn, no_default): called by pith.utils."},
    {"_push_dispatch_mode", push_dispatch_mode, METH_O, "Enters a dispatch mode."},
    {"_pop_dispatch_mode", pop_dispatch_mode, METH_O, "Exits a dispatch mode."},
    {"_dispatch_mode_stack", dispatch_mode_stack, METH_NOARGS,
     "This thread's dispatch modes, innermost last."},
    {"_exclude_dispatch", exclude_dispatch, METH_NOARGS,
     "Excludes the Python and PythonMode keys; returns what to restore."},
    {"_restore_dispatch", restore_dispatch, METH_O, "Undoes _exclude_dispatch."},
    {"_mode_active", mode_active, METH_NOARGS,
     "Whether the PythonMode key is in effect on this thread."},
    PYDISPATCH_LIBRARY_METHODS
    {NULL},
};
