"""Devices: pith.device (construction, str/repr, equality, hashing, pickling, as a context
manager), device= everywhere pith takes one, the errors for devices pith does not have, the
device methods of Tensor (cpu, cuda, to, is_cuda, type, view_as, as_subclass ...), and the
namespaces PyTorch programs query: pith.cuda, pith.accelerator, pith.backends, the default
device and the process settings. PyTorch is the oracle where it is installed."""
import copy
import pickle
import threading
import warnings

import pytest

import pith

# ---- pith.device ----------------------------------------------------------------------------

VALID = ["cpu", "cpu:0", "cpu:3", "cuda", "cuda:0", "cuda:1", "cuda:10", "cuda:127", "meta",
         "meta:0", "mps", "mps:0", "xla:2", "hpu", "xpu", "ipu", "mtia:2", "privateuseone:1",
         "hip", "ve", "lazy", "vulkan", "fpga", "maia", "opengl", "opencl", "ideep"]
VALID_CALLS = [("cpu",), ("cpu", 0), ("cpu", None), ("cuda", 1), ("cuda", 127), ("meta", 3),
               ("cuda:2",)]
VALID_KWARGS = [{"type": "cuda", "index": 2}, {"type": "cpu"}, {"device": "cuda:1"}]


def described(d):
    return (str(d), repr(d), d.type, d.index, hash(d))


@pytest.mark.parametrize("text", VALID)
def test_a_device_string_gives_pytorchs_device(text):
    torch = pytest.importorskip("torch")
    assert described(pith.device(text)) == described(torch.device(text))


@pytest.mark.parametrize("args", VALID_CALLS)
def test_a_type_and_an_index_give_pytorchs_device(args):
    torch = pytest.importorskip("torch")
    assert described(pith.device(*args)) == described(torch.device(*args))


@pytest.mark.parametrize("kwargs", VALID_KWARGS)
def test_keywords_give_pytorchs_device(kwargs):
    torch = pytest.importorskip("torch")
    assert described(pith.device(**kwargs)) == described(torch.device(**kwargs))


def test_device_attributes_and_text():
    d = pith.device("cuda:1")
    assert (d.type, d.index, str(d), repr(d)) == ("cuda", 1, "cuda:1",
                                                  "device(type='cuda', index=1)")
    cpu = pith.device("cpu")
    assert (cpu.type, cpu.index, str(cpu), repr(cpu)) == ("cpu", None, "cpu",
                                                          "device(type='cpu')")
    assert str(pith.device("cpu", 0)) == "cpu:0"


def test_a_device_of_a_device_is_equal_to_it():
    d = pith.device("cuda", 3)
    assert pith.device(d) == d and pith.device(device=d) == d


def test_bytes_name_a_device_as_in_pytorch():
    assert pith.device(b"cuda:1") == pith.device("cuda", 1)


# (args, kwargs): each raises in PyTorch, and in pith with PyTorch's exception and message.
INVALID = [
    ((""), {}), ((":",), {}), (("cuda:",), {}), ((":0",), {}), (("cuda:00",), {}),
    (("cuda:-1",), {}), (("cuda:x",), {}), (("cuda:1:2",), {}), ((" cpu",), {}),
    (("cuda :1",), {}), (("cuda:1 ",), {}), (("CPU",), {}), (("Cuda",), {}), (("foo",), {}),
    (("cu_da",), {}), (("_",), {}), (("metal",), {}), (("é",), {}), (("cuda:٣",), {}),
    (("cpu", -1), {}), (("cuda", "1"), {}), (("cuda", True), {}), (("cuda:1", 0), {}),
    (("cuda:2", None), {}), (("cuda:2",), {"index": None}),
    ((0,), {}), ((3,), {}), ((None,), {}), ((1.5,), {}), ((), {}), ((True,), {}),
    (("cuda", 1, 2), {}), (("cuda",), {"foo": 1}),
]


def raised(fn):
    try:
        fn()
    except Exception as e:  # noqa: BLE001 - the point is the type and the message
        return type(e), str(e)
    return None


# PyTorch's messages name its own types and argument lists; these parts differ.
def comparable(message):
    return message.replace("torch.device", "pith.device").split(", but expected one of")[0]


@pytest.mark.parametrize("args, kwargs", INVALID)
def test_invalid_devices_raise_pytorchs_errors(args, kwargs):
    torch = pytest.importorskip("torch")
    args = args if isinstance(args, tuple) else (args,)
    expected = raised(lambda: torch.device(*args, **kwargs))
    got = raised(lambda: pith.device(*args, **kwargs))
    assert expected is not None and got is not None
    assert got[0] is expected[0]
    assert comparable(got[1]) == comparable(expected[1])


