/* interp.c — this interpreter's pith_interpreter table: its registration, its capsule in
 * the interpreter's dict, the two phases of its teardown, and the vtable entries, each of
 * which enters this interpreter from whatever thread C calls it on. What the entries do
 * inside the interpreter is python_dispatch.c's. */
#include <inttypes.h>

#include "state.h"

#if PY_VERSION_HEX >= 0x030D0000
#define thread_state_unchecked() PyThreadState_GetUnchecked()
#else
#define thread_state_unchecked() _PyThreadState_UncheckedGet()
#endif

/* Note [One interpreter table per interpreter]
 * libpith keeps one pith_interpreter per Python interpreter; it tags tensors with it and
 * calls back into Python only through it. The table is registered the first time any
 * instance of pith._C executes in an interpreter and is kept in a capsule in that
 * interpreter's dict (PyInterpreterState_GetDict) under INTERP_CAPSULE_KEY, so importing
 * twice, reloading, or a second module instance all find the same table. The table is never
 * freed (the library may still hold tensors tagged with it); its name records the
 * interpreter ID, because CPython reuses PyInterpreterState pointers but not IDs. Its ctx
 * is an interp_ctx (the PyInterpreterState, to make thread states of it, and the ID, to tell
 * it from a later interpreter at the same address), never freed either. The table is never
 * disarmed from the module's m_free: See Note [Interpreter teardown]. */
#define INTERP_CAPSULE_KEY "pith._C.interpreter"
#define INTERP_CAPSULE_NAME "pith._C.interpreter"

typedef struct {
    PyInterpreterState *state;
    int64_t id;
} interp_ctx;

/* ---- entering the owning interpreter ---- */

/* Note [Entering an interpreter from C]
 * Every vtable entry below is called by libpith on whatever thread drops, dispatches or
 * queries a tensor: a thread of this interpreter, a thread running another interpreter, or
 * a bare C thread with no Python at all. interp_enter looks at the current thread state:
 *  0. this thread released the GIL through interp_gil_release (around a backward: See Note
 *     [The engine's threads and the GIL], autograd/engine.c), and the state it released
 *     belongs to the owner: PyEval_RestoreThread that very state, and PyEval_SaveThread it
 *     again afterwards. The thread stays the Python thread it was, with its thread-state
 *     dict: its dispatch modes (Note [Dispatch modes live in the thread state]), a
 *     handler's kept exception (Note [Handler exceptions cross C]), threading.local data.
 *     The released state is kept in a C thread-local, so nothing of Python is read without
 *     the GIL; while it is restored the record is empty, so calls made inside are case 1.
 *     A released state of another interpreter makes the call case 3, without reading the
 *     GIL holder's state;
 *  1. it belongs to the owner (same PyInterpreterState and same ID): call directly;
 *  2. it belongs to another interpreter: PyThreadState_Swap to a temporary thread state of
 *     the owner, and back afterwards (3.11 has one GIL for all interpreters, which this
 *     thread already holds);
 *  3. there is none: create a thread state of the owner and PyEval_RestoreThread it (this
 *     takes the GIL); afterwards PyThreadState_Clear + PyThreadState_DeleteCurrent.
 * Never PyGILState_*: on 3.11 it knows only the main interpreter. Never a cached thread
 * state: a leftover one makes Py_EndInterpreter fatal ("not the last thread"), so every
 * temporary one is deleted before interp_leave returns.
 * Each entry is counted in flight with pith_interpreter_enter(interp, own_thread), own_thread
 * in case 1 only, BEFORE any thread state of the owner is made: once teardown closed the
 * gate (See Note [Interpreter teardown]) cases 2 and 3 are refused and the interpreter is
 * never touched — decref leaks, the other entries fail with PITH_ERR_INTERPRETER — while
 * the interpreter's own __del__ and weakref callbacks (case 1) still get in.
 * No Python exception crosses back into C: each entry turns one into the C error
 * (error_from_python), and a caller's pending exception (case 1) is kept aside meanwhile.
 * On 3.11, _PyThreadState_UncheckedGet is the thread state that holds the GIL, whichever OS
 * thread that is, so "the current thread state" is that one only when its thread_id is this
 * thread's. Reading the holder's thread_id from a thread without the GIL would race with
 * the holder deleting that state (a read of freed memory, which ASan reports), so the
 * holder is only read when this OS thread has a thread state of its own
 * (PyGILState_GetThisThreadState: the first thread state made on this thread, whichever
 * interpreter's; a lookup of this thread's own storage, no Python state read): a thread
 * that never made one — every foreign C thread releasing tensors — is case 3 without
 * touching the holder. A thread with a state of its own that is the holder is case 1 or 2
 * by a pointer comparison; only a thread that holds another state of its own (after a
 * PyThreadState_Swap to another interpreter's state, as embedders do) reads the holder's
 * thread_id, and then it is this thread's own state or a state this thread does not hold
 * (3.12 has a thread-local current state instead). A thread state used on an OS thread
 * other than the one that made it is not recognised and would be taken for case 3, which
 * would wait for the GIL this thread holds: embedders must not call into pith from such a
 * thread state, nor from a thread whose first thread state was deleted while a later one
 * still holds the GIL. */
