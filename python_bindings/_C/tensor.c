/* tensor.c — pith.Tensor: the wrapper of a pith_tensor, its lifetime (wrap, preservation,
 * GC, dealloc), the metaclass that gives every subclass that lifetime, and the metadata
 * methods. Operators are in tensor_number.c, indexing in indexing.c, conversions in
 * convert.c, stash handles and pith.share in stash.c. */
#include "function_layer.h"

#include <structmember.h>

/* Note [Tensor wrapper]
 * A pith.Tensor holds one strong C reference to its pith_tensor, and the tensor's PyObject
 * slot holds a borrowed pointer back (See Note [PyObject slot and interpreter tag],
 * core/pyobj_slot.c). tensor_wrap is the only way a pith_tensor becomes a Python object:
 *  - it checks the interpreter tag first, so a tensor of another interpreter raises
 *    pith.InterpreterError and never gets a second wrapper;
 *  - if the slot already names a wrapper, that object is returned: wrapping the same
 *    tensor twice in one interpreter gives the same object (`x.add_(1) is x`), and a
 *    wrapper that C owned passes back to Python;
 *  - otherwise it claims the tag, makes the wrapper and records it in the slot.
 * A wrapper outlives its last Python reference while C holds the tensor: See Note
 * [PyObject preservation in the bindings]. */

/* Note [PyObject preservation in the bindings]
 * The wrapper's half of Note [PyObject preservation] (core/pyobj_slot.c), "flip on
 * dealloc". The wrapper has two states, and TENSOR_C_OWNS in its flags says which:
 *  - Python owns it (flag clear): `t` is a strong reference and the slot is (self, owns
 *    clear). This is every wrapper that Python code can reach in the normal course.
 *  - C owns it (flag set): the wrapper's Python refcount is C's one reference, `t` is
 *    borrowed and the slot is (self, owns set).
 * The flips:
 *  - tensor_dealloc of a Python-owned wrapper first reads pith_tensor_refcount(t): above 1,
 *    C holds the tensor too, so the wrapper is resurrected instead of freed (refcount 1,
 *    still tracked by the GC), marked C-owned (flag, then owns bit), and its own C
 *    reference is released. Nothing is cleared: id, type, __dict__, __slots__ and weakrefs
 *    stay, and no __del__ runs, because the object did not die. Our release may be the last
 *    one when another thread released meanwhile: core then calls decref on us at once,
 *    which is the next case. A refcount of 1 (the plain tensor) is the fast path: one
 *    refcount read on top of the dealloc.
 *  - tensor_wrap_as of a C-owned tensor flips back: the caller's stolen C reference becomes
 *    the wrapper's strong one and C's Python reference passes to the caller.
 *  - C's last pith_release of a C-owned tensor clears the slot and calls the table's decref
 *    entry, which calls tensor_decref_from_c inside this interpreter. There `t` is at C
 *    refcount 0 and pith_release frees it as soon as decref returns, so the dealloc
 *    (tensor_forget_dying) lets go of `t` before any Python code can run: the wrapper must
 *    not retain and release it (a release from 1 to 0 inside decref would free it under
 *    pith_release's feet). A type with a finalizer (__del__) still needs a tensor for its
 *    __del__: it gets a fresh alias over the same storage, claimed for this interpreter;
 *    only the identity of the C tensor differs, and only inside that __del__.
 *  - Python may reach a C-owned wrapper without wrapping (a weakref, gc.get_objects()).
 *    If it still holds it when C lets go, tensor_decref_from_c sees a Python refcount
 *    above 1 and rescues the tensor instead: the wrapper retains `t` (0 -> 1, which
 *    pith_release sees and then does not free it) and is Python-owned again.
 * Garbage collection: while C holds the tensor (the flag, or a refcount above 1),
 * tensor_traverse visits nothing and tensor_clear clears nothing. C's references are
 * invisible to the collector, so they act as roots: everything the wrapper refers to is
 * reachable, and a cycle through __dict__ (t.self = t) is never found unreachable, so its
 * weakrefs are never cleared, no finalizer runs and no __dict__ is emptied (PyTorch's bugs
 * #75932, #136358 and #145253). When C lets go, the next collection sees the cycle.
 * Subclasses: See Note [Tensor metaclass]. */

