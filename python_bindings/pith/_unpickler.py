"""A restricted unpickler: it runs no code but what an allow-list names.

Used by pith.load (torch checkpoints) for every pickle it reads. See Note [The restricted
unpickler].
"""
import _compat_pickle
import codecs
import io
import pickle
import struct

# Note [The restricted unpickler]
# pickle.Unpickler calls whatever a pickle names (GLOBAL os system, REDUCE), so a
# checkpoint from the internet could run anything. This unpickler interprets the opcodes
# itself, as torch's _weights_only_unpickler does, and lets a pickle reach only:
#   - GLOBAL/STACK_GLOBAL names of the allow-list (`allowed`: "module.name" -> a function
#     returning the object; resolved lazily, so naming numpy imports numpy only then).
#     Modules sys, os, posix and nt are refused even when allow-listed (torch's blocklist);
#     any other name is an UnpicklingError naming the global;
#   - REDUCE, NEWOBJ, NEWOBJ_EX and INST/OBJ of objects that came from the allow-list
#     (checked by identity, so nothing built on the way is callable unless allowed);
#   - BUILD of objects made during this load whose class (or a base other than object) is
#     allow-listed: their __setstate__, or their attributes (a state_dict's _metadata on
#     its OrderedDict). A resolved global itself (a class, a rebuild function) is never
#     built on, so a file cannot change what the allow-list means for the next one;
#   - APPEND(S) to lists, SETITEM(S) to dicts, ADDITEMS to sets;
#   - persistent ids, handed to `persistent_load`.
# Everything else is data (ints, floats, strings, bytes, tuples, lists, dicts, sets, None,
# bools, memo GET/PUT). Extension codes (EXT*) and out-of-band buffers are refused. A short
# read, a stack underflow or a missing memo entry is an UnpicklingError: malformed input
# never crashes and never reaches code. Text-protocol strings are parsed with the codecs
# that pickle uses (escape_decode, raw_unicode_escape), which are data transformations.

_BLOCKED_MODULES = ("sys", "os", "posix", "nt")


def _global_name(module, name):
    # pickle's fix_imports for protocol < 3 pickles (Python 2 names), as torch applies it.
    if (module, name) in _compat_pickle.NAME_MAPPING:
        module, name = _compat_pickle.NAME_MAPPING[(module, name)]
    elif module in _compat_pickle.IMPORT_MAPPING:
        module = _compat_pickle.IMPORT_MAPPING[module]
    return module, name


def unsupported_global_message(full, hint):
    if full.startswith("builtins."):
        full = full[len("builtins."):]
    return (f"Unsupported global: GLOBAL {full} was not an allowed global by default. "
            f"{hint}")


