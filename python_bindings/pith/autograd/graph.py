"""pith.autograd.graph: the graph's nodes and saved-tensor hooks, as torch.autograd.graph.

saved_tensors_hooks pushes a pack/unpack pair on this thread's stack in libpith
(autograd/saved_hooks.c, Note [Saved tensor hooks]); the nodes themselves are _C._Node and
its subclasses, named as PyTorch names them (Note [Node wrappers]).
"""
import contextlib

from .. import _C

__all__ = ["Node", "saved_tensors_hooks", "save_on_cpu", "disable_saved_tensors_hooks"]

# grad_fn objects are instances of subclasses of Node (MulBackward0, AccumulateGrad, ...).
Node = _C._Node


class saved_tensors_hooks:
    """Context manager: while active on this thread, each tensor a node saves for backward
    is passed to `pack_hook(tensor) -> object`, and backward gets it back from
    `unpack_hook(object) -> Tensor`, as torch.autograd.graph.saved_tensors_hooks.

    Unlike PyTorch, an output of the node that saves it reaches pack_hook without its
    history (grad_fn None), so that keeping it cannot make a reference cycle through the
    node (docs/autograd.md)."""

    def __init__(self, pack_hook, unpack_hook):
        self.pack_hook = pack_hook
        self.unpack_hook = unpack_hook

    def __enter__(self):
        _C._saved_tensors_hooks_push(self.pack_hook, self.unpack_hook)

    def __exit__(self, *args):
        _C._saved_tensors_hooks_pop()


class save_on_cpu(saved_tensors_hooks):
    """Saves tensors for backward on the CPU and moves them back to their device in
    backward, as torch.autograd.graph.save_on_cpu. pith's tensors live on the CPU, so the
    copy is the tensor itself; pin_memory has nothing to pin."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        def pack_to_cpu(tensor):
            return (tensor.device, tensor.cpu())

        def unpack_from_cpu(packed):
            device, tensor = packed
            return tensor.to(device)

        super().__init__(pack_to_cpu, unpack_from_cpu)


@contextlib.contextmanager
def disable_saved_tensors_hooks(error_message):
    """Context manager under which saved_tensors_hooks raises RuntimeError(error_message),
    as torch.autograd.graph.disable_saved_tensors_hooks; entering it while hooks are active
    raises the same."""
    previous = None
    try:
        previous = _C._saved_tensors_hooks_disabled_message()
        _C._saved_tensors_hooks_disable(error_message)
        yield
    finally:
        _C._saved_tensors_hooks_disable(previous)
