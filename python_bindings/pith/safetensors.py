"""The safetensors format, as the `safetensors` package reads and writes it for torch.

    pith.safetensors.save_file({"w": t}, "model.safetensors", metadata={"k": "v"})
    tensors = pith.safetensors.load_file("model.safetensors")   # memory-mapped
    blob = pith.safetensors.save({"w": t}); pith.safetensors.load(blob)
    with pith.safetensors.safe_open("model.safetensors", framework="pt") as f: ...

A file is an 8-byte little-endian header length N, N bytes of JSON (name -> dtype, shape,
data_offsets; "__metadata__" -> str -> str) padded with spaces to a multiple of 8, then the
tensors' bytes, contiguous and row-major, in the order of their offsets. See Note
[safetensors files].
"""
import json
import mmap as _mmap
import os
import struct

from . import _C

__all__ = ["save", "save_file", "load", "load_file", "safe_open", "SafetensorError"]

# Note [safetensors files]
# Reading checks what the Rust reader of safetensors 0.8 checks, in its order and words:
# the header fits the file (at most 100 MB), is a JSON object whose entries have a known
# dtype, a shape of non-negative ints and two offsets; sorted by offset, every tensor
# starts where the previous one ended, its byte count is numel * itemsize (overflow
# checked), and the last one ends where the file does. A tensor whose bytes start at a
# multiple of its item size in the file (every tensor of a file that safetensors or pith
# wrote: the data starts 8-aligned, and tensors are laid out by decreasing item size) is a
# view of the memory-mapped file, with no copy; any other is copied into memory of its
# own (pith tensors are always aligned). The mapping is private (copy-on-write): writing
# to a loaded tensor never changes the file; it lives while any tensor over it does.
# Writing lays tensors out in safetensors' order (by dtype, larger item sizes first, then
# by name), so the bytes equal the package's, except for the order of metadata keys
# (the package's Rust map has none).

_MAX_HEADER = 100_000_000

# safetensors dtype names in the package's enum order (its save sorts by it), and pith's.
_DTYPE_ORDER = ["BOOL", "F4", "F6_E2M3", "F6_E3M2", "U8", "I8", "F8_E5M2", "F8_E4M3",
                "F8_E8M0", "F8_E4M3FNUZ", "F8_E5M2FNUZ", "I16", "U16", "F16", "BF16", "I32",
                "U32", "F32", "C64", "F64", "I64", "U64"]
_BITS = {"BOOL": 8, "F4": 4, "F6_E2M3": 6, "F6_E3M2": 6, "U8": 8, "I8": 8, "F8_E5M2": 8,
         "F8_E4M3": 8, "F8_E8M0": 8, "F8_E4M3FNUZ": 8, "F8_E5M2FNUZ": 8, "I16": 16,
         "U16": 16, "F16": 16, "BF16": 16, "I32": 32, "U32": 32, "F32": 32, "C64": 64,
         "F64": 64, "I64": 64, "U64": 64}
_PITH = {"BOOL": "bool", "U8": "uint8", "I8": "int8", "I16": "int16", "I32": "int32",
         "I64": "int64", "F16": "float16", "BF16": "bfloat16", "F32": "float32",
         "F64": "float64"}
_NAME_OF = {pith: st for st, pith in _PITH.items()}


class SafetensorError(ValueError):
    """A malformed safetensors file or header (the package's SafetensorError; pith's is
    also a ValueError)."""


def _fail(what):
    raise SafetensorError(f"Error while deserializing: {what}")


# ---- reading ----

def _parse_header(buffer, length):
    """(metadata, [(name, dtype name, shape, start, end)] sorted by offset, data start)."""
    if length < 8:
        _fail("header too small")
    (n,) = struct.unpack("<Q", buffer[:8])
    if n > _MAX_HEADER:
        _fail("header too large")
    if 8 + n > length:
        _fail("invalid header length")
    try:
        text = bytes(buffer[8:8 + n]).decode("utf-8")
    except UnicodeDecodeError:
        _fail("invalid UTF-8 in header")
    try:
        header = json.loads(text)
    except ValueError as e:
        _fail(f"invalid JSON in header: {e}")
    if not isinstance(header, dict):
        _fail(f"invalid JSON in header: invalid type: {type(header).__name__}, expected "
              f"struct HashMetadata")
    metadata = header.pop("__metadata__", None)
    if metadata is not None and (not isinstance(metadata, dict) or not all(
            isinstance(v, str) for v in metadata.values())):
        _fail("invalid JSON in header: __metadata__ must map strings to strings")
    entries = []
    for name, info in header.items():
        entries.append((name,) + _tensor_info(name, info))
    entries.sort(key=lambda e: (e[3], e[4]))
    start = 0
    for name, dtype, shape, s, e in entries:
        if s != start or e < s:
            _fail(f"invalid offset for tensor `{name}`")
        start = e
        numel = 1
        for size in shape:
            numel *= size
        nbits = numel * _BITS[dtype]
        if nbits >= 2 ** 64:
            _fail("overflow computing buffer size from shape and/or element type")
        if nbits % 8 or e - s != nbits // 8:
            _fail("invalid shape, data type, or offset for tensor")
    if start + 8 + n != length:
        _fail("incomplete metadata, file not fully covered")
    return metadata, entries, 8 + n


