/* convert.c — Python data to tensors (pith.tensor's nested lists) and tensors back to Python
 * values (item, tolist). */
#include <string.h>

#include "state.h"

/* ---- nested sequences -> tensor ---- */

typedef struct {
    pith_module_state *st;
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    int64_t numel;
    int64_t *ints;   /* every value as int64 (float values: unused) */
    double *floats;  /* every value as double */
    int64_t filled;
    bool any_float;  /* some value came from a float: build from `floats` */
    bool overflow;   /* some int does not fit int64: fine only for a float dtype */
    bool has_dtype;  /* whether `dtype` holds the promoted dtype of the values so far */
    pith_dtype dtype;
} data_walk;

static int data_is_sequence(PyObject *obj)
{
    return PyList_Check(obj) || PyTuple_Check(obj);
}

/* The shape is read from the first element of each level; data_fill checks the rest. */
static int data_shape(PyObject *data, data_walk *w)
{
    PyObject *obj = data;
    w->ndim = 0;
    w->numel = 1;
    while (data_is_sequence(obj)) {
        if (w->ndim == PITH_MAX_DIMS) {
            PyErr_Format(PyExc_ValueError, "tensor: data has more than %d dims", PITH_MAX_DIMS);
            return -1;
        }
        Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
        w->sizes[w->ndim++] = n;
        if (n != 0 && w->numel > INT64_MAX / n) {
            PyErr_SetString(PyExc_ValueError, "tensor: too many elements");
            return -1;
        }
        w->numel *= n;
        if (n == 0)
            break;
        obj = PySequence_Fast_GET_ITEM(obj, 0);
    }
    return 0;
}

/* One leaf as a Python bool, int or float (new reference), with the dtype it infers as in
 * PyTorch: bool, int64, the default dtype for a Python float, and their own dtype for a
 * one-element tensor or a NumPy scalar. */
static PyObject *leaf_value(const data_walk *w, PyObject *obj, pith_dtype *dtype)
{
    if (PyBool_Check(obj)) {
        *dtype = PITH_BOOL;
        return Py_NewRef(obj);
    }
    if (PyLong_CheckExact(obj)) {
        *dtype = PITH_INT64;
        return Py_NewRef(obj);
    }
    if (PyFloat_CheckExact(obj)) {
        *dtype = pith_get_default_dtype();
        return Py_NewRef(obj);
    }
    if (tensor_check(w->st, obj)) {
        pith_tensor *t = tensor_of(obj);
        if (pith_numel(t) != 1) {
            PyErr_SetString(PyExc_ValueError,
                            "only one element tensors can be converted to Python scalars");
            return NULL;
        }
        *dtype = pith_tensor_dtype(t);
        return tensor_item(t);
    }
    int is_numpy = numpy_scalar_dtype(obj, dtype); /* np.float64 is also a float */
    if (is_numpy)
        return is_numpy < 0 ? NULL : PyObject_CallMethod(obj, "item", NULL);
    if (PyLong_Check(obj)) {
        *dtype = PITH_INT64;
        return Py_NewRef(obj);
    }
    if (PyFloat_Check(obj)) {
        *dtype = pith_get_default_dtype();
        return Py_NewRef(obj);
    }
    /* PyTorch's errors: a str is an invalid type (torch.tensor(["a"]) says "too many
     * dimensions" instead), other types have no dtype */
    if (PyUnicode_Check(obj))
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%.200s'", Py_TYPE(obj)->tp_name);
    else if (data_is_sequence(obj))
        PyErr_Format(PyExc_TypeError, "'%.200s' object cannot be interpreted as a number: the "
                     "sequences of one dim differ in depth", Py_TYPE(obj)->tp_name);
    else
        PyErr_Format(PyExc_RuntimeError, "Could not infer dtype of %.200s",
                     Py_TYPE(obj)->tp_name);
    return NULL;
}

