"""pith.__config__: how pith runs its threads and which BLAS the process loaded (PyTorch's
torch.__config__: show() and parallel_info(), plus blas_info(); and numpy's show_config(),
which pith re-exports).

See docs/python.md "Threads and the BLAS" and docs/building.md "The BLAS".
"""
import os
from typing import Any

from . import _C, _openmp_env

__all__ = ["blas_info", "parallel_info", "show", "show_config"]

# blas_info()'s threading, as show() names it.
_THREADING_SHOWN = {"openmp": "OpenMP", "pthreads": "pthreads", "sequential": "serial"}

_ENV_SHOWN = ("PITH_NUM_THREADS", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
              "OMP_WAIT_POLICY", "GOMP_SPINCOUNT")


def blas_info() -> dict[str, Any]:
    """The OpenBLAS in the process: `config` (openblas_get_config(): version, build options,
    the kernel for this CPU), `threading` ('openmp', 'pthreads' or 'sequential'),
    `num_threads`, its own thread count, which follows pith.set_num_threads, and `library`,
    the path of the file it was loaded from (None where that cannot be found)."""
    info = _C._blas_info()
    info["library"] = _blas_library()
    return info


def _blas_library() -> str | None:
    """The file of the libopenblas.so.0 that the process loaded: the library holding its
    openblas_get_config, which is the one pith calls (whatever LD_LIBRARY_PATH put in place
    of the build pith links: Note [BLAS threads]). RTLD_NOLOAD: never loads one."""
    import ctypes

    class DlInfo(ctypes.Structure):
        _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                    ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]

    try:
        blas = ctypes.CDLL("libopenblas.so.0", mode=os.RTLD_NOLOAD | os.RTLD_LAZY)
        dladdr = ctypes.CDLL(None).dladdr
    except (OSError, AttributeError):
        return None
    dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(DlInfo)]
    found = DlInfo()
    address = ctypes.cast(blas.openblas_get_config, ctypes.c_void_p).value
    if not dladdr(address, ctypes.byref(found)) or not found.dli_fname:
        return None
    return os.path.realpath(os.fsdecode(found.dli_fname))


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
    """How this pith was built and the BLAS that the process loaded: its library, its
    threading (OpenMP, pthreads or serial) and its thread count. pith.show_config() prints
    it."""
    from . import __version__
    blas = blas_info()
    threading = _THREADING_SHOWN.get(blas["threading"], blas["threading"])
    return (f"pith {__version__}:\n  - C11 library with OpenMP (libgomp)\n"
            f"  - BLAS: {blas['config']} ({blas['threading']} build)\n"
            f"    - library: {blas['library'] or '[not found]'}\n"
            f"    - threading: {threading}\n"
            f"    - threads: {blas['num_threads']} "
            f"(pith.get_num_threads(): {_C.get_num_threads()})\n")


def show_config() -> None:
    """Prints show(), as numpy.show_config() prints NumPy's (pith.show_config())."""
    print(show(), end="")
