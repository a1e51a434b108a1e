/* tensor.c — pith.Tensor: the wrapper of a pith_tensor, its lifetime (wrap, dealloc, GC)
 * and its metadata methods. Operators are in tensor_number.c, indexing in indexing.c,
 * conversions in convert.c. */
#include "state.h"

#include <structmember.h>

/* Note [Tensor wrapper]
 * A pith.Tensor holds one strong C reference to its pith_tensor, and the tensor's PyObject
 * slot holds a borrowed pointer back (See Note [PyObject slot and interpreter tag],
 * core/pyobj_slot.c). tensor_wrap is the only way a pith_tensor becomes a Python object:
 *  - it checks the interpreter tag first, so a tensor of another interpreter raises
 *    pith.InterpreterError and never gets a second wrapper;
 *  - if the slot already names a wrapper, that object is returned: wrapping the same
 *    tensor twice in one interpreter gives the same object (`x.add_(1) is x`);
 *  - otherwise it claims the tag, makes the wrapper and records it in the slot.
 * Dealloc clears the slot and releases the C reference. A later wrap of a tensor that C
 * still holds makes a new wrapper; keeping the old one alive instead is "flip on dealloc"
 * (See Note [PyObject preservation], core/pyobj_slot.c), which plugs in at the two places
 * marked "preservation" below: the resurrecting branch at the top of tensor_dealloc, and
 * the C-owned branch of tensor_wrap (already correct for a wrapper that C owns). For the
 * subclass case, dealloc reaches Python-defined subclasses through subtype_dealloc, which
 * calls this dealloc as the base's; the resurrection needs the metaclass of
 * ARCHITECTURE.md so that it runs before subtype_dealloc clears __dict__ and weakrefs. */

pith_module_state *state_of_type(PyTypeObject *type)
{
    PyObject *module = PyType_GetModuleByDef(type, &pith_module_def);
    return module ? state_of_module(module) : NULL;
}

PyObject *tensor_wrap(pith_module_state *st, pith_tensor *t)
{
    return tensor_wrap_as(st, t, st->tensor_type);
}

PyObject *tensor_wrap_as(pith_module_state *st, pith_tensor *t, PyTypeObject *type)
{
    if (!t)
        return error_raise(st);
    if (pith_slot_check(t, st->interp) != PITH_OK) {
        pith_release(t);
        return error_raise(st);
    }
    bool owns = false;
    PyObject *obj = pith_slot_get(t, &owns);
    if (obj && owns) {
        /* preservation: C owned the wrapper; its reference passes to the caller and the
         * stolen C reference becomes the wrapper's strong one. */
        pith_slot_set_owns(t, false);
        return obj;
    }
    if (obj) {
        pith_release(t); /* the wrapper already holds its own reference */
        return Py_NewRef(obj);
    }
    if (pith_slot_claim(t, st->interp) != PITH_OK) {
        pith_release(t);
        return error_raise(st);
    }
    pith_tensor_object *self = (pith_tensor_object *)type->tp_alloc(type, 0);
    if (!self) {
        pith_release(t);
        return NULL;
    }
    self->t = t;
    pith_slot_set(t, self, false);
    return (PyObject *)self;
}

static int tensor_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(self));
    Py_VISIT(((pith_tensor_object *)self)->dict);
    return 0;
}

static int tensor_clear(PyObject *self)
{
    Py_CLEAR(((pith_tensor_object *)self)->dict);
    return 0;
}

static void tensor_dealloc(PyObject *obj)
{
    pith_tensor_object *self = (pith_tensor_object *)obj;
    PyTypeObject *tp = Py_TYPE(obj);
    /* preservation: when pith_tensor_refcount(self->t) > 1, resurrect here instead. */
    PyObject_GC_UnTrack(obj);
    if (self->weakreflist)
        PyObject_ClearWeakRefs(obj);
    tensor_clear(obj);
    if (self->t) {
        pith_slot_clear(self->t);
        pith_release(self->t);
        self->t = NULL;
    }
    tp->tp_free(obj);
    Py_DECREF(tp);
}

static PyObject *tensor_new(PyTypeObject *type, PyObject *args, PyObject *kwargs)
{
    PyErr_SetString(PyExc_TypeError,
                    "pith.Tensor cannot be constructed directly: use pith.tensor(data), "
                    "pith.empty(size) or another factory");
    return NULL;
}

static Py_hash_t tensor_hash(PyObject *self)
{
    /* __eq__ is elementwise, so hashing is by identity, as in PyTorch. */
    Py_hash_t h = (Py_hash_t)((uintptr_t)self >> 4);
    return h == -1 ? -2 : h;
}

static PyObject *tensor_repr(PyObject *self)
{
    PyObject *mod = PyImport_ImportModule("pith._tensor_str");
    if (!mod)
        return NULL;
    PyObject *r = PyObject_CallMethod(mod, "tensor_repr", "O", self);
    Py_DECREF(mod);
    return r;
}

