"""pith.accelerator: PyTorch's torch.accelerator as PyTorch answers it on a machine with no
accelerator. pith runs on the CPU, which is no accelerator: current_accelerator() is None,
device_count() is 0, and what needs an accelerator raises PyTorch's RuntimeError ("Cannot
access accelerator device when none is available.").
"""
from types import TracebackType
from typing import Any, NoReturn

from . import _C

__all__ = ["is_available", "current_accelerator", "device_count", "current_device_index",
           "set_device_index", "device_index", "synchronize", "empty_cache",
           "memory_allocated", "max_memory_allocated", "memory_reserved",
           "max_memory_reserved", "reset_peak_memory_stats"]


def _no_accelerator() -> NoReturn:
    _C._cpu_device(0, "pith.accelerator")  # an accelerator index: raises PyTorch's error
    raise AssertionError("unreachable: pith has no accelerator")


def is_available() -> bool:
    return False


def current_accelerator(check_available: bool = False) -> Any:
    """None: pith was built for no accelerator."""
    return None


def device_count() -> int:
    return 0


def current_device_index() -> int:
    _no_accelerator()


def set_device_index(device: Any, /) -> None:
    if device is None:
        raise ValueError(f"Expected a torch.device with a specified index or an integer, but "
                         f"got:{device}")
    _no_accelerator()


class device_index:
    """``with device_index(i):``: None changes nothing; an index raises, as there is no
    accelerator."""

    def __init__(self, device: int | None, /) -> None:
        self.idx = device

    def __enter__(self) -> None:
        if self.idx is not None:
            _no_accelerator()

    def __exit__(self, exc_type: type[BaseException] | None, exc_value: BaseException | None,
                 traceback: TracebackType | None) -> None:
        return None


def synchronize(device: Any = None, /) -> None:
    _no_accelerator()


def empty_cache() -> None:
    _no_accelerator()


def memory_allocated(device_index: Any = None, /) -> int:
    _no_accelerator()


def max_memory_allocated(device_index: Any = None, /) -> int:
    _no_accelerator()


def memory_reserved(device_index: Any = None, /) -> int:
    _no_accelerator()


def max_memory_reserved(device_index: Any = None, /) -> int:
    _no_accelerator()


def reset_peak_memory_stats(device_index: Any = None, /) -> None:
    _no_accelerator()
