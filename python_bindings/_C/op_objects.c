/* op_objects.c — the Python objects of operators: OpOverload (pith.ops.<ns>.<name>.
 * <overload>, one per registered operator) and Function and Method (pith.<name> and
 * Tensor.<name>: the overloads of one name, tried in order). Binding itself is binder.c's
 * (See Note [One binder]); which names become functions and methods is op_surface.c's. */
#include <string.h>

#include "binder_internal.h"
#include <structmember.h> /* after Python.h (state.h) */
#include "pydispatch.h"

static bool same_name(PyObject *key, PyObject *interned)
{
    return key == interned || (PyUnicode_GET_LENGTH(key) == PyUnicode_GET_LENGTH(interned) &&
                               PyUnicode_Compare(key, interned) == 0);
}

/* ---- OpOverload ---- */

static pith_module_state *state_of_object(PyObject *self)
{
    return PyType_GetModuleState(Py_TYPE(self));
}

static PyObject *overload_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                     PyObject *kwnames)
{
    overload_object *ov = (overload_object *)self;
    pith_module_state *st = state_of_object(self);
    bind_call call = {NULL, args, PyVectorcall_NARGS(nargsf), kwnames, MODE_OVERLOAD,
                      NUMBERS_ALL};
    bound_args b;
    bind_failure why;
    if (bind_match(st, ov, &call, &b, &why) < 0) {
        bind_raise(st, ov->qualified, &ov, 1, &call, &why);
        return NULL;
    }
    PyObject *result;
    if (bound_function_maybe(&b) &&
        bind_function_layer(st, ov, &b, self, args, call.nargs, kwnames, &result))
        return result;
    return overload_invoke(st, ov, &b, false);
}

static int overload_traverse(PyObject *self, visitproc visit, void *arg)
{
    overload_object *ov = (overload_object *)self;
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(ov->dict);
    Py_VISIT(ov->qualified);
    Py_VISIT(ov->schema);
    Py_VISIT(ov->return_type);
    Py_VISIT(ov->packet);
    for (int i = 0; ov->params && i < ov->nparams; i++) {
        Py_VISIT(ov->params[i].name);
        Py_VISIT(ov->params[i].default_obj);
    }
    return 0;
}

static int overload_clear(PyObject *self)
{
    overload_object *ov = (overload_object *)self;
    Py_CLEAR(ov->dict);
    Py_CLEAR(ov->qualified);
    Py_CLEAR(ov->schema);
    Py_CLEAR(ov->return_type);
    Py_CLEAR(ov->packet);
    for (int i = 0; ov->params && i < ov->nparams; i++) {
        Py_CLEAR(ov->params[i].name);
        Py_CLEAR(ov->params[i].default_obj);
    }
    return 0;
}

static void overload_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    overload_clear(self);
    PyMem_Free(((overload_object *)self)->params);
    type->tp_free(self);
    Py_DECREF(type);
}

static PyObject *overload_repr(PyObject *self)
{
    overload_object *ov = (overload_object *)self;
    const char *ns = pith_op_namespace(ov->op), *name = pith_op_base_name(ov->op),
               *overload = pith_op_overload_name(ov->op);
    return *overload ? PyUnicode_FromFormat("pith.ops.%s.%s.%s", ns, name, overload)
                     : PyUnicode_FromFormat("pith.ops.%s.%s", ns, name);
}

static PyObject *overload_get_name(PyObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(((overload_object *)self)->qualified);
}

static PyObject *overload_get_schema(PyObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(((overload_object *)self)->schema);
}

/* "add.Tensor", "add.default": PyTorch's OpOverload.__name__. */
static PyObject *overload_get_dunder_name(PyObject *self, void *closure)
{
    (void)closure;
    overload_object *ov = (overload_object *)self;
    const char *overload = pith_op_overload_name(ov->op);
    return PyUnicode_FromFormat("%s.%s", pith_op_base_name(ov->op),
                                *overload ? overload : "default");
}

static PyObject *overload_get_returns_tuple(PyObject *self, void *closure)
{
    (void)closure;
    return PyBool_FromLong(((overload_object *)self)->nreturns > 1);
}

static PyObject *overload_get_return_names(PyObject *self, void *closure)
{
    (void)closure;
    overload_object *ov = (overload_object *)self;
    if (!ov->named_returns)
        return PyTuple_New(0);
    PyObject *type = overload_return_type(state_of_object(self), ov);
    return type ? PyObject_GetAttrString(type, "_fields") : NULL;
}

/* OpOverload.arguments: pith._C.Argument(name, type, default, kwarg_only, mutable) per
 * argument, from the C parse; `default` is pith._C._NO_DEFAULT when there is none. */
static PyObject *overload_get_arguments(PyObject *self, void *closure)
{
    (void)closure;
    overload_object *ov = (overload_object *)self;
    pith_module_state *st = state_of_object(self);
    PyObject *list = PyTuple_New(ov->nparams);
    for (int i = 0; list && i < ov->nparams; i++) {
        const bind_param *p = &ov->params[i];
        PyObject *arg = PyStructSequence_New(st->binder.argument_type);
        PyObject *type = PyUnicode_FromString(pith_arg_type_name(p->type));
        if (!arg || !type) {
            Py_XDECREF(arg);
            Py_XDECREF(type);
            Py_CLEAR(list);
            break;
        }
        PyStructSequence_SetItem(arg, 0, Py_NewRef(p->name));
        PyStructSequence_SetItem(arg, 1, type);
        PyStructSequence_SetItem(arg, 2, Py_NewRef(p->default_obj ? p->default_obj
                                                                  : st->binder.no_default));
        PyStructSequence_SetItem(arg, 3, PyBool_FromLong(p->flags & PARAM_KWARG_ONLY));
        PyStructSequence_SetItem(arg, 4, PyBool_FromLong(p->flags & PARAM_MUTABLE));
        PyTuple_SET_ITEM(list, i, arg);
    }
    return list;
}

