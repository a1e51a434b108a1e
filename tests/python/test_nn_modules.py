"""pith.nn's smaller modules and Module's hooks, against PyTorch when installed: the
activations (leaky_relu, elu, hardtanh, relu6, softplus, logsigmoid; functions, in-place
forms and modules), Flatten and Unflatten, DataParallel, forward (pre-)hooks with their
handles and global hooks, zero_grad and requires_grad_.

Tolerances: float32 activations within rtol 1e-6 / atol 1e-6 of PyTorch's (2e-6 absolute for
elu and softplus, whose exp/log1p differ in the last bits), float64 within 1e-12,
float16/bfloat16 within conftest's TOLERANCE of the dtype."""
import copy
import inspect
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pith
import pith.nn as nn
import pith.nn.functional as F
from conftest import (PROPERTY, TOLERANCE, assert_matches_torch, assert_raises_like_torch,
                      shapes, tensors, to_numpy, to_pith, to_torch)


def fresh_torch():
    return pytest.importorskip("torch")


# ---- activations ---------------------------------------------------------------------------

ACTIVATIONS = {
    "leaky_relu": lambda F_, x: F_.leaky_relu(x),
    "leaky_relu_slope": lambda F_, x: F_.leaky_relu(x, negative_slope=0.3),
    "elu": lambda F_, x: F_.elu(x),
    "elu_alpha": lambda F_, x: F_.elu(x, alpha=-0.7),
    "hardtanh": lambda F_, x: F_.hardtanh(x),
    "hardtanh_bounds": lambda F_, x: F_.hardtanh(x, -2.5, 0.5),
    "relu6": lambda F_, x: F_.relu6(x),
    "softplus": lambda F_, x: F_.softplus(x),
    "softplus_beta": lambda F_, x: F_.softplus(x, beta=2.0, threshold=3.0),
    "softplus_negative_beta": lambda F_, x: F_.softplus(x, beta=-0.5),
    "logsigmoid": lambda F_, x: F_.logsigmoid(x),
}
FLOAT_TOL = {"float32": (1e-6, 2e-6), "float64": (1e-12, 1e-12)}
FLOAT_TOL.update({name: TOLERANCE[name] for name in ("float16", "bfloat16")})


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@PROPERTY
@given(data=st.data(), dtype=st.sampled_from(["float32", "float64"]))
def test_activation_matches_torch(name, data, dtype):
    torch = fresh_torch()
    shape = data.draw(shapes)
    x, a = data.draw(tensors(dtype, shape, lo=-30, hi=30))
    expected = ACTIVATIONS[name](torch.nn.functional, to_torch(a, dtype))
    rtol, atol = FLOAT_TOL[dtype]
    assert_matches_torch(ACTIVATIONS[name](F, x), expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
def test_activation_in_half_precision_matches_torch(name, dtype):
    torch = fresh_torch()
    a = np.concatenate([np.linspace(-12, 12, 97), [0.0, -0.0, 1e-3, -1e-3]])
    expected = ACTIVATIONS[name](torch.nn.functional, to_torch(a, dtype))
    got = ACTIVATIONS[name](F, to_pith(a).to(getattr(pith, dtype)))
    rtol, atol = FLOAT_TOL[dtype]
    assert_matches_torch(got, expected, rtol=rtol, atol=atol)


def test_activations_of_special_values_match_torch():
    torch = fresh_torch()
    a = np.array([np.nan, np.inf, -np.inf, 0.0, -0.0, 1e-30, -1e-30, 88.0, -88.0, 1e4, -1e4],
                 dtype=np.float32)
    for name, call in ACTIVATIONS.items():
        expected = call(torch.nn.functional, torch.from_numpy(a))
        assert_matches_torch(call(F, to_pith(a)), expected, rtol=1e-6, atol=1e-6)


def test_elu_is_accurate_near_zero():
    # alpha * (exp(x) - 1) written naively loses every digit for tiny x; expm1 keeps them.
    x = np.array([-1e-7, -1e-5, -3e-3], dtype=np.float64)
    got = to_numpy(F.elu(to_pith(x)))
    np.testing.assert_allclose(got, np.expm1(x), rtol=1e-14)


@pytest.mark.parametrize("name,call", [
    ("leaky_relu", lambda F_, x: F_.leaky_relu(x, 0.2, inplace=True)),
    ("leaky_relu_", lambda F_, x: F_.leaky_relu_(x, 0.2)),
    ("elu", lambda F_, x: F_.elu(x, 0.5, inplace=True)),
    ("elu_", lambda F_, x: F_.elu_(x, 0.5)),
    ("hardtanh", lambda F_, x: F_.hardtanh(x, -0.5, 0.25, inplace=True)),
    ("hardtanh_", lambda F_, x: F_.hardtanh_(x, -0.5, 0.25)),
    ("relu6", lambda F_, x: F_.relu6(x, inplace=True)),
    ("relu_", lambda F_, x: F_.relu_(x)),
])
def test_inplace_activation_writes_its_input_like_torch(name, call):
    torch = fresh_torch()
    a = np.linspace(-8, 8, 12).reshape(3, 4)
    theirs = torch.from_numpy(a.copy())
    ours = to_pith(a)
    view = ours.t()  # a non-contiguous input is written in place too
    assert call(F, view) is view
    call(torch.nn.functional, theirs.t())
    assert_matches_torch(ours, theirs, rtol=1e-12, atol=1e-12)


def test_hardtanh_of_integers_keeps_their_dtype_like_torch():
    torch = fresh_torch()
    a = np.array([-3, -1, 0, 2, 7])
    for bounds in ((-1.0, 1.0), (-1.5, 1.5), (0, 6)):
        expected = torch.nn.functional.hardtanh(torch.from_numpy(a), *bounds)
        assert_matches_torch(F.hardtanh(to_pith(a), *bounds), expected)
    assert_matches_torch(F.relu6(to_pith(a)), torch.nn.functional.relu6(torch.from_numpy(a)))


ACTIVATION_ERRORS = [
    (lambda lib: lib.nn.functional.leaky_relu(lib.tensor([1, 2])), NotImplementedError,
     "\"leaky_relu_cpu\" not implemented for 'Long'"),
    (lambda lib: lib.nn.functional.leaky_relu(lib.tensor([True])), NotImplementedError,
     "\"leaky_relu_cpu\" not implemented for 'Bool'"),
    (lambda lib: lib.nn.functional.elu(lib.tensor([1, 2])), NotImplementedError,
     "\"elu_cpu\" not implemented for 'Long'"),
    (lambda lib: lib.nn.functional.softplus(lib.tensor([1, 2])), NotImplementedError,
     "\"softplus_cpu\" not implemented for 'Long'"),
    (lambda lib: lib.nn.functional.logsigmoid(lib.tensor([1, 2], dtype=lib.int32)),
     NotImplementedError, "\"log_sigmoid_cpu\" not implemented for 'Int'"),
    (lambda lib: lib.nn.functional.hardtanh(lib.tensor([True])), RuntimeError,
     "Bool inputs not supported for hardtanh"),
    (lambda lib: lib.nn.functional.hardtanh(lib.zeros(2), 2.0, 1.0), ValueError,
     "min_val cannot be greater than max_val"),
    (lambda lib: lib.nn.Hardtanh(1.0, 1.0), AssertionError,
     "max_val (1.0) must be greater than min_val (1.0)"),
    (lambda lib: lib.nn.functional.softplus(lib.zeros(2), 1, 20, 3), TypeError,
     "softplus() takes from 1 to 3 positional arguments but 4 were given"),
]


@pytest.mark.parametrize("call,error,fragment", ACTIVATION_ERRORS)
def test_bad_activation_input_raises_like_torch(call, error, fragment):
    assert_raises_like_torch(call, error, fragment)


MODULES = [
    lambda lib: lib.LeakyReLU(), lambda lib: lib.LeakyReLU(0.2, inplace=True),
    lambda lib: lib.ELU(), lambda lib: lib.ELU(alpha=0.5, inplace=True),
    lambda lib: lib.Hardtanh(), lambda lib: lib.Hardtanh(-2.0, 3, inplace=True),
    lambda lib: lib.ReLU6(), lambda lib: lib.ReLU6(inplace=True),
    lambda lib: lib.Softplus(), lambda lib: lib.Softplus(beta=2, threshold=4.5),
    lambda lib: lib.LogSigmoid(), lambda lib: lib.Flatten(), lambda lib: lib.Flatten(0, 1),
    lambda lib: lib.Unflatten(1, (2, 6)), lambda lib: lib.Unflatten(1, [3, -1]), lambda lib: lib.Unflatten(-1, (1, 1)),
]


@pytest.mark.parametrize("build", MODULES)
def test_module_repr_and_output_match_torch(build):
    torch = fresh_torch()
    ours, theirs = build(nn), build(torch.nn)
    assert repr(ours) == repr(theirs)
    a = np.random.default_rng(0).standard_normal((2, 12, 1)).astype(np.float32) * 4
    x, t = to_pith(a), torch.from_numpy(a.copy())
    got, expected = ours(x), theirs(t)
    assert (got is x) == (expected is t)  # in-place modules return their input
    assert_matches_torch(got, expected, rtol=1e-6, atol=2e-6)


def test_hardtanh_deprecated_keywords_warn_like_torch():
    with pytest.warns(FutureWarning, match="keyword argument `min_value` is deprecated"):
        module = nn.Hardtanh(min_value=0.0)
    assert (module.min_val, module.max_val) == (0.0, 1.0)
    with pytest.warns(FutureWarning, match="keyword argument `max_value` is deprecated"):
        assert nn.Hardtanh(max_value=2.0).max_val == 2.0


# ---- Flatten and Unflatten ----------------------------------------------------------------------

@PROPERTY
@given(data=st.data())
def test_unflatten_views_a_dim_as_several_like_torch(data):
    torch = fresh_torch()
    shape = data.draw(st.lists(st.integers(0, 4), min_size=1, max_size=3).map(tuple))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    size = shape[dim]
    factor = data.draw(st.sampled_from([d for d in range(1, 5) if size % d == 0]))
    sizes = data.draw(st.sampled_from([(factor, size // factor), (factor, -1), (-1, factor),
                                       (size,), (1, size, 1)]))
    if size == 0 and -1 in sizes:
        sizes = (0, factor)
    x, a = data.draw(tensors("float32", shape))
    got = nn.Unflatten(dim, sizes)(x)
    expected = torch.nn.Unflatten(dim, sizes)(to_torch(a, "float32"))
    assert_matches_torch(got, expected)
    assert got.data_ptr() == x.data_ptr() or x.numel() == 0  # a view


@PROPERTY
@given(data=st.data())
def test_flatten_matches_torch(data):
    torch = fresh_torch()
    shape = data.draw(st.lists(st.integers(0, 3), min_size=2, max_size=4).map(tuple))
    start = data.draw(st.integers(0, len(shape) - 1))
    end = data.draw(st.integers(start, len(shape) - 1))
    x, a = data.draw(tensors("float32", shape))
    assert_matches_torch(nn.Flatten(start, end)(x),
                         torch.nn.Flatten(start, end)(to_torch(a, "float32")))
    assert_matches_torch(nn.Flatten()(x), torch.nn.Flatten()(to_torch(a, "float32")))


UNFLATTEN_ERRORS = [
    (lambda lib: lib.nn.Unflatten(1, (2, -1, -1))(lib.zeros(3, 6)), RuntimeError,
     "unflatten got an unexpected error:\nonly one dimension can be inferred"),
    (lambda lib: lib.nn.Unflatten(1, (4, -1))(lib.zeros(3, 6)), RuntimeError,
     "unflatten: Provided sizes [4, -1] don't multiply up to the size of dim 1 (6) in the "
     "input tensor"),
    (lambda lib: lib.nn.Unflatten(1, (4, 2))(lib.zeros(3, 6)), RuntimeError,
     "unflatten: Provided sizes [4, 2] don't multiply up to the size of dim 1 (6)"),
    (lambda lib: lib.nn.Unflatten(1, ())(lib.zeros(3, 6)), RuntimeError,
     "unflatten: sizes must be non-empty"),
    (lambda lib: lib.nn.Unflatten(2, (3, 2))(lib.zeros(3, 6)), IndexError,
     "Dimension out of range (expected to be in range of [-2, 1], but got 2)"),
    (lambda lib: lib.nn.Unflatten(1, (2, -2))(lib.zeros(3, 6)), RuntimeError,
     "unflatten got an unexpected error:\ninvalid shape dimension -2 at index 1 of shape "
     "[2, -2]"),
    (lambda lib: lib.nn.Unflatten(1, (0, -1))(lib.zeros(3, 0)), RuntimeError,
     "unflatten got an unexpected error:\ncannot reshape tensor of 0 elements into shape "
     "[0, -1] because the unspecified dimension size -1 can be any value and is ambiguous"),
    (lambda lib: lib.nn.Unflatten(1, [2, 3.0]), TypeError,
     "unflattened_size must be tuple of ints, but found element of type float at pos 1"),
    (lambda lib: lib.nn.Unflatten(1, 6), TypeError,
     "unflattened_size must be a tuple of ints, but found type int"),
    (lambda lib: lib.nn.Flatten()(lib.zeros(2)), IndexError,
     "Dimension out of range (expected to be in range of [-1, 0], but got 1)"),
]


@pytest.mark.parametrize("call,error,fragment", UNFLATTEN_ERRORS)
def test_bad_flatten_input_raises_like_torch(call, error, fragment):
    assert_raises_like_torch(call, error, fragment)


# ---- DataParallel ----------------------------------------------------------------------------

def test_data_parallel_wraps_and_calls_the_module_like_torch_without_gpus():
    torch = fresh_torch()
    torch.manual_seed(0)
    theirs = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(3, 2), torch.nn.ELU()))
    ours = nn.DataParallel(nn.Sequential(nn.Linear(3, 2), nn.ELU()), device_ids=[0, 1],
                           output_device=0, dim=1)
    assert repr(ours) == repr(theirs)
    assert list(ours.state_dict()) == list(theirs.state_dict()) == [
        "module.0.weight", "module.0.bias"]
    assert ours.device_ids == theirs.device_ids == []
    assert hasattr(ours, "dim") == hasattr(theirs, "dim")
    ours.load_state_dict(theirs.state_dict())
    a = np.random.default_rng(1).standard_normal((4, 3)).astype(np.float32)
    assert_matches_torch(ours(to_pith(a)), theirs(torch.from_numpy(a)).detach(), rtol=1e-6,
                         atol=1e-6)


