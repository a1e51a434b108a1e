/* testing.c — test-only hooks of pith._C, registered only on request
 * (_C._testing_register_ops()), never at import.
 *
 * pith_testing::wait_for_flag(Tensor self, float timeout=30) -> Tensor is an operator whose
 * CPU kernel waits until _C._testing_set_flag() is called, then returns self. A Python test
 * calls it on a tensor big enough for the bindings to release the GIL, and sets the flag from
 * another Python thread: that thread can run only if the kernel released the GIL, so the
 * call returns if and only if it did (the timeout turns "never" into a clear error instead
 * of a hang; nothing is timed). This is the deterministic proof that kernels run without the
 * GIL (tests/python/test_gil.py).
 *
 * _testing_handle(t) and _testing_wrap_handle(h) hand raw pith_tensor pointers between C and
 * Python for the embedding programs (tests/embed/), which make tensors in C and pass them to
 * several interpreters. Unlike _stash/_unstash they trust the integer: test code only. */
#define _POSIX_C_SOURCE 200809L
#include <stdatomic.h>
#include <time.h>

#include "state.h"

#define WAIT_OP "pith_testing::wait_for_flag"

static atomic_int testing_flag;      /* process-wide C data, like the op registry */
static atomic_int testing_registered;

static pith_status wait_for_flag_cpu(const pith_op *op, pith_stack *stack, void *ctx)
{
    double timeout = pith_stack_get_double(stack, 1);
    struct timespec step = {0, 1000000}; /* 1 ms */
    for (double waited = 0.0; !atomic_load(&testing_flag); waited += 1e-3) {
        if (waited >= timeout) {
            pith_stack_drop(stack, 2);
            return pith_set_error(PITH_ERR_RUNTIME,
                                  "wait_for_flag: the flag was not set within %g s (did the "
                                  "kernel run with the GIL held?)",
                                  timeout);
        }
        nanosleep(&step, NULL);
    }
    pith_tensor *self = pith_stack_get_tensor(stack, 0); /* new reference */
    pith_stack_drop(stack, 2);
    return pith_stack_push_tensor_steal(stack, self);
}

static PyObject *testing_register_ops(PyObject *module, PyObject *unused)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&testing_registered, &expected, 1))
        Py_RETURN_NONE; /* the registry is per process: once is enough */
    if (pith_op_define(WAIT_OP "(Tensor self, float timeout=30) -> Tensor") != PITH_OK ||
        pith_kernel_register(WAIT_OP, "CPU", wait_for_flag_cpu, NULL) != PITH_OK) {
        atomic_store(&testing_registered, 0);
        return error_raise(state_of_module(module));
    }
    Py_RETURN_NONE;
}

static PyObject *testing_set_flag(PyObject *module, PyObject *value)
{
    int on = PyObject_IsTrue(value);
    if (on < 0)
        return NULL;
    atomic_store(&testing_flag, on);
    Py_RETURN_NONE;
}

/* The address of t's pith_tensor, with one new C reference that the caller owns. */
static PyObject *testing_handle(PyObject *module, PyObject *obj)
{
    pith_module_state *st = state_of_module(module);
    if (!tensor_check(st, obj)) {
        PyErr_SetString(PyExc_TypeError, "_testing_handle: expected a pith.Tensor");
        return NULL;
    }
    pith_tensor *t = tensor_of(obj);
    pith_retain(t);
    return PyLong_FromVoidPtr(t);
}

/* Takes the reference that `handle` carries and returns the tensor's wrapper in this
 * interpreter; on failure (pith.InterpreterError for a tensor of another interpreter) the
 * reference stays with the caller. */
static PyObject *testing_wrap_handle(PyObject *module, PyObject *handle)
{
    pith_tensor *t = PyLong_AsVoidPtr(handle);
    if (!t) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "_testing_wrap_handle: the handle is 0");
        return NULL;
    }
    pith_retain(t); /* tensor_wrap steals this one, even when it fails */
    PyObject *obj = tensor_wrap(state_of_module(module), t);
    if (obj)
        pith_release(t); /* the caller's reference, now taken back */
    return obj;
}

PyMethodDef testing_module_methods[] = {
    {"_testing_register_ops", testing_register_ops, METH_NOARGS,
     "Registers the test-only operators (pith_testing::wait_for_flag)."},
    {"_testing_set_flag", testing_set_flag, METH_O,
     "Sets or clears the flag that pith_testing::wait_for_flag waits for."},
    {"_testing_handle", testing_handle, METH_O,
     "_testing_handle(t) -> int: the pith_tensor address, with a new C reference."},
    {"_testing_wrap_handle", testing_wrap_handle, METH_O,
     "_testing_wrap_handle(h) -> Tensor: takes the handle's reference back (test only)."},
    {NULL},
};
