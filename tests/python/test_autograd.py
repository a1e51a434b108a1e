"""Autograd from Python against PyTorch: the same program runs on pith and on torch, and
gradients, node names, flags and error messages must agree. docs/autograd.md describes
what is tested here (and what is not there yet)."""
import gc
import threading

import numpy as np
import pytest

import pith

torch = pytest.importorskip("torch")


def values(t):
    return None if t is None else t.detach().tolist() if hasattr(t, "detach") else t


def same(program):
    """Runs program(lib) with pith and torch; their results (nested tensors as lists) or
    their exceptions (type and message) must be equal."""
    results = []
    for lib in (pith, torch):
        try:
            results.append(("ok", _plain(program(lib))))
        except Exception as e:  # compared below, not swallowed
            results.append((type(e).__name__, str(e)))
    assert results[0] == results[1]
    return results[0]


def _plain(obj):
    if isinstance(obj, (tuple, list)):
        return [_plain(o) for o in obj]
    if hasattr(obj, "tolist"):
        return [round(v, 5) for v in _flat(obj.detach().tolist())]
    return obj


def _flat(v):
    if isinstance(v, list):
        return [x for item in v for x in _flat(item)]
    return [v]


def leaf(lib, data, dtype="float64"):
    return lib.tensor(data, dtype=getattr(lib, dtype), requires_grad=True)


# ---- basic graphs ------------------------------------------------------------------------

def test_chain_diamond_and_repeated_inputs():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        a, b = x * 2, x.exp()
        y = a * b + x * x
        y.sum().backward()
        return x.grad, type(y.grad_fn).__name__, y.grad_fn.name()
    assert same(program)[0] == "ok"


def test_broadcast_and_dtype_reduction():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0], "float32")
        m = leaf(lib, [[1.0], [2.0]])
        y = (x * m).sum()
        y.backward()
        return x.grad, m.grad, x.grad.dtype == x.dtype
    assert same(program)[0] == "ok"


def test_grad_with_inputs_create_graph_and_allow_unused():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        w = leaf(lib, [3.0, 4.0])
        y = (x * x * w).sum()
        gx, = lib.autograd.grad(y, x, create_graph=True)
        ggx, = lib.autograd.grad(gx.sum(), x)
        unused = lib.autograd.grad(y, [w, leaf(lib, [0.0])], allow_unused=True,
                                   retain_graph=True)
        return gx, ggx, unused[0], unused[1], x.grad
    assert same(program)[0] == "ok"


def test_backward_inputs_accumulates_only_there():
    def program(lib):
        x = leaf(lib, [1.0])
        w = leaf(lib, [2.0])
        (x * w).sum().backward(inputs=[x])
        return x.grad, w.grad
    assert same(program)[0] == "ok"


@pytest.mark.parametrize("program", [
    lambda lib: lib.ones(2).sum().backward(),
    lambda lib: leaf(lib, [1.0, 2.0]).backward(),
    lambda lib: (leaf(lib, [1.0, 2.0]) * 2).backward(lib.ones(3)),
    lambda lib: lib.autograd.grad((leaf(lib, [1.0]) * 2).sum(), leaf(lib, [1.0])),
    lambda lib: (leaf(lib, [1.0]) * 2).requires_grad_(False),
    lambda lib: lib.tensor([1, 2]).requires_grad_(),
    lambda lib: lib.zeros(2, dtype=lib.int64, requires_grad=True),
])
def test_errors_are_pytorchs(program):
    kind, message = same(program)
    assert kind == "RuntimeError", message


def test_sum_without_dim_is_sumbackward0():
    name = (pith.ones(2, requires_grad=True) * 1).sum().grad_fn.name()
    assert name == "SumBackward0"  # only a string in the traceback: no tensor outlives it


def test_second_backward_needs_retain_graph():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = (x * x).sum()
        y.backward(retain_graph=True)
        y.backward()
        first = x.grad.clone()
        y.backward()
        return first
    kind, message = same(program)
    assert kind == "RuntimeError" and "second time" in message


