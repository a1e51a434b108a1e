"""roll, flip, repeat, repeat_interleave, outer/ger, meshgrid and einsum against PyTorch:
values, result dtypes, shapes, layouts (copies are new tensors, meshgrid's grids and
einsum's pure permutations are views), errors (type and message), over every dtype,
0-dim, empty and non-contiguous inputs; and the call forms torch allows (x.repeat(2, 3),
meshgrid(a, b) and meshgrid([a, b]), einsum(eq, a, b) and einsum(eq, [a, b]))."""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import pith
from conftest import (DTYPE_NAMES, PROPERTY, assert_matches_torch, examples, pdtype,
                      shapes, tensors, to_pith, torch_or_none)

torch = torch_or_none()
needs_torch = pytest.mark.skipif(torch is None, reason="torch is the oracle")


def torch_of(a, name):
    """The torch tensor with NumPy array a's values (contiguous)."""
    from conftest import to_torch
    return to_torch(a, name)


def outcome(f):
    """(result, None) or (None, exception)."""
    try:
        return f(), None
    except Exception as e:  # noqa: BLE001 - every error is compared
        return None, e


def assert_same_outcome(p_call, t_call, rtol=None, atol=None, message=True):
    """pith and torch both succeed with the same dtype, shape and values, or both fail
    with an error of torch's type (pith's ValueError/RuntimeError class counts for both)
    and, when `message`, the same message."""
    got, p_err = outcome(p_call)
    want, t_err = outcome(t_call)
    if t_err is not None:
        assert p_err is not None, f"torch raised {t_err!r}, pith returned {got!r}"
        assert isinstance(p_err, type(t_err)), (p_err, t_err)
        # A TypeError is the binder's (pith's own wording of a call that fits no schema)
        if message and not isinstance(t_err, TypeError):
            assert str(p_err) == str(t_err)
        return None, None
    assert p_err is None, f"pith raised {p_err!r}, torch returned a result"
    if isinstance(want, (tuple, list)):
        assert len(got) == len(want)
        for g, w in zip(got, want):
            assert_matches_torch(g, w, rtol, atol)
    else:
        assert_matches_torch(got, want, rtol, atol)
    return got, want


dtypes = st.sampled_from(DTYPE_NAMES)


# ---- roll ---------------------------------------------------------------------------------

@st.composite
def roll_args(draw, ndim):
    shift = st.integers(-10, 10) | st.sampled_from([2**40, -2**40, 2**62])
    if ndim == 0 or draw(st.booleans()):
        return [draw(shift)], []
    n = draw(st.integers(1, 3))
    dims = [draw(st.integers(-ndim, ndim - 1)) for _ in range(n)]  # repeats allowed
    return [draw(shift) for _ in range(n)], dims


@needs_torch
@PROPERTY
@given(st.data(), shapes, dtypes)
def test_roll_matches_torch(data, shape, name):
    x, a = data.draw(tensors(name, shape))
    shifts, dims = data.draw(roll_args(len(shape)))
    got, _ = assert_same_outcome(lambda: pith.roll(x, shifts, dims),
                                 lambda: torch.roll(torch_of(a, name), shifts, dims))
    if got is not None and got.numel() > 0:
        assert got.is_contiguous() and got.data_ptr() != x.data_ptr()


@needs_torch
def test_roll_binds_one_int_and_keywords():
    a = np.arange(6.0).reshape(2, 3)
    x, t = to_pith(a), torch.tensor(a)
    assert_matches_torch(x.roll(1, 0), t.roll(1, 0))
    assert_matches_torch(x.roll(shifts=1, dims=1), t.roll(shifts=1, dims=1))
    assert_matches_torch(pith.roll(x, (1, -1), (0, 1)), torch.roll(t, (1, -1), (0, 1)))
    assert_matches_torch(pith.roll(x, -7), torch.roll(t, -7))


@needs_torch
@pytest.mark.parametrize("shifts, dims", [([], []), ((1, 2), ()), ((1, 2), (0,)), (1, 2),
                                          (1, -3), ((1, 1), (0, 5))])
def test_roll_errors_match_torch(shifts, dims):
    a = np.arange(6.0).reshape(2, 3)
    assert_same_outcome(lambda: pith.roll(to_pith(a), shifts, dims),
                        lambda: torch.roll(torch.tensor(a), shifts, dims))


