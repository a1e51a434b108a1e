"""One tensor, one interpreter: a tensor tagged to an interpreter is refused by every other
one (pith.InterpreterError, never a second wrapper), and pith.share hands its data over:
an untagged alias of memory pith owns (no copy), a copy of memory a Python object owns.
See Note [PyObject slot and interpreter tag] (core/pyobj_slot.c) and Note [Stash handles]
(python_bindings/_C/stash.c). Other interpreters are CPython sub-interpreters made with
_xxsubinterpreters (3.11); the test fails there if its code raises."""
import os
import subprocess
import sys

import numpy as np
import pytest

import pith

interpreters = pytest.importorskip("_xxsubinterpreters")
_stash, _unstash = pith._C._stash, pith._C._unstash


class Sub(pith.Tensor):
    pass


@pytest.fixture
def other():
    """A sub-interpreter that has imported pith; run(code) runs code in it."""
    sid = interpreters.create()
    interpreters.run_string(sid, "import pith")
    yield lambda code: interpreters.run_string(sid, code)
    interpreters.destroy(sid)


def other_error(run, code):
    """The message of the exception that `code` raised in the other interpreter."""
    with pytest.raises(interpreters.RunFailedError) as info:
        run(code)
    return str(info.value)


# ---- share ----------------------------------------------------------------------------------

def test_share_returns_a_handle_that_from_shared_takes():
    t = pith.tensor([1.0, 2.0, 3.0])
    h = pith.share(t)
    assert isinstance(h, int)
    s = pith.from_shared(h)
    assert isinstance(s, pith.Tensor)
    assert s is not t
    assert s.tolist() == [1.0, 2.0, 3.0]


def test_share_of_native_storage_shares_the_data():
    t = pith.arange(6, dtype=pith.float32).reshape(2, 3)
    s = pith.from_shared(pith.share(t))
    assert s.data_ptr() == t.data_ptr()
    assert s.shape == t.shape and s.stride() == t.stride() and s.dtype == t.dtype
    s[0, 0] = 42.0
    assert t[0, 0].item() == 42.0


def test_share_of_a_view_keeps_its_geometry():
    base = pith.arange(12, dtype=pith.int64).reshape(3, 4)
    view = base.t()[1:]
    s = pith.from_shared(pith.share(view))
    assert s.data_ptr() == view.data_ptr()
    assert s.stride() == view.stride() and s.storage_offset() == view.storage_offset()
    assert s.tolist() == view.tolist()


def test_share_of_a_subclass_is_a_plain_tensor_without_its_dict():
    t = pith.Tensor._make_subclass(Sub, pith.ones(2))
    t.label = "stays with t"
    s = pith.from_shared(pith.share(t))
    assert type(s) is pith.Tensor
    assert not hasattr(s, "label")
    assert s.data_ptr() == t.data_ptr()


def test_share_of_numpy_memory_is_a_copy():
    a = np.arange(4, dtype=np.float64)
    t = pith.from_numpy(a)
    s = pith.from_shared(pith.share(t))
    assert s.data_ptr() != a.ctypes.data
    assert s.tolist() == [0.0, 1.0, 2.0, 3.0]
    s[0] = 9.0
    assert a[0] == 0.0


def test_share_of_buffer_memory_is_a_copy():
    buf = bytearray(np.arange(3, dtype=np.int32).tobytes())
    t = pith.frombuffer(buf, dtype=pith.int32)
    s = pith.from_shared(pith.share(t))
    assert s.data_ptr() != t.data_ptr()
    assert s.tolist() == [0, 1, 2]


def test_share_of_a_view_of_numpy_memory_is_a_copy_of_the_view():
    a = np.arange(12, dtype=np.float32).reshape(3, 4)
    t = pith.from_numpy(a)[1:, ::2]
    s = pith.from_shared(pith.share(t))
    assert s.data_ptr() != t.data_ptr()
    assert s.tolist() == a[1:, ::2].tolist()


def test_share_handle_can_be_taken_once():
    h = pith.share(pith.ones(2))
    pith.from_shared(h)
    with pytest.raises(ValueError, match="not a live handle"):
        pith.from_shared(h)


def test_share_rejects_what_is_not_a_tensor():
    with pytest.raises(TypeError, match="must be a pith.Tensor"):
        pith.share([1.0])


def test_shared_tensors_leak_nothing():
    before = pith._C._live_tensors()
    t = pith.ones(3)
    for _ in range(500):
        s = pith.from_shared(pith.share(t))
        del s
    del t
    assert pith._C._live_tensors() == before