typedef struct {
    PyThreadState *restored; /* case 0: this thread's own state, released by a pith call */
    PyThreadState *temp;  /* cases 2 and 3: the owner's temporary thread state */
    PyThreadState *saved; /* case 2: the other interpreter's, swapped back afterwards */
    PyObject *exc_type, *exc_value, *exc_tb; /* case 1: the caller's pending exception */
} interp_entry;

/* Case 0: the state this thread released in interp_gil_release, while released. */
static _Thread_local PyThreadState *released_state;

PyThreadState *interp_gil_release(void)
{
    PyThreadState *outer = released_state;
    released_state = PyEval_SaveThread();
    return outer;
}

void interp_gil_restore(PyThreadState *outer)
{
    PyThreadState *mine = released_state;
    released_state = outer;
    PyEval_RestoreThread(mine);
}

/* The thread state through which this OS thread holds the GIL, or NULL. */
static PyThreadState *thread_state_current(void)
{
    PyThreadState *own = PyGILState_GetThisThreadState();
    if (!own)
        return NULL; /* this thread has no thread state: it cannot hold the GIL */
    PyThreadState *ts = thread_state_unchecked();
    if (!ts || ts == own)
        return ts;
    return ts->thread_id == PyThread_get_thread_ident() ? ts : NULL;
}

static bool thread_state_is_of(PyThreadState *ts, const interp_ctx *ctx)
{
    PyInterpreterState *is = PyThreadState_GetInterpreter(ts);
    return is == ctx->state && PyInterpreterState_GetID(is) == ctx->id;
}

/* Enters `interp` (See Note [Entering an interpreter from C]). Returns false, with
 * PITH_ERR_INTERPRETER (or PITH_ERR_NOMEM) set, when refused; then nothing is to undo.
 * `quiet` keeps the caller's C error as it was when refused (decref, which cannot fail). */
static bool interp_enter(const pith_interpreter *interp, interp_entry *e, bool quiet)
{
    const interp_ctx *ctx = pith_interpreter_ctx(interp);
    PyThreadState *released = released_state;
    PyThreadState *current = released ? NULL : thread_state_current();
    *e = (interp_entry){NULL, NULL, NULL, NULL, NULL, NULL};
    if (current && thread_state_is_of(current, ctx)) {
        pith_interpreter_enter(interp, true); /* never refused */
        PyErr_Fetch(&e->exc_type, &e->exc_value, &e->exc_tb);
        return true;
    }
    if (quiet) {
        pith_status status = pith_last_status();
        char message[1024];
        snprintf(message, sizeof message, "%s", pith_last_error());
        if (!pith_interpreter_enter(interp, false)) {
            if (status == PITH_OK)
                pith_clear_error();
            else
                pith_set_error(status, "%s", message);
            return false;
        }
    } else if (!pith_interpreter_enter(interp, false)) {
        return false;
    }
    if (released && thread_state_is_of(released, ctx)) {
        e->restored = released;
        released_state = NULL;
        PyEval_RestoreThread(released);
        return true;
    }
    e->temp = PyThreadState_New(ctx->state);
    if (!e->temp) {
        pith_interpreter_leave(interp);
        if (!quiet)
            pith_set_error(PITH_ERR_NOMEM, "interpreter %s: no memory for a thread state",
                           pith_interpreter_name(interp));
        return false;
    }
    if (current)
        e->saved = PyThreadState_Swap(e->temp);
    else
        PyEval_RestoreThread(e->temp);
    return true;
}

