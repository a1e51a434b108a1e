/* autograd.c — autograd for Python: Tensor.requires_grad, .grad, .grad_fn, .is_leaf,
 * _version, requires_grad_, the graph's nodes as Python objects, and the engine's entry
 * (pith.autograd.backward and grad are written over _C._run_backward in
 * pith/autograd/__init__.py). The runtime is libpith's (docs/autograd.md). The attributes and
 * methods of Tensor ask the function layer first, as PyTorch's (See Note [Function layer],
 * function_layer.c). */
#include "function_layer.h"
#include "state.h"

#include <structmember.h>

#include "pydispatch.h"


/* ---- nodes ---- */

/* Note [Node wrappers]
 * A node's wrapper holds the node; the node points back at the wrapper without owning it
 * (Note [Nodes], autograd/autograd.h), so `y.grad_fn is y.grad_fn` while the wrapper lives.
 * The slot is claimed for one interpreter: the first interpreter to wrap a node tags it,
 * and another interpreter gets a wrapper of its own each time (identity holds within the
 * tagging interpreter only). A wrapper is an instance of a subclass named as PyTorch names
 * the node's class ("MulBackward0"), made once per name and module. */
/* The node of a wrapper, or NULL with PyTorch's error: a custom Function's ctx has none
 * before its forward recorded it, nor after its node was freed (See Note [Python Function
 * objects], autograd_function.c). */
static pith_node *node_of(PyObject *self, const char *attribute)
{
    pith_node *n = ((node_object *)self)->node;
    if (!n)
        PyErr_Format(PyExc_RuntimeError,
                     "Attribute '%s' is invalid for this instance of _C._FunctionBase. "
                     "Accessing this attribute directly on an instance of autograd.Function is "
                     "a legacy access pattern that is no longer supported. For examples on how "
                     "to use new-style autograd functions, see "
                     "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function ",
                     attribute);
    return n;
}

static PyObject *node_name_method(PyObject *self, PyObject *unused)
{
    pith_node *n = node_of(self, "name");
    return n ? PyUnicode_FromString(pith_node_name(n)) : NULL;
}

static PyObject *node_next_functions(PyObject *self, void *unused)
{
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    pith_node *n = node_of(self, "next_functions");
    if (!n)
        return NULL;
    int count = pith_node_num_next(n);
    PyObject *out = PyTuple_New(count);
    for (int i = 0; out && i < count; i++) {
        pith_node *next;
        int input_nr;
        if (pith_node_next(n, i, &next, &input_nr) != PITH_OK) {
            error_raise(st);
            Py_CLEAR(out);
            break;
        }
        PyObject *fn = next ? node_wrap(st, next) : Py_NewRef(Py_None);
        pith_node_release(next);
        PyObject *pair = fn ? Py_BuildValue("(Ni)", fn, input_nr) : NULL;
        if (!pair) {
            Py_CLEAR(out);
            break;
        }
        PyTuple_SET_ITEM(out, i, pair);
    }
    return out;
}

/* The node's metadata dict lives with the node (pith_node_set_py_state), not the wrapper,
 * so it outlasts the wrapper as PyTorch's does. */
static PyObject *node_get_metadata(PyObject *self, void *unused)
{
    node_object *o = (node_object *)self;
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st || !node_of(self, "metadata"))
        return NULL;
    PyObject *dict = pith_node_py_state(o->node, st->interp);
    if (dict)
        return Py_NewRef(dict);
    if (!(dict = PyDict_New()))
        return NULL;
    if (pith_node_set_py_state(o->node, st->interp, Py_NewRef(dict)) != PITH_OK) {
        Py_DECREF(dict); /* the node's reference */
        Py_DECREF(dict);
        return error_raise(st);
    }
    return dict;
}

static PyObject *node_get_variable(PyObject *self, void *unused)
{
    pith_tensor *leaf = pith_node_variable(((node_object *)self)->node);
    if (!leaf) {
        PyErr_SetString(PyExc_AttributeError, "'variable' is an attribute of AccumulateGrad "
                                              "nodes whose leaf is alive");
        return NULL;
    }
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st) {
        pith_release(leaf);
        return NULL;
    }
    return tensor_wrap(st, leaf);
}

static PyObject *node_repr(PyObject *self)
{
    if (!((node_object *)self)->node)
        return PyUnicode_FromFormat("<%s object at %p>", Py_TYPE(self)->tp_name, self);
    return PyUnicode_FromFormat("<%s object at %p>", pith_node_name(((node_object *)self)->node),
                                self);
}

static void node_dealloc(PyObject *self)
{
    node_object *o = (node_object *)self;
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    if (o->weakreflist)
        PyObject_ClearWeakRefs(self);
    pith_node_slot_clear(o->node, self);
    pith_node_release(o->node);
    type->tp_free(self);
    Py_DECREF(type);
}

/* Note [Node wrappers and the collector]
 * A Python hook's callable is owned by its node, in C, where the collector cannot see it, so
 * a hook that refers to its node's wrapper (`fn.register_hook(lambda *a: fn)`) would make a
 * cycle nothing frees. As PyTorch's THPCppFunction_traverse, a wrapper that holds the only
 * reference to its node reports the callables of that node's Python hooks of its own
 * interpreter as its own (they are: wrapper -> node -> hook -> callable), and its tp_clear
 * removes those hooks, which breaks the cycle while the node stays whole. A node that C or a
 * tensor also holds is not the wrapper's alone: nothing is reported. (A tensor hook that
 * refers to its tensor is a cycle through the tensor's wrapper, which this does not see:
 * docs/autograd.md.) */
