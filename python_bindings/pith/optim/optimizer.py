"""The base optimizer, torch.optim.Optimizer: param groups, per-parameter state, state_dict in
PyTorch's layout, the step/state-dict hooks, pickling. The update rules live in one file per
optimizer (sgd.py, adam.py, ...); the multi-tensor kernels they call are the ops
pith._fused_<name>_ (ops/ops.toml). See docs/training.md, "pith.optim"."""
import functools
import warnings
from collections import OrderedDict, defaultdict
from collections.abc import Iterable
from copy import deepcopy
from itertools import chain

import pith
from pith.nn.modules.module import RemovableHandle

__all__ = ["Optimizer", "register_optimizer_step_pre_hook", "register_optimizer_step_post_hook"]

_global_optimizer_pre_hooks = OrderedDict()
_global_optimizer_post_hooks = OrderedDict()


class _RequiredParameter:
    """The default of a hyperparameter that every param group must give (torch.optim's
    `required`)."""

    def __repr__(self):
        return "<required parameter>"


required = _RequiredParameter()


def _typename(obj):
    """torch.typename: a tensor's type() string, else the qualified name of obj's type."""
    if isinstance(obj, pith.Tensor):
        return obj.type()
    module = getattr(obj, "__module__", "") or ""
    if hasattr(obj, "__qualname__"):
        qualname = obj.__qualname__
    elif hasattr(obj, "__name__"):
        qualname = obj.__name__
    else:
        module = obj.__class__.__module__ or ""
        qualname = obj.__class__.__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def _use_grad_for_differentiable(func):
    """Runs the step with gradients recorded only when the optimizer is differentiable (the
    default step runs under no_grad, as torch's)."""
    @functools.wraps(func)
    def _use_grad(self, *args, **kwargs):
        prev = pith.is_grad_enabled()
        try:
            pith.set_grad_enabled(self.defaults["differentiable"])
            return func(self, *args, **kwargs)
        finally:
            pith.set_grad_enabled(prev)
    return _use_grad


def _get_value(x):
    return x.item() if isinstance(x, pith.Tensor) else x


def _get_scalar_dtype():
    """The dtype of state['step'] (torch's _get_scalar_dtype without fused): float64 when the
    default dtype is float64, else float32."""
    return pith.float64 if pith.get_default_dtype() == pith.float64 else pith.float32


def _to_scalar(x):
    """A 1-element hyperparameter tensor of any rank becomes 0-dim; anything else as is."""
    if isinstance(x, pith.Tensor) and x.dim() != 0:
        return x.squeeze()
    return x


# Note [The optimizer's two paths]
# Every optimizer but LBFGS updates a param group in one of two ways. The kernel path makes
# one call of the multi-tensor op pith._fused_<name>_ (kernels/optim.c) per group (per part
# for SGD: the params whose momentum buffer exists, and those whose buffer is new); the
# kernel increments state['step'] itself. The formula path is torch 2.13's
# _single_tensor_<name>, op by op, with pith ops; torch's addcmul_, addcdiv_ and lerp_ are
# composed below in the order of torch's CPU kernels, which is also the order the kernels
# round in (Note [The optimizer kernels round as pith's ops]), so that both paths give the
# same bits (test_optim.py, test_the_kernel_and_the_formula_give_the_same_bits).
# The kernel path is the default (foreach and fused None) and what foreach=True and
# fused=True ask for; torch's default on CPU is its for-loop. foreach=False (fused not True)
# and differentiable=True run the formula, which autograd can record.
_KERNEL_DTYPES = (pith.float32, pith.float64)


def _default_to_fused(params, differentiable, foreach, fused):
    """Whether a group's update runs in the kernel pith._fused_<name>_ (See Note [The
    optimizer's two paths]). The kernels update float32 and float64 parameters: a group
    with another dtype (float16, bfloat16) runs the formula."""
    if differentiable:
        return False
    if any(p.dtype not in _KERNEL_DTYPES for p in params):
        return False
    return bool(fused) or bool(foreach) or (foreach is None and fused is None)


def _float(x, name="lr"):
    """A hyperparameter as a Python float for the kernels and the formulas: a 1-element
    Tensor is read once per step. A Tensor that requires grad (torch differentiates through
    it with differentiable=True) is refused."""
    if isinstance(x, pith.Tensor):
        if x.requires_grad:
            raise ValueError(f"pith.optim: a Tensor {name} that requires grad is not supported; "
                             "pass a float or a Tensor that does not require grad")
        return x.item()
    return x


