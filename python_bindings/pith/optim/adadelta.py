"""Adadelta (torch.optim.Adadelta). The default update is one pith._fused_adadelta_ call per
group; foreach=False or differentiable=True runs torch's _single_tensor_adadelta with pith
ops."""
import pith

from .adam import _setstate_steps, _step_tensor
from .optimizer import (Optimizer, _addcmul_, _check_param, _default_to_fused, _float,
                        _use_grad_for_differentiable)

__all__ = ["Adadelta", "adadelta"]


class Adadelta(Optimizer):
    """Adadelta (torch.optim.Adadelta), Zeiler's adaptive learning rate method."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        if isinstance(lr, pith.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= rho <= 1.0:
            raise ValueError(f"Invalid rho value: {rho}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        defaults = {"lr": lr, "rho": rho, "eps": eps, "weight_decay": weight_decay,
                    "maximize": maximize, "capturable": capturable, "foreach": foreach,
                    "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
        _setstate_steps(self)

    def _init_group(self, group, params_with_grad, grads, square_avgs, acc_deltas, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            _check_param(p, "Adadelta")
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor(False, p.device)
                state["square_avg"] = pith.zeros_like(p)
                state["acc_delta"] = pith.zeros_like(p)
            square_avgs.append(state["square_avg"])
            acc_deltas.append(state["acc_delta"])
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
            params_with_grad, grads, square_avgs, acc_deltas, state_steps = [], [], [], [], []
            self._init_group(group, params_with_grad, grads, square_avgs, acc_deltas,
                             state_steps)
            adadelta(params_with_grad, grads, square_avgs, acc_deltas, state_steps,
                     lr=group["lr"], rho=group["rho"], eps=group["eps"],
                     weight_decay=group["weight_decay"], foreach=group["foreach"],
                     maximize=group["maximize"], differentiable=group["differentiable"])
        return loss


def adadelta(params, grads, square_avgs, acc_deltas, state_steps, capturable=False,
             foreach=None, differentiable=False, has_complex=False, *, lr, rho, eps,
             weight_decay, maximize):
    """The functional Adadelta (torch.optim.adadelta.adadelta)."""
    use_kernel = _default_to_fused(params, differentiable, foreach, None)
    func = _fused_adadelta if use_kernel else _single_tensor_adadelta
    func(params, grads, square_avgs, acc_deltas, state_steps, lr=lr, rho=rho, eps=eps,
         weight_decay=weight_decay, maximize=maximize, differentiable=differentiable)


def _single_tensor_adadelta(params, grads, square_avgs, acc_deltas, state_steps, *, lr, rho,
                            eps, weight_decay, maximize, differentiable):
    lr = _float(lr)
    for param, grad, square_avg, acc_delta, step in zip(params, grads, square_avgs, acc_deltas,
                                                        state_steps):
        step += 1
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        _addcmul_(square_avg.mul_(rho), grad, grad, value=1 - rho)
        std = square_avg.add(eps).sqrt_()
        delta = acc_delta.add(eps).sqrt_()
        if differentiable:
            delta = delta.clone()
        delta.div_(std).mul_(grad)
        _addcmul_(acc_delta.mul_(rho), delta, delta, value=1 - rho)
        param.add_(delta, alpha=-lr)


def _fused_adadelta(params, grads, square_avgs, acc_deltas, state_steps, *, lr, rho, eps,
                    weight_decay, maximize, differentiable):
    if not params:
        return
    pith._fused_adadelta_(params, grads, square_avgs, acc_deltas, state_steps, lr=_float(lr),
                          rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
