"""Runs the model programs of tests/models on pith, and on torch when it is installed.

A program is either an installed package's module (other people's code, from PyPI) with a
recipe of ours that builds a model from it and makes its inputs (`programs.PACKAGES`), or a
tutorial-style script of ours in `programs/` that defines `build()` and `run(model)`.
Both are written against torch and imported through `_loader` (Note [Loading torch
programs on pith]). Each runs the same way:
1. build the model on pith, and on torch when torch is installed;
2. with torch: copy torch's `state_dict` into the pith model with `strict=True`, so the
   two hold the same weights under the same keys;
3. run both on the same inputs (made with NumPy) and compare every output, tensors with
   the program's tolerance and everything else exactly.
Without torch, the pith model runs and its outputs are checked to be finite.

A program that trains (`Program.trains`: a script's `fit(model)`, or a recipe's `train`)
is also run by `run_training`, see Note [Comparing training runs].
"""
import dataclasses
import math
import os
import time
import traceback
from typing import Any, Callable, Optional

import numpy as np

import _loader

HERE = os.path.dirname(os.path.abspath(__file__))
PROGRAM_DIR = os.path.join(HERE, "programs")


def torch_available():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


@dataclasses.dataclass
class Program:
    name: str
    # An installed module (dotted) and the recipe: build(module, fw) -> model and
    # inputs(fw, rng) -> tuple of forward arguments; or a script in programs/ (file).
    module: Optional[str] = None
    build: Optional[Callable[[Any, Any], Any]] = None
    inputs: Optional[Callable[[Any, np.random.Generator], tuple]] = None
    call: Optional[Callable[[Any, tuple], Any]] = None  # default: model(*inputs)
    file: Optional[str] = None
    rtol: float = 1e-4
    atol: float = 1e-5
    source: str = ""  # where the program comes from (the package and its version)
    # A program that pith cannot run yet, and what it needs (the reason, naming the
    # missing piece). It is run anyway: it must still fail, with an error that mentions
    # `blocked_error`, or the harness reports it (so that it moves to the running list).
    blocked: str = ""
    blocked_error: str = ""
    # Training (Note [Comparing training runs]). A script trains when `trains` is set: its
    # module defines fit(model) -> the loss (a float) at every optimizer step (not
    # `train`: the pytorch/examples programs keep that name for their own per-epoch
    # function). A recipe
    # trains when `train` is set: train(model, fw) -> the same list.
    trains: bool = False
    train: Optional[Callable[[Any, Any], list]] = None
    # The tolerance of the comparison of a training run with torch's: rtol 1e-4 on the loss
    # at every step and on every entry of the final state_dict; atol for the entries near
    # zero. A program that needs a looser one, for the whole run (train_rtol, train_atol)
    # or for some state_dict entries only (train_key_tolerances: a key's suffix -> (rtol,
    # atol)), names the op whose order of summation differs, and why the looser figure is
    # right, in train_tolerance_why.
    train_rtol: float = 1e-4
    train_atol: float = 1e-6
    train_key_tolerances: dict = dataclasses.field(default_factory=dict)
    train_tolerance_why: str = ""
    # A program whose training pith cannot run right yet, and why (naming the missing
    # piece): its training run must still fail with an error that mentions
    # train_blocked_error, or run_training reports it (so that it is unblocked).
    train_blocked: str = ""
    train_blocked_error: str = ""

    @property
    def does_train(self):
        return self.trains or self.train is not None

    def load(self, framework):
        if self.file is not None:
            return _loader.load_file(os.path.join(PROGRAM_DIR, self.file), framework)
        return _loader.load(self.module, framework)


@dataclasses.dataclass
class Result:
    program: str
    ok: bool
    detail: str
    seconds: float


def _to_numpy(value):
    """The NumPy array of a pith or torch tensor, or None for anything else."""
    kind = type(value).__module__.split(".")[0]
    if kind in ("torch", "pith") and hasattr(value, "numpy") and hasattr(value, "dtype"):
        value = value.detach().cpu()
        if str(value.dtype).endswith("bfloat16"):
            value = value.float()
        return value.numpy()
    return None


