/* api_shape.c — the public C entry points of pith/ops_shape.h: each converts its plain C
 * arguments into the op table's typed arguments and calls the generated pith_call_<id>,
 * so every call goes through the dispatcher. */
#include <stdlib.h>

#include "kernels/ops_internal.h"

static pith_tensor *tensor_result(pith_status status, const pith_value *ret)
{
    return status == PITH_OK ? ret[0].u.t : NULL;
}

/* Copies `n` int dims into `buf`; false with the error set when `n` is out of range or
 * `dims` is NULL. */
static bool dims_copy(const char *fn, size_t n, const int *dims, int64_t *buf)
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

static bool pointer_check(const char *fn, const char *what, const void *p, size_t n)
{
    if (n > 0 && !p)
        return pith_set_error(PITH_ERR_VALUE, "%s: argument '%s' is NULL", fn, what), false;
    return true;
}

static pith_opt_int opt_int_of(const int64_t *v)
{
    return v ? (pith_opt_int){true, *v} : (pith_opt_int){false, 0};
}

static pith_opt_int opt_dim_of(const int *dim)
{
    return dim ? (pith_opt_int){true, *dim} : (pith_opt_int){false, 0};
}

pith_tensor *pith_roll(const pith_tensor *x, size_t nshifts, const int64_t *shifts, size_t ndims,
                       const int *dims)
{
    int64_t buf[PITH_MAX_DIMS];
    pith_value ret[1];
    if (!pointer_check("roll", "shifts", shifts, nshifts) || !dims_copy("roll", ndims, dims, buf))
        return NULL;
    return tensor_result(pith_call_roll(ret, x, (pith_int_list){shifts, nshifts},
                                        (pith_int_list){buf, ndims}),
                         ret);
}

pith_tensor *pith_flip(const pith_tensor *x, int ndims, const int *dims)
{
    int64_t buf[PITH_MAX_DIMS];
    pith_value ret[1];
    if (ndims < 0)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "flip: ndims %d is negative", ndims);
    if (!dims_copy("flip", (size_t)ndims, dims, buf))
        return NULL;
    return tensor_result(pith_call_flip(ret, x, (pith_int_list){buf, (size_t)ndims}), ret);
}

pith_tensor *pith_repeat(const pith_tensor *x, int n, const int64_t *repeats)
{
    pith_value ret[1];
    if (n < 0)
        return PITH_FAIL_NULL(PITH_ERR_VALUE, "repeat: n %d is negative", n);
    if (!pointer_check("repeat", "repeats", repeats, (size_t)n))
        return NULL;
    return tensor_result(pith_call_repeat(ret, x, (pith_int_list){repeats, (size_t)n}), ret);
}

pith_tensor *pith_repeat_interleave(const pith_tensor *x, int64_t repeats, const int *dim,
                                    const int64_t *output_size)
{
    pith_value ret[1];
    return tensor_result(pith_call_repeat_interleave_self_int(ret, x, repeats, opt_dim_of(dim),
                                                              opt_int_of(output_size)),
                         ret);
}

pith_tensor *pith_repeat_interleave_tensor(const pith_tensor *x, const pith_tensor *repeats,
                                           const int *dim, const int64_t *output_size)
{
    pith_value ret[1];
    return tensor_result(pith_call_repeat_interleave_self_Tensor(ret, x, repeats, opt_dim_of(dim),
                                                                 opt_int_of(output_size)),
                         ret);
}

pith_tensor *pith_repeat_interleave_indices(const pith_tensor *repeats, const int64_t *output_size)
{
    pith_value ret[1];
    return tensor_result(pith_call_repeat_interleave_Tensor(ret, repeats, opt_int_of(output_size)),
                         ret);
}

pith_tensor *pith_outer(const pith_tensor *a, const pith_tensor *b)
{
    pith_value ret[1];
    return tensor_result(pith_call_outer(ret, a, b), ret);
}

pith_tensor **pith_meshgrid(const pith_tensor *const *tensors, size_t n, const char *indexing,
                            size_t *nout)
{
    pith_value ret[1];
    if (!pointer_check("meshgrid", "tensors", tensors, n) ||
        !pointer_check("meshgrid", "nout", nout, 1))
        return NULL;
    pith_tensor_list list = {tensors, n};
    pith_status status = indexing ? pith_call_meshgrid_indexing(ret, list, indexing)
                                  : pith_call_meshgrid(ret, list);
    if (status != PITH_OK)
        return NULL;
    *nout = ret[0].u.tensors.n;
    return ret[0].u.tensors.data; /* never NULL: meshgrid has at least one result */
}

pith_tensor *pith_einsum(const char *equation, const pith_tensor *const *operands, size_t n)
{
    pith_value ret[1];
    if (!pointer_check("einsum", "equation", equation, 1) ||
        !pointer_check("einsum", "operands", operands, n))
        return NULL;
    return tensor_result(pith_call_einsum(ret, equation, (pith_tensor_list){operands, n},
                                          (pith_opt_int_list){false, {NULL, 0}}),
                         ret);
}
