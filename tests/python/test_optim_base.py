"""pith.optim.Optimizer, the base class, against torch.optim.Optimizer: the hooks fire in
torch's order, state_dict/load_state_dict hooks see and replace what torch's see, repr,
zero_grad, named parameters, pickling and deepcopy continue identically, and 10,000 Adam
steps leak no tensor and no memory."""
import copy
import sys
import gc
import pickle

import pytest
import torch

import pith
import pith.optim
import pith.optim.optimizer  # noqa: F401
import torch.optim.optimizer  # noqa: F401


def run_hooks(lib):
    """The order in which the step, state-dict and load hooks of lib fire."""
    module = sys.modules[lib.__name__ + ".optim.optimizer"]  # torch.optim del-s the name
    log = []
    w = lib.ones(2, requires_grad=True)
    opt = lib.optim.SGD([w], lr=0.1)
    handles = [
        module.register_optimizer_step_pre_hook(lambda o, a, k: log.append("global pre")),
        module.register_optimizer_step_post_hook(lambda o, a, k: log.append("global post")),
        opt.register_step_pre_hook(lambda o, a, k: log.append("pre 1")),
        opt.register_step_pre_hook(lambda o, a, k: log.append("pre 2")),
        opt.register_step_post_hook(lambda o, a, k: log.append("post 1")),
        opt.register_step_post_hook(lambda o, a, k: log.append("post 2")),
        opt.register_state_dict_pre_hook(lambda o: log.append("sd pre")),
        opt.register_state_dict_pre_hook(lambda o: log.append("sd pre first"), prepend=True),
        opt.register_state_dict_post_hook(lambda o, sd: log.append("sd post")),
        opt.register_load_state_dict_pre_hook(lambda o, sd: log.append("load pre")),
        opt.register_load_state_dict_post_hook(lambda o: log.append("load post")),
        opt.register_load_state_dict_post_hook(lambda o: log.append("load post first"),
                                               prepend=True),
    ]
    w.grad = lib.ones(2)

    def closure():
        log.append("closure")
        return 1.0

    log.append(("loss", opt.step(closure)))
    sd = opt.state_dict()
    opt.load_state_dict(sd)
    handles[3].remove()
    handles[0].remove()
    opt.step()
    handles[1].remove()
    for h in handles:
        h.remove()
    opt.step()
    return log


def test_hooks_fire_in_torchs_order():
    assert run_hooks(pith) == run_hooks(torch)


def test_a_step_pre_hook_can_replace_the_arguments():
    for lib in (torch, pith):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        w.grad = lib.ones(2)
        opt.register_step_pre_hook(lambda o, a, k: (a, {"closure": lambda: 7.0}))
        assert opt.step() == 7.0
        opt.register_step_pre_hook(lambda o, a, k: 3)
        with pytest.raises(RuntimeError, match="must return None or a tuple of"):
            opt.step()


def test_state_dict_hooks_replace_the_state_dict_as_torch():
    for lib in (torch, pith):
        w = lib.ones(2, requires_grad=True)
        opt = lib.optim.SGD([w], lr=0.1)
        opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1})
        assert opt.state_dict()["extra"] == 1

        def drop_lr(o, sd):
            sd = copy.deepcopy(sd)
            sd["param_groups"][0]["lr"] = 0.5
            return sd

        opt.register_load_state_dict_pre_hook(drop_lr)
        opt.load_state_dict(opt.state_dict())
        assert opt.param_groups[0]["lr"] == 0.5


@pytest.mark.parametrize("name, options", [
    ("SGD", {"lr": 0.1, "momentum": 0.9}), ("Adam", {"lr": 0.01, "amsgrad": True}),
    ("AdamW", {}), ("RMSprop", {"centered": True}), ("Adagrad", {}), ("Adadelta", {}),
    ("Adamax", {}), ("NAdam", {}), ("RAdam", {}), ("LBFGS", {"line_search_fn": "strong_wolfe"}),
])
def test_repr_and_defaults_are_torchs(name, options):
    t = getattr(torch.optim, name)([torch.ones(2, requires_grad=True)], **options)
    p = getattr(pith.optim, name)([pith.ones(2, requires_grad=True)], **options)
    assert repr(p) == repr(t)
    assert p.defaults == t.defaults


def test_named_parameters_keep_their_names_in_the_state_dict():
    sds = []
    for lib in (torch, pith):
        model = lib.nn.Linear(2, 3)
        opt = lib.optim.Adam(model.named_parameters())
        sds.append(opt.state_dict()["param_groups"])
    assert sds[0] == sds[1] and sds[0][0]["param_names"] == ["weight", "bias"]


def test_mixing_named_and_unnamed_groups_raises_torchs_error():
    messages = []
    for lib in (torch, pith):
        opt = lib.optim.SGD([("a", lib.ones(1, requires_grad=True))], lr=0.1)
        with pytest.raises(ValueError) as info:
            opt.add_param_group({"params": [lib.ones(1, requires_grad=True)]})
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_a_group_without_a_required_option_raises_torchs_error():
    messages = []
    for lib in (torch, pith):
        required = sys.modules[lib.__name__ + ".optim.optimizer"].required

        class Plain(lib.optim.Optimizer):
            def __init__(self, params):
                super().__init__(params, {"lr": required})

        with pytest.raises(ValueError) as info:
            Plain([lib.ones(1, requires_grad=True)])
        messages.append(str(info.value))
    assert messages[0] == messages[1]


