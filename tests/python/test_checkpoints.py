"""pith.save / pith.load: PyTorch's checkpoint format without torch (pith/serialization.py).

The fixtures of tests/data/checkpoints/ were written by torch 2.13 (scripts/
gen_checkpoint_fixtures.py), with what loading them must give in expected.json; they load
here without torch. Round trips with torch, when it is installed, check both directions.
Malformed files and forbidden globals are errors, never crashes or code."""
import argparse
import collections
import datetime
import io
import json
import os
import pickle
import struct
import subprocess
import sys
import tarfile
import zipfile

import pytest
from hypothesis import given, settings, strategies as st

import pith
import pith.nn
from pith import _zip

from conftest import DATA_DIR

CHECKPOINTS = DATA_DIR / "checkpoints"
EXPECTED = json.loads((CHECKPOINTS / "expected.json").read_text("utf-8"))
TORCH_FILES = sorted(n for n in EXPECTED if n.endswith(".pt"))
DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "bfloat16",
          "float32", "float64"]


# ---- comparing a loaded object with expected.json ----------------------------------------

def storage_base(t):
    return t.data_ptr() - t.storage_offset() * t.element_size()


def values(t):
    return (t.double() if t.dtype in (pith.float16, pith.bfloat16) else t).tolist()


def check(obj, exp, storages):
    """obj matches the JSON description `exp` (see Encoder in the script); `storages` maps
    the description's storage ids to the storage base address they loaded at."""
    (kind,) = [k for k in exp if k != "metadata"]
    spec = exp[kind]
    if kind == "tensor":
        assert isinstance(obj, pith.Tensor) and not isinstance(obj, pith.nn.Parameter)
        check_tensor(obj, spec, storages)
    elif kind == "parameter":
        assert type(obj) is pith.nn.Parameter
        check_tensor(obj, spec["tensor"], storages)
    elif kind == "dtype":
        assert obj is getattr(pith, spec)
    elif kind == "size":
        assert type(obj) is pith.Size and list(obj) == spec
    elif kind in ("dict", "ordereddict"):
        assert type(obj) is (dict if kind == "dict" else collections.OrderedDict)
        assert len(obj) == len(spec)
        for (k, v), (ek, ev) in zip(obj.items(), spec):
            check(k, ek, storages)
            check(v, ev, storages)
        if "metadata" in exp:
            check(obj._metadata, exp["metadata"], storages)
    elif kind in ("list", "tuple"):
        assert type(obj) is (list if kind == "list" else tuple) and len(obj) == len(spec)
        for o, e in zip(obj, spec):
            check(o, e, storages)
    elif kind == "bytes":
        assert obj == bytes.fromhex(spec)
    else:
        assert type(obj) is type(spec) and obj == spec


def check_tensor(t, spec, storages):
    assert str(t.dtype) == f"pith.{spec['dtype']}"
    assert list(t.shape) == spec["shape"]
    assert list(t.stride()) == spec["stride"]
    if spec.get("device") == "meta":
        assert t.device.type == "meta"
        return
    assert t.device.type == "cpu"
    assert t.storage_offset() == spec["storage_offset"]
    assert values(t) == spec["values"]
    base = storage_base(t)
    if t.numel():  # empty storages have no address to tell them apart
        assert storages.setdefault(spec["storage"], base) == base
        assert list(storages.values()).count(base) == 1, "two storages loaded as one"
    for name, value in spec.get("attributes", {}).items():
        check(getattr(t, name), value, storages)


def check_file(obj, name):
    check(obj, EXPECTED[name], {})


# ---- torch's files, without torch --------------------------------------------------------

@pytest.mark.parametrize("name", TORCH_FILES)
def test_torch_fixture_loads(name):
    check_file(pith.load(CHECKPOINTS / name), name)


@pytest.mark.parametrize("name", [n for n in TORCH_FILES if n != "legacy.pt"])
def test_torch_fixture_loads_with_mmap(name):
    check_file(pith.load(str(CHECKPOINTS / name), mmap=True), name)


@pytest.mark.parametrize("name", TORCH_FILES)
def test_torch_fixture_loads_from_a_buffer(name):
    data = (CHECKPOINTS / name).read_bytes()
    check_file(pith.load(io.BytesIO(data)), name)


