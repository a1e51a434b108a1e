"""matmul of every rank combination (1-D.1-D, 2-D.1-D, 1-D.2-D, batched with broadcasting),
mm, bmm and addmm, against NumPy (and PyTorch when installed), with generated sizes (empty
ones included), dtypes and layouts (transposed, stepped, expanded, offset operands)."""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pith
from conftest import (assert_matches_torch, assert_values, examples, tensors, to_torch,
                      torch_or_none)

torch = torch_or_none()
MATMUL_DTYPES = ["float32", "float64"]
ALL_MATMUL_DTYPES = ["float16", "bfloat16", "float32", "float64", "int32", "int64"]


def reference(a, b, name):
    """NumPy's matmul in float64 (exact integers for integer dtypes)."""
    if name.startswith("int"):
        return np.matmul(a.astype(np.int64), b.astype(np.int64)).astype(name)
    return np.matmul(a.astype(np.float64), b.astype(np.float64))


def tolerance(name, k):
    eps = {"float16": 1e-3, "bfloat16": 8e-3, "float32": 1.2e-7, "float64": 2.3e-16}[name]
    return 8 * eps * max(k, 1), 8 * eps * max(k, 1) * 4  # values are in [-2, 2]


@st.composite
def matmul_shapes(draw):
    """Two shapes valid for matmul: every rank pair up to 4-D, batch dims broadcasting."""
    rank_a = draw(st.integers(1, 4))
    rank_b = draw(st.integers(1, 4))
    m, k, n = (draw(st.integers(0, 5)) for _ in range(3))
    batch = tuple(draw(st.lists(st.integers(0, 3), min_size=2, max_size=2)))
    shape_a = (k,) if rank_a == 1 else (m, k)
    shape_b = (k,) if rank_b == 1 else (k, n)

    def batched(shape, rank):
        extra = batch[len(batch) - (rank - 2):] if rank > 2 else ()
        ones = tuple(1 if draw(st.booleans()) else s for s in extra)
        return ones + shape
    return batched(shape_a, rank_a), batched(shape_b, rank_b)


@given(data=st.data())
@examples(120)
def test_matmul_of_every_rank_pair_matches_numpy(data):
    name = data.draw(st.sampled_from(ALL_MATMUL_DTYPES), "dtype")
    shape_a, shape_b = data.draw(matmul_shapes(), "shapes")
    ta, a = data.draw(tensors(name, shape_a, lo=-2, hi=2), "a")
    tb, b = data.draw(tensors(name, shape_b, lo=-2, hi=2), "b")
    out = ta @ tb
    expected = reference(a, b, name)
    rtol, atol = tolerance(name, shape_a[-1]) if name.startswith(("float", "bfloat")) else \
        (None, None)
    assert_values(out, expected, name, rtol=rtol, atol=atol)
    assert_values(pith.matmul(ta, tb), expected, name, rtol=rtol, atol=atol)
    if torch is not None:
        assert_matches_torch(out, to_torch(a, name) @ to_torch(b, name), rtol=rtol, atol=atol)


@given(data=st.data())
@examples(60)
def test_mm_matches_numpy(data):
    name = data.draw(st.sampled_from(MATMUL_DTYPES), "dtype")
    m, k, n = (data.draw(st.integers(0, 6)) for _ in range(3))
    ta, a = data.draw(tensors(name, (m, k), lo=-2, hi=2), "a")
    tb, b = data.draw(tensors(name, (k, n), lo=-2, hi=2), "b")
    rtol, atol = tolerance(name, k)
    assert_values(pith.mm(ta, tb), reference(a, b, name), name, rtol=rtol, atol=atol)
    assert_values(ta.mm(tb), reference(a, b, name), name, rtol=rtol, atol=atol)


@given(data=st.data())
@examples(60)
def test_bmm_matches_numpy(data):
    name = data.draw(st.sampled_from(MATMUL_DTYPES), "dtype")
    bsz, m, k, n = (data.draw(st.integers(0, 4)) for _ in range(4))
    ta, a = data.draw(tensors(name, (bsz, m, k), lo=-2, hi=2), "a")
    tb, b = data.draw(tensors(name, (bsz, k, n), lo=-2, hi=2), "b")
    rtol, atol = tolerance(name, k)
    assert_values(pith.bmm(ta, tb), reference(a, b, name), name, rtol=rtol, atol=atol)


@given(data=st.data())
@examples(60)
def test_addmm_matches_numpy(data):
    name = data.draw(st.sampled_from(MATMUL_DTYPES), "dtype")
    m, k, n = (data.draw(st.integers(0, 6)) for _ in range(3))
    bias_shape = data.draw(st.sampled_from([(m, n), (n,), (1, n), (m, 1), ()]), "bias shape")
    tc, c = data.draw(tensors(name, bias_shape, lo=-2, hi=2), "bias")
    ta, a = data.draw(tensors(name, (m, k), lo=-2, hi=2), "a")
    tb, b = data.draw(tensors(name, (k, n), lo=-2, hi=2), "b")
    beta = data.draw(st.sampled_from([0, 1, 0.5, 2]), "beta")
    alpha = data.draw(st.sampled_from([0, 1, -1.5]), "alpha")
    out = pith.addmm(tc, ta, tb, beta=beta, alpha=alpha)
    expected = beta * c.astype(np.float64) + alpha * reference(a, b, name)
    expected = np.broadcast_to(expected, (m, n))
    rtol, atol = tolerance(name, k + 2)
    assert_values(out, expected, name, rtol=rtol, atol=atol)
    if torch is not None:
        ref = torch.addmm(to_torch(c, name), to_torch(a, name), to_torch(b, name), beta=beta,
                          alpha=alpha)
        assert_matches_torch(out, ref, rtol=rtol, atol=atol)


