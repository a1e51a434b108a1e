"""repr(pith.Tensor) in PyTorch's format (torch/_tensor_str.py), and the print options.

The layout rules are PyTorch's, step for step: one _Formatter picks the element width,
integer mode (`1.`) and scientific mode from the values that will be shown; tensors over
`threshold` elements are summarised to `edgeitems` rows at each end of every dimension
with `...` between; rows wrap at `linewidth`; suffixes (size, dtype, device) follow the
same rules. Values are read with tolist() on views: a summarised tensor reads only its
edge items, never the whole tensor (see Note [Reading only the edges]).
"""
import math
import sys

from . import _C


class _PrinterOptions:
    """The print options. A plain class, not a dataclass: `dataclasses` (and the `inspect`
    it imports) would double the time of `import pith` (docs/python.md)."""
    __slots__ = ("precision", "threshold", "edgeitems", "linewidth", "sci_mode")

    def __init__(self, precision=4, threshold=1000, edgeitems=3, linewidth=80,
                 sci_mode=None):
        self.precision, self.threshold, self.edgeitems = precision, threshold, edgeitems
        self.linewidth, self.sci_mode = linewidth, sci_mode

    def as_dict(self):
        return {name: getattr(self, name) for name in self.__slots__}


PRINT_OPTS = _PrinterOptions()

_PROFILES = {
    "default": dict(precision=4, threshold=1000, edgeitems=3, linewidth=80),
    "short": dict(precision=2, threshold=1000, edgeitems=2, linewidth=80),
    "full": dict(precision=4, threshold=math.inf, edgeitems=3, linewidth=80),
}


def set_printoptions(precision=None, threshold=None, edgeitems=None, linewidth=None,
                     profile=None, sci_mode=None):
    """Set options for printing tensors, as torch.set_printoptions.

    profile is one of 'default', 'short', 'full' and is applied first; the other
    arguments override it. sci_mode=None (the default, also when not given) lets the
    formatter choose scientific notation."""
    if profile is not None:
        # PyTorch ignores an unknown profile name; so do we.
        for key, value in _PROFILES.get(profile, {}).items():
            setattr(PRINT_OPTS, key, value)
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions():
    """The current print options, as keyword arguments for set_printoptions."""
    return PRINT_OPTS.as_dict()


class printoptions:
    """Temporarily change the print options (the arguments of set_printoptions):
    `with printoptions(precision=2): ...`."""

    def __init__(self, **kwargs):
        self._kwargs = kwargs
        self._old = None

    def __enter__(self):
        self._old = get_printoptions()
        set_printoptions(**self._kwargs)

    def __exit__(self, *exc):
        set_printoptions(**self._old)
        return False


class _Formatter:
    """PyTorch's _Formatter, on a flat list of the Python values that will be printed."""

    def __init__(self, values, floating):
        self.floating_dtype = floating
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if not floating:
            for v in values:
                self.max_width = max(self.max_width, len(f"{v}"))
            return
        nonzero_finite = [v for v in values if math.isfinite(v) and v != 0]
        if not nonzero_finite:
            return
        magnitudes = [abs(v) for v in nonzero_finite]
        lo, hi = min(magnitudes), max(magnitudes)
        self.int_mode = all(v == math.ceil(v) for v in nonzero_finite)
        if PRINT_OPTS.sci_mode is None:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        else:
            self.sci_mode = PRINT_OPTS.sci_mode
        precision = PRINT_OPTS.precision
        if self.sci_mode:
            widths = (len(f"{v:.{precision}e}") for v in nonzero_finite)
        elif self.int_mode:
            widths = (len(f"{v:.0f}") + 1 for v in nonzero_finite)
        else:
            widths = (len(f"{v:.{precision}f}") for v in nonzero_finite)
        self.max_width = max(self.max_width, max(widths))

    def format(self, value):
        if self.floating_dtype:
            precision = PRINT_OPTS.precision
            if self.sci_mode:
                text = f"{value:{self.max_width}.{precision}e}"
            elif self.int_mode:
                text = f"{value:.0f}"
                if math.isfinite(value):
                    text += "."
            else:
                text = f"{value:.{precision}f}"
        else:
            text = f"{value}"
        return text.rjust(self.max_width)


class _Skipped:
    """Where a summarised dimension leaves out its middle."""


_SKIPPED = _Skipped()


