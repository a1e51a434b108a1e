/* activations.c — nn.functional's activations with parameters, as ops with one loop each:
 * leaky_relu, elu and softplus. Floating dtypes only, as PyTorch's CPU kernels (an integer
 * or bool input is "not implemented"); float16 and bfloat16 compute in float, and the
 * parameters are read in the compute type, as PyTorch's opmath does; and log_sigmoid; and
 * gelu_backward, gelu's derivative in one vectorised pass. */
#include <math.h>
#include <string.h>

#include "core/dtype.h"
#include "kernels/elementwise_loops.h"
#include "kernels/elementwise_ops.h"
#include "kernels/vecmath.h"

/* What the loops read through ctx: an op's Scalar parameters, in schema order. */
typedef struct {
    double p[3];
} activation_params;

#define ACTIVATION_PARAMS const activation_params *c = ctx

/* leaky_relu: x where x > 0, else negative_slope * x (NaN stays NaN). */
#define LEAKY_RELU_LOOP(tag, prologue, expr)                                                \
    EW_UNARY_LOOP(leaky_relu_##tag, tag, tag, prologue, expr)
EW_TAGS_FLOAT(LEAKY_RELU_LOOP, ACTIVATION_PARAMS; const T slope = (T)c->p[0],
              a > 0 ? a : a * slope)
static const elementwise_loop leaky_relu_loops[PITH_NUM_DTYPES] = {
    EW_TAGS_FLOAT(EW_LOOP_ENTRY, leaky_relu)};
static const unary_def leaky_relu_def = {"leaky_relu", RULE_PROMOTED, leaky_relu_loops, NULL};

/* elu: x * scale where x > 0, else expm1(x * input_scale) * alpha * scale, with PyTorch's
 * coefficients alpha * scale (negative side) and scale (positive side). */
#define ELU_LOOP(tag, prologue, expr) EW_UNARY_LOOP(elu_##tag, tag, tag, prologue, expr)
EW_TAGS_FLOAT(ELU_LOOP,
              ACTIVATION_PARAMS; const T negcoef = (T)c->p[0] * (T)c->p[1];
              const T poscoef = (T)c->p[1]; const T inputcoef = (T)c->p[2],
              a <= 0 ? EW_MATH(expm1, a * inputcoef) * negcoef : a * poscoef)
static const elementwise_loop elu_loops[PITH_NUM_DTYPES] = {EW_TAGS_FLOAT(EW_LOOP_ENTRY, elu)};
static const unary_def elu_def = {"elu", RULE_PROMOTED, elu_loops, NULL};

/* softplus: log1p(exp(x * beta)) / beta, and x itself where x * beta > threshold. */
#define SOFTPLUS_LOOP(tag, prologue, expr)                                                  \
    EW_UNARY_LOOP(softplus_##tag, tag, tag, prologue, expr)
EW_TAGS_FLOAT(SOFTPLUS_LOOP,
              ACTIVATION_PARAMS; const T beta = (T)c->p[0]; const T threshold = (T)c->p[1],
              a * beta > threshold ? a : EW_MATH(log1p, EW_MATH(exp, a * beta)) / beta)
static const elementwise_loop softplus_loops[PITH_NUM_DTYPES] = {
    EW_TAGS_FLOAT(EW_LOOP_ENTRY, softplus)};
static const unary_def softplus_def = {"softplus", RULE_PROMOTED, softplus_loops, NULL};

/* log_sigmoid: log(1 / (1 + exp(-x))) as min(x, 0) - log1p(exp(-|x|)): no overflow, no log
 * of 0. */
EW_TAGS_FLOAT(EW_UNARY_SAME, log_sigmoid,
              (a < 0 ? a : (T)0) - EW_MATH(log1p, EW_MATH(exp, -EW_MATH(fabs, a))))
static const elementwise_loop log_sigmoid_loops[PITH_NUM_DTYPES] = {
    EW_TAGS_FLOAT(EW_LOOP_ENTRY, log_sigmoid)};
static const unary_def log_sigmoid_def = {"log_sigmoid", RULE_PROMOTED, log_sigmoid_loops, NULL};

/* Runs one activation of form `mode` with its parameters. */
static pith_status activation_run(const unary_def *def, pith_value *ret, const pith_tensor *self,
                                  const pith_scalar *params, int nparams,
                                  const pith_tensor *target, elementwise_mode mode,
                                  pith_device device)
{
    activation_params c = {{0, 0, 0}};
    for (int i = 0; i < nparams; i++)
        c.p[i] = scalar_to_double(params[i]);
    return unary_run_ctx(def, ret, self, &c, target, mode, device == PITH_META);
}

/* The kernels for both devices (device_kernel in ops/ops.toml). */
pith_status leaky_relu_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                              pith_scalar negative_slope, pith_device device)
{
    return activation_run(&leaky_relu_def, ret, self, &negative_slope, 1, NULL,
                          ELEMENTWISE_FUNCTIONAL, device);
}

pith_status leaky_relu_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                  pith_scalar negative_slope, const pith_tensor *out,
                                  pith_device device)
{
    return activation_run(&leaky_relu_def, ret, self, &negative_slope, 1, out, ELEMENTWISE_OUT,
                          device);
}

