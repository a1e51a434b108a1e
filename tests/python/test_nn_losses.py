"""pith.nn's losses, as functions and modules: nll_loss, cross_entropy,
binary_cross_entropy(_with_logits), mse_loss and l1_loss against PyTorch (values, result
dtype and shape, reductions, weights, legacy size_average/reduce arguments), over random
shapes and layouts (empty and 0-dim included), and the errors of bad input.

Tolerances: float32 results within rtol 1e-5 / atol 1e-6 of PyTorch's (1e-5 absolute for
sums), float64 within 1e-12, float16/bfloat16 within conftest's TOLERANCE of the dtype."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pith
import pith.nn as nn
import pith.nn.functional as F
from conftest import (PROPERTY, TOLERANCE, assert_matches_torch, assert_raises_like_torch,
                      shapes, tensors, to_pith, to_torch)

REDUCTIONS = ["mean", "sum", "none"]
TOL = {"float32": (1e-5, 1e-5), "float64": (1e-12, 1e-12)}
TOL.update({name: TOLERANCE[name] for name in ("float16", "bfloat16")})


def fresh_torch():
    return pytest.importorskip("torch")


def torch_of(a, name):
    """A contiguous torch tensor with the values of array `a`, of dtype `name`."""
    return to_torch(a, name)


def assert_close_to_torch(got, expected, name=None):
    name = name or str(expected.dtype).replace("torch.", "")
    rtol, atol = TOL.get(name, (0, 0))
    assert_matches_torch(got, expected, rtol=rtol, atol=atol)


@st.composite
def suffix_shapes(draw, shape):
    """Shapes that broadcast *into* `shape`: a suffix of it, some sizes set to 1."""
    keep = draw(st.integers(0, len(shape)))
    return tuple(1 if draw(st.booleans()) else s for s in shape[len(shape) - keep:])


def warning_messages(call):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = call()
    return result, sorted(str(w.message).replace("torch.", "pith.") for w in caught)


# ---- nll_loss and cross_entropy ------------------------------------------------------------

@st.composite
def class_cases(draw, dtype="float32"):
    """(input, target, weight, ignore_index) arrays for a class-index loss: input (C,),
    (N, C) or (N, C, d1, ...), any layout; N may be 0."""
    c = draw(st.integers(1, 5))
    rank1 = draw(st.booleans())
    extra = () if rank1 else tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    n = draw(st.integers(0, 4))
    shape = (c,) if rank1 else (n, c) + extra
    x, a = draw(tensors(dtype, shape, lo=-6, hi=0))
    target_shape = () if rank1 else (n,) + extra
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    target = rng.integers(0, c, target_shape)
    ignore_index = draw(st.sampled_from([-100, 0, c - 1]))
    if target.size and draw(st.booleans()):
        target.reshape(-1)[0] = ignore_index
    weight = rng.uniform(0.5, 2.0, c).astype(dtype) if draw(st.booleans()) else None
    return x, a, target, weight, ignore_index


@PROPERTY
@given(case=class_cases(), reduction=st.sampled_from(REDUCTIONS),
       dtype=st.sampled_from(["float32", "float64"]))
def test_nll_loss_matches_torch(case, reduction, dtype):
    torch = fresh_torch()
    x, a, target, weight, ignore_index = case
    x = x.to(getattr(pith, dtype))
    w = None if weight is None else weight.astype(dtype)
    expected = torch.nn.functional.nll_loss(
        torch_of(a, dtype), torch.from_numpy(target),
        weight=None if w is None else torch_of(w, dtype), ignore_index=ignore_index,
        reduction=reduction)
    got = F.nll_loss(x, to_pith(target, "int64"), weight=None if w is None else to_pith(w),
                     ignore_index=ignore_index, reduction=reduction)
    assert_close_to_torch(got, expected)


@PROPERTY
@given(case=class_cases(), reduction=st.sampled_from(REDUCTIONS),
       smoothing=st.sampled_from([0.0, 0.3]))
def test_cross_entropy_loss_module_matches_torch(case, reduction, smoothing):
    torch = fresh_torch()
    x, a, target, weight, ignore_index = case
    kwargs = dict(ignore_index=ignore_index, reduction=reduction, label_smoothing=smoothing)
    theirs = torch.nn.CrossEntropyLoss(
        weight=None if weight is None else torch.from_numpy(weight), **kwargs)
    ours = nn.CrossEntropyLoss(weight=None if weight is None else to_pith(weight), **kwargs)
    expected = theirs(torch_of(a, "float32"), torch.from_numpy(target))
    assert_close_to_torch(ours(x, to_pith(target, "int64")), expected)


@PROPERTY
@given(data=st.data(), reduction=st.sampled_from(REDUCTIONS),
       smoothing=st.sampled_from([0.0, 0.25]), weighted=st.booleans())
def test_cross_entropy_with_class_probabilities_matches_torch(data, reduction, smoothing,
                                                              weighted):
    torch = fresh_torch()
    c = data.draw(st.integers(1, 4))
    shape = data.draw(st.sampled_from([(c,), (0, c), (3, c), (2, c, 0), (2, c, 3)]))
    x, a = data.draw(tensors("float32", shape, lo=-5, hi=5))
    t, b = data.draw(tensors("float32", shape, lo=0, hi=1))
    weight = np.linspace(0.5, 2, c).astype(np.float32) if weighted else None
    expected = torch.nn.functional.cross_entropy(
        torch_of(a, "float32"), torch_of(b, "float32"), reduction=reduction,
        weight=None if weight is None else torch.from_numpy(weight),
        label_smoothing=smoothing)
    got = F.cross_entropy(x, t, reduction=reduction, label_smoothing=smoothing,
                          weight=None if weight is None else to_pith(weight))
    assert_close_to_torch(got, expected)


def test_nll_loss_module_keeps_weight_as_a_buffer_like_torch():
    torch = fresh_torch()
    ours, theirs = nn.NLLLoss(weight=pith.ones(3)), torch.nn.NLLLoss(weight=torch.ones(3))
    assert list(ours.state_dict()) == list(theirs.state_dict()) == ["weight"]
    assert list(nn.NLLLoss().state_dict()) == list(torch.nn.NLLLoss().state_dict()) == []
    assert repr(ours) == repr(theirs) == "NLLLoss()"
    assert ours.ignore_index == -100 and ours.reduction == "mean"


def test_half_precision_cross_entropy_matches_torch():
    torch = fresh_torch()
    a = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    target = np.array([0, 4, 2, 1])
    for name in ("float16", "bfloat16"):
        expected = torch.nn.functional.cross_entropy(to_torch(a, name),
                                                     torch.from_numpy(target))
        got = F.cross_entropy(to_pith(a).to(getattr(pith, name)), to_pith(target, "int64"))
        assert_close_to_torch(got, expected, name)


# ---- binary cross entropy ----------------------------------------------------------------

@PROPERTY
@given(data=st.data(), reduction=st.sampled_from(REDUCTIONS), weighted=st.booleans(),
       dtype=st.sampled_from(["float32", "float64"]))
def test_binary_cross_entropy_matches_torch(data, reduction, weighted, dtype):
    torch = fresh_torch()
    shape = data.draw(shapes)
    # Probabilities include exact 0 and 1 (a quarter of the values are small integers in
    # range), where PyTorch clamps each log at -100.
    x, a = data.draw(tensors(dtype, shape, lo=0, hi=1))
    t, b = data.draw(tensors(dtype, shape, lo=0, hi=1))
    w = wa = None
    if weighted:
        w, wa = data.draw(tensors(dtype, data.draw(suffix_shapes(shape)), lo=0, hi=2))
    expected = torch.nn.functional.binary_cross_entropy(
        torch_of(a, dtype), torch_of(b, dtype), reduction=reduction,
        weight=None if wa is None else torch_of(wa, dtype))
    got = F.binary_cross_entropy(x, t, weight=w, reduction=reduction)
    assert_close_to_torch(got, expected)
    module = nn.BCELoss(weight=w, reduction=reduction)
    assert_close_to_torch(module(x, t), expected)


def test_binary_cross_entropy_clamps_the_log_at_minus_100():
    got = F.binary_cross_entropy(pith.tensor([0.0, 1.0, 0.0]), pith.tensor([1.0, 0.0, 0.0]),
                                 reduction="none")
    assert got.tolist() == [100.0, 100.0, 0.0]


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
def test_binary_cross_entropy_in_half_precision_matches_torch(name):
    torch = fresh_torch()
    rng = np.random.default_rng(2)
    a, b = rng.uniform(0, 1, (3, 7)), rng.uniform(0, 1, (3, 7))
    for reduction in REDUCTIONS:
        expected = torch.nn.functional.binary_cross_entropy(
            to_torch(a, name), to_torch(b, name), reduction=reduction)
        got = F.binary_cross_entropy(to_pith(a).to(getattr(pith, name)),
                                     to_pith(b).to(getattr(pith, name)), reduction=reduction)
        assert_close_to_torch(got, expected, name)


@PROPERTY
@given(data=st.data(), reduction=st.sampled_from(REDUCTIONS), weighted=st.booleans(),
       positive=st.booleans(), dtype=st.sampled_from(["float32", "float64"]))
def test_binary_cross_entropy_with_logits_matches_torch(data, reduction, weighted, positive,
                                                        dtype):
    torch = fresh_torch()
    shape = data.draw(shapes)
    x, a = data.draw(tensors(dtype, shape, lo=-40, hi=40))
    t, b = data.draw(tensors(dtype, shape, lo=0, hi=1))
    extra = {}
    for name, wanted in (("weight", weighted), ("pos_weight", positive)):
        if wanted:
            extra[name] = data.draw(tensors(dtype, data.draw(suffix_shapes(shape)), lo=0,
                                            hi=3))
    expected = torch.nn.functional.binary_cross_entropy_with_logits(
        torch_of(a, dtype), torch_of(b, dtype), reduction=reduction,
        **{k: torch_of(v[1], dtype) for k, v in extra.items()})
    got = F.binary_cross_entropy_with_logits(x, t, reduction=reduction,
                                             **{k: v[0] for k, v in extra.items()})
    assert_close_to_torch(got, expected)
    module = nn.BCEWithLogitsLoss(reduction=reduction, **{k: v[0] for k, v in extra.items()})
    assert_close_to_torch(module(x, t), expected)


def test_binary_cross_entropy_with_logits_is_stable_for_large_logits():
    x = pith.tensor([-1000.0, 1000.0, 0.0, -1000.0, 1000.0])
    t = pith.tensor([1.0, 0.0, 0.5, 0.0, 1.0])
    got = F.binary_cross_entropy_with_logits(x, t, reduction="none").tolist()
    assert got[:2] == [1000.0, 1000.0] and got[3:] == [0.0, 0.0]
    assert abs(got[2] - math.log(2)) < 1e-6


@pytest.mark.parametrize("input_dtype,target_dtype,weight_dtype", [
    ("float32", "float64", None), ("float64", "float32", None), ("float16", "float32", None),
    ("float32", "float16", None), ("float32", "float32", "float64"),
])
def test_binary_cross_entropy_with_logits_result_dtype_matches_torch(input_dtype, target_dtype,
                                                                    weight_dtype):
    torch = fresh_torch()
    rng = np.random.default_rng(3)
    a, b, w = rng.standard_normal((2, 3)), rng.uniform(0, 1, (2, 3)), rng.uniform(0, 1, 3)
    kwargs_t = {} if weight_dtype is None else {"pos_weight": to_torch(w, weight_dtype),
                                                "weight": to_torch(w, weight_dtype)}
    kwargs_p = {} if weight_dtype is None else {
        "pos_weight": to_pith(w).to(getattr(pith, weight_dtype)),
        "weight": to_pith(w).to(getattr(pith, weight_dtype))}
    expected = torch.nn.functional.binary_cross_entropy_with_logits(
        to_torch(a, input_dtype), to_torch(b, target_dtype), **kwargs_t)
    got = F.binary_cross_entropy_with_logits(to_pith(a).to(getattr(pith, input_dtype)),
                                             to_pith(b).to(getattr(pith, target_dtype)),
                                             **kwargs_p)
    assert_close_to_torch(got, expected, "float16" if "float16" in (input_dtype,
                                                                     target_dtype) else None)


# ---- mse_loss and l1_loss ---------------------------------------------------------------------

@PROPERTY
@given(data=st.data(), reduction=st.sampled_from(REDUCTIONS), weighted=st.booleans(),
       name=st.sampled_from(["mse_loss", "l1_loss"]),
       dtype=st.sampled_from(["float32", "float64"]))
def test_pointwise_losses_match_torch(data, reduction, weighted, name, dtype):
    torch = fresh_torch()
    shape = data.draw(shapes)
    x, a = data.draw(tensors(dtype, shape, lo=-10, hi=10))
    # The target may broadcast against the input (PyTorch warns, and so does pith).
    target_shape = data.draw(st.sampled_from([shape, data.draw(suffix_shapes(shape))]))
    t, b = data.draw(tensors(dtype, target_shape, lo=-10, hi=10))
    w = wa = None
    if weighted:
        w, wa = data.draw(tensors(dtype, shape, lo=0, hi=2))
    expected, their_warnings = warning_messages(lambda: getattr(torch.nn.functional, name)(
        torch_of(a, dtype), torch_of(b, dtype), reduction=reduction,
        weight=None if wa is None else torch_of(wa, dtype)))
    got, our_warnings = warning_messages(lambda: getattr(F, name)(x, t, reduction=reduction,
                                                                  weight=w))
    assert our_warnings == their_warnings
    assert_close_to_torch(got, expected)


@pytest.mark.parametrize("module", ["MSELoss", "L1Loss"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_pointwise_loss_modules_match_torch(module, reduction):
    torch = fresh_torch()
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((3, 4))
    theirs = getattr(torch.nn, module)(reduction=reduction)
    ours = getattr(nn, module)(reduction=reduction)
    assert repr(ours) == repr(theirs)
    assert_close_to_torch(ours(to_pith(a), to_pith(b)),
                          theirs(torch.from_numpy(a), torch.from_numpy(b)))


def test_l1_loss_of_integers_keeps_their_dtype_like_torch():
    torch = fresh_torch()
    a, b = np.array([[1, -4], [7, 2]]), np.array([[3, 3], [-1, 2]])
    for reduction in ("none", "sum"):
        expected = torch.nn.functional.l1_loss(torch.from_numpy(a), torch.from_numpy(b),
                                               reduction=reduction)
        assert_matches_torch(F.l1_loss(to_pith(a), to_pith(b), reduction=reduction),
                             expected)


@pytest.mark.parametrize("name", ["mse_loss", "l1_loss"])
def test_pointwise_losses_of_empty_tensors(name):
    empty = pith.zeros(0, 3)
    assert math.isnan(getattr(F, name)(empty, empty).item())
    assert getattr(F, name)(empty, empty, reduction="sum").item() == 0.0
    assert tuple(getattr(F, name)(empty, empty, reduction="none").shape) == (0, 3)


# ---- legacy arguments and reduction names -----------------------------------------------------

LOSS_CALLS = {
    "nll_loss": lambda lib, **kw: lib.nn.functional.nll_loss(
        lib.tensor([[-1.0, -2.0], [-0.5, -3.0]]), lib.tensor([0, 1]), **kw),
    "cross_entropy": lambda lib, **kw: lib.nn.functional.cross_entropy(
        lib.tensor([[1.0, 2.0], [0.5, -3.0]]), lib.tensor([0, 1]), **kw),
    "binary_cross_entropy": lambda lib, **kw: lib.nn.functional.binary_cross_entropy(
        lib.tensor([0.25, 0.5]), lib.tensor([1.0, 0.0]), **kw),
    "binary_cross_entropy_with_logits": lambda lib, **kw:
        lib.nn.functional.binary_cross_entropy_with_logits(
            lib.tensor([0.25, -2.0]), lib.tensor([1.0, 0.0]), **kw),
    "mse_loss": lambda lib, **kw: lib.nn.functional.mse_loss(
        lib.tensor([0.25, -2.0]), lib.tensor([1.0, 0.0]), **kw),
    "l1_loss": lambda lib, **kw: lib.nn.functional.l1_loss(
        lib.tensor([0.25, -2.0]), lib.tensor([1.0, 0.0]), **kw),
}


@pytest.mark.parametrize("name", sorted(LOSS_CALLS))
@pytest.mark.parametrize("legacy", [
    dict(size_average=False), dict(reduce=False), dict(size_average=True, reduce=True),
    dict(size_average=False, reduce=False), dict(reduce=True),
    dict(size_average=True, reduction="none"),
])
def test_legacy_size_average_and_reduce_match_torch(name, legacy):
    torch = fresh_torch()
    expected, their_warnings = warning_messages(lambda: LOSS_CALLS[name](torch, **legacy))
    got, our_warnings = warning_messages(lambda: LOSS_CALLS[name](pith, **legacy))
    assert our_warnings == their_warnings and our_warnings
    assert_close_to_torch(got, expected)


@pytest.mark.parametrize("name", sorted(LOSS_CALLS))
def test_elementwise_mean_is_a_deprecated_mean(name):
    mean = LOSS_CALLS[name](pith).item()
    with pytest.warns(UserWarning, match="reduction='elementwise_mean' is deprecated"):
        assert LOSS_CALLS[name](pith, reduction="elementwise_mean").item() == mean


@pytest.mark.parametrize("name", sorted(LOSS_CALLS))
def test_an_invalid_reduction_is_a_value_error(name):
    assert_raises_like_torch(lambda lib: LOSS_CALLS[name](lib, reduction="avg"), ValueError,
                             "avg is not a valid value for reduction")


@pytest.mark.parametrize("module", ["L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss",
                                    "BCELoss", "BCEWithLogitsLoss"])
def test_loss_module_legacy_arguments_set_the_reduction_like_torch(module):
    torch = fresh_torch()
    theirs, their_warnings = warning_messages(lambda: getattr(torch.nn, module)(reduce=False))
    ours, our_warnings = warning_messages(lambda: getattr(nn, module)(reduce=False))
    assert ours.reduction == theirs.reduction == "none"
    assert our_warnings == their_warnings
    assert getattr(nn, module)(reduction="sum").reduction == "sum"


# ---- errors --------------------------------------------------------------------------------

def functional(lib):
    return lib.nn.functional


ERRORS = [
    # nll_loss
    (lambda lib: functional(lib).nll_loss(lib.zeros(2, 3, dtype=lib.int64),
                                          lib.tensor([0, 1])),
     NotImplementedError, "\"nll_loss_out_frame\" not implemented for 'Long'"),
    (lambda lib: functional(lib).nll_loss(lib.zeros(2, 3, 4, dtype=lib.int64),
                                          lib.zeros(2, 4, dtype=lib.int64)),
     NotImplementedError, "\"nll_loss2d_forward_out_frame\" not implemented for 'Long'"),
    (lambda lib: functional(lib).nll_loss(lib.zeros(2, 3), lib.tensor([0, 1]),
                                          weight=lib.ones(3, dtype=lib.float64)),
     RuntimeError, "expected scalar type Float but found Double"),
    (lambda lib: functional(lib).nll_loss(lib.zeros(2, 3), lib.tensor([0, 3])),
     IndexError, "Target 3 is out of bounds."),
    (lambda lib: functional(lib).nll_loss(lib.zeros(2, 3), lib.tensor([0, 1, 2])),
     ValueError, "Expected input batch_size (2) to match target batch_size (3)."),
    (lambda lib: functional(lib).nll_loss(lib.zeros(2, 3, 4), lib.zeros(2, 5,
                                                                         dtype=lib.int64)),
     RuntimeError, "Expected target size [2, 4], got [2, 5]"),
    (lambda lib: functional(lib).nll_loss(lib.zeros(()), lib.tensor(0)),
     ValueError, "Expected 1 or more dimensions (got 0)"),
    (lambda lib: functional(lib).nll_loss(lib.zeros(2, 3), lib.tensor([0.0, 1.0])),
     RuntimeError, "expected target dtype to be Long or Byte, but got Float"),
    (lambda lib: functional(lib).nll_loss(lib.zeros(2, 3), lib.tensor([0, 1]),
                                          weight=lib.ones(4)),
     RuntimeError, "weight tensor should be defined either for all 3 classes or no classes "
                   "but got weight tensor of shape: [4]"),
    # cross_entropy
    (lambda lib: functional(lib).cross_entropy(lib.zeros(2, 3, dtype=lib.int64),
                                               lib.tensor([0, 1])),
     NotImplementedError, "\"log_softmax_lastdim_kernel_impl\" not implemented for 'Long'"),
    (lambda lib: functional(lib).cross_entropy(lib.zeros(2, 3, 4, dtype=lib.int64),
                                               lib.zeros(2, 3, 4)),
     NotImplementedError, "\"log_softmax_kernel_impl\" not implemented for 'Long'"),
    (lambda lib: functional(lib).cross_entropy(lib.zeros(2, 3), lib.tensor([0, 1]),
                                               weight=lib.ones(3, dtype=lib.float64)),
     RuntimeError, "expected scalar type Float but found Double"),
    (lambda lib: functional(lib).cross_entropy(lib.zeros(2, 3), lib.tensor([0, -1])),
     IndexError, "Target -1 is out of bounds."),
    # binary_cross_entropy
    (lambda lib: functional(lib).binary_cross_entropy(lib.full((3, 4), 0.5),
                                                      lib.full((2, 4), 0.5)),
     ValueError, "Using a target size (pith.Size([2, 4])) that is different to the input size "
                 "(pith.Size([3, 4])) is deprecated. Please ensure they have the same size."),
    (lambda lib: functional(lib).binary_cross_entropy(lib.tensor([0.5, 1.5]),
                                                      lib.tensor([0.5, 0.5])),
     RuntimeError, "all elements of input should be between 0 and 1"),
    (lambda lib: functional(lib).binary_cross_entropy(lib.tensor([float("nan")]),
                                                      lib.tensor([0.5])),
     RuntimeError, "all elements of input should be between 0 and 1"),
    (lambda lib: functional(lib).binary_cross_entropy(lib.tensor([0.5, 0.5]),
                                                      lib.tensor([0.5, -0.5])),
     RuntimeError, "all elements of target should be between 0 and 1"),
    (lambda lib: functional(lib).binary_cross_entropy(lib.tensor([0.5, 0.5]),
                                                      lib.tensor([0.5, 0.5],
                                                                 dtype=lib.float64)),
     RuntimeError, "Found dtype Double but expected Float"),
    (lambda lib: functional(lib).binary_cross_entropy(lib.tensor([0, 1]), lib.tensor([0, 1])),
     NotImplementedError, "\"binary_cross_entropy\" not implemented for 'Long'"),
    (lambda lib: functional(lib).binary_cross_entropy(lib.full((3, 4), 0.5),
                                                      lib.full((3, 4), 0.5),
                                                      weight=lib.ones(5)),
     RuntimeError, "Attempting to broadcast a dimension of length 5 at -1! Mismatching "
                   "argument at index 1 had pith.Size([5]); but expected shape should be "
                   "broadcastable to [3, 4]"),
    (lambda lib: functional(lib).binary_cross_entropy(lib.full((3, 4), 0.5),
                                                      lib.full((3, 4), 0.5),
                                                      weight=lib.ones(2, 3, 4)),
     RuntimeError, "output with shape [3, 4] doesn't match the broadcast shape [2, 3, 4]"),
    # binary_cross_entropy_with_logits
    (lambda lib: functional(lib).binary_cross_entropy_with_logits(lib.zeros(3, 4),
                                                                  lib.zeros(2, 4)),
     ValueError, "Target size (pith.Size([2, 4])) must be the same as input size "
                 "(pith.Size([3, 4]))"),
    (lambda lib: functional(lib).binary_cross_entropy_with_logits(
        lib.zeros(3, dtype=lib.int64), lib.zeros(3, dtype=lib.int64)),
     NotImplementedError, "\"log_sigmoid_cpu\" not implemented for 'Long'"),
    (lambda lib: functional(lib).binary_cross_entropy_with_logits(
        lib.zeros(3, 4), lib.zeros(3, 4), pos_weight=lib.ones(5)),
     RuntimeError, "The size of tensor a (5) must match the size of tensor b (4) at "
                   "non-singleton dimension 1"),
    (lambda lib: functional(lib).binary_cross_entropy_with_logits(
        lib.zeros(3, 4), lib.zeros(3, 4), weight=lib.ones(2, 3, 4)),
     RuntimeError, "output with shape [3, 4] doesn't match the broadcast shape [2, 3, 4]"),
    (lambda lib: functional(lib).binary_cross_entropy_with_logits(
        lib.zeros(3), lib.zeros(3, dtype=lib.int64)),
     RuntimeError, "can't be cast to the desired output type"),
    (lambda lib: functional(lib).binary_cross_entropy_with_logits(
        lib.zeros(3), lib.zeros(3, dtype=lib.bool)),
     RuntimeError, "Subtraction, the `-` operator, with"),
    # mse_loss and l1_loss
    (lambda lib: functional(lib).mse_loss(lib.zeros(3, 4), lib.zeros(2, 4)),
     RuntimeError, "The size of tensor a (3) must match the size of tensor b (2) at "
                   "non-singleton dimension 0"),
    (lambda lib: functional(lib).mse_loss(lib.zeros(3, dtype=lib.int32),
                                          lib.zeros(3, dtype=lib.int64)),
     NotImplementedError, "\"mse_cpu\" not implemented for 'Long'"),
    (lambda lib: functional(lib).mse_loss(lib.zeros(3, dtype=lib.bool),
                                          lib.zeros(3, dtype=lib.bool)),
     NotImplementedError, "\"mse_cpu\" not implemented for 'Bool'"),
    (lambda lib: functional(lib).mse_loss(lib.zeros(3), lib.zeros(3), weight=lib.ones(2)),
     ValueError, "Weights and input must have the same size."),
    (lambda lib: functional(lib).mse_loss(lib.zeros(3), lib.zeros(3), weight=lib.ones(3),
                                          reduction="avg"),
     ValueError, "Invalid reduction mode: avg. Expected one of 'none', 'mean', 'sum'."),
    (lambda lib: functional(lib).l1_loss(lib.zeros(3, dtype=lib.int64),
                                         lib.zeros(3, dtype=lib.int64)),
     RuntimeError, "mean(): could not infer output dtype. Input dtype must be either a floating "
                   "point or complex dtype. Got: Long"),
    (lambda lib: functional(lib).l1_loss(lib.zeros(3, dtype=lib.bool),
                                         lib.zeros(3, dtype=lib.bool)),
     RuntimeError, "Subtraction, the `-` operator, with two bool tensors is not supported"),
]


@pytest.mark.filterwarnings("ignore:Using a target size")
@pytest.mark.parametrize("call,error,fragment", ERRORS)
def test_bad_input_raises_like_torch(call, error, fragment):
    assert_raises_like_torch(call, error, fragment)
