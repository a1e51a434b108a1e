"""The zip container of PyTorch checkpoints, written and read without torch.

pith.save writes the archive the way torch.save's PyTorchStreamWriter (miniz) does, byte
for byte in layout; pith.load reads any zip whose records are stored or deflated. See
Note [The checkpoint zip layout]. Nothing here knows about tensors beyond "a record is a
buffer of bytes"; pith/serialization.py gives the records their meaning.
"""
import struct
import zipfile
import zlib

# Note [The checkpoint zip layout]
# torch.save writes, through miniz with MZ_ZIP_FLAG_WRITE_ZIP64, one folder `<archive>/`
# (the file name without directory and extension, or "archive" for a buffer) holding
# data.pkl, .format_version, .storage_alignment, byteorder, data/<key>..., version and
# .data/serialization_id, in that order. Each record is
#   local header: signature, version 0, flags 0x0808 (sizes in a data descriptor, UTF-8
#                 name), method 0 (stored), time and date 0, crc and sizes 0
#   name, then [zip64 extra: id 1, the size twice if size >= 2**32-1, the header offset if
#   that offset >= 2**32-1], then an "FB" extra of 'Z's padding the data to a multiple of
#   the storage alignment (64): torch mmaps records, so their data must be aligned
#   data
#   data descriptor: signature, crc32, then the sizes as 32-bit, or as 64-bit when the
#                    zip64 extra is there (an empty record has none, nor flag bit 3)
# and the archive ends with the central directory (sizes and offset saturated at
# 0xFFFFFFFF with a zip64 extra holding the real ones), a zip64 end of central directory
# record and its locator (always, as miniz writes them under that flag), and the classic
# end record. torch's offset arithmetic (torch.serialization._load's _get_offset, used
# with mmap and calculate_storage_offsets) depends on exactly these sizes, so pith writes
# them all the same way. Reading needs none of it: the central directory gives each
# record's header, whose own name and extra lengths give the data's offset.

_U32 = 0xFFFFFFFF
_ZIP64_LIMIT = _U32  # sizes and offsets from here on need zip64 (tests lower it)
_LOCAL = struct.Struct("<4sHHHHHIIIHH")
_CENTRAL = struct.Struct("<4sHHHHHHIIIHHHHHII")
_ZIP64_END = struct.Struct("<4sQHHIIQQQQ")
_ZIP64_LOCATOR = struct.Struct("<4sIQI")
_END = struct.Struct("<4sHHHHIIH")
_FLAGS = 0x0808  # bit 3: sizes in a data descriptor; bit 11: UTF-8 names
_CHUNK = 1 << 26  # bytes per write/crc32 call, so memoryviews of huge storages stay cheap


class Writer:
    """Writes records to a binary file object, sequentially (no seeking), as miniz does."""

    def __init__(self, file, archive_name, alignment=64):
        self._file = file
        self._prefix = archive_name + "/"
        self._alignment = alignment
        self._pos = 0
        self._central = []
        self._names = set()
        self._crcs = 0

    def _write(self, data):
        self._file.write(data)
        self._pos += len(data)

    def write_record(self, name, data):
        """Stores `data`: bytes, or a 1-D contiguous pith tensor (any dtype: file objects
        and zlib take a tensor's buffer without asking for a format, so bfloat16 works too;
        see tensor_getbuffer in interop.c)."""
        if name in self._names:
            raise RuntimeError(f"pith.save: record {name!r} written twice")
        self._names.add(name)
        chunks, nbytes = _chunks(data)
        full = (self._prefix + name).encode("utf-8")
        offset = self._pos
        zip64 = nbytes >= _ZIP64_LIMIT or offset >= _ZIP64_LIMIT
        extra = b""
        if zip64:
            values = ([nbytes, nbytes] if nbytes >= _ZIP64_LIMIT else []) + (
                [offset] if offset >= _ZIP64_LIMIT else [])
            extra = struct.pack(f"<HH{len(values)}Q", 1, 8 * len(values), *values)
        start = offset + _LOCAL.size + len(full) + len(extra) + 4
        pad = -start % self._alignment
        extra += b"FB" + struct.pack("<H", pad) + b"Z" * pad
        # miniz writes an empty record without a data descriptor (and without its flag).
        flags = _FLAGS if nbytes else _FLAGS & ~0x8
        self._write(_LOCAL.pack(b"PK\x03\x04", 0, flags, 0, 0, 0, 0, 0, 0, len(full),
                                len(extra)) + full + extra)
        crc = 0
        for chunk, n in chunks:
            crc = zlib.crc32(chunk, crc)
            self._file.write(chunk)
            self._pos += n
        if nbytes:
            fmt = "<4sIQQ" if zip64 else "<4sIII"
            self._write(struct.pack(fmt, b"PK\x07\x08", crc, nbytes, nbytes))
            self._crcs = _hash_combine(self._crcs, crc)
        self._central.append((full, crc, nbytes, offset, flags))

    def record_names(self):
        return sorted(self._names)

    @property
    def crc_hash(self):
        return self._crcs

    def finish(self):
        """Writes the central directory and the end records."""
        cd_start = self._pos
        entries = []
        for full, crc, nbytes, offset, flags in self._central:
            big_size, big_offset = nbytes >= _ZIP64_LIMIT, offset >= _ZIP64_LIMIT
            values = ([nbytes, nbytes] if big_size else []) + ([offset] if big_offset else [])
            extra = struct.pack(f"<HH{len(values)}Q", 1, 8 * len(values),
                                *values) if values else b""
            size = _U32 if big_size else nbytes
            entries.append(_CENTRAL.pack(b"PK\x01\x02", 0, 0, flags, 0, 0, 0, crc, size,
                                         size, len(full), len(extra), 0, 0, 0, 0,
                                         _U32 if big_offset else offset) + full + extra)
        self._write(b"".join(entries))
        cd_size = self._pos - cd_start
        n = len(self._central)
        zip64_end = self._pos
        self._write(_ZIP64_END.pack(b"PK\x06\x06", _ZIP64_END.size - 12, 0x031E, 0x002D, 0,
                                    0, n, n, cd_size, cd_start))
        self._write(_ZIP64_LOCATOR.pack(b"PK\x06\x07", 0, zip64_end, 1))
        self._write(_END.pack(b"PK\x05\x06", 0, 0, min(n, 0xFFFF), min(n, 0xFFFF),
                              _U32 if cd_size >= _ZIP64_LIMIT else cd_size,
                              _U32 if cd_start >= _ZIP64_LIMIT else cd_start, 0))


