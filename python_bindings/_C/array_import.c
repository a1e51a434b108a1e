/* array_import.c — NumPy arrays and scalars and buffer-protocol objects as tensors: buffer
 * formats to dtypes, layouts, sharing (Note [Imported memory], interop.c) or copying, and
 * interop_tensor_from, the array-like half of pith.tensor and pith.as_tensor. NumPy is only
 * looked at when it is already in sys.modules: an ndarray cannot exist without it. */
#include <string.h>

#include "interop.h"

/* ---- dtypes and buffer formats ---- */

/* The struct-module format of `dtype`; NULL for bfloat16, which has none. */
const char *dtype_format(pith_dtype dtype)
{
    switch (dtype) {
    case PITH_BOOL:
        return "?";
    case PITH_UINT8:
        return "B";
    case PITH_INT8:
        return "b";
    case PITH_INT16:
        return "h";
    case PITH_INT32:
        return "i";
    case PITH_INT64:
        return sizeof(long) == 8 ? "l" : "q"; /* NumPy's int64 is 'l' where long is 64-bit */
    case PITH_FLOAT16:
        return "e";
    case PITH_FLOAT32:
        return "f";
    case PITH_FLOAT64:
        return "d";
    default:
        return NULL;
    }
}

typedef enum { FORMAT_OK, FORMAT_UNSUPPORTED, FORMAT_BYTE_ORDER } format_status;

/* The pith dtype of a one-item buffer format. Integer widths come from `itemsize`, because
 * '<', '>' and '=' formats use standard sizes ('<l' is 4 bytes). */
static format_status format_dtype(const char *format, Py_ssize_t itemsize, pith_dtype *out)
{
    const char *f = format ? format : "B";
    bool swapped = false;
    if (*f == '@' || *f == '=')
        f++;
    else if (*f == '<' || *f == '>' || *f == '!')
        swapped = (*f++ == '<') != PY_LITTLE_ENDIAN;
    if (f[0] == '\0' || f[1] != '\0')
        return FORMAT_UNSUPPORTED;
    static const pith_dtype signed_by_size[9] = {
        [1] = PITH_INT8, [2] = PITH_INT16, [4] = PITH_INT32, [8] = PITH_INT64};
    bool ok;
    switch (*f) {
    case '?':
        ok = itemsize == 1, *out = PITH_BOOL;
        break;
    case 'B':
    case 'H':
    case 'I':
    case 'L':
    case 'Q':
    case 'N':
        ok = itemsize == 1, *out = PITH_UINT8;
        break;
    case 'b':
    case 'h':
    case 'i':
    case 'l':
    case 'q':
    case 'n':
        ok = itemsize == 1 || itemsize == 2 || itemsize == 4 || itemsize == 8;
        *out = ok ? signed_by_size[itemsize] : PITH_INT8;
        break;
    case 'e':
        ok = itemsize == 2, *out = PITH_FLOAT16;
        break;
    case 'f':
        ok = itemsize == 4, *out = PITH_FLOAT32;
        break;
    case 'd':
        ok = itemsize == 8, *out = PITH_FLOAT64;
        break;
    default:
        ok = false;
    }
    if (!ok)
        return FORMAT_UNSUPPORTED;
    return swapped && itemsize > 1 ? FORMAT_BYTE_ORDER : FORMAT_OK;
}

/* ---- NumPy, when it is loaded ---- */

/* Whether `obj` is an instance of numpy.<type_name>; 0 when NumPy is not imported (then no
 * such object can exist), -1 with an error. */
int numpy_isinstance(PyObject *obj, const char *type_name)
{
    PyObject *np = PyDict_GetItemString(PyImport_GetModuleDict(), "numpy"); /* borrowed */
    if (!np)
        return 0;
    PyObject *type = PyObject_GetAttrString(np, type_name);
    if (!type) { /* NumPy half imported */
        PyErr_Clear();
        return 0;
    }
    int r = PyObject_IsInstance(obj, type);
    Py_DECREF(type);
    return r;
}

static void numpy_dtype_error(PyObject *obj, const char *what)
{
    PyObject *dtype = PyObject_GetAttrString(obj, "dtype");
    PyObject *type = dtype ? PyObject_GetAttrString(dtype, "type") : NULL;
    PyObject *name = type ? PyObject_GetAttrString(type, "__name__") : NULL;
    if (name)
        PyErr_Format(PyExc_TypeError,
                     "can't convert %s of type numpy.%U. The only supported types are: float64, "
                     "float32, float16, int64, int32, int16, int8, uint8, and bool.",
                     what, name);
    Py_XDECREF(dtype);
    Py_XDECREF(type);
    Py_XDECREF(name);
}

