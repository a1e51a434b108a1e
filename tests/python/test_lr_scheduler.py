"""pith.optim.lr_scheduler against torch.optim.lr_scheduler: every scheduler over 50 steps
on three param groups, the lr (and momentum or betas, for the schedulers that cycle them) of
every group compared after every step; state_dict round trips, within pith and from torch's
scheduler into pith's; ReduceLROnPlateau on a sequence of metrics; the warnings and errors.

Tolerance: none. The schedulers compute in Python floats with the same arithmetic in the
same order as PyTorch's, so the learning rates are compared with ==.

The optimizer under the schedulers is the same small Optimizer subclass written against
each library's Optimizer (its step does nothing: a scheduler reads and writes only
param_groups), and, in test_schedule_on_pith_sgd_or_adam_matches_torch, pith's SGD or Adam
(float64 parameters, compared within 1e-10 at the end)."""
import pickle
import warnings

import numpy as np
import pytest

import pith
import pith.optim.lr_scheduler as pls

torch = pytest.importorskip("torch")
tls = torch.optim.lr_scheduler

LRS = (0.1, 0.05, 0.01)


def make_optimizer(lib, defaults, lrs=LRS):
    """An optimizer of lib (pith or torch) with one param group per lr of `lrs`, whose
    step only counts."""

    class Recorder(lib.optim.Optimizer):
        def __init__(self, params, **kw):
            super().__init__(params, dict(defaults, **kw))

        def step(self, closure=None):
            self.steps = getattr(self, "steps", 0) + 1

    groups = [{"params": [lib.nn.Parameter(lib.zeros(i + 1))], "lr": lr}
              for i, lr in enumerate(lrs)]
    return Recorder(groups)


SGD_DEFAULTS = {"lr": 0.1, "momentum": 0.9}
ADAM_DEFAULTS = {"lr": 1e-3, "betas": (0.9, 0.999)}

# name -> (optimizer defaults, scheduler factory(lr_scheduler module, optimizer)).
SCHEDULERS = {
    "LambdaLR": (SGD_DEFAULTS, lambda s, o: s.LambdaLR(o, lambda e: 0.95 ** e)),
    "LambdaLR_per_group": (SGD_DEFAULTS, lambda s, o: s.LambdaLR(
        o, [lambda e: 0.9 ** e, lambda e: 1 / (e + 1), lambda e: 1.0 + 0.1 * e])),
    "MultiplicativeLR": (SGD_DEFAULTS, lambda s, o: s.MultiplicativeLR(o, lambda e: 0.93)),
    "StepLR": (SGD_DEFAULTS, lambda s, o: s.StepLR(o, step_size=7, gamma=0.5)),
    "MultiStepLR": (SGD_DEFAULTS, lambda s, o: s.MultiStepLR(o, milestones=[5, 12, 12, 30],
                                                             gamma=0.3)),
    "ConstantLR": (SGD_DEFAULTS, lambda s, o: s.ConstantLR(o, factor=1 / 3, total_iters=10)),
    "LinearLR": (SGD_DEFAULTS, lambda s, o: s.LinearLR(o, start_factor=0.25, end_factor=0.9,
                                                       total_iters=20)),
    "ExponentialLR": (SGD_DEFAULTS, lambda s, o: s.ExponentialLR(o, gamma=0.93)),
    "PolynomialLR": (SGD_DEFAULTS, lambda s, o: s.PolynomialLR(o, total_iters=30, power=1.7)),
    "CosineAnnealingLR": (SGD_DEFAULTS, lambda s, o: s.CosineAnnealingLR(o, T_max=13,
                                                                         eta_min=1e-3)),
    "CosineAnnealingWarmRestarts": (SGD_DEFAULTS, lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=5, T_mult=2, eta_min=1e-4)),
    "CyclicLR_triangular2": (SGD_DEFAULTS, lambda s, o: s.CyclicLR(
        o, base_lr=0.01, max_lr=[0.1, 0.2, 0.3], step_size_up=7, mode="triangular2")),
    "CyclicLR_exp_range": (SGD_DEFAULTS, lambda s, o: s.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=4, step_size_down=9, mode="exp_range",
        gamma=0.97, base_momentum=0.7, max_momentum=0.95)),
    "CyclicLR_scale_fn": (SGD_DEFAULTS, lambda s, o: s.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=5, scale_fn=lambda x: 1 / (1 + x),
        scale_mode="iterations")),
    "CyclicLR_betas": (ADAM_DEFAULTS, lambda s, o: s.CyclicLR(
        o, base_lr=0.001, max_lr=0.01, step_size_up=6, base_momentum=0.8,
        max_momentum=0.9)),
    "OneCycleLR_cos_betas": (ADAM_DEFAULTS, lambda s, o: s.OneCycleLR(
        o, max_lr=[0.5, 0.2, 0.1], total_steps=60)),
    "OneCycleLR_linear_three_phase": (SGD_DEFAULTS, lambda s, o: s.OneCycleLR(
        o, max_lr=0.3, epochs=6, steps_per_epoch=10, anneal_strategy="linear",
        three_phase=True, div_factor=10.0, final_div_factor=100.0)),
    "SequentialLR": (SGD_DEFAULTS, lambda s, o: s.SequentialLR(
        o, [s.ConstantLR(o, factor=0.1, total_iters=5), s.ExponentialLR(o, gamma=0.9),
            s.CosineAnnealingLR(o, T_max=10)], milestones=[5, 20])),
    "ChainedScheduler": (SGD_DEFAULTS, lambda s, o: s.ChainedScheduler(
        [s.ConstantLR(o, factor=0.1, total_iters=10), s.ExponentialLR(o, gamma=0.9)])),
}

