"""pith.backends.mps: Apple's Metal (MPS) backend is not built into pith."""

__all__ = ["is_available", "is_built"]


def is_available() -> bool:
    return False


def is_built() -> bool:
    return False
