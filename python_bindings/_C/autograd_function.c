/* autograd_function.c — the C half of pith.autograd.Function (pith/autograd/function.py):
 * _function_record turns a forward's outputs into the outputs of a custom function node
 * (pith_function_record, autograd/function.c) whose backward calls the ctx object's
 * _pith_backward, and _function_saved_tensors unpacks what it saved. */
#include "state.h"

/* Note [Python Function objects]
 * The ctx of a Python Function (an instance of <Name>Backward, a subclass of _C._Node) is
 * the node's Python object, as in PyTorch: y.grad_fn is ctx.
 *  - The node owns the ctx (a strong reference, released through the ctx's interpreter
 *    when the node is freed); the ctx points at its node without owning it (o->node,
 *    borrowed), as PyTorch's THPFunction holds a weak pointer to its PyNode, so that the
 *    pair is no cycle: the ctx lives exactly as long as the graph holds the node. The
 *    node's release clears o->node first, so a ctx that outlives its node (a user kept
 *    it) raises PyTorch's "invalid for this instance" error instead of reading a freed
 *    node. The node's PyObject slot holds the ctx, so grad_fn finds it.
 *  - Saved tensors live in the node (ag_saved, with their versions), not in the ctx: an
 *    output saved by the ctx would otherwise hold its own graph through C, a cycle the
 *    collector cannot see.
 *  - The ctx belongs to the interpreter that ran forward. backward calls it through that
 *    interpreter (interp_call_python): from another interpreter, or after it ended (its
 *    table disarmed), the call fails with PITH_ERR_INTERPRETER and a clear message,
 *    never touching a dead interpreter; the ctx then leaks, by the disarm rule. */

typedef struct {
    PyObject *obj; /* the ctx, strong */
    pith_interpreter *interp;
    pith_module_state *st;
    PyInterpreterState *owner; /* with its ID: CPython reuses the pointers */
    int64_t owner_id;
} py_function;

#if PY_VERSION_HEX >= 0x030D0000
#define thread_state_unchecked() PyThreadState_GetUnchecked()
#else
#define thread_state_unchecked() _PyThreadState_UncheckedGet()
#endif

/* Whether this thread runs Python of an interpreter other than fn's: then its backward is
 * refused (Note [Python Function objects]). A bare C thread may run it: it enters the
 * owner. The holder of the GIL is read as interp.c's thread_state_current reads it (See
 * Note [Entering an interpreter from C]). */
static bool runs_other_interpreter(const py_function *fn)
{
    PyThreadState *own = PyGILState_GetThisThreadState();
    if (!own)
        return false;
    PyThreadState *ts = thread_state_unchecked();
    if (!ts || (ts != own && ts->thread_id != PyThread_get_thread_ident()))
        return false;
    PyInterpreterState *is = PyThreadState_GetInterpreter(ts);
    return is != fn->owner || PyInterpreterState_GetID(is) != fn->owner_id;
}

typedef struct {
    py_function *fn;
    pith_tensor *const *grads;
    int n_out;
    pith_tensor **out;
    int n_in;
} py_function_call;

static pith_status py_function_backward_body(void *arg)
{
    py_function_call *c = arg;
    pith_module_state *st = c->fn->st;
    PyObject *grads = PyTuple_New(c->n_out), *result = NULL;
    for (int i = 0; grads && i < c->n_out; i++) {
        PyObject *g = Py_NewRef(Py_None);
        if (c->grads[i]) {
            Py_DECREF(g);
            pith_retain(c->grads[i]);
            g = tensor_wrap(st, c->grads[i]);
        }
        if (!g) {
            Py_CLEAR(grads);
            break;
        }
        PyTuple_SET_ITEM(grads, i, g);
    }
    if (grads)
        result = PyObject_CallMethod(c->fn->obj, "_pith_backward", "(O)", grads);
    Py_XDECREF(grads);
    if (!result)
        return PITH_ERR_RUNTIME;
    pith_status status = PITH_OK;
    if (!PyTuple_Check(result) || PyTuple_GET_SIZE(result) != c->n_in) {
        PyErr_Format(PyExc_RuntimeError, "_pith_backward returned %s, expected a tuple of %d",
                     Py_TYPE(result)->tp_name, c->n_in);
        status = PITH_ERR_RUNTIME;
    }
    for (int j = 0; status == PITH_OK && j < c->n_in; j++) {
        PyObject *g = PyTuple_GET_ITEM(result, j);
        if (g == Py_None)
            continue;
        if (!tensor_check(st, g)) {
            PyErr_Format(PyExc_TypeError, "expected a Tensor or None as gradient %d, got %s", j,
                         Py_TYPE(g)->tp_name);
            status = PITH_ERR_TYPE;
            break;
        }
        pith_retain(tensor_of(g));
        c->out[j] = tensor_of(g);
    }
    Py_DECREF(result);
    return status;
}

