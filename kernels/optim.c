/* optim.c — the optimizers' multi-tensor update kernels, _fused_sgd_ ... _fused_radam_ of
 * the op file: the checks of their lists, the scalars each step computes in double, and the
 * driver that runs one fused loop (kernels/optim_loops.h) over every element of a call.
 * pith.optim (Python) and pith_optim_* (include/pith/optim.h) call them.
 *
 * Note [The multi-tensor optimizer kernels]
 * One call updates every parameter of its lists: list i of every list argument belongs to
 * parameter i, and each state tensor has its parameter's dtype, shape and device (strides
 * may differ). The call
 *  - checks everything before it writes anything (list lengths, dtypes, shapes, devices,
 *    the 0-dim floating steps, written tensors without internal overlap), so a refused call
 *    leaves every tensor as it was;
 *  - does nothing at all when found_inf is 1 (torch's fused kernels' rule);
 *  - increments every state step by 1 in the step's own dtype (torch's Python does it
 *    before it calls its fused kernels; ours does it inside, so that one call is the whole
 *    step), then computes each parameter's scalars (bias corrections, step sizes) in double
 *    from the new value exactly as torch's Python does;
 *  - streams each element of the parameter, its gradient and its state once: a fused loop
 *    per optimizer and dtype reads them, does the formula and writes the results;
 *  - splits the total number of elements of all parameters evenly across the threads (one
 *    region per call, Note [Thread count and grain size], core/parallel.h), so that 100
 *    small tensors and one large one are split alike, and each thread walks the parameters
 *    its range covers. A parameter whose tensors are all row-major contiguous is one run of
 *    the loop; otherwise the driver gathers blocks of its elements into dense buffers, runs
 *    the same loop on them and scatters what the loop wrote (the same arithmetic, so the
 *    same bits).
 * The grads are never written. The kernels run under no autograd: they have no autograd
 * kernel (their derivatives entry is not_differentiable), and bump the version counter of
 * every tensor they write. */
#include <math.h>
#include <omp.h>
#include <stdlib.h>
#include <string.h>

#include "core/dtype.h"
#include "core/parallel.h"
#include "kernels/elementwise.h"
#include "kernels/ops_internal.h"

/* Note [The optimizer kernels round as pith's ops]
 * The kernels give the same bits as torch 2.13's `_single_tensor_<opt>` formula written
 * with pith's ops (tests/python/test_optim_kernels.py holds those formulas and compares).
 * So each loop does the formula's operations in the formula's order, in the parameter's
 * dtype T, rounding after each one as an op's result is rounded:
 *  - a Python number given to an op (a multiplier, an alpha, a divisor) is rounded to T
 *    first, as pith's ops round a wrapped number or an alpha (kernels/elementwise_arith.c);
 *    numbers that torch's Python computes (1 - beta2, -lr, step_size) are computed in
 *    double here, then rounded;
 *  - addcmul_(t1, t2, value=v) is self + (v * t1) * t2, and addcdiv_(t1, t2, value=v) is
 *    self + (v * t1) / t2, torch's CPU order (pith has neither op, so the formulas write
 *    these with mul, div and add);
 *  - no a * b + c is contracted into a fused multiply-add, which rounds once instead of
 *    twice: this file is compiled with -ffp-contract=off (CMakeLists.txt), and pith's
 *    elementwise loops are built for the baseline instruction set, which has no FMA.
 * sqrt is IEEE's correctly rounded one in both. */

/* Note [lerp as pith's ops]
 * pith has no lerp, so the formulas write torch's `start.lerp_(end, w)` (for a number w)
 * as torch's CPU kernel defines it, branching on w once per call:
 *   |w| < 0.5:  start + w * (end - start)        add(start, sub(end, start), alpha=w)
 *   otherwise:  end - (1 - w) * (end - start)    sub(end, sub(end, start), alpha=1 - w)
 * with 1 - w computed in double and then rounded, as an alpha is. torch's own vectorised
 * lerp fuses the multiply-add, so it may differ from this in the last bit. */

/* What every optimizer's loop reads (grad_prepare in optim_loops.h). */
typedef struct {
    double lr, weight_decay, grad_scale;
    bool scaled, maximize, decoupled;
} optim_common;

/* Note [Specialised loops]
 * A loop whose options are tested per element does not vectorise: GCC unswitches one or two
 * loop-invariant tests, not six. So the loops of the hot optimizers (SGD, Adam, AdamW) are
 * always-inline bodies that take their options as arguments, and the loop function calls
 * them with constants for the common cases (a plain call: no grad_scale, no maximize), each
 * call a branch-free copy; every other case runs the same body with the options as
 * variables. Both copies do the same operations, so they give the same bits. The file is
 * compiled with -fno-math-errno and -fno-trapping-math (CMakeLists.txt), without which
 * sqrt's errno and maximum's compares keep a loop scalar; neither changes a value. */
static inline bool optim_common_plain(const optim_common *c)
{
    return !c->scaled && !c->maximize;
}

/* One lerp_(end, w) of the formula: See Note [lerp as pith's ops]. */
typedef struct {
    bool small;
    double weight; /* w when small, else 1 - w */
} lerp_weight;