@needs_torch
@pytest.mark.parametrize("dims", [0, 1, -1, [0, 0]])
def test_roll_of_a_0_dim_tensor_matches_torch(dims):
    assert_same_outcome(lambda: pith.roll(pith.tensor(5.0), 1, dims),
                        lambda: torch.roll(torch.tensor(5.0), 1, dims))
    assert_matches_torch(pith.roll(pith.tensor(5.0), 3), torch.roll(torch.tensor(5.0), 3))


@needs_torch
def test_roll_of_an_empty_tensor_keeps_its_layout_as_torch():
    x, t = pith.zeros(0, 3).t(), torch.zeros(0, 3).t()
    for args in [(1, 0), ((1, 1), (0, 1)), (1, 7)]:
        assert pith.roll(x, *args).stride() == torch.roll(t, *args).stride()
    assert pith.roll(x, 1).stride() == torch.roll(t, 1).stride()  # the flat roll: contiguous


def test_roll_rejects_a_float_shift():
    with pytest.raises(TypeError, match="shifts"):
        pith.roll(pith.zeros(3), 1.5)


# ---- flip ---------------------------------------------------------------------------------

@needs_torch
@PROPERTY
@given(st.data(), shapes, dtypes)
def test_flip_matches_torch(data, shape, name):
    x, a = data.draw(tensors(name, shape))
    ndim = len(shape)
    dims = data.draw(st.lists(st.integers(-max(ndim, 1), max(ndim, 1) - 1), max_size=3))
    got, _ = assert_same_outcome(lambda: pith.flip(x, dims),
                                 lambda: torch.flip(torch_of(a, name), dims))
    if got is not None and got.numel() > 0:
        assert got.data_ptr() != x.data_ptr()


@needs_torch
@pytest.mark.parametrize("make", [
    lambda m: m.zeros(2, 3).t(),                      # dense, permuted: strides kept
    lambda m: m.zeros(2, 1, 3).transpose(0, 2),
    lambda m: m.zeros(3, 4)[:, ::2],                  # not dense: contiguous
    lambda m: m.zeros(2, 3).expand(4, 2, 3),
    lambda m: m.zeros(0, 3).t(),
    lambda m: m.zeros(()),
])
def test_flip_lays_out_its_result_as_torch(make):
    assert pith.flip(make(pith), [0]).stride() == torch.flip(make(torch), [0]).stride()


def test_flip_method_takes_dims_as_varargs():
    x = pith.arange(6).reshape(2, 3)
    assert x.flip(0, 1).tolist() == [[5, 4, 3], [2, 1, 0]]
    assert x.flip(1).tolist() == x.flip([1]).tolist() == [[2, 1, 0], [5, 4, 3]]


@needs_torch
def test_flip_errors_match_torch():
    a = np.zeros((2, 3))
    for dims in ([0, 0], [0, -2], [2]):
        assert_same_outcome(lambda: pith.flip(to_pith(a), dims),
                            lambda: torch.flip(torch.tensor(a), dims))
    with pytest.raises(TypeError):
        pith.flip(to_pith(a), 0)  # the function takes a list only, as torch's


# ---- repeat -------------------------------------------------------------------------------

@needs_torch
@PROPERTY
@given(st.data(), shapes, dtypes)
def test_repeat_matches_torch(data, shape, name):
    x, a = data.draw(tensors(name, shape))
    extra = data.draw(st.integers(0, 2))
    repeats = data.draw(st.lists(st.integers(0, 3), min_size=len(shape) + extra,
                                 max_size=len(shape) + extra))
    got, _ = assert_same_outcome(lambda: x.repeat(*repeats) if repeats else x.repeat(repeats),
                                 lambda: torch_of(a, name).repeat(repeats))
    if got is not None and got.numel() > 0:
        assert got.is_contiguous() and got.data_ptr() != x.data_ptr()


@needs_torch
@pytest.mark.parametrize("shape, repeats", [((2, 3), (2,)), ((2, 3), ()), ((2, 3), (-1, 1)),
                                            ((0, 3), (-1, 1)), ((2, 3), (-1, 0)),
                                            ((3,), (1, -1, 2)), ((), ())])
def test_repeat_errors_and_edges_match_torch(shape, repeats):
    a = np.ones(shape)
    assert_same_outcome(lambda: to_pith(a).repeat(repeats),
                        lambda: torch.tensor(a).repeat(repeats))


