"""The parts of pith.Tensor written in Python: copy.copy, copy.deepcopy and pickling, and
the default __pith_function__ (PyTorch's Tensor.__torch_function__).

Installed on pith._C.Tensor when pith is imported. Subclasses (nn.Parameter and user
classes made with Tensor._make_subclass) keep their class and their instance state.
See Note [Pickled tensors] and Note [Function layer] (python_bindings/_C/function_layer.c).
"""
from . import _C

Tensor = _C.Tensor


# Note [Pickled tensors]
# A pickled tensor is its values in row-major order (pith._C._tensor_bytes), its dtype
# name and its shape; _rebuild_tensor makes a new contiguous tensor from them. PyTorch
# instead pickles the whole storage with the view's offset and strides, so an unpickled
# view keeps its strides and two views pickled together share one storage again; pith
# keeps only the values, which also means a view of a large tensor pickles only its own
# elements. Instance state (__dict__, __slots__) and the class of a subclass travel with
# it, as in PyTorch's _rebuild_from_type_v2, and so does requires_grad (a last argument,
# present only when true, so that older pickles still load). The rebuild functions are module-level so
# that pickle can find them by name: their names and arguments are a file format, so
# change them only compatibly.

def _dtype_name(dtype):
    return str(dtype).rpartition(".")[2]


def _rebuild_tensor(data, dtype_name, shape, requires_grad=False):
    """A new contiguous tensor with the given row-major bytes (used by pickle); a leaf
    that requires grad when requires_grad (an argument added compatibly: older pickles
    have three)."""
    dtype = getattr(_C, dtype_name, None)
    if not isinstance(dtype, _C.dtype):
        raise TypeError(f"pith: {dtype_name!r} is not a dtype")
    numel = 1
    for n in shape:
        numel *= n
    if numel == 0:
        t = _C.empty(list(shape), dtype=dtype)
    else:
        # clone() so that the tensor owns its memory instead of borrowing the bytearray's.
        t = _C.frombuffer(bytearray(data), dtype=dtype).reshape(list(shape)).clone()
    return t.requires_grad_() if requires_grad else t


def _rebuild_subclass(cls, data, dtype_name, shape, state, requires_grad=False):
    """_rebuild_tensor, then the subclass `cls` and its instance state (used by pickle)."""
    t = _rebuild_tensor(data, dtype_name, shape)
    return _with_state(_as_class(t, cls, requires_grad), state)


def _as_class(t, cls, requires_grad=False):
    # As PyTorch's copies: the copy of a leaf that requires grad requires grad (a
    # Parameter copied with its module stays trainable).
    if cls is Tensor:
        return t.requires_grad_() if requires_grad else t
    return Tensor._make_subclass(cls, t, requires_grad)


def _get_state(t):
    # PyTorch's torch._utils._get_obj_state: __getstate__ when defined (object's default
    # returns the __dict__, or (__dict__, slots) when the class has __slots__).
    getstate = getattr(t, "__getstate__", None)
    if getstate is not None:
        return getstate()
    import copyreg  # here, as copy below: `import pith` imports this module
    slots = copyreg._slotnames(type(t))
    if slots:
        return t.__dict__, {name: getattr(t, name) for name in slots if hasattr(t, name)}
    return t.__dict__


def _with_state(t, state):
    # PyTorch's torch._utils._set_obj_state.
    if not state:
        return t
    if isinstance(state, tuple):
        if len(state) != 2:
            raise RuntimeError(f"Invalid serialized state: {state}")
        dict_state, slots_state = state
    else:
        dict_state, slots_state = state, None
    for name, value in (dict_state or {}).items():
        setattr(t, name, value)
    for name, value in (slots_state or {}).items():
        setattr(t, name, value)
    return t


def _reduce_ex(self, protocol):
    args = (_C._tensor_bytes(self), _dtype_name(self.dtype), tuple(self.shape))
    state = _get_state(self)
    requires_grad = (self.requires_grad,) if self.requires_grad else ()
    if type(self) is Tensor and not state:
        return _rebuild_tensor, args + requires_grad
    return _rebuild_subclass, (type(self),) + args + (state,) + requires_grad


def _copy(self):
    # As in PyTorch: a new tensor object on the same memory (shape, strides and offset
    # kept), of the same class, sharing the attribute values.
    return _with_state(_as_class(self.detach(), type(self)), _get_state(self))


def _deepcopy(self, memo):
    # A new tensor that owns a copy of the values, of the same class, with a deep copy of
    # the instance state. PyTorch also shares one new storage among views of one storage
    # copied together; pith copies each view's values on its own.
    existing = memo.get(id(self))
    if existing is not None:
        return existing
    new = _as_class(self.detach().clone(), type(self), self.requires_grad)
    memo[id(self)] = new
    import copy
    return _with_state(new, copy.deepcopy(_get_state(self), memo))


# ---- the function layer ------------------------------------------------------------------

_nowrap = None


def _default_nowrap_functions():
    """The functions whose results the default __pith_function__ leaves as they are
    (PyTorch's get_default_nowrap_functions, less the attributes pith does not have:
    _base and _grad)."""
    global _nowrap
    if _nowrap is None:
        _nowrap = frozenset({Tensor.grad.__get__})
    return _nowrap


def _convert(ret, cls):
    """PyTorch's torch._tensor._convert: Tensor results become instances of `cls` (a view
    of the same data, as_subclass), inside tuples and lists too; a result that already is
    one, such as the tensor an in-place op or out= wrote, stays itself."""
    if cls is Tensor:
        return ret
    if isinstance(ret, Tensor) and not isinstance(ret, cls):
        ret = ret.as_subclass(cls)
    if isinstance(ret, (tuple, list)):
        items = [_convert(r, cls) for r in ret]
        make = getattr(type(ret), "_make", None)  # a named tuple (pith.return_types)
        ret = make(items) if make is not None else type(ret)(items)
    return ret


def __pith_function__(cls, func, types, args=(), kwargs=None):
    """Runs `func` with the function layer disabled for subclasses and makes its Tensor
    results instances of `cls`, as PyTorch's Tensor.__torch_function__ does. A subclass
    that overrides __pith_function__ (or __torch_function__) calls it with
    super().__pith_function__(func, types, args, kwargs)."""
    if kwargs is None:
        kwargs = {}
    if cls is Tensor and Tensor in types:
        # Only another library lists pith.Tensor itself (torch, whose functions ask any
        # argument's __torch_function__): running its function would ask again.
        return NotImplemented
    if not all(issubclass(cls, t) for t in types):
        return NotImplemented
    with _C.DisablePithFunctionSubclass():
        ret = func(*args, **kwargs)
        if func in _default_nowrap_functions():
            return ret
        return _convert(ret, cls)


for _name, _fn in (("__reduce_ex__", _reduce_ex), ("__copy__", _copy),
                   ("__deepcopy__", _deepcopy)):
    _fn.__name__ = _name
    _fn.__qualname__ = f"Tensor.{_name}"
    setattr(Tensor, _name, _C._overridable(_fn))  # Note [Function layer]
del _name, _fn
# One classmethod under both names: a program written for torch defines, and calls through
# super(), __torch_function__.
Tensor.__pith_function__ = Tensor.__torch_function__ = classmethod(__pith_function__)
