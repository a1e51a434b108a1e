"""pith.autograd: gradients, as torch.autograd.

backward and grad run libpith's engine (autograd/engine.c) through _C._run_backward; the
grad-mode context managers are pith's (pith/_grad_mode.py); gradcheck and gradgradcheck
(gradcheck.py) and pith.autograd.functional (functional.py) are written over grad.
docs/autograd.md explains the design and the differences from PyTorch.
"""
from .. import _C
from .._grad_mode import (  # noqa: F401
    enable_grad, inference_mode, is_grad_enabled, is_inference_mode_enabled, no_grad,
    set_grad_enabled)

__all__ = ["backward", "grad", "no_grad", "enable_grad", "set_grad_enabled",
           "inference_mode", "gradcheck", "gradgradcheck", "functional", "Function", "graph",
           "detect_anomaly", "set_detect_anomaly"]

_Tensor = _C.Tensor


def _as_tuple(value, what):
    if isinstance(value, _Tensor):
        return (value,)
    if isinstance(value, (tuple, list)):
        for i, item in enumerate(value):
            if not isinstance(item, _Tensor):
                raise TypeError(f"{what}: expected a Tensor at position {i}, got "
                                f"{type(item).__name__}")
        return tuple(value)
    raise TypeError(f"{what}: expected a Tensor or a sequence of Tensors, got "
                    f"{type(value).__name__}")


def _grads_for(outputs, grads, what):
    """One gradient (or None) per output, as torch's _make_grads checks them."""
    if grads is None:
        grads = (None,) * len(outputs)
    elif isinstance(grads, _Tensor):
        grads = (grads,)
    else:
        grads = tuple(grads)
    if len(grads) != len(outputs):
        raise RuntimeError(f"{what}: got {len(grads)} gradients for {len(outputs)} "
                           f"outputs")
    checked = []
    for out, g in zip(outputs, grads):
        if g is not None and not isinstance(g, _Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
        if g is None and out.requires_grad and out.numel() != 1:
            raise RuntimeError("grad can be implicitly created only for scalar outputs")
        checked.append(g)
    return tuple(checked)


def _run_engine(*args):
    """_C._run_backward, re-raising the exception a custom Function's backward raised as
    itself: the engine carries only its message (function.py's _pending)."""
    _pending.error = None
    try:
        return _C._run_backward(*args)
    except RuntimeError as e:
        error, _pending.error = _pending.error, None
        if error is not None and str(error) in str(e):
            raise error.with_traceback(error.__traceback__) from None
        raise
    finally:
        _pending.error = None


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False,
             grad_variables=None, inputs=None):
    """Accumulates the gradients of `tensors` into the .grad of the graph's leaves (or of
    `inputs` only), as torch.autograd.backward."""
    if grad_variables is not None:
        if grad_tensors is not None:
            raise RuntimeError("'grad_tensors' and 'grad_variables' (deprecated) arguments "
                               "both passed to backward(). Please only use 'grad_tensors'.")
        grad_tensors = grad_variables
    if inputs is not None and isinstance(inputs, (tuple, list)) and len(inputs) == 0:
        raise RuntimeError("'inputs' argument to backward() cannot be empty.")
    tensors = _as_tuple(tensors, "backward")
    inputs = () if inputs is None else _as_tuple(inputs, "backward")
    grads = _grads_for(tensors, grad_tensors, "backward")
    if retain_graph is None:
        retain_graph = create_graph
    _run_engine(tensors, grads, bool(retain_graph), bool(create_graph), inputs, False, True)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         only_inputs=True, allow_unused=None, is_grads_batched=False,
         materialize_grads=False):
    """The gradients of `outputs` with respect to `inputs` (a tuple), as
    torch.autograd.grad; .grad is left alone."""
    if materialize_grads and allow_unused is False:
        raise ValueError("Expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got: allow_unused=False.")
    if allow_unused is None:
        allow_unused = materialize_grads
    if is_grads_batched:
        raise NotImplementedError("grad(): is_grads_batched=True needs vmap, which pith "
                                  "does not have")
    outputs = _as_tuple(outputs, "grad")
    inputs = _as_tuple(inputs, "grad")
    if not inputs:
        raise RuntimeError("grad requires non-empty inputs.")
    grads = _grads_for(outputs, grad_outputs, "grad")
    if retain_graph is None:
        retain_graph = create_graph
    result = _run_engine(outputs, grads, bool(retain_graph), bool(create_graph), inputs,
                              bool(allow_unused), False)
    if materialize_grads:
        from .. import zeros_like
        result = tuple(zeros_like(x) if g is None else g for x, g in zip(inputs, result))
    return result


from . import function  # noqa: E402
from .function import Function, _pending  # noqa: E402

# As in torch, pith.autograd.gradcheck is the function, and the module of that name holds
# GradcheckError (`from pith.autograd.gradcheck import GradcheckError`); the function carries
# it too, so that pith.autograd.gradcheck.GradcheckError also reads as an attribute.
from . import functional, graph  # noqa: E402
from .anomaly_mode import detect_anomaly, set_detect_anomaly  # noqa: E402
from .gradcheck import GradcheckError as _GradcheckError  # noqa: E402
from .gradcheck import gradcheck, gradgradcheck  # noqa: E402

gradcheck.GradcheckError = _GradcheckError