# Note [Reading only the edges]
# PyTorch builds the formatter from get_summarized_data (a cat/stack of the edge items) and
# prints rows selected by indexing, so a summarised tensor never reads its middle. We do the
# same in one pass: _gather returns the nested lists tolist() would, except that each
# summarised dimension keeps its first and last `edgeitems` entries with _SKIPPED between,
# and it reads them through views (narrow/select), so printing a 10^8-element tensor costs
# a few dozen small tolist() calls.
def _gather(t, summarize):
    if not summarize or t.dim() == 0:
        return t.tolist()
    edge = PRINT_OPTS.edgeitems
    n = t.size(0)
    if n > 2 * edge:
        if t.dim() == 1:
            return t.narrow(0, 0, edge).tolist() + [_SKIPPED] + t.narrow(0, n - edge, edge).tolist()
        rows = list(range(edge)) + [None] + list(range(n - edge, n))
    else:
        rows = range(n)
    if t.dim() == 1:
        return t.tolist()
    return [_SKIPPED if i is None else _gather(t.select(0, i), summarize) for i in rows]


def _flatten(nested, ndim):
    flat = nested
    for _ in range(ndim - 1):
        flat = [v for row in flat if row is not _SKIPPED for v in row]
    return [v for v in flat if v is not _SKIPPED]


def _vector_str(values, indent, formatter):
    element_length = formatter.max_width + 2
    per_line = max(1, math.floor((PRINT_OPTS.linewidth - indent) / element_length))
    data = [" ..." if v is _SKIPPED else formatter.format(v) for v in values]
    lines = [", ".join(data[i:i + per_line]) for i in range(0, len(data), per_line)]
    return "[" + ("," + "\n" + " " * (indent + 1)).join(lines) + "]"


def _nested_str(values, ndim, indent, formatter):
    if ndim == 0:
        return formatter.format(values)
    if ndim == 1:
        return _vector_str(values, indent, formatter)
    slices = ["..." if row is _SKIPPED else _nested_str(row, ndim - 1, indent + 1, formatter)
              for row in values]
    return "[" + ("," + "\n" * (ndim - 1) + " " * (indent + 1)).join(slices) + "]"


def _tensor_str(t, indent):
    if t.numel() == 0:
        return "[]"
    summarize = t.numel() > PRINT_OPTS.threshold
    if summarize and not PRINT_OPTS.edgeitems and t.dim() > 0:
        return "[...]"
    values = _gather(t, summarize)
    formatter = _Formatter(_flatten(values, t.dim()) if t.dim() else [values],
                           t.dtype.is_floating_point)
    return _nested_str(values, t.dim(), indent, formatter)


def _add_suffixes(tensor_str, suffixes, indent):
    parts = [tensor_str]
    # PyTorch's count (one more than the last line's length when there is no newline).
    last_line_len = len(tensor_str) - tensor_str.rfind("\n") + 1
    for suffix in suffixes:
        if last_line_len + len(suffix) + 2 > PRINT_OPTS.linewidth:
            parts.append(",\n" + " " * indent + suffix)
            last_line_len = indent + len(suffix)
        else:
            parts.append(", " + suffix)
            last_line_len += len(suffix) + 2
    parts.append(")")
    return "".join(parts)


def _parameter_type():
    # pith.nn is optional here: printing a tensor must not import it.
    nn = sys.modules.get("pith.nn")
    return getattr(nn, "Parameter", None)


def tensor_repr(t):
    parameter = _parameter_type()
    is_plain = type(t) is _C.Tensor or (parameter is not None and type(t) is parameter)
    prefix = "tensor(" if is_plain else f"{type(t).__name__}("
    indent = len(prefix)
    dtype = t.dtype
    default_dtype = _C.get_default_dtype()
    suffixes = []
    device = str(t.device)
    if device != "cpu":
        suffixes.append(f"device='{device}'")
    if device == "meta":
        suffixes.append(f"size={tuple(t.shape)}")
        if dtype != default_dtype:
            suffixes.append(f"dtype={dtype}")
        body = "..."
    elif t.numel() == 0:
        # Print the shape unless it is (0,), as NumPy does; the dtype cannot be guessed
        # from no elements, so anything but the default float dtype is shown.
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if dtype != default_dtype:
            suffixes.append(f"dtype={dtype}")
        body = "[]"
    else:
        if not PRINT_OPTS.edgeitems:
            suffixes.append(f"size={tuple(t.shape)}")
        if dtype not in (default_dtype, _C.int64, _C.bool):
            suffixes.append(f"dtype={dtype}")
        body = _tensor_str(t, indent)
    grad_fn = getattr(t, "grad_fn", None)
    if grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(grad_fn).__name__}>")
    elif getattr(t, "requires_grad", False) is True:
        suffixes.append("requires_grad=True")
    text = _add_suffixes(prefix + body, suffixes, indent)
    if parameter is not None and isinstance(t, parameter) and not is_plain:
        text = f"Parameter({text})"
    return text
