"""sort, argsort, topk, cumsum/cumprod and multinomial from Python: values, indices, result
dtypes and errors against PyTorch (when installed) over generated dtypes, shapes (empty and
0-dim included), layouts (transposed, sliced with steps, expanded, offset) and dims; the call
forms (functions, methods, stable=, out=, in place) and named results; and multinomial's
distribution (frequencies within stated bounds for fixed seeds) and reproducibility with a
pith.Generator. pith's sort is always stable, so it is compared with PyTorch's stable sort.
"""
import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pith
from conftest import (DTYPE_NAMES, FLOAT_NAMES, PROPERTY, examples, np_dtype,
                      pdtype, shapes, tensors, to_numpy, to_torch, torch_or_none,
                      torch_to_numpy)

torch = torch_or_none()
needs_torch = pytest.mark.skipif(torch is None, reason="PyTorch is the oracle")


def dims_of(shape):
    """The dims a tensor of `shape` takes (0 and -1 for a 0-dim one)."""
    n = max(len(shape), 1)
    return st.integers(-n, n - 1)


def assert_same(got, want):
    """pith tensor `got` equals torch tensor `want` exactly: dtype, shape, values (NaN in
    the same places)."""
    assert str(got.dtype).replace("pith.", "") == str(want.dtype).replace("torch.", "")
    assert tuple(got.shape) == tuple(want.shape)
    np.testing.assert_array_equal(to_numpy(got), torch_to_numpy(want))


def sort_reference(a, dim, descending):
    """NumPy's stable order along `dim` (NaN last, as in PyTorch; descending: NaN first,
    then the values from the largest, equal values still in their order): the oracle that
    needs no PyTorch."""
    a = np.asarray(a)
    if a.ndim == 0:
        return a.copy(), np.zeros((), np.int64)
    key = a.astype(np.float64) if a.dtype.kind == "f" else a.astype(np.int64)
    if descending:  # lexsort: the last key is the primary one; it is stable
        idx = np.lexsort((-key, ~np.isnan(key.astype(np.float64))), axis=dim)
    else:
        idx = np.argsort(key, axis=dim, kind="stable")
    return np.take_along_axis(a, idx, axis=dim), idx


# ---- sort and argsort ----------------------------------------------------------------------

@PROPERTY
@given(st.data(), st.sampled_from(DTYPE_NAMES), shapes, st.booleans())
def test_sort_matches_the_stable_reference(data, name, shape, descending):
    x, a = data.draw(tensors(name, shape))
    dim = data.draw(dims_of(shape))
    values, indices = pith.sort(x, dim, descending)
    want_values, want_indices = sort_reference(a, dim if a.ndim else 0, descending)
    np.testing.assert_array_equal(to_numpy(values), want_values)
    np.testing.assert_array_equal(to_numpy(indices), want_indices)
    assert indices.dtype == pith.int64 and values.dtype == x.dtype
    np.testing.assert_array_equal(to_numpy(x.argsort(dim, descending)), want_indices)


@needs_torch
@PROPERTY
@given(st.data(), st.sampled_from(DTYPE_NAMES), shapes, st.booleans())
def test_sort_and_argsort_match_torch(data, name, shape, descending):
    x, a = data.draw(tensors(name, shape))
    dim = data.draw(dims_of(shape))
    t = to_torch(a, name)
    want = torch.sort(t, stable=True, dim=dim, descending=descending)
    got = x.sort(dim=dim, descending=descending)
    assert_same(got.values, want.values)
    assert_same(got.indices, want.indices)
    assert_same(pith.sort(x, stable=False, dim=dim, descending=descending).indices,
                want.indices)  # always stable
    assert_same(pith.argsort(x, dim, descending), torch.argsort(t, dim=dim, descending=descending,
                                                               stable=True))
    assert_same(x.argsort(stable=True, dim=dim, descending=descending), want.indices)


SPECIAL = [3.0, float("nan"), -float("inf"), 0.0, -0.0, 1.0, float("inf"), float("nan"),
           -0.0, 3.0, -2.5]