# ---- examples ----------------------------------------------------------------------------

def test_vector_dot_vector_is_0_dim():
    out = pith.tensor([1.0, 2.0, 3.0]) @ pith.tensor([4.0, 5.0, 6.0])
    assert out.shape == () and out.item() == 32.0


def test_matrix_times_vector_and_vector_times_matrix():
    m = pith.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    assert (m @ pith.tensor([1.0, 1.0])).tolist() == [3.0, 7.0, 11.0]
    assert (pith.tensor([1.0, 0.0, 1.0]) @ m).tolist() == [6.0, 8.0]


def test_batched_matmul_broadcasts_batch_dims():
    a = pith.ones(2, 1, 3, 4)
    b = pith.ones(5, 4, 2)
    out = a @ b
    assert out.shape == (2, 5, 3, 2) and out.tolist()[1][4][2] == [4.0, 4.0]


def test_empty_inner_dim_gives_zeros():
    out = pith.ones(2, 0) @ pith.ones(0, 3)
    assert out.tolist() == [[0.0] * 3] * 2


def test_matmul_of_transposed_operands():
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    t = pith.tensor(a.tolist())
    assert_values(t.t() @ t, a.T @ a, "float32")
    assert_values(t @ t.t(), a @ a.T, "float32")


def test_large_matmul_matches_numpy():
    rng = np.random.default_rng(0)
    a = rng.standard_normal((70, 130)).astype(np.float32)
    b = rng.standard_normal((130, 90)).astype(np.float32)
    out = pith.tensor(a.tolist()) @ pith.tensor(b.tolist())
    assert_values(out, a.astype(np.float64) @ b.astype(np.float64), "float32", rtol=1e-4,
                  atol=1e-4)


@pytest.mark.parametrize("shapes", [((8, 1, 256), (8, 256, 256)),  # GEMVs above BLAS's
                                    ((6, 300, 1), (6, 1, 200)),      # threshold for threads
                                    ((4, 96, 80), (4, 80, 72)),      # GEMMs
                                    ((3, 1, 256), (3, 256, 256))])   # uneven shares: serial
def test_large_separate_batches_give_the_same_bits_at_every_thread_count(shapes):
    """Separate batches too large for one BLAS thread each run one per thread of pith's
    region when the shares are even (Note [Vector products]); the bits are the serial
    ones, and both match NumPy."""
    rng = np.random.default_rng(3)
    a = rng.standard_normal(shapes[0]).astype(np.float32)
    b = rng.standard_normal(shapes[1]).astype(np.float32)
    pa, pb = pith.tensor(a.tolist()), pith.tensor(b.tolist())
    saved = pith.get_num_threads()
    try:
        results = []
        for threads in (1, 2):
            pith.set_num_threads(threads)
            results.append(np.array((pa @ pb).tolist(), dtype=np.float32))
    finally:
        pith.set_num_threads(saved)
    assert results[0].tobytes() == results[1].tobytes()
    assert_values(pith.tensor(results[1].tolist()), np.matmul(a.astype(np.float64), b),
                  "float32", rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("expr", ["pith.ones(2, 3) @ pith.ones(2, 3)",
                                  "pith.ones(3) @ pith.ones(4)",
                                  "pith.mm(pith.ones(2, 3), pith.ones(4, 2))",
                                  "pith.bmm(pith.ones(2, 2, 3), pith.ones(3, 3, 2))",
                                  "pith.ones(2, 2, 3) @ pith.ones(3, 3, 2)"])
def test_mismatched_matmul_shapes_raise_runtime_error(expr):
    with pytest.raises(RuntimeError):
        eval(expr, {"pith": pith})


def test_matmul_of_a_0_dim_tensor_raises():
    with pytest.raises(RuntimeError, match="at least 1-dimensional|1D"):
        pith.tensor(2.0) @ pith.ones(2)


def test_mm_of_a_1_d_tensor_raises():
    with pytest.raises(RuntimeError, match="must be a matrix"):
        pith.mm(pith.ones(3), pith.ones(3, 2))


def test_matmul_of_mixed_dtypes_raises_like_torch():
    with pytest.raises(RuntimeError, match="same dtype|dtype"):
        pith.ones(2, 2) @ pith.ones(2, 2, dtype=pith.float64)
    if torch is not None:
        with pytest.raises(RuntimeError):
            torch.ones(2, 2) @ torch.ones(2, 2, dtype=torch.float64)
