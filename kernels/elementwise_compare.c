/* elementwise_compare.c — the loops and descriptions of the comparison, logical and bitwise
 * binary ops. Comparisons compute in the promoted dtype and return bool (NaN compares
 * unequal to everything); so do logical ops, which test the operands converted to that
 * dtype (PyTorch: a 0-dim int16 256 beside a uint8 tensor is 0, false); bitwise ops take
 * bool and integers only. */
#include "kernels/elementwise_loops.h"
#include "kernels/elementwise_ops.h"

#define COMPARISON(name, expr)                                                              \
    EW_TAGS_ALL(EW_BINARY_TO_BOOL, name, expr)                                              \
    static const elementwise_loop name##_loops[PITH_NUM_DTYPES] = {                         \
        EW_TAGS_ALL(EW_LOOP_ENTRY, name)};                                                  \
    const binary_def binary_##name = {#name, RULE_TO_BOOL, name##_loops, NULL, NULL,      \
                                      false, false, NULL};

COMPARISON(eq, a == b)
COMPARISON(ne, a != b)
COMPARISON(lt, a < b)
COMPARISON(le, a <= b)
COMPARISON(gt, a > b)
COMPARISON(ge, a >= b)

COMPARISON(logical_and, a && b)
COMPARISON(logical_or, a || b)

#define BITWISE(name, bool_expr, int_expr)                                                  \
    EW_BINARY_SAME(b, name, bool_expr)                                                      \
    EW_TAGS_INT(EW_BINARY_SAME, name, int_expr)                                             \
    static const elementwise_loop name##_loops[PITH_NUM_DTYPES] = {                         \
        EW_LOOP_ENTRY(b, name) EW_TAGS_INT(EW_LOOP_ENTRY, name)};                           \
    const binary_def binary_##name = {#name, RULE_PROMOTED, name##_loops, NULL, NULL,     \
                                      false, false, NULL};

BITWISE(bitwise_and, a && b, (T)((U)a & (U)b))
BITWISE(bitwise_or, a || b, (T)((U)a | (U)b))
BITWISE(bitwise_xor, a != b, (T)((U)a ^ (U)b))
