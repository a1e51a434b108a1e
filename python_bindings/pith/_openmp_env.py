"""The OpenMP wait policy that pith gives libgomp when it loads; used once, by pith/__init__.py."""
import os

# Note [OpenMP wait policy]
# After a parallel region, libgomp's idle workers spin before they sleep: 300000 spins
# (about 3 ms here) unless OMP_WAIT_POLICY or GOMP_SPINCOUNT says otherwise. While they spin
# they hold the other cores, so anything else that wants them in that time waits: the
# threads of another BLAS pool (NumPy's, or a pthread OpenBLAS that a user put in place of
# the OpenMP one: Note [BLAS threads]), another process, or torch's own OpenMP pool. Sleeping
# at once (OMP_WAIT_POLICY=PASSIVE) costs a futex wake-up at the start of every region
# instead, which back-to-back elementwise ops pay again and again.
# Spinning longer also has a cost of its own on a virtual machine: after an idle pause, the
# first region wakes a worker whose vCPU the host has given away, and while it is late the
# master stops spinning at the region's end and sleeps too; each then wakes the other late,
# region after region, so a burst of ops after a pause can run slower with 2 threads than
# with 1. libgomp's long spin (300000) ends that once both spin again, but holds the cores
# from NumPy's threads for milliseconds. The choices, measured by benchmarks/threads.py
# (2 vCPUs, 2 threads, the OpenMP OpenBLAS, medians of 3 rounds, times per step; the last
# two columns time 10 calls after a pause, of layer_norm on (4, 256, 256) and of x + y on
# (4, 64, 768)):
#
#   GOMP_SPINCOUNT  GPT 4x256  MLP b=1  16 ops   MLP + NumPy  layer_norm  x + y
#   300000          19.1 ms    54 us    0.67 ms  15.7 ms      1.15 ms     0.46 ms
#   10000           20.8 ms    67 us    0.70 ms  2.63 ms      7.64 ms     0.87 ms
#   3000            18.6 ms    61 us    0.70 ms  1.69 ms      3.52 ms     0.86 ms
#   1000            19.1 ms    60 us    0.69 ms  1.38 ms      2.40 ms     1.35 ms
#   PASSIVE         22.1 ms    265 us   2.04 ms  1.21 ms      1.87 ms     0.90 ms
#   (1 thread)      30.6 ms    64 us    1.23 ms  1.21 ms      1.67 ms     0.75 ms
#
# No count is best everywhere, and the short ones lose the most where it is most common: a
# program that pauses (for Python work, I/O or data loading) and then runs a burst of ops.
# There vecmath.py's loops (200 calls after a 50 ms pause) time pith's x + y on (4, 64, 768)
# at 2 threads at 115-215 us with 1000 or 3000 spins, against 34 us for torch, whose
# libgomp spins 300000. So pith's default is libgomp's own, 300000, the wait policy that
# PyTorch runs with, set explicitly so that it does not depend on libgomp's version. Its
# cost is the contention above: a program that alternates pith's ops with NumPy's matmuls
# (or any other pool's) gets them at 2 threads slower than at 1 (15.7 ms against 1.2 ms in
# the table), as it would with torch; such a program sets GOMP_SPINCOUNT=3000, or
# OMP_WAIT_POLICY=PASSIVE, before it imports pith, and pith leaves the setting alone.
DEFAULTS = {"GOMP_SPINCOUNT": "300000"}
_VARIABLES = ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")

# How libgomp got its wait policy: (who, the variables' values at load).
_applied: tuple[str, dict[str, str]] = ("not loaded yet", {})


def _libgomp_loaded() -> bool:
    """Whether a libgomp.so.1 (the SONAME that libpith needs) is in the process already:
    Debian's (libgomp.so.1.0.0) or torch's (torch/lib/libgomp.so.1). Copies renamed by
    auditwheel (libgomp-<hash>.so.1) are other runtimes, which libpith does not use."""
    try:
        with open("/proc/self/maps") as maps:
            return any("/libgomp.so.1" in line for line in maps)
    except OSError:
        return False


class loading_defaults:
    """`with loading_defaults(): from . import _C` gives libgomp pith's DEFAULTS while it
    loads (see the Note above)."""

    def __enter__(self) -> "loading_defaults":
        global _applied
        self._set = False
        user = {v: os.environ[v] for v in _VARIABLES if v in os.environ}
        if user:
            _applied = ("the environment", user)
        elif _libgomp_loaded():
            _applied = ("libgomp was loaded before pith; its defaults", {})
        else:
            os.environ.update(DEFAULTS)
            self._set = True
            _applied = ("pith's default", dict(DEFAULTS))
        return self

    def __exit__(self, *exc: object) -> None:
        if self._set:
            for var in DEFAULTS:
                os.environ.pop(var, None)


def describe() -> str:
    """One line: the wait policy libgomp got, and from whom."""
    who, values = _applied
    settings = ", ".join(f"{k}={v}" for k, v in values.items())
    return f"{settings} ({who})" if settings else who