/* Note [Tensor metaclass]
 * CPython gives every class statement's type subtype_dealloc, subtype_traverse and
 * subtype_clear. subtype_dealloc runs __del__ and clears __slots__ before it reaches the
 * base's dealloc, and subtype_clear clears __slots__ before the base's tp_clear: both too
 * early for Note [PyObject preservation in the bindings]. And it cannot simply be wrapped:
 * subtype_dealloc finds "the base" as the nearest type whose tp_dealloc is not
 * subtype_dealloc, which would be the subclass itself once we replace its slot. So every
 * subclass gets our three slots instead, tensor_dealloc / tensor_traverse / tensor_clear,
 * the same functions as pith.Tensor's (so __class__ assignment between pith.Tensor and a
 * subclass of the same layout still passes CPython's layout check), and they do
 * subtype_dealloc's remaining work themselves: __del__, weakrefs, __slots__ (the members of
 * the Python classes between the type and pith.Tensor), the trashcan.
 * A metaclass is the one hook that sees every subclass being made: pith.Tensor's type is
 * pith._C._TensorMeta, a heap subclass of `type` whose tp_new calls type.__new__ and then
 * replaces the three slots (type.__new__ of another metaclass refuses to bypass it: "not
 * safe"). Python 3.11 has no PyType_FromMetaclass (3.12), and 3.12's refuses a metaclass
 * with its own tp_new, so pith.Tensor is made from its spec by PyType_FromModuleAndSpec
 * and then given the metaclass with Py_SET_TYPE: the metaclass adds no fields, so the type
 * object's layout is the same. Its instances (pith.Tensor and every subclass) hold a
 * reference to it, which its tp_traverse visits and its tp_dealloc drops, as
 * subtype_traverse and subtype_dealloc do for a metaclass defined in Python. */

static void tensor_dealloc(PyObject *obj);

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
        /* C owned the wrapper: its reference passes to the caller and the stolen C
         * reference becomes the wrapper's strong one. */
        ((pith_tensor_object *)obj)->flags &= ~TENSOR_C_OWNS;
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

/* ---- preservation and garbage collection ---- */

/* Whether C holds the tensor besides this wrapper; then the collector must not see through
 * it. See Note [PyObject preservation in the bindings]. */
static bool tensor_held_by_c(const pith_tensor_object *self)
{
    return (self->flags & TENSOR_C_OWNS) || (self->t && pith_tensor_refcount(self->t) > 1);
}

/* Visits (or clears, when `visit` is NULL) the __slots__ of the Python subclasses between
 * obj's type and pith.Tensor, whose own base is object: CPython's traverse_slots and
 * clear_slots. A heap type made by type.__new__ keeps its Py_SIZE members in tp_members. */
static int tensor_slots_visit(PyObject *obj, visitproc visit, void *arg)
{
    for (PyTypeObject *type = Py_TYPE(obj); type->tp_base != &PyBaseObject_Type;
         type = type->tp_base) {
        PyMemberDef *member = type->tp_members;
        for (Py_ssize_t i = 0; member && i < Py_SIZE(type); i++, member++) {
            if (member->type != T_OBJECT_EX || (member->flags & READONLY))
                continue;
            PyObject **field = (PyObject **)((char *)obj + member->offset);
            if (!visit) {
                Py_CLEAR(*field);
                continue;
            }
            Py_VISIT(*field);
        }
    }
    return 0;
}

static int tensor_traverse(PyObject *obj, visitproc visit, void *arg)
{
    pith_tensor_object *self = (pith_tensor_object *)obj;
    if (tensor_held_by_c(self))
        return 0; /* C's references are roots: Note [PyObject preservation in the bindings] */
    Py_VISIT(Py_TYPE(obj));
    Py_VISIT(self->dict);
    return tensor_slots_visit(obj, visit, arg);
}

static void tensor_clear_state(PyObject *obj)
{
    if (Py_TYPE(obj)->tp_base != &PyBaseObject_Type)
        tensor_slots_visit(obj, NULL, NULL); /* a subclass */
    Py_CLEAR(((pith_tensor_object *)obj)->dict);
}

