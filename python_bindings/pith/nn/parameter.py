"""pith.nn.Parameter: the Tensor subclass that Module registers as a learnable parameter.

A Parameter is a leaf that requires grad (unless made with requires_grad=False), as in
PyTorch. copy, deepcopy and pickle come from pith.Tensor, which keeps the subclass (See Note
[Pickled tensors], pith/_tensor.py).
"""
from .. import _C

Tensor = _C.Tensor


class Parameter(Tensor):
    """A Tensor that Module treats as a parameter: assigning one to a module attribute
    registers it, and it appears in parameters() and state_dict().

    Parameter(data=None, requires_grad=True) shares data's memory, as in PyTorch."""

    # As PyTorch's: ops on a parameter give plain tensors (Note [Function layer],
    # python_bindings/_C/function_layer.c).
    __pith_function__ = __torch_function__ = _C._disabled_pith_function_impl

    def __new__(cls, data=None, requires_grad=True):
        if data is None:
            data = _C.empty(0)
        elif not isinstance(data, Tensor):
            raise TypeError(f"Parameter(): data must be a pith.Tensor, not "
                            f"{type(data).__name__}")
        return Tensor._make_subclass(cls, data, requires_grad)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()
