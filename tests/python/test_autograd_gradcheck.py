"""pith.autograd.gradcheck and gradgradcheck themselves, with torch's as the oracle: their
signatures, that they pass on correct functions (slow and fast mode, any shape), and that
they catch each kind of wrong backward with torch's error type and message.

A wrong backward is made by a tensor hook that scales a gradient, or, for the kinds of
wrong that a hook cannot make (nondeterminism, a gradient for a zero grad_output, another
dtype, a wrong second derivative), by replacing autograd.grad (which both libraries' checks
look up at each call) with one that breaks the gradients in that way; the same hook or
replacement runs under torch's checks."""
import inspect

import pytest
from hypothesis import given
from hypothesis import strategies as st

torch = pytest.importorskip("torch")

import pith  # noqa: E402
from conftest import broadcastable_shapes, examples, nonempty_shapes  # noqa: E402
from pith.autograd.gradcheck import GradcheckError  # noqa: E402
from torch.autograd.gradcheck import GradcheckError as TorchGradcheckError  # noqa: E402

LIBS = [torch, pith]


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


def leaf(lib, value, requires_grad=True):
    """A leaf of `lib` with value's (a torch tensor's) values."""
    t = value.detach().clone() if lib is torch else \
        pith.from_numpy(value.detach().numpy().copy())
    return t.requires_grad_(requires_grad)


def error_of(lib, error):
    """The library's own class for GradcheckError."""
    if error is GradcheckError and lib is torch:
        return TorchGradcheckError
    return error


def same_message(got, want):
    """got's message (pith's) is want's (torch's), with torch's dtypes and Size named pith's."""
    assert str(got) == str(want).replace("dtype=torch.", "dtype=pith.").replace(
        "torch.Size", "pith.Size")


# ---- the API -------------------------------------------------------------------------------

def test_gradcheck_is_the_function_and_the_module_holds_the_error():
    import sys
    assert callable(pith.autograd.gradcheck)
    assert sys.modules["pith.autograd.gradcheck"].GradcheckError is GradcheckError
    assert pith.autograd.gradcheck.GradcheckError is GradcheckError
    assert issubclass(GradcheckError, RuntimeError)


@pytest.mark.parametrize("name", ["gradcheck", "gradgradcheck"])
def test_the_signature_is_torchs(name):
    want = inspect.signature(getattr(torch.autograd, name))
    got = inspect.signature(getattr(pith.autograd, name))
    assert [(p.name, p.kind, p.default) for p in got.parameters.values()] == \
        [(p.name, p.kind, p.default) for p in want.parameters.values()]


# ---- correct functions pass ----------------------------------------------------------------

FUNCTIONS = {
    "one_input": (lambda x: x.sin() * x, (rand(3, 4),)),
    "broadcast": (lambda x, y: (x * y).tanh() + x.exp(), (rand(3, 4), rand(4, seed=1))),
    "several_outputs": (lambda x, y: (x * y, (x - y).sigmoid()), (rand(3), rand(3, seed=2))),
    "non_tensor_arguments": (lambda x, k, flag: x.softmax(k) if flag else x,
                             (rand(2, 3), 1, True)),
    "integer_output": (lambda x: x.sort(0), (rand(5),)),
    "zero_dim": (lambda x: x.exp() * x, (rand(),)),
    "empty": (lambda x: x.cos(), (rand(0, 3),)),
    "reduction": (lambda x: x.sum(1), (rand(3, 4),)),
    "non_contiguous": (lambda x: x * x, (rand(4, 3).t(),)),
}


def inputs_in(lib, inputs):
    return tuple(leaf(lib, a) if isinstance(a, torch.Tensor) else a for a in inputs)


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("name", FUNCTIONS)
def test_gradcheck_passes_on_a_correct_function(name, fast_mode):
    fn, inputs = FUNCTIONS[name]
    assert torch.autograd.gradcheck(fn, inputs_in(torch, inputs), fast_mode=fast_mode)
    assert pith.autograd.gradcheck(fn, inputs_in(pith, inputs), fast_mode=fast_mode) is True


