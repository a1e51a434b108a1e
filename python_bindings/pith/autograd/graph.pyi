# Type stubs of pith.autograd.graph (hand-written; see graph.py and docs/autograd.md).
from contextlib import AbstractContextManager
from typing import Any, Callable

from .. import Tensor
from .._C import _Node as Node

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]

class saved_tensors_hooks:
    pack_hook: Callable[[Tensor], Any]
    unpack_hook: Callable[[Any], Tensor]
    def __init__(self, pack_hook: Callable[[Tensor], Any],
                 unpack_hook: Callable[[Any], Tensor]) -> None: ...
    def __enter__(self) -> None: ...
    def __exit__(self, *args: object) -> None: ...

class save_on_cpu(saved_tensors_hooks):
    def __init__(self, pin_memory: bool = ..., device_type: str = ...) -> None: ...

def disable_saved_tensors_hooks(error_message: str) -> AbstractContextManager[None]: ...