def test_data_parallel_passes_keyword_arguments_and_exposes_module():
    class Scale(nn.Module):
        def forward(self, x, *, factor=1.0):
            return x * factor

    inner = Scale()
    wrapped = nn.DataParallel(inner)
    assert wrapped.module is inner
    assert wrapped(pith.ones(2), factor=3.0).tolist() == [3.0, 3.0]
    assert nn.parallel.DataParallel is nn.DataParallel


def test_functional_data_parallel_needs_a_device_like_torch():
    assert_raises_like_torch(
        lambda lib: lib.nn.parallel.data_parallel(lib.nn.Linear(2, 2), lib.ones(1, 2)),
        RuntimeError, "device type could not be determined")


# ---- hooks -----------------------------------------------------------------------------------

def module_under_hooks(lib):
    class Affine(lib.nn.Module):
        def forward(self, x, bias=0.0, *, scale=1.0):
            return x * scale + bias

    return Affine()


def run_hook_scenario(lib, scenario):
    """Runs `scenario(lib, module, log)` and returns its log with tensors as lists, so that
    pith and torch can be compared."""
    log = []
    module = module_under_hooks(lib)
    result = scenario(lib, module, log)

    def plain(value):
        if isinstance(value, (lib.Tensor,)):
            return ("tensor", value.tolist())
        if isinstance(value, tuple):
            return tuple(plain(v) for v in value)
        if isinstance(value, dict):
            return {k: plain(v) for k, v in value.items()}
        return value

    return [plain(entry) for entry in log] + [plain(result)]


