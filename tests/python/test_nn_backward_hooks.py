"""Module.register_full_backward_hook and register_full_backward_pre_hook against torch:
what the hooks see, in which order, replacements of grad_input and grad_output, and
PyTorch's errors (pith/nn/modules/_backward_hooks.py)."""
import warnings

import pytest

import pith

torch = pytest.importorskip("torch")


def plain(value):
    if isinstance(value, (pith.Tensor, torch.Tensor)):
        return value.detach().tolist()
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    return value


def outcome(scenario, lib):
    try:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            result = plain(scenario(lib))
        return ("ok", result, sorted({str(w.message)[:60] for w in caught}))
    except Exception as e:  # noqa: BLE001 - the type and message are compared
        return (type(e).__name__, str(e))


def same(scenario):
    got, want = outcome(scenario, pith), outcome(scenario, torch)
    assert got == want
    return got


class Scale:
    """A module factory: y = x * w (+ a second output x + w)."""

    @staticmethod
    def make(lib, two_outputs=False):
        class M(lib.nn.Module):
            def forward(self, x, w, k=1):
                if two_outputs:
                    return x * w * k, x + w
                return x * w * k
        return M()


def test_full_backward_hook_sees_input_and_output_gradients():
    def scenario(lib):
        m = Scale.make(lib)
        log = []
        m.register_full_backward_hook(
            lambda mod, gi, go: log.append(("hook", plain(gi), plain(go))))
        m.register_full_backward_pre_hook(lambda mod, go: log.append(("pre", plain(go))))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        m(x, w, 2).sum().backward()
        return log, x.grad, w.grad
    same(scenario)


def test_hooks_replace_gradients():
    def scenario(lib):
        m = Scale.make(lib, two_outputs=True)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 10, go[1]))
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0] + 1, None, None))
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        a, b = m(x, w)
        (a.sum() + b.sum()).backward()
        return x.grad, w.grad
    same(scenario)


def test_prepend_global_and_removal_order():
    def scenario(lib):
        m = Scale.make(lib)
        log = []
        m.register_full_backward_hook(lambda *a: log.append("first"))
        m.register_full_backward_hook(lambda *a: log.append("prepended"), prepend=True)
        h = m.register_full_backward_hook(lambda *a: log.append("removed"))
        h.remove()
        g = lib.nn.modules.module.register_module_full_backward_hook(
            lambda *a: log.append("global"))
        x = lib.tensor([1.0], requires_grad=True)
        try:
            m(x, lib.tensor([2.0])).sum().backward()
        finally:
            g.remove()
        return log
    same(scenario)


def test_only_output_requires_grad_warns_and_calls_hook():
    def scenario(lib):
        m = Scale.make(lib)
        log = []
        m.register_full_backward_hook(lambda mod, gi, go: log.append((gi, plain(go))))
        w = lib.nn.Parameter(lib.tensor([3.0]))

        class Wrap(lib.nn.Module):
            def __init__(self):
                super().__init__()
                self.w = w
                self.m = m

            def forward(self, x):
                return self.m(x, lib.ones(1)) * self.w
        Wrap()(lib.tensor([2.0])).sum().backward()
        return log
    same(scenario)


def test_wrong_number_of_gradients_raise():
    def bad_hook(lib):
        m = Scale.make(lib)
        m.register_full_backward_hook(lambda mod, gi, go: (gi[0],))
        x = lib.tensor([1.0], requires_grad=True)
        m(x, lib.tensor([2.0])).sum().backward()

    def bad_pre_hook(lib):
        m = Scale.make(lib)
        m.register_full_backward_pre_hook(lambda mod, go: (go[0], go[0]))
        x = lib.tensor([1.0], requires_grad=True)
        m(x, lib.tensor([2.0])).sum().backward()
    same(bad_hook)
    same(bad_pre_hook)


def test_output_grad_fn_is_backward_hook_function():
    def scenario(lib):
        m = Scale.make(lib)
        m.register_full_backward_hook(lambda *a: None)
        y = m(lib.tensor([1.0], requires_grad=True), lib.tensor([2.0]))
        return y.grad_fn.name()
    same(scenario)
