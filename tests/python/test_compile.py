"""pith.compile part 1 (the PEP 523 frame hook, the bytecode translator and the guards),
against pith's own eager mode: every compiled result is bitwise equal to the eager one, and
the models also match PyTorch's (when installed) within float32 rounding.

docs/compile.md ("pith.compile") is what they check: the stats (frames_seen, frames_captured,
frames_skipped, skip_reasons, compiles, cache_hits, guard_failures), reset(),
hook_installed(), _cache_size(), OptimizedModule and Unsupported. The programs compiled here
live in _compile_programs.py, whose file name and line numbers the skip reasons name."""
import cProfile
import gc
import inspect
import math
import os
import pathlib
import pstats
import subprocess
import sys
import threading
import warnings
import weakref

import numpy as np
import pytest

import pith
import pith.compiler
import pith.nn as nn
from pith.utils import DispatchMode, no_dispatch

import _compile_programs as programs
from conftest import to_numpy

PROGRAMS_FILE = pathlib.Path(programs.__file__).name
HERE = pathlib.Path(__file__).resolve().parent


@pytest.fixture(autouse=True)
def fresh_compiler():
    """Each test starts with empty caches and zeroed stats, and leaves no entry behind (the
    leak fixture of conftest counts the tensors the caches would hold). The tests run their
    models for inference, under no_grad: with grad mode on, a region whose parameters
    require grad runs eagerly and records (Note [Compiled regions do not record]), which
    test_a_region_that_would_record_runs_eagerly_with_gradients checks."""
    pith.compiler.reset()
    with pith.no_grad():
        yield
    pith.compiler.reset()


def test_a_region_that_would_record_runs_eagerly_with_gradients():
    with pith.enable_grad():
        model = nn.Linear(3, 2)
        compiled = pith.compile(model)
        x = pith.randn(4, 3)
        compiled(x).sum().backward()
        got = model.weight.grad.clone()
        model.zero_grad()
        model(x).sum().backward()
        assert to_numpy(got).tolist() == to_numpy(model.weight.grad).tolist()
        assert stats()["compiles"] == 0
        assert any("requires grad and grad mode is on" in r for r in stats()["skip_reasons"])
    # the same module under no_grad compiles, and its graph is not reused with grad on
    with pith.no_grad():
        compiled(x)
        assert stats()["compiles"] == 1
    with pith.enable_grad():
        out = compiled(x)
        assert out.requires_grad and out.grad_fn is not None


def stats():
    return pith.compiler.stats()


def assert_same(got, expected):
    """`got` is `expected` bit for bit: the same type, dtype, shape and bytes (tensors), or
    equal containers of such values (anything else compares with ==)."""
    if isinstance(expected, pith.Tensor):
        assert type(got) is type(expected)
        assert got.dtype == expected.dtype
        assert tuple(got.shape) == tuple(expected.shape)
        assert to_numpy(got).tobytes() == to_numpy(expected).tobytes()
    elif isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for g, e in zip(got, expected):
            assert_same(g, e)
    else:
        assert got == expected


def line_of(obj, fragment):
    """The line number of the first line of `obj`'s source that contains `fragment`."""
    lines, first = inspect.getsourcelines(obj)
    for i, line in enumerate(lines):
        if fragment in line:
            return first + i
    raise AssertionError(f"{fragment!r} is not in the source of {obj!r}")


def randn(*shape, dtype=pith.float32):
    return pith.randn(*shape, dtype=dtype)


def run_script(source, **env):
    """Runs `source` in a fresh interpreter with tests/python on its path; returns the
    CompletedProcess (stdout and stderr as text)."""
    environment = dict(os.environ, **env)
    environment["PYTHONPATH"] = os.pathsep.join(
        [str(HERE)] + [p for p in sys.path if p and os.path.isdir(p)])
    return subprocess.run([sys.executable, "-c", source], capture_output=True, text=True,
                          env=environment, timeout=120)


# ---- pith.compile's API ------------------------------------------------------------------

def test_compiled_function_matches_eager():
    x = randn(3, 4)
    assert_same(pith.compile(programs.affine)(x), programs.affine(x))


def test_decorator_forms_compile_and_match_eager():
    @pith.compile
    def plain(x):
        return x * 3 - 1

    @pith.compile(fullgraph=True)
    def whole(x):
        return (x + 1).relu()

    x = randn(5)
    assert_same(plain(x), x * 3 - 1)
    assert_same(whole(x), (x + 1).relu())
    assert stats()["compiles"] == 2
    assert stats()["frames_skipped"] == 0


def test_disable_returns_the_model_unchanged():
    m = programs.Small()
    assert pith.compile(programs.affine, disable=True) is programs.affine
    assert pith.compile(m, disable=True) is m


def test_a_backend_other_than_pith_is_a_value_error():
    with pytest.raises(ValueError, match="inductor"):
        pith.compile(programs.affine, backend="inductor")(randn(2))


def test_dynamic_must_be_none_or_a_bool():
    with pytest.raises(TypeError, match="dynamic"):
        pith.compile(programs.affine, dynamic="yes")


def test_mode_and_options_are_accepted():
    x = randn(3)
    f = pith.compile(programs.affine, dynamic=False, mode="default", options={})
    assert_same(f(x), programs.affine(x))


# ---- OptimizedModule ---------------------------------------------------------------------

def test_compiled_module_is_an_optimized_module_holding_the_original():
    m = programs.MLP()
    opt = pith.compile(m)
    assert isinstance(opt, pith.compiler.OptimizedModule)
    assert isinstance(opt, nn.Module)
    assert opt._orig_mod is m
    x = randn(2, 8)
    assert_same(opt(x), m(x))


def test_optimized_module_shares_parameters_and_buffers():
    m = programs.Scaled()
    opt = pith.compile(m)
    assert [id(p) for p in opt.parameters()] == [id(p) for p in m.parameters()]
    assert [id(b) for b in opt.buffers()] == [id(b) for b in m.buffers()]
    assert opt.fc is m.fc and opt.offset is m.offset


def test_optimized_module_state_dict_keys_carry_the_orig_mod_prefix():
    m = programs.Scaled()
    opt = pith.compile(m)
    expected = ["_orig_mod." + k for k in m.state_dict()]
    assert list(opt.state_dict()) == expected
    assert [name for name, _ in opt.named_parameters()] == [
        "_orig_mod." + name for name, _ in m.named_parameters()]
    for key, value in m.state_dict().items():
        assert_same(opt.state_dict()["_orig_mod." + key], value)


def test_optimized_module_loads_its_own_state_dict_into_the_original():
    source, target = programs.MLP(), programs.MLP()
    opt = pith.compile(target)
    opt.load_state_dict(pith.compile(source).state_dict())
    x = randn(3, 8)
    assert_same(opt(x), source(x))
    assert_same(target.fc1.weight, source.fc1.weight)


def test_optimized_module_attribute_reads_fall_through_and_eval_reaches_the_original():
    m = programs.Scaled()
    opt = pith.compile(m)
    assert opt.gain == 2.0 and opt.shift is False
    opt.eval()
    assert m.training is False
    opt.train()
    assert m.training is True


# ---- caching and guards --------------------------------------------------------------------

def test_identical_inputs_do_not_recompile():
    f = pith.compile(programs.affine)
    x = randn(4, 3)
    expected = programs.affine(x)
    assert_same(f(x), expected)
    assert stats()["compiles"] == 1
    hits = stats()["cache_hits"]
    for _ in range(5):
        assert_same(f(x), expected)
        other = randn(4, 3)  # new values, same metadata
        assert_same(f(other), programs.affine(other))
    assert stats()["compiles"] == 1
    assert stats()["cache_hits"] == hits + 10
    assert stats()["guard_failures"] == []


def test_identical_inputs_of_a_module_do_not_recompile():
    m = programs.MLP()
    opt = pith.compile(m)
    x = randn(2, 8)
    opt(x)
    compiles, hits = stats()["compiles"], stats()["cache_hits"]
    for _ in range(3):
        assert_same(opt(x), m(x))
    assert stats()["compiles"] == compiles
    assert stats()["cache_hits"] == hits + 3


