"""pith.save and pith.load: PyTorch's checkpoint files, read and written without torch.

    pith.save(obj, f)            # the zip format of torch.save (torch.load reads it)
    pith.load(f)                 # files of torch.save (zip, and the legacy format)
    pith.load(f, mmap=True)      # tensors view the mapped file: no copy

Loading never runs code that the file chooses: see Note [The restricted unpickler] and
docs/python.md ("Checkpoints").
"""
import collections
import contextlib
import hashlib
import io
import mmap as _mmap
import os
import pickle
import re
import struct
import sys

from . import _C, _zip
from ._ops import ops as _ops
from ._tensor import _get_state
from ._torch_names import (ALLOWED, STORAGE_TYPES, TORCH_NAME, WIDER, StorageType,
                           dtype_name, _rebuild_from_type_v2, _rebuild_meta_tensor_no_storage,
                           _rebuild_parameter, _rebuild_parameter_with_state,
                           _rebuild_tensor_v2, _size)
from ._unpickler import Unpickler, globals_in

__all__ = ["save", "load", "add_safe_globals", "get_safe_globals", "clear_safe_globals",
           "safe_globals", "get_unsafe_globals_in_checkpoint"]

DEFAULT_PROTOCOL = 2
MAGIC_NUMBER = 0x1950A86A20F9469CFC6C  # the legacy format's first pickle
PROTOCOL_VERSION = 1001
_STORAGE_ALIGNMENT = 64
_FILE_FORMAT_VERSION = b"3\n"  # what torch 2.13's torch.save writes in `version`
_CHUNK = 1 << 28  # bytes per readinto call (raw files return at most 2 GiB per read)

# ---- user allow-list (torch.serialization.add_safe_globals) ----

_user_globals = set()


def _user_names():
    names = {}
    for entry in _user_globals:
        if isinstance(entry, tuple):
            obj, name = entry
        else:
            obj, name = entry, f"{entry.__module__}.{entry.__qualname__}"
        names[name] = (lambda o=obj: o)
    return names


def add_safe_globals(safe_globals):
    """Marks globals as safe for pith.load: each entry is an object (found by its
    "module.qualname") or a (object, "module.name") pair. As torch's: classes added here
    are constructed and given their state (BUILD), functions called (REDUCE)."""
    for entry in safe_globals:
        if isinstance(entry, tuple):
            if len(entry) != 2:
                raise ValueError(f"Expected tuple of length 2 (global, str of callable full "
                                 f"path), but got tuple of length: {len(entry)}")
            if type(entry[1]) is not str:
                raise TypeError(f"Expected second item in tuple to be str of callable full "
                                f"path, but got: {type(entry[1])}")
        _user_globals.add(entry)


def get_safe_globals():
    """The globals added by add_safe_globals."""
    return list(_user_globals)


def clear_safe_globals():
    """Forgets every global added by add_safe_globals."""
    _user_globals.clear()


class safe_globals:
    """with pith.serialization.safe_globals([...]): the globals are safe inside the block."""

    def __init__(self, safe_globals):
        self.safe_globals = list(safe_globals)

    def __enter__(self):
        self._added = [g for g in self.safe_globals if g not in _user_globals]
        add_safe_globals(self._added)

    def __exit__(self, *exc):
        _user_globals.difference_update(self._added)


def _allowed_names(weights_only):
    # Note [weights_only=False]
    # torch.load(weights_only=False) runs the full pickle machinery: any file can run any
    # code. pith never does. weights_only=False uses the same restricted unpickler with a
    # wider allow-list (pith/_torch_names.py WIDER): the data-only standard-library types
    # checkpoints often hold (argparse.Namespace, datetime, pathlib paths, defaultdict,
    # deque, Decimal, Fraction, UUID, slice, range, the builtin containers, copyreg's
    # _reconstructor for protocol 0/1 pickles of those) and NumPy arrays, scalars and
    # dtypes. Anything else still needs add_safe_globals, in both modes.
    names = dict(ALLOWED)
    if not weights_only:
        names.update(WIDER)
    names.update(_user_names())
    return names


