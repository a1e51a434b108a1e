"""PyObject preservation ("flip on dealloc"): a wrapper that only C holds comes back as the
same object, and the garbage collector never frees or clears it meanwhile. See Note [PyObject
preservation in the bindings] and Note [Tensor metaclass] (python_bindings/_C/tensor.c),
Note [Stash handles] (stash.c).

C holders are simulated with pith._C._stash (one C reference per handle) and released
with _unstash, or with pith_release itself through ctypes: ctypes.PyDLL keeps the GIL (the
release runs on a thread of this interpreter), ctypes.CDLL drops it (the release runs
without any thread state, so the table's decref entry must take this interpreter's GIL)."""
import ctypes
import gc
import glob
import os
import subprocess
import sys
import threading
import weakref

import pytest

import pith

_stash, _unstash = pith._C._stash, pith._C._unstash


def libpith_path():
    directory = os.path.dirname(pith._C.__file__)
    return sorted(glob.glob(os.path.join(directory, "libpith.so*")))[0]


def c_release(handle, gil=True):
    """pith_release((pith_tensor *)handle) from C, holding the GIL or not."""
    lib = (ctypes.PyDLL if gil else ctypes.CDLL)(libpith_path())
    lib.pith_release.argtypes = [ctypes.c_void_p]
    lib.pith_release.restype = None
    lib.pith_release(ctypes.c_void_p(handle))


class Sub(pith.Tensor):
    pass


class Slotted(pith.Tensor):
    __slots__ = ("extra",)


class Finalized(pith.Tensor):
    log = []
    # Ops on it give plain tensors: with the default __pith_function__ the sum in __del__
    # would be a Finalized, whose own __del__ would make another, without end (as in
    # PyTorch; Note [Function layer]).
    __pith_function__ = pith._C._disabled_pith_function_impl

    def __del__(self):
        Finalized.log.append(self.sum().item())


def make(cls=pith.Tensor, values=(1.0, 2.0, 3.0)):
    t = pith.tensor(list(values))
    return t if cls is pith.Tensor else pith.Tensor._make_subclass(cls, t)


def collect():
    for _ in range(3):
        gc.collect()


# ---- the metaclass ------------------------------------------------------------------------

# (type(pith.Tensor), not pith._C._TensorMeta: a test may leave a second module instance
# of pith._C as the package's attribute, whose metaclass is another object.)
META = type(pith.Tensor)


def test_tensor_type_has_the_tensor_metaclass():
    assert META.__module__ == "pith._C" and META.__name__ == "_TensorMeta"
    assert META is not type and issubclass(META, type)


def test_subclasses_get_the_tensor_metaclass():
    assert type(Sub) is META
    assert type(Slotted) is META


def test_the_metaclass_refuses_classes_that_do_not_derive_from_tensor():
    with pytest.raises(TypeError, match="does not derive from pith.Tensor"):
        META("NotATensor", (), {})


def test_making_and_dropping_subclasses_keeps_the_metaclass_refcount():
    meta = META

    def churn():
        for i in range(50):
            cls = type(f"Tmp{i}", (pith.Tensor,), {})
            obj = pith.Tensor._make_subclass(cls, pith.ones(2))
            del obj, cls
        collect()
    churn()
    before = sys.getrefcount(meta)
    churn()
    assert sys.getrefcount(meta) == before


def test_class_assignment_between_tensor_and_a_subclass_works():
    t = make()
    t.__class__ = Sub
    assert type(t) is Sub
    t.__class__ = pith.Tensor
    assert type(t) is pith.Tensor


def test_deep_chain_of_subclass_wrappers_deallocates_without_overflowing_the_stack():
    before = pith._C._live_tensors()
    head = make(Sub)
    node = head
    for _ in range(100_000):
        nxt = pith.Tensor._make_subclass(Sub, pith.ones(1))
        node.next = nxt
        node = nxt
    del node, nxt
    del head
    assert pith._C._live_tensors() == before


# ---- the same object comes back ---------------------------------------------------------

