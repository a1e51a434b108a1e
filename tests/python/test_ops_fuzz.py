"""Fuzzing every registered operator: bad input raises an Exception, never crashes.

For every op of pith._C._op_overloads() (but the pith_testing ones, which block by design), the
property tests call pith.ops.<ns>.<name>.<overload> with well-typed arguments of awkward
values (every dtype; 0-dim, empty, broadcastable or not, transposed, stepped, expanded,
offset, meta, large (past the parallel grain) and wrapper-subclass tensors; dims out of
range, huge and negative ints, NaN and inf, empty and over-long lists), with ill-typed
arguments, and with wrong argument counts and keyword names. A call must return, or raise an
Exception that is not a SystemError (a C-level bug: NULL without an exception, or both); a
result must be a sane tensor (non-negative sizes, values that read back). The pith.*
functions and Tensor methods get the same calls, and each must agree with the same call made
on the OpOverload it was generated for (See Note [One binder], binder.c). Then come fixed
awkward calls (overflowing sizes, huge meta shapes) and one test per bug the fuzzer found.

Each call is generated as Python source text and evaluated, so a failure prints a line that
reproduces it. The generators take their choices from a `source`: Hypothesis' data in the
tests (derandomized: the same calls on every run), or random.Random when exploring, which is
best done in a loop of subprocesses, since a crash ends the process:

    python tests/python/test_ops_fuzz.py SEED COUNT [OP ...]  # prints each call first

Under ASan, run with ASAN_OPTIONS=allocator_may_return_null=1: some calls ask for more
memory than exists on purpose (pith must raise MemoryError), which ASan aborts by default.
"""
import math
import random
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import pith
from pith import _C

# ---- the ops ---------------------------------------------------------------------------------

SKIPPED_NAMESPACES = {"pith_testing"}
WAITING_WORDS = ("wait", "sleep", "block")


def fuzzed_ops():
    """(qualified name, schema) of every op the fuzzer calls, sorted by name."""
    ops = []
    for name, schema in [(op.name, op.schema) for op in _C._op_overloads()]:
        namespace = name.partition("::")[0]
        if namespace in SKIPPED_NAMESPACES or any(w in name for w in WAITING_WORDS):
            continue
        ops.append((name, schema))
    return sorted(ops)


OPS = fuzzed_ops()


def op_code(name):
    """'pith.ops.pith.add.Tensor' for 'pith::add.Tensor' ('.default' for no overload)."""
    namespace, _, rest = name.partition("::")
    short, _, overload = rest.partition(".")
    return f"pith.ops.{namespace}.{short}.{overload or 'default'}"


def op_arguments(name):
    return eval(op_code(name)).arguments  # noqa: S307 (our own text)


# Ops whose int and int[] arguments size a new tensor (or count the results: chunk of an
# empty tensor makes `chunks` of them, as PyTorch's): they never get the moderately large
# values (2**31 ...) that are valid sizes, or a fuzz run would allocate and fill gigabytes.
FACTORIES = {"empty", "empty_strided", "zeros", "ones", "full", "arange", "linspace", "eye",
             "rand", "randn", "randint", "chunk", "split"}
# Ops whose results hold uninitialised memory: their values are not read back.
UNINITIALISED = ("empty", "empty_strided")


def is_factory(name):
    return name.partition("::")[2].partition(".")[0] in FACTORIES


# ---- choices ---------------------------------------------------------------------------------

class RandomSource:
    """Choices from random.Random (exploring by hand)."""

    def __init__(self, seed):
        self.rng = random.Random(seed)

    def choice(self, options):
        return self.rng.choice(options)

    def integer(self, lo, hi):
        return self.rng.randint(lo, hi)


class HypothesisSource:
    """Choices drawn from a Hypothesis `data` object (the tests)."""

    def __init__(self, data):
        self.data = data

    def choice(self, options):
        return self.data.draw(st.sampled_from(options))

    def integer(self, lo, hi):
        return self.data.draw(st.integers(lo, hi))


def chance(source, percent):
    return source.integer(0, 99) < percent


# ---- a tensor subclass -----------------------------------------------------------------------

class Passthrough(pith.Tensor):
    """A wrapper subclass (no data of its own) whose __pith_dispatch__ runs each op on the
    tensors it wraps: an operand that takes every op through the Python dispatch key."""

    @staticmethod
    def __new__(cls, elem):
        # (a meta elem makes a meta wrapper: an in-place op returns the wrapper itself, whose
        # values are read back only when it says 'cpu')
        device = {"device": "meta"} if str(elem.device) == "meta" else {}
        wrapper = pith.Tensor._make_wrapper_subclass(cls, elem.shape, dtype=elem.dtype,
                                                     **device)
        wrapper.elem = elem
        return wrapper

    @classmethod
    def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
        def unwrap(v):
            if isinstance(v, (list, tuple)):
                return type(v)(unwrap(item) for item in v)
            return v.elem if isinstance(v, Passthrough) else v
        return func(*unwrap(args), **unwrap(kwargs or {}))


# ---- values, as source text ------------------------------------------------------------------

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64",
          "float16", "bfloat16", "float32", "float64"]
INDEX_DTYPES = ["int64", "int64", "int64", "int32", "bool", "uint8", "float32"]
SHAPES = [(), (0,), (1,), (2,), (3,), (1, 1), (2, 3), (3, 2), (1, 3), (3, 1), (0, 3), (2, 0),
          (2, 3, 4), (2, 1, 3), (4, 3), (2, 2, 2, 2)]
# Shapes above the parallel grain and the GIL-release threshold (32768 elements), rarely.
LARGE_SHAPES = [(33000,), (2, 17000), (200, 170), (34, 33, 30)]
LAYOUTS = ["contiguous"] * 4 + ["transposed", "stepped", "expanded", "offset", "huge-step"]
# The step of a slice that leaves one element: the dim's stride is stride * step when that
# stays far from overflow, and its own stride otherwise (views_slicing.c, geometry_narrow:
# once, stride * step wrapped, and the kernels' stride * itemsize overflowed under UBSan).
HUGE_STEPS = ["2**40", "2**55", "2**62", "2**100"]