int numpy_scalar_dtype(PyObject *obj, pith_dtype *out)
{
    int is = numpy_isinstance(obj, "generic");
    if (is <= 0)
        return is;
    Py_buffer view;
    if (PyObject_GetBuffer(obj, &view, PyBUF_RECORDS_RO) < 0) {
        PyErr_Clear();
        numpy_dtype_error(obj, "NumPy scalar");
        return -1;
    }
    format_status fs = format_dtype(view.format, view.itemsize, out);
    PyBuffer_Release(&view);
    if (fs == FORMAT_OK)
        return 1;
    numpy_dtype_error(obj, "NumPy scalar");
    return -1;
}

/* ---- buffers as tensors ---- */

typedef struct {
    pith_dtype dtype;
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    int64_t byte_strides[PITH_MAX_DIMS];
    int64_t strides[PITH_MAX_DIMS]; /* in elements, when `shareable` */
    bool negative;  /* a stride that matters is negative */
    bool unaligned; /* the data or a stride is not a multiple of the item size */
} buffer_layout;

typedef enum { LAYOUT_OK, LAYOUT_DTYPE, LAYOUT_BYTE_ORDER, LAYOUT_NDIM } layout_status;

/* Reads the geometry of a buffer obtained with PyBUF_RECORDS_RO. A stride that no element
 * moves along (size 1, or an empty buffer) and that pith could not take is replaced by the
 * contiguous one, as NumPy may leave anything there (a[::-1] of one element). */
static layout_status buffer_layout_read(const Py_buffer *v, buffer_layout *l)
{
    switch (format_dtype(v->format, v->itemsize, &l->dtype)) {
    case FORMAT_UNSUPPORTED:
        return LAYOUT_DTYPE;
    case FORMAT_BYTE_ORDER:
        return LAYOUT_BYTE_ORDER;
    default:
        break;
    }
    if (v->ndim > PITH_MAX_DIMS)
        return LAYOUT_NDIM;
    l->ndim = v->shape || v->ndim == 0 ? v->ndim : 1; /* no shape: 1-D, or 0-dim */
    int64_t itemsize = v->itemsize;
    bool empty = false;
    for (int i = 0; i < l->ndim; i++) {
        l->sizes[i] = v->shape ? v->shape[i] : v->len / itemsize;
        empty |= l->sizes[i] == 0;
    }
    /* The exporter's sizes and strides are anybody's (np.lib.stride_tricks.as_strided):
     * wrapping checks them (pith_from_blob), and so does the copy (buffer_copy). Until
     * then only overflow-free arithmetic touches them. */
    int64_t contiguous = itemsize;
    l->negative = l->unaligned = false;
    for (int i = l->ndim - 1; i >= 0; i--) {
        int64_t s = v->strides ? v->strides[i] : contiguous;
        if ((l->sizes[i] <= 1 || empty) && (s < 0 || s % itemsize != 0))
            s = contiguous;
        l->byte_strides[i] = s;
        l->negative |= s < 0;
        l->unaligned |= s % itemsize != 0;
        l->strides[i] = s / itemsize;
        if (__builtin_mul_overflow(contiguous, l->sizes[i] > 1 ? l->sizes[i] : 1, &contiguous))
            contiguous = itemsize; /* a shape too large (refused later) or empty (nothing is
                                    * read): no element moves along the stride made of it */
    }
    l->unaligned |= (uintptr_t)v->buf % (uintptr_t)itemsize != 0;
    return LAYOUT_OK;
}

static void layout_error(layout_status status, PyObject *obj, buffer_source source,
                         const Py_buffer *v)
{
    const char *what = source == SOURCE_NUMPY_SCALAR ? "NumPy scalar" : "np.ndarray";
    if (status == LAYOUT_DTYPE && source != SOURCE_BUFFER)
        numpy_dtype_error(obj, what);
    else if (status == LAYOUT_DTYPE)
        PyErr_Format(PyExc_TypeError,
                     "can't convert a buffer of format '%s' (%zd-byte items): pith reads the "
                     "formats of bool, uint8, int8, int16, int32, int64, float16, float32 and "
                     "float64",
                     v->format ? v->format : "B", v->itemsize);
    else if (status == LAYOUT_BYTE_ORDER)
        PyErr_SetString(PyExc_ValueError,
                        "given numpy array has byte order different from the native byte "
                        "order. Conversion between byte orders is currently not supported.");
    else
        PyErr_Format(PyExc_ValueError, "pith: a tensor has at most %d dims, got %d",
                     PITH_MAX_DIMS, v->ndim);
}