def test_fast_mode_pairs_each_projection_with_its_own_output():
    # torch's fast mode pairs the j-th random projection with the j-th floating output,
    # differentiable or not, and fails this correct function.
    def fn(a):
        return (a * 2).detach(), a * 3

    assert not torch.autograd.gradcheck(fn, leaf(torch, rand(3)), fast_mode=True,
                                        raise_exception=False)
    assert pith.autograd.gradcheck(fn, leaf(pith, rand(3)), fast_mode=True)


def test_gradcheck_takes_a_single_tensor():
    assert pith.autograd.gradcheck(lambda x: x * x, leaf(pith, rand(3)))


def test_an_input_that_does_not_require_grad_is_not_checked():
    x, y = leaf(pith, rand(3)), leaf(pith, rand(3, seed=1), requires_grad=False)
    assert pith.autograd.gradcheck(lambda a, b: a * b, (x, y))


def test_gradcheck_leaves_its_inputs_as_they_were():
    x = leaf(pith, rand(3, 4))
    before = x.detach().clone()
    version = x._version
    pith.autograd.gradcheck(lambda t: t * t, (x,))
    assert bool((x == before).all()) and x._version == version and x.grad is None


GRADGRAD_FUNCTIONS = {
    "one_input": (lambda x: x.sin() * x, (rand(3),)),
    "two_inputs": (lambda x, y: (x * y).tanh(), (rand(2, 3), rand(2, 3, seed=1))),
    "several_outputs": (lambda x: (x.exp(), x * x * x), (rand(4),)),
    "softmax": (lambda x: x.log_softmax(1), (rand(2, 3),)),
}


@pytest.mark.parametrize("fast_mode", [False, True])
@pytest.mark.parametrize("name", GRADGRAD_FUNCTIONS)
def test_gradgradcheck_passes_on_a_correct_function(name, fast_mode):
    fn, inputs = GRADGRAD_FUNCTIONS[name]
    assert torch.autograd.gradgradcheck(fn, inputs_in(torch, inputs), fast_mode=fast_mode)
    assert pith.autograd.gradgradcheck(fn, inputs_in(pith, inputs), fast_mode=fast_mode)


def test_gradgradcheck_takes_given_and_non_contiguous_grad_outputs():
    x = leaf(pith, rand(3, 4))
    g = leaf(pith, rand(3, 4, seed=5))
    assert pith.autograd.gradgradcheck(lambda t: t.sin() * t, (x,), (g,))
    assert pith.autograd.gradgradcheck(lambda t: t.sin() * t, (x,),
                                       gen_non_contig_grad_outputs=True)


@given(shape=nonempty_shapes, data=st.data(), fast_mode=st.booleans())
@examples(20)
def test_gradcheck_passes_for_any_shapes(shape, data, fast_mode):
    other = data.draw(broadcastable_shapes(shape))
    x, y = rand(*shape, seed=1), rand(*other, seed=2)

    def fn(a, b):
        return (a * b).sin() + a.exp() * 0.5

    assert pith.autograd.gradcheck(fn, (leaf(pith, x), leaf(pith, y)), fast_mode=fast_mode)


# ---- wrong backwards are caught ------------------------------------------------------------

def breaking(lib, monkeypatch, change):
    """Replaces lib.autograd.grad with one whose result is change(grads, outputs, inputs,
    grad_outputs, create_graph)."""
    real = lib.autograd.grad

    def grad(outputs, inputs, grad_outputs=None, **kwargs):
        grads = real(outputs, inputs, grad_outputs, **kwargs)
        return change(lib, tuple(grads), outputs, inputs, grad_outputs,
                      kwargs.get("create_graph", False))
    monkeypatch.setattr(lib.autograd, "grad", grad)


def all_zero(grad_outputs):
    items = grad_outputs if isinstance(grad_outputs, (tuple, list)) else [grad_outputs]
    return all(g is not None and bool((g == 0).all()) for g in items)


def doubled(lib, grads, *_):
    return tuple(None if g is None else g * 2 for g in grads)


