# Type stubs of pith.library (hand-written: the module is small).
from collections.abc import Callable, Sequence
from typing import Any, TypeVar, overload

__all__ = ["define", "impl"]

_F = TypeVar("_F", bound=Callable[..., Any])

def define(qualname: str, schema: str | None = ...) -> Any: ...
@overload
def impl(op: Any, types: str | Sequence[str]) -> Callable[[_F], _F]: ...
@overload
def impl(op: Any, types: str | Sequence[str], func: _F) -> _F: ...
