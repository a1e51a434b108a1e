"""pith.optim against torch.optim: every optimizer over 50 steps on parameters of mixed shapes
(one transposed, one that never gets a gradient) in two param groups with different options
and weight decay, parameters and every state tensor compared; on both paths (the default,
which is the multi-tensor kernel pith._fused_<name>_ when the build has it, and foreach=False,
torch's per-parameter formula with pith ops). State dicts cross between the libraries through
torch.save/pith.load and pith.save/torch.load and the runs continue identically. Bad input
gets torch's errors. The tests of the base class (hooks, pickling, state_dict layout) are in
test_optim_base.py.

Tolerances: float32 rtol 1e-5, atol 1e-6 over 50 steps; float64 rtol 1e-10, atol 1e-12.
pith composes torch's addcmul_/addcdiv_/lerp_ from separate ops and torch's CPU kernels may
contract a multiply-add into an FMA, so the last bit of an update can differ; over 50 steps
float32 stays within a few ulps of torch (measured: at most 1e-6 absolute)."""
import copy
import pathlib

import pytest
import torch

import pith
import pith.optim

F32 = {"rtol": 1e-5, "atol": 1e-6}
F64 = {"rtol": 1e-10, "atol": 1e-12}
TOL = {torch.float32: F32, torch.float64: F64}
PDTYPE = {torch.float32: pith.float32, torch.float64: pith.float64}

SHAPES = [(4, 3), (5,), (2, 3, 2), (3, 4), (1,)]
NO_GRAD = 4  # the index of the parameter that never gets a gradient


def to_pith(t):
    return pith.from_dlpack(t.detach().clone())


def to_torch(p):
    return torch.from_dlpack(p.detach()).clone()


def assert_close(p, t, tol):
    assert isinstance(p, pith.Tensor), type(p)
    assert p.shape == tuple(t.shape) and str(p.dtype) == str(t.dtype).replace("torch", "pith")
    torch.testing.assert_close(to_torch(p), t.detach(), **tol)


# (name, constructor options, the second group's own options)
CASES = [
    ("SGD", {"lr": 0.1}, {"lr": 0.05}),
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}, {"dampening": 0.5}),
    ("SGD", {"lr": 0.05, "momentum": 0.9, "nesterov": True, "maximize": True},
     {"weight_decay": 0.2}),
    ("Adam", {"lr": 0.01}, {"lr": 0.02, "betas": (0.8, 0.99)}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1, "amsgrad": True}, {"maximize": True}),
    ("AdamW", {"lr": 0.01}, {"weight_decay": 0.5, "amsgrad": True}),
    ("RMSprop", {"lr": 0.01}, {"alpha": 0.9, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "momentum": 0.9, "centered": True}, {"weight_decay": 0.1,
                                                                  "maximize": True}),
    ("Adagrad", {"lr": 0.1, "lr_decay": 0.01, "initial_accumulator_value": 0.1},
     {"weight_decay": 0.1}),
    ("Adadelta", {"lr": 1.0}, {"rho": 0.8, "weight_decay": 0.1}),
    ("Adamax", {"lr": 0.01}, {"betas": (0.8, 0.99), "weight_decay": 0.1}),
    ("NAdam", {"lr": 0.01}, {"weight_decay": 0.1, "momentum_decay": 8e-3}),
    ("NAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
     {"maximize": True}),
    ("RAdam", {"lr": 0.01}, {"weight_decay": 0.1}),
    ("RAdam", {"lr": 0.01, "weight_decay": 0.1, "decoupled_weight_decay": True},
     {"betas": (0.8, 0.99)}),
]
PATHS = {"default": {}, "foreach_false": {"foreach": False}}


def case_id(case):
    name, options, group = case
    return name + "-" + "-".join(f"{k}={v}" for k, v in {**options, **group}.items())


