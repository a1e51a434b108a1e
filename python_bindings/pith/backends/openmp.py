"""pith.backends.openmp: pith's kernels run their threads with OpenMP."""

__all__ = ["is_available"]


def is_available() -> bool:
    """True: libpith is always built with OpenMP (pith.set_num_threads sets its threads)."""
    return True