/* ---- metadata ---- */

#define TENSOR_STATE(self)                                                                  \
    pith_module_state *st = state_of_type(Py_TYPE(self));                                   \
    if (!st)                                                                                \
        return NULL;

static PyObject *tensor_get_shape(PyObject *self, void *closure)
{
    TENSOR_STATE(self);
    int64_t sizes[PITH_MAX_DIMS];
    int ndim = pith_sizes(tensor_of(self), sizes);
    if (ndim < 0)
        return error_raise(st);
    return size_new(st, ndim, sizes);
}

static PyObject *tensor_get_dtype(PyObject *self, void *closure)
{
    TENSOR_STATE(self);
    return dtype_object(st, pith_tensor_dtype(tensor_of(self)));
}

static PyObject *tensor_get_ndim(PyObject *self, void *closure)
{
    return PyLong_FromLong(pith_ndim(tensor_of(self)));
}

static PyObject *tensor_get_device(PyObject *self, void *closure)
{
    return PyUnicode_FromString(pith_device_name(pith_tensor_device(tensor_of(self))));
}

/* Wraps a possibly negative `dim` the way PyTorch does, or raises IndexError. */
static int dim_wrap(PyObject *dim_obj, int ndim, int *out)
{
    long long dim = PyLong_AsLongLong(dim_obj);
    if (dim == -1 && PyErr_Occurred())
        return -1;
    int n = ndim > 0 ? ndim : 1; /* a 0-dim tensor accepts dim 0 and -1 */
    if (dim < -n || dim >= n) {
        PyErr_Format(PyExc_IndexError,
                     "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                     -n, n - 1, dim);
        return -1;
    }
    *out = (int)(dim < 0 ? dim + n : dim);
    return 0;
}

/* size(dim=None) and stride(dim=None) */
static PyObject *tensor_dims_or_one(PyObject *self, PyObject *args, PyObject *kwargs,
                                    int strides)
{
    static char *kwlist[] = {"dim", NULL};
    PyObject *dim_obj = Py_None;
    if (!PyArg_ParseTupleAndKeywords(args, kwargs, strides ? "|O:stride" : "|O:size", kwlist,
                                     &dim_obj))
        return NULL;
    TENSOR_STATE(self);
    int64_t values[PITH_MAX_DIMS];
    int ndim = strides ? pith_strides(tensor_of(self), values)
                       : pith_sizes(tensor_of(self), values);
    if (ndim < 0)
        return error_raise(st);
    if (dim_obj == Py_None) {
        if (!strides)
            return size_new(st, ndim, values);
        PyObject *tuple = PyTuple_New(ndim);
        for (int i = 0; tuple && i < ndim; i++) {
            PyObject *v = PyLong_FromLongLong(values[i]);
            if (!v)
                Py_CLEAR(tuple);
            else
                PyTuple_SET_ITEM(tuple, i, v);
        }
        return tuple;
    }
    int dim;
    if (dim_wrap(dim_obj, ndim, &dim) < 0)
        return NULL;
    if (ndim == 0)
        return PyLong_FromLong(strides ? 1 : 1);
    return PyLong_FromLongLong(values[dim]);
}

static PyObject *tensor_size(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return tensor_dims_or_one(self, args, kwargs, 0);
}

static PyObject *tensor_stride(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return tensor_dims_or_one(self, args, kwargs, 1);
}

static PyObject *tensor_dim(PyObject *self, PyObject *unused)
{
    return PyLong_FromLong(pith_ndim(tensor_of(self)));
}

static PyObject *tensor_numel(PyObject *self, PyObject *unused)
{
    return PyLong_FromLongLong(pith_numel(tensor_of(self)));
}

static PyObject *tensor_is_contiguous(PyObject *self, PyObject *unused)
{
    return PyBool_FromLong(pith_is_contiguous(tensor_of(self)));
}

static PyObject *tensor_storage_offset(PyObject *self, PyObject *unused)
{
    return PyLong_FromLongLong(pith_storage_offset(tensor_of(self)));
}

static PyObject *tensor_data_ptr(PyObject *self, PyObject *unused)
{
    return PyLong_FromVoidPtr(pith_data_ptr(tensor_of(self)));
}

static PyObject *tensor_item_method(PyObject *self, PyObject *unused)
{
    return tensor_item(tensor_of(self));
}

static PyObject *tensor_tolist_method(PyObject *self, PyObject *unused)
{
    return tensor_tolist(tensor_of(self));
}

static Py_ssize_t tensor_length(PyObject *self)
{
    pith_tensor *t = tensor_of(self);
    if (pith_ndim(t) == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)pith_size(t, 0);
}

static PyGetSetDef tensor_getset[] = {
    {"shape", tensor_get_shape, NULL, "The sizes, as a pith.Size.", NULL},
    {"dtype", tensor_get_dtype, NULL, "The element type.", NULL},
    {"ndim", tensor_get_ndim, NULL, "The number of dims.", NULL},
    {"device", tensor_get_device, NULL, "'cpu' or 'meta'.", NULL},
    {"T", tensor_get_T, NULL, "The tensor with its dims reversed (a view).", NULL},
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL},
};

