"""Module attributes that only take bools, as PyTorch's torch.backends flags."""
import sys
import types
from typing import Any


def bool_flags(module_name: str, defaults: dict[str, bool], setters: dict[str, str]) -> None:
    """Makes `defaults`' names bool properties of module `module_name` (starting at their
    defaults); setting one to anything but a bool raises PyTorch's RuntimeError, naming the
    setter of `setters`."""
    module = sys.modules[module_name]
    state = dict(defaults)

    def flag(name: str) -> property:
        def get(self: types.ModuleType) -> bool:
            return state[name]

        def set_(self: types.ModuleType, value: Any) -> None:
            if not isinstance(value, bool):
                raise RuntimeError(f"{setters[name]} expects a bool, but got "
                                   f"{type(value).__name__}")
            state[name] = value

        return property(get, set_)

    namespace: dict[str, Any] = {name: flag(name) for name in defaults}
    namespace["__module__"] = module_name
    # CudnnModule, MkldnnModule: PyTorch's names for these module classes.
    name = module_name.rpartition(".")[2].capitalize() + "Module"
    module.__class__ = type(name, (types.ModuleType,), namespace)