def test_wrapping_the_same_tensor_twice_returns_the_same_object():
    t = make()
    assert _unstash(_stash(t)) is t
    assert t.add_(1) is t


@pytest.mark.parametrize("cls", [pith.Tensor, Sub])
def test_stash_del_unstash_returns_the_same_object_with_its_dict(cls):
    t = make(cls)
    t.label = "kept"
    ident, ref = id(t), weakref.ref(t)
    h = _stash(t)
    del t
    collect()
    u = _unstash(h)
    assert id(u) == ident
    assert ref() is u
    assert type(u) is cls
    assert u.label == "kept"
    assert u.tolist() == [1.0, 2.0, 3.0]


def test_a_preserved_subclass_keeps_its_slots():
    t = make(Slotted)
    t.extra = ["slot value"]
    h = _stash(t)
    del t
    collect()
    u = _unstash(h)
    assert u.extra == ["slot value"]


def test_a_wrapper_can_be_preserved_many_times():
    t = make(Sub)
    t.label = 1
    ref = weakref.ref(t)
    for i in range(5):
        h = _stash(t)
        del t
        collect()
        t = _unstash(h)
        assert ref() is t
        t.label += 1
    assert t.label == 6


def test_an_op_result_that_is_the_preserved_tensor_is_the_same_object():
    t = make(Sub)
    t.label = "same"
    h = _stash(t)
    del t
    u = _unstash(h)
    assert u.mul_(2) is u
    assert u.label == "same"


def test_finalizer_does_not_run_while_c_holds_the_tensor():
    Finalized.log.clear()
    t = make(Finalized)
    h = _stash(t)
    del t
    collect()
    assert Finalized.log == []
    u = _unstash(h)
    del u
    assert Finalized.log == [6.0]


# ---- weakrefs -----------------------------------------------------------------------------

def test_weakref_stays_valid_while_c_holds_the_tensor():
    t = make(Sub)
    ref = weakref.ref(t)
    h = _stash(t)
    del t
    collect()
    assert ref() is not None
    u = _unstash(h)
    assert ref() is u


def test_weakref_dies_when_python_then_c_let_go():
    t = make(Sub)
    ref = weakref.ref(t)
    calls = []
    weakref.finalize(t, calls.append, "finalized")
    h = _stash(t)
    del t
    collect()
    assert ref() is not None and calls == []
    c_release(h)
    assert ref() is None
    assert calls == ["finalized"]


def test_weakref_dies_when_c_then_python_let_go():
    t = make(Sub)
    ref = weakref.ref(t)
    h = _stash(t)
    c_release(h)
    assert ref() is t
    del t
    assert ref() is None


def test_weakref_callback_runs_once_when_both_let_go():
    calls = []
    t = make()
    ref = weakref.ref(t, lambda r: calls.append(r))
    h = _stash(t)
    del t
    collect()
    assert calls == []
    c_release(h)
    assert calls == [ref]


# ---- garbage collection ----------------------------------------------------------------

def test_gc_does_not_free_a_wrapper_that_c_owns():
    t = make()
    t.payload = [1, 2, 3]
    ref = weakref.ref(t)
    h = _stash(t)
    del t
    collect()
    assert ref() is not None
    assert ref().payload == [1, 2, 3]
    c_release(h)
    assert ref() is None


@pytest.mark.parametrize("cls", [pith.Tensor, Sub])
def test_gc_keeps_a_dict_self_cycle_while_c_holds_the_tensor(cls):
    t = make(cls)
    t.self = t
    ref = weakref.ref(t)
    calls = []
    weakref.finalize(t, calls.append, "finalized")
    h = _stash(t)
    del t
    collect()
    assert calls == []
    u = ref()
    assert u is not None and u.self is u
    del u
    collect()
    assert ref().self is ref()
    c_release(h)
    collect()
    assert ref() is None
    assert calls == ["finalized"]


