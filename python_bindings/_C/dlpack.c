/* dlpack.c — DLPack for pith: Tensor.__dlpack__ and __dlpack_device__ (export, versioned
 * and legacy capsules) and pith.from_dlpack (import). The structs are in dlpack.h; memory
 * imported here is owned as Note [Imported memory] (interop.c) says. */
#include <string.h>

#include "dlpack.h"
#include "function_layer.h"
#include "interop.h"

#define CAPSULE_LEGACY "dltensor"
#define CAPSULE_VERSIONED "dltensor_versioned"
#define CAPSULE_LEGACY_USED "used_dltensor"
#define CAPSULE_VERSIONED_USED "used_dltensor_versioned"

/* ---- dtypes ---- */

static DLDataType dlpack_dtype(pith_dtype dtype)
{
    uint8_t bits = (uint8_t)(8 * pith_dtype_size(dtype));
    switch (dtype) {
    case PITH_BOOL:
        return (DLDataType){kDLBool, 8, 1};
    case PITH_UINT8:
        return (DLDataType){kDLUInt, 8, 1};
    case PITH_BFLOAT16:
        return (DLDataType){kDLBfloat, 16, 1};
    default:
        return (DLDataType){pith_dtype_is_floating(dtype) ? kDLFloat : kDLInt, bits, 1};
    }
}

/* The inverse of dlpack_dtype: false for a type pith does not have. */
static bool dtype_of_dlpack(DLDataType type, pith_dtype *out)
{
    for (int d = 0; d < PITH_NUM_DTYPES; d++) {
        DLDataType mine = dlpack_dtype((pith_dtype)d);
        if (mine.code == type.code && mine.bits == type.bits && mine.lanes == type.lanes) {
            *out = (pith_dtype)d;
            return true;
        }
    }
    return false;
}

/* ---- export ---- */

/* Note [DLPack export]
 * A capsule owns one dlpack_export: the managed tensor the consumer sees, the shape and
 * strides it points at, and one C reference to the tensor (a copy for copy=True), which
 * keeps the storage alive. The strides are always set, also for contiguous and 0-dim
 * tensors. The deleter may be called from any thread, with or without a GIL: it only
 * releases the C reference, which is thread-safe; if that frees imported memory, Note
 * [Imported memory] applies. An unconsumed capsule calls the deleter when it dies; a
 * consumer renames it to used_dltensor[_versioned] and calls the deleter itself. */
typedef struct {
    pith_tensor *t;
    int64_t shape[PITH_MAX_DIMS];
    int64_t strides[PITH_MAX_DIMS];
    DLManagedTensor legacy;
    DLManagedTensorVersioned versioned;
} dlpack_export;

static void export_free(dlpack_export *e)
{
    pith_release(e->t);
    free(e);
}

static void export_legacy_delete(DLManagedTensor *managed)
{
    export_free(managed->manager_ctx);
}

static void export_versioned_delete(DLManagedTensorVersioned *managed)
{
    export_free(managed->manager_ctx);
}

static void capsule_legacy_destroy(PyObject *capsule)
{
    if (!PyCapsule_IsValid(capsule, CAPSULE_LEGACY))
        return; /* consumed */
    DLManagedTensor *managed = PyCapsule_GetPointer(capsule, CAPSULE_LEGACY);
    if (managed->deleter)
        managed->deleter(managed);
}

static void capsule_versioned_destroy(PyObject *capsule)
{
    if (!PyCapsule_IsValid(capsule, CAPSULE_VERSIONED))
        return; /* consumed */
    DLManagedTensorVersioned *managed = PyCapsule_GetPointer(capsule, CAPSULE_VERSIONED);
    if (managed->deleter)
        managed->deleter(managed);
}

/* The capsule of `t` (stolen). */
static PyObject *export_capsule(pith_module_state *st, pith_tensor *t, bool versioned,
                                bool copied)
{
    dlpack_export *e = calloc(1, sizeof *e);
    if (!e) {
        pith_release(t);
        return PyErr_NoMemory();
    }
    e->t = t;
    int ndim = pith_sizes(t, e->shape);
    if (ndim < 0 || pith_strides(t, e->strides) < 0) {
        export_free(e);
        return error_raise(st);
    }
    DLTensor dl = {
        .data = pith_data_ptr(t),
        .device = {kDLCPU, 0},
        .ndim = ndim,
        .dtype = dlpack_dtype(pith_tensor_dtype(t)),
        .shape = e->shape,
        .strides = e->strides,
        .byte_offset = 0,
    };
    PyObject *capsule;
    if (versioned) {
        e->versioned = (DLManagedTensorVersioned){
            .version = {PITH_DLPACK_MAJOR, PITH_DLPACK_MINOR},
            .manager_ctx = e,
            .deleter = export_versioned_delete,
            .flags = copied ? DLPACK_FLAG_BITMASK_IS_COPIED : 0,
            .dl_tensor = dl,
        };
        capsule = PyCapsule_New(&e->versioned, CAPSULE_VERSIONED, capsule_versioned_destroy);
    } else {
        e->legacy = (DLManagedTensor){.dl_tensor = dl, .manager_ctx = e,
                                      .deleter = export_legacy_delete};
        capsule = PyCapsule_New(&e->legacy, CAPSULE_LEGACY, capsule_legacy_destroy);
    }
    if (!capsule)
        export_free(e);
    return capsule;
}