NAN, INF = "float('nan')", "float('inf')"
AWKWARD_VALUES = {
    "bool": ["False", "True"],
    "uint8": ["0", "1", "2", "255", "7"],
    "int8": ["0", "1", "-1", "2", "127", "-128"],
    "int16": ["0", "1", "-1", "2", "32767", "-32768"],
    "int32": ["0", "1", "-1", "2", str(-2**31), str(2**31 - 1)],
    "int64": ["0", "1", "-1", "3", str(-2**63), str(2**63 - 1), str(2**40)],
    "float": ["0.0", "1.0", "-1.0", "2.5", "-0.0", NAN, INF, "-" + INF, "1e30", "5e-324"],
}
SMALL_VALUES = {"bool": ["False", "True"], "float": ["0.0", "1.0", "2.0", "0.5"]}

SMALL_INTS = ["0", "1", "-1", "2", "-2", "3"]
HUGE_INTS = [str(v) for v in (2**62, -2**62, 2**63 - 1, -2**63, 64, 65, -65, 17, -17)]
MODERATE_INTS = [str(v) for v in (2**31 - 1, 2**31, -2**31 - 1, 2**32)]
OVERFLOW_INTS = [str(v) for v in (2**63, -2**63 - 1, 2**100)]
SCALARS = (["0", "1", "-1", "2", "2.5", "0.5", "-0.0", "True", "False", NAN, INF, "-" + INF,
            "1e300", "-1e300", "1e-300"] + [str(v) for v in (2**62, -2**63, 2**63 - 1, 2**63)])
NICE_SCALARS = ["0", "1", "2", "-1", "2.5", "True"]

# Values of the wrong type for any argument.
ILL_TYPED = ["None", "'abc'", "''", "1.5", "True", "[]", "[1.5]", "[[1]]", "['a']", "[None]",
             "object()", "pith.float32", "(1, 'x')", "{1: 2}", "b'x'", "1j", "...", "[[]]",
             "slice(None)", "type", "pith", "[pith.float32]", "[object()]", "2**100",
             "float('nan')", "[True]", "[1, [2]]", "pith.zeros((2,))", "[pith.zeros(())]",
             "range(3)", "iter([1])", "'cpu'"]


def nested(pool, shape, seed):
    """Source text of a nested list of `shape` with values cycled from `pool`."""
    counter = iter(range(10**6))

    def level(dims):
        if not dims:
            return pool[(seed + 7 * next(counter)) % len(pool)]
        return "[" + ", ".join(level(dims[1:]) for _ in range(dims[0])) + "]"
    return level(list(shape))


# Operand shapes that fit together, for the ops that need more than broadcasting (a nice
# call often takes them): the shapes of the Tensor arguments (and Tensor?[] entries) in
# schema order.
SHAPE_HINTS = {
    "mm": [[(2, 3), (3, 4)], [(0, 3), (3, 2)], [(2, 0), (0, 3)], [(1, 1), (1, 1)]],
    "bmm": [[(2, 2, 3), (2, 3, 4)], [(0, 2, 3), (0, 3, 1)], [(1, 2, 0), (1, 0, 3)]],
    "addmm": [[(2, 4), (2, 3), (3, 4)], [(4,), (2, 3), (3, 4)], [(), (2, 0), (0, 3)]],
    "matmul": [[(3,), (3,)], [(2, 3), (3,)], [(3,), (3, 2)], [(2, 2, 3), (3, 4)],
               [(4, 2, 3), (1, 3, 2)], [(2, 1, 2, 3), (3, 3, 2)], [(0, 3), (3, 0)]],
    "linear": [[(2, 3), (4, 3), (4,)], [(3,), (4, 3)], [(2, 2, 3), (1, 3), ()]],
    "layer_norm": [[(2, 3), (3,), (3,)], [(2, 3, 4), (3, 4), (3, 4)], [(0, 3), (3,), (3,)]],
    "embedding": [[(4, 3), (2,)], [(4, 3), (2, 2)], [(4, 3), ()], [(0, 3), (0,)]],
    "index_select": [[(3, 4), (2,)], [(3, 4), ()], [(3,), (3,)], [(0, 2), (0,)]],
    "gather": [[(3, 4), (3, 2)], [(3, 4), (1, 4)], [(3,), (2,)], [(), ()]],
    "index": [[(3, 4), (2,)], [(3, 4), (2,), (2,)], [(3, 4), (3, 4)], [(3,), (3,)]],
    "index_put": [[(3, 4), (2,), ()], [(3, 4), (2,), (2, 4)], [(3, 4), (2,), (2,), (2,)],
                  [(3, 4), (3, 4), ()]],
    "masked_select": [[(3, 4), (3, 4)], [(3, 4), (4,)], [(2,), (2, 2)]],
    "masked_fill": [[(3, 4), (3, 4)], [(3, 4), (4,)], [(3, 4), ()]],
    "where": [[(3, 4), (3, 4), (3, 4)], [(3, 1), (4,), ()], [(), (2,), (2,)]],
}
SHAPE_HINTS["index_put_"] = SHAPE_HINTS["index_put"]
SHAPE_HINTS["masked_fill_"] = SHAPE_HINTS["masked_fill"]


