/* elementwise_misc.c — the elementwise ops outside the unary/binary lists: gelu (exact or
 * tanh), clamp / clamp_ with Scalar bounds, hardtanh, where, and the float classifiers isnan,
 * isinf, isposinf, isneginf and isfinite. */
#include <math.h>
#include <string.h>

#include "kernels/elementwise_loops.h"
#include "kernels/elementwise_ops.h"
#include "kernels/promotion.h"

/* ---- gelu: floating dtypes only, as in PyTorch ---- */

/* Vectorised: See Note [Vectorised math functions]. */
EW_VECMATH_LOOPS(gelu_exact, gelu)
EW_VECMATH_LOOPS(gelu_tanh, gelu_tanh)
static const elementwise_loop gelu_exact_loops[PITH_NUM_DTYPES] = {
    EW_TAGS_FLOAT(EW_LOOP_ENTRY, gelu_exact)};
static const elementwise_loop gelu_tanh_loops[PITH_NUM_DTYPES] = {
    EW_TAGS_FLOAT(EW_LOOP_ENTRY, gelu_tanh)};
static const unary_def gelu_exact_def = {"gelu", RULE_PROMOTED, gelu_exact_loops, NULL};
static const unary_def gelu_tanh_def = {"gelu", RULE_PROMOTED, gelu_tanh_loops, NULL};

const unary_def *gelu_def(const char *approximate)
{
    if (approximate && strcmp(approximate, "none") == 0)
        return &gelu_exact_def;
    if (approximate && strcmp(approximate, "tanh") == 0)
        return &gelu_tanh_def;
    return NULL;
}

static pith_status gelu_run(pith_value *ret, const pith_tensor *self, const char *approximate,
                            const pith_tensor *target, elementwise_mode mode, bool meta)
{
    const unary_def *def = gelu_def(approximate);
    if (!def)
        return pith_set_error(PITH_ERR_VALUE,
                              "gelu: approximate argument must be either none or tanh, not '%s'",
                              approximate ? approximate : "(null)");
    return unary_run(def, ret, self, target, mode, meta);
}

pith_status gelu_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                        const char *approximate, pith_device device)
{
    return gelu_run(ret, self, approximate, NULL, ELEMENTWISE_FUNCTIONAL, device == PITH_META);
}
pith_status gelu_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            const char *approximate, const pith_tensor *out, pith_device device)
{
    return gelu_run(ret, self, approximate, out, ELEMENTWISE_OUT, device == PITH_META);
}
pith_status gelu__kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                         const char *approximate, pith_device device)
{
    return gelu_run(ret, self, approximate, self, ELEMENTWISE_INPLACE, device == PITH_META);
}

/* ---- clamp: min(max(x, min), max), so min > max gives max; NaN (in x or a bound)
 * propagates, as PyTorch's clamp does. The bounds are Python numbers: they take part in
 * type promotion as wrapped numbers (an int tensor clamped to 0.5 is float32). ---- */


static inline int64_t clamp_int(int64_t a, int64_t lo, int64_t hi)
{
    int64_t x = a < lo ? lo : a;
    return x > hi ? hi : x;
}
#define CLAMP_FLOAT_HELPER(type)                                                            \
    static inline type clamp_##type(type a, type lo, type hi)                               \
    {                                                                                       \
        type x = a != a ? a : lo != lo ? lo : a < lo ? lo : a;                              \
        return hi != hi ? hi : x > hi ? hi : x;                                             \
    }
CLAMP_FLOAT_HELPER(float)
CLAMP_FLOAT_HELPER(double)

#define CLAMP_BOUNDS const clamp_bounds *c = ctx
#define CLAMP_LOOP(tag, prologue, expr) EW_UNARY_LOOP(clamp_##tag, tag, tag, prologue, expr)
EW_TAGS_INT(CLAMP_LOOP, CLAMP_BOUNDS, (T)clamp_int(a, c->lo.i, c->hi.i))
EW_TAGS_FLOAT(CLAMP_LOOP, CLAMP_BOUNDS,
              _Generic((a), float: clamp_float, default: clamp_double)(a, (T)c->lo.d, (T)c->hi.d))
static const elementwise_loop clamp_loops[PITH_NUM_DTYPES] = {
    EW_TAGS_INT(EW_LOOP_ENTRY, clamp) EW_TAGS_FLOAT(EW_LOOP_ENTRY, clamp)};

static pith_status clamp_bound(const char *what, pith_scalar s, pith_dtype compute,
                               elementwise_scalar *out, double absent_d, int64_t absent_i)
{
    if (s.kind == PITH_SCALAR_NONE) {
        out->d = absent_d;
        out->i = absent_i;
        return PITH_OK;
    }
    return scalar_convert("clamp", what, s, compute, out);
}