/* The context of a Python hook: See Note [Python tensor hooks]. */
typedef struct {
    PyObject *fn;
    pith_interpreter *interp;
    pith_module_state *st;
} py_hook;

typedef struct {
    visitproc visit;
    void *arg;
    const pith_interpreter *interp;
    int64_t *ids; /* tp_clear: the ids to remove */
    size_t n, cap;
} node_hooks_walk;

static void py_hook_release(void *ctx);

static int node_hook_visit(int64_t id, void *ctx, void (*ctx_release)(void *ctx), void *arg)
{
    node_hooks_walk *w = arg;
    if (ctx_release != py_hook_release)
        return 0;
    const py_hook *h = ctx;
    if (h->interp != w->interp)
        return 0;
    if (w->visit)
        return w->visit(h->fn, w->arg);
    if (w->n < w->cap)
        w->ids[w->n] = id;
    w->n++; /* counted past cap: the caller walks again with room */
    return 0;
}

static pith_interpreter *node_wrapper_interp(PyObject *self)
{
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        PyErr_Clear();
    return st ? st->interp : NULL;
}

static int node_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    node_object *o = (node_object *)self;
    if (!o->node || pith_node_use_count(o->node) != 1)
        return 0;
    node_hooks_walk w = {visit, arg, node_wrapper_interp(self), NULL, 0, 0};
    return w.interp ? pith_node_visit_hooks(o->node, node_hook_visit, &w) : 0;
}

static int node_clear(PyObject *self)
{
    node_object *o = (node_object *)self;
    if (!o->node || pith_node_use_count(o->node) != 1)
        return 0;
    node_hooks_walk w = {NULL, NULL, node_wrapper_interp(self), NULL, 0, 0};
    if (!w.interp)
        return 0;
    pith_node_visit_hooks(o->node, node_hook_visit, &w);
    if (!w.n || !(w.ids = PyMem_Malloc(w.n * sizeof *w.ids)))
        return 0;
    w.cap = w.n;
    w.n = 0;
    pith_node_visit_hooks(o->node, node_hook_visit, &w);
    for (size_t i = 0; i < w.n && i < w.cap; i++)
        pith_node_remove_hook(o->node, w.ids[i]);
    PyMem_Free(w.ids);
    return 0;
}

static PyObject *node_register_hook(PyObject *self, PyObject *fn);
static PyObject *node_register_prehook(PyObject *self, PyObject *fn);