CHANGES = {
    # name: (first input, second input, the field the guard failure names)
    "size": (lambda: randn(4, 3), lambda: randn(5, 3), "size[0]"),
    "stride": (lambda: randn(4, 4), lambda: randn(4, 4).t(), "stride"),
    "dtype": (lambda: randn(4, 3), lambda: randn(4, 3, dtype=pith.float64), "dtype"),
    "ndim": (lambda: randn(4, 3), lambda: randn(4, 3, 1), "ndim"),
}


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_a_change_of_input_metadata_recompiles_once_naming_the_field(change):
    first, second, field = CHANGES[change]
    x, y = first(), second()
    f = pith.compile(programs.affine)
    assert_same(f(x), programs.affine(x))
    assert_same(f(y), programs.affine(y))
    assert stats()["compiles"] == 2
    failures = stats()["guard_failures"]
    assert len(failures) == 1
    assert field in failures[0] and failures[0].startswith("x"), failures
    for _ in range(2):  # both entries stay cached
        assert_same(f(x), programs.affine(x))
        assert_same(f(y), programs.affine(y))
    assert stats()["compiles"] == 2


def test_a_python_scalar_changing_value_recompiles():
    x = randn(3)
    f = pith.compile(programs.with_scalar)
    assert_same(f(x, 2), programs.with_scalar(x, 2))
    assert_same(f(x, 3), programs.with_scalar(x, 3))
    assert stats()["compiles"] == 2
    (failure,) = stats()["guard_failures"]
    assert "alpha" in failure and "value" in failure
    assert_same(f(x, 2), programs.with_scalar(x, 2))
    assert stats()["compiles"] == 2


def test_a_python_scalar_changing_type_but_not_value_is_seen():
    # 2 == 2.0, but an int64 tensor times 2.0 is float32 (a value-only guard would be wrong)
    x = pith.arange(4)
    f = pith.compile(programs.with_scalar)
    assert_same(f(x, 2), programs.with_scalar(x, 2))
    assert_same(f(x, 2.0), programs.with_scalar(x, 2.0))
    assert f(x, 2.0).dtype == pith.float32


class MySub(pith.Tensor):
    """A subclass without __pith_dispatch__ (no Python key)."""


def test_a_tensor_subclass_input_fails_the_type_guard():
    x = randn(3)
    sub = pith.Tensor._make_subclass(MySub, randn(3))
    f = pith.compile(programs.affine)
    assert_same(f(x), programs.affine(x))
    assert_same(f(sub), programs.affine(sub))
    assert any("type" in failure for failure in stats()["guard_failures"])
    assert_same(f(x), programs.affine(x))


def test_a_rebound_global_is_followed(monkeypatch):
    x = randn(3)
    f = pith.compile(programs.scaled)
    assert_same(f(x), programs.scaled(x))
    monkeypatch.setattr(programs, "SCALE", 3.0)
    assert_same(f(x), x * 3.0)
    assert stats()["compiles"] == 2
    assert any("SCALE" in failure for failure in stats()["guard_failures"])


def test_a_rebound_global_function_is_followed(monkeypatch):
    x = randn(6)
    f = pith.compile(programs.activated)
    assert_same(f(x), pith.relu(x) + 1)
    monkeypatch.setattr(programs, "ACTIVATION", pith.sigmoid)
    assert_same(f(x), pith.sigmoid(x) + 1)


def test_a_global_shadowing_a_builtin_is_followed(monkeypatch):
    x = randn(2, 3)
    f = pith.compile(programs.rank_times)
    assert_same(f(x), x * 2)
    monkeypatch.setattr(programs, "len", lambda shape: 7, raising=False)
    assert_same(f(x), x * 7)


def test_a_replaced_submodule_is_seen():
    m = programs.Small()
    opt = pith.compile(m)
    x = randn(2, 4)
    assert_same(opt(x), m(x))
    m.fc = nn.Linear(4, 3)
    assert_same(opt(x), m.fc(x).relu())
    assert any("fc" in failure or "_modules" in failure
               for failure in stats()["guard_failures"])


def test_a_changed_module_constant_and_flag_are_seen():
    m = programs.Scaled()
    opt = pith.compile(m)
    x = randn(2, 4)
    assert_same(opt(x), m(x))
    m.gain = 3.0
    assert_same(opt(x), m.fc(x) * 3.0 + m.offset)
    m.shift = True
    assert_same(opt(x), m.fc(x) * 3.0 + m.offset - 1)


def test_an_in_place_update_of_a_parameter_is_seen_without_recompiling():
    m = programs.Small()
    opt = pith.compile(m)
    x = randn(2, 4)
    opt(x)
    with pith.no_grad():
        m.fc.weight.mul_(2)
    assert_same(opt(x), m(x))
    with pith.no_grad():
        m.fc.bias.fill_(0.25)
    assert_same(opt(x), m(x))
    assert stats()["compiles"] == 1
    assert stats()["guard_failures"] == []


def test_an_in_place_update_of_a_buffer_is_seen_without_recompiling():
    m = programs.Scaled()
    opt = pith.compile(m)
    x = randn(2, 4)
    opt(x)
    m.offset.add_(5)
    assert_same(opt(x), m(x))
    assert stats()["compiles"] == 1


def test_a_reassigned_parameter_is_seen():
    m = programs.Small()
    opt = pith.compile(m)
    x = randn(2, 4)
    opt(x)
    m.fc.weight = nn.Parameter(randn(3, 4))
    assert_same(opt(x), m(x))


def test_an_in_place_update_of_a_global_tensor_is_seen():
    x = randn(3)
    f = pith.compile(programs.plus_bias)
    assert_same(f(x), programs.plus_bias(x))
    programs.BIAS.fill_(1.5)
    try:
        assert_same(f(x), x + 1.5)
    finally:
        programs.BIAS.zero_()


def test_a_global_tensor_is_compiled():
    x = randn(3)
    f = pith.compile(programs.plus_bias)
    f(x)
    captured = stats()["frames_captured"]
    assert_same(f(x), programs.plus_bias(x))
    assert stats()["frames_captured"] == captured + 1
    assert stats()["skip_reasons"] == []


def test_a_changed_default_dtype_is_seen():
    x = pith.arange(3)
    f = pith.compile(programs.plus_default_ones)
    assert_same(f(x), programs.plus_default_ones(x))
    pith.set_default_dtype(pith.float64)
    try:
        expected = programs.plus_default_ones(x)
        got = f(x)
    finally:
        pith.set_default_dtype(pith.float32)
    assert expected.dtype == pith.float64
    assert_same(got, expected)


def test_an_updated_closure_cell_is_followed():
    adjustable, set_factor = programs.make_adjustable()
    x = randn(3)
    f = pith.compile(adjustable)
    assert_same(f(x), x * 2.0)
    set_factor(5.0)
    assert_same(f(x), x * 5.0)


def test_a_replaced_nested_submodule_is_seen():
    pith.manual_seed(0)
    m = programs.Block().eval()
    opt = pith.compile(m)
    x = randn(2, 3, 16)
    assert_same(opt(x), m(x))
    m.attn.proj = nn.Linear(16, 16)
    assert_same(opt(x), m(x))


def test_a_module_appended_to_a_module_list_is_seen():
    m = programs.Stack()
    opt = pith.compile(m)
    x = randn(2, 8)
    assert_same(opt(x), m(x))
    m.layers.append(nn.Linear(8, 8))
    assert_same(opt(x), m(x))


def test_switching_a_compiled_model_to_training_is_seen():
    pith.manual_seed(0)
    m = programs.Block().eval()
    opt = pith.compile(m)
    x = randn(2, 3, 16)
    assert_same(opt(x), m(x))
    m.train()
    pith.manual_seed(7)
    expected = m(x)
    pith.manual_seed(7)
    assert_same(opt(x), expected)


# ---- mutation, aliasing and randomness -------------------------------------------------------

@pytest.mark.parametrize("aliased", [False, True], ids=["distinct", "aliased"])
def test_in_place_ops_on_inputs_are_visible_to_the_caller(aliased):
    f = pith.compile(programs.mutates)
    x, y = randn(3), randn(3)
    f(x.clone(), y.clone())  # compiled for distinct inputs
    got_x, expected_x = x.clone(), x.clone()
    got = f(got_x, got_x if aliased else y)
    expected = programs.mutates(expected_x, expected_x if aliased else y)
    assert_same(got, expected)
    assert_same(got_x, expected_x)


