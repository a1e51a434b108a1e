"""Every loss of pith.nn trains: forward values AND gradients against PyTorch's, for every
loss of torch.nn.functional (nll_loss, cross_entropy, binary_cross_entropy(_with_logits),
mse_loss, l1_loss, kl_div, poisson_nll_loss, gaussian_nll_loss, smooth_l1_loss, huber_loss,
soft_margin_loss, multilabel_soft_margin_loss, hinge_embedding_loss, multi_margin_loss,
multilabel_margin_loss, cosine_embedding_loss, margin_ranking_loss, triplet_margin_loss,
triplet_margin_with_distance_loss, linear_cross_entropy, ctc_loss), each reduction, float32
and float64, empty batches where PyTorch takes them; gradcheck in float64; PyTorch's errors
and warnings; the CTC loss's layouts, lengths, blanks and zero_infinity; and every loss
module of torch.nn.modules.loss.__all__ training a Linear layer one SGD step as torch's does.

Tolerances: float64 within 1e-9 (relative and absolute) of PyTorch; float32 within 1e-4
relative / 1e-5 absolute (the losses are compositions, whose order of summation and of
rounding differs from PyTorch's fused kernels)."""
import math
import warnings

import numpy as np
import pytest

import pith
import pith.nn as nn
import pith.nn.functional as F
from pith.autograd import gradcheck

torch = pytest.importorskip("torch")
TF = torch.nn.functional

REDUCTIONS = ["mean", "sum", "none"]
DTYPES = ["float32", "float64"]
TOL = {"float32": dict(rtol=1e-4, atol=1e-5), "float64": dict(rtol=1e-9, atol=1e-9)}


# ---- conversions -----------------------------------------------------------------------------

def convert(value, lib, dtype, requires_grad=False):
    """A numpy array as a tensor of `lib`: floats in `dtype`, integers int64, bools bool;
    anything else as it is."""
    if not isinstance(value, np.ndarray):
        return value
    if value.dtype.kind == "f":
        kind = getattr(lib, dtype)
    elif value.dtype.kind == "b":
        kind = lib.bool
    else:
        kind = lib.int64
    t = (lib.tensor(value.tolist(), dtype=kind) if value.size
         else lib.zeros(value.shape, dtype=kind))
    if requires_grad:
        t.requires_grad_(True)
    return t


def array(t):
    return np.array(t.detach().tolist(), dtype=np.float64).reshape(tuple(t.shape))


def assert_close(got, expected, dtype, what=""):
    assert tuple(got.shape) == tuple(expected.shape), (what, got.shape, expected.shape)
    np.testing.assert_allclose(array(got), expected.detach().double().numpy(),
                               equal_nan=True, err_msg=what, **TOL[dtype])


def run_both(name, args, kwargs, grad, dtype, seed=0):
    """Calls F.<name> of pith and of torch on the same values, with the inputs at the
    positions `grad` requiring grad; compares the results, their dtype, and the gradients of
    a random weighting of the results. Returns pith's result."""
    tt = [convert(a, torch, dtype, i in grad) for i, a in enumerate(args)]
    pt = [convert(a, pith, dtype, i in grad) for i, a in enumerate(args)]
    kt = {k: convert(v, torch, dtype) for k, v in kwargs.items()}
    kp = {k: convert(v, pith, dtype) for k, v in kwargs.items()}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        expected = getattr(TF, name)(*tt, **kt)
        got = getattr(F, name)(*pt, **kp)
    assert str(got.dtype).rpartition(".")[2] == str(expected.dtype).rpartition(".")[2]
    assert_close(got, expected, dtype, f"{name} value")
    if not grad:
        return got
    weights = np.random.default_rng(seed).uniform(0.5, 1.5, tuple(expected.shape))
    expected.backward(torch.tensor(weights, dtype=expected.dtype))
    got.backward(convert(weights, pith, dtype) if weights.ndim else
                 pith.tensor(float(weights), dtype=got.dtype))
    for i in grad:
        if tt[i].grad is None:
            assert pt[i].grad is None or not array(pt[i].grad).any(), (name, i)
        else:
            assert pt[i].grad is not None, f"{name}: no gradient of argument {i}"
            assert_close(pt[i].grad, tt[i].grad, dtype, f"{name} gradient of argument {i}")
    return got


# ---- the cases: (name, args, kwargs, the positions that require grad) ----------------------

def sign(rng, *shape):
    return np.where(rng.uniform(size=shape) < 0.5, -1.0, 1.0)


