"""F.scaled_dot_product_attention against PyTorch's: random batch dims, lengths and head
sizes (empty ones included), layouts, bool and additive float masks that broadcast,
is_causal with L != S, scale, enable_gqa, float16/bfloat16, dropout, and the errors of bad
input; and a nanoGPT-style causal self-attention block with PyTorch's weights.

Tolerances: float32 within 1e-5 (relative and absolute) of PyTorch's, float64 within 1e-10,
float16/bfloat16 within conftest's TOLERANCE of the dtype."""
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pith
import pith.nn as nn
import pith.nn.functional as F
from conftest import (PROPERTY, TOLERANCE, assert_matches_torch, assert_raises_like_torch,
                      tensors, to_numpy, to_pith, to_torch)

TOL = {"float32": (1e-5, 1e-5), "float64": (1e-10, 1e-10)}
TOL.update({name: TOLERANCE[name] for name in ("float16", "bfloat16")})


def fresh_torch():
    return pytest.importorskip("torch")


def assert_close_to_torch(got, expected):
    rtol, atol = TOL[str(expected.dtype).replace("torch.", "")]
    assert_matches_torch(got, expected, rtol=rtol, atol=atol)


def test_functional_has_scaled_dot_product_attention():
    # nanoGPT picks its attention path with this test.
    assert hasattr(F, "scaled_dot_product_attention")


@st.composite
def attention_cases(draw):
    """Shapes, masks and options of one attention call; the arrays come with them."""
    batch = tuple(draw(st.lists(st.integers(0, 2), max_size=2)))
    kv_heads = draw(st.integers(1, 2))
    gqa = draw(st.booleans())
    q_heads = kv_heads * (draw(st.integers(1, 3)) if gqa else 1)
    length, source, embed, value_embed = (draw(st.integers(0, 5)), draw(st.integers(0, 5)),
                                          draw(st.integers(0, 6)), draw(st.integers(1, 5)))
    with_heads = gqa or draw(st.booleans())
    heads = lambda h: (h,) if with_heads else ()  # noqa: E731
    mask_kind = draw(st.sampled_from([None, "bool", "float", "causal"]))
    scores_shape = batch + heads(q_heads) + (length, source)
    mask_shape = None
    if mask_kind in ("bool", "float"):
        keep = draw(st.integers(2, len(scores_shape)))
        mask_shape = tuple(1 if draw(st.booleans()) else s
                           for s in scores_shape[len(scores_shape) - keep:])
    return dict(q=batch + heads(q_heads) + (length, embed),
                k=batch + heads(kv_heads) + (source, embed),
                v=batch + heads(kv_heads) + (source, value_embed),
                gqa=gqa, mask_kind=mask_kind, mask_shape=mask_shape,
                # Not a negative scale (PyTorch's math backend takes its square root and
                # gives NaN, its flash backend does not; which runs depends on the shapes),
                # nor 0 with is_causal (PyTorch's 4-D flash path then gives NaN: -inf * 0).
                scale=draw(st.sampled_from([None, 0.5, 2.0]
                                           + ([] if mask_kind == "causal" else [0.0]))))


@PROPERTY
@given(case=attention_cases(), data=st.data(), dtype=st.sampled_from(["float32", "float64"]))
def test_attention_matches_torch(case, data, dtype):
    torch = fresh_torch()
    (q, qa), (k, ka), (v, va) = (data.draw(tensors(dtype, case[n], lo=-3, hi=3))
                                 for n in "qkv")
    ours, theirs = {}, {}
    if case["mask_kind"] == "causal":
        ours["is_causal"] = theirs["is_causal"] = True
    elif case["mask_kind"] == "bool":
        mask, ma = data.draw(tensors("bool", case["mask_shape"]))
        ours["attn_mask"], theirs["attn_mask"] = mask, to_torch(ma, "bool")
    elif case["mask_kind"] == "float":
        # additive: 0, a finite bias or -inf (whole rows of -inf attend nothing)
        rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
        ma = rng.choice([0.0, -1.5, 2.0, -math.inf], size=case["mask_shape"]).astype(dtype)
        ours["attn_mask"], theirs["attn_mask"] = to_pith(ma), to_torch(ma, dtype)
    ours["scale"] = theirs["scale"] = case["scale"]
    ours["enable_gqa"] = theirs["enable_gqa"] = case["gqa"]
    expected = torch.nn.functional.scaled_dot_product_attention(
        to_torch(qa, dtype), to_torch(ka, dtype), to_torch(va, dtype), **theirs)
    got = F.scaled_dot_product_attention(q, k, v, **ours)
    assert_close_to_torch(got, expected)


