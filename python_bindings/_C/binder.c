/* binder.c — binds a Python call to an operator from its parsed schema, and calls it.
 *
 * Note [One binder]
 * Every Python call of an operator binds here: Tensor methods, pith.* functions,
 * pith.ops.<ns>.<name>.<overload>, ops defined with pith.library or pith_op_define, and
 * what __pith_dispatch__ handlers call back. The schema is parsed once, in C (dispatch/
 * schema.c); an overload object (op_objects.c) keeps what binding needs from it: each
 * argument's interned name, type, flags and default. A call
 *   1. matches: puts each positional and keyword argument in its parameter's slot and
 *      checks the Python type of every slot against the parameter (bind_match). Nothing
 *      is converted and nothing can fail but the match, so overload resolution tries the
 *      overloads of a function in order (See Note [Overload order], op_objects.c) and
 *      takes the first that matches, as PyTorch's PythonArgParser does;
 *   2. pushes the slots of the overload that matched onto a boxed stack, converting each
 *      by its parameter's type (an enum, never a string), with the schema's defaults for
 *      the gaps (bind_push);
 *   3. calls the operator through the dispatcher (pith_call_boxed), without the GIL when
 *      a tensor is large (See Note [GIL release], state.h), and converts the results.
 * When no overload matches, the error is PyTorch's TypeError naming the function and the
 * argument, or listing the signatures when there are several (bind_raise, in
 * binder_errors.c). Stacks are reused (a small pool in the module state), so a call
 * allocates nothing of its own but the result's wrapper. */
#include <string.h>

#include "binder_internal.h"

/* ---- what a Python value is ---- */

static bool is_number(PyObject *v)
{
    return PyLong_Check(v) || PyFloat_Check(v); /* bool is an int */
}

/* An int argument: an int that is not a bool, an object with __index__ (NumPy's
 * integers), or a 0-dim integer tensor (PyTorch's rules). */
static bool is_int_like(pith_module_state *st, PyObject *v)
{
    if (PyLong_Check(v))
        return !PyBool_Check(v);
    if (tensor_check(st, v)) {
        pith_tensor *t = tensor_of(v);
        return pith_ndim(t) == 0 && pith_dtype_is_integral(pith_tensor_dtype(t), false);
    }
    return !PyFloat_Check(v) && Py_TYPE(v)->tp_as_number && Py_TYPE(v)->tp_as_number->nb_index;
}

static bool is_sequence(PyObject *v)
{
    return PyList_Check(v) || PyTuple_Check(v);
}

/* An int[] argument: a list or tuple of ints; for int[N] also one int, which stands for N
 * copies of it (PyTorch's `int[1]? dim`: sum(x, 1) is sum(x, [1])). A plain int[] takes one
 * int only as varargs (bind_match). */
static bool is_int_list(pith_module_state *st, PyObject *v, int list_size)
{
    if (list_size > 0 && is_int_like(st, v))
        return true;
    if (!is_sequence(v))
        return false;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); i++)
        if (!is_int_like(st, PySequence_Fast_GET_ITEM(v, i)))
            return false;
    return true;
}

/* A float[] argument: a list or tuple of numbers, or (for float[N]) one number. */
static bool is_float_list(pith_module_state *st, PyObject *v, int list_size)
{
    (void)st;
    if (list_size > 0 && is_number(v) && !PyBool_Check(v))
        return true;
    if (!is_sequence(v))
        return false;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(v, i);
        if (!is_number(item) || PyBool_Check(item))
            return false;
    }
    return true;
}

/* A tensor argument: a pith.Tensor, or an object that overrides the function layer (a
 * tensor-like). Anything but a plain pith.Tensor sets *maybe: the call may be for the
 * function layer (See Note [Function layer], function_layer.c), which the binder learns
 * here at the cost of the type compare it makes anyway. */
static bool is_tensor_argument(pith_module_state *st, PyObject *v, bool *maybe)
{
    if (Py_IS_TYPE(v, st->tensor_type))
        return true;
    bool ok = tensor_check(st, v) || function_tensor_like(st, v);
    *maybe = *maybe || ok;
    return ok;
}

static bool is_tensor_list(pith_module_state *st, PyObject *v, bool allow_none, bool *maybe)
{
    if (!is_sequence(v))
        return false;
    for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(v); i++) {
        PyObject *item = PySequence_Fast_GET_ITEM(v, i);
        if (!(allow_none && item == Py_None) && !is_tensor_argument(st, item, maybe))
            return false;
    }
    return true;
}

static bool is_zero_dim_tensor(pith_module_state *st, PyObject *v)
{
    return tensor_check(st, v) && pith_ndim(tensor_of(v)) == 0;
}