def replace_args(lib, module, log):
    module.register_forward_pre_hook(lambda m, args: log.append(("pre", args)) or args[0] * 2)
    return module(lib.ones(2), 1.0)


def replace_args_with_a_tuple(lib, module, log):
    module.register_forward_pre_hook(lambda m, args: (args[0], 5.0))
    module.register_forward_pre_hook(lambda m, args: log.append(("second", args)))
    return module(lib.ones(2))


def pre_hook_with_kwargs(lib, module, log):
    def hook(m, args, kwargs):
        log.append(("pre", args, kwargs))
        return args, {**kwargs, "scale": 10.0}
    module.register_forward_pre_hook(hook, with_kwargs=True)
    return module(lib.ones(2), scale=2.0)


def replace_output(lib, module, log):
    module.register_forward_hook(lambda m, args, out: out + 100)
    module.register_forward_hook(lambda m, args, out: log.append(("sees", out)))
    return module(lib.ones(2))


def forward_hook_with_kwargs(lib, module, log):
    module.register_forward_hook(lambda m, args, kwargs, out: log.append((args, kwargs, out)),
                                 with_kwargs=True)
    return module(lib.ones(2), 3.0, scale=2.0)


def prepend_orders_hooks(lib, module, log):
    for name in ("a", "b"):
        module.register_forward_pre_hook(lambda m, args, name=name: log.append(("pre", name)))
        module.register_forward_hook(lambda m, args, out, name=name: log.append(("post", name)))
    module.register_forward_pre_hook(lambda m, args: log.append(("pre", "first")), prepend=True)
    module.register_forward_hook(lambda m, args, out: log.append(("post", "first")),
                                 prepend=True)
    return module(lib.ones(1))


