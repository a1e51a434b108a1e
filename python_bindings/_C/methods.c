/* methods.c — the fast paths of the common Tensor methods and pith.* functions.
 *
 * Note [Method fast paths]
 * The semantics of every op method live in one place: its schema, bound by the generic
 * implementation in pith/_ops.py (keywords, defaults, overloads, out=). That path costs a
 * few microseconds of Python per call, so the methods people call in loops also have an
 * entry here that handles their common call shapes directly: positional arguments and the
 * usual keywords are bound by args_bind (a table lookup, no schema parsing), converted by
 * the small helpers below, and passed to the typed C op, which dispatches as every op
 * does. Any other call shape (out=, dtype=, alpha=, an argument of an unusual type, a
 * wrong number of arguments) returns FALLBACK, and the call goes to the generic
 * implementation that pith/_ops.py registered under the same name with _set_generic;
 * that is also where argument errors are raised, so they read the same on both paths. A
 * fast path must therefore agree with the generic one on every call it accepts;
 * tests/python/test_methods.py calls both and compares.
 *
 * Each entry is one impl_<name>(st, self, args, nargs, kwnames) shared by the method
 * (self is the receiver) and the function (self is the first positional argument). */
#include <string.h>

#include "state.h"

static char fallback_marker;
/* Never dereferenced: the "take the generic path" answer of an impl. */
#define FALLBACK ((PyObject *)&fallback_marker)

typedef PyObject *(*impl_fn)(pith_module_state *st, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames);

/* ---- binding and converting arguments ---- */

/* Puts the positional arguments and the keywords named in `names` into slot[0..n), NULL
 * for absent ones. Returns 0, or 1 (FALLBACK) for too many positionals, an unknown or a
 * repeated keyword: the generic path reports those. */
static int args_bind(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                     const char *const *names, int n, PyObject **slot)
{
    if (nargs > n)
        return 1;
    for (int i = 0; i < n; i++)
        slot[i] = i < nargs ? args[i] : NULL;
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(kwnames, k);
        int j = 0;
        while (j < n && PyUnicode_CompareWithASCIIString(key, names[j]) != 0)
            j++;
        if (j == n || slot[j])
            return 1;
        slot[j] = args[nargs + k];
    }
    return 0;
}

/* A dim argument: a Python int (not bool). 0 with *out set, 1 to fall back, -1 on error. */
static int arg_int(PyObject *obj, int64_t *out)
{
    if (!PyLong_Check(obj) || PyBool_Check(obj))
        return 1;
    int overflow;
    long long v = PyLong_AsLongLongAndOverflow(obj, &overflow);
    if (overflow)
        return 1; /* out of int64: the generic path decides (and names the argument) */
    if (v == -1 && PyErr_Occurred())
        return -1;
    *out = v;
    return 0;
}

static int arg_dim(PyObject *obj, int *out)
{
    int64_t v;
    int rc = arg_int(obj, &v);
    if (rc != 0)
        return rc;
    if (v < INT32_MIN || v > INT32_MAX)
        return 1; /* the generic path reports it */
    *out = (int)v;
    return 0;
}

/* keepdim-style flags: only a real bool takes the fast path. */
static int arg_bool(PyObject *obj, bool fallback_value, bool *out)
{
    if (!obj) {
        *out = fallback_value;
        return 0;
    }
    if (!PyBool_Check(obj))
        return 1;
    *out = obj == Py_True;
    return 0;
}

/* dim=None, an int, or a tuple/list of ints: *ndims = 0 means "every dim". */
static int arg_dims(PyObject *obj, int *dims, int *ndims)
{
    *ndims = 0;
    if (!obj || obj == Py_None)
        return 0;
    if (PyLong_Check(obj)) {
        *ndims = 1;
        return arg_dim(obj, &dims[0]);
    }
    if (!PyTuple_Check(obj) && !PyList_Check(obj))
        return 1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(obj);
    if (n > PITH_MAX_DIMS)
        return 1;
    for (Py_ssize_t i = 0; i < n; i++) {
        int rc = arg_dim(PySequence_Fast_GET_ITEM(obj, i), &dims[i]);
        if (rc != 0)
            return rc;
    }
    *ndims = (int)n;
    return 0;
}

/* A size given as ints in args[0..nargs) or as one tuple/list/pith.Size (view(2, 3) and
 * view((2, 3))). Returns ndim, or -2 to fall back, -1 on error. */
