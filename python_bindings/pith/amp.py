"""pith.amp: torch.amp's autocast, for the code paths that turn it off or ask for it on a
device that pith does not have.

pith has no autocast: every op runs in the dtypes it is given. So
- `autocast(..., enabled=False)` (rotary embeddings and attention code wrap their float32
  sections in it) is a context manager and decorator that changes nothing, as in PyTorch;
- `autocast("cuda")` (and any device type pith has no device for) warns, as PyTorch
  without CUDA does, and is disabled;
- `autocast("cpu")` enabled would run matmuls and linears in bfloat16 in PyTorch; pith
  refuses it with NotImplementedError rather than compute in other dtypes than asked.
"""
import functools
import warnings
from types import TracebackType
from typing import Any, Callable, TypeVar

from . import _C

_F = TypeVar("_F", bound=Callable[..., Any])

__all__ = ["autocast", "is_autocast_available"]

_DEVICE_TYPES = ("cpu", "cuda", "ipu", "xpu", "mkldnn", "opengl", "opencl", "ideep", "hip",
                 "ve", "fpga", "maia", "xla", "lazy", "vulkan", "mps", "meta", "hpu", "mtia",
                 "privateuseone")


def is_autocast_available(device_type: str) -> bool:
    """Whether autocast exists for `device_type`: False for every device, as pith has none."""
    if not isinstance(device_type, str):
        raise TypeError(f"is_autocast_available(): device_type must be a str, not "
                        f"{type(device_type).__name__}")
    return False


def is_autocast_enabled(device_type: str | None = None) -> bool:
    """False: pith never autocasts."""
    return False


class autocast:
    """torch.autocast(device_type, dtype=None, enabled=True, cache_enabled=None)."""

    def __init__(self, device_type: str, dtype: Any = None, enabled: bool = True,
                 cache_enabled: bool | None = None) -> None:
        if not isinstance(device_type, str):
            raise ValueError(f"Expected `device_type` of type `str`, got: `{type(device_type)}`")
        if device_type not in _DEVICE_TYPES:
            raise RuntimeError(f"Expected one of {', '.join(_DEVICE_TYPES)} device type at "
                               f"start of device string: {device_type}")
        self.device = device_type
        self.fast_dtype = dtype if dtype is not None else (
            _C.bfloat16 if device_type == "cpu" else _C.float16)
        enabled = bool(enabled)
        if enabled and device_type != "cpu":
            warnings.warn("CUDA is not available or torch_xla is imported. Disabling autocast."
                          if device_type == "cuda" else
                          f"User provided device_type of '{device_type}', but pith has no "
                          f"{device_type} device. Disabling autocast.", stacklevel=2)
            enabled = False
        if enabled:
            raise NotImplementedError(
                "autocast('cpu') enabled: pith has no automatic mixed precision; cast the "
                "inputs to the dtype you want instead")
        self._enabled = enabled
        self._cache_enabled = cache_enabled

    def __enter__(self) -> "autocast":
        return self

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        return None

    def __call__(self, func: _F) -> _F:
        @functools.wraps(func)
        def decorate_autocast(*args: Any, **kwargs: Any) -> Any:
            with self:
                return func(*args, **kwargs)
        return decorate_autocast  # type: ignore[return-value]

