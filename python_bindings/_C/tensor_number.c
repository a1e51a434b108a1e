/* tensor_number.c — pith.Tensor's operator slots (+ - * / // % ** @ & | ^, their in-place
 * forms, unary - abs ~, comparisons, bool/int/float/index): each goes straight to the
 * typed C op, with no argument parsing. The binary ones come from the op file's
 * number_slot fields (ops/ops.toml, generated/number_slots.inc). */
#include <math.h>
#include <string.h>

#include "function_layer.h"

/* Note [Python scalars as wrapped numbers]
 * A Python bool, int or float operand becomes a 0-dim tensor flagged as a wrapped number
 * (pith_tensor_set_wrapped_number), which the promotion code treats as PyTorch's "weak"
 * scalar: it never raises a tensor's dtype within its category (int8 tensor + 1000 stays
 * int8 and wraps; int tensor + 2.5 is the default float dtype). An int is stored as int64
 * and a float as float64, so the value itself is exact; the flag, not the storage dtype,
 * decides the result dtype. bool is checked before int because bool subclasses int. */
/* *maybe is set for an operand that is neither a plain pith.Tensor nor a Python number (a
 * subclass instance, or anything *not_implemented refuses, which may be a tensor-like): the
 * function layer may want the call (See Note [Function layer], function_layer.c). The
 * binder learns it from the type checks it makes anyway. */
static pith_tensor *operand_convert(pith_module_state *st, PyObject *obj, int *not_implemented,
                                    bool *maybe)
{
    *not_implemented = 0;
    if (tensor_check(st, obj)) {
        if (!Py_IS_TYPE(obj, st->tensor_type))
            *maybe = true;
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
        *maybe = true;
        return NULL;
    }
    if (!t) {
        error_raise(st);
        return NULL;
    }
    pith_tensor_set_wrapped_number(t, true);
    return t;
}

