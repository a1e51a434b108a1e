"""Gradient clipping, as torch.nn.utils.clip_grad: clip_grad_norm_ (get_total_norm then
clip_grads_with_norm_) and clip_grad_value_. They run under no_grad and change .grad in place.

As PyTorch's foreach path, the total norm is the norm of the per-gradient norms: one
reduction per gradient, grouped by (device, dtype) in first-seen order, then one over the
stacked norms. foreach=True and foreach=None take that path; foreach=False computes the same
norms one gradient at a time (the arithmetic is the same in pith).
"""
import functools
import math
import types
import warnings

from ... import _C
from ..._grad_mode import no_grad
from ._norms import vector_norm

Tensor = _C.Tensor

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grad_value_"]


def _no_grad(func):
    # A wrapper rather than @no_grad(), so that stacklevels count as PyTorch's do.
    def _no_grad_wrapper(*args, **kwargs):
        with no_grad():
            return func(*args, **kwargs)

    functools.update_wrapper(_no_grad_wrapper, func)
    return _no_grad_wrapper


def _group_by_device_and_dtype(tensors):
    groups = {}
    for t in tensors:
        groups.setdefault((t.device.type, t.dtype), []).append(t)
    return groups


@_no_grad
def _get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of the tensors taken together, as if their norms were one vector (a 0-dim
    tensor); norm_type may be inf. error_if_nonfinite: raise if it is nan or +-inf."""
    if isinstance(tensors, Tensor):
        tensors = [tensors]
    else:
        tensors = list(tensors)
    norm_type = float(norm_type)
    if len(tensors) == 0:
        return _C.tensor(0.0)
    norms = []
    for device_tensors in _group_by_device_and_dtype(tensors).values():
        if norm_type == math.inf and foreach is not False and any(
                g.numel() == 0 for g in device_tensors):
            # The message of PyTorch's foreach path, which the others take.
            raise RuntimeError("_foreach_norm cannot compute the infinity norm on an empty "
                               "tensor because the operation does not have an identity")
        norms.extend(vector_norm(g, norm_type) for g in device_tensors)
    total_norm = vector_norm(_C.stack(norms), norm_type)
    if error_if_nonfinite and bool(_C.logical_or(total_norm.isnan(), total_norm.isinf())):
        raise RuntimeError(
            f"The total norm of order {norm_type} for gradients from "
            "`parameters` is non-finite, so it cannot be clipped. To disable "
            "this error and scale the gradients by the non-finite norm anyway, "
            "set `error_if_nonfinite=False`")
    return total_norm


@_no_grad
def _clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scales the gradients of `parameters` in place by min(max_norm / (total_norm + 1e-6),
    1), total_norm being precomputed (get_total_norm)."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    grads = [p.grad for p in parameters if p.grad is not None]
    max_norm = float(max_norm)
    if len(grads) == 0:
        return
    clip_coef = max_norm / (total_norm + 1e-6)
    # Multiplying by a coefficient clamped to 1 is redundant but, as PyTorch's, avoids a
    # data-dependent branch.
    clip_coef_clamped = _C.clamp(clip_coef, max=1.0)
    for device_grads in _group_by_device_and_dtype(grads).values():
        for g in device_grads:
            g.mul_(clip_coef_clamped)


@_no_grad
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Clips the gradient norm of `parameters` (a tensor or an iterable of them) to max_norm
    in place, the norm being taken over all gradients together; returns that total norm (a
    0-dim tensor). norm_type may be inf; error_if_nonfinite raises on a nan or inf norm."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    else:
        is_generator = isinstance(parameters, types.GeneratorType)
        parameters = list(parameters)  # a generator is consumed once
        if is_generator and len(parameters) == 0:
            warnings.warn("`parameters` is an empty generator, no gradient clipping will "
                          "occur.", stacklevel=3)
    grads = [p.grad for p in parameters if p.grad is not None]
    total_norm = _get_total_norm(grads, norm_type, error_if_nonfinite, foreach)
    _clip_grads_with_norm_(parameters, max_norm, total_norm, foreach)
    return total_norm


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """Deprecated: clip_grad_norm_."""
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


@_no_grad
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamps the gradients of `parameters` to [-clip_value, clip_value] in place."""
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    clip_value = float(clip_value)
    grads = [p.grad for p in parameters if p.grad is not None]
    for device_grads in _group_by_device_and_dtype(grads).values():
        for grad in device_grads:
            grad.clamp_(min=-clip_value, max=clip_value)
