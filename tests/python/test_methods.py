"""Tensor methods and pith.* functions: their results against PyTorch's and against the
OpOverload they bind (Note [One binder], python_bindings/_C/binder.c), PyTorch's keyword
names, conversions, *_like, named-tuple results and the autograd placeholders."""
import math

import pytest

import pith
from pith import _C

try:
    import torch
except ImportError:  # the oracle is optional
    torch = None


def values(t):
    return (t.dtype, tuple(t.shape), t.tolist())


def sample():
    return pith.tensor([[1.5, -2.0, 3.0], [0.0, 4.0, -1.0]])


# ---- the methods and functions: PyTorch's results, and the OpOverload they bind -----------

SURFACE = dict(_C._surface())

CALLS = [
    ("add", (2.0,), {}), ("add", (pith.ones(3),), {}), ("sub", (1,), {}), ("mul", (True,), {}),
    ("div", (4,), {}), ("floor_divide", (2,), {}), ("remainder", (2.5,), {}),
    ("pow", (2,), {}), ("maximum", (pith.zeros(2, 3),), {}), ("eq", (3.0,), {}),
    ("lt", (0,), {}), ("neg", (), {}), ("abs", (), {}), ("exp", (), {}), ("relu", (), {}),
    ("sigmoid", (), {}), ("tanh", (), {}), ("sum", (), {}), ("sum", (1,), {}),
    ("sum", (), {"dim": 0}), ("sum", ((0, 1),), {}), ("sum", ([1],), {"keepdim": True}),
    ("sum", (-1, True), {}), ("mean", (0,), {}), ("amax", (1,), {}), ("amin", (), {}),
    ("argmax", (), {}), ("argmax", (1,), {"keepdim": True}), ("argmin", (0,), {}),
    ("reshape", (3, 2), {}), ("reshape", ((6,),), {}), ("reshape", ([-1],), {}),
    ("permute", (1, 0), {}), ("permute", ((1, 0),), {}), ("transpose", (0, 1), {}),
    ("transpose", (), {"dim0": 1, "dim1": 0}), ("flatten", (), {}), ("flatten", (0, 1), {}),
    ("unsqueeze", (0,), {}), ("unsqueeze", (), {"dim": -1}), ("squeeze", (), {}),
    ("t", (), {}), ("clone", (), {}), ("detach", (), {}), ("softmax", (1,), {}),
    ("log_softmax", (), {"dim": 0}), ("select", (0, 1), {}), ("narrow", (1, 1, 2), {}),
    ("matmul", (pith.ones(3, 2),), {}),
]

# The overload each CALLS entry binds (pith.ops.pith.<name>.<overload>); "default" if absent.
OVERLOADS = {"add": "Tensor", "sub": "Tensor", "mul": "Tensor", "div": "Tensor",
             "remainder": "Tensor", "pow": "Tensor_Tensor", "eq": "Tensor", "lt": "Tensor",
             "sum": "dim_IntList", "mean": "dim", "transpose": "int", "flatten": "using_ints",
             "select": "int", "softmax": "int", "log_softmax": "int"}
VARARGS = {"reshape", "permute", "view", "expand"}  # int... for the schema's int[]


def direct_call(name, x, args, kwargs):
    """The CALLS entry made on the OpOverload it binds, with the schema's own arguments."""
    overload = OVERLOADS.get(name, "default")
    if name == "squeeze" and (args or kwargs):
        overload = "dim"
    if name in VARARGS and len(args) > 1:
        args = (list(args),)
    return getattr(getattr(pith.ops.pith, name), overload)(x, *args, **kwargs)


def as_torch(v):
    if isinstance(v, pith.Tensor):
        return torch.tensor(v.tolist(), dtype=getattr(torch, str(v.dtype).split(".")[-1]))
    return v