static int arg_sizes(PyObject *const *args, Py_ssize_t nargs, int64_t *sizes)
{
    PyObject *const *items = args;
    Py_ssize_t n = nargs;
    if (nargs == 0)
        return -2; /* view(), reshape(), permute(): the generic path names the argument */
    if (nargs == 1 && (PyTuple_Check(args[0]) || PyList_Check(args[0]))) {
        items = PySequence_Fast_ITEMS(args[0]);
        n = PySequence_Fast_GET_SIZE(args[0]);
    }
    if (n > PITH_MAX_DIMS)
        return -2;
    for (Py_ssize_t i = 0; i < n; i++) {
        int rc = arg_int(items[i], &sizes[i]);
        if (rc != 0)
            return rc > 0 ? -2 : -1;
    }
    return (int)n;
}

/* The same as arg_sizes, for int dims (permute(1, 0)). */
static int arg_dim_list(PyObject *const *args, Py_ssize_t nargs, int *dims)
{
    int64_t v[PITH_MAX_DIMS];
    int n = arg_sizes(args, nargs, v);
    for (int i = 0; i < n; i++) {
        if (v[i] < INT32_MIN || v[i] > INT32_MAX)
            return -2;
        dims[i] = (int)v[i];
    }
    return n;
}

static bool is_large(const pith_tensor *t)
{
    return pith_numel(t) >= PITH_GIL_RELEASE_NUMEL && !pydispatch_python_reachable(t);
}

/* Runs `stmt` without the GIL when `large`. See Note [GIL release] (state.h). */
#define RUN_KERNEL(large, stmt)                                                             \
    do {                                                                                    \
        if (large) {                                                                        \
            Py_BEGIN_ALLOW_THREADS stmt;                                                    \
            Py_END_ALLOW_THREADS                                                            \
        } else {                                                                            \
            stmt;                                                                           \
        }                                                                                   \
    } while (0)

/* ---- elementwise ---- */

typedef pith_tensor *(*binary_fn)(const pith_tensor *, const pith_tensor *);
typedef pith_status (*binary_inplace_fn)(pith_tensor *, const pith_tensor *);
typedef pith_tensor *(*unary_fn)(const pith_tensor *);
typedef pith_status (*unary_inplace_fn)(pith_tensor *);

static PyObject *binary_impl(pith_module_state *st, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames, binary_fn fn)
{
    if (nargs != 1 || kwnames)
        return FALLBACK;
    int not_implemented;
    pith_tensor *other = operand_to_tensor(st, args[0], &not_implemented);
    if (!other)
        return not_implemented ? FALLBACK : NULL;
    pith_tensor *a = tensor_of(self), *out;
    RUN_KERNEL(is_large(a) || is_large(other), out = fn(a, other));
    pith_release(other);
    return tensor_wrap(st, out);
}

static PyObject *binary_inplace_impl(pith_module_state *st, PyObject *self,
                                     PyObject *const *args, Py_ssize_t nargs,
                                     PyObject *kwnames, binary_inplace_fn fn)
{
    if (nargs != 1 || kwnames)
        return FALLBACK;
    int not_implemented;
    pith_tensor *other = operand_to_tensor(st, args[0], &not_implemented);
    if (!other)
        return not_implemented ? FALLBACK : NULL;
    pith_tensor *a = tensor_of(self);
    pith_status status;
    RUN_KERNEL(is_large(a) || is_large(other), status = fn(a, other));
    pith_release(other);
    return status == PITH_OK ? Py_NewRef(self) : error_raise(st);
}

static PyObject *unary_impl(pith_module_state *st, PyObject *self, Py_ssize_t nargs,
                            PyObject *kwnames, unary_fn fn)
{
    if (nargs != 0 || kwnames)
        return FALLBACK;
    pith_tensor *a = tensor_of(self), *out;
    RUN_KERNEL(is_large(a), out = fn(a));
    return tensor_wrap(st, out);
}

static PyObject *unary_inplace_impl(pith_module_state *st, PyObject *self, Py_ssize_t nargs,
                                    PyObject *kwnames, unary_inplace_fn fn)
{
    if (nargs != 0 || kwnames)
        return FALLBACK;
    pith_tensor *a = tensor_of(self);
    pith_status status;
    RUN_KERNEL(is_large(a), status = fn(a));
    return status == PITH_OK ? Py_NewRef(self) : error_raise(st);
}

