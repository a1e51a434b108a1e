from collections.abc import Callable
from typing import Any, TypeVar, overload

from .nn import Module

_F = TypeVar("_F", bound=Callable[..., Any])

class Unsupported(RuntimeError): ...

class OptimizedModule(Module):
    _orig_mod: Module
    def __init__(self, mod: Module, fullgraph: bool = ...) -> None: ...
    def __call__(self, *args: Any, **kwargs: Any) -> Any: ...
    def forward(self, *args: Any, **kwargs: Any) -> Any: ...

class ExplainOutput:
    records: list[dict[str, Any]]
    result: Any
    graphs: list[str]
    captured: list[str]
    skips: list[str]
    graph_count: int

@overload
def compile(model: Module, *, fullgraph: bool = ..., dynamic: bool | None = ...,
            backend: str = ..., mode: str | None = ..., options: dict[str, Any] | None = ...,
            disable: bool = ...) -> OptimizedModule: ...
@overload
def compile(model: _F, *, fullgraph: bool = ..., dynamic: bool | None = ...,
            backend: str = ..., mode: str | None = ..., options: dict[str, Any] | None = ...,
            disable: bool = ...) -> _F: ...
@overload
def compile(model: None = ..., *, fullgraph: bool = ..., dynamic: bool | None = ...,
            backend: str = ..., mode: str | None = ..., options: dict[str, Any] | None = ...,
            disable: bool = ...) -> Callable[[_F], _F]: ...
def stats() -> dict[str, Any]: ...
def reset() -> None: ...
def hook_installed() -> bool: ...
def explain(fn: Callable[..., Any], *args: Any, **kwargs: Any) -> ExplainOutput: ...
