/* autograd_graph.c — the bindings of pith.autograd.graph.saved_tensors_hooks and of anomaly
 * detection (pith.autograd.detect_anomaly): the C hooks of <pith/autograd.h> that call
 * Python. The Python-facing classes are in pith/autograd/graph.py and anomaly_mode.py. */
#include "state.h"

#include "pydispatch.h"

/* ---- saved-tensor hooks ---- */

/* Note [Python saved tensor hooks]
 * A pushed pair (py_saved_pair) holds pack and unpack for the interpreter that pushed it;
 * what pack returns becomes a py_packed, which stands alone (Note [Saved tensor hooks],
 * autograd/saved_hooks.c): the object, the unpack hook, and their interpreter. Both are
 * called and released only through that interpreter's table (interp_call_python,
 * interp_release_object), so a graph that outlives its interpreter leaks the objects and
 * fails to unpack with PITH_ERR_INTERPRETER instead of touching a dead interpreter. An
 * exception raised by a hook reaches the caller as itself (error_keep). */
typedef struct {
    PyObject *pack, *unpack;
    pith_interpreter *interp;
    pith_module_state *st;
} py_saved_pair;

typedef struct {
    PyObject *obj, *unpack;
    pith_interpreter *interp;
    pith_module_state *st;
} py_packed;

typedef struct {
    py_saved_pair *pair;
    pith_tensor *t;
    void **packed;
} pack_call;

static pith_status pack_body(void *arg)
{
    pack_call *c = arg;
    py_packed *p = PyMem_RawMalloc(sizeof *p);
    if (!p) {
        PyErr_NoMemory();
        return error_keep();
    }
    pith_retain(c->t);
    PyObject *t = tensor_wrap(c->pair->st, c->t);
    PyObject *obj = t ? PyObject_CallOneArg(c->pair->pack, t) : NULL;
    Py_XDECREF(t);
    if (!obj) {
        PyMem_RawFree(p);
        return error_keep();
    }
    *p = (py_packed){obj, Py_NewRef(c->pair->unpack), c->pair->interp, c->pair->st};
    *c->packed = p;
    return PITH_OK;
}

static pith_status py_pack(void *ctx, pith_tensor *t, void **packed)
{
    pack_call call = {ctx, t, packed};
    return interp_call_python(((py_saved_pair *)ctx)->interp, pack_body, &call);
}

typedef struct {
    py_packed *p;
    pith_tensor **out;
} unpack_call;

static pith_status unpack_body(void *arg)
{
    unpack_call *c = arg;
    PyObject *result = PyObject_CallOneArg(c->p->unpack, c->p->obj);
    if (result && !tensor_check(c->p->st, result)) {
        PyErr_Format(PyExc_TypeError,
                     "Output of saved tensor unpack_hook expected to be a Tensor but got result "
                     "of type %s",
                     Py_TYPE(result)->tp_name);
        Py_CLEAR(result);
    }
    if (!result)
        return error_keep();
    pith_retain(tensor_of(result));
    *c->out = tensor_of(result);
    Py_DECREF(result);
    return PITH_OK;
}

static pith_status py_unpack(void *packed, pith_tensor **out)
{
    unpack_call call = {packed, out};
    return interp_call_python(((py_packed *)packed)->interp, unpack_body, &call);
}

static void py_packed_release(void *packed)
{
    py_packed *p = packed;
    interp_release_object(p->interp, p->obj);
    interp_release_object(p->interp, p->unpack);
    PyMem_RawFree(p);
}

static const pith_saved_tensors_hooks py_saved_hooks = {py_pack, py_unpack, py_packed_release};

static void py_saved_pair_release(void *ctx)
{
    py_saved_pair *pair = ctx;
    interp_release_object(pair->interp, pair->pack);
    interp_release_object(pair->interp, pair->unpack);
    PyMem_RawFree(pair);
}

/* _saved_tensors_hooks_push(pack, unpack) */
static PyObject *module_saved_push(PyObject *module, PyObject *args)
{
    pith_module_state *st = state_of_module(module);
    PyObject *pack, *unpack;
    if (!PyArg_ParseTuple(args, "OO:_saved_tensors_hooks_push", &pack, &unpack))
        return NULL;
    py_saved_pair *pair = PyMem_RawMalloc(sizeof *pair);
    if (!pair)
        return PyErr_NoMemory();
    *pair = (py_saved_pair){Py_NewRef(pack), Py_NewRef(unpack), st->interp, st};
    if (pith_saved_tensors_hooks_push(&py_saved_hooks, pair, py_saved_pair_release) != PITH_OK) {
        Py_DECREF(pair->pack);
        Py_DECREF(pair->unpack);
        PyMem_RawFree(pair);
        return error_raise(st);
    }
    Py_RETURN_NONE;
}

static PyObject *module_saved_pop(PyObject *module, PyObject *unused)
{
    if (pith_saved_tensors_hooks_pop() != PITH_OK)
        return error_raise(state_of_module(module));
    Py_RETURN_NONE;
}

/* _saved_tensors_hooks_disable(message or None) */
static PyObject *module_saved_disable(PyObject *module, PyObject *message)
{
    const char *text = NULL;
    if (message != Py_None && !(text = PyUnicode_AsUTF8(message)))
        return NULL;
    if (pith_saved_tensors_hooks_disable(text) != PITH_OK)
        return error_raise(state_of_module(module));
    Py_RETURN_NONE;
}

