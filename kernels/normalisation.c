/* normalisation.c — softmax, log_softmax and layer_norm and their out= forms, and
 * _layer_norm_backward_input, layer_norm's input gradient (CPU and Meta
 * kernels).
 *
 * Both work on a contiguous copy of the input (none is made when it already is), seen as
 * [outer, len, inner] around the normalised dims. Contiguous float32 and float64 rows run in
 * the row kernels of the vecmath table (Note [Softmax rows], Note [Row sums in a fixed
 * order]); the scalar lines here serve the other layouts and the 16-bit dtypes, computing in
 * float (double for float64). Validation is shared by both kernels. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/dtype.h"
#include "core/parallel.h"
#include "kernels/ops_internal.h"
#include "kernels/out_target.h"
#include "kernels/reduce.h"
#include "kernels/vecmath.h"

/* Columns: dtype, element type, compute type, load, store, exp, log. From the dtype table
 * (See Note [The dtype table] in core/dtype.h), with exp and log at the compute type's
 * precision. */
#define NM_EXP_float expf
#define NM_EXP_double exp
#define NM_LOG_float logf
#define NM_LOG_double log
#define NM_COLUMNS_(M, E, tag, T, CT, UT, ACC, LOAD, STORE, ...)                            \
    M(E, T, CT, LOAD, STORE, NM_EXP_##CT, NM_LOG_##CT)
#define NM_ROW_(tag, M) PITH_DTYPE_COLUMNS(NM_COLUMNS_, tag, M)
#define NM_FORALL_HALF_DTYPES(M) PITH_FORALL_REDUCED_FLOATING_DTYPES(NM_ROW_, M)
#define NM_FORALL_FLOAT_DTYPES(M) PITH_FORALL_FLOATING_DTYPES(NM_ROW_, M)

/* ---- softmax / log_softmax ---- */

typedef struct {
    int64_t outer, len, inner;
    bool log;
} softmax_shape;

/* One vector along the softmax dim: stable (the max is subtracted first); a nan anywhere
 * makes the whole vector nan, as in PyTorch. */
#define NM_SOFTMAX_FN_(E, T, CT, LOAD, STORE, EXP, LOG)                                     \
    static void softmax_line_##E(const T *x, T *y, int64_t len, int64_t step, bool as_log)  \
    {                                                                                       \
        CT max = -INFINITY;                                                                 \
        for (int64_t j = 0; j < len; j++) {                                                 \
            CT xv = LOAD(x[j * step]);                                                      \
            if (xv > max || isnan(xv))                                                      \
                max = xv;                                                                   \
            if (isnan(max))                                                                 \
                break;                                                                      \
        }                                                                                   \
        double sum = 0;                                                                     \
        for (int64_t j = 0; j < len; j++)                                                   \
            sum += EXP(LOAD(x[j * step]) - max);                                            \
        if (as_log) { /* (x - max) is exact; adding max to log(sum) first is not */         \
            CT log_sum = (CT)LOG((CT)sum);                                                  \
            for (int64_t j = 0; j < len; j++)                                               \
                y[j * step] = STORE((LOAD(x[j * step]) - max) - log_sum);                   \
        } else {                                                                            \
            CT inv = (CT)(1.0 / sum);                                                       \
            for (int64_t j = 0; j < len; j++)                                               \
                y[j * step] = STORE(EXP(LOAD(x[j * step]) - max) * inv);                    \
        }                                                                                   \
    }                                                                                       \
    static void softmax_##E(const char *xs, char *ys, const softmax_shape *s, int nthreads) \
    {                                                                                       \
        int64_t len = s->len, step = s->inner;                                              \
        PITH_PARALLEL_FOR(v, s->outer * step, nthreads,                                             \
                            int64_t start = (v / step) * len * step + v % step;             \
                            softmax_line_##E((const T *)xs + start, (T *)ys + start, len,   \
                                             step, s->log););                               \
    }
NM_FORALL_FLOAT_DTYPES(NM_SOFTMAX_FN_)

