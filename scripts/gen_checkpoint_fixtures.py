#!/usr/bin/env python3
"""gen_checkpoint_fixtures.py — writes the checkpoints of tests/data/checkpoints/ with torch.

    python scripts/gen_checkpoint_fixtures.py [--check]   # a Python with torch 2.13.0 and
                                                          # safetensors

Each fixture is a file that torch.save (or the safetensors package) wrote, and beside all
of them expected.json holds what loading each one must give, computed here from torch's
own tensors (dtype, shape, strides, storage offset, values, and which tensors share a
storage): tests/python/test_checkpoints.py and test_safetensors.py load the files with pith,
without torch, and compare. Nothing is typed in by hand; tests/data/README.md says what
each file holds. --check writes nothing and exits 1 when a file on disk differs from what
this script would write (torch.save's output is deterministic: the serialization id is a
hash of record names and crc32s).
"""
import argparse
import collections
import io
import json
import os
import struct
import sys
import zipfile

import torch

TORCH_VERSION = "2.13.0"  # the version tests/data/README.md names; change both together
REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(REPO, "tests", "data", "checkpoints")
DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64]


def dtype_name(dtype):
    return str(dtype).removeprefix("torch.")


def values(t):
    """Row-major values as JSON numbers: float16/bfloat16 widen exactly to float64."""
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.double()
    return t.tolist()


class Encoder:
    """The expected value of a loaded object, as JSON (see describe() in the tests)."""

    def __init__(self):
        self.storages = {}

    def storage_id(self, t):
        key = t.untyped_storage().data_ptr()
        return self.storages.setdefault(key, len(self.storages))

    def __call__(self, obj):
        if isinstance(obj, torch.nn.Parameter):
            return {"parameter": self(obj.data)}
        if isinstance(obj, torch.Tensor):
            out = {"dtype": dtype_name(obj.dtype), "shape": list(obj.shape)}
            if obj.device.type == "meta":
                return {"tensor": dict(out, device="meta", stride=list(obj.stride()))}
            out.update(stride=list(obj.stride()), storage_offset=obj.storage_offset(),
                       storage=self.storage_id(obj), values=values(obj))
            if obj.__dict__:
                out["attributes"] = {k: self(v) for k, v in obj.__dict__.items()}
            return {"tensor": out}
        if isinstance(obj, torch.dtype):
            return {"dtype": dtype_name(obj)}
        if isinstance(obj, torch.Size):
            return {"size": list(obj)}
        if isinstance(obj, collections.OrderedDict):
            out = {"ordereddict": [[self(k), self(v)] for k, v in obj.items()]}
            if hasattr(obj, "_metadata"):
                out["metadata"] = self(obj._metadata)
            return out
        if isinstance(obj, dict):
            return {"dict": [[self(k), self(v)] for k, v in obj.items()]}
        if isinstance(obj, tuple):
            return {"tuple": [self(v) for v in obj]}
        if isinstance(obj, list):
            return {"list": [self(v) for v in obj]}
        if isinstance(obj, bytes):
            return {"bytes": obj.hex()}
        if isinstance(obj, bool) or obj is None or isinstance(obj, (int, float, str)):
            return {"value": obj}
        raise TypeError(f"no encoding for {type(obj).__name__}")


def tensor_zoo():
    torch.manual_seed(0)
    zoo = {}
    for dtype in DTYPES:
        name = dtype_name(dtype)
        if dtype == torch.bool:
            t = torch.tensor([[True, False, True], [False, False, True]])
        elif dtype.is_floating_point:
            t = (torch.randn(2, 3) * 100).to(dtype)
        else:
            info = torch.iinfo(dtype)
            t = torch.tensor([[info.min, -1 if info.min else 0, 0], [1, 7, info.max]],
                             dtype=dtype)
        zoo[name] = t
        zoo[f"{name}_scalar"] = t[1, 2].clone()
        zoo[f"{name}_empty"] = torch.empty(0, 3, dtype=dtype)
    return zoo


def views():
    base = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    return {
        "base": base,
        "row": base[2],                      # offset 12
        "column": base[:, 3],                # stride 6, offset 3
        "transposed": base.t(),              # strides (1, 6)
        "window": base[1:3, 2:5],            # offset 8, non-contiguous
        "stepped": base[::2, ::3],           # strides (12, 3)
        "expanded": base[0, :1].expand(3, 4),  # stride 0
        "other": torch.arange(5, dtype=torch.int64)[1:],  # another storage, offset 1
    }


def nested():
    t = torch.tensor([1.5, -2.0, 3.25])
    return {
        "int": 7, "neg": -123456789012345678901234567890, "float": 0.1, "str": "pïth",
        "none": None, "true": True, "bytes": b"\x00\xffab",
        "list": [1, [2, [3, t]], (t, "x")], "tuple": (1, (2.5, None), []),
        "dict": {1: "int key", "nested": {"t": t}},
        "dtype": torch.float16, "size": torch.Size([2, 3]),
    }


def state_dict():
    torch.manual_seed(1)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(),
                                torch.nn.LayerNorm(4), torch.nn.Linear(4, 2, bias=False))
    return model.state_dict()


