"""Tensor methods and pith functions that are not a single op: dtype conversions (`to`,
`float()` ...), the `*_like` factories, and the autograd
attributes, which say that autograd is not available yet.

`to` is also the Python implementation behind the short C path of x.to(dtype)
(python_bindings/_C/conversions.c): it is registered with _C._set_generic.
"""
import builtins

from . import _C
set_generic = _C._set_generic

Tensor = _C.Tensor

_NO_AUTOGRAD = "autograd is not available in pith yet"


def _check_device(device, name):
    if device is not None and str(device) != "cpu":
        raise NotImplementedError(f"{name}(): device={device!r} is not supported: pith tensors "
                                  f"live on the CPU")


def _convert(self, dtype, copy):
    if dtype is None or dtype == self.dtype:
        return self.clone() if copy else self
    from ._ops import ops
    return ops.pith.to.dtype(self, dtype)


# Python's types as dtypes, as PyTorch takes them (x.to(float) is float64).
_PYTHON_TYPES = {builtins.float: _C.float64, builtins.int: _C.int64, builtins.bool: _C.bool}


def to(self, *args, non_blocking=False, copy=False, memory_format=None, **kwargs):
    """to(dtype), to(device), to(device, dtype), to(other): as PyTorch's Tensor.to."""
    if memory_format is not None:
        raise NotImplementedError("to(): memory_format is not supported")
    dtype = kwargs.pop("dtype", None)
    if isinstance(dtype, type):
        dtype = _PYTHON_TYPES.get(dtype, dtype)
    device = kwargs.pop("device", None)
    if kwargs:
        raise TypeError(f"to() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if len(args) > 2:
        raise TypeError(f"to() takes at most 2 positional arguments ({len(args)} given)")
    for a in args:
        if isinstance(a, type) and a in _PYTHON_TYPES:
            dtype = _PYTHON_TYPES[a]
        elif isinstance(a, _C.dtype):
            dtype = a
        elif isinstance(a, Tensor):
            dtype, device = a.dtype, a.device
        elif isinstance(a, str) or a is None:
            device = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments: "
                            f"{type(a).__name__}")
    _check_device(device, "to")
    if not isinstance(copy, builtins.bool):
        raise TypeError("to(): copy must be a bool")
    return _convert(self, dtype, copy)


def _conversion(name, dtype):
    def convert(self, memory_format=None):
        if memory_format is not None:
            raise NotImplementedError(f"{name}(): memory_format is not supported")
        return _convert(self, dtype, False)

    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"self.to(pith.{dtype})"
    return convert


_CONVERSIONS = {
    "float": _C.float32, "double": _C.float64, "half": _C.float16, "bfloat16": _C.bfloat16,
    "long": _C.int64, "int": _C.int32, "short": _C.int16, "char": _C.int8, "byte": _C.uint8,
    "bool": _C.bool,
}


# ---- layouts (the binder takes layout= of the factories: Note [Python-only arguments]) ----

class layout:
    """A tensor memory layout, as torch.layout; pith has one, pith.strided."""
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self):
        return f"pith.{self._name}"

    def __reduce__(self):
        return self._name


strided = layout("strided")
_C._set_strided(strided)



# ---- small Tensor conveniences of PyTorch ----

def _new_factory(name, factory):
    def new(self, *size, dtype=None, device=None, requires_grad=False):
        _check_device(device, name)
        return factory(*size, dtype=dtype or self.dtype, requires_grad=requires_grad)

    new.__name__ = new.__qualname__ = name
    return new


def new_full(self, size, fill_value, *, dtype=None, device=None, requires_grad=False):
    _check_device(device, "new_full")
    return _C.full(size, fill_value, dtype=dtype or self.dtype, requires_grad=requires_grad)


def new_tensor(self, data, *, dtype=None, device=None, requires_grad=False):
    _check_device(device, "new_tensor")
    return _C.tensor(data, dtype=dtype or self.dtype, requires_grad=requires_grad)


