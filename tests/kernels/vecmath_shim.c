/* vecmath_shim.c — lets the C++ vectorised-math tests make a wrapped number (a Python scalar
 * operand: See Note [Pow with a scalar exponent]), whose flag lives in core/tensor.h behind
 * C11 atomics that C++ cannot include. */
#include "core/tensor.h"
#include "pith/pith.h"

/* A 0-dim float64 tensor of `value` marked as a wrapped number. */
pith_tensor *shim_wrapped_number(double value)
{
    pith_tensor *t = pith_full(0, NULL, value, PITH_FLOAT64);
    if (t)
        t->flags |= PITH_TENSOR_WRAPPED_NUMBER;
    return t;
}