def test_fixtures_load_in_a_process_without_torch():
    code = ("import sys, pathlib, pith\n"
            "for p in sorted(pathlib.Path(sys.argv[1]).glob('*.pt')):\n"
            "    pith.load(p); pith.load(p, weights_only=False)\n"
            "assert 'torch' not in sys.modules, 'pith.load imported torch'\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    subprocess.run([sys.executable, "-c", code, str(CHECKPOINTS)], check=True, env=env)


def test_views_share_their_storage_after_loading():
    views = pith.load(CHECKPOINTS / "views.pt")
    views["base"][2, 0] = 100.0
    assert views["row"][0].item() == 100.0
    assert views["transposed"][0, 2].item() == 100.0
    views["other"][0] = -5
    assert views["base"][0, 0].item() == 0.0


# ---- mmap: tensors view the mapped file ---------------------------------------------------

def mapping_of(address):
    """The file /proc/self/maps says `address` is mapped from, or None (Linux)."""
    with open("/proc/self/maps") as f:
        for line in f:
            fields = line.split()
            lo, hi = (int(x, 16) for x in fields[0].split("-"))
            if lo <= address < hi:
                return fields[5] if len(fields) > 5 else None
    return None


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/maps"),
                                reason="reads /proc/self/maps")


@needs_proc
def test_mmap_tensors_view_the_file_and_keep_it_mapped(tmp_path):
    path = tmp_path / "w.pt"
    pith.save({"a": pith.arange(1000, dtype=pith.float32), "b": pith.ones(7)}, path)
    loaded = pith.load(str(path), mmap=True)
    assert mapping_of(loaded["a"].data_ptr()) == str(path)
    view = loaded["a"][10:20]
    del loaded
    assert mapping_of(view.data_ptr()) == str(path)  # the mapping lives with its views
    assert view.tolist() == list(range(10, 20))
    view[0] = -1.0  # a private mapping: the file keeps its bytes
    assert pith.load(path)["a"][10].item() == 10.0
    address = view.data_ptr()
    del view
    assert mapping_of(address) != str(path)


@needs_proc
def test_load_without_mmap_copies(tmp_path):
    path = tmp_path / "w.pt"
    pith.save(pith.arange(100), path)
    assert mapping_of(pith.load(path).data_ptr()) != str(path)


def test_mmap_needs_a_path_and_the_zip_format(tmp_path):
    buf = io.BytesIO()
    pith.save(pith.ones(2), buf)
    with pytest.raises(ValueError, match="f must be a file path"):
        pith.load(io.BytesIO(buf.getvalue()), mmap=True)
    legacy = tmp_path / "legacy.pt"
    pith.save(pith.ones(2), legacy, _use_new_zipfile_serialization=False)
    with pytest.raises(RuntimeError, match="mmap can only be used"):
        pith.load(str(legacy), mmap=True)


# ---- pith -> pith ------------------------------------------------------------------------

def assert_same_tensor(a, b):
    assert a.dtype == b.dtype and a.shape == b.shape and a.stride() == b.stride()
    assert a.storage_offset() == b.storage_offset()
    assert values(a) == values(b)


def some_tensor(dtype, shape):
    n = 1
    for s in shape:
        n *= s
    t = pith.arange(n, dtype=pith.float64) * 1.5 - 7
    return t.reshape(shape).to(getattr(pith, dtype))


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0, 3), (2, 3, 4)])
def test_round_trip_every_dtype_and_shape(dtype, shape):
    t = some_tensor(dtype, shape)
    buf = io.BytesIO()
    pith.save(t, buf)
    assert_same_tensor(pith.load(io.BytesIO(buf.getvalue())), t)


@settings(max_examples=40, deadline=None)
@given(dtype=st.sampled_from(DTYPES), rows=st.integers(1, 6), cols=st.integers(1, 6),
       start=st.integers(0, 5), step=st.integers(1, 3), transpose=st.booleans())
def test_round_trip_of_strided_views_keeps_geometry_and_sharing(dtype, rows, cols, start,
                                                                step, transpose):
    base = some_tensor(dtype, (rows + 5, cols))
    view = base[start::step]
    if transpose:
        view = view.t()
    buf = io.BytesIO()
    pith.save({"base": base, "view": view}, buf)
    loaded = pith.load(io.BytesIO(buf.getvalue()))
    assert_same_tensor(loaded["view"], view)
    assert_same_tensor(loaded["base"], base)
    assert storage_base(loaded["view"]) == storage_base(loaded["base"])


