"""Reductions as properties: sum, mean, prod, amax, amin, max/min (full, and with dim giving
(values, indices)), argmax, argmin, var/std (correction, unbiased), all and any, with dim as
None, an int or a list, keepdim and dtype, over generated dtypes, shapes (empty and 0-dim
included) and layouts. NumPy computes the values in float64; PyTorch, when installed, says
whether the call is an error and gives the result dtype and values too."""
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pith
from conftest import (DTYPE_NAMES, FLOAT_NAMES, INT_NAMES, assert_matches_torch, assert_values,
                      dtype_name, examples, np_dtype, read_table, shapes, tensors, to_torch,
                      torch_or_none)

torch = torch_or_none()
EPS = {"float16": 2**-10, "bfloat16": 2**-7, "float32": 2**-23, "float64": 2**-52}
_RESULT_DTYPES = {r["input_dtype"]: r for r in read_table("op_result_dtypes.csv")}


# ---- the oracle --------------------------------------------------------------------------

def numpy_dims(dim, ndim):
    if dim is None or (isinstance(dim, (list, tuple)) and len(dim) == 0):
        return tuple(range(ndim))
    dims = dim if isinstance(dim, (list, tuple)) else [dim]
    if ndim == 0:
        if any(d not in (0, -1) for d in dims):
            raise IndexError("dim out of range")
        return ()
    return tuple(sorted(d % ndim for d in dims))


def fallback_dtype(op, name, dtype):
    """PyTorch's result dtype (None: an error) from tests/data/op_result_dtypes.csv, for
    torch-less runs."""
    if dtype is not None:
        return None if op == "mean" and dtype not in FLOAT_NAMES else dtype
    if op in ("sum", "mean", "prod", "argmax", "argmin"):
        got = _RESULT_DTYPES[name]["argmax" if op == "argmin" else op]
        return None if got == "error" else got
    if op in ("var", "std"):
        return name if name in FLOAT_NAMES else None
    if op in ("all", "any"):
        return "uint8" if name == "uint8" else "bool"
    return name


def numpy_reduce(op, a, dims, keepdim, correction):
    """The float64 (or exact integer) reference of a reduction over `dims`; raises where
    the reduction has no value (an empty max)."""
    wide = a.astype(np.float64) if a.dtype.kind == "f" else a
    with np.errstate(all="ignore"):
        if op in ("sum", "prod"):
            kw = {} if a.dtype.kind == "f" else {"dtype": np.int64}
            return getattr(np, op)(wide, axis=dims, keepdims=keepdim, **kw)
        if op == "mean":
            return np.mean(wide.astype(np.float64), axis=dims, keepdims=keepdim)
        if op in ("amax", "amin", "max", "min"):
            if any(a.shape[d] == 0 for d in dims):
                raise ValueError("empty")
            return (np.max if op in ("amax", "max") else np.min)(wide, axis=dims,
                                                                  keepdims=keepdim)
        if op in ("var", "std"):
            n = int(np.prod([a.shape[d] for d in dims]))
            if n - correction <= 0:
                return None  # torch's nan or inf (0 divisor): checked against torch only
            return getattr(np, op)(wide.astype(np.float64), axis=dims, ddof=correction,
                                   keepdims=keepdim)
        if op in ("all", "any"):
            return getattr(np, op)(a, axis=dims, keepdims=keepdim)
    raise AssertionError(op)


def tolerance(name, a):
    """(rtol, atol) for a float reduction of array `a` in dtype `name`."""
    n = max(int(a.size), 1)
    scale = float(np.max(np.abs(a.astype(np.float64)))) if a.size else 1.0
    return 4 * EPS[name], 4 * n * EPS[name] * max(scale, 1.0)


# ---- properties --------------------------------------------------------------------------

@st.composite
def dims_for(draw, ndim, many):
    """None, one dim (negative too) or, when `many`, a list of distinct dims."""
    if ndim == 0:
        return draw(st.sampled_from([None, 0, -1] + ([[]] if many else [])))
    one = st.integers(-ndim, ndim - 1)
    options = [st.none(), one]
    if many:
        options.append(st.lists(st.integers(0, ndim - 1), unique=True, max_size=ndim)
                       .map(lambda ds: [d - ndim if i % 2 else d for i, d in enumerate(ds)]))
    return draw(st.one_of(*options))


REDUCTIONS = ["sum", "mean", "prod", "amax", "amin", "var", "std", "all", "any"]


