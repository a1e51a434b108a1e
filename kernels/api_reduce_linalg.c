/* api_reduce_linalg.c — the public C entry points (pith/ops.h) of the reductions, linear
 * algebra and normalisation ops. Each converts its plain C arguments to the op's typed
 * arguments and calls the dispatcher (pith_call_<id>). */
#include <math.h>
#include <stdlib.h>

#include "kernels/ops_internal.h"

/* The int dims of a public call as an int64 list; big lists go to the heap. */
typedef struct {
    int64_t local[PITH_MAX_DIMS];
    int64_t *data;
    size_t n;
} dims_buffer;

static pith_status dims_convert(const char *op, int ndims, const int *dims, dims_buffer *b)
{
    b->data = b->local;
    b->n = 0;
    if (ndims < 0)
        return pith_set_error(PITH_ERR_VALUE, "%s: ndims must be non-negative, got %d", op,
                              ndims);
    if (ndims > 0 && !dims)
        return pith_set_error(PITH_ERR_VALUE, "%s: dims is NULL but ndims is %d", op, ndims);
    if (ndims > PITH_MAX_DIMS && !(b->data = malloc(sizeof(int64_t) * (size_t)ndims)))
        return pith_set_error(PITH_ERR_NOMEM, "%s: out of memory", op);
    for (int i = 0; i < ndims; i++)
        b->data[i] = dims[i];
    b->n = (size_t)ndims;
    return PITH_OK;
}

static void dims_free(dims_buffer *b)
{
    if (b->data != b->local)
        free(b->data);
}

/* ndims == 0 is None: every dim. */
static pith_opt_int_list dims_optional(const dims_buffer *b)
{
    pith_opt_int_list l = {b->n > 0, {b->data, b->n}};
    return l;
}

static pith_tensor *result_tensor(pith_status status, const pith_value *ret)
{
    return status == PITH_OK ? ret[0].u.t : NULL;
}

/* One public reduction: converts the C dims (ndims == 0: every dim) and calls the op. */
static pith_tensor *reduction(pith_builtin_op_id id, const char *name, const pith_tensor *x,
                              int ndims, const int *dims, bool keepdim, double correction)
{
    dims_buffer b;
    pith_value ret[1];
    if (dims_convert(name, ndims, dims, &b) != PITH_OK)
        return NULL;
    const pith_opt_int_list some = dims_optional(&b);
    const pith_int_list list = {b.data, b.n};
    pith_status status;
    switch (id) {
    case PITH_OPID_sum: status = pith_call_sum(ret, x, some, keepdim, -1); break;
    case PITH_OPID_mean: status = pith_call_mean(ret, x, some, keepdim, -1); break;
    case PITH_OPID_prod: status = pith_call_prod(ret, x, some, keepdim, -1); break;
    case PITH_OPID_amax: status = pith_call_amax(ret, x, list, keepdim); break;
    case PITH_OPID_amin: status = pith_call_amin(ret, x, list, keepdim); break;
    case PITH_OPID_all: status = pith_call_all(ret, x, some, keepdim); break;
    case PITH_OPID_any: status = pith_call_any(ret, x, some, keepdim); break;
    case PITH_OPID_var:
        status = pith_call_var(ret, x, some, keepdim, scalar_from_double(correction));
        break;
    case PITH_OPID_std:
        status = pith_call_std(ret, x, some, keepdim, scalar_from_double(correction));
        break;
    default: status = pith_set_error(PITH_ERR_RUNTIME, "%s: not a reduction", name); break;
    }
    dims_free(&b);
    return result_tensor(status, ret);
}

pith_tensor *pith_sum(const pith_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return reduction(PITH_OPID_sum, "sum", x, ndims, dims, keepdim, 0);
}

pith_tensor *pith_mean(const pith_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return reduction(PITH_OPID_mean, "mean", x, ndims, dims, keepdim, 0);
}

pith_tensor *pith_prod(const pith_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return reduction(PITH_OPID_prod, "prod", x, ndims, dims, keepdim, 0);
}

pith_tensor *pith_amax(const pith_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return reduction(PITH_OPID_amax, "amax", x, ndims, dims, keepdim, 0);
}

pith_tensor *pith_amin(const pith_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return reduction(PITH_OPID_amin, "amin", x, ndims, dims, keepdim, 0);
}

pith_tensor *pith_all(const pith_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return reduction(PITH_OPID_all, "all", x, ndims, dims, keepdim, 0);
}

pith_tensor *pith_any(const pith_tensor *x, int ndims, const int *dims, bool keepdim)
{
    return reduction(PITH_OPID_any, "any", x, ndims, dims, keepdim, 0);
}

pith_tensor *pith_var(const pith_tensor *x, int ndims, const int *dims, double correction,
                      bool keepdim)
{
    return reduction(PITH_OPID_var, "var", x, ndims, dims, keepdim, correction);
}

pith_tensor *pith_std(const pith_tensor *x, int ndims, const int *dims, double correction,
                      bool keepdim)
{
    return reduction(PITH_OPID_std, "std", x, ndims, dims, keepdim, correction);
}

