/* tensor_number.c — pith.Tensor's operator slots (+ - * / // % ** @ & | ^, their in-place
 * forms, unary - abs ~, comparisons, bool/int/float/index): each goes straight to the
 * typed C op, with no argument parsing. The binary ones come from the op file's
 * number_slot fields (ops/ops.toml, generated/number_slots.inc). */
#include <math.h>

#include "state.h"

/* Note [Python scalars as wrapped numbers]
 * A Python bool, int or float operand becomes a 0-dim tensor flagged as a wrapped number
 * (pith_tensor_set_wrapped_number), which the promotion code treats as PyTorch's "weak"
 * scalar: it never raises a tensor's dtype within its category (int8 tensor + 1000 stays
 * int8 and wraps; int tensor + 2.5 is the default float dtype). An int is stored as int64
 * and a float as float64, so the value itself is exact; the flag, not the storage dtype,
 * decides the result dtype. bool is checked before int because bool subclasses int. */
pith_tensor *operand_to_tensor(pith_module_state *st, PyObject *obj, int *not_implemented)
{
    *not_implemented = 0;
    if (tensor_check(st, obj)) {
        pith_retain(tensor_of(obj));
        return tensor_of(obj);
    }
    pith_tensor *t;
    if (PyBool_Check(obj)) {
        bool v = obj == Py_True;
        t = pith_from_data(&v, 0, NULL, PITH_BOOL);
    } else if (PyLong_Check(obj)) {
        long long v = PyLong_AsLongLong(obj);
        if (v == -1 && PyErr_Occurred())
            return NULL; /* OverflowError: the value does not fit int64 */
        int64_t v64 = v;
        t = pith_from_data(&v64, 0, NULL, PITH_INT64);
    } else if (PyFloat_Check(obj)) {
        double v = PyFloat_AS_DOUBLE(obj);
        t = pith_from_data(&v, 0, NULL, PITH_FLOAT64);
    } else {
        *not_implemented = 1;
        return NULL;
    }
    if (!t) {
        error_raise(st);
        return NULL;
    }
    pith_tensor_set_wrapped_number(t, true);
    return t;
}

/* The module state of whichever operand is a pith.Tensor (Python numbers are skipped
 * without a lookup); NULL without an exception when neither is. */
static pith_module_state *state_of_operands(PyObject *a, PyObject *b)
{
    PyObject *operands[2] = {a, b};
    for (int i = 0; i < 2; i++) {
        PyObject *x = operands[i];
        if (PyLong_Check(x) || PyFloat_Check(x))
            continue;
        PyObject *module = PyType_GetModuleByDef(Py_TYPE(x), &pith_module_def);
        if (module)
            return state_of_module(module);
        PyErr_Clear();
    }
    return NULL;
}

static bool numel_is_large(const pith_tensor *a, const pith_tensor *b)
{
    return (pith_numel(a) >= PITH_GIL_RELEASE_NUMEL ||
            (b && pith_numel(b) >= PITH_GIL_RELEASE_NUMEL)) &&
           !pydispatch_python_reachable(a) && !(b && pydispatch_python_reachable(b));
}

typedef pith_tensor *(*binary_fn)(const pith_tensor *, const pith_tensor *);
typedef pith_status (*inplace_fn)(pith_tensor *, const pith_tensor *);

/* Converts both operands; returns 0 on success, 1 for NotImplemented, -1 on error. */
static int operands_convert(PyObject *a, PyObject *b, pith_module_state **st_out,
                            pith_tensor **ta, pith_tensor **tb)
{
    pith_module_state *st = state_of_operands(a, b);
    if (!st)
        return 1;
    int ni;
    *ta = operand_to_tensor(st, a, &ni);
    if (!*ta)
        return ni ? 1 : -1;
    *tb = operand_to_tensor(st, b, &ni);
    if (!*tb) {
        pith_release(*ta);
        return ni ? 1 : -1;
    }
    *st_out = st;
    return 0;
}

static PyObject *binary_call(PyObject *a, PyObject *b, binary_fn fn)
{
    pith_module_state *st;
    pith_tensor *ta, *tb, *out;
    int rc = operands_convert(a, b, &st, &ta, &tb);
    if (rc > 0)
        Py_RETURN_NOTIMPLEMENTED;
    if (rc < 0)
        return NULL;
    if (numel_is_large(ta, tb)) {
        Py_BEGIN_ALLOW_THREADS
        out = fn(ta, tb);
        Py_END_ALLOW_THREADS
    } else {
        out = fn(ta, tb);
    }
    pith_release(ta);
    pith_release(tb);
    return tensor_wrap(st, out);
}

/* `a op= b` writes into a and returns a itself. */
static PyObject *inplace_call(PyObject *a, PyObject *b, inplace_fn fn)
{
    pith_module_state *st;
    pith_tensor *ta, *tb;
    int rc = operands_convert(a, b, &st, &ta, &tb);
    if (rc > 0)
        Py_RETURN_NOTIMPLEMENTED;
    if (rc < 0)
        return NULL;
    pith_status status;
    if (!tensor_check(st, a)) {
        pith_release(ta);
        pith_release(tb);
        Py_RETURN_NOTIMPLEMENTED;
    }
    if (numel_is_large(ta, tb)) {
        Py_BEGIN_ALLOW_THREADS
        status = fn(ta, tb);
        Py_END_ALLOW_THREADS
    } else {
        status = fn(ta, tb);
    }
    pith_release(ta);
    pith_release(tb);
    if (status != PITH_OK)
        return error_raise(st);
    return Py_NewRef(a);
}

