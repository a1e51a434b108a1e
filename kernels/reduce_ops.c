/* reduce_ops.c — the reductions over a list of dims: sum, mean, prod, amax, amin, all, any,
 * var and std (CPU and Meta kernels, and the out= forms of sum, mean, amax and amin), and the
 * dim/shape helpers that reduce_arg.c shares.
 *
 * Each op's validation, result dtype and shape live in one function (reduce_prepare), used
 * by both kernels, so the Meta kernel fails exactly where the CPU one does. */
#include <stdio.h>

#include "core/dtype.h"
#include "kernels/elementwise.h"
#include "kernels/ops_internal.h"
#include "kernels/out_target.h"
#include "kernels/reduce.h"

/* ---- shared helpers ---- */

const char *reduce_torch_dtype_name(pith_dtype dtype)
{
    static const char *const names[PITH_NUM_DTYPES] = {
        "Bool", "Byte", "Char", "Short", "Int", "Long", "Half", "BFloat16", "Float", "Double"};
    return dtype_valid((int)dtype) ? names[dtype] : "?";
}

pith_status reduce_dim_wrap(const char *op, const pith_tensor *x, int64_t dim, int *out)
{
    int64_t n = x->ndim > 0 ? x->ndim : 1; /* a 0-dim tensor takes 0 and -1 */
    if (dim < -n || dim >= n)
        return pith_set_error(PITH_ERR_INDEX,
                              "%s: Dimension out of range (expected to be in range of "
                              "[%lld, %lld], but got %lld)",
                              op, (long long)-n, (long long)(n - 1), (long long)dim);
    *out = (int)(dim < 0 ? dim + n : dim);
    return PITH_OK;
}

pith_status reduce_dims_mask(const char *op, const pith_tensor *x, const int64_t *dims,
                             size_t n, uint32_t *mask)
{
    uint32_t seen = 0;
    if (n == 0) {
        *mask = x->ndim ? (uint32_t)((1ull << x->ndim) - 1) : 0;
        return PITH_OK;
    }
    for (size_t i = 0; i < n; i++) {
        int d = 0;
        if (reduce_dim_wrap(op, x, dims[i], &d) != PITH_OK)
            return PITH_ERR_INDEX;
        if (seen & (1u << d))
            return pith_set_error(PITH_ERR_VALUE,
                                  "%s: dim %d appears multiple times in the list of dims", op,
                                  d);
        seen |= 1u << d;
    }
    *mask = x->ndim ? seen : 0;
    return PITH_OK;
}

void reduce_out_shape(const pith_tensor *x, uint32_t mask, bool keepdim, int *ndim,
                      int64_t *sizes)
{
    int m = 0;
    for (int d = 0; d < x->ndim; d++) {
        if (!(mask & (1u << d)))
            sizes[m++] = x->sizes[d];
        else if (keepdim)
            sizes[m++] = 1;
    }
    *ndim = m;
}

int64_t reduce_count(const pith_tensor *x, uint32_t mask)
{
    int64_t count = 1;
    for (int d = 0; d < x->ndim; d++)
        if (mask & (1u << d))
            count *= x->sizes[d];
    return count;
}

pith_status reduce_check_cpu(const char *op, const pith_tensor *t)
{
    if (t && t->device != PITH_CPU)
        return pith_set_error(PITH_ERR_VALUE, "%s: expected a CPU tensor, got a %s tensor", op,
                              pith_device_name(t->device));
    return PITH_OK;
}

pith_tensor *reduce_convert(const pith_tensor *x, pith_dtype dtype)
{
    if (x->dtype == dtype) {
        pith_retain((pith_tensor *)x);
        return (pith_tensor *)x;
    }
    pith_value ret[1];
    if (pith_call_to_dtype(ret, x, dtype, false, false) != PITH_OK)
        return NULL;
    return ret[0].u.t;
}

/* ---- the list reductions ---- */

typedef struct {
    uint32_t mask;
    int ndim;
    int64_t sizes[PITH_MAX_DIMS];
    pith_dtype in_dtype;  /* the input is converted to this first (the dtype= argument) */
    pith_dtype out_dtype;
    int64_t count;
} reduce_setup;

static const char *reduce_op_name(reduce_op op)
{
    switch (op) {
    case REDUCE_SUM: return "sum";
    case REDUCE_MEAN: return "mean";
    case REDUCE_PROD: return "prod";
    case REDUCE_AMAX: return "amax";
    case REDUCE_AMIN: return "amin";
    case REDUCE_ALL: return "all";
    case REDUCE_ANY: return "any";
    case REDUCE_VAR: return "var";
    case REDUCE_STD: return "std";
    case REDUCE_ARGMAX: return "argmax";
    case REDUCE_ARGMIN: return "argmin";
    case REDUCE_MAX_DIM: return "max";
    case REDUCE_MIN_DIM: return "min";
    }
    return "reduce";
}