/* OpOverload.overloadpacket: its pith.ops.<ns>.<name> packet. pith/_ops.py makes the
 * packets when pith.ops is first looked into, not at import (they are a few hundred
 * objects that most programs never touch), so an overload reached another way (the `func`
 * of a __pith_dispatch__ handler) asks _ops to make them first. */
static PyObject *overload_get_packet(PyObject *self, void *closure)
{
    (void)closure;
    overload_object *ov = (overload_object *)self;
    if (!ov->packet) {
        PyObject *ops = PyImport_ImportModule("pith._ops");
        PyObject *done = ops ? PyObject_CallMethod(ops, "_refresh", NULL) : NULL;
        Py_XDECREF(ops);
        if (!done)
            return NULL;
        Py_DECREF(done);
    }
    if (!ov->packet)
        return PyErr_Format(PyExc_AttributeError, "%U has no overload packet", ov->qualified);
    return Py_NewRef(ov->packet);
}

static int overload_set_packet(PyObject *self, PyObject *value, void *closure)
{
    (void)closure;
    Py_XSETREF(((overload_object *)self)->packet, Py_XNewRef(value));
    return 0;
}

static PyGetSetDef overload_getset[] = {
    {"overloadpacket", overload_get_packet, overload_set_packet,
     "Its pith.ops packet (pith.ops.<ns>.<name>).", NULL},
    {"name", overload_get_name, NULL, "The qualified name, \"pith::add.Tensor\".", NULL},
    {"schema", overload_get_schema, NULL, "The schema text.", NULL},
    {"__name__", overload_get_dunder_name, NULL, NULL, NULL},
    {"arguments", overload_get_arguments, NULL, "The parsed arguments (pith._C.Argument).",
     NULL},
    {"returns_tuple", overload_get_returns_tuple, NULL, "Whether it returns several values.",
     NULL},
    {"return_names", overload_get_return_names, NULL, "The names of named results.", NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

static PyMemberDef overload_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(overload_object, vectorcall), READONLY, NULL},
    {"__dictoffset__", T_PYSSIZET, offsetof(overload_object, dict), READONLY, NULL},
    {NULL},
};

static PyType_Slot overload_slots[] = {
    {Py_tp_dealloc, overload_dealloc},
    {Py_tp_traverse, overload_traverse},
    {Py_tp_clear, overload_clear},
    {Py_tp_repr, overload_repr},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_getset, overload_getset},
    {Py_tp_members, overload_members},
    {Py_tp_doc, "One operator overload: pith.ops.<ns>.<name>.<overload>. Calling it binds "
                "the arguments from its schema and dispatches."},
    {0, NULL},
};

static PyType_Spec overload_spec = {
    .name = "pith._C.OpOverload",
    .basicsize = sizeof(overload_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |
             Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = overload_slots,
};

/* Whether the results are all named in the schema (max.dim's values and indices), so that
 * a call returns them as a pith.return_types.<name> named tuple. */
static bool returns_are_named(const overload_object *ov)
{
    if (ov->nreturns < 2)
        return false;
    for (int r = 0; r < ov->nreturns; r++) {
        pith_argument ret;
        if (pith_op_return(ov->op, r, &ret) != PITH_OK || !ret.name)
            return false;
    }
    return true;
}

/* The named tuple type pith.return_types.<name> of an overload whose results are named
 * (borrowed), shared by the overloads of one name; NULL with an exception on failure.
 * Made on first use, not with the overload: collections.namedtuple (and importing
 * collections) was a tenth of `import pith`'s instructions. */
PyObject *overload_return_type(pith_module_state *st, const overload_object *ov)
{
    /* The type is a cache of facts of the op: making it leaves the overload as it was. */
    overload_object *cache = (overload_object *)ov;
    if (ov->return_type)
        return ov->return_type;
    const char *base = pith_op_base_name(ov->op);
    PyObject *type = PyDict_GetItemString(st->binder.return_types, base); /* borrowed */
    if (type) {
        cache->return_type = Py_NewRef(type);
        return type;
    }
    PyObject *fields = PyTuple_New(ov->nreturns);
    for (int r = 0; fields && r < ov->nreturns; r++) {
        pith_argument ret;
        PyObject *name = pith_op_return(ov->op, r, &ret) == PITH_OK && ret.name
                             ? PyUnicode_FromString(ret.name)
                             : NULL;
        if (!name) {
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_RuntimeError, "pith: result %d of %U has no name", r,
                             ov->qualified);
            Py_CLEAR(fields);
        } else {
            PyTuple_SET_ITEM(fields, r, name);
        }
    }
    PyObject *collections = fields ? PyImport_ImportModule("collections") : NULL;
    type = collections ? PyObject_CallMethod(collections, "namedtuple", "sO", base, fields)
                       : NULL;
    Py_XDECREF(collections);
    Py_XDECREF(fields);
    PyObject *module = type ? PyUnicode_FromString("pith.return_types") : NULL;
    int rc = module ? PyObject_SetAttrString(type, "__module__", module) : -1;
    Py_XDECREF(module);
    if (rc < 0 || PyDict_SetItemString(st->binder.return_types, base, type) < 0) {
        Py_XDECREF(type);
        return NULL;
    }
    cache->return_type = type;
    return type;
}

