"""pith.ops and the generated method table.

Every registered operator is reachable as pith.ops.<ns>.<name> (its default overload) and
pith.ops.<ns>.<name>.<overload>. An overload binds Python arguments from its schema
(positional, keyword, defaults) and calls pith._C._call_op, which pushes them onto a
boxed stack and dispatches. The common Tensor methods and pith.* functions are built from
these overloads, with PyTorch's keyword names, so there is one table: the registry.
"""
from . import _C

_NO_DEFAULT = object()


def _parse_default(text, type_):
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith("["):
        return [int(v) for v in text[1:-1].split(",") if v.strip()]
    if text[0] in "'\"":
        return text[1:-1]
    try:
        return int(text)
    except ValueError:
        return float(text)


class Argument:
    __slots__ = ("name", "type", "default", "kwarg_only", "mutable")

    def __init__(self, name, type_, default, kwarg_only, mutable=False):
        self.name, self.type, self.default, self.kwarg_only = name, type_, default, kwarg_only
        self.mutable = mutable  # Tensor(a!): the op writes to it

    def __repr__(self):
        return f"Argument({self.type} {self.name})"


def parse_arguments(schema):
    """The arguments of a schema 'ns::name.overload(args) -> returns'."""
    inner = schema[schema.index("(") + 1:schema.rindex(") ->")]
    args, kwarg_only, depth, start = [], False, 0, 0
    pieces = []
    for i, ch in enumerate(inner):
        depth += ch in "[("
        depth -= ch in "])"
        if ch == "," and depth == 0:
            pieces.append(inner[start:i])
            start = i + 1
    pieces.append(inner[start:])
    for piece in (p.strip() for p in pieces):
        if not piece:
            continue
        if piece == "*":
            kwarg_only = True
            continue
        declared, _, default_text = piece.partition("=")
        type_text, _, name = declared.strip().rpartition(" ")
        if not type_text or not name.isidentifier():
            raise RuntimeError(f"pith: cannot parse argument {piece!r} of {schema!r}")
        type_ = _normalise_type(type_text.strip())
        default = _parse_default(default_text.strip(), type_) if default_text else _NO_DEFAULT
        args.append(Argument(name, type_, default, kwarg_only, "!" in type_text))
    return args


def _normalise_type(text):
    """'Tensor(a!)' -> 'Tensor', 'int[1]?' -> 'int[]?': the alias annotation and a list's
    fixed length do not change how a Python value is passed. (No `re`: see the import-time
    budget in docs/python.md.)"""
    paren = text.find("(")
    if paren >= 0:
        text = text[:paren] + text[text.index(")", paren) + 1:]
    bracket = text.find("[")
    if bracket >= 0:
        text = text[:bracket + 1] + text[text.index("]", bracket):]
    return text


def _return_names(schema):
    """('values', 'indices') for '... -> (Tensor values, Tensor indices)'; () if unnamed."""
    inner = schema[schema.rindex("-> (") + 4:schema.rindex(")")]
    names = tuple(part.split()[-1] for part in inner.split(",") if len(part.split()) == 2)
    return names if len(names) == inner.count(",") + 1 else ()


