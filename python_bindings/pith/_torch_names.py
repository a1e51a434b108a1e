"""The torch names a checkpoint's pickle uses, and what they are in pith.

A checkpoint written by torch.save names torch's globals (torch._utils._rebuild_tensor_v2,
torch.FloatStorage, torch.float16, collections.OrderedDict ...). pith never imports torch:
pith.load maps each allowed name to a pith stand-in (ALLOWED, WIDER), and pith.save writes
the stand-ins back under the same names (TORCH_NAME). See Note [torch's names in pith].
"""
import collections
import pickle

from . import _C
from ._tensor import _as_class, _with_state

# Note [torch's names in pith]
# One table, DTYPES, says which torch dtype and legacy storage class each pith dtype is;
# from it come the GLOBALs pith.load accepts (torch.float32, torch.FloatStorage and the
# torch.cuda.FloatStorage of old checkpoints) and the ones pith.save writes. The tensor
# rebuild functions below take torch's arguments: a "storage" is the 1-D pith tensor over
# the whole storage that pith.load's persistent_load returns (pith has no storage type),
# and every tensor is an as_strided view of it, so tensors that shared a storage when
# saved share one again (Note [as_strided stays within the storage] checks the geometry).
# Names torch allows but pith cannot honour (other dtypes, sparse, quantized, nested
# tensors ...) are allowed as names and raise NotImplementedError naming them, so such a
# file fails clearly instead of with "unsupported global". Nothing here runs anything a
# file chooses: these functions only build tensors and containers.

# pith dtype name -> (torch dtype name, torch legacy storage class)
DTYPES = {
    "bool": ("bool", "BoolStorage"),
    "uint8": ("uint8", "ByteStorage"),
    "int8": ("int8", "CharStorage"),
    "int16": ("int16", "ShortStorage"),
    "int32": ("int32", "IntStorage"),
    "int64": ("int64", "LongStorage"),
    "float16": ("float16", "HalfStorage"),
    "bfloat16": ("bfloat16", "BFloat16Storage"),
    "float32": ("float32", "FloatStorage"),
    "float64": ("float64", "DoubleStorage"),
}

# torch dtypes pith lacks (torch.<name> in a pickle is a NotImplementedError naming it).
_OTHER_DTYPES = (
    ["complex32", "complex64", "complex128", "uint16", "uint32", "uint64", "float8_e4m3fn",
     "float8_e5m2", "float8_e4m3fnuz", "float8_e5m2fnuz", "float8_e8m0fnu",
     "float4_e2m1fn_x2", "qint8", "quint8", "qint32", "quint4x2", "quint2x4", "bits1x8",
     "bits2x4", "bits4x2", "bits8", "bits16"]
    + [f"uint{n}" for n in range(1, 8)] + [f"int{n}" for n in range(1, 8)])
_OTHER_STORAGES = {
    "ComplexFloatStorage": "complex64", "ComplexDoubleStorage": "complex128",
    "QUInt8Storage": "quint8", "QInt8Storage": "qint8", "QInt32Storage": "qint32",
    "QUInt4x2Storage": "quint4x2", "QUInt2x4Storage": "quint2x4",
}


class StorageType:
    """torch.FloatStorage and its kind in a pickle: the dtype of a storage record."""
    __slots__ = ("name", "dtype")

    def __init__(self, name, dtype):
        self.name, self.dtype = name, dtype

    def __repr__(self):
        return f"StorageType(torch.{self.name}, dtype={self.dtype})"


STORAGE_TYPES = {dtype: StorageType(storage, getattr(_C, dtype))
                 for dtype, (_, storage) in DTYPES.items()}
UNTYPED_STORAGE = StorageType("storage.UntypedStorage", _C.uint8)


def dtype_of(name):
    """The pith dtype named `name` ("float32"), or None."""
    if name not in DTYPES:
        return None
    return getattr(_C, name)


def dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


# ---- the rebuild functions (torch._utils and torch._tensor) ----

def _check_ints(what, values):
    if not isinstance(values, (tuple, list)):
        raise pickle.UnpicklingError(f"{what} must be a tuple of ints, got "
                                     f"{type(values).__name__}")
    for v in values:
        if type(v) is not int or not -2**63 <= v < 2**63:
            raise pickle.UnpicklingError(f"{what} must be a tuple of int64 values, got "
                                         f"{values!r}")
    return list(values)


def _storage_tensor(storage, what):
    if type(storage) is not _C.Tensor:
        raise pickle.UnpicklingError(f"{what}: expected a storage, got "
                                     f"{type(storage).__name__}")
    return storage