def loss_cases(reduction):
    rng = np.random.default_rng(7)
    x, y = rng.normal(size=(4, 5)), rng.normal(size=(4, 5))
    prob, positive = rng.uniform(0.05, 0.95, (4, 5)), rng.uniform(0.5, 3.0, (4, 5))
    classes = rng.integers(0, 5, 4)
    ignored = classes.copy()
    ignored[1] = -100
    weight = rng.uniform(0.5, 2.0, 5)
    labels = np.array([[3, 0, -1, 1, 2], [1, 4, 2, -1, 0], [0, 1, 2, 3, 4], [-1, 0, 0, 0, 0]])
    r = dict(reduction=reduction)
    cases = [
        ("nll_loss", [x, ignored], dict(r, weight=weight), (0,)),
        ("nll_loss", [rng.normal(size=(3, 5, 2)), rng.integers(0, 5, (3, 2))], r, (0,)),
        ("cross_entropy", [x, ignored], dict(r, weight=weight, label_smoothing=0.2), (0,)),
        ("cross_entropy", [rng.normal(size=(3, 5, 2)), rng.integers(0, 5, (3, 2))],
         dict(r, weight=weight, label_smoothing=0.1), (0,)),
        ("cross_entropy", [x, prob], dict(r, weight=weight, label_smoothing=0.3), (0, 1)),
        ("binary_cross_entropy", [prob, rng.uniform(size=(4, 5))],
         dict(r, weight=rng.uniform(0.5, 2, (1, 5))), (0, 1)),
        ("binary_cross_entropy_with_logits", [x, rng.uniform(size=(4, 5))],
         dict(r, weight=rng.uniform(0.5, 2, (1, 5)), pos_weight=weight), (0, 1)),
        ("binary_cross_entropy_with_logits", [x, rng.uniform(size=(4, 5))], r, (0, 1)),
        ("mse_loss", [x, y], r, (0, 1)),
        ("mse_loss", [x, y[0]], r, (0, 1)),
        ("l1_loss", [x, y], r, (0, 1)),
        ("kl_div", [x, prob], r, (0, 1)),
        ("kl_div", [x, np.log(prob)], dict(r, log_target=True), (0, 1)),
        ("kl_div", [x, np.where(prob < 0.3, 0.0, prob)], r, (0, 1)),
        ("poisson_nll_loss", [x, positive], r, (0, 1)),
        ("poisson_nll_loss", [positive, positive * 2], dict(r, log_input=False, full=True,
                                                           eps=1e-3), (0, 1)),
        ("gaussian_nll_loss", [x, y, positive], dict(r, full=True), (0, 1, 2)),
        ("gaussian_nll_loss", [x, y, positive[:, 0]], r, (0, 1, 2)),
        ("gaussian_nll_loss", [x, y, positive[:, :1]], dict(r, eps=0.9), (0, 1, 2)),
        ("smooth_l1_loss", [x, y], dict(r, beta=0.7), (0, 1)),
        ("smooth_l1_loss", [x, y], dict(r, beta=0.0), (0, 1)),
        ("huber_loss", [x, y], dict(r, delta=0.6), (0, 1)),
        ("huber_loss", [x, y], dict(r, delta=0.6, weight=prob), (0, 1)),
        ("soft_margin_loss", [x, sign(rng, 4, 5)], r, (0,)),
        ("soft_margin_loss", [x, sign(rng, 5)], r, (0,)),
        ("multilabel_soft_margin_loss", [x, rng.uniform(size=(4, 5))], dict(r, weight=weight),
         (0, 1)),
        ("hinge_embedding_loss", [x, sign(rng, 4, 5)], dict(r, margin=0.5), (0,)),
        ("margin_ranking_loss", [x[:, 0], y[:, 0], sign(rng, 4)], dict(r, margin=0.3),
         (0, 1, 2)),
        ("margin_ranking_loss", [x, y, sign(rng, 4, 1)], r, (0, 1)),
        ("cosine_embedding_loss", [x, y, sign(rng, 4)], dict(r, margin=0.1), (0, 1)),
        ("cosine_embedding_loss", [x[0], y[0], np.array(-1.0)], dict(r, margin=-0.5), (0, 1)),
        ("multi_margin_loss", [x, classes], dict(r, p=2, margin=0.8, weight=weight), (0,)),
        ("multi_margin_loss", [x, classes], r, (0,)),
        ("multi_margin_loss", [x[0], classes[:1]], r, (0,)),
        ("multilabel_margin_loss", [x, labels], r, (0,)),
        ("multilabel_margin_loss", [x[1], labels[1]], r, (0,)),
        ("triplet_margin_loss", [x, y, prob], r, (0, 1, 2)),
        ("triplet_margin_loss", [x, y, prob], dict(r, p=1, swap=True, margin=2.0), (0, 1, 2)),
        ("triplet_margin_loss", [x, y, prob], dict(r, p=3, eps=0.1), (0, 1, 2)),
        ("triplet_margin_loss", [x[0], y[0], prob[0]], dict(r, swap=True), (0, 1, 2)),
        ("triplet_margin_with_distance_loss", [x, y, prob], dict(r, swap=True), (0, 1, 2)),
    ]
    return cases


def case_id(case):
    name, args, kwargs, _ = case
    shapes = "-".join("x".join(map(str, a.shape)) or "0d" for a in args
                      if isinstance(a, np.ndarray))
    extra = ",".join(f"{k}" for k in kwargs if k != "reduction")
    return f"{name}[{shapes}]({extra})"


CASES = [(reduction, case) for reduction in REDUCTIONS for case in loss_cases(reduction)]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("reduction,case", CASES,
                         ids=[f"{r}-{case_id(c)}" for r, c in CASES])
def test_loss_value_and_gradients_match_torch(reduction, case, dtype):
    name, args, kwargs, grad = case
    run_both(name, args, kwargs, grad, dtype)


# gradcheck in float64 of every case (pith's own gradients against finite differences)
GRADCHECK = [case for case in loss_cases("sum")]


@pytest.mark.parametrize("case", GRADCHECK, ids=[case_id(c) for c in GRADCHECK])
def test_loss_gradcheck_in_float64(case):
    name, args, kwargs, grad = case
    if name == "kl_div" and not args[1].all():
        grad = (0,)  # the gradient of a target 0 is NaN, as PyTorch's (xlogy's)
    tensors = [convert(a, pith, "float64", i in grad) for i, a in enumerate(args)]
    kp = {k: convert(v, pith, "float64") for k, v in kwargs.items()}
    function = getattr(F, name)

    def call(*inputs):
        values = list(tensors)
        for i, t in zip(grad, inputs):
            values[i] = t
        return function(*values, **kp)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # mse_loss's target size warning, as PyTorch's
        assert gradcheck(call, tuple(tensors[i] for i in grad), eps=1e-6, atol=1e-5,
                         rtol=1e-3)


