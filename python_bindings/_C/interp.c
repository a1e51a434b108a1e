/* interp.c — this interpreter's pith_interpreter table: its registration, its capsule in
 * the interpreter's dict, and the vtable entries that exist so far. */
#include <inttypes.h>

#include "state.h"

/* Note [One interpreter table per interpreter]
 * libpith keeps one pith_interpreter per Python interpreter; it tags tensors with it and
 * calls back into Python only through it. The table is registered the first time any
 * instance of pith._C executes in an interpreter and is kept in a capsule in that
 * interpreter's dict (PyInterpreterState_GetDict) under INTERP_CAPSULE_KEY, so importing
 * twice, reloading, or a second module instance all find the same table. The table is never
 * freed (the library may still hold tensors tagged with it); its name records the
 * interpreter ID, because CPython reuses PyInterpreterState pointers but not IDs.
 * The capsule dies with the interpreter dict at teardown, and its destructor disarms the
 * table (phase 2 of Note [Interpreter disarm], core/interpreter.c). Phase 1, the atexit
 * callback that closes the gate and waits for in-flight calls, belongs with the calls from
 * foreign threads (the thread-state cases of ARCHITECTURE.md), which are not written yet:
 * today every entry is called on a thread that already holds this interpreter's GIL. The
 * table is never disarmed from the module's m_free: another module instance of the same
 * interpreter may still use it. `ctx` is the PyInterpreterState, for creating thread states
 * of this interpreter later. */
#define INTERP_CAPSULE_KEY "pith._C.interpreter"
#define INTERP_CAPSULE_NAME "pith._C.interpreter"

/* The caller holds this interpreter's GIL on a thread state of this interpreter: the only
 * caller today is pith_release of a tensor whose wrapper C owns, and C owns a wrapper only
 * once preservation exists. Taking the right thread state from any thread comes with it. */
static void interp_decref(const pith_interpreter *interp, void *pyobj)
{
    Py_DECREF((PyObject *)pyobj);
}

static pith_status interp_not_yet(const pith_interpreter *interp, const char *entry)
{
    return pith_set_error(PITH_ERR_NOT_IMPLEMENTED,
                          "interpreter %s: %s is not implemented yet (it needs "
                          "__pith_dispatch__ subclasses)",
                          pith_interpreter_name(interp), entry);
}

static pith_status interp_detach(const pith_interpreter *interp, const pith_tensor *self,
                                 pith_tensor **out)
{
    *out = NULL;
    return interp_not_yet(interp, "detach through Python");
}

static pith_status interp_dispatch(const pith_interpreter *interp, const pith_op *op,
                                   pith_stack *stack)
{
    return interp_not_yet(interp, "__pith_dispatch__");
}

static pith_status interp_is_contiguous(const pith_interpreter *interp, const pith_tensor *self,
                                        bool *out)
{
    return interp_not_yet(interp, "is_contiguous through Python");
}

static pith_status interp_device(const pith_interpreter *interp, const pith_tensor *self,
                                 pith_device *out)
{
    return interp_not_yet(interp, "device through Python");
}

static pith_status interp_sizes(const pith_interpreter *interp, const pith_tensor *self,
                                int *ndim, int64_t *sizes)
{
    return interp_not_yet(interp, "sizes through Python");
}

static pith_status interp_strides(const pith_interpreter *interp, const pith_tensor *self,
                                  int *ndim, int64_t *strides)
{
    return interp_not_yet(interp, "strides through Python");
}

static const pith_interpreter_vtable interp_vtable = {
    .decref = interp_decref,
    .detach = interp_detach,
    .dispatch = interp_dispatch,
    .is_contiguous = interp_is_contiguous,
    .device = interp_device,
    .sizes = interp_sizes,
    .strides = interp_strides,
};

static void interp_capsule_destroy(PyObject *capsule)
{
    pith_interpreter *interp = PyCapsule_GetPointer(capsule, INTERP_CAPSULE_NAME);
    if (interp)
        pith_interpreter_disarm(interp);
    else
        PyErr_Clear();
}

/* Finds or registers this interpreter's table. */
int interp_init(pith_module_state *st)
{
    PyInterpreterState *is = PyInterpreterState_Get();
    PyObject *dict = PyInterpreterState_GetDict(is);
    if (!dict) {
        PyErr_SetString(PyExc_RuntimeError, "pith: the interpreter has no dict");
        return -1;
    }
    PyObject *capsule = PyDict_GetItemString(dict, INTERP_CAPSULE_KEY); /* borrowed */
    if (capsule) {
        st->interp = PyCapsule_GetPointer(capsule, INTERP_CAPSULE_NAME);
        return st->interp ? 0 : -1;
    }
    char name[64];
    snprintf(name, sizeof name, "%" PRId64, PyInterpreterState_GetID(is));
    pith_interpreter *interp = pith_interpreter_register(name, &interp_vtable, is);
    if (!interp) {
        PyErr_SetString(PyExc_RuntimeError, pith_last_error());
        return -1;
    }
    capsule = PyCapsule_New(interp, INTERP_CAPSULE_NAME, interp_capsule_destroy);
    if (!capsule)
        return -1; /* the table leaks, as every table does: never freed */
    int rc = PyDict_SetItemString(dict, INTERP_CAPSULE_KEY, capsule);
    Py_DECREF(capsule);
    if (rc < 0)
        return -1;
    st->interp = interp;
    return 0;
}
