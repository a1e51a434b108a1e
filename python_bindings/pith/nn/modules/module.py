"""pith.nn.Module: parameter, buffer and submodule registration, iteration, state_dict,
repr, forward hooks and full backward hooks (per module and global), with PyTorch's
semantics (names, order, messages). The backward hooks' graph work is _backward_hooks.py's.
Devices are not here.
"""
import functools
import itertools
import warnings
import weakref
from collections import OrderedDict, namedtuple
from collections.abc import Mapping

from ... import _C
from ..._ops import ops
from ..parameter import Parameter

Tensor = _C.Tensor

__all__ = ["Module", "RemovableHandle", "register_module_forward_pre_hook",
           "register_module_forward_hook", "register_module_full_backward_pre_hook",
           "register_module_full_backward_hook"]


class _IncompatibleKeys(namedtuple("IncompatibleKeys", ["missing_keys", "unexpected_keys"])):
    __slots__ = ()

    def __repr__(self):
        if not self.missing_keys and not self.unexpected_keys:
            return "<All keys matched successfully>"
        return super().__repr__()

    __str__ = __repr__


def _addindent(s_, num_spaces):
    s = s_.split("\n")
    if len(s) == 1:
        return s_
    first = s.pop(0)
    s = [(num_spaces * " ") + line if line.strip() else "" for line in s]
    return first + "\n" + "\n".join(s)


def _typename(obj):
    # torch.typename for the values a module rejects.
    if isinstance(obj, Tensor):
        return f"pith.{type(obj).__name__}"
    module = getattr(obj, "__module__", "") or ""
    qualname = getattr(obj, "__qualname__", None) or getattr(type(obj), "__qualname__", "")
    if not isinstance(obj, type):
        qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def _to_tensor(value):
    """A state_dict value as a pith.Tensor: pith tensors as they are, NumPy arrays without a
    copy, other DLPack producers (torch tensors) through DLPack, anything else through
    pith.as_tensor. Raises TypeError when the value is not tensor-like."""
    if isinstance(value, Tensor):
        return value
    import pith
    if hasattr(value, "__dlpack__") and type(value).__module__.partition(".")[0] != "numpy":
        if getattr(value, "requires_grad", False):
            value = value.detach()  # torch exports no tensor that requires grad
        return pith.from_dlpack(value)
    if isinstance(value, (str, bytes, Mapping)) or value is None:
        raise TypeError(f"not tensor-like: {type(value)}")
    if not getattr(getattr(value, "flags", None), "writeable", True):
        return pith.tensor(value)  # a read-only array: copy it rather than alias it
    return pith.as_tensor(value)


# ---- hooks ------------------------------------------------------------------------------------

class RemovableHandle:
    """The handle a hook registration returns (torch.utils.hooks.RemovableHandle):
    remove() takes the hook out of the dicts it was added to; a context manager that
    removes it on exit. It holds the dicts weakly, so it does not keep a module alive."""

    id: int
    next_id: int = 0

    def __init__(self, hooks_dict, *, extra_dict=None):
        self.hooks_dict_ref = weakref.ref(hooks_dict)
        self.id = RemovableHandle.next_id
        RemovableHandle.next_id += 1
        extra = extra_dict if isinstance(extra_dict, list) else [extra_dict]
        self.extra_dict_ref = tuple(weakref.ref(d) for d in extra if d is not None)

    def remove(self):
        for ref in (self.hooks_dict_ref,) + self.extra_dict_ref:
            hooks = ref()
            if hooks is not None and self.id in hooks:
                del hooks[self.id]

    def __getstate__(self):
        return (self.hooks_dict_ref(), self.id, tuple(ref() for ref in self.extra_dict_ref))

    def __setstate__(self, state):
        # A dict that was not pickled with the handle becomes a dead reference.
        self.hooks_dict_ref = weakref.ref(OrderedDict() if state[0] is None else state[0])
        self.id = state[1]
        RemovableHandle.next_id = max(RemovableHandle.next_id, self.id + 1)
        self.extra_dict_ref = tuple(weakref.ref(d) for d in state[2] if d is not None)

    def __enter__(self):
        return self

    def __exit__(self, type, value, tb):
        self.remove()