def _hint(weights_only):
    hint = ("Please use `pith.serialization.add_safe_globals([...])` or the "
            "`pith.serialization.safe_globals([...])` context manager to allowlist this "
            "global if you trust this class/function.")
    if weights_only:
        hint += (" (weights_only=False also allows the data-only standard-library and NumPy "
                 "types that docs/python.md lists; it never runs arbitrary code.)")
    return hint


# ---- save ----

def _archive_name(f):
    # PyTorchStreamWriter's basename(): the file name without directory and extension, or
    # "archive" for a buffer or a name that is not ASCII.
    if not isinstance(f, (str, os.PathLike)):
        return "archive"
    name = os.fspath(f)
    if isinstance(name, bytes):
        name = os.fsdecode(name)
    base = re.split(r"[\\/]", name)[-1]
    if "." in base:
        base = base[:base.rindex(".")]
    if not base:
        raise RuntimeError(f"invalid file name: {name}")
    try:
        base.encode("ascii")
    except UnicodeEncodeError:
        return "archive"
    return base


class _StorageRef:
    """One storage of the object being saved: its record key and its bytes."""
    __slots__ = ("key", "dtype", "numel", "whole", "location")

    def __init__(self, key, tensor, numel, location):
        self.key, self.dtype, self.numel, self.location = key, tensor.dtype, numel, location
        self.whole = tensor.as_strided((numel,), (1,), 0) if numel else None

    def persistent_id(self):
        return ("storage", STORAGE_TYPES[dtype_name(self.dtype)], self.key, self.location,
                self.numel)


class _Storages:
    """The storages met while pickling, keyed as torch keys them (Note [Saved storages])."""

    # Note [Saved storages]
    # torch.save writes each storage once, as data/<key> with keys "0", "1", ... in the
    # order of first use, and every tensor as (storage, offset, size, stride). pith finds a
    # tensor's storage by its data pointer minus its offset, and its length by
    # pith._C._storage_nbytes, so views of one storage pickled together name one record
    # and load as views of one storage again, in torch and in pith. Like torch, it refuses
    # two dtypes over one storage; a storage of zero bytes gets a record per tensor (no
    # pointer tells them apart, and there is nothing to share).

    def __init__(self):
        self._by_base = {}
        self.refs = []

    def ref(self, t):
        itemsize = t.element_size()
        nbytes = _C._storage_nbytes(t)
        numel = nbytes // itemsize
        if numel == 0:
            key = None
        else:
            key = (t.data_ptr() - t.storage_offset() * itemsize, nbytes)
            ref = self._by_base.get(key)
            if ref is not None:
                if ref.dtype != t.dtype:
                    raise RuntimeError("Cannot save multiple tensors or storages that view "
                                       "the same data as different types")
                return ref
        ref = _StorageRef(str(len(self.refs)), t, numel, "cpu")
        self.refs.append(ref)
        if key is not None:
            self._by_base[key] = ref
        return ref


def _pickler_class(pickle_module):
    base = getattr(pickle_module, "Pickler", None)
    if pickle_module is pickle:
        base = pickle._Pickler  # the Python pickler: its save_global can be taught names
    elif not (isinstance(base, type) and issubclass(base, pickle._Pickler)):
        raise NotImplementedError(
            f"pith.save: pickle_module={getattr(pickle_module, '__name__', pickle_module)!r} "
            f"is not supported: pith writes torch's names without importing torch, which "
            f"needs the pickle module's Python Pickler (pickle, or a module whose Pickler "
            f"derives from pickle._Pickler, as dill's does)")

    class Pickler(base):
        """Pickles pith tensors as torch.save does (Note [torch's names in pith])."""

        def __init__(self, file, protocol, storages):
            super().__init__(file, protocol=protocol)
            self._storages = storages

        def persistent_id(self, obj):
            # A new tuple each time, as torch's persistent_id makes: pickled afresh (its
            # items from the memo), so data.pkl is byte for byte torch's.
            return obj.persistent_id() if type(obj) is _StorageRef else None

        def reducer_override(self, obj):
            if _torch_name(obj) is not None:
                return "torch_name"  # a str: pickle writes it as a global (save_global)
            if isinstance(obj, _C.Tensor):
                return _reduce_tensor(obj, self._storages)
            if type(obj) is _C.Size:
                return _size, (tuple(obj),)
            return NotImplemented

        def save_global(self, obj, name=None):
            spelled = _torch_name(obj)
            if spelled is None:
                return super().save_global(obj, name)
            module, qualname = spelled
            self.write(pickle.GLOBAL + f"{module}\n{qualname}\n".encode("utf-8"))
            self.memoize(obj)

    return Pickler