def test_round_trip_of_containers_parameters_and_state():
    t = pith.arange(4, dtype=pith.int16)
    p = pith.nn.Parameter(pith.ones(2, 2))
    tagged = pith.zeros(3)
    tagged.note = "kept"
    obj = {"list": [1, 2.5, "s", None, True, (t, t[1:])], "nested": {3: {"p": p}},
           "size": pith.Size([2, 3]), "dtype": pith.bfloat16, "bytes": b"\x00\x01",
           "tagged": tagged, "od": collections.OrderedDict(a=1)}
    buf = io.BytesIO()
    pith.save(obj, buf)
    loaded = pith.load(io.BytesIO(buf.getvalue()))
    assert loaded["list"][:5] == [1, 2.5, "s", None, True]
    a, b = loaded["list"][5]
    assert_same_tensor(a, t) and storage_base(a) == storage_base(b)
    assert type(loaded["nested"][3]["p"]) is pith.nn.Parameter
    assert loaded["size"] == pith.Size([2, 3]) and type(loaded["size"]) is pith.Size
    assert loaded["dtype"] is pith.bfloat16 and loaded["bytes"] == b"\x00\x01"
    assert loaded["tagged"].note == "kept"
    assert loaded["od"] == collections.OrderedDict(a=1)


def test_state_dict_round_trip_into_a_module():
    model = pith.nn.Sequential(pith.nn.Linear(3, 4), pith.nn.LayerNorm(4))
    buf = io.BytesIO()
    pith.save(model.state_dict(), buf)
    state = pith.load(io.BytesIO(buf.getvalue()))
    assert state._metadata == model.state_dict()._metadata
    other = pith.nn.Sequential(pith.nn.Linear(3, 4), pith.nn.LayerNorm(4))
    other.load_state_dict(state)
    for (k, v), (k2, v2) in zip(model.state_dict().items(), other.state_dict().items()):
        assert k == k2 and values(v) == values(v2)


def test_save_to_a_path_names_the_archive_as_torch_does(tmp_path):
    pith.save(pith.ones(1), tmp_path / "my.model.pt")
    assert zipfile.ZipFile(tmp_path / "my.model.pt").namelist()[0] == "my.model/data.pkl"
    buf = io.BytesIO()
    pith.save(pith.ones(1), buf)
    assert zipfile.ZipFile(buf).namelist()[0] == "archive/data.pkl"


def test_records_are_aligned_and_the_zip_is_valid():
    buf = io.BytesIO()
    pith.save({"a": pith.ones(3), "b": pith.zeros(5, dtype=pith.int8)}, buf)
    data = buf.getvalue()
    z = zipfile.ZipFile(io.BytesIO(data))
    assert z.testzip() is None
    for info in z.infolist():
        name_len, extra_len = struct.unpack("<HH", data[info.header_offset + 26:
                                                       info.header_offset + 30])
        assert (info.header_offset + 30 + name_len + extra_len) % 64 == 0


def test_zip64_records(monkeypatch):
    # Records and offsets past 4 GiB use zip64 extras; a lower threshold exercises them.
    monkeypatch.setattr(_zip, "_ZIP64_LIMIT", 100)
    t = pith.arange(200, dtype=pith.float32)
    buf = io.BytesIO()
    pith.save({"t": t, "v": t[50:]}, buf)
    assert zipfile.ZipFile(io.BytesIO(buf.getvalue())).testzip() is None
    loaded = pith.load(io.BytesIO(buf.getvalue()))
    assert values(loaded["v"]) == values(t[50:])


def test_legacy_format_round_trip():
    base = pith.arange(12, dtype=pith.int32).reshape(3, 4)
    buf = io.BytesIO()
    pith.save({"base": base, "col": base[:, 1]}, buf, _use_new_zipfile_serialization=False)
    loaded = pith.load(io.BytesIO(buf.getvalue()))
    assert_same_tensor(loaded["col"], base[:, 1])
    assert storage_base(loaded["col"]) == storage_base(loaded["base"])


def test_meta_tensors_and_map_location_meta():
    buf = io.BytesIO()
    pith.save({"m": pith.empty_strided((2, 3), (1, 2), device="meta"), "t": pith.ones(2)},
              buf)
    loaded = pith.load(io.BytesIO(buf.getvalue()))
    assert loaded["m"].device.type == "meta" and loaded["m"].stride() == (1, 2)
    on_meta = pith.load(io.BytesIO(buf.getvalue()), map_location="meta")
    assert on_meta["t"].device.type == "meta" and on_meta["t"].shape == (2,)


# ---- map_location -------------------------------------------------------------------------

def saved(obj=None):
    buf = io.BytesIO()
    pith.save(pith.arange(3) if obj is None else obj, buf)
    return buf.getvalue()


@pytest.mark.parametrize("where", ["cpu", b"cpu", "cpu:0", {"cpu": "cpu"}, {}, None,
                                   lambda storage, location: storage,
                                   lambda storage, location: None])
