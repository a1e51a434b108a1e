/* boxing.c — converting between stack values and the typed arguments of unboxed kernels
 * (unbox_<T> / box_<T> for every type of PITH_FORALL_ARG_TYPES), and the check of one
 * value against a schema type that boxed calls run before any kernel. */
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

#define UNBOX_CHECK()                                                                       \
    do {                                                                                    \
        if (arg_check(op, index, v) != PITH_OK)                                             \
            return PITH_ERR_TYPE;                                                           \
    } while (0)

pith_status unbox_TENSOR(const pith_op *op, size_t index, const pith_value *v,
                         const pith_tensor **out)
{
    UNBOX_CHECK();
    *out = v->u.t;
    return PITH_OK;
}

pith_status unbox_OPT_TENSOR(const pith_op *op, size_t index, const pith_value *v,
                             const pith_tensor **out)
{
    UNBOX_CHECK();
    *out = v->kind == PITH_VALUE_TENSOR ? v->u.t : NULL;
    return PITH_OK;
}

pith_status unbox_TENSOR_LIST(const pith_op *op, size_t index, const pith_value *v,
                              pith_tensor_list *out)
{
    UNBOX_CHECK();
    out->data = (const pith_tensor *const *)v->u.tensors.data;
    out->n = v->u.tensors.n;
    return PITH_OK;
}

pith_status unbox_LIST_OPT_TENSOR(const pith_op *op, size_t index, const pith_value *v,
                                  pith_tensor_list *out)
{
    return unbox_TENSOR_LIST(op, index, v, out);
}

pith_status unbox_INT(const pith_op *op, size_t index, const pith_value *v, int64_t *out)
{
    UNBOX_CHECK();
    *out = v->u.i;
    return PITH_OK;
}

pith_status unbox_OPT_INT(const pith_op *op, size_t index, const pith_value *v,
                          pith_opt_int *out)
{
    UNBOX_CHECK();
    out->present = v->kind == PITH_VALUE_INT;
    out->value = out->present ? v->u.i : 0;
    return PITH_OK;
}

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

pith_status unbox_INT_LIST(const pith_op *op, size_t index, const pith_value *v,
                           pith_int_list *out)
{
    UNBOX_CHECK();
    int_list_view(v, out);
    return PITH_OK;
}

pith_status unbox_OPT_INT_LIST(const pith_op *op, size_t index, const pith_value *v,
                               pith_opt_int_list *out)
{
    UNBOX_CHECK();
    memset(out, 0, sizeof *out);
    out->present = v->kind != PITH_VALUE_NONE;
    if (out->present)
        int_list_view(v, &out->list);
    return PITH_OK;
}

pith_status unbox_FLOAT(const pith_op *op, size_t index, const pith_value *v, double *out)
{
    UNBOX_CHECK();
    *out = v->kind == PITH_VALUE_INT ? (double)v->u.i : v->u.d;
    return PITH_OK;
}

pith_status unbox_OPT_FLOAT(const pith_op *op, size_t index, const pith_value *v,
                            pith_opt_double *out)
{
    UNBOX_CHECK();
    out->present = v->kind != PITH_VALUE_NONE;
    out->value = v->kind == PITH_VALUE_INT ? (double)v->u.i
                 : out->present             ? v->u.d
                                            : 0.0;
    return PITH_OK;
}

