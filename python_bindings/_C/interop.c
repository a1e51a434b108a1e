/* interop.c — NumPy and the buffer protocol for pith.Tensor: Tensor.numpy() and __array__,
 * the buffer slots, pith.from_numpy, pith.as_tensor, pith.frombuffer, the array-like half of
 * pith.tensor, and the owner of imported memory (Note [Imported memory]). DLPack is in
 * dlpack.c. NumPy is never imported here except by numpy()/__array__; the other paths only
 * look at it when it is already in sys.modules, since an ndarray cannot exist without it. */
#include <string.h>

#include "dlpack.h"

#if PY_VERSION_HEX >= 0x030D0000
#define thread_state_unchecked() PyThreadState_GetUnchecked()
#else
#define thread_state_unchecked() _PyThreadState_UncheckedGet()
#endif

/* ---- imported memory ---- */

/* Note [Imported memory]
 * pith wraps memory that a Python object owns (the Py_buffer of a NumPy array, bytearray or
 * memoryview; a DLPack managed tensor) with pith_from_blob, without copying. The storage's
 * ctx is an imported_owner: the resource that keeps the memory alive (a Py_buffer holds its
 * exporter, so a bytearray or ndarray cannot be resized under pith either) and the
 * interpreter that resource belongs to. owner_release, the storage deleter, is the one place
 * that drops it, and it runs wherever the last C reference to the storage dies.
 *  - Today that is a thread holding this interpreter's GIL: a wrapper's dealloc, an op's
 *    temporary, a DLPack consumer that Python code drives.
 *  - But a C holder can drop the last reference anywhere: a DLPack consumer may call our
 *    deleter from its own thread, and foreign threads come with issue 4. Dropping a Python
 *    reference there would corrupt the interpreter, and taking its GIL with PyGILState_*
 *    is wrong under sub-interpreters.
 * So owner_release drops the resource only when the current thread state belongs to the
 * owner's interpreter and holds its GIL (same PyInterpreterState and same ID: CPython reuses
 * the pointers of dead interpreters, not their IDs). Otherwise it leaks the resource, which
 * is never a crash. Issue 4 routes those drops through the interpreter table (`interp`)
 * instead. On 3.11, _PyThreadState_UncheckedGet answers with the thread state that holds the
 * GIL, whichever OS thread that is, so its thread_id is compared with ours as well. */
typedef struct {
    PyInterpreterState *interp_state;
    int64_t interp_id;
    pith_interpreter *interp; /* for issue 4's routing */
    void (*drop)(void *resource);
    void *resource;
} imported_owner;

static bool owner_on_its_thread(const imported_owner *owner)
{
    PyThreadState *ts = thread_state_unchecked();
    if (!ts || ts->thread_id != PyThread_get_thread_ident())
        return false;
    PyInterpreterState *is = PyThreadState_GetInterpreter(ts);
    return is == owner->interp_state && PyInterpreterState_GetID(is) == owner->interp_id;
}

static void owner_release(void *data, void *ctx)
{
    imported_owner *owner = ctx;
    if (owner_on_its_thread(owner))
        owner->drop(owner->resource);
    /* else the resource leaks: See Note [Imported memory]. */
    free(owner);
}

pith_tensor *imported_wrap(pith_module_state *st, void *data, int ndim, const int64_t *sizes,
                           const int64_t *strides, pith_dtype dtype, void (*drop)(void *resource),
                           void *resource)
{
    imported_owner *owner = malloc(sizeof *owner);
    if (!owner) {
        PyErr_NoMemory();
        return NULL;
    }
    PyInterpreterState *is = PyInterpreterState_Get();
    *owner = (imported_owner){is, PyInterpreterState_GetID(is), st->interp, drop, resource};
    pith_tensor *t = pith_from_blob(data, ndim, sizes, strides, dtype, owner_release, owner);
    if (!t) {
        free(owner); /* from_blob did not run the deleter: the caller keeps `resource` */
        error_raise(st);
    }
    return t;
}

/* A Py_buffer on the heap, released through its owner. */
static void buffer_drop(void *resource)
{
    PyBuffer_Release(resource);
    free(resource);
}

/* ---- dtypes and buffer formats ---- */