def _compare(path, got, want, rtol, atol, worst):
    """Compares pith's output `got` with torch's `want`; raises AssertionError on a
    mismatch. worst collects the largest absolute difference seen."""
    a, b = _to_numpy(got), _to_numpy(want)
    if (a is None) != (b is None):
        raise AssertionError(f"{path}: pith gave {type(got).__name__}, torch "
                             f"{type(want).__name__}")
    if a is not None:
        if a.shape != b.shape:
            raise AssertionError(f"{path}: shape {a.shape} != torch's {b.shape}")
        if str(a.dtype) != str(b.dtype):
            raise AssertionError(f"{path}: dtype {a.dtype} != torch's {b.dtype}")
        if a.dtype.kind in "fc":
            np.testing.assert_allclose(a, b, rtol=rtol, atol=atol, err_msg=path)
            if a.size:
                diff = float(np.max(np.abs(a.astype(np.float64) - b.astype(np.float64))))
                worst[0] = max(worst[0], diff)
        else:
            np.testing.assert_array_equal(a, b, err_msg=path)
        return
    if isinstance(want, dict):
        if sorted(got) != sorted(want):
            raise AssertionError(f"{path}: keys {sorted(got)} != torch's {sorted(want)}")
        for key in want:
            _compare(f"{path}[{key!r}]", got[key], want[key], rtol, atol, worst)
        return
    if isinstance(want, (tuple, list)):
        if len(got) != len(want):
            raise AssertionError(f"{path}: length {len(got)} != torch's {len(want)}")
        for i, (g, w) in enumerate(zip(got, want)):
            _compare(f"{path}[{i}]", g, w, rtol, atol, worst)
        return
    if isinstance(want, float):
        if not math.isclose(got, want, rel_tol=rtol, abs_tol=atol):
            raise AssertionError(f"{path}: {got!r} != torch's {want!r}")
        return
    if got != want:
        raise AssertionError(f"{path}: {got!r} != torch's {want!r}")


def _check_finite(path, value):
    a = _to_numpy(value)
    if a is not None:
        if a.dtype.kind in "fc" and not np.all(np.isfinite(a)):
            raise AssertionError(f"{path}: not finite")
    elif isinstance(value, dict):
        for key, item in value.items():
            _check_finite(f"{path}[{key!r}]", item)
    elif isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            _check_finite(f"{path}[{i}]", item)


def copy_state(pith_model, torch_model, fw=None):
    """Loads torch_model's state_dict into pith_model (strict: the same keys). fw is the
    framework of pith_model (pith unless told: the self-check runs torch against torch)."""
    if fw is None:
        import pith as fw
    state = {key: fw.from_numpy(np.ascontiguousarray(_to_numpy(value)).copy())
             for key, value in torch_model.state_dict().items()}
    pith_model.load_state_dict(state, strict=True)


def _build_and_run(program, framework, fw, torch_model=None):
    module = program.load(framework)
    if program.file is not None:
        model = module.build()
        if torch_model is not None:
            copy_state(model, torch_model)
        return model, module.run(model)
    model = program.build(module, fw)
    if torch_model is not None:
        copy_state(model, torch_model)
    model.eval()
    args = program.inputs(fw, np.random.default_rng(0))
    with fw.no_grad():
        if program.call is not None:
            out = program.call(model, args)
        else:
            out = model(*args)
    return model, out


def run(program, with_torch=None):
    """Runs one program; returns a Result (never raises for the program's own failures).
    For a blocked program, ok means that it still fails for the reason it names."""
    result = _run(program, with_torch)
    if not program.blocked:
        return result
    if result.ok:
        return Result(program.name, False, f"was blocked ({program.blocked}) but now runs: "
                      "move it to the running programs", result.seconds)
    if program.blocked_error not in result.detail:
        return Result(program.name, False, f"blocked ({program.blocked}), but fails "
                      f"otherwise: {result.detail}", result.seconds)
    return Result(program.name, True, f"blocked: {program.blocked} ({result.detail})",
                  result.seconds)


def _run(program, with_torch):
    import pith
    if with_torch is None:
        with_torch = torch_available()
    start = time.perf_counter()
    try:
        if with_torch:
            import torch
            torch.manual_seed(0)
            torch_model, want = _build_and_run(program, "torch", torch)
            pith.manual_seed(0)
            _, got = _build_and_run(program, "pith", pith, torch_model)
            worst = [0.0]
            _compare("output", got, want, program.rtol, program.atol, worst)
            detail = f"matches torch (max abs diff {worst[0]:.1e})"
        else:
            pith.manual_seed(0)
            _, got = _build_and_run(program, "pith", pith)
            _check_finite("output", got)
            detail = "ran (torch not installed: not compared)"
        return Result(program.name, True, detail, time.perf_counter() - start)
    except Exception as e:  # a failure of the program on pith is what this reports
        frames = traceback.extract_tb(e.__traceback__)
        where = frames[-1] if frames else None
        at = f" at {os.path.basename(where.filename)}:{where.lineno}" if where else ""
        return Result(program.name, False, f"{type(e).__name__}: {e}{at}",
                      time.perf_counter() - start)


