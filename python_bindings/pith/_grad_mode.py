"""Grad mode and inference mode: pith.no_grad, enable_grad, set_grad_enabled and
inference_mode, as PyTorch's torch.autograd.grad_mode, usable as context managers and as
decorators (of functions, of generator functions, whose every resumption runs in the
mode, and, deprecated as in PyTorch, of classes).

The state is libpith's, per thread (pith_grad_enabled, pith_inference_mode_enabled: see
Note [Grad mode is per thread] in core/grad_mode.c), so C code reads what these set: ops on
tensors that require grad record only while grad mode is on, and inference mode marks the
tensors created under it (Tensor.is_inference()).
"""
import sys

from . import _C

# functools, inspect and warnings are imported where they are used, by the decorators:
# `import pith` imports this module (docs/python.md "Import cost").

__all__ = ["no_grad", "enable_grad", "set_grad_enabled", "inference_mode",
           "is_grad_enabled", "is_inference_mode_enabled"]

is_grad_enabled = _C.is_grad_enabled
is_inference_mode_enabled = _C.is_inference_mode_enabled


_CO_GENERATOR = 0x20  # inspect.CO_GENERATOR


def _is_generator_function(func):
    """inspect.isgeneratorfunction(func); a plain function is checked here, without
    importing inspect."""
    if type(func) is _FunctionType:
        return bool(func.__code__.co_flags & _CO_GENERATOR)
    import inspect
    return inspect.isgeneratorfunction(func)


_FunctionType = type(_is_generator_function)  # types.FunctionType


def _wrap_generator(make_context, func):
    """Runs each step of the generator made by `func` in a fresh context of
    `make_context()`, and its caller's code between steps outside it."""
    import functools

    @functools.wraps(func)
    def generator_context(*args, **kwargs):
        gen = func(*args, **kwargs)
        try:
            with make_context():
                response = gen.send(None)
            while True:
                try:
                    request = yield response
                except GeneratorExit:
                    with make_context():
                        gen.close()
                    raise
                except BaseException:
                    with make_context():
                        response = gen.throw(*sys.exc_info())
                else:
                    with make_context():
                        response = gen.send(request)
        except StopIteration as stop:
            return stop.value

    return generator_context


class _DecoratorContextManager:
    """A context manager that also decorates: each call of the decorated function runs in
    a fresh copy of it (clone())."""

    def __call__(self, orig_func):
        import functools
        if isinstance(orig_func, type):  # inspect.isclass
            import warnings
            warnings.warn(
                "Decorating classes is deprecated and will be disabled in future versions. "
                "You should only decorate functions or methods. To preserve the current "
                "behavior of class decoration, you can directly decorate the `__init__` "
                "method and nothing else.", FutureWarning, stacklevel=2)
            cls = orig_func

            def func(*args, **kwargs):
                return cls(*args, **kwargs)
        else:
            func = orig_func
        if _is_generator_function(func):
            return _wrap_generator(self.clone, func)
        make_context = self.clone

        @functools.wraps(func)
        def decorate_context(*args, **kwargs):
            with make_context():
                return func(*args, **kwargs)

        return decorate_context

    def clone(self):
        return self.__class__()


class _NoParamDecoratorContextManager(_DecoratorContextManager):
    """Also decorates without parentheses: @no_grad as @no_grad()."""

    def __new__(cls, orig_func=None):
        if orig_func is None:
            return super().__new__(cls)
        return cls()(orig_func)


class no_grad(_NoParamDecoratorContextManager):
    """Disables grad mode in this thread while active (``with pith.no_grad():``,
    ``@pith.no_grad()``, ``@pith.no_grad``). Factories still honour requires_grad=, as in
    PyTorch."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(False)

    def __exit__(self, exc_type, exc_value, traceback):
        _C._set_grad_enabled(self.prev)


class enable_grad(_NoParamDecoratorContextManager):
    """Enables grad mode in this thread while active, inside no_grad or
    set_grad_enabled(False) too."""

    def __init__(self):
        self.prev = False

    def __enter__(self):
        self.prev = _C.is_grad_enabled()
        _C._set_grad_enabled(True)

    def __exit__(self, exc_type, exc_value, traceback):
        _C._set_grad_enabled(self.prev)


class set_grad_enabled(_DecoratorContextManager):
    """set_grad_enabled(mode): sets grad mode at once (a plain call works), and restores the
    previous mode on leaving a ``with`` block; as a decorator, the mode applies to the calls
    only."""

    def __init__(self, mode):
        self.prev = _C.is_grad_enabled()
        self.mode = mode
        _C._set_grad_enabled(mode)

    def __call__(self, orig_func):
        _C._set_grad_enabled(self.prev)
        return super().__call__(orig_func)

    def __enter__(self):
        _C._set_grad_enabled(self.mode)

    def __exit__(self, exc_type, exc_value, traceback):
        _C._set_grad_enabled(self.prev)

    def __str__(self):
        return f"{type(self).__module__}.{type(self).__qualname__}(mode={self.mode})"

    def __repr__(self):
        return str(self)

    def clone(self):
        return self.__class__(self.mode)


class inference_mode(_DecoratorContextManager):
    """inference_mode(mode=True): while active, inference mode is `mode` and grad mode is
    `not mode` in this thread, as PyTorch's InferenceMode sets them; tensors created then are
    inference tensors (Tensor.is_inference()). ``@pith.inference_mode`` works without
    parentheses too."""

    def __init__(self, mode=True):
        self.mode = mode

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        return cls()(mode)

    def __enter__(self):
        self._saved = (_C.is_grad_enabled(), _C.is_inference_mode_enabled())
        _C._set_inference_mode_enabled(self.mode)
        _C._set_grad_enabled(not self.mode)

    def __exit__(self, exc_type, exc_value, traceback):
        grad, inference = self._saved
        _C._set_inference_mode_enabled(inference)
        _C._set_grad_enabled(grad)

    def clone(self):
        return self.__class__(self.mode)
