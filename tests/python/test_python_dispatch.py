"""__pith_dispatch__ subclasses, wrapper subclasses, dispatch modes and custom operators:
PyTorch's test/test_python_dispatch.py, ported where it applies to pith.

The subclasses here are PyTorch's canonical ones: LoggingTensor (a wrapper subclass holding
an inner tensor, which logs every op as "$2 = pith.ops.pith.add.Tensor($0, $1)"), a plain
(_make_subclass) subclass, subclasses whose metadata come from Python, and a logging mode.
"""
import threading

import pytest

import pith
from pith.utils import DispatchMode, no_dispatch


# ---- the canonical subclasses and a logger ------------------------------------------------

class Logger:
    """Collects "$<out> = <func>(<args>)" lines; tensors are numbered in order of first
    appearance, as torch.testing._internal.logging_tensor.capture_logs does."""

    def __init__(self):
        self.lines = []
        self.ids = {}
        self.keep = []  # the numbered objects stay alive, so that their ids stay unique

    def name(self, x):
        if isinstance(x, pith.Tensor):
            if id(x) not in self.ids:
                self.ids[id(x)] = len(self.ids)
                self.keep.append(x)
            return f"${self.ids[id(x)]}"
        if isinstance(x, (list, tuple)):
            inner = ", ".join(self.name(v) for v in x)
            return f"[{inner}]" if isinstance(x, list) else f"({inner})"
        return repr(x)

    def input(self, label, x):
        self.lines.append(f"{self.name(x)} = input({label!r})")

    def op(self, func, args, kwargs, out):
        parts = [self.name(a) for a in args]
        parts += [f"{k}={self.name(v)}" for k, v in (kwargs or {}).items()]
        self.lines.append(f"{self.name(out)} = {func!r}({', '.join(parts)})")


LOG = []  # the active Logger, if any


def log_op(func, args, kwargs, out):
    if LOG:
        LOG[-1].op(func, args, kwargs, out)


class capture_logs:
    def __enter__(self):
        LOG.append(Logger())
        return LOG[-1]

    def __exit__(self, *exc):
        LOG.pop()


def tree_map(fn, x):
    if isinstance(x, (list, tuple)):
        return type(x)(tree_map(fn, v) for v in x)
    if isinstance(x, dict):
        return {k: tree_map(fn, v) for k, v in x.items()}
    return fn(x)


class LoggingTensor(pith.Tensor):
    """A wrapper subclass: no data of its own, the real tensor in `elem`."""

    @staticmethod
    def __new__(cls, elem):
        r = pith.Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(),
                                               dtype=elem.dtype, device=elem.device)
        r.elem = elem
        return r

    def __repr__(self):
        return f"{type(self).__name__}({self.elem!r})"

    @classmethod
    def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}

        def unwrap(e):
            return e.elem if isinstance(e, LoggingTensor) else e

        def wrap(e):
            return cls(e) if isinstance(e, pith.Tensor) else e

        out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs))
        # an in-place op returns its (mutated) self, as PyTorch's in-place methods do
        out = args[0] if func.name.endswith("_") else tree_map(wrap, out)
        log_op(func, args, kwargs, out)
        return out


class LoggingMode(DispatchMode):
    def __pith_dispatch__(self, func, types, args=(), kwargs=None):
        out = func(*args, **(kwargs or {}))
        log_op(func, args, kwargs, out)
        return out


class PlainSubclass(pith.Tensor):
    """A _make_subclass subclass: shares its data, handles ops below the Python key."""

    calls = []

    @staticmethod
    def __new__(cls, elem):
        return pith.Tensor._make_subclass(cls, elem)

    @classmethod
    def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func)
        with no_dispatch():
            return func(*args, **(kwargs or {}))


# ---- __pith_dispatch__ on subclasses -------------------------------------------------------

