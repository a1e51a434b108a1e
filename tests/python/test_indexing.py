"""Indexing of pith.Tensor: basic keys (int, slice, None, Ellipsis and tuples of them) and
advanced ones (bool masks, index tensors and lists, Python bools), x[key] and x[key] = value,
Tensor.T and iteration, with NumPy and PyTorch as the oracles; basic results are views that
share storage, advanced ones copies; every error path."""
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


@pytest.mark.parametrize("key", [1.5, object(), {}, np.float64(1.0), (0, 1.5)])
def test_invalid_index_type_raises_index_error(key):
    with pytest.raises(IndexError, match="only integers, slices"):
        pith.zeros(3, 3)[key]


@pytest.mark.parametrize("key", ["a", b"a", [0, "a"]])
def test_string_index_raises_type_error_like_torch(key):
    with pytest.raises(TypeError, match="new\\(\\): invalid data type"):
        pith.zeros(3)[key]


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


# ---- advanced indexing: generated keys against NumPy and PyTorch ----
#
# A key is drawn as a spec, a list of (kind, payload) items walking self's dims left to
# right, and built three ways (pith, NumPy, torch) from the same values. The integer index
# tensors of a key share one broadcast shape, so that most keys are valid; masks and bools
# may still fail to broadcast, and then every side must raise IndexError.

from conftest import assert_values, tensors, to_pith  # noqa: E402


@st.composite
def index_array(draw, size, bshape, out_of_range=False):
    """An int64 array whose shape broadcasts to `bshape`, with values in [-size, size)."""
    shape = list(bshape[draw(st.integers(0, len(bshape))):])
    shape = tuple(1 if draw(st.integers(0, 3)) == 0 else s for s in shape)
    n = int(np.prod(shape))
    if size == 0 or out_of_range:
        values = st.integers(-size - 3, size + 3)
    else:
        values = st.integers(-size, size - 1)
    return np.array(draw(st.lists(values, min_size=n, max_size=n)), dtype=np.int64).reshape(shape)


@st.composite
def advanced_specs(draw, shape, torch_only=False, out_of_range=False):
    """A key spec for `shape` with at least one advanced item. `torch_only` adds the items
    whose NumPy meaning differs from PyTorch's (ints beside index tensors, 0-dim index
    tensors, uint8 masks)."""
    ndim = len(shape)
    bshape = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
    spec, d, ellipsis, added = [], 0, False, 0
    kinds = ["tensor", "slice", "none", "list", "mask", "bool", "ellipsis"]
    if torch_only:
        kinds += ["int", "tensor0", "uint8"]
    while True:
        # Stop now and then (never inside an Ellipsis's reach: the items after it must name
        # every remaining dim); past the last dim only None, bools and an Ellipsis fit. At
        # most 6 added dims keep the result within pith's 16 dims.
        if spec and not (ellipsis and d < ndim) and draw(st.integers(0, 2)) == 0:
            break
        free = ([] if added >= 6 else ["none", "bool"]) + ([] if ellipsis else ["ellipsis"])
        choices = kinds if d < ndim else free
        if added >= 6:
            choices = [k for k in choices if k not in ("none", "bool")]
        if not choices:
            break
        kind = draw(st.sampled_from(choices))
        added += kind in ("none", "bool")
        if kind == "ellipsis" and ellipsis:
            continue
        if kind == "none":
            spec.append(("none", None))
        elif kind == "bool":
            spec.append(("bool", draw(st.booleans())))
        elif kind == "ellipsis":
            # NumPy counts an Ellipsis between two advanced indices as a separator even when
            # it stands for no dim; PyTorch (and pith) do not.
            if not torch_only and d == ndim:
                continue
            ellipsis = True
            spec.append(("ellipsis", None))
            d += draw(st.integers(0 if torch_only else 1, ndim - d))
        elif kind == "slice":
            spec.append(("slice", slice(draw(st.none() | st.integers(-4, 4)),
                                        draw(st.none() | st.integers(-4, 4)),
                                        draw(st.integers(1, 3)))))
            d += 1
        elif kind == "int":
            spec.append(("int", draw(st.integers(-shape[d], shape[d] - 1)) if shape[d] else 0))
            d += 1
        elif kind in ("mask", "uint8"):
            k = draw(st.integers(1, ndim - d))
            n = int(np.prod(shape[d:d + k]))
            mask = np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)),
                            dtype=np.bool_).reshape(shape[d:d + k])
            spec.append((kind, mask))
            d += k
        elif kind == "tensor0":
            spec.append((kind, np.array(draw(st.integers(-shape[d], shape[d] - 1))
                                        if shape[d] else 0)))
            d += 1
        else:
            a = draw(index_array(shape[d], bshape, out_of_range))
            if a.ndim == 0 and not torch_only:
                a = a.reshape(1)  # a 0-dim index is an int in PyTorch, an array in NumPy
            spec.append(("list" if kind == "list" and a.ndim == 1 else "tensor", a))
            d += 1
    if not any(kind not in ("slice", "none", "ellipsis", "int") for kind, _ in spec):
        spec.append(("bool", True))
    return spec