@pytest.mark.parametrize("args, error, match", [
    (("gpu",), RuntimeError, "Expected one of cpu, cuda, ipu"),
    (("cuda:-1",), RuntimeError, "Invalid device string: 'cuda:-1'"),
    (("",), RuntimeError, "Device string must not be empty"),
    (("cpu", -1), RuntimeError, "Device index must not be negative"),
    (("cuda:1", 0), RuntimeError, "must not include an index"),
    ((0,), RuntimeError, "Cannot access accelerator device when none is available"),
    ((None,), TypeError, "invalid combination of arguments"),
    (("cuda", "1"), TypeError, "argument 'index' \\(position 2\\) must be int, not str"),
])
def test_invalid_devices_raise(args, error, match):
    with pytest.raises(error, match=match):
        pith.device(*args)


@pytest.mark.parametrize("args", [("cuda:128",), ("cuda", 128), ("cuda", 2**70),
                                  ("cuda:99999999999",)])
def test_an_index_beyond_pytorchs_int8_is_refused(args):
    # PyTorch wraps it (torch.device('cuda:128').index is 65408): a difference of pith.
    with pytest.raises(RuntimeError, match="at most 127"):
        pith.device(*args)


def test_a_nul_in_a_device_string_is_a_value_error():
    with pytest.raises(ValueError, match="embedded null character"):
        pith.device("cpu\x00junk")


def test_an_index_may_be_any_integer_object():
    np = pytest.importorskip("numpy")
    assert pith.device("cuda", np.int64(1)) == pith.device("cuda:1")


def test_mkldnn_is_deprecated_as_in_pytorch():
    with pytest.warns(UserWarning, match="'mkldnn' is no longer used as device type"):
        assert pith.device("mkldnn").type == "mkldnn"


PAIRS = [("cpu", "cpu"), ("cpu", "cpu:0"), ("cuda", "cuda:0"), ("cuda:0", "cuda:0"),
         ("cuda:1", "cuda:2"), ("meta", "cpu"), ("mps:0", "mps:0")]


@pytest.mark.parametrize("a, b", PAIRS)
def test_equality_is_pytorchs(a, b):
    torch = pytest.importorskip("torch")
    assert (pith.device(a) == pith.device(b)) == (torch.device(a) == torch.device(b))
    assert (pith.device(a) != pith.device(b)) == (torch.device(a) != torch.device(b))


@pytest.mark.parametrize("text", ["cpu", "cuda:1", "meta"])
def test_a_device_is_never_equal_to_its_string_as_in_pytorch(text):
    torch = pytest.importorskip("torch")
    assert (pith.device(text) == text) is (torch.device(text) == text) is False
    assert (text == pith.device(text)) is False
    assert pith.device(text) != text


@pytest.mark.parametrize("text", ["cpu", "cpu:0", "cuda:1", "meta"])
def test_a_pith_device_equals_and_hashes_as_the_torch_device_it_names(text):
    torch = pytest.importorskip("torch")
    assert pith.device(text) == torch.device(text) and torch.device(text) == pith.device(text)
    assert hash(pith.device(text)) == hash(torch.device(text))
    assert pith.device(text) != torch.device("xla:5")


def test_devices_hash_as_their_equality():
    devices = [pith.device(t) for t in ["cpu", "cpu", "cpu:0", "cuda", "cuda:0", "cuda:1"]]
    assert len(set(devices)) == 5
    table = {pith.device("cuda", 1): "one"}
    assert table[pith.device("cuda:1")] == "one"


def test_devices_have_no_order():
    with pytest.raises(TypeError):
        pith.device("cpu") < pith.device("cuda")


@pytest.mark.parametrize("text", ["cpu", "cpu:0", "cuda:1", "meta", "mps"])
@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_devices_pickle_and_copy(text, protocol):
    d = pith.device(text)
    back = pickle.loads(pickle.dumps(d, protocol=protocol))
    assert type(back) is pith.device and back == d and repr(back) == repr(d)
    assert copy.copy(d) == d and copy.deepcopy(d) == d


def test_a_device_pickles_as_pytorchs_reduce():
    torch = pytest.importorskip("torch")
    for text in ["cpu", "cuda:1"]:
        assert pith.device(text).__reduce__()[1] == torch.device(text).__reduce__()[1]


def test_devices_cannot_be_subclassed_or_changed():
    with pytest.raises(TypeError):
        type("D", (pith.device,), {})
    with pytest.raises(AttributeError):
        pith.device("cpu").index = 1


def test_a_cpu_device_is_a_context_manager_that_changes_nothing():
    with pith.device("cpu") as d:
        assert d == pith.device("cpu")
        assert pith.zeros(2).device == pith.device("cpu")
    with pith.device("cpu", 0):
        assert pith.ones(1).device == pith.device("cpu")


