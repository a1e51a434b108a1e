"""pith.nn.init: in-place initialisers, named as in torch.nn.init.

They draw from pith's generator (pith.manual_seed), so the values differ from PyTorch's for
the same seed; the distributions are the same.
"""
import math

from .. import _C
from .._ops import ops


def _fill_from(tensor, values):
    ops.pith.copy_(tensor, values)
    return tensor


def _random_dtype(tensor):
    # Draw in the tensor's dtype when it is a float; otherwise in the default dtype, and
    # copy_ converts.
    return tensor.dtype if tensor.dtype.is_floating_point else _C.get_default_dtype()


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills `tensor` with values drawn from U(a, b)."""
    if generator is not None:
        raise NotImplementedError("uniform_(): generator= is not supported")
    values = _C.rand(tuple(tensor.shape), dtype=_random_dtype(tensor))
    return _fill_from(tensor, values * (b - a) + a)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills `tensor` with values drawn from N(mean, std**2)."""
    if generator is not None:
        raise NotImplementedError("normal_(): generator= is not supported")
    values = _C.randn(tuple(tensor.shape), dtype=_random_dtype(tensor))
    return _fill_from(tensor, values * std + mean)


def constant_(tensor, val):
    return _fill_from(tensor, _C.full((), val, dtype=tensor.dtype))


def zeros_(tensor):
    return constant_(tensor, 0)


def ones_(tensor):
    return constant_(tensor, 1)


def _calculate_fan_in_and_fan_out(tensor):
    if tensor.dim() < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer "
                         "than 2 dimensions")
    receptive_field_size = 1
    for s in tuple(tensor.shape)[2:]:
        receptive_field_size *= s
    return tensor.shape[1] * receptive_field_size, tensor.shape[0] * receptive_field_size


def calculate_gain(nonlinearity, param=None):
    linear_fns = ("linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d")
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif isinstance(param, (int, float)) and not isinstance(param, bool):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope**2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Fills `tensor` from U(-bound, bound), bound = gain * sqrt(3 / fan), as PyTorch."""
    if 0 in tuple(tensor.shape):
        return tensor
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    bound = math.sqrt(3.0) * calculate_gain(nonlinearity, a) / math.sqrt(fan)
    return uniform_(tensor, -bound, bound, generator)
