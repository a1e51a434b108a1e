/* register.c — registers every row of the op file (ops/ops.toml) when the library loads,
 * and the stack helpers of the generated calls and adapters (ops/generated/op_calls*.c).
 *
 * Note [Typed op calls]
 * Per row <id>, scripts/gen_ops.py writes four functions into ops/generated/op_calls*.c:
 *  - pith_call_<id>(ret, args...): the typed entry from C. It rejects NULL arguments from
 *    a C caller (an error, never a crash), takes the key set of the tensor arguments (a
 *    factory's from its device), and redispatches with the effective key set.
 *  - pith_redispatch_<id>(ks, ret, args...): the kernel for the highest key of `ks`. Its
 *    common case, the op's own typed kernel, is a lookup and a tail call; everything
 *    else (fallbacks, boxed kernels, whose arguments it boxes) is in the out-of-line
 *    redispatch_general_<id>, so that the fast path carries no stack frame of its own.
 *  - boxed_adapter_<id>: lets pith_call_boxed reach the typed kernel, unboxing the
 *    arguments from the stack (a value of the wrong kind is PITH_ERR_TYPE naming the op
 *    and the argument) and pushing the results back.
 * Kernels return their results through ret[0..nreturns) as owned values; `ks` is the key
 * set they were picked with (mask it with keyset_below(own key) to redispatch).
 * Registration parses every schema with the one parser (dispatch/schema.c) and checks
 * each argument's type against the type the generated signature was written with (See
 * Note [Argument types of the op file], scripts/gen_ops.py), so the two cannot drift. */
#include <stdio.h>
#include <stdlib.h>

#include "ops/op_runtime.h"

const pith_op *pith_builtin_ops[PITH_NUM_BUILTIN_OPS];

pith_status op_stack_pop_returns(const pith_op *op, pith_stack *stack, pith_value *ret)
{
    size_t n = op->schema.nreturns;
    if (stack->size < n)
        return pith_set_error(PITH_ERR_RUNTIME, "%s: a kernel left %zu values, expected %zu",
                              op->qualified_name, stack->size, n);
    size_t base = stack->size - n;
    for (size_t r = 0; r < n; r++) {
        pith_value *v = stack_at(stack, base + r);
        pith_value_kind want = op->schema.returns[r].type == PITH_TYPE_TENSOR_LIST
                                   ? PITH_VALUE_TENSOR_LIST
                                   : PITH_VALUE_TENSOR;
        if (v->kind != want)
            return pith_set_error(PITH_ERR_TYPE, "%s: result %zu should be a %s",
                                  op->qualified_name, r,
                                  want == PITH_VALUE_TENSOR ? "Tensor" : "Tensor[]");
    }
    for (size_t r = 0; r < n; r++) {
        ret[r] = *stack_at(stack, base + r);
        stack_at(stack, base + r)->kind = PITH_VALUE_NONE;
    }
    stack->size = base;
    return PITH_OK;
}

pith_status op_stack_push_returns(const pith_op *op, pith_stack *stack, pith_value *ret)
{
    pith_status status = PITH_OK;
    for (size_t r = 0; r < op->schema.nreturns; r++) {
        if (status == PITH_OK)
            status = stack_push_value(stack, ret[r]);
        else
            value_clear(&ret[r]);
    }
    return status;
}

void op_stack_release(pith_stack *stack)
{
    pith_stack_drop(stack, stack->size);
    free(stack->values);
}

/* Registers one row; a mismatch between a row's argument types and its schema is a defect
 * of the generator, reported with both. */
static pith_status register_row(int index, const op_row *row)
{
    pith_op *op;
    if (registry_define(row->schema, index, &op) != PITH_OK)
        return error_prefix("op file row '%s'", row->id);
    if (op->schema.nargs != row->ntypes)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "op file row '%s': %zu typed arguments but the schema has %zu",
                              row->id, row->ntypes, op->schema.nargs);
    for (size_t i = 0; i < row->ntypes; i++)
        if (op->schema.args[i].type != row->types[i])
            return pith_set_error(PITH_ERR_RUNTIME,
                                  "op file row '%s': argument '%s' is %s in the schema but "
                                  "%s in the generated signature",
                                  row->id, op->schema.args[i].name,
                                  arg_type_name(op->schema.args[i].type),
                                  arg_type_name(row->types[i]));
    if (registry_set_kernel(op, PITH_KEY_CPU, row->cpu) != PITH_OK ||
        registry_set_kernel(op, PITH_KEY_META, row->meta) != PITH_OK)
        return error_prefix("op file row '%s'", row->id);
    pith_builtin_ops[index] = op;
    return PITH_OK;
}

/* Runs when libpith loads (before main, or at dlopen), before any op can be called. The
 * only way it fails is a defect in the generated table, which the test suite would catch
 * first; there is no caller to report to, so it says so and stops the process. */
__attribute__((constructor(PITH_CTOR_PRIORITY_OPS))) static void builtin_ops_register(void)
{
    for (int i = 0; i < PITH_NUM_BUILTIN_OPS; i++) {
        if (register_row(i, &op_rows[i]) != PITH_OK) {
            fprintf(stderr, "libpith: cannot register the built-in ops: %s\n",
                    pith_last_error());
            abort();
        }
    }
    pith_clear_error();
}

/* Keeps this object in static links (see the pith::pith target's link options). */
PITH_API void pith_builtin_ops_anchor(void) {}