def _rebuild_tensor(storage, storage_offset, size, stride):
    """torch._utils._rebuild_tensor: a view of `storage` with this geometry."""
    storage = _storage_tensor(storage, "_rebuild_tensor")
    size = _check_ints("size", size)
    stride = _check_ints("stride", stride)
    (offset,) = _check_ints("storage_offset", (storage_offset,))
    if offset < 0:
        raise RuntimeError(f"Tensor: invalid storage offset {offset}")
    # A storage is a 1-D tensor, which may itself start inside its pith storage (the
    # storage views of the legacy format): offsets count from its start.
    return storage.as_strided(size, stride, storage.storage_offset() + offset)


def _rebuild_tensor_v2(storage, storage_offset, size, stride, requires_grad=False,
                       backward_hooks=None, metadata=None):
    # Backward hooks and the tensor metadata of torch (conj/neg bits) have nothing to
    # restore in pith.
    t = _rebuild_tensor(storage, storage_offset, size, stride)
    if requires_grad:
        t.requires_grad_(True)
    return t


def _rebuild_tensor_v3(storage, storage_offset, size, stride, requires_grad, backward_hooks,
                       dtype, metadata=None):
    """torch writes v3 for dtypes without a legacy storage class, over an untyped storage;
    pith has none of those dtypes, so only uint8 (the bytes themselves) rebuilds."""
    if dtype is not _C.uint8:
        raise NotImplementedError(f"pith.load: _rebuild_tensor_v3 of a {dtype} tensor over "
                                  f"untyped bytes is not supported")
    return _rebuild_tensor(storage, storage_offset, size, stride)


def _rebuild_parameter(data, requires_grad, backward_hooks):
    from .nn import Parameter
    if not isinstance(data, _C.Tensor):
        raise pickle.UnpicklingError("_rebuild_parameter: data must be a tensor")
    return Parameter(data, bool(requires_grad))


def _rebuild_parameter_with_state(data, requires_grad, backward_hooks, state):
    return _with_state(_rebuild_parameter(data, requires_grad, backward_hooks), state)


def _rebuild_from_type_v2(func, new_type, args, state):
    """torch._tensor._rebuild_from_type_v2: a tensor of class `new_type` with instance
    state (a tensor with attributes, a Parameter subclass ...). `func` and `new_type` are
    objects the unpickler already allowed."""
    if not isinstance(args, tuple):
        raise pickle.UnpicklingError("_rebuild_from_type_v2: args must be a tuple")
    if func not in _TENSOR_REBUILDS:
        raise pickle.UnpicklingError(f"_rebuild_from_type_v2: {func!r} is not a tensor "
                                     f"rebuild function")
    ret = func(*args)
    if type(ret) is not new_type:
        if not (isinstance(new_type, type) and issubclass(new_type, _C.Tensor)):
            raise pickle.UnpicklingError(f"_rebuild_from_type_v2: {new_type!r} is not a "
                                         f"tensor class")
        ret = _as_class(ret, new_type)
    return _with_state(ret, state)


def _rebuild_meta_tensor_no_storage(dtype, size, stride, requires_grad=False):
    if not isinstance(dtype, _C.dtype):
        raise pickle.UnpicklingError("_rebuild_meta_tensor_no_storage: expected a dtype")
    return _C.empty_strided(_check_ints("size", size), _check_ints("stride", stride),
                            dtype=dtype, device="meta")


_TENSOR_REBUILDS = (_rebuild_tensor, _rebuild_tensor_v2, _rebuild_tensor_v3,
                    _rebuild_parameter, _rebuild_parameter_with_state,
                    _rebuild_meta_tensor_no_storage)


def _device(type_or_str, index=None):
    """torch.device: pith spells devices as strings ("cpu", "cuda:0")."""
    if not isinstance(type_or_str, str) or (index is not None and type(index) is not int):
        raise pickle.UnpicklingError("torch.device expects a string and an optional index")
    return type_or_str if index is None else f"{type_or_str}:{index}"


def _codecs_encode(obj, encoding="utf-8", errors="strict"):
    """_codecs.encode, which protocol 2 pickles use for bytes (encode(str, 'latin1')); only
    the latin-1 codec is taken, so a pickle cannot name an arbitrary codec."""
    if type(obj) is not str or encoding not in ("latin1", "latin-1") or errors != "strict":
        raise pickle.UnpicklingError(f"_codecs.encode is allowed only as pickle uses it "
                                     f"(a str and 'latin1'), got encoding {encoding!r}")
    return obj.encode("latin-1")


def _size(sizes=()):
    return _C.Size(_check_ints("torch.Size", tuple(sizes)))


def _unsupported(name, why):
    def make():
        raise NotImplementedError(f"pith.load: the checkpoint uses {name} ({why}), which pith "
                                  f"does not support")
    return make


def _constant(obj):
    return lambda: obj


def _parameter_class():
    from .nn import Parameter
    return Parameter


