"""NumPy, buffer-protocol and DLPack interop: Tensor.numpy(), __array__, memoryview(t),
pith.from_numpy, as_tensor, tensor, frombuffer, _tensor_bytes, __dlpack__ and from_dlpack.

NumPy (and PyTorch, when installed) are the oracles; sharing is checked by writing through
one side and reading through the other, lifetimes by dropping the producer first.
"""
import array
import ctypes
import gc
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import pith
from conftest import DLManagedTensor, DLTensor

# pith dtype name -> NumPy dtype (bfloat16 has none)
NUMPY_DTYPES = {
    "bool": np.bool_, "uint8": np.uint8, "int8": np.int8, "int16": np.int16,
    "int32": np.int32, "int64": np.int64, "float16": np.float16, "float32": np.float32,
    "float64": np.float64,
}
ALL_DTYPES = list(NUMPY_DTYPES) + ["bfloat16"]
STRUCT_FORMATS = {
    "bool": "?", "uint8": "B", "int8": "b", "int16": "h", "int32": "i", "int64": "l",
    "float16": "e", "float32": "f", "float64": "d",
}
# DLPack (code, bits) of each dtype: kDLInt 0, kDLUInt 1, kDLFloat 2, kDLBfloat 4, kDLBool 6
DLPACK_TYPES = {
    "bool": (6, 8), "uint8": (1, 8), "int8": (0, 8), "int16": (0, 16), "int32": (0, 32),
    "int64": (0, 64), "float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32),
    "float64": (2, 64),
}


def values_for(name, n=6):
    """n distinct, exactly representable values of dtype `name` (bools alternate)."""
    if name == "bool":
        return [i % 2 == 0 for i in range(n)]
    if name in ("float16", "bfloat16", "float32", "float64"):
        return [float(i) - 2.5 for i in range(n)]
    if name == "uint8":
        return list(range(250, 250 - n, -1))
    return [i - 3 for i in range(n)]


def one_value(name):
    return {"bool": False}.get(name, 7)


def pith_dtype(name):
    return getattr(pith, name)


def moving_strides(shape, strides):
    """The strides that matter: those of dims of size > 1 (NumPy's buffers normalize the
    others), none for an empty array."""
    if 0 in shape:
        return ()
    return tuple(s for n, s in zip(shape, strides) if n > 1)


def flatten(nested):
    if not isinstance(nested, list):
        return [nested]
    return [x for item in nested for x in flatten(item)]


# ---- Tensor.numpy() ----

@pytest.mark.parametrize("name", list(NUMPY_DTYPES))
def test_numpy_has_the_matching_dtype_and_values(name):
    t = pith.tensor(values_for(name), dtype=pith_dtype(name)).view(2, 3)
    a = t.numpy()
    assert a.dtype == np.dtype(NUMPY_DTYPES[name])
    assert a.shape == (2, 3)
    assert a.tolist() == t.tolist()


@pytest.mark.parametrize("name", list(NUMPY_DTYPES))
def test_numpy_shares_memory_both_ways(name):
    t = pith.tensor(values_for(name), dtype=pith_dtype(name))
    a = t.numpy()
    assert a.ctypes.data == t.data_ptr()
    a[1] = one_value(name)
    assert t[1].item() == one_value(name)
    t[2] = one_value(name)
    assert a[2] == one_value(name)


def test_numpy_keeps_the_strides_of_a_view():
    t = pith.arange(24, dtype=pith.int32).view(2, 3, 4)
    view = t.permute(2, 0, 1)[1:, :, ::2]
    a = view.numpy()
    assert a.strides == tuple(4 * s for s in view.stride())
    assert a.tolist() == view.tolist()
    assert a.ctypes.data == view.data_ptr()


def test_numpy_of_zero_dim_and_empty_tensors():
    assert pith.tensor(3.5).numpy().shape == ()
    assert pith.tensor(3.5).numpy()[()] == 3.5
    empty = pith.zeros(0, 3).numpy()
    assert empty.shape == (0, 3) and empty.dtype == np.float32


def test_numpy_of_bfloat16_raises_type_error():
    t = pith.ones(2, dtype=pith.bfloat16)
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        t.numpy()
    with pytest.raises(TypeError, match="Got unsupported ScalarType BFloat16"):
        np.asarray(t)


def test_numpy_force_is_keyword_only_and_still_shares():
    t = pith.ones(3)
    assert t.numpy(force=True).ctypes.data == t.data_ptr()
    with pytest.raises(TypeError):
        t.numpy(True)


def test_numpy_array_outlives_the_tensor():
    t = pith.arange(5, dtype=pith.int64)
    a = t.numpy()
    del t
    gc.collect()
    assert a.tolist() == [0, 1, 2, 3, 4]


def test_np_asarray_shares_memory():
    t = pith.arange(4, dtype=pith.float32)
    a = np.asarray(t)
    a[0] = 9
    assert t[0].item() == 9.0


def test_array_protocol_converts_dtype():
    t = pith.arange(3, dtype=pith.int32)
    a = t.__array__(np.float64)
    assert a.dtype == np.float64 and a.tolist() == [0.0, 1.0, 2.0]
    assert np.array(t, dtype=np.float64).tolist() == [0.0, 1.0, 2.0]


def test_array_protocol_copy_true_copies():
    t = pith.zeros(3)
    a = t.__array__(copy=True)
    a[0] = 1
    assert t[0].item() == 0.0


