"""Grad mode and inference mode: pith.no_grad, enable_grad, set_grad_enabled,
inference_mode, is_grad_enabled, is_inference_mode_enabled, as context managers and
decorators; per-thread state held by libpith (read here through its C API too); and
Tensor.is_inference / requires_grad / is_leaf under the modes. PyTorch is the oracle where
it is installed."""
import ctypes
import inspect
import os
import threading
import warnings

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pith
from conftest import examples

LIBPITH = ctypes.CDLL(os.path.join(os.path.dirname(pith._C.__file__), "libpith.so.0"))
LIBPITH.pith_grad_enabled.restype = ctypes.c_bool
LIBPITH.pith_inference_mode_enabled.restype = ctypes.c_bool


def state(lib=pith):
    return (lib.is_grad_enabled(), lib.is_inference_mode_enabled())


def c_state():
    return (LIBPITH.pith_grad_enabled(), LIBPITH.pith_inference_mode_enabled())


@pytest.fixture(autouse=True)
def default_modes():
    """Every test starts and ends with grad enabled and inference mode off."""
    assert state() == (True, False)
    yield
    assert state() == (True, False)


# ---- the managers and their state ---------------------------------------------------------

# The managers by name, so that the same program runs on pith and on PyTorch.
MANAGERS = {
    "no_grad": lambda lib: lib.no_grad(),
    "enable_grad": lambda lib: lib.enable_grad(),
    "set_grad_enabled(True)": lambda lib: lib.set_grad_enabled(True),
    "set_grad_enabled(False)": lambda lib: lib.set_grad_enabled(False),
    "inference_mode()": lambda lib: lib.inference_mode(),
    "inference_mode(False)": lambda lib: lib.inference_mode(False),
    "inference_mode(mode=True)": lambda lib: lib.inference_mode(mode=True),
}


def nested_states(lib, names):
    """The (grad, inference) state inside each of the nested `with` blocks of `names`, and
    after each exits, innermost first."""
    trace = []

    def enter(rest):
        if not rest:
            return
        with MANAGERS[rest[0]](lib):
            trace.append(("in", rest[0], state(lib)))
            enter(rest[1:])
        trace.append(("out", rest[0], state(lib)))

    enter(list(names))
    return trace


def test_a_new_interpreter_thread_starts_with_grad_and_without_inference_mode():
    assert state() == (True, False)
    assert c_state() == (True, False)


@pytest.mark.parametrize("name, inside", [
    ("no_grad", (False, False)), ("enable_grad", (True, False)),
    ("set_grad_enabled(False)", (False, False)), ("set_grad_enabled(True)", (True, False)),
    ("inference_mode()", (False, True)), ("inference_mode(False)", (True, False)),
])
def test_each_manager_sets_the_state_and_restores_it(name, inside):
    with MANAGERS[name](pith):
        assert state() == inside
        assert c_state() == inside  # the C core holds the state: See grad_mode.h
    assert state() == (True, False)


@given(st.lists(st.sampled_from(sorted(MANAGERS)), min_size=1, max_size=5))
@examples(60)
def test_nested_managers_give_pytorchs_states(names):
    torch = pytest.importorskip("torch")
    assert nested_states(pith, names) == nested_states(torch, names)


@pytest.mark.parametrize("name", sorted(MANAGERS))
def test_a_manager_restores_the_state_when_its_block_raises(name):
    with pith.no_grad():
        with pytest.raises(KeyError):
            with MANAGERS[name](pith):
                raise KeyError
        assert state() == (False, False)


def test_enter_returns_none_as_pytorchs():
    for name in MANAGERS:
        with MANAGERS[name](pith) as entered:
            assert entered is None


def test_one_no_grad_object_may_be_entered_again():
    torch = pytest.importorskip("torch")

    def program(lib):
        seen, manager = [], lib.no_grad()
        with manager:
            with lib.enable_grad():
                with manager:
                    seen.append(lib.is_grad_enabled())
                seen.append(lib.is_grad_enabled())
            seen.append(lib.is_grad_enabled())
        return seen + [lib.is_grad_enabled()]

    assert program(pith) == program(torch)