class Call:
    """The choices of one generated call. A `nice` call keeps to values that mostly make
    sense together (one dtype, related shapes, small ints), so that it reaches the kernels;
    an awkward one draws every value from the whole range."""

    def __init__(self, source, name):
        self.source = source
        self.name = name
        self.factory = is_factory(name)
        self.nice = chance(source, 60)
        self.dtype = source.choice(DTYPES + ["float32", "float64"]) if chance(source, 80) \
            else None
        self.meta = chance(source, 10)
        self.shapes = []  # of the tensors made so far
        hints = SHAPE_HINTS.get(name.partition("::")[2].partition(".")[0])
        self.hint = list(source.choice(hints)) if hints and self.nice and chance(source, 70) \
            else []

    def chance(self, percent):
        return chance(self.source, percent)

    def choice(self, options):
        return self.source.choice(options)

    # -- tensors --

    def elements(self, dtype, small):
        kind = "float" if dtype.startswith(("float", "bfloat")) else dtype
        if small or (self.nice and self.chance(70)):
            return SMALL_VALUES.get(kind, ["0", "1", "2"])
        return AWKWARD_VALUES[kind]

    def contiguous(self, shape, dtype, small):
        numel = math.prod(shape)
        if numel == 0:
            return f"pith.zeros({tuple(shape)}, dtype=pith.{dtype})"
        if numel > 1000:  # 0, 1, 2, ... wrapped around, from -1 up when awkward
            period, low = (3, 0) if small or (self.nice and self.chance(70)) else (7, 1)
            return (f"(pith.arange({numel}).remainder({period}) - {low})"
                    f".to(pith.{dtype}).reshape({list(shape)})")
        data = nested(self.elements(dtype, small), shape, self.source.integer(0, 50))
        return f"pith.tensor({data}, dtype=pith.{dtype})"

    def shape(self):
        """A shape: often one of an earlier operand's, or its reverse (matmul)."""
        roll = self.source.integer(0, 99)
        if self.hint:
            shape = self.hint.pop(0)
        elif self.shapes and roll < 45:
            shape = self.choice(self.shapes)
        elif self.shapes and roll < 60:
            shape = self.choice(self.shapes)[::-1]
        elif roll < 97:
            shape = self.choice(SHAPES)
        else:
            shape = self.choice(LARGE_SHAPES)
        self.shapes.append(shape)
        return shape

    def tensor(self, shape=None, dtype=None, small=False):
        """A tensor: every dtype, shape and layout unless given; meta ones too."""
        dtype = dtype or (self.dtype if self.nice and self.dtype else self.choice(DTYPES))
        shape = tuple(self.shape() if shape is None else shape)
        layout = self.choice(LAYOUTS)
        ndim = len(shape)
        if self.meta or (not self.nice and self.chance(10)):
            return f"pith.ops.pith.zeros({list(shape)}, dtype=pith.{dtype}, device='meta')"
        if self.chance(4):
            return f"Passthrough({self.tensor(shape, dtype, small)})"
        if layout == "transposed" and ndim >= 2:
            base = self.contiguous(shape[::-1], dtype, small)
            return f"{base}.permute({list(range(ndim))[::-1]})"
        if layout == "stepped" and ndim >= 1:
            base = self.contiguous(shape[:-1] + (2 * shape[-1] + 1,), dtype, small)
            return f"{base}[..., 1::2]"
        if layout == "expanded" and ndim >= 1:
            small_shape = tuple(1 if i % 2 == 0 else s for i, s in enumerate(shape))
            return f"{self.contiguous(small_shape, dtype, small)}.expand({list(shape)})"
        if layout == "huge-step" and 1 in shape:
            d = shape.index(1)
            base = self.contiguous(shape[:d] + (3,) + shape[d + 1:], dtype, small)
            return f"{base}[{':, ' * d}::{self.choice(HUGE_STEPS)}]"
        if layout == "offset" and ndim >= 1:
            return f"{self.contiguous((shape[0] + 1,) + shape[1:], dtype, small)}[1:]"
        return self.contiguous(shape, dtype, small)

    def index_tensor(self):
        """An index tensor: in a nice call small int64 values (or a mask), else any."""
        if self.nice:
            dtype = self.choice(["int64", "int64", "int64", "bool"])
            return self.tensor(dtype=dtype, small=True)
        return self.tensor(dtype=self.choice(INDEX_DTYPES))

    def tensor_list(self, optional):
        length = self.choice([1, 2, 2, 3] if self.nice else [0, 1, 2, 3, 17, 70])
        if length > 3:
            return f"[{self.tensor()}] * {length}"
        items = []
        for _ in range(length):
            if optional and self.chance(30):
                items.append("None")
            elif optional:
                items.append(self.index_tensor())
            else:
                items.append(self.tensor(shape=self.shapes[0] if self.shapes and self.nice
                                         and self.chance(70) else None))
        return "[" + ", ".join(items) + "]"

    # -- ints --

    def integer(self):
        roll = self.source.integer(0, 99)
        if roll < 65 or (self.nice and roll < 95):
            return self.choice(SMALL_INTS)
        if roll < 85 or self.factory:
            return self.choice(HUGE_INTS if roll < 95 else OVERFLOW_INTS)
        return self.choice(MODERATE_INTS)

    def integer_list(self):
        roll = self.source.integer(0, 99)
        ndim = len(self.shapes[0]) if self.shapes else 0
        if self.nice and self.shapes and roll < 30:  # a permutation of the dims
            dims = [str(d) for d in range(ndim)]
            return f"[{', '.join(dims[::-1] if self.chance(50) else dims)}]"
        if self.nice and self.shapes and roll < 60:  # the first operand's shape, maybe -1
            sizes = [str(s) for s in self.shapes[0]]
            if sizes and self.chance(30):
                sizes[self.source.integer(0, len(sizes) - 1)] = "-1"
            if self.chance(40):  # or a suffix of it (layer_norm)
                sizes = sizes[self.source.integer(0, len(sizes)):]
            return f"[{', '.join(sizes)}]"
        if not self.nice and roll < 10:
            return self.integer()  # a single int where int[] goes
        length = self.choice([0, 1, 1, 2, 2, 3] if self.nice else [0, 1, 2, 3, 4, 16, 17, 70])
        if length > 4:  # long lists: sizes that multiply to something small
            return "[" + ", ".join(self.choice(["1", "1", "0", "2", "-1"])
                                   for _ in range(length)) + "]"
        items = ", ".join(self.integer() for _ in range(length))
        return self.choice([f"[{items}]", f"({items}{',' if length == 1 else ''})"])

    # -- any argument --

    def value(self, type_, name):
        """Source text of a well-typed value for an argument of schema type `type_`."""
        optional = type_.endswith("?")
        base = type_.rstrip("?")
        if optional and self.chance(15):
            return "None"
        if base == "Tensor":
            if name in ("index", "indices") and self.chance(70):
                return self.index_tensor()
            if name in ("mask", "condition") and self.chance(70):
                return self.tensor(dtype="bool")
            if self.chance(5):
                return self.choice(["1", "2.5", "-1", "True"])  # a Python number
            return self.tensor()
        if base == "Tensor[]":
            return self.tensor_list(optional=False)
        if type_ == "Tensor?[]":
            return self.tensor_list(optional=True)
        if base == "int":
            return self.integer()
        if base == "int[]":
            return self.integer_list()
        if base == "float":
            return self.choice(["0.0", "1e-05", "1"] if self.nice else
                               ["0.0", "1e-05", "-1.0", NAN, INF, "-" + INF, "1e308",
                                "5e-324", "0", "3"])
        if base == "bool":
            return self.choice(["True", "False"])
        if base == "Scalar":
            return self.choice(NICE_SCALARS if self.nice else SCALARS)
        if base == "ScalarType":
            return "pith." + self.choice(DTYPES)
        if base == "Device":
            return self.choice(["'cpu'", "'meta'"] if self.nice else
                               ["'cpu'", "'meta'", "'cuda'", "''", "'cpu:0'", "'meta\\x00'"])
        if base == "float[]":
            return "[" + ", ".join(self.choice(["0.5", "1.0", "2"]) for _ in
                                   range(self.choice([0, 1, 2]))) + "]"
        if base == "Generator":
            return self.choice(["pith.Generator().manual_seed(1)", "pith.default_generator"])
        if base == "str":
            return self.choice(["'none'", "'tanh'"] if self.nice else
                               ["'none'", "'tanh'", "''", "'x' * 1000", "'\\x00'",
                                "'none\\x00'", "'\\udc80'"])
        raise AssertionError(f"the fuzzer does not know the schema type {type_!r}")


