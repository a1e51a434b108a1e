"""gelu_backward (kernels/activations.c): gelu's derivative in one vectorised pass, which
gelu's backward formula calls (ops/ops.toml), against PyTorch's aten.gelu_backward; and its
own derivative (double backward) through gradcheck and gradgradcheck in float64."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pith  # noqa: E402

gelu_backward = pith.ops.pith.gelu_backward
APPROXIMATIONS = ["none", "tanh"]
EPS = {torch.float32: 2.0 ** -24, torch.float64: 2.0 ** -53,
       torch.float16: 2.0 ** -11, torch.bfloat16: 2.0 ** -8}


def inputs(n=4099, seed=0):
    """grad_output and self in float64: wide, near 0 and the tails where exp and erf
    underflow, and GELU's turning point (-0.7518) where the derivative changes sign."""
    g = torch.Generator().manual_seed(seed)
    x = torch.cat([torch.randn(n, generator=g, dtype=torch.float64) * 3,
                   torch.linspace(-12, 12, 997, dtype=torch.float64),
                   torch.linspace(-0.8, -0.7, 101, dtype=torch.float64),
                   torch.tensor([0.0, -0.0, 1e-30, -1e-30, 1e-45, -1e-45, 1e-310, 1e-19,
                                 -1e-21, 30.0, -30.0, float("inf"), float("-inf"),
                                 float("nan")], dtype=torch.float64)])
    return torch.randn(x.shape, generator=g, dtype=torch.float64), x


def magnitude(g, x, approximate):
    """|grad| times (1 + the sum of the magnitudes of the terms of GELU'(x)): the scale an
    error of a few roundings is measured against. The terms cancel near the turning point,
    and (1 + erf) / 2 and (1 + t) / 2 are computed as PyTorch's are, to an absolute error
    of a rounding of 1: in the left tail they are 0 where the exact value is tiny."""
    if approximate == "tanh":
        k, c = (2 / np.pi) ** 0.5, 0.044715
        t = torch.tanh(k * (x + c * x ** 3))
        # 1 - t^2 is computed as PyTorch's is: an error of an ulp of t is one of 1 - t^2
        # too, times the factor x/2 k (1 + 3 c x^2) it multiplies
        terms = 0.5 * (1 + t) + (0.5 * x * k * (1 + 3 * c * x * x)).abs()
    else:
        terms = 0.5 * (1 + torch.erf(x / 2 ** 0.5)) + (x * torch.exp(-x * x / 2)).abs() / (
            2 * np.pi) ** 0.5
    return g.abs() * (1 + terms)


def as_pith(t):
    return pith.from_numpy(t.numpy()) if t.dtype not in (torch.float16, torch.bfloat16) else \
        pith.from_numpy(t.float().numpy()).to(getattr(pith, str(t.dtype).split(".")[1]))


def to_torch(t):
    if t.dtype in (pith.float16, pith.bfloat16):
        return torch.from_numpy(t.float().numpy()).to(getattr(torch, str(t.dtype).split(".")[1]))
    return torch.from_numpy(t.numpy())


@pytest.mark.parametrize("approximate", APPROXIMATIONS)
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64])
def test_values_are_within_a_few_roundings_of_the_exact_derivative(dtype, approximate):
    g64, x64 = inputs()
    g, x = g64.to(dtype), x64.to(dtype)
    exact = torch.ops.aten.gelu_backward(g.double(), x.double(), approximate=approximate)
    ours = to_torch(gelu_backward(as_pith(g), as_pith(x), approximate=approximate))
    theirs = torch.ops.aten.gelu_backward(g, x, approximate=approximate)
    assert ours.dtype == theirs.dtype == dtype
    scale = magnitude(g.double(), x.double(), approximate) * EPS[dtype]
    # NaN where torch's is (x infinite: inf * 0 in x phi(x)), and nowhere else
    assert torch.equal(ours.isnan(), theirs.isnan()) and ours.isnan().sum() == 3
    ours_err = ((ours.double() - exact).abs() / scale).nan_to_num(0).max().item()
    theirs_err = ((theirs.double() - exact).abs() / scale).nan_to_num(0).max().item()
    # erf, exp and tanh within 2 ulps (the op file's vecmath bounds) and a few roundings
    # after them: measured 1.2 to 1.9 (torch's float32: 2.4 and 1.7)
    assert ours_err <= 4, (ours_err, theirs_err)


@pytest.mark.parametrize("approximate", APPROXIMATIONS)
@pytest.mark.parametrize("dtype", [torch.float16, torch.bfloat16])
def test_reduced_floats_compute_in_float32_and_round_once(dtype, approximate):
    g64, x64 = inputs(1000)
    g, x = g64.to(dtype), x64.to(dtype)
    ours = to_torch(gelu_backward(as_pith(g), as_pith(x), approximate=approximate))
    theirs = torch.ops.aten.gelu_backward(g, x, approximate=approximate)
    assert ours.dtype == dtype
    # the float32 results differ by a few float32 ulps, so the rounded ones by at most one
    # step of the 16-bit type
    scale = magnitude(g.double(), x.double(), approximate) * EPS[dtype] * 2
    assert torch.equal(ours.isnan(), theirs.isnan())
    assert ((ours.double() - theirs.double()).abs() <= scale + 1e-30)[~theirs.isnan()].all()


