"""pith.backends: PyTorch's torch.backends switches, as pith can honour them on the CPU.

pith runs its own CPU kernels (OpenMP, OpenBLAS): the CUDA, cuDNN and MPS backends are not
built (is_available() is False everywhere but openmp), and their flags are recorded and read
back, type-checked as PyTorch's, without changing what pith computes. See docs/python.md.
"""
from . import cpu, cuda, cudnn, mkl, mkldnn, mps, openmp

__all__ = ["cpu", "cuda", "cudnn", "mkl", "mkldnn", "mps", "openmp"]
