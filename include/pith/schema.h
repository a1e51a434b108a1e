/* schema.h — what a parsed operator schema says, for callers that bind arguments
 * themselves (the Python bindings, graph builders): argument names, types, defaults,
 * keyword-only and mutable arguments, and the returns. Included by pith.h.
 *
 * There is one schema parser, in dispatch/schema.c; these functions read its result. */
#ifndef PITH_SCHEMA_H
#define PITH_SCHEMA_H

#include <stdbool.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Every argument type a schema can name, with its spelling. The list is also the set of
 * tokens of the op table's argument lists (PITH_TYPE_##TOKEN). "Tensor?[]"
 * (LIST_OPT_TENSOR) is a list whose entries may be None (index.Tensor's `indices`). */
#define PITH_FORALL_ARG_TYPES(_)                                                            \
    _(TENSOR, "Tensor")                                                                     \
    _(OPT_TENSOR, "Tensor?")                                                                \
    _(TENSOR_LIST, "Tensor[]")                                                              \
    _(INT, "int")                                                                           \
    _(OPT_INT, "int?")                                                                      \
    _(INT_LIST, "int[]")                                                                    \
    _(OPT_INT_LIST, "int[]?")                                                               \
    _(FLOAT, "float")                                                                       \
    _(OPT_FLOAT, "float?")                                                                  \
    _(BOOL, "bool")                                                                         \
    _(SCALAR, "Scalar")                                                                     \
    _(OPT_SCALAR, "Scalar?")                                                                \
    _(DTYPE, "ScalarType")                                                                  \
    _(OPT_DTYPE, "ScalarType?")                                                             \
    _(OPT_DEVICE, "Device?")                                                                \
    _(STR, "str")                                                                           \
    _(LIST_OPT_TENSOR, "Tensor?[]")                                                         \
    _(FLOAT_LIST, "float[]")                                                                \
    _(OPT_FLOAT_LIST, "float[]?")                                                           \
    _(OPT_BOOL, "bool?")                                                                    \
    _(OPT_STR, "str?")                                                                      \
    _(OPT_GENERATOR, "Generator?")

typedef enum {
#define PITH_ARG_TYPE_ENUM_(tok, text) PITH_TYPE_##tok,
    PITH_FORALL_ARG_TYPES(PITH_ARG_TYPE_ENUM_)
#undef PITH_ARG_TYPE_ENUM_
        PITH_NUM_ARG_TYPES
} pith_arg_type;

/* One argument or return of a schema. `name` points into the operator, which lives as long
 * as the process; it is NULL for an unnamed return. */
typedef struct {
    const char *name;
    pith_arg_type type;
    bool kwarg_only;  /* after the schema's `*` */
    bool has_default; /* pith_op_push_default pushes it */
    bool is_mutable;  /* an alias annotation with `!`, as in Tensor(a!) */
    char alias_set;   /* the letter of an alias annotation, or 0 */
    int list_size;    /* N of a fixed-size list type, int[N]; 0 when the schema gives none */
} pith_argument;

/* The spelling of `type` in a schema ("Tensor?"), or "unknown". */
PITH_API const char *pith_arg_type_name(pith_arg_type type);
/* Whether an argument of `type` takes None (the T? types). */
PITH_API bool pith_arg_type_is_optional(pith_arg_type type);
/* The parts of "ns::name.overload": "pith" for built-in ops, "" for no overload. */
PITH_API const char *pith_op_namespace(const pith_op *op);
PITH_API const char *pith_op_base_name(const pith_op *op);
PITH_API const char *pith_op_overload_name(const pith_op *op);
/* The number of arguments and of returns; -1 with PITH_ERR_VALUE for a NULL op. */
PITH_API int pith_op_num_arguments(const pith_op *op);
PITH_API int pith_op_num_returns(const pith_op *op);
/* Argument or return `i` into *out; PITH_ERR_INDEX when `i` is out of range. */
PITH_API pith_status pith_op_argument(const pith_op *op, int i, pith_argument *out);
PITH_API pith_status pith_op_return(const pith_op *op, int i, pith_argument *out);
/* Pushes argument i's default value onto `stack` (a copy); PITH_ERR_VALUE when it has none. */
PITH_API pith_status pith_op_push_default(const pith_op *op, int i, pith_stack *stack);

#ifdef __cplusplus
}
#endif

#endif /* PITH_SCHEMA_H */
