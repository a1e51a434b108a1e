"""einops on pith tensors: the backend (pith._einops, Note [Registering the einops
backend]) against einops's NumPy backend and torch's, whichever of einops and pith is
imported first; and pith.einops' layers (Rearrange, Reduce, EinMix) against
einops.layers.torch."""
import pickle
import subprocess
import sys

import numpy as np
import pytest

import pith
from conftest import torch_or_none

einops = pytest.importorskip("einops")
torch = torch_or_none()

CASES = [
    ("rearrange", "b c h w -> b (h w) c", {}, (2, 3, 4, 5)),
    ("rearrange", "b (h p1) (w p2) c -> b (h w) (p1 p2 c)", {"p1": 2, "p2": 2}, (2, 4, 6, 3)),
    ("rearrange", "a b -> b a", {}, (0, 3)),
    ("rearrange", "... d -> d ...", {}, (2, 3, 4)),
    ("rearrange", "-> 1 1", {}, ()),
    ("reduce", "b c h w -> b c", {"reduction": "mean"}, (2, 3, 4, 5)),
    ("reduce", "b (h 2) w -> b h w", {"reduction": "max"}, (2, 4, 3)),
    ("reduce", "b h w -> h", {"reduction": "min"}, (2, 3, 4)),
    ("reduce", "b h w -> b", {"reduction": "sum"}, (2, 3, 4)),
    ("reduce", "b h w -> w", {"reduction": "prod"}, (2, 3, 4)),
    ("repeat", "h w -> h w c", {"c": 3}, (2, 4)),
    ("repeat", "h w -> (r h) w", {"r": 2}, (2, 4)),
    ("repeat", "b d -> b n d", {"n": 0}, (2, 3)),
]


def _run(lib_array, fn, pattern, kwargs):
    kwargs = dict(kwargs)
    if fn == "reduce":
        return einops.reduce(lib_array, pattern, kwargs.pop("reduction"), **kwargs)
    return getattr(einops, fn)(lib_array, pattern, **kwargs)


