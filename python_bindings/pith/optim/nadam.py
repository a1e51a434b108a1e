"""NAdam (torch.optim.NAdam), Adam with Nesterov momentum; its state 'mu_product' is a 0-dim
tensor. The default update is one pith._fused_nadam_ call per group; foreach=False or
differentiable=True runs torch's _single_tensor_nadam with pith ops."""
import pith

from .adam import _setstate_steps, _step_tensor
from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check_param, _default_to_fused,
                        _float, _get_scalar_dtype, _get_value, _lerp_, _rdiv,
                        _use_grad_for_differentiable)

__all__ = ["NAdam", "nadam"]


class NAdam(Optimizer):
    """NAdam (torch.optim.NAdam), Dozat's Nesterov-accelerated Adam."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        if isinstance(lr, pith.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= momentum_decay:
            raise ValueError(f"Invalid momentum_decay value: {momentum_decay}")
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "momentum_decay": momentum_decay,
                    "decoupled_weight_decay": decoupled_weight_decay, "maximize": maximize,
                    "foreach": foreach, "capturable": capturable,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            for p in group["params"]:
                p_state = self.state.get(p, [])
                if len(p_state) != 0 and not pith.is_tensor(p_state["mu_product"]):
                    p_state["mu_product"] = pith.tensor(float(p_state["mu_product"]),
                                                        dtype=_get_scalar_dtype())
        _setstate_steps(self)

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products,
                    state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            _check_param(p, "NAdam")
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor(False, p.device)
                state["mu_product"] = pith.tensor(1.0, dtype=_get_scalar_dtype())
                state["exp_avg"] = pith.zeros_like(p)
                state["exp_avg_sq"] = pith.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            mu_products.append(state["mu_product"])
            state_steps.append(state["step"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs one optimization step; closure (optional) re-evaluates the model and
        returns the loss."""
        loss = None
        if closure is not None:
            with pith.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params_with_grad, grads, exp_avgs, exp_avg_sqs = [], [], [], []
            mu_products, state_steps = [], []
            beta1, beta2 = group["betas"]
            self._init_group(group, params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products,
                             state_steps)
            nadam(params_with_grad, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
                  beta1=beta1, beta2=beta2, lr=group["lr"], weight_decay=group["weight_decay"],
                  momentum_decay=group["momentum_decay"], eps=group["eps"],
                  maximize=group["maximize"],
                  decoupled_weight_decay=group["decoupled_weight_decay"],
                  foreach=group["foreach"], differentiable=group["differentiable"])
        return loss


def nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
          decoupled_weight_decay=False, foreach=None, capturable=False, differentiable=False,
          has_complex=False, maximize=False, *, beta1, beta2, lr, weight_decay, momentum_decay,
          eps):
    """The functional NAdam (torch.optim.nadam.nadam)."""
    if not all(isinstance(t, pith.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    if not all(isinstance(t, pith.Tensor) for t in mu_products):
        raise RuntimeError("API has changed, `mu_products` argument must contain a list of "
                           "singleton tensors")
    use_kernel = _default_to_fused(params, differentiable, foreach, None)
    func = _fused_nadam if use_kernel else _single_tensor_nadam
    func(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, beta1=beta1,
         beta2=beta2, lr=lr, weight_decay=weight_decay, momentum_decay=momentum_decay,
         maximize=maximize, decoupled_weight_decay=decoupled_weight_decay, eps=eps,
         differentiable=differentiable)


def _single_tensor_nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *,
                         beta1, beta2, lr, weight_decay, momentum_decay, eps, maximize,
                         decoupled_weight_decay, differentiable):
    lr = _float(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        mu_product = mu_products[i]
        step_t = state_steps[i]
        step_t += 1
        step = _get_value(step_t)
        bias_correction2 = 1 - beta2 ** step
        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        mu = beta1 * (1.0 - 0.5 * (0.96 ** (step * momentum_decay)))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((step + 1) * momentum_decay)))
        mu_product *= mu

        _lerp_(exp_avg, grad, 1 - beta1)
        _addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)
        denom = exp_avg_sq.div(bias_correction2).sqrt()

        if differentiable:
            # torch's differentiable branch: the coefficients are 0-dim tensors of
            # mu_product's dtype.
            denom = denom.add(eps)
            mu_product_next = mu_product * mu_next
            grad = grad * _rdiv(-lr * (1.0 - mu), 1.0 - mu_product)
            exp_avg = exp_avg * _rdiv(-lr * mu_next, 1.0 - mu_product_next)
            _addcdiv_(param, grad, denom)
            _addcdiv_(param, exp_avg, denom)
            continue

        mu_product_next = _get_value(mu_product) * mu_next
        denom.add_(eps)
        _addcdiv_(param, grad, denom, value=(-lr * (1.0 - mu) / (1.0 - _get_value(mu_product))))
        _addcdiv_(param, exp_avg, denom, value=(-lr * mu_next) / (1.0 - mu_product_next))


def _fused_nadam(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps, *, beta1,
                 beta2, lr, weight_decay, momentum_decay, eps, maximize, decoupled_weight_decay,
                 differentiable):
    if not params:
        return
    pith._fused_nadam_(params, grads, exp_avgs, exp_avg_sqs, mu_products, state_steps,
                       lr=_float(lr), beta1=beta1, beta2=beta2, weight_decay=weight_decay,
                       eps=eps, momentum_decay=momentum_decay,
                       decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