static PyObject *default_as_python(pith_module_state *st, const pith_op *op, int i)
{
    pith_stack *stack = stack_take(st);
    if (!stack)
        return NULL;
    PyObject *v = NULL;
    if (pith_op_push_default(op, i, stack) != PITH_OK) {
        error_raise(st);
    } else if (pith_stack_kind(stack, 0) == PITH_VALUE_TENSOR) {
        v = Py_NewRef(Py_None); /* no schema default is a tensor */
    } else {
        v = stack_value_to_python(st, stack, 0, NULL, NULL);
    }
    stack_give_back(st, stack);
    return v;
}

static PyObject *overload_new(pith_module_state *st, const pith_op *op)
{
    int nparams = pith_op_num_arguments(op), nreturns = pith_op_num_returns(op);
    if (nparams < 0 || nreturns < 0)
        return error_raise(st);
    if (nparams > BINDER_MAX_PARAMS)
        return PyErr_Format(PyExc_NotImplementedError, "%s has %d arguments: Python calls take "
                            "operators of at most %d", pith_op_name(op), nparams,
                            BINDER_MAX_PARAMS);
    overload_object *ov = PyObject_GC_New(overload_object, st->binder.overload_type);
    if (!ov)
        return NULL;
    ov->vectorcall = overload_vectorcall;
    ov->dict = ov->qualified = ov->schema = ov->return_type = ov->packet = NULL;
    ov->op = op;
    ov->nparams = 0;
    ov->nreturns = nreturns;
    ov->npositional = 0;
    ov->self_index = ov->first_tensor = -1;
    ov->tensor_params = 0;
    ov->nout = 0;
    ov->out_first = nparams;
    ov->params = PyMem_Calloc((size_t)nparams + 1, sizeof *ov->params);
    PyObject_GC_Track(ov);
    if (!ov->params) {
        Py_DECREF(ov);
        return PyErr_NoMemory();
    }
    ov->qualified = PyUnicode_FromString(pith_op_name(op));
    ov->schema = PyUnicode_FromString(pith_op_schema(op));
    if (!ov->qualified || !ov->schema)
        goto fail;
    for (int i = 0; i < nparams; i++) {
        pith_argument a;
        if (pith_op_argument(op, i, &a) != PITH_OK) {
            error_raise(st);
            goto fail;
        }
        bind_param *p = &ov->params[i];
        p->type = a.type;
        p->list_size = a.list_size;
        p->flags = (a.kwarg_only ? PARAM_KWARG_ONLY : 0) | (a.has_default ? PARAM_HAS_DEFAULT : 0) |
                   (a.is_mutable ? PARAM_MUTABLE : 0);
        p->name = PyUnicode_InternFromString(a.name);
        ov->nparams = i + 1;
        if (!p->name || (a.has_default && !(p->default_obj = default_as_python(st, op, i))))
            goto fail;
        if (!a.kwarg_only)
            ov->npositional++;
        if (strcmp(a.name, "self") == 0)
            ov->self_index = i;
        bool tensor = a.type == PITH_TYPE_TENSOR || a.type == PITH_TYPE_OPT_TENSOR;
        if (tensor || a.type == PITH_TYPE_TENSOR_LIST || a.type == PITH_TYPE_LIST_OPT_TENSOR)
            ov->tensor_params |= (uint64_t)1 << i;
        if (tensor && ov->first_tensor < 0)
            ov->first_tensor = i;
        if (tensor && a.kwarg_only && a.is_mutable) {
            if (ov->nout == 0)
                ov->out_first = i;
            ov->nout++;
        }
    }
    ov->npositional_of[0] = ov->npositional_of[1] = 0;
    for (int i = 0; i < nparams; i++) {
        if (ov->params[i].flags & PARAM_KWARG_ONLY)
            continue;
        ov->positional[0][ov->npositional_of[0]++] = (unsigned char)i;
        if (i != ov->self_index)
            ov->positional[1][ov->npositional_of[1]++] = (unsigned char)i;
    }
    if (ov->nout && ov->out_first + ov->nout != nparams)
        ov->nout = 0; /* out arguments that are not last are ordinary keyword arguments */
    if (nreturns > PITH_MAX_RETURNS_PY) {
        PyErr_Format(PyExc_NotImplementedError, "%s has %d results: Python calls take "
                     "operators of at most %d", pith_op_name(op), nreturns, PITH_MAX_RETURNS_PY);
        goto fail;
    }
    for (int r = 0; r < nreturns; r++) {
        pith_argument ret, a;
        ov->return_alias[r] = -1;
        if (pith_op_return(op, r, &ret) != PITH_OK) {
            error_raise(st);
            goto fail;
        }
        for (int i = 0; ret.is_mutable && ret.alias_set && i < nparams; i++)
            if (pith_op_argument(op, i, &a) == PITH_OK && a.is_mutable &&
                a.alias_set == ret.alias_set)
                ov->return_alias[r] = i;
    }
    ov->named_returns = returns_are_named(ov);
    return (PyObject *)ov;
fail:
    Py_DECREF(ov);
    return NULL;
}