/* stream: None or -1 on the CPU, as in PyTorch. */
static int check_stream(PyObject *stream)
{
    if (stream == Py_None)
        return 0;
    if (!PyLong_CheckExact(stream)) {
        PyErr_SetString(PyExc_TypeError, "stream must be ``int`` or ``none``");
        return -1;
    }
    long v = PyLong_AsLong(stream);
    if (v == -1 && PyErr_Occurred())
        return -1;
    if (v != -1) {
        PyErr_SetString(PyExc_AssertionError, "stream should be None on cpu.");
        return -1;
    }
    return 0;
}

/* A tuple of two ints, such as (device_type, device_id); -1 with TypeError naming `what`. */
static int int_pair(PyObject *obj, const char *what, long *first, long *second)
{
    if (!PyTuple_Check(obj) || PyTuple_GET_SIZE(obj) != 2) {
        PyErr_Format(PyExc_TypeError, "%s must be a tuple of two ints, not %.200s", what,
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    *first = PyLong_AsLong(PyTuple_GET_ITEM(obj, 0));
    if (*first == -1 && PyErr_Occurred())
        return -1;
    *second = PyLong_AsLong(PyTuple_GET_ITEM(obj, 1));
    return *second == -1 && PyErr_Occurred() ? -1 : 0;
}

/* dl_device: None or (kDLCPU, 0). */
static int check_dl_device(PyObject *dl_device)
{
    long type, id;
    if (dl_device == Py_None)
        return 0;
    if (int_pair(dl_device, "dl_device", &type, &id) < 0)
        return -1;
    if (type != kDLCPU || id != 0) {
        PyErr_Format(PyExc_BufferError,
                     "unsupported device requested: (%ld, %ld); pith tensors are on the CPU "
                     "(%d, 0)",
                     type, id, kDLCPU);
        return -1;
    }
    return 0;
}

/* Whether max_version asks for a versioned capsule: None or (major < 1) gives the legacy one. */
static int wants_versioned(PyObject *max_version)
{
    long major, minor;
    if (max_version == Py_None)
        return 0;
    if (int_pair(max_version, "max_version", &major, &minor) < 0)
        return -1;
    return major >= 1;
}

PyObject *tensor_dlpack(PyObject *self, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"stream", "max_version", "dl_device", "copy", NULL};
    PyObject *stream = Py_None, *max_version = Py_None, *dl_device = Py_None, *copy = Py_None;
    PyObject *result;
    if (function_self_maybe(self) &&
        function_layer_method_tuple(self, "__dlpack__", args, kwargs, &result))
        return result; /* See Note [Function layer] (function_layer.c) */
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "|$OOOO:__dlpack__", kwlist, &stream,
                                     &max_version, &dl_device, &copy))
        return NULL;
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    pith_tensor *t = tensor_of(self);
    if (pith_tensor_device(t) != PITH_CPU) {
        PyErr_Format(PyExc_BufferError, "Cannot pack tensors on %s",
                     pith_device_name(pith_tensor_device(t)));
        return NULL;
    }
    if (tensor_lacks_data(t)) {
        PyErr_SetString(PyExc_BufferError, "Cannot pack a wrapper subclass: it has no data "
                                           "(its data is whatever it wraps)");
        return NULL;
    }
    int versioned = wants_versioned(max_version);
    int copied = copy == Py_None ? 0 : PyObject_IsTrue(copy);
    if (check_stream(stream) < 0 || check_dl_device(dl_device) < 0 || versioned < 0 || copied < 0)
        return NULL;
    pith_tensor *exported = t;
    if (copied)
        exported = copy_without_gil(st, t, pith_tensor_dtype(t));
    else
        pith_retain(t);
    return exported ? export_capsule(st, exported, versioned, copied) : NULL;
}

PyObject *tensor_dlpack_device(PyObject *self, PyObject *unused)
{
    FUNCTION_LAYER_SELF(self, "__dlpack_device__");
    pith_device device = pith_tensor_device(tensor_of(self));
    if (device != PITH_CPU) {
        PyErr_Format(PyExc_ValueError, "Unknown device type %s for Dlpack",
                     pith_device_name(device));
        return NULL;
    }
    return Py_BuildValue("(ii)", kDLCPU, 0);
}

/* ---- import ---- */