def _torch_name(obj):
    """(module, name) that pith.save writes for a pith stand-in of a torch global, or None."""
    spelled = TORCH_NAME.get(id(obj))
    if spelled is None and obj is _parameter_class_if_loaded() and obj is not None:
        spelled = ("torch.nn.parameter", "Parameter")
    return spelled


def _parameter_class_if_loaded():
    nn = sys.modules.get("pith.nn")
    return getattr(nn, "Parameter", None) if nn is not None else None


def _reduce_tensor(t, storages):
    """torch.Tensor.__reduce_ex__ and Parameter.__reduce_ex__, for a pith tensor."""
    if t.device.type == "meta":
        rebuild = _rebuild_meta_tensor_no_storage
        args = (t.dtype, tuple(t.shape), tuple(t.stride()), False)
    else:
        _check_has_data(t)
        rebuild = _rebuild_tensor_v2
        args = (storages.ref(t), t.storage_offset(), tuple(t.shape), tuple(t.stride()),
                t.requires_grad, collections.OrderedDict())
    state = _get_state(t)
    if type(t) is _parameter_class_if_loaded():
        # A Parameter pickles its data (a plain tensor) and requires_grad.
        data = _C.Tensor.detach(t)
        rg = t.requires_grad
        if not state:
            return _rebuild_parameter, (data, rg, collections.OrderedDict())
        return _rebuild_parameter_with_state, (data, rg, collections.OrderedDict(), state)
    if type(t) is _C.Tensor and not state:
        return rebuild, args
    return _rebuild_from_type_v2, (rebuild, type(t), args, state)


def _check_has_data(t):
    if t.device.type != "cpu":
        raise RuntimeError(f"pith.save: a {t.device} tensor has no data to save")
    if getattr(type(t), "__pith_dispatch__", None) is not None:
        # Its storage is reached through its handler (a wrapper subclass has no data of
        # its own): save what it wraps.
        raise NotImplementedError(f"pith.save: tensors of a __pith_dispatch__ subclass "
                                  f"({type(t).__name__}) are not supported; save the tensors "
                                  f"it wraps")


def save(obj, f, pickle_module=pickle, pickle_protocol=DEFAULT_PROTOCOL,
         _use_new_zipfile_serialization=True, _disable_byteorder_record=False):
    """save(obj, f, pickle_module=pickle, pickle_protocol=2, _use_new_zipfile_serialization=True)

    Saves an object to a file (a path, or a binary file object with `write`) in the format
    of torch.save: tensors share their storages as in the program, and torch.load reads
    the file (with weights_only=True when it holds only tensors, containers and numbers).
    _use_new_zipfile_serialization=False writes torch's legacy format."""
    if not isinstance(f, (str, os.PathLike)) and not hasattr(f, "write"):
        raise AttributeError("expected 'f' to be string, path, or a file-like object with a "
                             "'write' attribute")
    if not isinstance(pickle_protocol, int) or not 2 <= pickle_protocol <= pickle.HIGHEST_PROTOCOL:
        raise ValueError(f"pith.save: pickle_protocol must be an int from 2 to "
                         f"{pickle.HIGHEST_PROTOCOL}, got {pickle_protocol!r}")
    pickler_class = _pickler_class(pickle_module)
    with _open_for_writing(f) as file:
        if _use_new_zipfile_serialization:
            _save_zip(obj, file, _archive_name(f), pickler_class, pickle_protocol,
                      _disable_byteorder_record)
        else:
            _save_legacy(obj, file, pickle_module, pickler_class, pickle_protocol)