/* Makes the OpOverloads of the operators registered since the last look. */
static int overloads_sync(pith_module_state *st)
{
    size_t n = pith_op_count();
    for (size_t i = (size_t)PyList_GET_SIZE(st->binder.in_order); i < n; i++) {
        const pith_op *op = pith_op_at(i);
        if (!op)
            return error_raise(st), -1;
        PyObject *ov = overload_new(st, op);
        PyObject *key = ov ? PyLong_FromVoidPtr((void *)op) : NULL;
        int rc = key ? PyDict_SetItem(st->binder.by_op, key, ov) : -1;
        if (rc == 0)
            rc = PyList_Append(st->binder.in_order, ov);
        Py_XDECREF(key);
        Py_XDECREF(ov);
        if (rc < 0)
            return -1;
    }
    return 0;
}

PyObject *binder_overload_of(pith_module_state *st, const pith_op *op)
{
    PyObject *key = PyLong_FromVoidPtr((void *)op);
    if (!key)
        return NULL;
    PyObject *ov = PyDict_GetItemWithError(st->binder.by_op, key);
    if (!ov && !PyErr_Occurred() && overloads_sync(st) == 0)
        ov = PyDict_GetItemWithError(st->binder.by_op, key);
    if (!ov && !PyErr_Occurred())
        PyErr_Format(PyExc_RuntimeError, "pith: %s has no OpOverload", pith_op_name(op));
    Py_DECREF(key);
    return ov;
}

/* ---- Function and Method ---- */

/* Note [Python-only arguments]
 * A few keywords of PyTorch's Python functions are in no schema; PyTorch's own bindings
 * take them by hand, and so does the binder, before binding, which then binds the call
 * without them:
 *   - the factories (zeros, rand, arange, ...: a function whose every overload has a
 *     Device? device argument and no Tensor argument) take requires_grad=, pin_memory= and
 *     layout=. requires_grad=True makes the result a leaf that requires grad;
 *     pin_memory=True is a RuntimeError, as in a PyTorch without an accelerator; layout=
 *     must be None or pith.strided (NotImplementedError for the others). False and None
 *     mean the default;
 *   - nonzero and Tensor.nonzero take as_tuple=: True calls nonzero_numpy's function
 *     instead (one index tensor per dim), as PyTorch's binding does. */
static bool is_factory(const overload_object *ov)
{
    bool device = false;
    for (int i = 0; i < ov->nparams; i++) {
        pith_arg_type t = ov->params[i].type;
        if (t == PITH_TYPE_TENSOR || t == PITH_TYPE_OPT_TENSOR || t == PITH_TYPE_TENSOR_LIST ||
            t == PITH_TYPE_LIST_OPT_TENSOR)
            return false;
        device = device || (t == PITH_TYPE_OPT_DEVICE &&
                            PyUnicode_CompareWithASCIIString(ov->params[i].name, "device") == 0);
    }
    return device;
}

enum { FACTORY_KW_REQUIRES_GRAD, FACTORY_KW_PIN_MEMORY, FACTORY_KW_LAYOUT, FACTORY_KW_AS_TUPLE,
       FACTORY_KW_NONE };

static int factory_kw_of(const function_object *fn, PyObject *key)
{
    static const char *const names[] = {"requires_grad", "pin_memory", "layout", "as_tuple"};
    for (int k = 0; k < FACTORY_KW_NONE; k++)
        if ((k == FACTORY_KW_AS_TUPLE ? fn->as_tuple != NULL : fn->factory) &&
            PyUnicode_CompareWithASCIIString(key, names[k]) == 0)
            return k;
    return FACTORY_KW_NONE;
}

/* 0 (or 1 for as_tuple=True), or -1 with an exception. */
static int factory_kw_check(pith_module_state *st, PyObject *name, int which, PyObject *v)
{
    if (which == FACTORY_KW_AS_TUPLE)
        return PyObject_IsTrue(v);
    if (which == FACTORY_KW_LAYOUT) {
        if (v == Py_None || (st->strided && v == st->strided))
            return 0;
        PyErr_Format(PyExc_NotImplementedError, "%U(): layout=%R is not supported: pith "
                     "tensors are strided", name, v);
        return -1;
    }
    int on = v == Py_None ? 0 : PyObject_IsTrue(v);
    if (on <= 0 || which == FACTORY_KW_REQUIRES_GRAD)
        return on;
    PyErr_Format(PyExc_RuntimeError, "%U(): pin_memory=True needs an accelerator, and pith "
                 "has none", name);
    return -1;
}

/* Takes the Python-only arguments out of `call` (into `args`, which holds the call's
 * arguments and room for them, and a new kwnames in *kwnames_out); *as_tuple is set by
 * as_tuple=True, *requires_grad by requires_grad=True. 0, or -1 with an exception. */
static int factory_kwargs_take(pith_module_state *st, const function_object *fn,
                               bind_call *call, PyObject **args, PyObject **kwnames_out,
                               bool *as_tuple, bool *requires_grad)
{
    *kwnames_out = NULL;
    *as_tuple = false;
    *requires_grad = false;
    Py_ssize_t nkw = call->kwnames ? PyTuple_GET_SIZE(call->kwnames) : 0, kept = 0;
    int found = 0;
    for (Py_ssize_t k = 0; k < nkw; k++)
        found += factory_kw_of(fn, PyTuple_GET_ITEM(call->kwnames, k)) != FACTORY_KW_NONE;
    if (!found)
        return 0;
    PyObject *kwnames = PyTuple_New(nkw - found);
    if (!kwnames)
        return -1;
    for (Py_ssize_t i = 0; i < call->nargs; i++)
        args[i] = call->args[i];
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(call->kwnames, k);
        PyObject *value = call->args[call->nargs + k];
        int which = factory_kw_of(fn, key);
        if (which != FACTORY_KW_NONE) {
            int rc = factory_kw_check(st, fn->name, which, value);
            if (rc < 0) {
                Py_DECREF(kwnames);
                return -1;
            }
            *as_tuple = *as_tuple || (which == FACTORY_KW_AS_TUPLE && rc > 0);
            *requires_grad = *requires_grad || (which == FACTORY_KW_REQUIRES_GRAD && rc > 0);
            continue;
        }
        PyTuple_SET_ITEM(kwnames, kept, Py_NewRef(key));
        args[call->nargs + kept++] = value;
    }
    call->args = args;
    call->kwnames = kwnames;
    *kwnames_out = kwnames;
    return 0;
}