/* The struct-module format of `dtype`; NULL for bfloat16, which has none. */
static const char *dtype_format(pith_dtype dtype)
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
static int numpy_isinstance(PyObject *obj, const char *type_name)
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

/* Where a buffer comes from decides the error messages and whether a read-only one is
 * shared (NumPy arrays, with PyTorch's warning) or copied (bytes and other buffers). */
typedef enum { SOURCE_BUFFER, SOURCE_NUMPY_ARRAY, SOURCE_NUMPY_SCALAR } buffer_source;

typedef enum { IMPORT_COPY, IMPORT_SHARE_OR_COPY, IMPORT_SHARE } import_mode;

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

/* Reads the geometry of a buffer obtained with PyBUF_RECORDS_RO. Strides of dims that no
 * element moves along (size 1, or an empty buffer) are made contiguous ones, as NumPy may
 * leave anything there. */
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
    int64_t numel = 1, itemsize = v->itemsize;
    for (int i = 0; i < l->ndim; i++) {
        l->sizes[i] = v->shape ? v->shape[i] : v->len / itemsize;
        numel *= l->sizes[i];
    }
    int64_t contiguous = itemsize;
    l->negative = l->unaligned = false;
    for (int i = l->ndim - 1; i >= 0; i--) {
        int64_t s = v->strides ? v->strides[i] : contiguous;
        if (l->sizes[i] <= 1 || numel == 0)
            s = contiguous;
        l->byte_strides[i] = s;
        l->negative |= s < 0;
        l->unaligned |= s % itemsize != 0;
        l->strides[i] = s / itemsize;
        contiguous *= l->sizes[i] > 1 ? l->sizes[i] : 1;
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

/* Copies a strided buffer in row-major order into a new contiguous tensor: the path for the
 * layouts pith cannot wrap (negative strides, unaligned data). */
static pith_tensor *buffer_copy(pith_module_state *st, const Py_buffer *v, const buffer_layout *l)
{
    pith_tensor *t = pith_empty(l->ndim, l->sizes, l->dtype);
    if (!t) {
        error_raise(st);
        return NULL;
    }
    if (pith_numel(t) == 0)
        return t;
    char *dst = pith_data_ptr(t);
    const char *src = v->buf;
    size_t itemsize = (size_t)v->itemsize;
    if (l->ndim == 0) {
        memcpy(dst, src, itemsize);
        return t;
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
            return t;
    }
}

/* Casts `t` (stolen) to `dtype` when has_dtype; NULL in and out with a Python error. */
static pith_tensor *cast_steal(pith_module_state *st, pith_tensor *t, int has_dtype,
                               pith_dtype dtype)
{
    if (!t || !has_dtype || pith_tensor_dtype(t) == dtype)
        return t;
    pith_tensor *out = pith_to_dtype(t, dtype);
    pith_release(t);
    if (!out)
        error_raise(st);
    return out;
}

/* A copy of the buffer, cast when has_dtype. A layout pith can wrap is wrapped for the
 * duration of one pith copy kernel (threaded, and casting in the same pass). */
static pith_tensor *buffer_copy_cast(pith_module_state *st, Py_buffer *v, const buffer_layout *l,
                                     int has_dtype, pith_dtype dtype)
{
    if (l->negative || l->unaligned)
        return cast_steal(st, buffer_copy(st, v, l), has_dtype, dtype);
    pith_tensor *borrowed = pith_from_blob(v->buf, l->ndim, l->sizes, l->strides, l->dtype,
                                           NULL, NULL);
    if (!borrowed) {
        error_raise(st);
        return NULL;
    }
    pith_tensor *t = has_dtype && dtype != l->dtype ? pith_to_dtype(borrowed, dtype)
                                                    : pith_clone(borrowed);
    pith_release(borrowed);
    if (!t)
        error_raise(st);
    return t;
}

/* The buffer of `obj` as a tensor: shared or copied according to `mode`. */
static pith_tensor *buffer_import(pith_module_state *st, PyObject *obj, buffer_source source,
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
    bool may_share_readonly = source == SOURCE_NUMPY_ARRAY || mode == IMPORT_SHARE;
    bool share = mode == IMPORT_SHARE ||
                 (mode == IMPORT_SHARE_OR_COPY && shareable && (!has_dtype || dtype == l.dtype) &&
                  (!v->readonly || may_share_readonly));
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
    pith_tensor *t = dlpack_import(st, data);
    if (t && !share) {
        pith_tensor *copy = has_dtype ? pith_to_dtype(t, dtype) : pith_clone(t);
        if (copy == t) { /* to_dtype to the same dtype returns its input */
            pith_release(copy);
            copy = pith_clone(t);
        }
        pith_release(t);
        if (!copy)
            error_raise(st);
        return copy;
    }
    return cast_steal(st, t, has_dtype, dtype);
}

/* ---- the buffer protocol of pith.Tensor ---- */

int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    view->obj = NULL;
    pith_tensor *t = tensor_of(self);
    pith_dtype dtype = pith_tensor_dtype(t);
    const char *format = dtype_format(dtype);
    if (!format) {
        PyErr_SetString(PyExc_BufferError,
                        "pith.Tensor: a bfloat16 tensor has no buffer format (the struct "
                        "module has no bfloat16); convert it first, e.g. t.float()");
        return -1;
    }
    if (pith_tensor_device(t) != PITH_CPU) {
        PyErr_Format(PyExc_BufferError, "pith.Tensor: a %s tensor has no data to export",
                     pith_device_name(pith_tensor_device(t)));
        return -1;
    }
    int64_t sizes[PITH_MAX_DIMS], strides[PITH_MAX_DIMS];
    int ndim = pith_sizes(t, sizes);
    if (ndim < 0 || pith_strides(t, strides) < 0) {
        PyErr_Format(PyExc_BufferError, "pith.Tensor: %s", pith_last_error());
        return -1;
    }
    /* shape and strides live until releasebuffer frees them */
    Py_ssize_t *dims = PyMem_Malloc(2 * (size_t)(ndim ? ndim : 1) * sizeof(Py_ssize_t));
    if (!dims) {
        PyErr_NoMemory();
        return -1;
    }
    size_t itemsize = pith_dtype_size(dtype);
    for (int i = 0; i < ndim; i++) {
        dims[i] = (Py_ssize_t)sizes[i];
        dims[ndim + i] = (Py_ssize_t)(strides[i] * (int64_t)itemsize);
    }
    *view = (Py_buffer){
        .buf = pith_data_ptr(t),
        .len = (Py_ssize_t)(pith_numel(t) * (int64_t)itemsize),
        .itemsize = (Py_ssize_t)itemsize,
        .readonly = 0,
        .ndim = ndim,
        .format = (flags & PyBUF_FORMAT) ? (char *)format : NULL,
        .shape = dims,
        .strides = dims + ndim,
        .internal = dims,
    };
    const char *need = NULL;
    if ((flags & PyBUF_C_CONTIGUOUS) == PyBUF_C_CONTIGUOUS && !PyBuffer_IsContiguous(view, 'C'))
        need = "C-contiguous";
    else if ((flags & PyBUF_F_CONTIGUOUS) == PyBUF_F_CONTIGUOUS &&
             !PyBuffer_IsContiguous(view, 'F'))
        need = "Fortran-contiguous";
    else if ((flags & PyBUF_ANY_CONTIGUOUS) == PyBUF_ANY_CONTIGUOUS &&
             !PyBuffer_IsContiguous(view, 'A'))
        need = "contiguous";
    else if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES && !PyBuffer_IsContiguous(view, 'C'))
        need = "C-contiguous (the consumer takes no strides)";
    if (need) {
        PyMem_Free(dims);
        view->internal = NULL;
        PyErr_Format(PyExc_BufferError, "pith.Tensor: the buffer requested must be %s; call "
                     ".contiguous() first", need);
        return -1;
    }
    if ((flags & PyBUF_STRIDES) != PyBUF_STRIDES)
        view->strides = NULL;
    if ((flags & PyBUF_ND) != PyBUF_ND) { /* a plain run of bytes */
        view->shape = NULL;
        view->ndim = 1;
    }
    view->obj = Py_NewRef(self); /* keeps the tensor, so its storage, alive */
    return 0;
}

