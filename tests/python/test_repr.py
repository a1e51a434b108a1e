"""repr(pith.Tensor) and pith.set_printoptions: PyTorch's format, character for character.

The property tests build the same values in pith and torch and compare the strings (with
'torch.' read as 'pith.'); the fixed strings below were printed by torch 2.13 and hold
without torch installed."""
import math
import re

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pith
from conftest import DTYPE_NAMES, FLOAT_NAMES, INT_NAMES, np_dtype, round_to_bfloat16
from conftest import to_pith, torch_or_none


@pytest.fixture(autouse=True)
def default_print_options():
    pith.set_printoptions(profile="default")
    torch = torch_or_none()
    if torch is not None:
        torch.set_printoptions(profile="default")
    yield
    pith.set_printoptions(profile="default")
    if torch is not None:
        torch.set_printoptions(profile="default")


def to_torch(a, name):
    """A torch tensor of dtype `name` with the values of NumPy array `a` (0-dim kept)."""
    torch = torch_or_none()
    source = a.astype(np.float32) if name == "bfloat16" else a
    return torch.from_numpy(np.array(source, copy=True)).to(getattr(torch, name))


_SUFFIX = r"(?:size=\([\d, ]*\)|dtype=pith\.\w+|device='\w+')"


def torch_repr(t):
    """torch's repr of `t` with pith's dtype names. The suffixes are laid out again by
    torch's own rule (_add_suffixes), because whether one fits on the line depends on the
    length of 'pith.float16' against 'torch.float16'."""
    import torch
    text = repr(t).replace("torch.", "pith.")
    flat = re.sub(r",\n *(?=" + _SUFFIX + ")", ", ", text)
    body, tail = re.fullmatch(r"(?s)(.*?)((?:, " + _SUFFIX + r")*)\)", flat).groups()
    suffixes = re.findall(", (" + _SUFFIX + ")", tail)
    return torch._tensor_str._add_suffixes(body, suffixes, len("tensor("), False)


# ---- strategies --------------------------------------------------------------------------

SPECIAL = [0.0, -0.0, math.nan, math.inf, -math.inf, 1.0, -1.0, 0.5, 1e-5, 1e8, 123456789.0]


def values_of(name):
    if name == "bool":
        return st.booleans()
    if name in INT_NAMES:
        info = np.iinfo(name)
        return st.one_of(st.integers(-9, 9), st.integers(int(info.min), int(info.max))).map(
            lambda v: min(max(v, int(info.min)), int(info.max)))
    width = 16 if name == "float16" else 32
    return st.one_of(st.sampled_from(SPECIAL),
                     st.integers(-1000, 1000).map(float),
                     st.floats(-10, 10, width=width),
                     st.floats(width=width))


@st.composite
def tensor_pairs(draw, max_side=5, max_ndim=4):
    """(pith tensor, NumPy array, dtype name) with the same values; the pith tensor is
    contiguous, transposed or a stepped slice."""
    name = draw(st.sampled_from(DTYPE_NAMES))
    shape = tuple(draw(st.lists(st.integers(0, max_side), max_size=max_ndim)))
    size = int(np.prod(shape))
    values = draw(st.lists(values_of(name), min_size=size, max_size=size))
    with np.errstate(over="ignore"):
        a = np.array(values, dtype=np_dtype(name)).reshape(shape)
    if name == "bfloat16":
        a = round_to_bfloat16(a)
    layout = draw(st.sampled_from(["contiguous", "transposed", "stepped"]))
    if layout == "transposed" and a.ndim >= 2:
        order = list(range(a.ndim))[::-1]
        p = to_pith(np.ascontiguousarray(a.transpose(order)), name).permute(order)
    elif layout == "stepped" and a.ndim >= 1:
        wide = np.repeat(a, 2, axis=0)
        p = to_pith(wide, name)[::2]
    else:
        p = to_pith(a, name)
    return p, a, name


print_options = st.fixed_dictionaries({}, optional={
    "precision": st.integers(0, 8),
    "threshold": st.one_of(st.integers(0, 40), st.just(math.inf)),
    "edgeitems": st.integers(0, 4),
    "linewidth": st.integers(8, 120),
    "profile": st.sampled_from(["default", "short", "full"]),
    "sci_mode": st.sampled_from([None, True, False]),
})


