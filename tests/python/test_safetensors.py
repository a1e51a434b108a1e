"""pith.safetensors: the safetensors format (pith/safetensors.py), memory-mapped and
zero-copy where aligned. The fixtures of tests/data/checkpoints/ were written by the
safetensors package (scripts/gen_checkpoint_fixtures.py); the package itself, when
installed, is the oracle of the cross-checks."""
import io
import json
import struct

import pytest
from hypothesis import given, settings, strategies as st

import pith
import pith.safetensors as ps
from pith.safetensors import SafetensorError

from test_checkpoints import (CHECKPOINTS, DTYPES, check_file, mapping_of, needs_proc,
                              some_tensor, values)


@pytest.mark.parametrize("name", ["model.safetensors", "misaligned.safetensors"])
def test_package_files_load(name):
    loaded = ps.load_file(CHECKPOINTS / name)
    check_file(dict(sorted(loaded.items())), name)
    check_file(dict(sorted(ps.load((CHECKPOINTS / name).read_bytes()).items())), name)


def test_metadata_and_safe_open():
    with ps.safe_open(CHECKPOINTS / "model.safetensors", framework="pt") as f:
        assert f.metadata() == {"note": "pïth ✓"}
        assert f.keys() == sorted(f.keys()) and "float32" in f.keys()
        assert values(f.get_tensor("int8")) == values(ps.load_file(
            CHECKPOINTS / "model.safetensors")["int8"])
        with pytest.raises(SafetensorError, match="does not contain tensor nope"):
            f.get_tensor("nope")


@needs_proc
def test_aligned_tensors_view_the_mapped_file_and_misaligned_ones_are_copied():
    path = str(CHECKPOINTS / "misaligned.safetensors")
    loaded = ps.load_file(path)
    assert mapping_of(loaded["a_bytes"].data_ptr()) == path  # uint8: always aligned
    assert mapping_of(loaded["b_floats"].data_ptr()) != path  # float32 at an odd offset
    assert loaded["b_floats"].tolist() == [1.5, -2.25]
    model = ps.load_file(CHECKPOINTS / "model.safetensors")
    assert all(mapping_of(t.data_ptr()) == str(CHECKPOINTS / "model.safetensors")
               for t in model.values() if t.numel())


@needs_proc
def test_the_mapping_lives_while_a_tensor_does_and_is_private(tmp_path):
    path = tmp_path / "w.safetensors"
    ps.save_file({"w": pith.arange(100, dtype=pith.float32)}, path)
    w = ps.load_file(path)["w"][5:]
    assert mapping_of(w.data_ptr()) == str(path)
    w[0] = -1.0
    assert ps.load_file(path)["w"][5].item() == 5.0


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(), (0,), (3,), (2, 0), (2, 3, 4)])
def test_round_trip(dtype, shape, tmp_path):
    t = some_tensor(dtype, shape)
    ps.save_file({"t": t}, tmp_path / "t.safetensors", metadata={"k": "v"})
    for loaded in (ps.load_file(tmp_path / "t.safetensors")["t"], ps.load(ps.save({"t": t}))["t"]):
        assert loaded.dtype == t.dtype and loaded.shape == t.shape
        assert values(loaded) == values(t)


def test_layout_is_the_package_order_and_aligned():
    tensors = {name: some_tensor(name, (3,)) for name in DTYPES}
    blob = ps.save(tensors)
    (n,) = struct.unpack("<Q", blob[:8])
    assert n % 8 == 0
    header = json.loads(blob[8:8 + n])
    sizes = [pith.tensor(0, dtype=getattr(pith, d)).element_size() for d in
             ("int64", "float64", "float32", "int32", "bfloat16", "float16", "int16", "int8",
              "uint8", "bool")]
    order = sorted(header, key=lambda k: header[k]["data_offsets"])
    assert order == ["int64", "float64", "float32", "int32", "bfloat16", "float16", "int16",
                     "int8", "uint8", "bool"]
    for name, size in zip(order, sizes):
        assert header[name]["data_offsets"][0] % size == 0


def header_file(header, data=b"", *, raw=None):
    text = raw if raw is not None else json.dumps(header).encode()
    return struct.pack("<Q", len(text)) + text + data