@given(data=st.data())
@examples(200)
def test_reduction_over_dims_matches_numpy_and_torch(data):
    op = data.draw(st.sampled_from(REDUCTIONS), "op")
    name = data.draw(st.sampled_from(DTYPE_NAMES), "dtype")
    shape = data.draw(shapes, "shape")
    lo, hi = (-2, 2) if op == "prod" else (-100, 100)
    t, a = data.draw(tensors(name, shape, lo=lo, hi=hi), "x")
    dim = data.draw(dims_for(len(shape), op != "prod"), "dim")  # torch's prod: one dim
    keepdim = data.draw(st.booleans(), "keepdim")
    if op in ("all", "any") and dim == []:
        dim = None  # see test_all_any_with_an_empty_dim_list_reduce_nothing_like_torch
    kwargs = {"dim": dim, "keepdim": keepdim}
    if op in ("all", "any", "prod") and dim is None:
        kwargs, keepdim = {}, False  # torch's all() and prod() take keepdim only with a dim
    correction = 1
    if op in ("var", "std"):
        correction = data.draw(st.sampled_from([0, 1, 2]), "correction")
        kwargs["correction"] = correction
    dtype = None
    if op in ("sum", "mean", "prod") and data.draw(st.booleans(), "with dtype"):
        dtype = data.draw(st.sampled_from(["int64", "float32", "float64"]), "dtype=")
        kwargs["dtype"] = getattr(pith, dtype)
    if op in ("amax", "amin") and dim is None:
        kwargs["dim"] = dim = []  # amax has no None: its default reduces every dim

    def pith_call():
        return getattr(t, op)(**kwargs)

    expected_error = False
    ref = None
    if torch is not None:
        tkw = dict(kwargs)
        if dtype is not None:
            tkw["dtype"] = getattr(torch, dtype)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")  # var's "degrees of freedom is <= 0"
                ref = getattr(to_torch(a, name), op)(**tkw)
        except Exception:  # noqa: BLE001 - torch raises: so must pith
            expected_error = True
    result = fallback_dtype(op, name, dtype)
    try:
        dims = numpy_dims(dim, len(shape))
        source = a.astype(np_dtype(dtype)) if dtype is not None else a
        expected = numpy_reduce(op, source, dims, keepdim, correction)
    except (ValueError, IndexError):
        expected = None
        if torch is None:
            expected_error = True
    if result is None and torch is None:
        expected_error = True
    if expected_error:
        with pytest.raises((RuntimeError, TypeError, IndexError)):
            pith_call()
        return
    out = pith_call()
    out_name = dtype_name(out.dtype)
    rtol, atol = tolerance(out_name, a) if out_name in FLOAT_NAMES else (None, None)
    if ref is not None:
        assert_matches_torch(out, ref, rtol=rtol, atol=atol)
    if expected is not None and result is not None:  # None: no NumPy reference
        assert_values(out, expected, result, rtol=rtol, atol=atol)


@given(data=st.data())
@examples(100)
def test_max_min_with_dim_give_values_and_first_indices(data):
    op = data.draw(st.sampled_from(["max", "min"]), "op")
    name = data.draw(st.sampled_from(DTYPE_NAMES), "dtype")
    shape = data.draw(shapes, "shape")
    t, a = data.draw(tensors(name, shape, lo=-3, hi=3), "x")
    ndim = len(shape)
    dim = data.draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1), "dim")
    keepdim = data.draw(st.booleans(), "keepdim")
    axis = dim % ndim if ndim else None
    if ndim and shape[axis] == 0:
        if torch is not None:
            kind = "ok"
            try:
                getattr(to_torch(a, name), op)(dim, keepdim)
            except Exception:  # noqa: BLE001
                kind = "error"
            if kind == "ok":
                values, indices = getattr(t, op)(dim, keepdim)
                assert values.numel() == 0 and indices.dtype is pith.int64
                return
        with pytest.raises((RuntimeError, IndexError)):
            getattr(t, op)(dim, keepdim)
        return
    values, indices = getattr(t, op)(dim=dim, keepdim=keepdim)
    arg = np.argmax if op == "max" else np.argmin
    best = np.max if op == "max" else np.min
    if ndim == 0:
        expected_values, expected_indices = a, np.array(0)
    else:
        expected_values = best(a, axis=axis, keepdims=keepdim)
        expected_indices = arg(a, axis=axis, keepdims=keepdim)
    assert_values(values, expected_values, name)
    assert_values(indices, expected_indices, "int64")
    if torch is not None:
        ref = getattr(to_torch(a, name), op)(dim, keepdim)
        assert_matches_torch(values, ref.values)
        assert_matches_torch(indices, ref.indices)