static pith_status clamp_run(pith_value *ret, const pith_tensor *self, pith_scalar min,
                             pith_scalar max, elementwise_mode mode, bool meta)
{
    const char *op = "clamp";
    const pith_tensor *target = mode == ELEMENTWISE_INPLACE ? self : NULL;
    promotion_state promotion;
    clamp_bounds bounds;
    pith_tensor *dst;
    if (elementwise_check_devices(op, meta, 1, &self, target) != PITH_OK)
        return pith_last_status();
    if (min.kind == PITH_SCALAR_NONE && max.kind == PITH_SCALAR_NONE)
        return pith_set_error(PITH_ERR_VALUE,
                              "clamp: At least one of 'min' or 'max' must not be None");
    promotion_init(&promotion);
    promotion_add_tensor(&promotion, self);
    promotion_add_scalar(&promotion, min);
    promotion_add_scalar(&promotion, max);
    pith_dtype compute = promotion_result(&promotion);
    if (!clamp_loops[compute])
        return elementwise_not_implemented(op, compute);
    if (clamp_bound("min", min, compute, &bounds.lo, -INFINITY, INT64_MIN) != PITH_OK ||
        clamp_bound("max", max, compute, &bounds.hi, INFINITY, INT64_MAX) != PITH_OK)
        return pith_last_status();
    if (elementwise_output(op, mode, (pith_tensor *)target, self->ndim, self->sizes, compute,
                           meta ? PITH_META : PITH_CPU, &dst) != PITH_OK)
        return pith_last_status();
    if (!meta && elementwise_apply(dst, compute, 1, &self, &compute, clamp_loops[compute],
                                   &bounds, NULL) != PITH_OK) {
        if (mode == ELEMENTWISE_FUNCTIONAL)
            pith_release(dst);
        return pith_last_status();
    }
    if (mode == ELEMENTWISE_FUNCTIONAL)
        return ret_tensor(ret, dst);
    tensor_bump_version(dst);
    return ret_self(ret, dst);
}

/* See Note [Fused elementwise calls] (elementwise_ops.c): clamp_run's one loop, in a
 * floating compute dtype. */
bool clamp_fusable(const pith_tensor *self, pith_scalar min, pith_scalar max,
                   elementwise_fusable *f)
{
    promotion_state promotion;
    promotion_init(&promotion);
    promotion_add_tensor(&promotion, self);
    promotion_add_scalar(&promotion, min);
    promotion_add_scalar(&promotion, max);
    pith_dtype compute = promotion_result(&promotion);
    clamp_bounds bounds;
    if ((min.kind == PITH_SCALAR_NONE && max.kind == PITH_SCALAR_NONE) ||
        !dtype_is_floating(compute) || !clamp_loops[compute] ||
        clamp_bound("min", min, compute, &bounds.lo, -INFINITY, INT64_MIN) != PITH_OK ||
        clamp_bound("max", max, compute, &bounds.hi, INFINITY, INT64_MAX) != PITH_OK)
        return false;
    *f = (elementwise_fusable){.loop = clamp_loops[compute],
                               .ctx.bounds = bounds,
                               .nin = 1,
                               .in_dtypes = {compute},
                               .out_dtype = compute};
    return true;
}

pith_status clamp_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                         pith_scalar min, pith_scalar max, pith_device device)
{
    return clamp_run(ret, self, min, max, ELEMENTWISE_FUNCTIONAL, device == PITH_META);
}
pith_status clamp__kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                          pith_scalar min, pith_scalar max, pith_device device)
{
    return clamp_run(ret, self, min, max, ELEMENTWISE_INPLACE, device == PITH_META);
}

/* ---- hardtanh: clamp's loop in self's own dtype (no promotion), as PyTorch's: the bounds
 * are converted to that dtype (a float bound of an integer tensor truncated toward zero,
 * range-checked), bool is refused, and so is a negative bound of an unsigned tensor. ---- */

static pith_status hardtanh_bound(const char *what, pith_scalar s, pith_dtype dtype,
                                  elementwise_scalar *out)
{
    if (dtype_is_floating(dtype) || s.kind != PITH_SCALAR_DOUBLE)
        return scalar_convert("hardtanh", what, s, dtype, out);
    double d = s.u.d;
    if (!(d > -9223372036854775809.0 && d < 9223372036854775808.0)) /* NaN too */
        return pith_set_error(PITH_ERR_VALUE,
                              "hardtanh: %s %g cannot be converted to type %s without overflow",
                              what, d, pith_dtype_name(dtype));
    return scalar_convert("hardtanh", what, scalar_from_int((int64_t)d), dtype, out);
}

