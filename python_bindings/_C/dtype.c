/* dtype.c — pith.dtype (one object per dtype: pith.float32, pith.int64, ...) and
 * pith.Size, the tuple subclass that `shape` and `size()` return. */
#include <string.h>

#include "state.h"

/* ---- pith.dtype ---- */

static PyObject *dtype_repr(PyObject *self)
{
    return PyUnicode_FromFormat("pith.%s", pith_dtype_name(((pith_dtype_object *)self)->dtype));
}

static PyObject *dtype_get_is_floating_point(PyObject *self, void *closure)
{
    return PyBool_FromLong(pith_dtype_is_floating(((pith_dtype_object *)self)->dtype));
}

static PyObject *dtype_get_itemsize(PyObject *self, void *closure)
{
    return PyLong_FromSize_t(pith_dtype_size(((pith_dtype_object *)self)->dtype));
}

static PyObject *dtype_get_is_signed(PyObject *self, void *closure)
{
    return PyBool_FromLong(pith_dtype_is_signed(((pith_dtype_object *)self)->dtype));
}

static PyObject *dtype_get_is_complex(PyObject *self, void *closure)
{
    Py_RETURN_FALSE; /* pith has no complex dtypes */
}

/* (mantissa digits, largest exponent) of a floating dtype, None otherwise: what
 * pith.finfo derives its values from (pith_dtype_float_format, core/dtype.c). */
static PyObject *dtype_get_float_format(PyObject *self, void *closure)
{
    int digits, max_exponent;
    if (!pith_dtype_float_format(((pith_dtype_object *)self)->dtype, &digits, &max_exponent))
        Py_RETURN_NONE;
    return Py_BuildValue("(ii)", digits, max_exponent);
}

static PyObject *dtype_reduce(PyObject *self, PyObject *unused)
{
    /* dtypes are singletons per module: pickle them by name. */
    return PyUnicode_FromString(pith_dtype_name(((pith_dtype_object *)self)->dtype));
}

static PyGetSetDef dtype_getset[] = {
    {"is_floating_point", dtype_get_is_floating_point, NULL, "Whether this is a float dtype.",
     NULL},
    {"itemsize", dtype_get_itemsize, NULL, "Bytes per element.", NULL},
    {"is_signed", dtype_get_is_signed, NULL, "Whether values can be negative.", NULL},
    {"is_complex", dtype_get_is_complex, NULL, "False: pith has no complex dtypes.", NULL},
    {"_float_format", dtype_get_float_format, NULL,
     "(mantissa digits, largest exponent) of a floating dtype, else None.", NULL},
    {NULL},
};

static PyMethodDef dtype_methods[] = {
    {"__reduce__", dtype_reduce, METH_NOARGS, NULL},
    {NULL},
};

static int dtype_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    return 0;
}

static void dtype_dealloc(PyObject *self)
{
    PyTypeObject *tp = Py_TYPE(self);
    PyObject_GC_UnTrack(self);
    tp->tp_free(self);
    Py_DECREF(tp);
}

static PyType_Slot dtype_slots[] = {
    {Py_tp_repr, dtype_repr},
    {Py_tp_getset, dtype_getset},
    {Py_tp_methods, dtype_methods},
    {Py_tp_traverse, dtype_traverse},
    {Py_tp_dealloc, dtype_dealloc},
    {Py_tp_doc, "A tensor element type, such as pith.float32."},
    {0, NULL},
};

static PyType_Spec dtype_spec = {
    .name = "pith.dtype",
    .basicsize = sizeof(pith_dtype_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_IMMUTABLETYPE |
             Py_TPFLAGS_DISALLOW_INSTANTIATION,
    .slots = dtype_slots,
};

PyObject *dtype_object(pith_module_state *st, pith_dtype dtype)
{
    if ((unsigned)dtype >= PITH_NUM_DTYPES) {
        PyErr_Format(PyExc_RuntimeError, "pith: invalid dtype %d", (int)dtype);
        return NULL;
    }
    return Py_NewRef(st->dtypes[dtype]);
}

int dtype_from_object(pith_module_state *st, PyObject *obj, pith_dtype *out)
{
    if (!PyObject_TypeCheck(obj, st->dtype_type)) {
        PyErr_Format(PyExc_TypeError, "dtype must be a pith.dtype, not %.200s",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    *out = ((pith_dtype_object *)obj)->dtype;
    return 0;
}

/* ---- pith.Size ---- */

static PyObject *size_repr(PyObject *self)
{
    PyObject *list = PySequence_List(self);
    if (!list)
        return NULL;
    PyObject *r = PyUnicode_FromFormat("pith.Size(%R)", list);
    Py_DECREF(list);
    return r;
}

static PyObject *size_numel(PyObject *self, PyObject *unused)
{
    PyObject *n = PyLong_FromLong(1);
    for (Py_ssize_t i = 0; n && i < PyTuple_GET_SIZE(self); i++)
        Py_SETREF(n, PyNumber_Multiply(n, PyTuple_GET_ITEM(self, i)));
    return n;
}

static PyMethodDef size_methods[] = {
    {"numel", size_numel, METH_NOARGS, "The product of the sizes."},
    {NULL},
};

static PyType_Slot size_slots[] = {
    {Py_tp_repr, size_repr},
    {Py_tp_methods, size_methods},
    {Py_tp_doc, "The sizes of a tensor: a tuple of ints."},
    {0, NULL},
};

static PyType_Spec size_spec = {
    .name = "pith.Size",
    .basicsize = 0,
    .itemsize = 0,
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_IMMUTABLETYPE,
    .slots = size_slots,
};

PyObject *size_new(pith_module_state *st, int ndim, const int64_t *sizes)
{
    PyObject *tuple = st->size_type->tp_alloc(st->size_type, ndim);
    if (!tuple)
        return NULL;
    for (int i = 0; i < ndim; i++) {
        PyObject *v = PyLong_FromLongLong(sizes[i]);
        if (!v) {
            Py_DECREF(tuple);
            return NULL;
        }
        PyTuple_SET_ITEM(tuple, i, v);
    }
    return tuple;
}

int dtype_types_init(PyObject *module, pith_module_state *st)
{
    st->dtype_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &dtype_spec, NULL);
    if (!st->dtype_type || PyModule_AddType(module, st->dtype_type) < 0)
        return -1;
    st->size_type = (PyTypeObject *)PyType_FromModuleAndSpec(
        module, &size_spec, (PyObject *)&PyTuple_Type);
    if (!st->size_type || PyModule_AddType(module, st->size_type) < 0)
        return -1;
    for (int d = 0; d < PITH_NUM_DTYPES; d++) {
        pith_dtype_object *obj = PyObject_GC_New(pith_dtype_object, st->dtype_type);
        if (!obj)
            return -1;
        obj->dtype = (pith_dtype)d;
        PyObject_GC_Track(obj);
        st->dtypes[d] = (PyObject *)obj;
        /* PyObject_GC_New takes a reference to a heap type: balanced in dtype_dealloc. */
        if (PyModule_AddObjectRef(module, pith_dtype_name((pith_dtype)d), (PyObject *)obj) < 0)
            return -1;
    }
    return 0;
}
