/* indexing.c — basic indexing of pith.Tensor: x[key] and x[key] = value for int, slice,
 * None, Ellipsis and tuples of them, plus Tensor.T and iteration. Every result is a view
 * made by the C library's view ops. Advanced indexing (bool masks, index tensors or lists)
 * is not here yet: it raises NotImplementedError. */
#include "state.h"

/* Note [Basic indexing is a chain of views]
 * A key is first parsed completely (index_parse): every item is classified, so that an
 * unsupported or invalid item raises before any view is made, and the number of dims the
 * key names (ints and slices; None names none) is known before the Ellipsis is expanded to
 * the dims it stands for. The items are then applied left to right to an alias of the
 * tensor (index_view), as PyTorch's applySlicing does, tracking `dim`, the position in the
 * result so far: an int selects at `dim` and removes it, a slice narrows `dim` and moves
 * past it, None inserts a dim of size one at `dim` and moves past it, and the Ellipsis
 * skips the dims it stands for. Errors follow PyTorch's order and wording: "too many
 * indices" before any step or bounds error, and an out-of-range int names the item's
 * position in the key as its "dimension" (x[None, 5] on a 3 x 4 tensor: "index 5 is out
 * of bounds for dimension 1 with size 3"). Unlike PyTorch, which expands every Ellipsis of
 * a key and can then index past the last dim, a second Ellipsis is an IndexError, as in
 * NumPy.
 * Each step is a view of the previous one, so the result shares storage (and the version
 * counter) with the tensor, and `x[key] = value` is a copy into that view. Even an empty
 * key gives a new view, never the tensor itself: in PyTorch `x[...] is x` is False. */

typedef enum { INDEX_INT, INDEX_SLICE, INDEX_NONE, INDEX_ELLIPSIS } index_kind;

typedef struct {
    index_kind kind;
    Py_ssize_t start; /* INDEX_INT: the index */
    Py_ssize_t stop;
    Py_ssize_t step;
} index_item;

/* A key longer than this names more dims than any tensor has, or makes too many. */
#define INDEX_MAX_ITEMS (2 * PITH_MAX_DIMS + 1)

typedef struct {
    index_item items[INDEX_MAX_ITEMS];
    int n;
    int named_dims; /* ints and slices */
} index_key;

static PyObject *index_advanced_unsupported(const char *what)
{
    PyErr_Format(PyExc_NotImplementedError,
                 "pith: advanced indexing (%s) is not supported yet", what);
    return NULL;
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

static int index_item_parse(pith_module_state *st, PyObject *obj, index_item *item)
{
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
     * tensors in PyTorch, so they are checked before the int case. */
    if (tensor_check(st, obj) || PyBool_Check(obj)) {
        index_advanced_unsupported(PyBool_Check(obj) ? "bool index" : "tensor or list index");
        return -1;
    }
    if (!PyUnicode_Check(obj) && !PyBytes_Check(obj) && PySequence_Check(obj)) {
        index_advanced_unsupported("tensor or list index");
        return -1;
    }
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

/* See Note [Basic indexing is a chain of views]. */
static int index_parse(pith_module_state *st, PyObject *key, int ndim, index_key *k)
{
    int is_tuple = PyTuple_Check(key);
    Py_ssize_t n = is_tuple ? PyTuple_GET_SIZE(key) : 1;
    int has_ellipsis = 0;
    k->n = 0;
    k->named_dims = 0;
    if (n > INDEX_MAX_ITEMS) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", ndim);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        index_item *item = &k->items[k->n++];
        if (index_item_parse(st, is_tuple ? PyTuple_GET_ITEM(key, i) : key, item) < 0)
            return -1;
        if (item->kind == INDEX_INT || item->kind == INDEX_SLICE)
            k->named_dims++;
        if (item->kind == INDEX_ELLIPSIS) {
            if (has_ellipsis) {
                PyErr_SetString(PyExc_IndexError,
                                "an index can only have a single ellipsis ('...')");
                return -1;
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
        return -1;
    }
    if (ndim == 0 && bare_int) {
        PyErr_SetString(PyExc_IndexError,
                        "invalid index of a 0-dim tensor. Use `tensor.item()` to convert a "
                        "0-dim tensor to a number");
        return -1;
    }
    /* A lone slice goes straight to the slice in PyTorch, so on a 0-dim tensor its step
     * is checked first and the error is slice()'s own. */
    int bare_slice = !is_tuple && k->items[0].kind == INDEX_SLICE;
    if (k->named_dims > ndim && !bare_slice) {
        PyErr_Format(PyExc_IndexError, "too many indices for tensor of dimension %d", ndim);
        return -1;
    }
    return 0;
}

/* One view step; returns the new view (the old one is released), or NULL with a Python
 * exception set. */
static pith_tensor *index_item_apply(pith_module_state *st, pith_tensor *t,
                                     const index_item *item, int *dim, int position)
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
        next = pith_slice(t, (*dim)++, item->start, item->stop, item->step);
        break;
    case INDEX_NONE:
        next = pith_unsqueeze(t, (*dim)++);
        break;
    case INDEX_ELLIPSIS:
        return t; /* index_view moves `dim` past the dims it stands for */
    }
    pith_release(t);
    if (!next)
        error_raise(st);
    return next;
}

/* The view x[key] as a new C reference, or NULL with a Python exception set. */
static pith_tensor *index_view(pith_module_state *st, pith_tensor *x, PyObject *key)
{
    int ndim = pith_ndim(x);
    index_key k;
    if (index_parse(st, key, ndim, &k) < 0)
        return NULL;
    pith_tensor *t = pith_alias(x);
    if (!t) {
        error_raise(st);
        return NULL;
    }
    int dim = 0;
    for (int i = 0; t && i < k.n; i++) {
        t = index_item_apply(st, t, &k.items[i], &dim, i);
        if (k.items[i].kind == INDEX_ELLIPSIS)
            dim += ndim - k.named_dims;
    }
    return t;
}

PyObject *tensor_mp_subscript(PyObject *self, PyObject *key)
{
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    pith_tensor *view = index_view(st, tensor_of(self), key);
    return view ? tensor_wrap(st, view) : NULL;
}

/* The value of x[key] = value as a tensor: a Tensor, a Python number (a wrapped number,
 * See Note [Python scalars as wrapped numbers], tensor_number.c) or nested lists. */
static pith_tensor *index_value(pith_module_state *st, PyObject *value)
{
    int not_implemented;
    pith_tensor *t = operand_to_tensor(st, value, &not_implemented);
    if (t || !not_implemented)
        return t;
    return tensor_from_data(st, value, 0, PITH_FLOAT32);
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
    pith_tensor *view = index_view(st, tensor_of(self), key);
    if (!view)
        return -1;
    pith_tensor *source = index_value(st, value);
    if (!source) {
        pith_release(view);
        return -1;
    }
    pith_status status;
    if (pith_numel(view) >= PITH_GIL_RELEASE_NUMEL) {
        Py_BEGIN_ALLOW_THREADS
        status = pith_copy_(view, source);
        Py_END_ALLOW_THREADS
    } else {
        status = pith_copy_(view, source);
    }
    pith_release(source);
    pith_release(view);
    if (status != PITH_OK) {
        error_raise(st);
        return -1;
    }
    return 0;
}

/* Tensor.T: the dims reversed. PyTorch deprecates it for ndim != 2 but still reverses. */
PyObject *tensor_get_T(PyObject *self, void *closure)
{
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

/* iter(x): the views x[0], x[1], ..., made up front as PyTorch's iter(x.unbind(0)) does. */
PyObject *tensor_iter(PyObject *self)
{
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