class Unpickler:
    """Unpickler(file, allowed, persistent_load, *, encoding, errors, hint).

    `allowed` maps "module.name" to a function returning the object; `hint` ends the
    message of a refused global (how to allow it)."""

    def __init__(self, file, allowed, persistent_load=None, *, encoding="ASCII",
                 errors="strict", hint=""):
        self._read = file.read
        self._readline = file.readline
        self._allowed = allowed
        self._resolved = {}
        self._allowed_ids = set()
        self._persistent_load = persistent_load
        self._encoding = encoding
        self._errors = errors
        self._hint = hint

    # ---- the loop

    def load(self):
        try:
            return self._load()
        except (pickle.UnpicklingError, RuntimeError):
            raise  # RuntimeError: the rebuild functions' own (NotImplementedError too)
        except (IndexError, KeyError, struct.error, EOFError, UnicodeDecodeError,
                OverflowError, RecursionError, AttributeError, TypeError, ValueError) as e:
            raise pickle.UnpicklingError(f"malformed pickle data: {type(e).__name__}: {e}") \
                from None

    def _load(self):
        self._stack = []
        self._metastack = []
        self._memo = {}
        dispatch = _DISPATCH
        read = self._read
        while True:
            key = read(1)
            if not key:
                raise pickle.UnpicklingError("pickle data was truncated")
            op = dispatch.get(key[0])
            if op is None:
                raise pickle.UnpicklingError(f"Unsupported operand {key[0]} ({key!r})")
            if op(self) is _STOP:
                if not self._stack:
                    raise pickle.UnpicklingError("STOP with an empty stack")
                return self._stack.pop()

    # ---- reading

    def _exact(self, n):
        data = self._read(n)
        if len(data) != n:
            raise pickle.UnpicklingError("pickle data was truncated")
        return data

    def _line(self):
        line = self._readline()
        if not line.endswith(b"\n"):
            raise pickle.UnpicklingError("pickle data was truncated")
        return line[:-1]

    def _pop_mark(self):
        if not self._metastack:
            raise pickle.UnpicklingError("could not find MARK")
        items = self._stack
        self._stack = self._metastack.pop()
        return items

    def _decode(self, data):
        if self._encoding == "bytes":
            return data
        return data.decode(self._encoding, self._errors)

    # ---- globals and calls

    def _find(self, module, name):
        module, name = _global_name(module, name)
        full = f"{module}.{name}"
        if module in _BLOCKED_MODULES or module.split(".")[0] in _BLOCKED_MODULES:
            raise pickle.UnpicklingError(f"Trying to load unsupported GLOBAL {full} whose "
                                         f"module {module} is blocked.")
        obj = self._resolved.get(full, _MISSING)
        if obj is _MISSING:
            make = self._allowed.get(full)
            if make is None:
                raise pickle.UnpicklingError(unsupported_global_message(full, self._hint))
            obj = make()
            self._resolved[full] = obj
            self._allowed_ids.add(id(obj))
        return obj

    def _check_callable(self, func, what):
        if id(func) not in self._allowed_ids:
            raise pickle.UnpicklingError(f"Trying to call {what} for unrecognized function "
                                         f"{func!r}")

    def _check_class(self, cls, what):
        if not isinstance(cls, type) or id(cls) not in self._allowed_ids:
            raise pickle.UnpicklingError(f"Can only create new objects ({what}) of "
                                         f"allowlisted classes, but got {cls!r}")

    def _new(self, cls, args, kwargs):
        self._check_class(cls, "NEWOBJ")
        if not isinstance(args, tuple) or not isinstance(kwargs, dict):
            raise pickle.UnpicklingError("NEWOBJ arguments must be a tuple and a dict")
        return cls.__new__(cls, *args, **kwargs)

    def _build(self, inst, state):
        # Only objects made during this load: a resolved global (a class, a rebuild
        # function, a StorageType) stays as the allow-list defines it.
        cls = type(inst)
        if id(inst) in self._allowed_ids or not any(
                id(c) in self._allowed_ids for c in cls.__mro__ if c is not object):
            raise pickle.UnpicklingError(f"Can only build OrderedDict or instances of "
                                         f"allowlisted types, but got {cls!r}")
        setstate = getattr(inst, "__setstate__", None)
        if setstate is not None:
            setstate(state)
            return
        slots = None
        if isinstance(state, tuple) and len(state) == 2:
            state, slots = state
        if state:
            if not isinstance(state, dict):
                raise pickle.UnpicklingError(f"BUILD state of {cls.__name__} must be a dict")
            inst.__dict__.update(state)
        if slots:
            if not isinstance(slots, dict):
                raise pickle.UnpicklingError(f"BUILD slot state of {cls.__name__} must be a "
                                             f"dict")
            for k, v in slots.items():
                setattr(inst, k, v)


_MISSING = object()
_STOP = object()
_DISPATCH = {}


def _op(code):
    def register(fn):
        _DISPATCH[code[0]] = fn
        return fn
    return register


# ---- framing and the end

@_op(pickle.PROTO)
def _proto(u):
    proto = u._exact(1)[0]
    if proto > pickle.HIGHEST_PROTOCOL:
        raise pickle.UnpicklingError(f"unsupported pickle protocol: {proto}")


@_op(pickle.FRAME)
def _frame(u):
    u._exact(8)  # frames are an optimisation of reading; the opcodes follow inline


@_op(pickle.STOP)
def _stop(u):
    return _STOP


