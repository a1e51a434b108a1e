"""Backward and threads from Python (Note [The engine's threads and the GIL],
autograd/engine.c): backward runs without the GIL, so two Python threads run backward at
once and other threads make progress meanwhile; what backward needs from Python (a hook, a
dispatch mode, a subclass) re-enters on the calling thread's own thread state, so it sees
that thread's modes and thread-local data. torch is the oracle for the gradients."""
import sys
import threading
import time

import pytest

import pith
from pith.utils import DispatchMode

torch = pytest.importorskip("torch")


def run_together(work, n=2):
    """Runs work(k) for k in range(n) on n threads started together; re-raises the first
    failure."""
    barrier = threading.Barrier(n)
    errors = []

    def body(k):
        try:
            barrier.wait()
            work(k)
        except BaseException as e:  # reported below
            errors.append(e)

    threads = [threading.Thread(target=body, args=(k,)) for k in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]


def mlp_data(seed):
    g = torch.Generator().manual_seed(seed)
    return {
        "x": torch.randn(16, 8, generator=g, dtype=torch.float64).tolist(),
        "w1": torch.randn(8, 32, generator=g, dtype=torch.float64).tolist(),
        "w2": torch.randn(32, 4, generator=g, dtype=torch.float64).tolist(),
        "t": torch.randn(16, 4, generator=g, dtype=torch.float64).tolist(),
    }


def mlp_grads(lib, data, steps, shared=None):
    """Runs `steps` forward + backward passes of a two-layer MLP and returns the gradients
    of w1, w2 (and of `shared`, a leaf every pass also adds in, when given)."""
    w1 = lib.tensor(data["w1"], dtype=lib.float64, requires_grad=True)
    w2 = lib.tensor(data["w2"], dtype=lib.float64, requires_grad=True)
    x, t = lib.tensor(data["x"], dtype=lib.float64), lib.tensor(data["t"], dtype=lib.float64)
    for _ in range(steps):
        h = (x @ w1).tanh()
        if shared is not None:
            h = h * shared
        loss = ((h @ w2 - t) ** 2).mean()
        loss.backward()
    return [w1.grad.tolist(), w2.grad.tolist()]


def assert_close(a, b, tol=1e-9):
    if isinstance(a, list):
        assert len(a) == len(b)
        for u, v in zip(a, b):
            assert_close(u, v, tol)
    else:
        assert abs(a - b) <= tol * (1 + abs(b)), (a, b)


def test_two_threads_run_backward_at_once_with_torchs_results():
    datas = [mlp_data(1), mlp_data(2)]
    results = {}
    run_together(lambda k: results.__setitem__(k, mlp_grads(pith, datas[k], steps=30)))
    for k in range(2):
        assert_close(results[k], mlp_grads(torch, datas[k], steps=30))


def test_two_threads_backpropagating_into_one_leaf_accumulate_both():
    datas = [mlp_data(3), mlp_data(4)]
    shared = pith.full((16, 32), 0.5, dtype=pith.float64, requires_grad=True)
    results = {}
    run_together(lambda k: results.__setitem__(k, mlp_grads(pith, datas[k], 40, shared)))
    expected = torch.full((16, 32), 0.5, dtype=torch.float64, requires_grad=True)
    for k in range(2):
        assert_close(results[k], mlp_grads(torch, datas[k], 40, expected))
    assert_close(shared.grad.tolist(), expected.grad.tolist())


def test_a_python_hook_runs_on_the_thread_that_called_backward():
    local = threading.local()
    seen = {}

    def work(k):
        local.name = f"thread {k}"
        x = pith.full((4,), float(k + 1), requires_grad=True)
        y = x * x
        y.register_hook(lambda g: seen.setdefault(k, []).append(
            (threading.get_ident(), local.name, g.tolist())))
        for _ in range(20):
            y.sum().backward(retain_graph=True)
        assert x.grad.tolist() == [20 * 2.0 * (k + 1)] * 4

    idents = {}
    run_together(lambda k: (idents.__setitem__(k, threading.get_ident()), work(k)))
    for k in range(2):
        assert seen[k] == [(idents[k], f"thread {k}", [1.0] * 4)] * 20


class Recording(DispatchMode):
    def __init__(self):
        self.names = []

    def __pith_dispatch__(self, func, types, args=(), kwargs=None):
        self.names.append((threading.get_ident(), func.__name__.split(".")[0]))
        return func(*args, **(kwargs or {}))


def test_a_dispatch_mode_sees_the_backward_of_its_own_thread_only():
    x = pith.full((4,), 3.0, requires_grad=True)
    loss = (x.exp() * 2).sum()  # ExpBackward0 multiplies by the saved result
    modes = {}

    def work(k):
        if k == 0:
            with Recording() as mode:
                modes[0] = mode
                loss.backward(retain_graph=True)
        else:
            for _ in range(20):
                (x.sin() * 3).sum().backward()

    run_together(work)
    me = {ident for ident, _ in modes[0].names}
    assert len(me) == 1, "only the thread that entered the mode is seen"
    names = [name for _, name in modes[0].names]
    assert "mul" in names, names
    assert "sin" not in names and "cos" not in names, "the other thread's ops are not seen"


