"""pith.nn and pith.nn.functional: module registration, iteration, state_dict, repr,
copying and the functional ops, against PyTorch (when installed) and NumPy formulas."""
import copy
import math
import pickle
from collections import OrderedDict

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import pith
import pith.nn as nn
import pith.nn.functional as F
from conftest import PROPERTY, tensors, to_numpy, to_pith, torch_or_none


def fresh_torch():
    return pytest.importorskip("torch")


def np_of(t):
    return to_numpy(t).astype(np.float64)


def build_mlp(lib):
    return lib.Sequential(lib.Linear(6, 5), lib.ReLU(), lib.LayerNorm(5), lib.Linear(5, 3))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(3, 2)
        self.register_buffer("running", pith.zeros(2))
        self.register_buffer("scratch", pith.ones(2), persistent=False)
        self.scale = nn.Parameter(pith.ones(()))
        self.blocks = nn.ModuleList([nn.Linear(2, 2), nn.Tanh()])
        self.label = "net"

    def forward(self, x):
        return self.blocks[0](self.fc(x)) * self.scale + self.running


def build_torch_net(torch):
    class TorchNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(3, 2)
            self.register_buffer("running", torch.zeros(2))
            self.register_buffer("scratch", torch.ones(2), persistent=False)
            self.scale = torch.nn.Parameter(torch.ones(()))
            self.blocks = torch.nn.ModuleList([torch.nn.Linear(2, 2), torch.nn.Tanh()])
            self.label = "net"
    return TorchNet()


def torch_state_as_numpy(module):
    return OrderedDict((k, v.detach().numpy().copy()) for k, v in module.state_dict().items())


# ---- registration and iteration ------------------------------------------------------------

def test_attribute_assignment_registers_parameters_buffers_and_modules():
    net = Net()
    assert list(net._parameters) == ["scale"]
    assert list(net._buffers) == ["running", "scratch"]
    assert list(net._modules) == ["fc", "blocks"]
    assert net.__dict__["label"] == "net"
    assert isinstance(net.fc.weight, nn.Parameter)


def test_named_parameters_match_torch():
    torch = fresh_torch()
    names = [n for n, _ in Net().named_parameters()]
    assert names == [n for n, _ in build_torch_net(torch).named_parameters()]
    assert names == ["scale", "fc.weight", "fc.bias", "blocks.0.weight", "blocks.0.bias"]


def test_named_parameters_prefix_and_recurse():
    net = Net()
    assert [n for n, _ in net.named_parameters(prefix="m")][:2] == ["m.scale", "m.fc.weight"]
    assert [n for n, _ in net.named_parameters(recurse=False)] == ["scale"]
    assert len(list(net.parameters())) == 5
    assert all(isinstance(p, nn.Parameter) for p in net.parameters())


def test_buffers_include_non_persistent_ones():
    names = [n for n, _ in Net().named_buffers()]
    assert names == ["running", "scratch"]
    assert len(list(Net().buffers(recurse=False))) == 2


def test_state_dict_keys_match_torch():
    torch = fresh_torch()
    assert list(Net().state_dict()) == list(build_torch_net(torch).state_dict())


def test_state_dict_skips_non_persistent_buffers_and_none_parameters():
    net = Net()
    net.fc.register_parameter("bias", None)
    assert list(net.state_dict()) == ["scale", "running", "fc.weight", "blocks.0.weight",
                                      "blocks.0.bias"]


def test_state_dict_is_an_ordered_dict_of_plain_tensors_sharing_memory():
    lin = nn.Linear(2, 2)
    sd = lin.state_dict()
    assert type(sd) is OrderedDict
    assert type(sd["weight"]) is pith.Tensor
    sd["weight"][0, 0] = 42.0
    assert lin.weight[0, 0].item() == 42.0


def test_state_dict_keep_vars_returns_the_parameters():
    lin = nn.Linear(2, 2)
    assert lin.state_dict(keep_vars=True)["weight"] is lin.weight


def test_shared_submodules_and_parameters_are_listed_once():
    shared = nn.Linear(2, 2)
    seq = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in seq.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in seq.named_modules()] == ["", "0", "1"]
    assert len(list(seq.named_parameters(remove_duplicate=False))) == 4
    assert list(seq.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]


def test_named_modules_and_children_match_torch():
    torch = fresh_torch()
    ours, theirs = Net(), build_torch_net(torch)
    assert [n for n, _ in ours.named_modules()] == [n for n, _ in theirs.named_modules()]
    assert [n for n, _ in ours.named_children()] == [n for n, _ in theirs.named_children()]
    assert [type(m).__name__ for m in ours.modules()][1:] == \
        [type(m).__name__ for m in theirs.modules()][1:]
    assert [type(m).__name__ for m in ours.children()] == ["Linear", "ModuleList"]


def test_delattr_unregisters():
    net = Net()
    del net.scale, net.running, net.blocks
    assert list(net.state_dict()) == ["fc.weight", "fc.bias"]
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'scale'"):
        net.scale


def test_assigning_none_to_a_parameter_keeps_the_name_registered():
    lin = nn.Linear(2, 2)
    lin.bias = None
    assert "bias" in lin._parameters and lin.bias is None
    assert list(lin.state_dict()) == ["weight"]


def test_reassigning_a_buffer_keeps_it_a_buffer():
    net = Net()
    net.running = pith.ones(2)
    assert "running" in net._buffers and "running" not in net.__dict__


def test_assigning_a_plain_tensor_to_a_parameter_is_a_type_error():
    lin = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="cannot assign 'pith.Tensor' as parameter 'weight'"):
        lin.weight = pith.zeros(2, 2)


def test_assigning_a_non_module_to_a_module_name_is_a_type_error():
    net = Net()
    with pytest.raises(TypeError, match="cannot assign 'int' as child module 'fc'"):
        net.fc = 3