static bool is_numpy_scalar(PyObject *v)
{
    pith_dtype dtype;
    int np = numpy_scalar_dtype(v, &dtype);
    if (np < 0)
        PyErr_Clear(); /* an unsupported NumPy dtype: not a match; the push would say why */
    return np > 0;
}

/* A Scalar: a Python number, a NumPy scalar, or a 0-dim tensor. */
static bool is_scalar(pith_module_state *st, PyObject *v)
{
    return is_number(v) || is_zero_dim_tensor(st, v) || is_numpy_scalar(v);
}

static bool is_dtype(pith_module_state *st, PyObject *v)
{
    return PyObject_TypeCheck(v, st->dtype_type) || v == (PyObject *)&PyFloat_Type ||
           v == (PyObject *)&PyLong_Type || v == (PyObject *)&PyBool_Type;
}

/* Whether `v` fits parameter `p` (See Note [One binder], step 1); `number_ok` says whether
 * a Python number may stand for a Tensor here; *maybe as is_tensor_argument's. */
static bool param_accepts(pith_module_state *st, const bind_param *p, PyObject *v,
                          bool number_ok, bool *maybe)
{
    switch (p->type) {
    case PITH_TYPE_OPT_TENSOR:
        if (v == Py_None)
            return true;
        /* fall through */
    case PITH_TYPE_TENSOR:
        /* a NumPy scalar is a number here too, as PyTorch's THPUtils_checkScalar */
        if (Py_IS_TYPE(v, st->tensor_type) || (number_ok && is_number(v)))
            return true;
        return is_tensor_argument(st, v, maybe) || (number_ok && is_numpy_scalar(v));
    case PITH_TYPE_TENSOR_LIST:
        return is_tensor_list(st, v, false, maybe);
    case PITH_TYPE_LIST_OPT_TENSOR:
        return is_tensor_list(st, v, true, maybe);
    case PITH_TYPE_OPT_INT:
        if (v == Py_None)
            return true;
        /* fall through */
    case PITH_TYPE_INT:
        return is_int_like(st, v);
    case PITH_TYPE_OPT_INT_LIST:
        if (v == Py_None)
            return true;
        /* fall through */
    case PITH_TYPE_INT_LIST:
        return is_int_list(st, v, p->list_size);
    case PITH_TYPE_OPT_FLOAT:
        if (v == Py_None)
            return true;
        /* fall through */
    case PITH_TYPE_FLOAT:
        return is_number(v) || is_zero_dim_tensor(st, v) || is_scalar(st, v);
    case PITH_TYPE_BOOL:
        return PyBool_Check(v);
    case PITH_TYPE_OPT_SCALAR:
        if (v == Py_None)
            return true;
        /* fall through */
    case PITH_TYPE_SCALAR:
        return is_scalar(st, v);
    case PITH_TYPE_OPT_DTYPE:
        if (v == Py_None)
            return true;
        /* fall through */
    case PITH_TYPE_DTYPE:
        return is_dtype(st, v);
    case PITH_TYPE_OPT_DEVICE:
        return v == Py_None || device_like(st, v);
    case PITH_TYPE_STR:
        return PyUnicode_Check(v);
    case PITH_TYPE_OPT_STR:
        return v == Py_None || PyUnicode_Check(v);
    case PITH_TYPE_OPT_BOOL:
        return v == Py_None || PyBool_Check(v);
    case PITH_TYPE_OPT_FLOAT_LIST:
        if (v == Py_None)
            return true;
        /* fall through */
    case PITH_TYPE_FLOAT_LIST:
        return is_float_list(st, v, p->list_size);
    case PITH_TYPE_OPT_GENERATOR:
        return v == Py_None || generator_check(st, v);
    case PITH_NUM_ARG_TYPES:
        break;
    }
    return false;
}

/* Whether a Python number may bind Tensor parameter `i` of `ov` under `numbers`. See Note
 * [The Python surface of the op table] (op_surface.c). */
static bool number_ok_at(const overload_object *ov, int i, int numbers)
{
    const bind_param *p = &ov->params[i];
    if (p->flags & PARAM_MUTABLE)
        return false; /* an op never writes into a number */
    return numbers == NUMBERS_ALL || (numbers == NUMBERS_OTHER && i > ov->first_tensor);
}

/* ---- step 1: matching ---- */

static int param_by_name(const overload_object *ov, PyObject *key)
{
    for (int i = 0; i < ov->nparams; i++)
        if (ov->params[i].name == key)
            return i; /* interned: the common case */
    for (int i = 0; i < ov->nparams; i++)
        if (PyUnicode_GET_LENGTH(ov->params[i].name) == PyUnicode_GET_LENGTH(key) &&
            PyUnicode_Compare(ov->params[i].name, key) == 0)
            return i;
    return -1;
}

