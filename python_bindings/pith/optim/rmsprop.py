"""RMSprop (torch.optim.RMSprop): centered and momentum variants. The default update is one
pith._fused_rmsprop_ call per group; foreach=False or differentiable=True runs torch's
_single_tensor_rmsprop with pith ops."""
import pith

from .adam import _setstate_steps, _step_tensor
from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check_param, _default_to_fused,
                        _float, _lerp_, _use_grad_for_differentiable)

__all__ = ["RMSprop", "rmsprop"]


class RMSprop(Optimizer):
    """RMSprop (torch.optim.RMSprop), Hinton's lecture 6e algorithm."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0, momentum=0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        if isinstance(lr, pith.Tensor) and lr.numel() != 1:
            raise ValueError("Tensor lr must be 1-element")
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 <= eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= momentum:
            raise ValueError(f"Invalid momentum value: {momentum}")
        if not 0.0 <= weight_decay:
            raise ValueError(f"Invalid weight_decay value: {weight_decay}")
        if not 0.0 <= alpha:
            raise ValueError(f"Invalid alpha value: {alpha}")
        defaults = {"lr": lr, "momentum": momentum, "alpha": alpha, "eps": eps,
                    "centered": centered, "weight_decay": weight_decay, "capturable": capturable,
                    "foreach": foreach, "maximize": maximize, "differentiable": differentiable}
        super().__init__(params, defaults)

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("momentum", 0)
            group.setdefault("centered", False)
            group.setdefault("foreach", None)
            group.setdefault("maximize", False)
            group.setdefault("differentiable", False)
            group.setdefault("capturable", False)
        _setstate_steps(self)

    def _init_group(self, group, params_with_grad, grads, square_avgs, momentum_buffer_list,
                    grad_avgs, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            _check_param(p, "RMSprop")
            params_with_grad.append(p)
            grads.append(p.grad)
            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor(False, p.device)
                state["square_avg"] = pith.zeros_like(p)
                if group["momentum"] > 0:
                    state["momentum_buffer"] = pith.zeros_like(p)
                if group["centered"]:
                    state["grad_avg"] = pith.zeros_like(p)
            square_avgs.append(state["square_avg"])
            state_steps.append(state["step"])
            if group["momentum"] > 0:
                momentum_buffer_list.append(state["momentum_buffer"])
            if group["centered"]:
                grad_avgs.append(state["grad_avg"])

    @_use_grad_for_differentiable
    def step(self, closure=None):
        """Performs one optimization step; closure (optional) re-evaluates the model and
        returns the loss."""
        loss = None
        if closure is not None:
            with pith.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params_with_grad, grads, square_avgs, grad_avgs = [], [], [], []
            momentum_buffer_list, state_steps = [], []
            self._init_group(group, params_with_grad, grads, square_avgs, momentum_buffer_list,
                             grad_avgs, state_steps)
            rmsprop(params_with_grad, grads, square_avgs, grad_avgs, momentum_buffer_list,
                    state_steps, lr=group["lr"], alpha=group["alpha"], eps=group["eps"],
                    weight_decay=group["weight_decay"], momentum=group["momentum"],
                    centered=group["centered"], foreach=group["foreach"],
                    maximize=group["maximize"], differentiable=group["differentiable"])
        return loss


def rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps,
            foreach=None, maximize=False, differentiable=False, capturable=False,
            has_complex=False, *, lr, alpha, eps, weight_decay, momentum, centered):
    """The functional RMSprop (torch.optim.rmsprop.rmsprop)."""
    if not all(isinstance(t, pith.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    use_kernel = _default_to_fused(params, differentiable, foreach, None)
    func = _fused_rmsprop if use_kernel else _single_tensor_rmsprop
    func(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, lr=lr,
         alpha=alpha, eps=eps, weight_decay=weight_decay, momentum=momentum, centered=centered,
         maximize=maximize, differentiable=differentiable)


def _single_tensor_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list,
                           state_steps, *, lr, alpha, eps, weight_decay, momentum, centered,
                           maximize, differentiable):
    lr = _float(lr)
    for i, param in enumerate(params):
        step = state_steps[i]
        grad = grads[i]
        grad = grad if not maximize else -grad
        square_avg = square_avgs[i]
        step += 1
        if weight_decay != 0:
            grad = grad.add(param, alpha=weight_decay)
        _addcmul_(square_avg.mul_(alpha), grad, grad, value=1 - alpha)
        if centered:
            grad_avg = grad_avgs[i]
            _lerp_(grad_avg, grad, 1 - alpha)
            avg = _addcmul_(square_avg.clone(), grad_avg, grad_avg, value=-1).sqrt_()
        else:
            avg = square_avg.sqrt()
        avg = avg.add(eps) if differentiable else avg.add_(eps)
        if momentum > 0:
            buf = momentum_buffer_list[i]
            _addcdiv_(buf.mul_(momentum), grad, avg)
            param.add_(buf, alpha=-lr)
        else:
            _addcdiv_(param, grad, avg, value=-lr)


def _fused_rmsprop(params, grads, square_avgs, grad_avgs, momentum_buffer_list, state_steps, *,
                   lr, alpha, eps, weight_decay, momentum, centered, maximize, differentiable):
    if not params:
        return
    pith._fused_rmsprop_(params, grads, square_avgs, grad_avgs if centered else [],
                         momentum_buffer_list if momentum > 0 else [], state_steps,
                         lr=_float(lr), alpha=alpha, eps=eps, weight_decay=weight_decay,
                         momentum=momentum, centered=centered, maximize=maximize)