def test_assigning_before_init_is_an_attribute_error():
    class Early(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(pith.zeros(1))

    with pytest.raises(AttributeError, match="before Module.__init__"):
        Early()


@pytest.mark.parametrize("call,error,message", [
    (lambda m: m.register_parameter("a.b", None), KeyError, 't contain "\\."'),
    (lambda m: m.register_parameter("", None), KeyError, "empty string"),
    (lambda m: m.register_parameter("w", pith.zeros(1)), TypeError, "Parameter or None"),
    (lambda m: m.register_buffer("b", 3), TypeError, "cannot assign 'int' object to buffer"),
    (lambda m: m.register_buffer("forward", pith.zeros(1)), KeyError, "already exists"),
    (lambda m: m.add_module("m", 3), TypeError, "int is not a Module subclass"),
    (lambda m: m.add_module(1, nn.ReLU()), TypeError, "module name should be a string"),
])
def test_bad_registration_raises_like_torch(call, error, message):
    with pytest.raises(error, match=message):
        call(nn.Module())


def test_missing_attribute_is_an_attribute_error():
    with pytest.raises(AttributeError, match="'Linear' object has no attribute 'nope'"):
        nn.Linear(1, 1).nope


def test_dir_lists_registered_names():
    names = dir(Net())
    assert {"fc", "blocks", "scale", "running", "label", "forward"} <= set(names)


def test_get_submodule():
    net = Net()
    assert net.get_submodule("blocks.0") is net.blocks[0]
    assert net.get_submodule("") is net
    with pytest.raises(AttributeError):
        net.get_submodule("nope")


# ---- modes, call, apply ----------------------------------------------------------------------

def test_train_and_eval_propagate_to_children():
    net = Net()
    assert net.training and net.blocks[1].training
    assert net.eval() is net
    assert not any(m.training for m in net.modules())
    net.train()
    assert all(m.training for m in net.modules())


def test_train_with_a_non_bool_is_a_value_error():
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        nn.ReLU().train(1)


def test_call_runs_forward():
    class Twice(nn.Module):
        def forward(self, x, *, k=2):
            return x * k

    x = pith.tensor([1.0, 2.0])
    assert Twice()(x).tolist() == [2.0, 4.0]
    assert Twice()(x, k=3).tolist() == [3.0, 6.0]


def test_module_without_forward_raises_not_implemented():
    with pytest.raises(NotImplementedError, match='missing the required "forward" function'):
        nn.Module()(pith.zeros(1))


def test_apply_visits_children_before_the_parent():
    seen = []
    seq = nn.Sequential(nn.Linear(1, 1), nn.Sequential(nn.ReLU()))
    assert seq.apply(lambda m: seen.append(type(m).__name__)) is seq
    assert seen == ["Linear", "ReLU", "Sequential", "Sequential"]


def test_module_init_rejects_arguments():
    with pytest.raises(TypeError, match="takes 1 positional argument"):
        nn.Module(1)


def test_to_double_converts_parameters_and_buffers():
    net = Net().double()
    assert all(p.dtype == pith.float64 and isinstance(p, nn.Parameter)
               for p in net.parameters())
    assert net.running.dtype == pith.float64
    assert Net().to(pith.float64).fc.weight.dtype == pith.float64
    assert Net().to("cpu").fc.weight.dtype == pith.float32


def test_to_an_integer_dtype_is_a_type_error():
    with pytest.raises(TypeError, match="only accepts floating point"):
        Net().to(pith.int64)


# ---- repr ------------------------------------------------------------------------------------

def repr_cases(lib):
    return [
        lib.Linear(3, 4), lib.Linear(3, 4, bias=False), lib.ReLU(), lib.ReLU(inplace=True),
        lib.GELU(), lib.GELU(approximate="tanh"), lib.SiLU(), lib.Tanh(), lib.Sigmoid(),
        lib.Softmax(dim=1), lib.Softmax(), lib.LayerNorm(5), lib.LayerNorm([2, 3], eps=1e-3),
        lib.LayerNorm(4, elementwise_affine=False), lib.LayerNorm(4, bias=False),
        lib.Embedding(10, 3), lib.Embedding(10, 3, padding_idx=-1, max_norm=2.0),
        lib.Dropout(), lib.Dropout(0.25, inplace=True), lib.Identity(),
        lib.Sequential(lib.Linear(2, 3), lib.ReLU(), lib.Sequential(lib.Tanh())),
        lib.Sequential(OrderedDict([("fc", lib.Linear(1, 1)), ("act", lib.ReLU())])),
        lib.ModuleList([lib.Linear(2, 2), lib.Linear(2, 2), lib.Linear(2, 2), lib.ReLU(),
                        lib.ReLU()]),
        lib.ModuleList(), lib.Sequential(),
        lib.ModuleDict({"a": lib.Linear(1, 2), "b": lib.ModuleList([lib.Tanh()])}),
    ]


def test_repr_matches_torch():
    torch = fresh_torch()
    for ours, theirs in zip(repr_cases(nn), repr_cases(torch.nn)):
        assert repr(ours) == repr(theirs)


def test_repr_layout():
    # PyTorch's layout, written out so the test also runs without torch.
    model = nn.Sequential(nn.Linear(2, 3), nn.ModuleList([nn.ReLU(), nn.ReLU()]),
                          nn.LayerNorm(3))
    assert repr(model) == (
        "Sequential(\n"
        "  (0): Linear(in_features=2, out_features=3, bias=True)\n"
        "  (1): ModuleList(\n"
        "    (0-1): 2 x ReLU()\n"
        "  )\n"
        "  (2): LayerNorm((3,), eps=1e-05, elementwise_affine=True, bias=True)\n"
        ")")


def test_custom_extra_repr_is_used():
    class Scaled(nn.Module):
        def extra_repr(self):
            return "k=2"

    assert repr(Scaled()) == "Scaled(k=2)"


def test_parameter_repr():
    p = nn.Parameter(pith.tensor([1.0, 2.0]))
    assert repr(p) == "Parameter containing:\ntensor([1., 2.], requires_grad=True)"
    assert repr(nn.Parameter(pith.tensor([1.0]), requires_grad=False)) == \
        "Parameter containing:\ntensor([1.])"


# ---- Parameter -----------------------------------------------------------------------------

def test_parameter_is_a_tensor_sharing_memory_with_its_data():
    data = pith.zeros(3)
    p = nn.Parameter(data)
    assert isinstance(p, pith.Tensor) and type(p) is nn.Parameter
    with pith.no_grad():  # a leaf that requires grad is written only so, as in PyTorch
        p[0] = 5.0
    assert data[0].item() == 5.0


def test_parameter_without_data_is_empty():
    assert tuple(nn.Parameter().shape) == (0,)


def test_parameter_requires_grad_as_pytorchs():
    assert nn.Parameter(pith.zeros(1)).requires_grad is True
    assert nn.Parameter(pith.zeros(1), requires_grad=False).requires_grad is False
    p = nn.Parameter(pith.zeros(1) * 2)
    assert p.is_leaf and p.grad_fn is None


def test_parameter_of_a_non_tensor_is_a_type_error():
    with pytest.raises(TypeError):
        nn.Parameter([1.0, 2.0])


def test_in_place_ops_on_a_parameter_return_the_parameter():
    p = nn.Parameter(pith.zeros(2))
    with pith.no_grad():
        assert p.add_(1) is p
    with pytest.raises(RuntimeError, match="a leaf Variable that requires grad"):
        p.add_(1)


# ---- init ------------------------------------------------------------------------------------

def test_linear_init_is_uniform_within_one_over_sqrt_fan_in():
    pith.manual_seed(0)
    lin = nn.Linear(400, 300)
    bound = 1 / math.sqrt(400)
    for t in (lin.weight, lin.bias):
        values = np_of(t)
        assert values.min() >= -bound and values.max() <= bound
    w = np_of(lin.weight)
    assert abs(w.mean()) < 0.02 * bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound
    assert lin.weight.dtype == pith.float32


def test_linear_dtype_argument():
    lin = nn.Linear(2, 3, dtype=pith.float64)
    assert lin.weight.dtype == lin.bias.dtype == pith.float64


def test_layer_norm_init_is_ones_and_zeros():
    ln = nn.LayerNorm((2, 3))
    assert np_of(ln.weight).tolist() == [[1.0] * 3] * 2
    assert np_of(ln.bias).tolist() == [[0.0] * 3] * 2
    assert nn.LayerNorm(3, elementwise_affine=False).weight is None


def test_embedding_init_is_standard_normal_with_a_zero_padding_row():
    pith.manual_seed(1)
    emb = nn.Embedding(200, 100, padding_idx=3)
    w = np_of(emb.weight)
    assert (w[3] == 0).all()
    rest = np.delete(w, 3, axis=0)
    assert abs(rest.mean()) < 0.04 and abs(rest.std() - 1) < 0.04


def test_same_seed_gives_the_same_init():
    pith.manual_seed(7)
    a = np_of(nn.Linear(4, 4).weight)
    pith.manual_seed(7)
    b = np_of(nn.Linear(4, 4).weight)
    np.testing.assert_array_equal(a, b)


# ---- load_state_dict -------------------------------------------------------------------------

def test_load_state_dict_copies_in_place():
    src, dst = build_mlp(nn), build_mlp(nn)
    weight = dst[0].weight
    result = dst.load_state_dict(src.state_dict())
    assert repr(result) == "<All keys matched successfully>"
    assert result.missing_keys == [] and result.unexpected_keys == []
    assert dst[0].weight is weight
    for (k, a), (_, b) in zip(src.state_dict().items(), dst.state_dict().items()):
        np.testing.assert_array_equal(np_of(a), np_of(b), err_msg=k)
    # A copy, not an alias: writing to the source leaves the destination alone.
    with pith.no_grad():
        src[0].weight[0, 0] = 123.0
    assert dst[0].weight[0, 0].item() != 123.0


def test_load_state_dict_from_numpy_arrays():
    model = build_mlp(nn)
    rng = np.random.default_rng(0)
    arrays = {k: rng.standard_normal(tuple(v.shape)).astype(np.float32)
              for k, v in model.state_dict().items()}
    model.load_state_dict(arrays)
    for k, v in model.state_dict().items():
        np.testing.assert_array_equal(to_numpy(v), arrays[k])


def test_load_state_dict_converts_the_dtype():
    lin = nn.Linear(2, 2)
    lin.load_state_dict({"weight": np.full((2, 2), 0.5), "bias": np.arange(2)})
    assert lin.weight.dtype == pith.float32
    assert to_numpy(lin.weight).tolist() == [[0.5, 0.5], [0.5, 0.5]]
    assert to_numpy(lin.bias).tolist() == [0.0, 1.0]


def test_load_state_dict_from_torch_tensors():
    torch = fresh_torch()
    theirs = build_mlp(torch.nn)
    ours = build_mlp(nn)
    ours.load_state_dict(theirs.state_dict())
    for k, v in theirs.state_dict().items():
        np.testing.assert_array_equal(to_numpy(ours.state_dict()[k]), v.numpy(), err_msg=k)


def test_load_state_dict_from_read_only_and_non_contiguous_arrays_warns_nothing():
    lin = nn.Linear(3, 2)
    bias = np.frombuffer(np.array([1.0, 2.0], np.float32).tobytes(), np.float32)
    weight = np.arange(6, dtype=np.float32).reshape(3, 2).T
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        lin.load_state_dict({"weight": weight, "bias": bias})
    assert to_numpy(lin.weight).tolist() == weight.tolist()
    assert to_numpy(lin.bias).tolist() == [1.0, 2.0]


def test_load_state_dict_from_torch_parameters():
    torch = fresh_torch()
    theirs = torch.nn.Linear(3, 2)
    ours = nn.Linear(3, 2)
    ours.load_state_dict(theirs.state_dict(keep_vars=True))
    np.testing.assert_array_equal(to_numpy(ours.weight), theirs.weight.detach().numpy())


def test_load_state_dict_strict_missing_and_unexpected_keys_message_matches_torch():
    sd = {"weight": np.zeros((2, 3), np.float32), "extra": np.zeros(1, np.float32)}
    with pytest.raises(RuntimeError) as ours:
        nn.Linear(3, 2).load_state_dict(sd)
    assert str(ours.value) == (
        'Error(s) in loading state_dict for Linear:\n'
        '\tMissing key(s) in state_dict: "bias". \n'
        '\tUnexpected key(s) in state_dict: "extra". ')
    torch = torch_or_none()
    if torch is not None:
        with pytest.raises(RuntimeError) as theirs:
            torch.nn.Linear(3, 2).load_state_dict({k: torch.from_numpy(v)
                                                   for k, v in sd.items()})
        assert str(ours.value) == str(theirs.value)


def test_load_state_dict_non_strict_reports_keys():
    lin = nn.Linear(3, 2)
    result = lin.load_state_dict({"weight": pith.ones(2, 3), "foo.bar": pith.ones(1)},
                                 strict=False)
    assert result.missing_keys == ["bias"] and result.unexpected_keys == ["foo.bar"]
    assert repr(result) == ("_IncompatibleKeys(missing_keys=['bias'], "
                            "unexpected_keys=['foo.bar'])")
    assert to_numpy(lin.weight).tolist() == [[1.0] * 3] * 2


def test_load_state_dict_nested_unexpected_key():
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "1.weight"'):
        sd = build_mlp(nn).state_dict()
        sd["1.weight"] = pith.ones(1)
        build_mlp(nn).load_state_dict(sd)


def test_load_state_dict_shape_mismatch_is_a_runtime_error():
    with pytest.raises(RuntimeError) as e:
        nn.Linear(3, 2).load_state_dict({"weight": pith.zeros(3, 2), "bias": pith.zeros(2)})
    assert str(e.value) == (
        "Error(s) in loading state_dict for Linear:\n\tsize mismatch for weight: copying a "
        "param with shape pith.Size([3, 2]) from checkpoint, the shape in current model is "
        "pith.Size([2, 3]).")


def test_load_state_dict_rejects_non_tensor_values():
    with pytest.raises(RuntimeError, match='While copying the parameter named "bias"'):
        nn.Linear(1, 2).load_state_dict({"weight": pith.zeros(2, 1), "bias": "nope"})


def test_load_state_dict_requires_a_mapping():
    with pytest.raises(TypeError, match="Expected state_dict to be dict-like"):
        nn.Linear(1, 1).load_state_dict([("weight", pith.zeros(1, 1))])


def test_load_state_dict_fills_buffers():
    net = Net()
    sd = net.state_dict()
    sd["running"] = pith.tensor([3.0, 4.0])
    net.load_state_dict(sd)
    assert net.running.tolist() == [3.0, 4.0]


def test_load_state_dict_accepts_a_1_element_value_for_a_0_dim_parameter():
    net = Net()
    sd = net.state_dict()
    sd["scale"] = pith.tensor([2.5])
    net.load_state_dict(sd)
    assert net.scale.item() == 2.5 and net.scale.dim() == 0


# ---- models against torch --------------------------------------------------------------------

def torch_model_with_pith_twin(build):
    torch = fresh_torch()
    torch.manual_seed(0)
    theirs = build(torch.nn)
    ours = build(nn)
    ours.load_state_dict(theirs.state_dict())
    return torch, theirs, ours


@pytest.mark.parametrize("build", [
    build_mlp,
    lambda lib: lib.Sequential(lib.Linear(8, 16), lib.GELU(), lib.Linear(16, 16),
                               lib.GELU(approximate="tanh"), lib.LayerNorm(16), lib.SiLU(),
                               lib.Linear(16, 4), lib.Tanh(), lib.Sigmoid(),
                               lib.Softmax(dim=-1)),
    lambda lib: lib.Sequential(lib.Linear(8, 8, bias=False), lib.Dropout(0.5),
                               lib.LayerNorm(8, elementwise_affine=False), lib.Identity()),
], ids=["mlp", "activations", "no-affine"])
def test_model_with_torch_weights_gives_torch_output(build):
    torch, theirs, ours = torch_model_with_pith_twin(build)
    theirs.eval()
    ours.eval()
    x = np.random.default_rng(0).standard_normal((5, 3, theirs[0].in_features))
    x = x.astype(np.float32)
    expected = theirs(torch.from_numpy(x)).detach().numpy()
    got = to_numpy(ours(to_pith(x)))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)