CYCLED_KEYS = ("lr", "momentum", "betas")


def group_values(optimizer):
    return [{k: g[k] for k in CYCLED_KEYS if k in g} for g in optimizer.param_groups]


def run_pair(name, steps=50):
    """(pith's, torch's) optimizers and schedulers of SCHEDULERS[name], compared after
    construction and after each of `steps` steps."""
    defaults, factory = SCHEDULERS[name]
    popt, topt = make_optimizer(pith, defaults), make_optimizer(torch, defaults)
    psched, tsched = factory(pls, popt), factory(tls, topt)
    assert group_values(popt) == group_values(topt)
    for step in range(steps):
        popt.step()
        topt.step()
        psched.step()
        tsched.step()
        assert group_values(popt) == group_values(topt), f"step {step}"
        assert psched.get_last_lr() == tsched.get_last_lr(), f"step {step}"
    return popt, topt, psched, tsched


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_schedule_matches_torch_over_50_steps(name):
    run_pair(name)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_state_dict_matches_torch(name):
    *_, psched, tsched = run_pair(name, steps=17)
    pstate, tstate = psched.state_dict(), tsched.state_dict()
    assert set(pstate) == set(tstate)
    for key in ("last_epoch", "_step_count", "base_lrs", "_last_lr"):
        if key in tstate:
            assert pstate[key] == tstate[key]