class Pair:
    """The same parameters and optimizer in torch and in pith."""

    def __init__(self, name, options, group_options, dtype=torch.float32, path=None, seed=0):
        gen = torch.Generator().manual_seed(seed)
        self.dtype = dtype
        self.tparams = []
        for i, shape in enumerate(SHAPES):
            t = torch.randn(shape, generator=gen, dtype=dtype)
            if i == 0:
                t = t.t().contiguous().t()  # a transposed (non-contiguous) parameter
            self.tparams.append(t.requires_grad_())
        self.pparams = []
        for t in self.tparams:
            p = to_pith(t)
            if not t.is_contiguous():
                p = pith.empty(tuple(reversed(p.shape)), dtype=p.dtype).t().copy_(p)
            self.pparams.append(p.requires_grad_())
        assert self.pparams[0].stride() == self.tparams[0].stride()
        self.name, self.options, self.group_options = name, options, group_options
        self.path = path or {}
        self.topt = self.make(torch.optim, self.tparams, {})
        self.popt = self.make(pith.optim, self.pparams, self.path)
        self.gen = gen

    def make(self, module, params, path):
        groups = [{"params": params[:2]}, {"params": params[2:], **self.group_options}]
        return getattr(module, self.name)(groups, **self.options, **path)

    def set_grads(self):
        for i, (t, p) in enumerate(zip(self.tparams, self.pparams)):
            if i == NO_GRAD:
                continue
            g = torch.randn(t.shape, generator=self.gen, dtype=self.dtype)
            t.grad = g.clone()
            p.grad = to_pith(g)

    def steps(self, n):
        for _ in range(n):
            self.set_grads()
            self.topt.step()
            self.popt.step()

    def compare(self, tol=None):
        tol = tol or TOL[self.dtype]
        for t, p in zip(self.tparams, self.pparams):
            assert_close(p, t, tol)
        compare_states(self.popt, self.topt, self.pparams, self.tparams, tol)


def compare_states(popt, topt, pparams, tparams, tol):
    for t, p in zip(tparams, pparams):
        tstate, pstate = topt.state.get(t, {}), popt.state.get(p, {})
        assert sorted(pstate) == sorted(tstate)
        for key, value in tstate.items():
            if isinstance(value, torch.Tensor):
                if value.dim() == 0:  # 'step' (exact) and 'mu_product'
                    assert pstate[key].dim() == 0 and str(pstate[key].dtype).endswith(
                        str(value.dtype).split(".")[1])
                    assert pstate[key].item() == pytest.approx(value.item(), rel=1e-6)
                else:
                    assert_close(pstate[key], value, tol)
            else:
                assert pstate[key] == value


@pytest.mark.parametrize("path", list(PATHS), ids=list(PATHS))
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_50_steps_match_torch(case, dtype, path):
    pair = Pair(*case, dtype=dtype, path=PATHS[path])
    pair.steps(50)
    pair.compare()


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["float32", "float64"])
@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_the_kernel_and_the_formula_give_the_same_bits(case, dtype):
    # The default path (one pith._fused_<name>_ call per group) against foreach=False
    # (torch's per-parameter formula with pith ops): equal, not close.
    if not hasattr(pith, "_fused_sgd_"):
        pytest.skip("this build has no optimizer kernels")
    kernel = Pair(*case, dtype=dtype)
    formula = Pair(*case, dtype=dtype, path={"foreach": False})
    for _ in range(20):
        kernel.set_grads()
        formula.set_grads()
        kernel.popt.step()
        formula.popt.step()
    def same(a, b):
        return torch.equal(to_torch(a), to_torch(b))

    for a, b in zip(kernel.pparams, formula.pparams):
        assert same(a, b)
        state = formula.popt.state.get(b, {})
        assert sorted(kernel.popt.state.get(a, {})) == sorted(state)
        for key, value in state.items():
            assert same(kernel.popt.state[a][key], value), key


FUSED = [c for c in CASES if c[0] in ("SGD", "Adam", "AdamW", "Adagrad")]


@pytest.mark.parametrize("case", FUSED, ids=[case_id(c) for c in FUSED])
def test_fused_true_matches_torch_and_keeps_a_float32_step(case):
    # Against torch's default: torch 2.13's own fused CPU kernels pair a transposed
    # parameter's elements with a contiguous gradient's in memory order (a torch bug: its
    # fused SGD on a transposed parameter differs from its for-loop by 0.3 after 3 steps).
    pair = Pair(*case, dtype=torch.float64, path={"fused": True})
    pair.steps(20)
    pair.compare()
    for state in pair.popt.state.values():
        if "step" in state:
            assert state["step"].dtype == pith.float32