@pytest.mark.parametrize("blob, match", [
    (b"\x01\x00", "header too small"),
    (struct.pack("<Q", 2**40) + b"{}", "header too large"),
    (struct.pack("<Q", 100) + b"{}", "invalid header length"),
    (header_file(None, raw=b"abcd"), "invalid JSON in header"),
    (header_file(None, raw=b"[1] "), "invalid JSON in header"),
    (header_file(None, raw=b"\xff\xfe  "), "invalid UTF-8"),
    (header_file({"a": {"dtype": "X32", "shape": [1], "data_offsets": [0, 4]}}, b"0000"),
     "unknown variant `X32`"),
    (header_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}}, b"0000"),
     "invalid shape, data type, or offset"),
    (header_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [4, 8]}}, b"0" * 8),
     "invalid offset for tensor `a`"),
    (header_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, b"0" * 8),
     "incomplete metadata"),
    (header_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}, b"0" * 4),
     "incomplete metadata"),
    (header_file({"a": {"dtype": "F32", "shape": [-1], "data_offsets": [0, 4]}}, b"0000"),
     "non-negative"),
    (header_file({"a": {"dtype": "F32", "shape": [2**62, 8], "data_offsets": [0, 4]}},
                 b"0000"), "overflow"),
    (header_file({"a": {"dtype": "F32", "shape": [1]}}, b"0000"), "missing field"),
    (header_file({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, "4"]}}, b"0000"),
     "data_offsets"),
    (header_file({"__metadata__": {"a": 1}}), "__metadata__"),
])
def test_malformed_files(blob, match, tmp_path):
    with pytest.raises(SafetensorError, match=match):
        ps.load(blob)
    path = tmp_path / "bad.safetensors"
    path.write_bytes(blob)
    with pytest.raises(SafetensorError, match=match):
        ps.load_file(path)


@pytest.mark.parametrize("cut", [1, 7, 8, 20, -1, -5])
def test_truncated_files(cut, tmp_path):
    data = (CHECKPOINTS / "model.safetensors").read_bytes()
    path = tmp_path / "cut.safetensors"
    path.write_bytes(data[:cut])
    with pytest.raises(SafetensorError):
        ps.load_file(path)


def test_empty_file_and_empty_header(tmp_path):
    (tmp_path / "e").write_bytes(b"")
    with pytest.raises(SafetensorError, match="header too small"):
        ps.load_file(tmp_path / "e")
    assert ps.load(header_file({})) == {}


def test_dtypes_pith_lacks():
    blob = header_file({"a": {"dtype": "U16", "shape": [2], "data_offsets": [0, 4]}}, b"0000")
    with pytest.raises(NotImplementedError, match="U16"):
        ps.load(blob)


def test_save_errors():
    with pytest.raises(ValueError, match="non contiguous tensor: `a`"):
        ps.save({"a": pith.ones(3, 2).t()})
    x = pith.ones(4)
    with pytest.raises(RuntimeError, match="share memory"):
        ps.save({"a": x, "b": x[1:3]})
    ps.save({"a": x[:2], "b": x[2:]})  # views that do not overlap are fine
    with pytest.raises(TypeError, match="not an instance of 'str'"):
        ps.save({1: x})
    with pytest.raises(TypeError, match="metadata"):
        ps.save({"a": x}, metadata={"k": 1})
    with pytest.raises(NotImplementedError, match="only the CPU"):
        ps.load_file(CHECKPOINTS / "model.safetensors", device="cuda")


# ---- against the safetensors package ------------------------------------------------------

def test_bytes_equal_the_package_numpy_writer():
    np = pytest.importorskip("numpy")
    numpy_io = pytest.importorskip("safetensors.numpy")
    tensors = {d: some_tensor(d, (2, 3)) for d in DTYPES if d != "bfloat16"}
    arrays = {k: v.numpy() for k, v in tensors.items()}
    assert ps.save(tensors) == numpy_io.save(arrays)
    for k, v in ps.load(numpy_io.save(arrays, metadata={"m": "x"})).items():
        assert values(v) == arrays[k].astype(np.float64 if v.dtype.is_floating_point else
                                              arrays[k].dtype).tolist()


@settings(max_examples=25, deadline=None)
@given(dtypes=st.lists(st.sampled_from(DTYPES), min_size=1, max_size=5),
       rows=st.integers(0, 4), cols=st.integers(1, 4))
def test_round_trips_with_the_package_and_torch(dtypes, rows, cols):
    torch = pytest.importorskip("torch")
    torch_io = pytest.importorskip("safetensors.torch")
    ours = {f"t{i}_{d}": some_tensor(d, (rows, cols)) for i, d in enumerate(dtypes)}
    theirs = {k: torch.tensor(values(v), dtype=getattr(torch, str(v.dtype)[5:])).reshape(
        rows, cols) for k, v in ours.items()}
    assert ps.save(ours, metadata={"a": "b"}) == torch_io.save(theirs, metadata={"a": "b"})
    for k, v in torch_io.load(ps.save(ours)).items():
        widened = v.double() if v.dtype in (torch.float16, torch.bfloat16) else v
        assert widened.tolist() == values(ours[k])
    for k, v in ps.load(torch_io.save(theirs)).items():
        assert values(v) == values(ours[k])


def test_the_package_refuses_what_pith_refuses():
    safetensors = pytest.importorskip("safetensors")
    numpy_io = pytest.importorskip("safetensors.numpy")
    for blob in (b"\x01\x00", struct.pack("<Q", 100) + b"{}",
                 header_file({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 4]}},
                             b"0000"),
                 header_file({"a": {"dtype": "X32", "shape": [1], "data_offsets": [0, 4]}},
                             b"0000")):
        with pytest.raises(safetensors.SafetensorError):
            numpy_io.load(blob)
        with pytest.raises(SafetensorError):
            ps.load(blob)