def assert_matches_torch(got, want):
    assert tuple(got.shape) == tuple(want.shape)
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1]
    for g, w in zip(pith.flatten(got).tolist() if got.ndim else [got.item()],
                    want.flatten().tolist() if want.ndim else [want.item()]):
        assert g == w or (math.isnan(g) and math.isnan(w)) or math.isclose(g, w, rel_tol=1e-6)


@pytest.mark.parametrize("name,args,kwargs", CALLS, ids=lambda v: repr(v)[:20])
def test_method_matches_its_overload(name, args, kwargs):
    x = sample()
    assert values(getattr(x, name)(*args, **kwargs)) == values(direct_call(name, x, args, kwargs))


@pytest.mark.parametrize("name,args,kwargs", CALLS, ids=lambda v: repr(v)[:20])
def test_function_matches_its_overload(name, args, kwargs):
    if SURFACE[name] not in ("both", "function"):
        assert not hasattr(pith, name) or not isinstance(getattr(pith, name), _C.Function)
        pytest.skip("method only")
    x = sample()
    if name in VARARGS and len(args) > 1:  # only methods take int... (as PyTorch's)
        with pytest.raises(TypeError, match=rf"^{name}\(\) takes 2 positional arguments "
                                            "but 3 were given"):
            getattr(pith, name)(x, *args, **kwargs)
        return
    assert values(getattr(pith, name)(x, *args, **kwargs)) == \
        values(direct_call(name, x, args, kwargs))


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("name,args,kwargs", CALLS, ids=lambda v: repr(v)[:20])
def test_method_matches_torch(name, args, kwargs):
    x = sample()
    targs = tuple(as_torch(a) for a in args)
    assert_matches_torch(getattr(x, name)(*args, **kwargs),
                         getattr(as_torch(x), name)(*targs, **kwargs))


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("name,args,kwargs", CALLS, ids=lambda v: repr(v)[:20])
def test_function_matches_torch(name, args, kwargs):
    if SURFACE[name] not in ("both", "function"):
        pytest.skip("method only")
    x = sample()
    targs = tuple(as_torch(a) for a in args)
    if name in VARARGS and len(args) > 1:
        with pytest.raises(TypeError) as got:
            getattr(pith, name)(x, *args, **kwargs)
        with pytest.raises(TypeError) as want:
            getattr(torch, name)(as_torch(x), *targs, **kwargs)
        assert str(got.value) == str(want.value)
        return
    assert_matches_torch(getattr(pith, name)(x, *args, **kwargs),
                         getattr(torch, name)(as_torch(x), *targs, **kwargs))


LINEAR_FORMS = (((1,), {}), ((1, 2), {}), ((1,), {"bias": 2}), ((1, None), {}))


@pytest.mark.parametrize("form", LINEAR_FORMS, ids=repr)
def test_linear_matches_its_overload_and_torch(form):
    x, w, b = sample(), pith.ones(4, 3) * 0.5, pith.arange(4, dtype=pith.float32)
    pick = {1: w, 2: b, None: None}
    args = tuple(pick[a] for a in form[0])
    kwargs = {k: pick[v] for k, v in form[1].items()}
    got = pith.linear(x, *args, **kwargs)
    assert values(got) == values(pith.ops.pith.linear.default(x, *args, **kwargs))
    if torch is not None:
        want = torch.nn.functional.linear(as_torch(x), *map(as_torch, args),
                                          **{k: as_torch(v) for k, v in kwargs.items()})
        assert_matches_torch(got, want)


ERROR_CALLS = [
    ("sum", (5,)), ("sum", ("a",)), ("transpose", (0, 7)), ("reshape", (4, 4)),
    ("add", ("x",)), ("matmul", (2.0,)), ("unsqueeze", (9,)), ("select", (0, 9)),
    ("softmax", (3,)), ("reshape", (2.5, 1)),
]