def fill_(self, value):
    """Fills self with `value` (a number or a 0-dim tensor) in place."""
    if isinstance(value, Tensor):
        if value.ndim != 0:
            raise RuntimeError(f"fill_ only supports 0-dimension value tensor but got tensor "
                               f"with {value.ndim} dimensions.")
        source = value
    else:
        source = _C.full((), value, dtype=self.dtype)
    return self.copy_(source)


def zero_(self):
    return fill_(self, 0)


def type_as(self, other):
    return self.to(other.dtype)


def element_size(self):
    return self.dtype.itemsize


# ---- autograd placeholders ----

def _requires_grad_get(self):
    return False


def _requires_grad_set(self, value):
    if value:
        raise NotImplementedError(f"requires_grad=True: {_NO_AUTOGRAD}")


def requires_grad_(self, requires_grad=True):
    _requires_grad_set(self, requires_grad)
    return self


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    raise NotImplementedError(f"backward(): {_NO_AUTOGRAD}")


# ---- *_like factories ----

def _like(name, factory):
    def like(input, *, dtype=None, device=None, requires_grad=False, memory_format=None):
        if not isinstance(input, Tensor):
            raise TypeError(f"{name}(): argument 'input' must be Tensor, not "
                            f"{type(input).__name__}")
        _check_device(device, name)
        return factory(input.shape, dtype=dtype or input.dtype, requires_grad=requires_grad)

    like.__name__ = like.__qualname__ = name
    return like


def full_like(input, fill_value, *, dtype=None, device=None, requires_grad=False,
              memory_format=None):
    if not isinstance(input, Tensor):
        raise TypeError(f"full_like(): argument 'input' must be Tensor, not "
                        f"{type(input).__name__}")
    _check_device(device, "full_like")
    return _C.full(input.shape, fill_value, dtype=dtype or input.dtype,
                   requires_grad=requires_grad)


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False,
                 memory_format=None):
    if high is None:
        low, high = 0, low
    _check_device(device, "randint_like")
    if requires_grad:
        raise NotImplementedError(f"randint_like(): requires_grad=True: {_NO_AUTOGRAD}")
    return _C.randint(low, high, tuple(input.shape), dtype=dtype or input.dtype)


def install(namespace):
    """Adds these methods to pith.Tensor and the functions to the pith namespace."""
    Tensor.to = to
    set_generic("to", to)
    for name, dtype in _CONVERSIONS.items():
        generic = _conversion(name, dtype)
        set_generic(name, generic)
    namespace["layout"] = layout
    namespace["strided"] = strided
    for name, factory in (("new_zeros", _C.zeros), ("new_ones", _C.ones),
                          ("new_empty", _C.empty)):
        setattr(Tensor, name, _new_factory(name, factory))
    Tensor.new_full = new_full
    Tensor.new_tensor = new_tensor
    Tensor.fill_ = fill_
    Tensor.zero_ = zero_
    Tensor.type_as = type_as
    Tensor.element_size = element_size
    Tensor.nbytes = property(lambda self: self.numel() * self.dtype.itemsize)
    Tensor.itemsize = property(lambda self: self.dtype.itemsize)
    Tensor.requires_grad = property(_requires_grad_get, _requires_grad_set,
                                    doc=f"Always False: {_NO_AUTOGRAD}.")
    Tensor.grad = property(lambda self: None, doc=f"Always None: {_NO_AUTOGRAD}.")
    Tensor.is_leaf = property(lambda self: True)
    Tensor.requires_grad_ = requires_grad_
    Tensor.backward = backward
    for name, factory in (("zeros_like", _C.zeros), ("ones_like", _C.ones),
                          ("empty_like", _C.empty), ("rand_like", _C.rand),
                          ("randn_like", _C.randn)):
        namespace[name] = _like(name, factory)
    namespace["full_like"] = full_like
    namespace["randint_like"] = randint_like
