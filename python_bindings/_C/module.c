/* module.c — the pith._C module: PEP 489 multi-phase init, its state, and the module-level
 * functions (pith.tensor, the factories, default dtype, _live_tensors). See Note [Module
 * state] (state.h). */
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

/* tensor(data, dtype=None) */
static PyObject *module_tensor(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"data", "dtype", NULL};
    PyObject *data, *dtype_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$O:tensor", kwlist, &data, &dtype_obj))
        return NULL;
    pith_module_state *st = state_of_module(module);
    pith_dtype dtype = st->default_dtype;
    if (dtype_arg(st, dtype_obj, dtype, &dtype) < 0)
        return NULL;
    pith_tensor *t = tensor_from_data(st, data, dtype_obj != Py_None, dtype);
    return t ? tensor_wrap(st, t) : NULL;
}

typedef pith_tensor *(*sized_factory)(int ndim, const int64_t *sizes, pith_dtype dtype);

/* Factories of the form f(*size, dtype=None). */
static PyObject *factory_call(PyObject *module, PyObject *args, PyObject *kwargs,
                              sized_factory fn, const char *name)
{
    pith_module_state *st = state_of_module(module);
    PyObject *dtype_obj = NULL;
    if (kwargs) {
        Py_ssize_t nkw = PyDict_GET_SIZE(kwargs);
        dtype_obj = PyDict_GetItemString(kwargs, "dtype");
        if (nkw != (dtype_obj ? 1 : 0)) {
            PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument", name);
            return NULL;
        }
    }
    pith_dtype dtype;
    if (dtype_arg(st, dtype_obj, st->default_dtype, &dtype) < 0)
        return NULL;
    int64_t sizes[PITH_MAX_DIMS];
    int ndim = sizes_from_args(args, sizes, name);
    if (ndim < 0)
        return NULL;
    return tensor_wrap(st, fn(ndim, sizes, dtype));
}

#define MODULE_FACTORY_(name)                                                               \
    static PyObject *module_##name(PyObject *module, PyObject *args, PyObject *kwargs)      \
    {                                                                                       \
        return factory_call(module, args, kwargs, pith_##name, #name);                      \
    }
MODULE_FACTORY_(zeros)
MODULE_FACTORY_(ones)
MODULE_FACTORY_(empty)
MODULE_FACTORY_(rand)
MODULE_FACTORY_(randn)
#undef MODULE_FACTORY_

/* full(size, fill_value, *, dtype=None): the dtype follows fill_value, as in PyTorch. */
static PyObject *module_full(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"size", "fill_value", "dtype", NULL};
    PyObject *size, *fill, *dtype_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "OO|$O:full", kwlist, &size, &fill,
                                     &dtype_obj))
        return NULL;
    pith_module_state *st = state_of_module(module);
    pith_dtype fallback = PyBool_Check(fill) ? PITH_BOOL
                          : PyLong_Check(fill) ? PITH_INT64 : st->default_dtype;
    pith_dtype dtype;
    if (dtype_arg(st, dtype_obj, fallback, &dtype) < 0)
        return NULL;
    double value = PyFloat_AsDouble(fill);
    if (value == -1.0 && PyErr_Occurred())
        return NULL;
    PyObject *size_args = PyTuple_Pack(1, size);
    if (!size_args)
        return NULL;
    int64_t sizes[PITH_MAX_DIMS];
    int ndim = sizes_from_args(size_args, sizes, "full");
    Py_DECREF(size_args);
    if (ndim < 0)
        return NULL;
    return tensor_wrap(st, pith_full(ndim, sizes, value, dtype));
}

/* arange(end) / arange(start, end, step=1, *, dtype=None): int64 when every bound is an
 * int, else the default dtype. */
static PyObject *module_arange(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"start", "end", "step", "dtype", NULL};
    PyObject *a = NULL, *b = Py_None, *c = NULL, *dtype_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|OO$O:arange", kwlist, &a, &b, &c,
                                     &dtype_obj))
        return NULL;
    PyObject *start = b == Py_None ? NULL : a, *end = b == Py_None ? a : b;
    PyObject *bounds[3] = {start, end, c};
    double values[3] = {0.0, 0.0, 1.0};
    bool all_int = true;
    for (int i = 0; i < 3; i++) {
        if (!bounds[i])
            continue;
        if (!PyLong_Check(bounds[i]) && !PyFloat_Check(bounds[i])) {
            PyErr_Format(PyExc_TypeError, "arange(): bounds must be numbers, not %.200s",
                         Py_TYPE(bounds[i])->tp_name);
            return NULL;
        }
        all_int = all_int && PyLong_Check(bounds[i]);
        values[i] = PyFloat_AsDouble(bounds[i]);
        if (values[i] == -1.0 && PyErr_Occurred())
            return NULL;
    }
    pith_module_state *st = state_of_module(module);
    pith_dtype dtype;
    if (dtype_arg(st, dtype_obj, all_int ? PITH_INT64 : st->default_dtype, &dtype) < 0)
        return NULL;
    return tensor_wrap(st, pith_arange(values[0], values[1], values[2], dtype));
}

