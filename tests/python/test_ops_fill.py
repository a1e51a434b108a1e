"""The ops that real programs needed in tests/models, against PyTorch: the in-place random
fills uniform_ and normal_ (distributions, bounds, generators, layouts, errors), tril_ and
triu_, the float classifiers isnan/isinf/isposinf/isneginf/isfinite, broadcast_to,
expand_as, broadcast_tensors and broadcast_shapes; nn.ParameterList/ParameterDict, the
nn.init functions built on the fills, pith.amp.autocast, pith.finfo/iinfo, F.pad and
pith.utils.checkpoint."""
import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pith
from pith import nn
from conftest import (DTYPE_NAMES, PROPERTY, assert_matches_torch, assert_raises_like_torch,
                      pdtype, shapes, tensors, to_torch, torch_or_none)

torch = torch_or_none()
needs_torch = pytest.mark.skipif(torch is None, reason="torch is the oracle")
FLOATS = ["float16", "bfloat16", "float32", "float64"]


# ---- uniform_ and normal_ ----------------------------------------------------------------

@pytest.mark.parametrize("name", FLOATS)
def test_uniform_stays_in_range_and_is_uniform(name):
    x = pith.empty(200_000, dtype=pdtype(name)).uniform_(-2.0, 3.0)
    a = x.float().numpy()
    assert a.min() >= -2.0 and a.max() <= 3.0
    assert abs(a.mean() - 0.5) < 0.03
    assert abs(a.std() - 5 / math.sqrt(12)) < 0.03
    counts, _ = np.histogram(a, bins=10, range=(-2, 3))
    assert counts.min() > 0.9 * counts.mean()


@pytest.mark.parametrize("name", FLOATS)
def test_normal_has_its_mean_and_std(name):
    x = pith.empty(200_000, dtype=pdtype(name)).normal_(1.5, 0.25)
    a = x.float().numpy()
    assert abs(a.mean() - 1.5) < 0.01
    assert abs(a.std() - 0.25) < 0.01
    assert abs(((a - 1.5) / 0.25 > 1.0).mean() - 0.1587) < 0.01


def test_fills_return_self():
    x = pith.zeros(4, 3)
    assert x.uniform_() is x
    assert x.normal_() is x


def test_defaults_are_torchs():
    a = pith.empty(10_000).uniform_().numpy()
    assert a.min() >= 0 and a.max() < 1
    b = pith.empty(100_000).normal_().numpy()
    assert abs(b.mean()) < 0.02 and abs(b.std() - 1) < 0.02


def test_from_is_a_keyword_and_to_too():
    x = pith.empty(1000).uniform_(**{"from": 5, "to": 6})
    assert x.min() >= 5 and x.max() < 6
    x.uniform_(to=0.5)
    assert x.max() < 0.5


@pytest.mark.parametrize("fill", ["uniform_", "normal_"])
def test_generator_replays_and_layouts_agree(fill):
    g = pith.Generator().manual_seed(7)
    a = getattr(pith.empty(6, 5), fill)(generator=g)
    g.manual_seed(7)
    # The same numbers in row-major order whatever the layout (Note [Filling in place
    # at random]).
    b = getattr(pith.empty(5, 6).t(), fill)(generator=g)
    assert (a == b).all()
    pith.manual_seed(3)
    c = getattr(pith.empty(6, 5), fill)()
    pith.manual_seed(3)
    d = getattr(pith.empty(6, 5), fill)()
    assert (c == d).all()


def test_fill_of_a_view_writes_through():
    base = pith.zeros(4, 6)
    base[:, 1::2].uniform_(1, 2)
    a = base.numpy()
    assert (a[:, 0::2] == 0).all() and (a[:, 1::2] >= 1).all()


def test_fills_on_meta_and_empty():
    m = pith.empty(2, 3, device="meta").normal_()
    assert m.device.type == "meta" and m.shape == (2, 3)
    assert pith.empty(0, 3).uniform_().shape == (0, 3)
    assert pith.empty(()).normal_().shape == ()


@pytest.mark.parametrize("call, error, fragment", [
    (lambda lib: lib.zeros(3).uniform_(1, 0), RuntimeError, "expects to return a [from, to) range"),
    (lambda lib: lib.zeros(3).normal_(0, -1), RuntimeError, "normal expects std >= 0.0"),
    (lambda lib: lib.zeros(3, dtype=lib.int64).uniform_(), RuntimeError, "not implemented for"),
    (lambda lib: lib.zeros(3, dtype=lib.bool).normal_(), RuntimeError, "not implemented for"),
    (lambda lib: lib.zeros(1).expand(3).normal_(), RuntimeError, "single memory location"),
])
def test_fill_errors_are_torchs(call, error, fragment):
    assert_raises_like_torch(call, error, fragment)


