"""pith.utils.checkpoint against torch.utils.checkpoint: both forms recompute in backward
(the function runs twice), gradients equal torch's, the RNG state of the forward is replayed,
activations are not kept between forward and backward, and the errors are torch's."""
import gc
import importlib
import warnings
import weakref

import pytest

import pith

torch = pytest.importorskip("torch")

X = [[0.5, -1.0, 2.0, 0.25], [1.5, 0.0, -0.5, 1.0], [-2.0, 0.75, 1.0, -0.25]]
W = [[0.1 * (i - j) for j in range(4)] for i in range(4)]


def checkpoint_module(lib):
    return importlib.import_module(lib.__name__ + ".utils.checkpoint")


def leaf(lib, data):
    return lib.tensor(data, dtype=lib.float64, requires_grad=True)


def rounded(t):
    return [round(v, 9) for v in t.detach().flatten().tolist()]


def run(lib, reentrant, fn=None, backward=None):
    """checkpoint(fn, x, w) then backward; returns (calls of fn, x.grad, w.grad, output)."""
    cp = checkpoint_module(lib)
    x, w = leaf(lib, X), leaf(lib, W)
    calls = []

    def f(x, w):
        calls.append(1)
        return (x @ w).tanh().exp() * x.sigmoid()
    y = cp.checkpoint(fn or f, x, w, use_reentrant=reentrant)
    forward_calls = len(calls)
    (backward or (lambda y: y.sum().backward()))(y)
    return forward_calls, len(calls), rounded(x.grad), rounded(w.grad), rounded(y)


@pytest.mark.parametrize("reentrant", [True, False], ids=["reentrant", "non-reentrant"])
def test_backward_recomputes_and_matches_torch(reentrant):
    got, want = run(pith, reentrant), run(torch, reentrant)
    assert got == want
    assert got[:2] == (1, 2)  # once in forward, once more in backward


@pytest.mark.parametrize("reentrant", [True, False], ids=["reentrant", "non-reentrant"])
def test_activations_are_not_kept_for_backward(reentrant):
    def program(lib, use_checkpoint):
        cp = checkpoint_module(lib)
        x = leaf(lib, X)
        seen = []

        def f(x):
            h = x.exp()
            seen.append(weakref.ref(h))
            return (h * h).sum()
        y = cp.checkpoint(f, x, use_reentrant=reentrant) if use_checkpoint else f(x)
        gc.collect()
        first_alive = seen[0]() is not None
        y.backward()
        return first_alive, rounded(x.grad)
    for use_checkpoint in (False, True):
        got, want = program(pith, use_checkpoint), program(torch, use_checkpoint)
        assert got == want
        assert got[0] is (not use_checkpoint)


@pytest.mark.parametrize("reentrant", [True, False], ids=["reentrant", "non-reentrant"])
def test_the_forwards_rng_state_is_replayed(reentrant):
    cp = checkpoint_module(pith)
    x = leaf(pith, [[1.0] * 64] * 4)

    def f(x):
        return pith.nn.functional.dropout(x, 0.5, training=True) * 3
    y = cp.checkpoint(f, x, use_reentrant=reentrant)
    pith.rand(100)  # the generator moves on before backward
    y.sum().backward()
    # the recomputed mask is the forward's: the gradient is 6 exactly where y is non-zero
    assert ((x.grad != 0) == (y != 0)).all().item()
    assert 0 < (y != 0).sum().item() < y.numel()


def test_retain_graph_recomputes_for_each_backward():
    def twice(y):
        y.sum().backward(retain_graph=True)
        y.sum().backward()
    got, want = run(pith, False, backward=twice), run(torch, False, backward=twice)
    assert got == want
    assert got[:2] == (1, 3)


def test_non_reentrant_serves_grad_and_backward_inputs():
    def program(lib):
        cp = checkpoint_module(lib)
        x, w = leaf(lib, X), leaf(lib, W)
        y = cp.checkpoint(lambda x, w: (x @ w).sin(), x, w, use_reentrant=False)
        (gx,) = lib.autograd.grad(y.sum(), [x], retain_graph=True)
        y.sum().backward(inputs=[w])
        return rounded(gx), rounded(w.grad), x.grad is None
    assert program(pith) == program(torch)