# ---- against torch -----------------------------------------------------------------------

@given(tensor_pairs())
def test_repr_matches_torch(pair):
    pytest.importorskip("torch")
    p, a, name = pair
    t = to_torch(a, name)
    assert repr(p) == torch_repr(t)


@given(tensor_pairs(max_side=6, max_ndim=3), print_options)
def test_repr_matches_torch_under_print_options(pair, options):
    torch = pytest.importorskip("torch")
    p, a, name = pair
    t = to_torch(a, name)
    try:
        pith.set_printoptions(**options)
        torch.set_printoptions(**options)
        assert repr(p) == torch_repr(t)
    finally:
        pith.set_printoptions(profile="default")
        torch.set_printoptions(profile="default")


def large_cases():
    """(name, build) where build(lib) makes the same large tensor in pith or torch."""
    return [
        ("arange_1001", lambda lib: lib.arange(1001)),
        ("arange_1000_not_summarised", lambda lib: lib.arange(1000)),
        ("float_1e6", lambda lib: lib.arange(10 ** 6) / 7),
        ("matrix_1000x1000", lambda lib: (lib.arange(10 ** 6) / 3).reshape(1000, 1000)),
        ("wide_2x1000", lambda lib: lib.arange(2000).reshape(2, 1000)),
        ("tall_1000x2", lambda lib: lib.arange(2000).reshape(1000, 2)),
        ("4d", lambda lib: (lib.arange(10 ** 4) - 5000).reshape(10, 10, 10, 10) / 9),
        ("sci", lambda lib: (lib.arange(5000) + 1) * 1e5),
        ("int_mode_floats", lambda lib: lib.arange(3000) * 1.0),
        ("bool", lambda lib: lib.arange(4000).reshape(4, 1000) > 2000),
        ("float16", lambda lib: lib.arange(2048, dtype=lib.float16) / 5),
        ("bfloat16", lambda lib: lib.arange(2048, dtype=lib.bfloat16) / 5),
        ("transposed", lambda lib: (lib.arange(6000) / 11).reshape(60, 100).t()),
        ("stepped", lambda lib: lib.arange(10 ** 5)[::7]),
    ]


@pytest.mark.parametrize("name,build", large_cases(), ids=[c[0] for c in large_cases()])
def test_large_tensor_repr_matches_torch(name, build):
    torch = pytest.importorskip("torch")
    assert repr(build(pith)) == torch_repr(build(torch))


@pytest.mark.parametrize("dtype", FLOAT_NAMES + ["int64"])
def test_repr_under_float64_default_dtype_matches_torch(dtype):
    torch = pytest.importorskip("torch")
    before_pith, before_torch = pith.get_default_dtype(), torch.get_default_dtype()
    try:
        pith.set_default_dtype(pith.float64)
        torch.set_default_dtype(torch.float64)
        for data in ([1.5, -2.0], []):
            p = pith.tensor(data, dtype=getattr(pith, dtype))
            assert repr(p) == torch_repr(torch.tensor(data, dtype=getattr(torch, dtype)))
    finally:
        pith.set_default_dtype(before_pith)
        torch.set_default_dtype(before_torch)


# ---- fixed strings (printed by torch 2.13) -----------------------------------------------