def call_arguments(source, name):
    """(positional, keywords, self_first): the source text of the arguments of one call of
    op `name`; well-typed mostly, else ill-typed, or with the wrong number of arguments or
    an unknown keyword. `self_first` tells whether positional[0] is the well-typed first
    argument of the schema (a method call may take it as `self`)."""
    call = Call(source, name)
    arguments = op_arguments(name)
    mode = source.choice(["typed"] * 6 + ["ill-typed", "ill-typed", "arity", "keyword"])
    values = [call.value(arg.type, arg.name) for arg in arguments]
    if mode == "ill-typed" and arguments:
        for _ in range(source.integer(1, 2)):
            values[source.integer(0, len(values) - 1)] = source.choice(ILL_TYPED)
    positional, keywords = [], []
    omitted = False
    for arg, value in zip(arguments, values):
        if arg.default is not _C._NO_DEFAULT and call.chance(30):
            omitted = True  # left out: its default
            continue
        if arg.kwarg_only or omitted or call.chance(10):
            keywords.append(f"{arg.name}={value}")
        else:
            positional.append(value)
    if mode == "arity":
        roll = source.integer(0, 2)
        if roll == 0 and positional:
            positional.pop(source.integer(0, len(positional) - 1))
        elif roll == 1:
            positional += [source.choice(SMALL_INTS + ILL_TYPED)] * source.integer(1, 3)
        elif keywords:
            keywords.pop(source.integer(0, len(keywords) - 1))
        else:
            positional = []
    if mode == "keyword":
        roll = source.integer(0, 2)
        if roll == 0:
            keywords.append(source.choice(["bogus=1", "out=None", "dim=0", "dtype=None"]))
        elif roll == 1 and arguments:  # an argument given twice
            keywords.append(f"{arguments[0].name}={values[0]}")
            positional.insert(0, values[0])
        else:
            keywords.append(f"input={values[0] if values else 'None'}")
    given = set()
    keywords = [k for k in keywords if k.partition("=")[0] not in given
                and not given.add(k.partition("=")[0])]  # (a repeated keyword: a SyntaxError)
    self_first = bool(arguments) and not any(k.startswith(arguments[0].name + "=")
                                             for k in keywords)
    return positional, keywords, mode == "typed" and self_first and bool(positional)


def call_code(source, name):
    """Source text of one call of pith.ops.<ns>.<name>.<overload>."""
    positional, keywords, _ = call_arguments(source, name)
    return f"{op_code(name)}({', '.join(positional + keywords)})"


# ---- the pith.* functions and Tensor methods made from the ops -------------------------------

SURFACE = dict(_C._surface())


def method_names():
    """The op names Python shows as pith.<name> or Tensor.<name> (Note [The Python surface
    of the op table], python_bindings/_C/op_surface.c)."""
    return sorted(name for name, variant in SURFACE.items() if variant != "internal")


def function_call_code(source, short):
    """(call, direct, overloads): a call of pith.<short>(...) or of Tensor.<short> on its
    first argument, with the arguments of one of the op's overloads; the same call made on
    that OpOverload (pith.ops.pith.<short>.<overload>: a function's `input=` is the op's
    `self=`, a method's receiver its `self` argument); and how many overloads the function
    or method may bind (0: unknown, a function written in Python)."""
    packet = getattr(pith.ops.pith, short)
    overload = source.choice(sorted(packet.overloads()))
    name = f"pith::{short}" + ("" if overload == "default" else f".{overload}")
    positional, keywords, self_first = call_arguments(source, name)
    variant = SURFACE[short]
    method = variant == "method" or (variant == "both" and chance(source, 50))
    callee = getattr(pith.Tensor if method else pith, short)
    # (0 for the forms written in Python, pith/_api.py: they may bind more than the op has)
    count = len(callee.overloads) if isinstance(callee, (_C.Function, _C.Method)) else 0
    direct = op_code(name)
    if method:
        self_first = self_first and positional[0].startswith("pith.")
        self = positional.pop(0) if self_first else "pith.zeros((2, 3))"
        rest = ", ".join(positional + keywords)
        return (f"({self}).{short}({rest})",
                f"{direct}({self}{', ' if rest else ''}{rest})", count)
    rest = ", ".join(positional + keywords)
    direct_keywords = ["self=" + k[len("input="):] if k.startswith("input=") else k
                       for k in keywords]
    return (f"pith.{short}({rest})", f"{direct}({', '.join(positional + direct_keywords)})",
            count)


# ---- running one call ------------------------------------------------------------------------

NULL_MESSAGES = ("returned NULL without setting", "returned a result with an exception set",
                 "error return without exception set")
MAX_READ = 4096


