"""Tensor methods and pith functions that are not a single op: dtype conversions (`to`,
`float()`, `type()` ...), devices (`cpu()`, `cuda()`, `is_cuda` ...), the `*_like`
factories, and Tensor.backward.

`to` is also the Python implementation behind the short C path of x.to(dtype)
(python_bindings/_C/conversions.c): it is registered with _C._set_generic.
"""
import builtins

from . import _C
set_generic = _C._set_generic

Tensor = _C.Tensor

# The device= of the Python layer: None or a CPU device (a str, a pith.device, a
# torch.device); the others raise. See Note [Device arguments] (python_bindings/_C/device.c).
_check_device = _C._cpu_device


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
        elif a is None or isinstance(a, (str, _C.device, builtins.int)) or _is_torch_device(a):
            device = a
        else:
            raise TypeError(f"to() received an invalid combination of arguments: "
                            f"{type(a).__name__}")
    device = _check_device(device, "to")
    if not isinstance(copy, builtins.bool):
        raise TypeError("to(): copy must be a bool")
    # PyTorch compares the device asked for with the tensor's, which has no index: 'cpu:0'
    # makes a copy, 'cpu' returns the tensor itself.
    return _convert(self, dtype, copy or (device is not None and device.index is not None))


def _is_torch_device(obj):
    return type(obj).__module__ == "torch" and type(obj).__name__ == "device"


def _conversion(name, dtype):
    def convert(self, memory_format=None):
        if memory_format is not None:
            raise NotImplementedError(f"{name}(): memory_format is not supported")
        return _convert(self, dtype, False)

    convert.__name__ = convert.__qualname__ = name
    convert.__doc__ = f"self.to(pith.{dtype})"
    return convert


# x.float() & co. and their dtypes, as the C methods have them (PITH_FORALL_DTYPE_CONVERSIONS,
# python_bindings/_C/state.h).
_CONVERSIONS = _C._dtype_conversions()


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


def _require_tensor(fn, name, value):
    if not isinstance(value, Tensor):
        raise TypeError(f"{fn}(): argument '{name}' (position 1) must be Tensor, not "
                        f"{type(value).__name__}")


def type_as(self, other):
    _require_tensor("type_as", "other", other)
    return self.to(other.dtype)


def view_as(self, other):
    """self.view(other.size())."""
    _require_tensor("view_as", "other", other)
    return self.view(other.size())


def is_tensor(obj, /):
    """Whether obj is a pith.Tensor (or a subclass instance)."""
    return isinstance(obj, Tensor)


def is_floating_point(input):
    """Whether input's dtype is a floating-point dtype."""
    _require_tensor("is_floating_point", "input", input)
    return input.dtype.is_floating_point


# ---- devices ----

def cpu(self, memory_format=None):
    """The tensor itself: pith tensors live on the CPU (a meta tensor has no data to copy)."""
    if memory_format is not None:
        raise NotImplementedError("cpu(): memory_format is not supported")
    if self.device.type == "meta":
        raise NotImplementedError("Cannot copy out of meta tensor; no data!")
    return self


def cuda(self, device=None, non_blocking=False, memory_format=None):
    """Raises as PyTorch built without CUDA does: pith tensors live on the CPU."""
    target = _C.device("cuda") if device is None else _C.device(device)
    if target.type != "cuda":
        raise RuntimeError("Invalid device, must be cuda device")
    return _check_device(target, "cuda")


def get_device(self):
    """-1: the index PyTorch gives for a tensor on the CPU (or meta)."""
    return -1


# PyTorch's legacy tensor type names (x.type()), by dtype.
_TYPE_NAMES = {
    _C.float32: "FloatTensor", _C.float64: "DoubleTensor", _C.float16: "HalfTensor",
    _C.bfloat16: "BFloat16Tensor", _C.int64: "LongTensor", _C.int32: "IntTensor",
    _C.int16: "ShortTensor", _C.int8: "CharTensor", _C.uint8: "ByteTensor",
    _C.bool: "BoolTensor",
}
_DTYPES_BY_TYPE_NAME = {name: dtype for dtype, name in _TYPE_NAMES.items()}