/* Varargs: PyTorch's varargs size (x.view(2, 3) is x.view((2, 3))) and tensors as varargs
 * (einsum(eq, a, b)) gather the trailing positional arguments into one list parameter,
 * recorded in `b`. Returns how many positional arguments remain to bind one by one. */
static Py_ssize_t varargs_match(pith_module_state *st, const overload_object *ov,
                                const bind_call *call, bound_args *b,
                                const unsigned char *positional, int npositional)
{
    Py_ssize_t nargs = call->nargs;
    int first = npositional > 0 ? positional[0] : -1;
    if (npositional == 1 && call->mode != MODE_OVERLOAD && nargs >= 1 &&
        (ov->params[first].type == PITH_TYPE_INT_LIST ||
         ov->params[first].type == PITH_TYPE_OPT_INT_LIST) &&
        is_int_like(st, call->args[0])) {
        /* PyTorch's varargs size: x.view(2, 3) is x.view((2, 3)); the first may be any int
         * argument (np.int64(2), an __index__ object, a 0-dim integer tensor), not a bool. */
        b->varargs = call->args;
        b->nvarargs = nargs;
        b->varargs_index = first;
        b->slots[first] = call->args[0];
        nargs = 0;
    }
    if (call->tensor_varargs && b->varargs_index < 0 && npositional > 0 &&
        ov->params[positional[npositional - 1]].type == PITH_TYPE_TENSOR_LIST) {
        /* einsum(eq, a, b), meshgrid(a, b): See Note [Tensors as varargs] (op_surface.c) */
        int at = npositional - 1, list = positional[at];
        bool one_list = nargs == at + 1 && is_sequence(call->args[at]);
        bool by_keyword = false;
        for (Py_ssize_t k = 0; nargs == at && call->kwnames &&
                               k < PyTuple_GET_SIZE(call->kwnames); k++)
            by_keyword = by_keyword ||
                         param_by_name(ov, PyTuple_GET_ITEM(call->kwnames, k)) == list;
        if (nargs >= at && !one_list && !by_keyword) {
            b->varargs = call->args + at;
            b->nvarargs = nargs - at;
            b->varargs_index = list;
            b->slots[list] = nargs > at ? call->args[at] : st->binder.no_default;
            nargs = at;
        }
    }
    return nargs;
}

/* The parameter that keyword `key` names, or -1. */
static int keyword_param(pith_module_state *st, const overload_object *ov,
                         const bind_call *call, PyObject *key, bool is_out, int skip)
{
    if (is_out && ov->nout > 0)
        return ov->out_first;
    if (call->mode == MODE_FUNCTION &&
        (key == st->binder.str_input || PyUnicode_CompareWithASCIIString(key, "input") == 0))
        return ov->self_index;
    int i = param_by_name(ov, key);
    if (i >= 0 && i == ov->self_index && call->mode == MODE_FUNCTION &&
        PyUnicode_Compare(key, st->binder.str_input) != 0)
        i = -1; /* functions spell self as input, as PyTorch's do */
    if (i == skip)
        i = -1; /* the receiver is not a keyword */
    return i;
}

/* Binds the keyword arguments into b's slots: 0, or -1 with `why`. */
static int keywords_match(pith_module_state *st, const overload_object *ov,
                          const bind_call *call, bound_args *b, int skip, bind_failure *why)
{
    Py_ssize_t nkw = call->kwnames ? PyTuple_GET_SIZE(call->kwnames) : 0;
    for (Py_ssize_t k = 0; k < nkw; k++) {
        PyObject *key = PyTuple_GET_ITEM(call->kwnames, k);
        PyObject *value = call->args[call->nargs + k];
        bool is_out = key == st->binder.str_out ||
                      (PyUnicode_GET_LENGTH(key) == 3 &&
                       PyUnicode_CompareWithASCIIString(key, "out") == 0);
        if (is_out && ov->nout > 1) { /* out=(a, b): one tensor per out argument */
            if (!PyTuple_Check(value) || PyTuple_GET_SIZE(value) != ov->nout) {
                why->code = FAIL_OUT_TUPLE;
                return -1;
            }
            for (int o = 0; o < ov->nout; o++)
                b->slots[ov->out_first + o] = PyTuple_GET_ITEM(value, o);
            continue;
        }
        int i = keyword_param(st, ov, call, key, is_out, skip);
        if (i < 0 && is_out && value == Py_None)
            continue; /* out=None: no out */
        if (i < 0) {
            why->code = FAIL_UNEXPECTED_KEYWORD;
            why->keyword = key;
            return -1;
        }
        if (b->slots[i]) {
            why->code = FAIL_DUPLICATE;
            why->index = i;
            return -1;
        }
        b->slots[i] = value;
    }
    return 0;
}