def test_repeat_is_a_method_only():
    assert not hasattr(pith, "repeat")
    x = pith.tensor([1, 2])
    assert x.repeat(2).tolist() == x.repeat([2]).tolist() == x.repeat(repeats=(2,)).tolist()


def test_repeat_beyond_the_dims_of_a_tensor_is_not_implemented():
    with pytest.raises(NotImplementedError, match="at most 16"):
        pith.zeros(2).repeat(*([1] * 17))


# ---- repeat_interleave --------------------------------------------------------------------

@needs_torch
@PROPERTY
@given(st.data(), shapes, dtypes)
def test_repeat_interleave_int_matches_torch(data, shape, name):
    x, a = data.draw(tensors(name, shape))
    ndim = len(shape)
    repeats = data.draw(st.integers(-1, 3))
    dim = data.draw(st.none() | st.integers(-max(ndim, 1), max(ndim, 1) - 1))
    kw = {}
    if data.draw(st.booleans()):
        n = int(np.prod(shape)) if dim is None else (shape[dim] if ndim else 1)
        kw["output_size"] = max(repeats, 0) * n + data.draw(st.sampled_from([0, 0, 1]))
    got, _ = assert_same_outcome(lambda: pith.repeat_interleave(x, repeats, dim, **kw),
                                 lambda: torch.repeat_interleave(torch_of(a, name), repeats, dim,
                                                                 **kw))
    if got is not None:
        assert got.is_contiguous()


@needs_torch
@PROPERTY
@given(st.data(), shapes, dtypes, st.sampled_from(["int32", "int64"]))
def test_repeat_interleave_tensor_matches_torch(data, shape, name, index_name):
    x, a = data.draw(tensors(name, shape))
    ndim = len(shape)
    dim = data.draw(st.none() | st.integers(-max(ndim, 1), max(ndim, 1) - 1))
    n = int(np.prod(shape)) if dim is None else (shape[dim] if ndim else 1)
    rshape = data.draw(st.sampled_from([(), (1,), (n,), (n + 1,)]))
    r, ra = data.draw(tensors(index_name, rshape, lo=0, hi=3))
    kw = {}
    if data.draw(st.booleans()):
        kw["output_size"] = int(np.broadcast_to(ra.reshape(-1), (n,)).sum()) \
            if ra.size in (1, n) else 0
    assert_same_outcome(lambda: pith.repeat_interleave(x, r, dim, **kw),
                        lambda: torch.repeat_interleave(torch_of(a, name),
                                                        torch_of(ra, index_name), dim, **kw))
    assert_same_outcome(lambda: x.repeat_interleave(r, dim=dim),
                        lambda: torch_of(a, name).repeat_interleave(torch_of(ra, index_name),
                                                                    dim=dim))


@needs_torch
@PROPERTY
@given(st.data(), st.sampled_from(["int32", "int64"]), st.integers(0, 6))
def test_repeat_interleave_of_counts_matches_torch(data, name, n):
    r, ra = data.draw(tensors(name, (n,), lo=0, hi=4))
    assert_same_outcome(lambda: pith.repeat_interleave(r),
                        lambda: torch.repeat_interleave(torch_of(ra, name)))
    size = int(ra.sum()) + data.draw(st.sampled_from([0, 1]))
    assert_same_outcome(lambda: pith.repeat_interleave(r, output_size=size),
                        lambda: torch.repeat_interleave(torch_of(ra, name), output_size=size))


