/* op_surface.c — the op file's Python surface made into pith.<name> functions and
 * Tensor.<name> methods (See Note [The Python surface of the op table]), and the specs
 * that __pith_dispatch__ handlers are called with, read from the OpOverloads (See Note
 * [Arguments of a boxed call], python_dispatch.c). */
#include <string.h>

#include "binder_internal.h"
#include "pydispatch.h"

/* ---- the Python surface ---- */

/* Note [The Python surface of the op table]
 * Which op names Python shows, where, and which of their Tensor arguments take Python
 * numbers: the `python` and `numbers` keys of each op of the op file (ops/ops.toml), which
 * scripts/gen_ops.py writes into generated/op_surface.inc as surface[]. A name (a schema
 * base name) groups every overload of that name: "max" is max, max.other and max.dim.
 *     BOTH      pith.<name>(...) and Tensor.<name>(...)
 *     FUNCTION  pith.<name>(...) only
 *     METHOD    Tensor.<name>(...) only
 *     INTERNAL  reachable only as pith.ops.pith.<name> (aliases, and ops whose Python form
 *               is written by hand in pith/_api.py or module.c)
 * The out overloads of a name (those with a mutable keyword-only argument) are chosen by
 * `out=`; a METHOD or BOTH name whose in-place ops exist (name_, e.g. add_) also gets the
 * method Tensor.<name>_ unless name_ has a surface of its own.
 *
 * NUMBERS says where a Python bool, int or float binds a Tensor argument (as a wrapped
 * number; See Note [Python scalars as wrapped numbers]), following PyTorch:
 *     ALL    every Tensor argument that the op only reads (PyTorch's numbers-as-tensors
 *            ops, add/sub/mul/div/floor_divide/copy_, and the ops that have a Scalar
 *            overload for either operand: remainder, pow, bitwise_*)
 *     OTHER  every such argument but the first (the ops with a Scalar overload of `other`
 *            only: the comparisons; where's self and other)
 *     NONE   none (maximum(x, 2) is a TypeError, as in PyTorch)
 *
 * Every overload binds through one binder (binder.c), so a new unary op is one op record
 * plus its loop. tests/python/test_op_surface.py fails when a built-in op name has no
 * surface.
 *
 * Note [Tensors as varargs]
 * The functions whose op has `varargs = true` take the tensors of their Tensor[] parameter
 * (the last positional one) either as one list or tuple or as separate positional
 * arguments, as torch.functional's `*tensors` wrappers do: einsum(eq, a, b) is
 * einsum(eq, [a, b]) and meshgrid(a, b) is meshgrid([a, b]). The binder's rule
 * (bind_match, binder.c): when such a function's call has at least as many positional
 * arguments as come before the list, the arguments from the list's position on are the
 * list, unless there is exactly one and it is a list or tuple (or none, and the list is
 * given by keyword). Other Tensor[] functions (cat, stack) take one list only, as in
 * PyTorch. broadcast_tensors(a, b) is broadcast_tensors([a, b]) by the same rule. */

enum { VARIANT_BOTH, VARIANT_FUNCTION, VARIANT_METHOD, VARIANT_INTERNAL };

typedef struct {
    const char *name;
    int variants, numbers;
} surface_row;

/* surface[], tensor_varargs[], elementwise_unary[] and elementwise_binary[], from the op
 * file (scripts/gen_ops.py). */
#include "generated/op_surface.inc"
#define SURFACE_ROWS ((Py_ssize_t)(sizeof surface / sizeof *surface))

/* Whether pith.<name> takes its tensors as varargs: See Note [Tensors as varargs]. */
static bool takes_tensor_varargs(const char *name)
{
    for (size_t i = 0; i < sizeof tensor_varargs / sizeof *tensor_varargs; i++)
        if (strcmp(tensor_varargs[i], name) == 0)
            return true;
    return false;
}

static bool surface_has(const char *name)
{
    for (Py_ssize_t i = 0; i < SURFACE_ROWS; i++)
        if (strcmp(surface[i].name, name) == 0)
            return true;
    return false;
}

/* 1 when a pith:: operator is named `name`, 0 when none is, -1 (exception) on failure. */
static int builtin_name_exists(pith_module_state *st, const char *name)
{
    if (binder_overloads_named(st, name))
        return 1;
    return PyErr_Occurred() ? -1 : 0;
}

