"""parameters_to_vector and vector_to_parameters, as torch.nn.utils.convert_parameters."""
from ... import _C
from ..._grad_mode import no_grad
from ..._ops import ops

Tensor = _C.Tensor

__all__ = ["parameters_to_vector", "vector_to_parameters"]


def parameters_to_vector(parameters):
    """The parameters flattened and concatenated into one vector (differentiable)."""
    param_device = None
    vec = []
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        vec.append(param.view(-1))
    return _C.cat(vec)


# Note [vector_to_parameters copies]
# PyTorch's vector_to_parameters rebinds each parameter's .data to a view of vec; pith's
# Tensor.data cannot be assigned, so the slice is copied into the parameter (under no_grad)
# instead. The parameters keep their identity, values and dtype (a vec of another dtype is
# converted); unlike PyTorch's, they do not share memory with vec afterwards.
def vector_to_parameters(vec, parameters):
    """Copies consecutive slices of vec into the parameters, in order.
    See Note [vector_to_parameters copies]."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"expected pith.Tensor, but got: {_typename(vec)}")
    param_device = None
    pointer = 0
    for param in parameters:
        param_device = _check_param_device(param, param_device)
        num_param = param.numel()
        with no_grad():
            ops.pith.copy_(param, vec[pointer:pointer + num_param].view_as(param))
        pointer += num_param


def _typename(obj):
    # As torch.typename for a non-tensor.
    module = getattr(type(obj), "__module__", "")
    qualname = type(obj).__qualname__
    return qualname if module in ("", "builtins") else f"{module}.{qualname}"


def _check_param_device(param, old_param_device):
    # pith's tensors are all on the CPU (device -1 in PyTorch's scheme); the check stays
    # so that a future device gets PyTorch's error.
    device = param.get_device() if param.device.type != "cpu" else -1
    if old_param_device is None:
        return device
    if device != old_param_device:
        raise TypeError("Found two parameters on different devices, "
                        "this is currently not supported.")
    return old_param_device
