"""Geometry that cannot overflow (Note [Geometry fits in int64], core/tensor.c): every entry
that takes sizes, strides or a storage offset from the user refuses one whose strides or
byte extent overflow int64 once scaled by the item size, with pith's ValueError, and accepts
the largest legal ones. Entries: empty_strided, empty, the wrapper-subclass factory, views,
NumPy arrays (shared and copied), memoryviews and other buffers, DLPack capsules, and
objects with __array_interface__.

Tensors over memory that is not there (huge strides over a small buffer) are made only to
check their metadata: their elements are never read.
"""
import ctypes

import numpy as np
import pytest
from numpy.lib.stride_tricks import as_strided

import pith
from conftest import DLManagedTensor

INT64_MAX = 2**63 - 1
ITEMSIZES = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
             "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}


def refuses(match):
    """pith's ValueError (a RuntimeError too), with a message fragment."""
    return pytest.raises(pith.PithError, match=match)


def test_the_error_is_pith_value_error_and_runtime_error():
    with refuses("overflows int64") as info:
        pith.empty_strided([1], [2**62])
    assert isinstance(info.value, ValueError) and isinstance(info.value, RuntimeError)


# ---- empty_strided, empty ----------------------------------------------------------------

@pytest.mark.parametrize("device", ["cpu", "meta"])
def test_empty_strided_refuses_a_stride_whose_bytes_overflow(device):
    with refuses(r"stride 4611686018427387904 of dim 0 times the item size 4 overflows int64"):
        pith.empty_strided([1], [2**62], device=device)


@pytest.mark.parametrize("name", list(ITEMSIZES))
def test_empty_strided_accepts_the_largest_stride_of_each_item_size(name):
    dtype = getattr(pith, name)
    largest = INT64_MAX // ITEMSIZES[name]
    t = pith.empty_strided([1], [largest], dtype=dtype, device="meta")
    assert t.stride() == (largest,)
    if ITEMSIZES[name] > 1:
        with refuses("overflows int64"):
            pith.empty_strided([1], [largest + 1], dtype=dtype, device="meta")