@pytest.mark.parametrize("approximate", APPROXIMATIONS)
def test_strided_broadcast_and_threaded_calls_give_the_same_bits(approximate):
    g64, x64 = inputs(3000)
    g, x = as_pith(g64.float()), as_pith(x64.float())
    whole = gelu_backward(g, x, approximate=approximate).numpy()
    # every other element: the strided path through the chunk buffers
    strided = gelu_backward(g[::2], x[::2], approximate=approximate).numpy()
    assert np.array_equal(strided.view(np.uint32), whole[::2].view(np.uint32))
    # a broadcast grad_output (stride 0): the bits of the same values laid out in full
    row = gelu_backward(g[:1], x, approximate=approximate).numpy()
    full = gelu_backward(g[:1].expand(x.shape).contiguous(), x, approximate=approximate).numpy()
    assert row.shape == full.shape == whole.shape
    assert np.array_equal(row.view(np.uint32), full.view(np.uint32))
    # promotion against float64
    mixed = gelu_backward(g, x.double(), approximate=approximate)
    assert mixed.dtype == pith.float64
    threads = pith.get_num_threads()
    try:
        pith.set_num_threads(1)
        one = gelu_backward(g, x, approximate=approximate).numpy()
        pith.set_num_threads(max(2, threads))
        many = gelu_backward(g, x, approximate=approximate).numpy()
    finally:
        pith.set_num_threads(threads)
    assert np.array_equal(one.view(np.uint32), whole.view(np.uint32))
    assert np.array_equal(many.view(np.uint32), whole.view(np.uint32))


def test_errors_are_torchs():
    x = pith.randn(3)
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        gelu_backward(x, x, approximate="foo")
    # pith's integer gelu raises PithTypeError where torch raises NotImplementedError
    with pytest.raises(pith.PithTypeError, match="not implemented for dtype int64"):
        gelu_backward(x.long(), x.long())
    with pytest.raises(RuntimeError):
        gelu_backward(pith.randn(3), pith.randn(4))


@pytest.mark.parametrize("approximate", APPROXIMATIONS)
def test_gelu_backward_is_gelus_gradient(approximate):
    x = pith.randn(5, 7, requires_grad=True)
    y = pith.nn.functional.gelu(x, approximate=approximate)
    g = pith.randn(5, 7)
    (dx,) = pith.autograd.grad(y, x, g)
    assert dx.grad_fn is None
    assert np.array_equal(dx.numpy(), gelu_backward(g, x.detach(), approximate=approximate).numpy())
    assert type(y.grad_fn).__name__ == "GeluBackward0"


@pytest.mark.parametrize("approximate", APPROXIMATIONS)
def test_gradcheck_and_gradgradcheck_in_float64(approximate):
    x = pith.randn(4, 6, dtype=pith.float64) * 3
    x.requires_grad_(True)
    fn = lambda t: pith.nn.functional.gelu(t, approximate=approximate)  # noqa: E731
    assert pith.autograd.gradcheck(fn, (x,))
    assert pith.autograd.gradgradcheck(fn, (x,))
    g = pith.randn(4, 6, dtype=pith.float64)
    g.requires_grad_(True)
    bwd = lambda a, b: gelu_backward(a, b, approximate=approximate)  # noqa: E731
    assert pith.autograd.gradcheck(bwd, (g, x))
    assert pith.autograd.gradgradcheck(bwd, (g, x))


@pytest.mark.parametrize("approximate", APPROXIMATIONS)
def test_double_backward_matches_torch(approximate):
    g64, x64 = torch.randn(6, 5, dtype=torch.float64), torch.randn(6, 5, dtype=torch.float64) * 2
    gg64 = torch.randn(6, 5, dtype=torch.float64)
    tx = x64.clone().requires_grad_(True)
    tg = g64.clone().requires_grad_(True)
    (tdx,) = torch.autograd.grad(torch.nn.functional.gelu(tx, approximate=approximate), tx, tg,
                                 create_graph=True)
    want = torch.autograd.grad(tdx, (tx, tg), gg64)
    px = pith.from_numpy(x64.numpy()).requires_grad_(True)
    pg = pith.from_numpy(g64.numpy()).requires_grad_(True)
    (pdx,) = pith.autograd.grad(pith.nn.functional.gelu(px, approximate=approximate), px, pg,
                                create_graph=True)
    assert type(pdx.grad_fn).__name__ == type(tdx.grad_fn).__name__
    got = pith.autograd.grad(pdx, (px, pg), pith.from_numpy(gg64.numpy()))
    for a, b in zip(got, want):
        assert np.allclose(a.numpy(), b.numpy(), rtol=1e-12, atol=1e-12)