class OpOverload:
    """One operator overload: pith.ops.pith.add.Tensor. Callable; has .name and .schema."""

    def __init__(self, name, schema):
        self.name = name                      # "pith::add.Tensor"
        self.schema = schema
        self.returns_tuple = "-> (" in schema
        self._arguments = None  # parsed on first use: import pith stays fast

    @property
    def arguments(self):
        if self._arguments is None:
            self._arguments = parse_arguments(self.schema)
            # As _C._call_op reads them: "Tensor!" is a tensor the op writes to, which takes
            # no Python number (python_bindings/_C/ops.c, push_value).
            self._types = tuple("Tensor!" if a.mutable and a.type == "Tensor" else a.type
                                for a in self._arguments)
            self._index = {a.name: i for i, a in enumerate(self._arguments)}
            self.return_names = _return_names(self.schema) if self.returns_tuple else ()
        return self._arguments

    def __repr__(self):
        return f"pith.ops.{self.name.replace('::', '.')}"

    def bind(self, args, kwargs):
        """The argument values in schema order, up to the last one given."""
        params = self.arguments
        positional = [a for a in params if not a.kwarg_only]
        if (len(args) > len(positional) and positional and positional[-1].type == "int[]"
                and all(isinstance(a, int) for a in args[len(positional) - 1:])):
            # PyTorch's varargs size: x.view(2, 3) is x.view((2, 3)).
            args = args[:len(positional) - 1] + (list(args[len(positional) - 1:]),)
        if len(args) > len(positional):
            raise TypeError(f"{self.name}() takes at most {len(positional)} positional "
                            f"arguments but {len(args)} were given")
        values = list(args)
        last = len(values)
        slots = {}
        for key, value in kwargs.items():
            i = self._index.get(key)
            if i is None:
                raise TypeError(f"{self.name}() got an unexpected keyword argument '{key}'")
            if i < len(values):
                raise TypeError(f"{self.name}() got multiple values for argument '{key}'")
            slots[i] = value
            last = max(last, i + 1)
        for i in range(len(values), last):
            if i in slots:
                values.append(slots[i])
            elif params[i].default is not _NO_DEFAULT:
                values.append(params[i].default)
            else:
                raise TypeError(f"{self.name}() missing required argument '{params[i].name}'")
        for param in params[last:]:
            if param.default is _NO_DEFAULT and not param.type.endswith("?"):
                raise TypeError(f"{self.name}() missing required argument '{param.name}'")
        return tuple(values)

    def __call__(self, /, *args, **kwargs):  # positional-only: an op may have a `self` argument
        if not kwargs:
            fast = self._fast or self._make_fast()
            if fast[0] <= len(args) <= fast[1]:
                results = _C._call_op(self.name, args, fast[2][len(args)])
                if self.returns_tuple:
                    return results if results else None
                return results[0] if results else None
        return self.call_bound(self.bind(args, kwargs))

    _fast = None

    def _make_fast(self):
        """(fewest, most, types by count): the positional calls that need no binding (every
        required argument given, no keyword-only one, no varargs size)."""
        params = self.arguments
        positional = [a for a in params if not a.kwarg_only]
        required = 0
        for i, a in enumerate(positional):
            if a.default is _NO_DEFAULT and not a.type.endswith("?"):
                required = i + 1
        most = len(positional)
        if any(a.default is _NO_DEFAULT and not a.type.endswith("?") for a in params[most:]):
            most = -1  # a required keyword-only argument: always bind
        self._fast = (required, most, tuple(self._types[:n] for n in range(len(params) + 1)))
        return self._fast

    def call_bound(self, values):
        """Calls the op with `values` from bind()."""
        results = _C._call_op(self.name, values, self._types[:len(values)])
        if self.returns_tuple:
            return results if results else None
        return results[0] if results else None


class OpPacket:
    """pith.ops.<ns>.<name>: calls the default overload; overloads are attributes."""

    def __init__(self, qualified):
        self.name = qualified
        self._overloads = {}
        self._default = None

    def _add(self, overload_name, op):
        self._overloads[overload_name or "default"] = op
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
    table = _C._op_list()
    for qualified, schema in table[_seen:]:
        ns, _, rest = qualified.partition("::")
        name, _, overload = rest.partition(".")
        space = ops._namespaces.setdefault(ns, _Namespace(ns))
        packet = space._packets.setdefault(name, OpPacket(f"{ns}::{name}"))
        packet._add(overload, OpOverload(qualified, schema))
    _seen = len(table)


_refresh()

# ---- the method table ----------------------------------------------------------------

# Ops exposed as both pith.<name>(...) and Tensor.<name>(...); names are PyTorch's.
_METHODS_AND_FUNCTIONS = """
add sub mul div floor_divide remainder pow maximum minimum eq ne lt le gt ge
logical_and logical_or bitwise_and bitwise_or bitwise_xor
neg abs sign exp log log1p sqrt rsqrt sin cos tanh sigmoid relu silu logical_not bitwise_not
clamp where sum mean prod amax amin max min argmax argmin var std all any
matmul mm bmm addmm view reshape permute transpose t expand squeeze unsqueeze flatten
narrow select split chunk unbind contiguous detach clone masked_fill tril triu
index_select gather softmax log_softmax copy_ nonzero masked_select index_put
""".split()
_FUNCTIONS_ONLY = ("cat stack linear embedding layer_norm gelu linspace eye randint "
                   "empty_strided").split()