def removed_hooks_do_not_fire(lib, module, log):
    handle = module.register_forward_hook(lambda m, args, out: log.append("fired"))
    kwargs_handle = module.register_forward_pre_hook(
        lambda m, args, kwargs: log.append("pre fired"), with_kwargs=True)
    module(lib.ones(1))
    handle.remove()
    kwargs_handle.remove()
    handle.remove()  # removing twice is harmless
    with module.register_forward_hook(lambda m, args, out: log.append("in with")):
        module(lib.ones(1))
    return module(lib.ones(1))


def always_call_runs_when_forward_raises(lib, module, log):
    module.register_forward_hook(lambda m, args, out: log.append(("always", out)),
                                 always_call=True)
    module.register_forward_hook(lambda m, args, out: log.append("not always"))
    module.register_forward_hook(lambda m, args, kwargs, out: log.append(("kw", kwargs)),
                                 with_kwargs=True, always_call=True)
    try:
        module("not a tensor", scale="x")
    except TypeError:
        log.append("raised")
    return None


def always_call_hook_errors_become_warnings(lib, module, log):
    def failing(m, args, out):
        raise ValueError("hook failed")
    module.register_forward_hook(failing, always_call=True)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            module("not a tensor", scale="x")
        except TypeError:
            log.append("raised")
    log.append([str(w.message) for w in caught])
    return None


