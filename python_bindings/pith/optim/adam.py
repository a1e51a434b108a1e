"""Adam (torch.optim.Adam), with amsgrad, maximize and decoupled_weight_decay (AdamW's). The
default update is one pith._fused_adam_ (or _fused_adamw_) call per group; foreach=False or
differentiable=True runs torch's _single_tensor_adam with pith ops."""
import pith

from .optimizer import (Optimizer, _addcdiv_, _addcmul_, _check_param, _default_to_fused,
                        _float, _get_scalar_dtype, _get_value, _lerp_, _rdiv, _to_scalar,
                        _use_grad_for_differentiable)

__all__ = ["Adam", "adam"]


def _step_tensor(fused, device):
    """A new state['step']: float32 on the parameter's device for a fused group (torch's
    placement), else a CPU scalar of _get_scalar_dtype()."""
    if fused:
        return pith.zeros((), dtype=pith.float32, device=device)
    return pith.tensor(0.0, dtype=_get_scalar_dtype())


def _setstate_steps(optimizer, fused_key="fused"):
    """A state whose 'step' is a number (old torch checkpoints) gets a 0-dim tensor."""
    for group in optimizer.param_groups:
        for p in group["params"]:
            p_state = optimizer.state.get(p, [])
            if len(p_state) != 0 and not pith.is_tensor(p_state["step"]):
                step_val = float(p_state["step"])
                if group.get("capturable") or group.get(fused_key):
                    p_state["step"] = pith.tensor(step_val, dtype=pith.float32
                                                  if group.get(fused_key) else _get_scalar_dtype(),
                                                  device=p.device)
                else:
                    p_state["step"] = pith.tensor(step_val, dtype=_get_scalar_dtype())


