"""Adagrad (torch.optim.Adagrad). The state ('step', 'sum') is made for every parameter at
construction, as torch's. The default update is one pith._fused_adagrad_ call per group;
foreach=False or differentiable=True runs torch's _single_tensor_adagrad with pith ops."""
import pith

from .adam import _setstate_steps, _step_tensor
from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check_param, _default_to_fused,
                        _float, _get_value, _use_grad_for_differentiable)

__all__ = ["Adagrad", "adagrad"]


class Adagrad(Optimizer):
    """Adagrad (torch.optim.Adagrad), Duchi et al.'s adaptive subgradient method."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        if isinstance(lr, pith.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= lr_decay:
            raise ValueError(f"Invalid lr_decay value: {lr_decay}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= initial_accumulator_value:
            raise ValueError(
                f"Invalid initial_accumulator_value value: {initial_accumulator_value}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        defaults = {"lr": lr, "lr_decay": lr_decay, "eps": eps, "weight_decay": weight_decay,
                    "initial_accumulator_value": initial_accumulator_value, "foreach": foreach,
                    "maximize": maximize, "differentiable": differentiable, "fused": fused}
        super().__init__(params, defaults)
        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")
            self._step_supports_amp_scaling = True
        for group in self.param_groups:
            for p in group["params"]:
                _check_param(p, "Adagrad", sparse=False)
                state = self.state[p]
                state["step"] = _step_tensor(group["fused"], p.device)
                state["sum"] = pith.full_like(p, initial_accumulator_value)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("fused", None)
        _setstate_steps(self)

    def share_memory(self):
        """Calls tensor.share_memory_() on the state sum tensors."""
        for group in self.param_groups:
            for p in group["params"]:
                self.state[p]["sum"].share_memory_()

    def _init_group(self, group, params_with_grad, grads, state_sums, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            if getattr(p.grad, "is_sparse", False):
                # torch's Adagrad takes sparse gradients; pith has no sparse tensors, so one
                # can only come from a foreign subclass.
                raise RuntimeError("Adagrad: sparse gradients are not supported by pith.optim")
            _check_param(p, "Adagrad")
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor(group["fused"], p.device)
                state["sum"] = pith.full_like(p, self.defaults["initial_accumulator_value"])
            state_sums.append(state["sum"])
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
            params_with_grad, grads, state_sums, state_steps = [], [], [], []
            self._init_group(group, params_with_grad, grads, state_sums, state_steps)
            adagrad(params_with_grad, grads, state_sums, state_steps, lr=group["lr"],
                    weight_decay=group["weight_decay"], lr_decay=group["lr_decay"],
                    eps=group["eps"], foreach=group["foreach"], maximize=group["maximize"],
                    differentiable=group["differentiable"], fused=group["fused"],
                    grad_scale=getattr(self, "grad_scale", None),
                    found_inf=getattr(self, "found_inf", None))
        return loss


def adagrad(params, grads, state_sums, state_steps, fused=None, grad_scale=None,
            found_inf=None, has_sparse_grad=False, foreach=None, differentiable=False,
            has_complex=False, *, lr, weight_decay, lr_decay, eps, maximize):
    """The functional Adagrad (torch.optim.adagrad.adagrad)."""
    if has_sparse_grad:
        raise RuntimeError("Adagrad does not support sparse gradients")
    if not all(isinstance(t, pith.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    if _default_to_fused(params, differentiable, foreach, fused):
        func = _fused_adagrad
    else:
        if grad_scale is not None or found_inf is not None:
            raise AssertionError("Expected grad_scale and found_inf to be None")
        func = _single_tensor_adagrad
    func(params, grads, state_sums, state_steps, lr=lr, weight_decay=weight_decay,
         lr_decay=lr_decay, eps=eps, maximize=maximize, differentiable=differentiable,
         grad_scale=grad_scale, found_inf=found_inf)


def _single_tensor_adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay,
                           lr_decay, eps, maximize, differentiable, grad_scale=None,
                           found_inf=None):
    lr = _float(lr)
    for param, grad, state_sum, step_t in zip(params, grads, state_sums, state_steps):
        step_t += 1
        step = _get_value(step_t)
        grad = grad if not maximize else -grad
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        clr = lr / (1 + (step - 1) * lr_decay)
        _addcmul_(state_sum, grad, grad, value=1)
        std = state_sum.sqrt() + eps if differentiable else state_sum.sqrt().add_(eps)
        _addcdiv_(param, grad, std, value=-clr)


def _fused_adagrad(params, grads, state_sums, state_steps, *, lr, weight_decay, lr_decay, eps,
                   maximize, differentiable, grad_scale=None, found_inf=None):
    if not params:
        return
    pith._fused_adagrad_(params, grads, state_sums, state_steps, lr=_float(lr),
                         lr_decay=lr_decay, weight_decay=weight_decay, eps=eps,
                         maximize=maximize, grad_scale=grad_scale, found_inf=found_inf)