pith_status leaky_relu__kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                               pith_scalar negative_slope, pith_device device)
{
    return activation_run(&leaky_relu_def, ret, self, &negative_slope, 1, self,
                          ELEMENTWISE_INPLACE, device);
}

pith_status elu_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                       pith_scalar alpha, pith_scalar scale, pith_scalar input_scale,
                       pith_device device)
{
    const pith_scalar params[3] = {alpha, scale, input_scale};
    return activation_run(&elu_def, ret, self, params, 3, NULL, ELEMENTWISE_FUNCTIONAL, device);
}

pith_status elu_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                           pith_scalar alpha, pith_scalar scale, pith_scalar input_scale,
                           const pith_tensor *out, pith_device device)
{
    const pith_scalar params[3] = {alpha, scale, input_scale};
    return activation_run(&elu_def, ret, self, params, 3, out, ELEMENTWISE_OUT, device);
}

pith_status elu__kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                        pith_scalar alpha, pith_scalar scale, pith_scalar input_scale,
                        pith_device device)
{
    const pith_scalar params[3] = {alpha, scale, input_scale};
    return activation_run(&elu_def, ret, self, params, 3, self, ELEMENTWISE_INPLACE, device);
}

pith_status softplus_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                            pith_scalar beta, pith_scalar threshold, pith_device device)
{
    const pith_scalar params[2] = {beta, threshold};
    return activation_run(&softplus_def, ret, self, params, 2, NULL, ELEMENTWISE_FUNCTIONAL,
                          device);
}

pith_status softplus_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                pith_scalar beta, pith_scalar threshold, const pith_tensor *out,
                                pith_device device)
{
    const pith_scalar params[2] = {beta, threshold};
    return activation_run(&softplus_def, ret, self, params, 2, out, ELEMENTWISE_OUT, device);
}

pith_status log_sigmoid_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                               pith_device device)
{
    return activation_run(&log_sigmoid_def, ret, self, NULL, 0, NULL, ELEMENTWISE_FUNCTIONAL,
                          device);
}

pith_status log_sigmoid_out_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *self,
                                   const pith_tensor *out, pith_device device)
{
    return activation_run(&log_sigmoid_def, ret, self, NULL, 0, out, ELEMENTWISE_OUT, device);
}

/* ---- gelu_backward: grad_output * GELU'(self) in one pass (gelu's derivative formula in
 * ops/ops.toml calls it), PyTorch's formulas (GeluBackwardKernelImpl) with its constants:
 *   none: dy * (Phi(x) + x phi(x)), Phi(x) = (1 + erf(x / sqrt 2)) / 2,
 *         phi(x) = exp(-x^2 / 2) / sqrt(2 pi);
 *   tanh: dy * ((1 + t) / 2 + (x / 2) (1 - t^2) k (1 + 3 c x^2)), t = tanh(k (x + c x^3)),
 *         k = sqrt(2 / pi), c = 0.044715.
 * The exact form's Phi(x) is gelu(x) / x, the table's gelu (within 6 ulps; erf took twice
 * gelu's time), with x replaced by 1e-20 where |x| < 1e-20: Phi(x) rounds to 1/2 there,
 * and gelu(x) of 0 or of a float32 denormal is 0. The combining loop has no branch, so
 * that it vectorises.
 * Each loop runs in chunks of GELU_BWD_CHUNK elements: the operands are read into buffers
 * of the compute type (float for float16, bfloat16 and float32, double for float64), each
 * unless it is a contiguous array of it; gelu and exp (or tanh) of the chunk come from the
 * vectorised math table (See Note [Vectorised math functions]), and one last loop combines
 * them, so the tensor is read and written once where the composite formula took ten passes.
 * The vecmath functions' results depend only on their lane, so a result does not depend on
 * where a chunk or a thread's share ends. ---- */