# ---- in-place and views ------------------------------------------------------------------

@pytest.mark.parametrize("name", ["leaf", "view_of_leaf", "saved_then_modified",
                                  "result_based", "no_grad_view", "view_rewrites_base",
                                  "setitem_into_plain", "base_write_seen_by_view",
                                  "saved_nothing", "unbind_output", "split_output",
                                  "chunk_output", "split_sizes_output", "unbind_in_no_grad"])
def test_in_place_rules(name):
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0, 4.0])
        if name == "leaf":
            x.add_(1)
        elif name == "view_of_leaf":
            x[0].mul_(2)
        elif name == "saved_then_modified":
            y = x * 1
            z = y * y
            y.add_(1)
            z.sum().backward()
        elif name == "result_based":
            y = x.exp()
            y.add_(1)
            y.sum().backward()
        elif name == "no_grad_view":
            y = x * 1
            with lib.no_grad():
                v = y[:2]
            v.mul_(2)
        elif name == "view_rewrites_base":
            y = x * 2
            y[2:4].mul_(y[0:2].detach())
            y.sum().backward()
            return x.grad, type(y.grad_fn).__name__
        elif name == "setitem_into_plain":
            out = lib.zeros(4, dtype=lib.float64)
            out[1:3] = x[:2] * 3
            (out * out).sum().backward()
            return x.grad, out.requires_grad, type(out.grad_fn).__name__
        elif name == "base_write_seen_by_view":
            y = x * 1
            v = y[1:3]
            y.mul_(5)
            v.sum().backward()
            return x.grad
        elif name.endswith("_output"):  # outputs of an op that returns several views
            y = x.reshape(2, 2) * 1
            parts = {"unbind": lambda: y.unbind(1), "split": lambda: y.split(1),
                     "chunk": lambda: y.chunk(2, 1),
                     "split_sizes": lambda: y.split([1, 1], 1)}[name[:-len("_output")]]()
            parts[1].mul_(2)
        elif name == "unbind_in_no_grad":  # allowed: the write is not recorded
            y = x * 1
            with lib.no_grad():
                y.unbind(0)[1].mul_(2)
            y.sum().backward()
            return x.grad, y
        elif name == "saved_nothing":
            y = x + 1
            z = y * 2
            y.add_(1)
            z.sum().backward()
            return x.grad
        return x.grad
    same(program)


# ---- hooks -------------------------------------------------------------------------------

def test_tensor_hooks_run_in_order_and_replace_the_gradient():
    def program(lib):
        log = []
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        y.register_hook(lambda g: log.append(("y1", g.tolist())))
        y.register_hook(lambda g: g * 10)
        y.register_hook(lambda g: log.append(("y3", g.tolist())))
        handle = x.register_hook(lambda g: log.append(("x", g.tolist())))
        y.sum().backward(retain_graph=True)
        handle.remove()
        handle.remove()
        y.sum().backward()
        return x.grad, log
    assert same(program)[0] == "ok"


def test_retain_grad_keeps_the_hooked_gradient():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        y.retain_grad()
        y.register_hook(lambda g: g * 2)
        z = (y * y).sum()
        z.backward(retain_graph=True)
        first = y.grad.clone()
        z.backward()
        return first, y.grad, y.retains_grad, x.retains_grad, x.grad
    assert same(program)[0] == "ok"


def test_retain_grad_follows_an_in_place_op():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        y.retain_grad()
        y.mul_(2)
        y.sum().backward()
        return y.grad, x.grad
    assert same(program)[0] == "ok"


def test_hook_errors():
    def program(lib):
        return lib.ones(2).register_hook(lambda g: g)
    kind, message = same(program)
    assert kind == "RuntimeError"

    def bad(lib):
        x = leaf(lib, [1.0])
        x.register_hook(lambda g: lib.ones(3, dtype=lib.float64))
        (x * 2).sum().backward()
    with pytest.raises(RuntimeError, match="hook"):
        bad(pith)


class HookError(Exception):
    pass


