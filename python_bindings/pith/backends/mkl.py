"""pith.backends.mkl: pith does not use MKL (its BLAS is OpenBLAS)."""

__all__ = ["is_available"]


def is_available() -> bool:
    return False
