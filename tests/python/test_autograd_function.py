"""pith.autograd.Function against torch.autograd.Function: each scenario runs the same
code on both libraries and compares results, gradients, node names, error types and
messages (docs/autograd.md, "Custom functions")."""
import gc
import warnings

import pytest

import pith

torch = pytest.importorskip("torch")


def run_both(scenario):
    """scenario(lib) on pith and on torch; returns (pith's result, torch's result)."""
    return scenario(pith), scenario(torch)


def plain(value):
    if isinstance(value, (pith.Tensor, torch.Tensor)):
        return value.detach().tolist()
    if isinstance(value, (tuple, list)):
        return type(value)(plain(v) for v in value)
    return value


def outcome(scenario, lib):
    try:
        return ("ok", plain(scenario(lib)))
    except Exception as e:  # noqa: BLE001 - the type and message are what is compared
        return (type(e).__name__, str(e))


def same(scenario):
    got, want = outcome(scenario, pith), outcome(scenario, torch)
    assert got == want
    return got


def make_square(lib):
    class Square(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x * x

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 2 * x * g
    return Square


def test_forward_backward_and_grad_fn_name():
    def scenario(lib):
        x = lib.tensor([1.0, -2.0, 3.0], requires_grad=True)
        y = make_square(lib).apply(x)
        y.sum().backward()
        return y, x.grad, type(y.grad_fn).__name__, y.grad_fn.name(), y.requires_grad
    assert same(scenario)[1][2] == "SquareBackward"


def test_ctx_is_grad_fn_and_next_functions():
    def scenario(lib):
        seen = {}

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                seen["ctx"] = ctx
                ctx.note = "kept"
                return x * y

            @staticmethod
            def backward(ctx, g):
                return g * ctx.note.count("e"), g
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        w = lib.tensor([3.0, 4.0], requires_grad=True)
        y = F.apply(x * 1, w)
        assert y.grad_fn is seen["ctx"]
        names = [type(n).__name__ if n is not None else None
                 for n, _ in y.grad_fn.next_functions]
        y.sum().backward()
        return names, y.grad_fn.note, x.grad, w.grad
    same(scenario)


def test_setup_context_style_with_non_tensor_args_and_defaults():
    def scenario(lib):
        class Scale(lib.autograd.Function):
            @staticmethod
            def forward(x, k, shift=1.0):
                return x * k + shift

            @staticmethod
            def setup_context(ctx, inputs, output):
                ctx.k = inputs[1]
                ctx.n = len(inputs)

            @staticmethod
            def backward(ctx, g):
                return g * ctx.k, None, None
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = Scale.apply(x, 3.0)
        y.sum().backward()
        return y, x.grad, y.grad_fn.n
    same(scenario)


def test_needs_input_grad():
    def scenario(lib):
        seen = []

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, a, b, c):
                return a * b

            @staticmethod
            def backward(ctx, g):
                seen.append(ctx.needs_input_grad)
                return g, None, None
        a = lib.tensor([1.0], requires_grad=True)
        b = lib.tensor([2.0])
        F.apply(a, b, 5).sum().backward()
        return seen
    same(scenario)


@pytest.mark.parametrize("returns", ["too_few", "too_many", "extra_none", "non_tensor_grad",
                                     "grad_for_int", "wrong_shape", "broadcast", "str"])
def test_backward_return_checks(returns):
    def scenario(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, k):
                return x * k

            @staticmethod
            def backward(ctx, g):
                return {"too_few": lambda: (g,),
                        "too_many": lambda: (g, None, g),
                        "extra_none": lambda: (g * 2, None, None, None),
                        "non_tensor_grad": lambda: (g, 1.0),
                        "grad_for_int": lambda: (g, g),
                        "wrong_shape": lambda: (g[:1], None),
                        "broadcast": lambda: (g.unsqueeze(0).expand(2, 3), None),
                        "str": lambda: ("x", None)}[returns]()
        x = lib.tensor([1.0, 2.0, 3.0], requires_grad=True)
        F.apply(x, 2).sum().backward()
        return x.grad
    same(scenario)


