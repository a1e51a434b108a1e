/* python_library.c — operators from Python: pith.library.define (pith_op_define) and
 * pith.library.impl (a Python function as the boxed kernel of an op at a key), and the
 * metadata operators through which wrapper subclasses answer size(), stride(),
 * is_contiguous() and device. */
#include <stdatomic.h>
#include <string.h>

#include "pydispatch.h"

#if PY_VERSION_HEX >= 0x030D0000
#define thread_state_unchecked() PyThreadState_GetUnchecked()
#else
#define thread_state_unchecked() _PyThreadState_UncheckedGet()
#endif

/* ---- the metadata operators ---- */

/* Note [Metadata operators]
 * PyTorch asks a wrapper subclass for its metadata by calling __torch_dispatch__ with
 * torch.ops.aten.sym_size.default, sym_stride, is_contiguous and torch.ops.prim.device. pith
 * does the same with four operators that exist for this: pith::size(Tensor self) -> int[],
 * pith::stride, pith::is_contiguous -> bool and pith::device -> str (the device's name; a
 * handler may answer with a str or a pith.device, pydispatch_device). dim() and numel()
 * derive from sizes (the interpreter table has no entries of their own), so with the
 * "sizes" policy they reach the handler as
 * pith.ops.pith.size too, where PyTorch calls aten.dim and aten.sym_numel. The kernels
 * (CPU and Meta) read the metadata of an alias, which carries no policy, so a handler that
 * passes the call through — to its inner tensor, or to the wrapper itself under no_dispatch()
 * — gets the tensor's own metadata and never recurses into itself. They are defined once
 * per process, when the first interpreter imports pith.utils. */
#define METADATA_OPS(_)                                                                     \
    _(size, "pith::size(Tensor self) -> int[]")                                             \
    _(stride, "pith::stride(Tensor self) -> int[]")                                         \
    _(is_contiguous, "pith::is_contiguous(Tensor self) -> bool")                            \
    _(device, "pith::device(Tensor self) -> str")

/* Pops `self` as an alias without policy (new reference), or NULL with the error set. */
static pith_tensor *metadata_self(pith_stack *stack)
{
    pith_tensor *self = pith_stack_get_tensor(stack, pith_stack_size(stack) - 1);
    pith_tensor *alias = self ? pith_alias(self) : NULL;
    pith_release(self);
    if (alias)
        pith_stack_drop(stack, 1);
    return alias;
}

static pith_status metadata_geometry(pith_stack *stack, bool want_sizes)
{
    pith_tensor *t = metadata_self(stack);
    if (!t)
        return pith_last_status();
    int64_t v[PITH_MAX_DIMS];
    int n = want_sizes ? pith_sizes(t, v) : pith_strides(t, v);
    pith_release(t);
    return n < 0 ? pith_last_status() : pith_stack_push_int_list(stack, v, (size_t)n);
}

static pith_status metadata_size(const pith_op *op, pith_stack *stack, void *ctx)
{
    return metadata_geometry(stack, true);
}

static pith_status metadata_stride(const pith_op *op, pith_stack *stack, void *ctx)
{
    return metadata_geometry(stack, false);
}

static pith_status metadata_is_contiguous(const pith_op *op, pith_stack *stack, void *ctx)
{
    pith_tensor *t = metadata_self(stack);
    if (!t)
        return pith_last_status();
    bool contiguous = pith_is_contiguous(t);
    pith_release(t);
    return pith_stack_push_bool(stack, contiguous);
}

static pith_status metadata_device(const pith_op *op, pith_stack *stack, void *ctx)
{
    pith_tensor *t = metadata_self(stack);
    if (!t)
        return pith_last_status();
    pith_device device = pith_tensor_device(t);
    pith_release(t);
    return pith_stack_push_string(stack, pith_device_name(device));
}

static atomic_int metadata_defined; /* process-wide, like the registry: 0, 1 busy, 2 done */

