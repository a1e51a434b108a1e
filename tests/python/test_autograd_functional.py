"""pith.autograd.functional against torch.autograd.functional: vjp, jvp, jacobian, hessian,
vhp and hvp on the same functions and values give the same structure (a Tensor, a tuple, a
tuple of tuples), values, and history (create_graph), and raise the same errors (strict
mode, bad v, bad functions). The functions are written once with Tensor methods, so that
each runs on either library's tensors."""
import inspect

import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import pith  # noqa: E402
from conftest import examples, nonempty_shapes  # noqa: E402
from pith.autograd import functional as F  # noqa: E402
from test_autograd_ops import known_failures  # noqa: E402

TF = torch.autograd.functional


@pytest.fixture(scope="module", autouse=True)
def one_torch_thread():
    # torch's intra-op threads wait on each other on a shared machine; the tensors are tiny
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def rand(*shape, seed=0):
    return torch.rand(shape, generator=torch.Generator().manual_seed(seed),
                      dtype=torch.float64) * 2 - 1


def to_pith(value):
    if isinstance(value, tuple):
        return tuple(to_pith(v) for v in value)
    return pith.from_numpy(value.detach().numpy().copy())


def assert_same(got, want, where="result"):
    """got (pith) has want's (torch's) structure, shapes, dtypes, values and requires_grad."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), where
        for i, (g, w) in enumerate(zip(got, want)):
            assert_same(g, w, f"{where}[{i}]")
        return
    assert isinstance(got, pith.Tensor), f"{where}: {type(got).__name__}, not a Tensor"
    assert tuple(got.shape) == tuple(want.shape), where
    assert str(got.dtype).split(".")[-1] == str(want.dtype).split(".")[-1], where
    assert got.requires_grad == want.requires_grad, f"{where}: requires_grad"
    torch.testing.assert_close(torch.from_numpy(got.detach().numpy().copy()), want.detach(),
                               rtol=1e-10, atol=1e-12, msg=lambda m: f"{where}: {m}")


@pytest.mark.parametrize("name", ["vjp", "jvp", "jacobian", "hessian", "vhp", "hvp"])
def test_the_signature_is_torchs(name):
    want = inspect.signature(getattr(TF, name))
    got = inspect.signature(getattr(F, name))
    assert [(p.name, p.kind, p.default) for p in got.parameters.values()] == \
        [(p.name, p.kind, p.default) for p in want.parameters.values()]


def test_the_module_is_an_attribute_of_autograd():
    assert pith.autograd.functional is F and set(F.__all__) == set(TF.__all__)


# ---- the functions: name -> (function, inputs) --------------------------------------------

FUNCTIONS = {
    "elementwise": (lambda x: x.sin() * x, rand(3, 4)),
    "reduction": (lambda x: (x.exp() * x).sum(1), rand(3, 4, seed=1)),
    "matrix_vector": (lambda a, b: a @ b, (rand(3, 4, seed=2), rand(4, seed=3))),
    "tuple_to_tuple": (lambda x, y: (x * y + y.exp(), x.tanh()),
                       (rand(3, seed=4), rand(3, seed=5))),
    "tuple_to_one": (lambda x, y: x * y.sigmoid(), (rand(2, 3, seed=6), rand(2, 3, seed=7))),
    "one_to_tuple": (lambda x: (x.cos(), x * x), rand(5, seed=8)),
    "zero_dim": (lambda x: x.exp() * x, rand(seed=9)),
}
SCALAR_FUNCTIONS = {
    "cubic_sum": (lambda x: (x * x * x).sum(), rand(4, seed=10)),
    "two_inputs": (lambda x, y: (x * y.exp()).sum() + (x * x).sum(),
                   (rand(3, seed=11), rand(3, seed=12))),
    "zero_dim": (lambda x: x.sin() * x, rand(seed=13)),
    "softmax_entropy": (lambda x: -(x.softmax(0) * x.log_softmax(0)).sum(), rand(4, seed=14)),
}


def outputs_like(fn, inputs, seed=20):
    out = fn(*(inputs if isinstance(inputs, tuple) else (inputs,)))
    if isinstance(out, tuple):
        return tuple(rand(*o.shape, seed=seed + i) for i, o in enumerate(out))
    return rand(*out.shape, seed=seed)


def inputs_like(inputs, seed=30):
    if isinstance(inputs, tuple):
        return tuple(rand(*x.shape, seed=seed + i) for i, x in enumerate(inputs))
    return rand(*inputs.shape, seed=seed)


# Results that pith gets wrong today: (api, function) -> reason.
KNOWN = {}


def apis(api, names):
    return [pytest.param(n, marks=pytest.mark.xfail(strict=True, reason=KNOWN[(api, n)]))
            if (api, n) in KNOWN else n for n in names]


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", apis("vjp", FUNCTIONS))
def test_vjp_is_torchs(name, create_graph):
    fn, inputs = FUNCTIONS[name]
    v = outputs_like(fn, inputs)
    want = TF.vjp(fn, inputs, v, create_graph=create_graph)
    assert_same(F.vjp(fn, to_pith(inputs), to_pith(v), create_graph=create_graph), want)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", apis("jvp", FUNCTIONS))
@known_failures(lambda name, create_graph: ("jvp", name) in KNOWN)
def test_jvp_is_torchs(name, create_graph):
    fn, inputs = FUNCTIONS[name]
    v = inputs_like(inputs)
    want = TF.jvp(fn, inputs, v, create_graph=create_graph)
    assert_same(F.jvp(fn, to_pith(inputs), to_pith(v), create_graph=create_graph), want)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", apis("jacobian", FUNCTIONS))
def test_jacobian_is_torchs(name, create_graph):
    fn, inputs = FUNCTIONS[name]
    want = TF.jacobian(fn, inputs, create_graph=create_graph)
    assert_same(F.jacobian(fn, to_pith(inputs), create_graph=create_graph), want)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", SCALAR_FUNCTIONS)
def test_hessian_is_torchs(name, create_graph):
    fn, inputs = SCALAR_FUNCTIONS[name]
    want = TF.hessian(fn, inputs, create_graph=create_graph)
    assert_same(F.hessian(fn, to_pith(inputs), create_graph=create_graph), want)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", apis("hvp", SCALAR_FUNCTIONS))
@known_failures(lambda name, create_graph: ("hvp", name) in KNOWN)
def test_hvp_is_torchs(name, create_graph):
    check_hessian_vector_product("hvp", name, create_graph)


@pytest.mark.parametrize("create_graph", [False, True])
@pytest.mark.parametrize("name", apis("vhp", SCALAR_FUNCTIONS))
def test_vhp_is_torchs(name, create_graph):
    check_hessian_vector_product("vhp", name, create_graph)


def check_hessian_vector_product(api, name, create_graph):
    fn, inputs = SCALAR_FUNCTIONS[name]
    v = inputs_like(inputs)
    want = getattr(TF, api)(fn, inputs, v, create_graph=create_graph)
    assert_same(getattr(F, api)(fn, to_pith(inputs), to_pith(v), create_graph=create_graph),
                want)


@pytest.mark.parametrize("api", ["vjp", "jvp", "hvp", "vhp"])
def test_v_may_be_omitted_for_one_element(api):
    fn = (lambda x: (x * x).sin()) if api in ("vjp", "jvp") else (lambda x: x.exp() * x)
    x = rand(1, seed=40)
    assert_same(getattr(F, api)(fn, to_pith(x)), getattr(TF, api)(fn, x))


def test_the_inputs_are_left_alone():
    x = pith.from_numpy(rand(3).numpy().copy())
    F.jacobian(lambda t: t * t, x)
    F.hessian(lambda t: (t * t).sum(), x)
    assert not x.requires_grad and x.grad is None and x.grad_fn is None


def test_create_graph_keeps_the_inputs_history():
    x = pith.from_numpy(rand(3).numpy().copy()).requires_grad_()
    jac = F.jacobian(lambda t: t * t * t, x, create_graph=True)
    (g,) = pith.autograd.grad(jac.sum(), x)
    X = rand(3).requires_grad_()
    (want,) = torch.autograd.grad(TF.jacobian(lambda t: t * t * t, X, create_graph=True).sum(), X)
    assert_same(g, want)


@given(shape=nonempty_shapes, seed=st.integers(0, 2**16))
@examples(15)
def test_jacobian_and_vjp_of_any_shape_are_torchs(shape, seed):
    x = rand(*shape, seed=seed)
    v = rand(*shape, seed=seed + 1)

    def fn(t):
        return t.tanh() * t

    assert_same(F.jacobian(fn, to_pith(x)), TF.jacobian(fn, x))
    assert_same(F.vjp(fn, to_pith(x), to_pith(v)), TF.vjp(fn, x, v))
    assert_same(F.jvp(fn, to_pith(x), to_pith(v)), TF.jvp(fn, x, v))


# ---- errors: pith's type and message are torch's ------------------------------------------

def raises_like_torch(call, error=RuntimeError):
    """call(lib, module) raises `error` in both libraries with the same message (torch.Size
    spelled pith.Size)."""
    with pytest.raises(error) as want:
        call(torch, TF)
    with pytest.raises(error) as got:
        call(pith, F)
    assert str(got.value) == str(want.value).replace("torch.", "pith.")


def tensor(lib, *shape, requires_grad=False, seed=0):
    t = rand(*shape, seed=seed)
    return (t if lib is torch else to_pith(t)).requires_grad_(requires_grad)


STRICT_ERRORS = {
    # an output that does not require grad
    "vjp_output": lambda lib, M: M.vjp(lambda x: x.detach(), tensor(lib, 3), tensor(lib, 3),
                                       strict=True),
    # an input that no output depends on
    "vjp_input": lambda lib, M: M.vjp(lambda x, y: x * 2, (tensor(lib, 3), tensor(lib, 3)),
                                      tensor(lib, 3), strict=True),
    "jvp_input": lambda lib, M: M.jvp(lambda x, y: x * x, (tensor(lib, 3), tensor(lib, 3)),
                                      (tensor(lib, 3), tensor(lib, 3)), strict=True),
    "jacobian_input": lambda lib, M: M.jacobian(lambda x, y: x * x,
                                                (tensor(lib, 2), tensor(lib, 2)), strict=True),
    # a linear function: its jacobian does not depend on the input
    "jacobian_create_graph": lambda lib, M: M.jacobian(lambda x: x * 2, tensor(lib, 2),
                                                       create_graph=True, strict=True),
    "vjp_create_graph": lambda lib, M: M.vjp(lambda x: x * 2, tensor(lib, 2), tensor(lib, 2),
                                             create_graph=True, strict=True),
    "hessian_linear": lambda lib, M: M.hessian(lambda x: (x * 2).sum(), tensor(lib, 2),
                                               strict=True),
    "vhp_linear": lambda lib, M: M.vhp(lambda x: (x * 2).sum(), tensor(lib, 2), tensor(lib, 2),
                                       strict=True),
    "hvp_linear": lambda lib, M: M.hvp(lambda x: (x * 2).sum(), tensor(lib, 2), tensor(lib, 2),
                                       strict=True),
    "hvp_input": lambda lib, M: M.hvp(lambda x, y: (x * x * x).sum(),
                                      (tensor(lib, 2), tensor(lib, 2)),
                                      (tensor(lib, 2), tensor(lib, 2)), strict=True),
}


@pytest.mark.parametrize("case", STRICT_ERRORS)
def test_strict_mode_errors_are_torchs(case):
    raises_like_torch(STRICT_ERRORS[case])


def test_without_strict_an_independent_input_gets_zeros():
    fn = (lambda x, y: x * 2)
    want = TF.vjp(fn, (rand(3), rand(3, seed=1)), rand(3, seed=2))
    assert_same(F.vjp(fn, (to_pith(rand(3)), to_pith(rand(3, seed=1))),
                      to_pith(rand(3, seed=2))), want)


ARGUMENT_ERRORS = {
    "v_size": (RuntimeError, lambda lib, M: M.vjp(lambda x: x * x, tensor(lib, 3),
                                                  tensor(lib, 4))),
    "v_entry_size": (RuntimeError, lambda lib, M: M.jvp(
        lambda x, y: x * y, (tensor(lib, 3), tensor(lib, 3)), (tensor(lib, 3), tensor(lib, 2)))),
    "v_length": (RuntimeError, lambda lib, M: M.vhp(
        lambda x, y: (x * y).sum(), (tensor(lib, 3), tensor(lib, 3)), (tensor(lib, 3),))),
    "v_single": (RuntimeError, lambda lib, M: M.vjp(
        lambda x: (x, x * 2), tensor(lib, 3), (tensor(lib, 3),) * 3)),
    "v_missing_output": (RuntimeError, lambda lib, M: M.vjp(lambda x: x * x, tensor(lib, 3))),
    "v_missing_input": (RuntimeError, lambda lib, M: M.jvp(lambda x: x.sum(), tensor(lib, 3))),
    "inputs_type": (TypeError, lambda lib, M: M.jacobian(lambda x, y: x, (tensor(lib, 2), 3))),
    "input_type": (TypeError, lambda lib, M: M.vjp(lambda x: x, [tensor(lib, 2)])),
    "outputs_type": (TypeError, lambda lib, M: M.jacobian(lambda x: (x, 3), tensor(lib, 2))),
    "hessian_not_scalar": (RuntimeError, lambda lib, M: M.hessian(lambda x: x * x,
                                                                  tensor(lib, 2))),
    "hessian_tuple": (RuntimeError, lambda lib, M: M.hessian(lambda x: (x.sum(),),
                                                             tensor(lib, 2))),
    "hvp_not_scalar": (RuntimeError, lambda lib, M: M.hvp(lambda x: x * x, tensor(lib, 2),
                                                          tensor(lib, 2))),
    "vhp_tuple": (RuntimeError, lambda lib, M: M.vhp(lambda x: (x.sum(), x.sum()),
                                                     tensor(lib, 2), tensor(lib, 2))),
    "strategy": (AssertionError, lambda lib, M: M.jacobian(lambda x: x, tensor(lib, 2),
                                                           strategy="sideways")),
    "outer_strategy": (AssertionError, lambda lib, M: M.hessian(
        lambda x: x.sum(), tensor(lib, 2), outer_jacobian_strategy="sideways")),
    "forward_mode_create_graph": (NotImplementedError, lambda lib, M: M.jacobian(
        lambda x: x, tensor(lib, 2), create_graph=True, strategy="forward-mode")),
    "forward_mode_strict": (RuntimeError, lambda lib, M: M.jacobian(
        lambda x: x, tensor(lib, 2), strict=True, strategy="forward-mode")),
    "vectorize_strict": (RuntimeError, lambda lib, M: M.jacobian(
        lambda x: x * x, tensor(lib, 2), strict=True, vectorize=True)),
    "empty_output": (RuntimeError, lambda lib, M: M.jacobian(lambda x: x[:0] * 1,
                                                             tensor(lib, 2))),
}


@pytest.mark.parametrize("case", ARGUMENT_ERRORS)
def test_argument_errors_are_torchs(case):
    error, call = ARGUMENT_ERRORS[case]
    raises_like_torch(call, error)


@pytest.mark.parametrize("call", [
    lambda x: F.jacobian(lambda t: t * t, x, vectorize=True),
    lambda x: F.jacobian(lambda t: t * t, x, strategy="forward-mode", vectorize=True),
    lambda x: F.jacobian(lambda t: t * t, x, strategy="forward-mode"),
    lambda x: F.hessian(lambda t: (t * t).sum(), x, vectorize=True),
    lambda x: F.hessian(lambda t: (t * t).sum(), x, vectorize=True,
                        outer_jacobian_strategy="forward-mode"),
], ids=["vectorize", "forward_mode_vectorize", "forward_mode", "hessian_vectorize",
        "hessian_forward_mode"])
def test_what_needs_vmap_or_forward_ad_is_not_implemented(call):
    with pytest.raises(NotImplementedError, match="pith does not have"):
        call(to_pith(rand(2)))