def _check_param(p, optimizer_name, sparse=True):
    """Refuses what pith cannot update: complex parameters (torch views them as real) and
    sparse gradients (torch's message)."""
    if p.dtype.is_complex:
        raise RuntimeError(f"{optimizer_name}: complex parameters are not supported by pith.optim "
                           f"(got {p.dtype})")
    if sparse and getattr(p.grad, "is_sparse", False):
        raise RuntimeError(f"{optimizer_name} does not support sparse gradients")


# torch's addcmul_, addcdiv_ and lerp_ with a scalar, composed from pith ops in the order of
# torch's CPU kernels: self + (value * t1) * t2, self + (value * t1) / t2, and lerp's two
# branches on the weight. See Note [The optimizer's two paths].
def _addcmul_(self, t1, t2, value=1.0):
    term = t1.mul(value) if value != 1 else t1.clone()
    return self.add_(term.mul_(t2))


def _addcdiv_(self, t1, t2, value=1.0):
    term = t1.mul(value) if value != 1 else t1.clone()
    return self.add_(term.div_(t2))


def _rdiv(number, tensor):
    """number / tensor as torch computes it: Tensor.__rtruediv__ is tensor.reciprocal() *
    number, two roundings in the tensor's dtype (pith's number / tensor rounds once)."""
    return (1 / tensor) * number


def _lerp_(self, end, weight):
    if abs(weight) < 0.5:
        return self.add_(end.sub(self).mul_(weight))
    diff = end.sub(self).mul_(1 - weight)
    return self.copy_(end.sub(diff))


def register_optimizer_step_pre_hook(hook):
    """Registers hook(optimizer, args, kwargs) -> None or (args, kwargs), run before the step
    of every optimizer (before each optimizer's own pre hooks)."""
    handle = RemovableHandle(_global_optimizer_pre_hooks)
    _global_optimizer_pre_hooks[handle.id] = hook
    return handle


def register_optimizer_step_post_hook(hook):
    """Registers hook(optimizer, args, kwargs) -> None, run after the step of every optimizer
    (after each optimizer's own post hooks)."""
    handle = RemovableHandle(_global_optimizer_post_hooks)
    _global_optimizer_post_hooks[handle.id] = hook
    return handle