def test_map_location_to_the_cpu(where):
    assert pith.load(io.BytesIO(saved()), map_location=where).tolist() == [0, 1, 2]


def test_map_location_callable_sees_the_storage_and_location():
    seen = []

    def where(storage, location):
        seen.append((storage.tolist(), location))
        return storage * 10
    assert pith.load(io.BytesIO(saved()), map_location=where).tolist() == [0, 10, 20]
    assert seen == [([0, 1, 2], "cpu")]


@pytest.mark.parametrize("where", ["cuda", "cuda:1", {"cpu": "cuda:0"}, "mps"])
def test_map_location_to_another_device_is_not_implemented(where):
    with pytest.raises(NotImplementedError, match="pith has only the CPU"):
        pith.load(io.BytesIO(saved()), map_location=where)


def test_bad_map_location():
    with pytest.raises(RuntimeError, match="invalid device string"):
        pith.load(io.BytesIO(saved()), map_location="not a device")
    with pytest.raises(TypeError, match="map_location"):
        pith.load(io.BytesIO(saved()), map_location=3)
    with pytest.raises(RuntimeError, match="must return None or a 1-D"):
        pith.load(io.BytesIO(saved()), map_location=lambda s, loc: "cpu")


def crafted(pkl, records=None, *, prefix="archive", extra=None):
    """A zip checkpoint with data.pkl `pkl` and data records {key: bytes}."""
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_STORED) as z:
        z.writestr(f"{prefix}/data.pkl", pkl)
        for key, data in (records or {}).items():
            z.writestr(f"{prefix}/data/{key}", data)
        for name, data in (extra if extra is not None else {"version": b"3\n"}).items():
            z.writestr(f"{prefix}/{name}", data)
    return buf.getvalue()


def tensor_pickle(storage="FloatStorage", key="0", location="cpu", numel=4, offset=0,
                  size=(4,), stride=(1,), rebuild="_rebuild_tensor_v2"):
    """The pickle torch.save writes for one tensor, spelled with opcodes."""
    def ints(values):
        return pickle.MARK + b"".join(pickle.BININT + struct.pack("<i", v) for v in values) \
            + pickle.TUPLE

    def text(s):
        b = s.encode()
        return pickle.BINUNICODE + struct.pack("<I", len(b)) + b
    return (pickle.PROTO + b"\x02" + f"ctorch._utils\n{rebuild}\n".encode() + pickle.MARK
            + pickle.MARK + text("storage") + f"ctorch\n{storage}\n".encode() + text(key)
            + text(location) + pickle.BININT + struct.pack("<i", numel) + pickle.TUPLE
            + pickle.BINPERSID + pickle.BININT + struct.pack("<i", offset) + ints(size)
            + ints(stride) + pickle.NEWFALSE + b"ccollections\nOrderedDict\n"
            + pickle.EMPTY_TUPLE + pickle.REDUCE + pickle.TUPLE + pickle.REDUCE + pickle.STOP)


FLOATS = struct.pack("<4f", 1, 2, 3, 4)


def test_crafted_checkpoint_loads():
    assert pith.load(io.BytesIO(crafted(tensor_pickle(), {"0": FLOATS}))).tolist() == \
        [1, 2, 3, 4]


def test_a_storage_saved_on_cuda_needs_map_location():
    data = crafted(tensor_pickle(location="cuda:0"), {"0": FLOATS})
    with pytest.raises(NotImplementedError, match="map_location='cpu'"):
        pith.load(io.BytesIO(data))
    assert pith.load(io.BytesIO(data), map_location="cpu").tolist() == [1, 2, 3, 4]
    assert pith.load(io.BytesIO(data), map_location={"cuda:0": "cpu"}).tolist() == \
        [1, 2, 3, 4]


# ---- malformed files: clear errors, never crashes ----------------------------------------

@pytest.mark.parametrize("cut", [0, 3, 10, 100, 0.5, -200, -30, -1])
def test_truncated_files(cut):
    data = (CHECKPOINTS / "views.pt").read_bytes()
    n = int(len(data) * cut) if isinstance(cut, float) else cut % len(data) if cut else 0
    with pytest.raises((RuntimeError, pickle.UnpicklingError, EOFError)):
        pith.load(io.BytesIO(data[:n]))


@pytest.mark.parametrize("cut", [0.5, -100, -25])
def test_truncated_legacy_files(cut):
    data = (CHECKPOINTS / "legacy.pt").read_bytes()
    n = int(len(data) * cut) if isinstance(cut, float) else len(data) + cut
    with pytest.raises((RuntimeError, pickle.UnpicklingError)):
        pith.load(io.BytesIO(data[:n]))