/* Note [Softmax rows]
 * A softmax over contiguous rows (the last dim, inner == 1) of float32 or float64 takes each
 * row from memory once and works on it while it is in cache, in the row kernel of the
 * vecmath table (vecmath_impl.h), compiled for the CPU's vectors: one pass finds the max (a
 * NaN anywhere makes it NaN, and so the whole row, as in PyTorch), one writes exp(x - max)
 * with the vectorised exp (Note [Vectorised math functions]) and sums it as it goes, and one
 * scales the row by 1 / sum, or, for log_softmax, writes (x - max) - log(sum) from x. The sums
 * are in the row's dtype, as PyTorch's, in the order of Note [Row sums in a fixed order], so
 * they depend on neither threads nor the CPU. Other layouts and the 16-bit dtypes take the
 * scalar lines above. */
#define NM_SOFTMAX_ROWS_FN_(T, SUFFIX)                                                      \
    static void softmax_rows_##SUFFIX(const T *xs, T *ys, int64_t rows, int64_t len,        \
                                      bool as_log, int nthreads)                            \
    {                                                                                       \
        const vecmath_table *vm = vecmath_active();                                         \
        PITH_PARALLEL_FOR(r, rows, nthreads,                                                \
                          vm->softmax_row_##SUFFIX(ys + r * len, xs + r * len, len, as_log););\
    }
NM_SOFTMAX_ROWS_FN_(float, f32)
NM_SOFTMAX_ROWS_FN_(double, f64)

/* The dtype the softmax computes in: dtype= converts the input first. */
static pith_status softmax_prepare(const char *name, const pith_tensor *x, int64_t dim,
                                   pith_opt_dtype dtype, int *wrapped, pith_dtype *work)
{
    if (reduce_dim_wrap(name, x, dim, wrapped) != PITH_OK)
        return pith_last_status();
    if (dtype >= 0 && !dtype_valid(dtype))
        return pith_set_error(PITH_ERR_TYPE, "%s: invalid dtype %d", name, dtype);
    *work = dtype >= 0 ? (pith_dtype)dtype : x->dtype;
    if (!dtype_is_floating(*work))
        return pith_set_error(PITH_ERR_TYPE,
                              "%s: not implemented for '%s' (%s): the input must be floating "
                              "point, or pass a floating dtype=",
                              name, reduce_torch_dtype_name(*work), pith_dtype_name(*work));
    return PITH_OK;
}

static pith_tensor *contiguous_of(const pith_tensor *x)
{
    pith_value ret[1];
    if (pith_call_contiguous(ret, x) != PITH_OK)
        return NULL;
    return ret[0].u.t;
}

/* What softmax_fill computes: softmax or log_softmax of `self` along `dim`, in `work`. */
typedef struct {
    const pith_tensor *self;
    int dim;
    pith_dtype work;
    bool log;
} softmax_job;

/* Writes the job's result into the contiguous `dst` of self's shape and the work dtype:
 * what the functional and out= kernels share (See Note [Destination passing]). */
static pith_status softmax_fill(const void *ctx, pith_tensor *dst)
{
    const softmax_job *job = ctx;
    const pith_tensor *self = job->self;
    pith_dtype work = job->work;
    if (dst->numel == 0)
        return PITH_OK;
    pith_tensor *converted = reduce_convert(self, work);
    pith_tensor *src = converted ? contiguous_of(converted) : NULL;
    pith_release(converted);
    if (!src)
        return pith_last_status();
    softmax_shape s = {1, self->ndim ? self->sizes[job->dim] : 1, 1, job->log};
    for (int i = 0; i < self->ndim; i++) {
        if (i < job->dim)
            s.outer *= self->sizes[i];
        else if (i > job->dim)
            s.inner *= self->sizes[i];
    }
    int nthreads = parallel_threads_for(self->numel);
    if (s.inner == 1 && work == PITH_FLOAT32)
        softmax_rows_f32((const float *)tensor_data(src), (float *)tensor_data(dst), s.outer,
                         s.len, job->log, nthreads);
    else if (s.inner == 1 && work == PITH_FLOAT64)
        softmax_rows_f64((const double *)tensor_data(src), (double *)tensor_data(dst), s.outer,
                         s.len, job->log, nthreads);
    else
        switch (work) {
#define NM_SOFTMAX_CASE_(E, T, CT, LOAD, STORE, EXP, LOG)                                   \
    case E:                                                                                 \
        softmax_##E(tensor_data(src), tensor_data(dst), &s, nthreads);                      \
        break;
            NM_FORALL_FLOAT_DTYPES(NM_SOFTMAX_CASE_)
#undef NM_SOFTMAX_CASE_
        default:
            break;
        }
    pith_release(src);
    return PITH_OK;
}

/* softmax and log_softmax: functional (target NULL) or out= into `target`, whose dtype must
 * be the work dtype (PyTorch's rule). */
static pith_status softmax_impl(pith_value *ret, const char *name, bool log,
                                const pith_tensor *self, int64_t dim, pith_opt_dtype dtype,
                                pith_device device, pith_tensor *target)
{
    int d = 0;
    pith_dtype work = PITH_FLOAT32;
    if ((device == PITH_CPU && (reduce_check_cpu(name, self) != PITH_OK ||
                                reduce_check_cpu(name, target) != PITH_OK)) ||
        softmax_prepare(name, self, dim, dtype, &d, &work) != PITH_OK)
        return pith_last_status();
    softmax_job job = {self, d, work, log};
    if (target) {
        if (out_target_check(name, target, self->ndim, self->sizes, work, self) != PITH_OK)
            return pith_last_status();
        return out_target_write(ret, name, target, &self, 1, false, softmax_fill, &job);
    }
    return out_target_new(ret, self->ndim, self->sizes, work, device, softmax_fill, &job);
}

/* See Note [Fused reductions] (reduce_ops.c): the calls whose every row softmax_fill runs
 * with the vecmath table's row kernel, on the input itself (float32 or float64, no dtype=
 * conversion, over the last dim, so no contiguous copy of a contiguous input); a fused
 * group runs that kernel on the row in its tile buffer. */
bool softmax_fusable_of(const pith_op *op, const pith_value *args, size_t nargs,
                        softmax_fusable *f)
{
    const pith_tensor *self;
    int64_t dim;
    pith_opt_dtype dtype;
    int d;
    pith_dtype work;
    if ((op->builtin_id != PITH_OPID_softmax && op->builtin_id != PITH_OPID_log_softmax) ||
        nargs != 3 || unbox_TENSOR(op, 0, &args[0], &self) != PITH_OK ||
        unbox_INT(op, 1, &args[1], &dim) != PITH_OK ||
        unbox_OPT_DTYPE(op, 2, &args[2], &dtype) != PITH_OK || self->ndim < 1 ||
        softmax_prepare(op->builtin_id == PITH_OPID_softmax ? "softmax" : "log_softmax", self,
                        dim, dtype, &d, &work) != PITH_OK ||
        d != self->ndim - 1 || work != self->dtype ||
        (work != PITH_FLOAT32 && work != PITH_FLOAT64) || self->sizes[d] < 2)
        return false;
    const vecmath_table *vm = vecmath_active();
    *f = (softmax_fusable){work, op->builtin_id == PITH_OPID_log_softmax, self->sizes[d],
                           vm->softmax_row_f32, vm->softmax_row_f64};
    return true;
}

/* The functional and out= kernels of softmax or log_softmax, on CPU and Meta. */
/* softmax's and log_softmax's kernels for both devices (device_kernel in ops/ops.toml). */
pith_status softmax_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                          int64_t dim, pith_opt_dtype dtype, pith_device device)
{
    return softmax_impl(ret, "softmax", false, self, dim, dtype, device, NULL);
}