class Optimizer:
    """Base class of all optimizers (torch.optim.Optimizer).

    params: an iterable of tensors, of (name, tensor) pairs, or of dicts defining param
    groups; defaults: the hyperparameters of a group that does not give its own."""

    def __init__(self, params, defaults):
        self.defaults = defaults
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self._patch_step_function()

        if isinstance(params, pith.Tensor):
            raise TypeError("params argument given to the optimizer should be an iterable of "
                            "Tensors or dicts, but got " + _typename(params))

        self.state = defaultdict(dict)
        self.param_groups = []

        param_groups = list(params)
        if len(param_groups) == 0:
            raise ValueError("optimizer got an empty parameter list")
        if not isinstance(param_groups[0], dict):
            param_groups = [{"params": param_groups}]
        for param_group in param_groups:
            self.add_param_group(param_group)

    # ---- pickling and printing ----

    def __getstate__(self):
        return {"defaults": self.defaults, "state": self.state, "param_groups": self.param_groups}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for name in ("_optimizer_step_pre_hooks", "_optimizer_step_post_hooks",
                     "_optimizer_state_dict_pre_hooks", "_optimizer_state_dict_post_hooks",
                     "_optimizer_load_state_dict_pre_hooks",
                     "_optimizer_load_state_dict_post_hooks"):
            if name not in self.__dict__:
                setattr(self, name, OrderedDict())
        self._patch_step_function()  # the class's step is wrapped once, also after unpickling
        self.defaults.setdefault("differentiable", False)

    def __repr__(self):
        format_string = self.__class__.__name__ + " ("
        for i, group in enumerate(self.param_groups):
            format_string += "\n"
            format_string += f"Parameter Group {i}\n"
            for key in sorted(group.keys()):
                if key != "params":
                    format_string += f"    {key}: {group[key]}\n"
        format_string += ")"
        return format_string

    # ---- the step and its hooks ----

    def _optimizer_step_code(self):
        """Called after every step (torch's entry point for its profiler); does nothing."""

    @staticmethod
    def profile_hook_step(func):
        """Wraps a step function so that it runs the global and the optimizer's own pre hooks
        before, and post hooks after it, in torch's order."""
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            self = args[0]
            for pre_hook in chain(_global_optimizer_pre_hooks.values(),
                                  self._optimizer_step_pre_hooks.values()):
                result = pre_hook(self, args, kwargs)
                if result is not None:
                    if isinstance(result, tuple) and len(result) == 2:
                        args, kwargs = result
                    else:
                        raise RuntimeError(f"{func} must return None or a tuple of "
                                           f"(new_args, new_kwargs), but got {result}.")
            out = func(*args, **kwargs)
            self._optimizer_step_code()
            for post_hook in chain(self._optimizer_step_post_hooks.values(),
                                   _global_optimizer_post_hooks.values()):
                post_hook(self, args, kwargs)
            return out
        return wrapper

    def _patch_step_function(self):
        self._zero_grad_profile_name = f"Optimizer.zero_grad#{self.__class__.__name__}.zero_grad"
        hooked = getattr(self.__class__.step, "hooked", None)
        if not hooked:
            self.__class__.step = self.profile_hook_step(self.__class__.step)
            self.__class__.step.hooked = True

    def register_step_pre_hook(self, hook):
        """Registers hook(optimizer, args, kwargs) -> None or (args, kwargs), run before
        this optimizer's step."""
        handle = RemovableHandle(self._optimizer_step_pre_hooks)
        self._optimizer_step_pre_hooks[handle.id] = hook
        return handle

    def register_step_post_hook(self, hook):
        """Registers hook(optimizer, args, kwargs) -> None, run after this optimizer's step."""
        handle = RemovableHandle(self._optimizer_step_post_hooks)
        self._optimizer_step_post_hooks[handle.id] = hook
        return handle

    @staticmethod
    def _add_ordered_hook(hooks, hook, prepend):
        handle = RemovableHandle(hooks)
        hooks[handle.id] = hook
        if prepend:
            hooks.move_to_end(handle.id, last=False)
        return handle

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """Registers hook(optimizer) -> None, run before state_dict()."""
        return self._add_ordered_hook(self._optimizer_state_dict_pre_hooks, hook, prepend)

    def register_state_dict_post_hook(self, hook, prepend=False):
        """Registers hook(optimizer, state_dict) -> state_dict or None, run after
        state_dict(); a returned dict replaces the state dict."""
        return self._add_ordered_hook(self._optimizer_state_dict_post_hooks, hook, prepend)

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """Registers hook(optimizer, state_dict) -> state_dict or None, run before
        load_state_dict() on a shallow copy of its argument; a returned dict is loaded."""
        return self._add_ordered_hook(self._optimizer_load_state_dict_pre_hooks, hook, prepend)

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """Registers hook(optimizer) -> None, run after load_state_dict()."""
        return self._add_ordered_hook(self._optimizer_load_state_dict_post_hooks, hook, prepend)

    # ---- state dicts ----

    def state_dict(self):
        """The optimizer's state as torch lays it out: {'state': {index: {...}},
        'param_groups': [{..., 'params': [index, ...]}]}, a parameter's index being its
        position over all groups in order. The state tensors are not copied."""
        for pre_hook in self._optimizer_state_dict_pre_hooks.values():
            pre_hook(self)

        param_mappings = {}
        start_index = 0

        def pack_group(group):
            nonlocal start_index
            packed = {k: v for k, v in group.items() if k != "params"}
            param_mappings.update({id(p): i for i, p in enumerate(group["params"], start_index)
                                   if id(p) not in param_mappings})
            packed["params"] = [param_mappings[id(p)] for p in group["params"]]
            start_index += len(packed["params"])
            return packed

        param_groups = [pack_group(g) for g in self.param_groups]
        packed_state = {(param_mappings[id(k)] if isinstance(k, pith.Tensor) else k): v
                        for k, v in self.state.items()}
        state_dict = {"state": packed_state, "param_groups": param_groups}

        for post_hook in self._optimizer_state_dict_post_hooks.values():
            hook_result = post_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result
        return state_dict

    @staticmethod
    def _process_value_according_to_param_policy(param, value, param_id, param_groups,
                                                 key=None):
        # A floating state tensor takes its parameter's dtype and device; 'step' keeps its
        # own dtype (pytorch/pytorch#74424) unless the group is fused or capturable, where it
        # is float32 on the parameter's device.
        fused = capturable = False
        for pg in param_groups:
            if param_id in pg["params"]:
                fused = pg.get("fused", False)
                capturable = pg.get("capturable", False)
                break
        if key == "step":
            if capturable or fused:
                return value.to(dtype=pith.float32, device=param.device)
            return value
        if param.is_floating_point():
            return value.to(dtype=param.dtype, device=param.device)
        return value.to(device=param.device)

    def load_state_dict(self, state_dict):
        """Loads a state dict made by state_dict() (pith's or torch's): the groups' options
        are replaced, the state tensors are cast to their parameter's dtype ('step' kept)."""
        state_dict = state_dict.copy()  # shallow, as Module's
        for pre_hook in self._optimizer_load_state_dict_pre_hooks.values():
            hook_result = pre_hook(self, state_dict)
            if hook_result is not None:
                state_dict = hook_result

        groups = self.param_groups
        saved_groups = deepcopy(state_dict["param_groups"])  # written into below
        if len(groups) != len(saved_groups):
            raise ValueError("loaded state dict has a different number of parameter groups")
        if any(len(g["params"]) != len(s["params"]) for g, s in zip(groups, saved_groups)):
            raise ValueError("loaded state dict contains a parameter group that doesn't match "
                             "the size of optimizer's group")

        id_map = dict(zip(chain.from_iterable(g["params"] for g in saved_groups),
                          chain.from_iterable(g["params"] for g in groups)))

        def _cast(param, value, param_id=None, param_groups=None, key=None):
            if isinstance(value, pith.Tensor):
                return Optimizer._process_value_according_to_param_policy(
                    param, value, param_id, param_groups, key)
            if isinstance(value, dict):
                return {k: _cast(param, v, param_id=param_id, param_groups=param_groups, key=k)
                        for k, v in value.items()}
            if isinstance(value, Iterable) and not isinstance(value, (str, bytes)):
                return type(value)(_cast(param, v, param_id=param_id, param_groups=param_groups)
                                   for v in value)
            return value

        state = defaultdict(dict)
        for k, v in state_dict["state"].items():
            if k in id_map:
                param = id_map[k]
                state[param] = _cast(param, v, param_id=k,
                                     param_groups=state_dict["param_groups"])
            else:
                state[k] = v

        def update_group(group, new_group):
            new_group["params"] = group["params"]
            if "param_names" in group and "param_names" not in new_group:
                new_group["param_names"] = group["param_names"]
            return new_group

        param_groups = [update_group(g, ng) for g, ng in zip(groups, saved_groups)]
        self.__setstate__({"state": state, "param_groups": param_groups})

        for post_hook in self._optimizer_load_state_dict_post_hooks.values():
            post_hook(self)

    # ---- gradients and groups ----

    def zero_grad(self, set_to_none=True):
        """Sets every parameter's .grad to None (set_to_none=True) or zeroes it in place,
        detached and not requiring grad."""
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    if set_to_none:
                        p.grad = None
                    else:
                        if p.grad.grad_fn is not None:
                            p.grad.detach_()
                        else:
                            p.grad.requires_grad_(False)
                        p.grad.zero_()

    def step(self, closure=None):
        """Performs one optimization step; closure re-evaluates the model and returns the
        loss (needed by some optimizers)."""
        raise NotImplementedError

    def add_param_group(self, param_group):
        """Adds a param group (a dict with 'params' and, optionally, its own options; the
        others are taken from the defaults)."""
        if not isinstance(param_group, dict):
            raise TypeError(f"param_group must be a dict, but got {type(param_group)}")

        params = param_group["params"]
        if isinstance(params, pith.Tensor):
            param_group["params"] = [params]
        elif isinstance(params, set):
            raise TypeError("optimizer parameters need to be organized in ordered collections, "
                            "but the ordering of tensors in sets will change between runs. "
                            "Please use a list instead.")
        else:
            param_group["params"] = list(params)

        tensors, names = [], []
        for param in param_group["params"]:
            if isinstance(param, tuple):
                names.append(param[0])
                tensors.append(param[1])
            else:
                tensors.append(param)
        param_group["params"] = tensors
        if len(names) != 0:
            if len(names) == len(tensors):
                param_group["param_names"] = names
            else:
                raise ValueError("all optimizer params should be with/without names. Some param "
                                 "names are missing")

        for param in param_group["params"]:
            if not isinstance(param, pith.Tensor):
                raise TypeError("optimizer can only optimize Tensors, but one of the params is "
                                + _typename(param))
            if not self.defaults.get("differentiable", None) and not (
                    param.is_leaf or param.retains_grad):
                raise ValueError("can't optimize a non-leaf Tensor")

        for name, default in self.defaults.items():
            if default is required and name not in param_group:
                raise ValueError("parameter group didn't specify a value of required "
                                 f"optimization parameter {name}")
            param_group.setdefault(name, default)

        params = param_group["params"]
        if len(params) != len(set(params)):
            warnings.warn("optimizer contains a parameter group with duplicate parameters; "
                          "in future, this will cause an error; "
                          "see github.com/pytorch/pytorch/issues/40967 for more information",
                          stacklevel=3)

        param_set = set()
        for group in self.param_groups:
            param_set.update(set(group["params"]))
            if ("param_names" in param_group) != ("param_names" in group):
                current_group_txt = ("with names" if "param_names" in param_group
                                     else "without names")
                raise ValueError("all optimizer param groups should be with/without names. "
                                 f"cannot add param group {current_group_txt} to the optimizer")
        if not param_set.isdisjoint(set(param_group["params"])):
            raise ValueError("some parameters appear in more than one parameter group")

        self.param_groups.append(param_group)