# ---- tril_ and triu_ ---------------------------------------------------------------------

@needs_torch
@PROPERTY
@given(st.data(), shapes.filter(lambda s: len(s) >= 2), st.sampled_from(DTYPE_NAMES),
       st.integers(-5, 5), st.booleans())
def test_tril_triu_in_place_match_torch(data, shape, name, k, lower):
    x, a = data.draw(tensors(name, shape, layout=data.draw(
        st.sampled_from(["contiguous", "transposed", "stepped", "offset"]))))
    op = "tril_" if lower else "triu_"
    want = getattr(to_torch(np.ascontiguousarray(a), name), op)(k)
    got = getattr(x, op)(k)
    assert got is x
    assert_matches_torch(x, want)


def test_tril_in_place_errors_are_torchs():
    assert_raises_like_torch(lambda lib: lib.zeros(3).tril_(), RuntimeError,
                             "must have at least 2 dimensions")
    # PyTorch writes through the aliases of an expanded tensor (every row ends up all
    # zeros); pith refuses, as copy_ and the elementwise in-place ops do (docs/python.md).
    with pytest.raises(RuntimeError, match="single memory location"):
        pith.zeros(3, 1).expand(3, 3).triu_()


# ---- isnan, isinf, isposinf, isneginf, isfinite --------------------------------------------

SPECIALS = [0.0, -0.0, 1.5, -2.0, float("nan"), float("inf"), -float("inf"), 1e30, -1e-30]
CLASSIFIERS = ["isnan", "isinf", "isposinf", "isneginf", "isfinite"]


@needs_torch
@pytest.mark.parametrize("name", DTYPE_NAMES)
@pytest.mark.parametrize("fn", CLASSIFIERS)
def test_classifiers_match_torch_on_special_values(name, fn):
    want = getattr(torch, fn)(torch.tensor(SPECIALS).to(getattr(torch, name)))
    if name == "bfloat16":
        x = pith.tensor(SPECIALS, dtype=pith.bfloat16)
    else:
        x = pith.tensor(SPECIALS).to(pdtype(name))
    got = getattr(pith, fn)(x)
    assert got.dtype == pith.bool
    assert got.tolist() == want.tolist()
    assert getattr(x, fn)().tolist() == want.tolist()


@needs_torch
@PROPERTY
@given(st.data(), shapes, st.sampled_from(DTYPE_NAMES), st.sampled_from(CLASSIFIERS))
def test_classifiers_match_torch_on_layouts(data, shape, name, fn):
    x, a = data.draw(tensors(name, shape))
    assert_matches_torch(getattr(pith, fn)(x), getattr(torch, fn)(to_torch(a, name)))


# ---- masked_fill and masked_fill_ -----------------------------------------------------------

@needs_torch
@PROPERTY
@given(st.data(), shapes, st.sampled_from(DTYPE_NAMES), st.booleans())
def test_masked_fill_matches_torch_on_layouts(data, shape, name, in_place):
    """Every layout of self, and a mask broadcast from a suffix of self's shape with some of
    its dims set to 1 (as a causal mask of shape (1, 1, T, T) is), in any layout too."""
    x, a = data.draw(tensors(name, shape))
    keep = data.draw(st.integers(0, len(shape)))
    mask_shape = tuple(1 if data.draw(st.booleans()) else n for n in shape[len(shape) - keep:])
    m, b = data.draw(tensors("bool", mask_shape))
    value = data.draw(st.sampled_from([0, 1, -3]) if name in ("bool", "uint8") or
                      name.startswith("int") else st.sampled_from([0.5, -2.0, float("-inf")]))
    if name == "bool":
        value = bool(value)
    want = to_torch(a, name).masked_fill(to_torch(b, "bool"), value)
    if in_place:
        if x.stride() and 0 in x.stride():
            return  # an expanded self: written serially, PyTorch warns; not compared
        got = x.masked_fill_(m, value)
        assert got is x
    else:
        got = x.masked_fill(m, value)
    assert_matches_torch(got, want)