def test_embedding_with_torch_weights_gives_torch_output():
    torch, theirs, ours = torch_model_with_pith_twin(
        lambda lib: lib.Embedding(10, 4, padding_idx=0))
    idx = np.array([[0, 3, 9], [2, 2, 1]])
    expected = theirs(torch.from_numpy(idx)).detach().numpy()
    np.testing.assert_array_equal(to_numpy(ours(to_pith(idx))), expected)


# ---- copying -----------------------------------------------------------------------------------

def assert_same_state(a, b):
    sa, sb = a.state_dict(), b.state_dict()
    assert list(sa) == list(sb)
    for k in sa:
        np.testing.assert_array_equal(np_of(sa[k]), np_of(sb[k]), err_msg=k)


def test_deepcopy_makes_an_independent_module():
    net = Net()
    clone = copy.deepcopy(net)
    assert repr(clone) == repr(net) and clone.label == "net"
    assert_same_state(net, clone)
    assert type(clone.fc.weight) is nn.Parameter and clone.fc.weight is not net.fc.weight
    with pith.no_grad():
        clone.fc.weight[0, 0] = 99.0
    assert net.fc.weight[0, 0].item() != 99.0
    assert list(clone._non_persistent_buffers_set) == ["scratch"]


def test_deepcopy_keeps_shared_parameters_shared():
    shared = nn.Linear(2, 2)
    clone = copy.deepcopy(nn.Sequential(shared, shared))
    assert clone[0] is clone[1]