/* Parameter `i` has no argument: 0 when it needs none, or -1 with `why` naming every
 * required parameter from `i` on that has none. */
static int missing_check(const overload_object *ov, const bound_args *b, int i,
                         bind_failure *why)
{
    const bind_param *p = &ov->params[i];
    if ((p->flags & PARAM_HAS_DEFAULT) || type_is_optional(p->type))
        return 0;
    why->code = FAIL_MISSING;
    why->index = i;
    why->missing = 0;
    for (int k = i; k < ov->nparams; k++)
        if (!b->slots[k] && !(ov->params[k].flags & PARAM_HAS_DEFAULT) &&
            !type_is_optional(ov->params[k].type))
            why->missing |= (uint64_t)1 << k;
    return -1;
}

/* Each of the varargs gathered into parameter `i` has the list's item type: 0, or -1 with
 * `why`. */
static int varargs_check(pith_module_state *st, const overload_object *ov, bound_args *b,
                         int i, bind_failure *why)
{
    bool tensors = ov->params[i].type == PITH_TYPE_TENSOR_LIST;
    for (Py_ssize_t k = 0; k < b->nvarargs; k++)
        if (tensors ? !is_tensor_argument(st, b->varargs[k], &b->function_maybe)
                    : !is_int_like(st, b->varargs[k])) {
            why->code = FAIL_TYPE;
            why->index = i;
            why->value = b->varargs[k];
            return -1;
        }
    return 0;
}

/* Every parameter has an argument of its type, or needs none: 0, or -1 with `why`. */
static int slots_check(pith_module_state *st, const overload_object *ov,
                       const bind_call *call, bound_args *b, bind_failure *why)
{
    for (int i = 0; i < ov->nparams; i++) {
        const bind_param *p = &ov->params[i];
        PyObject *v = b->slots[i];
        if (!v) {
            if (missing_check(ov, b, i, why) < 0)
                return -1;
            continue;
        }
        if (i == b->varargs_index) {
            if (varargs_check(st, ov, b, i, why) < 0)
                return -1;
            continue;
        }
        if (v == call->receiver)
            continue; /* the caller checked that it is a tensor */
        if (!param_accepts(st, p, v, number_ok_at(ov, i, call->numbers),
                           &b->function_maybe)) {
            why->code = FAIL_TYPE;
            why->index = i;
            why->value = v;
            return -1;
        }
    }
    return 0;
}

int bind_match(pith_module_state *st, const overload_object *ov, const bind_call *call,
               bound_args *b, bind_failure *why)
{
    int skip = call->receiver ? ov->self_index : -1;
    if (call->receiver && skip < 0)
        return why->code = FAIL_NO_SELF, -1;
    memset(b->slots, 0, (size_t)ov->nparams * sizeof *b->slots);
    b->varargs = NULL;
    b->nvarargs = 0;
    b->varargs_index = -1;
    b->function_maybe = false;
    if (call->receiver) {
        b->slots[skip] = call->receiver;
        b->function_maybe = !Py_IS_TYPE(call->receiver, st->tensor_type);
    }
    const unsigned char *positional = ov->positional[skip >= 0];
    int npositional = ov->npositional_of[skip >= 0];
    Py_ssize_t nargs = varargs_match(st, ov, call, b, positional, npositional);
    if (nargs > npositional) {
        why->code = FAIL_TOO_MANY;
        why->index = npositional;
        why->given = (int)call->nargs;
        return -1;
    }
    for (Py_ssize_t k = 0; k < nargs; k++)
        b->slots[positional[k]] = call->args[k];
    if (keywords_match(st, ov, call, b, skip, why) < 0)
        return -1;
    return slots_check(st, ov, call, b, why);
}

/* ---- step 2: pushing ---- */

static int push_failed(pith_module_state *st)
{
    error_raise(st);
    return -1;
}

/* An int argument's value; -1 with an exception (OverflowError past int64). */
static int int_value(pith_module_state *st, PyObject *v, int64_t *out)
{
    if (!PyLong_CheckExact(v) && tensor_check(st, v)) {
        PyObject *item = tensor_item(tensor_of(v));
        if (!item)
            return -1;
        int rc = int_value(st, item, out);
        Py_DECREF(item);
        return rc;
    }
    long long i = PyLong_AsLongLong(v); /* calls __index__ */
    if (i == -1 && PyErr_Occurred())
        return -1;
    *out = i;
    return 0;
}

