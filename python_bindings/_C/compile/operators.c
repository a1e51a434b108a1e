/* operators.c — the operators of pith.compile's translator: Python's binary and comparison
 * operators, truth, iteration and subscripts, evaluated on plain values or recorded into
 * the graph on stand-in tensors (basic indexing as a chain of views). Unary operators are
 * eval.c's handlers. */
#include <string.h>

#include <opcode.h>

#include "translate.h"

/* Truth of a value without running user code. 1, 0, or -1 with the failure. */
int truth(tx *x, PyObject *v)
{
    if (is_tensor(x, v))
        return fail(x, true, "bool() of a tensor (data-dependent control flow)");
    if (is_scalar(v))
        return PyObject_IsTrue(v);
    if (PyTuple_Check(v) || PyList_CheckExact(v)) {
        if (list_read_all(x, v) < 0)
            return -1;
        return PyTuple_Check(v) ? PyTuple_GET_SIZE(v) != 0 : PyList_GET_SIZE(v) != 0;
    }
    if (PyDict_Check(v)) {
        PyObject *what = PyUnicode_FromString("a dict's truth");
        if (!what || dict_read_all(x, v, what) < 0) {
            Py_XDECREF(what);
            return -1;
        }
        Py_DECREF(what);
        return PyDict_GET_SIZE(v) != 0;
    }
    if (is_module(x, v))
        return 1; /* Module defines neither __bool__ nor __len__ */
    if (PyFunction_Check(v) || PyMethod_Check(v) || PyType_Check(v) || PyModule_Check(v) ||
        Py_IS_TYPE(v, x->st->dtype_type))
        return 1;
    return fail(x, true, "the truth of a %s", Py_TYPE(v)->tp_name);
}

/* A snapshot of what iterating `v` gives, as a tuple (new reference). */
PyObject *iterate(tx *x, PyObject *v)
{
    if (PyTuple_Check(v))
        return PySequence_Tuple(v);
    if (PyList_CheckExact(v)) {
        if (list_read_all(x, v) < 0)
            return NULL;
        return PySequence_Tuple(v);
    }
    if (PyRange_Check(v))
        return PySequence_Tuple(v);
    if (PyDict_Check(v)) {
        PyObject *what = PyUnicode_FromString("an iterated dict");
        if (!what || dict_read_all(x, v, what) < 0) {
            Py_XDECREF(what);
            return NULL;
        }
        Py_DECREF(what);
        return PySequence_Tuple(v);
    }
    if (is_module(x, v)) {
        /* ModuleList, Sequential: their __iter__, inlined */
        PyObject *it = type_lookup(x, Py_TYPE(v), "__iter__");
        PyObject *what = PyUnicode_FromString("an iterated module");
        int rc = what ? type_guard(x, v, what) : -1;
        Py_XDECREF(what);
        if (rc < 0)
            return NULL;
        if (!it || !PyFunction_Check(it))
            return fail(x, true, "iteration over a %s", Py_TYPE(v)->tp_name), NULL;
        PyObject *r = call_value(x, it, &v, 1, NULL);
        if (!r)
            return NULL;
        PyObject *t = iterate(x, r);
        Py_DECREF(r);
        return t;
    }
    if (is_tensor(x, v))
        return fail(x, true, "iteration over a tensor"), NULL;
    return fail(x, true, "iteration over a %s", Py_TYPE(v)->tp_name), NULL;
}

/* Binary operators on tensors go to the op table's functions of the same names as the
 * number slots (the op file's number_slot fields), with Python numbers as wrapped
 * numbers, as tensor_number.c does: the same operator, so the same bits. */
static const char *binary_function(int op, bool *inplace)
{
    *inplace = op >= NB_INPLACE_ADD;
    switch (*inplace ? op - NB_INPLACE_ADD : op) {
#define PITH_NUMBER_SLOT_TRANSLATOR_CASES
#include "../generated/number_slots.inc"
#undef PITH_NUMBER_SLOT_TRANSLATOR_CASES
    /* `@` and `**`, whose slots tensor_number.c writes by hand */
    case NB_MATRIX_MULTIPLY: return "matmul";
    case NB_POWER: return "pow";
    default: return NULL;
    }
}

static PyObject *as_operand(tx *x, PyObject *v)
{
    if (is_tensor(x, v))
        return Py_NewRef(v);
    int ni;
    pith_tensor *t = operand_to_tensor(x->st, v, &ni);
    if (!t) {
        if (ni)
            return fail(x, true, "an operand of type %s", Py_TYPE(v)->tp_name), NULL;
        return fail_exception(x, "a Python number"), NULL;
    }
    return tensor_wrap(x->st, t);
}

PyObject *pith_function(tx *x, const char *name)
{
    PyObject *pith = PyImport_ImportModule("pith._C");
    if (!pith)
        return NULL;
    PyObject *fn = PyObject_GetAttrString(pith, name);
    Py_DECREF(pith);
    return fn;
}