static pith_status py_function_backward(void *ctx, pith_node *node, pith_tensor *const *grads,
                                        int n_out, pith_tensor **out, int n_in)
{
    py_function *fn = ctx;
    py_function_call call = {fn, grads, n_out, out, n_in};
    if (pith_interpreter_is_disarmed(fn->interp))
        return pith_set_error(PITH_ERR_INTERPRETER,
                              "%s: the custom Function belongs to Python interpreter %s, which "
                              "was finalised: its backward cannot run",
                              pith_node_name(node), pith_interpreter_name(fn->interp));
    if (runs_other_interpreter(fn))
        return pith_set_error(PITH_ERR_INTERPRETER,
                              "%s: the custom Function belongs to Python interpreter %s; its "
                              "backward cannot run from another interpreter",
                              pith_node_name(node), pith_interpreter_name(fn->interp));
    pith_status st = interp_call_python(fn->interp, py_function_backward_body, &call);
    if (st == PITH_ERR_INTERPRETER)
        return pith_set_error(PITH_ERR_INTERPRETER,
                              "%s: the custom Function belongs to Python interpreter %s, "
                              "which cannot run its backward here: %s",
                              pith_node_name(node), pith_interpreter_name(fn->interp),
                              pith_last_error());
    return st;
}

static pith_status py_function_release_body(void *arg)
{
    py_function *fn = arg;
    ((node_object *)fn->obj)->node = NULL; /* See Note [Python Function objects] */
    Py_DECREF(fn->obj);
    return PITH_OK;
}

/* Runs when the node is freed, on any thread: the ctx is dropped inside its interpreter,
 * or leaked when that interpreter is gone (the caller's error status is kept). */
static void py_function_release(void *ctx)
{
    py_function *fn = ctx;
    pith_status status = pith_last_status();
    char message[1024];
    snprintf(message, sizeof message, "%s", pith_last_error());
    if (interp_call_python(fn->interp, py_function_release_body, fn) != PITH_OK) {
        /* refused: the interpreter is gone, the ctx leaks (Note [Interpreter disarm]) */
    }
    if (status == PITH_OK)
        pith_clear_error();
    else
        pith_set_error(status, "%s", message);
    PyMem_RawFree(fn);
}

/* Fills ts[] (borrowed) from a tuple of tensors (None entries stay NULL when none_ok). */
static int tensors_from(pith_module_state *st, PyObject *tuple, pith_tensor **ts, bool none_ok,
                        const char *what)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(tuple); i++) {
        PyObject *item = PyTuple_GET_ITEM(tuple, i);
        if (item == Py_None && none_ok) {
            ts[i] = NULL;
        } else if (tensor_check(st, item)) {
            ts[i] = tensor_of(item);
        } else {
            PyErr_Format(PyExc_TypeError, "%s: expected a Tensor at %zd, got %s", what, i,
                         Py_TYPE(item)->tp_name);
            return -1;
        }
    }
    return 0;
}

/* _function_record(ctx, name, inputs, outputs, output_flags, saved, materialize) -> outputs:
 * see pith/autograd/function.py's Function.apply. `inputs` are the tensor inputs, in order;
 * the outputs come back as the tensors that carry the history (an alias or a detached
 * tensor where PyTorch's _wrap_outputs makes one). */
