"""pith.backends.cuda: not built (pith has no CUDA). `matmul` holds PyTorch's cuBLAS flags:
allow_tf32 is pith.get_float32_matmul_precision() != 'highest', as in PyTorch; the others
are recorded and read back. None changes what pith computes."""
from typing import Any

from .. import get_float32_matmul_precision, set_float32_matmul_precision

__all__ = ["is_built", "matmul"]


def is_built() -> bool:
    return False


def _reduction_setting(value: Any, name: str) -> bool:
    """A bool, or a tuple or list of one or two bools (allow_reduced_precision,
    allow_splitk), as PyTorch takes them; the first is kept."""
    items = list(value) if isinstance(value, (list, tuple)) else [value]
    if not isinstance(value, (bool, list, tuple)):
        raise TypeError(f"{name} expects a bool or a tuple/list of bools, but got "
                        f"{type(value)!r}")
    if not 1 <= len(items) <= 2:
        raise TypeError(f"{name} expects at least one boolean argument" if not items else
                        f"{name} expects at most two boolean arguments")
    for which, item in zip(("allow_reduced_precision", "allow_splitk"), items):
        if not isinstance(item, bool):
            raise TypeError(f"{name} expects a bool for {which}, but got {type(item)!r}")
    return bool(items[0])


class cuBLASModule:
    """PyTorch's torch.backends.cuda.matmul: a fixed set of flags."""

    _values = {"allow_fp16_reduced_precision_reduction": True,
              "allow_bf16_reduced_precision_reduction": True,
              "allow_fp16_accumulation": False}

    def __getattr__(self, name: str) -> bool:
        if name == "allow_tf32":
            return get_float32_matmul_precision() != "highest"
        if name in self._values:
            return self._values[name]
        raise AttributeError("Unknown attribute " + name)

    def __setattr__(self, name: str, value: Any) -> None:
        if name == "allow_tf32":
            if not isinstance(value, bool):
                raise RuntimeError(f"set_allow_tf32_cublas expects a bool, but got "
                                   f"{type(value).__name__}")
            set_float32_matmul_precision("high" if value else "highest")
        elif name == "allow_fp16_accumulation":
            if not isinstance(value, bool):
                raise RuntimeError(f"set_allow_fp16_accumulation_cublas expects a bool, but "
                                   f"got {type(value).__name__}")
            self._values[name] = value
        elif name in self._values:
            self._values[name] = _reduction_setting(value, name)
        else:
            raise AttributeError("Unknown attribute " + name)


matmul = cuBLASModule()
