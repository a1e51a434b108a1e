"""pith.nn.utils against torch.nn.utils: clip_grad_norm_ (every norm type, foreach, mixed
dtypes, error_if_nonfinite), get_total_norm, clip_grads_with_norm_, clip_grad_value_,
parameters_to_vector / vector_to_parameters, parametrize (register, cached, remove, the
parametrizations.<name>.original layout), parametrizations.weight_norm and the older
weight_norm: values, gradients, state_dict keys loaded across with strict=True, errors.

Tolerances: float32 norms and clipped gradients within rtol 2e-6 / atol 1e-7 of PyTorch's
(pith sums the squares in another order), float64 within 1e-12; weight-normalized weights
and their gradients within rtol 1e-5 / atol 1e-6 in float32 (a norm, a division and a
matmul, each rounded), 1e-10 in float64 (the SGD runs)."""
import copy
import math
import pickle
import warnings

import numpy as np
import pytest

import pith
import pith.nn as nn
from pith.nn.utils import parametrize

torch = pytest.importorskip("torch")


def to_np(t):
    return np.array(t.detach().tolist(), dtype=np.float64).reshape(tuple(t.shape))


def to_pith(t):
    return pith.tensor(t.detach().numpy().copy())


def close(p, t, rtol=2e-6, atol=1e-7):
    np.testing.assert_allclose(to_np(p), to_np(t), rtol=rtol, atol=atol)


SHAPES = [(3, 4), (5,), (), (2, 3, 2), (4, 1)]


def parameters(dtype="float32", grads=(0, 1, 2, 4), scale=1.0, seed=0):
    """The same parameters for pith and torch: SHAPES, with gradients on those in `grads`."""
    rng = np.random.default_rng(seed)
    pp, tp = [], []
    for i, shape in enumerate(SHAPES):
        value = rng.standard_normal(shape).astype(dtype)
        p = nn.Parameter(pith.tensor(value))
        t = torch.nn.Parameter(torch.tensor(value))
        if i in grads:
            g = (rng.standard_normal(shape) * scale).astype(dtype)
            p.grad = pith.tensor(g)
            t.grad = torch.tensor(g)
        pp.append(p)
        tp.append(t)
    return pp, tp


def assert_grads_match(pp, tp, rtol=2e-6, atol=1e-7):
    for p, t in zip(pp, tp):
        assert (p.grad is None) == (t.grad is None)
        if p.grad is not None:
            close(p.grad, t.grad, rtol, atol)


NORM_TYPES = [2.0, 1, 3, 2.5, 0.5, math.inf, -math.inf, 0, 0.0]


# ---- clip_grad_norm_ -------------------------------------------------------------------------

@pytest.mark.parametrize("norm_type", NORM_TYPES)
@pytest.mark.parametrize("max_norm", [0.5, 1e3])
@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_norm_matches_torch(norm_type, max_norm, foreach):
    pp, tp = parameters()
    pn = nn.utils.clip_grad_norm_(pp, max_norm, norm_type, foreach=foreach)
    tn = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type, foreach=foreach)
    assert isinstance(pn, pith.Tensor) and pn.dim() == 0 and pn.dtype == pith.float32
    close(pn, tn)
    assert_grads_match(pp, tp)


@pytest.mark.parametrize("norm_type", NORM_TYPES)
def test_clip_grad_norm_float64_matches_torch(norm_type):
    pp, tp = parameters("float64", scale=10.0)
    pn = nn.utils.clip_grad_norm_(pp, 1.0, norm_type)
    tn = torch.nn.utils.clip_grad_norm_(tp, 1.0, norm_type)
    assert pn.dtype == pith.float64
    close(pn, tn, 1e-12, 1e-12)
    assert_grads_match(pp, tp, 1e-12, 1e-12)