def test_op_on_a_subclass_reaches_its_handler_with_the_overload():
    seen = []

    class Sub(LoggingTensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            seen.append((func, types, args, kwargs))
            return super().__pith_dispatch__(func, types, args, kwargs)

    w = Sub(pith.ones(2))
    r = w + w
    assert type(r) is Sub
    assert r.elem.tolist() == [2.0, 2.0]
    (func, types, args, kwargs), = seen
    assert func is pith.ops.pith.add.Tensor
    assert types == (Sub,)
    assert args[0] is w and args[1] is w
    assert kwargs == {}


def test_logs_of_an_op_sequence():
    with capture_logs() as logs:
        x = LoggingTensor(pith.tensor([3.0]))
        logs.input("x", x)
        y = x * x
        z = y + x
        z.sum()
        x.neg().exp()
    assert logs.lines == [
        "$0 = input('x')",
        "$1 = pith.ops.pith.mul.Tensor($0, $0)",
        "$2 = pith.ops.pith.add.Tensor($1, $0)",
        "$3 = pith.ops.pith.sum($2)",  # aten.sum.default: x.sum() has no dims
        "$4 = pith.ops.pith.neg($0)",
        "$5 = pith.ops.pith.exp($4)",
    ]


@pytest.mark.parametrize("call", ["x.expand_as(other)", "pith.broadcast_tensors(x, other)"])
def test_a_composites_part_dispatches_on_its_own_arguments(call):
    # As PyTorch's: expand_as and broadcast_tensors expand x, which requires grad, with no
    # regard to the subclass of `other`, which no part takes
    x = pith.ones(3, dtype=pith.float64, requires_grad=True)
    other = LoggingTensor(pith.zeros(2, 3, dtype=pith.float64))
    with capture_logs() as logs:
        result = eval(call)
    first = result[0] if isinstance(result, tuple) else result
    assert logs.lines == []
    assert type(first) is pith.Tensor and first.grad_fn.name() == "ExpandBackward0"


def test_kwarg_only_arguments_arrive_as_kwargs_and_defaults_are_dropped():
    with capture_logs() as logs:
        x = LoggingTensor(pith.ones(2))
        y = LoggingTensor(pith.ones(2))
        logs.input("x", x)
        logs.input("y", y)
        pith.add(x, y)
        pith.add(x, y, alpha=1)
        pith.add(x, y, alpha=2)
    assert logs.lines[2:] == [
        "$2 = pith.ops.pith.add.Tensor($0, $1)",
        "$3 = pith.ops.pith.add.Tensor($0, $1)",
        "$4 = pith.ops.pith.add.Tensor($0, $1, alpha=2)",
    ]


def test_trailing_positional_defaults_are_dropped_even_when_given():
    with capture_logs() as logs:
        x = LoggingTensor(pith.ones(2, 3))
        logs.input("x", x)
        x.sum(0)
        x.sum(0, keepdim=False)
        x.sum(0, keepdim=True)
    assert logs.lines[1:] == [
        "$1 = pith.ops.pith.sum.dim_IntList($0, [0])",
        "$2 = pith.ops.pith.sum.dim_IntList($0, [0])",
        "$3 = pith.ops.pith.sum.dim_IntList($0, [0], True)",
    ]


def test_non_default_kwarg_only_dtype_arrives_as_a_kwarg():
    with capture_logs() as logs:
        x = LoggingTensor(pith.ones(2))
        logs.input("x", x)
        x.sum(0, dtype=pith.float64)
    assert logs.lines[1] == "$1 = pith.ops.pith.sum.dim_IntList($0, [0], dtype=pith.float64)"


@pytest.mark.parametrize("scalar", [1, 2.5, True])
def test_a_python_number_operand_arrives_as_that_number(scalar):
    seen = []

    class Sub(LoggingTensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            seen.append(args[1])
            return super().__pith_dispatch__(func, types, args, kwargs)

    Sub(pith.ones(2)) * scalar
    assert seen == [scalar]
    assert type(seen[0]) is type(scalar)


def test_a_tensor_list_argument_arrives_as_a_list_of_the_same_objects():
    with capture_logs() as logs:
        x = LoggingTensor(pith.ones(2))
        y = LoggingTensor(pith.zeros(2))
        logs.input("x", x)
        logs.input("y", y)
        r = pith.cat([x, y])
    assert logs.lines[2] == "$2 = pith.ops.pith.cat([$0, $1])"
    assert r.elem.tolist() == [1.0, 1.0, 0.0, 0.0]


def test_a_tuple_result_is_rebuilt_from_the_handlers_tuple():
    x = LoggingTensor(pith.tensor([[1.0, 5.0], [7.0, 2.0]]))
    values, indices = x.max(1)
    assert type(values) is LoggingTensor and type(indices) is LoggingTensor
    assert values.elem.tolist() == [5.0, 7.0]
    assert indices.elem.tolist() == [1, 0]


@pytest.mark.parametrize("sequence", [list, tuple])
def test_a_tensor_list_result_may_be_a_list_or_a_tuple(sequence):
    class Splitter(pith.Tensor):
        @staticmethod
        def __new__(cls, elem):
            return pith.Tensor._make_subclass(cls, elem)

        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            with no_dispatch():
                return sequence(func(*args, **(kwargs or {})))

    parts = Splitter(pith.tensor([0.0, 1.0, 2.0])).split(2)
    assert [p.tolist() for p in parts] == [[0.0, 1.0], [2.0]]


def test_an_inplace_op_returns_the_same_object():
    x = LoggingTensor(pith.ones(2))
    assert x.add_(1) is x
    assert x.elem.tolist() == [2.0, 2.0]


@pytest.mark.parametrize("call", [lambda x: x.neg(), lambda x: x.detach()],
                         ids=["neg", "detach"])
def test_a_handler_returning_the_wrong_type_raises(call):
    class Arf(LoggingTensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            return "arf"

    with pytest.raises(TypeError, match="str") as info:
        call(Arf(pith.zeros(1)))
    assert isinstance(info.value, RuntimeError)  # PyTorch raises RuntimeError here


def test_a_handler_returning_none_for_a_tensor_op_raises_naming_the_op():
    class Nothing(LoggingTensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            return None

    with pytest.raises(TypeError, match=r"pith\.ops\.pith\.neg.*returned None, expected a "
                                        r"Tensor"):
        Nothing(pith.zeros(1)).neg()


def test_a_tuple_op_needs_a_tuple_of_the_right_length():
    class Short(LoggingTensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            return (args[0],)

    with pytest.raises(TypeError, match="returned 1 values, expected 2"):
        Short(pith.ones(2, 2)).max(1)


# ---- priority and NotImplemented -----------------------------------------------------------

class ErrorA(RuntimeError):
    pass


class ErrorB(RuntimeError):
    pass


class RaisesA(pith.Tensor):
    @staticmethod
    def __new__(cls, elem):
        return pith.Tensor._make_subclass(cls, elem)

    @classmethod
    def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
        raise ErrorA


class RaisesB(RaisesA):
    @staticmethod
    def __new__(cls, elem):
        return pith.Tensor._make_subclass(cls, elem)

    @classmethod
    def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
        raise ErrorB


@pytest.mark.parametrize("left, right, error", [
    (RaisesA, RaisesA, ErrorA), (RaisesA, RaisesB, ErrorB), (RaisesB, RaisesA, ErrorB),
    (RaisesB, RaisesB, ErrorB)])
def test_the_more_derived_subclass_handles_first(left, right, error):
    with pytest.raises(error):
        pith.add(left(pith.empty(1)), right(pith.empty(1)))


def test_a_handlers_exception_reaches_the_caller_as_itself():
    class Boom(Exception):
        pass

    class Raiser(LoggingTensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            raise Boom("inside the handler")

    with pytest.raises(Boom, match="inside the handler"):
        Raiser(pith.ones(1)) + 1


def test_types_lists_each_subclass_once_most_derived_first():
    seen = []

    class Base(LoggingTensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            seen.append(types)
            return super().__pith_dispatch__(func, types, args, kwargs)

    class Derived(Base):
        pass

    a, b = Base(pith.ones(1)), Derived(pith.ones(1))
    pith.stack([a, b, a, b])
    assert seen == [(Derived, Base)]


def test_not_implemented_falls_through_to_the_next_subclass():
    order = []

    class Declines(LoggingTensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            order.append("declines")
            return NotImplemented

    class Other(LoggingTensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            order.append("other")
            return args[1]

    d, o = Declines(pith.ones(1)), Other(pith.ones(1))
    assert (d + o) is o
    assert order == ["declines", "other"]


def test_all_handlers_returning_not_implemented_is_a_type_error_naming_the_op():
    class Declines(LoggingTensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    with pytest.raises(TypeError, match=r"Multiple dispatch failed for "
                                        r"'pith\.ops\.pith\.neg'.*NotImplemented") as info:
        Declines(pith.ones(1)).neg()
    assert "Declines" in str(info.value)


# ---- below the Python key ------------------------------------------------------------------

def test_func_under_no_dispatch_runs_the_kernel_on_the_subclass_itself():
    PlainSubclass.calls.clear()
    x = PlainSubclass(pith.tensor([1.0, 2.0]))
    r = x * 3
    assert PlainSubclass.calls == [pith.ops.pith.mul.Tensor]
    assert type(r) is pith.Tensor  # a result made below the Python key is plain
    assert r.tolist() == [3.0, 6.0]


def test_make_subclass_shares_the_data():
    base = pith.tensor([1.0, 2.0])
    x = PlainSubclass(base)
    assert type(x) is PlainSubclass and x is not base
    assert x.data_ptr() == base.data_ptr()


def test_a_subclass_without_a_handler_computes_as_a_plain_tensor_of_its_class():
    class NoHandler(pith.Tensor):
        @staticmethod
        def __new__(cls, elem):
            return pith.Tensor._make_subclass(cls, elem)

    r = NoHandler(pith.ones(2)) + 1
    # the kernel computes it; the default __pith_function__ gives it the class, as PyTorch's
    # __torch_function__ does (Note [Function layer])
    assert type(r) is NoHandler
    assert r.tolist() == [2.0, 2.0]


def test_a_wrapper_under_no_dispatch_reaches_the_meta_kernels():
    x = LoggingTensor(pith.ones(2, 3))
    with no_dispatch():
        r = x.sum(1)
    assert type(r) is pith.Tensor
    assert r.device == pith.device("meta")
    assert tuple(r.shape) == (2,)


def test_no_dispatch_restores_the_keys_after_an_exception():
    with pytest.raises(ValueError):
        with no_dispatch():
            raise ValueError
    with capture_logs() as logs:
        LoggingTensor(pith.ones(1)).neg()
    assert len(logs.lines) == 1


def test_nested_wrappers_reach_the_inner_handler():
    with capture_logs() as logs:
        inner = LoggingTensor(pith.ones(1))
        outer = LoggingTensor(inner)
        logs.input("outer", outer)
        logs.input("inner", inner)
        r = outer + 1
    assert type(r) is LoggingTensor and type(r.elem) is LoggingTensor
    assert logs.lines[2:] == [
        "$2 = pith.ops.pith.add.Tensor($1, 1)",
        "$3 = pith.ops.pith.add.Tensor($0, 1)",
    ]


# ---- wrapper subclasses ---------------------------------------------------------------------

def test_make_wrapper_subclass_does_not_allocate():
    # 8 TB of float64: fine, because a wrapper has no data of its own.
    w = pith.Tensor._make_wrapper_subclass(LoggingTensor, (1000000000000,),
                                           dtype=pith.float64)
    assert w.numel() == 1000000000000
    assert w.dtype == pith.float64


def test_make_wrapper_subclass_propagates_metadata():
    x = pith.ones(4, 6).t()[1:]
    w = LoggingTensor(x)
    assert w.shape == x.shape
    assert w.stride() == x.stride()
    assert w.dtype == x.dtype
    assert w.is_contiguous() is False
    assert w.device == pith.device("cpu")
    assert w.dim() == 2 and w.numel() == 20


def test_make_wrapper_subclass_on_meta_reports_meta():
    w = pith.Tensor._make_wrapper_subclass(LoggingTensor, (2,), device="meta")
    assert w.device == pith.device("meta")


def test_make_wrapper_subclass_refuses_a_class_without_a_handler():
    class Plain(pith.Tensor):
        pass

    with pytest.raises(TypeError, match="Plain must define __pith_dispatch__"):
        pith.Tensor._make_wrapper_subclass(Plain, (2, 2))


@pytest.mark.parametrize("kwargs, error, match", [
    ({"strides": (1,)}, ValueError, "1 strides for 2 sizes"),
    ({"storage_offset": 3}, NotImplementedError, "storage_offset"),
    ({"device": "cuda"}, AssertionError, "not compiled with CUDA"),
    ({"device": "mps"}, NotImplementedError, "mps"),
    ({"dispatch_sizes_strides_policy": "shapes"}, ValueError, "'strides' or 'sizes'"),
    ({"dtype": "float32"}, TypeError, "dtype must be a pith.dtype"),
    ({"bogus": 1}, TypeError, "unexpected keyword argument 'bogus'"),
])
def test_make_wrapper_subclass_rejects_bad_arguments(kwargs, error, match):
    with pytest.raises(error, match=match):
        pith.Tensor._make_wrapper_subclass(LoggingTensor, (2, 3), **kwargs)


@pytest.mark.parametrize("size", [(2, "3"), 5, (-1,)])
def test_make_wrapper_subclass_rejects_a_bad_size(size):
    with pytest.raises((TypeError, ValueError)):
        pith.Tensor._make_wrapper_subclass(LoggingTensor, size)


def test_make_wrapper_subclass_rejects_a_class_that_is_not_a_tensor():
    with pytest.raises(TypeError, match="subclass of pith.Tensor"):
        pith.Tensor._make_wrapper_subclass(int, (2,))


def test_detach_goes_through_the_handler():
    with capture_logs() as logs:
        x = LoggingTensor(pith.tensor([3.0]))
        logs.input("x", x)
        d = x.detach()
    assert type(d) is LoggingTensor
    assert logs.lines == ["$0 = input('x')", "$1 = pith.ops.pith.detach($0)"]


def test_detach_under_no_dispatch_is_a_plain_alias():
    x = PlainSubclass(pith.tensor([3.0]))
    PlainSubclass.calls.clear()
    with no_dispatch():
        d = x.detach()
    assert PlainSubclass.calls == []
    assert type(d) is pith.Tensor and d.data_ptr() == x.data_ptr()


# ---- metadata from Python -------------------------------------------------------------------

def metadata_subclass(answers, wrapper=True, **policy):
    """A subclass whose handler answers the metadata operators from `answers`
    (func -> value) and declines everything else."""
    calls = []

    class Meta(pith.Tensor):
        @staticmethod
        def __new__(cls, data):
            if wrapper:
                return pith.Tensor._make_wrapper_subclass(cls, data.shape,
                                                          strides=data.stride(),
                                                          dtype=data.dtype, **policy)
            return pith.Tensor._make_subclass(cls, data, **policy)

        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            calls.append(func)
            return answers.get(func, NotImplemented)

    Meta.calls = calls
    return Meta


@pytest.mark.parametrize("wrapper", [True, False])
def test_strides_policy_asks_is_contiguous(wrapper):
    ops = pith.ops.pith
    yes = metadata_subclass({ops.is_contiguous.default: True}, wrapper,
                            dispatch_sizes_strides_policy="strides")
    no = metadata_subclass({ops.is_contiguous.default: False}, wrapper,
                           dispatch_sizes_strides_policy="strides")
    assert yes(pith.ones(3, 3).t()).is_contiguous() is True
    assert no(pith.ones(3, 3)).is_contiguous() is False
    assert no.calls == [ops.is_contiguous.default]


@pytest.mark.parametrize("wrapper", [True, False])
def test_strides_policy_asks_stride(wrapper):
    ops = pith.ops.pith
    custom = metadata_subclass({ops.stride.default: (4, 2)}, wrapper,
                               dispatch_sizes_strides_policy="strides")
    default = metadata_subclass({ops.stride.default: None}, wrapper,
                                dispatch_sizes_strides_policy="strides")
    assert custom(pith.ones(3, 3)).stride() == (4, 2)
    assert default(pith.ones(6, 2)).stride() == (2, 1)


@pytest.mark.parametrize("wrapper", [True, False])
def test_a_none_answer_means_the_default_contiguity(wrapper):
    cls = metadata_subclass({pith.ops.pith.is_contiguous.default: None}, wrapper,
                            dispatch_sizes_strides_policy="strides")
    assert cls(pith.ones(3, 3)).is_contiguous() is True
    assert cls(pith.ones(3, 3).t()).is_contiguous() is False


@pytest.mark.parametrize("wrapper", [True, False])
def test_sizes_policy_asks_size_and_derives_dim_and_numel(wrapper):
    cls = metadata_subclass({pith.ops.pith.size.default: [5, 3]}, wrapper,
                            dispatch_sizes_strides_policy="sizes")
    x = cls(pith.ones(3, 3))
    assert x.size() == (5, 3)
    assert x.shape == (5, 3)
    assert x.dim() == 2
    assert x.numel() == 15
    assert set(cls.calls) == {pith.ops.pith.size.default}


def test_sizes_policy_none_means_the_default_sizes():
    cls = metadata_subclass({pith.ops.pith.size.default: None},
                            dispatch_sizes_strides_policy="sizes")
    assert cls(pith.ones(4, 2)).size() == (4, 2)


@pytest.mark.parametrize("policy, call, op", [
    ("strides", lambda x: x.is_contiguous(), "is_contiguous"),
    ("strides", lambda x: x.stride(), "stride"),
    ("sizes", lambda x: x.size(), "size"),
    ("sizes", lambda x: x.dim(), "size"),
])
def test_a_declined_metadata_query_is_a_type_error_naming_the_op(policy, call, op):
    cls = metadata_subclass({}, dispatch_sizes_strides_policy=policy)
    with pytest.raises(TypeError, match=rf"Multiple dispatch failed for "
                                        rf"'pith\.ops\.pith\.{op}'"):
        call(cls(pith.ones(3, 3)))


@pytest.mark.parametrize("policy, call, answer, match", [
    ("strides", lambda x: x.is_contiguous(), 1, "is_contiguous returned invalid type int"),
    ("strides", lambda x: x.stride(), 7, "strides must be a list or a tuple"),
    ("sizes", lambda x: x.size(), "5", "sizes must be a list or a tuple"),
    ("sizes", lambda x: x.size(), [2, "3"], "expected ints"),
])
def test_a_metadata_answer_of_the_wrong_type_raises(policy, call, answer, match):
    ops = pith.ops.pith
    func = (ops.is_contiguous.default if "contiguous" in match else
            ops.stride.default if "strides" in match else ops.size.default)
    cls = metadata_subclass({func: answer}, dispatch_sizes_strides_policy=policy)
    with pytest.raises(TypeError, match=match):
        call(cls(pith.ones(3, 3)))


@pytest.mark.parametrize("answer", ["meta", pith.device("meta")])
def test_dispatch_device_asks_the_handler_for_the_device(answer):
    cls = metadata_subclass({pith.ops.pith.device.default: answer}, dispatch_device=True)
    x = cls(pith.ones(2))
    assert x.device == pith.device("meta")
    assert cls.calls == [pith.ops.pith.device.default]


def test_dispatch_device_none_means_the_wrappers_device():
    cls = metadata_subclass({pith.ops.pith.device.default: None}, dispatch_device=True)
    assert cls(pith.ones(2)).device == pith.device("cpu")


def test_a_wrapper_reports_its_device_without_asking():
    cls = metadata_subclass({})
    x = cls(pith.ones(2))
    assert x.device == pith.device("cpu")
    assert cls.calls == []


def test_a_declined_device_query_raises():
    cls = metadata_subclass({}, dispatch_device=True)
    with pytest.raises(TypeError, match=r"'pith\.ops\.pith\.device'"):
        cls(pith.ones(2)).device


def test_a_device_answer_must_be_a_pith_device():
    cls = metadata_subclass({pith.ops.pith.device.default: "cuda"}, dispatch_device=True)
    with pytest.raises(ValueError, match="'cpu' and 'meta'"):
        cls(pith.ones(2)).device


def test_metadata_policies_need_a_handler():
    class Plain(pith.Tensor):
        pass

    with pytest.raises(TypeError, match="must define __pith_dispatch__"):
        pith.Tensor._make_subclass(Plain, pith.ones(2), dispatch_sizes_strides_policy="sizes")


def test_a_pass_through_handler_answers_metadata_with_the_inner_tensors():
    class Passes(LoggingTensor):
        @staticmethod
        def __new__(cls, elem):
            r = pith.Tensor._make_wrapper_subclass(cls, (1,), dtype=elem.dtype,
                                                   dispatch_sizes_strides_policy="sizes")
            r.elem = elem
            return r

    x = Passes(pith.ones(2, 3))
    assert x.shape == (2, 3)
    assert x.stride() == (3, 1)
    assert x.is_contiguous() is True


# ---- dispatch modes -------------------------------------------------------------------------

def test_a_mode_sees_ops_on_plain_tensors():
    x, y = pith.ones(1), pith.ones(1)
    with capture_logs() as logs:
        logs.input("x", x)
        logs.input("y", y)
        with LoggingMode():
            x + y
    assert logs.lines[2] == "$2 = pith.ops.pith.add.Tensor($0, $1)"


def test_a_mode_sees_factory_operators():
    with capture_logs() as logs:
        with LoggingMode():
            pith.ops.pith.zeros([2])
    assert logs.lines == ["$0 = pith.ops.pith.zeros([2])"]


@pytest.mark.parametrize("factory, expected", [
    (lambda: pith.zeros(2), "pith.ops.pith.zeros([2])"),
    (lambda: pith.ones(2, 3, dtype=pith.int32), "pith.ops.pith.ones([2, 3], dtype=pith.int32)"),
    (lambda: pith.full((2,), 7), "pith.ops.pith.full([2], 7)"),
    (lambda: pith.arange(3), "pith.ops.pith.arange(3)"),
    (lambda: pith.arange(1, 3), "pith.ops.pith.arange.start_step(1, 3)"),
])
def test_a_mode_sees_the_factories(factory, expected):
    plain = factory()
    with capture_logs() as logs:
        with LoggingMode():
            made = factory()
    assert logs.lines == ["$0 = " + expected]
    assert made.dtype == plain.dtype and made.tolist() == plain.tolist()


@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_a_device_argument_reaches_a_mode_as_a_pith_device(device):
    seen = []

    class Records(DispatchMode):
        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(dict(kwargs or {}))
            return func(*args, **(kwargs or {}))

    with Records():
        made = pith.ops.pith.zeros([2], device=device)
    assert seen == [{"device": pith.device(device)}]
    assert type(seen[0]["device"]) is pith.device
    assert made.device == pith.device(device)


def test_a_mode_sees_ops_on_large_tensors():
    # Large enough for the bindings to release the GIL around a kernel: with a mode active
    # they must not, because the mode lives in this thread state.
    x = pith.ones(40000)
    with capture_logs() as logs:
        with LoggingMode():
            (x + x).sum()
    assert len(logs.lines) == 2


def test_nested_modes_run_innermost_first_and_each_sees_the_op():
    order = []

    class Named(DispatchMode):
        def __init__(self, name):
            self.name = name

        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            order.append(self.name)
            return func(*args, **(kwargs or {}))

    x = pith.ones(1)
    with Named("outer"), Named("inner"):
        x.neg()
    assert order == ["inner", "outer"]


def test_a_mode_is_popped_while_its_handler_runs():
    seen = []

    class Inspect(DispatchMode):
        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(pith.utils._get_current_dispatch_mode_stack())
            return func(*args, **(kwargs or {}))

    outer, inner = LoggingMode(), Inspect()
    x = pith.ones(1)
    with outer, inner:
        x.neg()
        assert pith.utils._get_current_dispatch_mode_stack() == [outer, inner]
    assert seen == [[outer]]
    assert pith.utils._get_current_dispatch_mode_stack() == []


def test_the_same_mode_may_be_entered_twice():
    with capture_logs() as logs:
        with LoggingMode() as mode:
            with mode:
                pith.ops.pith.zeros([1])
    assert logs.lines == ["$0 = pith.ops.pith.zeros([1])"] * 2


class AMode(DispatchMode):
    def __pith_dispatch__(self, func, types, args=(), kwargs=None):
        raise ErrorA


class BMode(DispatchMode):
    def __pith_dispatch__(self, func, types, args=(), kwargs=None):
        raise ErrorB


def test_a_mode_takes_precedence_over_subclass_arguments():
    b = RaisesB(pith.empty(1))
    with pytest.raises(ErrorA):
        with AMode():
            b + b
    a = RaisesA(pith.empty(1))
    with pytest.raises(ErrorB):
        with BMode():
            a + b


def test_a_mode_returning_not_implemented_passes_to_the_subclasses():
    sub_count = 0

    class Polite(DispatchMode):
        def __init__(self):
            self.pre = self.post = 0

        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            self.pre += 1
            if any(t is not pith.Tensor for t in types):
                return NotImplemented
            self.post += 1
            return func(*args, **(kwargs or {}))

    class Sub(LoggingTensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            nonlocal sub_count
            sub_count += 1
            return super().__pith_dispatch__(func, types, args, kwargs)

    a = Sub(pith.randn(2))
    with Polite() as mode:
        a.abs()
    # the mode declines the subclass, whose handler then runs with the mode active, so the
    # mode sees the op on the inner (plain) tensor
    assert (mode.pre, mode.post, sub_count) == (2, 1, 1)
    with Polite(), Polite():
        a.abs()


def test_a_mode_that_declines_with_no_subclass_is_a_type_error():
    class Declines(DispatchMode):
        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            return NotImplemented

    mode, x = Declines(), pith.ones(1)
    with pytest.raises(TypeError, match=r"Multiple dispatch failed for "
                                        r"'pith\.ops\.pith\.neg'") as info:
        with mode:
            x.neg()
    assert f"mode object {mode!r}" in str(info.value)
    assert pith.utils._get_current_dispatch_mode_stack() == []


def test_an_exception_in_a_mode_leaves_the_stack_consistent():
    class Fails(DispatchMode):
        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            if func is pith.ops.pith.neg.default:
                raise ErrorA("neg")
            return func(*args, **(kwargs or {}))

    x = pith.ones(1)
    with Fails() as mode:
        with pytest.raises(ErrorA, match="neg"):
            x.neg()
        assert pith.utils._get_current_dispatch_mode_stack() == [mode]
        assert (x + x).tolist() == [2.0]
    assert pith.utils._get_current_dispatch_mode_stack() == []
    assert pith._C._mode_active() is False


def test_an_exception_in_the_with_block_exits_the_mode():
    with pytest.raises(ErrorB):
        with LoggingMode():
            raise ErrorB
    assert pith.utils._get_current_dispatch_mode_stack() == []
    assert pith._C._mode_active() is False


def test_nested_modes_raise_from_the_innermost():
    class Named(DispatchMode):
        def __init__(self, msg):
            self.msg = msg

        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            raise ErrorA(self.msg)

    with pytest.raises(ErrorA, match="layer2"):
        with Named("layer1"), Named("layer2"):
            pith.ops.pith.zeros([1])


def test_modes_are_per_thread():
    seen = []

    class Records(DispatchMode):
        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(threading.current_thread().name)
            return func(*args, **(kwargs or {}))

    x = pith.ones(1)

    def other():
        x.neg()
        seen.append(("other stack", pith.utils._get_current_dispatch_mode_stack()))

    with Records():
        t = threading.Thread(target=other, name="other")
        t.start()
        t.join()
        x.neg()
    assert seen == [("other stack", []), threading.current_thread().name]


def test_a_mode_entered_in_a_thread_stays_in_that_thread():
    entered = threading.Event()
    release = threading.Event()
    mode = LoggingMode()

    def other():
        with mode:
            entered.set()
            release.wait(30)

    t = threading.Thread(target=other)
    t.start()
    entered.wait(30)
    try:
        assert pith.utils._get_current_dispatch_mode_stack() == []
        assert pith._C._mode_active() is False
    finally:
        release.set()
        t.join()


def test_exiting_modes_out_of_order_raises():
    a, b = LoggingMode(), LoggingMode()
    a.__enter__()
    b.__enter__()
    with pytest.raises(RuntimeError, match="exited before"):
        a.__exit__(None, None, None)
    b.__exit__(None, None, None)
    assert pith.utils._get_current_dispatch_mode_stack() == []


def test_a_mode_respects_no_dispatch():
    with capture_logs() as logs:
        with LoggingMode():
            pith.ops.pith.ones([2])
            with no_dispatch():
                pith.ops.pith.ones([2])
    assert len(logs.lines) == 1


def test_make_subclass_inside_a_mode():
    class Basic(DispatchMode):
        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            return func(*args, **(kwargs or {}))

    x = pith.randn(3)
    with Basic():
        y = PlainSubclass(x)
    assert type(y) is PlainSubclass


def test_a_mode_may_wrap_results_in_a_subclass():
    class Wrapping(DispatchMode):
        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            def unwrap(e):
                return e.elem if isinstance(e, LoggingTensor) else e
            out = func(*tree_map(unwrap, args), **tree_map(unwrap, kwargs or {}))
            return LoggingTensor(out) if isinstance(out, pith.Tensor) else out

    x = pith.tensor(4.0)
    with Wrapping():
        y = x + x
        z = y + y
    assert type(y) is LoggingTensor and type(z) is LoggingTensor
    assert z.elem.item() == 16.0


def test_a_mode_sees_metadata_queries_of_a_policy_subclass():
    cls = metadata_subclass({pith.ops.pith.size.default: [3, 2]},
                            dispatch_sizes_strides_policy="sizes")
    x = cls(pith.ones(2, 2))
    with capture_logs() as logs:
        logs.input("x", x)
        with LoggingMode():
            assert x.size() == (3, 2)
    # the mode passes the query on to func, which reaches the subclass's handler
    assert logs.lines[1:] == ["[3, 2] = pith.ops.pith.size($0)"]


def test_a_dispatch_mode_needs_a_handler():
    with pytest.raises(TypeError, match="must define __pith_dispatch__"):
        pith._C._push_dispatch_mode(object())


# ---- custom operators -----------------------------------------------------------------------

_COUNTER = [0]


def fresh(name):
    """A namespace not used before in this process (the registry is per process)."""
    _COUNTER[0] += 1
    return f"test_dispatch_{_COUNTER[0]}::{name}"


def test_library_define_and_impl_run_a_python_kernel():
    name = fresh("scale")
    op = pith.library.define(name + "(Tensor x, float factor=2, *, bool negate=False) -> Tensor")
    calls = []

    @pith.library.impl(name, "CPU")
    def scale(x, factor=2, *, negate=False):
        calls.append((factor, negate))
        return x * (-factor if negate else factor)

    t = pith.tensor([1.0, 2.0])
    assert op(t).tolist() == [2.0, 4.0]
    assert op(t, 3.0, negate=True).tolist() == [-3.0, -6.0]
    assert calls == [(2, False), (3.0, True)]


def test_a_python_kernel_gets_arguments_as_a_handler_does():
    name = fresh("f")
    op = pith.library.define(name + "(Tensor x, int k=1, *, int j=0) -> Tensor")
    seen = []

    def kernel(*args, **kwargs):
        seen.append((len(args), kwargs))
        return args[0]

    pith.library.impl(op, "CPU", kernel)
    t = pith.ones(1)
    op(t)
    op(t, 1, j=0)
    op(t, 2, j=3)
    assert seen == [(1, {}), (1, {}), (2, {"j": 3})]


def test_a_python_kernel_of_the_wrong_result_type_raises():
    name = fresh("bad")
    op = pith.library.define(name + "(Tensor x) -> Tensor")
    pith.library.impl(name, "cpu", lambda x: 42)
    with pytest.raises(TypeError, match="the Python kernel for .* returned int, expected a "
                                        "Tensor"):
        op(pith.ones(1))


def test_a_python_kernels_exception_reaches_the_caller():
    name = fresh("raises")
    op = pith.library.define(name + "(Tensor x) -> Tensor")

    def kernel(x):
        raise ErrorB("from the kernel")

    pith.library.impl(name, "CPU", kernel)
    with pytest.raises(ErrorB, match="from the kernel"):
        op(pith.ones(1))


def meta_tensor():
    """A tensor on the Meta device: a wrapper's own tensor, reached below the Python key."""
    with no_dispatch():
        return LoggingTensor(pith.ones(1)).neg()


def test_an_op_returning_nothing_takes_none_from_its_kernel():
    name = fresh("sink")
    op = pith.library.define(name + "(Tensor x) -> ()")
    got = []
    pith.library.impl(name, "CPU", lambda x: got.append(x.tolist()))
    pith.library.impl(name, "Meta", lambda x: x)
    assert op(pith.ones(1)) is None
    assert got == [[1.0]]
    with pytest.raises(TypeError, match="expected None"):
        op(meta_tensor())


def test_a_handler_of_an_op_returning_nothing_gives_the_caller_none():
    name = fresh("sink")
    op = pith.library.define(name + "(Tensor x) -> ()")
    got = []
    pith.library.impl(name, "CPU", lambda x: got.append(x.tolist()))
    with capture_logs() as logs:
        x = LoggingTensor(pith.tensor([3.0]))
        logs.input("x", x)
        assert op(x) is None
    assert got == [[3.0]]
    assert logs.lines[1] == f"None = pith.ops.{name.replace('::', '.')}($0)"

    class ReturnsATensor(LoggingTensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            return args[0]

    with pytest.raises(TypeError, match="expected None"):
        op(ReturnsATensor(pith.ones(1)))


def test_a_python_kernel_runs_with_the_gil_released_by_the_caller():
    # A large argument makes the bindings release the GIL around the call; the kernel then
    # enters the interpreter on its own (Note [Python kernels belong to their interpreter]).
    name = fresh("big")
    op = pith.library.define(name + "(Tensor x) -> Tensor")
    pith.library.impl(name, "CPU", lambda x: x.sum())
    assert op(pith.ones(50000)).item() == 50000.0


def test_a_custom_op_reaches_dispatch_like_a_builtin():
    name = fresh("twice")
    op = pith.library.define(name + "(Tensor x) -> Tensor")
    pith.library.impl(name, "CPU", lambda x: x * 2)
    with capture_logs() as logs:
        x = LoggingTensor(pith.ones(1))
        logs.input("x", x)
        r = op(x)
    assert r.elem.tolist() == [2.0]
    assert logs.lines[1] == f"$1 = pith.ops.{name.replace('::', '.')}($0)"
    x = pith.ones(1)
    with capture_logs() as logs:
        with LoggingMode():
            op(x)
    assert len(logs.lines) == 1


def test_an_op_defined_from_c_reaches_dispatch():
    pith._C._testing_register_ops()
    pith._C._testing_set_flag(True)
    try:
        with capture_logs() as logs:
            x = LoggingTensor(pith.ones(1))
            logs.input("x", x)
            r = pith.ops.pith_testing.wait_for_flag(x)
        assert type(r) is LoggingTensor
        assert logs.lines[1] == "$1 = pith.ops.pith_testing.wait_for_flag($0)"
    finally:
        pith._C._testing_set_flag(False)


def test_impl_refuses_a_second_kernel_for_the_same_key():
    name = fresh("once")
    pith.library.define(name + "(Tensor x) -> Tensor")
    pith.library.impl(name, "CPU", lambda x: x)
    with pytest.raises(ValueError, match="already registered"):
        pith.library.impl(name, "CPU", lambda x: x)


def test_impl_refuses_what_is_not_callable():
    name = fresh("nc")
    pith.library.define(name + "(Tensor x) -> Tensor")
    with pytest.raises(TypeError, match="callable"):
        pith.library.impl(name, "CPU", [])


def test_impl_of_an_unknown_op_or_key_raises():
    with pytest.raises(ValueError, match="unknown operator"):
        pith.library.impl("no_such_ns::op", "CPU", lambda x: x)
    name = fresh("k")
    pith.library.define(name + "(Tensor x) -> Tensor")
    with pytest.raises(ValueError, match="unknown dispatch key"):
        pith.library.impl(name, "CUDA", lambda x: x)


def test_define_reports_a_bad_schema():
    with pytest.raises(ValueError):
        pith.library.define(fresh("broken") + "(Tensor x -> Tensor")


def test_define_takes_pytorchs_two_argument_form():
    name = fresh("two")
    op = pith.library.define(name, "(Tensor x) -> Tensor")
    assert op.name == name


# ---- interpreters ---------------------------------------------------------------------------

interpreters = pytest.importorskip("_xxsubinterpreters")


def run_in_subinterpreter(code):
    iid = interpreters.create()
    try:
        interpreters.run_string(iid, code)
    finally:
        interpreters.destroy(iid)


def test_another_interpreter_calling_a_python_kernel_gets_interpreter_error():
    name = fresh("owned")
    pith.library.define(name + "(Tensor x) -> Tensor")
    pith.library.impl(name, "CPU", lambda x: x)
    ns, op = name.split("::")
    code = f"""
import pith
try:
    pith.ops.{ns}.{op}(pith.ones(1))
except pith.InterpreterError as e:
    assert "belongs to interpreter" in str(e), str(e)
else:
    raise AssertionError("no InterpreterError")
"""
    run_in_subinterpreter(code)


def test_a_python_kernel_of_a_finished_interpreter_fails_cleanly():
    name = fresh("orphan")
    pith.library.define(name + "(Tensor x) -> Tensor")
    run_in_subinterpreter(f"""
import pith
pith.library.impl({name!r}, "CPU", lambda x: x)
""")
    ns, op = name.split("::")
    with pytest.raises(pith.InterpreterError, match="belongs to interpreter"):
        getattr(getattr(pith.ops, ns), op)(pith.ones(1))


def test_modes_of_one_interpreter_do_not_reach_another():
    run_in_subinterpreter("""
import pith
from pith.utils import DispatchMode
seen = []
class M(DispatchMode):
    def __pith_dispatch__(self, func, types, args=(), kwargs=None):
        seen.append(func)
        return func(*args, **(kwargs or {}))
x = pith.ones(1)
with M():
    x.neg()
assert seen == [pith.ops.pith.neg.default], seen
""")
    assert pith._C._mode_active() is False
    assert pith.utils._get_current_dispatch_mode_stack() == []