int library_setup(void)
{
    int expected = 0;
    if (!atomic_compare_exchange_strong(&metadata_defined, &expected, 1))
        return 0; /* defined, or another interpreter is defining them under the GIL */
#define DEFINE_METADATA_OP_(name, schema)                                                    \
    if (pith_op_define(schema) != PITH_OK ||                                                \
        pith_kernel_register("pith::" #name, "CPU", metadata_##name, NULL) != PITH_OK ||    \
        pith_kernel_register("pith::" #name, "Meta", metadata_##name, NULL) != PITH_OK)     \
        goto fail;
    METADATA_OPS(DEFINE_METADATA_OP_)
#undef DEFINE_METADATA_OP_
    atomic_store(&metadata_defined, 2);
    return 0;
fail:
    PyErr_Format(PyExc_RuntimeError, "pith: defining the metadata operators failed: %s",
                 pith_last_error());
    return -1;
}

/* ---- Python kernels ---- */

/* Note [Python kernels belong to their interpreter]
 * pith.library.impl(op, key)(fn) registers a boxed kernel whose ctx (a python_kernel, never
 * freed: the registry keeps records reachable) records fn and the interpreter that
 * registered it. The kernel runs fn only inside that interpreter:
 *  - called on a thread whose current thread state belongs to another interpreter, it fails
 *    with PITH_ERR_INTERPRETER (pith.InterpreterError there), naming both;
 *  - otherwise it enters the owner through the interpreter table's dispatch entry, so that
 *    Note [Entering an interpreter from C] applies (a thread of the owner, or one with no
 *    Python at all, such as a kernel called with the GIL released), the call counts in
 *    flight, and after disarm it fails cleanly instead of calling a dead interpreter. The
 *    entry is told that this is a kernel call, not a dispatch, by kernel_pending, a C
 *    thread-local set just around the entry and consumed first thing by
 *    pydispatch_dispatch (library_kernel_pending): nothing runs Python in between.
 * fn is called as a handler is, with (args, kwargs) rebuilt from the schema (Note [Arguments
 * of a boxed call]), and what it returns is pushed back as the op's results. */
typedef struct {
    const pith_interpreter *interp;
    PyInterpreterState *state;
    int64_t id;
    PyObject *fn;
} python_kernel;

static _Thread_local const python_kernel *kernel_pending;

/* The thread state through which this OS thread holds the GIL, or NULL (as interp.c). */
static PyThreadState *thread_state_current(void)
{
    PyThreadState *ts = thread_state_unchecked();
    return ts && ts->thread_id == PyThread_get_thread_ident() ? ts : NULL;
}

static pith_status python_kernel_boxed(const pith_op *op, pith_stack *stack, void *ctx)
{
    const python_kernel *k = ctx;
    PyThreadState *ts = thread_state_current();
    if (ts) {
        PyInterpreterState *is = PyThreadState_GetInterpreter(ts);
        if (is != k->state || PyInterpreterState_GetID(is) != k->id)
            return pith_set_error(PITH_ERR_INTERPRETER,
                                  "%s: its Python kernel belongs to interpreter %s; "
                                  "interpreter %lld cannot call it (a Python kernel runs "
                                  "only in the interpreter that registered it)",
                                  pith_op_name(op), pith_interpreter_name(k->interp),
                                  (long long)PyInterpreterState_GetID(is));
    }
    const pith_interpreter_vtable *vt = pith_interpreter_vtable_of(k->interp);
    if (!vt || !vt->dispatch)
        return pith_set_error(PITH_ERR_INTERPRETER, "%s: interpreter %s cannot run its "
                              "Python kernel", pith_op_name(op),
                              pith_interpreter_name(k->interp));
    const python_kernel *saved = kernel_pending;
    kernel_pending = k;
    pith_status s = vt->dispatch(k->interp, op, stack);
    kernel_pending = saved;
    return s;
}

pith_status library_kernel_pending(pith_module_state *st, const pith_op *op,
                                   pith_stack *stack, bool *handled)
{
    const python_kernel *k = kernel_pending;
    *handled = k != NULL;
    if (!k)
        return PITH_OK;
    kernel_pending = NULL;
    PyObject *spec = spec_of(st, op), *args, *kwargs, *ret = NULL;
    Py_XINCREF(spec); /* the kernel may re-import pith.utils, which drops the cache */
    if (spec && args_from_stack(st, spec, stack, NULL, &args, &kwargs) == 0) {
        ret = PyObject_Call(k->fn, args, kwargs);
        Py_DECREF(args);
        Py_DECREF(kwargs);
    }
    if (ret && results_push(st, spec, stack, ret, "the Python kernel") < 0)
        Py_CLEAR(ret);
    Py_XDECREF(spec);
    if (!ret)
        return error_keep();
    Py_DECREF(ret);
    return PITH_OK;
}

/* _op_define(schema): pith_op_define. */
PyObject *library_op_define(PyObject *module, PyObject *schema)
{
    const char *text = PyUnicode_Check(schema) ? PyUnicode_AsUTF8(schema) : NULL;
    if (!text) {
        if (!PyErr_Occurred())
            PyErr_Format(PyExc_TypeError, "define(): the schema must be a str, not %.200s",
                         Py_TYPE(schema)->tp_name);
        return NULL;
    }
    if (pith_op_define(text) != PITH_OK)
        return error_raise(state_of_module(module));
    Py_RETURN_NONE;
}

/* _kernel_register_python(op_name, key, fn) */
PyObject *library_kernel_register(PyObject *module, PyObject *args)
{
    pith_module_state *st = state_of_module(module);
    const char *name, *key;
    PyObject *fn;
    if (!PyArg_ParseTuple(args, "ssO:_kernel_register_python", &name, &key, &fn))
        return NULL;
    if (!PyCallable_Check(fn)) {
        PyErr_Format(PyExc_TypeError, "impl(): the kernel must be callable, not %.200s",
                     Py_TYPE(fn)->tp_name);
        return NULL;
    }
    python_kernel *k = PyMem_RawMalloc(sizeof *k);
    if (!k)
        return PyErr_NoMemory();
    PyInterpreterState *is = PyInterpreterState_Get();
    *k = (python_kernel){st->interp, is, PyInterpreterState_GetID(is), Py_NewRef(fn)};
    if (pith_kernel_register(name, key, python_kernel_boxed, k) != PITH_OK) {
        Py_DECREF(k->fn);
        PyMem_RawFree(k);
        return error_raise(st);
    }
    Py_RETURN_NONE;
}