def test_gc_keeps_a_cycle_through_another_object_while_c_holds_the_tensor():
    class Holder:
        pass
    t = make(Sub)
    holder = Holder()
    holder.tensor, t.holder = t, holder
    holder_ref, tensor_ref = weakref.ref(holder), weakref.ref(t)
    h = _stash(t)
    del t, holder
    collect()
    assert holder_ref() is not None
    u = _unstash(h)
    assert u is tensor_ref() and u.holder.tensor is u
    del u
    collect()
    assert holder_ref() is None and tensor_ref() is None


def test_gc_keeps_the_slots_of_a_cycle_while_c_holds_the_tensor():
    t = make(Slotted)
    t.extra = t
    ref = weakref.ref(t)
    h = _stash(t)
    del t
    collect()
    u = _unstash(h)
    assert u.extra is u
    del u
    collect()
    assert ref() is None


def test_gc_does_not_finalize_a_cycle_while_c_holds_the_tensor():
    Finalized.log.clear()
    t = make(Finalized)
    t.self = t
    h = _stash(t)
    del t
    collect()
    assert Finalized.log == []
    u = _unstash(h)
    del u
    collect()
    assert Finalized.log == [6.0]


def test_cycles_through_preserved_wrappers_leak_nothing():
    before = pith._C._live_tensors()
    refs, calls = [], []
    for i in range(50):
        t = make(Sub if i % 2 else pith.Tensor)
        t.self = t
        refs.append(weakref.ref(t))
        weakref.finalize(t, calls.append, i)
        h = _stash(t)
        del t
        collect()
        if i % 3 == 0:
            c_release(h)
        else:
            _unstash(h)
    collect()
    assert all(r() is None for r in refs)
    assert sorted(calls) == list(range(50))
    assert pith._C._live_tensors() == before


# ---- C's last release ---------------------------------------------------------------------

def test_c_releasing_the_last_reference_frees_tensor_and_wrapper():
    before = pith._C._live_tensors()
    t = make(Sub)
    t.label = "x"
    h = _stash(t)
    del t
    assert pith._C._live_tensors() == before + 1
    c_release(h)
    assert pith._C._live_tensors() == before


def test_finalizer_runs_on_the_data_when_c_releases_the_last_reference():
    Finalized.log.clear()
    t = make(Finalized, (2.0, 3.0))
    h = _stash(t)
    del t
    c_release(h)
    assert Finalized.log == [5.0]


def test_finalizer_may_stash_the_tensor_again_when_c_releases_the_last_reference():
    kept = []

    class Stashing(pith.Tensor):
        def __del__(self):
            self.label = "from __del__"
            kept.append(_stash(self))

    t = make(Stashing)
    ref = weakref.ref(t)
    h = _stash(t)
    del t
    c_release(h)
    assert len(kept) == 1
    u = _unstash(kept[0])
    assert u is ref() and u.label == "from __del__"
    assert u.tolist() == [1.0, 2.0, 3.0]


def test_c_releasing_the_last_reference_without_the_gil_frees_the_wrapper():
    before = pith._C._live_tensors()
    t = make(Sub)
    t.self = t
    ref = weakref.ref(t)
    calls = []
    weakref.finalize(t, calls.append, "finalized")
    h = _stash(t)
    del t
    collect()
    worker = threading.Thread(target=c_release, args=(h,), kwargs={"gil": False})
    worker.start()
    worker.join()
    collect()
    assert ref() is None
    assert calls == ["finalized"]
    assert pith._C._live_tensors() == before


def test_many_threads_release_preserved_wrappers_without_the_gil():
    before = pith._C._live_tensors()
    tensors = [make(Sub if i % 2 else pith.Tensor) for i in range(64)]
    refs = [weakref.ref(t) for t in tensors]
    handles = [_stash(t) for t in tensors]
    del tensors
    collect()
    workers = [threading.Thread(target=lambda hs: [c_release(h, gil=False) for h in hs],
                                args=(handles[i::4],)) for i in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    collect()
    assert all(r() is None for r in refs)
    assert pith._C._live_tensors() == before


def run_isolated(code):
    """Runs `code` in a fresh interpreter process (a crash there fails only this test)."""
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=env, timeout=120)