/* The call as the caller made it, for the function layer: the public callable and its
 * arguments (a method's receiver first). */
typedef struct {
    PyObject *func;
    PyObject *const *items;
    Py_ssize_t nargs;
    PyObject *kwnames;
    bool layer_ran; /* set when the function layer answered the call */
} outer_call;

static PyObject *function_call_bound(pith_module_state *st, function_object *fn,
                                     bind_call *callp, outer_call *outer);

static PyObject *function_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf,
                                     PyObject *kwnames)
{
    function_object *fn = (function_object *)self;
    pith_module_state *st = state_of_object(self);
    bind_call call = {NULL,      args,        PyVectorcall_NARGS(nargsf), kwnames,
                      fn->mode, fn->numbers, fn->tensor_varargs};
    if (fn->mode == MODE_METHOD) {
        if (call.nargs < 1 || !tensor_check(st, args[0])) {
            PyErr_Format(PyExc_TypeError, "descriptor '%U' for 'pith.Tensor' objects needs a "
                         "pith.Tensor, not %s", fn->name,
                         call.nargs < 1 ? "nothing" : Py_TYPE(args[0])->tp_name);
            return NULL;
        }
        call.receiver = args[0];
        call.args = args + 1;
        call.nargs--;
    }
    PyObject *taken_kwnames = NULL, *small_args[16], **taken_args = small_args;
    bool as_tuple = false, requires_grad = false;
    if ((fn->factory || fn->as_tuple) && kwnames) {
        Py_ssize_t total = call.nargs + PyTuple_GET_SIZE(kwnames);
        if (total > 16 && !(taken_args = PyMem_Malloc((size_t)total * sizeof *taken_args)))
            return PyErr_NoMemory();
        if (factory_kwargs_take(st, fn, &call, taken_args, &taken_kwnames, &as_tuple,
                                &requires_grad) < 0) {
            if (taken_args != small_args)
                PyMem_Free(taken_args);
            return NULL;
        }
    }
    outer_call outer = {self, args, PyVectorcall_NARGS(nargsf), kwnames, false};
    PyObject *result = function_call_bound(
        st, as_tuple ? (function_object *)fn->as_tuple : fn, &call, &outer);
    /* requires_grad=True applies to the op's own result; a handler's answer (it got the
     * call with requires_grad= in it) is returned as it is, as PyTorch's. */
    if (result && requires_grad && !outer.layer_ran && tensor_check(st, result) &&
        factory_requires_grad(st, tensor_of(result)) < 0)
        Py_CLEAR(result);
    Py_XDECREF(taken_kwnames);
    if (taken_args != small_args)
        PyMem_Free(taken_args);
    return result;
}

static PyObject *function_call_bound(pith_module_state *st, function_object *fn,
                                     bind_call *callp, outer_call *outer)
{
    bind_call call = *callp;
    bool want_out = false;
    Py_ssize_t nkw = call.kwnames ? PyTuple_GET_SIZE(call.kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++)
        if (same_name(PyTuple_GET_ITEM(call.kwnames, k), st->binder.str_out))
            want_out = call.args[call.nargs + k] != Py_None;
    overload_object *const *overloads = fn->overloads + (want_out ? fn->nplain : 0);
    Py_ssize_t n = want_out ? fn->nout : fn->nplain;
    if (n == 0) {
        PyErr_Format(PyExc_TypeError, "%U() got an unexpected keyword argument 'out'",
                     fn->name);
        return NULL;
    }
    bound_args b;
    bind_failure why, first = {0};
    for (Py_ssize_t i = 0; i < n; i++) {
        if (bind_match(st, overloads[i], &call, &b, &why) == 0) {
            PyObject *result;
            if (bound_function_maybe(&b) &&
                bind_function_layer(st, overloads[i], &b, outer->func, outer->items,
                                    outer->nargs, outer->kwnames, &result)) {
                outer->layer_ran = true;
                return result;
            }
            return overload_invoke(st, overloads[i], &b, true);
        }
        if (i == 0)
            first = why;
    }
    bind_raise(st, fn->name, overloads, n, &call, &first);
    return NULL;
}

static int function_traverse(PyObject *self, visitproc visit, void *arg)
{
    function_object *fn = (function_object *)self;
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(fn->name);
    Py_VISIT(fn->as_tuple);
    for (Py_ssize_t i = 0; fn->overloads && i < fn->nplain + fn->nout; i++)
        Py_VISIT(fn->overloads[i]);
    return 0;
}

static int function_clear(PyObject *self)
{
    function_object *fn = (function_object *)self;
    Py_CLEAR(fn->name);
    Py_CLEAR(fn->as_tuple);
    for (Py_ssize_t i = 0; fn->overloads && i < fn->nplain + fn->nout; i++)
        Py_CLEAR(fn->overloads[i]);
    return 0;
}