static int install(PyObject *where, PyObject *obj)
{
    if (!obj)
        return -1;
    int rc = PyObject_SetAttr(where, ((function_object *)obj)->name, obj);
    Py_DECREF(obj);
    return rc;
}

/* pith._C.<name> for the functions and pith.Tensor.<name> for the methods of every row. */
int surface_install(PyObject *module, pith_module_state *st)
{
    PyObject *tensor = (PyObject *)st->tensor_type;
    for (Py_ssize_t i = 0; i < SURFACE_ROWS; i++) {
        const surface_row *row = &surface[i];
        if (row->variants == VARIANT_INTERNAL) {
            int exists = builtin_name_exists(st, row->name);
            if (exists < 0)
                return -1;
            if (!exists) {
                PyErr_Format(PyExc_RuntimeError, "pith: the op table's Python surface names "
                             "'%s', which no operator has", row->name);
                return -1;
            }
            continue;
        }
        if (row->variants == VARIANT_BOTH || row->variants == VARIANT_FUNCTION) {
            PyObject *fn = function_new(st, row->name, MODE_FUNCTION, row->numbers);
            if (fn)
                ((function_object *)fn)->tensor_varargs = takes_tensor_varargs(row->name);
            if (install(module, fn) < 0)
                return -1;
        }
        if (row->variants == VARIANT_FUNCTION)
            continue;
        if (install(tensor, function_new(st, row->name, MODE_METHOD, row->numbers)) < 0)
            return -1;
        char inplace[128];
        snprintf(inplace, sizeof inplace, "%s_", row->name);
        int inplace_exists = surface_has(inplace) ? 0 : builtin_name_exists(st, inplace);
        if (inplace_exists < 0 ||
            (inplace_exists && install(tensor, function_new(st, inplace, MODE_METHOD,
                                                            row->numbers)) < 0))
            return -1;
    }
    PyType_Modified(st->tensor_type);
    return 0;
}

/* _surface() -> [(name, variants)]: the rows, for pith/_ops.py and the tests. */
static PyObject *module_surface(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    static const char *const variant_names[] = {"both", "function", "method", "internal"};
    PyObject *list = PyList_New(SURFACE_ROWS);
    for (Py_ssize_t i = 0; list && i < SURFACE_ROWS; i++) {
        PyObject *row = Py_BuildValue("(ss)", surface[i].name, variant_names[surface[i].variants]);
        if (!row)
            Py_CLEAR(list);
        else
            PyList_SET_ITEM(list, i, row);
    }
    return list;
}

/* _tensor_varargs() -> (names): the functions of Note [Tensors as varargs], for the fuzz
 * generator. */
static PyObject *module_tensor_varargs(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    Py_ssize_t n = (Py_ssize_t)(sizeof tensor_varargs / sizeof *tensor_varargs);
    PyObject *names = PyTuple_New(n);
    for (Py_ssize_t i = 0; names && i < n; i++) {
        PyObject *name = PyUnicode_FromString(tensor_varargs[i]);
        if (!name) {
            Py_CLEAR(names);
            break;
        }
        PyTuple_SET_ITEM(names, i, name);
    }
    return names;
}

/* _elementwise_ops() -> (unary names, binary names): pith/ops.h's lists, which the
 * property tests check their NumPy references against. */
static PyObject *module_elementwise_ops(PyObject *module, PyObject *unused)
{
    (void)module;
    (void)unused;
    const char *const *unary = elementwise_unary, *const *binary = elementwise_binary;
    PyObject *u = PyTuple_New((Py_ssize_t)(sizeof elementwise_unary / sizeof *elementwise_unary));
    PyObject *b = PyTuple_New((Py_ssize_t)(sizeof elementwise_binary / sizeof *elementwise_binary));
    for (Py_ssize_t i = 0; u && b && i < PyTuple_GET_SIZE(u); i++)
        PyTuple_SET_ITEM(u, i, PyUnicode_FromString(unary[i]));
    for (Py_ssize_t i = 0; u && b && i < PyTuple_GET_SIZE(b); i++)
        PyTuple_SET_ITEM(b, i, PyUnicode_FromString(binary[i]));
    if (!u || !b || PyErr_Occurred()) {
        Py_XDECREF(u);
        Py_XDECREF(b);
        return NULL;
    }
    return Py_BuildValue("(NN)", u, b);
}