/* The result dtype (and the dtype the input is first converted to). */
static pith_status reduce_dtypes(reduce_op op, const pith_tensor *x, pith_opt_dtype dtype,
                                 reduce_setup *s)
{
    const char *name = reduce_op_name(op);
    if (dtype >= 0 && !dtype_valid(dtype))
        return pith_set_error(PITH_ERR_TYPE, "%s: invalid dtype %d", name, dtype);
    s->in_dtype = dtype >= 0 ? (pith_dtype)dtype : x->dtype;
    switch (op) {
    case REDUCE_SUM:
    case REDUCE_PROD:
        s->out_dtype = dtype >= 0                  ? (pith_dtype)dtype
                       : dtype_is_floating(x->dtype) ? x->dtype
                                                     : PITH_INT64;
        return PITH_OK;
    case REDUCE_MEAN:
        if (!dtype_is_floating(s->in_dtype))
            return pith_set_error(PITH_ERR_TYPE,
                                  "mean(): could not infer output dtype. %s dtype must be "
                                  "either a floating point or complex dtype. Got: %s",
                                  dtype >= 0 ? "Optional" : "Input",
                                  reduce_torch_dtype_name(s->in_dtype));
        s->out_dtype = s->in_dtype;
        return PITH_OK;
    case REDUCE_VAR:
    case REDUCE_STD:
        if (!dtype_is_floating(x->dtype))
            return pith_set_error(PITH_ERR_TYPE,
                                  "%s: std and var only support floating point and complex "
                                  "dtypes, got %s",
                                  name, pith_dtype_name(x->dtype));
        s->out_dtype = x->dtype;
        return PITH_OK;
    case REDUCE_ALL:
    case REDUCE_ANY:
        s->out_dtype = x->dtype == PITH_UINT8 ? PITH_UINT8 : PITH_BOOL;
        return PITH_OK;
    default:
        s->out_dtype = x->dtype;
        return PITH_OK;
    }
}

/* amax/amin have no identity: an empty reduced dim is an error, as in PyTorch. */
static pith_status reduce_check_nonempty(const char *name, const pith_tensor *x,
                                         uint32_t mask, bool all_dims)
{
    if (all_dims) {
        if (x->numel == 0)
            return pith_set_error(PITH_ERR_VALUE,
                                  "%s(): Expected reduction dim to be specified for "
                                  "input.numel() == 0. Specify the reduction dim with the "
                                  "'dim' argument.",
                                  name);
        return PITH_OK;
    }
    for (int d = 0; d < x->ndim; d++)
        if ((mask & (1u << d)) && x->sizes[d] == 0)
            return pith_set_error(PITH_ERR_INDEX,
                                  "%s(): Expected reduction dim %d to have non-zero size.",
                                  name, d);
    return PITH_OK;
}

static pith_status reduce_prepare(reduce_op op, const pith_tensor *x, pith_opt_int_list dim,
                                  bool keepdim, pith_opt_dtype dtype, reduce_setup *s)
{
    const char *name = reduce_op_name(op);
    bool all_dims = !dim.present || dim.list.n == 0;
    if (reduce_dims_mask(name, x, dim.present ? dim.list.data : NULL,
                         dim.present ? dim.list.n : 0, &s->mask) != PITH_OK)
        return pith_last_status();
    /* PyTorch: all(dim=[]) and any(dim=[]) reduce no dim (each element becomes a bool),
     * while an empty list means every dim for the other reductions. */
    if ((op == REDUCE_ALL || op == REDUCE_ANY) && dim.present && dim.list.n == 0) {
        s->mask = 0;
        all_dims = false;
    }
    if (reduce_dtypes(op, x, dtype, s) != PITH_OK)
        return pith_last_status();
    if ((op == REDUCE_AMAX || op == REDUCE_AMIN) &&
        reduce_check_nonempty(name, x, s->mask, all_dims) != PITH_OK)
        return pith_last_status();
    reduce_out_shape(x, s->mask, keepdim, &s->ndim, s->sizes);
    s->count = reduce_count(x, s->mask);
    return PITH_OK;
}

/* What reduce_fill computes. */
typedef struct {
    reduce_op op;
    const pith_tensor *x;
    const reduce_setup *setup;
    double correction;
} reduce_job;