@contextlib.contextmanager
def _open_for_writing(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "wb") as file:
            yield file
    else:
        yield f
        flush = getattr(f, "flush", None)
        if flush is not None:
            flush()


def _pickle_data(obj, pickler_class, protocol, storages):
    buf = io.BytesIO()
    pickler_class(buf, protocol, storages).dump(obj)
    return buf.getvalue()


def _save_zip(obj, file, archive_name, pickler_class, protocol, disable_byteorder):
    storages = _Storages()
    data = _pickle_data(obj, pickler_class, protocol, storages)
    writer = _zip.Writer(file, archive_name, _STORAGE_ALIGNMENT)
    writer.write_record("data.pkl", data)
    writer.write_record(".format_version", b"1")
    writer.write_record(".storage_alignment", str(_STORAGE_ALIGNMENT).encode())
    if not disable_byteorder:
        writer.write_record("byteorder", sys.byteorder.encode())
    for ref in storages.refs:
        writer.write_record(f"data/{ref.key}", ref.whole if ref.numel else b"")
    writer.write_record("version", _FILE_FORMAT_VERSION)
    # torch's serialization id: a hash of the record names and one of their crc32s, each
    # as 20 digits. Its use is telling files apart; the name hash is pith's own.
    names = hashlib.blake2b("\0".join(writer.record_names()).encode(), digest_size=8)
    serialization_id = f"{int.from_bytes(names.digest(), 'little'):020d}{writer.crc_hash:020d}"
    writer.write_record(".data/serialization_id", serialization_id.encode())
    writer.finish()


def _save_legacy(obj, file, pickle_module, pickler_class, protocol):
    sys_info = {"protocol_version": PROTOCOL_VERSION,
                "little_endian": sys.byteorder == "little",
                "type_sizes": {"short": 2, "int": 4, "long": 4}}
    for header in (MAGIC_NUMBER, PROTOCOL_VERSION, sys_info):
        pickle.dump(header, file, protocol=protocol)

    class LegacyPickler(pickler_class):
        def persistent_id(self, obj):
            return obj.persistent_id() + (None,) if type(obj) is _StorageRef else None

    storages = _Storages()
    LegacyPickler(file, protocol, storages).dump(obj)
    keys = sorted(ref.key for ref in storages.refs)
    pickle.dump(keys, file, protocol=protocol)
    by_key = {ref.key: ref for ref in storages.refs}
    for key in keys:
        ref = by_key[key]
        file.write(struct.pack("<q", ref.numel))
        if ref.numel:
            data = ref.whole
            if sys.byteorder != "little":
                data = _byteswapped(data)
            for chunk, _ in _zip._chunks(data)[0]:
                file.write(chunk)


# ---- load ----

_DEVICE = re.compile(r"([a-zA-Z_]+)(?::(\d+))?")


def _device_type(device):
    """'cpu' or 'meta' for a device string pith can load to; RuntimeError otherwise."""
    if isinstance(device, bytes):
        device = device.decode("ascii", "replace")
    if not isinstance(device, str):
        if hasattr(device, "type") and hasattr(device, "index"):  # a torch.device
            device = str(device)
        else:
            raise TypeError(f"pith.load: map_location must be a device string, a dict, a "
                            f"callable or None, got {type(device).__name__}")
    match = _DEVICE.fullmatch(device)
    if match is None:
        raise RuntimeError(f"pith.load: invalid device string: {device!r}")
    kind = match.group(1)
    if kind in ("cpu", "meta"):
        return kind
    raise NotImplementedError(f"pith.load: cannot restore a storage to '{device}': pith has "
                              f"only the CPU (and 'meta'); pass map_location='cpu' to load "
                              f"the tensors there")