static lerp_weight lerp_weight_of(double w)
{
    return fabs(w) < 0.5 ? (lerp_weight){true, w} : (lerp_weight){false, 1.0 - w};
}

typedef struct {
    optim_common common;
    double momentum, dampening;
    bool nesterov, is_first_step;
} sgd_scalars;

typedef struct {
    optim_common common;
    lerp_weight lerp;
    double beta2, eps, decay_factor, bias_correction2_sqrt, step_size;
    bool amsgrad;
} adam_scalars;

typedef struct {
    optim_common common;
    double eps, clr;
} adagrad_scalars;

typedef struct {
    optim_common common;
    lerp_weight lerp;
    double alpha, eps, momentum;
    bool centered;
} rmsprop_scalars;

typedef struct {
    optim_common common;
    lerp_weight lerp;
    double beta2, eps, clr;
} adamax_scalars;

typedef struct {
    optim_common common;
    lerp_weight lerp;
    double beta2, eps, decay_factor, bias_correction2, grad_coefficient, exp_avg_coefficient;
} nadam_scalars;

typedef struct {
    optim_common common;
    double rho, eps;
} adadelta_scalars;

typedef struct {
    optim_common common;
    lerp_weight lerp;
    double beta2, eps, decay_factor, bias_correction1, bias_correction2_sqrt, rect;
    bool rectified;
} radam_scalars;

#define OPTIM_T float
#define OPTIM_SUFFIX f32
#include "kernels/optim_loops.h"
#undef OPTIM_T
#undef OPTIM_SUFFIX
#define OPTIM_T double
#define OPTIM_SUFFIX f64
#include "kernels/optim_loops.h"
#undef OPTIM_T
#undef OPTIM_SUFFIX

/* ---- one call: its lists, checked ---------------------------------------------------- */

enum { OPTIM_MAX_COLUMNS = 5, OPTIM_BLOCK = 256 };

typedef void (*optim_loop)(const void *scalars, int64_t n, char *const *ptr);

/* A call's tensors as columns: 0 the parameters, 1 the gradients, then the elementwise
 * state in the schema's order. A column that the options leave unused has data NULL. */
typedef struct {
    const char *op;
    size_t n;
    int ncolumns;
    const pith_tensor *const *columns[OPTIM_MAX_COLUMNS];
    const char *names[OPTIM_MAX_COLUMNS];
    optim_loop loop_f32, loop_f64;
} optim_call;

static pith_status list_length_check(const char *op, const char *name, pith_tensor_list list,
                                     size_t n, bool used)
{
    if (list.n == n || (!used && list.n == 0))
        return PITH_OK;
    return pith_set_error(PITH_ERR_RUNTIME,
                          "%s: %s has %zu tensors, but self has %zu (every list gives one per "
                          "parameter%s)", op, name, list.n, n,
                          used ? "" : ", or none when the options do not use it");
}

/* Adds column `name` of the call; unused (the options do not read it) leaves it NULL. */
static pith_status call_column(optim_call *call, const char *name, pith_tensor_list list,
                               bool used)
{
    if (list_length_check(call->op, name, list, call->n, used) != PITH_OK)
        return pith_last_status();
    call->names[call->ncolumns] = name;
    call->columns[call->ncolumns++] = used ? list.data : NULL;
    return PITH_OK;
}

static pith_status param_check(const char *op, size_t i, const pith_tensor *p)
{
    if (p->dtype != PITH_FLOAT32 && p->dtype != PITH_FLOAT64)
        return pith_set_error(
            PITH_ERR_NOT_IMPLEMENTED,
            "%s: self[%zu] has dtype %s; the optimizer kernels update float32 and float64 "
            "parameters only", op, i, pith_dtype_name(p->dtype));
    if (p->device != PITH_CPU && p->device != PITH_META)
        return pith_set_error(PITH_ERR_NOT_IMPLEMENTED, "%s: self[%zu] is not on the CPU",
                              op, i);
    return PITH_OK;
}

/* A gradient or state tensor of parameter i must match it in dtype, shape and device. */
static pith_status like_param_check(const char *op, const char *name, size_t i,
                                    const pith_tensor *t, const pith_tensor *p)
{
    if (t->dtype != p->dtype)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "%s: %s[%zu] has dtype %s, but its parameter self[%zu] has %s",
                              op, name, i, pith_dtype_name(t->dtype), i,
                              pith_dtype_name(p->dtype));
    if (t->device != p->device)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "%s: %s[%zu] is on another device than its parameter self[%zu]",
                              op, name, i, i);
    if (!shape_equal(t->ndim, t->sizes, p->ndim, p->sizes)) {
        char a[128], b[128];
        return pith_set_error(PITH_ERR_RUNTIME,
                              "%s: %s[%zu] has shape %s, but its parameter self[%zu] has %s", op,
                              name, i, shape_format(t->ndim, t->sizes, a, sizeof a), i,
                              shape_format(p->ndim, p->sizes, b, sizeof b));
    }
    return PITH_OK;
}