static pith_status values_indices(const char *op, pith_status (*call)(pith_value *,
                                                                      const pith_tensor *,
                                                                      int64_t, bool),
                                  const pith_tensor *x, int dim, bool keepdim,
                                  pith_tensor **values, pith_tensor **indices)
{
    pith_value ret[2];
    if (!values || !indices)
        return pith_set_error(PITH_ERR_VALUE, "%s: the values and indices outputs must not "
                                              "be NULL", op);
    *values = *indices = NULL;
    pith_status status = call(ret, x, dim, keepdim);
    if (status != PITH_OK)
        return status;
    *values = ret[0].u.t;
    *indices = ret[1].u.t;
    return PITH_OK;
}

pith_status pith_max_dim(const pith_tensor *x, int dim, bool keepdim, pith_tensor **values,
                         pith_tensor **indices)
{
    return values_indices("max_dim", pith_call_max_dim, x, dim, keepdim, values, indices);
}

pith_status pith_min_dim(const pith_tensor *x, int dim, bool keepdim, pith_tensor **values,
                         pith_tensor **indices)
{
    return values_indices("min_dim", pith_call_min_dim, x, dim, keepdim, values, indices);
}

pith_tensor *pith_max(const pith_tensor *x)
{
    pith_value ret[1];
    return result_tensor(pith_call_max(ret, x), ret);
}

pith_tensor *pith_min(const pith_tensor *x)
{
    pith_value ret[1];
    return result_tensor(pith_call_min(ret, x), ret);
}

pith_tensor *pith_argmax(const pith_tensor *x, const int *dim, bool keepdim)
{
    pith_value ret[1];
    pith_opt_int d = {dim != NULL, dim ? *dim : 0};
    return result_tensor(pith_call_argmax(ret, x, d, keepdim), ret);
}

pith_tensor *pith_argmin(const pith_tensor *x, const int *dim, bool keepdim)
{
    pith_value ret[1];
    pith_opt_int d = {dim != NULL, dim ? *dim : 0};
    return result_tensor(pith_call_argmin(ret, x, d, keepdim), ret);
}

/* ---- linear algebra ---- */

pith_tensor *pith_matmul(const pith_tensor *a, const pith_tensor *b)
{
    pith_value ret[1];
    return result_tensor(pith_call_matmul(ret, a, b), ret);
}

pith_tensor *pith_mm(const pith_tensor *a, const pith_tensor *b)
{
    pith_value ret[1];
    return result_tensor(pith_call_mm(ret, a, b), ret);
}

pith_tensor *pith_bmm(const pith_tensor *a, const pith_tensor *b)
{
    pith_value ret[1];
    return result_tensor(pith_call_bmm(ret, a, b), ret);
}

pith_status pith_matmul_out(pith_tensor *out, const pith_tensor *a, const pith_tensor *b)
{
    pith_value ret[1];
    return call_status(pith_call_matmul_out(ret, a, b, out), ret);
}

pith_status pith_mm_out(pith_tensor *out, const pith_tensor *a, const pith_tensor *b)
{
    pith_value ret[1];
    return call_status(pith_call_mm_out(ret, a, b, out), ret);
}

pith_status pith_bmm_out(pith_tensor *out, const pith_tensor *a, const pith_tensor *b)
{
    pith_value ret[1];
    return call_status(pith_call_bmm_out(ret, a, b, out), ret);
}

/* Integral values go as ints, so that integer tensors accept them (as Python's 1 and 2
 * would be); others as doubles. */
static pith_scalar scalar_from_number(double v)
{
    if (v > -9.0e18 && v < 9.0e18 && v == trunc(v))
        return scalar_from_int((int64_t)v);
    return scalar_from_double(v);
}

pith_tensor *pith_addmm(const pith_tensor *self, const pith_tensor *a, const pith_tensor *b,
                        double beta, double alpha)
{
    pith_value ret[1];
    return result_tensor(
        pith_call_addmm(ret, self, a, b, scalar_from_number(beta), scalar_from_number(alpha)),
        ret);
}

pith_tensor *pith_linear(const pith_tensor *x, const pith_tensor *weight,
                         const pith_tensor *bias)
{
    pith_value ret[1];
    return result_tensor(pith_call_linear(ret, x, weight, bias), ret);
}

/* ---- normalisation ---- */

pith_tensor *pith_softmax(const pith_tensor *x, int dim)
{
    pith_value ret[1];
    return result_tensor(pith_call_softmax(ret, x, dim, -1), ret);
}

pith_tensor *pith_log_softmax(const pith_tensor *x, int dim)
{
    pith_value ret[1];
    return result_tensor(pith_call_log_softmax(ret, x, dim, -1), ret);
}

pith_tensor *pith_layer_norm(const pith_tensor *x, int ndim_normalized,
                             const int64_t *normalized_shape, const pith_tensor *weight,
                             const pith_tensor *bias, double eps)
{
    pith_value ret[1];
    if (ndim_normalized < 0 || (ndim_normalized > 0 && !normalized_shape))
        return PITH_FAIL_NULL(PITH_ERR_VALUE,
                              "layer_norm: normalized_shape must hold ndim_normalized (%d) "
                              "sizes",
                              ndim_normalized);
    pith_int_list shape = {normalized_shape, (size_t)ndim_normalized};
    return result_tensor(pith_call_layer_norm(ret, x, shape, weight, bias, eps, true), ret);
}
