/* promotion.c — type promotion as PyTorch does it (see promotion.h). */
#include "kernels/promotion.h"

/* Note [Type promotion]
 * promote_types(a, b) is the lattice join of two dtypes (core/dtype.c, Note
 * [promote_types]).
 *
 * result_type over operands follows c10's ResultTypeState: each operand joins one of
 * three priority classes, dimensioned tensors > 0-dim tensors > wrapped numbers (Python
 * scalars), and a class of lower priority changes the result only when it is of a higher
 * category (bool < integer < floating) than the classes above it. In that case its own
 * dtype is joined in, so int32 tensor + 0-dim float64 tensor is float64, while a wrapped
 * Python float joins as the default dtype (float32): int32 tensor + 2.5 is float32.
 * A wrapped number keeps int64 (Python int) or bool (Python bool). */

static int promote_join(int acc, pith_dtype d)
{
    return acc < 0 ? (int)d : (int)dtype_promote((pith_dtype)acc, d);
}

void promotion_init(promotion_state *state)
{
    state->dimensioned = state->zero_dim = state->wrapped = -1;
}

void promotion_add_tensor(promotion_state *state, const pith_tensor *t)
{
    pith_dtype d = t->dtype;
    bool wrapped = (t->flags & PITH_TENSOR_WRAPPED_NUMBER) != 0;
    if (wrapped && dtype_is_floating(d))
        d = PITH_DEFAULT_FLOAT;
    if (t->ndim > 0)
        state->dimensioned = promote_join(state->dimensioned, d);
    else if (wrapped)
        state->wrapped = promote_join(state->wrapped, d);
    else
        state->zero_dim = promote_join(state->zero_dim, d);
}

void promotion_add_scalar(promotion_state *state, pith_scalar value)
{
    switch (value.kind) {
    case PITH_SCALAR_BOOL:
        state->wrapped = promote_join(state->wrapped, PITH_BOOL);
        break;
    case PITH_SCALAR_INT:
        state->wrapped = promote_join(state->wrapped, PITH_INT64);
        break;
    case PITH_SCALAR_DOUBLE:
        state->wrapped = promote_join(state->wrapped, PITH_DEFAULT_FLOAT);
        break;
    case PITH_SCALAR_NONE:
        break;
    }
}

/* c10's combine_categories: `higher` is the class of higher priority (or -1). */
static int categories_combine(int higher, int lower)
{
    if (higher < 0)
        return lower;
    if (lower < 0 || dtype_is_floating((pith_dtype)higher))
        return higher;
    if (higher == PITH_BOOL || dtype_is_floating((pith_dtype)lower))
        return (int)dtype_promote((pith_dtype)higher, (pith_dtype)lower);
    return higher;
}

pith_dtype promotion_result(const promotion_state *state)
{
    int r = categories_combine(state->dimensioned,
                               categories_combine(state->zero_dim, state->wrapped));
    return r < 0 ? PITH_BOOL : (pith_dtype)r;
}

pith_dtype result_type_of2_general(const pith_tensor *a, const pith_tensor *b)
{
    promotion_state state;
    promotion_init(&state);
    promotion_add_tensor(&state, a);
    promotion_add_tensor(&state, b);
    return promotion_result(&state);
}

bool dtype_can_cast(pith_dtype from, pith_dtype to)
{
    if (dtype_is_floating(from) && !dtype_is_floating(to) && to != PITH_BOOL)
        return false;
    if (from != PITH_BOOL && to == PITH_BOOL)
        return false;
    return true;
}