static PyMethodDef node_methods[] = {
    {"name", node_name_method, METH_NOARGS, "The node's class name: 'MulBackward0'."},
    {"_register_hook", node_register_hook, METH_O,
     "_register_hook(fn) -> id: a post-hook fn(grad_inputs, grad_outputs) (see register_hook)."},
    {"_register_prehook", node_register_prehook, METH_O,
     "_register_prehook(fn) -> id: a pre-hook fn(grad_outputs) (see register_prehook)."},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef node_getset[] = {
    {"next_functions", node_next_functions, NULL,
     "(node or None, input number) for each forward input.", NULL},
    {"metadata", node_get_metadata, NULL, "A dict for the user's data.", NULL},
    {"variable", node_get_variable, NULL, "The leaf of an AccumulateGrad node.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMemberDef node_members[] = {
    {"__weaklistoffset__", T_PYSSIZET, offsetof(node_object, weakreflist), READONLY, NULL},
    {NULL, 0, 0, 0, NULL},
};

static PyType_Slot node_slots[] = {
    {Py_tp_dealloc, node_dealloc},
    {Py_tp_traverse, node_traverse},
    {Py_tp_clear, node_clear},
    {Py_tp_repr, node_repr},
    {Py_tp_methods, node_methods},
    {Py_tp_getset, node_getset},
    {Py_tp_members, node_members},
    {Py_tp_doc, "A node of the autograd graph (a grad_fn)."},
    {0, NULL},
};

static PyType_Spec node_spec = {
    .name = "pith._C._Node",
    .basicsize = sizeof(node_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = node_slots,
};

/* The subclass named `name` (borrowed), made on first use. */
static PyTypeObject *node_class(pith_module_state *st, const char *name)
{
    PyObject *cls = PyDict_GetItemString(st->autograd.node_classes, name);
    if (cls)
        return (PyTypeObject *)cls;
    cls = PyObject_CallFunction((PyObject *)&PyType_Type, "s(O){ss}", name,
                                (PyObject *)st->autograd.node_type, "__module__",
                                "pith.autograd.graph");
    if (!cls)
        return NULL;
    int rc = PyDict_SetItemString(st->autograd.node_classes, name, cls);
    Py_DECREF(cls);
    return rc < 0 ? NULL : (PyTypeObject *)cls;
}

PyObject *node_wrap(pith_module_state *st, pith_node *n)
{
    void *cached = pith_node_slot_get(n, st->interp);
    if (cached)
        return Py_NewRef((PyObject *)cached);
    PyTypeObject *cls = node_class(st, pith_node_name(n));
    if (!cls)
        return NULL;
    node_object *o = (node_object *)cls->tp_alloc(cls, 0);
    if (!o)
        return NULL;
    pith_node_retain(n);
    o->node = n;
    pith_node_slot_set(n, st->interp, o);
    return (PyObject *)o;
}

/* ---- Tensor attributes ---- */

static int raise_status(pith_module_state *st)
{
    error_raise(st);
    return -1;
}

static PyObject *tensor_get_requires_grad(PyObject *self, void *unused)
{
    FUNCTION_LAYER_SELF(self, "requires_grad.__get__");
    return PyBool_FromLong(pith_requires_grad(tensor_of(self)));
}

static int requires_grad_set(PyObject *self, PyObject *value)
{
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return -1;
    if (!value || !PyBool_Check(value)) {
        PyErr_Format(PyExc_TypeError, "requires_grad must be a bool, not %s",
                     value ? Py_TYPE(value)->tp_name : "nothing (it cannot be deleted)");
        return -1;
    }
    pith_tensor *t = tensor_of(self);
    if (!pith_is_leaf(t)) {
        if (value == Py_True)
            return 0;
        PyErr_SetString(PyExc_RuntimeError,
                        "you can only change requires_grad flags of leaf variables. If you want "
                        "to use a computed variable in a subgraph that doesn't require "
                        "differentiation use var_no_grad = var.detach().");
        return -1;
    }
    return pith_set_requires_grad(t, value == Py_True) == PITH_OK ? 0 : raise_status(st);
}

static int tensor_set_requires_grad(PyObject *self, PyObject *value, void *unused)
{
    FUNCTION_LAYER_SETTER(self, "requires_grad", value);
    return requires_grad_set(self, value);
}

/* requires_grad_'s arguments other than () and (bool): a tuple and a dict for
 * PyArg_ParseTupleAndKeywords, whose checks and messages they get. 0, or -1 with the
 * exception; *value is a bool (not a new reference). */
static int requires_grad_parse(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                               PyObject **value)
{
    static char *kwlist[] = {"requires_grad", NULL};
    PyObject *tuple = PyTuple_New(nargs), *kwargs = kwnames ? PyDict_New() : NULL;
    int ok = tuple && (!kwnames || kwargs);
    for (Py_ssize_t i = 0; ok && i < nargs; i++)
        PyTuple_SET_ITEM(tuple, i, Py_NewRef(args[i]));
    for (Py_ssize_t i = 0; ok && kwnames && i < PyTuple_GET_SIZE(kwnames); i++)
        ok = PyDict_SetItem(kwargs, PyTuple_GET_ITEM(kwnames, i), args[nargs + i]) == 0;
    ok = ok && PyArg_ParseTupleAndKeywords(tuple, kwargs, "|O!:requires_grad_", kwlist,
                                           &PyBool_Type, value);
    Py_XDECREF(tuple);
    Py_XDECREF(kwargs);
    return ok ? 0 : -1;
}

/* METH_FASTCALL, so that the common calls, requires_grad_() and requires_grad_(bool), make
 * no tuple and run no parser: issue 31's fresh-leaves recording surcharge makes each leaf
 * with it. */
static PyObject *tensor_requires_grad_(PyObject *self, PyObject *const *args, Py_ssize_t nargs,
                                       PyObject *kwnames)
{
    PyObject *value = Py_True, *result;
    if (function_self_maybe(self) &&
        function_layer_method_args(self, "requires_grad_", args, nargs, kwnames, &result))
        return result;
    if (nargs == 1 && !kwnames && PyBool_Check(args[0]))
        value = args[0];
    else if ((nargs || kwnames) && requires_grad_parse(args, nargs, kwnames, &value) < 0)
        return NULL;
    if (requires_grad_set(self, value) < 0)
        return NULL;
    return Py_NewRef(self);
}

static PyObject *tensor_get_grad(PyObject *self, void *unused)
{
    FUNCTION_LAYER_SELF(self, "grad.__get__");
    pith_module_state *st = state_of_type(Py_TYPE(self));
    pith_tensor *g = NULL;
    if (!st || pith_grad_get(tensor_of(self), &g) != PITH_OK)
        return st ? error_raise(st) : NULL;
    return g ? tensor_wrap(st, g) : Py_NewRef(Py_None);
}

static int tensor_set_grad(PyObject *self, PyObject *value, void *unused)
{
    FUNCTION_LAYER_SETTER(self, "grad", value);
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return -1;
    if (value && value != Py_None && !tensor_check(st, value)) {
        PyErr_Format(PyExc_TypeError, "assigned grad expected to be a Tensor or None but got "
                                      "grad of type %s", Py_TYPE(value)->tp_name);
        return -1;
    }
    const pith_tensor *g = value && value != Py_None ? tensor_of(value) : NULL;
    return pith_grad_set(tensor_of(self), g) == PITH_OK ? 0 : raise_status(st);
}

static PyObject *tensor_get_grad_fn(PyObject *self, void *unused)
{
    FUNCTION_LAYER_SELF(self, "grad_fn.__get__");
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    pith_node *fn = pith_grad_fn(tensor_of(self));
    if (!fn)
        return Py_NewRef(Py_None);
    PyObject *o = node_wrap(st, fn);
    pith_node_release(fn);
    return o;
}

static PyObject *tensor_get_is_leaf(PyObject *self, void *unused)
{
    FUNCTION_LAYER_SELF(self, "is_leaf.__get__");
    return PyBool_FromLong(pith_is_leaf(tensor_of(self)));
}

static PyObject *tensor_get_version(PyObject *self, void *unused)
{
    FUNCTION_LAYER_SELF(self, "_version.__get__");
    return PyLong_FromLongLong((long long)pith_version_counter(tensor_of(self)));
}

static PyObject *tensor_get_output_nr(PyObject *self, void *unused)
{
    FUNCTION_LAYER_SELF(self, "output_nr.__get__");
    return PyLong_FromLong(pith_output_nr(tensor_of(self)));
}

static PyObject *tensor_detach_(PyObject *self, PyObject *unused)
{
    FUNCTION_LAYER_SELF(self, "detach_");
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    if (pith_detach_(tensor_of(self)) != PITH_OK)
        return error_raise(st);
    return Py_NewRef(self);
}

/* Tensor.data: the tensor without its history, over the same storage (its version counter
 * is the storage's, so unlike PyTorch's .data it is shared: docs/autograd.md). */
static PyObject *tensor_get_data(PyObject *self, void *unused)
{
    FUNCTION_LAYER_SELF(self, "data.__get__");
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    pith_tensor *d = pith_detach(tensor_of(self));
    return d ? tensor_wrap(st, d) : error_raise(st);
}

/* ---- hooks ---- */

/* Note [Python tensor hooks]
 * A Python hook is a C tensor hook (Note [Tensor hooks], autograd/hooks.c) whose context
 * holds the callable, the interpreter that registered it and that interpreter's module
 * state. It runs inside that interpreter (interp_call_python), from whichever thread runs
 * backward, and is refused with a clear error once the interpreter is being torn down
 * (the disarm rule); the callable is released the same way. An exception the hook raises
 * is kept (error_keep) and reaches the caller of backward as it is, as in PyTorch. (py_hook
 * is defined above, with the node wrappers, which report its callable to the collector.) */

typedef struct {
    py_hook *hook;
    const pith_tensor *grad;
    pith_tensor **replacement;
} py_hook_call;

static pith_status py_hook_body(void *arg)
{
    py_hook_call *c = arg;
    pith_retain((pith_tensor *)c->grad);
    PyObject *grad = tensor_wrap(c->hook->st, (pith_tensor *)c->grad);
    PyObject *result = grad ? PyObject_CallOneArg(c->hook->fn, grad) : NULL;
    Py_XDECREF(grad);
    if (!result)
        return error_keep(); /* See Note [Handler exceptions cross C] */
    if (result != Py_None) {
        if (!tensor_check(c->hook->st, result)) {
            PyErr_Format(PyExc_TypeError, "hook returned %s, expected a Tensor or None",
                         Py_TYPE(result)->tp_name);
            Py_DECREF(result);
            return error_keep();
        }
        pith_retain(tensor_of(result));
        *c->replacement = tensor_of(result);
    }
    Py_DECREF(result);
    return PITH_OK;
}

static pith_status py_hook_run(void *ctx, const pith_tensor *grad, pith_tensor **replacement)
{
    py_hook_call call = {ctx, grad, replacement};
    return interp_call_python(((py_hook *)ctx)->interp, py_hook_body, &call);
}

static void py_hook_release(void *ctx)
{
    py_hook *h = ctx;
    interp_release_object(h->interp, h->fn);
    PyMem_RawFree(h);
}

/* ---- node hooks and post-accumulate-grad hooks ---- */

/* Note [Python node hooks]
 * grad_fn.register_prehook, grad_fn.register_hook and Tensor.register_post_accumulate_grad_hook
 * are C hooks (pith/autograd.h) whose context is a py_hook, as in Note [Python tensor hooks]:
 * they run inside the registering interpreter, an exception they raise reaches the caller
 * of backward() as itself (error_keep), and their results are checked here as PyTorch's
 * check_result does, with its messages (the hook's __name__ in them). */

/* The hook's name for messages: its __name__, else its repr. New reference or NULL. */
static PyObject *hook_name(PyObject *hook)
{
    PyObject *name = PyObject_GetAttrString(hook, "__name__");
    if (name && PyUnicode_Check(name))
        return name;
    Py_XDECREF(name);
    PyErr_Clear();
    return PyObject_Repr(hook);
}

/* A tuple of wrappers of grads[n] (None for NULL), or NULL. */
static PyObject *grads_tuple(pith_module_state *st, pith_tensor *const *grads, int n)
{
    PyObject *tuple = PyTuple_New(n);
    for (int i = 0; tuple && i < n; i++) {
        PyObject *g = Py_NewRef(Py_None);
        if (grads[i]) {
            Py_DECREF(g);
            pith_retain(grads[i]);
            if (!(g = tensor_wrap(st, grads[i]))) {
                Py_CLEAR(tuple);
                break;
            }
        }
        PyTuple_SET_ITEM(tuple, i, g);
    }
    return tuple;
}

/* PyTorch's check_single_result: 0, or -1 with its exception. */
static int hook_check_value(pith_module_state *st, PyObject *hook, PyObject *was, PyObject *now)
{
    if (now == Py_None)
        return 0;
    if (was == Py_None) {
        PyErr_SetString(PyExc_RuntimeError, "can't replace a None gradient with a non-None value");
        return -1;
    }
    if (!tensor_check(st, now)) {
        PyErr_Format(PyExc_TypeError, "expected Variable, but hook returned '%s'",
                     Py_TYPE(now)->tp_name);
        return -1;
    }
    const pith_tensor *a = tensor_of(was), *b = tensor_of(now);
    PyObject *name = hook_name(hook);
    if (!name)
        return -1;
    int rc = 0;
    int64_t sa[PITH_MAX_DIMS], sb[PITH_MAX_DIMS];
    int ndim = pith_sizes(a, sa);
    bool same_size = ndim == pith_sizes(b, sb) && memcmp(sa, sb, (size_t)ndim * sizeof *sa) == 0;
    if (pith_tensor_dtype(a) != pith_tensor_dtype(b)) {
        /* Tensor.type(): the legacy names ("torch.FloatTensor") PyTorch's message uses */
        PyObject *ta = PyObject_CallMethod(was, "type", NULL);
        PyObject *tb = ta ? PyObject_CallMethod(now, "type", NULL) : NULL;
        if (tb)
            PyErr_Format(PyExc_RuntimeError,
                         "hook '%U' has changed the type of value (was %U got %U)", name, ta, tb);
        Py_XDECREF(ta);
        Py_XDECREF(tb);
        rc = -1;
    } else if (!same_size) {
        PyErr_Format(PyExc_RuntimeError, "hook '%U' has changed the size of value", name);
        rc = -1;
    }
    Py_DECREF(name);
    return rc;
}

/* PyTorch's check_result of a node hook's result against the tuple it was given, then the
 * result into grads[n]. 0, or -1 with the exception. */
static int hook_take_result(pith_module_state *st, PyObject *hook, PyObject *given,
                            PyObject *result, pith_tensor **grads, int n)
{
    if (!PyTuple_Check(result)) {
        PyErr_Format(PyExc_TypeError, "expected tuple, but hook returned '%s'",
                     Py_TYPE(result)->tp_name);
        return -1;
    }
    if (PyTuple_GET_SIZE(result) != n) {
        PyObject *name = hook_name(hook);
        if (name) {
            PyErr_Format(PyExc_RuntimeError,
                         "hook '%U' has returned an incorrect number of values (got %zd, but "
                         "expected %d)",
                         name, PyTuple_GET_SIZE(result), n);
            Py_DECREF(name);
        }
        return -1;
    }
    for (int i = 0; i < n; i++)
        if (hook_check_value(st, hook, PyTuple_GET_ITEM(given, i), PyTuple_GET_ITEM(result, i)) < 0)
            return -1;
    for (int i = 0; i < n; i++) {
        PyObject *item = PyTuple_GET_ITEM(result, i);
        pith_tensor *t = item == Py_None ? NULL : tensor_of(item);
        pith_retain(t);
        pith_release(grads[i]);
        grads[i] = t;
    }
    return 0;
}

typedef struct {
    py_hook *hook;
    pith_tensor **grads; /* the array the hook may write */
    int n;
    pith_tensor *const *other; /* a post-hook's grad_outputs */
    int nother;
    bool post;
} py_node_hook_call;

static pith_status py_node_hook_body(void *arg)
{
    py_node_hook_call *c = arg;
    pith_module_state *st = c->hook->st;
    PyObject *given = grads_tuple(st, c->grads, c->n);
    PyObject *other = given && c->post ? grads_tuple(st, c->other, c->nother) : NULL;
    PyObject *result = NULL;
    if (given && (!c->post || other))
        result = c->post ? PyObject_CallFunctionObjArgs(c->hook->fn, given, other, NULL)
                         : PyObject_CallOneArg(c->hook->fn, given);
    int rc = result ? 0 : -1;
    if (result && result != Py_None)
        rc = hook_take_result(st, c->hook->fn, given, result, c->grads, c->n);
    Py_XDECREF(result);
    Py_XDECREF(given);
    Py_XDECREF(other);
    return rc < 0 ? error_keep() : PITH_OK;
}

static pith_status py_node_pre_hook_run(void *ctx, pith_node *node, pith_tensor **grads, int n)
{
    py_node_hook_call call = {ctx, grads, n, NULL, 0, false};
    return interp_call_python(((py_hook *)ctx)->interp, py_node_hook_body, &call);
}

static pith_status py_node_post_hook_run(void *ctx, pith_node *node, pith_tensor **grad_inputs,
                                         int ninputs, pith_tensor *const *grad_outputs,
                                         int noutputs)
{
    py_node_hook_call call = {ctx, grad_inputs, ninputs, grad_outputs, noutputs, true};
    return interp_call_python(((py_hook *)ctx)->interp, py_node_hook_body, &call);
}

typedef struct {
    py_hook *hook;
    pith_tensor *leaf;
} py_accumulate_hook_call;

static pith_status py_accumulate_hook_body(void *arg)
{
    py_accumulate_hook_call *c = arg;
    pith_retain(c->leaf);
    PyObject *leaf = tensor_wrap(c->hook->st, c->leaf);
    PyObject *result = leaf ? PyObject_CallOneArg(c->hook->fn, leaf) : NULL;
    Py_XDECREF(leaf);
    if (result && result != Py_None) /* as PyTorch's check_single_result against None */
        PyErr_Format(PyExc_TypeError, "expected Variable, but hook returned '%s'",
                     Py_TYPE(result)->tp_name);
    bool failed = !result || result != Py_None;
    Py_XDECREF(result);
    return failed ? error_keep() : PITH_OK;
}

static pith_status py_accumulate_hook_run(void *ctx, pith_tensor *leaf)
{
    py_accumulate_hook_call call = {ctx, leaf};
    return interp_call_python(((py_hook *)ctx)->interp, py_accumulate_hook_body, &call);
}

static py_hook *py_hook_new(pith_module_state *st, PyObject *fn)
{
    py_hook *h = PyMem_RawMalloc(sizeof *h);
    if (!h)
        return (py_hook *)PyErr_NoMemory();
    *h = (py_hook){Py_NewRef(fn), st->interp, st};
    return h;
}

static void py_hook_free_unregistered(py_hook *h)
{
    Py_DECREF(h->fn);
    PyMem_RawFree(h);
}

/* grad_fn._register_hook(fn) and _register_prehook(fn) -> id: see pith/_api.py. As in
 * PyTorch, any object is accepted; calling it happens at backward. */
static PyObject *node_register(PyObject *self, PyObject *fn, bool post)
{
    pith_module_state *st = state_of_type(Py_TYPE(self));
    py_hook *h = st ? py_hook_new(st, fn) : NULL;
    if (!h)
        return NULL;
    pith_node *node = ((node_object *)self)->node;
    int64_t id = 0;
    pith_status status =
        post ? pith_node_register_hook(node, py_node_post_hook_run, h, py_hook_release, &id)
             : pith_node_register_prehook(node, py_node_pre_hook_run, h, py_hook_release, &id);
    if (status != PITH_OK) {
        py_hook_free_unregistered(h);
        return error_raise(st);
    }
    return PyLong_FromLongLong((long long)id);
}

static PyObject *node_register_hook(PyObject *self, PyObject *fn)
{
    return node_register(self, fn, true);
}

static PyObject *node_register_prehook(PyObject *self, PyObject *fn)
{
    return node_register(self, fn, false);
}

/* Tensor._register_post_accumulate_grad_hook(fn) -> (node, id). */
static PyObject *tensor_register_post_accumulate_grad_hook(PyObject *self, PyObject *fn)
{
    pith_module_state *st = state_of_type(Py_TYPE(self));
    py_hook *h = st ? py_hook_new(st, fn) : NULL;
    if (!h)
        return NULL;
    pith_node *node = NULL;
    int64_t id = 0;
    if (pith_tensor_register_post_accumulate_grad_hook(tensor_of(self), py_accumulate_hook_run, h,
                                                       py_hook_release, &node, &id) != PITH_OK) {
        py_hook_free_unregistered(h);
        return error_raise(st);
    }
    PyObject *wrapped = node_wrap(st, node);
    pith_node_release(node);
    return wrapped ? Py_BuildValue("(NL)", wrapped, (long long)id) : NULL;
}

/* Tensor._register_hook(fn) -> (node, id): see pith/_api.py's register_hook. */
static PyObject *tensor_register_hook(PyObject *self, PyObject *fn)
{
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "register_hook: the hook must be callable, not %s",
                     Py_TYPE(fn)->tp_name);
        return NULL;
    }
    py_hook *h = PyMem_RawMalloc(sizeof *h);
    if (!h)
        return PyErr_NoMemory();
    *h = (py_hook){Py_NewRef(fn), st->interp, st};
    pith_node *node = NULL;
    int64_t id = 0;
    if (pith_tensor_register_hook(tensor_of(self), py_hook_run, h, py_hook_release, &node, &id) !=
        PITH_OK) {
        Py_DECREF(h->fn);
        PyMem_RawFree(h);
        return error_raise(st);
    }
    PyObject *wrapped = node_wrap(st, node);
    pith_node_release(node);
    return wrapped ? Py_BuildValue("(NL)", wrapped, (long long)id) : NULL;
}

/* _C._remove_hook(node, id) */
static PyObject *module_remove_hook(PyObject *module, PyObject *args)
{
    pith_module_state *st = state_of_module(module);
    PyObject *node;
    long long id;
    if (!PyArg_ParseTuple(args, "O!L:_remove_hook", st->autograd.node_type, &node, &id))
        return NULL;
    if (pith_node_remove_hook(((node_object *)node)->node, (int64_t)id) != PITH_OK)
        return error_raise(st);
    Py_RETURN_NONE;
}

static PyObject *tensor_retain_grad(PyObject *self, PyObject *unused)
{
    FUNCTION_LAYER_SELF(self, "retain_grad");
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    if (pith_retain_grad(tensor_of(self)) != PITH_OK)
        return error_raise(st);
    Py_RETURN_NONE;
}

static PyObject *tensor_get_retains_grad(PyObject *self, void *unused)
{
    FUNCTION_LAYER_SELF(self, "retains_grad.__get__");
    return PyBool_FromLong(pith_retains_grad(tensor_of(self)));
}

static PyGetSetDef autograd_tensor_getset[] = {
    {"retains_grad", tensor_get_retains_grad, NULL,
     "Whether this non-leaf keeps its gradient in .grad (retain_grad()).", NULL},
    {"data", tensor_get_data, NULL, "This tensor without its history (shares the storage).",
     NULL},
    {"requires_grad", tensor_get_requires_grad, tensor_set_requires_grad,
     "Whether gradients flow to this tensor.", NULL},
    {"grad", tensor_get_grad, tensor_set_grad, "The accumulated gradient, or None.", NULL},
    {"grad_fn", tensor_get_grad_fn, NULL, "The node that made this tensor, or None.", NULL},
    {"is_leaf", tensor_get_is_leaf, NULL, "Whether this tensor has no history.", NULL},
    {"_version", tensor_get_version, NULL, "The version counter (bumped by in-place ops).",
     NULL},
    {"output_nr", tensor_get_output_nr, NULL, "Which output of its grad_fn this is.", NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyMethodDef autograd_tensor_methods[] = {
    {"_register_hook", tensor_register_hook, METH_O,
     "_register_hook(fn) -> (node, id): registers a tensor hook (see register_hook)."},
    {"_register_post_accumulate_grad_hook", tensor_register_post_accumulate_grad_hook, METH_O,
     "_register_post_accumulate_grad_hook(fn) -> (node, id): see "
     "register_post_accumulate_grad_hook."},
    {"retain_grad", tensor_retain_grad, METH_NOARGS,
     "retain_grad(): keeps this non-leaf's gradient in .grad during backward."},
    {"detach_", tensor_detach_, METH_NOARGS,
     "detach_(): makes this tensor a leaf that does not require grad; returns self."},
    {"requires_grad_", (PyCFunction)(void (*)(void))tensor_requires_grad_,
     METH_FASTCALL | METH_KEYWORDS,
     "requires_grad_(requires_grad=True): sets requires_grad in place; returns self."},
    {NULL, NULL, 0, NULL},
};

/* requires_grad=True of a factory on its fresh result: PyTorch's factories say "Only
 * Tensors of floating point and complex dtype ..." where requires_grad_() says "only
 * Tensors of floating point dtype ...". 0, or -1 with the exception. */
int factory_requires_grad(pith_module_state *st, pith_tensor *t)
{
    if (!pith_dtype_is_floating(pith_tensor_dtype(t))) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Only Tensors of floating point and complex dtype can require "
                        "gradients");
        return -1;
    }
    if (pith_set_requires_grad(t, true) != PITH_OK) {
        error_raise(st);
        return -1;
    }
    return 0;
}

/* ---- the engine ---- */

/* Fills ts[] (borrowed) from a sequence of tensors (None entries allowed when
 * none_ok). 0, or -1 with TypeError. */
static int tensors_of(pith_module_state *st, PyObject *seq, const char *what, bool none_ok,
                      pith_tensor **ts, Py_ssize_t n)
{
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(seq, i);
        if (item == Py_None && none_ok) {
            ts[i] = NULL;
        } else if (tensor_check(st, item)) {
            ts[i] = tensor_of(item);
        } else {
            PyErr_Format(PyExc_TypeError, "%s: expected a Tensor%s at %zd, got %s", what,
                         none_ok ? " or None" : "", i, Py_TYPE(item)->tp_name);
            return -1;
        }
    }
    return 0;
}