/* pith.<name>(a, b), Python numbers as wrapped numbers, recorded. */
static PyObject *tensor_operator(tx *x, const char *name, PyObject *a, PyObject *b)
{
    PyObject *fn = pith_function(x, name);
    PyObject *ta = fn ? as_operand(x, a) : NULL;
    PyObject *tb = ta ? as_operand(x, b) : NULL;
    PyObject *r = NULL;
    if (tb) {
        PyObject *args[2] = {ta, tb};
        r = call_value(x, fn, args, 2, NULL);
    }
    Py_XDECREF(fn);
    Py_XDECREF(ta);
    Py_XDECREF(tb);
    return r;
}

static PyObject *tensor_binary(tx *x, int op, PyObject *a, PyObject *b)
{
    bool inplace;
    const char *name = binary_function(op, &inplace);
    if (!name)
        return fail(x, true, "the operator %d on tensors", op), NULL;
    if (op == NB_MATRIX_MULTIPLY && !(is_tensor(x, a) && is_tensor(x, b)))
        return fail(x, true, "@ with a Python number"), NULL;
    if (inplace && is_tensor(x, a)) {
        char method[32];
        snprintf(method, sizeof method, "%s_", name);
        PyObject *mname = PyUnicode_InternFromString(method);
        PyObject *m = mname ? tensor_getattr(x, a, mname) : NULL;
        Py_XDECREF(mname);
        if (!m)
            return NULL;
        PyObject *r = call_value(x, m, &b, 1, NULL);
        Py_DECREF(m);
        return r;
    }
    return tensor_operator(x, name, a, b);
}

PyObject *binary_op(tx *x, int op, PyObject *a, PyObject *b)
{
    if (is_tensor(x, a) || is_tensor(x, b))
        return tensor_binary(x, op, a, b);
    if (!is_plain(x, a, 0) || !is_plain(x, b, 0))
        return fail(x, true, "an operator on %s and %s", Py_TYPE(a)->tp_name,
                    Py_TYPE(b)->tp_name),
               NULL;
    PyObject *r;
    switch (op >= NB_INPLACE_ADD ? op - NB_INPLACE_ADD : op) {
    case NB_ADD: r = PyNumber_Add(a, b); break;
    case NB_SUBTRACT: r = PyNumber_Subtract(a, b); break;
    case NB_MULTIPLY: r = PyNumber_Multiply(a, b); break;
    case NB_TRUE_DIVIDE: r = PyNumber_TrueDivide(a, b); break;
    case NB_FLOOR_DIVIDE: r = PyNumber_FloorDivide(a, b); break;
    case NB_REMAINDER: r = PyNumber_Remainder(a, b); break;
    case NB_POWER: r = PyNumber_Power(a, b, Py_None); break;
    case NB_AND: r = PyNumber_And(a, b); break;
    case NB_OR: r = PyNumber_Or(a, b); break;
    case NB_XOR: r = PyNumber_Xor(a, b); break;
    case NB_LSHIFT: r = PyNumber_Lshift(a, b); break;
    case NB_RSHIFT: r = PyNumber_Rshift(a, b); break;
    default: return fail(x, true, "the operator %d", op), NULL;
    }
    if (!r)
        return fail_exception(x, "an operator"), NULL;
    if (PyList_CheckExact(r) || PyDict_CheckExact(r))
        return make_fresh(x, r); /* [None] * 3: a new list, the frame's own */
    return r;
}

PyObject *compare_op(tx *x, int op, PyObject *a, PyObject *b)
{
    static const char *const names[] = {"lt", "le", "eq", "ne", "gt", "ge"};
    if (op < 0 || op > 5)
        return fail(x, true, "the comparison %d", op), NULL;
    if (is_tensor(x, a) || is_tensor(x, b))
        return tensor_operator(x, names[op], a, b);
    if (!is_plain(x, a, 0) || !is_plain(x, b, 0))
        return fail(x, true, "a comparison of %s and %s", Py_TYPE(a)->tp_name,
                    Py_TYPE(b)->tp_name),
               NULL;
    PyObject *r = PyObject_RichCompare(a, b, op);
    if (!r)
        return fail_exception(x, "a comparison"), NULL;
    return r;
}

/* ---- subscripts ---- */

static PyObject *record_view(tx *x, const char *name, PyObject *t, Py_ssize_t dim,
                             const Py_ssize_t *ints, int nints)
{
    PyObject *args[5] = {t, NULL, NULL, NULL, NULL};
    int n = 1;
    if (strcmp(name, "alias") != 0) {
        args[n++] = PyLong_FromSsize_t(dim);
        for (int i = 0; i < nints; i++)
            args[n++] = PyLong_FromSsize_t(ints[i]);
    }
    PyObject *r = NULL;
    bool ok = true;
    for (int i = 1; i < n; i++)
        ok = ok && args[i];
    if (ok)
        r = record_op(x, name, args, n);
    for (int i = 1; i < n; i++)
        Py_XDECREF(args[i]);
    return r;
}

/* t[key] for a stand-in `t` and a key of ints, slices, None and Ellipsis: the chain of
 * views that indexing.c makes (Note [Basic indexing is a chain of views]), recorded
 * op by op: select.int, slice.Tensor and unsqueeze over an alias, or select.int alone
 * for a lone int in range, as its fast path does. Errors (an int out of range, too many
 * indices, a step <= 0) and advanced indexing run eagerly. */