@pytest.mark.parametrize("name, options", [
    ("SGD", {"lr": 0.1, "momentum": 0.9, "weight_decay": 0.1}),
    ("Adam", {"lr": 0.01, "weight_decay": 0.1}),
    ("RMSprop", {"lr": 0.01, "centered": True}),
    ("Adagrad", {"lr": 0.1}),
    ("NAdam", {"lr": 0.01}),
    ("RAdam", {"lr": 0.01}),
    ("Adadelta", {"lr": 1.0}),
    ("AdamW", {"lr": 0.01, "amsgrad": True}),
])
def test_differentiable_steps_carry_gradients_as_torch(name, options):
    # differentiable=True records the update: the parameters are non-leaf clones of w, and
    # the gradient of their sum after three steps reaches w through the updates.
    results = []
    for lib, to_lib in ((torch, lambda t: t.clone()), (pith, to_pith)):
        gen = torch.Generator().manual_seed(3)
        w = to_lib(torch.randn(4, 3, generator=gen, dtype=torch.float64)).requires_grad_()
        grads = [to_lib(torch.randn(4, 3, generator=gen, dtype=torch.float64))
                 for _ in range(3)]
        p = w.clone()
        opt = getattr(lib.optim, name)([p], differentiable=True, **options)
        for g in grads:
            p.grad = g
            opt.step()
        p.sum().backward()
        results.append((p.detach(), w.grad))
    (tp, tg), (pp, pg) = results
    assert_close(pp, tp, F64)
    # The gradient: pith composes lerp_/addcmul_/addcdiv_ from separate ops, whose backward
    # rounds differently from torch's fused derivatives (g - g*w against g*(1 - w)); through
    # the division by sqrt(exp_avg_sq), small after a few steps, the last-bit differences
    # grow to 1e-8 relative by the third step (1e-10 at the second, 0 at the first).
    assert_close(pg, tg, {"rtol": 1e-6, "atol": 1e-9})


def test_differentiable_adamax_runs_torchs_formula():
    # torch's own differentiable Adamax cannot be differentiated through (its in-place
    # mul_ on exp_inf invalidates a saved tensor), so only the update is compared.
    results = []
    for lib, to_lib in ((torch, lambda t: t.clone()), (pith, to_pith)):
        gen = torch.Generator().manual_seed(3)
        w = to_lib(torch.randn(4, 3, generator=gen, dtype=torch.float64)).requires_grad_()
        p = w.clone()
        opt = lib.optim.Adamax([p], differentiable=True, lr=0.01)
        for _ in range(3):
            p.grad = to_lib(torch.randn(4, 3, generator=gen, dtype=torch.float64))
            opt.step()
        results.append(p.detach())
    assert_close(results[1], results[0], F64)


def test_the_step_state_is_a_0_dim_float32_tensor_as_torch():
    pair = Pair("Adam", {"lr": 0.01}, {})
    pair.steps(3)
    step = pair.popt.state[pair.pparams[0]]["step"]
    assert step.dim() == 0 and step.dtype == pith.float32 and step.item() == 3.0
    assert pair.pparams[NO_GRAD] not in pair.popt.state  # no gradient, no state


def test_sgd_momentum_buffer_exists_only_after_a_step():
    pair = Pair("SGD", {"lr": 0.1, "momentum": 0.9}, {})
    assert len(pair.popt.state) == 0
    pair.steps(1)
    assert sorted(pair.popt.state[pair.pparams[1]]) == ["momentum_buffer"]
    pair.compare()


def test_params_added_later_get_their_state_and_match_torch():
    pair = Pair("Adam", {"lr": 0.01}, {})
    pair.steps(5)
    extra_t = torch.randn(3, generator=pair.gen).requires_grad_()
    extra_p = to_pith(extra_t).requires_grad_()
    pair.topt.add_param_group({"params": [extra_t], "lr": 0.03})
    pair.popt.add_param_group({"params": [extra_p], "lr": 0.03})
    pair.tparams.append(extra_t)
    pair.pparams.append(extra_p)
    pair.steps(5)
    pair.compare()


# ---- state dicts across the libraries ----

@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_a_torch_state_dict_loads_into_pith_and_continues_identically(case, tmp_path):
    pair = Pair(*case)
    pair.steps(10)
    torch.save(pair.topt.state_dict(), tmp_path / "optim.pt")
    # A fresh pith optimizer on the current parameters, its state from torch's file.
    fresh = pair.make(pith.optim, pair.pparams, {})
    fresh.load_state_dict(pith.load(tmp_path / "optim.pt"))
    pair.popt = fresh
    compare_states(pair.popt, pair.topt, pair.pparams, pair.tparams, F32)
    pair.steps(10)
    pair.compare()