def noisy(lib, grads, outputs, inputs, grad_outputs, create_graph):
    """Different at each call, by less than gradcheck's atol (and zero for zero)."""
    if all_zero(grad_outputs):
        return grads
    noisy.calls += 1
    return tuple(None if g is None else g + 1e-9 * noisy.calls for g in grads)


noisy.calls = 0


def not_multiplied(lib, grads, outputs, inputs, grad_outputs, create_graph):
    """Right for every grad_output except zero, for which it is not zero."""
    if all_zero(grad_outputs):
        return tuple(None if g is None else g + 1 for g in grads)
    return grads


def wrong_dtype(lib, grads, outputs, inputs, grad_outputs, create_graph):
    if all_zero(grad_outputs):
        return tuple(None if g is None else g.to(lib.float32) for g in grads)
    return grads


def wrong_second_derivative(lib, grads, outputs, inputs, grad_outputs, create_graph):
    """The right values, but a term whose value is zero and whose derivative is not."""
    if not create_graph:
        return grads
    inputs = inputs if isinstance(inputs, (tuple, list)) else (inputs,)
    return tuple(None if g is None else g + (x - x.detach()) for g, x in zip(grads, inputs))


WRONG = {  # name -> (the change, gradgradcheck?, expected error)
    "jacobian": (doubled, False, GradcheckError),
    "reentrant": (noisy, False, GradcheckError),
    "not_multiplied_by_grad_output": (not_multiplied, False, GradcheckError),
    "second_derivative": (wrong_second_derivative, True, GradcheckError),
}


@pytest.mark.parametrize("name", WRONG)
def test_a_wrong_backward_fails_with_torchs_error(name, monkeypatch):
    change, second, error = WRONG[name]
    errors = []
    for lib in LIBS:
        breaking(lib, monkeypatch, change)
        x, y = leaf(lib, rand(2, 3)), leaf(lib, rand(2, 3, seed=1))
        g = leaf(lib, rand(2, 3, seed=2))
        with pytest.raises(error_of(lib, error)) as info:
            if second:
                lib.autograd.gradgradcheck(lambda a, b: a * b.sin(), (x, y), (g,))
            else:
                lib.autograd.gradcheck(lambda a, b: a * b.sin(), (x, y))
        errors.append(info.value)
    same_message(errors[1], errors[0])


def hooked(scale):
    """A function whose backward a tensor hook scales (an intermediate's gradient times
    scale): a wrong backward built from the public API."""
    def fn(a):
        y = a.sin()
        if y.requires_grad:
            y.register_hook(lambda g: g * scale)
        return y * 1
    return fn


def test_a_backward_broken_by_a_hook_fails_with_torchs_error():
    errors = []
    for lib in LIBS:
        with pytest.raises(error_of(lib, GradcheckError)) as info:
            lib.autograd.gradcheck(hooked(2), leaf(lib, rand(2, 3)))
        errors.append(info.value)
    same_message(errors[1], errors[0])
    assert pith.autograd.gradcheck(hooked(1), leaf(pith, rand(2, 3)))


def test_the_jacobian_mismatch_names_the_output_and_the_input(monkeypatch):
    breaking(pith, monkeypatch, lambda lib, grads, *_:
             (grads[0], None if grads[1] is None else grads[1] * 3))
    x, y = leaf(pith, rand(2)), leaf(pith, rand(2, seed=1))
    with pytest.raises(GradcheckError, match=r"^Jacobian mismatch for output 1 with respect "
                                             r"to input 1,\nnumerical:tensor"):
        pith.autograd.gradcheck(lambda a, b: (a * 2, a * b), (x, y))


def test_a_wrong_backward_fails_fast_mode_with_the_slow_jacobians(monkeypatch):
    breaking(pith, monkeypatch, doubled)
    with pytest.raises(GradcheckError) as info:
        pith.autograd.gradcheck(lambda a: a.sin(), leaf(pith, rand(2, 3)), fast_mode=True)
    message = str(info.value)
    assert message.startswith("Jacobian mismatch for output 0 with respect to input 0,\n"
                              "numerical:tensor(")
    assert "Below, we recompute numerical and analytical jacobians in slow mode:" in message
    assert "The max per-element difference (slow mode) is:" in message


