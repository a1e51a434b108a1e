"""Training leaks nothing: 10,000 iterations of forward + backward of a small MLP (with an
SGD update under no_grad, gradients cleared) leave the live tensors, the live autograd
nodes and the process's resident memory where they were after a warm-up. Also through a
tensor hook, a dispatch mode and two threads, which reach Python from a backward that
released the GIL (Note [The engine's threads and the GIL], autograd/engine.c)."""
import gc
import threading

import pytest

import pith
from pith.utils import DispatchMode


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * 4096


class MLP:
    def __init__(self):
        pith.manual_seed(0)
        self.model = pith.nn.Sequential(pith.nn.Linear(8, 16), pith.nn.ReLU(),
                                        pith.nn.Linear(16, 4))
        self.x, self.target = pith.randn(4, 8), pith.tensor([0, 1, 3, 2])

    def step(self):
        loss = pith.nn.functional.cross_entropy(self.model(self.x), self.target)
        loss.backward()
        with pith.no_grad():
            for p in self.model.parameters():
                p -= 0.01 * p.grad
        self.model.zero_grad()


def counts():
    gc.collect()
    return pith._C._live_tensors(), pith._C._live_nodes()


def assert_flat(step, iterations, warmup=500, rss_slack=256 << 10):
    for _ in range(warmup):  # fills the allocator's and Python's caches
        step()
    before, rss = counts(), rss_bytes()
    for _ in range(iterations):
        step()
    assert counts() == before, "live (tensors, nodes) grew"
    grown = rss_bytes() - rss
    assert grown <= rss_slack, f"RSS grew by {grown / 2**20:.2f} MiB over {iterations} iterations"


def test_10000_training_iterations_leak_nothing():
    assert_flat(MLP().step, 10_000)


def test_training_through_a_hook_and_a_mode_leaks_nothing():
    mlp = MLP()
    seen = [0]

    class Counting(DispatchMode):
        def __pith_dispatch__(self, func, types, args=(), kwargs=None):
            seen[0] += 1
            return func(*args, **(kwargs or {}))

    def step():
        h = mlp.model[0](mlp.x)
        h.register_hook(lambda g: g * 1.0)
        loss = pith.nn.functional.cross_entropy(mlp.model[2](h.relu()), mlp.target)
        with Counting():
            loss.backward()
        mlp.model.zero_grad()

    assert_flat(step, 1_000, warmup=100)
    assert seen[0] > 0


def test_training_on_two_threads_leaks_nothing():
    mlps = [MLP(), MLP()]

    def step():
        threads = [threading.Thread(target=lambda m=m: [m.step() for _ in range(50)])
                   for m in mlps]
        for t in threads:
            t.start()
        for t in threads:
            t.join()

    assert_flat(step, 20, warmup=2)


def test_the_leak_check_can_fail():
    kept = []
    mlp = MLP()

    def leaky_step():
        loss = pith.nn.functional.cross_entropy(mlp.model(mlp.x), mlp.target)
        loss.backward(retain_graph=True)
        kept.append(loss)  # keeps its graph alive

    with pytest.raises(AssertionError, match="live"):
        assert_flat(leaky_step, 100, warmup=10)


def test_the_rss_check_can_fail():
    kept = []
    mlp = MLP()

    # 1.6 kB a step, what a leaked small tensor costs (storage and header): 16 MB over the
    # run, more than the free heap a long test session may hold to absorb it
    def step_keeping_a_small_tensors_worth():
        mlp.step()
        kept.append(bytes(1600))

    with pytest.raises(AssertionError, match="RSS grew"):
        assert_flat(step_keeping_a_small_tensors_worth, 10_000)
