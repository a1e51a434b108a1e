"""pith.__config__: how pith runs its threads and which BLAS the process loaded (PyTorch's
torch.__config__: show() and parallel_info(), plus blas_info()).

See docs/python.md "Threads and the BLAS".
"""
import os
from typing import Any

from . import _C, _openmp_env

__all__ = ["blas_info", "parallel_info", "show"]

_ENV_SHOWN = ("PITH_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
              "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def blas_info() -> dict[str, Any]:
    """The OpenBLAS in the process: `config` (openblas_get_config(): version, build options,
    the kernel for this CPU), `threading` ('openmp', 'pthreads' or 'sequential') and
    `num_threads`, its own thread count, which follows pith.set_num_threads."""
    return _C._blas_info()


def parallel_info() -> str:
    """A report of pith's threads, the OpenMP wait policy and the BLAS, in the layout of
    torch.__config__.parallel_info()."""
    blas = blas_info()
    lines = ["pith/Parallel:", f"\tpith.get_num_threads() : {_C.get_num_threads()}",
             "OpenMP (libgomp)", f"\twait policy : {_openmp_env.describe()}",
             f"BLAS: {blas['config']}", f"\tthreading : {blas['threading']}",
             f"\tBLAS threads : {blas['num_threads']}",
             f"os.cpu_count() : {os.cpu_count()}", "Environment variables:"]
    lines += [f"\t{var} : {os.environ.get(var, '[not set]')}" for var in _ENV_SHOWN]
    return "\n".join(lines) + "\n"


def show() -> str:
    """How this pith was built: its version and its BLAS."""
    from . import __version__
    blas = blas_info()
    return (f"pith {__version__}:\n  - C11 library with OpenMP (libgomp)\n"
            f"  - BLAS: {blas['config']} ({blas['threading']} build)\n")