@given(data=st.data())
@examples(100)
def test_argmax_argmin_match_numpy(data):
    op = data.draw(st.sampled_from(["argmax", "argmin"]), "op")
    name = data.draw(st.sampled_from([n for n in DTYPE_NAMES if n != "bool"]), "dtype")
    shape = data.draw(shapes, "shape")
    t, a = data.draw(tensors(name, shape, lo=-3, hi=3), "x")
    ndim = len(shape)
    dim = data.draw(st.one_of(st.none(), st.integers(-max(ndim, 1), max(ndim, 1) - 1)), "dim")
    keepdim = data.draw(st.booleans(), "keepdim")
    fn = getattr(np, op)
    empty = a.size == 0 if dim is None or ndim == 0 else shape[dim % ndim] == 0
    if empty:
        with pytest.raises((RuntimeError, IndexError)):
            getattr(t, op)(dim=dim, keepdim=keepdim)
        return
    out = getattr(t, op)(dim=dim, keepdim=keepdim)
    if dim is None or ndim == 0:
        flat = int(fn(a.reshape(-1)))
        expected = np.full((1,) * ndim if keepdim else (), flat)
    else:
        expected = fn(a, axis=dim % ndim, keepdims=keepdim)
    assert_values(out, expected, "int64")
    if torch is not None:
        assert_matches_torch(out, getattr(to_torch(a, name), op)(dim=dim, keepdim=keepdim))


@given(data=st.data())
@examples(100)
def test_full_max_min_match_numpy(data):
    op = data.draw(st.sampled_from(["max", "min"]), "op")
    name = data.draw(st.sampled_from(DTYPE_NAMES), "dtype")
    t, a = data.draw(tensors(name, data.draw(shapes, "shape")), "x")
    if a.size == 0:
        with pytest.raises(RuntimeError, match="numel\\(\\) == 0"):
            getattr(t, op)()
        return
    assert_values(getattr(t, op)(), getattr(np, op)(a), name)


# ---- examples ----------------------------------------------------------------------------

@pytest.mark.parametrize("name", INT_NAMES + ["bool"])
def test_sum_and_prod_of_integers_are_int64(name):
    t = pith.ones(2, 3, dtype=getattr(pith, name))
    assert t.sum().dtype is pith.int64 and t.sum().item() == 6
    assert t.prod(1).dtype is pith.int64 and t.prod(1).tolist() == [1, 1]


def test_mean_of_integers_raises_runtime_error_like_torch():
    for name in INT_NAMES + ["bool"]:
        with pytest.raises(RuntimeError, match="could not infer output dtype"):
            pith.ones(3, dtype=getattr(pith, name)).mean()


def test_mean_of_integers_with_a_float_dtype_is_allowed():
    out = pith.tensor([1, 2]).mean(dtype=pith.float64)
    assert out.dtype is pith.float64 and out.item() == 1.5


def test_sum_with_dtype_casts_before_summing():
    out = pith.tensor([200, 100], dtype=pith.uint8).sum(dtype=pith.uint8)
    assert out.dtype is pith.uint8 and out.item() == (300 % 256)


@pytest.mark.parametrize("op,expected", [("sum", 0.0), ("prod", 1.0)])
def test_empty_sum_and_prod_are_the_identity(op, expected):
    out = getattr(pith.zeros(0, 3), op)(0)
    assert out.tolist() == [expected] * 3
    assert getattr(pith.zeros(0), op)().item() == expected


def test_mean_of_empty_is_nan():
    v = pith.zeros(0).mean().item()
    assert v != v


@pytest.mark.parametrize("op", ["amax", "amin"])
def test_amax_over_an_empty_dim_is_an_index_error_like_torch(op):
    with pytest.raises(IndexError, match="non-zero size"):
        getattr(pith.zeros(0, 3), op)(0)
    assert getattr(pith.zeros(0, 3), op)(1).shape == (0,)


def test_amax_with_an_empty_dim_list_reduces_everything():
    x = pith.tensor([[1.0, 5.0], [3.0, 2.0]])
    assert x.amax([]).item() == 5.0 and x.amax(dim=[]).shape == ()


