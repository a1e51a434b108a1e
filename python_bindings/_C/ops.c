/* ops.c — the generic, schema-driven path to every registered operator: _op_list() for
 * pith.ops, and _call_op(), which pushes Python values onto a boxed stack, calls the op
 * through the dispatcher and converts the results back. Argument binding (positional and
 * keyword names, defaults) is done from the schema in python_bindings/pith/_ops.py. */
#include <string.h>

#include "state.h"

/* _op_list() -> [(qualified_name, schema), ...] */
static PyObject *ops_list(PyObject *module, PyObject *unused)
{
    size_t n = pith_op_count();
    PyObject *list = PyList_New((Py_ssize_t)n);
    for (size_t i = 0; list && i < n; i++) {
        const pith_op *op = pith_op_at(i);
        PyObject *item = op ? Py_BuildValue("(ss)", pith_op_name(op), pith_op_schema(op)) : NULL;
        if (!item) {
            Py_CLEAR(list);
            if (!op)
                return error_raise(state_of_module(module));
            break;
        }
        PyList_SET_ITEM(list, (Py_ssize_t)i, item);
    }
    return list;
}

static int push_failed(pith_module_state *st)
{
    error_raise(st);
    return -1;
}

static int push_int_list(pith_module_state *st, pith_stack *stack, PyObject *fast)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    int64_t *v = PyMem_Malloc(((size_t)n + 1) * sizeof(int64_t));
    if (!v) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        v[i] = PyIndex_Check(item) ? PyLong_AsLongLong(item) : -1;
        if (!PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError, "expected a list of ints, found %.200s",
                         Py_TYPE(item)->tp_name);
        }
        if (PyErr_Occurred()) {
            PyMem_Free(v);
            return -1;
        }
    }
    pith_status s = pith_stack_push_int_list(stack, v, (size_t)n);
    PyMem_Free(v);
    return s == PITH_OK ? 0 : push_failed(st);
}

/* A Tensor[] or (allow_none) a Tensor?[] list, whose None entries are pushed as NULL. */
static int push_tensor_list(pith_module_state *st, pith_stack *stack, PyObject *fast,
                            int allow_none)
{
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    const pith_tensor **v = PyMem_Malloc(((size_t)n + 1) * sizeof(*v));
    if (!v) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        if (allow_none && item == Py_None) {
            v[i] = NULL;
            continue;
        }
        if (!tensor_check(st, item)) {
            PyErr_Format(PyExc_TypeError, "expected a list of Tensors, found %.200s",
                         Py_TYPE(item)->tp_name);
            PyMem_Free(v);
            return -1;
        }
        v[i] = tensor_of(item); /* borrowed: the list keeps them alive during the push */
    }
    pith_status s = pith_stack_push_tensor_list(stack, (const pith_tensor *const *)v, (size_t)n);
    PyMem_Free(v);
    return s == PITH_OK ? 0 : push_failed(st);
}

/* Pushes one Python value; `type` is the schema type, used only to tell an empty int list
 * from an empty tensor list. The dispatcher checks every value against the schema. */
static int push_value(pith_module_state *st, pith_stack *stack, PyObject *v, const char *type)
{
    pith_status s;
    if (strcmp(type, "Tensor") == 0 || strcmp(type, "Tensor?") == 0) {
        /* A Python number where a Tensor goes: a wrapped number, as the operators do. See
         * Note [Python scalars as wrapped numbers] (tensor_number.c). */
        int not_implemented;
        if ((PyLong_Check(v) || PyFloat_Check(v)) && !tensor_check(st, v)) {
            pith_tensor *t = operand_to_tensor(st, v, &not_implemented);
            if (!t)
                return -1;
            s = pith_stack_push_tensor_steal(stack, t);
            return s == PITH_OK ? 0 : push_failed(st);
        }
    }
    if (v == Py_None)
        s = pith_stack_push_none(stack);
    else if (tensor_check(st, v))
        s = pith_stack_push_tensor(stack, tensor_of(v));
    else if (PyBool_Check(v))
        s = pith_stack_push_bool(stack, v == Py_True);
    else if (PyLong_Check(v)) {
        long long i = PyLong_AsLongLong(v);
        if (i == -1 && PyErr_Occurred())
            return -1;
        s = pith_stack_push_int(stack, i);
    } else if (PyFloat_Check(v))
        s = pith_stack_push_double(stack, PyFloat_AS_DOUBLE(v));
    else if (PyUnicode_Check(v)) {
        const char *text = PyUnicode_AsUTF8(v);
        if (!text)
            return -1;
        s = pith_stack_push_string(stack, text);
    } else if (PyObject_TypeCheck(v, st->dtype_type))
        s = pith_stack_push_dtype(stack, ((pith_dtype_object *)v)->dtype);
    else if (PyList_Check(v) || PyTuple_Check(v)) {
        int rc = strncmp(type, "Tensor", 6) == 0
                     ? push_tensor_list(st, stack, v, strcmp(type, "Tensor?[]") == 0)
                     : push_int_list(st, stack, v);
        return rc;
    } else {
        PyErr_Format(PyExc_TypeError, "cannot pass a %.200s to an operator (expected %s)",
                     Py_TYPE(v)->tp_name, type);
        return -1;
    }
    return s == PITH_OK ? 0 : push_failed(st);
}