def test_add_param_group_needs_a_dict():
    opt = pith.optim.SGD([pith.ones(1, requires_grad=True)], lr=0.1)
    with pytest.raises(TypeError, match="param_group must be a dict"):
        opt.add_param_group([pith.ones(1, requires_grad=True)])


@pytest.mark.parametrize("set_to_none", [True, False])
def test_zero_grad_as_torch(set_to_none):
    w = pith.ones(2, requires_grad=True)
    opt = pith.optim.SGD([w], lr=0.1)
    (w * 3).sum().backward()
    grad = w.grad
    opt.zero_grad(set_to_none=set_to_none)
    if set_to_none:
        assert w.grad is None
    else:
        assert w.grad is grad and w.grad.tolist() == [0.0, 0.0]
        assert not w.grad.requires_grad


def test_step_returns_the_closures_loss_and_runs_it_with_grad_enabled():
    w = pith.ones(2, requires_grad=True)
    opt = pith.optim.Adam([w])
    seen = []

    def closure():
        seen.append(pith.is_grad_enabled())
        opt.zero_grad()
        loss = (w * w).sum()
        loss.backward()
        return loss

    with pith.no_grad():
        loss = opt.step(closure)
    assert seen == [True] and loss.item() == 2.0


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copied_optimizer_continues_identically(how):
    pith.manual_seed(0)
    model = pith.nn.Linear(3, 2)
    opt = pith.optim.Adam(model.parameters(), lr=0.01)
    x = pith.randn(5, 3)

    def train(model, opt, n):
        for _ in range(n):
            opt.zero_grad()
            model(x).pow(2).sum().backward()
            opt.step()

    train(model, opt, 3)
    if how == "deepcopy":
        model2, opt2 = copy.deepcopy((model, opt))
    else:
        model2, opt2 = pickle.loads(pickle.dumps((model, opt)))
    assert opt2.state[model2.weight]["step"].item() == 3.0
    train(model, opt, 3)
    train(model2, opt2, 3)
    assert model2.weight.tolist() == model.weight.tolist()
    assert opt2.register_step_pre_hook(lambda *a: None) is not None  # hooks recreated


def test_the_class_step_is_wrapped_once():
    class Mine(pith.optim.SGD):
        pass

    a = Mine([pith.ones(1, requires_grad=True)], lr=0.1)
    step = Mine.step
    Mine([pith.ones(1, requires_grad=True)], lr=0.1)
    copy.deepcopy(a)
    assert Mine.step is step and Mine.step.hooked


# ---- leaks ----

def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


@pytest.mark.parametrize("foreach", [None, False], ids=["default", "foreach_false"])
def test_10000_adam_steps_leak_nothing(foreach):
    pith.manual_seed(0)
    model = pith.nn.Sequential(pith.nn.Linear(8, 16), pith.nn.ReLU(), pith.nn.Linear(16, 4))
    opt = pith.optim.Adam(model.parameters(), lr=1e-3, weight_decay=0.01, amsgrad=True,
                          foreach=foreach)
    x, target = pith.randn(4, 8), pith.tensor([0, 1, 3, 2])

    def step():
        opt.zero_grad()
        pith.nn.functional.cross_entropy(model(x), target).backward()
        opt.step()

    for _ in range(500):  # fills the allocator's and Python's caches
        step()
    gc.collect()
    before, rss = pith._C._live_tensors(), rss_bytes()
    for _ in range(10_000):
        step()
    gc.collect()
    assert pith._C._live_tensors() == before
    grown = rss_bytes() - rss
    assert grown <= 256 << 10, f"RSS grew by {grown / 2**20:.2f} MiB over 10,000 steps"


# ---- the stubs ----

def test_the_stubs_declare_every_public_name_and_method():
    import ast
    import inspect
    import os
    path = os.path.join(os.path.dirname(pith.optim.__file__), "__init__.pyi")
    with open(path) as f:
        tree = ast.parse(f.read())
    classes = {node.name: {item.name for item in node.body
                           if isinstance(item, ast.FunctionDef)}
               for node in tree.body if isinstance(node, ast.ClassDef)}
    assert set(pith.optim.__all__) <= set(classes)
    for name in pith.optim.__all__:
        cls = getattr(pith.optim, name)
        declared = set().union(*(classes.get(c.__name__, set()) for c in cls.__mro__))
        public = {n for n, v in vars(cls).items()
                  if not n.startswith("_") and (inspect.isfunction(v) or
                                                isinstance(v, staticmethod))}
        assert public <= declared, f"add to class {name} in pith/optim/__init__.pyi"


TYPED = '''
from typing import Any

import pith
from pith import nn, optim

model = nn.Linear(3, 1)
opt: optim.Optimizer = optim.AdamW(model.parameters(), lr=1e-3, weight_decay=0.01)
groups: list[dict[str, Any]] = [{"params": [model.weight]}, {"params": [model.bias], "lr": 0.1}]
sgd = optim.SGD(groups, lr=0.01, momentum=0.9, nesterov=True)
sgd.zero_grad(set_to_none=True)
sgd.step()
state = opt.state_dict()
opt.load_state_dict(state)
handle = opt.register_step_post_hook(lambda o, args, kwargs: None)
handle.remove()
lbfgs = optim.LBFGS(model.parameters(), line_search_fn="strong_wolfe")


def closure() -> pith.Tensor:
    lbfgs.zero_grad()
    loss: pith.Tensor = model(pith.ones(2, 3)).sum()
    loss.backward()
    return loss


lbfgs.step(closure)
'''


def test_mypy_accepts_typed_code_using_pith_optim(tmp_path):
    from test_stubs import run_mypy
    assert run_mypy(tmp_path, TYPED).strip() == ""