def test_array_protocol_copy_false_shares_or_raises():
    t = pith.zeros(3)
    t.__array__(copy=False)[0] = 1
    assert t[0].item() == 1.0
    assert t.__array__(np.float32, copy=False).ctypes.data == t.data_ptr()
    with pytest.raises(ValueError, match="Unable to avoid copy"):
        t.__array__(np.float64, copy=False)


def test_numpy_ufuncs_accept_tensors():
    t = pith.tensor([1.0, 2.0])
    assert np.add(t, 1).tolist() == [2.0, 3.0]


# ---- buffer protocol ----

@pytest.mark.parametrize("name", list(NUMPY_DTYPES))
def test_memoryview_describes_every_dtype(name):
    t = pith.tensor(values_for(name), dtype=pith_dtype(name)).view(2, 3)
    m = memoryview(t)
    assert m.format == STRUCT_FORMATS[name]
    assert m.itemsize == t.element_size()
    assert m.shape == (2, 3)
    assert m.strides == (3 * m.itemsize, m.itemsize)
    assert not m.readonly
    assert np.asarray(m).tolist() == t.tolist()


def test_memoryview_of_a_strided_view():
    t = pith.arange(12, dtype=pith.int16).view(3, 4)
    view = t.T[::2]
    m = memoryview(view)
    assert m.shape == (2, 3)
    assert m.strides == tuple(2 * s for s in view.stride())
    assert not m.c_contiguous
    assert m.tolist() == view.tolist()


def test_memoryview_is_writable():
    t = pith.zeros(4, dtype=pith.int32)
    m = memoryview(t)
    m[2] = 5
    assert t.tolist() == [0, 0, 5, 0]


def test_memoryview_of_zero_dim_tensor():
    m = memoryview(pith.tensor(7, dtype=pith.int64))
    assert m.ndim == 0 and m.shape == () and m.tolist() == 7


def test_bytes_of_a_tensor_are_its_values():
    t = pith.tensor([1.5, -2.0, 3.25], dtype=pith.float64)
    assert bytes(t) == np.array([1.5, -2.0, 3.25]).tobytes()
    strided = pith.arange(6, dtype=pith.int32)[::2]
    assert bytes(strided) == np.array([0, 2, 4], dtype=np.int32).tobytes()


def test_buffer_without_strides_of_a_strided_view_raises():
    view = pith.arange(6, dtype=pith.float32)[::2]
    with pytest.raises(BufferError, match="C-contiguous"):
        np.frombuffer(view, dtype=np.float32)


def test_buffer_of_bfloat16_raises_buffer_error():
    with pytest.raises(BufferError, match="bfloat16"):
        memoryview(pith.ones(2, dtype=pith.bfloat16))


def test_memoryview_keeps_the_tensor_alive():
    t = pith.arange(3, dtype=pith.int64)
    m = memoryview(t)
    del t
    gc.collect()
    assert m.tolist() == [0, 1, 2]
    m.release()


# ---- pith.from_numpy ----

@pytest.mark.parametrize("name", list(NUMPY_DTYPES))
def test_from_numpy_shares_memory_both_ways(name):
    a = np.array(values_for(name), dtype=NUMPY_DTYPES[name])
    t = pith.from_numpy(a)
    assert t.dtype == pith_dtype(name)
    assert t.data_ptr() == a.ctypes.data
    assert t.tolist() == a.tolist()
    a[0] = one_value(name)
    assert t[0].item() == one_value(name)
    t[1] = one_value(name)
    assert a[1] == one_value(name)


@pytest.mark.parametrize("make", [
    lambda: np.arange(24.0).reshape(4, 6)[1:, ::2],
    lambda: np.arange(24.0).reshape(4, 6).T,
    lambda: np.asfortranarray(np.arange(6.0).reshape(2, 3)),
    lambda: np.arange(24.0).reshape(2, 3, 4).transpose(2, 0, 1)[::3],
    lambda: np.array(4.5),
    lambda: np.zeros((0, 3)),
    lambda: np.zeros((3, 0, 2))[:, :, ::-1],
], ids=["sliced", "transposed", "fortran", "permuted", "zero_dim", "empty", "empty_reversed"])
def test_from_numpy_keeps_shape_strides_and_values(make):
    a = make()
    t = pith.from_numpy(a)
    assert t.shape == a.shape
    assert t.tolist() == a.tolist()
    if a.size > 1:
        assert tuple(s * a.itemsize for s in t.stride()) == a.strides
        assert t.data_ptr() == a.ctypes.data


def test_from_numpy_of_a_broadcast_array_has_zero_strides():
    a = np.lib.stride_tricks.as_strided(np.arange(3.0), shape=(2, 3), strides=(0, 8))
    t = pith.from_numpy(a)
    assert t.stride() == (0, 1)
    assert t.tolist() == [[0.0, 1.0, 2.0], [0.0, 1.0, 2.0]]


def test_from_numpy_outlives_the_array():
    a = np.arange(6, dtype=np.int32)
    t = pith.from_numpy(a)
    del a
    gc.collect()
    assert t.tolist() == [0, 1, 2, 3, 4, 5]


def test_from_numpy_rejects_negative_strides():
    with pytest.raises(ValueError, match="At least one stride in the given numpy array is "
                                         "negative"):
        pith.from_numpy(np.arange(4.0)[::-1])


@pytest.mark.parametrize("dtype,name", [
    (np.complex128, "numpy.complex128"), (np.object_, "numpy.object_"),
    ("datetime64[s]", "numpy.datetime64"), (np.uint16, "numpy.uint16"),
    (np.uint64, "numpy.uint64"), ("U3", "numpy.str_"), (np.longdouble, "numpy.longdouble"),
])
def test_from_numpy_rejects_unsupported_dtypes(dtype, name):
    with pytest.raises(TypeError, match=f"can't convert np.ndarray of type {name}"):
        pith.from_numpy(np.zeros(3, dtype=dtype))