FIXED = [
    (lambda: pith.tensor([1.0, 2.0]), "tensor([1., 2.])"),
    (lambda: pith.tensor(-0.0), "tensor(-0.)"),
    (lambda: pith.tensor([-0.0, 1.0]), "tensor([-0., 1.])"),
    (lambda: pith.tensor([0.0, math.nan]), "tensor([0., nan])"),
    (lambda: pith.tensor([1e-5, math.inf]), "tensor([1.0000e-05,        inf])"),
    (lambda: pith.tensor([100000.0, 1.0]), "tensor([1.0000e+05, 1.0000e+00])"),
    (lambda: pith.tensor([[True, False]]), "tensor([[ True, False]])"),
    (lambda: pith.tensor(2.5, dtype=pith.bfloat16), "tensor(2.5000, dtype=pith.bfloat16)"),
    (lambda: pith.tensor([1.5, -2.25], dtype=pith.float64),
     "tensor([ 1.5000, -2.2500], dtype=pith.float64)"),
    (lambda: pith.zeros(0, 3), "tensor([], size=(0, 3))"),
    (lambda: pith.tensor([], dtype=pith.int64), "tensor([], dtype=pith.int64)"),
    (lambda: pith.zeros(2, 0, dtype=pith.bool), "tensor([], size=(2, 0), dtype=pith.bool)"),
    (lambda: pith.arange(12).reshape(2, 2, 3) * 1.0,
     "tensor([[[ 0.,  1.,  2.],\n         [ 3.,  4.,  5.]],\n\n"
     "        [[ 6.,  7.,  8.],\n         [ 9., 10., 11.]]])"),
    (lambda: pith.arange(30, dtype=pith.float16),
     "tensor([ 0.,  1.,  2.,  3.,  4.,  5.,  6.,  7.,  8.,  9., 10., 11., 12., 13.,\n"
     "        14., 15., 16., 17., 18., 19., 20., 21., 22., 23., 24., 25., 26., 27.,\n"
     "        28., 29.], dtype=pith.float16)"),
    (lambda: pith.full((7,), 1.5, dtype=pith.float16),
     "tensor([1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000, 1.5000],\n"
     "       dtype=pith.float16)"),
    (lambda: pith.arange(2000).reshape(2, 1000),
     "tensor([[   0,    1,    2,  ...,  997,  998,  999],\n"
     "        [1000, 1001, 1002,  ..., 1997, 1998, 1999]])"),
]


@pytest.mark.parametrize("build,expected", FIXED, ids=[e for _, e in FIXED])
def test_repr_fixed_cases(build, expected):
    assert repr(build()) == expected


def test_str_is_repr():
    t = pith.tensor([[1, 2], [3, 4]])
    assert str(t) == repr(t)


def test_precision_option():
    pith.set_printoptions(precision=2)
    assert repr(pith.tensor([1.12345])) == "tensor([1.12])"


def test_threshold_option_summarises():
    pith.set_printoptions(threshold=5)
    assert repr(pith.arange(10)) == "tensor([0, 1, 2,  ..., 7, 8, 9])"


def test_sci_mode_false_option():
    pith.set_printoptions(sci_mode=False)
    assert repr(pith.tensor([1e-5, 1e10])) == "tensor([          0.0000, 10000000000.0000])"


def test_zero_edgeitems_prints_the_size():
    pith.set_printoptions(edgeitems=0)
    assert repr(pith.arange(3)) == "tensor([0, 1, 2], size=(3,))"


def test_profile_full_never_summarises():
    pith.set_printoptions(profile="full")
    assert "..." not in repr(pith.arange(5000))
    assert pith._tensor_str.get_printoptions()["threshold"] == math.inf


def test_set_printoptions_resets_sci_mode_when_not_given():
    # PyTorch's behaviour: sci_mode is the one option that a call without it resets.
    pith.set_printoptions(sci_mode=True)
    pith.set_printoptions(precision=3)
    assert pith._tensor_str.get_printoptions()["sci_mode"] is None


def test_printoptions_context_restores():
    with pith._tensor_str.printoptions(precision=1, threshold=3):
        assert repr(pith.tensor([1.25, 2.0])) == "tensor([1.2, 2.0])"
    assert pith._tensor_str.get_printoptions() == dict(
        precision=4, threshold=1000, edgeitems=3, linewidth=80, sci_mode=None)


def test_summarised_repr_reads_only_the_edge_items(monkeypatch):
    read = []
    tolist = pith.Tensor.tolist

    def counting_tolist(self):
        read.append(self.numel())
        return tolist(self)

    monkeypatch.setattr(pith.Tensor, "tolist", counting_tolist)
    text = repr(pith.zeros(1000, 1000))
    assert sum(read) == 36  # 6 rows of 6 values
    assert text.count("0.") == 36


def test_meta_tensor_repr():
    try:
        t = pith.empty(2, 3, device="meta")
    except (TypeError, NotImplementedError):
        pytest.skip("pith cannot make meta tensors from Python yet")
    assert repr(t) == "tensor(..., device='meta', size=(2, 3))"


def test_subclass_repr_uses_the_class_name():
    class Special(pith.Tensor):
        pass

    t = pith.Tensor._make_subclass(Special, pith.tensor([1, 2]))
    assert repr(t) == "Special([1, 2])"