def _type_dtype(dtype):
    """The dtype that a type() argument names: a pith.dtype, or 'torch.FloatTensor' (or
    'pith.FloatTensor')."""
    if isinstance(dtype, _C.dtype):
        return dtype
    if isinstance(dtype, str):
        prefix, _, name = dtype.rpartition(".")
        if prefix in ("torch.cuda", "pith.cuda") and name in _DTYPES_BY_TYPE_NAME:
            _check_device("cuda", "type")
        if prefix in ("torch", "pith") and name in _DTYPES_BY_TYPE_NAME:
            return _DTYPES_BY_TYPE_NAME[name]
        raise ValueError(f"invalid type: {dtype!r}")
    if isinstance(dtype, type):
        name = dtype.__name__ if dtype.__module__ == "builtins" else \
            f"{dtype.__module__}.{dtype.__qualname__}"
        raise ValueError(f"invalid type: {name!r}")
    raise TypeError("dtype must be a type, str, or dtype object")


def type_(self, dtype=None, non_blocking=False, **kwargs):
    """type(): the legacy type name, 'torch.FloatTensor' (the name PyTorch programs compare
    with); type(dtype): the tensor converted, as to(dtype), where dtype is a pith.dtype or
    such a name ('torch.' or 'pith.')."""
    if kwargs:
        raise TypeError(f"type() got an unexpected keyword argument '{next(iter(kwargs))}'")
    if dtype is None:
        device = self.device.type
        return f"torch.{'' if device == 'cpu' else device + '.'}{_TYPE_NAMES[self.dtype]}"
    return _convert(self, _type_dtype(dtype), False)


type_.__name__ = type_.__qualname__ = "type"


def element_size(self):
    return self.dtype.itemsize


# ---- autograd ----

class _TensorHookHandle:
    """What Tensor.register_hook returns: remove() takes the hook off (again is a no-op);
    usable as a context manager, as torch.utils.hooks.RemovableHandle."""

    __slots__ = ("_node", "_id")

    def __init__(self, node, hook_id):
        self._node, self._id = node, hook_id

    def remove(self):
        if self._node is not None:
            _C._remove_hook(self._node, self._id)
            self._node = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def register_hook(self, hook):
    """Registers `hook(grad) -> Tensor or None` on this tensor's gradient, as
    torch.Tensor.register_hook; returns a handle whose remove() takes it off."""
    if not self.requires_grad:
        raise RuntimeError("cannot register a hook on a tensor that doesn't require gradient")
    return _TensorHookHandle(*self._register_hook(hook))


def register_post_accumulate_grad_hook(self, hook):
    """Registers `hook(tensor) -> None` to run after this leaf's .grad was accumulated by a
    backward, as torch.Tensor.register_post_accumulate_grad_hook; returns a handle."""
    return _TensorHookHandle(*self._register_post_accumulate_grad_hook(hook))


def _node_register_hook(self, fn):
    """Registers `fn(grad_inputs, grad_outputs) -> tuple or None` to run after this node
    computed its gradients, as torch's Node.register_hook; returns a handle."""
    return _TensorHookHandle(self, self._register_hook(fn))


def _node_register_prehook(self, fn):
    """Registers `fn(grad_outputs) -> tuple or None` to run before this node, as torch's
    Node.register_prehook; returns a handle."""
    return _TensorHookHandle(self, self._register_prehook(fn))


def backward(self, gradient=None, retain_graph=None, create_graph=False, inputs=None):
    """Computes the gradient of this tensor with respect to the graph's leaves, as
    torch.Tensor.backward: see pith.autograd.backward."""
    if _C._has_pith_function_unary(self):
        # Spelled out as PyTorch's: the handlers get every keyword with its value
        # (Note [Function layer], python_bindings/_C/function_layer.c).
        return _C._handle_pith_function(
            Tensor.backward, (self,), (self,),
            dict(gradient=gradient, retain_graph=retain_graph, create_graph=create_graph,
                 inputs=inputs))
    from . import autograd
    autograd.backward(self, gradient, retain_graph, create_graph, inputs=inputs)


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
    return _C.randint(low, high, tuple(input.shape), dtype=dtype or input.dtype,
                      requires_grad=requires_grad)