def test_a_view_returned_by_a_compiled_function_aliases_its_input():
    f = pith.compile(programs.flat_view)
    x = randn(2, 3)
    f(x)
    y = f(x)
    assert_same(y, x.view(-1))
    y.fill_(4.0)
    assert_same(x, pith.full((2, 3), 4.0))


def test_random_ops_follow_the_generator_and_are_not_frozen():
    f = pith.compile(programs.noisy)
    x = randn(4)
    f(x)
    pith.manual_seed(3)
    expected = [programs.noisy(x), programs.noisy(x)]
    pith.manual_seed(3)
    got = [f(x), f(x)]
    assert_same(got, expected)
    assert to_numpy(got[0]).tobytes() != to_numpy(got[1]).tobytes()


def test_dropout_in_training_mode_follows_the_generator():
    m = programs.Block().train()
    opt = pith.compile(m)
    x = randn(2, 3, 16)
    opt(x)
    pith.manual_seed(5)
    expected = [m(x), m(x)]
    pith.manual_seed(5)
    assert_same([opt(x), opt(x)], expected)


# ---- the cache limit -----------------------------------------------------------------------

def test_with_dynamic_false_past_eight_entries_a_code_runs_eagerly_and_warns_once():
    f = pith.compile(programs.affine, dynamic=False)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for n in range(1, 13):
            x = randn(n, 2)
            assert_same(f(x), programs.affine(x))
        assert stats()["compiles"] == 8
        for n in (3, 10, 11, 12):  # cached ones and eager ones, again
            x = randn(n, 2)
            assert_same(f(x), programs.affine(x))
    assert stats()["compiles"] == 8
    user_warnings = [w for w in caught if issubclass(w.category, UserWarning)]
    assert len(user_warnings) == 1, [str(w.message) for w in user_warnings]


@pytest.mark.parametrize("dynamic", [None, True])
def test_past_eight_entries_the_least_recently_used_makes_room(dynamic):
    f = pith.compile(programs.affine, dynamic=dynamic)
    xs = {n: randn(n, 2) for n in range(1, 13)}
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no warning: this is not a limit
        for n in range(1, 13):
            assert_same(f(xs[n]), programs.affine(xs[n]))
        assert stats()["compiles"] == 12 and stats()["evictions"] == 4
        assert pith.compiler._cache_size() == 8
        for n in (12, 3):  # 12 is cached; 3 was among the four evicted (1 to 4)
            assert_same(f(xs[n]), programs.affine(xs[n]))
    assert stats()["compiles"] == 13 and stats()["frames_skipped"] == 0
    assert stats()["cache_hits"] == 1


def test_a_generation_loop_with_a_growing_dim_stays_compiled_and_matches_eager():
    import _compile_gpt as gpt
    config = gpt.GPTConfig(block_size=80)
    pith.manual_seed(0)
    model = gpt.GPT(config).eval()
    compiled = pith.compile(model)
    idx = pith.randint(0, config.vocab_size, (1, 4))
    eager_idx = idx
    with pith.no_grad():
        for step in range(64):
            logits = compiled(idx)
            expected = model(eager_idx)
            assert_same(logits, expected)
            nxt = logits[:, -1, :].argmax(dim=-1, keepdim=True)
            idx = pith.cat([idx, nxt], dim=1)
            eager_idx = pith.cat([eager_idx, expected[:, -1, :].argmax(dim=-1, keepdim=True)],
                                 dim=1)
            assert pith.compiler._cache_size() <= 8
    assert stats()["frames_skipped"] == 0 and stats()["compiles"] == 64


def test_the_cache_limit_is_per_module_instance():
    first, second = programs.Small(), programs.Small()
    opt_first, opt_second = pith.compile(first, dynamic=False), pith.compile(second)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        for n in range(1, 11):
            opt_first(randn(n, 4))
    compiles, captured = stats()["compiles"], stats()["frames_captured"]
    x = randn(2, 4)
    assert_same(opt_second(x), second(x))
    assert stats()["compiles"] == compiles + 1
    assert stats()["frames_captured"] > captured


# ---- fallback ------------------------------------------------------------------------------

FALLBACKS = {
    # name: (program, the fragment of its offending line, a word the reason contains)
    "bool": (programs.branch_on_tensor, "if x.sum() > 0", "bool"),
    "item": (programs.calls_item, ".item()", "item"),
    "print": (programs.prints, 'print("before"', "print"),
}


@pytest.mark.parametrize("name", sorted(FALLBACKS))
def test_unsupported_code_falls_back_and_is_marked_skip(name, capsys):
    program, fragment, word = FALLBACKS[name]
    f = pith.compile(program)
    xs = [randn(3), -randn(3).abs(), randn(3).abs()]
    assert_same(f(xs[0]), program(xs[0]))
    compiles, skipped = stats()["compiles"], stats()["frames_skipped"]
    assert skipped >= 1
    line = line_of(program, fragment)
    reasons = stats()["skip_reasons"]
    assert any(word in r and f"{PROGRAMS_FILE}, line {line}" in r for r in reasons), reasons
    for x in xs:
        assert_same(f(x), program(x))
    assert stats()["compiles"] == compiles
    assert stats()["frames_skipped"] >= skipped + len(xs)
    assert len(stats()["skip_reasons"]) == len(reasons)


@pytest.mark.parametrize("name", sorted(FALLBACKS))
def test_fullgraph_raises_unsupported_naming_the_file_and_line(name, capsys):
    program, fragment, word = FALLBACKS[name]
    f = pith.compile(program, fullgraph=True)
    line = line_of(program, fragment)
    for _ in range(2):  # not silently marked skip: it raises every time
        with pytest.raises(pith.compiler.Unsupported) as info:
            f(randn(3))
        message = str(info.value)
        assert PROGRAMS_FILE in message and f"line {line}" in message, message
        assert word in message, message
    assert isinstance(info.value, RuntimeError)
    assert capsys.readouterr().out == ""  # raised before anything ran


SKIPPING = {
    # name: (program, a way to call it)
    # only code the contract says falls back
    "list_method": (programs.appends, lambda f: f(randn(3))),
    "global_write": (programs.writes_global, lambda f: f(randn(3))),
    "generator": (programs.drives_generator, lambda f: f(randn(3))),
    "attribute_write": (programs.Counting(), lambda f: f(randn(2, 4))),
    "item": (programs.calls_item, lambda f: f(randn(3))),
}


@pytest.mark.parametrize("name", sorted(SKIPPING))
def test_skip_reasons_are_formatted(name, monkeypatch):
    monkeypatch.setattr(programs, "EVENTS", [])
    monkeypatch.setattr(programs, "COUNTER", 0)
    program, call = SKIPPING[name]
    call(pith.compile(program))
    (reason,) = stats()["skip_reasons"]
    assert "%" not in reason and reason.isprintable(), reason
    assert f"{PROGRAMS_FILE}, line " in reason, reason
    assert reason.endswith(")") and " (" in reason, reason  # "reason (file, line N)"


def test_a_failing_call_does_not_stop_later_calls_from_compiling():
    # a user error (mismatched shapes) is not unsupported code: the code stays compilable
    f = pith.compile(programs.add)
    with pytest.raises(Exception):
        f(randn(3), randn(4))
    captured = stats()["frames_captured"]
    x = randn(3)
    assert_same(f(x, x), programs.add(x, x))
    assert stats()["frames_captured"] == captured + 1


def test_fullgraph_belongs_to_the_compiled_callable_not_to_the_code():
    x = randn(3)
    with pytest.raises(pith.compiler.Unsupported):
        pith.compile(programs.branch_on_tensor, fullgraph=True)(x)
    # the same function compiled without fullgraph falls back, before and after reset()
    assert_same(pith.compile(programs.branch_on_tensor)(x), programs.branch_on_tensor(x))
    pith.compiler.reset()
    assert_same(pith.compile(programs.branch_on_tensor)(x), programs.branch_on_tensor(x))


def test_fullgraph_on_a_module_raises_unsupported():
    opt = pith.compile(programs.Counting(), fullgraph=True)
    line = line_of(programs.Counting, "self.calls += 1")
    with pytest.raises(pith.compiler.Unsupported, match=f"line {line}"):
        opt(randn(2, 4))