def test_clip_grad_norm_of_mixed_dtypes_matches_torch():
    pp, tp = parameters()
    p64, t64 = parameters("float64", seed=1)
    pn = nn.utils.clip_grad_norm_(pp[:2] + p64[:2] + pp[2:], 0.3)
    tn = torch.nn.utils.clip_grad_norm_(tp[:2] + t64[:2] + tp[2:], 0.3)
    assert str(pn.dtype).split(".")[1] == str(tn.dtype).split(".")[1]
    close(pn, tn)
    assert_grads_match(pp + p64, tp + t64)


def test_clip_grad_norm_of_a_single_tensor_and_of_a_generator():
    pp, tp = parameters()
    close(nn.utils.clip_grad_norm_(pp[0], 0.1), torch.nn.utils.clip_grad_norm_(tp[0], 0.1))
    close(nn.utils.clip_grad_norm_(iter(pp), 0.2),
          torch.nn.utils.clip_grad_norm_(iter(tp), 0.2))
    assert_grads_match(pp, tp)


def test_clip_grad_norm_without_gradients_returns_zero():
    pp, _ = parameters(grads=())
    norm = nn.utils.clip_grad_norm_(pp, 1.0)
    assert norm.item() == 0.0 and norm.dim() == 0


def test_clip_grad_norm_of_an_empty_generator_warns_as_torch():
    for lib in (nn, torch.nn):
        with pytest.warns(UserWarning, match="`parameters` is an empty generator, no "
                                             "gradient clipping will occur."):
            lib.utils.clip_grad_norm_((p for p in []), 1.0)


def test_clip_grad_norm_runs_without_recording():
    pp, _ = parameters()
    for p in pp:
        if p.grad is not None:
            p.grad.requires_grad_(True)
    norm = nn.utils.clip_grad_norm_(pp, 0.1)
    assert norm.grad_fn is None and not norm.requires_grad


@pytest.mark.parametrize("bad", [math.nan, math.inf])
def test_error_if_nonfinite_raises_torch_error(bad):
    messages = []
    for lib, (params, _) in ((nn, parameters()), (torch.nn, parameters()[::-1])):
        params[1].grad[2] = bad
        with pytest.raises(RuntimeError) as info:
            lib.utils.clip_grad_norm_(params, 1.0, error_if_nonfinite=True)
        messages.append(str(info.value))
    assert messages[0] == messages[1]
    assert messages[0].startswith("The total norm of order 2.0 for gradients from "
                                  "`parameters` is non-finite, so it cannot be clipped.")


def test_nonfinite_norm_without_the_flag_scales_as_torch():
    pp, tp = parameters()
    pp[1].grad[2] = math.inf
    tp[1].grad[2] = math.inf
    pn = nn.utils.clip_grad_norm_(pp, 1.0)
    tn = torch.nn.utils.clip_grad_norm_(tp, 1.0)
    assert math.isinf(pn.item()) and math.isinf(tn.item())
    for p, t in zip(pp, tp):
        if p.grad is not None:
            np.testing.assert_array_equal(np.isnan(to_np(p.grad)), np.isnan(to_np(t.grad)))


def test_clip_grad_norm_deprecated_alias_warns():
    pp, tp = parameters()
    with pytest.warns(FutureWarning, match="clip_grad_norm` is now deprecated"):
        pn = nn.utils.clip_grad_norm(pp, 0.5)
    with pytest.warns(FutureWarning):
        tn = torch.nn.utils.clip_grad_norm(tp, 0.5)
    close(pn, tn)


@pytest.mark.parametrize("norm_type", [2.0, math.inf, 1.0])
def test_get_total_norm_then_clip_grads_with_norm_as_torch(norm_type):
    pp, tp = parameters()
    pn = nn.utils.get_total_norm([p.grad for p in pp if p.grad is not None], norm_type)
    tn = torch.nn.utils.get_total_norm([t.grad for t in tp if t.grad is not None], norm_type)
    close(pn, tn)
    assert nn.utils.clip_grads_with_norm_(pp, 0.7, pn) is None
    torch.nn.utils.clip_grads_with_norm_(tp, 0.7, tn)
    assert_grads_match(pp, tp)
    close(nn.utils.get_total_norm(pith.ones(4)), torch.nn.utils.get_total_norm(torch.ones(4)))
    assert nn.utils.get_total_norm([]).item() == 0.0


