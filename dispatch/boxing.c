/* boxing.c — converting between stack values and the typed arguments of unboxed kernels
 * (unbox_<T> / box_<T> for every type of PITH_FORALL_ARG_TYPES, generated from one line
 * each), and the check of one value against a schema type that boxed calls run before any
 * kernel. */
#include <string.h>

#include "core/error.h"
#include "dispatch/op_macros.h"

/* Which value kinds an argument of each type accepts. Scalars take any number; `float`
 * takes an int; `int[]` takes a single int (PyTorch's `int[1] dim=1` convenience);
 * optional types take None. */
bool arg_accepts(pith_arg_type type, pith_value_kind kind)
{
    switch (type) {
    case PITH_TYPE_TENSOR:
        return kind == PITH_VALUE_TENSOR;
    case PITH_TYPE_OPT_TENSOR:
        return kind == PITH_VALUE_TENSOR || kind == PITH_VALUE_NONE;
    case PITH_TYPE_TENSOR_LIST:
    case PITH_TYPE_LIST_OPT_TENSOR:
        return kind == PITH_VALUE_TENSOR_LIST;
    case PITH_TYPE_INT:
        return kind == PITH_VALUE_INT;
    case PITH_TYPE_OPT_INT:
        return kind == PITH_VALUE_INT || kind == PITH_VALUE_NONE;
    case PITH_TYPE_INT_LIST:
        return kind == PITH_VALUE_INT_LIST || kind == PITH_VALUE_INT;
    case PITH_TYPE_OPT_INT_LIST:
        return kind == PITH_VALUE_INT_LIST || kind == PITH_VALUE_INT || kind == PITH_VALUE_NONE;
    case PITH_TYPE_FLOAT:
        return kind == PITH_VALUE_DOUBLE || kind == PITH_VALUE_INT;
    case PITH_TYPE_OPT_FLOAT:
        return kind == PITH_VALUE_DOUBLE || kind == PITH_VALUE_INT || kind == PITH_VALUE_NONE;
    case PITH_TYPE_BOOL:
        return kind == PITH_VALUE_BOOL;
    case PITH_TYPE_SCALAR:
        return kind == PITH_VALUE_INT || kind == PITH_VALUE_DOUBLE || kind == PITH_VALUE_BOOL;
    case PITH_TYPE_OPT_SCALAR:
        return kind == PITH_VALUE_INT || kind == PITH_VALUE_DOUBLE || kind == PITH_VALUE_BOOL ||
               kind == PITH_VALUE_NONE;
    case PITH_TYPE_DTYPE:
        return kind == PITH_VALUE_DTYPE;
    case PITH_TYPE_OPT_DTYPE:
        return kind == PITH_VALUE_DTYPE || kind == PITH_VALUE_NONE;
    case PITH_TYPE_OPT_DEVICE:
        return kind == PITH_VALUE_DEVICE || kind == PITH_VALUE_NONE;
    case PITH_TYPE_STR:
        return kind == PITH_VALUE_STRING;
    case PITH_TYPE_OPT_STR:
        return kind == PITH_VALUE_STRING || kind == PITH_VALUE_NONE;
    case PITH_TYPE_FLOAT_LIST:
        return kind == PITH_VALUE_DOUBLE_LIST;
    case PITH_TYPE_OPT_FLOAT_LIST:
        return kind == PITH_VALUE_DOUBLE_LIST || kind == PITH_VALUE_NONE;
    case PITH_TYPE_OPT_BOOL:
        return kind == PITH_VALUE_BOOL || kind == PITH_VALUE_NONE;
    case PITH_TYPE_OPT_GENERATOR:
        return kind == PITH_VALUE_GENERATOR || kind == PITH_VALUE_NONE;
    default:
        return false;
    }
}

/* Note [None entries of tensor lists]
 * A Tensor[] stack value may hold NULL entries (None): pith_stack_push_tensor_list cannot
 * know the schema the value is for, so it takes them, and the check happens here, when the
 * value meets its argument: only a Tensor?[] argument accepts them. Kernels of Tensor[]
 * arguments can therefore dereference every entry. */
static pith_status tensor_list_check_entries(const pith_op *op, size_t index,
                                             const pith_value *v)
{
    for (size_t i = 0; i < v->u.tensors.n; i++)
        if (!v->u.tensors.data[i])
            return pith_set_error(PITH_ERR_TYPE,
                                  "%s: argument '%s' (position %zu) must be Tensor[], but "
                                  "element %zu is None",
                                  op_display_name(op), op->schema.args[index].name, index + 1,
                                  i);
    return PITH_OK;
}