@pytest.mark.parametrize("text, error", [("cuda", AssertionError),
                                         ("meta", NotImplementedError),
                                         ("mps", NotImplementedError)])
def test_another_device_as_a_context_manager_raises_on_entry(text, error):
    with pytest.raises(error, match=text):
        with pith.device(text):
            pass


# ---- device= everywhere ---------------------------------------------------------------------

# Every entry point of pith that takes a device, as a call taking it.
ENTRY_POINTS = {
    "zeros": lambda d: pith.zeros(2, device=d),
    "ones": lambda d: pith.ones(2, 3, device=d),
    "empty": lambda d: pith.empty((2,), device=d),
    "rand": lambda d: pith.rand(2, device=d),
    "randn": lambda d: pith.randn(2, device=d),
    "full": lambda d: pith.full((2,), 1.0, device=d),
    "arange": lambda d: pith.arange(3, device=d),
    "tensor": lambda d: pith.tensor([1, 2], device=d),
    "randint": lambda d: pith.randint(0, 5, (2,), device=d),
    "eye": lambda d: pith.eye(2, device=d),
    "linspace": lambda d: pith.linspace(0, 1, 3, device=d),
    "empty_strided": lambda d: pith.empty_strided((2,), (1,), device=d),
    "zeros_like": lambda d: pith.zeros_like(pith.ones(2), device=d),
    "full_like": lambda d: pith.full_like(pith.ones(2), 3, device=d),
    "randint_like": lambda d: pith.randint_like(pith.ones(2), 3, device=d),
    "new_zeros": lambda d: pith.ones(2).new_zeros(3, device=d),
    "new_full": lambda d: pith.ones(2).new_full((3,), 1, device=d),
    "new_tensor": lambda d: pith.ones(2).new_tensor([1], device=d),
    "to": lambda d: pith.ones(2).to(d),
    "to(device=)": lambda d: pith.ones(2).to(device=d),
    "to(device, dtype)": lambda d: pith.ones(2).to(d, pith.float64),
    "ops zeros": lambda d: pith.ops.pith.zeros([2], device=d),
    "wrapper subclass": lambda d: pith.Tensor._make_wrapper_subclass(Wrapper, (2,), device=d),
    "set_default_device": lambda d: pith.set_default_device(d),
}


class Wrapper(pith.Tensor):
    @classmethod
    def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
        return NotImplemented


@pytest.fixture(autouse=True)
def default_device_restored():
    yield
    pith.set_default_device(None)


def cpu_devices():
    devices = ["cpu", "cpu:0", pith.device("cpu"), pith.device("cpu", 0), None]
    try:
        import torch
        devices += [torch.device("cpu"), torch.device("cpu", 0)]
    except ImportError:
        pass
    return devices


@pytest.mark.parametrize("device", cpu_devices(), ids=repr)
@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_every_device_argument_takes_a_cpu_device_in_every_form(name, device):
    made = ENTRY_POINTS[name](device)
    if isinstance(made, pith.Tensor):
        assert made.device == pith.device("cpu") and type(made.device) is pith.device


# (device, exception) for every entry point but the operators' (which take meta too).
REFUSED = [("cuda", AssertionError, "not compiled with CUDA"),
           ("cuda:1", AssertionError, "not compiled with CUDA"),
           (pith.device("cuda", 0), AssertionError, "not compiled with CUDA"),
           ("mps", NotImplementedError, "device='mps' is not supported"),
           ("xla:1", NotImplementedError, "device='xla:1' is not supported"),
           (0, RuntimeError, "Cannot access accelerator device"),
           ("gpu", RuntimeError, "Expected one of cpu, cuda"),
           ("cuda:x", RuntimeError, "Invalid device string"),
           (1.5, TypeError, "device|invalid combination of arguments")]


@pytest.mark.parametrize("device, error, match", REFUSED, ids=repr)
@pytest.mark.parametrize("name", sorted(ENTRY_POINTS))
def test_every_device_argument_refuses_other_devices_alike(name, device, error, match):
    with pytest.raises(error, match=match):
        ENTRY_POINTS[name](device)


# The op table's factories (bound by the binder) make meta tensors, as PyTorch's do.
OP_FACTORIES = {"ops zeros", "zeros", "ones", "empty", "rand", "randn", "full", "arange",
                "empty_strided", "eye", "linspace", "randint"}
FACTORIES_WITHOUT_META = sorted(set(ENTRY_POINTS) - OP_FACTORIES - {"wrapper subclass"})


@pytest.mark.parametrize("name", FACTORIES_WITHOUT_META)
def test_the_python_factories_make_no_meta_tensors(name):
    with pytest.raises(NotImplementedError, match="'meta' is not supported"):
        ENTRY_POINTS[name]("meta")


