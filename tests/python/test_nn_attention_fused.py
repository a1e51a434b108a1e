"""The fused attention ops (See Note [Fused attention], kernels/attention.c):
_scaled_dot_product_fused_attention and _scaled_dot_product_attention_weights against
PyTorch's F.scaled_dot_product_attention (forward and gradients: causal, float and bool
masks that broadcast, rows that attend nothing, non-contiguous inputs, 3-D and 4-D, float32
and float64), gradcheck and gradgradcheck in float64, which calls take the fused path, what
is saved for backward, and the ops' errors.

Tolerances: float32 within 1e-5 of PyTorch's, float64 within 1e-10."""
import math

import numpy as np
import pytest

import pith
import pith.nn.functional as F
from conftest import assert_matches_torch, to_numpy

torch = pytest.importorskip("torch")

ops = pith.ops.pith
TOL = {"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10)}


def pair(a, name, requires_grad=False):
    """The same values as a pith and a torch tensor."""
    p = pith.tensor(a.tolist(), dtype=getattr(pith, name), requires_grad=requires_grad)
    t = torch.tensor(a.tolist(), dtype=getattr(torch, name), requires_grad=requires_grad)
    return p, t


def close(got, expected):
    rtol, atol = TOL[str(expected.dtype).replace("torch.", "")]
    assert_matches_torch(got, expected, rtol=rtol, atol=atol)


def masks(rng, L, S):
    bool_mask = rng.random((L, S)) > 0.3
    bool_mask[:, 0] = True
    empty = bool_mask.copy()
    empty[1] = False  # a row that attends nothing
    float_mask = rng.standard_normal((L, S))
    float_mask[2, 1:] = -math.inf
    return {"none": None, "causal": None, "bool": bool_mask, "bool_empty_row": empty,
            "float": float_mask, "float_empty_row": np.where(empty, 0.0, -math.inf),
            "bool_broadcast_rows": bool_mask[:1]}


CASES = ["none", "causal", "bool", "bool_empty_row", "float", "float_empty_row",
         "bool_broadcast_rows"]


@pytest.mark.parametrize("name", ["float32", "float64"])
@pytest.mark.parametrize("case", CASES)
@pytest.mark.parametrize("batch", [(3,), (2, 3)])
@pytest.mark.parametrize("layout", ["contiguous", "transposed"])
def test_forward_and_gradients_match_torch(name, case, batch, layout):
    rng = np.random.default_rng(len(batch) * 100 + CASES.index(case))
    L, S, E, Ev = 5, 6, 8, 4
    shapes = [batch + (L, E), batch + (S, E), batch + (S, Ev)]
    if layout == "transposed":  # (.., L, H, E) storage seen as (.., H, L, E), as GPT's heads
        arrays = [rng.standard_normal(s[:-3] + (s[-2], s[-3], s[-1])) if len(s) > 3 else
                  rng.standard_normal(s[:-2] + (s[-1], s[-2])) for s in shapes]
    else:
        arrays = [rng.standard_normal(s) for s in shapes]
    grad = rng.standard_normal(batch + (L, Ev))
    mask = masks(rng, L, S)[case]
    results = {}
    for lib in (pith, torch):
        leaves = []
        for a in arrays:
            p, t = pair(a, name, requires_grad=True)
            leaves.append(p if lib is pith else t)
        def view(x):
            if layout == "contiguous":
                return x
            return x.transpose(-3, -2) if x.dim() > 3 else x.transpose(-2, -1)

        inputs = [view(x) for x in leaves]
        kwargs = {"is_causal": case == "causal"}
        if mask is not None:
            m = lib.tensor(mask.tolist(), dtype=lib.bool if mask.dtype == bool
                           else getattr(lib, name))
            kwargs["attn_mask"] = m
        out = lib.nn.functional.scaled_dot_product_attention(*inputs, **kwargs)
        g = pair(grad, name)[0 if lib is pith else 1]
        out.backward(g)
        results[lib] = [out.detach()] + [view(x.grad) for x in leaves]
    if case.endswith("empty_row"):
        # PyTorch's math path gives 0 for a row that attends nothing; its fused CPU kernel
        # NaN. pith gives 0, with zero gradients.
        assert (to_numpy(results[pith][0])[..., 1, :] == 0).all()
        assert (to_numpy(results[pith][1])[..., 1, :] == 0).all()
    for got, expected in zip(results[pith], results[torch]):
        close(got, expected)


def test_the_fused_path_is_taken_and_saves_no_weights():
    # GPT's shape: the (B, H, L, S) weights are not among the saved tensors; the output and
    # the logsumexp are.
    q, k, v = (pith.randn(2, 4, 16, 8, requires_grad=True) for _ in range(3))
    saved = []
    with pith.autograd.graph.saved_tensors_hooks(lambda t: saved.append(tuple(t.shape)) or t,
                                                 lambda t: t):
        out = F.scaled_dot_product_attention(q, k, v, is_causal=True)
    assert out.grad_fn.name() == "ScaledDotProductFlashAttentionForCpuBackward0"
    assert (2, 4, 16, 16) not in saved
    assert (2, 4, 16) in saved  # the logsumexp
    # the composed path (dropout) saves the weights
    saved.clear()
    with pith.autograd.graph.saved_tensors_hooks(lambda t: saved.append(tuple(t.shape)) or t,
                                                 lambda t: t):
        F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.1)
    assert (2, 4, 16, 16) in saved