static int data_store(PyObject *obj, data_walk *w)
{
    pith_dtype dtype;
    PyObject *value = leaf_value(w, obj, &dtype);
    if (!value)
        return -1;
    int64_t i = w->filled++;
    if (pith_dtype_is_floating(dtype)) {
        w->floats[i] = PyFloat_AsDouble(value);
        w->any_float = true;
    } else {
        int overflow = 0;
        long long v = PyLong_AsLongLongAndOverflow(value, &overflow);
        w->ints[i] = v;
        w->floats[i] = overflow ? PyLong_AsDouble(value) : (double)v;
        w->overflow |= overflow != 0;
    }
    Py_DECREF(value);
    if (PyErr_Occurred())
        return -1;
    w->dtype = w->has_dtype ? pith_promote_types(w->dtype, dtype) : dtype;
    w->has_dtype = true;
    return 0;
}

static int data_fill(PyObject *obj, int depth, data_walk *w)
{
    if (depth == w->ndim)
        return data_store(obj, w);
    if (!data_is_sequence(obj)) {
        PyErr_Format(PyExc_TypeError, "expected sequence of length %lld at dim %d (got %.200s)",
                     (long long)w->sizes[depth], depth, Py_TYPE(obj)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n != w->sizes[depth]) {
        PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %zd)",
                     (long long)w->sizes[depth], depth, n);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++)
        if (data_fill(PySequence_Fast_GET_ITEM(obj, i), depth + 1, w) < 0)
            return -1;
    return 0;
}

/* Casts `t` (stolen) to `dtype`; returns it unchanged when it already has that dtype. */
static pith_tensor *tensor_cast_steal(pith_tensor *t, pith_dtype dtype)
{
    if (!t || pith_tensor_dtype(t) == dtype)
        return t;
    pith_tensor *out = pith_to_dtype(t, dtype);
    pith_release(t);
    return out;
}

/* Whether `data` may be an array-like object (NumPy, buffer, DLPack) rather than the lists
 * and Python numbers that the walk reads. */
static int data_maybe_array(PyObject *data)
{
    return !PyList_CheckExact(data) && !PyTuple_CheckExact(data) && !PyFloat_CheckExact(data) &&
           !PyLong_CheckExact(data) && !PyBool_Check(data);
}

/* pith.tensor(data, dtype): dtype inference as in PyTorch: bools give bool, ints int64,
 * Python floats the default dtype, tensors and NumPy scalars their own dtype, all promoted
 * together; NumPy arrays, buffers and DLPack objects keep their dtype (interop.c). Always a
 * copy. Returns a new C reference, or NULL with a Python error. */
pith_tensor *tensor_from_data(pith_module_state *st, PyObject *data, int has_dtype,
                              pith_dtype dtype)
{
    if (tensor_check(st, data)) {
        pith_tensor *t = pith_clone(tensor_of(data));
        t = has_dtype ? tensor_cast_steal(t, dtype) : t;
        if (!t)
            error_raise(st);
        return t;
    }
    if (data_maybe_array(data)) {
        pith_tensor *t = interop_tensor_from(st, data, 0, has_dtype, dtype);
        if (t || PyErr_Occurred())
            return t;
    }
    data_walk w = {.st = st};
    pith_tensor *t = NULL;
    if (data_shape(data, &w) < 0)
        return NULL;
    size_t n = w.numel ? (size_t)w.numel : 1;
    w.ints = PyMem_Calloc(n, sizeof(int64_t));
    w.floats = PyMem_Calloc(n, sizeof(double));
    if (!w.ints || !w.floats) {
        PyErr_NoMemory();
        goto done;
    }
    if (data_fill(data, 0, &w) < 0)
        goto done;
    pith_dtype target = has_dtype ? dtype : w.has_dtype ? w.dtype : pith_get_default_dtype();
    if (w.overflow && !pith_dtype_is_floating(target)) {
        PyErr_SetString(PyExc_ValueError, "Overflow when unpacking long long");
        goto done;
    }
    t = w.any_float || w.overflow ? pith_from_data(w.floats, w.ndim, w.sizes, PITH_FLOAT64)
                                  : pith_from_data(w.ints, w.ndim, w.sizes, PITH_INT64);
    t = tensor_cast_steal(t, target);
    if (!t)
        error_raise(st);
done:
    PyMem_Free(w.ints);
    PyMem_Free(w.floats);
    return t;
}