def test_python_reaching_a_c_owned_wrapper_keeps_it_alive_after_c_lets_go():
    # A weakref gives Python the wrapper without wrapping: when C then releases the last
    # reference, the wrapper takes its tensor back instead of keeping a dangling one.
    result = run_isolated("""
import ctypes, gc, glob, os, weakref
import pith
lib = ctypes.PyDLL(sorted(glob.glob(os.path.join(os.path.dirname(pith._C.__file__),
                                                "libpith.so*")))[0])
lib.pith_release.argtypes = [ctypes.c_void_p]
class Sub(pith.Tensor):
    pass
before = pith._C._live_tensors()
t = pith.Tensor._make_subclass(Sub, pith.tensor([1.0, 2.0]))
t.label = "rescued"
ref = weakref.ref(t)
h = pith._C._stash(t)
del t
u = ref()
lib.pith_release(ctypes.c_void_p(h))
for _ in range(1000):
    pith.ones(100)  # reuse whatever memory was freed
assert u.tolist() == [1.0, 2.0], u.tolist()
assert u.label == "rescued"
assert u.add_(1) is u
assert pith._C._live_tensors() == before + 1
del u
gc.collect()
assert ref() is None and pith._C._live_tensors() == before
print("ok")
""")
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "ok"


# ---- handles ------------------------------------------------------------------------------

def test_stash_returns_the_address_of_the_tensor_as_an_int():
    t = make()
    h = _stash(t)
    assert isinstance(h, int) and h > 0
    assert _unstash(h) is t


def test_stash_rejects_what_is_not_a_tensor():
    with pytest.raises(TypeError, match="must be a pith.Tensor"):
        _stash([1.0])


def test_unstash_rejects_a_handle_that_is_not_an_int():
    with pytest.raises(TypeError, match="must be an int"):
        _unstash("0x1234")
    with pytest.raises(TypeError, match="must be an int"):
        _unstash(True)


@pytest.mark.parametrize("forged", [0, 1, 12345, 2**40 + 8, -1, -(2**70), 2**70])
def test_unstash_of_a_forged_integer_is_a_value_error(forged):
    with pytest.raises(ValueError, match="not a live handle"):
        _unstash(forged)


def test_unstash_of_an_id_is_a_value_error():
    t = make()
    with pytest.raises(ValueError, match="not a live handle"):
        _unstash(id(t))


def test_unstashing_twice_is_a_value_error():
    t = make()
    h = _stash(t)
    assert _unstash(h) is t
    with pytest.raises(ValueError, match="not a live handle"):
        _unstash(h)


def test_each_stash_can_be_unstashed_once():
    t = make()
    h1, h2 = _stash(t), _stash(t)
    assert h1 == h2
    assert _unstash(h1) is t
    assert _unstash(h2) is t
    with pytest.raises(ValueError):
        _unstash(h1)


def test_unstash_after_c_released_the_handle_and_the_tensor_died_is_a_value_error():
    t = make(Sub)
    h = _stash(t)
    del t
    c_release(h)
    with pytest.raises(ValueError, match="not a live handle"):
        _unstash(h)


def test_unstash_after_c_released_the_handle_of_a_live_tensor_is_a_value_error():
    t = make()
    h = _stash(t)
    c_release(h)  # C dropped the handle's reference; Python still holds the tensor
    with pytest.raises(ValueError, match="not a live handle"):
        _unstash(h)
    assert t.tolist() == [1.0, 2.0, 3.0]


def test_stash_and_unstash_from_many_threads_return_the_same_objects():
    tensors = [make(Sub) for _ in range(8)]
    errors = []

    def work(t):
        try:
            for _ in range(2000):
                if _unstash(_stash(t)) is not t:
                    errors.append("different object")
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(repr(e))
    workers = [threading.Thread(target=work, args=(t,)) for t in tensors]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    assert errors == []


def test_handles_leak_nothing_once_taken_back():
    before = pith._C._live_tensors()
    for i in range(2000):
        t = make(Sub if i % 2 else pith.Tensor)
        h = _stash(t)
        del t
        del_ = _unstash(h)
        del del_
    collect()
    assert pith._C._live_tensors() == before
