/* api_elementwise.c — the public C entry points of the elementwise ops outside the unary
 * and binary families (pith/ops.h; the families' are generated into
 * ops/generated/api_elementwise.c). Each calls the dispatching pith_call_<id>; out= and
 * in-place forms return a status and drop the reference to the returned self. */
#include <math.h>

#include "kernels/ops_internal.h"

static pith_tensor *call_result(pith_status status, pith_value *ret)
{
    return status == PITH_OK ? ret[0].u.t : NULL;
}

PITH_API pith_tensor *pith_gelu(const pith_tensor *x, bool tanh_approximation)
{
    pith_value ret[1];
    return call_result(pith_call_gelu(ret, x, tanh_approximation ? "tanh" : "none"), ret);
}

/* A C double bound is passed as a Python int when it is integral and the tensor is not
 * floating, so that clamping an integer tensor to 0 keeps its dtype (a Python float bound
 * would promote it to float32, as torch.clamp(int_tensor, 0.5) does). */
static pith_scalar clamp_bound_scalar(const pith_tensor *x, const double *bound)
{
    if (!bound)
        return scalar_none();
    double v = *bound;
    if (x && !pith_dtype_is_floating(x->dtype) && v == floor(v) && v >= -9223372036854775808.0 &&
        v < 9223372036854775808.0)
        return scalar_from_int((int64_t)v);
    return scalar_from_double(v);
}

PITH_API pith_tensor *pith_clamp(const pith_tensor *x, const double *min, const double *max)
{
    pith_value ret[1];
    return call_result(
        pith_call_clamp(ret, x, clamp_bound_scalar(x, min), clamp_bound_scalar(x, max)), ret);
}

PITH_API pith_tensor *pith_where(const pith_tensor *cond, const pith_tensor *a,
                                 const pith_tensor *b)
{
    pith_value ret[1];
    return call_result(pith_call_where(ret, cond, a, b), ret);
}

PITH_API pith_status pith_copy_(pith_tensor *self, const pith_tensor *src)
{
    pith_value ret[1];
    return call_status(pith_call_copy_(ret, self, src, false), ret);
}

PITH_API pith_tensor *pith_to_dtype(const pith_tensor *x, pith_dtype dtype)
{
    pith_value ret[1];
    return call_result(pith_call_to_dtype(ret, x, dtype, false, false), ret);
}

PITH_API pith_tensor *pith_clone(const pith_tensor *x)
{
    pith_value ret[1];
    return call_result(pith_call_clone(ret, x), ret);
}

PITH_API pith_tensor *pith_contiguous(const pith_tensor *x)
{
    pith_value ret[1];
    return call_result(pith_call_contiguous(ret, x), ret);
}
