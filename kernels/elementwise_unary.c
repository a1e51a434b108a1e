/* elementwise_unary.c — the loops and descriptions of the unary ops of
 * PITH_FORALL_UNARY_OPS (their kernels are generated in elementwise_ops.c). Integer
 * results wrap (computed in the unsigned type U); 16-bit floats compute in float. */
#include "kernels/elementwise_loops.h"
#include "kernels/elementwise_ops.h"

#define INT_AND_FLOAT_TABLE(name)                                                           \
    static const elementwise_loop name##_loops[PITH_NUM_DTYPES] = {                         \
        EW_TAGS_INT(EW_LOOP_ENTRY, name) EW_TAGS_FLOAT(EW_LOOP_ENTRY, name)}
#define ALL_TABLE(name)                                                                     \
    static const elementwise_loop name##_loops[PITH_NUM_DTYPES] = {EW_TAGS_ALL(EW_LOOP_ENTRY, name)}
#define FLOAT_TABLE(name)                                                                   \
    static const elementwise_loop name##_loops[PITH_NUM_DTYPES] = {                         \
        EW_TAGS_FLOAT(EW_LOOP_ENTRY, name)}

/* A float-only op computed by a vectorised math function (See Note [Vectorised math
 * functions]); under RULE_FLOAT integers and bool compute in the default float dtype. */
#define VECMATH_UNARY(name, rule)                                                           \
    EW_VECMATH_LOOPS(name, name)                                                            \
    FLOAT_TABLE(name);                                                                      \
    const unary_def unary_##name = {#name, rule, name##_loops, NULL};

/* neg: wraps for integers (neg of INT64_MIN is INT64_MIN); bool has PyTorch's message. */
EW_TAGS_INT(EW_UNARY_SAME, neg, (T)(0u - (U)a))
EW_TAGS_FLOAT(EW_UNARY_SAME, neg, -a)
INT_AND_FLOAT_TABLE(neg);
const unary_def unary_neg = {
    "neg", RULE_PROMOTED, neg_loops,
    "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to "
    "invert a mask, use the `~` or `logical_not()` operator instead."};

/* abs: not for bool (as in PyTorch); abs of the most negative integer wraps to itself. */
EW_UNARY_SAME(u8, abs, a)
EW_TAGS_SIGNED(EW_UNARY_SAME, abs, a < 0 ? (T)(0u - (U)a) : a)
EW_TAGS_FLOAT(EW_UNARY_SAME, abs, EW_MATH(fabs, a))
INT_AND_FLOAT_TABLE(abs);
const unary_def unary_abs = {"abs", RULE_PROMOTED, abs_loops, NULL};

/* sign: bool is itself; sign(NaN) is 0, as PyTorch's (0 < a) - (a < 0) gives. */
EW_UNARY_SAME(b, sign, a)
EW_UNARY_SAME(u8, sign, a != 0)
EW_TAGS_SIGNED(EW_UNARY_SAME, sign, (0 < a) - (a < 0))
EW_TAGS_FLOAT(EW_UNARY_SAME, sign, (T)((0 < a) - (a < 0)))
ALL_TABLE(sign);
const unary_def unary_sign = {"sign", RULE_PROMOTED, sign_loops, NULL};

VECMATH_UNARY(exp, RULE_FLOAT)
VECMATH_UNARY(log, RULE_FLOAT)
VECMATH_UNARY(log1p, RULE_FLOAT)

/* expm1: e^x - 1, exact near 0 where exp(x) - 1 cancels (libm's expm1, not vectorised). */
EW_TAGS_FLOAT(EW_UNARY_SAME, expm1, EW_MATH(expm1, a))
FLOAT_TABLE(expm1);
const unary_def unary_expm1 = {"expm1", RULE_FLOAT, expm1_loops, NULL};

VECMATH_UNARY(sqrt, RULE_FLOAT)
VECMATH_UNARY(rsqrt, RULE_FLOAT)
VECMATH_UNARY(sin, RULE_FLOAT)
VECMATH_UNARY(cos, RULE_FLOAT)
VECMATH_UNARY(tanh, RULE_FLOAT)
VECMATH_UNARY(sigmoid, RULE_FLOAT)
VECMATH_UNARY(erf, RULE_FLOAT)

/* relu keeps integer dtypes and propagates NaN; bool is not supported (PyTorch). */
EW_TAGS_INT(EW_UNARY_SAME, relu, a > 0 ? a : 0)
EW_TAGS_FLOAT(EW_UNARY_SAME, relu, (a > 0 || a != a) ? a : 0)
INT_AND_FLOAT_TABLE(relu);
const unary_def unary_relu = {"relu", RULE_PROMOTED, relu_loops, NULL};

/* silu is defined for floating dtypes only (PyTorch does not promote integers here). */
VECMATH_UNARY(silu, RULE_PROMOTED)

/* logical_not reads its input as bool (x != 0, NaN is true). */
EW_UNARY_SAME(b, logical_not, !a)
static const elementwise_loop logical_not_loops[PITH_NUM_DTYPES] = {
    EW_LOOP_ENTRY(b, logical_not)};
const unary_def unary_logical_not = {"logical_not", RULE_LOGICAL, logical_not_loops, NULL};

EW_UNARY_SAME(b, bitwise_not, !a)
EW_TAGS_INT(EW_UNARY_SAME, bitwise_not, (T)~(U)a)
static const elementwise_loop bitwise_not_loops[PITH_NUM_DTYPES] = {
    EW_LOOP_ENTRY(b, bitwise_not) EW_TAGS_INT(EW_LOOP_ENTRY, bitwise_not)};
const unary_def unary_bitwise_not = {"bitwise_not", RULE_PROMOTED, bitwise_not_loops, NULL};