static int push_int_list(pith_module_state *st, pith_stack *stack, PyObject *const *items,
                         Py_ssize_t n)
{
    int64_t small[PITH_MAX_DIMS], *v = small;
    if (n > PITH_MAX_DIMS && !(v = PyMem_Malloc((size_t)n * sizeof *v))) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++)
        rc = int_value(st, items[i], &v[i]);
    if (rc == 0 && pith_stack_push_int_list(stack, v, (size_t)n) != PITH_OK)
        rc = push_failed(st);
    if (v != small)
        PyMem_Free(v);
    return rc;
}

static int push_float_list(pith_module_state *st, pith_stack *stack, PyObject *v, int list_size)
{
    Py_ssize_t n = is_sequence(v) ? PySequence_Fast_GET_SIZE(v) : list_size;
    double small[PITH_MAX_DIMS], *d = small;
    if (n > PITH_MAX_DIMS && !(d = PyMem_Malloc((size_t)n * sizeof *d))) {
        PyErr_NoMemory();
        return -1;
    }
    int rc = 0;
    for (Py_ssize_t i = 0; rc == 0 && i < n; i++) {
        d[i] = PyFloat_AsDouble(is_sequence(v) ? PySequence_Fast_GET_ITEM(v, i) : v);
        if (d[i] == -1.0 && PyErr_Occurred())
            rc = -1;
    }
    if (rc == 0 && pith_stack_push_double_list(stack, d, (size_t)n) != PITH_OK)
        rc = push_failed(st);
    if (d != small)
        PyMem_Free(d);
    return rc;
}

/* A Tensor[] or Tensor?[] from `n` items (a list's, or the varargs of Note [Tensors as
 * varargs]); *work grows to the largest tensor's numel, or becomes -1 when a tensor may
 * reach Python. */
static int push_tensor_items(pith_module_state *st, pith_stack *stack, PyObject *const *items,
                             Py_ssize_t n, int64_t *work)
{
    const pith_tensor *small[16], **v = small;
    if (n > 16 && !(v = PyMem_Malloc((size_t)n * sizeof *v))) {
        PyErr_NoMemory();
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *item = items[i];
        if (item != Py_None && !tensor_check(st, item)) { /* a tensor-like no handler took */
            if (v != small)
                PyMem_Free(v);
            PyErr_Format(PyExc_TypeError, "expected a pith.Tensor, not %.200s",
                         Py_TYPE(item)->tp_name);
            return -1;
        }
        v[i] = item == Py_None ? NULL : tensor_of(item); /* borrowed from the caller's list */
        if (v[i] && pith_tensor_has_python_key(v[i]))
            *work = -1; /* may run Python: keep the GIL */
        else if (v[i] && *work >= 0 && pith_numel(v[i]) > *work)
            *work = pith_numel(v[i]);
    }
    int rc = pith_stack_push_tensor_list(stack, v, (size_t)n) == PITH_OK ? 0 : push_failed(st);
    if (v != small)
        PyMem_Free(v);
    return rc;
}

/* A Scalar: bool, int or float by its Python kind; a 0-dim tensor or a NumPy scalar by
 * the Python number it holds. */
static int push_scalar(pith_module_state *st, pith_stack *stack, PyObject *v)
{
    pith_status s;
    if (PyBool_Check(v)) {
        s = pith_stack_push_bool(stack, v == Py_True);
    } else if (PyLong_Check(v)) {
        long long i = PyLong_AsLongLong(v);
        if (i == -1 && PyErr_Occurred())
            return -1;
        s = pith_stack_push_int(stack, i);
    } else if (PyFloat_Check(v)) {
        s = pith_stack_push_double(stack, PyFloat_AS_DOUBLE(v));
    } else {
        PyObject *item = tensor_check(st, v) ? tensor_item(tensor_of(v))
                                             : PyObject_CallMethod(v, "item", NULL);
        if (!item)
            return -1;
        int rc = is_number(item) ? push_scalar(st, stack, item)
                                 : (PyErr_Format(PyExc_TypeError, "cannot use a %.200s as a "
                                                 "number", Py_TYPE(item)->tp_name), -1);
        Py_DECREF(item);
        return rc;
    }
    return s == PITH_OK ? 0 : push_failed(st);
}

static int push_dtype(pith_module_state *st, pith_stack *stack, PyObject *v)
{
    pith_dtype dtype = v == (PyObject *)&PyFloat_Type ? PITH_FLOAT64
                       : v == (PyObject *)&PyLong_Type ? PITH_INT64
                       : v == (PyObject *)&PyBool_Type ? PITH_BOOL
                                                       : ((pith_dtype_object *)v)->dtype;
    return pith_stack_push_dtype(stack, dtype) == PITH_OK ? 0 : push_failed(st);
}

