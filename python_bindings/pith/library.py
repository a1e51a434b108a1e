"""pith.library: operators defined from Python, as torch.library.

    pith.library.define("mylib::scale(Tensor x, float factor=2) -> Tensor")

    @pith.library.impl("mylib::scale", "CPU")
    def scale(x, factor=2):
        ...

    pith.ops.mylib.scale(t)

An operator defined here (or from C with pith_op_define) is a pith.ops overload like any
built-in one: it reaches __pith_dispatch__ and the dispatch modes. A Python kernel gets the
op's arguments as a handler does (keyword-only ones as keywords, defaults left out) and
belongs to the interpreter that registered it: another interpreter calling it gets
pith.InterpreterError.
"""
from . import _C, _ops

__all__ = ["define", "impl"]

# Dispatch keys by the names PyTorch's torch.library also accepts (device types).
_KEYS = {"cpu": "CPU", "meta": "Meta", "python": "Python", "pythonmode": "PythonMode",
         "autograd": "Autograd"}


def define(qualname, schema=None):
    """Defines an operator: ``define("ns::name(Tensor x) -> Tensor")``, or PyTorch's
    ``define("ns::name", "(Tensor x) -> Tensor")``. Returns its pith.ops overload."""
    if schema is not None:
        if not isinstance(qualname, str) or not isinstance(schema, str):
            raise TypeError("define(qualname, schema): both must be str")
        text = qualname + schema
    else:
        text = qualname
    _C._op_define(text)
    _ops._refresh()
    name = text[:text.index("(")].strip()
    ns, _, rest = name.partition("::")
    packet_name, _, overload = rest.partition(".")
    return getattr(getattr(getattr(_ops.ops, ns), packet_name), overload or "default")


def _key_name(key):
    if not isinstance(key, str):
        raise TypeError(f"impl(): a dispatch key must be a str, not {type(key).__name__}")
    return _KEYS.get(key.lower(), key)


def _op_name(op):
    if isinstance(op, (_ops.OpOverload, _ops.OpPacket)):
        return op.name
    if not isinstance(op, str):
        raise TypeError(f"impl(): the operator must be a name or a pith.ops overload, "
                        f"not {type(op).__name__}")
    return op


def impl(op, types, func=None):
    """Registers ``func`` as the kernel of ``op`` ("ns::name", "ns::name.overload" or a
    pith.ops overload) for the dispatch key(s) ``types`` ("CPU", "Meta", or a sequence of
    them). Used as a decorator when ``func`` is omitted."""
    name = _op_name(op)
    keys = [types] if isinstance(types, str) else list(types)

    def register(fn):
        for key in keys:
            _C._kernel_register_python(name, _key_name(key), fn)
        return fn

    return register if func is None else register(func)
