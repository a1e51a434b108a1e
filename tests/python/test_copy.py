"""copy.copy, copy.deepcopy and pickle of pith.Tensor and its subclasses.

As in PyTorch: copy.copy is a new tensor object on the same memory, deepcopy an independent
copy, pickle keeps the values, dtype, shape, class and instance attributes. Unlike PyTorch,
an unpickled or deep-copied view is contiguous (See Note [Pickled tensors], _tensor.py)."""
import copy
import math
import pickle
import subprocess
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

import pith
from conftest import DTYPE_NAMES, pdtype, shapes, tensors, to_numpy

PROTOCOLS = list(range(pickle.HIGHEST_PROTOCOL + 1))


class Tagged(pith.Tensor):
    """A module-level subclass, so that pickle can find it by name."""


class Slotted(pith.Tensor):
    __slots__ = ("tag",)


def tagged(data, **attributes):
    t = pith.Tensor._make_subclass(Tagged, data)
    for name, value in attributes.items():
        setattr(t, name, value)
    return t


def assert_same_tensor_values(got, expected):
    """Same dtype, shape and bit-identical values (so -0.0 and NaN are checked too)."""
    assert got.dtype is expected.dtype
    assert tuple(got.shape) == tuple(expected.shape)
    assert pith._C._tensor_bytes(got) == pith._C._tensor_bytes(expected)


def round_trip(t, protocol=pickle.HIGHEST_PROTOCOL):
    return pickle.loads(pickle.dumps(t, protocol=protocol))


any_tensor = st.sampled_from(DTYPE_NAMES).flatmap(
    lambda name: shapes.flatmap(lambda shape: tensors(name, shape)))


# ---- pickle ------------------------------------------------------------------------------

@given(any_tensor, st.sampled_from(PROTOCOLS))
def test_pickle_keeps_dtype_shape_and_values(pair, protocol):
    t, a = pair
    u = round_trip(t, protocol)
    assert type(u) is pith.Tensor
    assert_same_tensor_values(u, t)
    assert (to_numpy(u) == a).all()


@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.parametrize("protocol", PROTOCOLS)
def test_pickle_every_dtype_and_protocol(name, protocol):
    values = [[(3 * r + c) % 5 for c in range(4)] for r in range(3)]
    if name == "bool":
        values = [[v > 2 for v in row] for row in values]
    t = pith.tensor(values, dtype=pdtype(name))
    assert_same_tensor_values(round_trip(t, protocol), t)


@pytest.mark.parametrize("name", DTYPE_NAMES)
def test_pickle_zero_dim(name):
    t = pith.tensor(1, dtype=pdtype(name))
    u = round_trip(t)
    assert u.dim() == 0
    assert_same_tensor_values(u, t)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0, 4)])
@pytest.mark.parametrize("name", ["float32", "int64", "bool", "bfloat16"])
def test_pickle_empty(shape, name):
    t = pith.zeros(shape, dtype=pdtype(name))
    u = round_trip(t)
    assert u.dtype is t.dtype
    assert tuple(u.shape) == shape


def test_pickle_keeps_special_float_bits():
    t = pith.tensor([math.nan, math.inf, -math.inf, -0.0, 5e-324], dtype=pith.float64)
    assert_same_tensor_values(round_trip(t), t)


def test_unpickled_view_is_contiguous_with_the_view_values():
    base = pith.arange(24).reshape(4, 6)
    view = base.t()[1:5:2]
    u = round_trip(view)
    assert u.is_contiguous()
    assert u.stride() == (4, 1)
    assert u.tolist() == view.tolist()


def test_unpickled_tensor_does_not_share_memory_with_the_source():
    t = pith.zeros(3)
    u = round_trip(t)
    t.add_(1)
    assert u.tolist() == [0.0, 0.0, 0.0]


def test_pickle_keeps_plain_tensor_attributes():
    t = pith.ones(2)
    t.note = {"a": [1, 2]}
    assert round_trip(t).note == {"a": [1, 2]}


def test_pickle_subclass_keeps_class_and_dict():
    t = tagged(pith.tensor([1.5, 2.5]), note="x", items=[1, 2])
    for protocol in PROTOCOLS:
        u = round_trip(t, protocol)
        assert type(u) is Tagged
        assert u.__dict__ == {"note": "x", "items": [1, 2]}
        assert_same_tensor_values(u, t)


def test_pickle_subclass_keeps_slots():
    t = pith.Tensor._make_subclass(Slotted, pith.tensor([1, 2]))
    t.tag = "kept"
    u = round_trip(t)
    assert type(u) is Slotted
    assert u.tag == "kept"


def test_pickle_parameter_keeps_class():
    nn = pytest.importorskip("pith.nn")
    p = nn.Parameter(pith.tensor([[1.0, 2.0]]))
    u = round_trip(p)
    assert type(u) is nn.Parameter
    assert_same_tensor_values(u, p)