def test_from_shared_of_a_forged_handle_is_a_value_error_naming_it():
    with pytest.raises(ValueError, match=r"from_shared\(\): 12345 is not a live handle"):
        pith.from_shared(12345)
    with pytest.raises(TypeError, match=r"from_shared\(\): the handle must be an int"):
        pith.from_shared("12345")


def test_from_shared_and_unstash_take_the_same_handles():
    h = pith.share(pith.ones(2))
    assert pith._C._unstash(h).tolist() == [1.0, 1.0]
    t = pith.ones(2)
    assert pith.from_shared(_stash(t)) is t


# ---- across interpreters -------------------------------------------------------------------

def test_interpreters_have_different_names(other):
    other(f"assert pith._C._interpreter_name() != {pith._C._interpreter_name()!r}")


def test_unstash_in_another_interpreter_raises_interpreter_error(other):
    t = pith.ones(3)
    h = _stash(t)
    message = other_error(other, f"pith._C._unstash({h})")
    assert "InterpreterError" in message
    assert f"belongs to interpreter {pith._C._interpreter_name()}" in message
    assert "(which is alive)" in message
    assert _unstash(h) is t


def test_interpreter_error_is_a_runtime_error_there(other):
    t = pith.ones(3)
    h = _stash(t)
    other(f"""
try:
    pith._C._unstash({h})
except RuntimeError as e:
    assert isinstance(e, pith.InterpreterError), type(e)
else:
    raise AssertionError("no error")
""")
    assert _unstash(h) is t


def test_a_refused_handle_stays_with_the_caller(other):
    t = pith.Tensor._make_subclass(Sub, pith.ones(3))
    t.label = "mine"
    h = _stash(t)
    del t
    other_error(other, f"pith._C._unstash({h})")
    u = _unstash(h)  # no second wrapper was made: the same object comes back
    assert type(u) is Sub and u.label == "mine"


def test_share_hands_data_to_another_interpreter_without_a_copy(other):
    t = pith.tensor([1.0, 2.0, 3.0])
    other(f"""
s = pith.from_shared({pith.share(t)})
assert s.data_ptr() == {t.data_ptr()}, (s.data_ptr(), {t.data_ptr()})
assert s.tolist() == [1.0, 2.0, 3.0]
s[0] = 7.0
""")
    assert t.tolist() == [7.0, 2.0, 3.0]


def test_a_tensor_taken_by_another_interpreter_is_refused_here(other):
    h = pith.share(pith.ones(2))
    other(f"import pith._C\nkept = pith.from_shared({h})\nh = pith._C._stash(kept)\n"
          f"assert h == {h}, h\n")
    with pytest.raises(pith.InterpreterError, match="which is alive"):
        _unstash(h)
    other(f"pith._C._unstash({h})")


def run_isolated(code):
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)


def test_a_tensor_of_a_dead_interpreter_is_refused_and_its_release_leaks_quietly():
    # The sub-interpreter stashes a tensor and ends while C holds it (preserved): taking
    # it here is an InterpreterError that says the owner is dead, and C's release then runs
    # the dead table's no-op decref instead of the dead interpreter's code.
    result = run_isolated("""
import ctypes, glob, os
import _xxsubinterpreters as interpreters
import pith
lib = ctypes.PyDLL(sorted(glob.glob(os.path.join(os.path.dirname(pith._C.__file__),
                                                "libpith.so*")))[0])
lib.pith_release.argtypes = [ctypes.c_void_p]
cid = interpreters.channel_create()
sid = interpreters.create()
interpreters.run_string(sid, f'''
import _xxsubinterpreters as interpreters
import pith
class Sub(pith.Tensor):
    pass
t = pith.Tensor._make_subclass(Sub, pith.ones(3))
t.label = "dead"
interpreters.channel_send({cid}, pith._C._stash(t))
interpreters.channel_send({cid}, pith._C._interpreter_name())
''')
h = interpreters.channel_recv(cid)
name = interpreters.channel_recv(cid)
interpreters.destroy(sid)
for attempt in range(2):
    try:
        pith._C._unstash(h)
    except pith.InterpreterError as e:
        assert f"belongs to interpreter {name} (which is dead" in str(e), str(e)
    else:
        raise AssertionError("no error")
lib.pith_release(ctypes.c_void_p(h))
print("ok")
""")
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout.strip() == "ok"
