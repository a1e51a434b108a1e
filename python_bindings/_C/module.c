/* module.c — the pith._C module: PEP 489 multi-phase init, its state, and the module-level
 * functions (pith.tensor, the factories, default dtype, _live_tensors). See Note [Module
 * state] (state.h). */
#include <string.h>

#include "binder.h"
#include "compile_internal.h"
#include "function_layer.h"
#include "state.h"

/* dtype=None or a pith.dtype; fills *dtype with the default when None. */
static int dtype_arg(pith_module_state *st, PyObject *obj, pith_dtype fallback, pith_dtype *dtype)
{
    if (!obj || obj == Py_None) {
        *dtype = fallback;
        return 0;
    }
    return dtype_from_object(st, obj, dtype);
}

/* device= of the factories: pith's factories make CPU tensors (See Note [Device
 * arguments], device.c), so anything else raises (never silently ignored). */
static int factory_options(pith_module_state *st, PyObject *device, const char *name)
{
    pith_device on;
    return device_argument(st, device, false, name, &on);
}

/* tensor(data, *, dtype=None, device=None, requires_grad=False) */
static PyObject *module_tensor(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"data", "dtype", "device", "requires_grad", "pin_memory", NULL};
    PyObject *data, *dtype_obj = Py_None, *device = NULL, *result;
    int requires_grad = 0, pin_memory = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OOpp:tensor", kwlist, &data, &dtype_obj,
                                     &device, &requires_grad, &pin_memory) ||
        factory_options(state_of_module(module), device, "tensor") < 0)
        return NULL;
    if (pin_memory) {
        PyErr_SetString(PyExc_RuntimeError,
                        "tensor(): pin_memory=True needs an accelerator, and pith has none");
        return NULL;
    }
    pith_module_state *st = state_of_module(module);
    if (function_modes_maybe() &&
        function_layer_modes_only(st, module, "tensor", args, kwargs, &result))
        return result; /* See Note [Function layer] (function_layer.c) */
    pith_dtype dtype = pith_get_default_dtype();
    if (dtype_arg(st, dtype_obj, dtype, &dtype) < 0)
        return NULL;
    pith_tensor *t = tensor_from_data(st, data, dtype_obj != Py_None, dtype);
    if (t && requires_grad && factory_requires_grad(st, t) < 0) {
        pith_release(t);
        return NULL;
    }
    return t ? tensor_wrap(st, t) : NULL;
}

static PyObject *module_get_default_dtype(PyObject *module, PyObject *unused)
{
    return dtype_object(state_of_module(module), pith_get_default_dtype());
}

static PyObject *module_set_default_dtype(PyObject *module, PyObject *dtype_obj)
{
    pith_module_state *st = state_of_module(module);
    pith_dtype dtype;
    if (dtype_from_object(st, dtype_obj, &dtype) < 0)
        return NULL;
    if (!pith_dtype_is_floating(dtype)) {
        PyErr_Format(PyExc_TypeError, "only floating-point types are supported as the default "
                     "type, not pith.%s", pith_dtype_name(dtype));
        return NULL;
    }
    pith_set_default_dtype(dtype);
    Py_RETURN_NONE;
}

static PyObject *module_get_num_threads(PyObject *module, PyObject *unused)
{
    return PyLong_FromLong(pith_get_num_threads());
}

/* set_num_threads(n): the threads of pith's kernels (OpenMP) and of its BLAS (Note [BLAS
 * threads]). */
static PyObject *module_set_num_threads(PyObject *module, PyObject *arg)
{
    if (!PyLong_Check(arg) || PyBool_Check(arg)) {
        PyErr_Format(PyExc_TypeError, "set_num_threads(): argument must be int, not %.200s",
                     Py_TYPE(arg)->tp_name);
        return NULL;
    }
    long n = PyLong_AsLong(arg);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n <= 0 || n > 4096) {
        PyErr_Format(PyExc_RuntimeError, "set_num_threads expects a positive integer, got %ld",
                     n);
        return NULL;
    }
    pith_set_num_threads((int)n);
    Py_RETURN_NONE;
}

/* _blas_info(): the BLAS in the process, for pith.__config__ (Note [BLAS threads]). */
static PyObject *module_blas_info(PyObject *module, PyObject *unused)
{
    static const char *const threading[] = {"sequential", "pthreads", "openmp"};
    const char *config = pith_blas_get_config(); /* loads OpenBLAS: NULL when it cannot */
    if (!config)
        return error_raise(state_of_module(module));
    pith_blas_threading kind = pith_blas_get_threading();
    return Py_BuildValue("{s:s,s:s,s:i}", "config", config, "threading",
                         threading[kind], "num_threads", pith_blas_get_num_threads());
}

/* The instruction set of the vectorised math kernels: See Note [CPU capability]. */
static PyObject *module_get_cpu_capability(PyObject *module, PyObject *unused)
{
    return PyUnicode_FromString(pith_get_cpu_capability());
}

static PyObject *module_live_tensors(PyObject *module, PyObject *unused)
{
    return PyLong_FromSize_t(pith_live_tensors());
}

static PyObject *module_interpreter_name(PyObject *module, PyObject *unused)
{
    return PyUnicode_FromString(pith_interpreter_name(state_of_module(module)->interp));
}

static PyObject *module_interpreter_gate_open(PyObject *module, PyObject *unused)
{
    return PyBool_FromLong(pith_interpreter_gate_open(state_of_module(module)->interp));
}