@pytest.mark.parametrize("length,source", [(3, 5), (5, 3), (4, 4), (1, 6)])
def test_is_causal_is_the_top_left_lower_triangle_like_torch(length, source):
    torch = fresh_torch()
    rng = np.random.default_rng(length * 10 + source)
    q, k, v = (rng.standard_normal(s).astype(np.float32)
               for s in ((2, length, 4), (2, source, 4), (2, source, 3)))
    expected = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v), is_causal=True)
    got = F.scaled_dot_product_attention(to_pith(q), to_pith(k), to_pith(v), is_causal=True)
    assert_close_to_torch(got, expected)
    # The same as an explicit mask of the lower triangle.
    mask = pith.ones(length, source, dtype=pith.bool).tril()
    explicit = F.scaled_dot_product_attention(to_pith(q), to_pith(k), to_pith(v),
                                              attn_mask=mask)
    np.testing.assert_array_equal(to_numpy(got), to_numpy(explicit))


def test_rows_that_attend_nothing_are_zero():
    q, k, v = pith.rand(3, 4), pith.rand(5, 4), pith.rand(5, 2)
    mask = pith.ones(3, 5, dtype=pith.bool)
    mask[1] = False
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    assert out[1].tolist() == [0.0, 0.0]
    assert (out[0] != 0).all()
    empty_source = F.scaled_dot_product_attention(q, pith.zeros(0, 4), pith.zeros(0, 2))
    assert empty_source.tolist() == [[0.0, 0.0]] * 3


def test_default_scale_is_one_over_sqrt_of_the_head_size():
    q, k, v = pith.rand(2, 3, 16), pith.rand(2, 5, 16), pith.rand(2, 5, 4)
    default = F.scaled_dot_product_attention(q, k, v)
    explicit = F.scaled_dot_product_attention(q, k, v, scale=0.25)
    np.testing.assert_allclose(to_numpy(default), to_numpy(explicit), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("name", ["float16", "bfloat16"])
@pytest.mark.parametrize("mask", [None, "bool", "float32"])
def test_half_precision_attention_matches_torch(name, mask):
    torch = fresh_torch()
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal(s) for s in ((2, 3, 4, 8), (2, 3, 6, 8), (2, 3, 6, 5)))
    m = rng.random((4, 6)) > 0.3
    if mask == "float32":
        m = np.where(m, 0.0, -math.inf).astype(np.float32)
    ours = {} if mask is None else {"attn_mask": to_pith(m)}
    theirs = {} if mask is None else {"attn_mask": torch.from_numpy(m)}
    expected = torch.nn.functional.scaled_dot_product_attention(
        to_torch(q, name), to_torch(k, name), to_torch(v, name), **theirs)
    half = getattr(pith, name)
    got = F.scaled_dot_product_attention(to_pith(q).to(half), to_pith(k).to(half),
                                         to_pith(v).to(half), **ours)
    assert_close_to_torch(got, expected)


def test_float64_attention_takes_a_float32_mask_like_torch():
    torch = fresh_torch()
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal(s) for s in ((3, 4), (5, 4), (5, 2)))
    m = rng.standard_normal((3, 5)).astype(np.float32)
    expected = torch.nn.functional.scaled_dot_product_attention(
        torch.from_numpy(q), torch.from_numpy(k), torch.from_numpy(v),
        attn_mask=torch.from_numpy(m))
    got = F.scaled_dot_product_attention(to_pith(q), to_pith(k), to_pith(v),
                                         attn_mask=to_pith(m))
    assert_close_to_torch(got, expected)


# ---- dropout ---------------------------------------------------------------------------------

def test_dropout_one_zeroes_the_output():
    q, k, v = pith.rand(2, 3, 4), pith.rand(2, 5, 4), pith.rand(2, 5, 3)
    out = F.scaled_dot_product_attention(q, k, v, dropout_p=1.0)
    assert to_numpy(out).tolist() == np.zeros((2, 3, 3)).tolist()


def test_dropout_drops_attention_weights_and_rescales_the_rest():
    # Uniform weights 1/S over a value of ones: each output counts the kept weights, scaled
    # by 1 / (1 - p), so it is a multiple of 1 / (S (1 - p)) and its mean is about 1.
    pith.manual_seed(3)
    p, source = 0.25, 8
    q, k = pith.zeros(4000, 1, 2), pith.zeros(4000, source, 2)
    out = to_numpy(F.scaled_dot_product_attention(q, k, pith.ones(4000, source, 1),
                                                  dropout_p=p))
    counts = out * (source * (1 - p))
    np.testing.assert_allclose(counts, np.round(counts), atol=1e-4)
    assert abs(out.mean() - 1) < 0.02
    assert (counts < source - 0.5).any()  # something was dropped