@pytest.mark.parametrize("name,args", ERROR_CALLS)
def test_method_errors_match_the_overload(name, args):
    x = sample()
    with pytest.raises(Exception) as method:
        getattr(x, name)(*args)
    with pytest.raises(Exception) as direct:
        direct_call(name, x, args, {})
    assert str(method.value)
    # The binder refuses a wrong type with a TypeError before the op runs; the op's own
    # errors (a dim out of range, a bad shape) are the same from both.
    if not isinstance(method.value, TypeError):
        assert type(method.value) is type(direct.value)


@pytest.mark.skipif(torch is None, reason="torch is not installed")
@pytest.mark.parametrize("name,args", ERROR_CALLS)
def test_method_errors_match_torch(name, args):
    x = sample()
    with pytest.raises(Exception) as got:
        getattr(x, name)(*args)
    with pytest.raises(Exception) as want:
        getattr(as_torch(x), name)(*args)
    assert isinstance(got.value, TypeError) == isinstance(want.value, TypeError), \
        (got.value, want.value)


def test_inplace_methods_return_self():
    x = sample()
    expected = -pith.relu((sample() + 1) * 2) - pith.ones(3)
    for name, args in (("add_", (1,)), ("mul_", (2,)), ("relu_", ()), ("neg_", ()),
                       ("sub_", (pith.ones(3),))):
        assert getattr(x, name)(*args) is x
    assert x.tolist() == expected.tolist()


# ---- PyTorch's keywords -------------------------------------------------------------------

def test_out_keyword():
    x = sample()
    out = pith.empty(2, 3)
    r = pith.add(x, x, out=out)
    assert r is out
    assert out.tolist() == (x * 2).tolist()


def test_out_keyword_on_an_op_without_out_is_a_type_error():
    with pytest.raises(TypeError, match="out"):
        pith.reshape(sample(), (6,), out=pith.empty(6))


# The destination-passing out= kernels (Note [Destination passing]): each against PyTorch's
# out= (or its functional op where torch's Python takes no out=) and against pith's own
# functional op, bit for bit; the out is returned, resized when empty, refused when of
# another shape or dtype.
def _wavy(*shape):
    n = math.prod(shape)
    return [3 * math.sin(0.7 * i) for i in range(n)], shape


def _pair(*shape):
    flat, shape = _wavy(*shape)
    p = pith.tensor(flat).reshape(shape)
    return p, (torch.tensor(flat).reshape(shape) if torch is not None else None)


def _index(values):
    return pith.tensor(values), (torch.tensor(values) if torch is not None else None)


OUT_CALLS = [
    # name, (pith args, torch args) builder, exact against torch
    ("sum", lambda x, t: ((x, 1), (t, 1)), False),
    ("mean", lambda x, t: ((x, [0, 2]), (t, [0, 2])), False),
    ("amax", lambda x, t: ((x, 1), (t, 1)), True),
    ("amin", lambda x, t: ((x, [0, 2], True), (t, [0, 2], True)), True),
    ("argmax", lambda x, t: ((x, 2), (t, 2)), True),
    ("argmin", lambda x, t: ((x, 0), (t, 0)), True),
    ("softmax", lambda x, t: ((x, 2), (t, 2)), False),
    ("log_softmax", lambda x, t: ((x, 1), (t, 1)), False),
]


@pytest.mark.skipif(torch is None, reason="needs torch")
@pytest.mark.parametrize("name,make,exact", OUT_CALLS, ids=[c[0] for c in OUT_CALLS])
def test_out_kernels_match_torch_and_the_functional_op(name, make, exact):
    x, t = _pair(3, 4, 5)
    pargs, targs = make(x, t)
    expected = getattr(torch, name)(*targs)
    functional = getattr(pith, name)(*pargs)
    out = pith.empty(0, dtype=functional.dtype)
    assert getattr(pith, name)(*pargs, out=out) is out
    assert out.tolist() == functional.tolist()
    t_out = torch.empty(0, dtype=expected.dtype)
    getattr(torch, name)(*targs, out=t_out)
    assert tuple(out.shape) == tuple(t_out.shape)
    if exact:
        assert out.tolist() == t_out.tolist()
    else:
        assert torch.allclose(torch.tensor(out.tolist()), t_out, rtol=1e-5, atol=1e-6)