pith_status softmax_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              int64_t dim, pith_opt_dtype dtype, const pith_tensor *out,
                              pith_device device)
{
    return softmax_impl(ret, "softmax", false, self, dim, dtype, device, (pith_tensor *)out);
}

pith_status log_softmax_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              int64_t dim, pith_opt_dtype dtype, pith_device device)
{
    return softmax_impl(ret, "log_softmax", true, self, dim, dtype, device, NULL);
}

pith_status log_softmax_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                  int64_t dim, pith_opt_dtype dtype, const pith_tensor *out,
                                  pith_device device)
{
    return softmax_impl(ret, "log_softmax", true, self, dim, dtype, device, (pith_tensor *)out);
}

/* ---- layer_norm ---- */

/* One row of `len` elements: y = (x - mean) / sqrt(var + eps) * w + b, with the biased
 * variance from a two-pass sum (the mean, then the squares about it) in the compute type
 * CT, as PyTorch's opmath: float for float32 and the 16-bit dtypes, double for float64. w
 * and b may be NULL. The row is read from memory once and stays in cache for the second
 * and third passes. float32 and float64 rows run in the vecmath table's row kernel instead
 * (layer_norm_rows below), whose sums follow Note [Row sums in a fixed order]; these lines
 * serve the 16-bit dtypes, whose sums are `omp simd` reductions in float. */