def test_copy_shares_the_parameters():
    net = Net()
    shallow = copy.copy(net)
    assert shallow is not net and shallow.fc is net.fc and shallow.scale is net.scale


def test_pickle_round_trip():
    net = Net().eval()
    back = pickle.loads(pickle.dumps(net))
    assert type(back) is Net and repr(back) == repr(net)
    assert not back.training and not back.fc.training
    assert type(back.scale) is nn.Parameter
    assert_same_state(net, back)
    assert to_numpy(back.scratch).tolist() == [1.0, 1.0]
    x = pith.rand(4, 3)
    np.testing.assert_array_equal(to_numpy(back(x)), to_numpy(net(x)))


def test_pickle_round_trip_of_a_parameter():
    p = nn.Parameter(pith.tensor([[1.0, 2.0]]))
    back = pickle.loads(pickle.dumps(p))
    assert type(back) is nn.Parameter and back.tolist() == [[1.0, 2.0]]


# ---- containers -------------------------------------------------------------------------------

def test_sequential_indexing_slicing_and_iteration():
    layers = [nn.Linear(1, 1), nn.ReLU(), nn.Tanh()]
    seq = nn.Sequential(*layers)
    assert len(seq) == 3 and list(seq) == layers
    assert seq[0] is layers[0] and seq[-1] is layers[2]
    sliced = seq[1:]
    assert type(sliced) is nn.Sequential and list(sliced) == layers[1:]
    assert list(sliced._modules) == ["1", "2"]
    with pytest.raises(IndexError, match="index 3 is out of range"):
        seq[3]