def check_tensor(t, read):
    """A result tensor is sane: non-negative sizes that multiply to numel(), and (on the
    CPU, when small and `read`) values that read back in its shape."""
    shape = tuple(t.shape)
    assert all(isinstance(s, int) and s >= 0 for s in shape), f"result has shape {shape}"
    assert t.numel() == math.prod(shape), f"numel {t.numel()} for shape {shape}"
    assert len(tuple(t.stride())) == len(shape)
    # (a wrapper subclass has no data of its own to read: an in-place op returns its self)
    if read and str(t.device) == "cpu" and math.prod(s for s in shape if s) <= MAX_READ \
            and not isinstance(t, Passthrough):
        values = t.tolist()
        for size in shape:
            assert isinstance(values, list) and len(values) == size, f"tolist() of {shape}"
            values = values[0] if size else None
            if values is None:
                break


def check_result(result, read=True):
    if isinstance(result, pith.Tensor):
        check_tensor(result, read)
    elif isinstance(result, (tuple, list)):
        for item in result:
            check_result(item, read)


def run_call(code, namespace=None):
    """Evaluates one generated call: it must return a sane result or raise an Exception that
    is not a SystemError. Returns (True, result) or (False, exception)."""
    try:
        result = eval(code, namespace)  # noqa: S307 (our own text)
    except SystemError as e:
        raise AssertionError(f"SystemError from\n    {code}\n{e!r}") from e
    except Exception as e:
        if any(m in str(e) for m in NULL_MESSAGES):
            raise AssertionError(f"C-level error from\n    {code}\n{e!r}") from e
        return False, e
    except BaseException as e:  # KeyboardInterrupt, SystemExit: never from an op
        raise AssertionError(f"{type(e).__name__} from\n    {code}") from e
    try:
        callee = code.partition("(")[0].rpartition("pith.")[2]
        check_result(result, read=callee.partition(".")[0] not in UNINITIALISED)
    except Exception as e:  # (reading the result back must not raise either)
        raise AssertionError(f"bad result of\n    {code}\n{e}") from e
    return True, result


def result_summary(result, read=True):
    """What two paths must agree on: the shapes, dtypes and (when small and `read`) values."""
    if isinstance(result, pith.Tensor):
        shape = tuple(result.shape)
        small = str(result.device) == "cpu" and math.prod(s for s in shape if s) <= MAX_READ
        read = read and not isinstance(result, Passthrough)  # (no data of its own)
        return shape, result.dtype, repr(result.tolist()) if small and read else None
    if isinstance(result, (tuple, list)):
        return tuple(result_summary(item, read) for item in result)
    return repr(result)


# Ops whose results are random: two calls agree on shapes and dtypes, not values.
RANDOM = ("rand", "randn", "randint", "dropout", "bernoulli", "multinomial", "normal",
          "normal_", "uniform_", "randperm")


def check_binds_as_the_overload(short, code, direct, count):
    """A call of a function or method agrees with the same call made on the OpOverload it
    was generated for (See Note [One binder]): both return the same result (shapes, dtypes
    and, when small and defined, values), or both raise. The only differences allowed are
    the binder's own: the function or method may refuse with a TypeError what the overload
    takes (a Python number for a Tensor where PyTorch's function takes none, `self=` as a
    keyword), and when it has several overloads it may take another one for a call that
    this overload refuses. The forms written in Python (pith/_api.py) are only checked to
    return sanely or raise. When it has one overload and both raise, they raise the same
    exception type, or one of them a plain TypeError (the binder's refusal: the overload
    refuses the varargs sizes a function takes, pith.randn(-1), as torch.ops' do)."""
    ok, result = run_call(code)
    if not ok and not str(result):
        raise AssertionError(f"{type(result).__name__} without a message from\n    {code}")
    if count == 0:
        return  # a form written in Python (var(dim, unbiased), x.max(y) ...): its own rules
    direct_ok, direct_result = run_call(direct)
    if ok and direct_ok:
        read = short not in UNINITIALISED and short not in RANDOM
        got, want = result_summary(result, read), result_summary(direct_result, read)
        assert got == want, f"{code}\nagrees not with\n    {direct}"
    elif direct_ok:
        if not isinstance(result, TypeError):
            raise AssertionError(f"{code}\nraised {result!r:.300}, but\n    {direct}\n"
                                 "returns: only a TypeError of the binder may differ")
    elif ok:
        # A function that takes its tensors as varargs binds a call with none as the empty
        # list (pith.broadcast_tensors() is (), as in PyTorch), which the overload refuses
        # for want of the argument (Note [Tensors as varargs]).
        empty_varargs = short in _C._tensor_varargs() and isinstance(direct_result, TypeError)
        if count == 1 and not empty_varargs:
            raise AssertionError(f"{code}\nreturns {result!r:.300}; its only overload\n"
                                 f"    {direct}\nraises {direct_result!r:.300}")
    elif count == 1 and type(result) is not type(direct_result) and \
            TypeError not in (type(result), type(direct_result)):
        raise AssertionError(f"{code}\nraised {result!r:.300};\n    {direct}\n"
                             f"raised {direct_result!r:.300}")


# ---- the property tests ----------------------------------------------------------------------

FUZZ = settings(max_examples=25, deadline=None, derandomize=True, database=None,
                suppress_health_check=list(HealthCheck))


def test_every_op_is_fuzzed():
    names = {name for name, _ in OPS}
    assert "pith::add.Tensor" in names and "pith::index_put_" in names
    assert not any(name.startswith("pith_testing::") for name in names)


@pytest.mark.parametrize("name", [name for name, _ in OPS])
@FUZZ
@given(data=st.data())
def test_op_raises_an_exception_on_bad_input(name, data):
    run_call(call_code(HypothesisSource(data), name))


@pytest.mark.parametrize("short", method_names())
@settings(FUZZ, max_examples=15)
@given(data=st.data())
def test_function_and_method_raise_an_exception_on_bad_input(short, data):
    check_binds_as_the_overload(short, *function_call_code(HypothesisSource(data), short))


# ---- fixed calls -----------------------------------------------------------------------------

def meta(*sizes, dtype="float32"):
    return f"pith.ops.pith.zeros({list(sizes)}, dtype=pith.{dtype}, device='meta')"


