"""pith.autograd.function: custom differentiable functions, as torch.autograd.function.

A Function's forward runs with grad mode off; its outputs are then recorded as the outputs
of one node whose backward calls the Function's backward (libpith's custom function node,
autograd/function.c, through _C._function_record). The ctx of forward is that node's
Python object: ``y.grad_fn`` is ``ctx``. See Note [Python Function objects]
(python_bindings/_C/autograd_function.c) and docs/autograd.md ("Custom functions").
"""
import functools
import inspect
import itertools
import threading
import warnings

from .. import _C
from .._grad_mode import no_grad, is_grad_enabled

__all__ = ["FunctionCtx", "BackwardCFunction", "FunctionMeta", "Function",
           "once_differentiable", "InplaceFunction"]

_Tensor = _C.Tensor
_AUTOGRAD_FUNCTION_COUNTER = itertools.count()

# The exception a Function's backward raised on this thread, re-raised as itself by
# pith.autograd's backward and grad (the engine carries only its message).
_pending = threading.local()


class FunctionCtx:
    """What forward and setup_context record on ``ctx`` for backward."""

    def save_for_backward(self, *tensors):
        """Saves tensors (or None) for backward; read them back with ``ctx.saved_tensors``."""
        self.to_save = tensors

    def save_for_forward(self, *tensors):
        for tensor in tensors:
            if not (isinstance(tensor, _Tensor) or tensor is None):
                raise AssertionError(
                    "save_for_forward expects all arguments to be tensors; you should "
                    "save non-tensors as attributes on ctx.")
        self.saved_for_forward = tensors

    def mark_dirty(self, *args):
        """Marks inputs that forward modified in place."""
        self.dirty_tensors = args

    def mark_shared_storage(self, *pairs):
        warnings.warn(
            "mark_shared_storage is deprecated. Tensors with shared storages are "
            "automatically tracked. Note that calls to `set_()` are not tracked",
            FutureWarning, stacklevel=2)

    def mark_non_differentiable(self, *args):
        """Marks outputs that take no gradient (backward gets None or zeros for them)."""
        self.non_differentiable = args

    def set_materialize_grads(self, value):
        """False: missing output gradients reach backward as None instead of zeros."""
        self.materialize_grads = value


_ContextMethodMixin = FunctionCtx


class BackwardCFunction(_C._Node, FunctionCtx):
    """The class of a Function's ctx and node (``<Name>Backward``)."""

    def _get_user_fn(self):
        backward_fn = self._forward_cls.backward
        vjp_fn = self._forward_cls.vjp
        if backward_fn is not Function.backward and vjp_fn is not Function.vjp:
            raise RuntimeError(
                "Implementing both 'backward' and 'vjp' for a custom Function is not "
                "allowed. You should only implement one of them.")
        return vjp_fn if vjp_fn is not Function.vjp else backward_fn

    def apply(self, *args):
        return self._get_user_fn()(self, *args)

    @property
    def saved_tensors(self):
        return _C._function_saved_tensors(self)

    @property
    def saved_variables(self):
        warnings.warn("'saved_variables' is deprecated; use 'saved_tensors'",
                      DeprecationWarning, stacklevel=2)
        return self.saved_tensors

    def __repr__(self):
        return object.__repr__(self)

    def _pith_backward(self, grads):
        """Called by the node's backward (autograd_function.c): the gradients of the
        tensor outputs in, the gradients of the tensor inputs out."""
        try:
            return self._pith_backward_checked(grads)
        except BaseException as e:
            _pending.error = e
            raise

    def _pith_backward_checked(self, grads):
        name = type(self).__name__
        layout = self._pith_outputs  # per forward output: index among tensor outputs or None
        args = tuple(None if k is None else grads[k] for k in layout)
        result = self.apply(*args)
        if not isinstance(result, tuple):
            result = (result,)
        is_tensor = self._pith_is_tensor_input
        n = len(is_tensor)
        if len(result) > n and all(g is None for g in result[n:]):
            result = result[:n]
        if len(result) != n:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
        out = []
        for i, (g, tensor) in enumerate(zip(result, is_tensor)):
            if not tensor:
                if g is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a "
                        f"Variable")
                continue
            if g is not None and not isinstance(g, _Tensor):
                raise RuntimeError(f"expected Variable or None (got {type(g).__name__})")
            out.append(g)
        return tuple(out)