def errors(program):
    out = []
    for lib in (pith, torch):
        try:
            program(lib)
            out.append(None)
        except Exception as e:  # compared below
            out.append((type(e).__name__, str(e)))
    assert out[0] == out[1]
    return out[0]


def test_reentrant_refuses_grad_and_inputs():
    def program(lib):
        cp = checkpoint_module(lib)
        x = leaf(lib, X)
        y = cp.checkpoint(lambda x: x.exp(), x, use_reentrant=True)
        lib.autograd.grad(y.sum(), [x])
    assert errors(program)[0] == "RuntimeError"

    def inputs(lib):
        cp = checkpoint_module(lib)
        x = leaf(lib, X)
        y = cp.checkpoint(lambda x: x.exp(), x, use_reentrant=True)
        y.sum().backward(inputs=[x])
    assert errors(inputs)[0] == "RuntimeError"


def test_argument_errors_are_torchs():
    def kwargs(lib):
        checkpoint_module(lib).checkpoint(lambda x: x, leaf(lib, X), use_reentrant=True,
                                          bogus=1)
    assert errors(kwargs)[0] == "ValueError"

    def context(lib):
        checkpoint_module(lib).checkpoint(lambda x: x, leaf(lib, X), use_reentrant=True,
                                          context_fn=lambda: (None, None))
    assert errors(context)[0] == "ValueError"

    def check(lib):
        checkpoint_module(lib).checkpoint(lambda x: x * 2, leaf(lib, X), use_reentrant=False,
                                          determinism_check="bogus")
    assert errors(check)[0] == "ValueError"


def test_use_reentrant_must_be_passed_or_warns():
    for lib in (pith, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            checkpoint_module(lib).checkpoint(lambda x: x * 2, leaf(lib, X))
        assert any("use_reentrant parameter should be passed explicitly" in str(w.message)
                   for w in caught)


def test_a_recomputation_that_differs_is_a_checkpoint_error():
    def program(lib):
        cp = checkpoint_module(lib)
        x = leaf(lib, X)
        state = {"n": 0}

        def f(x):
            state["n"] += 1
            h = x.exp() if state["n"] == 1 else x[:2].exp()
            return (h * h).sum()
        cp.checkpoint(f, x, use_reentrant=False).backward()
    kind, message = errors(program)
    assert kind == "CheckpointError"
    assert "torch.utils.checkpoint: Recomputed values" in message


@pytest.mark.parametrize("reentrant", [True, False], ids=["reentrant", "non-reentrant"])
def test_checkpoint_sequential_matches_torch(reentrant):
    def program(lib):
        lib.manual_seed(0)
        layers = [lib.nn.Linear(4, 4, dtype=lib.float64) for _ in range(6)]
        with lib.no_grad():
            for i, layer in enumerate(layers):
                layer.weight.copy_(lib.tensor(W, dtype=lib.float64) * (i + 1) * 0.3)
                layer.bias.fill_(0.1 * i)
        model = lib.nn.Sequential(*[m for layer in layers for m in (layer, lib.nn.Tanh())])
        x = leaf(lib, X)
        y = checkpoint_module(lib).checkpoint_sequential(model, 3, x,
                                                         use_reentrant=reentrant)
        y.sum().backward()
        return rounded(x.grad), rounded(layers[0].weight.grad), rounded(y)
    assert program(pith) == program(torch)


def test_deeply_nested_reentrant_checkpoints():
    """Reentrant checkpoints of checkpoints: every level runs backward inside the backward
    of the level above (Note [The engine's threads and the GIL])."""
    def program(lib, depth):
        cp = checkpoint_module(lib)

        def nest(level):
            if level == depth:
                return lambda x: x.sin()
            inner = nest(level + 1)
            return lambda x: cp.checkpoint(inner, x * 1.01, use_reentrant=True)
        x = leaf(lib, [0.5, 1.0])
        nest(0)(x).sum().backward()
        return rounded(x.grad)
    assert program(pith, 70) == program(torch, 70)