@needs_torch
@pytest.mark.parametrize("call", [
    lambda m, x: m.repeat_interleave(x, m.tensor([1, 2]), 0),
    lambda m, x: m.repeat_interleave(x, m.tensor([1, 2]), dim=1),
    lambda m, x: m.repeat_interleave(x, m.tensor([1, 2]), dim=-1),
    lambda m, x: m.repeat_interleave(x, m.tensor([1, 2]), dim=5),
    lambda m, x: m.repeat_interleave(x, m.tensor([[1, 2]]), dim=5),
    lambda m, x: m.repeat_interleave(x, m.tensor([1]), dim=5),
    lambda m, x: m.repeat_interleave(x, m.tensor([1.0, 2.0]), dim=0),
    lambda m, x: m.repeat_interleave(x, m.tensor([1, 2], dtype=m.int16), dim=0),
    lambda m, x: m.repeat_interleave(x, m.tensor([1, -2]), dim=0),
    lambda m, x: m.repeat_interleave(x, m.tensor([1, 2]), dim=0, output_size=4),
    lambda m, x: m.repeat_interleave(x, m.tensor(2)),
    lambda m, x: m.repeat_interleave(m.tensor(3.0), m.tensor([1]), dim=0),
    lambda m, x: m.repeat_interleave(x, -1, 5),
    lambda m, x: m.repeat_interleave(x, -1),
    lambda m, x: m.repeat_interleave(x, 2, output_size=5),
    lambda m, x: m.repeat_interleave(x, 2, 0, output_size=-1),
    lambda m, x: m.repeat_interleave(m.tensor(5.0), 3, 0),
    lambda m, x: m.repeat_interleave(m.tensor(5.0), 3),
    lambda m, x: m.repeat_interleave(m.tensor(2)),
    lambda m, x: m.repeat_interleave(m.tensor([[2]])),
    lambda m, x: m.repeat_interleave(m.tensor([2.0])),
    lambda m, x: m.repeat_interleave(m.tensor([-2])),
    lambda m, x: m.repeat_interleave(m.tensor([1, 2]), output_size=-1),
    lambda m, x: m.repeat_interleave(m.tensor([], dtype=m.int64), output_size=3),
    lambda m, x: m.repeat_interleave(x, True),
    lambda m, x: x.t().repeat_interleave(m.tensor([1, 2]), 1),
])
def test_repeat_interleave_cases_match_torch(call):
    a = np.arange(6.0).reshape(2, 3)
    assert_same_outcome(lambda: call(pith, to_pith(a)), lambda: call(torch, torch.tensor(a)))


def test_repeat_interleave_on_meta_needs_output_size_for_tensor_repeats():
    x = pith.zeros(2, 3, device="meta")
    r = pith.empty(2, dtype=pith.int64, device="meta")
    assert pith.repeat_interleave(x, 2, 0).shape == (4, 3)
    assert pith.repeat_interleave(x, r, 0, output_size=5).shape == (5, 3)
    with pytest.raises(NotImplementedError, match="without output_size"):
        pith.repeat_interleave(x, r, 0)


# ---- outer, ger ---------------------------------------------------------------------------

@needs_torch
@PROPERTY
@given(st.data(), dtypes, dtypes, st.integers(0, 4), st.integers(0, 4))
def test_outer_matches_torch(data, name_a, name_b, n, m):
    x, a = data.draw(tensors(name_a, (n,)))
    y, b = data.draw(tensors(name_b, (m,)))
    for fn in ("outer", "ger"):
        assert_same_outcome(lambda: getattr(pith, fn)(x, y),
                            lambda: getattr(torch, fn)(torch_of(a, name_a), torch_of(b, name_b)))
        assert_same_outcome(lambda: getattr(x, fn)(y),
                            lambda: getattr(torch_of(a, name_a), fn)(torch_of(b, name_b)))


@needs_torch
@pytest.mark.parametrize("sa, sb", [((2, 2), (2,)), ((2,), (2, 2)), ((), (2,)), ((2,), ())])
def test_outer_errors_match_torch(sa, sb):
    a, b = np.ones(sa), np.ones(sb)
    for fn in ("outer", "ger"):
        assert_same_outcome(lambda: getattr(pith, fn)(to_pith(a), to_pith(b)),
                            lambda: getattr(torch, fn)(torch.tensor(a), torch.tensor(b)))


def test_outer_takes_no_python_number():
    with pytest.raises(TypeError):
        pith.outer(pith.ones(2), 2)


# ---- meshgrid -----------------------------------------------------------------------------

@needs_torch
@PROPERTY
@given(st.data(), dtypes, st.lists(st.sampled_from([(), (0,), (1,), (2,), (3,)]), min_size=1,
                                   max_size=4),
       st.sampled_from([None, "ij", "xy"]))
def test_meshgrid_matches_torch(data, name, shapes_, indexing):
    pairs = [data.draw(tensors(name, s)) for s in shapes_]
    xs = [p for p, _ in pairs]
    ts = [torch_of(a, name) for _, a in pairs]
    kw = {} if indexing is None else {"indexing": indexing}
    got, want = assert_same_outcome(lambda: pith.meshgrid(*xs, **kw),
                                    lambda: torch.meshgrid(*ts, indexing=indexing or "ij"))
    assert isinstance(got, tuple)
    assert [g.shape for g in pith.meshgrid(xs, **kw)] == [g.shape for g in got]
    for g, x in zip(got, xs):  # views of their inputs
        assert g.numel() == 0 or g.data_ptr() == x.data_ptr()