def test_dropout_p_zero_or_below_is_no_dropout_like_torch():
    q, k, v = pith.rand(2, 3, 4), pith.rand(2, 5, 4), pith.rand(2, 5, 3)
    plain = to_numpy(F.scaled_dot_product_attention(q, k, v))
    for p in (0.0, -0.5, 0):
        np.testing.assert_array_equal(
            to_numpy(F.scaled_dot_product_attention(q, k, v, dropout_p=p)), plain)


# ---- a nanoGPT block ------------------------------------------------------------------------

def causal_self_attention(lib, n_embd, n_head):
    class CausalSelfAttention(lib.nn.Module):
        """nanoGPT's attention block (model.py), on the flash path."""

        def __init__(self):
            super().__init__()
            self.c_attn = lib.nn.Linear(n_embd, 3 * n_embd)
            self.c_proj = lib.nn.Linear(n_embd, n_embd)
            self.resid_dropout = lib.nn.Dropout(0.1)

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(n_embd, dim=2)
            k = k.view(B, T, n_head, C // n_head).transpose(1, 2)
            q = q.view(B, T, n_head, C // n_head).transpose(1, 2)
            v = v.view(B, T, n_head, C // n_head).transpose(1, 2)
            y = lib.nn.functional.scaled_dot_product_attention(
                q, k, v, attn_mask=None, dropout_p=0.1 if self.training else 0,
                is_causal=True)
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    return CausalSelfAttention()


@pytest.mark.parametrize("kind", ["causal", "mask_with_an_empty_row", "float_mask"])
def test_attention_gradients_match_torch(kind):
    # softmax saves its result for backward, so nothing may write the weights in place
    # (that raised "modified by an inplace operation" at backward); a row that attends
    # nothing gets zero gradients, as PyTorch's safe softmax gives.
    torch = fresh_torch()
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal(s).astype(np.float32)
               for s in ((2, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 6)))
    g = rng.standard_normal((2, 3, 4, 6)).astype(np.float32)
    masks = {"causal": None,
             "mask_with_an_empty_row": np.tril(np.ones((4, 5), dtype=bool)),
             "float_mask": rng.standard_normal((4, 5)).astype(np.float32)}
    mask = masks[kind]
    if kind == "mask_with_an_empty_row":
        mask[2] = False
    grads = {}
    for lib in (pith, torch):
        leaves = [lib.tensor(a.tolist(), requires_grad=True) for a in (q, k, v)]
        kwargs = ({"is_causal": True} if mask is None
                  else {"attn_mask": lib.tensor(mask.tolist())})
        out = lib.nn.functional.scaled_dot_product_attention(*leaves, **kwargs)
        out.backward(lib.tensor(g.tolist()))
        grads[lib] = [out.detach()] + [t.grad for t in leaves]
    for got, expected in zip(grads[pith], grads[torch]):
        assert_close_to_torch(got, expected)
    if kind == "mask_with_an_empty_row":
        assert (to_numpy(grads[pith][1])[:, :, 2] == 0).all()


def test_attention_with_dropout_has_gradients():
    q, k, v = (pith.rand(2, 5, 4, requires_grad=True) for _ in range(3))
    F.scaled_dot_product_attention(q, k, v, dropout_p=0.5, is_causal=True).sum().backward()
    assert all(t.grad is not None and tuple(t.grad.shape) == (2, 5, 4) for t in (q, k, v))


def test_nanogpt_attention_block_with_torch_weights_gives_torch_output():
    torch = fresh_torch()
    torch.manual_seed(0)
    theirs, ours = causal_self_attention(torch, 16, 4), causal_self_attention(pith, 16, 4)
    ours.load_state_dict(theirs.state_dict())
    theirs.eval()
    ours.eval()
    x = np.random.default_rng(9).standard_normal((2, 7, 16)).astype(np.float32)
    expected = theirs(torch.from_numpy(x)).detach()
    assert_close_to_torch(ours(to_pith(x)), expected)


def test_nanogpt_attention_block_trains_with_dropout():
    block = causal_self_attention(pith, 8, 2)
    out = block(pith.rand(2, 5, 8))
    assert tuple(out.shape) == (2, 5, 8) and isinstance(block, nn.Module)


# ---- errors --------------------------------------------------------------------------------

def sdpa(lib, q=(2, 3, 4, 8), k=(2, 3, 5, 8), v=(2, 3, 5, 6), dtypes=(None,) * 3, **kwargs):
    tensors = [lib.zeros(s, dtype=getattr(lib, d) if d else None)
               for s, d in zip((q, k, v), dtypes)]
    return lib.nn.functional.scaled_dot_product_attention(*tensors, **kwargs)


def mask(lib, shape, dtype):
    return lib.zeros(shape, dtype=getattr(lib, dtype))


ERRORS = [
    (lambda lib: sdpa(lib, is_causal=True, attn_mask=mask(lib, (4, 5), "bool")),
     RuntimeError, "_scaled_dot_product_attention: Explicit attn_mask should not be set when "
                   "is_causal=True"),
    (lambda lib: sdpa(lib, dtypes=("float64", None, None)),
     RuntimeError, "Expected query, key, and value to have the same dtype, but got query.dtype: "
                   "double key.dtype: float and value.dtype: float instead."),
    (lambda lib: sdpa(lib, dtypes=(None, None, "float16")),
     RuntimeError, "value.dtype: c10::Half instead."),
    (lambda lib: sdpa(lib, dtypes=(None, "int64", None)),
     RuntimeError, "key.dtype: long int and"),
    (lambda lib: sdpa(lib, dtypes=("int64",) * 3),
     RuntimeError, "expected scalar type Float but found Long"),
    (lambda lib: sdpa(lib, q=(8,), k=(8,), v=(6,)),
     RuntimeError, "Expected query, key, and value to all be  at least 2 dimensional, but got "
                   "query.dim: 1 key.dim: 1 and value.dim: 1 instead."),
    (lambda lib: sdpa(lib, attn_mask=mask(lib, (4, 5), "int32")),
     RuntimeError, "Expected attn_mask dtype to be bool or float or to match query dtype, but "
                   "got attn_mask.dtype: int and  query.dtype: float instead."),
    (lambda lib: sdpa(lib, attn_mask=mask(lib, (4, 5), "float64")),
     RuntimeError, "attn_mask.dtype: double and  query.dtype: float"),
    (lambda lib: sdpa(lib, attn_mask=mask(lib, (4, 5), "uint8")),
     RuntimeError, "attn_mask.dtype: unsigned char and"),
    (lambda lib: sdpa(lib, attn_mask=mask(lib, (3, 5), "float32")),
     RuntimeError, "The size of tensor a (4) must match the size of tensor b (3) at "
                   "non-singleton dimension 2"),
    (lambda lib: sdpa(lib, attn_mask=mask(lib, (1, 1, 1, 1, 4, 5), "float32")),
     RuntimeError, "output with shape [2, 3, 4, 5] doesn't match the broadcast shape "
                   "[1, 1, 2, 3, 4, 5]"),
    (lambda lib: sdpa(lib, k=(2, 3, 5, 7)),
     RuntimeError, ""),
    (lambda lib: sdpa(lib, k=(2, 2, 5, 8), v=(2, 2, 5, 6), enable_gqa=True),
     RuntimeError, "Number of heads in key and value must divide the number of heads in "),
    (lambda lib: sdpa(lib, k=(2, 1, 5, 8), v=(2, 2, 5, 6), enable_gqa=True),
     RuntimeError, "Number of heads in key and value must divide the number of heads in "),
    (lambda lib: sdpa(lib, q=(4, 8), k=(5, 8), v=(5, 6), enable_gqa=True),
     IndexError, "Dimension out of range (expected to be in range of [-2, 1], but got -3)"),
    (lambda lib: sdpa(lib, dropout_p=1.5),
     RuntimeError, "dropout probability has to be between 0 and 1, but got 1.5"),
    (lambda lib: lib.nn.functional.scaled_dot_product_attention(1, lib.zeros(2, 2),
                                                                lib.zeros(2, 2)),
     TypeError, "scaled_dot_product_attention(): argument 'query' (position 1) must be Tensor, "
                "not int"),
    (lambda lib: sdpa(lib, attn_mask=1.0),
     TypeError, "argument 'attn_mask' must be Tensor, not float"),
    (lambda lib: sdpa(lib, dropout_p="0.5"),
     TypeError, "argument 'dropout_p' must be float, not str"),
    (lambda lib: sdpa(lib, is_causal=1),
     TypeError, "argument 'is_causal'"),
    (lambda lib: sdpa(lib, scale=0.5, foo=1),
     TypeError, "scaled_dot_product_attention() got an unexpected keyword argument 'foo'"),
    (lambda lib: lib.nn.functional.scaled_dot_product_attention(
        lib.zeros(2, 2), lib.zeros(2, 2), lib.zeros(2, 2), None, 0.0, False, 0.5),
     TypeError, "scaled_dot_product_attention() takes from 3 to 6 positional arguments but 7 "
                "were given"),
]


@pytest.mark.parametrize("call,error,fragment", ERRORS)
def test_bad_input_raises_like_torch(call, error, fragment):
    assert_raises_like_torch(call, error, fragment)
