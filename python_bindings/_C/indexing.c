/* indexing.c — indexing of pith.Tensor: x[key] and x[key] = value for int, slice, None,
 * Ellipsis, bools, index tensors and sequences (advanced indexing) and tuples of them,
 * plus Tensor.T and iteration. The basic items are applied as views; the advanced ones go
 * to the index / index_put_ ops through the dispatcher. */
#include "function_layer.h"

/* Note [Basic indexing is a chain of views]
 * A key is first parsed completely (index_parse): every item is classified, so that an
 * unsupported or invalid item raises before any view is made, and the number of dims the
 * key names (ints, slices and index tensors; a mask names as many dims as it has; None and
 * bools name none) is known before the Ellipsis is expanded to the dims it stands for. The
 * items are then applied left to right to an alias of the tensor (index_apply), as
 * PyTorch's applySlicing does, tracking `dim`, the position in the result so far: an int
 * selects at `dim` and removes it, a slice narrows `dim` and moves past it, None inserts a
 * dim of size one at `dim` and moves past it, and the Ellipsis skips the dims it stands
 * for. Errors follow PyTorch's order and wording: "too many indices" before any step or
 * bounds error, and an out-of-range int names the item's position in the key as its
 * "dimension" (x[None, 5] on a 3 x 4 tensor: "index 5 is out of bounds for dimension 1
 * with size 3"). Unlike PyTorch, which expands every Ellipsis of a key and can then index
 * past the last dim, a second Ellipsis is an IndexError, as in NumPy.
 * Each step is a view of the previous one, so without advanced items the result shares
 * storage (and the version counter) with the tensor, and `x[key] = value` is a copy into
 * that view. Even an empty key gives a new view, never the tensor itself: in PyTorch
 * `x[...] is x` is False. */

/* Note [Advanced indexing from Python]
 * The advanced items of a key follow PyTorch's applySlicing too. While the view chain is
 * built, each dim of the view gets an entry of an index list: None for a dim a slice,
 * None or the Ellipsis left whole, the tensor for the dim(s) an index tensor indexes. A
 * bool (True/False, or a 0-dim bool or uint8 tensor) inserts a dim of size one, as None
 * does, indexed by the int64 tensor [0] (True) or [] (False). A 0-dim integer tensor is an
 * int (a view: select). A sequence (list, NumPy array, range) becomes an index tensor:
 * bool or uint8 when that is what it holds, else int64 (floats truncate, as in PyTorch).
 * Unlike PyTorch 2.x, which still reads a short list holding slices, None or sequences as
 * a tuple (deprecated, with a warning), a list is always one index tensor, as in NumPy and
 * in PyTorch's announced behaviour. When the list holds a tensor, x[key] is the index op
 * on the view (a copy) and x[key] = value is index_put_ on it, which writes through to x;
 * both go through the dispatcher (pith_index, pith_index_put_), which applies the rules of
 * Note [Advanced indexing] (kernels/indexing_advanced.c). */

typedef enum {
    INDEX_INT,
    INDEX_SLICE,
    INDEX_NONE,
    INDEX_ELLIPSIS,
    INDEX_BOOL,  /* start: 0 or 1 */
    INDEX_TENSOR /* tensor: an index tensor or mask (owned) */
} index_kind;

typedef struct {
    index_kind kind;
    Py_ssize_t start; /* INDEX_INT: the index; INDEX_BOOL: the value */
    Py_ssize_t stop;
    Py_ssize_t step;
    pith_tensor *tensor; /* INDEX_TENSOR, and INDEX_BOOL once applied; owned */
} index_item;

/* A key longer than this names more dims than any tensor has, or makes too many. */
#define INDEX_MAX_ITEMS (2 * PITH_MAX_DIMS + 1)

