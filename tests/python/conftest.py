"""Shared fixtures and helpers of the Python suite.

The live-tensor fixture checks every test for leaks. The helpers below convert between pith,
NumPy and PyTorch through public APIs only (tolist() and pith.tensor(nested lists)), and
generate arrays of every dtype, shape (empty and 0-dim included) and layout (transposed,
sliced with steps, expanded, offset) for the property tests: `from conftest import ...`.
"""
import csv
import ctypes
import pathlib

import numpy as np
import pytest
from hypothesis import settings
from hypothesis import strategies as st

import pith

try:  # the optional oracle, imported once up front so that it is frozen below
    import torch  # noqa: F401
except ImportError:
    pass
import gc  # noqa: E402

# The leak fixture runs gc.collect() around every test, and a collection walks every
# tracked object: torch alone brings hundreds of thousands. Moving what exists after the
# imports to the permanent generation keeps each collection proportional to the test.
gc.freeze()



def examples(n):
    """Settings of a property test: `n` examples, no deadline (the machine is shared)."""
    return settings(max_examples=n, deadline=None)


PROPERTY = examples(40)


_FAILED = {"any": False}


# Note [Sub-interpreters run last]
# CPython 3.11 turns PyGILState_Check off for the rest of the process once a sub-interpreter
# is created (pylifecycle.c, new_interpreter: "The GIL API doesn't work with multiple
# interpreters"); it then always answers 1. torch's engine checks it before running backward
# and refuses ("The autograd engine was called while holding the GIL"), so every torch
# backward that a test runs as the oracle would fail after a sub-interpreter test. The files
# that make sub-interpreters therefore run after all the others, whatever their names.
SUBINTERPRETER_FILES = ("test_python_dispatch.py", "test_share.py")


def pytest_collection_modifyitems(session, config, items):
    items.sort(key=lambda item: item.path.name in SUBINTERPRETER_FILES)  # a stable sort


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.when == "call" and report.failed:
        item.pith_call_failed = True
        _FAILED["any"] = True


@pytest.fixture(autouse=True)
def no_leaked_tensors(request):
    """Every test leaves pith_live_tensors() where it found it. A failed test is not
    checked: its traceback (and Hypothesis' failing example) still holds its tensors, and
    they may be freed during a later test, which then sees fewer (never more) tensors."""
    import gc
    gc.collect()
    before = pith._C._live_tensors()
    yield
    gc.collect()
    after = pith._C._live_tensors()
    if getattr(request.node, "pith_call_failed", False) or (_FAILED["any"] and after < before):
        return
    assert after == before


# ---- dtypes ------------------------------------------------------------------------------

DTYPE_NAMES = ["bool", "uint8", "int8", "int16", "int32", "int64",
               "float16", "bfloat16", "float32", "float64"]
INT_NAMES = ["uint8", "int8", "int16", "int32", "int64"]
FLOAT_NAMES = ["float16", "bfloat16", "float32", "float64"]


def pdtype(name):
    return getattr(pith, name)


def np_dtype(name):
    """The NumPy dtype holding a pith dtype's values (bfloat16 values fit float32 exactly)."""
    return {"bool": np.bool_, "bfloat16": np.float32}.get(name) or getattr(np, name)


def dtype_name(dt):
    """'float32' for pith.float32, torch.float32 or np.float32."""
    return str(dt).replace("pith.", "").replace("torch.", "")


def is_float(name):
    return name in FLOAT_NAMES


def round_to_bfloat16(a):
    """float32 values rounded (to nearest even) to ones bfloat16 holds exactly."""
    bits = np.asarray(a, dtype=np.float32).view(np.uint32).astype(np.uint64)
    bits = (bits + 0x7FFF + ((bits >> 16) & 1)) & 0xFFFF0000
    return bits.astype(np.uint32).view(np.float32)


def torch_or_none():
    try:
        import torch
    except ImportError:
        return None
    return torch


# ---- conversions -------------------------------------------------------------------------

def to_pith(a, name=None):
    """A contiguous pith tensor with the values of NumPy array `a` (dtype `name`)."""
    a = np.asarray(a)
    name = name or dtype_name(a.dtype)
    if a.size == 0:
        return pith.zeros(a.shape, dtype=pdtype(name))
    return pith.tensor(a.tolist(), dtype=pdtype(name))