def continue_both(popt, psched, topt, tsched, steps):
    for step in range(steps):
        popt.step()
        topt.step()
        psched.step()
        tsched.step()
        assert group_values(popt) == group_values(topt), f"step {step}"


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_state_dict_round_trip_continues_identically(name):
    """A pith scheduler saved after 20 steps and loaded into a fresh one (with the saved
    optimizer state) continues as torch's does."""
    defaults, factory = SCHEDULERS[name]
    popt, topt, psched, tsched = run_pair(name, steps=20)
    state = pickle.loads(pickle.dumps(psched.state_dict()))
    groups = [dict(g) for g in popt.param_groups]
    popt2 = make_optimizer(pith, defaults)
    psched2 = factory(pls, popt2)
    for g, saved in zip(popt2.param_groups, groups):
        g.update({k: v for k, v in saved.items() if k != "params"})
    psched2.load_state_dict(state)
    assert psched2.get_last_lr() == tsched.get_last_lr()
    continue_both(popt2, psched2, topt, tsched, 25)


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_torch_state_dict_loads_into_pith(name):
    """torch's scheduler state after 20 steps, loaded into a pith scheduler whose optimizer
    has torch's param-group values, continues as torch's does."""
    defaults, factory = SCHEDULERS[name]
    popt, topt, psched, tsched = run_pair(name, steps=20)
    popt2 = make_optimizer(pith, defaults)
    psched2 = factory(pls, popt2)
    for g, tg in zip(popt2.param_groups, topt.param_groups):
        g.update({k: v for k, v in tg.items() if k != "params"})
    psched2.load_state_dict(tsched.state_dict())
    assert psched2.get_last_lr() == tsched.get_last_lr()
    assert getattr(psched2, "last_epoch", None) == getattr(tsched, "last_epoch", None)
    continue_both(popt2, psched2, topt, tsched, 25)


# ---- the base class --------------------------------------------------------------------------

def test_initial_lr_is_set_in_each_group_and_base_lrs_come_from_it():
    opt = make_optimizer(pith, SGD_DEFAULTS)
    sched = pls.StepLR(opt, 3)
    assert [g["initial_lr"] for g in opt.param_groups] == list(LRS)
    assert sched.base_lrs == list(LRS)
    assert sched.last_epoch == 0 and sched._step_count == 1


def test_resuming_with_last_epoch_needs_initial_lr_as_torch():
    for lib, sched in ((pith, pls), (torch, tls)):
        opt = make_optimizer(lib, SGD_DEFAULTS)
        with pytest.raises(KeyError, match=r"param 'initial_lr' is not specified in "
                                           r"param_groups\[0\] when resuming"):
            sched.StepLR(opt, 3, last_epoch=4)


def test_resuming_with_last_epoch_continues_the_schedule():
    popt, topt = make_optimizer(pith, SGD_DEFAULTS), make_optimizer(torch, SGD_DEFAULTS)
    for opt, lib in ((popt, pls), (topt, tls)):
        for g in opt.param_groups:
            g["initial_lr"] = g["lr"] * 2
        lib.ExponentialLR(opt, gamma=0.8, last_epoch=5)
    assert group_values(popt) == group_values(topt)


def test_a_non_optimizer_is_a_type_error_as_torch():
    for sched in (pls, tls):
        with pytest.raises(TypeError, match="^list is not an Optimizer$"):
            sched.StepLR([pith.zeros(1)], 3)


def test_lr_scheduler_alias_and_subclassing():
    assert issubclass(pls._LRScheduler, pls.LRScheduler)
    assert pls._LRScheduler.__name__ == "_LRScheduler"

    class Halving(pls.LRScheduler):
        def get_lr(self):
            return [base * 0.5 ** self.last_epoch for base in self.base_lrs]

    opt = make_optimizer(pith, SGD_DEFAULTS)
    sched = Halving(opt)
    opt.step()
    sched.step()
    assert [g["lr"] for g in opt.param_groups] == [lr * 0.5 for lr in LRS]


def record_warnings(fn):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        fn()
    return [str(w.message) for w in caught if w.category is UserWarning]


def test_step_before_optimizer_step_warns_as_torch():
    messages = {}
    for lib, sched in ((pith, pls), (torch, tls)):
        opt = make_optimizer(lib, SGD_DEFAULTS)
        s = sched.StepLR(opt, 3)
        messages[lib] = record_warnings(s.step)
    assert messages[pith] == messages[torch]
    assert len(messages[pith]) == 1
    assert messages[pith][0].startswith("Detected call of `lr_scheduler.step()` before "
                                        "`optimizer.step()`.")