# Hooks of every module, before each module's own (register_module_forward_*_hook).
_global_forward_pre_hooks = OrderedDict()
_global_forward_hooks = OrderedDict()
_global_forward_hooks_with_kwargs = OrderedDict()
_global_forward_hooks_always_called = OrderedDict()
_global_backward_pre_hooks = OrderedDict()
_global_backward_hooks = OrderedDict()


def _add_hook(hooks, hook, flags=(), prepend=False):
    """Adds hook to the dict `hooks` under a new handle's id, and the id to each dict of the
    (dict, flag) pairs `flags` whose flag is set; the handle removes it from all of them."""
    handle = RemovableHandle(hooks, extra_dict=[table for table, _ in flags])
    hooks[handle.id] = hook
    for table, flag in flags:
        if flag:
            table[handle.id] = True
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_module_forward_pre_hook(hook):
    """Registers hook(module, args) -> None or new args, called before every module's
    forward and before the module's own pre-hooks. Meant for debugging and profiling."""
    return _add_hook(_global_forward_pre_hooks, hook)


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """Registers hook(module, args, output) (or hook(module, args, kwargs, output) with
    with_kwargs) -> None or a new output, called after every module's forward and before
    the module's own forward hooks; with always_call also when forward raises."""
    return _add_hook(_global_forward_hooks, hook,
                     [(_global_forward_hooks_with_kwargs, with_kwargs),
                      (_global_forward_hooks_always_called, always_call)])


def register_module_full_backward_pre_hook(hook):
    """Registers hook(module, grad_output) -> None or new grad_output for every module,
    before each module's own backward pre-hooks."""
    return _add_hook(_global_backward_pre_hooks, hook)


def register_module_full_backward_hook(hook):
    """Registers hook(module, grad_input, grad_output) -> None or new grad_input for every
    module, before each module's own backward hooks."""
    return _add_hook(_global_backward_hooks, hook)


# The per-module hook dicts, which Module.__init__ creates and __setstate__ restores.
_HOOK_DICTS = ("_forward_pre_hooks", "_forward_pre_hooks_with_kwargs", "_forward_hooks",
               "_forward_hooks_with_kwargs", "_forward_hooks_always_called",
               "_backward_pre_hooks", "_backward_hooks", "_load_state_dict_pre_hooks")