def test_a_skipped_parent_forward_still_captures_its_submodules(capsys):
    m = programs.Chatty()
    opt = pith.compile(m)
    x = randn(3, 4)
    expected = m(x)
    assert_same(opt(x), expected)
    assert stats()["compiles"] == 2  # fc1 and fc2, each its own region
    captured = stats()["frames_captured"]
    assert captured == 2
    assert any("print" in r for r in stats()["skip_reasons"])
    assert_same(opt(x), expected)
    assert stats()["frames_captured"] == captured + 2
    assert stats()["compiles"] == 2
    assert capsys.readouterr().out == "forward of Chatty\n" * 3


def test_an_attribute_write_falls_back_and_happens_once_per_call():
    m = programs.Counting()
    opt = pith.compile(m)
    twin = programs.Counting()
    twin.load_state_dict(m.state_dict())
    x = randn(2, 4)
    for _ in range(3):
        assert_same(opt(x), twin(x))
    assert m.calls == 3


def test_a_module_with_a_forward_hook_runs_the_hook_once_per_call():
    calls = []

    def hook(module, args, output):
        calls.append(len(args))
        return output * 10

    m = programs.Small()
    m.register_forward_hook(hook)
    opt = pith.compile(m)
    x = randn(2, 4)
    expected = m(x)
    assert calls == [1]
    for _ in range(2):
        assert_same(opt(x), expected)
    assert calls == [1, 1, 1]


def test_a_forward_hook_added_to_a_submodule_after_compiling_is_run():
    m = programs.MLP()
    opt = pith.compile(m)
    x = randn(2, 8)
    opt(x)
    calls = []

    def hook(module, args, output):
        calls.append(module)
        return output + 1

    m.fc1.register_forward_hook(hook)
    expected = m(x)
    assert_same(opt(x), expected)
    assert calls == [m.fc1, m.fc1]


# ---- side effects --------------------------------------------------------------------------

def test_prints_happen_once_in_order(capsys):
    f = pith.compile(programs.prints)
    x = randn(3)
    expected = programs.prints(x)
    eager_out = capsys.readouterr().out
    assert eager_out == "before 3\nafter\n"
    assert_same(f(x), expected)
    assert_same(f(x), expected)
    assert capsys.readouterr().out == eager_out * 2


def test_list_appends_happen_once_in_order(monkeypatch):
    x = randn(3)
    monkeypatch.setattr(programs, "EVENTS", [])
    expected = programs.appends(x)
    eager_events = list(programs.EVENTS)
    monkeypatch.setattr(programs, "EVENTS", [])
    f = pith.compile(programs.appends)
    assert_same(f(x), expected)
    assert_same(f(x), expected)
    assert programs.EVENTS == eager_events * 2


def test_global_writes_happen_once_per_call(monkeypatch):
    x = randn(3)
    monkeypatch.setattr(programs, "COUNTER", 0)
    expected = [programs.writes_global(x) for _ in range(3)]
    monkeypatch.setattr(programs, "COUNTER", 0)
    f = pith.compile(programs.writes_global)
    got = [f(x) for _ in range(3)]
    assert programs.COUNTER == 3
    assert_same(got, expected)


def test_interleaved_side_effects_keep_their_order(monkeypatch, capsys):
    x = randn(3)
    monkeypatch.setattr(programs, "EVENTS", [])
    monkeypatch.setattr(programs, "COUNTER", 0)
    expected = [programs.interleaved(x) for _ in range(2)]
    eager = (list(programs.EVENTS), capsys.readouterr().out)
    monkeypatch.setattr(programs, "EVENTS", [])
    monkeypatch.setattr(programs, "COUNTER", 0)
    f = pith.compile(programs.interleaved)
    got = [f(x) for _ in range(2)]
    assert (programs.EVENTS, capsys.readouterr().out) == eager
    assert_same(got, expected)


def test_a_property_read_in_forward_runs_once_per_call():
    m = programs.WithProperty()
    opt = pith.compile(m)
    x = randn(2, 4)
    expected = m(x)
    assert m.reads == 1
    assert_same(opt(x), expected)
    assert_same(opt(x), expected)
    assert m.reads == 3


# ---- exceptions and with blocks ------------------------------------------------------------

def eager_error(call):
    with pytest.raises(Exception) as info:
        call()
    return info.value


def test_a_shape_mismatch_raises_the_eager_exception_type():
    x, y = randn(3), randn(4)
    error = eager_error(lambda: programs.add(x, y))
    f = pith.compile(programs.add)
    with pytest.raises(type(error)) as info:
        f(x, y)
    assert type(info.value) is type(error)
    assert str(info.value) == str(error)


def test_a_shape_mismatch_after_compiling_raises_the_eager_exception_type():
    f = pith.compile(programs.add)
    x, y = randn(3), randn(4)
    assert_same(f(x, x), programs.add(x, x))
    error = eager_error(lambda: programs.add(x, y))
    with pytest.raises(type(error)) as info:
        f(x, y)
    assert type(info.value) is type(error)
    assert_same(f(x, x), programs.add(x, x))


def test_a_module_called_with_the_wrong_features_raises_the_eager_exception_type():
    m = programs.MLP()
    opt = pith.compile(m)
    opt(randn(2, 8))
    bad = randn(2, 5)
    error = eager_error(lambda: m(bad))
    with pytest.raises(type(error)) as info:
        opt(bad)
    assert type(info.value) is type(error)


def test_a_value_error_raised_by_user_code_propagates():
    f = pith.compile(programs.raises_value_error)
    for _ in range(2):
        with pytest.raises(ValueError, match="bad input"):
            f(randn(2))
    opt = pith.compile(programs.Strict())
    with pytest.raises(ValueError, match="strict mode"):
        opt(randn(2))


def test_a_with_block_exits():
    manager = programs.Recorder()
    f = pith.compile(programs.inside_with)
    x = randn(3)
    for _ in range(2):
        assert_same(f(x, manager), x * 2 + 1)
    assert manager.events == ["enter", ("exit", None)] * 2


def test_a_with_block_exits_when_its_body_raises():
    manager = programs.Recorder()
    f = pith.compile(programs.raises_inside_with)
    for _ in range(2):
        with pytest.raises(ValueError, match="inside 1"):
            f(randn(3), manager)
    assert manager.events == ["enter", ("exit", ValueError)] * 2


# ---- generators, coroutines, recursion -----------------------------------------------------

def test_a_generator_built_and_driven_inside_a_region_is_untouched():
    x = randn(3)
    f = pith.compile(programs.drives_generator)
    expected = programs.drives_generator(x)
    assert expected[1] == [("got", "s"), ("caught", "k"), "closed"]
    for _ in range(2):
        assert_same(f(x), expected)


def test_a_generator_suspended_outside_is_resumed_correctly_inside_a_region():
    x = randn(2)

    def drive(run):
        log = []
        g = programs.counting(log)
        first = next(g)
        result = run(x + first, g)
        return result, log

    eager = drive(programs.resumes_generator)
    f = pith.compile(programs.resumes_generator)
    assert_same(drive(f), eager)
    assert_same(drive(f), eager)
    assert eager[1] == [("got", "inside"), ("caught", "k2"), "closed"]


def test_coroutines_driven_inside_a_region_are_untouched():
    x = randn(3)
    f = pith.compile(programs.drives_coroutines)
    expected = programs.drives_coroutines(x)
    assert expected[1][-1] == "finally"
    for _ in range(2):
        assert_same(f(x), expected)


def test_deep_recursion_inside_a_region_raises_recursion_error():
    # In a fresh interpreter: a crash (C stack overflow) must fail this test, not the suite.
    result = run_script("""
import pith, pith.compiler
import _compile_programs as p
try:
    p.recurses(pith.ones(2))
except RecursionError:
    print("eager RecursionError")
f = pith.compile(p.recurses)
for _ in range(2):
    try:
        f(pith.ones(2))
    except RecursionError:
        print("compiled RecursionError")
print("installed", pith.compiler.hook_installed())
g = pith.compile(p.recurses_a_little)
print("after", g(pith.ones(2)).tolist() == p.recurses_a_little(pith.ones(2)).tolist())
""")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines() == [
        "eager RecursionError", "compiled RecursionError", "compiled RecursionError",
        "installed False", "after True"]