/* Why the memory cannot be shared, as an exception (PyTorch's words for NumPy). */
static void share_error(const buffer_layout *l)
{
    if (l->negative)
        PyErr_SetString(PyExc_ValueError,
                        "At least one stride in the given numpy array is negative, and tensors "
                        "with negative strides are not currently supported. (You can probably "
                        "work around this by making a copy of your array  with array.copy().) ");
    else
        PyErr_SetString(PyExc_ValueError,
                        "given numpy array strides not a multiple of the element byte size, or "
                        "its data not aligned to it. Copy the numpy array to reallocate the "
                        "memory.");
}

/* Copies `n` items of `itemsize` bytes, `step` bytes apart, to contiguous `dst`. */
static void row_copy(char *dst, const char *src, int64_t n, int64_t step, size_t itemsize)
{
#define ROW_COPY_(size)                                                                     \
    case size:                                                                              \
        for (int64_t i = 0; i < n; i++)                                                     \
            memcpy(dst + i * size, src + i * step, size);                                   \
        return;
    if (step == (int64_t)itemsize) {
        memcpy(dst, src, (size_t)n * itemsize);
        return;
    }
    switch (itemsize) {
        ROW_COPY_(1)
        ROW_COPY_(2)
        ROW_COPY_(4)
        ROW_COPY_(8)
    default:
        for (int64_t i = 0; i < n; i++)
            memcpy(dst + i * (int64_t)itemsize, src + i * step, itemsize);
    }
#undef ROW_COPY_
}

/* Copies the elements of a strided buffer in row-major order to contiguous `dst`. */
static void strided_copy(char *dst, const char *src, const buffer_layout *l, size_t itemsize)
{
    if (l->ndim == 0) {
        memcpy(dst, src, itemsize);
        return;
    }
    int last = l->ndim - 1;
    int64_t index[PITH_MAX_DIMS] = {0}, row = l->sizes[last];
    for (;;) {
        row_copy(dst, src, row, l->byte_strides[last], itemsize);
        dst += row * (int64_t)itemsize;
        int d = last - 1;
        for (; d >= 0; d--) { /* the odometer over the outer dims */
            src += l->byte_strides[d];
            if (++index[d] < l->sizes[d])
                break;
            src -= l->byte_strides[d] * l->sizes[d];
            index[d] = 0;
        }
        if (d < 0)
            return;
    }
}

/* A new contiguous tensor holding the buffer's values: the path for the layouts pith cannot
 * wrap (negative strides, unaligned data). The exported buffer stays valid without the GIL. */
static pith_tensor *buffer_copy(pith_module_state *st, const Py_buffer *v, const buffer_layout *l)
{
    /* strided_copy walks the byte strides (negative ones too) as indexing.h's walk does:
     * See Note [Geometry fits in int64] (core/tensor.c). */
    pith_tensor *t = pith_geometry_check(l->ndim, l->sizes, l->byte_strides, 0, 1) == PITH_OK
                         ? pith_empty(l->ndim, l->sizes, l->dtype)
                         : NULL;
    if (!t) {
        error_raise(st);
        return NULL;
    }
    int64_t numel = pith_numel(t);
    if (numel == 0)
        return t;
    char *dst = pith_data_ptr(t);
    if (numel < PITH_GIL_RELEASE_NUMEL) {
        strided_copy(dst, v->buf, l, (size_t)v->itemsize);
        return t;
    }
    Py_BEGIN_ALLOW_THREADS
    strided_copy(dst, v->buf, l, (size_t)v->itemsize);
    Py_END_ALLOW_THREADS
    return t;
}

/* The Python side of a copy: the GIL (released for a big one) and the exception. The copy
 * itself is the kernel layer's (behind to.dtype and clone), which the extension reaches
 * through the public pith_to_dtype and pith_clone. */
pith_tensor *copy_without_gil(pith_module_state *st, const pith_tensor *t, pith_dtype dtype)
{
    /* to_dtype returns its input for the same dtype, clone always copies */
    bool same = pith_tensor_dtype(t) == dtype;
    pith_tensor *out;
    /* a tensor with the Python key calls back into Python: it keeps the GIL */
    if (pith_numel(t) < PITH_GIL_RELEASE_NUMEL || pith_tensor_has_python_key(t)) {
        out = same ? pith_clone(t) : pith_to_dtype(t, dtype);
    } else {
        Py_BEGIN_ALLOW_THREADS
        out = same ? pith_clone(t) : pith_to_dtype(t, dtype);
        Py_END_ALLOW_THREADS
    }
    if (!out)
        error_raise(st);
    return out;
}

