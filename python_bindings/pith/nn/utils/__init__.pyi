# Type stubs of pith.nn.utils (hand-written, in the shape of torch.nn.utils'; test_stubs.py
# checks that every public name of the live package is declared here).
from collections.abc import Iterable
from typing import TypeVar

from pith import Tensor
from pith.nn import Module

from . import parametrizations as parametrizations
from . import parametrize as parametrize

__all__ = ["clip_grad_norm", "clip_grad_norm_", "clip_grads_with_norm_", "clip_grad_value_",
           "get_total_norm", "parameters_to_vector", "parametrizations", "parametrize",
           "remove_weight_norm", "vector_to_parameters", "weight_norm"]

_tensor_or_tensors = Tensor | Iterable[Tensor]
_M = TypeVar("_M", bound=Module)

def clip_grad_norm_(parameters: _tensor_or_tensors, max_norm: float, norm_type: float = ...,
                    error_if_nonfinite: bool = ..., foreach: bool | None = ...) -> Tensor: ...
def clip_grad_norm(parameters: _tensor_or_tensors, max_norm: float, norm_type: float = ...,
                   error_if_nonfinite: bool = ..., foreach: bool | None = ...) -> Tensor: ...
def get_total_norm(tensors: _tensor_or_tensors, norm_type: float = ...,
                   error_if_nonfinite: bool = ..., foreach: bool | None = ...) -> Tensor: ...
def clip_grads_with_norm_(parameters: _tensor_or_tensors, max_norm: float, total_norm: Tensor,
                          foreach: bool | None = ...) -> None: ...
def clip_grad_value_(parameters: _tensor_or_tensors, clip_value: float,
                     foreach: bool | None = ...) -> None: ...
def parameters_to_vector(parameters: Iterable[Tensor]) -> Tensor: ...
def vector_to_parameters(vec: Tensor, parameters: Iterable[Tensor]) -> None: ...
def weight_norm(module: _M, name: str = ..., dim: int | None = ...) -> _M: ...
def remove_weight_norm(module: _M, name: str = ...) -> _M: ...