def test_nondet_tol_tolerates_a_small_nondeterminism(monkeypatch):
    for lib in LIBS:
        breaking(lib, monkeypatch, noisy)
        assert lib.autograd.gradcheck(lambda a: a * a, leaf(lib, rand(3)), nondet_tol=1e-6)


def test_raise_exception_false_returns_false(monkeypatch):
    for lib in LIBS:
        breaking(lib, monkeypatch, doubled)
        assert lib.autograd.gradcheck(lambda a: a.exp(), leaf(lib, rand(3)),
                                      raise_exception=False) is False
        assert lib.autograd.gradgradcheck(lambda a: a.exp(), leaf(lib, rand(3)),
                                          raise_exception=False) is False


def test_a_gradient_of_another_dtype_is_found(monkeypatch):
    errors = []
    for lib in LIBS:
        breaking(lib, monkeypatch, wrong_dtype)
        with pytest.raises(error_of(lib, GradcheckError)) as info:
            lib.autograd.gradcheck(lambda a: a * a, leaf(lib, rand(3)))
        errors.append(info.value)
    same_message(errors[1], errors[0])
    assert str(errors[1]) == "grad is incorrect type"


def test_check_grad_dtypes_names_a_gradient_of_another_dtype(monkeypatch):
    # torch says "Analytical gradient has incorrect size" here: its _stack_and_check_tensors
    # returns (sizes_ok, types_ok) and its caller unpacks them swapped.
    breaking(pith, monkeypatch, lambda lib, grads, *_: tuple(g.to(pith.float32) for g in grads))
    with pytest.raises(GradcheckError, match="^Gradient has dtype mismatch$"):
        pith.autograd.gradcheck(lambda a: a * a, leaf(pith, rand(3)), check_grad_dtypes=True)


def test_an_output_cut_from_the_graph_must_have_a_zero_numerical_gradient():
    errors = []
    for lib in LIBS:
        for fast_mode in (False, True):
            with pytest.raises(error_of(lib, GradcheckError)) as info:
                lib.autograd.gradcheck(lambda a: (a * 2).detach(), leaf(lib, rand(3)),
                                       fast_mode=fast_mode)
            errors.append(info.value)
    for e in errors:
        same_message(e, errors[0])
    assert str(errors[0]) == "Numerical gradient for function expected to be zero"
    assert pith.autograd.gradcheck(lambda a: (a > 0).float(), leaf(pith, rand(3)))


# Note [Undefined output gradients in gradcheck] (pith/autograd/gradcheck.py): backward from
# all outputs but one stands for torch's undefined gradient of that one.
def test_a_backward_that_needs_every_output_gradient_is_found(monkeypatch):
    def needs_both(lib, grads, outputs, *_):
        if isinstance(outputs, (tuple, list)) and len(outputs) == 1:
            raise RuntimeError("one gradient is missing")
        return grads

    breaking(pith, monkeypatch, needs_both)
    with pytest.warns(UserWarning, match="check_undefined_grad=False"):
        with pytest.raises(GradcheckError, match="^Expected backward function to handle "
                                                 "undefined output grads"):
            pith.autograd.gradcheck(lambda a: (a * 2, a * 3), leaf(pith, rand(3)))
    assert pith.autograd.gradcheck(lambda a: (a * 2, a * 3), leaf(pith, rand(3)),
                                   check_undefined_grad=False)


def test_a_backward_that_invents_a_gradient_for_a_missing_one_is_found(monkeypatch):
    def invents(lib, grads, outputs, inputs, grad_outputs, create_graph):
        if isinstance(outputs, (tuple, list)) and len(outputs) == 1 and all_zero(grad_outputs):
            return tuple(g + 1 for g in grads)
        return grads

    breaking(pith, monkeypatch, invents)
    with pytest.warns(UserWarning, match="check_undefined_grad=False"):
        with pytest.raises(GradcheckError, match="^Expected all input grads to be undefined or "
                                                 "zero when all output grads are undefined"):
            pith.autograd.gradcheck(lambda a: (a * 2, a * 3), leaf(pith, rand(3)))