def test_clip_grad_norm_scales_float16_grads_as_torch():
    rng = np.random.default_rng(3)
    g = rng.standard_normal((8, 5)).astype(np.float16) * 100
    p, t = nn.Parameter(pith.zeros(8, 5, dtype=pith.float16)), torch.zeros(
        8, 5, dtype=torch.float16, requires_grad=True)
    p.grad, t.grad = pith.tensor(g), torch.tensor(g)
    pn, tn = nn.utils.clip_grad_norm_([p], 1.0), torch.nn.utils.clip_grad_norm_([t], 1.0)
    assert pn.dtype == pith.float16
    close(pn, tn, 2e-3, 2e-3)
    close(p.grad, t.grad, 2e-3, 2e-3)


# ---- clip_grad_value_ ------------------------------------------------------------------------

@pytest.mark.parametrize("foreach", [None, True, False])
def test_clip_grad_value_matches_torch(foreach):
    pp, tp = parameters(scale=2.0)
    assert nn.utils.clip_grad_value_(pp, 0.75, foreach=foreach) is None
    torch.nn.utils.clip_grad_value_(tp, 0.75, foreach=foreach)
    assert_grads_match(pp, tp, 0, 0)
    nn.utils.clip_grad_value_(pp[0], 0.1)
    torch.nn.utils.clip_grad_value_(tp[0], 0.1)
    assert_grads_match(pp, tp, 0, 0)


# ---- parameters_to_vector / vector_to_parameters ---------------------------------------------

def test_parameters_to_vector_matches_torch_and_is_differentiable():
    pp, tp = parameters(grads=())
    pv, tv = nn.utils.parameters_to_vector(pp), torch.nn.utils.parameters_to_vector(tp)
    close(pv, tv, 0, 0)
    weights = np.arange(pv.numel(), dtype=np.float32)
    (pv * pith.tensor(weights)).sum().backward()
    (tv * torch.tensor(weights)).sum().backward()
    assert_grads_match(pp, tp, 0, 0)


def test_vector_to_parameters_writes_slices_into_the_parameters():
    pp, tp = parameters(grads=())
    ids = [id(p) for p in pp]
    vec = np.linspace(-3, 3, sum(p.numel() for p in pp)).astype(np.float32)
    nn.utils.vector_to_parameters(pith.tensor(vec), pp)
    torch.nn.utils.vector_to_parameters(torch.tensor(vec), tp)
    assert [id(p) for p in pp] == ids
    for p, t in zip(pp, tp):
        close(p, t, 0, 0)
        assert p.requires_grad and p.is_leaf


def test_vector_to_parameters_of_a_non_tensor_raises_as_torch():
    pp, tp = parameters(grads=())
    for lib, params, name in ((nn, pp, "pith"), (torch.nn, tp, "torch")):
        with pytest.raises(TypeError, match=f"^expected {name}.Tensor, but got: list$"):
            lib.utils.vector_to_parameters([1.0, 2.0], params)


# ---- parametrize -----------------------------------------------------------------------------

def symmetric(lib):
    class Symmetric(lib.nn.Module):
        calls = 0

        def forward(self, X):
            type(self).calls += 1
            return X.triu() + X.triu(1).transpose(-1, -2)

    return Symmetric


def scaled(lib):
    class Scaled(lib.nn.Module):
        def forward(self, X):
            return X * 2.0

        def right_inverse(self, X):
            return X / 2.0

    return Scaled


def linears(in_features=4, out_features=4, dtype="float32"):
    t = torch.nn.Linear(in_features, out_features, dtype=getattr(torch, dtype))
    p = nn.Linear(in_features, out_features, dtype=getattr(pith, dtype))
    p.load_state_dict(t.state_dict())
    return p, t


