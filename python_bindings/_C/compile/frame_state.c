/* frame_state.c — the symbolic frame of pith.compile's translator: its locals and value
 * stack, and the symbolic values of what it starts with: the frame's arguments (each with
 * its guard), and the parameters, buffers and outside tensors that the graph reads at each
 * run. The bytecode that runs over it is eval.c's. */
#include <string.h>

#include "../function_layer.h"
#include "translate.h"

/* An empty frame for a call of `fn`, whose code is `co`: 0, or -1 with an exception. */
int sframe_init(sframe *f, PyFunctionObject *fn, PyCodeObject *co)
{
    int n = co->co_nlocalsplus;
    memset(f, 0, sizeof *f);
    f->nlocals = n;
    f->cap = co->co_stacksize + 4;
    f->locals = PyMem_Calloc((size_t)n + (size_t)f->cap + 1, sizeof(PyObject *));
    if (!f->locals) {
        PyErr_NoMemory();
        return -1;
    }
    f->stack = f->locals + n;
    f->globals = fn->func_globals;
    f->builtins = fn->func_builtins;
    f->func = fn;
    f->code = co;
    return 0;
}

/* Releases the frame's locals and its stack. */
void sframe_clear(sframe *f)
{
    /* above sp: popped, already released */
    for (int i = 0; f->locals && i < f->nlocals + f->sp; i++)
        Py_XDECREF(f->locals[i]);
    PyMem_Free(f->locals);
    f->locals = NULL;
}

int push(tx *x, sframe *f, PyObject *v)
{
    if (!v)
        return -1;
    if (f->sp >= f->cap) {
        Py_DECREF(v);
        return fail(x, true, "the value stack overflowed");
    }
    f->stack[f->sp++] = v;
    return 0;
}

/* ---- arguments of the frame ---- */

/* Records where the frame holds the graph's next input. 0, or -1 with an exception. */
static int input_add(tx *x, arg_path at)
{
    if (x->ninputs == x->cap_inputs) {
        int cap = x->cap_inputs ? 2 * x->cap_inputs : 8;
        arg_path *v2 = PyMem_Realloc(x->inputs, (size_t)cap * sizeof *v2);
        if (!v2) {
            PyErr_NoMemory();
            return -1;
        }
        x->inputs = v2;
        x->cap_inputs = cap;
    }
    x->inputs[x->ninputs++] = at;
    Py_XINCREF(at.key);
    return 0;
}

/* Note [Compiled regions do not record]
 * A compiled graph runs without the dispatcher, so it cannot record for autograd. Until
 * compiled training exists, a frame that would record (grad mode on, and a tensor argument
 * or a parameter that requires grad) is not translated: it fails for these arguments (not
 * for good), runs eagerly, records, and stats() gives the reason. The guards hold grad
 * mode (GUARD_GRAD_MODE) and each tensor's requires_grad (tensor_meta_same), so a graph
 * compiled under no_grad, or for tensors that did not require grad, is never run where the
 * frame would have to record. */
static bool would_record(const pith_tensor *t)
{
    return pith_grad_enabled() && pith_requires_grad(t);
}

/* A tensor argument: a graph input, guarded by GUARD_TENSOR. */
static PyObject *tensor_argument(tx *x, arg_path at, PyObject *v, PyObject *name)
{
    pith_module_state *st = x->st;
    if (!Py_IS_TYPE(v, st->tensor_type))
        return fail(x, false, "argument '%U' is a subclass of Tensor (%s)", name,
                    Py_TYPE(v)->tp_name),
               NULL;
    const pith_tensor *t = tensor_of(v);
    if (pith_tensor_device(t) != PITH_CPU)
        return fail(x, false, "argument '%U' is not on the CPU", name), NULL;
    if (tensor_has_attributes(v))
        return fail(x, false, "argument '%U' has instance attributes", name), NULL;
    if (would_record(t))
        return fail(x, false, "argument '%U' requires grad and grad mode is on: compiled "
                    "regions do not record yet, so it runs eagerly", name),
               NULL;
    guard *gd = guard_add(x, GUARD_TENSOR);
    if (!gd)
        return NULL;
    gd->at = at;
    Py_XINCREF(at.key);
    gd->aux = Py_NewRef((PyObject *)Py_TYPE(v));
    gd->type = Py_TYPE(v);
    gd->name = Py_NewRef(name);
    tensor_meta_record(gd, t);
    pith_tensor *s = pith_graph_input(x->g, gd->dtype, gd->ndim, gd->sizes, gd->strides);
    if (!s)
        return error_raise(st);
    PyObject *obj = tensor_wrap(st, s);
    if (!obj)
        return NULL;
    if (input_add(x, at) < 0) {
        Py_DECREF(obj);
        return NULL;
    }
    x->work += pith_numel(t);
    PyObject *id = PyLong_FromVoidPtr(obj), *where = PyLong_FromLong(x->ninputs - 1);
    int rc = id && where ? PyDict_SetItem(x->input_standins, id, where) : -1;
    Py_XDECREF(id);
    Py_XDECREF(where);
    if (rc < 0 || PyList_Append(x->keep, obj) < 0) {
        Py_DECREF(obj);
        return NULL;
    }
    return obj;
}

