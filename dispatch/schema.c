/* schema.c — the parser of operator schemas (PyTorch's syntax, the subset in schema.h).
 *
 *   schema  := [ns "::"] name ["." overload] "(" [arg ("," arg)*] ")" "->" returns
 *   arg     := "*" | type name ["=" default]
 *   type    := base ["(" letter ["!"] ")"] ( "?[]" | ["[" [digits] "]"] ["?"] )
 *   returns := type | "(" [type [name] ("," type [name])*] ")"
 *
 * Every error quotes the schema with a caret under the offending character. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "dispatch/schema.h"

static const char *const arg_type_names[PITH_NUM_ARG_TYPES] = {
#define PITH_ARG_TYPE_NAME_(tok, text) [PITH_TYPE_##tok] = text,
    PITH_FORALL_ARG_TYPES(PITH_ARG_TYPE_NAME_)
#undef PITH_ARG_TYPE_NAME_
};

const char *arg_type_name(pith_arg_type type)
{
    return (unsigned)type < PITH_NUM_ARG_TYPES ? arg_type_names[type] : "unknown";
}

/* The longest stretch of a schema that an error message quotes. */
#define SCHEMA_QUOTE_MAX 200

typedef struct {
    const char *text; /* the whole schema */
    const char *p;    /* the next character */
} parser;

