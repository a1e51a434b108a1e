/* dispatch_shim.c — see dispatch_shim.h. */
#include <stdio.h>
#include <string.h>

#include "dispatch/registry.h"
#include "dispatch/schema.h"
#include "dispatch_shim.h"

static void arg_copy(const pith_schema_arg *a, shim_arg *out)
{
    memset(out, 0, sizeof *out);
    snprintf(out->name, sizeof out->name, "%s", a->name ? a->name : "");
    snprintf(out->type, sizeof out->type, "%s", arg_type_name(a->type));
    out->kwarg_only = a->kwarg_only;
    out->has_default = a->has_default;
    out->is_mutable = a->is_mutable;
    out->alias_set = a->alias_set;
    const pith_value *v = &a->default_value;
    out->default_kind = v->kind;
    out->default_dtype = -1;
    out->default_device = -1;
    switch (v->kind) {
    case PITH_VALUE_INT:
        out->default_int = v->u.i;
        break;
    case PITH_VALUE_DOUBLE:
        out->default_double = v->u.d;
        break;
    case PITH_VALUE_BOOL:
        out->default_bool = v->u.b;
        break;
    case PITH_VALUE_STRING:
        snprintf(out->default_string, sizeof out->default_string, "%s", v->u.s);
        break;
    case PITH_VALUE_INT_LIST:
        out->default_nints = v->u.ints.n;
        for (size_t i = 0; i < v->u.ints.n && i < SHIM_MAX_INTS; i++)
            out->default_ints[i] = v->u.ints.data[i];
        break;
    case PITH_VALUE_DTYPE:
        out->default_dtype = (int)v->u.dtype;
        break;
    case PITH_VALUE_DEVICE:
        out->default_device = (int)v->u.device;
        break;
    default:
        break;
    }
}

pith_status shim_schema_parse(const char *text, shim_schema *out)
{
    memset(out, 0, sizeof *out);
    pith_schema s;
    if (schema_parse(text, &s) != PITH_OK)
        return pith_last_status();
    snprintf(out->ns, sizeof out->ns, "%s", s.ns);
    snprintf(out->name, sizeof out->name, "%s", s.name);
    snprintf(out->overload, sizeof out->overload, "%s", s.overload);
    out->nargs = s.nargs;
    for (size_t i = 0; i < s.nargs && i < SHIM_MAX_ARGS; i++)
        arg_copy(&s.args[i], &out->args[i]);
    out->nreturns = s.nreturns;
    for (size_t i = 0; i < s.nreturns && i < 4; i++)
        arg_copy(&s.returns[i], &out->returns[i]);
    schema_free(&s);
    return PITH_OK;
}

const char *shim_arg_type_name(int type)
{
    return arg_type_name((pith_arg_type)type);
}

int shim_num_arg_types(void)
{
    return PITH_NUM_ARG_TYPES;
}

void shim_set_mode_interp(const pith_interpreter *interp)
{
    tls_keys()->mode_interp = interp;
}

const pith_interpreter *shim_mode_interp(void)
{
    return tls_keys()->mode_interp;
}

uint64_t shim_tensor_keys(const pith_tensor *t)
{
    return t->keys;
}

uint64_t shim_key_bit(const char *name)
{
    int k = key_from_name(name);
    return k < 0 ? 0 : PITH_KEYSET(k);
}

void shim_fallthrough_remove(const char *key)
{
    registry_fallthrough_remove(key_from_name(key));
}

const char *shim_key_name(int key)
{
    return key_name(key);
}

int shim_key_from_name(const char *name)
{
    return key_from_name(name);
}

int shim_op_builtin_id(const pith_op *op)
{
    return op->builtin_id;
}