/* _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, allow_unused,
 * accumulate_grad): PyTorch's Engine.run_backward. Returns the gradients of `inputs`
 * (a tuple) when not accumulate_grad, else None. */
static PyObject *run_backward(pith_module_state *st, PyObject *tseq, PyObject *gseq,
                              PyObject *iseq, int flags, bool accumulate)
{
    Py_ssize_t nt = PySequence_Fast_GET_SIZE(tseq), ng = PySequence_Fast_GET_SIZE(gseq),
               ni = PySequence_Fast_GET_SIZE(iseq);
    if (ng != nt) {
        PyErr_Format(PyExc_RuntimeError, "grad_tensors has %zd entries but there are %zd tensors",
                     ng, nt);
        return NULL;
    }
    pith_tensor **buf = PyMem_Calloc((size_t)(2 * nt + 2 * ni + 1), sizeof *buf);
    if (!buf)
        return PyErr_NoMemory();
    pith_tensor **roots = buf, **groots = buf + nt, **ins = buf + 2 * nt, **outs = ins + ni;
    PyObject *result = NULL;
    if (tensors_of(st, tseq, "backward", false, roots, nt) < 0 ||
        tensors_of(st, gseq, "backward", true, groots, ng) < 0 ||
        tensors_of(st, iseq, "backward", false, ins, ni) < 0)
        goto done;
    /* Without the GIL (Note [The engine's threads and the GIL], autograd/engine.c): what
     * needs Python re-enters through the interpreter table, on this thread's own state.
     * The tensors are retained meanwhile: another thread may drop the sequences' items. */
    for (Py_ssize_t i = 0; i < 2 * nt + ni; i++)
        pith_retain(buf[i]);
    PyThreadState *outer = interp_gil_release();
    pith_status status =
        !accumulate ? pith_autograd_grad(roots, groots, (int)nt, ins, (int)ni, outs, flags)
        : ni        ? pith_backward_inputs(roots, groots, (int)nt, ins, (int)ni, flags)
                    : pith_backward(roots, groots, (int)nt, flags);
    interp_gil_restore(outer);
    for (Py_ssize_t i = 0; i < 2 * nt + ni; i++)
        pith_release(buf[i]);
    if (status != PITH_OK) {
        error_raise(st);
        goto done;
    }
    if (accumulate) {
        result = Py_NewRef(Py_None);
        goto done;
    }
    if (!(result = PyTuple_New(ni)))
        goto done;
    for (Py_ssize_t i = 0; i < ni; i++) {
        PyObject *g = outs[i] ? tensor_wrap(st, outs[i]) : Py_NewRef(Py_None);
        outs[i] = NULL;
        if (!g) {
            Py_CLEAR(result);
            goto done;
        }
        PyTuple_SET_ITEM(result, i, g);
    }
done:
    for (Py_ssize_t i = 0; i < ni; i++)
        pith_release(outs[i]);
    PyMem_Free(buf);
    return result;
}

