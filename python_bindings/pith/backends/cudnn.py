"""pith.backends.cudnn: not built (pith has no CUDA). The flags are PyTorch's, recorded
and read back as bools, with no effect on pith's CPU kernels."""
import contextlib
from collections.abc import Iterator
from typing import Any

from ._flag import bool_flags

__all__ = ["is_available", "version", "is_acceptable", "flags", "enabled", "benchmark",
           "deterministic", "allow_tf32", "benchmark_limit"]

enabled: bool
benchmark: bool
deterministic: bool
allow_tf32: bool
benchmark_limit: int | None = None

_DEFAULTS = {"enabled": True, "benchmark": False, "deterministic": False, "allow_tf32": True}
bool_flags(__name__, _DEFAULTS, {name: f"set_{name}_cudnn" for name in _DEFAULTS})


def is_available() -> bool:
    return False


def version() -> int | None:
    """None: no cuDNN."""
    return None


def is_acceptable(tensor: Any) -> bool:
    """False: cuDNN takes no pith tensor."""
    return False


@contextlib.contextmanager
def flags(enabled: bool = False, benchmark: bool = False, benchmark_limit: int | None = 10,
          deterministic: bool = False, allow_tf32: bool = True) -> Iterator[None]:
    """Sets the flags for a ``with`` block and restores them after it, as PyTorch's."""
    import sys
    module: Any = sys.modules[__name__]
    names = ("enabled", "benchmark", "benchmark_limit", "deterministic", "allow_tf32")
    saved = {name: getattr(module, name) for name in names}
    values = (enabled, benchmark, benchmark_limit, deterministic, allow_tf32)
    try:
        for name, value in zip(names, values):
            setattr(module, name, value)
        yield
    finally:
        for name, value in saved.items():
            setattr(module, name, value)