# ---- signatures and closures -------------------------------------------------------------

def test_every_parameter_kind_works():
    a, b, c, t1, t2 = (randn(64) for _ in range(5))
    f = pith.compile(programs.signature_forms)
    calls = [
        lambda fn: fn(a, d=2.0),
        lambda fn: fn(a, b, d=2.0),
        lambda fn: fn(a, b, c, d=0.5),
        lambda fn: fn(a, b, c, t1, t2, d=2.0, e=1.0),
        lambda fn: fn(a, b, c, t1, d=3.0, k1=2.0, k2=t2),
        lambda fn: fn(a, 1.5, c=t1, d=2.0, e=t2),
    ]
    for call in calls:
        assert_same(call(f), call(programs.signature_forms))
    with pytest.raises(TypeError):
        f(a)  # d is required, as eager
    with pytest.raises(TypeError):
        f(a=a, d=1.0)  # a is positional-only


def test_the_order_of_kwargs_is_seen():
    # kwargs.values() is iterated in call order, and (y * 3) * t != (y * t) * 3 in float32
    a, t = randn(64), randn(64)
    f = pith.compile(programs.signature_forms)
    assert_same(f(a, d=1.0, k1=3.0, k2=t), programs.signature_forms(a, d=1.0, k1=3.0, k2=t))
    assert_same(f(a, d=1.0, k2=t, k1=3.0), programs.signature_forms(a, d=1.0, k2=t, k1=3.0))


def test_positional_only_keyword_only_and_defaults_are_compiled():
    a, c = randn(3), randn(3)
    f = pith.compile(programs.keyword_forms)
    calls = [
        lambda fn: fn(a, d=2.0),
        lambda fn: fn(a, 1.5, d=2.0),
        lambda fn: fn(a, 1.5, c, d=0.5, e=1.0),
        lambda fn: fn(a, c=c, e=2.0, d=3.0),
    ]
    for call in calls:
        captured = stats()["frames_captured"]
        assert_same(call(f), call(programs.keyword_forms))
        assert stats()["frames_captured"] == captured + 1
    assert stats()["frames_skipped"] == 0


def test_a_closure_over_a_python_value_and_a_tensor_works():
    for scale in (2.0, 3.0):
        closure = programs.make_closure(scale)
        x = randn(4)
        assert_same(pith.compile(closure)(x), closure(x))


def test_a_cell_variable_inside_the_compiled_function_works():
    x = randn(4)
    f = pith.compile(programs.uses_cell)
    for _ in range(2):
        assert_same(f(x), programs.uses_cell(x))


# ---- the hook's lifetime -------------------------------------------------------------------

def test_the_hook_is_installed_only_during_a_region():
    assert not pith.compiler.hook_installed()
    seen = []
    f = pith.compile(programs.records_hook_state)
    x = randn(2)
    assert_same(f(x, seen), x + 1)
    assert seen == [True]
    assert not pith.compiler.hook_installed()


def test_the_hook_is_uninstalled_after_an_exception():
    f = pith.compile(programs.raises_value_error)
    with pytest.raises(ValueError):
        f(randn(2))
    assert not pith.compiler.hook_installed()
    g = pith.compile(programs.add)
    with pytest.raises(Exception):
        g(randn(2), randn(3))
    assert not pith.compiler.hook_installed()


def test_nested_regions_restore_the_hook():
    seen = []
    inner = pith.compile(programs.records_hook_state)
    outer = pith.compile(programs.calls_compiled)
    x = randn(2)
    assert_same(outer(x, inner, seen), (x + 1) * 2)
    assert seen == [True, True, True]
    assert not pith.compiler.hook_installed()
    seen.clear()
    assert_same(inner(x, seen), x + 1)  # the inner one alone, afterwards
    assert seen == [True]
    assert not pith.compiler.hook_installed()


# ---- threads -------------------------------------------------------------------------------

def frames_seen_while_a_thread_calls(n):
    """frames_seen during one region of the main thread, while another thread makes n plain
    Python calls (it waits on C locks only, so that its own frames are fixed)."""
    go, finished, release = threading.Lock(), threading.Lock(), threading.Lock()
    for lock in (go, finished, release):
        lock.acquire()
    out = []

    def other():
        go.acquire()
        out.append(programs.thread_calls(n))
        finished.release()
        release.acquire()

    thread = threading.Thread(target=other)
    thread.start()
    f = pith.compile(programs.waits_for_thread)
    x = randn(2)
    before = stats()["frames_seen"], stats()["frames_captured"]
    result = f(x, go, finished)
    after = stats()["frames_seen"], stats()["frames_captured"]
    release.release()
    thread.join()
    assert out == [n]
    assert_same(result, x + 1)
    return after[0] - before[0], after[1] - before[1]


def test_another_threads_calls_are_not_captured():
    frames_seen_while_a_thread_calls(0)  # the first call compiles (or marks skip)
    quiet = frames_seen_while_a_thread_calls(0)
    busy = frames_seen_while_a_thread_calls(300)
    assert busy == quiet
    assert not pith.compiler.hook_installed()


def test_four_threads_calling_one_compiled_module_get_eager_results():
    m = programs.MLP()
    opt = pith.compile(m)
    inputs = [randn(batch, 8) for batch in (2, 3, 4, 5)]
    expected = [m(x) for x in inputs]
    barrier = threading.Barrier(4)
    errors = []

    def work(i):
        barrier.wait()
        for _ in range(30):
            with pith.no_grad():  # grad mode is per thread: each starts with it on
                got = opt(inputs[i])
            if to_numpy(got).tobytes() != to_numpy(expected[i]).tobytes():
                errors.append(i)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert stats()["compiles"] == 4
    assert not pith.compiler.hook_installed()


# ---- lifetime and leaks --------------------------------------------------------------------

def test_dropped_modules_leave_no_cache_entries():
    assert pith.compiler._cache_size() == 0
    x = randn(2, 4)
    alive = [pith.compile(programs.Small()) for _ in range(10)]
    for opt in alive:
        opt(x)
    assert pith.compiler._cache_size() >= 10
    ref = weakref.ref(alive[0]._orig_mod)
    del alive, opt
    gc.collect()
    assert ref() is None
    assert pith.compiler._cache_size() == 0
    for _ in range(1000):
        opt = pith.compile(programs.Small())
        opt(x)
        del opt
    gc.collect()
    assert pith.compiler._cache_size() == 0


def test_reset_clears_every_cache_entry():
    m = programs.Small()
    opt = pith.compile(m)
    opt(randn(2, 4))
    assert pith.compiler._cache_size() > 0
    pith.compiler.reset()
    assert pith.compiler._cache_size() == 0
    assert stats()["compiles"] == 0 and stats()["frames_seen"] == 0
    assert stats()["skip_reasons"] == [] and stats()["guard_failures"] == []


def assert_calls_leak_nothing(call, *inputs, n):
    for _ in range(3):
        call()
    gc.collect()
    live, cache = pith._C._live_tensors(), pith.compiler._cache_size()
    counts = [sys.getrefcount(obj) for obj in inputs]
    objects = len(gc.get_objects())
    for _ in range(n):
        call()
    gc.collect()
    assert pith._C._live_tensors() == live
    assert pith.compiler._cache_size() == cache
    assert [sys.getrefcount(obj) for obj in inputs] == counts
    assert len(gc.get_objects()) - objects < 100  # a leak per call would be thousands


def test_ten_thousand_compiled_calls_leak_nothing():
    m = programs.Small()
    opt = pith.compile(m)
    x = randn(2, 4)
    assert_calls_leak_nothing(lambda: opt(x), x, m, m.fc.weight, n=10_000)


def test_fallback_calls_leak_nothing():
    f = pith.compile(programs.branch_on_tensor)
    x = randn(3)
    assert_calls_leak_nothing(lambda: f(x), x, n=2000)


def test_failing_compiled_calls_leak_nothing():
    f = pith.compile(programs.add)
    x, y = randn(3), randn(4)
    f(x, x)

    def call():
        try:
            f(x, y)
        except Exception:
            pass
    assert_calls_leak_nothing(call, x, y, n=2000)


# ---- Python keys, tracing and profiling --------------------------------------------------

