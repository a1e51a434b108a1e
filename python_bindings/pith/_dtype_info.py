"""pith.finfo and pith.iinfo: the numerical limits of a dtype, as torch.finfo and
torch.iinfo report them. Every value is derived from the C dtype table (core/dtype.c):
a float's mantissa digits and largest exponent (dtype._float_format), an integer's size
and signedness."""
import math

from . import _C

__all__ = ["finfo", "iinfo"]


class finfo:
    """torch.finfo(dtype=None): bits, eps, max, min, tiny (= smallest_normal), resolution
    and dtype of a floating dtype (the default dtype when None)."""

    __slots__ = ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                 "dtype")

    bits: int
    eps: float
    max: float
    min: float
    tiny: float
    smallest_normal: float
    resolution: float
    dtype: str

    def __init__(self, type: object = None) -> None:
        dtype = _C.get_default_dtype() if type is None else type
        if not isinstance(dtype, _C.dtype):
            raise TypeError(f"finfo(): argument 'type' must be pith.dtype, not "
                            f"{dtype.__class__.__name__}")
        float_format = dtype._float_format
        if float_format is None:
            raise TypeError("pith.finfo() requires a floating point input type. Use "
                            "pith.iinfo to handle 'pith.finfo'")
        digits, max_exponent = float_format
        self.bits = dtype.itemsize * 8
        self.eps = math.ldexp(1.0, 1 - digits)
        self.max = math.ldexp(1.0 - math.ldexp(1.0, -digits), max_exponent)
        self.min = -self.max
        self.tiny = self.smallest_normal = math.ldexp(1.0, 2 - max_exponent)
        self.resolution = 10.0 ** -math.floor((digits - 1) * math.log10(2))
        self.dtype = repr(dtype).removeprefix("pith.")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, finfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("finfo", self.dtype))

    def __repr__(self) -> str:
        return (f"finfo(resolution={self.resolution:g}, min={self.min:g}, max={self.max:g}, "
                f"eps={self.eps:g}, smallest_normal={self.smallest_normal:g}, "
                f"tiny={self.tiny:g}, dtype={self.dtype})")


class iinfo:
    """torch.iinfo(dtype): bits, min, max and dtype of an integer dtype (not bool, as in
    PyTorch)."""

    __slots__ = ("bits", "min", "max", "dtype")

    bits: int
    min: int
    max: int
    dtype: str

    def __init__(self, type: object) -> None:
        if not isinstance(type, _C.dtype):
            raise TypeError(f"iinfo(): argument 'type' must be pith.dtype, not "
                            f"{type.__class__.__name__}")
        if type.is_floating_point:
            raise TypeError("pith.iinfo() requires an integer input type. Use pith.finfo "
                            "to handle 'pith.iinfo'")
        if type == _C.bool:
            raise TypeError("pith.bool is not supported by pith.iinfo")
        self.bits = type.itemsize * 8
        if type.is_signed:
            self.min, self.max = -(1 << (self.bits - 1)), (1 << (self.bits - 1)) - 1
        else:
            self.min, self.max = 0, (1 << self.bits) - 1
        self.dtype = repr(type).removeprefix("pith.")

    def __eq__(self, other: object) -> bool:
        return isinstance(other, iinfo) and self.dtype == other.dtype

    def __hash__(self) -> int:
        return hash(("iinfo", self.dtype))

    def __repr__(self) -> str:
        return f"iinfo(min={self.min:g}, max={self.max:g}, dtype={self.dtype})"