static PyObject *module_get_default_dtype(PyObject *module, PyObject *unused)
{
    pith_module_state *st = state_of_module(module);
    return dtype_object(st, st->default_dtype);
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
    st->default_dtype = dtype;
    Py_RETURN_NONE;
}

static PyObject *module_live_tensors(PyObject *module, PyObject *unused)
{
    return PyLong_FromSize_t(pith_live_tensors());
}

static PyObject *module_interpreter_name(PyObject *module, PyObject *unused)
{
    return PyUnicode_FromString(pith_interpreter_name(state_of_module(module)->interp));
}

static PyObject *module_manual_seed(PyObject *module, PyObject *seed)
{
    unsigned long long v = PyLong_AsUnsignedLongLongMask(seed);
    if (v == (unsigned long long)-1 && PyErr_Occurred())
        return NULL;
    pith_manual_seed(v);
    Py_RETURN_NONE;
}

#define KW_METHOD(name, fn, doc)                                                            \
    {name, (PyCFunction)(void (*)(void))fn, METH_VARARGS | METH_KEYWORDS, doc}

static PyMethodDef module_methods[] = {
    KW_METHOD("tensor", module_tensor, "tensor(data, *, dtype=None): a tensor from nested lists."),
    KW_METHOD("zeros", module_zeros, "zeros(*size, dtype=None)"),
    KW_METHOD("ones", module_ones, "ones(*size, dtype=None)"),
    KW_METHOD("empty", module_empty, "empty(*size, dtype=None)"),
    KW_METHOD("rand", module_rand, "rand(*size, dtype=None): uniform on [0, 1)."),
    KW_METHOD("randn", module_randn, "randn(*size, dtype=None): standard normal."),
    KW_METHOD("full", module_full, "full(size, fill_value, *, dtype=None)"),
    KW_METHOD("arange", module_arange, "arange(start=0, end, step=1, *, dtype=None)"),
    {"get_default_dtype", module_get_default_dtype, METH_NOARGS, "The default float dtype."},
    {"set_default_dtype", module_set_default_dtype, METH_O, "Sets the default float dtype."},
    {"manual_seed", module_manual_seed, METH_O, "Seeds the random generator."},
    {"_live_tensors", module_live_tensors, METH_NOARGS, "pith_live_tensors(), for leak tests."},
    {"_interpreter_name", module_interpreter_name, METH_NOARGS,
     "The name of this interpreter's table (its ID)."},
    {NULL},
};

static int module_exec(PyObject *module)
{
    pith_module_state *st = state_of_module(module);
    st->default_dtype = PITH_FLOAT32;
    if (interp_init(st) < 0 || errors_init(module, st) < 0 || dtype_types_init(module, st) < 0 ||
        tensor_type_init(module, st) < 0 || PyModule_AddFunctions(module, ops_module_methods) < 0 ||
        PyModule_AddFunctions(module, methods_module_methods) < 0 ||
        PyModule_AddFunctions(module, interop_module_methods) < 0)
        return -1;
    return 0;
}

static int module_traverse(PyObject *module, visitproc visit, void *arg)
{
    pith_module_state *st = state_of_module(module);
    Py_VISIT(st->tensor_type);
    Py_VISIT(st->dtype_type);
    Py_VISIT(st->size_type);
    for (int d = 0; d < PITH_NUM_DTYPES; d++)
        Py_VISIT(st->dtypes[d]);
    Py_VISIT(st->value_error);
    Py_VISIT(st->interpreter_error);
    return 0;
}

/* Never disarms the interpreter table: see Note [One interpreter table per interpreter]. */
static int module_clear(PyObject *module)
{
    pith_module_state *st = state_of_module(module);
    Py_CLEAR(st->tensor_type);
    Py_CLEAR(st->dtype_type);
    Py_CLEAR(st->size_type);
    for (int d = 0; d < PITH_NUM_DTYPES; d++)
        Py_CLEAR(st->dtypes[d]);
    Py_CLEAR(st->value_error);
    Py_CLEAR(st->interpreter_error);
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