/* _run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, allow_unused,
 * accumulate_grad): PyTorch's Engine.run_backward. Returns the gradients of `inputs` (a
 * tuple) when not accumulate_grad, else None. */
static PyObject *module_run_backward(PyObject *module, PyObject *args)
{
    pith_module_state *st = state_of_module(module);
    PyObject *tensors, *grads, *inputs;
    int retain, create, allow_unused, accumulate;
    if (!PyArg_ParseTuple(args, "OOppOpp:_run_backward", &tensors, &grads, &retain, &create,
                          &inputs, &allow_unused, &accumulate))
        return NULL;
    PyObject *tseq = PySequence_Fast(tensors, "tensors must be a sequence");
    PyObject *gseq = tseq ? PySequence_Fast(grads, "grad_tensors must be a sequence") : NULL;
    PyObject *iseq = gseq ? PySequence_Fast(inputs, "inputs must be a sequence") : NULL;
    int flags = (retain ? PITH_RETAIN_GRAPH : 0) | (create ? PITH_CREATE_GRAPH : 0) |
                (allow_unused ? PITH_ALLOW_UNUSED : 0);
    PyObject *result = iseq ? run_backward(st, tseq, gseq, iseq, flags, accumulate) : NULL;
    Py_XDECREF(tseq);
    Py_XDECREF(gseq);
    Py_XDECREF(iseq);
    return result;
}