static int tensor_clear(PyObject *obj)
{
    if (!tensor_held_by_c((pith_tensor_object *)obj))
        tensor_clear_state(obj);
    return 0;
}

/* The dealloc of a wrapper whose tensor C still holds: resurrect it, owned by C. `obj` may
 * be freed when this returns (our release was the last). */
static void tensor_preserve(PyObject *obj)
{
    pith_tensor_object *self = (pith_tensor_object *)obj;
    pith_tensor *t = self->t;
    Py_INCREF(obj); /* from 0: C's reference, as CPython resurrects in its finalizers */
    if (!PyObject_GC_IsTracked(obj))
        PyObject_GC_Track(obj);
    self->flags |= TENSOR_C_OWNS;
    pith_slot_set_owns(t, true);
    pith_release(t);
}

/* C dropped its last reference to a tensor whose wrapper it owned: let go of the tensor,
 * which pith_release frees once the decref that got us here returns; a type with __del__
 * gets an alias to run it on. See Note [PyObject preservation in the bindings]. */
static void tensor_forget_dying(PyObject *obj)
{
    pith_tensor_object *self = (pith_tensor_object *)obj;
    pith_tensor *t = self->t;
    unsigned flags = self->flags;
    self->t = NULL;
    self->flags = 0;
    if (!t)
        return;
    if (flags & TENSOR_STASHED)
        stash_forget(t);
    if (!Py_TYPE(obj)->tp_finalize)
        return;
    /* On failure __del__ does not run: it would have no tensor. */
    pith_module_state *st = state_of_type(Py_TYPE(obj));
    if (!st) {
        PyErr_Clear();
        return;
    }
    pith_tensor *alias = pith_alias(t);
    if (!alias || pith_slot_claim(alias, st->interp) != PITH_OK) {
        pith_release(alias);
        return;
    }
    pith_tensor_set_python_key(alias, pith_tensor_has_python_key(t));
    pith_slot_set(alias, obj, false);
    self->t = alias;
}

void tensor_decref_from_c(PyObject *obj)
{
    pith_tensor_object *self = (pith_tensor_object *)obj;
    if (Py_TYPE(obj)->tp_dealloc == tensor_dealloc && Py_REFCNT(obj) > 1 &&
        (self->flags & TENSOR_C_OWNS) && self->t) {
        /* Python reached the wrapper while C owned it, and still holds it: rescue. */
        if (self->flags & TENSOR_STASHED)
            stash_forget(self->t);
        self->flags = 0;
        pith_retain(self->t);
        pith_slot_set(self->t, obj, false);
    }
    Py_DECREF(obj);
}

/* ---- dealloc ---- */

/* The end of every wrapper: nothing of it survives. Called untracked. */
static void tensor_free(PyObject *obj)
{
    pith_tensor_object *self = (pith_tensor_object *)obj;
    PyTypeObject *type = Py_TYPE(obj);
    if (self->weakreflist)
        PyObject_ClearWeakRefs(obj);
    if (type->tp_base != &PyBaseObject_Type)
        tensor_slots_visit(obj, NULL, NULL); /* a subclass's __slots__ */
    Py_CLEAR(self->dict);
    pith_tensor *t = self->t;
    if (t) {
        self->t = NULL;
        if (self->flags & TENSOR_STASHED)
            stash_forget(t); /* C holds no references: no handle of `t` is live */
        pith_slot_clear(t);
        pith_release(t);
    }
    type->tp_free(obj);
    Py_DECREF(type);
}

/* subtype_dealloc's work for subclasses (See Note [Tensor metaclass]): __del__ first, which
 * may resurrect the object or hand its tensor to C, then the end. */
static void tensor_dealloc_subclass(PyObject *obj)
{
    pith_tensor_object *self = (pith_tensor_object *)obj;
    if (Py_TYPE(obj)->tp_finalize && self->t) {
        PyObject_GC_Track(obj);
        if (PyObject_CallFinalizerFromDealloc(obj) < 0)
            return; /* __del__ resurrected it, still Python-owned */
        PyObject_GC_UnTrack(obj);
        if (pith_tensor_refcount(self->t) > 1) {
            tensor_preserve(obj);
            return;
        }
    }
    tensor_free(obj);
}

