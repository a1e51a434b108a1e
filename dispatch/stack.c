/* stack.c — boxed values and the public pith_stack API: pushes (which take copies or
 * references), typed reads, drop and free. Argument checking against a schema lives in
 * boxing.c; calls live in registry.c. */
#include <stdlib.h>
#include <string.h>

#include "core/error.h"
#include "dispatch/value.h"

void value_clear(pith_value *v)
{
    switch (v->kind) {
    case PITH_VALUE_TENSOR:
        pith_release(v->u.t);
        break;
    case PITH_VALUE_STRING:
        free(v->u.s);
        break;
    case PITH_VALUE_INT_LIST:
        free(v->u.ints.data);
        break;
    case PITH_VALUE_DOUBLE_LIST:
        free(v->u.doubles.data);
        break;
    case PITH_VALUE_GENERATOR:
        pith_generator_release(v->u.generator);
        break;
    case PITH_VALUE_TENSOR_LIST:
        for (size_t i = 0; i < v->u.tensors.n; i++)
            pith_release(v->u.tensors.data[i]);
        free(v->u.tensors.data);
        break;
    default:
        break;
    }
    memset(v, 0, sizeof *v);
    v->kind = PITH_VALUE_NONE;
}

/* Makes room for one more value; doubling keeps pushes amortised O(1). */
static pith_status stack_reserve_one(pith_stack *s)
{
    if (s->size < s->capacity)
        return PITH_OK;
    size_t cap = s->capacity ? s->capacity * 2 : 8;
    if (cap < s->capacity || cap > SIZE_MAX / sizeof(pith_value))
        return pith_set_error(PITH_ERR_NOMEM, "stack: too many values");
    pith_value *values = realloc(s->values, cap * sizeof(pith_value));
    if (!values)
        return pith_set_error(PITH_ERR_NOMEM, "stack: out of memory growing to %zu values",
                              cap);
    s->values = values;
    s->capacity = cap;
    return PITH_OK;
}

pith_status stack_push_value(pith_stack *s, pith_value v)
{
    if (stack_reserve_one(s) != PITH_OK) {
        value_clear(&v);
        return PITH_ERR_NOMEM;
    }
    s->values[s->size++] = v;
    return PITH_OK;
}

/* Copies an int list (NULL data for an empty list). */
static pith_status ints_copy(const int64_t *data, size_t n, int64_t **out)
{
    *out = NULL;
    if (n == 0)
        return PITH_OK;
    if (n > SIZE_MAX / sizeof(int64_t))
        return pith_set_error(PITH_ERR_NOMEM, "int list of %zu values is too long", n);
    *out = malloc(n * sizeof(int64_t));
    if (!*out)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory copying an int list");
    memcpy(*out, data, n * sizeof(int64_t));
    return PITH_OK;
}

/* Copies a float list (NULL data for an empty list). */
static pith_status doubles_copy(const double *data, size_t n, double **out)
{
    *out = NULL;
    if (n == 0)
        return PITH_OK;
    if (n > SIZE_MAX / sizeof(double))
        return pith_set_error(PITH_ERR_NOMEM, "float list of %zu values is too long", n);
    *out = malloc(n * sizeof(double));
    if (!*out)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory copying a float list");
    memcpy(*out, data, n * sizeof(double));
    return PITH_OK;
}

/* Copies a tensor list, retaining each tensor; NULL entries (None) are kept. See Note
 * [None entries of tensor lists] in boxing.c. */
static pith_status tensors_copy(const pith_tensor *const *data, size_t n, pith_tensor ***out)
{
    *out = NULL;
    if (n == 0)
        return PITH_OK;
    if (n > SIZE_MAX / sizeof(pith_tensor *))
        return pith_set_error(PITH_ERR_NOMEM, "tensor list of %zu values is too long", n);
    pith_tensor **copy = malloc(n * sizeof *copy);
    if (!copy)
        return pith_set_error(PITH_ERR_NOMEM, "out of memory copying a tensor list");
    for (size_t i = 0; i < n; i++) {
        copy[i] = (pith_tensor *)data[i];
        if (copy[i])
            pith_retain(copy[i]);
    }
    *out = copy;
    return PITH_OK;
}