@needs_torch
@pytest.mark.parametrize("indexing", ["ij", "xy"])
def test_meshgrid_strides_match_torch(indexing):
    def grids(m):
        return m.meshgrid(m.tensor(5), m.arange(3), m.arange(4)[::2], indexing=indexing)
    assert [g.stride() for g in grids(pith)] == [g.stride() for g in grids(torch)]


def test_meshgrid_takes_a_list_a_tuple_or_varargs():
    a, b = pith.arange(2), pith.arange(3)
    for grids in (pith.meshgrid(a, b), pith.meshgrid([a, b]), pith.meshgrid((a, b)),
                  pith.meshgrid(a, b, indexing="ij"), pith.meshgrid(tensors=[a, b])):
        assert [g.tolist() for g in grids] == [[[0, 0, 0], [1, 1, 1]], [[0, 1, 2], [0, 1, 2]]]
    assert len(pith.meshgrid(a)) == 1
    with pytest.raises(TypeError):
        pith.meshgrid(a, [b])


@needs_torch
@pytest.mark.parametrize("call", [
    lambda m: m.meshgrid(),
    lambda m: m.meshgrid([]),
    lambda m: m.meshgrid(m.tensor([1, 2]), m.tensor([3.0]), indexing="ij"),
    lambda m: m.meshgrid(m.tensor([1, 2]), indexing="foo"),
    lambda m: m.meshgrid(m.tensor([1, 2]), indexing="IJ"),
    lambda m: m.meshgrid(m.zeros(2, 2), m.zeros(2).int(), indexing="foo"),
    lambda m: m.meshgrid(m.zeros(2, 2), m.zeros(2), indexing="foo"),
    lambda m: m.meshgrid(m.zeros(2), m.zeros(2, 3, device="meta"), indexing="xy"),
])
@pytest.mark.filterwarnings("ignore:torch.meshgrid")  # torch's warning about `indexing`
def test_meshgrid_errors_match_torch(call):
    assert_same_outcome(lambda: call(pith), lambda: call(torch))


@needs_torch
def test_meshgrid_rejects_a_2_dim_tensor_as_torch():
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor in the tensor list"):
        pith.meshgrid(pith.zeros(2), pith.zeros(2, 2), indexing="xy")
    with pytest.raises(RuntimeError, match="Expected 0D or 1D tensor in the tensor list"):
        torch.meshgrid(torch.zeros(2), torch.zeros(2, 2), indexing="xy")


# ---- einsum -------------------------------------------------------------------------------

# (equation, operand shapes): every kind of contraction, with broadcasting of size-one
# dims, ellipses, repeated labels (diagonals) and implicit outputs.
EINSUM_CASES = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]),          # matmul
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]), ("bij,bjk->bik", [(1, 2, 3), (5, 3, 4)]),
    ("ii", [(3, 3)]), ("ii->i", [(3, 3)]), ("iij->ij", [(3, 3, 4)]), ("iji->ij", [(3, 4, 3)]),
    ("iii->i", [(3, 3, 3)]), ("iij,jk->ik", [(3, 3, 4), (4, 5)]),         # trace, diagonals
    ("i,j->ij", [(3,), (4,)]), ("i,j", [(3,), (4,)]), ("i,j->ji", [(3,), (4,)]),  # outer
    ("ij->ji", [(2, 3)]), ("ji", [(2, 3)]), ("ij", [(2, 3)]), ("bA", [(2, 3)]),   # transpose
    ("ij->", [(2, 3)]), ("ij->i", [(2, 3)]), ("ij->j", [(2, 3)]), ("i->", [(0,)]),  # sums
    ("...ij->...ji", [(4, 2, 3)]), ("...", [(2, 3)]), ("i...->...", [(3, 4, 5)]),
    ("...i->i", [(2, 3, 4)]), ("...->", [(3, 4)]),                                # ellipsis
    ("...ij,...jk->...ik", [(5, 2, 3), (3, 4)]), ("...ij,...jk", [(5, 1, 2, 3), (6, 3, 4)]),
    ("ab...,b...->a...", [(2, 3, 4), (3, 4)]), ("a...b,b->...", [(2, 3, 4), (4,)]),
    ("ij,jk->ik", [(2, 1), (3, 4)]), ("ij,jk->ik", [(2, 3), (1, 4)]),             # broadcast
    ("ij,ij->ij", [(2, 1), (2, 3)]), ("i,i->", [(1,), (3,)]),
    ("i,i,i->i", [(3,), (3,), (3,)]), ("ij,jk,kl->il", [(2, 3), (3, 4), (4, 5)]),
    ("ij,jk,kl", [(2, 3), (3, 4), (4, 5)]), ("ab,bc,cd,de->ae", [(2, 3), (3, 4), (4, 2), (2, 3)]),
    ("ij,ij->i", [(2, 3), (2, 3)]), ("ij,ij->", [(2, 3), (2, 3)]), ("ij,k->i", [(2, 3), (5,)]),
    ("Ab,ba", [(2, 3), (3, 2)]), ("ba,Ab", [(3, 2), (2, 3)]), (" i j , j k -> i k ", [(2, 3), (3, 4)]),
    ("", [()]), ("->", [()]), (",", [(), ()]), ("i,->i", [(3,), ()]),
    ("ij,jk->ik", [(2, 0), (0, 4)]), ("ij->", [(0, 3)]), ("ij,j->i", [(0, 3), (3,)]),
    ("bhqd,bhkd->bhqk", [(2, 3, 4, 5), (2, 3, 6, 5)]),                              # attention
    ("bn,anm,bm->ba", [(2, 3), (4, 3, 5), (2, 5)]),                                 # bilinear
]