#define IMPL_BINARY_(name)                                                                  \
    __attribute__((unused)) static PyObject *impl_##name(                                   \
        pith_module_state *st, PyObject *self, PyObject *const *args, Py_ssize_t nargs,     \
        PyObject *kwnames)                                                                  \
    {                                                                                       \
        return binary_impl(st, self, args, nargs, kwnames, pith_##name);                    \
    }                                                                                       \
    __attribute__((unused)) static PyObject *impl_##name##_(                                \
        pith_module_state *st, PyObject *self, PyObject *const *args, Py_ssize_t nargs,     \
        PyObject *kwnames)                                                                  \
    {                                                                                       \
        return binary_inplace_impl(st, self, args, nargs, kwnames, pith_##name##_);         \
    }
#define IMPL_UNARY_(name)                                                                   \
    static PyObject *impl_##name(pith_module_state *st, PyObject *self,                     \
                                 PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                       \
        return unary_impl(st, self, nargs, kwnames, pith_##name);                           \
    }                                                                                       \
    __attribute__((unused)) static PyObject *impl_##name##_(                                \
        pith_module_state *st, PyObject *self, PyObject *const *args, Py_ssize_t nargs,     \
        PyObject *kwnames)                                                                  \
    {                                                                                       \
        return unary_inplace_impl(st, self, nargs, kwnames, pith_##name##_);                \
    }
PITH_FORALL_BINARY_OPS(IMPL_BINARY_)
PITH_FORALL_UNARY_OPS(IMPL_UNARY_)
#undef IMPL_BINARY_
#undef IMPL_UNARY_

/* ---- reductions ---- */

typedef pith_tensor *(*reduce_fn)(const pith_tensor *, int, const int *, bool);

static PyObject *reduce_impl(pith_module_state *st, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames, reduce_fn fn)
{
    static const char *const names[] = {"dim", "keepdim"};
    PyObject *slot[2];
    int dims[PITH_MAX_DIMS], ndims;
    bool keepdim;
    if (args_bind(args, nargs, kwnames, names, 2, slot) ||
        (slot[0] && slot[0] == Py_None && slot[1]))
        return FALLBACK; /* sum(dim=None, keepdim=...) keeps its generic meaning */
    int rc = arg_dims(slot[0], dims, &ndims);
    if (rc == 0)
        rc = arg_bool(slot[1], false, &keepdim);
    if (rc != 0)
        return rc > 0 ? FALLBACK : NULL;
    pith_tensor *a = tensor_of(self), *out;
    RUN_KERNEL(is_large(a), out = fn(a, ndims, dims, keepdim));
    return tensor_wrap(st, out);
}

#define IMPL_REDUCE_(name)                                                                  \
    static PyObject *impl_##name(pith_module_state *st, PyObject *self,                     \
                                 PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                       \
        return reduce_impl(st, self, args, nargs, kwnames, pith_##name);                    \
    }
IMPL_REDUCE_(sum)
IMPL_REDUCE_(mean)
IMPL_REDUCE_(amax)
IMPL_REDUCE_(amin)
#undef IMPL_REDUCE_

/* all and any: an explicit empty dim list reduces nothing (PyTorch), unlike the typed C
 * API's ndims == 0, so that call takes the generic path. */
static bool dims_is_empty_list(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *dim = nargs > 0 ? args[0] : NULL;
    for (Py_ssize_t k = 0; !dim && kwnames && k < PyTuple_GET_SIZE(kwnames); k++)
        if (PyUnicode_CompareWithASCIIString(PyTuple_GET_ITEM(kwnames, k), "dim") == 0)
            dim = args[nargs + k];
    return dim && (PyTuple_Check(dim) || PyList_Check(dim)) && PySequence_Fast_GET_SIZE(dim) == 0;
}

static PyObject *impl_all(pith_module_state *st, PyObject *self, PyObject *const *args,
                          Py_ssize_t nargs, PyObject *kwnames)
{
    if (dims_is_empty_list(args, nargs, kwnames))
        return FALLBACK;
    return reduce_impl(st, self, args, nargs, kwnames, pith_all);
}

static PyObject *impl_any(pith_module_state *st, PyObject *self, PyObject *const *args,
                          Py_ssize_t nargs, PyObject *kwnames)
{
    if (dims_is_empty_list(args, nargs, kwnames))
        return FALLBACK;
    return reduce_impl(st, self, args, nargs, kwnames, pith_any);
}

typedef pith_tensor *(*arg_reduce_fn)(const pith_tensor *, const int *, bool);

static PyObject *arg_reduce_impl(pith_module_state *st, PyObject *self, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames, arg_reduce_fn fn)
{
    static const char *const names[] = {"dim", "keepdim"};
    PyObject *slot[2];
    int dim;
    bool keepdim;
    if (args_bind(args, nargs, kwnames, names, 2, slot))
        return FALLBACK;
    bool has_dim = slot[0] && slot[0] != Py_None;
    int rc = has_dim ? arg_dim(slot[0], &dim) : 0;
    if (rc == 0)
        rc = arg_bool(slot[1], false, &keepdim);
    if (rc != 0)
        return rc > 0 ? FALLBACK : NULL;
    pith_tensor *a = tensor_of(self), *out;
    RUN_KERNEL(is_large(a), out = fn(a, has_dim ? &dim : NULL, keepdim));
    return tensor_wrap(st, out);
}

static PyObject *impl_argmax(pith_module_state *st, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames)
{
    return arg_reduce_impl(st, self, args, nargs, kwnames, pith_argmax);
}

static PyObject *impl_argmin(pith_module_state *st, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames)
{
    return arg_reduce_impl(st, self, args, nargs, kwnames, pith_argmin);
}

/* ---- linear algebra ---- */

static PyObject *matrix_impl(pith_module_state *st, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames, binary_fn fn)
{
    if (nargs != 1 || kwnames || !tensor_check(st, args[0]))
        return FALLBACK; /* matmul takes no Python numbers: the generic path says so */
    pith_tensor *a = tensor_of(self), *b = tensor_of(args[0]), *out;
    RUN_KERNEL(is_large(a) || is_large(b), out = fn(a, b));
    return tensor_wrap(st, out);
}

#define IMPL_MATRIX_(name)                                                                  \
    static PyObject *impl_##name(pith_module_state *st, PyObject *self,                     \
                                 PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                       \
        return matrix_impl(st, self, args, nargs, kwnames, pith_##name);                    \
    }
IMPL_MATRIX_(matmul)
IMPL_MATRIX_(mm)
IMPL_MATRIX_(bmm)
#undef IMPL_MATRIX_

/* linear(input, weight, bias=None): the function of F.linear and nn.Linear. */
static PyObject *impl_linear(pith_module_state *st, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"weight", "bias"};
    PyObject *slot[2];
    if (args_bind(args, nargs, kwnames, names, 2, slot) || !slot[0] ||
        !tensor_check(st, slot[0]) ||
        (slot[1] && slot[1] != Py_None && !tensor_check(st, slot[1])))
        return FALLBACK;
    pith_tensor *x = tensor_of(self), *w = tensor_of(slot[0]), *out;
    pith_tensor *b = slot[1] && slot[1] != Py_None ? tensor_of(slot[1]) : NULL;
    RUN_KERNEL(is_large(x) || is_large(w), out = pith_linear(x, w, b));
    return tensor_wrap(st, out);
}