@pytest.mark.parametrize("case", CASES, ids=[case_id(c) for c in CASES])
def test_a_pith_state_dict_loads_into_torch_and_continues_identically(case, tmp_path):
    pair = Pair(*case)
    pair.steps(10)
    pith.save(pair.popt.state_dict(), tmp_path / "optim.pt")
    fresh = pair.make(torch.optim, pair.tparams, {})
    fresh.load_state_dict(torch.load(tmp_path / "optim.pt"))
    pair.topt = fresh
    pair.steps(10)
    pair.compare()


def test_state_dict_layout_is_torchs():
    pair = Pair("SGD", {"lr": 0.1, "momentum": 0.9}, {"lr": 0.01})
    pair.steps(2)
    tsd, psd = pair.topt.state_dict(), pair.popt.state_dict()
    assert psd["param_groups"] == tsd["param_groups"]
    assert sorted(psd["state"]) == sorted(tsd["state"]) == [0, 1, 2, 3]
    for index in tsd["state"]:
        assert sorted(psd["state"][index]) == sorted(tsd["state"][index])


def test_load_state_dict_casts_state_to_the_param_dtype_but_not_step():
    pair = Pair("Adam", {"lr": 0.01}, {}, dtype=torch.float64)
    pair.steps(2)
    sd = pair.topt.state_dict()
    for state in sd["state"].values():  # a float32 checkpoint for float64 parameters
        state["exp_avg"] = state["exp_avg"].float()
    path = pathlib.Path(pytest.importorskip("tempfile").mkdtemp()) / "sd.pt"
    torch.save(sd, path)
    fresh = pair.make(pith.optim, pair.pparams, {})
    fresh.load_state_dict(pith.load(path))
    state = fresh.state[pair.pparams[0]]
    assert state["exp_avg"].dtype == pith.float64
    assert state["step"].dtype == pith.float32


# ---- LBFGS ----

def lbfgs_problem(module, to_lib, dtype):
    gen = torch.Generator().manual_seed(1)
    X = torch.randn(40, 4, generator=gen, dtype=dtype)
    y = torch.randn(40, generator=gen, dtype=dtype)
    w = torch.zeros(4, dtype=dtype)
    b = torch.zeros(1, dtype=dtype)
    X, y, w, b = (to_lib(t) for t in (X, y, w, b))
    w.requires_grad_()
    b.requires_grad_()
    return X, y, w, b


@pytest.mark.parametrize("line_search_fn", [None, "strong_wolfe"])
def test_lbfgs_matches_torch_in_float64(line_search_fn):
    results = []
    for module, to_lib in ((torch, lambda t: t.clone()), (pith, to_pith)):
        X, y, w, b = lbfgs_problem(module, to_lib, torch.float64)
        opt = module.optim.LBFGS([w, b], lr=0.5, history_size=4, max_iter=6,
                                 line_search_fn=line_search_fn)

        def closure():
            opt.zero_grad()
            loss = ((X @ w + b - y) ** 2).mean() + (w ** 4).sum()
            loss.backward()
            return loss

        losses = [opt.step(closure).item() for _ in range(3)]
        state = opt.state[w]
        results.append((losses, w.detach(), b.detach(), state))
    (tl, tw, tb, ts), (pl, pw, pb, ps) = results
    assert pl == pytest.approx(tl, rel=1e-12)
    assert_close(pw, tw, F64)
    assert_close(pb, tb, F64)
    assert sorted(ps) == sorted(ts)
    for key in ("func_evals", "n_iter"):
        assert ps[key] == ts[key]
    assert len(ps["old_dirs"]) == len(ts["old_dirs"])
    for key in ("d", "prev_flat_grad"):
        assert_close(ps[key], ts[key], F64)
    assert ps["prev_loss"] == pytest.approx(ts["prev_loss"], rel=1e-12)