pith_status arg_check(const pith_op *op, size_t index, const pith_value *v)
{
    const pith_schema_arg *arg = &op->schema.args[index];
    if (arg_accepts(arg->type, v->kind))
        return arg->type == PITH_TYPE_TENSOR_LIST ? tensor_list_check_entries(op, index, v)
                                                  : PITH_OK;
    return pith_set_error(PITH_ERR_TYPE, "%s: argument '%s' (position %zu) must be %s, not %s",
                          op_display_name(op), arg->name, index + 1, arg_type_name(arg->type),
                          value_kind_name(v->kind));
}

/* ---- unbox: stack value -> typed argument; box: typed argument -> pushed value ---- */

/* A list value is viewed in place; a single int is viewed as a list of one. */
static void int_list_view(const pith_value *v, pith_int_list *out)
{
    if (v->kind == PITH_VALUE_INT) {
        out->data = &v->u.i;
        out->n = 1;
    } else {
        out->data = v->u.ints.data;
        out->n = v->u.ints.n;
    }
}

static void double_list_view(const pith_value *v, pith_double_list *out)
{
    out->data = v->u.doubles.data;
    out->n = v->u.doubles.n;
}

static void tensor_list_view(const pith_value *v, pith_tensor_list *out)
{
    out->data = (const pith_tensor *const *)v->u.tensors.data;
    out->n = v->u.tensors.n;
}

static pith_scalar scalar_of(const pith_value *v)
{
    pith_scalar s = scalar_none();
    if (v->kind == PITH_VALUE_INT)
        s = scalar_from_int(v->u.i);
    else if (v->kind == PITH_VALUE_DOUBLE)
        s = scalar_from_double(v->u.d);
    else if (v->kind == PITH_VALUE_BOOL) {
        s.kind = PITH_SCALAR_BOOL;
        s.u.b = v->u.b;
    }
    return s;
}

static pith_status scalar_push(pith_stack *s, pith_scalar arg)
{
    switch (arg.kind) {
    case PITH_SCALAR_BOOL:
        return pith_stack_push_bool(s, arg.u.b);
    case PITH_SCALAR_INT:
        return pith_stack_push_int(s, arg.u.i);
    case PITH_SCALAR_DOUBLE:
        return pith_stack_push_double(s, arg.u.d);
    default:
        return pith_stack_push_none(s);
    }
}

/* Per argument type of PITH_FORALL_ARG_TYPES: UNBOX_<TOKEN> reads value `v`, which
 * arg_check has accepted, into `out`; BOX_<TOKEN> pushes `arg` onto stack `s`. An optional
 * type pushes None unless `present`, and an optional list is a list view when present. */
#define BOX_UNLESS_NONE_(present, push) (present) ? (push) : pith_stack_push_none(s)
#define UNBOX_OPT_LIST_(view)                                                               \
    memset(out, 0, sizeof *out);                                                            \
    out->present = v->kind != PITH_VALUE_NONE;                                              \
    if (out->present)                                                                       \
        view(v, &out->list)

#define UNBOX_TENSOR *out = v->u.t
#define BOX_TENSOR pith_stack_push_tensor(s, arg)
#define UNBOX_OPT_TENSOR *out = v->kind == PITH_VALUE_TENSOR ? v->u.t : NULL
#define BOX_OPT_TENSOR BOX_UNLESS_NONE_(arg, pith_stack_push_tensor(s, arg))
#define UNBOX_TENSOR_LIST tensor_list_view(v, out)
#define BOX_TENSOR_LIST pith_stack_push_tensor_list(s, arg.data, arg.n)
#define UNBOX_LIST_OPT_TENSOR tensor_list_view(v, out)
#define BOX_LIST_OPT_TENSOR pith_stack_push_tensor_list(s, arg.data, arg.n)
#define UNBOX_INT *out = v->u.i
#define BOX_INT pith_stack_push_int(s, arg)
#define UNBOX_OPT_INT                                                                       \
    out->present = v->kind == PITH_VALUE_INT;                                               \
    out->value = out->present ? v->u.i : 0
#define BOX_OPT_INT BOX_UNLESS_NONE_(arg.present, pith_stack_push_int(s, arg.value))
#define UNBOX_INT_LIST int_list_view(v, out)
#define BOX_INT_LIST pith_stack_push_int_list(s, arg.data, arg.n)
#define UNBOX_OPT_INT_LIST UNBOX_OPT_LIST_(int_list_view)
#define BOX_OPT_INT_LIST                                                                    \
    BOX_UNLESS_NONE_(arg.present, pith_stack_push_int_list(s, arg.list.data, arg.list.n))
