/* op_macros.h — the preprocessor machinery that turns one row of the op table into an
 * operator: its typed signature, its typed call and redispatch functions, and the boxed
 * adapter that lets pith_call_boxed reach a typed kernel.
 *
 * A row of the table (kernels/op_table.h) is
 *     _(id, "schema", KIND, (TYPE, name), (TYPE, name), ...)
 * where KIND is BACKEND or COMPOSITE and each TYPE is a token of PITH_FORALL_ARG_TYPES
 * (pith/schema.h). The argument list must match the schema; kernels/op_register.c checks
 * that when it registers the row, so the two can never drift apart unnoticed. See Note
 * [One op table]. To read what one row turns into: scripts/expand_op.py <id>. */
#ifndef PITH_DISPATCH_OP_MACROS_H
#define PITH_DISPATCH_OP_MACROS_H

#include "dispatch/keys.h"
#include "dispatch/registry.h"
#include "dispatch/value.h"

/* ---- a FOR_EACH over up to 16 parenthesised arguments ---- */
#define PITH_PP_CAT(a, b) PITH_PP_CAT_(a, b)
#define PITH_PP_CAT_(a, b) a##b
#define PITH_PP_NARGS(...)                                                                  \
    PITH_PP_NARGS_(__VA_ARGS__, 16, 15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0)
#define PITH_PP_NARGS_(_1, _2, _3, _4, _5, _6, _7, _8, _9, _10, _11, _12, _13, _14, _15,    \
                       _16, N, ...)                                                         \
    N
#define PITH_PP_FOREACH(M, ...) PITH_PP_CAT(PITH_PP_FE_, PITH_PP_NARGS(__VA_ARGS__))(M, __VA_ARGS__)
#define PITH_PP_FE_1(M, a) M a
#define PITH_PP_FE_2(M, a, ...) M a PITH_PP_FE_1(M, __VA_ARGS__)
#define PITH_PP_FE_3(M, a, ...) M a PITH_PP_FE_2(M, __VA_ARGS__)
#define PITH_PP_FE_4(M, a, ...) M a PITH_PP_FE_3(M, __VA_ARGS__)
#define PITH_PP_FE_5(M, a, ...) M a PITH_PP_FE_4(M, __VA_ARGS__)
#define PITH_PP_FE_6(M, a, ...) M a PITH_PP_FE_5(M, __VA_ARGS__)
#define PITH_PP_FE_7(M, a, ...) M a PITH_PP_FE_6(M, __VA_ARGS__)
#define PITH_PP_FE_8(M, a, ...) M a PITH_PP_FE_7(M, __VA_ARGS__)
#define PITH_PP_FE_9(M, a, ...) M a PITH_PP_FE_8(M, __VA_ARGS__)
#define PITH_PP_FE_10(M, a, ...) M a PITH_PP_FE_9(M, __VA_ARGS__)
#define PITH_PP_FE_11(M, a, ...) M a PITH_PP_FE_10(M, __VA_ARGS__)
#define PITH_PP_FE_12(M, a, ...) M a PITH_PP_FE_11(M, __VA_ARGS__)
#define PITH_PP_FE_13(M, a, ...) M a PITH_PP_FE_12(M, __VA_ARGS__)
#define PITH_PP_FE_14(M, a, ...) M a PITH_PP_FE_13(M, __VA_ARGS__)
#define PITH_PP_FE_15(M, a, ...) M a PITH_PP_FE_14(M, __VA_ARGS__)
#define PITH_PP_FE_16(M, a, ...) M a PITH_PP_FE_15(M, __VA_ARGS__)

/* ---- the C type of each argument type (all borrowed) ---- */
#define PITH_CTYPE_TENSOR const pith_tensor *
#define PITH_CTYPE_OPT_TENSOR const pith_tensor * /* NULL for None */
#define PITH_CTYPE_TENSOR_LIST pith_tensor_list
#define PITH_CTYPE_INT int64_t
#define PITH_CTYPE_OPT_INT pith_opt_int
#define PITH_CTYPE_INT_LIST pith_int_list
#define PITH_CTYPE_OPT_INT_LIST pith_opt_int_list
#define PITH_CTYPE_FLOAT double
#define PITH_CTYPE_OPT_FLOAT pith_opt_double
#define PITH_CTYPE_BOOL bool
#define PITH_CTYPE_SCALAR pith_scalar
#define PITH_CTYPE_OPT_SCALAR pith_scalar /* kind PITH_SCALAR_NONE for None */
#define PITH_CTYPE_DTYPE pith_dtype
#define PITH_CTYPE_OPT_DTYPE pith_opt_dtype
#define PITH_CTYPE_OPT_DEVICE pith_opt_device
#define PITH_CTYPE_STR const char *
#define PITH_CTYPE_LIST_OPT_TENSOR pith_tensor_list /* entries may be NULL (None) */
#define PITH_CTYPE_FLOAT_LIST pith_double_list
#define PITH_CTYPE_OPT_FLOAT_LIST pith_opt_double_list
#define PITH_CTYPE_OPT_BOOL pith_opt_bool
#define PITH_CTYPE_OPT_STR const char * /* NULL for None */
#define PITH_CTYPE_OPT_GENERATOR pith_generator * /* NULL for None: the default generator */

