# Type stubs of pith.einops (hand-written: einops's layers as pith.nn modules).
from typing import Any

from pith import Tensor
from pith.nn import Module

__all__ = ["Rearrange", "Reduce", "EinMix"]

class Rearrange(Module):
    pattern: str
    axes_lengths: dict[str, Any]
    def __init__(self, pattern: str, **axes_lengths: Any) -> None: ...
    def forward(self, input: Tensor) -> Tensor: ...

class Reduce(Module):
    pattern: str
    reduction: str
    axes_lengths: dict[str, Any]
    def __init__(self, pattern: str, reduction: str, **axes_lengths: Any) -> None: ...
    def forward(self, input: Tensor) -> Tensor: ...

class EinMix(Module):
    weight: Any
    bias: Any
    def __init__(self, pattern: str, weight_shape: str, bias_shape: str | None = ...,
                 **axes_lengths: Any) -> None: ...
    def forward(self, input: Tensor) -> Tensor: ...
