"""pith.utils: dispatch modes and no_dispatch, PyTorch's torch.utils._python_dispatch; the
data loading package pith.utils.data (torch.utils.data) and pith.utils.checkpoint
(torch.utils.checkpoint), imported on first use.

A subclass of pith.Tensor that defines the classmethod
``__pith_dispatch__(cls, func, types, args=(), kwargs=None)`` handles every op on its
instances; a :class:`DispatchMode` handles every op called while it is active on the thread.
``func`` is the ``pith.ops`` overload being called (``pith.ops.pith.add.Tensor``). See
docs/python.md and python_bindings/_C/python_dispatch.c.
"""
from .. import _C, _ops

__all__ = ["DispatchMode", "no_dispatch"]


def __getattr__(name):
    # pith.utils.data is imported on first use (PEP 562), as pith.nn is: `import pith`, which
    # imports this module, stays within its import-time budget (docs/python.md, "Import
    # cost").
    if name in ("data", "checkpoint"):
        import sys
        __import__(f"pith.utils.{name}")  # importlib.import_module, without importlib
        return sys.modules[f"pith.utils.{name}"]
    raise AttributeError(f"module 'pith.utils' has no attribute {name!r}")


class DispatchMode:
    """A context manager whose ``__pith_dispatch__(self, func, types, args=(), kwargs=None)``
    sees every op called on this thread while it is active: factories and ops on plain
    tensors included. Modes nest: the innermost handles an op first, and while its handler
    runs it is popped, so ``func(*args, **kwargs)`` inside it reaches the next mode, the
    tensor subclasses and the kernel. Returning ``NotImplemented`` passes the op to the
    subclasses' handlers. The mode stack is per thread (and per interpreter)."""

    def __pith_dispatch__(self, func, types, args=(), kwargs=None):
        raise NotImplementedError(
            f"{type(self).__name__} must implement __pith_dispatch__")

    def __enter__(self):
        _C._push_dispatch_mode(self)
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _C._pop_dispatch_mode(self)
        return False


class no_dispatch:
    """``with no_dispatch():`` runs ops below the Python keys: neither the dispatch modes
    nor ``__pith_dispatch__`` are called, and a wrapper subclass reaches the Meta kernels
    (it holds no data). Inside a handler, ``func(*args)`` on the subclass tensors themselves
    then runs the kernel instead of calling the handler again."""

    __slots__ = ("_saved",)

    def __enter__(self):
        self._saved = _C._exclude_dispatch()
        return self

    def __exit__(self, exc_type, exc_value, traceback):
        _C._restore_dispatch(self._saved)
        return False


def _get_current_dispatch_mode():
    """The innermost active dispatch mode of this thread, or None."""
    stack = _C._dispatch_mode_stack()
    return stack[-1] if stack else None


def _get_current_dispatch_mode_stack():
    """This thread's active dispatch modes, innermost last."""
    return _C._dispatch_mode_stack()


# ---- what the C side asks of Python (python_dispatch.c) ----------------------------------

# What a handler call is made from, read from the C parse of the schema (Note [Arguments
# of a boxed call], python_bindings/_C/python_dispatch.c).
_dispatch_spec = _C._dispatch_spec


# What every instance of pith._C needs (another instance sets itself up from here).
_setup_args = (_dispatch_spec, _ops._NO_DEFAULT)
_C._pydispatch_setup(*_setup_args)
