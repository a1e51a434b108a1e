/* errors.c — C statuses as Python exceptions (the table in ARCHITECTURE.md "Errors"), and
 * the two exception classes pith adds: PithError and InterpreterError. */
#include "state.h"

/* Note [Dtype errors are TypeError and RuntimeError]
 * ARCHITECTURE.md maps PITH_ERR_TYPE to TypeError, and that is what Python code expects of
 * a bad argument type or dtype argument. But PyTorch raises RuntimeError when a kernel does
 * not support its inputs' dtypes (`-bool_tensor`, `int_tensor.mean()`, mixed-dtype matmul),
 * and PyTorch users write `except RuntimeError` for those. So PITH_ERR_TYPE raises
 * pith.PithTypeError, which derives from both, as PITH_ERR_VALUE raises pith.PithError
 * (ValueError and RuntimeError): either `except` clause catches it. */

/* Raises the exception for this thread's last pith error, with its message; returns NULL
 * so callers can `return error_raise(st);`. */
PyObject *error_raise(pith_module_state *st)
{
    if (pydispatch_restore_error()) /* See Note [Handler exceptions cross C] */
        return NULL;
    pith_status status = pith_last_status();
    const char *message = pith_last_error();
    PyObject *type;
    switch (status) {
    case PITH_ERR_VALUE:
        type = st->value_error;
        break;
    case PITH_ERR_TYPE:
        type = st->type_error;
        break;
    case PITH_ERR_INDEX:
        type = PyExc_IndexError;
        break;
    case PITH_ERR_NOT_IMPLEMENTED:
        type = PyExc_NotImplementedError;
        break;
    case PITH_ERR_NOMEM:
        type = PyExc_MemoryError;
        break;
    case PITH_ERR_INTERPRETER:
        type = st->interpreter_error;
        break;
    case PITH_ERR_RUNTIME:
    case PITH_OK: /* a NULL without a status is a bug in the library: still no crash */
    default:
        type = PyExc_RuntimeError;
        break;
    }
    PyErr_SetString(type, message && message[0] ? message : "pith: unknown error");
    return NULL;
}

int errors_init(PyObject *module, pith_module_state *st)
{
    PyObject *bases = PyTuple_Pack(2, PyExc_ValueError, PyExc_RuntimeError);
    if (!bases)
        return -1;
    st->value_error = PyErr_NewExceptionWithDoc(
        "pith.PithError",
        "A bad value or shape (PITH_ERR_VALUE). Derives from ValueError and from "
        "RuntimeError, so that PyTorch-style `except RuntimeError` still catches it.",
        bases, NULL);
    Py_DECREF(bases);
    if (!st->value_error)
        return -1;
    /* See Note [Dtype errors are TypeError and RuntimeError]. */
    bases = PyTuple_Pack(2, PyExc_TypeError, PyExc_RuntimeError);
    if (!bases)
        return -1;
    st->type_error = PyErr_NewExceptionWithDoc(
        "pith.PithTypeError",
        "A bad dtype or argument type (PITH_ERR_TYPE). Derives from TypeError and from "
        "RuntimeError: see Note [Dtype errors are TypeError and RuntimeError].",
        bases, NULL);
    Py_DECREF(bases);
    if (!st->type_error)
        return -1;
    st->interpreter_error = PyErr_NewExceptionWithDoc(
        "pith.InterpreterError",
        "A tensor was used from an interpreter it does not belong to, or its interpreter "
        "was finalised (PITH_ERR_INTERPRETER).",
        PyExc_RuntimeError, NULL);
    if (!st->interpreter_error)
        return -1;
    if (PyModule_AddObjectRef(module, "PithError", st->value_error) < 0 ||
        PyModule_AddObjectRef(module, "PithTypeError", st->type_error) < 0 ||
        PyModule_AddObjectRef(module, "InterpreterError", st->interpreter_error) < 0)
        return -1;
    return 0;
}
