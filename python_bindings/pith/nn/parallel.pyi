# Type stubs of pith.nn.parallel (hand-written, in the shape of torch.nn.parallel's).
from collections.abc import Sequence
from typing import Any

from pith import Tensor

from . import DataParallel as DataParallel
from . import Module

def data_parallel(module: Module, inputs: Any, device_ids: Sequence[int] | None = ..., output_device: int | None = ..., dim: int = ..., module_kwargs: Any | None = ...) -> Tensor: ...
