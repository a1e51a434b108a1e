"""A deterministic proof that kernels run without the GIL (no timing involved).

pith_testing::wait_for_flag's kernel returns only once _C._testing_set_flag(True) has been
called, and the only caller is another Python thread, which needs the GIL to run. So the op
returns if and only if the bindings released the GIL around the kernel; if they did not, the
kernel's timeout (a fail-safe, not a measurement) turns the deadlock into a RuntimeError.
See python_bindings/_C/testing.c.
"""
import sys
import threading

import pytest

import pith
from pith import _C

GIL_RELEASE_NUMEL = 32768  # PITH_GIL_RELEASE_NUMEL, python_bindings/_C/state.h


@pytest.fixture
def wait_op():
    _C._testing_register_ops()
    _C._testing_set_flag(False)
    # A switch interval far longer than the test: the main thread gives up the GIL only
    # when it blocks or when a kernel releases it, never on a timer. So the setter thread,
    # released by `go` just before the op is called, can run during the op only if the
    # kernel released the GIL.
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    yield pith.ops.pith_testing.wait_for_flag
    sys.setswitchinterval(interval)
    _C._testing_set_flag(False)


def _call_with_setter(op, x, timeout):
    go = threading.Event()

    def setter():
        go.wait()
        _C._testing_set_flag(True)

    thread = threading.Thread(target=setter)
    thread.start()
    try:
        go.set()
        return op(x, timeout=timeout)
    finally:
        _C._testing_set_flag(True)  # never leave the kernel waiting
        thread.join()


def test_large_kernel_releases_the_gil(wait_op):
    x = pith.zeros(GIL_RELEASE_NUMEL)
    out = _call_with_setter(wait_op, x, timeout=60.0)
    assert out is x


def test_small_kernel_keeps_the_gil(wait_op):
    # Below the threshold the GIL stays held, so the setter cannot run while the kernel
    # waits and the kernel's fail-safe fires: the test above can fail.
    x = pith.zeros(4)
    with pytest.raises(RuntimeError, match="flag was not set"):
        _call_with_setter(wait_op, x, timeout=0.2)


def test_wait_op_schema(wait_op):
    assert wait_op.name == "pith_testing::wait_for_flag"
    assert "float timeout=30" in wait_op.schema