/* The symbolic value of item `i` (or `key`) of the container argument `name` into `r`, a
 * new container of the same type. 0, or -1 with the failure. */
static int item_argument(tx *x, arg_path at, PyObject *name, PyObject *r, Py_ssize_t i,
                         PyObject *key, PyObject *item)
{
    bool dict = PyDict_CheckExact(r);
    if (dict && !PyUnicode_CheckExact(key))
        return fail(x, false, "argument '%U' has a key that is not a str", name);
    arg_path sub = {at.local, dict ? -1 : (int)i, dict ? key : NULL};
    PyObject *label = dict ? PyUnicode_FromFormat("%U[%R]", name, key)
                           : PyUnicode_FromFormat("%U[%zd]", name, i);
    PyObject *sv = label ? argument_value(x, sub, item, label, 1) : NULL;
    Py_XDECREF(label);
    if (!sv)
        return -1;
    if (dict) {
        int rc = PyDict_SetItem(r, key, sv);
        Py_DECREF(sv);
        return rc;
    }
    if (PyTuple_CheckExact(r))
        PyTuple_SET_ITEM(r, i, sv);
    else
        PyList_SET_ITEM(r, i, sv);
    return 0;
}

/* A tuple, list or dict argument (*args, **kwargs): guarded on its type and length (and a
 * dict on its keys), and its items one by one. */
static PyObject *container_argument(tx *x, arg_path at, PyObject *v, PyObject *name)
{
    Py_ssize_t n = PyDict_CheckExact(v) ? PyDict_GET_SIZE(v) : Py_SIZE(v);
    if (n > 64)
        return fail(x, false, "argument '%U' has more than 64 items", name), NULL;
    guard *gd = guard_add(x, GUARD_SEQUENCE);
    if (!gd)
        return NULL;
    gd->at = at;
    gd->aux = Py_NewRef((PyObject *)Py_TYPE(v));
    gd->name = Py_NewRef(name);
    gd->ndim = (int)n;
    if (PyDict_CheckExact(v)) {
        PyObject *keys = PyDict_Keys(v);
        gd->keys = keys ? PyList_AsTuple(keys) : NULL;
        Py_XDECREF(keys);
        if (!gd->keys)
            return NULL;
    }
    PyObject *r = PyDict_CheckExact(v) ? PyDict_New()
                  : PyTuple_CheckExact(v) ? PyTuple_New(n) : PyList_New(n);
    if (!r)
        return NULL;
    Py_ssize_t pos = 0, i = 0;
    PyObject *key = NULL, *item;
    while (PyDict_CheckExact(v) ? PyDict_Next(v, &pos, &key, &item)
                                : (i < n && (item = PySequence_Fast_GET_ITEM(v, i)))) {
        if (item_argument(x, at, name, r, i, key, item) < 0) {
            Py_DECREF(r);
            return NULL;
        }
        i++;
    }
    return PyTuple_CheckExact(v) ? r : make_fresh(x, r);
}

/* The symbolic value of the argument at `at` of the frame being compiled, with its guard:
 * a new reference, or NULL with the failure. A tuple, list or dict argument (*args,
 * **kwargs) is guarded on its type and length, and its items one by one. */