typedef struct {
    index_item items[INDEX_MAX_ITEMS];
    int n;
    int named_dims; /* ints, slices and index tensors (a mask: its ndim) */
    /* Filled by index_apply: one entry per dim of the view (NULL: None), up to the last
     * tensor. See Note [Advanced indexing from Python]. */
    const pith_tensor *indices[INDEX_MAX_ITEMS + PITH_MAX_DIMS];
    int nindices;
    int advanced;
} index_key;

static void index_key_clear(index_key *k)
{
    for (int i = 0; i < k->n; i++)
        pith_release(k->items[i].tensor);
    k->n = 0;
}

/* Reads a slice's bounds. A step <= 0 is kept, not raised here: PyTorch reports it when the
 * slice is applied, after "too many indices" (index_item_apply). */
static int index_slice_parse(PyObject *obj, index_item *item)
{
    PyObject *step = ((PySliceObject *)obj)->step;
    item->kind = INDEX_SLICE;
    item->step = 1;
    if (step != Py_None) {
        item->step = PyNumber_AsSsize_t(step, NULL);
        if (item->step == -1 && PyErr_Occurred())
            return -1;
        if (item->step <= 0)
            return 0;
    }
    return PySlice_Unpack(obj, &item->start, &item->stop, &item->step);
}

static int index_mask_dtype(pith_dtype dtype)
{
    return dtype == PITH_BOOL || dtype == PITH_UINT8;
}

/* A tensor item (`t`, a new reference, stolen): a 0-dim integer tensor is an int and a
 * 0-dim bool or uint8 one a bool, as in PyTorch; anything else an index tensor. */
static int index_tensor_item(pith_tensor *t, index_item *item)
{
    pith_dtype dtype = pith_tensor_dtype(t);
    if (pith_ndim(t) == 0 && pith_dtype_is_integral(dtype, true)) {
        PyObject *value = tensor_item(t);
        pith_release(t);
        if (!value)
            return -1;
        item->kind = index_mask_dtype(dtype) ? INDEX_BOOL : INDEX_INT;
        item->start = item->kind == INDEX_BOOL ? PyObject_IsTrue(value)
                                               : PyNumber_AsSsize_t(value, PyExc_IndexError);
        Py_DECREF(value);
        return item->start == -1 && PyErr_Occurred() ? -1 : 0;
    }
    item->kind = INDEX_TENSOR;
    item->tensor = t;
    return 0;
}

/* A sequence as an index tensor: bool or uint8 when it holds those, else int64. Lists,
 * tuples and arrays (the buffer protocol) convert directly; other sequences (range) as
 * lists of their items. */
static int index_sequence_item(pith_module_state *st, PyObject *obj, index_item *item)
{
    PyObject *data = PyList_Check(obj) || PyTuple_Check(obj) || PyObject_CheckBuffer(obj)
                         ? Py_NewRef(obj)
                         : PySequence_List(obj);
    if (!data)
        return -1;
    pith_tensor *t = tensor_from_data(st, data, 0, PITH_INT64);
    Py_DECREF(data);
    if (!t)
        return -1;
    pith_dtype dtype = pith_tensor_dtype(t);
    if (!index_mask_dtype(dtype) && dtype != PITH_INT64) {
        pith_tensor *wide = pith_to_dtype(t, PITH_INT64);
        pith_release(t);
        if (!(t = wide)) {
            error_raise(st);
            return -1;
        }
    }
    return index_tensor_item(t, item);
}