def test_masked_fill_causal_mask_at_size():
    """The attention mask of a GPT: a (1, 1, T, T) tril mask over (B, H, T, T) scores, large
    enough to run in threads, against NumPy."""
    t = 64
    scores = pith.randn(2, 3, t, t)
    mask = pith.tril(pith.ones(t, t)).view(1, 1, t, t) == 0
    got = scores.masked_fill(mask, float("-inf")).numpy()
    want = np.where(np.tril(np.ones((t, t))) == 0, -np.inf, scores.numpy())
    np.testing.assert_array_equal(got, want)
    scores.masked_fill_(mask, 0.0)
    np.testing.assert_array_equal(scores.numpy(), np.where(np.isinf(want), 0.0, want))


# ---- broadcast_to, expand_as, broadcast_tensors, broadcast_shapes ----------------------------

@needs_torch
@pytest.mark.parametrize("shapes_", [[(3, 1), (4,)], [(), (2, 0)], [(2, 1, 3), (5, 1)], [(4,)],
                                     []])
def test_broadcast_tensors_match_torch(shapes_):
    ps = [pith.arange(math.prod(s)).reshape(s) for s in shapes_]
    ts = [torch.arange(math.prod(s)).reshape(s) for s in shapes_]
    got, want = pith.broadcast_tensors(*ps), torch.broadcast_tensors(*ts)
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w, p in zip(got, want, ps):
        assert_matches_torch(g, w)
        assert g.stride() == w.stride()
        assert g.data_ptr() == p.data_ptr()  # views
    assert pith.broadcast_shapes(*shapes_) == torch.broadcast_shapes(*shapes_)
    if shapes_:
        assert [t.shape for t in pith.broadcast_tensors(ps)] == [t.shape for t in want]


def test_broadcast_errors_are_torchs():
    assert_raises_like_torch(lambda lib: lib.broadcast_tensors(lib.zeros(3), lib.zeros(4)),
                             RuntimeError, "must match the size of tensor b (4)")
    assert_raises_like_torch(lambda lib: lib.broadcast_to(lib.zeros(3), (4,)), RuntimeError,
                             "must match the existing size (3)")
    assert_raises_like_torch(lambda lib: lib.zeros(2, 3).expand_as(lib.zeros(3)),
                             RuntimeError, "the number of sizes provided (1)")
    with pytest.raises(RuntimeError):
        pith.broadcast_shapes((3,), (4,))


@needs_torch
def test_broadcast_to_and_expand_as_match_torch():
    x = pith.arange(3.0).reshape(3, 1)
    t = torch.arange(3.0).reshape(3, 1)
    for got, want in [(pith.broadcast_to(x, (2, 3, 4)), torch.broadcast_to(t, (2, 3, 4))),
                      (x.broadcast_to((3, -1)), t.broadcast_to((3, -1))),
                      (x.expand_as(pith.zeros(5, 3, 2)), t.expand_as(torch.zeros(5, 3, 2)))]:
        assert_matches_torch(got, want)
        assert got.stride() == want.stride()
    assert pith.broadcast_shapes(2, (3, 1)) == torch.broadcast_shapes(2, (3, 1))


# ---- ParameterList, ParameterDict ----------------------------------------------------------

def _pair():
    return nn, (torch.nn if torch is not None else None)


def test_parameter_list_registers_and_indexes():
    pl = nn.ParameterList([pith.zeros(2), nn.Parameter(pith.ones(3))])
    assert len(pl) == 2 and all(isinstance(p, nn.Parameter) for p in pl)
    assert [k for k, _ in pl.named_parameters()] == ["0", "1"]
    assert pl[-1].shape == (3,)
    pl.append(pith.zeros(4))
    pl += [pith.zeros(5)]
    assert list(pl.state_dict()) == ["0", "1", "2", "3"]
    assert len(pl[1:3]) == 2 and pl[1:3][0] is pl[1]
    with pytest.raises(IndexError):
        pl[4]
    with pytest.raises(RuntimeError, match="should not be called"):
        pl()


def test_parameter_dict_registers_in_order():
    pd = nn.ParameterDict({"b": pith.zeros(2), "a": pith.ones(1)})
    assert list(pd.keys()) == ["a", "b"]  # a plain dict is sorted, as in PyTorch
    pd["c"] = pith.zeros(3)
    assert "c" in pd and len(pd) == 3 and isinstance(pd["c"], nn.Parameter)
    assert list(pd.state_dict()) == ["a", "b", "c"]
    assert pd.pop("a").shape == (1,) and "a" not in pd
    assert pd.get("zz", 5) == 5