PyObject *argument_value(tx *x, arg_path at, PyObject *v, PyObject *name, int depth)
{
    guard *gd;
    if (tensor_check(x->st, v))
        return tensor_argument(x, at, v, name);
    if (is_scalar(v) || is_module(x, v)) {
        bool module = !is_scalar(v);
        if (!(gd = guard_add(x, module ? GUARD_WEAK : GUARD_VALUE)))
            return NULL;
        gd->at = at;
        Py_XINCREF(at.key);
        gd->name = Py_NewRef(name);
        if (module && !(gd->weak = PyWeakref_NewRef(v, NULL)))
            return NULL;
        if (!module)
            gd->aux = Py_NewRef(v);
        return Py_NewRef(v);
    }
    if ((PyTuple_CheckExact(v) || PyList_CheckExact(v) || PyDict_CheckExact(v)) &&
        depth == 0)
        return container_argument(x, at, v, name);
    if (PyTuple_Check(v) || PyList_Check(v) || PyDict_Check(v))
        return fail(x, false, "argument '%U' is a %s (compiled arguments are tensors, "
                    "scalars, modules and one level of tuples, lists and dicts of them)",
                    name, Py_TYPE(v)->tp_name), NULL;
    if (!(gd = guard_add(x, GUARD_IDENTITY)))
        return NULL;
    gd->at = at;
    Py_XINCREF(at.key);
    gd->aux = Py_NewRef(v);
    gd->name = Py_NewRef(name);
    return Py_NewRef(v);
}

/* ---- parameters and buffers ---- */

PyObject *param_value(tx *x, PyObject *param, PyObject *what)
{
    PyObject *id = PyLong_FromVoidPtr(param);
    if (!id)
        return NULL;
    PyObject *known = PyDict_GetItemWithError(x->param_standins, id);
    if (known || PyErr_Occurred()) {
        Py_DECREF(id);
        return Py_XNewRef(known);
    }
    if (!Py_IS_TYPE(param, x->st->tensor_type) &&
        !PyObject_TypeCheck(param, x->st->tensor_type)) {
        Py_DECREF(id);
        return fail(x, false, "%U is not a tensor", what), NULL;
    }
    pith_tensor *t = tensor_of(param);
    if (pith_tensor_device(t) != PITH_CPU || tensor_lacks_data(t)) {
        Py_DECREF(id);
        return fail(x, false, "%U is not a CPU tensor with data", what), NULL;
    }
    if (type_lookup(x, Py_TYPE(param), "__pith_dispatch__")) {
        Py_DECREF(id);
        return fail(x, false, "%U is a __pith_dispatch__ subclass", what), NULL;
    }
    if (!Py_IS_TYPE(param, x->st->tensor_type) &&
        function_type_overrides(x->st, Py_TYPE(param))) {
        Py_DECREF(id); /* its ops would reach its __pith_function__: Note [Function layer] */
        return fail(x, false, "%U is a __pith_function__ subclass", what), NULL;
    }
    if (would_record(t)) {
        Py_DECREF(id);
        return fail(x, false, "%U requires grad and grad mode is on: compiled regions do not "
                    "record yet, so it runs eagerly", what),
               NULL;
    }
    guard *gd = guard_add(x, GUARD_PARAM);
    if (!gd) {
        Py_DECREF(id);
        return NULL;
    }
    gd->obj = Py_NewRef(param);
    gd->name = Py_NewRef(what);
    pith_retain(t);
    gd->t = t;
    tensor_meta_record(gd, t);
    pith_tensor *s = pith_graph_param(x->g, t);
    PyObject *obj = s ? tensor_wrap(x->st, s) : error_raise(x->st);
    if (obj) {
        PyObject *sid = PyLong_FromVoidPtr(obj);
        int rc = sid ? PyDict_SetItem(x->standin_params, sid, param) : -1;
        Py_XDECREF(sid);
        if (rc < 0)
            Py_CLEAR(obj);
    }
    if (obj && !Py_IS_TYPE(param, x->st->tensor_type)) {
        PyObject *sid = PyLong_FromVoidPtr(obj);
        int rc = sid ? PyDict_SetItem(x->standin_types, sid, (PyObject *)Py_TYPE(param)) : -1;
        Py_XDECREF(sid);
        if (rc < 0)
            Py_CLEAR(obj);
    }
    if (!obj || PyDict_SetItem(x->param_standins, id, obj) < 0) {
        Py_DECREF(id);
        Py_XDECREF(obj);
        return NULL;
    }
    Py_DECREF(id);
    x->work += pith_numel(t);
    return obj;
}

/* A value read from outside the frame (a global, an attribute, a closure cell): a tensor
 * there is read at every run, as a parameter is (a new reference). */
PyObject *outside_value(tx *x, PyObject *v, PyObject *what)
{
    if (tensor_check(x->st, v))
        return param_value(x, v, what);
    return Py_NewRef(v);
}

