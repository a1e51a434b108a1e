"""Autograd hooks against PyTorch: node pre- and post-hooks, post-accumulate-grad hooks,
saved-tensor hooks and anomaly detection. The same program runs on pith and on torch; the
order hooks run in, the gradients, and the type and message of every error must agree.
docs/autograd.md ("Hooks") describes them."""
import gc
import warnings

import pytest

import pith

torch = pytest.importorskip("torch")


def same(program):
    """Runs program(lib) with pith and torch; their results (tensors as rounded lists) or
    their exceptions (type name and message) must be equal. Returns pith's."""
    results = []
    for lib in (pith, torch):
        try:
            results.append(("ok", plain(program(lib))))
        except Exception as e:  # compared below, not swallowed
            results.append((type(e).__name__, str(e)))
    assert results[0] == results[1]
    return results[0]


def plain(obj):
    if isinstance(obj, (tuple, list)):
        return [plain(o) for o in obj]
    if hasattr(obj, "tolist"):
        v = obj.detach().tolist()
        return [round(x, 5) for x in v] if isinstance(v, list) else round(v, 5)
    return obj


def leaf(lib, values):
    return lib.tensor(values, dtype=lib.float64, requires_grad=True)


def shapes(grads):
    return [None if g is None else list(g.shape) for g in grads]


# ---- node hooks --------------------------------------------------------------------------

def test_every_kind_of_hook_runs_in_pytorchs_order():
    def program(lib):
        log = []
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        z = (y * y).sum()
        node = y.grad_fn
        acc = node.next_functions[0][0]
        node.register_hook(lambda gi, go: log.append(("post1", shapes(gi), shapes(go))))
        node.register_prehook(lambda go: log.append(("pre1", shapes(go))))
        y.retain_grad()
        y.register_hook(lambda g: log.append(("tensor1", g)))
        node.register_prehook(lambda go: log.append(("pre2", go)))
        y.register_hook(lambda g: log.append(("tensor2", g)))
        node.register_hook(lambda gi, go: log.append(("post2", gi, go)))
        acc.register_hook(lambda gi, go: log.append(("accpost", gi, go)))
        acc.register_prehook(lambda go: log.append(("accpre", go)))
        x.register_post_accumulate_grad_hook(lambda t: log.append(("postacc", t.grad)))
        x.register_hook(lambda g: log.append(("xtensor", g)))
        z.grad_fn.register_prehook(lambda go: log.append(("sumpre", go)))
        z.backward()
        return log, x.grad, y.grad
    assert same(program)[0] == "ok"


def test_pre_hook_replaces_the_gradients_the_node_sees():
    def program(lib):
        x = leaf(lib, [1.0, 2.0, 3.0])
        y = x.exp()
        y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
        y.grad_fn.register_prehook(lambda go: None)
        y.grad_fn.register_prehook(lambda go: (go[0] + 1,))
        y.sum().backward()
        return x.grad
    assert same(program)[0] == "ok"


def test_post_hook_replaces_what_the_node_gives():
    def program(lib):
        x, w = leaf(lib, [1.0, 2.0]), leaf(lib, [3.0, 4.0])
        y = x * w
        y.grad_fn.register_hook(lambda gi, go: (gi[0] * 2, None))
        y.sum().backward()
        return x.grad, w.grad
    assert same(program)[0] == "ok"


def test_post_hook_sees_none_for_an_input_that_needs_no_gradient():
    def program(lib):
        log = []
        x = leaf(lib, [1.0, 2.0])
        y = x * lib.tensor([3.0, 4.0], dtype=lib.float64)
        y.grad_fn.register_hook(lambda gi, go: log.append((gi, go)))
        y.sum().backward()
        return log
    assert same(program)[0] == "ok"


def test_node_hooks_run_in_grad_only_for_nodes_that_run():
    def program(lib):
        log = []
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        z = y.sum()
        z.grad_fn.register_hook(lambda gi, go: log.append(("sum", gi)))
        y.grad_fn.register_prehook(lambda go: log.append(("mul", go)))
        x.register_post_accumulate_grad_hook(lambda t: log.append("postacc"))
        (g,) = lib.autograd.grad(z, y)
        return g, log, x.grad
    assert same(program)[0] == "ok"


