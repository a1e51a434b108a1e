"""Views as properties: view, reshape, permute, transpose, t, expand, squeeze, unsqueeze,
flatten, narrow, select, split, chunk, unbind and contiguous give NumPy's values and
strides, and share memory (a write through the result reaches the base) exactly where
PyTorch's do, over generated shapes (empty and 0-dim included) and layouts."""
import numpy as np
import pytest
from hypothesis import assume, given
from hypothesis import strategies as st

import pith
from conftest import (DTYPE_NAMES, assert_values, examples, np_dtype, shapes, tensors,
                      to_numpy, to_pith, to_torch, torch_or_none)

torch = torch_or_none()


# ---- view ops as pairs (pith, NumPy) -----------------------------------------------------

@st.composite
def view_op(draw, shape):
    """(name, pith function, NumPy function, is always a view) for a view op valid on
    `shape`. NumPy's function returns a view where PyTorch's does."""
    ndim = len(shape)
    names = ["permute", "unsqueeze", "expand", "squeeze", "flatten", "reshape", "contiguous"]
    if ndim >= 1:
        names += ["transpose", "narrow", "select", "split", "chunk", "unbind", "squeeze_dim"]
    if ndim <= 2:
        names.append("t")
    name = draw(st.sampled_from(names))
    d = draw(st.integers(-ndim, ndim - 1)) if ndim else 0
    ax = d % ndim if ndim else 0
    if name == "permute":
        order = draw(st.permutations(range(ndim)))
        return name, lambda x: x.permute(*order) if order else x.permute(()), \
            lambda a: a.transpose(order), True
    if name == "transpose":
        d2 = draw(st.integers(-ndim, ndim - 1))
        return name, lambda x: x.transpose(d, d2), lambda a: np.swapaxes(a, d, d2), True
    if name == "t":
        return name, lambda x: x.t(), lambda a: a.T, True
    if name == "unsqueeze":
        u = draw(st.integers(-ndim - 1, ndim))
        return name, lambda x: x.unsqueeze(u), lambda a: np.expand_dims(a, u), True
    if name == "expand":
        lead = tuple(draw(st.lists(st.integers(0, 3), max_size=2)))
        target = lead + tuple(draw(st.sampled_from([s, -1])) if s != 1 else
                              draw(st.integers(0, 3)) for s in shape)
        final = lead + tuple(s if t == -1 else t for s, t in zip(shape, target[len(lead):]))
        return name, lambda x: x.expand(target), lambda a: np.broadcast_to(a, final), True
    if name == "squeeze":
        return name, lambda x: x.squeeze(), lambda a: np.squeeze(a), True
    if name == "squeeze_dim":
        return name, lambda x: x.squeeze(d), \
            lambda a: np.squeeze(a, ax) if a.shape[ax] == 1 else a[...], True
    if name == "narrow":
        start = draw(st.integers(0, shape[ax]))
        length = draw(st.integers(0, shape[ax] - start))
        index = [slice(None)] * ndim
        index[ax] = slice(start, start + length)
        return name, lambda x: x.narrow(d, start, length), lambda a: a[tuple(index)], True
    if name == "select":
        assume(shape[ax] > 0)
        i = draw(st.integers(-shape[ax], shape[ax] - 1))
        return name, lambda x: x.select(d, i), \
            lambda a: a[(slice(None),) * ax + (i, Ellipsis)], True
    if name in ("split", "chunk"):
        k = draw(st.integers(1, 4))
        part = draw(st.integers(0, 3))
        n = shape[ax]
        if name == "split":
            bounds = list(range(0, n, k)) + [n] if n else [0, 0]
        else:
            size = -(-n // k) if n else 0
            bounds = list(range(0, n, size)) + [n] if n else [0, 0]
        pieces = max(len(bounds) - 1, 1)
        part = part % pieces

        def np_piece(a):
            index = [slice(None)] * ndim
            index[ax] = slice(bounds[part], bounds[part + 1])
            return a[tuple(index)]
        return name, lambda x: getattr(x, name)(k, d)[part], np_piece, True
    if name == "unbind":
        assume(shape[ax] > 0)
        i = draw(st.integers(0, shape[ax] - 1))
        return name, lambda x: x.unbind(d)[i], \
            lambda a: a[(slice(None),) * ax + (i, Ellipsis)], True
    if name == "flatten":
        start = draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1))
        end = draw(st.integers(-max(ndim, 1), max(ndim, 1) - 1))
        s0, e0 = (start % ndim, end % ndim) if ndim else (0, 0)
        assume(s0 <= e0)
        new = shape[:s0] + (int(np.prod(shape[s0:e0 + 1])),) + shape[e0 + 1:] if ndim else (1,)
        return name, lambda x: x.flatten(start, end), lambda a: a.reshape(new), False
    if name == "reshape":
        numel = int(np.prod(shape))
        candidates = [(numel,), (-1,), (1, numel), (numel, 1), shape + (1,), (1,) + shape]
        if numel and numel % 2 == 0:
            candidates += [(2, numel // 2), (-1, 2)]
        if numel == 1:
            candidates.append(())
        new = draw(st.sampled_from(candidates))
        return name, lambda x: x.reshape(new), lambda a: a.reshape(new), False
    if name == "contiguous":
        return name, lambda x: x.contiguous(), \
            lambda a: a if a.flags.c_contiguous else np.array(a, order="C"), False
    raise AssertionError(name)


def np_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def shares_memory(result, base_array):
    return result.size > 0 and np.shares_memory(result, base_array)


@given(data=st.data())
@examples(200)
def test_view_op_matches_numpy_values_and_strides(data):
    name = data.draw(st.sampled_from(DTYPE_NAMES), "dtype")
    shape = data.draw(shapes, "shape")
    t, a = data.draw(tensors(name, shape), "x")
    op, pith_fn, np_fn, always_view = data.draw(view_op(shape), "op")
    out = pith_fn(t)
    expected = np_fn(a)
    if op == "contiguous" or (not always_view and not expected.flags.c_contiguous):
        expected = np.array(expected, order="C")
    assert_values(out, expected, name)
    if always_view and expected.size > 1:
        # the same element steps as NumPy's view (sizes-1 dims have any stride in both)
        for size, got, want in zip(expected.shape, out.stride(), np_strides(expected)):
            if size > 1:
                assert got == want, (op, out.stride(), np_strides(expected))
    if torch is not None and op in ("permute", "transpose", "t", "unsqueeze", "expand",
                                    "narrow", "select", "squeeze"):
        ref = pith_fn(to_torch(a, name))
        assert out.shape == tuple(ref.shape)


def numpy_with_layout(t):
    """A NumPy array with t's values laid out like t (same strides and storage offset)
    inside a buffer of its own: NumPy then decides view-or-copy on the same layout."""
    values = to_numpy(t)
    extent = t.storage_offset() + 1 + sum((n - 1) * s for n, s in zip(t.shape, t.stride()))
    buffer = np.zeros(max(extent, 1), dtype=values.dtype)
    a = np.lib.stride_tricks.as_strided(buffer[t.storage_offset():], shape=tuple(t.shape),
                                        strides=tuple(s * values.itemsize for s in t.stride()))
    a[...] = values
    return a, buffer


@given(data=st.data())
@examples(120)
def test_views_write_through_to_the_base_where_numpy_does(data):
    shape = data.draw(shapes, "shape")
    layout = data.draw(st.sampled_from(["contiguous", "transposed", "stepped", "offset"]))
    t, _ = data.draw(tensors("float64", shape, layout, lo=-50, hi=50), "x")
    op, pith_fn, np_fn, always_view = data.draw(view_op(shape), "op")
    assume(op != "expand")  # writing into an expanded tensor is an error (test below)
    src, buffer = numpy_with_layout(t)
    np_out = np_fn(src)
    is_view = np_out.size > 0 and np.shares_memory(np_out, buffer)
    out = pith_fn(t)
    if torch is not None and layout == "contiguous" and out.numel() > 0:
        tt = to_torch(src, "float64")
        tout = pith_fn(tt)
        assert is_view == (tout.untyped_storage().data_ptr() == tt.untyped_storage().data_ptr())
    out.add_(1000.0)
    np_out += 1000.0
    assert_values(t, src, "float64")
    if always_view and out.numel() > 0:
        assert is_view


def test_view_of_a_transposed_tensor_raises_like_torch():
    x = pith.ones(2, 3).t()
    with pytest.raises(RuntimeError, match="view size is not compatible"):
        x.view(6)
    assert x.reshape(6).tolist() == [1.0] * 6


def test_view_shares_storage_with_its_base():
    x = pith.arange(6, dtype=pith.float32)
    v = x.view(2, 3)
    v[1, 2] = 100.0
    assert x.tolist()[5] == 100.0


@pytest.mark.parametrize("shape,new", [((2, 3), (3, 2)), ((2, 3), (-1,)), ((4,), (2, -1)),
                                       ((1,), ()), ((0, 3), (3, 0)), ((0, 3), (-1, 3))])
def test_view_accepts_varargs_tuple_and_minus_one(shape, new):
    a = np.arange(int(np.prod(shape)), dtype=np.float32).reshape(shape)
    t = to_pith(a, "float32")
    assert_values(t.view(new), a.reshape(new), "float32")
    if new:
        assert_values(t.view(*new), a.reshape(new), "float32")


def test_view_with_a_wrong_numel_raises():
    with pytest.raises(RuntimeError, match="invalid for input of size 6"):
        pith.ones(2, 3).view(4)
    with pytest.raises(RuntimeError, match="only one dimension can be inferred"):
        pith.ones(2, 3).view(-1, -1)


def test_reshape_of_a_contiguous_tensor_is_a_view_and_of_a_transposed_one_a_copy():
    x = pith.zeros(2, 3)
    x.reshape(3, 2).add_(1.0)
    assert x.tolist() == [[1.0] * 3] * 2
    y = pith.zeros(2, 3).t()
    y.reshape(6).add_(1.0)
    assert y.tolist() == [[0.0] * 2] * 3


def test_contiguous_of_a_contiguous_tensor_is_itself():
    x = pith.ones(2, 3)
    assert x.contiguous() is x
    y = x.t().contiguous()
    assert y.is_contiguous() and y.stride() == (2, 1)


def test_expanded_tensor_has_zero_strides():
    x = pith.tensor([[1.0], [2.0]]).expand(2, 3)
    assert x.stride() == (1, 0) and x.tolist() == [[1.0] * 3, [2.0] * 3]
    assert pith.tensor(5.0).expand(2, 2).stride() == (0, 0)


def test_expand_of_a_non_singleton_dim_raises():
    with pytest.raises(RuntimeError, match="must match the existing size"):
        pith.ones(2, 3).expand(4, 3)


def test_split_and_chunk_give_views_of_the_right_sizes():
    x = pith.arange(10)
    assert [p.tolist() for p in x.split(4)] == [[0, 1, 2, 3], [4, 5, 6, 7], [8, 9]]
    assert [p.numel() for p in x.chunk(3)] == [4, 4, 2]
    assert [p.numel() for p in pith.arange(6).chunk(4)] == [2, 2, 2]
    parts = x.split(5)
    parts[1].mul_(0)
    assert x.tolist() == [0, 1, 2, 3, 4, 0, 0, 0, 0, 0]


def test_unbind_gives_one_view_per_index():
    x = pith.arange(6).view(2, 3)
    rows = x.unbind(0)
    assert isinstance(rows, (tuple, list)) and len(rows) == 2
    cols = x.unbind(dim=1)
    assert [c.tolist() for c in cols] == [[0, 3], [1, 4], [2, 5]]
    cols[2].mul_(0).sub_(1)
    assert x.tolist() == [[0, 1, -1], [3, 4, -1]]


def test_squeeze_removes_only_size_one_dims():
    x = pith.zeros(1, 3, 1)
    assert x.squeeze().shape == (3,)
    assert x.squeeze(0).shape == (3, 1) and x.squeeze(1).shape == (1, 3, 1)
    assert pith.zeros(1).squeeze().shape == ()


def test_select_and_narrow_take_negative_dims_and_indices():
    x = pith.arange(12).view(3, 4)
    assert x.select(-1, -1).tolist() == [3, 7, 11]
    assert x.narrow(-1, 1, 2).tolist() == [[1, 2], [5, 6], [9, 10]]
    assert x.select(0, 1).storage_offset() == 4


def test_select_out_of_range_is_an_index_error():
    with pytest.raises(IndexError):
        pith.ones(2, 3).select(0, 2)


def test_narrow_past_the_end_raises():
    with pytest.raises(RuntimeError):
        pith.ones(2, 3).narrow(1, 2, 2)


def test_flatten_of_a_0_dim_tensor_is_1_d():
    assert pith.tensor(3.0).flatten().shape == (1,)


def test_t_of_a_3_d_tensor_raises():
    with pytest.raises(RuntimeError, match="expects a tensor with <= 2 dimensions"):
        pith.ones(2, 2, 2).t()


def test_permute_with_a_repeated_dim_raises():
    with pytest.raises(RuntimeError, match="duplicate dims"):
        pith.ones(2, 3).permute(0, 0)


@pytest.mark.parametrize("dtype", ["bool", "int8", "float16", "bfloat16", "float64"])
def test_views_keep_the_dtype(dtype):
    x = pith.zeros(2, 3, dtype=getattr(pith, dtype))
    for v in (x.t(), x.view(6), x.unsqueeze(0), x.expand(4, 2, 3), x.narrow(1, 0, 2)):
        assert v.dtype is x.dtype
    assert np.asarray(to_numpy(x.t())).dtype == np_dtype(dtype)


# ---- copies by rows and by tiles (Note [Copies by rows and by tiles]) -------------------

@given(data=st.data())
@examples(150)
def test_contiguous_of_permuted_and_stepped_tensors_copies_every_bit(data):
    """contiguous() of a permuted, stepped or narrowed tensor is NumPy's C-order copy, bit for
    bit (NaN payloads included), at sizes that reach the row-block and the tiled paths: rows
    of a few elements, full 32 x 32 tiles and their edges, every element size."""
    dtype = data.draw(st.sampled_from(["uint8", "int16", "float16", "int32", "float32",
                                       "int64", "float64"]))
    ndim = data.draw(st.integers(2, 4))
    shape = tuple(data.draw(st.lists(st.sampled_from([1, 2, 3, 5, 8, 31, 32, 33, 64, 70]),
                                     min_size=ndim, max_size=ndim)))
    assume(int(np.prod(shape)) <= 300_000)
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    itemsize = np.dtype(dtype).itemsize
    base = rng.integers(0, 256, size=int(np.prod(shape)) * itemsize, dtype=np.uint8)
    a = base.view(dtype).reshape(shape)
    order = data.draw(st.permutations(range(ndim)))
    steps = tuple(data.draw(st.sampled_from([1, 1, 2])) for _ in range(ndim))
    index = tuple(slice(None, None, s) for s in steps)
    x = pith.from_numpy(a).permute(*order)[index]
    want = np.ascontiguousarray(a.transpose(order)[index])
    got = x.contiguous()
    assert got.is_contiguous() and tuple(got.shape) == want.shape
    assert got.numpy().view(np.uint8).tobytes() == want.view(np.uint8).tobytes(), \
        (dtype, shape, order, steps)


@pytest.mark.parametrize("threads", [1, 2])
def test_transposing_copies_at_threaded_sizes_match_numpy(threads):
    """The tiled copy split between threads: a (B, H, T, D) attention tensor merged back to
    (B, T, H, D), a matrix transposed, and NCHW to NHWC."""
    saved = pith.get_num_threads()
    pith.set_num_threads(threads)
    try:
        rng = np.random.default_rng(threads)
        for shape, perm in [((4, 8, 256, 32), (0, 2, 1, 3)), ((1000, 1030), (1, 0)),
                            ((16, 3, 64, 64), (0, 2, 3, 1)), ((2, 64, 64, 3), (0, 3, 1, 2))]:
            for dtype in ["float32", "float64", "int16", "uint8"]:
                a = rng.standard_normal(shape).astype(dtype)
                got = pith.from_numpy(a).permute(*perm).contiguous().numpy()
                np.testing.assert_array_equal(got, np.ascontiguousarray(a.transpose(perm)))
    finally:
        pith.set_num_threads(saved)