def test_set_grad_enabled_works_as_a_plain_call():
    manager = pith.set_grad_enabled(False)
    try:
        assert state() == (False, False)
        assert repr(manager) == "pith._grad_mode.set_grad_enabled(mode=False)"
    finally:
        pith.set_grad_enabled(True)
    assert state() == (True, False)


def test_set_grad_enabled_as_a_with_block_restores_the_mode_before_the_call():
    with pith.no_grad():
        with pith.set_grad_enabled(True):
            assert pith.is_grad_enabled()
        assert not pith.is_grad_enabled()


@pytest.mark.parametrize("mode", [1, "yes", None, 1.0])
def test_set_grad_enabled_takes_only_a_bool(mode):
    with pytest.raises(TypeError, match=r"set_grad_enabled\(\): argument 'enabled' "
                                        r"\(position 1\) must be bool"):
        pith.set_grad_enabled(mode)
    assert state() == (True, False)


def test_set_grad_enabled_refuses_what_pytorch_refuses():
    torch = pytest.importorskip("torch")
    for mode in (1, "yes"):
        with pytest.raises(TypeError) as expected:
            torch.set_grad_enabled(mode)
        with pytest.raises(TypeError) as got:
            pith.set_grad_enabled(mode)
        assert str(got.value) == str(expected.value)


def test_the_private_setters_take_only_a_bool():
    with pytest.raises(TypeError, match="must be bool, not int"):
        pith._C._set_inference_mode_enabled(1)
    with pytest.raises(TypeError, match="must be bool, not NoneType"):
        pith._C._set_grad_enabled(None)


def test_the_managers_are_classes_of_the_pith_namespace():
    assert isinstance(pith.no_grad(), pith.no_grad)
    assert isinstance(pith.inference_mode(), pith.inference_mode)
    assert pith.inference_mode().mode is True and pith.inference_mode(False).mode is False


# ---- decorators -----------------------------------------------------------------------------

# Decorator forms: how each wraps a function, by name, for pith and PyTorch alike.
DECORATORS = {
    "@no_grad": lambda lib: lib.no_grad,
    "@no_grad()": lambda lib: lib.no_grad(),
    "@enable_grad": lambda lib: lib.enable_grad,
    "@enable_grad()": lambda lib: lib.enable_grad(),
    "@set_grad_enabled(False)": lambda lib: lib.set_grad_enabled(False),
    "@set_grad_enabled(True)": lambda lib: lib.set_grad_enabled(True),
    "@inference_mode": lambda lib: lib.inference_mode,
    "@inference_mode()": lambda lib: lib.inference_mode(),
    "@inference_mode(False)": lambda lib: lib.inference_mode(False),
}


def decorated_program(lib, form, outer):
    """States while decorating, inside the decorated function and after, under `outer`."""

    def f(a, b=2):
        "the doc"
        return state(lib), a + b

    with MANAGERS[outer](lib):
        wrapped = DECORATORS[form](lib)(f)
        after_decorating = state(lib)
        inside, value = wrapped(1, b=3)
        after = state(lib)
    return after_decorating, inside, value, after, wrapped.__name__, wrapped.__doc__


@pytest.mark.parametrize("outer", ["no_grad", "enable_grad", "inference_mode()"])
@pytest.mark.parametrize("form", sorted(DECORATORS))
def test_decorators_give_pytorchs_states(form, outer):
    torch = pytest.importorskip("torch")
    assert decorated_program(pith, form, outer) == decorated_program(torch, form, outer)


@pytest.mark.parametrize("form", sorted(DECORATORS))
def test_a_decorated_function_keeps_its_name_doc_and_result(form):
    *_, value, after, name, doc = decorated_program(pith, form, "enable_grad")
    assert (value, name, doc) == (4, "f", "the doc")
    assert after == (True, False)


def test_decorators_set_the_mode_for_each_call():
    @pith.no_grad()
    def f():
        return pith.is_grad_enabled()

    assert f() is False and f() is False
    assert pith.is_grad_enabled()


def test_a_decorated_function_restores_the_state_when_it_raises():
    @pith.inference_mode
    def f():
        raise ValueError("inside")

    with pytest.raises(ValueError, match="inside"):
        f()
    assert state() == (True, False)


