/* promotion.c — type promotion as PyTorch does it (see promotion.h). */
#include "kernels/promotion.h"

/* Note [Type promotion]
 * promote_types(a, b) is the lattice join of two dtypes: bool is below everything; among
 * integers the wider wins, and uint8 with int8 meets at int16; any float beats any
 * integer; among floats the wider wins, and float16 with bfloat16 meets at float32.
 *
 * result_type over operands follows c10's ResultTypeState: each operand joins one of
 * three priority classes, dimensioned tensors > 0-dim tensors > wrapped numbers (Python
 * scalars), and a class of lower priority changes the result only when it is of a higher
 * category (bool < integer < floating) than the classes above it. In that case its own
 * dtype is joined in, so int32 tensor + 0-dim float64 tensor is float64, while a wrapped
 * Python float joins as the default dtype (float32): int32 tensor + 2.5 is float32.
 * A wrapped number keeps int64 (Python int) or bool (Python bool). */

static int dtype_category(pith_dtype d)
{
    return d == PITH_BOOL ? 0 : dtype_is_floating(d) ? 2 : 1;
}

static pith_dtype promote_types(pith_dtype a, pith_dtype b)
{
    if (a == b || b == PITH_BOOL)
        return a;
    if (a == PITH_BOOL)
        return b;
    int ca = dtype_category(a), cb = dtype_category(b);
    if (ca != cb)
        return ca > cb ? a : b;
    if (ca == 1) { /* both integers: uint8 is the only unsigned one */
        if ((a == PITH_UINT8 && b == PITH_INT8) || (a == PITH_INT8 && b == PITH_UINT8))
            return PITH_INT16;
        return a > b ? a : b; /* the enum lists the integers by width */
    }
    if ((a == PITH_FLOAT16 && b == PITH_BFLOAT16) || (a == PITH_BFLOAT16 && b == PITH_FLOAT16))
        return PITH_FLOAT32;
    return a > b ? a : b; /* float16 < bfloat16 < float32 < float64 in the enum */
}

PITH_API pith_dtype pith_promote_types(pith_dtype a, pith_dtype b)
{
    if (!dtype_valid((int)a) || !dtype_valid((int)b)) {
        pith_set_error(PITH_ERR_TYPE, "promote_types: invalid dtype %d",
                       (int)(dtype_valid((int)a) ? b : a));
        return PITH_FLOAT32;
    }
    return promote_types(a, b);
}

static int promote_join(int acc, pith_dtype d)
{
    return acc < 0 ? (int)d : (int)promote_types((pith_dtype)acc, d);
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
        return (int)promote_types((pith_dtype)higher, (pith_dtype)lower);
    return higher;
}

pith_dtype promotion_result(const promotion_state *state)
{
    int r = categories_combine(state->dimensioned,
                               categories_combine(state->zero_dim, state->wrapped));
    return r < 0 ? PITH_BOOL : (pith_dtype)r;
}

pith_dtype result_type_of2(const pith_tensor *a, const pith_tensor *b)
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