@needs_torch
@pytest.mark.parametrize("name", FLOAT_NAMES)
@pytest.mark.parametrize("descending", [False, True])
def test_sort_orders_nan_inf_and_zeros_as_torch(name, descending):
    x = pith.tensor(SPECIAL, dtype=pdtype(name))
    t = torch.tensor(SPECIAL, dtype=getattr(torch, name))
    got = pith.sort(x, descending=descending)
    want = torch.sort(t, descending=descending, stable=True)
    assert_same(got.indices, want.indices)
    assert_same(got.values, want.values)
    # the sign of each zero is kept
    assert [np.signbit(v) for v in got.values.tolist()] == \
        [bool(np.signbit(v)) for v in want.values.float().tolist()]


def test_sort_is_stable_on_large_inputs_of_ties():
    """PyTorch's default (stable=False) CPU sort reorders equal elements of long inputs;
    pith's sort is stable whatever `stable` says."""
    x = pith.ones(100000)
    assert x.sort().indices.tolist() == list(range(100000))
    assert x.sort(descending=True).indices[:5].tolist() == [0, 1, 2, 3, 4]
    y = pith.tensor([1, 0] * 5000)
    idx = y.argsort(descending=True).tolist()
    assert idx == list(range(0, 10000, 2)) + list(range(1, 10000, 2))


def test_sort_of_zero_dim_and_empty_tensors():
    s = pith.tensor(2.5)
    for dim in (0, -1):
        v, i = s.sort(dim)
        assert v.shape == () and v.item() == 2.5 and i.item() == 0
    with pytest.raises(IndexError, match=r"range of \[-1, 0\], but got 1"):
        s.sort(1)
    v, i = pith.zeros(2, 0, 3).sort(1)
    assert v.shape == (2, 0, 3) and i.shape == (2, 0, 3) and i.dtype == pith.int64


@needs_torch
@pytest.mark.parametrize("call", [
    lambda m, x: m.sort(x, dim=2), lambda m, x: m.sort(x, dim=-3),
    lambda m, x: m.argsort(x, 5), lambda m, x: m.topk(x, 1, dim=2),
    lambda m, x: m.cumsum(x, 2), lambda m, x: m.cumprod(x, -3)])
def test_bad_dims_are_index_errors_as_in_torch(call):
    with pytest.raises(IndexError) as want:
        call(torch, torch.zeros(2, 3))
    with pytest.raises(IndexError, match="Dimension out of range") as got:
        call(pith, pith.zeros(2, 3))
    assert str(want.value).split("(")[1] in str(got.value)  # the same range and dim


def test_sort_results_are_named_tuples():
    x = pith.tensor([[3, 1, 2]])
    r = pith.sort(x)
    assert type(r).__name__ == "sort" and r._fields == ("values", "indices")
    assert r.values is r[0] and r.indices is r[1]
    t = x.topk(2)
    assert type(t).__name__ == "topk" and t.indices.tolist() == [[0, 2]]


@needs_torch
def test_sort_and_topk_out_return_the_out_tensors():
    a = np.array([[4.0, 1.0, 3.0], [0.5, 2.0, -1.0]], np.float32)
    x, t = pith.tensor(a.tolist()), torch.tensor(a)
    v, i = pith.empty(0), pith.empty(0, dtype=pith.int64)
    r = pith.sort(x, 0, True, out=(v, i))
    assert r.values is v and r.indices is i and type(r).__name__ == "sort"
    want = torch.sort(t, stable=True, dim=0, descending=True)
    assert_same(v, want.values)
    assert_same(i, want.indices)
    r = pith.sort(x, stable=True, dim=1, out=(v, i))  # sort.values_stable, into the same outs
    assert_same(v, torch.sort(t, dim=1).values)
    # into transposed (non-contiguous) outs
    vt, it = pith.zeros(2, 2).t(), pith.zeros(2, 2, dtype=pith.int64).t()
    pith.topk(x, 2, out=(vt, it))
    assert_same(vt, torch.topk(t, 2).values)
    assert_same(it, torch.topk(t, 2).indices)
    o = pith.empty(0, dtype=pith.int64)
    assert pith.argsort(x, stable=True, dim=0, out=o) is o
    assert_same(o, torch.argsort(t, stable=True, dim=0))