@pytest.mark.parametrize("name", sorted(OP_FACTORIES | {"wrapper subclass"}))
def test_operators_make_meta_tensors(name):
    made = ENTRY_POINTS[name](pith.device("meta"))
    assert made.device == pith.device("meta") and made.is_meta and not made.is_cpu


def test_pytorchs_cpu_build_raises_the_same_exception_types():
    torch = pytest.importorskip("torch")
    for device in ["cuda", "cuda:1", 0, "gpu", "cuda:x", 1.5]:
        expected = raised(lambda: torch.zeros(2, device=device))
        got = raised(lambda: pith.zeros(2, device=device))
        assert got[0] is expected[0], device
    for device in ["cuda", 0]:
        assert raised(lambda: pith.ones(2).to(device))[0] is \
            raised(lambda: torch.ones(2).to(device))[0]


def test_the_idiom_of_choosing_a_device_runs_on_the_cpu():
    device = "cuda" if pith.cuda.is_available() else "cpu"
    model_input = pith.ones(2, 3, device=device).to(device)
    assert model_input.device.type == "cpu"
    device = pith.device("mps" if pith.backends.mps.is_available() else "cpu")
    assert pith.zeros(1, device=device).to(device).is_cpu


# ---- Tensor.device and the device methods ---------------------------------------------------

def test_tensor_device_is_a_pith_device():
    x = pith.ones(2)
    assert type(x.device) is pith.device and repr(x.device) == "device(type='cpu')"
    assert x.device == pith.device("cpu") and x.device != "cpu"
    assert str(x.device) == "cpu" and x.device.index is None


def test_tensor_device_matches_pytorchs():
    torch = pytest.importorskip("torch")
    assert described(pith.ones(2).device) == described(torch.ones(2).device)
    meta = pith.ops.pith.zeros([2], device="meta")
    assert described(meta.device) == described(torch.zeros(2, device="meta").device)


def flags(x):
    return (x.is_cuda, x.is_cpu, x.is_meta, x.get_device())


def test_device_flags_match_pytorchs():
    torch = pytest.importorskip("torch")
    assert flags(pith.ones(2)) == flags(torch.ones(2))
    assert flags(pith.ops.pith.zeros([2], device="meta")) == flags(torch.zeros(2, device="meta"))


def test_cpu_returns_the_tensor_itself():
    x = pith.ones(2, 3).t()
    assert x.cpu() is x
    with pytest.raises(NotImplementedError, match="Cannot copy out of meta tensor"):
        pith.ops.pith.zeros([2], device="meta").cpu()


@pytest.mark.parametrize("args, error, match", [
    ((), AssertionError, "not compiled with CUDA"),
    (("cuda:1",), AssertionError, "not compiled with CUDA"),
    ((pith.device("cuda"),), AssertionError, "not compiled with CUDA"),
    ((1,), RuntimeError, "Cannot access accelerator device"),
    (("cpu",), RuntimeError, "Invalid device, must be cuda device"),
])
def test_cuda_raises_as_pytorch_built_without_cuda(args, error, match):
    with pytest.raises(error, match=match):
        pith.ones(2).cuda(*args)


def test_cuda_raises_pytorchs_exception_types():
    torch = pytest.importorskip("torch")
    for args in [(), ("cuda:1",), (1,), ("cpu",)]:
        assert raised(lambda: pith.ones(2).cuda(*args))[0] is \
            raised(lambda: torch.ones(2).cuda(*args))[0]


def identities(lib):
    x = lib.ones(2, 3)
    return [x.to("cpu") is x, x.to(lib.device("cpu")) is x, x.to("cpu:0") is x,
            x.to(lib.device("cpu", 0)) is x, x.to(device="cpu") is x,
            x.to("cpu", lib.float32) is x, x.cpu() is x]


def test_to_a_device_returns_the_tensor_itself_when_pytorch_does():
    torch = pytest.importorskip("torch")
    assert identities(pith) == identities(torch)


def test_to_a_device_with_an_index_copies():
    x = pith.ones(2)
    y = x.to("cpu:0")
    y[0] = 5
    assert x.tolist() == [1.0, 1.0] and y.device == pith.device("cpu")


# ---- Tensor.type ----------------------------------------------------------------------------

DTYPES = ["float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
          "uint8", "bool"]


@pytest.mark.parametrize("dtype", DTYPES)
def test_type_names_are_pytorchs(dtype):
    torch = pytest.importorskip("torch")
    assert pith.ones(2, dtype=getattr(pith, dtype)).type() == \
        torch.ones(2, dtype=getattr(torch, dtype)).type()


def test_type_name_of_a_meta_tensor_is_pytorchs():
    torch = pytest.importorskip("torch")
    assert pith.ops.pith.zeros([2], device="meta").type() == \
        torch.zeros(2, device="meta").type()