def bad_pre_hook_result(lib, module, log):
    module.register_forward_pre_hook(lambda m, args, kwargs: 3, with_kwargs=True)
    module.register_forward_hook(lambda m, args, out: log.append(("always", args)),
                                 always_call=True)
    try:
        module(lib.ones(1))
    except RuntimeError as e:
        log.append(str(e))
    return None


def hooks_of_submodules(lib, module, log):
    outer = lib.nn.Sequential(module, lib.nn.ReLU())
    for name, child in outer.named_children():
        child.register_forward_hook(lambda m, args, out, name=name: log.append((name, out)))
    outer.register_forward_pre_hook(lambda m, args: log.append("outer"))
    return outer(lib.tensor([-1.0, 2.0]))


def global_hooks_run_first(lib, module, log):
    registry = lib.nn.modules.module
    handles = [
        registry.register_module_forward_pre_hook(lambda m, args: log.append("global pre")),
        registry.register_module_forward_hook(lambda m, args, out: log.append("global post")),
        registry.register_module_forward_hook(
            lambda m, args, kwargs, out: log.append(("global kw", kwargs)), with_kwargs=True),
    ]
    module.register_forward_pre_hook(lambda m, args: log.append("own pre"), prepend=True)
    module.register_forward_hook(lambda m, args, out: log.append("own post"), prepend=True)
    try:
        module(lib.ones(1), scale=2.0)
    finally:
        for handle in handles:
            handle.remove()
    return module(lib.ones(1))