#define NM_SUM_(CT, ACC, EXPR)                                                              \
    do {                                                                                    \
        CT acc_ = 0;                                                                        \
        _Pragma("omp simd reduction(+ : acc_)")                                             \
        for (int64_t i = 0; i < len; i++)                                                   \
            acc_ += (EXPR);                                                                 \
        ACC = acc_;                                                                         \
    } while (0)
#define NM_LAYER_NORM_FN_(E, T, CT, LOAD, STORE, EXP, LOG)                                  \
    static void layer_norm_row_##E(const T *x, const T *w, const T *b, T *y, int64_t len,   \
                                   double eps)                                              \
    {                                                                                       \
        CT sum, m2;                                                                         \
        NM_SUM_(CT, sum, (CT)LOAD(x[i]));                                                   \
        CT cmean = sum / (CT)len;                                                           \
        NM_SUM_(CT, m2, ((CT)LOAD(x[i]) - cmean) * ((CT)LOAD(x[i]) - cmean));               \
        CT rstd = (CT)(1.0 / sqrt((double)m2 / (double)len + eps));                         \
        if (w && b)                                                                         \
            for (int64_t j = 0; j < len; j++)                                               \
                y[j] = STORE((LOAD(x[j]) - cmean) * rstd * LOAD(w[j]) + LOAD(b[j]));        \
        else if (w)                                                                         \
            for (int64_t j = 0; j < len; j++)                                               \
                y[j] = STORE((LOAD(x[j]) - cmean) * rstd * LOAD(w[j]));                     \
        else if (b)                                                                         \
            for (int64_t j = 0; j < len; j++)                                               \
                y[j] = STORE((LOAD(x[j]) - cmean) * rstd + LOAD(b[j]));                     \
        else                                                                                \
            for (int64_t j = 0; j < len; j++)                                               \
                y[j] = STORE((LOAD(x[j]) - cmean) * rstd);                                  \
    }                                                                                       \
    static void layer_norm_##E(const char *xs, const char *ws, const char *bs, char *ys,    \
                               int64_t rows, int64_t len, double eps, int nthreads)         \
    {                                                                                       \
        PITH_PARALLEL_FOR(r, rows, nthreads,                                                \
                            layer_norm_row_##E((const T *)xs + r * len, (const T *)ws,      \
                                               (const T *)bs, (T *)ys + r * len, len, eps););\
    }
NM_FORALL_HALF_DTYPES(NM_LAYER_NORM_FN_)

#define NM_LAYER_NORM_ROWS_FN_(T, SUFFIX)                                                   \
    static void layer_norm_rows_##SUFFIX(const T *xs, const T *w, const T *b, T *ys,        \
                                         int64_t rows, int64_t len, double eps,             \
                                         int nthreads)                                      \
    {                                                                                       \
        const vecmath_table *vm = vecmath_active();                                         \
        PITH_PARALLEL_FOR(r, rows, nthreads,                                                \
                          vm->layer_norm_row_##SUFFIX(ys + r * len, xs + r * len, w, b, len,\
                                                      eps););                               \
    }