def test_from_numpy_rejects_non_arrays():
    with pytest.raises(TypeError, match=r"expected np.ndarray \(got list\)"):
        pith.from_numpy([1, 2])


def test_from_numpy_rejects_other_byte_order():
    with pytest.raises(ValueError, match="byte order"):
        pith.from_numpy(np.zeros(3, dtype=">f4"))


def test_from_numpy_rejects_unaligned_data():
    a = np.frombuffer(bytearray(17), dtype=np.float64, count=2, offset=1)
    with pytest.raises(ValueError, match="aligned"):
        pith.from_numpy(a)


def test_from_numpy_of_a_read_only_array_warns_and_shares():
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match="not writable"):
        t = pith.from_numpy(a)
    assert t.data_ptr() == a.ctypes.data


def test_from_numpy_locks_the_array_size():
    a = np.arange(4.0)
    t = pith.from_numpy(a)
    with pytest.raises((ValueError, BufferError)):
        a.resize(100)
    del t


def test_from_numpy_leaves_no_reference_behind():
    a = np.arange(4.0)
    before = sys.getrefcount(a)
    for _ in range(1000):
        pith.from_numpy(a).numpy()
    gc.collect()
    assert sys.getrefcount(a) == before


# ---- pith.tensor with arrays, buffers and scalars ----

@pytest.mark.parametrize("name", list(NUMPY_DTYPES))
def test_tensor_of_numpy_array_copies_with_its_dtype(name):
    a = np.array(values_for(name), dtype=NUMPY_DTYPES[name])
    t = pith.tensor(a)
    assert t.dtype == pith_dtype(name)
    assert t.tolist() == a.tolist()
    assert t.data_ptr() != a.ctypes.data
    a[0] = one_value(name)
    assert t[0].item() == values_for(name)[0]


def test_tensor_of_numpy_array_with_dtype_converts():
    t = pith.tensor(np.array([1.7, -2.2]), dtype=pith.int32)
    assert t.dtype == pith.int32 and t.tolist() == [1, -2]


@pytest.mark.parametrize("make", [
    lambda: np.arange(12.0).reshape(3, 4)[::-1, ::-2],
    lambda: np.arange(12, dtype=np.int16).reshape(3, 4).T,
    lambda: np.frombuffer(bytearray(33), dtype=np.float64, count=4, offset=1),
    lambda: np.zeros((2, 0)),
], ids=["negative", "transposed", "unaligned", "empty"])
def test_tensor_of_any_layout_copies_the_values(make):
    a = make()
    t = pith.tensor(a)
    assert t.tolist() == a.tolist()
    assert t.is_contiguous()


def test_tensor_of_large_arrays_copies_every_layout():
    # past PITH_GIL_RELEASE_NUMEL the copies run without the GIL
    a = np.arange(200_000, dtype=np.int32).reshape(400, 500)
    for view in (a, a[::-1, ::3], a.T):
        t = pith.tensor(view)
        np.testing.assert_array_equal(t.numpy(), view)
        assert pith.tensor(view, dtype=pith.float64).tolist() == view.astype(float).tolist()
    assert pith.as_tensor(pith.from_numpy(a), dtype=pith.int64).tolist() == a.tolist()


def test_tensor_of_numpy_scalars_keeps_their_dtype():
    assert pith.tensor(np.float64(2.5)).dtype == pith.float64
    assert pith.tensor(np.float64(2.5)).shape == ()
    assert pith.tensor(np.int32(3)).dtype == pith.int32
    assert pith.tensor(np.bool_(True)).tolist() is True


@pytest.mark.parametrize("data,expected", [
    (lambda: [np.float32(1.5), np.float32(2.0)], "float32"),
    (lambda: [np.int32(1), np.int32(2)], "int32"),
    (lambda: [np.int32(1), 2.5], "float32"),
    (lambda: [np.float64(1.5), 2], "float64"),
    (lambda: [np.int16(1), np.int8(2)], "int16"),
    (lambda: [True, np.uint8(3)], "uint8"),
])
def test_tensor_of_lists_of_numpy_scalars_promotes_like_torch(data, expected):
    assert pith.tensor(data()).dtype == pith_dtype(expected)


@pytest.mark.parametrize("data,expected", [
    (lambda: [pith.tensor(1, dtype=pith.int32), pith.tensor(2, dtype=pith.int32)], "int32"),
    (lambda: [pith.tensor(1, dtype=pith.int32), 2.5], "float32"),
    (lambda: [pith.tensor(1.5, dtype=pith.float64), 2], "float64"),
    (lambda: [[pith.tensor(True)], [pith.tensor(False)]], "bool"),
])
def test_tensor_of_lists_of_zero_dim_tensors_promotes_like_torch(data, expected):
    t = pith.tensor(data())
    assert t.dtype == pith_dtype(expected)
    assert t.tolist() == [x.item() if isinstance(x, pith.Tensor) else
                          [y.item() for y in x] if isinstance(x, list) else x for x in data()]


def test_tensor_of_lists_with_many_element_tensors_raises():
    with pytest.raises(ValueError, match="only one element tensors"):
        pith.tensor([pith.ones(2), pith.ones(2)])


