"""__pith_function__, PyTorch's __torch_function__ (Note [Function layer],
python_bindings/_C/function_layer.c): subclasses that intercept every pith function, method,
operator and property, function modes, the disable guards and pith.overrides.

Most tests run one program twice, `program(pith)` and `program(torch)`, and compare what the
handlers saw and the types that came back: torch is the oracle, and those tests are skipped
without it. The names are compared through `name_of`, which spells a func the same way for
both libraries (a property accessor as "shape.__get__").
"""
import copy
import threading

import pytest

import pith
from pith import overrides

try:
    import torch
except ImportError:  # the optional oracle
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="torch is not installed")

# Where PyTorch passes another callable than pith for the same operator.
KNOWN_NAMES = {"__rdiv__": "__rtruediv__"}


def name_of(lib, func):
    """func as a name both libraries agree on: "add", "__getitem__", "shape.__get__"."""
    name = getattr(func, "__name__", None)
    if name in ("__get__", "__set__", "__delete__"):
        owner = func.__self__
        for attr, value in vars(lib.Tensor).items():
            if value is owner:
                return f"{attr}.{name}"
        for klass in type.mro(lib.Tensor):  # torch's live on torch._C.TensorBase
            for attr, value in vars(klass).items():
                if value is owner:
                    return f"{attr}.{name}"
    return KNOWN_NAMES.get(name, name)


def kinds(values):
    return [type(v).__name__ for v in values]