pith_status value_copy(const pith_value *v, pith_value *out)
{
    *out = *v;
    switch (v->kind) {
    case PITH_VALUE_TENSOR:
        pith_retain(v->u.t);
        return PITH_OK;
    case PITH_VALUE_STRING:
        out->u.s = strdup(v->u.s);
        if (!out->u.s) {
            out->kind = PITH_VALUE_NONE;
            return pith_set_error(PITH_ERR_NOMEM, "out of memory copying a string");
        }
        return PITH_OK;
    case PITH_VALUE_INT_LIST:
        if (ints_copy(v->u.ints.data, v->u.ints.n, &out->u.ints.data) != PITH_OK) {
            out->kind = PITH_VALUE_NONE;
            return PITH_ERR_NOMEM;
        }
        return PITH_OK;
    case PITH_VALUE_DOUBLE_LIST:
        if (doubles_copy(v->u.doubles.data, v->u.doubles.n, &out->u.doubles.data) != PITH_OK) {
            out->kind = PITH_VALUE_NONE;
            return PITH_ERR_NOMEM;
        }
        return PITH_OK;
    case PITH_VALUE_GENERATOR:
        pith_generator_retain(v->u.generator);
        return PITH_OK;
    case PITH_VALUE_TENSOR_LIST:
        if (tensors_copy((const pith_tensor *const *)v->u.tensors.data, v->u.tensors.n,
                         &out->u.tensors.data) != PITH_OK) {
            out->kind = PITH_VALUE_NONE;
            return pith_last_status();
        }
        return PITH_OK;
    default:
        return PITH_OK;
    }
}

/* ---- public API ---- */

#define STACK_CHECK(s, ret)                                                                 \
    do {                                                                                    \
        if (!(s)) {                                                                         \
            pith_set_error(PITH_ERR_VALUE, "%s: the stack is NULL", __func__);              \
            return ret;                                                                     \
        }                                                                                   \
    } while (0)

pith_stack *pith_stack_new(void)
{
    pith_stack *s = calloc(1, sizeof *s);
    if (!s)
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "pith_stack_new: out of memory");
    return s;
}

void pith_stack_free(pith_stack *s)
{
    if (!s)
        return;
    pith_stack_drop(s, s->size);
    free(s->values);
    free(s);
}

pith_status pith_stack_push_tensor(pith_stack *s, const pith_tensor *t)
{
    STACK_CHECK(s, PITH_ERR_VALUE);
    if (!t)
        return pith_set_error(PITH_ERR_VALUE, "pith_stack_push_tensor: the tensor is NULL "
                                              "(push None with pith_stack_push_none)");
    pith_retain((pith_tensor *)t);
    pith_value v = {.kind = PITH_VALUE_TENSOR, .u.t = (pith_tensor *)t};
    return stack_push_value(s, v);
}

pith_status pith_stack_push_tensor_steal(pith_stack *s, pith_tensor *t)
{
    if (!s) {
        pith_release(t); /* stolen either way */
        return pith_set_error(PITH_ERR_VALUE, "pith_stack_push_tensor_steal: the stack is NULL");
    }
    if (!t)
        return pith_set_error(PITH_ERR_VALUE, "pith_stack_push_tensor_steal: the tensor is NULL");
    pith_value v = {.kind = PITH_VALUE_TENSOR, .u.t = t};
    return stack_push_value(s, v);
}

pith_status pith_stack_push_int(pith_stack *s, int64_t i)
{
    STACK_CHECK(s, PITH_ERR_VALUE);
    pith_value v = {.kind = PITH_VALUE_INT, .u.i = i};
    return stack_push_value(s, v);
}

pith_status pith_stack_push_double(pith_stack *s, double d)
{
    STACK_CHECK(s, PITH_ERR_VALUE);
    pith_value v = {.kind = PITH_VALUE_DOUBLE, .u.d = d};
    return stack_push_value(s, v);
}

pith_status pith_stack_push_bool(pith_stack *s, bool b)
{
    STACK_CHECK(s, PITH_ERR_VALUE);
    pith_value v = {.kind = PITH_VALUE_BOOL, .u.b = b};
    return stack_push_value(s, v);
}

pith_status pith_stack_push_none(pith_stack *s)
{
    STACK_CHECK(s, PITH_ERR_VALUE);
    pith_value v = {.kind = PITH_VALUE_NONE};
    return stack_push_value(s, v);
}

pith_status pith_stack_push_string(pith_stack *s, const char *str)
{
    STACK_CHECK(s, PITH_ERR_VALUE);
    if (!str)
        return pith_set_error(PITH_ERR_VALUE, "pith_stack_push_string: the string is NULL");
    pith_value v = {.kind = PITH_VALUE_STRING, .u.s = strdup(str)};
    if (!v.u.s)
        return pith_set_error(PITH_ERR_NOMEM, "pith_stack_push_string: out of memory");
    return stack_push_value(s, v);
}