def test_tensor_of_ints_beyond_int64_needs_a_float_dtype():
    with pytest.raises(ValueError, match="Overflow when unpacking long long"):
        pith.tensor([1, 2**63])
    assert pith.tensor([1, 2**64], dtype=pith.float64).tolist() == [1.0, 2.0**64]


@pytest.mark.parametrize("data,error,match", [
    ([1, [2]], TypeError, "cannot be interpreted as a number"),
    ([[1], 2], TypeError, "expected sequence of length 1 at dim 1"),
    ([[1, 2], [3]], ValueError, "expected sequence of length 2 at dim 1"),
    ([None], RuntimeError, "Could not infer dtype of NoneType"),
    ([1, "a"], TypeError, "new\\(\\): invalid data type 'str'"),
])
def test_tensor_of_ragged_or_untyped_lists_raises_like_torch(data, error, match):
    with pytest.raises(error, match=match):
        pith.tensor(data)


def test_tensor_of_lists_of_scalars_matches_torch():
    torch = pytest.importorskip("torch")
    cases = [[np.int32(1), 2], [np.float16(1.5), np.int64(2)], [np.float64(1.0), True],
             [np.bool_(True), np.bool_(False)]]
    for data in cases:
        assert str(pith.tensor(data).dtype) == str(torch.tensor(data).dtype).replace("torch",
                                                                                    "pith")
        assert pith.tensor(data).tolist() == torch.tensor(data).tolist()


@pytest.mark.parametrize("make,dtype,values", [
    (lambda: bytearray(b"\x01\xff"), "uint8", [1, 255]),
    (lambda: b"\x01\x02", "uint8", [1, 2]),
    (lambda: array.array("f", [1.5, 2.5]), "float32", [1.5, 2.5]),
    (lambda: array.array("d", [1.5]), "float64", [1.5]),
    (lambda: array.array("i", [1, -2]), "int32", [1, -2]),
    (lambda: array.array("q", [1, -2]), "int64", [1, -2]),
    (lambda: memoryview(np.arange(6, dtype=np.int16).reshape(2, 3)[:, ::2]), "int16",
     [[0, 2], [3, 5]]),
])
def test_tensor_of_buffers_uses_their_format(make, dtype, values):
    t = pith.tensor(make())
    assert t.dtype == pith_dtype(dtype)
    assert t.tolist() == values


def test_tensor_of_a_buffer_copies():
    buf = bytearray(b"\x01\x02")
    t = pith.tensor(buf)
    buf[0] = 9
    assert t.tolist() == [1, 2]


def test_tensor_of_unsupported_buffer_format_raises():
    with pytest.raises(TypeError, match="format"):
        pith.tensor(array.array("H", [1, 2]))


def test_tensor_of_torch_tensor_copies():
    torch = pytest.importorskip("torch")
    x = torch.arange(4, dtype=torch.int16)
    t = pith.tensor(x)
    assert t.dtype == pith.int16 and t.tolist() == [0, 1, 2, 3]
    x[0] = 9
    assert t[0].item() == 0


# ---- pith.as_tensor ----

def test_as_tensor_of_a_tensor_is_the_tensor():
    t = pith.ones(2)
    assert pith.as_tensor(t) is t
    assert pith.as_tensor(t, dtype=pith.float32) is t
    converted = pith.as_tensor(t, dtype=pith.int64)
    assert converted.dtype == pith.int64 and converted.tolist() == [1, 1]


@pytest.mark.parametrize("name", list(NUMPY_DTYPES))
def test_as_tensor_shares_numpy_memory(name):
    a = np.array(values_for(name), dtype=NUMPY_DTYPES[name])
    t = pith.as_tensor(a)
    assert t.data_ptr() == a.ctypes.data
    a[0] = one_value(name)
    assert t[0].item() == one_value(name)


def test_as_tensor_copies_when_the_dtype_differs():
    a = np.arange(3, dtype=np.int32)
    t = pith.as_tensor(a, dtype=pith.float64)
    assert t.dtype == pith.float64 and t.tolist() == [0.0, 1.0, 2.0]
    a[0] = 5
    assert t[0].item() == 0.0


def test_as_tensor_of_the_same_dtype_shares():
    a = np.arange(3, dtype=np.int32)
    assert pith.as_tensor(a, dtype=pith.int32).data_ptr() == a.ctypes.data


def test_as_tensor_copies_arrays_it_cannot_wrap():
    a = np.arange(4.0)[::-1]
    t = pith.as_tensor(a)
    assert t.tolist() == [3.0, 2.0, 1.0, 0.0]


def test_as_tensor_shares_a_writable_buffer_and_copies_a_read_only_one():
    buf = bytearray(b"\x01\x02")
    shared = pith.as_tensor(buf)
    buf[0] = 7
    assert shared.tolist() == [7, 2]
    data = b"\x01\x02"
    copied = pith.as_tensor(data)
    copied[0] = 9
    assert data == b"\x01\x02"


def test_as_tensor_copies_a_read_only_array_without_warning():
    a = np.arange(3.0)
    a.flags.writeable = False
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = pith.as_tensor(a)
    assert t.data_ptr() != a.ctypes.data and t.tolist() == [0.0, 1.0, 2.0]


def test_as_tensor_of_lists_copies_like_tensor():
    assert pith.as_tensor([1, 2]).dtype == pith.int64
    assert pith.as_tensor([1.5], dtype=pith.float64).tolist() == [1.5]


def test_as_tensor_shares_torch_memory():
    torch = pytest.importorskip("torch")
    x = torch.arange(3.0)
    t = pith.as_tensor(x)
    assert t.data_ptr() == x.data_ptr()
    x[0] = 5
    assert t[0].item() == 5.0