#define GELU_BWD_CHUNK 256

#define GB_LOAD_f32(p) (*(const float *)(p))
#define GB_LOAD_f64(p) (*(const double *)(p))
#define GB_LOAD_f16(p) half_to_float(*(const pith_half *)(p))
#define GB_LOAD_bf16(p) bfloat16_to_float(*(const pith_bfloat16 *)(p))
#define GB_STORE_f32(p, v) (*(float *)(p) = (v))
#define GB_STORE_f64(p, v) (*(double *)(p) = (v))
#define GB_STORE_f16(p, v) (*(pith_half *)(p) = float_to_half(v))
#define GB_STORE_bf16(p, v) (*(pith_bfloat16 *)(p) = float_to_bfloat16(v))

/* Points g, x and o at chunk [start, start + m) of the operands: into each array itself when
 * the loop's dtype is the compute type and that operand is contiguous (direct[k] for
 * operand k: 0 the output, 1 grad_output, 2 self), else into the buffers gb, xb and ob, the
 * inputs read into them (a broadcast grad_output, of stride 0, is read from one place). */
#define GELU_BWD_CHUNK_BEGIN(suffix, T)                                                     \
    const int64_t m = n[0] - start < GELU_BWD_CHUNK ? n[0] - start : GELU_BWD_CHUNK;        \
    const T *g = gb, *x = xb;                                                               \
    T *o = direct[0] ? (T *)args[0] + start : ob;                                           \
    if (direct[1])                                                                          \
        g = (const T *)args[1] + start;                                                     \
    else                                                                                    \
        for (int64_t i = 0; i < m; i++)                                                     \
            gb[i] = GB_LOAD_##suffix(args[1] + (start + i) * s[1]);                         \
    if (direct[2])                                                                          \
        x = (const T *)args[2] + start;                                                     \
    else                                                                                    \
        for (int64_t i = 0; i < m; i++)                                                     \
            xb[i] = GB_LOAD_##suffix(args[2] + (start + i) * s[2]);
#define GELU_BWD_CHUNK_END(suffix)                                                          \
    if (!direct[0])                                                                         \
        for (int64_t i = 0; i < m; i++)                                                     \
            GB_STORE_##suffix(args[0] + (start + i) * s[0], ob[i]);
#define GELU_BWD_DIRECT(T, same)                                                            \
    const int64_t sz = (int64_t)sizeof(T);                                                  \
    const int direct[3] = {same && s[0] == sz, same && s[1] == sz, same && s[2] == sz};

/* The loops gelu_backward_{exact,tanh}_<suffix>: T the compute type, V its vecmath suffix,
 * same: whether the stored type is T. */