typedef struct {
    void *data;
    pith_dtype dtype;
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    int64_t strides[PITH_MAX_DIMS];
} dlpack_layout;

/* Checks a DLTensor that pith is about to wrap; -1 with an exception when it cannot. */
static int dltensor_read(const DLTensor *dl, dlpack_layout *l)
{
    if (dl->device.device_type != kDLCPU) {
        PyErr_Format(PyExc_BufferError,
                     "pith.from_dlpack: only CPU memory (device type %d) can be imported, not "
                     "device type %d",
                     kDLCPU, (int)dl->device.device_type);
        return -1;
    }
    if (!dtype_of_dlpack(dl->dtype, &l->dtype)) {
        PyErr_Format(PyExc_BufferError,
                     "pith.from_dlpack: unsupported DLPack dtype (code %u, bits %u, lanes %u)",
                     dl->dtype.code, dl->dtype.bits, dl->dtype.lanes);
        return -1;
    }
    if (dl->ndim < 0 || dl->ndim > PITH_MAX_DIMS) {
        PyErr_Format(PyExc_ValueError, "pith.from_dlpack: a tensor has at most %d dims, got %d",
                     PITH_MAX_DIMS, (int)dl->ndim);
        return -1;
    }
    l->ndim = dl->ndim;
    bool empty = false;
    for (int i = 0; i < l->ndim; i++)
        empty |= (l->sizes[i] = dl->shape[i]) <= 0; /* negative sizes: from_blob refuses */
    /* NULL strides (allowed before DLPack 1.2) mean row-major; a negative stride that no
     * element moves along is replaced by the contiguous one. The rest of the geometry is
     * checked by pith_from_blob (See Note [Geometry fits in int64], core/tensor.c). */
    int64_t contiguous = 1;
    for (int i = l->ndim - 1; i >= 0; i--) {
        int64_t s = dl->strides ? dl->strides[i] : contiguous;
        l->strides[i] = (l->sizes[i] <= 1 || empty) && s < 0 ? contiguous : s;
        if (__builtin_mul_overflow(contiguous, l->sizes[i] > 1 ? l->sizes[i] : 1, &contiguous))
            contiguous = 1; /* a shape too large (from_blob refuses it) or empty (nothing is
                             * read): no element moves along the stride made of it */
        if (l->strides[i] < 0) {
            PyErr_SetString(PyExc_ValueError,
                            "pith.from_dlpack: tensors with negative strides are not supported; "
                            "copy the tensor first");
            return -1;
        }
    }
    if (dl->data && dl->byte_offset > UINTPTR_MAX - (uintptr_t)dl->data) {
        PyErr_Format(PyExc_BufferError,
                     "pith.from_dlpack: byte_offset %llu overflows the address space",
                     (unsigned long long)dl->byte_offset);
        return -1;
    }
    l->data = dl->data ? (char *)dl->data + dl->byte_offset : NULL;
    return 0;
}

static void drop_legacy(void *resource)
{
    DLManagedTensor *managed = resource;
    if (managed->deleter)
        managed->deleter(managed);
}

static void drop_versioned(void *resource)
{
    DLManagedTensorVersioned *managed = resource;
    if (managed->deleter)
        managed->deleter(managed);
}

/* Wraps the managed tensor of a DLPack capsule and marks the capsule used. */
static pith_tensor *capsule_import(pith_module_state *st, PyObject *capsule)
{
    const char *name = PyCapsule_GetName(capsule);
    bool versioned = name && strcmp(name, CAPSULE_VERSIONED) == 0;
    if (!versioned && !(name && strcmp(name, CAPSULE_LEGACY) == 0)) {
        PyErr_Clear();
        PyErr_SetString(PyExc_RuntimeError,
                        "from_dlpack received an invalid capsule. Note that DLTensor capsules "
                        "can be consumed only once, so you might have already constructed a "
                        "tensor from it once.");
        return NULL;
    }
    void *managed = PyCapsule_GetPointer(capsule, name);
    if (!managed)
        return NULL;
    const DLTensor *dl = &((DLManagedTensor *)managed)->dl_tensor;
    if (versioned) {
        DLManagedTensorVersioned *m = managed;
        if (m->version.major != PITH_DLPACK_MAJOR) {
            /* Only the deleter may be touched: the unconsumed capsule calls it. */
            PyErr_Format(PyExc_BufferError,
                         "pith.from_dlpack: DLPack version %u.%u is not supported (pith reads "
                         "%d.x)",
                         m->version.major, m->version.minor, PITH_DLPACK_MAJOR);
            return NULL;
        }
        dl = &m->dl_tensor;
        if ((m->flags & DLPACK_FLAG_BITMASK_READ_ONLY) &&
            PyErr_WarnEx(PyExc_UserWarning,
                         "The given DLPack tensor is read-only, and pith does not support "
                         "non-writable tensors. This means writing to this tensor will result "
                         "in undefined behavior.",
                         1) < 0)
            return NULL;
    }
    dlpack_layout l;
    if (dltensor_read(dl, &l) < 0)
        return NULL;
    if (PyCapsule_SetName(capsule, versioned ? CAPSULE_VERSIONED_USED : CAPSULE_LEGACY_USED) < 0)
        return NULL;
    void (*drop)(void *) = versioned ? drop_versioned : drop_legacy;
    pith_tensor *t = imported_wrap(st, l.data, l.ndim, l.sizes, l.strides, l.dtype, drop, managed);
    if (!t)
        drop(managed); /* the capsule is used: the managed tensor is ours to delete */
    return t;
}