def test_pickle_loads_in_a_fresh_interpreter():
    # The rebuild function is found by name (pith._tensor), as a file written today must
    # load in another process.
    data = pickle.dumps(pith.tensor([[1, 2], [3, 4]], dtype=pith.int16))
    code = ("import pickle, sys; t = pickle.loads(sys.stdin.buffer.read()); "
            "print(t.dtype, t.tolist())")
    out = subprocess.run([sys.executable, "-c", code], input=data, capture_output=True,
                         check=True)
    assert out.stdout.decode().strip() == "pith.int16 [[1, 2], [3, 4]]"


def test_rebuild_rejects_a_name_that_is_not_a_dtype():
    from pith._tensor import _rebuild_tensor
    with pytest.raises(TypeError, match="not a dtype"):
        _rebuild_tensor(b"\0" * 4, "Tensor", (1,))


# ---- deepcopy ----------------------------------------------------------------------------

@given(any_tensor)
def test_deepcopy_keeps_dtype_shape_and_values(pair):
    t, _ = pair
    d = copy.deepcopy(t)
    assert type(d) is pith.Tensor
    assert d is not t
    assert_same_tensor_values(d, t)


def test_deepcopy_is_independent():
    t = pith.arange(6).reshape(2, 3)
    d = copy.deepcopy(t)
    assert d.data_ptr() != t.data_ptr()
    d[0, 0] = 100
    assert t[0, 0].item() == 0


def test_deepcopy_of_a_view_copies_only_the_view():
    base = pith.arange(12).reshape(3, 4)
    d = copy.deepcopy(base[:, 1])
    assert d.tolist() == [1, 5, 9]
    assert d.is_contiguous()


def test_deepcopy_uses_the_memo():
    t = pith.ones(2)
    first, second = copy.deepcopy([t, t])
    assert first is second
    assert first is not t


def test_deepcopy_subclass_keeps_class_and_copies_dict_deeply():
    t = tagged(pith.tensor([1, 2]), items=[[1], [2]])
    d = copy.deepcopy(t)
    assert type(d) is Tagged
    assert d.items == [[1], [2]]
    assert d.items is not t.items
    assert d.items[0] is not t.items[0]


def test_deepcopy_state_refers_back_to_the_copy():
    t = tagged(pith.tensor([1, 2]))
    t.me = t
    d = copy.deepcopy(t)
    assert d.me is d
    del t.me, d.me  # break the cycles for the leak check


def test_deepcopy_parameter_keeps_class():
    nn = pytest.importorskip("pith.nn")
    p = nn.Parameter(pith.tensor([1.0, 2.0]))
    d = copy.deepcopy(p)
    assert type(d) is nn.Parameter
    assert d.data_ptr() != p.data_ptr()
    assert_same_tensor_values(d, p)


# ---- copy --------------------------------------------------------------------------------

def test_copy_is_a_new_object_on_the_same_memory():
    t = pith.arange(12).reshape(3, 4).t()
    c = copy.copy(t)
    assert c is not t
    assert (c.data_ptr(), c.shape, c.stride(), c.storage_offset()) == \
        (t.data_ptr(), t.shape, t.stride(), t.storage_offset())
    c[0, 0] = 100
    assert t[0, 0].item() == 100


def test_copy_shares_memory_like_torch():
    torch = pytest.importorskip("torch")
    for lib in (torch, pith):
        t = lib.zeros(3)
        copy.copy(t)[1] = 7
        assert t.tolist() == [0.0, 7.0, 0.0]


def test_copy_subclass_keeps_class_and_shares_attribute_values():
    t = tagged(pith.tensor([1, 2]), items=[1])
    c = copy.copy(t)
    assert type(c) is Tagged
    assert c.items is t.items
    assert c.__dict__ is not t.__dict__


def test_copy_parameter_keeps_class():
    nn = pytest.importorskip("pith.nn")
    p = nn.Parameter(pith.tensor([1.0, 2.0]))
    c = copy.copy(p)
    assert type(c) is nn.Parameter
    assert c.data_ptr() == p.data_ptr()


# A copy of a leaf that requires grad requires grad, as torch's (a module deep-copied or
# unpickled with its Parameters stays trainable); one that does not, does not.
@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
@pytest.mark.parametrize("make", [lambda: pith.ones(2, requires_grad=True),
                                  lambda: pith.nn.Parameter(pith.ones(2)),
                                  lambda: pith.nn.Parameter(pith.ones(2), requires_grad=False),
                                  lambda: pith.ones(2)],
                         ids=["tensor", "parameter", "frozen_parameter", "plain"])
def test_copies_keep_requires_grad(make, how):
    t = make()
    c = copy.deepcopy(t) if how == "deepcopy" else pickle.loads(pickle.dumps(t))
    assert type(c) is type(t) and c.requires_grad == t.requires_grad and c.is_leaf