static pith_status hardtanh_run(pith_value *ret, const pith_tensor *self, pith_scalar min,
                                pith_scalar max, const pith_tensor *target,
                                elementwise_mode mode, bool meta)
{
    const char *op = "hardtanh";
    pith_dtype dtype = self->dtype;
    clamp_bounds bounds;
    pith_tensor *dst;
    if (elementwise_check_devices(op, meta, 1, &self, target) != PITH_OK)
        return pith_last_status();
    if (dtype == PITH_BOOL)
        return pith_set_error(PITH_ERR_RUNTIME, "hardtanh: Bool inputs not supported");
    if (dtype == PITH_UINT8 && (scalar_to_double(min) < 0 || scalar_to_double(max) < 0))
        return pith_set_error(PITH_ERR_RUNTIME,
                              "hardtanh: cannot do hardtanh on an unsigned type with negative "
                              "limits");
    if (hardtanh_bound("min_val", min, dtype, &bounds.lo) != PITH_OK ||
        hardtanh_bound("max_val", max, dtype, &bounds.hi) != PITH_OK)
        return pith_last_status();
    if (elementwise_output(op, mode, (pith_tensor *)target, self->ndim, self->sizes, dtype,
                           meta ? PITH_META : PITH_CPU, &dst) != PITH_OK)
        return pith_last_status();
    if (!meta && elementwise_apply(dst, dtype, 1, &self, &dtype, clamp_loops[dtype], &bounds,
                                   NULL) != PITH_OK) {
        if (mode == ELEMENTWISE_FUNCTIONAL)
            pith_release(dst);
        return pith_last_status();
    }
    if (mode == ELEMENTWISE_FUNCTIONAL)
        return ret_tensor(ret, dst);
    tensor_bump_version(dst);
    return ret_self(ret, dst);
}

/* The kernels for both devices (device_kernel in ops/ops.toml). */
pith_status hardtanh_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            pith_scalar min_val, pith_scalar max_val, pith_device device)
{
    return hardtanh_run(ret, self, min_val, max_val, NULL, ELEMENTWISE_FUNCTIONAL,
                        device == PITH_META);
}

pith_status hardtanh_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                pith_scalar min_val, pith_scalar max_val, const pith_tensor *out,
                                pith_device device)
{
    return hardtanh_run(ret, self, min_val, max_val, out, ELEMENTWISE_OUT, device == PITH_META);
}

pith_status hardtanh__kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                             pith_scalar min_val, pith_scalar max_val, pith_device device)
{
    return hardtanh_run(ret, self, min_val, max_val, self, ELEMENTWISE_INPLACE,
                        device == PITH_META);
}

/* ---- where: picks bytes, so one loop per element size ---- */

#define WHERE_LOOP(bytes, type)                                                             \
    static int where_##bytes(char **args, const int64_t *n, const int64_t *s, void *ctx)    \
    {                                                                                       \
        (void)ctx;                                                                          \
        const int64_t len = n[0];                                                           \
        if (s[0] == bytes && s[1] == 1 && s[2] == bytes && s[3] == bytes) {                 \
            type *o = (type *)args[0];                                                      \
            const uint8_t *c = (const uint8_t *)args[1];                                    \
            const type *a = (const type *)args[2], *b = (const type *)args[3];              \
            EW_IVDEP for (int64_t i = 0; i < len; i++) o[i] = c[i] ? a[i] : b[i];           \
        } else {                                                                            \
            for (int64_t i = 0; i < len; i++)                                               \
                *(type *)(args[0] + i * s[0]) = *(const uint8_t *)(args[1] + i * s[1])      \
                                                    ? *(const type *)(args[2] + i * s[2])   \
                                                    : *(const type *)(args[3] + i * s[3]);  \
        }                                                                                   \
        return 0;                                                                           \
    }
WHERE_LOOP(1, uint8_t)
WHERE_LOOP(2, uint16_t)
WHERE_LOOP(4, uint32_t)
WHERE_LOOP(8, uint64_t)

static elementwise_loop where_loop_for(pith_dtype dtype)
{
    switch (dtype_itemsize(dtype)) {
    case 1:
        return where_1;
    case 2:
        return where_2;
    case 4:
        return where_4;
    default:
        return where_8;
    }
}

