/* invoke.c — the executor's way to call a built-in kernel directly: one typed invoker per
 * op (invoke_<id>, written by scripts/gen_ops.py into compile/generated/invokers.c), with
 * its arguments in a value array that a compiled step owns, and no stack, no key
 * computation and no kernel lookup. */
#include "compile/graph_internal.h"
#include "kernels/ops_internal.h"

extern const compile_invoker compile_invokers[PITH_NUM_BUILTIN_OPS];

compile_invoker compile_invoker_of(const pith_op *op)
{
    int id = op->builtin_id;
    return id >= 0 && id < PITH_NUM_BUILTIN_OPS ? compile_invokers[id] : NULL;
}
