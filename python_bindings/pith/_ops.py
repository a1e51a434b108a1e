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

    def __call__(self, /, *args, **kwargs):
        return self._default(*args, **kwargs)

    def __repr__(self):
        return f"pith.ops.{self.name.replace('::', '.')}"


def _lazy_module(qualified, entries):
    """A module object (pith.ops, pith.ops.<ns>) whose attributes are `entries`: a module,
    because Python 3.11 specialises attribute loads from modules (pith.ops.pith.add.Tensor
    costs four plain lookups), with PEP 562's __getattr__ looking again after a refresh,
    for an operator defined since the last look (pith.library.define, pith_op_define)."""
    module = type(_C)(qualified)  # types.ModuleType, without importing types

    def __getattr__(name):
        if not name.startswith("__"):
            _refresh()
            if name in entries:
                return entries[name]
        raise AttributeError(f"{qualified} has no attribute {name!r}")

    module.__getattr__ = __getattr__
    return module


_namespaces = {}
ops = _lazy_module("pith.ops", _namespaces)
_seen = 0


def _refresh():
    global _seen
    table = _C._op_overloads()
    for op in table[_seen:]:
        ns, _, rest = op.name.partition("::")
        name, _, overload = rest.partition(".")
        space = _namespaces.get(ns)
        if space is None:
            packets = {}
            space = _namespaces[ns] = _lazy_module(f"pith.ops.{ns}", packets)
            space._packets = packets
            setattr(ops, ns, space)
        packet = space._packets.get(name)
        if packet is None:
            packet = space._packets[name] = OpPacket(f"{ns}::{name}")
            setattr(space, name, packet)
        packet._add(overload, op)
        op.overloadpacket = packet
    _seen = len(table)


# The namespaces and packets are made on the first look into pith.ops (its __getattr__) or
# at an OpOverload's first .overloadpacket (op_objects.c), not at import.


def surface():
    """[(name, variants)]: the op table's Python surface (Note [The Python surface of the
    op table], python_bindings/_C/op_surface.c)."""
    return _C._surface()


def install_methods(namespace):
    """Copies the op table's pith.* functions (pith._C.Function objects, made by the C
    binder) into the pith namespace; the methods are on pith.Tensor already."""
    for name, variants in _C._surface():
        if variants in ("both", "function"):
            namespace[name] = getattr(_C, name)
