"""pith.cuda: PyTorch's torch.cuda as a PyTorch built without CUDA answers it. pith tensors
live on the CPU, so `device = 'cuda' if pith.cuda.is_available() else 'cpu'` picks the CPU.

What PyTorch answers without CUDA, this module answers (is_available() is False,
device_count() is 0, the seeding functions and empty_cache() do nothing, the memory counters
are 0); what PyTorch refuses without CUDA (current_device(), synchronize(), ...) raises the
same AssertionError as pith.zeros(2, device='cuda') (See Note [Device arguments] in
python_bindings/_C/device.c).
"""
from typing import Any, NoReturn

from . import _C

__all__ = ["is_available", "device_count", "is_initialized", "init", "current_device",
           "set_device", "synchronize", "empty_cache", "is_bf16_supported",
           "is_tf32_supported", "manual_seed", "manual_seed_all", "seed", "seed_all",
           "initial_seed", "get_device_name", "get_device_capability",
           "get_device_properties", "get_arch_list", "memory_allocated",
           "max_memory_allocated", "memory_reserved", "max_memory_reserved",
           "get_rng_state", "set_rng_state", "get_rng_state_all"]


def _no_cuda(fn: str) -> NoReturn:
    _C._cpu_device("cuda", f"pith.cuda.{fn}")
    raise AssertionError("unreachable: pith has no CUDA device")  # _cpu_device raised


def is_available() -> bool:
    """False: pith has no CUDA."""
    return False


def device_count() -> int:
    return 0


def is_initialized() -> bool:
    return False


def init() -> None:
    _no_cuda("init")


def current_device() -> int:
    _no_cuda("current_device")


def set_device(device: Any) -> None:
    _no_cuda("set_device")


def synchronize(device: Any = None) -> None:
    """Raises, as PyTorch's does without CUDA."""
    _no_cuda("synchronize")


def empty_cache() -> None:
    """Nothing to free (pith's own cache is the CPU allocator's)."""


def is_bf16_supported(including_emulation: bool = True) -> bool:
    return False


def is_tf32_supported() -> bool:
    return False


def manual_seed(seed: int) -> None:
    """No CUDA generator to seed: checks `seed` is an int, as PyTorch's, and does nothing."""
    int(seed)


def manual_seed_all(seed: int) -> None:
    int(seed)


def seed() -> None:
    """No CUDA generator to seed."""


def seed_all() -> None:
    """No CUDA generator to seed."""


def initial_seed() -> int:
    _no_cuda("initial_seed")


def get_device_name(device: Any = None) -> str:
    _no_cuda("get_device_name")


def get_device_capability(device: Any = None) -> tuple[int, int]:
    _no_cuda("get_device_capability")


def get_device_properties(device: Any = None) -> Any:
    _no_cuda("get_device_properties")


def get_arch_list() -> list[str]:
    return []


def memory_allocated(device: Any = None) -> int:
    return 0


def max_memory_allocated(device: Any = None) -> int:
    return 0


def memory_reserved(device: Any = None) -> int:
    return 0


def max_memory_reserved(device: Any = None) -> int:
    return 0


def get_rng_state(device: Any = "cuda") -> Any:
    _no_cuda("get_rng_state")


def set_rng_state(new_state: Any, device: Any = "cuda") -> None:
    """No CUDA generator: nothing to set (PyTorch defers it until CUDA starts, which here it
    never does)."""


def get_rng_state_all() -> list[Any]:
    """The states of no CUDA generators."""
    return []
