"""pith.ops: every registered operator as pith.ops.<ns>.<name>.<overload>.

The overloads are pith._C.OpOverload objects, made in C from each operator's parsed schema
(python_bindings/_C/op_objects.c); calling one binds its arguments in C (Note [One binder],
python_bindings/_C/binder.c). This file only arranges them into namespaces and packets,
and copies the op table's functions (pith._C.Function) into the pith namespace.
"""
from . import _C

OpOverload = _C.OpOverload
Argument = _C.Argument
# The default of an argument that has none (OpOverload.arguments).
_NO_DEFAULT = _C._NO_DEFAULT


class OpPacket:
    """pith.ops.<ns>.<name>: calls the default overload; overloads are attributes."""

    def __init__(self, qualified):
        self.name = qualified
        self._overloads = {}
        self._default = None

    def _add(self, overload_name, op):
        self._overloads[overload_name or "default"] = op
        if not hasattr(OpPacket, overload_name or "default"):
            setattr(self, overload_name or "default", op)  # found without __getattr__
        if self._default is None or overload_name == "":
            self._default = op

    @property
    def schema(self):
        return self._default.schema

    def overloads(self):
        return list(self._overloads)

    def __getattr__(self, name):
        try:
            return self.__dict__["_overloads"][name]
        except KeyError:
            raise AttributeError(f"{self.name} has no overload {name!r}") from None

    def __call__(self, /, *args, **kwargs):
        return self._default(*args, **kwargs)

    def __repr__(self):
        return f"pith.ops.{self.name.replace('::', '.')}"


class _Namespace:
    def __init__(self, name):
        self._name = name
        self._packets = {}

    def __getattr__(self, name):
        try:
            return self.__dict__["_packets"][name]
        except KeyError:
            _refresh()  # an operator defined since the last look (pith_op_define)
            try:
                return self.__dict__["_packets"][name]
            except KeyError:
                raise AttributeError(f"pith.ops.{self._name} has no operator {name!r}") from None

    def __dir__(self):
        return sorted(self._packets)


class _Ops:
    def __init__(self):
        self._namespaces = {}

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        namespaces = self.__dict__["_namespaces"]
        if name not in namespaces:
            _refresh()
        if name not in namespaces:
            raise AttributeError(f"pith.ops has no namespace {name!r}")
        return namespaces[name]

    def __dir__(self):
        return sorted(self._namespaces)


ops = _Ops()
_seen = 0


def _refresh():
    global _seen
    table = _C._op_overloads()
    for op in table[_seen:]:
        ns, _, rest = op.name.partition("::")
        name, _, overload = rest.partition(".")
        space = ops._namespaces.get(ns)
        if space is None:
            space = ops._namespaces[ns] = _Namespace(ns)
            setattr(ops, ns, space)  # found without __getattr__
        packet = space._packets.get(name)
        if packet is None:
            packet = space._packets[name] = OpPacket(f"{ns}::{name}")
            setattr(space, name, packet)  # found without __getattr__
        packet._add(overload, op)
        op.overloadpacket = packet
    _seen = len(table)


_refresh()


def surface():
    """[(name, variants)]: the op table's Python surface (Note [The Python surface of the
    op table], kernels/op_table.h)."""
    return _C._surface()


def install_methods(namespace):
    """Copies the op table's pith.* functions (pith._C.Function objects, made by the C
    binder) into the pith namespace; the methods are on pith.Tensor already."""
    for name, variants in _C._surface():
        if variants in ("both", "function"):
            namespace[name] = getattr(_C, name)
