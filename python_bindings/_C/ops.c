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

/* Boxed values to and from Python, shared by this file (the arguments and results of
 * _call_op) and python_dispatch.c (the arguments of a handler, the results it returns). */

int push_python_int_list(pith_module_state *st, pith_stack *stack, PyObject *seq)
{
    PyObject *fast = PySequence_Fast(seq, "expected a list of ints");
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    int64_t *v = PyMem_Malloc(((size_t)n + 1) * sizeof *v);
    int rc = v ? 0 : (PyErr_NoMemory(), -1);
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyIndex_Check(item)) {
            PyErr_Format(PyExc_TypeError, "expected a list of ints, found %.200s",
                         Py_TYPE(item)->tp_name);
            rc = -1;
        } else if ((v[i] = PyLong_AsLongLong(item)) == -1 && PyErr_Occurred()) {
            rc = -1;
        }
    }
    if (rc == 0 && pith_stack_push_int_list(stack, v, (size_t)n) != PITH_OK)
        rc = -1, error_raise(st);
    PyMem_Free(v);
    Py_DECREF(fast);
    return rc;
}

int push_python_tensor_list(pith_module_state *st, pith_stack *stack, PyObject *seq,
                            bool allow_none)
{
    PyObject *fast = PySequence_Fast(seq, "expected a list of Tensors");
    if (!fast)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    const pith_tensor **v = PyMem_Malloc(((size_t)n + 1) * sizeof *v);
    int rc = v ? 0 : (PyErr_NoMemory(), -1);
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        if (allow_none && item == Py_None) {
            v[i] = NULL; /* a Tensor?[] entry */
        } else if (tensor_check(st, item)) {
            v[i] = tensor_of(item); /* borrowed: `fast` keeps them alive during the push */
        } else {
            PyErr_Format(PyExc_TypeError, "expected a list of Tensors, found %.200s",
                         Py_TYPE(item)->tp_name);
            rc = -1;
        }
    }
    if (rc == 0 && pith_stack_push_tensor_list(stack, v, (size_t)n) != PITH_OK)
        rc = -1, error_raise(st);
    PyMem_Free(v);
    Py_DECREF(fast);
    return rc;
}

/* A str argument as C text: NULL with a ValueError when it holds a NUL, which C would
 * take for its end ('tanh\0junk' is not 'tanh'). */
static const char *text_of(PyObject *v)
{
    Py_ssize_t size;
    const char *text = PyUnicode_AsUTF8AndSize(v, &size);
    if (text && (size_t)size != strlen(text)) {
        PyErr_SetString(PyExc_ValueError, "embedded null character in a str argument");
        return NULL;
    }
    return text;
}

int device_by_name(PyObject *v, pith_device *out)
{
    const char *text = PyUnicode_Check(v) ? text_of(v) : NULL;
    if (!text)
        return PyErr_Occurred() ? -1 : 0;
    for (int d = PITH_CPU; d <= PITH_META; d++)
        if (strcmp(text, pith_device_name((pith_device)d)) == 0) {
            *out = (pith_device)d;
            return 1;
        }
    return 0;
}

/* A Device argument into *out; -1 with pith.PithError (a ValueError, and the RuntimeError
 * PyTorch raises for an unknown device). */
static int device_from_python(pith_module_state *st, PyObject *v, pith_device *out)
{
    int found = device_by_name(v, out);
    if (found == 0)
        PyErr_Format(st->value_error, "device %R is not supported: pith has the 'cpu' and "
                     "'meta' devices", v);
    return found > 0 ? 0 : -1;
}