# ---- errors in the arguments ---------------------------------------------------------------

def raises_like_torch(call, error):
    errors = []
    for lib in LIBS:
        with pytest.raises(error_of(lib, error)) as info:
            call(lib)
        errors.append(info.value)
    same_message(errors[1], errors[0])


ARGUMENT_ERRORS = {
    "no_input_requires_grad": (ValueError, lambda lib: lib.autograd.gradcheck(
        lambda a: a * 2, leaf(lib, rand(3), requires_grad=False))),
    "overlapping_input": (RuntimeError, lambda lib: lib.autograd.gradcheck(
        lambda a: a * 2, (leaf(lib, rand(1, 3)).expand(2, 3),))),
    "nothing_to_check": (AssertionError, lambda lib: lib.autograd.gradcheck(
        lambda a: a, leaf(lib, rand(2)), check_backward_ad=False)),
    "batched_grad_without_backward": (AssertionError, lambda lib: lib.autograd.gradcheck(
        lambda a: a, leaf(lib, rand(2)), check_batched_grad=True, check_backward_ad=False,
        check_forward_ad=True)),
    "batched_forward_without_forward": (AssertionError, lambda lib: lib.autograd.gradcheck(
        lambda a: a, leaf(lib, rand(2)), check_batched_forward_grad=True)),
    "gradgrad_nothing_to_check": (AssertionError, lambda lib: lib.autograd.gradgradcheck(
        lambda a: a, leaf(lib, rand(2)), check_rev_over_rev=False)),
    "gradgrad_undefined_without_rev": (AssertionError, lambda lib: lib.autograd.gradgradcheck(
        lambda a: a, leaf(lib, rand(2)), check_rev_over_rev=False, check_fwd_over_rev=True)),
    "gradgrad_batched_without_rev": (AssertionError, lambda lib: lib.autograd.gradgradcheck(
        lambda a: a, leaf(lib, rand(2)), check_rev_over_rev=False, check_fwd_over_rev=True,
        check_undefined_grad=False, check_batched_grad=True)),
    "output_changes_shape": (AssertionError, lambda lib: lib.autograd.gradcheck(
        lambda a: a.masked_select(a > 0.25), leaf(lib, torch.tensor(
            [0.25, 1.0, -1.0], dtype=torch.float64)))),
}


@pytest.mark.parametrize("case", ARGUMENT_ERRORS)
def test_argument_errors_are_torchs(case):
    error, call = ARGUMENT_ERRORS[case]
    raises_like_torch(call, error)


def test_a_single_precision_input_warns_as_torch():
    messages = []
    for lib in LIBS:
        x = leaf(lib, rand(3)).detach().to(lib.float32).requires_grad_()
        with pytest.warns(UserWarning) as record:
            lib.autograd.gradcheck(lambda a: a * 2, x, atol=1e-2, rtol=1e-2)
        messages.append([str(w.message) for w in record if "double precision" in str(w.message)])
    assert messages[1] == messages[0] and messages[0]


@pytest.mark.parametrize("call", [
    lambda x: pith.autograd.gradcheck(lambda a: a, x, check_batched_grad=True),
    lambda x: pith.autograd.gradcheck(lambda a: a, x, check_forward_ad=True),
    lambda x: pith.autograd.gradcheck(lambda a: a, x, check_forward_ad=True,
                                      check_batched_forward_grad=True),
    lambda x: pith.autograd.gradgradcheck(lambda a: a * a, x, check_fwd_over_rev=True),
    lambda x: pith.autograd.gradgradcheck(lambda a: a * a, x, check_batched_grad=True),
], ids=["batched_grad", "forward_ad", "batched_forward_grad", "fwd_over_rev",
        "gradgrad_batched_grad"])
def test_what_needs_vmap_or_forward_ad_is_not_implemented(call):
    with pytest.raises(NotImplementedError, match="which pith does not have"):
        call(leaf(pith, rand(2)))