NM_LAYER_NORM_ROWS_FN_(float, f32)
NM_LAYER_NORM_ROWS_FN_(double, f64)

static pith_status layer_norm_param_check(const char *what, const pith_tensor *param,
                                          const pith_tensor *input, pith_int_list shape)
{
    char have[256], want[256];
    if (!param)
        return PITH_OK;
    if (!shape_equal(param->ndim, param->sizes, (int)shape.n, shape.data)) {
        shape_format(param->ndim, param->sizes, have, sizeof have);
        shape_format((int)shape.n, shape.data, want, sizeof want);
        return pith_set_error(PITH_ERR_VALUE,
                              "layer_norm: Expected %s to be of same shape as normalized_shape, "
                              "but got %s of shape %s and normalized_shape = %s",
                              what, what, have, want);
    }
    if (param->dtype != input->dtype)
        return pith_set_error(PITH_ERR_TYPE,
                              "layer_norm: expected %s to have dtype %s (the input's), but "
                              "got %s",
                              what, pith_dtype_name(input->dtype), pith_dtype_name(param->dtype));
    return PITH_OK;
}

static pith_status layer_norm_prepare(const pith_tensor *input, pith_int_list shape,
                                      const pith_tensor *weight, const pith_tensor *bias)
{
    char norm[256], got[256];
    if (shape.n == 0)
        return pith_set_error(PITH_ERR_VALUE,
                              "layer_norm: Expected normalized_shape to be at least "
                              "1-dimensional, i.e., containing at least one element, but got "
                              "normalized_shape = []");
    if (shape.n > PITH_MAX_DIMS)
        return pith_set_error(PITH_ERR_VALUE, "layer_norm: normalized_shape has %zu dims",
                              shape.n);
    bool match = shape.n <= (size_t)input->ndim;
    for (size_t i = 0; match && i < shape.n; i++)
        match = input->sizes[input->ndim - (int)shape.n + (int)i] == shape.data[i];
    if (!match) {
        shape_format((int)shape.n, shape.data, norm, sizeof norm);
        shape_format(input->ndim, input->sizes, got, sizeof got);
        return pith_set_error(PITH_ERR_VALUE,
                              "layer_norm: Given normalized_shape=%s, expected input with "
                              "shape [*, %s, but got input of size%s",
                              norm, norm + 1, got);
    }
    if (!dtype_is_floating(input->dtype))
        return pith_set_error(PITH_ERR_TYPE,
                              "layer_norm: not implemented for '%s' (%s): the input must be "
                              "floating point",
                              reduce_torch_dtype_name(input->dtype),
                              pith_dtype_name(input->dtype));
    if (layer_norm_param_check("weight", weight, input, shape) != PITH_OK ||
        layer_norm_param_check("bias", bias, input, shape) != PITH_OK)
        return pith_last_status();
    return PITH_OK;
}

/* What layer_norm_fill computes. */
typedef struct {
    const pith_tensor *input, *weight, *bias;
    pith_int_list shape;
    double eps;
} layer_norm_job;

/* Writes the job's result into the contiguous `dst` of input's shape and dtype: what the
 * functional and out= kernels share (See Note [Destination passing]). */