def test_type_names_are_written_as_pytorchs_for_ported_comparisons():
    x = pith.ones(2)
    assert x.type() == "torch.FloatTensor" and x.long().type() == "torch.LongTensor"
    assert x.type(dtype=None) == "torch.FloatTensor"


@pytest.mark.parametrize("source", DTYPES)
@pytest.mark.parametrize("target", DTYPES)
def test_type_converts_to_a_dtype_or_a_type_name(source, target):
    x = pith.tensor([[0, 1], [2, 3]], dtype=getattr(pith, source)).t()
    name = pith.ones(1, dtype=getattr(pith, target)).type()
    for spec in (getattr(pith, target), name, name.replace("torch.", "pith.")):
        y = x.type(spec)
        assert y.dtype == getattr(pith, target)
        assert y.tolist() == x.to(getattr(pith, target)).tolist()
        assert (y is x) == (source == target)


def test_type_conversion_matches_pytorch_on_empty_and_zero_dim_tensors():
    torch = pytest.importorskip("torch")
    for shape in [(0,), (), (2, 0, 3)]:
        p = pith.ones(shape).type("torch.IntTensor")
        t = torch.ones(shape).type("torch.IntTensor")
        assert (p.type(), tuple(p.shape)) == (t.type(), tuple(t.shape))


@pytest.mark.parametrize("spec, error, match", [
    ("torch.Foo", ValueError, "invalid type: 'torch.Foo'"),
    ("FloatTensor", ValueError, "invalid type: 'FloatTensor'"),
    ("torch.float32", ValueError, "invalid type: 'torch.float32'"),
    (float, ValueError, "invalid type: 'float'"),
    (3, TypeError, "dtype must be a type, str, or dtype object"),
    ("torch.cuda.FloatTensor", AssertionError, "not compiled with CUDA"),
])
def test_type_refuses_what_names_no_dtype(spec, error, match):
    with pytest.raises(error, match=match):
        pith.ones(2).type(spec)


def test_type_refuses_what_pytorch_refuses():
    torch = pytest.importorskip("torch")
    for spec in ["torch.Foo", "FloatTensor", float, 3]:
        expected = raised(lambda: torch.ones(2).type(spec))
        assert raised(lambda: pith.ones(2).type(spec)) == expected
    with pytest.raises(TypeError, match="unexpected keyword argument 'foo'"):
        pith.ones(2).type(pith.int64, foo=1)


def test_type_takes_non_blocking():
    assert pith.ones(2).type(pith.int64, non_blocking=True).dtype == pith.int64


# ---- view_as, type_as, as_subclass, is_floating_point, is_tensor ---------------------------

@pytest.mark.parametrize("shape, other", [((2, 3), (3, 2)), ((6,), (1, 6, 1)), ((), (1,)),
                                          ((0, 3), (3, 0)), ((1,), ())])
def test_view_as_is_a_view_of_the_others_shape(shape, other):
    torch = pytest.importorskip("torch")
    x = pith.zeros(shape)
    y = x.view_as(pith.ones(other))
    assert tuple(y.shape) == tuple(torch.zeros(shape).view_as(torch.ones(other)).shape)
    if y.numel():
        y.view(-1)[0] = 7
        assert x.reshape(-1)[0].item() == 7


def test_view_as_of_a_non_contiguous_tensor_fails_as_view_does():
    x = pith.ones(2, 3).t()
    with pytest.raises(RuntimeError) as via_view:
        x.view(6)
    with pytest.raises(RuntimeError) as via_view_as:
        x.view_as(pith.ones(6))
    assert str(via_view_as.value) == str(via_view.value)


@pytest.mark.parametrize("method", ["view_as", "type_as"])
def test_view_as_and_type_as_need_a_tensor(method):
    torch = pytest.importorskip("torch")
    expected = raised(lambda: getattr(torch.ones(2), method)(3))
    assert raised(lambda: getattr(pith.ones(2), method)(3)) == expected


def test_type_as_converts_and_keeps_the_tensor_when_the_dtype_matches():
    x = pith.ones(2)
    assert x.type_as(x) is x
    assert x.type_as(pith.zeros(1, dtype=pith.int64)).dtype == pith.int64


def test_as_subclass_shares_the_data():
    class Sub(pith.Tensor):
        pass

    x = pith.ones(2, 3).t()
    s = x.as_subclass(Sub)
    assert type(s) is Sub and s.shape == x.shape and s.stride() == x.stride()
    s[0, 0] = 4
    assert x[0, 0].item() == 4
    assert type(x) is pith.Tensor


@pytest.mark.parametrize("cls", [int, "Tensor", None])
def test_as_subclass_refuses_a_class_that_is_not_a_tensor(cls):
    with pytest.raises(TypeError, match="does not inherit from Tensor"):
        pith.ones(2).as_subclass(cls)