/* Calls __dlpack__ as a DLPack 1.x consumer; a producer that predates max_version raises
 * TypeError for it, and is asked again for a legacy capsule. */
static PyObject *capsule_of(PyObject *obj)
{
    if (PyCapsule_CheckExact(obj))
        return Py_NewRef(obj);
    PyObject *device = PyObject_CallMethod(obj, "__dlpack_device__", NULL);
    if (device) {
        long type, id;
        int rc = int_pair(device, "the result of __dlpack_device__", &type, &id);
        Py_DECREF(device);
        if (rc < 0)
            return NULL;
        if (type != kDLCPU) {
            PyErr_Format(PyExc_BufferError,
                         "pith.from_dlpack: only CPU memory (device type %d) can be imported, "
                         "not device type %ld",
                         kDLCPU, type);
            return NULL;
        }
    } else if (PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear(); /* __dlpack_device__ is optional for us: the DLTensor says it too */
    } else {
        return NULL;
    }
    PyObject *method = PyObject_GetAttrString(obj, "__dlpack__");
    if (!method)
        return NULL;
    PyObject *empty = PyTuple_New(0);
    PyObject *kwargs = Py_BuildValue("{s:(ii)}", "max_version", PITH_DLPACK_MAJOR,
                                     PITH_DLPACK_MINOR);
    PyObject *capsule = empty && kwargs ? PyObject_Call(method, empty, kwargs) : NULL;
    if (!capsule && PyErr_ExceptionMatches(PyExc_TypeError)) {
        PyErr_Clear();
        capsule = PyObject_CallNoArgs(method);
    }
    Py_XDECREF(kwargs);
    Py_XDECREF(empty);
    Py_DECREF(method);
    return capsule;
}

int dlpack_is_capable(PyObject *obj)
{
    return PyCapsule_CheckExact(obj) || PyObject_HasAttrString(obj, "__dlpack__");
}

pith_tensor *dlpack_import(pith_module_state *st, PyObject *obj)
{
    if (tensor_check(st, obj)) {
        pith_tensor *t = pith_alias(tensor_of(obj));
        if (!t)
            error_raise(st);
        return t;
    }
    if (!dlpack_is_capable(obj)) {
        PyErr_Format(PyExc_TypeError,
                     "from_dlpack: expected an object with __dlpack__ or a DLPack capsule, got "
                     "%.200s",
                     Py_TYPE(obj)->tp_name);
        return NULL;
    }
    PyObject *capsule = capsule_of(obj);
    if (!capsule)
        return NULL;
    pith_tensor *t = NULL;
    if (!PyCapsule_CheckExact(capsule))
        PyErr_Format(PyExc_TypeError, "__dlpack__ returned %.200s, not a capsule",
                     Py_TYPE(capsule)->tp_name);
    else
        t = capsule_import(st, capsule);
    Py_DECREF(capsule);
    return t;
}

/* from_dlpack(ext_tensor, *, device=None, copy=None): shares the memory unless copy=True. */
PyObject *module_from_dlpack(PyObject *module, PyObject *args, PyObject *kwargs)
{
    static char *kwlist[] = {"ext_tensor", "device", "copy", NULL};
    PyObject *obj, *device = Py_None, *copy = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, "O|$OO:from_dlpack", kwlist, &obj, &device,
                                     &copy))
        return NULL;
    pith_module_state *st = state_of_module(module);
    if (device != Py_None &&
        !(PyUnicode_Check(device) && PyUnicode_CompareWithASCIIString(device, "cpu") == 0)) {
        PyErr_Format(PyExc_ValueError, "from_dlpack: device must be None or 'cpu', not %R",
                     device);
        return NULL;
    }
    int copied = copy == Py_None ? 0 : PyObject_IsTrue(copy);
    if (copied < 0)
        return NULL;
    pith_tensor *t = dlpack_import(st, obj);
    if (t && copied) {
        pith_tensor *c = copy_without_gil(st, t, pith_tensor_dtype(t));
        pith_release(t);
        t = c;
    }
    return t ? tensor_wrap(st, t) : NULL;
}