def _values(shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


@pytest.mark.parametrize("fn, pattern, kwargs, shape", CASES, ids=[c[1] for c in CASES])
def test_operations_match_numpy(fn, pattern, kwargs, shape):
    a = _values(shape)
    got = _run(pith.from_numpy(a), fn, pattern, kwargs)
    want = _run(a, fn, pattern, kwargs)
    assert isinstance(got, pith.Tensor)
    np.testing.assert_allclose(got.numpy(), want, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(torch is None, reason="torch is the oracle")
@pytest.mark.parametrize("fn, pattern, kwargs, shape", CASES, ids=[c[1] for c in CASES])
def test_operations_match_torch_layouts(fn, pattern, kwargs, shape):
    a = _values(shape)
    got = _run(pith.from_numpy(a), fn, pattern, kwargs)
    want = _run(torch.from_numpy(a), fn, pattern, kwargs)
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-5, atol=1e-6)
    if fn == "repeat" and got.numel():
        assert got.stride() == want.stride()  # new axes are expanded views, as in torch


def test_integer_and_non_contiguous_inputs():
    a = np.arange(24, dtype=np.int64).reshape(2, 3, 4)
    x = pith.from_numpy(a).transpose(0, 2)
    got = einops.rearrange(x, "a b c -> (a b) c")
    np.testing.assert_array_equal(got.numpy(), einops.rearrange(a.transpose(2, 1, 0),
                                                                "a b c -> (a b) c"))
    assert einops.reduce(pith.from_numpy(a), "a b c -> a", "sum").tolist() == \
        a.sum(axis=(1, 2)).tolist()
    # einops refuses a mean of integers for every backend (is_float_type)
    with pytest.raises(NotImplementedError, match="non-floating"):
        einops.reduce(pith.from_numpy(a), "a b c -> a", "mean")


def test_einsum_pack_and_unpack():
    a, b = _values((2, 3, 4)), _values((2, 3, 5), 1)
    got = einops.einsum(pith.from_numpy(a), pith.from_numpy(b), "n t c, n t d -> c d")
    np.testing.assert_allclose(got.numpy(), np.einsum("ntc,ntd->cd", a, b), rtol=1e-5,
                               atol=1e-5)
    x, y = pith.from_numpy(a), pith.from_numpy(_values((2, 3)))
    packed, ps = einops.pack([x, y], "a b *")
    assert packed.shape == (2, 3, 5)
    back = einops.unpack(packed, ps, "a b *")
    assert [t.shape for t in back] == [x.shape, y.shape]
    assert (back[0] == x).all() and (back[1] == y).all()


def test_errors_are_einops():
    with pytest.raises(einops.EinopsError):
        einops.rearrange(pith.zeros(2, 3), "a b c -> a b c")


def test_backend_is_pith_and_offers_pith_layers():
    from einops._backends import get_backend
    import pith.einops as layers
    backend = get_backend(pith.zeros(1))
    assert backend.framework_name == "pith"
    assert backend.layers() is layers
    assert backend.is_float_type(pith.zeros(1)) and not backend.is_float_type(pith.zeros(
        1, dtype=pith.int32))


@pytest.mark.parametrize("order", ["einops first", "pith first", "pith only"])
def test_import_order(order):
    """The backend exists whichever is imported first; `import pith` alone imports no
    einops (Note [Registering the einops backend])."""
    program = {
        "einops first": "import einops, pith\n"
                        "print(tuple(einops.rearrange(pith.zeros(2, 3), 'a b -> b a').shape))",
        "pith first": "import pith, einops\n"
                      "print(tuple(einops.rearrange(pith.zeros(2, 3), 'a b -> b a').shape))",
        "pith only": "import sys, pith\nprint('einops' in sys.modules)",
    }[order]
    out = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out == ("False" if order == "pith only" else "(3, 2)")


# ---- pith.einops layers --------------------------------------------------------------------

def test_layers_are_modules():
    from pith.einops import EinMix, Rearrange, Reduce
    seq = pith.nn.Sequential(Rearrange("b c h w -> b (c h w)"), pith.nn.Linear(12, 2))
    assert seq(pith.zeros(2, 3, 2, 2)).shape == (2, 2)
    r = Reduce("b c (h h2) -> b c h", "max", h2=2)
    assert repr(r) == "Reduce('b c (h h2) -> b c h', 'max', h2=2)"
    assert r(pith.arange(8.0).reshape(1, 2, 4)).tolist() == [[[1.0, 3.0], [5.0, 7.0]]]
    m = EinMix("b t c -> b t d", weight_shape="c d", bias_shape="d", c=4, d=5)
    assert [k for k, _ in m.named_parameters()] == ["weight", "bias"]
    assert m(pith.zeros(2, 3, 4)).shape == (2, 3, 5)
    again = pickle.loads(pickle.dumps(Rearrange("a b -> b a")))
    assert again(pith.zeros(2, 3)).shape == (3, 2)


@pytest.mark.skipif(torch is None, reason="torch is the oracle")
def test_einmix_matches_torchs():
    from einops.layers.torch import EinMix as TorchEinMix
    from pith.einops import EinMix
    spec = dict(pattern="b t c -> b c t2", weight_shape="t c t2", bias_shape="c t2", t=3,
                c=4, t2=2)
    tm, pm = TorchEinMix(**spec), EinMix(**spec)
    assert list(tm.state_dict()) == list(pm.state_dict())
    pm.load_state_dict({k: pith.from_numpy(v.detach().numpy().copy())
                        for k, v in tm.state_dict().items()})
    x = _values((2, 3, 4))
    with torch.no_grad():
        want = tm(torch.from_numpy(x)).numpy()
    np.testing.assert_allclose(pm(pith.from_numpy(x)).detach().numpy(), want, rtol=1e-5,
                               atol=1e-6)


def test_pith_einops_is_a_lazy_attribute():
    import pith.einops
    assert pith.einops is sys.modules["pith.einops"] and hasattr(pith, "einops")