/* tensor_nb_<slot> and tensor_nb_inplace_<slot> of every op with a number_slot in the op
 * file, each a binary_call or inplace_call of the op's public C function. */
#define PITH_NUMBER_SLOT_FUNCTIONS
#include "generated/number_slots.inc"
#undef PITH_NUMBER_SLOT_FUNCTIONS

PyObject *tensor_nb_matrix_multiply(PyObject *a, PyObject *b)
{
    pith_module_state *st = state_of_operands(a, b);
    if (!st || !tensor_check(st, a) || !tensor_check(st, b))
        Py_RETURN_NOTIMPLEMENTED; /* PyTorch: @ takes no Python scalars */
    return binary_call(a, b, pith_matmul);
}

static int power_mod_check(PyObject *mod)
{
    if (mod == Py_None)
        return 0;
    PyErr_SetString(PyExc_TypeError, "pow() with a modulus is not supported for tensors");
    return -1;
}

PyObject *tensor_nb_power(PyObject *a, PyObject *b, PyObject *mod)
{
    if (power_mod_check(mod) < 0)
        return NULL;
    return binary_call(a, b, pith_pow);
}

PyObject *tensor_nb_inplace_power(PyObject *a, PyObject *b, PyObject *mod)
{
    if (power_mod_check(mod) < 0)
        return NULL;
    return inplace_call(a, b, pith_pow_);
}

/* ---- unary ---- */

static PyObject *unary_call(PyObject *self, pith_tensor *(*fn)(const pith_tensor *))
{
    pith_module_state *st = state_of_type(Py_TYPE(self));
    if (!st)
        return NULL;
    pith_tensor *t = tensor_of(self), *out;
    if (numel_is_large(t, NULL)) {
        Py_BEGIN_ALLOW_THREADS
        out = fn(t);
        Py_END_ALLOW_THREADS
    } else {
        out = fn(t);
    }
    return tensor_wrap(st, out);
}

PyObject *tensor_nb_negative(PyObject *self) { return unary_call(self, pith_neg); }
PyObject *tensor_nb_absolute(PyObject *self) { return unary_call(self, pith_abs); }
PyObject *tensor_nb_invert(PyObject *self) { return unary_call(self, pith_bitwise_not); }

/* The one value of a one-element tensor, for bool(), float(), int() and index(). The
 * exception type of a tensor with several elements is PyTorch's: RuntimeError for bool(),
 * ValueError for float() and int(). */
static int single_value(PyObject *self, PyObject *exc, const char *message, double *out)
{
    pith_tensor *t = tensor_of(self);
    if (pith_numel(t) != 1) {
        PyErr_SetString(exc, message);
        return -1;
    }
    if (pith_item(t, out) != PITH_OK) {
        pith_module_state *st = state_of_type(Py_TYPE(self));
        if (st)
            error_raise(st);
        return -1;
    }
    return 0;
}

int tensor_nb_bool(PyObject *self)
{
    double v;
    if (single_value(self, PyExc_RuntimeError,
                     "Boolean value of Tensor with more than one value is ambiguous", &v) < 0)
        return -1;
    return v != 0.0 || isnan(v);
}

PyObject *tensor_nb_float(PyObject *self)
{
    double v;
    if (single_value(self, PyExc_ValueError,
                     "only one element tensors can be converted to Python scalars", &v) < 0)
        return NULL;
    return PyFloat_FromDouble(v);
}

PyObject *tensor_nb_int(PyObject *self)
{
    if (pith_numel(tensor_of(self)) != 1) {
        PyErr_SetString(PyExc_ValueError,
                        "only one element tensors can be converted to Python scalars");
        return NULL;
    }
    /* An exact int: a bool tensor's item is a bool, which __int__ and __index__ must not
     * return (Python 3.11 warns, later versions raise); int(True) is the int 1. */
    PyObject *item = tensor_item(tensor_of(self));
    if (!item || PyLong_CheckExact(item))
        return item;
    Py_SETREF(item, PyNumber_Long(item));
    return item;
}

PyObject *tensor_nb_index(PyObject *self)
{
    pith_tensor *t = tensor_of(self);
    if (pith_numel(t) != 1 || !pith_dtype_is_integral(pith_tensor_dtype(t), true)) {
        PyErr_SetString(PyExc_TypeError,
                        "only integer tensors of a single element can be converted to an index");
        return NULL;
    }
    return tensor_nb_int(self);
}

/* ---- comparisons ---- */

PyObject *tensor_richcompare(PyObject *a, PyObject *b, int op)
{
    static const binary_fn fns[] = {
        [Py_LT] = pith_lt, [Py_LE] = pith_le, [Py_EQ] = pith_eq,
        [Py_NE] = pith_ne, [Py_GT] = pith_gt, [Py_GE] = pith_ge,
    };
    return binary_call(a, b, fns[op]);
}