static int index_item_parse(pith_module_state *st, PyObject *obj, index_item *item)
{
    item->tensor = NULL;
    if (obj == Py_None) {
        item->kind = INDEX_NONE;
        return 0;
    }
    if (obj == Py_Ellipsis) {
        item->kind = INDEX_ELLIPSIS;
        return 0;
    }
    if (PySlice_Check(obj))
        return index_slice_parse(obj, item);
    /* A Tensor has __index__ and a bool is an int, but both index as masks or index
     * tensors in PyTorch, so they are checked before the int case; so are sequences, as
     * a NumPy array has __index__ too. A str or bytes is a sequence that makes no tensor
     * in PyTorch: its TypeError, "new(): invalid data type 'str'". */
    if (PyBool_Check(obj)) {
        item->kind = INDEX_BOOL;
        item->start = obj == Py_True;
        return 0;
    }
    if (tensor_check(st, obj)) {
        pith_retain(tensor_of(obj));
        return index_tensor_item(tensor_of(obj), item);
    }
    if (PyUnicode_Check(obj) || PyBytes_Check(obj) || PyByteArray_Check(obj)) {
        PyErr_Format(PyExc_TypeError, "new(): invalid data type '%.200s'",
                     Py_TYPE(obj)->tp_name);
        return -1;
    }
    if (PySequence_Check(obj))
        return index_sequence_item(st, obj, item);
    if (PyIndex_Check(obj)) {
        item->kind = INDEX_INT;
        item->start = PyNumber_AsSsize_t(obj, PyExc_IndexError);
        return item->start == -1 && PyErr_Occurred() ? -1 : 0;
    }
    PyErr_Format(PyExc_IndexError,
                 "only integers, slices (`:`), ellipsis (`...`), None and long or byte "
                 "Variables are valid indices (got %.200s)",
                 Py_TYPE(obj)->tp_name);
    return -1;
}

/* The dims an item names (consumes from the tensor). */
static int index_item_dims(const index_item *item)
{
    switch (item->kind) {
    case INDEX_INT:
    case INDEX_SLICE:
        return 1;
    case INDEX_TENSOR:
        return index_mask_dtype(pith_tensor_dtype(item->tensor)) ? pith_ndim(item->tensor) : 1;
    default:
        return 0;
    }
}

/* See Note [Basic indexing is a chain of views]. On failure the key holds nothing. */
static int index_parse(pith_module_state *st, PyObject *key, int ndim, index_key *k)
{
    int is_tuple = PyTuple_Check(key);
    Py_ssize_t n = is_tuple ? PyTuple_GET_SIZE(key) : 1;
    int has_ellipsis = 0;
    k->n = 0;
    k->named_dims = 0;
    k->nindices = 0;
    k->advanced = 0;
    if (n > INDEX_MAX_ITEMS) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", ndim);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        index_item *item = &k->items[k->n];
        if (index_item_parse(st, is_tuple ? PyTuple_GET_ITEM(key, i) : key, item) < 0)
            goto fail;
        k->n++;
        k->named_dims += index_item_dims(item);
        if (item->kind == INDEX_ELLIPSIS) {
            if (has_ellipsis) {
                PyErr_SetString(PyExc_IndexError,
                                "an index can only have a single ellipsis ('...')");
                goto fail;
            }
            has_ellipsis = 1;
        }
    }
    int bare_int = !is_tuple && k->items[0].kind == INDEX_INT;
    /* PyTorch bounds-checks a lone int against a size of 0 first, so only 0 itself gets
     * the 0-dim message. */
    if (ndim == 0 && bare_int && k->items[0].start != 0) {
        PyErr_Format(PyExc_IndexError, "index %zd is out of bounds for dimension 0 with size 0",
                     k->items[0].start);
        goto fail;
    }
    if (ndim == 0 && bare_int) {
        PyErr_SetString(PyExc_IndexError,
                        "invalid index of a 0-dim tensor. Use `tensor.item()` to convert a "
                        "0-dim tensor to a number");
        goto fail;
    }
    /* A lone slice goes straight to the slice in PyTorch, so on a 0-dim tensor its step
     * is checked first and the error is slice()'s own. */
    int bare_slice = !is_tuple && k->items[0].kind == INDEX_SLICE;
    if (k->named_dims > ndim && !bare_slice) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", ndim);
        goto fail;
    }
    return 0;
fail:
    index_key_clear(k);
    return -1;
}

/* Appends `n` entries `t` (NULL: None) to the index list. */
static void index_list_add(index_key *k, const pith_tensor *t, int n)
{
    for (int i = 0; i < n; i++)
        k->indices[k->nindices++] = t;
}