/* Reduces the job's input into the contiguous `dst` of the setup's shape and result dtype:
 * what the functional and out= kernels share (See Note [Destination passing]). */
static pith_status reduce_fill(const void *job_ctx, pith_tensor *dst)
{
    const reduce_job *job = job_ctx;
    const reduce_setup *s = job->setup;
    reduce_kernel k;
    if (!reduce_kernel_get(job->op, s->in_dtype, &k))
        return pith_set_error(PITH_ERR_NOT_IMPLEMENTED, "%s: not implemented for %s",
                              reduce_op_name(job->op), pith_dtype_name(s->in_dtype));
    pith_tensor *src = reduce_convert(job->x, s->in_dtype);
    if (!src)
        return pith_last_status();
    reduce_ctx ctx = {tensor_data(dst), NULL, s->out_dtype, s->count, job->correction};
    pith_status status = reduce_run(&k, &ctx, src, s->mask);
    pith_release(src);
    return status;
}

/* Every list reduction's kernels: functional (target NULL) or out= into `target`, on CPU or
 * Meta. */
static pith_status reduce_impl(pith_value *ret, reduce_op op, const pith_tensor *x,
                               pith_opt_int_list dim, bool keepdim, pith_opt_dtype dtype,
                               double correction, pith_device device, pith_tensor *target)
{
    const char *name = reduce_op_name(op);
    reduce_setup s;
    if ((device == PITH_CPU && (reduce_check_cpu(name, x) != PITH_OK ||
                                reduce_check_cpu(name, target) != PITH_OK)) ||
        reduce_prepare(op, x, dim, keepdim, dtype, &s) != PITH_OK)
        return pith_last_status();
    reduce_job job = {op, x, &s, correction};
    if (target) {
        if (out_target_check(name, target, s.ndim, s.sizes, s.out_dtype, x) != PITH_OK)
            return pith_last_status();
        return out_target_write(ret, name, target, &x, 1, false, reduce_fill, &job);
    }
    return out_target_new(ret, s.ndim, s.sizes, s.out_dtype, device, reduce_fill, &job);
}

static pith_opt_int_list list_present(pith_int_list list)
{
    pith_opt_int_list l = {true, list};
    return l;
}

/* `correction` of var/std: None is 1 (Bessel's correction). */
static double correction_value(pith_scalar correction)
{
    return correction.kind == PITH_SCALAR_NONE ? 1.0 : scalar_to_double(correction);
}

/* Note [Reductions into out=]
 * A reduction's out= form is its functional form writing into `out` (See Note [Destination
 * passing]). The dtype follows PyTorch: sum and mean compute in `dtype` when given (and then
 * `out` must have it), else in out's dtype, so sum(int32 x, out=float64 y) sums in float64
 * and equals sum(x, dtype=float64); the ops without a dtype argument (amax, amin, argmax,
 * argmin) need `out` of exactly the result dtype. */
/* Each overload's kernel for both devices (device_kernel in ops/ops.toml: its <id>_cpu and
 * <id>_meta are in ops/generated/device_forwarders.c). */
pith_status sum_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                       pith_opt_int_list dim, bool keepdim, pith_opt_dtype dtype,
                       pith_device device)
{
    return reduce_impl(ret, REDUCE_SUM, self, dim, keepdim, dtype, 0, device, NULL);
}

pith_status mean_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                        pith_opt_int_list dim, bool keepdim, pith_opt_dtype dtype,
                        pith_device device)
{
    return reduce_impl(ret, REDUCE_MEAN, self, dim, keepdim, dtype, 0, device, NULL);
}

pith_status prod_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                        pith_opt_int_list dim, bool keepdim, pith_opt_dtype dtype,
                        pith_device device)
{
    return reduce_impl(ret, REDUCE_PROD, self, dim, keepdim, dtype, 0, device, NULL);
}

/* sum and mean into `out`: in `dtype` when given, else in out's dtype. */
static pith_status reduce_dtype_out(pith_value *ret, reduce_op op, const pith_tensor *self,
                                    pith_opt_int_list dim, bool keepdim, pith_opt_dtype dtype,
                                    const pith_tensor *out, pith_device device)
{
    pith_opt_dtype computed = dtype >= 0 ? dtype : (pith_opt_dtype)out->dtype;
    return reduce_impl(ret, op, self, dim, keepdim, computed, 0, device, (pith_tensor *)out);
}