# ---- pith.frombuffer ----

@pytest.mark.parametrize("name", ALL_DTYPES)
def test_frombuffer_round_trips_tensor_bytes(name):
    t = pith.tensor(values_for(name), dtype=pith_dtype(name)).view(2, 3)
    back = pith.frombuffer(bytearray(pith._C._tensor_bytes(t)), dtype=t.dtype)
    assert back.dtype == t.dtype
    assert back.view(2, 3).tolist() == t.tolist()


@pytest.mark.parametrize("name", list(NUMPY_DTYPES))
def test_tensor_bytes_are_numpy_bytes(name):
    t = pith.tensor(values_for(name, 12), dtype=pith_dtype(name)).view(3, 4).T[::2]
    expected = np.array(values_for(name, 12), dtype=NUMPY_DTYPES[name]).reshape(3, 4).T[::2]
    assert pith._C._tensor_bytes(t) == expected.tobytes()


def test_tensor_bytes_of_bfloat16_are_torch_bytes():
    torch = pytest.importorskip("torch")
    values = [1.0, -2.5, 3.140625]
    t = pith.tensor(values, dtype=pith.bfloat16)
    x = torch.tensor(values, dtype=torch.bfloat16)
    assert pith._C._tensor_bytes(t) == x.view(torch.int16).numpy().tobytes()


def test_tensor_bytes_of_an_empty_tensor():
    assert pith._C._tensor_bytes(pith.zeros(0, 2)) == b""


def test_frombuffer_shares_the_bytes():
    buf = bytearray(8)
    t = pith.frombuffer(buf, dtype=pith.int32)
    t[1] = 7
    assert buf == bytearray(np.array([0, 7], dtype=np.int32).tobytes())
    buf[0] = 3
    assert t[0].item() == 3


def test_frombuffer_count_and_offset():
    buf = bytearray(np.arange(5, dtype=np.int16).tobytes())
    assert pith.frombuffer(buf, dtype=pith.int16, count=2, offset=4).tolist() == [2, 3]
    assert pith.frombuffer(buf, dtype=pith.int16, offset=6).tolist() == [3, 4]


def test_frombuffer_keeps_the_buffer_alive_and_locked():
    buf = bytearray(np.arange(3, dtype=np.int64).tobytes())
    t = pith.frombuffer(buf, dtype=pith.int64)
    with pytest.raises(BufferError):
        buf.extend(b"\x00" * 64)
    del buf
    gc.collect()
    assert t.tolist() == [0, 1, 2]


def test_frombuffer_at_an_unaligned_offset_raises():
    # PyTorch accepts any offset; pith tensors need aligned elements.
    with pytest.raises(ValueError, match="aligned"):
        pith.frombuffer(bytearray(12), dtype=pith.float32, offset=1, count=2)


def test_frombuffer_of_read_only_bytes_warns():
    with pytest.warns(UserWarning, match="not writable"):
        t = pith.frombuffer(b"\x01\x02", dtype=pith.uint8)
    assert t.tolist() == [1, 2]


@pytest.mark.parametrize("call,error,match", [
    (lambda: pith.frombuffer(bytearray(7), dtype=pith.float32), ValueError,
     r"buffer length \(7 bytes\) after offset \(0 bytes\) must be a multiple of element size "
     r"\(4\)"),
    (lambda: pith.frombuffer(bytearray(8), dtype=pith.float32, count=3), ValueError,
     r"requested buffer length \(3 \* 4 bytes\) after offset \(0 bytes\) must not be greater "
     r"than actual buffer length \(8 bytes\)"),
    (lambda: pith.frombuffer(bytearray(8), dtype=pith.float32, offset=9), ValueError,
     r"offset \(9 bytes\) must be non-negative and no greater than buffer length \(8 bytes\) "
     r"minus 1"),
    (lambda: pith.frombuffer(bytearray(0), dtype=pith.float32), ValueError,
     r"both buffer length \(0\) and count \(-1\) must not be 0"),
    (lambda: pith.frombuffer(bytearray(8), dtype=pith.float32, count=0), ValueError,
     r"both buffer length \(8\) and count \(0\) must not be 0"),
    (lambda: pith.frombuffer([1, 2], dtype=pith.float32), ValueError,
     "object does not implement Python buffer protocol"),
    (lambda: pith.frombuffer(np.zeros((2, 3))[:, ::2], dtype=pith.float32), RuntimeError,
     "could not retrieve buffer from object"),
    (lambda: pith.frombuffer(bytearray(8)), TypeError, "dtype"),
    (lambda: pith.frombuffer(bytearray(8), dtype=pith.float32, requires_grad=True),
     NotImplementedError, "autograd"),
])
def test_frombuffer_errors(call, error, match):
    with pytest.raises(error, match=match):
        call()


def test_frombuffer_errors_match_torch():
    torch = pytest.importorskip("torch")
    for buf, kwargs in [(bytearray(7), {}), (bytearray(8), {"count": 3}),
                        (bytearray(8), {"offset": 9}), (bytearray(0), {})]:
        with pytest.raises(ValueError) as theirs:
            torch.frombuffer(buf, dtype=torch.float32, **kwargs)
        with pytest.raises(ValueError) as ours:
            pith.frombuffer(buf, dtype=pith.float32, **kwargs)
        assert str(ours.value) == str(theirs.value)


# ---- DLPack: the producer side ----

class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p), ("flags", ctypes.c_uint64),
                ("dl_tensor", DLTensor)]


