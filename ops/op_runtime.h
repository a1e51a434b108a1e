/* op_runtime.h — what the generated op calls (ops/generated/op_calls*.c) and the public
 * wrappers need beside the op declarations: the row table that ops/register.c registers,
 * and the helpers that move results between a boxed stack and a typed call's `ret`. */
#ifndef PITH_OPS_OP_RUNTIME_H
#define PITH_OPS_OP_RUNTIME_H

#include "kernels/ops_internal.h"

/* One row of the op file, as ops/generated/op_calls.c writes it. */
typedef struct {
    const char *id;
    const char *schema;
    const pith_arg_type *types; /* the argument types the C signature was written with */
    size_t ntypes;
    const pith_kernel_record *cpu;
    const pith_kernel_record *meta;
} op_row;

extern const op_row op_rows[PITH_NUM_BUILTIN_OPS];

/* Moves the op's results from the top of the stack into ret[], checking their kinds. */
pith_status op_stack_pop_returns(const pith_op *op, pith_stack *stack, pith_value *ret);
/* Pushes ret[0..nreturns) (owned) onto the stack; on failure releases what is left. */
pith_status op_stack_push_returns(const pith_op *op, pith_stack *stack, pith_value *ret);
/* Drops every value of a stack the generated code made, and its array. */
void op_stack_release(pith_stack *stack);

/* Marks every result slot empty (the kinds only: cheaper than clearing the values), so
 * that a slot a kernel did not fill is never released. */
static inline void op_returns_clear(pith_value *ret)
{
    for (size_t r = 0; r < PITH_MAX_RETURNS; r++)
        ret[r].kind = PITH_VALUE_NONE;
}

/* For the C API's functional forms: the new tensor of a successful call, or NULL. */
static inline pith_tensor *op_call_result(pith_status status, pith_value *ret)
{
    return status == PITH_OK ? ret[0].u.t : NULL;
}

#endif /* PITH_OPS_OP_RUNTIME_H */