pith_status sum_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                           pith_opt_int_list dim, bool keepdim, pith_opt_dtype dtype,
                           const pith_tensor *out, pith_device device)
{
    return reduce_dtype_out(ret, REDUCE_SUM, self, dim, keepdim, dtype, out, device);
}

pith_status mean_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            pith_opt_int_list dim, bool keepdim, pith_opt_dtype dtype,
                            const pith_tensor *out, pith_device device)
{
    return reduce_dtype_out(ret, REDUCE_MEAN, self, dim, keepdim, dtype, out, device);
}

/* Every dim: dim=None. */
static const pith_opt_int_list every_dim = {false, {NULL, 0}};

/* sum(), mean() and prod() without dims: PyTorch's overloads of every element, whose
 * nodes are SumBackward0 and the like; the dim overloads' kernels with dim=None. */

pith_status sum_all_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                           pith_opt_dtype dtype, pith_device device)
{
    return sum_kernel(ks, ret, self, every_dim, false, dtype, device);
}

pith_status sum_all_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                               pith_opt_dtype dtype, const pith_tensor *out, pith_device device)
{
    return sum_out_kernel(ks, ret, self, every_dim, false, dtype, out, device);
}

pith_status mean_all_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            pith_opt_dtype dtype, pith_device device)
{
    return mean_kernel(ks, ret, self, every_dim, false, dtype, device);
}

pith_status mean_all_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                pith_opt_dtype dtype, const pith_tensor *out, pith_device device)
{
    return mean_out_kernel(ks, ret, self, every_dim, false, dtype, out, device);
}

pith_status prod_all_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            pith_opt_dtype dtype, pith_device device)
{
    return prod_kernel(ks, ret, self, every_dim, false, dtype, device);
}

pith_status amax_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                        pith_int_list dim, bool keepdim, pith_device device)
{
    return reduce_impl(ret, REDUCE_AMAX, self, list_present(dim), keepdim, -1, 0, device, NULL);
}

pith_status amax_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            pith_int_list dim, bool keepdim, const pith_tensor *out,
                            pith_device device)
{
    return reduce_impl(ret, REDUCE_AMAX, self, list_present(dim), keepdim, -1, 0, device,
                       (pith_tensor *)out);
}

pith_status amin_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                        pith_int_list dim, bool keepdim, pith_device device)
{
    return reduce_impl(ret, REDUCE_AMIN, self, list_present(dim), keepdim, -1, 0, device, NULL);
}

pith_status amin_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            pith_int_list dim, bool keepdim, const pith_tensor *out,
                            pith_device device)
{
    return reduce_impl(ret, REDUCE_AMIN, self, list_present(dim), keepdim, -1, 0, device,
                       (pith_tensor *)out);
}

pith_status all_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                       pith_opt_int_list dim, bool keepdim, pith_device device)
{
    return reduce_impl(ret, REDUCE_ALL, self, dim, keepdim, -1, 0, device, NULL);
}

pith_status any_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                       pith_opt_int_list dim, bool keepdim, pith_device device)
{
    return reduce_impl(ret, REDUCE_ANY, self, dim, keepdim, -1, 0, device, NULL);
}

pith_status var_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                       pith_opt_int_list dim, bool keepdim, pith_scalar correction,
                       pith_device device)
{
    return reduce_impl(ret, REDUCE_VAR, self, dim, keepdim, -1, correction_value(correction),
                       device, NULL);
}

pith_status std_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                       pith_opt_int_list dim, bool keepdim, pith_scalar correction,
                       pith_device device)
{
    return reduce_impl(ret, REDUCE_STD, self, dim, keepdim, -1, correction_value(correction),
                       device, NULL);
}

/* var(unbiased), var.dim(dim, unbiased, keepdim) and the same of std: PyTorch's older
 * spellings, as var.correction with correction 1 (unbiased) or 0. */

pith_status var_unbiased_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                   bool unbiased)
{
    return pith_call_var(ret, self, every_dim, false, scalar_from_int(unbiased ? 1 : 0));
}

pith_status var_dim_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              pith_opt_int_list dim, bool unbiased, bool keepdim)
{
    return pith_call_var(ret, self, dim, keepdim, scalar_from_int(unbiased ? 1 : 0));
}

pith_status std_unbiased_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                   bool unbiased)
{
    return pith_call_std(ret, self, every_dim, false, scalar_from_int(unbiased ? 1 : 0));
}

pith_status std_dim_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              pith_opt_int_list dim, bool unbiased, bool keepdim)
{
    return pith_call_std(ret, self, dim, keepdim, scalar_from_int(unbiased ? 1 : 0));
}