pith_status pith_stack_push_int_list(pith_stack *s, const int64_t *data, size_t n)
{
    STACK_CHECK(s, PITH_ERR_VALUE);
    if (n && !data)
        return pith_set_error(PITH_ERR_VALUE, "pith_stack_push_int_list: data is NULL");
    pith_value v = {.kind = PITH_VALUE_INT_LIST, .u.ints.n = n};
    if (ints_copy(data, n, &v.u.ints.data) != PITH_OK)
        return pith_last_status();
    return stack_push_value(s, v);
}

pith_status pith_stack_push_tensor_list(pith_stack *s, const pith_tensor *const *data, size_t n)
{
    STACK_CHECK(s, PITH_ERR_VALUE);
    if (n && !data)
        return pith_set_error(PITH_ERR_VALUE, "pith_stack_push_tensor_list: data is NULL");
    pith_value v = {.kind = PITH_VALUE_TENSOR_LIST, .u.tensors.n = n};
    if (tensors_copy(data, n, &v.u.tensors.data) != PITH_OK)
        return error_prefix("pith_stack_push_tensor_list");
    return stack_push_value(s, v);
}

pith_status pith_stack_push_dtype(pith_stack *s, pith_dtype dtype)
{
    STACK_CHECK(s, PITH_ERR_VALUE);
    if ((unsigned)dtype >= PITH_NUM_DTYPES)
        return pith_set_error(PITH_ERR_VALUE, "pith_stack_push_dtype: invalid dtype %d",
                              (int)dtype);
    pith_value v = {.kind = PITH_VALUE_DTYPE, .u.dtype = dtype};
    return stack_push_value(s, v);
}

pith_status pith_stack_push_device(pith_stack *s, pith_device device)
{
    STACK_CHECK(s, PITH_ERR_VALUE);
    if (device != PITH_CPU && device != PITH_META)
        return pith_set_error(PITH_ERR_VALUE, "pith_stack_push_device: invalid device %d",
                              (int)device);
    pith_value v = {.kind = PITH_VALUE_DEVICE, .u.device = device};
    return stack_push_value(s, v);
}

pith_status pith_stack_push_double_list(pith_stack *s, const double *data, size_t n)
{
    STACK_CHECK(s, PITH_ERR_VALUE);
    if (n && !data)
        return pith_set_error(PITH_ERR_VALUE, "pith_stack_push_double_list: data is NULL");
    pith_value v = {.kind = PITH_VALUE_DOUBLE_LIST, .u.doubles.n = n};
    if (doubles_copy(data, n, &v.u.doubles.data) != PITH_OK)
        return pith_last_status();
    return stack_push_value(s, v);
}

pith_status pith_stack_push_generator(pith_stack *s, pith_generator *g)
{
    STACK_CHECK(s, PITH_ERR_VALUE);
    if (!g)
        g = pith_default_generator();
    pith_generator_retain(g);
    pith_value v = {.kind = PITH_VALUE_GENERATOR, .u.generator = g};
    return stack_push_value(s, v);
}

size_t pith_stack_size(const pith_stack *s)
{
    return s ? s->size : 0;
}

void pith_stack_drop(pith_stack *s, size_t n)
{
    if (!s)
        return;
    if (n > s->size)
        n = s->size;
    for (size_t i = 0; i < n; i++)
        value_clear(&s->values[--s->size]);
}

static const char *const value_kind_names[] = {
    [PITH_VALUE_NONE] = "None",          [PITH_VALUE_TENSOR] = "Tensor",
    [PITH_VALUE_INT] = "int",            [PITH_VALUE_DOUBLE] = "float",
    [PITH_VALUE_BOOL] = "bool",          [PITH_VALUE_STRING] = "str",
    [PITH_VALUE_INT_LIST] = "int[]",     [PITH_VALUE_TENSOR_LIST] = "Tensor[]",
    [PITH_VALUE_DTYPE] = "ScalarType",   [PITH_VALUE_DEVICE] = "Device",
    [PITH_VALUE_DOUBLE_LIST] = "float[]", [PITH_VALUE_GENERATOR] = "Generator",
};

const char *value_kind_name(pith_value_kind kind)
{
    return (unsigned)kind < sizeof value_kind_names / sizeof *value_kind_names
               ? value_kind_names[kind]
               : "unknown";
}

/* The i-th value if it exists and has kind `want` (or `alt`); else NULL with the error set. */
static const pith_value *stack_get_checked(const char *fn, const pith_stack *s, size_t i,
                                           pith_value_kind want, pith_value_kind alt)
{
    if (!s)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "%s: the stack is NULL", fn);
    if (i >= s->size)
        return PITH_FAIL_NULL(PITH_ERR_INDEX, "%s: index %zu is out of range for a stack of "
                                              "%zu values", fn, i, s->size);
    const pith_value *v = &s->values[i];
    if (v->kind != want && v->kind != alt)
        return PITH_FAIL_NULL(PITH_ERR_TYPE, "%s: value %zu is %s, not %s", fn, i,
                              value_kind_name(v->kind), value_kind_name(want));
    return v;
}