/* The int64 index [0] (True) or [] (False) of a bool item. */
static pith_tensor *index_bool_tensor(int value)
{
    int64_t size = value ? 1 : 0;
    return pith_zeros(1, &size, PITH_INT64);
}

/* One view step; returns the new view (the old one is released), or NULL with a Python
 * exception set. Records the item's index list entries. */
static pith_tensor *index_item_apply(pith_module_state *st, pith_tensor *t, index_item *item,
                                     int *dim, int position, index_key *k)
{
    pith_tensor *next = NULL;
    switch (item->kind) {
    case INDEX_INT: {
        int64_t size = pith_size(t, *dim);
        if (item->start < -size || item->start >= size) {
            PyErr_Format(PyExc_IndexError,
                         "index %zd is out of bounds for dimension %d with size %lld",
                         item->start, position, (long long)size);
            pith_release(t);
            return NULL;
        }
        next = pith_select(t, *dim, item->start);
        break;
    }
    case INDEX_SLICE:
        if (item->step <= 0) {
            /* PyTorch's two messages: Python's own for zero, its own for negative. */
            PyErr_SetString(PyExc_ValueError, item->step == 0 ? "slice step cannot be zero"
                                                              : "step must be greater than zero");
            pith_release(t);
            return NULL;
        }
        index_list_add(k, NULL, 1);
        next = pith_slice(t, (*dim)++, item->start, item->stop, item->step);
        break;
    case INDEX_NONE:
        index_list_add(k, NULL, 1);
        next = pith_unsqueeze(t, (*dim)++);
        break;
    case INDEX_BOOL:
        if (!(item->tensor = index_bool_tensor((int)item->start)))
            break;
        index_list_add(k, item->tensor, 1);
        k->advanced = 1;
        next = pith_unsqueeze(t, (*dim)++);
        break;
    case INDEX_TENSOR:
        index_list_add(k, item->tensor, 1);
        k->advanced = 1;
        *dim += index_item_dims(item);
        return t;
    case INDEX_ELLIPSIS:
        return t; /* index_apply moves `dim` past the dims it stands for */
    }
    pith_release(t);
    if (!next)
        error_raise(st);
    return next;
}

/* alias(x) through the dispatcher, so that it records: for a tensor with autograd state,
 * whose views must carry history (pith_alias goes straight to the backend). */
pith_tensor *alias_recorded(pith_tensor *x)
{
    static const pith_op *alias_op; /* built-in ops live for the process */
    if (!alias_op && !(alias_op = pith_op_find("alias")))
        return NULL;
    pith_stack *stack = pith_stack_new();
    pith_tensor *out = NULL;
    if (stack && pith_stack_push_tensor(stack, x) == PITH_OK &&
        pith_call_boxed(alias_op, stack) == PITH_OK)
        out = pith_stack_get_tensor(stack, 0); /* a new reference */
    pith_stack_free(stack);
    return out;
}

/* The view of x that the basic items of `key` make, as a new C reference, with the index
 * list of its advanced items in `k` (to clear with index_key_clear); NULL with a Python
 * exception set on failure. A tensor with autograd state is indexed through the
 * dispatcher all the way, so that the views record and remember their base. */
static pith_tensor *index_apply(pith_module_state *st, pith_tensor *x, PyObject *key,
                                index_key *k)
{
    int ndim = pith_ndim(x);
    if (index_parse(st, key, ndim, k) < 0)
        return NULL;
    pith_tensor *t = pith_autograd_tracked(x) ? alias_recorded(x) : pith_alias(x);
    if (!t) {
        error_raise(st);
        return NULL;
    }
    int dim = 0;
    for (int i = 0; t && i < k->n; i++) {
        t = index_item_apply(st, t, &k->items[i], &dim, i, k);
        if (k->items[i].kind == INDEX_ELLIPSIS) {
            index_list_add(k, NULL, ndim - k->named_dims);
            dim += ndim - k->named_dims;
        }
    }
    while (k->nindices > 0 && !k->indices[k->nindices - 1])
        k->nindices--;
    return t;
}