static void interp_leave(const pith_interpreter *interp, interp_entry *e)
{
    if (e->restored) {
        PyErr_Clear();
        released_state = PyEval_SaveThread();
    } else if (!e->temp) {
        PyErr_Restore(e->exc_type, e->exc_value, e->exc_tb);
    } else {
        PyErr_Clear();
        PyThreadState_Clear(e->temp); /* while current: it may run Python (its dict) */
        if (e->saved) {
            PyThreadState_Swap(e->saved);
            PyThreadState_Delete(e->temp);
        } else {
            PyThreadState_DeleteCurrent(); /* and releases the GIL */
        }
    }
    pith_interpreter_leave(interp);
}

/* Turns a pending Python exception into the C error and clears it; returns the status to
 * report (the entry's own when it failed, else PITH_ERR_RUNTIME). A safety net: the
 * pydispatch_* functions convert their exceptions themselves, by type (python_dispatch.c). */
static pith_status error_from_python(pith_status status)
{
    if (!PyErr_Occurred())
        return status;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    PyErr_NormalizeException(&type, &value, &tb);
    if (status == PITH_OK)
        status = PITH_ERR_RUNTIME;
    PyObject *text = value ? PyObject_Str(value) : NULL;
    const char *message = text ? PyUnicode_AsUTF8(text) : NULL;
    if (!message || !message[0]) {
        PyErr_Clear();
        message = PyType_Check(type) ? ((PyTypeObject *)type)->tp_name : "Python exception";
    }
    pith_set_error(status, "%s", message);
    Py_XDECREF(text);
    Py_XDECREF(type);
    Py_XDECREF(value);
    Py_XDECREF(tb);
    return status;
}

/* ---- the vtable ---- */

/* Must not fail: refused (the owner is shutting down) it leaks the object. */
static void interp_decref(const pith_interpreter *interp, void *pyobj)
{
    interp_entry e;
    if (!interp_enter(interp, &e, true))
        return;
    /* In case 1 a caller's exception may be pending (a dealloc during unwinding):
     * interp_enter put it aside. */
    tensor_decref_from_c((PyObject *)pyobj); /* See Note [PyObject preservation in the bindings] */
    interp_leave(interp, &e);
}

/* Enters, evaluates CALL (a pydispatch_* call, a pith_status), converts any Python
 * exception, leaves. */
#define INTERP_CALL(interp, call)                                                           \
    do {                                                                                    \
        interp_entry e_;                                                                    \
        if (!interp_enter(interp, &e_, false))                                              \
            return pith_last_status();                                                      \
        pith_status s_ = error_from_python(call);                                           \
        interp_leave(interp, &e_);                                                          \
        return s_;                                                                          \
    } while (0)

static pith_status interp_detach(const pith_interpreter *interp, const pith_tensor *self,
                                 pith_tensor **out)
{
    *out = NULL;
    INTERP_CALL(interp, pydispatch_detach(self, out));
}

static pith_status interp_dispatch(const pith_interpreter *interp, const pith_op *op,
                                   pith_stack *stack)
{
    INTERP_CALL(interp, pydispatch_dispatch(op, stack));
}

static pith_status interp_is_contiguous(const pith_interpreter *interp, const pith_tensor *self,
                                        bool *out)
{
    INTERP_CALL(interp, pydispatch_is_contiguous(self, out));
}

static pith_status interp_device(const pith_interpreter *interp, const pith_tensor *self,
                                 pith_device *out)
{
    INTERP_CALL(interp, pydispatch_device(self, out));
}

static pith_status interp_sizes(const pith_interpreter *interp, const pith_tensor *self,
                                int *ndim, int64_t *sizes)
{
    INTERP_CALL(interp, pydispatch_sizes(self, ndim, sizes));
}

static pith_status interp_strides(const pith_interpreter *interp, const pith_tensor *self,
                                  int *ndim, int64_t *strides)
{
    INTERP_CALL(interp, pydispatch_strides(self, ndim, strides));
}

pith_status interp_call_python(const pith_interpreter *interp, pith_status (*fn)(void *arg),
                               void *arg)
{
    INTERP_CALL(interp, fn(arg));
}