static pith_status layer_norm_fill(const void *ctx, pith_tensor *dst)
{
    const layer_norm_job *job = ctx;
    const pith_tensor *input = job->input, *weight = job->weight, *bias = job->bias;
    if (dst->numel == 0)
        return PITH_OK;
    pith_tensor *x = contiguous_of(input), *w = NULL, *b = NULL;
    if (x && weight)
        w = contiguous_of(weight);
    if (x && (w || !weight) && bias)
        b = contiguous_of(bias);
    if (!x || (weight && !w) || (bias && !b)) {
        pith_release(x);
        pith_release(w);
        pith_release(b);
        return pith_last_status();
    }
    int64_t len = 1;
    for (size_t i = 0; i < job->shape.n; i++)
        len *= job->shape.data[i];
    int64_t rows = input->numel / len;
    double eps = job->eps;
    int nthreads = parallel_threads_for(input->numel);
    const char *wd = w ? tensor_data(w) : NULL, *bd = b ? tensor_data(b) : NULL;
    switch (input->dtype) {
    case PITH_FLOAT32:
        layer_norm_rows_f32((const float *)tensor_data(x), (const float *)wd,
                            (const float *)bd, (float *)tensor_data(dst), rows, len, eps,
                            nthreads);
        break;
    case PITH_FLOAT64:
        layer_norm_rows_f64((const double *)tensor_data(x), (const double *)wd,
                            (const double *)bd, (double *)tensor_data(dst), rows, len, eps,
                            nthreads);
        break;
#define NM_LAYER_NORM_CASE_(E, T, CT, LOAD, STORE, EXP, LOG)                                \
    case E:                                                                                 \
        layer_norm_##E(tensor_data(x), wd, bd, tensor_data(dst), rows, len, eps, nthreads); \
        break;
        NM_FORALL_HALF_DTYPES(NM_LAYER_NORM_CASE_)
#undef NM_LAYER_NORM_CASE_
    default:
        break;
    }
    pith_release(x);
    pith_release(w);
    pith_release(b);
    return PITH_OK;
}

/* layer_norm: functional (target NULL) or out= into `target` (of input's dtype). */
/* See Note [Fused reductions] (reduce_ops.c): the calls whose every row layer_norm_fill
 * runs with the vecmath table's row kernel on the input itself (float32 or float64, over
 * its innermost dims, whose product is the row), with weight and bias (when given) already
 * contiguous, so that its contiguous copies are the tensors themselves. */
bool layer_norm_fusable_of(const pith_op *op, const pith_value *args, size_t nargs,
                           layer_norm_fusable *f)
{
    const pith_tensor *input, *weight = NULL, *bias = NULL;
    pith_int_list shape;
    double eps;
    if (op->builtin_id != PITH_OPID_layer_norm || nargs != 6 ||
        unbox_TENSOR(op, 0, &args[0], &input) != PITH_OK ||
        unbox_INT_LIST(op, 1, &args[1], &shape) != PITH_OK ||
        unbox_OPT_TENSOR(op, 2, &args[2], &weight) != PITH_OK ||
        unbox_OPT_TENSOR(op, 3, &args[3], &bias) != PITH_OK ||
        unbox_FLOAT(op, 4, &args[4], &eps) != PITH_OK || shape.n < 1 ||
        (input->dtype != PITH_FLOAT32 && input->dtype != PITH_FLOAT64) ||
        input->ndim < (int)shape.n ||
        layer_norm_prepare(input, shape, weight, bias) != PITH_OK ||
        (weight && !weight->contiguous) || (bias && !bias->contiguous))
        return false;
    int64_t row = 1;
    for (size_t i = 0; i < shape.n; i++)
        row *= shape.data[i];
    if (row < 2)
        return false;
    const vecmath_table *vm = vecmath_active();
    *f = (layer_norm_fusable){input->dtype, row, (int)shape.n, eps, vm->layer_norm_row_f32,
                              vm->layer_norm_row_f64};
    return true;
}

static pith_status layer_norm_impl(pith_value *ret, const pith_tensor *input,
                                   pith_int_list shape, const pith_tensor *weight,
                                   const pith_tensor *bias, double eps, pith_device device,
                                   pith_tensor *target)
{
    if (device == PITH_CPU &&
        (reduce_check_cpu("layer_norm", input) != PITH_OK ||
         reduce_check_cpu("layer_norm", weight) != PITH_OK ||
         reduce_check_cpu("layer_norm", bias) != PITH_OK ||
         reduce_check_cpu("layer_norm", target) != PITH_OK))
        return pith_last_status();
    if (layer_norm_prepare(input, shape, weight, bias) != PITH_OK)
        return pith_last_status();
    layer_norm_job job = {input, weight, bias, shape, eps};
    if (target) {
        const pith_tensor *inputs[3] = {input, weight, bias};
        if (out_target_check("layer_norm", target, input->ndim, input->sizes, input->dtype,
                             input) != PITH_OK)
            return pith_last_status();
        return out_target_write(ret, "layer_norm", target, inputs, 3, false, layer_norm_fill,
                                &job);
    }
    return out_target_new(ret, input->ndim, input->sizes, input->dtype, device, layer_norm_fill,
                          &job);
}

