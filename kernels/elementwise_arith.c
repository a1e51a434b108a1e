/* elementwise_arith.c — the loops and descriptions of the arithmetic binary ops: add, sub,
 * mul, div, floor_divide, remainder, pow, maximum, minimum. Integer results wrap
 * (computed in the unsigned type U); 16-bit floats compute in float; integer division
 * never traps (binary_run rejects zero divisors first, and the loops guard anyway). */
#include <string.h>

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
                               false, NULL};

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
                               false, false, NULL};

EW_BINARY_SAME(b, mul, a && b)
EW_TAGS_INT(EW_BINARY_SAME, mul, (T)((U)a * (U)b))
EW_TAGS_FLOAT(EW_BINARY_SAME, mul, a * b)
ALL_TABLE(mul);
const binary_def binary_mul = {"mul", RULE_PROMOTED, mul_loops, NULL, NULL, false, true, NULL};

/* True division: integers and bool divide in the default float dtype. */
EW_TAGS_FLOAT(EW_BINARY_SAME, div, a / b)
static const elementwise_loop div_loops[PITH_NUM_DTYPES] = {EW_TAGS_FLOAT(EW_LOOP_ENTRY, div)};
const binary_def binary_div = {"div", RULE_FLOAT, div_loops, NULL, NULL, false, true, NULL};

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
                                        NULL, NULL, true, true, NULL};

EW_BINARY_SAME(u8, remainder, b == 0 ? 0 : a % b)
EW_TAGS_SIGNED(EW_BINARY_SAME, remainder, (T)remainder_int(a, b))
EW_TAGS_FLOAT(EW_BINARY_SAME, remainder, FLOAT_HELPER(remainder, a, b))
INT_AND_FLOAT_TABLE(remainder);
const binary_def binary_remainder = {"remainder", RULE_PROMOTED, remainder_loops, NULL, NULL,
                                     true, false, NULL};

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
/* Floats: vectorised (See Note [Vectorised math functions]); 16-bit floats through float32. */
#define POW_VECMATH_LOOP(tag, unused)                                                       \
    static int pow_##tag(char **args, const int64_t *n, const int64_t *s, void *ctx)        \
    {                                                                                       \
        (void)ctx;                                                                          \
        return vecmath_pow_loop_##tag(args, n, s);                                          \
    }
EW_TAGS_FLOAT(POW_VECMATH_LOOP, 0)
ALL_TABLE(pow);

/* Note [Pow with a scalar exponent]
 * x ** c for a Python number c (a wrapped number; a 0-dim tensor exponent is a tensor and
 * takes pow, as in PyTorch's pow.Tensor_Tensor) follows PyTorch's pow.Tensor_Scalar:
 * - c == 0 gives ones and c == 1 a copy, for every dtype (pow_out);
 * - float32, float64 and bfloat16: 0.5 is sqrt (so (-0.0) ** 0.5 is -0.0, and -inf ** 0.5
 *   is NaN), -0.5 is rsqrt, -1 the reciprocal, and 2, 3 and -2 are x*x, x*x*x and 1/(x*x)
 *   in the tensor's dtype: bfloat16 rounds after each product, as its operators do
 *   (pow_tensor_scalar_kernel);
 * - float16 takes pow for every other c, as PyTorch's Half path does;
 * - any other c is pow by one exponent, which the wrapped number's conversion has rounded
 *   to the tensor's dtype first.
 * The loops read c from their stride-0 operand; integer dtypes keep pow_int. */
static void ones_f32(float *out, const float *in, int64_t n)
{
    (void)in;
    for (int64_t i = 0; i < n; i++)
        out[i] = 1.0f;
}
static void ones_f64(double *out, const double *in, int64_t n)
{
    (void)in;
    for (int64_t i = 0; i < n; i++)
        out[i] = 1.0;
}
static void copy_f32(float *out, const float *in, int64_t n)
{
    memmove(out, in, (size_t)n * sizeof *out);
}
static void copy_f64(double *out, const double *in, int64_t n)
{
    memmove(out, in, (size_t)n * sizeof *out);
}
static inline float round_to_bfloat16(float x)
{
    return bfloat16_to_float(float_to_bfloat16(x));
}
/* bfloat16's x * x * x and 1 / (x * x), rounded after each product (then once more, exactly,
 * into the output). */
static void cube_bfloat16(float *out, const float *in, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = round_to_bfloat16(in[i] * in[i]) * in[i];
}
static void reciprocal_square_bfloat16(float *out, const float *in, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        out[i] = 1.0f / round_to_bfloat16(in[i] * in[i]);
}

