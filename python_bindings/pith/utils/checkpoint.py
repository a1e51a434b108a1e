"""pith.utils.checkpoint: torch.utils.checkpoint's activation checkpointing.

Checkpointing trades memory for a second forward pass during backward: the checkpointed
function's activations are not kept for backward, and backward recomputes them. Both of
PyTorch's forms are here, with its arguments, checks and messages:

- use_reentrant=True (the default when use_reentrant is not passed, with PyTorch's warning):
  CheckpointFunction, an autograd Function whose forward runs the function under no_grad and
  keeps only its tensor inputs; its backward runs the function again with grad on, from
  detached inputs, and calls backward on the recomputed outputs from inside the outer
  backward (a reentrant backward, Note [The engine]). It cannot serve autograd.grad() or
  backward(inputs=...), which it refuses with PyTorch's error.
- use_reentrant=False: the function runs once, recording as usual, under saved-tensor hooks
  whose pack keeps a small holder instead of the tensor. The first unpack in a backward
  reruns the function (from the same inputs, under grad mode, with the forward's RNG state)
  under hooks that collect what it saves, in order; each holder then takes its tensor, once
  per backward. Recomputation stops as soon as every saved tensor is back (early_stop), and
  the recomputed tensors are checked against the saved ones' shapes and dtypes
  (determinism_check="default").

docs/autograd.md lists the differences from PyTorch (no devices besides the CPU, so no
device RNG states and no autocast state to restore; no selective checkpointing).
"""
import warnings
import weakref
from typing import Any, Callable

from .. import _C, enable_grad, get_rng_state, no_grad, set_rng_state
from ..autograd import Function, backward as _backward
from ..autograd.graph import saved_tensors_hooks

__all__ = ["checkpoint", "checkpoint_sequential", "CheckpointError", "CheckpointFunction",
           "set_checkpoint_early_stop"]

_Tensor = _C.Tensor


def _check_use_reentrant(use_reentrant: bool | None, stacklevel: int) -> bool:
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "Starting in PyTorch 2.9, calling checkpoint without use_reentrant will raise an "
            "exception. use_reentrant=False is recommended, but if you need to preserve the "
            "current default behavior, you can pass use_reentrant=True. Refer to docs for "
            "more details on the differences between the two variants.",
            stacklevel=stacklevel + 1)
        return True
    return use_reentrant