/* ---- tensor -> Python values ---- */

/* One element at `p` of a tensor of `dtype` (never float16/bfloat16: cast first). */
static PyObject *element_to_python(const char *p, pith_dtype dtype)
{
    switch (dtype) {
    case PITH_BOOL: /* as a byte: See Note [Bool bytes] (core/dtype.h) */
        return PyBool_FromLong(*(const uint8_t *)p != 0);
    case PITH_UINT8:
        return PyLong_FromLong(*(const uint8_t *)p);
    case PITH_INT8:
        return PyLong_FromLong(*(const int8_t *)p);
    case PITH_INT16:
        return PyLong_FromLong(*(const int16_t *)p);
    case PITH_INT32:
        return PyLong_FromLong(*(const int32_t *)p);
    case PITH_INT64:
        return PyLong_FromLongLong(*(const int64_t *)p);
    case PITH_FLOAT32:
        return PyFloat_FromDouble(*(const float *)p);
    case PITH_FLOAT64:
        return PyFloat_FromDouble(*(const double *)p);
    default:
        PyErr_Format(PyExc_RuntimeError, "pith: cannot read a %s element directly",
                     pith_dtype_name(dtype));
        return NULL;
    }
}

typedef struct {
    pith_dtype dtype;
    size_t itemsize;
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    int64_t strides[PITH_MAX_DIMS];
} tensor_reader;

static PyObject *reader_list(const tensor_reader *r, const char *p, int depth)
{
    if (depth == r->ndim)
        return element_to_python(p, r->dtype);
    PyObject *list = PyList_New(r->sizes[depth]);
    if (!list)
        return NULL;
    for (int64_t i = 0; i < r->sizes[depth]; i++) {
        PyObject *v = reader_list(r, p + i * r->strides[depth] * (int64_t)r->itemsize, depth + 1);
        if (!v) {
            Py_DECREF(list);
            return NULL;
        }
        PyList_SET_ITEM(list, i, v);
    }
    return list;
}

/* Reads through a float32 copy for the 16-bit float types, as PyTorch returns floats. */
static PyObject *tensor_to_python(pith_tensor *t, int single)
{
    pith_tensor *src = t;
    pith_retain(src);
    pith_dtype dtype = pith_tensor_dtype(t);
    if (dtype == PITH_FLOAT16 || dtype == PITH_BFLOAT16)
        src = tensor_cast_steal(src, PITH_FLOAT32);
    PyObject *result = NULL;
    if (!src)
        goto fail;
    if (pith_tensor_device(src) != PITH_CPU || tensor_lacks_data(src)) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "Cannot copy out of meta tensor; no data!");
        goto done;
    }
    tensor_reader r = {.dtype = pith_tensor_dtype(src)};
    r.itemsize = pith_dtype_size(r.dtype);
    r.ndim = pith_sizes(src, r.sizes);
    if (r.ndim < 0 || pith_strides(src, r.strides) < 0)
        goto fail;
    const char *data = pith_data_ptr(src);
    result = single ? element_to_python(data, r.dtype) : reader_list(&r, data, 0);
    goto done;
fail:
    PyErr_SetString(PyExc_RuntimeError, pith_last_error());
done:
    if (src)
        pith_release(src);
    return result;
}

PyObject *tensor_tolist(pith_tensor *t)
{
    return tensor_to_python(t, 0);
}

PyObject *tensor_item(pith_tensor *t)
{
    int64_t n = pith_numel(t);
    if (n != 1) {
        PyErr_Format(PyExc_RuntimeError,
                     "a Tensor with %lld elements cannot be converted to Scalar", (long long)n);
        return NULL;
    }
    return tensor_to_python(t, 1);
}