class _Restore:
    """map_location, as torch._get_restore_location reads it: where each storage goes."""

    def __init__(self, map_location):
        self.callable = None
        if map_location is None:
            self._target = lambda location: location
        elif isinstance(map_location, (str, bytes)):
            self._target = lambda location: map_location
        elif isinstance(map_location, dict):
            self._target = lambda location: map_location.get(location, location)
        elif callable(map_location):
            self.callable = map_location
            self._target = lambda location: "cpu"  # the callable sees a CPU storage
        elif hasattr(map_location, "type") and hasattr(map_location, "index"):
            self._target = lambda location: str(map_location)  # a torch.device
        else:
            raise TypeError(f"pith.load: map_location must be a device string, a dict, a "
                            f"callable or None, got {type(map_location).__name__}")

    def device(self, location):
        """'cpu' or 'meta': where storage saved at `location` is read to."""
        return _device_type(self._target(location))

    def finish(self, tensor, location):
        """The storage once map_location's callable has seen it: the callable returns None
        (then the storage goes where it was saved) or the storage to use (torch returns a
        storage; pith has none, so storages are passed and returned as 1-D tensors)."""
        if self.callable is None:
            return tensor
        result = self.callable(tensor, location)
        if result is None:
            if _device_type(location) == "meta":
                return _ops.pith.empty([tensor.numel()], dtype=tensor.dtype, device="meta")
            return tensor
        if not isinstance(result, _C.Tensor) or result.dtype != tensor.dtype or \
                result.dim() != 1 or result.numel() != tensor.numel():
            raise RuntimeError("pith.load: map_location's callable must return None or a 1-D "
                               "pith tensor of the storage's dtype and length (pith has no "
                               "storage type: storages are passed as such tensors)")
        return result


def _byteswapped(t):
    """A copy of 1-D `t` with each element's bytes reversed."""
    itemsize = t.element_size()
    raw = _C._tensor_bytes(t)
    out = bytearray(len(raw))
    for i in range(itemsize):
        out[i::itemsize] = raw[itemsize - 1 - i::itemsize]
    swapped = _C.empty(t.numel(), dtype=t.dtype)
    io.BytesIO(out).readinto(swapped)
    return swapped