def generator_program(lib, form):
    """A decorated generator: the state at each of its steps and in the caller between
    them; send, the return value, throw and close."""
    trace = []

    def gen():
        trace.append(("gen", state(lib)))
        got = yield 1
        trace.append(("gen got", got, state(lib)))
        try:
            yield 2
        except KeyError:
            trace.append(("gen caught", state(lib)))
        try:
            yield 3
        finally:
            trace.append(("gen closing", state(lib)))

    def returns():
        yield 1
        return "done"

    wrapped = DECORATORS[form](lib)(gen)
    it = wrapped()
    trace.append(("caller", next(it), state(lib)))
    trace.append(("caller", it.send("sent"), state(lib)))
    trace.append(("caller", it.throw(KeyError), state(lib)))
    it.close()
    trace.append(("caller", state(lib)))
    it = DECORATORS[form](lib)(returns)()
    next(it)
    with pytest.raises(StopIteration) as stop:
        next(it)
    trace.append(("returned", stop.value.value))
    return trace


@pytest.mark.parametrize("form", sorted(DECORATORS))
def test_decorated_generators_run_each_step_in_the_mode_as_pytorchs(form):
    torch = pytest.importorskip("torch")
    assert generator_program(pith, form) == generator_program(torch, form)


def test_a_decorated_generator_steps_in_the_mode_and_the_caller_outside_it():
    trace = generator_program(pith, "@no_grad")
    assert trace[0] == ("gen", (False, False))
    assert trace[1] == ("caller", 1, (True, False))
    assert trace[-1] == ("returned", "done")


def test_decorating_a_class_is_deprecated_and_constructs_in_the_mode():
    with pytest.warns(FutureWarning, match="Decorating classes is deprecated"):
        @pith.no_grad()
        class Model:
            def __init__(self, scale):
                self.scale = scale
                self.grad = pith.is_grad_enabled()

    made = Model(3)
    assert (made.scale, made.grad) == (3, False)
    assert pith.is_grad_enabled()


def test_decorating_a_class_matches_pytorch():
    torch = pytest.importorskip("torch")

    def program(lib):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")

            @lib.inference_mode()
            class Model:
                def __init__(self):
                    self.state = state(lib)

        return Model().state, [w.category for w in caught]

    assert program(pith) == program(torch)


def test_a_method_can_be_decorated():
    class Model:
        @pith.no_grad()
        def forward(self, x):
            return x, pith.is_grad_enabled()

    assert Model().forward(1) == (1, False)


def test_decorators_keep_the_wrapped_signature_for_inspection():
    def f(a, *, b=1):
        return a + b

    for form in DECORATORS:
        wrapped = DECORATORS[form](pith)(f)
        assert wrapped.__wrapped__ is f
        assert inspect.signature(wrapped) == inspect.signature(f)


# ---- threads --------------------------------------------------------------------------------

def run_in_thread(fn):
    result = {}

    def target():
        result["value"] = fn()

    worker = threading.Thread(target=target)
    worker.start()
    worker.join()
    return result["value"]


@pytest.mark.parametrize("name", ["no_grad", "set_grad_enabled(False)", "inference_mode()"])
def test_a_new_thread_starts_with_the_defaults_whatever_its_parent_is_in(name):
    with MANAGERS[name](pith):
        assert run_in_thread(lambda: (state(), c_state())) == ((True, False), (True, False))


def test_a_threads_mode_does_not_reach_other_threads():
    def disable_and_report():
        pith.set_grad_enabled(False)
        with pith.inference_mode():
            inner = state()
        return inner, state()

    assert run_in_thread(disable_and_report) == ((False, True), (False, False))
    assert state() == (True, False)


def test_threads_toggling_at_once_see_only_their_own_modes():
    ready = threading.Barrier(4)
    seen, errors = {}, []

    def worker(k):
        try:
            managers = [pith.no_grad, pith.enable_grad, lambda: pith.inference_mode(),
                        lambda: pith.inference_mode(False)]
            expected = [(False, False), (True, False), (False, True), (True, False)][k]
            for step in range(200):
                with managers[k]():
                    if step == 0:
                        ready.wait()  # all four are inside their modes at once
                    if state() != expected or c_state() != expected:
                        errors.append((k, state(), c_state()))
                    x = pith.ones(2)
                    if x.is_inference() != expected[1]:
                        errors.append((k, "tensor"))
            seen[k] = state()
        except Exception as e:  # noqa: BLE001 - reported below
            errors.append((k, repr(e)))

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert seen == {k: (True, False) for k in range(4)}