@needs_torch
def test_sort_out_errors_match_torch():
    x = pith.tensor([3.0, 1.0, 2.0])
    t = torch.tensor([3.0, 1.0, 2.0])
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
        torch.sort(t, out=(torch.empty(3, dtype=torch.float64), torch.empty(3, dtype=torch.long)))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float32, but got "
                                           "float64 instead"):
        pith.sort(x, out=(pith.empty(3, dtype=pith.float64), pith.empty(3, dtype=pith.int64)))
    with pytest.raises(RuntimeError, match="dtype int64, but got int32"):
        pith.sort(x, out=(pith.empty(3), pith.empty(3, dtype=pith.int32)))
    with pytest.raises(TypeError):
        pith.sort(x, out=(pith.empty(3),))  # two outs are needed
    y = pith.tensor([2, 1])
    with pytest.raises(ValueError, match="must not share memory"):
        pith.sort(y, out=(y, y))


# ---- topk ----------------------------------------------------------------------------------

@needs_torch
@PROPERTY
@given(st.data(), st.sampled_from([n for n in DTYPE_NAMES if n != "bool"]), shapes,
       st.booleans())
def test_topk_matches_torch(data, name, shape, largest):
    x, a = data.draw(tensors(name, shape))
    dim = data.draw(dims_of(shape))
    size = shape[dim] if shape else 1
    k = data.draw(st.integers(0, size))
    t = to_torch(a, name)
    want = torch.topk(t, k, dim, largest=largest)
    got = pith.topk(x, k, dim, largest)
    assert_same(got.values, want.values)
    # Of equal values pith takes the first ones (PyTorch leaves the choice open): the
    # first k of the stable sort.
    stable = torch.sort(t, dim=dim, descending=largest, stable=True).indices
    assert_same(got.indices, stable.narrow(dim if shape else 0, 0, k) if shape else stable)
    assert_same(x.topk(k, dim=dim, largest=largest, sorted=False).values, want.values)


@needs_torch
@pytest.mark.parametrize("largest", [True, False])
def test_topk_counts_nan_as_largest_as_torch(largest):
    a = [1.0, float("nan"), 3.0, -1.0, float("nan")]
    want = torch.topk(torch.tensor(a), 3, largest=largest)
    got = pith.topk(pith.tensor(a), 3, largest=largest)
    assert_same(got.values, want.values)
    assert_same(got.indices, want.indices)


@needs_torch
@pytest.mark.parametrize("k", [-1, 4])
def test_topk_k_out_of_range(k):
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        torch.topk(torch.zeros(3), k)
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        pith.topk(pith.zeros(3), k)


def test_topk_of_zero_dim_empty_and_bool():
    s = pith.tensor(5.0)
    assert s.topk(1).values.item() == 5.0 and s.topk(0).values.shape == ()
    with pytest.raises(RuntimeError, match="selected index k out of range"):
        s.topk(2)
    v, i = pith.zeros(0, 3).topk(2)
    assert v.shape == (0, 2) and i.shape == (0, 2)
    with pytest.raises(RuntimeError, match="topk does not support bool dtypes"):
        pith.tensor([True, False]).topk(1)


# ---- cumsum and cumprod --------------------------------------------------------------------

SCAN_DTYPES = [None] + [n for n in DTYPE_NAMES if n != "bool"]


@needs_torch
@PROPERTY
@given(st.data(), st.sampled_from(DTYPE_NAMES), shapes, st.sampled_from(["cumsum", "cumprod"]),
       st.sampled_from(SCAN_DTYPES))