def test_no_warning_when_optimizer_steps_first():
    opt = make_optimizer(pith, SGD_DEFAULTS)
    sched = pls.StepLR(opt, 3)

    def steps():
        opt.step()
        sched.step()

    assert record_warnings(steps) == []


def test_patched_optimizer_step_still_runs_and_records_the_call():
    opt = make_optimizer(pith, SGD_DEFAULTS)
    pls.StepLR(opt, 3)
    assert getattr(opt.step, "_wrapped_by_lr_sched", False)
    assert not getattr(opt, "_opt_called", False)
    opt.step()
    assert opt._opt_called and opt.steps == 1
    pls.ExponentialLR(opt, 0.5)  # a second scheduler does not wrap it again
    opt.step()
    assert opt.steps == 2


def test_overridden_optimizer_step_warns_as_torch():
    messages = {}
    for lib, sched in ((pith, pls), (torch, tls)):
        opt = make_optimizer(lib, SGD_DEFAULTS)
        s = sched.StepLR(opt, 3)
        opt.step = lambda: None
        messages[lib] = record_warnings(s.step)
    assert messages[pith] == messages[torch]
    assert messages[pith][0].startswith("Seems like `optimizer.step()` has been overridden")


def test_get_lr_outside_step_and_epoch_argument_warn_as_torch():
    messages = {}
    for lib, sched in ((pith, pls), (torch, tls)):
        opt = make_optimizer(lib, SGD_DEFAULTS)
        s = sched.StepLR(opt, 3)
        opt.step()
        messages[lib] = record_warnings(s.get_lr) + record_warnings(lambda: s.step(4))
        messages[lib].append([g["lr"] for g in opt.param_groups])
    assert messages[pith] == messages[torch]
    assert messages[pith][0] == ("To get the last learning rate computed by the scheduler, "
                                 "please use `get_last_lr()`.")
    assert messages[pith][1].startswith("The epoch parameter in `scheduler.step()`")


def test_get_last_lr_is_a_copy():
    opt = make_optimizer(pith, SGD_DEFAULTS)
    sched = pls.StepLR(opt, 3)
    sched.get_last_lr()[0] = 123.0
    assert opt.param_groups[0]["lr"] == LRS[0]


def test_tensor_lr_is_updated_in_place_as_torch():
    popt = make_optimizer(pith, SGD_DEFAULTS, lrs=(0.1,))
    topt = make_optimizer(torch, SGD_DEFAULTS, lrs=(0.1,))
    popt.param_groups[0]["lr"] = pith.tensor(0.1, dtype=pith.float64)
    topt.param_groups[0]["lr"] = torch.tensor(0.1, dtype=torch.float64)
    plr, tlr = popt.param_groups[0]["lr"], topt.param_groups[0]["lr"]
    psched, tsched = pls.ExponentialLR(popt, 0.9), tls.ExponentialLR(topt, 0.9)
    for _ in range(5):
        popt.step()
        topt.step()
        psched.step()
        tsched.step()
    assert popt.param_groups[0]["lr"] is plr
    assert plr.item() == tlr.item()
    assert psched.get_last_lr()[0] is not plr


# ---- ReduceLROnPlateau -----------------------------------------------------------------------

METRICS = [1.0, 0.9, 0.95, 0.91, 0.92, 0.93, 0.94, 0.5, 0.55, 0.56, 0.57, 0.58, 0.59, 0.6,
           0.49, 0.499, 0.4999, 0.5, 0.51, 0.52, 0.53, 0.54, 0.55, 0.56, 0.57, 0.1, 0.2, 0.3,
           0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.1, 1.2, 1.3, 1.4, 1.5]