def _read_into(file, t, nbytes, name):
    """Fills 1-D contiguous `t` from `file` (a read of `nbytes` bytes)."""
    itemsize = t.element_size()
    readinto = getattr(file, "readinto", None)
    if readinto is None:
        data = file.read(nbytes)
        if len(data) != nbytes:
            raise RuntimeError(f"pith.load: record {name} is truncated")
        io.BytesIO(data).readinto(t)
        return
    step = max(1, _CHUNK // itemsize)
    numel = t.numel()
    start = 0
    while start < numel:
        end = min(numel, start + step)
        got = readinto(t[start:end])
        if not got:
            raise RuntimeError(f"pith.load: record {name} is truncated")
        if got % itemsize:
            raise RuntimeError(f"pith.load: reading record {name} returned {got} bytes, not "
                               f"whole elements of {itemsize} bytes")
        start += got // itemsize


class _ZipLoader:
    """Reads the storages of a zip checkpoint as persistent_load asks for them."""

    def __init__(self, reader, file, restore, mapped):
        self.reader, self.file, self.restore, self.mapped = reader, file, restore, mapped
        self.loaded = {}
        order = reader.read("byteorder") if reader.has("byteorder") else b"little"
        if order not in (b"little", b"big"):
            raise ValueError("Unknown endianness type: " + order.decode("ascii", "replace"))
        self.swap = order.decode() != sys.byteorder

    def persistent_load(self, pid):
        if not isinstance(pid, tuple) or len(pid) != 5 or _ascii(pid[0]) != "storage":
            raise pickle.UnpicklingError(f"persistent_load: expected ('storage', type, key, "
                                         f"location, numel), got {pid!r}"[:300])
        storage_type, key, location, numel = pid[1:]
        dtype = _storage_dtype(storage_type)
        if type(key) is not str or type(numel) is not int or numel < 0:
            raise pickle.UnpicklingError(f"persistent_load: bad storage record {pid!r}"[:300])
        location = _ascii(location)
        cached = self.loaded.get(key)
        if cached is not None:
            if cached.dtype != dtype or cached.numel() < numel:
                raise RuntimeError(f"pith.load: storage {key} is named with two dtypes or "
                                   f"lengths")
            return cached
        tensor = self.restore.finish(self._read(key, dtype, numel, location), location)
        self.loaded[key] = tensor
        return tensor

    def _read(self, key, dtype, numel, location):
        device = self.restore.device(location)
        name = f"data/{key}"
        rec = self.reader.record(name)
        itemsize = dtype.itemsize
        nbytes = numel * itemsize
        if rec.size != nbytes:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: record size "
                               f"{rec.size} mismatch with the storage's {nbytes} bytes "
                               f"({numel} elements of {dtype})")
        if device == "meta":
            return _ops.pith.empty([numel], dtype=dtype, device="meta")
        if numel == 0:
            return _C.empty(0, dtype=dtype)
        if (self.mapped is not None and not rec.compressed and not self.swap
                and rec.offset % itemsize == 0):
            # Note [mmap loads]
            # The tensor's storage is the mapped file's bytes (a private copy-on-write
            # mapping, as torch's MAP_PRIVATE default), and it keeps the mapping alive for
            # as long as any view of it lives. Records whose bytes are compressed,
            # misaligned for the dtype or of the other byte order are copied.
            return _C.frombuffer(self.mapped, dtype=dtype, count=numel, offset=rec.offset)
        t = _C.empty(numel, dtype=dtype)
        if rec.compressed:
            io.BytesIO(self.reader.inflate(rec)).readinto(t)
        else:
            self.file.seek(rec.offset)
            _read_into(self.file, t, nbytes, name)
        return _byteswapped(t) if self.swap else t


def _ascii(value):
    if isinstance(value, bytes):
        return value.decode("ascii")
    if not isinstance(value, str):
        raise pickle.UnpicklingError(f"expected a string in a storage record, got "
                                     f"{type(value).__name__}")
    return value


def _storage_dtype(storage_type):
    if type(storage_type) is not StorageType:
        raise pickle.UnpicklingError(f"persistent_load: expected a storage type, got "
                                     f"{storage_type!r}"[:200])
    return storage_type.dtype


def load(f, map_location=None, pickle_module=None, *, weights_only=None, mmap=None,
         **pickle_load_args):
    """load(f, map_location=None, pickle_module=None, *, weights_only=True, mmap=None, **pickle_load_args)

    Loads an object saved with torch.save or pith.save from a path or a binary file object
    (with read, seek and tell). Tensors come back on the CPU ('meta' with
    map_location='meta'); tensors that shared a storage share one again. Only an
    allow-list of globals is ever called (Note [The restricted unpickler]); a pickle that
    names another raises pickle.UnpicklingError naming it. mmap=True maps the file (a
    path) and returns tensors over the mapped bytes."""
    if weights_only is None:
        weights_only = pickle_module is None
    if weights_only and pickle_module is not None:
        raise RuntimeError("Can not safely load weights when explicit pickle_module is "
                           "specified")
    if pickle_module not in (None, pickle):
        raise NotImplementedError(
            f"pith.load: pickle_module={getattr(pickle_module, '__name__', pickle_module)!r} "
            f"is not supported: pith reads every pickle with its own restricted unpickler")
    unknown = set(pickle_load_args) - {"encoding", "errors", "fix_imports"}
    if unknown:
        raise TypeError(f"pith.load: unexpected keyword arguments {sorted(unknown)} (the "
                        f"pickle arguments pith takes are encoding, errors and fix_imports)")
    encoding = pickle_load_args.get("encoding", "utf-8")
    errors = pickle_load_args.get("errors", "strict")
    restore = _Restore(map_location)
    unpickling = dict(allowed=_allowed_names(bool(weights_only)), encoding=encoding,
                      errors=errors, hint=_hint(bool(weights_only)))
    with _open_for_reading(f) as file:
        if _is_zipfile(file):
            return _load_zip(f, file, restore, bool(mmap), unpickling)
        if mmap:
            name = f"{f}, " if isinstance(f, str) else ""
            raise RuntimeError(f"mmap can only be used with files saved with "
                               f"`torch.save({name}_use_new_zipfile_serialization=True), "
                               f"please torch.save your checkpoint with this option in order "
                               f"to use mmap.")
        return _load_legacy(file, restore, unpickling)