@pytest.mark.parametrize("case", [
    "pre_count", "pre_not_tuple", "pre_list", "pre_size", "pre_dtype", "pre_not_tensor",
    "post_count", "post_int", "post_size", "post_dtype", "post_none_replaced",
])
def test_node_hook_results_are_checked_as_pytorch_checks_them(case):
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        w = lib.tensor([1.0, 1.0], dtype=lib.float64)
        y = x * w
        z = y.sum()
        node = y.grad_fn

        def pre_count(go):
            return (go[0], go[0])

        def pre_size(go):
            return (lib.ones(5, dtype=lib.float64),)

        def pre_dtype(go):
            return (go[0].float(),)

        def post_count(gi, go):
            return (gi[0],)

        def post_size(gi, go):
            return (lib.ones(7, dtype=lib.float64), None)

        def post_dtype(gi, go):
            return (gi[0].float(), None)

        def post_none_replaced(gi, go):
            return (gi[0], gi[0])

        hooks = {
            "pre_count": (True, pre_count), "pre_not_tuple": (True, lambda go: 3),
            "pre_list": (True, lambda go: [go[0]]), "pre_size": (True, pre_size),
            "pre_dtype": (True, pre_dtype), "pre_not_tensor": (True, lambda go: ("no",)),
            "post_count": (False, post_count), "post_int": (False, lambda gi, go: 5),
            "post_size": (False, post_size), "post_dtype": (False, post_dtype),
            "post_none_replaced": (False, post_none_replaced),
        }
        pre, fn = hooks[case]
        (node.register_prehook if pre else node.register_hook)(fn)
        z.backward()
        return x.grad
    kind, message = same(program)
    assert kind != "ok", message


def test_removed_node_hooks_do_not_run():
    def program(lib):
        log = []
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        a = y.grad_fn.register_hook(lambda gi, go: log.append("post"))
        b = y.grad_fn.register_prehook(lambda go: log.append("pre"))
        c = x.register_post_accumulate_grad_hook(lambda t: log.append("postacc"))
        y.sum().backward(retain_graph=True)
        a.remove()
        b.remove()
        c.remove()
        c.remove()
        y.sum().backward()
        return log, x.grad
    assert same(program)[0] == "ok"


def test_a_hook_may_remove_itself_while_it_runs():
    def program(lib):
        log = []
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        handles = []

        def once(gi, go):
            log.append("once")
            handles[0].remove()

        handles.append(y.grad_fn.register_hook(once))
        y.grad_fn.register_hook(lambda gi, go: log.append("after"))
        y.sum().backward(retain_graph=True)
        y.sum().backward()
        return log
    assert same(program) == ("ok", ["once", "after", "after"])


class HookError(Exception):
    pass


def raise_hook(*args):
    raise HookError("the hook failed")


@pytest.mark.parametrize("where", ["tensor", "pre", "post", "postacc", "accpre"])
def test_a_hook_that_raises_reaches_backward_as_itself(where):
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        if where == "tensor":
            y.register_hook(raise_hook)
        elif where == "pre":
            y.grad_fn.register_prehook(raise_hook)
        elif where == "post":
            y.grad_fn.register_hook(raise_hook)
        elif where == "postacc":
            x.register_post_accumulate_grad_hook(raise_hook)
        else:
            y.grad_fn.next_functions[0][0].register_prehook(raise_hook)
        y.sum().backward()
    assert same(program) == ("HookError", "the hook failed")
    with pytest.raises(HookError):
        program(pith)


def test_post_accumulate_grad_hook_errors():
    def non_leaf(lib):
        return (leaf(lib, [1.0]) * 2).register_post_accumulate_grad_hook(lambda t: None)

    def no_grad(lib):
        return lib.ones(2).register_post_accumulate_grad_hook(lambda t: None)

    def returns_a_value(lib):
        x = leaf(lib, [1.0])
        x.register_post_accumulate_grad_hook(lambda t: 5)
        (x * 2).sum().backward()

    assert same(non_leaf) == ("RuntimeError",
                              "post accumulate grad hooks cannot be registered on non-leaf "
                              "tensors")
    assert same(no_grad) == ("RuntimeError",
                             "cannot register a hook on a tensor that doesn't require gradient")
    assert same(returns_a_value)[0] == "TypeError"


def test_post_accumulate_grad_hook_can_step_the_parameter():
    def program(lib):
        w = leaf(lib, [1.0, 2.0])

        def sgd(p):
            with lib.no_grad():
                p.sub_(p.grad * 0.5)
            p.grad = None

        w.register_post_accumulate_grad_hook(sgd)
        for _ in range(3):
            (w * w).sum().backward()
        return w, w.grad
    assert same(program)[0] == "ok"


