/* c_api_support.c — the checks, conversions and results that the public C functions of the
 * ops share (declared in ops/c_api_support.h; See Note [The C surface of an op] in
 * ops/ops.toml). Each check sets the thread-local error and returns false. */
#include <math.h>
#include <stdlib.h>

#include "ops/c_api_support.h"

bool int_list_check(const char *fn, int ndim)
{
    if (ndim < 0 || ndim > PITH_MAX_DIMS) {
        pith_set_error(PITH_ERR_VALUE, "%s: ndim %d is out of range [0, %d]", fn, ndim,
                       PITH_MAX_DIMS);
        return false;
    }
    return true;
}

bool dims_copy(const char *fn, size_t n, const int *dims, int64_t *buf)
{
    if (n > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_VALUE, "%s: %zu dims, more than %d", fn, n,
                              PITH_MAX_DIMS), false;
    if (n > 0 && !dims)
        return pith_set_error(PITH_ERR_VALUE, "%s: argument 'dims' is NULL", fn), false;
    for (size_t i = 0; i < n; i++)
        buf[i] = dims[i];
    return true;
}

bool pointer_check(const char *fn, const char *what, const void *p, size_t n)
{
    if (n > 0 && !p)
        return pith_set_error(PITH_ERR_VALUE, "%s: argument '%s' is NULL", fn, what), false;
    return true;
}

bool count_check(const char *fn, const char *what, int n)
{
    if (n < 0)
        return pith_set_error(PITH_ERR_VALUE, "%s: %s %d is negative", fn, what, n), false;
    return true;
}

bool as_strided_pointers_check(int ndim, const int64_t *sizes, const int64_t *strides)
{
    if (ndim > 0 && (!sizes || !strides))
        return pith_set_error(PITH_ERR_VALUE, "as_strided: %s is NULL",
                              sizes ? "strides" : "sizes"), false;
    return true;
}

bool normalized_shape_check(int ndim_normalized, const int64_t *normalized_shape)
{
    if (ndim_normalized < 0 || (ndim_normalized > 0 && !normalized_shape))
        return pith_set_error(PITH_ERR_VALUE,
                              "layer_norm: normalized_shape must hold ndim_normalized (%d) "
                              "sizes",
                              ndim_normalized), false;
    return true;
}

bool outputs_check(const char *fn, pith_tensor **values, pith_tensor **indices)
{
    if (!values || !indices)
        return pith_set_error(PITH_ERR_VALUE, "%s: the values and indices outputs must not "
                                              "be NULL", fn), false;
    return true;
}

bool outputs_clear(const char *fn, pith_tensor **values, pith_tensor **indices)
{
    if (!outputs_check(fn, values, indices))
        return false;
    *values = *indices = NULL;
    return true;
}

bool list_count_reset(const char *fn, size_t *n)
{
    if (!n)
        return pith_set_error(PITH_ERR_VALUE, "%s: argument 'n' is NULL", fn), false;
    *n = 0;
    return true;
}

bool dims_convert(const char *fn, int ndims, const int *dims, dims_buffer *b)
{
    b->data = b->local;
    b->n = 0;
    if (ndims < 0)
        return pith_set_error(PITH_ERR_VALUE, "%s: ndims must be non-negative, got %d", fn,
                              ndims), false;
    if (ndims > 0 && !dims)
        return pith_set_error(PITH_ERR_VALUE, "%s: dims is NULL but ndims is %d", fn,
                              ndims), false;
    if (ndims > PITH_MAX_DIMS && !(b->data = malloc(sizeof(int64_t) * (size_t)ndims)))
        return pith_set_error(PITH_ERR_NOMEM, "%s: out of memory", fn), false;
    for (int i = 0; i < ndims; i++)
        b->data[i] = dims[i];
    b->n = (size_t)ndims;
    return true;
}

void dims_free(dims_buffer *b)
{
    if (b->data != b->local)
        free(b->data);
}

pith_scalar scalar_from_c_double(double v)
{
    if (v == trunc(v) && v >= -0x1p63 && v < 0x1p63)
        return scalar_from_int((int64_t)v);
    return scalar_from_double(v);
}

pith_scalar scalar_from_c_coefficient(double v)
{
    if (v > -9.0e18 && v < 9.0e18 && v == trunc(v))
        return scalar_from_int((int64_t)v);
    return scalar_from_double(v);
}

pith_scalar clamp_bound_scalar(const pith_tensor *x, const double *bound)
{
    if (!bound)
        return scalar_none();
    if (!x || pith_dtype_is_floating(x->dtype))
        return scalar_from_double(*bound);
    return scalar_from_c_double(*bound);
}

pith_tensor **tensor_list_result(pith_status status, const pith_value *ret, size_t *n)
{
    if (status != PITH_OK)
        return NULL;
    pith_tensor **list = ret[0].u.tensors.data;
    size_t count = ret[0].u.tensors.n;
    if (!list && !(list = malloc(sizeof *list)))
        return PITH_FAIL_NULL(PITH_ERR_NOMEM, "cannot allocate a tensor list");
    *n = count;
    return list;
}