@contextlib.contextmanager
def _open_for_reading(f):
    if isinstance(f, (str, os.PathLike)):
        with open(f, "rb") as file:
            yield file
        return
    if not hasattr(f, "read"):
        raise AttributeError("pith.load: expected 'f' to be a string, a path, or a file-like "
                             "object with 'read', 'seek' and 'tell'")
    try:
        f.seek(f.tell())
    except (io.UnsupportedOperation, AttributeError) as e:
        raise type(e)(f"{e}. You can only pith.load from a file that is seekable. Please "
                      f"pre-load the data into a buffer like io.BytesIO and try to load from "
                      f"it instead.") from None
    yield f


def _is_zipfile(file):
    start = file.tell()
    magic = file.read(4)
    file.seek(start)
    return magic == b"PK\x03\x04"


def _weights_only_errors(fn):
    try:
        return fn()
    except pickle.UnpicklingError as e:
        raise pickle.UnpicklingError(f"Weights only load failed. {e}") from None


def _load_zip(f, file, restore, use_mmap, unpickling):
    reader = _zip.Reader(file)
    try:
        if reader.has("constants.pkl"):
            raise RuntimeError("pith.load: this is a TorchScript archive (torch.jit.save), "
                               "which pith cannot load")
        _check_version(reader)
        mapped = None
        if use_mmap:
            if not isinstance(f, (str, os.PathLike)):
                raise ValueError("f must be a file path in order to use the mmap argument")
            if os.path.getsize(f):
                mapped = _mmap.mmap(file.fileno(), 0, access=_mmap.ACCESS_COPY)
        loader = _ZipLoader(reader, file, restore, mapped)
        data = reader.read("data.pkl")
        unpickler = Unpickler(io.BytesIO(data), unpickling["allowed"], loader.persistent_load,
                              encoding=unpickling["encoding"], errors=unpickling["errors"],
                              hint=unpickling["hint"])
        return _weights_only_errors(unpickler.load)
    finally:
        reader.close()


def _check_version(reader):
    name = ".data/version" if reader.has(".data/version") else "version"
    if not reader.has(name):
        raise RuntimeError("PytorchStreamReader failed reading zip archive: the archive has "
                           "no version record")
    version = reader.read(name)
    try:
        int(version)
    except ValueError:
        raise RuntimeError(f"Couldn't parse the version {version[:20]!r} as Long Long.") \
            from None


class _Bounded:
    """A file's read/readline that never ask for more than the file holds, so a size in
    a malformed pickle cannot make a huge allocation."""

    def __init__(self, file):
        self.file = file
        start = file.tell()
        file.seek(0, 2)
        self.end = file.tell()
        file.seek(start)

    def read(self, n):
        return self.file.read(max(0, min(n, self.end - self.file.tell())))

    def readline(self):
        return self.file.readline()