static PyObject *module_function_record(PyObject *module, PyObject *args)
{
    pith_module_state *st = state_of_module(module);
    PyObject *ctx, *inputs, *outputs, *flags_list, *saved;
    const char *name;
    int materialize;
    if (!PyArg_ParseTuple(args, "O!sO!O!O!O!p:_function_record", st->autograd.node_type, &ctx,
                          &name, &PyTuple_Type, &inputs, &PyTuple_Type, &outputs, &PyList_Type,
                          &flags_list, &PyTuple_Type, &saved, &materialize))
        return NULL;
    node_object *o = (node_object *)ctx;
    if (o->node) {
        PyErr_SetString(PyExc_RuntimeError, "_function_record: this ctx was recorded already");
        return NULL;
    }
    Py_ssize_t n_in = PyTuple_GET_SIZE(inputs), n_out = PyTuple_GET_SIZE(outputs),
               n_saved = PyTuple_GET_SIZE(saved);
    if (PyList_GET_SIZE(flags_list) != n_out) {
        PyErr_SetString(PyExc_ValueError, "_function_record: one flag per output");
        return NULL;
    }
    pith_tensor **buf = PyMem_Calloc((size_t)(n_in + 2 * n_out + n_saved + 1), sizeof *buf);
    int *flags = PyMem_Calloc((size_t)n_out + 1, sizeof *flags);
    py_function *fn = PyMem_RawMalloc(sizeof *fn);
    PyObject *result = NULL;
    if (!buf || !flags || !fn) {
        PyErr_NoMemory();
        goto done;
    }
    pith_tensor **ins = buf, **outs = buf + n_in, **orig = outs + n_out, **sv = orig + n_out;
    if (tensors_from(st, inputs, ins, false, "Function inputs") < 0 ||
        tensors_from(st, outputs, outs, false, "Function outputs") < 0 ||
        tensors_from(st, saved, sv, true, "save_for_backward") < 0)
        goto done;
    for (Py_ssize_t i = 0; i < n_out; i++) {
        long f = PyLong_AsLong(PyList_GET_ITEM(flags_list, i));
        if (f == -1 && PyErr_Occurred())
            goto done;
        flags[i] = (int)f;
    }
    for (Py_ssize_t i = 0; i < n_out; i++) {
        orig[i] = outs[i];
        pith_retain(outs[i]); /* the references pith_function_record may replace */
    }
    PyInterpreterState *owner = PyInterpreterState_Get();
    *fn = (py_function){Py_NewRef(ctx), st->interp, st, owner, PyInterpreterState_GetID(owner)};
    pith_function_vtable vt = {name, py_function_backward, py_function_release};
    pith_node *node = NULL;
    pith_status status = pith_function_record(
        &vt, fn, materialize ? 0 : PITH_FUNCTION_NO_MATERIALIZE_GRADS, ins, (int)n_in, outs, flags,
        (int)n_out, sv, (int)n_saved, &node);
    fn = NULL; /* taken */
    if (status == PITH_OK && node) {
        o->node = node; /* borrowed: See Note [Python Function objects] */
        pith_node_slot_set(node, st->interp, ctx);
    }
    if (status == PITH_OK && (result = PyTuple_New(n_out))) {
        for (Py_ssize_t i = 0; i < n_out; i++) {
            PyObject *item;
            if (outs[i] == orig[i]) {
                item = Py_NewRef(PyTuple_GET_ITEM(outputs, i));
                pith_release(outs[i]);
            } else {
                item = tensor_wrap(st, outs[i]);
            }
            outs[i] = NULL;
            if (!item) {
                Py_CLEAR(result);
                continue;
            }
            PyTuple_SET_ITEM(result, i, item);
        }
    }
    for (Py_ssize_t i = 0; i < n_out; i++)
        pith_release(outs[i]);
    pith_node_release(node);
    if (status != PITH_OK)
        error_raise(st);
done:
    if (fn)
        PyMem_RawFree(fn);
    PyMem_Free(buf);
    PyMem_Free(flags);
    return result;
}

/* _function_saved_tensors(ctx) -> tuple: ctx.saved_tensors, unpacked by the node. */
static PyObject *module_function_saved_tensors(PyObject *module, PyObject *ctx)
{
    pith_module_state *st = state_of_module(module);
    if (!PyObject_TypeCheck(ctx, st->autograd.node_type)) {
        PyErr_SetString(PyExc_TypeError, "_function_saved_tensors: expected a Function ctx");
        return NULL;
    }
    pith_node *node = ((node_object *)ctx)->node;
    int n = pith_function_num_saved(node);
    PyObject *result = PyTuple_New(n);
    for (int i = 0; result && i < n; i++) {
        pith_tensor *t = NULL;
        if (pith_function_saved(node, i, &t) != PITH_OK) {
            Py_CLEAR(result);
            return error_raise(st);
        }
        PyObject *item = t ? tensor_wrap(st, t) : Py_NewRef(Py_None);
        if (!item)
            Py_CLEAR(result);
        else
            PyTuple_SET_ITEM(result, i, item);
    }
    return result;
}

static PyMethodDef function_module_methods[] = {
    {"_function_record", module_function_record, METH_VARARGS,
     "_function_record(ctx, name, inputs, outputs, output_flags, saved, materialize): records "
     "a custom Function's node (see pith.autograd.Function.apply)."},
    {"_function_saved_tensors", module_function_saved_tensors, METH_O,
     "_function_saved_tensors(ctx): the tensors a Function saved, version-checked."},
    {NULL, NULL, 0, NULL},
};

int autograd_function_init(PyObject *module, pith_module_state *st)
{
    (void)st;
    return PyModule_AddFunctions(module, function_module_methods) < 0 ||
                   PyModule_AddIntConstant(module, "_FUNCTION_NON_DIFFERENTIABLE",
                                           PITH_OUTPUT_NON_DIFFERENTIABLE) < 0 ||
                   PyModule_AddIntConstant(module, "_FUNCTION_DIRTY", PITH_OUTPUT_DIRTY) < 0
               ? -1
               : 0;
}