SCENARIOS = [replace_args, replace_args_with_a_tuple, pre_hook_with_kwargs, replace_output,
             forward_hook_with_kwargs, prepend_orders_hooks, removed_hooks_do_not_fire,
             always_call_runs_when_forward_raises, always_call_hook_errors_become_warnings,
             bad_pre_hook_result, hooks_of_submodules, global_hooks_run_first]


@pytest.mark.parametrize("scenario", SCENARIOS, ids=[s.__name__ for s in SCENARIOS])
def test_hooks_fire_like_torch(scenario):
    torch = fresh_torch()
    assert run_hook_scenario(pith, scenario) == run_hook_scenario(torch, scenario)


def test_forward_hook_replaces_the_output():
    module = module_under_hooks(pith)
    handle = module.register_forward_hook(lambda m, args, out: out * 0 - 1)
    assert module(pith.ones(2)).tolist() == [-1.0, -1.0]
    handle.remove()
    assert module(pith.ones(2)).tolist() == [1.0, 1.0]


def test_a_handle_does_not_keep_the_module_alive():
    import weakref
    module = module_under_hooks(pith)
    handle = module.register_forward_hook(lambda m, args, out: None)
    ref = weakref.ref(module)
    del module
    assert ref() is None
    handle.remove()


def add_one(module, args, output):
    return output + 1


def test_a_handle_pickled_with_its_module_removes_the_restored_hook():
    module = nn.Identity()
    handle = module.register_forward_hook(add_one, always_call=True)
    restored, restored_handle = pickle.loads(pickle.dumps((module, handle)))
    assert restored(pith.zeros(1)).tolist() == [1.0]
    restored_handle.remove()
    assert restored(pith.zeros(1)).tolist() == [0.0]
    assert not restored._forward_hooks_always_called
    assert module(pith.zeros(1)).tolist() == [1.0]  # the original keeps its hook
    lone = pickle.loads(pickle.dumps(handle))  # without its dicts: removes nothing
    lone.remove()
    assert module(pith.zeros(1)).tolist() == [1.0]


def test_deepcopy_keeps_the_hooks_and_old_pickles_get_empty_hook_dicts():
    module = module_under_hooks(pith)
    module.register_forward_hook(lambda m, args, out: out + 1)
    assert copy.deepcopy(module)(pith.zeros(1)).tolist() == [1.0]
    state = {k: v for k, v in module.__dict__.items() if "hooks" not in k}
    restored = type(module).__new__(type(module))
    restored.__setstate__(state)
    assert restored(pith.zeros(1)).tolist() == [0.0]


# ---- zero_grad and requires_grad_ -------------------------------------------------------------

def test_requires_grad_false_succeeds_and_returns_the_module():
    model = nn.Sequential(nn.Linear(3, 2), nn.ELU())
    assert model.requires_grad_(False) is model
    assert all(not p.requires_grad for p in model.parameters())
    assert model.eval().requires_grad_(False)(pith.ones(1, 3)).shape == (1, 2)


def test_requires_grad_true_sets_every_parameter():
    model = nn.Linear(3, 2).requires_grad_(False)
    assert model.requires_grad_() is model
    assert all(p.requires_grad for p in model.parameters())
    assert nn.ReLU().requires_grad_(True)


def test_zero_grad_without_gradients_is_a_no_op():
    model = nn.Linear(3, 2)
    before = to_numpy(model.weight).copy()
    assert model.zero_grad() is None and model.zero_grad(set_to_none=False) is None
    assert model.weight.grad is None
    np.testing.assert_array_equal(to_numpy(model.weight), before)