M40, M20 = meta(2**40, 2**20), meta(2**20, 2**20, 2)
BROADCAST = "pith.zeros(()).expand"
# Awkward calls found while exploring, each a statement about one edge: sizes and products
# that overflow int64 or the byte size, meta tensors of huge shapes, empty and zero-stride
# operands, and ints at the ends of int64.
FIXED_CALLS = [
    "pith.ops.pith.empty_strided.default([2, 2], [2**62, 1])",
    "pith.ops.pith.empty_strided.default([2, 2], [-1, 1])",
    "pith.ops.pith.empty_strided.default([2**62, 0], [1, 1])",
    "pith.ops.pith.empty_strided.default([2**40, 2**40], [0, 0])",
    "pith.ops.pith.empty_strided.default([2**31, 2**31], [2**62, 2**62], device='meta')",
    "pith.ops.pith.zeros.default([2**31, 2**31], dtype=pith.float64, device='meta')",
    "pith.ops.pith.zeros.default([2] * 17)",
    "pith.ops.pith.zeros.default([1] * 70)",
    "pith.ops.pith.ones.default([-2**63])",
    "pith.ops.pith.full.default([3], 2**63 - 1, dtype=pith.int8)",
    "pith.ops.pith.full.default([3], float('nan'), dtype=pith.int32)",
    "pith.ops.pith.full.default([3], 1e300, dtype=pith.float16)",
    "pith.ops.pith.arange.start_step(0, 2**62, 1)",
    "pith.ops.pith.arange.start_step(2**63 - 1, -2**63, -1)",
    "pith.ops.pith.arange.start_step(0, 1, 1e-300)",
    "pith.ops.pith.arange.start_step(0, float('inf'), 1)",
    "pith.ops.pith.arange.start_step(0, 10, float('nan'))",
    "pith.ops.pith.arange.start_step(-2**63, 2**63 - 1, 2**62)",
    "pith.ops.pith.linspace.default(0, 1, 2**62)",
    "pith.ops.pith.linspace.default(0, 1, -1)",
    "pith.ops.pith.eye.default(2**62, 0)",
    "pith.ops.pith.eye.default(2**62, 2**62, device='meta')",
    "pith.ops.pith.randint.low(-2**63, 2**63 - 1, [3])",
    "pith.ops.pith.randint.low(0, 300, [3], dtype=pith.uint8)",
    "pith.ops.pith.rand.default([2**31, 2**31, 2], device='meta')",
    f"pith.ops.pith.mm.default({meta(2**40, 2**20)}, {meta(2**20, 2**40)})",
    f"pith.ops.pith.bmm.default({M20}, {meta(2**20, 2, 2**20)})",
    f"pith.ops.pith.matmul.default({M20}, {meta(2**30, 1, 2, 2**20)})",
    f"pith.ops.pith.addmm.default({meta(2**40, 2**40)}, {meta(2**40, 2)}, {meta(2, 2**40)})",
    f"pith.ops.pith.add.Tensor({meta(2**40, 1, 1)}, {meta(1, 2**40, 2**40)})",
    f"pith.ops.pith.sum.dim_IntList({M40}, [0])",
    f"pith.ops.pith.cat.default([{meta(2**61)}] * 3)",
    f"pith.ops.pith.stack.default([{meta(2**30, 2**30)}] * 5)",
    f"pith.ops.pith.unbind.int({meta(2**40)})",
    f"pith.ops.pith.chunk.default({meta(2**40)}, 2**62)",
    f"pith.ops.pith.split.Tensor({meta(2**40)}, 1)",
    f"pith.ops.pith.nonzero.default({M40})",
    f"pith.ops.pith.index_select.default({meta(2**40, 4)}, 0, {meta(2**40, dtype='int64')})",
    f"pith.ops.pith.index.Tensor({meta(4, 4)}, [{meta(2**40, 1, dtype='int64')}, "
    f"{meta(1, 2**40, dtype='int64')}])",
    f"pith.ops.pith.embedding.default({meta(2**40, 2**30)}, {meta(2**20, dtype='int64')})",
    f"pith.ops.pith.layer_norm.default({meta(2**40, 2**30)}, [2**30])",
    f"pith.ops.pith.select.int({meta(2**40, 2)}, 0, 2**40 - 1)",
    f"pith.ops.pith.expand.default({meta(1, 1)}, [2**62, 2**62])",
    f"{BROADCAST}([2**31, 2**31]).view([-1])",
    f"{BROADCAST}([2**31, 2**31]).contiguous()",
    f"{BROADCAST}([2**31, 2**31, 8]).reshape([-1])",
    f"pith.ops.pith.cat.default([{BROADCAST}([2**62]), {BROADCAST}([2**62])])",
    f"pith.ops.pith.mm.default({BROADCAST}([2**31, 2**31]), {BROADCAST}([2**31, 2**31]))",
    f"pith.ops.pith.softmax.int({BROADCAST}([2**62, 0]), 0)",
    f"pith.ops.pith.layer_norm.default({BROADCAST}([2**62, 0]), [0])",
    f"pith.ops.pith.all.dims({BROADCAST}([2**62, 0]), [1])",
    f"pith.ops.pith.amax.default({BROADCAST}([2**62, 0]), [1])",
    f"pith.ops.pith.tril.default({BROADCAST}([2**62, 0]))",
    f"pith.ops.pith.nonzero.default({BROADCAST}([2**62, 0]))",
    "pith.ops.pith.slice.Tensor(pith.zeros(10), 0, -2**63, 2**63 - 1, 2**62)",
    "pith.ops.pith.slice.Tensor(pith.zeros(10), 0, None, None, 0)",
    "pith.ops.pith.narrow.default(pith.zeros(10), 0, -3, 2**63 - 1)",
    "pith.ops.pith.select.int(pith.zeros(10), -2**63, 0)",
    "pith.ops.pith.transpose.int(pith.zeros(10), -2**63, 2**63 - 1)",
    "pith.ops.pith.flatten.using_ints(pith.zeros((3, 3)), 1, 0)",
    "pith.ops.pith.split.Tensor(pith.zeros(10), 2**63 - 1)",
    "pith.ops.pith.split.Tensor(pith.zeros(0), 0)",
    "pith.ops.pith.chunk.default(pith.zeros(10), 2**63 - 1)",
    "pith.ops.pith.chunk.default(pith.zeros(0), 2**40)",
    "pith.ops.pith.tril.default(pith.zeros((3, 3)), -2**63)",
    "pith.ops.pith.triu.default(pith.zeros((3, 3)), 2**63 - 1)",
    "pith.ops.pith.view.default(pith.zeros((0, 3)), [-1, 0])",
    "pith.ops.pith.view.default(pith.zeros((2, 3)), [-1, -1])",
    "pith.ops.pith.expand.default(pith.zeros(3), [-1, 3])",
    "pith.ops.pith.permute.default(pith.zeros((2, 3)), [0, 0])",
    "pith.ops.pith.var.correction(pith.tensor([1.5, 2.0]), correction=-2**63)",
    "pith.ops.pith.var.correction(pith.tensor([1.5, 2.0]), correction=float('nan'))",
    "pith.ops.pith.floor_divide.default(pith.tensor([-2**63]), pith.tensor([-1]))",
    "pith.ops.pith.remainder.Tensor(pith.tensor([-128], dtype=pith.int8), "
    "pith.tensor([-1], dtype=pith.int8))",
    "pith.ops.pith.remainder.Tensor(pith.tensor([1, 2]), pith.tensor([0]))",
    "pith.ops.pith.pow.Tensor_Tensor(pith.tensor([2]), pith.tensor([2**62]))",
    "pith.ops.pith.abs.default(pith.tensor([-2**63]))",
    "pith.ops.pith.to.dtype(pith.tensor([float('nan'), -float('inf'), 1e300]), pith.int64)",
    "pith.ops.pith.to.dtype(pith.tensor([float('nan'), 1e10]), pith.uint8)",
    "pith.ops.pith.clamp.default(pith.tensor([1, 2], dtype=pith.uint8), -1)",
    "pith.ops.pith.masked_fill.Scalar(pith.tensor([1], dtype=pith.int8), pith.tensor(True), "
    "1e300)",
    "pith.ops.pith.add.Tensor(pith.tensor([1]), pith.tensor([1]), alpha=float('nan'))",
    "pith.ops.pith.add.out(pith.ones((3, 4)), pith.ones((3, 4)), "
    "out=pith.zeros(1).expand([3, 4]))",
    "pith.ops.pith.add.out(pith.ones((3, 4)), pith.ones((3, 4)), out=pith.zeros(10)[10:])",
    "pith.ops.pith.neg.out(pith.ones(100), out=pith.zeros((10, 3))[::3][4:])",
    "pith.ops.pith.copy_.default(pith.zeros(1).expand([3]), pith.tensor([1.0, 2.0, 3.0]))",
    "pith.ops.pith.index_put_.default(pith.zeros(3), [pith.tensor([2**62])], pith.tensor(1.0))",
    "pith.ops.pith.index_put_.default(pith.zeros(3), [None] * 17, pith.tensor(1.0))",
    "pith.ops.pith.index.Tensor(pith.zeros(3), [pith.tensor([True, False])])",
    "pith.ops.pith.gather.default(pith.zeros((2, 2)), 1, pith.tensor([[-2**63]]))",
    "pith.ops.pith.embedding.default(pith.zeros((4, 3)), pith.tensor([4]), 2**62)",
    "pith.ops.pith.index_select.default(pith.zeros(3), 0, pith.tensor([[0]]))",
    "pith.ops.pith.stack.default([pith.zeros(2)] * 17)",
    "pith.ops.pith.cat.default([pith.zeros(()), pith.zeros(())])",
    "pith.ops.pith.layer_norm.default(pith.zeros((2, 3)), [3], eps=float('nan'))",
    "pith.ops.pith.softmax.int(pith.tensor([1, 2]), 0, pith.int32)",
    "pith.ops.pith.sum.dim_IntList(pith.zeros((2, 3)), [0] * 70)",
    "pith.ops.pith.amax.default(pith.zeros((2, 3)), [0, 0])",
    "pith.ops.pith.max.dim(pith.zeros((2, 0)), 1)",
    "pith.ops.pith.argmax.default(pith.zeros((0,)))",
]