def test_graphs_with_hooks_leak_nothing():
    def run():
        x = pith.randn(4, requires_grad=True)
        y = (x * 3).exp()
        y.register_hook(lambda g: g * 2)
        y.grad_fn.register_hook(lambda gi, go: None)
        y.grad_fn.register_prehook(lambda go: None)
        x.register_post_accumulate_grad_hook(lambda t: None)
        y.grad_fn.next_functions[0][0].register_hook(lambda gi, go: None)
        with pith.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            z = (y * y).sum()
        z.backward()
        z2 = (x.exp() * 2).sum()
        z2.grad_fn.register_hook(lambda gi, go: None)  # released without backward

    run()
    gc.collect()
    before = pith._C._live_tensors(), pith._C._live_nodes()
    for _ in range(50):
        run()
    gc.collect()
    assert (pith._C._live_tensors(), pith._C._live_nodes()) == before


# ---- saved-tensor hooks --------------------------------------------------------------------

def test_saved_tensors_hooks_pack_and_unpack_as_pytorch():
    def program(lib):
        log = []

        def pack(t):
            log.append(("pack", list(t.shape), lib.is_grad_enabled()))
            return t.clone()

        def unpack(t):
            log.append(("unpack", list(t.shape)))
            return t

        x = leaf(lib, [1.0, 2.0, 3.0])
        with lib.autograd.graph.saved_tensors_hooks(pack, unpack):
            y = x.exp() * x
            z = y.sum()
        w = (x * x).sum()  # the hooks are gone
        (z + w).backward()
        return log, x.grad
    assert same(program)[0] == "ok"


def test_saved_tensors_hooks_innermost_wins_and_nest():
    def program(lib):
        log = []
        x = leaf(lib, [1.0, 2.0])
        hooks = lib.autograd.graph.saved_tensors_hooks
        with hooks(lambda t: log.append("outer") or t, lambda t: t):
            with hooks(lambda t: log.append("inner") or t, lambda t: t):
                y = x * x
            y = y * x
        y.sum().backward()
        return log, x.grad
    assert same(program)[0] == "ok"


def test_saved_tensors_hooks_unpack_can_change_the_value():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t * 1, lambda t: t * 2):
            y = (x * x).sum()
        y.backward()
        return x.grad
    assert same(program)[0] == "ok"