def _weights_only_names():
    names = {
        "collections.OrderedDict": _constant(collections.OrderedDict),
        "collections.Counter": _constant(collections.Counter),
        "torch.nn.parameter.Parameter": _parameter_class,
        "torch.Size": _constant(_size),
        "torch.Tensor": _constant(_C.Tensor),
        "torch.device": _constant(_device),
        "_codecs.encode": _constant(_codecs_encode),
        "builtins.bytearray": _constant(bytearray),
        "builtins.set": _constant(set),
        "builtins.complex": _constant(complex),
        "torch.storage.UntypedStorage": _constant(UNTYPED_STORAGE),
        "torch._tensor._rebuild_from_type_v2": _constant(_rebuild_from_type_v2),
    }
    for fn in _TENSOR_REBUILDS:
        names[f"torch._utils.{fn.__name__}"] = _constant(fn)
    for dtype, (torch_dtype, storage) in DTYPES.items():
        names[f"torch.{torch_dtype}"] = _constant(getattr(_C, dtype))
        for module in ("torch", "torch.cuda"):
            names[f"{module}.{storage}"] = _constant(STORAGE_TYPES[dtype])
    for name in _OTHER_DTYPES:
        names[f"torch.{name}"] = _unsupported(f"torch.{name}", f"pith has no {name} dtype")
    for storage, dtype in _OTHER_STORAGES.items():
        for module in ("torch", "torch.cuda"):
            names[f"{module}.{storage}"] = _unsupported(f"{module}.{storage}",
                                                        f"pith has no {dtype} dtype")
    for fn, why in [("_rebuild_qtensor", "quantized tensors"),
                    ("_rebuild_sparse_tensor", "sparse tensors"),
                    ("_rebuild_nested_tensor", "nested tensors"),
                    ("_rebuild_wrapper_subclass", "tensor subclasses of other devices"),
                    ("_rebuild_device_tensor_from_numpy", "tensors of other devices"),
                    ("_rebuild_device_tensor_from_cpu_tensor", "tensors of other devices")]:
        names[f"torch._utils.{fn}"] = _unsupported(f"torch._utils.{fn}", why)
    names["torch.serialization._get_layout"] = _unsupported(
        "torch.serialization._get_layout", "tensor layouts other than strided")
    for scheme in ("per_tensor_affine", "per_tensor_symmetric", "per_channel_affine",
                   "per_channel_symmetric", "per_channel_affine_float_qparams"):
        names[f"torch.{scheme}"] = _unsupported(f"torch.{scheme}", "quantized tensors")
    return names


# torch.load(weights_only=True)'s default allow-list, in pith.
ALLOWED = _weights_only_names()


def _attr(module, name):
    def make():
        import importlib
        return getattr(importlib.import_module(module), name)
    return make


def _wider_names():
    """Data-only types that checkpoints often hold besides tensors, for weights_only=False
    (Note [weights_only=False] in serialization.py): constructing them runs no code the
    file chooses, and whatever they hold went through the same restricted unpickler."""
    names = {}
    for name in ("list", "dict", "tuple", "frozenset", "int", "float", "str", "bytes",
                 "bool", "slice", "range", "object"):
        names[f"builtins.{name}"] = _attr("builtins", name)
    for module, attrs in [
            ("collections", ("defaultdict", "deque")),
            ("copyreg", ("_reconstructor",)),
            ("argparse", ("Namespace",)),
            ("types", ("SimpleNamespace",)),
            ("datetime", ("date", "time", "datetime", "timedelta", "timezone")),
            ("decimal", ("Decimal",)),
            ("fractions", ("Fraction",)),
            ("uuid", ("UUID",)),
            ("pathlib", ("Path", "PosixPath", "WindowsPath", "PurePath", "PurePosixPath",
                         "PureWindowsPath")),
            ("numpy", ("ndarray", "dtype")),
            ("numpy.core.multiarray", ("_reconstruct", "scalar")),
            ("numpy._core.multiarray", ("_reconstruct", "scalar"))]:
        for attr in attrs:
            names[f"{module}.{attr}"] = _attr(module, attr)
    return names


# The additions of weights_only=False.
WIDER = _wider_names()


def _torch_name_table():
    table = {id(_rebuild_from_type_v2): ("torch._tensor", "_rebuild_from_type_v2"),
             id(_C.Tensor): ("torch", "Tensor"),
             id(_size): ("torch", "Size"),
             id(_device): ("torch", "device"),
             id(UNTYPED_STORAGE): ("torch.storage", "UntypedStorage")}
    for fn in _TENSOR_REBUILDS:
        table[id(fn)] = ("torch._utils", fn.__name__)
    for dtype, (torch_dtype, storage) in DTYPES.items():
        table[id(getattr(_C, dtype))] = ("torch", torch_dtype)
        table[id(STORAGE_TYPES[dtype])] = ("torch", storage)
    return table


# id(stand-in) -> (module, name) that pith.save writes for it.
TORCH_NAME = _torch_name_table()
