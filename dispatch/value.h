/* value.h — boxed values and stacks (pith_value, pith_stack), and the typed argument
 * types of unboxed kernels.
 *
 * A stack owns its values: tensors are retained, strings and lists are copied. The typed
 * argument types below borrow: an unboxed call never copies or retains its arguments. */
#ifndef PITH_DISPATCH_VALUE_H
#define PITH_DISPATCH_VALUE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/tensor.h"

struct pith_value {
    pith_value_kind kind;
    union {
        pith_tensor *t; /* owned by the value when on a stack */
        int64_t i;
        double d;
        bool b;
        char *s;
        pith_dtype dtype;
        pith_device device;
        struct {
            int64_t *data;
            size_t n;
        } ints;
        struct {
            double *data;
            size_t n;
        } doubles;
        pith_generator *generator; /* retained by the value; never NULL */
        struct {
            pith_tensor **data; /* entries may be NULL (None); See Note [None entries
                                   of tensor lists] in boxing.c */
            size_t n;
        } tensors;
    } u;
};

struct pith_stack {
    pith_value *values;
    size_t size;
    size_t capacity;
};

/* Releases what a value owns and sets it to none. */
void value_clear(pith_value *v);
/* Pushes a value, taking ownership of what it holds (released if the push fails). */
pith_status stack_push_value(pith_stack *s, pith_value v);
/* A deep copy: tensors retained, strings and lists copied. On failure *out is none. */
pith_status value_copy(const pith_value *v, pith_value *out);
/* "Tensor", "int", "None", ...: how errors name a value's kind. */
const char *value_kind_name(pith_value_kind kind);
/* Pointer to the i-th value from the bottom (no bounds check). */
static inline pith_value *stack_at(const pith_stack *s, size_t i)
{
    return &s->values[i];
}

/* ---- typed arguments of unboxed kernels (all borrowed) ---- */

/* Tensor[] and Tensor?[] arguments; only a Tensor?[] list may hold NULL (None) entries. */
typedef struct {
    const pith_tensor *const *data;
    size_t n;
} pith_tensor_list;

typedef struct {
    const int64_t *data;
    size_t n;
} pith_int_list;

typedef struct {
    bool present;
    pith_int_list list;
} pith_opt_int_list;

typedef struct {
    bool present;
    int64_t value;
} pith_opt_int;

typedef struct {
    const double *data;
    size_t n;
} pith_double_list;

typedef struct {
    bool present;
    pith_double_list list;
} pith_opt_double_list;

typedef struct {
    bool present;
    bool value;
} pith_opt_bool;

typedef struct {
    bool present;
    double value;
} pith_opt_double;

typedef enum { PITH_SCALAR_NONE, PITH_SCALAR_BOOL, PITH_SCALAR_INT, PITH_SCALAR_DOUBLE } pith_scalar_kind;

/* A Python-style number: `Scalar` and `Scalar?` arguments. */
typedef struct {
    pith_scalar_kind kind;
    union {
        bool b;
        int64_t i;
        double d;
    } u;
} pith_scalar;

static inline pith_scalar scalar_from_double(double d)
{
    pith_scalar s = {PITH_SCALAR_DOUBLE, {.d = d}};
    return s;
}
static inline pith_scalar scalar_from_int(int64_t i)
{
    pith_scalar s = {PITH_SCALAR_INT, {.i = i}};
    return s;
}
static inline pith_scalar scalar_none(void)
{
    pith_scalar s = {PITH_SCALAR_NONE, {.i = 0}};
    return s;
}
static inline double scalar_to_double(pith_scalar s)
{
    return s.kind == PITH_SCALAR_DOUBLE ? s.u.d
           : s.kind == PITH_SCALAR_INT  ? (double)s.u.i
                                        : (double)s.u.b;
}

/* `ScalarType?` and `Device?` arguments: -1 means None. */
typedef int pith_opt_dtype;
typedef int pith_opt_device;

#endif /* PITH_DISPATCH_VALUE_H */
