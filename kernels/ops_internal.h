/* ops_internal.h — what kernels need from the op file (ops/ops.toml): op ids, the built-in
 * operator pointers, the typed signatures and the declarations of every kernel, all
 * generated into ops/generated/op_decls.h; and the helpers kernels return results with. */
#ifndef PITH_KERNELS_OPS_INTERNAL_H
#define PITH_KERNELS_OPS_INTERNAL_H

#include "core/error.h"
#include "core/tensor.h"
#include "dispatch/keys.h"
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

/* Note [Composites call their parts through the dispatcher]
 * A composite implicit op (reshape, flatten, contiguous, narrow, split.sizes, chunk,
 * expand_as, broadcast_to, broadcast_tensors, einsum, stack, outer, ...) takes its gradient
 * from its parts: its kernel is registered at Autograd as well as at the backends
 * (autograd/register.c), and at Autograd it must make its result by calling the ops it is
 * made of through the dispatcher, never tensor_view or a kernel of its own, so that each
 * part records its node (reshape records ViewBackward0, or CloneBackward0 and then
 * UnsafeViewBackward0, as PyTorch's does). A part that takes the composite's one tensor
 * argument is called with pith_redispatch_<part>(ks, ...), the key set the composite was
 * reached with (at Autograd, the part's autograd kernel runs); any other part (of a tensor
 * the composite made, or of one of several arguments, as expand_as's self) goes through
 * pith_call_<part>, which dispatches on that part's own arguments as PyTorch's at:: calls
 * do.
 * Where a part would only repeat the checks and geometry the composite has just computed
 * (reshape's view, narrow's slice, chunk's split), the composite makes that view itself
 * when composite_at_autograd(ks) is false: at a backend key, reached only for tensors
 * without autograd state, whose views need no history and no base (Note [Views and
 * in-place], autograd/views.c). At Autograd it calls the parts even with grad mode off, for
 * their kernels note a view's base there too. Both paths make the same tensor
 * (tests/autograd/composites_test.cc compares them); the backend one saves the second
 * check. */
static inline bool composite_at_autograd(pith_keyset ks)
{
    return (ks & PITH_KEYSET(PITH_KEY_AUTOGRAD)) != 0;
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