void tensor_releasebuffer(PyObject *self, Py_buffer *view)
{
    PyMem_Free(view->internal);
}

/* ---- Tensor.numpy() and __array__ ---- */

/* The ndarray that shares `self`'s memory, through the buffer protocol: its base is a
 * memoryview of the tensor, which keeps the tensor alive. */
static PyObject *tensor_to_ndarray(PyObject *self)
{
    pith_tensor *t = tensor_of(self);
    if (pith_tensor_device(t) != PITH_CPU) {
        PyErr_Format(PyExc_TypeError,
                     "can't convert %s device type tensor to numpy. Use Tensor.cpu() to copy "
                     "the tensor to host memory first.",
                     pith_device_name(pith_tensor_device(t)));
        return NULL;
    }
    if (pith_tensor_dtype(t) == PITH_BFLOAT16) {
        PyErr_SetString(PyExc_TypeError, "Got unsupported ScalarType BFloat16");
        return NULL;
    }
    PyObject *np = PyImport_ImportModule("numpy");
    if (!np)
        return NULL;
    PyObject *array = NULL, *view = PyMemoryView_FromObject(self);
    if (view)
        array = PyObject_CallMethod(np, "asarray", "O", view);
    Py_XDECREF(view);
    Py_DECREF(np);
    return array;
}