def broadcast_shapes(*shapes):
    """The shape that tensors of these shapes broadcast to, as torch.broadcast_shapes: each
    shape is a sequence of ints or one int. The rules and the error are broadcast_tensors'
    (meta tensors stand for the shapes, so nothing is allocated)."""
    metas = []
    for shape in shapes:
        if isinstance(shape, builtins.int) and not isinstance(shape, builtins.bool):
            shape = (shape,)
        elif not isinstance(shape, (tuple, list, _C.Size)):
            raise RuntimeError(f"Input shapes should be of type ints, a tuple of ints, or a "
                               f"list of ints, got {shape!r}")
        if any(isinstance(s, builtins.int) and s < 0 for s in shape):
            raise RuntimeError(f"Trying to create tensor with negative dimension "
                               f"{min(shape)}: {list(shape)}")
        metas.append(_C.empty(tuple(shape), device="meta"))
    if not metas:
        return _C.Size(())
    return _C.broadcast_tensors(metas)[0].shape


# ---- the function layer ----
#
# Every method and function here hands its tensors' __pith_function__ the call first, as
# PyTorch's do (Note [Function layer], python_bindings/_C/function_layer.c): pith._C.
# _overridable puts the check in front of a Python function, and a property's accessors
# pass the property's __get__ and __set__, as PyTorch's getters do.

_overridable = _C._overridable


def _overridable_property(fget, fset=None, doc=None):
    get = _overridable(fget)
    put = _overridable(fset) if fset is not None else None
    prop = property(get, put, doc=doc)
    _C._set_overridable_public(get, prop.__get__)
    if put is not None:
        _C._set_overridable_public(put, prop.__set__)
    return prop


def install(namespace):
    """Adds these methods to pith.Tensor and the functions to the pith namespace. Tensor.to
    is conversions.c's C method, whose short path takes x.to(dtype) and which calls this
    `to` for every other form."""
    set_generic("to", to)
    for name, dtype in _CONVERSIONS:
        generic = _conversion(name, dtype)
        set_generic(name, generic)
    namespace["layout"] = layout
    namespace["strided"] = strided
    methods = {name: _new_factory(name, factory)
               for name, factory in (("new_zeros", _C.zeros), ("new_ones", _C.ones),
                                     ("new_empty", _C.empty))}
    methods.update(new_full=new_full, new_tensor=new_tensor, fill_=fill_, zero_=zero_,
                   type_as=type_as, view_as=view_as, is_floating_point=is_floating_point,
                   type=type_, cpu=cpu, cuda=cuda, get_device=get_device,
                   element_size=element_size, register_hook=register_hook)
    for name, method in methods.items():
        setattr(Tensor, name, _overridable(method))
    Tensor.backward = backward
    Tensor.is_cuda = _overridable_property(lambda self: False,
                                           doc="False: pith tensors live on the CPU.")
    Tensor.is_cpu = _overridable_property(lambda self: self.device.type == "cpu")
    Tensor.is_meta = _overridable_property(lambda self: self.device.type == "meta")
    namespace["is_tensor"] = is_tensor
    namespace["is_floating_point"] = _overridable(is_floating_point)
    Tensor.nbytes = _overridable_property(lambda self: self.numel() * self.dtype.itemsize)
    Tensor.itemsize = _overridable_property(lambda self: self.dtype.itemsize)
    Tensor.register_post_accumulate_grad_hook = _overridable(register_post_accumulate_grad_hook)
    _C._Node.register_hook = _node_register_hook
    _C._Node.register_prehook = _node_register_prehook
    for name, factory in (("zeros_like", _C.zeros), ("ones_like", _C.ones),
                          ("empty_like", _C.empty), ("rand_like", _C.rand),
                          ("randn_like", _C.randn)):
        namespace[name] = _overridable(_like(name, factory))
    namespace["full_like"] = _overridable(full_like)
    namespace["broadcast_shapes"] = broadcast_shapes
    namespace["randint_like"] = _overridable(randint_like)
