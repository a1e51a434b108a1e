"""Basic indexing of pith.Tensor (int, slice, None, Ellipsis and tuples of them): x[key],
x[key] = value, Tensor.T and iteration, with NumPy as the oracle; views share storage;
every error path; advanced indexing is refused clearly."""
import gc

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import pith

try:
    import torch
except ImportError:
    torch = None
else:
    # torch's import leaves a large heap that every gc.collect() of the leak fixture would
    # walk again (about 0.2 s per test); freezing it keeps the suite fast.
    gc.freeze()

NP = {pith.float32: np.float32, pith.float64: np.float64, pith.int64: np.int64,
      pith.int32: np.int32, pith.int8: np.int8, pith.bool: np.bool_}


def as_np(t):
    return np.array(t.tolist(), dtype=NP[t.dtype]).reshape(tuple(t.shape))


def arange_pair(shape):
    a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape)
    return a, pith.tensor(a.ravel().tolist(), dtype=pith.int64).reshape(shape)


shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
bounds = st.none() | st.integers(-6, 6)
slices = st.builds(slice, bounds, bounds, st.none() | st.integers(1, 3))
items = st.integers(-5, 5) | slices | st.none() | st.just(Ellipsis)


@st.composite
def keys(draw):
    key = draw(st.lists(items, min_size=0, max_size=6))
    if len(key) == 1 and draw(st.booleans()):
        return key[0]  # a bare item, not a 1-tuple
    return tuple(key)


# ---- x[key] ----

@settings(max_examples=300, deadline=None)
@given(shapes, keys())
def test_getitem_matches_numpy(shape, key):
    a, t = arange_pair(shape)
    try:
        expected = np.asarray(a[key])
    except IndexError:
        with pytest.raises(IndexError):
            t[key]
        return
    result = t[key]
    assert tuple(result.shape) == expected.shape
    np.testing.assert_array_equal(as_np(result), expected)