# ---- scalars

@_op(pickle.NONE)
def _none(u):
    u._stack.append(None)


@_op(pickle.NEWTRUE)
def _true(u):
    u._stack.append(True)


@_op(pickle.NEWFALSE)
def _false(u):
    u._stack.append(False)


@_op(pickle.INT)
def _int(u):
    data = u._line()
    if data == b"00":
        u._stack.append(False)
    elif data == b"01":
        u._stack.append(True)
    else:
        u._stack.append(_parse_int(data))


def _parse_int(data):
    try:
        return int(data, 0)
    except ValueError:
        raise pickle.UnpicklingError(f"invalid integer literal {data[:40]!r}") from None


@_op(pickle.BININT)
def _binint(u):
    u._stack.append(struct.unpack("<i", u._exact(4))[0])


@_op(pickle.BININT1)
def _binint1(u):
    u._stack.append(u._exact(1)[0])


@_op(pickle.BININT2)
def _binint2(u):
    u._stack.append(struct.unpack("<H", u._exact(2))[0])


@_op(pickle.LONG)
def _long(u):
    data = u._line()
    u._stack.append(_parse_int(data[:-1] if data.endswith(b"L") else data))


@_op(pickle.LONG1)
def _long1(u):
    u._stack.append(pickle.decode_long(u._exact(u._exact(1)[0])))


@_op(pickle.LONG4)
def _long4(u):
    n = struct.unpack("<i", u._exact(4))[0]
    if n < 0:
        raise pickle.UnpicklingError("LONG pickle has negative byte count")
    u._stack.append(pickle.decode_long(u._exact(n)))


@_op(pickle.FLOAT)
def _float(u):
    try:
        u._stack.append(float(u._line()))
    except ValueError:
        raise pickle.UnpicklingError("invalid float literal") from None


@_op(pickle.BINFLOAT)
def _binfloat(u):
    u._stack.append(struct.unpack(">d", u._exact(8))[0])


# ---- strings and bytes

def _sized(u, fmt):
    size = struct.calcsize(fmt)
    n = struct.unpack(fmt, u._exact(size))[0]
    return u._exact(n)


@_op(pickle.BINUNICODE)
def _binunicode(u):
    u._stack.append(str(_sized(u, "<I"), "utf-8", "surrogatepass"))


@_op(pickle.SHORT_BINUNICODE)
def _short_binunicode(u):
    u._stack.append(str(_sized(u, "<B"), "utf-8", "surrogatepass"))


@_op(pickle.BINUNICODE8)
def _binunicode8(u):
    u._stack.append(str(_sized(u, "<Q"), "utf-8", "surrogatepass"))


@_op(pickle.UNICODE)
def _unicode(u):
    u._stack.append(str(u._line(), "raw-unicode-escape"))


@_op(pickle.BINBYTES)
def _binbytes(u):
    u._stack.append(_sized(u, "<I"))


@_op(pickle.SHORT_BINBYTES)
def _short_binbytes(u):
    u._stack.append(_sized(u, "<B"))


@_op(pickle.BINBYTES8)
def _binbytes8(u):
    u._stack.append(_sized(u, "<Q"))


@_op(pickle.BYTEARRAY8)
def _bytearray8(u):
    u._stack.append(bytearray(_sized(u, "<Q")))


@_op(pickle.BINSTRING)
def _binstring(u):
    n = struct.unpack("<i", u._exact(4))[0]
    if n < 0:
        raise pickle.UnpicklingError("BINSTRING pickle has negative byte count")
    u._stack.append(u._decode(u._exact(n)))


@_op(pickle.SHORT_BINSTRING)
def _short_binstring(u):
    u._stack.append(u._decode(_sized(u, "<B")))


@_op(pickle.STRING)
def _string(u):
    data = u._line()
    if len(data) < 2 or data[0] != data[-1] or data[0] not in b"\"'":
        raise pickle.UnpicklingError("the STRING opcode argument must be quoted")
    u._stack.append(u._decode(codecs.escape_decode(data[1:-1])[0]))