class Module:
    """Base class of all neural network modules, as torch.nn.Module.

    Assigning a Parameter, a Module or (for a registered name) a Tensor to an attribute
    registers it; parameters(), state_dict() and repr() walk the registered children in
    the order they were assigned."""

    _version = 1
    training: bool

    def __init__(self, *args, **kwargs):
        if kwargs:
            raise TypeError(f"{type(self).__name__}.__init__() got an unexpected keyword "
                            f"argument '{next(iter(kwargs))}'")
        if args:
            raise TypeError(f"{type(self).__name__}.__init__() takes 1 positional argument "
                            f"but {len(args) + 1} were given")
        # object.__setattr__ skips Module.__setattr__, which needs these dicts to exist.
        set_attr = super().__setattr__
        set_attr("training", True)
        set_attr("_parameters", {})
        set_attr("_buffers", {})
        set_attr("_non_persistent_buffers_set", set())
        set_attr("_modules", {})
        for name in _HOOK_DICTS:
            set_attr(name, OrderedDict())
        set_attr("_is_full_backward_hook", None)

    def forward(self, *input):
        raise NotImplementedError(f'Module [{type(self).__name__}] is missing the required '
                                  f'"forward" function')

    def __call__(self, *args, **kwargs):
        if not (self._forward_hooks or self._forward_pre_hooks or _global_forward_hooks
                or _global_forward_pre_hooks or self._backward_hooks
                or self._backward_pre_hooks or _global_backward_hooks
                or _global_backward_pre_hooks):
            return self.forward(*args, **kwargs)
        return self._call_with_hooks(args, kwargs)

    def _call_with_hooks(self, args, kwargs):
        """forward between the forward pre-hooks and hooks, global ones first, as PyTorch's
        Module._call_impl: a pre-hook returning non-None replaces the args (a non-tuple is
        wrapped in one; with_kwargs, an (args, kwargs) pair), a hook returning non-None
        replaces the output. If anything raises, the always_call hooks not yet run are
        called (their own errors become warnings) and the error propagates."""
        result = None
        called = set()
        try:
            for hook_id, hook in (*_global_forward_pre_hooks.items(),
                                  *self._forward_pre_hooks.items()):
                if hook_id in self._forward_pre_hooks_with_kwargs:
                    new = hook(self, args, kwargs)
                    if new is not None:
                        if not (isinstance(new, tuple) and len(new) == 2):
                            raise RuntimeError("forward pre-hook must return None or a tuple "
                                               f"of (new_args, new_kwargs), but got {new}.")
                        args, kwargs = new
                else:
                    new = hook(self, args)
                    if new is not None:
                        args = new if isinstance(new, tuple) else (new,)
            bw_hook = None
            full_hooks = [*_global_backward_hooks.values(), *self._backward_hooks.values()]
            pre_hooks = [*_global_backward_pre_hooks.values(),
                         *self._backward_pre_hooks.values()]
            if full_hooks or pre_hooks:
                from ._backward_hooks import BackwardHook
                bw_hook = BackwardHook(self, full_hooks, pre_hooks)
                args = bw_hook.setup_input_hook(args)
            result = self.forward(*args, **kwargs)
            for hook_id, hook in (*_global_forward_hooks.items(),
                                  *self._forward_hooks.items()):
                if (hook_id in self._forward_hooks_always_called
                        or hook_id in _global_forward_hooks_always_called):
                    called.add(hook_id)
                with_kwargs = (hook_id in self._forward_hooks_with_kwargs
                               or hook_id in _global_forward_hooks_with_kwargs)
                result = self._run_forward_hook(hook, with_kwargs, args, kwargs, result)
            if bw_hook:
                if not isinstance(result, (Tensor, tuple)):
                    warnings.warn("For backward hooks to be called, module output should be a "
                                  "Tensor or a tuple of Tensors but received "
                                  f"{type(result)}", stacklevel=2)
                result = bw_hook.setup_output_hook(result)
            return result
        except Exception:
            for hooks, always, with_kwargs, kind in (
                    # (PyTorch calls a global with_kwargs hook without the kwargs here.)
                    (_global_forward_hooks, _global_forward_hooks_always_called,
                     _global_forward_hooks_with_kwargs, "global module forward hook"),
                    (self._forward_hooks, self._forward_hooks_always_called,
                     self._forward_hooks_with_kwargs, "module forward hook")):
                for hook_id, hook in list(hooks.items()):
                    if hook_id not in always or hook_id in called:
                        continue
                    try:
                        result = self._run_forward_hook(hook, hook_id in with_kwargs, args,
                                                        kwargs, result)
                    except Exception as e:
                        warnings.warn(f"{kind} with ``always_call=True`` raised an exception "
                                      "that was silenced as another error was raised in "
                                      f"forward: {e}", stacklevel=2)
            raise

    def _run_forward_hook(self, hook, with_kwargs, args, kwargs, result):
        new = hook(self, args, kwargs, result) if with_kwargs else hook(self, args, result)
        return result if new is None else new

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """Registers hook(module, args) -> None or new args (with_kwargs: hook(module, args,
        kwargs) -> None or (new_args, new_kwargs)), called before forward; prepend puts it
        before this module's other pre-hooks (global ones still run first)."""
        return _add_hook(self._forward_pre_hooks, hook,
                         [(self._forward_pre_hooks_with_kwargs, with_kwargs)], prepend)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """Registers hook(module, args, output) (with_kwargs: hook(module, args, kwargs,
        output)) -> None or a new output, called after forward; prepend puts it before this
        module's other hooks; always_call runs it also when forward (or a hook) raises."""
        return _add_hook(self._forward_hooks, hook,
                         [(self._forward_hooks_with_kwargs, with_kwargs),
                          (self._forward_hooks_always_called, always_call)], prepend)

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """Registers hook(module, grad_output) -> None or new grad_output, called when the
        gradients of the module's outputs are computed; prepend puts it first."""
        return _add_hook(self._backward_pre_hooks, hook, (), prepend)

    def register_full_backward_hook(self, hook, prepend=False):
        """Registers hook(module, grad_input, grad_output) -> None or new grad_input,
        called when the gradients of the module's inputs are computed; prepend puts it
        first."""
        if self._is_full_backward_hook is False:
            raise RuntimeError("Cannot use both regular backward hooks and full backward "
                               "hooks on a single Module. Please use only one of them.")
        self._is_full_backward_hook = True
        return _add_hook(self._backward_hooks, hook, (), prepend)

    # ---- registration ----------------------------------------------------------------

    def _check_name(self, kind, name, table):
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string. Got {_typename(name)}")
        if "." in name:
            raise KeyError(f'{kind} name can\'t contain "."')
        if name == "":
            raise KeyError(f'{kind} name can\'t be empty string ""')
        if hasattr(self, name) and name not in table:
            raise KeyError(f"attribute '{name}' already exists")

    def register_buffer(self, name, tensor, persistent=True):
        """Adds a tensor that is state but not a parameter; persistent buffers are in
        state_dict()."""
        if "_buffers" not in self.__dict__:
            raise AttributeError("cannot assign buffer before Module.__init__() call")
        self._check_name("buffer", name, self._buffers)
        if tensor is not None and not isinstance(tensor, Tensor):
            raise TypeError(f"cannot assign '{_typename(tensor)}' object to buffer '{name}' "
                            "(pith Tensor or None required)")
        self._buffers[name] = tensor
        if persistent:
            self._non_persistent_buffers_set.discard(name)
        else:
            self._non_persistent_buffers_set.add(name)

    def register_parameter(self, name, param):
        """Adds a Parameter (or None, which state_dict() and parameters() skip)."""
        if "_parameters" not in self.__dict__:
            raise AttributeError("cannot assign parameter before Module.__init__() call")
        self._check_name("parameter", name, self._parameters)
        if param is not None and not isinstance(param, Parameter):
            raise TypeError(f"cannot assign '{_typename(param)}' object to parameter "
                            f"'{name}' (pith.nn.Parameter or None required)")
        self._parameters[name] = param

    def add_module(self, name, module):
        """Adds a child module, reachable as the attribute `name`."""
        if not isinstance(module, Module) and module is not None:
            raise TypeError(f"{_typename(module)} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"module name should be a string. Got {_typename(name)}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"attribute '{name}' already exists")
        if "." in name:
            raise KeyError(f'module name can\'t contain ".", got: {name}')
        if name == "":
            raise KeyError('module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module

    def get_submodule(self, target):
        """The submodule at the dotted path `target` ("" is self)."""
        module = self
        for item in target.split(".") if target else ():
            if not hasattr(module, item):
                raise AttributeError(f"{module._get_name()} has no attribute `{item}`")
            module = getattr(module, item)
            if not isinstance(module, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return module

    # ---- attributes ------------------------------------------------------------------

    def __getattr__(self, name):
        # Only called when normal lookup fails: the registered names live in the dicts.
        d = self.__dict__
        if "_parameters" in d:
            table = d["_parameters"]
            if name in table:
                return table[name]
        if "_buffers" in d:
            table = d["_buffers"]
            if name in table:
                return table[name]
        if "_modules" in d:
            table = d["_modules"]
            if name in table:
                return table[name]
        raise AttributeError(f"'{type(self).__name__}' object has no attribute '{name}'")

    def __setattr__(self, name, value):
        d = self.__dict__

        def remove_from(*tables):
            for table in tables:
                if name in table:
                    if isinstance(table, dict):
                        del table[name]
                    else:
                        table.discard(name)

        params = d.get("_parameters")
        if isinstance(value, Parameter):
            if params is None:
                raise AttributeError("cannot assign parameters before Module.__init__() call")
            remove_from(d, self._buffers, self._modules, self._non_persistent_buffers_set)
            self.register_parameter(name, value)
            return
        if params is not None and name in params:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as parameter '{name}' "
                                "(pith.nn.Parameter or None expected)")
            self.register_parameter(name, value)
            return
        modules = d.get("_modules")
        if isinstance(value, Module):
            if modules is None:
                raise AttributeError("cannot assign module before Module.__init__() call")
            remove_from(d, self._parameters, self._buffers, self._non_persistent_buffers_set)
            modules[name] = value
            return
        if modules is not None and name in modules:
            if value is not None:
                raise TypeError(f"cannot assign '{_typename(value)}' as child module "
                                f"'{name}' (pith.nn.Module or None expected)")
            modules[name] = value
            return
        buffers = d.get("_buffers")
        if buffers is not None and name in buffers:
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"cannot assign '{_typename(value)}' as buffer '{name}' "
                                "(pith.Tensor or None expected)")
            self.register_buffer(name, value, name not in self._non_persistent_buffers_set)
            return
        super().__setattr__(name, value)

    def __delattr__(self, name):
        if name in self._parameters:
            del self._parameters[name]
        elif name in self._buffers:
            del self._buffers[name]
            self._non_persistent_buffers_set.discard(name)
        elif name in self._modules:
            del self._modules[name]
        else:
            super().__delattr__(name)

    def __setstate__(self, state):
        self.__dict__.update(state)
        if "_non_persistent_buffers_set" not in self.__dict__:
            self._non_persistent_buffers_set = set()
        for name in _HOOK_DICTS:  # modules pickled before pith had hooks
            if name not in self.__dict__:
                super().__setattr__(name, OrderedDict())
        if "_is_full_backward_hook" not in self.__dict__:
            super().__setattr__("_is_full_backward_hook", None)

    def __dir__(self):
        keys = (dir(self.__class__) + list(self.__dict__) + list(self._parameters)
                + list(self._modules) + list(self._buffers))
        return sorted(key for key in keys if not key[0].isdigit())

    # ---- iteration -------------------------------------------------------------------

    def _named_members(self, get_members, prefix="", recurse=True, remove_duplicate=True):
        # Tensors compare elementwise, so the memo is keyed by id (values kept alive).
        memo = {}
        modules = (self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate)
                   if recurse else [(prefix, self)])
        for module_prefix, module in modules:
            for k, v in get_members(module):
                if v is None or id(v) in memo:
                    continue
                if remove_duplicate:
                    memo[id(v)] = v
                yield module_prefix + ("." if module_prefix else "") + k, v

    def parameters(self, recurse=True):
        for _, param in self.named_parameters(recurse=recurse):
            yield param

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._parameters.items(), prefix, recurse,
                                       remove_duplicate)

    def buffers(self, recurse=True):
        for _, buf in self.named_buffers(recurse=recurse):
            yield buf

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        yield from self._named_members(lambda m: m._buffers.items(), prefix, recurse,
                                       remove_duplicate)

    def children(self):
        for _, module in self.named_children():
            yield module

    def named_children(self):
        memo = set()
        for name, module in self._modules.items():
            if module is not None and module not in memo:
                memo.add(module)
                yield name, module

    def modules(self, remove_duplicate=True):
        for _, module in self.named_modules(remove_duplicate=remove_duplicate):
            yield module

    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        if memo is None:
            memo = set()
        if self in memo:
            return
        if remove_duplicate:
            memo.add(self)
        yield prefix, self
        for name, module in self._modules.items():
            if module is None:
                continue
            submodule_prefix = prefix + ("." if prefix else "") + name
            yield from module.named_modules(memo, submodule_prefix, remove_duplicate)

    # ---- modes and transforms --------------------------------------------------------

    def train(self, mode=True):
        if not isinstance(mode, bool):
            raise ValueError("training mode is expected to be boolean")
        self.training = mode
        for module in self.children():
            module.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Sets requires_grad of every parameter; returns self."""
        for param in self.parameters():
            param.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        """Resets the parameters' gradients: sets them to None, or with set_to_none=False
        zeroes them in place (detached from any graph first, as PyTorch does)."""
        for param in self.parameters():
            if param.grad is not None:
                if set_to_none:
                    param.grad = None
                else:
                    if param.grad.grad_fn is not None:
                        param.grad.detach_()
                    else:
                        param.grad.requires_grad_(False)
                    param.grad.zero_()

    def apply(self, fn):
        """Calls fn on every submodule (children first), then on self; returns self."""
        for module in self.children():
            module.apply(fn)
        fn(self)
        return self

    def _apply(self, fn):
        # Replaces each parameter and buffer by fn(tensor); parameters stay Parameters.
        for module in self.children():
            module._apply(fn)
        for key, param in self._parameters.items():
            if param is not None:
                self._parameters[key] = Parameter(fn(param.detach()))
        for key, buf in self._buffers.items():
            if buf is not None:
                self._buffers[key] = fn(buf)
        return self

    def to(self, *args, **kwargs):
        """to(dtype), to(device) or to(tensor): converts the floating-point parameters and
        buffers; the arguments are those of Tensor.to."""
        _C.empty(0).to(*args, **kwargs)  # validates them as Tensor.to does
        dtype = kwargs.get("dtype")
        for arg in args:
            if isinstance(arg, _C.dtype):
                dtype = arg
            elif isinstance(arg, Tensor):
                dtype = arg.dtype
        if dtype is None:
            return self
        if not dtype.is_floating_point:
            raise TypeError(f"nn.Module.to only accepts floating point dtypes, but got "
                            f"desired dtype={dtype}")
        return self._float_type(dtype)

    def _float_type(self, dtype):
        return self._apply(lambda t: t.to(dtype) if t.dtype.is_floating_point else t)

    def float(self):
        return self._float_type(_C.float32)

    def double(self):
        return self._float_type(_C.float64)

    def half(self):
        return self._float_type(_C.float16)

    def bfloat16(self):
        return self._float_type(_C.bfloat16)

    def cpu(self):
        return self

    # ---- state_dict --------------------------------------------------------------------

    def _save_to_state_dict(self, destination, prefix, keep_vars):
        for name, param in self._parameters.items():
            if param is not None:
                destination[prefix + name] = param if keep_vars else param.detach()
        for name, buf in self._buffers.items():
            if buf is not None and name not in self._non_persistent_buffers_set:
                destination[prefix + name] = buf if keep_vars else buf.detach()

    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """An OrderedDict of the parameters and persistent buffers, keyed by dotted name;
        the values share memory with the module's tensors."""
        if destination is None:
            destination = OrderedDict()
            destination._metadata = OrderedDict()
        if hasattr(destination, "_metadata"):
            destination._metadata[prefix[:-1]] = dict(version=self._version)
        self._save_to_state_dict(destination, prefix, keep_vars)
        for name, module in self._modules.items():
            if module is not None:
                module.state_dict(destination=destination, prefix=prefix + name + ".",
                                  keep_vars=keep_vars)
        return destination

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """Registers hook(state_dict, prefix, local_metadata, strict, missing_keys,
        unexpected_keys, error_msgs) (with_module: hook(module, state_dict, ...)), called
        before this module loads its entries from state_dict, which it may rewrite."""
        if with_module:
            hook = functools.partial(hook, self)
        return _add_hook(self._load_state_dict_pre_hooks, hook)

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        for hook in self._load_state_dict_pre_hooks.values():
            hook(state_dict, prefix, local_metadata, strict, missing_keys, unexpected_keys,
                 error_msgs)
        persistent_buffers = {k: v for k, v in self._buffers.items()
                              if k not in self._non_persistent_buffers_set}
        local_state = {k: v for k, v in itertools.chain(self._parameters.items(),
                                                        persistent_buffers.items())
                       if v is not None}
        for name, param in local_state.items():
            key = prefix + name
            if key not in state_dict:
                if strict:
                    missing_keys.append(key)
                continue
            try:
                input_param = _to_tensor(state_dict[key])
            except (TypeError, ValueError, BufferError, RuntimeError) as e:
                error_msgs.append(f'While copying the parameter named "{key}", expected '
                                  "pith.Tensor or Tensor-like object from checkpoint but "
                                  f"received {type(state_dict[key])} ({e})")
                continue
            # PyTorch's backward compatibility: a 1-element 1-D value for a 0-dim one.
            if param.dim() == 0 and input_param.dim() == 1 and input_param.shape[0] == 1:
                input_param = input_param[0]
            if input_param.shape != param.shape:
                error_msgs.append(f"size mismatch for {key}: copying a param with shape "
                                  f"{input_param.shape} from checkpoint, the shape in current "
                                  f"model is {param.shape}.")
                continue
            try:
                from ..._grad_mode import no_grad
                with no_grad():  # as PyTorch's _load_from_state_dict
                    ops.pith.copy_(param, input_param)
            except Exception as ex:
                error_msgs.append(f'While copying the parameter named "{key}", whose '
                                  f"dimensions in the model are {param.size()} and whose "
                                  f"dimensions in the checkpoint are {input_param.size()}, "
                                  f"an exception occurred : {ex.args}.")
        if strict:
            for key in state_dict:
                if not key.startswith(prefix):
                    continue
                input_name = key[len(prefix):].split(".", 1)
                if len(input_name) > 1:
                    if input_name[0] not in self._modules:
                        unexpected_keys.append(key)
                elif input_name[0] not in local_state:
                    unexpected_keys.append(key)

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copies the values of `state_dict` (pith tensors, NumPy arrays or DLPack
        producers such as torch tensors) into the parameters and buffers, in place.

        Returns (missing_keys, unexpected_keys); with strict=True, any missing or unexpected
        key, like any shape mismatch, raises RuntimeError."""
        if not isinstance(state_dict, Mapping):
            raise TypeError(f"Expected state_dict to be dict-like, got {type(state_dict)}.")
        if assign:
            raise NotImplementedError("load_state_dict(): assign=True is not supported")
        missing_keys, unexpected_keys, error_msgs = [], [], []
        metadata = getattr(state_dict, "_metadata", None)
        state_dict = OrderedDict(state_dict)

        def load(module, local_state_dict, prefix=""):
            local_metadata = {} if metadata is None else metadata.get(prefix[:-1], {})
            module._load_from_state_dict(local_state_dict, prefix, local_metadata, True,
                                         missing_keys, unexpected_keys, error_msgs)
            for name, child in module._modules.items():
                if child is not None:
                    child_prefix = prefix + name + "."
                    child_state_dict = {k: v for k, v in local_state_dict.items()
                                        if k.startswith(child_prefix)}
                    load(child, child_state_dict, child_prefix)

        load(self, state_dict)
        del load
        if strict:
            if unexpected_keys:
                error_msgs.insert(0, "Unexpected key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in unexpected_keys)))
            if missing_keys:
                error_msgs.insert(0, "Missing key(s) in state_dict: {}. ".format(
                    ", ".join(f'"{k}"' for k in missing_keys)))
        if error_msgs:
            raise RuntimeError("Error(s) in loading state_dict for {}:\n\t{}".format(
                self.__class__.__name__, "\n\t".join(error_msgs)))
        return _IncompatibleKeys(missing_keys, unexpected_keys)

    # ---- repr --------------------------------------------------------------------------

    def _get_name(self):
        return self.__class__.__name__

    def extra_repr(self):
        """The module's own settings for repr(), one line or several."""
        return ""

    def __repr__(self):
        extra_repr = self.extra_repr()
        extra_lines = extra_repr.split("\n") if extra_repr else []
        child_lines = ["(" + key + "): " + _addindent(repr(module), 2)
                       for key, module in self._modules.items()]
        lines = extra_lines + child_lines
        main_str = self._get_name() + "("
        if lines:
            if len(extra_lines) == 1 and not child_lines:
                main_str += extra_lines[0]
            else:
                main_str += "\n  " + "\n  ".join(lines) + "\n"
        return main_str + ")"
