/* op_register.c — turns every row of the op table into an operator (see Note [One op
 * table]): the typed call and redispatch functions, the boxed adapters, and the
 * registration of the CPU and Meta kernels when the library loads. */
#include <stdio.h>
#include <stdlib.h>

#include "kernels/ops_internal.h"

const pith_op *pith_builtin_ops[PITH_NUM_BUILTIN_OPS];

/* A NULL tensor from a C caller is an error, never a crash. Optional tensors may be NULL;
 * a Tensor[] list may not hold NULL, a Tensor?[] list may. */
#define PITH_ARG_CHECK_TENSOR(a_)                                                        \
    if (!(a_))                                                                               \
        return pith_set_error(PITH_ERR_VALUE, "%s: argument '%s' is NULL", op_id_name_, #a_);
#define PITH_ARG_CHECK_TENSOR_LIST(a_)                                                   \
    if ((a_).n && !(a_).data)                                                                 \
        return pith_set_error(PITH_ERR_VALUE, "%s: argument '%s' is NULL", op_id_name_, #a_);        \
    for (size_t i_ = 0; i_ < (a_).n; i_++)                                                   \
        if (!(a_).data[i_])                                                                  \
            return pith_set_error(PITH_ERR_VALUE, "%s: %s[%zu] is NULL", op_id_name_, #a_, i_);
/* A Tensor?[] list may hold NULL entries (None), but not be NULL itself. */
#define PITH_ARG_CHECK_LIST_OPT_TENSOR(a_)                                               \
    if ((a_).n && !(a_).data)                                                                 \
        return pith_set_error(PITH_ERR_VALUE, "%s: argument '%s' is NULL", op_id_name_, #a_);
#define PITH_ARG_CHECK_INT_LIST(a_)                                                      \
    if ((a_).n && !(a_).data)                                                                 \
        return pith_set_error(PITH_ERR_VALUE, "%s: argument '%s' is NULL", op_id_name_, #a_);
#define PITH_ARG_CHECK_OPT_INT_LIST(a_)                                                  \
    if ((a_).present && (a_).list.n && !(a_).list.data)                                        \
        return pith_set_error(PITH_ERR_VALUE, "%s: argument '%s' is NULL", op_id_name_, #a_);
#define PITH_ARG_CHECK_STR(a_)                                                           \
    if (!(a_))                                                                               \
        return pith_set_error(PITH_ERR_VALUE, "%s: argument '%s' is NULL", op_id_name_, #a_);
#define PITH_ARG_CHECK_OPT_TENSOR(a_)
#define PITH_ARG_CHECK_INT(a_)
#define PITH_ARG_CHECK_OPT_INT(a_)
#define PITH_ARG_CHECK_FLOAT(a_)
#define PITH_ARG_CHECK_OPT_FLOAT(a_)
#define PITH_ARG_CHECK_BOOL(a_)
#define PITH_ARG_CHECK_SCALAR(a_)
#define PITH_ARG_CHECK_OPT_SCALAR(a_)
#define PITH_ARG_CHECK_DTYPE(a_)
#define PITH_ARG_CHECK_OPT_DTYPE(a_)
#define PITH_ARG_CHECK_OPT_DEVICE(a_)
#define PITH_ARG_CHECK_FLOAT_LIST(a_)                                                    \
    if ((a_).n && !(a_).data)                                                                 \
        return pith_set_error(PITH_ERR_VALUE, "%s: argument '%s' is NULL", op_id_name_, #a_);
#define PITH_ARG_CHECK_OPT_FLOAT_LIST(a_)                                                \
    if ((a_).present && (a_).list.n && !(a_).list.data)                                        \
        return pith_set_error(PITH_ERR_VALUE, "%s: argument '%s' is NULL", op_id_name_, #a_);
#define PITH_ARG_CHECK_OPT_BOOL(a_)
#define PITH_ARG_CHECK_OPT_STR(a_)
#define PITH_ARG_CHECK_OPT_GENERATOR(a_)

/* Moves the op's results from the top of the stack into ret[], checking their kinds. */
static pith_status stack_pop_returns(const pith_op *op, pith_stack *stack, pith_value *ret)
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

/* Pushes ret[0..nreturns) (owned) onto the stack; on failure releases what is left. */
static pith_status stack_push_returns(const pith_op *op, pith_stack *stack, pith_value *ret)
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

static void stack_release_all(pith_stack *stack)
{
    pith_stack_drop(stack, stack->size);
    free(stack->values);
}

/* Marks every result slot empty (the kinds only: cheaper than clearing the values), so
 * that a slot a kernel did not fill is never released. */
static inline void returns_clear(pith_value *ret)
{
    for (size_t r = 0; r < PITH_MAX_RETURNS; r++)
        ret[r].kind = PITH_VALUE_NONE;
}

#define PITH_OPARG_CHECK_(T, n) PITH_ARG_CHECK_##T(n)

/* pith_redispatch_<id> is split in two so that its common case, the op's own typed kernel
 * at the highest key, is a few instructions and a tail call: redispatch_general_<id>
 * (out of line, with the boxing machinery's frame) does the full dispatch_pick. */
#define PITH_OP_DEFINE_CALLS(id, schema, kind, ...)                                         \
    static __attribute__((noinline))                                                        \
    PITH_OP_SIGNATURE_(redispatch_general_##id, __VA_ARGS__)                                \
    {                                                                                       \
        const pith_op *op = pith_builtin_ops[PITH_OPID_##id];                               \
        const pith_kernel_record *kernel;                                                   \
        int key;                                                                            \
        if (dispatch_pick(op, ks, &kernel, &key) != PITH_OK)                                \
            return pith_last_status();                                                      \
        if (kernel->unboxed)                                                                \
            return ((pith_sig_##id)kernel->unboxed)(ks, ret PITH_PP_FOREACH(PITH_OPARG_NAME_, \
                                                                            __VA_ARGS__));  \
        pith_stack stack_ = {0}, *stack = &stack_;                                          \
        pith_status status = PITH_OK;                                                       \
        PITH_PP_FOREACH(PITH_OPARG_BOX_, __VA_ARGS__)                                       \
        if (status == PITH_OK)                                                              \
            status = kernel->boxed(op, stack, kernel->ctx);                                 \
        if (status == PITH_OK)                                                              \
            status = stack_pop_returns(op, stack, ret);                                     \
        stack_release_all(stack);                                                           \
        return status;                                                                      \
    }                                                                                       \
    PITH_OP_SIGNATURE_(pith_redispatch_##id, __VA_ARGS__)                                   \
    {                                                                                       \
        const pith_kernel_record *kernel =                                                  \
            dispatch_pick_unboxed(pith_builtin_ops[PITH_OPID_##id], ks);                    \
        if (kernel)                                                                         \
            return ((pith_sig_##id)kernel->unboxed)(ks, ret PITH_PP_FOREACH(PITH_OPARG_NAME_, \
                                                                            __VA_ARGS__));  \
        return redispatch_general_##id(ks, ret PITH_PP_FOREACH(PITH_OPARG_NAME_, __VA_ARGS__)); \
    }                                                                                       \
    pith_status pith_call_##id(pith_value *ret PITH_PP_FOREACH(PITH_OPARG_PARAM_, __VA_ARGS__)) \
    {                                                                                       \
        static const char op_id_name_[] = #id;                                              \
        (void)op_id_name_;                                                                  \
        PITH_PP_FOREACH(PITH_OPARG_CHECK_, __VA_ARGS__)                                     \
        pith_keyset ks = 0;                                                                 \
        PITH_PP_FOREACH(PITH_OPARG_KEYS_, __VA_ARGS__)                                      \
        return pith_redispatch_##id(keyset_effective(ks),                                   \
                                    ret PITH_PP_FOREACH(PITH_OPARG_NAME_, __VA_ARGS__));    \
    }                                                                                       \
    static pith_status boxed_adapter_##id(const pith_op *op, pith_stack *stack, void *ctx)  \
    {                                                                                       \
        const pith_kernel_record *record = ctx;                                             \
        const size_t nargs_ = 0 PITH_PP_FOREACH(PITH_OPARG_COUNT_, __VA_ARGS__);            \
        if (stack->size < nargs_)                                                           \
            return pith_set_error(PITH_ERR_VALUE, "%s: expected %zu arguments, got %zu",    \
                                  op->qualified_name, nargs_, stack->size);                 \
        const size_t base_ = stack->size - nargs_;                                          \
        size_t index_ = 0;                                                                  \
        PITH_PP_FOREACH(PITH_OPARG_UNBOX_, __VA_ARGS__)                                     \
        (void)index_;                                                                       \
        pith_keyset ks = keyset_effective(stack_keyset(stack, nargs_));                     \
        pith_value ret[PITH_MAX_RETURNS];                                                   \
        returns_clear(ret);                                                                 \
        pith_status status = ((pith_sig_##id)record->unboxed)(                              \
            ks, ret PITH_PP_FOREACH(PITH_OPARG_NAME_, __VA_ARGS__));                        \
        if (status != PITH_OK)                                                              \
            return status;                                                                  \
        pith_stack_drop(stack, nargs_);                                                     \
        return stack_push_returns(op, stack, ret);                                          \
    }

#define PITH_ROW_ PITH_OP_DEFINE_CALLS
PITH_FORALL_OPS(PITH_ROW_)
#undef PITH_ROW_

/* ---- the kernel records: immutable, static, pointing at themselves for the adapter ---- */

#define PITH_RECORDS_BACKEND_(id)                                                           \
    static const pith_kernel_record record_cpu_##id = {                                     \
        (void (*)(void))id##_cpu, boxed_adapter_##id, (void *)&record_cpu_##id};            \
    static const pith_kernel_record record_meta_##id = {                                    \
        (void (*)(void))id##_meta, boxed_adapter_##id, (void *)&record_meta_##id};
#define PITH_RECORDS_COMPOSITE_(id)                                                         \
    static const pith_kernel_record record_cpu_##id = {                                     \
        (void (*)(void))id##_composite, boxed_adapter_##id, (void *)&record_cpu_##id};      \
    static const pith_kernel_record *const record_meta_##id##_ptr_ = &record_cpu_##id;
#define PITH_OP_RECORDS(id, schema, kind, ...) PITH_RECORDS_##kind##_(id)
#define PITH_ROW_ PITH_OP_RECORDS
PITH_FORALL_OPS(PITH_ROW_)
#undef PITH_ROW_

#define PITH_META_RECORD_BACKEND_(id) &record_meta_##id
#define PITH_META_RECORD_COMPOSITE_(id) record_meta_##id##_ptr_

typedef struct {
    const char *id;
    const char *schema;
    const pith_arg_type *types;
    size_t ntypes;
    const pith_kernel_record *cpu;
    const pith_kernel_record *meta;
} builtin_row;

#define PITH_OP_ROW_DATA(id, schema, kind, ...)                                             \
    {#id,                                                                                   \
     schema,                                                                                \
     (const pith_arg_type[]){PITH_PP_FOREACH(PITH_OPARG_TYPE_, __VA_ARGS__)},               \
     0 PITH_PP_FOREACH(PITH_OPARG_COUNT_, __VA_ARGS__),                                     \
     &record_cpu_##id,                                                                      \
     PITH_META_RECORD_##kind##_(id)},
static const builtin_row builtin_rows[PITH_NUM_BUILTIN_OPS] = {
#define PITH_ROW_ PITH_OP_ROW_DATA
    PITH_FORALL_OPS(PITH_ROW_)
#undef PITH_ROW_
};

/* Registers one row; a mismatch between a row's argument list and its schema is a defect
 * of the build, reported with both. */
static pith_status register_row(int index, const builtin_row *row)
{
    pith_op *op;
    if (registry_define(row->schema, index, &op) != PITH_OK)
        return error_prefix("op table row '%s'", row->id);
    if (op->schema.nargs != row->ntypes)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "op table row '%s': %zu typed arguments but the schema has %zu",
                              row->id, row->ntypes, op->schema.nargs);
    for (size_t i = 0; i < row->ntypes; i++)
        if (op->schema.args[i].type != row->types[i])
            return pith_set_error(PITH_ERR_RUNTIME,
                                  "op table row '%s': argument '%s' is %s in the schema but "
                                  "%s in the row",
                                  row->id, op->schema.args[i].name,
                                  arg_type_name(op->schema.args[i].type),
                                  arg_type_name(row->types[i]));
    if (registry_set_kernel(op, PITH_KEY_CPU, row->cpu) != PITH_OK ||
        registry_set_kernel(op, PITH_KEY_META, row->meta) != PITH_OK)
        return error_prefix("op table row '%s'", row->id);
    pith_builtin_ops[index] = op;
    return PITH_OK;
}

/* Runs when libpith loads (before main, or at dlopen), before any op can be called. The
 * only way it fails is a defect in this table, which the test suite would catch first;
 * there is no caller to report to, so it says so and stops the process. */
__attribute__((constructor)) static void builtin_ops_register(void)
{
    for (int i = 0; i < PITH_NUM_BUILTIN_OPS; i++) {
        if (register_row(i, &builtin_rows[i]) != PITH_OK) {
            fprintf(stderr, "libpith: cannot register the built-in ops: %s\n",
                    pith_last_error());
            abort();
        }
    }
    pith_clear_error();
}

/* Keeps this object in static links (see the pith::pith target's link options). */
PITH_API void pith_builtin_ops_anchor(void) {}