def capsule_struct(capsule, name, struct):
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    return struct.from_address(get(capsule, name.encode()))


def test_dlpack_device_is_cpu():
    assert pith.ones(2).__dlpack_device__() == (1, 0)


@pytest.mark.parametrize("max_version,name", [
    (None, "dltensor"), ((0, 8), "dltensor"), ((1, 0), "dltensor_versioned"),
    ((1, 3), "dltensor_versioned"), ((2, 0), "dltensor_versioned"),
])
def test_dlpack_capsule_kind_follows_max_version(max_version, name):
    capsule = pith.ones(2).__dlpack__(max_version=max_version)
    assert f'capsule object "{name}"' in repr(capsule)


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_versioned_capsule_describes_the_tensor(name):
    t = pith.zeros(24, dtype=pith_dtype(name)).view(2, 3, 4).permute(2, 0, 1)[:, :, ::2]
    capsule = t.__dlpack__(max_version=(1, 0))
    managed = capsule_struct(capsule, "dltensor_versioned", DLManagedTensorVersioned)
    assert (managed.version.major, managed.version.minor) == (1, 0)
    assert managed.flags == 0
    dl = managed.dl_tensor
    assert dl.data + dl.byte_offset == t.data_ptr()
    assert (dl.device.device_type, dl.device.device_id) == (1, 0)
    assert (dl.dtype.code, dl.dtype.bits, dl.dtype.lanes) == DLPACK_TYPES[name] + (1,)
    assert [dl.shape[i] for i in range(dl.ndim)] == list(t.shape)
    assert [dl.strides[i] for i in range(dl.ndim)] == list(t.stride())


@pytest.mark.parametrize("shape", [(), (3,), (2, 3), (0, 4)])
def test_legacy_capsule_always_sets_strides(shape):
    t = pith.zeros(shape)
    dl = capsule_struct(t.__dlpack__(), "dltensor", DLManagedTensor).dl_tensor
    assert dl.ndim == len(shape)
    assert bool(dl.strides)
    assert [dl.strides[i] for i in range(dl.ndim)] == list(t.stride())


def test_dlpack_copy_true_exports_a_copy_flagged_as_copied():
    t = pith.zeros(3)
    capsule = t.__dlpack__(max_version=(1, 0), copy=True)
    managed = capsule_struct(capsule, "dltensor_versioned", DLManagedTensorVersioned)
    assert managed.flags == 2  # DLPACK_FLAG_BITMASK_IS_COPIED
    assert managed.dl_tensor.data != t.data_ptr()
    imported = pith.from_dlpack(capsule)
    imported[0] = 1
    assert t[0].item() == 0.0


def test_unconsumed_capsule_releases_the_tensor():
    before = pith._C._live_tensors()
    t = pith.ones(3)
    capsules = [t.__dlpack__(), t.__dlpack__(max_version=(1, 0))]
    del t
    gc.collect()
    assert pith._C._live_tensors() == before + 1  # the capsules hold it
    del capsules
    gc.collect()
    assert pith._C._live_tensors() == before


@pytest.mark.parametrize("kwargs,error,match", [
    ({"stream": 1}, AssertionError, "stream should be None on cpu"),
    ({"stream": "x"}, TypeError, "stream must be"),
    ({"dl_device": (2, 0)}, BufferError, "unsupported device requested"),
    ({"dl_device": "cpu"}, TypeError, "dl_device must be a tuple"),
    ({"max_version": 1}, TypeError, "max_version must be a tuple"),
])
def test_dlpack_argument_errors(kwargs, error, match):
    with pytest.raises(error, match=match):
        pith.ones(2).__dlpack__(**kwargs)


def test_dlpack_accepts_cpu_stream_and_device():
    t = pith.ones(2)
    assert t.__dlpack__(stream=None, dl_device=(1, 0)) is not None
    assert t.__dlpack__(stream=-1) is not None


def test_dlpack_arguments_are_keyword_only():
    with pytest.raises(TypeError):
        pith.ones(2).__dlpack__(None)


# A C consumer keeps the name it gives a capsule alive; so does this module.
USED_LEGACY_NAME = ctypes.create_string_buffer(b"used_dltensor")


def consume_by_hand(capsule):
    """Marks a legacy capsule used, as a C consumer does; returns its managed tensor."""
    set_name = ctypes.pythonapi.PyCapsule_SetName
    set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]
    managed = capsule_struct(capsule, "dltensor", DLManagedTensor)
    assert set_name(capsule, USED_LEGACY_NAME) == 0
    return managed


@pytest.mark.parametrize("holds_gil", [True, False])
def test_imported_memory_is_dropped_under_its_interpreters_gil_from_any_thread(holds_gil):
    # Note [Imported memory]: the last reference to NumPy memory dies in a DLPack deleter.
    # Called with the GIL or without it (ctypes releases the GIL around CFUNCTYPE calls),
    # the Py_buffer (and its reference to the array) is released: without the GIL, through
    # the interpreter table, which takes this interpreter's GIL on a temporary thread state
    # (Note [Entering an interpreter from C]).
    a = np.arange(3.0)
    before = sys.getrefcount(a)
    t = pith.from_numpy(a)
    capsule = t.__dlpack__()
    managed = consume_by_hand(capsule)
    del t, capsule
    gc.collect()
    assert sys.getrefcount(a) == before + 1
    prototype = ctypes.PYFUNCTYPE if holds_gil else ctypes.CFUNCTYPE
    prototype(None, ctypes.c_void_p)(managed.deleter)(ctypes.addressof(managed))
    gc.collect()
    assert sys.getrefcount(a) == before