void interp_release_object(const pith_interpreter *interp, PyObject *obj)
{
    interp_decref(interp, obj);
}

bool interp_thread_has_python(void)
{
    return thread_state_current() != NULL;
}

bool interp_on_released_state(void (*fn)(void *arg), void *arg)
{
    PyThreadState *released = released_state;
    if (!released || thread_state_current())
        return false;
    released_state = NULL; /* case 0 of Note [Entering an interpreter from C] */
    PyEval_RestoreThread(released);
    fn(arg);
    released_state = PyEval_SaveThread();
    return true;
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

/* ---- teardown ---- */

/* Note [Interpreter teardown]
 * The bindings' half of Note [Interpreter disarm] (core/interpreter.c). Both phases hang
 * off the interpreter itself, never off a module instance:
 *  1. interp_init registers interp_atexit with the interpreter's `atexit` module when it
 *     makes the table (3.11 has no per-interpreter atexit in C). Py_EndInterpreter and
 *     Py_FinalizeEx call it after joining the threading module's threads and before any
 *     module is torn down. It closes the gate, so foreign threads (cases 2 and 3 of Note
 *     [Entering an interpreter from C]) are refused from now on, then waits with the GIL
 *     released until the calls in flight drain: a foreign thread already inside needs
 *     this GIL to finish, and its temporary thread state must be gone before
 *     Py_EndInterpreter checks that it is the last one.
 *  2. The capsule's destructor runs when the interpreter's dict is cleared, late in
 *     teardown; it swaps in the no-ops. From then on decref leaks and every other entry
 *     fails with "...interpreter N was finalised", whatever thread calls.
 * Between the two, the interpreter's own thread still gets in (its __del__ and weakref
 * callbacks during module teardown). Never from m_free: a wrapper that C owns keeps its
 * heap type, hence its module, alive past the interpreter (so m_free may never run), and
 * another module instance of the interpreter may still use the table. */
static PyObject *interp_atexit(PyObject *capsule, PyObject *unused)
{
    pith_interpreter *interp = PyCapsule_GetPointer(capsule, INTERP_CAPSULE_NAME);
    if (!interp)
        return NULL;
    pith_interpreter_close_gate(interp);
    Py_BEGIN_ALLOW_THREADS
    pith_interpreter_wait_drained(interp);
    Py_END_ALLOW_THREADS
    Py_RETURN_NONE;
}

/* Constant C data shared by every interpreter; each gets its own function object. */
static PyMethodDef interp_atexit_def = {
    "_pith_interpreter_atexit", interp_atexit, METH_NOARGS,
    "Closes pith's interpreter table to other threads and waits for their calls "
    "(See Note [Interpreter teardown])."};

static int interp_register_atexit(PyObject *capsule)
{
    PyObject *atexit = PyImport_ImportModule("atexit");
    if (!atexit)
        return -1;
    PyObject *fn = PyCFunction_New(&interp_atexit_def, capsule);
    PyObject *rc = fn ? PyObject_CallMethod(atexit, "register", "O", fn) : NULL;
    Py_XDECREF(fn);
    Py_DECREF(atexit);
    if (!rc)
        return -1;
    Py_DECREF(rc);
    return 0;
}

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
    interp_ctx *ctx = malloc(sizeof *ctx); /* never freed, as the table it belongs to */
    if (!ctx) {
        PyErr_NoMemory();
        return -1;
    }
    *ctx = (interp_ctx){is, PyInterpreterState_GetID(is)};
    char name[64];
    snprintf(name, sizeof name, "%" PRId64, ctx->id);
    pith_interpreter *interp = pith_interpreter_register(name, &interp_vtable, ctx);
    if (!interp) {
        free(ctx);
        PyErr_SetString(PyExc_RuntimeError, pith_last_error());
        return -1;
    }
    /* From here on the table and its ctx leak on failure, as every table does. */
    capsule = PyCapsule_New(interp, INTERP_CAPSULE_NAME, interp_capsule_destroy);
    if (!capsule)
        return -1;
    int rc = interp_register_atexit(capsule);
    if (rc == 0)
        rc = PyDict_SetItemString(dict, INTERP_CAPSULE_KEY, capsule);
    Py_DECREF(capsule);
    if (rc < 0)
        return -1;
    st->interp = interp;
    return 0;
}
