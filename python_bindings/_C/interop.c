/* interop.c — NumPy and the buffer protocol for pith.Tensor: the owner of imported memory
 * (Note [Imported memory]), the buffer slots, Tensor.numpy() and __array__, pith.from_numpy,
 * pith.as_tensor, pith.frombuffer, _tensor_bytes, _storage_nbytes, and the method tables of
 * interop. Arrays and buffers become tensors in array_import.c, DLPack is in dlpack.c.
 * NumPy is imported only by numpy() and __array__. */
#include "function_layer.h"
#include "interop.h"

/* ---- imported memory ---- */

/* Note [Imported memory]
 * pith wraps memory that a Python object owns (the Py_buffer of a NumPy array, bytearray or
 * memoryview; a DLPack managed tensor) with pith_from_blob, without copying. The storage's
 * ctx is an imported_owner: the resource that keeps the memory alive (a Py_buffer holds its
 * exporter, so a bytearray or ndarray cannot be resized under pith either), how to drop it,
 * and the interpreter it belongs to. owner_release, the storage deleter, runs wherever the
 * last C reference to the storage dies: a wrapper's dealloc, an op's temporary, a DLPack
 * consumer's deleter on its own thread, a C holder on any thread, after the interpreter died.
 * Dropping a Python reference there directly would corrupt the interpreter, and taking its
 * GIL with PyGILState_* is wrong under sub-interpreters. So the resource is held by a
 * capsule (`holder`, made under the GIL when the memory is wrapped) whose destructor drops
 * it, and owner_release drops the holder through the interpreter table's decref entry: from
 * any thread it takes the owning interpreter's thread state and GIL (See Note [Entering an
 * interpreter from C], interp.c), and once the interpreter is shutting down or finalised it
 * leaks the holder, the resource and the owner instead, which is never a crash. The storage
 * also records the interpreter as its owner (pith_storage_set_owner): core runs the deleter
 * only while the table is armed, and pith.share copies such memory instead of aliasing it. */
#define IMPORTED_HOLDER_NAME "pith._C.imported"

typedef struct {
    pith_interpreter *interp;
    PyObject *holder; /* a capsule of this owner; its destructor drops the resource */
    void (*drop)(void *resource);
    void *resource;
} imported_owner;

static void imported_holder_destroy(PyObject *holder)
{
    imported_owner *owner = PyCapsule_GetPointer(holder, IMPORTED_HOLDER_NAME);
    if (!owner) {
        PyErr_Clear();
        return;
    }
    owner->drop(owner->resource);
    free(owner);
}

static void owner_release(void *data, void *ctx)
{
    imported_owner *owner = ctx;
    pith_interpreter_vtable_of(owner->interp)->decref(owner->interp, owner->holder);
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
    *owner = (imported_owner){st->interp, NULL, drop, resource};
    owner->holder = PyCapsule_New(owner, IMPORTED_HOLDER_NAME, NULL); /* no destructor yet */
    if (!owner->holder) {
        free(owner);
        return NULL;
    }
    pith_tensor *t = pith_from_blob(data, ndim, sizes, strides, dtype, owner_release, owner);
    if (!t) {
        /* from_blob did not run the deleter: the caller keeps `resource` */
        Py_DECREF(owner->holder);
        free(owner);
        error_raise(st);
        return NULL;
    }
    PyCapsule_SetDestructor(owner->holder, imported_holder_destroy);
    pith_storage_set_owner(t, st->interp); /* fails only for storage without a deleter */
    return t;
}

void buffer_drop(void *resource)
{
    PyBuffer_Release(resource);
    free(resource);
}

/* ---- the buffer protocol of pith.Tensor ---- */