@needs_torch
def test_parameter_containers_keep_torchs_keys_and_repr():
    class M:
        def __init__(self, lib):
            self.m = lib.nn.Module()
            self.m.pl = lib.nn.ParameterList([lib.zeros(2, 3), lib.ones(1)])
            self.m.pd = lib.nn.ParameterDict({"w": lib.zeros(4)})
    p, t = M(pith).m, M(torch).m
    assert list(p.state_dict()) == list(t.state_dict())
    assert repr(p).replace("pith.", "torch.") == repr(t)
    t.pl[0].data.normal_()
    p.load_state_dict({k: pith.from_numpy(v.numpy()) for k, v in t.state_dict().items()})
    assert (p.pl[0].detach().numpy() == t.pl[0].detach().numpy()).all()


# ---- nn.init on the fills ------------------------------------------------------------------

def test_init_functions_have_torchs_statistics():
    w = pith.empty(400, 300)
    nn.init.xavier_uniform_(w)
    bound = math.sqrt(6 / 700)
    assert w.abs().max().item() <= bound and w.abs().max().item() > 0.95 * bound
    nn.init.xavier_normal_(w, gain=2.0)
    assert abs(w.std().item() - 2 * math.sqrt(2 / 700)) < 0.005
    nn.init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu")
    assert abs(w.std().item() - math.sqrt(2 / 400)) < 0.003
    nn.init.trunc_normal_(w, std=0.02, a=-0.03, b=0.03)
    assert w.abs().max().item() <= 0.03 and 0.013 < w.std().item() < 0.02
    g = pith.Generator().manual_seed(1)
    a = nn.init.normal_(pith.empty(5), generator=g).clone()
    g.manual_seed(1)
    assert (nn.init.normal_(pith.empty(5), generator=g) == a).all()


def test_trunc_normal_refuses_a_far_tail():
    with pytest.raises(NotImplementedError, match="far tail"):
        nn.init.trunc_normal_(pith.empty(3), mean=0, std=1, a=10, b=11)


# ---- pith.amp.autocast ---------------------------------------------------------------------

def test_autocast_disabled_is_a_no_op_context_and_decorator():
    @pith.amp.autocast("cuda", enabled=False)
    def f(x):
        return x * 2
    assert f(pith.ones(2)).dtype == pith.float32
    with pith.autocast("cpu", enabled=False):
        assert not pith.is_autocast_enabled()


def test_autocast_on_a_missing_device_warns_and_disables():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ctx = pith.amp.autocast("cuda")
    assert ctx._enabled is False and "not available" in str(caught[0].message)


def test_autocast_enabled_on_cpu_is_refused():
    with pytest.raises(NotImplementedError, match="autocast"):
        pith.autocast("cpu")
    with pytest.raises(RuntimeError, match="Expected one of"):
        pith.autocast("gpu")


# ---- finfo and iinfo -----------------------------------------------------------------------

@needs_torch
@pytest.mark.parametrize("name", FLOATS)
def test_finfo_matches_torch(name):
    got, want = pith.finfo(pdtype(name)), torch.finfo(getattr(torch, name))
    for field in ("bits", "eps", "max", "min", "tiny", "smallest_normal", "resolution",
                  "dtype"):
        assert getattr(got, field) == getattr(want, field), field
    assert repr(got) == repr(want)


@needs_torch
@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "int32", "int64"])
def test_iinfo_matches_torch(name):
    got, want = pith.iinfo(pdtype(name)), torch.iinfo(getattr(torch, name))
    assert (got.bits, got.min, got.max, got.dtype) == (want.bits, want.min, want.max,
                                                       want.dtype)
    assert repr(got) == repr(want)
    assert pdtype(name).is_signed == getattr(torch, name).is_signed


def test_finfo_iinfo_errors_and_defaults():
    assert pith.finfo().dtype == "float32"
    pith.set_default_dtype(pith.float64)
    try:
        assert pith.finfo().dtype == "float64"
    finally:
        pith.set_default_dtype(pith.float32)
    assert_raises_like_torch(lambda lib: lib.finfo(lib.int32), TypeError,
                             "requires a floating point input type")
    assert_raises_like_torch(lambda lib: lib.iinfo(lib.float32), TypeError,
                             "requires an integer input type")
    assert_raises_like_torch(lambda lib: lib.iinfo(lib.bool), TypeError, "is not supported")
    assert pith.finfo(pith.float16) == pith.finfo(pith.half)
    assert not pith.float32.is_complex and pith.float32.is_signed and not pith.bool.is_signed