def parameter():
    torch.manual_seed(2)
    return {"weight": torch.nn.Parameter(torch.randn(2, 2)),
            "frozen": torch.nn.Parameter(torch.ones(3), requires_grad=False)}


def with_attributes():
    t = torch.arange(3, dtype=torch.int32)
    t.note = "kept"
    return t


def fixtures():
    """name -> (object, writer) for the torch.save files."""
    return {
        "tensor.pt": (torch.arange(6, dtype=torch.float64).reshape(2, 3), {}),
        "dtypes.pt": (tensor_zoo(), {}),
        "views.pt": (views(), {}),
        "nested.pt": (nested(), {}),
        "state_dict.pt": (state_dict(), {}),
        "parameter.pt": (parameter(), {}),
        "attributes.pt": (with_attributes(), {}),
        "meta.pt": ({"m": torch.empty(2, 3, device="meta")}, {}),
        "legacy.pt": (views(), {"_use_new_zipfile_serialization": False}),
        "protocol4.pt": (views(), {"pickle_protocol": 4}),
    }


def big_endian(data):
    """A torch.save zip rewritten as a big-endian machine's torch.save writes it: each
    storage's elements byte-swapped and byteorder "big" (torch.load swaps them back)."""
    src = zipfile.ZipFile(io.BytesIO(data))
    prefix = src.namelist()[0].split("/")[0] + "/"
    obj = torch.load(io.BytesIO(data), weights_only=True)
    sizes = {}
    for t in (obj.values() if isinstance(obj, dict) else [obj]):
        sizes[t.untyped_storage().data_ptr()] = t.element_size()
    # storages are numbered in the order the pickle first meets them: that of obj's values
    itemsizes = list(sizes.values())
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            payload = src.read(info)
            name = info.filename[len(prefix):]
            if name == "byteorder":
                payload = b"big"
            elif name.startswith("data/"):
                k = itemsizes[int(name[5:])]
                payload = b"".join(payload[i:i + k][::-1] for i in range(0, len(payload), k))
            dst.writestr(zipfile.ZipInfo(info.filename, date_time=(1980, 1, 1, 0, 0, 0)),
                         payload)
    return out.getvalue()


def safetensors_files():
    import safetensors.torch
    zoo = {k: v for k, v in tensor_zoo().items()}
    files = {"model.safetensors": safetensors.torch.save(
        zoo, metadata={"note": "pïth ✓"})}  # one key: the package orders keys randomly
    # A file whose float32 tensor starts at an odd offset (a uint8 tensor of 3 bytes before
    # it): valid, and readers must copy it instead of viewing the mapped bytes.
    header = {"a_bytes": {"dtype": "U8", "shape": [3], "data_offsets": [0, 3]},
              "b_floats": {"dtype": "F32", "shape": [2], "data_offsets": [3, 11]}}
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    blob = struct.pack("<Q", len(text)) + text + bytes([1, 2, 3]) + struct.pack(
        "<2f", 1.5, -2.25)
    safetensors.torch.load(blob)  # the package accepts it
    files["misaligned.safetensors"] = blob
    return files


def generate():
    files, expected = {}, {}
    for name, (obj, kwargs) in fixtures().items():
        buf = io.BytesIO()
        torch.save(obj, buf, **kwargs)
        files[name] = buf.getvalue()
    files["big_endian.pt"] = big_endian(files["views.pt"])
    files.update(safetensors_files())
    for name, data in files.items():
        if name.endswith(".safetensors"):
            import safetensors.torch
            obj = dict(sorted(safetensors.torch.load(data).items()))  # its order is random
        else:  # files this script just wrote: torch's full unpickler reads protocol 4 too
            obj = torch.load(io.BytesIO(data), weights_only=False)
        expected[name] = Encoder()(obj)
    text = json.dumps(expected, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
    files["expected.json"] = text.encode("utf-8")
    return files


# torch's legacy format names storages by their addresses, so its bytes differ from run
# to run; --check compares what such a file loads to instead.
NONDETERMINISTIC = {"legacy.pt"}


def same_contents(old, new):
    def contents(data):
        return Encoder()(torch.load(io.BytesIO(data), weights_only=False))
    return contents(old) == contents(new)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true",
                        help="write nothing; exit 1 if a fixture on disk is stale")
    args = parser.parse_args()
    if torch.__version__.split("+")[0] != TORCH_VERSION:
        sys.exit(f"gen_checkpoint_fixtures.py: needs torch {TORCH_VERSION}, found "
                 f"{torch.__version__}")
    files = generate()
    stale = []
    for name, data in sorted(files.items()):
        path = os.path.join(OUT, name)
        old = open(path, "rb").read() if os.path.exists(path) else None
        if old == data or (old is not None and name in NONDETERMINISTIC and
                           same_contents(old, data)):
            continue
        stale.append(name)
        if not args.check:
            os.makedirs(OUT, exist_ok=True)
            with open(path, "wb") as f:
                f.write(data)
    if args.check and stale:
        sys.exit(f"stale fixtures (run scripts/gen_checkpoint_fixtures.py): {stale}")
    print(f"{len(files)} files, {len(stale)} {'stale' if args.check else 'written'}")


if __name__ == "__main__":
    main()