class FunctionMeta(type):
    """Makes each Function's backward class, ``<Name>Backward``."""

    def __init__(cls, name, bases, attrs):
        backward_cls = type(name + "Backward", (BackwardCFunction,),
                            {"_forward_cls": cls, "__module__": __name__})
        backward_cls._autograd_function_id = next(_AUTOGRAD_FUNCTION_COUNTER)
        cls._backward_cls = backward_cls
        super().__init__(name, bases, attrs)


def _is_setup_context_defined(fn):
    return fn != _SingleLevelFunction.setup_context


def _check_tensors(values, message):
    for i, v in enumerate(values):
        if not isinstance(v, _Tensor):
            # torch raises RuntimeError here (its message loses the type's name)
            raise RuntimeError(message.format(i=i, type=type(v).__name__))


class _SingleLevelFunction(FunctionCtx, metaclass=FunctionMeta):
    @staticmethod
    def forward(*args, **kwargs):
        raise NotImplementedError(
            "You must implement the forward function for custom autograd.Function.")

    @staticmethod
    def setup_context(ctx, inputs, output):
        raise NotImplementedError("setup_context is not implemented.")

    @staticmethod
    def backward(ctx, *grad_outputs):
        raise NotImplementedError(
            "You must implement either the backward or vjp method for your custom "
            "autograd.Function to use it with backward mode AD.")

    vjp = backward

    @staticmethod
    def jvp(ctx, *grad_inputs):
        raise NotImplementedError(
            "You must implement the jvp function for custom autograd.Function to use it "
            "with forward mode AD.")


class Function(_SingleLevelFunction):
    """Base class of custom differentiable functions, as torch.autograd.Function:
    subclass it with static ``forward`` (``forward(ctx, *args)``, or ``forward(*args)``
    with ``setup_context(ctx, inputs, output)``) and ``backward(ctx, *grad_outputs)``,
    and call ``apply``."""

    def __init__(self, *args, **kwargs):
        warnings.warn(
            f"{self.__class__} should not be instantiated. Methods on autograd functions "
            "are all static, so you should invoke them on the class itself. "
            "Instantiating an autograd function will raise an error in a future version "
            "of PyTorch.", DeprecationWarning, stacklevel=2)

    def __call__(self, *args, **kwargs):
        raise RuntimeError(
            "Legacy autograd function with non-static forward method is deprecated. Please "
            "use new-style autograd function with static forward method. (Example: "
            "https://pytorch.org/docs/stable/autograd.html#torch.autograd.Function)")

    generate_vmap_rule = False

    @staticmethod
    def vmap(info, in_dims, *args):
        raise NotImplementedError(
            "To use autograd.Function with vmap, you must either override the vmap "
            "staticmethod or set generate_vmap_rule=True.")

    @classmethod
    def apply(cls, *args, **kwargs):
        setup = _is_setup_context_defined(cls.setup_context)
        if setup:
            bound = inspect.signature(cls.forward).bind(*args, **kwargs)
            bound.apply_defaults()
            args, kwargs = bound.args, bound.kwargs
        ctx = cls._backward_cls()
        is_tensor = tuple(isinstance(a, _Tensor) for a in args)
        ctx.needs_input_grad = tuple(t and a.requires_grad for a, t in zip(args, is_tensor))
        ctx.materialize_grads = True
        ctx._pith_is_tensor_input = is_tensor
        with no_grad():
            if setup:
                output = cls.forward(*args, **kwargs)
                cls.setup_context(ctx, args, output)
            else:
                output = cls.forward(ctx, *args, **kwargs)
        return _record(cls, ctx, args, is_tensor, output)