def test_sequential_append_insert_delete_and_setitem():
    seq = nn.Sequential(nn.ReLU())
    tanh = nn.Tanh()
    assert seq.append(tanh) is seq and seq[1] is tanh
    seq.insert(0, nn.Identity())
    assert [type(m).__name__ for m in seq] == ["Identity", "ReLU", "Tanh"]
    del seq[0]
    assert list(seq._modules) == ["0", "1"] and seq[1] is tanh
    seq[0] = nn.Sigmoid()
    assert type(seq[0]) is nn.Sigmoid
    assert len(seq + nn.Sequential(nn.ReLU())) == 3


def test_sequential_with_an_ordered_dict_keeps_the_names():
    seq = nn.Sequential(OrderedDict([("fc", nn.Linear(2, 2)), ("act", nn.ReLU())]))
    assert list(seq.state_dict()) == ["fc.weight", "fc.bias"] and seq.act is seq[1]


def test_sequential_forward_chains_the_modules():
    seq = nn.Sequential(nn.ReLU(), nn.Tanh())
    x = pith.tensor([-1.0, 0.5])
    np.testing.assert_allclose(to_numpy(seq(x)), np.tanh([0.0, 0.5]).astype(np.float32),
                               rtol=1e-6)


def test_module_list():
    ml = nn.ModuleList([nn.ReLU(), nn.Tanh()])
    assert len(ml) == 2 and type(ml[-1]) is nn.Tanh
    ml.append(nn.Sigmoid())
    ml.extend([nn.Identity()])
    ml += [nn.SiLU()]
    assert [type(m).__name__ for m in ml] == ["ReLU", "Tanh", "Sigmoid", "Identity", "SiLU"]
    assert type(ml[1:3]) is nn.ModuleList and len(ml[1:3]) == 2
    del ml[0]
    assert list(ml._modules) == ["0", "1", "2", "3"]
    with pytest.raises(IndexError, match="index 4 is out of range"):
        ml[4]
    with pytest.raises(TypeError, match="should be called with an iterable"):
        ml.extend(3)
    with pytest.raises(NotImplementedError):
        ml(pith.zeros(1))


def test_module_dict():
    md = nn.ModuleDict({"a": nn.ReLU()})
    md["b"] = nn.Linear(1, 1)
    md.update([("c", nn.Tanh())])
    assert list(md) == ["a", "b", "c"] and "b" in md and len(md) == 3
    assert list(md.keys()) == ["a", "b", "c"]
    assert [type(v).__name__ for v in md.values()] == ["ReLU", "Linear", "Tanh"]
    assert type(md.pop("a")) is nn.ReLU and list(md) == ["b", "c"]
    assert list(md.state_dict()) == ["b.weight", "b.bias"]
    with pytest.raises(ValueError, match="has length 1; 2 is required"):
        md.update([("d",)])


# ---- functional ops against NumPy ----------------------------------------------------------

def np_gelu(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3)))
    erf = np.vectorize(math.erf, otypes=[np.float64])
    return 0.5 * x * (1 + erf(x / math.sqrt(2)))


def np_softmax(x, dim):
    e = np.exp(x - x.max(axis=dim, keepdims=True))
    return e / e.sum(axis=dim, keepdims=True)


def np_log_softmax(x, dim):
    shifted = x - x.max(axis=dim, keepdims=True)
    return shifted - np.log(np.exp(shifted).sum(axis=dim, keepdims=True))


UNARY = {
    "relu": (F.relu, lambda x: np.maximum(x, 0)),
    "gelu": (F.gelu, np_gelu),
    "gelu_tanh": (lambda t: F.gelu(t, approximate="tanh"), lambda x: np_gelu(x, "tanh")),
    "silu": (F.silu, lambda x: x / (1 + np.exp(-x))),
    "tanh": (F.tanh, np.tanh),
    "sigmoid": (F.sigmoid, lambda x: 1 / (1 + np.exp(-x))),
}