def test_scans_match_torch(data, name, shape, op, dtype):
    """Exactly: pith accumulates in PyTorch's CPU accumulator types (Note [Scan dtypes and
    accumulators]), so every rounding is the same."""
    lo, hi = (-4, 4) if op == "cumprod" else (None, None)
    x, a = data.draw(tensors(name, shape, lo=lo, hi=hi))
    dim = data.draw(dims_of(shape))
    t = to_torch(a, name)
    kw = {} if dtype is None else {"dtype": pdtype(dtype)}
    tkw = {} if dtype is None else {"dtype": getattr(torch, dtype)}
    assert_same(getattr(pith, op)(x, dim, **kw), getattr(torch, op)(t, dim, **tkw))
    assert_same(getattr(x, op)(dim=dim, **kw), getattr(torch, op)(t, dim, **tkw))


@needs_torch
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_scan_result_dtypes_match_torch(op):
    for name in DTYPE_NAMES:
        a = np.array([1, 0, 1]).astype(np_dtype(name))
        got = getattr(pith, op)(pith.tensor(a.tolist(), dtype=pdtype(name)), 0)
        assert str(got.dtype) == str(getattr(torch, op)(to_torch(a, name), 0).dtype).replace(
            "torch", "pith")


@needs_torch
def test_scans_accumulate_as_torch():
    for name, values in [("float32", [1e8, 1, -1e8]), ("float16", [2048, 1, -2048]),
                         ("bfloat16", [256, 1, -256]), ("int8", [100, 100, 100])]:
        x = pith.tensor(values, dtype=pdtype(name))
        t = torch.tensor(values, dtype=getattr(torch, name))
        assert_same(x.cumsum(0), t.cumsum(0))
        assert_same(x.cumsum(0, dtype=x.dtype), t.cumsum(0, dtype=t.dtype))
        assert_same(x.cumprod(0), t.cumprod(0))


@needs_torch
@pytest.mark.parametrize("op", ["cumsum", "cumprod"])
def test_in_place_scans_match_torch(op):
    for name in [n for n in DTYPE_NAMES if n != "bool"]:
        a = np.arange(12).reshape(3, 4).astype(np_dtype(name)) % 5
        x = pith.tensor(a.tolist(), dtype=pdtype(name)).t()  # non-contiguous
        t = to_torch(a, name).t()
        assert getattr(x, op + "_")(1) is x
        getattr(t, op + "_")(1)
        assert_same(x, t)
    with pytest.raises(NotImplementedError):
        getattr(torch.tensor([True]), op + "_")(0)
    with pytest.raises(NotImplementedError, match="not implemented for 'Bool'"):
        getattr(pith.tensor([True]), op + "_")(0)
    with pytest.raises(RuntimeError, match="Bad in-place call"):
        getattr(torch.zeros(2), op + "_")(0, dtype=torch.float64)
    with pytest.raises(RuntimeError, match="Bad in-place call: input tensor dtype float32 and "
                                           "output tensor dtype float64 should match"):
        getattr(pith.zeros(2), op + "_")(0, dtype=pith.float64)


@needs_torch
def test_scan_out_follows_torch():
    xi, ti = pith.tensor([3, 1, 2]), torch.tensor([3, 1, 2])
    o, to = pith.empty(3), torch.empty(3)
    assert pith.cumsum(xi, 0, out=o) is o  # computed in out's dtype
    assert_same(o, torch.cumsum(ti, 0, out=to))
    o = pith.empty(0, dtype=pith.float64)
    pith.cumprod(xi.float(), 0, dtype=pith.float64, out=o)
    assert_same(o, torch.cumprod(ti.float(), 0, dtype=torch.float64))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype"):
        torch.cumsum(ti.float(), 0, dtype=torch.float64, out=torch.empty(3))
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype float64, but got "
                                           "float32"):
        pith.cumsum(xi.float(), 0, dtype=pith.float64, out=pith.empty(3))
    x = pith.tensor([[1, 2], [3, 4]])
    pith.cumsum(x, 0, out=x)  # out is the input
    assert x.tolist() == [[1, 2], [4, 6]]