/* A tensor of one value per parameter (state_steps, mu_products): 0-dim, float32 or
 * float64, on the parameter's device. */
static pith_status scalar_state_check(const char *op, const char *name, size_t i,
                                      const pith_tensor *t, const pith_tensor *p)
{
    if (t->ndim != 0 || (t->dtype != PITH_FLOAT32 && t->dtype != PITH_FLOAT64))
        return pith_set_error(PITH_ERR_RUNTIME,
                              "%s: %s[%zu] must be a 0-dim float32 or float64 tensor, got a "
                              "%d-dim %s tensor", op, name, i, t->ndim,
                              pith_dtype_name(t->dtype));
    if (t->device != p->device)
        return pith_set_error(PITH_ERR_RUNTIME,
                              "%s: %s[%zu] is on another device than its parameter self[%zu]",
                              op, name, i, i);
    return PITH_OK;
}

/* Written tensors: See Note [The multi-tensor optimizer kernels]. */
static pith_status call_check(const optim_call *call)
{
    for (size_t i = 0; i < call->n; i++) {
        const pith_tensor *p = call->columns[0][i];
        if (param_check(call->op, i, p) != PITH_OK)
            return pith_last_status();
        if (p->device != call->columns[0][0]->device)
            return pith_set_error(PITH_ERR_RUNTIME,
                                  "%s: self[%zu] is on another device than self[0]: the "
                                  "parameters of one call share their device", call->op, i);
        for (int k = 1; k < call->ncolumns; k++) {
            if (!call->columns[k])
                continue;
            const pith_tensor *t = call->columns[k][i];
            if (like_param_check(call->op, call->names[k], i, t, p) != PITH_OK)
                return pith_last_status();
            if (k != 1 && elementwise_check_no_overlap(call->op, t) != PITH_OK)
                return pith_last_status();
        }
        if (elementwise_check_no_overlap(call->op, p) != PITH_OK)
            return pith_last_status();
    }
    return PITH_OK;
}

static pith_status scalar_list_check(const optim_call *call, const char *name,
                                     pith_tensor_list list)
{
    if (list_length_check(call->op, name, list, call->n, true) != PITH_OK)
        return pith_last_status();
    for (size_t i = 0; i < call->n; i++)
        if (scalar_state_check(call->op, name, i, list.data[i], call->columns[0][i]) != PITH_OK)
            return pith_last_status();
    return PITH_OK;
}

static bool on_meta(const optim_call *call)
{
    return call->n > 0 && call->columns[0][0]->device == PITH_META;
}

/* grad_scale and found_inf: one floating value each, or NULL; on the CPU unless the call
 * is on Meta (their value is read). */
static pith_status amp_tensor_check(const optim_call *call, const char *name,
                                    const pith_tensor *t)
{
    if (t && (t->numel != 1 || !dtype_is_floating(t->dtype)))
        return pith_set_error(PITH_ERR_RUNTIME,
                              "%s: %s must be a floating tensor of one element, got %lld "
                              "elements of %s", call->op, name, (long long)t->numel,
                              pith_dtype_name(t->dtype));
    if (t && t->device != PITH_CPU && !on_meta(call))
        return pith_set_error(PITH_ERR_RUNTIME, "%s: %s must be on the CPU", call->op, name);
    return PITH_OK;
}

/* ---- scalar state -------------------------------------------------------------------- */

static double scalar_load(const pith_tensor *t)
{
    return dtype_load_double(t->dtype, tensor_data(t));
}

/* step_t += 1 in the step's dtype, then the new value as torch's _get_value reads it. */
static double step_increment(const pith_tensor *step)
{
    char *data = tensor_data(step);
    double value;
    if (step->dtype == PITH_FLOAT32) {
        float *f = (float *)data;
        *f = *f + 1.0f;
        value = *f;
    } else {
        double *d = (double *)data;
        *d = *d + 1.0;
        value = *d;
    }
    tensor_bump_version(step);
    return value;
}

/* ---- the driver ---------------------------------------------------------------------- */

/* The element offsets (in elements) of t's row-major elements [start, start + count). */
static void element_offsets(const pith_tensor *t, int64_t start, int64_t count, int64_t *out)
{
    int64_t index[PITH_MAX_DIMS], offset = 0, rest = start;
    for (int d = t->ndim - 1; d >= 0; d--) {
        index[d] = t->sizes[d] ? rest % t->sizes[d] : 0;
        rest = t->sizes[d] ? rest / t->sizes[d] : 0;
        offset += index[d] * t->strides[d];
    }
    for (int64_t e = 0; e < count; e++) {
        out[e] = offset;
        for (int d = t->ndim - 1; d >= 0; d--) {
            offset += t->strides[d];
            if (++index[d] < t->sizes[d])
                break;
            offset -= index[d] * t->strides[d];
            index[d] = 0;
        }
    }
}

/* Elements [a, b) of parameter i, through dense buffers: See Note [The multi-tensor
 * optimizer kernels]. */