class Recording(pith.Tensor):
    """A _make_subclass subclass whose handler records each op and runs it below the
    Python key."""

    calls = []

    @staticmethod
    def __new__(cls, elem):
        return pith.Tensor._make_subclass(cls, elem)

    @classmethod
    def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func.name)
        with no_dispatch():
            return func(*args, **(kwargs or {}))


class RecordingMode(DispatchMode):
    def __init__(self):
        self.calls = []

    def __pith_dispatch__(self, func, types, args=(), kwargs=None):
        self.calls.append(func.name)
        return func(*args, **(kwargs or {}))


class Wrapping(pith.Tensor):
    """A wrapper subclass (PyTorch's LoggingTensor): the data is in `elem`, every result is
    wrapped again, so that every op of a forward reaches the handler, which records it."""

    calls = []

    @staticmethod
    def __new__(cls, elem):
        r = pith.Tensor._make_wrapper_subclass(cls, elem.shape, strides=elem.stride(),
                                               dtype=elem.dtype, device=elem.device)
        r.elem = elem
        return r

    @classmethod
    def __pith_dispatch__(cls, func, types, args=(), kwargs=None):
        cls.calls.append(func.name)

        def unwrap(e):
            return e.elem if isinstance(e, Wrapping) else e

        args = [unwrap(a) for a in args]
        kwargs = {k: unwrap(v) for k, v in (kwargs or {}).items()}
        out = func(*args, **kwargs)
        if isinstance(out, pith.Tensor):
            return cls(out)
        return out


def test_a_plain_dispatch_subclass_input_runs_eagerly_and_its_handler_sees_its_ops():
    m = programs.MLP()
    opt = pith.compile(m)
    x = randn(2, 8)
    opt(x)  # compiled for plain tensors first
    Recording.calls = []
    expected = m(Recording(x))
    eager_calls = Recording.calls
    assert eager_calls
    for _ in range(2):  # each call runs eagerly
        Recording.calls = []
        assert_same(opt(Recording(x)), expected)
        assert Recording.calls == eager_calls


def test_a_wrapper_subclass_input_runs_eagerly_and_sees_every_op():
    m = programs.MLP()
    opt = pith.compile(m)
    x = randn(2, 8)
    opt(x)  # compiled for plain tensors first
    Wrapping.calls = []
    expected = m(Wrapping(x))
    eager_calls = Wrapping.calls
    assert len(eager_calls) >= 3  # linear, relu, linear at least
    captured = stats()["frames_captured"]
    for _ in range(2):
        Wrapping.calls = []
        got = opt(Wrapping(x))
        assert type(got) is Wrapping
        assert_same(got.elem, expected.elem)
        assert Wrapping.calls == eager_calls
    assert stats()["frames_captured"] == captured


def test_a_dispatch_subclass_does_not_mark_the_code_skip():
    f = pith.compile(programs.affine)
    x = randn(3)
    Recording.calls = []
    f(Recording(x))
    captured = stats()["frames_captured"]
    assert_same(f(x), programs.affine(x))
    assert stats()["frames_captured"] == captured + 1


def test_an_active_dispatch_mode_runs_eagerly_and_sees_every_op():
    m = programs.MLP()
    opt = pith.compile(m)
    x = randn(2, 8)
    opt(x)
    with RecordingMode() as mode:
        expected = m(x)
    assert mode.calls
    captured = stats()["frames_captured"]
    with RecordingMode() as compiled_mode:
        got = opt(x)
    assert compiled_mode.calls == mode.calls
    assert_same(got, expected)
    assert stats()["frames_captured"] == captured
    assert_same(opt(x), m(x))  # not marked skip: plain calls are captured again
    assert stats()["frames_captured"] > captured


def test_under_settrace_a_region_runs_eagerly():
    f = pith.compile(programs.affine)
    x = randn(3)
    f(x)
    captured = stats()["frames_captured"]
    assert captured > 0
    calls = []

    def tracer(frame, event, arg):
        if event == "call":
            calls.append(frame.f_code.co_name)
        return None

    previous = sys.gettrace()
    sys.settrace(tracer)
    try:
        got = f(x)
    finally:
        sys.settrace(previous)
    assert_same(got, programs.affine(x))
    assert "affine" in calls
    assert stats()["frames_captured"] == captured
    assert_same(f(x), programs.affine(x))
    assert stats()["frames_captured"] == captured + 1


def test_under_cprofile_a_region_runs_eagerly():
    m = programs.MLP()
    opt = pith.compile(m)
    x = randn(2, 8)
    opt(x)
    captured = stats()["frames_captured"]
    profiler = cProfile.Profile()
    profiler.enable()
    try:
        got = opt(x)
    finally:
        profiler.disable()
    assert_same(got, m(x))
    assert stats()["frames_captured"] == captured
    names = {name for (_, _, name) in pstats.Stats(profiler).stats}
    assert "forward" in names


# ---- PITH_LOG ------------------------------------------------------------------------------

def test_pith_log_compile_prints_compiles_recompiles_and_skips():
    result = run_script("""
import pith, pith.compiler
import _compile_programs as p
f = pith.compile(p.affine)
f(pith.ones(4))
f(pith.ones(5))
g = pith.compile(p.prints)
g(pith.ones(2))
""", PITH_LOG="compile")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "pith.compile" in line]
    assert all(line.startswith("pith.compile: ") for line in lines), lines
    assert len(lines) >= 3, lines
    assert any("size[0]" in line for line in lines), lines
    assert any("print" in line and PROGRAMS_FILE in line for line in lines), lines


def test_without_pith_log_compiling_prints_nothing(capfd):
    if os.environ.get("PITH_LOG"):
        pytest.skip("PITH_LOG is set")
    f = pith.compile(programs.affine)
    f(randn(4))
    f(randn(5))
    pith.compile(programs.prints)(randn(2))
    assert "pith.compile" not in capfd.readouterr().err


# ---- models --------------------------------------------------------------------------------

MODELS = {
    # name: (class name, its input)
    "mlp": ("MLP", lambda: randn(4, 8)),
    "transformer_block": ("Block", lambda: randn(2, 6, 16)),
    "classifier": ("Classifier", lambda: pith.randint(0, 50, (3, 7))),
    "stack": ("Stack", lambda: randn(5, 8)),
}


def make_model(name):
    pith.manual_seed(0)
    class_name, make_input = MODELS[name]
    return getattr(programs, class_name)().eval(), make_input()


@pytest.mark.parametrize("name", sorted(MODELS))
def test_model_compiles_as_one_graph_and_matches_eager(name):
    m, x = make_model(name)
    expected = m(x)
    opt = pith.compile(m, fullgraph=True)
    assert_same(opt(x), expected)
    assert stats()["frames_skipped"] == 0
    assert stats()["frames_captured"] >= 1
    compiles = stats()["compiles"]
    assert_same(opt(x), expected)
    assert stats()["compiles"] == compiles
    assert stats()["skip_reasons"] == []


def torch_class(torch, class_name):
    """The model's class with torch.nn as nn and torch.nn.functional as F: its source (and
    its dependencies') run in a namespace of torch."""
    namespace = {"nn": torch.nn, "F": torch.nn.functional, "math": math}
    for name in ("Attention", class_name):
        exec(inspect.getsource(getattr(programs, name)), namespace)
    return namespace[class_name]


@pytest.mark.parametrize("name", sorted(MODELS))
def test_compiled_model_matches_torch(name):
    torch = pytest.importorskip("torch")
    m, x = make_model(name)
    tm = torch_class(torch, MODELS[name][0])().eval()
    tm.load_state_dict({k: torch.from_numpy(to_numpy(v).copy())
                        for k, v in m.state_dict().items()})
    got = pith.compile(m, fullgraph=True)(x)
    with torch.no_grad():
        expected = tm(torch.from_numpy(to_numpy(x).copy())).numpy()
    assert stats()["frames_skipped"] == 0
    np.testing.assert_allclose(to_numpy(got), expected, rtol=1e-4, atol=1e-5)


# ---- more of the translator ----------------------------------------------------------------

