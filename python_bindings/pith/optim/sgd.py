"""SGD (torch.optim.SGD): momentum, dampening, Nesterov, weight decay, maximize. The default
update is pith._fused_sgd_ (one call per group part, see _fused_sgd); foreach=False or
differentiable=True runs torch's _single_tensor_sgd with pith ops."""
import pith

from .optimizer import (Optimizer, _check_param, _default_to_fused, _float,
                        _use_grad_for_differentiable)

__all__ = ["SGD", "sgd"]


class SGD(Optimizer):
    """Stochastic gradient descent, optionally with momentum (torch.optim.SGD)."""

    def __init__(self, params, lr=1e-3, momentum=0, dampening=0, weight_decay=0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        if isinstance(lr, pith.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if lr < 0.0:
            raise ValueError(f"Invalid learning rate: {lr}")
        if momentum < 0.0:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if weight_decay < 0.0:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")

        defaults = {"lr": lr, "momentum": momentum, "dampening": dampening,
                    "weight_decay": weight_decay, "nesterov": nesterov, "maximize": maximize,
                    "foreach": foreach, "differentiable": differentiable, "fused": fused}
        if nesterov and (momentum <= 0 or dampening != 0):
            raise ValueError("Nesterov momentum requires a momentum and zero dampening")
        super().__init__(params, defaults)

        if fused:
            self._step_supports_amp_scaling = True
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("nesterov", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("differentiable", False)
            group.setdefault("fused", False)

    def _init_group(self, group, params, grads, momentum_buffer_list):
        for p in group["params"]:
            if p.grad is not None:
                _check_param(p, "SGD", sparse=False)
                if getattr(p.grad, "is_sparse", False):
                    # torch's SGD takes sparse gradients in its per-parameter path; pith has
                    # no sparse tensors, so one can only come from a foreign subclass.
                    raise RuntimeError("SGD: sparse gradients are not supported by pith.optim")
                params.append(p)
                grads.append(p.grad)
                if group["momentum"] != 0:
                    momentum_buffer_list.append(self.state[p].get("momentum_buffer"))

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs one optimization step; closure (optional) re-evaluates the model and
        returns the loss."""
        loss = None
        if closure is not None:
            with pith.enable_grad():
                loss = closure()

        for group in self.param_groups:
            params, grads, momentum_buffer_list = [], [], []
            self._init_group(group, params, grads, momentum_buffer_list)
            sgd(params, grads, momentum_buffer_list, weight_decay=group["weight_decay"],
                momentum=group["momentum"], lr=group["lr"], dampening=group["dampening"],
                nesterov=group["nesterov"], maximize=group["maximize"],
                foreach=group["foreach"], fused=group["fused"],
                differentiable=group["differentiable"],
                grad_scale=getattr(self, "grad_scale", None),
                found_inf=getattr(self, "found_inf", None))
            if group["momentum"] != 0:
                for p, momentum_buffer in zip(params, momentum_buffer_list):
                    self.state[p]["momentum_buffer"] = momentum_buffer
        return loss


def sgd(params, d_p_list, momentum_buffer_list, has_sparse_grad=False, foreach=None,
        fused=None, grad_scale=None, found_inf=None, *, weight_decay, momentum, lr, dampening,
        nesterov, maximize, differentiable=False):
    """The functional SGD (torch.optim.sgd.sgd): updates params in place and fills the None
    entries of momentum_buffer_list with the new buffers."""
    if has_sparse_grad:
        raise RuntimeError("SGD: sparse gradients are not supported by pith.optim")
    if _default_to_fused(params, differentiable, foreach, fused):
        func = _fused_sgd
    else:
        if grad_scale is not None or found_inf is not None:
            raise AssertionError("Expected grad_scale and found_inf to be None")
        func = _single_tensor_sgd
    func(params, d_p_list, momentum_buffer_list, weight_decay=weight_decay, momentum=momentum,
         lr=lr, dampening=dampening, nesterov=nesterov, maximize=maximize,
         grad_scale=grad_scale, found_inf=found_inf)


def _single_tensor_sgd(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr,
                       dampening, nesterov, maximize, grad_scale=None, found_inf=None):
    lr = _float(lr)
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        if weight_decay != 0:
            grad = grad.add(param, alpha=_float(weight_decay, "weight_decay"))
        if momentum != 0:
            buf = momentum_buffer_list[i]
            if buf is None:
                buf = grad.detach().clone()
                momentum_buffer_list[i] = buf
            else:
                buf.mul_(momentum).add_(grad, alpha=1 - dampening)
            if nesterov:
                grad = grad.add(buf, alpha=momentum)
            else:
                grad = buf
        param.add_(grad, alpha=-lr)


def _fused_sgd(params, grads, momentum_buffer_list, *, weight_decay, momentum, lr, dampening,
               nesterov, maximize, grad_scale=None, found_inf=None):
    # The kernel sets every buffer of a call to the (decayed) gradient when is_first_step,
    # so the params whose buffer exists and those whose buffer is new go in separate calls.
    if not params:
        return
    options = {"weight_decay": _float(weight_decay, "weight_decay"), "momentum": momentum,
               "lr": _float(lr), "dampening": dampening, "nesterov": nesterov,
               "maximize": maximize, "grad_scale": grad_scale, "found_inf": found_inf}
    if momentum == 0:
        pith._fused_sgd_(params, grads, [], is_first_step=False, **options)
        return
    old = [i for i, b in enumerate(momentum_buffer_list) if b is not None]
    new = [i for i, b in enumerate(momentum_buffer_list) if b is None]
    if old:
        pith._fused_sgd_([params[i] for i in old], [grads[i] for i in old],
                         [momentum_buffer_list[i] for i in old], is_first_step=False,
                         **options)
    if new and not (found_inf is not None and found_inf.item() != 0):
        # A skipped step (found_inf) leaves new buffers None, so that the next step sets
        # them to its gradient; torch's fused SGD would keep them uninitialised.
        for i in new:
            momentum_buffer_list[i] = pith.empty_like(params[i])
        pith._fused_sgd_([params[i] for i in new], [grads[i] for i in new],
                         [momentum_buffer_list[i] for i in new], is_first_step=True,
                         **options)