/* ---- boxing and unboxing one argument (dispatch/boxing.c) ----
 * unbox: reads a stack value as the typed argument (borrowing from the value); a value of
 * the wrong kind is PITH_ERR_TYPE naming the operator and the argument. Lists are unboxed
 * into `scratch`-free views of the value's own arrays.
 * box: pushes the typed argument (retaining tensors, copying lists and strings). */
#define PITH_DECLARE_BOXING_(tok, text)                                                     \
    pith_status unbox_##tok(const pith_op *op, size_t index, const pith_value *v,          \
                            PITH_CTYPE_##tok *out);                                         \
    pith_status box_##tok(pith_stack *s, PITH_CTYPE_##tok arg);
PITH_FORALL_ARG_TYPES(PITH_DECLARE_BOXING_)
#undef PITH_DECLARE_BOXING_

/* The key set contributed by one argument. */
static inline pith_keyset tensor_keyset_of(const pith_tensor *t)
{
    return t ? t->keys : 0;
}
pith_keyset tensor_list_keyset(pith_tensor_list list);
#define PITH_KEYS_TENSOR(x) tensor_keyset_of(x)
#define PITH_KEYS_OPT_TENSOR(x) tensor_keyset_of(x)
#define PITH_KEYS_TENSOR_LIST(x) tensor_list_keyset(x)
#define PITH_KEYS_INT(x) 0
#define PITH_KEYS_OPT_INT(x) 0
#define PITH_KEYS_INT_LIST(x) 0
#define PITH_KEYS_OPT_INT_LIST(x) 0
#define PITH_KEYS_FLOAT(x) 0
#define PITH_KEYS_OPT_FLOAT(x) 0
#define PITH_KEYS_BOOL(x) 0
#define PITH_KEYS_SCALAR(x) 0
#define PITH_KEYS_OPT_SCALAR(x) 0
#define PITH_KEYS_DTYPE(x) 0
#define PITH_KEYS_OPT_DTYPE(x) 0
/* A factory has no tensor to take a backend from: its device argument picks it. */
#define PITH_KEYS_OPT_DEVICE(x) keyset_for_device((x) == PITH_META ? PITH_META : PITH_CPU)
#define PITH_KEYS_STR(x) 0
#define PITH_KEYS_LIST_OPT_TENSOR(x) tensor_list_keyset(x)
#define PITH_KEYS_FLOAT_LIST(x) 0
#define PITH_KEYS_OPT_FLOAT_LIST(x) 0
#define PITH_KEYS_OPT_BOOL(x) 0
#define PITH_KEYS_OPT_STR(x) 0
#define PITH_KEYS_OPT_GENERATOR(x) 0

/* ---- pieces of a generated function ---- */
#define PITH_OPARG_PARAM_(T, n) , PITH_CTYPE_##T n
#define PITH_OPARG_NAME_(T, n) , n
#define PITH_OPARG_KEYS_(T, n) ks |= PITH_KEYS_##T(n);
#define PITH_OPARG_BOX_(T, n)                                                               \
    if (status == PITH_OK)                                                                  \
        status = box_##T(stack, n);
#define PITH_OPARG_UNBOX_(T, n)                                                             \
    PITH_CTYPE_##T n;                                                                       \
    if (unbox_##T(op, index_, stack_at(stack, base_ + index_), &n) != PITH_OK)              \
        return pith_last_status();                                                          \
    index_++;
#define PITH_OPARG_COUNT_(T, n) +1
#define PITH_OPARG_TYPE_(T, n) PITH_TYPE_##T,

/* The signature of a typed kernel of op `id`:
 *     pith_status kernel(pith_keyset ks, pith_value *ret, <typed args>)
 * `ks` is the key set the kernel was picked with (mask it with keyset_below(own key) to
 * redispatch); results go to ret[0..nreturns) as owned values.
 *
 * A row's KIND says which kernels it has: BACKEND rows have `<id>_cpu` (the CPU key) and
 * `<id>_meta` (the Meta key, which validates and computes output metadata only);
 * COMPOSITE rows have one `<id>_composite`, written in terms of other ops, registered at
 * both keys (so it is its own meta function). */
#define PITH_OP_SIGNATURE_(name, ...)                                                       \
    pith_status name(pith_keyset ks,                                                        \
                     pith_value *ret PITH_PP_FOREACH(PITH_OPARG_PARAM_, __VA_ARGS__))
#define PITH_OP_KERNELS_BACKEND_(id, ...)                                                   \
    PITH_OP_SIGNATURE_(id##_cpu, __VA_ARGS__);                                              \
    PITH_OP_SIGNATURE_(id##_meta, __VA_ARGS__);
#define PITH_OP_KERNELS_COMPOSITE_(id, ...) PITH_OP_SIGNATURE_(id##_composite, __VA_ARGS__);

#define PITH_OP_DECLARE(id, schema, kind, ...)                                              \
    typedef PITH_OP_SIGNATURE_((*pith_sig_##id), __VA_ARGS__);                             \
    pith_status pith_call_##id(pith_value *ret PITH_PP_FOREACH(PITH_OPARG_PARAM_, __VA_ARGS__)); \
    PITH_OP_SIGNATURE_(pith_redispatch_##id, __VA_ARGS__);                                 \
    PITH_OP_KERNELS_##kind##_(id, __VA_ARGS__)

#endif /* PITH_DISPATCH_OP_MACROS_H */