/* Every case but the plain one: See Note [PyObject preservation in the bindings]. Not
 * inlined, so that the plain case keeps a small frame. */
__attribute__((noinline)) static void tensor_dealloc_slow(PyObject *obj)
{
    pith_tensor_object *self = (pith_tensor_object *)obj;
    if (self->flags & TENSOR_C_OWNS) {
        tensor_forget_dying(obj);
    } else if (self->t && pith_tensor_refcount(self->t) > 1) {
        tensor_preserve(obj);
        return;
    }
    PyObject_GC_UnTrack(obj);
    PyTypeObject *type = Py_TYPE(obj);
    if (type->tp_base == &PyBaseObject_Type && !type->tp_finalize) {
        tensor_free(obj);
        return;
    }
    Py_TRASHCAN_BEGIN(obj, tensor_dealloc)
    tensor_dealloc_subclass(obj);
    Py_TRASHCAN_END
}

static void tensor_dealloc(PyObject *obj)
{
    pith_tensor_object *self = (pith_tensor_object *)obj;
    PyTypeObject *type = Py_TYPE(obj);
    if (self->flags || type->tp_base != &PyBaseObject_Type || type->tp_finalize || !self->t ||
        pith_tensor_refcount(self->t) > 1) {
        tensor_dealloc_slow(obj);
        return;
    }
    /* The plain case: a pith.Tensor (no __del__, no __slots__) whose tensor only it holds. */
    PyObject_GC_UnTrack(obj);
    if (self->weakreflist)
        PyObject_ClearWeakRefs(obj);
    Py_CLEAR(self->dict);
    pith_slot_clear(self->t);
    pith_release(self->t);
    type->tp_free(obj);
    Py_DECREF(type);
}

/* ---- the metaclass ---- */

/* Whether a base of `type` is pith.Tensor (or a subclass already given our dealloc). */
static bool type_is_tensor_subclass(PyTypeObject *type)
{
    for (PyTypeObject *base = type->tp_base; base; base = base->tp_base)
        if (base->tp_dealloc == tensor_dealloc)
            return true;
    return false;
}

static PyObject *tensor_meta_new(PyTypeObject *meta, PyObject *args, PyObject *kwargs)
{
    PyTypeObject *type = (PyTypeObject *)PyType_Type.tp_new(meta, args, kwargs);
    if (!type)
        return NULL;
    if (!type_is_tensor_subclass(type)) {
        PyErr_Format(PyExc_TypeError,
                     "%s is the metaclass of pith.Tensor and its subclasses only; %.200s "
                     "does not derive from pith.Tensor",
                     meta->tp_name, type->tp_name);
        Py_DECREF(type);
        return NULL;
    }
    type->tp_dealloc = tensor_dealloc;
    type->tp_traverse = tensor_traverse;
    type->tp_clear = tensor_clear;
    pith_module_state *st = state_of_type(type);
    if (!st || function_class_created(st, type) < 0) {
        Py_DECREF(type);
        return NULL;
    }
    return (PyObject *)type;
}

static int tensor_meta_traverse(PyObject *type, visitproc visit, void *arg)
{
    Py_VISIT(Py_TYPE(type));
    return PyType_Type.tp_traverse(type, visit, arg);
}

/* Spelled out: a spec that sets tp_traverse inherits no tp_clear. */
static int tensor_meta_clear(PyObject *type)
{
    return PyType_Type.tp_clear(type);
}

static void tensor_meta_dealloc(PyObject *type)
{
    PyTypeObject *meta = Py_TYPE(type);
    PyType_Type.tp_dealloc(type);
    Py_DECREF(meta);
}

static PyType_Slot tensor_meta_slots[] = {
    {Py_tp_new, tensor_meta_new},
    {Py_tp_traverse, tensor_meta_traverse},
    {Py_tp_clear, tensor_meta_clear},
    {Py_tp_dealloc, tensor_meta_dealloc},
    {Py_tp_doc, "The metaclass of pith.Tensor: gives every subclass the wrapper lifetime of "
                "pith.Tensor (PyObject preservation)."},
    {0, NULL},
};

static PyType_Spec tensor_meta_spec = {
    .name = "pith._C._TensorMeta",
    .flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_BASETYPE | Py_TPFLAGS_HAVE_GC,
    .slots = tensor_meta_slots,
};