class Recorded(pith.Tensor):
    """A _make_subclass subclass whose handler records the ops it sees and their thread."""

    seen = []

    @staticmethod
    def __new__(cls, elem):
        return pith.Tensor._make_subclass(cls, elem, True)

    @classmethod
    def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.seen.append((threading.get_ident(), func.__name__.split(".")[0]))
        with pith.utils.no_dispatch():
            return func(*args, **(kwargs or {}))


def test_a_subclass_handles_the_backward_ops_on_the_thread_that_called_backward():
    # The saved x is a Recorded, so MulBackward0's products go through its handler.
    idents, seen, grads = {}, {}, {}

    def work(k):
        idents[k] = threading.get_ident()
        x = Recorded(pith.full((3,), float(k + 2)))
        loss = (x * x).sum()
        start = len(Recorded.seen)  # list.append is atomic; only this thread's are kept
        loss.backward()
        seen[k] = [name for ident, name in Recorded.seen[start:] if ident == idents[k]]
        grads[k] = x.grad.tolist()

    run_together(work)
    for k in range(2):
        assert seen[k].count("mul") >= 2, seen[k]
        assert grads[k] == [2.0 * (k + 2)] * 3


class Boom(Exception):
    pass


def test_an_exception_of_a_mode_during_backward_reaches_the_caller_as_it_is():
    class Raising(DispatchMode):
        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            raise Boom("from the mode")

    x = pith.full((4,), 3.0, requires_grad=True)
    loss = (x * x).sum()
    with pytest.raises(Boom, match="from the mode"):
        with Raising():
            loss.backward()


@pytest.mark.parametrize("lib", [pith, torch], ids=["pith", "torch"])
def test_an_exception_of_a_hook_during_backward_reaches_the_caller_as_it_is(lib):
    caught = {}

    def work(k):
        x = lib.ones(3, requires_grad=True)
        y = x * 2

        def hook(grad):
            raise Boom(f"hook of thread {k}")

        y.register_hook(hook)
        try:
            y.sum().backward()
        except Boom as e:
            caught[k] = str(e)

    run_together(work)
    assert caught == {0: "hook of thread 0", 1: "hook of thread 1"}


def test_another_thread_makes_progress_while_a_long_backward_runs():
    # Deterministic, as tests/python/test_gil.py: with a switch interval far longer than the
    # test, this thread gives up the GIL only when it blocks or releases it. The counter
    # thread, woken just before backward, can count only while backward runs without the
    # GIL. The tensors are small, so no kernel releases the GIL by itself (Note [GIL
    # release], python_bindings/_C/state.h).
    x = pith.full((64,), 1.0, dtype=pith.float64, requires_grad=True)
    y = x
    for _ in range(4000):
        y = y * 1.0001 + 0.0
    loss = y.sum()
    count = [0]
    go, stop = threading.Event(), threading.Event()

    def counter():
        go.wait()
        while not stop.is_set():
            count[0] += 1
            time.sleep(0.0002)  # gives the GIL back

    thread = threading.Thread(target=counter)
    thread.start()
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1000.0)
    runs, progress, start = 0, 0, time.perf_counter()
    try:
        go.set()
        # On a loaded machine the counter may not be scheduled within one backward; with
        # the GIL held it cannot count during any of them.
        while runs < 10 and progress == 0:
            loss.backward(retain_graph=True)
            runs += 1
            progress = count[0]
    finally:
        elapsed = time.perf_counter() - start
        sys.setswitchinterval(interval)
        stop.set()
        thread.join()
    assert x.grad[0].item() == pytest.approx(runs * 1.0001 ** 4000)
    assert progress > 0, f"the counter did not move during {runs} backwards ({elapsed:.3f} s)"


def reentrant_grad(lib, depth):
    """A hook that calls backward inside backward, `depth` levels deep, each level through
    a fresh graph over the same leaf (what a reentrant checkpoint does)."""
    x = lib.full((3,), 2.0, dtype=lib.float64, requires_grad=True)

    def level(d):
        with lib.enable_grad():  # off inside a backward: record, as a checkpoint does
            y = x * float(d + 1)
            if d < depth:
                y.register_hook(lambda g: level(d + 1))
            y.sum().backward()

    level(0)
    return x.grad.tolist()


def test_backward_inside_backward_works_past_depth_60():
    assert reentrant_grad(pith, 100) == reentrant_grad(torch, 100)


def test_backward_inside_backward_on_two_threads_at_once():
    results = {}
    run_together(lambda k: results.__setitem__(k, reentrant_grad(pith, 70)))
    expected = reentrant_grad(torch, 70)
    assert results == {0: expected, 1: expected}
