"""Note [Bool bytes] (core/dtype.h): a bool tensor over bytes other than 0 and 1 (imported
with frombuffer, from NumPy or DLPack) reads any nonzero byte as True, in every op and
every conversion to Python, as PyTorch and NumPy do. Reading such a byte as C's bool was
undefined behaviour (tests/kernels/bool_bytes_test.cc checks that under UBSan).
"""
import warnings

import numpy as np
import pytest

import pith
from conftest import torch_or_none

RAW = b"\x02\x00\xff"
TRUTH = [True, False, True]


def wild():
    """bool tensor over the bytes 2, 0, 255 (a writable copy: no warning)."""
    return pith.frombuffer(bytearray(RAW), dtype=pith.bool)


def test_conversions_to_python_see_true():
    t = wild()
    assert t.tolist() == TRUTH
    assert [t[i].item() for i in range(3)] == TRUTH
    assert [bool(t[i]) for i in range(3)] == TRUTH
    assert [int(t[i]) for i in range(3)] == [1, 0, 1]
    assert [float(t[i]) for i in range(3)] == [1.0, 0.0, 1.0]


def test_elementwise_ops_see_true():
    t = wild()
    assert t.logical_not().tolist() == [False, True, False]
    assert (~t).tolist() == [False, True, False]
    assert (t == pith.tensor([True, True, True])).tolist() == TRUTH
    assert (t == True).tolist() == TRUTH  # noqa: E712 (a wrapped bool number)
    assert (t & pith.tensor([True, True, True])).tolist() == TRUTH
    assert (t + t).tolist() == TRUTH


@pytest.mark.parametrize("dtype", ["uint8", "int64", "float16", "float32", "float64"])
def test_casts_see_one(dtype):
    assert wild().to(getattr(pith, dtype)).tolist() == [1, 0, 1]


def test_reductions_see_true():
    t = wild()
    assert t.sum().item() == 2
    assert t.any().item() is True
    assert t.all().item() is False
    assert pith.tensor([2, 255], dtype=pith.uint8).to(pith.bool).all().item() is True
    assert t.amax().item() is True


def test_conditions_and_masks_see_true():
    t = wild()
    x = pith.tensor([10.0, 20.0, 30.0])
    assert pith.where(t, x, -x).tolist() == [10.0, -20.0, 30.0]
    assert x.masked_fill(t, 0.0).tolist() == [0.0, 20.0, 0.0]
    assert x[t].tolist() == [10.0, 30.0]
    assert x.masked_select(t).tolist() == [10.0, 30.0]
    assert t.nonzero().tolist() == [[0], [2]]
    y = x.clone()
    y[t] = 5.0
    assert y.tolist() == [5.0, 20.0, 5.0]


def test_numpy_bool_views_of_other_bytes_see_true():
    a = np.frombuffer(bytearray(RAW), dtype=np.bool_)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        t = pith.from_numpy(a)
    assert t.tolist() == TRUTH
    assert t.logical_not().tolist() == [False, True, False]
    assert t.sum().item() == 2


def test_matches_torch_when_installed():
    torch = torch_or_none()
    if torch is None:
        pytest.skip("torch is not installed")
    theirs = torch.frombuffer(bytearray(RAW), dtype=torch.bool)
    ours = wild()
    assert ours.tolist() == theirs.tolist()
    assert ours.to(pith.int64).tolist() == theirs.to(torch.int64).tolist()
    assert ours.sum().item() == theirs.sum().item()
    assert ours.logical_not().tolist() == theirs.logical_not().tolist()