# ---- containers

@_op(pickle.EMPTY_TUPLE)
def _empty_tuple(u):
    u._stack.append(())


@_op(pickle.TUPLE)
def _tuple(u):
    items = u._pop_mark()  # before reading u._stack: popping the mark replaces it
    u._stack.append(tuple(items))


@_op(pickle.TUPLE1)
def _tuple1(u):
    u._stack[-1] = (u._stack[-1],)


@_op(pickle.TUPLE2)
def _tuple2(u):
    if len(u._stack) < 2:
        raise IndexError("stack underflow")
    u._stack[-2:] = [(u._stack[-2], u._stack[-1])]


@_op(pickle.TUPLE3)
def _tuple3(u):
    if len(u._stack) < 3:
        raise IndexError("stack underflow")
    u._stack[-3:] = [(u._stack[-3], u._stack[-2], u._stack[-1])]


@_op(pickle.EMPTY_LIST)
def _empty_list(u):
    u._stack.append([])


@_op(pickle.LIST)
def _list(u):
    items = u._pop_mark()
    u._stack.append(items)


@_op(pickle.APPEND)
def _append(u):
    item = u._stack.pop()
    target = u._stack[-1]
    if type(target) is not list:
        raise pickle.UnpicklingError(f"Can only append to lists, but got {type(target)}")
    target.append(item)


@_op(pickle.APPENDS)
def _appends(u):
    items = u._pop_mark()
    target = u._stack[-1]
    if type(target) is not list:
        raise pickle.UnpicklingError(f"Can only extend lists, but got {type(target)}")
    target.extend(items)


@_op(pickle.EMPTY_DICT)
def _empty_dict(u):
    u._stack.append({})


@_op(pickle.DICT)
def _dict(u):
    items = u._pop_mark()
    if len(items) % 2:
        raise pickle.UnpicklingError("odd number of items for DICT")
    u._stack.append({items[i]: items[i + 1] for i in range(0, len(items), 2)})


def _dict_target(u, what):
    target = u._stack[-1]
    if not isinstance(target, dict):
        raise pickle.UnpicklingError(f"Can only {what} for dicts, but got {type(target)}")
    return target


@_op(pickle.SETITEM)
def _setitem(u):
    value = u._stack.pop()
    key = u._stack.pop()
    _dict_target(u, "SETITEM")[key] = value


@_op(pickle.SETITEMS)
def _setitems(u):
    items = u._pop_mark()
    if len(items) % 2:
        raise pickle.UnpicklingError("odd number of items for SETITEMS")
    target = _dict_target(u, "SETITEMS")
    for i in range(0, len(items), 2):
        target[items[i]] = items[i + 1]


@_op(pickle.EMPTY_SET)
def _empty_set(u):
    u._stack.append(set())


@_op(pickle.ADDITEMS)
def _additems(u):
    items = u._pop_mark()
    target = u._stack[-1]
    if type(target) is not set:
        raise pickle.UnpicklingError(f"Can only add items to sets, but got {type(target)}")
    target.update(items)


@_op(pickle.FROZENSET)
def _frozenset(u):
    items = u._pop_mark()
    u._stack.append(frozenset(items))


# ---- stack and memo

@_op(pickle.MARK)
def _mark(u):
    u._metastack.append(u._stack)
    u._stack = []


@_op(pickle.POP)
def _pop(u):
    if u._stack:
        u._stack.pop()
    else:
        u._pop_mark()


@_op(pickle.POP_MARK)
def _pop_mark(u):
    u._pop_mark()


@_op(pickle.DUP)
def _dup(u):
    u._stack.append(u._stack[-1])


def _get(u, index):
    try:
        u._stack.append(u._memo[index])
    except KeyError:
        raise pickle.UnpicklingError(f"Memo value not found at index {index}") from None


def _put(u, index):
    if index < 0:
        raise pickle.UnpicklingError("negative PUT argument")
    u._memo[index] = u._stack[-1]


@_op(pickle.GET)
def _get_text(u):
    _get(u, _parse_int(u._line()))


