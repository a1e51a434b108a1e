/* c_api_optim.c — the public C functions of the optimizer kernels (pith/optim.h), written by
 * hand rather than from c_api tables: an op table's public function returns what its
 * overload returns, and these overloads return nothing (`-> ()`), which no result kind of
 * the generator covers; and they take their options as a struct, with NULL for an unused
 * array. Each checks its pointers and calls the op through the dispatcher
 * (pith_call__fused_<name>_), so that a tensor subclass or mode sees the call. */
#include "ops/c_api_support.h"
#include "pith/optim.h"

/* An array of n tensors, or the empty list for NULL (an array the options do not use; a
 * needed one that is NULL fails the kernel's length check, which names it). */
static pith_tensor_list optim_list(pith_tensor *const *tensors, size_t n)
{
    return tensors ? tensors_list((const pith_tensor *const *)tensors, n)
                   : (pith_tensor_list){NULL, 0};
}

static bool optim_pointers_check(const char *fn, const void *params, const void *grads,
                                 const void *options, size_t n)
{
    return pointer_check(fn, "params", params, n) && pointer_check(fn, "grads", grads, n) &&
           pointer_check(fn, "options", options, 1);
}

pith_status pith_optim_sgd(pith_tensor *const *params, const pith_tensor *const *grads,
                           pith_tensor *const *momentum_buffers, size_t n,
                           bool is_first_step, const pith_sgd_options *options)
{
    if (!optim_pointers_check("pith_optim_sgd", params, grads, options, n))
        return pith_last_status();
    pith_value ret[1];
    const pith_sgd_options *o = options;
    return pith_call__fused_sgd_(ret, optim_list(params, n), tensors_list(grads, n),
                                 optim_list(momentum_buffers, n), o->weight_decay, o->momentum,
                                 o->lr, o->dampening, o->nesterov, o->maximize, is_first_step,
                                 o->grad_scale, o->found_inf);
}

pith_status pith_optim_adam(pith_tensor *const *params,
                            const pith_tensor *const *grads,
                            pith_tensor *const *exp_avgs,
                            pith_tensor *const *exp_avg_sqs,
                            pith_tensor *const *max_exp_avg_sqs,
                            pith_tensor *const *steps, size_t n,
                            const pith_adam_options *options)
{
    if (!optim_pointers_check("pith_optim_adam", params, grads, options, n))
        return pith_last_status();
    pith_value ret[1];
    const pith_adam_options *o = options;
    return pith_call__fused_adam_(ret, optim_list(params, n), tensors_list(grads, n),
                                  optim_list(exp_avgs, n), optim_list(exp_avg_sqs, n),
                                  optim_list(max_exp_avg_sqs, n), optim_list(steps, n), o->lr,
                                  o->beta1, o->beta2, o->weight_decay, o->eps, o->amsgrad,
                                  o->maximize, o->grad_scale, o->found_inf);
}

pith_status pith_optim_adamw(pith_tensor *const *params,
                             const pith_tensor *const *grads,
                             pith_tensor *const *exp_avgs,
                             pith_tensor *const *exp_avg_sqs,
                             pith_tensor *const *max_exp_avg_sqs,
                             pith_tensor *const *steps, size_t n,
                             const pith_adam_options *options)
{
    if (!optim_pointers_check("pith_optim_adamw", params, grads, options, n))
        return pith_last_status();
    pith_value ret[1];
    const pith_adam_options *o = options;
    return pith_call__fused_adamw_(ret, optim_list(params, n), tensors_list(grads, n),
                                   optim_list(exp_avgs, n), optim_list(exp_avg_sqs, n),
                                   optim_list(max_exp_avg_sqs, n), optim_list(steps, n), o->lr,
                                   o->beta1, o->beta2, o->weight_decay, o->eps, o->amsgrad,
                                   o->maximize, o->grad_scale, o->found_inf);
}

pith_status pith_optim_adagrad(pith_tensor *const *params,
                               const pith_tensor *const *grads,
                               pith_tensor *const *state_sums,
                               pith_tensor *const *steps, size_t n,
                               const pith_adagrad_options *options)
{
    if (!optim_pointers_check("pith_optim_adagrad", params, grads, options, n))
        return pith_last_status();
    pith_value ret[1];
    const pith_adagrad_options *o = options;
    return pith_call__fused_adagrad_(ret, optim_list(params, n), tensors_list(grads, n),
                                     optim_list(state_sums, n), optim_list(steps, n), o->lr,
                                     o->lr_decay, o->weight_decay, o->eps, o->maximize,
                                     o->grad_scale, o->found_inf);
}