def test_saved_tensors_hooks_errors():
    def unpack_not_tensor(lib):
        x = leaf(lib, [1.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: 5):
            y = (x * x).sum()
        y.backward()

    def pack_in_place(lib):
        x = leaf(lib, [1.0])
        b = x * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.mul_(2), lambda t: t):
            return b * b

    def pack_raises(lib):
        x = leaf(lib, [1.0])
        with lib.autograd.graph.saved_tensors_hooks(raise_hook, lambda t: t):
            return x * x

    def unpack_raises(lib):
        x = leaf(lib, [1.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, raise_hook):
            y = (x * x).sum()
        y.backward()

    def twice(lib):
        x = leaf(lib, [1.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            y = (x * x).sum()
        y.backward()
        y.backward()

    def disabled(lib):
        with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
            with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
                pass

    def disable_while_active(lib):
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
            with lib.autograd.graph.disable_saved_tensors_hooks("no hooks here"):
                pass

    assert same(unpack_not_tensor) == (
        "TypeError", "Output of saved tensor unpack_hook expected to be a Tensor but got "
        "result of type int")
    assert same(pack_in_place)[0] == "RuntimeError"
    assert same(pack_raises) == ("HookError", "the hook failed")
    assert same(unpack_raises) == ("HookError", "the hook failed")
    assert same(twice)[0] == "RuntimeError"
    assert same(disabled) == ("RuntimeError", "no hooks here")
    assert same(disable_while_active) == ("RuntimeError", "no hooks here")
    # the state was restored: hooks work again
    with pith.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t):
        pass


def test_saved_tensors_hooks_skip_the_version_check():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        b = x * 1
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            y = b * b
        with lib.no_grad():
            b.mul_(2)
        y.sum().backward()
        return x.grad
    assert same(program)[0] == "ok"


def test_saved_tensors_hooks_with_create_graph_differentiate_twice():
    def program(lib):
        x = leaf(lib, [0.5, 1.0, 2.0])
        with lib.autograd.graph.saved_tensors_hooks(lambda t: t.detach().clone(), lambda t: t):
            y = (x.exp() * x * x).sum()
        (g,) = lib.autograd.grad(y, x, create_graph=True)
        g.sum().backward()
        return g, x.grad
    assert same(program)[0] == "ok"


def test_save_on_cpu():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        with lib.autograd.graph.save_on_cpu():
            y = (x.exp() * x).sum()
        y.backward()
        return x.grad
    assert same(program)[0] == "ok"


# ---- anomaly detection -----------------------------------------------------------------------

def nan_backward(lib):
    x = lib.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt()  # the forward call the warning names
    (y * 0).sum().backward()


def test_detect_anomaly_names_the_node_that_returned_nan():
    for lib in (pith, torch):
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                with pytest.raises(RuntimeError) as info:
                    nan_backward(lib)
        assert str(info.value) == "Function 'SqrtBackward0' returned nan values in its 0th output."
        messages = [str(w.message) for w in caught]
        assert messages[0] == ("Anomaly Detection has been enabled. This mode will increase the "
                               "runtime and should only be enabled for debugging.")
        report = messages[1]
        assert report.startswith("Error detected in SqrtBackward0. Traceback of forward call "
                                 "that caused the error:\n")
        assert 'in nan_backward\n    y = x.sqrt()  # the forward call the warning names\n' in report
        assert not lib.is_anomaly_enabled()


def test_without_anomaly_mode_nan_passes():
    def program(lib):
        x = lib.tensor([0.0, 1.0], requires_grad=True)
        (x.sqrt() * 0).sum().backward()
        return [v != v for v in x.grad.tolist()]
    assert same(program) == ("ok", [True, False])


def test_set_detect_anomaly_as_function_and_context_manager():
    def program(lib):
        states = [(lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled())]
        with lib.autograd.set_detect_anomaly(True, check_nan=False):
            states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
            x = lib.tensor([0.0, 1.0], requires_grad=True)
            (x.sqrt() * 0).sum().backward()  # check_nan=False: no error
        states.append((lib.is_anomaly_enabled(), lib.is_anomaly_check_nan_enabled()))
        lib.autograd.set_detect_anomaly(True)
        states.append(lib.is_anomaly_enabled())
        lib.autograd.set_detect_anomaly(False)
        states.append(lib.is_anomaly_enabled())
        return states
    assert same(program) == ("ok", [[False, True], [True, False], [False, True], True, False])


def test_anomaly_mode_changes_the_hint_of_the_version_error():
    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            with lib.autograd.detect_anomaly():
                y = x.exp()
                with lib.no_grad():
                    y.mul_(2)
                y.sum().backward()
    kind, message = same(program)
    assert kind == "RuntimeError" and message.endswith("Good luck!")


def test_saved_tensors_hooks_are_per_thread():
    import threading

    def program(lib):
        log = []
        x = leaf(lib, [1.0, 2.0])
        seen = {}

        def other():
            seen["y"] = (x * x).sum()  # no hooks on this thread

        with lib.autograd.graph.saved_tensors_hooks(lambda t: log.append("pack") or t,
                                                    lambda t: t):
            worker = threading.Thread(target=other)
            worker.start()
            worker.join()
        seen["y"].backward()
        return log, x.grad
    assert same(program) == ("ok", [[], [2.0, 4.0]])


def test_a_hook_raising_in_a_backward_on_another_thread_keeps_its_type():
    import threading

    def program(lib):
        x = leaf(lib, [1.0, 2.0])
        y = x * 3
        y.grad_fn.register_hook(raise_hook)
        caught = []

        def other():
            try:
                y.sum().backward()
            except Exception as e:  # handed to the main thread
                caught.append(e)

        worker = threading.Thread(target=other)
        worker.start()
        worker.join()
        raise caught[0]
    assert same(program) == ("HookError", "the hook failed")


def test_anomaly_mode_reports_the_node_whose_hook_raised_and_keeps_the_exception():
    def program(lib):
        x = lib.tensor([1.0, 2.0], requires_grad=True)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            with lib.autograd.detect_anomaly():
                y = x.exp()
                y.grad_fn.register_hook(raise_hook)
                try:
                    y.sum().backward()
                except HookError as e:
                    error = str(e)
        return error, [str(w.message).splitlines()[0] for w in caught]
    assert same(program)[1][1][1] == ("Error detected in ExpBackward0. Traceback of forward "
                                      "call that caused the error:")


def test_a_node_hook_that_refers_to_its_node_is_collected():
    def graph():
        x = pith.ones(2, requires_grad=True)
        fn = (x * 2).grad_fn
        fn.register_hook(lambda gi, go: fn)
        fn.register_prehook(lambda go: fn)

    graph()
    gc.collect()
    before = pith._C._live_tensors(), pith._C._live_nodes()
    for _ in range(20):
        graph()
    gc.collect()
    assert (pith._C._live_tensors(), pith._C._live_nodes()) == before


def test_a_node_held_elsewhere_keeps_its_hooks_through_a_collection():
    x = pith.ones(2, requires_grad=True)
    y = x * 2
    log = []

    def register(node):  # a cycle wrapper -> node -> hook -> closure -> wrapper; y holds node
        node.register_hook(lambda gi, go: log.append(node.name()))

    register(y.grad_fn)
    gc.collect()
    y.sum().backward()
    assert log == ["MulBackward0"]