static void function_dealloc(PyObject *self)
{
    PyTypeObject *type = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    function_clear(self);
    PyMem_Free(((function_object *)self)->overloads);
    type->tp_free(self);
    Py_DECREF(type);
}

static PyObject *function_repr(PyObject *self)
{
    function_object *fn = (function_object *)self;
    return fn->mode == MODE_METHOD
               ? PyUnicode_FromFormat("<method '%U' of 'pith.Tensor' objects>", fn->name)
               : PyUnicode_FromFormat("<built-in function %U>", fn->name);
}

/* A method looked up on a tensor is bound to it; looked up on the class, it is itself. */
static PyObject *method_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    (void)type;
    if (!obj || obj == Py_None)
        return Py_NewRef(self);
    return PyMethod_New(self, obj);
}

static PyObject *function_get_name(PyObject *self, void *closure)
{
    (void)closure;
    return Py_NewRef(((function_object *)self)->name);
}

static PyObject *function_get_qualname(PyObject *self, void *closure)
{
    (void)closure;
    function_object *fn = (function_object *)self;
    return fn->mode == MODE_METHOD ? PyUnicode_FromFormat("Tensor.%U", fn->name)
                                   : Py_NewRef(fn->name);
}

static PyObject *function_get_overloads(PyObject *self, void *closure)
{
    (void)closure;
    function_object *fn = (function_object *)self;
    PyObject *list = PyTuple_New(fn->nplain + fn->nout);
    for (Py_ssize_t i = 0; list && i < fn->nplain + fn->nout; i++)
        PyTuple_SET_ITEM(list, i, Py_NewRef(fn->overloads[i]));
    return list;
}

/* The signatures, one a line, as the binder's errors list them. */
static PyObject *function_get_doc(PyObject *self, void *closure)
{
    (void)closure;
    function_object *fn = (function_object *)self;
    pith_module_state *st = state_of_object(self);
    PyObject *sigs = binder_signatures(st, fn->overloads, fn->nplain + fn->nout, fn->mode);
    if (!sigs)
        return NULL;
    PyObject *sep = PyUnicode_FromFormat("\n%U", fn->name);
    PyObject *joined = sep ? PyUnicode_Join(sep, sigs) : NULL;
    Py_XDECREF(sep);
    Py_DECREF(sigs);
    if (!joined)
        return NULL;
    PyObject *doc = PyUnicode_FromFormat("%U%U", fn->name, joined);
    Py_DECREF(joined);
    return doc;
}

static PyGetSetDef function_getset[] = {
    {"__name__", function_get_name, NULL, NULL, NULL},
    {"__qualname__", function_get_qualname, NULL, NULL, NULL},
    {"__doc__", function_get_doc, NULL, NULL, NULL},
    {"overloads", function_get_overloads, NULL,
     "The OpOverloads tried, in order (those taking out= last).", NULL},
    {NULL},
};

static PyMemberDef function_members[] = {
    {"__vectorcalloffset__", T_PYSSIZET, offsetof(function_object, vectorcall), READONLY, NULL},
    {NULL},
};

static PyType_Slot function_slots[] = {
    {Py_tp_dealloc, function_dealloc},
    {Py_tp_traverse, function_traverse},
    {Py_tp_clear, function_clear},
    {Py_tp_repr, function_repr},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_getset, function_getset},
    {Py_tp_members, function_members},
    {0, NULL},
};

static PyType_Slot method_slots[] = {
    {Py_tp_dealloc, function_dealloc},
    {Py_tp_traverse, function_traverse},
    {Py_tp_clear, function_clear},
    {Py_tp_repr, function_repr},
    {Py_tp_call, PyVectorcall_Call},
    {Py_tp_descr_get, method_descr_get},
    {Py_tp_getset, function_getset},
    {Py_tp_members, function_members},
    {0, NULL},
};

#define FUNCTION_FLAGS                                                                      \
    (Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL |                 \
     Py_TPFLAGS_DISALLOW_INSTANTIATION | Py_TPFLAGS_IMMUTABLETYPE)

static PyType_Spec function_spec = {
    .name = "pith._C.Function",
    .basicsize = sizeof(function_object),
    .flags = FUNCTION_FLAGS,
    .slots = function_slots,
};

/* Py_TPFLAGS_METHOD_DESCRIPTOR: x.add(y) calls the method with (x, y), making no bound
 * method, as CPython's own method descriptors do. */
static PyType_Spec method_spec = {
    .name = "pith._C.Method",
    .basicsize = sizeof(function_object),
    .flags = FUNCTION_FLAGS | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .slots = method_slots,
};

/* Note [Overload order]
 * A function tries its overloads in PyTorch's order (sort_overloads in PyTorch's
 * gen_python_functions.py): of two overloads with as many arguments, one whose every
 * argument has the other's type, or a weaker one, goes last. Weaker means Scalar against
 * Tensor (a 0-dim tensor binds Scalar too, but should take the Tensor overload), int[]
 * against int (sum(x, 1) is the int overload where there are both), Tensor[] against any
 * other list, and int against Tensor. Overloads that take out= are tried only when out= is
 * given (and not None), and then only they. */
