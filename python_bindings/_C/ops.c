/* ops.c — boxed values to and from Python, shared by the binder (binder.c: the results of
 * a call) and python_dispatch.c (the arguments of a handler, the results it returns). */
#include <string.h>

#include "state.h"


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

const char *str_argument_text(PyObject *v)
{
    Py_ssize_t size;
    const char *text = PyUnicode_AsUTF8AndSize(v, &size);
    if (text && (size_t)size != strlen(text)) {
        PyErr_SetString(PyExc_ValueError, "embedded null character in a str argument");
        return NULL;
    }
    return text;
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
    case PITH_VALUE_DEVICE:
        return device_object(st, pith_stack_get_device(stack, i));
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
    case PITH_VALUE_DOUBLE_LIST: {
        const double *v = pith_stack_get_double_list(stack, i, &n);
        PyObject *list = PyList_New((Py_ssize_t)n);
        for (size_t k = 0; list && k < n; k++) {
            PyObject *item = PyFloat_FromDouble(v[k]);
            if (!item)
                Py_CLEAR(list);
            else
                PyList_SET_ITEM(list, (Py_ssize_t)k, item);
        }
        return list;
    }
    case PITH_VALUE_GENERATOR: /* a wrapper sharing the generator (not the caller's object) */
        return generator_wrap(st, pith_stack_get_generator(stack, i));
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