static PyObject *module_saved_disabled_message(PyObject *module, PyObject *unused)
{
    const char *text = pith_saved_tensors_hooks_disabled_message();
    return text ? PyUnicode_FromString(text) : Py_NewRef(Py_None);
}

/* ---- anomaly detection ---- */

/* Note [Python anomaly records]
 * In anomaly mode a node keeps, as PyTorch's does, the traceback of the forward call that
 * made it: traceback.format_stack() joined into one string and copied into raw memory, so
 * that the record belongs to no interpreter and freeing it never enters Python. A node made
 * on a thread with no Python thread state of its own keeps none; a backward that released
 * the GIL (Note [The engine's threads and the GIL]) records and reports on the state it
 * released. A failing node's record is reported as PyTorch's warning ("Error detected in X.
 * Traceback of forward call that caused the error:") on the thread that runs backward when
 * it has Python, else on stderr. */
static void anomaly_record_here(void *out)
{
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    char *copy = NULL;
    PyObject *module = PyImport_ImportModule("traceback");
    PyObject *frames = module ? PyObject_CallMethod(module, "format_stack", NULL) : NULL;
    PyObject *empty = frames ? PyUnicode_FromString("") : NULL;
    PyObject *text = empty ? PyUnicode_Join(empty, frames) : NULL;
    Py_ssize_t size;
    const char *utf8 = text ? PyUnicode_AsUTF8AndSize(text, &size) : NULL;
    if (utf8 && (copy = PyMem_RawMalloc((size_t)size + 1)))
        memcpy(copy, utf8, (size_t)size + 1);
    Py_XDECREF(text);
    Py_XDECREF(empty);
    Py_XDECREF(frames);
    Py_XDECREF(module);
    PyErr_Clear(); /* a record is best effort */
    PyErr_Restore(type, value, tb);
    *(char **)out = copy;
}

static void *anomaly_record(void)
{
    char *copy = NULL;
    if (interp_thread_has_python())
        anomaly_record_here(&copy);
    else /* a node made by a create_graph backward, which released the GIL */
        interp_on_released_state(anomaly_record_here, &copy);
    return copy;
}

typedef struct {
    const char *record;
    const char *node_name;
} anomaly_report_call;

static const char anomaly_format[] =
    "Error detected in %s. Traceback of forward call that caused the error:\n%s";

static void anomaly_warn(void *arg)
{
    const anomaly_report_call *c = arg;
    PyObject *type, *value, *tb;
    PyErr_Fetch(&type, &value, &tb);
    if (PyErr_WarnFormat(PyExc_UserWarning, 1, anomaly_format, c->node_name, c->record) < 0)
        PyErr_WriteUnraisable(NULL); /* a warning filter turned it into an error */
    PyErr_Restore(type, value, tb);
}

/* On the thread running backward: its own thread state (held, or released by the backward:
 * case 0 of Note [Entering an interpreter from C]), else stderr. */
static void anomaly_report(void *record, const char *node_name)
{
    anomaly_report_call call = {record, node_name};
    if (interp_thread_has_python())
        anomaly_warn(&call);
    else if (!interp_on_released_state(anomaly_warn, &call))
        fprintf(stderr, anomaly_format, node_name, (const char *)record);
}

static const pith_anomaly_hooks py_anomaly_hooks = {anomaly_record, anomaly_report,
                                                    PyMem_RawFree};

/* _set_detect_anomaly(mode, check_nan) */
static PyObject *module_set_detect_anomaly(PyObject *module, PyObject *args)
{
    int mode, check_nan = 1;
    if (!PyArg_ParseTuple(args, "p|p:_set_detect_anomaly", &mode, &check_nan))
        return NULL;
    pith_set_detect_anomaly(mode, check_nan);
    Py_RETURN_NONE;
}

static PyObject *module_is_anomaly_enabled(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(pith_is_anomaly_enabled());
}

static PyObject *module_is_anomaly_check_nan_enabled(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(pith_is_anomaly_check_nan_enabled());
}

static PyMethodDef graph_module_methods[] = {
    {"_saved_tensors_hooks_push", module_saved_push, METH_VARARGS,
     "_saved_tensors_hooks_push(pack, unpack): pushes saved-tensor hooks on this thread."},
    {"_saved_tensors_hooks_pop", module_saved_pop, METH_NOARGS,
     "_saved_tensors_hooks_pop(): pops this thread's innermost saved-tensor hooks."},
    {"_saved_tensors_hooks_disable", module_saved_disable, METH_O,
     "_saved_tensors_hooks_disable(message or None): disables (or enables) pushing."},
    {"_saved_tensors_hooks_disabled_message", module_saved_disabled_message, METH_NOARGS,
     "The message pushing fails with on this thread, or None."},
    {"_set_detect_anomaly", module_set_detect_anomaly, METH_VARARGS,
     "_set_detect_anomaly(mode, check_nan=True): anomaly detection on or off."},
    {"_is_anomaly_enabled", module_is_anomaly_enabled, METH_NOARGS,
     "Whether anomaly detection is on."},
    {"_is_anomaly_check_nan_enabled", module_is_anomaly_check_nan_enabled, METH_NOARGS,
     "Whether anomaly detection checks for NaN gradients."},
    {NULL, NULL, 0, NULL},
};

int autograd_graph_init(PyObject *module, pith_module_state *st)
{
    pith_set_anomaly_hooks(&py_anomaly_hooks);
    return PyModule_AddFunctions(module, graph_module_methods);
}