def key_for(spec, side):
    """The key of `spec` for side 'pith', 'numpy' or 'torch'."""
    items = []
    for kind, v in spec:
        if kind in ("slice", "int", "bool"):
            items.append(v)
        elif kind == "none":
            items.append(None)
        elif kind == "ellipsis":
            items.append(Ellipsis)
        elif kind == "list":
            items.append(v.tolist())
        elif side == "numpy":
            items.append(int(v) if kind == "tensor0" else v)
        elif side == "torch":
            items.append(torch.tensor(v.astype(np.uint8) if kind == "uint8" else v))
        else:
            items.append(to_pith(v, "uint8" if kind == "uint8" else None))
    return tuple(items)


SELF_DTYPES = ["int64", "float32", "bool", "int8", "float16"]


def outcome(fn):
    """(result, None) or (None, exception)."""
    try:
        return fn(), None
    except (IndexError, TypeError, ValueError, RuntimeError) as e:
        return None, e


def run_get(t, key):
    return outcome(lambda: t[key])


@settings(max_examples=150, deadline=None)
@given(st.data(), shapes, st.sampled_from(SELF_DTYPES))
def test_advanced_getitem_matches_numpy(data, shape, name):
    t, a = data.draw(tensors(name, shape))
    spec = data.draw(advanced_specs(shape))
    expected, np_error = outcome(lambda: a[key_for(spec, "numpy")])
    result, error = run_get(t, key_for(spec, "pith"))
    if np_error is not None:
        assert isinstance(np_error, IndexError), np_error
        # PyTorch (and pith) check no bounds when the result is empty; NumPy always does.
        assert isinstance(error, IndexError) or (error is None and result.numel() == 0), \
            (np_error, error)
        return
    assert error is None, error
    assert_values(result, np.asarray(expected), name)