# ---- F.pad ---------------------------------------------------------------------------------

PADS = [(), (1, 1), (1, -1), (0, 2, 1, 0), (-3, 0), (0, -3), (-1, -2), (2, 0, 0, 0, 1, 1),
        (0, 0, -1, 1)]


@needs_torch
@pytest.mark.parametrize("pad", PADS)
@pytest.mark.parametrize("name", ["float32", "int64", "bool", "bfloat16"])
def test_pad_matches_torch(pad, name):
    a = np.arange(24).reshape(2, 3, 4) % 3
    x = pith.tensor(a.tolist(), dtype=pdtype(name)).transpose(1, 2)
    t = torch.tensor(a.tolist(), dtype=getattr(torch, name)).transpose(1, 2)
    value = None if name == "bool" else 2.5
    got = pith.nn.functional.pad(x, pad, value=value)
    want = torch.nn.functional.pad(t, pad, value=value)
    assert_matches_torch(got, want)
    assert got.is_contiguous()


@needs_torch
@pytest.mark.parametrize("pad", PADS)
def test_pad_gradient_matches_torch(pad):
    """The gradient reaches the input through the padded region only (it was lost once:
    the region was written through a narrow() view of a tensor without history)."""
    rng = np.random.default_rng(0)
    a = rng.random((2, 4, 3))
    x = pith.tensor(a, requires_grad=True)
    t = torch.tensor(a, requires_grad=True)
    y = pith.nn.functional.pad(x.transpose(1, 2), pad, value=2.5)
    z = torch.nn.functional.pad(t.transpose(1, 2), pad, value=2.5)
    w = rng.random(tuple(z.shape))
    (y * pith.tensor(w)).sum().backward()
    (z * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)
    assert pith.autograd.gradcheck(
        lambda v: pith.nn.functional.pad(v, pad, value=2.5), (x.detach().requires_grad_(),))


@pytest.mark.parametrize("call, error, fragment", [
    (lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1,)), RuntimeError,
     "Padding length must be divisible by 2"),
    (lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1,) * 6), RuntimeError,
     "Padding length should be less than or equal to two times the input dimension"),
    (lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (-2, -2)), RuntimeError,
     "length must be non-negative"),
    (lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1, 1), mode="bogus"),
     NotImplementedError, "Unrecognised padding mode bogus"),
    (lambda lib: lib.nn.functional.pad(lib.ones(2, 3), (1, 1), mode="reflect", value=1.0),
     RuntimeError, "doesn't take in value argument"),
])
def test_pad_errors_are_torchs(call, error, fragment):
    assert_raises_like_torch(call, error, fragment)


def test_pad_modes_other_than_constant_are_refused_by_name():
    with pytest.raises(NotImplementedError, match="'reflect'"):
        pith.nn.functional.pad(pith.ones(1, 2, 3), (1, 1), mode="reflect")


# ---- pith.utils.checkpoint -----------------------------------------------------------------

@pytest.mark.filterwarnings("ignore:None of the inputs have requires_grad=True")
def test_checkpoint_forward_runs_the_function_once_with_torchs_checks():
    from pith.utils.checkpoint import checkpoint, checkpoint_sequential
    calls = []

    def f(x, y=1):
        calls.append(1)
        return x * 2 + y
    assert checkpoint(f, pith.ones(2), use_reentrant=False, y=3).tolist() == [5.0, 5.0]
    assert len(calls) == 1
    with pytest.warns(UserWarning, match="use_reentrant parameter should be passed"):
        checkpoint(f, pith.ones(2))
    with pytest.raises(ValueError, match="Unexpected keyword arguments: y"):
        checkpoint(f, pith.ones(2), use_reentrant=True, y=3)
    seq = nn.Sequential(nn.ReLU(), nn.Tanh(), nn.Sigmoid())
    x = pith.tensor([-1.0, 0.5, 2.0])
    assert (checkpoint_sequential(seq, 2, x, use_reentrant=False) == seq(x)).all()
    if torch is not None:
        from torch.utils.checkpoint import checkpoint_sequential as torch_sequential
        tseq = torch.nn.Sequential(torch.nn.ReLU(), torch.nn.Tanh(), torch.nn.Sigmoid())
        want = torch_sequential(tseq, 2, torch.tensor([-1.0, 0.5, 2.0]), use_reentrant=False)
        assert_matches_torch(checkpoint_sequential(seq, 2, x, use_reentrant=False), want)