@pytest.mark.parametrize("code", FIXED_CALLS)
def test_fixed_awkward_call_returns_or_raises(code):
    run_call(code)


# ---- the bugs the fuzzer found ---------------------------------------------------------------
# One test per bug, on the smallest call that showed it.

def outcome(call):
    """What eval(call) does, as plain data: ("returned", dtype, values) or ("raised",
    exception type, message). No tensor or traceback survives it, so that a failing test
    leaves no tensor alive for the leak check."""
    try:
        result = eval(call)  # noqa: S307 (our own text)
    except Exception as e:
        return "raised", type(e), str(e)
    return "returned", result.dtype, result.tolist()


@pytest.mark.parametrize("call", ["pith.ops.pith.neg.default(self=pith.tensor([1.0]))",
                                  "pith.ops.pith.neg(self=pith.tensor([1.0]))",
                                  "pith.ops.pith.sub.Tensor(self=pith.tensor([1.0]), "
                                  "other=pith.tensor([2.0]))"])
def test_op_takes_self_by_keyword(call):
    # OpOverload.__call__(self, ...) once took the op's `self` for its own.
    assert outcome(call) == ("returned", pith.float32, [-1.0])


@pytest.mark.parametrize("call, argument", [
    ("pith.zeros(1).view()", "size"), ("pith.zeros(1).reshape()", "shape"),
    ("pith.reshape(pith.zeros(1))", "shape"), ("pith.zeros(()).permute()", "dims"),
    ("pith.zeros(2).expand()", "size")])
def test_a_missing_size_is_reported(call, argument):
    # The old C fast paths once took a missing size for an empty one (a 0-dim view).
    kind, error, message = outcome(call)
    assert (kind, error) == ("raised", TypeError)
    assert f'missing 1 required positional arguments: "{argument}"' in message  # PyTorch's