/* `t` (stolen) copied as `dtype` when `copy`, else cast when has_dtype; NULL in and out with
 * a Python error. */
static pith_tensor *copy_or_cast_steal(pith_module_state *st, pith_tensor *t, bool copy,
                                       int has_dtype, pith_dtype dtype)
{
    if (!t || (!copy && (!has_dtype || pith_tensor_dtype(t) == dtype)))
        return t;
    pith_tensor *out = copy_without_gil(st, t, has_dtype ? dtype : pith_tensor_dtype(t));
    pith_release(t);
    return out;
}

/* A copy of the buffer, cast when has_dtype. A layout pith can wrap is wrapped for the
 * duration of one pith copy kernel (threaded, and casting in the same pass). */
static pith_tensor *buffer_copy_cast(pith_module_state *st, Py_buffer *v, const buffer_layout *l,
                                     int has_dtype, pith_dtype dtype)
{
    if (l->negative || l->unaligned)
        return copy_or_cast_steal(st, buffer_copy(st, v, l), false, has_dtype, dtype);
    pith_tensor *borrowed = pith_from_blob(v->buf, l->ndim, l->sizes, l->strides, l->dtype,
                                           NULL, NULL);
    if (!borrowed) {
        error_raise(st);
        return NULL;
    }
    return copy_or_cast_steal(st, borrowed, true, has_dtype, dtype);
}

pith_tensor *buffer_import(pith_module_state *st, PyObject *obj, buffer_source source,
                           import_mode mode, int has_dtype, pith_dtype dtype)
{
    Py_buffer *v = malloc(sizeof *v);
    if (!v) {
        PyErr_NoMemory();
        return NULL;
    }
    if (PyObject_GetBuffer(obj, v, PyBUF_RECORDS_RO) < 0) {
        free(v);
        if (source != SOURCE_BUFFER) { /* NumPy refuses buffers of object, datetime, ... */
            PyErr_Clear();
            numpy_dtype_error(obj, source == SOURCE_NUMPY_SCALAR ? "NumPy scalar" : "np.ndarray");
        }
        return NULL;
    }
    pith_tensor *t = NULL;
    buffer_layout l;
    layout_status status = buffer_layout_read(v, &l);
    if (status != LAYOUT_OK) {
        layout_error(status, obj, source, v);
        goto release;
    }
    bool shareable = !l.negative && !l.unaligned;
    /* as_tensor copies read-only memory rather than share it (PyTorch shares with a
     * warning): a write through the tensor could fault on a read-only mapping. */
    bool share = mode == IMPORT_SHARE ||
                 (mode == IMPORT_SHARE_OR_COPY && shareable && !v->readonly &&
                  (!has_dtype || dtype == l.dtype));
    if (!share) {
        t = buffer_copy_cast(st, v, &l, has_dtype, dtype);
        goto release;
    }
    if (!shareable) {
        share_error(&l);
        goto release;
    }
    if (v->readonly &&
        PyErr_WarnEx(PyExc_UserWarning,
                     "The given NumPy array is not writable, and pith does not support "
                     "non-writable tensors. This means writing to this tensor will result in "
                     "undefined behavior. You may want to copy the array to protect its data or "
                     "make it writable before converting it to a tensor.",
                     1) < 0)
        goto release;
    t = imported_wrap(st, v->buf, l.ndim, l.sizes, l.strides, l.dtype, buffer_drop, v);
    if (t)
        return t; /* the owner holds `v` now */
release:
    PyBuffer_Release(v);
    free(v);
    return t;
}

pith_tensor *interop_tensor_from(pith_module_state *st, PyObject *data, int share, int has_dtype,
                                 pith_dtype dtype)
{
    import_mode mode = share ? IMPORT_SHARE_OR_COPY : IMPORT_COPY;
    int is = numpy_isinstance(data, "ndarray");
    if (is)
        return is < 0 ? NULL
                      : buffer_import(st, data, SOURCE_NUMPY_ARRAY, mode, has_dtype, dtype);
    is = numpy_isinstance(data, "generic");
    if (is)
        return is < 0 ? NULL
                      : buffer_import(st, data, SOURCE_NUMPY_SCALAR, mode, has_dtype, dtype);
    if (PyObject_CheckBuffer(data))
        return buffer_import(st, data, SOURCE_BUFFER, mode, has_dtype, dtype);
    if (!dlpack_is_capable(data))
        return NULL;
    return copy_or_cast_steal(st, dlpack_import(st, data), !share, has_dtype, dtype);
}

