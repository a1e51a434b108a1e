/* schema.h — operator schemas in PyTorch's syntax, parsed into a struct.
 *
 *   ns::name.overload(Tensor self, int[] dims=[], *, Scalar alpha=1, Tensor(a!) out)
 *       -> (Tensor values, Tensor indices)
 *
 * Supported types are the pith_arg_type values below. A malformed schema is
 * PITH_ERR_VALUE with a message that quotes the schema and points at the bad character. */
#ifndef PITH_DISPATCH_SCHEMA_H
#define PITH_DISPATCH_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>

#include "dispatch/value.h"
#include "pith/pith.h"

/* The argument types (PITH_FORALL_ARG_TYPES, pith_arg_type) are public: pith/schema.h. */

/* The spelling of a type in a schema ("Tensor?"). */
const char *arg_type_name(pith_arg_type type);

/* The most results an operator may return. */
#define PITH_MAX_RETURNS 4

typedef struct {
    char *name;           /* NULL for unnamed returns */
    pith_arg_type type;
    bool kwarg_only;      /* after the `*` */
    bool has_default;
    pith_value default_value; /* owned; kind NONE for `=None` */
    bool is_mutable;      /* alias annotation with `!`, e.g. Tensor(a!) */
    char alias_set;       /* the letter of an alias annotation, or 0 */
    size_t list_size;     /* N of int[N] (at most 1000), 0 when not given */
} pith_schema_arg;

typedef struct {
    char *ns;       /* "pith" when the schema names none */
    char *name;     /* "add" */
    char *overload; /* "Tensor", or "" */
    pith_schema_arg *args;
    size_t nargs;
    pith_schema_arg *returns;
    size_t nreturns;
} pith_schema;

/* Parses `text` into `out` (zeroed first). On failure nothing is leaked. */
pith_status schema_parse(const char *text, pith_schema *out);
void schema_free(pith_schema *schema);

#endif /* PITH_DISPATCH_SCHEMA_H */