/* See Note [Device arguments] (device.c): operators take the CPU and Meta. */
static int push_device(pith_module_state *st, pith_stack *stack, PyObject *v)
{
    pith_device device;
    if (device_argument(st, v, true, NULL, &device) < 0)
        return -1;
    return pith_stack_push_device(stack, device) == PITH_OK ? 0 : push_failed(st);
}

/* A Python number for a Tensor parameter: a wrapped number (See Note [Python scalars as
 * wrapped numbers], tensor_number.c) when the call has a tensor to defer to; otherwise,
 * as in pith.neg(1.5), the tensor pith.tensor(v) makes. */
static int push_number_tensor(pith_module_state *st, pith_stack *stack, PyObject *v,
                              bool has_tensor)
{
    if (!is_number(v)) { /* a NumPy scalar: the Python number it holds */
        PyObject *item = PyObject_CallMethod(v, "item", NULL);
        if (!item)
            return -1;
        int rc = is_number(item) ? push_number_tensor(st, stack, item, has_tensor)
                                 : (PyErr_Format(PyExc_TypeError, "cannot use a %.200s as a "
                                                 "number", Py_TYPE(item)->tp_name), -1);
        Py_DECREF(item);
        return rc;
    }
    int not_implemented;
    pith_tensor *t = has_tensor ? operand_to_tensor(st, v, &not_implemented)
                                : tensor_from_data(st, v, 0, pith_get_default_dtype());
    if (!t)
        return -1;
    return pith_stack_push_tensor_steal(stack, t) == PITH_OK ? 0 : push_failed(st);
}

static bool call_has_tensor(pith_module_state *st, const overload_object *ov,
                            const bound_args *b);

static int push_slot(pith_module_state *st, pith_stack *stack, const overload_object *ov,
                     const bound_args *b, const bind_param *p, PyObject *v, int64_t *work)
{
    if (v == Py_None) /* an optional parameter: bind_match let None through */
        return pith_stack_push_none(stack) == PITH_OK ? 0 : push_failed(st);
    switch (p->type) {
    case PITH_TYPE_TENSOR:
    case PITH_TYPE_OPT_TENSOR:
        if (!tensor_check(st, v)) {
            /* a number: See Note [The Python surface of the op table]; anything else is a
             * tensor-like that no handler took (Note [Function layer]) */
            if (!is_number(v) && !is_numpy_scalar(v))
                return PyErr_Format(PyExc_TypeError, "expected a pith.Tensor, not %.200s",
                                    Py_TYPE(v)->tp_name),
                       -1;
            return push_number_tensor(st, stack, v, call_has_tensor(st, ov, b));
        } else {
            pith_tensor *t = tensor_of(v);
            int64_t numel = pith_numel(t);
            if (pith_tensor_has_python_key(t))
                *work = -1; /* may run Python: keep the GIL */
            else if (*work >= 0 && numel > *work)
                *work = numel;
            return pith_stack_push_tensor(stack, t) == PITH_OK ? 0 : push_failed(st);
        }
    case PITH_TYPE_TENSOR_LIST:
    case PITH_TYPE_LIST_OPT_TENSOR:
        return push_tensor_items(st, stack, PySequence_Fast_ITEMS(v), PySequence_Fast_GET_SIZE(v),
                                 work);
    case PITH_TYPE_INT:
    case PITH_TYPE_OPT_INT: {
        int64_t i;
        if (int_value(st, v, &i) < 0)
            return -1;
        return pith_stack_push_int(stack, i) == PITH_OK ? 0 : push_failed(st);
    }
    case PITH_TYPE_INT_LIST:
    case PITH_TYPE_OPT_INT_LIST:
        if (is_sequence(v))
            return push_int_list(st, stack, PySequence_Fast_ITEMS(v),
                                 PySequence_Fast_GET_SIZE(v));
        else { /* one int for int[N]: N copies */
            PyObject *copies[PITH_MAX_DIMS];
            int n = p->list_size < PITH_MAX_DIMS ? p->list_size : PITH_MAX_DIMS;
            for (int k = 0; k < n; k++)
                copies[k] = v;
            return push_int_list(st, stack, copies, n);
        }
    case PITH_TYPE_FLOAT:
    case PITH_TYPE_OPT_FLOAT: {
        double d = PyFloat_AsDouble(v); /* a 0-dim tensor converts through __float__ */
        if (d == -1.0 && PyErr_Occurred())
            return -1;
        return pith_stack_push_double(stack, d) == PITH_OK ? 0 : push_failed(st);
    }
    case PITH_TYPE_BOOL:
        return pith_stack_push_bool(stack, v == Py_True) == PITH_OK ? 0 : push_failed(st);
    case PITH_TYPE_SCALAR:
    case PITH_TYPE_OPT_SCALAR:
        return push_scalar(st, stack, v);
    case PITH_TYPE_DTYPE:
    case PITH_TYPE_OPT_DTYPE:
        return push_dtype(st, stack, v);
    case PITH_TYPE_OPT_DEVICE:
        return push_device(st, stack, v);
    case PITH_TYPE_STR:
    case PITH_TYPE_OPT_STR: {
        const char *text = str_argument_text(v);
        if (!text)
            return -1;
        return pith_stack_push_string(stack, text) == PITH_OK ? 0 : push_failed(st);
    }
    case PITH_TYPE_OPT_BOOL:
        return pith_stack_push_bool(stack, v == Py_True) == PITH_OK ? 0 : push_failed(st);
    case PITH_TYPE_FLOAT_LIST:
    case PITH_TYPE_OPT_FLOAT_LIST:
        return push_float_list(st, stack, v, p->list_size);
    case PITH_TYPE_OPT_GENERATOR:
        return pith_stack_push_generator(stack, generator_from_object(v)) == PITH_OK
                   ? 0 : push_failed(st);
    case PITH_NUM_ARG_TYPES:
        break;
    }
    PyErr_Format(PyExc_SystemError, "pith: argument type %d has no conversion", (int)p->type);
    return -1;
}