static void segment_run_strided(const optim_call *call, size_t i, int64_t a, int64_t b,
                                optim_loop loop, const void *scalars)
{
    size_t item = dtype_itemsize(call->columns[0][i]->dtype);
    _Alignas(64) double buffers[OPTIM_MAX_COLUMNS][OPTIM_BLOCK];
    int64_t offsets[OPTIM_BLOCK];
    char *ptr[OPTIM_MAX_COLUMNS] = {0};
    for (int64_t start = a; start < b; start += OPTIM_BLOCK) {
        int64_t count = b - start < OPTIM_BLOCK ? b - start : OPTIM_BLOCK;
        for (int k = 0; k < call->ncolumns; k++) {
            if (!call->columns[k])
                continue;
            const pith_tensor *t = call->columns[k][i];
            const char *data = tensor_data(t);
            ptr[k] = (char *)buffers[k];
            element_offsets(t, start, count, offsets);
            for (int64_t e = 0; e < count; e++)
                memcpy(ptr[k] + e * item, data + offsets[e] * (int64_t)item, item);
        }
        loop(scalars, count, ptr);
        for (int k = 0; k < call->ncolumns; k++) {
            if (!call->columns[k] || k == 1)
                continue;
            const pith_tensor *t = call->columns[k][i];
            char *data = tensor_data(t);
            element_offsets(t, start, count, offsets);
            for (int64_t e = 0; e < count; e++)
                memcpy(data + offsets[e] * (int64_t)item, ptr[k] + e * item, item);
        }
    }
}

static void segment_run(const optim_call *call, size_t i, int64_t a, int64_t b,
                        const void *scalars)
{
    const pith_tensor *p = call->columns[0][i];
    optim_loop loop = p->dtype == PITH_FLOAT32 ? call->loop_f32 : call->loop_f64;
    size_t item = dtype_itemsize(p->dtype);
    char *ptr[OPTIM_MAX_COLUMNS] = {0};
    for (int k = 0; k < call->ncolumns; k++) {
        if (!call->columns[k])
            continue;
        const pith_tensor *t = call->columns[k][i];
        if (!t->contiguous) {
            segment_run_strided(call, i, a, b, loop, scalars);
            return;
        }
        ptr[k] = tensor_data(t) + a * (int64_t)item;
    }
    loop(scalars, b - a, ptr);
}

/* Runs the call's loop over every element of every parameter, with `scalars` an array of
 * one struct of `scalar_size` bytes per parameter. */
static void call_run(const optim_call *call, const void *scalars, size_t scalar_size)
{
    int64_t total = 0;
    for (size_t i = 0; i < call->n; i++)
        total += call->columns[0][i]->numel;
    int nthreads = parallel_threads_for(total);
    PITH_PARALLEL_REGION(nthreads, {
        int64_t nt = omp_get_num_threads(), tid = omp_get_thread_num();
        int64_t lo = total / nt * tid + (tid < total % nt ? tid : total % nt);
        int64_t hi = lo + total / nt + (tid < total % nt ? 1 : 0);
        int64_t base = 0;
        for (size_t i = 0; i < call->n && base < hi; i++) {
            int64_t numel = call->columns[0][i]->numel;
            int64_t a = lo > base ? lo - base : 0, b = hi - base < numel ? hi - base : numel;
            if (a < b)
                segment_run(call, i, a, b, (const char *)scalars + i * scalar_size);
            base += numel;
        }
    });
    for (size_t i = 0; i < call->n; i++)
        for (int k = 0; k < call->ncolumns; k++)
            if (call->columns[k] && k != 1)
                tensor_bump_version(call->columns[k][i]);
}

/* The common part of every call's scalars; found_inf == 1 sets *skip. */
static optim_common common_of(double lr, double weight_decay, bool maximize, bool decoupled,
                              const pith_tensor *grad_scale)
{
    optim_common c = {lr, weight_decay, 1.0, false, maximize, decoupled};
    if (grad_scale) {
        c.scaled = true;
        c.grad_scale = scalar_load(grad_scale);
    }
    return c;
}

static bool found_inf_set(const pith_tensor *found_inf)
{
    return found_inf && scalar_load(found_inf) == 1.0;
}

/* Allocates the per-parameter scalars (one struct each; at least one byte). */
static void *scalars_new(const optim_call *call, size_t size)
{
    void *s = calloc(call->n ? call->n : 1, size);
    if (!s)
        pith_set_error(PITH_ERR_NOMEM, "%s: out of memory", call->op);
    return s;
}

static pith_status call_begin(optim_call *call, const char *op, pith_tensor_list self,
                              pith_tensor_list grads, optim_loop f32, optim_loop f64)
{
    *call = (optim_call){.op = op, .n = self.n, .loop_f32 = f32, .loop_f64 = f64};
    call->names[0] = "self";
    call->columns[0] = self.data;
    call->ncolumns = 1;
    return call_column(call, "grads", grads, true);
}

/* ---- SGD ----------------------------------------------------------------------------- */