def to_numpy(t):
    """The values of pith tensor `t` as a NumPy array of its dtype (float32 for bfloat16)."""
    name = dtype_name(t.dtype)
    return np.array(t.tolist(), dtype=np_dtype(name)).reshape(tuple(t.shape))


def to_torch(a, name):
    torch = torch_or_none()
    a = np.array(a, order="C")  # (ascontiguousarray would make a 0-dim array 1-D)
    t = torch.tensor(a.astype(np.float32) if name == "bfloat16" else a)
    return t.to(getattr(torch, name))


def torch_to_numpy(t):
    name = dtype_name(t.dtype)
    if name == "bfloat16":
        t = t.float()
    return t.detach().numpy().astype(np_dtype(name), copy=False).reshape(tuple(t.shape))


TOLERANCE = {"float16": (2e-3, 2e-3), "bfloat16": (1.6e-2, 1.6e-2),
             "float32": (2e-6, 1e-6), "float64": (1e-12, 1e-12)}


def assert_values(t, expected, name=None, rtol=None, atol=None):
    """`t` (pith) has dtype `name`, the shape of `expected` and its values: exactly for
    integers and bool, within the dtype's tolerance for floats (NaNs in the same places)."""
    name = name or dtype_name(t.dtype)
    assert dtype_name(t.dtype) == name
    expected = np.asarray(expected)
    assert tuple(t.shape) == expected.shape
    got = to_numpy(t)
    if is_float(name):
        r, a = TOLERANCE[name]
        np.testing.assert_allclose(got.astype(np.float64), expected.astype(np.float64),
                                   rtol=r if rtol is None else rtol,
                                   atol=a if atol is None else atol)
    else:
        np.testing.assert_array_equal(got, expected.astype(np_dtype(name)))


def assert_matches_torch(t, expected_torch, rtol=None, atol=None):
    """`t` (pith) has torch's result dtype, shape and values."""
    assert_values(t, torch_to_numpy(expected_torch), dtype_name(expected_torch.dtype),
                  rtol=rtol, atol=atol)


# ---- data tables (the fallback oracle when torch is not installed) -----------------------

# PyTorch's answers, computed by scripts/gen_oracle_tables.py (see tests/data/README.md).
DATA_DIR = pathlib.Path(__file__).resolve().parents[1] / "data"


def read_table(filename):
    """Rows of tests/data/<filename> (PyTorch's results) as dicts. A missing or empty table
    raises, so that the tests built on it fail rather than run on no rows."""
    path = DATA_DIR / filename
    if not path.is_file():
        raise FileNotFoundError(f"the oracle table {path} is missing "
                                "(regenerate it with scripts/gen_oracle_tables.py)")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        raise ValueError(f"the oracle table {path} has no rows")
    return rows


# ---- hypothesis strategies ---------------------------------------------------------------

shapes = st.lists(st.integers(0, 4), min_size=0, max_size=4).map(tuple)
nonempty_shapes = st.lists(st.integers(1, 4), min_size=0, max_size=4).map(tuple)
LAYOUTS = ["contiguous", "transposed", "stepped", "expanded", "offset"]


def _bounds(name, lo, hi):
    if name in INT_NAMES:
        info = np.iinfo(name)
        return (int(info.min) if lo is None else max(int(info.min), int(np.ceil(lo))),
                int(info.max) if hi is None else min(int(info.max), int(np.floor(hi))))
    return (-1000.0 if lo is None else lo), (1000.0 if hi is None else hi)


def _random_values(rng, name, n, lo, hi):
    """n values of dtype `name` in [lo, hi]; a quarter are small integers (ties, zeros)."""
    if name == "bool":
        return rng.integers(0, 2, n).astype(bool)
    lo, hi = _bounds(name, lo, hi)
    if name in INT_NAMES:
        values = rng.integers(lo, hi, n, endpoint=True, dtype=np.int64)
    else:
        values = rng.uniform(lo, hi, n)
    small = np.clip(rng.integers(-3, 4, n), lo, hi)
    return np.where(rng.random(n) < 0.25, small, values)


def elements(name, lo=None, hi=None):
    """Values of dtype `name`; floats are finite, in [lo, hi] (default +-1000)."""
    if name == "bool":
        return st.booleans()
    lo, hi = _bounds(name, lo, hi)
    if name in INT_NAMES:
        return st.integers(lo, hi)
    width = {"float16": 16, "float64": 64}.get(name, 32)
    return st.floats(lo, hi, width=width, allow_nan=False, allow_infinity=False,
                     allow_subnormal=False)