static bool call_has_tensor(pith_module_state *st, const overload_object *ov,
                            const bound_args *b)
{
    for (int i = 0; i < ov->nparams; i++) {
        PyObject *v = b->slots[i];
        if (!v || i == b->varargs_index)
            continue;
        if (tensor_check(st, v))
            return true;
        if (is_sequence(v) && PySequence_Fast_GET_SIZE(v) > 0 &&
            tensor_check(st, PySequence_Fast_GET_ITEM(v, 0)))
            return true;
    }
    return false;
}

int bind_push(pith_module_state *st, const overload_object *ov, const bound_args *b,
              pith_stack *stack, int64_t *work)
{
    int last = ov->nparams - 1;
    while (last >= 0 && !b->slots[last])
        last--;
    *work = 0;
    for (int i = 0; i <= last; i++) {
        const bind_param *p = &ov->params[i];
        PyObject *v = b->slots[i];
        int rc;
        if (i == b->varargs_index && p->type == PITH_TYPE_TENSOR_LIST)
            rc = push_tensor_items(st, stack, b->varargs, b->nvarargs, work);
        else if (i == b->varargs_index)
            rc = push_int_list(st, stack, b->varargs, b->nvarargs);
        else if (v)
            rc = push_slot(st, stack, ov, b, p, v, work);
        else if (p->flags & PARAM_HAS_DEFAULT)
            rc = pith_op_push_default(ov->op, i, stack) == PITH_OK ? 0 : push_failed(st);
        else
            rc = pith_stack_push_none(stack) == PITH_OK ? 0 : push_failed(st);
        if (rc < 0)
            return -1;
    }
    return 0;
}

/* ---- the function layer (See Note [Function layer], function_layer.c) ---- */

int bind_function_layer(pith_module_state *st, const overload_object *ov, const bound_args *b,
                        PyObject *func, PyObject *const *items, Py_ssize_t nargs,
                        PyObject *kwnames, PyObject **result)
{
    function_request req;
    int rc = function_request_begin(st, &req);
    for (uint64_t bits = ov->tensor_params; rc == 0 && bits; bits &= bits - 1) {
        int i = __builtin_ctzll(bits);
        if (i != b->varargs_index && b->slots[i])
            rc = function_request_add(st, &req, b->slots[i]);
        for (Py_ssize_t k = 0; rc == 0 && i == b->varargs_index && k < b->nvarargs; k++)
            rc = function_request_add(st, &req, b->varargs[k]);
    }
    if (rc == 0 && !function_request_needed(&req)) {
        function_request_end(&req);
        return 0;
    }
    *result = rc == 0 ? function_request_run_vector(st, &req, func, items, nargs, kwnames)
                      : NULL;
    function_request_end(&req);
    return 1;
}

/* ---- step 3: calling ---- */

pith_stack *stack_take(pith_module_state *st)
{
    if (st->binder.nstacks > 0)
        return st->binder.stacks[--st->binder.nstacks];
    pith_stack *stack = pith_stack_new();
    if (!stack)
        error_raise(st);
    return stack;
}