@pytest.mark.skipif(torch is None, reason="needs torch")
def test_linalg_and_indexing_out_kernels_match_torch():
    a, ta = _pair(4, 3)
    m, tm = _pair(3, 6)
    s, ts = _pair(6)
    w, tw = _pair(6, 3)
    out = pith.empty(4, 6)
    pith.addmm(s, a, m, beta=0.5, alpha=2, out=out)
    assert out.tolist() == pith.addmm(s, a, m, beta=0.5, alpha=2).tolist()
    assert torch.allclose(torch.tensor(out.tolist()),
                          torch.addmm(ts, ta, tm, beta=0.5, alpha=2), atol=1e-5)
    out = pith.empty(4, 6)
    pith.linear(a, w, s, out=out)
    assert out.tolist() == pith.linear(a, w, s).tolist()
    assert torch.allclose(torch.tensor(out.tolist()), torch._C._nn.linear(ta, tw, ts),
                          atol=1e-5)
    x, tx = _pair(4, 5)
    idx, tidx = _index([[0, 4, 1], [2, 2, 3], [1, 0, 0], [4, 3, 2]])
    out = pith.empty(4, 3)
    pith.gather(x, 1, idx, out=out)
    assert out.tolist() == torch.gather(tx, 1, tidx).tolist()
    sel, tsel = _index([3, 0, 3])
    out = pith.empty(0)
    pith.index_select(x, 0, sel, out=out)
    assert out.tolist() == torch.index_select(tx, 0, tsel).tolist()
    out = pith.empty(3, 5).t().t()
    pith.embedding(x, sel, out=out)
    assert out.tolist() == torch.embedding(tx, tsel).tolist()
    g, tg = _pair(5)
    b, tb = _pair(5)
    out = pith.empty(4, 5)
    pith.layer_norm(x, [5], g, b, out=out)
    assert out.tolist() == pith.layer_norm(x, [5], g, b).tolist()
    assert torch.allclose(torch.tensor(out.tolist()),
                          torch.nn.functional.layer_norm(tx, [5], tg, tb), atol=1e-5)


def test_out_kernels_into_a_transposed_out_keep_its_strides():
    x, _ = _pair(5, 4)
    out = pith.empty(4, 5).t()
    pith.softmax(x, 1, out=out)
    assert out.stride() == (1, 5)
    assert out.tolist() == pith.softmax(x, 1).tolist()
    out = pith.empty(4, 5).t()
    pith.sum(pith.stack([x, x]), 0, out=out)
    assert out.tolist() == pith.sum(pith.stack([x, x]), 0).tolist()


def test_sum_out_computes_in_outs_dtype():
    x = pith.tensor([[1, 2], [3, 4]], dtype=pith.int32)
    out = pith.empty(2, dtype=pith.float64)
    pith.sum(x, 0, out=out)
    assert values(out) == (pith.float64, (2,), [4.0, 6.0])


@pytest.mark.parametrize("call", [
    lambda o: pith.sum(sample(), 0, out=o),
    lambda o: pith.amax(sample(), 0, out=o),
    lambda o: pith.softmax(sample(), 0, out=o),
    lambda o: pith.gather(sample(), 1, pith.tensor([[0], [1]]), out=o),
    lambda o: pith.layer_norm(sample(), [3], out=o),
], ids=["sum", "amax", "softmax", "gather", "layer_norm"])
def test_out_kernels_refuse_another_shape(call):
    out = pith.full((4, 4), 7.0)
    with pytest.raises(RuntimeError, match="only an empty out= tensor is resized"):
        call(out)
    assert out.tolist() == [[7.0] * 4] * 4