def _tensor_info(name, info):
    if not isinstance(info, dict):
        _fail(f"invalid JSON in header: tensor `{name}` must be an object")
    for field in ("dtype", "shape", "data_offsets"):
        if field not in info:
            _fail(f"invalid JSON in header: missing field `{field}` of tensor `{name}`")
    dtype, shape, offsets = info["dtype"], info["shape"], info["data_offsets"]
    if dtype not in _BITS:
        expected = ", ".join(f"`{d}`" for d in _DTYPE_ORDER)
        _fail(f"invalid JSON in header: unknown variant `{dtype}`, expected one of {expected}")
    if not isinstance(shape, list) or not all(_is_u64(s) for s in shape):
        _fail(f"invalid JSON in header: the shape of tensor `{name}` must be a list of "
              f"non-negative integers, got {shape!r}"[:200])
    if not isinstance(offsets, list) or len(offsets) != 2 or not all(
            _is_u64(o) for o in offsets):
        _fail(f"invalid JSON in header: the data_offsets of tensor `{name}` must be two "
              f"non-negative integers, got {offsets!r}"[:200])
    return dtype, shape, offsets[0], offsets[1]


def _is_u64(v):
    return type(v) is int and 0 <= v < 2 ** 64


def _pith_dtype(name, dtype):
    pith = _PITH.get(dtype)
    if pith is None:
        raise NotImplementedError(f"pith.safetensors: tensor `{name}` has dtype {dtype}, which "
                                  f"pith does not have")
    return getattr(_C, pith)


def _tensor(buffer, name, dtype_name, shape, offset, nbytes):
    """A tensor over buffer[offset:offset+nbytes] (a view when aligned, else a copy)."""
    dtype = _pith_dtype(name, dtype_name)
    if nbytes == 0:
        return _C.empty(shape, dtype=dtype)
    numel = nbytes // dtype.itemsize
    if offset % dtype.itemsize == 0:
        flat = _C.frombuffer(buffer, dtype=dtype, count=numel, offset=offset)
    else:
        flat = _C.empty(numel, dtype=dtype)
        _fill(flat, memoryview(buffer)[offset:offset + nbytes])
    return flat.view(shape)


def _fill(t, data):
    import io
    io.BytesIO(data).readinto(t)


def _check_device(device):
    spelled = str(device) if not isinstance(device, (str, int)) else device
    if spelled not in ("cpu", "cpu:0"):
        raise NotImplementedError(f"pith.safetensors: device {device!r} is not available: pith "
                                  f"has only the CPU (device='cpu')")


def _map(filename):
    with open(filename, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        if size == 0:
            return b"", 0
        return _mmap.mmap(f.fileno(), 0, access=_mmap.ACCESS_COPY), size


def _load_buffer(buffer, length):
    _, entries, start = _parse_header(buffer, length)
    return {name: _tensor(buffer, name, dtype, shape, start + s, e - s)
            for name, dtype, shape, s, e in entries}


def load_file(filename, device="cpu"):
    """The tensors of a safetensors file, by name: views of the memory-mapped file."""
    _check_device(device)
    buffer, size = _map(filename)
    return _load_buffer(buffer, size)


def load(data):
    """The tensors of safetensors bytes, by name (in memory of their own: one copy of
    `data`, which the tensors view)."""
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"pith.safetensors.load: expected bytes, got {type(data).__name__}")
    buffer = bytearray(data)
    return _load_buffer(buffer, len(buffer))