def error_of(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return type(e), str(e).split(".")[0]
    return None


@pytest.mark.skipif(torch is None, reason="PyTorch is the oracle for strides and messages")
@settings(max_examples=300, deadline=None)
@given(shapes, keys() | st.builds(lambda k, s: (k, s), items, st.builds(
    slice, bounds, bounds, st.sampled_from([0, -1, 2]))))
def test_getitem_matches_torch_values_strides_and_errors(shape, key):
    a, t = arange_pair(shape)
    reference = torch.arange(a.size).reshape(shape)
    if isinstance(key, tuple) and sum(item is Ellipsis for item in key) > 1:
        return  # See Note [Basic indexing is a chain of views]: pith refuses, torch expands
    expected_error = error_of(lambda: reference[key])
    assert error_of(lambda: t[key]) == expected_error
    if expected_error is None:
        result, expected = t[key], reference[key]
        assert tuple(result.shape) == tuple(expected.shape)
        assert result.stride() == expected.stride()
        assert result.storage_offset() == expected.storage_offset()
        assert result.tolist() == expected.tolist()


def test_getitem_int_of_1d_tensor_is_0dim():
    x = pith.tensor([1.0, 2.0, 3.0])
    assert x[1].dim() == 0 and x[1].item() == 2.0


def test_getitem_negative_int_wraps():
    assert pith.tensor([1, 2, 3])[-1].item() == 3


def test_getitem_accepts_numpy_integers():
    assert pith.tensor([1, 2, 3])[np.int64(1)].item() == 2


def test_getitem_of_empty_key_is_a_new_view():
    x = pith.tensor([1, 2, 3])
    for key in [..., (), slice(None)]:
        view = x[key]
        assert view is not x and view.data_ptr() == x.data_ptr()


def test_getitem_views_share_storage():
    x = pith.zeros(3, 4)
    view = x[1:, None, ..., ::2][0]
    assert view.storage_offset() == 4
    assert view.stride() == (4, 2)
    view.add_(1)
    assert x.tolist() == [[0] * 4, [1, 0, 1, 0], [0] * 4]


def test_getitem_huge_slice_bounds_clamp():
    assert pith.tensor([1, 2, 3])[-10**30:10**30].tolist() == [1, 2, 3]


# ---- x[key] = value ----

@settings(max_examples=200, deadline=None)
@given(shapes, keys(), st.booleans())
def test_setitem_matches_numpy(shape, key, scalar):
    a, t = arange_pair(shape)
    try:
        target_shape = np.asarray(a[key]).shape
    except IndexError:
        return
    # A scalar, or a row that broadcasts over the leading dims.
    if scalar:
        value = -7
    else:
        value = np.arange(target_shape[-1]) - 100 if target_shape else np.asarray(-100)
    a[key] = value
    t[key] = value if scalar else pith.tensor(value.tolist(), dtype=pith.int64)
    np.testing.assert_array_equal(as_np(t), a)


def test_setitem_writes_through_to_the_base():
    x = pith.zeros(2, 3)
    row = x[1]
    row[1:] = 5
    assert x.tolist() == [[0, 0, 0], [0, 5, 5]]


def test_setitem_broadcasts_a_tensor():
    x = pith.zeros(2, 3)
    x[...] = pith.tensor([1.0, 2.0, 3.0])
    assert x.tolist() == [[1, 2, 3], [1, 2, 3]]


def test_setitem_converts_the_scalar_to_the_tensor_dtype():
    x = pith.zeros(3, dtype=pith.int64)
    x[0] = 2.7
    x[1] = True
    assert x.tolist() == [2, 1, 0] and x.dtype is pith.int64


def test_setitem_accepts_nested_lists():
    x = pith.zeros(2, 2)
    x[0] = [1.0, 2.0]
    assert x.tolist() == [[1, 2], [0, 0]]


def test_setitem_0dim_tensor_with_ellipsis():
    x = pith.tensor(1.0)
    x[...] = 4
    assert x.item() == 4.0


def test_setitem_shape_mismatch_raises():
    x = pith.zeros(2, 3)
    with pytest.raises(RuntimeError):
        x[0] = pith.zeros(2)


def test_delitem_raises_type_error():
    x = pith.zeros(2)
    with pytest.raises(TypeError, match="does not support item deletion"):
        del x[0]


# ---- errors ----

@pytest.mark.parametrize("key,message", [
    (5, "index 5 is out of bounds for dimension 0 with size 3"),
    (-4, "index -4 is out of bounds for dimension 0 with size 3"),
    ((0, 4), "index 4 is out of bounds for dimension 1 with size 4"),
    ((..., 4), "index 4 is out of bounds for dimension 1 with size 4"),
    # As in PyTorch, the "dimension" is the item's position in the key.
    ((None, 0, 4), "index 4 is out of bounds for dimension 2 with size 4"),
    ((None, 3), "index 3 is out of bounds for dimension 1 with size 3")])
def test_int_out_of_range_raises_index_error(key, message):
    with pytest.raises(IndexError, match=message):
        pith.zeros(3, 4)[key]


def test_int_index_of_0dim_tensor_raises():
    with pytest.raises(IndexError, match="invalid index of a 0-dim tensor"):
        pith.tensor(1.0)[0]


def test_nonzero_int_index_of_0dim_tensor_is_out_of_bounds_like_torch():
    with pytest.raises(IndexError, match="index 1 is out of bounds for dimension 0 with size 0"):
        pith.tensor(1.0)[1]


def test_too_many_indices_raises():
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 2"):
        pith.zeros(2, 2)[0, 0, 0]


def test_two_ellipses_raise():
    with pytest.raises(IndexError, match="single ellipsis"):
        pith.zeros(2, 2)[..., ...]


def test_negative_step_raises_value_error():
    with pytest.raises(ValueError, match="step must be greater than zero"):
        pith.zeros(3)[::-1]


def test_zero_step_raises_value_error():
    with pytest.raises(ValueError, match="slice step cannot be zero"):
        pith.zeros(3)[::0]


def test_slice_of_0dim_tensor_raises_like_torch():
    with pytest.raises(IndexError, match="slice\\(\\) cannot be applied to a 0-dim tensor"):
        pith.tensor(1.0)[:]


def test_too_many_indices_is_reported_before_a_bad_step():
    with pytest.raises(IndexError, match="too many indices"):
        pith.zeros(3)[::-1, 0]


@pytest.mark.parametrize("key", [1.5, "a", object()])
def test_invalid_index_type_raises_index_error(key):
    with pytest.raises(IndexError, match="only integers, slices"):
        pith.zeros(3)[key]


@pytest.mark.parametrize("key", [[0, 1], pith.tensor([0]), pith.tensor([True, False, True]),
                                 (0, [1]), np.array([0])])
def test_advanced_index_is_not_implemented(key):
    with pytest.raises(NotImplementedError,
                       match=r"advanced indexing \(tensor or list index\) is not supported yet"):
        pith.zeros(3, 3)[key]


def test_bool_index_is_not_implemented():
    with pytest.raises(NotImplementedError, match=r"advanced indexing \(bool index\)"):
        pith.zeros(3)[True]


def test_advanced_setitem_is_not_implemented():
    x = pith.zeros(3)
    with pytest.raises(NotImplementedError, match="advanced indexing"):
        x[[0, 1]] = 1.0
    assert x.tolist() == [0, 0, 0]


# ---- T and iteration ----

@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (2, 3, 4)])
def test_T_reverses_dims_as_a_view(shape):
    a, t = arange_pair(shape)
    np.testing.assert_array_equal(as_np(t.T), a.T)
    assert t.T.data_ptr() == t.data_ptr()


def test_iter_yields_views_of_rows():
    a, t = arange_pair((3, 2))
    rows = list(t)
    assert len(rows) == 3
    for row, expected in zip(rows, a):
        np.testing.assert_array_equal(as_np(row), expected)
    rows[2][0] = -1
    assert t[2, 0].item() == -1


def test_iter_of_1d_tensor_yields_0dim_tensors():
    assert [v.dim() for v in pith.tensor([1, 2])] == [0, 0]


def test_iter_of_empty_tensor_yields_nothing():
    assert list(pith.zeros(0, 3)) == []


def test_iter_over_0dim_tensor_raises():
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        iter(pith.tensor(1.0))