@needs_torch
@pytest.mark.parametrize("equation, shapes_", EINSUM_CASES)
def test_einsum_matches_torch(equation, shapes_):
    rng = np.random.default_rng(0)
    arrays = [rng.standard_normal(s) for s in shapes_]
    xs = [to_pith(a, "float64") for a in arrays]
    ts = [torch.tensor(a) for a in arrays]
    rtol, atol = einsum_tolerance(equation, ts, ["float64"])
    got, want = assert_same_outcome(lambda: pith.einsum(equation, *xs),
                                    lambda: torch.einsum(equation, *ts), rtol=rtol, atol=atol)
    assert_matches_torch(pith.einsum(equation, xs), want, rtol, atol)
    # a view of an operand exactly where torch's is one
    shares = got.numel() > 0 and any(got.data_ptr() == x.data_ptr() for x in xs)
    assert shares == (want.numel() > 0 and any(
        want.untyped_storage().data_ptr() == t.untyped_storage().data_ptr() for t in ts))


EPSILON = {"float16": 2.0**-10, "bfloat16": 2.0**-7, "float32": 2.0**-23, "float64": 2.0**-52}


def einsum_tolerance(equation, operands, names):
    """(rtol, atol) for comparing two float einsums that add their products in different
    orders: a few units of the least precise operand dtype's epsilon, relative to the sum
    of the products' magnitudes (which cancellation can make far larger than the result).
    None for exact (integer and bool) results."""
    floats = [EPSILON[n] for n in names if n in EPSILON]
    if not floats:
        return None, None
    try:
        scale = torch.einsum(equation, *[t.abs().double() for t in operands])
    except Exception:  # noqa: BLE001 - the call fails: there is no result to compare
        return None, None
    magnitude = float(scale.abs().max()) if scale.numel() else 0.0
    eps = max(floats)
    return 8 * eps, 8 * eps * max(magnitude, 1.0)


@needs_torch
@PROPERTY
@given(st.data(), st.sampled_from(EINSUM_CASES), dtypes)
def test_einsum_dtypes_and_layouts_match_torch(data, case, name):
    equation, shapes_ = case
    pairs = [data.draw(tensors(name, s, lo=-3, hi=3)) for s in shapes_]
    ts = [torch_of(a, name) for _, a in pairs]
    rtol, atol = einsum_tolerance(equation, ts, [name])
    assert_same_outcome(lambda: pith.einsum(equation, *[x for x, _ in pairs]),
                        lambda: torch.einsum(equation, *ts), rtol=rtol, atol=atol)


@needs_torch
@examples(25)
@given(st.data(), dtypes, dtypes)
def test_einsum_of_two_dtypes_matches_torch(data, name_a, name_b):
    equation, shapes_ = data.draw(st.sampled_from([("ij,jk->ik", [(2, 3), (3, 4)]),
                                                   ("i,i->i", [(3,), (3,)]),
                                                   ("i,i->", [(3,), (3,)]),
                                                   ("ij,k->i", [(2, 3), (4,)])]))
    x, a = data.draw(tensors(name_a, shapes_[0], lo=-3, hi=3))
    y, b = data.draw(tensors(name_b, shapes_[1], lo=-3, hi=3))
    # An operand summed alone is summed in its own dtype before any promotion (as in
    # torch), so the result is only as precise as the least precise float operand.
    ts = [torch_of(a, name_a), torch_of(b, name_b)]
    rtol, atol = einsum_tolerance(equation, ts, [name_a, name_b])
    assert_same_outcome(lambda: pith.einsum(equation, x, y), lambda: torch.einsum(equation, *ts),
                        rtol=rtol, atol=atol)