PLATEAU = {
    "min_rel": {},
    "max_abs": {"mode": "max", "threshold_mode": "abs", "threshold": 0.05, "patience": 2},
    "cooldown_min_lr": {"factor": 0.5, "patience": 1, "cooldown": 2,
                        "min_lr": [0.02, 0.01, 0.001]},
    "eps": {"factor": 0.1, "patience": 0, "eps": 1e-3},
}


@pytest.mark.parametrize("kwargs", list(PLATEAU.values()), ids=list(PLATEAU))
def test_reduce_lr_on_plateau_matches_torch(kwargs):
    popt, topt = make_optimizer(pith, SGD_DEFAULTS), make_optimizer(torch, SGD_DEFAULTS)
    psched = pls.ReduceLROnPlateau(popt, **kwargs)
    tsched = tls.ReduceLROnPlateau(topt, **kwargs)
    for i, metric in enumerate(METRICS):
        popt.step()
        topt.step()
        psched.step(pith.tensor(metric) if i % 2 else metric)
        tsched.step(torch.tensor(metric) if i % 2 else metric)
        assert group_values(popt) == group_values(topt), f"step {i}"
        assert psched.get_last_lr() == tsched.get_last_lr()
        assert psched.num_bad_epochs == tsched.num_bad_epochs
        assert psched.best == tsched.best
    state = psched.state_dict()
    assert set(state) == set(tsched.state_dict())
    fresh = pls.ReduceLROnPlateau(make_optimizer(pith, SGD_DEFAULTS), **kwargs)
    fresh.load_state_dict(tsched.state_dict())
    assert fresh.best == tsched.best and fresh.last_epoch == tsched.last_epoch


@pytest.mark.parametrize("call, error, fragment", [
    (lambda s, o: s.ReduceLROnPlateau(o, factor=1.0), ValueError, "Factor should be < 1.0."),
    (lambda s, o: s.ReduceLROnPlateau(o, mode="up"), ValueError, "mode up is unknown!"),
    (lambda s, o: s.ReduceLROnPlateau(o, threshold_mode="x"), ValueError,
     "threshold mode x is unknown!"),
    (lambda s, o: s.ReduceLROnPlateau(o, min_lr=[0.1]), ValueError,
     "expected 3 min_lrs, got 1"),
])
def test_reduce_lr_on_plateau_errors_as_torch(call, error, fragment):
    for lib, sched in ((pith, pls), (torch, tls)):
        with pytest.raises(error) as info:
            call(sched, make_optimizer(lib, SGD_DEFAULTS))
        assert fragment in str(info.value), f"{lib.__name__}: {info.value}"


# ---- the other schedulers' checks ------------------------------------------------------------