def test_a_decorated_function_run_in_threads_sets_the_mode_in_each():
    @pith.inference_mode()
    def f():
        return state()

    assert run_in_thread(f) == (False, True)
    assert run_in_thread(state) == (True, False)


# ---- tensors under the modes ----------------------------------------------------------------

def tensor_program(lib):
    """Which tensors are inference tensors, made in and out of inference mode."""
    normal = lib.ones(2, 3)
    out = {}
    with lib.inference_mode():
        made = lib.zeros(2, 3)
        out["factory"] = made
        out["tensor"] = lib.tensor([1.0, 2.0])
        out["arange"] = lib.arange(4)
        out["full"] = lib.full((2,), 1.5)
        out["like"] = lib.zeros_like(normal)
        out["op on normal"] = normal + 1
        out["view of normal"] = normal.view(3, 2)
        out["transpose of normal"] = normal.t()
        out["detach of normal"] = normal.detach()
        out["clone of normal"] = normal.clone()
        out["view of inference"] = made[0]
        out["empty"] = lib.empty(0)
        out["0-dim"] = lib.tensor(3.0)
        out["to dtype"] = normal.to(lib.float64)
        out["to same dtype"] = normal.to(lib.float32)
        with lib.inference_mode(False):
            out["nested off"] = lib.ones(1)
        with lib.no_grad():
            out["no_grad inside"] = lib.ones(1)
    out["normal"] = normal
    out["view after"] = made.view(6)
    out["op after"] = made * 2
    out["non-contiguous view after"] = made.t()[::2]
    with lib.no_grad():
        out["under no_grad"] = lib.ones(1)
    return {k: (v.is_inference(), v.requires_grad, v.is_leaf) for k, v in out.items()}


def test_inference_tensors_are_what_pytorch_makes():
    torch = pytest.importorskip("torch")
    assert tensor_program(pith) == tensor_program(torch)


def test_tensors_made_in_inference_mode_are_inference_tensors():
    with pith.inference_mode():
        inside = pith.ones(2)
        view_of_normal = pith.ones(2).view(1, 2)  # a view of a tensor made inside: inference
    normal = pith.ones(2)
    with pith.inference_mode():
        view = normal.view(2, 1)
    assert inside.is_inference() and view_of_normal.is_inference()
    assert not normal.is_inference() and not view.is_inference()
    assert inside[1:].is_inference() and (inside + 1).is_inference() is False


def test_no_grad_makes_no_inference_tensor():
    with pith.no_grad():
        assert not pith.ones(2).is_inference()


def test_in_place_updates_of_inference_tensors_are_refused_outside_inference_mode():
    # PyTorch refuses them after writing; pith refuses them before (test_autograd.py
    # compares the errors with torch's): nothing is written.
    with pith.inference_mode():
        x = pith.ones(2)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        x.add_(1)
    with pytest.raises(RuntimeError, match="Inplace update to inference tensor"):
        x[0] = 5
    assert x.tolist() == [1.0, 1.0] and x.is_inference()


@pytest.mark.parametrize("name", sorted(MANAGERS))
def test_recording_follows_the_mode_as_pytorchs(name):
    torch = pytest.importorskip("torch")
    for lib in (pith, torch):
        leaf = lib.ones(2, requires_grad=True)
        with MANAGERS[name](lib):
            x = leaf * 2
            got = (x.requires_grad, x.is_leaf, x.grad_fn is None)
        if lib is torch:
            assert got == want
        want = got


def test_factories_honour_requires_grad_under_no_grad():
    with pith.no_grad():
        x = pith.ones(2, requires_grad=True)
    assert x.requires_grad and x.is_leaf


def test_a_wrapper_subclass_made_in_inference_mode_is_an_inference_tensor():
    class Wrapper(pith.Tensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    with pith.inference_mode():
        w = pith.Tensor._make_wrapper_subclass(Wrapper, (2,))
    assert w.is_inference()