def _chunks(data):
    """(chunk, bytes) pairs of at most _CHUNK bytes covering `data`, and its byte count."""
    if isinstance(data, (bytes, bytearray)):
        n = len(data)
        view = memoryview(data)
        return ((view[i:i + _CHUNK], min(_CHUNK, n - i)) for i in range(0, n, _CHUNK)), n
    itemsize = data.element_size()
    numel = data.numel()
    step = max(1, _CHUNK // itemsize)
    return (((data[i:i + step], min(step, numel - i) * itemsize)
             for i in range(0, numel, step)), numel * itemsize)


def _hash_combine(seed, value):
    # c10::hash_combine on 64-bit values (the serialization id's second half).
    seed &= 0xFFFFFFFFFFFFFFFF
    return seed ^ ((value + 0x9E3779B9 + (seed << 6) + (seed >> 2)) & 0xFFFFFFFFFFFFFFFF)


class Record:
    """Where one record's bytes are: `offset` in the file, `size` bytes once inflated."""
    __slots__ = ("name", "offset", "size", "compressed", "info")

    def __init__(self, name, offset, size, compressed, info):
        self.name, self.offset, self.size = name, offset, size
        self.compressed, self.info = compressed, info


class Reader:
    """The records of an archive, by name below its one folder (PyTorchStreamReader)."""

    def __init__(self, file):
        self._file = file
        try:
            self._zip = zipfile.ZipFile(file)
            infos = self._zip.infolist()
        except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, ValueError,
                struct.error, OverflowError, NotImplementedError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: {e}") from None
        if not infos:
            raise RuntimeError("PytorchStreamReader failed reading zip archive: archive does "
                               "not contain any files")
        first = infos[0].filename
        if "/" not in first:
            raise RuntimeError(f"PytorchStreamReader failed reading zip archive: file in "
                               f"archive is not in a subdirectory: {first}")
        self.archive_name = first[:first.index("/")]
        prefix = self.archive_name + "/"
        self._infos = {}
        for info in infos:
            if info.filename.startswith(prefix):
                self._infos.setdefault(info.filename[len(prefix):], info)
        file.seek(0, 2)
        self._file_size = file.tell()

    def names(self):
        return list(self._infos)

    def has(self, name):
        return name in self._infos

    def record(self, name):
        info = self._infos.get(name)
        if info is None:
            raise RuntimeError(f"PytorchStreamReader failed locating file {name}: file not "
                               f"found")
        if info.compress_type not in (zipfile.ZIP_STORED, zipfile.ZIP_DEFLATED):
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: compression "
                               f"method {info.compress_type} is not supported")
        if info.flag_bits & 0x1:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: the record "
                               f"is encrypted")
        self._file.seek(info.header_offset)
        header = self._file.read(_LOCAL.size)
        if len(header) != _LOCAL.size or header[:4] != b"PK\x03\x04":
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: bad local "
                               f"header at offset {info.header_offset}")
        name_len, extra_len = struct.unpack("<HH", header[26:30])
        offset = info.header_offset + _LOCAL.size + name_len + extra_len
        if offset + info.compress_size > self._file_size:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: the record "
                               f"({info.compress_size} bytes at offset {offset}) runs past "
                               f"the end of the file ({self._file_size} bytes): the file is "
                               f"truncated")
        compressed = info.compress_type != zipfile.ZIP_STORED
        return Record(name, offset, info.file_size, compressed, info)

    def read(self, name):
        """A record's bytes (small records: data.pkl, version ...)."""
        rec = self.record(name)
        if rec.compressed:
            return self.inflate(rec)
        self._file.seek(rec.offset)
        data = self._file.read(rec.size)
        if len(data) != rec.size:
            raise RuntimeError(f"PytorchStreamReader failed reading file {name}: the file is "
                               f"truncated")
        return data

    def inflate(self, rec):
        try:
            with self._zip.open(rec.info) as f:
                data = f.read()
        except (zipfile.BadZipFile, zlib.error, OSError, EOFError, ValueError) as e:
            raise RuntimeError(f"PytorchStreamReader failed reading file {rec.name}: {e}") \
                from None
        if len(data) != rec.size:
            raise RuntimeError(f"PytorchStreamReader failed reading file {rec.name}: the file "
                               f"is truncated")
        return data

    def close(self):
        self._zip.close()
