/* elementwise_arith.c — the loops and descriptions of the arithmetic binary ops: add, sub,
 * mul, div, floor_divide, remainder, pow, maximum, minimum. Integer results wrap
 * (computed in the unsigned type U); 16-bit floats compute in float; integer division
 * never traps (binary_run rejects zero divisors first, and the loops guard anyway). */
#include "kernels/elementwise_loops.h"
#include "kernels/elementwise_ops.h"

#define ALL_TABLE(name)                                                                     \
    static const elementwise_loop name##_loops[PITH_NUM_DTYPES] = {EW_TAGS_ALL(EW_LOOP_ENTRY, name)}
#define INT_AND_FLOAT_TABLE(name)                                                           \
    static const elementwise_loop name##_loops[PITH_NUM_DTYPES] = {                         \
        EW_TAGS_INT(EW_LOOP_ENTRY, name) EW_TAGS_FLOAT(EW_LOOP_ENTRY, name)}

/* Loops of add and sub with alpha != 1; ctx is an elementwise_scalar. */
#define ALPHA_LOOP(tag, name, prologue, expr) EW_BINARY_LOOP(name##_##tag, tag, tag, prologue, expr)
#define ALPHA_BOOL const bool alpha = ((const elementwise_scalar *)ctx)->i != 0
#define ALPHA_INT const T alpha = (T)((const elementwise_scalar *)ctx)->i
#define ALPHA_FLOAT const T alpha = (T)((const elementwise_scalar *)ctx)->d

/* ---- add, sub, mul, div ---- */

EW_BINARY_SAME(b, add, a || b)
EW_TAGS_INT(EW_BINARY_SAME, add, (T)((U)a + (U)b))
EW_TAGS_FLOAT(EW_BINARY_SAME, add, a + b)
ALL_TABLE(add);
ALPHA_LOOP(b, add_alpha, ALPHA_BOOL, a || (alpha && b))
EW_TAGS_INT(ALPHA_LOOP, add_alpha, ALPHA_INT, (T)((U)a + (U)alpha * (U)b))
EW_TAGS_FLOAT(ALPHA_LOOP, add_alpha, ALPHA_FLOAT, a + alpha * b)
ALL_TABLE(add_alpha);
const binary_def binary_add = {"add", RULE_PROMOTED, add_loops, add_alpha_loops, NULL, false,
                               false};

/* PyTorch's sub_check: bool operands get a pointer to the operator that was meant. */
static pith_status sub_check(const pith_tensor *self, const pith_tensor *other,
                             pith_dtype compute)
{
    if (self->dtype == PITH_BOOL && other->dtype == PITH_BOOL)
        return pith_set_error(PITH_ERR_TYPE,
                              "sub: Subtraction, the `-` operator, with two bool tensors is not "
                              "supported. Use the `^` or `logical_xor()` operator instead.");
    if (self->dtype == PITH_BOOL || other->dtype == PITH_BOOL)
        return pith_set_error(PITH_ERR_TYPE,
                              "sub: Subtraction, the `-` operator, with a bool tensor is not "
                              "supported. If you are trying to invert a mask, use the `~` or "
                              "`logical_not()` operator instead.");
    return PITH_OK;
}
EW_TAGS_INT(EW_BINARY_SAME, sub, (T)((U)a - (U)b))
EW_TAGS_FLOAT(EW_BINARY_SAME, sub, a - b)
INT_AND_FLOAT_TABLE(sub);
EW_TAGS_INT(ALPHA_LOOP, sub_alpha, ALPHA_INT, (T)((U)a - (U)alpha * (U)b))
EW_TAGS_FLOAT(ALPHA_LOOP, sub_alpha, ALPHA_FLOAT, a - alpha * b)
INT_AND_FLOAT_TABLE(sub_alpha);
const binary_def binary_sub = {"sub", RULE_PROMOTED, sub_loops, sub_alpha_loops, sub_check,
                               false, false};

EW_BINARY_SAME(b, mul, a && b)
EW_TAGS_INT(EW_BINARY_SAME, mul, (T)((U)a * (U)b))
EW_TAGS_FLOAT(EW_BINARY_SAME, mul, a * b)
ALL_TABLE(mul);
const binary_def binary_mul = {"mul", RULE_PROMOTED, mul_loops, NULL, NULL, false, true};

/* True division: integers and bool divide in the default float dtype. */
EW_TAGS_FLOAT(EW_BINARY_SAME, div, a / b)
static const elementwise_loop div_loops[PITH_NUM_DTYPES] = {EW_TAGS_FLOAT(EW_LOOP_ENTRY, div)};
const binary_def binary_div = {"div", RULE_FLOAT, div_loops, NULL, NULL, false, true};

/* ---- floor_divide and remainder: Python semantics ---- */

/* Signed integers go through int64 (narrower results wrap when cast back): the quotient
 * rounds towards -inf, the remainder takes the divisor's sign, x / -1 is a wrapping
 * negation and x % -1 is 0 (so INT64_MIN / -1 never traps). */
static inline int64_t floor_divide_int(int64_t a, int64_t b)
{
    if (b == 0)
        return 0;
    if (b == -1)
        return (int64_t)(0u - (uint64_t)a);
    int64_t q = a / b, r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? q - 1 : q;
}
static inline int64_t remainder_int(int64_t a, int64_t b)
{
    if (b == 0 || b == -1)
        return 0;
    int64_t r = a % b;
    return (r != 0 && (r < 0) != (b < 0)) ? r + b : r;
}