def test_not_a_checkpoint():
    with pytest.raises(RuntimeError, match="not a checkpoint"):
        pith.load(io.BytesIO(b"hello, world" * 10))
    with pytest.raises(RuntimeError, match="PytorchStreamReader failed reading zip archive"):
        pith.load(io.BytesIO(b"PK\x03\x04" + b"\x00" * 100))


def test_zip_without_a_folder_or_version():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("data.pkl", b"")
    with pytest.raises(RuntimeError, match="not in a subdirectory"):
        pith.load(io.BytesIO(buf.getvalue()))
    with pytest.raises(RuntimeError, match="no version record"):
        pith.load(io.BytesIO(crafted(tensor_pickle(), {"0": FLOATS}, extra={})))
    with pytest.raises(RuntimeError, match="Couldn't parse the version"):
        pith.load(io.BytesIO(crafted(tensor_pickle(), {"0": FLOATS},
                                     extra={"version": b"x"})))


def test_bad_byteorder_and_torchscript():
    with pytest.raises(ValueError, match="Unknown endianness type"):
        pith.load(io.BytesIO(crafted(tensor_pickle(), {"0": FLOATS},
                                     extra={"version": b"3\n", "byteorder": b"middle"})))
    with pytest.raises(RuntimeError, match="TorchScript"):
        pith.load(io.BytesIO(crafted(tensor_pickle(), {"0": FLOATS},
                                     extra={"version": b"3\n", "constants.pkl": b""})))


@pytest.mark.parametrize("kwargs, records, error, match", [
    ({"numel": 5}, {"0": FLOATS}, RuntimeError, "record size 16 mismatch"),
    ({"key": "7"}, {"0": FLOATS}, RuntimeError, "data/7: file not found"),
    ({"size": (5,)}, {"0": FLOATS}, RuntimeError, "out of bounds for storage of size 16"),
    ({"offset": 3, "size": (2,)}, {"0": FLOATS}, RuntimeError, "out of bounds"),
    ({"offset": -1}, {"0": FLOATS}, RuntimeError, "invalid storage offset"),
    ({"stride": (-1,)}, {"0": FLOATS}, RuntimeError, "Negative strides"),
    ({"stride": (1, 1)}, {"0": FLOATS}, RuntimeError, "mismatch in length"),
    ({"size": (2**31 - 1,) * 2, "stride": (2**31 - 1,) * 2}, {"0": FLOATS}, RuntimeError,
     "overflow"),
    ({"numel": -1}, {"0": FLOATS}, pickle.UnpicklingError, "bad storage record"),
    ({"storage": "ComplexFloatStorage"}, {"0": FLOATS}, NotImplementedError, "complex64"),
    ({"rebuild": "_rebuild_sparse_tensor"}, {}, NotImplementedError, "sparse tensors"),
    ({"storage": "NoSuchStorage"}, {}, pickle.UnpicklingError, "torch.NoSuchStorage"),
])
def test_bad_storage_records(kwargs, records, error, match):
    with pytest.raises(error, match=match):
        pith.load(io.BytesIO(crafted(tensor_pickle(**kwargs), records)))


SIDE_EFFECTS = []


def side_effect(*args):
    SIDE_EFFECTS.append(args)
    return 0


@pytest.mark.parametrize("module, name, match", [
    ("os", "system", "GLOBAL os.system whose module os is blocked"),
    ("posix", "system", "whose module posix is blocked"),
    ("builtins", "eval", "Unsupported global: GLOBAL eval was not an allowed global"),
    ("subprocess", "Popen", "GLOBAL subprocess.Popen was not an allowed global"),
    ("test_checkpoints", "side_effect", "GLOBAL test_checkpoints.side_effect"),
])
@pytest.mark.parametrize("weights_only", [True, False])
def test_forbidden_globals_raise_and_never_run(module, name, match, weights_only):
    pkl = (pickle.PROTO + b"\x02" + f"c{module}\n{name}\n".encode()
           + pickle.MARK + pickle.BINUNICODE + struct.pack("<I", 4) + b"echo" + pickle.TUPLE
           + pickle.REDUCE + pickle.STOP)
    with pytest.raises(pickle.UnpicklingError, match=match):
        pith.load(io.BytesIO(crafted(pkl)), weights_only=weights_only)
    assert SIDE_EFFECTS == []