static PyObject *module_live_nodes(PyObject *module, PyObject *unused)
{
    return PyLong_FromSize_t(pith_live_nodes());
}

static PyObject *module_current_graph_task_id(PyObject *module, PyObject *unused)
{
    return PyLong_FromLongLong(pith_autograd_graph_task_id());
}

/* torch.autograd._is_checkpoint_valid: a reentrant checkpoint may run backward inside a
 * backward only when that backward accumulates into every leaf. */
static PyObject *module_is_checkpoint_valid(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(!pith_autograd_graph_task_filtered());
}

static PyMethodDef autograd_module_methods[] = {
    {"_current_graph_task_id", module_current_graph_task_id, METH_NOARGS,
     "The backward running on this thread (a number unique to it), or -1."},
    {"_is_checkpoint_valid", module_is_checkpoint_valid, METH_NOARGS,
     "Whether the running backward computes every leaf's gradient (not grad(), not "
     "backward(inputs=))."},
    {"_run_backward", module_run_backward, METH_VARARGS,
     "_run_backward(tensors, grad_tensors, retain_graph, create_graph, inputs, allow_unused, "
     "accumulate_grad): runs the engine."},
    {"_live_nodes", module_live_nodes, METH_NOARGS, "The number of live autograd nodes."},
    {"_remove_hook", module_remove_hook, METH_VARARGS,
     "_remove_hook(node, id): removes a tensor hook."},
    {NULL, NULL, 0, NULL},
};

int autograd_init(PyObject *module, pith_module_state *st)
{
    st->autograd.node_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &node_spec, NULL);
    if (!st->autograd.node_type || !(st->autograd.node_classes = PyDict_New()) ||
        PyModule_AddObjectRef(module, "_Node", (PyObject *)st->autograd.node_type) < 0 ||
        PyModule_AddFunctions(module, autograd_module_methods) < 0 ||
        type_add_methods(st->tensor_type, autograd_tensor_methods) < 0 ||
        autograd_graph_init(module, st) < 0)
        return -1;
    for (PyGetSetDef *def = autograd_tensor_getset; def->name; def++) {
        PyObject *descr = PyDescr_NewGetSet(st->tensor_type, def);
        int rc = descr ? PyDict_SetItemString(st->tensor_type->tp_dict, def->name, descr) : -1;
        Py_XDECREF(descr);
        if (rc < 0)
            return -1;
    }
    PyType_Modified(st->tensor_type);
    return autograd_function_init(module, st);
}