#define KW_METHOD(name, fn, doc)                                                            \
    {name, (PyCFunction)(void (*)(void))fn, METH_VARARGS | METH_KEYWORDS, doc}

static PyMethodDef module_methods[] = {
    KW_METHOD("tensor", module_tensor, "tensor(data, *, dtype=None): a tensor from nested lists."),
    {"get_default_dtype", module_get_default_dtype, METH_NOARGS, "The default float dtype."},
    {"set_default_dtype", module_set_default_dtype, METH_O, "Sets the default float dtype."},
    {"get_num_threads", module_get_num_threads, METH_NOARGS,
     "The number of threads pith's kernels and its BLAS use."},
    {"set_num_threads", module_set_num_threads, METH_O,
     "set_num_threads(n): the number of threads pith's kernels and its BLAS use."},
    {"_blas_info", module_blas_info, METH_NOARGS,
     "The BLAS in the process: {'config', 'threading', 'num_threads'} (pith.__config__)."},
    {"_get_cpu_capability", module_get_cpu_capability, METH_NOARGS,
     "pith_get_cpu_capability(): 'sse2', 'avx2' or 'avx512'."},
    {"_live_tensors", module_live_tensors, METH_NOARGS, "pith_live_tensors(), for leak tests."},
    {"_interpreter_name", module_interpreter_name, METH_NOARGS,
     "The name of this interpreter's table (its ID)."},
    {"_interpreter_gate_open", module_interpreter_gate_open, METH_NOARGS,
     "Whether this interpreter's table still admits other threads (False once teardown's "
     "phase 1 ran: Note [Interpreter teardown])."},
    {NULL},
};

static int module_exec(PyObject *module)
{
    pith_module_state *st = state_of_module(module);
    if (interp_init(st) < 0 || errors_init(module, st) < 0 || dtype_types_init(module, st) < 0 ||
        generator_type_init(module, st) < 0 || device_type_init(module, st) < 0 ||
        tensor_type_init(module, st) < 0 || autograd_init(module, st) < 0 ||
        function_layer_init(module, st) < 0 ||
        binder_init(module, st) < 0 ||
        PyModule_AddFunctions(module, conversions_module_methods) < 0 ||
        PyModule_AddFunctions(module, interop_module_methods) < 0 ||
        PyModule_AddFunctions(module, testing_module_methods) < 0 ||
        PyModule_AddFunctions(module, grad_mode_module_methods) < 0 ||
        PyModule_AddFunctions(module, pydispatch_module_methods) < 0 ||
        PyModule_AddFunctions(module, compile_module_methods) < 0)
        return -1;
    return 0;
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    pith_module_state *st = state_of_module(module);
    Py_VISIT(st->tensor_type);
    Py_VISIT(st->dtype_type);
    Py_VISIT(st->size_type);
    Py_VISIT(st->generator_type);
    Py_VISIT(st->default_generator);
    Py_VISIT(st->strided);
    Py_VISIT(st->device_type);
    Py_VISIT(st->devices[0]);
    Py_VISIT(st->devices[1]);
    for (int d = 0; d < PITH_NUM_DTYPES; d++)
        Py_VISIT(st->dtypes[d]);
    Py_VISIT(st->value_error);
    Py_VISIT(st->type_error);
    Py_VISIT(st->interpreter_error);
    Py_VISIT(st->generic);
    Py_VISIT(st->autograd.node_type);
    Py_VISIT(st->autograd.node_classes);
    int rc = binder_traverse(st, visit, arg);
    if (!rc)
        rc = function_layer_traverse(st, visit, arg);
    return rc ? rc : pydispatch_traverse(st, visit, arg);
}

/* Never disarms the interpreter table: see Note [One interpreter table per interpreter]. */
static int module_clear(PyObject *module)
{
    pith_module_state *st = state_of_module(module);
    Py_CLEAR(st->tensor_type);
    Py_CLEAR(st->dtype_type);
    Py_CLEAR(st->size_type);
    Py_CLEAR(st->generator_type);
    Py_CLEAR(st->default_generator);
    Py_CLEAR(st->strided);
    Py_CLEAR(st->device_type);
    Py_CLEAR(st->devices[0]);
    Py_CLEAR(st->devices[1]);
    for (int d = 0; d < PITH_NUM_DTYPES; d++)
        Py_CLEAR(st->dtypes[d]);
    Py_CLEAR(st->value_error);
    Py_CLEAR(st->type_error);
    Py_CLEAR(st->interpreter_error);
    Py_CLEAR(st->generic);
    Py_CLEAR(st->autograd.node_type);
    Py_CLEAR(st->autograd.node_classes);
    compile_disarm(st);
    binder_clear(st);
    function_layer_clear(st);
    pydispatch_clear(st);
    return 0;
}

static void module_free(void *module)
{
    module_clear((PyObject *)module);
}

static PyModuleDef_Slot module_slots[] = {
    {Py_mod_exec, module_exec},
    {0, NULL},
};

PyModuleDef pith_module_def = {
    PyModuleDef_HEAD_INIT,
    .m_name = "pith._C",
    .m_doc = "The C extension of pith: tensors over libpith.",
    .m_size = sizeof(pith_module_state),
    .m_methods = module_methods,
    .m_slots = module_slots,
    .m_traverse = module_traverse,
    .m_clear = module_clear,
    .m_free = module_free,
};

PyMODINIT_FUNC PyInit__C(void)
{
    return PyModuleDef_Init(&pith_module_def);
}