def test_zero_grad_zeroes_or_drops_the_gradients_that_exist():
    model = nn.Linear(2, 1)
    model(pith.ones(3, 2)).sum().backward()
    gradient = model.weight.grad
    assert gradient.tolist() == [[3.0, 3.0]]
    model.zero_grad(set_to_none=False)
    assert model.weight.grad is gradient and gradient.tolist() == [[0.0, 0.0]]
    model.zero_grad()
    assert model.weight.grad is None


def test_global_always_call_hook_with_kwargs_gets_the_kwargs_when_forward_raises():
    # PyTorch calls such a hook without the kwargs on this path (so it fails and warns);
    # pith passes them, as on the normal path. See docs/python.md.
    log = []
    handle = nn.modules.module.register_module_forward_hook(
        lambda m, args, kwargs, out: log.append(kwargs), with_kwargs=True, always_call=True)
    try:
        with pytest.raises(TypeError):
            module_under_hooks(pith)("not a tensor", scale="x")
    finally:
        handle.remove()
    assert log == [{"scale": "x"}]


# ---- signatures ------------------------------------------------------------------------------

def parameters_of(function):
    return [(p.name, p.kind, p.default) for p in inspect.signature(function).parameters.values()]


FUNCTIONS = ["leaky_relu", "elu", "hardtanh", "relu6", "binary_cross_entropy",
             "binary_cross_entropy_with_logits", "mse_loss", "l1_loss", "nll_loss",
             "cross_entropy"]
CLASSES = ["LeakyReLU", "ELU", "Hardtanh", "ReLU6", "Softplus", "LogSigmoid", "Flatten",
           "Unflatten", "L1Loss", "MSELoss", "NLLLoss", "CrossEntropyLoss", "BCELoss",
           "BCEWithLogitsLoss", "DataParallel"]
METHODS = ["register_forward_hook", "register_forward_pre_hook", "zero_grad",
           "requires_grad_"]


@pytest.mark.parametrize("name", FUNCTIONS)
def test_functional_signature_matches_torch(name):
    torch = fresh_torch()
    assert parameters_of(getattr(F, name)) == parameters_of(getattr(torch.nn.functional, name))


@pytest.mark.parametrize("name", CLASSES)
def test_module_constructor_signature_matches_torch(name):
    torch = fresh_torch()
    assert (parameters_of(getattr(nn, name).__init__)
            == parameters_of(getattr(torch.nn, name).__init__))


@pytest.mark.parametrize("name", METHODS)
def test_module_method_signature_matches_torch(name):
    torch = fresh_torch()
    assert (parameters_of(getattr(nn.Module, name))
            == parameters_of(getattr(torch.nn.Module, name)))


@pytest.mark.parametrize("name", ["register_module_forward_hook",
                                  "register_module_forward_pre_hook"])
def test_global_hook_signature_matches_torch(name):
    torch = fresh_torch()
    assert (parameters_of(getattr(nn.modules.module, name))
            == parameters_of(getattr(torch.nn.modules.module, name)))


# ---- the activations that are ops of their own -------------------------------------------
# leaky_relu, elu, hardtanh, softplus and log_sigmoid are single ops (ops/ops.toml, kernels/
# activations.c), so a dispatch mode sees one call where it used to see a composition, and
# their out= and in-place overloads work as PyTorch's.

ACTIVATION_OPS = [
    ("leaky_relu", (0.2,), lambda F_, x: F_.leaky_relu(x, 0.2)),
    ("hardtanh", (-0.5, 2.0), lambda F_, x: F_.hardtanh(x, -0.5, 2.0)),
    ("elu", (0.5, 2.0, 1.5), None),
    ("softplus", (2.0, 3.0), lambda F_, x: F_.softplus(x, beta=2.0, threshold=3.0)),
    ("log_sigmoid", (), lambda F_, x: F_.logsigmoid(x)),
]