/* PyTorch's div_floor_floating and the float remainder (c10/util/generic_math.h). */
#define FLOAT_DIVISION_HELPERS(type, suffix)                                                \
    static inline type floor_divide_##suffix(type a, type b)                                \
    {                                                                                       \
        if (b == 0)                                                                         \
            return a / b;                                                                   \
        type mod = EW_MATH2(fmod, a, b);                                                    \
        type div = (a - mod) / b;                                                           \
        if (mod != 0 && (b < 0) != (mod < 0))                                               \
            div -= 1;                                                                       \
        if (div == 0)                                                                       \
            return EW_MATH2(copysign, (type)0, a / b);                                      \
        type floored = EW_MATH(floor, div);                                                 \
        return div - floored > (type)0.5 ? floored + 1 : floored;                           \
    }                                                                                       \
    static inline type remainder_##suffix(type a, type b)                                   \
    {                                                                                       \
        type mod = EW_MATH2(fmod, a, b);                                                    \
        return (mod != 0 && (b < 0) != (mod < 0)) ? mod + b : mod;                          \
    }
FLOAT_DIVISION_HELPERS(float, float)
FLOAT_DIVISION_HELPERS(double, double)
#define FLOAT_HELPER(name, a, b) _Generic((a), float: name##_float, default: name##_double)(a, b)

EW_BINARY_SAME(u8, floor_divide, b == 0 ? 0 : a / b)
EW_TAGS_SIGNED(EW_BINARY_SAME, floor_divide, (T)floor_divide_int(a, b))
EW_TAGS_FLOAT(EW_BINARY_SAME, floor_divide, FLOAT_HELPER(floor_divide, a, b))
INT_AND_FLOAT_TABLE(floor_divide);
const binary_def binary_floor_divide = {"floor_divide", RULE_PROMOTED, floor_divide_loops,
                                        NULL, NULL, true, true};

EW_BINARY_SAME(u8, remainder, b == 0 ? 0 : a % b)
EW_TAGS_SIGNED(EW_BINARY_SAME, remainder, (T)remainder_int(a, b))
EW_TAGS_FLOAT(EW_BINARY_SAME, remainder, FLOAT_HELPER(remainder, a, b))
INT_AND_FLOAT_TABLE(remainder);
const binary_def binary_remainder = {"remainder", RULE_PROMOTED, remainder_loops, NULL, NULL,
                                     true, false};

/* ---- pow ---- */

/* Integer powers by squaring, wrapping mod 2^64 (the low bits are right for every
 * narrower type). Negative exponents give what PyTorch's powi gives: 1 for a base of 1,
 * +-1 for -1, else 0. */
static inline int64_t pow_int(int64_t a, int64_t b)
{
    if (b < 0)
        return a == 1 ? 1 : a == -1 ? ((b & 1) ? -1 : 1) : 0;
    uint64_t base = (uint64_t)a, result = 1;
    for (uint64_t e = (uint64_t)b; e; e >>= 1) {
        if (e & 1)
            result *= base;
        base *= base;
    }
    return (int64_t)result;
}

/* A Python int exponent (a wrapped number) that is negative is PyTorch's pow.Tensor_Scalar
 * error for integer results; tensor exponents follow pow_int. */
static pith_status pow_check(const pith_tensor *self, const pith_tensor *other,
                             pith_dtype compute)
{
    /* bool ** bool: PyTorch computes it only for a Python bool exponent (its
     * pow.Tensor_Scalar fills ones for False and copies for True); a bool tensor exponent
     * is its "not implemented for 'Bool'". */
    if (compute == PITH_BOOL && !(other->flags & PITH_TENSOR_WRAPPED_NUMBER))
        return pith_set_error(PITH_ERR_TYPE, "pow: not implemented for dtype bool");
    const char *data = tensor_data(other);
    if (!dtype_is_integral(compute) || !(other->flags & PITH_TENSOR_WRAPPED_NUMBER) ||
        other->numel != 1 || !data || dtype_is_floating(other->dtype))
        return PITH_OK;
    if (dtype_load_int64(other->dtype, data) < 0)
        return pith_set_error(PITH_ERR_VALUE,
                              "pow: Integers to negative integer powers are not allowed.");
    return PITH_OK;
}

EW_BINARY_SAME(b, pow, a || !b)
EW_TAGS_INT(EW_BINARY_SAME, pow, (T)pow_int(a, b))
EW_TAGS_FLOAT(EW_BINARY_SAME, pow, EW_MATH2(pow, a, b))
ALL_TABLE(pow);
const binary_def binary_pow = {"pow", RULE_PROMOTED, pow_loops, NULL, pow_check, false,
                               false};

/* ---- maximum, minimum: NaN wins ---- */

EW_BINARY_SAME(b, maximum, a || b)
EW_TAGS_INT(EW_BINARY_SAME, maximum, a < b ? b : a)
EW_TAGS_FLOAT(EW_BINARY_SAME, maximum, a != a ? a : b != b ? b : a < b ? b : a)
ALL_TABLE(maximum);
const binary_def binary_maximum = {"maximum", RULE_PROMOTED, maximum_loops, NULL, NULL, false,
                                   false};

EW_BINARY_SAME(b, minimum, a && b)
EW_TAGS_INT(EW_BINARY_SAME, minimum, b < a ? b : a)
EW_TAGS_FLOAT(EW_BINARY_SAME, minimum, a != a ? a : b != b ? b : b < a ? b : a)
ALL_TABLE(minimum);
const binary_def binary_minimum = {"minimum", RULE_PROMOTED, minimum_loops, NULL, NULL, false,
                                   false};