ERRORS = [
    ("LambdaLR_count", lambda s, o: s.LambdaLR(o, [lambda e: 1.0]), ValueError),
    ("ConstantLR_factor", lambda s, o: s.ConstantLR(o, factor=1.5), ValueError),
    ("LinearLR_start", lambda s, o: s.LinearLR(o, start_factor=0), ValueError),
    ("LinearLR_end", lambda s, o: s.LinearLR(o, end_factor=1.5), ValueError),
    ("CosineAnnealingWarmRestarts_T_0", lambda s, o: s.CosineAnnealingWarmRestarts(o, T_0=0),
     ValueError),
    ("CosineAnnealingWarmRestarts_T_mult", lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=2, T_mult=0), ValueError),
    ("CosineAnnealingWarmRestarts_eta_min", lambda s, o: s.CosineAnnealingWarmRestarts(
        o, T_0=2, eta_min="a"), ValueError),
    ("CyclicLR_mode", lambda s, o: s.CyclicLR(o, 0.01, 0.1, mode="sawtooth"), ValueError),
    ("CyclicLR_max_lr_count", lambda s, o: s.CyclicLR(o, 0.01, [0.1, 0.2]), ValueError),
    ("CyclicLR_no_momentum", lambda s, o: s.CyclicLR(s_opt_without_momentum(o), 0.01, 0.1),
     ValueError),
    ("OneCycleLR_no_total", lambda s, o: s.OneCycleLR(o, max_lr=0.1), ValueError),
    ("OneCycleLR_total_steps", lambda s, o: s.OneCycleLR(o, 0.1, total_steps=-1), ValueError),
    ("OneCycleLR_pct_start", lambda s, o: s.OneCycleLR(o, 0.1, total_steps=10,
                                                        pct_start=1.5), ValueError),
    ("OneCycleLR_anneal", lambda s, o: s.OneCycleLR(o, 0.1, total_steps=10,
                                                     anneal_strategy="step"), ValueError),
    ("SequentialLR_milestones", lambda s, o: s.SequentialLR(
        o, [s.StepLR(o, 2), s.StepLR(o, 3)], milestones=[1, 2]), ValueError),
    ("SequentialLR_other_optimizer", lambda s, o: s.SequentialLR(
        o, [s.StepLR(o, 2), s.StepLR(s_other_optimizer(o), 3)], milestones=[1]), ValueError),
    ("SequentialLR_empty", lambda s, o: s.SequentialLR(o, [], milestones=[]), ValueError),
    ("ChainedScheduler_other_optimizer", lambda s, o: s.ChainedScheduler(
        [s.StepLR(o, 2), s.StepLR(s_other_optimizer(o), 3)]), ValueError),
    ("SequentialLR_plateau", lambda s, o: s.SequentialLR(
        o, [s.StepLR(o, 2), s.ReduceLROnPlateau(o)], milestones=[1]), ValueError),
]


def _lib_of(optimizer):
    return pith if isinstance(optimizer, pith.optim.Optimizer) else torch


def s_opt_without_momentum(optimizer):
    return make_optimizer(_lib_of(optimizer), {"lr": 0.1})


def s_other_optimizer(optimizer):
    return make_optimizer(_lib_of(optimizer), SGD_DEFAULTS)


@pytest.mark.parametrize("call, error", [(c, e) for _, c, e in ERRORS],
                         ids=[name for name, _, _ in ERRORS])
def test_scheduler_argument_errors_as_torch(call, error):
    messages = {}
    for lib, sched in ((pith, pls), (torch, tls)):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with pytest.raises(error) as info:
                call(sched, make_optimizer(lib, SGD_DEFAULTS))
        messages[lib] = str(info.value)
    assert messages[pith] == messages[torch]


def test_one_cycle_lr_past_its_total_steps_raises_as_torch():
    messages = {}
    for lib, sched in ((pith, pls), (torch, tls)):
        opt = make_optimizer(lib, ADAM_DEFAULTS)
        s = sched.OneCycleLR(opt, max_lr=0.1, total_steps=3)
        with pytest.raises(ValueError) as info:
            for _ in range(4):
                opt.step()
                s.step()
        messages[lib] = str(info.value)
    assert messages[pith] == messages[torch]
    assert messages[pith].startswith("Tried to step 4 times. The specified number of total "
                                     "steps is 3")


def test_cosine_annealing_warm_restarts_with_epoch_argument_matches_torch():
    popt, topt = make_optimizer(pith, SGD_DEFAULTS), make_optimizer(torch, SGD_DEFAULTS)
    psched = pls.CosineAnnealingWarmRestarts(popt, T_0=3, T_mult=2)
    tsched = tls.CosineAnnealingWarmRestarts(topt, T_0=3, T_mult=2)
    for epoch in (0.5, 1.25, 2.0, 7.5, 3.3, 20.0):
        popt.step()
        topt.step()
        psched.step(epoch)
        tsched.step(epoch)
        assert group_values(popt) == group_values(topt)


