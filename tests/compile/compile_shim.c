/* compile_shim.c — what the compile tests need from inside libpith (C only): a 0-dim
 * wrapped number, as Python's `x * 0.5` makes one. */
#include "compile_shim.h"

#include <string.h>

#include "core/tensor.h"

pith_tensor *shim_wrapped_number(double value, pith_dtype dtype)
{
    pith_tensor *t = pith_full(0, NULL, value, dtype);
    if (t)
        t->flags |= PITH_TENSOR_WRAPPED_NUMBER;
    return t;
}