def test_register_parametrization_matches_torch():
    p, t = linears()
    parametrize.register_parametrization(p, "weight", symmetric(pith)())
    torch.nn.utils.parametrize.register_parametrization(t, "weight", symmetric(torch)())
    assert type(p).__name__ == type(t).__name__ == "ParametrizedLinear"
    assert isinstance(p, nn.Linear)
    assert list(p.state_dict()) == list(t.state_dict()) == ["bias",
                                                             "parametrizations.weight.original"]
    assert [n for n, _ in p.named_parameters()] == [n for n, _ in t.named_parameters()]
    close(p.weight, t.weight, 0, 0)
    assert parametrize.is_parametrized(p) and parametrize.is_parametrized(p, "weight")
    assert not parametrize.is_parametrized(p, "bias")
    assert parametrize.type_before_parametrizations(p) is nn.Linear
    x = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    p(pith.tensor(x)).sum().backward()
    t(torch.tensor(x)).sum().backward()
    close(p.parametrizations.weight.original.grad, t.parametrizations.weight.original.grad)
    close(p.bias.grad, t.bias.grad)


def test_parametrized_module_repr_matches_torch():
    p, t = linears()
    parametrize.register_parametrization(p, "weight", scaled(pith)())
    torch.nn.utils.parametrize.register_parametrization(t, "weight", scaled(torch)())
    assert repr(p) == repr(t)


def test_original_keeps_its_identity_and_right_inverse_runs():
    p, t = linears()
    weight = p.weight
    parametrize.register_parametrization(p, "weight", scaled(pith)())
    torch.nn.utils.parametrize.register_parametrization(t, "weight", scaled(torch)())
    assert p.parametrizations.weight.original is weight
    close(p.parametrizations.weight.original, t.parametrizations.weight.original, 0, 0)
    close(p.weight, t.weight, 0, 0)
    value = np.full((4, 4), 3.0, dtype=np.float32)
    p.weight = pith.tensor(value)
    t.weight = torch.tensor(value)
    close(p.parametrizations.weight.original, t.parametrizations.weight.original, 0, 0)
    assert p.parametrizations.weight.original is weight


def test_chained_parametrizations_and_state_dict_across_with_strict():
    p, t = linears()
    for module, lib in ((p, pith), (t, torch)):
        lib.nn.utils.parametrize.register_parametrization(module, "weight", symmetric(lib)())
        lib.nn.utils.parametrize.register_parametrization(module, "weight", scaled(lib)())
        lib.nn.utils.parametrize.register_parametrization(module, "bias", scaled(lib)())
    assert list(p.state_dict()) == list(t.state_dict())
    assert len(p.parametrizations.weight) == 2
    close(p.weight, t.weight, 1e-6, 0)
    p2, t2 = linears()
    for module, lib in ((p2, pith), (t2, torch)):
        lib.nn.utils.parametrize.register_parametrization(module, "weight", symmetric(lib)())
        lib.nn.utils.parametrize.register_parametrization(module, "weight", scaled(lib)())
        lib.nn.utils.parametrize.register_parametrization(module, "bias", scaled(lib)())
    p2.load_state_dict(t.state_dict(), strict=True)
    t2.load_state_dict({k: torch.tensor(to_np(v), dtype=torch.float32)
                        for k, v in p.state_dict().items()}, strict=True)
    close(p2.weight, t.weight, 1e-6, 0)
    close(t2.weight, p.weight, 1e-6, 0)


def test_cached_computes_each_parametrization_once():
    p, _ = linears()
    Symmetric = symmetric(pith)
    parametrize.register_parametrization(p, "weight", Symmetric())
    Symmetric.calls = 0
    with parametrize.cached():
        first = p.weight
        with parametrize.cached():
            assert p.weight is first
        assert p.weight is first
    assert Symmetric.calls == 1
    assert p.weight is not first and Symmetric.calls == 2