/* ---- views and shapes ---- */

typedef pith_tensor *(*sizes_fn)(const pith_tensor *, int, const int64_t *);

static PyObject *sizes_impl(pith_module_state *st, PyObject *self, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kwnames, sizes_fn fn)
{
    int64_t sizes[PITH_MAX_DIMS];
    if (kwnames)
        return FALLBACK;
    int ndim = arg_sizes(args, nargs, sizes);
    if (ndim < 0)
        return ndim == -2 ? FALLBACK : NULL;
    pith_tensor *a = tensor_of(self), *out;
    RUN_KERNEL(fn == pith_reshape && is_large(a), out = fn(a, ndim, sizes));
    return tensor_wrap(st, out);
}

static PyObject *impl_view(pith_module_state *st, PyObject *self, PyObject *const *args,
                           Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs == 1 && PyObject_TypeCheck(args[0], st->dtype_type))
        return FALLBACK; /* view(dtype) */
    return sizes_impl(st, self, args, nargs, kwnames, pith_view);
}

static PyObject *impl_reshape(pith_module_state *st, PyObject *self, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames)
{
    return sizes_impl(st, self, args, nargs, kwnames, pith_reshape);
}

static PyObject *impl_expand(pith_module_state *st, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames)
{
    return sizes_impl(st, self, args, nargs, kwnames, pith_expand);
}