pith_status unbox_BOOL(const pith_op *op, size_t index, const pith_value *v, bool *out)
{
    UNBOX_CHECK();
    *out = v->u.b;
    return PITH_OK;
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

pith_status unbox_SCALAR(const pith_op *op, size_t index, const pith_value *v, pith_scalar *out)
{
    UNBOX_CHECK();
    *out = scalar_of(v);
    return PITH_OK;
}

pith_status unbox_OPT_SCALAR(const pith_op *op, size_t index, const pith_value *v,
                             pith_scalar *out)
{
    UNBOX_CHECK();
    *out = scalar_of(v);
    return PITH_OK;
}

pith_status unbox_DTYPE(const pith_op *op, size_t index, const pith_value *v, pith_dtype *out)
{
    UNBOX_CHECK();
    *out = v->u.dtype;
    return PITH_OK;
}

pith_status unbox_OPT_DTYPE(const pith_op *op, size_t index, const pith_value *v,
                            pith_opt_dtype *out)
{
    UNBOX_CHECK();
    *out = v->kind == PITH_VALUE_DTYPE ? (int)v->u.dtype : -1;
    return PITH_OK;
}

pith_status unbox_OPT_DEVICE(const pith_op *op, size_t index, const pith_value *v,
                             pith_opt_device *out)
{
    UNBOX_CHECK();
    *out = v->kind == PITH_VALUE_DEVICE ? (int)v->u.device : -1;
    return PITH_OK;
}

pith_status unbox_STR(const pith_op *op, size_t index, const pith_value *v, const char **out)
{
    UNBOX_CHECK();
    *out = v->u.s;
    return PITH_OK;
}

pith_status unbox_OPT_STR(const pith_op *op, size_t index, const pith_value *v,
                          const char **out)
{
    UNBOX_CHECK();
    *out = v->kind == PITH_VALUE_STRING ? v->u.s : NULL;
    return PITH_OK;
}

pith_status unbox_FLOAT_LIST(const pith_op *op, size_t index, const pith_value *v,
                             pith_double_list *out)
{
    UNBOX_CHECK();
    out->data = v->u.doubles.data;
    out->n = v->u.doubles.n;
    return PITH_OK;
}

pith_status unbox_OPT_FLOAT_LIST(const pith_op *op, size_t index, const pith_value *v,
                                 pith_opt_double_list *out)
{
    UNBOX_CHECK();
    memset(out, 0, sizeof *out);
    out->present = v->kind != PITH_VALUE_NONE;
    if (out->present) {
        out->list.data = v->u.doubles.data;
        out->list.n = v->u.doubles.n;
    }
    return PITH_OK;
}

pith_status unbox_OPT_BOOL(const pith_op *op, size_t index, const pith_value *v,
                           pith_opt_bool *out)
{
    UNBOX_CHECK();
    out->present = v->kind == PITH_VALUE_BOOL;
    out->value = out->present && v->u.b;
    return PITH_OK;
}

pith_status unbox_OPT_GENERATOR(const pith_op *op, size_t index, const pith_value *v,
                                pith_generator **out)
{
    UNBOX_CHECK();
    *out = v->kind == PITH_VALUE_GENERATOR ? v->u.generator : NULL;
    return PITH_OK;
}

/* ---- box: typed argument -> pushed value ---- */

pith_status box_TENSOR(pith_stack *s, const pith_tensor *arg)
{
    return pith_stack_push_tensor(s, arg);
}

pith_status box_OPT_TENSOR(pith_stack *s, const pith_tensor *arg)
{
    return arg ? pith_stack_push_tensor(s, arg) : pith_stack_push_none(s);
}

pith_status box_TENSOR_LIST(pith_stack *s, pith_tensor_list arg)
{
    return pith_stack_push_tensor_list(s, arg.data, arg.n);
}

pith_status box_LIST_OPT_TENSOR(pith_stack *s, pith_tensor_list arg)
{
    return pith_stack_push_tensor_list(s, arg.data, arg.n);
}

pith_status box_INT(pith_stack *s, int64_t arg)
{
    return pith_stack_push_int(s, arg);
}

pith_status box_OPT_INT(pith_stack *s, pith_opt_int arg)
{
    return arg.present ? pith_stack_push_int(s, arg.value) : pith_stack_push_none(s);
}

pith_status box_INT_LIST(pith_stack *s, pith_int_list arg)
{
    return pith_stack_push_int_list(s, arg.data, arg.n);
}

pith_status box_OPT_INT_LIST(pith_stack *s, pith_opt_int_list arg)
{
    return arg.present ? pith_stack_push_int_list(s, arg.list.data, arg.list.n)
                       : pith_stack_push_none(s);
}

pith_status box_FLOAT(pith_stack *s, double arg)
{
    return pith_stack_push_double(s, arg);
}

pith_status box_OPT_FLOAT(pith_stack *s, pith_opt_double arg)
{
    return arg.present ? pith_stack_push_double(s, arg.value) : pith_stack_push_none(s);
}

pith_status box_BOOL(pith_stack *s, bool arg)
{
    return pith_stack_push_bool(s, arg);
}

pith_status box_SCALAR(pith_stack *s, pith_scalar arg)
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

pith_status box_OPT_SCALAR(pith_stack *s, pith_scalar arg)
{
    return box_SCALAR(s, arg);
}

pith_status box_DTYPE(pith_stack *s, pith_dtype arg)
{
    return pith_stack_push_dtype(s, arg);
}

pith_status box_OPT_DTYPE(pith_stack *s, pith_opt_dtype arg)
{
    return arg < 0 ? pith_stack_push_none(s) : pith_stack_push_dtype(s, (pith_dtype)arg);
}

pith_status box_OPT_DEVICE(pith_stack *s, pith_opt_device arg)
{
    return arg < 0 ? pith_stack_push_none(s) : pith_stack_push_device(s, (pith_device)arg);
}

pith_status box_STR(pith_stack *s, const char *arg)
{
    return pith_stack_push_string(s, arg);
}

pith_status box_OPT_STR(pith_stack *s, const char *arg)
{
    return arg ? pith_stack_push_string(s, arg) : pith_stack_push_none(s);
}

pith_status box_FLOAT_LIST(pith_stack *s, pith_double_list arg)
{
    return pith_stack_push_double_list(s, arg.data, arg.n);
}

pith_status box_OPT_FLOAT_LIST(pith_stack *s, pith_opt_double_list arg)
{
    return arg.present ? pith_stack_push_double_list(s, arg.list.data, arg.list.n)
                       : pith_stack_push_none(s);
}

pith_status box_OPT_BOOL(pith_stack *s, pith_opt_bool arg)
{
    return arg.present ? pith_stack_push_bool(s, arg.value) : pith_stack_push_none(s);
}

pith_status box_OPT_GENERATOR(pith_stack *s, pith_generator *arg)
{
    return arg ? pith_stack_push_generator(s, arg) : pith_stack_push_none(s);
}

pith_keyset tensor_list_keyset(pith_tensor_list list)
{
    pith_keyset ks = 0;
    for (size_t i = 0; i < list.n; i++)
        ks |= tensor_keyset_of(list.data[i]);
    return ks;
}
