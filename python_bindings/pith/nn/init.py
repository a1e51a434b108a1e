"""pith.nn.init: in-place initialisers, named as in torch.nn.init.

They draw from pith's generators (pith.manual_seed, or the `generator=` given) through
Tensor.uniform_ and Tensor.normal_, so the values differ from PyTorch's for the same seed;
the distributions are the same. As PyTorch's, they write under no_grad, so that they
initialise parameters (leaves that require grad) without recording.
"""
import math

from .. import _C
from .._grad_mode import no_grad
from .._ops import ops


def _fill_from(tensor, values):
    with no_grad():
        ops.pith.copy_(tensor, values)
    return tensor


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    """Fills `tensor` with values drawn from U(a, b) (Tensor.uniform_)."""
    with no_grad():
        return tensor.uniform_(a, b, generator=generator)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    """Fills `tensor` with values drawn from N(mean, std**2) (Tensor.normal_)."""
    with no_grad():
        return tensor.normal_(mean, std, generator=generator)


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


def _kaiming_std(tensor, a, mode, nonlinearity):
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Fills `tensor` from U(-bound, bound), bound = gain * sqrt(3 / fan), as PyTorch."""
    if 0 in tuple(tensor.shape):
        return tensor
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    """Fills `tensor` from N(0, std**2), std = gain / sqrt(fan), as PyTorch."""
    if 0 in tuple(tensor.shape):
        return tensor
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def xavier_uniform_(tensor, gain=1.0, generator=None):
    """Fills `tensor` from U(-a, a), a = gain * sqrt(6 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    bound = gain * math.sqrt(6.0 / float(fan_in + fan_out))
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    """Fills `tensor` from N(0, std**2), std = gain * sqrt(2 / (fan_in + fan_out))."""
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """Fills `tensor` from N(mean, std**2) truncated to [a, b].

    Draws by rejection (values outside [a, b] are drawn again), which gives exactly the
    truncated distribution; PyTorch draws by the inverse CDF, so the values differ, as all
    of pith's random values do. A range holding under 1% of the mass would take many
    rounds and is refused."""
    def cdf(x):
        return 0.5 * (1.0 + math.erf((x - mean) / (std * math.sqrt(2.0))))
    if not a <= b:
        raise ValueError(f"trunc_normal_: a ({a}) must not exceed b ({b})")
    if std <= 0 or cdf(b) - cdf(a) < 0.01:
        raise NotImplementedError(
            f"trunc_normal_: the range [{a}, {b}] holds under 1% of N({mean}, {std}**2)'s "
            "mass; pith draws by rejection, which needs a range that is not in the far tail")
    from .. import where
    with no_grad():
        normal_(tensor, mean, std, generator)
        while True:
            outside = (tensor < a) | (tensor > b)
            if not outside.any():
                return tensor
            fresh = _C.empty(tuple(tensor.shape), dtype=tensor.dtype).normal_(
                mean, std, generator=generator)
            _fill_from(tensor, where(outside, fresh, tensor))