def test_none_gradient_for_an_input():
    def scenario(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, y):
                return x + y

            @staticmethod
            def backward(ctx, g):
                return None, g
        x = lib.tensor([1.0], requires_grad=True)
        y = lib.tensor([1.0], requires_grad=True)
        F.apply(x, y).sum().backward()
        return x.grad, y.grad
    same(scenario)


def test_saved_tensor_modified_in_place_raises():
    def scenario(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        h = x * 1
        y = make_square(lib).apply(h)
        with lib.no_grad():
            h.add_(1)
        y.sum().backward()
    got, want = outcome(scenario, pith), outcome(scenario, torch)
    assert got[0] == want[0] == "RuntimeError"
    assert "modified by an inplace operation" in got[1]
    assert "is at version 1; expected version 0 instead" in got[1]


def test_saving_a_non_tensor_raises():
    def scenario(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x, 3)
                return x * 2
        F.apply(lib.tensor([1.0], requires_grad=True))
    same(scenario)


def test_saved_output_gives_the_gradient():
    def scenario(lib):
        class Exp(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                y = x.exp()
                ctx.save_for_backward(y)
                return y

            @staticmethod
            def backward(ctx, g):
                y, = ctx.saved_tensors
                return g * y
        x = lib.tensor([0.0, 1.0], requires_grad=True, dtype=lib.float64)
        y = Exp.apply(x)
        y.sum().backward()
        return x.grad.tolist()
    assert scenario(pith) == pytest.approx(scenario(torch), rel=1e-15)


def test_second_backward_without_retain_graph():
    def scenario(lib):
        x = lib.tensor([1.0], requires_grad=True)
        y = make_square(lib).apply(x).sum()
        y.backward()
        y.backward()
    got, want = outcome(scenario, pith), outcome(scenario, torch)
    assert got[0] == want[0] == "RuntimeError"
    assert "backward through the graph a second time" in got[1]


def test_mark_dirty():
    def scenario(lib):
        class AddOne(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x

            @staticmethod
            def backward(ctx, g):
                return g * 3
        w = lib.tensor([1.0, 2.0], requires_grad=True)
        h = w * 2
        v = h._version
        out = AddOne.apply(h)
        out.sum().backward()
        return out is h, h._version - v, type(h.grad_fn).__name__, h, w.grad
    same(scenario)


def test_mark_dirty_of_a_leaf_raises():
    def scenario(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x
        F.apply(lib.tensor([1.0], requires_grad=True))
    same(scenario)


def test_mark_dirty_not_returned_raises():
    def scenario(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(x)
                return x * 2
        F.apply(lib.tensor([1.0], requires_grad=True).clone())
    same(scenario)


def test_mark_non_differentiable_and_materialize():
    def scenario(lib, materialize):
        seen = []

        class SortLike(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.set_materialize_grads(materialize)
                idx = lib.tensor([1.0, 0.0])
                ctx.mark_non_differentiable(idx)
                return x * 2, idx, x * 3

            @staticmethod
            def backward(ctx, g1, g2, g3):
                seen.append((plain(g1), g2, plain(g3)))
                return g1 * 2
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        a, idx, c = SortLike.apply(x)
        a.sum().backward()
        return idx.requires_grad, a.requires_grad, c.requires_grad, seen, x.grad
    for materialize in (True, False):
        assert outcome(lambda lib: scenario(lib, materialize), pith) == \
            outcome(lambda lib: scenario(lib, materialize), torch)


def test_input_returned_as_is_and_view_outputs():
    def scenario(lib):
        class Ident(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x, x.view(-1)

            @staticmethod
            def backward(ctx, g, gv):
                return g + gv.view(g.shape)
        x = lib.tensor([[1.0, 2.0]], requires_grad=True)
        y, v = Ident.apply(x)
        r = [y is x, x.is_leaf, type(y.grad_fn).__name__]
        (y.sum() + v.sum()).backward()
        r.append(plain(x.grad))
        try:
            v.mul_(2)
        except RuntimeError as e:
            r.append(str(e))
        return r
    same(scenario)


def test_double_backward_through_differentiable_backward():
    def scenario(lib):
        class Cube(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x ** 3

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 3 * x * x * g
        x = lib.tensor([1.0, 2.0], requires_grad=True, dtype=lib.float64)
        y = Cube.apply(x).sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        g2, = lib.autograd.grad(g.sum(), x)
        return g, g2
    same(scenario)


def test_gradcheck_and_gradgradcheck_of_a_function():
    Cube = None

    class Cube(pith.autograd.Function):  # noqa: F811
        @staticmethod
        def forward(ctx, x):
            ctx.save_for_backward(x)
            return x ** 3

        @staticmethod
        def backward(ctx, g):
            x, = ctx.saved_tensors
            return 3 * x * x * g
    x = pith.randn(3, dtype=pith.float64, requires_grad=True)
    assert pith.autograd.gradcheck(Cube.apply, (x,))
    assert pith.autograd.gradgradcheck(Cube.apply, (x,))


def test_once_differentiable():
    def scenario(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return x * x

            @staticmethod
            @lib.autograd.function.once_differentiable
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return 2 * x * g
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y = F.apply(x).sum()
        g, = lib.autograd.grad(y, x, create_graph=True)
        r = [plain(g), g.requires_grad]
        g.sum().backward()
        return r
    same(scenario)


def test_errors_from_forward_and_backward_keep_their_type():
    def forward_raises(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                raise ValueError("boom in forward")
        F.apply(lib.tensor([1.0], requires_grad=True))

    def backward_raises(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2

            @staticmethod
            def backward(ctx, g):
                raise KeyError("boom in backward")
        F.apply(lib.tensor([1.0], requires_grad=True)).sum().backward()
    same(forward_raises)
    same(backward_raises)


def test_unimplemented_methods_and_legacy_use():
    def no_backward(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                return x * 2
        F.apply(lib.tensor([1.0], requires_grad=True)).sum().backward()

    def no_forward(lib):
        lib.autograd.Function.apply(lib.tensor([1.0]))

    def instance_call(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            lib.autograd.Function()(lib.tensor([1.0]))
    same(no_backward)
    same(no_forward)
    same(instance_call)


def test_no_node_without_grad():
    def scenario(lib):
        x = lib.tensor([1.0], requires_grad=True)
        with lib.no_grad():
            y = make_square(lib).apply(x)
        z = make_square(lib).apply(lib.tensor([2.0]))
        return y.requires_grad, y.grad_fn, z.requires_grad, z.grad_fn
    same(scenario)


def test_nested_functions():
    def scenario(lib):
        Square = make_square(lib)

        class Outer(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.save_for_backward(x)
                return Square.apply(x) + x

            @staticmethod
            def backward(ctx, g):
                x, = ctx.saved_tensors
                return g * (Square.apply(x) * 0 + 2 * x + 1)
        x = lib.tensor([1.0, 3.0], requires_grad=True)
        y = Outer.apply(Square.apply(x))
        y.sum().backward()
        return y, x.grad, type(y.grad_fn).__name__
    same(scenario)


def test_grad_fn_exports():
    assert pith.autograd.Function.__name__ == "Function"
    from pith.autograd.function import (  # noqa: F401
        FunctionCtx, InplaceFunction, once_differentiable)
    assert pith.autograd.function.Function is pith.autograd.Function


def test_graph_and_ctx_are_released():
    Square = make_square(pith)
    gc.collect()
    tensors, nodes = pith._C._live_tensors(), pith._C._live_nodes()
    for _ in range(50):
        x = pith.tensor([1.0, 2.0], requires_grad=True)
        y = Square.apply(Square.apply(x))
        y.grad_fn.keep = y.grad_fn  # a cycle through the ctx's __dict__ is the user's own
        y.grad_fn.keep = None
        y.sum().backward()
        del x, y
    gc.collect()
    assert pith._C._live_nodes() == nodes
    assert pith._C._live_tensors() == tensors


def test_ctx_outliving_its_node_raises_instead_of_crashing():
    Square = make_square(pith)
    x = pith.tensor([1.0], requires_grad=True)
    y = Square.apply(x)
    ctx = y.grad_fn
    del y
    gc.collect()
    with pytest.raises(RuntimeError, match="Attribute 'next_functions' is invalid"):
        ctx.next_functions


def test_function_on_a_wrapper_subclass():
    # __pith_dispatch__ sees the ops forward and backward run (below autograd), and the
    # outputs and gradients stay of the subclass, as with __torch_dispatch__
    from test_python_dispatch import LoggingTensor, capture_logs
    Square = make_square(pith)
    x = LoggingTensor(pith.tensor([1.0, 2.0], dtype=pith.float64)).requires_grad_()
    with capture_logs() as logs:
        logs.input("x", x)
        y = Square.apply(x)
        y.backward(LoggingTensor(pith.ones(2, dtype=pith.float64)))
    assert type(y) is LoggingTensor and y.grad_fn.name() == "SquareBackward"
    assert logs.lines[:2] == ["$0 = input('x')", "$1 = pith.ops.pith.mul.Tensor($0, $0)"]
    assert type(x.grad) is LoggingTensor and x.grad.elem.tolist() == [2.0, 4.0]


def test_backward_from_another_thread_runs_in_the_functions_interpreter():
    import threading
    Square = make_square(pith)
    x = pith.tensor([3.0], requires_grad=True)
    y = Square.apply(x).sum()
    errors = []

    def run():
        try:
            y.backward()
        except Exception as e:  # noqa: BLE001
            errors.append(e)
    t = threading.Thread(target=run)
    t.start()
    t.join()
    assert errors == [] and x.grad.tolist() == [6.0]


def test_mark_non_differentiable_of_a_non_tensor_raises():
    def scenario(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_non_differentiable(3)
                return x * 1
        F.apply(lib.tensor([1.0], requires_grad=True))

    def dirty(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                ctx.mark_dirty(3)
                return x * 1
        F.apply(lib.tensor([1.0], requires_grad=True))
    for case in (scenario, dirty):
        got, want = outcome(case, pith), outcome(case, torch)
        assert got[0] == want[0] == "RuntimeError"
        assert got[1].startswith(want[1])  # torch's message stops before the type's name


def test_mark_dirty_of_a_leaf_in_no_grad_returns_a_detached_alias():
    def scenario(lib):
        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x):
                x.add_(1)
                ctx.mark_dirty(x)
                return x
        x = lib.tensor([1.0], requires_grad=True)
        with lib.no_grad():
            y = F.apply(x)
        return y is x, y.requires_grad, x.is_leaf, y
    same(scenario)


def test_non_tensor_outputs_and_keyword_arguments():
    def scenario(lib):
        seen = []

        class F(lib.autograd.Function):
            @staticmethod
            def forward(ctx, x, scale=2.0):
                ctx.scale = scale
                return x * scale, "label", x * 0 + 1

            @staticmethod
            def backward(ctx, g, g_label, g_ones):
                seen.append((g_label, plain(g_ones)))
                return g * ctx.scale, None
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        y, label, ones = F.apply(x, scale=3.0)
        y.sum().backward()
        return y, label, seen, x.grad
    same(scenario)


def test_inplace_function_keeps_its_flag():
    def scenario(lib):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return lib.autograd.function.InplaceFunction(inplace=True).inplace
    same(scenario)