def test_scans_of_zero_dim_and_empty_tensors():
    s = pith.tensor(3, dtype=pith.int16)
    assert s.cumsum(0).dtype == pith.int64 and s.cumsum(-1).item() == 3
    with pytest.raises(IndexError):
        s.cumprod(1)
    e = pith.zeros(0, 4)
    assert pith.cumsum(e, 1).shape == (0, 4) and pith.cumprod(e, 0).shape == (0, 4)


# ---- multinomial ---------------------------------------------------------------------------

def test_multinomial_is_reproducible_with_a_generator():
    p = pith.rand(8, 300, generator=pith.Generator().manual_seed(0))
    for replacement in (False, True):
        g = pith.Generator().manual_seed(123)
        a = pith.multinomial(p, 40, replacement, generator=g)
        b = pith.multinomial(p, 40, replacement, generator=g)
        c = pith.multinomial(p, 40, replacement, generator=pith.Generator().manual_seed(123))
        assert a.shape == (8, 40) and a.dtype == pith.int64
        assert a.tolist() == c.tolist() and a.tolist() != b.tolist()
        pith.manual_seed(5)
        d = p.multinomial(40, replacement)
        pith.manual_seed(5)
        assert p.multinomial(40, replacement).tolist() == d.tolist()


def test_multinomial_does_not_depend_on_the_thread_count():
    before = pith.get_num_threads()
    p = pith.rand(256, 400, generator=pith.Generator().manual_seed(1))
    try:
        pith.set_num_threads(1)
        a = p.multinomial(30, generator=pith.Generator().manual_seed(9))
        pith.set_num_threads(2)
        b = p.multinomial(30, generator=pith.Generator().manual_seed(9))
    finally:
        pith.set_num_threads(before)
    assert a.tolist() == b.tolist()


@pytest.mark.parametrize("replacement", [True, False])
def test_multinomial_frequencies_follow_the_probabilities(replacement):
    """100000 first draws of p ~ (1, 2, 0, 3, 4) / 10 (with replacement: one row, 100000
    samples; without: 100000 rows, one sample each): each frequency is within 0.007 of its
    probability, over 4.5 standard deviations (at most 0.0016), with a fixed seed; the
    zero category never comes up."""
    n = 100000
    probs = [1.0, 2.0, 0.0, 3.0, 4.0]
    g = pith.Generator().manual_seed(2024)
    if replacement:
        s = pith.multinomial(pith.tensor(probs), n, True, generator=g)
    else:
        s = pith.multinomial(pith.tensor([probs]).expand(n, 5), 1, generator=g)
    counts = np.bincount(np.array(s.tolist()).ravel(), minlength=5) / n
    assert counts[2] == 0
    np.testing.assert_allclose(counts, np.array(probs) / 10, atol=0.007)


def test_multinomial_without_replacement_gives_distinct_categories():
    p = pith.tensor([[0.0, 1.0, 0.0, 2.0], [5.0, 1.0, 1.0, 1.0]])
    for seed in range(10):
        s = p.multinomial(4, generator=pith.Generator().manual_seed(seed)).tolist()
        assert sorted(s[0][:2]) == [1, 3] and s[0][2:] == [0, 2]  # zeros last, in order
        assert sorted(s[1]) == [0, 1, 2, 3]


def test_multinomial_without_replacement_of_equal_probabilities():
    """Sample 1 of a two-category row without replacement is the category not drawn
    first, and sample 0 is either with frequency 1/2 (within 0.01 over 20000 rows)."""
    s = pith.multinomial(pith.ones(20000, 2), 2, generator=pith.Generator().manual_seed(3))
    rows = np.array(s.tolist())
    assert (rows.sum(1) == 1).all()
    assert abs(rows[:, 0].mean() - 0.5) < 0.01