PyObject *stack_value_to_python(pith_module_state *st, const pith_stack *stack, size_t i,
                                tensor_wrap_fn wrap, void *ctx)
{
    size_t n;
    switch (pith_stack_kind(stack, i)) {
    case PITH_VALUE_NONE:
        Py_RETURN_NONE;
    case PITH_VALUE_TENSOR:
        return wrap(st, pith_stack_get_tensor(stack, i), ctx);
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
    case PITH_VALUE_DEVICE: /* pith's Python API names devices by string */
        return PyUnicode_FromString(pith_device_name(pith_stack_get_device(stack, i)));
    case PITH_VALUE_INT_LIST: {
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
        pith_tensor *const *v = pith_stack_get_tensor_list(stack, i, &n); /* borrowed */
        PyObject *list = PyList_New((Py_ssize_t)n);
        for (size_t k = 0; list && k < n; k++) {
            PyObject *item = Py_None;
            if (v[k]) { /* NULL: a None entry of a Tensor?[] */
                pith_retain(v[k]);
                item = wrap(st, v[k], ctx);
            } else {
                Py_INCREF(item);
            }
            if (!item)
                Py_CLEAR(list);
            else
                PyList_SET_ITEM(list, (Py_ssize_t)k, item);
        }
        return list;
    }
    }
    PyErr_Format(PyExc_SystemError, "pith: a boxed value of unknown kind %d",
                 (int)pith_stack_kind(stack, i));
    return NULL;
}

static PyObject *plain_wrap(pith_module_state *st, pith_tensor *t, void *ctx)
{
    (void)ctx;
    return tensor_wrap(st, t);
}

/* Pushes one Python value; `type` is the schema type as pith/_ops.py passes it, which
 * tells an empty int list from an empty tensor list, a device name from a str, and a
 * tensor the op writes to ("Tensor!") from one it reads. The dispatcher checks every value
 * against the schema. */
static int push_value(pith_module_state *st, pith_stack *stack, PyObject *v, const char *type,
                      bool wrap_numbers)
{
    pith_status s;
    if (strcmp(type, "Tensor") == 0 || strcmp(type, "Tensor?") == 0) {
        /* A Python number where a Tensor is read: a wrapped number, as the operators make
         * (See Note [Python scalars as wrapped numbers] in tensor_number.c); but when the
         * call has no tensor at all (pith.neg(1.5)) there is nothing for it to defer to,
         * and it is the tensor pith.tensor(v) makes. A tensor the op writes to ("Tensor!")
         * takes no number: the dispatcher refuses it, naming the argument. */
        int not_implemented;
        if ((PyLong_Check(v) || PyFloat_Check(v)) && !tensor_check(st, v)) {
            pith_tensor *t = wrap_numbers ? operand_to_tensor(st, v, &not_implemented)
                                          : tensor_from_data(st, v, 0, PITH_FLOAT32);
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
    else if (PyUnicode_Check(v) && strncmp(type, "Device", 6) == 0) {
        pith_device device;
        if (device_from_python(st, v, &device) < 0)
            return -1;
        s = pith_stack_push_device(stack, device);
    } else if (PyUnicode_Check(v)) {
        const char *text = text_of(v);
        if (!text)
            return -1;
        s = pith_stack_push_string(stack, text);
    } else if (PyObject_TypeCheck(v, st->dtype_type))
        s = pith_stack_push_dtype(stack, ((pith_dtype_object *)v)->dtype);
    else if (PyList_Check(v) || PyTuple_Check(v)) {
        return strncmp(type, "Tensor", 6) == 0
                   ? push_python_tensor_list(st, stack, v, strcmp(type, "Tensor?[]") == 0)
                   : push_python_int_list(st, stack, v);
    } else {
        PyErr_Format(PyExc_TypeError, "cannot pass a %.200s to an operator (expected %s)",
                     Py_TYPE(v)->tp_name, type);
        return -1;
    }
    return s == PITH_OK ? 0 : push_failed(st);
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
    bool has_tensor = false;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(argv[1]) && !has_tensor; i++) {
        PyObject *v = PyTuple_GET_ITEM(argv[1], i);
        has_tensor = tensor_check(st, v);
        for (Py_ssize_t k = 0; !has_tensor && (PyList_Check(v) || PyTuple_Check(v)) &&
                               k < PySequence_Fast_GET_SIZE(v);
             k++)
            has_tensor = tensor_check(st, PySequence_Fast_GET_ITEM(v, k));
    }
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(argv[1]); i++) {
        PyObject *v = PyTuple_GET_ITEM(argv[1], i);
        const char *type = PyUnicode_AsUTF8(PyTuple_GET_ITEM(argv[2], i));
        if (!type || push_value(st, stack, v, type, has_tensor) < 0)
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
        PyObject *item = stack_value_to_python(st, stack, i, plain_wrap, NULL);
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