int tensor_getbuffer(PyObject *self, Py_buffer *view, int flags)
{
    view->obj = NULL;
    pith_tensor *t = tensor_of(self);
    pith_dtype dtype = pith_tensor_dtype(t);
    /* A bfloat16 tensor has no struct format, so it exports only to consumers that ask for
     * none: they read raw bytes (file write and readinto, zlib.crc32, BytesIO), which is
     * how pith.save writes and pith.load reads bfloat16 storage without a copy.
     * memoryview and NumPy ask for a format, and get the error. */
    const char *format = dtype_format(dtype);
    if (!format && (flags & PyBUF_FORMAT)) {
        PyErr_SetString(PyExc_BufferError,
                        "pith.Tensor: a bfloat16 tensor has no buffer format (the struct "
                        "module has no bfloat16); convert it first, e.g. t.float()");
        return -1;
    }
    /* A tensor that requires grad exports raw bytes only (pith.save), never a typed view
     * that NumPy or memoryview would turn into an array outside autograd: PyTorch's
     * numpy() refusal, which Tensor.numpy() and __array__ raise themselves. */
    if ((flags & PyBUF_FORMAT) && pith_requires_grad(t)) {
        PyErr_SetString(PyExc_BufferError,
                        "pith.Tensor: a tensor that requires grad exports no typed buffer; "
                        "use tensor.detach() first");
        return -1;
    }
    if (pith_tensor_device(t) != PITH_CPU) {
        PyErr_Format(PyExc_BufferError, "pith.Tensor: a %s tensor has no data to export",
                     pith_device_name(pith_tensor_device(t)));
        return -1;
    }
    if (tensor_lacks_data(t)) {
        PyErr_SetString(PyExc_BufferError, "pith.Tensor: a wrapper subclass has no data to "
                                           "export (its data is whatever it wraps)");
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
    /* Byte strides and numel * itemsize fit in int64 (Py_ssize_t here): See Note [Geometry
     * fits in int64] (core/tensor.c). */
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
 * memoryview of the tensor, which keeps the tensor alive. Without `force`, a tensor that
 * requires grad is refused with PyTorch's error: the array would escape autograd. */
static PyObject *tensor_to_ndarray(PyObject *self, int force)
{
    pith_tensor *t = tensor_of(self);
    if (!force && pith_requires_grad(t)) {
        PyErr_SetString(PyExc_RuntimeError,
                        "Can't call numpy() on Tensor that requires grad. Use "
                        "tensor.detach().numpy() instead.");
        return NULL;
    }
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
    /* forced: the array views a detached alias (same memory), as PyTorch's detach() */
    PyObject *source = self;
    if (pith_requires_grad(t)) {
        pith_module_state *st = state_of_type(Py_TYPE(self));
        pith_tensor *alias = st ? pith_detach(t) : NULL;
        if (st && !alias)
            error_raise(st);
        source = alias ? tensor_wrap(st, alias) : NULL;
        if (!source) {
            Py_DECREF(np);
            return NULL;
        }
    } else {
        Py_INCREF(source);
    }
    PyObject *array = NULL, *view = PyMemoryView_FromObject(source);
    if (view)
        array = PyObject_CallMethod(np, "asarray", "O", view);
    Py_XDECREF(view);
    Py_DECREF(source);
    Py_DECREF(np);
    return array;
}

/* numpy(*, force=False): the memory is shared either way; force only lifts the refusal of a
 * tensor that requires grad (in PyTorch it also resolves conjugation and copies from a
 * device, which a CPU pith tensor does not have). */
static PyObject *tensor_numpy(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"force", NULL};
    int force = 0;
    PyObject *result;
    if (function_self_maybe(self) &&
        function_layer_method_tuple(self, "numpy", args, kwargs, &result))
        return result; /* See Note [Function layer] (function_layer.c) */
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$p:numpy", kwlist, &force))
        return NULL;
    return tensor_to_ndarray(self, force);
}

/* __array__(dtype=None, copy=None), NumPy 2's protocol: copy=True always copies, copy=False
 * never does (ValueError when a dtype change needs it), None copies only for a dtype. */
static PyObject *tensor_array(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"dtype", "copy", NULL};
    PyObject *dtype = Py_None, *copy = Py_None, *layered;
    if (function_self_maybe(self) &&
        function_layer_method_tuple(self, "__array__", args, kwargs, &layered))
        return layered; /* See Note [Function layer] (function_layer.c) */
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|OO:__array__", kwlist, &dtype, &copy))
        return NULL;
    int must_copy = copy == Py_None ? 0 : PyObject_IsTrue(copy);
    if (must_copy < 0)
        return NULL;
    PyObject *array = tensor_to_ndarray(self, 0);
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
    PyObject *data, *dtype_obj = Py_None, *result;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|O:as_tensor", kwlist, &data, &dtype_obj))
        return NULL;
    pith_module_state *st = state_of_module(module);
    if (function_modes_maybe() &&
        function_layer_modes_only(st, module, "as_tensor", args, kwargs, &result))
        return result;
    pith_dtype dtype = PITH_FLOAT32;
    int has_dtype = dtype_obj != Py_None;
    if (has_dtype && dtype_from_object(st, dtype_obj, &dtype) < 0)
        return NULL;
    if (tensor_check(st, data)) {
        pith_tensor *t = tensor_of(data);
        if (!has_dtype || pith_tensor_dtype(t) == dtype)
            return Py_NewRef(data);
        pith_tensor *cast = copy_without_gil(st, t, dtype);
        return cast ? tensor_wrap(st, cast) : NULL;
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
    if (pith_tensor_device(t) != PITH_CPU || tensor_lacks_data(t)) {
        PyErr_Format(PyExc_RuntimeError, "_tensor_bytes: a %s tensor has no data",
                     tensor_lacks_data(t) ? "wrapper subclass"
                                          : pith_device_name(pith_tensor_device(t)));
        return NULL;
    }
    pith_tensor *c = t;
    if (pith_is_contiguous(t))
        pith_retain(c);
    else if (!(c = copy_without_gil(st, t, pith_tensor_dtype(t))))
        return NULL;
    int64_t nbytes = pith_numel(c) * (int64_t)pith_dtype_size(pith_tensor_dtype(c));
    PyObject *bytes = PyBytes_FromStringAndSize(nbytes ? pith_data_ptr(c) : "", nbytes);
    pith_release(c);
    return bytes;
}

/* _storage_nbytes(t): the bytes of t's storage (pith.save writes whole storages, as
 * torch.save does, so that views saved together share one storage again when loaded). */
static PyObject *module_storage_nbytes(PyObject *module, PyObject *obj)
{
    pith_module_state *st = state_of_module(module);
    if (!tensor_check(st, obj)) {
        PyErr_Format(PyExc_TypeError, "_storage_nbytes: expected a Tensor, got %.200s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    return PyLong_FromLongLong(pith_storage_nbytes(tensor_of(obj)));
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
    {"_storage_nbytes", module_storage_nbytes, METH_O,
     "_storage_nbytes(t): the bytes of t's storage."},
    {NULL},
};
#undef KW_METHOD_
