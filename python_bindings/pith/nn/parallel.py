"""pith.nn.parallel: DataParallel and data_parallel as torch.nn.parallel runs them when no
accelerator is available, which for pith (CPU only) is always: DataParallel keeps `module`
(so its state_dict keys start with "module.") and calls it; data_parallel raises PyTorch's
RuntimeError."""
from .modules.module import Module

__all__ = ["DataParallel", "data_parallel"]


class DataParallel(Module):
    """Wraps `module` and calls it with the inputs unchanged. With no GPU PyTorch replicates
    nothing: device_ids is [] whatever was given, and output_device and dim are not kept."""

    # DataParallel[M] works, as for torch's Generic[T] class, without importing typing for
    # every `import pith.nn` (docs/python.md "Import cost"); the stub declares Generic[_T].
    __class_getitem__ = classmethod(type(list[int]))  # types.GenericAlias

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        self.module = module
        self.device_ids = []

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)


def data_parallel(module, inputs, device_ids=None, output_device=None, dim=0,
                  module_kwargs=None):
    """PyTorch's functional DataParallel, which needs an accelerator: without one (always, in
    pith) it raises RuntimeError, as PyTorch does on a CPU-only machine."""
    raise RuntimeError("device type could not be determined")