def test_a_hooks_exception_reaches_the_caller_as_itself():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])

        def hook(g):
            raise HookError("from the hook")
        x.register_hook(hook)
        (x * 2).sum().backward()
    assert same(program) == ("HookError", "from the hook")


@pytest.mark.parametrize("program", [
    lambda lib: lib.autograd.grad((), (leaf(lib, [1.0]),)),
    lambda lib: lib.autograd.grad([], [leaf(lib, [1.0])], allow_unused=True),
    lambda lib: lib.autograd.grad([], [leaf(lib, [1.0, 2.0])], materialize_grads=True),
    lambda lib: lib.autograd.backward([]),
    lambda lib: lib.autograd.backward([], inputs=[leaf(lib, [1.0])]),
], ids=["grad", "grad-allow-unused", "grad-materialize", "backward", "backward-inputs"])
def test_no_outputs_differentiate_nothing(program):
    same(program)


def test_numpy_refuses_a_tensor_that_requires_grad():
    np = pytest.importorskip("numpy")
    assert same(lambda lib: leaf(lib, [1.0]).numpy())[0] == "RuntimeError"
    assert same(lambda lib: np.asarray(leaf(lib, [1.0])))[0] == "RuntimeError"
    assert same(lambda lib: (leaf(lib, [1.0]) * 2).numpy())[0] == "RuntimeError"
    assert same(lambda lib: leaf(lib, [1.0, 2.0]).numpy(force=True).tolist()) == \
        ("ok", [1.0, 2.0])
    assert same(lambda lib: leaf(lib, [1.0]).detach().numpy().tolist()) == ("ok", [1.0])


def test_inference_tensors_cannot_be_saved_for_backward():
    def program(lib):
        with lib.inference_mode():
            t = lib.ones(3, dtype=lib.float64)
        w = leaf(lib, [1.0, 2.0, 3.0])
        results = [t.exp().tolist(), (w + t).sum().item()]  # nothing saves t: allowed
        (w * t).sum().backward()
        return results
    kind, message = same(program)
    assert kind == "RuntimeError" and "Inference tensors cannot be saved" in message


INFERENCE_WRITES = {
    "add_": lambda lib, t: t.add_(1), "mul_": lambda lib, t: t.mul_(2),
    "zero_": lambda lib, t: t.zero_(), "fill_": lambda lib, t: t.fill_(3),
    "copy_": lambda lib, t: t.copy_(lib.zeros(4)), "setitem": lambda lib, t: t.__setitem__(0, 5.0),
    "clamp_": lambda lib, t: t.clamp_(0, 1), "uniform_": lambda lib, t: t.uniform_(),
    "lt_": lambda lib, t: t.lt_(2),
    "masked_fill_": lambda lib, t: t.masked_fill_(lib.ones(4, dtype=lib.bool), 1.0),
    "a_view": lambda lib, t: t[1:].add_(1),
    "out=": lambda lib, t: lib.add(lib.ones(4), lib.ones(4), out=t),
}


@pytest.mark.parametrize("write", sorted(INFERENCE_WRITES))
def test_an_inference_tensor_is_written_only_in_inference_mode(write):
    def program(lib, inside):
        with lib.inference_mode():
            t = lib.ones(4)
        if inside:
            with lib.inference_mode():
                INFERENCE_WRITES[write](lib, t)
            return t.is_inference()
        INFERENCE_WRITES[write](lib, t)
    assert same(lambda lib: program(lib, True)) == ("ok", True)
    kind, message = same(lambda lib: program(lib, False))
    assert kind == "RuntimeError" and message.startswith("Inplace update to inference tensor")


def test_inference_mode_leaves_autograd_out():
    def program(lib):
        w = leaf(lib, [1.0, 2.0])
        with lib.inference_mode():
            w.add_(1)  # a leaf that requires grad: no autograd kernel, no refusal
            w[0:1].mul_(2)
            y = w * 2
            with lib.enable_grad():  # grad mode on, autograd still left out
                z = w * 3
        return [w, y.requires_grad, y.is_inference(), y.grad_fn is None, z.requires_grad]
    assert same(program)[0] == "ok"