static PyMethodDef tensor_methods[] = {
    {"size", (PyCFunction)(void (*)(void))tensor_size, METH_VARARGS | METH_KEYWORDS,
     "size(dim=None): the sizes, or the size of one dim."},
    {"stride", (PyCFunction)(void (*)(void))tensor_stride, METH_VARARGS | METH_KEYWORDS,
     "stride(dim=None): the strides in elements, or the stride of one dim."},
    {"dim", tensor_dim, METH_NOARGS, "The number of dims."},
    {"numel", tensor_numel, METH_NOARGS, "The number of elements."},
    {"is_contiguous", tensor_is_contiguous, METH_NOARGS, "Whether the layout is row-major."},
    {"storage_offset", tensor_storage_offset, METH_NOARGS, "The offset into the storage."},
    {"data_ptr", tensor_data_ptr, METH_NOARGS, "The address of the first element."},
    {"item", tensor_item_method, METH_NOARGS, "The value of a one-element tensor."},
    {"tolist", tensor_tolist_method, METH_NOARGS, "The values as nested lists."},
    {NULL},
};

static PyMemberDef tensor_members[] = {
    {"__dictoffset__", T_PYSSIZET, offsetof(pith_tensor_object, dict), READONLY, NULL},
    {"__weaklistoffset__", T_PYSSIZET, offsetof(pith_tensor_object, weakreflist), READONLY,
     NULL},
    {NULL},
};

#define TENSOR_SLOT_ENTRY_(slot, fn) {slot, (void *)fn},

/* Slot tables are constant C data, shared by every interpreter; the types made from them
 * are per module. */
static PyType_Slot tensor_slots[] = {
    TENSOR_BINARY_SLOTS(TENSOR_SLOT_ENTRY_)
    TENSOR_UNARY_SLOTS(TENSOR_SLOT_ENTRY_)
    {Py_nb_power, (void *)tensor_nb_power},
    {Py_nb_inplace_power, (void *)tensor_nb_inplace_power},
    {Py_nb_bool, (void *)tensor_nb_bool},
    {Py_tp_richcompare, (void *)tensor_richcompare},
    {Py_tp_new, tensor_new},
    {Py_tp_dealloc, tensor_dealloc},
    {Py_tp_traverse, tensor_traverse},
    {Py_tp_clear, tensor_clear},
    {Py_tp_hash, tensor_hash},
    {Py_tp_repr, tensor_repr},
    {Py_tp_getset, tensor_getset},
    {Py_tp_methods, tensor_methods},
    {Py_tp_members, tensor_members},
    {Py_mp_length, tensor_length},
    {Py_mp_subscript, tensor_mp_subscript},
    {Py_mp_ass_subscript, tensor_mp_ass_subscript},
    {Py_tp_iter, tensor_iter},
    {Py_sq_length, tensor_length},
    {Py_bf_getbuffer, (void *)tensor_getbuffer},
    {Py_bf_releasebuffer, (void *)tensor_releasebuffer},
    {Py_tp_doc, "A tensor: an n-dimensional array of one dtype."},
    {0, NULL},
};

static PyType_Spec tensor_spec = {
    .name = "pith.Tensor",
    .basicsize = sizeof(pith_tensor_object),
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = tensor_slots,
};

int type_add_methods(PyTypeObject *type, PyMethodDef *defs)
{
    for (PyMethodDef *def = defs; def->ml_name; def++) {
        PyObject *descr;
        if (def->ml_flags & METH_STATIC) {
            PyObject *fn = PyCFunction_NewEx(def, NULL, NULL);
            descr = fn ? PyStaticMethod_New(fn) : NULL;
            Py_XDECREF(fn);
        } else if (def->ml_flags & METH_CLASS) {
            descr = PyDescr_NewClassMethod(type, def);
        } else {
            descr = PyDescr_NewMethod(type, def);
        }
        if (!descr)
            return -1;
        int rc = PyDict_SetItemString(type->tp_dict, def->ml_name, descr);
        Py_DECREF(descr);
        if (rc < 0)
            return -1;
    }
    PyType_Modified(type);
    return 0;
}

int tensor_type_init(PyObject *module, pith_module_state *st)
{
    st->tensor_type = (PyTypeObject *)PyType_FromModuleAndSpec(module, &tensor_spec, NULL);
    if (!st->tensor_type || type_add_methods(st->tensor_type, methods_tensor_methods) < 0 ||
        type_add_methods(st->tensor_type, interop_tensor_methods) < 0 ||
        type_add_methods(st->tensor_type, pydispatch_tensor_methods) < 0 ||
        PyModule_AddType(module, st->tensor_type) < 0)
        return -1;
    return 0;
}
