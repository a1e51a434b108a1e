/* promotion.h — PyTorch's type promotion: promote_types for two dtypes, result_type over
 * operands of different priority (dimensioned tensors, 0-dim tensors, wrapped numbers),
 * and can_cast for out= and in-place results. The rules are in Note [Type promotion]
 * (promotion.c); the oracle is shared/data/promotion.csv. */
#ifndef PITH_KERNELS_PROMOTION_H
#define PITH_KERNELS_PROMOTION_H

#include <stdbool.h>

#include "core/dtype.h"
#include "core/tensor.h"
#include "dispatch/value.h"

/* The dtype that Python floats become when they win promotion (torch.get_default_dtype). */
#define PITH_DEFAULT_FLOAT (pith_get_default_dtype())

/* The running state of result_type: the promoted dtype of each priority class, or -1 while
 * that class has no operand. */
typedef struct {
    int dimensioned;
    int zero_dim;
    int wrapped;
} promotion_state;

void promotion_init(promotion_state *state);
/* Adds a tensor operand: dimensioned, 0-dim, or a wrapped number (PITH_TENSOR_WRAPPED_NUMBER). */
void promotion_add_tensor(promotion_state *state, const pith_tensor *t);
/* Adds a Python-number operand (a `Scalar` argument): it promotes like a wrapped number.
 * A None scalar is ignored. */
void promotion_add_scalar(promotion_state *state, pith_scalar value);
/* The result dtype; PITH_BOOL when no operand was added. */
pith_dtype promotion_result(const promotion_state *state);

/* result_type of two tensor operands. The common case is inline: equal dtypes and no
 * wrapped number give that dtype whatever the priority classes (joining a dtype with
 * itself changes nothing), so only mixed operands take the general rules. */
pith_dtype result_type_of2_general(const pith_tensor *a, const pith_tensor *b);
static inline pith_dtype result_type_of2(const pith_tensor *a, const pith_tensor *b)
{
    if (a->dtype == b->dtype && !((a->flags | b->flags) & PITH_TENSOR_WRAPPED_NUMBER))
        return a->dtype;
    return result_type_of2_general(a, b);
}

/* torch.can_cast: whether a value of `from` may be written to an out= or in-place tensor of
 * `to` (no float to integer, no non-bool to bool). */
bool dtype_can_cast(pith_dtype from, pith_dtype to);

#endif /* PITH_KERNELS_PROMOTION_H */
