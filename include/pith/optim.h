/* optim.h — the optimizers' multi-tensor update kernels, for C programs that train: one
 * call updates every parameter of the arrays in place, with torch 2.13's formula of the
 * optimizer (the ops pith._fused_<name>_ of Python; See Note [The multi-tensor optimizer
 * kernels], kernels/optim.c, and docs/training.md). Included by pith.h.
 *
 * Array i of every array argument belongs to parameter i; each has n entries. A state
 * tensor has its parameter's dtype (float32 or float64), shape and device; its strides may
 * differ. `steps` are 0-dim float32 or float64 tensors (torch's state['step']), which the
 * call increments by 1 before it uses them: start them at 0. An array the options do not
 * use (max_exp_avg_sqs without amsgrad, momentum_buffers with momentum 0, grad_avgs when
 * not centered) may be NULL. Each returns PITH_OK, or an error status with the message set
 * and nothing written. The grads are only read. Autograd is not involved: call them on
 * tensors that no graph saved, as torch's optimizers step under no_grad. */
#ifndef PITH_OPTIM_H
#define PITH_OPTIM_H

#ifdef __cplusplus
extern "C" {
#endif

/* Each options struct has a PITH_<NAME>_OPTIONS_DEFAULT initializer with torch's defaults
 * (every field named, in order, so that it is also C++20's designated initializer). */

/* grad_scale and found_inf (SGD, Adam, AdamW, Adagrad), torch's AMP arguments: NULL or a
 * floating tensor of one element; found_inf == 1 makes the call do nothing (the steps stay),
 * and the gradients are divided by grad_scale in the arithmetic, not in memory. */

typedef struct {
    double lr, momentum, dampening, weight_decay;
    bool nesterov, maximize;
    const pith_tensor *grad_scale, *found_inf;
} pith_sgd_options;
#define PITH_SGD_OPTIONS_DEFAULT                                                           \
    {.lr = 1e-3, .momentum = 0, .dampening = 0, .weight_decay = 0, .nesterov = false,      \
     .maximize = false, .grad_scale = NULL, .found_inf = NULL}

/* torch.optim.SGD's step. is_first_step: the momentum buffers are uninitialised (as
 * pith_empty gives them) and are set to the (decayed) gradient. */
PITH_API pith_status pith_optim_sgd(pith_tensor *const *params, const pith_tensor *const *grads,
                                    pith_tensor *const *momentum_buffers, size_t n,
                                    bool is_first_step, const pith_sgd_options *options);

typedef struct {
    double lr, beta1, beta2, eps, weight_decay;
    bool amsgrad, maximize;
    const pith_tensor *grad_scale, *found_inf;
} pith_adam_options;
#define PITH_ADAM_OPTIONS_DEFAULT                                                          \
    {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0,             \
     .amsgrad = false, .maximize = false, .grad_scale = NULL, .found_inf = NULL}
#define PITH_ADAMW_OPTIONS_DEFAULT                                                         \
    {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 1e-2,          \
     .amsgrad = false, .maximize = false, .grad_scale = NULL, .found_inf = NULL}

/* torch.optim.Adam's and AdamW's (decoupled weight decay) steps. */
PITH_API pith_status pith_optim_adam(pith_tensor *const *params,
                                     const pith_tensor *const *grads,
                                     pith_tensor *const *exp_avgs,
                                     pith_tensor *const *exp_avg_sqs,
                                     pith_tensor *const *max_exp_avg_sqs,
                                     pith_tensor *const *steps, size_t n,
                                     const pith_adam_options *options);
PITH_API pith_status pith_optim_adamw(pith_tensor *const *params,
                                      const pith_tensor *const *grads,
                                      pith_tensor *const *exp_avgs,
                                      pith_tensor *const *exp_avg_sqs,
                                      pith_tensor *const *max_exp_avg_sqs,
                                      pith_tensor *const *steps, size_t n,
                                      const pith_adam_options *options);

typedef struct {
    double lr, lr_decay, weight_decay, eps;
    bool maximize;
    const pith_tensor *grad_scale, *found_inf;
} pith_adagrad_options;
#define PITH_ADAGRAD_OPTIONS_DEFAULT                                                       \
    {.lr = 1e-2, .lr_decay = 0, .weight_decay = 0, .eps = 1e-10, .maximize = false,        \
     .grad_scale = NULL, .found_inf = NULL}

/* torch.optim.Adagrad's step; state_sums start at initial_accumulator_value. */
PITH_API pith_status pith_optim_adagrad(pith_tensor *const *params,
                                        const pith_tensor *const *grads,
                                        pith_tensor *const *state_sums,
                                        pith_tensor *const *steps, size_t n,
                                        const pith_adagrad_options *options);

typedef struct {
    double lr, alpha, eps, weight_decay, momentum;
    bool centered, maximize;
} pith_rmsprop_options;
#define PITH_RMSPROP_OPTIONS_DEFAULT                                                       \
    {.lr = 1e-2, .alpha = 0.99, .eps = 1e-8, .weight_decay = 0, .momentum = 0,             \
     .centered = false, .maximize = false}

PITH_API pith_status pith_optim_rmsprop(pith_tensor *const *params,
                                        const pith_tensor *const *grads,
                                        pith_tensor *const *square_avgs,
                                        pith_tensor *const *grad_avgs,
                                        pith_tensor *const *momentum_buffers,
                                        pith_tensor *const *steps, size_t n,
                                        const pith_rmsprop_options *options);

typedef struct {
    double lr, beta1, beta2, eps, weight_decay;
    bool maximize;
} pith_adamax_options;
#define PITH_ADAMAX_OPTIONS_DEFAULT                                                        \
    {.lr = 2e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0,             \
     .maximize = false}

PITH_API pith_status pith_optim_adamax(pith_tensor *const *params,
                                       const pith_tensor *const *grads,
                                       pith_tensor *const *exp_avgs,
                                       pith_tensor *const *exp_infs,
                                       pith_tensor *const *steps, size_t n,
                                       const pith_adamax_options *options);

typedef struct {
    double lr, beta1, beta2, eps, weight_decay, momentum_decay;
    bool decoupled_weight_decay, maximize;
} pith_nadam_options;
#define PITH_NADAM_OPTIONS_DEFAULT                                                         \
    {.lr = 2e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0,             \
     .momentum_decay = 4e-3, .decoupled_weight_decay = false, .maximize = false}

/* mu_products: 0-dim float32 or float64 tensors that start at 1 (torch's
 * state['mu_product']), updated by the call. */
PITH_API pith_status pith_optim_nadam(pith_tensor *const *params,
                                      const pith_tensor *const *grads,
                                      pith_tensor *const *exp_avgs,
                                      pith_tensor *const *exp_avg_sqs,
                                      pith_tensor *const *mu_products,
                                      pith_tensor *const *steps, size_t n,
                                      const pith_nadam_options *options);

typedef struct {
    double lr, rho, eps, weight_decay;
    bool maximize;
} pith_adadelta_options;
#define PITH_ADADELTA_OPTIONS_DEFAULT                                                      \
    {.lr = 1.0, .rho = 0.9, .eps = 1e-6, .weight_decay = 0, .maximize = false}

PITH_API pith_status pith_optim_adadelta(pith_tensor *const *params,
                                         const pith_tensor *const *grads,
                                         pith_tensor *const *square_avgs,
                                         pith_tensor *const *acc_deltas,
                                         pith_tensor *const *steps, size_t n,
                                         const pith_adadelta_options *options);

typedef struct {
    double lr, beta1, beta2, eps, weight_decay;
    bool decoupled_weight_decay, maximize;
} pith_radam_options;
#define PITH_RADAM_OPTIONS_DEFAULT                                                         \
    {.lr = 1e-3, .beta1 = 0.9, .beta2 = 0.999, .eps = 1e-8, .weight_decay = 0,             \
     .decoupled_weight_decay = false, .maximize = false}

PITH_API pith_status pith_optim_radam(pith_tensor *const *params,
                                      const pith_tensor *const *grads,
                                      pith_tensor *const *exp_avgs,
                                      pith_tensor *const *exp_avg_sqs,
                                      pith_tensor *const *steps, size_t n,
                                      const pith_radam_options *options);

#ifdef __cplusplus
}
#endif

#endif /* PITH_OPTIM_H */