/* numpy(*, force=False): the memory is shared either way (force only matters in PyTorch for
 * autograd, conjugation and devices, which a CPU pith tensor does not have). */
static PyObject *tensor_numpy(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"force", NULL};
    int force = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$p:numpy", kwlist, &force))
        return NULL;
    return tensor_to_ndarray(self);
}

/* __array__(dtype=None, copy=None), NumPy 2's protocol: copy=True always copies, copy=False
 * never does (ValueError when a dtype change needs it), None copies only for a dtype. */
static PyObject *tensor_array(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:__array__", kwlist, &dtype, &copy))
        return NULL;
    int must_copy = copy == Py_None ? 0 : PyObject_IsTrue(copy);
    if (must_copy < 0)
        return NULL;
    PyObject *array = tensor_to_ndarray(self);
    if (!array || (dtype == Py_None && !must_copy))
        return array;
    if (dtype == Py_None) {
        Py_SETREF(array, PyObject_CallMethod(array, "copy", NULL));
        return array;
    }
    if (copy == Py_False) {
        PyObject *have = PyObject_GetAttrString(array, "dtype");
        int differs = have ? PyObject_RichCompareBool(have, dtype, Py_NE) : -1;
        Py_XDECREF(have);
        if (differs) {
            if (differs > 0)
                PyErr_SetString(PyExc_ValueError,
                                "Unable to avoid copy while creating an array as requested.");
            Py_DECREF(array);
            return NULL;
        }
    }
    PyObject *astype_kwargs = Py_BuildValue("{s:O}", "copy", must_copy ? Py_True : Py_False);
    if (!astype_kwargs) {
        Py_DECREF(array);
        return NULL;
    }
    PyObject *astype = PyObject_GetAttrString(array, "astype");
    PyObject *call_args = astype ? PyTuple_Pack(1, dtype) : NULL;
    PyObject *result = call_args ? PyObject_Call(astype, call_args, astype_kwargs) : NULL;
    Py_XDECREF(call_args);
    Py_XDECREF(astype);
    Py_DECREF(astype_kwargs);
    Py_DECREF(array);
    return result;
}

/* ---- module functions ---- */

/* from_numpy(ndarray): always shares the array's memory. */
static PyObject *module_from_numpy(PyObject *module, PyObject *array)
{
    pith_module_state *st = state_of_module(module);
    int is = numpy_isinstance(array, "ndarray");
    if (is <= 0) {
        if (is == 0)
            PyErr_Format(PyExc_TypeError, "expected np.ndarray (got %.200s)",
                         Py_TYPE(array)->tp_name);
        return NULL;
    }
    pith_tensor *t = buffer_import(st, array, SOURCE_NUMPY_ARRAY, IMPORT_SHARE, 0, PITH_FLOAT32);
    return t ? tensor_wrap(st, t) : NULL;
}

/* as_tensor(data, dtype=None): a tensor is returned as is; NumPy arrays, writable buffers and
 * DLPack objects are shared when the dtype allows; anything else is copied. */