@pytest.mark.skipif(torch is None, reason="PyTorch is the oracle")
@settings(max_examples=150, deadline=None)
@given(st.data(), shapes, st.sampled_from(SELF_DTYPES), st.booleans())
def test_advanced_getitem_matches_torch_values_and_errors(data, shape, name, out_of_range):
    import warnings
    t, a = data.draw(tensors(name, shape))
    spec = data.draw(advanced_specs(shape, torch_only=True, out_of_range=out_of_range))
    reference = torch.tensor(a.astype(np.float32) if name == "float16" else a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # uint8 masks are deprecated in PyTorch
        expected, torch_error = outcome(lambda: reference[key_for(spec, "torch")])
    result, error = run_get(t, key_for(spec, "pith"))
    if torch_error is not None:
        assert type(error) is type(torch_error), (torch_error, error)
        assert str(error).split(".")[0] == str(torch_error).split(".")[0]
        return
    assert error is None, error
    assert_values(result, expected.numpy(), name)


@settings(max_examples=100, deadline=None)
@given(st.data(), shapes, st.sampled_from(["int64", "float32"]), st.booleans())
def test_advanced_setitem_matches_numpy(data, shape, name, scalar):
    layout = data.draw(st.sampled_from(["contiguous", "transposed", "stepped", "offset"]))
    t, a = data.draw(tensors(name, shape, layout, lo=-50, hi=50))
    a = a.copy()
    spec = data.draw(advanced_specs(shape))
    np_key, key = key_for(spec, "numpy"), key_for(spec, "pith")
    try:
        target = a[np_key].shape
    except IndexError:
        with pytest.raises(IndexError):
            t[key] = 1
        return
    if scalar:
        value, pith_value = -7, -7
    else:
        # A value of the target's trailing shape, broadcast over the rest.
        trailing = target[data.draw(st.integers(0, len(target))):]
        value = np.arange(int(np.prod(trailing)), dtype=np.int64).reshape(trailing) - 100
        pith_value = to_pith(value)
    a[np_key] = value
    t[key] = pith_value
    assert_values(t, a, name)


@pytest.mark.skipif(torch is None, reason="PyTorch is the oracle")
@settings(max_examples=100, deadline=None)
@given(st.data(), shapes, st.booleans())
def test_advanced_setitem_matches_torch(data, shape, scalar):
    import warnings
    t, a = data.draw(tensors("int64", shape, "transposed"))
    spec = data.draw(advanced_specs(shape, torch_only=True))
    reference = torch.tensor(a)
    key, torch_key = key_for(spec, "pith"), key_for(spec, "torch")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # uint8 masks are deprecated in PyTorch
        target, torch_error = outcome(lambda: tuple(reference[torch_key].shape))
        value = -7
        if torch_error is None and not scalar:
            trailing = target[data.draw(st.integers(0, len(target))):]
            value = np.arange(int(np.prod(trailing)), dtype=np.int64).reshape(trailing) - 100
        if torch_error is None:
            _, torch_error = outcome(lambda: reference.__setitem__(
                torch_key, value if scalar else torch.tensor(value)))
    _, error = outcome(lambda: t.__setitem__(key, value if scalar else to_pith(value)))
    if torch_error is not None:
        if "masked_fill_ only supports boolean masks" in str(torch_error):
            return  # PyTorch's x[uint8 mask] = scalar shortcut refuses what x[mask] accepts
        assert type(error) is type(torch_error), (torch_error, error)
        return
    assert error is None, error
    assert_values(t, reference.numpy(), "int64")


# ---- advanced indexing: one behaviour each ----

def test_advanced_getitem_is_a_copy():
    x = pith.arange(6).reshape(2, 3)
    y = x[[1, 0]]
    assert y.data_ptr() != x.data_ptr()
    y[0, 0] = 100
    assert x.tolist() == [[0, 1, 2], [3, 4, 5]]


def test_bool_mask_selects_elements():
    x = pith.arange(6).reshape(2, 3)
    assert x[x % 2 == 0].tolist() == [0, 2, 4]


def test_mask_and_index_tensor_combine():
    x = pith.arange(12).reshape(3, 4)
    assert x[pith.tensor([True, False, True]), 1:3].tolist() == [[1, 2], [9, 10]]


def test_true_and_false_add_a_dim():
    x = pith.arange(3)
    assert x[True].shape == (1, 3) and x[False].shape == (0, 3)
    # Each bool is an index of [1] on a new dim: separated by the Ellipsis, their
    # broadcast shape goes first, as for any non-adjacent indices (as in PyTorch).
    assert x[None, True, ..., True].shape == (1, 1, 3)


def test_0dim_bool_tensor_acts_as_a_bool():
    x = pith.arange(3)
    assert x[pith.tensor(True)].tolist() == [[0, 1, 2]]
    assert x[pith.tensor(False)].shape == (0, 3)


def test_0dim_integer_tensor_is_an_int_and_gives_a_view():
    x = pith.arange(6).reshape(2, 3)
    row = x[pith.tensor(1)]
    assert row.tolist() == [3, 4, 5]
    row[0] = -1
    assert x[1, 0].item() == -1


def test_list_of_bools_is_a_mask():
    assert pith.arange(3)[[True, False, True]].tolist() == [0, 2]


def test_empty_list_is_an_empty_index():
    assert pith.zeros(3, 4)[[]].shape == (0, 4)


def test_list_of_floats_truncates_to_int64_like_torch():
    assert pith.arange(5)[[1.9, 3.2]].tolist() == [1, 3]


def test_numpy_arrays_and_ranges_are_index_tensors():
    x = pith.arange(5)
    assert x[np.array([4, 0])].tolist() == [4, 0]
    assert x[np.array([True, False, True, False, True])].tolist() == [0, 2, 4]
    assert x[range(1, 3)].tolist() == [1, 2]


def test_uint8_tensor_is_a_mask_like_torch():
    x = pith.arange(3)
    assert x[pith.tensor([1, 0, 1], dtype=pith.uint8)].tolist() == [0, 2]


def test_repeated_and_negative_indices():
    assert pith.arange(4)[[-1, 0, -1]].tolist() == [3, 0, 3]


def test_index_tensors_broadcast_together():
    x = pith.arange(12).reshape(3, 4)
    assert x[pith.tensor([[0], [2]]), pith.tensor([1, 3])].tolist() == [[1, 3], [9, 11]]


def test_non_adjacent_indices_go_first():
    x = pith.zeros(2, 3, 4, 5)
    assert x[:, [0, 1], :, [1, 2]].shape == (2, 2, 4)
    assert x[[0, 1], :, [1, 2]].shape == (2, 3, 5)


def test_int_beside_an_index_tensor_is_applied_first_like_torch():
    # NumPy treats the 0 as a second advanced index (the two are not adjacent, so NumPy's
    # result is [2, 5, 4]); PyTorch selects first and then indexes.
    x = pith.zeros(5, 3, 4, 6)
    assert x[:, [0, 1], :, 0].shape == (5, 2, 4)


def test_advanced_index_of_a_non_contiguous_tensor():
    x = pith.arange(12).reshape(3, 4).t()
    assert x[[3, 0], 1:].tolist() == [[7, 11], [4, 8]]


def test_advanced_getitem_through_the_op_with_none_entries():
    x = pith.arange(12).reshape(3, 4)
    assert pith.ops.pith.index.Tensor(x, [None, pith.tensor([2])]).tolist() == [[2], [6], [10]]


@pytest.mark.parametrize("key,message", [
    ([3], "index 3 is out of bounds for dimension 0 with size 3"),
    ([-4], "index -4 is out of bounds for dimension 0 with size 3"),
    ((slice(None), [4]), "index 4 is out of bounds for dimension 0 with size 4"),
    (([0], [5]), "index 5 is out of bounds for dimension 1 with size 4")])
def test_index_out_of_range_raises_index_error(key, message):
    with pytest.raises(IndexError, match=message):
        pith.zeros(3, 4)[key]


def test_mask_of_wrong_shape_raises_index_error():
    with pytest.raises(IndexError, match=r"The shape of the mask \[2\] at index 0 does not "
                                         r"match the shape of the indexed tensor \[3\] at index 0"):
        pith.zeros(3)[pith.tensor([True, False])]


def test_indices_that_do_not_broadcast_raise_index_error():
    with pytest.raises(IndexError, match=r"shape mismatch: indexing tensors could not be "
                                         r"broadcast together with shapes \[2\], \[3\]"):
        pith.zeros(3, 4)[[0, 1], [0, 1, 2]]


def test_float_index_tensor_raises_index_error():
    with pytest.raises(IndexError, match="tensors used as indices must be long, int, byte or "
                                         "bool tensors"):
        pith.zeros(3)[pith.tensor([0.0])]


def test_too_many_indices_with_a_mask():
    with pytest.raises(IndexError, match="too many indices for tensor of dimension 1"):
        pith.zeros(3)[pith.ones(3, 1, dtype=pith.bool)]


def test_list_holding_a_slice_is_not_an_index_tensor():
    # PyTorch 2.x still reads such a list as a tuple (deprecated); pith reads every list as
    # one index tensor, as NumPy and PyTorch's announced behaviour (x[torch.tensor(seq)])
    # do, so the error is torch.tensor's.
    with pytest.raises(RuntimeError, match="Could not infer dtype of slice"):
        pith.zeros(3, 3)[[0, slice(None)]]


def test_advanced_setitem_writes_through_a_basic_view():
    x = pith.zeros(3, 4)
    x[1:, [0, 2]] = 5
    assert x.tolist() == [[0, 0, 0, 0], [5, 0, 5, 0], [5, 0, 5, 0]]


def test_mask_setitem_with_a_scalar_and_with_values():
    x = pith.arange(5)
    x[x > 2] = 0
    assert x.tolist() == [0, 1, 2, 0, 0]
    x[pith.tensor([True, False, True, False, False])] = pith.tensor([7, 8])
    assert x.tolist() == [7, 1, 8, 0, 0]


def test_setitem_with_repeated_indices_keeps_the_last_value():
    x = pith.zeros(3, dtype=pith.int64)
    x[[0, 0, 2]] = pith.tensor([1, 2, 3])
    assert x.tolist() == [2, 0, 3]


def test_advanced_setitem_converts_the_value_dtype():
    # PyTorch refuses a tensor value of another dtype here; pith converts it, as copy_ does.
    x = pith.zeros(3, dtype=pith.int64)
    x[[0, 2]] = pith.tensor([1.7, -2.5])
    assert x.tolist() == [1, 0, -2] and x.dtype is pith.int64
    x[[1]] = 2.9
    assert x.tolist() == [1, 2, -2]


def test_setitem_drops_leading_ones_of_the_value():
    x = pith.zeros(3)
    x[[0, 1]] = pith.ones(1, 1, 2)
    x[2:] = pith.full((1, 1), 4.0)
    assert x.tolist() == [1, 1, 4]


def test_setitem_value_that_does_not_broadcast_raises():
    x = pith.zeros(3)
    with pytest.raises(RuntimeError, match=r"shape mismatch: value tensor of shape \[3\] "
                                           r"cannot be broadcast to indexing result of shape \[2\]"):
        x[[0, 1]] = pith.ones(3)
    assert x.tolist() == [0, 0, 0]


def test_setitem_out_of_range_raises_and_writes_nothing():
    x = pith.zeros(3)
    with pytest.raises(IndexError, match="index 3 is out of bounds"):
        x[[0, 3]] = 1
    assert x.tolist() == [0, 0, 0]


def test_setitem_true_and_false():
    x = pith.zeros(3)
    x[False] = 1
    assert x.tolist() == [0, 0, 0]
    x[True] = 2
    assert x.tolist() == [2, 2, 2]


def test_setitem_value_aliasing_the_target():
    x = pith.arange(4)
    x[[1, 2, 3]] = x[:3]
    assert x.tolist() == [0, 0, 1, 2]