# ---- DLPack with NumPy ----

@pytest.mark.parametrize("name", list(NUMPY_DTYPES))
def test_numpy_from_dlpack_shares_memory_both_ways(name):
    t = pith.tensor(values_for(name), dtype=pith_dtype(name))
    a = np.from_dlpack(t)
    assert a.dtype == np.dtype(NUMPY_DTYPES[name])
    assert a.ctypes.data == t.data_ptr()
    a[0] = one_value(name)
    assert t[0].item() == one_value(name)
    t[1] = one_value(name)
    assert a[1] == one_value(name)


@pytest.mark.parametrize("name", list(NUMPY_DTYPES))
def test_from_dlpack_of_numpy_shares_memory_both_ways(name):
    a = np.array(values_for(name), dtype=NUMPY_DTYPES[name])
    t = pith.from_dlpack(a)
    assert t.dtype == pith_dtype(name)
    assert t.data_ptr() == a.ctypes.data
    a[0] = one_value(name)
    assert t[0].item() == one_value(name)
    t[1] = one_value(name)
    assert a[1] == one_value(name)


def test_numpy_from_dlpack_keeps_strides_and_outlives_the_tensor():
    t = pith.arange(12, dtype=pith.int64).view(3, 4).T[::2]
    expected = t.tolist()
    a = np.from_dlpack(t)
    assert a.strides == tuple(8 * s for s in t.stride())
    del t
    gc.collect()
    assert a.tolist() == expected


def test_from_dlpack_of_numpy_outlives_the_array():
    a = np.arange(12.0).reshape(3, 4)[:, 1::2]
    t = pith.from_dlpack(a)
    del a
    gc.collect()
    assert t.tolist() == [[1.0, 3.0], [5.0, 7.0], [9.0, 11.0]]


@pytest.mark.parametrize("shape", [(), (0,), (2, 0, 3)])
def test_dlpack_of_zero_dim_and_empty_with_numpy(shape):
    t = pith.zeros(shape, dtype=pith.float64)
    assert np.from_dlpack(t).shape == shape
    assert pith.from_dlpack(np.zeros(shape)).shape == shape


def test_from_dlpack_of_a_read_only_numpy_array_warns():
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match="read-only"):
        t = pith.from_dlpack(a)
    assert t.data_ptr() == a.ctypes.data


def test_from_dlpack_rejects_negative_strides():
    with pytest.raises(ValueError, match="negative strides"):
        pith.from_dlpack(np.arange(4.0)[::-1])


def test_from_dlpack_rejects_unsupported_dtypes():
    with pytest.raises(BufferError, match="unsupported DLPack dtype"):
        pith.from_dlpack(np.zeros(2, dtype=np.complex64))


def test_from_dlpack_rejects_objects_without_dlpack():
    with pytest.raises(TypeError, match="__dlpack__"):
        pith.from_dlpack([1, 2])


def test_from_dlpack_of_a_used_capsule_raises():
    capsule = np.arange(3.0).__dlpack__()
    pith.from_dlpack(capsule)
    assert 'capsule object "used_dltensor"' in repr(capsule)
    with pytest.raises(RuntimeError, match="can be consumed only once"):
        pith.from_dlpack(capsule)


def test_from_dlpack_of_own_capsules_versioned_and_legacy():
    t = pith.arange(3, dtype=pith.int32)
    for capsule in (t.__dlpack__(), t.__dlpack__(max_version=(1, 0))):
        shared = pith.from_dlpack(capsule)
        assert shared.data_ptr() == t.data_ptr()
        assert "used_dltensor" in repr(capsule)


def test_from_dlpack_falls_back_to_legacy_producers():
    class LegacyProducer:
        def __init__(self, array):
            self.array = array
            self.calls = []

        def __dlpack__(self, stream=None):
            self.calls.append(stream)
            return self.array.__dlpack__(stream=stream)

        def __dlpack_device__(self):
            return self.array.__dlpack_device__()

    producer = LegacyProducer(np.arange(3.0))
    t = pith.from_dlpack(producer)
    assert t.data_ptr() == producer.array.ctypes.data
    assert producer.calls == [None]


def test_from_dlpack_rejects_other_devices():
    class Gpu:
        def __dlpack__(self, **kwargs):
            raise AssertionError("must not be called")

        def __dlpack_device__(self):
            return (2, 0)

    with pytest.raises(BufferError, match="only CPU memory"):
        pith.from_dlpack(Gpu())


def test_from_dlpack_of_a_pith_tensor_shares():
    t = pith.ones(3)
    shared = pith.from_dlpack(t)
    assert shared is not t and shared.data_ptr() == t.data_ptr()


def test_from_dlpack_copy_true_copies():
    a = np.zeros(3)
    t = pith.from_dlpack(a, copy=True)
    a[0] = 1
    assert t[0].item() == 0.0


# ---- DLPack with PyTorch ----

@pytest.mark.parametrize("name", ALL_DTYPES)
def test_torch_from_dlpack_shares_memory_both_ways(name):
    torch = pytest.importorskip("torch")
    t = pith.tensor(values_for(name), dtype=pith_dtype(name))
    x = torch.from_dlpack(t)
    assert x.dtype == getattr(torch, name)
    assert x.data_ptr() == t.data_ptr()
    assert x.tolist() == t.tolist()
    x[0] = one_value(name)
    assert t[0].item() == one_value(name)
    t[1] = one_value(name)
    assert x[1].item() == one_value(name)