def _load_legacy(file, restore, unpickling):
    start = file.tell()
    head = file.read(512)
    file.seek(start)
    if len(head) == 512 and head[257:262] == b"ustar":
        raise RuntimeError("pith.load: the legacy .tar checkpoint format (PyTorch 0.3 and "
                           "older) is not supported")
    bounded = _Bounded(file)

    def unpickle(persistent_load=None):
        return Unpickler(bounded, unpickling["allowed"], persistent_load,
                         encoding=unpickling["encoding"], errors=unpickling["errors"],
                         hint=unpickling["hint"]).load()

    try:
        magic = unpickle()
    except pickle.UnpicklingError as e:
        raise RuntimeError(f"pith.load: not a checkpoint: neither a zip archive (torch.save's "
                           f"format) nor a legacy torch.save file ({e})") from None
    if magic != MAGIC_NUMBER:
        raise RuntimeError("Invalid magic number; corrupt file?")
    protocol = unpickle()
    if protocol != PROTOCOL_VERSION:
        raise RuntimeError(f"Invalid protocol version: {protocol}")
    unpickle()  # sys_info: legacy storages are always little-endian
    storages = {}

    def persistent_load(pid):
        if not isinstance(pid, tuple) or not pid:
            raise pickle.UnpicklingError(f"persistent_load: bad id {pid!r}"[:200])
        kind = _ascii(pid[0])
        if kind == "module" and len(pid) == 4:
            return pid[1]  # an nn.Module class (with its source): the class itself
        if kind != "storage" or len(pid) != 6:
            raise RuntimeError(f"Unknown saved id type: {pid[0]!r}")
        storage_type, root_key, location, numel, view = pid[1:]
        dtype = _storage_dtype(storage_type)
        if type(numel) is not int or numel < 0 or not isinstance(root_key, str):
            raise pickle.UnpicklingError(f"persistent_load: bad storage record {pid!r}"[:300])
        location = _ascii(location)
        root = storages.get(root_key)
        if root is None:
            device = restore.device(location)
            root = _ops.pith.empty([numel], dtype=dtype, device=device)
            root = restore.finish(root, location)
            storages[root_key] = root
        elif root.dtype != dtype:
            raise RuntimeError(f"pith.load: storage {root_key} is named with two dtypes")
        if view is None:
            return root
        view_key, offset, size = view
        if view_key not in storages:
            if offset < 0 or size < 0 or offset + size > root.numel():
                raise RuntimeError(f"pith.load: storage view {view_key} lies outside its "
                                   f"storage")
            storages[view_key] = root[offset:offset + size]
        return storages[view_key]

    result = _weights_only_errors(lambda: unpickle(persistent_load))
    keys = unpickle()
    if not isinstance(keys, list):
        raise pickle.UnpicklingError("pith.load: the legacy storage key list is missing")
    for key in keys:
        storage = storages.get(key)
        if storage is None:
            raise RuntimeError(f"pith.load: storage key {key!r} not found in the checkpoint")
        header = file.read(8)
        if len(header) != 8:
            raise RuntimeError(f"pith.load: storage {key} is truncated")
        (numel,) = struct.unpack("<q", header)
        if numel != storage.numel():
            raise RuntimeError(f"pith.load: storage {key} holds {numel} elements, the "
                               f"checkpoint says {storage.numel()}")
        if numel and storage.device.type == "cpu":
            _read_into(file, storage, numel * storage.element_size(), f"storage {key}")
            if sys.byteorder != "little":
                storage.copy_(_byteswapped(storage))
        elif numel:
            file.seek(numel * storage.element_size(), 1)
    return result


def get_unsafe_globals_in_checkpoint(f):
    """The "module.name" globals in a checkpoint's pickle that pith.load's weights-only
    allow-list (with add_safe_globals) does not allow, found without loading it."""
    allowed = _allowed_names(True)
    with _open_for_reading(f) as file:
        if not _is_zipfile(file):
            raise ValueError("Expected input to be a checkpoint returned by torch.save")
        reader = _zip.Reader(file)
        try:
            data = reader.read("data.pkl")
        finally:
            reader.close()
    return sorted({name for name in globals_in(data) if name not in allowed})