class safe_open:
    """safe_open(filename, framework="pt", device="cpu"): a memory-mapped file whose tensors
    are read by name (keys(), get_tensor(name), metadata()), as a context manager."""

    def __init__(self, filename, framework="pt", device="cpu"):
        if framework not in ("pt", "pytorch", "torch", "pith"):
            raise NotImplementedError(f"pith.safetensors.safe_open: framework {framework!r} is "
                                      f"not supported (pith gives pith tensors: 'pt')")
        _check_device(device)
        self._buffer, size = _map(filename)
        self._metadata, entries, self._start = _parse_header(self._buffer, size)
        self._entries = {e[0]: e for e in entries}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self._entries = {}

    def keys(self):
        return sorted(self._entries)

    def offset_keys(self):
        return list(self._entries)

    def metadata(self):
        return self._metadata

    def get_tensor(self, name):
        entry = self._entries.get(name)
        if entry is None:
            raise SafetensorError(f"File does not contain tensor {name}")
        _, dtype, shape, s, e = entry
        return _tensor(self._buffer, name, dtype, shape, self._start + s, e - s)


# ---- writing ----

def _prepare(tensors, metadata):
    if not isinstance(tensors, dict):
        raise TypeError(f"argument 'tensor_dict': expected a dict, got "
                        f"{type(tensors).__name__}")
    for name, t in tensors.items():
        if not isinstance(name, str):
            raise TypeError(f"argument 'tensor_dict': '{type(name).__name__}' object is not "
                            f"an instance of 'str'")
        if not isinstance(t, _C.Tensor):
            raise TypeError(f"pith.safetensors: `{name}` is a {type(t).__name__}, not a "
                            f"pith.Tensor")
        if t.device.type != "cpu":
            raise NotImplementedError(f"pith.safetensors: `{name}` is a {t.device} tensor, "
                                      f"which has no data to save")
        if not t.is_contiguous():
            raise ValueError(
                f"You are trying to save a non contiguous tensor: `{name}` which is not "
                f"allowed. It either means you are trying to save tensors which are reference "
                f"of each other in which case it's recommended to save only the full tensors, "
                f"and reslice at load time, or simply call `.contiguous()` on your tensor to "
                f"pack it before saving.")
    if metadata is not None:
        if not isinstance(metadata, dict):
            raise TypeError(f"argument 'metadata': expected a dict, got "
                            f"{type(metadata).__name__}")
        for k, v in metadata.items():
            for item in (k, v):
                if not isinstance(item, str):
                    raise TypeError(f"argument 'metadata': '{type(item).__name__}' object is "
                                    f"not an instance of 'str'")
    _check_shared(tensors)
    order = sorted(tensors, key=lambda n: (-_DTYPE_ORDER.index(_NAME_OF[
        str(tensors[n].dtype).rpartition(".")[2]]), n))
    header = {} if metadata is None else {"__metadata__": metadata}
    offset = 0
    for name in order:
        t = tensors[name]
        nbytes = t.numel() * t.element_size()
        header[name] = {"dtype": _NAME_OF[str(t.dtype).rpartition(".")[2]],
                        "shape": list(t.shape), "data_offsets": [offset, offset + nbytes]}
        offset += nbytes
    text = json.dumps(header, separators=(",", ":"), ensure_ascii=False).encode("utf-8")
    text += b" " * (-len(text) % 8)
    return struct.pack("<Q", len(text)) + text, [tensors[n] for n in order]


def _check_shared(tensors):
    # safetensors refuses tensors whose bytes overlap (it would write them twice).
    spans = []
    for name, t in tensors.items():
        nbytes = t.numel() * t.element_size()
        if nbytes:
            spans.append((t.data_ptr(), t.data_ptr() + nbytes, name))
    spans.sort()
    groups, end = [], -1
    for start, stop, name in spans:
        if start < end:
            groups[-1].add(name)
        else:
            groups.append({name})
        end = max(end, stop)
    failing = [g for g in groups if len(g) > 1]
    if failing:
        raise RuntimeError(f"Some tensors share memory, this will lead to duplicate memory on "
                           f"disk and potential differences when loading them again: "
                           f"{failing}. A potential way to correctly save your model is to "
                           f"save each shared tensor once and reslice at load time.")


def _write(file, header, ordered):
    file.write(header)
    for t in ordered:
        if t.numel():
            file.write(t)  # the buffer without a format: any dtype, bfloat16 too


def save(tensors, metadata=None):
    """The safetensors bytes of a dict of contiguous tensors."""
    import io
    header, ordered = _prepare(tensors, metadata)
    buf = io.BytesIO()
    _write(buf, header, ordered)
    return buf.getvalue()


def save_file(tensors, filename, metadata=None):
    """Writes a dict of contiguous tensors to a safetensors file."""
    header, ordered = _prepare(tensors, metadata)
    with open(filename, "wb") as f:
        _write(f, header, ordered)