@st.composite
def np_arrays(draw, name, shape, lo=None, hi=None):
    """A NumPy array of dtype `name` (float32 holding bfloat16 values) and `shape`. Small
    arrays are drawn element by element (Hypothesis shrinks them); larger ones come from a
    drawn seed, because drawing thousands of elements one by one is slow."""
    n = int(np.prod(shape))
    if n <= 8:
        values = draw(st.lists(elements(name, lo, hi), min_size=n, max_size=n))
    else:
        rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
        values = _random_values(rng, name, n, lo, hi)
    a = np.array(values).astype(np_dtype(name)).reshape(shape)
    return round_to_bfloat16(a) if name == "bfloat16" else a


@st.composite
def tensors(draw, name, shape, layout=None, lo=None, hi=None):
    """(pith tensor, NumPy array with the same values) of dtype `name` and `shape`, laid out
    as `layout` (drawn from LAYOUTS when None): the same view is taken on both sides."""
    layout = layout or draw(st.sampled_from(LAYOUTS))
    ndim = len(shape)
    if layout == "transposed" and ndim >= 2:
        base = draw(np_arrays(name, shape[::-1], lo, hi))
        order = list(range(ndim))[::-1]
        return to_pith(base, name).permute(order), base.transpose(order)
    if layout == "stepped" and ndim >= 1:
        # steps on the last two dims only, to keep the base small
        base_shape = tuple(s if i < ndim - 2 else 2 * s + 1 for i, s in enumerate(shape))
        base = draw(np_arrays(name, base_shape, lo, hi))
        key = tuple(slice(None) if i < ndim - 2 else slice(1, None, 2) for i in range(ndim))
        return to_pith(base, name)[key], base[key]
    if layout == "expanded" and ndim >= 1:
        small = tuple(1 if i % 2 == 0 else s for i, s in enumerate(shape))
        base = draw(np_arrays(name, small, lo, hi))
        return to_pith(base, name).expand(*shape), np.broadcast_to(base, shape)
    if layout == "offset" and ndim >= 1:
        base = draw(np_arrays(name, (shape[0] + 1,) + tuple(shape[1:]), lo, hi))
        return to_pith(base, name)[1:], base[1:]
    a = draw(np_arrays(name, shape, lo, hi))
    return to_pith(a, name), a


def broadcastable_shapes(shape):
    """Shapes that broadcast with `shape`: a suffix of it, with some sizes set to 1, and
    possibly extra leading dims when the suffix is all of it (a leading dim in front of a
    shorter suffix would face a dim of `shape`: (2,) against (0,) does not broadcast)."""
    @st.composite
    def strategy(draw):
        keep = draw(st.integers(0, len(shape)))
        tail = [1 if draw(st.booleans()) else s for s in shape[len(shape) - keep:]]
        # Extra leading dims only in front of the whole of `shape`: in front of a suffix
        # they would line up with its other sizes ((2,) does not broadcast with (0,)).
        room = max(0, 3 - len(shape)) if keep == len(shape) else 0
        lead = draw(st.lists(st.integers(1, 3), max_size=room))
        return tuple(lead) + tuple(tail)
    return strategy()


# ---- DLPack's C structs, for tests that craft or read capsules ----

class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p),
                ("deleter", ctypes.c_void_p)]


# ---- errors against torch ----------------------------------------------------------------

def assert_raises_like_torch(call, error, fragment):
    """call(lib) raises `error` with `fragment` in its message for lib = pith and, when torch
    is installed, for lib = torch too, so that the expectation is PyTorch's. The fragment is
    written with pith's names ("pith.Size" reads "torch.Size" for torch) and compared
    ignoring case: pith's op messages read "mul: the size ..." where PyTorch's read "The
    size ..."."""
    libraries = [pith] + [lib for lib in [torch_or_none()] if lib is not None]
    for lib in libraries:
        with pytest.raises(error) as info:
            call(lib)
        expected = fragment if lib is pith else fragment.replace("pith.", "torch.")
        assert expected.lower() in str(info.value).lower(), f"{lib.__name__}: {info.value}"