def test_dtype_conversions_are_compiled():
    def convert(x):
        return x.float() * 2 + x.to(pith.float64).to(dtype=pith.float32) + x.int().float()

    f = pith.compile(convert, fullgraph=True)
    for dtype in (pith.float64, pith.float32, pith.float16):
        x = randn(5, dtype=dtype)
        assert_same(f(x), convert(x))
    assert stats()["frames_skipped"] == 0


def test_a_conversion_to_the_same_dtype_returns_the_argument_itself():
    def same(x):
        return x.float()

    f = pith.compile(same, fullgraph=True)
    x = randn(3)
    assert f(x) is x


def test_containers_the_frame_builds_and_reads_of_outside_dicts():
    config = {"scale": 2.0}

    def build(x, **kw):
        outs = []
        for i in range(3):
            outs.append(x * i)
        d = {}
        d.update(kw)
        s = d.pop("s", 1.0)
        outs.extend([x, x])
        return tuple(outs), s * config.get("scale", 0.0), config.get("missing")

    f = pith.compile(build, fullgraph=True)
    x = randn(3)
    assert_same(f(x, s=3.0), build(x, s=3.0))
    config["scale"] = 5.0  # a read of an outside dict is guarded
    assert_same(f(x, s=3.0), build(x, s=3.0))
    assert stats()["compiles"] == 2


class _Zipped(nn.Module):
    def __init__(self):
        super().__init__()
        self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
        self.weights = [0.5, 1.0, 2.0]

    def forward(self, x):
        acc = 0
        for i, (layer, w) in enumerate(zip(self.layers, self.weights)):
            acc = acc + layer(x) * w * i
        for layer in reversed(self.layers):
            acc = layer(acc)
        return acc * self.weights[0] * len(self.weights)


def test_enumerate_zip_reversed_and_a_list_attribute():
    m = _Zipped()
    cm = pith.compile(m, fullgraph=True)
    x = randn(2, 4)
    with pith.no_grad():
        assert_same(cm(x), m(x))
        m.weights[0] = 3.0  # a list changes in place: its items are guarded
        assert_same(cm(x), m(x))
    assert stats()["compiles"] == 2
    assert any("changed" in g for g in stats()["guard_failures"])


def test_type_and_isinstance_see_a_parameters_own_type():
    class Checks(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(pith.ones(3))

        def forward(self, x):
            flag = isinstance(self.w, nn.Parameter) and type(self.w) is nn.Parameter
            return x * self.w * (2.0 if flag else 3.0)

    m = Checks()
    x = randn(3)
    with pith.no_grad():
        assert_same(pith.compile(m, fullgraph=True)(x), m(x))


def test_reassigning_a_tensor_method_recompiles():
    def uses_relu(x):
        return x.relu()

    f = pith.compile(uses_relu)
    x = randn(4)
    assert_same(f(x), uses_relu(x))
    original = pith.Tensor.relu
    try:
        pith.Tensor.relu = pith.Tensor.sigmoid
        assert_same(f(x), x.sigmoid())
    finally:
        pith.Tensor.relu = original
    assert_same(f(x), uses_relu(x))


def test_a_frame_with_an_exception_handler_runs_eagerly():
    def guarded(x, table):
        try:
            return pith.nn.functional.embedding(x, table)
        except IndexError:
            return None

    f = pith.compile(guarded)
    table = randn(4, 2)
    assert f(pith.tensor([7]), table) is None  # the handler catches what the kernel raises
    assert_same(f(pith.tensor([1]), table), guarded(pith.tensor([1]), table))
    assert any("try/except" in r for r in stats()["skip_reasons"])


def test_aliased_arguments_with_an_in_place_write_match_eager():
    def write(a, b):
        a.add_(1)
        return a + b

    f = pith.compile(write)
    base = randn(4)
    expected_base = base.clone()
    expected = write(expected_base, expected_base)
    got = f(base, base)  # a and b are one tensor: b sees the write
    assert_same(got, expected)
    x, y = randn(4), randn(4)
    x2, y2 = x.clone(), y.clone()
    assert_same(f(x, y), write(x2, y2))


# ---- indexing --------------------------------------------------------------------------------

INDEX_KEYS = [0, -1, 3, (0,), (slice(None), -1), (slice(1, None), None, 0), (Ellipsis, 1),
              (None, Ellipsis, slice(None, None, 2)), (1, Ellipsis, None), (),
              Ellipsis, (None,), (slice(0, 100),), (0, 0, 0), (slice(-3, -1), slice(None), 1),
              (slice(None), None, slice(1, 3), Ellipsis),
              # errors, raised by the eager run with eager's type and message
              10, (0, 0, 0, 0), (slice(None, None, -1),), (Ellipsis, Ellipsis), (slice(None), 7)]


@pytest.mark.parametrize("key", INDEX_KEYS, ids=repr)
def test_basic_indexing_is_a_chain_of_views(key):
    def index(t):
        return t[key]

    f = pith.compile(index)
    x = randn(4, 5, 6)
    try:
        expected = index(x)
    except Exception as e:
        with pytest.raises(type(e), match=None) as info:
            f(x)
        assert str(info.value) == str(e)
        return
    got = f(x)
    assert_same(got, expected)
    # a view of x, as eager's
    assert got.stride() == expected.stride()
    assert got.storage_offset() == expected.storage_offset()
    assert got.data_ptr() == expected.data_ptr()
    assert stats()["frames_captured"] == 1


def test_slices_computed_from_sizes_compile_whole():
    def crop(t, bias):
        T = t.size(1)
        return t[:, :T - 1, -1] + bias[:, :, :T, :T].sum() + t[0, 1:3, :T - 1].sum()

    f = pith.compile(crop, fullgraph=True)
    x, bias = randn(4, 5, 6), randn(1, 1, 8, 8)
    assert_same(f(x, bias), crop(x, bias))
    assert stats()["frames_skipped"] == 0


# ---- getattr, plain objects, instance attributes ----------------------------------------------

class _Config:
    def __init__(self):
        self.scale = 2.0
        self.use_bias = True


def test_attributes_of_a_plain_object_are_guarded():
    cfg = _Config()

    def scaled(x):
        y = x * cfg.scale
        if getattr(cfg, "use_bias", False) and hasattr(cfg, "scale"):
            y = y + 1
        return y * getattr(cfg, "missing", 3.0)

    f = pith.compile(scaled, fullgraph=True)
    x = randn(4)
    assert_same(f(x), scaled(x))
    cfg.scale = 5.0
    assert_same(f(x), scaled(x))
    cfg.missing = 7.0  # an attribute that was absent appears: the absence was guarded
    assert_same(f(x), scaled(x))
    assert stats()["compiles"] == 3


def test_an_instance_attribute_on_a_tensor_argument_runs_eagerly():
    def calls_relu(x):
        return x.relu()

    f = pith.compile(calls_relu)
    x = randn(4)
    assert_same(f(x), calls_relu(x))
    y = randn(4)
    y.relu = lambda: "shadowed"  # eager calls the instance's attribute
    assert f(y) == "shadowed"


# ---- explain ---------------------------------------------------------------------------------

def test_explain_shows_the_graph_of_a_compiled_module():
    m = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 4))
    x = randn(2, 8)
    with pith.no_grad():
        out = pith.compiler.explain(m, x)
        assert_same(out.result, m(x))
    assert out.graph_count == 1 and not out.skips
    assert "linear" in out.graphs[0] and "relu" in out.graphs[0]
    assert "Sequential" in out.captured[0]
    assert "compiled" in str(out)
    assert stats()["compiles"] == 0  # explain leaves the caches and stats alone


def test_explain_names_the_reason_and_the_line_of_a_fallback():
    out = pith.compiler.explain(programs.prints, randn(3))
    line = line_of(programs.prints, "print(")
    assert out.graph_count == 0
    (skip,) = out.skips
    assert "print" in skip and f"{PROGRAMS_FILE}, line {line}" in skip, skip


def test_explain_translates_afresh_a_frame_marked_skip():
    f = pith.compile(programs.prints)
    f(randn(3))  # marked skip
    out = pith.compiler.explain(f, randn(3))
    assert len(out.skips) == 1


# ---- a GPT, captured whole -------------------------------------------------------------------

