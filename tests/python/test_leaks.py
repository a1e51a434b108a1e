"""No reference leaks: creating and dropping many tensors, and calling ops in a loop (with
tensors, Python scalars, in place, through views, indexing, failing calls), leaves
pith._C._live_tensors() and the reference counts of the inputs where they were."""
import gc
import sys

import pytest

import pith


def assert_no_leak(fn, *inputs, n=5000):
    """Calls fn() n times; afterwards the live tensors and each input's refcount are the
    same as after a warm-up call (which may fill caches)."""
    for _ in range(3):
        fn()
    gc.collect()
    live = pith._C._live_tensors()
    counts = [sys.getrefcount(obj) for obj in inputs]
    for _ in range(n):
        fn()
    gc.collect()
    assert pith._C._live_tensors() == live
    assert [sys.getrefcount(obj) for obj in inputs] == counts


def test_creating_and_dropping_100k_tensors_leaks_nothing():
    before = pith._C._live_tensors()
    data = [1.0, 2.0, 3.0]
    data_count = sys.getrefcount(data)
    for i in range(100_000):
        kind = i % 4
        if kind == 0:
            t = pith.ones(4)
        elif kind == 1:
            t = pith.tensor(data)
        elif kind == 2:
            t = pith.empty(2, 3, dtype=pith.int32)
        else:
            t = pith.zeros((3,), dtype=pith.float64)
        del t
    gc.collect()
    assert pith._C._live_tensors() == before
    assert sys.getrefcount(data) == data_count


def test_binary_ops_on_tensors_leak_nothing():
    x, y, m = pith.ones(4), pith.full((4,), 2.0), pith.ones(4, 4)

    def ops():
        x + y
        x * y
        x - y
        x / y
        x @ m
        x == y
        x < y
        pith.maximum(x, y)
        pith.add(x, y, alpha=2)
    assert_no_leak(ops, x, y, m)


def test_operators_with_python_scalars_leak_nothing():
    x = pith.ones(4)
    i = pith.ones(4, dtype=pith.int64)
    s_float, s_int = 2.5, 10**30 // 10**25  # objects that are not cached by CPython

    def ops():
        x + s_float
        s_float * x
        x - s_int
        s_int / x
        x ** 2
        2 ** i
        i // 3
        i % 3
        x == 1
        x > s_float
        i & 1
        True | i
    assert_no_leak(ops, x, i, s_float, s_int)


def test_in_place_ops_leak_nothing():
    x, y = pith.zeros(4), pith.ones(4)

    def ops():
        nonlocal x
        x += 1
        x *= 1.0
        x -= y
        x.add_(y)
        x.mul_(0.5)
        x.sub_(y, alpha=2)
        x.clamp_(-1.0, 1.0)
    assert_no_leak(ops, y)
    assert_no_leak(ops, x)


def test_views_leak_nothing():
    x = pith.arange(12, dtype=pith.float32).view(3, 4)

    def ops():
        x.view(4, 3)
        x.view(-1)
        x.reshape(2, 6)
        x.t()
        x.T
        x.transpose(0, 1)
        x.permute(1, 0)
        x.unsqueeze(0).squeeze(0)
        x.expand(2, 3, 4)
        x.flatten()
        x.narrow(1, 1, 2)
        x.select(0, 1)
        x.split(2, 1)
        x.chunk(2)
        x.unbind(1)
        x.t().contiguous()
        x.contiguous()
        x.detach()
    assert_no_leak(ops, x)


def test_reductions_with_keywords_leak_nothing():
    x = pith.arange(12, dtype=pith.float32).view(3, 4)
    dims = [0, 1]
    dtype = pith.float64

    def ops():
        x.sum()
        x.sum(dim=1, keepdim=True)
        x.sum(dims, dtype=dtype)
        x.mean(0)
        x.max()
        x.max(dim=1)
        x.argmax(1)
        x.amin(dims)
        x.var(1, correction=0)
        pith.prod(x, 1)
    assert_no_leak(ops, x, dims, dtype)


def test_indexing_get_and_set_leaks_nothing():
    x = pith.zeros(4, 5)
    row = pith.ones(5)
    key = (slice(1, 3), 2)

    def ops():
        x[0]
        x[-1, 2]
        x[1:3]
        x[::2, 1]
        x[..., None]
        x[key]
        x[0] = 1.0
        x[1] = row
        x[key] = 2
        x[:, 0] = pith.tensor(3.0)
    assert_no_leak(ops, x, row, key)


def test_conversions_leak_nothing():
    x = pith.tensor([[1.5, 2.5]])
    one = pith.tensor([7])

    def ops():
        x.tolist()
        one.item()
        int(one)
        float(one)
        bool(one)
        x.shape
        x.stride()
        x.size(1)
        repr(x)
        list(x)
        len(x)
    assert_no_leak(ops, x, one, n=2000)


def test_pith_ops_calls_leak_nothing():
    x = pith.ones(2, 3)
    op = pith.ops.pith.sum.dim_IntList

    def ops():
        op(x, [1])
        pith.ops.pith.max.dim(x, 1, keepdim=True)
        pith.ops.pith.add.Tensor(x, x, alpha=3)
    assert_no_leak(ops, x, op, n=2000)


FAILING = [
    lambda x, i: x + pith.ones(5),
    lambda x, i: x.view(7),
    lambda x, i: x.sum(dim=9),
    lambda x, i: x[10],
    lambda x, i: x + "a",
    lambda x, i: i // pith.zeros(4, dtype=pith.int64),
    lambda x, i: i.add_(0.5),
    lambda x, i: x.sum(bogus=1),
    lambda x, i: x.transpose(0, 1.5),
    lambda x, i: pith.cat([x, pith.ones(2, 2)]),
    lambda x, i: x.item(),
    lambda x, i: pith.tensor([[1, 2], [3]]),
    lambda x, i: pith.zeros(2, dtype="float32"),
    lambda x, i: -pith.tensor([True]),
]


@pytest.mark.parametrize("call", range(len(FAILING)))
def test_failing_calls_leak_nothing(call):
    x, i = pith.ones(4), pith.ones(4, dtype=pith.int64)
    fn = FAILING[call]

    def failing():
        try:
            fn(x, i)
        except (RuntimeError, TypeError, IndexError, ValueError):
            return
        raise AssertionError("the call did not fail")
    assert_no_leak(failing, x, i, n=2000)


@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int16", "int32", "int64",
                                   "float16", "bfloat16", "float32", "float64"])
def test_every_dtype_leaks_nothing(dtype):
    x = pith.ones(3, dtype=getattr(pith, dtype))

    def ops():
        x.clone()
        x.tolist()
        x[1]
        x == x
        x.to(pith.float32) if hasattr(x, "to") else x.float()
    assert_no_leak(ops, x, n=1000)


def test_a_tensor_is_freed_when_its_last_reference_goes():
    before = pith._C._live_tensors()
    x = pith.ones(3)
    v = x.view(3, 1)
    del x
    assert pith._C._live_tensors() > before
    del v
    gc.collect()
    assert pith._C._live_tensors() == before


def test_reference_cycles_through_the_dict_are_collected():
    before = pith._C._live_tensors()
    x = pith.ones(2)
    x.me = x
    del x
    gc.collect()
    assert pith._C._live_tensors() == before