def test_einsum_of_one_operand_without_sums_is_a_view():
    x = pith.arange(6.0).reshape(2, 3)
    for equation in ("ij->ji", "ij", "ji", "...", "ii->i"):
        operand = x if equation != "ii->i" else pith.zeros(3, 3)
        assert pith.einsum(equation, operand).data_ptr() == operand.data_ptr()
    assert pith.einsum("ij->ji", x).stride() == (1, 3)
    assert pith.einsum("ij->", x).data_ptr() != x.data_ptr()


def test_einsum_takes_a_list_or_varargs_and_path():
    a, b, c = pith.ones(2, 3), pith.ones(3, 4), pith.ones(4, 5)
    want = (a @ b @ c).tolist()
    assert pith.einsum("ij,jk,kl->il", a, b, c).tolist() == want
    assert pith.einsum("ij,jk,kl->il", [a, b, c]).tolist() == want
    assert pith.einsum("ij,jk,kl->il", (a, b, c)).tolist() == want
    assert pith.einsum("ij,jk,kl->il", a, b, c, path=[1, 2, 0, 1]).tolist() == want
    assert pith.einsum(equation="ij,jk,kl->il", tensors=[a, b, c]).tolist() == want
    with pytest.raises(TypeError):
        pith.einsum("ij,jk", [a], b)


# Malformed equations and mismatched operands: torch's error, message and all.
EINSUM_ERRORS = [
    ("ij,jk->ik", [(2, 3)]), ("ij", [(2, 3), (3, 4)]), ("ij,jk->ik", [(2, 3), (2, 3)]),
    ("ijk", [(2, 3)]), ("i", [(2, 3)]), ("i...jkl", [(2, 3)]), ("ij->ii", [(2, 3)]),
    ("ij->k", [(2, 3)]), ("i.j", [(2, 3)]), ("i..j", [(2, 3)]), ("......", [(2, 3)]),
    ("...i...", [(2, 3)]), ("ij->...i...", [(2, 3)]), ("ij->..", [(2, 3)]), ("ij->i.", [(2, 3)]),
    ("i1", [(3,)]), ("i->1", [(3,)]), ("ii", [(2, 3)]), ("i,i", [(2,), (3,)]),
    ("...,...", [(2,), (3,)]), ("...i,...i", [(2, 3), (4, 3)]), ("ij-k", [(2, 3)]),
    ("ij>k", [(2, 3)]), ("ij->jk->", [(2, 3)]), ("->i", [(3,)]), ("i;j", [(3,)]),
    ("ij-", [(2, 3)]), ("ij->-", [(2, 3)]), ("ij->>", [(2, 3)]), ("i é", [(3,)]),
    ("i\N{GREEK SMALL LETTER ALPHA}", [(3,)]),
]


@needs_torch
@pytest.mark.parametrize("equation, shapes_", EINSUM_ERRORS)
def test_einsum_errors_match_torch(equation, shapes_):
    arrays = [np.ones(s) for s in shapes_]
    assert_same_outcome(lambda: pith.einsum(equation, *[to_pith(a) for a in arrays]),
                        lambda: torch.einsum(equation, *[torch.tensor(a) for a in arrays]))


@needs_torch
@pytest.mark.parametrize("operands, path", [(3, [1, 2, 0]), (3, [1, 1, 0, 1]), (3, [1, 3, 0, 1]),
                                            (3, [-1, 2, 0, 1]), (1, []), (1, [5]),
                                            (3, [2, 0, 0, 1])])
def test_einsum_path_matches_torch(operands, path):
    equation = "ij,jk,kl->il" if operands == 3 else "ij"
    arrays = [np.ones((2, 3)), np.ones((3, 4)), np.ones((4, 5))][:operands]
    assert_same_outcome(
        lambda: pith.einsum(equation, [to_pith(a) for a in arrays], path=path),
        lambda: torch.ops.aten.einsum(equation, [torch.tensor(a) for a in arrays], path=path))