def _build_and_run_compiled(program, compiled):
    """The program on pith, with its model passed through pith.compile when `compiled`."""
    import pith
    module = program.load("pith")
    pith.manual_seed(0)
    if program.file is not None:
        model = module.build()
        return module.run(pith.compile(model) if compiled else model)
    model = program.build(module, pith)
    model.eval()
    args = program.inputs(pith, np.random.default_rng(0))
    target = pith.compile(model) if compiled else model
    with pith.no_grad():
        outs = [program.call(target, args) if program.call is not None else target(*args)
                for _ in range(2)]  # the second call is answered from the cache
    return outs


def run_compiled(program):
    """Runs the program on pith eagerly and with its model compiled by pith.compile, and
    compares the two bit for bit (what is compiled gives eager's bits, and what falls back
    runs eagerly). The detail reports how much of it was captured."""
    import pith
    start = time.perf_counter()
    try:
        want = _build_and_run_compiled(program, compiled=False)
        pith.compiler.reset()
        got = _build_and_run_compiled(program, compiled=True)
        _compare("output", got, want, 0.0, 0.0, [0.0])
        stats = pith.compiler.stats()
        detail = (f"compiled matches eager bit for bit ({stats['frames_captured']} frames "
                  f"captured, {stats['frames_skipped']} run eagerly)")
        return Result(program.name, True, detail, time.perf_counter() - start)
    except Exception as e:  # a failure of the program under pith.compile
        frames = traceback.extract_tb(e.__traceback__)
        where = frames[-1] if frames else None
        at = f" at {os.path.basename(where.filename)}:{where.lineno}" if where else ""
        return Result(program.name, False, f"{type(e).__name__}: {e}{at}",
                      time.perf_counter() - start)


# Note [Comparing training runs]
# A program that trains runs its own training loop (its optimizer, its scheduler, its
# gradient clipping), on data it makes with NumPy from a fixed seed, for at least
# MIN_STEPS optimizer steps, and returns the loss of every step as a float.
# With torch installed, run_training
# 1. builds the torch model (torch.manual_seed(0)) and the pith model (pith.manual_seed(0)),
#    and copies torch's state_dict into the pith model with strict=True, before either
#    trains: the two start from the same weights under the same keys;
# 2. trains torch's, then pith's;
# 3. checks that torch's loss falls (the last below the first: the program trains), then
#    compares the losses step by step and every entry of the final state_dicts, with the
#    program's train_rtol and train_atol, or train_key_tolerances for the keys it names
#    (compare_training).
# What would make the two runs differ by design is kept out of the programs: nothing in a
# training run draws random numbers from the framework (dropout is off, p=0.0, or in eval
# mode for the run; sampling noise comes from NumPy), and data loaders do not shuffle.
# Without torch, the pith run alone must give MIN_STEPS finite losses, a finite state_dict,
# and a last loss below the first (the loss falls).
MIN_STEPS = 10


def compare_training(got_losses, want_losses, got_state, want_state, rtol, atol,
                     key_tolerances=None):
    """Compares a training run with torch's: the loss at every step, then every entry of
    the final state_dict (an entry whose key ends with one of key_tolerances' suffixes
    with that (rtol, atol)). Raises AssertionError naming the first step or key that
    differs; returns the largest relative difference of the losses and the largest
    absolute difference of the weights."""
    if len(got_losses) != len(want_losses):
        raise AssertionError(f"{len(got_losses)} steps != torch's {len(want_losses)}")
    worst_loss = 0.0
    for step, (g, w) in enumerate(zip(got_losses, want_losses)):
        if not (isinstance(g, float) and math.isfinite(g)):
            raise AssertionError(f"loss at step {step}: {g!r} is not a finite float")
        if not math.isclose(g, w, rel_tol=rtol, abs_tol=atol):
            raise AssertionError(f"loss at step {step}: {g!r} != torch's {w!r} "
                                 f"(rtol {rtol:g})")
        worst_loss = max(worst_loss, abs(g - w) / max(abs(w), 1e-30))
    worst = [0.0]
    got_state, want_state = dict(got_state), dict(want_state)
    if sorted(got_state) != sorted(want_state):
        raise AssertionError(f"state_dict keys {sorted(got_state)} != torch's "
                             f"{sorted(want_state)}")
    for suffix in key_tolerances or {}:
        if not any(key.endswith(suffix) for key in want_state):
            raise AssertionError(f"a tolerance is given for {suffix!r}, which ends no key")
    for key in want_state:
        tolerances = [t for suffix, t in (key_tolerances or {}).items() if key.endswith(suffix)]
        key_rtol, key_atol = tolerances[0] if tolerances else (rtol, atol)
        _compare(f"state_dict[{key!r}]", got_state[key], want_state[key], key_rtol, key_atol,
                 worst)
    return worst_loss, worst[0]


def _training_copy(program, framework, fw):
    """The program's model on `framework` and the function that trains it."""
    module = program.load(framework)
    if program.file is not None:
        if not hasattr(module, "fit"):
            raise AssertionError(f"{program.file} is marked as training but defines no "
                                 "fit(model)")
        return module.build(), module.fit
    return program.build(module, fw), lambda model: program.train(model, fw)


def _check_falls(losses, who):
    if not losses[-1] < losses[0]:
        raise AssertionError(f"the loss does not fall on {who}: {losses[0]!r} -> "
                             f"{losses[-1]!r}")


def _check_losses(losses):
    if len(losses) < MIN_STEPS:
        raise AssertionError(f"{len(losses)} optimizer steps, fewer than {MIN_STEPS}")
    for step, loss in enumerate(losses):
        if not (isinstance(loss, float) and math.isfinite(loss)):
            raise AssertionError(f"loss at step {step}: {loss!r} is not a finite float")


def train_both(program, candidate="pith"):
    """Trains the program on torch and on `candidate` from torch's initial weights (steps
    1 and 2 of Note [Comparing training runs]); returns the candidate's losses, torch's,
    and the two final state_dicts."""
    import torch
    cand = __import__(candidate)
    torch.manual_seed(0)
    torch_model, torch_train = _training_copy(program, "torch", torch)
    cand.manual_seed(0)
    model, train = _training_copy(program, candidate, cand)
    copy_state(model, torch_model, cand)
    want = torch_train(torch_model)
    _check_losses(want)
    got = train(model)
    _check_losses(got)
    return got, want, model.state_dict(), torch_model.state_dict()


def run_training(program, with_torch=None, candidate="pith"):
    """Trains the program (Note [Comparing training runs]); returns a Result, never raises
    for the program's own failures. candidate is the framework compared with torch: pith,
    or torch itself (the self-check of the programs and of this harness). For a program
    whose training is blocked, ok means that it still fails against torch for the reason
    it names (on pith alone it must still train: finite losses that fall)."""
    if with_torch is None:
        with_torch = torch_available()
    result = _run_training(program, with_torch, candidate)
    if not program.train_blocked or candidate != "pith" or not with_torch:
        return result
    if result.ok:
        return Result(program.name, False, f"training was blocked ({program.train_blocked}) "
                      "but now matches: unblock it", result.seconds)
    if program.train_blocked_error not in result.detail:
        return Result(program.name, False, f"training blocked ({program.train_blocked}), but "
                      f"fails otherwise: {result.detail}", result.seconds)
    return Result(program.name, True, f"training blocked: {program.train_blocked} "
                  f"({result.detail[:200]})", result.seconds)


def _run_training(program, with_torch, candidate):
    import pith
    start = time.perf_counter()
    try:
        cand = pith if candidate == "pith" else __import__(candidate)
        if with_torch:
            got, want, state, torch_state = train_both(program, candidate)
            _check_falls(want, "torch")
            worst_loss, worst_weight = compare_training(
                got, want, state, torch_state, program.train_rtol, program.train_atol,
                program.train_key_tolerances)
            detail = (f"{len(got)} steps match torch (loss {want[0]:.4g} -> {want[-1]:.4g}; "
                      f"max rel diff of the losses {worst_loss:.1e}, max abs diff of the "
                      f"weights {worst_weight:.1e})")
        else:
            cand.manual_seed(0)
            model, train = _training_copy(program, candidate, cand)
            got = train(model)
            _check_losses(got)
            _check_finite("state_dict", dict(model.state_dict()))
            _check_falls(got, candidate)
            detail = (f"{len(got)} steps, loss {got[0]:.4g} -> {got[-1]:.4g} (torch not "
                      "installed: not compared)")
        return Result(program.name, True, detail, time.perf_counter() - start)
    except Exception as e:  # a failure of the program's training is what this reports
        frames = traceback.extract_tb(e.__traceback__)
        where = frames[-1] if frames else None
        at = f" at {os.path.basename(where.filename)}:{where.lineno}" if where else ""
        return Result(program.name, False, f"{type(e).__name__}: {e}{at}",
                      time.perf_counter() - start)