static pith_status sgd_impl(pith_tensor_list self, pith_tensor_list grads,
                            pith_tensor_list momentum_buffer_list, double weight_decay,
                            double momentum, double lr, double dampening, bool nesterov,
                            bool maximize, bool is_first_step, const pith_tensor *grad_scale,
                            const pith_tensor *found_inf)
{
    optim_call call;
    if (call_begin(&call, "_fused_sgd_", self, grads, sgd_loop_f32, sgd_loop_f64) != PITH_OK ||
        call_column(&call, "momentum_buffer_list", momentum_buffer_list, momentum != 0) !=
            PITH_OK ||
        call_check(&call) != PITH_OK ||
        amp_tensor_check(&call, "grad_scale", grad_scale) != PITH_OK ||
        amp_tensor_check(&call, "found_inf", found_inf) != PITH_OK)
        return pith_last_status();
    if (on_meta(&call) || found_inf_set(found_inf))
        return PITH_OK;
    sgd_scalars s = {common_of(lr, weight_decay, maximize, false, grad_scale), momentum,
                     dampening, nesterov, is_first_step};
    sgd_scalars *all = scalars_new(&call, sizeof s);
    if (!all)
        return pith_last_status();
    for (size_t i = 0; i < call.n; i++)
        all[i] = s;
    call_run(&call, all, sizeof s);
    free(all);
    return PITH_OK;
}

/* The CPU and Meta kernels (ops/generated/device_forwarders.c): on Meta only the checks
 * run. */
pith_status _fused_sgd__kernel(pith_keyset ks, pith_value *ret, pith_tensor_list self,
                               pith_tensor_list grads, pith_tensor_list momentum_buffer_list,
                               double weight_decay, double momentum, double lr,
                               double dampening, bool nesterov, bool maximize,
                               bool is_first_step, const pith_tensor *grad_scale,
                               const pith_tensor *found_inf, pith_device kernel_device)
{
    return sgd_impl(self, grads, momentum_buffer_list, weight_decay, momentum, lr, dampening,
                    nesterov, maximize, is_first_step, grad_scale, found_inf);
}

/* ---- Adam, AdamW --------------------------------------------------------------------- */

typedef struct {
    double lr, beta1, beta2, weight_decay, eps;
    bool amsgrad, maximize, decoupled;
} adam_options;

static pith_status adam_impl(const char *op, pith_tensor_list self, pith_tensor_list grads,
                             pith_tensor_list exp_avgs, pith_tensor_list exp_avg_sqs,
                             pith_tensor_list max_exp_avg_sqs, pith_tensor_list state_steps,
                             const adam_options *o, const pith_tensor *grad_scale,
                             const pith_tensor *found_inf)
{
    optim_call call;
    if (call_begin(&call, op, self, grads, adam_loop_f32, adam_loop_f64) != PITH_OK ||
        call_column(&call, "exp_avgs", exp_avgs, true) != PITH_OK ||
        call_column(&call, "exp_avg_sqs", exp_avg_sqs, true) != PITH_OK ||
        call_column(&call, "max_exp_avg_sqs", max_exp_avg_sqs, o->amsgrad) != PITH_OK ||
        call_check(&call) != PITH_OK ||
        scalar_list_check(&call, "state_steps", state_steps) != PITH_OK ||
        amp_tensor_check(&call, "grad_scale", grad_scale) != PITH_OK ||
        amp_tensor_check(&call, "found_inf", found_inf) != PITH_OK)
        return pith_last_status();
    if (on_meta(&call) || found_inf_set(found_inf))
        return PITH_OK;
    adam_scalars *all = scalars_new(&call, sizeof *all);
    if (!all)
        return pith_last_status();
    for (size_t i = 0; i < call.n; i++) {
        double step = step_increment(state_steps.data[i]);
        double bias_correction1 = 1 - pow(o->beta1, step);
        double bias_correction2 = 1 - pow(o->beta2, step);
        all[i] = (adam_scalars){
            .common = common_of(o->lr, o->weight_decay, o->maximize, o->decoupled, grad_scale),
            .lerp = lerp_weight_of(1 - o->beta1),
            .beta2 = o->beta2,
            .eps = o->eps,
            .decay_factor = 1 - o->lr * o->weight_decay,
            .bias_correction2_sqrt = pow(bias_correction2, 0.5),
            .step_size = o->lr / bias_correction1,
            .amsgrad = o->amsgrad,
        };
    }
    call_run(&call, all, sizeof *all);
    free(all);
    return PITH_OK;
}

pith_status _fused_adam__kernel(pith_keyset ks, pith_value *ret, pith_tensor_list self,
                                pith_tensor_list grads, pith_tensor_list exp_avgs,
                                pith_tensor_list exp_avg_sqs, pith_tensor_list max_exp_avg_sqs,
                                pith_tensor_list state_steps, double lr, double beta1,
                                double beta2, double weight_decay, double eps, bool amsgrad,
                                bool maximize, const pith_tensor *grad_scale,
                                const pith_tensor *found_inf, pith_device kernel_device)
{
    adam_options o = {lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, false};
    return adam_impl("_fused_adam_", self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                     state_steps, &o, grad_scale, found_inf);
}