def test_the_weights_of_bce_with_logits_get_gradients():
    # PyTorch refuses gradients of weight and pos_weight ("not differentiable"); pith's
    # composition gives them (docs/training.md, "Losses"): gradcheck them.
    rng = np.random.default_rng(3)
    x, t = rng.normal(size=(3, 4)), rng.uniform(size=(3, 4))
    w, pw = rng.uniform(0.5, 2, (1, 4)), rng.uniform(0.5, 2, (4,))
    args = [convert(a, pith, "float64", True) for a in (x, t, w, pw)]
    assert gradcheck(lambda a, b, c, d: F.binary_cross_entropy_with_logits(
        a, b, c, pos_weight=d), tuple(args))


# ---- empty batches ---------------------------------------------------------------------------

EMPTY = [
    ("nll_loss", [np.zeros((0, 3)), np.zeros(0, dtype=np.int64)], {}),
    ("cross_entropy", [np.zeros((0, 3)), np.zeros(0, dtype=np.int64)],
     {"label_smoothing": 0.1}),
    ("cross_entropy", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("binary_cross_entropy", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("binary_cross_entropy_with_logits", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("mse_loss", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("l1_loss", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("kl_div", [np.zeros((0, 3)), np.zeros((0, 3))], {"reduction": "batchmean"}),
    ("kl_div", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("smooth_l1_loss", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("huber_loss", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("soft_margin_loss", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("poisson_nll_loss", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("gaussian_nll_loss", [np.zeros((0, 3)), np.zeros((0, 3)), np.ones((0, 3))], {}),
    ("hinge_embedding_loss", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("multilabel_soft_margin_loss", [np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("margin_ranking_loss", [np.zeros(0), np.zeros(0), np.zeros(0)], {}),
    ("cosine_embedding_loss", [np.zeros((0, 3)), np.zeros((0, 3)), np.zeros(0)], {}),
    # PyTorch reduces these two over an empty batch into memory it never wrote: 'none' only
    ("multi_margin_loss", [np.zeros((0, 3)), np.zeros(0, dtype=np.int64)],
     {"reduction": "none"}),
    ("multilabel_margin_loss", [np.zeros((0, 3)), np.zeros((0, 3), dtype=np.int64)],
     {"reduction": "none"}),
    ("triplet_margin_loss", [np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3))], {}),
    ("triplet_margin_with_distance_loss",
     [np.zeros((0, 3)), np.zeros((0, 3)), np.zeros((0, 3))], {}),
]


@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("name,args,kwargs", EMPTY, ids=[e[0] for e in EMPTY])
def test_empty_batches_match_torch(name, args, kwargs, reduction):
    kwargs = dict(kwargs)
    kwargs.setdefault("reduction", reduction)
    run_both(name, args, kwargs, (0,), "float32")


# ---- errors and warnings ---------------------------------------------------------------------

def raises_like_torch(call):
    """call(lib, F) raises the same exception type with the same message for torch and
    pith (torch's names read as pith's)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the target size warnings before the errors
        with pytest.raises(Exception) as expected:
            call(torch, TF)
        with pytest.raises(Exception) as got:
            call(pith, F)
    assert type(got.value).__name__ == type(expected.value).__name__ or \
        issubclass(type(got.value), type(expected.value)), (got.value, expected.value)
    message = str(expected.value).split("\n")[0].replace("torch.", "pith.")
    assert str(got.value).split("\n")[0] == message


def t(lib, *shape, dtype=None):
    """A deterministic float tensor of `shape` (values 0.1 * i - 0.3)."""
    n = int(np.prod(shape)) if shape else 1
    values = (np.arange(n) * 0.1 - 0.3).reshape(shape)
    return lib.tensor(values.tolist(), dtype=dtype or lib.float32)


def idx(lib, values):
    return lib.tensor(values, dtype=lib.int64)


ERRORS = {
    "smooth_l1_negative_beta": lambda lib, f: f.smooth_l1_loss(t(lib, 3), t(lib, 3), beta=-1),
    "huber_delta_0": lambda lib, f: f.huber_loss(t(lib, 3), t(lib, 3), delta=0),
    "huber_bad_reduction": lambda lib, f: f.huber_loss(t(lib, 3), t(lib, 3), reduction="x"),
    "huber_weight_size": lambda lib, f: f.huber_loss(t(lib, 3), t(lib, 3), weight=t(lib, 2)),
    "smooth_l1_broadcast": lambda lib, f: f.smooth_l1_loss(t(lib, 2, 3), t(lib, 4)),
    "smooth_l1_int": lambda lib, f: f.smooth_l1_loss(idx(lib, [1]), idx(lib, [1])),
    "huber_int": lambda lib, f: f.huber_loss(idx(lib, [1]), idx(lib, [1])),
    "kl_div_bad_reduction": lambda lib, f: f.kl_div(t(lib, 3), t(lib, 3), reduction="x"),
    "kl_div_broadcast": lambda lib, f: f.kl_div(t(lib, 2, 3), t(lib, 4), reduction="sum"),
    "kl_div_integers": lambda lib, f: f.kl_div(idx(lib, [1]), idx(lib, [1]), reduction="sum"),
    "poisson_bad_reduction": lambda lib, f: f.poisson_nll_loss(t(lib, 3), t(lib, 3),
                                                              reduction="x"),
    "poisson_broadcast": lambda lib, f: f.poisson_nll_loss(t(lib, 2, 3), t(lib, 4)),
    "gaussian_var_size": lambda lib, f: f.gaussian_nll_loss(t(lib, 3, 4), t(lib, 3, 4),
                                                            t(lib, 3, 5)),
    "gaussian_negative_float": lambda lib, f: f.gaussian_nll_loss(t(lib, 3), t(lib, 3), -1.0),
    "gaussian_negative_var": lambda lib, f: f.gaussian_nll_loss(t(lib, 3), t(lib, 3),
                                                                t(lib, 3)),
    "gaussian_bad_reduction": lambda lib, f: f.gaussian_nll_loss(
        t(lib, 3), t(lib, 3), t(lib, 3).abs(), reduction="x"),
    "gaussian_int_var": lambda lib, f: f.gaussian_nll_loss(t(lib, 3), t(lib, 3), 1),
    "soft_margin_grows": lambda lib, f: f.soft_margin_loss(t(lib, 3, 4), t(lib, 2, 3, 4)),
    "soft_margin_broadcast": lambda lib, f: f.soft_margin_loss(t(lib, 3, 4), t(lib, 3, 5)),
    "multilabel_soft_bad_reduction": lambda lib, f: f.multilabel_soft_margin_loss(
        t(lib, 2, 3), t(lib, 2, 3), reduction="x"),
    "hinge_broadcast": lambda lib, f: f.hinge_embedding_loss(t(lib, 3, 4), t(lib, 5)),
    "margin_ranking_dims": lambda lib, f: f.margin_ranking_loss(t(lib, 3, 4), t(lib, 3, 4),
                                                                t(lib, 4)),
    "margin_ranking_broadcast": lambda lib, f: f.margin_ranking_loss(t(lib, 3, 4), t(lib, 3, 4),
                                                                     t(lib, 2, 4)),
    "cosine_target_2d": lambda lib, f: f.cosine_embedding_loss(t(lib, 3, 4), t(lib, 3, 4),
                                                               t(lib, 3, 1)),
    "cosine_1d_target": lambda lib, f: f.cosine_embedding_loss(t(lib, 3, 4), t(lib, 4),
                                                               t(lib, 3)),
    "cosine_0d_target": lambda lib, f: f.cosine_embedding_loss(t(lib, 3, 4), t(lib, 3, 4),
                                                               lib.tensor(1.0)),
    "cosine_batch": lambda lib, f: f.cosine_embedding_loss(t(lib, 3, 4), t(lib, 3, 4),
                                                           t(lib, 2)),
    "multi_margin_p": lambda lib, f: f.multi_margin_loss(t(lib, 3, 4), idx(lib, [0, 1, 2]),
                                                         p=3),
    "multi_margin_weight_dim": lambda lib, f: f.multi_margin_loss(
        t(lib, 3, 4), idx(lib, [0, 1, 2]), weight=t(lib, 1, 4)),
    "multi_margin_weight_size": lambda lib, f: f.multi_margin_loss(
        t(lib, 3, 4), idx(lib, [0, 1, 2]), weight=t(lib, 3)),
    "multi_margin_target_size": lambda lib, f: f.multi_margin_loss(t(lib, 3, 4),
                                                                   idx(lib, [0, 1])),
    "multi_margin_out_of_range": lambda lib, f: f.multi_margin_loss(t(lib, 3, 4),
                                                                    idx(lib, [0, 1, 4])),
    "multi_margin_empty_classes": lambda lib, f: f.multi_margin_loss(t(lib, 3, 0),
                                                                     idx(lib, [0, 1, 2])),
    "multi_margin_int_input": lambda lib, f: f.multi_margin_loss(idx(lib, [[1, 2]]),
                                                                 idx(lib, [0])),
    "multi_margin_int_target": lambda lib, f: f.multi_margin_loss(
        t(lib, 3, 4), lib.tensor([0, 1, 2], dtype=lib.int32)),
    "multi_margin_weight_dtype": lambda lib, f: f.multi_margin_loss(
        t(lib, 3, 4), idx(lib, [0, 1, 2]), weight=t(lib, 4, dtype=lib.float64)),
    "multilabel_margin_size": lambda lib, f: f.multilabel_margin_loss(
        t(lib, 3, 4), idx(lib, [[0, 1, -1, 0]] * 2)),
    "multilabel_margin_range": lambda lib, f: f.multilabel_margin_loss(
        t(lib, 3, 4), idx(lib, [[0, 5, -1, 0]] * 3)),
    "multilabel_margin_int_target": lambda lib, f: f.multilabel_margin_loss(
        t(lib, 3, 4), lib.tensor([[0, 1, -1, 0]] * 3, dtype=lib.int32)),
    "triplet_dims": lambda lib, f: f.triplet_margin_loss(t(lib, 3, 4), t(lib, 3, 4), t(lib, 4)),
    "triplet_margin": lambda lib, f: f.triplet_margin_loss(t(lib, 3, 4), t(lib, 3, 4),
                                                           t(lib, 3, 4), margin=0),
    "triplet_distance_dims": lambda lib, f: f.triplet_margin_with_distance_loss(
        t(lib, 3, 4), t(lib, 3, 4), t(lib, 4)),
    "triplet_distance_reduction": lambda lib, f: f.triplet_margin_with_distance_loss(
        t(lib, 3, 4), t(lib, 3, 4), t(lib, 3, 4), reduction="x"),
    "triplet_distance_margin": lambda lib, f: f.triplet_margin_with_distance_loss(
        t(lib, 3, 4), t(lib, 3, 4), t(lib, 3, 4), margin=-1),
    "linear_cross_entropy_input_dim": lambda lib, f: f.linear_cross_entropy(
        t(lib, 2, 3, 4), t(lib, 5, 4), idx(lib, [0, 1])),
    "linear_cross_entropy_in_features": lambda lib, f: f.linear_cross_entropy(
        t(lib, 2, 3), t(lib, 5, 4), idx(lib, [0, 1])),
    "linear_cross_entropy_bias": lambda lib, f: f.linear_cross_entropy(
        t(lib, 2, 4), t(lib, 5, 4), idx(lib, [0, 1]), linear_bias=t(lib, 4)),
    "linear_cross_entropy_probabilities": lambda lib, f: f.linear_cross_entropy(
        t(lib, 2, 4), t(lib, 5, 4), t(lib, 2, 5), ignore_index=1),
}


@pytest.mark.parametrize("name", sorted(ERRORS))
def test_errors_match_torch(name):
    raises_like_torch(ERRORS[name])


def test_kl_div_mean_warns_like_torch():
    def messages(lib, f):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f.kl_div(t(lib, 2, 3), t(lib, 2, 3).abs(), reduction="mean")
        return [str(w.message) for w in caught]
    assert messages(pith, F) == messages(torch, TF)
    assert len(messages(pith, F)) == 1
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        F.kl_div(t(pith, 2, 3), t(pith, 2, 3).abs())
    assert caught[0].filename == __file__  # the caller's line, as PyTorch's stacklevel=2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        F.kl_div(t(pith, 2, 3), t(pith, 2, 3).abs(), reduction="batchmean")


@pytest.mark.parametrize("beta", [0.0, 0.5])
def test_smooth_l1_warns_once_of_a_target_size_like_torch(beta):
    def messages(lib, f):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            f.smooth_l1_loss(t(lib, 2, 3), t(lib, 3), beta=beta)
        return [str(w.message).replace("torch.", "pith.") for w in caught]
    assert messages(pith, F) == messages(torch, TF)
    assert len(messages(pith, F)) == 1


def test_batchmean_divides_by_the_batch_size():
    x, y = t(pith, 4, 3), t(pith, 4, 3).abs()
    total = F.kl_div(x, y, reduction="sum")
    assert F.kl_div(x, y, reduction="batchmean").item() == pytest.approx(total.item() / 4)
    run_both("kl_div", [np.linspace(-1, 1, 12).reshape(4, 3), np.full((4, 3), 0.25)],
             {"reduction": "batchmean"}, (0, 1), "float64")
    run_both("kl_div", [np.array(-0.5), np.array(0.25)], {"reduction": "batchmean"}, (0, 1),
             "float64")


def test_pow_norm_gradient_is_exact_in_float64():
    # pairwise_distance's p-norm raises to tensor exponents: a Python float exponent's
    # gradient is computed with its float32 rounding (docs/training.md, "Losses").
    run_both("triplet_margin_loss", [np.linspace(-1, 1, 8).reshape(2, 4),
                                     np.linspace(0, 2, 8).reshape(2, 4),
                                     np.linspace(1, -1, 8).reshape(2, 4)],
             {"p": 2.5}, (0, 1, 2), "float64")


def test_triplet_margin_with_a_distance_function_of_ones_own():
    rng = np.random.default_rng(5)
    args = [rng.normal(size=(3, 4)) for _ in range(3)]
    tt = [torch.tensor(a, requires_grad=True) for a in args]
    pt = [pith.tensor(a.tolist(), dtype=pith.float64, requires_grad=True) for a in args]
    expected = TF.triplet_margin_with_distance_loss(
        *tt, distance_function=lambda a, b: 1 - TF.cosine_similarity(a, b), swap=True)

    def cosine_distance(a, b):
        return 1 - (a * b).sum(-1) / ((a * a).sum(-1) * (b * b).sum(-1)).sqrt()
    got = F.triplet_margin_with_distance_loss(*pt, distance_function=cosine_distance,
                                              swap=True)
    assert_close(got, expected, "float64")
    expected.backward()
    got.backward()
    for a, b in zip(pt, tt):
        assert_close(a.grad, b.grad, "float64")


def test_linear_cross_entropy_matches_torch():
    rng = np.random.default_rng(9)
    x, w, b = rng.normal(size=(3, 4)), rng.normal(size=(5, 2, 4)), rng.normal(size=(5, 2))
    target = rng.integers(0, 5, (3, 2))
    for kwargs in ({}, {"label_smoothing": 0.1}, {"reduction": "none"}):
        tt = [torch.tensor(a, requires_grad=True) for a in (x, w, b)]
        pt = [pith.tensor(a.tolist(), dtype=pith.float64, requires_grad=True) for a in (x, w, b)]
        expected = TF.linear_cross_entropy(tt[0], tt[1], torch.tensor(target),
                                           linear_bias=tt[2], **kwargs)
        got = F.linear_cross_entropy(pt[0], pt[1], idx(pith, target.tolist()),
                                     linear_bias=pt[2], **kwargs)
        assert_close(got, expected, "float64")
        expected.sum().backward()
        got.sum().backward()
        for a, e in zip(pt, tt):
            assert_close(a.grad, e.grad, "float64")
    with pytest.raises(NotImplementedError, match="chunked path"):
        F.linear_cross_entropy(pt[0], pt[1].reshape(10, 4), idx(pith, [0, 1, 2]),
                               options=object())


# ---- CTC -------------------------------------------------------------------------------------

def ctc_case(rng, T, N, C, blank, max_target, impossible=False):
    """Logits (T, N, C), padded targets (N, S) without the blank, and random lengths (the
    first sample uses all of T; with impossible, the last needs more steps than it has)."""
    logits = rng.normal(size=(T, N, C))
    input_lengths = rng.integers(0, T + 1, N)
    input_lengths[0] = T
    target_lengths = rng.integers(0, max_target + 1, N)
    if impossible:
        input_lengths[-1] = 2
        target_lengths[-1] = max_target
    targets = rng.integers(0, C - 1, (N, max(max_target, 1)))
    targets[targets >= blank] += 1
    return logits, targets, input_lengths, target_lengths


def ctc_both(logits, targets, input_lengths, target_lengths, layout, dtype, lengths_kind,
             **kwargs):
    """ctc_loss of log_softmax(logits) in torch and pith, the results and the gradients of
    the logits and of the log-probabilities."""
    results = {}
    for lib, f in ((torch, TF), (pith, F)):
        x = convert(logits, lib, dtype, True)
        lp = x.log_softmax(-1)
        lp.retain_grad()
        if layout == "concatenated":
            flat = np.concatenate([targets[i, :n] for i, n in enumerate(target_lengths)] +
                                  [np.zeros(0, dtype=np.int64)])
            tg = idx(lib, flat.tolist())
        else:
            tg = idx(lib, targets.tolist())
        if lengths_kind == "tensor":
            il, tl = idx(lib, input_lengths.tolist()), idx(lib, target_lengths.tolist())
        else:
            il, tl = tuple(input_lengths.tolist()), tuple(target_lengths.tolist())
        loss = f.ctc_loss(lp, tg, il, tl, **kwargs)
        weights = np.linspace(0.5, 1.5, loss.numel()).reshape(tuple(loss.shape))
        loss.backward(convert(weights, lib, dtype) if weights.ndim else
                      lib.tensor(float(weights), dtype=loss.dtype))
        results[lib.__name__] = (loss, x.grad, lp.grad)
    return results["pith"], results["torch"]


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("layout", ["padded", "concatenated"])
@pytest.mark.parametrize("reduction", REDUCTIONS)
@pytest.mark.parametrize("blank", [0, 3])
def test_ctc_loss_matches_torch(dtype, layout, reduction, blank):
    rng = np.random.default_rng(blank * 7 + len(layout) + len(reduction))
    case = ctc_case(rng, T=12, N=5, C=6, blank=blank, max_target=5)
    got, expected = ctc_both(*case, layout, dtype, "tensor", blank=blank, reduction=reduction)
    for g, e, what in zip(got, expected, ("loss", "logits' gradient", "log_probs' gradient")):
        assert_close(g, e, dtype, what)


@pytest.mark.parametrize("zero_infinity", [False, True])
@pytest.mark.parametrize("reduction", REDUCTIONS)
def test_ctc_loss_of_impossible_alignments_matches_torch(zero_infinity, reduction):
    rng = np.random.default_rng(11)
    case = ctc_case(rng, T=8, N=4, C=5, blank=1, max_target=4, impossible=True)
    got, expected = ctc_both(*case, "padded", "float64", "ints", blank=1, reduction=reduction,
                             zero_infinity=zero_infinity)
    loss = array(got[0])
    if zero_infinity:
        assert np.isfinite(loss).all() and np.isfinite(array(got[2])).all()
    elif reduction == "none":
        assert loss[-1] == math.inf
    for g, e in zip(got, expected):
        assert_close(g, e, "float64")


def test_ctc_loss_of_unbatched_input_matches_torch():
    rng = np.random.default_rng(2)
    logits, targets = rng.normal(size=(7, 5)), rng.integers(1, 5, 3)
    for reduction in REDUCTIONS:
        results = []
        for lib, f in ((torch, TF), (pith, F)):
            x = convert(logits, lib, "float64", True)
            loss = f.ctc_loss(x.log_softmax(-1), idx(lib, targets.tolist()),
                              lib.tensor(7), lib.tensor(3), reduction=reduction)
            loss.backward()
            results.append((loss, x.grad))
        (got, got_grad), (expected, expected_grad) = results
        assert_close(got, expected, "float64")
        assert_close(got_grad, expected_grad, "float64")


def test_ctc_loss_takes_int32_targets_and_empty_targets():
    rng = np.random.default_rng(4)
    logits = rng.normal(size=(6, 2, 4))
    for lengths in ([0, 0], [2, 0]):
        losses = []
        for lib, f in ((torch, TF), (pith, F)):
            lp = convert(logits, lib, "float64").log_softmax(-1)
            tg = lib.tensor([[1, 2], [3, 1]], dtype=lib.int32)
            losses.append(f.ctc_loss(lp, tg, [6, 4], lengths, reduction="none"))
        assert_close(losses[1], losses[0], "float64")


@pytest.mark.parametrize("shape", [(4, 0, 3), (0, 2, 3), (4, 2, 0)])
def test_ctc_loss_of_empty_log_probs_is_an_error_like_torch(shape):
    raises_like_torch(lambda lib, f: f.ctc_loss(
        lib.zeros(shape), lib.zeros((shape[1], 2), dtype=lib.int64), [0] * shape[1],
        [0] * shape[1]))


def test_ctc_loss_gradcheck_through_log_softmax():
    # PyTorch's gradient of log_probs carries the exp(log_probs) term of a log_softmax
    # before it (See Note [CTC loss]): gradcheck holds for the logits, as in PyTorch.
    rng = np.random.default_rng(8)
    logits, targets, il, tl = ctc_case(rng, T=7, N=3, C=4, blank=2, max_target=3)
    il = np.maximum(il, 2 * tl + 1)  # every alignment possible: a finite loss to difference
    x = convert(logits, pith, "float64", True)
    tg = idx(pith, targets.tolist())
    for reduction in REDUCTIONS:
        assert gradcheck(lambda a: F.ctc_loss(a.log_softmax(-1), tg, il.tolist(), tl.tolist(),
                                              blank=2, reduction=reduction), (x,))


def test_ctc_loss_gradient_is_parallel_safe():
    # A batch big enough for the kernels to split it across threads gives the same loss
    # and gradient as one sample at a time.
    rng = np.random.default_rng(12)
    logits, targets, il, tl = ctc_case(rng, T=40, N=64, C=8, blank=0, max_target=12)
    x = convert(logits, pith, "float32", True)
    loss = F.ctc_loss(x.log_softmax(-1), idx(pith, targets.tolist()), il.tolist(),
                      tl.tolist(), reduction="sum")
    loss.backward()
    for n in (0, 31, 63):
        xn = convert(logits[:, n:n + 1], pith, "float32", True)
        one = F.ctc_loss(xn.log_softmax(-1), idx(pith, targets[n:n + 1].tolist()),
                         [int(il[n])], [int(tl[n])], reduction="sum")
        one.backward()
        np.testing.assert_allclose(array(x.grad)[:, n:n + 1], array(xn.grad), rtol=1e-6,
                                   atol=1e-7)


CTC_ERRORS = {
    "input_length_above_T": ([[6, 4], [2, 1]], {}),
    "negative_input_length": ([[-1, 4], [2, 1]], {}),
    "negative_target_length": ([[5, 4], [-1, 1]], {}),
    "too_many_lengths": ([[5, 4, 3], [2, 1, 1]], {}),
    "target_length_above_padding": ([[5, 4], [3, 1]], {}),
    "blank_out_of_range": ([[5, 4], [2, 1]], {"blank": 4}),
    "bad_reduction": ([[5, 4], [2, 1]], {"reduction": "x"}),
}


@pytest.mark.parametrize("name", sorted(CTC_ERRORS))
def test_ctc_loss_errors_match_torch(name):
    (il, tl), kwargs = CTC_ERRORS[name]

    def call(lib, f):
        lp = t(lib, 5, 2, 4).log_softmax(-1)
        return f.ctc_loss(lp, idx(lib, [[1, 2], [3, 3]]), il, tl, **kwargs)
    raises_like_torch(call)


def test_ctc_loss_errors_of_shapes_match_torch():
    raises_like_torch(lambda lib, f: f.ctc_loss(t(lib, 5), idx(lib, [1]), [5], [1]))
    raises_like_torch(lambda lib, f: f.ctc_loss(t(lib, 5, 2, 4), idx(lib, [1, 2, 3]), [5, 5],
                                                [2, 2]))
    raises_like_torch(lambda lib, f: f.ctc_loss(t(lib, 5, 2, 4), idx(lib, [1, 2, 3]),
                                                t(lib, 2), t(lib, 2)))
    for lib, f in ((torch, TF), (pith, F)):  # a tensor and a list: the binder's TypeError
        with pytest.raises(TypeError, match="invalid combination of arguments"):
            f.ctc_loss(t(lib, 5, 2, 4), idx(lib, [1, 2, 3]), idx(lib, [5, 5]), [2, 1])


def test_ctc_loss_refuses_a_target_that_is_not_a_label():
    # PyTorch's CPU kernel reads out of bounds there; pith raises IndexError.
    lp = t(pith, 5, 2, 4).log_softmax(-1)
    with pytest.raises(IndexError, match="out of the label range"):
        F.ctc_loss(lp, idx(pith, [[1, 4], [3, 3]]), [5, 4], [2, 1])
    with pytest.raises(IndexError, match="out of the label range"):
        F.ctc_loss(lp, idx(pith, [[1, -2], [3, 3]]), [5, 4], [2, 1])


def test_ctc_loss_node_and_no_double_backward():
    lp = t(pith, 5, 2, 4).log_softmax(-1).detach().requires_grad_(True)
    nll, _ = pith.ops.pith._ctc_loss(lp, idx(pith, [[1, 2], [3, 3]]), [5, 4], [2, 1], 0, False)
    assert nll.grad_fn.name() == "CtcLossBackward0"
    (grad,) = pith.autograd.grad(nll.sum(), lp, create_graph=True)
    assert not grad.requires_grad


# ---- modules ---------------------------------------------------------------------------------

TORCH_LOSSES = sorted(name for name in torch.nn.modules.loss.__all__ if name.endswith("Loss"))


def test_every_torch_loss_module_exists():
    assert [name for name in torch.nn.modules.loss.__all__ if not hasattr(nn, name)] == []
    assert issubclass(nn.NLLLoss2d, nn.NLLLoss)


def _module_data(rng):
    return {
        "x": rng.normal(size=(6, 4)),
        "classes": rng.integers(0, 5, 6),
        "signs": sign(rng, 6, 5),
        "signs6": sign(rng, 6),
        "probs": rng.uniform(0.05, 0.95, (6, 5)),
        "reals": rng.normal(size=(6, 5)),
        "positive": rng.uniform(0.5, 2, (6, 5)),
        "labels": np.array([[1, 3, -1, 0, 0]] * 3 + [[0, 1, 2, 3, 4]] * 3),
        "weight": rng.uniform(0.5, 2.0, 5),
        "ctc_targets": rng.integers(1, 5, (2, 2)),
    }


# name -> (constructor keyword arguments, out features, forward(lib, f, module, out, data))
MODULES = {
    "L1Loss": ({}, 5, lambda lib, f, m, o, d: m(o, d["reals"])),
    "MSELoss": ({}, 5, lambda lib, f, m, o, d: m(o, d["reals"])),
    "NLLLoss": ({"weight": "@weight"}, 5,
                lambda lib, f, m, o, d: m(o.log_softmax(1), d["classes"])),
    "CrossEntropyLoss": ({"label_smoothing": 0.1}, 5, lambda lib, f, m, o, d: m(o, d["classes"])),
    "BCELoss": ({"weight": "@weight"}, 5, lambda lib, f, m, o, d: m(o.sigmoid(), d["probs"])),
    "BCEWithLogitsLoss": ({"pos_weight": "@weight"}, 5, lambda lib, f, m, o, d: m(o, d["probs"])),
    "KLDivLoss": ({"reduction": "batchmean"}, 5,
                  lambda lib, f, m, o, d: m(o.log_softmax(1), d["probs"])),
    "PoissonNLLLoss": ({}, 5, lambda lib, f, m, o, d: m(o, d["positive"])),
    "GaussianNLLLoss": ({}, 5, lambda lib, f, m, o, d: m(o, d["reals"], d["positive"])),
    "HingeEmbeddingLoss": ({"margin": 0.5}, 5, lambda lib, f, m, o, d: m(o, d["signs"])),
    "MultiLabelMarginLoss": ({}, 5, lambda lib, f, m, o, d: m(o, d["labels"])),
    "SmoothL1Loss": ({"beta": 0.5}, 5, lambda lib, f, m, o, d: m(o, d["reals"])),
    "HuberLoss": ({"delta": 0.5}, 5, lambda lib, f, m, o, d: m(o, d["reals"])),
    "SoftMarginLoss": ({}, 5, lambda lib, f, m, o, d: m(o, d["signs"])),
    "MultiLabelSoftMarginLoss": ({}, 5, lambda lib, f, m, o, d: m(o, d["probs"])),
    "CosineEmbeddingLoss": ({"margin": 0.2}, 6,
                            lambda lib, f, m, o, d: m(o[:, :3], o[:, 3:], d["signs6"])),
    "MarginRankingLoss": ({"margin": 0.1}, 2,
                          lambda lib, f, m, o, d: m(o[:, 0], o[:, 1], d["signs6"])),
    "MultiMarginLoss": ({"p": 2, "weight": "@weight"}, 5,
                        lambda lib, f, m, o, d: m(o, d["classes"])),
    "TripletMarginLoss": ({"margin": 2.0, "swap": True}, 6,
                          lambda lib, f, m, o, d: m(o[:, :2], o[:, 2:4], o[:, 4:])),
    "TripletMarginWithDistanceLoss": ({"margin": 2.0}, 6,
                                      lambda lib, f, m, o, d: m(o[:, :2], o[:, 2:4], o[:, 4:])),
    "CTCLoss": ({"blank": 0}, 5, lambda lib, f, m, o, d: m(
        o.reshape(3, 2, 5).log_softmax(2), d["ctc_targets"], [3, 2], [2, 1])),
}


@pytest.mark.parametrize("name", TORCH_LOSSES)
def test_every_loss_module_trains_a_linear_layer_like_torch(name):
    """One SGD step by hand (w -= lr * w.grad) of a Linear layer through the loss, from the
    same weights in both libraries: the loss and the new weights match torch's."""
    rng = np.random.default_rng(abs(hash(name)) % 1000)
    data = _module_data(rng)
    results = []
    for lib in (torch, pith):
        d = {k: convert(v, lib, "float32") for k, v in data.items()}
        if name == "LinearCrossEntropyLoss":
            kwargs = {"bias": True, "label_smoothing": 0.1}
            module = getattr(lib.nn, name)(4, 5, **kwargs)
            layer = module.linear
        else:
            kwargs, out_features, forward = MODULES[name]
            kwargs = {k: d[v[1:]] if isinstance(v, str) and v[0] == "@" else v
                      for k, v in kwargs.items()}
            module = getattr(lib.nn, name)(**kwargs)
            layer = lib.nn.Linear(4, out_features)
        with lib.no_grad():
            w = np.linspace(-0.5, 0.5, layer.weight.numel()).reshape(tuple(layer.weight.shape))
            layer.weight.copy_(convert(w, lib, "float32"))
            layer.bias.copy_(convert(np.linspace(-0.1, 0.2, layer.bias.numel()), lib,
                                     "float32"))
        if name == "LinearCrossEntropyLoss":
            loss = module(d["x"], d["classes"])
        else:
            loss = forward(lib, None, module, layer(d["x"]), d)
        loss.backward()
        with lib.no_grad():
            for p in (layer.weight, layer.bias):
                p -= 0.1 * p.grad
        results.append((loss, layer.weight, layer.bias))
    (expected, *expected_params), (got, *got_params) = results
    assert_close(got, expected, "float32", f"{name} loss")
    for g, e in zip(got_params, expected_params):
        assert_close(g, e, "float32", f"{name} parameters after one step")


def test_module_arguments_match_torch():
    raises_like_torch(lambda lib, f: lib.nn.MultiMarginLoss(p=3))
    raises_like_torch(lambda lib, f: lib.nn.MultiMarginLoss(weight=t(lib, 2, 2)))
    raises_like_torch(lambda lib, f: lib.nn.TripletMarginLoss(margin=0))
    raises_like_torch(lambda lib, f: lib.nn.TripletMarginWithDistanceLoss(margin=-1.0))
    raises_like_torch(lambda lib, f: lib.nn.LinearCrossEntropyLoss(4, 5, weight=t(lib, 4)))
    raises_like_torch(lambda lib, f: lib.nn.LinearCrossEntropyLoss(4, 5, label_smoothing=2))
    for name in TORCH_LOSSES:
        if name == "LinearCrossEntropyLoss":
            continue
        module, reference = getattr(nn, name)(), getattr(torch.nn, name)()
        assert module.reduction == reference.reduction, name
        for attribute in ("blank", "zero_infinity", "margin", "p", "eps", "swap", "beta",
                          "delta", "log_input", "full", "log_target", "ignore_index",
                          "label_smoothing"):
            if hasattr(reference, attribute):
                assert getattr(module, attribute) == getattr(reference, attribute), \
                    (name, attribute)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert nn.KLDivLoss(size_average=False).reduction == "sum"
    assert len(caught) == 1