/* ---- specs of handler calls ---- */

static int return_kind(pith_arg_type type)
{
    switch (type) {
    case PITH_TYPE_TENSOR: return RET_TENSOR;
    case PITH_TYPE_OPT_TENSOR: return RET_OPT_TENSOR;
    case PITH_TYPE_TENSOR_LIST: return RET_TENSOR_LIST;
    case PITH_TYPE_BOOL: return RET_BOOL;
    case PITH_TYPE_INT: return RET_INT;
    case PITH_TYPE_INT_LIST: return RET_INT_LIST;
    case PITH_TYPE_FLOAT: return RET_FLOAT;
    case PITH_TYPE_SCALAR: return RET_SCALAR;
    case PITH_TYPE_STR: return RET_STR;
    case PITH_TYPE_DTYPE: return RET_DTYPE;
    default: return -1;
    }
}

PyObject *binder_dispatch_spec(pith_module_state *st, const pith_op *op)
{
    overload_object *ov = (overload_object *)binder_overload_of(st, op);
    if (!ov)
        return NULL;
    int kwarg_start = ov->nparams;
    for (int i = ov->nparams - 1; i >= 0 && (ov->params[i].flags & PARAM_KWARG_ONLY); i--)
        kwarg_start = i;
    PyObject *names = PyTuple_New(ov->nparams), *defaults = PyTuple_New(ov->nparams),
             *int_lists = PyTuple_New(ov->nparams), *returns = PyTuple_New(ov->nreturns);
    if (!names || !defaults || !int_lists || !returns)
        goto fail;
    for (int i = 0; i < ov->nparams; i++) {
        const bind_param *p = &ov->params[i];
        PyTuple_SET_ITEM(names, i, Py_NewRef(p->name));
        PyTuple_SET_ITEM(defaults, i, Py_NewRef(p->default_obj ? p->default_obj
                                                               : st->binder.no_default));
        PyTuple_SET_ITEM(int_lists, i, PyBool_FromLong(p->type == PITH_TYPE_INT_LIST ||
                                                       p->type == PITH_TYPE_OPT_INT_LIST));
    }
    for (int r = 0; r < ov->nreturns; r++) {
        pith_argument ret;
        if (pith_op_return(op, r, &ret) != PITH_OK) {
            error_raise(st);
            goto fail;
        }
        int kind = return_kind(ret.type);
        if (kind < 0) {
            PyErr_Format(PyExc_TypeError, "%s: __pith_dispatch__ cannot return a %s",
                         pith_op_name(op), pith_arg_type_name(ret.type));
            goto fail;
        }
        PyTuple_SET_ITEM(returns, r, PyLong_FromLong(kind));
    }
    return Py_BuildValue("(OiNNNN)", ov, kwarg_start, names, defaults, returns, int_lists);
fail:
    Py_XDECREF(names);
    Py_XDECREF(defaults);
    Py_XDECREF(int_lists);
    Py_XDECREF(returns);
    return NULL;
}

/* _dispatch_spec(name): the spec of "ns::name.overload" (pith.utils hands it to the
 * dispatch entry; See Note [Arguments of a boxed call]). */
static PyObject *module_dispatch_spec(PyObject *module, PyObject *name)
{
    pith_module_state *st = state_of_module(module);
    const char *text = PyUnicode_Check(name) ? PyUnicode_AsUTF8(name) : NULL;
    if (!text)
        return PyErr_Occurred() ? NULL
                                : PyErr_Format(PyExc_TypeError, "_dispatch_spec(name: str)");
    const pith_op *op = pith_op_find(text);
    return op ? binder_dispatch_spec(st, op) : error_raise(st);
}


PyMethodDef surface_module_methods[] = {
    {"_surface", module_surface, METH_NOARGS,
     "[(name, variants)]: the op table's Python surface."},
    {"_tensor_varargs", module_tensor_varargs, METH_NOARGS,
     "(names): the functions that take their tensors as varargs too."},
    {"_elementwise_ops", module_elementwise_ops, METH_NOARGS,
     "(unary, binary): the names of the elementwise ops (pith/ops.h)."},
    {"_dispatch_spec", module_dispatch_spec, METH_O,
     "_dispatch_spec(name): what a __pith_dispatch__ handler call is made from."},
    {NULL},
};
