/* convert.c — Python data to tensors (pith.tensor's nested lists) and tensors back to Python
 * values (item, tolist), plus the `*size` argument convention of the factories. */
#include <string.h>

#include "state.h"

/* ---- nested sequences -> tensor ---- */

typedef enum { KIND_BOOL, KIND_INT, KIND_FLOAT } scalar_kind;

typedef struct {
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    int64_t numel;
    int64_t *ints;   /* every value as int64 (floats: unused) */
    double *floats;  /* every value as double */
    int64_t filled;
    scalar_kind kind;
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

static int data_fill(PyObject *obj, int depth, data_walk *w)
{
    if (depth < w->ndim) {
        if (!data_is_sequence(obj)) {
            PyErr_Format(PyExc_ValueError, "expected sequence of length %lld at dim %d (got %.200s)",
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
    int64_t i = w->filled++;
    if (PyBool_Check(obj)) {
        w->ints[i] = obj == Py_True;
        w->floats[i] = (double)w->ints[i];
    } else if (PyLong_Check(obj)) {
        long long v = PyLong_AsLongLong(obj);
        if (v == -1 && PyErr_Occurred())
            return -1;
        w->ints[i] = v;
        w->floats[i] = (double)v;
        if (w->kind < KIND_INT)
            w->kind = KIND_INT;
    } else if (PyFloat_Check(obj)) {
        w->floats[i] = PyFloat_AS_DOUBLE(obj);
        w->kind = KIND_FLOAT;
    } else {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%.200s'", Py_TYPE(obj)->tp_name);
        return -1;
    }
    return 0;
}

/* A tensor of the inferred dtype (bool, int64, or float64 for floats) holding the values. */
static pith_tensor *data_to_tensor(const data_walk *w)
{
    if (w->kind == KIND_FLOAT)
        return pith_from_data(w->floats, w->ndim, w->sizes, PITH_FLOAT64);
    if (w->kind == KIND_INT)
        return pith_from_data(w->ints, w->ndim, w->sizes, PITH_INT64);
    bool *bools = PyMem_Malloc(w->numel ? (size_t)w->numel : 1);
    if (!bools) {
        pith_set_error(PITH_ERR_NOMEM, "tensor: out of memory");
        return NULL;
    }
    for (int64_t i = 0; i < w->numel; i++)
        bools[i] = w->ints[i] != 0;
    pith_tensor *t = pith_from_data(bools, w->ndim, w->sizes, PITH_BOOL);
    PyMem_Free(bools);
    return t;
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

/* pith.tensor(data, dtype): dtype inference as in PyTorch: bools give bool, ints int64,
 * any float the default dtype. Returns a new C reference, or NULL with a Python error. */
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
    data_walk w = {0};
    w.kind = KIND_BOOL;
    pith_tensor *t = NULL;
    /* Lists and tuples only for now: numbers and sequences are read through the fast
     * sequence API. (NumPy arrays and the buffer protocol are still to come.) */
    if (!data_is_sequence(data) && !PyLong_Check(data) && !PyFloat_Check(data)) {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%.200s'",
                     Py_TYPE(data)->tp_name);
        return NULL;
    }
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
    if (w.numel == 0 && !has_dtype)
        w.kind = KIND_FLOAT; /* torch.tensor([]) is float */
    pith_dtype target = has_dtype ? dtype
                        : w.kind == KIND_FLOAT ? st->default_dtype
                        : w.kind == KIND_INT   ? PITH_INT64
                                               : PITH_BOOL;
    t = tensor_cast_steal(data_to_tensor(&w), target);
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
    case PITH_BOOL:
        return PyBool_FromLong(*(const bool *)p);
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
    if (pith_tensor_device(src) != PITH_CPU) {
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

/* ---- `*size` ---- */

int sizes_from_args(PyObject *args, int64_t *sizes, const char *fn)
{
    PyObject *seq = args;
    if (PyTuple_GET_SIZE(args) == 1 && !PyLong_Check(PyTuple_GET_ITEM(args, 0)))
        seq = PyTuple_GET_ITEM(args, 0); /* zeros((2, 3)) or zeros([2, 3]) */
    PyObject *fast = PySequence_Fast(seq, "");
    if (!fast) {
        PyErr_Format(PyExc_TypeError, "%s(): size must be a tuple of ints, not %.200s", fn,
                     Py_TYPE(seq)->tp_name);
        return -1;
    }
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > PITH_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "%s(): at most %d dims, got %zd", fn, PITH_MAX_DIMS, n);
        Py_DECREF(fast);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(fast, i);
        if (!PyIndex_Check(item) || PyBool_Check(item)) {
            PyErr_Format(PyExc_TypeError,
                         "%s(): argument 'size' must be a tuple of ints, but found element of "
                         "type %.200s at pos %zd",
                         fn, Py_TYPE(item)->tp_name, i);
            Py_DECREF(fast);
            return -1;
        }
        sizes[i] = PyLong_AsLongLong(item);
        if (sizes[i] == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
    }
    Py_DECREF(fast);
    return (int)n;
}
