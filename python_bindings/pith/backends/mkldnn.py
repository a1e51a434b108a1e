"""pith.backends.mkldnn: oneDNN is not built into pith (its matmuls use OpenBLAS). The
flags are PyTorch's, recorded and read back as bools, with no effect."""
from ._flag import bool_flags

__all__ = ["is_available", "enabled", "deterministic"]

enabled: bool
deterministic: bool

_DEFAULTS = {"enabled": True, "deterministic": False}
bool_flags(__name__, _DEFAULTS, {name: f"set_{name}_mkldnn" for name in _DEFAULTS})


def is_available() -> bool:
    return False