@pytest.mark.parametrize("name", sorted(UNARY))
@PROPERTY
@given(data=st.data())
def test_activation_matches_numpy(name, data):
    shape = data.draw(st.lists(st.integers(0, 4), max_size=3).map(tuple))
    t, a = data.draw(tensors("float32", shape, lo=-8, hi=8))
    ours, reference = UNARY[name]
    out = ours(t)
    assert out.dtype == pith.float32 and tuple(out.shape) == shape
    np.testing.assert_allclose(np_of(out), reference(a.astype(np.float64)), rtol=2e-5,
                               atol=2e-6)


def test_inplace_activations_write_the_input():
    x = pith.tensor([-1.0, 2.0])
    assert F.relu(x, inplace=True) is x and x.tolist() == [0.0, 2.0]
    y = pith.tensor([0.0])
    assert F.silu(y, inplace=True) is y
    assert nn.ReLU(inplace=True)(x) is x


def test_gelu_with_a_bad_approximation_is_a_runtime_error():
    with pytest.raises(RuntimeError, match="approximate argument must be either none or tanh"):
        F.gelu(pith.zeros(2), approximate="fast")


@PROPERTY
@given(data=st.data(), log=st.booleans())
def test_softmax_matches_numpy(data, log):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    dim = data.draw(st.integers(-len(shape), len(shape) - 1))
    t, a = data.draw(tensors("float32", shape, lo=-20, hi=20))
    ours, reference = (F.log_softmax, np_log_softmax) if log else (F.softmax, np_softmax)
    np.testing.assert_allclose(np_of(ours(t, dim)), reference(a.astype(np.float64), dim),
                               rtol=1e-5, atol=1e-5)


def test_softmax_dtype_argument():
    out = F.softmax(pith.tensor([1.0, 2.0]), 0, dtype=pith.float64)
    assert out.dtype == pith.float64
    np.testing.assert_allclose(to_numpy(out), np_softmax(np.array([1.0, 2.0]), 0), rtol=1e-12)
    assert F.log_softmax(pith.tensor([1.0]), 0, dtype=pith.float64).dtype == pith.float64


def test_softmax_without_dim_warns_and_picks_torch_default():
    x = pith.rand(2, 3)
    with pytest.warns(UserWarning, match="Implicit dimension choice for softmax"):
        out = F.softmax(x)
    np.testing.assert_allclose(np_of(out), np_softmax(np_of(x), 1), rtol=1e-5)
    with pytest.warns(UserWarning):
        assert nn.Softmax()(pith.rand(3, 2, 2)).shape == (3, 2, 2)


@PROPERTY
@given(data=st.data(), affine=st.booleans())
def test_layer_norm_matches_numpy(data, affine):
    shape = data.draw(st.lists(st.integers(1, 4), min_size=1, max_size=3).map(tuple))
    k = data.draw(st.integers(1, len(shape)))
    normalized = shape[len(shape) - k:]
    t, a = data.draw(tensors("float32", shape, lo=-10, hi=10))
    a = a.astype(np.float64)
    axes = tuple(range(len(shape) - k, len(shape)))
    expected = (a - a.mean(axis=axes, keepdims=True)) / np.sqrt(
        a.var(axis=axes, keepdims=True) + 1e-5)
    weight = bias = None
    if affine:
        w = np.linspace(0.5, 1.5, int(np.prod(normalized))).reshape(normalized)
        b = np.linspace(-1, 1, int(np.prod(normalized))).reshape(normalized)
        weight, bias = to_pith(w.astype(np.float32)), to_pith(b.astype(np.float32))
        expected = expected * w.astype(np.float32) + b.astype(np.float32)
    out = F.layer_norm(t, normalized, weight, bias)
    np.testing.assert_allclose(np_of(out), expected, rtol=1e-4, atol=1e-4)


@PROPERTY
@given(data=st.data(), with_bias=st.booleans())
def test_linear_matches_numpy(data, with_bias):
    lead = data.draw(st.lists(st.integers(0, 3), max_size=2).map(tuple))
    n_in, n_out = data.draw(st.integers(1, 5)), data.draw(st.integers(1, 5))
    x, a = data.draw(tensors("float32", lead + (n_in,), lo=-4, hi=4))
    w, wa = data.draw(tensors("float32", (n_out, n_in), lo=-4, hi=4))
    expected = a.astype(np.float64) @ wa.astype(np.float64).T
    bias = None
    if with_bias:
        bias, ba = data.draw(tensors("float32", (n_out,), lo=-4, hi=4))
        expected = expected + ba
    out = F.linear(x, w, bias)
    assert tuple(out.shape) == lead + (n_out,)
    np.testing.assert_allclose(np_of(out), expected, rtol=1e-5, atol=1e-4)


def test_embedding_picks_rows():
    weight = to_pith(np.arange(12, dtype=np.float32).reshape(4, 3))
    out = F.embedding(pith.tensor([[3, 0], [1, 1]]), weight)
    np.testing.assert_array_equal(to_numpy(out), np.arange(12).reshape(4, 3)[[[3, 0], [1, 1]]])


def test_embedding_padding_idx_out_of_range_is_an_assertion_error():
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        F.embedding(pith.tensor([0]), pith.zeros(4, 2), padding_idx=4)
    with pytest.raises(AssertionError, match="Padding_idx must be within num_embeddings"):
        nn.Embedding(4, 2, padding_idx=-5)


def test_embedding_max_norm_renormalises_the_used_rows_like_torch():
    w = np.array([[3.0, 4.0], [0.3, 0.4], [6.0, 8.0]], dtype=np.float32)
    weight = to_pith(w)
    out = F.embedding(pith.tensor([0, 1, 0]), weight, max_norm=1.0)
    # Row 0 (norm 5) is scaled to norm 1 in place; row 1 (norm 0.5) and unused row 2 stay.
    expected = w.copy()
    expected[0] *= 1.0 / (5.0 + 1e-7)
    np.testing.assert_allclose(to_numpy(weight), expected, rtol=1e-6)
    np.testing.assert_allclose(to_numpy(out), expected[[0, 1, 0]], rtol=1e-6)
    torch = torch_or_none()
    if torch is not None:
        tw = torch.from_numpy(w.copy())
        torch.nn.functional.embedding(torch.tensor([0, 1, 0]), tw, max_norm=1.0)
        np.testing.assert_allclose(to_numpy(weight), tw.numpy(), rtol=1e-6)