void stack_give_back(pith_module_state *st, pith_stack *stack)
{
    pith_stack_drop(stack, pith_stack_size(stack));
    if (st->binder.nstacks < BINDER_STACK_POOL)
        st->binder.stacks[st->binder.nstacks++] = stack;
    else
        pith_stack_free(stack);
}

static PyObject *plain_wrap(pith_module_state *st, pith_tensor *t, void *ctx)
{
    (void)ctx;
    return tensor_wrap(st, t);
}

/* A result list as a tuple (what functions and methods return for Tensor[]). */
static PyObject *list_to_tuple(PyObject *v)
{
    if (!v || !PyList_Check(v))
        return v;
    PyObject *t = PyList_AsTuple(v);
    Py_DECREF(v);
    return t;
}

/* Note [Recording calls into a graph]
 * While pith.compile's translator (compile/eval.c) evaluates a frame, it calls the very
 * Function, Method and OpOverload objects that eager code calls, with stand-in tensors (Meta
 * tensors of a pith_graph) as arguments, so that matching, defaults, numbers and results are
 * the binder's own. binder_record_into sets this thread's graph: every call that reaches
 * overload_invoke is then added to that graph with pith_graph_call instead of running. A
 * call that does not reach overload_invoke (a conversion written in C, a Python kernel) does
 * not reach a graph either: its tensors are not stand-ins, and the translator, which checks
 * every result, falls back. The slot is per thread, so another thread that calls pith
 * meanwhile (the translator never releases the GIL, but a GIL switch may happen inside a
 * Python-level allocation) runs eagerly, as it should. */
static _Thread_local pith_graph *recording;

pith_graph *binder_record_into(pith_graph *g)
{
    pith_graph *previous = recording;
    recording = g;
    return previous;
}

PyObject *overload_invoke(pith_module_state *st, const overload_object *ov,
                          const bound_args *b, bool as_function)
{
    pith_stack *stack = stack_take(st);
    if (!stack)
        return NULL;
    PyObject *result = NULL;
    int64_t work;
    if (bind_push(st, ov, b, stack, &work) < 0)
        goto done;
    pith_status status;
    if (recording) {
        status = pith_graph_call(recording, ov->op, stack);
    } else if (work >= PITH_GIL_RELEASE_NUMEL && !pydispatch_python_reachable(NULL)) {
        Py_BEGIN_ALLOW_THREADS
        status = pith_call_boxed(ov->op, stack);
        Py_END_ALLOW_THREADS
    } else {
        status = pith_call_boxed(ov->op, stack);
    }
    if (status != PITH_OK) {
        error_raise(st);
        goto done;
    }
    size_t n = pith_stack_size(stack);
    if (n == (size_t)ov->nreturns && n >= 1 && ov->return_alias[0] >= 0 &&
        b->slots[ov->return_alias[0]] && tensor_check(st, b->slots[ov->return_alias[0]])) {
        /* An in-place op or an out= call: the argument it wrote is the result. */
        result = n == 1 ? Py_NewRef(b->slots[ov->return_alias[0]]) : PyTuple_New((Py_ssize_t)n);
        for (size_t i = 0; n > 1 && result && i < n; i++) {
            int alias = ov->return_alias[i];
            PyObject *item = alias >= 0 && b->slots[alias]
                                 ? Py_NewRef(b->slots[alias])
                                 : stack_value_to_python(st, stack, i, plain_wrap, NULL);
            if (!item)
                Py_CLEAR(result);
            else
                PyTuple_SET_ITEM(result, (Py_ssize_t)i, item);
        }
    } else if (n == 0) {
        result = Py_NewRef(Py_None);
    } else if (n == 1 && ov->nreturns <= 1) {
        result = stack_value_to_python(st, stack, 0, plain_wrap, NULL);
        if (as_function)
            result = list_to_tuple(result);
    } else {
        result = PyTuple_New((Py_ssize_t)n);
        for (size_t i = 0; result && i < n; i++) {
            PyObject *item = stack_value_to_python(st, stack, i, plain_wrap, NULL);
            if (as_function)
                item = list_to_tuple(item);
            if (!item)
                Py_CLEAR(result);
            else
                PyTuple_SET_ITEM(result, (Py_ssize_t)i, item);
        }
    }
    /* Named results (max.dim's, sort.values' out= tensors) come back as a named tuple. */
    if (result && n > 1 && as_function && ov->named_returns) {
        PyObject *type = overload_return_type(st, ov);
        if (type)
            Py_SETREF(result, PyObject_CallObject(type, result));
        else
            Py_CLEAR(result);
    }
done:
    stack_give_back(st, stack);
    return result;
}