@pytest.mark.parametrize("case", ["none", "causal", "float", "bool_empty_row"])
def test_gradcheck_and_gradgradcheck_in_float64(case):
    rng = np.random.default_rng(11)
    L, S = 4, 5
    q, k, v = (pith.tensor(rng.standard_normal(s).tolist(), dtype=pith.float64,
                           requires_grad=True) for s in ((2, L, 3), (2, S, 3), (2, S, 2)))
    mask = masks(rng, L, S)[case]
    kwargs = {"is_causal": case == "causal"}
    if mask is not None:
        kwargs["attn_mask"] = pith.tensor(mask.tolist(), dtype=pith.bool if mask.dtype == bool
                                          else pith.float64)

    def f(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, **kwargs)

    assert pith.autograd.gradcheck(f, (q, k, v))
    assert pith.autograd.gradgradcheck(f, (q, k, v))


def test_gradcheck_of_the_ops_with_a_float_mask_and_logsumexp():
    rng = np.random.default_rng(12)

    def t(*shape):
        return pith.tensor(rng.standard_normal(shape).tolist(), dtype=pith.float64,
                           requires_grad=True)

    q, k, v, mask = t(2, 3, 4), t(2, 5, 4), t(2, 5, 3), t(3, 5)
    assert pith.autograd.gradcheck(
        lambda q, k, v, m: ops._scaled_dot_product_fused_attention(q, k, v, m, False, 0.6),
        (q, k, v, mask))
    lse = t(2, 3)
    assert pith.autograd.gradcheck(
        lambda q, k, l, m: ops._scaled_dot_product_attention_weights(q, k, l, m, False, 0.6),
        (q, k, lse, mask))


def test_logsumexp_matches_torch():
    rng = np.random.default_rng(13)
    q, k, v = (rng.standard_normal(s) for s in ((2, 4, 3), (2, 5, 3), (2, 5, 2)))
    mask = rng.standard_normal((4, 5))
    out, lse = ops._scaled_dot_product_fused_attention(
        *(pith.tensor(a.tolist(), dtype=pith.float64) for a in (q, k, v, mask)), False, 0.5)
    tq, tk = torch.tensor(q), torch.tensor(k)
    scores = tq @ tk.transpose(-2, -1) * 0.5 + torch.tensor(mask)
    close(lse, scores.logsumexp(-1))
    close(out, scores.softmax(-1) @ torch.tensor(v))


def test_composed_path_cases_still_match():
    # broadcast batch dims, dropout and float16 take the composition; E == 0 too
    q, k, v = pith.randn(2, 3, 4, 8), pith.randn(3, 5, 8), pith.randn(3, 5, 2)
    expected = torch.nn.functional.scaled_dot_product_attention(
        *(torch.tensor(x.tolist()) for x in (q, k, v)))
    close(F.scaled_dot_product_attention(q, k, v), expected)


def test_errors_of_the_ops():
    q, k, v = pith.randn(2, 3, 4), pith.randn(2, 5, 4), pith.randn(2, 5, 3)
    fused = ops._scaled_dot_product_fused_attention
    with pytest.raises(RuntimeError, match="same batch sizes"):
        fused(q, pith.randn(3, 5, 4), pith.randn(3, 5, 3), None, False, 1.0)
    with pytest.raises(RuntimeError, match="query's E"):
        fused(q, pith.randn(2, 5, 3), v, None, False, 1.0)
    with pytest.raises(RuntimeError, match="does not broadcast"):
        fused(q, k, v, pith.zeros(4, 5), False, 1.0)
    with pytest.raises(RuntimeError, match="cannot both be set"):
        fused(q, k, v, pith.zeros(3, 5), True, 1.0)
    with pytest.raises(TypeError, match="float32 or float64"):
        fused(q.to(pith.float16), k.to(pith.float16), v.to(pith.float16), None, False, 1.0)
    with pytest.raises(TypeError, match="query's dtype"):
        fused(q, k.double(), v, None, False, 1.0)
    with pytest.raises(TypeError, match="attn_mask must be bool"):
        fused(q, k, v, pith.zeros(3, 5, dtype=pith.int64), False, 1.0)
    with pytest.raises(RuntimeError, match="logsumexp must have"):
        ops._scaled_dot_product_attention_weights(q, k, pith.zeros(2, 4), None, False, 1.0)


@pytest.mark.parametrize("L,S,E,Ev", [(3, 0, 4, 2), (3, 5, 0, 2), (0, 5, 4, 2), (3, 5, 4, 0),
                                      (0, 0, 0, 0)])
def test_the_op_with_empty_dims_gives_the_composed_result(L, S, E, Ev):
    # scaled_dot_product_attention takes the composition for these; the op gives its result
    # too: no source positions attend nothing (0, logsumexp -inf); E == 0 gives scores of 0.
    q, k, v = pith.randn(2, L, E), pith.randn(2, S, E), pith.randn(2, S, Ev)
    out, lse = ops._scaled_dot_product_fused_attention(q, k, v, None, False, 0.5)
    expected = F.scaled_dot_product_attention(q, k, v, scale=0.5)
    assert tuple(out.shape) == tuple(expected.shape) and tuple(lse.shape) == (2, L)
    np.testing.assert_allclose(to_numpy(out), to_numpy(expected), rtol=1e-6, atol=1e-6)
    if S == 0:
        assert (to_numpy(lse) == -math.inf).all()
    elif E == 0 and L:
        np.testing.assert_allclose(to_numpy(lse), math.log(S), rtol=1e-6)
    for causal in (False, True):
        w = ops._scaled_dot_product_attention_weights(q, k, lse, None, causal, 0.5)
        assert tuple(w.shape) == (2, L, S)