def test_squeeze_of_none_is_refused():
    kind, error, message = outcome("pith.zeros((2, 1)).squeeze(None)")
    assert (kind, error) == ("raised", TypeError)
    assert "squeeze() received an invalid combination of arguments - got (NoneType)" in message


@pytest.mark.parametrize("call", ["pith.zeros((2, 3)).reshape(2**100, [2, -1])",
                                  "pith.zeros((2, 3)).view(2**100, [6])",
                                  "pith.flatten(pith.zeros((2, 3)), 2**100, [0])"])
def test_wrong_argument_count_is_reported_before_a_too_large_int(call):
    # The old C fast paths of view, reshape, flatten ... once raised OverflowError for a
    # too-large int before the argument count was reported; the one binder matches every
    # argument before it converts any (Note [One binder], step 1).
    kind, error, message = outcome(call)
    assert (kind, error) == ("raised", TypeError)
    assert "OverflowError" not in message and "too large" not in message


@pytest.mark.parametrize("step", [2**62, 2**100])
def test_slice_with_a_huge_step_leaves_a_small_stride(step):
    # Once stride * step wrapped around ([::2**100] gave stride -4) or overflowed in the
    # kernels' stride * itemsize; a dim of one element keeps its own stride instead.
    x = pith.arange(16.0).reshape(4, 4)
    y = x[::step]
    assert y.shape == (1, 4) and y.stride() == (4, 1)
    assert y.tolist() == [[0.0, 1.0, 2.0, 3.0]]
    assert pith.arange(3.0)[::step].nonzero().tolist() == []
    assert (x[::2]).stride() == (8, 1)  # an ordinary step is stride * step, as PyTorch's


@pytest.mark.parametrize("call", [
    "pith.ops.pith.gelu.default(pith.ones(2), approximate='tanh\\x00junk')",
    "pith.ops.pith.zeros.default([2], device='cpu\\x00junk')"])
def test_string_argument_with_a_nul_is_refused(call):
    # str and Device arguments were once read up to the NUL: 'tanh\x00junk' was 'tanh'.
    assert outcome(call) == ("raised", ValueError, "embedded null character in a str argument")


@pytest.mark.parametrize("call", ["pith.ops.pith.neg.default(1.5)",
                                  "pith.ops.pith.clone.default(2.5)",
                                  "pith.ops.pith.sum.dim_IntList(2.5)"])
def test_python_float_as_the_only_operand_has_the_default_dtype(call):
    # A lone Python float once kept the float64 of its wrapped number.
    assert outcome(call)[:2] == ("returned", pith.get_default_dtype())


@pytest.mark.parametrize("call", ["pith.neg(1.5)", pytest.param("pith.sum(2.5)", marks=[
    pytest.mark.xfail(strict=True, reason="sum has two overloads (sum and sum.dim_IntList), "
                      "and the binder lists both where torch's raises the error of the only "
                      "overload whose argument count fits the call")])])
def test_python_float_as_the_only_operand_of_a_function_is_refused(call):
    # As PyTorch's: neg and sum take no Python number for a Tensor (NUMBERS NONE, Note [The
    # Python surface of the op table]); only the OpOverload does.
    name = call[len("pith."):].partition("(")[0]
    assert outcome(call) == ("raised", TypeError,
                             f"{name}(): argument 'input' (position 1) must be Tensor, not float")


@pytest.mark.parametrize("call, argument", [
    ("pith.ops.pith.neg.out(pith.ones(()), out=2.5)", "'out'"),  # a keyword: no position
    ("pith.ops.pith.add_.Tensor(2.5, pith.ones(()))", "'self' (position 1)")])
def test_python_number_is_not_a_tensor_to_write_to(call, argument):
    # A number as out= or as the self of an in-place op once took the result, and lost it.
    kind, error, message = outcome(call)
    assert kind == "raised" and issubclass(error, TypeError)
    assert f"argument {argument} must be Tensor, not float" in message


@pytest.mark.parametrize("export, error, message", [
    (memoryview, BufferError, "a wrapper subclass has no data to export"),
    (lambda t: t.numpy(), BufferError, "a wrapper subclass has no data to export"),
    (lambda t: t.__dlpack__(), BufferError, "Cannot pack a wrapper subclass")],
    ids=["memoryview", "numpy", "dlpack"])
def test_wrapper_subclass_memory_is_not_exported(export, error, message):
    # A wrapper subclass (device 'cpu', no data) once exported a NULL data pointer:
    # bytes(memoryview(w)) crashed and w.numpy() read out of bounds.
    wrapper = pith.Tensor._make_wrapper_subclass(Passthrough, (3,))
    with pytest.raises(error, match=message):
        export(wrapper)


class BadSizes(pith.Tensor):
    """A wrapper subclass with the "sizes" policy whose size handler answers `answer`."""

    answer = None

    @classmethod
    def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
        return cls.answer if func.name == "pith::size" else NotImplemented


@pytest.mark.parametrize("answer, error, message", [
    ([-5], pith.InterpreterError, "returned a negative sizes value -5"),
    ("ab", TypeError, "sizes must be a list or a tuple, not str"),
    ([1] * 17, ValueError, "size returned 17 dims, more than 16")],
    ids=["negative", "str", "17-dims"])
def test_len_of_a_wrapper_with_a_bad_size_answer_raises(answer, error, message):
    # len() once returned -1 without an exception here: a SystemError.
    BadSizes.answer = answer
    wrapper = pith.Tensor._make_wrapper_subclass(BadSizes, (3,),
                                                 dispatch_sizes_strides_policy="sizes")
    with pytest.raises(error, match=message):
        len(wrapper)


# ---- exploring -------------------------------------------------------------------------------

def explore(seed, count, names=None):
    """Makes `count` random calls of each op (seeded), printing each before making it."""
    names = names or [name for name, _ in OPS]
    for i in range(count):
        for name in names:
            source = RandomSource(f"{seed}:{i}:{name}")
            if "::" in name:
                code = call_code(source, name)
                print(code, flush=True)
                run_call(code)
            else:
                code, direct, count = function_call_code(source, name)
                print(code, flush=True)
                check_binds_as_the_overload(name, code, direct, count)


if __name__ == "__main__":
    explore(int(sys.argv[1]), int(sys.argv[2]), sys.argv[3:] or None)