def test_forbidden_global_by_stack_global_and_inst():
    stack_global = (pickle.PROTO + b"\x04" + pickle.SHORT_BINUNICODE + b"\x02os"
                    + pickle.SHORT_BINUNICODE + b"\x06getcwd" + pickle.STACK_GLOBAL
                    + pickle.EMPTY_TUPLE + pickle.REDUCE + pickle.STOP)
    inst = pickle.MARK + b"ios\ngetcwd\n" + pickle.STOP
    for pkl in (stack_global, inst):
        with pytest.raises(pickle.UnpicklingError, match="os.getcwd"):
            pith.load(io.BytesIO(crafted(pkl)))


def test_a_pickle_made_by_pickle_with_a_function_is_refused():
    pkl = pickle.dumps({"f": side_effect}, protocol=2)
    with pytest.raises(pickle.UnpicklingError, match="test_checkpoints.side_effect"):
        pith.load(io.BytesIO(crafted(pkl)))


@pytest.mark.parametrize("pkl, match", [
    (pickle.PROTO + b"\x02" + pickle.BINUNICODE + b"\xff\x00\x00\x00ab", "truncated"),
    (pickle.PROTO + b"\x02" + pickle.TUPLE2 + pickle.STOP, "malformed"),
    (pickle.PROTO + b"\x02" + pickle.BINGET + b"\x05" + pickle.STOP, "Memo value not found"),
    (pickle.PROTO + b"\x02" + b"\xfe" + pickle.STOP, "Unsupported operand"),
    (pickle.PROTO + b"\x02" + pickle.NONE, "truncated"),
    (pickle.PROTO + b"\x02" + pickle.STOP, "empty stack"),
    (pickle.PROTO + b"\x02" + pickle.NONE + pickle.NONE + pickle.APPEND + pickle.STOP,
     "Can only append to lists"),
    (pickle.PROTO + b"\x02" + pickle.EMPTY_TUPLE + pickle.EMPTY_TUPLE + pickle.REDUCE
     + pickle.STOP, "unrecognized function"),
    (pickle.PROTO + b"\x02" + b"ccollections\nOrderedDict\n" + pickle.EMPTY_DICT
     + pickle.BUILD + pickle.STOP, "Can only build"),
    (pickle.PROTO + b"\x02" + pickle.BINUNICODE + b"\x03\x00\x00\x00abc" + pickle.BINPERSID
     + pickle.STOP, "persistent_load"),
    (pickle.PROTO + b"\x02" + pickle.BINUNICODE + b"\x01\x00\x00\x00a" + pickle.BINUNICODE
     + b"\x01\x00\x00\x00b" + b"c_codecs\nencode\n" + pickle.MARK + pickle.BINUNICODE
     + b"\x01\x00\x00\x00a" + pickle.BINUNICODE + b"\x05\x00\x00\x00rot13" + pickle.TUPLE
     + pickle.REDUCE + pickle.STOP, "latin1"),
])
def test_malformed_pickles(pkl, match):
    with pytest.raises(pickle.UnpicklingError, match=match):
        pith.load(io.BytesIO(crafted(pkl)))


def test_legacy_tar_format_is_refused(tmp_path):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        info = tarfile.TarInfo("storages")
        info.size = 0
        tar.addfile(info, io.BytesIO())
    with pytest.raises(RuntimeError, match="legacy .tar checkpoint format"):
        pith.load(io.BytesIO(buf.getvalue()))


def test_unseekable_file():
    class Pipe:
        def read(self, n=-1):
            return b""

        def tell(self):
            raise io.UnsupportedOperation("tell")

        def seek(self, pos, whence=0):
            raise io.UnsupportedOperation("seek")
    with pytest.raises(io.UnsupportedOperation, match="seekable"):
        pith.load(Pipe())


# ---- weights_only, allow-lists ------------------------------------------------------------

def test_weights_only_false_allows_data_only_types():
    args = argparse.Namespace(lr=0.1, name="run")
    when = datetime.datetime(2024, 1, 2, 3, 4, 5)
    data = saved({"args": args, "when": when, "counts": collections.Counter("aab"),
                  "dd": collections.defaultdict(list, a=[1]), "t": pith.ones(1)})
    with pytest.raises(pickle.UnpicklingError, match="argparse.Namespace"):
        pith.load(io.BytesIO(data))
    loaded = pith.load(io.BytesIO(data), weights_only=False)
    assert loaded["args"] == args and loaded["when"] == when
    assert loaded["dd"]["a"] == [1] and loaded["dd"].default_factory is list
    assert pith.load(io.BytesIO(data), pickle_module=pickle)["args"] == args