static PyObject *impl_permute(pith_module_state *st, PyObject *self, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames)
{
    int dims[PITH_MAX_DIMS];
    if (kwnames)
        return FALLBACK;
    int n = arg_dim_list(args, nargs, dims);
    if (n < 0)
        return n == -2 ? FALLBACK : NULL;
    return tensor_wrap(st, pith_permute(tensor_of(self), n, dims));
}

/* Ops of the form f(self, int a, int b) with defaults; `names` gives the keywords. */
static int two_dims(PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames,
                    const char *const *names, int nrequired, const int *defaults, int *out)
{
    PyObject *slot[2];
    if (args_bind(args, nargs, kwnames, names, 2, slot))
        return 1;
    for (int i = 0; i < 2; i++) {
        if (!slot[i]) {
            if (i < nrequired)
                return 1;
            out[i] = defaults[i];
            continue;
        }
        int rc = arg_dim(slot[i], &out[i]);
        if (rc != 0)
            return rc;
    }
    return 0;
}

static PyObject *impl_transpose(pith_module_state *st, PyObject *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim0", "dim1"};
    int d[2];
    int rc = two_dims(args, nargs, kwnames, names, 2, NULL, d);
    if (rc != 0)
        return rc > 0 ? FALLBACK : NULL;
    return tensor_wrap(st, pith_transpose(tensor_of(self), d[0], d[1]));
}

static PyObject *impl_flatten(pith_module_state *st, PyObject *self, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"start_dim", "end_dim"};
    static const int defaults[] = {0, -1};
    int d[2];
    int rc = two_dims(args, nargs, kwnames, names, 0, defaults, d);
    if (rc != 0)
        return rc > 0 ? FALLBACK : NULL;
    pith_tensor *a = tensor_of(self), *out;
    RUN_KERNEL(is_large(a), out = pith_flatten(a, d[0], d[1]));
    return tensor_wrap(st, out);
}

static PyObject *impl_unsqueeze(pith_module_state *st, PyObject *self, PyObject *const *args,
                                Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim"};
    PyObject *slot[1];
    int dim;
    if (args_bind(args, nargs, kwnames, names, 1, slot) || !slot[0])
        return FALLBACK;
    int rc = arg_dim(slot[0], &dim);
    if (rc != 0)
        return rc > 0 ? FALLBACK : NULL;
    return tensor_wrap(st, pith_unsqueeze(tensor_of(self), dim));
}

static PyObject *impl_squeeze(pith_module_state *st, PyObject *self, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim"};
    PyObject *slot[1];
    int dim;
    if (args_bind(args, nargs, kwnames, names, 1, slot))
        return FALLBACK;
    if (slot[0] == Py_None)
        return FALLBACK; /* PyTorch refuses squeeze(None): the generic path says so */
    if (!slot[0])
        return tensor_wrap(st, pith_squeeze(tensor_of(self), NULL));
    int rc = arg_dim(slot[0], &dim);
    if (rc != 0)
        return rc > 0 ? FALLBACK : NULL;
    return tensor_wrap(st, pith_squeeze(tensor_of(self), &dim));
}

static PyObject *impl_t(pith_module_state *st, PyObject *self, PyObject *const *args,
                        Py_ssize_t nargs, PyObject *kwnames)
{
    if (nargs || kwnames)
        return FALLBACK;
    return tensor_wrap(st, pith_t(tensor_of(self)));
}

static PyObject *plain_impl(pith_module_state *st, PyObject *self, Py_ssize_t nargs,
                            PyObject *kwnames, unary_fn fn)
{
    if (nargs || kwnames)
        return FALLBACK;
    pith_tensor *a = tensor_of(self), *out;
    RUN_KERNEL(is_large(a), out = fn(a));
    return tensor_wrap(st, out);
}

static PyObject *impl_contiguous(pith_module_state *st, PyObject *self, PyObject *const *args,
                                 Py_ssize_t nargs, PyObject *kwnames)
{
    return plain_impl(st, self, nargs, kwnames, pith_contiguous);
}

static PyObject *impl_clone(pith_module_state *st, PyObject *self, PyObject *const *args,
                            Py_ssize_t nargs, PyObject *kwnames)
{
    return plain_impl(st, self, nargs, kwnames, pith_clone);
}