def test_closed_form_epoch_argument_matches_torch():
    popt, topt = make_optimizer(pith, SGD_DEFAULTS), make_optimizer(torch, SGD_DEFAULTS)
    psched = pls.MultiStepLR(popt, milestones=[2, 5], gamma=0.1)
    tsched = tls.MultiStepLR(topt, milestones=[2, 5], gamma=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for epoch in (3, 1, 6, 0):
            popt.step()
            topt.step()
            psched.step(epoch)
            tsched.step(epoch)
            assert group_values(popt) == group_values(topt)


def test_cyclic_lr_scale_fn_state_dict_is_picklable_and_restores_its_function():
    opt = make_optimizer(pith, SGD_DEFAULTS)
    sched = pls.CyclicLR(opt, 0.01, 0.1, mode="exp_range", gamma=0.9)
    state = pickle.loads(pickle.dumps(sched.state_dict()))
    other = pls.CyclicLR(make_optimizer(pith, SGD_DEFAULTS), 0.01, 0.1)
    other.load_state_dict(state)
    assert other.mode == "exp_range" and other.scale_fn(3) == 0.9 ** 3


def test_real_optimizers_follow_the_schedule():
    """pith's SGD (momentum cycled by CyclicLR) and Adam (betas cycled by OneCycleLR),
    driven by a scheduler, give torch's lrs, momenta, betas and parameters."""
    for name, make, sched in (
            ("SGD", lambda lib, ps: lib.optim.SGD(ps, lr=0.1, momentum=0.9),
             lambda s, o: s.CyclicLR(o, 0.01, 0.1, step_size_up=3)),
            ("Adam", lambda lib, ps: lib.optim.Adam(ps, lr=0.01),
             lambda s, o: s.OneCycleLR(o, max_lr=0.05, total_steps=20))):
        tp = torch.nn.Parameter(torch.linspace(-1, 1, 6, dtype=torch.float64))
        pp = pith.nn.Parameter(pith.tensor(tp.detach().tolist(), dtype=pith.float64))
        topt, popt = make(torch, [tp]), make(pith, [pp])
        tsched, psched = sched(tls, topt), sched(pls, popt)
        for _ in range(15):
            for p, lib in ((tp, torch), (pp, pith)):
                p.grad = None
                (p * p).sum().backward()
            topt.step()
            popt.step()
            tsched.step()
            psched.step()
            assert group_values(popt) == group_values(topt), name
        assert max(abs(a - b) for a, b in zip(pp.tolist(), tp.tolist())) < 1e-12, name


def make_real_optimizer(lib, defaults):
    """pith's or torch's SGD (momentum) or Adam (betas), three groups of float64 params."""
    groups = [{"params": [lib.nn.Parameter(lib.linspace(-1, 1, i + 2, dtype=lib.float64))],
               "lr": lr} for i, lr in enumerate(LRS)]
    if "betas" in defaults:
        return lib.optim.Adam(groups, lr=defaults["lr"], betas=defaults["betas"])
    return lib.optim.SGD(groups, lr=defaults["lr"], momentum=defaults["momentum"])


@pytest.mark.parametrize("name", sorted(SCHEDULERS))
def test_schedule_on_pith_sgd_or_adam_matches_torch(name):
    """Each scheduler driving pith's SGD or Adam over 50 steps: torch's lrs (momenta, betas)
    after every step, and torch's parameters at the end."""
    defaults, factory = SCHEDULERS[name]
    popt, topt = make_real_optimizer(pith, defaults), make_real_optimizer(torch, defaults)
    psched, tsched = factory(pls, popt), factory(tls, topt)
    for step in range(50):
        for opt in (popt, topt):
            opt.zero_grad()
            for group in opt.param_groups:
                for p in group["params"]:
                    (p * p * p).sum().backward()
            opt.step()
        psched.step()
        tsched.step()
        assert group_values(popt) == group_values(topt), f"step {step}"
    for pg, tg in zip(popt.param_groups, topt.param_groups):
        for p, t in zip(pg["params"], tg["params"]):
            np.testing.assert_allclose(p.tolist(), t.tolist(), rtol=1e-10, atol=1e-12)
