"""repr(pith.Tensor), in PyTorch's format (torch/_tensor_str.py) for tensors that need no
summarisation: 4 decimals, scientific notation for wide ranges, integral floats as `1.`,
columns right-aligned, and a dtype suffix unless the dtype is the default float, int64 or
bool. Summarisation of large tensors and line wrapping are still to come."""
import math

from . import _C


def _float_format(values):
    finite = [abs(v) for v in values if math.isfinite(v) and v != 0]
    if not finite:
        return lambda v: _special(v) or "0."
    lo, hi = min(finite), max(finite)
    integral = all(math.isfinite(v) and v == math.ceil(v) for v in values)
    if integral:
        if hi / lo > 1000.0 or hi > 1.0e8:
            fmt = "{:.4e}"
        else:
            return lambda v: _special(v) or f"{v:.0f}."
    elif hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4:
        fmt = "{:.4e}"
    else:
        fmt = "{:.4f}"
    return lambda v: _special(v) or fmt.format(v)


def _special(v):
    if math.isnan(v):
        return "nan"
    if math.isinf(v):
        return "inf" if v > 0 else "-inf"
    return None


def _flatten(values, ndim):
    for _ in range(ndim - 1):
        values = [v for row in values for v in row]
    return values if ndim else [values]


def _render(values, ndim, fmt, width, indent):
    if ndim == 0:
        return fmt(values).rjust(width)
    if ndim == 1:
        return "[" + ", ".join(fmt(v).rjust(width) for v in values) + "]"
    separator = "," + "\n" * (ndim - 1) + " " * (indent + 1)
    return "[" + separator.join(_render(v, ndim - 1, fmt, width, indent + 1)
                                for v in values) + "]"


def tensor_repr(t):
    dtype = t.dtype
    ndim = t.dim()
    suffix = []
    if t.device != "cpu":
        values = None
        body = "..."
        suffix.append(f"size={tuple(t.shape)}")
    else:
        values = t.tolist()
        flat = _flatten(values, ndim)
        if dtype.is_floating_point:
            fmt = _float_format(flat)
        elif dtype == _C.bool:
            fmt = str
        else:
            fmt = str
        width = max((len(fmt(v)) for v in flat), default=0)
        body = _render(values, ndim, fmt, width, len("tensor("))
        if t.numel() == 0 and ndim > 1:
            suffix.append(f"size={tuple(t.shape)}")
    if dtype not in (_C.get_default_dtype(), _C.int64, _C.bool):
        suffix.append(f"dtype={dtype!r}")
    if t.device != "cpu":
        suffix.append(f"device='{t.device}'")
    return "tensor(" + ", ".join([body] + suffix) + ")"
