/* op_macros.h — the C side of each schema argument type: its C type (PITH_CTYPE_<TOKEN>,
 * which scripts/gen_ops.py reads to write the typed signatures of the op file's ops), its
 * boxing and unboxing (dispatch/boxing.c), and the key set a tensor argument contributes.
 * See Note [Typed op calls] (ops/register.c). */
#ifndef PITH_DISPATCH_OP_MACROS_H
#define PITH_DISPATCH_OP_MACROS_H

#include "dispatch/keys.h"
#include "dispatch/registry.h"
#include "dispatch/value.h"

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

#endif /* PITH_DISPATCH_OP_MACROS_H */
