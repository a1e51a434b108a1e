"""Python protocols of pith.Tensor that PyTorch defines exactly: int(), operator.index() and
float() of one-element tensors (a real int, never a bool), size(dim) and stride(dim) of a
0-dim tensor (no dims: IndexError), and which exception class a __pith_dispatch__ handler's
error comes back as (pith.InterpreterError by identity, not by name).
"""
import operator
import warnings

import pytest

import pith
from conftest import torch_or_none


# ---- int(), operator.index(), float() ------------------------------------------------------

@pytest.mark.parametrize("convert", [int, operator.index], ids=["int", "index"])
@pytest.mark.parametrize("value", [True, False])
def test_int_and_index_of_a_bool_tensor_are_a_real_int(convert, value):
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # 3.11: "__int__ returned non-int (type bool)"
        result = convert(pith.tensor(value))
    assert type(result) is int and result == int(value)


@pytest.mark.parametrize("convert", [int, operator.index], ids=["int", "index"])
def test_int_and_index_of_an_integer_tensor_are_an_int(convert):
    for dtype in (pith.uint8, pith.int8, pith.int16, pith.int32, pith.int64):
        result = convert(pith.tensor([7], dtype=dtype))
        assert type(result) is int and result == 7


def test_float_of_a_bool_tensor_is_a_float():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert type(float(pith.tensor(True))) is float and float(pith.tensor(True)) == 1.0
    assert type(int(pith.tensor(2.75))) is int and int(pith.tensor(2.75)) == 2


def test_a_bool_tensor_indexes_a_list_as_its_int():
    assert ["a", "b"][pith.tensor(True)] == "b"


def test_matches_torch_when_installed():
    torch = torch_or_none()
    if torch is None:
        pytest.skip("torch is not installed")
    for value in (True, False):
        for convert in (int, operator.index, float):
            ours, theirs = convert(pith.tensor(value)), convert(torch.tensor(value))
            assert type(ours) is type(theirs) and ours == theirs


# ---- size(dim), stride(dim) of a 0-dim tensor ----------------------------------------------

@pytest.mark.parametrize("method", ["size", "stride"])
@pytest.mark.parametrize("dim", [0, -1, 1])
def test_size_and_stride_of_a_zero_dim_tensor_raise_index_error(method, dim):
    x = pith.tensor(3.0)
    with pytest.raises(IndexError, match=f"^Dimension specified as {dim} but tensor has no "
                                         "dimensions$"):
        getattr(x, method)(dim)
    with pytest.raises(IndexError, match="tensor has no dimensions"):
        getattr(x, method)(dim=dim)


def test_zero_dim_tensor_still_answers_without_a_dim():
    x = pith.tensor(3.0)
    assert x.size() == () and x.stride() == () and x.shape == ()
    with pytest.raises(IndexError):
        x.shape[0]


@pytest.mark.parametrize("method", ["size", "stride"])
def test_dims_out_of_range_raise_index_error(method):
    x = pith.ones(2, 3)
    for dim in (2, -3):
        with pytest.raises(IndexError, match=r"Dimension out of range \(expected to be in "
                                             rf"range of \[-2, 1\], but got {dim}\)"):
            getattr(x, method)(dim)
    assert getattr(x, method)(-1) == (3 if method == "size" else 1)
    assert getattr(x, method)(dim=0) == (2 if method == "size" else 3)


def test_size_and_stride_errors_match_torch_when_installed():
    torch = torch_or_none()
    if torch is None:
        pytest.skip("torch is not installed")
    cases = [((), 0), ((), -1), ((), 1), ((2, 3), 2), ((2, 3), -3)]
    for shape, dim in cases:
        for method in ("size", "stride"):
            with pytest.raises(IndexError) as theirs:
                getattr(torch.zeros(shape), method)(dim)
            with pytest.raises(IndexError) as ours:
                getattr(pith.zeros(shape), method)(dim)
            assert str(ours.value) == str(theirs.value)


# ---- handler exceptions: pith.InterpreterError by identity ---------------------------------

def raising_wrapper(error):
    class Raising(pith.Tensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            raise error("raised by the handler")

    return pith.Tensor._make_wrapper_subclass(Raising, (2,))


class InterpreterError(RuntimeError):
    """A user's class that shares pith.InterpreterError's name."""


@pytest.mark.parametrize("error", [
    InterpreterError,
    type("pith.InterpreterError", (RuntimeError,), {}),  # even its qualified name
], ids=["same-name", "same-qualified-name"])
def test_a_users_class_named_interpreter_error_propagates_as_itself(error):
    w = raising_wrapper(error)
    with pytest.raises(error, match="raised by the handler") as info:
        w + w
    assert type(info.value) is error
    assert not isinstance(info.value, pith.InterpreterError)


def test_pith_interpreter_error_from_a_handler_propagates_as_itself():
    w = raising_wrapper(pith.InterpreterError)
    with pytest.raises(pith.InterpreterError, match="raised by the handler"):
        w + w
