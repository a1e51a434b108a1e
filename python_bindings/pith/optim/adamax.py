"""Adamax (torch.optim.Adamax), Adam on the infinity norm. The default update is one
pith._fused_adamax_ call per group; foreach=False or differentiable=True runs torch's
_single_tensor_adamax with pith ops."""
import pith

from .adam import _setstate_steps, _step_tensor
from .optimizer import (Optimizer, _addcdiv_, _check_param, _default_to_fused, _float,
                        _get_value, _lerp_, _use_grad_for_differentiable)

__all__ = ["Adamax", "adamax"]


class Adamax(Optimizer):
    """Adamax (torch.optim.Adamax), the infinity-norm variant of Adam."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
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
        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable,
                    "capturable": capturable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
        _setstate_steps(self)

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_infs, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            _check_param(p, "Adamax")
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor(False, p.device)
                state["exp_avg"] = pith.zeros_like(p)
                state["exp_inf"] = pith.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_infs.append(state["exp_inf"])
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
            params_with_grad, grads, exp_avgs, exp_infs, state_steps = [], [], [], [], []
            beta1, beta2 = group["betas"]
            self._init_group(group, params_with_grad, grads, exp_avgs, exp_infs, state_steps)
            adamax(params_with_grad, grads, exp_avgs, exp_infs, state_steps, eps=group["eps"],
                   beta1=beta1, beta2=beta2, lr=group["lr"],
                   weight_decay=group["weight_decay"], foreach=group["foreach"],
                   maximize=group["maximize"], differentiable=group["differentiable"])
        return loss


def adamax(params, grads, exp_avgs, exp_infs, state_steps, foreach=None, maximize=False,
           differentiable=False, capturable=False, has_complex=False, *, eps, beta1, beta2, lr,
           weight_decay):
    """The functional Adamax (torch.optim.adamax.adamax)."""
    if not all(isinstance(t, pith.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    use_kernel = _default_to_fused(params, differentiable, foreach, None)
    func = _fused_adamax if use_kernel else _single_tensor_adamax
    func(params, grads, exp_avgs, exp_infs, state_steps, eps=eps, beta1=beta1, beta2=beta2,
         lr=lr, weight_decay=weight_decay, maximize=maximize, differentiable=differentiable)


def _single_tensor_adamax(params, grads, exp_avgs, exp_infs, state_steps, *, eps, beta1, beta2,
                          lr, weight_decay, maximize, differentiable):
    lr = _float(lr)
    for i, param in enumerate(params):
        grad = grads[i]
        grad = grad if not maximize else -grad
        exp_avg = exp_avgs[i]
        exp_inf = exp_infs[i]
        step_t = state_steps[i]
        step_t += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        _lerp_(exp_avg, grad, 1 - beta1)
        if not differentiable:
            pith.maximum(exp_inf.mul_(beta2), grad.abs().add_(eps), out=exp_inf)
        else:
            norm_buf = pith.cat([exp_inf.mul_(beta2).unsqueeze(0),
                                 grad.abs().add_(eps).unsqueeze(0)], 0)
            exp_inf.copy_(pith.amax(norm_buf, 0, keepdim=False))
        bias_correction = 1 - beta1 ** _get_value(step_t)
        clr = lr / bias_correction
        _addcdiv_(param, exp_avg, exp_inf, value=-clr)


def _fused_adamax(params, grads, exp_avgs, exp_infs, state_steps, *, eps, beta1, beta2, lr,
                  weight_decay, maximize, differentiable):
    if not params:
        return
    pith._fused_adamax_(params, grads, exp_avgs, exp_infs, state_steps, lr=_float(lr),
                        beta1=beta1, beta2=beta2, eps=eps, weight_decay=weight_decay,
                        maximize=maximize)