# ---- functional ops against torch -------------------------------------------------------------

@pytest.mark.parametrize("name,call", [
    ("relu", lambda F_, x: F_.relu(x)),
    ("gelu", lambda F_, x: F_.gelu(x)),
    ("gelu_tanh", lambda F_, x: F_.gelu(x, approximate="tanh")),
    ("silu", lambda F_, x: F_.silu(x)),
    ("tanh", lambda F_, x: F_.tanh(x)),
    ("sigmoid", lambda F_, x: F_.sigmoid(x)),
    ("softmax", lambda F_, x: F_.softmax(x, dim=1)),
    ("log_softmax", lambda F_, x: F_.log_softmax(x, -1)),
    ("layer_norm", lambda F_, x: F_.layer_norm(x, (4, 5), eps=1e-3)),
])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_functional_matches_torch(name, call, dtype):
    torch = fresh_torch()
    a = np.random.default_rng(3).standard_normal((3, 4, 5)).astype(dtype) * 3
    expected = call(torch.nn.functional, torch.from_numpy(a)).numpy()
    got = call(F, to_pith(a))
    assert str(got.dtype) == f"pith.{dtype}"
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(to_numpy(got), expected, rtol=tol, atol=tol)


# ---- dropout ----------------------------------------------------------------------------------

@pytest.mark.parametrize("p", [-0.1, 1.5])
def test_dropout_probability_outside_0_1_is_a_value_error(p):
    message = f"dropout probability has to be between 0 and 1, but got {p}"
    with pytest.raises(ValueError, match=message):
        F.dropout(pith.ones(2), p)
    with pytest.raises(ValueError, match=message):
        nn.Dropout(p)


def test_dropout_zeroes_about_p_and_scales_the_rest():
    pith.manual_seed(0)
    x = pith.full((200000,), 3.0)
    out = np_of(F.dropout(x, 0.3))
    zeros = (out == 0).mean()
    assert abs(zeros - 0.3) < 0.005
    np.testing.assert_allclose(out[out != 0], 3.0 / 0.7, rtol=1e-6)
    assert to_numpy(x).max() == 3.0  # not in place


def test_dropout_same_seed_same_mask():
    x = pith.ones(1000)
    pith.manual_seed(5)
    a = np_of(F.dropout(x, 0.5))
    pith.manual_seed(5)
    b = np_of(F.dropout(x, 0.5))
    c = np_of(F.dropout(x, 0.5))
    np.testing.assert_array_equal(a, b)
    assert (a != c).any()


def test_dropout_is_the_identity_in_eval_mode_and_without_training():
    x = pith.rand(10)
    drop = nn.Dropout(0.9)
    assert drop.eval()(x) is x
    assert F.dropout(x, 0.5, training=False) is x
    assert F.dropout(x, 0.0) is x


def test_dropout_p_one_gives_zeros():
    assert F.dropout(pith.ones(3), 1.0).tolist() == [0.0, 0.0, 0.0]


def test_dropout_inplace_writes_the_input():
    pith.manual_seed(1)
    x = pith.ones(1000)
    out = F.dropout(x, 0.5, inplace=True)
    assert out is x
    values = set(np_of(x).tolist())
    assert values == {0.0, 2.0}


# ---- cross_entropy ----------------------------------------------------------------------------

def np_cross_entropy(logits, target, weight, ignore_index, reduction):
    """The class-index cross entropy without label smoothing, class dim 1 (or 0 for 1-D)."""
    class_dim = 0 if logits.ndim == 1 else 1
    logp = np_log_softmax(logits.astype(np.float64), class_dim)
    ignored = target == ignore_index
    safe = np.where(ignored, 0, target)
    picked = np.take_along_axis(logp, np.expand_dims(safe, class_dim), class_dim)
    picked = np.squeeze(picked, class_dim)
    w = np.ones(logits.shape[class_dim]) if weight is None else weight.astype(np.float64)
    wt = np.where(ignored, 0.0, w[safe])
    losses = -picked * wt
    if reduction == "none":
        return losses
    if reduction == "sum":
        return losses.sum()
    with np.errstate(invalid="ignore"):  # every target ignored: 0/0 is NaN, as in PyTorch
        return losses.sum() / wt.sum()


@st.composite
def cross_entropy_cases(draw):
    n = draw(st.integers(1, 4))
    c = draw(st.integers(1, 5))
    extra = tuple(draw(st.lists(st.integers(1, 3), max_size=2)))
    rank1 = draw(st.booleans()) and not extra
    shape = (c,) if rank1 else (n, c) + extra
    rng = np.random.default_rng(draw(st.integers(0, 2**31)))
    logits = (rng.standard_normal(shape) * 3).astype(np.float32)
    target_shape = () if rank1 else (n,) + extra
    target = rng.integers(0, c, target_shape)
    ignore_index = draw(st.sampled_from([-100, 0, c - 1]))
    if draw(st.booleans()) and target.size > 1:
        target.reshape(-1)[0] = ignore_index
    weight = rng.uniform(0.5, 2.0, c).astype(np.float32) if draw(st.booleans()) else None
    reduction = draw(st.sampled_from(["mean", "sum", "none"]))
    return logits, target, weight, ignore_index, reduction


def call_cross_entropy(logits, target, weight, ignore_index, reduction, smoothing=0.0):
    return F.cross_entropy(to_pith(logits), to_pith(target, "int64"),
                           weight=None if weight is None else to_pith(weight),
                           ignore_index=ignore_index, reduction=reduction,
                           label_smoothing=smoothing)