#define GELU_BWD_LOOPS(suffix, T, V, same)                                                  \
    static int gelu_backward_exact_##suffix(char **args, const int64_t *n, const int64_t *s, \
                                            void *ctx)                                      \
    {                                                                                       \
        (void)ctx;                                                                          \
        const vecmath_table *vm = vecmath_active();                                         \
        GELU_BWD_DIRECT(T, same)                                                            \
        const T beta = (T)0.39894228040143267794;                                           \
        T gb[GELU_BWD_CHUNK], xb[GELU_BWD_CHUNK], ob[GELU_BWD_CHUNK];                       \
        T d[GELU_BWD_CHUNK], e[GELU_BWD_CHUNK], p[GELU_BWD_CHUNK];                          \
        for (int64_t start = 0; start < n[0]; start += GELU_BWD_CHUNK) {                    \
            GELU_BWD_CHUNK_BEGIN(suffix, T)                                                 \
            for (int64_t i = 0; i < m; i++) {                                               \
                const T ax = x[i] < 0 ? -x[i] : x[i];                                       \
                d[i] = ax < (T)1e-20 ? (T)1e-20 : x[i];                                     \
                p[i] = x[i] * x[i] * (T)-0.5;                                               \
            }                                                                               \
            vm->gelu_##V(e, d, m);                                                          \
            vm->exp_##V(p, p, m);                                                           \
            for (int64_t i = 0; i < m; i++) {                                               \
                const T cdf = e[i] / d[i];                                                  \
                const T pdf = beta * p[i];                                                  \
                o[i] = g[i] * (cdf + x[i] * pdf);                                           \
            }                                                                               \
            GELU_BWD_CHUNK_END(suffix)                                                      \
        }                                                                                   \
        return 0;                                                                           \
    }                                                                                       \
    static int gelu_backward_tanh_##suffix(char **args, const int64_t *n, const int64_t *s, \
                                           void *ctx)                                       \
    {                                                                                       \
        (void)ctx;                                                                          \
        const vecmath_table *vm = vecmath_active();                                         \
        GELU_BWD_DIRECT(T, same)                                                            \
        const T beta = (T)0.79788456080286535588, kappa = (T)0.044715;                      \
        const T three_kappa = (T)3 * kappa;                                                 \
        T gb[GELU_BWD_CHUNK], xb[GELU_BWD_CHUNK], ob[GELU_BWD_CHUNK], t[GELU_BWD_CHUNK];    \
        for (int64_t start = 0; start < n[0]; start += GELU_BWD_CHUNK) {                    \
            GELU_BWD_CHUNK_BEGIN(suffix, T)                                                 \
            for (int64_t i = 0; i < m; i++) {                                               \
                const T x_cube = x[i] * (x[i] * x[i]);                                      \
                t[i] = beta * (x[i] + kappa * x_cube);                                      \
            }                                                                               \
            vm->tanh_##V(t, t, m);                                                          \
            for (int64_t i = 0; i < m; i++) {                                               \
                const T left = (T)0.5 * x[i], right = (T)1 + t[i];                          \
                const T left_derivative = (T)0.5 * right;                                   \
                const T tanh_derivative = (T)1 - t[i] * t[i];                               \
                const T inner_derivative = beta * ((T)1 + three_kappa * (x[i] * x[i]));     \
                const T right_derivative = left * tanh_derivative * inner_derivative;       \
                o[i] = g[i] * (left_derivative + right_derivative);                         \
            }                                                                               \
            GELU_BWD_CHUNK_END(suffix)                                                      \
        }                                                                                   \
        return 0;                                                                           \
    }
GELU_BWD_LOOPS(f16, float, f32, 0)
GELU_BWD_LOOPS(bf16, float, f32, 0)
GELU_BWD_LOOPS(f32, float, f32, 1)
GELU_BWD_LOOPS(f64, double, f64, 1)

static const elementwise_loop gelu_backward_exact_loops[PITH_NUM_DTYPES] = {
    EW_TAGS_FLOAT(EW_LOOP_ENTRY, gelu_backward_exact)};
static const elementwise_loop gelu_backward_tanh_loops[PITH_NUM_DTYPES] = {
    EW_TAGS_FLOAT(EW_LOOP_ENTRY, gelu_backward_tanh)};
static const binary_def gelu_backward_exact_def = {
    "gelu_backward", RULE_PROMOTED, gelu_backward_exact_loops, NULL, NULL, false, false, NULL};
static const binary_def gelu_backward_tanh_def = {
    "gelu_backward", RULE_PROMOTED, gelu_backward_tanh_loops, NULL, NULL, false, false, NULL};

pith_status gelu_backward_kernel(pith_keyset ks, pith_value *ret, const pith_tensor *grad_output,
                                 const pith_tensor *self, const char *approximate,
                                 pith_device device)
{
    const binary_def *def = NULL;
    if (approximate && strcmp(approximate, "none") == 0)
        def = &gelu_backward_exact_def;
    else if (approximate && strcmp(approximate, "tanh") == 0)
        def = &gelu_backward_tanh_def;
    else
        return pith_set_error(PITH_ERR_VALUE,
                              "gelu_backward: approximate argument must be either none or "
                              "tanh, not '%s'",
                              approximate ? approximate : "(null)");
    return binary_run(def, ret, grad_output, self, scalar_from_int(1), NULL,
                      ELEMENTWISE_FUNCTIONAL, device == PITH_META);
}