/* ---- max() and min(): the full reduction, values only ---- */

static pith_status reduce_full_minmax(pith_value *ret, reduce_op op, const char *name,
                                      const pith_tensor *x, pith_device device)
{
    pith_opt_int_list all = {false, {NULL, 0}};
    if (reduce_check_nonempty(name, x, 0, true) != PITH_OK)
        return pith_last_status();
    return reduce_impl(ret, op, x, all, false, -1, 0, device, NULL);
}

pith_status max_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                       pith_device device)
{
    return reduce_full_minmax(ret, REDUCE_AMAX, "max", self, device);
}
pith_status min_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                       pith_device device)
{
    return reduce_full_minmax(ret, REDUCE_AMIN, "min", self, device);
}

/* Note [Fused reductions]
 * A fused group of a compiled graph may end with a reduction of its chain over its
 * innermost dims, one or more, whose product is a row (compile/fusion.c, See Note [Fusion
 * legality]): the group computes each row of the
 * chain into a tile buffer and folds it there. For eager's bits it must fold exactly as
 * reduce_run would the materialised chain: reduce_fusable_of accepts only the calls that
 * reduce_run folds with one `inner` call per output over the whole row, in order
 * (reduce_one_run_per_output asks the engine itself), with the kernel chosen here as
 * reduce_fill chooses it and no conversion of the input; the group then makes that call
 * on the row and finishes the output with the same `finish`. float32 sums depend on the
 * array alone, not on its alignment (See Note [Sums of float32 arrays]), so folding the row
 * in a tile buffer gives the bits of folding it in memory. */
bool reduce_fusable_of(const pith_op *op, const pith_value *args, size_t nargs,
                       reduce_fusable *f)
{
    reduce_op rop;
    const pith_tensor *x = NULL;
    pith_opt_int_list dim = {false, {NULL, 0}};
    bool keepdim = false;
    pith_opt_dtype dtype = -1;
    switch (op->builtin_id) {
    case PITH_OPID_sum_all:
    case PITH_OPID_mean_all: /* every dim, keepdim false */
        rop = op->builtin_id == PITH_OPID_sum_all ? REDUCE_SUM : REDUCE_MEAN;
        if (nargs != 2 || unbox_OPT_DTYPE(op, 1, &args[1], &dtype) != PITH_OK)
            return false;
        break;
    case PITH_OPID_sum:
    case PITH_OPID_mean:
        rop = op->builtin_id == PITH_OPID_sum ? REDUCE_SUM : REDUCE_MEAN;
        if (nargs != 4 || unbox_OPT_INT_LIST(op, 1, &args[1], &dim) != PITH_OK ||
            unbox_BOOL(op, 2, &args[2], &keepdim) != PITH_OK ||
            unbox_OPT_DTYPE(op, 3, &args[3], &dtype) != PITH_OK)
            return false;
        break;
    case PITH_OPID_amax:
    case PITH_OPID_amin:
        rop = op->builtin_id == PITH_OPID_amax ? REDUCE_AMAX : REDUCE_AMIN;
        if (nargs != 3 || unbox_INT_LIST(op, 1, &args[1], &dim.list) != PITH_OK ||
            unbox_BOOL(op, 2, &args[2], &keepdim) != PITH_OK)
            return false;
        dim.present = true;
        break;
    default:
        return false;
    }
    if (unbox_TENSOR(op, 0, &args[0], &x) != PITH_OK || !dtype_is_floating(x->dtype) ||
        x->ndim < 1)
        return false;
    reduce_setup s;
    if (reduce_prepare(rop, x, dim, keepdim, dtype, &s) != PITH_OK || s.in_dtype != x->dtype ||
        s.out_dtype != x->dtype)
        return false;
    /* The dims reduced must be the innermost ones: a mask of k trailing bits. */
    int k = __builtin_popcount(s.mask);
    uint32_t all = x->ndim >= 32 ? ~0u : (1u << x->ndim) - 1;
    if (k < 1 || s.mask != (all & ~((1u << (x->ndim - k)) - 1)))
        return false;
    int64_t row = 1;
    for (int d = x->ndim - k; d < x->ndim; d++)
        row *= x->sizes[d];
    if (row < 2 || !reduce_kernel_get(rop, s.in_dtype, &f->k) ||
        !reduce_one_run_per_output(x, s.mask, f->k.ordered))
        return false;
    f->ctx = (reduce_ctx){NULL, NULL, s.out_dtype, s.count, 0};
    f->row = row;
    f->dims = k;
    return true;
}