@pytest.mark.parametrize("dtype", DTYPES)
def test_is_floating_point_matches_pytorch(dtype):
    torch = pytest.importorskip("torch")
    p, t = pith.ones(2, dtype=getattr(pith, dtype)), torch.ones(2, dtype=getattr(torch, dtype))
    assert pith.is_floating_point(p) == p.is_floating_point() == torch.is_floating_point(t)


def test_is_floating_point_and_is_tensor():
    assert pith.is_floating_point(pith.ones(1)) and not pith.ones(1).long().is_floating_point()
    with pytest.raises(TypeError, match="argument 'input' \\(position 1\\) must be Tensor"):
        pith.is_floating_point(1.0)
    assert pith.is_tensor(pith.ones(1)) and not pith.is_tensor([1.0]) and not pith.is_tensor(1)
    assert pith.is_tensor(pith.nn.Parameter(pith.ones(1)))


# ---- pith.cuda ------------------------------------------------------------------------------

CUDA_CALLS = {
    "is_available": (), "device_count": (), "is_initialized": (), "empty_cache": (),
    "is_bf16_supported": (), "is_tf32_supported": (), "manual_seed": (3,),
    "manual_seed_all": (3,), "seed": (), "seed_all": (), "get_arch_list": (),
    "memory_allocated": (), "max_memory_allocated": (), "memory_reserved": (),
    "max_memory_reserved": (), "current_device": (), "synchronize": (), "init": (),
    "initial_seed": (), "get_device_name": (), "get_device_capability": (),
    "get_device_properties": (), "get_rng_state": (), "get_rng_state_all": (),
}


def outcome(fn):
    try:
        return ("returned", fn())
    except Exception as e:  # noqa: BLE001 - compared by type
        return ("raised", type(e))


@pytest.mark.parametrize("name", sorted(CUDA_CALLS))
def test_pith_cuda_answers_as_pytorch_built_without_cuda(name):
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("the oracle has CUDA")
    args = CUDA_CALLS[name]
    assert outcome(lambda: getattr(pith.cuda, name)(*args)) == \
        outcome(lambda: getattr(torch.cuda, name)(*args))


def test_pith_cuda_without_pytorch():
    assert pith.cuda.is_available() is False and pith.cuda.device_count() == 0
    assert pith.cuda.manual_seed(1) is None and pith.cuda.manual_seed_all(1) is None
    assert pith.cuda.empty_cache() is None and pith.cuda.is_bf16_supported() is False
    assert pith.cuda.memory_allocated() == 0
    for fn in (pith.cuda.current_device, pith.cuda.synchronize, pith.cuda.init):
        with pytest.raises(AssertionError, match="not compiled with CUDA"):
            fn()
    with pytest.raises(ValueError):
        pith.cuda.manual_seed("x")


def test_pith_cuda_seeding_leaves_pith_random_numbers_alone():
    pith.manual_seed(5)
    a = pith.rand(3).tolist()
    pith.manual_seed(5)
    pith.cuda.manual_seed_all(7)
    pith.cuda.seed()
    assert pith.rand(3).tolist() == a


# ---- pith.accelerator -----------------------------------------------------------------------

ACCELERATOR_CALLS = [
    ("is_available", ()), ("current_accelerator", ()), ("current_accelerator", (True,)),
    ("device_count", ()), ("current_device_index", ()), ("set_device_index", (0,)),
    ("set_device_index", (None,)), ("synchronize", ()), ("empty_cache", ()),
    ("memory_allocated", ()), ("max_memory_allocated", ()), ("memory_reserved", ()),
    ("max_memory_reserved", ()), ("reset_peak_memory_stats", ()),
]


@pytest.mark.parametrize("name, args", ACCELERATOR_CALLS)
def test_pith_accelerator_answers_as_pytorch_without_an_accelerator(name, args):
    torch = pytest.importorskip("torch")
    if torch.accelerator.is_available():
        pytest.skip("the oracle has an accelerator")
    assert outcome(lambda: getattr(pith.accelerator, name)(*args)) == \
        outcome(lambda: getattr(torch.accelerator, name)(*args))


def test_pith_accelerator_without_pytorch():
    assert pith.accelerator.is_available() is False
    assert pith.accelerator.current_accelerator() is None
    assert pith.accelerator.current_accelerator(check_available=True) is None
    assert pith.accelerator.device_count() == 0
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        pith.accelerator.current_device_index()
    with pith.accelerator.device_index(None):
        pass
    with pytest.raises(RuntimeError, match="Cannot access accelerator device"):
        with pith.accelerator.device_index(0):
            pass


# ---- pith.backends --------------------------------------------------------------------------

