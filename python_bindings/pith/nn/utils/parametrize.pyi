# Type stubs of pith.nn.utils.parametrize (hand-written, as torch.nn.utils.parametrize's).
from collections.abc import Sequence
from contextlib import AbstractContextManager

from pith import Tensor
from pith.nn import Module, ModuleList

__all__ = ["cached", "ParametrizationList", "register_parametrization", "is_parametrized",
           "remove_parametrizations", "type_before_parametrizations",
           "transfer_parametrizations_and_params"]

def cached() -> AbstractContextManager[None]: ...

class ParametrizationList(ModuleList):
    original: Tensor
    unsafe: bool
    is_tensor: bool
    ntensors: int
    def __init__(self, modules: Sequence[Module], original: Tensor, unsafe: bool = ...) -> None: ...
    def right_inverse(self, value: Tensor) -> None: ...
    def forward(self) -> Tensor: ...

def register_parametrization(module: Module, tensor_name: str, parametrization: Module, *,
                             unsafe: bool = ...) -> Module: ...
def is_parametrized(module: Module, tensor_name: str | None = ...) -> bool: ...
def remove_parametrizations(module: Module, tensor_name: str,
                            leave_parametrized: bool = ...) -> Module: ...
def type_before_parametrizations(module: Module) -> type: ...
def transfer_parametrizations_and_params(from_module: Module, to_module: Module,
                                         tensor_name: str | None = ...) -> Module: ...