static PyObject *module_as_tensor(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"data", "dtype", NULL};
    PyObject *data, *dtype_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:as_tensor", kwlist, &data, &dtype_obj))
        return NULL;
    pith_module_state *st = state_of_module(module);
    pith_dtype dtype = PITH_FLOAT32;
    int has_dtype = dtype_obj != Py_None;
    if (has_dtype && dtype_from_object(st, dtype_obj, &dtype) < 0)
        return NULL;
    if (tensor_check(st, data)) {
        pith_tensor *t = tensor_of(data);
        if (!has_dtype || pith_tensor_dtype(t) == dtype)
            return Py_NewRef(data);
        return tensor_wrap(st, pith_to_dtype(t, dtype));
    }
    pith_tensor *t = interop_tensor_from(st, data, 1, has_dtype, dtype);
    if (!t && !PyErr_Occurred())
        t = tensor_from_data(st, data, has_dtype, dtype);
    return t ? tensor_wrap(st, t) : NULL;
}

/* The buffer of a frombuffer() argument: writable if it can be, else read-only with
 * PyTorch's warning. Returns 0, or -1 with an error. */
static int frombuffer_view(PyObject *buffer, Py_buffer *v)
{
    if (!PyObject_CheckBuffer(buffer)) {
        PyErr_SetString(PyExc_ValueError, "object does not implement Python buffer protocol.");
        return -1;
    }
    if (PyObject_GetBuffer(buffer, v, PyBUF_WRITABLE) == 0)
        return 0;
    PyErr_Clear();
    if (PyObject_GetBuffer(buffer, v, PyBUF_SIMPLE) < 0) {
        PyErr_Clear();
        PyErr_SetString(PyExc_RuntimeError, "could not retrieve buffer from object");
        return -1;
    }
    if (PyErr_WarnEx(PyExc_UserWarning,
                     "The given buffer is not writable, and pith does not support non-writable "
                     "tensors. This means you can write to the underlying (supposedly "
                     "non-writable) buffer using the tensor. You may want to copy the buffer to "
                     "protect its data or make it writable before converting it to a tensor.",
                     1) < 0) {
        PyBuffer_Release(v);
        return -1;
    }
    return 0;
}

/* The element count of frombuffer(count, offset) over `len` bytes, with PyTorch's checks;
 * -1 with a ValueError. */
static long long frombuffer_count(Py_ssize_t len, long long count, long long offset,
                                  long long itemsize)
{
    if (len <= 0 || count == 0)
        PyErr_Format(PyExc_ValueError, "both buffer length (%zd) and count (%lld) must not be 0",
                     len, count);
    else if (offset < 0 || offset >= len)
        PyErr_Format(PyExc_ValueError,
                     "offset (%lld bytes) must be non-negative and no greater than buffer "
                     "length (%zd bytes) minus 1",
                     offset, len);
    else if (count < 0 && (len - offset) % itemsize != 0)
        PyErr_Format(PyExc_ValueError,
                     "buffer length (%lld bytes) after offset (%lld bytes) must be a multiple of "
                     "element size (%lld)",
                     (long long)len - offset, offset, itemsize);
    else {
        long long n = count < 0 ? (len - offset) / itemsize : count;
        if (n <= ((long long)len - offset) / itemsize)
            return n;
        PyErr_Format(PyExc_ValueError,
                     "requested buffer length (%lld * %lld bytes) after offset (%lld bytes) must "
                     "not be greater than actual buffer length (%zd bytes)",
                     n, itemsize, offset, len);
    }
    return -1;
}

/* frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False): a 1-D tensor over
 * the buffer's bytes, sharing them (raw bytes, so every dtype, bfloat16 included). The
 * buffer stays exported, so its object alive and unresizable, while the storage lives. */
