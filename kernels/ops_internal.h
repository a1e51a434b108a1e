/* ops_internal.h — what kernels need from the op file (ops/ops.toml): op ids, the built-in
 * operator pointers, the typed signatures and the declarations of every kernel, all
 * generated into ops/generated/op_decls.h; and the helpers kernels return results with. */
#ifndef PITH_KERNELS_OPS_INTERNAL_H
#define PITH_KERNELS_OPS_INTERNAL_H

#include "core/error.h"
#include "core/tensor.h"
#include "ops/generated/op_decls.h"

/* Helpers for kernels: return one new tensor through `ret`. */
static inline pith_status ret_tensor(pith_value *ret, pith_tensor *t)
{
    if (!t)
        return pith_last_status() != PITH_OK ? pith_last_status() : PITH_ERR_RUNTIME;
    ret[0].kind = PITH_VALUE_TENSOR;
    ret[0].u.t = t;
    return PITH_OK;
}
/* Returns `self` (retained) through `ret`: what in-place and out= kernels return. */
static inline pith_status ret_self(pith_value *ret, const pith_tensor *self)
{
    pith_retain((pith_tensor *)self);
    ret[0].kind = PITH_VALUE_TENSOR;
    ret[0].u.t = (pith_tensor *)self;
    return PITH_OK;
}

/* For the C API's out= and in-place forms (ops/generated/api_*.c), which
 * return a status: drops the reference to the target that a successful call returned. */
static inline pith_status call_status(pith_status status, pith_value *ret)
{
    if (status == PITH_OK)
        value_clear(&ret[0]);
    return status;
}

#endif /* PITH_KERNELS_OPS_INTERNAL_H */