/* The function for pow(x, c) by value, or NULL for pow itself. `half_rules` is float16's:
 * only 0 and 1. */
#define POW_SCALAR_FUNCTION(suffix, T)                                                      \
    static vecmath_##suffix pow_scalar_function_##suffix(T c, bool half_rules)             \
    {                                                                                       \
        const vecmath_table *t = vecmath_active();                                          \
        if (c == 0)                                                                         \
            return ones_##suffix;                                                           \
        if (c == 1)                                                                         \
            return copy_##suffix;                                                           \
        if (half_rules)                                                                     \
            return NULL;                                                                    \
        if (c == (T)0.5)                                                                    \
            return t->sqrt_##suffix;                                                        \
        if (c == (T)-0.5)                                                                   \
            return t->rsqrt_##suffix;                                                       \
        if (c == -1)                                                                        \
            return t->reciprocal_##suffix;                                                  \
        if (c == 2)                                                                         \
            return t->square_##suffix;                                                      \
        if (c == 3)                                                                         \
            return t->cube_##suffix;                                                        \
        if (c == -2)                                                                        \
            return t->reciprocal_square_##suffix;                                           \
        return NULL;                                                                        \
    }
POW_SCALAR_FUNCTION(f32, float)
POW_SCALAR_FUNCTION(f64, double)

static int pow_scalar_f32(char **args, const int64_t *n, const int64_t *s, void *ctx)
{
    vecmath_f32 fn = s[2] == 0 ? pow_scalar_function_f32(*(const float *)args[2], false) : NULL;
    return fn ? vecmath_loop_f32(fn, args, n, s) : pow_f32(args, n, s, ctx);
}
static int pow_scalar_f64(char **args, const int64_t *n, const int64_t *s, void *ctx)
{
    vecmath_f64 fn = s[2] == 0 ? pow_scalar_function_f64(*(const double *)args[2], false) : NULL;
    return fn ? vecmath_loop_f64(fn, args, n, s) : pow_f64(args, n, s, ctx);
}
static int pow_scalar_f16(char **args, const int64_t *n, const int64_t *s, void *ctx)
{
    float c = half_to_float(*(const pith_half *)args[2]);
    vecmath_f32 fn = s[2] == 0 ? pow_scalar_function_f32(c, true) : NULL;
    return fn ? vecmath_loop_f16(fn, args, n, s) : pow_f16(args, n, s, ctx);
}
static int pow_scalar_bf16(char **args, const int64_t *n, const int64_t *s, void *ctx)
{
    float c = bfloat16_to_float(*(const pith_bfloat16 *)args[2]);
    vecmath_f32 fn = NULL;
    if (s[2] == 0)
        fn = c == 3 ? cube_bfloat16 : c == -2 ? reciprocal_square_bfloat16
                                              : pow_scalar_function_f32(c, false);
    return fn ? vecmath_loop_bf16(fn, args, n, s) : pow_bf16(args, n, s, ctx);
}
static const elementwise_loop pow_scalar_loops[PITH_NUM_DTYPES] = {
    [PITH_FLOAT16] = pow_scalar_f16, [PITH_BFLOAT16] = pow_scalar_bf16,
    [PITH_FLOAT32] = pow_scalar_f32, [PITH_FLOAT64] = pow_scalar_f64};

const binary_def binary_pow = {"pow", RULE_PROMOTED, pow_loops, NULL, pow_check, false,
                               false, pow_scalar_loops};

/* ---- maximum, minimum: NaN wins ---- */

EW_BINARY_SAME(b, maximum, a || b)
EW_TAGS_INT(EW_BINARY_SAME, maximum, a < b ? b : a)
EW_TAGS_FLOAT(EW_BINARY_SAME, maximum, a != a ? a : b != b ? b : a < b ? b : a)
ALL_TABLE(maximum);
const binary_def binary_maximum = {"maximum", RULE_PROMOTED, maximum_loops, NULL, NULL, false,
                                   false, NULL};

EW_BINARY_SAME(b, minimum, a && b)
EW_TAGS_INT(EW_BINARY_SAME, minimum, b < a ? b : a)
EW_TAGS_FLOAT(EW_BINARY_SAME, minimum, a != a ? a : b != b ? b : b < a ? b : a)
ALL_TABLE(minimum);
const binary_def binary_minimum = {"minimum", RULE_PROMOTED, minimum_loops, NULL, NULL, false,
                                   false, NULL};