def _record(cls, ctx, args, is_tensor, output):
    """PyTorch's _wrap_outputs and _save_variables, through _C._function_record."""
    is_tuple = isinstance(output, tuple)
    outputs = output if is_tuple else (output,)
    inputs = tuple(a for a, t in zip(args, is_tensor) if t)
    input_ids = {id(t) for t in inputs}
    dirty = ctx.__dict__.pop("dirty_tensors", None) or ()
    _check_tensors(dirty, "mark_dirty can only accept variables, but argument {i} is of "
                          "type {type}")
    non_diff = ctx.__dict__.pop("non_differentiable", None) or ()
    _check_tensors(non_diff, "mark_non_differentiable only accepts variable arguments, but "
                             "got {type}")
    to_save = ctx.__dict__.pop("to_save", None) or ()
    for i, t in enumerate(to_save):
        if t is not None and not isinstance(t, _Tensor):
            raise TypeError(f"save_for_backward can only save variables, but argument {i} is "
                            f"of type {type(t).__name__}")
    dirty_ids = {id(t) for t in dirty}
    output_ids = {id(o) for o in outputs if isinstance(o, _Tensor)}
    if not dirty_ids <= output_ids:
        raise RuntimeError(
            "Some elements marked as dirty during the forward method were not returned as "
            "output. The inputs that are modified inplace must all be outputs of the "
            "Function.")
    non_diff_ids = {id(t) for t in non_diff}
    tensors, flags, layout = [], [], []
    for o in outputs:
        if not isinstance(o, _Tensor):
            layout.append(None)
            continue
        flag = 0
        if id(o) in non_diff_ids:
            flag |= _C._FUNCTION_NON_DIFFERENTIABLE
        if id(o) in dirty_ids:
            if id(o) in input_ids:
                flag |= _C._FUNCTION_DIRTY
            else:
                warnings.warn("Only input Tensors should be given to ctx.mark_dirty(). If a "
                              "Tensor is not an input, there is no need to pass it to "
                              "mark_dirty().", stacklevel=3)
        elif id(o) in input_ids:
            with no_grad():
                o = o.view_as(o)  # an input returned as-is: a new alias takes the history
        layout.append(len(tensors))
        tensors.append(o)
        flags.append(flag)
    ctx._pith_outputs = tuple(layout)
    recorded = _C._function_record(ctx, type(ctx).__name__, inputs, tuple(tensors), flags,
                                   tuple(to_save), bool(ctx.materialize_grads))
    it = iter(recorded)
    result = tuple(o if k is None else next(it) for o, k in zip(outputs, layout))
    return result if is_tuple else result[0]


class _DelayedError(Function):
    """The node once_differentiable puts after a backward: differentiating it raises."""

    @staticmethod
    def forward(ctx, message, *inputs):
        ctx.message = message
        return tuple(i.view_as(i) for i in inputs)

    @staticmethod
    def backward(ctx, *grads):
        raise RuntimeError(ctx.message)


def once_differentiable(fn):
    """Runs a backward without recording: differentiating its result raises."""

    @functools.wraps(fn)
    def wrapper(ctx, *args, **kwargs):
        with no_grad():
            outputs = fn(ctx, *args, **kwargs)
        if not is_grad_enabled():
            return outputs
        if not any(isinstance(a, _Tensor) and a.requires_grad for a in args):
            return outputs
        outputs_ = outputs if isinstance(outputs, tuple) else (outputs,)

        def fake_requires_grad(var):
            if var is not None:
                var = var.detach()
                var.requires_grad = True
            return var

        faked = [fake_requires_grad(v) for v in outputs_]
        tensors = [v for v in faked if v is not None]
        errored = _DelayedError.apply(
            "trying to differentiate twice a function that was marked with "
            "@once_differentiable", *tensors)
        errored = errored if isinstance(errored, tuple) else (errored,)
        it = iter(errored)
        result = tuple(None if v is None else next(it) for v in faked)
        return result if isinstance(outputs, tuple) else result[0]

    return wrapper


class InplaceFunction(Function):
    """Kept for backward compatibility, as torch's: use Function."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace
