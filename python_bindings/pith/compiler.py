"""pith.compiler: pith.compile and what goes with it (stats, reset, hook_installed,
Unsupported), mirroring torch.compile and torch.compiler.

pith.compile(model) returns a callable that runs `model` inside a region: while a thread is
inside one, a PEP 523 frame hook captures the frames of the compiled function and of the
`forward` of every pith.nn.Module called there, translates their bytecode in C into a
compiled graph (pith_graph, <pith/graph.h>), and answers later calls from a cache guarded
in C. Anything the translator does not support runs eagerly, with the same results.
docs/compile.md describes the use, the guards, the fallbacks and the limits; the C side is
python_bindings/_C/compile/hook.c (Note [The frame hook]) and compile/translate.c (Note
[Guard soundness]).
"""
import functools
import os
import sys
import types

if __name__ == "__main__":
    # python -m pith.compiler script.py [args]: this file runs as __main__, a copy of the
    # module; the real pith.compiler (the one user code imports) runs the script.
    from pith.compiler import _main
    sys.exit(_main(sys.argv[1:]))

from . import _C
from .nn.modules import module as _module
from .nn.modules.module import Module

__all__ = ["compile", "Unsupported", "OptimizedModule", "stats", "reset", "hook_installed",
           "explain", "ExplainOutput"]


class Unsupported(RuntimeError):
    """Raised by a pith.compile(fullgraph=True) callable when part of it would run eagerly;
    the message names the reason, the file and the line."""


def _log_enabled():
    return "compile" in os.environ.get("PITH_LOG", "").replace(" ", "").split(",")


_C._compile_setup(Module, Module.__getattr__, Unsupported, _log_enabled())

_MODES = (None, "default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")


def _check_options(fullgraph, dynamic, backend, mode, options):
    if backend != "pith":
        raise ValueError(f"pith.compile: unknown backend {backend!r} (pith has one backend, "
                         f"'pith')")
    if dynamic not in (None, True, False):
        raise TypeError(f"pith.compile: dynamic must be None, True or False, not {dynamic!r}")
    if mode not in _MODES:
        raise RuntimeError(f"Unrecognized mode={mode}, should be one of: "
                           f"{', '.join(m for m in _MODES if m)}")
    if options:
        raise RuntimeError(f"pith.compile: unknown options {sorted(options)} (pith.compile "
                           f"takes no options)")
    if not isinstance(fullgraph, bool):
        raise TypeError(f"pith.compile: fullgraph must be a bool, not "
                        f"{type(fullgraph).__name__}")


class OptimizedModule(Module):
    """What pith.compile returns for a module, as torch's OptimizedModule: `_orig_mod` is
    the module (a child, so state_dict keys start with `_orig_mod.` and the parameters and
    buffers are the module's own objects), other attributes are the module's, and calling
    it runs the module's forward compiled. Pickling or deep-copying it gives the same for a
    copy of the module, compiled afresh (caches are never copied)."""

    def __init__(self, mod, fullgraph=False, dynamic=None):
        super().__init__()
        self._orig_mod = mod
        object.__setattr__(self, "_pith_fullgraph", fullgraph)
        object.__setattr__(self, "_pith_dynamic", dynamic)
        object.__setattr__(self, "_pith_flags", _region_flags(fullgraph, dynamic))

    def __call__(self, *args, **kwargs):
        # Module.__call__'s work, with one Python frame fewer when this wrapper has no hooks
        # of its own (the module's are checked inside, by the compiled Module.__call__).
        if (self._forward_hooks or self._forward_pre_hooks or _module._global_forward_hooks
                or _module._global_forward_pre_hooks):
            return super().__call__(*args, **kwargs)
        return _C._compile_region(self._modules["_orig_mod"], args, kwargs, self._pith_flags)

    def forward(self, *args, **kwargs):
        return _C._compile_region(self._orig_mod, args, kwargs, self._pith_flags)

    def __getattr__(self, name):
        if name == "_orig_mod":
            return self._modules["_orig_mod"]
        try:
            return super().__getattr__(name)
        except AttributeError:
            return getattr(self._modules["_orig_mod"], name)

    def __reduce__(self):
        return (_rebuild, (self._orig_mod, self._pith_fullgraph, self._pith_dynamic))


def _rebuild(mod, fullgraph, dynamic=None):
    return OptimizedModule(mod, fullgraph, dynamic)


def _region_flags(fullgraph, dynamic):
    """_compile_region's flags (compile/hook.c): 1 fullgraph, 2 dynamic=False."""
    return (1 if fullgraph else 0) | (2 if dynamic is False else 0)


def _compile_function(fn, fullgraph, dynamic):
    target = fn.__func__ if isinstance(fn, types.MethodType) else fn
    code = getattr(target, "__code__", None)
    if not isinstance(code, types.CodeType):
        raise TypeError(f"pith.compile: expected a pith.nn.Module or a Python function, "
                        f"got {type(fn).__name__}")
    _C._compile_mark(code, fullgraph)

    flags = _region_flags(fullgraph, dynamic)

    @functools.wraps(fn)
    def compiled(*args, **kwargs):
        return _C._compile_region(fn, args, kwargs, flags)

    compiled._torchdynamo_orig_callable = fn
    compiled._pith_orig = fn
    return compiled


def compile(model=None, *, fullgraph=False, dynamic=None, backend="pith", mode=None,
            options=None, disable=False):
    """pith.compile(model): `model` (a pith.nn.Module or a Python function) compiled, as
    torch.compile; usable as @pith.compile and @pith.compile(fullgraph=True)."""
    _check_options(fullgraph, dynamic, backend, mode, options)
    if model is None:
        return functools.partial(compile, fullgraph=fullgraph, dynamic=dynamic,
                                 backend=backend, mode=mode, options=options, disable=disable)
    if disable:
        return model
    if isinstance(model, OptimizedModule):
        return model
    if isinstance(model, Module):
        return OptimizedModule(model, fullgraph, dynamic)
    if not callable(model):
        raise TypeError(f"pith.compile: expected a callable, got {type(model).__name__}")
    return _compile_function(model, fullgraph, dynamic)


def stats():
    """Counters of this interpreter's compiles: frames_seen, frames_captured,
    frames_skipped, skip_reasons, compiles, cache_hits and guard_failures."""
    return _C._compile_stats()


def reset():
    """Drops every cache entry (compiled code recompiles on its next call) and zeroes the
    counters."""
    _C._compile_reset()


def hook_installed():
    """Whether this interpreter's frame hook is pith.compile's right now: true only while
    some thread of it is inside a compiled call."""
    return _C._compile_hook_installed()


def _cache_size():
    """The number of live cache entries in this interpreter, for tests."""
    return _C._compile_cache_size()


class ExplainOutput:
    """What pith.compiler.explain found: for each region frame of the call, in order, its
    compiled graph (the C dump of its steps and fusion groups) or why it runs eagerly.

    - `graphs`: the dumps of the frames that compile (`graph_count` of them);
    - `captured`: their frames, as "qualname (file:first line)";
    - `skips`: "frame: reason (file, line N)" for each frame that runs eagerly (a
      module's `__call__` that cannot compile is followed by its `forward`'s own record);
    - `records`: every record as a dict; `result`: what the call returned.
    str() gives all of it as text."""

    def __init__(self, records, result):
        self.records = records
        self.result = result
        self.graphs = [r["graph"] for r in records if "graph" in r]
        self.captured = [r["frame"] for r in records if "graph" in r]
        self.skips = [f"{r['frame']}: {r['reason']} ({r['file']}, line {r['line']})"
                      for r in records if "reason" in r]
        self.graph_count = len(self.graphs)

    def __str__(self):
        lines = [f"{self.graph_count} frame(s) compiled, {len(self.skips)} run eagerly"]
        for r in self.records:
            if "graph" in r:
                lines.append(f"\ncompiled {r['frame']}: {r['guards']} guards, "
                             f"{r['inputs']} inputs, {r['outputs']} outputs")
                lines.append(r["graph"].rstrip())
            else:
                lines.append(f"\neager {r['frame']}: {r['reason']} ({r['file']}, "
                             f"line {r['line']})")
        return "\n".join(lines)

    def __repr__(self):
        return (f"ExplainOutput(graph_count={self.graph_count}, "
                f"skips={len(self.skips)})")


def explain(fn, *args, **kwargs):
    """Calls `fn(*args, **kwargs)` compiled (fn: a module, a function, or what
    pith.compile returned) and reports what each of its region frames gives: the compiled
    graph with its fusion groups, or why it runs eagerly, with the file and line. Caches,
    skip marks and stats are left as they are: every frame is translated afresh."""
    target = fn
    if not (isinstance(fn, OptimizedModule) or getattr(fn, "_pith_orig", None) is not None):
        target = compile(fn)
    _C._compile_explain(True)
    try:
        result = target(*args, **kwargs)
    finally:
        records = _C._compile_explain(False)
    return ExplainOutput(records, result)


_USAGE = """usage: python -m pith.compiler script.py [args ...]
       python -m pith.compiler -m module [args ...]

Runs an unmodified script with every outermost pith.nn.Module call compiled by
pith.compile. With PITH_LOG=compile it prints pith.compiler.stats() at exit."""


def _main(argv):
    """The runner: the whole script runs inside a region, so the hook captures the
    Module.__call__ frames of its outermost module calls (the calls inside them are part of
    their translation); everything else runs as it would."""
    import runpy
    if not argv or argv[0] in ("-h", "--help"):
        print(_USAGE, file=sys.stdout if argv else sys.stderr)
        return 0 if argv else 2
    if argv[0] == "-m":
        if len(argv) < 2:
            print(_USAGE, file=sys.stderr)
            return 2
        name, rest = argv[1], argv[2:]
        sys.argv = [name] + rest
        sys.path.insert(0, os.getcwd())

        def run():
            runpy.run_module(name, run_name="__main__", alter_sys=True)
    else:
        script, rest = argv[0], argv[1:]
        sys.argv = [script] + rest
        sys.path[0] = os.path.dirname(os.path.abspath(script))

        def run():
            runpy.run_path(script, run_name="__main__")
    try:
        _C._compile_region(run, (), None, 0)
    finally:
        if _log_enabled():
            print(f"pith.compile: stats {stats()}", file=sys.stderr)
    return 0