/* Makes `meta` the type of `type` (See Note [Tensor metaclass]). */
static int tensor_type_set_meta(PyTypeObject *type, PyObject *module)
{
    PyObject *meta =
        PyType_FromModuleAndSpec(module, &tensor_meta_spec, (PyObject *)&PyType_Type);
    if (!meta)
        return -1;
    if (((PyTypeObject *)meta)->tp_basicsize != PyType_Type.tp_basicsize) {
        Py_DECREF(meta);
        PyErr_SetString(PyExc_SystemError, "pith: the metaclass changed the type layout");
        return -1;
    }
    Py_SET_TYPE(type, (PyTypeObject *)meta); /* steals `meta`: the type's reference to it */
    PyType_Modified(type);
    return 0;
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
    FUNCTION_LAYER_SELF(self, "__repr__");
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
    FUNCTION_LAYER_SELF(self, "shape.__get__");
    TENSOR_STATE(self);
    int64_t sizes[PITH_MAX_DIMS];
    int ndim = pith_sizes(tensor_of(self), sizes);
    if (ndim < 0)
        return error_raise(st);
    return size_new(st, ndim, sizes);
}

static PyObject *tensor_get_dtype(PyObject *self, void *closure)
{
    FUNCTION_LAYER_SELF(self, "dtype.__get__");
    TENSOR_STATE(self);
    return dtype_object(st, pith_tensor_dtype(tensor_of(self)));
}

static PyObject *tensor_ndim(PyObject *self)
{
    int ndim = pith_ndim(tensor_of(self));
    return ndim < 0 ? error_raise(state_of_type(Py_TYPE(self))) : PyLong_FromLong(ndim);
}

static PyObject *tensor_get_ndim(PyObject *self, void *closure)
{
    FUNCTION_LAYER_SELF(self, "ndim.__get__");
    return tensor_ndim(self);
}

static PyObject *tensor_get_device(PyObject *self, void *closure)
{
    FUNCTION_LAYER_SELF(self, "device.__get__");
    TENSOR_STATE(self);
    pith_clear_error();
    pith_device device = pith_tensor_device(tensor_of(self));
    if (pith_last_status() != PITH_OK)
        return error_raise(st);
    return device_object(st, device);
}

/* Wraps a possibly negative `dim` the way PyTorch's size(dim) and stride(dim) do, or raises
 * IndexError (always for a 0-dim tensor, as pith_size does). */
static int dim_wrap(PyObject *dim_obj, int ndim, int *out)
{
    long long dim = PyLong_AsLongLong(dim_obj);
    if (dim == -1 && PyErr_Occurred())
        return -1;
    if (ndim == 0) { /* PyTorch: size(dim) and stride(dim) of a 0-dim tensor have no answer */
        PyErr_Format(PyExc_IndexError, "Dimension specified as %lld but tensor has no dimensions",
                     dim);
        return -1;
    }
    if (dim < -ndim || dim >= ndim) {
        PyErr_Format(PyExc_IndexError,
                     "Dimension out of range (expected to be in range of [%d, %d], but got %lld)",
                     -ndim, ndim - 1, dim);
        return -1;
    }
    *out = (int)(dim < 0 ? dim + ndim : dim);
    return 0;
}

/* size(dim=None) and stride(dim=None) */
static PyObject *tensor_sizes_or_strides(PyObject *self, PyObject *args, PyObject *kwargs,
                                    int strides)
{
    static char *kwlist[] = {"dim", NULL};
    PyObject *dim_obj = Py_None, *result;
    if (function_self_maybe(self) &&
        function_layer_method_tuple(self, strides ? "stride" : "size", args, kwargs, &result))
        return result;
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
    return PyLong_FromLongLong(values[dim]);
}

static PyObject *tensor_size(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return tensor_sizes_or_strides(self, args, kwargs, 0);
}

static PyObject *tensor_stride(PyObject *self, PyObject *args, PyObject *kwargs)
{
    return tensor_sizes_or_strides(self, args, kwargs, 1);
}

static PyObject *tensor_dim(PyObject *self, PyObject *unused)
{
    FUNCTION_LAYER_SELF(self, "dim");
    return tensor_ndim(self);
}