def logging_subclass(lib, log):
    """A subclass whose __torch_function__ logs (name, arg types, kwarg names) and defers to
    the default."""
    class Logged(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((name_of(lib, func), kinds(args), sorted(kwargs or {})))
            return super().__torch_function__(func, types, args, kwargs)
    return Logged


def run_logged(lib, code):
    """Runs `code` (an expression over `lib`, `s` (a Logged float tensor [1, 2]), `m` (a
    2 x 2 one) and `p` (a plain tensor)) and returns (log, result type name)."""
    log = []
    Logged = logging_subclass(lib, log)
    s = lib.tensor([1.0, 2.0]).as_subclass(Logged)
    m = lib.tensor([[1.0, 2.0], [3.0, 4.0]]).as_subclass(Logged)
    p = lib.tensor([3.0, 4.0])
    env = {"lib": lib, "s": s, "m": m, "p": p, "Logged": Logged, "copy": copy}
    result = eval(code, env)
    if isinstance(result, (tuple, list)):
        kind = (type(result).__name__, kinds(result))
    else:
        kind = type(result).__name__
    return log, kind


# ---- what the handlers see, against torch ----------------------------------------------------

CALLS = [
    # functions, methods, keywords, lists of tensors
    "lib.add(s, 1)", "lib.add(s, 1, alpha=2)", "s.add(p)", "p.add(s)", "lib.mul(p, s)",
    "lib.cat([p, s])", "lib.cat((s, p), 0)", "lib.stack([p, s])", "lib.stack(tensors=[p, s])",
    "s.detach()", "s.clone()", "s.sum()", "lib.relu(s)", "s.max(0)", "s.sort()",
    "s.unbind()", "lib.nonzero(s, as_tuple=True)", "lib.where(s > 1, s, p)",
    "s.to(lib.float64)", "s.float()", "s.tolist()", "s.numpy()", "s.view_as(p)",
    "s.type_as(p)", "lib.zeros_like(s)", "lib.ones_like(s)", "lib.full_like(s, 2)",
    "s.new_zeros(3)", "s.new_full((2,), 1.0)", "s.new_tensor([1.0])", "s.fill_(1)",
    "s.element_size()", "s.cpu()", "s.get_device()", "s.is_floating_point()",
    "lib.is_floating_point(s)", "s.type()",
    "lib.add(lib.ones(2), lib.ones(2), out=s)", "lib.add(s, s, out=lib.ones(2))",
    "lib.nn.functional.linear(m, m)",
    # operators: PyTorch's names (x + y is Tensor.add, x // y is Tensor.__floordiv__)
    "s + 1", "1 + s", "s - 1", "1 - s", "s * 2", "2 * s", "s / 2", "2 / s", "s // 2",
    "2 // s", "s % 2", "2 % s", "s ** 2", "2 ** s", "m @ m", "-s", "abs(s)",
    "s == 1", "1 == s", "s != 1", "s < 1", "1 < s", "s <= 1", "s > 1", "s >= 1",
    "s.__iadd__(1)", "s.__isub__(1)", "s.__imul__(2)", "s.__itruediv__(2)",
    "s.__ifloordiv__(2)", "s.__imod__(2)", "s.__ipow__(2)",
    "lib.tensor([1, 2]).as_subclass(Logged) & 1", "1 | lib.tensor([1, 2]).as_subclass(Logged)",
    "~lib.tensor([1, 2]).as_subclass(Logged)",
    # slots and properties
    "s[0]", "s[[0, 1]]", "p[lib.tensor([0]).as_subclass(Logged)]", "m[0, 1:]",
    "s.__setitem__(0, 5.0)", "len(s)", "list(s)", "bool(s[0])", "float(s[0])",
    "int(s[0])", "s.shape", "s.dtype", "s.ndim", "s.device", "m.T", "s.size()",
    "s.size(0)", "s.stride()", "s.dim()", "s.numel()", "s.is_contiguous()",
    "s.storage_offset()", "s.item() if s.numel() == 1 else s[0].item()", "s.is_cuda",
    "s.is_cpu", "s.is_meta", "s.nbytes", "s.itemsize", "s.requires_grad", "s.grad",
    "s.is_leaf", "s.is_inference()",
]


@needs_torch
@pytest.mark.parametrize("code", CALLS)
def test_handler_sees_what_torch_shows(code):
    got, want = run_logged(pith, code), run_logged(torch, code)
    assert got == want


@needs_torch
@pytest.mark.parametrize("code", ["s.__reduce_ex__(2)", "copy.deepcopy(s)"])
def test_deepcopy_and_pickle_reach_the_handler_as_in_torch(code):
    names = []
    for lib in (pith, torch):
        log = []
        s = lib.tensor([1.0, 2.0]).as_subclass(logging_subclass(lib, log))
        try:
            eval(code, {"copy": copy, "s": s})
        except RuntimeError:
            pass  # torch's deepcopy of a non-wrapper subclass refuses, after its handler ran
        names.append([entry[:2] for entry in log][:1])
    assert names[0] == names[1]


def test_copy_reaches_the_handler_as_copy():
    log = []
    s = pith.ones(2).as_subclass(logging_subclass(pith, log))
    c = copy.copy(s)
    assert type(c) is type(s) and [entry[0] for entry in log] == ["__copy__"]


def test_detach_keeps_the_subclass():
    class Sub(pith.Tensor):
        pass

    s = pith.ones(2).as_subclass(Sub)
    assert type(s.detach()) is Sub
    assert type(s + 1) is Sub
    assert type(s[0]) is Sub
    assert type(pith.cat([pith.ones(1), s])) is Sub
    assert all(type(row) is Sub for row in pith.ones(2, 2).as_subclass(Sub))


def test_max_gives_its_named_tuple_of_subclass_tensors():
    class Sub(pith.Tensor):
        pass

    values, indices = pith.tensor([[1.0, 5.0], [7.0, 2.0]]).as_subclass(Sub).max(1)
    result = pith.tensor([[1.0, 5.0], [7.0, 2.0]]).as_subclass(Sub).max(1)
    assert type(result).__name__ == "max"
    assert type(values) is Sub and type(indices) is Sub
    assert values.tolist() == [5.0, 7.0] and result.indices.tolist() == [1, 0]


def test_in_place_and_out_results_keep_their_identity():
    class Sub(pith.Tensor):
        pass

    s = pith.ones(2).as_subclass(Sub)
    assert s.add_(1) is s
    out = pith.zeros(2).as_subclass(Sub)
    assert pith.add(pith.ones(2), pith.ones(2), out=out) is out
    assert out.tolist() == [2.0, 2.0]


@needs_torch
def test_out_of_a_plain_tensor_becomes_a_subclass_view_as_in_torch():
    for lib in (pith, torch):
        class Sub(lib.Tensor):
            pass

        s, out = lib.ones(2).as_subclass(Sub), lib.zeros(2)
        r = lib.add(s, s, out=out)
        assert type(r) is Sub and r is not out, lib
        r.fill_(7.0)
        assert out.tolist() == [7.0, 7.0], lib


def test_handler_gets_kwargs_none_without_keywords_and_a_dict_with_them():
    seen = []

    class Sub(pith.Tensor):
        @classmethod
        def __pith_function__(cls, func, types, args=(), kwargs="absent"):
            seen.append(kwargs)
            return super().__pith_function__(func, types, args, None if kwargs == "absent"
                                             else kwargs)

    s = pith.ones(2).as_subclass(Sub)
    pith.add(s, 1)
    pith.add(s, 1, alpha=3)
    assert seen == ["absent", {"alpha": 3}]


def test_handler_gets_the_public_callables():
    seen = []

    class Sub(pith.Tensor):
        @classmethod
        def __pith_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__pith_function__(func, types, args, kwargs)

    s = pith.ones(2).as_subclass(Sub)
    pith.add(s, s)
    s.add(s)
    s + s
    s[0]
    pith.ops.pith.add.Tensor(s, s)
    pith.nn.functional.relu(s)
    assert seen[0] is pith.add
    assert seen[1] is pith.Tensor.add
    assert seen[2] is pith.Tensor.add
    assert seen[3] is pith.Tensor.__getitem__
    assert seen[4] is pith.ops.pith.add.Tensor
    assert seen[5] is pith.nn.functional.relu


# ---- NotImplemented and the order of handlers ----------------------------------------------

def two_unrelated(lib, log):
    class A(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(("A", [t.__name__ for t in types]))
            return NotImplemented

    class B(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(("B", [t.__name__ for t in types]))
            return NotImplemented
    return A, B


@needs_torch
def test_every_handler_returning_notimplemented_is_a_type_error_as_in_torch():
    for lib in (pith, torch):
        log = []
        A, B = two_unrelated(lib, log)
        a, b = lib.ones(2).as_subclass(A), lib.ones(2).as_subclass(B)
        with pytest.raises(TypeError) as info:
            lib.add(a, b)
        assert log == [("A", ["A", "B"]), ("B", ["A", "B"])], lib
        message = str(info.value)
        prefix = lib.__name__
        assert f"Multiple dispatch failed for '{prefix}.add'" in message
        assert "handlers returned NotImplemented" in message
        assert f"tensor subclass {A!r}" in message and f"tensor subclass {B!r}" in message


def test_notimplemented_error_names_the_method_and_the_mode():
    class Declines(overrides.TorchFunctionMode):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    t = pith.ones(2)
    with Declines() as mode, pytest.raises(TypeError) as info:
        t.add(1)
    assert "Multiple dispatch failed for 'pith.Tensor.add'" in str(info.value)
    assert f"mode object {mode!r}" in str(info.value)


def ordered(lib, log):
    class Base(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append(cls.__name__)
            return NotImplemented if cls.__name__ == "Derived" else \
                super().__torch_function__(func, types, args, kwargs)

    class Derived(Base):
        pass

    class Other(lib.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append("Other")
            return NotImplemented
    return Base, Derived, Other


@needs_torch
@pytest.mark.parametrize("order", ["base, derived", "derived, base", "other, base, derived"])
def test_subclass_handler_runs_before_its_base_else_left_to_right_as_in_torch(order):
    results = []
    for lib in (pith, torch):
        log = []
        Base, Derived, Other = ordered(lib, log)
        made = {"base": Base, "derived": Derived, "other": Other}
        args = [lib.ones(2).as_subclass(made[name]) for name in order.split(", ")]
        try:
            out = type(lib.stack(args)).__name__
        except TypeError as e:
            out = "TypeError" if "NotImplemented" in str(e) else str(e)
        results.append((log, out))
    assert results[0] == results[1]


def test_handler_that_raises_propagates_its_exception():
    class Boom(Exception):
        pass

    class Sub(pith.Tensor):
        @classmethod
        def __pith_function__(cls, func, types, args=(), kwargs=None):
            raise Boom(func.__name__)

    with pytest.raises(Boom, match="add"):
        pith.ones(2).as_subclass(Sub) + 1


def test_binding_errors_come_before_the_handlers_as_in_torch():
    calls = []

    class Sub(pith.Tensor):
        @classmethod
        def __pith_function__(cls, func, types, args=(), kwargs=None):
            calls.append(func)
            return super().__pith_function__(func, types, args, kwargs)

    with pytest.raises(TypeError, match="must be Tensor, not str"):
        pith.add(pith.ones(2).as_subclass(Sub), "x")
    assert calls == []


# ---- the synonym, super() and the default ---------------------------------------------------

def test_torch_function_is_a_synonym_of_pith_function():
    seen = []

    class ByTorchName(pith.Tensor):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append(("torch", func.__name__))
            return super().__torch_function__(func, types, args, kwargs)

    class ByPithName(pith.Tensor):
        @classmethod
        def __pith_function__(cls, func, types, args=(), kwargs=None):
            seen.append(("pith", func.__name__))
            return super().__pith_function__(func, types, args, kwargs)

    assert type(pith.ones(2).as_subclass(ByTorchName).neg()) is ByTorchName
    assert type(pith.ones(2).as_subclass(ByPithName).neg()) is ByPithName
    assert seen == [("torch", "neg"), ("pith", "neg")]


def test_the_nearer_class_decides_between_the_two_names():
    seen = []

    class Outer(pith.Tensor):
        @classmethod
        def __pith_function__(cls, func, types, args=(), kwargs=None):
            seen.append("outer pith")
            return super().__pith_function__(func, types, args, kwargs)

    class Inner(Outer):
        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            seen.append("inner torch")
            return super().__torch_function__(func, types, args, kwargs)

    pith.ones(2).as_subclass(Inner).neg()
    assert seen == ["inner torch"]


def test_default_is_one_classmethod_under_both_names():
    assert pith.Tensor.__dict__["__pith_function__"] is pith.Tensor.__dict__["__torch_function__"]
    assert pith.Tensor.__pith_function__.__self__ is pith.Tensor


def test_default_declines_types_that_are_not_its_bases():
    class A(pith.Tensor):
        pass

    class B(pith.Tensor):
        pass

    a = pith.ones(1).as_subclass(A)
    assert A.__pith_function__(pith.add, (A, B), (a, a)) is NotImplemented
    assert type(A.__pith_function__(pith.add, (A,), (a, a))) is A


@needs_torch
def test_default_called_on_tensor_itself_declines_a_subclass_type_as_in_torch():
    for lib in (pith, torch):
        class A(lib.Tensor):
            pass

        a = lib.ones(1).as_subclass(A)
        assert lib.Tensor.__torch_function__(lib.add, (A,), (a, a)) is NotImplemented


def test_default_declines_pith_tensor_itself_in_types():
    # torch asks pith.Tensor.__torch_function__ this way when one of its functions gets a
    # pith tensor; PyTorch's own default would run the function (docs/python.md).
    a = pith.ones(1)
    assert pith.Tensor.__torch_function__(pith.add, (pith.Tensor,), (a, a)) is NotImplemented


@needs_torch
def test_a_plain_subclass_is_preserved_by_ops_as_in_torch():
    for lib in (pith, torch):
        class Sub(lib.Tensor):
            pass

        s = lib.ones(2, 2).as_subclass(Sub)
        got = [type(v).__name__ for v in (s * 3, s.t(), s[0], lib.relu(s).sum(), s.T,
                                          s.detach(), s.reshape(4), s.split(1)[0])]
        assert got == ["Sub"] * 8, lib


# ---- __pith_dispatch__ under the function layer ---------------------------------------------

def logging_dispatch(lib, log, with_function):
    """A _make_subclass (as_subclass) subclass with __pith_dispatch__ (__torch_dispatch__
    for torch) that logs the ops and runs them below the Python key; with_function also
    defines a __torch_function__ that defers to the default."""
    if lib is pith:
        from pith.utils import no_dispatch
        dispatch_name = "__pith_dispatch__"
    else:
        from torch.utils._mode_utils import no_dispatch
        dispatch_name = "__torch_dispatch__"

    def handler(cls, func, types, args=(), kwargs=None):
        log.append(func.__name__)
        with no_dispatch():
            return func(*args, **(kwargs or {}))

    body = {dispatch_name: classmethod(handler)}
    if with_function:
        def function(cls, func, types, args=(), kwargs=None):
            return super(Logging, cls).__torch_function__(func, types, args, kwargs)
        body["__torch_function__"] = classmethod(function)
    Logging = type("Logging", (lib.Tensor,), body)
    return Logging


@needs_torch
@pytest.mark.parametrize("with_function", [False, True])
def test_dispatch_subclass_sees_the_ops_torch_shows(with_function):
    results = []
    for lib in (pith, torch):
        log = []
        Logging = logging_dispatch(lib, log, with_function)
        t = lib.tensor([-1.0, 2.0, 3.0])
        r = lib.relu(t.as_subclass(Logging) * 3).sum()
        results.append(([name.split(".")[0] for name in log], type(r).__name__, r.item()))
    assert results[0] == results[1]
    assert results[0][0] == (["mul", "relu", "sum"] if with_function else ["mul"])


@needs_torch
@pytest.mark.parametrize("with_function", [False, True])
def test_detach_of_a_dispatch_subclass_gives_torch_type(with_function):
    results = []
    for lib in (pith, torch):
        log = []
        Logging = logging_dispatch(lib, log, with_function)
        d = lib.tensor([1.0, 2.0]).as_subclass(Logging).detach()
        results.append(([name.split(".")[0] for name in log], type(d).__name__))
    assert results[0] == results[1]
    assert results[0] == (["detach"], "Logging" if with_function else "Tensor")


def test_defining_pith_dispatch_disables_the_inherited_function_layer():
    class Dispatching(pith.Tensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    assert Dispatching.__pith_function__ is pith._C._disabled_pith_function_impl
    assert Dispatching.__torch_function__ is pith._C._disabled_pith_function_impl
    assert not pith._C._function_overrides(Dispatching)

    class Both(pith.Tensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    assert pith._C._function_overrides(Both)
    assert Both.__dict__["__torch_function__"] is not pith._C._disabled_pith_function_impl


# ---- autograd -------------------------------------------------------------------------------

def run_logged_leaf(lib, code):
    """run_logged with `s` a Logged leaf [1, 2] that requires grad (_make_subclass, as
    nn.Parameter is made)."""
    log = []
    Logged = logging_subclass(lib, log)
    s = lib.Tensor._make_subclass(Logged, lib.tensor([1.0, 2.0]), True)
    result = eval(code, {"lib": lib, "s": s, "Logged": Logged, "hook": _identity})
    return log, type(result).__name__


def _identity(grad):
    """A tensor hook that holds nothing of the test's (a lambda made by eval would hold the
    tensor it hooks through its globals)."""
    return grad


AUTOGRAD_CALLS = [
    "s.requires_grad", "s.grad", "s.grad_fn", "s.is_leaf", "s._version", "s.output_nr",
    "s.data", "s.retains_grad", "(s * 2).grad_fn", "(s * 2).retain_grad()",
    "(s * 2).retains_grad", "s.register_hook(hook) is not None", "s.requires_grad_()",
    "s.requires_grad_(False)", "s.detach()", "(s * 2).sum().backward()",
    "((s * 2).sum().backward(), s.grad)[1]", "setattr(s, 'grad', lib.ones(2))",
    "delattr(s, 'grad')", "setattr(s, 'requires_grad', False)",
    "lib.Tensor._make_subclass(Logged, lib.ones(2)).detach_()",
]


@needs_torch
@pytest.mark.parametrize("code", AUTOGRAD_CALLS)
def test_autograd_attributes_reach_the_handler_as_in_torch(code):
    assert run_logged_leaf(pith, code) == run_logged_leaf(torch, code)


def test_as_subclass_keeps_the_history():
    t = pith.tensor([1.0, 2.0], requires_grad=True)
    s = t.as_subclass(logging_subclass(pith, []))
    assert s.requires_grad and not s.is_leaf
    assert s.grad_fn.name() == "AliasBackward0"
    (s * 3).sum().backward()
    assert t.grad.tolist() == [3.0, 3.0]


@needs_torch
@pytest.mark.parametrize("make", ["leaf", "as_subclass"])
def test_gradients_through_a_function_subclass_equal_torch(make):
    values = [0.5, -1.0, 2.0]
    results = []
    for lib in (pith, torch):
        log = []
        Logged = logging_subclass(lib, log)
        if make == "leaf":
            leaf = x = lib.Tensor._make_subclass(Logged, lib.tensor(values), True)
        else:
            leaf = lib.tensor(values, requires_grad=True)
            x = leaf.as_subclass(Logged)
        y = (x * x + x.sin() * 3).relu()
        loss = (y / 2).sum()
        loss.backward()
        results.append((leaf.grad.tolist(), type(loss).__name__, type(leaf.grad).__name__,
                        loss.grad_fn.name(), [entry[0] for entry in log]))
    (got, *rest), (want, *rest_want) = results
    assert got == pytest.approx(want)
    assert rest == rest_want


# ---- nn.Parameter --------------------------------------------------------------------------

@needs_torch
def test_ops_on_a_parameter_give_plain_tensors_as_in_torch():
    for lib in (pith, torch):
        w = lib.nn.Parameter(lib.ones(2, 2))
        with lib.no_grad():
            got = [type(v).__name__ for v in (w * 2, w.t(), w[0], w.detach(), w + w)]
        assert got == ["Tensor"] * 5, lib
        assert lib.nn.Parameter.__torch_function__ is lib._C._disabled_torch_function_impl


def test_parameter_does_not_override_the_layer():
    assert not pith._C._function_overrides(pith.nn.Parameter)
    assert not overrides.has_pith_function_unary(pith.nn.Parameter(pith.ones(1)))


# ---- the disable guards --------------------------------------------------------------------

class Counted(pith.Tensor):
    calls = []

    @classmethod
    def __pith_function__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func.__name__)
        return super().__pith_function__(func, types, args, kwargs)


class NegMode(overrides.TorchFunctionMode):
    def __init__(self):
        super().__init__()
        self.seen = []

    def __torch_function__(self, func, types, args=(), kwargs=None):
        self.seen.append(func.__name__)
        return func(*args, **(kwargs or {}))


def test_disable_subclass_guard_skips_subclass_handlers_but_not_modes():
    Counted.calls.clear()
    s = pith.ones(2).as_subclass(Counted)
    with NegMode() as mode, pith._C.DisablePithFunctionSubclass():
        assert not pith._C._is_pith_function_enabled()
        r = s.neg()
    assert type(r) is pith.Tensor
    assert Counted.calls == [] and mode.seen == ["neg"]
    assert pith._C._is_pith_function_enabled()


def test_disable_guard_skips_modes_too():
    Counted.calls.clear()
    s = pith.ones(2).as_subclass(Counted)
    with NegMode() as mode, pith._C.DisablePithFunction():
        assert pith._C._is_pith_function_all_disabled()
        assert type(s.neg()) is pith.Tensor
        with pith._C.DisablePithFunctionSubclass():  # does not weaken the outer guard
            s.neg()
        assert pith._C._is_pith_function_all_disabled()
    assert Counted.calls == [] and mode.seen == []
    assert not pith._C._is_pith_function_all_disabled()


def test_guards_have_their_torch_names():
    assert pith._C.DisableTorchFunctionSubclass is pith._C.DisablePithFunctionSubclass
    assert pith._C.DisableTorchFunction is pith._C.DisablePithFunction
    assert pith._C._disabled_torch_function_impl is pith._C._disabled_pith_function_impl


def test_guard_restores_the_state_when_the_body_raises():
    with pytest.raises(ZeroDivisionError), pith._C.DisablePithFunctionSubclass():
        1 / 0
    assert pith._C._is_pith_function_enabled()


def test_guard_takes_no_arguments():
    with pytest.raises(TypeError, match="takes no arguments"):
        pith._C.DisablePithFunction(1)


def test_disabled_impl_runs_the_function_with_subclasses_disabled():
    s = pith.ones(2).as_subclass(Counted)
    Counted.calls.clear()
    r = pith._C._disabled_pith_function_impl(pith.neg, (Counted,), [s])
    assert type(r) is pith.Tensor and Counted.calls == []
    with pytest.raises(TypeError, match="expected List or Tuple"):
        pith._C._disabled_pith_function_impl(pith.neg, (), s)


@needs_torch
def test_guards_behave_as_torchs():
    for lib in (pith, torch):
        log = []
        Logged = logging_subclass(lib, log)
        s = lib.ones(2).as_subclass(Logged)
        with lib._C.DisableTorchFunctionSubclass():
            kind = type(s + 1).__name__
        assert (log, kind) == ([], "Tensor"), lib


# ---- function modes ------------------------------------------------------------------------

def recording_mode(lib, name, log):
    base = lib.overrides.TorchFunctionMode

    class Recording(base):
        def __torch_function__(self, func, types, args=(), kwargs=None):
            log.append((name, func.__name__, [t.__name__ for t in types]))
            return func(*args, **(kwargs or {}))
    return Recording()


@needs_torch
def test_nested_modes_see_calls_innermost_first_as_in_torch():
    results = []
    for lib in (pith, torch):
        log = []
        with recording_mode(lib, "outer", log), recording_mode(lib, "inner", log):
            lib.zeros(2) + 1
            lib.tensor([1.0])
        results.append(log)
    assert results[0] == results[1]
    assert [entry[:2] for entry in results[0][:2]] == [("inner", "zeros"), ("outer", "zeros")]


@needs_torch
def test_mode_sees_a_factory_with_requires_grad_as_in_torch():
    results = []
    for lib in (pith, torch):
        log = []
        with recording_mode(lib, "mode", log):
            z = lib.zeros(2, requires_grad=True)
            t = lib.tensor([1.0], requires_grad=True)
            y = (z * 2).sum()
        results.append((log, z.requires_grad, z.is_leaf, t.requires_grad,
                        y.grad_fn.name()))
    assert results[0] == results[1]


@needs_torch
def test_a_mode_answer_to_a_factory_is_returned_as_it_is():
    results = []
    for lib in (pith, torch):
        class Answering(lib.overrides.TorchFunctionMode):
            def __torch_function__(self, func, types, args=(), kwargs=None):
                with lib._C.DisableTorchFunction():
                    return lib.ones(2, dtype=lib.int64)

        with Answering():
            r = lib.zeros(2, requires_grad=True)
        results.append((str(r.dtype).split(".")[-1], r.requires_grad))
    assert results[0] == results[1] == ("int64", False)


@needs_torch
def test_mode_runs_before_the_subclass_handlers_as_in_torch():
    results = []
    for lib in (pith, torch):
        log = []
        Logged = logging_subclass(lib, log)
        with recording_mode(lib, "mode", log):
            r = lib.ones(2).as_subclass(Logged).neg()
        results.append((log, type(r).__name__))
    assert results[0] == results[1]


def test_mode_is_popped_while_its_handler_runs():
    stacks = []

    class Inspecting(overrides.TorchFunctionMode):
        def __pith_function__(self, func, types, args=(), kwargs=None):
            stacks.append(overrides._get_current_function_mode_stack())
            return func(*args, **(kwargs or {}))

    with Inspecting() as mode:
        pith.ones(1)
        assert overrides._get_current_function_mode() is mode
    assert stacks == [[]]
    assert overrides._get_current_function_mode() is None


def test_modes_are_per_thread():
    log = []
    seen_in_thread = []

    def other():
        pith.ones(1)
        seen_in_thread.append(pith._C._len_pith_function_stack())

    with recording_mode(pith, "main", log):
        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
    assert seen_in_thread == [0]
    assert log == []


def test_mode_exited_out_of_order_raises():
    first, second = NegMode(), NegMode()
    first.__enter__()
    second.__enter__()
    with pytest.raises(RuntimeError, match="exited before"):
        first.__exit__(None, None, None)
    second.__exit__(None, None, None)
    first.__exit__(None, None, None)
    assert pith._C._len_pith_function_stack() == 0


def test_pushing_an_object_without_a_handler_is_a_type_error():
    with pytest.raises(TypeError, match="must define __pith_function__"):
        pith._C._push_function_mode(object())


def test_mode_without_a_handler_raises_not_implemented_error():
    with pytest.raises(NotImplementedError), overrides.TorchFunctionMode():
        pith.ones(1)


def test_base_mode_runs_every_call():
    with overrides.BaseTorchFunctionMode():
        assert pith.ones(2).add(1).tolist() == [2.0, 2.0]


def test_pop_mode_temporarily_restores_the_mode():
    with NegMode() as mode:
        with overrides._pop_mode_temporarily() as popped:
            assert popped is mode and pith._C._len_pith_function_stack() == 0
        assert pith._C._len_pith_function_stack() == 1


def test_is_mode_enabled_follows_the_stack_and_the_guard():
    assert not pith._C._is_pith_function_mode_enabled()
    with NegMode():
        assert overrides._is_torch_function_mode_enabled()
        with pith._C.DisableTorchFunction():
            assert not pith._C._is_pith_function_mode_enabled()


# ---- tensor-likes and pith.overrides --------------------------------------------------------

def tensor_like(lib, log):
    class Diagonal:
        """PyTorch's DiagonalTensor example: no tensor, but it handles the functions."""

        def __init__(self, n, value):
            self.n, self.value = n, value

        @classmethod
        def __torch_function__(cls, func, types, args=(), kwargs=None):
            log.append((func.__name__, [t.__name__ for t in types]))
            if func is lib.add:
                return "added"
            return NotImplemented
    return Diagonal


@needs_torch
def test_tensor_like_object_binds_a_tensor_parameter_as_in_torch():
    results = []
    for lib in (pith, torch):
        log = []
        Diagonal = tensor_like(lib, log)
        d = Diagonal(2, 3.0)
        got = [lib.add(d, lib.ones(2)), lib.add(lib.ones(2), d)]
        with pytest.raises(TypeError, match="NotImplemented"):
            lib.mul(d, 2)
        results.append((got, log))
    assert results[0] == results[1]


def test_tensor_like_is_refused_when_subclasses_are_disabled():
    log = []
    d = tensor_like(pith, log)(2, 3.0)
    with pith._C.DisablePithFunctionSubclass(), pytest.raises(TypeError, match="must be Tensor"):
        pith.add(d, pith.ones(2))
    assert log == []


def test_tensor_like_in_a_list_binds_a_tensor_list():
    log = []
    d = tensor_like(pith, log)(2, 3.0)
    with pytest.raises(TypeError, match="NotImplemented"):
        pith.cat([pith.ones(1), d])
    assert log == [("cat", ["Diagonal"])]


def test_has_pith_function_and_is_tensor_like():
    class Sub(pith.Tensor):
        pass

    plain, s = pith.ones(1), pith.ones(1).as_subclass(Sub)
    assert not overrides.has_pith_function((plain, 1, "x"))
    assert overrides.has_pith_function([plain, s])
    assert overrides.has_torch_function_unary(s)
    assert not overrides.has_pith_function_variadic(plain, 2.0)
    assert overrides.has_pith_function_variadic(plain, s)
    with pith._C.DisablePithFunctionSubclass():
        assert not overrides.has_pith_function_unary(s)
    with NegMode():
        assert overrides.has_pith_function_unary(1)
    assert overrides.is_tensor_like(plain) and overrides.is_tensor_like(s)
    assert not overrides.is_tensor_like(1)
    assert overrides.is_tensor_like(tensor_like(pith, [])(1, 1.0))
    assert overrides.is_tensor_method_or_property(pith.Tensor.add)
    assert overrides.is_tensor_method_or_property(pith.Tensor.shape.__get__)
    assert not overrides.is_tensor_method_or_property(pith.add)


def test_handle_pith_function_from_a_python_function():
    def double(x):
        if overrides.has_pith_function((x,)):
            return overrides.handle_pith_function(double, (x,), x)
        return x * 2

    class Sub(pith.Tensor):
        @classmethod
        def __pith_function__(cls, func, types, args=(), kwargs=None):
            return ("handled", func is double, args, kwargs)

    s = pith.ones(1).as_subclass(Sub)
    assert double(s) == ("handled", True, (s,), {})
    assert double(pith.ones(1)).tolist() == [2.0]


def test_default_nowrap_functions():
    assert overrides.get_default_nowrap_functions() == {pith.Tensor.grad.__get__}


def test_pith_overrides_is_imported_on_first_use():
    assert pith.overrides is overrides
    assert overrides.PithFunctionMode is overrides.TorchFunctionMode


# ---- Python functions and properties of pith -------------------------------------------------

def test_python_methods_keep_their_names_and_bind_as_methods():
    assert pith.Tensor.type_as.__name__ == "type_as"
    assert pith.nn.functional.relu.__wrapped__.__name__ == "relu"
    t = pith.ones(2)
    assert t.type_as(pith.ones(1, dtype=pith.int64)).dtype == pith.int64
    assert pith.Tensor.view_as(t, pith.ones(1, 2)).shape == (1, 2)


def test_property_setter_reaches_the_handler():
    seen = []

    class Sub(pith.Tensor):
        @classmethod
        def __pith_function__(cls, func, types, args=(), kwargs=None):
            seen.append(func)
            return super().__pith_function__(func, types, args, kwargs)

    s = pith.ones(1).as_subclass(Sub)
    s.requires_grad = False
    assert seen == [pith.Tensor.requires_grad.__set__]


# ---- pith.compile -----------------------------------------------------------------------

def test_compile_leaves_a_function_mode_its_calls():
    model = pith.nn.Linear(2, 2)
    compiled = pith.compile(model)
    x = pith.ones(1, 2)
    compiled(x)
    mode = NegMode()
    with mode:
        compiled(x)
    assert "linear" in mode.seen


# ---- leaks ---------------------------------------------------------------------------------

def test_layer_leaks_no_tensors():
    class Sub(pith.Tensor):
        pass

    before = pith._C._live_tensors()
    for _ in range(20):
        s = pith.ones(3).as_subclass(Sub)
        (s + 1).sum().item()
        pith.cat([s, s])
        with NegMode():
            s[0]
        del s
    assert pith._C._live_tensors() == before


@needs_torch
def test_a_torch_function_given_a_pith_tensor_is_a_type_error_not_a_recursion():
    with pytest.raises(TypeError):
        torch.add(pith.ones(1), torch.ones(1))