@PROPERTY
@given(case=cross_entropy_cases())
def test_cross_entropy_matches_numpy(case):
    logits, target, weight, ignore_index, reduction = case
    got = call_cross_entropy(*case)
    expected = np_cross_entropy(logits, target, weight, ignore_index, reduction)
    assert got.dtype == pith.float32 and tuple(got.shape) == np.shape(expected)
    np.testing.assert_allclose(np_of(got), expected, rtol=1e-5, atol=1e-5)


@PROPERTY
@given(case=cross_entropy_cases(), smoothing=st.sampled_from([0.0, 0.1, 1.0]))
def test_cross_entropy_matches_torch(case, smoothing):
    torch = fresh_torch()
    logits, target, weight, ignore_index, reduction = case
    expected = torch.nn.functional.cross_entropy(
        torch.from_numpy(logits), torch.from_numpy(target),
        weight=None if weight is None else torch.from_numpy(weight),
        ignore_index=ignore_index, reduction=reduction, label_smoothing=smoothing)
    got = call_cross_entropy(*case, smoothing=smoothing)
    assert tuple(got.shape) == tuple(expected.shape)
    np.testing.assert_allclose(to_numpy(got), expected.numpy(), rtol=1e-5, atol=1e-5)


@PROPERTY
@given(data=st.data(), smoothing=st.sampled_from([0.0, 0.2]),
       reduction=st.sampled_from(["mean", "sum", "none"]), weighted=st.booleans())
def test_cross_entropy_with_class_probabilities_matches_torch(data, smoothing, reduction,
                                                              weighted):
    torch = fresh_torch()
    shape = data.draw(st.sampled_from([(4,), (3, 4), (2, 3, 2)]))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**31)))
    logits = rng.standard_normal(shape).astype(np.float32)
    probs = np_softmax(rng.standard_normal(shape), 0 if len(shape) == 1 else 1)
    probs = probs.astype(np.float32)
    c = shape[0] if len(shape) == 1 else shape[1]
    weight = rng.uniform(0.5, 2, c).astype(np.float32) if weighted else None
    expected = torch.nn.functional.cross_entropy(
        torch.from_numpy(logits), torch.from_numpy(probs), reduction=reduction,
        weight=None if weight is None else torch.from_numpy(weight), label_smoothing=smoothing)
    got = F.cross_entropy(to_pith(logits), to_pith(probs), reduction=reduction,
                          weight=None if weight is None else to_pith(weight),
                          label_smoothing=smoothing)
    np.testing.assert_allclose(to_numpy(got), expected.numpy(), rtol=1e-5, atol=1e-6)


def test_cross_entropy_with_every_target_ignored_is_nan_for_mean():
    logits = pith.rand(2, 3)
    target = pith.tensor([-100, -100])
    assert math.isnan(F.cross_entropy(logits, target).item())
    assert F.cross_entropy(logits, target, reduction="sum").item() == 0.0


def test_cross_entropy_accepts_uint8_targets():
    logits = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)
    got = F.cross_entropy(to_pith(logits), pith.tensor([0, 3, 1], dtype=pith.uint8))
    expected = np_cross_entropy(logits, np.array([0, 3, 1]), None, -100, "mean")
    np.testing.assert_allclose(got.item(), expected, rtol=1e-5)


def test_cross_entropy_legacy_reduce_arguments():
    logits, target = pith.rand(3, 4), pith.tensor([0, 1, 2])
    total = F.cross_entropy(logits, target, reduction="sum").item()
    with pytest.warns(UserWarning, match="please use reduction='sum' instead"):
        assert F.cross_entropy(logits, target, size_average=False).item() == total
    with pytest.warns(UserWarning, match="please use reduction='none' instead"):
        assert tuple(F.cross_entropy(logits, target, reduce=False).shape) == (3,)


@pytest.mark.parametrize("call,error,message", [
    (lambda: F.cross_entropy(pith.rand(3, 4), pith.tensor([0, 1, 5])), IndexError,
     "Target 5 is out of bounds."),
    (lambda: F.cross_entropy(pith.rand(3, 4), pith.tensor([0, 1, -1])), IndexError,
     "Target -1 is out of bounds."),
    (lambda: F.cross_entropy(pith.rand(3, 4), pith.tensor([0, 1, 2], dtype=pith.int32)),
     RuntimeError, "expected target dtype to be Long or Byte, but got Int"),
    (lambda: F.cross_entropy(pith.rand(3, 4), pith.tensor([0, 1])), ValueError,
     "Expected input batch_size \\(3\\) to match target batch_size \\(2\\)."),
    (lambda: F.cross_entropy(pith.rand(3, 4), pith.tensor([0, 1, 2]), reduction="avg"),
     ValueError, "avg is not a valid value for reduction"),
    (lambda: F.cross_entropy(pith.rand(3, 4), pith.tensor([0, 1, 2]), weight=pith.ones(3)),
     RuntimeError, "weight tensor should be defined either for all 4 classes or no classes"),
    (lambda: F.cross_entropy(pith.rand(3, 4), pith.tensor([0, 1, 2]), label_smoothing=1.5),
     RuntimeError, "label_smoothing must be between 0.0 and 1.0. Got: 1.5"),
    (lambda: F.cross_entropy(pith.rand(3, 4, 5), pith.zeros((3, 6), dtype=pith.int64)),
     RuntimeError, "Expected target size \\[3, 5\\], got \\[3, 6\\]"),
    (lambda: F.cross_entropy(pith.rand(3, 4), pith.zeros((3, 4), dtype=pith.int64)),
     RuntimeError, "Expected floating point type for target with class probabilities"),
])
def test_cross_entropy_errors_match_torch(call, error, message):
    with pytest.raises(error, match=message):
        call()