/* The functional and out= kernels of layer_norm, on CPU and Meta. cudnn_enable means
 * nothing on CPU. */
/* layer_norm's kernels for both devices (device_kernel in ops/ops.toml). */
pith_status layer_norm_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *input,
                              pith_int_list normalized_shape, const pith_tensor *weight,
                              const pith_tensor *bias, double eps, bool cudnn_enable,
                              pith_device device)
{
    return layer_norm_impl(ret, input, normalized_shape, weight, bias, eps, device, NULL);
}

pith_status layer_norm_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *input,
                                  pith_int_list normalized_shape, const pith_tensor *weight,
                                  const pith_tensor *bias, double eps, bool cudnn_enable,
                                  const pith_tensor *out, pith_device device)
{
    return layer_norm_impl(ret, input, normalized_shape, weight, bias, eps, device,
                           (pith_tensor *)out);
}

/* ---- _layer_norm_backward_input: layer_norm's input gradient, one row at a time ----
 * Per row of len elements, with g = grad_out * weight (grad_out without weight):
 * dx = rstd (g - mean(g) - xhat mean(g xhat)), xhat = (x - mean) rstd, where mean and rstd
 * are recomputed as layer_norm's forward computes them (two-pass mean and biased variance,
 * in the compute type CT: float for float32 and the 16-bit dtypes, double for float64). The
 * row is summed three times (x, the squares about the mean, then g and g xhat together) and
 * written once, all while it sits in cache, where the composite formula took ten passes over
 * the whole tensor. The sums are `omp simd` reductions. */
#define NM_LN_BWD_FN_(E, T, CT, LOAD, STORE, EXP, LOG)                                      \
    static void layer_norm_backward_row_##E(const T *dy, const T *x, const T *w, T *dx,     \
                                            int64_t len, double eps)                        \
    {                                                                                       \
        CT sum, m2, gsum = 0, gxsum = 0;                                                    \
        NM_SUM_(CT, sum, (CT)LOAD(x[i]));                                                   \
        const CT cmean = sum / (CT)len;                                                     \
        NM_SUM_(CT, m2, ((CT)LOAD(x[i]) - cmean) * ((CT)LOAD(x[i]) - cmean));               \
        const CT rstd = (CT)(1.0 / sqrt((double)m2 / (double)len + eps));                   \
        _Pragma("omp simd reduction(+ : gsum, gxsum)")                                      \
        for (int64_t i = 0; i < len; i++) {                                                 \
            const CT g = w ? (CT)LOAD(dy[i]) * (CT)LOAD(w[i]) : (CT)LOAD(dy[i]);            \
            gsum += g;                                                                      \
            gxsum += g * (((CT)LOAD(x[i]) - cmean) * rstd);                                 \
        }                                                                                   \
        const CT gmean = gsum / (CT)len, gxmean = gxsum / (CT)len;                          \
        for (int64_t i = 0; i < len; i++) {                                                 \
            const CT g = w ? (CT)LOAD(dy[i]) * (CT)LOAD(w[i]) : (CT)LOAD(dy[i]);            \
            const CT xhat = ((CT)LOAD(x[i]) - cmean) * rstd;                                \
            dx[i] = STORE(rstd * (g - gmean - xhat * gxmean));                              \
        }                                                                                   \
    }                                                                                       \
    static void layer_norm_backward_##E(const char *dys, const char *xs, const char *ws,    \
                                        char *dxs, int64_t rows, int64_t len, double eps,   \
                                        int nthreads)                                       \
    {                                                                                       \
        PITH_PARALLEL_FOR(r, rows, nthreads,                                                \
                          layer_norm_backward_row_##E((const T *)dys + r * len,             \
                                                      (const T *)xs + r * len,              \
                                                      (const T *)ws, (T *)dxs + r * len,    \
                                                      len, eps););                          \
    }