static bool type_weaker(pith_arg_type a, pith_arg_type b)
{
    return (a == PITH_TYPE_SCALAR && b == PITH_TYPE_TENSOR) ||
           (a == PITH_TYPE_OPT_SCALAR && b == PITH_TYPE_OPT_TENSOR) ||
           (a == PITH_TYPE_INT_LIST && (b == PITH_TYPE_INT || b == PITH_TYPE_OPT_INT)) ||
           (a == PITH_TYPE_TENSOR_LIST && (b == PITH_TYPE_INT_LIST || b == PITH_TYPE_OPT_INT_LIST ||
                                           b == PITH_TYPE_LIST_OPT_TENSOR)) ||
           (a == PITH_TYPE_INT && b == PITH_TYPE_TENSOR);
}

static bool overload_weaker(const overload_object *a, const overload_object *b)
{
    int na = a->nparams - a->nout, nb = b->nparams - b->nout;
    if (na != nb)
        return false;
    bool equal = true;
    for (int i = 0; i < na; i++) {
        pith_arg_type ta = a->params[i].type, tb = b->params[i].type;
        if (ta != tb && !type_weaker(ta, tb))
            return false;
        equal = equal && ta == tb;
    }
    return !equal;
}

static void overloads_sort(overload_object **v, Py_ssize_t n)
{
    for (bool moved = true; moved;) {
        moved = false;
        for (Py_ssize_t i = 0; i + 1 < n; i++)
            for (Py_ssize_t j = i + 1; j < n; j++)
                if (overload_weaker(v[i], v[j])) {
                    overload_object *t = v[i];
                    memmove(v + i, v + i + 1, (size_t)(j - i) * sizeof *v);
                    v[j] = t;
                    moved = true;
                    break;
                }
    }
}

/* The pith:: OpOverloads named `name` (a borrowed list, in registry order), or NULL (no
 * exception) when there are none; -1 (exception) is reported as NULL with PyErr_Occurred.
 * An index made once for the whole surface: looking each of ~300 names up by scanning
 * every overload cost a fifth of `import pith`'s instructions. */
PyObject *binder_overloads_named(pith_module_state *st, const char *name)
{
    if (!st->binder.by_name) {
        if (!(st->binder.by_name = PyDict_New()))
            return NULL;
        st->binder.by_name_seen = 0;
    }
    Py_ssize_t total = PyList_GET_SIZE(st->binder.in_order);
    for (; st->binder.by_name_seen < total; st->binder.by_name_seen++) {
        overload_object *ov =
            (overload_object *)PyList_GET_ITEM(st->binder.in_order, st->binder.by_name_seen);
        if (strcmp(pith_op_namespace(ov->op), "pith") != 0)
            continue;
        const char *base = pith_op_base_name(ov->op);
        PyObject *list = PyDict_GetItemString(st->binder.by_name, base); /* borrowed */
        if (!list) {
            list = PyList_New(0);
            int rc = list ? PyDict_SetItemString(st->binder.by_name, base, list) : -1;
            Py_XDECREF(list); /* the dict holds it */
            if (rc < 0)
                return NULL;
        }
        if (PyList_Append(list, (PyObject *)ov) < 0)
            return NULL;
    }
    return PyDict_GetItemString(st->binder.by_name, name);
}

/* Whether `ov` can be called as `mode`: an overload without self is no method (none
 * today). */
static bool overload_fits(const overload_object *ov, int mode)
{
    return mode != MODE_METHOD || ov->self_index >= 0;
}

/* The function or method of the built-in ops named `name`; NULL with an exception (a name
 * with no operator is a broken op table). */
PyObject *function_new(pith_module_state *st, const char *name, int mode, int numbers)
{
    PyTypeObject *type = mode == MODE_METHOD ? st->binder.method_type : st->binder.function_type;
    function_object *fn = PyObject_GC_New(function_object, type);
    if (!fn)
        return NULL;
    fn->vectorcall = function_vectorcall;
    fn->mode = mode;
    fn->numbers = numbers;
    fn->tensor_varargs = false;
    fn->nplain = fn->nout = 0;
    fn->factory = false;
    fn->as_tuple = NULL;
    fn->overloads = NULL;
    fn->name = PyUnicode_InternFromString(name);
    PyObject_GC_Track(fn);
    /* The array is sized to the overloads found, not to every registered one: a Function
     * per surface name (about 300 of them) each holding a registry-sized array would
     * touch a page of heap apiece at import. */
    PyObject *named = fn->name ? binder_overloads_named(st, name) : NULL;
    if (!named && PyErr_Occurred())
        goto fail;
    Py_ssize_t total = named ? PyList_GET_SIZE(named) : 0, found = 0;
    for (Py_ssize_t i = 0; i < total; i++)
        found += overload_fits((overload_object *)PyList_GET_ITEM(named, i), mode);
    if (!fn->name || !(fn->overloads = PyMem_Calloc((size_t)found + 1, sizeof *fn->overloads)))
        goto fail;
    for (int pass = 0; pass < 2; pass++) /* the plain overloads, then the out ones */
        for (Py_ssize_t i = 0; i < total; i++) {
            overload_object *ov = (overload_object *)PyList_GET_ITEM(named, i);
            if (!overload_fits(ov, mode) || (ov->nout > 0) != pass)
                continue;
            fn->overloads[fn->nplain + fn->nout] = (overload_object *)Py_NewRef(ov);
            if (pass)
                fn->nout++;
            else
                fn->nplain++;
        }
    if (fn->nplain + fn->nout == 0) {
        PyErr_Format(PyExc_RuntimeError, "pith: the op table's Python surface names '%s', "
                     "which no %s operator has", name, mode == MODE_METHOD ? "method" : "");
        goto fail;
    }
    overloads_sort(fn->overloads, fn->nplain);
    overloads_sort(fn->overloads + fn->nplain, fn->nout);
    fn->factory = mode == MODE_FUNCTION;
    for (Py_ssize_t i = 0; i < fn->nplain + fn->nout; i++)
        fn->factory = fn->factory && is_factory(fn->overloads[i]);
    if (strcmp(name, "nonzero") == 0 &&
        !(fn->as_tuple = function_new(st, "nonzero_numpy", mode, numbers)))
        goto fail;
    return (PyObject *)fn;
fail:
    Py_DECREF(fn);
    return NULL;
}

