/* c_api_support.h — what the public C functions of the ops share (those generated into
 * ops/generated/api_ops.c from the op file's c_api tables, and ops/c_api_manual.c): the
 * checks of their plain C arguments, the conversions into the ops' typed arguments, and
 * the shapes of their results. See Note [The C surface of an op] in ops/ops.toml. */
#ifndef PITH_OPS_C_API_SUPPORT_H
#define PITH_OPS_C_API_SUPPORT_H

#include "ops/op_runtime.h"

/* ---- checks: each returns false with the error set ---- */

/* `ndim`, the count of an int64_t size list, is in [0, PITH_MAX_DIMS]. */
bool int_list_check(const char *fn, int ndim);
/* Copies `n` int dims into `buf` (PITH_MAX_DIMS long): `n` at most PITH_MAX_DIMS, `dims`
 * not NULL when n > 0. */
bool dims_copy(const char *fn, size_t n, const int *dims, int64_t *buf);
/* The array `what` of `n` entries is not NULL (when n > 0). */
bool pointer_check(const char *fn, const char *what, const void *p, size_t n);
/* The count `what` is not negative. */
bool count_check(const char *fn, const char *what, int n);
/* as_strided's sizes and strides are not NULL (when ndim > 0). */
bool as_strided_pointers_check(int ndim, const int64_t *sizes, const int64_t *strides);
/* layer_norm's normalized_shape holds ndim_normalized sizes. */
bool normalized_shape_check(int ndim_normalized, const int64_t *normalized_shape);
/* The values and indices outputs of a two-tensor result are not NULL... */
bool outputs_check(const char *fn, pith_tensor **values, pith_tensor **indices);
/* ... and are set to NULL until the call succeeds. */
bool outputs_clear(const char *fn, pith_tensor **values, pith_tensor **indices);
/* A list result's count output `n` is not NULL; sets it to 0 until the call succeeds. */
bool list_count_reset(const char *fn, size_t *n);

/* ---- the int dims of a reduction: any count, big lists on the heap ---- */

typedef struct {
    int64_t local[PITH_MAX_DIMS];
    int64_t *data;
    size_t n;
} dims_buffer;

/* Fills `b` from `ndims` int dims (false with the error set: nothing to free). */
bool dims_convert(const char *fn, int ndims, const int *dims, dims_buffer *b);
void dims_free(dims_buffer *b);

/* ndims == 0 is None: every dim. */
static inline pith_opt_int_list dims_optional(const dims_buffer *b)
{
    return (pith_opt_int_list){b->n > 0, {b->data, b->n}};
}

static inline pith_int_list dims_list(const dims_buffer *b)
{
    return (pith_int_list){b->data, b->n};
}

/* ---- conversions ---- */

static inline pith_int_list sizes_list(size_t n, const int64_t *sizes)
{
    return (pith_int_list){sizes, n};
}

static inline pith_tensor_list tensors_list(const pith_tensor *const *tensors, size_t n)
{
    return (pith_tensor_list){tensors, n};
}

/* A present int? of a C value. */
static inline pith_opt_int opt_int_value(int64_t v)
{
    return (pith_opt_int){true, v};
}

/* An int? of a C pointer: NULL is None. */
static inline pith_opt_int opt_int_of(const int64_t *v)
{
    return v ? (pith_opt_int){true, *v} : (pith_opt_int){false, 0};
}

static inline pith_opt_int opt_dim_of(const int *dim)
{
    return dim ? (pith_opt_int){true, *dim} : (pith_opt_int){false, 0};
}

/* A C double as a Scalar: integral values in int64's range become ints, so that
 * pith_arange(0, 10, 1, -1) infers int64 as torch.arange(0, 10, 1) does, and
 * pith_arange(0, 1, 0.1, -1) float32. */
pith_scalar scalar_from_c_double(double v);
/* addmm's beta and alpha: integral values within +-9e18 go as ints, so that integer
 * tensors accept them (as Python's 1 and 2 would be); others as doubles. (Its range is
 * narrower than scalar_from_c_double's: kept as it was.) */
pith_scalar scalar_from_c_coefficient(double v);
/* clamp's optional bound (NULL: None): as scalar_from_c_double, but a double for a floating
 * (or NULL) tensor, so that clamping an integer tensor to 0 keeps its dtype (a Python float
 * bound would promote it to float32, as torch.clamp(int_tensor, 0.5) does). */
pith_scalar clamp_bound_scalar(const pith_tensor *x, const double *bound);

/* ---- results (op_call_result and call_status, for one tensor and for a status, are in
 * ops/op_runtime.h and kernels/ops_internal.h) ---- */

/* The two results of a call into *values and *indices (untouched on error). */
static inline pith_status tensor_pair_result(pith_status status, const pith_value *ret,
                                             pith_tensor **values, pith_tensor **indices)
{
    if (status != PITH_OK)
        return status;
    *values = ret[0].u.t;
    *indices = ret[1].u.t;
    return PITH_OK;
}

/* The Tensor[] result of a call as a caller-owned array (never NULL on success, even when
 * empty) with its count in *n, or NULL when it failed. Freed with pith_tensor_list_free. */
pith_tensor **tensor_list_result(pith_status status, const pith_value *ret, size_t *n);

#endif /* PITH_OPS_C_API_SUPPORT_H */