pith_value_kind pith_stack_kind(const pith_stack *s, size_t i)
{
    if (!s) {
        pith_set_error(PITH_ERR_VALUE, "pith_stack_kind: the stack is NULL");
        return PITH_VALUE_NONE;
    }
    if (i >= s->size) {
        pith_set_error(PITH_ERR_INDEX, "pith_stack_kind: index %zu is out of range for a "
                                       "stack of %zu values", i, s->size);
        return PITH_VALUE_NONE;
    }
    return s->values[i].kind;
}

pith_tensor *pith_stack_get_tensor(const pith_stack *s, size_t i)
{
    const pith_value *v =
        stack_get_checked(__func__, s, i, PITH_VALUE_TENSOR, PITH_VALUE_TENSOR);
    if (!v)
        return NULL;
    pith_retain(v->u.t);
    return v->u.t;
}

int64_t pith_stack_get_int(const pith_stack *s, size_t i)
{
    const pith_value *v = stack_get_checked(__func__, s, i, PITH_VALUE_INT, PITH_VALUE_INT);
    return v ? v->u.i : 0;
}

double pith_stack_get_double(const pith_stack *s, size_t i)
{
    const pith_value *v = stack_get_checked(__func__, s, i, PITH_VALUE_DOUBLE, PITH_VALUE_INT);
    if (!v)
        return 0.0;
    return v->kind == PITH_VALUE_INT ? (double)v->u.i : v->u.d;
}

bool pith_stack_get_bool(const pith_stack *s, size_t i)
{
    const pith_value *v = stack_get_checked(__func__, s, i, PITH_VALUE_BOOL, PITH_VALUE_BOOL);
    return v ? v->u.b : false;
}

const char *pith_stack_get_string(const pith_stack *s, size_t i)
{
    const pith_value *v =
        stack_get_checked(__func__, s, i, PITH_VALUE_STRING, PITH_VALUE_STRING);
    return v ? v->u.s : NULL;
}

pith_dtype pith_stack_get_dtype(const pith_stack *s, size_t i)
{
    const pith_value *v = stack_get_checked(__func__, s, i, PITH_VALUE_DTYPE, PITH_VALUE_DTYPE);
    return v ? v->u.dtype : (pith_dtype)PITH_NUM_DTYPES;
}

pith_device pith_stack_get_device(const pith_stack *s, size_t i)
{
    const pith_value *v =
        stack_get_checked(__func__, s, i, PITH_VALUE_DEVICE, PITH_VALUE_DEVICE);
    return v ? v->u.device : PITH_CPU; /* a valid enum value: See pith.h */
}

/* Empty lists hold no array; their borrowed views point here so that NULL means error. */
static const int64_t empty_ints[1];
static pith_tensor *const empty_tensors[1];
static const double empty_doubles[1];

const double *pith_stack_get_double_list(const pith_stack *s, size_t i, size_t *n)
{
    if (n)
        *n = 0;
    const pith_value *v =
        stack_get_checked(__func__, s, i, PITH_VALUE_DOUBLE_LIST, PITH_VALUE_DOUBLE_LIST);
    if (!v)
        return NULL;
    if (n)
        *n = v->u.doubles.n;
    return v->u.doubles.data ? v->u.doubles.data : empty_doubles;
}

pith_generator *pith_stack_get_generator(const pith_stack *s, size_t i)
{
    const pith_value *v =
        stack_get_checked(__func__, s, i, PITH_VALUE_GENERATOR, PITH_VALUE_GENERATOR);
    return v ? v->u.generator : NULL;
}

const int64_t *pith_stack_get_int_list(const pith_stack *s, size_t i, size_t *n)
{
    if (n)
        *n = 0;
    const pith_value *v =
        stack_get_checked(__func__, s, i, PITH_VALUE_INT_LIST, PITH_VALUE_INT_LIST);
    if (!v)
        return NULL;
    if (n)
        *n = v->u.ints.n;
    return v->u.ints.data ? v->u.ints.data : empty_ints;
}

pith_tensor *const *pith_stack_get_tensor_list(const pith_stack *s, size_t i, size_t *n)
{
    if (n)
        *n = 0;
    const pith_value *v =
        stack_get_checked(__func__, s, i, PITH_VALUE_TENSOR_LIST, PITH_VALUE_TENSOR_LIST);
    if (!v)
        return NULL;
    if (n)
        *n = v->u.tensors.n;
    return v->u.tensors.data ? v->u.tensors.data : empty_tensors;
}