pith_status pith_optim_rmsprop(pith_tensor *const *params,
                               const pith_tensor *const *grads,
                               pith_tensor *const *square_avgs,
                               pith_tensor *const *grad_avgs,
                               pith_tensor *const *momentum_buffers,
                               pith_tensor *const *steps, size_t n,
                               const pith_rmsprop_options *options)
{
    if (!optim_pointers_check("pith_optim_rmsprop", params, grads, options, n))
        return pith_last_status();
    pith_value ret[1];
    const pith_rmsprop_options *o = options;
    return pith_call__fused_rmsprop_(ret, optim_list(params, n), tensors_list(grads, n),
                                     optim_list(square_avgs, n), optim_list(grad_avgs, n),
                                     optim_list(momentum_buffers, n), optim_list(steps, n),
                                     o->lr, o->alpha, o->eps, o->weight_decay, o->momentum,
                                     o->centered, o->maximize);
}

pith_status pith_optim_adamax(pith_tensor *const *params,
                              const pith_tensor *const *grads,
                              pith_tensor *const *exp_avgs,
                              pith_tensor *const *exp_infs,
                              pith_tensor *const *steps, size_t n,
                              const pith_adamax_options *options)
{
    if (!optim_pointers_check("pith_optim_adamax", params, grads, options, n))
        return pith_last_status();
    pith_value ret[1];
    const pith_adamax_options *o = options;
    return pith_call__fused_adamax_(ret, optim_list(params, n), tensors_list(grads, n),
                                    optim_list(exp_avgs, n), optim_list(exp_infs, n),
                                    optim_list(steps, n), o->lr, o->beta1, o->beta2, o->eps,
                                    o->weight_decay, o->maximize);
}

pith_status pith_optim_nadam(pith_tensor *const *params,
                             const pith_tensor *const *grads,
                             pith_tensor *const *exp_avgs,
                             pith_tensor *const *exp_avg_sqs,
                             pith_tensor *const *mu_products,
                             pith_tensor *const *steps, size_t n,
                             const pith_nadam_options *options)
{
    if (!optim_pointers_check("pith_optim_nadam", params, grads, options, n))
        return pith_last_status();
    pith_value ret[1];
    const pith_nadam_options *o = options;
    return pith_call__fused_nadam_(ret, optim_list(params, n), tensors_list(grads, n),
                                   optim_list(exp_avgs, n), optim_list(exp_avg_sqs, n),
                                   optim_list(mu_products, n), optim_list(steps, n), o->lr,
                                   o->beta1, o->beta2, o->weight_decay, o->eps,
                                   o->momentum_decay, o->decoupled_weight_decay, o->maximize);
}

pith_status pith_optim_adadelta(pith_tensor *const *params,
                                const pith_tensor *const *grads,
                                pith_tensor *const *square_avgs,
                                pith_tensor *const *acc_deltas,
                                pith_tensor *const *steps, size_t n,
                                const pith_adadelta_options *options)
{
    if (!optim_pointers_check("pith_optim_adadelta", params, grads, options, n))
        return pith_last_status();
    pith_value ret[1];
    const pith_adadelta_options *o = options;
    return pith_call__fused_adadelta_(ret, optim_list(params, n), tensors_list(grads, n),
                                      optim_list(square_avgs, n), optim_list(acc_deltas, n),
                                      optim_list(steps, n), o->lr, o->rho, o->eps,
                                      o->weight_decay, o->maximize);
}

pith_status pith_optim_radam(pith_tensor *const *params,
                             const pith_tensor *const *grads,
                             pith_tensor *const *exp_avgs,
                             pith_tensor *const *exp_avg_sqs,
                             pith_tensor *const *steps, size_t n,
                             const pith_radam_options *options)
{
    if (!optim_pointers_check("pith_optim_radam", params, grads, options, n))
        return pith_last_status();
    pith_value ret[1];
    const pith_radam_options *o = options;
    return pith_call__fused_radam_(ret, optim_list(params, n), tensors_list(grads, n),
                                   optim_list(exp_avgs, n), optim_list(exp_avg_sqs, n),
                                   optim_list(steps, n), o->lr, o->beta1, o->beta2,
                                   o->weight_decay, o->eps, o->decoupled_weight_decay,
                                   o->maximize);
}