@pytest.mark.parametrize("call", [
    lambda o: pith.amax(sample(), 0, out=o),
    lambda o: pith.softmax(sample(), 0, out=o),
    lambda o: pith.index_select(sample(), 0, pith.tensor([1]), out=o),
    lambda o: pith.addmm(pith.zeros(3), sample().t(), sample(), out=o),
], ids=["amax", "softmax", "index_select", "addmm"])
def test_out_kernels_refuse_another_dtype(call):
    out = pith.empty(0, dtype=pith.float64)
    with pytest.raises(TypeError, match="Expected out tensor to have dtype float32"):
        call(out)


def test_add_alpha():
    x = sample()
    assert pith.add(x, x, alpha=2).tolist() == (x * 3).tolist()
    assert x.sub(x, alpha=0.5).tolist() == (x * 0.5).tolist()


def test_sum_dtype():
    x = pith.tensor([100, 100, 100], dtype=pith.int8)
    assert x.sum(dtype=pith.int64).item() == 300
    assert x.sum(dtype=pith.int64).dtype == pith.int64
    assert pith.ones(3).mean(dtype=pith.float64).dtype == pith.float64


def test_input_keyword_of_functions():
    x = sample()
    assert pith.sum(input=x).item() == x.sum().item()


def test_max_forms():
    x = sample()
    r = x.max(1)
    assert r.values.tolist() == [3.0, 4.0] and r.indices.tolist() == [2, 1]
    values_, indices = pith.min(x, dim=0, keepdim=True)
    assert values_.shape == (1, 3) and indices.tolist() == [[1, 0, 1]]
    assert x.max().item() == 4.0
    assert x.max(pith.zeros(2, 3)).tolist() == pith.maximum(x, pith.zeros(2, 3)).tolist()


def test_view_varargs_and_sequence():
    x = sample()
    assert x.view(3, 2).shape == (3, 2)
    assert x.view((3, 2)).shape == (3, 2)
    assert x.view([6]).shape == (6,)
    assert x.view(x.shape).shape == (2, 3)
    assert x.expand(4, 2, 3).shape == (4, 2, 3)


# ---- conversions -------------------------------------------------------------------------

@pytest.mark.parametrize("name,dtype", [
    ("float", pith.float32), ("double", pith.float64), ("half", pith.float16),
    ("bfloat16", pith.bfloat16), ("long", pith.int64), ("int", pith.int32),
    ("short", pith.int16), ("char", pith.int8), ("byte", pith.uint8), ("bool", pith.bool),
])
def test_conversion_methods(name, dtype):
    x = pith.tensor([0.0, 1.0, 2.5])
    y = getattr(x, name)()
    assert y.dtype == dtype
    assert y.tolist() == x.to(dtype).tolist()
    assert getattr(y, name)() is y  # already that dtype: the tensor itself, as PyTorch


def test_to_forms():
    x = sample()
    assert x.to(pith.float32) is x
    assert x.to(pith.float32, copy=True) is not x
    assert x.to(dtype=pith.int64).dtype == pith.int64
    assert x.to("cpu") is x
    assert x.to(pith.ones(1, dtype=pith.float64)).dtype == pith.float64
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        x.to("cuda")
    with pytest.raises(RuntimeError, match="accelerator"):  # an int is an accelerator index
        x.to(3)
    with pytest.raises(TypeError):
        x.to(3.5)


# ---- *_like and factories ----------------------------------------------------------------

@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like", "rand_like",
                                  "randn_like"])
def test_like_factories(name):
    x = pith.ones(2, 3, dtype=pith.float64)
    y = getattr(pith, name)(x)
    assert y.shape == x.shape and y.dtype == x.dtype
    assert getattr(pith, name)(x, dtype=pith.float32).dtype == pith.float32