@pytest.mark.parametrize("leave_parametrized", [True, False])
def test_remove_parametrizations_matches_torch(leave_parametrized):
    p, t = linears()
    weight = p.weight
    parametrize.register_parametrization(p, "weight", scaled(pith)())
    torch.nn.utils.parametrize.register_parametrization(t, "weight", scaled(torch)())
    parametrize.remove_parametrizations(p, "weight", leave_parametrized=leave_parametrized)
    torch.nn.utils.parametrize.remove_parametrizations(
        t, "weight", leave_parametrized=leave_parametrized)
    assert type(p) is nn.Linear and not hasattr(p, "parametrizations")
    assert p.weight is weight and isinstance(p.weight, nn.Parameter)
    close(p.weight, t.weight, 0, 0)
    assert list(p.state_dict()) == list(t.state_dict()) == ["bias", "weight"]


def test_parametrize_a_buffer():
    class WithBuffer(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("scale", pith.ones(2, 2))

    m = WithBuffer()
    parametrize.register_parametrization(m, "scale", scaled(pith)())
    assert list(m.state_dict()) == ["parametrizations.scale.original"]
    assert m.scale.tolist() == [[1.0, 1.0], [1.0, 1.0]]
    assert m.parametrizations.scale.original.tolist() == [[0.5, 0.5], [0.5, 0.5]]
    assert list(m.parameters()) == []


def test_parametrized_module_deepcopies_but_does_not_pickle_as_torch():
    p, t = linears()
    parametrize.register_parametrization(p, "weight", scaled(pith)())
    torch.nn.utils.parametrize.register_parametrization(t, "weight", scaled(torch)())
    clone = copy.deepcopy(p)
    close(clone.weight, p.weight, 0, 0)
    assert clone.parametrizations.weight.original is not p.parametrizations.weight.original
    messages = []
    for module in (p, t):
        with pytest.raises(RuntimeError) as info:
            pickle.dumps(module)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


PARAMETRIZE_ERRORS = [
    ("no_such_tensor", lambda lib, m: lib.nn.utils.parametrize.register_parametrization(
        m, "gamma", scaled(lib)()), ValueError),
    ("shape_change", lambda lib, m: lib.nn.utils.parametrize.register_parametrization(
        m, "weight", _first_row(lib)()), ValueError),
    ("remove_unparametrized", lambda lib, m: lib.nn.utils.parametrize.remove_parametrizations(
        m, "weight"), ValueError),
]


def _first_row(lib):
    class FirstRow(lib.nn.Module):
        def forward(self, X):
            return X[0]

    return FirstRow


@pytest.mark.parametrize("call, error", [(c, e) for _, c, e in PARAMETRIZE_ERRORS],
                         ids=[n for n, _, _ in PARAMETRIZE_ERRORS])
def test_parametrize_errors_as_torch(call, error):
    p, t = linears()
    messages = []
    for lib, module in ((pith, p), (torch, t)):
        with pytest.raises(error) as info:
            call(lib, module)
        messages.append(str(info.value).replace("torch", "pith").replace(
            "Linear(in_features=4, out_features=4, bias=True)", "<module>"))
    assert messages[0] == messages[1]
    assert type(p) is nn.Linear  # a failed registration leaves the module as it was


def test_shape_changing_right_inverse_of_one_original_is_a_clear_error():
    class Flatten(nn.Module):
        def forward(self, X):
            return X.reshape(4, 4)

        def right_inverse(self, X):
            return X.reshape(-1)

    p, _ = linears()
    with pytest.raises(NotImplementedError, match="Tensor.set_ is not supported"):
        parametrize.register_parametrization(p, "weight", Flatten(), unsafe=True)


# ---- weight_norm -----------------------------------------------------------------------------

@pytest.mark.parametrize("dim", [0, 1, None, -1])
def test_weight_norm_matches_torch(dim):
    p, t = linears(5, 3)
    nn.utils.parametrizations.weight_norm(p, dim=dim)
    torch.nn.utils.parametrizations.weight_norm(t, dim=dim)
    assert list(p.state_dict()) == list(t.state_dict()) == [
        "bias", "parametrizations.weight.original0", "parametrizations.weight.original1"]
    for key, value in t.state_dict().items():
        assert tuple(p.state_dict()[key].shape) == tuple(value.shape), key
        close(p.state_dict()[key], value, 1e-6, 1e-7)
    close(p.weight, t.weight, 1e-5, 1e-6)
    x = np.random.default_rng(1).standard_normal((4, 5)).astype(np.float32)
    (p(pith.tensor(x)) ** 2).sum().backward()
    (t(torch.tensor(x)) ** 2).sum().backward()
    for (pn, pv), (tn, tv) in zip(p.named_parameters(), t.named_parameters()):
        assert pn == tn
        close(pv.grad, tv.grad, 1e-5, 1e-6)


def test_weight_norm_of_a_3d_weight_over_a_middle_dim():
    class Holder(nn.Module):
        def __init__(self, value):
            super().__init__()
            self.weight = nn.Parameter(pith.tensor(value))

    value = np.random.default_rng(2).standard_normal((2, 3, 4)).astype(np.float64)
    p = nn.utils.parametrizations.weight_norm(Holder(value), dim=1)
    g = p.parametrizations.weight.original0
    v = torch.tensor(value)
    assert tuple(g.shape) == (1, 3, 1)
    close(g, torch.norm_except_dim(v, 2, 1), 1e-12, 1e-12)
    close(p.weight, torch._weight_norm(v, torch.norm_except_dim(v, 2, 1), 1), 1e-12, 1e-12)


def test_weight_norm_state_dict_loads_across_with_strict():
    p, t = linears(5, 3)
    nn.utils.parametrizations.weight_norm(p)
    torch.nn.utils.parametrizations.weight_norm(t)
    with torch.no_grad():
        t.parametrizations.weight.original0.mul_(1.5)
    assert p.load_state_dict(t.state_dict(), strict=True) == ([], [])
    close(p.weight, t.weight, 1e-5, 1e-6)
    t2 = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(5, 3))
    t2.load_state_dict({k: torch.tensor(to_np(v), dtype=torch.float32)
                        for k, v in p.state_dict().items()}, strict=True)
    close(p.weight, t2.weight, 1e-5, 1e-6)


