/* op_info.c — the public view of an operator's parsed schema (pith/schema.h): its name
 * parts, arguments, returns and defaults. The registry owns the parse (registry.c); this
 * file only reads it. */
#include "core/error.h"
#include "dispatch/registry.h"

const char *pith_arg_type_name(pith_arg_type type)
{
    return arg_type_name(type);
}

static const pith_schema *schema_of(const char *fn, const pith_op *op)
{
    if (!op) {
        pith_set_error(PITH_ERR_VALUE, "%s: the operator is NULL", fn);
        return NULL;
    }
    return &op->schema;
}

const char *pith_op_namespace(const pith_op *op)
{
    const pith_schema *s = schema_of(__func__, op);
    return s ? s->ns : NULL;
}

const char *pith_op_base_name(const pith_op *op)
{
    const pith_schema *s = schema_of(__func__, op);
    return s ? s->name : NULL;
}

const char *pith_op_overload_name(const pith_op *op)
{
    const pith_schema *s = schema_of(__func__, op);
    return s ? s->overload : NULL;
}

int pith_op_num_arguments(const pith_op *op)
{
    const pith_schema *s = schema_of(__func__, op);
    return s ? (int)s->nargs : -1;
}

int pith_op_num_returns(const pith_op *op)
{
    const pith_schema *s = schema_of(__func__, op);
    return s ? (int)s->nreturns : -1;
}

static pith_status argument_describe(const char *fn, const pith_op *op,
                                     const pith_schema_arg *args, size_t n, int i,
                                     pith_argument *out)
{
    if (!out)
        return pith_set_error(PITH_ERR_VALUE, "%s: out is NULL", fn);
    if (i < 0 || (size_t)i >= n)
        return pith_set_error(PITH_ERR_INDEX, "%s: index %d is out of range for %s (%zu)", fn,
                              i, op->qualified_name, n);
    const pith_schema_arg *a = &args[i];
    *out = (pith_argument){a->name, a->type, a->kwarg_only, a->has_default, a->is_mutable,
                           a->alias_set, (int)a->list_size};
    return PITH_OK;
}

pith_status pith_op_argument(const pith_op *op, int i, pith_argument *out)
{
    const pith_schema *s = schema_of(__func__, op);
    return s ? argument_describe(__func__, op, s->args, s->nargs, i, out) : PITH_ERR_VALUE;
}

pith_status pith_op_return(const pith_op *op, int i, pith_argument *out)
{
    const pith_schema *s = schema_of(__func__, op);
    return s ? argument_describe(__func__, op, s->returns, s->nreturns, i, out)
             : PITH_ERR_VALUE;
}

pith_status pith_op_push_default(const pith_op *op, int i, pith_stack *stack)
{
    const pith_schema *s = schema_of(__func__, op);
    if (!s)
        return PITH_ERR_VALUE;
    if (!stack)
        return pith_set_error(PITH_ERR_VALUE, "%s: the stack is NULL", __func__);
    if (i < 0 || (size_t)i >= s->nargs)
        return pith_set_error(PITH_ERR_INDEX, "%s: index %d is out of range for %s (%zu)",
                              __func__, i, op->qualified_name, s->nargs);
    if (!s->args[i].has_default)
        return pith_set_error(PITH_ERR_VALUE, "%s: argument '%s' of %s has no default",
                              __func__, s->args[i].name, op->qualified_name);
    pith_value v;
    if (value_copy(&s->args[i].default_value, &v) != PITH_OK)
        return pith_last_status();
    return stack_push_value(stack, v);
}