/* Sets PITH_ERR_VALUE: the message, the column, then the schema and a caret under `at`. */
__attribute__((format(printf, 3, 4))) static pith_status parser_fail(const parser *ps,
                                                                     const char *at,
                                                                     const char *fmt, ...)
{
    char what[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    size_t column = (size_t)(at - ps->text);
    /* A long schema is quoted as a window around the column, so that the caret line
     * always fits in the error message. */
    size_t len = strlen(ps->text), from = 0, to = len;
    if (len > SCHEMA_QUOTE_MAX) {
        from = column > SCHEMA_QUOTE_MAX / 2 ? column - SCHEMA_QUOTE_MAX / 2 : 0;
        to = from + SCHEMA_QUOTE_MAX < len ? from + SCHEMA_QUOTE_MAX : len;
    }
    const char *lead = from ? "..." : "", *tail = to < len ? "..." : "";
    return pith_set_error(PITH_ERR_VALUE, "invalid schema: %s at column %zu\n  %s%.*s%s\n  %*s^",
                          what, column + 1, lead, (int)(to - from), ps->text + from, tail,
                          (int)(column - from + strlen(lead)), "");
}

/* How the character at `at` reads in an error: "'x'" or "the end of the schema". */
static const char *char_describe(const char *at, char *buf, size_t cap)
{
    if (!*at)
        return "the end of the schema";
    snprintf(buf, cap, "'%c'", *at);
    return buf;
}

static pith_status parser_expected(const parser *ps, const char *what)
{
    char buf[8];
    return parser_fail(ps, ps->p, "expected %s but found %s", what,
                       char_describe(ps->p, buf, sizeof buf));
}

static void skip_space(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static bool is_ident_start(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}
static bool is_ident_char(char c)
{
    return is_ident_start(c) || (c >= '0' && c <= '9');
}

/* Reads an identifier; returns its length (0 when there is none, and ps->p stays). */
static size_t ident_scan(parser *ps)
{
    const char *start = ps->p;
    if (!is_ident_start(*ps->p))
        return 0;
    while (is_ident_char(*ps->p))
        ps->p++;
    return (size_t)(ps->p - start);
}

static bool ident_is(const char *s, size_t n, const char *word)
{
    return strlen(word) == n && memcmp(s, word, n) == 0;
}

static pith_status string_dup(const char *s, size_t n, char **out)
{
    *out = strndup(s, n);
    if (!*out)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory parsing a schema");
    return PITH_OK;
}

static pith_status expect_char(parser *ps, char c, const char *what)
{
    skip_space(ps);
    if (*ps->p != c)
        return parser_expected(ps, what);
    ps->p++;
    return PITH_OK;
}

/* ---- the operator name ---- */

static pith_status name_parse(parser *ps, pith_schema *out)
{
    skip_space(ps);
    const char *start = ps->p;
    size_t n = ident_scan(ps);
    if (!n)
        return parser_expected(ps, "an operator name");
    if (ps->p[0] == ':' && ps->p[1] == ':') {
        if (string_dup(start, n, &out->ns) != PITH_OK)
            return PITH_ERR_NOMEM;
        ps->p += 2;
        start = ps->p;
        n = ident_scan(ps);
        if (!n)
            return parser_expected(ps, "an operator name after '::'");
    } else if (string_dup("pith", 4, &out->ns) != PITH_OK) {
        return PITH_ERR_NOMEM;
    }
    if (string_dup(start, n, &out->name) != PITH_OK)
        return PITH_ERR_NOMEM;
    if (*ps->p == '.') {
        ps->p++;
        start = ps->p;
        n = ident_scan(ps);
        if (!n)
            return parser_expected(ps, "an overload name after '.'");
        return string_dup(start, n, &out->overload);
    }
    return string_dup("", 0, &out->overload);
}

/* ---- types ---- */

/* The base types, each with its plain, list (T[]), optional (T?), optional-list (T[]?) and
 * list-of-optionals (T?[]) forms (-1: not supported). */
typedef struct {
    const char *name;
    int plain, list, optional, optional_list, list_of_optional;
} base_type;

static const base_type base_types[] = {
    {"Tensor", PITH_TYPE_TENSOR, PITH_TYPE_TENSOR_LIST, PITH_TYPE_OPT_TENSOR, -1,
     PITH_TYPE_LIST_OPT_TENSOR},
    {"int", PITH_TYPE_INT, PITH_TYPE_INT_LIST, PITH_TYPE_OPT_INT, PITH_TYPE_OPT_INT_LIST, -1},
    {"float", PITH_TYPE_FLOAT, PITH_TYPE_FLOAT_LIST, PITH_TYPE_OPT_FLOAT,
     PITH_TYPE_OPT_FLOAT_LIST, -1},
    {"bool", PITH_TYPE_BOOL, -1, PITH_TYPE_OPT_BOOL, -1, -1},
    {"Scalar", PITH_TYPE_SCALAR, -1, PITH_TYPE_OPT_SCALAR, -1, -1},
    {"ScalarType", PITH_TYPE_DTYPE, -1, PITH_TYPE_OPT_DTYPE, -1, -1},
    {"Device", -1, -1, PITH_TYPE_OPT_DEVICE, -1, -1},
    {"str", PITH_TYPE_STR, -1, PITH_TYPE_OPT_STR, -1, -1},
    {"Generator", -1, -1, PITH_TYPE_OPT_GENERATOR, -1, -1},
};

/* What a type parse found besides the type itself. */
typedef struct {
    pith_arg_type type;
    bool is_mutable;
    char alias_set;
    size_t list_size; /* N of int[N], 0 when not given */
} type_info;

static pith_status alias_parse(parser *ps, type_info *info)
{
    ps->p++; /* '(' */
    char c = *ps->p;
    if (!(c >= 'a' && c <= 'z'))
        return parser_expected(ps, "an alias set letter");
    info->alias_set = c;
    ps->p++;
    if (*ps->p == '!') {
        info->is_mutable = true;
        ps->p++;
    }
    if (*ps->p != ')')
        return parser_expected(ps, "')' to close the alias annotation");
    ps->p++;
    return PITH_OK;
}

static pith_status type_parse(parser *ps, type_info *info)
{
    memset(info, 0, sizeof *info);
    skip_space(ps);
    const char *start = ps->p;
    size_t n = ident_scan(ps);
    if (!n)
        return parser_expected(ps, "a type");
    const base_type *base = NULL;
    for (size_t i = 0; i < sizeof base_types / sizeof *base_types; i++)
        if (ident_is(start, n, base_types[i].name))
            base = &base_types[i];
    if (!base)
        return parser_fail(ps, start, "unknown type '%.*s'", (int)n, start);
    if (*ps->p == '(') {
        if (base != &base_types[0])
            return parser_fail(ps, ps->p, "an alias annotation is only allowed on Tensor");
        if (alias_parse(ps, info) != PITH_OK)
            return PITH_ERR_VALUE;
    }
    bool list = false, optional = false;
    if (ps->p[0] == '?' && ps->p[1] == '[' && ps->p[2] == ']') {
        ps->p += 3;
        if (base->list_of_optional < 0 || *ps->p == '[' || *ps->p == '?') {
            if (*ps->p == '[' || *ps->p == '?')
                ps->p++;
            return parser_fail(ps, start, "type '%.*s' is not supported",
                               (int)(ps->p - start), start);
        }
        info->type = (pith_arg_type)base->list_of_optional;
        return PITH_OK;
    }
    if (*ps->p == '[') {
        ps->p++;
        list = true;
        while (*ps->p >= '0' && *ps->p <= '9') {
            info->list_size = info->list_size * 10 + (size_t)(*ps->p - '0');
            if (info->list_size > 1000)
                return parser_fail(ps, ps->p, "list size is too large (at most 1000)");
            ps->p++;
        }
        if (*ps->p != ']')
            return parser_expected(ps, "']'");
        ps->p++;
    }
    if (*ps->p == '?') {
        ps->p++;
        optional = true;
    }
    int type = list && optional ? base->optional_list
               : list           ? base->list
               : optional       ? base->optional
                                : base->plain;
    if (*ps->p == '[' || *ps->p == '?') {
        ps->p++;
        type = -1;
    }
    if (type < 0)
        return parser_fail(ps, start, "type '%.*s' is not supported", (int)(ps->p - start),
                           start);
    info->type = (pith_arg_type)type;
    return PITH_OK;
}

bool pith_arg_type_is_optional(pith_arg_type t)
{
    switch (t) {
    case PITH_TYPE_OPT_TENSOR:
    case PITH_TYPE_OPT_INT:
    case PITH_TYPE_OPT_INT_LIST:
    case PITH_TYPE_OPT_FLOAT:
    case PITH_TYPE_OPT_SCALAR:
    case PITH_TYPE_OPT_DTYPE:
    case PITH_TYPE_OPT_DEVICE:
    case PITH_TYPE_OPT_FLOAT_LIST:
    case PITH_TYPE_OPT_BOOL:
    case PITH_TYPE_OPT_STR:
    case PITH_TYPE_OPT_GENERATOR:
        return true;
    default:
        return false;
    }
}

/* ---- default values ---- */

/* A number literal: [-+]digits[.digits][e[-+]digits], or inf / nan. */
static pith_status number_parse(parser *ps, bool want_int, pith_value *out)
{
    const char *start = ps->p;
    const char *q = ps->p;
    if (*q == '-' || *q == '+')
        q++;
    if (!want_int && (strncmp(q, "inf", 3) == 0 || strncmp(q, "nan", 3) == 0) &&
        !is_ident_char(q[3])) {
        out->kind = PITH_VALUE_DOUBLE;
        out->u.d = q[0] == 'i' ? (*start == '-' ? -INFINITY : INFINITY) : NAN;
        ps->p = q + 3;
        return PITH_OK;
    }
    bool is_float = false, digits = false;
    while (*q >= '0' && *q <= '9')
        q++, digits = true;
    if (*q == '.') {
        is_float = true;
        q++;
        while (*q >= '0' && *q <= '9')
            q++, digits = true;
    }
    if (!digits)
        return parser_fail(ps, start, "expected a number");
    if (*q == 'e' || *q == 'E') {
        is_float = true;
        q++;
        if (*q == '-' || *q == '+')
            q++;
        if (!(*q >= '0' && *q <= '9'))
            return parser_fail(ps, q, "expected the digits of an exponent");
        while (*q >= '0' && *q <= '9')
            q++;
    }
    if (is_ident_char(*q) || *q == '.')
        return parser_fail(ps, q, "unexpected character in a number");
    char buf[64];
    size_t len = (size_t)(q - start);
    if (len >= sizeof buf)
        return parser_fail(ps, start, "number is too long");
    memcpy(buf, start, len);
    buf[len] = 0;
    if (is_float && want_int)
        return parser_fail(ps, start, "expected an integer");
    errno = 0;
    if (is_float) {
        out->kind = PITH_VALUE_DOUBLE;
        out->u.d = strtod(buf, NULL);
    } else {
        long long v = strtoll(buf, NULL, 10);
        if (errno == ERANGE)
            return parser_fail(ps, start, "integer is out of range");
        out->kind = PITH_VALUE_INT;
        out->u.i = v;
    }
    ps->p = q;
    return PITH_OK;
}

/* A number list default: [n, n, ...] or one number (repeated list_size times, as PyTorch
 * reads `int[2] x=1`), of ints (`want_int`) or floats. */
static pith_status number_list_parse(parser *ps, size_t list_size, bool want_int,
                                     pith_value *out)
{
    pith_value items[64];
    size_t n = 0;
    if (*ps->p != '[') {
        pith_value one;
        if (number_parse(ps, want_int, &one) != PITH_OK)
            return PITH_ERR_VALUE;
        n = list_size ? list_size : 1;
        if (n > 64)
            return parser_fail(ps, ps->p, "list default is too long");
        for (size_t i = 0; i < n; i++)
            items[i] = one;
    } else {
        ps->p++;
        skip_space(ps);
        while (*ps->p != ']') {
            if (n > 0) {
                if (*ps->p != ',')
                    return parser_expected(ps, "',' or ']'");
                ps->p++;
                skip_space(ps);
            }
            if (n == 64)
                return parser_fail(ps, ps->p, "list default is too long");
            if (number_parse(ps, want_int, &items[n++]) != PITH_OK)
                return PITH_ERR_VALUE;
            skip_space(ps);
        }
        ps->p++;
    }
    size_t item_size = want_int ? sizeof(int64_t) : sizeof(double);
    void *data = NULL;
    if (n) {
        data = malloc(n * item_size);
        if (!data)
            return pith_set_error(PITH_ERR_NOMEM, "out of memory parsing a schema");
    }
    for (size_t i = 0; i < n; i++) {
        if (want_int)
            ((int64_t *)data)[i] = items[i].u.i;
        else
            ((double *)data)[i] =
                items[i].kind == PITH_VALUE_INT ? (double)items[i].u.i : items[i].u.d;
    }
    if (want_int) {
        out->kind = PITH_VALUE_INT_LIST;
        out->u.ints.data = data;
        out->u.ints.n = n;
    } else {
        out->kind = PITH_VALUE_DOUBLE_LIST;
        out->u.doubles.data = data;
        out->u.doubles.n = n;
    }
    return PITH_OK;
}

/* A quoted string with backslash escapes. */
static pith_status string_parse(parser *ps, pith_value *out)
{
    const char *open = ps->p;
    char quote = *ps->p++;
    size_t cap = strlen(ps->p) + 1;
    char *buf = malloc(cap);
    if (!buf)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory parsing a schema");
    size_t n = 0;
    for (;;) {
        char c = *ps->p;
        if (!c) {
            free(buf);
            return parser_fail(ps, open, "unterminated string");
        }
        ps->p++;
        if (c == quote)
            break;
        if (c == '\\') {
            char e = *ps->p;
            if (!e) {
                free(buf);
                return parser_fail(ps, open, "unterminated string");
            }
            ps->p++;
            c = e == 'n' ? '\n' : e == 't' ? '\t' : e;
        }
        buf[n++] = c;
    }
    buf[n] = 0;
    out->kind = PITH_VALUE_STRING;
    out->u.s = buf;
    return PITH_OK;
}

/* A dtype default names its dtype as core spells it (pith_dtype_from_name: "float32",
 * "float", "long", ...); the identifier is at most a few letters, so a longer one is no
 * dtype. */
static bool dtype_ident_parse(const char *s, size_t n, pith_dtype *out)
{
    char name[16];
    if (n == 0 || n >= sizeof name)
        return false;
    memcpy(name, s, n);
    name[n] = 0;
    return pith_dtype_from_name(name, out);
}

/* Parses the default of an argument of type `info->type` into `out`. */
static pith_status default_parse(parser *ps, const type_info *info, pith_value *out)
{
    memset(out, 0, sizeof *out);
    skip_space(ps);
    const char *start = ps->p;
    pith_arg_type t = info->type;
    if (strncmp(ps->p, "None", 4) == 0 && !is_ident_char(ps->p[4])) {
        if (!pith_arg_type_is_optional(t))
            return parser_fail(ps, start, "None is not a valid default for type '%s'",
                               arg_type_name(t));
        ps->p += 4;
        out->kind = PITH_VALUE_NONE;
        return PITH_OK;
    }
    switch (t) {
    case PITH_TYPE_INT:
    case PITH_TYPE_OPT_INT:
        return number_parse(ps, true, out);
    case PITH_TYPE_INT_LIST:
    case PITH_TYPE_OPT_INT_LIST:
        return number_list_parse(ps, info->list_size, true, out);
    case PITH_TYPE_FLOAT_LIST:
    case PITH_TYPE_OPT_FLOAT_LIST:
        return number_list_parse(ps, info->list_size, false, out);
    case PITH_TYPE_FLOAT:
    case PITH_TYPE_OPT_FLOAT:
        if (number_parse(ps, false, out) != PITH_OK)
            return PITH_ERR_VALUE;
        if (out->kind == PITH_VALUE_INT) {
            out->kind = PITH_VALUE_DOUBLE;
            out->u.d = (double)out->u.i;
        }
        return PITH_OK;
    case PITH_TYPE_BOOL:
    case PITH_TYPE_OPT_BOOL:
    case PITH_TYPE_SCALAR:
    case PITH_TYPE_OPT_SCALAR: {
        size_t n = ident_scan(ps);
        if (n && (ident_is(start, n, "True") || ident_is(start, n, "False"))) {
            out->kind = PITH_VALUE_BOOL;
            out->u.b = start[0] == 'T';
            return PITH_OK;
        }
        if (t == PITH_TYPE_BOOL || t == PITH_TYPE_OPT_BOOL) {
            ps->p = start;
            return parser_fail(ps, start, "expected True or False");
        }
        ps->p = start;
        return number_parse(ps, false, out);
    }
    case PITH_TYPE_STR:
    case PITH_TYPE_OPT_STR:
        if (*ps->p != '\'' && *ps->p != '"')
            return parser_fail(ps, start, "expected a quoted string");
        return string_parse(ps, out);
    case PITH_TYPE_DTYPE:
    case PITH_TYPE_OPT_DTYPE: {
        size_t n = ident_scan(ps);
        if (dtype_ident_parse(start, n, &out->u.dtype)) {
            out->kind = PITH_VALUE_DTYPE;
            return PITH_OK;
        }
        return parser_fail(ps, start, "expected a dtype name or None");
    }
    case PITH_TYPE_OPT_DEVICE: {
        size_t n = ident_scan(ps);
        if (n && (ident_is(start, n, "cpu") || ident_is(start, n, "meta"))) {
            out->kind = PITH_VALUE_DEVICE;
            out->u.device = start[0] == 'c' ? PITH_CPU : PITH_META;
            return PITH_OK;
        }
        return parser_fail(ps, start, "expected cpu, meta or None");
    }
    default: /* Tensor, Tensor?, Tensor[], Generator? */
        return parser_fail(ps, start, "a %s argument can only default to None",
                           arg_type_name(t));
    }
}

/* ---- arguments and returns ---- */

static void arg_free(pith_schema_arg *arg)
{
    free(arg->name);
    value_clear(&arg->default_value);
}

static pith_status args_grow(pith_schema_arg **args, size_t n)
{
    pith_schema_arg *grown = realloc(*args, (n + 1) * sizeof **args);
    if (!grown)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory parsing a schema");
    memset(&grown[n], 0, sizeof *grown);
    grown[n].default_value.kind = PITH_VALUE_NONE;
    *args = grown;
    return PITH_OK;
}

static pith_status arg_parse(parser *ps, pith_schema *out, bool kwarg_only)
{
    type_info info;
    if (type_parse(ps, &info) != PITH_OK)
        return PITH_ERR_VALUE;
    skip_space(ps);
    const char *name_at = ps->p;
    size_t n = ident_scan(ps);
    if (!n)
        return parser_expected(ps, "an argument name");
    for (size_t i = 0; i < out->nargs; i++)
        if (ident_is(name_at, n, out->args[i].name))
            return parser_fail(ps, name_at, "duplicate argument name '%.*s'", (int)n, name_at);
    if (args_grow(&out->args, out->nargs) != PITH_OK)
        return PITH_ERR_NOMEM;
    pith_schema_arg *arg = &out->args[out->nargs++];
    arg->type = info.type;
    arg->kwarg_only = kwarg_only;
    arg->is_mutable = info.is_mutable;
    arg->alias_set = info.alias_set;
    arg->list_size = info.list_size;
    if (string_dup(name_at, n, &arg->name) != PITH_OK)
        return PITH_ERR_NOMEM;
    skip_space(ps);
    if (*ps->p == '=') {
        ps->p++;
        if (default_parse(ps, &info, &arg->default_value) != PITH_OK)
            return pith_last_status();
        arg->has_default = true;
    } else if (!kwarg_only && out->nargs > 1 && out->args[out->nargs - 2].has_default &&
               !out->args[out->nargs - 2].kwarg_only) {
        return parser_fail(ps, name_at, "argument '%s' without a default follows an argument "
                                        "with one",
                           arg->name);
    }
    return PITH_OK;
}

static pith_status args_parse(parser *ps, pith_schema *out)
{
    if (expect_char(ps, '(', "'(' to open the arguments") != PITH_OK)
        return PITH_ERR_VALUE;
    skip_space(ps);
    if (*ps->p == ')') {
        ps->p++;
        return PITH_OK;
    }
    bool kwarg_only = false;
    for (;;) {
        skip_space(ps);
        if (*ps->p == '*') {
            if (kwarg_only)
                return parser_fail(ps, ps->p, "a second '*'");
            kwarg_only = true;
            ps->p++;
            if (expect_char(ps, ',', "',' after '*'") != PITH_OK)
                return PITH_ERR_VALUE;
            continue;
        }
        if (arg_parse(ps, out, kwarg_only) != PITH_OK)
            return pith_last_status();
        skip_space(ps);
        if (*ps->p == ')') {
            ps->p++;
            return PITH_OK;
        }
        if (*ps->p != ',')
            return parser_expected(ps, "',' or ')'");
        ps->p++;
    }
}

static pith_status return_parse(parser *ps, pith_schema *out, bool allow_name)
{
    type_info info;
    skip_space(ps);
    const char *start = ps->p;
    if (type_parse(ps, &info) != PITH_OK)
        return PITH_ERR_VALUE;
    if (out->nreturns == PITH_MAX_RETURNS)
        return parser_fail(ps, start, "more than %d returns", PITH_MAX_RETURNS);
    if (args_grow(&out->returns, out->nreturns) != PITH_OK)
        return PITH_ERR_NOMEM;
    pith_schema_arg *ret = &out->returns[out->nreturns++];
    ret->type = info.type;
    ret->is_mutable = info.is_mutable;
    ret->alias_set = info.alias_set;
    skip_space(ps);
    const char *name_at = ps->p;
    size_t n = allow_name ? ident_scan(ps) : 0;
    if (n && string_dup(name_at, n, &ret->name) != PITH_OK)
        return PITH_ERR_NOMEM;
    return PITH_OK;
}

static pith_status returns_parse(parser *ps, pith_schema *out)
{
    skip_space(ps);
    if (ps->p[0] != '-' || ps->p[1] != '>')
        return parser_expected(ps, "'->'");
    ps->p += 2;
    skip_space(ps);
    if (*ps->p != '(')
        return return_parse(ps, out, false);
    ps->p++;
    skip_space(ps);
    if (*ps->p == ')') {
        ps->p++;
        return PITH_OK;
    }
    for (;;) {
        if (return_parse(ps, out, true) != PITH_OK)
            return pith_last_status();
        skip_space(ps);
        if (*ps->p == ')') {
            ps->p++;
            return PITH_OK;
        }
        if (*ps->p != ',')
            return parser_expected(ps, "',' or ')'");
        ps->p++;
    }
}

pith_status schema_parse(const char *text, pith_schema *out)
{
    if (!out)
        return pith_set_error(PITH_ERR_VALUE, "schema_parse: `out` is NULL");
    memset(out, 0, sizeof *out);
    if (!text)
        return pith_set_error(PITH_ERR_VALUE, "invalid schema: the schema is NULL");
    parser ps = {text, text};
    if (name_parse(&ps, out) != PITH_OK || args_parse(&ps, out) != PITH_OK ||
        returns_parse(&ps, out) != PITH_OK)
        goto fail;
    skip_space(&ps);
    if (*ps.p) {
        parser_fail(&ps, ps.p, "unexpected '%c' after the returns", *ps.p);
        goto fail;
    }
    return PITH_OK;
fail:
    schema_free(out);
    return pith_last_status();
}

void schema_free(pith_schema *schema)
{
    if (!schema)
        return;
    free(schema->ns);
    free(schema->name);
    free(schema->overload);
    for (size_t i = 0; i < schema->nargs; i++)
        arg_free(&schema->args[i]);
    free(schema->args);
    for (size_t i = 0; i < schema->nreturns; i++)
        arg_free(&schema->returns[i]);
    free(schema->returns);
    memset(schema, 0, sizeof *schema);
}