pith_tensor *operand_to_tensor(pith_module_state *st, PyObject *obj, int *not_implemented)
{
    bool maybe = false;
    return operand_convert(st, obj, not_implemented, &maybe);
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

/* ---- the function layer ---- */

/* What the function layer's handlers get as func for each operator slot: PyTorch's names,
 * whose operators are partly C methods named after the op (x + y is Tensor.add), partly
 * Python functions named after the slot (x // y is Tensor.__floordiv__). A reflected call
 * (2 - x, Python's nb_subtract(2, x)) passes (x, 2), as PyTorch's __rsub__ does. The rows
 * are Python's binary slots, named as the generated slot functions are
 * (generated/number_slots.inc), and the others of tensor_number.c. PyTorch's __rdiv__ is
 * pith's __rtruediv__. See Note [Function layer] (function_layer.c). */
static const struct {
    const char *slot, *forward, *reflected;
} slot_funcs[] = {
    {"tensor_nb_add", "add", "add"},
    {"tensor_nb_subtract", "sub", "__rsub__"},
    {"tensor_nb_multiply", "mul", "mul"},
    {"tensor_nb_true_divide", "div", "__rtruediv__"},
    {"tensor_nb_floor_divide", "__floordiv__", "__rfloordiv__"},
    {"tensor_nb_remainder", "remainder", "__rmod__"},
    {"tensor_nb_power", "pow", "__rpow__"},
    {"tensor_nb_matrix_multiply", "matmul", "matmul"},
    {"tensor_nb_and", "__and__", "bitwise_and"},
    {"tensor_nb_or", "__or__", "bitwise_or"},
    {"tensor_nb_xor", "__xor__", "bitwise_xor"},
    {"tensor_nb_lshift", "__lshift__", "__rlshift__"},
    {"tensor_nb_rshift", "__rshift__", "__rrshift__"},
    {"tensor_nb_inplace_add", "add_", NULL},
    {"tensor_nb_inplace_subtract", "sub_", NULL},
    {"tensor_nb_inplace_multiply", "mul_", NULL},
    {"tensor_nb_inplace_true_divide", "div_", NULL},
    {"tensor_nb_inplace_floor_divide", "floor_divide_", NULL},
    {"tensor_nb_inplace_remainder", "remainder_", NULL},
    {"tensor_nb_inplace_power", "pow_", NULL},
    {"tensor_nb_inplace_matrix_multiply", "matmul", NULL},
    {"tensor_nb_inplace_and", "__iand__", NULL},
    {"tensor_nb_inplace_or", "__ior__", NULL},
    {"tensor_nb_inplace_xor", "__ixor__", NULL},
    {"tensor_nb_inplace_lshift", "__ilshift__", NULL},
    {"tensor_nb_inplace_rshift", "__irshift__", NULL},
    {"tensor_richcompare", NULL, NULL}, /* by the comparison: richcompare_funcs */
};

static const char *const richcompare_funcs[] = {
    [Py_LT] = "lt", [Py_LE] = "le", [Py_EQ] = "__eq__",
    [Py_NE] = "ne", [Py_GT] = "gt", [Py_GE] = "ge",
};

/* The function layer of an operator whose operands may call for it: 1 when it ran
 * (*result set, NULL with an exception), 0 when the operator goes on. */
static int operator_function_layer(pith_module_state *st, const char *slot, int compare,
                                   PyObject *a, PyObject *b, PyObject **result)
{
    const char *name = NULL;
    bool reflected = b && compare < 0 && !tensor_check(st, a);
    for (size_t i = 0; !name && i < sizeof slot_funcs / sizeof *slot_funcs; i++)
        if (strcmp(slot_funcs[i].slot, slot) == 0)
            name = compare >= 0 ? richcompare_funcs[compare]
                   : reflected  ? slot_funcs[i].reflected
                                : slot_funcs[i].forward;
    if (!name) {
        *result = PyErr_Format(PyExc_SystemError, "pith: %s has no function for the function "
                               "layer", slot);
        return 1;
    }
    PyObject *items[2] = {reflected ? b : a, reflected ? a : b};
    return function_layer_call(st, NULL, name, items, b ? 2 : 1, NULL, result);
}

/* Converts both operands; returns 0 on success, 1 for NotImplemented, -1 on error; *maybe
 * as operand_convert's. */
static int operands_convert(pith_module_state *st, PyObject *a, PyObject *b,
                            pith_tensor **ta, pith_tensor **tb, bool *maybe)
{
    int ni;
    *ta = operand_convert(st, a, &ni, maybe);
    if (!*ta)
        return ni ? 1 : -1;
    *tb = operand_convert(st, b, &ni, maybe);
    if (!*tb) {
        pith_release(*ta);
        return ni ? 1 : -1;
    }
    return 0;
}

/* The function layer of an operator whose operands were converted with `rc` (0, or 1 for
 * NotImplemented) and `maybe` set: 1 when it ran (*result set, and the operands released),
 * 0 when the operator goes on. */
static int operands_function_layer(pith_module_state *st, const char *slot, int compare,
                                   PyObject *a, PyObject *b, int rc, pith_tensor *ta,
                                   pith_tensor *tb, PyObject **result)
{
    if (!operator_function_layer(st, slot, compare, a, b, result))
        return 0;
    if (rc == 0) {
        pith_release(ta);
        pith_release(tb);
    }
    return 1;
}

/* `slot` is the calling slot function's name, for the function layer. */
static PyObject *binary_call_in(PyObject *a, PyObject *b, binary_fn fn, const char *slot,
                                int compare)
{
    pith_module_state *st = state_of_operands(a, b);
    if (!st)
        Py_RETURN_NOTIMPLEMENTED;
    pith_tensor *ta, *tb, *out;
    bool maybe = function_modes_maybe();
    int rc = operands_convert(st, a, b, &ta, &tb, &maybe);
    PyObject *result;
    if (rc < 0)
        return NULL;
    if (maybe && operands_function_layer(st, slot, compare, a, b, rc, ta, tb, &result))
        return result;
    if (rc > 0)
        Py_RETURN_NOTIMPLEMENTED;
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
static PyObject *inplace_call_in(PyObject *a, PyObject *b, inplace_fn fn, const char *slot)
{
    pith_module_state *st = state_of_operands(a, b);
    if (!st || !tensor_check(st, a))
        Py_RETURN_NOTIMPLEMENTED;
    pith_tensor *ta, *tb;
    bool maybe = function_modes_maybe();
    int rc = operands_convert(st, a, b, &ta, &tb, &maybe);
    PyObject *result;
    if (rc < 0)
        return NULL;
    if (maybe && operands_function_layer(st, slot, -1, a, b, rc, ta, tb, &result))
        return result;
    if (rc > 0)
        Py_RETURN_NOTIMPLEMENTED;
    pith_status status;
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

/* The slot functions name themselves (__func__) for the function layer's slot_funcs. */
#define binary_call(a, b, fn) binary_call_in(a, b, fn, __func__, -1)
#define inplace_call(a, b, fn) inplace_call_in(a, b, fn, __func__)

/* tensor_nb_<slot> and tensor_nb_inplace_<slot> of every op with a number_slot in the op
 * file, each a binary_call or inplace_call of the op's public C function. */
#define PITH_NUMBER_SLOT_FUNCTIONS
#include "generated/number_slots.inc"
#undef PITH_NUMBER_SLOT_FUNCTIONS

PyObject *tensor_nb_matrix_multiply(PyObject *a, PyObject *b)
{
    pith_module_state *st = state_of_operands(a, b);
    if (!st || (!tensor_check(st, a) && !function_tensor_like(st, a)) ||
        (!tensor_check(st, b) && !function_tensor_like(st, b)))
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

static PyObject *unary_call(PyObject *self, pith_tensor *(*fn)(const pith_tensor *),
                            const char *func_name)
{
    PyObject *result;
    if (function_self_maybe(self) &&
        function_layer_method(self, func_name, &self, 1, NULL, &result))
        return result;
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

PyObject *tensor_nb_negative(PyObject *self) { return unary_call(self, pith_neg, "neg"); }
PyObject *tensor_nb_absolute(PyObject *self) { return unary_call(self, pith_abs, "abs"); }
PyObject *tensor_nb_invert(PyObject *self)
{
    return unary_call(self, pith_bitwise_not, "__invert__");
}

/* The function layer of a slot that converts self to a Python value (bool(), float() ...):
 * See Note [Function layer] (function_layer.c). */
#define SELF_FUNCTION_LAYER(self, func_name, result)                                         \
    (function_self_maybe(self) && function_layer_method(self, func_name, &(self), 1, NULL,    \
                                                        &(result)))

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
    PyObject *result;
    if (SELF_FUNCTION_LAYER(self, "__bool__", result)) {
        int truth = result ? PyObject_IsTrue(result) : -1;
        Py_XDECREF(result);
        return truth;
    }
    double v;
    if (single_value(self, PyExc_RuntimeError,
                     "Boolean value of Tensor with more than one value is ambiguous", &v) < 0)
        return -1;
    return v != 0.0 || isnan(v);
}

PyObject *tensor_nb_float(PyObject *self)
{
    PyObject *result;
    if (SELF_FUNCTION_LAYER(self, "__float__", result))
        return result;
    double v;
    if (single_value(self, PyExc_ValueError,
                     "only one element tensors can be converted to Python scalars", &v) < 0)
        return NULL;
    return PyFloat_FromDouble(v);
}

static PyObject *tensor_int_value(PyObject *self);

PyObject *tensor_nb_int(PyObject *self)
{
    PyObject *result;
    if (SELF_FUNCTION_LAYER(self, "__int__", result))
        return result;
    return tensor_int_value(self);
}

/* int(x) and the value of index(x), once the function layer had its say. */
static PyObject *tensor_int_value(PyObject *self)
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
    PyObject *result;
    if (SELF_FUNCTION_LAYER(self, "__index__", result))
        return result;
    pith_tensor *t = tensor_of(self);
    if (pith_numel(t) != 1 || !pith_dtype_is_integral(pith_tensor_dtype(t), true)) {
        PyErr_SetString(PyExc_TypeError,
                        "only integer tensors of a single element can be converted to an index");
        return NULL;
    }
    return tensor_int_value(self);
}

/* ---- comparisons ---- */

PyObject *tensor_richcompare(PyObject *a, PyObject *b, int op)
{
    static const binary_fn fns[] = {
        [Py_LT] = pith_lt, [Py_LE] = pith_le, [Py_EQ] = pith_eq,
        [Py_NE] = pith_ne, [Py_GT] = pith_gt, [Py_GE] = pith_ge,
    };
    return binary_call_in(a, b, fns[op], __func__, op);
}