def test_old_weight_norm_state_dict_loads_into_the_parametrization():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        old = torch.nn.utils.weight_norm(torch.nn.Linear(5, 3))
    p, _ = linears(5, 3)
    nn.utils.parametrizations.weight_norm(p)
    assert p.load_state_dict(old.state_dict(), strict=True) == ([], [])
    close(p.parametrizations.weight.original0, old.weight_g, 0, 0)
    close(p.parametrizations.weight.original1, old.weight_v, 0, 0)
    close(p.weight, old.weight, 1e-5, 1e-6)


def sgd_steps(module, lib, x, y, steps=5, lr=0.1):
    """A few SGD steps written out by hand: p -= lr * p.grad; the losses."""
    losses = []
    for _ in range(steps):
        loss = ((module(x) - y) ** 2).mean()
        losses.append(loss.item())
        for p in module.parameters():
            p.grad = None
        loss.backward()
        with lib.no_grad():
            for p in module.parameters():
                p.sub_(p.grad * lr)
    return losses


@pytest.mark.parametrize("kind", ["parametrizations", "old"])
def test_training_a_weight_normed_linear_matches_torch(kind):
    p, t = linears(5, 3, dtype="float64")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        if kind == "old":
            nn.utils.weight_norm(p)
            torch.nn.utils.weight_norm(t)
        else:
            nn.utils.parametrizations.weight_norm(p)
            torch.nn.utils.parametrizations.weight_norm(t)
    rng = np.random.default_rng(4)
    x, y = rng.standard_normal((8, 5)), rng.standard_normal((8, 3))
    plosses = sgd_steps(p, pith, pith.tensor(x), pith.tensor(y))
    tlosses = sgd_steps(t, torch, torch.tensor(x), torch.tensor(y))
    np.testing.assert_allclose(plosses, tlosses, rtol=1e-10)
    assert plosses[-1] < plosses[0]
    for (pn, pv), (tn, tv) in zip(p.named_parameters(), t.named_parameters()):
        assert pn == tn
        close(pv, tv, 1e-10, 1e-12)