# PyTorch's functions take `input` where the schema (and the method) say `self`.
_METHOD_ONLY = {"view", "expand", "contiguous", "copy_"}

# Results that PyTorch returns as named tuples (torch.return_types.max ...).
_NAMED_RETURNS = {}


def _named_return(name, fields):
    import collections
    cls = _NAMED_RETURNS.get(name)
    if cls is None:
        cls = collections.namedtuple(name, fields)
        cls.__module__ = "pith.return_types"
        _NAMED_RETURNS[name] = cls
    return cls


def _has_out(op):
    return any(a.name == "out" for a in op.arguments)


def _overloaded(packet):
    """The generic implementation of an op's method and function: picks the first overload
    of `packet` whose arguments bind and fit (See Note [Method fast paths], methods.c);
    out= picks the out overloads."""
    short = packet.name.partition("::")[2]
    split = []  # [plain overloads, out overloads], filled on the first call

    def overloads(want_out):
        if not split:
            candidates = list(packet._overloads.values())
            with_out = [op for op in candidates if _has_out(op)]
            split.extend(([op for op in candidates if not _has_out(op)] or candidates,
                          with_out))
        return split[1] if want_out else split[0]

    def call(*args, **kwargs):
        if "input" in kwargs and not args:
            args = (kwargs.pop("input"),)
        error = None
        for op in overloads("out" in kwargs):
            try:
                values = op.bind(args, kwargs)
            except TypeError as e:
                error = error or e
                continue
            if not _plausible(op, values):
                continue
            result = op.call_bound(values)
            if type(result) is list:
                result = tuple(result)  # Tensor[] results are tuples, as PyTorch's
            elif op.returns_tuple and isinstance(result, tuple):
                fields = op.return_names
                if fields:
                    result = _named_return(short, fields)(*result)
            return result
        if "out" in kwargs and not overloads(True):
            raise TypeError(f"{short}() got an unexpected keyword argument 'out'")
        raise error or TypeError(f"{short}(): no overload matches the arguments "
                                 f"{tuple(type(a).__name__ for a in args)}")

    call.__name__ = short
    call.__qualname__ = short
    return call


def _plausible(op, values):
    """Whether values fit the overload's argument types well enough to try it."""
    for arg, v in zip(op.arguments, values):
        t = arg.type.rstrip("?")
        if v is None:
            if not arg.type.endswith("?"):
                return False
        elif t == "Tensor" and not isinstance(v, (_C.Tensor, int, float)):
            return False
        elif t == "int" and (not isinstance(v, int) or isinstance(v, _C.Tensor)):
            return False
        elif t == "int[]" and isinstance(v, _C.Tensor):
            return False
    return True


# name -> the generic implementation behind a fast C method or function (tests compare the
# two paths; See Note [Method fast paths], python_bindings/_C/methods.c).
generics = {}


def set_generic(name, fn):
    generics[name] = fn
    _C._set_generic(name, fn)


def install_methods(namespace):
    """Fills pith.* and pith.Tensor with the op functions and methods: the C fast paths
    where methods.c has one, each backed by the generic implementation registered here."""
    fast_methods, fast_functions = (set(names) for names in _C._fast_names())
    pith_ops = ops.pith
    for name in _METHODS_AND_FUNCTIONS + _FUNCTIONS_ONLY:
        packet = pith_ops._packets.get(name)
        if packet is None:
            raise ImportError(f"pith: the operator pith::{name} is not registered")
        generic = _overloaded(packet)
        set_generic(name, generic)
        if name not in _METHOD_ONLY:
            namespace[name] = getattr(_C, name) if name in fast_functions else generic
        if name in _METHODS_AND_FUNCTIONS and name not in fast_methods:
            setattr(_C.Tensor, name, generic)
        inplace = pith_ops._packets.get(name + "_")
        if inplace is not None and name in _METHODS_AND_FUNCTIONS:
            generic_ = _overloaded(inplace)
            set_generic(name + "_", generic_)
            if name + "_" not in fast_methods:
                setattr(_C.Tensor, name + "_", generic_)