static PyObject *impl_detach(pith_module_state *st, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames)
{
    return plain_impl(st, self, nargs, kwnames, pith_detach);
}

typedef pith_tensor *(*dim_fn)(const pith_tensor *, int);

static PyObject *dim_impl(pith_module_state *st, PyObject *self, PyObject *const *args,
                          Py_ssize_t nargs, PyObject *kwnames, dim_fn fn)
{
    static const char *const names[] = {"dim"};
    PyObject *slot[1];
    int dim;
    if (args_bind(args, nargs, kwnames, names, 1, slot) || !slot[0])
        return FALLBACK;
    int rc = arg_dim(slot[0], &dim);
    if (rc != 0)
        return rc > 0 ? FALLBACK : NULL;
    pith_tensor *a = tensor_of(self), *out;
    RUN_KERNEL(is_large(a), out = fn(a, dim));
    return tensor_wrap(st, out);
}

static PyObject *impl_softmax(pith_module_state *st, PyObject *self, PyObject *const *args,
                              Py_ssize_t nargs, PyObject *kwnames)
{
    return dim_impl(st, self, args, nargs, kwnames, pith_softmax);
}

static PyObject *impl_log_softmax(pith_module_state *st, PyObject *self,
                                  PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    return dim_impl(st, self, args, nargs, kwnames, pith_log_softmax);
}

static PyObject *impl_select(pith_module_state *st, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim", "index"};
    PyObject *slot[2];
    int dim;
    int64_t index;
    if (args_bind(args, nargs, kwnames, names, 2, slot) || !slot[0] || !slot[1])
        return FALLBACK;
    int rc = arg_dim(slot[0], &dim);
    if (rc == 0)
        rc = arg_int(slot[1], &index);
    if (rc != 0)
        return rc > 0 ? FALLBACK : NULL;
    return tensor_wrap(st, pith_select(tensor_of(self), dim, index));
}

static PyObject *impl_narrow(pith_module_state *st, PyObject *self, PyObject *const *args,
                             Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dim", "start", "length"};
    PyObject *slot[3];
    int dim;
    int64_t start, length;
    if (args_bind(args, nargs, kwnames, names, 3, slot) || !slot[0] || !slot[1] || !slot[2])
        return FALLBACK;
    int rc = arg_dim(slot[0], &dim);
    if (rc == 0)
        rc = arg_int(slot[1], &start);
    if (rc == 0)
        rc = arg_int(slot[2], &length);
    if (rc != 0)
        return rc > 0 ? FALLBACK : NULL;
    return tensor_wrap(st, pith_narrow(tensor_of(self), dim, start, length));
}

/* ---- dtype conversions ---- */

/* x.to(dtype) and x.float() & co.: the tensor itself when the dtype already matches, as in
 * PyTorch. */
static PyObject *convert_to(pith_module_state *st, PyObject *self, pith_dtype dtype)
{
    pith_tensor *a = tensor_of(self), *out;
    if (pith_tensor_dtype(a) == dtype)
        return Py_NewRef(self);
    RUN_KERNEL(is_large(a), out = pith_to_dtype(a, dtype));
    return tensor_wrap(st, out);
}

static PyObject *impl_to(pith_module_state *st, PyObject *self, PyObject *const *args,
                         Py_ssize_t nargs, PyObject *kwnames)
{
    static const char *const names[] = {"dtype"};
    PyObject *slot[1];
    if (args_bind(args, nargs, kwnames, names, 1, slot) || !slot[0] ||
        !PyObject_TypeCheck(slot[0], st->dtype_type))
        return FALLBACK;
    return convert_to(st, self, ((pith_dtype_object *)slot[0])->dtype);
}

#define FORALL_CONVERSIONS_(_)                                                              \
    _(float, PITH_FLOAT32) _(double, PITH_FLOAT64) _(half, PITH_FLOAT16)                    \
    _(bfloat16, PITH_BFLOAT16) _(long, PITH_INT64) _(int, PITH_INT32) _(short, PITH_INT16)  \
    _(char, PITH_INT8) _(byte, PITH_UINT8) _(bool, PITH_BOOL)
