"""The OpenMP wait policy that pith gives libgomp when it loads; used once, by pith/__init__.py."""
import os
from typing import Any

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
# region after region, so a burst of ops after a pause runs slower with 2 threads than with
# 1. A long spin (libgomp's 300000) ends that once both spin again; so does a short one,
# which keeps the late side from reaching the point where it sleeps and the other spins.
# pith's choice, measured by benchmarks/threads.py (2 vCPUs, 2 threads, medians of 3 rounds,
# the OpenMP OpenBLAS; times per call):
#
#   GOMP_SPINCOUNT   GPT 4x256  MLP b=1  16 elementwise ops  MLP + NumPy matmul  burst after 20 ms
#   300000           17.7 ms    56 us    0.70 ms             12.8 ms             1.4 ms
#   10000            24.1 ms    66 us    0.68 ms             2.4 ms              7.4 ms
#   3000             17.7 ms    65 us    0.69 ms             1.8 ms              3.5 ms
#   1000             19.9 ms    69 us    0.72 ms             1.2 ms              2.4 ms
#   PASSIVE          23.7 ms    284 us   2.18 ms             1.3 ms              1.8 ms
#   (1 thread)       27.9 ms    80 us    1.31 ms             1.2 ms              1.7 ms
#
# 1000 spins keep back-to-back regions in one spinning pool, as longer spins do, and leave
# the cores to NumPy's threads and to bursts after a pause nearly as PASSIVE does. It is
# DEFAULTS below. libgomp reads these variables once, when it loads, and has no API to
# change them later, so they are set in os.environ just while pith._C (and so libpith and
# libgomp) loads, and removed again at once, so that child processes see the environment as
# the user left it. It applies only when the user set neither variable, and only when no
# libgomp.so.1 is in the process yet: libpith would use that one (the loader matches the
# SONAME), whose settings were fixed when it loaded. torch 2.13's wheel carries a
# libgomp.so.1 of its own, so in a process with both, the first of the two imported loads
# the one libgomp they share, and pith's default applies to torch's threads too when pith
# came first. C programs that link libpith set the variables themselves (docs/c_api.md).
# pith.__config__.parallel_info() says which case applied.
DEFAULTS = {"GOMP_SPINCOUNT": "1000"}
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

    def __exit__(self, *exc: Any) -> None:
        if self._set:
            for var in DEFAULTS:
                os.environ.pop(var, None)


def describe() -> str:
    """One line: the wait policy libgomp got, and from whom."""
    who, values = _applied
    settings = ", ".join(f"{k}={v}" for k, v in values.items())
    return f"{settings} ({who})" if settings else who