static PyObject *result_from_stack(pith_module_state *st, pith_stack *stack, size_t i)
{
    switch (pith_stack_kind(stack, i)) {
    case PITH_VALUE_NONE:
        Py_RETURN_NONE;
    case PITH_VALUE_TENSOR:
        return tensor_wrap(st, pith_stack_get_tensor(stack, i));
    case PITH_VALUE_INT:
        return PyLong_FromLongLong(pith_stack_get_int(stack, i));
    case PITH_VALUE_DOUBLE:
        return PyFloat_FromDouble(pith_stack_get_double(stack, i));
    case PITH_VALUE_BOOL:
        return PyBool_FromLong(pith_stack_get_bool(stack, i));
    case PITH_VALUE_STRING:
        return PyUnicode_FromString(pith_stack_get_string(stack, i));
    case PITH_VALUE_DTYPE:
        return dtype_object(st, pith_stack_get_dtype(stack, i));
    case PITH_VALUE_INT_LIST: {
        size_t n;
        const int64_t *v = pith_stack_get_int_list(stack, i, &n);
        PyObject *list = PyList_New((Py_ssize_t)n);
        for (size_t k = 0; list && k < n; k++) {
            PyObject *item = PyLong_FromLongLong(v[k]);
            if (!item)
                Py_CLEAR(list);
            else
                PyList_SET_ITEM(list, (Py_ssize_t)k, item);
        }
        return list;
    }
    case PITH_VALUE_TENSOR_LIST: {
        size_t n;
        pith_tensor *const *v = pith_stack_get_tensor_list(stack, i, &n); /* borrowed */
        PyObject *list = PyList_New((Py_ssize_t)n);
        for (size_t k = 0; list && k < n; k++) {
            pith_retain(v[k]);
            PyObject *item = tensor_wrap(st, v[k]);
            if (!item)
                Py_CLEAR(list);
            else
                PyList_SET_ITEM(list, (Py_ssize_t)k, item);
        }
        return list;
    }
    default:
        PyErr_SetString(PyExc_RuntimeError, "pith: an operator returned a device value");
        return NULL;
    }
}

/* _call_op(name, args, types) -> tuple of results. `args` are already bound in schema
 * order (trailing defaults may be left out: the dispatcher fills them in). */
static PyObject *ops_call(PyObject *module, PyObject *const *argv, Py_ssize_t argc)
{
    pith_module_state *st = state_of_module(module);
    if (argc != 3 || !PyUnicode_Check(argv[0]) || !PyTuple_Check(argv[1]) ||
        !PyTuple_Check(argv[2]) || PyTuple_GET_SIZE(argv[1]) != PyTuple_GET_SIZE(argv[2])) {
        PyErr_SetString(PyExc_TypeError, "_call_op(name: str, args: tuple, types: tuple)");
        return NULL;
    }
    const char *name = PyUnicode_AsUTF8(argv[0]);
    if (!name)
        return NULL;
    const pith_op *op = pith_op_find(name);
    if (!op)
        return error_raise(st);
    pith_stack *stack = pith_stack_new();
    if (!stack)
        return error_raise(st);
    PyObject *result = NULL;
    int64_t work = 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(argv[1]); i++) {
        PyObject *v = PyTuple_GET_ITEM(argv[1], i);
        const char *type = PyUnicode_AsUTF8(PyTuple_GET_ITEM(argv[2], i));
        if (!type || push_value(st, stack, v, type) < 0)
            goto done;
        if (tensor_check(st, v) && pith_numel(tensor_of(v)) > work)
            work = pith_numel(tensor_of(v));
        if (tensor_check(st, v) && pith_tensor_has_python_key(tensor_of(v)))
            work = -1; /* may run Python: keep the GIL (pydispatch_python_reachable) */
    }
    pith_status status;
    if (work >= PITH_GIL_RELEASE_NUMEL && !pydispatch_python_reachable(NULL)) {
        Py_BEGIN_ALLOW_THREADS
        status = pith_call_boxed(op, stack);
        Py_END_ALLOW_THREADS
    } else {
        status = pith_call_boxed(op, stack);
    }
    if (status != PITH_OK) {
        error_raise(st);
        goto done;
    }
    size_t n = pith_stack_size(stack);
    result = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; result && i < n; i++) {
        PyObject *item = result_from_stack(st, stack, i);
        if (!item)
            Py_CLEAR(result);
        else
            PyTuple_SET_ITEM(result, (Py_ssize_t)i, item);
    }
done:
    pith_stack_free(stack);
    return result;
}

PyMethodDef ops_module_methods[] = {
    {"_op_list", ops_list, METH_NOARGS, "[(qualified name, schema)] of every operator."},
    {"_call_op", (PyCFunction)(void (*)(void))ops_call, METH_FASTCALL,
     "_call_op(name, args, types): call an operator with arguments bound in schema order."},
    {NULL},
};
