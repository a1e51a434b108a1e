/* activations.c — nn.functional's activations with parameters, as ops with one loop each:
 * leaky_relu, elu and softplus. Floating dtypes only, as PyTorch's CPU kernels (an integer
 * or bool input is "not implemented"); float16 and bfloat16 compute in float, and the
 * parameters are read in the compute type, as PyTorch's opmath does; and log_sigmoid. */
#include <math.h>

#include "kernels/elementwise_loops.h"
#include "kernels/elementwise_ops.h"

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
