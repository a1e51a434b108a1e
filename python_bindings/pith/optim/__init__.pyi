# Type stubs of pith.optim (hand-written; tests/python/test_optim_base.py checks that they
# declare every public name and method). Signatures as torch.optim's.
from collections.abc import Callable, Iterable
from typing import Any, TypeAlias, overload

from .. import Tensor
from ..nn import _RemovableHandle as RemovableHandle
from . import lr_scheduler as lr_scheduler

ParamsT: TypeAlias = Iterable[Tensor] | Iterable[dict[str, Any]] | Iterable[tuple[str, Tensor]]
StateDict: TypeAlias = dict[str, Any]
_Betas: TypeAlias = tuple[float, float] | tuple[Tensor, Tensor]

class Optimizer:
    defaults: dict[str, Any]
    state: dict[Tensor, Any]
    param_groups: list[dict[str, Any]]
    def __init__(self, params: ParamsT, defaults: dict[str, Any]) -> None: ...
    def __getstate__(self) -> dict[str, Any]: ...
    def __setstate__(self, state: dict[str, Any]) -> None: ...
    @staticmethod
    def profile_hook_step(func: Callable[..., Any]) -> Callable[..., Any]: ...
    def register_step_pre_hook(
        self, hook: Callable[[Any, tuple[Any, ...], dict[str, Any]],
                             tuple[tuple[Any, ...], dict[str, Any]] | None]) -> RemovableHandle: ...
    def register_step_post_hook(
        self, hook: Callable[[Any, tuple[Any, ...], dict[str, Any]], None]) -> RemovableHandle: ...
    def register_state_dict_pre_hook(self, hook: Callable[[Any], None],
                                     prepend: bool = False) -> RemovableHandle: ...
    def register_state_dict_post_hook(self, hook: Callable[[Any, StateDict], StateDict | None],
                                      prepend: bool = False) -> RemovableHandle: ...
    def register_load_state_dict_pre_hook(
        self, hook: Callable[[Any, StateDict], StateDict | None],
        prepend: bool = False) -> RemovableHandle: ...
    def register_load_state_dict_post_hook(self, hook: Callable[[Any], None],
                                           prepend: bool = False) -> RemovableHandle: ...
    def state_dict(self) -> StateDict: ...
    def load_state_dict(self, state_dict: StateDict) -> None: ...
    def zero_grad(self, set_to_none: bool = True) -> None: ...
    @overload
    def step(self, closure: None = None) -> None: ...
    @overload
    def step(self, closure: Callable[[], float]) -> float: ...
    def add_param_group(self, param_group: dict[str, Any]) -> None: ...

class SGD(Optimizer):
    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3, momentum: float = 0,
                 dampening: float = 0, weight_decay: float | Tensor = 0, nesterov: bool = False,
                 *, maximize: bool = False, foreach: bool | None = None,
                 differentiable: bool = False, fused: bool | None = None) -> None: ...

class Adam(Optimizer):
    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: _Betas = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 0,
                 amsgrad: bool = False, *, foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False,
                 fused: bool | None = None, decoupled_weight_decay: bool = False) -> None: ...

class AdamW(Adam):
    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: _Betas = (0.9, 0.999), eps: float = 1e-8, weight_decay: float = 1e-2,
                 amsgrad: bool = False, *, maximize: bool = False,
                 foreach: bool | None = None, capturable: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None: ...

class RMSprop(Optimizer):
    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, alpha: float = 0.99,
                 eps: float = 1e-8, weight_decay: float = 0, momentum: float = 0,
                 centered: bool = False, capturable: bool = False,
                 foreach: bool | None = None, maximize: bool = False,
                 differentiable: bool = False) -> None: ...

class Adagrad(Optimizer):
    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-2, lr_decay: float = 0,
                 weight_decay: float = 0, initial_accumulator_value: float = 0,
                 eps: float = 1e-10, foreach: bool | None = None, *, maximize: bool = False,
                 differentiable: bool = False, fused: bool | None = None) -> None: ...
    def share_memory(self) -> None: ...

class Adadelta(Optimizer):
    def __init__(self, params: ParamsT, lr: float | Tensor = 1.0, rho: float = 0.9,
                 eps: float = 1e-6, weight_decay: float = 0, foreach: bool | None = None, *,
                 capturable: bool = False, maximize: bool = False,
                 differentiable: bool = False) -> None: ...

class Adamax(Optimizer):
    def __init__(self, params: ParamsT, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, foreach: bool | None = None, *,
                 maximize: bool = False, differentiable: bool = False,
                 capturable: bool = False) -> None: ...

class NAdam(Optimizer):
    def __init__(self, params: ParamsT, lr: float | Tensor = 2e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, momentum_decay: float = 4e-3,
                 decoupled_weight_decay: bool = False, *, foreach: bool | None = None,
                 maximize: bool = False, capturable: bool = False,
                 differentiable: bool = False) -> None: ...

class RAdam(Optimizer):
    def __init__(self, params: ParamsT, lr: float | Tensor = 1e-3,
                 betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
                 weight_decay: float = 0, decoupled_weight_decay: bool = False, *,
                 foreach: bool | None = None, maximize: bool = False,
                 capturable: bool = False, differentiable: bool = False) -> None: ...

class LBFGS(Optimizer):
    def __init__(self, params: ParamsT, lr: float | Tensor = 1, max_iter: int = 20,
                 max_eval: int | None = None, tolerance_grad: float = 1e-7,
                 tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None) -> None: ...
    def step(self, closure: Callable[[], Any]) -> Any: ...  # type: ignore[override]
