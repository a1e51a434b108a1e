"""pith.utils.checkpoint: torch.utils.checkpoint's activation checkpointing, for the
models that wrap their blocks in it.

Checkpointing trades memory for a second forward pass during backward: the forward runs
without saving activations, and backward recomputes them. pith's does not recompute yet:
`checkpoint(fn, *args)` runs `fn` once, recording as usual, so gradients are right and only
the memory saving is missing (docs/autograd.md). The arguments and their checks
(use_reentrant, keyword arguments, the warnings) are PyTorch's.
"""
import warnings
from typing import Any, Callable

from .. import is_grad_enabled

__all__ = ["checkpoint", "checkpoint_sequential"]


def _check_use_reentrant(use_reentrant: bool | None, stacklevel: int) -> bool:
    if use_reentrant is None:
        warnings.warn(
            "torch.utils.checkpoint: the use_reentrant parameter should be passed explicitly. "
            "use_reentrant=False is recommended, but if you need to preserve the current "
            "default behavior, you can pass use_reentrant=True.", stacklevel=stacklevel + 1)
        return True
    return use_reentrant


def checkpoint(function: Callable[..., Any], *args: Any, use_reentrant: bool | None = None,
               context_fn: Any = None, determinism_check: str = "default", debug: bool = False,
               early_stop: bool = True, preserve_rng_state: bool = True, **kwargs: Any) -> Any:
    """Runs function(*args, **kwargs) and returns its result (see the module's doc)."""
    use_reentrant = _check_use_reentrant(use_reentrant, 2)
    if use_reentrant:
        if context_fn is not None or debug:
            raise ValueError("Passing `context_fn` or `debug` is only supported when "
                             "use_reentrant=False.")
        if kwargs:
            raise ValueError("Unexpected keyword arguments: " + ",".join(arg for arg in kwargs))
        if is_grad_enabled():
            # PyTorch's warning: no input requires grad, which no pith tensor does.
            warnings.warn("None of the inputs have requires_grad=True. Gradients will be None",
                          stacklevel=2)
    return function(*args, **kwargs)


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