/* Whether an index key may call for the function layer: anything but the usual items, and
 * for a tuple or a list, any of its items (a few compares each). See Note [Function layer]
 * (function_layer.c). */
static bool key_item_maybe(pith_module_state *st, PyObject *v)
{
    return function_arg_maybe(st, v) && !PySlice_Check(v) && v != Py_Ellipsis;
}

static bool key_maybe(pith_module_state *st, PyObject *key)
{
    if (!PyTuple_CheckExact(key) && !PyList_CheckExact(key))
        return key_item_maybe(st, key);
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(key); i++)
        if (key_item_maybe(st, PySequence_Fast_GET_ITEM(key, i)))
            return true;
    return false;
}

PyObject *tensor_mp_subscript(PyObject *self, PyObject *key)
{
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    PyObject *items[2] = {self, key}, *result;
    if ((function_self_maybe(self) || key_maybe(st, key)) &&
        function_layer_call(st, NULL, "__getitem__", items, 2, NULL, &result))
        return result;
    /* x[i] with an in-range int, the commonest key: select directly. Anything else
     * (out of range, a 0-dim self, an int too big for C) takes the general path, which
     * raises PyTorch's errors. */
    if (PyLong_CheckExact(key) && pith_ndim(tensor_of(self)) > 0) {
        int overflow;
        long long i = PyLong_AsLongLongAndOverflow(key, &overflow);
        int64_t n = pith_size(tensor_of(self), 0);
        if (!overflow && i >= -n && i < n)
            return tensor_wrap(st, pith_select(tensor_of(self), 0, i));
    }
    index_key k;
    pith_tensor *view = index_apply(st, tensor_of(self), key, &k);
    if (view && k.advanced) {
        pith_tensor *result;
        size_t n = (size_t)k.nindices;
        if (pith_numel(view) >= PITH_GIL_RELEASE_NUMEL && !pydispatch_python_reachable(view)) {
            Py_BEGIN_ALLOW_THREADS
            result = pith_index(view, k.indices, n);
            Py_END_ALLOW_THREADS
        } else {
            result = pith_index(view, k.indices, n);
        }
        pith_release(view);
        view = result;
        if (!view)
            error_raise(st);
    }
    index_key_clear(&k);
    return view ? tensor_wrap(st, view) : NULL;
}

/* The value of x[key] = value as a tensor: a Tensor, a Python number (a wrapped number,
 * See Note [Python scalars as wrapped numbers], tensor_number.c) or nested lists. Leading
 * dims of size one are dropped, as PyTorch's slicePrefix1sSize does, so that a [1, 3]
 * value fits a [3] target. */
static pith_tensor *index_value(pith_module_state *st, PyObject *value)
{
    int not_implemented;
    pith_tensor *t = operand_to_tensor(st, value, &not_implemented);
    if (!t && not_implemented)
        t = tensor_from_data(st, value, 0, pith_get_default_dtype());
    while (t && pith_ndim(t) > 0 && pith_size(t, 0) == 1) {
        pith_tensor *inner = pith_select(t, 0, 0);
        pith_release(t);
        if (!(t = inner))
            error_raise(st);
    }
    return t;
}

/* x[key] = source: a copy into the view, or index_put_ on it. */
static pith_status index_assign(pith_tensor *view, const index_key *k, const pith_tensor *source)
{
    if (k->advanced)
        return pith_index_put_(view, k->indices, (size_t)k->nindices, source, false);
    return pith_copy_(view, source);
}

