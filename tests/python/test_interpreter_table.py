"""The interpreter table, as far as one interpreter can see it (python_bindings/_C/interp.c).

Note [Entering an interpreter from C]: C code that drops the last reference to something this
interpreter owns may run on any thread. Here C releases from a bare pthread (no thread state:
ctypes calls pthread_create, and pthread_join without the GIL) and from this very thread after
ctypes released the GIL; the drop happens under this interpreter's GIL either way. Sub-
interpreters, teardown and the other thread-state case are in tests/embed/.
"""
import ctypes
import gc
import importlib
import os
import subprocess
import sys
import textwrap
import weakref

import pytest

import pith

LIBC = ctypes.CDLL(None)
LIBPITH = ctypes.CDLL(os.path.join(os.path.dirname(pith._C.__file__), "libpith.so.0"))
LIBPITH.pith_release.argtypes = [ctypes.c_void_p]
LIBPITH.pith_release.restype = None


def release_on_bare_thread(handle):
    """pith_release(handle) on a new pthread that has no Python thread state."""
    thread = ctypes.c_ulong()
    start = ctypes.cast(LIBPITH.pith_release, ctypes.c_void_p)
    assert LIBC.pthread_create(ctypes.byref(thread), None, start, ctypes.c_void_p(handle)) == 0
    # ctypes releases the GIL around the call: the thread needs it to drop the object.
    assert LIBC.pthread_join(thread, None) == 0


def release_without_gil(handle):
    """pith_release(handle) on this thread, with the GIL released by ctypes."""
    LIBPITH.pith_release(handle)


def export_is_released(buffer):
    """A bytearray cannot be resized while pith holds its buffer."""
    try:
        buffer.append(0)
    except BufferError:
        return False
    buffer.pop()
    return True


def imported_handle(buffer):
    """A tensor over `buffer` held by C alone: its handle (one C reference)."""
    return pith._C._testing_handle(pith.frombuffer(buffer, dtype=pith.uint8))


@pytest.mark.parametrize("release", [release_on_bare_thread, release_without_gil])
def test_imported_memory_held_by_c_alone_is_released_from_a_thread_without_the_gil(release):
    buffer = bytearray(8)
    handle = imported_handle(buffer)
    gc.collect()
    assert not export_is_released(buffer)
    release(handle)
    assert export_is_released(buffer)


def test_imported_memory_released_from_many_bare_threads_is_released_once_each():
    buffers = [bytearray(4) for _ in range(20)]
    for handle in [imported_handle(b) for b in buffers]:
        release_on_bare_thread(handle)
    assert all(export_is_released(b) for b in buffers)


@pytest.mark.skipif(not hasattr(pith._C, "_stash"), reason="needs pith._C._stash")
@pytest.mark.parametrize("release", [release_on_bare_thread, release_without_gil])
def test_preserved_wrapper_released_from_a_thread_without_the_gil_dies_in_its_interpreter(
        release):
    t = pith.ones(2)
    t.note = "kept"
    died = []
    ref = weakref.ref(t, lambda r: died.append(True))
    handle = pith._C._stash(t)
    del t
    gc.collect()
    assert ref() is not None and ref().note == "kept"
    release(handle)
    assert died == [True]
    assert ref() is None


def test_a_second_module_instance_shares_the_interpreter_table():
    first = sys.modules.pop("pith._C")
    try:
        second = importlib.import_module("pith._C")
        assert second is not first
        assert second._interpreter_name() == first._interpreter_name()
    finally:
        # importing sets the attribute on the package too: put both back
        sys.modules["pith._C"] = first
        pith._C = first


def test_the_table_is_named_by_the_interpreter_id():
    # the main interpreter's ID is 0; sub-interpreters get 1, 2, ... and never reuse one
    assert pith._C._interpreter_name() == "0"


def run_python(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True,
                          text=True, timeout=120, env=env)


def test_after_phase_1_other_threads_are_refused_and_this_thread_still_gets_in():
    # Note [Interpreter teardown]: phase 1 is an atexit callback (run early here by
    # atexit._run_exitfuncs, in a child process). From then on a bare thread's drop is
    # refused and leaks; a drop on this interpreter's own thread (its __del__ and weakref
    # callbacks during teardown) still happens.
    result = run_python("""
        import atexit, ctypes, os
        import pith
        libc = ctypes.CDLL(None)
        path = os.path.join(os.path.dirname(pith._C.__file__), "libpith.so.0")
        nogil = ctypes.CDLL(path)        # calls release the GIL
        withgil = ctypes.PyDLL(path)     # calls keep it
        for lib in (nogil, withgil):
            lib.pith_release.argtypes = [ctypes.c_void_p]
            lib.pith_release.restype = None

        def imported(buffer):
            return pith._C._testing_handle(pith.frombuffer(buffer, dtype=pith.uint8))

        def released(buffer):
            try:
                buffer.append(0)
                return True
            except BufferError:
                return False

        def on_bare_thread(handle):
            thread = ctypes.c_ulong()
            start = ctypes.cast(nogil.pith_release, ctypes.c_void_p)
            libc.pthread_create(ctypes.byref(thread), None, start, ctypes.c_void_p(handle))
            libc.pthread_join(thread, None)

        before, foreign, own = bytearray(4), bytearray(4), bytearray(4)
        on_bare_thread(imported(before))
        h_foreign, h_own = imported(foreign), imported(own)
        atexit._run_exitfuncs()
        on_bare_thread(h_foreign)
        withgil.pith_release(h_own)
        print(released(before), released(foreign), released(own))
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "True False True\n"


def test_teardown_with_imported_memory_held_by_c_exits_cleanly():
    # Phase 1 (atexit) closes the gate, phase 2 (the interpreter dict) disarms; C still
    # holds a tensor over a bytearray when the interpreter exits. Nothing may crash or hang.
    result = run_python("""
        import pith
        buffer = bytearray(8)
        handle = pith._C._testing_handle(pith.frombuffer(buffer, dtype=pith.uint8))
        kept = pith._C._testing_handle(pith.arange(3.0))
        print("ok", flush=True)
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"


def test_ops_on_subclasses_still_dispatch_on_the_own_thread_during_teardown():
    # Note [Entries and the gate]: after phase 1 closed the gate, this interpreter's own
    # thread (an atexit callback registered before pith's, hence run after it) still reaches
    # __pith_dispatch__ for ops, detach and metadata; only foreign threads are refused.
    result = run_python("""
        import atexit

        def at_exit():
            import pith
            assert not pith._C._interpreter_gate_open()
            w = Wrapper(pith.tensor([1.0, 2.0]))
            print((w + w).tolist(), w.detach().elem.tolist(), w.is_contiguous(), flush=True)

        atexit.register(at_exit)   # before pith registers phase 1: runs after it
        import pith

        class Wrapper(pith.Tensor):
            @staticmethod
            def __new__(cls, elem):
                r = pith.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype,
                                                       dispatch_sizes_strides_policy="strides")
                r.elem = elem
                return r

            @classmethod
            def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
                if func is pith.ops.pith.is_contiguous.default:
                    return False
                if func is pith.ops.pith.detach.default:
                    return Wrapper(args[0].elem)
                unwrapped = [a.elem if isinstance(a, Wrapper) else a for a in args]
                return func(*unwrapped, **(kwargs or {}))

        w = Wrapper(pith.ones(1))
        assert (w + w).tolist() == [2.0]
    """)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "[2.0, 4.0] [1.0, 2.0] False\n"
