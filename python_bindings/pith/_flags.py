"""Process settings that PyTorch programs set and read: the default device, deterministic
algorithms and the float32 matmul precision (pith.backends reads the latter too).

pith honours each as far as it means anything on the CPU: the default device is the CPU,
which is where pith's factories make tensors; pith's kernels are deterministic (for a given
thread count), so asking for deterministic algorithms changes nothing; float32 matmuls run
in float32 whatever precision is allowed. The settings are recorded and read back as
PyTorch's are (per interpreter; the default device per thread, as PyTorch's).
"""
import builtins
from _thread import _local as _thread_local  # threading.local, without importing threading

from . import _C

__all__ = ["set_default_device", "get_default_device", "use_deterministic_algorithms",
           "are_deterministic_algorithms_enabled",
           "is_deterministic_algorithms_warn_only_enabled", "set_deterministic_debug_mode",
           "get_deterministic_debug_mode", "set_float32_matmul_precision",
           "get_float32_matmul_precision"]

_default_device = _thread_local()


def set_default_device(device):
    """Sets the device of the factories in this thread: a CPU device, or None for the
    default (the CPU). Other devices raise, as pith's factories would."""
    _default_device.device = _C._cpu_device(device, "set_default_device")


def get_default_device():
    """The device set with set_default_device when it has an index, else
    pith.device('cpu'), as PyTorch's."""
    device = getattr(_default_device, "device", None)
    return device if device is not None and device.index is not None else _C.device("cpu")


_deterministic = {"mode": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Records whether deterministic algorithms are required (pith's always are)."""
    for name, value in (("'mode' (position 1)", mode), ("'warn_only'", warn_only)):
        if not isinstance(value, builtins.bool):
            raise TypeError(f"_set_deterministic_algorithms(): argument {name} must be "
                            f"bool, not {type(value).__name__}")
    _deterministic["mode"], _deterministic["warn_only"] = mode, warn_only


def are_deterministic_algorithms_enabled():
    return _deterministic["mode"]


def is_deterministic_algorithms_warn_only_enabled():
    return _deterministic["warn_only"]


_DEBUG_MODES = {"default": 0, "warn": 1, "error": 2}


def set_deterministic_debug_mode(debug_mode):
    """0 / 'default', 1 / 'warn' or 2 / 'error': use_deterministic_algorithms off, on with
    warn_only, on."""
    if not isinstance(debug_mode, (builtins.int, str)):
        raise TypeError(f"debug_mode must be str or int, but got {type(debug_mode)}")
    if isinstance(debug_mode, str):
        if debug_mode not in _DEBUG_MODES:
            raise RuntimeError(f"invalid value of debug_mode, expected one of `default`, "
                               f"`warn`, `error`, but got {debug_mode}")
        debug_mode = _DEBUG_MODES[debug_mode]
    if debug_mode not in (0, 1, 2):
        raise RuntimeError(f"invalid value of debug_mode, expected 0, 1, or 2, but got "
                           f"{debug_mode}")
    use_deterministic_algorithms(debug_mode != 0, warn_only=debug_mode == 1)


def get_deterministic_debug_mode():
    if not _deterministic["mode"]:
        return 0
    return 1 if _deterministic["warn_only"] else 2


_matmul = {"precision": "highest"}


def set_float32_matmul_precision(precision):
    """'highest', 'high' or 'medium': the precision float32 matmuls may use (pith's are
    float32 at every setting). Another str warns and changes nothing, as in PyTorch."""
    if not isinstance(precision, str):
        raise RuntimeError(f"set_float32_matmul_precision expects a str, but got "
                           f"{type(precision).__name__}")
    if precision not in ("highest", "high", "medium"):
        import warnings  # here: `import pith` imports this module (docs/python.md "Import cost")
        warnings.warn(f"{precision} is not one of 'highest', 'high', or 'medium'; the current "
                      f"setFloat32MatmulPrecision call has no effect.", UserWarning,
                      stacklevel=2)
        return
    _matmul["precision"] = precision


def get_float32_matmul_precision():
    return _matmul["precision"]