@needs_torch
@pytest.mark.parametrize("dtype", ["bool", "float32"])
def test_einsum_dtype_errors_match_torch(dtype):
    a = np.ones((2, 3))
    ta, tb = torch.tensor(a).to(getattr(torch, dtype)), torch.tensor(a.T).to(torch.float64)
    xa, xb = to_pith(a, dtype), to_pith(a.T, "float64")
    assert_same_outcome(lambda: pith.einsum("ij,jk", xa, xb), lambda: torch.einsum("ij,jk", ta, tb))
    assert_same_outcome(lambda: pith.einsum("ij,jk", xa, xa.t()),
                        lambda: torch.einsum("ij,jk", ta, ta.t()))


def test_einsum_without_operands_is_an_error():
    for call in (lambda: pith.einsum("i"), lambda: pith.einsum("i", [])):
        with pytest.raises(ValueError, match="at least one operand"):
            call()


def test_einsum_beyond_the_dims_of_a_tensor_is_not_implemented():
    # 17 output labels: fine in PyTorch (64 dims), more than a pith tensor has
    labels = "abcdefghijklmnopq"
    with pytest.raises(NotImplementedError, match="at most 16"):
        pith.einsum(labels[:9] + "," + labels[9:] + "->" + labels,
                    pith.ones(*[1] * 9), pith.ones(*[1] * 8))


def test_einsum_on_meta_gives_the_shape():
    a, b = pith.empty(5, 2, 3, device="meta"), pith.empty(3, 4, device="meta")
    r = pith.einsum("...ij,jk->...ik", a, b)
    assert r.device.type == "meta" and r.shape == (5, 2, 4)


# Random equations over a small alphabet, against torch: the same result or the same
# error, and never a crash.
@st.composite
def random_einsum(draw):
    nops = draw(st.integers(1, 3))
    alphabet = st.sampled_from(list("ijkA") + ["..."])
    subs = [draw(st.lists(alphabet, max_size=4)) for _ in range(nops)]
    sizes = {c: draw(st.sampled_from([1, 2, 3])) for c in "ijkA"}
    shapes_ = []
    for sub in subs:
        shape = []
        for c in sub:
            if c == "...":
                shape += draw(st.lists(st.sampled_from([1, 2]), max_size=2))
            else:
                shape.append(sizes[c] if draw(st.integers(0, 5)) else draw(st.integers(1, 3)))
        if draw(st.integers(0, 9)) == 0:
            shape = shape[:-1]  # a rank that does not match
        shapes_.append(tuple(shape))
    equation = ",".join("".join(s) for s in subs)
    if draw(st.booleans()):
        equation += "->" + "".join(draw(st.lists(alphabet, max_size=4)))
    noise = draw(st.sampled_from(["", "", "", " ", ".", ",", "-", ">", "1"]))
    at = draw(st.integers(0, len(equation)))
    return equation[:at] + noise + equation[at:], shapes_


@needs_torch
@examples(150)
@given(random_einsum())
def test_random_einsums_match_torch(case):
    equation, shapes_ = case
    rng = np.random.default_rng(1)
    arrays = [rng.standard_normal(s) for s in shapes_]
    ts = [torch.tensor(a) for a in arrays]
    rtol, atol = einsum_tolerance(equation, ts, ["float64"])
    assert_same_outcome(lambda: pith.einsum(equation, *[to_pith(a, "float64") for a in arrays]),
                        lambda: torch.einsum(equation, *ts), rtol=rtol, atol=atol)


# ---- the ops through __pith_dispatch__ ----------------------------------------------------

def test_a_mode_sees_varargs_tensors_as_one_list():
    from pith.utils import DispatchMode
    seen = []

    class Recording(DispatchMode):
        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append((func.name, [len(a) if isinstance(a, (list, tuple)) else a
                                     for a in args if not isinstance(a, pith.Tensor)]))
            return func(*args, **(kwargs or {}))

    a, b, u, v = pith.ones(2, 3), pith.ones(3, 4), pith.arange(2), pith.arange(3)
    with Recording():
        product = pith.einsum("ij,jk", a, b)
        grids = pith.meshgrid(u, v, indexing="xy")
    assert product.tolist() == (a @ b).tolist()
    assert [g.shape for g in grids] == [(3, 2), (3, 2)]
    assert seen == [("pith::einsum", ["ij,jk", 2]), ("pith::meshgrid.indexing", [2])]
