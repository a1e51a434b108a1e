# Type stubs of pith.nn.utils.parametrizations (hand-written; weight_norm only, as pith).
from pith.nn import Module

__all__ = ["weight_norm"]

def weight_norm(module: Module, name: str = ..., dim: int | None = ...) -> Module: ...