#define IMPL_CONVERSION_(name, dtype)                                                       \
    static PyObject *impl_##name(pith_module_state *st, PyObject *self,                     \
                                 PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames) \
    {                                                                                       \
        if (nargs || kwnames)                                                               \
            return FALLBACK;                                                                \
        return convert_to(st, self, dtype);                                                 \
    }
FORALL_CONVERSIONS_(IMPL_CONVERSION_)
#undef IMPL_CONVERSION_

/* ---- the generic path ---- */

/* Calls the generic implementation registered for `name`: fn(self, *args, **kwargs). */
static PyObject *call_generic(pith_module_state *st, const char *name, PyObject *self,
                              PyObject *const *args, Py_ssize_t nargs, PyObject *kwnames)
{
    PyObject *fn = st->generic ? PyDict_GetItemString(st->generic, name) : NULL; /* borrowed */
    if (!fn) {
        PyErr_Format(PyExc_RuntimeError,
                     "pith: no generic implementation of %s was registered (is the pith "
                     "package imported?)", name);
        return NULL;
    }
    Py_ssize_t nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    if (!self)
        return PyObject_Vectorcall(fn, args, (size_t)nargs, kwnames);
    PyObject *small[8], **all = small;
    if (1 + nargs + nkw > 8) {
        all = PyMem_Malloc((size_t)(1 + nargs + nkw) * sizeof(PyObject *));
        if (!all)
            return PyErr_NoMemory();
    }
    all[0] = self;
    memcpy(all + 1, args, (size_t)(nargs + nkw) * sizeof(PyObject *));
    PyObject *r = PyObject_Vectorcall(fn, all, (size_t)(1 + nargs), kwnames);
    if (all != small)
        PyMem_Free(all);
    return r;
}

/* The method: self is the receiver; the state comes from the defining class. */
static PyObject *method_call(const char *name, impl_fn impl, PyObject *self,
                             PyTypeObject *cls, PyObject *const *args, size_t nargsf,
                             PyObject *kwnames)
{
    pith_module_state *st = PyType_GetModuleState(cls);
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *r = impl(st, self, args, nargs, kwnames);
    if (r != FALLBACK)
        return r;
    return call_generic(st, name, self, args, nargs, kwnames);
}

/* The function: the first positional argument is the tensor. */
static PyObject *function_call(const char *name, impl_fn impl, PyObject *module,
                               PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    pith_module_state *st = state_of_module(module);
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    if (nargs >= 1 && tensor_check(st, args[0])) {
        PyObject *r = impl(st, args[0], args + 1, nargs - 1, kwnames);
        if (r != FALLBACK)
            return r;
    }
    return call_generic(st, name, NULL, args, nargs, kwnames);
}

/* Every fast entry, by name (impl_<name>). FORALL_FAST_ are methods and pith.* functions;
 * FORALL_FUNCTIONS_ONLY_ are functions only; FORALL_METHODS_ONLY_ are methods only (in-place
 * forms, view, conversions). */
#define FORALL_FAST_(_)                                                                     \
    _(add) _(sub) _(mul) _(div) _(floor_divide) _(remainder) _(pow) _(maximum) _(minimum)   \
    _(eq) _(ne) _(lt) _(le) _(gt) _(ge) _(logical_and) _(logical_or) _(bitwise_and)         \
    _(bitwise_or) _(bitwise_xor)                                                            \
    _(neg) _(abs) _(sign) _(exp) _(log) _(log1p) _(sqrt) _(rsqrt) _(sin) _(cos) _(tanh)     \
    _(sigmoid) _(relu) _(silu) _(logical_not) _(bitwise_not)                                \
    _(sum) _(mean) _(amax) _(amin) _(all) _(any) _(argmax) _(argmin)                        \
    _(matmul) _(mm) _(bmm) _(reshape) _(permute) _(transpose) _(flatten) _(unsqueeze)       \
    _(squeeze) _(t) _(clone) _(detach) _(softmax) _(log_softmax) _(select) _(narrow)
#define FORALL_FUNCTIONS_ONLY_(_) _(linear)
#define FORALL_METHODS_ONLY_(_)                                                             \
    _(add_) _(sub_) _(mul_) _(div_) _(floor_divide_) _(remainder_) _(pow_) _(eq_) _(ne_)    \
    _(lt_) _(le_) _(gt_) _(ge_) _(logical_and_) _(logical_or_) _(bitwise_and_)              \
    _(bitwise_or_) _(bitwise_xor_)                                                          \
    _(neg_) _(abs_) _(sign_) _(exp_) _(log_) _(log1p_) _(sqrt_) _(rsqrt_) _(sin_) _(cos_)   \
    _(tanh_) _(sigmoid_) _(relu_) _(logical_not_) _(bitwise_not_)                           \
    _(view) _(expand) _(contiguous) _(to)                                                   \
    _(float) _(double) _(half) _(bfloat16) _(long) _(int) _(short) _(char) _(byte) _(bool)