def test_weights_only_false_allows_numpy_arrays():
    np = pytest.importorskip("numpy")
    data = saved({"a": np.arange(4, dtype=np.float32), "s": np.float64(2.5)})
    loaded = pith.load(io.BytesIO(data), weights_only=False)
    assert loaded["a"].tolist() == [0, 1, 2, 3] and loaded["s"] == 2.5


class Config:
    def __init__(self, depth):
        self.depth = depth


def test_add_safe_globals_and_safe_globals():
    data = saved({"config": Config(3)})
    with pytest.raises(pickle.UnpicklingError, match="test_checkpoints.Config"):
        pith.load(io.BytesIO(data))
    with pith.serialization.safe_globals([Config]):
        assert pith.load(io.BytesIO(data))["config"].depth == 3
    assert Config not in pith.serialization.get_safe_globals()
    pith.serialization.add_safe_globals([(Config, "test_checkpoints.Config")])
    try:
        assert pith.load(io.BytesIO(data))["config"].depth == 3
        assert pith.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == []
    finally:
        pith.serialization.clear_safe_globals()
    assert pith.serialization.get_unsafe_globals_in_checkpoint(io.BytesIO(data)) == [
        "test_checkpoints.Config"]
    with pytest.raises(ValueError, match="length 2"):
        pith.serialization.add_safe_globals([(Config,)])


def test_blocked_modules_stay_blocked_when_allowlisted():
    pkl = pickle.PROTO + b"\x02" + b"cos\ngetcwd\n" + pickle.EMPTY_TUPLE + pickle.REDUCE \
        + pickle.STOP
    with pith.serialization.safe_globals([os.getcwd]):
        with pytest.raises(pickle.UnpicklingError, match="blocked"):
            pith.load(io.BytesIO(crafted(pkl)))


def test_load_arguments():
    with pytest.raises(RuntimeError, match="explicit pickle_module"):
        pith.load(io.BytesIO(saved()), pickle_module=pickle, weights_only=True)
    with pytest.raises(TypeError, match="unexpected keyword"):
        pith.load(io.BytesIO(saved()), fancy=1)
    assert pith.load(io.BytesIO(saved()), encoding="latin1").tolist() == [0, 1, 2]


def test_save_arguments(tmp_path):
    with pytest.raises(AttributeError, match="'write' attribute"):
        pith.save(pith.ones(1), 3)
    with pytest.raises(ValueError, match="pickle_protocol"):
        pith.save(pith.ones(1), io.BytesIO(), pickle_protocol=1)
    with pytest.raises(NotImplementedError, match="pickle_module"):
        pith.save(pith.ones(1), io.BytesIO(), pickle_module=json)
    buf = io.BytesIO()
    pith.save(pith.ones(2), buf, pickle_protocol=5)
    assert pith.load(io.BytesIO(buf.getvalue())).tolist() == [1, 1]


def test_wrapper_subclasses_have_no_data_to_save():
    class Wrapper(pith.Tensor):
        @classmethod
        def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
            return NotImplemented
    w = pith.Tensor._make_wrapper_subclass(Wrapper, (2,), dtype=pith.float32)
    with pytest.raises(NotImplementedError, match="__pith_dispatch__ subclass"):
        pith.save(w, io.BytesIO())


# ---- with torch ---------------------------------------------------------------------------

def to_torch_dtype(torch, name):
    return getattr(torch, name)


@pytest.mark.parametrize("dtype", DTYPES)
def test_pith_files_load_in_torch(dtype, tmp_path):
    torch = pytest.importorskip("torch")
    base = some_tensor(dtype, (4, 5))
    obj = {"base": base, "view": base[1:, ::2].t(), "scalar": base[2, 3],
           "param": pith.nn.Parameter(pith.ones(2)), "size": pith.Size([1, 2]),
           "dtype": base.dtype, "state": pith.nn.Linear(2, 2).state_dict()}
    path = tmp_path / "p.pt"
    pith.save(obj, path)
    for mmap in (False, True):
        loaded = torch.load(path, weights_only=True, mmap=mmap)
        for key in ("base", "view", "scalar"):
            t, p = loaded[key], obj[key]
            assert str(t.dtype) == f"torch.{dtype}"
            assert list(t.shape) == list(p.shape) and t.stride() == p.stride()
            assert t.storage_offset() == p.storage_offset()
            widened = t.double() if dtype in ("float16", "bfloat16") else t
            assert widened.tolist() == values(p)
        assert loaded["view"].untyped_storage().data_ptr() == \
            loaded["base"].untyped_storage().data_ptr()
        assert isinstance(loaded["param"], torch.nn.Parameter)
        assert loaded["size"] == torch.Size([1, 2]) and loaded["dtype"] is getattr(torch, dtype)
        assert loaded["state"]._metadata == obj["state"]._metadata