static PyObject *tensor_subscript(tx *x, PyObject *t, PyObject *key)
{
    int64_t sizes[PITH_MAX_DIMS];
    int ndim = pith_sizes(tensor_of(t), sizes), orig_ndim = ndim;
    bool is_tuple = PyTuple_CheckExact(key);
    Py_ssize_t n = is_tuple ? PyTuple_GET_SIZE(key) : 1;
    int named = 0;
    bool ellipsis = false;
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = is_tuple ? PyTuple_GET_ITEM(key, i) : key;
        if (PyLong_CheckExact(item) || PySlice_Check(item))
            named++;
        else if (item == Py_Ellipsis) {
            if (ellipsis)
                return fail(x, false, "an index with two ellipses"), NULL;
            ellipsis = true;
        } else if (item != Py_None)
            return fail(x, true, "indexing a tensor with a %s (advanced indexing)",
                        Py_TYPE(item)->tp_name), NULL;
    }
    if (!is_tuple && PyLong_CheckExact(key) && ndim > 0) {
        Py_ssize_t i = PyLong_AsSsize_t(key);
        if (i == -1 && PyErr_Occurred())
            return fail_exception(x, "an index"), NULL;
        if (i >= -sizes[0] && i < sizes[0])
            return record_view(x, "select.int", t, 0, &i, 1);
    }
    if (named > ndim || (ndim == 0 && !is_tuple && PyLong_CheckExact(key)))
        return fail(x, false, "an index the tensor cannot take"), NULL;
    PyObject *cur = record_view(x, "alias", t, 0, NULL, 0);
    Py_ssize_t dim = 0;
    for (Py_ssize_t i = 0; cur && i < n; i++) {
        PyObject *item = is_tuple ? PyTuple_GET_ITEM(key, i) : key;
        PyObject *next = NULL;
        if (PyLong_CheckExact(item)) {
            Py_ssize_t v = PyLong_AsSsize_t(item);
            if (v == -1 && PyErr_Occurred()) {
                fail_exception(x, "an index");
            } else if (v < -sizes[dim] || v >= sizes[dim]) {
                fail(x, false, "index %zd is out of range", v);
            } else {
                next = record_view(x, "select.int", cur, dim, &v, 1);
                /* a select removes the dim: the next item indexes the one after it */
                for (int d = (int)dim; next && d + 1 < ndim; d++)
                    sizes[d] = sizes[d + 1];
                ndim--;
            }
        } else if (PySlice_Check(item)) {
            Py_ssize_t bounds[3]; /* start, stop, step, as indexing.c reads them */
            PyObject *step = ((PySliceObject *)item)->step;
            bounds[2] = step == Py_None ? 1 : PyNumber_AsSsize_t(step, NULL);
            if (bounds[2] == -1 && PyErr_Occurred())
                fail_exception(x, "a slice");
            else if (bounds[2] <= 0)
                fail(x, false, "a slice step <= 0");
            else if (PySlice_Unpack(item, &bounds[0], &bounds[1], &bounds[2]) < 0)
                fail_exception(x, "a slice");
            else
                next = record_view(x, "slice.Tensor", cur, dim++, bounds, 3);
        } else if (item == Py_None) {
            next = record_view(x, "unsqueeze", cur, dim, NULL, 0);
            for (int d = ndim; next && d > (int)dim; d--)
                sizes[d] = sizes[d - 1];
            sizes[dim++] = 1;
            ndim++;
        } else { /* Ellipsis: the dims that no int or slice names, as indexing.c */
            dim += orig_ndim - named;
            next = Py_NewRef(cur);
        }
        Py_DECREF(cur);
        cur = next;
    }
    return cur;
}

PyObject *subscript(tx *x, PyObject *c, PyObject *k)
{
    if (is_tensor(x, c))
        return tensor_subscript(x, c, k);
    if ((PyTuple_Check(c) || PyList_CheckExact(c)) && is_plain(x, k, 0)) {
        if (list_read_all(x, c) < 0)
            return NULL;
        PyObject *r = PyObject_GetItem(c, k);
        if (!r)
            return fail_exception(x, "a subscript"), NULL;
        if (PyList_CheckExact(r) || PyTuple_CheckExact(r))
            return make_fresh(x, r);
        return r;
    }
    if (PyDict_CheckExact(c) && is_scalar(k)) {
        if (!is_fresh(x, c)) {
            PyObject *what = PyUnicode_FromString("a dict item");
            if (!what)
                return NULL;
            int err;
            PyObject *v = dict_read(x, c, k, what, &err);
            PyObject *r = v ? outside_value(x, v, what)
                          : err == 0 ? (fail(x, false, "a missing dict key"), NULL) : NULL;
            Py_DECREF(what);
            return r;
        }
        PyObject *r = PyObject_GetItem(c, k);
        if (!r)
            return fail_exception(x, "a subscript"), NULL;
        return r;
    }
    return fail(x, true, "subscript of a %s", Py_TYPE(c)->tp_name), NULL;
}