#define UNBOX_FLOAT *out = v->kind == PITH_VALUE_INT ? (double)v->u.i : v->u.d
#define BOX_FLOAT pith_stack_push_double(s, arg)
#define UNBOX_OPT_FLOAT                                                                     \
    out->present = v->kind != PITH_VALUE_NONE;                                              \
    out->value = v->kind == PITH_VALUE_INT ? (double)v->u.i                                 \
                 : out->present             ? v->u.d                                        \
                                            : 0.0
#define BOX_OPT_FLOAT BOX_UNLESS_NONE_(arg.present, pith_stack_push_double(s, arg.value))
#define UNBOX_FLOAT_LIST double_list_view(v, out)
#define BOX_FLOAT_LIST pith_stack_push_double_list(s, arg.data, arg.n)
#define UNBOX_OPT_FLOAT_LIST UNBOX_OPT_LIST_(double_list_view)
#define BOX_OPT_FLOAT_LIST                                                                  \
    BOX_UNLESS_NONE_(arg.present, pith_stack_push_double_list(s, arg.list.data, arg.list.n))
#define UNBOX_BOOL *out = v->u.b
#define BOX_BOOL pith_stack_push_bool(s, arg)
#define UNBOX_OPT_BOOL                                                                      \
    out->present = v->kind == PITH_VALUE_BOOL;                                              \
    out->value = out->present && v->u.b
#define BOX_OPT_BOOL BOX_UNLESS_NONE_(arg.present, pith_stack_push_bool(s, arg.value))
#define UNBOX_SCALAR *out = scalar_of(v)
#define BOX_SCALAR scalar_push(s, arg)
#define UNBOX_OPT_SCALAR *out = scalar_of(v) /* None is a scalar of kind PITH_SCALAR_NONE */
#define BOX_OPT_SCALAR scalar_push(s, arg)
#define UNBOX_DTYPE *out = v->u.dtype
#define BOX_DTYPE pith_stack_push_dtype(s, arg)
#define UNBOX_OPT_DTYPE *out = v->kind == PITH_VALUE_DTYPE ? (int)v->u.dtype : -1
#define BOX_OPT_DTYPE BOX_UNLESS_NONE_(arg >= 0, pith_stack_push_dtype(s, (pith_dtype)arg))
#define UNBOX_OPT_DEVICE *out = v->kind == PITH_VALUE_DEVICE ? (int)v->u.device : -1
#define BOX_OPT_DEVICE BOX_UNLESS_NONE_(arg >= 0, pith_stack_push_device(s, (pith_device)arg))
#define UNBOX_STR *out = v->u.s
#define BOX_STR pith_stack_push_string(s, arg)
#define UNBOX_OPT_STR *out = v->kind == PITH_VALUE_STRING ? v->u.s : NULL
#define BOX_OPT_STR BOX_UNLESS_NONE_(arg, pith_stack_push_string(s, arg))
#define UNBOX_OPT_GENERATOR *out = v->kind == PITH_VALUE_GENERATOR ? v->u.generator : NULL
#define BOX_OPT_GENERATOR BOX_UNLESS_NONE_(arg, pith_stack_push_generator(s, arg))

/* unbox_<TOKEN> and box_<TOKEN>, as dispatch/op_macros.h declares them. A value of the
 * wrong kind fails in arg_check, with its message. */
#define BOXING_DEFINE_(tok, text)                                                           \
    pith_status unbox_##tok(const pith_op *op, size_t index, const pith_value *v,          \
                            PITH_CTYPE_##tok *out)                                          \
    {                                                                                       \
        if (arg_check(op, index, v) != PITH_OK)                                             \
            return PITH_ERR_TYPE;                                                           \
        UNBOX_##tok;                                                                        \
        return PITH_OK;                                                                     \
    }                                                                                       \
    pith_status box_##tok(pith_stack *s, PITH_CTYPE_##tok arg)                              \
    {                                                                                       \
        return BOX_##tok;                                                                   \
    }
PITH_FORALL_ARG_TYPES(BOXING_DEFINE_)
#undef BOXING_DEFINE_

pith_keyset tensor_list_keyset(pith_tensor_list list)
{
    pith_keyset ks = 0;
    for (size_t i = 0; i < list.n; i++)
        ks |= tensor_keyset_of(list.data[i]);
    return ks;
}