def test_pith_files_match_torch_files_byte_for_byte():
    torch = pytest.importorskip("torch")
    base = torch.arange(12, dtype=torch.float32).reshape(3, 4)
    t_obj = {"a": base, "b": base[1:, 2:], "c": torch.ones(2, dtype=torch.bfloat16),
             "n": [1, (2.5, None)], "e": torch.empty(0)}
    pbase = pith.arange(12, dtype=pith.float32).reshape(3, 4)
    p_obj = {"a": pbase, "b": pbase[1:, 2:], "c": pith.ones(2, dtype=pith.bfloat16),
             "n": [1, (2.5, None)], "e": pith.empty(0)}
    tb, pb = io.BytesIO(), io.BytesIO()
    torch.save(t_obj, tb)
    pith.save(p_obj, pb)
    tz, pz = zipfile.ZipFile(tb), zipfile.ZipFile(pb)
    assert [i.filename for i in tz.infolist()] == [i.filename for i in pz.infolist()]
    for ti, pi in zip(tz.infolist(), pz.infolist()):
        assert ti.header_offset == pi.header_offset, ti.filename
        if not ti.filename.endswith("serialization_id"):
            assert tz.read(ti) == pz.read(pi), ti.filename
    # Everything up to the serialization id (whose name hash is pith's own) is torch's.
    cut = tz.getinfo("archive/.data/serialization_id").header_offset
    assert tb.getvalue()[:cut] == pb.getvalue()[:cut]


def test_torch_reads_pith_offsets_as_its_own():
    torch = pytest.importorskip("torch")
    from torch.utils.serialization import config
    buf = io.BytesIO()
    pith.save({"a": pith.arange(100), "b": pith.ones(3, dtype=pith.float16)}, buf)
    path = os.path.join(os.environ.get("TMPDIR", "/tmp"), f"pith_offsets_{os.getpid()}.pt")
    with open(path, "wb") as f:
        f.write(buf.getvalue())
    old = config.load.calculate_storage_offsets
    config.load.calculate_storage_offsets = True
    os.environ["TORCH_SERIALIZATION_DEBUG"] = "1"  # torch asserts each computed offset
    try:
        loaded = torch.load(path, mmap=True, weights_only=True)
        assert loaded["a"].tolist() == list(range(100))
    finally:
        config.load.calculate_storage_offsets = old
        del os.environ["TORCH_SERIALIZATION_DEBUG"]
        os.remove(path)


@settings(max_examples=30, deadline=None)
@given(dtype=st.sampled_from(DTYPES), rows=st.integers(0, 5), cols=st.integers(1, 5),
       start=st.integers(0, 3), legacy=st.booleans())
def test_torch_files_load_in_pith(dtype, rows, cols, start, legacy):
    torch = pytest.importorskip("torch")
    base = (torch.arange((rows + 4) * cols, dtype=torch.float64) * 3.5 - 20).to(
        getattr(torch, dtype)).reshape(rows + 4, cols)
    obj = {"base": base, "view": base[start:].t(), "p": torch.nn.Parameter(torch.ones(1))}
    buf = io.BytesIO()
    torch.save(obj, buf, _use_new_zipfile_serialization=not legacy)
    loaded = pith.load(io.BytesIO(buf.getvalue()))
    for key in ("base", "view"):
        t, p = obj[key], loaded[key]
        assert str(p.dtype) == f"pith.{dtype}" and p.stride() == t.stride()
        assert list(p.shape) == list(t.shape) and p.storage_offset() == t.storage_offset()
        widened = t.double() if dtype in ("float16", "bfloat16") else t
        assert values(p) == widened.tolist()
    if loaded["view"].numel():
        assert storage_base(loaded["view"]) == storage_base(loaded["base"])
    assert type(loaded["p"]) is pith.nn.Parameter


def test_legacy_pith_files_load_in_torch():
    torch = pytest.importorskip("torch")
    base = pith.arange(6, dtype=pith.int16)
    buf = io.BytesIO()
    pith.save({"base": base, "view": base[2:]}, buf, _use_new_zipfile_serialization=False)
    loaded = torch.load(io.BytesIO(buf.getvalue()), weights_only=True)
    assert loaded["view"].tolist() == [2, 3, 4, 5]
    assert loaded["view"].untyped_storage().data_ptr() == \
        loaded["base"].untyped_storage().data_ptr()