def _detach_inputs(inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """Detached aliases of the tensor inputs, requiring grad where the inputs did."""
    out = []
    for x in inputs:
        if isinstance(x, _Tensor):
            d = x.detach()
            d.requires_grad = x.requires_grad
            out.append(d)
        else:
            out.append(x)
    return tuple(out)


class CheckpointFunction(Function):
    """The reentrant form: see the module's doc."""

    @staticmethod
    def forward(ctx: Any, run_function: Callable[..., Any], preserve_rng_state: bool,
                *args: Any) -> Any:
        if not any(isinstance(a, _Tensor) and a.requires_grad for a in args):
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None")
        ctx.run_function = run_function
        ctx.preserve_rng_state = preserve_rng_state
        if preserve_rng_state:
            ctx.fwd_cpu_state = get_rng_state()
        ctx.inputs = [None if isinstance(a, _Tensor) else a for a in args]
        ctx.tensor_indices = [i for i, a in enumerate(args) if isinstance(a, _Tensor)]
        ctx.save_for_backward(*(a for a in args if isinstance(a, _Tensor)))
        with no_grad():
            return run_function(*args)

    @staticmethod
    def backward(ctx: Any, *grads: Any) -> Any:
        if not _C._is_checkpoint_valid():
            raise RuntimeError(
                "When use_reentrant=True, torch.utils.checkpoint is incompatible with .grad() "
                "or passing an `inputs` parameter to .backward(). To resolve this error, you "
                "can either set use_reentrant=False, or call .backward() without passing the "
                "`inputs` argument.")
        inputs = list(ctx.inputs)
        for i, t in zip(ctx.tensor_indices, ctx.saved_tensors):
            inputs[i] = t
        outer_state = get_rng_state() if ctx.preserve_rng_state else None
        try:
            if ctx.preserve_rng_state:
                set_rng_state(ctx.fwd_cpu_state)
            detached = _detach_inputs(tuple(inputs))
            with enable_grad():
                outputs = ctx.run_function(*detached)
        finally:
            if outer_state is not None:
                set_rng_state(outer_state)
        if isinstance(outputs, _Tensor):
            outputs = (outputs,)
        with_grad = [(o, g) for o, g in zip(outputs, grads)
                     if isinstance(o, _Tensor) and o.requires_grad]
        if not with_grad:
            raise RuntimeError("none of output has requires_grad=True, this checkpoint() is "
                               "not necessary")
        _backward([o for o, _ in with_grad], [g for _, g in with_grad])
        return (None, None) + tuple(x.grad if isinstance(x, _Tensor) else None
                                    for x in detached)


# ---- the non-reentrant form --------------------------------------------------------------

class CheckpointError(RuntimeError):
    """A recomputation that does not match the forward, or a saved tensor unpacked twice."""


_early_stop_override: bool | None = None


class set_checkpoint_early_stop:
    """Context manager: whether non-reentrant checkpoints stop recomputing once every saved
    tensor is back (overrides checkpoint()'s early_stop for its duration)."""

    def __init__(self, enable: bool) -> None:
        self.enable = enable

    def __enter__(self) -> None:
        global _early_stop_override
        self.previous, _early_stop_override = _early_stop_override, self.enable

    def __exit__(self, *exc: Any) -> None:
        global _early_stop_override
        _early_stop_override = self.previous


class _StopRecomputation(Exception):
    pass


class _Holder:
    """What a saved tensor becomes under checkpoint's pack hook; `taken` maps a backward's
    id to the key of its recomputed tensor (None once unpacked)."""
    __slots__ = ("taken", "__weakref__")

    def __init__(self) -> None:
        self.taken: dict[Any, int | None] = {}


class _Frame:
    """One checkpointed call: its function and inputs, the holders of what it saved, and the
    tensors recomputed for each backward (by the engine's run id)."""

    def __init__(self, recompute: Callable[..., Any], early_stop: bool, check: bool) -> None:
        self.recompute = recompute
        self.early_stop = early_stop
        self.check = check
        self.inputs: list[Any] = []
        self.holders: list[weakref.ref[_Holder]] = []  # in the order of saving
        self.metadata: list[dict[str, Any]] = []  # of each saved tensor, for the check
        self.recomputed: dict[Any, dict[int, Any]] = {}  # run id -> {index: tensor}
        self.counter: dict[Any, int] = {}  # run id -> tensors saved so far, recomputing
        self.forward_done = False

    def pack(self, x: Any) -> _Holder:
        holder = _Holder()
        self.holders.append(weakref.ref(holder))
        if self.check:
            self.metadata.append(_metadata(x))
        return holder

    def unpack(self, holder: _Holder) -> Any:
        run = _C._current_graph_task_id()
        if run == -1:  # unpacked outside any backward: a run of its own
            run = object()
        if run not in self.recomputed:
            self.recomputed[run], self.counter[run] = {}, 0
            try:
                with saved_tensors_hooks(lambda x: self._collect(run, x), lambda x: x), \
                        enable_grad():
                    self.recompute(*self.inputs)
            except _StopRecomputation:
                pass
            self._check(run)
        index = holder.taken.get(run, -1)
        if index is None:
            raise CheckpointError(
                "torch.utils.checkpoint: Unpack is being triggered for a tensor that was "
                "already unpacked once. If you are calling ctx.saved_tensors in backward, "
                "make sure to do so only once. Otherwise please open an issue with details "
                "on your use case.")
        holder.taken[run] = None
        return self.recomputed[run].pop(index)

    def _collect(self, run: Any, x: Any) -> Any:
        x = x.detach() if x.requires_grad else x
        index = self.counter[run]
        self.counter[run] = index + 1
        if index >= len(self.holders):
            raise CheckpointError(
                "torch.utils.checkpoint: trying to save more tensors during recomputation "
                "than during the original forward pass.")
        holder = self.holders[index]()
        if holder is not None:  # else: already released (a partial backward)
            holder.taken[run] = index
            self.recomputed[run][index] = x
        if self.early_stop and self.counter[run] == len(self.holders):
            raise _StopRecomputation
        return x

    def _check(self, run: Any) -> None:
        count = self.counter[run]
        if count < len(self.holders) and any(h() is not None for h in self.holders[count:]):
            raise CheckpointError(
                "torch.utils.checkpoint: A different number of tensors was saved during the "
                "original forward and recomputation.\n"
                f"Number of tensors saved during forward: {len(self.holders)}\n"
                f"Number of tensors saved during recomputation: {count}.")
        if not self.check:
            return
        lines = [f"tensor at position {index}:\nsaved metadata: {self.metadata[index]}\n"
                 f"recomputed metadata: {_metadata(x)}\n"
                 for index, x in sorted(self.recomputed[run].items())
                 if _metadata(x) != self.metadata[index]]
        if lines:
            raise CheckpointError(
                "torch.utils.checkpoint: Recomputed values for the following tensors have "
                "different metadata than during the forward pass.\n" + "".join(lines) + ".\n")


def _metadata(x: Any) -> dict[str, Any]:
    return {"shape": x.shape, "dtype": x.dtype, "device": x.device}


def _checkpoint_without_reentrant(function: Callable[..., Any], preserve_rng_state: bool,
                                  context_fn: Any, determinism_check: str, early_stop: bool,
                                  args: tuple[Any, ...], kwargs: dict[str, Any]) -> Any:
    if determinism_check not in ("default", "none"):
        raise ValueError(f"determinism_check should be one of ['default', 'none'], but got "
                         f"{determinism_check}")
    forward_context, recompute_context = context_fn() if context_fn is not None else (None,
                                                                                     None)
    rng_state = get_rng_state() if preserve_rng_state else None

    def recompute(*inputs: Any) -> None:
        outer = get_rng_state() if rng_state is not None else None
        try:
            if rng_state is not None:
                set_rng_state(rng_state)
            if recompute_context is not None:
                with recompute_context:
                    function(*inputs, **kwargs)
            else:
                function(*inputs, **kwargs)
        finally:
            if outer is not None:
                set_rng_state(outer)

    if _early_stop_override is not None:
        early_stop = _early_stop_override
    frame = _Frame(recompute, early_stop, determinism_check == "default")
    frame.inputs = list(args)
    with saved_tensors_hooks(frame.pack, frame.unpack):
        if forward_context is not None:
            with forward_context:
                result = function(*args, **kwargs)
        else:
            result = function(*args, **kwargs)
    frame.forward_done = True
    return result


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Any = None, determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, **kwargs: Any) -> Any:
    """Runs function(*args, **kwargs) without keeping its activations for backward, which
    recomputes them (see the module's doc)."""
    use_reentrant = _check_use_reentrant(use_reentrant, 2)
    preserve = kwargs.pop("preserve_rng_state", True)
    if use_reentrant:
        if context_fn is not None or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        return CheckpointFunction.apply(function, preserve, *args)
    if debug:
        raise NotImplementedError("checkpoint(debug=True): pith does not trace the operators "
                                  "of the forward and the recomputation")
    return _checkpoint_without_reentrant(function, preserve, context_fn, determinism_check,
                                         early_stop, args, kwargs)


def checkpoint_sequential(functions: Any, segments: int, input: Any,
                          use_reentrant: bool | None = None, **kwargs: Any) -> Any:
    """Runs the modules or functions of `functions` (a list or an nn.Sequential) in order
    on `input`: all but the last of the `segments` segments through checkpoint(), as
    PyTorch does, and the last directly."""
    use_reentrant = _check_use_reentrant(use_reentrant, 2)
    preserve = kwargs.pop("preserve_rng_state", True)
    if kwargs:
        raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
    if hasattr(functions, "children") and callable(functions.children):
        functions = list(functions.children())

    def run_function(start: int, end: int) -> Callable[[Any], Any]:
        def forward(x: Any) -> Any:
            for j in range(start, end + 1):
                x = functions[j](x)
            return x
        return forward

    segment_size = len(functions) // segments
    end = -1
    for start in range(0, segment_size * (segments - 1), segment_size):
        end = start + segment_size - 1
        input = checkpoint(run_function(start, end), input, use_reentrant=use_reentrant,
                           preserve_rng_state=preserve)
    return run_function(end + 1, len(functions) - 1)(input)