def test_empty_strided_refuses_an_extent_one_stride_past_int64():
    with refuses(r"the byte extent of sizes \[2\] with strides \[4611686018427387904\]"):
        pith.empty_strided([2], [2**62], dtype=pith.uint8, device="meta")
    t = pith.empty_strided([2], [INT64_MAX // 2], dtype=pith.uint8, device="meta")
    assert t.shape == (2,)


def test_empty_strided_sums_the_extent_over_every_dim():
    with refuses("byte extent"):
        pith.empty_strided([1, 1], [2**62, 2**62], dtype=pith.uint8, device="meta")
    t = pith.empty_strided([1, 1], [2**62, 2**62 - 1], dtype=pith.uint8, device="meta")
    assert t.stride() == (2**62, 2**62 - 1)


def test_empty_tensors_are_checked_too():
    with refuses("times the item size 8 overflows int64"):
        pith.empty_strided([0], [2**62], dtype=pith.float64)
    with refuses("stride 4611686018427387904 of dim 0"):
        pith.empty(0, 2**62)  # contiguous strides (2**62, 1) of float32
    assert pith.empty(0, 2**62, dtype=pith.uint8).stride() == (2**62, 1)


def test_negative_strides_are_refused_by_empty_strided():
    with refuses("negative strides are not supported"):
        pith.empty_strided([2], [-1])


def test_wrapper_subclass_geometry_is_checked():
    class Wrapper(pith.Tensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented

    with refuses("overflows int64"):
        pith.Tensor._make_wrapper_subclass(Wrapper, (1,), strides=(2**62,))
    w = pith.Tensor._make_wrapper_subclass(Wrapper, (1,), strides=(INT64_MAX // 4,))
    assert w.stride() == (INT64_MAX // 4,)


# ---- views -------------------------------------------------------------------------------

def test_expand_past_int64_bytes_is_refused():
    with refuses(r"shape \[4611686018427387904\] of 4-byte elements has more bytes"):
        pith.zeros(1).expand(2**62)
    assert pith.zeros(1).expand(2**60).numel() == 2**60


def test_a_view_that_would_overflow_is_refused():
    # (1 * s + 2 * 1) * 4 == 2**63 - 4: the largest legal stride of the size-1 dim.
    t = pith.empty_strided([1, 2], [(INT64_MAX - 8) // 4, 1], device="meta")
    with refuses("overflows int64"):
        t.unsqueeze(0)  # the new dim's stride counts the huge one again
    assert t[0].shape == (2,)


# ---- NumPy, buffers, __array_interface__ -------------------------------------------------

def huge_view(byte_stride, shape=(2,), dtype=np.float32):
    """An ndarray whose strides point far outside its one-element buffer."""
    return as_strided(np.zeros(1, dtype), shape=shape, strides=(byte_stride,) * len(shape))


@pytest.mark.parametrize("share", [pith.from_numpy, pith.as_tensor])
def test_sharing_numpy_refuses_strides_that_overflow(share):
    with refuses("from_blob: the byte extent"):
        share(huge_view(2**62))


@pytest.mark.parametrize("share", [pith.from_numpy, pith.as_tensor])
def test_sharing_numpy_accepts_the_largest_legal_stride(share):
    largest = INT64_MAX // 2 // 4 * 4  # 2 * stride bytes <= INT64_MAX, aligned to 4
    t = share(huge_view(largest))
    assert t.stride() == (largest // 4,)
    assert t.numpy().strides == (largest,)  # the export scales it back without overflow
    assert memoryview(t).strides == (largest,)
    with refuses("byte extent"):
        share(huge_view(largest + 4))


def test_copying_numpy_refuses_strides_that_overflow():
    with refuses("byte extent"):
        pith.tensor(huge_view(2**62))


def test_copying_numpy_with_negative_strides_refuses_an_overflowing_extent():
    a = as_strided(np.zeros(4, np.float32)[2:], shape=(2, 2), strides=(-2**62, 4))
    with refuses(r"geometry_check: the byte extent of sizes \[2, 2\] with strides "
                 r"\[-4611686018427387904, 4\]"):
        pith.tensor(a)
    with pytest.raises(ValueError, match="negative"):
        pith.from_numpy(a)  # sharing refuses negative strides before anything else


def test_copying_numpy_with_negative_strides_still_works():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)[::-1, ::-2]
    assert pith.tensor(a).tolist() == a.tolist()


def test_memoryview_imports_are_checked():
    with refuses("byte extent"):
        pith.as_tensor(memoryview(huge_view(2**62)))
    with refuses("byte extent"):
        pith.tensor(memoryview(huge_view(2**62)))


def test_array_interface_objects_are_not_read_by_pith():
    class Interface:
        def __init__(self, array):
            self.array = array  # keeps the memory alive
            self.__array_interface__ = dict(array.__array_interface__)

    huge = Interface(huge_view(2**62))
    # pith takes no __array_interface__ of its own: nothing of it is read ...
    with pytest.raises(RuntimeError, match="Could not infer dtype"):
        pith.as_tensor(huge)
    # ... and what NumPy makes of it is checked as any array is.
    with refuses("byte extent"):
        pith.from_numpy(np.asarray(huge))
    fine = Interface(np.arange(3, dtype=np.int64))
    assert pith.from_numpy(np.asarray(fine)).tolist() == [0, 1, 2]


# ---- DLPack ------------------------------------------------------------------------------

def crafted_capsule(t, strides):
    """t's legacy DLPack capsule with its strides (pith's own arrays) rewritten."""
    capsule = t.__dlpack__()
    get = ctypes.pythonapi.PyCapsule_GetPointer
    get.restype = ctypes.c_void_p
    get.argtypes = [ctypes.py_object, ctypes.c_char_p]
    dl = DLManagedTensor.from_address(get(capsule, b"dltensor")).dl_tensor
    for i, s in enumerate(strides):
        dl.strides[i] = s
    return capsule


def test_dlpack_refuses_a_stride_whose_bytes_overflow():
    with refuses("from_blob: stride 4611686018427387904 of dim 0 times the item size 4"):
        pith.from_dlpack(crafted_capsule(pith.zeros(1), [2**62]))


def test_dlpack_refuses_an_extent_that_overflows():
    with refuses("byte extent"):
        pith.from_dlpack(crafted_capsule(pith.zeros(1, 1), [2**60, 2**60]))


def test_dlpack_accepts_the_largest_stride_of_a_size_one_dim():
    src = pith.tensor([[1.0, 2.0]])
    largest = (INT64_MAX - 8) // 4  # (1 * s + 2 * 1) * 4 <= INT64_MAX
    t = pith.from_dlpack(crafted_capsule(src, [largest, 1]))
    assert t.stride() == (largest, 1)
    assert t.tolist() == [[1.0, 2.0]]
    assert (t + 1).tolist() == [[2.0, 3.0]]  # the kernels walk it
    assert t.sum().item() == 3.0


def test_dlpack_refuses_negative_strides():
    with pytest.raises(ValueError, match="negative strides are not supported"):
        pith.from_dlpack(crafted_capsule(pith.zeros(2), [-1]))