/* _op_overloads() -> [OpOverload, ...] of every registered operator, in registry order. */
static PyObject *module_op_overloads(PyObject *module, PyObject *unused)
{
    (void)unused;
    pith_module_state *st = state_of_module(module);
    if (overloads_sync(st) < 0)
        return NULL;
    return PyList_GetSlice(st->binder.in_order, 0, PyList_GET_SIZE(st->binder.in_order));
}

/* _set_strided(layout): pith.strided, the one layout factories accept (Note [Python-only
 * arguments]); pith/_api.py makes it. */
static PyObject *module_set_strided(PyObject *module, PyObject *layout)
{
    pith_module_state *st = state_of_module(module);
    Py_XSETREF(st->strided, Py_NewRef(layout));
    Py_RETURN_NONE;
}

static PyMethodDef binder_module_methods[] = {
    {"_set_strided", module_set_strided, METH_O, "Sets pith.strided (pith._api)."},
    {"_op_overloads", module_op_overloads, METH_NOARGS,
     "The OpOverload of every registered operator, in registry order."},
    {NULL},
};

static PyStructSequence_Field argument_fields[] = {
    {"name", NULL}, {"type", NULL}, {"default", NULL}, {"kwarg_only", NULL},
    {"mutable", NULL}, {NULL, NULL},
};

static PyStructSequence_Desc argument_desc = {
    "pith._C.Argument", "One argument of an operator's schema, as the C parser read it.",
    argument_fields, 5,
};

int binder_init(PyObject *module, pith_module_state *st)
{
    st->binder.overload_type =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &overload_spec, NULL);
    st->binder.function_type =
        (PyTypeObject *)PyType_FromModuleAndSpec(module, &function_spec, NULL);
    st->binder.method_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &method_spec, NULL);
    st->binder.argument_type = PyStructSequence_NewType(&argument_desc);
    st->binder.by_op = PyDict_New();
    st->binder.in_order = PyList_New(0);
    st->binder.return_types = PyDict_New();
    st->binder.str_out = PyUnicode_InternFromString("out");
    st->binder.str_input = PyUnicode_InternFromString("input");
    st->binder.str_self = PyUnicode_InternFromString("self");
    st->binder.no_default = PyObject_CallNoArgs((PyObject *)&PyBaseObject_Type);
    if (!st->binder.overload_type || !st->binder.function_type || !st->binder.method_type ||
        !st->binder.argument_type || !st->binder.by_op || !st->binder.in_order ||
        !st->binder.return_types || !st->binder.str_out || !st->binder.str_input ||
        !st->binder.str_self || !st->binder.no_default)
        return -1;
    if (PyModule_AddObjectRef(module, "OpOverload", (PyObject *)st->binder.overload_type) < 0 ||
        PyModule_AddObjectRef(module, "Function", (PyObject *)st->binder.function_type) < 0 ||
        PyModule_AddObjectRef(module, "Method", (PyObject *)st->binder.method_type) < 0 ||
        PyModule_AddObjectRef(module, "Argument", (PyObject *)st->binder.argument_type) < 0 ||
        PyModule_AddObjectRef(module, "_NO_DEFAULT", st->binder.no_default) < 0 ||
        PyModule_AddFunctions(module, binder_module_methods) < 0 ||
        PyModule_AddFunctions(module, surface_module_methods) < 0)
        return -1;
    if (overloads_sync(st) < 0)
        return -1;
    int rc = surface_install(module, st);
    Py_CLEAR(st->binder.by_name); /* the index is for making the surface only */
    return rc;
}

int binder_traverse(pith_module_state *st, visitproc visit, void *arg)
{
    Py_VISIT(st->binder.overload_type);
    Py_VISIT(st->binder.function_type);
    Py_VISIT(st->binder.method_type);
    Py_VISIT(st->binder.argument_type);
    Py_VISIT(st->binder.by_op);
    Py_VISIT(st->binder.in_order);
    Py_VISIT(st->binder.by_name);
    Py_VISIT(st->binder.return_types);
    Py_VISIT(st->binder.no_default);
    return 0;
}

void binder_clear(pith_module_state *st)
{
    Py_CLEAR(st->binder.overload_type);
    Py_CLEAR(st->binder.function_type);
    Py_CLEAR(st->binder.method_type);
    Py_CLEAR(st->binder.argument_type);
    Py_CLEAR(st->binder.by_op);
    Py_CLEAR(st->binder.in_order);
    Py_CLEAR(st->binder.by_name);
    Py_CLEAR(st->binder.return_types);
    Py_CLEAR(st->binder.str_out);
    Py_CLEAR(st->binder.str_input);
    Py_CLEAR(st->binder.str_self);
    Py_CLEAR(st->binder.no_default);
    while (st->binder.nstacks > 0)
        pith_stack_free(st->binder.stacks[--st->binder.nstacks]);
}