def test_inference_tensors_take_functional_ops_outside_inference_mode():
    def program(lib):
        with lib.inference_mode():
            t = lib.arange(4.0)
        w = leaf(lib, [1.0, 2.0, 3.0, 4.0])
        with lib.inference_mode():
            w.detach().mul_(1)  # a normal tensor may be written inside: allowed
            view = w.detach()[1:]  # a view of a normal tensor made inside is normal
        view.add_(0)
        return [t + 1, t.sum(), t.reshape(2, 2), t.exp(), t[1:], (w + t).sum(),
                view.is_inference(), (t + 1).is_inference()]
    assert same(program)[0] == "ok"


def test_nelement_is_numel():
    assert same(lambda lib: [lib.ones(2, 3).nelement(), lib.ones(()).nelement(),
                             lib.ones(0, 4).nelement()]) == ("ok", [6, 1, 0])


# ---- nodes -------------------------------------------------------------------------------

def test_nodes_are_cached_and_expose_their_edges():
    x = pith.ones(2, requires_grad=True)
    y = (x * 2).exp()
    assert y.grad_fn is y.grad_fn
    (node, nr), = y.grad_fn.next_functions
    assert node.name() == "MulBackward0" and nr == 0
    acc, _ = node.next_functions[0]
    assert acc.name() == "AccumulateGrad" and acc.variable is x
    assert node.next_functions[1] == (None, 0)
    y.grad_fn.metadata["k"] = 1
    assert y.grad_fn.metadata == {"k": 1}


# ---- modules, parameters, threads, leaks ----------------------------------------------------

def test_linear_training_step_matches_torch():
    def program(lib):
        lib.manual_seed(0)
        w = leaf(lib, [[0.5, -1.0], [2.0, 0.25]], "float32")
        model = lib.nn.Linear(2, 2)
        with lib.no_grad():
            model.weight.copy_(w)
            model.bias.zero_()
        x = lib.tensor([[1.0, 2.0], [3.0, -1.0]])
        loss = lib.nn.functional.cross_entropy(model(x), lib.tensor([0, 1]))
        loss.backward()
        return loss, model.weight.grad, model.bias.grad
    assert same(program)[0] == "ok"


def test_two_threads_run_backward_at_once():
    results = {}

    def work(k):
        x = pith.full((64,), float(k + 1), dtype=pith.float64, requires_grad=True)
        for _ in range(50):
            ((x * x).sum() * 0.5).backward()
        results[k] = x.grad[0].item()

    threads = [threading.Thread(target=work, args=(k,)) for k in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0: 50.0, 1: 100.0}


def test_training_iterations_leak_nothing():
    model = pith.nn.Sequential(pith.nn.Linear(8, 16), pith.nn.ReLU(), pith.nn.Linear(16, 2))
    x, target = pith.randn(4, 8), pith.tensor([0, 1, 1, 0])

    def step():
        model.zero_grad()
        loss = pith.nn.functional.cross_entropy(model(x), target)
        loss.backward()

    for _ in range(5):
        step()
    gc.collect()
    tensors, nodes = pith._C._live_tensors(), pith._C._live_nodes()
    for _ in range(2000):
        step()
    gc.collect()
    assert (pith._C._live_tensors(), pith._C._live_nodes()) == (tensors, nodes)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("exponent", [3.3, 2, 0.5, -1.5, 1e-3])
def test_pow_of_a_python_number_has_torchs_gradient(dtype, exponent):
    """x ** 3.3's gradient computes the exponent minus 1 in float64 (a wrapped Python number
    once rounded it to the default dtype: 3e-7 off in float64); what is left is pow's own
    error bound (a few ulps, ops.toml's vecmath bounds)."""
    values = [1.7, 0.3, 2.2, 5.0]
    x = pith.tensor(values, dtype=getattr(pith, dtype), requires_grad=True)
    t = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True)
    (x ** exponent).sum().backward()
    (t ** exponent).sum().backward()
    eps = torch.finfo(getattr(torch, dtype)).eps
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=4 * eps, atol=0)