int tensor_mp_ass_subscript(PyObject *self, PyObject *key, PyObject *value)
{
    if (!value) {
        PyErr_SetString(PyExc_TypeError, "'Tensor' object does not support item deletion");
        return -1;
    }
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return -1;
    PyObject *items[3] = {self, key, value}, *result;
    if ((function_self_maybe(self) || key_maybe(st, key) || function_arg_maybe(st, value)) &&
        function_layer_call(st, NULL, "__setitem__", items, 3, NULL, &result)) {
        Py_XDECREF(result);
        return result ? 0 : -1;
    }
    /* x[key] = v with v requiring grad: x must track its views, so that the write gives it
     * history (Note [Views and in-place], autograd/views.c). */
    if (pith_grad_enabled() && tensor_check(st, value) && pith_requires_grad(tensor_of(value)) &&
        !pith_autograd_tracked(tensor_of(self)) &&
        pith_autograd_track(tensor_of(self)) != PITH_OK) {
        error_raise(st);
        return -1;
    }
    index_key k;
    pith_tensor *view = index_apply(st, tensor_of(self), key, &k);
    pith_tensor *source = view ? index_value(st, value) : NULL;
    int rc = -1;
    if (source) {
        pith_status status;
        if (pith_numel(view) >= PITH_GIL_RELEASE_NUMEL && !pydispatch_python_reachable(view)) {
            Py_BEGIN_ALLOW_THREADS
            status = index_assign(view, &k, source);
            Py_END_ALLOW_THREADS
        } else {
            status = index_assign(view, &k, source);
        }
        rc = status == PITH_OK ? 0 : -1;
        if (rc < 0)
            error_raise(st);
    }
    pith_release(source);
    pith_release(view);
    index_key_clear(&k);
    return rc;
}

/* Tensor.T: the dims reversed. PyTorch deprecates it for ndim != 2 but still reverses. */
PyObject *tensor_get_T(PyObject *self, void *closure)
{
    FUNCTION_LAYER_SELF(self, "T.__get__");
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    pith_tensor *t = tensor_of(self);
    int ndim = pith_ndim(t);
    int dims[PITH_MAX_DIMS];
    for (int i = 0; i < ndim; i++)
        dims[i] = ndim - 1 - i;
    return tensor_wrap(st, pith_permute(t, ndim, dims));
}

/* iter(x) of a subclass (or under a function mode): x.dim() and x.unbind(0) as methods,
 * so that the function layer sees them, as PyTorch's Tensor.__iter__ shows them. */
static PyObject *iter_by_methods(PyObject *self)
{
    PyObject *ndim = PyObject_CallMethod(self, "dim", NULL);
    long n = ndim ? PyLong_AsLong(ndim) : -1;
    Py_XDECREF(ndim);
    if (n == -1 && PyErr_Occurred())
        return NULL;
    if (n == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
        return NULL;
    }
    PyObject *rows = PyObject_CallMethod(self, "unbind", "i", 0);
    PyObject *iter = rows ? PyObject_GetIter(rows) : NULL;
    Py_XDECREF(rows);
    return iter;
}

/* iter(x): the views x[0], x[1], ..., made up front as PyTorch's iter(x.unbind(0)) does. */
PyObject *tensor_iter(PyObject *self)
{
    if (function_self_maybe(self))
        return iter_by_methods(self);
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    pith_tensor *t = tensor_of(self);
    if (pith_ndim(t) == 0) {
        PyErr_SetString(PyExc_TypeError, "iteration over a 0-d tensor");
        return NULL;
    }
    size_t n = 0;
    pith_tensor **rows = pith_unbind(t, 0, &n);
    if (!rows)
        return error_raise(st);
    PyObject *tuple = PyTuple_New((Py_ssize_t)n);
    for (size_t i = 0; i < n; i++) {
        PyObject *row = tuple ? tensor_wrap(st, rows[i]) : NULL;
        if (!tuple)
            pith_release(rows[i]);
        else if (!row)
            Py_CLEAR(tuple);
        else
            PyTuple_SET_ITEM(tuple, (Py_ssize_t)i, row);
    }
    pith_tensor_list_free(rows, 0); /* the references now belong to the wrappers */
    if (!tuple)
        return NULL;
    PyObject *iter = PyObject_GetIter(tuple);
    Py_DECREF(tuple);
    return iter;
}