def test_old_weight_norm_matches_torch():
    p, t = linears(5, 3)
    with pytest.warns(FutureWarning, match="`torch.nn.utils.weight_norm` is deprecated"):
        nn.utils.weight_norm(p)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        torch.nn.utils.weight_norm(t)
    assert list(p.state_dict()) == list(t.state_dict()) == ["bias", "weight_g", "weight_v"]
    assert tuple(p.weight_g.shape) == (3, 1)
    close(p.weight_g, t.weight_g, 1e-6, 1e-7)
    close(p.weight, t.weight, 1e-5, 1e-6)
    with pith.no_grad():
        p.weight_g.mul_(2.0)
    x = pith.ones(1, 5)
    p(x)  # the pre-hook recomputes the weight
    with torch.no_grad():
        t.weight_g.mul_(2.0)
    t(torch.ones(1, 5))
    close(p.weight, t.weight, 1e-5, 1e-6)
    nn.utils.remove_weight_norm(p)
    torch.nn.utils.remove_weight_norm(t)
    assert list(p.state_dict()) == ["bias", "weight"]
    assert isinstance(p.weight, nn.Parameter)
    close(p.weight, t.weight, 1e-5, 1e-6)


def test_old_weight_norm_errors_as_torch():
    messages = []
    for lib in (nn, torch.nn):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", FutureWarning)
            m = lib.utils.weight_norm(lib.Linear(2, 2))
            with pytest.raises(RuntimeError) as info:
                lib.utils.weight_norm(m)
        messages.append(str(info.value))
        with pytest.raises(ValueError) as info:
            lib.utils.remove_weight_norm(m, "bias")
        messages.append(str(info.value).split(" not found")[0])
    assert messages[:2] == messages[2:]
    assert messages[0] == "Cannot register two weight_norm hooks on the same parameter weight"


def test_training_with_optim_sgd_clipping_and_weight_norm_matches_torch():
    """pith.optim.SGD (momentum) with clip_grad_norm_ and a StepLR on a weight-normed
    Linear, 10 steps, as torch's."""
    p, t = linears(5, 3, dtype="float64")
    nn.utils.parametrizations.weight_norm(p)
    torch.nn.utils.parametrizations.weight_norm(t)
    rng = np.random.default_rng(5)
    x, y = rng.standard_normal((8, 5)), rng.standard_normal((8, 3))
    runs = []
    for lib, module in ((pith, p), (torch, t)):
        opt = lib.optim.SGD(module.parameters(), lr=0.2, momentum=0.9)
        sched = lib.optim.lr_scheduler.StepLR(opt, step_size=3, gamma=0.5)
        xs, ys = lib.tensor(x), lib.tensor(y)
        losses, norms = [], []
        for _ in range(10):
            opt.zero_grad()
            loss = ((module(xs) - ys) ** 2).mean()
            loss.backward()
            norms.append(lib.nn.utils.clip_grad_norm_(module.parameters(), 0.5).item())
            opt.step()
            sched.step()
            losses.append(loss.item())
        runs.append((losses, norms))
    np.testing.assert_allclose(runs[0][0], runs[1][0], rtol=1e-10)
    np.testing.assert_allclose(runs[0][1], runs[1][1], rtol=1e-10)
    assert runs[0][0][-1] < runs[0][0][0]
    for (pn, pv), (tn, tv) in zip(p.named_parameters(), t.named_parameters()):
        assert pn == tn
        close(pv, tv, 1e-10, 1e-12)