static PyObject *tensor_numel(PyObject *self, PyObject *unused)
{
    FUNCTION_LAYER_SELF(self, "numel");
    int64_t n = pith_numel(tensor_of(self));
    return n < 0 ? error_raise(state_of_type(Py_TYPE(self))) : PyLong_FromLongLong(n);
}

static PyObject *tensor_is_contiguous(PyObject *self, PyObject *unused)
{
    FUNCTION_LAYER_SELF(self, "is_contiguous");
    pith_clear_error();
    bool contiguous = pith_is_contiguous(tensor_of(self));
    if (!contiguous && pith_last_status() != PITH_OK)
        return error_raise(state_of_type(Py_TYPE(self)));
    return PyBool_FromLong(contiguous);
}

static PyObject *tensor_storage_offset(PyObject *self, PyObject *unused)
{
    FUNCTION_LAYER_SELF(self, "storage_offset");
    return PyLong_FromLongLong(pith_storage_offset(tensor_of(self)));
}

static PyObject *tensor_data_ptr(PyObject *self, PyObject *unused)
{
    FUNCTION_LAYER_SELF(self, "data_ptr");
    return PyLong_FromVoidPtr(pith_data_ptr(tensor_of(self)));
}

static PyObject *tensor_item_method(PyObject *self, PyObject *unused)
{
    FUNCTION_LAYER_SELF(self, "item");
    return tensor_item(tensor_of(self));
}

static PyObject *tensor_tolist_method(PyObject *self, PyObject *unused)
{
    FUNCTION_LAYER_SELF(self, "tolist");
    return tensor_tolist(tensor_of(self));
}

static Py_ssize_t tensor_length(PyObject *self)
{
    PyObject *result;
    if (function_self_maybe(self) &&
        function_layer_method(self, "__len__", &self, 1, NULL, &result)) {
        Py_ssize_t n = result ? PyNumber_AsSsize_t(result, PyExc_OverflowError) : -1;
        Py_XDECREF(result);
        return n;
    }
    int64_t sizes[PITH_MAX_DIMS];
    int ndim = pith_sizes(tensor_of(self), sizes); /* one query: a policy asks Python */
    if (ndim < 0) {
        pith_module_state *st = state_of_type(Py_TYPE(self)); /* NULL: a TypeError is set */
        if (st)
            error_raise(st);
        return -1;
    }
    if (ndim == 0) {
        PyErr_SetString(PyExc_TypeError, "len() of a 0-d tensor");
        return -1;
    }
    return (Py_ssize_t)sizes[0];
}

static PyGetSetDef tensor_getset[] = {
    {"shape", tensor_get_shape, NULL, "The sizes, as a pith.Size.", NULL},
    {"dtype", tensor_get_dtype, NULL, "The element type.", NULL},
    {"ndim", tensor_get_ndim, NULL, "The number of dims.", NULL},
    {"device", tensor_get_device, NULL, "The pith.device: cpu, or meta.", NULL},
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
    {"nelement", tensor_numel, METH_NOARGS, "The number of elements (numel's other name)."},
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
#define PITH_NUMBER_SLOT_ENTRIES
#include "generated/number_slots.inc"
#undef PITH_NUMBER_SLOT_ENTRIES
    {Py_nb_matrix_multiply, (void *)tensor_nb_matrix_multiply},
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
    if (!st->tensor_type || tensor_type_set_meta(st->tensor_type, module) < 0 ||
        type_add_methods(st->tensor_type, conversions_tensor_methods) < 0 ||
        type_add_methods(st->tensor_type, interop_tensor_methods) < 0 ||
        type_add_methods(st->tensor_type, pydispatch_tensor_methods) < 0 ||
        type_add_methods(st->tensor_type, grad_mode_tensor_methods) < 0 ||
        PyModule_AddType(module, st->tensor_type) < 0)
        return -1;
    PyObject *meta = (PyObject *)Py_TYPE(st->tensor_type);
    /* stash.c's functions (_stash, _unstash, share) come with the type they hand out. */
    if (PyModule_AddObjectRef(module, "_TensorMeta", meta) < 0 ||
        PyModule_AddFunctions(module, stash_module_methods) < 0)
        return -1;
    return 0;
}
