# Type stubs of pith.autograd (hand-written: a small, stable surface; see
# python_bindings/pith/autograd/__init__.py and docs/autograd.md).
from typing import Any, Callable, Sequence

from .. import Tensor
from .. import enable_grad as enable_grad, inference_mode as inference_mode
from .. import is_grad_enabled as is_grad_enabled
from .. import is_inference_mode_enabled as is_inference_mode_enabled
from .. import no_grad as no_grad, set_grad_enabled as set_grad_enabled
from . import functional as functional, graph as graph
from .anomaly_mode import detect_anomaly as detect_anomaly
from .anomaly_mode import set_detect_anomaly as set_detect_anomaly

_Tensors = Tensor | Sequence[Tensor]

def backward(tensors: _Tensors, grad_tensors: _Tensors | Sequence[Tensor | None] | None = ...,
             retain_graph: bool | None = ..., create_graph: bool = ...,
             grad_variables: Any = ..., inputs: _Tensors | None = ...) -> None: ...
def grad(outputs: _Tensors, inputs: _Tensors,
         grad_outputs: _Tensors | Sequence[Tensor | None] | None = ...,
         retain_graph: bool | None = ..., create_graph: bool = ..., only_inputs: bool = ...,
         allow_unused: bool | None = ..., is_grads_batched: bool = ...,
         materialize_grads: bool = ...) -> tuple[Tensor | None, ...]: ...
def gradcheck(func: Callable[..., Any], inputs: Any, **kwargs: Any) -> bool: ...
def gradgradcheck(func: Callable[..., Any], inputs: Any, grad_outputs: Any = ...,
                  **kwargs: Any) -> bool: ...

from . import function as function
from .function import Function as Function
