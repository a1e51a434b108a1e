/* reduce_arg.c — reductions that report where the extreme is: argmax and argmin (and their
 * out= forms), and max.dim / min.dim (values and indices). The index is that of the first
 * extreme value; nan counts as the extreme (see the BETTER macros in reduce_loops.c). */
#include "kernels/ops_internal.h"
#include "kernels/out_target.h"
#include "kernels/reduce.h"

typedef struct {
    uint32_t mask;
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
} arg_setup;

/* Validation and result shape of argmax/argmin (dim may be None: the flattened tensor) and
 * max.dim/min.dim. */
static pith_status arg_prepare(const char *name, bool needs_non_bool, const pith_tensor *x,
                               pith_opt_int dim, bool keepdim, arg_setup *s)
{
    if (needs_non_bool && x->dtype == PITH_BOOL)
        return pith_set_error(PITH_ERR_TYPE, "%s: \"%s_cpu\" not implemented for 'Bool'", name,
                              name);
    if (!dim.present) {
        if (x->numel == 0)
            return pith_set_error(PITH_ERR_VALUE,
                                  "%s(): Expected reduction dim to be specified for "
                                  "input.numel() == 0.",
                                  name);
        s->mask = x->ndim ? (uint32_t)((1ull << x->ndim) - 1) : 0;
    } else {
        int d = 0;
        if (reduce_dim_wrap(name, x, dim.value, &d) != PITH_OK)
            return pith_last_status();
        if (x->ndim > 0 && x->sizes[d] == 0)
            return pith_set_error(PITH_ERR_INDEX,
                                  "%s(): Expected reduction dim %d to have non-zero size.",
                                  name, d);
        s->mask = x->ndim ? 1u << d : 0;
    }
    reduce_out_shape(x, s->mask, keepdim, &s->ndim, s->sizes);
    return PITH_OK;
}

/* Runs `op` into `values` (may be NULL) and `indices`. */
static pith_status arg_run(reduce_op op, const pith_tensor *x, uint32_t mask,
                           pith_tensor *values, pith_tensor *indices)
{
    reduce_kernel k;
    if (!reduce_kernel_get(op, x->dtype, &k))
        return pith_set_error(PITH_ERR_NOT_IMPLEMENTED, "not implemented for %s",
                              pith_dtype_name(x->dtype));
    reduce_ctx ctx = {values ? tensor_data(values) : tensor_data(indices),
                      values ? tensor_data(indices) : NULL,
                      values ? values->dtype : PITH_INT64, reduce_count(x, mask), 0};
    return reduce_run(&k, &ctx, x, mask);
}

/* What argmaxmin_fill computes. */
typedef struct {
    reduce_op op;
    const pith_tensor *x;
    uint32_t mask;
} arg_job;

static pith_status argmaxmin_fill(const void *ctx, pith_tensor *dst)
{
    const arg_job *job = ctx;
    return arg_run(job->op, job->x, job->mask, NULL, dst);
}

/* argmax and argmin: functional (target NULL) or out= into `target` (See Note [Destination
 * passing]). */
static pith_status argmaxmin(pith_value *ret, reduce_op op, const char *name,
                             const pith_tensor *x, pith_opt_int dim, bool keepdim,
                             pith_device device, pith_tensor *target)
{
    arg_setup s;
    if ((device == PITH_CPU && (reduce_check_cpu(name, x) != PITH_OK ||
                                reduce_check_cpu(name, target) != PITH_OK)) ||
        arg_prepare(name, true, x, dim, keepdim, &s) != PITH_OK)
        return pith_last_status();
    arg_job job = {op, x, s.mask};
    if (target) {
        if (out_target_check(name, target, s.ndim, s.sizes, PITH_INT64, x) != PITH_OK)
            return pith_last_status();
        return out_target_write(ret, name, target, &x, 1, false, argmaxmin_fill, &job);
    }
    return out_target_new(ret, s.ndim, s.sizes, PITH_INT64, device, argmaxmin_fill, &job);
}

static pith_status maxmin_dim(pith_value *ret, reduce_op op, const char *name,
                              const pith_tensor *x, int64_t dim, bool keepdim,
                              pith_device device)
{
    arg_setup s;
    pith_opt_int d = {true, dim};
    if ((device == PITH_CPU && reduce_check_cpu(name, x) != PITH_OK) ||
        arg_prepare(name, false, x, d, keepdim, &s) != PITH_OK)
        return pith_last_status();
    pith_tensor *values = tensor_new(s.ndim, s.sizes, x->dtype, device);
    pith_tensor *indices = values ? tensor_new(s.ndim, s.sizes, PITH_INT64, device) : NULL;
    if (!indices ||
        (device == PITH_CPU && arg_run(op, x, s.mask, values, indices) != PITH_OK)) {
        pith_release(values);
        pith_release(indices);
        return pith_last_status();
    }
    ret[0].kind = PITH_VALUE_TENSOR;
    ret[0].u.t = values;
    ret[1].kind = PITH_VALUE_TENSOR;
    ret[1].u.t = indices;
    return PITH_OK;
}

/* The functional and out= kernels of argmax and argmin, for both devices (device_kernel in
 * ops/ops.toml). */
pith_status argmax_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                          pith_opt_int dim, bool keepdim, pith_device device)
{
    return argmaxmin(ret, REDUCE_ARGMAX, "argmax", self, dim, keepdim, device, NULL);
}

pith_status argmax_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              pith_opt_int dim, bool keepdim, const pith_tensor *out,
                              pith_device device)
{
    return argmaxmin(ret, REDUCE_ARGMAX, "argmax", self, dim, keepdim, device,
                     (pith_tensor *)out);
}

pith_status argmin_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                          pith_opt_int dim, bool keepdim, pith_device device)
{
    return argmaxmin(ret, REDUCE_ARGMIN, "argmin", self, dim, keepdim, device, NULL);
}

pith_status argmin_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              pith_opt_int dim, bool keepdim, const pith_tensor *out,
                              pith_device device)
{
    return argmaxmin(ret, REDUCE_ARGMIN, "argmin", self, dim, keepdim, device,
                     (pith_tensor *)out);
}

pith_status max_dim_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                           int64_t dim, bool keepdim, pith_device device)
{
    return maxmin_dim(ret, REDUCE_MAX_DIM, "max", self, dim, keepdim, device);
}
pith_status min_dim_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                           int64_t dim, bool keepdim, pith_device device)
{
    return maxmin_dim(ret, REDUCE_MIN_DIM, "min", self, dim, keepdim, device);
}