static PyObject *module_frombuffer(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"buffer", "dtype", "count", "offset", "requires_grad", NULL};
    PyObject *buffer, *dtype_obj = NULL;
    long long count = -1, offset = 0;
    int requires_grad = 0;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OLLp:frombuffer", kwlist, &buffer,
                                     &dtype_obj, &count, &offset, &requires_grad))
        return NULL;
    pith_module_state *st = state_of_module(module);
    pith_dtype dtype;
    if (!dtype_obj) {
        PyErr_SetString(PyExc_TypeError, "frombuffer() missing required keyword argument 'dtype'");
        return NULL;
    }
    if (dtype_from_object(st, dtype_obj, &dtype) < 0)
        return NULL;
    if (requires_grad) {
        PyErr_SetString(PyExc_NotImplementedError,
                        "frombuffer: requires_grad=True needs autograd, which pith does not "
                        "have yet");
        return NULL;
    }
    Py_buffer *v = malloc(sizeof *v);
    if (!v)
        return PyErr_NoMemory();
    if (frombuffer_view(buffer, v) < 0) {
        free(v);
        return NULL;
    }
    long long itemsize = (long long)pith_dtype_size(dtype);
    int64_t n = frombuffer_count(v->len, count, offset, itemsize);
    pith_tensor *t = NULL;
    if (n >= 0)
        t = imported_wrap(st, (char *)v->buf + offset, 1, &n, NULL, dtype, buffer_drop, v);
    if (t)
        return tensor_wrap(st, t);
    PyBuffer_Release(v);
    free(v);
    return NULL;
}

/* _tensor_bytes(t): the values as bytes in row-major order (for pickling; the inverse is
 * frombuffer(bytearray(b), dtype=t.dtype).view(t.shape)). */
static PyObject *module_tensor_bytes(PyObject *module, PyObject *obj)
{
    pith_module_state *st = state_of_module(module);
    if (!tensor_check(st, obj)) {
        PyErr_Format(PyExc_TypeError, "_tensor_bytes: expected a Tensor, got %.200s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    pith_tensor *t = tensor_of(obj);
    if (pith_tensor_device(t) != PITH_CPU) {
        PyErr_Format(PyExc_RuntimeError, "_tensor_bytes: a %s tensor has no data",
                     pith_device_name(pith_tensor_device(t)));
        return NULL;
    }
    pith_tensor *c = pith_contiguous(t);
    if (!c)
        return error_raise(st);
    int64_t nbytes = pith_numel(c) * (int64_t)pith_dtype_size(pith_tensor_dtype(c));
    PyObject *bytes = PyBytes_FromStringAndSize(nbytes ? pith_data_ptr(c) : "", nbytes);
    pith_release(c);
    return bytes;
}

#define KW_METHOD_(name, fn, doc)                                                           \
    {name, (PyCFunction)(void (*)(void))fn, METH_VARARGS | METH_KEYWORDS, doc}

PyMethodDef interop_tensor_methods[] = {
    KW_METHOD_("numpy", tensor_numpy,
               "numpy(*, force=False): a NumPy array sharing this tensor's memory."),
    KW_METHOD_("__array__", tensor_array,
               "__array__(dtype=None, copy=None): NumPy's conversion protocol."),
    KW_METHOD_("__dlpack__", tensor_dlpack,
               "__dlpack__(*, stream=None, max_version=None, dl_device=None, copy=None): a "
               "DLPack capsule (versioned when max_version >= (1, 0))."),
    {"__dlpack_device__", tensor_dlpack_device, METH_NOARGS,
     "__dlpack_device__(): (device type, device id); (1, 0) is the CPU."},
    {NULL},
};

PyMethodDef interop_module_methods[] = {
    {"from_numpy", module_from_numpy, METH_O,
     "from_numpy(ndarray): a tensor sharing the array's memory."},
    KW_METHOD_("as_tensor", module_as_tensor,
               "as_tensor(data, dtype=None): shares the memory of data when it can."),
    KW_METHOD_("frombuffer", module_frombuffer,
               "frombuffer(buffer, *, dtype, count=-1, offset=0): a 1-D tensor over the bytes "
               "of a buffer-protocol object."),
    KW_METHOD_("from_dlpack", module_from_dlpack,
               "from_dlpack(ext_tensor, *, device=None, copy=None): a tensor sharing the "
               "memory of a DLPack-capable object or capsule."),
    {"_tensor_bytes", module_tensor_bytes, METH_O,
     "_tensor_bytes(t): the values of t as bytes, in row-major order."},
    {NULL},
};
#undef KW_METHOD_