#define DEFINE_METHOD_(name)                                                                \
    static PyObject *method_##name(PyObject *self, PyTypeObject *cls, PyObject *const *args, \
                                   size_t nargsf, PyObject *kwnames)                        \
    {                                                                                       \
        return method_call(#name, impl_##name, self, cls, args, nargsf, kwnames);           \
    }
#define DEFINE_FUNCTION_(name)                                                              \
    static PyObject *function_##name(PyObject *module, PyObject *const *args, size_t nargsf, \
                                     PyObject *kwnames)                                     \
    {                                                                                       \
        return function_call(#name, impl_##name, module, args, nargsf, kwnames);            \
    }
FORALL_FAST_(DEFINE_METHOD_)
FORALL_METHODS_ONLY_(DEFINE_METHOD_)
FORALL_FAST_(DEFINE_FUNCTION_)
FORALL_FUNCTIONS_ONLY_(DEFINE_FUNCTION_)
#undef DEFINE_METHOD_
#undef DEFINE_FUNCTION_

/* _set_generic(name, fn): registers the generic implementation behind a fast entry. */
static PyObject *module_set_generic(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    pith_module_state *st = state_of_module(module);
    if (nargs != 2 || !PyUnicode_Check(args[0]) || !PyCallable_Check(args[1])) {
        PyErr_SetString(PyExc_TypeError, "_set_generic(name: str, fn: callable)");
        return NULL;
    }
    if (!st->generic && !(st->generic = PyDict_New()))
        return NULL;
    if (PyDict_SetItem(st->generic, args[0], args[1]) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *module_fast_names(PyObject *module, PyObject *unused)
{
#define NAME_(name) #name,
    static const char *const methods[] = {FORALL_FAST_(NAME_) FORALL_METHODS_ONLY_(NAME_)};
    static const char *const functions[] = {FORALL_FAST_(NAME_) FORALL_FUNCTIONS_ONLY_(NAME_)};
#undef NAME_
    PyObject *m = PyList_New(0), *f = PyList_New(0);
    for (size_t i = 0; m && f && i < sizeof methods / sizeof *methods; i++) {
        PyObject *s = PyUnicode_FromString(methods[i]);
        if (!s || PyList_Append(m, s) < 0)
            Py_CLEAR(m);
        Py_XDECREF(s);
    }
    for (size_t i = 0; m && f && i < sizeof functions / sizeof *functions; i++) {
        PyObject *s = PyUnicode_FromString(functions[i]);
        if (!s || PyList_Append(f, s) < 0)
            Py_CLEAR(f);
        Py_XDECREF(s);
    }
    if (!m || !f) {
        Py_XDECREF(m);
        Py_XDECREF(f);
        return NULL;
    }
    return Py_BuildValue("(NN)", m, f);
}

#define METHOD_ENTRY_(name)                                                                 \
    {#name, (PyCFunction)(void (*)(void))method_##name,                                     \
     METH_METHOD | METH_FASTCALL | METH_KEYWORDS, NULL},
#define FUNCTION_ENTRY_(name)                                                               \
    {#name, (PyCFunction)(void (*)(void))function_##name, METH_FASTCALL | METH_KEYWORDS, NULL},

PyMethodDef methods_tensor_methods[] = {
    FORALL_FAST_(METHOD_ENTRY_) FORALL_METHODS_ONLY_(METHOD_ENTRY_)
    {NULL},
};

PyMethodDef methods_module_methods[] = {
    FORALL_FAST_(FUNCTION_ENTRY_) FORALL_FUNCTIONS_ONLY_(FUNCTION_ENTRY_)
    {"_set_generic", (PyCFunction)(void (*)(void))module_set_generic, METH_FASTCALL,
     "_set_generic(name, fn): the generic implementation behind a fast method."},
    {"_fast_names", module_fast_names, METH_NOARGS,
     "(methods, functions) that have fast paths in C."},
    {NULL},
};
