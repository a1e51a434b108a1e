"""pith.overrides: the function layer's Python API, PyTorch's torch.overrides.

A subclass of pith.Tensor, or any class, that defines the classmethod
``__pith_function__(cls, func, types, args=(), kwargs=None)`` (or ``__torch_function__``,
its synonym) is handed every pith function, Tensor method, operator and property called on
its instances before it runs; a :class:`TorchFunctionMode` (``PithFunctionMode``) is handed
every such call made on the thread while it is active. ``func`` is the public callable
(``pith.add``, ``pith.Tensor.add``, ``pith.Tensor.shape.__get__``). The checks are in C
(python_bindings/_C/function_layer.c, Note [Function layer]); docs/python.md lists what
differs from PyTorch.
"""
from . import _C

__all__ = [
    "BasePithFunctionMode", "BaseTorchFunctionMode", "PithFunctionMode", "TorchFunctionMode",
    "get_default_nowrap_functions", "handle_pith_function", "handle_torch_function",
    "has_pith_function", "has_pith_function_unary", "has_pith_function_variadic",
    "has_torch_function", "has_torch_function_unary", "has_torch_function_variadic",
    "is_tensor_like", "is_tensor_method_or_property",
]

Tensor = _C.Tensor

has_pith_function = has_torch_function = _C._has_pith_function
has_pith_function_unary = has_torch_function_unary = _C._has_pith_function_unary
has_pith_function_variadic = has_torch_function_variadic = _C._has_pith_function_variadic


def handle_pith_function(public_api, relevant_args, *args, **kwargs):
    """Hands the call public_api(*args, **kwargs) to the function layer: the active mode and
    the __pith_function__ of each argument of `relevant_args` that overrides it, in
    PyTorch's order, until one returns something other than NotImplemented. A Python
    function of your own calls it first when has_pith_function(relevant_args)."""
    return _C._handle_pith_function(public_api, tuple(relevant_args), args, kwargs)


handle_torch_function = handle_pith_function


def is_tensor_like(inp):
    """Whether `inp` is a pith.Tensor or an object the function layer treats as one: its
    type defines __pith_function__ or __torch_function__."""
    return (type(inp) is Tensor or hasattr(inp, "__pith_function__")
            or hasattr(inp, "__torch_function__"))


def is_tensor_method_or_property(func):
    """Whether `func` is a method or a property accessor of pith.Tensor, as the function
    layer passes them (pith.Tensor.add, pith.Tensor.shape.__get__)."""
    if isinstance(func, _C.Method) or getattr(func, "__name__", None) == "__get__":
        return True
    if getattr(func, "__objclass__", None) is Tensor:  # the slots: Tensor.__getitem__ ...
        return True
    name = getattr(func, "__name__", None)
    return isinstance(name, str) and Tensor.__dict__.get(name) is func


def get_default_nowrap_functions():
    """The functions whose results the default __pith_function__ returns as they are, not
    as the subclass (PyTorch's set, less the attributes pith lacks: _base and _grad)."""
    from ._tensor import _default_nowrap_functions
    return set(_default_nowrap_functions())


# ---- function modes ----

class TorchFunctionMode:
    """A context manager whose ``__pith_function__(self, func, types, args=(), kwargs=None)``
    (or ``__torch_function__``) is handed every call of the function layer made on this
    thread while it is active, factories included, before the tensors' own handlers. Modes
    nest: the innermost runs first, and while it runs it is popped, so that
    ``func(*args, **kwargs)`` inside it reaches the next mode, the subclasses and the op.
    Returning NotImplemented passes the call to the subclasses' handlers. The stack is per
    thread (and per interpreter)."""

    def __init__(self, inner=None):
        if inner is not None:
            raise ValueError("TorchFunctionMode does not take inner")

    def __pith_function__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(
            f"{type(self).__name__} must implement __pith_function__ or __torch_function__")

    __torch_function__ = __pith_function__

    def __enter__(self):
        _C._push_function_mode(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _C._pop_function_mode(self)
        return False


PithFunctionMode = TorchFunctionMode


class BaseTorchFunctionMode(TorchFunctionMode):
    """A mode that runs every call as it is; subclasses override what they need."""

    def __pith_function__(self, func, types, args=(), kwargs=None):
        if kwargs is None:
            kwargs = {}
        return func(*args, **kwargs)

    __torch_function__ = __pith_function__


BasePithFunctionMode = BaseTorchFunctionMode


def _get_current_function_mode():
    """The innermost function mode of this thread, or None."""
    stack = _C._function_mode_stack()
    return stack[-1] if stack else None


def _get_current_function_mode_stack():
    """This thread's function modes, innermost last."""
    return _C._function_mode_stack()


def _push_mode(mode):
    _C._push_function_mode(mode)


def _pop_mode():
    return _C._pop_function_mode()


class _pop_mode_temporarily:
    """``with _pop_mode_temporarily() as mode:`` runs the block with the innermost function
    mode popped, and pushes it back after."""

    def __enter__(self):
        self._mode = _C._pop_function_mode()
        return self._mode

    def __exit__(self, exc_type, exc_value, traceback):
        _C._push_function_mode(self._mode)
        return False


def _is_torch_function_mode_enabled():
    return _C._is_pith_function_mode_enabled()