def test_an_lbfgs_state_dict_crosses_from_torch_and_continues_identically(tmp_path):
    runs = []
    for module, to_lib in ((torch, lambda t: t.clone()), (pith, to_pith)):
        X, y, w, b = lbfgs_problem(module, to_lib, torch.float64)
        runs.append((module, X, y, w, b))

    def make(module, w, b):
        return module.optim.LBFGS([w, b], lr=0.5, history_size=4, max_iter=3,
                                  line_search_fn="strong_wolfe")

    def closure_of(opt, X, y, w, b):
        def closure():
            opt.zero_grad()
            loss = ((X @ w + b - y) ** 2).mean() + (w ** 4).sum()
            loss.backward()
            return loss
        return closure

    (_, tX, ty, tw, tb), (_, pX, py, pw, pb) = runs
    topt = make(torch, tw, tb)
    topt.step(closure_of(topt, tX, ty, tw, tb))
    with pith.no_grad():  # the pith run starts where torch's first step left off
        pw.copy_(to_pith(tw))
        pb.copy_(to_pith(tb))
    torch.save(topt.state_dict(), tmp_path / "lbfgs.pt")
    popt = make(pith, pw, pb)
    popt.load_state_dict(pith.load(tmp_path / "lbfgs.pt"))
    for _ in range(2):
        topt.step(closure_of(topt, tX, ty, tw, tb))
        popt.step(closure_of(popt, pX, py, pw, pb))
    assert_close(pw, tw.detach(), F64)
    assert popt.state[pw]["n_iter"] == topt.state[tw]["n_iter"]


def test_lbfgs_first_step_matches_torch_in_float32():
    results = []
    for module, to_lib in ((torch, lambda t: t.clone()), (pith, to_pith)):
        X, y, w, b = lbfgs_problem(module, to_lib, torch.float32)
        opt = module.optim.LBFGS([w, b], lr=0.5, max_iter=4, line_search_fn="strong_wolfe")

        def closure():
            opt.zero_grad()
            loss = ((X @ w + b - y) ** 2).mean()
            loss.backward()
            return loss

        opt.step(closure)
        results.append(w.detach())
    assert_close(results[1], results[0], {"rtol": 1e-5, "atol": 1e-6})


def test_lbfgs_step_needs_a_closure():
    w = pith.zeros(2, requires_grad=True)
    opt = pith.optim.LBFGS([w])
    with pytest.raises(TypeError, match="missing 1 required positional argument: 'closure'"):
        opt.step()


def test_lbfgs_closure_that_returns_no_loss_raises_torchs_error():
    messages = []
    for module in (torch, pith):
        w = module.zeros(2, requires_grad=True)
        opt = module.optim.LBFGS([w])
        with pytest.raises(TypeError) as info:
            opt.step(lambda: None)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_lbfgs_refuses_param_groups():
    with pytest.raises(ValueError, match="LBFGS doesn't support per-parameter options"):
        pith.optim.LBFGS([{"params": [pith.zeros(1, requires_grad=True)]},
                          {"params": [pith.zeros(1, requires_grad=True)]}])


def test_lbfgs_refuses_an_unknown_line_search():
    w = pith.ones(2, requires_grad=True)
    opt = pith.optim.LBFGS([w], line_search_fn="armijo")

    def closure():
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with pytest.raises(RuntimeError, match="only 'strong_wolfe' is supported"):
        opt.step(closure)


# ---- errors ----

NAMES = ["SGD", "Adam", "AdamW", "RMSprop", "Adagrad", "Adadelta", "Adamax", "NAdam", "RAdam",
         "LBFGS"]


def error_of(module, make):
    try:
        make(module)
    except Exception as e:  # noqa: BLE001 (the oracle's exception, whatever it is)
        return type(e).__name__, str(e)
    return None


def assert_same_error(make):
    expected = error_of(torch, make)
    assert expected is not None
    assert error_of(pith, make) == expected


@pytest.mark.parametrize("name", NAMES)
def test_negative_lr_raises_torchs_error(name):
    assert_same_error(lambda m: getattr(m.optim, name)([m.zeros(2, requires_grad=True)],
                                                       lr=-1))


@pytest.mark.parametrize("name", ["Adam", "AdamW", "Adamax", "NAdam", "RAdam"])
@pytest.mark.parametrize("betas", [(1.0, 0.999), (-0.1, 0.999), (0.9, 1.0), (0.9, -0.5)])
def test_betas_out_of_range_raise_torchs_error(name, betas):
    assert_same_error(lambda m: getattr(m.optim, name)([m.zeros(2, requires_grad=True)],
                                                       betas=betas))


@pytest.mark.parametrize("name, options", [
    ("SGD", {"momentum": -1}), ("SGD", {"weight_decay": -1}),
    ("SGD", {"nesterov": True}), ("SGD", {"nesterov": True, "momentum": 0.9, "dampening": 0.1}),
    ("Adam", {"eps": -1}), ("Adam", {"weight_decay": -1}), ("Adam", {"betas": (0.9, 1)}),
    ("RMSprop", {"alpha": -1}), ("RMSprop", {"momentum": -1}), ("RMSprop", {"eps": -1}),
    ("Adagrad", {"lr_decay": -1}), ("Adagrad", {"initial_accumulator_value": -1}),
    ("Adadelta", {"rho": 1.5}), ("NAdam", {"momentum_decay": -1}),
    ("SGD", {"fused": True, "differentiable": True}), ("Adam", {"fused": True, "foreach": True}),
])
def test_bad_options_raise_torchs_error(name, options):
    assert_same_error(lambda m: getattr(m.optim, name)([m.zeros(2, requires_grad=True)],
                                                       **options))


def test_a_param_in_two_groups_raises_torchs_error():
    def make(m):
        w = m.zeros(2, requires_grad=True)
        m.optim.SGD([{"params": [w]}, {"params": [w]}], lr=0.1)
    assert_same_error(make)


def test_a_param_twice_in_one_group_warns_as_torch():
    w = pith.zeros(2, requires_grad=True)
    with pytest.warns(UserWarning, match="duplicate parameters"):
        pith.optim.SGD([w, w], lr=0.1)


@pytest.mark.parametrize("make", [
    lambda m: m.optim.SGD(m.zeros(2, requires_grad=True), lr=0.1),  # a Tensor, not a list
    lambda m: m.optim.SGD([], lr=0.1),
    lambda m: m.optim.SGD([{"params": {m.zeros(2, requires_grad=True)}}], lr=0.1),
    lambda m: m.optim.SGD([m.zeros(2, requires_grad=True) * 2], lr=0.1),  # non-leaf
    lambda m: m.optim.SGD([1.0], lr=0.1),
    lambda m: m.optim.SGD([("a", m.zeros(2, requires_grad=True)),
                           m.zeros(2, requires_grad=True)], lr=0.1),
], ids=["tensor", "empty", "set", "non_leaf", "not_a_tensor", "names_missing"])
def test_bad_params_raise_torchs_error(make):
    assert_same_error(make)


def test_a_non_leaf_raises_cant_optimize_a_non_leaf_tensor():
    with pytest.raises(ValueError, match="can't optimize a non-leaf Tensor"):
        pith.optim.Adam([pith.zeros(2, requires_grad=True) + 1])


@pytest.mark.parametrize("name", ["Adam", "AdamW", "RMSprop", "Adadelta", "Adamax", "NAdam",
                                  "RAdam"])
def test_a_sparse_gradient_raises_torchs_error(name):
    # pith has no sparse layout; a Tensor subclass that says is_sparse stands for one.
    class Sparse(pith.Tensor):
        is_sparse = True

    t = torch.ones(3, requires_grad=True)
    t.grad = torch.ones(3).to_sparse()
    with pytest.raises(RuntimeError) as expected:
        getattr(torch.optim, name)([t], lr=0.1).step()
    p = pith.ones(3, requires_grad=True)
    p.grad = pith.ones(3).as_subclass(Sparse)
    with pytest.raises(RuntimeError) as got:
        getattr(pith.optim, name)([p], lr=0.1).step()
    assert str(got.value) == str(expected.value)


@pytest.mark.parametrize("name", ["SGD", "Adagrad"])
def test_a_sparse_gradient_where_torch_takes_one_raises_a_clear_error(name):
    class Sparse(pith.Tensor):
        is_sparse = True

    p = pith.ones(3, requires_grad=True)
    p.grad = pith.ones(3).as_subclass(Sparse)
    with pytest.raises(RuntimeError, match="sparse gradients"):
        getattr(pith.optim, name)([p], lr=0.1).step()


def test_a_tensor_lr_is_read_as_a_number():
    pair = Pair("SGD", {"lr": 0.1}, {})
    for opt, lib in ((pair.topt, torch), (pair.popt, pith)):
        for group in opt.param_groups:
            group["lr"] = lib.tensor(0.1)
    pair.steps(3)
    pair.compare()


def test_a_tensor_lr_that_requires_grad_is_refused_clearly():
    w = pith.ones(2, requires_grad=True)
    opt = pith.optim.SGD([w], lr=pith.tensor(0.1, requires_grad=True), foreach=False)
    w.grad = pith.ones(2)
    with pytest.raises(ValueError, match="a Tensor lr that requires grad is not supported"):
        opt.step()


@pytest.mark.parametrize("make", [
    lambda sd: sd["param_groups"].append(copy.deepcopy(sd["param_groups"][0])),
    lambda sd: sd["param_groups"][0]["params"].append(99),
], ids=["groups", "group_size"])
def test_load_state_dict_validation_raises_torchs_error(make):
    messages = []
    for module in (torch, pith):
        w = module.zeros(2, requires_grad=True)
        opt = module.optim.SGD([w], lr=0.1)
        sd = opt.state_dict()
        make(sd)
        with pytest.raises(ValueError) as info:
            opt.load_state_dict(sd)
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_functional_forms_exist_as_torch():
    import pith.optim.adam
    import pith.optim.sgd
    w = pith.ones(3)
    g = pith.full((3,), 0.5)
    bufs = [None]
    pith.optim.sgd.sgd([w], [g], bufs, weight_decay=0, momentum=0.9, lr=0.1, dampening=0,
                       nesterov=False, maximize=False)
    assert bufs[0] is not None
    assert w.tolist() == pytest.approx([0.95] * 3)


@pytest.mark.parametrize("name", ["SGD", "Adam"])
def test_half_precision_parameters_run_the_formula_and_match_torch(name):
    # The kernels update float32 and float64 only: a bfloat16 group takes the formula on
    # the default path. Tolerance: bfloat16's own (8 bits of mantissa).
    options = {"lr": 0.01, "momentum": 0.9} if name == "SGD" else {"lr": 0.01}
    gen = torch.Generator().manual_seed(5)
    t = torch.randn(4, 3, generator=gen).to(torch.bfloat16).requires_grad_()
    p = to_pith(t).requires_grad_()
    topt = getattr(torch.optim, name)([t], **options)
    popt = getattr(pith.optim, name)([p], **options)
    for _ in range(10):
        g = torch.randn(4, 3, generator=gen).to(torch.bfloat16)
        t.grad, p.grad = g.clone(), to_pith(g)
        topt.step()
        popt.step()
    assert_close(p, t, {"rtol": 1.6e-2, "atol": 1e-3})


@pytest.mark.parametrize("name", ["SGD", "Adam", "AdamW", "Adagrad"])
def test_grad_scale_and_found_inf_attributes_reach_the_kernel_as_torchs_fused(name):
    # GradScaler's protocol: the optimizer's grad_scale and found_inf attributes go to the
    # fused kernel; found_inf == 1 skips the step (torch's fused=True, contiguous params).
    if not hasattr(pith, "_fused_sgd_"):
        pytest.skip("this build has no optimizer kernels")
    results = []
    for lib, to_lib in ((torch, lambda t: t.clone()), (pith, to_pith)):
        gen = torch.Generator().manual_seed(7)
        w = to_lib(torch.randn(4, 3, generator=gen)).requires_grad_()
        opt = getattr(lib.optim, name)([w], lr=0.1, fused=True)
        values = []
        for found in (0.0, 1.0, 0.0):
            w.grad = to_lib(torch.randn(4, 3, generator=gen) * 8)
            opt.grad_scale = lib.tensor(8.0)
            opt.found_inf = lib.tensor(found)
            opt.step()
            values.append(w.detach().clone())
        results.append((values, opt.state[w].get("step")))
    (tv, tstep), (pv, pstep) = results
    for p, t in zip(pv, tv):
        assert_close(p, t, F32)
    if tstep is not None:
        assert pstep.item() == tstep.item() == 2.0


def test_grad_scale_on_the_formula_path_raises_torchs_error():
    messages = []
    for lib in (torch, pith):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.Adam([w], foreach=False)
        w.grad = lib.ones(2)
        opt.grad_scale = lib.tensor(2.0)
        with pytest.raises(AssertionError) as info:
            opt.step()
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_a_skipped_first_sgd_step_leaves_no_momentum_buffer():
    if not hasattr(pith, "_fused_sgd_"):
        pytest.skip("this build has no optimizer kernels")
    w = pith.ones(3, requires_grad=True)
    opt = pith.optim.SGD([w], lr=0.1, momentum=0.9)
    w.grad = pith.ones(3)
    opt.found_inf = pith.tensor(1.0)
    opt.step()
    assert w.tolist() == [1.0, 1.0, 1.0] and opt.state[w]["momentum_buffer"] is None
    opt.found_inf = pith.tensor(0.0)
    opt.step()
    assert opt.state[w]["momentum_buffer"].tolist() == [1.0, 1.0, 1.0]