def test_total_norm_of_large_gradients_is_accurate():
    """The 2-norm path (a dot product per gradient) on 300k float32 values: within 1e-6 of
    the float64 value; torch's own float32 result is within 2e-5 of it (its summation
    order loses more), so pith is compared with torch at that tolerance."""
    rng = np.random.default_rng(6)
    values = [rng.standard_normal(shape).astype(np.float32) for shape in ((500, 400), (100000,))]
    pp = [nn.Parameter(pith.zeros(v.shape)) for v in values]
    tp = [torch.zeros(v.shape, requires_grad=True) for v in values]
    for p, t, v in zip(pp, tp, values):
        p.grad, t.grad = pith.tensor(v), torch.tensor(v)
    exact = math.sqrt(sum(float((v.astype(np.float64) ** 2).sum()) for v in values))
    pn = nn.utils.clip_grad_norm_(pp, 1.0).item()
    tn = torch.nn.utils.clip_grad_norm_(tp, 1.0).item()
    assert abs(pn - exact) <= 1e-6 * exact
    assert abs(pn - tn) <= 2e-5 * exact


def test_nn_utils_is_imported_on_first_use():
    import subprocess
    import sys
    code = ("import sys, pith.nn as nn; print('pith.nn.utils' in sys.modules); "
            "nn.utils.clip_grad_norm_; print('pith.nn.utils' in sys.modules, "
            "nn.utils is sys.modules['pith.nn.utils'], hasattr(nn, 'no_such_name'))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    assert out == ["False", "True", "True", "False"]


@pytest.mark.parametrize("norm_type", [math.inf, -math.inf, -1.0, -0.5, 2.0, 1.0, 0.0, 3.0])
@pytest.mark.parametrize("foreach", [None, False])
@pytest.mark.parametrize("shape", [(0,), (2, 0), ()])
def test_total_norm_with_empty_and_0_dim_gradients_as_torch(norm_type, foreach, shape):
    """Empty gradients: torch's values, or its error where the norm has no identity."""
    results = []
    for lib in (pith, torch):
        tensors = [lib.zeros(shape) if shape else lib.tensor(-2.5), lib.ones(2)]
        try:
            results.append(lib.nn.utils.get_total_norm(tensors, norm_type,
                                                       foreach=foreach).item())
        except RuntimeError as e:
            results.append(str(e))
    if isinstance(results[1], float):
        assert results[0] == pytest.approx(results[1], rel=1e-6)
    else:
        assert results[0] == results[1]


from hypothesis import given  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

from conftest import examples  # noqa: E402


@examples(30)
@given(shapes=st.lists(st.lists(st.integers(1, 6), min_size=0, max_size=3), min_size=1,
                       max_size=4),
       norm_type=st.sampled_from([2.0, 1.0, 0.5, 3.0, math.inf, -math.inf, 0.0]),
       max_norm=st.floats(0.01, 10.0), seed=st.integers(0, 2**31 - 1),
       dtype=st.sampled_from(["float32", "float64"]))
def test_clip_grad_norm_property_against_torch(shapes, norm_type, max_norm, seed, dtype):
    rng = np.random.default_rng(seed)
    grads = [rng.standard_normal(tuple(s)).astype(dtype) for s in shapes]
    pp = [nn.Parameter(pith.zeros(tuple(s), dtype=getattr(pith, dtype))) for s in shapes]
    tp = [torch.zeros(tuple(s), dtype=getattr(torch, dtype), requires_grad=True)
          for s in shapes]
    for p, t, g in zip(pp, tp, grads):
        p.grad, t.grad = pith.tensor(g), torch.tensor(g)
    tol = (1e-5, 1e-6) if dtype == "float32" else (1e-12, 1e-12)
    close(nn.utils.clip_grad_norm_(pp, max_norm, norm_type),
          torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type), *tol)
    assert_grads_match(pp, tp, *tol)
