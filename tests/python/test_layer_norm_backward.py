"""_layer_norm_backward_input (kernels/normalisation.c): layer_norm's input gradient as one
row-wise kernel, which layer_norm's backward formula calls (ops/ops.toml), against the
gradient of torch's layer_norm; and its own derivative (double backward) through gradcheck
and gradgradcheck in float64."""
import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pith  # noqa: E402

backward_input = pith.ops.pith._layer_norm_backward_input
TOL = {torch.float32: (2e-5, 2e-6), torch.float64: (1e-12, 1e-13),
       torch.float16: (1e-2, 2e-3), torch.bfloat16: (8e-2, 2e-2)}


def as_pith(t):
    if t is None:
        return None
    if t.dtype in (torch.float16, torch.bfloat16):
        return pith.from_numpy(t.float().numpy()).to(getattr(pith, str(t.dtype).split(".")[1]))
    return pith.from_numpy(t.numpy())


def to_torch(t):
    if t.dtype in (pith.float16, pith.bfloat16):
        return torch.from_numpy(t.float().numpy()).to(getattr(torch, str(t.dtype).split(".")[1]))
    return torch.from_numpy(t.numpy())


def torch_input_grad(g, x, shape, w, eps):
    x = x.clone().requires_grad_(True)
    y = torch.nn.functional.layer_norm(x, shape, w, None, eps)
    return torch.autograd.grad(y, x, g)[0]


CASES = [((8, 16, 64), [64], True, 1e-5), ((4, 5, 6), [5, 6], False, 1e-5),
         ((7, 33), [33], True, 0.1), ((3, 1), [1], False, 1e-5), ((0, 4), [4], True, 1e-5)]


@pytest.mark.parametrize("dtype", list(TOL))
@pytest.mark.parametrize("sizes,shape,with_weight,eps", CASES)
def test_values_match_torchs_gradient(sizes, shape, with_weight, eps, dtype):
    gen = torch.Generator().manual_seed(0)
    x = (torch.randn(sizes, generator=gen, dtype=torch.float64) * 2 + 1).to(dtype)
    g = torch.randn(sizes, generator=gen, dtype=torch.float64).to(dtype)
    w = torch.randn(shape, generator=gen, dtype=torch.float64).to(dtype) if with_weight else None
    want = torch_input_grad(g, x, shape, w, eps)
    got = backward_input(as_pith(g), as_pith(x), shape, as_pith(w), eps)
    assert got.dtype == as_pith(x).dtype and tuple(got.shape) == tuple(sizes)
    rtol, atol = TOL[dtype]
    # float64 against the float64 reference of the same formula: a few roundings
    exact = torch_input_grad(g.double(), x.double(), shape, None if w is None else w.double(),
                             eps)
    torch.testing.assert_close(to_torch(got).double(), exact, rtol=rtol, atol=atol)
    torch.testing.assert_close(to_torch(got).double(), want.double(), rtol=rtol * 2,
                               atol=atol * 2)


def test_strided_inputs_and_threads_give_the_same_bits():
    x = pith.randn(64, 96)
    g = pith.randn(64, 96)
    w = pith.randn(96)
    whole = backward_input(g, x, [96], w, 1e-5).numpy()
    xt, gt = x.t().contiguous().t(), g.t().contiguous().t()  # the same values, strided
    assert not xt.is_contiguous()
    assert np.array_equal(backward_input(gt, xt, [96], w, 1e-5).numpy(), whole)
    threads = pith.get_num_threads()
    try:
        pith.set_num_threads(1)
        one = backward_input(g, x, [96], w, 1e-5).numpy()
        pith.set_num_threads(max(2, threads))
        many = backward_input(g, x, [96], w, 1e-5).numpy()
    finally:
        pith.set_num_threads(threads)
    assert np.array_equal(one, whole) and np.array_equal(many, whole)


def test_errors():
    x = pith.randn(2, 3)
    with pytest.raises(ValueError, match="normalized_shape"):
        backward_input(x, x, [4])
    with pytest.raises(ValueError, match="weight"):
        backward_input(x, x, [3], pith.randn(4))
    with pytest.raises(ValueError, match="grad_out of the input's shape"):
        backward_input(pith.randn(3), x, [3])
    with pytest.raises(TypeError, match="grad_out to have dtype float32"):
        backward_input(x.double(), x, [3])
    with pytest.raises(TypeError, match="floating point"):
        backward_input(x.long(), x.long(), [3])


def test_layer_norms_gradient_is_the_kernels():
    x = pith.randn(4, 8, requires_grad=True)
    w = pith.randn(8, requires_grad=True)
    b = pith.randn(8, requires_grad=True)
    g = pith.randn(4, 8)
    y = pith.nn.functional.layer_norm(x, [8], w, b, 1e-5)
    assert type(y.grad_fn).__name__ == "NativeLayerNormBackward0"
    dx, dw, db = pith.autograd.grad(y, (x, w, b), g)
    assert np.array_equal(dx.numpy(), backward_input(g, x.detach(), [8], w.detach(), 1e-5).numpy())


@pytest.mark.parametrize("with_weight", [True, False])
@pytest.mark.parametrize("shape", [[6], [3, 6]])
def test_gradcheck_and_gradgradcheck_in_float64(with_weight, shape):
    x = (pith.randn(2, 3, 6, dtype=pith.float64) * 2).requires_grad_(True)
    w = pith.randn(shape, dtype=pith.float64).requires_grad_(True) if with_weight else None
    b = pith.randn(shape, dtype=pith.float64).requires_grad_(True) if with_weight else None
    inputs = (x, w, b) if with_weight else (x,)
    fn = (lambda x, w, b: pith.nn.functional.layer_norm(x, shape, w, b, 1e-5)) if with_weight \
        else (lambda x: pith.nn.functional.layer_norm(x, shape, None, None, 1e-5))
    assert pith.autograd.gradcheck(fn, inputs)
    assert pith.autograd.gradgradcheck(fn, inputs)
    g = pith.randn(2, 3, 6, dtype=pith.float64).requires_grad_(True)
    bwd = (lambda g, x, w: backward_input(g, x, shape, w, 1e-5)) if with_weight \
        else (lambda g, x: backward_input(g, x, shape, None, 1e-5))
    args = (g, x, w) if with_weight else (g, x)
    assert pith.autograd.gradcheck(bwd, args)
    assert pith.autograd.gradgradcheck(bwd, args)


def test_double_backward_matches_torch():
    gen = torch.Generator().manual_seed(1)
    x64, w64, b64, g64, gg64 = (torch.randn(s, generator=gen, dtype=torch.float64)
                                for s in [(3, 5), (5,), (5,), (3, 5), (3, 5)])
    tx, tw, tb, tg = (t.clone().requires_grad_(True) for t in (x64, w64, b64, g64))
    ty = torch.nn.functional.layer_norm(tx, [5], tw, tb, 1e-5)
    (tdx,) = torch.autograd.grad(ty, tx, tg, create_graph=True)
    want = torch.autograd.grad(tdx, (tx, tw, tg), gg64)
    px, pw, pb, pg = (pith.from_numpy(t.numpy()).requires_grad_(True)
                      for t in (x64, w64, b64, g64))
    py = pith.nn.functional.layer_norm(px, [5], pw, pb, 1e-5)
    (pdx,) = pith.autograd.grad(py, px, pg, create_graph=True)
    got = pith.autograd.grad(pdx, (px, pw, pg), pith.from_numpy(gg64.numpy()))
    for a, b in zip(got, want):
        assert np.allclose(a.numpy(), b.numpy(), rtol=1e-10, atol=1e-12)