@pytest.mark.parametrize("name", FLOAT_NAMES)
def test_multinomial_takes_every_floating_dtype_and_layout(name):
    base = pith.tensor([[1.0, 0.0], [0.0, 1.0], [1.0, 0.0]], dtype=pdtype(name))
    s = base.t().multinomial(2, True)  # rows (1, 0, 1) and (0, 1, 0)
    assert s.tolist()[1] == [1, 1]
    assert all(v in (0, 2) for v in s.tolist()[0])


@needs_torch
@pytest.mark.parametrize("args, fragment", [
    (([0.2, 0.3, 0.5], 4, False), "cannot sample n_sample > prob_dist.size(-1) samples"),
    (([0.2, 0.3, 0.5], 0, True), "cannot sample n_sample <= 0 samples"),
    (([1.0, -1.0], 1, False), "probability tensor contains either `inf`, `nan` or element < 0"),
    (([1.0, float("nan")], 1, False), "contains either `inf`, `nan` or element < 0"),
    (([1.0, float("inf")], 2, False), "contains either `inf`, `nan` or element < 0"),
    (([0.0, 0.0], 1, False), "invalid multinomial distribution (sum of probabilities <= 0)"),
    (([1.0, -1.0], 2, True), "(encountering probability entry < 0)"),
    (([1.0, float("inf")], 2, True), "(encountering probability entry = infinity or NaN)"),
    (([0.0, 0.0], 2, True), "(sum of probabilities <= 0)"),
    (([[1.0, 1.0], [0.0, 0.0]], 1, True), "(sum of probabilities <= 0)"),
])
def test_multinomial_errors_match_torch(args, fragment):
    probs, n, replacement = args
    with pytest.raises(RuntimeError) as want:
        torch.multinomial(torch.tensor(probs), n, replacement)
    assert fragment in str(want.value)
    with pytest.raises(RuntimeError) as got:
        pith.multinomial(pith.tensor(probs), n, replacement)
    assert fragment in str(got.value)


def test_multinomial_argument_errors():
    with pytest.raises(RuntimeError, match="prob_dist must be 1 or 2 dim"):
        pith.tensor(1.0).multinomial(1)
    with pytest.raises(RuntimeError, match="prob_dist must be 1 or 2 dim"):
        pith.ones(2, 2, 2).multinomial(1)
    with pytest.raises(TypeError, match="floating-point dtypes for input, got: Long"):
        pith.tensor([1, 2]).multinomial(1)
    with pytest.raises(TypeError, match="expects Long tensor out, got: Float"):
        pith.multinomial(pith.ones(3), 2, out=pith.empty(2))
    out = pith.empty(0, dtype=pith.int64)
    assert pith.multinomial(pith.ones(3, 2), 2, out=out) is out and out.shape == (3, 2)
    assert pith.multinomial(pith.zeros(0, 3), 2).shape == (0, 2)


@needs_torch
@examples(20)
@given(st.data(), st.sampled_from(FLOAT_NAMES), st.integers(1, 2), st.booleans())
def test_multinomial_shapes_and_checks_match_torch(data, name, ndim, replacement):
    shape = tuple(data.draw(st.lists(st.integers(0, 4), min_size=ndim, max_size=ndim)))
    x, a = data.draw(tensors(name, shape, lo=0, hi=10))
    n = data.draw(st.integers(-1, 6))
    t = to_torch(a, name)
    try:
        want = torch.multinomial(t, n, replacement)
    except RuntimeError:
        with pytest.raises(RuntimeError):
            pith.multinomial(x, n, replacement)
        return
    got = pith.multinomial(x, n, replacement)
    assert got.shape == tuple(want.shape) and got.dtype == pith.int64
    s = np.array(got.tolist()).reshape(got.shape)
    p = np.asarray(a, np.float64).reshape((-1, shape[-1]) if shape[-1] else (shape[0], 0))
    for row, samples in zip(p, s.reshape(p.shape[0], n)):
        assert all(row[c] > 0 for c in samples[:int((row > 0).sum())])
        if not replacement:
            assert len(set(samples.tolist())) == len(samples)