def test_backends_report_what_pith_is_built_with():
    import pith.backends.cudnn as cudnn  # the import form of PyTorch programs
    assert pith.backends.cudnn is cudnn
    assert pith.backends.mps.is_available() is False and pith.backends.mps.is_built() is False
    assert cudnn.is_available() is False and cudnn.version() is None
    assert cudnn.is_acceptable(pith.ones(1)) is False
    assert pith.backends.cuda.is_built() is False
    assert pith.backends.openmp.is_available() is True
    assert pith.backends.mkl.is_available() is False
    assert pith.backends.mkldnn.is_available() is False


BOOL_FLAGS = [("cudnn", "enabled"), ("cudnn", "benchmark"), ("cudnn", "deterministic"),
              ("cudnn", "allow_tf32"), ("mkldnn", "enabled"), ("mkldnn", "deterministic")]


@pytest.fixture
def restore_flags():
    saved = {(m, f): getattr(getattr(pith.backends, m), f) for m, f in BOOL_FLAGS}
    precision = pith.get_float32_matmul_precision()
    matmul = {name: getattr(pith.backends.cuda.matmul, name)
              for name in ("allow_fp16_reduced_precision_reduction",
                           "allow_bf16_reduced_precision_reduction", "allow_fp16_accumulation")}
    yield
    for (m, f), v in saved.items():
        setattr(getattr(pith.backends, m), f, v)
    for name, v in matmul.items():
        setattr(pith.backends.cuda.matmul, name, v)
    pith.set_float32_matmul_precision(precision)


@pytest.mark.parametrize("module, flag", BOOL_FLAGS)
def test_backend_flags_have_pytorchs_defaults(module, flag):
    torch = pytest.importorskip("torch")
    assert getattr(getattr(pith.backends, module), flag) == \
        getattr(getattr(torch.backends, module), flag)


@pytest.mark.parametrize("module, flag", BOOL_FLAGS)
def test_backend_flags_are_settable_bools(module, flag, restore_flags):
    namespace = getattr(pith.backends, module)
    for value in (True, False, True):
        setattr(namespace, flag, value)
        assert getattr(namespace, flag) is value
    with pytest.raises(RuntimeError, match=f"set_{flag}_{module} expects a bool, but got str"):
        setattr(namespace, flag, "yes")
    assert getattr(namespace, flag) is True


def test_backend_flag_errors_are_pytorchs(restore_flags):
    torch = pytest.importorskip("torch")
    for flag in ("benchmark", "deterministic", "enabled"):
        expected = raised(lambda: setattr(torch.backends.cudnn, flag, None))
        assert raised(lambda: setattr(pith.backends.cudnn, flag, None)) == expected


def test_cudnn_flags_context_manager_restores_the_flags(restore_flags):
    cudnn = pith.backends.cudnn
    with cudnn.flags(enabled=False, benchmark=True, deterministic=True):
        assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (False, True, True)
    assert (cudnn.enabled, cudnn.benchmark, cudnn.deterministic) == (True, False, False)


def test_cuda_matmul_allow_tf32_follows_the_float32_matmul_precision(restore_flags):
    matmul = pith.backends.cuda.matmul
    assert matmul.allow_tf32 is False and pith.get_float32_matmul_precision() == "highest"
    pith.set_float32_matmul_precision("medium")
    assert matmul.allow_tf32 is True
    matmul.allow_tf32 = False
    assert pith.get_float32_matmul_precision() == "highest"
    matmul.allow_tf32 = True
    assert pith.get_float32_matmul_precision() == "high"
    with pytest.raises(RuntimeError, match="set_allow_tf32_cublas expects a bool, but got str"):
        matmul.allow_tf32 = "yes"


def test_cuda_matmul_flags_match_pytorch(restore_flags):
    torch = pytest.importorskip("torch")
    names = ["allow_tf32", "allow_fp16_reduced_precision_reduction",
             "allow_bf16_reduced_precision_reduction", "allow_fp16_accumulation"]
    assert [getattr(pith.backends.cuda.matmul, n) for n in names] == \
        [getattr(torch.backends.cuda.matmul, n) for n in names]
    for value in [False, (True,), [False, True]]:
        pith.backends.cuda.matmul.allow_fp16_reduced_precision_reduction = value
        expected = value if isinstance(value, bool) else value[0]
        assert pith.backends.cuda.matmul.allow_fp16_reduced_precision_reduction is expected
    for bad in ["x", (), (True, True, True), (1,)]:
        expected = raised(lambda: setattr(torch.backends.cuda.matmul,
                                          "allow_bf16_reduced_precision_reduction", bad))
        got = raised(lambda: setattr(pith.backends.cuda.matmul,
                                     "allow_bf16_reduced_precision_reduction", bad))
        assert got == expected


