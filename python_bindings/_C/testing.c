/* testing.c — test-only hooks of pith._C, registered only on request
 * (_C._testing_register_ops()), never at import.
 *
 * pith_testing::wait_for_flag(Tensor self, float timeout=30) -> Tensor is an operator whose
 * CPU kernel waits until _C._testing_set_flag() is called, then returns self. A Python test
 * calls it on a tensor big enough for the bindings to release the GIL, and sets the flag from
 * another Python thread: that thread can run only if the kernel released the GIL, so the
 * call returns if and only if it did (the timeout turns "never" into a clear error instead
 * of a hang; nothing is timed). This is the deterministic proof that kernels run without the
 * GIL (tests/python/test_gil.py). */
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

PyMethodDef testing_module_methods[] = {
    {"_testing_register_ops", testing_register_ops, METH_NOARGS,
     "Registers the test-only operators (pith_testing::wait_for_flag)."},
    {"_testing_set_flag", testing_set_flag, METH_O,
     "Sets or clears the flag that pith_testing::wait_for_flag waits for."},
    {NULL},
};