@pytest.mark.parametrize("part", ["attention", "mlp", "block", "gpt"])
def test_a_gpt_compiles_whole_and_matches_eager(part):
    import _compile_gpt as gpt
    config = gpt.GPTConfig()
    pith.manual_seed(0)
    model = {"attention": gpt.CausalSelfAttention, "mlp": gpt.MLP, "block": gpt.Block,
             "gpt": gpt.GPT}[part](config).eval()
    x = pith.randint(0, config.vocab_size, (2, 16)) if part == "gpt" else randn(2, 16, 64)
    compiled = pith.compile(model, fullgraph=True)
    with pith.no_grad():
        for _ in range(2):
            assert_same(compiled(x), model(x))
    assert stats()["frames_skipped"] == 0 and stats()["compiles"] == 1


# ---- python -m pith.compiler -------------------------------------------------------------------

RUNNER_SCRIPT = '''
import sys
import pith
import pith.nn as nn
pith.manual_seed(0)
model = nn.Sequential(nn.Linear(8, 16), nn.ReLU(), nn.Linear(16, 3)).eval()
loss_fn = nn.CrossEntropyLoss()
x = pith.randn(4, 8)
target = pith.tensor([0, 1, 2, 1])
with pith.no_grad():
    for step in range(3):
        out = model(x)
        print(step, out.sum().item(), loss_fn(out, target).item(), out.numpy().tobytes().hex())
print("args", sys.argv[1:], __name__)
'''


def _run_file(args, tmp_path, **env):
    environment = dict(os.environ, **env)
    environment["PYTHONPATH"] = os.pathsep.join(p for p in sys.path if p and os.path.isdir(p))
    return subprocess.run([sys.executable, *args], capture_output=True, text=True,
                          env=environment, timeout=120, cwd=tmp_path)


def test_the_runner_prints_what_the_script_prints_without_it(tmp_path):
    (tmp_path / "script.py").write_text(RUNNER_SCRIPT)
    plain = _run_file(["script.py", "a", "b"], tmp_path)
    compiled = _run_file(["-m", "pith.compiler", "script.py", "a", "b"], tmp_path,
                         PITH_LOG="compile")
    assert plain.returncode == 0 and compiled.returncode == 0, compiled.stderr
    assert compiled.stdout == plain.stdout
    assert "args ['a', 'b'] __main__" in plain.stdout
    # the outermost module call was compiled; the stats come out at exit
    assert "pith.compile: compiled Sequential" in compiled.stderr
    stats_line = [line for line in compiled.stderr.splitlines() if "pith.compile: stats" in line]
    assert len(stats_line) == 1 and "'cache_hits': 2" in stats_line[0], compiled.stderr


def test_the_runner_without_a_script_prints_its_usage(tmp_path):
    r = _run_file(["-m", "pith.compiler"], tmp_path)
    assert r.returncode == 2 and "usage: python -m pith.compiler" in r.stderr


def test_a_foreign_hook_installed_inside_a_region_stays_and_chains():
    """Another library's frame hook (Dynamo's, a profiler's) installed over ours while a
    region runs stays installed when the region ends, and ours chains to it meanwhile;
    ours, put back when it is removed, takes itself out on the next frame."""
    def install_foreign(x):
        pith._C._testing_foreign_hook(1)  # an unknown call: this frame runs eagerly
        programs.affine(x)  # a frame of this region: the foreign hook sees it
        return x + 1

    f = pith.compile(install_foreign)
    try:
        f(randn(2))
        assert pith._C._testing_foreign_hook(-1) >= 1
        assert not pith.compiler.hook_installed()  # the foreign one is, still
        before = pith._C._testing_foreign_hook(-1)
        programs.affine(randn(2))
        assert pith._C._testing_foreign_hook(-1) > before
    finally:
        pith._C._testing_foreign_hook(0)
    assert not pith.compiler.hook_installed()
    g = pith.compile(programs.affine)
    x = randn(2)
    assert_same(g(x), programs.affine(x))
    assert not pith.compiler.hook_installed()


# ---- control flow on guarded values ---------------------------------------------------------

class _Flagged(nn.Module):
    """if/elif on a config flag, self.training, x.dim(), `is None`, range over a guarded int,
    math.sqrt and float('-inf'): all guarded Python values, so all compiled."""

    def __init__(self, mode, extra=None):
        super().__init__()
        self.mode = mode
        self.extra = extra
        self.repeats = 2
        self.fc = nn.Linear(4, 4)

    def forward(self, x, bias=None):
        if x.dim() == 3:
            x = x.sum(dim=0)
        if self.mode == "relu":
            y = self.fc(x).relu()
        elif self.mode == "gelu":
            y = nn.functional.gelu(self.fc(x))
        else:
            y = self.fc(x)
        if bias is not None:
            y = y + bias
        if self.extra is None and not self.training:
            y = y * (1.0 / math.sqrt(4))
        for _ in range(self.repeats):
            y = y + 1
        return y.masked_fill(y > 3.0, float("-inf"))


@pytest.mark.parametrize("mode", ["relu", "gelu", "plain"])
def test_branches_on_guarded_values_compile_without_fallback(mode):
    m = _Flagged(mode).eval()
    compiled = pith.compile(m, fullgraph=True)
    bias = randn(4)
    with pith.no_grad():
        for x, b in ((randn(2, 4), None), (randn(3, 2, 4), None), (randn(2, 4), bias)):
            assert_same(compiled(x, b), m(x, b))
        m.train()  # self.training is guarded
        x = randn(2, 4)
        assert_same(compiled(x), m(x))
        m.repeats = 3  # so is the bound of the range
        assert_same(compiled(x), m(x))
    assert stats()["frames_skipped"] == 0


def test_a_value_returned_twice_and_a_parameter_returned_are_eagers_objects():
    lin = nn.Linear(3, 3)

    def twice(x):
        y = x * 2
        return y, y, lin.weight

    f = pith.compile(twice, fullgraph=True)
    x = randn(3)
    got, expected = f(x), twice(x)
    assert got[0] is got[1]
    assert got[2] is lin.weight
    assert_same(got[0], expected[0])


def test_nested_functions_and_lambdas_are_inlined():
    def outer(x, k):
        scale = k * 2

        def shape(t):
            return t.view(2, -1) * scale

        add_k = lambda t: t + k  # noqa: E731
        total = 0
        for _ in range(2):
            total = total + shape(add_k(x))
        return total

    f = pith.compile(outer, fullgraph=True)
    x = randn(6)
    for k in (3.0, 4.0):
        assert_same(f(x, k), outer(x, k))
    assert stats()["frames_skipped"] == 0


def test_a_nonlocal_write_runs_eagerly():
    def make():
        count = 0

        def bump(x):
            nonlocal count
            count += 1
            return x + count
        return bump

    eager_bump, compiled_bump = make(), pith.compile(make())
    x = randn(3)
    for _ in range(3):
        assert_same(compiled_bump(x), eager_bump(x))
    assert any("nonlocal" in r for r in stats()["skip_reasons"])


def test_item_assignment_to_the_frames_own_containers():
    def fill(x):
        outs = [None] * 3
        table = {}
        for i in range(3):
            outs[i] = x * i
            table["k%d" % i] = i
        return outs[2] + table["k1"]

    f = pith.compile(fill, fullgraph=True)
    x = randn(3)
    assert_same(f(x), fill(x))


def test_item_assignment_to_a_tensor_runs_eagerly():
    def write(x):
        x[0] = 1.0
        return x

    f = pith.compile(write)
    x = randn(3)
    expected = write(x.clone())
    got = f(x)
    assert got is x
    assert_same(got, expected)
    assert any("item assignment" in r for r in stats()["skip_reasons"])


def test_the_nn_suite_passes_unchanged_under_the_runner(tmp_path):
    """Every outermost module call of tests/python/test_nn_modules.py and test_nn.py
    compiled (python -m pith.compiler -m pytest): pith.compile is invisible to them."""
    files = [str(HERE / "test_nn_modules.py"), str(HERE / "test_nn.py")]
    r = _run_file(["-m", "pith.compiler", "-m", "pytest", "-q", "-p", "no:cacheprovider",
                   "-x", *files], tmp_path, PITH_LOG="compile")
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    assert " passed" in r.stdout and "failed" not in r.stdout
    stats_line = [line for line in r.stderr.splitlines() if "pith.compile: stats" in line]
    assert stats_line and "'frames_captured': 0," not in stats_line[0], r.stderr[-2000:]