@_op(pickle.BINGET)
def _binget(u):
    _get(u, u._exact(1)[0])


@_op(pickle.LONG_BINGET)
def _long_binget(u):
    _get(u, struct.unpack("<I", u._exact(4))[0])


@_op(pickle.PUT)
def _put_text(u):
    _put(u, _parse_int(u._line()))


@_op(pickle.BINPUT)
def _binput(u):
    _put(u, u._exact(1)[0])


@_op(pickle.LONG_BINPUT)
def _long_binput(u):
    _put(u, struct.unpack("<I", u._exact(4))[0])


@_op(pickle.MEMOIZE)
def _memoize(u):
    u._memo[len(u._memo)] = u._stack[-1]


# ---- globals, calls, persistent ids

@_op(pickle.GLOBAL)
def _global(u):
    module = u._line().decode("utf-8")
    name = u._line().decode("utf-8")
    u._stack.append(u._find(module, name))


@_op(pickle.STACK_GLOBAL)
def _stack_global(u):
    name = u._stack.pop()
    module = u._stack.pop()
    if type(name) is not str or type(module) is not str:
        raise pickle.UnpicklingError("STACK_GLOBAL requires str")
    u._stack.append(u._find(module, name))


@_op(pickle.REDUCE)
def _reduce(u):
    args = u._stack.pop()
    func = u._stack[-1]
    u._check_callable(func, "reduce")
    if not isinstance(args, tuple):
        raise pickle.UnpicklingError("REDUCE arguments must be a tuple")
    u._stack[-1] = func(*args)


@_op(pickle.NEWOBJ)
def _newobj(u):
    args = u._stack.pop()
    cls = u._stack.pop()
    u._stack.append(u._new(cls, args, {}))


@_op(pickle.NEWOBJ_EX)
def _newobj_ex(u):
    kwargs = u._stack.pop()
    args = u._stack.pop()
    cls = u._stack.pop()
    u._stack.append(u._new(cls, args, kwargs))


def _instantiate(u, cls, args):
    u._check_class(cls, "INST/OBJ")
    u._stack.append(cls(*args))


@_op(pickle.INST)
def _inst(u):
    module = u._line().decode("ascii")
    name = u._line().decode("ascii")
    cls = u._find(module, name)
    args = tuple(u._pop_mark())
    _instantiate(u, cls, args)


@_op(pickle.OBJ)
def _obj(u):
    args = u._pop_mark()
    if not args:
        raise IndexError("OBJ without a class")
    _instantiate(u, args[0], tuple(args[1:]))


@_op(pickle.BUILD)
def _build_op(u):
    state = u._stack.pop()
    u._build(u._stack[-1], state)


def _persistent(u, pid):
    if u._persistent_load is None:
        raise pickle.UnpicklingError("A load persistent id instruction was encountered, but "
                                     "no persistent_load function was specified.")
    u._stack.append(u._persistent_load(pid))


@_op(pickle.BINPERSID)
def _binpersid(u):
    _persistent(u, u._stack.pop())


@_op(pickle.PERSID)
def _persid(u):
    _persistent(u, u._line().decode("ascii"))


def globals_in(data):
    """The "module.name" of every GLOBAL and STACK_GLOBAL a pickle names (without running
    it; STACK_GLOBAL names that are not string constants are skipped)."""
    import pickletools
    names, strings = [], []
    try:
        for opcode, arg, _ in pickletools.genops(io.BytesIO(data)):
            if opcode.name in ("GLOBAL", "INST"):
                module, name = _global_name(*arg.split(" ", 1))
                names.append(f"{module}.{name}")
            elif opcode.name in ("SHORT_BINUNICODE", "BINUNICODE", "BINUNICODE8",
                                 "UNICODE"):
                strings.append(arg)
            elif opcode.name == "STACK_GLOBAL" and len(strings) >= 2:
                module, name = _global_name(strings[-2], strings[-1])
                names.append(f"{module}.{name}")
    except (ValueError, EOFError, struct.error) as e:
        raise pickle.UnpicklingError(f"malformed pickle data: {e}") from None
    return names