pith_status _fused_adamw__kernel(pith_keyset ks, pith_value *ret, pith_tensor_list self,
                                 pith_tensor_list grads, pith_tensor_list exp_avgs,
                                 pith_tensor_list exp_avg_sqs, pith_tensor_list max_exp_avg_sqs,
                                 pith_tensor_list state_steps, double lr, double beta1,
                                 double beta2, double weight_decay, double eps, bool amsgrad,
                                 bool maximize, const pith_tensor *grad_scale,
                                 const pith_tensor *found_inf, pith_device kernel_device)
{
    adam_options o = {lr, beta1, beta2, weight_decay, eps, amsgrad, maximize, true};
    return adam_impl("_fused_adamw_", self, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs,
                     state_steps, &o, grad_scale, found_inf);
}

/* ---- Adagrad ------------------------------------------------------------------------- */

static pith_status adagrad_impl(pith_tensor_list self, pith_tensor_list grads,
                                pith_tensor_list state_sums, pith_tensor_list state_steps,
                                double lr, double lr_decay, double weight_decay, double eps,
                                bool maximize, const pith_tensor *grad_scale,
                                const pith_tensor *found_inf)
{
    optim_call call;
    if (call_begin(&call, "_fused_adagrad_", self, grads, adagrad_loop_f32,
                   adagrad_loop_f64) != PITH_OK ||
        call_column(&call, "state_sums", state_sums, true) != PITH_OK ||
        call_check(&call) != PITH_OK ||
        scalar_list_check(&call, "state_steps", state_steps) != PITH_OK ||
        amp_tensor_check(&call, "grad_scale", grad_scale) != PITH_OK ||
        amp_tensor_check(&call, "found_inf", found_inf) != PITH_OK)
        return pith_last_status();
    if (on_meta(&call) || found_inf_set(found_inf))
        return PITH_OK;
    adagrad_scalars *all = scalars_new(&call, sizeof *all);
    if (!all)
        return pith_last_status();
    for (size_t i = 0; i < call.n; i++) {
        double step = step_increment(state_steps.data[i]);
        all[i] = (adagrad_scalars){
            .common = common_of(lr, weight_decay, maximize, false, grad_scale),
            .eps = eps,
            .clr = lr / (1 + (step - 1) * lr_decay),
        };
    }
    call_run(&call, all, sizeof *all);
    free(all);
    return PITH_OK;
}

pith_status _fused_adagrad__kernel(pith_keyset ks, pith_value *ret, pith_tensor_list self,
                                   pith_tensor_list grads, pith_tensor_list state_sums,
                                   pith_tensor_list state_steps, double lr, double lr_decay,
                                   double weight_decay, double eps, bool maximize,
                                   const pith_tensor *grad_scale, const pith_tensor *found_inf,
                                   pith_device kernel_device)
{
    return adagrad_impl(self, grads, state_sums, state_steps, lr, lr_decay, weight_decay, eps,
                        maximize, grad_scale, found_inf);
}

/* ---- RMSprop ------------------------------------------------------------------------- */

static pith_status rmsprop_impl(pith_tensor_list self, pith_tensor_list grads,
                                pith_tensor_list square_avgs, pith_tensor_list grad_avgs,
                                pith_tensor_list momentum_buffer_list,
                                pith_tensor_list state_steps, const rmsprop_scalars *s)
{
    optim_call call;
    if (call_begin(&call, "_fused_rmsprop_", self, grads, rmsprop_loop_f32,
                   rmsprop_loop_f64) != PITH_OK ||
        call_column(&call, "square_avgs", square_avgs, true) != PITH_OK ||
        call_column(&call, "grad_avgs", grad_avgs, s->centered) != PITH_OK ||
        call_column(&call, "momentum_buffer_list", momentum_buffer_list, s->momentum > 0) !=
            PITH_OK ||
        call_check(&call) != PITH_OK ||
        scalar_list_check(&call, "state_steps", state_steps) != PITH_OK)
        return pith_last_status();
    if (on_meta(&call))
        return PITH_OK;
    rmsprop_scalars *all = scalars_new(&call, sizeof *all);
    if (!all)
        return pith_last_status();
    for (size_t i = 0; i < call.n; i++) {
        step_increment(state_steps.data[i]); /* the formula reads no step */
        all[i] = *s;
    }
    call_run(&call, all, sizeof *all);
    free(all);
    return PITH_OK;
}

pith_status _fused_rmsprop__kernel(pith_keyset ks, pith_value *ret, pith_tensor_list self,
                                   pith_tensor_list grads, pith_tensor_list square_avgs,
                                   pith_tensor_list grad_avgs,
                                   pith_tensor_list momentum_buffer_list,
                                   pith_tensor_list state_steps, double lr, double alpha,
                                   double eps, double weight_decay, double momentum,
                                   bool centered, bool maximize, pith_device kernel_device)
{
    rmsprop_scalars s = {common_of(lr, weight_decay, maximize, false, NULL),
                         lerp_weight_of(1 - alpha), alpha, eps, momentum, centered};
    return rmsprop_impl(self, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
                        &s);
}

/* ---- Adamax -------------------------------------------------------------------------- */