@pytest.mark.parametrize("name,args,functional", ACTIVATION_OPS)
def test_activation_is_one_op_under_a_dispatch_mode(name, args, functional):
    from pith.utils import DispatchMode

    seen = []

    class Recording(DispatchMode):
        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            seen.append(func.name)
            return func(*args, **(kwargs or {}))

    x = pith.tensor([[-2.0, -0.5], [0.0, 3.0]])
    with Recording():
        (functional or (lambda F_, t: getattr(pith.ops.pith, name)(t, *args)))(F, x)
    assert seen == [f"pith::{name}"]


@pytest.mark.parametrize("name,args,functional", ACTIVATION_OPS)
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16"])
def test_activation_op_and_its_out_form_match_torch(name, args, functional, dtype):
    torch = fresh_torch()
    a = np.linspace(-25, 25, 101).reshape(101, 1)[::2]  # non-contiguous after the cast below
    x = to_pith(a, dtype)
    expected = getattr(torch.ops.aten, name)(to_torch(a, dtype), *args)
    rtol, atol = FLOAT_TOL.get(dtype, TOLERANCE.get(dtype))
    assert_matches_torch(getattr(pith.ops.pith, name)(x, *args), expected, rtol=rtol, atol=atol)
    out = pith.empty(0, dtype=x.dtype)
    result = getattr(pith.ops.pith, name).out(x, *args, out=out)
    assert result is out
    assert_matches_torch(out, expected, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name,args", [("leaky_relu_", (0.2,)), ("elu_", (0.5, 2.0, 1.5)),
                                       ("hardtanh_", (-1.0, 1.0))])
def test_activation_in_place_writes_self(name, args):
    torch = fresh_torch()
    a = np.array([-3.0, -0.25, 0.0, 0.5, 4.0])
    x = to_pith(a, "float32")
    view = x[1:]
    result = getattr(pith.ops.pith, name)(x, *args)
    assert result is x
    expected = getattr(torch.ops.aten, name)(to_torch(a, "float32"), *args)
    assert_matches_torch(x, expected, rtol=1e-6, atol=2e-6)
    assert_matches_torch(view, expected[1:], rtol=1e-6, atol=2e-6)


def test_activation_op_of_an_integer_tensor_is_a_type_error():
    with pytest.raises(TypeError, match="leaky_relu: not implemented for dtype int64"):
        pith.ops.pith.leaky_relu(pith.tensor([1, 2]), 0.1)


@pytest.mark.parametrize("dtype,low,high,values", [
    ("int8", -1.7, 2.7, [0, 100, -100]),       # float bounds of an integer tensor: truncated
    ("int64", 2, 1, [0, 1, 2, 3]),             # min > max: max, as clamp
    ("uint8", 0, 2, [0, 1, 2, 3]),
    ("float16", 0.1, 2.9, [0.0, 1.0, 2.0, 3.0]),  # bounds in the tensor's dtype
    ("float32", 0.5, 1.5, [0.0, 2.0, float("nan"), float("inf")]),
    ("float32", float("nan"), 1.0, [0.0, 1.0]),
    ("uint8", 0, -2, [0, 1]),                  # unsigned with a negative bound: refused
    ("bool", 0, 1, [True, False]),             # refused
    ("int8", -300, 300, [0, 1]),               # a bound out of int8's range: refused
])
def test_hardtanh_op_keeps_the_dtype_and_refuses_as_torch(dtype, low, high, values):
    torch = fresh_torch()

    def run(lib, op):
        try:
            return op(lib.tensor(values, dtype=getattr(lib, dtype)), low, high)
        except RuntimeError as error:  # pith's PithError is a RuntimeError too
            return error

    expected = run(torch, torch.ops.aten.hardtanh)
    got = run(pith, pith.ops.pith.hardtanh)
    if isinstance(expected, Exception):
        assert isinstance(got, RuntimeError), got
        return
    assert str(got.dtype).rpartition(".")[2] == str(expected.dtype).rpartition(".")[2]
    np.testing.assert_array_equal(to_numpy(got.to(pith.float64)),
                                  expected.to(torch.float64).numpy())