class Adam(Optimizer):
    """Adam (torch.optim.Adam): Kingma and Ba's algorithm, with amsgrad and decoupled weight
    decay as options."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        if isinstance(lr, pith.Tensor):
            if foreach and not capturable:
                raise ValueError("lr as a Tensor is not supported for capturable=False and "
                                 "foreach=True")
            if lr.numel() != 1:
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
        if not ((isinstance(betas[0], float) and isinstance(betas[1], float))
                or (isinstance(betas[0], pith.Tensor) and isinstance(betas[1], pith.Tensor))):
            raise ValueError("betas must be either both floats or both Tensors")
        for index in (0, 1):
            if isinstance(betas[index], pith.Tensor):
                if not capturable and foreach:
                    raise ValueError(f"betas[{index}] as a Tensor is not supported for "
                                     "capturable=False and foreach=True")
                if betas[index].numel() != 1:
                    raise ValueError(f"Tensor betas[{index}] must be 1-element")
        betas = tuple(map(_to_scalar, betas))

        defaults = {"lr": lr, "betas": betas, "eps": eps, "weight_decay": weight_decay,
                    "amsgrad": amsgrad, "maximize": maximize, "foreach": foreach,
                    "capturable": capturable, "differentiable": differentiable, "fused": fused,
                    "decoupled_weight_decay": decoupled_weight_decay}
        super().__init__(params, defaults)

        if fused:
            if differentiable:
                raise RuntimeError("`fused` does not support `differentiable`")
            self._step_supports_amp_scaling = True
            if foreach:
                raise RuntimeError("`fused` and `foreach` cannot be `True` together.")

    def __setstate__(self, state):
        super().__setstate__(state)
        for group in self.param_groups:
            group.setdefault("amsgrad", False)
            group.setdefault("maximize", False)
            group.setdefault("foreach", None)
            group.setdefault("capturable", False)
            group.setdefault("differentiable", False)
            group.setdefault("decoupled_weight_decay", False)
            group.setdefault("fused", None)
        _setstate_steps(self)

    def _init_group(self, group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                    max_exp_avg_sqs, state_steps):
        for p in group["params"]:
            if p.grad is None:
                continue
            if getattr(p.grad, "is_sparse", False):  # AdamW's message too, as torch's
                raise RuntimeError("Adam does not support sparse gradients, please consider "
                                   "SparseAdam instead")
            _check_param(p, type(self).__name__)
            params_with_grad.append(p)
            grads.append(p.grad)

            state = self.state[p]
            if len(state) == 0:
                state["step"] = _step_tensor(group["fused"] or group["capturable"], p.device)
                state["exp_avg"] = pith.zeros_like(p)
                state["exp_avg_sq"] = pith.zeros_like(p)
                if group["amsgrad"]:
                    state["max_exp_avg_sq"] = pith.zeros_like(p)
            exp_avgs.append(state["exp_avg"])
            exp_avg_sqs.append(state["exp_avg_sq"])
            if group["amsgrad"]:
                max_exp_avg_sqs.append(state["max_exp_avg_sq"])
            if group["differentiable"] and state["step"].requires_grad:
                raise RuntimeError("`requires_grad` is not supported for `step` in "
                                   "differentiable mode")
            if group["foreach"] and pith.is_tensor(group["lr"]) and not group["capturable"]:
                raise RuntimeError("lr as a Tensor is not supported for capturable=False and "
                                   "foreach=True")
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
            max_exp_avg_sqs, state_steps = [], []
            beta1, beta2 = group["betas"]
            self._init_group(group, params_with_grad, grads, exp_avgs, exp_avg_sqs,
                             max_exp_avg_sqs, state_steps)
            adam(params_with_grad, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps,
                 amsgrad=group["amsgrad"], beta1=beta1, beta2=beta2, lr=group["lr"],
                 weight_decay=group["weight_decay"], eps=group["eps"],
                 maximize=group["maximize"], foreach=group["foreach"],
                 differentiable=group["differentiable"], fused=group["fused"],
                 grad_scale=getattr(self, "grad_scale", None),
                 found_inf=getattr(self, "found_inf", None),
                 decoupled_weight_decay=group["decoupled_weight_decay"])
        return loss


def adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, foreach=None,
         capturable=False, differentiable=False, fused=None, grad_scale=None, found_inf=None,
         has_complex=False, decoupled_weight_decay=False, *, amsgrad, beta1, beta2, lr,
         weight_decay, eps, maximize):
    """The functional Adam (torch.optim.adam.adam): updates params and the state lists in
    place; state_steps are incremented."""
    if not all(isinstance(t, pith.Tensor) for t in state_steps):
        raise RuntimeError("API has changed, `state_steps` argument must contain a list of "
                           "singleton tensors")
    name = "adamw" if decoupled_weight_decay else "adam"
    if _default_to_fused(params, differentiable, foreach, fused):
        func = _fused_adam
    else:
        if grad_scale is not None or found_inf is not None:
            raise AssertionError("Expected grad_scale and found_inf to be None")
        func = _single_tensor_adam
    func(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, amsgrad=amsgrad,
         beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay, eps=eps,
         maximize=maximize, differentiable=differentiable, grad_scale=grad_scale,
         found_inf=found_inf, decoupled_weight_decay=decoupled_weight_decay)


def _single_tensor_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *,
                        amsgrad, beta1, beta2, lr, weight_decay, eps, maximize, differentiable,
                        decoupled_weight_decay, grad_scale=None, found_inf=None):
    lr = _float(lr)
    beta1, beta2 = _float(beta1, "beta1"), _float(beta2, "beta2")
    for i, param in enumerate(params):
        grad = grads[i] if not maximize else -grads[i]
        exp_avg = exp_avgs[i]
        exp_avg_sq = exp_avg_sqs[i]
        step_t = state_steps[i]
        step_t += 1

        if weight_decay != 0:
            if decoupled_weight_decay:
                param.mul_(1 - lr * weight_decay)
            else:
                grad = grad.add(param, alpha=weight_decay)

        _lerp_(exp_avg, grad, 1 - beta1)
        _addcmul_(exp_avg_sq.mul_(beta2), grad, grad, value=1 - beta2)

        if differentiable:
            # torch's differentiable branch: the bias corrections are 0-dim tensors of the
            # step's dtype, so the update differs from the other branch in the last bits.
            step = step_t
            bias_correction1 = 1 - beta1 ** step
            bias_correction2 = 1 - beta2 ** step
            step_size_neg = _rdiv(lr, bias_correction1).neg()
            bias_correction2_sqrt = bias_correction2.sqrt()
            if amsgrad:
                max_exp_avg_sqs[i].copy_(pith.maximum(max_exp_avg_sqs[i].clone(), exp_avg_sq))
                source = max_exp_avg_sqs[i]
            else:
                source = exp_avg_sq
            denom = (source.sqrt() / (bias_correction2_sqrt * step_size_neg)).add_(
                _rdiv(eps, step_size_neg))
            _addcdiv_(param, exp_avg.clone(), denom)
            continue

        step = _get_value(step_t)
        bias_correction1 = 1 - beta1 ** step
        bias_correction2 = 1 - beta2 ** step
        step_size = lr / bias_correction1
        bias_correction2_sqrt = bias_correction2 ** 0.5

        if amsgrad:
            pith.maximum(max_exp_avg_sqs[i], exp_avg_sq, out=max_exp_avg_sqs[i])
            denom = (max_exp_avg_sqs[i].sqrt() / bias_correction2_sqrt).add_(eps)
        else:
            denom = (exp_avg_sq.sqrt() / bias_correction2_sqrt).add_(eps)
        _addcdiv_(param, exp_avg, denom, value=-step_size)


def _fused_adam(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs, state_steps, *, amsgrad,
                beta1, beta2, lr, weight_decay, eps, maximize, differentiable,
                decoupled_weight_decay, grad_scale=None, found_inf=None):
    if not params:
        return
    kernel = pith._fused_adamw_ if decoupled_weight_decay else pith._fused_adam_
    kernel(params, grads, exp_avgs, exp_avg_sqs, max_exp_avg_sqs if amsgrad else [],
           state_steps, lr=_float(lr), beta1=_float(beta1, "beta1"),
           beta2=_float(beta2, "beta2"), weight_decay=weight_decay, eps=eps, amsgrad=amsgrad,
           maximize=maximize, grad_scale=grad_scale, found_inf=found_inf)