static pith_status adamax_impl(pith_tensor_list self, pith_tensor_list grads,
                               pith_tensor_list exp_avgs, pith_tensor_list exp_infs,
                               pith_tensor_list state_steps, double lr, double beta1,
                               double beta2, double eps, double weight_decay, bool maximize)
{
    optim_call call;
    if (call_begin(&call, "_fused_adamax_", self, grads, adamax_loop_f32, adamax_loop_f64) !=
            PITH_OK ||
        call_column(&call, "exp_avgs", exp_avgs, true) != PITH_OK ||
        call_column(&call, "exp_infs", exp_infs, true) != PITH_OK ||
        call_check(&call) != PITH_OK ||
        scalar_list_check(&call, "state_steps", state_steps) != PITH_OK)
        return pith_last_status();
    if (on_meta(&call))
        return PITH_OK;
    adamax_scalars *all = scalars_new(&call, sizeof *all);
    if (!all)
        return pith_last_status();
    for (size_t i = 0; i < call.n; i++) {
        double step = step_increment(state_steps.data[i]);
        all[i] = (adamax_scalars){
            .common = common_of(lr, weight_decay, maximize, false, NULL),
            .lerp = lerp_weight_of(1 - beta1),
            .beta2 = beta2,
            .eps = eps,
            .clr = lr / (1 - pow(beta1, step)),
        };
    }
    call_run(&call, all, sizeof *all);
    free(all);
    return PITH_OK;
}

pith_status _fused_adamax__kernel(pith_keyset ks, pith_value *ret, pith_tensor_list self,
                                  pith_tensor_list grads, pith_tensor_list exp_avgs,
                                  pith_tensor_list exp_infs, pith_tensor_list state_steps,
                                  double lr, double beta1, double beta2, double eps,
                                  double weight_decay, bool maximize, pith_device kernel_device)
{
    return adamax_impl(self, grads, exp_avgs, exp_infs, state_steps, lr, beta1, beta2, eps,
                       weight_decay, maximize);
}

/* ---- NAdam --------------------------------------------------------------------------- */

typedef struct {
    double lr, beta1, beta2, weight_decay, eps, momentum_decay;
    bool decoupled, maximize;
} nadam_options;

/* mu_product *= mu in the product's dtype (a 0-dim tensor times a Python number), and the
 * new value as _get_value reads it. */
static double mu_product_update(const pith_tensor *mu_product, double mu)
{
    char *data = tensor_data(mu_product);
    double value;
    if (mu_product->dtype == PITH_FLOAT32) {
        float *f = (float *)data;
        *f = *f * (float)mu;
        value = *f;
    } else {
        double *d = (double *)data;
        *d = *d * mu;
        value = *d;
    }
    tensor_bump_version(mu_product);
    return value;
}

static pith_status nadam_impl(pith_tensor_list self, pith_tensor_list grads,
                              pith_tensor_list exp_avgs, pith_tensor_list exp_avg_sqs,
                              pith_tensor_list mu_products, pith_tensor_list state_steps,
                              const nadam_options *o)
{
    optim_call call;
    if (call_begin(&call, "_fused_nadam_", self, grads, nadam_loop_f32, nadam_loop_f64) !=
            PITH_OK ||
        call_column(&call, "exp_avgs", exp_avgs, true) != PITH_OK ||
        call_column(&call, "exp_avg_sqs", exp_avg_sqs, true) != PITH_OK ||
        call_check(&call) != PITH_OK ||
        scalar_list_check(&call, "mu_products", mu_products) != PITH_OK ||
        scalar_list_check(&call, "state_steps", state_steps) != PITH_OK)
        return pith_last_status();
    if (on_meta(&call))
        return PITH_OK;
    nadam_scalars *all = scalars_new(&call, sizeof *all);
    if (!all)
        return pith_last_status();
    for (size_t i = 0; i < call.n; i++) {
        double step = step_increment(state_steps.data[i]);
        double mu = o->beta1 * (1.0 - 0.5 * pow(0.96, step * o->momentum_decay));
        double mu_next = o->beta1 * (1.0 - 0.5 * pow(0.96, (step + 1) * o->momentum_decay));
        double mu_product = mu_product_update(mu_products.data[i], mu);
        double mu_product_next = mu_product * mu_next;
        all[i] = (nadam_scalars){
            .common = common_of(o->lr, o->weight_decay, o->maximize, o->decoupled, NULL),
            .lerp = lerp_weight_of(1 - o->beta1),
            .beta2 = o->beta2,
            .eps = o->eps,
            .decay_factor = 1 - o->lr * o->weight_decay,
            .bias_correction2 = 1 - pow(o->beta2, step),
            .grad_coefficient = -o->lr * (1.0 - mu) / (1.0 - mu_product),
            .exp_avg_coefficient = (-o->lr * mu_next) / (1.0 - mu_product_next),
        };
    }
    call_run(&call, all, sizeof *all);
    free(all);
    return PITH_OK;
}