NM_FORALL_FLOAT_DTYPES(NM_LN_BWD_FN_)

/* What layer_norm_backward_fill computes. */
typedef struct {
    const pith_tensor *grad_out, *input, *weight;
    pith_int_list shape;
    double eps;
} layer_norm_backward_job;

static pith_status layer_norm_backward_fill(const void *ctx, pith_tensor *dst)
{
    const layer_norm_backward_job *job = ctx;
    if (dst->numel == 0)
        return PITH_OK;
    pith_tensor *dy = contiguous_of(job->grad_out), *x = NULL, *w = NULL;
    if (dy)
        x = contiguous_of(job->input);
    if (x && job->weight)
        w = contiguous_of(job->weight);
    if (!dy || !x || (job->weight && !w)) {
        pith_release(dy);
        pith_release(x);
        pith_release(w);
        return pith_last_status();
    }
    int64_t len = 1;
    for (size_t i = 0; i < job->shape.n; i++)
        len *= job->shape.data[i];
    const int64_t rows = job->input->numel / len;
    const int nthreads = parallel_threads_for(job->input->numel);
    const char *wd = w ? tensor_data(w) : NULL;
    switch (job->input->dtype) {
#define NM_LN_BWD_CASE_(E, T, CT, LOAD, STORE, EXP, LOG)                                    \
    case E:                                                                                 \
        layer_norm_backward_##E(tensor_data(dy), tensor_data(x), wd, tensor_data(dst), rows, \
                                len, job->eps, nthreads);                                   \
        break;
        NM_FORALL_FLOAT_DTYPES(NM_LN_BWD_CASE_)
#undef NM_LN_BWD_CASE_
    default:
        break;
    }
    pith_release(dy);
    pith_release(x);
    pith_release(w);
    return PITH_OK;
}

/* _layer_norm_backward_input's kernel for both devices (device_kernel in ops/ops.toml):
 * layer_norm's checks of input, normalized_shape and weight, and grad_out of input's shape
 * and dtype. */
pith_status _layer_norm_backward_input_kernel(pith_keyset ks, pith_value *ret,
                                              const pith_tensor *grad_out,
                                              const pith_tensor *input,
                                              pith_int_list normalized_shape,
                                              const pith_tensor *weight, double eps,
                                              pith_device device)
{
    char have[256], want[256];
    if (device == PITH_CPU &&
        (reduce_check_cpu("_layer_norm_backward_input", grad_out) != PITH_OK ||
         reduce_check_cpu("_layer_norm_backward_input", input) != PITH_OK ||
         reduce_check_cpu("_layer_norm_backward_input", weight) != PITH_OK))
        return pith_last_status();
    if (layer_norm_prepare(input, normalized_shape, weight, NULL) != PITH_OK)
        return pith_last_status();
    if (!shape_equal(grad_out->ndim, grad_out->sizes, input->ndim, input->sizes)) {
        shape_format(grad_out->ndim, grad_out->sizes, have, sizeof have);
        shape_format(input->ndim, input->sizes, want, sizeof want);
        return pith_set_error(PITH_ERR_VALUE,
                              "_layer_norm_backward_input: expected grad_out of the input's "
                              "shape %s, but got %s",
                              want, have);
    }
    if (grad_out->dtype != input->dtype)
        return pith_set_error(PITH_ERR_TYPE,
                              "_layer_norm_backward_input: expected grad_out to have dtype %s "
                              "(the input's), but got %s",
                              pith_dtype_name(input->dtype), pith_dtype_name(grad_out->dtype));
    layer_norm_backward_job job = {grad_out, input, weight, normalized_shape, eps};
    return out_target_new(ret, input->ndim, input->sizes, input->dtype, device,
                          layer_norm_backward_fill, &job);
}