def test_sum_with_an_empty_dim_list_reduces_everything_like_torch():
    x = pith.ones(2, 3)
    assert x.sum([]).item() == 6.0 and x.sum(dim=()).shape == ()


def test_repeated_dim_raises():
    with pytest.raises(RuntimeError, match="appears multiple times"):
        pith.ones(2, 3).sum((0, 0))


@pytest.mark.parametrize("dim", [0, -1])
def test_reductions_of_a_0_dim_tensor_accept_dim_0_and_minus_1(dim):
    x = pith.tensor(3.0)
    assert x.sum(dim).item() == 3.0 and x.sum(dim).shape == ()
    values, indices = x.max(dim)
    assert values.item() == 3.0 and indices.item() == 0
    assert x.argmax(dim).item() == 0


def test_reduction_of_a_0_dim_tensor_over_dim_1_is_an_index_error():
    with pytest.raises(IndexError):
        pith.tensor(3.0).sum(1)


def test_var_std_take_unbiased_like_torch():
    x = pith.tensor([1.0, 2.0, 4.0])
    a = np.array([1.0, 2.0, 4.0])
    assert x.var(unbiased=False).item() == pytest.approx(np.var(a))
    assert x.std(unbiased=True).item() == pytest.approx(np.std(a, ddof=1))
    assert pith.var(x, 0, unbiased=False).item() == pytest.approx(np.var(a))


def test_var_correction_keyword_and_default():
    x = pith.tensor([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]])
    a = np.array([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]])
    np.testing.assert_allclose(x.var(dim=1).tolist(), np.var(a, axis=1, ddof=1), rtol=1e-6)
    np.testing.assert_allclose(x.var(dim=1, correction=0).tolist(), np.var(a, axis=1),
                               rtol=1e-6)
    np.testing.assert_allclose(x.std(1, keepdim=True).tolist(),
                               np.std(a, axis=1, ddof=1, keepdims=True), rtol=1e-6)


def test_var_of_one_element_is_nan():
    v = pith.tensor([2.0]).var().item()
    assert v != v


def test_var_of_integers_raises_runtime_error_like_torch():
    for name in INT_NAMES:
        with pytest.raises(RuntimeError, match="only support floating point"):
            pith.ones(3, dtype=getattr(pith, name)).var()


def test_max_with_dim_returns_a_named_tuple_like_torch():
    out = pith.tensor([[1.0, 5.0], [7.0, 2.0]]).max(dim=1)
    assert out.values.tolist() == [5.0, 7.0] and out.indices.tolist() == [1, 0]
    values, indices = out
    assert values.tolist() == [5.0, 7.0]


def test_all_any_of_uint8_stay_uint8_like_torch():
    x = pith.tensor([1, 2], dtype=pith.uint8)
    assert x.all().dtype is pith.uint8 and x.any().dtype is pith.uint8


def test_all_any_of_floats_are_bool():
    x = pith.tensor([[0.0, 1.5], [2.0, 3.0]])
    assert x.all().dtype is pith.bool and x.all().item() is False
    assert x.any(1).tolist() == [True, True]
    assert x.all(dim=1, keepdim=True).tolist() == [[False], [True]]


def test_all_any_with_an_empty_dim_list_reduce_nothing_like_torch():
    x = pith.tensor([[True, False], [True, True]])
    assert x.all(dim=[]).tolist() == [[True, False], [True, True]]
    assert x.any(dim=()).shape == (2, 2)


def test_all_any_of_empty():
    assert pith.zeros(0).all().item() is True and pith.zeros(0).any().item() is False


def test_function_forms_take_the_same_keywords():
    x = pith.arange(6, dtype=pith.float32).view(2, 3)
    assert pith.sum(x, dim=1, keepdim=True).tolist() == [[3.0], [12.0]]
    assert pith.mean(x, dim=0).tolist() == [1.5, 2.5, 3.5]
    assert pith.amax(x, dim=1).tolist() == [2.0, 5.0]
    assert pith.argmin(x, dim=1).tolist() == [0, 0]
    assert pith.prod(x, 1, dtype=pith.float64).dtype is pith.float64


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_low_precision_sums_accumulate_in_float32(name):
    x = pith.ones(4096, dtype=getattr(pith, name))
    assert x.sum().item() == 4096.0