static pith_status where_run(pith_value *ret, const pith_tensor *condition,
                             const pith_tensor *self, const pith_tensor *other, bool meta)
{
    const pith_tensor *in[3] = {condition, self, other};
    int ndim = 0;
    int64_t sizes[PITH_MAX_DIMS];
    pith_tensor *dst;
    if (elementwise_check_devices("where", meta, 3, in, NULL) != PITH_OK)
        return pith_last_status();
    if (condition->dtype != PITH_BOOL && condition->dtype != PITH_UINT8)
        return pith_set_error(PITH_ERR_TYPE,
                              "where: expected condition to be a boolean tensor, but got a "
                              "tensor with dtype %s",
                              pith_dtype_name(condition->dtype));
    if (broadcast_shapes("where", 3, in, &ndim, sizes) != PITH_OK)
        return pith_last_status();
    pith_dtype result = result_type_of2(self, other);
    if (elementwise_output("where", ELEMENTWISE_FUNCTIONAL, NULL, ndim, sizes, result,
                           meta ? PITH_META : PITH_CPU, &dst) != PITH_OK)
        return pith_last_status();
    pith_dtype in_dtypes[3] = {PITH_BOOL, result, result};
    if (!meta && elementwise_apply(dst, result, 3, in, in_dtypes, where_loop_for(result), NULL,
                                   NULL) != PITH_OK) {
        pith_release(dst);
        return pith_last_status();
    }
    return ret_tensor(ret, dst);
}

/* See Note [Fused elementwise calls] (elementwise_ops.c): where_run's one loop, for a
 * floating result. */
bool where_fusable(const pith_tensor *condition, const pith_tensor *self,
                   const pith_tensor *other, elementwise_fusable *f)
{
    if (condition->dtype != PITH_BOOL && condition->dtype != PITH_UINT8)
        return false;
    pith_dtype result = result_type_of2(self, other);
    if (!dtype_is_floating(result))
        return false;
    *f = (elementwise_fusable){.loop = where_loop_for(result),
                               .nin = 3,
                               .in_dtypes = {PITH_BOOL, result, result},
                               .out_dtype = result};
    return true;
}

pith_status where_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *condition,
                         const pith_tensor *self, const pith_tensor *other, pith_device device)
{
    return where_run(ret, condition, self, other, device == PITH_META);
}

/* max.other and min.other: PyTorch's max(x, y) and min(x, y), the elementwise maximum and
 * minimum (NaN-propagating), spelled as overloads of the reductions' names. */
pith_status max_other_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                const pith_tensor *other)
{
    (void)ks;
    return pith_call_maximum(ret, self, other);
}

pith_status min_other_composite(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                const pith_tensor *other)
{
    (void)ks;
    return pith_call_minimum(ret, self, other);
}

/* ---- isnan, isinf, isposinf, isneginf, isfinite: bool results for every dtype ---- */

/* Each reads its input in its own dtype (16-bit floats widened to float, which keeps NaN
 * and the infinities) and returns bool; integers and bool are never NaN or infinite. */
#define FLOAT_CLASSIFIER(name, float_expr, int_value)                                       \
    EW_TAGS_FLOAT(EW_UNARY_TO_BOOL, name, float_expr)                                       \
    EW_TAGS_INT(EW_UNARY_TO_BOOL, name, int_value)                                          \
    EW_UNARY_TO_BOOL(b, name, int_value)                                                    \
    static const elementwise_loop name##_loops[PITH_NUM_DTYPES] = {                         \
        EW_TAGS_ALL(EW_LOOP_ENTRY, name)};                                                  \
    static const unary_def name##_def = {#name, RULE_TO_BOOL, name##_loops, NULL};

FLOAT_CLASSIFIER(isnan, a != a, false)
FLOAT_CLASSIFIER(isinf, a == (T)INFINITY || a == -(T)INFINITY, false)
FLOAT_CLASSIFIER(isposinf, a == (T)INFINITY, false)
FLOAT_CLASSIFIER(isneginf, a == -(T)INFINITY, false)
FLOAT_CLASSIFIER(isfinite, a - a == 0, true)

/* Their kernels for both devices (device_kernel in ops/ops.toml). */
pith_status isnan_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                         pith_device device)
{
    return unary_run(&isnan_def, ret, self, NULL, ELEMENTWISE_FUNCTIONAL, device == PITH_META);
}

pith_status isinf_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                         pith_device device)
{
    return unary_run(&isinf_def, ret, self, NULL, ELEMENTWISE_FUNCTIONAL, device == PITH_META);
}

pith_status isposinf_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            pith_device device)
{
    return unary_run(&isposinf_def, ret, self, NULL, ELEMENTWISE_FUNCTIONAL,
                     device == PITH_META);
}

pith_status isneginf_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            pith_device device)
{
    return unary_run(&isneginf_def, ret, self, NULL, ELEMENTWISE_FUNCTIONAL,
                     device == PITH_META);
}

pith_status isfinite_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            pith_device device)
{
    return unary_run(&isfinite_def, ret, self, NULL, ELEMENTWISE_FUNCTIONAL,
                     device == PITH_META);
}