def test_full_like_and_randint_like():
    x = pith.ones(2, 2, dtype=pith.int32)
    assert pith.full_like(x, 7).tolist() == [[7, 7], [7, 7]]
    r = pith.randint_like(x, 5)
    assert r.dtype == pith.int32 and all(0 <= v < 5 for row in r.tolist() for v in row)


def test_factories_refuse_other_devices():
    with pytest.raises(AssertionError, match="not compiled with CUDA"):
        pith.zeros(2, device="cuda")
    with pytest.raises(NotImplementedError, match="'mps' is not supported"):
        pith.zeros(2, device="mps")
    assert pith.zeros(2, device="cpu").shape == (2,)


# ---- requires_grad on factories and tensors ---------------------------------------------

@pytest.mark.parametrize("make", [
    lambda M: M.ones(2, requires_grad=True), lambda M: M.zeros((2,), requires_grad=True),
    lambda M: M.tensor([1.0], requires_grad=True), lambda M: M.full((2,), 1.0, requires_grad=True),
    lambda M: M.arange(3.0, requires_grad=True), lambda M: M.ones(2).requires_grad_(),
    lambda M: M.zeros_like(M.ones(2), requires_grad=True), lambda M: M.randn(2, requires_grad=True),
])
def test_factories_make_leaves_that_require_grad(make):
    x = make(pith)
    assert x.requires_grad is True and x.is_leaf is True and x.grad is None
    assert x.grad_fn is None


def test_requires_grad_attribute():
    x = pith.ones(2)
    assert x.requires_grad is False and x.grad is None and x.is_leaf
    x.requires_grad = False
    x.requires_grad = True
    assert x.requires_grad is True and x.is_leaf
    with pytest.raises(TypeError):
        x.requires_grad = 1


# ---- subclasses --------------------------------------------------------------------------

def test_make_subclass_shares_storage():
    class Sub(pith.Tensor):
        pass

    x = pith.zeros(3)
    s = pith.Tensor._make_subclass(Sub, x)
    assert type(s) is Sub and s is not x
    s.add_(1)
    assert x.tolist() == [1.0, 1.0, 1.0]
    s.tag = "kept"
    assert s.tag == "kept"


def test_make_subclass_errors():
    with pytest.raises(TypeError, match="subclass of pith.Tensor"):
        pith.Tensor._make_subclass(int, pith.zeros(1))
    with pytest.raises(TypeError, match="must be a pith.Tensor"):
        pith.Tensor._make_subclass(type("S", (pith.Tensor,), {}), [1.0])


def test_num_threads_round_trip():
    n = pith.get_num_threads()
    assert n >= 1
    try:
        pith.set_num_threads(1)
        assert pith.get_num_threads() == 1
    finally:
        pith.set_num_threads(n)
    with pytest.raises(RuntimeError, match="positive"):
        pith.set_num_threads(0)
    with pytest.raises(TypeError):
        pith.set_num_threads(1.5)


def test_nonzero_forms_match_numpy():
    import numpy as np
    a = np.array([[0, 1, 0], [2, 0, 3]])
    x = pith.tensor(a.tolist())
    assert x.nonzero().tolist() == np.argwhere(a).tolist()
    rows, cols = pith.nonzero(x, as_tuple=True)
    want_rows, want_cols = np.nonzero(a)
    assert rows.tolist() == want_rows.tolist() and cols.tolist() == want_cols.tolist()
    assert pith.tensor(5).nonzero(as_tuple=True)[0].tolist() == [0]


def test_index_put_and_masked_select():
    x = pith.zeros(4)
    y = x.index_put((pith.tensor([1, 3]),), pith.tensor([5.0, 6.0]))
    assert x.tolist() == [0.0] * 4 and y.tolist() == [0.0, 5.0, 0.0, 6.0]
    assert x.index_put_((pith.tensor([0]),), pith.tensor([2.0])) is x
    assert x.tolist() == [2.0, 0.0, 0.0, 0.0]
    assert pith.masked_select(y, y > 0).tolist() == [5.0, 6.0]