def test_cuda_matmul_has_a_fixed_set_of_flags():
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        pith.backends.cuda.matmul.foo
    with pytest.raises(AttributeError, match="Unknown attribute foo"):
        pith.backends.cuda.matmul.foo = 1


# ---- default device and process settings ----------------------------------------------------

def test_the_default_device_is_the_cpu():
    assert pith.get_default_device() == pith.device("cpu")
    pith.set_default_device("cpu")
    assert pith.get_default_device() == pith.device("cpu")
    pith.set_default_device(pith.device("cpu", 0))
    assert pith.get_default_device() == pith.device("cpu", 0)
    assert pith.zeros(1).device == pith.device("cpu")
    pith.set_default_device(None)
    assert pith.get_default_device() == pith.device("cpu")


def default_device_program(lib):
    seen = [lib.get_default_device()]
    lib.set_default_device("cpu:0")
    seen.append(lib.get_default_device())
    other = []
    worker = threading.Thread(target=lambda: other.append(lib.get_default_device()))
    worker.start()
    worker.join()
    lib.set_default_device("cpu")
    seen.append(lib.get_default_device())
    lib.set_default_device(None)
    return [repr(d) for d in seen + other]


def test_the_default_device_is_pytorchs_per_thread_setting():
    torch = pytest.importorskip("torch")
    try:
        assert default_device_program(pith) == default_device_program(torch)
    finally:
        torch.set_default_device(None)


@pytest.mark.parametrize("device, error", [("cuda", AssertionError), (3, RuntimeError),
                                           ("meta", NotImplementedError)])
def test_set_default_device_refuses_devices_pith_has_not(device, error):
    with pytest.raises(error):
        pith.set_default_device(device)
    assert pith.get_default_device() == pith.device("cpu")


def deterministic_program(lib):
    seen = [(lib.are_deterministic_algorithms_enabled(),
             lib.is_deterministic_algorithms_warn_only_enabled(),
             lib.get_deterministic_debug_mode())]
    for mode, warn_only in [(True, False), (True, True), (False, False)]:
        lib.use_deterministic_algorithms(mode, warn_only=warn_only)
        seen.append((lib.are_deterministic_algorithms_enabled(),
                     lib.is_deterministic_algorithms_warn_only_enabled(),
                     lib.get_deterministic_debug_mode()))
    for debug_mode in ["warn", 2, "default", True, 0]:
        lib.set_deterministic_debug_mode(debug_mode)
        seen.append((lib.are_deterministic_algorithms_enabled(),
                     lib.get_deterministic_debug_mode()))
    for bad in [lambda: lib.use_deterministic_algorithms(1),
                lambda: lib.use_deterministic_algorithms(True, warn_only="x"),
                lambda: lib.set_deterministic_debug_mode(5),
                lambda: lib.set_deterministic_debug_mode("loud"),
                lambda: lib.set_deterministic_debug_mode(1.5)]:
        seen.append(raised(bad))
    lib.use_deterministic_algorithms(False)
    return seen


def test_deterministic_algorithms_settings_are_pytorchs():
    torch = pytest.importorskip("torch")
    try:
        assert deterministic_program(pith) == deterministic_program(torch)
    finally:
        torch.use_deterministic_algorithms(False)


def test_deterministic_algorithms_without_pytorch():
    assert pith.are_deterministic_algorithms_enabled() is False
    pith.use_deterministic_algorithms(True)
    try:
        assert pith.are_deterministic_algorithms_enabled() is True
        assert pith.get_deterministic_debug_mode() == 2
        assert pith.ones(3).sum().item() == 3.0  # ops run as before
    finally:
        pith.use_deterministic_algorithms(False)


def precision_program(lib):
    seen = [lib.get_float32_matmul_precision()]
    for precision in ["high", "medium", "highest"]:
        lib.set_float32_matmul_precision(precision)
        seen.append(lib.get_float32_matmul_precision())
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        lib.set_float32_matmul_precision("low")
    seen += [lib.get_float32_matmul_precision(), [w.category for w in caught]]
    seen.append(raised(lambda: lib.set_float32_matmul_precision(1)))
    lib.set_float32_matmul_precision("highest")
    return seen


def test_float32_matmul_precision_is_pytorchs():
    torch = pytest.importorskip("torch")
    try:
        assert precision_program(pith) == precision_program(torch)
    finally:
        torch.set_float32_matmul_precision("highest")


def test_float32_matmul_precision_changes_no_result():
    a, b = pith.randn(8, 8), pith.randn(8, 8)
    exact = (a @ b).tolist()
    pith.set_float32_matmul_precision("medium")
    try:
        assert (a @ b).tolist() == exact
    finally:
        pith.set_float32_matmul_precision("highest")
