/* invoke.c — one typed invoker per row of the op table (See Note [One op table]): the
 * executor's way to call a built-in kernel directly, with its arguments in a value array
 * that a compiled step owns, and no stack, no key computation and no kernel lookup.
 *
 * invoke_<id> is found by grep; `python3 scripts/expand_op.py <id>` shows the row it is
 * made from. */
#include "compile/graph_internal.h"
#include "kernels/ops_internal.h"

#define PITH_INVOKE_UNBOX_(T, n)                                                            \
    PITH_CTYPE_##T n;                                                                       \
    if (unbox_##T(op, index_, &args[index_], &n) != PITH_OK)                                \
        return pith_last_status();                                                          \
    index_++;

#define PITH_DEFINE_INVOKER_(id, schema, kind, ...)                                         \
    static pith_status invoke_##id(const pith_op *op, void (*fn)(void), pith_keyset ks,     \
                                   const pith_value *args, pith_value *ret)                 \
    {                                                                                       \
        size_t index_ = 0;                                                                  \
        PITH_PP_FOREACH(PITH_INVOKE_UNBOX_, __VA_ARGS__)                                    \
        (void)index_;                                                                       \
        return ((pith_sig_##id)fn)(ks, ret PITH_PP_FOREACH(PITH_OPARG_NAME_, __VA_ARGS__)); \
    }
#define PITH_ROW_ PITH_DEFINE_INVOKER_
PITH_FORALL_OPS(PITH_ROW_)
#undef PITH_ROW_

static const compile_invoker invokers[PITH_NUM_BUILTIN_OPS] = {
#define PITH_INVOKER_ENTRY_(id, ...) invoke_##id,
#define PITH_ROW_ PITH_INVOKER_ENTRY_
    PITH_FORALL_OPS(PITH_ROW_)
#undef PITH_ROW_
};

compile_invoker compile_invoker_of(const pith_op *op)
{
    int id = op->builtin_id;
    return id >= 0 && id < PITH_NUM_BUILTIN_OPS ? invokers[id] : NULL;
}