pith_status _fused_nadam__kernel(pith_keyset ks, pith_value *ret, pith_tensor_list self,
                                 pith_tensor_list grads, pith_tensor_list exp_avgs,
                                 pith_tensor_list exp_avg_sqs, pith_tensor_list mu_products,
                                 pith_tensor_list state_steps, double lr, double beta1,
                                 double beta2, double weight_decay, double eps,
                                 double momentum_decay, bool decoupled_weight_decay,
                                 bool maximize, pith_device kernel_device)
{
    nadam_options o = {lr, beta1, beta2, weight_decay, eps, momentum_decay,
                       decoupled_weight_decay, maximize};
    return nadam_impl(self, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, &o);
}

/* ---- Adadelta ------------------------------------------------------------------------ */

static pith_status adadelta_impl(pith_tensor_list self, pith_tensor_list grads,
                                 pith_tensor_list square_avgs, pith_tensor_list acc_deltas,
                                 pith_tensor_list state_steps, const adadelta_scalars *s)
{
    optim_call call;
    if (call_begin(&call, "_fused_adadelta_", self, grads, adadelta_loop_f32,
                   adadelta_loop_f64) != PITH_OK ||
        call_column(&call, "square_avgs", square_avgs, true) != PITH_OK ||
        call_column(&call, "acc_deltas", acc_deltas, true) != PITH_OK ||
        call_check(&call) != PITH_OK ||
        scalar_list_check(&call, "state_steps", state_steps) != PITH_OK)
        return pith_last_status();
    if (on_meta(&call))
        return PITH_OK;
    adadelta_scalars *all = scalars_new(&call, sizeof *all);
    if (!all)
        return pith_last_status();
    for (size_t i = 0; i < call.n; i++) {
        step_increment(state_steps.data[i]); /* the formula reads no step */
        all[i] = *s;
    }
    call_run(&call, all, sizeof *all);
    free(all);
    return PITH_OK;
}

pith_status _fused_adadelta__kernel(pith_keyset ks, pith_value *ret, pith_tensor_list self,
                                    pith_tensor_list grads, pith_tensor_list square_avgs,
                                    pith_tensor_list acc_deltas, pith_tensor_list state_steps,
                                    double lr, double rho, double eps, double weight_decay,
                                    bool maximize, pith_device kernel_device)
{
    adadelta_scalars s = {common_of(lr, weight_decay, maximize, false, NULL), rho, eps};
    return adadelta_impl(self, grads, square_avgs, acc_deltas, state_steps, &s);
}

/* ---- RAdam --------------------------------------------------------------------------- */

typedef struct {
    double lr, beta1, beta2, weight_decay, eps;
    bool decoupled, maximize;
} radam_options;

static pith_status radam_impl(pith_tensor_list self, pith_tensor_list grads,
                              pith_tensor_list exp_avgs, pith_tensor_list exp_avg_sqs,
                              pith_tensor_list state_steps, const radam_options *o)
{
    optim_call call;
    if (call_begin(&call, "_fused_radam_", self, grads, radam_loop_f32, radam_loop_f64) !=
            PITH_OK ||
        call_column(&call, "exp_avgs", exp_avgs, true) != PITH_OK ||
        call_column(&call, "exp_avg_sqs", exp_avg_sqs, true) != PITH_OK ||
        call_check(&call) != PITH_OK ||
        scalar_list_check(&call, "state_steps", state_steps) != PITH_OK)
        return pith_last_status();
    if (on_meta(&call))
        return PITH_OK;
    radam_scalars *all = scalars_new(&call, sizeof *all);
    if (!all)
        return pith_last_status();
    for (size_t i = 0; i < call.n; i++) {
        double step = step_increment(state_steps.data[i]);
        double bias_correction2 = 1 - pow(o->beta2, step);
        double rho_inf = 2 / (1 - o->beta2) - 1;
        double rho_t = rho_inf - 2 * step * pow(o->beta2, step) / bias_correction2;
        double rect = pow((rho_t - 4) * (rho_t - 2) * rho_inf /
                              ((rho_inf - 4) * (rho_inf - 2) * rho_t),
                          0.5);
        all[i] = (radam_scalars){
            .common = common_of(o->lr, o->weight_decay, o->maximize, o->decoupled, NULL),
            .lerp = lerp_weight_of(1 - o->beta1),
            .beta2 = o->beta2,
            .eps = o->eps,
            .decay_factor = 1 - o->lr * o->weight_decay,
            .bias_correction1 = 1 - pow(o->beta1, step),
            .bias_correction2_sqrt = pow(bias_correction2, 0.5),
            .rect = rho_t > 5.0 ? rect : 0.0,
            .rectified = rho_t > 5.0,
        };
    }
    call_run(&call, all, sizeof *all);
    free(all);
    return PITH_OK;
}

pith_status _fused_radam__kernel(pith_keyset ks, pith_value *ret, pith_tensor_list self,
                                 pith_tensor_list grads, pith_tensor_list exp_avgs,
                                 pith_tensor_list exp_avg_sqs, pith_tensor_list state_steps,
                                 double lr, double beta1, double beta2, double weight_decay,
                                 double eps, bool decoupled_weight_decay, bool maximize,
                                 pith_device kernel_device)
{
    radam_options o = {lr, beta1, beta2, weight_decay, eps, decoupled_weight_decay, maximize};
    return radam_impl(self, grads, exp_avgs, exp_avg_sqs, state_steps, &o);
}