@pytest.mark.parametrize("name", ALL_DTYPES)
def test_from_dlpack_of_torch_shares_memory_both_ways(name):
    torch = pytest.importorskip("torch")
    x = torch.tensor(values_for(name), dtype=getattr(torch, name))
    t = pith.from_dlpack(x)
    assert t.dtype == pith_dtype(name)
    assert t.data_ptr() == x.data_ptr()
    x[0] = one_value(name)
    assert t[0].item() == one_value(name)
    t[1] = one_value(name)
    assert x[1].item() == one_value(name)


@pytest.mark.parametrize("versioned", [False, True])
def test_capsules_cross_with_torch(versioned):
    torch = pytest.importorskip("torch")
    max_version = (1, 0) if versioned else None
    t = pith.arange(6, dtype=pith.float32).view(2, 3).T
    x = torch.from_dlpack(t.__dlpack__(max_version=max_version))
    assert x.stride() == t.stride() and x.tolist() == t.tolist()
    x[0, 0] = 42
    assert t[0, 0].item() == 42.0
    y = torch.arange(6.0).reshape(2, 3)[:, ::2]
    p = pith.from_dlpack(y.__dlpack__(max_version=max_version))
    assert p.stride() == y.stride() and p.tolist() == y.tolist()
    p[1, 1] = -1
    assert y[1, 1].item() == -1.0


def test_torch_and_pith_outlive_each_other():
    torch = pytest.importorskip("torch")
    t = pith.arange(4, dtype=pith.int64)
    x = torch.from_dlpack(t)
    del t
    gc.collect()
    assert x.tolist() == [0, 1, 2, 3]
    y = torch.arange(4) * 2
    p = pith.from_dlpack(y)
    del y
    gc.collect()
    assert p.tolist() == [0, 2, 4, 6]


def test_dlpack_round_trip_through_torch_releases_everything():
    torch = pytest.importorskip("torch")
    before = pith._C._live_tensors()
    for _ in range(200):
        p = pith.from_dlpack(torch.from_dlpack(pith.ones(4)))
        assert p.tolist() == [1.0] * 4
    del p
    gc.collect()
    assert pith._C._live_tensors() == before


# ---- properties ----

@st.composite
def strided_arrays(draw):
    dtype = draw(st.sampled_from(list(NUMPY_DTYPES.values())))
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=4, min_side=0, max_side=5))
    base = draw(hnp.arrays(dtype, shape))
    index = tuple(slice(draw(st.integers(0, 2)), None, draw(st.integers(1, 3)))
                  for _ in shape)
    view = base[index] if shape else base  # base[()] would be a NumPy scalar
    if view.ndim > 1 and draw(st.booleans()):
        view = view.transpose(draw(st.permutations(range(view.ndim))))
    return view


@settings(max_examples=80, deadline=None)
@given(strided_arrays())
def test_property_numpy_round_trip_shares_and_keeps_values(a):
    t = pith.from_numpy(a)
    back = t.numpy()
    np.testing.assert_array_equal(back, a)
    assert back.dtype == a.dtype and back.shape == a.shape
    if a.size:
        assert back.ctypes.data == a.ctypes.data
    assert moving_strides(back.shape, back.strides) == moving_strides(a.shape, a.strides)


@settings(max_examples=80, deadline=None)
@given(strided_arrays(), st.booleans())
def test_property_tensor_copies_any_layout(a, reverse):
    if reverse and a.ndim:
        a = a[::-1]
    t = pith.tensor(a)
    assert t.is_contiguous()
    np.testing.assert_array_equal(t.numpy(), a)
    assert pith._C._tensor_bytes(t) == np.ascontiguousarray(a).tobytes()


@settings(max_examples=80, deadline=None)
@given(strided_arrays())
def test_property_dlpack_round_trip_with_numpy(a):
    t = pith.from_dlpack(a)
    np.testing.assert_array_equal(np.from_dlpack(t), a)
    np.testing.assert_array_equal(np.asarray(memoryview(t)), a)


@settings(max_examples=50, deadline=None)
@given(strided_arrays())
def test_property_dlpack_with_torch_matches_from_numpy(a):
    torch = pytest.importorskip("torch")
    x = torch.from_dlpack(pith.from_numpy(a))
    np.testing.assert_array_equal(x.numpy(), a)
    if a.size:
        assert x.data_ptr() == a.ctypes.data
    y = torch.from_numpy(a)
    assert moving_strides(x.shape, x.stride()) == moving_strides(y.shape, y.stride())


# ---- NumPy stays unimported ----

def test_import_pith_does_not_import_numpy():
    code = ("import sys, pith\n"
            "assert 'numpy' not in sys.modules\n"
            "t = pith.tensor([1.0, 2.0])\n"
            "pith.as_tensor([1]); pith.tensor(bytearray(b'ab')); bytes(t)\n"
            "pith.frombuffer(bytearray(8), dtype=pith.float32)\n"
            "pith.from_dlpack(t.__dlpack__()); pith.from_dlpack(t)\n"
            "assert 'numpy' not in sys.modules, 'numpy was imported'\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_numpy_is_imported_lazily_by_numpy():
    code = ("import sys, pith\n"
            "a = pith.ones(2).numpy()\n"
            "assert 'numpy' in sys.modules and type(a).__name__ == 'ndarray'\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                          text=True)
    assert done.returncode == 0, done.stderr


def test_no_warnings_for_writable_inputs():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        pith.from_numpy(np.zeros(2))
        pith.from_dlpack(np.zeros(2))
        pith.frombuffer(bytearray(4), dtype=pith.uint8)
